/* Sums: the smart constructor hs_addn (the rules for sums of simplify.c's
 * header) with the trigonometric identities it applies, and hs_rebuild,
 * which builds a node of any kind.  The identities build terms with the
 * other constructors (simplify.c) and with sums again (hs_sub): one
 * recursion, bounded by the passes, kept inside this file.
 *
 * The identities are applied to the merged terms of a sum once per pass,
 * so derived metrics and forces read as written by hand and compile
 * smaller.  The
 * terms are indexed by the bases of their factors, and partner terms are
 * looked up without building nodes: the search costs about the size of
 * the sum, never the square of it, and leaves no garbage in the dag. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The factor sin(u)^2 of a term (the term itself or a factor of a
 * product), or NULL. */
static const hs_node *sin2_factor(const hs_node *e)
{
    const hs_node *const *f = e->kind == HS_MUL ? e->args : &e;
    size_t n = e->kind == HS_MUL ? e->nargs : 1;
    for (size_t i = 0; i < n; i++)
        if (f[i]->kind == HS_POW && f[i]->args[0]->kind == HS_SIN && hs_is_num(f[i]->args[1], 2))
            return f[i];
    return NULL;
}

/* The base of a factor: b for b^c (c a number), else the factor. */
static const hs_node *base_of(const hs_node *f)
{
    return f->kind == HS_POW && f->args[1]->kind == HS_NUM ? f->args[0] : f;
}

/* Which terms of a sum have a factor with a given base: (base id, term)
 * pairs sorted, searched by base.  Built once per pass; a term replaced
 * during the pass keeps its old entries (its index is then skipped). */
typedef struct tindex {
    uint64_t *e;            /* [n] base id << 32 | term index */
    size_t n;
} tindex;

static int u64_cmp(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

static int tindex_build(hs_dag *d, tindex *x, const hs_node *const *out, size_t k)
{
    size_t m = 0;
    for (size_t i = 0; i < k; i++)
        m += out[i]->kind == HS_MUL ? out[i]->nargs : 1;
    x->e = malloc((m ? m : 1) * sizeof *x->e);
    x->n = 0;
    if (!x->e) {
        hs_dag_nomem(d);
        return -1;
    }
    for (size_t i = 0; i < k; i++) {
        const hs_node *const *f = out[i]->kind == HS_MUL ? out[i]->args : &out[i];
        size_t n = out[i]->kind == HS_MUL ? out[i]->nargs : 1;
        for (size_t j = 0; j < n; j++)
            if (f[j]->kind != HS_NUM)
                x->e[x->n++] = (uint64_t)base_of(f[j])->id << 32 | i;
    }
    if (x->n > 32) {
        qsort(x->e, x->n, sizeof *x->e, u64_cmp);
        return 0;
    }
    for (size_t i = 1; i < x->n; i++) {     /* most sums here have a few terms */
        uint64_t v = x->e[i];
        size_t j = i;
        for (; j > 0 && x->e[j - 1] > v; j--)
            x->e[j] = x->e[j - 1];
        x->e[j] = v;
    }
    return 0;
}

/* The terms with base b: e[*lo .. *hi) (term index in the low word). */
static void tindex_range(const tindex *x, const hs_node *b, size_t *lo, size_t *hi)
{
    uint64_t key = (uint64_t)b->id << 32;
    size_t l = 0, h = x->n;
    while (l < h) {
        size_t mid = l + (h - l) / 2;
        if (x->e[mid] < key)
            l = mid + 1;
        else
            h = mid;
    }
    *lo = l;
    while (l < x->n && x->e[l] >> 32 == b->id)
        l++;
    *hi = l;
}

/* Is there a term other than i, unchanged in this pass, with a factor of
 * base b1 and (when b2 is not NULL) one of base b2? */
static int partner_may_exist(const tindex *x, const hs_node *const *out, const hs_node *const *orig,
                             size_t i, const hs_node *b1, const hs_node *b2)
{
    if (!b1)
        return 0;
    size_t lo1, hi1, lo2 = 0, hi2 = 0;
    tindex_range(x, b1, &lo1, &hi1);
    if (b2)
        tindex_range(x, b2, &lo2, &hi2);
    for (size_t p = lo1; p < hi1; p++) {
        size_t j = (uint32_t)x->e[p];
        if (j == i || out[j] != orig[j])
            continue;
        if (!b2)
            return 1;
        while (lo2 < hi2 && (uint32_t)x->e[lo2] < j)
            lo2++;
        if (lo2 < hi2 && (uint32_t)x->e[lo2] == j)
            return 1;
    }
    return 0;
}

/* Find partner among the unchanged terms (not i) that have a factor of
 * base b (the index's, not a scan of all k: a sum of many trig terms
 * stays linear); remove it and return 1. */
static int take(const hs_node **out, const hs_node *const *orig, const tindex *x, size_t i,
                const hs_node *b, const hs_node *partner)
{
    size_t lo, hi;
    tindex_range(x, b, &lo, &hi);
    for (size_t p = lo; p < hi; p++) {
        size_t j = (uint32_t)x->e[p];
        if (j != i && out[j] == partner && orig[j] == partner) {
            out[j] = NULL;
            return 1;
        }
    }
    return 0;
}

/* An existing node f(a), or NULL (never builds one). */
static const hs_node *existing1(const hs_dag *d, hs_kind f, const hs_node *a)
{
    return hs_dag_lookup(d, f, &a, 1, 0.0, -1);
}

/* Terms with more first-power sin/cos factors than this are not searched
 * for angle-difference pairs (the search is quadratic in them; real
 * metrics have two or four). */
enum { MAX_TRIG_FACTORS = 32 };

/* The angle-difference identities for term i (a product), see below. */
static int trig_pairs(hs_dag *d, const hs_node **out, const hs_node *const *orig,
                      size_t i, const tindex *x)
{
    const hs_node *e = out[i];
    uint32_t ntrig = 0;
    for (uint32_t p = 0; p < e->nargs; p++)
        ntrig += e->args[p]->kind == HS_COS || e->args[p]->kind == HS_SIN;
    if (ntrig < 2 || ntrig > MAX_TRIG_FACTORS)
        return 0;
    /* a pair of first-power trig factors of two different angles */
    for (uint32_t p = 0; p < e->nargs; p++)
        for (uint32_t q = 0; q < e->nargs; q++) {
            const hs_node *fp = e->args[p], *fq = e->args[q];
            if (p == q || (fp->kind != HS_COS && fp->kind != HS_SIN) ||
                fq->kind != HS_COS || fp->args[0] == fq->args[0])
                continue;
            const hs_node *a = fp->args[0], *b = fq->args[0];
            if (fp->kind == HS_COS) {          /* cos a cos b + sin a sin b */
                const hs_node *sa = existing1(d, HS_SIN, a), *sb = existing1(d, HS_SIN, b);
                if (a->id > b->id || !sb || !partner_may_exist(x, out, orig, i, sa, sb))
                    continue;
                const hs_node *rest = hs_div(d, e, hs_mul(d, fp, fq));
                if (take(out, orig, x, i, sa, hs_mul(d, rest, hs_mul(d, sa, sb)))) {
                    out[i] = hs_mul(d, rest, hs_call1(d, HS_COS, hs_sub(d, a, b)));
                    return 1;
                }
            } else {                           /* sin a cos b - cos a sin b */
                const hs_node *ca = existing1(d, HS_COS, a), *sb = existing1(d, HS_SIN, b);
                if (!ca || !partner_may_exist(x, out, orig, i, sb, ca))
                    continue;
                const hs_node *rest = hs_div(d, e, hs_mul(d, fp, fq));
                if (take(out, orig, x, i, sb, hs_neg(d, hs_mul(d, rest, hs_mul(d, ca, sb))))) {
                    out[i] = hs_mul(d, rest, hs_call1(d, HS_SIN, hs_sub(d, a, b)));
                    return 1;
                }
            }
        }
    return 0;
}

/* Identities on the terms of a merged sum, so derived metrics and forces
 * read as written by hand and compile smaller:
 *   c R sin(u)^2 + c R cos(u)^2           -> c R
 *   c R cos(a) cos(b) + c R sin(a) sin(b) -> c R cos(a - b)
 *   c R sin(a) cos(b) - c R cos(a) sin(b) -> c R sin(a - b)
 * (a before b in node order).  A rest that is a number goes to *c.
 * A partner term is built only when an index of the terms' factors shows
 * a term that can be it (no garbage nodes, no quadratic scan).
 * Returns 1 when it changed anything, -1 when out of memory. */
static int trig_identities(hs_dag *d, const hs_node **out, size_t *k, double *c)
{
    size_t ntrig = 0, cand = 0;
    for (size_t i = 0; i < *k && (ntrig < 2 || !cand); i++) {
        const hs_node *const *f = out[i]->kind == HS_MUL ? out[i]->args : &out[i];
        size_t n = out[i]->kind == HS_MUL ? out[i]->nargs : 1, has = 0, first = 0;
        for (size_t j = 0; j < n; j++) {
            has |= base_of(f[j])->kind == HS_SIN || base_of(f[j])->kind == HS_COS;
            first += f[j]->kind == HS_SIN || f[j]->kind == HS_COS;
        }
        ntrig += has != 0;
        /* a term an identity can start from: sin(u)^2, or two first
         * powers of sin/cos (sums of terms with one, like a kinetic
         * energy's cos(a - b) v_a v_b, need no index) */
        cand |= sin2_factor(out[i]) != NULL || (out[i]->kind == HS_MUL && first >= 2);
    }
    if (ntrig < 2 || !cand)
        return 0;           /* an identity needs two terms with sin or cos */
    tindex x;
    const hs_node **orig = malloc(*k * sizeof *orig);
    if (!orig || tindex_build(d, &x, out, *k) != 0) {
        free(orig);
        return -1;
    }
    memcpy(orig, out, *k * sizeof *orig);
    const hs_node *two = hs_dag_lookup(d, HS_NUM, NULL, 0, 2.0, -1);
    int changed = 0;
    for (size_t i = 0; i < *k; i++) {
        const hs_node *e = out[i];
        if (!e || e != orig[i])
            continue;
        const hs_node *s2 = sin2_factor(e);
        if (s2 && two) {
            const hs_node *cu = existing1(d, HS_COS, s2->args[0]->args[0]);
            if (partner_may_exist(&x, out, orig, i, cu, NULL)) {
                const hs_node *c2 = hs_pow(d, cu, two);
                const hs_node *rest = hs_div(d, e, s2);
                if (take(out, orig, &x, i, cu, hs_mul(d, rest, c2))) {
                    if (rest->kind == HS_NUM) {
                        *c += rest->value;
                        out[i] = NULL;
                    } else {
                        out[i] = rest;
                    }
                    changed = 1;
                    continue;
                }
            }
        }
        if (e->kind == HS_MUL && trig_pairs(d, out, orig, i, &x))
            changed = 1;
    }
    free(x.e);
    free(orig);
    if (changed) {
        size_t w = 0;
        for (size_t i = 0; i < *k; i++)
            if (out[i])
                out[w++] = out[i];
        *k = w;
    }
    return changed;
}

/* ---- the compiler's addition formulas (compile.c) ---- */

/* The symbol node of a term x or -x of a two-symbol sum (-1*x: *neg = 1),
 * or NULL. */
static const hs_node *signed_symbol(const hs_node *t, int *neg)
{
    *neg = 0;
    if (t->kind == HS_SYM)
        return t;
    if (t->kind == HS_MUL && t->nargs == 2 && hs_is_num(t->args[0], -1.0)
        && t->args[1]->kind == HS_SYM) {
        *neg = 1;
        return t->args[1];
    }
    return NULL;
}

/* a is s1*x1 + s2*x2 (two symbols, signs +-1), or -(that): the argument
 * of a sine or cosine the addition formulas may take apart. */
int hs_trig_two_symbol_sum(const hs_node *a, const hs_node **x, int *s)
{
    int flip = 0;
    if (a->kind == HS_MUL && a->nargs == 2 && hs_is_num(a->args[0], -1.0)) {
        flip = 1;
        a = a->args[1];
    }
    if (a->kind != HS_ADD || a->nargs != 2 || !(x[0] = signed_symbol(a->args[0], &s[0]))
        || !(x[1] = signed_symbol(a->args[1], &s[1])))
        return 0;
    s[0] ^= flip;
    s[1] ^= flip;
    return 1;
}

/* Whether the program's sines and cosines of two-symbol sums are worth
 * the addition formulas: P distinct such arguments over S distinct
 * symbols cost P or more library calls as they are, S sincos pairs and
 * three flops per call taken apart.  Taken apart when P >= 2 S (a chain
 * of 5 or more angles); a double pendulum's one cos(th1 - th2) stays. */
int hs_trig_want_addform(const hs_node *const *order, size_t norder, uint8_t *mark)
{
    size_t P = 0, S = 0;
    for (size_t i = 0; i < norder; i++) {
        const hs_node *n = order[i], *x[2];
        int s[2];
        if ((n->kind != HS_SIN && n->kind != HS_COS) || !hs_trig_two_symbol_sum(n->args[0], x, s)
            || mark[n->args[0]->id])
            continue;
        mark[n->args[0]->id] = 1;
        P++;
        for (int j = 0; j < 2; j++)
            if (!mark[x[j]->id]) {
                mark[x[j]->id] = 1;
                S++;
            }
    }
    return P >= 4 && P >= 2 * S;
}

/* ---- sums ---- */

/* A term as coefficient * product of factors (one factor for a non-product). */
typedef struct term {
    double coef;
    const hs_node *const *fac; /* NULL: the one factor is `single` */
    const hs_node *single;
    size_t nfac;
    size_t order; /* position in the input: ties broken by it (determinism) */
} term;

static const hs_node *const *term_fac(const term *t)
{
    return t->fac ? t->fac : &t->single;
}

static int term_cmp(const void *pa, const void *pb)
{
    const term *a = pa, *b = pb;
    const hs_node *const *fa = term_fac(a), *const *fb = term_fac(b);
    size_t n = a->nfac < b->nfac ? a->nfac : b->nfac;
    for (size_t i = 0; i < n; i++)
        if (fa[i] != fb[i])
            return fa[i]->id < fb[i]->id ? -1 : 1;
    if (a->nfac != b->nfac)
        return a->nfac < b->nfac ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

static int term_same(const term *a, const term *b)
{
    if (a->nfac != b->nfac)
        return 0;
    const hs_node *const *fa = term_fac(a), *const *fb = term_fac(b);
    for (size_t i = 0; i < a->nfac; i++)
        if (fa[i] != fb[i])
            return 0;
    return 1;
}

/* coef * factors, canonical: factors are a product's sorted children. */
static const hs_node *term_node(hs_dag *d, double coef, const hs_node *const *fac,
                                size_t nfac)
{
    if (coef == 1 && nfac == 1)
        return fac[0];
    const hs_node *stack[HS_SCRATCH_SMALL];
    hs_scratch s;
    const hs_node **a = hs_scratch_get(d, &s, stack, nfac + 1, sizeof *a);
    if (!a)
        return hs_num(d, 0);
    size_t m = 0;
    if (coef != 1)
        a[m++] = hs_num(d, coef);
    memcpy(a + m, fac, nfac * sizeof *fac);
    const hs_node *r = hs_dag_intern(d, HS_MUL, a, m + nfac, 0.0, -1);
    hs_scratch_free(&s);
    return r;
}

/* Identities are tried in this many passes of one sum at most (each pass
 * that applies one collects the terms again). */
enum { MAX_IDENTITY_PASSES = 16 };

/* One pass of hs_addn: hs_flatten, merge like terms, apply the identities.
 * Returns the sum, or NULL with *next (malloc'd, *nnext terms) to be
 * collected again after an identity applied. */
static const hs_node *add_pass(hs_dag *d, const hs_node *const *in, size_t n, int identities,
                               const hs_node ***next, size_t *nnext)
{
    size_t m = hs_flat_count(HS_ADD, in, n);
    const hs_node *stack1[HS_SCRATCH_SMALL];
    term stack2[HS_SCRATCH_SMALL];
    hs_scratch s1, s2;
    const hs_node **a = hs_scratch_get(d, &s1, stack1, m + 1, sizeof *a);
    term *t = hs_scratch_get(d, &s2, stack2, m, sizeof *t);
    const hs_node *r = NULL;
    *next = NULL;
    if (!a || !t)
        goto done;
    m = hs_flatten(HS_ADD, in, n, a);

    double c = 0;
    size_t nt = 0;
    for (size_t i = 0; i < m; i++) {
        const hs_node *e = a[i];
        if (e->kind == HS_NUM) {
            c += e->value;
            continue;
        }
        term *x = &t[nt++];
        x->order = i;
        x->coef = 1;
        x->fac = NULL;
        x->single = e;
        x->nfac = 1;
        if (e->kind == HS_MUL && e->args[0]->kind == HS_NUM) {
            x->coef = e->args[0]->value;
            x->fac = e->args + 1;
            x->nfac = e->nargs - 1;
        } else if (e->kind == HS_MUL) {
            x->fac = e->args;
            x->nfac = e->nargs;
        }
    }
    hs_sort_small(t, nt, sizeof *t, term_cmp);

    /* merge like terms; a[] is free now and receives the result children */
    size_t k = 0;
    const hs_node **out = a;
    for (size_t i = 0; i < nt;) {
        double coef = t[i].coef;
        size_t j = i + 1;
        while (j < nt && term_same(&t[i], &t[j]))
            coef += t[j++].coef;
        if (coef != 0) {
            const hs_node *const *fac = term_fac(&t[i]);
            if (!isfinite(coef))
                hs_dag_fail(d, hs_dag_pos(d),
                            "constant expression evaluates to NaN/Inf: "
                            "coefficient overflow in a sum");
            else
                out[k++] = term_node(d, coef, fac, t[i].nfac);
        }
        i = j;
    }
    if (identities && trig_identities(d, out, &k, &c) > 0) {
        /* an identity applied: collect again (terms may merge) */
        if (c != 0)
            out[k++] = hs_num(d, c);
        *next = malloc((k ? k : 1) * sizeof **next);
        if (!*next)
            hs_dag_nomem(d);
        else
            memcpy(*next, out, k * sizeof *out);
        *nnext = k;
        goto done;
    }
    if (c != 0)
        out[k++] = hs_num(d, c); /* reports overflow to Inf */
    if (k == 0)
        r = hs_num(d, 0);
    else if (k == 1)
        r = out[0];
    else
        r = hs_make_nary(d, HS_ADD, out, k);
done:
    hs_scratch_free(&s1);
    hs_scratch_free(&s2);
    return r || *next ? r : hs_num(d, 0);
}

const hs_node *hs_addn(hs_dag *d, const hs_node *const *in, size_t n)
{
    if (n == 0)
        return hs_num(d, 0);
    if (n == 1)
        return in[0];
    const hs_node **cur = NULL, *r = NULL;
    for (int pass = 0;; pass++) {
        const hs_node **next;
        size_t nn = 0;
        r = add_pass(d, in, n, pass < MAX_IDENTITY_PASSES, &next, &nn);
        free(cur);
        if (!next)
            break;
        cur = next;
        in = cur;
        n = nn;
        if (n == 0) {
            free(cur);
            return hs_num(d, 0);
        }
        if (n == 1) {
            r = cur[0];
            free(cur);
            return r;
        }
    }
    return r;
}

const hs_node *hs_add(hs_dag *d, const hs_node *a, const hs_node *b)
{
    const hs_node *v[2] = {a, b};
    return hs_addn(d, v, 2);
}

const hs_node *hs_sub(hs_dag *d, const hs_node *a, const hs_node *b)
{
    return hs_add(d, a, hs_neg(d, b));
}

const hs_node *hs_rebuild(hs_dag *d, hs_kind k, const hs_node *const *args,
                          size_t nargs, const hs_node *like)
{
    switch (k) {
    case HS_NUM: return hs_num(d, like->value);
    case HS_SYM: return hs_sym(d, like->sym);
    case HS_ADD: return hs_addn(d, args, nargs);
    case HS_MUL: return hs_muln(d, args, nargs);
    case HS_IF: return hs_if(d, args[0], args[1], args[2]);
    default: break;
    }
    if (nargs == 1)
        return hs_call1(d, k, args[0]);
    if (nargs == 2)
        return hs_call2(d, k, args[0], args[1]);
    hs_dag_fail(d, hs_dag_pos(d), "internal error: %s with %zu arguments",
                hs_kind_name(k), nargs);
    return hs_num(d, 0);
}
