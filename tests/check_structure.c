/* The structured embedding (src/model/chain.c, src/dynamics/chain.c): an
 * embedding written through defines solved as a sparse saddle-point system
 * with the defines as unknowns.  Against two other formulations: the same
 * model through the dense metric (the structure set aside: the loader's
 * own kernels), and the same motion in Cartesian coordinates with link
 * constraints. */
#include "check_main.h"
#include "physics_util.h"

#include <gsl/gsl_eigen.h>

#include "dynamics/dynamics.h"

/* A chain of 32 links in absolute angles, points from the one before
 * (32 coordinates: the fewest the structure serves, chain.c). */
static const char *abs_chain =
    "parameters: {m: 1.0, l: 0.7, g: 9.81}\n"
    "coordinates:\n  - th[i=1..32]\n"
    "define:\n  X[0]: 0\n  Y[0]: 0\n  X[i=1..32]: X[i-1] + l*sin(th[i])\n"
    "  Y[i=1..32]: Y[i-1] - l*cos(th[i])\n"
    "embedding:\n  x[i=1..32]: X[i]\n  y[i=1..32]: Y[i]\n"
    "mass:\n  x[i=1..32]: m*(1 + i/10)\n  y[i=1..32]: m*(1 + i/10)\n"
    "potential: m*g*sum(i=1..32, (1 + i/10)*y[i])\n"
    "initial:\n  q:\n    th[i=1..32]: 0.3*i\n";

/* Relative angles: the defines are nonlinear in one another (sin of a
 * define), and a damper acts on the tip through the ambient velocities. */
static const char *rel_chain =
    "parameters: {m: 1.0, l: 0.5, g: 9.81, c: 0.3}\n"
    "coordinates:\n  - a[i=1..32]\n"
    "define:\n  A[0]: 0\n  X[0]: 0\n  Y[0]: 0\n  A[i=1..32]: A[i-1] + a[i]\n"
    "  X[i=1..32]: X[i-1] + l*sin(A[i])\n  Y[i=1..32]: Y[i-1] - l*cos(A[i])\n"
    "embedding:\n  x[i=1..32]: X[i]\n  y[i=1..32]: Y[i]\n"
    "mass:\n  x[i=1..32]: m\n  y[i=1..32]: m\n"
    "potential: m*g*sum(i=1..32, y[i])\n"
    "forces: {x_32: -c*x_32', y_32: -c*y_32'}\n"
    "initial:\n  q:\n    a[i=1..32]: 0.2\n";

/* A chart that moves: the pivot shaken along an ellipse, the points'
 * heights drifting with t, a damper on the tip (T1, T0, F_a . X_t and
 * bT . a in the energy's bookkeeping). */
static const char *moving_chain =
    "parameters: {m: 1.0, l: 0.6, g: 9.81, a: 0.1, w: 7.0, c: 0.2}\n"
    "coordinates:\n  - th[i=1..32]\n"
    "define:\n  X[0]: a*sin(w*t)\n  Y[0]: 0.5*a*cos(w*t)\n"
    "  X[i=1..32]: X[i-1] + l*sin(th[i])\n  Y[i=1..32]: Y[i-1] - l*cos(th[i])\n"
    "embedding:\n  x[i=1..32]: X[i]\n  y[i=1..32]: Y[i] + 0.01*t^2\n"
    "mass:\n  x[i=1..32]: m*(1 + i/20)\n  y[i=1..32]: m*(1 + i/20)\n"
    "potential: m*g*sum(i=1..32, (1 + i/20)*y[i])\n"
    "forces: {x_32: -c*x_32', y_32: -c*y_32'}\n"
    "initial:\n  q:\n    th[i=1..32]: 0.1*i\n";

/* A loop closed over the chain: its tip pinned at (d, 0) by two
 * constraints on the last define (extra rows of the saddle-point system),
 * and a third that reads a define in the middle (its height at h). */
static const char *closed_chain =
    "parameters: {m: 1.0, l: 0.6, g: 9.81, d: 15.0, h: -2.0}\n"
    "coordinates:\n  - th[i=1..34]\n"
    "define:\n  X[0]: 0\n  Y[0]: 0\n"
    "  X[i=1..34]: X[i-1] + l*sin(th[i])\n  Y[i=1..34]: Y[i-1] - l*cos(th[i])\n"
    "embedding:\n  x[i=1..34]: X[i]\n  y[i=1..34]: Y[i]\n"
    "mass:\n  x[i=1..34]: m*(1 + i/20)\n  y[i=1..34]: m*(1 + i/20)\n"
    "potential: m*g*sum(i=1..34, (1 + i/20)*y[i])\n"
    "constraints: {tip_x: X_34 - d, tip_y: Y_34, mid: Y_17 - h}\n"
    "initial:\n  q:\n    th[i=1..34]: 1.5 - 0.09*i\n";

/* Ambient masses that move with the positions (masses reading their
 * link's angle, one its own point's height, one an angle and its point's
 * abscissa; a few only: the dense path the test compares with grows as
 * N^3 with each): -m' z' and
 * 1/2 dm/dy z'^2 on the right-hand sides, read locally (chain.c). */
static const char *heavy_chain =
    "parameters: {m: 1.0, l: 0.6, g: 9.81}\n"
    "coordinates:\n  - th[i=1..32]\n"
    "define:\n  X[0]: 0\n  Y[0]: 0\n"
    "  X[i=1..32]: X[i-1] + l*sin(th[i])\n  Y[i=1..32]: Y[i-1] - l*cos(th[i])\n"
    "embedding:\n  x[i=1..32]: X[i]\n  y[i=1..32]: Y[i]\n"
    "mass:\n  x[i=1..32]: m*(1 + 0.05*th[i]^2)\n  y[i=1..30]: m\n"
    "  y_31: m*(1 + 0.1*y_31^2)\n  y_32: m*(1 + 0.05*th_32^2 + 0.02*x_32^2)\n"
    "potential: m*g*sum(i=1..32, y[i])\n"
    "initial:\n  q:\n    th[i=1..32]: 0.1*i\n";

/* A tree: a trunk of four links, two branches of fourteen from its end; an
 * ambient coordinate that is not a define (the middle of a link). */
static const char *tree =
    "parameters: {m: 1.0, l: 1.0, g: 9.81}\n"
    "coordinates:\n  - t[i=1..4]\n  - u[i=1..14]\n  - w[i=1..14]\n"
    "define:\n  P[0]: 0\n  Q[0]: 0\n"
    "  P[i=1..4]: P[i-1] + l*sin(t[i])\n  Q[i=1..4]: Q[i-1] - l*cos(t[i])\n"
    "  U[0]: P_4\n  V[0]: Q_4\n  W[0]: P_4\n  Z[0]: Q_4\n"
    "  U[i=1..14]: U[i-1] + l*sin(u[i])\n  V[i=1..14]: V[i-1] - l*cos(u[i])\n"
    "  W[i=1..14]: W[i-1] + l*sin(w[i])\n  Z[i=1..14]: Z[i-1] - l*cos(w[i])\n"
    "embedding:\n  x[i=1..4]: P[i]\n  y[i=1..4]: Q[i]\n  xu[i=1..14]: U[i]\n"
    "  yu[i=1..14]: V[i]\n  xw[i=1..14]: W[i]\n  yw[i=1..14]: Z[i]\n"
    "  xm: (P_3 + P_4)/2\n  ym: (Q_3 + Q_4)/2\n"
    "mass:\n  x[i=1..4]: m\n  y[i=1..4]: m\n  xu[i=1..14]: m\n  yu[i=1..14]: m\n"
    "  xw[i=1..14]: m\n  yw[i=1..14]: m\n  xm: 2*m\n  ym: 2*m\n"
    "potential: m*g*(sum(i=1..4, y[i]) + sum(i=1..14, yu[i] + yw[i]) + 2*ym)\n"
    "initial:\n  q:\n    t[i=1..4]: 0.1*i\n    u[i=1..14]: 0.6 + 0.1*i\n"
    "    w[i=1..14]: -0.3 - 0.1*i\n";

static double urand(unsigned long *s)
{
    *s = *s * 6364136223846793005UL + 1442695040888963407UL;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* The 2-norm condition number of the metric at (q, v). */
static double metric_cond(const hs_model *m, hs_work *w, const double *q, const double *v)
{
    size_t n = m->n;
    double M[4096];
    ck_assert_int_eq(hs_dyn_mass(m, w, 0.3, q, v, M), 0);
    gsl_matrix_view A = gsl_matrix_view_array(M, n, n);
    gsl_vector *ev = gsl_vector_alloc(n);
    gsl_eigen_symm_workspace *ws = gsl_eigen_symm_alloc(n);
    ck_assert_int_eq(gsl_eigen_symm(&A.matrix, ev, ws), 0);
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < n; i++) {
        lo = fmin(lo, gsl_vector_get(ev, i));
        hi = fmax(hi, gsl_vector_get(ev, i));
    }
    gsl_eigen_symm_free(ws);
    gsl_vector_free(ev);
    ck_assert_double_gt(lo, 0);
    return hi / lo;
}

/* Accelerations and energy through the structure and through the dense
 * metric at random states: the same to round-off, that is within a few
 * hundred ulps times the metric's condition number (both solves are
 * backward stable; a straightened chain's metric reaches 1e6). */
static void compare_with_dense(const char *text)
{
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("s.yaml", text, NULL, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    ck_assert_ptr_nonnull(m->chain);
    hs_overrides ov;
    hs_overrides_init(&ov);
    ov.dense = 1;                              /* the loader's dense kernels, as derive */
    hs_model *md = hs_model_load_string("s.yaml", text, &ov, &err);
    ck_assert_msg(md != NULL, "%s", err.msg);
    ck_assert_ptr_null(md->chain);
    /* the structure's load does not derive Q (n^2 to n^3 nodes); derive's does */
    for (size_t i = 0; i < m->n; i++)
        ck_assert(hs_is_num(m->Q[i], 0));
    ck_assert(!hs_is_num(md->Q[0], 0));
    size_t n = m->n;
    hs_work *ws = hs_work_new(m), *wd = hs_work_new(md);
    ck_assert(ws && wd);
    double q[64], v[64], as[64], ad[64], Es, Ed;
    ck_assert_uint_le(n, 64);
    unsigned long seed = 7;
    for (int trial = 0; trial < 20; trial++) {
        for (size_t i = 0; i < n; i++) {
            q[i] = 6 * urand(&seed) - 3;
            v[i] = 4 * urand(&seed) - 2;
        }
        double Ls[8], Ld[8];
        ck_assert_uint_le(m->k, 8);
        ck_assert_int_eq(hs_dyn_accel(m, ws, 0.3, q, v, as, Ls), 0);
        ck_assert_int_eq(hs_dyn_energy(m, ws, 0.3, q, v, &Es), 0);
        ck_assert_int_eq(hs_dyn_accel(md, wd, 0.3, q, v, ad, Ld), 0);
        ck_assert_int_eq(hs_dyn_energy(md, wd, 0.3, q, v, &Ed), 0);
        double scale = 1;
        for (size_t i = 0; i < n; i++)
            scale = fmax(scale, fabs(ad[i]));
        double tol = 1e-14 * metric_cond(md, wd, q, v) * scale;
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(fabs(as[i] - ad[i]) <= tol, "trial %d, %s'': %.17g vs %.17g (tol %g)",
                          trial, m->qname[i], as[i], ad[i], tol);
        ck_assert_msg(fabs(Es - Ed) <= 1e-12 * fmax(1, fabs(Ed)), "E %.17g vs %.17g", Es, Ed);
        /* the multipliers of the model's constraints (the same Lambda: the
         * reaction G_q^T Lambda of the expanded G) */
        double lscale = 1;
        for (size_t i = 0; i < m->k; i++)
            lscale = fmax(lscale, fabs(Ld[i]));
        for (size_t i = 0; i < m->k; i++)
            ck_assert_msg(fabs(Ls[i] - Ld[i]) <= tol / scale * lscale * 1e2,
                          "trial %d, lambda_%s: %.17g vs %.17g", trial, m->cname[i], Ls[i],
                          Ld[i]);
        double Ws[3], Wd[3];
        hs_dyn_work_rates(m, ws, v, as, Ws);
        hs_dyn_work_rates(md, wd, v, ad, Wd);
        ck_assert_double_eq_tol(Ws[1], Wd[1], 1e-12 * fmax(1, fabs(Wd[1])));
        /* P_t: bT . a carries the accelerations' error (a chart that moves) */
        ck_assert_msg(fabs(Ws[2] - Wd[2]) <= 1e-12 * fmax(1, fabs(Wd[2])) + 1e3 * tol,
                      "P_t %.17g vs %.17g", Ws[2], Wd[2]);
    }
    hs_work_free(ws);
    hs_work_free(wd);
    hs_model_free(m);
    hs_model_free(md);
}

START_TEST(absolute_chain_matches_dense)
{
    compare_with_dense(abs_chain);
}
END_TEST

START_TEST(relative_chain_with_damper_matches_dense)
{
    compare_with_dense(rel_chain);
}
END_TEST

START_TEST(moving_chart_matches_dense)
{
    compare_with_dense(moving_chain);
}
END_TEST

START_TEST(closed_chain_matches_dense)
{
    compare_with_dense(closed_chain);
}
END_TEST

START_TEST(moving_mass_matches_dense)
{
    compare_with_dense(heavy_chain);
}
END_TEST

START_TEST(tree_matches_dense)
{
    compare_with_dense(tree);
}
END_TEST

/* An N-link chain in angles: the first point's x, and what follows the
 * common part (mass, constraints). */
static void variant(char *buf, size_t size, int N, const char *first, const char *extra)
{
    snprintf(buf, size,
             "coordinates:\n  - th[i=1..%d]\n"
             "define:\n  X[1]: %s\n  Y[1]: -cos(th[1])\n"
             "  X[i=2..%d]: X[i-1] + sin(th[i])\n  Y[i=2..%d]: Y[i-1] - cos(th[i])\n"
             "embedding:\n  x[i=1..%d]: X[i]\n  y[i=1..%d]: Y[i]\n"
             "potential: 9.81*sum(i=1..%d, y[i])\n"
             "initial:\n  q:\n    th[i=1..%d]: 0.1*i\n%s", N, first, N, N, N, N, N, N, extra);
}

/* Models the structure does not serve keep the dense path; the same chain
 * without the change takes the structure. */
START_TEST(structure_only_where_it_holds)
{
    static const struct { int N; const char *first, *extra; int structured; } c[] = {
        { 32, "sin(th[1])", "mass:\n  x[i=1..32]: 1\n  y[i=1..32]: 1\n", 1 },
        /* 31 coordinates: the dense path is cheaper */
        { 31, "sin(th[1])", "mass:\n  x[i=1..31]: 1\n  y[i=1..31]: 1\n", 0 },
        /* a moving chart: structured too (moving_chart_matches_dense) */
        { 32, "sin(th[1]) + 0.1*t", "mass:\n  x[i=1..32]: 1\n  y[i=1..32]: 1\n", 1 },
        /* a constraint: extra rows of the same system (closed_chain_matches_dense) */
        { 32, "sin(th[1])", "mass:\n  x[i=1..32]: 1\n  y[i=1..32]: 1\n"
                            "constraints: {c: th_1 - 2*th_2 + 0.1}\n", 1 },
        /* ... but not with an event that releases it, nor with a dependent one:
         * loaded again on the dense path */
        { 32, "sin(th[1])", "mass:\n  x[i=1..32]: 1\n  y[i=1..32]: 1\n"
                            "constraints: {c: th_1 - 2*th_2 + 0.1}\n"
                            "events:\n  go: {when: t > 1, action: release c}\n", 0 },
        { 32, "sin(th[1])", "mass:\n  x[i=1..32]: 1\n  y[i=1..32]: 1\n"
                            "constraints: {c: th_1 - 2*th_2 + 0.1, c2: 2*th_1 - 4*th_2 + 0.2}\n",
          0 },
        /* a mass that moves with the positions: structured
         * (moving_mass_matches_dense); with t, or a velocity: dense */
        { 32, "sin(th[1])", "mass:\n  x[i=1..32]: 1 + th_1^2\n  y[i=1..32]: 1\n", 1 },
        { 32, "sin(th[1])", "mass:\n  x[i=1..32]: 1 + 0.1*t^2\n  y[i=1..32]: 1\n", 0 },
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char text[2048];
        variant(text, sizeof text, c[i].N, c[i].first, c[i].extra);
        hs_error err;
        hs_error_init(&err);
        hs_model *m = hs_model_load_string("d.yaml", text, NULL, &err);
        ck_assert_msg(m != NULL, "model %zu: %s\n%s", i, err.msg, text);
        ck_assert_msg((m->chain != NULL) == c[i].structured, "model %zu: structured %d", i,
                      m->chain != NULL);
        hs_model_free(m);
    }
}
END_TEST

/* Polar coordinates at the root of a chain: the metric is singular at
 * r = 0, and the sparse solve says so as the dense one does. */
START_TEST(singular_coordinates_stop)
{
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("p.yaml",
        "coordinates:\n  - r\n  - th[i=1..31]\n"
        "define:\n  X[1]: r*cos(th[1])\n  Y[1]: r*sin(th[1])\n"
        "  X[i=2..31]: X[i-1] + sin(th[i])\n  Y[i=2..31]: Y[i-1] - cos(th[i])\n"
        "embedding:\n  x[i=1..31]: X[i]\n  y[i=1..31]: Y[i]\n"
        "mass:\n  x[i=1..31]: 1\n  y[i=1..31]: 1\n"
        "initial:\n  q:\n    r: 1\n    th[i=1..31]: 0.1*i\n", NULL, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    ck_assert_ptr_nonnull(m->chain);
    hs_work *w = hs_work_new(m);
    double q[32], v[32], a[32];
    for (size_t i = 0; i < 32; i++) {
        q[i] = i ? 0.1 * (double)i : 1;
        v[i] = 0.05 * (double)i;
    }
    ck_assert_int_eq(hs_dyn_accel(m, w, 0, q, v, a, NULL), 0);
    q[0] = 0;
    ck_assert_int_eq(hs_dyn_accel(m, w, 1.5, q, v, a, NULL), HS_EXIT_NUMERIC);
    ck_assert_msg(strstr(hs_work_err(w)->msg, "not positive definite at t=1.5"), "%s", hs_work_err(w)->msg);
    hs_work_free(w);
    hs_model_free(m);
}
END_TEST

/* A sweep's next point on the loaded model (hs_model_repoint) checks the
 * structure at its initial state: a singular start needs the full load
 * (which says where; tests/bad/structured_singular_start.yaml). */
START_TEST(repoint_checks_the_start)
{
    const char *keep[] = { "r0" };
    hs_overrides ov;
    hs_overrides_init(&ov);
    ov.keep = keep;
    ov.nkeep = 1;
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("p.yaml",
        "parameters: {r0: 1.0}\n"
        "coordinates:\n  - r\n  - th[i=1..31]\n"
        "define:\n  X[1]: r*cos(th[1])\n  Y[1]: r*sin(th[1])\n"
        "  X[i=2..31]: X[i-1] + sin(th[i])\n  Y[i=2..31]: Y[i-1] - cos(th[i])\n"
        "embedding:\n  x[i=1..31]: X[i]\n  y[i=1..31]: Y[i]\n"
        "mass:\n  x[i=1..31]: 1\n  y[i=1..31]: 1\n"
        "initial:\n  q:\n    r: r0\n    th[i=1..31]: 0.1*i\n", &ov, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    ck_assert_ptr_nonnull(m->chain);
    const char *name[] = { "r0" };
    double zero = 0, half = 0.5;
    ck_assert_int_eq(hs_model_repoint(m, name, &half, 1), 0);
    ck_assert_double_eq(m->q0[0], 0.5);
    ck_assert_int_eq(hs_model_repoint(m, name, &zero, 1), -1);
    hs_model_free(m);
}
END_TEST

/* The shipped 32-link chain in angles against the same chain in
 * Cartesian coordinates (32 link constraints), positions of every point
 * at every row to t = 5, per stepper. */
static const char *const methods[] = { "rk8pd", "dop853", "rkf45" };

START_TEST(angle_chain_matches_cartesian)
{
    static char cart[16384];
    size_t len = 0;
#define PUT(...) (len += (size_t)snprintf(cart + len, sizeof cart - len, __VA_ARGS__))
    PUT("parameters: {m: 1.0, l: 1.0, g: 9.81, th0: 1.0}\ncoordinates: [");
    for (int i = 1; i <= 32; i++)
        PUT("%sx%d, y%d", i > 1 ? ", " : "", i, i);
    PUT("]\nmass: [");
    for (int i = 1; i <= 64; i++)
        PUT("%sm", i > 1 ? ", " : "");
    PUT("]\npotential: m*g*(0");
    for (int i = 1; i <= 32; i++)
        PUT(" + y%d", i);
    PUT(")\nconstraints:\n  c1: x1^2 + y1^2 - l^2\n");
    for (int i = 2; i <= 32; i++)
        PUT("  c%d: (x%d - x%d)^2 + (y%d - y%d)^2 - l^2\n", i, i, i - 1, i, i - 1);
    PUT("initial: {q: {");
    for (int i = 1; i <= 32; i++)
        PUT("%sx%d: %d*l*sin(th0), y%d: -%d*l*cos(th0)", i > 1 ? ", " : "", i, i, i, i);
    PUT("}}\n");
#undef PUT
    ck_assert_uint_lt(len, sizeof cart - 1);
    pu_args a = pu_defaults(), b = pu_defaults();
    a.path = PU_MODEL("chain_angles.yaml");
    b.text = cart;
    a.method = b.method = methods[_i];
    a.columns = "t,x_*,y_*";
    a.t_end = b.t_end = 5;
    a.dt = b.dt = 0.05;
    a.rtol = a.atol = b.rtol = b.atol = _i == 2 ? 1e-12 : 1e-13;
    pu_result ra, rb;
    pu_run_ok(&a, &ra);
    pu_run_ok(&b, &rb);
    ck_assert_uint_eq(ra.tab.nrow, rb.tab.nrow);
    double worst = 0;
    char ca[16], cb[16];
    for (int i = 1; i <= 32; i++)
        for (int xy = 0; xy < 2; xy++) {
            snprintf(ca, sizeof ca, "%c_%d", xy ? 'y' : 'x', i);
            snprintf(cb, sizeof cb, "%c%d", xy ? 'y' : 'x', i);
            worst = fmax(worst, pu_maxdiff(&ra.tab, ca, &rb.tab, cb));
        }
    /* rkf45 (fifth order) at 1e-12: its own error is about 1e-9 here */
    ck_assert_msg(worst <= (_i == 2 ? 1e-8 : 1e-10), "%s: %g", methods[_i], worst);
    pu_result_free(&ra);
    pu_result_free(&rb);
}
END_TEST

/* The chain written out in full, each point the running sum of its links
 * (the textbook way), y negated: the sums telescope into a chain of
 * defines (lang/telescope.c), so the model takes the structured path,
 * agrees with the dense metric, and with the same model whose sums are
 * written out term by term (a '+ 0' after each sum keeps them whole). */
static const char *full_chain =
    "parameters: {m: 1.0, l: 0.7, g: 9.81}\n"
    "coordinates:\n  - th[i=1..32]\n"
    "embedding:\n  x[i=1..32]: sum(j=1..i, l*sin(th[j]))%s\n"
    "  y[i=1..32]: -sum(j=1..i, l*cos(th[j]))%s\n"
    "mass:\n  x[i=1..32]: m*(1 + i/10)\n  y[i=1..32]: m*(1 + i/10)\n"
    "potential: m*g*sum(i=1..32, (1 + i/10)*y[i])\n"
    "initial:\n  q:\n    th[i=1..32]: 0.3*i\n";

START_TEST(running_sums_telescope)
{
    char text[2048], plain[2048];
    snprintf(text, sizeof text, full_chain, "", "");
    snprintf(plain, sizeof plain, full_chain, " + 0", " + 0");
    compare_with_dense(text);
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("s.yaml", text, NULL, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    hs_overrides ov;
    hs_overrides_init(&ov);
    ov.dense = 1;
    hs_model *mp = hs_model_load_string("p.yaml", plain, &ov, &err);
    ck_assert_msg(mp != NULL, "%s", err.msg);
    ck_assert_ptr_nonnull(m->chain);
    ck_assert_ptr_null(mp->chain);
    hs_work *ws = hs_work_new(m), *wp = hs_work_new(mp);
    ck_assert(ws && wp);
    double q[32], v[32], as[32], ap[32];
    unsigned long seed = 11;
    for (int trial = 0; trial < 10; trial++) {
        for (size_t i = 0; i < 32; i++) {
            q[i] = 6 * urand(&seed) - 3;
            v[i] = 4 * urand(&seed) - 2;
        }
        ck_assert_int_eq(hs_dyn_accel(m, ws, 0, q, v, as, NULL), 0);
        ck_assert_int_eq(hs_dyn_accel(mp, wp, 0, q, v, ap, NULL), 0);
        double scale = 1;
        for (size_t i = 0; i < 32; i++)
            scale = fmax(scale, fabs(ap[i]));
        double tol = 1e-14 * metric_cond(mp, wp, q, v) * scale;
        for (size_t i = 0; i < 32; i++)
            ck_assert_msg(fabs(as[i] - ap[i]) <= tol, "trial %d, th_%zu'': %.17g vs %.17g",
                          trial, i + 1, as[i], ap[i]);
    }
    hs_work_free(ws);
    hs_work_free(wp);
    hs_model_free(m);
    hs_model_free(mp);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("structure");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, absolute_chain_matches_dense);
    tcase_add_test(tc, relative_chain_with_damper_matches_dense);
    tcase_add_test(tc, moving_chart_matches_dense);
    tcase_add_test(tc, closed_chain_matches_dense);
    tcase_add_test(tc, moving_mass_matches_dense);
    tcase_add_test(tc, tree_matches_dense);
    tcase_add_test(tc, running_sums_telescope);
    tcase_add_test(tc, structure_only_where_it_holds);
    tcase_add_test(tc, singular_coordinates_stop);
    tcase_add_test(tc, repoint_checks_the_start);
    tcase_add_loop_test(tc, angle_chain_matches_cartesian, 0, 3);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
