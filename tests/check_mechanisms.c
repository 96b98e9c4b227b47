/* Mechanisms as engineers model them (src/dynamics: the rank-revealing
 * solve; src/consistency): redundant constraints, singular positions,
 * massless coordinates.  Each against an independent reference: the same
 * motion in one angle (a Lagrangian model without constraints), the
 * redundancy removed by hand, or the double pendulum in angles. */
#include <check.h>

#include "check_main.h"
#include "physics_util.h"

#include <gsl/gsl_linalg.h>

#include "consistency/consistency.h"
#include "dynamics/dynamics.h"

static const char *const methods[] = { "rk8pd", "dop853", "rkf45" };

/* max over rows of |a(col ca) - f(b row)|, f given by a second table column */
static double maxdiff(const pu_table *a, const char *ca, const pu_table *b, const char *cb)
{
    ck_assert_uint_eq(a->nrow, b->nrow);
    return pu_maxdiff(a, ca, b, cb);
}

static double drift(const pu_table *t, const char *col)
{
    size_t c = pu_col(t, col);
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < t->nrow; i++) {
        lo = fmin(lo, PU_AT(t, i, c));
        hi = fmax(hi, PU_AT(t, i, c));
    }
    return hi - lo;
}

/* ---- 1. redundant: the parallelogram with a third crank ---- */

/* One crank angle: l^2 (m + mc) th'' = -(3m/2 + mc) g l cos th, written
 * as a Lagrangian model (no constraint at all). */
static const char *pendulum3 =
    "parameters: {m: 1.0, mc: 2.0, l: 1.0, a: 1.0, g: 9.81, th0: -1.0}\n"
    "coordinates: [th]\n"
    "kinetic: 0.5*l^2*(m + mc)*th'^2\n"
    "potential: (3*m/2 + mc)*g*l*sin(th)\n"
    "initial: {q: {th: th0}}\n"
    "simulate: {t_end: 10, dt: 0.01, rtol: 1e-12, atol: 1e-12}\n"
    "outputs: {xc: a + l*cos(th), yc: l*sin(th)}\n";

START_TEST(parallelogram_redundant_matches_one_angle)
{
    pu_args a = pu_defaults(), r = pu_defaults();
    a.path = PU_MODEL("parallelogram3.yaml");
    a.method = methods[_i];
    r.text = pendulum3;
    pu_result ra, rr;
    pu_run_ok(&a, &ra);
    pu_run_ok(&r, &rr);
    double tol = _i == 2 ? 1e-7 : 1e-8;   /* rkf45: fifth order at 1e-10 */
    ck_assert_double_le(maxdiff(&ra.tab, "th1", &rr.tab, "th"), tol);
    ck_assert_double_le(maxdiff(&ra.tab, "th3", &rr.tab, "th"), tol);
    ck_assert_double_le(maxdiff(&ra.tab, "xc", &rr.tab, "xc"), tol);
    ck_assert_double_le(maxdiff(&ra.tab, "yc", &rr.tab, "yc"), tol);
    /* rkf45's own drift at 1e-10: 1.26e-8, the same as the hand-reduced
     * model's (y2 removed) */
    ck_assert_double_le(drift(&ra.tab, "E"), _i == 2 ? 5e-8 : 1e-9);
    ck_assert_double_le(ra.sum.max_G, 1e-9);
    ck_assert_double_le(ra.sum.max_pres, 1e-9);          /* the power identity closes */
    ck_assert_uint_eq(ra.sum.rank0, 5);
    ck_assert_uint_eq(ra.sum.k, 6);
    ck_assert_int_eq(ra.sum.nrobust, 0);     /* the skipping Cholesky, not the SVD */
    ck_assert_int_eq(ra.sum.nsingular, 0);
    pu_result_free(&ra);
    pu_result_free(&rr);
}
END_TEST

/* The reactions G_q^T lambda are those of the model with the redundant
 * equation removed by hand (y2), and lambda is the least-norm multiplier:
 * orthogonal to the kernel of G_q^T. */
START_TEST(parallelogram_minimum_norm_multipliers)
{
    pu_args a = pu_defaults(), h = pu_defaults();
    a.path = PU_MODEL("parallelogram3.yaml");
    a.t_end = 2;
    a.columns = "t,th1,th2,th3,xc,yc,phi,lambda_x1,lambda_y1,lambda_x2,lambda_y2,lambda_x3,"
                "lambda_y3,R_th1,R_th2,R_th3,R_xc,R_yc,R_phi";
    pu_result ra, rh;
    pu_run_ok(&a, &ra);
    /* the same file without the y2 equation */
    FILE *f = fopen(PU_MODEL("parallelogram3.yaml"), "r");
    ck_assert_ptr_nonnull(f);
    char text[8192];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    char *y2 = strstr(text, "  y2: ");
    ck_assert_ptr_nonnull(y2);
    char *eol = strchr(y2, '\n');
    memmove(y2, eol + 1, strlen(eol + 1) + 1);
    h.text = text;
    h.t_end = 2;
    h.columns = "t,th1,R_th1,R_th2,R_th3,R_xc,R_yc,R_phi";
    pu_run_ok(&h, &rh);
    ck_assert_uint_eq(rh.sum.rank0, rh.sum.k);           /* no redundancy left */
    ck_assert_int_eq(rh.sum.nrobust, 0);                 /* the Cholesky path */
    const char *R[] = { "R_th1", "R_th2", "R_th3", "R_xc", "R_yc", "R_phi" };
    for (size_t i = 0; i < 6; i++)
        ck_assert_double_le(maxdiff(&ra.tab, R[i], &rh.tab, R[i]), 1e-8);
    ck_assert_double_le(maxdiff(&ra.tab, "th1", &rh.tab, "th1"), 1e-9);
    /* kernel of G_q^T at a few rows, from an SVD of G_q^T */
    hs_model *m = pu_load(&a);
    hs_work *w = hs_work_new(m);
    gsl_matrix *A = gsl_matrix_alloc(6, 6), *V = gsl_matrix_alloc(6, 6);
    gsl_vector *S = gsl_vector_alloc(6), *wk = gsl_vector_alloc(6);
    for (size_t row = 0; row < ra.tab.nrow; row += 50) {
        double q[6], lam[6];
        for (size_t c = 0; c < 6; c++) {
            q[c] = PU_AT(&ra.tab, row, 1 + c);
            lam[c] = PU_AT(&ra.tab, row, 7 + c);
        }
        ck_assert_int_eq(hs_dyn_constraints(m, w, PU_AT(&ra.tab, row, 0), q, NULL, NULL), 0);
        for (size_t i = 0; i < 6; i++)
            for (size_t c = 0; c < 6; c++)
                gsl_matrix_set(A, c, i, hs_work_Gq_dense(w)[i * 6 + c]);  /* A = G_q^T */
        gsl_linalg_SV_decomp(A, V, S, wk);
        ck_assert_double_le(gsl_vector_get(S, 5), 1e-12 * gsl_vector_get(S, 0));
        double dot = 0, norm = 0;
        for (size_t i = 0; i < 6; i++) {
            dot += gsl_matrix_get(V, i, 5) * lam[i];
            norm += lam[i] * lam[i];
        }
        ck_assert_double_le(fabs(dot), 1e-9 * sqrt(norm));
    }
    gsl_matrix_free(A);
    gsl_matrix_free(V);
    gsl_vector_free(S);
    gsl_vector_free(wk);
    hs_work_free(w);
    hs_model_free(m);
    pu_result_free(&ra);
    pu_result_free(&rh);
}
END_TEST

/* consistency.dependent: reject restores the refusal (exit 2 at the
 * first dependent constraint); duplicated constraints that disagree are
 * inconsistent (exit 3), not redundant. */
START_TEST(dependent_reject_and_inconsistent)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("parallelogram3.yaml");
    hs_model *m = pu_load(&a);
    ((hs_model *)m)->set.strict_rank = 1;
    pu_result r;
    pu_run_model(m, NULL, &r);
    ck_assert_int_eq(r.rc, HS_EXIT_MODEL);
    ck_assert_ptr_nonnull(strstr(r.err.msg, "dependent"));
    ck_assert_int_gt(r.err.line, 0);
    pu_result_free(&r);
    hs_model_free(m);

    pu_args b = pu_defaults();
    b.text = "coordinates: [x, y]\nmass: [1, 1]\n"
             "constraints: {a: x^2 + y^2 - 1, b: x^2 + y^2 - 4}\n"
             "initial: {q: {x: 0.6, y: -0.8}}\nsimulate: {t_end: 1}\n";
    pu_run(&b, &r);
    ck_assert_int_eq(r.rc, HS_EXIT_INCONSISTENT);
    ck_assert_ptr_nonnull(strstr(r.err.msg, "could not satisfy the constraints"));
    pu_result_free(&r);
}
END_TEST

/* Released at th0 = 0.5 the cranks swing through the horizontal, where
 * they lie on the coupler's line: a singular position on top of the
 * redundancy (rank 5 of 6 drops further), twice a swing.  Before the
 * multistep methods were left unrestarted there, msadams and msbdf
 * stopped at the first passage (step-size underflow, exit 4); measured at
 * rtol 1e-10: rk8pd 3.4e-12, dop853 6.4e-12, bsimp 1.5e-12, msadams
 * 1.0e-9, msbdf 2.9e-9, rk4imp 8.3e-10, rkf45 6.5e-9. */
static const struct { const char *method; double tol; } parallelogram_runs[] = {
    { "rk8pd", 1e-10 }, { "dop853", 1e-10 }, { "bsimp", 1e-10 }, { "msadams", 1e-8 },
    { "msbdf", 1e-8 }, { "rk4imp", 1e-8 }, { "rkf45", 3e-8 },
};

START_TEST(parallelogram_through_singular_positions)
{
    pu_args a = pu_defaults(), r = pu_defaults();
    a.path = PU_MODEL("parallelogram3.yaml");
    a.method = parallelogram_runs[_i].method;
    pu_set(&a, "th0", 0.5);
    r.text = pendulum3;
    pu_set(&r, "th0", 0.5);
    r.rtol = r.atol = 1e-13;
    pu_result ra, rr;
    pu_run_ok(&a, &ra);
    pu_run_ok(&r, &rr);
    ck_assert_int_gt(ra.sum.nsingular, 0);
    double tol = parallelogram_runs[_i].tol;
    ck_assert_double_le(maxdiff(&ra.tab, "th1", &rr.tab, "th"), tol);
    ck_assert_double_le(maxdiff(&ra.tab, "th3", &rr.tab, "th"), tol);
    ck_assert_double_le(ra.sum.max_G, 1e-9);
    pu_result_free(&ra);
    pu_result_free(&rr);
}
END_TEST

/* ---- 2. singular positions: the N-four-bar ---- */

/* Through singular positions at the run's tolerance (rtol 1e-10), for
 * each adaptive method the issue names, against the motion in one angle
 * at rtol 1e-12.  The bound is the method's own: what it reaches on the
 * one-angle model at the same rtol (rkck 7.8e-8, rkf45 3.7e-7, rk4imp
 * 5.1e-9, msbdf 6.3e-9: fifth-order-and-below global errors over 10 s)
 * with a margin of 3, and 10 rtol for the eighth-order methods.  Measured
 * after the passages were fixed (HS_SV_DYN_RTOL, no forced restarts of the
 * multistep methods): rk8pd 7.0e-10 (4.8e-6 before), dop853 1.2e-9
 * (3.0e-8), msadams 2.5e-9 (4.9e-5), bsimp 3.5e-10 (1.1e-9), rk4imp
 * 1.7e-8 (1.9e-8), rkf45 7.6e-7 (7.4e-7). */
static const struct { const char *method; double tol; } singular_runs[] = {
    { "rk8pd", 3e-9 }, { "dop853", 3e-9 }, { "msadams", 1e-8 }, { "bsimp", 3e-9 },
    { "rk4imp", 5e-8 }, { "rkf45", 1.2e-6 },
};

START_TEST(nfourbar_passes_singular_positions)
{
    pu_args a = pu_defaults(), r = pu_defaults();
    a.path = PU_MODEL("nfourbar_singular.yaml");
    a.method = singular_runs[_i].method;
    r.path = PU_MODEL("nfourbar_singular_angle.yaml");
    pu_result ra, rr;
    pu_run_ok(&a, &ra);
    pu_run_ok(&r, &rr);
    ck_assert_double_eq_tol(ra.sum.t_reached, 10, 1e-12);
    ck_assert_int_gt(ra.sum.nsingular, 0);               /* it met them */
    ck_assert_double_lt(ra.sum.worst_rcond, HS_PIVOT_ROBUST);
    double tol = singular_runs[_i].tol;
    ck_assert_double_le(maxdiff(&ra.tab, "x0", &rr.tab, "x0"), tol);
    ck_assert_double_le(maxdiff(&ra.tab, "y0", &rr.tab, "y0"), tol);
    ck_assert_double_le(drift(&ra.tab, "E"), fmax(tol, 1e-8) * 100);
    ck_assert_double_le(ra.sum.max_G, 1e-9);
    ck_assert_double_le(ra.sum.max_Gdot, 1e-9);
    pu_result_free(&ra);
    pu_result_free(&rr);
}
END_TEST

/* The slider-crank with the crank as long as the rod (r = L): the slider
 * S = (2 r cos phi, 0) meets the crank's pivot at phi = +-pi/2, where the
 * rows of G_q for crank, rod and rail lose a rank (the branch S = 0
 * crosses there).  Nine passages in 5 s; the reference is the motion in
 * phi, T = (mp r^2 + 4 ms r^2 sin^2 phi) phi'^2 / 2. */
static const char *slider_rl =
    "parameters: {mp: 1.0, ms: 0.5, r: 1.0, L: 1.0, g: 9.81, w0: 8.0}\n"
    "coordinates: [xp, yp, xs, ys]\n"
    "mass: [mp, mp, ms, ms]\n"
    "potential: g*mp*yp\n"
    "constraints: {crank: xp^2 + yp^2 - r^2, rod: (xs - xp)^2 + (ys - yp)^2 - L^2, rail: ys}\n"
    "initial: {q: {xp: r, yp: 0, xs: 2*r, ys: 0}, v: {xp: 0, yp: w0*r, xs: 0}}\n"
    "simulate: {t_end: 5, dt: 0.01, rtol: 1e-10, atol: 1e-10}\n";
static const char *slider_rl_angle =
    "parameters: {mp: 1.0, ms: 0.5, r: 1.0, g: 9.81, w0: 8.0}\n"
    "coordinates: [phi]\n"
    "kinetic: 0.5*mp*r^2*phi'^2 + 2*ms*r^2*sin(phi)^2*phi'^2\n"
    "potential: g*mp*r*sin(phi)\n"
    "initial: {q: {phi: 0}, v: {phi: w0}}\n"
    "simulate: {t_end: 5, dt: 0.01, rtol: 1e-13, atol: 1e-13}\n"
    "outputs: {xp: r*cos(phi), yp: r*sin(phi), xs: 2*r*cos(phi)}\n";

/* Measured at rtol 1e-10 (before: rk8pd 3.3e-11, msadams 2.6e-6, msbdf
 * 4.1e-4); the one-angle model at the same rtol: rk8pd 1.1e-11, msadams
 * 2.8e-9, msbdf 6.5e-10, rkf45 1.6e-7 */
static const struct { const char *method; double tol; } slider_runs[] = {
    { "rk8pd", 1e-9 }, { "dop853", 1e-9 }, { "msadams", 1e-7 }, { "msbdf", 1e-8 },
    { "bsimp", 1e-9 }, { "rk4imp", 1e-8 }, { "rkf45", 2e-7 },
};

START_TEST(slider_crank_equal_rod_nine_passages)
{
    pu_args a = pu_defaults(), r = pu_defaults();
    a.text = slider_rl;
    a.method = slider_runs[_i].method;
    r.text = slider_rl_angle;
    pu_result ra, rr;
    pu_run_ok(&a, &ra);
    pu_run_ok(&r, &rr);
    ck_assert_double_eq_tol(ra.sum.t_reached, 5, 1e-12);
    /* the passages: xp crosses 0 nine times */
    size_t c = pu_col(&ra.tab, "xp"), npass = 0;
    for (size_t i = 1; i < ra.tab.nrow; i++)
        npass += (PU_AT(&ra.tab, i - 1, c) > 0) != (PU_AT(&ra.tab, i, c) > 0);
    ck_assert_uint_eq(npass, 9);
    ck_assert_int_gt(ra.sum.nsingular, 0);
    double tol = slider_runs[_i].tol;
    const char *col[] = { "xp", "yp", "xs" };
    for (size_t i = 0; i < 3; i++)
        ck_assert_double_le(maxdiff(&ra.tab, col[i], &rr.tab, col[i]), tol);
    ck_assert_double_le(ra.sum.max_G, 1e-9);
    pu_result_free(&ra);
    pu_result_free(&rr);
}
END_TEST

/* With dependent: reject the first singular position stops the run
 * (exit 4) with the diagnosis of a rank loss. */
START_TEST(nfourbar_strict_stops)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("nfourbar_singular.yaml");
    a.method = "rk8pd";                 /* its evaluations land near the first one */
    hs_model *m = pu_load(&a);
    ((hs_model *)m)->set.strict_rank = 1;
    pu_result r;
    pu_run_model(m, NULL, &r);
    ck_assert_int_eq(r.rc, HS_EXIT_NUMERIC);
    ck_assert_msg(strstr(r.err.msg, "singular") || strstr(r.err.msg, "ill-conditioned"), "%s",
                  r.err.msg);
    ck_assert_double_lt(r.sum.t_reached, 1);
    pu_result_free(&r);
    hs_model_free(m);
}
END_TEST

/* ---- 3. massless coordinates: natural coordinates ---- */

START_TEST(natural_double_pendulum_matches_angles)
{
    pu_args a = pu_defaults(), r = pu_defaults();
    a.path = PU_MODEL("double_pendulum_natural.yaml");
    a.method = methods[_i];
    a.t_end = 3;
    r.path = PU_MODEL("double_pendulum_angles.yaml");
    r.t_end = 3;
    r.rtol = r.atol = 1e-12;
    pu_result ra, rr;
    pu_run_ok(&a, &ra);
    pu_run_ok(&r, &rr);
    ck_assert_int_eq(ra.sum.augmented, 1);
    double tol = _i == 2 ? 1e-6 : 1e-8;
    const char *c[] = { "x1", "y1", "x2", "y2" };
    for (size_t i = 0; i < 4; i++)
        ck_assert_double_le(maxdiff(&ra.tab, c[i], &rr.tab, c[i]), tol);
    ck_assert_double_le(maxdiff(&ra.tab, "theta2", &rr.tab, "theta2"), tol);
    /* rkf45 at 1e-10 drifts 1.8e-8 on the Cartesian double pendulum too */
    ck_assert_double_le(drift(&ra.tab, "E"), _i == 2 ? 5e-8 : 1e-9);
    ck_assert_double_le(ra.sum.max_G, 1e-9);
    pu_result_free(&ra);
    pu_result_free(&rr);
}
END_TEST

/* Started off the constraints: the projection works in the norm of
 * M + alpha G_q^T G_q and lands on them; the motion then runs. */
START_TEST(natural_projection_with_massless)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("double_pendulum_natural.yaml");
    a.t_end = 0.5;
    pu_set(&a, "th2", 1.5);
    hs_model *m = pu_load(&a);
    double q[6], v[6];
    memcpy(q, m->q0, sizeof q);
    memcpy(v, m->v0, sizeof v);
    q[2] *= 1.01;                    /* |u| != 1, P2 off */
    q[4] += 0.02;
    v[3] = 0.3;
    hs_work *w = hs_work_new(m);
    hs_error err;
    hs_error_init(&err);
    ck_assert_int_eq(hs_cons_start(m, w, q, v, NULL, &err), 0);
    double G[4], Gt[4];
    ck_assert_int_eq(hs_dyn_constraints(m, w, m->t0, q, G, Gt), 0);
    for (size_t i = 0; i < 4; i++) {
        ck_assert_double_le(fabs(G[i]), 1e-10);
        double gd = Gt[i];
        for (size_t c = 0; c < 6; c++)
            gd += hs_work_Gq_dense(w)[i * 6 + c] * v[c];
        ck_assert_double_le(fabs(gd), 1e-10);
    }
    hs_work_free(w);
    hs_model_free(m);
}
END_TEST

/* A massless coordinate no constraint involves: a positioned model error. */
START_TEST(massless_unconstrained_is_an_error)
{
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("t.yaml", "coordinates: [x, y, z]\nmass: [1, 1, 0]\n"
                                       "constraints: {rod: x^2 + y^2 - 1}\n"
                                       "initial: {q: {x: 1, y: 0, z: 0}}\n", NULL, &err);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(err.code, HS_EXIT_MODEL);
    ck_assert_int_eq(err.line, 2);
    ck_assert_int_eq(err.column, 7);
    ck_assert_msg(strstr(err.msg, "(z)") && strstr(err.msg, "neither mass nor a constraint"),
                  "%s", err.msg);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("mechanisms");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, parallelogram_redundant_matches_one_angle, 0, 3);
    tcase_add_test(tc, parallelogram_minimum_norm_multipliers);
    tcase_add_test(tc, dependent_reject_and_inconsistent);
    tcase_add_loop_test(tc, parallelogram_through_singular_positions, 0,
                        (int)(sizeof parallelogram_runs / sizeof *parallelogram_runs));
    tcase_add_loop_test(tc, nfourbar_passes_singular_positions, 0,
                        (int)(sizeof singular_runs / sizeof *singular_runs));
    tcase_add_loop_test(tc, slider_crank_equal_rod_nine_passages, 0,
                        (int)(sizeof slider_runs / sizeof *slider_runs));
    tcase_add_test(tc, nfourbar_strict_stops);
    tcase_add_loop_test(tc, natural_double_pendulum_matches_angles, 0, 3);
    tcase_add_test(tc, natural_projection_with_massless);
    tcase_add_test(tc, massless_unconstrained_is_an_error);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
