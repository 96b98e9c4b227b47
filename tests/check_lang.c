/* The model language at scale (src/lang/family.c, src/lang/body.c):
 * indexed families, list parameters, sums, mass entries, named points,
 * rigid bodies, springs, dissipation and D(...).
 *
 * Physics against closed forms or a second formulation: the heavy
 * symmetric top in Euler parameters against the elliptic-function
 * nutation and the quadrature of the precession rate; the N-four-bar
 * against its one-degree-of-freedom reduced pendulum; the flyball
 * governor's angular momentum about the axis. Every shipped example
 * against the same system written out by hand (rows to 1e-12); every
 * error path with its message, position and exit code. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_integration.h>
#include <gsl/gsl_poly.h>
#include <gsl/gsl_sf_elljac.h>

#include "check_main.h"
#include "dynamics/dynamics.h"
#include "physics_util.h"

/* ---- helpers ---- */

static hs_model *load(const char *text, const hs_overrides *ov, hs_error *err)
{
    hs_overrides o;
    hs_overrides_init(&o);
    hs_error_init(err);
    return hs_model_load_string("model.yaml", text, ov ? ov : &o, err);
}

/* Run text (or a model file) with a column list; the table into r. */
static void run_text(const char *text, const char *path, const char *cols, pu_result *r)
{
    pu_args a = pu_defaults();
    a.text = text;
    a.path = path;
    a.columns = cols;
    pu_run_ok(&a, r);
}

/* max over every cell of two tables of the same shape (names may differ) */
static double table_diff(const pu_table *a, const pu_table *b)
{
    ck_assert_uint_eq(a->nrow, b->nrow);
    ck_assert_uint_eq(a->ncol, b->ncol);
    double d = 0;
    size_t worst = 0;
    for (size_t i = 0; i < a->nrow * a->ncol; i++)
        if (fabs(a->v[i] - b->v[i]) > d) {
            d = fabs(a->v[i] - b->v[i]);
            worst = i;
        }
    if (d > 0)
        fprintf(stderr, "table_diff: %g at row %zu column %s (%.17g vs %.17g)\n", d,
                worst / a->ncol, a->name[worst % a->ncol], a->v[worst], b->v[worst]);
    return d;
}

/* ---- the heavy symmetric top against its closed form ---- */

typedef struct top {
    double a, b, u1, u2, lam, k2;
} top;

static double top_u(const top *T, double t)
{
    double sn, cn, dn;
    gsl_sf_elljac_e(T->lam * t, T->k2, &sn, &cn, &dn);
    double cd = cn / dn;                 /* sn(x + K) = cd(x): the start at u2 */
    return T->u1 + (T->u2 - T->u1) * cd * cd;
}

static double top_phidot(double t, void *p)
{
    const top *T = p;
    double u = top_u(T, t);
    return (T->b - T->a * u) / (1 - u * u);
}

START_TEST(test_heavy_top_closed_form)
{
    /* the parameters of models/heavy_top.yaml */
    const double m = 1, l = 0.5, g = 9.81, A0 = 0.05, C = 0.08, th0 = 0.4, s = 30;
    const double A = A0 + m * l * l;     /* transverse, about the fixed point */
    const double u0 = cos(th0);
    top T;
    T.a = C * s / A;
    T.b = T.a * u0;                       /* no precession at t = 0 */
    double beta = 2 * m * g * l / A, alpha = beta * u0;   /* no nutation rate at t = 0 */
    /* u'^2 = f(u) = (1 - u^2)(alpha - beta u) - (b - a u)^2 = beta (u - u1)(u - u2)(u - u3) */
    double r[3];
    int nr = gsl_poly_solve_cubic((-alpha - T.a * T.a) / beta, (-beta + 2 * T.a * T.b) / beta,
                                  (alpha - T.b * T.b) / beta, &r[0], &r[1], &r[2]);
    ck_assert_int_eq(nr, 3);
    ck_assert_msg(fabs(r[1] - u0) < 1e-12, "u0 = %.17g is the middle root (%.17g)", u0, r[1]);
    T.u1 = r[0];
    T.u2 = u0;
    T.lam = sqrt(beta * (r[2] - r[0])) / 2;
    T.k2 = (T.u2 - T.u1) / (r[2] - T.u1);

    pu_result R;
    pu_args a = pu_defaults();
    a.path = PU_MODEL("heavy_top.yaml");
    a.columns = "t,u,phi,w3";
    pu_run_ok(&a, &R);
    size_t ct = pu_col(&R.tab, "t"), cu = pu_col(&R.tab, "u"), cp = pu_col(&R.tab, "phi"),
           cw = pu_col(&R.tab, "w3");
    gsl_integration_workspace *ws = gsl_integration_workspace_alloc(1000);
    gsl_function fn = { top_phidot, &T };
    double du = 0, dp = 0, dw = 0, umin = 1;
    for (size_t i = 0; i < R.tab.nrow; i++) {
        double t = PU_AT(&R.tab, i, ct), u = top_u(&T, t), phi = 0, e;
        if (t > 0)
            ck_assert_int_eq(gsl_integration_qag(&fn, 0, t, 1e-14, 1e-13, 1000,
                                                 GSL_INTEG_GAUSS61, ws, &phi, &e), 0);
        du = fmax(du, fabs(PU_AT(&R.tab, i, cu) - u));
        dp = fmax(dp, fabs(remainder(PU_AT(&R.tab, i, cp) - phi, 2 * M_PI)));
        dw = fmax(dw, fabs(PU_AT(&R.tab, i, cw) - s));
        umin = fmin(umin, PU_AT(&R.tab, i, cu));
    }
    gsl_integration_workspace_free(ws);
    ck_assert_msg(du < 1e-8, "nutation: max |u - u_closed| = %g", du);
    ck_assert_msg(dp < 1e-8, "precession: max |phi - phi_closed| = %g", dp);
    ck_assert_msg(dw < 1e-9, "spin w3 not constant: %g", dw);
    /* the motion reaches the lower turning point u1 within the run */
    ck_assert_msg(umin < T.u1 + 1e-3, "umin %g, u1 %g", umin, T.u1);
    pu_result_free(&R);
}
END_TEST

/* ---- the N-four-bar against its reduced pendulum ---- */

static const char *const fourbar_reduced =
    "parameters: {N: 4, m: 1, l: 1, g: 9.81, v0: 1}\n"
    "coordinates: [th]\n"
    "kinetic: 0.5*((N + 1)*m*l^2/3 + N*m*l^2)*th'^2\n"
    "potential: -((N + 1)*m*g*l/2 + N*m*g*l)*cos(th)\n"
    "initial: {q: {th: 0}, v: {th: v0/l}}\n"
    "simulate: {t_end: 2, dt: 0.05, rtol: 1e-12, atol: 1e-12}\n"
    "outputs: {theta: th}\n";

START_TEST(test_fourbar_reduced)
{
    static const double Ns[] = { 1, 4, 40 };
    double N = Ns[_i];
    pu_args a = pu_defaults(), b = pu_defaults();
    a.path = PU_MODEL("nfourbar.yaml");
    a.columns = "t,theta";
    a.rtol = a.atol = 1e-12;
    pu_set(&a, "N", N);
    b.text = fourbar_reduced;
    b.columns = "t,theta";
    pu_set(&b, "N", N);
    pu_result R, S;
    pu_run_ok(&a, &R);
    pu_run_ok(&b, &S);
    double d = pu_maxdiff(&R.tab, "theta", &S.tab, "theta");
    ck_assert_msg(d < 1e-8, "N = %g: max |theta - theta_reduced| = %g", N, d);
    ck_assert_msg(pu_maxabs(&R.tab, "theta") > 0.1, "the linkage did not swing");
    pu_result_free(&R);
    pu_result_free(&S);
    /* --set N rebuilds the structure: 2(N + 1) coordinates, 2N + 1 constraints */
    hs_model *m = pu_load(&a);
    ck_assert_uint_eq(m->n, 2 * (size_t)N + 2);
    ck_assert_uint_eq(m->k, 2 * (size_t)N + 1);
    hs_model_free(m);
}
END_TEST

/* ---- families and bodies against the same systems written out ---- */

static const char *const chain3_hand =
    "name: chain3\n"
    "parameters:\n  m: 1.0\n  l: 1.0\n  g: 9.81\n  th: 1.0\n"
    "coordinates: [x1, y1, x2, y2, x3, y3]\n"
    "mass: [m, m, m, m, m, m]\n"
    "potential: m*g*(y1 + y2 + y3)\n"
    "constraints:\n"
    "  link1: x1^2 + y1^2 - l^2\n"
    "  link2: (x2 - x1)^2 + (y2 - y1)^2 - l^2\n"
    "  link3: (x3 - x2)^2 + (y3 - y2)^2 - l^2\n"
    "initial:\n  q:\n"
    "    x1: 1*l*sin(th)\n    y1: -1*l*cos(th)\n"
    "    x2: 2*l*sin(th)\n    y2: -2*l*cos(th)\n"
    "    x3: 3*l*sin(th)\n    y3: -3*l*cos(th)\n"
    "simulate: {t_end: 2, dt: 0.01, rtol: 1e-10, atol: 1e-10}\n";

static const char *const fourbar2_hand =
    "parameters: {m: 1, l: 1, g: 9.81, v0: 1}\n"
    "coordinates: [x0, y0, x1, y1, x2, y2]\n"
    "mass:\n"
    "  - [2*m/3, 0, m/6, 0, 0, 0]\n"
    "  - [0, 2*m/3, 0, m/6, 0, 0]\n"
    "  - [m/6, 0, m, 0, m/6, 0]\n"
    "  - [0, m/6, 0, m, 0, m/6]\n"
    "  - [0, 0, m/6, 0, 2*m/3, 0]\n"
    "  - [0, 0, 0, m/6, 0, 2*m/3]\n"
    "potential: m*g*(y0 + y1 + y2)/2 + m*g*(y0 + y1)/2 + m*g*(y1 + y2)/2\n"
    "constraints:\n"
    "  h0: x0^2 + y0^2 - l^2\n"
    "  h1: (x1 - l)^2 + y1^2 - l^2\n"
    "  h2: (x2 - 2*l)^2 + y2^2 - l^2\n"
    "  k1: (x1 - x0)^2 + (y1 - y0)^2 - l^2\n"
    "  k2: (x2 - x1)^2 + (y2 - y1)^2 - l^2\n"
    "initial:\n"
    "  q: {x0: 0, y0: -l, x1: l, y1: -l, x2: 2*l, y2: -l}\n"
    "  v: {x0: v0, x1: v0, x2: v0}\n"
    "simulate: {t_end: 2, dt: 0.05}\n"
    "outputs: {theta: \"atan2(x0, -y0)\"}\n";

/* the top with its kinetic energy derived by hand: v_c = l D(R e_z),
 * w = 2 L e' (body frame), and the term 2 J (e.e')^2 holosim adds */
static const char *const top_hand =
    "parameters: {m: 1, l: 0.5, g: 9.81, A0: 0.05, C: 0.08, theta0: 0.4, s: 30}\n"
    "coordinates: [e0, e1, e2, e3]\n"
    "define:\n"
    "  vx: 2*l*(e1'*e3 + e1*e3' + e0'*e2 + e0*e2')\n"
    "  vy: 2*l*(e2'*e3 + e2*e3' - e0'*e1 - e0*e1')\n"
    "  vz: 2*l*(e0*e0' - e1*e1' - e2*e2' + e3*e3')\n"
    "  w1: 2*(-e1*e0' + e0*e1' + e3*e2' - e2*e3')\n"
    "  w2: 2*(-e2*e0' - e3*e1' + e0*e2' + e1*e3')\n"
    "  w3: 2*(-e3*e0' + e2*e1' - e1*e2' + e0*e3')\n"
    "kinetic: 0.5*m*(vx^2 + vy^2 + vz^2) + 0.5*(A0*w1^2 + A0*w2^2 + C*w3^2)"
    " + 2*(2*A0 + C)/3*(e0*e0' + e1*e1' + e2*e2' + e3*e3')^2\n"
    "potential: m*g*l*(e0^2 - e1^2 - e2^2 + e3^2)\n"
    "constraints: {norm: e0^2 + e1^2 + e2^2 + e3^2 - 1}\n"
    "initial:\n"
    "  q: {e0: cos(theta0/2), e1: sin(theta0/2), e2: 0, e3: 0}\n"
    "  v: {e2: -sin(theta0/2)*s/2, e3: cos(theta0/2)*s/2}\n"
    "simulate: {t_end: 2, dt: 0.01, rtol: 1e-12, atol: 1e-12}\n"
    "outputs:\n"
    "  u: e0^2 - e1^2 - e2^2 + e3^2\n"
    "  phi: atan2(2*(e1*e3 + e0*e2), -2*(e2*e3 - e0*e1))\n"
    "  w3o: w3\n";

/* the governor with T, the spring lengths and the damping forces derived
 * by hand: d_k = sqrt(L^2 sin^2 b + (d - L cos b)^2), d d_k/db = L d sin b / d_k */
static const char *const governor_hand =
    "parameters: {h: 1, L: 0.5, d: 0.6, mb: 1.0, r: 0.08, Js: 0.02, Jt: 0.05, k: 40,"
    " c: 0.5, l0: 0.3, g: 9.81, w0: 6}\n"
    "coordinates: [phi, b1, b2]\n"
    "define:\n"
    "  I: 2*mb*r^2/5\n"
    "  d1: sqrt(L^2*sin(b1)^2 + (d - L*cos(b1))^2)\n"
    "  d2: sqrt(L^2*sin(b2)^2 + (d - L*cos(b2))^2)\n"
    "kinetic: 0.5*Js*phi'^2 + 0.5*mb*L^2*(b1'^2 + sin(b1)^2*phi'^2) + 0.5*I*(phi'^2 + b1'^2)"
    " + 0.5*mb*L^2*(b2'^2 + sin(b2)^2*phi'^2) + 0.5*I*(phi'^2 + b2'^2)\n"
    "potential: mb*g*(h - L*cos(b1)) + mb*g*(h - L*cos(b2)) + 0.5*k*(d1 - l0)^2"
    " + 0.5*k*(d2 - l0)^2\n"
    "forces:\n"
    "  b1: -c*(L*d*sin(b1)/d1)^2*b1'\n"
    "  b2: -c*(L*d*sin(b2)/d2)^2*b2'\n"
    "initial:\n"
    "  q: {phi: 0, b1: 0.6, b2: 0.9}\n"
    "  v: {phi: w0}\n"
    "simulate: {t_end: 5, dt: 0.01, rtol: 1e-11, atol: 1e-11}\n";

typedef struct same_case {
    const char *model;
    const char *hand;
    const char *cols_model, *cols_hand;
    double t_end;
    int nset;                   /* N = 3 or N = 2 */
    double tol;
} same_case;

static const same_case same[] = {
    { "hanging_chain.yaml", chain3_hand, "t,x_1,y_1,x_2,y_2,x_3,y_3,x_3',lambda_*,E",
      "t,x1,y1,x2,y2,x3,y3,x3',lambda_*,E", 2, 3, 0 },
    { "nfourbar.yaml", fourbar2_hand,
      "t,x_0,y_0,x_1,y_1,x_2,y_2,x_0',y_0',lambda_*,E,theta",
      "t,x0,y0,x1,y1,x2,y2,x0',y0',lambda_*,E,theta", 2, 2, 1e-12 },
    /* a 30 rad/s spin over 200 steps at rtol 1e-12: two right-hand sides
     * equal to round-off (test_same_accel: 1e-12) give rows that differ
     * by the integration error's own round-off, 1.3e-11 in e3' (4e-12
     * at rtol 1e-13; it does not shrink further) */
    { "heavy_top.yaml", top_hand, "t,e?,e?',lambda_*,E,u,phi,w3", "t,e?,e?',lambda_*,E,u,phi,w3o",
      2, 0, 2e-11 },
    { "flyball_governor.yaml", governor_hand, "t,phi,b_1,b_2,phi',b_1',b_2',E,W_nc",
      "t,phi,b1,b2,phi',b1',b2',E,W_nc", 5, 0, 1e-12 },
};

START_TEST(test_same_rows)
{
    const same_case *c = &same[_i];
    pu_args a = pu_defaults(), b = pu_defaults();
    a.path = PU_MODEL(c->model);
    a.columns = c->cols_model;
    a.t_end = c->t_end;
    if (c->nset)
        pu_set(&a, "N", c->nset);
    b.text = c->hand;
    b.columns = c->cols_hand;
    b.t_end = c->t_end;
    pu_result R, S;
    pu_run_ok(&a, &R);
    pu_run_ok(&b, &S);
    double d = table_diff(&R.tab, &S.tab);
    ck_assert_msg(d <= c->tol, "%s: max |family - by hand| = %g (tolerance %g)", c->model, d,
                  c->tol);
    pu_result_free(&R);
    pu_result_free(&S);
}
END_TEST

/* The same systems give the same accelerations and multipliers at any
 * state (random positions and velocities around the initial ones). */
START_TEST(test_same_accel)
{
    const same_case *c = &same[_i];
    pu_args a = pu_defaults(), b = pu_defaults();
    a.path = PU_MODEL(c->model);
    if (c->nset)
        pu_set(&a, "N", c->nset);
    b.text = c->hand;
    hs_model *ma = pu_load(&a), *mb = pu_load(&b);
    ck_assert_uint_eq(ma->n, mb->n);
    ck_assert_uint_eq(ma->k, mb->k);
    size_t n = ma->n, k = ma->k;
    hs_work *wa = hs_work_new(ma), *wb = hs_work_new(mb);
    double *q = calloc(n, sizeof *q), *v = calloc(n, sizeof *v), *aa = calloc(n, sizeof *aa),
           *ab = calloc(n, sizeof *ab), *la = calloc(k + 1, sizeof *la), *lb = calloc(k + 1, sizeof *lb);
    unsigned seed = 12345;
    double worst = 0;
    for (int s = 0; s < 50; s++) {
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            q[i] = ma->q0[i] + 0.1 * ((double)(seed >> 8) / (1 << 24) - 0.5);
            seed = seed * 1103515245u + 12345u;
            v[i] = ma->v0[i] + (double)(seed >> 8) / (1 << 24) - 0.5;
        }
        ck_assert_int_eq(hs_dyn_accel(ma, wa, 0.3, q, v, aa, la), 0);
        ck_assert_int_eq(hs_dyn_accel(mb, wb, 0.3, q, v, ab, lb), 0);
        for (size_t i = 0; i < n; i++)
            worst = fmax(worst, fabs(aa[i] - ab[i]) / (1 + fabs(aa[i])));
        for (size_t j = 0; j < k; j++)
            worst = fmax(worst, fabs(la[j] - lb[j]) / (1 + fabs(la[j])));
    }
    ck_assert_msg(worst < 1e-12, "%s: accelerations differ by %g (relative)", c->model, worst);
    free(q), free(v), free(aa), free(ab), free(la), free(lb);
    hs_work_free(wa);
    hs_work_free(wb);
    hs_model_free(ma);
    hs_model_free(mb);
}
END_TEST

/* The governor's angular momentum about the axis stays constant, and the
 * energy falls by exactly the dampers' work. */
START_TEST(test_governor_invariants)
{
    pu_result R;
    run_text(NULL, PU_MODEL("flyball_governor.yaml"), "t,p_phi,E,W_nc", &R);
    size_t cp = pu_col(&R.tab, "p_phi"), ce = pu_col(&R.tab, "E"), cw = pu_col(&R.tab, "W_nc");
    double p0 = PU_AT(&R.tab, 0, cp), e0 = PU_AT(&R.tab, 0, ce), dp = 0, de = 0;
    for (size_t i = 0; i < R.tab.nrow; i++) {
        dp = fmax(dp, fabs(PU_AT(&R.tab, i, cp) - p0));
        de = fmax(de, fabs(PU_AT(&R.tab, i, ce) - e0 - PU_AT(&R.tab, i, cw)));
    }
    ck_assert_msg(dp < 1e-10, "p_phi drifts by %g", dp);
    ck_assert_msg(de < 1e-8, "E - E0 - W_nc = %g", de);
    ck_assert_msg(PU_AT(&R.tab, R.tab.nrow - 1, cw) < -0.1, "the dampers did no work");
    pu_result_free(&R);
}
END_TEST

/* ---- smaller pieces of the language ---- */

#define ONE_HDR "simulate: {t_end: 1}\n"

START_TEST(test_sums_lists_D)
{
    /* sum, prod, list parameters, two indices, D() of a define */
    const char *text =
        "parameters:\n  N: 3\n  k: [2, 3, 5]\n"
        "coordinates:\n  - x[i=1..N]\n"
        "define:\n  c[i=1..2, j=1..2]: 10*i + j\n  r: sum(i=1..N, k[i]*x[i])\n"
        "mass:\n  x[i=1..N]: 1\n"
        "initial:\n  q:\n    x[i=1..N]: i\n  v:\n    x[i=1..N]: 1\n"
        ONE_HDR
        "outputs:\n  s: prod(i=1..N, k[i]) + c[2, 1]\n  rd: D(r)\n  rdd: D(D(r))\n";
    hs_error err;
    hs_model *m = load(text, NULL, &err);
    ck_assert_msg(m != NULL, "%d:%d: %s", err.line, err.column, err.msg);
    ck_assert_uint_eq(m->n, 3);
    hs_model_free(m);
    pu_result R;
    run_text(text, NULL, "t,s,rd,rdd", &R);
    ck_assert_double_eq_tol(PU_AT(&R.tab, 0, pu_col(&R.tab, "s")), 30 + 21, 1e-15);
    ck_assert_double_eq_tol(PU_AT(&R.tab, 0, pu_col(&R.tab, "rd")), 2 + 3 + 5, 1e-15);
    /* free particles: x'' = 0, so D(D(r)) = 0 */
    ck_assert_double_eq_tol(PU_AT(&R.tab, R.tab.nrow - 1, pu_col(&R.tab, "rdd")), 0, 1e-15);
    pu_result_free(&R);
}
END_TEST

/* A Rayleigh dissipation R = c/2 x'^2 on a spring: the damped oscillator
 * x'' = -k x - c x', against its closed form; the dissipated power is in
 * W_nc. */
START_TEST(test_dissipation_oscillator)
{
    const char *text =
        "parameters: {k: 4, c: 0.4}\n"
        "coordinates: [x]\n"
        "mass: [1]\n"
        "potential: k*x^2/2\n"
        "dissipation: c*x'^2/2\n"
        "initial: {q: {x: 1}}\n"
        "simulate: {t_end: 5, dt: 0.1, rtol: 1e-12, atol: 1e-12}\n";
    pu_result R;
    run_text(text, NULL, "t,x,E,W_nc", &R);
    double w = sqrt(4 - 0.04), d = 0, db = 0;
    for (size_t i = 0; i < R.tab.nrow; i++) {
        double t = PU_AT(&R.tab, i, 0);
        double x = exp(-0.2 * t) * (cos(w * t) + 0.2 / w * sin(w * t));
        d = fmax(d, fabs(PU_AT(&R.tab, i, pu_col(&R.tab, "x")) - x));
        db = fmax(db, fabs(PU_AT(&R.tab, i, pu_col(&R.tab, "E")) - 2 -
                           PU_AT(&R.tab, i, pu_col(&R.tab, "W_nc"))));
    }
    ck_assert_msg(d < 1e-9, "damped oscillator: max error %g", d);
    ck_assert_msg(db < 1e-9, "E - E0 - W_nc = %g", db);
    pu_result_free(&R);
}
END_TEST

/* A 2D spring-damper between a named point and a fixed point gives the
 * same rows as the potential and forces written by hand. */
START_TEST(test_spring_vs_hand)
{
    const char *elem =
        "parameters: {k: 10, c: 0.3, l0: 0.5}\n"
        "coordinates: [x, y]\n"
        "mass: [1, 1]\n"
        "points: {P: [x, y]}\n"
        "springs:\n  s: {between: [P, [0, 1]], k: k, c: c, length: l0}\n"
        "potential: 9.81*y\n"
        "initial: {q: {x: 0.3, y: 0}, v: {x: 1}}\n"
        "simulate: {t_end: 3, dt: 0.05}\n"
        "outputs: {f: s_force}\n";
    const char *hand =
        "parameters: {k: 10, c: 0.3, l0: 0.5}\n"
        "coordinates: [x, y]\n"
        "mass: [1, 1]\n"
        "define:\n  d: sqrt(x^2 + (y - 1)^2)\n  dd: (x*x' + (y - 1)*y')/d\n"
        "potential: 9.81*y + 0.5*k*(d - l0)^2\n"
        "forces: {x: -c*dd*x/d, y: -c*dd*(y - 1)/d}\n"
        "initial: {q: {x: 0.3, y: 0}, v: {x: 1}}\n"
        "simulate: {t_end: 3, dt: 0.05}\n"
        "outputs: {f: k*(d - l0) + c*dd}\n";
    pu_result R, S;
    run_text(elem, NULL, "t,x,y,x',y',E,f", &R);
    run_text(hand, NULL, "t,x,y,x',y',E,f", &S);
    double d = table_diff(&R.tab, &S.tab);
    ck_assert_msg(d < 1e-12, "spring element vs by hand: %g", d);
    pu_result_free(&R);
    pu_result_free(&S);
}
END_TEST

/* A sweep may vary a parameter that sizes a family: the model loads with
 * it kept as an input, and moving to another point with a new size is
 * refused (a full load follows), while the same size or another
 * parameter moves as usual. */
START_TEST(test_keep_structural)
{
    hs_overrides ov;
    hs_overrides_init(&ov);
    const char *keep[] = { "N", "g" };
    ov.nkeep = 2;
    ov.keep = keep;
    pu_args a = pu_defaults();
    a.path = PU_MODEL("hanging_chain.yaml");
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load(a.path, &ov, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    ck_assert_int_eq(hs_model_structural(m, "N"), 1);
    ck_assert_int_eq(hs_model_structural(m, "g"), 0);
    const char *nm[] = { "N" }, *ng[] = { "g" };
    double nine = 9, eight = 8, g2 = 1.62;
    ck_assert_int_ne(hs_model_repoint(m, nm, &nine, 1), 0);
    ck_assert_int_eq(hs_model_repoint(m, nm, &eight, 1), 0);
    ck_assert_int_eq(hs_model_repoint(m, ng, &g2, 1), 0);
    ck_assert_uint_eq(m->n, 16);
    hs_model_free(m);
}
END_TEST

/* ---- bad input ---- */

#define FAM_BASE "parameters: {N: 3}\ncoordinates:\n  - x[i=1..N]\nmass:\n  x[i=1..N]: 1\n"
/* lines 1-5; initial on 6-8 */
#define FAM_INIT "initial:\n  q:\n    x[i=1..N]: 0\n" ONE_HDR

typedef struct bad_case {
    const char *name, *text;
    int code, line, col;
    const char *msg;
} bad_case;

static const bad_case bad[] = {
    /* a misspelt top-level key is named first, with the language's keys in
     * the list, not met as a family nothing declares */
    { "misspelt_coordinates", "parameters: {N: 3}\ncoordinate:\n  - x[i=1..N]\nmass:\n"
      "  x[i=1..N]: 1\n" FAM_INIT, 2, 2, 1,
      "unknown key 'coordinate' in the model (did you mean 'coordinates'?)" },
    { "misspelt_springs", "coordinates: [x]\nmass: [1]\nspring:\n  s[j=1..2]: {between: "
      "[[x, 0], [0, 0]], k: 1}\ninitial: {q: {x: 0}}\n" ONE_HDR, 2, 3, 1,
      "unknown key 'spring' in the model (did you mean 'springs'?)" },
    { "misspelt_bodies", "coordinates: [x]\nbody:\n  b[j=1..2]: {mass: 1, position: [x, 0, 0]}\n"
      "initial: {q: {x: 0}}\n" ONE_HDR, 2, 2, 1, "friction, points, bodies, springs, dissipation)" },
    /* inside the sections the language rewrites, the hints the loader
     * gives elsewhere */
    { "dissipation_no_velocity", "coordinates: [x]\nmass: [1]\ndissipation: 0.3*xx'^2\n"
      "initial: {q: {x: 0}}\n" ONE_HDR, 2, 3, 18,
      "'xx' has no velocity: only coordinates take a prime (did you mean x'?)" },
    { "dissipation_xdot", "coordinates: [x]\nmass: [1]\ndissipation: 0.3*xdot^2\n"
      "initial: {q: {x: 0}}\n" ONE_HDR, 2, 3, 18,
      "unknown name 'xdot' (a velocity is written with a prime: x')" },
    { "dissipation_typo", "parameters: {c: 1}\ncoordinates: [x]\nmass: [1]\n"
      "dissipation: 0.5*cc*x'^2\ninitial: {q: {x: 0}}\n" ONE_HDR, 2, 4, 18,
      "unknown name 'cc' (did you mean 'c'?)" },
    { "neighbour_out_of_range", FAM_BASE FAM_INIT "constraints:\n  c[i=1..N]: x[i] - x[i-1]\n",
      2, 11, 21, "x[0] is outside the family x (x[1..3]) (at i = 1)" },
    { "range_in_expression", FAM_BASE FAM_INIT "potential: x[i=1..2]\n", 2, 10, 14,
      "a range 'i=1..2' declares a family" },
    { "unknown_in_template", FAM_BASE FAM_INIT "constraints:\n  c[i=1..N]: x[i] - zz\n",
      2, 11, 21, "unknown name 'zz' (no coordinate, parameter or define has that name: give "
      "it a value under 'parameters' or an expression under 'define') (at i = 1)" },
    { "nan_at_index", FAM_BASE FAM_INIT "constraints:\n  c[i=1..N]: x[i] - log(i - 2)\n",
      2, 11, 21, "(at i = 1)" },
    { "bad_range", FAM_BASE FAM_INIT "constraints:\n  c[i=1:N]: x[i]\n", 2, 11, 7,
      "a range is written i=FIRST..LAST" },
    { "fractional_index", FAM_BASE FAM_INIT "potential: x[3/2]\n", 2, 10, 14,
      "the index '3/2' is 1.5" },
    { "not_indexed", FAM_BASE FAM_INIT "potential: y[1]\n", 2, 10, 12,
      "'y' is not indexed" },
    { "wrong_index_count", FAM_BASE FAM_INIT "potential: x[1, 1]\n", 2, 10, 12,
      "x[1, 1]: x has 1 index" },
    { "index_hides_parameter", FAM_BASE FAM_INIT "potential: sum(N=1..2, x[N])\n", 2, 10, 16,
      "the index 'N' hides the parameter 'N'" },
    { "index_hides_time", "coordinates:\n  - x[t=1..2]\n", 2, 2, 7,
      "the index 't' hides the time" },
    { "mixed_shapes", "coordinates:\n  - x[i=1..2]\ndefine:\n  x[1, 1]: 0\nmass: [1, 1]\n"
      "potential: x[3]\ninitial: {q: {x_1: 0, x_2: 0}}\n" ONE_HDR, 2, 6, 12,
      "x[3] is not a member of the family x" },
    { "unknown_param_in_bound", "coordinates:\n  - x[i=1..M]\n", 2, 2, 12,
      "unknown name 'M'" },
    { "list_param_as_bound", "parameters: {N: [1, 2]}\ncoordinates:\n  - x[i=1..N]\n", 2, 1, 14,
      "parameter 'N' is a list" },
    { "unclosed_bracket", FAM_BASE FAM_INIT "potential: x[1\n", 2, 10, 13, "'[' is not closed" },
    { "sum_without_body", FAM_BASE FAM_INIT "potential: sum(i=1..N)\n", 2, 10, 12,
      "sum is written sum(i=FIRST..LAST, EXPRESSION)" },
    { "mass_entry_unknown", "parameters: {N: 2}\ncoordinates:\n  - x[i=1..N]\nmass:\n"
      "  x[i=1..N], z: 1\n" FAM_INIT, 2, 5, 3, "'z' is not a coordinate (at i = 1)" },
    { "mass_diag_missing", "parameters: {N: 2}\ncoordinates:\n  - x[i=1..N]\nmass:\n"
      "  x[i=1..1]: 1\n" FAM_INIT, 2, 4, 1, "'mass' has no entry for 'x_2'" },
    { "duplicate_from_family", "coordinates:\n  - x[i=1..2]\n  - x_2\nmass: [1, 1, 1]\n"
      "initial: {q: {x_1: 0, x_2: 0}}\n" ONE_HDR, 2, 3, 5, "x_2" },
    { "spring_unknown_point", "coordinates: [x]\nmass: [1]\nsprings:\n  s: {between: [P, [0, 0]], k: 1}\n"
      "initial: {q: {x: 0}}\n" ONE_HDR, 2, 4, 17, "'P' is not a named point" },
    { "spring_dims", "coordinates: [x]\nmass: [1]\nsprings:\n  s: {between: [[x, 0], [0, 0, 1]], k: 1}\n"
      "initial: {q: {x: 0}}\n" ONE_HDR, 2, 4, 16, "joins a 2D and a 3D point" },
    { "body_without_mass", "coordinates: [x]\nbodies:\n  b: {position: [x, 0, 0]}\n"
      "initial: {q: {x: 0}}\n" ONE_HDR, 2, 3, 3, "body 'b' needs 'mass'" },
    { "body_bad_key", "coordinates: [x]\nbodies:\n  b: {mass: 1, position: [x, 0, 0], color: red}\n"
      "initial: {q: {x: 0}}\n" ONE_HDR, 2, 3, 37, "unknown key 'color' in a body" },
    { "body_with_mass_key", "coordinates: [x]\nmass: [1]\nbodies:\n  b: {mass: 1, position: [x, 0, 0]}\n"
      "initial: {q: {x: 0}}\n" ONE_HDR, 2, 3, 1, "'bodies' add to the kinetic energy" },
    { "bad_axis", "coordinates: [x]\nbodies:\n  b: {mass: 1, inertia: [1, 1, 1], position: [0, 0, 0],"
      " orientation: {axes: [[w, x]]}}\n" "initial: {q: {x: 0}}\n" ONE_HDR, 2, 3, 79,
      "axis 'w': write x, y or z" },
    { "D_unclosed", "coordinates: [x]\nmass: [1]\noutputs: {a: \"D(x\"}\n"
      "initial: {q: {x: 0}}\n" ONE_HDR, 2, 3, 16, "'(' of D is not closed" },
    { "D_unknown_name", "coordinates: [x]\nmass: [1]\noutputs: {a: \"2*D(x*qq)\"}\n"
      "initial: {q: {x: 0}}\n" ONE_HDR, 2, 3, 21, "unknown name 'qq'" },
    { "D_acceleration_in_force", "coordinates: [x]\nmass: [1]\nforces: {x: \"D(x')\"}\n"
      "initial: {q: {x: 0}}\n" ONE_HDR, 2, 3, 15, "acceleration" },
    /* sizes of the whole expansion, checked as it grows, naming the index */
    { "sum_too_long", "coordinates: [x]\nmass: [1]\npotential: sum(i=1..10000000, "
      "sum(j=1..10000000, x))\n" "initial: {q: {x: 0}}\n" ONE_HDR, 2, 3, 12,
      "the families expand to more than 1048576 pieces of text (names, numbers, operators "
      "written out) (at i = 1, j = 349525)" },
    { "text_too_long", "coordinates: [x]\nmass: [1]\ndefine:\n  e[k=1..100]: sum(i=1..100000, "
      "sin(x*abcdefghijklmnopqrstuvwxyz))\n" "initial: {q: {x: 0}}\n" ONE_HDR, 2, 4, 16,
      "the families expand to more than 4 MiB of text (at k = 2, i = 7547)" },
    { "too_many_nodes", "coordinates: [x]\nmass: [1]\ndefine:\n  c[i=1..10000000]: [[[[[[[[]]]]]]]]\n"
      "initial: {q: {x: 0}}\n" ONE_HDR, 2, 4, 26, "the families expand to more than 1000000 "
      "YAML nodes (at i = 111111)" },
    { "sum_missing_range", FAM_BASE FAM_INIT "potential: sum(i, x[1])\n", 2, 10, 12,
      "unknown function 'sum'" },
    { "dissipation_not_expr", "coordinates: [x]\nmass: [1]\ndissipation: [1]\n"
      "initial: {q: {x: 0}}\n" ONE_HDR, 2, 3, 14, "'dissipation' must be an expression" },
};

START_TEST(test_bad)
{
    const bad_case *c = &bad[_i];
    hs_error err;
    hs_model *m = load(c->text, NULL, &err);
    ck_assert_msg(!m && err.code == c->code && err.line == c->line && err.column == c->col &&
                      strstr(err.msg, c->msg) && (c->line == 0 || err.source[0]),
                  "%s: want %d at %d:%d '%s'; got %s, %d at %d:%d '%s'", c->name, c->code,
                  c->line, c->col, c->msg, m ? "loaded" : "error", err.code, err.line,
                  err.column, err.msg);
    hs_model_free(m);
}
END_TEST

/* A file without the new forms loads exactly as before: no node added. */
START_TEST(test_format1_untouched)
{
    hs_error err;
    hs_model *m = load("coordinates: [x]\nmass: [1]\n# D(x) in a comment\n"
                       "initial: {q: {x: 0}}\n" ONE_HDR, NULL, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    hs_model_free(m);
}
END_TEST

static Suite *lang_suite(void)
{
    Suite *s = suite_create("lang");
    TCase *tc = tcase_create("lang");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_heavy_top_closed_form);
    tcase_add_loop_test(tc, test_fourbar_reduced, 0, 3);
    tcase_add_loop_test(tc, test_same_rows, 0, (int)(sizeof same / sizeof *same));
    tcase_add_loop_test(tc, test_same_accel, 0, (int)(sizeof same / sizeof *same));
    tcase_add_test(tc, test_governor_invariants);
    tcase_add_test(tc, test_sums_lists_D);
    tcase_add_test(tc, test_dissipation_oscillator);
    tcase_add_test(tc, test_spring_vs_hand);
    tcase_add_test(tc, test_keep_structural);
    tcase_add_loop_test(tc, test_bad, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, test_format1_untouched);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(lang_suite)
