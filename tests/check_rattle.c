/* The fixed-step methods of the table (src/integrate/rattle.c: RATTLE and
 * its compositions of order 4, 6, 8) against closed forms:
 *
 *   - the order of each by step halving (within 0.2 of its nominal order)
 *     on a pendulum (Jacobi elliptic functions) and on a bead on a wire
 *     turning at constant rate (a time-dependent constraint, r = r0
 *     cosh(omega t));
 *   - the energy error over a long run (hundreds of periods) bounded, with
 *     no secular growth (the slope fitted to the windows' largest errors);
 *   - the constraints G and Gdot at the Newton tolerance at every step;
 *   - a moving constraint: the work bookkeeping closes (energy_balance at
 *     the method's accuracy while E changes by O(1));
 *   - an event located with the method's own steps (time against the
 *     closed form), rows inside steps (interpolate mode) on the constraints;
 *   - the models it refuses and the steps that do not fit, positioned. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sf_ellint.h>
#include <gsl/gsl_sf_elljac.h>

#include "check_main.h"
#include "integrate/internal.h"
#include "physics_util.h"

/* The fixed-step methods of the table, in its order. */
static int nfixed(void)
{
    int n = 0;
    for (int i = 0; hs_steppers[i]; i++)
        n += (hs_steppers[i]->flags & HS_STEP_FIXED) != 0;
    return n;
}

static const hs_stepper *fixed(int j)
{
    for (int i = 0; hs_steppers[i]; i++)
        if ((hs_steppers[i]->flags & HS_STEP_FIXED) && j-- == 0)
            return hs_steppers[i];
    return NULL;
}

/* ---- closed forms ---- */

/* the pendulum released at rest from theta0: sin(theta/2) = k sn(K - w t) */
static const double pd_th0 = 1.2, pd_g = 9.81, pd_l = 1.0;
static void pd_jac(double t, double *sn, double *cn, double *dn, double *k, double *w)
{
    *k = sin(pd_th0 / 2);
    *w = sqrt(pd_g / pd_l);
    double K = gsl_sf_ellint_Kcomp(*k, GSL_PREC_DOUBLE);
    gsl_sf_elljac_e(K - *w * t, *k * *k, sn, cn, dn);
}
static void pd_state(double t, double *s)
{
    double sn, cn, dn, k, w;
    pd_jac(t, &sn, &cn, &dn, &k, &w);
    s[0] = 2 * pd_l * k * sn * dn;
    s[1] = -pd_l * (1 - 2 * k * k * sn * sn);
    s[2] = -2 * pd_l * k * w * cn * (dn * dn - k * k * sn * sn);
    s[3] = -4 * pd_l * k * k * w * sn * cn * dn;        /* d/dt of y */
}

static const char pendulum[] =
    "parameters: {m: 1.0, l: 1.0, g: 9.81, theta0: 1.2}\n"
    "coordinates: [x, y]\n"
    "mass: [m, m]\n"
    "potential: m*g*y\n"
    "constraints: {rod: x^2 + y^2 - l^2}\n"
    "initial: {q: {x: l*sin(theta0), y: -l*cos(theta0)}}\n"
    "simulate: {t_end: 2, dt: 0.4}\n";

/* the wire: r = r0 cosh(omega t), omega = 2 */
static const double wr_om = 2.0, wr_r0 = 0.1;
static void wr_state(double t, double *s)
{
    double r = wr_r0 * cosh(wr_om * t), rd = wr_r0 * wr_om * sinh(wr_om * t);
    double c = cos(wr_om * t), sn = sin(wr_om * t);
    s[0] = r * c;
    s[1] = r * sn;
    s[2] = rd * c - wr_om * r * sn;
    s[3] = rd * sn + wr_om * r * c;
}

static const char wire[] =
    "parameters: {m: 1.0, omega: 2.0, r0: 0.1}\n"
    "coordinates: [x, y]\n"
    "mass: [m, m]\n"
    "constraints: {wire: -x*sin(omega*t) + y*cos(omega*t)}\n"
    "initial: {q: {x: r0, y: 0}, v: {x: 0, y: omega*r0}}\n"
    "simulate: {t_end: 2, dt: 0.4}\n";

typedef struct problem {
    const char *what, *text;
    void (*truth)(double t, double *s);
} problem;

static const problem problems[] = {
    { "pendulum", pendulum, pd_state },
    { "wire", wire, wr_state },
};

/* max over rows and x, y, x', y' of |value - closed form| */
static double max_error(const problem *p, const pu_table *tab)
{
    static const char *const cols[4] = { "x", "y", "x'", "y'" };
    size_t it = pu_col(tab, "t"), ic[4];
    for (int j = 0; j < 4; j++)
        ic[j] = pu_col(tab, cols[j]);
    double e = 0;
    for (size_t i = 0; i < tab->nrow; i++) {
        double s[4];
        p->truth(PU_AT(tab, i, it), s);
        for (int j = 0; j < 4; j++)
            e = fmax(e, fabs(PU_AT(tab, i, ic[j]) - s[j]));
    }
    return e;
}

static double run_error(const problem *p, const char *method, double step)
{
    pu_args a = pu_defaults();
    a.text = p->text;
    a.method = method;
    a.step = step;
    a.columns = "t,x,y,x',y'";
    pu_result r;
    pu_run_ok(&a, &r);
    ck_assert_uint_eq(r.tab.nrow, 6);
    double e = max_error(p, &r.tab);
    pu_result_free(&r);
    return e;
}

/* The step that keeps an order-p method in its asymptotic range here
 * (dividing dt = 0.4): 0.1 for order 8, halved for every 2 orders less
 * (at 0.2, rattle8 on the pendulum measured 8.5: not yet asymptotic). */
static double step_for(int order)
{
    return 0.1 * pow(2.0, -(8 - order) / 2.0);
}

/* ---- order ---- */

/* Step halving: e(h) / e(h/2) = 2^p, h = step_for(p). */
START_TEST(order_by_halving)
{
    const hs_stepper *s = fixed(_i / 2);
    const problem *p = &problems[_i % 2];
    double h = step_for(s->order);
    double e1 = run_error(p, s->name, h), e2 = run_error(p, s->name, h / 2);
    double order = log2(e1 / e2);
    ck_assert_msg(e2 > 1e-13, "%s on the %s: error %.3g at h/2 is at round-off", s->name,
                  p->what, e2);
    ck_assert_msg(fabs(order - s->order) <= 0.2, "%s on the %s: errors %.3g, %.3g, order "
                  "%.3f, nominal %d", s->name, p->what, e1, e2, order, s->order);
}
END_TEST

/* ---- energy over a long run ---- */

/* 500 s of the pendulum (about 230 periods), rows every 0.4 s.  The
 * largest |E - E0| in each tenth of the run, fitted by a line: its rise
 * over the run stays below a fifth of the error itself, and the last
 * tenth's largest error below twice the first's (a method that drifts
 * grows linearly: its rise is the error itself). */
START_TEST(energy_bounded)
{
    const hs_stepper *s = fixed(_i);
    pu_args a = pu_defaults();
    a.text = pendulum;
    a.method = s->name;
    a.step = step_for(s->order);
    a.t_end = 500;
    a.columns = "t,E,energy_balance,G_rod";
    pu_result r;
    pu_run_ok(&a, &r);
    const pu_table *t = &r.tab;
    size_t it = pu_col(t, "t"), iE = pu_col(t, "E"), ib = pu_col(t, "energy_balance");
    double E0 = PU_AT(t, 0, iE), win[10] = { 0 }, mid[10];
    for (size_t i = 0; i < t->nrow; i++) {
        double tt = PU_AT(t, i, it), d = fabs(PU_AT(t, i, iE) - E0);
        int w = (int)fmin(9, floor(tt / 50));
        win[w] = fmax(win[w], d);
        /* scleronomic and conservative: the balance is E - E0 itself */
        ck_assert_msg(fabs(PU_AT(t, i, ib) - (PU_AT(t, i, iE) - E0)) <= 1e-12 * fabs(E0) + d,
                      "%s: energy_balance %.3g, E - E0 %.3g", s->name, PU_AT(t, i, ib),
                      PU_AT(t, i, iE) - E0);
    }
    double sx = 0, sy = 0, sxx = 0, sxy = 0, top = 0;
    for (int w = 0; w < 10; w++) {
        mid[w] = 25 + 50 * w;
        sx += mid[w];
        sy += win[w];
        sxx += mid[w] * mid[w];
        sxy += mid[w] * win[w];
        top = fmax(top, win[w]);
    }
    double slope = (10 * sxy - sx * sy) / (10 * sxx - sx * sx);
    ck_assert_msg(top > 0 && top < 0.01 * fabs(E0), "%s: max |E - E0| %.3g", s->name, top);
    ck_assert_msg(fabs(slope) * 500 < 0.2 * top, "%s: |E - E0| grows: slope %.3g per s "
                  "(rise %.3g over the run, max %.3g)", s->name, slope, slope * 500, top);
    ck_assert_msg(win[9] < 2 * win[0], "%s: first tenth %.3g, last %.3g", s->name, win[0],
                  win[9]);
    pu_result_free(&r);
}
END_TEST

/* ---- constraints at every step ---- */

/* A row at every step (dt = the step): |G| within 1e-12 of the
 * constraints' scale (2 l^2 = 2 here: the lengths are 1) and |Gdot| at
 * its round-off, on the double pendulum (two constraints) and the bead
 * on the spinning hoop (a moving plane). */
START_TEST(constraints_every_step)
{
    const hs_stepper *s = fixed(_i / 2);
    static const char *const files[2] = { "double_pendulum.yaml", "rotating_hoop.yaml" };
    pu_args a = pu_defaults();
    a.path = PU_MODEL(files[_i % 2]);
    a.method = s->name;
    a.step = a.dt = 0.01;
    a.t_end = 3;
    a.columns = "all";
    pu_result r;
    pu_run_ok(&a, &r);
    ck_assert_uint_eq(r.tab.nrow, 301);
    ck_assert_int_eq(r.sum.steps, 300);
    ck_assert_msg(r.sum.max_G <= 2e-12, "%s on %s: max |G| %.3g", s->name, files[_i % 2],
                  r.sum.max_G);
    ck_assert_msg(r.sum.max_Gdot <= 1e-12, "%s on %s: max |Gdot| %.3g", s->name,
                  files[_i % 2], r.sum.max_Gdot);
    ck_assert_msg(r.sum.projections == 0, "%s: projected", s->name);
    pu_result_free(&r);
}
END_TEST

/* ---- redundant constraints ---- */

/* A crank-rocker four-bar (crank r = 0.3, coupler 1, rocker 0.8, ground
 * 1), the crank tip tied to the crank angle by two equations; the
 * redundant one adds its length (rank 4 of 5).  It revolves (th' = 8). */
#define FB_HEAD \
    "parameters: {J: 0.01, ma: 1, mb: 2, r: 0.3, L: 1, b: 0.8, d: 1, g: 9.81, th0: -1.2,\n" \
    "             w0: 8}\n" \
    "coordinates: [th, xa, ya, xb, yb]\n" \
    "mass: [J, ma, ma, mb, mb]\n" \
    "potential: g*(ma*ya + mb*yb)\n" \
    "constraints:\n" \
    "  cx: xa - r*cos(th)\n" \
    "  cy: ya - r*sin(th)\n"
#define FB_TAIL \
    "  coupler: (xb - xa)^2 + (yb - ya)^2 - L^2\n" \
    "  rocker: (xb - d)^2 + yb^2 - b^2\n" \
    "initial:\n" \
    "  q: {th: th0, xa: r*cos(th0), ya: r*sin(th0), xb: 1.5, yb: -0.6}\n" \
    "  v: {th: w0}\n" \
    "consistency: {lock: [th]}\n" \
    "simulate: {t_end: 20, dt: 0.02}\n"
static const char fourbar[] = FB_HEAD FB_TAIL;
static const char fourbar_red[] = FB_HEAD "  crank: xa^2 + ya^2 - r^2\n" FB_TAIL;

/* Each method at the step 0.002 (rattle4 failed at its first steps, with
 * "overflow in arithmetic"): 10,000 steps with the redundant row follow
 * the four-bar without it to 1e-9 (the same method on the same manifold:
 * the least-norm solve leaves the motion alone), every G at round-off, the
 * energy error bounded (no rise between the first and last fifth). */
START_TEST(redundant_fourbar)
{
    const hs_stepper *s = fixed(_i);
    pu_args a = pu_defaults();
    a.method = s->name;
    a.step = 0.002;
    a.columns = "t,th,xb,yb,E,G_cx,G_cy,G_coupler,G_rocker";
    pu_result r0, r1;
    a.text = fourbar;
    pu_run_ok(&a, &r0);
    a.text = fourbar_red;
    a.columns = "t,th,xb,yb,E,G_cx,G_cy,G_coupler,G_rocker,G_crank";
    pu_run_ok(&a, &r1);
    const pu_table *t0 = &r0.tab, *t1 = &r1.tab;
    ck_assert_uint_eq(t0->nrow, 1001);
    ck_assert_uint_eq(t1->nrow, 1001);
    static const char *const cmp[3] = { "th", "xb", "yb" };
    double dmax = 0, E0 = PU_AT(t1, 0, pu_col(t1, "E")), first = 0, last = 0;
    for (size_t i = 0; i < t1->nrow; i++) {
        for (int j = 0; j < 3; j++)
            dmax = fmax(dmax, fabs(PU_AT(t1, i, pu_col(t1, cmp[j])) -
                                   PU_AT(t0, i, pu_col(t0, cmp[j]))));
        double dE = fabs(PU_AT(t1, i, pu_col(t1, "E")) - E0);
        if (i < 200)
            first = fmax(first, dE);
        if (i > 800)
            last = fmax(last, dE);
    }
    ck_assert_msg(dmax <= 1e-9, "%s: redundant vs not: %.3g", s->name, dmax);
    ck_assert_msg(r1.sum.max_G <= 1e-13, "%s: max |G| %.3g", s->name, r1.sum.max_G);
    ck_assert_msg(r1.sum.max_Gdot <= 1e-12, "%s: max |Gdot| %.3g", s->name, r1.sum.max_Gdot);
    ck_assert_msg(last <= 2 * first + 1e-12 && first < 1e-3 * fabs(E0),
                  "%s: |E - E0| first fifth %.3g, last %.3g", s->name, first, last);
    pu_result_free(&r0);
    pu_result_free(&r1);
}
END_TEST

/* The shipped overconstrained parallelogram (rank 5 of 6; rattle stopped
 * at its first step with "Newton's method for the multipliers did not
 * converge", at any step): each crank a pendulum about the bottom,
 * omega^2 = (3 m/2 + mc) g / (l (m + mc)), released at rest from 1 - pi/2
 * above it: sin(phi/2) = k sn(K - omega t), k = sin(phi0/2).  50,000 steps
 * of 1e-5: th1 = th2 = th3 on that closed form within 1e-8, G at round-off. */
START_TEST(redundant_parallelogram)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("parallelogram3.yaml");
    a.method = "rattle";
    a.step = 1e-5;
    a.t_end = 0.5;
    a.dt = 0.01;
    a.columns = "t,th1,th2,th3,phi";
    pu_result r;
    pu_run_ok(&a, &r);
    const pu_table *t = &r.tab;
    double w = sqrt((1.5 + 2) * 9.81 / 3), phi0 = -1 + 2 * atan(1.0), k = sin(phi0 / 2);
    double K = gsl_sf_ellint_Kcomp(k, GSL_PREC_DOUBLE), emax = 0;
    for (size_t i = 0; i < t->nrow; i++) {
        double sn, cn, dn;
        gsl_sf_elljac_e(K - w * PU_AT(t, i, pu_col(t, "t")), k * k, &sn, &cn, &dn);
        double th = -2 * atan(1.0) + 2 * asin(k * sn);
        for (int c = 1; c <= 3; c++)
            emax = fmax(emax, fabs(PU_AT(t, i, c) - th));
        ck_assert(fabs(PU_AT(t, i, 4)) <= 1e-13);
    }
    ck_assert_msg(emax <= 1e-8, "theta against the closed form: %.3g", emax);
    ck_assert_msg(r.sum.max_G <= 1e-14, "max |G| %.3g", r.sum.max_G);
    ck_assert_msg(r.sum.max_Gdot <= 1e-13, "max |Gdot| %.3g", r.sum.max_Gdot);
    pu_result_free(&r);
}
END_TEST

/* Released at th0 = 0.5 the parallelogram's cranks swing through the
 * coupler's line, a singular position on top of the redundancy: rattle
 * stopped there at its first passage (t = 0.31, "Newton's method for the
 * multipliers did not converge", at any step), its simplified Newton
 * (Jacobian frozen at C0) pointed the wrong way along the direction G_q
 * nearly loses.  With Newton on the Jacobian of the step's end after that
 * (and where the frozen one stagnates above round-off), over 10 s against
 * the one-angle motion: rattle 7.7e-5 at the step 1e-3, 7.7e-7 at 1e-4
 * (second order); rattle4 3.9e-9 and 2.8e-10; every G at round-off. */
static const struct { const char *method; double tol[2]; } singular_runs[] = {
    { "rattle", { 2e-4, 2e-6 } }, { "rattle4", { 2e-8, 2e-9 } },
};

START_TEST(parallelogram_singular_positions)
{
    static const char ref[] =
        "parameters: {m: 1.0, mc: 2.0, l: 1.0, g: 9.81, th0: 0.5}\n"
        "coordinates: [th]\n"
        "kinetic: 0.5*l^2*(m + mc)*th'^2\n"
        "potential: (3*m/2 + mc)*g*l*sin(th)\n"
        "initial: {q: {th: th0}}\n"
        "simulate: {t_end: 10, dt: 0.01, rtol: 1e-13, atol: 1e-13}\n";
    double e[2];
    for (int j = 0; j < 2; j++) {
        pu_args a = pu_defaults(), r = pu_defaults();
        a.path = PU_MODEL("parallelogram3.yaml");
        a.method = singular_runs[_i].method;
        a.step = j ? 1e-4 : 1e-3;
        a.columns = "t,th1,th2,th3";
        pu_set(&a, "th0", 0.5);
        r.text = ref;
        pu_result ra, rr;
        pu_run_ok(&a, &ra);
        pu_run_ok(&r, &rr);
        e[j] = 0;
        for (int c = 1; c <= 3; c++)
            e[j] = fmax(e[j], pu_maxdiff(&ra.tab, ra.tab.name[c], &rr.tab, "th"));
        ck_assert_msg(ra.sum.max_G <= 1e-13, "max |G| %.3g", ra.sum.max_G);
        pu_result_free(&ra);
        pu_result_free(&rr);
    }
    ck_assert_msg(e[0] <= singular_runs[_i].tol[0] && e[1] <= singular_runs[_i].tol[1],
                  "%s: theta off the one angle: %.3g, %.3g", singular_runs[_i].method, e[0],
                  e[1]);
    if (_i == 0)
        ck_assert_msg(e[0] / e[1] > 50, "order: %.3g / %.3g", e[0], e[1]);
}
END_TEST

/* ---- a moving constraint does work ---- */

/* The spinning hoop: E - E0 changes by O(1) (the reaction's work W_R),
 * and energy_balance = E - E0 - W_R - W_nc - W_t stays at the method's
 * accuracy: within 1e-6 of max |W_R| for orders 4 to 8, 2e-5 for
 * rattle (second order, steps of 6e-4). */
START_TEST(rheonomic_balance)
{
    const hs_stepper *s = fixed(_i);
    pu_args a = pu_defaults();
    a.path = PU_MODEL("rotating_hoop.yaml");
    a.method = s->name;
    a.step = step_for(s->order) / 20;
    a.dt = 0.1;
    a.t_end = 4;
    a.columns = "t,E,W_R,energy_balance,power_residual";
    pu_result r;
    pu_run_ok(&a, &r);
    double wr = pu_maxabs(&r.tab, "W_R"), eb = pu_maxabs(&r.tab, "energy_balance");
    ck_assert_msg(wr > 0.1, "%s: W_R %.3g", s->name, wr);
    double lim = (s->order >= 4 ? 1e-6 : 2e-5) * wr;
    ck_assert_msg(eb < lim, "%s: max |energy_balance| %.3g, max |W_R| %.3g", s->name, eb, wr);
    ck_assert_msg(pu_maxabs(&r.tab, "power_residual") < 1e-9, "%s: power residual", s->name);
    pu_result_free(&r);
}
END_TEST

/* ---- events and rows inside steps ---- */

/* The pendulum from rest reaches x = 0 first at t = K(k)/w; a stop event
 * there is located by the method's own steps from the step's start (the
 * bracket closed to 1e-13), to the method's accuracy: 1e-7 for orders 4
 * to 8 at a quarter of step_for, 1e-4 for rattle (second order). */
START_TEST(event_time)
{
    const hs_stepper *s = fixed(_i);
    char text[600];
    snprintf(text, sizeof text, "%sevents: {down: {when: x, direction: down, action: stop}}\n",
             pendulum);
    pu_args a = pu_defaults();
    a.text = text;
    a.method = s->name;
    a.step = step_for(s->order) / 4;
    a.columns = "t,x,G_rod";
    pu_result r;
    pu_run_ok(&a, &r);
    double k = sin(pd_th0 / 2), w = sqrt(pd_g / pd_l);
    double te = gsl_sf_ellint_Kcomp(k, GSL_PREC_DOUBLE) / w;
    ck_assert_ptr_nonnull(r.sum.stopped_by);
    double lim = s->order >= 4 ? 1e-7 : 1e-4;
    ck_assert_msg(fabs(r.sum.t_reached - te) < lim, "%s: stopped at %.15g, K/w = %.15g",
                  s->name, r.sum.t_reached, te);
    size_t ix = pu_col(&r.tab, "x");
    ck_assert(fabs(PU_AT(&r.tab, r.tab.nrow - 1, ix)) < 1e-12);
    ck_assert(r.sum.max_G <= 2e-12);
    pu_result_free(&r);
}
END_TEST

/* Interpolate mode, rows every 0.005 inside steps of 0.02 (rattle4): each
 * row is the method run from its step's start, on the constraints and as
 * accurate as the steps (within twice the error of rows at the steps'
 * ends, exact mode). */
START_TEST(rows_inside_steps)
{
    pu_args a = pu_defaults();
    a.text = pendulum;
    a.method = "rattle4";
    a.step = a.dt = 0.02;
    a.columns = "t,x,y,x',y'";
    pu_result r;
    pu_run_ok(&a, &r);
    double e_ends = max_error(&problems[0], &r.tab);
    pu_result_free(&r);
    a.dt = 0.005;
    a.interpolate = 1;
    a.columns = "t,x,y,x',y',G_rod,Gdot_rod";
    pu_run_ok(&a, &r);
    ck_assert_uint_eq(r.tab.nrow, 401);
    ck_assert_int_eq(r.sum.steps, 100);
    double e = max_error(&problems[0], &r.tab);
    ck_assert_msg(e < 2 * e_ends, "rows inside steps: error %.3g, at the ends %.3g", e,
                  e_ends);
    ck_assert_msg(pu_maxabs(&r.tab, "G_rod") <= 2e-12 && pu_maxabs(&r.tab, "Gdot_rod") <= 1e-12,
                  "G %.3g, Gdot %.3g", pu_maxabs(&r.tab, "G_rod"),
                  pu_maxabs(&r.tab, "Gdot_rod"));
    pu_result_free(&r);
}
END_TEST

/* No step given: dt / 2^j from the tolerances over the first interval;
 * the error then follows the tolerance. */
START_TEST(default_step)
{
    pu_args a = pu_defaults();
    a.text = pendulum;
    a.method = "rattle6";
    a.rtol = a.atol = 1e-10;
    a.columns = "t,x,y,x',y'";
    pu_result r;
    pu_run_ok(&a, &r);
    double e = max_error(&problems[0], &r.tab);
    ck_assert_msg(e < 1e-8, "default step: error %.3g", e);
    ck_assert_int_ge(r.sum.steps, 5);
    pu_result_free(&r);
}
END_TEST

/* ---- refused ---- */

typedef struct refusal {
    const char *what, *text, *method;   /* method NULL: the file's */
    double step;                        /* NAN: the file's */
    int rc, line, col;
    const char *msg;
} refusal;

#define PEND_TOP "coordinates: [x, y]\nmass: [1, 1]\npotential: 9.81*y\n" \
                 "constraints: {rod: x^2 + y^2 - 1}\ninitial: {q: {x: 0.6, y: -0.8}}\n"
static const refusal refusals[] = {
    { "Lagrangian form", "coordinates: [th]\nkinetic: 0.5*th'^2\npotential: -cos(th)\n"
      "initial: {q: {th: 1}}\nsimulate: {t_end: 1, method: rattle}\n", NULL, NAN, 2, 5, 30,
      "this model is in the Lagrangian form" },
    { "Lagrangian form, --method", "coordinates: [th]\nkinetic: 0.5*th'^2\n"
      "initial: {q: {th: 1}}\nsimulate: {t_end: 1}\n", "rattle8", NAN, 1, 0, 0,
      "use dop853 or rk8pd" },
    { "damping", "coordinates: [x]\nmass: [1]\nforces: [-0.1*x']\ninitial: {q: {x: 1}}\n"
      "simulate: {t_end: 1, method: rattle4}\n", NULL, NAN, 2, 5, 30,
      "its forces depend on the velocities" },
    { "constant full mass", "coordinates: [x, y]\nmass: [[2, 1], [1, 2]]\n"
      "constraints: {c: x + y}\ninitial: {q: {x: 1, y: -1}}\n"
      "simulate: {t_end: 1, method: rattle}\n", NULL, NAN, 2, 5, 30,
      "its mass matrix is constant but not diagonal" },
    { "mass of q", "coordinates: [x, y]\nmass: [[2 + x^2, 0], [0, 1]]\n"
      "constraints: {c: x + y}\ninitial: {q: {x: 1, y: -1}}\n"
      "simulate: {t_end: 1, method: rattle}\n", NULL, NAN, 2, 5, 30,
      "its masses are not constant" },
    { "step does not divide dt", PEND_TOP "simulate:\n  t_end: 1\n  dt: 0.1\n"
      "  step: 0.03\n  method: rattle\n", NULL, NAN, 2, 9, 9,
      "simulate.step: the step 0.03 does not divide the output interval dt = 0.1" },
    { "step longer than dt", PEND_TOP "simulate: {t_end: 1, dt: 0.1, method: rattle}\n",
      NULL, 0.2, 1, 0, 0, "step: the step is longer than the output interval dt" },
    { "step too small", PEND_TOP "simulate: {t_end: 1, dt: 0.1, method: rattle4}\n",
      NULL, 1e-300, 1, 0, 0, "step: the step is too small: more than 1e10 steps" },
    { "step with an adaptive method", PEND_TOP "simulate:\n  t_end: 1\n  step: 0.01\n",
      NULL, NAN, 2, 8, 9, "simulate.step is for the fixed-step methods (rattle rattle4 "
      "rattle6 rattle8); 'rk8pd' chooses its own steps" },
};
#define NREFUSALS ((int)(sizeof refusals / sizeof *refusals))

START_TEST(refused)
{
    const refusal *c = &refusals[_i];
    pu_args a = pu_defaults();
    a.text = c->text;
    a.method = c->method;
    a.step = c->step;
    pu_result r;
    pu_run(&a, &r);
    ck_assert_msg(r.rc == c->rc, "%s: exit %d (%s)", c->what, r.rc, r.err.msg);
    ck_assert_msg(strstr(r.err.msg, c->msg) != NULL, "%s: message '%s'", c->what, r.err.msg);
    /* the Cartesian form is advice only to a model not written in it */
    if (strstr(c->what, "Lagrangian"))
        ck_assert_msg(strstr(r.err.msg, "or write the model in the Cartesian form with "
                             "constant masses"), "%s: %s", c->what, r.err.msg);
    if (strcmp(c->what, "damping") == 0)
        ck_assert_msg(!strstr(r.err.msg, "Cartesian form"), "%s: %s", c->what, r.err.msg);
    ck_assert_msg(r.err.line == c->line && r.err.column == c->col, "%s: at %d:%d", c->what,
                  r.err.line, r.err.column);
    ck_assert_uint_eq(r.tab.nrow, 0);
    pu_result_free(&r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("rattle");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    int nf = nfixed();

    tcase_add_loop_test(tc, order_by_halving, 0, 2 * nf);
    tcase_add_loop_test(tc, energy_bounded, 0, nf);
    tcase_add_loop_test(tc, constraints_every_step, 0, 2 * nf);
    tcase_add_loop_test(tc, rheonomic_balance, 0, nf);
    tcase_add_loop_test(tc, event_time, 0, nf);
    tcase_add_loop_test(tc, redundant_fourbar, 0, nf);
    tcase_add_test(tc, redundant_parallelogram);
    tcase_add_loop_test(tc, parallelogram_singular_positions, 0,
                        (int)(sizeof singular_runs / sizeof *singular_runs));
    tcase_add_test(tc, rows_inside_steps);
    tcase_add_test(tc, default_step);
    tcase_add_loop_test(tc, refused, 0, NREFUSALS);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
