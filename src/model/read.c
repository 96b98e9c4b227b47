/* Reading a model file's YAML tree into a model description (loader.h):
 * names resolved lazily (parameters and defines in any order, a cycle is
 * an error), every expression parsed with its position in the file. */
#include "loader.h"
#include "../util/vec.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

static const char *plural(size_t n)
{
    return n == 1 ? "" : "s";
}

static int is_ident(const char *s)
{
    if (!s || !(isalpha((unsigned char)*s) || *s == '_'))
        return 0;
    for (const char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return 0;
    return strlen(s) <= 64;
}

/* Names no entry may take: the language's words (functions, pi), lambda, the
 * model's own quantities (model.h: t, E, H...); why into why[size] ("": words). */
static int is_reserved(const char *s, char *why, size_t size)
{
    size_t len = strlen(s);
    why[0] = '\0';
    const hs_quantity *q = hs_quantity_model(s, len);
    if (q)
        snprintf(why, size, ": it names %s %s, a %s%s", q->what, s,
                 q->flags & HS_QTY_COLUMN ? "column" : "built-in name",
                 q->flags & HS_QTY_DERIVED ? " outputs and events read"
                 : q->flags & HS_QTY_STATE ? " expressions read" : "");
    return q || hs_is_language_word(s, len) || strcmp(s, "lambda") == 0;
}

/* ---------- flow collections cut at a comma ---------- */

/* ---------- names ---------- */

/* ---------- parameters ---------- */

/* ---------- sections ---------- */

int hs_ld_read_names_map(loader *L, yaml_node_t *map, named **out, size_t *nout,
                          const char *what)
{
    if (!map)
        return 0;
    if (hs_ld_expect(L, map, YAML_MAPPING_NODE, what))
        return L->err->code;
    if (hs_ld_check_keys(L, map, NULL, 0, what))
        return L->err->code;
    size_t n = map_len(map);
    named *a = xcalloc(n, sizeof *a);
    if (!a)
        return hs_error_nomem(L->err);
    *out = a;
    FOR_PAIRS(map, p) {
        named *e = &a[*nout];
        e->key = NODE(L, p->key);
        e->val = NODE(L, p->value);
        e->ov = -1;
        const char *s = hs_ytree_str(e->key);
        if (!is_ident(s))
            return hs_ytree_error(L->y, L->err, e->key,
                                  "'%s' is not a valid name in %s (letters, digits, _; "
                                  "not starting with a digit)", s, what);
        char why[160];
        if (is_reserved(s, why, sizeof why))
            return hs_ytree_error(L->y, L->err, e->key,
                                  "'%s' is reserved and cannot name an entry of %s%s", s, what,
                                  why);
        e->name = hs_ld_strdup(s);
        if (!e->name)
            return hs_error_nomem(L->err);
        (*nout)++;
    }
    return 0;
}

int hs_ld_read_coordinates(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    yaml_node_t *c = hs_ld_get(L, root, "coordinates");
    if (!c)
        return hs_ytree_error(L->y, L->err, root, "missing key 'coordinates' "
                              "(the list of generalized coordinates, e.g. [x, y])");
    if (hs_ld_expect(L, c, YAML_SEQUENCE_NODE, "'coordinates'"))
        return L->err->code;
    size_t n = seq_len(c);
    if (n == 0)
        return hs_ytree_error(L->y, L->err, c, "'coordinates' is empty: a model needs "
                              "at least one coordinate");
    if (n > MAX_COORDS)
        return hs_ytree_error(L->y, L->err, c, "too many coordinates (%zu; the limit is %d: "
                              "see holosim(1), LIMITS)", n, MAX_COORDS);
    m->n = 0;              /* grows as names are checked */
    m->qname = xcalloc(n, sizeof *m->qname);
    m->vname = xcalloc(n, sizeof *m->vname);
    if (!m->qname || !m->vname)
        return hs_error_nomem(L->err);
    size_t i = 0;
    FOR_ITEMS(c, it) {
        yaml_node_t *e = NODE(L, *it);
        const char *s = hs_ytree_str(e);
        if (!s)
            return hs_ytree_error(L->y, L->err, e, "a coordinate must be a name, found %s",
                                  hs_ytree_kind(e));
        if (!is_ident(s))
            return hs_ytree_error(L->y, L->err, e, "'%s' is not a valid coordinate name "
                                  "(letters, digits, _; not starting with a digit)", s);
        char why[160];
        if (is_reserved(s, why, sizeof why))
            return hs_ytree_error(L->y, L->err, e, "'%s' is reserved and cannot be a "
                                  "coordinate%s", s, why);
        if (hs_ld_find_coord(m, s, strlen(s)) >= 0)
            return hs_ytree_error(L->y, L->err, e, "duplicate coordinate '%s': name each "
                                  "coordinate once", s);
        m->qname[i] = hs_ld_strdup(s);
        m->vname[i] = malloc(strlen(s) + 2);
        m->n = i + 1;                      /* freed with the model from here on */
        if (!m->qname[i] || !m->vname[i] ||
            hs_strmap_put(&L->si->coords, m->qname[i], strlen(s), (long)i, NULL) < 0)
            return hs_error_nomem(L->err);
        sprintf(m->vname[i], "%s'", s);
        i++;
    }
    return 0;
}

/* A per-coordinate list or map (forces, initial q/v); missing entries get
 * `dflt` (NULL = required). */
int hs_ld_read_per_coord(loader *L, yaml_node_t *n, const char *what, int scope,
                          const hs_node *dflt, const hs_node **out)
{
    hs_model *m = L->m;
    if (n->type == YAML_SEQUENCE_NODE) {
        if (seq_len(n) != m->n)
            return hs_ytree_error(L->y, L->err, n, "%s has %zu entr%s; the model has %zu "
                                  "coordinate%s", what, seq_len(n), seq_len(n) == 1 ? "y" : "ies",
                                  m->n, plural(m->n));
        size_t i = 0;
        FOR_ITEMS(n, it) {
            out[i] = hs_ld_parse(L, NODE(L, *it), scope, what);
            if (!out[i++])
                return L->err->code;
        }
        return 0;
    }
    if (n->type != YAML_MAPPING_NODE)
        return hs_ytree_error(L->y, L->err, n, "%s must be a list of %zu expression%s or a "
                              "mapping coordinate -> expression, found %s", what, m->n,
                              plural(m->n), hs_ytree_kind(n));
    if (hs_ld_check_keys(L, n, (const char *const *)m->qname, m->n, what))
        return L->err->code;
    yaml_node_t **val = xcalloc(m->n, sizeof *val);    /* the value of each coordinate */
    if (!val)
        return hs_error_nomem(L->err);
    FOR_PAIRS(n, p) {
        const char *ks = hs_ytree_str(NODE(L, p->key));
        val[hs_ld_find_coord(m, ks, strlen(ks))] = NODE(L, p->value);
    }
    int rc = 0;
    for (size_t i = 0; i < m->n && !rc; i++) {
        if (val[i]) {
            out[i] = hs_ld_parse(L, val[i], scope, what);
            if (!out[i])
                rc = L->err->code;
        } else if (dflt) {
            out[i] = dflt;
        } else {
            rc = hs_ytree_error(L->y, L->err, n, "%s: missing value for coordinate '%s' "
                                "(every coordinate needs one)", what, m->qname[i]);
        }
    }
    free(val);
    return rc;
}

/* Error when an expression depends on a velocity (or on t) where it must not. */
int hs_ld_forbid_velocity(loader *L, const hs_node *e, yaml_node_t *where, const char *what)
{
    hs_model *m = L->m;
    if (e->kind == HS_NUM || !m->sym_v)
        return 0;
    /* e's own symbols (a check per velocity costs n for each of the n^2 entries
     * of a mass matrix); a velocity is named after its coordinate, primed */
    size_t ns;
    const int32_t *sy = hs_node_symbols(e, &ns);
    for (size_t z = 0; z < ns; z++) {
        const char *nm = hs_dag_symbol_name(m->dag, sy[z]);
        size_t len = strlen(nm);
        long i = len > 1 && nm[len - 1] == '\'' ? hs_ld_find_coord(m, nm, len - 1) : -1;
        if (i >= 0 && m->sym_v[i] == sy[z])
            return hs_ytree_error(L->y, L->err, where, "%s may not depend on velocities "
                                  "(it uses %s')%s", what, m->qname[i], hs_ld_velocity_hint(what));
    }
    return 0;
}

int hs_ld_read_constraint_names(loader *L, yaml_node_t *c)
{
    hs_model *m = L->m;
    if (!c)
        return 0;
    size_t k;
    if (c->type == YAML_MAPPING_NODE) {
        if (hs_ld_check_keys(L, c, NULL, 0, "'constraints'"))
            return L->err->code;
        k = map_len(c);
    } else if (c->type == YAML_SEQUENCE_NODE) {
        k = seq_len(c);
    } else {
        return hs_ytree_error(L->y, L->err, c, "'constraints' must be a mapping name -> "
                              "expression or a list, found %s", hs_ytree_kind(c));
    }
    if (k > MAX_CONSTRAINTS)
        return hs_ytree_error(L->y, L->err, c, "too many constraints (%zu; the limit is %d)",
                              k, MAX_CONSTRAINTS);
    m->cname = xcalloc(k, sizeof *m->cname);
    if (!m->cname)
        return hs_error_nomem(L->err);
    for (size_t i = 0; i < k; i++) {
        char buf[32];
        const char *name = buf;
        if (c->type == YAML_MAPPING_NODE) {
            yaml_node_t *key = NODE(L, c->data.mapping.pairs.start[i].key);
            name = hs_ytree_str(key);
            if (!is_ident(name) && !(name[0] && strspn(name, "0123456789") == strlen(name)))
                return hs_ytree_error(L->y, L->err, key, "'%s' is not a valid constraint "
                                      "name (letters, digits, _)", name);
        } else {
            snprintf(buf, sizeof buf, "%zu", i + 1);
        }
        if (!(m->cname[i] = hs_ld_strdup(name)))
            return hs_error_nomem(L->err);
        m->k = i + 1;           /* the name is the model's now (freed with it) */
        if (hs_strmap_put(&L->cons, m->cname[i], strlen(name), (long)i, NULL) < 0)
            return hs_error_nomem(L->err);
    }
    return 0;
}

int hs_ld_read_constraints(loader *L, yaml_node_t *c)
{
    hs_model *m = L->m;
    size_t k = m->k;
    if (!k)
        return 0;
    m->G = xcalloc(k, sizeof *m->G);
    m->cpos = xcalloc(k, sizeof *m->cpos);
    if (!m->G || !m->cpos)
        return hs_error_nomem(L->err);
    for (size_t i = 0; i < m->contact0; i++) {      /* the bilateral ones */
        yaml_node_t *val = c->type == YAML_MAPPING_NODE
                               ? NODE(L, c->data.mapping.pairs.start[i].value)
                               : NODE(L, c->data.sequence.items.start[i]);
        m->cpos[i] = (hs_srcpos){ (int32_t)L->si->nsrc, 0 };
        m->G[i] = hs_ld_parse(L, val, SCOPE_MODEL, "a constraint");
        if (!m->G[i])
            return L->err->code;
        if (hs_ld_forbid_velocity(L, m->G[i], val, "a holonomic constraint"))
            return L->err->code;
    }
    return 0;
}

int hs_ld_read_initial(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    yaml_node_t *ini = hs_ld_get(L, root, "initial");
    if (!ini)
        return hs_ytree_error(L->y, L->err, root, "missing key 'initial' (initial values "
                              "of the coordinates: initial: {q: {...}})");
    static const char *const keys[] = { "t", "q", "v" };
    if (hs_ld_expect(L, ini, YAML_MAPPING_NODE, "'initial'") ||
        hs_ld_check_keys(L, ini, keys, 3, "'initial'"))
        return L->err->code;
    const hs_node **e = xcalloc(m->n, sizeof *e);
    double *in = xcalloc((size_t)hs_dag_nsymbols(d), sizeof *in);
    m->init_expr = xcalloc(2 * m->n + 1, sizeof *m->init_expr);
    if (!e || !in || !m->init_expr) {
        free(e);
        free(in);
        return hs_error_nomem(L->err);
    }
    for (int s = 0; s < hs_dag_nsymbols(d); s++)
        in[s] = NAN;
    for (size_t j = 0; j < m->npar; j++)
        in[m->sym_p[j]] = m->pval[j];
    yaml_node_t *tn = hs_ld_get(L, ini, "t"), *qn = hs_ld_get(L, ini, "q"), *vn = hs_ld_get(L, ini, "v");
    m->t0 = 0;
    if (tn) {
        const hs_node *te = hs_ld_parse(L, tn, SCOPE_INITIAL, "initial.t");
        if (!te || hs_ld_dag_check(L))
            goto out;
        if (hs_eval_node(m->init_expr[2 * m->n] = te, in, &m->t0) && hs_error_nomem(L->err))
            goto out;
        if (!isfinite(m->t0)) {
            hs_ytree_error(L->y, L->err, tn, "initial.t is not finite");
            goto out;
        }
    }
    if (!qn) {
        hs_ytree_error(L->y, L->err, ini, "missing key 'q' in 'initial' (a value for "
                       "every coordinate)");
        goto out;
    }
    for (int pass = 0; pass < 2; pass++) {
        yaml_node_t *src = pass == 0 ? qn : vn;
        double *dst = pass == 0 ? m->q0 : m->v0;
        if (!src)
            continue;
        if (hs_ld_read_per_coord(L, src, pass == 0 ? "initial.q" : "initial.v", SCOPE_INITIAL,
                           pass == 0 ? NULL : scalar_zero(L), e) || hs_ld_dag_check(L))
            goto out;
        for (size_t i = 0; i < m->n; i++) {
            if (hs_eval_node(m->init_expr[(size_t)pass * m->n + i] = e[i], in, &dst[i]) &&
                hs_error_nomem(L->err))
                goto out;
            if (!isfinite(dst[i])) {
                yaml_node_t *at = src->type == YAML_MAPPING_NODE ? hs_ld_get(L, src, m->qname[i])
                                                                 : src;
                hs_ytree_error(L->y, L->err, at ? at : src, "initial value of %s%s is not "
                               "finite (%g)", m->qname[i], pass ? "'" : "", dst[i]);
                goto out;
            }
        }
    }
out:
    free(e);
    free(in);
    return L->err->code;
}

int hs_ld_read_output_names(loader *L, yaml_node_t *o)
{
    hs_model *m = L->m;
    if (!o)
        return 0;
    if (hs_ld_read_names_map(L, o, &L->out, &L->nout, "'outputs'"))
        return L->err->code;
    m->outname = xcalloc(L->nout, sizeof *m->outname);
    if (!m->outname)
        return hs_error_nomem(L->err);
    for (size_t i = 0; i < L->nout; i++)
        if (!(m->outname[m->nout++] = hs_ld_strdup(L->out[i].name)))
            return hs_error_nomem(L->err);
    return 0;
}

int hs_ld_read_outputs(loader *L)
{
    hs_model *m = L->m;
    m->out = xcalloc(m->nout, sizeof *m->out);
    if (!m->out)
        return hs_error_nomem(L->err);
    for (size_t i = 0; i < m->nout; i++)
        if (!(m->out[i] = hs_ld_parse(L, L->out[i].val, SCOPE_OUTPUT, "an output")))
            return L->err->code;
    return 0;
}

/* The embedding form: X(t, q) of each ambient name and its total
 * derivative D X (the ambient velocity). */
int hs_ld_read_embedding(loader *L)
{
    hs_model *m = L->m;
    if (m->form != HS_FORM_EMBEDDING)
        return 0;
    m->amb = xcalloc(L->namb, sizeof *m->amb);
    L->ambX = xcalloc(L->namb, sizeof *L->ambX);
    L->ambV = xcalloc(L->namb, sizeof *L->ambV);
    if (!m->amb || !L->ambX || !L->ambV)
        return hs_error_nomem(L->err);
    for (size_t a = 0; a < L->namb; a++) {
        const hs_node *X = hs_ld_parse(L, L->amb[a].val, SCOPE_MODEL, "an embedding");
        if (!X)
            return L->err->code;
        if (hs_ld_forbid_velocity(L, X, L->amb[a].val, "an embedding"))
            return L->err->code;
        m->amb[a] = L->ambX[a] = X;
        L->ambV[a] = hs_total_diff(m->dag, X, m->sym_t, m->n, m->sym_q, m->sym_v);
    }
    return 0;
}
