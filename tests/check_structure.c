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

/* A chain of 10 links in absolute angles, points from the one before. */
static const char *abs_chain =
    "parameters: {m: 1.0, l: 0.7, g: 9.81}\n"
    "coordinates:\n  - th[i=1..10]\n"
    "define:\n  X[0]: 0\n  Y[0]: 0\n  X[i=1..10]: X[i-1] + l*sin(th[i])\n"
    "  Y[i=1..10]: Y[i-1] - l*cos(th[i])\n"
    "embedding:\n  x[i=1..10]: X[i]\n  y[i=1..10]: Y[i]\n"
    "mass:\n  x[i=1..10]: m*(1 + i/10)\n  y[i=1..10]: m*(1 + i/10)\n"
    "potential: m*g*sum(i=1..10, (1 + i/10)*y[i])\n"
    "initial:\n  q:\n    th[i=1..10]: 0.3*i\n";

/* Relative angles: the defines are nonlinear in one another (sin of a
 * define), and a damper acts on the tip through the ambient velocities. */
static const char *rel_chain =
    "parameters: {m: 1.0, l: 0.5, g: 9.81, c: 0.3}\n"
    "coordinates:\n  - a[i=1..8]\n"
    "define:\n  A[0]: 0\n  X[0]: 0\n  Y[0]: 0\n  A[i=1..8]: A[i-1] + a[i]\n"
    "  X[i=1..8]: X[i-1] + l*sin(A[i])\n  Y[i=1..8]: Y[i-1] - l*cos(A[i])\n"
    "embedding:\n  x[i=1..8]: X[i]\n  y[i=1..8]: Y[i]\n"
    "mass:\n  x[i=1..8]: m\n  y[i=1..8]: m\n"
    "potential: m*g*sum(i=1..8, y[i])\n"
    "forces: {x_8: -c*x_8', y_8: -c*y_8'}\n"
    "initial:\n  q:\n    a[i=1..8]: 0.2\n";

/* A tree: a trunk of three links, two branches of three from its end; an
 * ambient coordinate that is not a define (the middle of a link). */
static const char *tree =
    "parameters: {m: 1.0, l: 1.0, g: 9.81}\n"
    "coordinates: [t1, t2, t3, u1, u2, u3, w1, w2, w3]\n"
    "define: {P1: l*sin(t1), Q1: -l*cos(t1), P2: P1 + l*sin(t2), Q2: Q1 - l*cos(t2),\n"
    "  P3: P2 + l*sin(t3), Q3: Q2 - l*cos(t3),\n"
    "  U1: P3 + l*sin(u1), V1: Q3 - l*cos(u1), U2: U1 + l*sin(u2), V2: V1 - l*cos(u2),\n"
    "  U3: U2 + l*sin(u3), V3: V2 - l*cos(u3),\n"
    "  W1: P3 + l*sin(w1), Z1: Q3 - l*cos(w1), W2: W1 + l*sin(w2), Z2: Z1 - l*cos(w2),\n"
    "  W3: W2 + l*sin(w3), Z3: Z2 - l*cos(w3)}\n"
    "embedding: {x1: P1, y1: Q1, x2: P2, y2: Q2, x3: P3, y3: Q3, xu1: U1, yu1: V1,\n"
    "  xu2: U2, yu2: V2, xu3: U3, yu3: V3, xw1: W1, yw1: Z1, xw2: W2, yw2: Z2, xw3: W3,\n"
    "  yw3: Z3, xm: (P2 + P3)/2, ym: (Q2 + Q3)/2}\n"
    "mass: [m, m, m, m, m, m, m, m, m, m, m, m, m, m, m, m, m, m, 2*m, 2*m]\n"
    "potential: m*g*(y1 + y2 + y3 + yu1 + yu2 + yu3 + yw1 + yw2 + yw3 + 2*ym)\n"
    "initial: {q: {t1: 0.1, t2: 0.2, t3: 0.3, u1: 0.8, u2: 1.0, u3: 1.2, w1: -0.5,\n"
    "  w2: -0.7, w3: -0.9}}\n";

static double urand(unsigned long *s)
{
    *s = *s * 6364136223846793005UL + 1442695040888963407UL;
    return (double)(*s >> 11) / 9007199254740992.0;
}

/* The 2-norm condition number of the metric at (q, v). */
static double metric_cond(const hs_model *m, hs_work *w, const double *q, const double *v)
{
    size_t n = m->n;
    double M[256];
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
    double q[16], v[16], as[16], ad[16], Es, Ed;
    ck_assert_uint_le(n, 16);
    unsigned long seed = 7;
    for (int trial = 0; trial < 20; trial++) {
        for (size_t i = 0; i < n; i++) {
            q[i] = 6 * urand(&seed) - 3;
            v[i] = 4 * urand(&seed) - 2;
        }
        ck_assert_int_eq(hs_dyn_accel(m, ws, 0.3, q, v, as, NULL), 0);
        ck_assert_int_eq(hs_dyn_energy(m, ws, 0.3, q, v, &Es), 0);
        ck_assert_int_eq(hs_dyn_accel(md, wd, 0.3, q, v, ad, NULL), 0);
        ck_assert_int_eq(hs_dyn_energy(md, wd, 0.3, q, v, &Ed), 0);
        double scale = 1;
        for (size_t i = 0; i < n; i++)
            scale = fmax(scale, fabs(ad[i]));
        double tol = 1e-14 * metric_cond(md, wd, q, v) * scale;
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(fabs(as[i] - ad[i]) <= tol, "trial %d, %s'': %.17g vs %.17g (tol %g)",
                          trial, m->qname[i], as[i], ad[i], tol);
        ck_assert_msg(fabs(Es - Ed) <= 1e-12 * fmax(1, fabs(Ed)), "E %.17g vs %.17g", Es, Ed);
        ck_assert_double_eq_tol(ws->dyn[m->off_Pd], wd->dyn[md->off_Pd],
                                1e-12 * fmax(1, fabs(wd->dyn[md->off_Pd])));
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

START_TEST(tree_matches_dense)
{
    compare_with_dense(tree);
}
END_TEST

/* Models the structure does not serve keep the dense path. */
START_TEST(structure_only_where_it_holds)
{
    static const char *const dense[] = {
        /* no define: the points written out */
        "coordinates: [a, b]\nembedding: {x1: sin(a), y1: -cos(a), x2: sin(a) + sin(b),\n"
        "  y2: -cos(a) - cos(b)}\nmass: [1, 1, 1, 1]\ninitial: {q: {a: 0.1, b: 0.2}}\n",
        /* a moving chart */
        "coordinates: [a, b]\ndefine: {X: sin(a) + t, Y: -cos(a)}\n"
        "embedding: {x1: X, y1: Y, x2: X + sin(b), y2: Y - cos(b)}\nmass: [1, 1, 1, 1]\n"
        "initial: {q: {a: 0.1, b: 0.2}}\n",
        /* a constraint */
        "coordinates: [a, b]\ndefine: {X: sin(a), Y: -cos(a)}\n"
        "embedding: {x1: X, y1: Y, x2: X + sin(b), y2: Y - cos(b)}\nmass: [1, 1, 1, 1]\n"
        "constraints: {c: a - 2*b + 0.3}\ninitial: {q: {a: 0.1, b: 0.2}}\n",
        /* a mass that couples the ambient coordinates */
        "coordinates: [a, b]\ndefine: {X: sin(a), Y: -cos(a)}\n"
        "embedding: {x1: X, y1: Y, x2: X + sin(b), y2: Y - cos(b)}\n"
        "mass: [[2, 1, 0, 0], [1, 2, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]\n"
        "initial: {q: {a: 0.1, b: 0.2}}\n",
    };
    for (size_t i = 0; i < sizeof dense / sizeof *dense; i++) {
        hs_error err;
        hs_error_init(&err);
        hs_model *m = hs_model_load_string("d.yaml", dense[i], NULL, &err);
        ck_assert_msg(m != NULL, "model %zu: %s", i, err.msg);
        ck_assert_msg(m->chain == NULL, "model %zu took the structured path", i);
        hs_model_free(m);
    }
}
END_TEST

/* Polar coordinates through defines: the metric diag(m, m r^2) is
 * singular at r = 0, and the sparse solve says so as the dense one does. */
START_TEST(singular_coordinates_stop)
{
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("p.yaml",
        "coordinates: [r, th]\ndefine: {X: r*cos(th), Y: r*sin(th)}\n"
        "embedding: {x: X, y: Y, x2: X + 1, y2: Y}\nmass: [1, 1, 1, 1]\n"
        "initial: {q: {r: 1, th: 0.2}}\n", NULL, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    ck_assert_ptr_nonnull(m->chain);
    hs_work *w = hs_work_new(m);
    double q[2] = {1, 0.2}, v[2] = {0.1, 0.3}, a[2];
    ck_assert_int_eq(hs_dyn_accel(m, w, 0, q, v, a, NULL), 0);
    ck_assert_double_eq_tol(a[0], 1 * 0.3 * 0.3, 1e-14);        /* r'' = r th'^2 */
    ck_assert_double_eq_tol(a[1], -2 * 0.1 * 0.3 / 1, 1e-14);   /* th'' = -2 r' th'/r */
    q[0] = 0;
    ck_assert_int_eq(hs_dyn_accel(m, w, 1.5, q, v, a, NULL), HS_EXIT_NUMERIC);
    ck_assert_msg(strstr(w->err.msg, "not positive definite at t=1.5"), "%s", w->err.msg);
    hs_work_free(w);
    hs_model_free(m);
}
END_TEST

/* The shipped 16-link chain in angles against the same chain in
 * Cartesian coordinates (16 link constraints), positions of every point
 * at every row to t = 5, per stepper. */
static const char *const methods[] = { "rk8pd", "dop853", "rkf45" };

START_TEST(angle_chain_matches_cartesian)
{
    static char cart[4096];
    size_t len = 0;
#define PUT(...) (len += (size_t)snprintf(cart + len, sizeof cart - len, __VA_ARGS__))
    PUT("parameters: {m: 1.0, l: 1.0, g: 9.81, th0: 1.0}\ncoordinates: [");
    for (int i = 1; i <= 16; i++)
        PUT("%sx%d, y%d", i > 1 ? ", " : "", i, i);
    PUT("]\nmass: [");
    for (int i = 1; i <= 32; i++)
        PUT("%sm", i > 1 ? ", " : "");
    PUT("]\npotential: m*g*(0");
    for (int i = 1; i <= 16; i++)
        PUT(" + y%d", i);
    PUT(")\nconstraints:\n  c1: x1^2 + y1^2 - l^2\n");
    for (int i = 2; i <= 16; i++)
        PUT("  c%d: (x%d - x%d)^2 + (y%d - y%d)^2 - l^2\n", i, i, i - 1, i, i - 1);
    PUT("initial: {q: {");
    for (int i = 1; i <= 16; i++)
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
    char ca[8], cb[8];
    for (int i = 1; i <= 16; i++)
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

static Suite *suite(void)
{
    Suite *s = suite_create("structure");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, absolute_chain_matches_dense);
    tcase_add_test(tc, relative_chain_with_damper_matches_dense);
    tcase_add_test(tc, tree_matches_dense);
    tcase_add_test(tc, structure_only_where_it_holds);
    tcase_add_test(tc, singular_coordinates_stop);
    tcase_add_loop_test(tc, angle_chain_matches_cartesian, 0, 3);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
