/* The public library's run with sensitivities (include/holosim.h,
 * holosim_sensitivity): the numbers of `holosim run --sensitivity`
 * (src/cli/sens.c), from the same flow layer, loaded the same way (the
 * dense kernels), in the same columns; nothing printed.  The options a
 * run's are read as holosim_run reads them where they apply: the native
 * kernels of the variational programs, the stop flag, the header, the
 * messages (what the command line says on standard error) and the
 * summary (the steps and right-hand sides of the augmented system, the
 * stop event). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../flow/flow.h"
#include "../integrate/integrate.h"
#include "../native/native.h"
#include "internal.h"

typedef struct sens_ctx {
    const hs_model *m;
    const holosim_run_options *o;
    size_t np, ncols;
    holosim_result *r;
    holosim_row_fn fn;
    void *ctx;
    double *row;               /* [ncols] */
    double t;                  /* the last row's time */
    int stopped, nomem, flagged, headed;
} sens_ctx;

static int sens_row(double t, const double *x, const double *lam, const double *S,
                    const double *dlam, void *ctx)
{
    sens_ctx *c = ctx;
    const holosim_run_options *o = c->o;
    if (o && o->stop && *o->stop) {
        c->flagged = 1;
        return HS_EXIT_INTERRUPT;
    }
    if (!c->headed) {
        c->headed = 1;
        if (o && o->header && o->header(o->header_ctx, (const char *const *)c->r->names,
                                        c->ncols)) {
            c->stopped = 1;
            return HS_EXIT_INTERRUPT;
        }
    }
    hs_fl_sens_pack(c->m, c->np, t, x, lam, S, dlam, c->row);
    int st = hs_api_result_push(c->r, c->fn, c->ctx, c->row, c->ncols);
    c->stopped = st > 0;
    c->nomem = st < 0;
    c->t = t;
    return st ? HS_EXIT_INTERRUPT : 0;
}

/* A line to the options' message callback, as the command line prints
 * it on standard error. */
static void say(const holosim_run_options *o, int kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(const holosim_run_options *o, int kind, const char *fmt, ...)
{
    if (!o || !o->message)
        return;
    char line[1024] = "holosim: ";
    va_list ap;
    va_start(ap, fmt);
    size_t h = strlen(line);
    vsnprintf(line + h, sizeof line - h - 1, fmt, ap);
    va_end(ap);
    strcat(line, "\n");
    o->message(o->message_ctx, kind, line);
}

/* The result's column names: 0, or an exit code with e set. */
static int name_columns(holosim_result *r, const hs_model *m, const char *const *params,
                        size_t np, hs_error *e)
{
    size_t nc = hs_fl_sens_ncols(m, np);
    if (!(r->names = calloc(nc, sizeof *r->names)))
        return hs_error_nomem(e);
    r->ncols = nc;
    char buf[600];
    for (size_t j = 0; j < nc; j++)
        if (!(r->names[j] = strdup(hs_fl_sens_column(m, params, np, j, buf, sizeof buf))))
            return hs_error_nomem(e);
    return 0;
}

/* What a run with sensitivities does not take among the run options. */
static int refuse_options(const holosim_run_options *o, hs_error *e)
{
    const char *what = !o ? NULL
                     : o->columns ? "columns (the columns are fixed: the motion, the "
                                    "multipliers, then the derivatives)"
                     : !isnan(o->step) ? "step (the motion is integrated by an explicit "
                                         "gsl_odeiv2 method)"
                     : o->output_mode != -1 ? "output_mode"
                     : o->events || o->keep_events ? "events (stop and record events are "
                                                     "watched, no event rows are made)"
                     : NULL;
    if (what)
        return hs_error_set(e, HS_EXIT_USAGE, "a run with sensitivities does not take %s",
                            what);
    if (o && (o->native < HOLOSIM_NATIVE_DEFAULT || o->native > HOLOSIM_NATIVE_ALWAYS))
        return hs_error_set(e, HS_EXIT_USAGE, "native must be -1 (default), 0 (never), "
                            "1 (auto) or 2 (always), not %d", o->native);
    return 0;
}

/* The native kernels of the variational programs under the options'
 * policy (the command line's hs_cli_flow_native), handed to f and s;
 * NULL: the VM. */
static hs_native *flow_native(const holosim_run_options *o, hs_fl *f, hs_fl_sens *s,
                              const hs_model *m)
{
    int policy = !o || o->native == HOLOSIM_NATIVE_DEFAULT ? HOLOSIM_NATIVE_NEVER : o->native;
    char note[512];
    hs_native *h = hs_fl_native(f, s, policy, m->names, note, sizeof note);
    if (note[0])
        say(o, HOLOSIM_MSG_NOTE, "%s", note);
    return h;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The run's summary: what the flow layer counted and where it stopped.
 * The strings point into the handle's model (the run's copy is freed),
 * whose events are the same, in the same order. */
static void summarize(holosim_run_summary *p, const sens_ctx *c, hs_fl *f,
                      const hs_fl_sens *s, const hs_model *keep, double wall)
{
    unsigned long steps = 0, evals = 0;
    if (f)
        hs_fl_counts(f, &steps, &evals);
    double ts = NAN;
    const hs_event *ev = s ? hs_fl_sens_stopped(s, &ts) : NULL;
    size_t i = ev ? (size_t)(ev - c->m->ev) : 0;
    ev = ev && keep && i < keep->nev && strcmp(keep->ev[i].name, ev->name) == 0
       ? &keep->ev[i] : NULL;
    *p = (holosim_run_summary){
        .steps = (long)steps, .nrhs = (long)evals, .rows = (long)c->r->nrows,
        .t_reached = c->r->nrows ? c->t : (double)NAN, .wall = wall,
        .stopped_by = ev ? ev->name : NULL, .stop_text = ev ? ev->text : NULL,
        .k = c->m ? c->m->k : 0, .t_rest = NAN, .worst_rcond = NAN,
    };
}

static int integrate(const hs_model *m, hs_fl *f, hs_fl_sens *s, const char *const *params,
                     size_t np, sens_ctx *c, hs_error *e)
{
    int rc = name_columns(c->r, m, params, np, e);
    if (!rc && !(c->row = malloc(c->ncols * sizeof *c->row)))
        rc = hs_error_nomem(e);
    double off = 0;
    if (!rc)
        rc = hs_fl_sens_run(s, m->set.t_end, m->set.dt, sens_row, c, &off, e);
    if (c->nomem) {
        hs_error_init(e);
        rc = hs_error_nomem(e);
    } else if (c->flagged) {
        hs_error_init(e);
        rc = hs_error_set(e, HOLOSIM_ESTOPPED, "the run was stopped by its stop flag after "
                          "row %zu", c->r->nrows);
    } else if (c->stopped) {
        hs_error_init(e);
        rc = hs_error_set(e, HOLOSIM_ESTOPPED, "the run was stopped by its %s at row %zu",
                          c->headed && !c->r->nrows ? "header callback" : "row callback",
                          c->r->nrows);
    }
    char stop[1200];
    if (!rc && hs_fl_sens_stop_text(s, stop, sizeof stop))
        say(c->o, HOLOSIM_MSG_NOTE, "%s", stop);
    if (!rc && off > 1e-8)
        say(c->o, HOLOSIM_MSG_REPORT, "warning: --sensitivity: the initial data are not "
            "consistent for every value of the parameters (the derivative of the "
            "constraints along d(q0, v0)/dp is %.3g, not 0): the sensitivities start "
            "off the constraints' tangent space; write the initial data through "
            "the parameters so that they stay consistent", off);
    unsigned long steps = 0, evals = 0;
    hs_fl_counts(f, &steps, &evals);
    c->r->steps = (long)steps;
    c->r->nrhs = (long)evals;
    return rc;
}

holosim_result *holosim_sensitivity(const holosim_model *h, const char *const *params,
                                    size_t np, const holosim_run_options *o,
                                    holosim_row_fn fn, void *ctx, holosim_error *err)
{
    double t0 = now();
    hs_error e;
    hs_error_init(&e);
    hs_api_clear_error(err);
    holosim_result *r = calloc(1, sizeof *r);
    hs_model *m = NULL;
    hs_fl *f = NULL;
    hs_fl_sens *s = NULL;
    hs_native *nat = NULL;
    sens_ctx c = { .o = o, .np = np, .r = r, .fn = fn, .ctx = ctx };
    int rc = !r ? hs_error_nomem(&e)
           : !np || !params ? hs_error_set(&e, HS_EXIT_USAGE, "a run with sensitivities "
                                           "needs at least one parameter")
           : refuse_options(o, &e);
    if (!rc && !(m = hs_api_load(h, HS_API_DENSE, &e)))
        rc = e.code;
    if (!rc && o)
        rc = hs_api_apply_options(&m->set, o, &e);
    if (!rc)
        rc = hs_fl_sens_refuse(m, &e);
    if (!rc && !(f = hs_fl_new_sparse(m, &e)))
        rc = e.code;
    if (!rc && !(s = hs_fl_sens_new(f, params, np, &e)))
        rc = e.code;
    if (!rc && o && o->method && strcmp(o->method, hs_fl_method(f)) != 0)
        rc = hs_error_set(&e, HS_EXIT_USAGE, "a run with sensitivities integrates with an "
                          "explicit gsl_odeiv2 method: '%s' is not one (%s, rkf45, rkck, "
                          "rk4, msadams ...)", o->method, hs_stepper_default->name);
    if (!rc && !(o && o->method) &&
        strcmp(m->set.method[0] ? m->set.method : hs_stepper_default->name,
               hs_fl_method(f)) != 0)
        say(o, HOLOSIM_MSG_NOTE, "--sensitivity: integrating with %s (the model's method %s "
            "is not an explicit gsl_odeiv2 one)", hs_fl_method(f), m->set.method);
    if (!rc) {
        nat = flow_native(o, f, s, m);
        c.m = m;
        c.ncols = hs_fl_sens_ncols(m, np);
        rc = integrate(m, f, s, params, np, &c, &e);
    }
    if (o && o->summary && r)
        summarize(o->summary, &c, f, s, h->m, now() - t0);
    free(c.row);
    if (f)
        hs_fl_use_native(f, s, NULL);
    hs_fl_sens_free(s);
    hs_fl_free(f);
    hs_native_free(nat);
    hs_model_free(m);
    if (rc) {
        hs_api_export_error(err, &e);
        holosim_result_free(r);
        return NULL;
    }
    return r;
}
