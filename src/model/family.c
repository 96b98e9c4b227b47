/* Indexed families (family.h): a mapping key or list item that holds a
 * range `name[i=a..b]` is repeated for each i (bounds: expressions of
 * parameters and outer indices), everything under it rewritten with i
 * bound; `x[e]` in any expression is the name x_E (E the value of e), checked
 * against the declared ranges once the whole file is expanded;
 * `sum(i=a..b, body)` and `prod(...)` are written out; a list parameter
 * `L: [..]` is L_1, L_2, ...; `mass` may be a mapping of entries
 * (`x[i=1..N]: m`, `"x[i=2..N], x[i-1]": m/6`) that adds up into the
 * format-1 matrix. The result is plain format 1: the loader reads it as if
 * written out by hand. */
#include "family.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define NODEP(F, id) (&(F)->doc->nodes.start[(id) - 1])

int hs_fm_oom(fam *F)
{
    return hs_error_set(F->err, HS_EXIT_MODEL, "out of memory");
}

int hs_fm_tmpl(fam *F, int id)
{
    hs_ytree *y = F->y;
    if (y->norig && id > y->norig && (size_t)(id - y->norig - 1) < y->norigin)
        return y->origin[id - y->norig - 1].tmpl;
    return id;
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* The origin of node id (just added): template tmpl, segments seg0..nseg
 * (none: the identity), the current note. */
static int add_origin(fam *F, int id, int tmpl, int identity)
{
    hs_ytree *y = F->y;
    if ((size_t)(id - y->norig) != y->norigin + 1 ||
        grow((void **)&y->origin, &F->capo, y->norigin + 1, sizeof *y->origin))
        return hs_fm_oom(F);
    tmpl = hs_fm_tmpl(F, tmpl);
    y->origin[y->norigin++] = (hs_ytree_origin){
        tmpl, F->note, identity ? 0 : F->seg0, identity ? 0 : y->nseg - F->seg0 };
    yaml_node_t *n = NODEP(F, id), *t = NODEP(F, tmpl);
    n->start_mark = t->start_mark;
    n->end_mark = t->end_mark;
    return 0;
}

int hs_fm_add_scalar(fam *F, const char *s, size_t len, int tmpl, int identity)
{
    int id = yaml_document_add_scalar(F->doc, NULL, (yaml_char_t *)(len ? s : ""),
                                      (int)len, YAML_PLAIN_SCALAR_STYLE);
    if (!id || add_origin(F, id, tmpl, identity))
        return hs_fm_oom(F), 0;
    return id;
}

int hs_fm_add_seq(fam *F, int tmpl)
{
    int id = yaml_document_add_sequence(F->doc, NULL, YAML_BLOCK_SEQUENCE_STYLE);
    if (!id || add_origin(F, id, tmpl, 1))
        return hs_fm_oom(F), 0;
    return id;
}

int hs_fm_add_map(fam *F, int tmpl)
{
    int id = yaml_document_add_mapping(F->doc, NULL, YAML_BLOCK_MAPPING_STYLE);
    if (!id || add_origin(F, id, tmpl, 1))
        return hs_fm_oom(F), 0;
    return id;
}

int hs_fm_append_item(fam *F, int seq, int item)
{
    return yaml_document_append_sequence_item(F->doc, seq, item) ? 0 : hs_fm_oom(F);
}

int hs_fm_append_pair(fam *F, int map, int key, int val)
{
    return yaml_document_append_mapping_pair(F->doc, map, key, val) ? 0 : hs_fm_oom(F);
}

int hs_fm_get(fam *F, int map, const char *key, int *keyid)
{
    yaml_node_t *m = NODEP(F, map);
    if (m->type != YAML_MAPPING_NODE)
        return 0;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        const char *ks = hs_ytree_str(NODEP(F, p->key));
        if (ks && strcmp(ks, key) == 0) {
            if (keyid)
                *keyid = p->key;
            return p->value;
        }
    }
    return 0;
}

/* ---------- text of the node being built ---------- */

/* Append n bytes to the value being built: copied from template offset
 * src (the map follows them byte for byte), or made there (mapped to src). */
static int put(fam *F, const char *s, size_t n, size_t src, int copied)
{
    hs_ytree *y = F->y;
    if (grow((void **)&F->out, &F->ocap, F->olen + n + 1, 1))
        return hs_fm_oom(F);
    hs_ytree_seg *last = y->nseg > F->seg0 ? &y->seg[y->nseg - 1] : NULL;
    int extend = last && (copied ? last->len && last->out + last->len == F->olen &&
                                       last->src + last->len == src
                                 : !last->len && last->src == src);
    if (!extend) {
        if (grow((void **)&y->seg, &F->caps, y->nseg + 1, sizeof *y->seg))
            return hs_fm_oom(F);
        y->seg[y->nseg++] = (hs_ytree_seg){ F->olen, src, 0 };
        last = &y->seg[y->nseg - 1];
    }
    if (copied)
        last->len += n;
    memcpy(F->out + F->olen, s, n);
    F->olen += n;
    F->out[F->olen] = '\0';
    return 0;
}

static char *own(fam *F, const char *s, size_t len)
{
    if (grow((void **)&F->str, &F->capstr, F->nstr + 1, sizeof *F->str))
        return NULL;
    char *p = malloc(len + 1);
    if (!p)
        return NULL;
    memcpy(p, s, len);
    p[len] = '\0';
    F->str[F->nstr++] = p;
    return p;
}

/* ---------- numbers: parameters and index arithmetic ---------- */

static int is_id0(int c) { return isalpha(c) || c == '_'; }
static int is_id(int c) { return isalnum(c) || c == '_'; }

/* v in decimal into b (at least 21 bytes), without printf: the expansion
 * writes one per member. */
static size_t fmt_long(char *b, long v)
{
    char t[24];
    size_t n = 0, k = 0;
    unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
    do
        t[n++] = (char)('0' + u % 10);
    while ((u /= 10) > 0);
    if (v < 0)
        b[k++] = '-';
    while (n > 0)
        b[k++] = t[--n];
    b[k] = '\0';
    return k;
}

static long env_get(fam *F, const char *s, size_t len, int *found);

static double param_value(fam *F, long i, int *ok);

typedef struct evctx {
    fam *F;
    int params_only;
} evctx;

static const hs_node *ev_lookup(void *ctx, hs_dag *d, const char *s, size_t len, int primed,
                                size_t off, int *status, hs_error *perr)
{
    evctx *c = ctx;
    fam *F = c->F;
    (void)off;
    *status = HS_RESOLVE_OK;
    if (primed) {
        *status = HS_RESOLVE_NO_PRIME;
        return NULL;
    }
    if (!c->params_only)
        for (int k = F->nenv; k-- > 0;)
            if (F->env[k].len == len && memcmp(F->env[k].name, s, len) == 0)
                return hs_num(d, (double)F->env[k].val);
    long i = hs_ld_tab_get(&F->ptab, s, len);
    if (i >= 0) {
        int ok = 1;
        double v = param_value(F, i, &ok);
        if (!ok) {
            *status = HS_RESOLVE_ERROR;
            perr->code = F->err->code ? F->err->code : HS_EXIT_MODEL;
            return NULL;
        }
        if (!c->params_only)
            F->pused[i] = 1;
        return hs_num(d, v);
    }
    *status = HS_RESOLVE_UNKNOWN;
    return NULL;
}

/* Evaluate text[0..len) (a parameter, an override, a bound, an index). */
static int eval_text(fam *F, const char *text, size_t len, int params_only, double *v,
                     hs_error *pe)
{
    if (!F->dag && !(F->dag = hs_dag_new()))
        return hs_fm_oom(F);
    evctx c = { F, params_only };
    hs_resolver r = { ev_lookup, &c, NULL };
    hs_error_init(pe);
    const hs_node *e = hs_parse(F->dag, text, len, -1, &r, pe);
    if (!e)
        return pe->code ? pe->code : HS_EXIT_MODEL;
    *v = hs_eval_tree(e, NULL);
    return 0;
}

static double param_value(fam *F, long i, int *ok)
{
    if (F->pstate[i] == 2)
        return F->pval[i];
    yaml_node_t *map = NODEP(F, F->params);
    yaml_node_pair_t *p = map->data.mapping.pairs.start + i;
    yaml_node_t *key = NODEP(F, p->key), *val = NODEP(F, p->value);
    const char *name = hs_ytree_str(key);
    if (F->pstate[i] == 1) {
        *ok = 0;
        hs_ytree_error(F->y, F->err, key, "parameter '%s' depends on itself", name);
        return NAN;
    }
    F->pstate[i] = 1;
    const hs_overrides *ov = F->L->ov;
    long s = -1;
    for (size_t k = 0; ov && k < ov->nset; k++)
        if (strcmp(ov->set_name[k], name) == 0)
            s = (long)k;
    double v = NAN;
    hs_error pe;
    if (s >= 0 && !(ov->set_text && ov->set_text[s])) {
        v = ov->set_value[s];
    } else if (s >= 0) {
        const char *text = ov->set_text[s];
        if (eval_text(F, text, strlen(text), 1, &v, &pe)) {
            *ok = 0;
            if (!F->err->code)
                hs_error_set(F->err, HS_EXIT_USAGE, "--set %s=%s: %s", name, text, pe.msg);
            return NAN;
        }
    } else if (val->type != YAML_SCALAR_NODE) {
        *ok = 0;
        hs_ytree_error(F->y, F->err, key, "parameter '%s' is a list: a range bound or an "
                       "index needs one number (write %s[k])", name, name);
        return NAN;
    } else if (eval_text(F, (const char *)val->data.scalar.value, val->data.scalar.length, 1,
                         &v, &pe)) {
        *ok = 0;
        if (!F->err->code)
            hs_ytree_error_in(F->y, F->err, val, pe.offset > 0 ? (size_t)pe.offset : 0,
                              "%s", pe.msg);
        return NAN;
    }
    F->pstate[i] = 2;
    F->pval[i] = v;
    return v;
}

/* The integer value of text t[a..b) of template node tmpl (an index or a
 * bound): the index variables bound now and the parameters. */
static int eval_index(fam *F, int tmpl, const char *t, size_t a, size_t b, long *out)
{
    while (a < b && isspace((unsigned char)t[a]))
        a++;
    while (b > a && isspace((unsigned char)t[b - 1]))
        b--;
    if (a == b)
        return hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), a, "an index is missing");
    size_t j = a;
    while (j < b && isdigit((unsigned char)t[j]))
        j++;
    if (j == b && b - a < 10) {            /* the common cases without parsing: */
        *out = strtol(t + a, NULL, 10);    /* 3, i, i - 1, i + 1 */
        return 0;
    }
    if (is_id0((unsigned char)t[a])) {
        j = a;
        while (j < b && is_id((unsigned char)t[j]))
            j++;
        int found;
        long v = env_get(F, t + a, j - a, &found);
        size_t k = j;
        while (k < b && t[k] == ' ')
            k++;
        if (found && k == b) {
            *out = v;
            return 0;
        }
        if (found && (t[k] == '+' || t[k] == '-')) {
            size_t d = k + 1;
            while (d < b && t[d] == ' ')
                d++;
            size_t e = d;
            while (e < b && isdigit((unsigned char)t[e]))
                e++;
            if (e == b && e > d && e - d < 10) {
                long c = strtol(t + d, NULL, 10);
                v += t[k] == '+' ? c : -c;
                if (v >= 0) {
                    *out = v;
                    return 0;
                }
            }
        }
    }
    double v;
    hs_error pe;
    if (eval_text(F, t + a, b - a, 0, &v, &pe)) {
        if (F->err->code)
            return F->err->code;
        return hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl),
                                 a + (pe.offset > 0 ? (size_t)pe.offset : 0),
                                 "in an index: %s", pe.msg);
    }
    if (!isfinite(v) || fabs(v - nearbyint(v)) > 1e-9 || v < 0 || v > 1e9)
        return hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), a, "the index '%.*s' is %.17g; "
                                 "indices are whole numbers from 0 to 1e9", (int)(b - a),
                                 t + a, v);
    *out = (long)nearbyint(v);
    return 0;
}

/* ---------- names ---------- */

/* Base name -> its entry (added when new). */
static long base_of(fam *F, const char *s, size_t len, int ndim)
{
    long b = hs_ld_tab_get(&F->bases, s, len);
    if (b >= 0)
        return b;
    char *k = own(F, s, len);
    if (!k || grow((void **)&F->base, &F->capbase, F->nbase + 1, sizeof *F->base))
        return -1;
    b = (long)F->nbase++;
    F->base[b].ndim = ndim;
    for (int d = 0; d < FM_MAX_DIM; d++) {
        F->base[b].lo[d] = 1L << 40;
        F->base[b].hi[d] = -1;
    }
    if (hs_ld_tab_put(&F->bases, k, len, b, NULL) < 0)
        return -1;
    return b;
}

static int declare(fam *F, const char *name, size_t blen, int ndim, const long *idx)
{
    long b = base_of(F, name, blen, ndim);
    if (b < 0)
        return hs_fm_oom(F);
    fm_base *B = &F->base[b];
    if (B->ndim == -2)                           /* met in a reference first */
        B->ndim = ndim;
    if (B->ndim != ndim)
        B->ndim = -1;                            /* mixed: messages say less */
    for (int d = 0; d < ndim && d < FM_MAX_DIM; d++) {
        if (idx[d] < B->lo[d])
            B->lo[d] = idx[d];
        if (idx[d] > B->hi[d])
            B->hi[d] = idx[d];
    }
    size_t len = strlen(name);
    if (hs_ld_tab_get(&F->names, name, len) >= 0)
        return 0;
    char *k = own(F, name, len);
    if (!k || hs_ld_tab_put(&F->names, k, len, 0, NULL) < 0)
        return hs_fm_oom(F);
    return 0;
}

/* ---------- rewriting one text ---------- */

enum { RW_EXPR, RW_KEY, RW_DECL };   /* an expression; a key or item (ranges bound); declaring */

static long env_get(fam *F, const char *s, size_t len, int *found)
{
    for (int k = F->nenv; k-- > 0;)
        if (F->env[k].len == len && memcmp(F->env[k].name, s, len) == 0) {
            *found = 1;
            return F->env[k].val;
        }
    *found = 0;
    return 0;
}

/* The end of the bracket or parenthesis opened at t[a] (t[a] is '[' or
 * '('), or b when not closed. */
static size_t close_of(const char *t, size_t a, size_t b)
{
    int depth = 0;
    for (size_t j = a; j < b; j++) {
        if (t[j] == '(' || t[j] == '[')
            depth++;
        else if ((t[j] == ')' || t[j] == ']') && --depth == 0)
            return j;
    }
    return b;
}

/* The next top-level comma in t[a..b), or b. */
static size_t comma_of(const char *t, size_t a, size_t b)
{
    int depth = 0;
    for (size_t j = a; j < b; j++) {
        if (t[j] == '(' || t[j] == '[')
            depth++;
        else if (t[j] == ')' || t[j] == ']')
            depth--;
        else if (t[j] == ',' && depth == 0)
            return j;
    }
    return b;
}

/* t[a..b) is `name = range` (not `==`): the name's end, else 0. */
static size_t binding_at(const char *t, size_t a, size_t b, size_t *eq)
{
    while (a < b && isspace((unsigned char)t[a]))
        a++;
    if (a >= b || !is_id0((unsigned char)t[a]))
        return 0;
    size_t j = a;
    while (j < b && is_id((unsigned char)t[j]))
        j++;
    size_t ne = j;
    while (j < b && isspace((unsigned char)t[j]))
        j++;
    if (j + 1 < b && t[j] == '=' && t[j + 1] != '=') {
        *eq = j;
        return ne;
    }
    return 0;
}

static int rewrite(fam *F, int tmpl, const char *t, size_t a, size_t b, int mode);

/* The range a..b at t[r0..r1) into lo, hi. */
static int eval_range(fam *F, int tmpl, const char *t, size_t r0, size_t r1, long *lo, long *hi)
{
    const char *dd = NULL;
    for (size_t j = r0; j + 1 < r1; j++)
        if (t[j] == '.' && t[j + 1] == '.') {
            dd = t + j;
            break;
        }
    if (!dd)
        return hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), r0, "a range is written "
                                 "i=FIRST..LAST (found '%.*s')", (int)(r1 - r0), t + r0);
    size_t m = (size_t)(dd - t);
    if (eval_index(F, tmpl, t, r0, m, lo) || eval_index(F, tmpl, t, m + 2, r1, hi))
        return F->err->code;
    if (*hi - *lo + 1 > FM_MAX_COUNT)
        return hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), r0, "the range %ld..%ld has "
                                 "more than %ld values", *lo, *hi, FM_MAX_COUNT);
    return 0;
}

static int push(fam *F, int tmpl, const char *name, size_t len, long val)
{
    if (F->nenv >= FM_MAX_ENV)
        return hs_ytree_error(F->y, F->err, NODEP(F, tmpl), "indices nested more than %d "
                              "deep", FM_MAX_ENV);
    F->env[F->nenv++] = (fm_bind){ name, len, val };
    return 0;
}

/* sum(i=a..b, body) or prod(...) at t[a..]: ident [a, j) is sum/prod,
 * p the '('; writes the terms and returns the end (after ')'), 0 on error. */
static size_t rewrite_sum(fam *F, int tmpl, const char *t, size_t a, size_t p, size_t b,
                          int is_sum, int mode)
{
    size_t cl = close_of(t, p, b);
    if (cl >= b) {
        hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), p, "'(' of %s is not closed",
                          is_sum ? "sum" : "prod");
        return 0;
    }
    size_t eq, ne = binding_at(t, p + 1, cl, &eq);
    size_t s0 = p + 1;
    while (isspace((unsigned char)t[s0]))
        s0++;
    size_t cm = comma_of(t, eq + 1, cl);
    if (cm >= cl) {
        hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), a, "%s is written %s(i=FIRST..LAST, "
                          "EXPRESSION)", is_sum ? "sum" : "prod", is_sum ? "sum" : "prod");
        return 0;
    }
    long lo, hi;
    if (eval_range(F, tmpl, t, eq + 1, cm, &lo, &hi))
        return 0;
    if (put(F, "(", 1, a, 0))
        return 0;
    if (hi < lo && put(F, is_sum ? "0" : "1", 1, a, 0))
        return 0;
    for (long v = lo; v <= hi; v++) {
        if ((v > lo && put(F, is_sum ? " + " : "*", is_sum ? 3 : 1, a, 0)) ||
            push(F, tmpl, t + s0, ne - s0, v) || put(F, "(", 1, a, 0))
            return 0;
        int rc = rewrite(F, tmpl, t, cm + 1, cl, mode);
        F->nenv--;
        if (rc || put(F, ")", 1, cl, 0))
            return 0;
    }
    if (put(F, ")", 1, cl, 0))
        return 0;
    return cl + 1;
}

/* A reference name[...] at t[a..]: ident [a, j), '[' at j. Writes the
 * expanded name; returns the end (after ']'), 0 on error. */
static size_t rewrite_ref(fam *F, int tmpl, const char *t, size_t a, size_t j, size_t b,
                          int mode)
{
    size_t cl = close_of(t, j, b);
    if (cl >= b || t[cl] != ']') {
        hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), j, "'[' is not closed");
        return 0;
    }
    long idx[FM_MAX_DIM];
    int nd = 0;
    for (size_t e = j + 1; e <= cl;) {
        size_t c = comma_of(t, e, cl);
        if (nd == FM_MAX_DIM) {
            hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), e, "more than %d indices",
                              FM_MAX_DIM);
            return 0;
        }
        size_t eq, ne = binding_at(t, e, c, &eq);
        if (ne) {
            size_t s0 = e;
            while (isspace((unsigned char)t[s0]))
                s0++;
            int found;
            idx[nd] = env_get(F, t + s0, ne - s0, &found);
            if (mode == RW_EXPR || !found) {
                hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), s0, "a range '%.*s' declares a "
                                  "family: it belongs in a key or a list item; in an expression "
                                  "write sum(%.*s, ...)", (int)(c - s0), t + s0,
                                  (int)(c - s0), t + s0);
                return 0;
            }
        } else if (eval_index(F, tmpl, t, e, c, &idx[nd])) {
            return 0;
        }
        nd++;
        e = c + 1;
    }
    char name[256];
    int len = (int)(j - a);
    if (j - a < 160) {
        memcpy(name, t + a, j - a);
        for (int d = 0; d < nd; d++) {
            name[len++] = '_';
            len += (int)fmt_long(name + len, idx[d]);
        }
        name[len] = '\0';
    }
    if (j - a >= 160) {
        hs_ytree_error_in(F->y, F->err, NODEP(F, tmpl), a, "name too long");
        return 0;
    }
    if (mode == RW_DECL) {
        if (declare(F, name, j - a, nd, idx))
            return 0;
    } else {
        long bse = base_of(F, t + a, j - a, -2);
        if (bse < 0 ||
            grow((void **)&F->ref, &F->capref, F->nref + 1, sizeof *F->ref)) {
            hs_fm_oom(F);
            return 0;
        }
        fm_ref *r = &F->ref[F->nref];
        r->name = own(F, name, (size_t)len);
        if (!r->name) {
            hs_fm_oom(F);
            return 0;
        }
        r->base = (size_t)bse;
        r->ndim = nd;
        memcpy(r->idx, idx, sizeof idx);
        r->node = 0;                     /* set when the node is made */
        r->off = F->olen;
        F->nref++;
    }
    if (put(F, name, (size_t)len, a, 0))
        return 0;
    return cl + 1;
}

/* Rewrite t[a..b) of template tmpl onto the text being built. */
static int rewrite(fam *F, int tmpl, const char *t, size_t a, size_t b, int mode)
{
    if (++F->depth > 200) {
        F->depth--;
        return hs_ytree_error(F->y, F->err, NODEP(F, tmpl), "sums nested too deeply");
    }
    size_t i = a;
    while (i < b && !F->err->code) {
        unsigned char c = (unsigned char)t[i];
        if (isdigit(c) || (c == '.' && i + 1 < b && isdigit((unsigned char)t[i + 1]))) {
            size_t j = i;
            while (j < b && (isdigit((unsigned char)t[j]) || t[j] == '.'))
                j++;
            if (j < b && (t[j] == 'e' || t[j] == 'E')) {
                size_t k = j + 1;
                if (k < b && (t[k] == '+' || t[k] == '-'))
                    k++;
                if (k < b && isdigit((unsigned char)t[k])) {
                    j = k;
                    while (j < b && isdigit((unsigned char)t[j]))
                        j++;
                }
            }
            if (put(F, t + i, j - i, i, 1))
                break;
            i = j;
            continue;
        }
        if (!is_id0(c)) {
            if (put(F, t + i, 1, i, 1))
                break;
            i++;
            continue;
        }
        size_t j = i;
        while (j < b && is_id((unsigned char)t[j]))
            j++;
        size_t p = j;
        while (p < b && (t[p] == ' ' || t[p] == '\t'))
            p++;
        size_t eq;
        int found;
        long v;
        if (j < b && t[j] == '[') {
            size_t e = rewrite_ref(F, tmpl, t, i, j, b, mode);
            if (!e)
                break;
            i = e;
        } else if (((j - i == 3 && memcmp(t + i, "sum", 3) == 0) ||
                    (j - i == 4 && memcmp(t + i, "prod", 4) == 0)) && p < b && t[p] == '(' &&
                   binding_at(t, p + 1, b, &eq)) {
            size_t e = rewrite_sum(F, tmpl, t, i, p, b, j - i == 3, mode);
            if (!e)
                break;
            i = e;
        } else if ((v = env_get(F, t + i, j - i, &found)), found && !(p < b && t[p] == '(')) {
            char num[32];
            size_t n = fmt_long(num, v);
            if (put(F, num, n, i, 0))
                break;
            i = j;
        } else {
            if (put(F, t + i, j - i, i, 1))
                break;
            i = j;
        }
    }
    F->depth--;
    return F->err->code;
}

/* A new scalar: the text of template scalar id rewritten (mode), or id
 * itself when nothing changed. */
static int rewrite_scalar(fam *F, int id, size_t a, size_t b, int mode)
{
    yaml_node_t *n = NODEP(F, id);
    const char *t = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    F->olen = 0;
    F->seg0 = F->y->nseg;
    size_t r0 = F->nref;
    if (rewrite(F, id, t, a, b, mode))
        return 0;
    if (a == 0 && b == len && F->olen == len && memcmp(F->out ? F->out : "", t, len) == 0 &&
        F->note < 0) {
        F->y->nseg = F->seg0;              /* unchanged: the node itself */
        for (size_t r = r0; r < F->nref; r++)
            F->ref[r].node = id;
        return id;
    }
    int nid = hs_fm_add_scalar(F, F->out ? F->out : "", F->olen, id, 0);
    for (size_t r = r0; r < F->nref; r++)
        F->ref[r].node = nid;
    return nid;
}

/* ---------- the tree ---------- */

/* The ranges declared in text t (a key or item), in order: name [s, e),
 * range [r0, r1). */
typedef struct rng {
    size_t s, e, r0, r1;
} rng;

static int ranges_of(const char *t, size_t len, rng *r, int max)
{
    int nr = 0;
    for (size_t j = 1; j < len; j++)
        if (t[j] == '[' && is_id((unsigned char)t[j - 1])) {
            size_t cl = close_of(t, j, len), eq;
            for (size_t e = j + 1; e < cl && nr < max;) {
                size_t c = comma_of(t, e, cl), ne = binding_at(t, e, c, &eq);
                if (ne) {
                    size_t s = e;
                    while (isspace((unsigned char)t[s]))
                        s++;
                    r[nr++] = (rng){ s, ne, eq + 1, c };
                }
                e = c + 1;
            }
            j = cl;
        }
    return nr;
}

static int copy(fam *F, int id, int decl, int *out);

/* The note of the index values bound now ("i = 3, j = 2"). */
static int make_note(fam *F)
{
    hs_ytree *y = F->y;
    char buf[FM_MAX_ENV * 96];
    size_t len = 0;
    for (int k = 0; k < F->nenv; k++) {      /* "i = 3, j = 2" */
        size_t nl = F->env[k].len < 64 ? F->env[k].len : 64;
        if (k)
            memcpy(buf + len, ", ", 2), len += 2;
        memcpy(buf + len, F->env[k].name, nl);
        len += nl;
        memcpy(buf + len, " = ", 3);
        len += 3 + fmt_long(buf + len + 3, F->env[k].val);
    }
    if (!F->nenv) {
        F->note = -1;
        return 0;
    }
    if (grow((void **)&y->notes, &F->capn, y->nnotes + len + 1, 1))
        return hs_fm_oom(F);
    F->note = (long)y->nnotes;
    memcpy(y->notes + y->nnotes, buf, len);
    y->notes[y->nnotes + len] = '\0';
    y->nnotes += len + 1;
    return 0;
}

/* Expand a key (or item) with ranges: for each value of range k, then
 * the leaf: emit(F, ctx). */
typedef int (*leaf_fn)(fam *F, void *ctx);

/* A line of the derivation's list of families: the section, the template
 * as written, its first range's values (the outermost family only). */
static int record_family(fam *F, const char *t, const rng *r, int nr, long lo, long hi)
{
    srcinfo *si = F->L->si;
    size_t old = si->families ? strlen(si->families) : 0;
    size_t tl = strlen(t) < 200 ? strlen(t) : 200;
    char *p = realloc(si->families, old + tl + strlen(F->section) + 128);
    if (!p)
        return hs_fm_oom(F);
    si->families = p;
    (void)nr;
    snprintf(p + old, tl + strlen(F->section) + 128, "# family in %s: %.*s (%.*s = %ld..%ld, %ld "
             "entr%s)\n", F->section, (int)tl, t, (int)(r[0].e - r[0].s), t + r[0].s, lo, hi,
             hi >= lo ? hi - lo + 1 : 0, hi - lo == 0 ? "y" : "ies");
    return 0;
}

static int each(fam *F, int tmpl, const char *t, const rng *r, int nr, int k, leaf_fn fn,
                void *ctx)
{
    if (k == nr) {
        long saved = F->note;
        int rc = make_note(F) || fn(F, ctx);
        F->note = saved;
        return rc ? F->err->code : 0;
    }
    long lo, hi;
    if (eval_range(F, tmpl, t, r[k].r0, r[k].r1, &lo, &hi))
        return F->err->code;
    if (F->nenv == 0 && F->section && record_family(F, t, r, nr, lo, hi))
        return F->err->code;
    for (long v = lo; v <= hi; v++) {
        if (push(F, tmpl, t + r[k].s, r[k].e - r[k].s, v))
            return F->err->code;
        int rc = each(F, tmpl, t, r, nr, k + 1, fn, ctx);
        F->nenv--;
        if (rc)
            return rc;
    }
    return 0;
}

typedef struct pairctx {
    int key, val, map, decl;
} pairctx;

static int emit_pair(fam *F, void *ctx)
{
    pairctx *c = ctx;
    yaml_node_t *k = NODEP(F, c->key);
    int nk = rewrite_scalar(F, c->key, 0, k->data.scalar.length, c->decl ? RW_DECL : RW_KEY);
    int nv;
    if (!nk || copy(F, c->val, 0, &nv))
        return F->err->code ? F->err->code : hs_fm_oom(F);
    return hs_fm_append_pair(F, c->map, nk, nv);
}

typedef struct itemctx {
    int item, seq, decl;
} itemctx;

static int emit_item(fam *F, void *ctx)
{
    itemctx *c = ctx;
    yaml_node_t *n = NODEP(F, c->item);
    const char *t = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    for (size_t e = 0; e <= len;) {            /* x[i=1..N], y[i]: one item each */
        size_t cm = comma_of(t, e, len);
        size_t a = e, b = cm;
        while (a < b && isspace((unsigned char)t[a]))
            a++;
        while (b > a && isspace((unsigned char)t[b - 1]))
            b--;
        int ni = rewrite_scalar(F, c->item, a, b, c->decl ? RW_DECL : RW_KEY);
        if (!ni || hs_fm_append_item(F, c->seq, ni))
            return F->err->code ? F->err->code : hs_fm_oom(F);
        e = cm + 1;
    }
    return 0;
}

/* A list parameter L: [a, b, ...] -> L_1: a, L_2: b, ... */
static int list_param(fam *F, int key, int val, int map)
{
    yaml_node_t *k = NODEP(F, key);
    const char *ks = hs_ytree_str(k);
    if (!ks)
        return hs_ytree_error(F->y, F->err, k, "a parameter's name must be a scalar");
    yaml_node_t *v = NODEP(F, val);
    size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
    if (n == 0)
        return hs_ytree_error(F->y, F->err, v, "list parameter '%s' is empty", ks);
    for (size_t i = 0; i < n; i++) {
        int item = NODEP(F, val)->data.sequence.items.start[i];
        char name[200];
        int len = snprintf(name, sizeof name, "%s_%zu", ks, i + 1);
        long idx = (long)i + 1;
        if (len >= (int)sizeof name)
            return hs_ytree_error(F->y, F->err, k, "name too long");
        if (declare(F, name, strlen(ks), 1, &idx))
            return F->err->code;
        int nk = hs_fm_add_scalar(F, name, (size_t)len, key, 1), nv;
        if (!nk || copy(F, item, 0, &nv) || hs_fm_append_pair(F, map, nk, nv))
            return F->err->code ? F->err->code : hs_fm_oom(F);
    }
    return 0;
}

/* Copy node id with everything under it rewritten; decl: its keys (items)
 * declare names. */
static int copy(fam *F, int id, int decl, int *out)
{
    yaml_node_t *n = NODEP(F, id);
    if (n->type == YAML_SCALAR_NODE) {
        *out = rewrite_scalar(F, id, 0, n->data.scalar.length, RW_EXPR);
        return *out ? 0 : F->err->code ? F->err->code : hs_fm_oom(F);
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        int s = hs_fm_add_seq(F, id);
        if (!s)
            return F->err->code;
        size_t len = (size_t)(NODEP(F, id)->data.sequence.items.top -
                              NODEP(F, id)->data.sequence.items.start);
        for (size_t i = 0; i < len; i++) {
            int item = NODEP(F, id)->data.sequence.items.start[i];
            yaml_node_t *it = NODEP(F, item);
            rng r[FM_MAX_ENV];
            int nr = it->type == YAML_SCALAR_NODE
                         ? ranges_of((const char *)it->data.scalar.value,
                                     it->data.scalar.length, r, FM_MAX_ENV) : 0;
            if (nr || (decl == 3 && it->type == YAML_SCALAR_NODE)) {
                itemctx c = { item, s, decl == 3 };
                if (each(F, item, (const char *)it->data.scalar.value, r, nr, 0, emit_item, &c))
                    return F->err->code;
                continue;
            }
            int ni;
            if (copy(F, item, 0, &ni) || hs_fm_append_item(F, s, ni))
                return F->err->code;
        }
        *out = s;
        return 0;
    }
    if (n->type != YAML_MAPPING_NODE) {
        *out = id;
        return 0;
    }
    int mp = hs_fm_add_map(F, id);
    if (!mp)
        return F->err->code;
    size_t len = (size_t)(NODEP(F, id)->data.mapping.pairs.top -
                          NODEP(F, id)->data.mapping.pairs.start);
    for (size_t i = 0; i < len; i++) {
        yaml_node_pair_t p = NODEP(F, id)->data.mapping.pairs.start[i];
        yaml_node_t *k = NODEP(F, p.key);
        if (decl == 2 && NODEP(F, p.value)->type == YAML_SEQUENCE_NODE) {
            if (list_param(F, p.key, p.value, mp))
                return F->err->code;
            continue;
        }
        rng r[FM_MAX_ENV];
        int nr = k->type == YAML_SCALAR_NODE
                     ? ranges_of((const char *)k->data.scalar.value, k->data.scalar.length,
                                 r, FM_MAX_ENV) : 0;
        if (k->type == YAML_SCALAR_NODE) {
            pairctx c = { p.key, p.value, mp, decl == 1 || decl == 2 };
            if (each(F, p.key, (const char *)k->data.scalar.value, r, nr, 0, emit_pair, &c))
                return F->err->code;
            continue;
        }
        int nv;
        if (copy(F, p.value, 0, &nv) || hs_fm_append_pair(F, mp, p.key, nv))
            return F->err->code;
    }
    *out = mp;
    return 0;
}

/* ---------- mass by entries ---------- */

static int split_key(const char *s, size_t *a0, size_t *a1, size_t *b0, size_t *b1)
{
    size_t len = strlen(s), c = comma_of(s, 0, len);
    *a0 = 0, *a1 = c;
    while (*a0 < *a1 && isspace((unsigned char)s[*a0]))
        ++*a0;
    while (*a1 > *a0 && isspace((unsigned char)s[*a1 - 1]))
        --*a1;
    if (c >= len) {
        *b0 = *a0, *b1 = *a1;
        return 1;
    }
    *b0 = c + 1, *b1 = len;
    while (*b0 < *b1 && isspace((unsigned char)s[*b0]))
        ++*b0;
    while (*b1 > *b0 && isspace((unsigned char)s[*b1 - 1]))
        --*b1;
    return comma_of(s, c + 1, len) < len ? -1 : 2;
}

/* `mass` given as a mapping of entries: into the format-1 list (diagonal)
 * or matrix, entries of the same place added up. */
static int mass_entries(fam *F, int root, int mass, int mkey)
{
    int coords = hs_fm_get(F, root, "embedding", NULL);
    int emb = coords != 0;
    if (!emb)
        coords = hs_fm_get(F, root, "coordinates", NULL);
    if (!coords || NODEP(F, coords)->type != (emb ? YAML_MAPPING_NODE : YAML_SEQUENCE_NODE))
        return 0;                            /* the loader says what is missing */
    yaml_node_t *cn = NODEP(F, coords);
    size_t n = emb ? (size_t)(cn->data.mapping.pairs.top - cn->data.mapping.pairs.start)
                   : (size_t)(cn->data.sequence.items.top - cn->data.sequence.items.start);
    ld_tab ix = { 0 };
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        cn = NODEP(F, coords);
        int nid = emb ? cn->data.mapping.pairs.start[i].key : cn->data.sequence.items.start[i];
        const char *s = hs_ytree_str(NODEP(F, nid));
        if (s && hs_ld_tab_put(&ix, s, strlen(s), (long)i, NULL) < 0)
            rc = hs_fm_oom(F);
    }
    yaml_node_t *mn = NODEP(F, mass);
    size_t ne = (size_t)(mn->data.mapping.pairs.top - mn->data.mapping.pairs.start);
    /* entries: (row, col, value node), kept sorted by place for the sums */
    typedef struct ent { size_t i, j; int val, key; } ent;
    ent *e = calloc(ne ? ne : 1, sizeof *e);
    int diag = 1;
    if (!e)
        rc = hs_fm_oom(F);
    for (size_t z = 0; z < ne && !rc; z++) {
        yaml_node_pair_t p = NODEP(F, mass)->data.mapping.pairs.start[z];
        const char *ks = hs_ytree_str(NODEP(F, p.key));
        if (!ks) {
            rc = hs_ytree_error(F->y, F->err, NODEP(F, p.key), "a mass entry's key is a "
                                "coordinate or two separated by a comma");
            break;
        }
        size_t a0, a1, b0, b1;
        int parts = split_key(ks, &a0, &a1, &b0, &b1);
        long r = hs_ld_tab_get(&ix, ks + a0, a1 - a0), c = hs_ld_tab_get(&ix, ks + b0, b1 - b0);
        if (parts < 0 || r < 0 || c < 0) {
            size_t u0 = r < 0 ? a0 : b0, u1 = r < 0 ? a1 : b1;
            rc = parts < 0 ? hs_ytree_error(F->y, F->err, NODEP(F, p.key), "a mass entry's key "
                                            "is a coordinate or two separated by a comma, "
                                            "found '%s'", ks)
                           : hs_ytree_error(F->y, F->err, NODEP(F, p.key), "mass entry '%s': "
                                            "'%.*s' is not %s", ks, (int)(u1 - u0), ks + u0,
                                            emb ? "an ambient name" : "a coordinate");
            break;
        }
        if (NODEP(F, p.value)->type != YAML_SCALAR_NODE) {
            rc = hs_ytree_error(F->y, F->err, NODEP(F, p.value), "mass entry '%s' must be an "
                                "expression, found %s", ks, hs_ytree_kind(NODEP(F, p.value)));
            break;
        }
        e[z] = (ent){ (size_t)(r < c ? r : c), (size_t)(r < c ? c : r), p.value, p.key };
        if (r != c)
            diag = 0;
    }
    hs_ld_tab_free(&ix);
    /* place -> first entry, the later ones of the same place added to it */
    ld_tab at = { 0 };
    char (*kb)[48] = rc ? NULL : calloc(ne ? ne : 1, sizeof *kb);
    int *val = rc ? NULL : calloc(ne ? ne : 1, sizeof *val);
    if (!rc && (!kb || !val))
        rc = hs_fm_oom(F);
    size_t np = 0;
    long *first = rc ? NULL : calloc(ne ? ne : 1, sizeof *first);
    if (!rc && !first)
        rc = hs_fm_oom(F);
    for (size_t z = 0; z < ne && !rc; z++) {
        int len = snprintf(kb[z], sizeof kb[z], "%zu,%zu", e[z].i, e[z].j);
        long old;
        int put_rc = hs_ld_tab_put(&at, kb[z], (size_t)len, (long)np, &old);
        if (put_rc < 0) {
            rc = hs_fm_oom(F);
        } else if (put_rc == 0) {
            first[np] = (long)z;
            val[np++] = e[z].val;
        } else {                           /* the sum of both */
            const char *s1 = hs_ytree_str(NODEP(F, val[old])), *s2 = hs_ytree_str(NODEP(F, e[z].val));
            size_t l = strlen(s1) + strlen(s2) + 8;
            char *buf = malloc(l);
            if (!buf) {
                rc = hs_fm_oom(F);
                break;
            }
            snprintf(buf, l, "(%s) + (%s)", s1, s2);
            long saved = F->note;
            const hs_ytree_origin *o = NULL;
            if (F->y->norig && val[old] > F->y->norig)
                o = &F->y->origin[val[old] - F->y->norig - 1];
            F->note = o ? o->note : -1;
            int nid = hs_fm_add_scalar(F, buf, strlen(buf), val[old], 1);
            F->note = saved;
            free(buf);
            if (!nid) {
                rc = F->err->code;
                break;
            }
            val[old] = nid;
        }
    }
    hs_ld_tab_free(&at);
    int list = 0, zero = 0;
    if (!rc && !(list = hs_fm_add_seq(F, mass)))
        rc = F->err->code;
    if (!rc && diag) {
        int *d = calloc(n ? n : 1, sizeof *d);
        if (!d)
            rc = hs_fm_oom(F);
        for (size_t p = 0; p < np && !rc; p++)
            d[e[first[p]].i] = val[p];
        for (size_t i = 0; i < n && !rc; i++) {
            if (!d[i]) {
                cn = NODEP(F, coords);
                int nid = emb ? cn->data.mapping.pairs.start[i].key : cn->data.sequence.items.start[i];
                rc = hs_ytree_error(F->y, F->err, NODEP(F, mkey), "'mass' has no entry for "
                                    "'%s' (the diagonal needs one for each %s)",
                                    hs_ytree_str(NODEP(F, nid)), emb ? "ambient name" : "coordinate");
                break;
            }
            rc = hs_fm_append_item(F, list, d[i]);
        }
        free(d);
    } else if (!rc) {
        int *mtx = calloc(n ? n * n : 1, sizeof *mtx);
        if (!mtx || !(zero = hs_fm_add_scalar(F, "0", 1, mkey, 1)))
            rc = F->err->code ? F->err->code : hs_fm_oom(F);
        for (size_t p = 0; p < np && !rc; p++) {
            size_t i = e[first[p]].i, j = e[first[p]].j;
            mtx[i * n + j] = mtx[j * n + i] = val[p];
        }
        for (size_t i = 0; i < n && !rc; i++) {
            int row = hs_fm_add_seq(F, mass);
            if (!row || hs_fm_append_item(F, list, row)) {
                rc = F->err->code;
                break;
            }
            for (size_t j = 0; j < n && !rc; j++)
                rc = hs_fm_append_item(F, row, mtx[i * n + j] ? mtx[i * n + j] : zero);
        }
        free(mtx);
    }
    if (!rc) {                               /* the list replaces the mapping */
        yaml_node_t *root_n = NODEP(F, root);
        for (yaml_node_pair_t *p = root_n->data.mapping.pairs.start;
             p < root_n->data.mapping.pairs.top; p++)
            if (p->value == mass)
                p->value = list;
    }
    free(e);
    free(kb);
    free(val);
    free(first);
    return rc;
}

/* ---------- the whole file ---------- */

static const char *const verbatim[] = { "format", "name", "simulate" };
static const char *const declaring[] = {
    "parameters", "define", "embedding", "constraints", "outputs", "events", "coordinates",
    "points", "bodies", "springs",
};

static int in_list(const char *s, const char *const *l, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        if (strcmp(s, l[i]) == 0)
            return 1;
    return 0;
}

/* Whether the file uses families: a '[' or sum( / prod( in a scalar of a
 * section that is not verbatim, or a list parameter. */
static int uses_families(fam *F, int root)
{
    yaml_node_t *r = NODEP(F, root);
    for (yaml_node_pair_t *p = r->data.mapping.pairs.start; p < r->data.mapping.pairs.top; p++) {
        const char *ks = hs_ytree_str(NODEP(F, p->key));
        if (!ks || in_list(ks, verbatim, 3))
            continue;
        /* the nodes of the section are a contiguous run of ids */
        int hi = p + 1 < r->data.mapping.pairs.top ? (p + 1)->key : (int)(F->doc->nodes.top -
                                                                          F->doc->nodes.start) + 1;
        for (int id = p->value; id < hi; id++) {
            yaml_node_t *n = NODEP(F, id);
            if (strcmp(ks, "parameters") == 0 && n->type == YAML_SEQUENCE_NODE)
                return 1;
            if (n->type != YAML_SCALAR_NODE)
                continue;
            const char *s = (const char *)n->data.scalar.value;
            if (strchr(s, '[') || strstr(s, "sum(") || strstr(s, "prod(") || strstr(s, "sum (") ||
                strstr(s, "prod ("))
                return 1;
        }
    }
    return 0;
}

static void fam_free(fam *F)
{
    hs_ld_tab_free(&F->ptab);
    hs_ld_tab_free(&F->names);
    hs_ld_tab_free(&F->bases);
    free(F->pstate);
    free(F->pval);
    free(F->pused);
    free(F->out);
    for (size_t i = 0; i < F->nstr; i++)
        free(F->str[i]);
    free(F->str);
    free(F->base);
    free(F->ref);
    hs_dag_free(F->dag);
}

/* Every reference names a declared member of its family. */
static int check_refs(fam *F)
{
    for (size_t r = 0; r < F->nref; r++) {
        fm_ref *R = &F->ref[r];
        const char *nm = R->name;
        if (hs_ld_tab_get(&F->names, nm, strlen(nm)) >= 0)
            continue;
        fm_base *B = &F->base[R->base];
        char want[160] = "", got[96];
        size_t bl = 0;
        for (size_t i = 0; i < F->bases.cap; i++)
            if (F->bases.slot[i].s && F->bases.slot[i].val == (long)R->base)
                bl = F->bases.slot[i].len;
        int gl = snprintf(got, sizeof got, "%.*s[", (int)bl, nm);
        for (int d = 0; d < R->ndim && gl < (int)sizeof got; d++)
            gl += snprintf(got + gl, sizeof got - (size_t)gl, "%s%ld", d ? ", " : "", R->idx[d]);
        snprintf(got + (gl < (int)sizeof got ? gl : (int)sizeof got - 1),
                 sizeof got - (size_t)(gl < (int)sizeof got ? gl : (int)sizeof got - 1), "]");
        yaml_node_t *at = NODEP(F, R->node);
        if (B->ndim == -2 || B->hi[0] < 0)
            return hs_ytree_error_in(F->y, F->err, at, R->off, "'%.*s' is not indexed: no family "
                                     "or list parameter declares %s", (int)bl, nm, got);
        if (B->ndim != R->ndim)
            return hs_ytree_error_in(F->y, F->err, at, R->off, "%s: %.*s has %d ind%s", got,
                                     (int)bl, nm, B->ndim, B->ndim == 1 ? "ex" : "ices");
        size_t wl = 0;
        for (int d = 0; d < B->ndim && d < FM_MAX_DIM; d++)
            wl += (size_t)snprintf(want + wl, sizeof want - wl, "%s%ld..%ld", d ? ", " : "",
                                   B->lo[d], B->hi[d]);
        return hs_ytree_error_in(F->y, F->err, at, R->off, "%s is outside the family %.*s "
                                 "(%.*s[%s])", got, (int)bl, nm, (int)bl, nm, want);
    }
    return 0;
}

/* The parameters that size a family or give an index, kept in the model:
 * another point of a sweep with a new value of one needs a new load
 * (hs_model_repoint refuses it). */
static int record_structural(fam *F)
{
    srcinfo *si = F->L->si;
    for (size_t i = 0; i < F->npar; i++) {
        if (!F->pused[i])
            continue;
        char **sp = realloc(si->spar, (si->nspar + 1) * sizeof *sp);
        if (!sp)
            return hs_fm_oom(F);
        si->spar = sp;
        const char *nm = hs_ytree_str(NODEP(F, NODEP(F, F->params)->data.mapping.pairs.start[i].key));
        if (!(si->spar[si->nspar] = hs_ld_strdup(nm ? nm : "")))
            return hs_fm_oom(F);
        si->nspar++;
    }
    return 0;
}

int hs_model_structural(const hs_model *m, const char *name)
{
    const srcinfo *si = m->src;
    for (size_t i = 0; si && i < si->nspar; i++)
        if (strcmp(si->spar[i], name) == 0)
            return 1;
    return 0;
}

/* The new root's content moves into node 1 (libyaml's root is the first
 * node); the copy keeps an empty scalar. */
static int swap_root(fam *F, int nroot)
{
    yaml_node_t *r = NODEP(F, 1), *n = NODEP(F, nroot);
    yaml_char_t *empty = malloc(1);
    if (!empty)
        return hs_fm_oom(F);
    empty[0] = '\0';
    free(r->data.mapping.pairs.start);
    r->data.mapping = n->data.mapping;
    yaml_node_t blank = *n;
    blank.type = YAML_SCALAR_NODE;
    blank.data.scalar.value = empty;
    blank.data.scalar.length = 0;
    blank.data.scalar.style = YAML_PLAIN_SCALAR_STYLE;
    *n = blank;
    return 0;
}

int hs_ld_expand(loader *L)
{
    hs_ytree *y = L->y;
    yaml_node_t *root = hs_ytree_root(y);
    if (!root || root->type != YAML_MAPPING_NODE)
        return 0;
    fam F;
    memset(&F, 0, sizeof F);
    F.L = L;
    F.y = y;
    F.doc = &y->doc;
    F.err = L->err;
    F.note = -1;
    int fams = uses_families(&F, 1), bodies = hs_bd_uses(&F, 1);
    if (!fams && !bodies)
        return 0;
    y->norig = (int)(F.doc->nodes.top - F.doc->nodes.start);
    int rc = 0;
    F.params = hs_fm_get(&F, 1, "parameters", NULL);
    if (F.params && NODEP(&F, F.params)->type == YAML_MAPPING_NODE) {
        yaml_node_t *pm = NODEP(&F, F.params);
        F.npar = (size_t)(pm->data.mapping.pairs.top - pm->data.mapping.pairs.start);
        F.pstate = calloc(F.npar + 1, 1);
        F.pval = calloc(F.npar + 1, sizeof *F.pval);
        F.pused = calloc(F.npar + 1, 1);
        if (!F.pstate || !F.pval || !F.pused)
            rc = hs_fm_oom(&F);
        for (size_t i = 0; i < F.npar && !rc; i++) {
            const char *ks = hs_ytree_str(NODEP(&F, NODEP(&F, F.params)->data.mapping.pairs.start[i].key));
            if (ks && hs_ld_tab_put(&F.ptab, ks, strlen(ks), (long)i, NULL) < 0)
                rc = hs_fm_oom(&F);
        }
    } else {
        F.params = 0;
    }
    int nroot = 0;
    if (!rc && fams) {
        nroot = hs_fm_add_map(&F, 1);
        size_t np = (size_t)(NODEP(&F, 1)->data.mapping.pairs.top -
                             NODEP(&F, 1)->data.mapping.pairs.start);
        for (size_t i = 0; i < np && !rc && nroot; i++) {
            yaml_node_pair_t p = NODEP(&F, 1)->data.mapping.pairs.start[i];
            const char *ks = hs_ytree_str(NODEP(&F, p.key));
            int nv = p.value;
            F.section = ks;
            if (!in_list(ks, verbatim, 3)) {
                int decl = !in_list(ks, declaring, 10) ? 0 : strcmp(ks, "parameters") == 0 ? 2
                         : strcmp(ks, "coordinates") == 0 ? 3 : 1;
                rc = copy(&F, p.value, decl, &nv);
            }
            if (!rc)
                rc = hs_fm_append_pair(&F, nroot, p.key, nv);
        }
        if (!nroot)
            rc = F.err->code;
        if (!rc)
            rc = check_refs(&F) || record_structural(&F);
        if (!rc)
            rc = swap_root(&F, nroot);
        int mkey, mass = rc ? 0 : hs_fm_get(&F, 1, "mass", &mkey);
        if (mass && NODEP(&F, mass)->type == YAML_MAPPING_NODE)
            rc = mass_entries(&F, 1, mass, mkey);
    }
    if (!rc && bodies)
        rc = hs_bd_expand(&F, 1);
    if (!rc && y->norigin + (size_t)y->norig > HS_YTREE_MAX_NODES)
        rc = hs_ytree_error(y, L->err, hs_ytree_root(y), "the families expand to more than "
                            "%d YAML nodes", HS_YTREE_MAX_NODES);
    fam_free(&F);
    return rc ? (L->err->code ? L->err->code : HS_EXIT_MODEL) : 0;
}
