/* Allocation-failure injection for tests/cli_oom.sh, linked into a copy of
 * holosim with -Wl,--wrap for every allocation function holosim calls
 * (the Makefile's $(BUILD)/tests/holosim_oom).
 *
 *   HOLOSIM_FAIL_ALLOC=K    the K-th allocation and every later one fail
 *                           (a process out of memory stays out of memory)
 *   HOLOSIM_COUNT_ALLOC=1   print "allocations: N" to stderr at exit
 *
 * Only holosim's own calls are counted: libc, libyaml and GSL allocate
 * through the real functions. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static long fail_at = -1, count;

/* 1 when this allocation is to fail. */
static int fail(void)
{
    if (fail_at < 0) {
        const char *s = getenv("HOLOSIM_FAIL_ALLOC");
        fail_at = s ? atol(s) : 0;
    }
    if (++count < fail_at || fail_at <= 0)
        return 0;
    errno = ENOMEM;                     /* as the real ones do */
    return 1;
}

void *__wrap_malloc(size_t n) { return fail() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return fail() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n) { return fail() ? NULL : __real_realloc(p, n); }
char *__wrap_strdup(const char *s) { return fail() ? NULL : __real_strdup(s); }
char *__wrap_strndup(const char *s, size_t n) { return fail() ? NULL : __real_strndup(s, n); }

__attribute__((destructor)) static void report(void)
{
    if (getenv("HOLOSIM_COUNT_ALLOC"))
        fprintf(stderr, "allocations: %ld\n", count);
}
