/* The main of a Check suite file: GSL's error handler one that names the
 * report and aborts (holosim calls no GSL routine in a way that reaches
 * the handler, so every suite checks that too: an abort fails the test,
 * which Check runs in its own process), run the suite, exit non-zero on
 * any failure. */
#ifndef HS_CHECK_MAIN_H
#define HS_CHECK_MAIN_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>

/* GSL reached its handler: a holosim bug (src/linalg/linalg.h) */
static inline void hs_check_gsl_reached(const char *reason, const char *file, int line,
                                        int gsl_errno)
{
    fprintf(stderr, "GSL's error handler reached: %s:%d: %s (%d)\n", file, line, reason,
            gsl_errno);
    abort();
}

#define HS_CHECK_MAIN(suite_fn)                                             \
    int main(void)                                                          \
    {                                                                       \
        gsl_set_error_handler(hs_check_gsl_reached);                        \
        SRunner *sr = srunner_create(suite_fn());                           \
        srunner_run_all(sr, CK_NORMAL);                                     \
        int failed = srunner_ntests_failed(sr);                             \
        srunner_free(sr);                                                   \
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;                        \
    }

/* A test (or one index of a loop test) that does not apply here: said on
 * standard error with its reason, never a silent pass. */
#define HS_SKIP(...)                                                        \
    do {                                                                    \
        fprintf(stderr, "SKIP %s:%d: ", __FILE__, __LINE__);                \
        fprintf(stderr, __VA_ARGS__);                                       \
        fputc('\n', stderr);                                                \
        return;                                                             \
    } while (0)

#endif
