/* Every stepper under error control that holosim offers (src/integrate) against
 * closed forms, at rtol = atol = 1e-8 over t in [0, 2]: an Atwood machine
 * (constant acceleration), a bead on a rotating wire in two forms
 * (r = r0 cosh(omega t)), a pendulum (Jacobi elliptic functions); every
 * shipped model with every stepper; bsimp's step count; multistep methods
 * across rows; rows inside steps (interpolate mode); E and the Jacobi
 * integral H in moving charts against their formulas; the energy balance
 * in every form; output times and time arithmetic; the method table
 * (names unique, a way to step for each, an unknown name positioned).
 *
 * The error bound of a stepper follows its order: GSL's controls bound
 * each step's error, so the global error of an order-p method is about
 * (steps) x (tolerance) x (growth of errors).  For p >= 2 holosim keeps it
 * within 100x the tolerance (1e-6 here); rk1imp is first order, its steps
 * scale as sqrt(tolerance) and so does its error: bound 100 sqrt(tol). */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_sf_elljac.h>
#include <gsl/gsl_sf_ellint.h>

#include "check_main.h"
#include "integrate/internal.h"
#include "physics_util.h"

#define TOL 1e-8

/* The steppers: every method of the table (src/integrate/steppers.c) under
 * error control; those that step with a fixed step have tests of their
 * own (tests/check_rattle.c). */
typedef hs_stepper stepper;
static int nsteppers(void)
{
    int n = 0;
    while (hs_steppers[n])
        n++;
    return n;
}
#define NSTEPPERS nsteppers()
/* The i-th stepper, or NULL (the test does nothing) for one that steps
 * with a fixed step. */
static const stepper *adaptive(int i)
{
    return hs_steppers[i]->flags & HS_STEP_FIXED ? NULL : hs_steppers[i];
}

/* The bound on the global error, by order, for smooth problems of O(1) over
 * O(1) times at rtol = atol = tol. */
static double bound(const stepper *s, double tol)
{
    return s->order == 1 ? 100 * sqrt(tol) : 100 * tol;
}

static void use(pu_args *a, const stepper *s, double tol)
{
    a->method = s->name;
    a->rtol = a->atol = tol;
}

/* ---- closed forms ---- */

typedef struct truth {
    const char *col;       /* a CSV column */
    double (*f)(double t); /* its closed form */
} truth;

/* Atwood: y1 = -1 + v0 t - (g (m1 - m2) / (m1 + m2)) t^2 / 2 */
static const double aw_m1 = 2, aw_m2 = 1, aw_g = 9.81, aw_v0 = 0.5;
static double aw_acc(void) { return -aw_g * (aw_m1 - aw_m2) / (aw_m1 + aw_m2); }
static double aw_y1(double t) { return -1 + aw_v0 * t + 0.5 * aw_acc() * t * t; }
static double aw_v1(double t) { return aw_v0 + aw_acc() * t; }
static double aw_y2(double t) { return -3 - aw_y1(t); }
static double aw_lam(double t) { (void)t; return 2 * aw_m1 * aw_m2 * aw_g / (aw_m1 + aw_m2); }

/* the wire: r = r0 cosh(omega t); omega = 2 here, so errors grow by e^4 */
static double wr_om = 2.0;
static const double wr_r0 = 0.1;
static double wr_r(double t) { return wr_r0 * cosh(wr_om * t); }
static double wr_rd(double t) { return wr_r0 * wr_om * sinh(wr_om * t); }
static double wr_x(double t) { return wr_r(t) * cos(wr_om * t); }
static double wr_y(double t) { return wr_r(t) * sin(wr_om * t); }
static double wr_xd(double t) { return wr_rd(t) * cos(wr_om * t) - wr_om * wr_r(t) * sin(wr_om * t); }
static double wr_yd(double t) { return wr_rd(t) * sin(wr_om * t) + wr_om * wr_r(t) * cos(wr_om * t); }

/* the pendulum released at rest from theta0: sin(theta/2) = k sn(K - w t),
 * k = sin(theta0/2), w = sqrt(g/l); x = 2 l k sn dn, y = -l (1 - 2 k^2 sn^2) */
static const double pd_th0 = 1.2, pd_g = 9.81, pd_l = 1.0;
static void pd_jac(double t, double *sn, double *cn, double *dn, double *k, double *w)
{
    *k = sin(pd_th0 / 2);
    *w = sqrt(pd_g / pd_l);
    double K = gsl_sf_ellint_Kcomp(*k, GSL_PREC_DOUBLE);
    gsl_sf_elljac_e(K - *w * t, *k * *k, sn, cn, dn);
}
static double pd_x(double t)
{
    double sn, cn, dn, k, w;
    pd_jac(t, &sn, &cn, &dn, &k, &w);
    return 2 * pd_l * k * sn * dn;
}
static double pd_y(double t)
{
    double sn, cn, dn, k, w;
    pd_jac(t, &sn, &cn, &dn, &k, &w);
    return -pd_l * (1 - 2 * k * k * sn * sn);
}
static double pd_xd(double t)
{
    double sn, cn, dn, k, w;
    pd_jac(t, &sn, &cn, &dn, &k, &w);
    return -2 * pd_l * k * w * cn * (dn * dn - k * k * sn * sn);
}

typedef struct ccase {
    const char *what, *file, *text;
    const char *set[2];
    double val[2];
    truth t[4];
} ccase;

static const char wire_cartesian[] =
    "parameters: {m: 1.0, omega: 2.0, r0: 0.1}\n"
    "coordinates: [x, y]\n"
    "mass: [m, m]\n"
    "constraints: {wire: -x*sin(omega*t) + y*cos(omega*t)}\n"
    "initial: {q: {x: r0, y: 0}, v: {x: 0, y: omega*r0}}\n"
    "simulate: {t_end: 2, dt: 0.01}\n";

static const ccase cases[] = {
    { "Atwood machine", "atwood.yaml", NULL, { NULL }, { 0 },
      { { "y1", aw_y1 }, { "y2", aw_y2 }, { "y1'", aw_v1 }, { "lambda_string", aw_lam } } },
    { "bead on a rotating wire (Cartesian)", NULL, wire_cartesian, { NULL }, { 0 },
      { { "x", wr_x }, { "y", wr_y }, { "x'", wr_xd }, { "y'", wr_yd } } },
    { "bead on a rotating wire (embedding)", "rotating_wire.yaml", NULL, { "omega", "r0" },
      { 2.0, 0.1 }, { { "r", wr_r }, { "r'", wr_rd }, { "x'", wr_xd }, { "y'", wr_yd } } },
    { "pendulum", "pendulum.yaml", NULL, { "theta0" }, { 1.2 },
      { { "x", pd_x }, { "y", pd_y }, { "x'", pd_xd }, { NULL, NULL } } },
};
#define NCASES ((int)(sizeof cases / sizeof *cases))

static void case_args(const ccase *c, pu_args *a)
{
    if (c->file)
        a->path = PU_MODEL(c->file);
    else
        a->text = c->text;
    for (int j = 0; j < 2; j++)
        if (c->set[j])
            pu_set(a, c->set[j], c->val[j]);
    a->t_end = 2;
    a->dt = 0.01;
    a->columns = "all";
}

/* max over rows and columns of |column - closed form| */
static double truth_error(const ccase *c, const pu_table *tab, const char **worst)
{
    size_t it = pu_col(tab, "t");
    double e = 0;
    for (int j = 0; j < 4 && c->t[j].col; j++) {
        size_t ic = pu_col(tab, c->t[j].col);
        for (size_t i = 0; i < tab->nrow; i++) {
            double d = fabs(PU_AT(tab, i, ic) - c->t[j].f(PU_AT(tab, i, it)));
            if (!(d <= e)) {
                e = d;
                *worst = c->t[j].col;
            }
        }
    }
    return e;
}

/* Each stepper on each closed form: the error within the bound of its
 * order, the run complete (201 rows to t = 2). */
START_TEST(closed_forms)
{
    const stepper *s = adaptive(_i / NCASES);
    if (!s)
        HS_SKIP("index %d: not an adaptive method", _i);
    const ccase *c = &cases[_i % NCASES];
    pu_args a = pu_defaults();
    case_args(c, &a);
    use(&a, s, TOL);
    pu_result r;
    pu_run_ok(&a, &r);
    ck_assert_uint_eq(r.tab.nrow, 201);
    const char *worst = "";
    double e = truth_error(c, &r.tab, &worst);
    ck_assert_msg(e < bound(s, TOL), "%s on the %s: error %.3g in %s (bound %.3g)", s->name,
                  c->what, e, worst, bound(s, TOL));
    pu_result_free(&r);
}
END_TEST

/* rk1imp really is first order: 100 times tighter tolerances cut its error
 * about 10 times (sqrt), not 100 times. */
START_TEST(rk1imp_first_order)
{
    double e[2];
    for (int j = 0; j < 2; j++) {
        pu_args a = pu_defaults();
        case_args(&cases[0], &a);
        a.t_end = 1;
        a.method = "rk1imp";
        a.rtol = a.atol = j ? 1e-9 : 1e-7;
        pu_result r;
        pu_run_ok(&a, &r);
        const char *w = "";
        e[j] = truth_error(&cases[0], &r.tab, &w);
        pu_result_free(&r);
    }
    double ratio = e[0] / e[1];
    ck_assert_msg(ratio > 3 && ratio < 30, "rk1imp: errors %.3g, %.3g (ratio %.3g)", e[0], e[1],
                  ratio);
}
END_TEST

/* ---- every shipped model, every stepper ---- */

static char **shipped;        /* never freed: the process ends */
static int nshipped;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every .yaml file in models/, however many (a fixed array once dropped the 33rd
 * silently), sorted so a failure names the same model on every system. */
static void list_models(void)
{
    if (nshipped)
        return;
    DIR *d = opendir(pu_models_dir());
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    size_t cap = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 5 || strcmp(e->d_name + len - 5, ".yaml") != 0)
            continue;
        if ((size_t)nshipped == cap) {
            cap = cap ? 2 * cap : 64;
            ck_assert_ptr_nonnull(shipped = realloc(shipped, cap * sizeof *shipped));
        }
        ck_assert_ptr_nonnull(shipped[nshipped++] = strdup(e->d_name));
    }
    closedir(d);
    qsort(shipped, (size_t)nshipped, sizeof *shipped, by_name);
}

/* Every stepper runs every shipped model to its end (t = 0.5 here, to keep
 * the suite's time) at rtol = atol = 1e-8, and the energy balance closes
 * to the stepper's accuracy. */
START_TEST(every_model)
{
    const stepper *s = adaptive(_i);
    if (!s)
        HS_SKIP("index %d: not an adaptive method", _i);
    list_models();
    ck_assert_int_ge(nshipped, 11);
    for (int j = 0; j < nshipped; j++) {
        pu_args a = pu_defaults();
        a.path = PU_MODEL(shipped[j]);
        use(&a, s, TOL);
        a.t_end = 0.5;
        pu_result r;
        pu_run(&a, &r);
        ck_assert_msg(r.rc == 0, "%s on %s: exit %d: %s", s->name, shipped[j], r.rc, r.err.msg);
        ck_assert_msg(r.tab.well_formed && r.tab.nonfinite == 0, "%s: bad CSV", shipped[j]);
        ck_assert_double_eq(r.sum.t_reached, 0.5);
        ck_assert_msg(r.sum.max_ebal < 1e3 * bound(s, TOL), "%s on %s: energy balance %.3g",
                      s->name, shipped[j], r.sum.max_ebal);
        pu_result_free(&r);
    }
}
END_TEST

/* bsimp does not crawl: the pendulum over 10 s in well under 5,000 steps
 * (it took 97,189 when components at round-off steered its sub-steps), at
 * the model's rtol 1e-10 and at 1e-8. */
START_TEST(bsimp_pendulum_steps)
{
    static const double tols[] = { 1e-10, 1e-8 };
    for (int j = 0; j < 2; j++) {
        pu_args a = pu_defaults();
        a.path = PU_MODEL("pendulum.yaml");
        a.method = "bsimp";
        a.rtol = a.atol = tols[j];
        a.interpolate = 1;          /* its own steps, not the output grid's */
        pu_result r;
        pu_run_ok(&a, &r);
        ck_assert_msg(r.sum.steps < 1000, "bsimp at %g: %ld steps", tols[j], r.sum.steps);
        pu_result_free(&r);
    }
}
END_TEST

/* ---- multistep methods across rows ---- */

/* On the Atwood machine the constraint is linear: no drift, so no
 * projection, so nothing restarts msadams and msbdf; with constant
 * acceleration any order >= 2 is exact, and they stay near round-off
 * (before, a reset at every output row left errors of 2e-5).  On the
 * rotating wire (Cartesian) the drift calls for projections, but far fewer
 * than the 200 rows (a reset at each), and the residuals stay within the
 * projection threshold: the consistency tolerance 1e-10, or 10 times the
 * stepper's error allowance per step in G, 10 |G_q| (atol + rtol |q|)
 * with atol = rtol = 1e-10 (1e-8/100) and |q| < 3 here, below 1e-9. */
START_TEST(multistep_keeps_order)
{
    const char *name = _i ? "msbdf" : "msadams";
    pu_args a = pu_defaults();
    case_args(&cases[0], &a);
    a.method = name;
    a.rtol = a.atol = TOL;
    pu_result r;
    pu_run_ok(&a, &r);
    const char *w = "";
    double e = truth_error(&cases[0], &r.tab, &w);
    ck_assert_msg(e < TOL, "%s: Atwood error %.3g in %s", name, e, w);
    ck_assert_int_eq(r.sum.projections, 0);
    pu_result_free(&r);
    a = pu_defaults();
    case_args(&cases[1], &a);
    a.method = name;
    a.rtol = a.atol = TOL;
    pu_run_ok(&a, &r);
    ck_assert_msg(r.sum.projections < 20, "%s: %ld projections", name, r.sum.projections);
    ck_assert_msg(r.sum.max_G <= 1e-9 && r.sum.max_Gdot <= 1e-9, "%s: |G| %.3g |Gdot| %.3g",
                  name, r.sum.max_G, r.sum.max_Gdot);
    pu_result_free(&r);
}
END_TEST

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

/* ---- the energy balance in every form ---- */

/* Forms where E misses a part of the motion: an embedding whose frame
 * slides (X_t . DX q' != 0: a kinetic term linear in q') with an ambient
 * damping force and a moving constraint, a Cartesian model with a
 * time-dependent mass and potential; energy_balance closes to 1e-9.  And
 * the wire as a `lagrangian`: U is then -L(t, q, 0), so E = T2 + U is the
 * Jacobi integral, conserved, and nothing does work. */
static const char *const forms[] = {
    "parameters: {m: 1.0, omega: 1.0}\n"
    "coordinates: [r]\n"
    "lagrangian: 0.5*m*(r'^2 + omega^2*r^2)\n"
    "initial: {q: {r: 0.2}}\n"
    "simulate: {t_end: 2, dt: 0.01, rtol: 1e-11, atol: 1e-11}\n",

    "parameters: {m: 1.3, c: 0.7, k: 0.2, g: 9.81, l: 1.1}\n"
    "coordinates: [r, th]\n"
    "embedding:\n"
    "  x: r*cos(th) + c*t + 0.3*sin(2*t)\n"
    "  y: r*sin(th)\n"
    "mass: [m, m]\n"
    "potential: m*g*y\n"
    "forces: {x: -k*x', y: -k*y'}\n"
    "constraints: {rod: r - l - 0.1*sin(t)}\n"
    "initial: {q: {r: 1.1, th: -1.2}, v: {r: 0.1, th: 0.3}}\n"
    "simulate: {t_end: 3, dt: 0.01, rtol: 1e-11, atol: 1e-11}\n",

    "parameters: {m: 1.0, g: 9.81}\n"
    "coordinates: [x, y]\n"
    "mass: [m*(1 + 0.1*t), m*(1 + 0.1*t)]\n"
    "potential: m*g*y*(1 + 0.2*sin(t))\n"
    "forces: {x: -0.1*x'}\n"
    "constraints: {rod: x^2 + y^2 - 1}\n"
    "initial: {q: {x: 0.6, y: -0.8}}\n"
    "simulate: {t_end: 3, dt: 0.01, rtol: 1e-11, atol: 1e-11}\n",
};

START_TEST(balance_every_form)
{
    pu_args a = pu_defaults();
    a.text = forms[_i];
    a.columns = "t,E,W_R,W_nc,W_t,energy_balance";
    pu_result r;
    pu_run_ok(&a, &r);
    double moved = pu_maxabs(&r.tab, "W_R") + pu_maxabs(&r.tab, "W_nc") +
                   pu_maxabs(&r.tab, "W_t");
    if (_i == 0) {
        size_t iE = pu_col(&r.tab, "E");
        double dE = 0;
        for (size_t i = 0; i < r.tab.nrow; i++)
            dE = fmax(dE, fabs(PU_AT(&r.tab, i, iE) - PU_AT(&r.tab, 0, iE)));
        ck_assert_msg(moved == 0 && dE < 1e-10, "lagrangian: work %.3g, E drifts %.3g", moved,
                      dE);
    } else {
        ck_assert_msg(moved > 1e-2, "form %d: nothing does work (%.3g)", _i, moved);
    }
    ck_assert_msg(pu_maxabs(&r.tab, "energy_balance") < 1e-9, "form %d: balance %.3g", _i,
                  pu_maxabs(&r.tab, "energy_balance"));
    pu_result_free(&r);
}
END_TEST

START_TEST(balance_every_model)
{
    list_models();
    for (int j = 0; j < nshipped; j++) {
        pu_args a = pu_defaults();
        a.path = PU_MODEL(shipped[j]);
        a.t_end = 2;
        pu_result r;
        pu_run_ok(&a, &r);
        ck_assert_msg(r.sum.max_ebal < 1e-8, "%s: energy balance %.3g", shipped[j],
                      r.sum.max_ebal);
        pu_result_free(&r);
    }
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

/* ---- the table of methods ---- */

/* Every entry has a name, a way to step (a gsl_odeiv2 type or its own
 * advance), a tolerance factor, and names are unique; the helper of a
 * multistep method is a one-step method of the table. */
START_TEST(method_table)
{
    int n = nsteppers();
    ck_assert_int_ge(n, 12);
    for (int i = 0; i < n; i++) {
        const hs_stepper *s = hs_steppers[i];
        ck_assert_ptr_eq(hs_stepper_find(s->name), s);
        ck_assert_msg((s->gsl != NULL) != (s->advance != NULL), "%s: one way to step",
                      s->name);
        ck_assert_msg(!(s->flags & HS_STEP_FIXED) == !s->advance, "%s: fixed = own", s->name);
        ck_assert_msg(!(s->flags & HS_STEP_DENSE) == !s->dense && !s->dense == !s->dense_at,
                      "%s: dense output hooks", s->name);
        ck_assert(s->tol_factor > 0 && s->tol_factor <= 1 && s->order >= 0 && s->about);
        const hs_stepper *h = s->helper ? s->helper : s;
        ck_assert_msg(!(h->flags & HS_STEP_MULTISTEP) && hs_stepper_find(h->name) == h,
                      "%s: helper", s->name);
        ck_assert_msg((s->flags & HS_STEP_MULTISTEP) || !s->helper, "%s", s->name);
    }
    char names[512];
    hs_stepper_names(names, sizeof names);
    ck_assert_str_eq(names + strlen(names) - strlen(hs_steppers[n - 1]->name),
                     hs_steppers[n - 1]->name);
    ck_assert_ptr_null(hs_stepper_find("rk9"));
    ck_assert_ptr_null(hs_stepper_find(NULL));
    /* no method named: the default, an entry of the table that says so */
    ck_assert_ptr_eq(hs_stepper_find(""), hs_stepper_default);
    ck_assert_ptr_eq(hs_stepper_find(hs_stepper_default->name), hs_stepper_default);
    ck_assert_ptr_nonnull(strstr(hs_stepper_default->about, "the default"));
}
END_TEST

/* An unknown simulate.method loads (the model knows no methods) and is
 * refused by the table at its place in the file, exit 2; from the command
 * line (no place) exit 1; a known one passes. */
START_TEST(method_unknown_positioned)
{
    static const char text[] = "coordinates: [x]\nmass: [1]\ninitial: {q: {x: 0}}\n"
                               "simulate:\n  t_end: 1\n  method: rk9\n";
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("m.yaml", text, NULL, &err);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(hs_stepper_check(m, &err), 2);
    ck_assert_int_eq(err.line, 6);
    ck_assert_int_eq(err.column, 11);
    ck_assert_str_eq(err.file, "m.yaml");
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown method 'rk9' (did you mean 'rk2'?); "
                                 "choose one of: rk2 rk4"));
    hs_model_free(m);

    hs_overrides ov;
    hs_overrides_init(&ov);
    snprintf(ov.s.method, sizeof ov.s.method, "nope");
    hs_error_init(&err);
    m = hs_model_load_string("m.yaml", text, &ov, &err);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(hs_stepper_check(m, &err), 1);
    ck_assert_int_eq(err.line, 0);
    ck_assert_ptr_nonnull(strstr(err.msg, "unknown method 'nope'"));
    hs_model_free(m);

    snprintf(ov.s.method, sizeof ov.s.method, "dop853");
    hs_error_init(&err);
    m = hs_model_load_string("m.yaml", text, &ov, &err);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(hs_stepper_check(m, &err), 0);
    hs_model_free(m);
}
END_TEST

/* Every option every method declares (hs_stepper.options): well formed;
 * a value in its range is accepted and handed to the method; values out of
 * it (below, above, not finite) are refused with a message naming it and
 * its range; a method that does not declare it refuses it. */
static void set_num(hs_model *m, hs_numset i, double x)
{
    *(double *)((char *)&m->set + hs_numsets[i].off) = x;
}

START_TEST(method_options)
{
    static const char text[] = "coordinates: [x]\nmass: [1]\ninitial: {q: {x: 0}}\n"
                               "simulate: {t_end: 1}\n";
    const hs_stepper *s = hs_steppers[_i];
    ck_assert_uint_le(s->noptions, HS_STEP_MAXOPT);
    ck_assert(!s->noptions == !s->options);
    for (size_t j = 0; j < s->noptions; j++) {
        const hs_step_option *o = &s->options[j];
        ck_assert_msg(o->name && o->help && o->range && o->who && o->without,
                      "%s: option %zu described", s->name, j);
        ck_assert_msg(o->type == HS_STEP_OPT_NUMBER && (int)o->setting >= 0 &&
                      o->setting < HS_NUM_COUNT && o->min < o->max, "%s: %s", s->name,
                      o->name);
        ck_assert_msg(isnan(o->def) || (o->def > o->min && o->def <= o->max),
                      "%s: %s's default in its range", s->name, o->name);
        hs_error err;
        hs_error_init(&err);
        hs_model *m = hs_model_load_string("m.yaml", text, NULL, &err);
        ck_assert_ptr_nonnull(m);
        double val[HS_STEP_MAXOPT], in = isfinite(o->max) ? o->max : o->min + 1;
        /* not given: the default */
        ck_assert_int_eq(hs_stepper_options(m, s, val, &err), 0);
        ck_assert(isnan(o->def) ? isnan(val[j]) : val[j] == o->def);
        /* accepted */
        set_num(m, o->setting, in);
        ck_assert_int_eq(hs_stepper_options(m, s, val, &err), 0);
        ck_assert_double_eq(val[j], in);
        /* refused, with the option's name and range */
        double out[] = { o->min, o->min - 1, (double)INFINITY, -(double)INFINITY,
                         isfinite(o->max) ? 2 * o->max + 1 : (double)INFINITY };
        for (size_t k = 0; k < sizeof out / sizeof *out; k++) {
            set_num(m, o->setting, out[k]);
            hs_error_init(&err);
            ck_assert_int_eq(hs_stepper_options(m, s, val, &err), HS_EXIT_USAGE);
            char want[160];
            snprintf(want, sizeof want, "the %s must be %s", o->name, o->range);
            ck_assert_msg(strstr(err.msg, want) != NULL, "%s: %g: %s", s->name, out[k],
                          err.msg);
        }
        /* another method without it refuses it, naming those that take it */
        set_num(m, o->setting, in);
        for (size_t k = 0; hs_steppers[k]; k++) {
            const hs_stepper *t = hs_steppers[k];
            int has = 0;
            for (size_t l = 0; l < t->noptions; l++)
                has |= t->options[l].setting == o->setting;
            hs_error_init(&err);
            ck_assert_int_eq(hs_stepper_options(m, t, val, &err), has ? 0 : HS_EXIT_USAGE);
            if (!has)
                ck_assert_msg(strstr(err.msg, s->name) && strstr(err.msg, t->name) &&
                              strstr(err.msg, o->without), "%s: %s", t->name, err.msg);
        }
        hs_model_free(m);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("steppers");
    TCase *tc = tcase_create("closed_forms");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, method_table);
    tcase_add_test(tc, method_unknown_positioned);
    tcase_add_loop_test(tc, method_options, 0, NSTEPPERS);
    tcase_add_loop_test(tc, closed_forms, 0, NSTEPPERS * NCASES);
    tcase_add_test(tc, rk1imp_first_order);
    tcase_add_loop_test(tc, multistep_keeps_order, 0, 2);
    suite_add_tcase(s, tc);

    tc = tcase_create("models");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, every_model, 0, NSTEPPERS);
    tcase_add_test(tc, bsimp_pendulum_steps);
    tcase_add_test(tc, balance_every_model);
    tcase_add_loop_test(tc, balance_every_form, 0, (int)(sizeof forms / sizeof *forms));
    suite_add_tcase(s, tc);

    tc = tcase_create("energy");
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
