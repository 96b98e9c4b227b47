/* src/analysis/statespace.c and ssmath.c against a second formulation:
 * the nonlinear accelerations and multipliers of a run's model (an input
 * given as a constant, --input F=u), differentiated by central finite
 * differences at the equilibrium, give B, the A of an unconstrained model
 * and the D of accelerations and multipliers; the poles against the roots
 * of the closed-form polynomial. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/analysis.h"
#include "check_main.h"
#include "dynamics/dynamics.h"
#include "model/model.h"

#define FD_H 1e-5
#define FD_TOL 1e-7        /* central differences: O(h^2) + round-off / h */

static const char ctms[] =
    "parameters: {M: 0.5, m: 0.2, b: 0.1, I: 0.006, l: 0.3, g: 9.8}\n"
    "inputs: [F]\n"
    "coordinates: [x, th]\n"
    "kinetic: 0.5*(M+m)*x'^2 - m*l*x'*th'*cos(th) + 0.5*(I + m*l^2)*th'^2\n"
    "potential: m*g*l*cos(th)\n"
    "forces: {x: F - b*x'}\n"
    "initial: {q: {x: 0, th: 0}}\n"
    "simulate: {t_end: 1}\n";

static const char cart[] =
    "parameters: {M: 1, m: 0.1, l: 0.5, g: 9.81}\n"
    "inputs: [F]\n"
    "coordinates: [x, px, py]\n"
    "mass: [M, m, m]\n"
    "potential: m*g*py + 0.3*F*py\n"
    "forces: {x: F}\n"
    "constraints: {rod: (px - x)^2 + py^2 - l^2}\n"
    "initial: {q: {x: 0, px: 0, py: 0.5}}\n"
    "simulate: {t_end: 1}\n";

typedef struct lin {
    hs_model *m;
    hs_an *a;
    hs_equil eq;
    hs_statespace ss;
} lin;

static void lin_open(lin *L, const char *text, const char *const *y, size_t ny)
{
    memset(L, 0, sizeof *L);
    hs_error err;
    hs_error_init(&err);
    hs_overrides ov;
    hs_overrides_init(&ov);
    ov.statics = ov.keep_outputs = ov.input_symbols = 1;
    ov.input_t = NAN;
    L->m = hs_model_load_string("ss.yaml", text, &ov, &err);
    ck_assert_msg(L->m, "%s", err.msg);
    L->a = hs_an_new(L->m, &err);
    ck_assert_msg(L->a, "%s", err.msg);
    ck_assert_int_eq(hs_an_equilibrium(L->a, L->m->q0, &L->eq, &err), 0);
    const char *u[] = { "F" };
    ck_assert_msg(hs_an_statespace(L->a, &L->eq, u, 1, y, ny, &L->ss, &err) == 0, "%s",
                  err.msg);
}

static void lin_close(lin *L)
{
    hs_statespace_free(&L->ss);
    hs_an_equil_free(&L->eq);
    hs_an_free(L->a);
    hs_model_free(L->m);
}

/* The accelerations and multipliers of the run's model with F = u at
 * (q, v). */
static void accel(const char *text, double u, const double *q, const double *v, double *a,
                  double *lam)
{
    char src[64];
    snprintf(src, sizeof src, "%.17g", u);
    const char *name[] = { "F" }, *val[] = { src };
    hs_overrides ov;
    hs_overrides_init(&ov);
    ov.ninput = 1;
    ov.input_name = name;
    ov.input_text = val;
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("run.yaml", text, &ov, &err);
    ck_assert_msg(m, "%s", err.msg);
    hs_work *w = hs_work_new(m);
    ck_assert(w);
    ck_assert_int_eq(hs_dyn_accel(m, w, 0, q, v, a, lam), 0);
    hs_work_free(w);
    hs_model_free(m);
}

static long coord(const hs_model *m, const char *s)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->qname[i], s) == 0)
            return (long)i;
    return -1;
}

static void near(double got, double want, double tol, const char *what)
{
    ck_assert_msg(fabs(got - want) <= tol * fmax(1, fabs(want)), "%s: %.17g, want %.17g",
                  what, got, want);
}

/* B's lower half and D of x'' and lambda against d/dF of the nonlinear
 * accelerations and multipliers. */
static void check_B_D(const char *text, const char *const *y, size_t ny)
{
    lin L;
    lin_open(&L, text, y, ny);
    size_t k = L.m->k, dof = L.ss.nx / 2;
    double v[8] = { 0 }, ap[8], am[8], lp[8], lm[8];
    accel(text, FD_H, L.eq.q, v, ap, lp);
    accel(text, -FD_H, L.eq.q, v, am, lm);
    for (size_t j = 0; j < dof; j++) {
        long i = coord(L.m, L.ss.xname[j]);
        ck_assert(i >= 0);
        near(L.ss.B[dof + j], (ap[i] - am[i]) / (2 * FD_H), FD_TOL, L.ss.xname[j]);
        near(L.ss.B[j], 0, 0, "upper half of B");
    }
    for (size_t o = 0; o < ny; o++) {
        size_t len = strlen(y[o]);
        double want;
        if (len > 2 && strcmp(y[o] + len - 2, "''") == 0) {
            char q[32];
            snprintf(q, sizeof q, "%.*s", (int)(len - 2), y[o]);
            long i = coord(L.m, q);
            ck_assert(i >= 0);
            want = (ap[i] - am[i]) / (2 * FD_H);
        } else if (strncmp(y[o], "lambda_", 7) == 0) {
            ck_assert(k == 1);
            want = (lp[0] - lm[0]) / (2 * FD_H);
        } else {
            continue;
        }
        near(L.ss.D[o], want, FD_TOL, y[o]);
    }
    lin_close(&L);
}

START_TEST(b_and_d_angle_form)
{
    const char *y[] = { "x''", "th''", "x" };
    check_B_D(ctms, y, 3);
}
END_TEST

START_TEST(b_and_d_constrained)
{
    /* the input also in the potential, a vertical push 0.3 F on the bob:
     * the multiplier moves at first order */
    const char *y[] = { "x''", "px''", "py''", "lambda_rod" };
    check_B_D(cart, y, 4);
    lin L;
    lin_open(&L, cart, y, 4);
    near(L.ss.D[3], 0.3 / (2 * 0.5), 1e-14, "dlambda/dF = 0.3/(2 l)");   /* closed form */
    lin_close(&L);
}
END_TEST

/* An unconstrained model: A's lower half is d(a)/d(q, v). */
START_TEST(a_angle_form)
{
    const char *y[] = { "x" };
    lin L;
    lin_open(&L, ctms, y, 1);
    size_t n = L.m->n, N = L.ss.nx;
    ck_assert_uint_eq(N, 2 * n);
    for (size_t c = 0; c < 2 * n; c++) {
        double q[2], v[2] = { 0, 0 }, ap[2], am[2], lam[1];
        memcpy(q, L.eq.q, sizeof q);
        if (c < n)
            q[c] = L.eq.q[c] + FD_H;
        else
            v[c - n] = FD_H;
        accel(ctms, 0, q, v, ap, lam);
        if (c < n)
            q[c] = L.eq.q[c] - FD_H;
        else
            v[c - n] = -FD_H;
        accel(ctms, 0, q, v, am, lam);
        for (size_t r = 0; r < n; r++)
            near(L.ss.A[(n + r) * N + c], (ap[r] - am[r]) / (2 * FD_H), FD_TOL, "A");
    }
    lin_close(&L);
}
END_TEST

/* The poles: roots of s (s^3 + b J/q s^2 - (M + m) m g l/q s - b m g l/q). */
START_TEST(poles_closed_form)
{
    const char *y[] = { "x" };
    lin L;
    lin_open(&L, ctms, y, 1);
    double re[4], im[4], M = 0.5, m = 0.2, b = 0.1, I = 0.006, l = 0.3, g = 9.8;
    double J = I + m * l * l, q = (M + m) * J - (m * l) * (m * l);
    ck_assert_int_eq(hs_ss_poles(&L.ss, re, im), 0);
    int zero = 0;
    for (int i = 0; i < 4; i++) {
        double s = re[i];
        ck_assert(fabs(im[i]) < 1e-12);
        double p = s * (s * s * s + b * J / q * s * s - (M + m) * m * g * l / q * s -
                        b * m * g * l / q);
        ck_assert_msg(fabs(p) < 1e-11 * fmax(1, pow(fabs(s), 4)), "pole %g: p = %g", s, p);
        zero += fabs(s) < 1e-12;
    }
    ck_assert_int_eq(zero, 1);
    lin_close(&L);
}
END_TEST

static Suite *statespace_suite(void)
{
    Suite *s = suite_create("statespace");
    TCase *t = tcase_create("second formulation");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, b_and_d_angle_form);
    tcase_add_test(t, b_and_d_constrained);
    tcase_add_test(t, a_angle_form);
    tcase_add_test(t, poles_closed_form);
    suite_add_tcase(s, t);
    return s;
}

HS_CHECK_MAIN(statespace_suite)
