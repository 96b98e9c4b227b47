/* holosim: the command line.  main alone prints errors and picks the exit
 * code (0 ok, 1 usage, 2 model error, 3 inconsistent initial data, 4
 * numerical failure, 130 interrupted). */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>

#include "../consistency/consistency.h"
#include "../dynamics/dynamics.h"
#include "../expr/expr.h"
#include "../integrate/integrate.h"
#include "../model/model.h"

#ifndef HS_VERSION
#define HS_VERSION "0.0.0"
#endif

static const char usage_main[] =
    "usage: holosim COMMAND [ARGS]\n"
    "\n"
    "Simulate mechanical systems under ideal holonomic constraints (Lagrange's\n"
    "equations of the first kind) from a YAML model file; write CSV.\n"
    "\n"
    "commands:\n"
    "  run MODEL [OPTIONS]       integrate and write CSV (stdout or -o FILE)\n"
    "  check MODEL [OPTIONS]     load, compile, consistency and rank report\n"
    "  derive MODEL              print the symbolic M, Q, G, G_q, Gdot, gamma\n"
    "  derive --wrt NAME EXPR    print the simplified derivative of EXPR\n"
    "  eval EXPR [NAME=VALUE]... evaluate an expression (17 digits)\n"
    "  help [COMMAND]            this text, or one command's options\n"
    "\n"
    "MODEL is a file path, or - for standard input.\n"
    "  --help, -h                this text\n"
    "  --version                 print the version\n"
    "\n"
    "exit status: 0 success, 1 usage or output error, 2 model error,\n"
    "3 inconsistent initial data, 4 numerical failure, 130 interrupted.\n"
    "See holosim(1) for the model format.\n";

static const char usage_run[] =
    "usage: holosim run MODEL [OPTIONS]\n"
    "\n"
    "Integrate the model from its initial data and write one CSV row per output\n"
    "time t0, t0+dt, ..., t_end.\n"
    "\n"
    "  -o, --output FILE         write the CSV to FILE (default: standard output)\n"
    "  --set NAME=VALUE          override a parameter (repeatable); parameters\n"
    "                            derived from it are recomputed\n"
    "  --t-end T                 end time (overrides simulate.t_end)\n"
    "  --dt H                    output interval (default (t_end - t0)/1000)\n"
    "  --method NAME             stepper: rk2 rk4 rkf45 rkck rk8pd (default) rk1imp\n"
    "                            rk2imp rk4imp bsimp msadams msbdf\n"
    "  --rtol X, --atol X        error tolerances (default 1e-9 each)\n"
    "  --stabilize KIND          projection (default) | baumgarte | none\n"
    "  --alpha X, --beta X       Baumgarte gains (default 10, 10)\n"
    "  --output-mode MODE        exact (default: the stepper stops at every row) |\n"
    "                            interpolate (free steps, rows by Hermite interpolation)\n"
    "  --consistency MODE        project (default) | reject\n"
    "  --tolerance X             consistency tolerance (default 1e-10)\n"
    "  --columns LIST            comma list of columns; 'default', 'all' allowed\n"
    "  --precision N             significant digits, 1..17 (default 17)\n"
    "  --progress                progress bar on stderr (only on a terminal)\n"
    "  --summary FILE            write the run summary as one CSV row to FILE\n"
    "  -q, --quiet               no consistency report and no summary on stderr\n";

static const char usage_check[] =
    "usage: holosim check MODEL [--set NAME=VALUE]... [--consistency MODE]\n"
    "                           [--tolerance X]\n"
    "\n"
    "Load and compile the model and report: n, k, each constraint's residual\n"
    "at t0 (position and velocity), the rank of G_q, whether the mass matrix is\n"
    "positive definite, and what the consistency step would change.  No\n"
    "integration.\n";

static const char usage_derive[] =
    "usage: holosim derive MODEL [--set NAME=VALUE]...\n"
    "       holosim derive --wrt NAME EXPR\n"
    "\n"
    "Print the model's symbolic kernels (M, Q, G, G_q, Gdot = D G, gamma =\n"
    "D(D G)), or the simplified derivative of one expression with respect to\n"
    "NAME (every name in EXPR is a free symbol; x' is a symbol too).\n";

static const char usage_eval[] =
    "usage: holosim eval EXPR [NAME=VALUE]...\n"
    "\n"
    "Evaluate EXPR with the given values and print the result with 17\n"
    "significant digits.  Velocities may be given as x'=VALUE.\n";

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted = 1;
}

static int fail(const hs_error *e)
{
    if (!e->file[0] && e->line == 0)
        fputs("holosim: ", stderr);
    hs_error_print(e, stderr);
    return e->code ? e->code : 1;
}

/* One line saying what is wrong, one saying where help is. */
static int usage_error(const char *cmd_usage, const char *fmt, const char *arg)
{
    fprintf(stderr, "holosim: ");
    fprintf(stderr, fmt, arg);
    const char *cmd = strstr(cmd_usage, "holosim ");
    char name[16] = "";
    if (cmd && sscanf(cmd + 8, "%15[a-z]", name) == 1 && strcmp(name, "COMMAND") != 0)
        fprintf(stderr, "\ntry 'holosim help %s'\n", name);
    else
        fprintf(stderr, "\ntry 'holosim --help'\n");
    return HS_EXIT_USAGE;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

typedef struct opts {
    hs_overrides ov;
    const char *model, *output, *columns, *summary, *wrt;
    int precision, progress, quiet;
    const char **set_name;
    double *set_value;
    size_t nset;
    const char **pos;        /* positional arguments after the first */
    size_t npos;
} opts;

/* Options shared by run/check/derive.  Returns 0, or an exit code. */
static int parse_opts(int argc, char **argv, const char *cmd_usage, int allow_run, opts *o)
{
    memset(o, 0, sizeof *o);
    hs_overrides_init(&o->ov);
    o->precision = 17;
    o->set_name = calloc((size_t)argc, sizeof *o->set_name);
    o->set_value = calloc((size_t)argc, sizeof *o->set_value);
    o->pos = calloc((size_t)argc, sizeof *o->pos);
    if (!o->set_name || !o->set_value || !o->pos)
        return usage_error("", "%s", "out of memory");
    int no_more_opts = 0;
    for (int i = 0; i < argc; i++) {
        char *a = argv[i];
        if (no_more_opts || a[0] != '-' || strcmp(a, "-") == 0) {
            if (!o->model)
                o->model = a;
            else
                o->pos[o->npos++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            no_more_opts = 1;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(cmd_usage, stdout);
            return -1;
        }
        char name[64];
        const char *val = NULL;
        const char *eq = strchr(a, '=');
        if (strncmp(a, "--", 2) == 0 && eq && (size_t)(eq - a) < sizeof name) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
        }
        static const char *const flags[] = { "--progress", "-q", "--quiet" };
        int is_flag = 0;
        for (size_t f = 0; f < 3; f++)
            if (strcmp(name, flags[f]) == 0)
                is_flag = 1;
        if (is_flag) {
            if (!allow_run)
                return usage_error(cmd_usage, "unknown option '%s'", name);
            if (strcmp(name, "--progress") == 0)
                o->progress = 1;
            else
                o->quiet = 1;
            continue;
        }
        static const char *const valued[] = {
            "--set", "--consistency", "--tolerance", "--wrt", "--t-end", "--dt", "--rtol",
            "--atol", "--alpha", "--beta", "-o", "--output", "--columns", "--summary",
            "--method", "--stabilize", "--precision", "--output-mode",
        };
        int known = 0;
        for (size_t f = 0; f < sizeof valued / sizeof *valued; f++)
            if (strcmp(name, valued[f]) == 0)
                known = 1;
        if (!known)
            return usage_error(cmd_usage, "unknown option '%s'", name);
        if (!val) {
            if (i + 1 >= argc)
                return usage_error(cmd_usage, "option '%s' needs a value", name);
            val = argv[++i];
        }
        double x;
        hs_settings *s = &o->ov.s;
        if (strcmp(name, "--set") == 0) {
            const char *e2 = strchr(val, '=');
            if (!e2 || e2 == val)
                return usage_error(cmd_usage, "--set wants NAME=VALUE, got '%s'", val);
            char *nm = strndup(val, (size_t)(e2 - val));
            if (!nm || parse_double(e2 + 1, &x)) {
                free(nm);
                return usage_error(cmd_usage, "--set: '%s' is not NAME=NUMBER", val);
            }
            o->set_name[o->nset] = nm;
            o->set_value[o->nset++] = x;
            continue;
        }
        if (strcmp(name, "--consistency") == 0) {
            int kw = hs_keyword(hs_cons_mode_names, 2, val);
            if (kw < 0)
                return usage_error(cmd_usage, "--consistency must be project or reject, "
                                   "got '%s'", val);
            o->ov.s.mode = (hs_cons_mode)kw;
            o->ov.has_mode = 1;
            continue;
        }
        if (strcmp(name, "--tolerance") == 0) {
            if (parse_double(val, &s->tol) || !(s->tol > 0))
                return usage_error(cmd_usage, "--tolerance wants a positive number, got '%s'", val);
            continue;
        }
        if (strcmp(name, "--wrt") == 0 && !allow_run) {
            o->wrt = val;
            continue;
        }
        if (!allow_run)
            return usage_error(cmd_usage, "unknown option '%s'", name);
        struct { const char *opt; double *dst; int positive; } num[] = {
            { "--t-end", &s->t_end, 0 }, { "--dt", &s->dt, 1 }, { "--rtol", &s->rtol, 1 },
            { "--atol", &s->atol, 1 }, { "--alpha", &s->alpha, 1 }, { "--beta", &s->beta, 1 },
        };
        int done = 0;
        for (size_t k = 0; k < sizeof num / sizeof *num; k++)
            if (strcmp(name, num[k].opt) == 0) {
                if (parse_double(val, num[k].dst) || (num[k].positive && !(*num[k].dst > 0))) {
                    char msg[160];
                    snprintf(msg, sizeof msg, "%s wants a %snumber, got '%.60s'", name,
                             num[k].positive ? "positive " : "", val);
                    return usage_error(cmd_usage, "%s", msg);
                }
                done = 1;
            }
        if (done)
            continue;
        if (strcmp(name, "-o") == 0 || strcmp(name, "--output") == 0) {
            o->output = val;
        } else if (strcmp(name, "--columns") == 0) {
            o->columns = val;
        } else if (strcmp(name, "--summary") == 0) {
            o->summary = val;
        } else if (strcmp(name, "--method") == 0) {
            if (!hs_method_known(val)) {
                fprintf(stderr, "holosim: unknown method '%s'; choose one of: %s\n", val,
                        hs_method_list());
                return HS_EXIT_USAGE;
            }
            snprintf(s->method, sizeof s->method, "%s", val);
        } else if (strcmp(name, "--stabilize") == 0) {
            int kw = hs_keyword(hs_stab_names, 3, val);
            if (kw < 0)
                return usage_error(cmd_usage, "--stabilize must be projection, baumgarte or "
                                   "none, got '%s'", val);
            s->stabilize = (hs_stab)kw;
            o->ov.has_stabilize = 1;
        } else if (strcmp(name, "--output-mode") == 0) {
            int kw = hs_keyword(hs_output_names, 2, val);
            if (kw < 0)
                return usage_error(cmd_usage, "--output-mode must be exact or interpolate, "
                                   "got '%s'", val);
            s->interpolate = kw;
            o->ov.has_output = 1;
        } else if (strcmp(name, "--precision") == 0) {
            if (parse_double(val, &x) || x < 1 || x > 17 || x != floor(x))
                return usage_error(cmd_usage, "--precision wants an integer 1..17, got '%s'", val);
            o->precision = (int)x;
        } else {
            return usage_error(cmd_usage, "unknown option '%s'", name);
        }
    }
    o->ov.nset = o->nset;
    o->ov.set_name = o->set_name;
    o->ov.set_value = o->set_value;
    return 0;
}

static void free_opts(opts *o)
{
    for (size_t i = 0; i < o->nset; i++)
        free((char *)o->set_name[i]);
    free(o->set_name);
    free(o->set_value);
    free(o->pos);
}

static int write_summary(const char *path, const hs_model *m, const hs_summary *s, int rc,
                         const hs_error *err, int quiet)
{
    if (!quiet)
        fprintf(stderr, "holosim: %ld steps, %ld rhs evaluations, %ld rows to t=%.6g; "
                "max |G| %.3g, max |Gdot| %.3g, max |energy_balance| %.3g, "
                "max |power_residual| %.3g; %.3f s\n", s->steps, s->nrhs, s->rows,
                s->t_reached, s->max_G, s->max_Gdot, s->max_ebal, s->max_pres, s->wall);
    if (!path)
        return 0;
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "holosim: cannot write summary '%s': %s\n", path, strerror(errno));
        return HS_EXIT_USAGE;
    }
    fprintf(f, "model,exit,steps,rhs_evals,rows,t_reached,max_G,max_Gdot,max_energy_balance,"
            "max_power_residual,wall_s,message\n");
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", rc ? err->msg : "");
    for (char *p = msg; *p; p++)
        if (*p == '"' || *p == '\n')
            *p = '\'';
    fprintf(f, "\"%s\",%d,%ld,%ld,%ld,%.17g,%.17g,%.17g,%.17g,%.17g,%.6f,\"%s\"\n",
            m->file, rc, s->steps, s->nrhs, s->rows, s->t_reached, s->max_G, s->max_Gdot,
            s->max_ebal, s->max_pres, s->wall, msg);
    if (fclose(f) != 0) {
        fprintf(stderr, "holosim: cannot write summary '%s'\n", path);
        return HS_EXIT_USAGE;
    }
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    opts o;
    int rc = parse_opts(argc, argv, usage_run, 1, &o);
    if (rc) {
        free_opts(&o);
        return rc < 0 ? 0 : rc;
    }
    if (!o.model || o.npos) {
        free_opts(&o);
        return usage_error(usage_run, "%s", !o.model ? "run: missing MODEL" : "run: more than "
                           "one MODEL");
    }
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load(o.model, &o.ov, &err);
    if (!m) {
        free_opts(&o);
        return fail(&err);
    }
    /* check that -o can be written before anything runs; hs_run opens it
     * (truncating) only once the initial data are consistent */
    const char *path = o.output && strcmp(o.output, "-") != 0 ? o.output : NULL;
    if (path) {
        int existed = access(path, F_OK) == 0;
        FILE *probe = fopen(path, "a");
        if (!probe) {
            fprintf(stderr, "holosim: cannot open '%s' for writing: %s\n", path,
                    strerror(errno));
            hs_model_free(m);
            free_opts(&o);
            return HS_EXIT_USAGE;
        }
        fclose(probe);
        if (!existed)
            remove(path);
    }
    signal(SIGINT, on_sigint);
    hs_run_opts ro = { path ? NULL : stdout, path, o.columns, o.precision,
                       o.quiet ? NULL : stderr, o.progress, &interrupted };
    hs_summary sum;
    rc = hs_run(m, &ro, &sum, &err);
    int src = write_summary(o.summary, m, &sum, rc, &err, o.quiet || rc);
    if (rc)
        fail(&err);
    hs_model_free(m);
    free_opts(&o);
    return rc ? rc : src;
}

static int cmd_check(int argc, char **argv)
{
    opts o;
    int rc = parse_opts(argc, argv, usage_check, 0, &o);
    if (rc || !o.model || o.npos || o.wrt) {
        free_opts(&o);
        return rc < 0 ? 0 : rc ? rc : usage_error(usage_check, "%s", "check: expected one MODEL");
    }
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load(o.model, &o.ov, &err);
    free_opts(&o);
    if (!m)
        return fail(&err);
    static const char *const forms[] = { "Cartesian", "Lagrangian", "embedding" };
    static const char *const masses[] = { "constant diagonal", "diagonal", "full" };
    printf("model: %s%s%s\n", m->file, m->name[0] ? " -- " : "", m->name);
    printf("form: %s; n = %zu coordinates, k = %zu constraints, %zu parameters\n",
           forms[m->form], m->n, m->k, m->npar);
    printf("mass matrix: %s, positive definite at t0\n", masses[m->mass_kind]);
    printf("G_q: %zu structural non-zeros of %zu\n", m->nnz, m->n * m->k);
    printf("compiled: %zu expression nodes; %zu + %zu + %zu bytecode instructions "
           "(dynamics, output, projection)\n", hs_dag_nnodes(m->dag),
           hs_prog_ninstr(m->prog_dyn), hs_prog_ninstr(m->prog_aux), hs_prog_ninstr(m->prog_pos));
    hs_work *w = hs_work_new(m);
    double *q = malloc(m->n * sizeof *q), *v = malloc(m->n * sizeof *v);
    double *G = calloc(m->k + 1, sizeof *G), *Gt = calloc(m->k + 1, sizeof *Gt);
    if (!w || !q || !v || !G || !Gt) {
        rc = HS_EXIT_MODEL;
        fprintf(stderr, "holosim: out of memory\n");
        goto out;
    }
    memcpy(q, m->q0, m->n * sizeof *q);
    memcpy(v, m->v0, m->n * sizeof *v);
    printf("t0 = %.17g\n", m->t0);
    if (m->k) {
        if (hs_dyn_constraints(m, w, m->t0, q, G, Gt)) {
            rc = fail(&w->err);
            goto out;
        }
        printf("constraint residuals at t0 (tolerance %g):\n", m->set.tol);
        for (size_t i = 0; i < m->k; i++) {
            double s = Gt[i];
            for (size_t c = 0; c < m->n; c++)
                s += w->Gqd[i * m->n + c] * v[c];
            printf("  %-16s G = %-12.6g  G_t + G_q v = %-12.6g %s\n", m->cname[i], G[i], s,
                   fabs(G[i]) <= m->set.tol && fabs(s) <= m->set.tol ? "ok" : "VIOLATED");
        }
        char msg[800];
        size_t rank = hs_cons_rank(m, w, m->t0, q, msg, sizeof msg, NULL);
        printf("rank of G_q at t0: %zu of %zu%s%s\n", rank, m->k, rank < m->k ? ": " : "",
               msg);
    }
    rc = hs_cons_start(m, w, q, v, stdout, &err);
    if (rc) {
        fail(&err);
    } else {
        printf("initial data: consistent%s\n", memcmp(q, m->q0, m->n * sizeof *q) ||
               memcmp(v, m->v0, m->n * sizeof *v) ? " after projection" : "");
        if (!hs_dyn_accel(m, w, m->t0, q, v, NULL, NULL))
            printf("C = G_q M^-1 G_q^T positive definite at t0; E0 = %.17g\n",
                   w->T + (hs_dyn_aux(m, w, m->t0, q, v) ? (double)NAN : w->aux[m->off_U]));
        else
            rc = fail(&w->err);
    }
out:
    free(q);
    free(v);
    free(G);
    free(Gt);
    hs_work_free(w);
    hs_model_free(m);
    return rc;
}

/* Free symbols for `derive --wrt` and `eval`. */
typedef struct freesyms {
    int strict;               /* eval: only the given names */
    size_t n;
    char **name;
} freesyms;

static const hs_node *free_lookup(void *ctx, hs_dag *d, const char *s, size_t len,
                                  int primed, size_t off, int *status, hs_error *err)
{
    freesyms *fs = ctx;
    (void)off;
    (void)err;
    char name[160];
    if (len + 2 > sizeof name) {
        *status = HS_RESOLVE_UNKNOWN;
        return NULL;
    }
    memcpy(name, s, len);
    if (primed)
        name[len++] = '\'';
    name[len] = '\0';
    if (fs->strict) {
        int sym = hs_dag_find_symbol(d, name);
        if (sym < 0) {
            *status = HS_RESOLVE_UNKNOWN;
            return NULL;
        }
        *status = HS_RESOLVE_OK;
        return hs_sym(d, sym);
    }
    *status = HS_RESOLVE_OK;
    return hs_sym(d, hs_dag_symbol(d, name));
}

static int expr_error(const hs_error *e, const char *text)
{
    hs_error c = *e;
    if (c.offset >= 0)
        hs_error_locate(&c, text, strlen(text), (size_t)c.offset);
    return fail(&c);
}

static int cmd_derive_wrt(const char *wrt, const char *text)
{
    hs_dag *d = hs_dag_new();
    if (!d)
        return HS_EXIT_MODEL;
    freesyms fs = { 0, 0, NULL };
    hs_resolver r = { free_lookup, &fs, NULL };
    hs_error err;
    hs_error_init(&err);
    const hs_node *e = hs_parse(d, text, strlen(text), 0, &r, &err);
    int rc = 0;
    if (!e) {
        rc = expr_error(&err, text);
    } else {
        int sym = hs_dag_find_symbol(d, wrt);
        const hs_node *de = sym < 0 ? hs_num(d, 0) : hs_diff(d, e, sym);
        if (hs_dag_failed(d)) {
            rc = expr_error(hs_dag_error(d), text);
        } else {
            hs_fprint(stdout, d, de);
            putchar('\n');
        }
    }
    hs_dag_free(d);
    return rc;
}

static int cmd_derive(int argc, char **argv)
{
    opts o;
    int rc = parse_opts(argc, argv, usage_derive, 0, &o);
    if (rc) {
        free_opts(&o);
        return rc < 0 ? 0 : rc;
    }
    if (o.wrt) {
        const char *text = o.model;
        size_t npos = o.npos;
        const char *wrt = o.wrt;
        free_opts(&o);
        if (!text || npos)
            return usage_error(usage_derive, "%s", "derive --wrt NAME needs exactly one EXPR");
        return cmd_derive_wrt(wrt, text);
    }
    if (!o.model || o.npos) {
        free_opts(&o);
        return usage_error(usage_derive, "%s", "derive: expected one MODEL (or --wrt NAME EXPR)");
    }
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load(o.model, &o.ov, &err);
    free_opts(&o);
    if (!m)
        return fail(&err);
    hs_model_print_derivation(m, stdout);
    hs_model_free(m);
    return 0;
}

static int cmd_eval(int argc, char **argv)
{
    if (argc < 1 || strcmp(argv[0], "--help") == 0 || strcmp(argv[0], "-h") == 0) {
        if (argc >= 1) {
            fputs(usage_eval, stdout);
            return 0;
        }
        return usage_error(usage_eval, "%s", "eval: missing EXPR");
    }
    const char *text = argv[0];
    hs_dag *d = hs_dag_new();
    double *vals = calloc((size_t)argc, sizeof *vals);
    int rc = 0;
    if (!d || !vals) {
        free(vals);
        hs_dag_free(d);
        return HS_EXIT_MODEL;
    }
    for (int i = 1; i < argc; i++) {
        const char *eq = strchr(argv[i], '=');
        char name[160];
        size_t len = eq ? (size_t)(eq - argv[i]) : 0;
        if (!eq || len == 0 || len >= sizeof name || parse_double(eq + 1, &vals[i])) {
            rc = usage_error(usage_eval, "eval: '%s' is not NAME=NUMBER", argv[i]);
            goto out;
        }
        memcpy(name, argv[i], len);
        name[len] = '\0';
        hs_dag_symbol(d, name);            /* the name becomes a known symbol */
    }
    {
        freesyms fs = { 1, 0, NULL };
        hs_resolver r = { free_lookup, &fs, NULL };
        hs_error err;
        hs_error_init(&err);
        const hs_node *e = hs_parse(d, text, strlen(text), 0, &r, &err);
        if (!e) {
            rc = expr_error(&err, text);
            goto out;
        }
        int ns = hs_dag_nsymbols(d);
        double *in = calloc((size_t)ns + 1, sizeof *in);
        if (!in) {
            rc = HS_EXIT_MODEL;
            goto out;
        }
        for (int i = 1; i < argc; i++) {
            char name[160];
            size_t len = (size_t)(strchr(argv[i], '=') - argv[i]);
            memcpy(name, argv[i], len);
            name[len] = '\0';
            in[hs_dag_find_symbol(d, name)] = vals[i];
        }
        hs_prog *p = hs_prog_compile(d, &e, 1, &err);
        if (!p) {
            free(in);
            rc = fail(&err);
            goto out;
        }
        double *regs = calloc(hs_prog_nregs(p) + 1, sizeof *regs), val = NAN;
        if (regs) {
            hs_prog_eval(p, in, regs, &val);
            hs_srcpos pos;
            const char *what;
            if (!isfinite(val) && hs_prog_find_nonfinite(p, in, regs, &pos, &what)) {
                hs_error_init(&err);
                hs_error_set(&err, HS_EXIT_NUMERIC, "%s", what);
                err.offset = pos.off;
                rc = expr_error(&err, text);
            } else {
                printf("%.17g\n", val);
            }
        }
        free(regs);
        free(in);
        hs_prog_free(p);
    }
out:
    free(vals);
    hs_dag_free(d);
    return rc;
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    if (argc < 2) {
        fputs(usage_main, stderr);
        return HS_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        fputs(usage_main, stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("holosim %s\n", HS_VERSION);
        return 0;
    }
    if (strcmp(cmd, "help") == 0) {
        const char *c = argc > 2 ? argv[2] : "";
        fputs(strcmp(c, "run") == 0 ? usage_run : strcmp(c, "check") == 0 ? usage_check
              : strcmp(c, "derive") == 0 ? usage_derive : strcmp(c, "eval") == 0 ? usage_eval
              : usage_main, stdout);
        return 0;
    }
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 2, argv + 2);
    if (strcmp(cmd, "check") == 0)
        return cmd_check(argc - 2, argv + 2);
    if (strcmp(cmd, "derive") == 0)
        return cmd_derive(argc - 2, argv + 2);
    if (strcmp(cmd, "eval") == 0)
        return cmd_eval(argc - 2, argv + 2);
    fprintf(stderr, "holosim: unknown command '%s'\n\n%s", cmd, usage_main);
    return HS_EXIT_USAGE;
}
