/* What the native suites share (check_native.c, check_native_cache.c,
 * check_native_hostile.c): the suite's cache root ($HOLOSIM_CACHE, set by
 * the unchecked fixture), a fresh cache of one's own under it, the
 * options of a policy, the VM against a kernel bit for bit, the tiny
 * program most tests build, the entries of a cache, a shell script as
 * the compiler. */
#ifndef HS_TESTS_NATIVE_FIXTURE_H
#define HS_TESTS_NATIVE_FIXTURE_H

#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "expr/expr.h"
#include "expr/prog.h"      /* white-box: raw programs */
#include "native/native.h"

static char root[] = "/tmp/check_native.XXXXXX";

static inline void suite_setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(root));
    setenv("HOLOSIM_CACHE", root, 1);
}

static inline void suite_teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s'; rm -rf '%s'", root, root);
    if (system(cmd) != 0)
        fprintf(stderr, "check_native: could not remove %s\n", root);
}

/* A fresh directory under the suite's root (a cache of its own). */
static inline void fresh(char *dir, size_t cap)
{
    snprintf(dir, cap, "%s/c.XXXXXX", root);
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static inline hs_native_opts opts(hs_native_policy pol, const char *dir)
{
    hs_native_opts o;
    hs_native_opts_init(&o);
    o.policy = pol;
    o.cache_dir = dir;
    return o;
}

static inline int same_bits(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

/* VM and kernel on the same inputs and the same initial scratch: every
 * output the same, bit for bit.  Returns the number of differences. */
static inline int compare(const hs_prog *p, hs_kernel_fn f, const double *in,
                          const char *what)
{
    size_t nr = hs_prog_nregs(p), no = hs_prog_nout(p);
    double *r1 = malloc((nr + 1) * sizeof *r1), *r2 = malloc((nr + 1) * sizeof *r2);
    double *o1 = malloc((no + 1) * sizeof *o1), *o2 = malloc((no + 1) * sizeof *o2);
    ck_assert(r1 && r2 && o1 && o2);
    for (size_t i = 0; i < nr; i++)
        r1[i] = r2[i] = 0.25 * (double)i - 3;   /* what an uninitialised read sees */
    for (size_t i = 0; i < no; i++)
        o1[i] = o2[i] = NAN;
    hs_prog_eval(p, in, r1, o1);
    f(in, r2, o2);
    int bad = 0;
    for (size_t i = 0; i < no; i++)
        if (!same_bits(o1[i], o2[i]) && bad++ < 3)
            fprintf(stderr, "%s: out[%zu]: VM %a, native %a\n", what, i, o1[i], o2[i]);
    if (bad)
        hs_prog_disasm(p, NULL, stderr);
    free(r1);
    free(r2);
    free(o1);
    free(o2);
    return bad;
}

/* sin(x)*y + 2.5*z - x^3: a few instructions, constants, inputs */
static hs_dag *tiny_dag;
static inline hs_prog *tiny(void)
{
    hs_dag *d = tiny_dag = hs_dag_new();
    const hs_node *x = hs_sym(d, hs_dag_symbol(d, "x")), *y = hs_sym(d, hs_dag_symbol(d, "y"));
    const hs_node *z = hs_sym(d, hs_dag_symbol(d, "z"));
    const hs_node *e[2] = {
        hs_sub(d, hs_add(d, hs_mul(d, hs_call1(d, HS_SIN, x), y), hs_mul(d, hs_num(d, 2.5), z)),
               hs_pow(d, x, hs_num(d, 3))),
        hs_call2(d, HS_ATAN2, y, x)};
    hs_error err;
    hs_error_init(&err);
    hs_prog *p = hs_prog_compile(d, e, 2, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    return p;
}

static inline void tiny_free(hs_prog *p)
{
    hs_prog_free(p);
    hs_dag_free(tiny_dag);
}

static inline void check_tiny(const hs_native *h, const hs_prog *p)
{
    const double in[3] = {0.7, -1.25, 3.5};
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(compare(p, hs_native_fn(h, 0), in, "tiny"), 0);
}

static inline hs_native *load1(const hs_prog *p, const hs_native_opts *o,
                                hs_native_status *st, char *note, size_t cap)
{
    return hs_native_load(&p, 1, o, st, note, cap);
}

/* Entries k*.so in dir/native.  Not inlined (as when it was a function of
 * one file): inlined, its sub[512] meets callers' 600-byte directories
 * and -Wformat-truncation refuses it. */
static __attribute__((unused, noinline)) int count_entries(const char *dir, char *last,
                                                           size_t cap)
{
    char sub[512];
    snprintf(sub, sizeof sub, "%s/native", dir);
    DIR *d = opendir(sub);
    int n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l > 3 && strcmp(e->d_name + l - 3, ".so") == 0 && !strstr(e->d_name, ".tmp.")) {
            n++;
            if (last)
                snprintf(last, cap, "%s/%s", sub, e->d_name);
        }
    }
    closedir(d);
    return n;
}

/* Writes an executable shell script; returns its path in out. */
static inline void script(const char *dir, const char *name, const char *body, char *out,
                          size_t cap)
{
    snprintf(out, cap, "%s/%s", dir, name);
    FILE *f = fopen(out, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    ck_assert_int_eq(chmod(out, 0700), 0);
}

#endif
