/* Loading a model (model.h): the jobs of loader.h in order, from the file's
 * text through the language's expansion (lang.h) to the compiled programs;
 * and freeing it, the other half of the pair. */
#include "loader.h"
#include "../linalg/linalg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The form from the keys present: `embedding`, `kinetic`/`lagrangian`, or
 * `mass` alone (Cartesian); `format` and `name` checked on the way. */
static int read_header(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    yaml_node_t *v;
    if ((v = hs_ld_get(L, root, "format"))) {
        const char *s = hs_ytree_str(v);
        if (!s || strcmp(s, "1") != 0)
            return hs_ytree_error(L->y, L->err, v, "unsupported format '%s' (this holosim "
                                  "reads format 1)", s ? s : hs_ytree_kind(v));
    }
    if ((v = hs_ld_get(L, root, "name"))) {
        if (hs_ld_expect(L, v, YAML_SCALAR_NODE, "'name'"))
            return L->err->code;
        free(m->name);
        m->name = hs_ld_strdup(hs_ytree_str(v));
    }
    yaml_node_t *kin = hs_ld_get_key(L, root, "kinetic"), *lag = hs_ld_get_key(L, root, "lagrangian"),
                *emb = hs_ld_get_key(L, root, "embedding"), *mass = hs_ld_get_key(L, root, "mass");
    if (kin && lag)
        return hs_ytree_error(L->y, L->err, lag, "give either 'kinetic' or 'lagrangian', "
                              "not both");
    if (emb && (kin || lag))
        return hs_ytree_error(L->y, L->err, emb, "'embedding' derives the kinetic energy "
                              "from the ambient 'mass'; drop '%s'", kin ? "kinetic" : "lagrangian");
    m->form = emb ? HS_FORM_EMBEDDING : (kin || lag) ? HS_FORM_LAGRANGIAN : HS_FORM_CARTESIAN;
    if (m->form == HS_FORM_LAGRANGIAN && mass)
        return hs_ytree_error(L->y, L->err, mass, "'mass' is not used with '%s': the "
                              "metric is d2T/dv2", kin ? "kinetic" : "lagrangian");
    if (m->form != HS_FORM_LAGRANGIAN && !mass)
        return hs_ytree_error(L->y, L->err, root, "missing key 'mass' (or write "
                              "'kinetic'/'lagrangian' for the Lagrangian form)");
    return 0;
}

/* Coordinates, then every named entry (parameters, defines, ambient
 * names), checked for clashes before any expression is parsed. */
static int read_names(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    if (hs_ld_read_coordinates(L, root))
        return L->err->code;
    m->lock = xcalloc(m->n, 1);
    m->q0 = xcalloc(m->n, sizeof *m->q0);
    m->v0 = xcalloc(m->n, sizeof *m->v0);
    if (!m->lock || !m->q0 || !m->v0)
        return hs_error_nomem(L->err);
    if (hs_ld_read_names_map(L, hs_ld_get(L, root, "parameters"), &L->par, &L->npar,
                             "'parameters'") ||
        hs_ld_read_inputs(L, root) ||
        hs_ld_read_names_map(L, hs_ld_get(L, root, "define"), &L->def, &L->ndef, "'define'"))
        return L->err->code;
    if (m->form == HS_FORM_EMBEDDING) {
        yaml_node_t *emb = hs_ld_get(L, root, "embedding");
        if (hs_ld_read_names_map(L, emb, &L->amb, &L->namb, "'embedding'"))
            return L->err->code;
        if (L->namb == 0)
            return hs_ytree_error(L->y, L->err, emb,
                                  "'embedding' is empty: map ambient names to X(t, q)");
        m->ambname = xcalloc(L->namb, sizeof *m->ambname);
        if (!m->ambname)
            return hs_error_nomem(L->err);
        for (; m->namb < L->namb; m->namb++)
            if (!(m->ambname[m->namb] = hs_ld_strdup(L->amb[m->namb].name)))
                return hs_error_nomem(L->err);
    }
    if (hs_ld_read_constraint_names(L, hs_ld_get(L, root, "constraints")) ||
        hs_ld_read_contact_names(L, hs_ld_get(L, root, "contacts")) ||
        hs_ld_read_friction_names(L, root) ||
        hs_ld_read_output_names(L, hs_ld_get(L, root, "outputs")) ||
        hs_ld_check_clashes(L))
        return L->err->code;
    return hs_ld_check_names(L, root);
}

/* The symbols, in the order of the VM's input slots: t, q, q', parameters. */
static int make_symbols(loader *L)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    m->sym_t = hs_dag_symbol(d, "t");
    m->sym_q = xcalloc(m->n, sizeof *m->sym_q);
    m->sym_v = xcalloc(m->n, sizeof *m->sym_v);
    m->npar = L->npar;
    m->pname = xcalloc(L->npar, sizeof *m->pname);
    m->pval = xcalloc(L->npar, sizeof *m->pval);
    m->par_expr = xcalloc(L->npar, sizeof *m->par_expr);
    m->par_order = xcalloc(L->npar, sizeof *m->par_order);
    m->sym_p = xcalloc(L->npar, sizeof *m->sym_p);
    if (!m->sym_q || !m->sym_v || !m->pname || !m->pval || !m->sym_p || !m->par_expr ||
        !m->par_order)
        return hs_error_nomem(L->err);
    for (size_t i = 0; i < m->n; i++)
        m->sym_q[i] = hs_dag_symbol(d, m->qname[i]);
    for (size_t i = 0; i < m->n; i++)
        m->sym_v[i] = hs_dag_symbol(d, m->vname[i]);
    for (size_t i = 0; i < L->npar; i++) {
        m->pname[i] = hs_ld_strdup(L->par[i].name);
        m->sym_p[i] = hs_dag_symbol(d, L->par[i].name);
    }
    return 0;
}

/* The element of the file the metric comes from: errors about a mass
 * matrix that is not positive definite point there. */
static yaml_node_t *mass_source(loader *L, yaml_node_t *root)
{
    if (L->m->form != HS_FORM_LAGRANGIAN)
        return hs_ld_get(L, root, "mass");
    yaml_node_t *kin = hs_ld_get(L, root, "kinetic");
    return kin ? kin : hs_ld_get(L, root, "lagrangian");
}

static const char *const top_keys[] = {
    "format", "name", "parameters", "coordinates", "define", "mass", "potential",
    "forces", "constraints", "initial", "consistency", "simulate", "outputs",
    "kinetic", "lagrangian", "embedding", "events", "draw", "inputs", "contacts", "friction",
};

/* The file's top-level keys against format 1's and the language's, before
 * the language rewrites the document: a misspelt key (coordinate:,
 * body:) is named with its suggestion, not met later as a family that
 * nothing declares. */
static int check_keys_first(loader *L)
{
    yaml_node_t *root = hs_ytree_root(L->y);
    enum { NTOP = sizeof top_keys / sizeof *top_keys };
    const char *all[NTOP + 8];
    size_t n = 0;
    if (!root || root->type != YAML_MAPPING_NODE || hs_lang_nkeys > 8)
        return 0;
    for (size_t i = 0; i < NTOP; i++)
        all[n++] = top_keys[i];
    for (size_t i = 0; i < hs_lang_nkeys; i++)
        all[n++] = hs_lang_keys[i];
    return hs_ld_check_keys(L, root, all, n, "the model");
}

/* After the kernels: the outputs, events, drawing and the defines nothing
 * has read yet; for hs_overrides.statics none of them (the names of the
 * outputs, checked, are dropped). */
static int read_rest(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    if (!L->ov || !L->ov->statics)
        return hs_ld_read_outputs(L) || hs_ld_read_events(L, root) ||
               hs_ld_contact_events(L) || hs_ld_friction_events(L) ||
               hs_ld_read_draw(L, root) || hs_ld_check_defines(L);
    if (L->ov->keep_outputs)
        return hs_ld_read_outputs(L);
    while (m->nout)
        free(m->outname[--m->nout]);
    return 0;
}

/* The jobs of loader.h in order: read the description, build the kernels
 * of the form, compile the programs. */
static int load_tree(loader *L)
{
    const hs_overrides *ov = L->ov;
    hs_lang_sets sets = {ov ? ov->nset : 0, ov ? ov->set_name : NULL,
                         ov ? ov->set_value : NULL, ov ? ov->set_text : NULL,
                         ov ? ov->names : NULL};
    if (check_keys_first(L) || hs_lang_expand(L->y, &sets, &L->si->lang, L->err))
        return L->err->code;
    yaml_node_t *root = hs_ytree_root(L->y);
    if (root->type != YAML_MAPPING_NODE)
        return hs_ytree_error(L->y, L->err, root, "a model file must be a mapping of "
                              "keys (coordinates, mass, initial, ...), found %s",
                              hs_ytree_kind(root));
    if (hs_ld_check_keys(L, root, top_keys, sizeof top_keys / sizeof *top_keys, "the model") ||
        hs_ld_check_flow_cuts(L, root) || read_header(L, root) || read_names(L, root) || make_symbols(L) ||
        hs_ld_eval_params(L) || hs_ld_read_input_sources(L) || hs_ld_read_embedding(L) ||
        hs_ld_read_settings(L, root) || hs_ld_read_initial(L, root) || hs_ld_input_values(L) ||
        hs_ld_build_kernels(L, root) || read_rest(L, root) ||
        hs_ld_apply_overrides(L) || hs_ld_compile(L))
        return L->err->code;
    return hs_ld_check_mass_at_start(L, mass_source(L, root));
}

static void free_named(named *a, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(a[i].name);
    free(a);
}

static hs_model *load_common(loader *L, int rc)
{
    hs_model *m = L->m;
    if (!rc)
        rc = load_tree(L);
    free_named(L->par, L->npar);
    free_named(L->def, L->ndef);
    free_named(L->amb, L->namb);
    free_named(L->out, L->nout);
    hs_strmap_free(&L->names);
    hs_strmap_free(&L->cons);
    free(L->pin);
    free(L->ambX);
    free(L->ambV);
    free(L->insrc);
    free(L->intab);
    free(L->chain_bT);
    if (rc) {
        if (!L->err->code)
            hs_error_set(L->err, rc, "model error");
        if (L->dense_retry && L->y->text && !(L->retry_text = hs_ld_strdup(L->y->text)))
            L->dense_retry = 0;       /* out of memory: the error stands */
        hs_model_free(m);
        return NULL;
    }
    return m;
}

static hs_model *start(loader *L, hs_error *err, const hs_overrides *ov)
{
    memset(L, 0, sizeof *L);
    L->err = err;
    L->ov = ov;
    hs_model *m = calloc(1, sizeof *m);
    srcinfo *si = calloc(1, sizeof *si);
    if (!m || !si) {
        free(m);
        free(si);
        hs_error_nomem(err);
        return NULL;
    }
    m->src = si;
    m->names = ov ? ov->names : NULL;
    m->name = hs_ld_strdup("");
    m->dag = hs_dag_new();
    L->m = m;
    L->si = si;
    L->y = &si->y;
    return m;
}

static hs_model *model_load(const char *path, const hs_overrides *ov, hs_error *err,
                            char **retry_text)
{
    loader L;
    hs_model *m = start(&L, err, ov);
    if (!m)
        return NULL;
    int rc = m->dag ? hs_ytree_load(L.y, path, err) : hs_error_nomem(err);
    m->file = hs_ld_strdup(L.y->file ? L.y->file : path);
    m = load_common(&L, rc);
    *retry_text = L.retry_text;
    return m;
}

static hs_model *model_load_string(const char *name, const char *text,
                                   const hs_overrides *ov, hs_error *err, char **retry_text)
{
    loader L;
    hs_model *m = start(&L, err, ov);
    if (!m)
        return NULL;
    m->file = hs_ld_strdup(name);
    int rc = m->dag ? hs_ytree_load_string(L.y, m->file, text, strlen(text), err)
                    : hs_error_nomem(err);
    m = load_common(&L, rc);
    *retry_text = L.retry_text;
    return m;
}

/* A structured embedding whose constraints the structured path does not
 * serve (compile.c: chain_serves_constraints; dependent constraints at
 * the start) is loaded again on the dense path, as derive loads it, from
 * the same text (standard input is read once). */
static hs_model *load_dense(const char *name, const char *text, const hs_overrides *ov,
                            hs_error *err)
{
    hs_overrides copy;
    if (ov)
        copy = *ov;
    else
        hs_overrides_init(&copy);
    copy.dense = 1;
    hs_error_init(err);
    char *again = NULL;
    hs_model *m = model_load_string(name, text, &copy, err, &again);
    free(again);
    return m;
}

hs_model *hs_model_load(const char *path, const hs_overrides *ov, hs_error *err)
{
    char *text = NULL;
    hs_model *r = model_load(path, ov, err, &text);
    if (text) {
        r = load_dense(strcmp(path, "-") == 0 ? "<stdin>" : path, text, ov, err);
        free(text);
    }
    return r;
}

hs_model *hs_model_load_string(const char *name, const char *text,
                               const hs_overrides *ov, hs_error *err)
{
    char *again = NULL;
    hs_model *r = model_load_string(name, text, ov, err, &again);
    if (again) {
        free(again);
        r = load_dense(name, text, ov, err);
    }
    return r;
}

static void free_strv(char **v, size_t n)
{
    if (!v)
        return;
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

void hs_model_free(hs_model *m)
{
    if (!m)
        return;
    srcinfo *si = m->src;
    if (si) {
        hs_ytree_free(&si->y);
        hs_strmap_free(&si->coords);
        free(si->node);
        hs_lang_info_free(&si->lang);
        free(si);
    }
    free(m->file);
    free(m->name);
    free_strv(m->qname, m->n);
    free_strv(m->vname, m->n);
    free_strv(m->cname, m->k);
    free_strv(m->pname, m->npar);
    free_strv(m->outname, m->nout);
    free_strv(m->ambname, m->namb);
    free(m->pval);
    free(m->brk);
    for (size_t j = 0; j < m->ntab; j++) {
        free(m->tab[j].t);
        free(m->tab[j].y);
    }
    free(m->tab);
    free_strv(m->input_desc, m->ninput);
    free(m->q0);
    free(m->v0);
    free(m->lock);
    free(m->sym_q);
    free(m->sym_v);
    free(m->sym_p);
    free(m->M);
    free(m->M_diag);
    free(m->Q);
    free(m->G);
    free(m->cpos);
    free(m->restitution);
    free(m->restitution_expr);
    free(m->fric_mu_expr);
    free(m->fric_mus_expr);
    free(m->fric_mu);
    free(m->fric_mus);
    free(m->fric_norm_start);
    free(m->fric_norm);
    free(m->G_q_start);
    free(m->G_q_col);
    free(m->G_q_nz);
    free(m->G_t);
    free(m->Gdot);
    free(m->gamma);
    free(m->out);
    for (size_t i = 0; m->ev && i < m->nev; i++) {
        free(m->ev[i].name);
        free(m->ev[i].text);
        free(m->ev[i].rel);
    }
    free(m->ev);
    free(m->evf);
    free(m->ev_root);
    free(m->sym_a);
    free(m->sym_lam);
    free(m->amb);
    free(m->ambv);
    free(m->bT);
    free(m->Mconst);
    free(m->par_expr);
    free(m->par_kept);
    free(m->init_expr);
    free(m->par_order);
    free(m->hoist_sym);
    free(m->hoist_expr);
    free(m->hoist_val);
    free(m->gq_start);
    free(m->gq_col);
    hs_prog_free(m->prog_dyn);
    hs_chain_free(m->chain);
    hs_prog_free(m->prog_aux);
    hs_prog_free(m->prog_pos);
    hs_prog_free(m->prog_out);
    hs_prog_free(m->prog_ev);
    hs_ld_free_draw(m);
    hs_dag_free(m->dag);
    free(m);
}
