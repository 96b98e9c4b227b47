/* The library inside a host program (issue 24): the host keeps GSL's error
 * handler as it set it, GSL's default (abort) or its own, and the library
 * neither aborts through it nor leaves another in its place.  This suite's
 * main does not switch the handler off (no HS_CHECK_MAIN): each test sets
 * the handler it stands for.
 *
 *   load      a mass matrix not positive definite at the initial state
 *             (GSL's Cholesky reports it through the handler): exit 2
 *   accel     the accelerations at a state where that mass matrix is not
 *             positive definite: exit 4
 *   run       a run whose mass matrix stops being positive definite: exit 4
 *   analysis  the equilibrium and modes of a model (GSL's eigensolvers)
 *   battery   through libholosim's entry points: every method of
 *             hs_steppers[] on a constrained model, check, equilibrium,
 *             modes, linearize, floquet and lyapunov on shipped models, and
 *             the failures: a redundant set, a singular position, a mass
 *             matrix that turns singular (exit 4), no equilibrium (exit 3),
 *             a non-finite force during a run
 * each under GSL's default handler (an abort would fail the test: Check
 * runs each test in its own process), under a host handler that counts
 * its calls, and (battery) under one that abort()s: never called, and
 * still installed afterwards.  holosim calls no GSL routine in a way that
 * reaches the handler (src/linalg/linalg.h). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "../include/holosim.h"
#include "analysis/analysis.h"
#include "dynamics/dynamics.h"
#include "integrate/integrate.h"
#include "model/model.h"
#include "run_csv.h"

static int host_calls;

static void host_handler(const char *reason, const char *file, int line, int gsl_errno)
{
    (void)reason;
    (void)file;
    (void)line;
    (void)gsl_errno;
    host_calls++;
}

static void host_abort(const char *reason, const char *file, int line, int gsl_errno)
{
    fprintf(stderr, "GSL's handler reached: %s:%d: %s (%d)\n", file, line, reason, gsl_errno);
    abort();
}

/* loop index 0: GSL's default handler; 1: the host's own; 2: one that aborts */
static gsl_error_handler_t *host(int i)
{
    host_calls = 0;
    gsl_error_handler_t *h = i == 2 ? host_abort : i ? host_handler : NULL;
    gsl_set_error_handler(h);
    return h;
}

/* The handler the host set is the one installed, and was never called. */
static void host_kept(gsl_error_handler_t *h)
{
    ck_assert_ptr_eq(gsl_set_error_handler(h), h);
    ck_assert_int_eq(host_calls, 0);
}

static const char *const not_pd_at_start =
    "coordinates: [x, y]\nmass: [[1, 2], [2, 1]]\ninitial: {q: {x: 0, y: 0}}\n";
/* positive definite while |y| < 1 */
static const char *const coupled =
    "coordinates: [x, y]\nmass: [[1, y], [y, 1]]\n"
    "initial: {q: {x: 0, y: 0}, v: {x: 0, y: 1}}\nsimulate: {t_end: 3, dt: 0.5}\n";

START_TEST(load)
{
    gsl_error_handler_t *h = host(_i);
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("<embed>", not_pd_at_start, NULL, &err);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(err.code, HS_EXIT_MODEL);
    ck_assert_msg(strstr(err.msg, "not positive definite") != NULL, "%s", err.msg);
    host_kept(h);
}
END_TEST

START_TEST(accel)
{
    gsl_error_handler_t *h = host(_i);
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("<embed>", coupled, NULL, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    hs_work *w = hs_work_new(m);
    ck_assert_ptr_nonnull(w);
    double q[2] = { 0, 0.5 }, v[2] = { 0, 1 }, a[2];
    ck_assert_int_eq(hs_dyn_accel(m, w, 0, q, v, a, NULL), 0);
    q[1] = 2;                                  /* [[1, 2], [2, 1]]: eigenvalue -1 */
    ck_assert_int_eq(hs_dyn_accel(m, w, 0, q, v, a, NULL), HS_EXIT_NUMERIC);
    ck_assert_msg(strstr(hs_work_err(w)->msg, "not positive definite") != NULL, "%s", hs_work_err(w)->msg);
    hs_work_free(w);
    hs_model_free(m);
    host_kept(h);
}
END_TEST

START_TEST(run)
{
    gsl_error_handler_t *h = host(_i);
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("<embed>", coupled, NULL, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    char *csv = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&csv, &len);
    ck_assert_ptr_nonnull(f);
    hs_run_opts o = { .precision = 17 };
    hs_summary sum;
    int rc = run_csv(m, o, f, NULL, NULL, &sum, &err);
    fclose(f);
    /* no force: y = t, so the mass matrix is singular at t = 1 */
    ck_assert_int_eq(rc, HS_EXIT_NUMERIC);
    ck_assert_msg(sum.t_reached < 1.0 + 1e-9, "t_reached %g", sum.t_reached);
    ck_assert(sum.rows >= 2);                  /* t = 0, 0.5 */
    free(csv);
    hs_model_free(m);
    host_kept(h);
}
END_TEST

START_TEST(analysis)
{
    gsl_error_handler_t *h = host(_i);
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("<embed>",
                                       "coordinates: [x]\nmass: [2]\npotential: 4.5*x^2\n"
                                       "initial: {q: {x: 0.3}}\n", NULL, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    hs_an *a = hs_an_new(m, &err);
    ck_assert_msg(a != NULL, "%s", err.msg);
    hs_equil eq;
    ck_assert_int_eq(hs_an_equilibrium(a, m->q0, &eq, &err), 0);
    ck_assert_double_eq_tol(eq.q[0], 0, 1e-12);
    hs_modes md;
    ck_assert_int_eq(hs_an_modes(a, &eq, &md, &err), 0);
    ck_assert_double_eq_tol(md.omega[0], sqrt(4.5), 1e-12);   /* sqrt(K / M), K = 9 */
    hs_an_modes_free(&md);
    hs_an_equil_free(&eq);
    hs_an_free(a);
    hs_model_free(m);
    host_kept(h);
}
END_TEST

/* One run of a model file with a method ("" the model's), t_end 0.5; its
 * exit code. */
static int api_run(const holosim_model *m, const char *method, double t_end)
{
    holosim_run_options o;
    holosim_run_options_init(&o);
    o.method = method && *method ? method : NULL;
    o.t_end = t_end;
    holosim_error err;
    holosim_result *r = holosim_run(m, &o, NULL, NULL, &err);
    holosim_result_free(r);
    return r ? 0 : err.code;
}

/* check, equilibrium, modes, linearize on a loaded model; the codes
 * returned are the model's business, the handler is the test's */
static void api_analyses(const holosim_model *m)
{
    holosim_error err;
    holosim_check_report cr;
    holosim_check(m, &cr, &err);
    holosim_equilibrium eq;
    holosim_equilibrium_find(m, &eq, &err);
    holosim_equilibrium_free(&eq);
    holosim_modes md;
    holosim_modes_find(m, &md, &err);
    holosim_modes_free(&md);
    holosim_statespace ss;
    holosim_linearize(m, NULL, 0, NULL, 0, 0, &ss, &err);
    holosim_statespace_free(&ss);
    holosim_linearize(m, NULL, 0, NULL, 0, 1, &ss, &err);
    holosim_statespace_free(&ss);
}

static holosim_model *api_load(const char *path, const char *text)
{
    holosim_error err;
    holosim_model *m = text ? holosim_model_load_text(path, text, NULL, 0, &err)
                            : holosim_model_load(path, NULL, 0, &err);
    ck_assert_msg(m != NULL, "%s: %s", path, err.text);
    return m;
}

START_TEST(battery)
{
    gsl_error_handler_t *h = host(_i);
    holosim_error err;
    /* every method on a constrained model and on a redundant one */
    static const char *const files[] = { "models/pendulum.yaml", "models/parallelogram3.yaml" };
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        holosim_model *m = api_load(files[f], NULL);
        for (size_t i = 0; hs_steppers[i]; i++)
            api_run(m, hs_steppers[i]->name, 0.5);
        api_analyses(m);
        holosim_model_free(m);
    }
    /* the analyses on the shipped models that have something to find, a
     * singular position, a periodic and a forced motion */
    static const char *const more[] = {
        "models/double_pendulum_modes.yaml", "models/hoop_equilibrium.yaml",
        "models/nfourbar_singular.yaml", "models/cart_pole.yaml", "models/kapitza.yaml",
        "models/slider_crank.yaml"
    };
    for (size_t f = 0; f < sizeof more / sizeof *more; f++) {
        holosim_model *m = api_load(more[f], NULL);
        api_run(m, "", 1.0);
        api_analyses(m);
        holosim_floquet fl;
        holosim_floquet_find(m, 1.0, &fl, &err);
        holosim_floquet_free(&fl);
        holosim_lyapunov ly;
        holosim_lyapunov_find(m, 1.0, 0.25, 1, &ly, &err);
        holosim_lyapunov_free(&ly);
        holosim_model_free(m);
    }
    /* the failures */
    ck_assert_ptr_null(holosim_model_load_text("<embed>", not_pd_at_start, NULL, 0, &err));
    ck_assert_int_eq(err.code, HOLOSIM_EMODEL);
    holosim_model *m = api_load("<embed>", coupled);
    for (size_t i = 0; hs_steppers[i]; i++)
        if (api_run(m, hs_steppers[i]->name, 3.0) == 0)
            ck_abort_msg("%s passed a singular mass matrix", hs_steppers[i]->name);
    holosim_model_free(m);
    m = api_load("<embed>", "coordinates: [x]\nmass: [1]\npotential: x\n"
                            "initial: {q: {x: 0}}\n");
    holosim_equilibrium eq;
    ck_assert_int_eq(holosim_equilibrium_find(m, &eq, &err), HOLOSIM_EINCONSISTENT);
    holosim_equilibrium_free(&eq);
    holosim_model_free(m);
    m = api_load("<embed>", "coordinates: [x]\nmass: [1]\npotential: x^4*log(x)\n"
                            "initial: {q: {x: 0.5}, v: {x: -10}}\nsimulate: {t_end: 1}\n");
    for (size_t i = 0; hs_steppers[i]; i++)
        ck_assert_int_eq(api_run(m, hs_steppers[i]->name, 1.0), HOLOSIM_ENUMERIC);
    api_analyses(m);
    holosim_model_free(m);
    host_kept(h);
}
END_TEST

static Suite *embed_suite(void)
{
    Suite *s = suite_create("embed");
    TCase *tc = tcase_create("handler");
    tcase_add_loop_test(tc, load, 0, 2);
    tcase_add_loop_test(tc, accel, 0, 2);
    tcase_add_loop_test(tc, run, 0, 2);
    tcase_add_loop_test(tc, analysis, 0, 2);
    tcase_add_loop_test(tc, battery, 0, 3);
    tcase_set_timeout(tc, 600);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(embed_suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
