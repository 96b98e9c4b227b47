/* Smart constructors: every node is built here, already simplified, in the
 * canonical form described in expr.h.
 *
 * Rules (each valid for every real input where the original is defined;
 * the few that widen the domain are marked "domain"):
 *   numbers: every pure operation on numbers folds; a fold giving NaN or
 *     Inf is an error at the node being built; -0 is stored as 0.
 *   sums: flattened; numbers summed; like terms merged by coefficient
 *     (x + 2*x -> 3*x, x - x -> 0); a zero constant dropped; then
 *     sin^2 + cos^2 = 1 and the angle differences (sum.c), the terms
 *     collected again after each (a loop of at most MAX_IDENTITY_PASSES
 *     passes, never recursion).
 *   products: flattened; numbers multiplied; 0*x -> 0 (documented choice,
 *     although 0*Inf is NaN); like bases merged by adding numeric exponents
 *     (x*x -> x^2, x*x^-1 -> 1: domain); 1*x -> x.  A numeric factor is
 *     never distributed over a sum, so no product of sums is ever expanded.
 *   powers: x^0 -> 1, x^1 -> x, 1^x -> 1; for an integer n, (x^a)^n ->
 *     x^(a*n) (domain, e.g. (x^0.5)^2 -> x) and (a*b)^n -> a^n*b^n.
 *     (x^2)^0.5, sqrt(x)^2 and 0^x (x symbolic) are left alone.
 *   functions: fold on numbers; min(a,a), max(a,a), if(c,a,a) -> a; an
 *     if() with a numeric condition picks its branch; comparisons of equal
 *     operands fold (x < x -> 0, x <= x -> 1, ...).  At run time a NaN
 *     operand makes a comparison, min, max or if() NaN (ops.def); the last
 *     two folds, like 0*x -> 0, are documented exceptions (a NaN condition
 *     of if(c,a,a) or a NaN x in x < x is not seen).
 * Children of sums and products are sorted: the number first, then by node
 * id, so the result never depends on argument order. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- scratch arrays: on the stack when small (internal.h) ---- */

void *hs_scratch_get(hs_dag *d, hs_scratch *s, void *stack, size_t n, size_t size)
{
    s->heap = NULL;
    if (n <= HS_SCRATCH_SMALL)
        return s->p = stack;
    s->heap = s->p = malloc(n * size);
    if (!s->p)
        hs_dag_nomem(d);
    return s->p;
}

void hs_scratch_free(hs_scratch *s) { free(s->heap); }

/* ---- leaves ---- */

const hs_node *hs_num(hs_dag *d, double v)
{
    if (v == 0)
        v = 0.0; /* one zero: -0 would print as a separate constant */
    return hs_dag_num(d, v);
}

const hs_node *hs_sym(hs_dag *d, int sym)
{
    if (sym < 0 || sym >= hs_dag_nsymbols(d)) {
        hs_dag_fail(d, hs_dag_pos(d), "internal error: no symbol number %d", sym);
        return hs_num(d, 0);
    }
    return hs_dag_intern(d, HS_SYM, NULL, 0, 0.0, sym);
}


static int is_int(double v) { return v == floor(v) && fabs(v) < 9007199254740992.0; }

/* A folded constant; a non-finite result is an error naming the operation. */
static const hs_node *fold(hs_dag *d, double v, hs_kind k, const hs_node *a,
                           const hs_node *b)
{
#define FIX "; check the numbers and parameter values it uses"
    if (isfinite(v))
        return hs_num(d, v);
    if (k == HS_POW && b->value == -1 && a->value == 0)
        hs_dag_fail(d, hs_dag_pos(d), "constant expression evaluates to NaN/Inf: "
                    "division by zero" FIX);
    else if (k == HS_POW)
        hs_dag_fail(d, hs_dag_pos(d),
                    "constant expression evaluates to NaN/Inf: (%.15g)^(%.15g)" FIX,
                    a->value, b->value);
    else if (b)
        hs_dag_fail(d, hs_dag_pos(d),
                    "constant expression evaluates to NaN/Inf: %s(%.15g, %.15g)" FIX,
                    hs_kind_name(k), a->value, b->value);
    else
        hs_dag_fail(d, hs_dag_pos(d),
                    "constant expression evaluates to NaN/Inf: %s(%.15g)" FIX,
                    hs_kind_name(k), a->value);
#undef FIX
    return hs_num(d, 0);
}

/* Sort: insertion sort for the short arrays most nodes have (nearly
 * sorted already, and without qsort's call overhead), qsort beyond. */
void hs_sort_small(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    enum { INSERTION_MAX = 24, ELEM_MAX = 64 };
    if (n > INSERTION_MAX || size > ELEM_MAX) {
        qsort(base, n, size, cmp);
        return;
    }
    char *a = base, tmp[ELEM_MAX];
    for (size_t i = 1; i < n; i++) {
        size_t j = i;
        if (cmp(a + (j - 1) * size, a + i * size) <= 0)
            continue;
        memcpy(tmp, a + i * size, size);
        while (j > 0 && cmp(a + (j - 1) * size, tmp) > 0) {
            memcpy(a + j * size, a + (j - 1) * size, size);
            j--;
        }
        memcpy(a + j * size, tmp, size);
    }
}

/* Order of children: numbers first, then creation order. */
int hs_node_cmp(const void *pa, const void *pb)
{
    const hs_node *a = *(const hs_node *const *)pa, *b = *(const hs_node *const *)pb;
    int na = a->kind != HS_NUM, nb = b->kind != HS_NUM;
    if (na != nb)
        return na - nb;
    return (a->id > b->id) - (a->id < b->id);
}

/* Intern a sum or product of sorted canonical children. */
const hs_node *hs_make_nary(hs_dag *d, hs_kind k, const hs_node **a, size_t n)
{
    if (n > 24) {
        hs_sort_small(a, n, sizeof *a, hs_node_cmp);
    } else {
        /* the same order, inline: this runs for every sum and product built */
        for (size_t i = 1; i < n; i++) {
            const hs_node *x = a[i];
            size_t j = i;
            for (; j > 0 && hs_node_cmp(&a[j - 1], &x) > 0; j--)
                a[j] = a[j - 1];
            a[j] = x;
        }
    }
    return hs_dag_intern(d, k, a, n, 0.0, -1);
}

/* Number of children after flattening one level of kind k. */
size_t hs_flat_count(hs_kind k, const hs_node *const *a, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        m += a[i]->kind == k ? a[i]->nargs : 1;
    return m;
}

size_t hs_flatten(hs_kind k, const hs_node *const *a, size_t n,
                      const hs_node **out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (a[i]->kind == k)
            for (uint32_t j = 0; j < a[i]->nargs; j++)
                out[m++] = a[i]->args[j];
        else
            out[m++] = a[i];
    return m;
}

/* ---- products ---- */

/* A factor as base ^ numeric exponent. */
typedef struct factor {
    const hs_node *base;
    double exp;
    size_t order;
} factor;

static int factor_cmp(const void *pa, const void *pb)
{
    const factor *a = pa, *b = pb;
    if (a->base != b->base)
        return a->base->id < b->base->id ? -1 : 1;
    return (a->order > b->order) - (a->order < b->order);
}

static void split_factor(const hs_node *e, const hs_node **base, double *exp)
{
    if (e->kind == HS_POW && e->args[1]->kind == HS_NUM) {
        *base = e->args[0];
        *exp = e->args[1]->value;
    } else {
        *base = e;
        *exp = 1;
    }
}

/* One pass of hs_muln: flatten, fold numbers, merge like bases.  Returns
 * the product, or NULL with *next (malloc'd, *nnext factors) to multiply
 * again when a merge gave a number or a product. */
static const hs_node *mul_pass(hs_dag *d, const hs_node *const *in, size_t n,
                               const hs_node ***next, size_t *nnext)
{
    *next = NULL;
    size_t m = hs_flat_count(HS_MUL, in, n);
    const hs_node *stack1[HS_SCRATCH_SMALL];
    factor stack2[HS_SCRATCH_SMALL];
    hs_scratch s1, s2;
    const hs_node **a = hs_scratch_get(d, &s1, stack1, m + 1, sizeof *a);
    factor *f = hs_scratch_get(d, &s2, stack2, m, sizeof *f);
    const hs_node *r = NULL;
    if (!a || !f)
        goto done;
    m = hs_flatten(HS_MUL, in, n, a);

    double c = 1;
    size_t nf = 0;
    for (size_t i = 0; i < m; i++)
        if (a[i]->kind == HS_NUM && a[i]->value == 0) {
            r = hs_num(d, 0); /* 0*x -> 0, the documented choice */
            goto done;
        }
    for (size_t i = 0; i < m; i++) {
        if (a[i]->kind == HS_NUM) {
            c *= a[i]->value;
            continue;
        }
        split_factor(a[i], &f[nf].base, &f[nf].exp);
        f[nf].order = i;
        nf++;
    }
    if (!isfinite(c)) {
        hs_dag_fail(d, hs_dag_pos(d),
                    "constant expression evaluates to NaN/Inf: product overflow");
        r = hs_num(d, 0);
        goto done;
    }
    if (c == 0) {             /* the factors underflowed: 0*x -> 0 (fuzz finding) */
        r = hs_num(d, 0);
        goto done;
    }
    if (nf > 24) {
        hs_sort_small(f, nf, sizeof *f, factor_cmp);
    } else {
        /* factor_cmp's order, inline (every product built sorts its factors) */
        for (size_t i = 1; i < nf; i++) {
            factor x = f[i];
            size_t j = i;
            for (; j > 0 && (f[j - 1].base->id > x.base->id ||
                             (f[j - 1].base == x.base && f[j - 1].order > x.order)); j--)
                f[j] = f[j - 1];
            f[j] = x;
        }
    }

    /* merge like bases; a merge can produce a number or a product (e.g.
     * (x*y)^0.5*(x*y)^0.5 -> x*y), which then needs one more pass */
    size_t k = 0;
    int again = 0;
    for (size_t i = 0; i < nf;) {
        double e = f[i].exp;
        size_t j = i + 1;
        while (j < nf && f[j].base == f[i].base)
            e += f[j++].exp;
        const hs_node *x;
        if (j == i + 1)
            x = e == 1 ? f[i].base : hs_pow(d, f[i].base, hs_num(d, e));
        else if (e == 0)
            x = NULL; /* x * x^-1 -> 1 */
        else {
            x = hs_pow(d, f[i].base, hs_num(d, e));
            const hs_node *b;
            double ex;
            split_factor(x, &b, &ex);
            if (x->kind == HS_NUM || x->kind == HS_MUL || b != f[i].base)
                again = 1;
        }
        if (x)
            a[k++] = x;
        i = j;
    }
    if (again) {
        a[k++] = hs_num(d, c);
        *next = malloc(k * sizeof **next);
        if (!*next)
            hs_dag_nomem(d);
        else
            memcpy(*next, a, k * sizeof *a);
        *nnext = k;
        goto done;
    }
    if (k == 0)
        r = hs_num(d, c);
    else if (k == 1 && c == 1)
        r = a[0];
    else {
        if (c != 1)
            a[k++] = hs_num(d, c);
        r = hs_make_nary(d, HS_MUL, a, k);
    }
done:
    hs_scratch_free(&s1);
    hs_scratch_free(&s2);
    return r || *next ? r : hs_num(d, 0);
}

const hs_node *hs_muln(hs_dag *d, const hs_node *const *in, size_t n)
{
    if (n == 0)
        return hs_num(d, 1);
    if (n == 1)
        return in[0];
    /* a loop, not recursion: each pass that merges into a product or a
     * number multiplies the result again */
    const hs_node **cur = NULL, *r;
    for (;;) {
        const hs_node **next;
        size_t nn = 0;
        r = mul_pass(d, in, n, &next, &nn);
        free(cur);
        if (!next)
            return r;
        cur = next;
        in = cur;
        n = nn;
        if (n == 1) {
            r = cur[0];
            free(cur);
            return r;
        }
    }
}

const hs_node *hs_mul(hs_dag *d, const hs_node *a, const hs_node *b)
{
    const hs_node *v[2] = {a, b};
    return hs_muln(d, v, 2);
}

const hs_node *hs_neg(hs_dag *d, const hs_node *a)
{
    return hs_mul(d, hs_num(d, -1), a);
}

const hs_node *hs_div(hs_dag *d, const hs_node *a, const hs_node *b)
{
    return hs_mul(d, a, hs_pow(d, b, hs_num(d, -1)));
}

/* ---- powers ---- */

const hs_node *hs_pow(hs_dag *d, const hs_node *a, const hs_node *b)
{
    if (b->kind == HS_NUM) {
        double n = b->value;
        if (a->kind == HS_NUM)
            /* 1/a is exact where pow(a, -1) might not be */
            return fold(d, n == -1 ? 1 / a->value : pow(a->value, n), HS_POW, a, b);
        if (n == 0)
            return hs_num(d, 1);
        if (n == 1)
            return a;
        if (is_int(n) && a->kind == HS_POW)
            return hs_pow(d, a->args[0], hs_mul(d, a->args[1], b));
        if (is_int(n) && a->kind == HS_MUL) {
            /* (a*b)^n = a^n * b^n for integer n */
            const hs_node *stack[HS_SCRATCH_SMALL];
            hs_scratch s;
            const hs_node **p = hs_scratch_get(d, &s, stack, a->nargs, sizeof *p);
            if (!p)
                return hs_num(d, 0);
            for (uint32_t i = 0; i < a->nargs; i++)
                p[i] = hs_pow(d, a->args[i], b);
            const hs_node *r = hs_muln(d, p, a->nargs);
            hs_scratch_free(&s);
            return r;
        }
    } else if (hs_is_num(a, 1)) {
        return a; /* 1^x = 1 for every x */
    }
    const hs_node *v[2] = {a, b};
    return hs_dag_intern(d, HS_POW, v, 2, 0.0, -1);
}

/* ---- functions, comparisons, if ---- */

static double sign_of(double x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }

const hs_node *hs_call1(hs_dag *d, hs_kind k, const hs_node *a)
{
    if (a->kind == HS_NUM) {
        double x = a->value, v;
        switch (k) {
        case HS_SIN: v = sin(x); break;
        case HS_COS: v = cos(x); break;
        case HS_TAN: v = tan(x); break;
        case HS_ASIN: v = asin(x); break;
        case HS_ACOS: v = acos(x); break;
        case HS_ATAN: v = atan(x); break;
        case HS_SINH: v = sinh(x); break;
        case HS_COSH: v = cosh(x); break;
        case HS_TANH: v = tanh(x); break;
        case HS_EXP: v = exp(x); break;
        case HS_LOG: v = log(x); break;
        case HS_SQRT: v = sqrt(x); break;
        case HS_ABS: v = fabs(x); break;
        case HS_SIGN: v = sign_of(x); break;
        default:
            hs_dag_fail(d, hs_dag_pos(d), "internal error: %s is not a function of one argument",
                        hs_kind_name(k));
            return hs_num(d, 0);
        }
        return fold(d, v, k, a, NULL);
    }
    if (k < HS_SIN || k > HS_SIGN) {
        hs_dag_fail(d, hs_dag_pos(d), "internal error: %s is not a function of one argument",
                    hs_kind_name(k));
        return hs_num(d, 0);
    }
    if ((k == HS_ABS || k == HS_SIGN) && a->kind == k)
        return a; /* abs(abs x) = abs x, sign(sign x) = sign x */
    return hs_dag_intern(d, k, &a, 1, 0.0, -1);
}

const hs_node *hs_call2(hs_dag *d, hs_kind k, const hs_node *a, const hs_node *b)
{
    if (k == HS_POW)
        return hs_pow(d, a, b);
    if (k < HS_ATAN2 || k > HS_NE) {
        hs_dag_fail(d, hs_dag_pos(d), "internal error: %s is not a function of two arguments",
                    hs_kind_name(k));
        return hs_num(d, 0);
    }
    if (a->kind == HS_NUM && b->kind == HS_NUM) {
        double x = a->value, y = b->value, v = 0;
        switch (k) {
        case HS_ATAN2: v = atan2(x, y); break;
        case HS_MIN: v = x < y ? x : y; break;   /* numbers are finite: as the VM */
        case HS_MAX: v = x > y ? x : y; break;
        case HS_HYPOT: v = hypot(x, y); break;
        case HS_LT: v = x < y; break;
        case HS_LE: v = x <= y; break;
        case HS_GT: v = x > y; break;
        case HS_GE: v = x >= y; break;
        case HS_EQ: v = x == y; break;
        case HS_NE: v = x != y; break;
        default: break;
        }
        return fold(d, v, k, a, b);
    }
    if (a == b) {
        switch (k) {
        case HS_MIN: case HS_MAX: return a;
        case HS_LT: case HS_GT: case HS_NE: return hs_num(d, 0);
        case HS_LE: case HS_GE: case HS_EQ: return hs_num(d, 1);
        default: break;
        }
    }
    const hs_node *v[2] = {a, b};
    return hs_dag_intern(d, k, v, 2, 0.0, -1);
}

const hs_node *hs_if(hs_dag *d, const hs_node *c, const hs_node *a, const hs_node *b)
{
    if (c->kind == HS_NUM)
        return c->value != 0 ? a : b;
    if (a == b)
        return a;
    const hs_node *v[3] = {c, a, b};
    return hs_dag_intern(d, HS_IF, v, 3, 0.0, -1);
}
