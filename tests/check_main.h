/* The main of a Check suite file: GSL's abort-on-error handler off (as
 * holosim's main does), run the suite, exit non-zero on any failure. */
#ifndef HS_CHECK_MAIN_H
#define HS_CHECK_MAIN_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include <gsl/gsl_errno.h>

#define HS_CHECK_MAIN(suite_fn)                                             \
    int main(void)                                                          \
    {                                                                       \
        gsl_set_error_handler_off();                                        \
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
