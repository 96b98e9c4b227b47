/* `holosim run --sensitivity p1,p2,...`: the motion with its forward
 * sensitivities to parameters (src/flow, hs_fl_sens_run), one CSV row per
 * output time: t, the coordinates, the velocities, the multipliers, then
 * for each parameter p in the order given dq/dp for every coordinate,
 * dq'/dp for every velocity and dlambda_c/dp for every constraint.  The
 * summary (--summary, batch's status) knows the rows, the time reached
 * and the --final columns; the integrator's counts and monitors are
 * empty fields. */
#include "cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../flow/flow.h"
#include "../integrate/integrate.h"
#include "../io/fmt.h"

typedef struct sctx {
    const hs_model *m;
    size_t np;
    const char *path;
    FILE *out;                 /* NULL until the first row (a file: created then) */
    char **names;
    int failed, started;
    int precision;             /* significant digits; 17: the shortest exact */
    char **col;                /* [ncol] the column names */
    size_t ncol;
    double *last;              /* [ncol] the row being written, then the last one */
    long rows;
    double t;                  /* the time of the last row */
} sctx;

static void put(sctx *c, double x, int first)
{
    char b[32];
    if (c->precision < 17)
        snprintf(b, sizeof b, "%.*g", c->precision, x == 0 ? 0.0 : x);   /* never -0 */
    else
        hs_fmt_double(b, x == 0 ? 0.0 : x);
    if (!first)
        fputc(',', c->out);
    fputs(b, c->out);
}

/* The column names, in the order of the rows; 0 or -1 (out of memory). */
static int make_columns(sctx *c)
{
    const hs_model *m = c->m;
    size_t np = c->np, nc = hs_fl_sens_ncols(m, np);
    c->col = calloc(nc, sizeof *c->col);
    c->last = calloc(nc, sizeof *c->last);
    if (!c->col || !c->last)
        return -1;
    char b[600];
    c->ncol = nc;              /* the names made so far are freed on failure */
    for (size_t j = 0; j < nc; j++)
        if (!(c->col[j] = strdup(hs_fl_sens_column(m, (const char *const *)c->names, np, j, b,
                                                   sizeof b))))
            return -1;
    return 0;
}

static void free_columns(sctx *c)
{
    for (size_t j = 0; c->col && j < c->ncol; j++)
        free(c->col[j]);
    free(c->col);
    free(c->last);
}

static int header(sctx *c)
{
    if (!c->out && !(c->out = fopen(c->path, "w")))
        return c->failed = HS_EXIT_USAGE;
    for (size_t j = 0; j < c->ncol; j++) {
        if (j)
            fputc(',', c->out);
        fputs(c->col[j], c->out);
    }
    fputc('\n', c->out);
    return 0;
}

static int row(double t, const double *x, const double *lam, const double *S,
               const double *dlam, void *ctx)
{
    sctx *c = ctx;
    int rc;
    if (!c->started && (rc = header(c)))
        return rc;
    c->started = 1;
    hs_fl_sens_pack(c->m, c->np, t, x, lam, S, dlam, c->last);   /* the columns' order */
    for (size_t j = 0; j < c->ncol; j++)
        put(c, c->last[j], j == 0);
    fputc('\n', c->out);
    c->rows++;
    c->t = t;
    return ferror(c->out) ? (c->failed = HS_EXIT_USAGE) : 0;
}

/* What the sensitivities do not support, refused before anything runs:
 * the options here, the model's contacts, friction and events in flow. */
static int refuse(const hs_model *m, const opts *o, const char *method, hs_error *err)
{
    const char *what = o->columns ? "--columns (the columns are fixed: see holosim(1), "
                                    "SENSITIVITIES)"
                     : o->events ? "--events"
                     : o->ov.has_stabilize ? "--stabilize (the motion is integrated without "
                                             "stabilization)"
                     : o->ov.has_mode ? "--output-mode" : NULL;
    if (!what && hs_fl_sens_refuse(m, err))      /* contacts, friction, events */
        return err->code;
    if (!what && o->ov.s.method[0] && strcmp(o->ov.s.method, method) != 0)
        return hs_error_set(err, HS_EXIT_USAGE, "--sensitivity integrates with an explicit "
                            "gsl_odeiv2 method: --method %s is not one (%s, rkf45, rkck, "
                            "rk4, msadams ...)", o->ov.s.method,
                            hs_stepper_default->name);
    if (!what)
        return 0;
    return hs_error_set(err, HS_EXIT_USAGE, "--sensitivity does not support %s", what);
}

/* The comma-separated list into names (text copied): 0 or an exit code. */
static int split(const char *list, char ***names, size_t *np, char **text, hs_error *err)
{
    size_t cap = 1;
    for (const char *p = list; *p; p++)
        cap += *p == ',';
    char **v = calloc(cap + 1, sizeof *v), *copy = malloc(strlen(list) + 1);
    if (!v || !copy) {
        free(v);
        free(copy);
        return hs_error_nomem(err);
    }
    strcpy(copy, list);
    size_t c = 0;
    for (char *tok = copy, *next; tok; tok = next) {
        next = strchr(tok, ',');
        if (next)
            *next++ = '\0';
        while (*tok == ' ')
            tok++;
        size_t len = strlen(tok);
        while (len && tok[len - 1] == ' ')
            tok[--len] = '\0';
        if (!*tok) {
            free(v);
            free(copy);
            return hs_error_set(err, HS_EXIT_USAGE, "--sensitivity wants parameter names "
                                "separated by commas, got '%s'", list);
        }
        v[c++] = tok;
    }
    *names = v;
    *np = c;
    *text = copy;
    return 0;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The run with its sensitivities into path (NULL: out), the record into
 * r, the finals into F; *ran: it got past the checks (a summary is
 * written); the exit code with err set. */
static int sens_core(hs_model *m, const opts *o, const char *path, FILE *out,
                     hs_cli_final *F, hs_sumrow *r, int *ran, char *stop, size_t cap,
                     hs_error *err)
{
    double t0 = now();
    *ran = 0;
    stop[0] = '\0';
    char **names = NULL, *text = NULL;
    size_t np = 0;
    hs_sumrow_init(r);
    memset(F, 0, sizeof *F);
    int rc = split(o->sensitivity, &names, &np, &text, err);
    if (rc)
        return rc;
    sctx c = { .m = m, .np = np, .path = path, .out = out, .names = names,
               .precision = o->precision };
    hs_fl *f = hs_fl_new_sparse(m, err);
    hs_fl_sens *s = f ? hs_fl_sens_new(f, (const char *const *)names, np, err) : NULL;
    if (!s)
        rc = err->code ? err->code : hs_error_nomem(err);
    else if (!(rc = refuse(m, o, hs_fl_method(f), err)) && make_columns(&c))
        rc = hs_error_nomem(err);
    hs_native *nat = rc ? NULL : hs_cli_flow_native(o, f, s);
    if (!rc)
        rc = hs_cli_final_init(F, o, (const char *const *)c.col, c.ncol, err);
    *ran = !rc;
    if (!rc) {
        if (!o->quiet && strcmp(m->set.method[0] ? m->set.method : hs_stepper_default->name,
                                hs_fl_method(f)) != 0)
            fprintf(stderr, "holosim: --sensitivity: integrating with %s (the model's "
                    "method %s is not an explicit gsl_odeiv2 one)\n", hs_fl_method(f),
                    m->set.method);
        double off = 0;
        rc = hs_fl_sens_run(s, m->set.t_end, m->set.dt, row, &c, &off, err);
        if (c.failed) {
            hs_error_init(err);
            rc = hs_error_set(err, HS_EXIT_USAGE, c.out ? "cannot write the output"
                              : "cannot open '%s' for writing", path);
        }
        if (c.out && c.out != out && fclose(c.out) != 0 && !rc)
            rc = hs_error_set(err, HS_EXIT_USAGE, "cannot write '%s'", path);
        else if (out && c.out == out && fflush(out) != 0 && !rc)
            rc = hs_error_set(err, HS_EXIT_USAGE, "cannot write the output");
        if (!rc && hs_fl_sens_stop_text(s, stop, cap) && !o->quiet)
            fprintf(stderr, "holosim: %s\n", stop);
        if (!o->quiet && off > 1e-8)
            fprintf(stderr, "holosim: warning: --sensitivity: the initial data are not "
                    "consistent for every value of the parameters (the derivative of the "
                    "constraints along d(q0, v0)/dp is %.3g, not 0): the sensitivities start "
                    "off the constraints' tangent space; write the initial data through "
                    "the parameters so that they stay consistent\n", off);
    }
    if (c.rows && F->n)
        hs_cli_final_keep(F, c.last);
    r->exit = rc;
    r->integrated = c.rows > 0;
    r->rows = c.rows;
    r->t_reached = c.rows ? c.t : (double)NAN;
    r->wall = now() - t0;
    r->nfinal = F->n;
    r->final_name = F->name;
    r->final = F->have ? F->val : NULL;
    free_columns(&c);
    hs_fl_sens_free(s);
    hs_fl_free(f);
    hs_native_free(nat);
    free(text);
    free(names);
    return rc;
}

int hs_cli_sens_finals(const hs_model *m, const opts *o, hs_error *err)
{
    char **names = NULL, *text = NULL;
    size_t np = 0;
    if (!o->final)
        return 0;
    int rc = split(o->sensitivity, &names, &np, &text, err);
    if (rc)
        return rc;
    sctx c = { .m = m, .np = np, .names = names };
    hs_cli_final F;
    memset(&F, 0, sizeof F);
    rc = make_columns(&c) ? hs_error_nomem(err)
       : hs_cli_final_init(&F, o, (const char *const *)c.col, c.ncol, err);
    hs_cli_final_free(&F);
    free_columns(&c);
    free(text);
    free(names);
    return rc;
}

int hs_cli_sens_point(hs_model *m, const opts *o, const char *path, hs_cli_final *F,
                      hs_sumrow *r, hs_error *err)
{
    int ran;
    char stop[1200];
    /* every point folds its own values into the programs: a build under
     * auto would serve no other point, so auto is the VM here */
    opts po = *o;
    if (po.native == HS_NATIVE_AUTO)
        po.native = HS_NATIVE_NEVER;
    return sens_core(m, &po, path, NULL, F, r, &ran, stop, sizeof stop, err);
}

int hs_cli_run_sens(hs_model *m, const opts *o, const char *path)
{
    hs_error err;
    hs_error_init(&err);
    hs_cli_final F;
    hs_sumrow r;
    int ran;
    char stop[1200] = "";
    int rc = sens_core(m, o, path, path ? NULL : stdout, &F, &r, &ran, stop, sizeof stop, &err);
    if (rc)
        hs_cli_fail(&err);
    int src = o->summary && ran ? hs_cli_summary_file(o->summary, &r, m, rc, &err, stop) : 0;
    hs_cli_final_free(&F);
    return rc ? rc : src;
}
