/* Rows inside steps, energies and output times, every stepper under
 * error control (src/integrate), at rtol = atol = 1e-8 unless said: rows
 * inside steps (interpolate mode) against exact-mode runs and the closed
 * forms of tests/steppers_fixture.h, the energy balance steering the
 * steps; dop853's order and continuous extension at fixed steps; E and the
 * Jacobi integral H in moving charts against their formulas; output times
 * and time arithmetic (hs_grid_time's rounding, an epoch start, spans and
 * row counts refused).  The closed forms and the per-order bound on the
 * global error are those of check_steppers.c (tests/steppers_fixture.h). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "steppers_fixture.h"

/* ---- rows inside steps ---- */

/* Interpolate mode on the bead on a rotating wire and the bead on a
 * spinning hoop (two forms), at the models' tolerances (1e-10):
 * energy_balance below 1e-8 in every row (the work integrals used to be
 * cubic Hermite inside steps: 5.6e-4 and 2.3e-5), with the stepper taking
 * its own steps.  And rows inside steps as accurate as the stepper: at
 * rtol 1e-12 (steps still ~0.05 long, where the old quintic Hermite was
 * off by 1e-8), E and the work integral within 1e-10 of an exact-mode run
 * at 1e-13. */
typedef struct icase {
    const char *file, *W;  /* the work integral that moves */
} icase;

static const icase icases[] = {
    { "rotating_wire.yaml", "W_t" },
    { "hoop_angle.yaml", "W_t" },
    { "rotating_hoop.yaml", "W_R" },
};

START_TEST(interpolated_rows)
{
    const icase *c = &icases[_i];
    pu_args a = pu_defaults();
    a.path = PU_MODEL(c->file);
    a.t_end = 2;
    a.interpolate = 1;
    char cols[64];
    snprintf(cols, sizeof cols, "t,E,%s,energy_balance", c->W);
    a.columns = cols;
    pu_result ri, rr;
    pu_run_ok(&a, &ri);
    ck_assert_uint_eq(ri.tab.nrow, 201);
    ck_assert_msg(ri.sum.steps < 100, "%s: %ld steps: not interpolating", c->file,
                  ri.sum.steps);
    double eb = pu_maxabs(&ri.tab, "energy_balance");
    ck_assert_msg(eb < 1e-8, "%s: max |energy_balance| %.3g", c->file, eb);
    pu_result_free(&ri);
    a.rtol = a.atol = 1e-12;
    pu_run_ok(&a, &ri);
    ck_assert_msg(ri.sum.steps < 150, "%s: %ld steps at 1e-12", c->file, ri.sum.steps);
    a.interpolate = 0;
    a.rtol = a.atol = 1e-13;
    pu_run_ok(&a, &rr);
    double dE = pu_maxdiff(&ri.tab, "E", &rr.tab, "E"), dW = pu_maxdiff(&ri.tab, c->W, &rr.tab, c->W);
    ck_assert_msg(dE < 1e-10 && dW < 1e-10, "%s: E off by %.3g, %s by %.3g", c->file, dE,
                  c->W, dW);
    pu_result_free(&ri);
    pu_result_free(&rr);
}
END_TEST

/* Every stepper in interpolate mode on the pendulum (theta0 = 1.2) and the
 * rotating wire (omega = 1: in interpolate mode the steps are the
 * stepper's own, and at omega = 2, where errors grow as e^(4 t), the
 * explicit fourth- and fifth-order methods leave 1e-6 in r' at their own
 * steps, exact mode or not): rows inside steps within the stepper's bound
 * of the closed form.  bsimp steps a quarter period at a time on the
 * pendulum; a single polynomial per step was off by 7e-5 there, so such
 * steps are halved for their rows (splits > 0). */
START_TEST(interpolated_closed_forms)
{
    const stepper *s = adaptive(_i);
    if (!s)
        HS_SKIP("index %d: not an adaptive method", _i);
    for (int c = 2; c < 4; c++) {
        pu_args a = pu_defaults();
        case_args(&cases[c], &a);
        wr_om = c == 2 ? 1.0 : 2.0;
        if (c == 2)
            a.set_value[0] = wr_om;
        use(&a, s, TOL);
        a.interpolate = 1;
        pu_result r;
        pu_run_ok(&a, &r);
        ck_assert_uint_eq(r.tab.nrow, 201);
        const char *worst = "";
        double e = truth_error(&cases[c], &r.tab, &worst);
        ck_assert_msg(e < bound(s, TOL), "%s on the %s, interpolated: error %.3g in %s",
                      s->name, cases[c].what, e, worst);
        if (strcmp(s->name, "bsimp") == 0 && c == 3)
            ck_assert_int_gt(r.sum.splits, 0);
        pu_result_free(&r);
    }
    wr_om = 2.0;
}
END_TEST

/* Interpolate mode, every stepper but rk1imp (first order) at
 * rtol = atol = 1e-8 over t in [0, 2] on the three models whose work
 * integrals move (the bead on a rotating wire, the spinning hoop in a
 * rotating chart and in Cartesian form): the energy balance steers the
 * steps (src/integrate/stepper.c), so max |energy_balance| stays below the
 * tolerance for the eighth-order methods (rk8pd at 2.9e-8 on the Cartesian
 * hoop before it did) and within the order's bound for the others (each
 * step keeps it within atol/4 + rtol S/400; the low orders take hundreds
 * of steps). */
START_TEST(interpolated_balance)
{
    const stepper *s = adaptive(_i / 3);
    if (!s)
        HS_SKIP("index %d: not an adaptive method", _i);
    const icase *c = &icases[_i % 3];
    if (s->order == 1)
        return;
    pu_args a = pu_defaults();
    a.path = PU_MODEL(c->file);
    a.t_end = 2;
    a.interpolate = 1;
    a.columns = "t,energy_balance";
    use(&a, s, TOL);
    pu_result r;
    pu_run_ok(&a, &r);
    int eighth = s->order == 8 && !(s->flags & HS_STEP_MULTISTEP);
    double eb = pu_maxabs(&r.tab, "energy_balance"), lim = eighth ? TOL : bound(s, TOL);
    ck_assert_msg(eb < lim && r.sum.max_ebal < lim, "%s on %s: max |energy_balance| %.3g, "
                  "summary %.3g (bound %.3g)", s->name, c->file, eb, r.sum.max_ebal, lim);
    pu_result_free(&r);
}
END_TEST

/* ---- dop853 ---- */

/* y'' = -y (y = cos t) with holosim's dop853 step type at fixed steps h:
 * the error at t = 1 falls as h^8 (order 8) and the continuous extension's
 * error at the middle of the last step as h^8 (order 7: local error
 * O(h^8)); error estimates are positive and fall as fast; the 16 stages'
 * nodes and weights are consistent (sum_j a_ij = c_i, checked through
 * y' = 1, whose solution every stage reproduces exactly). */
static int osc(double t, const double y[], double f[], void *p)
{
    (void)t;
    (void)p;
    f[0] = y[1];
    f[1] = -y[0];
    return GSL_SUCCESS;
}

static int ramp(double t, const double y[], double f[], void *p)
{
    (void)t;
    (void)y;
    (void)p;
    f[0] = 1;
    return GSL_SUCCESS;
}

/* Fixed steps of 1/N to t = 1: the error at the end and of the extension
 * at t = 1 - 1/(2N). */
static void dop_run(int N, double *e_end, double *e_mid)
{
    gsl_odeiv2_system sys = { osc, NULL, 2, NULL };
    gsl_odeiv2_step *st = gsl_odeiv2_step_alloc(hs_int_dop853, 2);
    ck_assert_ptr_nonnull(st);
    hs_int_dop853_scales(st, 1e-8, 1e-8, 2);
    double y[2] = { 1, 0 }, yerr[2], dyin[2], dyout[2], h = 1.0 / N;
    osc(0, y, dyin, NULL);
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(gsl_odeiv2_step_apply(st, i * h, h, y, yerr, dyin, dyout, &sys),
                         GSL_SUCCESS);
        dyin[0] = dyout[0];
        dyin[1] = dyout[1];
    }
    *e_end = fmax(fabs(y[0] - cos(1.0)), fabs(y[1] + sin(1.0)));
    double tau, hh, ym[2];
    ck_assert_int_eq(hs_int_dop853_dense(st, &tau, &hh), GSL_SUCCESS);
    ck_assert_double_eq_tol(tau + hh, 1.0, 1e-15);
    hs_int_dop853_at(st, 0.5, ym);
    double tm = 1 - 0.5 / N;
    *e_mid = fmax(fabs(ym[0] - cos(tm)), fabs(ym[1] + sin(tm)));
    double at0[2], at1[2];                    /* the extension's ends */
    hs_int_dop853_at(st, 0.0, at0);
    hs_int_dop853_at(st, 1.0, at1);
    ck_assert_double_eq_tol(at1[0], y[0], 1e-15);
    ck_assert_double_eq_tol(at1[1], y[1], 1e-15);
    ck_assert(fabs(at0[0] - cos(1 - h)) < 1e-9);
    gsl_odeiv2_step_free(st);
}

START_TEST(dop853_orders)
{
    double e1, m1, e2, m2;
    dop_run(4, &e1, &m1);
    dop_run(8, &e2, &m2);
    /* halving h: 2^8 = 256 for both (measured 230-260); a wrong
     * coefficient leaves a lower order (<= 2^6) */
    ck_assert_msg(e1 / e2 > 150, "end: %.3g -> %.3g (ratio %.3g)", e1, e2, e1 / e2);
    ck_assert_msg(m1 / m2 > 150, "extension: %.3g -> %.3g (ratio %.3g)", m1, m2, m1 / m2);
    ck_assert_msg(e2 < 1e-9 && m2 < 1e-9, "errors %.3g, %.3g", e2, m2);
    /* y' = 1: every stage and the extension exact */
    gsl_odeiv2_system sys = { ramp, NULL, 1, NULL };
    gsl_odeiv2_step *st = gsl_odeiv2_step_alloc(hs_int_dop853, 1);
    hs_int_dop853_scales(st, 1e-8, 1e-8, 1);
    double y = 0.25, yerr, din = 1, dout, tau, hh, yi;
    ck_assert_int_eq(gsl_odeiv2_step_apply(st, 0, 0.5, &y, &yerr, &din, &dout, &sys),
                     GSL_SUCCESS);
    ck_assert_double_eq_tol(y, 0.75, 1e-15);
    ck_assert(fabs(yerr) < 1e-15);
    ck_assert_int_eq(hs_int_dop853_dense(st, &tau, &hh), GSL_SUCCESS);
    for (int j = 0; j <= 8; j++) {
        hs_int_dop853_at(st, j / 8.0, &yi);
        ck_assert_double_eq_tol(yi, 0.25 + 0.5 * (j / 8.0), 1e-15);
    }
    gsl_odeiv2_step_free(st);
}
END_TEST

/* ---- E and H in moving charts ---- */

/* The bead on a hoop spinning at omega about its vertical diameter, in a
 * rotating chart (models/hoop_angle.yaml): in every row
 *   E = m R^2 (th'^2 + omega^2 sin^2 th)/2 - m g R cos th,
 *   H = m R^2 (th'^2 - omega^2 sin^2 th)/2 - m g R cos th
 * (to round-off), H is conserved to 1e-10 over 20 s, E - E0 = W_t (the
 * moving chart's work) and the balance closes; the Cartesian hoop
 * (models/rotating_hoop.yaml) has the same E, and its moving constraint's
 * work W_R equals W_t. */
START_TEST(hoop_energy_and_jacobi)
{
    const double m = 1, R = 1, g = 9.81, om = 5;
    pu_args a = pu_defaults();
    a.path = PU_MODEL("hoop_angle.yaml");
    a.t_end = 20;
    a.rtol = a.atol = 1e-12;
    a.columns = "t,theta,theta',E,H,W_t,energy_balance,x',y',z'";
    pu_result r;
    pu_run_ok(&a, &r);
    const pu_table *t = &r.tab;
    size_t ith = pu_col(t, "theta"), ithd = pu_col(t, "theta'"), iE = pu_col(t, "E"),
           iH = pu_col(t, "H"), iW = pu_col(t, "W_t"), ixd = pu_col(t, "x'"),
           iyd = pu_col(t, "y'"), izd = pu_col(t, "z'"), it = pu_col(t, "t");
    double H0 = PU_AT(t, 0, iH), E0 = PU_AT(t, 0, iE), dH = 0;
    for (size_t i = 0; i < t->nrow; i++) {
        double th = PU_AT(t, i, ith), thd = PU_AT(t, i, ithd), s = sin(th);
        double E = m * R * R * (thd * thd + om * om * s * s) / 2 - m * g * R * cos(th);
        double H = m * R * R * (thd * thd - om * om * s * s) / 2 - m * g * R * cos(th);
        ck_assert_double_eq_tol(PU_AT(t, i, iE), E, 1e-12 * (1 + fabs(E)));
        ck_assert_double_eq_tol(PU_AT(t, i, iH), H, 1e-12 * (1 + fabs(H)));
        ck_assert_double_eq_tol(PU_AT(t, i, iE) - E0, PU_AT(t, i, iW), 1e-9);
        dH = fmax(dH, fabs(PU_AT(t, i, iH) - H0));
        /* ambient velocities: d/dt of (R sin th cos wt, R sin th sin wt, -R cos th) */
        double tt = PU_AT(t, i, it), c = cos(th), cw = cos(om * tt), sw = sin(om * tt);
        ck_assert_double_eq_tol(PU_AT(t, i, ixd), R * (c * thd * cw - s * om * sw), 1e-12);
        ck_assert_double_eq_tol(PU_AT(t, i, iyd), R * (c * thd * sw + s * om * cw), 1e-12);
        ck_assert_double_eq_tol(PU_AT(t, i, izd), R * s * thd, 1e-12);
    }
    ck_assert_msg(dH < 1e-10, "H drifts by %.3g over 20 s", dH);
    ck_assert_msg(pu_maxabs(t, "W_t") > 1, "the chart does no work?");
    ck_assert_double_lt(pu_maxabs(t, "energy_balance"), 1e-9);
    pu_result_free(&r);

    pu_args c = pu_defaults();
    c.path = PU_MODEL("rotating_hoop.yaml");
    c.t_end = 10;
    c.columns = "t,E,W_R";
    a.t_end = 10;
    a.rtol = a.atol = NAN;
    a.columns = "t,E,W_t";
    pu_result re, rc;
    pu_run_ok(&a, &re);
    pu_run_ok(&c, &rc);
    ck_assert_double_lt(pu_maxdiff(&re.tab, "E", &rc.tab, "E"), 1e-8);
    ck_assert_double_lt(pu_maxdiff(&re.tab, "W_t", &rc.tab, "W_R"), 1e-8);
    pu_result_free(&re);
    pu_result_free(&rc);
}
END_TEST

/* The rotating wire in its chart: E = m omega^2 r0^2 cosh(2 omega t) / 2,
 * H = -m omega^2 r0^2 / 2 (conserved), W_t = E - E0, the ambient position
 * and velocity columns x, y, x', y' the closed forms. */
START_TEST(wire_energy_and_jacobi)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("rotating_wire.yaml");
    pu_set(&a, "omega", wr_om);
    pu_set(&a, "r0", wr_r0);
    a.columns = "t,E,H,W_t,x,y,x',y'";
    pu_result r;
    pu_run_ok(&a, &r);
    const pu_table *t = &r.tab;
    size_t it = pu_col(t, "t");
    double k = wr_om * wr_om * wr_r0 * wr_r0 / 2;
    for (size_t i = 0; i < t->nrow; i++) {
        double tt = PU_AT(t, i, it);
        ck_assert_double_eq_tol(PU_AT(t, i, pu_col(t, "E")), k * cosh(2 * wr_om * tt), 1e-9);
        ck_assert_double_eq_tol(PU_AT(t, i, pu_col(t, "H")), -k, 1e-10);
        ck_assert_double_eq_tol(PU_AT(t, i, pu_col(t, "W_t")), k * (cosh(2 * wr_om * tt) - 1),
                                1e-9);
        ck_assert_double_eq_tol(PU_AT(t, i, pu_col(t, "x")), wr_x(tt), 1e-10);
        ck_assert_double_eq_tol(PU_AT(t, i, pu_col(t, "y")), wr_y(tt), 1e-10);
        ck_assert_double_eq_tol(PU_AT(t, i, pu_col(t, "x'")), wr_xd(tt), 1e-9);
        ck_assert_double_eq_tol(PU_AT(t, i, pu_col(t, "y'")), wr_yd(tt), 1e-9);
    }
    pu_result_free(&r);
}
END_TEST

/* ---- output times and time arithmetic ---- */

static double ref_round15(double x)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.15g", x);
    return strtod(buf, NULL);
}

/* hs_grid_time rounds exactly as strtod(sprintf("%.15g")) did: 0.1-step
 * grids read 1.7, ties go to even, and a million values of every size
 * agree bit for bit. */
START_TEST(grid_time_rounding)
{
    ck_assert(hs_grid_time(0, 17, 0.1) == 1.7);
    ck_assert(hs_grid_time(0, 3, 0.1) == 0.3);
    ck_assert(hs_grid_time(0.5, 7, 0.2) == 1.9);
    ck_assert(hs_grid_time(1.7e9, 1, 0.01) == 1700000000.01);
    /* exact halves at the 16th digit: to even, as printf */
    ck_assert(hs_grid_time(123456789012345.5, 0, 1) == 123456789012346.0);
    ck_assert(hs_grid_time(123456789012344.5, 0, 1) == 123456789012344.0);
    ck_assert(hs_grid_time(-123456789012345.5, 0, 1) == -123456789012346.0);
    static const double edge[] = { 0, -0.0, 1e-8, 9.999999999999999e-9, 1e36, 1e-300, 5e-324,
                                   999999999999999.9, 99999999999999.99, 0.30000000000000004,
                                   1e22, 1e23, 4.35, 2.675, 1.0000000000000002 };
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++)
        ck_assert_msg(hs_grid_time(edge[i], 0, 1) == ref_round15(edge[i]), "%.17g", edge[i]);
    unsigned long long s = 88172645463325252ULL;
    for (int i = 0; i < 1000000; i++) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        double mant = (double)(s >> 11) / 9007199254740992.0;   /* [0, 1) */
        int e10 = (int)(s % 61) - 30;
        double x = (mant + 0.1) * pow(10.0, e10) * ((s >> 3) & 1 ? 1 : -1);
        if (i % 4 == 0)             /* grid-like values: t0 + i dt */
            x = (double)(s % 100000) * 0.01 + ((s >> 20) % 3 ? 0 : 1.7e9);
        ck_assert_msg(hs_grid_time(x, 0, 1) == ref_round15(x), "%.17g: %.17g vs %.17g", x,
                      hs_grid_time(x, 0, 1), ref_round15(x));
    }
}
END_TEST

/* A pendulum starting at an epoch time, t0 = 1.7e9, dt = 0.01: rows at the
 * grid times, and the state the closed form at the elapsed time (the
 * first step and the underflow test scale with t, and every step lands on
 * a double). */
START_TEST(epoch_start)
{
    const stepper *s = adaptive(_i);
    if (!s)
        HS_SKIP("index %d: not an adaptive method", _i);
    char text[512];
    snprintf(text, sizeof text,
             "parameters: {m: 1.0, l: 1.0, g: 9.81, theta0: 1.2}\n"
             "coordinates: [x, y]\n"
             "mass: [m, m]\n"
             "potential: m*g*y\n"
             "constraints: {rod: x^2 + y^2 - l^2}\n"
             "initial: {t: 1.7e9, q: {x: l*sin(theta0), y: -l*cos(theta0)}}\n"
             "simulate: {t_end: 1700000001, dt: 0.01}\n");
    pu_args a = pu_defaults();
    a.text = text;
    use(&a, s, TOL);
    pu_result r;
    pu_run_ok(&a, &r);
    ck_assert_uint_eq(r.tab.nrow, 101);
    size_t it = pu_col(&r.tab, "t"), ix = pu_col(&r.tab, "x");
    double e = 0;
    for (size_t i = 0; i < r.tab.nrow; i++) {
        double t = PU_AT(&r.tab, i, it);
        ck_assert_double_eq(t, hs_grid_time(1.7e9, (long)i, 0.01));
        e = fmax(e, fabs(PU_AT(&r.tab, i, ix) - pd_x(t - 1.7e9)));
    }
    ck_assert_msg(e < bound(s, TOL), "%s at t0 = 1.7e9: error %.3g", s->name, e);
    pu_result_free(&r);
}
END_TEST

typedef struct tcase_ {
    const char *initial_t, *t_end, *dt;
    const char *msg;
} time_case;

static const time_case time_cases[] = {
    { "-1e308", "1e308", "1e306", "too large to represent" },
    { "-1e308", "1e308", NULL, "too large to represent" },
    { "1.7e9", "1700000010", "1e-6", "below the resolution of the output times" },
    { "0", "1e300", "1e-300", "too many output rows" },
};

/* Spans and row counts are checked in floating point before any
 * conversion: exit 1 with a message, no CSV. */
START_TEST(time_errors)
{
    const time_case *c = &time_cases[_i];
    char text[512];
    snprintf(text, sizeof text,
             "coordinates: [x]\nmass: [1]\nforces: {x: -x}\n"
             "initial: {t: %s, q: {x: 1}}\nsimulate: {t_end: %s%s%s}\n", c->initial_t,
             c->t_end, c->dt ? ", dt: " : "", c->dt ? c->dt : "");
    pu_args a = pu_defaults();
    a.text = text;
    pu_result r;
    pu_run(&a, &r);
    ck_assert_int_eq(r.rc, HS_EXIT_USAGE);
    ck_assert_msg(strstr(r.err.msg, c->msg) != NULL, "%s", r.err.msg);
    ck_assert_uint_eq(r.csv_len, 0);
    pu_result_free(&r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("steppers_rows");
    TCase *tc = tcase_create("energy");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, interpolated_rows, 0, (int)(sizeof icases / sizeof *icases));
    tcase_add_loop_test(tc, interpolated_closed_forms, 0, NSTEPPERS);
    tcase_add_loop_test(tc, interpolated_balance, 0, NSTEPPERS * 3);
    tcase_add_test(tc, dop853_orders);
    tcase_add_test(tc, hoop_energy_and_jacobi);
    tcase_add_test(tc, wire_energy_and_jacobi);
    suite_add_tcase(s, tc);

    tc = tcase_create("time");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, grid_time_rounding);
    tcase_add_loop_test(tc, epoch_start, 0, NSTEPPERS);
    tcase_add_loop_test(tc, time_errors, 0, (int)(sizeof time_cases / sizeof *time_cases));
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
