/* Every stepper under error control that holosim offers (src/integrate) against
 * closed forms, at rtol = atol = 1e-8 over t in [0, 2]: an Atwood machine
 * (constant acceleration), a bead on a rotating wire in two forms
 * (r = r0 cosh(omega t)), a pendulum (Jacobi elliptic functions); every
 * shipped model with every stepper; bsimp's step count; multistep methods
 * across rows; the energy balance in every form; the method table (names
 * unique, a way to step for each, an unknown name positioned, every
 * method's options).  Rows inside steps, E and H in moving charts and
 * output times are in check_steppers_rows.c; the closed forms are shared
 * with it (tests/steppers_fixture.h).
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

#include "check_main.h"
#include "steppers_fixture.h"

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

    return s;
}

HS_CHECK_MAIN(suite)
