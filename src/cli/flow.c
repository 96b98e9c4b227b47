/* `holosim floquet` and `holosim lyapunov`: the stability of a motion
 * from the variational equations of the constrained flow (src/flow). */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../flow/flow.h"
#include "../io/fmt.h"
#include "../io/table.h"
#include "../util/suggest.h"

const char hs_usage_floquet[] =
    "usage: holosim floquet MODEL --period T [--find] [--set NAME=EXPR]...\n"
    "                       [--params FILE] [--method NAME] [--rtol X] [--atol X]\n"
    "                       [--csv]\n"
    "\n"
    "Floquet multipliers of the motion from the model's initial state (projected\n"
    "onto the constraints) over one period T: the monodromy matrix, the derivative\n"
    "of the state after T with respect to the state at t0, on the tangent space\n"
    "of the constraint manifold (2 (n - k) dimensions), and its eigenvalues mu,\n"
    "largest |mu| first, with the exponents log|mu| / T.  The variational\n"
    "equations come from exact symbolic Jacobians of the accelerations (the\n"
    "multipliers' derivatives through the saddle-point system included) and are\n"
    "integrated with the motion by the model's explicit method (else the default\n"
    "method) at its rtol and atol: the multipliers are as accurate as that\n"
    "integration.\n"
    "Verdict, with tolerance 1e-6: unstable when some |mu| > 1 + 1e-6; marginal\n"
    "when none is, but some mu is within 1e-6 of 1 (a neutral direction: the\n"
    "motion's own direction on an autonomous orbit); stable otherwise.\n"
    "A warning when M, Q or G at the start differ at t0 and t0 + T (the model is\n"
    "not periodic with T) and when the state after T is not the start's (the\n"
    "motion is not periodic): the multipliers are then those of that stretch.\n"
    "\n"
    "  --period T                the period: a number or an expression of the\n"
    "                            model's parameters (2*pi/w); positive and finite,\n"
    "                            exit 2 otherwise\n"
    "  --find                    first find the periodic orbit nearest the start\n"
    "                            (Newton shooting on the constraint manifold; the\n"
    "                            period an unknown, T its guess, when M, Q and G do\n"
    "                            not depend on t); exit 3 with the best point when\n"
    "                            none is found\n"
    "  --set NAME=EXPR           override a parameter (repeatable)\n"
    "  --params FILE             parameters from a YAML file\n"
    "  --input NAME=SRC          an input of the model: an expression of t, or a\n"
    "                            table FILE.csv (as for run; repeatable)\n"
    "  --method NAME, --rtol X, --atol X   the integration (as for run)\n"
    "  --native=MODE             native kernels for the variational programs\n"
    "                            (never, auto, always; same numbers): auto\n"
    "  --csv                     header mu,re,im,abs,arg,exponent,abs_max,verdict\n"
    "                            and one row per multiplier, largest |mu| first (arg\n"
    "                            in radians; abs_max the largest |mu| and verdict\n"
    "                            stable, marginal or unstable, on every row)\n"
    "\n"
    "exit status: 2 for a bad period or model (n + k > 400), 3 for an\n"
    "inconsistent start, dependent constraints or no orbit found by --find, 4\n"
    "when the integration fails.\n";

const char hs_usage_lyapunov[] =
    "usage: holosim lyapunov MODEL [--t-end T] [--every DT] [--spectrum] [--csv]\n"
    "                        [--set NAME=EXPR]... [--params FILE] [--method NAME]\n"
    "                        [--rtol X] [--atol X]\n"
    "\n"
    "Lyapunov exponents of the motion from the model's initial state, t0 to\n"
    "t_end: tangent vectors carried by the variational equations (holosim help\n"
    "floquet) on the tangent space of the constraint manifold, renormalized every\n"
    "DT (Benettin's method); with --spectrum all 2 (n - k) of them, kept\n"
    "orthonormal by Gram-Schmidt (QR), giving every exponent.  At each\n"
    "renormalization the state is projected back onto the constraints and the\n"
    "vectors onto the tangent space there.  A finite-time estimate: the\n"
    "exponents of a chaotic motion converge slowly (like 1/T) and depend on the\n"
    "start; the spectrum of a conservative system sums to 0 up to O(1/T).\n"
    "\n"
    "  --t-end T                 end time (default: the model's t_end)\n"
    "  --every DT                renormalization interval (default (t_end - t0)/100)\n"
    "  --spectrum                every exponent (2 (n - k) at most 128), else the\n"
    "                            largest\n"
    "  --csv                     header t,lambda_1[,lambda_2...] and a row of the\n"
    "                            running estimates after each renormalization, the\n"
    "                            last at t_end\n"
    "  --set, --params, --input, --method, --rtol, --atol, --native   as for\n"
    "                            floquet\n"
    "\n"
    "exit status: 2 for a bad interval or model (n + k > 6000, or > 400 with\n"
    "--spectrum; or --spectrum with 2 (n - k) > 128), 3 for an inconsistent\n"
    "start, 4 when the integration fails.\n";

#define SPECTRUM_MAX 128

static const char *num(char *buf, double x)
{
    hs_fmt_double(buf, x == 0 ? 0.0 : x);     /* no "-0" */
    return buf;
}

static int bad_value(const char *what, const char *val)
{
    hs_error err;
    hs_error_init(&err);
    hs_error_set(&err, HS_EXIT_MODEL, "%s must be a positive, finite number, got '%.60s'",
                 what, val);
    return hs_cli_fail(&err);
}

/* A name of an option's expression: a parameter, as its value. */
static const hs_node *par_lookup(void *ctx, hs_dag *d, const char *s, size_t len, int primed,
                                 size_t off, int *status, hs_error *perr)
{
    const hs_model *m = ctx;
    (void)off;
    (void)perr;
    for (size_t j = 0; j < m->npar && !primed; j++)
        if (strlen(m->pname[j]) == len && memcmp(m->pname[j], s, len) == 0) {
            *status = HS_RESOLVE_OK;
            return hs_num(d, m->pval[j]);
        }
    *status = HS_RESOLVE_UNKNOWN;
    return NULL;
}

/* --period TEXT: a number or an expression of the model's parameters
 * (2*pi/w), positive and finite; 0, or exit 2 with the message printed
 * (a caret under the place of a syntax error). */
static int eval_positive(hs_model *m, const char *opt, const char *text, double *out)
{
    hs_error pe, err;
    hs_error_init(&pe);
    hs_error_init(&err);
    hs_resolver r = { par_lookup, m, NULL };
    const hs_node *e = hs_parse(m->dag, text, strlen(text), -1, &r, &pe);
    char full[600];
    snprintf(full, sizeof full, "%s %s", opt, text);
    if (!e) {
        if (pe.code == HS_EXIT_NOMEM)
            return hs_cli_nomem();
        const char *near = NULL, *un = "unknown name '";
        if (strncmp(pe.msg, un, strlen(un)) == 0) {
            char nm[64];
            size_t len = strcspn(pe.msg + strlen(un), "'");
            snprintf(nm, sizeof nm, "%.*s", (int)(len < 63 ? len : 63), pe.msg + strlen(un));
            near = hs_nearest(nm, (const char *const *)m->pname, m->npar);
        }
        hs_error_set(&err, HS_EXIT_MODEL, "%s: %s%s%s%s (a number, or an expression of the "
                     "model's parameters)", full, pe.msg, near ? " (did you mean '" : "",
                     near ? near : "", near ? "'?)" : "");
        hs_error_locate(&err, full, strlen(full),
                        strlen(opt) + 1 + (pe.offset >= 0 ? (size_t)pe.offset : 0));
        err.line = 0;          /* not a file position: the caret alone */
        return hs_cli_fail(&err);
    }
    *out = hs_eval_tree(e, NULL);
    if (!(isfinite(*out) && *out > 0)) {
        char b[32];
        hs_fmt_double(b, *out);
        hs_error_set(&err, HS_EXIT_MODEL, "%s: the value is %s; %s must be a positive, "
                     "finite number", full, b, opt);
        return hs_cli_fail(&err);
    }
    return 0;
}

struct hs_native *hs_cli_flow_native(const opts *o, hs_fl *f, hs_fl_sens *s)
{
    char note[512];
    struct hs_native *h = hs_fl_native(f, s, o->native, &hs_cli_optnames, note, sizeof note);
    if (note[0] && !o->quiet)
        fprintf(stderr, "holosim: %s\n", note);
    return h;
}

/* Options, one MODEL, loaded with the dense kernels, the variational
 * system: 0, or -1 with *rc the exit code (o freed, nothing else held). */
static int open_flow(int argc, char **argv, const char *usage, unsigned cmd, const char *name,
                     opts *o, hs_model **m, hs_fl **f, hs_native **nat, int *rc)
{
    *m = NULL;
    *f = NULL;
    *nat = NULL;
    if (hs_cli_begin(argc, argv, usage, cmd, o, rc) || hs_cli_one_model(o, usage, name, rc))
        return -1;
    o->ov.dense = 1;
    if (!(*m = hs_cli_load(o, rc)))
        return -1;
    hs_error err;
    hs_error_init(&err);
    /* the largest Lyapunov exponent forms nothing dense of size n + k */
    if (!(*f = (cmd == CMD_LYAPUNOV && !o->spectrum ? hs_fl_new_sparse : hs_fl_new)(*m, &err))) {
        *rc = hs_cli_fail(&err);
        hs_model_free(*m);
        hs_cli_free_opts(o);
        return -1;
    }
    *nat = hs_cli_flow_native(o, *f, NULL);
    return 0;
}

static void header(const hs_model *m, const hs_fl *f, size_t dim)
{
    char sizes[96], r[32], a[32];
    printf("model: %s%s%s\n", m->file, m->name[0] ? " -- " : "", m->name);
    printf("form: %s; %s, %zu degree%s of freedom\n", hs_model_form_name(m),
           hs_model_sizes(m, sizes, sizeof sizes), dim / 2, dim == 2 ? "" : "s");
    printf("integration: %s, rtol %s, atol %s (the motion and its variational equations)\n",
           hs_fl_method(f), num(r, m->set.rtol), num(a, m->set.atol));
}

/* The warnings of a Floquet analysis: the model or the motion not periodic. */
static void periodicity(hs_fl *f, const hs_model *m, const hs_floquet *fl, int csv)
{
    char what[160], b[32], c[32];
    if (!hs_fl_periodic_model(f, m->t0, fl->T, fl->x0, fl->x0 + m->n, what, sizeof what))
        fprintf(stderr, "holosim: warning: %s: the model is not periodic with T = %s: at the "
                "start state, %s between t0 and t0 + T (the multipliers are those of this "
                "stretch of motion, not of a periodic one)\n", m->file, num(b, fl->T), what);
    double scale = 1;
    for (size_t i = 0; i < 2 * m->n; i++)
        scale = fmax(scale, fabs(fl->x0[i]));
    int periodic = fl->gap <= 1e-6 * scale;
    if (!periodic)
        fprintf(stderr, "holosim: warning: %s: the motion is not periodic with T = %s: max "
                "|x(t0 + T) - x(t0)| = %s over q and v\n", m->file, num(b, fl->T),
                num(c, fl->gap));
    if (!csv)
        printf("periodicity: max |x(t0 + T) - x(t0)| = %s over q and v (%s)\n",
               num(b, fl->gap), periodic ? "periodic to 1e-6" : "not periodic");
}

static void print_floquet(const hs_model *m, const hs_floquet *fl, int csv)
{
    char b[6][32];
    static const char *const head[] = { "mu", "re", "im", "abs", "arg", "exponent",
                                        "abs_max", "verdict" };
    hs_table t;
    hs_table_init(&t, stdout, HS_TABLE_SHORTEST);
    if (csv)
        hs_table_header(&t, head, sizeof head / sizeof *head);
    else
        printf("multipliers (eigenvalues of the monodromy on the tangent space, largest "
               "|mu| first; exponent = log|mu| / T):\n");
    for (size_t i = 0; i < fl->dim; i++) {
        double re = fl->re[i], im = fl->im[i], ab = hypot(re, im), arg = atan2(im, re);
        double ex = log(ab) / fl->T;
        if (csv) {
            const double v[] = { re, im, ab, arg, ex, fl->mu_max };
            hs_table_int(&t, (long)i + 1);
            for (size_t j = 0; j < sizeof v / sizeof *v; j++)
                hs_table_num(&t, v[j]);
            hs_table_text(&t, hs_fl_verdict_names[fl->verdict]);
            hs_table_end(&t);
        } else
            printf("  mu_%zu = %s %s %si   |mu| = %s   arg = %s   exponent = %s\n", i + 1,
                   num(b[0], re), im < 0 ? "-" : "+", num(b[1], fabs(im)), num(b[2], ab),
                   num(b[3], arg), num(b[4], ex));
    }
    if (csv)
        return;
    (void)m;
    const char *v = hs_fl_verdict_names[fl->verdict];
    num(b[1], fl->tol);
    if (fl->verdict == HS_FL_UNSTABLE)
        printf("stability: %s (the largest |mu| = %s > 1 + %s)\n", v, num(b[0], fl->mu_max),
               b[1]);
    else if (fl->verdict == HS_FL_MARGINAL)
        printf("stability: %s (no |mu| > 1 + %s, but a multiplier within %s of 1: a "
               "neutral direction; the linearization cannot decide)\n", v, b[1], b[1]);
    else
        printf("stability: %s (every |mu| <= 1 + %s and none within %s of 1: linear, "
               "spectral stability of the motion)\n", v, b[1], b[1]);
}

/* The state x [2n] and period: "q = ..., v = ..., T = ..." into f. */
static void print_state(FILE *out, const hs_model *m, const double *x, double T)
{
    char b[32];
    for (size_t i = 0; i < 2 * m->n; i++)
        fprintf(out, "%s%s = %s", i ? ", " : "", i < m->n ? m->qname[i] : m->vname[i - m->n],
                num(b, x[i]));
    fprintf(out, ", T = %s", num(b, T));
}

/* --find: the orbit into x, T; 0, or the exit code (the best point and the
 * error printed). */
static int find_orbit(hs_model *m, hs_fl *f, const opts *o, double *x, double *T)
{
    hs_error err;
    hs_error_init(&err);
    int steps;
    double resid;
    char b[32];
    int rc = hs_fl_find_orbit(f, x, T, &steps, &resid, &err);
    if (rc == HS_EXIT_INCONSISTENT && isfinite(resid)) {
        fprintf(stderr, "holosim: best point: ");
        print_state(stderr, m, x, *T);
        fprintf(stderr, " (max |x(t0 + T) - x(t0)| = %s)\n", num(b, resid));
    }
    if (rc)
        return hs_cli_fail(&err);
    FILE *out = o->csv ? stderr : stdout;
    fprintf(out, "%speriodic orbit (Newton shooting from the start state, %d step%s%s): ",
            o->csv ? "holosim: " : "", steps, steps == 1 ? "" : "s",
            hs_fl_autonomous(f) ? ", the period an unknown" : "");
    print_state(out, m, x, *T);
    fprintf(out, "; max |x(t0 + T) - x(t0)| = %s\n", num(b, resid));
    return 0;
}

static int floquet_cmd(hs_model *m, hs_fl *f, const opts *o, double T)
{
    hs_floquet fl;
    hs_error err;
    hs_error_init(&err);
    memset(&fl, 0, sizeof fl);
    double *x = o->find ? calloc(2 * m->n + 1, sizeof *x) : NULL;
    int rc = o->find && !x ? hs_cli_nomem() : 0;
    if (!rc && !o->csv) {
        header(m, f, 2 * (m->n - m->k));
        char b[32], b2[32];
        printf("period: T = %s from t0 = %s%s\n", num(b, T), num(b2, m->t0),
               o->find && hs_fl_autonomous(f) ? " (the guess of --find)" : "");
    }
    if (!rc && o->find)
        rc = find_orbit(m, f, o, x, &T);
    if (!rc && (rc = x ? hs_fl_floquet_at(f, x, T, &fl, &err) : hs_fl_floquet(f, T, &fl, &err)))
        rc = hs_cli_fail(&err);
    if (!rc) {
        periodicity(f, m, &fl, o->csv);
        print_floquet(m, &fl, o->csv);
    }
    hs_fl_floquet_free(&fl);
    free(x);
    return rc;
}

int hs_cli_floquet(int argc, char **argv)
{
    opts o;
    hs_model *m;
    hs_fl *f;
    hs_native *nat;
    int rc;
    if (open_flow(argc, argv, hs_usage_floquet, CMD_FLOQUET, "floquet", &o, &m, &f, &nat, &rc))
        return rc;
    double T = 0;
    if (!o.period)
        rc = hs_cli_usage_error(hs_usage_floquet, "%s", "floquet needs --period T");
    else if (!(rc = eval_positive(m, "--period", o.period, &T)))
        rc = floquet_cmd(m, f, &o, T);
    hs_fl_free(f);
    hs_native_free(nat);
    hs_model_free(m);
    hs_cli_free_opts(&o);
    return rc;
}

typedef struct lyctx {
    int csv;
    double *last;
    size_t count;
} lyctx;

static int lyap_row(double t, const double *lambda, size_t count, void *ctx)
{
    lyctx *c = ctx;
    if (c->csv) {
        hs_table tb;
        hs_table_init(&tb, stdout, HS_TABLE_SHORTEST);
        hs_table_num(&tb, t);
        for (size_t j = 0; j < count; j++)
            hs_table_num(&tb, lambda[j]);
        hs_table_end(&tb);
    }
    memcpy(c->last, lambda, count * sizeof *lambda);
    c->count = count;
    return ferror(stdout) ? HS_EXIT_USAGE : 0;
}

static int lyap_run(hs_model *m, hs_fl *f, const opts *o, double T, double dt)
{
    char b[32], b2[32], b3[32];
    size_t dim = 2 * m->n, count = 0;
    if (o->spectrum && 2 * (m->n - m->k) > SPECTRUM_MAX) {
        hs_error err;
        hs_error_init(&err);
        hs_error_set(&err, HS_EXIT_MODEL, "%s: --spectrum on a model with 2 (n - k) = %zu "
                     "exponents: the limit is %d (without --spectrum, the largest exponent)",
                     m->file, 2 * (m->n - m->k), SPECTRUM_MAX);
        return hs_cli_fail(&err);
    }
    lyctx c = { o->csv, calloc(dim + 1, sizeof(double)), 0 };
    if (!c.last)
        return hs_cli_nomem();
    if (o->csv) {
        size_t cols = o->spectrum ? 2 * (m->n - m->k) : 1;
        hs_table t;
        hs_table_init(&t, stdout, HS_TABLE_SHORTEST);
        hs_table_text(&t, "t");
        for (size_t j = 0; j < cols; j++) {
            char name[32];
            snprintf(name, sizeof name, "lambda_%zu", j + 1);
            hs_table_text(&t, name);
        }
        hs_table_end(&t);
    }
    hs_error err;
    hs_error_init(&err);
    int rc = hs_fl_lyapunov(f, T, dt, o->spectrum, lyap_row, &c, &count, &err);
    if (rc == HS_EXIT_USAGE && !err.code)
        fprintf(stderr, "holosim: cannot write the output\n");
    else if (rc)
        rc = hs_cli_fail(&err);
    if (!rc && !o->csv) {
        header(m, f, 2 * (m->n - m->k));
        printf("interval: t0 = %s to %s, renormalized every %s\n", num(b, m->t0),
               num(b2, m->t0 + T), num(b3, dt));
        double sum = 0;
        for (size_t j = 0; j < c.count; j++) {
            printf("  lambda_%zu = %s\n", j + 1, num(b, c.last[j]));
            sum += c.last[j];
        }
        if (o->spectrum)
            printf("sum: %s (0 for a conservative system, up to O(1/T))\n", num(b, sum));
    }
    free(c.last);
    return rc;
}

int hs_cli_lyapunov(int argc, char **argv)
{
    opts o;
    hs_model *m;
    hs_fl *f;
    hs_native *nat;
    int rc;
    if (open_flow(argc, argv, hs_usage_lyapunov, CMD_LYAPUNOV, "lyapunov", &o, &m, &f, &nat,
                  &rc))
        return rc;
    double T = m->set.t_end - m->t0, dt = T / 100;
    if (o.every && (hs_cli_parse_double(o.every, &dt) || !(dt > 0)))
        rc = bad_value("--every", o.every);
    else
        rc = lyap_run(m, f, &o, T, dt);
    hs_fl_free(f);
    hs_native_free(nat);
    hs_model_free(m);
    hs_cli_free_opts(&o);
    return rc;
}
