/* Model files -> validated, compiled hs_model.
 *
 * The loader reads the YAML document, checks every key (unknown keys get the
 * nearest valid one suggested), resolves names lazily (parameters and
 * defines may appear in any order; a cycle is an error), builds the
 * symbolic kernels of the file's form and compiles them with the parameter
 * values folded in.  Every error is positioned in the file. */
#include "model.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_errno.h>

#include "ytree.h"
#include "../integrate/integrate.h"

#define MAX_COORDS 5000     /* documented limit: n x n symbolic and dense arrays */
#define MAX_CONSTRAINTS 5000
#define MAX_DENSE 1e7        /* entries of a dense k x n G_q (80 MB) */

enum scope { SCOPE_PARAM, SCOPE_INITIAL, SCOPE_MODEL };
enum { ST_NONE, ST_BUSY, ST_DONE };

typedef struct named {
    char *name;
    yaml_node_t *key, *val;
    int state;
    const hs_node *expr;       /* defines: the parsed node */
} named;

typedef struct srcinfo {       /* private part of hs_model */
    hs_ytree y;
    yaml_node_t **node;        /* [nsrc] scalar of each parsed expression */
    size_t nsrc, cap;
} srcinfo;

typedef struct loader {
    hs_model *m;
    srcinfo *si;
    hs_ytree *y;
    hs_error *err;
    const hs_overrides *ov;
    int scope;
    named *par; size_t npar;
    named *def; size_t ndef;
    named *amb; size_t namb;   /* embedding: val = X expression scalar */
    const hs_node **ambX, **ambV; /* [namb] X(t,q), D X */
    yaml_node_t *cur;          /* the scalar being parsed (for positions) */
    yaml_node_t *t_end_node;   /* simulate.t_end, for its range check */
} loader;

/* ---------- small helpers ---------- */

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p)
        memcpy(p, s, n);
    return p;
}

static void *xcalloc(size_t n, size_t size)
{
    return calloc(n ? n : 1, size);
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64)
        return 99;
    size_t row[65];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t prev = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t cur = row[j];
            size_t sub = prev + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
            size_t del = row[j] + 1, ins = row[j - 1] + 1;
            row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
            prev = cur;
        }
    }
    return row[lb];
}

/* The candidate nearest to s, or NULL when none is close. */
static const char *nearest(const char *s, const char *const *cand, size_t n)
{
    const char *best = NULL;
    size_t bd = 99;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(s, cand[i]);
        if (d < bd) {
            bd = d;
            best = cand[i];
        }
    }
    size_t len = strlen(s);
    return bd <= (len < 4 ? 1 : len < 8 ? 2 : 3) ? best : NULL;
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

#define NODE(L, id) hs_ytree_node((L)->y, (id))
#define FOR_PAIRS(map, p)                                                   \
    for (yaml_node_pair_t *p = (map)->data.mapping.pairs.start;             \
         p < (map)->data.mapping.pairs.top; p++)
#define FOR_ITEMS(seq, it)                                                  \
    for (yaml_node_item_t *it = (seq)->data.sequence.items.start;           \
         it < (seq)->data.sequence.items.top; it++)

static size_t map_len(const yaml_node_t *n)
{
    return (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start);
}

static size_t seq_len(const yaml_node_t *n)
{
    return (size_t)(n->data.sequence.items.top - n->data.sequence.items.start);
}

static int expect(loader *L, yaml_node_t *n, yaml_node_type_t type, const char *what)
{
    if (n && n->type == type)
        return 0;
    const char *want = type == YAML_MAPPING_NODE ? "a mapping"
                     : type == YAML_SEQUENCE_NODE ? "a list" : "a scalar";
    return hs_ytree_error(L->y, L->err, n, "%s must be %s, found %s", what, want,
                          hs_ytree_kind(n));
}

/* Check a mapping's keys against `allowed`; duplicate keys are errors. */
static int check_keys(loader *L, yaml_node_t *map, const char *const *allowed,
                      size_t nallowed, const char *where)
{
    FOR_PAIRS(map, p) {
        yaml_node_t *k = NODE(L, p->key);
        const char *ks = hs_ytree_str(k);
        if (!ks)
            return hs_ytree_error(L->y, L->err, k, "keys in %s must be scalars", where);
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++)
            if (strcmp(hs_ytree_str(NODE(L, q->key)) ? hs_ytree_str(NODE(L, q->key)) : "", ks) == 0)
                return hs_ytree_error(L->y, L->err, k, "duplicate key '%s' in %s", ks, where);
        if (!allowed)
            continue;
        size_t i = 0;
        while (i < nallowed && strcmp(allowed[i], ks) != 0)
            i++;
        if (i == nallowed) {
            const char *near = nearest(ks, allowed, nallowed);
            if (near)
                return hs_ytree_error(L->y, L->err, k,
                                      "unknown key '%s' in %s (did you mean '%s'?)",
                                      ks, where, near);
            return hs_ytree_error(L->y, L->err, k, "unknown key '%s' in %s", ks, where);
        }
    }
    return 0;
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

static yaml_node_t *get(loader *L, yaml_node_t *map, const char *key)
{
    yaml_node_pair_t *p = find_pair(L, map, key);
    return p ? NODE(L, p->value) : NULL;
}

static yaml_node_t *get_key(loader *L, yaml_node_t *map, const char *key)
{
    yaml_node_pair_t *p = find_pair(L, map, key);
    return p ? NODE(L, p->key) : NULL;
}

/* ---------- names ---------- */

static long find_named(const named *a, size_t n, const char *s, size_t len)
{
    for (size_t i = 0; i < n; i++)
        if (strlen(a[i].name) == len && memcmp(a[i].name, s, len) == 0)
            return (long)i;
    return -1;
}

static long find_coord(const hs_model *m, const char *s, size_t len)
{
    for (size_t i = 0; i < m->n; i++)
        if (strlen(m->qname[i]) == len && memcmp(m->qname[i], s, len) == 0)
            return (long)i;
    return -1;
}

static const hs_node *parse_expr(loader *L, yaml_node_t *n, int scope, const char *what);
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
        if ((i = find_coord(m, s, len)) >= 0)
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
            df->expr = parse_expr(L, df->val, SCOPE_MODEL, "a define");
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
static const hs_node *parse_expr(loader *L, yaml_node_t *n, int scope, const char *what)
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
        hs_ytree_error_in(L->y, L->err, n, pe.offset >= 0 ? (size_t)pe.offset : 0,
                          "%s", pe.msg);
        return NULL;
    }
    return e;
}

/* Report a dag error (fold to NaN, size limit) at its source position. */
static int dag_check(loader *L)
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
    for (size_t s = 0; s < (L->ov ? L->ov->nset : 0); s++)
        if (strcmp(L->ov->set_name[s], p->name) == 0) {
            m->pval[i] = L->ov->set_value[s];
            p->state = ST_DONE;
            return 0;
        }
    const hs_node *e = parse_expr(L, p->val, SCOPE_PARAM, "a parameter");
    if (!e || dag_check(L))
        return L->err->code ? L->err->code : HS_EXIT_MODEL;
    double *in = xcalloc((size_t)hs_dag_nsymbols(m->dag), sizeof *in);
    if (!in)
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    for (size_t j = 0; j < L->npar; j++)
        in[m->sym_p[j]] = L->par[j].state == ST_DONE ? m->pval[j] : (double)NAN;
    double v = hs_eval_tree(e, in);
    free(in);
    if (!isfinite(v))
        return hs_ytree_error(L->y, L->err, p->val,
                              "parameter '%s' evaluates to %g", p->name, v);
    m->pval[i] = v;
    p->state = ST_DONE;
    return 0;
}

/* ---------- sections ---------- */

static int read_names_map(loader *L, yaml_node_t *map, named **out, size_t *nout,
                          const char *what)
{
    if (!map)
        return 0;
    if (expect(L, map, YAML_MAPPING_NODE, what))
        return L->err->code;
    if (check_keys(L, map, NULL, 0, what))
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
        e->name = xstrdup(s);
        if (!e->name)
            return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
        (*nout)++;
    }
    return 0;
}

static int read_coordinates(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    yaml_node_t *c = get(L, root, "coordinates");
    if (!c)
        return hs_ytree_error(L->y, L->err, root, "missing key 'coordinates' "
                              "(the list of generalized coordinates, e.g. [x, y])");
    if (expect(L, c, YAML_SEQUENCE_NODE, "'coordinates'"))
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
    if (!m->qname || !m->vname)
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    size_t i = 0;
    FOR_ITEMS(c, it) {
        yaml_node_t *e = NODE(L, *it);
        const char *s = hs_ytree_str(e);
        if (!s)
            return hs_ytree_error(L->y, L->err, e, "a coordinate must be a name, found %s",
                                  hs_ytree_kind(e));
        if (!is_ident(s))
            return hs_ytree_error(L->y, L->err, e, "'%s' is not a valid coordinate name", s);
        if (is_reserved(s))
            return hs_ytree_error(L->y, L->err, e, "'%s' is reserved and cannot be a coordinate", s);
        if (find_coord(m, s, strlen(s)) >= 0)
            return hs_ytree_error(L->y, L->err, e, "duplicate coordinate '%s'", s);
        m->qname[i] = xstrdup(s);
        m->vname[i] = malloc(strlen(s) + 2);
        if (!m->qname[i] || !m->vname[i])
            return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
        sprintf(m->vname[i], "%s'", s);
        m->n = ++i;
    }
    return 0;
}

/* Names must be unique across coordinates, parameters, defines, ambient. */
static int check_clashes(loader *L)
{
    struct { named *a; size_t n; const char *what; } g[] = {
        { L->par, L->npar, "parameter" }, { L->def, L->ndef, "define" },
        { L->amb, L->namb, "ambient name" },
    };
    for (size_t gi = 0; gi < 3; gi++)
        for (size_t i = 0; i < g[gi].n; i++) {
            const char *s = g[gi].a[i].name;
            if (find_coord(L->m, s, strlen(s)) >= 0)
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
static int read_per_coord(loader *L, yaml_node_t *n, const char *what, int scope,
                          const hs_node *dflt, const hs_node **out)
{
    hs_model *m = L->m;
    if (n->type == YAML_SEQUENCE_NODE) {
        if (seq_len(n) != m->n)
            return hs_ytree_error(L->y, L->err, n, "%s has %zu entries; the model has %zu "
                                  "coordinates", what, seq_len(n), m->n);
        size_t i = 0;
        FOR_ITEMS(n, it) {
            out[i] = parse_expr(L, NODE(L, *it), scope, what);
            if (!out[i++])
                return L->err->code;
        }
        return 0;
    }
    if (n->type != YAML_MAPPING_NODE)
        return hs_ytree_error(L->y, L->err, n, "%s must be a list of %zu expressions or a "
                              "mapping coordinate -> expression, found %s", what, m->n,
                              hs_ytree_kind(n));
    if (check_keys(L, n, (const char *const *)m->qname, m->n, what))
        return L->err->code;
    for (size_t i = 0; i < m->n; i++) {
        yaml_node_t *v = get(L, n, m->qname[i]);
        if (v) {
            out[i] = parse_expr(L, v, scope, what);
            if (!out[i])
                return L->err->code;
        } else if (dflt) {
            out[i] = dflt;
        } else {
            return hs_ytree_error(L->y, L->err, n, "%s: missing value for coordinate '%s' "
                                  "(every coordinate needs one)", what, m->qname[i]);
        }
    }
    return 0;
}

static const hs_node *scalar_zero(loader *L)
{
    return hs_num(L->m->dag, 0.0);
}

/* Mass: a diagonal list (n entries) or a symmetric n x n list of lists,
 * stored in M[n*n]. */
static int read_mass(loader *L, yaml_node_t *n, size_t dim, const hs_node **M)
{
    hs_dag *d = L->m->dag;
    if (expect(L, n, YAML_SEQUENCE_NODE, "'mass'"))
        return L->err->code;
    if (seq_len(n) != dim)
        return hs_ytree_error(L->y, L->err, n, "'mass' has %zu entries; expected %zu (a "
                              "diagonal) or %zu rows", seq_len(n), dim, dim);
    for (size_t i = 0; i < dim * dim; i++)
        M[i] = scalar_zero(L);
    yaml_node_t *first = NODE(L, *n->data.sequence.items.start);
    if (first->type != YAML_SEQUENCE_NODE) {
        size_t i = 0;
        FOR_ITEMS(n, it) {
            yaml_node_t *e = NODE(L, *it);
            if (e->type != YAML_SCALAR_NODE)
                return hs_ytree_error(L->y, L->err, e, "'mass' mixes a diagonal list and "
                                      "matrix rows");
            M[i * dim + i] = parse_expr(L, e, SCOPE_MODEL, "a mass entry");
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
                                  "%zu entries", i + 1, dim);
        size_t j = 0;
        FOR_ITEMS(row, jt) {
            M[i * dim + j] = parse_expr(L, NODE(L, *jt), SCOPE_MODEL, "a mass entry");
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
static int forbid_velocity(loader *L, const hs_node *e, yaml_node_t *where, const char *what)
{
    hs_model *m = L->m;
    if (e->kind == HS_NUM)
        return 0;
    size_t ns = (size_t)hs_dag_nsymbols(m->dag);
    unsigned char *used = calloc(ns ? ns : 1, 1);
    if (!used)
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    hs_symbols_used(e, used, ns);       /* one walk, not one per velocity */
    for (size_t i = 0; i < m->n; i++)
        if (used[m->sym_v[i]]) {
            free(used);
            return hs_ytree_error(L->y, L->err, where, "%s may not depend on velocities "
                                  "(it uses %s')", what, m->qname[i]);
        }
    free(used);
    return 0;
}

static int read_constraints(loader *L, yaml_node_t *c)
{
    hs_model *m = L->m;
    if (!c)
        return 0;
    size_t k;
    if (c->type == YAML_MAPPING_NODE) {
        if (check_keys(L, c, NULL, 0, "'constraints'"))
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
        m->cname[i] = xstrdup(name);
        m->cpos[i] = (hs_srcpos){ (int32_t)L->si->nsrc, 0 };
        m->G[i] = parse_expr(L, val, SCOPE_MODEL, "a constraint");
        if (!m->G[i] || !m->cname[i])
            return L->err->code ? L->err->code : hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
        if (forbid_velocity(L, m->G[i], val, "a holonomic constraint"))
            return L->err->code;
    }
    return 0;
}

const char *const hs_stab_names[3] = { "projection", "baumgarte", "none" };
const char *const hs_cons_mode_names[2] = { "project", "reject" };
const char *const hs_output_names[2] = { "exact", "interpolate" };

int hs_keyword(const char *const *names, size_t n, const char *s)
{
    for (size_t i = 0; s && i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return (int)i;
    return -1;
}

/* A scalar that must be one of names[]: *out = its index. */
static int choose(loader *L, yaml_node_t *v, const char *what, const char *const *names,
                  size_t n, int *out)
{
    int kw = hs_keyword(names, n, hs_ytree_str(v));
    if (kw >= 0) {
        *out = kw;
        return 0;
    }
    char list[256];
    size_t len = 0;
    list[0] = '\0';
    for (size_t i = 0; i < n && len + 1 < sizeof list; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s'%s'",
                                i == 0 ? "" : i + 1 == n ? " or " : ", ", names[i]);
    return hs_ytree_error(L->y, L->err, v, "%s must be %s", what, list);
}

static int read_settings(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    hs_settings *s = &m->set;
    s->t_end = NAN;
    s->dt = NAN;
    snprintf(s->method, sizeof s->method, "rk8pd");
    s->rtol = 1e-9;
    s->atol = 1e-9;
    s->stabilize = HS_STAB_PROJECTION;
    s->alpha = NAN;
    s->beta = NAN;
    s->mode = HS_CONS_PROJECT;
    s->tol = 1e-10;

    yaml_node_t *c = get(L, root, "consistency");
    if (c) {
        static const char *const keys[] = { "mode", "tolerance", "lock" };
        if (expect(L, c, YAML_MAPPING_NODE, "'consistency'") ||
            check_keys(L, c, keys, 3, "'consistency'"))
            return L->err->code;
        yaml_node_t *v;
        if ((v = get(L, c, "mode"))) {
            int i;
            if (choose(L, v, "consistency mode", hs_cons_mode_names, 2, &i))
                return L->err->code;
            s->mode = (hs_cons_mode)i;
        }
        if ((v = get(L, c, "tolerance"))) {
            if (hs_ytree_number(L->y, v, &s->tol, L->err))
                return L->err->code;
            if (!(s->tol > 0))
                return hs_ytree_error(L->y, L->err, v, "consistency tolerance must be > 0");
        }
        if ((v = get(L, c, "lock"))) {
            if (expect(L, v, YAML_SEQUENCE_NODE, "'lock'"))
                return L->err->code;
            FOR_ITEMS(v, it) {
                yaml_node_t *e = NODE(L, *it);
                const char *q = hs_ytree_str(e);
                long i = q ? find_coord(m, q, strlen(q)) : -1;
                if (i < 0)
                    return hs_ytree_error(L->y, L->err, e, "'lock' names '%s', which is not "
                                          "a coordinate", q ? q : "?");
                m->lock[i] = 1;
            }
        }
    }
    yaml_node_t *sim = get(L, root, "simulate");
    if (sim) {
        static const char *const keys[] = { "t_end", "dt", "method", "rtol", "atol",
                                            "stabilize", "alpha", "beta", "output" };
        if (expect(L, sim, YAML_MAPPING_NODE, "'simulate'") ||
            check_keys(L, sim, keys, 9, "'simulate'"))
            return L->err->code;
        struct { const char *k; double *dst; int positive; } num[] = {
            { "t_end", &s->t_end, 0 }, { "dt", &s->dt, 1 }, { "rtol", &s->rtol, 1 },
            { "atol", &s->atol, 1 }, { "alpha", &s->alpha, 0 }, { "beta", &s->beta, 0 },
        };
        L->t_end_node = get(L, sim, "t_end");
        for (size_t i = 0; i < sizeof num / sizeof *num; i++) {
            yaml_node_t *v = get(L, sim, num[i].k);
            if (!v)
                continue;
            if (hs_ytree_number(L->y, v, num[i].dst, L->err))
                return L->err->code;
            if (num[i].positive && !(*num[i].dst > 0))
                return hs_ytree_error(L->y, L->err, v, "simulate.%s must be > 0", num[i].k);
            if (!num[i].positive && (num[i].dst == &s->alpha || num[i].dst == &s->beta) &&
                *num[i].dst < 0)
                return hs_ytree_error(L->y, L->err, v, "simulate.%s must be >= 0", num[i].k);
        }
        yaml_node_t *v;
        if ((v = get(L, sim, "method"))) {
            const char *ms = hs_ytree_str(v);
            if (!ms || strlen(ms) >= sizeof s->method)
                return hs_ytree_error(L->y, L->err, v, "simulate.method must be a stepper name");
            snprintf(s->method, sizeof s->method, "%s", ms);
            if (!hs_method_known(ms))
                return hs_ytree_error(L->y, L->err, v, "unknown method '%s'; choose one of: %s",
                                      ms, hs_method_list());
        }
        if ((v = get(L, sim, "output"))) {
            if (choose(L, v, "simulate.output", hs_output_names, 2, &s->interpolate))
                return L->err->code;
        }
        if ((v = get(L, sim, "stabilize"))) {
            int i;
            if (choose(L, v, "simulate.stabilize", hs_stab_names, 3, &i))
                return L->err->code;
            s->stabilize = (hs_stab)i;
        }
    }
    return 0;
}

static int read_initial(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    yaml_node_t *ini = get(L, root, "initial");
    if (!ini)
        return hs_ytree_error(L->y, L->err, root, "missing key 'initial' (initial values "
                              "of the coordinates: initial: {q: {...}})");
    static const char *const keys[] = { "t", "q", "v" };
    if (expect(L, ini, YAML_MAPPING_NODE, "'initial'") ||
        check_keys(L, ini, keys, 3, "'initial'"))
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
    yaml_node_t *tn = get(L, ini, "t"), *qn = get(L, ini, "q"), *vn = get(L, ini, "v");
    m->t0 = 0;
    if (tn) {
        const hs_node *te = parse_expr(L, tn, SCOPE_INITIAL, "initial.t");
        if (!te || dag_check(L))
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
        if (read_per_coord(L, src, pass == 0 ? "initial.q" : "initial.v", SCOPE_INITIAL,
                           pass == 0 ? NULL : scalar_zero(L), e) || dag_check(L))
            goto out;
        for (size_t i = 0; i < m->n; i++) {
            dst[i] = hs_eval_tree(e[i], in);
            if (!isfinite(dst[i])) {
                yaml_node_t *at = src->type == YAML_MAPPING_NODE ? get(L, src, m->qname[i])
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

static int read_outputs(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    yaml_node_t *o = get(L, root, "outputs");
    if (!o)
        return 0;
    named *a = NULL;
    size_t n = 0;
    int rc = read_names_map(L, o, &a, &n, "'outputs'");
    if (!rc) {
        m->nout = n;
        m->outname = xcalloc(n, sizeof *m->outname);
        m->out = xcalloc(n, sizeof *m->out);
        if (!m->outname || !m->out)
            rc = hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
        for (size_t i = 0; !rc && i < n; i++) {
            if (find_coord(m, a[i].name, strlen(a[i].name)) >= 0) {
                rc = hs_ytree_error(L->y, L->err, a[i].key, "output '%s' has the name of "
                                    "a coordinate (already a column)", a[i].name);
                break;
            }
            m->outname[i] = a[i].name;
            a[i].name = NULL;
            m->out[i] = parse_expr(L, a[i].val, SCOPE_MODEL, "an output");
            if (!m->out[i])
                rc = L->err->code;
        }
    }
    for (size_t i = 0; i < n; i++)
        free(a[i].name);
    free(a);
    return rc;
}

/* ---------- kernels ---------- */

/* Lagrangian form: M = d2L/dv2, Q = dL/dq - (d2L/dv dq) v - d2L/dv dt + F. */
static int lagrangian_kernels(loader *L, const hs_node *Lg, const hs_node *const *F,
                              yaml_node_t *where)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n;
    const hs_node **p = xcalloc(n, sizeof *p);
    if (!p)
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    for (size_t i = 0; i < n && !hs_dag_failed(d); i++)
        p[i] = hs_diff(d, Lg, m->sym_v[i]);
    for (size_t i = 0; i < n && !hs_dag_failed(d); i++) {
        for (size_t j = 0; j <= i; j++) {
            const hs_node *Mij = hs_diff(d, p[i], m->sym_v[j]);
            m->M[i * n + j] = m->M[j * n + i] = Mij;
            for (size_t l = 0; l < n; l++)
                if (hs_depends_on(Mij, m->sym_v[l])) {
                    free(p);
                    return hs_ytree_error(L->y, L->err, where,
                                          "the kinetic energy is not quadratic in the velocities: "
                                          "d2T/d%s'd%s' depends on %s'", m->qname[i],
                                          m->qname[j], m->qname[l]);
                }
        }
        const hs_node *Qi = hs_diff(d, Lg, m->sym_q[i]);
        Qi = hs_sub(d, Qi, hs_diff(d, p[i], m->sym_t));
        for (size_t j = 0; j < n; j++)
            Qi = hs_sub(d, Qi, hs_mul(d, hs_diff(d, p[i], m->sym_q[j]), hs_sym(d, m->sym_v[j])));
        m->Q[i] = hs_add(d, Qi, F[i]);
    }
    free(p);
    return dag_check(L);
}

/* T with every velocity set to 0: the velocity-free part T0 of a kinetic
 * energy (non-zero in a moving chart). */
static const hs_node *velocity_free(loader *L, const hs_node *T)
{
    hs_model *m = L->m;
    size_t ns = (size_t)hs_dag_nsymbols(m->dag);
    const hs_node **vz = xcalloc(ns, sizeof *vz);
    if (!vz)
        return scalar_zero(L);
    for (size_t i = 0; i < m->n; i++)
        vz[m->sym_v[i]] = scalar_zero(L);
    const hs_node *T0 = hs_subst(m->dag, T, vz, ns);
    free(vz);
    return T0;
}

static int build_kernels(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n;
    const hs_node *zero = scalar_zero(L);
    const hs_node *Lsym = NULL, *T0 = zero;   /* generalized forms: L, T(v = 0) */
    m->M = xcalloc(n * n, sizeof *m->M);
    m->Q = xcalloc(n, sizeof *m->Q);
    const hs_node **F = xcalloc(n, sizeof *F);
    if (!m->M || !m->Q || !F) {
        free(F);
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    }
    yaml_node_t *pot = get(L, root, "potential"), *frc = get(L, root, "forces");
    m->has_potential = pot != NULL;
    m->U = zero;
    if (pot && !(m->U = parse_expr(L, pot, SCOPE_MODEL, "'potential'")))
        goto out;
    if (pot && forbid_velocity(L, m->U, pot, "the potential"))
        goto out;

    if (m->form == HS_FORM_CARTESIAN) {
        if (read_mass(L, get(L, root, "mass"), n, m->M))
            goto out;
        for (size_t i = 0; i < n * n; i++)
            if (forbid_velocity(L, m->M[i], get(L, root, "mass"), "the mass matrix"))
                goto out;
        for (size_t i = 0; i < n; i++)
            F[i] = zero;
        if (frc && read_per_coord(L, frc, "'forces'", SCOPE_MODEL, zero, F))
            goto out;
        for (size_t i = 0; i < n; i++)
            m->Q[i] = hs_sub(d, F[i], hs_diff(d, m->U, m->sym_q[i]));
        const hs_node **pw = xcalloc(n, sizeof *pw);
        if (!pw)
            goto oom;
        for (size_t i = 0; i < n; i++)
            pw[i] = hs_mul(d, F[i], hs_sym(d, m->sym_v[i]));
        m->P_nc = hs_addn(d, pw, n);
        free(pw);
        m->has_nc_forces = frc != NULL;
    } else if (m->form == HS_FORM_LAGRANGIAN) {
        yaml_node_t *kin = get(L, root, "kinetic"), *lag = get(L, root, "lagrangian");
        const hs_node *Lg;
        for (size_t i = 0; i < n; i++)
            F[i] = zero;
        if (frc && read_per_coord(L, frc, "'forces'", SCOPE_MODEL, zero, F))
            goto out;
        if (kin) {
            const hs_node *T = parse_expr(L, kin, SCOPE_MODEL, "'kinetic'");
            if (!T)
                goto out;
            Lg = hs_sub(d, T, m->U);
            T0 = velocity_free(L, T);
        } else {
            if (pot) {
                hs_ytree_error(L->y, L->err, get_key(L, root, "potential"),
                                    "'potential' goes with 'kinetic'; a 'lagrangian' "
                                    "already contains the potential");
                goto out;
            }
            if (!(Lg = parse_expr(L, lag, SCOPE_MODEL, "'lagrangian'")))
                goto out;
            /* U = -L(t, q, 0): the velocity-free part of the Lagrangian */
            const hs_node **vz = xcalloc((size_t)hs_dag_nsymbols(d), sizeof *vz);
            if (!vz)
                goto oom;
            for (size_t i = 0; i < n; i++)
                vz[m->sym_v[i]] = zero;
            m->U = hs_neg(d, hs_subst(d, Lg, vz, (size_t)hs_dag_nsymbols(d)));
            free(vz);
            m->has_potential = 1;
        }
        Lsym = Lg;
        if (lagrangian_kernels(L, Lg, F, kin ? kin : lag))
            goto out;
        const hs_node **pw = xcalloc(n, sizeof *pw);
        if (!pw)
            goto oom;
        for (size_t i = 0; i < n; i++)
            pw[i] = hs_mul(d, F[i], hs_sym(d, m->sym_v[i]));
        m->P_nc = hs_addn(d, pw, n);
        free(pw);
        m->has_nc_forces = frc != NULL;
    } else { /* embedding: T = 1/2 Xdot^T M_a Xdot, forces DX^T F */
        size_t na = L->namb;
        const hs_node **Ma = xcalloc(na * na, sizeof *Ma);
        const hs_node **Fa = xcalloc(na, sizeof *Fa);
        const hs_node **terms = xcalloc(na * na + na, sizeof *terms);
        if (!Ma || !Fa || !terms) {
            free(Ma); free(Fa); free(terms);
            goto oom;
        }
        int bad = read_mass(L, get(L, root, "mass"), na, Ma);
        for (size_t j = 0; j < na; j++)
            Fa[j] = zero;
        if (!bad && frc) {
            /* forces are per ambient name */
            if (frc->type == YAML_MAPPING_NODE) {
                const char **an = xcalloc(na, sizeof *an);
                for (size_t j = 0; an && j < na; j++)
                    an[j] = L->amb[j].name;
                bad = !an || check_keys(L, frc, an, na, "'forces' (ambient names)");
                free(an);
                for (size_t j = 0; !bad && j < na; j++) {
                    yaml_node_t *v = get(L, frc, L->amb[j].name);
                    if (v && !(Fa[j] = parse_expr(L, v, SCOPE_MODEL, "a force")))
                        bad = 1;
                }
            } else if (frc->type == YAML_SEQUENCE_NODE && seq_len(frc) == na) {
                size_t j = 0;
                FOR_ITEMS(frc, it) {
                    if (!(Fa[j++] = parse_expr(L, NODE(L, *it), SCOPE_MODEL, "a force"))) {
                        bad = 1;
                        break;
                    }
                }
            } else {
                bad = hs_ytree_error(L->y, L->err, frc, "'forces' must map ambient names "
                                     "to expressions (or list %zu of them)", na);
            }
        }
        size_t nt = 0;
        for (size_t a = 0; !bad && a < na; a++)
            for (size_t b = 0; b < na; b++)
                if (!hs_is_num(Ma[a * na + b], 0))
                    terms[nt++] = hs_mul(d, hs_mul(d, Ma[a * na + b], L->ambV[a]), L->ambV[b]);
        const hs_node *T = hs_mul(d, hs_num(d, 0.5), hs_addn(d, terms, nt));
        for (size_t i = 0; !bad && i < n; i++) {
            nt = 0;
            for (size_t a = 0; a < na; a++)
                terms[nt++] = hs_mul(d, Fa[a], hs_diff(d, L->ambX[a], m->sym_q[i]));
            F[i] = hs_addn(d, terms, nt);
        }
        nt = 0;
        for (size_t a = 0; !bad && a < na; a++)
            terms[nt++] = hs_mul(d, Fa[a], L->ambV[a]);
        m->P_nc = hs_addn(d, terms, nt);
        m->has_nc_forces = frc != NULL;
        free(Ma); free(Fa); free(terms);
        if (bad || L->err->code)
            goto out;
        Lsym = hs_sub(d, T, m->U);
        T0 = velocity_free(L, T);
        if (lagrangian_kernels(L, Lsym, F, get(L, root, "mass")))
            goto out;
    }
    if (!m->P_nc)
        m->P_nc = zero;
    if (Lsym) {
        /* generalized forms: E = T2 + U and the energy function h = T2 - T0 + U
         * obeys dh/dt = -dL/dt + (F + R).v, so P_t = -dL/dt + D T0, which is
         * identically 0 for a time-independent L without a velocity-free T0 */
        m->P_t = hs_add(d, hs_neg(d, hs_diff(d, Lsym, m->sym_t)),
                        hs_total_diff(d, T0, m->sym_t, n, m->sym_q, m->sym_v));
    } else {
        /* Cartesian: P_t = D(T + U) + v.Q - P_nc, with T = v^T M v / 2 and D
         * the total derivative at fixed velocities: dE/dt = D(T + U) + v.M a
         * and M a = Q + R along solutions */
        const hs_node **terms = xcalloc(n * n + 2 * n, sizeof *terms);
        if (!terms)
            goto oom;
        size_t nt = 0;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++)
                if (!hs_is_num(m->M[i * n + j], 0))
                    terms[nt++] = hs_mul(d, m->M[i * n + j],
                                         hs_mul(d, hs_sym(d, m->sym_v[i]), hs_sym(d, m->sym_v[j])));
        const hs_node *E = hs_add(d, hs_mul(d, hs_num(d, 0.5), hs_addn(d, terms, nt)), m->U);
        nt = 0;
        terms[nt++] = hs_total_diff(d, E, m->sym_t, n, m->sym_q, m->sym_v);
        for (size_t i = 0; i < n; i++)
            terms[nt++] = hs_mul(d, hs_sym(d, m->sym_v[i]), m->Q[i]);
        terms[nt++] = hs_neg(d, m->P_nc);
        m->P_t = hs_addn(d, terms, nt);
        free(terms);
    }

    if (read_constraints(L, get(L, root, "constraints")))
        goto out;
    size_t k = m->k;
    /* documented limits: the run keeps a dense copy of G_q (reactions, rank
     * diagnosis) and, for a full mass matrix, dense n x n factors */
    if ((double)k * (double)n > MAX_DENSE) {
        hs_error_set(L->err, HS_EXIT_MODEL, "%s: model too large: %zu coordinates and %zu "
                     "constraints (holosim keeps a dense k x n Jacobian; the limit is "
                     "k*n <= %.0f)", L->y->file, n, k, MAX_DENSE);
        goto out;
    }
    m->G_q = xcalloc(k * n, sizeof *m->G_q);
    m->G_t = xcalloc(k, sizeof *m->G_t);
    m->Gdot = xcalloc(k, sizeof *m->Gdot);
    m->gamma = xcalloc(k, sizeof *m->gamma);
    if (!m->G_q || !m->G_t || !m->Gdot || !m->gamma)
        goto oom;
    for (size_t i = 0; i < k && !hs_dag_failed(d); i++) {
        for (size_t j = 0; j < n; j++)
            m->G_q[i * n + j] = hs_diff(d, m->G[i], m->sym_q[j]);
        m->G_t[i] = hs_diff(d, m->G[i], m->sym_t);
        m->Gdot[i] = hs_total_diff(d, m->G[i], m->sym_t, n, m->sym_q, m->sym_v);
        m->gamma[i] = hs_total_diff(d, m->Gdot[i], m->sym_t, n, m->sym_q, m->sym_v);
    }
    dag_check(L);
    goto out;
oom:
    hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
out:
    free(F);
    return L->err->code;
}

/* ---------- compile ---------- */

static int compile(loader *L)
{
    hs_model *m = L->m;
    hs_dag *d = m->dag;
    size_t n = m->n, k = m->k;
    size_t nsym = (size_t)hs_dag_nsymbols(d);
    const hs_node **map = xcalloc(nsym, sizeof *map);
    size_t cap = n * n + 4 * n + 6 * k + k * n + m->nout + m->namb + 8;
    const hs_node **r = xcalloc(cap, sizeof *r);
    if (!map || !r) {
        free(map);
        free(r);
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    }
    for (size_t j = 0; j < m->npar; j++)
        map[m->sym_p[j]] = hs_num(d, m->pval[j]);
#define FOLD(e) hs_subst(d, (e), map, nsym)

    /* mass structure */
    const hs_node **Mf = xcalloc(n * n, sizeof *Mf);
    if (!Mf)
        goto oom;
    int diag = 1, constant = 1;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            Mf[i * n + j] = FOLD(m->M[i * n + j]);
            if (i != j && !hs_is_num(Mf[i * n + j], 0))
                diag = 0;
            if (i == j && Mf[i * n + j]->kind != HS_NUM)
                constant = 0;
        }
    m->mass_kind = !diag ? HS_MASS_FULL : constant ? HS_MASS_CONST_DIAG : HS_MASS_DIAG;
    size_t nr = 0;
    m->off_M = nr;
    if (m->mass_kind == HS_MASS_CONST_DIAG) {
        m->Mconst = xcalloc(n, sizeof *m->Mconst);
        if (!m->Mconst)
            goto oom;
        for (size_t i = 0; i < n; i++)
            m->Mconst[i] = Mf[i * n + i]->value;
    } else if (m->mass_kind == HS_MASS_DIAG) {
        for (size_t i = 0; i < n; i++)
            r[nr++] = Mf[i * n + i];
    } else {
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j <= i; j++)
                r[nr++] = Mf[i * n + j];
    }
    free(Mf);
    m->off_Q = nr;
    for (size_t i = 0; i < n; i++)
        r[nr++] = FOLD(m->Q[i]);
    /* sparsity of G_q from the folded symbolic Jacobian */
    const hs_node **Gq = xcalloc(k * n, sizeof *Gq);
    m->gq_start = xcalloc(k + 1, sizeof *m->gq_start);
    if (!Gq || !m->gq_start) {
        free(Gq);
        goto oom;
    }
    m->nnz = 0;
    for (size_t i = 0; i < k * n; i++) {
        Gq[i] = FOLD(m->G_q[i]);
        if (!hs_is_num(Gq[i], 0))
            m->nnz++;
    }
    m->gq_col = xcalloc(m->nnz, sizeof *m->gq_col);
    if (!m->gq_col) {
        free(Gq);
        goto oom;
    }
    m->off_Gq = nr;
    size_t z = 0;
    for (size_t i = 0; i < k; i++) {
        m->gq_start[i] = (int)z;
        for (size_t j = 0; j < n; j++)
            if (!hs_is_num(Gq[i * n + j], 0)) {
                m->gq_col[z++] = (int)j;
                r[nr++] = Gq[i * n + j];
            }
    }
    m->gq_start[k] = (int)z;
    m->off_gamma = nr;
    for (size_t i = 0; i < k; i++)
        r[nr++] = FOLD(m->gamma[i]);
    m->off_Pd = nr;
    r[nr++] = FOLD(m->P_nc);
    m->off_Pt = nr;
    r[nr++] = FOLD(m->P_t);
    m->off_Gb = m->off_Gdotb = nr;
    if (m->set.stabilize == HS_STAB_BAUMGARTE) {
        for (size_t i = 0; i < k; i++)
            r[nr++] = FOLD(m->G[i]);
        m->off_Gdotb = nr;
        for (size_t i = 0; i < k; i++)
            r[nr++] = FOLD(m->Gdot[i]);
    }
    m->ndyn = nr;
    if (dag_check(L)) {
        free(Gq);
        goto out;
    }
    m->prog_dyn = hs_prog_compile(d, r, nr, L->err);
    if (!m->prog_dyn) {
        free(Gq);
        goto out;
    }

    /* position program: G | G_q non-zeros | G_t */
    nr = 0;
    for (size_t i = 0; i < k; i++)
        r[nr++] = FOLD(m->G[i]);
    for (size_t i = 0; i < k * n; i++)
        if (!hs_is_num(Gq[i], 0))
            r[nr++] = Gq[i];
    for (size_t i = 0; i < k; i++)
        r[nr++] = FOLD(m->G_t[i]);
    free(Gq);
    m->prog_pos = hs_prog_compile(d, r, nr, L->err);
    if (!m->prog_pos)
        goto out;

    /* aux program: G | Gdot | G_t | U | P_nc | outputs | ambient */
    nr = 0;
    m->off_G = nr;
    for (size_t i = 0; i < k; i++)
        r[nr++] = FOLD(m->G[i]);
    m->off_Gdot = nr;
    for (size_t i = 0; i < k; i++)
        r[nr++] = FOLD(m->Gdot[i]);
    m->off_Gt = nr;
    for (size_t i = 0; i < k; i++)
        r[nr++] = FOLD(m->G_t[i]);
    m->off_U = nr;
    r[nr++] = FOLD(m->U);
    m->off_Pnc = nr;
    r[nr++] = FOLD(m->P_nc);
    m->off_out = nr;
    for (size_t i = 0; i < m->nout; i++)
        r[nr++] = FOLD(m->out[i]);
    m->off_amb = nr;
    for (size_t i = 0; i < m->namb; i++)
        r[nr++] = FOLD(m->amb[i]);
    m->naux = nr;
    if (dag_check(L))
        goto out;
    m->prog_aux = hs_prog_compile(d, r, nr, L->err);
    m->nin = nsym;
    goto out;
oom:
    hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
out:
#undef FOLD
    free(map);
    free(r);
    return L->err->code;
}

/* Mass positive definite at the initial state (exit 2 otherwise). */
static int check_mass_at_start(loader *L, yaml_node_t *where)
{
    hs_model *m = L->m;
    size_t n = m->n;
    if (m->mass_kind == HS_MASS_CONST_DIAG) {
        for (size_t i = 0; i < n; i++)
            if (!(m->Mconst[i] > 0))
                return hs_ytree_error(L->y, L->err, where, "%s is not positive definite: "
                                      "diagonal entry %zu (%s) is %g",
                                      m->form == HS_FORM_CARTESIAN ? "mass matrix"
                                                                   : "metric d2T/dv2",
                                      i + 1, m->qname[i], m->Mconst[i]);
        return 0;
    }
    double *in = xcalloc(m->nin, sizeof *in);
    double *regs = xcalloc(hs_prog_nregs(m->prog_dyn), sizeof *regs);
    double *out = xcalloc(m->ndyn, sizeof *out);
    gsl_matrix *M = gsl_matrix_alloc(n, n);
    int rc = 0;
    if (!in || !regs || !out || !M) {
        rc = hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
        goto done;
    }
    in[m->sym_t] = m->t0;
    for (size_t i = 0; i < n; i++) {
        in[m->sym_q[i]] = m->q0[i];
        in[m->sym_v[i]] = m->v0[i];
    }
    hs_prog_eval(m->prog_dyn, in, regs, out);
    const char *what = m->form == HS_FORM_CARTESIAN ? "mass matrix" : "metric d2T/dv2";
    if (m->mass_kind == HS_MASS_DIAG) {
        for (size_t i = 0; i < n; i++)
            if (!(out[m->off_M + i] > 0)) {
                rc = hs_ytree_error(L->y, L->err, where, "%s is not positive definite at "
                                    "the initial state: entry %zu (%s) is %g", what, i + 1,
                                    m->qname[i], out[m->off_M + i]);
                goto done;
            }
    } else {
        size_t z = m->off_M;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j <= i; j++) {
                gsl_matrix_set(M, i, j, out[z]);
                gsl_matrix_set(M, j, i, out[z++]);
            }
        int bad = 0;
        for (size_t i = 0; i < n * n; i++)
            if (!isfinite(M->data[i]))
                bad = 1;
        if (bad || gsl_linalg_cholesky_decomp1(M) != GSL_SUCCESS)
            rc = hs_ytree_error(L->y, L->err, where, "%s is not positive definite at the "
                                "initial state (t=%g)%s", what, m->t0,
                                m->form == HS_FORM_CARTESIAN ? "" :
                                ": the coordinates are singular there");
    }
done:
    free(in);
    free(regs);
    free(out);
    if (M)
        gsl_matrix_free(M);
    return rc;
}

/* ---------- top level ---------- */

static const char *const top_keys[] = {
    "format", "name", "parameters", "coordinates", "define", "mass", "potential",
    "forces", "constraints", "initial", "consistency", "simulate", "outputs",
    "kinetic", "lagrangian", "embedding",
};

static int load_tree(loader *L)
{
    hs_model *m = L->m;
    yaml_node_t *root = hs_ytree_root(L->y);
    if (root->type != YAML_MAPPING_NODE)
        return hs_ytree_error(L->y, L->err, root, "a model file must be a mapping of "
                              "keys (coordinates, mass, initial, ...), found %s",
                              hs_ytree_kind(root));
    if (check_keys(L, root, top_keys, sizeof top_keys / sizeof *top_keys, "the model"))
        return L->err->code;
    yaml_node_t *v;
    if ((v = get(L, root, "format"))) {
        const char *s = hs_ytree_str(v);
        if (!s || strcmp(s, "1") != 0)
            return hs_ytree_error(L->y, L->err, v, "unsupported format '%s' (this holosim "
                                  "reads format 1)", s ? s : hs_ytree_kind(v));
    }
    if ((v = get(L, root, "name"))) {
        if (expect(L, v, YAML_SCALAR_NODE, "'name'"))
            return L->err->code;
        free(m->name);
        m->name = xstrdup(hs_ytree_str(v));
    }
    /* the form */
    yaml_node_t *kin = get_key(L, root, "kinetic"), *lag = get_key(L, root, "lagrangian"),
                *emb = get_key(L, root, "embedding"), *mass = get_key(L, root, "mass");
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

    if (read_coordinates(L, root))
        return L->err->code;
    m->lock = xcalloc(m->n, 1);
    m->q0 = xcalloc(m->n, sizeof *m->q0);
    m->v0 = xcalloc(m->n, sizeof *m->v0);
    if (!m->lock || !m->q0 || !m->v0)
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    if (read_names_map(L, get(L, root, "parameters"), &L->par, &L->npar, "'parameters'") ||
        read_names_map(L, get(L, root, "define"), &L->def, &L->ndef, "'define'"))
        return L->err->code;
    if (emb && read_names_map(L, get(L, root, "embedding"), &L->amb, &L->namb,
                              "'embedding'"))
        return L->err->code;
    if (emb && L->namb == 0)
        return hs_ytree_error(L->y, L->err, get(L, root, "embedding"),
                              "'embedding' is empty: map ambient names to X(t, q)");
    if (check_clashes(L))
        return L->err->code;

    /* symbols: t, q, q', parameters (the VM's input slots) */
    hs_dag *d = m->dag;
    m->sym_t = hs_dag_symbol(d, "t");
    m->sym_q = xcalloc(m->n, sizeof *m->sym_q);
    m->sym_v = xcalloc(m->n, sizeof *m->sym_v);
    m->npar = L->npar;
    m->pname = xcalloc(L->npar, sizeof *m->pname);
    m->pval = xcalloc(L->npar, sizeof *m->pval);
    m->sym_p = xcalloc(L->npar, sizeof *m->sym_p);
    if (!m->sym_q || !m->sym_v || !m->pname || !m->pval || !m->sym_p)
        return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
    for (size_t i = 0; i < m->n; i++)
        m->sym_q[i] = hs_dag_symbol(d, m->qname[i]);
    for (size_t i = 0; i < m->n; i++)
        m->sym_v[i] = hs_dag_symbol(d, m->vname[i]);
    for (size_t i = 0; i < L->npar; i++) {
        m->pname[i] = xstrdup(L->par[i].name);
        m->sym_p[i] = hs_dag_symbol(d, L->par[i].name);
    }
    if (L->ov)
        for (size_t s = 0; s < L->ov->nset; s++)
            if (find_named(L->par, L->npar, L->ov->set_name[s], strlen(L->ov->set_name[s])) < 0) {
                hs_error_set(L->err, HS_EXIT_USAGE, "--set %s: the model has no parameter "
                             "'%s'", L->ov->set_name[s], L->ov->set_name[s]);
                return L->err->code;
            }
    for (size_t i = 0; i < L->npar; i++)
        if (eval_param(L, i))
            return L->err->code;

    /* the embedding: X(t,q) and D X */
    if (emb) {
        m->namb = L->namb;
        m->ambname = xcalloc(L->namb, sizeof *m->ambname);
        m->amb = xcalloc(L->namb, sizeof *m->amb);
        L->ambX = xcalloc(L->namb, sizeof *L->ambX);
        L->ambV = xcalloc(L->namb, sizeof *L->ambV);
        if (!m->ambname || !m->amb || !L->ambX || !L->ambV)
            return hs_error_set(L->err, HS_EXIT_MODEL, "out of memory");
        for (size_t a = 0; a < L->namb; a++) {
            m->ambname[a] = xstrdup(L->amb[a].name);
            const hs_node *X = parse_expr(L, L->amb[a].val, SCOPE_MODEL, "an embedding");
            if (!X)
                return L->err->code;
            if (forbid_velocity(L, X, L->amb[a].val, "an embedding"))
                return L->err->code;
            m->amb[a] = L->ambX[a] = X;
            L->ambV[a] = hs_total_diff(d, X, m->sym_t, m->n, m->sym_q, m->sym_v);
        }
    }
    if (read_settings(L, root) || read_initial(L, root))
        return L->err->code;
    if (build_kernels(L, root) || read_outputs(L, root))
        return L->err->code;
    for (size_t i = 0; i < L->ndef; i++)      /* a define nothing uses is checked too */
        if (L->def[i].state == ST_NONE) {
            L->def[i].state = ST_BUSY;
            L->def[i].expr = parse_expr(L, L->def[i].val, SCOPE_MODEL, "a define");
            L->def[i].state = ST_DONE;
            if (!L->def[i].expr)
                return L->err->code;
        }
    if (L->ov) {
        const hs_settings *o = &L->ov->s;
        hs_settings *s = &m->set;
        if (!isnan(o->t_end)) s->t_end = o->t_end;
        if (!isnan(o->dt)) s->dt = o->dt;
        if (o->method[0]) snprintf(s->method, sizeof s->method, "%s", o->method);
        if (!isnan(o->rtol)) s->rtol = o->rtol;
        if (!isnan(o->atol)) s->atol = o->atol;
        if (!isnan(o->alpha)) s->alpha = o->alpha;
        if (!isnan(o->beta)) s->beta = o->beta;
        if (!isnan(o->tol)) s->tol = o->tol;
        if (L->ov->has_stabilize) s->stabilize = o->stabilize;
        if (L->ov->has_mode) s->mode = o->mode;
        if (L->ov->has_output) s->interpolate = o->interpolate;
    }
    if (L->t_end_node && !(L->ov && !isnan(L->ov->s.t_end)) && !(m->set.t_end > m->t0))
        return hs_ytree_error(L->y, L->err, L->t_end_node, "simulate.t_end (%g) must be "
                              "greater than the initial time (%g)", m->set.t_end, m->t0);
    if (isnan(m->set.alpha))
        m->set.alpha = 10.0;   /* documented defaults: critically damped at 1/alpha */
    if (isnan(m->set.beta))
        m->set.beta = 10.0;
    if (compile(L))
        return L->err->code;
    return check_mass_at_start(L, m->form == HS_FORM_LAGRANGIAN
                                      ? (kin ? get(L, root, "kinetic") : get(L, root, "lagrangian"))
                                      : get(L, root, "mass"));
}

void hs_overrides_init(hs_overrides *o)
{
    memset(o, 0, sizeof *o);
    hs_settings *s = &o->s;
    s->t_end = s->dt = s->rtol = s->atol = s->alpha = s->beta = s->tol = NAN;
    s->method[0] = '\0';
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
        hs_error_set(err, HS_EXIT_MODEL, "out of memory");
        return NULL;
    }
    m->src = si;
    m->name = xstrdup("");
    m->dag = hs_dag_new();
    L->m = m;
    L->si = si;
    L->y = &si->y;
    return m;
}

hs_model *hs_model_load(const char *path, const hs_overrides *ov, hs_error *err)
{
    loader L;
    hs_model *m = start(&L, err, ov);
    if (!m)
        return NULL;
    int rc = m->dag ? hs_ytree_load(L.y, path, err) : hs_error_set(err, HS_EXIT_MODEL, "out of memory");
    m->file = xstrdup(L.y->file ? L.y->file : path);
    return load_common(&L, rc);
}

hs_model *hs_model_load_string(const char *name, const char *text,
                               const hs_overrides *ov, hs_error *err)
{
    loader L;
    hs_model *m = start(&L, err, ov);
    if (!m)
        return NULL;
    m->file = xstrdup(name);
    int rc = m->dag ? hs_ytree_load_string(L.y, m->file, text, strlen(text), err)
                    : hs_error_set(err, HS_EXIT_MODEL, "out of memory");
    return load_common(&L, rc);
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
        free(si->node);
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
    free(m->Q);
    free(m->G);
    free(m->cpos);
    free(m->G_q);
    free(m->G_t);
    free(m->Gdot);
    free(m->gamma);
    free(m->out);
    free(m->amb);
    free(m->Mconst);
    free(m->gq_start);
    free(m->gq_col);
    hs_prog_free(m->prog_dyn);
    hs_prog_free(m->prog_aux);
    hs_prog_free(m->prog_pos);
    hs_dag_free(m->dag);
    free(m);
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

static void print_expr_line(FILE *f, const hs_dag *d, const char *label, const hs_node *e)
{
    fprintf(f, "  %s = ", label);
    hs_fprint(f, d, e);
    fputc('\n', f);
}

void hs_model_print_derivation(const hs_model *m, FILE *f)
{
    static const char *const forms[] = { "Cartesian", "Lagrangian", "embedding" };
    const hs_dag *d = m->dag;
    size_t n = m->n, k = m->k;
    char lab[256];
    fprintf(f, "# %s%s%s form, n = %zu coordinates, k = %zu constraints\n",
            m->name[0] ? m->name : "", m->name[0] ? ": " : "", forms[m->form], n, k);
    fprintf(f, "M (%s):\n", m->form == HS_FORM_CARTESIAN ? "mass matrix" : "metric d2T/dv2");
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++)
            if (!hs_is_num(m->M[i * n + j], 0) || i == j) {
                snprintf(lab, sizeof lab, "M[%s,%s]", m->qname[i], m->qname[j]);
                print_expr_line(f, d, lab, m->M[i * n + j]);
            }
    fprintf(f, "Q (generalized force):\n");
    for (size_t i = 0; i < n; i++) {
        snprintf(lab, sizeof lab, "Q[%s]", m->qname[i]);
        print_expr_line(f, d, lab, m->Q[i]);
    }
    if (m->has_potential) {
        fprintf(f, "U (potential):\n");
        print_expr_line(f, d, "U", m->U);
    }
    for (size_t a = 0; a < m->namb; a++) {
        if (a == 0)
            fprintf(f, "X (embedding):\n");
        print_expr_line(f, d, m->ambname[a], m->amb[a]);
    }
    if (!k)
        return;
    fprintf(f, "G (constraints):\n");
    for (size_t i = 0; i < k; i++)
        print_expr_line(f, d, m->cname[i], m->G[i]);
    fprintf(f, "G_q (Jacobian, non-zero entries):\n");
    for (size_t i = 0; i < k; i++)
        for (size_t j = 0; j < n; j++)
            if (!hs_is_num(m->G_q[i * n + j], 0)) {
                snprintf(lab, sizeof lab, "d%s/d%s", m->cname[i], m->qname[j]);
                print_expr_line(f, d, lab, m->G_q[i * n + j]);
            }
    fprintf(f, "Gdot = G_t + G_q v:\n");
    for (size_t i = 0; i < k; i++)
        print_expr_line(f, d, m->cname[i], m->Gdot[i]);
    fprintf(f, "gamma = D(D G):\n");
    for (size_t i = 0; i < k; i++)
        print_expr_line(f, d, m->cname[i], m->gamma[i]);
}
