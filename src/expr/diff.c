/* Analysis and rewriting of expressions: exact derivatives (partial, total,
 * gradients), substitution, the symbols an expression uses.
 *
 * Derivatives are taken along a direction: a partial d/ds, or a seeded one
 * (the total derivative D = d/dt + sum v_i d/dq_i seeds t with 1 and q_i
 * with v_i).  Every result is kept in the dag's cache under (direction,
 * node), so repeated and overlapping derivatives (G_q, then Gdot, then
 * gamma; d2L/dv_i dv_j for every pair) reuse all earlier work, and a node
 * that does not depend on the direction (its symbol set, kept in the node,
 * misses it) is 0 without a visit.  The walks use explicit stacks, so the
 * C stack never grows with the expression depth. */
#include "internal.h"
#include "../util/map.h"
#include "../util/vec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- a map node id -> node, open addressing (substitution) ---- */

/* node id -> its image (util/map.h) */
typedef hs_idmap memo;

static const hs_node *memo_get(const memo *m, const hs_node *e)
{
    const hs_node *const *v = HS_IDMAP_GET(m, e->id, const hs_node *);
    return v ? *v : NULL;
}

/* 0, or -1 when out of memory (the caller reports it) */
static int memo_put(memo *m, const hs_node *e, const hs_node *v)
{
    const hs_node **slot = HS_IDMAP_PUT(m, e->id, const hs_node *);
    if (!slot)
        return -1;
    *slot = v;
    return 0;
}

/* ---- an explicit stack of (node, next argument) for post-order walks ---- */

typedef struct frame {
    const hs_node *n;
    uint32_t i;
    uint32_t npos;          /* pos != NULL: visit args[pos[0 .. npos-1]] only */
    const uint32_t *pos;
} frame;

typedef struct stack {
    frame *f;
    size_t top, cap;
} stack;

static int push(stack *s, const hs_node *n)
{
    if (HS_VEC_RESERVE(s->f, s->cap, s->top + 1))
        return -1;
    s->f[s->top++] = (frame){n, 0, 0, NULL};
    return 0;
}

/* ---- directions ---- */

/* Cache tags: a partial d/ds is tag s; a seeded direction is SEEDED | the
 * id of its interned seed array. */
#define SEEDED 0x80000000u
enum { SEED_MARK = -2, SEED_ONE = -1 };

typedef struct dirn {
    uint32_t tag;
    int32_t sym;            /* a partial: the symbol; -1 for a seeded direction */
    const int32_t *w;       /* seeded: np pairs (symbol, seed), sorted by symbol; */
    size_t np;              /* seed = a velocity symbol, or SEED_ONE */
} dirn;

/* Index of the pair for symbol s, or -1. */
static long seed_index(const dirn *w, int32_t s)
{
    size_t lo = 0, hi = w->np;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->w[2 * mid] < s)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < w->np && w->w[2 * lo] == s ? (long)lo : -1;
}

/* Does e depend on a symbol the direction moves? */
static int depends(const dirn *w, const hs_node *e)
{
    const struct hs_symset *s = e->syms;
    if (w->sym >= 0)
        return hs_symset_has(s, w->sym);
    if (!s->n || !w->np || s->s[s->n - 1] < w->w[0] || s->s[0] > w->w[2 * (w->np - 1)])
        return 0;
    for (uint32_t i = 0; i < s->n; i++)
        if (seed_index(w, s->s[i]) >= 0)
            return 1;
    return 0;
}

/* ---- derivatives ---- */

typedef struct dctx {
    hs_dag *d;
    dirn w;
    const hs_node *zero, *one;
    size_t start;           /* dag size when the call began (work limit) */
    hs_srcpos at;           /* where a limit error is reported */
    int stop;
} dctx;

/* The derivative of c when it needs no rule: 0 for a number or a node
 * independent of the direction, the seed for a symbol, a cached result;
 * NULL when c must be derived. */
static const hs_node *quick(dctx *x, const hs_node *c)
{
    if (c->kind == HS_NUM)
        return x->zero;
    if (c->kind == HS_SYM) {
        if (x->w.sym >= 0)
            return c->sym == x->w.sym ? x->one : x->zero;
        long i = seed_index(&x->w, c->sym);
        if (i < 0)
            return x->zero;
        int32_t v = x->w.w[2 * i + 1];
        return v == SEED_ONE ? x->one : hs_sym(x->d, v);
    }
    if (!depends(&x->w, c))
        return x->zero;
    return hs_dag_cache_get(x->d, x->w.tag, c->id);
}

/* Products with more factors that depend on the direction than this are
 * differentiated by halves (below); up to it, by the n-ary rule. */
enum { PRODUCT_RULE_MAX = 8 };

/* D(g[lo..hi)) by halves: D(A B) = D(A) B + A D(B).  The n-ary rule would
 * build m terms of m factors (m^2, then m^3 for a second derivative);
 * halves build O(m log m), the sums D(A), D(B) kept as factors (never
 * expanded).  Recursion depth log2(m). */
static void product_halves(hs_dag *d, const hs_node *const *g, const hs_node *const *dg,
                           size_t lo, size_t hi, const hs_node **P, const hs_node **DP)
{
    if (hi - lo == 1) {
        *P = g[lo];
        *DP = dg[lo];
        return;
    }
    size_t mid = lo + (hi - lo) / 2;
    const hs_node *A, *DA, *B, *DB;
    product_halves(d, g, dg, lo, mid, &A, &DA);
    product_halves(d, g, dg, mid, hi, &B, &DB);
    *P = hs_mul(d, A, B);
    *DP = hs_add(d, hs_mul(d, DA, B), hs_mul(d, A, DB));
}

static const hs_node *d_product(dctx *x, const hs_node *e, const hs_node *const *de)
{
    hs_dag *d = x->d;
    size_t n = e->nargs, m = 0, k = 0;
    const hs_node *local[4 * 8], **g = n <= 8 ? local : malloc(4 * n * sizeof *g);
    if (!g) {
        hs_dag_nomem(d);
        return x->zero;
    }
    const hs_node **dg = g + n, **kf = g + 2 * n, **t = g + 3 * n;
    for (size_t i = 0; i < n; i++) {
        if (hs_is_num(de[i], 0)) {
            kf[k++] = e->args[i];
        } else {
            g[m] = e->args[i];
            dg[m++] = de[i];
        }
    }
    const hs_node *r;
    if (m <= PRODUCT_RULE_MAX) {
        /* sum_i a_i' * prod_{j != i} a_j */
        const hs_node **p = kf + k;   /* kf has room for n: k + n - k */
        size_t nt = 0;
        for (size_t i = 0; i < n; i++) {
            if (hs_is_num(de[i], 0))
                continue;
            for (size_t j = 0; j < n; j++)
                t[j] = j == i ? de[i] : e->args[j];
            p[nt++] = hs_muln(d, t, n);
        }
        r = hs_addn(d, p, nt);
    } else {
        const hs_node *P, *DP;
        product_halves(d, g, dg, 0, m, &P, &DP);
        kf[k++] = DP;
        r = hs_muln(d, kf, k);
    }
    if (g != local)
        free(g);
    return r;
}

static const hs_node *d_power(dctx *x, const hs_node *e, const hs_node *da, const hs_node *db)
{
    hs_dag *d = x->d;
    const hs_node *a = e->args[0], *b = e->args[1];
    if (hs_is_num(da, 0) && hs_is_num(db, 0))
        return x->zero;
    if (hs_is_num(db, 0)) /* (a^b)' = b a^(b-1) a' for b constant */
        return hs_muln(d, (const hs_node *[]){b, hs_pow(d, a, hs_add(d, b, hs_num(d, -1))), da}, 3);
    if (a->kind == HS_NUM && a->value <= 0) {
        /* 0^b is 0 wherever it is differentiable; (-c)^b is real only
         * at integers b, where it has no derivative in b */
        if (a->value == 0)
            return x->zero;
        hs_dag_fail(d, hs_dag_pos(d), "cannot differentiate a power of a negative "
                    "number with respect to its exponent");
        return x->zero;
    }
    if (hs_is_num(da, 0)) /* (a^b)' = a^b log(a) b' for a constant */
        return hs_muln(d, (const hs_node *[]){e, hs_call1(d, HS_LOG, a), db}, 3);
    /* (a^b)' = a^b (b' log a + b a'/a) */
    return hs_mul(d, e, hs_add(d, hs_mul(d, db, hs_call1(d, HS_LOG, a)),
                               hs_muln(d, (const hs_node *[]){b, da, hs_pow(d, a, hs_num(d, -1))}, 3)));
}

/* The derivative of e from its arguments' derivatives de[i] (0 for the
 * arguments needs_arg skips); a sum walked through its index has only
 * the nde derivatives of the terms that depend on the direction. */
static const hs_node *d_rule(dctx *x, const hs_node *e, const hs_node *const *de, size_t nde)
{
    hs_dag *d = x->d;
    const hs_node *zero = x->zero, *one = x->one;
    const hs_node *a = e->nargs > 0 ? e->args[0] : NULL;
    const hs_node *b = e->nargs > 1 ? e->args[1] : NULL;
    const hs_node *da = nde > 0 ? de[0] : zero;
    const hs_node *db = nde > 1 ? de[1] : zero;
    const hs_node *two = hs_num(d, 2);

    switch (e->kind) {
    case HS_NUM: case HS_SYM:
        return quick(x, e);
    case HS_ADD: {
        /* the terms that depend on the direction only */
        const hs_node *local[8], **t = nde <= 8 ? local : malloc(nde * sizeof *t);
        if (!t)
            break;
        size_t nt = 0;
        for (size_t i = 0; i < nde; i++)
            if (!hs_is_num(de[i], 0))
                t[nt++] = de[i];
        const hs_node *r = hs_addn(d, t, nt);
        if (t != local)
            free(t);
        return r;
    }
    case HS_MUL:
        return d_product(x, e, de);
    case HS_POW:
        return d_power(x, e, da, db);
    case HS_SIN:
        return hs_mul(d, hs_call1(d, HS_COS, a), da);
    case HS_COS:
        return hs_neg(d, hs_mul(d, hs_call1(d, HS_SIN, a), da));
    case HS_TAN: /* 1 + tan^2 reuses the tan node */
        return hs_mul(d, hs_add(d, one, hs_pow(d, e, two)), da);
    case HS_ASIN:
    case HS_ACOS: {
        const hs_node *r = hs_div(d, da, hs_call1(d, HS_SQRT, hs_sub(d, one, hs_pow(d, a, two))));
        return e->kind == HS_ASIN ? r : hs_neg(d, r);
    }
    case HS_ATAN:
        return hs_div(d, da, hs_add(d, one, hs_pow(d, a, two)));
    case HS_SINH:
        return hs_mul(d, hs_call1(d, HS_COSH, a), da);
    case HS_COSH:
        return hs_mul(d, hs_call1(d, HS_SINH, a), da);
    case HS_TANH:
        return hs_mul(d, hs_sub(d, one, hs_pow(d, e, two)), da);
    case HS_EXP:
        return hs_mul(d, e, da);
    case HS_LOG:
        return hs_div(d, da, a);
    case HS_SQRT: /* a' / (2 sqrt a) */
        return hs_div(d, da, hs_mul(d, two, e));
    case HS_ABS:
        return hs_mul(d, hs_call1(d, HS_SIGN, a), da);
    case HS_SIGN:
        return zero;
    case HS_ATAN2: /* atan2(y, x)' = (x y' - y x') / (x^2 + y^2) */
        return hs_div(d, hs_sub(d, hs_mul(d, b, da), hs_mul(d, a, db)),
                      hs_add(d, hs_pow(d, a, two), hs_pow(d, b, two)));
    case HS_HYPOT:
        return hs_div(d, hs_add(d, hs_mul(d, a, da), hs_mul(d, b, db)), e);
    case HS_MIN: /* at a tie the first argument's derivative is taken */
        return hs_if(d, hs_call2(d, HS_LE, a, b), da, db);
    case HS_MAX:
        return hs_if(d, hs_call2(d, HS_GE, a, b), da, db);
    case HS_LT: case HS_LE: case HS_GT: case HS_GE: case HS_EQ: case HS_NE:
        return zero;
    case HS_IF:
        return hs_if(d, a, de[1], de[2]);
    case HS_NKINDS:
        break;
    }
    hs_dag_nomem(d);
    return zero;
}

/* Arguments whose derivatives the rule for e reads: all but an if()'s
 * condition; none for comparisons and sign (their derivative is 0). */
static int needs_arg(const hs_node *e, uint32_t i)
{
    switch (e->kind) {
    case HS_IF: return i > 0;
    case HS_SIGN: case HS_LT: case HS_LE: case HS_GT: case HS_GE: case HS_EQ: case HS_NE:
        return 0;
    default: return 1;
    }
}

/* A stack of derivatives: the results of a frame's arguments, in order. */
typedef struct results {
    const hs_node **r;
    size_t top, cap;
} results;

static int rpush(results *s, const hs_node *r)
{
    if (HS_VEC_RESERVE(s->r, s->cap, s->top + 1))
        return -1;
    s->r[s->top++] = r;
    return 0;
}

/* A sum with an index (sumindex.c) visits, along a partial direction,
 * only the terms that use the symbol, in the order of the full walk
 * (the other terms' derivatives are 0 and the sum rule skips them). */
static void index_frame(dctx *x, frame *f)
{
    if (x->w.sym < 0 || f->n->kind != HS_ADD)
        return;
    const hs_sumindex *ix = hs_sumindex_get(x->d, f->n);
    if (!ix)
        return;
    size_t n;
    f->pos = hs_sumindex_terms(ix, x->w.sym, &n);
    f->npos = (uint32_t)n;
}

/* The derivative of root along x->w: post-order over the nodes that depend
 * on the direction and are not cached, each rule applied once.  A frame's
 * argument derivatives are collected on `res` as they become known, so
 * the result never depends on the cache keeping an entry (it may drop
 * them all, see dag.c). */
static const hs_node *derive(dctx *x, const hs_node *root)
{
    hs_dag *d = x->d;
    const hs_node *r = quick(x, root);
    if (r)
        return r;
    if (root->depth > HS_MAX_DEPTH) {
        hs_dag_fail(d, root->pos, "expression nested too deeply");
        return x->zero;
    }
    stack s = {0};
    results res = {0};
    size_t *base = NULL;             /* [s.cap] where a frame's results start */
    hs_srcpos saved = hs_dag_pos(d);
    r = x->zero;
    if (push(&s, root) != 0 || !(base = malloc(s.cap * sizeof *base)))
        goto oom;
    base[0] = 0;
    index_frame(x, &s.f[0]);
    while (s.top && !x->stop) {
        frame *f = &s.f[s.top - 1];
        const hs_node *e = f->n;
        if (f->i < (f->pos ? f->npos : e->nargs)) {
            uint32_t i = f->pos ? f->pos[f->i] : f->i;
            f->i++;
            const hs_node *c = e->args[i], *q = needs_arg(e, i) ? quick(x, c) : x->zero;
            if (q) {
                if (rpush(&res, q) != 0)
                    goto oom;
                continue;
            }
            size_t cap = s.cap;
            if (push(&s, c) != 0)
                goto oom;
            if (s.cap != cap) {
                size_t *nb = realloc(base, s.cap * sizeof *nb);
                if (!nb)
                    goto oom;
                base = nb;
            }
            base[s.top - 1] = res.top;
            index_frame(x, &s.f[s.top - 1]);
            continue;
        }
        /* the derivative is built at e's position, so a run-time error in
         * derivative code points at the expression it came from */
        hs_dag_set_pos(d, e->pos.src >= 0 ? e->pos : saved);
        const hs_node *de = d_rule(x, e, res.r + base[s.top - 1], res.top - base[s.top - 1]);
        hs_dag_cache_put(d, x->w.tag, e->id, de);
        res.top = base[s.top - 1];
        s.top--;
        if (s.top && rpush(&res, de) != 0)
            goto oom;
        if (!s.top)
            r = de;
        if (hs_dag_nnodes(d) - x->start > hs_dag_max_diff_nodes(d)) {
            hs_dag_fail(d, x->at, "expression too large: the derivative work exceeded %zu "
                        "nodes", hs_dag_max_diff_nodes(d));
            x->stop = 1;
            r = x->zero;
        }
    }
    goto out;
oom:
    hs_dag_nomem(d);
    r = x->zero;
out:
    hs_dag_set_pos(d, saved);
    free(s.f);
    free(res.r);
    free(base);
    return r;
}

static void dctx_init(dctx *x, hs_dag *d, const hs_node *e)
{
    x->d = d;
    x->zero = hs_num(d, 0);
    x->one = hs_num(d, 1);
    x->start = hs_dag_nnodes(d);
    x->at = e->pos.src >= 0 ? e->pos : hs_dag_pos(d);
    x->stop = 0;
}

const hs_node *hs_diff(hs_dag *d, const hs_node *e, int sym)
{
    if (sym < 0 || sym >= hs_dag_nsymbols(d) || !hs_symset_has(e->syms, sym))
        return hs_num(d, 0);      /* before any set-up: Jacobians ask this k*n times */
    dctx x;
    dctx_init(&x, d, e);
    x.w = (dirn){(uint32_t)sym, sym, NULL, 0};
    return derive(&x, e);
}

size_t hs_gradient(hs_dag *d, const hs_node *e, const int *syms, size_t nsyms,
                   const hs_node **out)
{
    size_t nz = 0;
    for (size_t j = 0; j < nsyms; j++) {
        out[j] = hs_diff(d, e, syms[j]);
        nz += !hs_is_num(out[j], 0);
    }
    return nz;
}

typedef struct seedpair {
    int32_t sym, seed;
    size_t order;
} seedpair;

static int seedpair_cmp(const void *pa, const void *pb)
{
    const seedpair *a = pa, *b = pb;
    if (a->sym != b->sym)
        return (a->sym > b->sym) - (a->sym < b->sym);
    return (a->order > b->order) - (a->order < b->order);
}

/* The interned seed array [SEED_MARK, s0, seed0, s1, seed1, ...] of D. */
static const struct hs_symset *seed_array(hs_dag *d, int tsym, size_t n, const int *qsym,
                                          const int *vsym)
{
    size_t ns = (size_t)hs_dag_nsymbols(d), m = 0;
    seedpair *p = malloc((n + 1) * sizeof *p);
    int32_t *w = malloc((2 * n + 3) * sizeof *w);
    const struct hs_symset *r = NULL;
    if (!p || !w) {
        hs_dag_nomem(d);
        goto out;
    }
    /* the seed of t is 1, of q_i its velocity; a later entry overrides */
    if (tsym >= 0 && (size_t)tsym < ns)
        p[m++] = (seedpair){tsym, SEED_ONE, 0};
    for (size_t i = 0; i < n; i++)
        if (qsym[i] >= 0 && (size_t)qsym[i] < ns) {
            if (vsym[i] < 0 || (size_t)vsym[i] >= ns) {
                hs_dag_fail(d, hs_dag_pos(d), "internal error: no symbol number %d", vsym[i]);
                goto out;
            }
            p[m++] = (seedpair){qsym[i], vsym[i], i + 1};
        }
    qsort(p, m, sizeof *p, seedpair_cmp);
    size_t k = 0;
    w[k++] = SEED_MARK;
    for (size_t i = 0; i < m; i++)
        if (i + 1 == m || p[i + 1].sym != p[i].sym) {
            w[k++] = p[i].sym;
            w[k++] = p[i].seed;
        }
    r = hs_dag_intern_ints(d, w, k);
out:
    free(p);
    free(w);
    return r;
}

/* seed_array through the dag's memo of the last direction. */
static const struct hs_symset *seed_memo(hs_dag *d, int tsym, size_t n, const int *qsym,
                                         const int *vsym)
{
    hs_seedmemo *s = hs_dag_seedmemo(d);
    if (s->w && s->tsym == tsym && s->n == n && memcmp(s->q, qsym, n * sizeof *qsym) == 0 &&
        memcmp(s->v, vsym, n * sizeof *vsym) == 0)
        return s->w;
    const struct hs_symset *w = seed_array(d, tsym, n, qsym, vsym);
    if (!w)
        return NULL;
    if (n > s->n || !s->q) {
        free(s->q);
        free(s->v);
        s->q = malloc((n ? n : 1) * sizeof *s->q);
        s->v = malloc((n ? n : 1) * sizeof *s->v);
    }
    if (!s->q || !s->v) {       /* no memo: only slower */
        s->w = NULL;
        return w;
    }
    memcpy(s->q, qsym, n * sizeof *qsym);
    memcpy(s->v, vsym, n * sizeof *vsym);
    s->tsym = tsym;
    s->n = n;
    s->w = w;
    return w;
}

const hs_node *hs_total_diff(hs_dag *d, const hs_node *e, int tsym,
                             size_t n, const int *qsym, const int *vsym)
{
    dctx x;
    dctx_init(&x, d, e);
    const struct hs_symset *w = seed_memo(d, tsym, n, qsym, vsym);
    if (!w || w->id >= SEEDED)
        return x.zero;
    x.w = (dirn){SEEDED | w->id, -1, w->s + 1, (w->n - 1) / 2};
    return derive(&x, e);
}

/* ---- substitution ---- */

/* Does the substitution leave e as it is (no symbol of e is mapped)?
 * Then nothing under e needs a visit. */
static int untouched(const hs_node *e, const hs_node *const *map, size_t nmap)
{
    const struct hs_symset *s = e->syms;
    for (uint32_t i = 0; i < s->n; i++)
        if ((size_t)s->s[i] < nmap && map[s->s[i]])
            return 0;
    return 1;
}

/* The substitution of e through the memo m (shared by the roots of one
 * hs_subst_many); NULL when out of memory (the caller reports it). */
static const hs_node *subst_walk(hs_dag *d, const hs_node *e, const hs_node *const *map,
                                 size_t nmap, memo *m)
{
    if (e->kind == HS_SYM)
        return (size_t)e->sym < nmap && map[e->sym] ? map[e->sym] : e;
    if (!e->nargs || untouched(e, map, nmap))
        return e;
    const hs_node *done = memo_get(m, e);
    if (done)
        return done;
    stack s = {0};
    const hs_node *stk[3], **a = stk, *r = NULL;
    size_t acap = 3;
    hs_srcpos saved = hs_dag_pos(d);
    if (push(&s, e) != 0)
        goto out;
    /* post-order: a node is rebuilt once all its arguments are mapped */
    while (s.top) {
        frame *f = &s.f[s.top - 1];
        const hs_node *n = f->n;
        if (f->i < n->nargs) {
            const hs_node *c = n->args[f->i++];
            if (c->nargs && !memo_get(m, c)) {
                if (untouched(c, map, nmap) ? memo_put(m, c, c) != 0 : push(&s, c) != 0)
                    goto out;
            }
            continue;
        }
        if (n->nargs > acap) {
            const hs_node **na = malloc(n->nargs * sizeof *na);
            if (!na)
                goto out;
            if (a != stk)
                free(a);
            a = na;
            acap = n->nargs;
        }
        int changed = 0;
        for (uint32_t i = 0; i < n->nargs; i++) {
            const hs_node *c = n->args[i];
            if (c->kind == HS_SYM)
                a[i] = (size_t)c->sym < nmap && map[c->sym] ? map[c->sym] : c;
            else
                a[i] = c->nargs ? memo_get(m, c) : c;
            changed |= a[i] != c;
        }
        const hs_node *v = n;
        if (changed) {
            hs_dag_set_pos(d, n->pos.src >= 0 ? n->pos : saved);
            v = hs_rebuild(d, n->kind, a, n->nargs, n);
        }
        if (memo_put(m, n, v) != 0)
            goto out;
        s.top--;
    }
    r = memo_get(m, e);
out:
    hs_dag_set_pos(d, saved);
    if (a != stk)
        free(a);
    free(s.f);
    return r;
}

void hs_subst_many(hs_dag *d, const hs_node *const *roots, size_t n,
                   const hs_node *const *map, size_t nmap, const hs_node **out)
{
    memo m = HS_IDMAP_INIT(const hs_node *);
    for (size_t i = 0; i < n; i++) {
        const hs_node *e = roots[i];
        if (e->depth > HS_MAX_DEPTH) {
            hs_dag_fail(d, e->pos, "expression nested too deeply");
            out[i] = hs_num(d, 0);
        } else if (!(out[i] = subst_walk(d, e, map, nmap, &m))) {
            hs_dag_nomem(d);
            out[i] = hs_num(d, 0);
        }
    }
    hs_idmap_free(&m);
}

const hs_node *hs_subst(hs_dag *d, const hs_node *e, const hs_node *const *map,
                        size_t nmap)
{
    const hs_node *r;
    hs_subst_many(d, &e, 1, map, nmap, &r);
    return r;
}

/* ---- symbols used ---- */

void hs_symbols_used(const hs_node *e, unsigned char *used, size_t nsyms)
{
    for (uint32_t i = 0; i < e->syms->n && (size_t)e->syms->s[i] < nsyms; i++)
        used[e->syms->s[i]] = 1;
}

int hs_depends_on(const hs_node *e, int sym)
{
    return sym >= 0 && hs_symset_has(e->syms, sym);
}
