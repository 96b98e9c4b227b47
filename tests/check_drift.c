/* Drift control and invariant bookkeeping (src/integrate, stabilization):
 * residual growth without stabilization, projection and Baumgarte keeping
 * the constraints, the work integrals W_R and W_nc closing the energy
 * balance, and multistep methods with projection. */
#include "check_main.h"
#include "physics_util.h"

#include <gsl/gsl_errno.h>

/* Period of the pendulum for amplitude theta0: 4 sqrt(l/g) K(sin(theta0/2)),
 * K(k) = pi / (2 AGM(1, sqrt(1 - k^2))). */
static double exact_period(double l, double g, double theta0)
{
    double k = sin(theta0 / 2), a = 1, b = sqrt(1 - k * k);
    for (int i = 0; i < 40; i++) {
        double an = (a + b) / 2;
        b = sqrt(a * b);
        a = an;
    }
    return 4 * sqrt(l / g) * PU_PI / (2 * a);
}

/* Mean period from upward zero crossings of x, linearly interpolated
 * between rows (dt small enough that the interpolation error is below the
 * tolerance asked: the crossing is where x is straightest). */
static double measured_period(const pu_table *t)
{
    size_t ct = pu_col(t, "t"), cx = pu_col(t, "x");
    double first = NAN, last = NAN;
    int n = 0;
    for (size_t i = 1; i < t->nrow; i++) {
        double x0 = PU_AT(t, i - 1, cx), x1 = PU_AT(t, i, cx);
        if (x0 < 0 && x1 >= 0) {
            double t0 = PU_AT(t, i - 1, ct), t1 = PU_AT(t, i, ct);
            double tc = t0 + (t1 - t0) * (-x0) / (x1 - x0);
            if (n == 0)
                first = tc;
            last = tc;
            n++;
        }
    }
    ck_assert_int_ge(n, 2);
    return (last - first) / (n - 1);
}

static void run_pendulum(int stab, double t_end, double dt, pu_result *r)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("pendulum.yaml");
    a.stabilize = stab;
    a.t_end = t_end;
    a.dt = dt;
    pu_run_ok(&a, r);
    ck_assert(r->tab.well_formed && r->tab.nonfinite == 0);
}

/* Over 1000 s: without stabilization the position residual grows (late
 * rows larger than early ones, and far above round-off); with projection
 * max |G| and |Gdot| stay below 1e-12 and the period still matches the
 * closed form; with Baumgarte they stay bounded. */
START_TEST(pendulum_long_run)
{
    pu_result none, proj, baum;
    run_pendulum(HS_STAB_NONE, 1000, 0.05, &none);
    run_pendulum(HS_STAB_PROJECTION, 1000, 0.05, &proj);
    run_pendulum(HS_STAB_BAUMGARTE, 1000, 0.05, &baum);

    size_t cg = pu_col(&none.tab, "G_rod");
    double early = 0, late = 0;
    for (size_t i = 0; i < none.tab.nrow; i++) {
        double g = fabs(PU_AT(&none.tab, i, cg));
        if (i < none.tab.nrow / 10)
            early = fmax(early, g);
        if (i > 9 * none.tab.nrow / 10)
            late = fmax(late, g);
    }
    ck_assert_msg(late > 1e-9 && late > 10 * early, "no visible drift: early %g late %g",
                  early, late);

    ck_assert_msg(pu_maxabs(&proj.tab, "G_rod") < 1e-12, "%g", pu_maxabs(&proj.tab, "G_rod"));
    ck_assert_msg(pu_maxabs(&proj.tab, "Gdot_rod") < 1e-12, "%g",
                  pu_maxabs(&proj.tab, "Gdot_rod"));
    double T = exact_period(1.0, 9.81, 0.5), Tm = measured_period(&proj.tab);
    ck_assert_msg(fabs(Tm - T) / T < 1e-6, "period %.12g vs %.12g", Tm, T);

    ck_assert_msg(pu_maxabs(&baum.tab, "G_rod") < 1e-9, "%g", pu_maxabs(&baum.tab, "G_rod"));
    ck_assert_msg(pu_maxabs(&baum.tab, "Gdot_rod") < 1e-8, "%g",
                  pu_maxabs(&baum.tab, "Gdot_rod"));
    pu_result_free(&none);
    pu_result_free(&proj);
    pu_result_free(&baum);
}
END_TEST

/* Large numbers: l = 1000 puts G = x^2 + y^2 - l^2 at 1e6, where round-off
 * alone is about 1e-10; the projection must accept round-off (relative to
 * the terms of G), not fail on an absolute 1e-12.  The period still
 * matches the closed form. */
START_TEST(large_scale_pendulum)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("pendulum.yaml");
    pu_set(&a, "l", 1000);
    a.t_end = 400;
    a.dt = 0.02;
    a.rtol = a.atol = 1e-11;
    pu_result r;
    pu_run_ok(&a, &r);
    ck_assert_msg(pu_maxabs(&r.tab, "G_rod") < 1e-13 * 1e6, "G %g", pu_maxabs(&r.tab, "G_rod"));
    double T = exact_period(1000, 9.81, 0.5), Tm = measured_period(&r.tab);
    ck_assert_msg(fabs(Tm - T) / T < 1e-6, "period %.12g vs %.12g", Tm, T);
    pu_result_free(&r);
}
END_TEST

/* Rotating hoop: the reactions do work (W_R far from 0) and the energy
 * balance closes to solver tolerance, for every stabilization. */
static const int stabs[] = { HS_STAB_PROJECTION, HS_STAB_BAUMGARTE, HS_STAB_NONE };

START_TEST(hoop_work_of_reactions)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("rotating_hoop.yaml");
    a.stabilize = stabs[_i];
    a.columns = "t,E,W_R,W_nc,W_t,energy_balance,P_R";
    pu_result r;
    pu_run_ok(&a, &r);
    ck_assert_msg(pu_maxabs(&r.tab, "W_R") > 1.0, "W_R %g", pu_maxabs(&r.tab, "W_R"));
    ck_assert_msg(pu_maxabs(&r.tab, "W_nc") == 0, "W_nc %g", pu_maxabs(&r.tab, "W_nc"));
    ck_assert_msg(pu_maxabs(&r.tab, "W_t") == 0, "W_t %g", pu_maxabs(&r.tab, "W_t"));
    ck_assert_msg(pu_maxabs(&r.tab, "energy_balance") < 1e-8, "energy balance %g",
                  pu_maxabs(&r.tab, "energy_balance"));
    pu_result_free(&r);
}
END_TEST

/* The same hoop as a time-dependent embedding: no constraint, so no W_R;
 * E is the energy in the fixed (ambient) frame, and the moving chart's work
 * shows in W_t = E - E0.  The Jacobi integral
 * H = E - m omega^2 rho^2 (rho = R sin theta) is conserved, so
 * W_t = m omega^2 R^2 (sin^2 theta - sin^2 theta0), and the balance
 * closes. */
START_TEST(moving_chart_work)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("hoop_angle.yaml");
    a.columns = "t,theta,E,W_R,W_t,energy_balance";
    pu_result r;
    pu_run_ok(&a, &r);
    ck_assert_msg(pu_maxabs(&r.tab, "W_t") > 1.0, "W_t %g", pu_maxabs(&r.tab, "W_t"));
    ck_assert_msg(pu_maxabs(&r.tab, "W_R") == 0, "W_R %g", pu_maxabs(&r.tab, "W_R"));
    ck_assert_msg(pu_maxabs(&r.tab, "energy_balance") < 1e-8, "energy balance %g",
                  pu_maxabs(&r.tab, "energy_balance"));
    /* closed form: W_t = m omega^2 R^2 (sin^2 theta - sin^2 theta0) / 2 */
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load(a.path, NULL, &err);
    ck_assert_ptr_nonnull(m);
    double mm = NAN, om = NAN, R = NAN;
    for (size_t i = 0; i < m->npar; i++) {
        if (strcmp(m->pname[i], "m") == 0) mm = m->pval[i];
        if (strcmp(m->pname[i], "omega") == 0) om = m->pval[i];
        if (strcmp(m->pname[i], "R") == 0) R = m->pval[i];
    }
    hs_model_free(m);
    ck_assert_msg(isfinite(mm) && isfinite(om) && isfinite(R), "parameters m, omega, R");
    size_t cth = pu_col(&r.tab, "theta"), cw = pu_col(&r.tab, "W_t");
    double s0 = sin(PU_AT(&r.tab, 0, cth));
    for (size_t i = 0; i < r.tab.nrow; i++) {
        double s1 = sin(PU_AT(&r.tab, i, cth));
        ck_assert_double_eq_tol(PU_AT(&r.tab, i, cw), mm * om * om * R * R * (s1 * s1 - s0 * s0),
                                1e-8);
    }
    pu_result_free(&r);
}
END_TEST

/* A damped pendulum: W_nc accounts for the energy lost, W_R = 0. */
START_TEST(damped_pendulum_work)
{
    pu_args a = pu_defaults();
    a.text =
        "parameters: {m: 1.0, l: 1.0, g: 9.81, c: 0.3}\n"
        "coordinates: [x, y]\n"
        "mass: [m, m]\n"
        "potential: m*g*y\n"
        "forces: {x: -c*x', y: -c*y'}\n"
        "constraints: {rod: x^2 + y^2 - l^2}\n"
        "initial: {q: {x: 0.8, y: -0.6}}\n"
        "simulate: {t_end: 20, dt: 0.01, rtol: 1e-10, atol: 1e-10}\n";
    a.columns = "t,E,W_R,W_nc,energy_balance";
    pu_result r;
    pu_run_ok(&a, &r);
    size_t cE = pu_col(&r.tab, "E"), cW = pu_col(&r.tab, "W_nc");
    double lost = PU_AT(&r.tab, 0, cE) - PU_AT(&r.tab, r.tab.nrow - 1, cE);
    ck_assert_msg(lost > 1.0, "the damping took only %g", lost);
    ck_assert_double_eq_tol(PU_AT(&r.tab, r.tab.nrow - 1, cW), -lost, 1e-8);
    ck_assert_msg(pu_maxabs(&r.tab, "W_R") < 1e-8, "W_R %g", pu_maxabs(&r.tab, "W_R"));
    ck_assert_msg(pu_maxabs(&r.tab, "energy_balance") < 1e-8, "%g",
                  pu_maxabs(&r.tab, "energy_balance"));
    pu_result_free(&r);
}
END_TEST

/* P_nc, the power of the non-conservative forces: -c v^2 of the damping
 * (the forces as written) and the rate of W_nc (fourth-order central
 * differences of the integrated W_nc, dt = 1e-3: an error of dt^4/30 times
 * the fifth derivative of W_nc, plus the integration error of W_nc over
 * dt, below 1e-8 of max |P_nc| here); and 0 without such forces. */
START_TEST(damped_pendulum_power)
{
    pu_args a = pu_defaults();
    a.text =
        "parameters: {m: 1.0, l: 1.0, g: 9.81, c: 0.3}\n"
        "coordinates: [x, y]\n"
        "mass: [m, m]\n"
        "potential: m*g*y\n"
        "forces: {x: -c*x', y: -c*y'}\n"
        "constraints: {rod: x^2 + y^2 - l^2}\n"
        "initial: {q: {x: 0.8, y: -0.6}}\n"
        "simulate: {t_end: 3, dt: 0.001, rtol: 1e-12, atol: 1e-12}\n";
    a.columns = "t,x',y',W_nc,P_nc";
    pu_result r;
    pu_run_ok(&a, &r);
    const pu_table *t = &r.tab;
    size_t cvx = pu_col(t, "x'"), cvy = pu_col(t, "y'"), cW = pu_col(t, "W_nc");
    size_t cP = pu_col(t, "P_nc");
    double pmax = pu_maxabs(t, "P_nc"), efd = 0, ecf = 0;
    ck_assert_msg(pmax > 0.5, "P_nc at most %g", pmax);
    for (size_t i = 0; i < t->nrow; i++) {
        double vx = PU_AT(t, i, cvx), vy = PU_AT(t, i, cvy), P = PU_AT(t, i, cP);
        ecf = fmax(ecf, fabs(P + 0.3 * (vx * vx + vy * vy)));
        if (i > 1 && i + 2 < t->nrow)
            efd = fmax(efd, fabs(P - (8 * (PU_AT(t, i + 1, cW) - PU_AT(t, i - 1, cW)) -
                                      (PU_AT(t, i + 2, cW) - PU_AT(t, i - 2, cW))) / 12e-3));
    }
    ck_assert_msg(ecf <= 1e-14 * pmax, "P_nc against -c v^2: %g", ecf);
    ck_assert_msg(efd <= 1e-8 * pmax, "P_nc against dW_nc/dt: %g of %g", efd, pmax);
    pu_result_free(&r);
    a = pu_defaults();
    a.path = PU_MODEL("pendulum.yaml");
    a.t_end = 1;
    a.columns = "t,P_nc";
    pu_run_ok(&a, &r);
    ck_assert_msg(pu_maxabs(&r.tab, "P_nc") == 0, "%g", pu_maxabs(&r.tab, "P_nc"));
    pu_result_free(&r);
}
END_TEST

/* Projection with the multistep methods gives the rk8pd trajectory to the
 * tolerance.  A projection restarts them at order 1, so they are projected
 * only when a residual exceeds the consistency tolerance (1e-10 here): the
 * rows keep |G| within it, and projections are rare beside the steps. */
static const char *const multistep[] = { "msadams", "msbdf" };

START_TEST(multistep_projection)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("pendulum.yaml");
    a.t_end = 10;
    a.dt = 0.1;
    pu_result ref, r;
    pu_run_ok(&a, &ref);
    a.method = multistep[_i];
    pu_run_ok(&a, &r);
    ck_assert_uint_eq(r.tab.nrow, ref.tab.nrow);
    ck_assert_msg(pu_maxabs(&r.tab, "G_rod") <= 1e-10, "%g", pu_maxabs(&r.tab, "G_rod"));
    ck_assert_msg(pu_maxabs(&r.tab, "Gdot_rod") <= 1e-10, "%g", pu_maxabs(&r.tab, "Gdot_rod"));
    ck_assert_msg(r.sum.projections * 20 < r.sum.steps, "%s: %ld projections in %ld steps",
                  multistep[_i], r.sum.projections, r.sum.steps);
    double dx = pu_maxdiff(&r.tab, "x", &ref.tab, "x");
    double dy = pu_maxdiff(&r.tab, "y", &ref.tab, "y");
    /* rtol = atol = 1e-10 per step; global error over ~5 periods */
    ck_assert_msg(dx < 1e-6 && dy < 1e-6, "%s: dx %g dy %g", multistep[_i], dx, dy);
    pu_result_free(&ref);
    pu_result_free(&r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("drift");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, pendulum_long_run);
    tcase_add_test(tc, large_scale_pendulum);
    tcase_add_loop_test(tc, hoop_work_of_reactions, 0, 3);
    tcase_add_test(tc, damped_pendulum_work);
    tcase_add_test(tc, damped_pendulum_power);
    tcase_add_test(tc, moving_chart_work);
    tcase_add_loop_test(tc, multistep_projection, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
