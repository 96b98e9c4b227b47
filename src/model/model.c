/* Loading a model (model.h): the jobs of loader.h in order; and the
 * model object itself: free, source positions, the derivation printout. */
#include "loader.h"
#include "../linalg/linalg.h"

#include <math.h>
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
    "kinetic", "lagrangian", "embedding", "events", "draw", "contacts", "friction",
};

/* After the kernels: the outputs, events, drawing and the defines nothing
 * has read yet; for hs_overrides.statics none of them (the names of the
 * outputs, checked, are dropped). */
static int read_rest(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    if (!L->ov || !L->ov->statics)
        return hs_ld_read_outputs(L) || hs_ld_read_events(L, root) ||
               hs_ld_contact_events(L) || hs_ld_friction_events(L) || hs_ld_read_draw(L, root) || hs_ld_check_defines(L);
    while (m->nout)
        free(m->outname[--m->nout]);
    return 0;
}

/* The jobs of loader.h in order: read the description, build the kernels
 * of the form, compile the programs. */
static int load_tree(loader *L)
{
    if (hs_ld_expand(L))
        return L->err->code;
    yaml_node_t *root = hs_ytree_root(L->y);
    if (root->type != YAML_MAPPING_NODE)
        return hs_ytree_error(L->y, L->err, root, "a model file must be a mapping of "
                              "keys (coordinates, mass, initial, ...), found %s",
                              hs_ytree_kind(root));
    if (hs_ld_check_keys(L, root, top_keys, sizeof top_keys / sizeof *top_keys, "the model") ||
        hs_ld_check_flow_cuts(L, root) || read_header(L, root) || read_names(L, root) || make_symbols(L) ||
        hs_ld_eval_params(L) || hs_ld_read_embedding(L) ||
        hs_ld_read_settings(L, root) || hs_ld_read_initial(L, root) ||
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
    if (rc) {
        if (!L->err->code)
            hs_error_set(L->err, rc, "model error");
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
    m->name = hs_ld_strdup("");
    m->dag = hs_dag_new();
    L->m = m;
    L->si = si;
    L->y = &si->y;
    return m;
}

static hs_model *model_load(const char *path, const hs_overrides *ov, hs_error *err)
{
    loader L;
    hs_model *m = start(&L, err, ov);
    if (!m)
        return NULL;
    int rc = m->dag ? hs_ytree_load(L.y, path, err) : hs_error_nomem(err);
    m->file = hs_ld_strdup(L.y->file ? L.y->file : path);
    return load_common(&L, rc);
}

hs_model *hs_model_load(const char *path, const hs_overrides *ov, hs_error *err)
{
    hs_la_handler h = hs_la_quiet();
    hs_model *r = model_load(path, ov, err);
    hs_la_restore(h);
    return r;
}

static hs_model *model_load_string(const char *name, const char *text,
                                   const hs_overrides *ov, hs_error *err)
{
    loader L;
    hs_model *m = start(&L, err, ov);
    if (!m)
        return NULL;
    m->file = hs_ld_strdup(name);
    int rc = m->dag ? hs_ytree_load_string(L.y, m->file, text, strlen(text), err)
                    : hs_error_nomem(err);
    return load_common(&L, rc);
}

hs_model *hs_model_load_string(const char *name, const char *text,
                               const hs_overrides *ov, hs_error *err)
{
    hs_la_handler h = hs_la_quiet();
    hs_model *r = model_load_string(name, text, ov, err);
    hs_la_restore(h);
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
        for (size_t i = 0; i < si->nspar; i++)
            free(si->spar[i]);
        free(si->spar);
        free(si->families);
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

const hs_node *hs_model_M(const hs_model *m, size_t i, size_t j)
{
    if (m->M)
        return m->M[i * m->n + j];
    return i == j ? m->M_diag[i] : NULL;
}

const hs_node *hs_model_G_q(const hs_model *m, size_t i, size_t j)
{
    size_t lo = m->G_q_start[i], hi = m->G_q_start[i + 1];
    while (lo < hi) {                 /* the first column >= j */
        size_t mid = lo + (hi - lo) / 2;
        if (m->G_q_col[mid] < j)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->G_q_start[i + 1] && m->G_q_col[lo] == j ? m->G_q_nz[lo] : NULL;
}

void hs_model_inputs(const hs_model *m, double *in)
{
    for (size_t j = 0; j < m->npar; j++)
        in[m->sym_p[j]] = m->pval[j];
    for (size_t h = 0; h < m->nhoist; h++)
        in[m->hoist_sym[h]] = m->hoist_val[h];
}

int hs_model_eval_constants(hs_model *m, hs_error *err)
{
    double *in = calloc(m->nin ? m->nin : 1, sizeof *in);
    if (!in)
        return hs_error_nomem(err);
    for (size_t j = 0; j < m->npar; j++)
        in[m->sym_p[j]] = m->pval[j];
    const hs_node *bad = NULL;
    int oom = 0;
    for (size_t h = 0; h < m->nhoist && !bad && !oom; h++)
        if (!(oom = hs_eval_node(m->hoist_expr[h], in, &m->hoist_val[h])) &&
            !isfinite(m->hoist_val[h]))
            bad = m->hoist_expr[h];
    for (size_t i = 0; m->mass_kind == HS_MASS_CONST_DIAG && i < m->n && !bad && !oom; i++)
        if (!(oom = hs_eval_node(hs_model_M(m, i, i), in, &m->Mconst[i])) &&
            !isfinite(m->Mconst[i]))
            bad = hs_model_M(m, i, i);
    free(in);
    if (oom)
        return hs_error_nomem(err);
    if (!bad)
        return 0;
    hs_error_set(err, HS_EXIT_MODEL, "an expression of the parameters evaluates to %s",
                 "NaN or an infinity");
    hs_model_place(m, bad->pos, err);
    return err->code;
}

void hs_model_place(const hs_model *m, hs_srcpos p, hs_error *err)
{
    const srcinfo *si = m->src;
    if (!si || p.src < 0 || (size_t)p.src >= si->nsrc)
        return;
    int line, col;
    hs_ytree_scalar_pos(&si->y, si->node[p.src], (size_t)p.off, &line, &col);
    hs_ytree_place(&si->y, err, line, col);
}

/* Every root the derivation prints, in printing order, into r (NULL: count). */
static size_t derivation_roots(const hs_model *m, const hs_node **r)
{
    size_t n = m->n, k = m->k, nr = 0;
#define PUT(e) do { if (r) r[nr] = (e); nr++; } while (0)
    for (size_t i = 0; i < n; i++)
        for (size_t j = m->M ? 0 : i; j <= i; j++)       /* M_diag: its diagonal */
            if (!hs_is_num(hs_model_M(m, i, j), 0) || i == j)
                PUT(hs_model_M(m, i, j));
    for (size_t i = 0; i < n; i++)
        PUT(m->Q[i]);
    if (m->has_potential)
        PUT(m->U);
    for (size_t a = 0; a < m->namb; a++)
        PUT(m->amb[a]);
    for (size_t i = 0; i < k; i++)
        PUT(m->G[i]);
    for (size_t z = 0; z < m->G_q_start[k]; z++)
        if (!hs_is_num(m->G_q_nz[z], 0))
            PUT(m->G_q_nz[z]);
    for (size_t i = 0; i < k; i++)
        PUT(m->Gdot[i]);
    for (size_t i = 0; i < k; i++)
        PUT(m->gamma[i]);
#undef PUT
    return nr;
}

const char *hs_model_form_name(const hs_model *m)
{
    static const char *const forms[] = { "Cartesian", "Lagrangian", "embedding" };
    return forms[m->form];
}

const char *hs_model_sizes(const hs_model *m, char *buf, size_t size)
{
    snprintf(buf, size, "n = %zu coordinate%s, k = %zu constraint%s", m->n,
             m->n == 1 ? "" : "s", m->k, m->k == 1 ? "" : "s");
    return buf;
}

int hs_model_print_derivation(const hs_model *m, FILE *f)
{
    size_t n = m->n, k = m->k;
    char lab[256], sizes[96];
    /* one printer over everything: a subexpression shared by many kernels
     * (a large define) is printed once, as a temporary _1 = ... */
    size_t nr = derivation_roots(m, NULL);
    const hs_node **r = malloc((nr ? nr : 1) * sizeof *r);
    hs_printer *P = NULL;
    if (r) {
        derivation_roots(m, r);
        P = hs_printer_new(m->dag, r, nr);
        free(r);
    }
    if (!P)
        return HS_EXIT_NOMEM;
    fprintf(f, "# %s%s%s form, %s\n", m->name[0] ? m->name : "", m->name[0] ? ": " : "",
            hs_model_form_name(m), hs_model_sizes(m, sizes, sizeof sizes));
    const srcinfo *si = m->src;
    if (si && si->families)               /* the templates, once, with their ranges */
        fprintf(f, "%s", si->families);
    fprintf(f, "M (%s):\n", m->form == HS_FORM_CARTESIAN ? "mass matrix" : "metric d2T/dv2");
    for (size_t i = 0; i < n; i++)
        for (size_t j = m->M ? 0 : i; j <= i; j++)
            if (!hs_is_num(hs_model_M(m, i, j), 0) || i == j) {
                snprintf(lab, sizeof lab, "M[%s,%s]", m->qname[i], m->qname[j]);
                hs_printer_line(P, f, "  ", lab, hs_model_M(m, i, j));
            }
    fprintf(f, "Q (generalized force):\n");
    for (size_t i = 0; i < n; i++) {
        snprintf(lab, sizeof lab, "Q[%s]", m->qname[i]);
        hs_printer_line(P, f, "  ", lab, m->Q[i]);
    }
    if (m->has_potential) {
        fprintf(f, "U (potential):\n");
        hs_printer_line(P, f, "  ", "U", m->U);
    }
    for (size_t a = 0; a < m->namb; a++) {
        if (a == 0)
            fprintf(f, "X (embedding):\n");
        hs_printer_line(P, f, "  ", m->ambname[a], m->amb[a]);
    }
    if (k) {
        fprintf(f, "G (constraints):\n");
        for (size_t i = 0; i < k; i++)
            hs_printer_line(P, f, "  ", m->cname[i], m->G[i]);
        fprintf(f, "G_q (Jacobian, non-zero entries):\n");
        for (size_t i = 0; i < k; i++)
            for (size_t z = m->G_q_start[i]; z < m->G_q_start[i + 1]; z++)
                if (!hs_is_num(m->G_q_nz[z], 0)) {
                    snprintf(lab, sizeof lab, "d%s/d%s", m->cname[i], m->qname[m->G_q_col[z]]);
                    hs_printer_line(P, f, "  ", lab, m->G_q_nz[z]);
                }
        fprintf(f, "Gdot = G_t + G_q v:\n");
        for (size_t i = 0; i < k; i++)
            hs_printer_line(P, f, "  ", m->cname[i], m->Gdot[i]);
        fprintf(f, "gamma = D(D G):\n");
        for (size_t i = 0; i < k; i++)
            hs_printer_line(P, f, "  ", m->cname[i], m->gamma[i]);
    }
    int failed = hs_printer_failed(P);
    hs_printer_free(P);
    return failed ? HS_EXIT_NOMEM : 0;
}
