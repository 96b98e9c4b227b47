/* The library's runs (include/holosim.h, holosim_run): a run's options
 * put into a copy of the model struct's settings (the values the command
 * line's options put there at load), so a run gives `holosim run`'s
 * numbers bit for bit; the rows and the event rows through the
 * caller-function sinks of io/sink.h (hs_sink_fn), into the result's
 * buffers or to the caller's callbacks; the run's report (the projection,
 * the warnings) through a stream whose lines go to the caller's message
 * callback, so nothing is printed; the native kernels by the caller's
 * policy; the summary into the public struct.  `holosim run` is a client
 * of this file (cli/run.c). */
#define _GNU_SOURCE                /* fopencookie: the report's lines to a callback */
#include "../../include/holosim.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../integrate/integrate.h"
#include "../io/sink.h"
#include "../model/model.h"
#include "../native/native.h"
#include "internal.h"

/* ---------- the sinks ---------- */

/* The rows (or the event rows) into the result's buffers, or to the
 * caller's callbacks (io/sink.h, hs_sink_fn).  A callback's stop ends the
 * rows' sink as a failed write would (the run stops after the step, its
 * rows so far kept); holosim_run then says HOLOSIM_ESTOPPED. */
typedef struct api_run {
    hs_sink_fn rows, events;
    holosim_result *r;
    holosim_row_fn fn;
    void *ctx;
    const holosim_run_options *o;
    int header_done;
    int stopped;                   /* a callback said stop */
    int nomem;
} api_run;

static void stop_run(api_run *a, int nomem)
{
    a->stopped = 1;
    a->nomem |= nomem;
    a->rows.base.failed = 1;       /* integrate.c: the run's loop ends */
}

static void api_header(void *ctx, const hs_columns *c)
{
    api_run *a = ctx;
    holosim_result *r = a->r;
    if (a->header_done)
        return;
    a->header_done = 1;
    r->names = calloc(c->n ? c->n : 1, sizeof *r->names);
    if (!r->names) {
        stop_run(a, 1);
        return;
    }
    r->ncols = c->n;
    for (size_t j = 0; j < c->n; j++)
        if (!(r->names[j] = strdup(c->c[j].name))) {
            stop_run(a, 1);
            return;
        }
    if (a->o->header && a->o->header(a->o->header_ctx, (const char *const *)r->names, r->ncols))
        stop_run(a, 0);
}

/* A row to the callback or into the buffer (internal.h). */
int hs_api_result_push(holosim_result *r, holosim_row_fn fn, void *ctx, const double *x,
                       size_t n)
{
    if (fn) {
        int stop = fn(ctx, x, n) != 0;
        r->nrows++;
        return stop;
    } else {
        if (r->nrows == r->cap) {
            size_t cap = r->cap ? 2 * r->cap : 1024;
            double *d = realloc(r->data, cap * (n ? n : 1) * sizeof *d);
            if (!d)
                return -1;
            r->data = d;
            r->cap = cap;
        }
        memcpy(r->data + r->nrows * n, x, n * sizeof *x);
    }
    r->nrows++;
    return 0;
}

static void api_row(void *ctx, const double *x, size_t n)
{
    api_run *a = ctx;
    if (a->stopped)
        return;
    int st = hs_api_result_push(a->r, a->fn, a->ctx, x, n);
    if (st)
        stop_run(a, st < 0);
}

/* An event row into the result's event buffer. */
static int push_event(holosim_result *r, const char *event, const double *x, size_t n)
{
    if (r->nevents == r->evcap) {
        size_t cap = r->evcap ? 2 * r->evcap : 16;
        double *d = realloc(r->evdata, cap * (n ? n : 1) * sizeof *d);
        if (d)
            r->evdata = d;
        char **nm = d ? realloc(r->evname, cap * sizeof *nm) : NULL;
        if (!nm)
            return -1;
        r->evname = nm;
        r->evcap = cap;
    }
    if (!(r->evname[r->nevents] = strdup(event)))
        return -1;
    memcpy(r->evdata + r->nevents * n, x, n * sizeof *x);
    r->nevents++;
    return 0;
}

static void api_event_row(void *ctx, const char *event, const double *x, size_t n)
{
    api_run *a = ctx;
    if (a->stopped)
        return;
    if (a->o->events) {
        if (a->o->events(a->o->events_ctx, event, x, n))
            stop_run(a, 0);
    } else if (push_event(a->r, event, x, n)) {
        stop_run(a, 1);
    }
}

/* ---------- the report: lines to the caller ---------- */

/* The report stream's bytes, cut into lines for the message callback. */
typedef struct api_report {
    const holosim_run_options *o;
    char *line;
    size_t len, cap;
} api_report;

static void report_emit(api_report *p)
{
    if (!p->len)
        return;
    p->line[p->len] = '\0';
    p->o->message(p->o->message_ctx, HOLOSIM_MSG_REPORT, p->line);
    p->len = 0;
}

static ssize_t report_write(void *cookie, const char *buf, size_t size)
{
    api_report *p = cookie;
    for (size_t i = 0; i < size; i++) {
        if (p->len + 2 > p->cap) {
            size_t cap = p->cap ? 2 * p->cap : 256;
            char *l = realloc(p->line, cap);
            if (!l)
                return -1;
            p->line = l;
            p->cap = cap;
        }
        p->line[p->len++] = buf[i];
        if (buf[i] == '\n')
            report_emit(p);
    }
    return (ssize_t)size;
}

static int report_close(void *cookie)
{
    api_report *p = cookie;
    report_emit(p);
    free(p->line);
    p->line = NULL;
    return 0;
}

/* The run's report stream: NULL without a message callback (nothing to
 * say then, and the progress line's AUTO stays off, as with -q). */
static FILE *report_open(api_report *p, const holosim_run_options *o)
{
    memset(p, 0, sizeof *p);
    p->o = o;
    if (!o->message)
        return NULL;
    cookie_io_functions_t io = { .write = report_write, .close = report_close };
    FILE *f = fopencookie(p, "w", io);
    if (f)
        setvbuf(f, NULL, _IONBF, 0);
    return f;
}

/* ---------- the native kernels ---------- */

struct hs_native *hs_api_native(const hs_model *m, int policy, double runs, char *note,
                                size_t size)
{
    note[0] = '\0';
    hs_native_opts no;
    hs_native_opts_init(&no);
    no.names = m->names;
    no.policy = (hs_native_policy)policy;
    if (no.policy == HS_NATIVE_NEVER)
        return NULL;
    /* the work of the run, roughly: a row per dt (1000 rows when dt is not
     * given), about 13 right-hand sides per row (rk8pd), an aux program per row */
    const hs_settings *s = &m->set;
    double rows = !isnan(s->dt) && s->dt > 0 && s->t_end > m->t0 ? (s->t_end - m->t0) / s->dt
                                                                 : 1000;
    /* a structured embedding's right-hand side is its own program: the
     * dense metric's is not run then (integrate.c maps kernel 0) */
    const hs_prog *rhs = m->chain ? m->chain->prog : m->prog_dyn;
    no.work = runs * rows * (13.0 * (double)hs_prog_ninstr(rhs) +
                             (double)hs_prog_ninstr(m->prog_aux));
    const hs_prog *progs[5] = { rhs, m->prog_aux, m->prog_pos, m->prog_out, m->prog_ev };
    hs_native_status st;
    return hs_native_load(progs, 5, &no, &st, note, size);
}

/* ---------- the result ---------- */

void holosim_run_options_init(holosim_run_options *o)
{
    memset(o, 0, sizeof *o);
    o->t_end = o->dt = o->step = o->rtol = o->atol = NAN;
    o->output_mode = -1;
    o->native = HOLOSIM_NATIVE_DEFAULT;
    o->progress = HOLOSIM_PROGRESS_OFF;
}

void holosim_result_free(holosim_result *r)
{
    if (!r)
        return;
    for (size_t j = 0; j < r->ncols && r->names; j++)
        free(r->names[j]);
    free(r->names);
    free(r->data);
    for (size_t i = 0; i < r->nevents; i++)
        free(r->evname[i]);
    free(r->evname);
    free(r->evdata);
    free(r);
}

size_t holosim_result_ncols(const holosim_result *r) { return r->ncols; }
size_t holosim_result_nrows(const holosim_result *r) { return r->nrows; }
const double *holosim_result_data(const holosim_result *r) { return r->nrows ? r->data : NULL; }
long holosim_result_steps(const holosim_result *r) { return r->steps; }
long holosim_result_nrhs(const holosim_result *r) { return r->nrhs; }
size_t holosim_result_nevents(const holosim_result *r) { return r->nevents; }

const char *holosim_result_column(const holosim_result *r, size_t j)
{
    return j < r->ncols ? r->names[j] : NULL;
}

const char *holosim_result_event(const holosim_result *r, size_t i)
{
    return i < r->nevents ? r->evname[i] : NULL;
}

const double *holosim_result_event_data(const holosim_result *r)
{
    return r->nevents ? r->evdata : NULL;
}

/* ---------- the run ---------- */

/* The options into the settings (internal.h). */
int hs_api_apply_options(hs_settings *s, const holosim_run_options *o, hs_error *e)
{
    if (!isnan(o->t_end)) s->t_end = o->t_end;
    if (!isnan(o->dt)) s->dt = o->dt;
    if (o->method) {
        if (strlen(o->method) >= sizeof s->method)
            return hs_error_set(e, HS_EXIT_USAGE, "unknown method '%s'", o->method);
        snprintf(s->method, sizeof s->method, "%s", o->method);
        s->method_pos = (hs_srcpos){ -1, 0 };
    }
    if (!isnan(o->step)) {
        s->step = o->step;
        s->step_pos = (hs_srcpos){ -1, 0 };
    }
    if (!isnan(o->rtol)) s->rtol = o->rtol;
    if (!isnan(o->atol)) s->atol = o->atol;
    if (o->output_mode == 0 || o->output_mode == 1)
        s->interpolate = o->output_mode;
    else if (o->output_mode != -1)
        return hs_error_set(e, HS_EXIT_USAGE, "output_mode must be 0 (exact) or "
                            "1 (interpolate), not %d", o->output_mode);
    if (o->native < HOLOSIM_NATIVE_DEFAULT || o->native > HOLOSIM_NATIVE_ALWAYS)
        return hs_error_set(e, HS_EXIT_USAGE, "native must be -1 (default), 0 (never), "
                            "1 (auto) or 2 (always), not %d", o->native);
    if (o->progress < HOLOSIM_PROGRESS_OFF || o->progress > HOLOSIM_PROGRESS_ON)
        return hs_error_set(e, HS_EXIT_USAGE, "progress must be -1 (off), 0 (auto) or "
                            "1 (on), not %d", o->progress);
    return 0;
}

static void export_summary(holosim_run_summary *p, const hs_summary *s)
{
    *p = (holosim_run_summary){
        .steps = s->steps, .nrhs = s->nrhs, .rows = s->rows,
        .projections = s->projections, .splits = s->splits,
        .max_G = s->max_G, .max_Gdot = s->max_Gdot,
        .max_energy_balance = s->max_ebal, .max_power_residual = s->max_pres,
        .t_reached = s->t_reached, .wall = s->wall, .events = s->events,
        .stopped_by = s->stopped_by, .stop_text = s->stop_text,
        .impacts = s->impacts, .transitions = s->transitions,
        .rested = s->rested, .t_rest = s->t_rest, .rest_contact = s->rest_contact,
        .k = s->k, .rank0 = s->rank0, .nrobust = s->nrobust, .nsingular = s->nsingular,
        .worst_rcond = s->worst_rcond, .augmented = s->augmented,
    };
}

/* hs_run on the copy with the sinks, the report, the kernels and the stop
 * flag of the options: its exit code, e set. */
static int integrate(const hs_model *copy, const holosim_run_options *o, api_run *a,
                     hs_summary *sum, hs_error *e)
{
    api_report rep;
    FILE *report = report_open(&rep, o);
    if (o->message && !report)
        return hs_error_nomem(e);
    char note[512];
    int policy = o->native == HOLOSIM_NATIVE_DEFAULT ? HOLOSIM_NATIVE_NEVER : o->native;
    hs_native *nat = hs_api_native(copy, policy, 1, note, sizeof note);
    if (note[0] && o->message) {
        char line[sizeof note + 16];
        snprintf(line, sizeof line, "holosim: %s\n", note);
        o->message(o->message_ctx, HOLOSIM_MSG_NOTE, line);
    }
    hs_run_opts ro = {
        .out = &a->rows.base,
        .columns = o->columns,
        .precision = 17,
        .report = report,
        .progress = o->progress,
        .stop = o->stop,
        .native = nat,
        .events = o->events || o->keep_events ? &a->events.base : NULL,
        .no_residuals = o->no_residuals,
    };
    int rc = hs_run(copy, &ro, sum, e);
    hs_native_free(nat);
    if (report)
        fclose(report);
    return rc;
}

holosim_result *holosim_run(const holosim_model *h, const holosim_run_options *o,
                            holosim_row_fn fn, void *ctx, holosim_error *err)
{
    hs_error e;
    hs_error_init(&e);
    hs_api_clear_error(err);
    holosim_run_options def;
    holosim_run_options_init(&def);
    if (!o)
        o = &def;
    hs_summary sum;
    memset(&sum, 0, sizeof sum);
    holosim_result *r = calloc(1, sizeof *r);
    int rc = r ? 0 : hs_error_nomem(&e);
    hs_model copy = *h->m;     /* shares everything but the settings */
    api_run a = { .r = r, .fn = fn, .ctx = ctx, .o = o };
    hs_sink_fn_init(&a.rows, &a, api_header, api_row, NULL);
    hs_sink_fn_init(&a.events, &a, api_header, NULL, api_event_row);
    if (!rc)
        rc = hs_api_apply_options(&copy.set, o, &e);
    if (!rc)
        rc = hs_stepper_check(&copy, &e);
    if (!rc) {
        rc = integrate(&copy, o, &a, &sum, &e);
        r->steps = sum.steps;
        r->nrhs = sum.nrhs;
        if (a.nomem) {
            hs_error_init(&e);
            rc = hs_error_nomem(&e);
        } else if (!rc && a.stopped) {
            rc = hs_error_set(&e, HOLOSIM_ESTOPPED, "the run was stopped by its row "
                              "callback at row %zu", r->nrows);
        } else if (rc == HS_EXIT_INTERRUPT) {
            rc = hs_error_recode(&e, HOLOSIM_ESTOPPED);
        }
    }
    if (o->summary)
        export_summary(o->summary, &sum);
    if (rc) {
        hs_api_export_error(err, &e);
        holosim_result_free(r);
        return NULL;
    }
    return r;
}
