/* Physics of whole runs (src/integrate, src/dynamics, src/consistency
 * through hs_run): pendulum periods against the exact elliptic-integral
 * period, conservation and residuals, the reaction power of a moving
 * constraint, a configuration-dependent mass, the output grid and --set,
 * a numerical failure during a run, and every shipped model.
 *
 * Physics runs once per stepper (tcase_add_loop_test over `steppers`).
 * Tolerances are the ones the physics asks for; where a stepper cannot
 * reach them the table says so and why. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "check_main.h"
#include "consistency/consistency.h"
#include "dynamics/dynamics.h"
#include "physics_util.h"

/* ---- steppers ---- */

/* The steppers the physics tests run with: every method of the table
 * (src/integrate/steppers.c) of order 4 or more (the lower orders would
 * need millions of steps for the bounds asserted here), at a solver
 * tolerance set by its order, chosen so that the stepper's global error
 * over the runs here is well below the asserted tolerances: rkf45, rkck
 * and rk4imp at 1e-10 leave ~1e-8 global errors in 10 s, so orders below
 * 8 run at 1e-11, order 8 and bsimp (variable order) at 1e-10; msadams
 * runs at 1e-10 too (holosim hands it 1/100 of it, msbdf 1/1000) and the
 * multistep methods are projected only when a residual exceeds the
 * consistency tolerance, so they keep their order across rows.  bsimp
 * runs on holosim's shifted state (src/integrate/stepper.c).  The
 * fixed-step methods (rattle4, rattle6, rattle8) take steps of 1e-3,
 * which divide every output interval here; they solve the constraints in
 * their steps, without projection.  tests/check_steppers.c runs every
 * adaptive stepper on models with closed forms, tests/check_rattle.c the
 * fixed-step ones. */
typedef struct stepper {
    const char *name;
    double rtol;           /* rtol = atol for the run */
    double step;           /* the fixed-step methods' step (NAN: adaptive) */
    int projecting;        /* projected whenever a residual passes 5e-13 (half the
                            * projection's target): the one-step adaptive methods */
    int fixed;             /* steps itself, with the constraints solved in its steps */
} stepper;

static stepper steppers[32];
static int nsteppers;

static void list_steppers(void)
{
    nsteppers = 0;
    for (int i = 0; hs_steppers[i] && nsteppers < 32; i++) {
        const hs_stepper *t = hs_steppers[i];
        if (t->order && t->order < 4)
            continue;
        int fixed = (t->flags & HS_STEP_FIXED) != 0;
        int multistep = (t->flags & HS_STEP_MULTISTEP) != 0;
        double rtol = t->order == 0 || t->order == 8 || (multistep && t->order > 8) ? 1e-10
                                                                                   : 1e-11;
        steppers[nsteppers++] = (stepper){ t->name, rtol, fixed ? 1e-3 : (double)NAN,
                                           !multistep && !fixed, fixed };
    }
}
#define NSTEPPERS nsteppers

static void use_stepper(pu_args *a, const stepper *s)
{
    a->method = s->name;
    a->rtol = a->atol = s->rtol;
    a->step = s->step;
}

/* ---- numerical helpers ---- */

/* K(k) = pi / (2 AGM(1, sqrt(1 - k^2))): complete elliptic integral of the
 * first kind. */
static double ellip_K(double k)
{
    double a = 1, b = sqrt(1 - k * k);
    for (int i = 0; i < 60 && fabs(a - b) > 1e-16 * a; i++) {
        double an = 0.5 * (a + b);
        b = sqrt(a * b);
        a = an;
    }
    return PU_PI / (2 * a);
}

/* Root in [0, 1] of the cubic Hermite interpolant with values p0, p1 and
 * (scaled) slopes m0, m1 at the ends; p0 < 0 <= p1. */
static double hermite_root(double p0, double p1, double m0, double m1)
{
    double lo = 0, hi = 1, s = p0 / (p0 - p1);
    for (int it = 0; it < 200; it++) {
        double s2 = s * s, s3 = s2 * s;
        double h00 = 2 * s3 - 3 * s2 + 1, h10 = s3 - 2 * s2 + s;
        double h01 = -2 * s3 + 3 * s2, h11 = s3 - s2;
        double f = h00 * p0 + h10 * m0 + h01 * p1 + h11 * m1;
        double df = (6 * s2 - 6 * s) * p0 + (3 * s2 - 4 * s + 1) * m0 +
                    (-6 * s2 + 6 * s) * p1 + (3 * s2 - 2 * s) * m1;
        if (f < 0)
            lo = s;
        else
            hi = s;
        double sn = df != 0 ? s - f / df : 0.5 * (lo + hi);
        if (!(sn > lo && sn < hi))
            sn = 0.5 * (lo + hi);
        if (fabs(sn - s) < 1e-15)
            return sn;
        s = sn;
    }
    return s;
}

/* Mean period from the upward zero crossings of column `xc` (with its
 * derivative `vc`), each located by cubic Hermite interpolation between
 * rows.  Returns the number of crossings in *ncross. */
static double period_from_crossings(const pu_table *tab, const char *xc, const char *vc,
                                    int *ncross)
{
    size_t it = pu_col(tab, "t"), ix = pu_col(tab, xc), iv = pu_col(tab, vc);
    double first = NAN, last = NAN;
    int n = 0;
    for (size_t i = 0; i + 1 < tab->nrow; i++) {
        double x0 = PU_AT(tab, i, ix), x1 = PU_AT(tab, i + 1, ix);
        if (!(x0 < 0 && x1 >= 0))
            continue;
        double t0 = PU_AT(tab, i, it), h = PU_AT(tab, i + 1, it) - t0;
        double s = hermite_root(x0, x1, h * PU_AT(tab, i, iv), h * PU_AT(tab, i + 1, iv));
        double tc = t0 + s * h;
        if (n == 0)
            first = tc;
        last = tc;
        n++;
    }
    *ncross = n;
    return n > 1 ? (last - first) / (n - 1) : (double)NAN;
}

/* ---- 1. pendulum periods ---- */

static const double g_std = 9.81, l_std = 1.0;

/* Small amplitude: T = 2 pi sqrt(l/g) to 1e-4 relative (the amplitude
 * correction theta0^2/16 = 6e-8 is far below that). */
START_TEST(pendulum_period_small)
{
    const stepper *s = &steppers[_i];
    double theta0 = 1e-3;
    ck_assert(theta0 * theta0 / 16 < 1e-6);
    pu_args a = pu_defaults();
    a.path = PU_MODEL("pendulum.yaml");
    use_stepper(&a, s);
    pu_set(&a, "theta0", theta0);
    pu_result r;
    pu_run_ok(&a, &r);
    int nc;
    double T = period_from_crossings(&r.tab, "x", "x'", &nc);
    double T0 = 2 * PU_PI * sqrt(l_std / g_std);
    ck_assert_int_ge(nc, 4);
    ck_assert_msg(fabs(T / T0 - 1) < 1e-4, "%s: period %.12g, expected %.12g (rel %.3g)",
                  s->name, T, T0, T / T0 - 1);
    pu_result_free(&r);
}
END_TEST

/* theta0 = 2.5 rad: T = 4 sqrt(l/g) K(sin(theta0/2)) to 1e-7 relative,
 * averaged over the periods in 20 s. */
START_TEST(pendulum_period_large)
{
    const stepper *s = &steppers[_i];
    double theta0 = 2.5;
    pu_args a = pu_defaults();
    a.path = PU_MODEL("pendulum.yaml");
    use_stepper(&a, s);
    a.t_end = 20;
    pu_set(&a, "theta0", theta0);
    pu_result r;
    pu_run_ok(&a, &r);
    int nc;
    double T = period_from_crossings(&r.tab, "x", "x'", &nc);
    double Tex = 4 * sqrt(l_std / g_std) * ellip_K(sin(theta0 / 2));
    ck_assert_int_ge(nc, 4);
    ck_assert_msg(fabs(T / Tex - 1) < 1e-7, "%s: period %.15g, expected %.15g (rel %.3g)",
                  s->name, T, Tex, T / Tex - 1);
    pu_result_free(&r);
}
END_TEST

/* The AGM formula itself: K(0) = pi/2 and K(1/sqrt 2) = Gamma(1/4)^2 /
 * (4 sqrt(pi)). */
START_TEST(ellip_K_reference)
{
    ck_assert_double_eq_tol(ellip_K(0), PU_PI / 2, 1e-15);
    double g14 = tgamma(0.25);
    ck_assert_double_eq_tol(ellip_K(sqrt(0.5)), g14 * g14 / (4 * sqrt(PU_PI)), 1e-14);
}
END_TEST

/* ---- 2. conservation in scleronomic conservative models ---- */

static const char *const conservative[] = {
    "pendulum.yaml", "double_pendulum.yaml", "spherical_pendulum.yaml", "slider_crank.yaml",
};

/* rk8pd at rtol = atol = 1e-10 (the models' settings) over 10 s:
 * |E - E(0)|, |G|, |Gdot| < 1e-8 in every row. */
START_TEST(conservative_models)
{
    const char *file = conservative[_i];
    pu_args a = pu_defaults();
    a.path = PU_MODEL(file);
    a.method = "rk8pd";
    a.rtol = a.atol = 1e-10;
    a.t_end = 10;
    pu_result r;
    pu_run_ok(&a, &r);
    const pu_table *t = &r.tab;
    ck_assert_uint_eq(t->nrow, 1001);
    size_t iE = pu_col(t, "E");
    double E0 = PU_AT(t, 0, iE), dE = 0;
    for (size_t i = 0; i < t->nrow; i++)
        dE = fmax(dE, fabs(PU_AT(t, i, iE) - E0));
    ck_assert_msg(dE < 1e-8, "%s: energy drift %.3g", file, dE);
    int nres = 0;
    for (size_t j = 0; j < t->ncol; j++) {
        if (strncmp(t->name[j], "G_", 2) && strncmp(t->name[j], "Gdot_", 5))
            continue;
        nres++;
        double mx = pu_maxabs(t, t->name[j]);
        ck_assert_msg(mx < 1e-8, "%s: max |%s| = %.3g", file, t->name[j], mx);
    }
    ck_assert_int_gt(nres, 0);
    ck_assert_double_lt(r.sum.max_G, 1e-8);
    ck_assert_double_lt(r.sum.max_Gdot, 1e-8);
    pu_result_free(&r);
}
END_TEST

/* The same conservation for the pendulum with every stepper (the period
 * test's run settings): |E - E(0)| < 1e-8 over 10 s. */
START_TEST(pendulum_energy_per_stepper)
{
    const stepper *s = &steppers[_i];
    pu_args a = pu_defaults();
    a.path = PU_MODEL("pendulum.yaml");
    use_stepper(&a, s);
    pu_result r;
    pu_run_ok(&a, &r);
    size_t iE = pu_col(&r.tab, "E");
    double E0 = PU_AT(&r.tab, 0, iE), dE = 0;
    for (size_t i = 0; i < r.tab.nrow; i++)
        dE = fmax(dE, fabs(PU_AT(&r.tab, i, iE) - E0));
    ck_assert_msg(dE < 1e-8, "%s: energy drift %.3g", s->name, dE);
    pu_result_free(&r);
}
END_TEST

/* ---- 3. rotating hoop: a moving constraint does work ---- */

/* One-step methods only (the projected adaptive ones and the fixed-step
 * ones, which solve the constraints in their steps): under Baumgarte, or
 * with the multistep methods'
 * sparser projections, the constraints hold to ~1e-10 and power_residual =
 * lambda . Gdot reaches ~1e-8.
 * |power_residual| < 1e-9 in every row; E not conserved; E - E(0) equals
 * the integral of P_R = R.v (composite Simpson on the CSV at dt = 1e-3) and
 * the W_R column, to 1e-6. */
START_TEST(rotating_hoop_power)
{
    const stepper *s = &steppers[_i];
    if (!s->projecting && !s->fixed)       /* multistep: see above */
        HS_SKIP("%s: a multistep method (see above)", s->name);
    pu_args a = pu_defaults();
    a.path = PU_MODEL("rotating_hoop.yaml");
    use_stepper(&a, s);
    a.dt = 1e-3;
    a.columns = "t,E,P_R,W_R,power_residual,energy_balance";
    pu_result r;
    pu_run_ok(&a, &r);
    const pu_table *t = &r.tab;
    ck_assert_uint_eq(t->nrow, 10001);
    size_t it = pu_col(t, "t"), iE = pu_col(t, "E"), iP = pu_col(t, "P_R"),
           iW = pu_col(t, "W_R");
    double pres = pu_maxabs(t, "power_residual");
    ck_assert_msg(pres < 1e-9, "%s: max |power_residual| = %.3g", s->name, pres);
    double E0 = PU_AT(t, 0, iE), Emin = E0, Emax = E0;
    double simpson = 0, err_int = 0, err_W = 0;
    for (size_t i = 0; i < t->nrow; i++) {
        double E = PU_AT(t, i, iE);
        Emin = fmin(Emin, E);
        Emax = fmax(Emax, E);
        err_W = fmax(err_W, fabs(E - E0 - PU_AT(t, i, iW)));
        if (i >= 2 && i % 2 == 0) {
            double h = PU_AT(t, i, it) - PU_AT(t, i - 1, it);
            simpson += h / 3 * (PU_AT(t, i - 2, iP) + 4 * PU_AT(t, i - 1, iP) + PU_AT(t, i, iP));
            err_int = fmax(err_int, fabs(E - E0 - simpson));
        }
    }
    ck_assert_msg(Emax - Emin > 1.0, "%s: E varies by only %.3g", s->name, Emax - Emin);
    ck_assert_msg(err_int < 1e-6, "%s: |E - E0 - int P_R| up to %.3g", s->name, err_int);
    ck_assert_msg(err_W < 1e-6, "%s: |E - E0 - W_R| up to %.3g", s->name, err_W);
    ck_assert_double_lt(pu_maxabs(t, "energy_balance"), 1e-6);
    pu_result_free(&r);
}
END_TEST

/* ---- 4. configuration-dependent mass ---- */

/* The planar pendulum in sheared coordinates (x, s = x + y):
 * T = m/2 (x'^2 + (s' - x')^2) gives M0 = m [[2,-1],[-1,1]].  The "scaled"
 * variant multiplies M0 by c(q) = (x^2 + (s-x)^2)/l^2, which is 1 on the
 * constraint manifold: the Cartesian form takes M literally (no Coriolis
 * terms), so at every point of the manifold M(q) = M0 and the equations
 * M a = Q + G_q^T lambda, gamma are the same: the same motion exactly.
 * In the Lagrangian form L = c(q) T0(v) - U the extra terms are
 * grad c T0 - M0 v (grad c . v); on the manifold grad c = G_q^T / l^2 and
 * grad c . v = Gdot / l^2 = 0, so they are (T0/l^2) G_q^T: the same motion
 * with lambda shifted by -T/l^2. */
#define SHEAR_COMMON                                                         \
    "parameters: {m: 1.3, l: 1.2, g: 9.81, theta0: 0.9}\n"                   \
    "coordinates: [x, s]\n"                                                  \
    "potential: m*g*(s - x)\n"                                               \
    "constraints:\n"                                                         \
    "  rod: x^2 + (s - x)^2 - l^2\n"                                         \
    "initial:\n"                                                             \
    "  q: {x: l*sin(theta0), s: l*sin(theta0) - l*cos(theta0)}\n"            \
    "simulate: {t_end: 10, dt: 0.01, rtol: 1e-10, atol: 1e-10}\n"            \
    "outputs:\n"                                                             \
    "  y: s - x\n"

static const char shear_const[] =
    SHEAR_COMMON "mass: [[2*m, -m], [-m, m]]\n";
static const char shear_scaled[] =
    SHEAR_COMMON
    "define:\n"
    "  c: (x^2 + (s - x)^2)/l^2\n"
    "mass: [[2*m*c, -m*c], [-m*c, m*c]]\n";
static const char shear_lagrangian[] =
    SHEAR_COMMON
    "define:\n"
    "  c: (x^2 + (s - x)^2)/l^2\n"
    "kinetic: 0.5*c*m*(2*x'^2 - 2*x'*s' + s'^2)\n";

static const char *const shear_cols = "t,x,s,x',s',lambda_rod,T,E,y";

START_TEST(sheared_mass_matches)
{
    const stepper *st = &steppers[_i];
    if (st->fixed)               /* the Lagrangian forms: not for RATTLE */
        HS_SKIP("%s: the Lagrangian forms are not for RATTLE", st->name);
    pu_args a = pu_defaults();
    use_stepper(&a, st);
    a.columns = shear_cols;
    pu_result rc, rs, rl, rp;
    a.text = shear_const;
    pu_run_ok(&a, &rc);
    a.text = shear_scaled;
    pu_run_ok(&a, &rs);
    a.text = shear_lagrangian;
    pu_run_ok(&a, &rl);
    /* the plain Cartesian pendulum with the same parameters */
    pu_args p = pu_defaults();
    use_stepper(&p, st);
    p.path = PU_MODEL("pendulum.yaml");
    pu_set(&p, "m", 1.3);
    pu_set(&p, "l", 1.2);
    pu_set(&p, "theta0", 0.9);
    pu_run_ok(&p, &rp);

    static const char *const same[] = { "x", "s", "x'", "s'", "lambda_rod", "E" };
    for (size_t j = 0; j < sizeof same / sizeof *same; j++) {
        double d = pu_maxdiff(&rc.tab, same[j], &rs.tab, same[j]);
        ck_assert_msg(d < 1e-8, "%s: constant vs scaled mass: max |d %s| = %.3g",
                      st->name, same[j], d);
    }
    static const char *const traj[] = { "x", "s", "x'", "s'", "E" };
    for (size_t j = 0; j < sizeof traj / sizeof *traj; j++) {
        double d = pu_maxdiff(&rc.tab, traj[j], &rl.tab, traj[j]);
        ck_assert_msg(d < 1e-8, "%s: constant vs Lagrangian c(q) T0: max |d %s| = %.3g",
                      st->name, traj[j], d);
    }
    /* lambda_L = lambda_C - T/l^2 */
    size_t ilc = pu_col(&rc.tab, "lambda_rod"), ill = pu_col(&rl.tab, "lambda_rod"),
           iT = pu_col(&rc.tab, "T");
    double dl = 0;
    for (size_t i = 0; i < rc.tab.nrow; i++)
        dl = fmax(dl, fabs(PU_AT(&rl.tab, i, ill) -
                           (PU_AT(&rc.tab, i, ilc) - PU_AT(&rc.tab, i, iT) / (1.2 * 1.2))));
    ck_assert_msg(dl < 1e-8, "%s: lambda shift off by %.3g", st->name, dl);
    /* the plain pendulum through y = s - x */
    ck_assert_double_lt(pu_maxdiff(&rc.tab, "x", &rp.tab, "x"), 1e-8);
    ck_assert_double_lt(pu_maxdiff(&rc.tab, "y", &rp.tab, "y"), 1e-8);
    ck_assert_double_lt(pu_maxdiff(&rs.tab, "y", &rp.tab, "y"), 1e-8);
    ck_assert_double_lt(pu_maxdiff(&rc.tab, "x'", &rp.tab, "x'"), 1e-8);
    ck_assert_double_lt(pu_maxdiff(&rc.tab, "E", &rp.tab, "E"), 1e-8);
    pu_result_free(&rc);
    pu_result_free(&rs);
    pu_result_free(&rl);
    pu_result_free(&rp);
}
END_TEST

/* The compiled mass of the scaled model equals c(q) M0 at an arbitrary
 * (off-manifold) point: the factor is really there, not folded away. */
START_TEST(sheared_mass_is_q_dependent)
{
    pu_args a = pu_defaults();
    a.text = shear_scaled;
    hs_model *m = pu_load(&a);
    ck_assert_int_eq(m->mass_kind, HS_MASS_FULL);
    hs_work *w = hs_work_new(m);
    ck_assert_ptr_nonnull(w);
    double q[2] = { 0.3, -1.7 }, v[2] = { 0.2, 0.1 }, M[4];
    ck_assert_int_eq(hs_dyn_mass(m, w, 0, q, v, M), 0);
    double c = (0.09 + 2.0 * 2.0) / 1.44, mm = 1.3;
    ck_assert_double_eq_tol(M[0], 2 * mm * c, 1e-14);
    ck_assert_double_eq_tol(M[1], -mm * c, 1e-14);
    ck_assert_double_eq_tol(M[2], -mm * c, 1e-14);
    ck_assert_double_eq_tol(M[3], mm * c, 1e-14);
    hs_work_free(w);
    hs_model_free(m);
}
END_TEST

/* ---- 5. output grid, --set, first row ---- */

typedef struct grid_case {
    double t_end, dt;      /* dt NAN = default (t_end - t0)/1000 */
    size_t rows;
} grid_case;

static const grid_case grids[] = {
    { 1.0, 0.1, 11 },      /* dt divides the span */
    { 1.0, 0.25, 5 },
    { 1.0, 0.3, 5 },       /* 0, 0.3, 0.6, 0.9, then t_end */
    { 0.3, 0.1, 4 },       /* 0.3/0.1 = 2.9999999999999996: no sliver row */
    { 1.0, 1.0 / 3, 4 },   /* 1/(1/3) = 3.0000000000000004 */
    { 2.0, 0.7, 4 },       /* 0, 0.7, 1.4, 2 */
    { 1.0, 5.0, 2 },       /* dt beyond the span: t0 and t_end */
    { 2.0, NAN, 1001 },    /* default dt */
};

START_TEST(output_grid)
{
    const grid_case *g = &grids[_i];
    pu_args a = pu_defaults();
    a.text =
        "parameters: {m: 1.0, l: 1.0, g: 9.81}\n"
        "coordinates: [x, y]\n"
        "mass: [m, m]\n"
        "potential: m*g*y\n"
        "constraints: {rod: x^2 + y^2 - l^2}\n"
        "initial: {q: {x: 0.6, y: -0.8}}\n"
        "simulate: {t_end: 1, rtol: 1e-10, atol: 1e-10}\n";
    a.t_end = g->t_end;
    a.dt = g->dt;
    pu_result r;
    pu_run_ok(&a, &r);
    ck_assert_uint_eq(r.tab.nrow, g->rows);
    ck_assert_int_eq(r.sum.rows, (long)g->rows);
    double dt = isnan(g->dt) ? g->t_end / 1000 : g->dt;
    size_t it = pu_col(&r.tab, "t");
    for (size_t i = 0; i + 1 < r.tab.nrow; i++)
        ck_assert_msg(PU_AT(&r.tab, i, it) == hs_grid_time(0.0, (long)i, dt),
                      "row %zu: t = %.17g, expected %.17g", i, PU_AT(&r.tab, i, it),
                      hs_grid_time(0.0, (long)i, dt));
    ck_assert_msg(PU_AT(&r.tab, r.tab.nrow - 1, it) == g->t_end, "last t = %.17g",
                  PU_AT(&r.tab, r.tab.nrow - 1, it));
    ck_assert_double_eq(r.sum.t_reached, g->t_end);
    pu_result_free(&r);
}
END_TEST

/* A start time other than 0: rows at t0 + i dt. */
START_TEST(output_grid_t0)
{
    pu_args a = pu_defaults();
    a.text =
        "coordinates: [x]\n"
        "mass: [1]\n"
        "forces: {x: -x}\n"
        "initial: {t: 0.5, q: {x: 1}}\n"
        "simulate: {t_end: 2, dt: 0.2, rtol: 1e-11, atol: 1e-11}\n";
    pu_result r;
    pu_run_ok(&a, &r);
    ck_assert_uint_eq(r.tab.nrow, 9);    /* 0.5 .. 2.1 > 2: 0.5+7*0.2 = 1.9, then 2 */
    size_t it = pu_col(&r.tab, "t"), ix = pu_col(&r.tab, "x");
    for (size_t i = 0; i + 1 < r.tab.nrow; i++)
        ck_assert_double_eq(PU_AT(&r.tab, i, it), hs_grid_time(0.5, (long)i, 0.2));
    ck_assert_double_eq(PU_AT(&r.tab, 8, it), 2.0);
    /* x = cos(t - 0.5) */
    for (size_t i = 0; i < r.tab.nrow; i++)
        ck_assert_double_eq_tol(PU_AT(&r.tab, i, ix), cos(PU_AT(&r.tab, i, it) - 0.5), 1e-9);
    pu_result_free(&r);
}
END_TEST

static const char set_model[] =
    "parameters:\n"
    "  m: 1.0\n"
    "  l: 1.0\n"
    "  g: 9.81\n"
    "  I: m*l^2\n"
    "  theta0: 0.5\n"
    "coordinates: [x, y]\n"
    "mass: [m, m]\n"
    "potential: m*g*y\n"
    "constraints: {rod: x^2 + y^2 - l^2}\n"
    "initial: {q: {x: l*sin(theta0), y: -l*cos(theta0)}}\n"
    "simulate: {t_end: 0.1, dt: 0.05}\n"
    "outputs: {Iout: I, mout: m}\n";

static double param(const hs_model *m, const char *name)
{
    for (size_t i = 0; i < m->npar; i++)
        if (strcmp(m->pname[i], name) == 0)
            return m->pval[i];
    ck_abort_msg("no parameter %s", name);
    return NAN;
}

typedef struct set_case {
    size_t nset;
    const char *name[2];
    double value[2];
    double m, l, I;
} set_case;

static const set_case sets[] = {
    { 0, { NULL }, { 0 }, 1.0, 1.0, 1.0 },
    { 1, { "m" }, { 2.0 }, 2.0, 1.0, 2.0 },
    { 2, { "m", "l" }, { 2.0, 1.5 }, 2.0, 1.5, 4.5 },
    { 1, { "I" }, { 7.0 }, 1.0, 1.0, 7.0 },      /* a derived parameter set directly */
};

/* --set recomputes derived parameters (I = m l^2 follows m and l), and the
 * run uses the new values (E(0) = m g y0, first row on the circle of
 * radius l). */
START_TEST(set_recomputes_derived)
{
    const set_case *c = &sets[_i];
    pu_args a = pu_defaults();
    a.text = set_model;
    for (size_t j = 0; j < c->nset; j++)
        pu_set(&a, c->name[j], c->value[j]);
    hs_model *m = pu_load(&a);
    ck_assert_double_eq(param(m, "m"), c->m);
    ck_assert_double_eq(param(m, "l"), c->l);
    ck_assert_double_eq_tol(param(m, "I"), c->I, 1e-15);
    pu_result r;
    pu_run_model(m, NULL, &r);
    ck_assert_int_eq(r.rc, 0);
    const pu_table *t = &r.tab;
    ck_assert_double_eq_tol(PU_AT(t, 0, pu_col(t, "Iout")), c->I, 1e-15);
    ck_assert_double_eq(PU_AT(t, 0, pu_col(t, "mout")), c->m);
    double y0 = -c->l * cos(0.5);
    ck_assert_double_eq_tol(PU_AT(t, 0, pu_col(t, "y")), y0, 1e-15);
    ck_assert_double_eq_tol(PU_AT(t, 0, pu_col(t, "E")), c->m * 9.81 * y0, 1e-13);
    pu_result_free(&r);
    hs_model_free(m);
}
END_TEST

/* --set of an unknown parameter: exit 1 at load. */
START_TEST(set_unknown_parameter)
{
    const char *name[1] = { "mass" };
    double value[1] = { 2.0 };
    hs_overrides ov;
    hs_overrides_init(&ov);
    ov.nset = 1;
    ov.set_name = name;
    ov.set_value = value;
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("<test>", set_model, &ov, &err);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(err.code, HS_EXIT_USAGE);
    ck_assert_ptr_nonnull(strstr(err.msg, "mass"));
}
END_TEST

/* The first row is the projected initial state: off the circle and with a
 * radial velocity, the row equals what hs_cons_start returns, and is
 * consistent. */
START_TEST(first_row_is_projected_start)
{
    pu_args a = pu_defaults();
    a.text =
        "parameters: {m: 1.0, g: 9.81}\n"
        "coordinates: [x, y]\n"
        "mass: [m, 3*m]\n"
        "potential: m*g*y\n"
        "constraints: {rod: x^2 + y^2 - 1}\n"
        "initial: {q: {x: 0.6, y: -0.7}, v: {x: 0.4, y: 0.3}}\n"
        "simulate: {t_end: 0.1, dt: 0.05, rtol: 1e-10, atol: 1e-10}\n";
    a.columns = "t,x,y,x',y',G_rod,Gdot_rod";
    hs_model *m = pu_load(&a);
    double q[2] = { m->q0[0], m->q0[1] }, v[2] = { m->v0[0], m->v0[1] };
    hs_work *w = hs_work_new(m);
    hs_error err;
    hs_error_init(&err);
    ck_assert_int_eq(hs_cons_start(m, w, q, v, NULL, &err), 0);
    hs_work_free(w);
    ck_assert_double_lt(fabs(q[0] * q[0] + q[1] * q[1] - 1), 1e-10);
    ck_assert_double_lt(fabs(q[0] * v[0] + q[1] * v[1]), 1e-10);
    ck_assert(q[0] != 0.6 || q[1] != -0.7);
    pu_result r;
    pu_run_model(m, a.columns, &r);
    ck_assert_int_eq(r.rc, 0);
    const pu_table *t = &r.tab;
    ck_assert_double_eq(PU_AT(t, 0, pu_col(t, "t")), 0.0);
    ck_assert_double_eq(PU_AT(t, 0, pu_col(t, "x")), q[0]);
    ck_assert_double_eq(PU_AT(t, 0, pu_col(t, "y")), q[1]);
    ck_assert_double_eq(PU_AT(t, 0, pu_col(t, "x'")), v[0]);
    ck_assert_double_eq(PU_AT(t, 0, pu_col(t, "y'")), v[1]);
    ck_assert_double_lt(fabs(PU_AT(t, 0, pu_col(t, "G_rod"))), 1e-10);
    ck_assert_double_lt(fabs(PU_AT(t, 0, pu_col(t, "Gdot_rod"))), 1e-10);
    pu_result_free(&r);
    hs_model_free(m);
}
END_TEST

/* Consistent initial data comes out unchanged in the first row. */
START_TEST(first_row_is_consistent_start)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("spherical_pendulum.yaml");
    a.t_end = 0.1;
    hs_model *m = pu_load(&a);
    pu_result r;
    pu_run_model(m, NULL, &r);
    ck_assert_int_eq(r.rc, 0);
    const pu_table *t = &r.tab;
    for (size_t i = 0; i < m->n; i++) {
        ck_assert_double_eq(PU_AT(t, 0, pu_col(t, m->qname[i])), m->q0[i]);
        ck_assert_double_eq(PU_AT(t, 0, pu_col(t, m->vname[i])), m->v0[i]);
    }
    pu_result_free(&r);
    hs_model_free(m);
}
END_TEST

/* ---- 6. numerical failure during a run: exit 4, rows kept ---- */

typedef struct fail_case {
    const char *what;
    const char *text;
    double t_sing;         /* when the configuration becomes singular */
    double t_min;          /* the run must get at least this far */
} fail_case;

static const fail_case fails[] = {
    { "circle and a moving line that becomes tangent at t = 1/c",
      "parameters: {c: 0.5}\n"
      "coordinates: [x, y]\n"
      "mass: [1, 1]\n"
      "constraints:\n"
      "  circle: x^2 + y^2 - 1\n"
      "  line: y - c*t\n"
      "initial: {q: {x: 1, y: 0}, v: {x: 0, y: c}}\n"
      "simulate: {t_end: 3, dt: 0.01, rtol: 1e-10, atol: 1e-10}\n",
      2.0, 1.9 },
    { "a pendulum whose rod must stretch into a rail: tangent at t = 1",
      "coordinates: [x, y]\n"
      "mass: [1, 1]\n"
      "potential: 9.81*y\n"
      "constraints:\n"
      "  rod: x^2 + y^2 - 1\n"
      "  rail: x - t\n"
      "initial: {q: {x: 0, y: -1}, v: {x: 1, y: 0}}\n"
      "simulate: {t_end: 2, dt: 0.01, rtol: 1e-10, atol: 1e-10}\n",
      1.0, 0.95 },
};

START_TEST(singular_run_keeps_rows)
{
    const fail_case *fc = &fails[_i];
    pu_args a = pu_defaults();
    a.text = fc->text;
    pu_result r;
    pu_run(&a, &r);
    ck_assert_msg(r.rc == HS_EXIT_NUMERIC, "%s: exit %d (%s)", fc->what, r.rc, r.err.msg);
    const char *tp = strstr(r.err.msg, "t=");
    ck_assert_msg(tp != NULL, "%s: the message names no time: %s", fc->what, r.err.msg);
    double tf = strtod(tp + 2, NULL);
    const pu_table *t = &r.tab;
    ck_assert_msg(t->well_formed, "%s: malformed CSV:\n%s", fc->what, r.csv);
    ck_assert_uint_eq(t->nonfinite, 0);
    ck_assert_uint_gt(t->nrow, 0);
    ck_assert_uint_eq(t->ncol, 12);   /* t, x, y, x', y', 2 lambda, 2 G, 2 Gdot, E */
    size_t it = pu_col(t, "t");
    double t_last = PU_AT(t, t->nrow - 1, it);
    ck_assert_msg(t_last >= fc->t_min && t_last < fc->t_sing,
                  "%s: last row at t=%.17g", fc->what, t_last);
    ck_assert_msg(tf >= t_last && tf <= fc->t_sing + 1e-9,
                  "%s: failure time %.17g outside [%.17g, %g]: %s", fc->what, tf, t_last,
                  fc->t_sing, r.err.msg);
    ck_assert_int_eq(r.sum.rows, (long)t->nrow);
    /* rows are at the grid times, in order */
    for (size_t i = 0; i < t->nrow; i++)
        ck_assert_double_eq(PU_AT(t, i, it), hs_grid_time(0.0, (long)i, 0.01));
    pu_result_free(&r);
}
END_TEST

/* The circle-and-line trajectory up to the failure is the exact one:
 * y = c t, x = sqrt(1 - c^2 t^2). */
START_TEST(singular_run_rows_are_right)
{
    pu_args a = pu_defaults();
    a.text = fails[0].text;
    pu_result r;
    pu_run(&a, &r);
    ck_assert_int_eq(r.rc, HS_EXIT_NUMERIC);
    const pu_table *t = &r.tab;
    size_t it = pu_col(t, "t"), ix = pu_col(t, "x"), iy = pu_col(t, "y");
    for (size_t i = 0; i < t->nrow; i++) {
        double tt = PU_AT(t, i, it);
        if (tt > 1.9)
            break;
        ck_assert_double_eq_tol(PU_AT(t, i, iy), 0.5 * tt, 1e-9);
        ck_assert_double_eq_tol(PU_AT(t, i, ix), sqrt(1 - 0.25 * tt * tt), 1e-8);
    }
    pu_result_free(&r);
}
END_TEST

/* ---- 8. every shipped model runs ---- */

START_TEST(all_models_run)
{
    const char *dir = pu_models_dir();
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    int count = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml"))
            continue;
        pu_args a = pu_defaults();
        a.path = PU_MODEL(e->d_name);
        pu_result r;
        pu_run(&a, &r);
        ck_assert_msg(r.rc == 0, "%s: exit %d: %s", e->d_name, r.rc, r.err.msg);
        ck_assert_msg(r.tab.well_formed && r.tab.nonfinite == 0, "%s: bad CSV", e->d_name);
        ck_assert_msg(r.tab.nrow >= 2, "%s: %zu rows", e->d_name, r.tab.nrow);
        pu_result_free(&r);
        count++;
    }
    closedir(d);
    ck_assert_int_ge(count, 9);
}
END_TEST

/* ---- bsimp with projection ---- */

/* bsimp with projection takes about as many steps as with Baumgarte: the
 * projection moves the state by round-off.  (It used to take 24x as many
 * in the first 0.02 s of the pendulum and ~1000x over 10 s: GSL's bsimp
 * weighs sub-steps by |y_i|, and components at round-off next to zero
 * made every sub-step a "runaway".) */
START_TEST(bsimp_projection_step_count)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("pendulum.yaml");
    a.method = "bsimp";
    a.t_end = 0.5;
    pu_result rb, rp;
    a.stabilize = HS_STAB_BAUMGARTE;
    pu_run_ok(&a, &rb);
    a.stabilize = HS_STAB_PROJECTION;
    pu_run_ok(&a, &rp);
    ck_assert_msg(rp.sum.steps < 2 * rb.sum.steps,
                  "bsimp: %ld steps with projection, %ld with Baumgarte", rp.sum.steps,
                  rb.sum.steps);
    pu_result_free(&rb);
    pu_result_free(&rp);
}
END_TEST

static Suite *physics_suite(void)
{
    list_steppers();
    Suite *s = suite_create("physics");
    TCase *tc;

    tc = tcase_create("pendulum_period");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, ellip_K_reference);
    tcase_add_loop_test(tc, pendulum_period_small, 0, NSTEPPERS);
    tcase_add_loop_test(tc, pendulum_period_large, 0, NSTEPPERS);
    suite_add_tcase(s, tc);

    tc = tcase_create("conservation");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, conservative_models, 0,
                        (int)(sizeof conservative / sizeof *conservative));
    tcase_add_loop_test(tc, pendulum_energy_per_stepper, 0, NSTEPPERS);
    suite_add_tcase(s, tc);

    tc = tcase_create("rheonomic");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, rotating_hoop_power, 0, NSTEPPERS);
    suite_add_tcase(s, tc);

    tc = tcase_create("mass");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, sheared_mass_is_q_dependent);
    tcase_add_loop_test(tc, sheared_mass_matches, 0, NSTEPPERS);
    suite_add_tcase(s, tc);

    tc = tcase_create("output");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, output_grid, 0, (int)(sizeof grids / sizeof *grids));
    tcase_add_test(tc, output_grid_t0);
    tcase_add_loop_test(tc, set_recomputes_derived, 0, (int)(sizeof sets / sizeof *sets));
    tcase_add_test(tc, set_unknown_parameter);
    tcase_add_test(tc, first_row_is_projected_start);
    tcase_add_test(tc, first_row_is_consistent_start);
    suite_add_tcase(s, tc);

    tc = tcase_create("failure");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, singular_run_keeps_rows, 0, (int)(sizeof fails / sizeof *fails));
    tcase_add_test(tc, singular_run_rows_are_right);
    suite_add_tcase(s, tc);

    tc = tcase_create("models");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, all_models_run);
    suite_add_tcase(s, tc);

    tc = tcase_create("bsimp");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, bsimp_projection_step_count);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(physics_suite)
