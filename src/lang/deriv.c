/* The symbolic work of body.c (internal.h): D(...) written out in every
 * expression, the forces -dR/dq' of a dissipation function, in a scratch
 * dag whose symbols carry the file's names, so the printed text reads back
 * in the loader as the same expression; and the small edits of the root
 * that body.c shares. */
#include "internal.h"
#include "../util/suggest.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>


/* ---------- text ---------- */

int hs_bd_bprintf(buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 64;
        while (c < b->len + (size_t)n + 1)
            c *= 2;
        char *p = realloc(b->s, c);
        if (!p)
            return -1;
        b->s = p;
        b->cap = c;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

const char *hs_bd_str(fam *F, int id)
{
    return id ? hs_ytree_str(NODEP(F, id)) : NULL;
}

/* ---------- the scratch symbolic context ---------- */

typedef struct sctx {
    fam *F;
    hs_dag *d;
    int tsym;
    size_t n;
    int *q, *v, *a;             /* [n] symbols x, x', x'' */
    hs_strmap qtab;                /* coordinate name -> index */
    hs_strmap ptab;                /* parameter names */
    int defs;                   /* the define mapping */
    hs_strmap dtab;                /* define name -> pair index */
    const hs_node **dnode;
    signed char *dstate;
    size_t ndef;
    int emb;                    /* the embedding mapping, or 0 */
    hs_strmap atab;
    const hs_node **anode;
    signed char *astate;
    size_t namb;
    int node;                   /* the scalar being rewritten (errors) */
    size_t shift;               /* what precedes the node's text in the one parsed */
    buf tmp;
    int depth;
    /* opaque: defines stay symbols of their names, and D of a define X is
     * the define X__D (made here, its text the derivative of X's own
     * text): the printed derivatives stay local (deriv_defines) */
    int opaque;
    int *symdef;                /* [nsymk] the define a symbol names (+1), or 0 */
    int *symq;                  /* [nsymk] q_i: i + 1, q_i': n + i + 1, q_i'': 2n + i + 1 */
    int *symder;                /* [nsymk] the symbol of its derivative define, or -1 */
    size_t nsymk;
    size_t *pend;               /* derivative defines whose text is still to write */
    size_t npend, cappend;
} sctx;

static const hs_node *parse_text(sctx *S, const char *t, size_t len, size_t off0);

static const hs_node *named_node(sctx *S, int map, size_t i, const hs_node **cache,
                                 signed char *state)
{
    fam *F = S->F;
    if (state[i] == 2)
        return cache[i];
    yaml_node_pair_t p = NODEP(F, map)->data.mapping.pairs.start[i];
    if (state[i] == 1) {
        hs_ytree_error(F->y, F->err, NODEP(F, p.key), "'%s' depends on itself", hs_bd_str(F, p.key));
        return NULL;
    }
    yaml_node_t *v = NODEP(F, p.value);
    if (v->type != YAML_SCALAR_NODE) {
        hs_ytree_error(F->y, F->err, v, "%s must be an expression, found %s",
                       map == S->emb ? "an ambient coordinate" : "a define", hs_ytree_kind(v));
        return NULL;
    }
    state[i] = 1;
    int saved = S->node;
    S->node = p.value;
    const hs_node *e = parse_text(S, (const char *)v->data.scalar.value, v->data.scalar.length, 0);
    S->node = saved;
    state[i] = 2;
    cache[i] = e;
    return e;
}

/* Room for symbol sym in the opaque tables. */
static int symk_grow(sctx *S, int sym)
{
    if ((size_t)sym < S->nsymk)
        return 0;
    size_t c = S->nsymk ? S->nsymk : 64;
    while (c <= (size_t)sym)
        c *= 2;
    int *a = realloc(S->symdef, c * sizeof *a);
    if (a)
        S->symdef = a;
    int *b = a ? realloc(S->symder, c * sizeof *b) : NULL;
    if (b)
        S->symder = b;
    int *q = b ? realloc(S->symq, c * sizeof *q) : NULL;
    if (!q)
        return -1;
    S->symq = q;
    for (size_t k = S->nsymk; k < c; k++)
        S->symdef[k] = S->symq[k] = 0, S->symder[k] = -1;
    S->nsymk = c;
    return 0;
}

/* The symbol of define i, named as the define (opaque), or -1. */
static int define_symbol(sctx *S, size_t i)
{
    fam *F = S->F;
    const char *nm = hs_bd_str(F, NODEP(F, S->defs)->data.mapping.pairs.start[i].key);
    int sym = nm ? hs_dag_symbol(S->d, nm) : -1;
    if (sym < 0 || symk_grow(S, sym))
        return -1;
    S->symdef[sym] = (int)i + 1;
    return sym;
}

/* The symbol of the derivative define X__D of the define symbol sym,
 * made when first asked for (its text written by deriv_defines), or -1
 * (the error recorded). */
static int deriv_symbol(sctx *S, int sym)
{
    fam *F = S->F;
    if (S->symder[sym] >= 0)
        return S->symder[sym];
    size_t i = (size_t)S->symdef[sym] - 1;
    buf nm = { 0 };
    if (hs_bd_bprintf(&nm, "%s__D", hs_dag_symbol_name(S->d, sym)))
        return hs_fm_oom(F), -1;
    while (hs_strmap_get(&S->dtab, nm.s, nm.len) >= 0 || hs_strmap_get(&S->qtab, nm.s, nm.len) >= 0 ||
           hs_strmap_get(&S->ptab, nm.s, nm.len) >= 0 || hs_strmap_get(&S->atab, nm.s, nm.len) >= 0)
        if (hs_bd_bprintf(&nm, "_")) {
            free(nm.s);
            return hs_fm_oom(F), -1;
        }
    int tmpl = NODEP(F, S->defs)->data.mapping.pairs.start[i].value;
    int rc = hs_bd_add_entry(F, S->defs, nm.s, "0", tmpl);
    free(nm.s);
    if (rc)
        return -1;
    size_t ni = hs_bd_map_size(F, S->defs) - 1;
    const char *key = hs_bd_str(F, NODEP(F, S->defs)->data.mapping.pairs.start[ni].key);
    if (hs_strmap_put(&S->dtab, key, strlen(key), (long)ni, NULL) < 0 ||
        hs_fm_grow((void **)&S->pend, &S->cappend, 2 * S->npend + 2, sizeof *S->pend))
        return hs_fm_oom(F), -1;
    int ds = define_symbol(S, ni);
    if (ds < 0)
        return hs_fm_oom(F), -1;
    S->symder[sym] = ds;
    S->pend[2 * S->npend] = ni;
    S->pend[2 * S->npend + 1] = i;
    S->npend++;
    return ds;
}

static const hs_node *D_of(sctx *S, const hs_node *e)
{
    /* D = d/dt + q' d/dq + q'' d/dq': both levels as one direction (and
     * a define X to its X__D, opaque) */
    size_t n = S->n, ns = 2 * n;
    const int32_t *sy = S->opaque ? hs_node_symbols(e, &ns) : NULL;
    int *qs = malloc(ns * sizeof *qs + 1), *vs = malloc(ns * sizeof *vs + 1);
    if (!qs || !vs) {
        free(qs);
        free(vs);
        return NULL;
    }
    size_t m = 0;
    for (size_t k = 0; !S->opaque && k < n; k++) {
        qs[k] = S->q[k], qs[n + k] = S->v[k];
        vs[k] = S->v[k], vs[n + k] = S->a[k];
        m = 2 * n;
    }
    for (size_t k = 0; S->opaque && k < ns; k++) {
        int s = sy[k], c = (size_t)s < S->nsymk ? S->symq[s] : 0, ds;
        if (c > 0 && (size_t)c <= 2 * n) {
            qs[m] = s;
            vs[m++] = (size_t)c <= n ? S->v[c - 1] : S->a[c - 1 - n];
        } else if ((size_t)s < S->nsymk && S->symdef[s]) {
            if ((ds = deriv_symbol(S, s)) < 0) {
                free(qs);
                free(vs);
                return NULL;
            }
            qs[m] = s;
            vs[m++] = ds;
        }
    }
    const hs_node *r = hs_total_diff(S->d, e, S->tsym, m, qs, vs);
    free(qs);
    free(vs);
    return r;
}

static const hs_node *lookup(void *ctx, hs_dag *d, const char *s, size_t len, int primed,
                             size_t off, int *status, hs_error *perr)
{
    sctx *S = ctx;
    (void)off;
    (void)perr;
    *status = HS_RESOLVE_OK;
    long i = hs_strmap_get(&S->qtab, s, len);
    if (i >= 0)
        return hs_sym(d, primed == 0 ? S->q[i] : primed == 1 ? S->v[i] : S->a[i]);
    if (S->emb && (i = hs_strmap_get(&S->atab, s, len)) >= 0) {
        const hs_node *X = named_node(S, S->emb, (size_t)i, S->anode, S->astate);
        if (!X || primed > 1)
            goto bad;
        return primed ? D_of(S, X) : X;
    }
    if (primed) {
        *status = HS_RESOLVE_NO_PRIME;
        return NULL;
    }
    if (len == 1 && s[0] == 't')
        return hs_sym(d, S->tsym);
    if (hs_strmap_get(&S->ptab, s, len) >= 0) {
        char nm[128];
        snprintf(nm, sizeof nm, "%.*s", (int)len, s);
        return hs_sym(d, hs_dag_symbol(d, nm));
    }
    if (S->defs && (i = hs_strmap_get(&S->dtab, s, len)) >= 0) {
        if (S->opaque) {
            int sym = define_symbol(S, (size_t)i);
            if (sym >= 0)
                return hs_sym(d, sym);
            hs_fm_oom(S->F);
            goto bad;
        }
        const hs_node *e = named_node(S, S->defs, (size_t)i, S->dnode, S->dstate);
        if (e)
            return e;
        goto bad;
    }
    *status = HS_RESOLVE_UNKNOWN;
    return NULL;
bad:
    *status = HS_RESOLVE_ERROR;
    perr->code = S->F->err->code ? S->F->err->code : HS_EXIT_MODEL;
    return NULL;
}

static int rewrite_D(sctx *S, const char *t, size_t len, size_t off0, buf *out, int *changed);

/* The names of a table into c[*k] (at most cap). */
static void names_of(const hs_strmap *t, const char **c, size_t *k, size_t cap, char *store,
                     size_t *used, size_t scap)
{
    for (size_t i = 0; i < t->cap && *k < cap; i++) {
        const hs_strmap_slot *sl = &t->slot[i];
        if (!sl->s || sl->len >= 64 || *used + sl->len + 1 > scap)
            continue;
        memcpy(store + *used, sl->s, sl->len);
        store[*used + sl->len] = '\0';
        c[(*k)++] = store + *used;
        *used += sl->len + 1;
    }
}

/* What the parser's message lacks, as the loader adds it to the same
 * message outside the language's sections: a velocity written xdot, vx,
 * dx (" (a velocity is written with a prime: x')"), the nearest known name
 * (" (did you mean 'x'?)"), the nearest coordinate to a name primed that
 * has no velocity. */
static void name_hint(sctx *S, const char *msg, char *hint, size_t cap)
{
    static const char *const pre[] = { "d", "v", "v_" };
    static const char *const suf[] = { "dot", "_dot", "d", "_d", "_v" };
    hint[0] = '\0';
    int unknown = strncmp(msg, "unknown name '", 14) == 0;
    int noprime = msg[0] == '\'' && strstr(msg, "' has no ") != NULL;
    if (!unknown && !noprime)
        return;
    const char *a = msg + (unknown ? 14 : 1), *e = strchr(a, '\'');
    char nm[64];
    if (!e || (size_t)(e - a) >= sizeof nm)
        return;
    memcpy(nm, a, (size_t)(e - a));
    nm[e - a] = '\0';
    size_t len = strlen(nm);
    for (size_t i = 0; unknown && i < 8; i++) {
        const char *p = i < 3 ? pre[i] : "", *z = i < 3 ? "" : suf[i - 3];
        size_t lp = strlen(p), lz = strlen(z);
        if (len > lp + lz && strncmp(nm, p, lp) == 0 && strcmp(nm + len - lz, z) == 0 &&
            hs_strmap_get(&S->qtab, nm + lp, len - lp - lz) >= 0) {
            snprintf(hint, cap, " (a velocity is written with a prime: %.*s')",
                     (int)(len - lp - lz), nm + lp);
            return;
        }
    }
    const char *c[256];
    char store[8192];
    size_t k = 0, used = 0;
    names_of(&S->qtab, c, &k, 256, store, &used, sizeof store);
    if (unknown) {
        names_of(&S->ptab, c, &k, 256, store, &used, sizeof store);
        names_of(&S->dtab, c, &k, 256, store, &used, sizeof store);
        names_of(&S->atab, c, &k, 256, store, &used, sizeof store);
    }
    const char *near = hs_nearest(nm, c, k);
    if (near)
        snprintf(hint, cap, unknown ? " (did you mean '%s'?)" : " (did you mean %s'?)", near);
}

/* Parse text (offset off0 in the scalar S->node) with every D(...)
 * written out first. */
static const hs_node *parse_text(sctx *S, const char *t, size_t len, size_t off0)
{
    fam *F = S->F;
    if (++S->depth > 64) {
        S->depth--;
        hs_ytree_error(F->y, F->err, NODEP(F, S->node), "D(...) and defines nested too deeply");
        return NULL;
    }
    buf b = { 0 };
    int changed = 0;
    const hs_node *e = NULL;
    if (!rewrite_D(S, t, len, off0, &b, &changed)) {
        hs_resolver r = { lookup, S, NULL };
        hs_error pe;
        hs_error_init(&pe);
        const char *txt = changed ? b.s : t;
        size_t tl = changed ? b.len : len;
        e = hs_parse(S->d, txt, tl, -1, &r, &pe);
        char hint[160];
        if (!e && !F->err->code)
            name_hint(S, pe.msg, hint, sizeof hint);
        size_t pos = off0 + (changed ? 0 : pe.offset > 0 ? (size_t)pe.offset : 0);
        if (!e && !F->err->code)
            hs_ytree_error_in(F->y, F->err, NODEP(F, S->node),
                              pos >= S->shift ? pos - S->shift : 0, "%s%s%s", pe.msg, hint,
                              changed ? " (in an argument of D)" : "");
    }
    free(b.s);
    S->depth--;
    return e;
}

/* The printed text of e appended to out, in parentheses. */
static int print_node(sctx *S, const hs_node *e, buf *out)
{
    size_t n = hs_format(S->d, e, NULL, 0);
    char *p = malloc(n + 1);
    if (!p)
        return hs_fm_oom(S->F);
    hs_format(S->d, e, p, n + 1);
    int rc = hs_bd_bprintf(out, "(%s)", p);
    free(p);
    return rc ? hs_fm_oom(S->F) : 0;
}

/* t with each D(arg) replaced by the printed total derivative of arg. */
static int rewrite_D(sctx *S, const char *t, size_t len, size_t off0, buf *out, int *changed)
{
    fam *F = S->F;
    size_t i = 0, last = 0;
    while (i < len) {
        if (t[i] == 'D' && (i == 0 || !(isalnum((unsigned char)t[i - 1]) || t[i - 1] == '_' ||
                                        t[i - 1] == '.')) &&
            i + 1 < len && t[i + 1] == '(') {
            int depth = 0;
            size_t j = i + 1;
            for (; j < len; j++)
                if (t[j] == '(')
                    depth++;
                else if (t[j] == ')' && --depth == 0)
                    break;
            if (j >= len)
                return hs_ytree_error_in(F->y, F->err, NODEP(F, S->node), off0 + i + 1,
                                         "'(' of D is not closed");
            const hs_node *e = parse_text(S, t + i + 2, j - i - 2, off0 + i + 2);
            if (!e)
                return F->err->code ? F->err->code : HS_EXIT_MODEL;
            for (size_t k = 0; k < S->n; k++)       /* D(x'') would need x''' */
                if (hs_depends_on(e, S->a[k]))
                    return hs_ytree_error_in(F->y, F->err, NODEP(F, S->node), off0 + i,
                                             "D(...) of an expression holding the acceleration "
                                             "%s: holosim has no third derivatives (D of D of D, "
                                             "or D of an acceleration)",
                                             hs_dag_symbol_name(S->d, S->a[k]));
            const hs_node *de = D_of(S, e);
            if ((!de || hs_dag_failed(S->d)) &&
                (!hs_dag_failed(S->d) || hs_dag_error(S->d)->code == HS_EXIT_NOMEM))
                return hs_error_nomem(F->err);
            if (!de || hs_dag_failed(S->d))
                return hs_ytree_error_in(F->y, F->err, NODEP(F, S->node), off0 + i,
                                         "D(...): %s", hs_dag_failed(S->d)
                                             ? hs_dag_error(S->d)->msg : "out of memory");
            if (hs_bd_bprintf(out, "%.*s", (int)(i - last), t + last) || print_node(S, de, out))
                return hs_fm_oom(F);
            *changed = 1;
            i = last = j + 1;
            continue;
        }
        i++;
    }
    if (*changed && hs_bd_bprintf(out, "%.*s", (int)(len - last), t + last))
        return hs_fm_oom(F);
    return 0;
}

static void sctx_free(sctx *S)
{
    hs_dag_free(S->d);
    free(S->q);
    free(S->v);
    free(S->a);
    hs_strmap_free(&S->qtab);
    hs_strmap_free(&S->ptab);
    hs_strmap_free(&S->dtab);
    hs_strmap_free(&S->atab);
    free(S->dnode);
    free(S->dstate);
    free(S->anode);
    free(S->astate);
    free(S->tmp.s);
    free(S->symdef);
    free(S->symder);
    free(S->symq);
    free(S->pend);
}

size_t hs_bd_map_size(fam *F, int id)
{
    yaml_node_t *n = NODEP(F, id);
    return n->type == YAML_MAPPING_NODE
               ? (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start) : 0;
}

static int keys_into(fam *F, int map, hs_strmap *t)
{
    size_t n = hs_bd_map_size(F, map);
    for (size_t i = 0; i < n; i++) {
        const char *k = hs_bd_str(F, NODEP(F, map)->data.mapping.pairs.start[i].key);
        if (k && hs_strmap_put(t, k, strlen(k), (long)i, NULL) < 0)
            return hs_fm_oom(F);
    }
    return 0;
}

static int sctx_init(sctx *S, fam *F, int root)
{
    memset(S, 0, sizeof *S);
    S->F = F;
    if (!(S->d = hs_dag_new()))
        return hs_fm_oom(F);
    S->tsym = hs_dag_symbol(S->d, "t");
    int coords = hs_fm_get(F, root, "coordinates", NULL);
    if (coords && NODEP(F, coords)->type == YAML_SEQUENCE_NODE) {
        yaml_node_t *c = NODEP(F, coords);
        S->n = (size_t)(c->data.sequence.items.top - c->data.sequence.items.start);
    }
    S->q = calloc(S->n + 1, sizeof *S->q);
    S->v = calloc(S->n + 1, sizeof *S->v);
    S->a = calloc(S->n + 1, sizeof *S->a);
    if (!S->q || !S->v || !S->a)
        return hs_fm_oom(F);
    for (size_t i = 0; i < S->n; i++) {
        const char *nm = hs_bd_str(F, NODEP(F, coords)->data.sequence.items.start[i]);
        if (!nm)
            nm = "?";
        char b[160];
        S->q[i] = hs_dag_symbol(S->d, nm);
        snprintf(b, sizeof b, "%s'", nm);
        S->v[i] = hs_dag_symbol(S->d, b);
        snprintf(b, sizeof b, "%s''", nm);
        S->a[i] = hs_dag_symbol(S->d, b);
        if (hs_strmap_put(&S->qtab, nm, strlen(nm), (long)i, NULL) < 0)
            return hs_fm_oom(F);
        int top = S->q[i] > S->v[i] ? S->q[i] : S->v[i];
        if (S->a[i] < 0 || symk_grow(S, top > S->a[i] ? top : S->a[i]))
            return hs_fm_oom(F);
        S->symq[S->q[i]] = (int)i + 1;
        S->symq[S->v[i]] = (int)(S->n + i) + 1;
        S->symq[S->a[i]] = (int)(2 * S->n + i) + 1;
    }
    int pm = hs_fm_get(F, root, "parameters", NULL);
    if (pm && keys_into(F, pm, &S->ptab))
        return F->err->code;
    S->defs = hs_fm_get(F, root, "define", NULL);
    S->ndef = S->defs ? hs_bd_map_size(F, S->defs) : 0;
    S->emb = hs_fm_get(F, root, "embedding", NULL);
    S->namb = S->emb ? hs_bd_map_size(F, S->emb) : 0;
    S->dnode = calloc(S->ndef + 1, sizeof *S->dnode);
    S->dstate = calloc(S->ndef + 1, 1);
    S->anode = calloc(S->namb + 1, sizeof *S->anode);
    S->astate = calloc(S->namb + 1, 1);
    if (!S->dnode || !S->dstate || !S->anode || !S->astate)
        return hs_fm_oom(F);
    if ((S->defs && keys_into(F, S->defs, &S->dtab)) || (S->emb && keys_into(F, S->emb, &S->atab)))
        return F->err->code;
    return 0;
}

int hs_bd_moving(fam *F, int root, const int *nodes, size_t n)
{
    sctx S;
    hs_error saved = *F->err;
    int moving = sctx_init(&S, F, root) != 0;
    for (size_t i = 0; !moving && i < n; i++) {
        yaml_node_t *v = NODEP(F, nodes[i]);
        S.node = nodes[i];
        const hs_node *e = v->type == YAML_SCALAR_NODE
                               ? parse_text(&S, (const char *)v->data.scalar.value,
                                            v->data.scalar.length, 0) : NULL;
        moving = !e || hs_depends_on(e, S.tsym);
    }
    sctx_free(&S);
    *F->err = saved;            /* a bad text is the body's own error, later */
    return moving;
}

/* ---------- editing the root ---------- */

/* The mapping under key in the root, made when missing; 0 with a
 * positioned error when the file gives that key something else (empty, a
 * list, a scalar), since entries are added to it. */
int hs_bd_section(fam *F, int root, const char *key, int tmpl)
{
    int v = hs_fm_get(F, root, key, NULL);
    if (v && NODEP(F, v)->type != YAML_MAPPING_NODE) {
        hs_ytree_error(F->y, F->err, NODEP(F, v), "'%s' must be a mapping, found %s "
                       "(KEY: VALUE entries, or {K: V}): holosim adds entries to it for the "
                       "points, bodies, springs or dissipation", key,
                       hs_ytree_kind(NODEP(F, v)));
        return 0;
    }
    if (v)
        return v;
    int k = hs_fm_add_scalar(F, key, strlen(key), tmpl, 1);
    int m = k ? hs_fm_add_map(F, tmpl) : 0;
    if (!m || hs_fm_append_pair(F, root, k, m))
        return 0;
    return m;
}

int hs_bd_add_entry(fam *F, int map, const char *name, const char *text, int tmpl)
{
    int k = hs_fm_add_scalar(F, name, strlen(name), tmpl, 1);
    int v = k ? hs_fm_add_scalar(F, text, strlen(text), tmpl, 1) : 0;
    return v ? hs_fm_append_pair(F, map, k, v) : F->err->code;
}

/* forces[q_i] += -dR/dq_i' for the dissipation R. */
static int dissipation_forces(fam *F, sctx *S, int root, const char *R, size_t roff, int tmpl)
{
    if (hs_fm_get(F, root, "embedding", NULL))
        return hs_ytree_error(F->y, F->err, NODEP(F, tmpl), "a dissipation function (or a "
                              "damper) needs the Cartesian or Lagrangian form: in the embedding "
                              "form the forces speak of the ambient names");
    int saved = S->node;
    int tn = hs_fm_add_scalar(F, R, strlen(R), tmpl, 1);
    if (!tn)
        return F->err->code;
    S->node = roff ? tmpl : tn; /* errors at the file's text (roff into R) */
    S->shift = roff;
    const hs_node *e = parse_text(S, R, strlen(R), 0);
    S->node = saved;
    S->shift = 0;
    if (!e)
        return F->err->code ? F->err->code : HS_EXIT_MODEL;
    int fk, forces = hs_fm_get(F, root, "forces", &fk);
    if (forces && NODEP(F, forces)->type != YAML_MAPPING_NODE)
        return hs_ytree_error(F->y, F->err, NODEP(F, forces), "with a dissipation function, "
                              "write 'forces' as a mapping coordinate -> force, found %s",
                              hs_ytree_kind(NODEP(F, forces)));
    if (!forces && !(forces = hs_bd_section(F, root, "forces", tmpl)))
        return F->err->code;
    for (size_t i = 0; i < S->n; i++) {
        const hs_node *g = hs_diff(S->d, e, S->v[i]);
        if ((!g || hs_dag_failed(S->d)) &&
            (!hs_dag_failed(S->d) || hs_dag_error(S->d)->code == HS_EXIT_NOMEM))
            return hs_error_nomem(F->err);
        if (!g || hs_dag_failed(S->d))
            return hs_ytree_error(F->y, F->err, NODEP(F, tmpl), "dissipation: %s",
                                  hs_dag_failed(S->d) ? hs_dag_error(S->d)->msg : "out of memory");
        if (hs_is_num(g, 0))
            continue;
        buf b = { 0 };
        if (hs_bd_bprintf(&b, "-") || print_node(S, g, &b))
            return hs_fm_oom(F);
        const char *qn = hs_dag_symbol_name(S->d, S->q[i]);
        int done = 0;
        yaml_node_t *fm = NODEP(F, forces);
        for (size_t z = 0; z < hs_bd_map_size(F, forces) && !done; z++) {
            yaml_node_pair_t *p = &fm->data.mapping.pairs.start[z];
            const char *ks = hs_bd_str(F, p->key), *old = hs_bd_str(F, p->value);
            if (!ks || strcmp(ks, qn) != 0 || !old)
                continue;
            buf c = { 0 };
            if (hs_bd_bprintf(&c, "(%s) + %s", old, b.s))
                return hs_fm_oom(F);
            int pv = p->value;
            int id = hs_fm_add_scalar(F, c.s, c.len, pv, 1);
            free(c.s);
            if (!id)
                return F->err->code;
            NODEP(F, forces)->data.mapping.pairs.start[z].value = id;
            done = 1;
        }
        int rc = done ? 0 : hs_bd_add_entry(F, forces, qn, b.s, tmpl);
        free(b.s);
        if (rc)
            return rc;
    }
    (void)fk;
    return 0;
}

/* Every scalar under id with D(...) written out (new nodes in place). */
static int expand_D_tree(fam *F, sctx *S, int id, int *out)
{
    yaml_node_t *n = NODEP(F, id);
    *out = id;
    if (n->type == YAML_SCALAR_NODE) {
        const char *t = (const char *)n->data.scalar.value;
        size_t len = n->data.scalar.length;
        if (!strstr(t, "D("))
            return 0;
        buf b = { 0 };
        int changed = 0;
        S->node = id;
        int rc = rewrite_D(S, t, len, 0, &b, &changed);
        if (!rc && changed) {
            int nid = hs_fm_add_scalar(F, b.s, b.len, id, 1);
            if (!nid)
                rc = F->err->code;
            *out = nid;
        }
        free(b.s);
        return rc;
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        yaml_node_t *sq = NODEP(F, id);
        int len = (int)(sq->data.sequence.items.top - sq->data.sequence.items.start);
        for (int i = 0; i < len; i++) {
            int o;
            if (expand_D_tree(F, S, NODEP(F, id)->data.sequence.items.start[i], &o))
                return F->err->code;
            NODEP(F, id)->data.sequence.items.start[i] = o;
        }
    } else if (n->type == YAML_MAPPING_NODE) {
        for (size_t i = 0; i < hs_bd_map_size(F, id); i++) {
            int o;
            if (expand_D_tree(F, S, NODEP(F, id)->data.mapping.pairs.start[i].value, &o))
                return F->err->code;
            NODEP(F, id)->data.mapping.pairs.start[i].value = o;
        }
    }
    return 0;
}

/* Whether any scalar of the file holds D( (a cheap scan of the text). */
int hs_bd_text_has_D(fam *F)
{
    const char *t = F->y->text;
    for (const char *p = t; (p = strstr(p, "D(")); p++)
        if (p == t || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.'))
            return 1;
    return 0;
}

static const char *const d_sections[] = {
    "define", "potential", "forces", "outputs", "events", "kinetic", "lagrangian",
    "constraints", "embedding", "mass",
};

/* The text of each derivative define X__D made (deriv_symbol): the
 * printed derivative of X's own text, its defines opaque, so that each
 * stays as long as X (a chain's velocities O(N) text, not O(N^2)). */
static int deriv_defines(fam *F, sctx *S)
{
    while (S->npend) {
        S->npend--;
        size_t ni = S->pend[2 * S->npend], i = S->pend[2 * S->npend + 1];
        int v = NODEP(F, S->defs)->data.mapping.pairs.start[i].value;
        yaml_node_t *vn = NODEP(F, v);
        if (vn->type != YAML_SCALAR_NODE)
            return hs_ytree_error(F->y, F->err, vn, "a define must be an expression, found %s",
                                  hs_ytree_kind(vn));
        S->node = v;
        const hs_node *e = parse_text(S, (const char *)vn->data.scalar.value,
                                      vn->data.scalar.length, 0);
        if (!e)
            return F->err->code ? F->err->code : HS_EXIT_MODEL;
        for (size_t k = 0; k < S->n; k++)
            if (hs_depends_on(e, S->a[k]))
                return hs_ytree_error(F->y, F->err, NODEP(F, v), "D(...) of an expression "
                                      "holding the acceleration %s (through this define): "
                                      "holosim has no third derivatives",
                                      hs_dag_symbol_name(S->d, S->a[k]));
        const hs_node *de = D_of(S, e);
        if (!de || hs_dag_failed(S->d))
            return F->err->code ? F->err->code
                   : !hs_dag_failed(S->d) || hs_dag_error(S->d)->code == HS_EXIT_NOMEM
                       ? hs_error_nomem(F->err)
                       : hs_ytree_error(F->y, F->err, NODEP(F, v), "D(...): %s",
                                        hs_dag_error(S->d)->msg);
        buf b = { 0 };
        if (print_node(S, de, &b))
            return F->err->code;
        int id = hs_fm_add_scalar(F, b.s, b.len, v, 1);
        free(b.s);
        if (!id)
            return F->err->code;
        NODEP(F, S->defs)->data.mapping.pairs.start[ni].value = id;
    }
    return 0;
}

int hs_bd_D_pass(fam *F, int root, const char *diss, size_t diss_off, int diss_tmpl)
{
    sctx S;
    int rc = 0, have_S = 0;
    if (!rc && (diss || hs_bd_text_has_D(F) || hs_fm_get(F, root, "kinetic", NULL) ||
                 hs_fm_get(F, root, "embedding", NULL))) {
        rc = sctx_init(&S, F, root);
        have_S = 1;
        /* a large model: defines opaque (a dissipation's dR/dq' reads
         * through them, so not with one) */
        S.opaque = !diss && S.defs && S.n >= HS_LANG_CHAIN_MIN_N;
    }
    if (!rc && diss)
        rc = dissipation_forces(F, &S, root, diss, diss_off, diss_tmpl);
    for (size_t s = 0; !rc && have_S && s < sizeof d_sections / sizeof *d_sections; s++) {
        int v = hs_fm_get(F, root, d_sections[s], NULL), o;
        if (!v)
            continue;
        rc = expand_D_tree(F, &S, v, &o);
        if (!rc && o != v) {
            yaml_node_t *rr = NODEP(F, root);
            for (yaml_node_pair_t *p = rr->data.mapping.pairs.start; p < rr->data.mapping.pairs.top; p++)
                if (p->value == v)
                    p->value = o;
        }
    }
    if (!rc && have_S)
        rc = deriv_defines(F, &S);
    if (have_S)
        sctx_free(&S);
    return rc;
}
