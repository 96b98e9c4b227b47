/* Reading a model file's YAML tree into a model description (loader.h):
 * names resolved lazily (parameters and defines in any order, a cycle is
 * an error), every expression parsed with its position in the file. */
#include "loader.h"
#include "../util/vec.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

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

int hs_ld_expect(loader *L, yaml_node_t *n, yaml_node_type_t type, const char *what)
{
    if (n && n->type == type)
        return 0;
    const char *want = type == YAML_MAPPING_NODE ? "a mapping"
                     : type == YAML_SEQUENCE_NODE ? "a list" : "a scalar";
    return hs_ytree_error(L->y, L->err, n, "%s must be %s, found %s%s", what, want,
                          hs_ytree_kind(n), type == YAML_MAPPING_NODE ? " (KEY: VALUE entries, "
                          "or {K: V})" : type == YAML_SEQUENCE_NODE ? " ([a, b], or - items)" : "");
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

/* ---------- flow collections cut at a comma ---------- */

/* '(' minus ')' in a plain scalar (0 for any other node). */
static long paren_balance(const yaml_node_t *n)
{
    if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    long b = 0;
    for (size_t i = 0; i < n->data.scalar.length; i++)
        b += n->data.scalar.value[i] == '(' ? 1 : n->data.scalar.value[i] == ')' ? -1 : 0;
    return b;
}

/* In a flow collection, piece[0] opens more parentheses than it closes and
 * the pieces after it (keys whose value is empty, or items) close them: the
 * text the user meant, joined with ", ". */
static int cut_error(loader *L, yaml_node_t **piece, size_t npiece)
{
    char hint[256];
    size_t len = 0;
    long b = 0;
    for (size_t i = 0; i < npiece && (i == 0 || b > 0); i++) {
        const char *s = hs_ytree_str(piece[i]);
        len += (size_t)snprintf(hint + (len < sizeof hint ? len : sizeof hint - 1),
                                len < sizeof hint ? sizeof hint - len : 1, "%s%s",
                                i ? ", " : "", s ? s : "");
        b += paren_balance(piece[i]);
    }
    if (b != 0 || len >= sizeof hint)
        return 0;                      /* not a cut expression: the parser will tell */
    return hs_ytree_error(L->y, L->err, piece[0], "'%s' is cut at a comma: YAML splits a "
                          "flow collection ({...} or [...]) at every comma; quote the "
                          "expression: \"%s\"", hs_ytree_str(piece[0]), hint);
}

int hs_ld_check_flow_cuts(loader *L, yaml_node_t *root)
{
    (void)root;                        /* every node of the document, once */
    yaml_document_t *doc = &L->y->doc;
    for (yaml_node_t *n = doc->nodes.start; n < doc->nodes.top; n++) {
        yaml_node_t *piece[8];
        if (n->type == YAML_MAPPING_NODE && n->data.mapping.style == YAML_FLOW_MAPPING_STYLE) {
            FOR_PAIRS(n, p) {
                if (paren_balance(NODE(L, p->value)) <= 0)
                    continue;
                size_t np = 0;
                piece[np++] = NODE(L, p->value);
                /* the rest went into keys of empty values */
                for (yaml_node_pair_t *q = p + 1; q < n->data.mapping.pairs.top && np < 8; q++) {
                    const char *v = hs_ytree_str(NODE(L, q->value));
                    if (!v || *v)
                        break;
                    piece[np++] = NODE(L, q->key);
                }
                if (np > 1 && cut_error(L, piece, np))
                    return L->err->code;
            }
        } else if (n->type == YAML_SEQUENCE_NODE &&
                   n->data.sequence.style == YAML_FLOW_SEQUENCE_STYLE) {
            FOR_ITEMS(n, it) {
                if (paren_balance(NODE(L, *it)) <= 0)
                    continue;
                size_t np = 0;
                for (yaml_node_item_t *j = it; j < n->data.sequence.items.top && np < 8; j++)
                    piece[np++] = NODE(L, *j);
                if (np > 1 && cut_error(L, piece, np))
                    return L->err->code;
            }
        }
    }
    return 0;
}

/* ---------- names ---------- */

static const hs_node *lookup(void *ctx, hs_dag *d, const char *s, size_t len,
                             int primed, size_t off, int *status, hs_error *perr)
{
    loader *L = ctx;
    hs_model *m = L->m;
    (void)off;
    *status = HS_RESOLVE_OK;
    long i;
    int coord = -1;                    /* 0: a coordinate, 1: an ambient name */
    if (L->scope >= SCOPE_MODEL) {
        if ((i = hs_ld_find_coord(m, s, len)) >= 0) {
            coord = 0;
            if (primed < 2)
                return hs_sym(d, primed ? m->sym_v[i] : m->sym_q[i]);
        } else if ((i = hs_ld_find_named(L, NAME_AMB, s, len)) >= 0) {
            if (!L->ambX[i]) { /* an embedding that names ambient positions */
                *status = HS_RESOLVE_UNKNOWN;
                return NULL;
            }
            coord = 1;
            if (primed < 2)
                return primed ? L->ambV[i] : L->ambX[i];
        }
    }
    if (coord >= 0) {                  /* x'': what the dynamics computes */
        if (L->scope == SCOPE_OUTPUT)
            return hs_ld_accel(L, (size_t)i, coord);
        *status = HS_RESOLVE_ERROR;
        hs_error_set(perr, HS_EXIT_MODEL, "%.*s'' is an acceleration: only outputs and "
                     "events can read accelerations", (int)len, s);
        return NULL;
    }
    if (primed) {
        *status = HS_RESOLVE_NO_PRIME;
        return NULL;
    }
    if (L->scope >= SCOPE_MODEL && len == 1 && s[0] == 't')
        return hs_sym(d, m->sym_t);
    /* one met before its turn in the dependency order: settled now, mentions first */
    if ((i = hs_ld_find_named(L, NAME_PAR, s, len)) >= 0) {
        if (L->scope == SCOPE_PARAM && L->par[i].state != ST_DONE &&
            hs_ld_settle(L, NAME_PAR, (size_t)i)) {
            *status = HS_RESOLVE_ERROR;
            perr->code = L->err->code;
            return NULL;
        }
        return hs_sym(d, m->sym_p[i]);
    }
    if (L->scope >= SCOPE_MODEL && (i = hs_ld_find_named(L, NAME_DEF, s, len)) >= 0) {
        if (L->opaque)                 /* the define as an unknown of its own (chain.c) */
            return L->opaque(L, (size_t)i);
        named *df = &L->def[i];
        if (df->state != ST_DONE) {
            hs_srcpos saved = hs_dag_pos(d);
            hs_ld_settle(L, NAME_DEF, (size_t)i);
            hs_dag_set_pos(d, saved);
        }
        if (!df->expr) {
            *status = HS_RESOLVE_ERROR;
            perr->code = L->err->code;
            return NULL;
        }
        return df->expr;
    }
    const hs_node *e = L->scope == SCOPE_OUTPUT ? hs_ld_derived(L, s, len) : NULL;
    if (!e && L->err->code) {          /* out of memory */
        *status = HS_RESOLVE_ERROR;
        perr->code = L->err->code;
        return NULL;
    }
    if (!e)
        *status = HS_RESOLVE_UNKNOWN;
    return e;
}

int hs_ld_add_src(loader *L, yaml_node_t *n)
{
    srcinfo *si = L->si;
    if (HS_VEC_RESERVE(si->node, si->cap, si->nsrc + 1))
        return -1;
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
    int cond = L->cond;                /* for this text, not for a define it reads */
    L->cond = 0;
    if (L->err->code)
        return NULL;
    if (!n || n->type != YAML_SCALAR_NODE) {
        hs_ytree_error(L->y, L->err, n, "%s must be an expression, found %s", what,
                       hs_ytree_kind(n));
        return NULL;
    }
    if (L->depth >= MAX_NEST) {
        hs_ytree_error(L->y, L->err, n, "%s nested too deeply: more than %d definitions "
                       "met inside one another", what, MAX_NEST);
        return NULL;
    }
    int saved_scope = L->scope;
    L->scope = scope;
    int src = hs_ld_add_src(L, n);
    if (src < 0) {
        hs_error_nomem(L->err);
        return NULL;
    }
    hs_resolver r = { .lookup = lookup, .ctx = L, .locate = locate };
    hs_error pe;
    hs_error_init(&pe);
    yaml_node_t *saved_cur = L->cur;
    L->cur = n;
    L->depth++;
    const hs_node *e = (cond ? hs_parse_cond : hs_parse)(L->m->dag,
                                                        (const char *)n->data.scalar.value,
                                                        n->data.scalar.length, src, &r, &pe);
    L->depth--;
    L->cur = saved_cur;
    L->scope = saved_scope;
    /* an error inside a define or parameter; out of memory stays that */
    if (L->err->code || (!e && pe.code == HS_EXIT_NOMEM && hs_error_nomem(L->err)))
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

const hs_node *hs_ld_parse_text(loader *L, const char *text, int scope, hs_error *pe)
{
    int saved_scope = L->scope;
    L->scope = scope;
    hs_resolver r = { .lookup = lookup, .ctx = L, .locate = NULL };
    hs_error_init(pe);
    int cond = L->cond;
    L->cond = 0;
    const hs_node *e = (cond ? hs_parse_cond : hs_parse)(L->m->dag, text, strlen(text), -1,
                                                        &r, pe);
    L->scope = saved_scope;
    if (!e && pe->code == HS_EXIT_NOMEM)
        hs_error_nomem(L->err);
    if (!e && !L->err->code) {
        char hint[200];
        hs_ld_name_hint(L, pe, scope, text, hint, sizeof hint);
        hs_error_append(pe, "%s", hint);
    }
    return L->err->code || hs_ld_dag_check(L) ? NULL : e;
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
    if (de->code == HS_EXIT_NOMEM)
        return hs_error_nomem(L->err);
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
    hs_resolver r = { .lookup = lookup, .ctx = L, .locate = NULL };
    hs_error pe;
    hs_error_init(&pe);
    const hs_node *e = hs_parse(L->m->dag, text, strlen(text), -1, &r, &pe);
    L->scope = saved_scope;
    if (L->err->code)       /* an error in a parameter it refers to */
        return NULL;
    if (!e && pe.code == HS_EXIT_NOMEM && hs_error_nomem(L->err))
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

int hs_ld_eval_option(loader *L, const char *option, const char *text, int sign, double *out)
{
    int saved_scope = L->scope;
    L->scope = SCOPE_PARAM;
    hs_resolver r = { .lookup = lookup, .ctx = L, .locate = NULL };
    hs_error pe;
    hs_error_init(&pe);
    const hs_node *e = hs_parse(L->m->dag, text, strlen(text), -1, &r, &pe);
    L->scope = saved_scope;
    if (L->err->code)
        return L->err->code;
    if (!e && pe.code == HS_EXIT_NOMEM)
        return hs_error_nomem(L->err);
    char opt[600];
    snprintf(opt, sizeof opt, "%s %s", option, text);
    if (!e) {
        char hint[200];
        hs_ld_name_hint(L, &pe, SCOPE_PARAM, text, hint, sizeof hint);
        size_t off = pe.offset >= 0 ? (size_t)pe.offset : 0;
        hs_error_set(L->err, HS_EXIT_USAGE, "%s: %s%s", opt, pe.msg, hint);
        hs_error_locate(L->err, opt, strlen(opt), strlen(option) + 1 + off);
        L->err->line = 0;   /* not a file position: the caret alone */
        return L->err->code;
    }
    if (hs_ld_dag_check(L))
        return L->err->code;
    if (hs_eval_node(e, L->pin, out))
        return hs_error_nomem(L->err);
    if (!isfinite(*out) || (sign > 0 && !(*out > 0)) || (sign == 0 && *out < 0))
        return hs_error_set(L->err, HS_EXIT_USAGE, "%s: the value is %g; %s wants a %s "
                            "number", opt, *out, option, sign > 0 ? "positive"
                            : sign == 0 ? "non-negative" : "finite");
    return 0;
}

/* Parameter i, every parameter it mentions already evaluated (names.c
 * settles them in dependency order): its value from the last --set of its
 * name or from the file. */
int hs_ld_eval_param(loader *L, size_t i)
{
    named *p = &L->par[i];
    hs_model *m = L->m;
    long ov = p->ov;
    const char *text = ov >= 0 && L->ov->set_text ? L->ov->set_text[ov] : NULL;
    m->par_order[m->npar_done++] = i;        /* the order of evaluation */
    if (ov >= 0 && !text) {
        m->pval[i] = L->pin[m->sym_p[i]] = L->ov->set_value[ov];
        p->state = ST_DONE;
        return 0;
    }
    const hs_node *e = text ? parse_override(L, (size_t)ov, p->name, text)
                            : hs_ld_parse(L, p->val, SCOPE_PARAM, "a parameter");
    if (!e || hs_ld_dag_check(L))
        return L->err->code ? L->err->code : HS_EXIT_MODEL;
    double v;
    if (hs_eval_node(e, L->pin, &v))
        return hs_error_nomem(L->err);
    if (!isfinite(v) && text) {
        hs_error_set(L->err, HS_EXIT_USAGE, "parameter '%s' evaluates to %g", p->name, v);
        if (!override_placed(L, (size_t)ov, 0))
            snprintf(L->err->msg, sizeof L->err->msg, "--set %s=%s: the value is %g",
                     p->name, text, v);
        return L->err->code;
    }
    if (!isfinite(v))
        return hs_ytree_error(L->y, L->err, p->val, "parameter '%s' evaluates to %g", p->name, v);
    m->pval[i] = L->pin[m->sym_p[i]] = v;
    m->par_expr[i] = e;
    p->state = ST_DONE;
    return 0;
}

/* Define i, every define it mentions already parsed. */
int hs_ld_parse_define(loader *L, size_t i)
{
    named *df = &L->def[i];
    df->state = ST_BUSY;
    df->expr = hs_ld_parse(L, df->val, SCOPE_MODEL, "a define");
    df->state = ST_DONE;
    return df->expr ? 0 : L->err->code ? L->err->code : HS_EXIT_MODEL;
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
                              "holosim keeps n x n arrays)", n, MAX_COORDS);
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
    if (!c)
        return 0;
    m->G = xcalloc(k, sizeof *m->G);
    m->cpos = xcalloc(k, sizeof *m->cpos);
    if (!m->G || !m->cpos)
        return hs_error_nomem(L->err);
    for (size_t i = 0; i < k; i++) {
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

/* Every parameter's value, after checking that each --set names one (the
 * last --set of a name wins). */
int hs_ld_eval_params(loader *L)
{
    hs_model *m = L->m;
    size_t ns = (size_t)hs_dag_nsymbols(m->dag);
    L->pin = xcalloc(ns, sizeof *L->pin);
    if (!L->pin)
        return hs_error_nomem(L->err);
    for (size_t s = 0; s < ns; s++)
        L->pin[s] = NAN;
    for (size_t s = 0; L->ov && s < L->ov->nset; s++) {
        const char *nm = L->ov->set_name[s];
        long i = hs_ld_find_named(L, NAME_PAR, nm, strlen(nm));
        if (i >= 0) {
            L->par[i].ov = (long)s;         /* the last --set of a name wins */
            continue;
        }
        char hint[160] = "";
        const char *near = hs_ld_nearest_param(L, nm);
        size_t qi;
        const hs_quantity *q = hs_ld_quantity(L, nm, strlen(nm), &qi);
        if (q && q->per == HS_PER_MODEL)
            snprintf(hint, sizeof hint, " ('%s' is %s, not a parameter)", nm, q->what);
        else if (q)
            snprintf(hint, sizeof hint, " ('%s' is %s '%s', not a parameter)", nm,
                     q->what, hs_quantity_base(m, q, qi));
        else if (near)
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
        if (hs_ld_settle(L, NAME_PAR, i))
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
