/* The public library (include/holosim.h): the layers below behind opaque
 * handles.  Nothing here prints, nothing exits, nothing global changes: a
 * holosim_model owns its loaded hs_model (immutable, shared by every run)
 * and what it was loaded from (the analyses load it again as statics, as
 * `holosim equilibrium` and `modes` do, since hs_an_new adds to a model's
 * DAG); a run's options go into a copy of the hs_model struct's settings
 * (the same values the command line's options put there at load), so a
 * run gives `holosim run`'s numbers bit for bit.  Rows reach the caller
 * through the caller-function sink of io/sink.h (hs_sink_fn): into a
 * growing buffer or to the caller's callback. */
#include "../../include/holosim.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/analysis.h"
#include "../consistency/consistency.h"
#include "../dynamics/dynamics.h"
#include "../integrate/integrate.h"
#include "../io/sink.h"
#include "../model/model.h"
#include "internal.h"

#ifndef HS_VERSION
#define HS_VERSION "0.0.0"
#endif



const char *holosim_version(void) { return HS_VERSION; }

const char *holosim_exit_text(int code) { return hs_exit_text(code); }

/* hs_error into the public form, with the text hs_error_print writes
 * (prefixed "holosim: " without a position, as the command line does). */
int hs_api_export_error(holosim_error *out, const hs_error *e)
{
    if (!out)
        return e->code;
    memset(out, 0, sizeof *out);
    out->code = e->code ? e->code : HS_EXIT_USAGE;
    out->line = e->line;
    out->column = e->column;
    snprintf(out->file, sizeof out->file, "%s", e->file);
    snprintf(out->message, sizeof out->message, "%s", e->msg);
    size_t used = 0;
    if (!e->file[0] && e->line == 0)
        used = (size_t)snprintf(out->text, sizeof out->text, "holosim: ");
    FILE *f = fmemopen(out->text + used, sizeof out->text - used, "w");
    if (f) {
        hs_error_print(e, f);
        fclose(f);
    }
    return out->code;
}

void hs_api_clear_error(holosim_error *err)
{
    if (err)
        memset(err, 0, sizeof *err);
}

static int fail_nomem(holosim_error *err)
{
    hs_error e;
    hs_error_init(&e);
    hs_error_nomem(&e);
    return hs_api_export_error(err, &e);
}

/* ---------- models ---------- */

void holosim_model_free(holosim_model *h)
{
    if (!h)
        return;
    hs_model_free(h->m);
    free(h->path);
    free(h->name);
    free(h->text);
    for (size_t i = 0; i < h->nset; i++) {
        free(h->set_name[i]);
        free(h->set_text[i]);
    }
    free(h->set_name);
    free(h->set_text);
    free(h);
}

/* The overrides "NAME=EXPR" into h: 0, or an exit code with err set. */
static int keep_sets(holosim_model *h, const char *const *set, size_t nset, hs_error *e)
{
    if (!nset)
        return 0;
    h->set_name = calloc(nset, sizeof *h->set_name);
    h->set_text = calloc(nset, sizeof *h->set_text);
    if (!h->set_name || !h->set_text)
        return hs_error_nomem(e);
    for (size_t i = 0; i < nset; i++, h->nset++) {
        const char *eq = set[i] ? strchr(set[i], '=') : NULL;
        if (!eq || eq == set[i] || !eq[1])
            return hs_error_set(e, HS_EXIT_USAGE, "set expects NAME=EXPR, not '%s'",
                                set[i] ? set[i] : "(null)");
        h->set_name[i] = strndup(set[i], (size_t)(eq - set[i]));
        h->set_text[i] = strdup(eq + 1);
        if (!h->set_name[i] || !h->set_text[i])
            return hs_error_nomem(e);
    }
    return 0;
}

/* Load h's source with its overrides; flags HS_API_* (internal.h). */
hs_model *hs_api_load(const holosim_model *h, unsigned flags, hs_error *e)
{
    hs_overrides ov;
    hs_overrides_init(&ov);
    ov.nset = h->nset;
    ov.set_name = (const char *const *)h->set_name;
    ov.set_text = (const char *const *)h->set_text;
    double *val = h->nset ? calloc(h->nset, sizeof *val) : NULL;
    if (h->nset && !val) {
        hs_error_nomem(e);
        return NULL;
    }
    ov.set_value = val;
    ov.statics = !!(flags & HS_API_STATICS);
    ov.dense = !!(flags & HS_API_DENSE);
    ov.keep_outputs = !!(flags & HS_API_OUTPUTS);
    ov.input_symbols = !!(flags & HS_API_INPUTS);
    hs_model *m = h->path ? hs_model_load(h->path, &ov, e)
                          : hs_model_load_string(h->name, h->text, &ov, e);
    free(val);
    return m;
}

static holosim_model *open_model(const char *path, const char *name, const char *text,
                                 const char *const *set, size_t nset, holosim_error *err)
{
    hs_error e;
    hs_error_init(&e);
    hs_api_clear_error(err);
    holosim_model *h = calloc(1, sizeof *h);
    if (!h) {
        fail_nomem(err);
        return NULL;
    }
    if (path ? !(h->path = strdup(path))
             : !(h->name = strdup(name ? name : "<text>")) || !(h->text = strdup(text)))
        hs_error_nomem(&e);
    if (!e.code && !keep_sets(h, set, nset, &e))
        h->m = hs_api_load(h, 0, &e);
    if (!h->m) {
        hs_api_export_error(err, &e);
        holosim_model_free(h);
        return NULL;
    }
    return h;
}

holosim_model *holosim_model_load(const char *path, const char *const *set, size_t nset,
                                  holosim_error *err)
{
    if (!path) {
        hs_error e;
        hs_error_init(&e);
        hs_error_set(&e, HS_EXIT_USAGE, "no model file given");
        hs_api_export_error(err, &e);
        return NULL;
    }
    return open_model(path, NULL, NULL, set, nset, err);
}

holosim_model *holosim_model_load_text(const char *name, const char *text,
                                       const char *const *set, size_t nset,
                                       holosim_error *err)
{
    if (!text) {
        hs_error e;
        hs_error_init(&e);
        hs_error_set(&e, HS_EXIT_USAGE, "no model text given");
        hs_api_export_error(err, &e);
        return NULL;
    }
    return open_model(NULL, name, text, set, nset, err);
}

const char *holosim_model_name(const holosim_model *h) { return h->m->name; }
size_t holosim_model_ncoords(const holosim_model *h) { return h->m->n; }
size_t holosim_model_nconstraints(const holosim_model *h) { return h->m->k; }
size_t holosim_model_nparams(const holosim_model *h) { return h->m->npar - h->m->ninput; }

const char *holosim_model_coord(const holosim_model *h, size_t i)
{
    return i < h->m->n ? h->m->qname[i] : NULL;
}

const char *holosim_model_constraint(const holosim_model *h, size_t j)
{
    return j < h->m->k ? h->m->cname[j] : NULL;
}

const char *holosim_model_param(const holosim_model *h, size_t i, double *value)
{
    if (i >= holosim_model_nparams(h))
        return NULL;
    if (value)
        *value = h->m->pval[i];
    return h->m->pname[i];
}

/* ---------- runs: the sink ---------- */

/* The rows into the result's buffer, or to the caller's callback
 * (io/sink.h, hs_sink_fn). */
typedef struct api_sink {
    hs_sink_fn base;
    holosim_result *r;
    holosim_row_fn fn;
    void *ctx;
    volatile sig_atomic_t *stop;   /* the run's stop flag: the callback said stop */
    int nomem;
} api_sink;

static void api_header(void *ctx, const hs_columns *c)
{
    api_sink *a = ctx;
    holosim_result *r = a->r;
    if (r->names)
        return;
    r->names = calloc(c->n ? c->n : 1, sizeof *r->names);
    if (!r->names) {
        a->nomem = 1;
        *a->stop = 1;
        return;
    }
    r->ncols = c->n;
    for (size_t j = 0; j < c->n; j++)
        if (!(r->names[j] = strdup(c->c[j].name))) {
            a->nomem = 1;
            *a->stop = 1;
        }
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
    api_sink *a = ctx;
    if (a->nomem || *a->stop)
        return;
    int st = hs_api_result_push(a->r, a->fn, a->ctx, x, n);
    if (st)
        *a->stop = 1;
    if (st < 0)
        a->nomem = 1;
}

/* ---------- runs ---------- */

void holosim_run_options_init(holosim_run_options *o)
{
    memset(o, 0, sizeof *o);
    o->t_end = o->dt = o->step = o->rtol = o->atol = NAN;
    o->output_mode = -1;
}

void holosim_result_free(holosim_result *r)
{
    if (!r)
        return;
    for (size_t j = 0; j < r->ncols && r->names; j++)
        free(r->names[j]);
    free(r->names);
    free(r->data);
    free(r);
}

size_t holosim_result_ncols(const holosim_result *r) { return r->ncols; }
size_t holosim_result_nrows(const holosim_result *r) { return r->nrows; }
const double *holosim_result_data(const holosim_result *r) { return r->nrows ? r->data : NULL; }
long holosim_result_steps(const holosim_result *r) { return r->steps; }
long holosim_result_nrhs(const holosim_result *r) { return r->nrhs; }

const char *holosim_result_column(const holosim_result *r, size_t j)
{
    return j < r->ncols ? r->names[j] : NULL;
}

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
    return 0;
}

holosim_result *holosim_run(const holosim_model *h, const holosim_run_options *o,
                            holosim_row_fn fn, void *ctx, holosim_error *err)
{
    hs_error e;
    hs_error_init(&e);
    hs_api_clear_error(err);
    holosim_result *r = calloc(1, sizeof *r);
    if (!r) {
        fail_nomem(err);
        return NULL;
    }
    hs_model copy = *h->m;     /* shares everything but the settings */
    holosim_run_options def;
    holosim_run_options_init(&def);
    volatile sig_atomic_t stop = 0;
    api_sink sink = { .r = r, .fn = fn, .ctx = ctx, .stop = &stop };
    hs_sink_fn_init(&sink.base, &sink, api_header, api_row, NULL);
    int rc = hs_api_apply_options(&copy.set, o ? o : &def, &e);
    if (!rc)
        rc = hs_stepper_check(&copy, &e);
    if (!rc) {
        hs_run_opts ro = {
            .out = &sink.base.base,
            .columns = o ? o->columns : NULL,
            .precision = 17,
            .report = NULL,
            .progress = HS_PROGRESS_OFF,
            .stop = &stop,
        };
        hs_summary sum;
        memset(&sum, 0, sizeof sum);
        rc = hs_run(&copy, &ro, &sum, &e);
        r->steps = sum.steps;
        r->nrhs = sum.nrhs;
        if (sink.nomem) {
            hs_error_init(&e);
            rc = hs_error_nomem(&e);
        } else if (rc == HS_EXIT_INTERRUPT) {
            hs_error_init(&e);
            rc = hs_error_set(&e, HOLOSIM_ESTOPPED, "the run was stopped by its row "
                              "callback at row %zu", r->nrows);
        }
    }
    if (rc) {
        hs_api_export_error(err, &e);
        holosim_result_free(r);
        return NULL;
    }
    return r;
}

/* ---------- check ---------- */

int holosim_check(const holosim_model *h, holosim_check_report *rep, holosim_error *err)
{
    const hs_model *m = h->m;
    hs_error e;
    hs_error_init(&e);
    hs_api_clear_error(err);
    memset(rep, 0, sizeof *rep);
    rep->n = m->n;
    rep->k = m->k;
    rep->nparams = m->npar - m->ninput;
    rep->tolerance = m->set.tol;
    if (hs_stepper_check(m, &e))
        return hs_api_export_error(err, &e);
    hs_work *w = hs_work_new(m);
    double *q = malloc((m->n + 1) * sizeof *q), *v = malloc((m->n + 1) * sizeof *v);
    double *G = calloc(m->k + 1, sizeof *G), *Gt = calloc(m->k + 1, sizeof *Gt);
    int rc = 0;
    if (!w || !q || !v || !G || !Gt) {
        rc = hs_error_nomem(&e);
        goto out;
    }
    memcpy(q, m->q0, m->n * sizeof *q);
    memcpy(v, m->v0, m->n * sizeof *v);
    rep->rank = m->k;
    if (m->k) {
        if (hs_dyn_constraints_sparse(m, w, m->t0, q, G, Gt)) {
            rc = hs_error_adopt(&e, hs_work_err(w), 0);
            goto out;
        }
        for (size_t i = 0; i < m->k; i++) {
            double s = Gt[i];
            for (int z = m->gq_start[i]; z < m->gq_start[i + 1]; z++)
                s += hs_work_con_Gq(m, w)[z] * v[m->gq_col[z]];
            rep->max_G = fmax(rep->max_G, fabs(G[i]));
            rep->max_Gdot = fmax(rep->max_Gdot, fabs(s));
        }
        char msg[800];
        rep->rank = hs_cons_rank(m, w, m->t0, q, msg, sizeof msg, NULL);
    }
    rc = hs_cons_start(m, w, q, v, NULL, &e);
out:
    free(q);
    free(v);
    free(G);
    free(Gt);
    hs_work_free(w);
    return rc ? hs_api_export_error(err, &e) : 0;
}

/* ---------- equilibrium and modes ---------- */

/* The statics model of h, its analysis, the equilibrium from q0 and the
 * modes there: 0, or the exit code with e set. */
static int analyse(const holosim_model *h, hs_model **m, hs_an **a, hs_equil *eq,
                   hs_modes *md, hs_error *e)
{
    *a = NULL;
    if (!(*m = hs_api_load(h, HS_API_STATICS, e)))
        return e->code;
    if (!(*a = hs_an_new(*m, e)))
        return e->code;
    if (hs_an_equilibrium(*a, (*m)->q0, eq, e))
        return e->code;
    return hs_an_modes(*a, eq, md, e);
}

double *hs_api_dup_doubles(const double *x, size_t n)
{
    double *d = malloc((n ? n : 1) * sizeof *d);
    if (d && n)
        memcpy(d, x, n * sizeof *d);
    return d;
}

int holosim_equilibrium_find(const holosim_model *h, holosim_equilibrium *out,
                             holosim_error *err)
{
    hs_error e;
    hs_error_init(&e);
    hs_api_clear_error(err);
    memset(out, 0, sizeof *out);
    hs_model *m = NULL;
    hs_an *a = NULL;
    hs_equil eq;
    hs_modes md;
    memset(&eq, 0, sizeof eq);
    memset(&md, 0, sizeof md);
    int rc = analyse(h, &m, &a, &eq, &md, &e);
    if (!rc) {
        out->n = m->n;
        out->k = m->k;
        out->q = hs_api_dup_doubles(eq.q, m->n);
        out->lambda = hs_api_dup_doubles(eq.lambda, m->k);
        out->res_Q = eq.res_Q;
        out->res_G = eq.res_G;
        out->iterations = eq.iterations;
        out->stable = md.stable;
        out->verdict = hs_an_verdict_names[md.verdict];
        if (!out->q || !out->lambda)
            rc = hs_error_nomem(&e);
    }
    hs_an_equil_free(&eq);
    hs_an_modes_free(&md);
    hs_an_free(a);
    hs_model_free(m);
    return rc ? hs_api_export_error(err, &e) : 0;
}

void holosim_equilibrium_free(holosim_equilibrium *eq)
{
    if (!eq)
        return;
    free(eq->q);
    free(eq->lambda);
    eq->q = eq->lambda = NULL;
}

int holosim_modes_find(const holosim_model *h, holosim_modes *out, holosim_error *err)
{
    hs_error e;
    hs_error_init(&e);
    hs_api_clear_error(err);
    memset(out, 0, sizeof *out);
    hs_model *m = NULL;
    hs_an *a = NULL;
    hs_equil eq;
    hs_modes md;
    memset(&eq, 0, sizeof eq);
    memset(&md, 0, sizeof md);
    int rc = analyse(h, &m, &a, &eq, &md, &e);
    if (!rc) {
        out->n = m->n;
        out->count = md.count;
        out->sigma = hs_api_dup_doubles(md.sigma, md.count);
        out->omega = hs_api_dup_doubles(md.omega, md.count);
        out->shape = hs_api_dup_doubles(md.shape, md.count * m->n);
        out->shape_im = hs_api_dup_doubles(md.shape_im, md.count * m->n);
        out->stable = md.stable;
        out->verdict = hs_an_verdict_names[md.verdict];
        if (!out->sigma || !out->omega || !out->shape || !out->shape_im)
            rc = hs_error_nomem(&e);
    }
    hs_an_equil_free(&eq);
    hs_an_modes_free(&md);
    hs_an_free(a);
    hs_model_free(m);
    return rc ? hs_api_export_error(err, &e) : 0;
}

void holosim_modes_free(holosim_modes *md)
{
    if (!md)
        return;
    free(md->sigma);
    free(md->omega);
    free(md->shape);
    free(md->shape_im);
    md->sigma = md->omega = md->shape = md->shape_im = NULL;
}
