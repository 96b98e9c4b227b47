/* What check_analysis.c and check_analysis_failures.c share on top of
 * tests/analysis_fixture.h: the tolerances, an analysis of a model with
 * --set pairs (no statics), closeness relative and absolute, a coordinate
 * by name, the expected error (exit code, message, position) and the
 * frequencies of a conservative oscillator.  Not in analysis_fixture.h:
 * check_analysis_shapes.c has an analyse() and a close_rel() of its own
 * (other arguments, other messages). */
#ifndef HS_TESTS_ANALYSIS_EXPECT_H
#define HS_TESTS_ANALYSIS_EXPECT_H

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis_fixture.h"

#define FREQ_TOL 1e-9
#define EQ_TOL 1e-10
#define LAMBDA_TOL 1e-9

typedef an_sets sets;

static inline int analyse(an_case *c, const char *text, const char *file, const sets *s)
{
    return an_analyse(c, text, file, s, 0);
}

static inline void analyse_ok(an_case *c, const char *text, const char *file, const sets *s)
{
    int rc = analyse(c, text, file, s);
    ck_assert_msg(rc == 0, "analysis failed (%d): %s", rc, c->err.msg);
}

static inline void close_rel(double got, double want, double tol, const char *what)
{
    double err = fabs(got - want) / fabs(want);
    ck_assert_msg(err <= tol, "%s: %.17g, want %.17g (relative error %.3g > %g)", what, got,
                  want, err, tol);
}

static inline void close_abs(double got, double want, double tol, const char *what)
{
    ck_assert_msg(fabs(got - want) <= tol, "%s: %.17g, want %.17g (error %.3g > %g)", what,
                  got, want, fabs(got - want), tol);
}

static inline size_t coord(const hs_model *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->qname[i], name) == 0)
            return i;
    ck_abort_msg("no coordinate %s", name);
    return 0;
}

/* The error: exit code, a message part, and line:column (0: unplaced). */
static inline void expect_error(const an_case *c, int code, const char *part, int line, int col)
{
    ck_assert_msg(c->rc == code, "exit %d, want %d (%s)", c->rc, code, c->err.msg);
    ck_assert_msg(strstr(c->err.msg, part), "message '%s' lacks '%s'", c->err.msg, part);
    if (line) {
        ck_assert_msg(c->err.line == line && c->err.column == col,
                      "at %d:%d, want %d:%d (%s)", c->err.line, c->err.column, line, col,
                      c->err.msg);
        ck_assert_str_eq(c->err.file, "<test>");
        ck_assert_msg(c->err.source[0], "no source line");
    }
}

/* Conservative oscillator rows: sigma = 0, omega = want[r] (ascending). */
static inline void expect_omegas(const an_case *c, const double *want, size_t cnt, const char *what)
{
    char lab[96];
    ck_assert_msg(c->md.count == cnt, "%s: %zu modes, want %zu", what, c->md.count, cnt);
    for (size_t r = 0; r < cnt; r++) {
        snprintf(lab, sizeof lab, "%s: omega of mode %zu", what, r + 1);
        close_rel(c->md.omega[r], want[r], FREQ_TOL, lab);
        ck_assert_msg(fabs(c->md.sigma[r]) <= 1e-12 * want[r], "%s: sigma %g", what,
                      c->md.sigma[r]);
    }
    ck_assert_int_eq(c->md.stable, 1);
}
#endif
