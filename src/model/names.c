/* Names of a model file (loader.h): a small open-addressing hash table, so
 * that loading stays linear in the number of names; the clash checks (names
 * unique across coordinates, parameters, defines and ambient names; CSV
 * columns unique); and parameters and defines settled in dependency order
 * with an explicit stack, so a chain of 100,000 `p0: p1, p1: p2, ...` costs
 * no stack depth. */
#include "loader.h"

#include <stdint.h>
#include <string.h>

#include "../util/suggest.h"

/* ---------- the table ---------- */

static uint32_t hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u;           /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static size_t probe(const ld_tab *t, const char *s, size_t len)
{
    size_t mask = t->cap - 1, i = hash(s, len) & mask;
    while (t->slot[i].s &&
           !(t->slot[i].len == len && memcmp(t->slot[i].s, s, len) == 0))
        i = (i + 1) & mask;
    return i;
}

long hs_ld_tab_get(const ld_tab *t, const char *s, size_t len)
{
    if (!t->cap)
        return -1;
    size_t i = probe(t, s, len);
    return t->slot[i].s ? t->slot[i].val : -1;
}

int hs_ld_tab_put(ld_tab *t, const char *s, size_t len, long val, long *old)
{
    if (2 * (t->n + 1) > t->cap) {             /* at most half full */
        ld_tab g = { NULL, t->cap ? 2 * t->cap : 16, 0 };
        g.slot = calloc(g.cap, sizeof *g.slot);
        if (!g.slot)
            return -1;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slot[i].s)
                g.slot[probe(&g, t->slot[i].s, t->slot[i].len)] = t->slot[i];
        g.n = t->n;
        free(t->slot);
        *t = g;
    }
    size_t i = probe(t, s, len);
    if (t->slot[i].s) {
        if (old)
            *old = t->slot[i].val;
        return 1;
    }
    t->slot[i] = (ld_slot){ s, len, val };
    t->n++;
    return 0;
}

void hs_ld_tab_free(ld_tab *t)
{
    free(t->slot);
    memset(t, 0, sizeof *t);
}

/* ---------- lookups ---------- */

long hs_ld_find_coord(const hs_model *m, const char *s, size_t len)
{
    const srcinfo *si = m->src;
    return hs_ld_tab_get(&si->coords, s, len);
}

long hs_ld_find_named(const loader *L, int kind, const char *s, size_t len)
{
    long v = hs_ld_tab_get(&L->names, s, len);
    return v >= 0 && v % NAME_KINDS == kind ? v / NAME_KINDS : -1;
}

/* Names must be unique across coordinates, parameters, defines, ambient
 * names: each entered into one table, the first clash reported. */
int hs_ld_check_clashes(loader *L)
{
    static const char *const what[NAME_KINDS] = { "parameter", "define", "ambient name" };
    named *a[NAME_KINDS] = { L->par, L->def, L->amb };
    size_t n[NAME_KINDS] = { L->npar, L->ndef, L->namb };
    for (int g = 0; g < NAME_KINDS; g++)
        for (size_t i = 0; i < n[g]; i++) {
            const char *s = a[g][i].name;
            if (hs_ld_find_coord(L->m, s, strlen(s)) >= 0)
                return hs_ytree_error(L->y, L->err, a[g][i].key,
                                      "%s '%s' has the name of a coordinate", what[g], s);
            long old;
            int r = hs_ld_tab_put(&L->names, s, strlen(s), (long)i * NAME_KINDS + g, &old);
            if (r < 0)
                return hs_error_nomem(L->err);
            if (r > 0) {
                int og = (int)(old % NAME_KINDS);
                return hs_ytree_error(L->y, L->err, a[g][i].key,
                                      "%s '%s' clashes with %s '%s' at line %d", what[g], s,
                                      what[og], s,
                                      (int)a[og][old / NAME_KINDS].key->start_mark.line + 1);
            }
        }
    return 0;
}

/* A mapping's keys: scalars, unique, among allowed[] when given.  A table
 * for the duplicates (and for a long allowed[], e.g. the coordinates), so a
 * mapping of 100,000 keys is checked in linear time. */
int hs_ld_check_keys(loader *L, yaml_node_t *map, const char *const *allowed,
                     size_t nallowed, const char *where)
{
    ld_tab seen = { 0 }, ok = { 0 };
    int rc = 0;
    for (size_t i = 0; i < nallowed && !rc; i++)
        if (hs_ld_tab_put(&ok, allowed[i], strlen(allowed[i]), (long)i, NULL) < 0)
            rc = hs_error_nomem(L->err);
    FOR_PAIRS(map, p) {
        if (rc)
            break;
        yaml_node_t *k = NODE(L, p->key);
        const char *ks = hs_ytree_str(k);
        if (!ks) {
            rc = hs_ytree_error(L->y, L->err, k, "keys in %s must be scalars", where);
            break;
        }
        int r = hs_ld_tab_put(&seen, ks, strlen(ks), 0, NULL);
        if (r) {
            rc = r < 0 ? hs_error_nomem(L->err)
                       : hs_ytree_error(L->y, L->err, k, "duplicate key '%s' in %s", ks, where);
            break;
        }
        if (!allowed || hs_ld_tab_get(&ok, ks, strlen(ks)) >= 0)
            continue;
        const char *near = hs_nearest(ks, allowed, nallowed);
        if (near)
            rc = hs_ytree_error(L->y, L->err, k, "unknown key '%s' in %s (did you mean '%s'?)",
                                ks, where, near);
        else
            rc = hs_ytree_error(L->y, L->err, k, "unknown key '%s' in %s", ks, where);
    }
    hs_ld_tab_free(&seen);
    hs_ld_tab_free(&ok);
    return rc;
}

/* ---------- columns ---------- */

/* The CSV columns a model's names make (holosim(1), OUTPUT; io/columns.c
 * builds them): t, E, T, U, H, P_R, power_residual, W_R, W_nc, W_t,
 * energy_balance, event (--events); per coordinate q: q (and q', q'', R_q); per constraint c:
 * lambda_c, G_c, Gdot_c; per output and ambient name: the name.  Two equal
 * names would be two equal headers: refused at the second, naming the
 * first. */
static const char *const builtin_columns[] = {
    "t", "E", "T", "U", "H", "P_R", "power_residual", "W_R", "W_nc", "W_t", "energy_balance",
    "event",                   /* the first column of the events file (--events) */
};

typedef struct colcheck {
    loader *L;
    ld_tab tab;
    char **str;                 /* [n] the column names (owned) */
    yaml_node_t **node;         /* [n] where each comes from (NULL: built in) */
    const char **kind, **name;  /* [n] what makes it: "coordinate", "x" */
    size_t n, cap;
} colcheck;

static int col_grow(colcheck *C)
{
    size_t cap = C->cap ? 2 * C->cap : 64;
    char **s = realloc(C->str, cap * sizeof *s);
    if (s)
        C->str = s;
    yaml_node_t **nd = realloc(C->node, cap * sizeof *nd);
    if (nd)
        C->node = nd;
    const char **k = realloc(C->kind, cap * sizeof *k);
    if (k)
        C->kind = k;
    const char **nm = realloc(C->name, cap * sizeof *nm);
    if (nm)
        C->name = nm;
    if (!s || !nd || !k || !nm)
        return hs_error_nomem(C->L->err);
    C->cap = cap;
    return 0;
}

/* The column prefix+name that `kind` `name` (at node) makes. */
static int col_add(colcheck *C, const char *prefix, const char *name, yaml_node_t *node,
                   const char *kind)
{
    loader *L = C->L;
    if (C->n == C->cap && col_grow(C))
        return L->err->code;
    size_t len = strlen(prefix) + strlen(name);
    char *col = malloc(len + 1);
    if (!col)
        return hs_error_nomem(L->err);
    snprintf(col, len + 1, "%s%s", prefix, name);
    size_t i = C->n++;
    C->str[i] = col;
    C->node[i] = node;
    C->kind[i] = kind;
    C->name[i] = name;
    long old;
    int r = hs_ld_tab_put(&C->tab, col, len, (long)i, &old);
    if (r < 0)
        return hs_error_nomem(L->err);
    if (r == 0)
        return 0;
    yaml_node_t *on = C->node[old];
    if (!on)
        return hs_ytree_error(L->y, L->err, node, "the column '%s' of %s '%s' would be a "
                              "second column '%s' beside the built-in one: rename the %s",
                              col, kind, name, col, kind);
    return hs_ytree_error(L->y, L->err, node, "the column '%s' of %s '%s' is also the column "
                          "of %s '%s' (line %d, column %d): two columns of one name; rename "
                          "one of them", col, kind, name, C->kind[old], C->name[old],
                          (int)on->start_mark.line + 1, (int)on->start_mark.column + 1);
}

/* Every column name of the model unique (after the outputs are read). */
int hs_ld_check_columns(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    colcheck C = { L, { 0 }, NULL, NULL, NULL, NULL, 0, 0 };
    int rc = 0;
    for (size_t i = 0; !rc && i < sizeof builtin_columns / sizeof *builtin_columns; i++)
        rc = col_add(&C, "", builtin_columns[i], NULL, "built-in");
    yaml_node_t *cs = hs_ld_get(L, root, "coordinates");
    for (size_t i = 0; !rc && i < m->n; i++) {
        yaml_node_t *e = NODE(L, cs->data.sequence.items.start[i]);
        rc = col_add(&C, "", m->qname[i], e, "coordinate");
        if (!rc)
            rc = col_add(&C, "R_", m->qname[i], e, "coordinate");
    }
    yaml_node_t *c = hs_ld_get(L, root, "constraints");
    for (size_t i = 0; !rc && i < m->k; i++) {
        yaml_node_t *at = c->type == YAML_MAPPING_NODE
                              ? NODE(L, c->data.mapping.pairs.start[i].key)
                              : NODE(L, c->data.sequence.items.start[i]);
        static const char *const pre[] = { "lambda_", "G_", "Gdot_" };
        for (size_t j = 0; !rc && j < 3; j++)
            rc = col_add(&C, pre[j], m->cname[i], at, "constraint");
    }
    yaml_node_t *o = hs_ld_get(L, root, "outputs");
    for (size_t i = 0; !rc && i < m->nout; i++)
        rc = col_add(&C, "", m->outname[i], NODE(L, o->data.mapping.pairs.start[i].key),
                     "output");
    for (size_t i = 0; !rc && i < L->namb; i++)
        rc = col_add(&C, "", L->amb[i].name, L->amb[i].key, "ambient name");
    for (size_t i = 0; i < C.n; i++)
        free(C.str[i]);
    free(C.str);
    free(C.node);
    free(C.kind);
    free(C.name);
    hs_ld_tab_free(&C.tab);
    return rc;
}

/* ---------- parameters and defines in dependency order ---------- */

/* The entries of `kind` a text mentions: every identifier the expression
 * parser would read as a name (not a number's letters, not a function
 * call, not a primed name, which never names a parameter or define).  An
 * over-approximation would only order more, a miss would fall back to the
 * (depth-bounded) lazy path in read.c's lookup. */
static int mentions(loader *L, int kind, const char *s, size_t len, size_t **dep,
                    size_t *ndep, size_t *cap)
{
    *ndep = 0;
    size_t i = 0;
#define ALNUM(c) (((c) >= 'a' && (c) <= 'z') || ((c) >= 'A' && (c) <= 'Z') || \
                  ((c) >= '0' && (c) <= '9') || (c) == '_')
    while (i < len) {
        char c = s[i];
        if ((c >= '0' && c <= '9') || (c == '.' && i + 1 < len && s[i + 1] >= '0' &&
                                       s[i + 1] <= '9')) {
            while (i < len && (ALNUM(s[i]) || s[i] == '.' ||
                               ((s[i] == '+' || s[i] == '-') && (s[i - 1] == 'e' ||
                                                                 s[i - 1] == 'E'))))
                i++;
            continue;
        }
        if (!ALNUM(c)) {
            i++;
            continue;
        }
        size_t b = i;
        while (i < len && ALNUM(s[i]))
            i++;
        size_t j = i;
        while (j < len && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r'))
            j++;
        if ((i < len && s[i] == '\'') || (j < len && s[j] == '('))
            continue;
        long e = hs_ld_find_named(L, kind, s + b, i - b);
        if (e < 0)
            continue;
        if (*ndep == *cap) {
            size_t nc = *cap ? 2 * *cap : 16;
            size_t *p = realloc(*dep, nc * sizeof *p);
            if (!p)
                return hs_error_nomem(L->err);
            *dep = p;
            *cap = nc;
        }
        (*dep)[(*ndep)++] = (size_t)e;
    }
#undef ALNUM
    return 0;
}

/* The text a parameter's value comes from: the last --set of its name
 * (NULL text: a plain number) or the file's scalar. */
static const char *entry_text(loader *L, int kind, size_t i, size_t *len)
{
    named *a = kind == NAME_PAR ? L->par : L->def;
    *len = 0;
    if (kind == NAME_PAR && a[i].ov >= 0) {
        const char *t = L->ov->set_text ? L->ov->set_text[a[i].ov] : NULL;
        *len = t ? strlen(t) : 0;
        return t;
    }
    const char *t = hs_ytree_str(a[i].val);
    *len = t ? a[i].val->data.scalar.length : 0;
    return t;
}

typedef struct frame {
    size_t idx, next, ndep, cap;
    size_t *dep;
} frame;

/* Settle entry i of `kind` (NAME_PAR: evaluate, NAME_DEF: parse) after the
 * entries it mentions, depth first with an explicit stack; a mention of an
 * entry still on the stack is a cycle, reported at that entry. */
int hs_ld_settle(loader *L, int kind, size_t i)
{
    named *a = kind == NAME_PAR ? L->par : L->def;
    size_t n = kind == NAME_PAR ? L->npar : L->ndef;
    if (a[i].state == ST_DONE)
        return kind == NAME_DEF && !a[i].expr ? L->err->code : 0;
    if (a[i].state == ST_BUSY)          /* met again while its turn is under way */
        return hs_ytree_error(L->y, L->err, a[i].key, kind == NAME_PAR
                              ? "parameter '%s' depends on itself (a cycle among parameters)"
                              : "define '%s' refers to itself (a cycle among defines)",
                              a[i].name);
    frame *st = malloc(sizeof *st * (n < 16 ? n : 16));
    size_t top = 0, cap = n < 16 ? n : 16;
    int rc = st ? 0 : hs_error_nomem(L->err);
    size_t len;
    const char *txt;
    if (!rc) {
        st[top++] = (frame){ i, 0, 0, 0, NULL };
        a[i].state = ST_BUSY;
        txt = entry_text(L, kind, i, &len);
        rc = txt ? mentions(L, kind, txt, len, &st[0].dep, &st[0].ndep, &st[0].cap) : 0;
    }
    while (!rc && top) {
        frame *f = &st[top - 1];
        if (f->next < f->ndep) {
            size_t j = f->dep[f->next++];
            if (a[j].state == ST_DONE)
                continue;
            if (a[j].state == ST_BUSY) {
                rc = hs_ytree_error(L->y, L->err, a[j].key, kind == NAME_PAR
                                    ? "parameter '%s' depends on itself (a cycle among "
                                      "parameters)"
                                    : "define '%s' refers to itself (a cycle among defines)",
                                    a[j].name);
                break;
            }
            if (top == cap) {
                frame *ns = realloc(st, 2 * cap * sizeof *ns);
                if (!ns) {
                    rc = hs_error_nomem(L->err);
                    break;
                }
                st = ns;
                cap *= 2;
            }
            st[top++] = (frame){ j, 0, 0, 0, NULL };
            a[j].state = ST_BUSY;
            txt = entry_text(L, kind, j, &len);
            if (txt)
                rc = mentions(L, kind, txt, len, &st[top - 1].dep, &st[top - 1].ndep,
                              &st[top - 1].cap);
            continue;
        }
        /* every entry it mentions is settled: its own turn */
        size_t k = f->idx;
        free(f->dep);
        top--;
        rc = kind == NAME_PAR ? hs_ld_eval_param(L, k) : hs_ld_parse_define(L, k);
    }
    while (top)
        free(st[--top].dep);
    free(st);
    return rc;
}
