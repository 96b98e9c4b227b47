/* libholosim's own error paths and the row callback (make check, through
 * tests/api.sh): each bad input gives its exit code, message and position,
 * nothing printed; a callback sees the rows the buffer holds and can stop
 * the run.  Prints "N passed, N failed". */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "holosim.h"

static int pass, fail;
#define CHECK(c, ...) do { if (c) pass++; else { fail++; printf("FAIL: " __VA_ARGS__); \
                                                   printf("\n"); } } while (0)

typedef struct rows {
    size_t n, ncols, stop_at;
    double sum;            /* of every number seen */
} rows;

static int on_row(void *ctx, const double *row, size_t ncols)
{
    rows *r = ctx;
    r->ncols = ncols;
    for (size_t j = 0; j < ncols; j++)
        r->sum += row[j];
    return ++r->n == r->stop_at;
}

int main(void)
{
    holosim_error e;
    const char *pend = "models/pendulum.yaml";

    /* overrides: not NAME=EXPR; an expression that does not parse (placed
     * in the --set text, as the command line shows it); an unknown name */
    const char *s1[] = { "theta0" };
    CHECK(!holosim_model_load(pend, s1, 1, &e) && e.code == 1 &&
          strstr(e.message, "NAME=EXPR") && strstr(e.message, "theta0"), "set without =: %s",
          e.text);
    const char *s2[] = { "theta0=1+" };
    CHECK(!holosim_model_load(pend, s2, 1, &e) && e.code == 1 &&
          strcmp(e.text, "holosim: error: set theta0=1+: expression expected at end of input "
                 "(an operand is missing here: a number, a name or a parenthesis)\n"
                 "    set theta0=1+\n                 ^\n") == 0,
          "set not an expression: %s", e.text);
    const char *s3[] = { "nope=1" };
    CHECK(!holosim_model_load(pend, s3, 1, &e) && e.code == 1 &&
          strcmp(e.text, "holosim: error: set nope: the model has no parameter 'nope'\n") == 0,
          "unknown parameter: %s", e.text);
    CHECK(!holosim_model_load(NULL, NULL, 0, &e) && e.code == 1, "NULL path");
    CHECK(!holosim_model_load_text("t", NULL, NULL, 0, &e) && e.code == 1, "NULL text");
    CHECK(!holosim_model_load("no/such.yaml", NULL, 0, &e) && e.code == 2 &&
          strstr(e.text, "no/such.yaml") && strstr(e.text, "No such file"), "missing: %s",
          e.text);
    /* a model error in a text: its position */
    CHECK(!holosim_model_load_text("m.yaml", "coordinates: [x]\nmass: [1]\npotential: 2*x)\n"
                                   "initial: {q: {x: 0}, v: {x: 0}}\n", NULL, 0, &e) &&
          e.code == 2 && e.line == 3 && strcmp(e.file, "m.yaml") == 0 &&
          strncmp(e.text, "m.yaml:3:", 9) == 0 && strstr(e.text, "    potential: 2*x)\n"),
          "model error: %s", e.text);

    const char *s4[] = { "l=2" };
    holosim_model *m = holosim_model_load(pend, s4, 1, &e);
    CHECK(m != NULL, "load: %s", e.text);
    if (!m)
        goto out;
    double l = 0;
    CHECK(holosim_model_nparams(m) == 4 && strcmp(holosim_model_param(m, 1, &l), "l") == 0 &&
          l == 2 && !holosim_model_param(m, 4, NULL), "parameters");
    holosim_run_options o;
    holosim_run_options_init(&o);
    o.output_mode = 7;
    CHECK(!holosim_run(m, &o, NULL, NULL, &e) && e.code == 1 && strstr(e.message, "output_mode"),
          "output_mode 7: %s", e.text);
    holosim_run_options_init(&o);
    o.method = "a-name-far-too-long-for-a-method";
    CHECK(!holosim_run(m, &o, NULL, NULL, &e) && e.code == 1, "long method: %s", e.text);
    holosim_run_options_init(&o);
    o.dt = -1;
    CHECK(!holosim_run(m, &o, NULL, NULL, &e) && e.code == 1 && strstr(e.message, "dt"),
          "dt < 0: %s", e.text);

    /* the callback sees what the buffer holds, and stops the run */
    holosim_run_options_init(&o);
    o.t_end = 1;
    holosim_result *buf = holosim_run(m, &o, NULL, NULL, &e);
    rows seen = { 0 };
    holosim_result *cb = holosim_run(m, &o, on_row, &seen, &e);
    CHECK(buf && cb, "runs: %s", e.text);
    if (buf && cb) {
        size_t n = holosim_result_nrows(buf), c = holosim_result_ncols(buf);
        double sum = 0;
        for (size_t i = 0; i < n * c; i++)
            sum += holosim_result_data(buf)[i];
        CHECK(seen.n == n && holosim_result_nrows(cb) == n && seen.ncols == c &&
              holosim_result_ncols(cb) == c && !holosim_result_data(cb) && seen.sum == sum,
              "callback rows %zu, buffer %zu", seen.n, n);
        CHECK(n == 101 && strcmp(holosim_result_column(buf, 0), "t") == 0 &&
              !holosim_result_column(buf, c) && holosim_result_steps(buf) > 0,
              "the result's shape");
    }
    rows stop = { .stop_at = 5 };
    CHECK(!holosim_run(m, &o, on_row, &stop, &e) && e.code == 130 && stop.n == 5 &&
          strstr(e.message, "stopped"), "stop: %zu rows, %s", stop.n, e.text);
    holosim_result_free(buf);
    holosim_result_free(cb);

    /* check: the numbers of `holosim check` */
    holosim_check_report rep;
    CHECK(holosim_check(m, &rep, &e) == 0 && rep.n == 2 && rep.k == 1 && rep.rank == 1 &&
          rep.max_G < 1e-15 && rep.nparams == 4, "check: %s", e.text);
    /* modes: omega^2 = g / l */
    holosim_modes md;
    CHECK(holosim_modes_find(m, &md, &e) == 0 && md.count == 1 &&
          fabs(md.omega[0] * md.omega[0] - 9.81 / 2) < 1e-12 && md.stable, "modes: %s", e.text);
    holosim_modes_free(&md);
    /* a run with sensitivities: its fixed columns, what it refuses */
    const char *pl[] = { "l" };
    holosim_run_options so;
    holosim_run_options_init(&so);
    so.t_end = 1;
    holosim_result *sr = holosim_sensitivity(m, pl, 1, &so, NULL, NULL, &e);
    CHECK(sr && holosim_result_ncols(sr) == 1 + 2 * 2 + 1 + 2 * 2 + 1 &&
          strcmp(holosim_result_column(sr, 6), "dx/dl") == 0 &&
          strcmp(holosim_result_column(sr, 10), "dlambda_rod/dl") == 0 &&
          holosim_result_nrows(sr) == 101, "sensitivity: %s", e.text);
    holosim_result_free(sr);
    so.columns = "t,x";
    CHECK(!holosim_sensitivity(m, pl, 1, &so, NULL, NULL, &e) && e.code == 1 &&
          strstr(e.message, "does not take columns") && !strstr(e.text, "--"),
          "sensitivity columns: %d %s", e.code, e.text);
    CHECK(!holosim_sensitivity(m, NULL, 0, NULL, NULL, NULL, &e) && e.code == 1 &&
          strstr(e.message, "at least one parameter"), "sensitivity none: %d %s", e.code,
          e.text);
    rows sstop = { .stop_at = 3 };
    CHECK(!holosim_sensitivity(m, pl, 1, NULL, on_row, &sstop, &e) && e.code == 130 &&
          sstop.n == 3, "sensitivity stop: %zu rows, %s", sstop.n, e.text);
    holosim_model_free(m);

    /* analyses of a model whose kernels depend on time: exit 2 */
    m = holosim_model_load("models/kapitza.yaml", NULL, 0, &e);
    holosim_equilibrium eq;
    CHECK(m && holosim_equilibrium_find(m, &eq, &e) == 2 && e.line > 0, "time-dependent: %d %s",
          e.code, e.text);
    holosim_equilibrium_free(&eq);

    /* the motion's analyses: a period, an interval that is no time; the
     * options named as the library names them (no command-line flag) */
    holosim_floquet fl;
    double bad[] = { 0, -1, NAN, INFINITY };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        CHECK(m && holosim_floquet_find(m, bad[i], &fl, &e) == 2 &&
              strstr(e.message, "the period must be positive and finite") && !strstr(e.text, "--"),
              "floquet period %g: %d %s", bad[i], e.code, e.text);
        holosim_floquet_free(&fl);
    }
    /* Kapitza's pendulum upright at w = 30 (a^2 w^2 < 2 g l): unstable,
     * the multipliers' product 1 (the flow keeps the tangent volume over
     * a period) */
    CHECK(m && holosim_floquet_find(m, 6.283185307179586 / 30, &fl, &e) == 0 && fl.dim == 2 &&
          strcmp(fl.verdict, "unstable") == 0 && fl.mu_max > 1.01 &&
          fabs(fl.re[0] * fl.re[1] - fl.im[0] * fl.im[1] - 1) < 1e-6, "floquet: %s (%s)", e.text,
          fl.verdict ? fl.verdict : "-");
    holosim_floquet_free(&fl);
    holosim_lyapunov ly;
    CHECK(m && holosim_lyapunov_find(m, 1, -1, 0, &ly, &e) == 2 && strstr(e.message, "every") &&
          !strstr(e.text, "--"), "lyapunov every -1: %d %s", e.code, e.text);
    holosim_lyapunov_free(&ly);
    CHECK(m && holosim_lyapunov_find(m, 1, 0.1, 1, &ly, &e) == 0 && ly.count == 2 &&
          ly.nrows == 10 && ly.history[(ly.nrows - 1) * 3] == 1 && ly.lambda[0] >= ly.lambda[1],
          "lyapunov: %s", e.text);
    holosim_lyapunov_free(&ly);
    holosim_model_free(m);
    m = holosim_model_load("models/cart_pole.yaml", NULL, 0, &e);
    holosim_statespace ss;
    const char *u[] = { "G" }, *y[] = { "x", "nope" };
    CHECK(m && holosim_linearize(m, u, 1, NULL, 0, 0, &ss, &e) == 2 &&
          strstr(e.message, "inputs: the model has no input 'G'") && !strstr(e.text, "--"),
          "linearize input: %d %s", e.code, e.text);
    holosim_statespace_free(&ss);
    CHECK(m && holosim_linearize(m, NULL, 0, y, 2, 0, &ss, &e) == 2 &&
          strstr(e.message, "outputs: 'nope' is no column") && !strstr(e.text, "--"),
          "linearize output: %d %s", e.code, e.text);
    holosim_statespace_free(&ss);
    CHECK(m && holosim_linearize(m, NULL, 0, y, 1, 0, &ss, &e) == 0 && ss.nx == 4 && ss.nu == 1 &&
          ss.ny == 1 && strcmp(ss.uname[0], "F") == 0 && strcmp(ss.yname[0], "x") == 0 &&
          ss.C[0 * 4 + 0] == 1, "linearize: %s", e.text);
    holosim_statespace_free(&ss);
    holosim_model_free(m);
out:
    printf("%d passed, %d failed\n", pass, fail);
    return fail != 0;
}
