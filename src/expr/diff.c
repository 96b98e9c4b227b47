/* Analysis and rewriting of expressions: exact derivatives (partial and
 * total), substitution, the symbols an expression uses, and a plain
 * recursive evaluator used as a reference by the tests.
 *
 * Every walk memoizes per node (a small hash map keyed by node id), so a
 * dag with shared subexpressions costs its number of distinct nodes, not
 * its tree size.  Recursion depth is bounded by the node depth, which the
 * dag keeps at most HS_MAX_DEPTH. */
#include "expr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- a map node id -> node, open addressing ---- */

typedef struct memo {
    uint32_t *key;          /* [cap] id + 1, 0 = empty */
    const hs_node **val;    /* [cap] */
    size_t cap, n;
    int oom;
} memo;

static void memo_free(memo *m)
{
    free(m->key);
    free(m->val);
}

static size_t slot(uint32_t id, size_t cap)
{
    return (id * 2654435761u) & (cap - 1);
}

static const hs_node *memo_get(const memo *m, const hs_node *e)
{
    if (!m->cap)
        return NULL;
    for (size_t j = slot(e->id, m->cap); m->key[j]; j = (j + 1) & (m->cap - 1))
        if (m->key[j] == e->id + 1)
            return m->val[j];
    return NULL;
}

static void memo_put(memo *m, const hs_node *e, const hs_node *v)
{
    if (2 * (m->n + 1) > m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        uint32_t *k = calloc(cap, sizeof *k);
        const hs_node **w = malloc(cap * sizeof *w);
        if (!k || !w) {
            free(k);
            free(w);
            m->oom = 1; /* the walk continues unmemoized: slower, still right */
            return;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->key[i])
                continue;
            size_t j = slot(m->key[i] - 1, cap);
            while (k[j])
                j = (j + 1) & (cap - 1);
            k[j] = m->key[i];
            w[j] = m->val[i];
        }
        memo_free(m);
        m->key = k;
        m->val = w;
        m->cap = cap;
    }
    size_t j = slot(e->id, m->cap);
    while (m->key[j] && m->key[j] != e->id + 1)
        j = (j + 1) & (m->cap - 1);
    if (!m->key[j])
        m->n++;
    m->key[j] = e->id + 1;
    m->val[j] = v;
}

/* ---- derivatives ---- */

/* A directional derivative: symbol s has derivative seed[s] (NULL = 0). */
typedef struct deriv {
    hs_dag *d;
    const hs_node **seed;   /* [nseed] */
    size_t nseed;
    memo m;
} deriv;

static const hs_node *D(deriv *x, const hs_node *e);

/* The derivative of e, built with e's source position so a run-time error
 * in derivative code points at the expression it came from. */
static const hs_node *D_rule(deriv *x, const hs_node *e)
{
    hs_dag *d = x->d;
    const hs_node *zero = hs_num(d, 0), *one = hs_num(d, 1);
    const hs_node *a = e->nargs > 0 ? e->args[0] : NULL;
    const hs_node *b = e->nargs > 1 ? e->args[1] : NULL;
    const hs_node *da = a ? D(x, a) : zero;
    const hs_node *db = b && e->kind != HS_IF ? D(x, b) : zero;

    switch (e->kind) {
    case HS_NUM:
        return zero;
    case HS_SYM:
        return (size_t)e->sym < x->nseed && x->seed[e->sym] ? x->seed[e->sym] : zero;
    case HS_ADD: {
        const hs_node **t = malloc(e->nargs * sizeof *t);
        if (!t)
            break;
        for (uint32_t i = 0; i < e->nargs; i++)
            t[i] = D(x, e->args[i]);
        const hs_node *r = hs_addn(d, t, e->nargs);
        free(t);
        return r;
    }
    case HS_MUL: {
        /* n-ary product rule: sum_i a_i' * prod_{j != i} a_j */
        size_t n = e->nargs;
        const hs_node **t = malloc(n * sizeof *t), **p = malloc(n * sizeof *p);
        const hs_node *r = NULL;
        if (t && p) {
            size_t nt = 0;
            for (size_t i = 0; i < n; i++) {
                const hs_node *di = D(x, e->args[i]);
                if (hs_is_num(di, 0))
                    continue;
                for (size_t j = 0; j < n; j++)
                    p[j] = j == i ? di : e->args[j];
                t[nt++] = hs_muln(d, p, n);
            }
            r = hs_addn(d, t, nt);
        }
        free(t);
        free(p);
        if (r)
            return r;
        break;
    }
    case HS_POW:
        if (hs_is_num(da, 0) && hs_is_num(db, 0))
            return zero;
        if (hs_is_num(db, 0)) /* (a^b)' = b a^(b-1) a' for b constant */
            return hs_muln(d, (const hs_node *[]){b, hs_pow(d, a, hs_add(d, b, hs_num(d, -1))), da}, 3);
        if (a->kind == HS_NUM && a->value <= 0) {
            /* 0^b is 0 wherever it is differentiable; (-c)^b is real only
             * at integers b, where it has no derivative in b */
            if (a->value == 0)
                return zero;
            hs_dag_fail(d, hs_dag_pos(d), "cannot differentiate a power of a negative "
                        "number with respect to its exponent");
            return zero;
        }
        if (hs_is_num(da, 0)) /* (a^b)' = a^b log(a) b' for a constant */
            return hs_muln(d, (const hs_node *[]){e, hs_call1(d, HS_LOG, a), db}, 3);
        /* (a^b)' = a^b (b' log a + b a'/a) */
        return hs_mul(d, e, hs_add(d, hs_mul(d, db, hs_call1(d, HS_LOG, a)),
                                   hs_muln(d, (const hs_node *[]){b, da, hs_pow(d, a, hs_num(d, -1))}, 3)));
    case HS_SIN:
        return hs_mul(d, hs_call1(d, HS_COS, a), da);
    case HS_COS:
        return hs_neg(d, hs_mul(d, hs_call1(d, HS_SIN, a), da));
    case HS_TAN: /* 1 + tan^2 reuses the tan node */
        return hs_mul(d, hs_add(d, one, hs_pow(d, e, hs_num(d, 2))), da);
    case HS_ASIN:
    case HS_ACOS: {
        const hs_node *r = hs_div(d, da, hs_call1(d, HS_SQRT,
                                                   hs_sub(d, one, hs_pow(d, a, hs_num(d, 2)))));
        return e->kind == HS_ASIN ? r : hs_neg(d, r);
    }
    case HS_ATAN:
        return hs_div(d, da, hs_add(d, one, hs_pow(d, a, hs_num(d, 2))));
    case HS_SINH:
        return hs_mul(d, hs_call1(d, HS_COSH, a), da);
    case HS_COSH:
        return hs_mul(d, hs_call1(d, HS_SINH, a), da);
    case HS_TANH:
        return hs_mul(d, hs_sub(d, one, hs_pow(d, e, hs_num(d, 2))), da);
    case HS_EXP:
        return hs_mul(d, e, da);
    case HS_LOG:
        return hs_div(d, da, a);
    case HS_SQRT: /* a' / (2 sqrt a) */
        return hs_div(d, da, hs_mul(d, hs_num(d, 2), e));
    case HS_ABS:
        return hs_mul(d, hs_call1(d, HS_SIGN, a), da);
    case HS_SIGN:
        return zero;
    case HS_ATAN2: /* atan2(y, x)' = (x y' - y x') / (x^2 + y^2) */
        return hs_div(d, hs_sub(d, hs_mul(d, b, da), hs_mul(d, a, db)),
                      hs_add(d, hs_pow(d, a, hs_num(d, 2)), hs_pow(d, b, hs_num(d, 2))));
    case HS_HYPOT:
        return hs_div(d, hs_add(d, hs_mul(d, a, da), hs_mul(d, b, db)), e);
    case HS_MIN: /* at a tie the first argument's derivative is taken */
        return hs_if(d, hs_call2(d, HS_LE, a, b), da, db);
    case HS_MAX:
        return hs_if(d, hs_call2(d, HS_GE, a, b), da, db);
    case HS_LT: case HS_LE: case HS_GT: case HS_GE: case HS_EQ: case HS_NE:
        return zero;
    case HS_IF:
        return hs_if(d, a, D(x, e->args[1]), D(x, e->args[2]));
    case HS_NKINDS:
        break;
    }
    hs_dag_fail(d, hs_dag_pos(d), "out of memory");
    return zero;
}

static const hs_node *D(deriv *x, const hs_node *e)
{
    const hs_node *r = memo_get(&x->m, e);
    if (r)
        return r;
    hs_srcpos saved = hs_dag_pos(x->d);
    if (e->pos.src >= 0)
        hs_dag_set_pos(x->d, e->pos);
    r = D_rule(x, e);
    hs_dag_set_pos(x->d, saved);
    memo_put(&x->m, e, r);
    return r;
}

static const hs_node *directional(hs_dag *d, const hs_node *e, const hs_node **seed,
                                  size_t nseed)
{
    if (e->depth > HS_MAX_DEPTH) {
        hs_dag_fail(d, e->pos, "expression nested too deeply");
        return hs_num(d, 0);
    }
    deriv x = {d, seed, nseed, {0}};
    const hs_node *r = D(&x, e);
    memo_free(&x.m);
    return r;
}

const hs_node *hs_diff(hs_dag *d, const hs_node *e, int sym)
{
    size_t ns = (size_t)hs_dag_nsymbols(d);
    const hs_node **seed = calloc(ns ? ns : 1, sizeof *seed);
    if (!seed) {
        hs_dag_fail(d, hs_dag_pos(d), "out of memory");
        return hs_num(d, 0);
    }
    if (sym >= 0 && (size_t)sym < ns)
        seed[sym] = hs_num(d, 1);
    const hs_node *r = directional(d, e, seed, ns);
    free(seed);
    return r;
}

const hs_node *hs_total_diff(hs_dag *d, const hs_node *e, int tsym,
                             size_t n, const int *qsym, const int *vsym)
{
    size_t ns = (size_t)hs_dag_nsymbols(d);
    const hs_node **seed = calloc(ns ? ns : 1, sizeof *seed);
    if (!seed) {
        hs_dag_fail(d, hs_dag_pos(d), "out of memory");
        return hs_num(d, 0);
    }
    /* D = d/dt + sum_i v_i d/dq_i: seed t with 1 and q_i with v_i */
    if (tsym >= 0 && (size_t)tsym < ns)
        seed[tsym] = hs_num(d, 1);
    for (size_t i = 0; i < n; i++)
        if (qsym[i] >= 0 && (size_t)qsym[i] < ns)
            seed[qsym[i]] = hs_sym(d, vsym[i]);
    const hs_node *r = directional(d, e, seed, ns);
    free(seed);
    return r;
}

/* ---- substitution ---- */

typedef struct substx {
    hs_dag *d;
    const hs_node *const *map;
    size_t nmap;
    memo m;
} substx;

static const hs_node *S(substx *x, const hs_node *e)
{
    if (e->kind == HS_NUM)
        return e;
    if (e->kind == HS_SYM)
        return (size_t)e->sym < x->nmap && x->map[e->sym] ? x->map[e->sym] : e;
    const hs_node *r = memo_get(&x->m, e);
    if (r)
        return r;
    const hs_node *stack[3], **a = e->nargs <= 3 ? stack : malloc(e->nargs * sizeof *a);
    if (!a) {
        hs_dag_fail(x->d, e->pos, "out of memory");
        return e;
    }
    int changed = 0;
    for (uint32_t i = 0; i < e->nargs; i++) {
        a[i] = S(x, e->args[i]);
        changed |= a[i] != e->args[i];
    }
    r = e;
    if (changed) {
        hs_srcpos saved = hs_dag_pos(x->d);
        if (e->pos.src >= 0)
            hs_dag_set_pos(x->d, e->pos);
        r = hs_rebuild(x->d, e->kind, a, e->nargs, e);
        hs_dag_set_pos(x->d, saved);
    }
    if (a != stack)
        free(a);
    memo_put(&x->m, e, r);
    return r;
}

const hs_node *hs_subst(hs_dag *d, const hs_node *e, const hs_node *const *map,
                        size_t nmap)
{
    if (e->depth > HS_MAX_DEPTH) {
        hs_dag_fail(d, e->pos, "expression nested too deeply");
        return hs_num(d, 0);
    }
    substx x = {d, map, nmap, {0}};
    const hs_node *r = S(&x, e);
    memo_free(&x.m);
    return r;
}

/* ---- symbols used ---- */

/* Visit each distinct node once; visited nodes are kept in a memo. */
static void walk_syms(memo *seen, const hs_node *e, unsigned char *used, size_t nsyms)
{
    if (e->kind == HS_SYM) {
        if ((size_t)e->sym < nsyms)
            used[e->sym] = 1;
        return;
    }
    if (e->nargs == 0 || memo_get(seen, e))
        return;
    for (uint32_t i = 0; i < e->nargs; i++)
        walk_syms(seen, e->args[i], used, nsyms);
    memo_put(seen, e, e); /* when out of memory: unmemoized, slower, still right */
}

void hs_symbols_used(const hs_node *e, unsigned char *used, size_t nsyms)
{
    memo seen = {0};
    walk_syms(&seen, e, used, nsyms);
    memo_free(&seen);
}

int hs_depends_on(const hs_node *e, int sym)
{
    if (sym < 0)
        return 0;
    size_t n = (size_t)sym + 1;
    unsigned char stack[256], *used = n <= sizeof stack ? stack : calloc(n, 1);
    if (!used)
        return 1; /* out of memory: the safe answer */
    memset(used, 0, n);
    hs_symbols_used(e, used, n);
    int r = used[sym];
    if (used != stack)
        free(used);
    return r;
}

/* ---- reference evaluation ---- */

double hs_eval_tree(const hs_node *e, const double *in)
{
    const hs_node *const *a = e->args;
    double x = e->nargs > 0 && e->kind != HS_IF ? hs_eval_tree(a[0], in) : 0;
    double y = e->nargs > 1 && e->kind != HS_IF ? hs_eval_tree(a[1], in) : 0;
    switch (e->kind) {
    case HS_NUM: return e->value;
    case HS_SYM: return in[e->sym];
    case HS_ADD:
        for (uint32_t i = 2; i < e->nargs; i++)
            y += hs_eval_tree(a[i], in);
        return x + y;
    case HS_MUL:
        for (uint32_t i = 2; i < e->nargs; i++)
            y *= hs_eval_tree(a[i], in);
        return x * y;
    case HS_POW: return pow(x, y);
    case HS_SIN: return sin(x);
    case HS_COS: return cos(x);
    case HS_TAN: return tan(x);
    case HS_ASIN: return asin(x);
    case HS_ACOS: return acos(x);
    case HS_ATAN: return atan(x);
    case HS_SINH: return sinh(x);
    case HS_COSH: return cosh(x);
    case HS_TANH: return tanh(x);
    case HS_EXP: return exp(x);
    case HS_LOG: return log(x);
    case HS_SQRT: return sqrt(x);
    case HS_ABS: return fabs(x);
    case HS_SIGN: return x > 0 ? 1 : x < 0 ? -1 : x == 0 ? 0 : x; /* NaN stays NaN, as in the VM */
    case HS_ATAN2: return atan2(x, y);
    case HS_MIN: return fmin(x, y);
    case HS_MAX: return fmax(x, y);
    case HS_HYPOT: return hypot(x, y);
    case HS_LT: return x < y;
    case HS_LE: return x <= y;
    case HS_GT: return x > y;
    case HS_GE: return x >= y;
    case HS_EQ: return x == y;
    case HS_NE: return x != y;
    case HS_IF:
        return hs_eval_tree(a[0], in) != 0 ? hs_eval_tree(a[1], in) : hs_eval_tree(a[2], in);
    case HS_NKINDS: break;
    }
    return NAN;
}
