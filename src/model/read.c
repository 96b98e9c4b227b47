/* Reading a model file's YAML tree into a model description (loader.h):
 * names resolved lazily (parameters and defines in any order, a cycle is
 * an error), every expression parsed with its position in the file. */
#include "loader.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

#include "../util/names.h"
#include "../util/suggest.h"

char *hs_ld_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

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

static const char *const reserved[] = {
    "t", "pi", "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh",
    "cosh", "tanh", "exp", "log", "sqrt", "abs", "sign", "min", "max",
    "hypot", "pow", "if", "lambda", "E", "T", "U", "P_R", "power_residual",
};

static int is_reserved(const char *s)
{
    for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
        if (strcmp(s, reserved[i]) == 0)
            return 1;
    return 0;
}

int hs_ld_expect(loader *L, yaml_node_t *n, yaml_node_type_t type, const char *what)
{
    if (n && n->type == type)
        return 0;
    const char *want = type == YAML_MAPPING_NODE ? "a mapping"
                     : type == YAML_SEQUENCE_NODE ? "a list" : "a scalar";
    return hs_ytree_error(L->y, L->err, n, "%s must be %s, found %s", what, want,
                          hs_ytree_kind(n));
}

/* The keys of a mapping, or the items of a sequence, as strings (NULL
 * where not a scalar): which repeat an earlier one (names.h); NULL when
 * out of memory. */
static unsigned char *repeated_strings(loader *L, yaml_node_t *n)
{
    size_t len = n->type == YAML_MAPPING_NODE ? map_len(n) : seq_len(n), k = 0;
    const char **s = xcalloc(len, sizeof *s);
    if (s && n->type == YAML_MAPPING_NODE) {
        FOR_PAIRS(n, p)
            s[k++] = hs_ytree_str(NODE(L, p->key));
    } else if (s) {
        FOR_ITEMS(n, it)
            s[k++] = hs_ytree_str(NODE(L, *it));
    }
    unsigned char *dup = s ? hs_names_repeated(s, len) : NULL;
    free(s);
    return dup;
}

/* Check a mapping's keys against `allowed`; duplicate keys are errors.
 * The first bad key in the mapping's order is reported; past FEW keys (or
 * names), through sorting rather than scans. */
int hs_ld_check_keys(loader *L, yaml_node_t *map, const char *const *allowed,
                      size_t nallowed, const char *where)
{
    enum { FEW = 16 };
    unsigned char *dup = map_len(map) > FEW ? repeated_strings(L, map) : NULL;
    const char **sorted = allowed && nallowed > FEW ? hs_names_sorted(allowed, nallowed) : NULL;
    int rc = 0;
    if ((map_len(map) > FEW && !dup) || (allowed && nallowed > FEW && !sorted))
        rc = hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    size_t idx = 0;
    FOR_PAIRS(map, p) {
        if (rc)
            break;
        yaml_node_t *k = NODE(L, p->key);
        const char *ks = hs_ytree_str(k);
        if (!ks) {
            rc = hs_ytree_error(L->y, L->err, k, "keys in %s must be scalars", where);
            break;
        }
        int repeated = dup ? dup[idx++] : 0;
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; !dup && q < p; q++)
            if (strcmp(hs_ytree_str(NODE(L, q->key)) ? hs_ytree_str(NODE(L, q->key)) : "", ks) == 0)
                repeated = 1;
        if (repeated) {
            rc = hs_ytree_error(L->y, L->err, k, "duplicate key '%s' in %s", ks, where);
            break;
        }
        size_t i = 0;
        while (!sorted && allowed && i < nallowed && strcmp(allowed[i], ks) != 0)
            i++;
        if (allowed && (sorted ? !hs_names_has(sorted, nallowed, ks) : i == nallowed)) {
            const char *near = hs_nearest(ks, allowed, nallowed);
            if (near)
                rc = hs_ytree_error(L->y, L->err, k, "unknown key '%s' in %s (did you mean "
                                    "'%s'?)", ks, where, near);
            else
                rc = hs_ytree_error(L->y, L->err, k, "unknown key '%s' in %s", ks, where);
        }
    }
    free(dup);
    free(sorted);
    return rc;
}

/* The pair of a mapping with this key, or NULL. */
static yaml_node_pair_t *find_pair(loader *L, yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    FOR_PAIRS(map, p) {
        const char *ks = hs_ytree_str(NODE(L, p->key));
        if (ks && strcmp(ks, key) == 0)
            return p;
    }
    return NULL;
}

yaml_node_t *hs_ld_get(loader *L, yaml_node_t *map, const char *key)
{
    yaml_node_pair_t *p = find_pair(L, map, key);
    return p ? NODE(L, p->value) : NULL;
}

yaml_node_t *hs_ld_get_key(loader *L, yaml_node_t *map, const char *key)
{
    yaml_node_pair_t *p = find_pair(L, map, key);
    return p ? NODE(L, p->key) : NULL;
}

/* ---------- names ---------- */

static long find_named(const named *a, size_t n, const char *s, size_t len)
{
    /* the first letter first: a scan of the ambient names per identifier
     * of a large embedding is n^3 string lengths otherwise */
    for (size_t i = 0; i < n; i++)
        if (len && a[i].name[0] == s[0] && strncmp(a[i].name, s, len) == 0 &&
            a[i].name[len] == '\0')
            return (long)i;
    return -1;
}

long hs_ld_find_coord(const hs_model *m, const char *s, size_t len)
{
    /* once the coordinates are symbols, through the dag's hash of names
     * (a scan per name costs n^2 on a model of n coordinates) */
    char name[80];
    if (m->sym_q && m->n && m->dag && len < sizeof name) {
        memcpy(name, s, len);
        name[len] = '\0';
        int sym = hs_dag_find_symbol(m->dag, name);
        if (sym < 0)
            return -1;
        /* make_symbols numbers the coordinates in a row (distinct names,
         * created one after the other): sym_q[i] = sym_q[0] + i */
        long i = (long)sym - m->sym_q[0];
        if (i >= 0 && (size_t)i < m->n && m->sym_q[i] == sym)
            return i;
        if (m->sym_q[m->n - 1] == m->sym_q[0] + (int)m->n - 1)
            return -1;                  /* else another layout: the scan below */
    }
    for (size_t i = 0; i < m->n; i++)
        if (len && m->qname[i][0] == s[0] && strncmp(m->qname[i], s, len) == 0 &&
            m->qname[i][len] == '\0')
            return (long)i;
    return -1;
}
static int eval_param(loader *L, size_t i);

static const hs_node *lookup(void *ctx, hs_dag *d, const char *s, size_t len,
                             int primed, size_t off, int *status, hs_error *perr)
{
    loader *L = ctx;
    hs_model *m = L->m;
    (void)off;
    *status = HS_RESOLVE_OK;
    long i;
    if (L->scope == SCOPE_MODEL) {
        if ((i = hs_ld_find_coord(m, s, len)) >= 0)
            return hs_sym(d, primed ? m->sym_v[i] : m->sym_q[i]);
        if ((i = find_named(L->amb, L->namb, s, len)) >= 0) {
            if (!L->ambX[i]) { /* an embedding that names ambient positions */
                *status = HS_RESOLVE_UNKNOWN;
                return NULL;
            }
            return primed ? L->ambV[i] : L->ambX[i];
        }
    }
    if (primed) {
        *status = HS_RESOLVE_NO_PRIME;
        return NULL;
    }
    if (L->scope == SCOPE_MODEL && len == 1 && s[0] == 't')
        return hs_sym(d, m->sym_t);
    if ((i = find_named(L->par, L->npar, s, len)) >= 0) {
        if (L->scope == SCOPE_PARAM && eval_param(L, (size_t)i)) {
            *status = HS_RESOLVE_ERROR;
            perr->code = L->err->code;
            return NULL;
        }
        return hs_sym(d, m->sym_p[i]);
    }
    if (L->scope == SCOPE_MODEL && (i = find_named(L->def, L->ndef, s, len)) >= 0) {
        named *df = &L->def[i];
        if (df->state == ST_BUSY) {
            hs_ytree_error(L->y, L->err, df->key, "define '%s' refers to itself "
                           "(a cycle among defines)", df->name);
            *status = HS_RESOLVE_ERROR;
            perr->code = L->err->code;
            return NULL;
        }
        if (df->state == ST_NONE) {
            df->state = ST_BUSY;
            hs_srcpos saved = hs_dag_pos(d);
            df->expr = hs_ld_parse(L, df->val, SCOPE_MODEL, "a define");
            hs_dag_set_pos(d, saved);
            df->state = ST_DONE;
        }
        if (!df->expr) {
            *status = HS_RESOLVE_ERROR;
            perr->code = L->err->code;
            return NULL;
        }
        return df->expr;
    }
    *status = HS_RESOLVE_UNKNOWN;
    return NULL;
}

static int add_src(loader *L, yaml_node_t *n)
{
    srcinfo *si = L->si;
    if (si->nsrc == si->cap) {
        size_t cap = si->cap ? 2 * si->cap : 32;
        yaml_node_t **nn = realloc(si->node, cap * sizeof *nn);
        if (!nn)
            return -1;
        si->node = nn;
        si->cap = cap;
    }
    si->node[si->nsrc] = n;
    return (int)si->nsrc++;
}

/* A byte offset of the scalar being parsed -> file line and column. */
static void locate(void *ctx, size_t off, int *line, int *col)
{
    loader *L = ctx;
    hs_ytree_scalar_pos(L->y, L->cur, off, line, col);
}

/* Parse a scalar as an expression in the given scope. */
const hs_node *hs_ld_parse(loader *L, yaml_node_t *n, int scope, const char *what)
{
    if (L->err->code)
        return NULL;
    if (!n || n->type != YAML_SCALAR_NODE) {
        hs_ytree_error(L->y, L->err, n, "%s must be an expression, found %s", what,
                       hs_ytree_kind(n));
        return NULL;
    }
    int saved_scope = L->scope;
    L->scope = scope;
    int src = add_src(L, n);
    if (src < 0) {
        hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
        return NULL;
    }
    hs_resolver r = { lookup, L, locate };
    hs_error pe;
    hs_error_init(&pe);
    yaml_node_t *saved_cur = L->cur;
    L->cur = n;
    const hs_node *e = hs_parse(L->m->dag, (const char *)n->data.scalar.value,
                                n->data.scalar.length, src, &r, &pe);
    L->cur = saved_cur;
    L->scope = saved_scope;
    if (L->err->code)       /* an error inside a define or parameter */
        return NULL;
    if (!e) {
        char hint[200];
        hs_ld_name_hint(L, &pe, scope, (const char *)n->data.scalar.value, hint, sizeof hint);
        hs_ytree_error_in(L->y, L->err, n, pe.offset >= 0 ? (size_t)pe.offset : 0,
                          "%s%s", pe.msg, hint);
        return NULL;
    }
    return e;
}

/* Report a dag error (fold to NaN, size limit) at its source position. */
int hs_ld_dag_check(loader *L)
{
    if (L->err->code)
        return L->err->code;
    if (!hs_dag_failed(L->m->dag))
        return 0;
    const hs_error *de = hs_dag_error(L->m->dag);
    hs_srcpos p = hs_dag_error_pos(L->m->dag);
    hs_error_set(L->err, HS_EXIT_MODEL, "%s", de->msg);
    if (p.src >= 0 && (size_t)p.src < L->si->nsrc) {
        int line, col;
        hs_ytree_scalar_pos(L->y, L->si->node[p.src], (size_t)p.off, &line, &col);
        hs_ytree_place(L->y, L->err, line, col);
    }
    return L->err->code;
}

/* ---------- parameters ---------- */

/* An error about override s (message set): placed in its --params file
 * when it came from one (hs_overrides.set_place); 0 when it came from
 * --set itself. */
static int override_placed(loader *L, size_t s, long off)
{
    return L->ov->set_place && L->ov->set_place(L->ov->set_place_ctx, s, off, L->err);
}

/* A command-line override NAME=TEXT parsed in the parameters' scope; an
 * error is a usage error (exit 1) shown on the option's own text. */
static const hs_node *parse_override(loader *L, size_t s, const char *name, const char *text)
{
    int saved_scope = L->scope;
    L->scope = SCOPE_PARAM;
    hs_resolver r = { lookup, L, NULL };
    hs_error pe;
    hs_error_init(&pe);
    const hs_node *e = hs_parse(L->m->dag, text, strlen(text), -1, &r, &pe);
    L->scope = saved_scope;
    if (L->err->code)       /* an error in a parameter it refers to */
        return NULL;
    if (!e) {
        char hint[200];
        hs_ld_name_hint(L, &pe, SCOPE_PARAM, text, hint, sizeof hint);
        size_t off = pe.offset >= 0 ? (size_t)pe.offset : 0;
        hs_error_set(L->err, HS_EXIT_USAGE, "%s%s", pe.msg, hint);
        if (override_placed(L, s, (long)off))
            return NULL;
        char opt[600];
        snprintf(opt, sizeof opt, "--set %s=%s", name, text);
        if (snprintf(L->err->msg, sizeof L->err->msg, "%s: %s%s", opt, pe.msg, hint) < 0)
            L->err->msg[0] = '\0';
        /* the caret under the option's text, after "--set NAME=" */
        hs_error_locate(L->err, opt, strlen(opt), strlen(name) + 7 + off);
        L->err->line = 0;   /* not a file position: the caret alone */
    }
    return e;
}

static int eval_param(loader *L, size_t i)
{
    named *p = &L->par[i];
    hs_model *m = L->m;
    if (p->state == ST_DONE)
        return 0;
    if (p->state == ST_BUSY)
        return hs_ytree_error(L->y, L->err, p->key,
                              "parameter '%s' depends on itself (a cycle among parameters)",
                              p->name);
    p->state = ST_BUSY;
    long ov = -1;                       /* the last --set of this name wins */
    for (size_t s = 0; s < (L->ov ? L->ov->nset : 0); s++)
        if (strcmp(L->ov->set_name[s], p->name) == 0)
            ov = (long)s;
    const char *text = ov >= 0 && L->ov->set_text ? L->ov->set_text[ov] : NULL;
    if (ov >= 0 && !text) {
        m->pval[i] = L->ov->set_value[ov];
        p->state = ST_DONE;
        return 0;
    }
    const hs_node *e = text ? parse_override(L, (size_t)ov, p->name, text)
                            : hs_ld_parse(L, p->val, SCOPE_PARAM, "a parameter");
    if (!e || hs_ld_dag_check(L))
        return L->err->code ? L->err->code : HS_EXIT_MODEL;
    double *in = xcalloc((size_t)hs_dag_nsymbols(m->dag), sizeof *in);
    if (!in)
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    for (size_t j = 0; j < L->npar; j++)
        in[m->sym_p[j]] = L->par[j].state == ST_DONE ? m->pval[j] : (double)NAN;
    double v = hs_eval_tree(e, in);
    free(in);
    if (!isfinite(v) && text) {
        hs_error_set(L->err, HS_EXIT_USAGE, "parameter '%s' evaluates to %g", p->name, v);
        if (!override_placed(L, (size_t)ov, 0))
            snprintf(L->err->msg, sizeof L->err->msg, "--set %s=%s: the value is %g",
                     p->name, text, v);
        return L->err->code;
    }
    if (!isfinite(v))
        return hs_ytree_error(L->y, L->err, p->val,
                              "parameter '%s' evaluates to %g", p->name, v);
    m->pval[i] = v;
    p->state = ST_DONE;
    return 0;
}

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
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    *out = a;
    FOR_PAIRS(map, p) {
        named *e = &a[*nout];
        e->key = NODE(L, p->key);
        e->val = NODE(L, p->value);
        const char *s = hs_ytree_str(e->key);
        if (!is_ident(s))
            return hs_ytree_error(L->y, L->err, e->key,
                                  "'%s' is not a valid name in %s (letters, digits, _; "
                                  "not starting with a digit)", s, what);
        if (is_reserved(s))
            return hs_ytree_error(L->y, L->err, e->key,
                                  "'%s' is reserved and cannot name an entry of %s", s, what);
        e->name = hs_ld_strdup(s);
        if (!e->name)
            return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
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
                              "holosim keeps n x n arrays)", n, MAX_COORDS);
    m->n = 0;              /* grows as names are checked */
    m->qname = xcalloc(n, sizeof *m->qname);
    m->vname = xcalloc(n, sizeof *m->vname);
    unsigned char *dup = n > 16 ? repeated_strings(L, c) : NULL;
    if (!m->qname || !m->vname || (n > 16 && !dup)) {
        free(dup);
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    }
    size_t i = 0;
    FOR_ITEMS(c, it) {
        yaml_node_t *e = NODE(L, *it);
        const char *s = hs_ytree_str(e);
        int rc = 0;
        if (!s)
            rc = hs_ytree_error(L->y, L->err, e, "a coordinate must be a name, found %s",
                                hs_ytree_kind(e));
        else if (!is_ident(s))
            rc = hs_ytree_error(L->y, L->err, e, "'%s' is not a valid coordinate name", s);
        else if (is_reserved(s))
            rc = hs_ytree_error(L->y, L->err, e, "'%s' is reserved and cannot be a coordinate",
                                s);
        else if (dup ? dup[i] : hs_ld_find_coord(m, s, strlen(s)) >= 0)
            rc = hs_ytree_error(L->y, L->err, e, "duplicate coordinate '%s'", s);
        if (!rc) {
            m->qname[i] = hs_ld_strdup(s);
            m->vname[i] = malloc(strlen(s) + 2);
            if (!m->qname[i] || !m->vname[i])
                rc = hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
        }
        if (rc) {
            free(dup);
            return rc;
        }
        sprintf(m->vname[i], "%s'", s);
        m->n = ++i;
    }
    free(dup);
    return 0;
}

/* Names must be unique across coordinates, parameters, defines, ambient. */
int hs_ld_check_clashes(loader *L)
{
    struct { named *a; size_t n; const char *what; } g[] = {
        { L->par, L->npar, "parameter" }, { L->def, L->ndef, "define" },
        { L->amb, L->namb, "ambient name" },
    };
    for (size_t gi = 0; gi < 3; gi++)
        for (size_t i = 0; i < g[gi].n; i++) {
            const char *s = g[gi].a[i].name;
            if (hs_ld_find_coord(L->m, s, strlen(s)) >= 0)
                return hs_ytree_error(L->y, L->err, g[gi].a[i].key,
                                      "%s '%s' has the name of a coordinate", g[gi].what, s);
            for (size_t gj = 0; gj <= gi; gj++) {
                long j = find_named(g[gj].a, gj == gi ? i : g[gj].n, s, strlen(s));
                if (j >= 0)
                    return hs_ytree_error(L->y, L->err, g[gi].a[i].key,
                                          "%s '%s' clashes with %s '%s' at line %d",
                                          g[gi].what, s, g[gj].what, s,
                                          (int)g[gj].a[j].key->start_mark.line + 1);
            }
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
    /* the keys (unique coordinate names) to coordinates in one pass, then
     * parsed in coordinate order (a lookup per coordinate costs n^2) */
    yaml_node_t **val = xcalloc(m->n, sizeof *val);
    if (!val)
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    FOR_PAIRS(n, p) {
        const char *ks = hs_ytree_str(NODE(L, p->key));
        long i = hs_ld_find_coord(m, ks, strlen(ks));
        if (i >= 0)
            val[i] = NODE(L, p->value);
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

/* Mass: a diagonal list (n entries) or a symmetric n x n list of lists,
 * stored in M[n*n]. */
int hs_ld_read_mass(loader *L, yaml_node_t *n, size_t dim, const hs_node **M)
{
    hs_dag *d = L->m->dag;
    if (n && n->type == YAML_SCALAR_NODE && dim <= 8) {
        /* the same mass on every coordinate: show the list to write */
        char list[200] = "";
        size_t len = 0;
        for (size_t i = 0; i < dim && len < sizeof list; i++)
            len += (size_t)snprintf(list + len, sizeof list - len, "%s%.20s", i ? ", " : "",
                                    hs_ytree_str(n));
        if (dim == 1)
            return hs_ytree_error(L->y, L->err, n, "'mass' must be a list, found a scalar: "
                                  "write [%s]", list);
        return hs_ytree_error(L->y, L->err, n, "'mass' must be a list, found a scalar: for "
                              "the same mass on each of the %zu coordinates write [%s]", dim,
                              list);
    }
    if (hs_ld_expect(L, n, YAML_SEQUENCE_NODE, "'mass'"))
        return L->err->code;
    if (seq_len(n) != dim)
        return hs_ytree_error(L->y, L->err, n, "'mass' has %zu entr%s; expected %zu (a "
                              "diagonal) or %zu row%s", seq_len(n),
                              seq_len(n) == 1 ? "y" : "ies", dim, dim, plural(dim));
    const hs_node *zero = scalar_zero(L);
    for (size_t i = 0; i < dim * dim; i++)
        M[i] = zero;
    yaml_node_t *first = NODE(L, *n->data.sequence.items.start);
    if (first->type != YAML_SEQUENCE_NODE) {
        size_t i = 0;
        FOR_ITEMS(n, it) {
            yaml_node_t *e = NODE(L, *it);
            if (e->type != YAML_SCALAR_NODE)
                return hs_ytree_error(L->y, L->err, e, "'mass' mixes a diagonal list and "
                                      "matrix rows");
            M[i * dim + i] = hs_ld_parse(L, e, SCOPE_MODEL, "a mass entry");
            if (!M[i * dim + i])
                return L->err->code;
            i++;
        }
        return 0;
    }
    size_t i = 0;
    FOR_ITEMS(n, it) {
        yaml_node_t *row = NODE(L, *it);
        if (row->type != YAML_SEQUENCE_NODE || seq_len(row) != dim)
            return hs_ytree_error(L->y, L->err, row, "mass matrix row %zu must be a list of "
                                  "%zu entr%s", i + 1, dim, dim == 1 ? "y" : "ies");
        size_t j = 0;
        FOR_ITEMS(row, jt) {
            M[i * dim + j] = hs_ld_parse(L, NODE(L, *jt), SCOPE_MODEL, "a mass entry");
            if (!M[i * dim + j])
                return L->err->code;
            j++;
        }
        i++;
    }
    for (i = 0; i < dim; i++)
        for (size_t j = 0; j < i; j++)
            if (M[i * dim + j] != M[j * dim + i]) {
                yaml_node_t *row = NODE(L, n->data.sequence.items.start[i]);
                yaml_node_t *e = NODE(L, row->data.sequence.items.start[j]);
                char a[128], b[128];
                hs_format(d, M[i * dim + j], a, sizeof a);
                hs_format(d, M[j * dim + i], b, sizeof b);
                return hs_ytree_error(L->y, L->err, e, "mass matrix is not symmetric: entry "
                                      "(%zu,%zu) is %s but (%zu,%zu) is %s", i + 1, j + 1, a,
                                      j + 1, i + 1, b);
            }
    return 0;
}

/* Error when an expression depends on a velocity (or on t) where it must not. */
int hs_ld_forbid_velocity(loader *L, const hs_node *e, yaml_node_t *where, const char *what)
{
    hs_model *m = L->m;
    if (e->kind == HS_NUM || !m->sym_v)
        return 0;
    /* e's own symbols (a check per velocity costs n for each of the n^2
     * entries of a mass matrix); a velocity is named after its coordinate
     * with a prime, and velocities are numbered in coordinate order */
    size_t ns;
    const int32_t *sy = hs_node_symbols(e, &ns);
    for (size_t z = 0; z < ns; z++) {
        const char *nm = hs_dag_symbol_name(m->dag, sy[z]);
        size_t len = strlen(nm);
        long i = len > 1 && nm[len - 1] == '\'' ? hs_ld_find_coord(m, nm, len - 1) : -1;
        if (i >= 0 && m->sym_v[i] == sy[z])
            return hs_ytree_error(L->y, L->err, where, "%s may not depend on velocities "
                                  "(it uses %s')", what, m->qname[i]);
    }
    return 0;
}

int hs_ld_read_constraints(loader *L, yaml_node_t *c)
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
    m->k = k;
    m->cname = xcalloc(k, sizeof *m->cname);
    m->G = xcalloc(k, sizeof *m->G);
    m->cpos = xcalloc(k, sizeof *m->cpos);
    if (!m->cname || !m->G || !m->cpos)
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    for (size_t i = 0; i < k; i++) {
        yaml_node_t *val, *key = NULL;
        char buf[32];
        const char *name;
        if (c->type == YAML_MAPPING_NODE) {
            yaml_node_pair_t *p = c->data.mapping.pairs.start + i;
            key = NODE(L, p->key);
            val = NODE(L, p->value);
            name = hs_ytree_str(key);
            if (!is_ident(name) && !(name[0] && strspn(name, "0123456789") == strlen(name)))
                return hs_ytree_error(L->y, L->err, key, "'%s' is not a valid constraint "
                                      "name (letters, digits, _)", name);
        } else {
            val = NODE(L, c->data.sequence.items.start[i]);
            snprintf(buf, sizeof buf, "%zu", i + 1);
            name = buf;
        }
        m->cname[i] = hs_ld_strdup(name);
        m->cpos[i] = (hs_srcpos){ (int32_t)L->si->nsrc, 0 };
        m->G[i] = hs_ld_parse(L, val, SCOPE_MODEL, "a constraint");
        if (!m->G[i] || !m->cname[i])
            return L->err->code ? L->err->code : hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
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
    if (!e || !in) {
        free(e);
        free(in);
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
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
        m->t0 = hs_eval_tree(te, in);
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
            dst[i] = hs_eval_tree(e[i], in);
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

int hs_ld_read_outputs(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    yaml_node_t *o = hs_ld_get(L, root, "outputs");
    if (!o)
        return 0;
    named *a = NULL;
    size_t n = 0;
    int rc = hs_ld_read_names_map(L, o, &a, &n, "'outputs'");
    if (!rc) {
        m->nout = n;
        m->outname = xcalloc(n, sizeof *m->outname);
        m->out = xcalloc(n, sizeof *m->out);
        if (!m->outname || !m->out)
            rc = hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
        for (size_t i = 0; !rc && i < n; i++) {
            if (hs_ld_find_coord(m, a[i].name, strlen(a[i].name)) >= 0) {
                rc = hs_ytree_error(L->y, L->err, a[i].key, "output '%s' has the name of "
                                    "a coordinate (already a column)", a[i].name);
                break;
            }
            m->outname[i] = a[i].name;
            a[i].name = NULL;
            m->out[i] = hs_ld_parse(L, a[i].val, SCOPE_MODEL, "an output");
            if (!m->out[i])
                rc = L->err->code;
        }
    }
    for (size_t i = 0; i < n; i++)
        free(a[i].name);
    free(a);
    return rc;
}

/* Every parameter's value, after checking that each --set names one. */
int hs_ld_eval_params(loader *L)
{
    for (size_t s = 0; L->ov && s < L->ov->nset; s++) {
        const char *nm = L->ov->set_name[s];
        if (find_named(L->par, L->npar, nm, strlen(nm)) >= 0)
            continue;
        char hint[120] = "";
        const char *near = hs_ld_nearest_param(L, nm);
        if (near)
            snprintf(hint, sizeof hint, " (did you mean '%s'?)", near);
        else if (!L->npar)
            snprintf(hint, sizeof hint, " (it has no parameters)");
        hs_error_set(L->err, HS_EXIT_USAGE, "the model has no parameter '%s'%s", nm, hint);
        if (!override_placed(L, s, -1))
            snprintf(L->err->msg, sizeof L->err->msg, "--set %s: the model has no "
                     "parameter '%s'%s", nm, nm, hint);
        return L->err->code;
    }
    for (size_t i = 0; i < L->npar; i++)
        if (eval_param(L, i))
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
    m->namb = L->namb;
    m->ambname = xcalloc(L->namb, sizeof *m->ambname);
    m->amb = xcalloc(L->namb, sizeof *m->amb);
    L->ambX = xcalloc(L->namb, sizeof *L->ambX);
    L->ambV = xcalloc(L->namb, sizeof *L->ambV);
    if (!m->ambname || !m->amb || !L->ambX || !L->ambV)
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    for (size_t a = 0; a < L->namb; a++) {
        m->ambname[a] = hs_ld_strdup(L->amb[a].name);
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

/* A define nothing uses is checked too. */
int hs_ld_check_defines(loader *L)
{
    for (size_t i = 0; i < L->ndef; i++)
        if (L->def[i].state == ST_NONE) {
            L->def[i].state = ST_BUSY;
            L->def[i].expr = hs_ld_parse(L, L->def[i].val, SCOPE_MODEL, "a define");
            L->def[i].state = ST_DONE;
            if (!L->def[i].expr)
                return L->err->code;
        }
    return 0;
}
