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
    if (!h->borrowed)
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
    for (size_t i = 0; i < h->ninput; i++) {
        free(h->input_name[i]);
        free(h->input_text[i]);
    }
    free(h->input_name);
    free(h->input_text);
    for (size_t i = 0; i < h->nstop; i++)
        free(h->stop_when[i]);
    free(h->stop_when);
    free(h);
}

holosim_model *hs_api_adopt(hs_model *m)
{
    holosim_model *h = calloc(1, sizeof *h);
    if (h) {
        h->m = m;
        h->borrowed = 1;
    }
    return h;
}

/* "NAME=TEXT" entries split into *name, *text [n] (the count kept in
 * *count as they are made): 0, or an exit code with e set (what: "set
 * expects NAME=EXPR"). */
static int keep_pairs(const char *const *in, size_t n, char ***name, char ***text,
                      size_t *count, const char *what, hs_error *e)
{
    if (!n)
        return 0;
    *name = calloc(n, sizeof **name);
    *text = calloc(n, sizeof **text);
    if (!*name || !*text)
        return hs_error_nomem(e);
    for (size_t i = 0; i < n; i++, (*count)++) {
        const char *eq = in[i] ? strchr(in[i], '=') : NULL;
        if (!eq || eq == in[i] || !eq[1])
            return hs_error_set(e, HS_EXIT_USAGE, "%s, not '%s'", what,
                                in[i] ? in[i] : "(null)");
        (*name)[i] = strndup(in[i], (size_t)(eq - in[i]));
        (*text)[i] = strdup(eq + 1);
        if (!(*name)[i] || !(*text)[i])
            return hs_error_nomem(e);
    }
    return 0;
}

/* The load options into h: 0, or an exit code with e set. */
static int keep_load(holosim_model *h, const holosim_load_options *lo, hs_error *e)
{
    if (keep_pairs(lo->set, lo->nset, &h->set_name, &h->set_text, &h->nset,
                   "set expects NAME=EXPR", e) ||
        keep_pairs(lo->inputs, lo->ninputs, &h->input_name, &h->input_text, &h->ninput,
                   "inputs expects NAME=EXPR or NAME=FILE.csv", e))
        return e->code;
    if (!lo->nstop_when)
        return 0;
    if (!(h->stop_when = calloc(lo->nstop_when, sizeof *h->stop_when)))
        return hs_error_nomem(e);
    for (size_t i = 0; i < lo->nstop_when; i++, h->nstop++) {
        if (!lo->stop_when[i] || !lo->stop_when[i][strspn(lo->stop_when[i], " \t")])
            return hs_error_set(e, HS_EXIT_USAGE, "stop_when wants a condition such as "
                                "'x > 1', got '%s'", lo->stop_when[i] ? lo->stop_when[i] : "");
        if (!(h->stop_when[i] = strdup(lo->stop_when[i])))
            return hs_error_nomem(e);
    }
    return 0;
}

void holosim_load_options_init(holosim_load_options *lo)
{
    memset(lo, 0, sizeof *lo);
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
    ov.ninput = h->ninput;
    ov.input_name = (const char *const *)h->input_name;
    ov.input_text = (const char *const *)h->input_text;
    ov.nstop = h->nstop;
    ov.stop_when = (const char *const *)h->stop_when;
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
                                 const holosim_load_options *lo, holosim_error *err)
{
    holosim_load_options none;
    holosim_load_options_init(&none);
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
    if (!e.code && !keep_load(h, lo ? lo : &none, &e))
        h->m = hs_api_load(h, 0, &e);
    if (!h->m) {
        hs_api_export_error(err, &e);
        holosim_model_free(h);
        return NULL;
    }
    return h;
}

holosim_model *holosim_model_load_with(const char *path, const holosim_load_options *lo,
                                       holosim_error *err)
{
    if (!path) {
        hs_error e;
        hs_error_init(&e);
        hs_error_set(&e, HS_EXIT_USAGE, "no model file given");
        hs_api_export_error(err, &e);
        return NULL;
    }
    return open_model(path, NULL, NULL, lo, err);
}

holosim_model *holosim_model_load_text_with(const char *name, const char *text,
                                            const holosim_load_options *lo, holosim_error *err)
{
    if (!text) {
        hs_error e;
        hs_error_init(&e);
        hs_error_set(&e, HS_EXIT_USAGE, "no model text given");
        hs_api_export_error(err, &e);
        return NULL;
    }
    return open_model(NULL, name, text, lo, err);
}

holosim_model *holosim_model_load(const char *path, const char *const *set, size_t nset,
                                  holosim_error *err)
{
    holosim_load_options lo;
    holosim_load_options_init(&lo);
    lo.set = set;
    lo.nset = nset;
    return holosim_model_load_with(path, &lo, err);
}

holosim_model *holosim_model_load_text(const char *name, const char *text,
                                       const char *const *set, size_t nset,
                                       holosim_error *err)
{
    holosim_load_options lo;
    holosim_load_options_init(&lo);
    lo.set = set;
    lo.nset = nset;
    return holosim_model_load_text_with(name, text, &lo, err);
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
