/* The reference evaluator hs_eval_tree: a post-order walk with an explicit
 * stack, each distinct node computed once (a dag whose tree is exponential
 * costs its number of nodes), with the VM's semantics written out
 * independently of ops.def -- the tests compare the two.
 *
 * NaN propagates through everything: a comparison, min or max with a NaN
 * operand is NaN, and so is if() with a NaN condition (C's comparisons
 * would turn it into 0 or 1 silently). */
#include "expr.h"
#include "../util/map.h"
#include "../util/vec.h"

#include <math.h>
#include <stdlib.h>

/* node id -> its value (util/map.h) */
typedef hs_idmap vmemo;

static double vget(const vmemo *m, const hs_node *e, const double *in)
{
    if (e->kind == HS_NUM)
        return e->value;
    if (e->kind == HS_SYM)
        return in[e->sym];
    const double *v = HS_IDMAP_GET(m, e->id, double);
    return v ? *v : (double)NAN;
}

static int vhas(const vmemo *m, const hs_node *e)
{
    return e->nargs == 0 || HS_IDMAP_GET(m, e->id, double) != NULL;
}

static int vput(vmemo *m, const hs_node *e, double v)
{
    double *slot = HS_IDMAP_PUT(m, e->id, double);
    if (!slot)
        return -1;
    *slot = v;
    return 0;
}

/* 1 or 0, or NaN when an operand is NaN (x + y is then NaN) */
static double truth(int c, double x, double y)
{
    return isnan(x) || isnan(y) ? x + y : c;
}

/* e from its arguments' values */
static double apply(const hs_node *e, const vmemo *m, const double *in)
{
    const hs_node *const *a = e->args;
    double x = e->nargs > 0 ? vget(m, a[0], in) : 0;
    double y = e->nargs > 1 ? vget(m, a[1], in) : 0;
    switch (e->kind) {
    case HS_NUM: return e->value;
    case HS_SYM: return in[e->sym];
    case HS_ADD:
        for (uint32_t i = 2; i < e->nargs; i++)
            y += vget(m, a[i], in);
        return x + y;
    case HS_MUL:
        for (uint32_t i = 2; i < e->nargs; i++)
            y *= vget(m, a[i], in);
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
    case HS_SIGN: return x > 0 ? 1 : x < 0 ? -1 : x; /* NaN stays NaN, as in the VM */
    case HS_ATAN2: return atan2(x, y);
    case HS_MIN: return isnan(x) || isnan(y) ? x + y : x < y ? x : y;
    case HS_MAX: return isnan(x) || isnan(y) ? x + y : x > y ? x : y;
    case HS_HYPOT: return hypot(x, y);
    case HS_LT: return truth(x < y, x, y);
    case HS_LE: return truth(x <= y, x, y);
    case HS_GT: return truth(x > y, x, y);
    case HS_GE: return truth(x >= y, x, y);
    case HS_EQ: return truth(x == y, x, y);
    case HS_NE: return truth(x != y, x, y);
    case HS_IF: return isnan(x) ? x : x != 0 ? y : vget(m, a[2], in);
    case HS_NKINDS: break;
    }
    return NAN;
}

double hs_eval_tree(const hs_node *e, const double *in)
{
    double v;
    return hs_eval_node(e, in, &v) ? (double)NAN : v;
}

int hs_eval_node(const hs_node *e, const double *in, double *value)
{
    if (e->nargs == 0) {
        *value = e->kind == HS_NUM ? e->value : in[e->sym];
        return 0;
    }
    typedef struct { const hs_node *n; uint32_t i; } frame;
    vmemo m = HS_IDMAP_INIT(double);
    size_t cap = 64, top = 0;
    frame *st = malloc(cap * sizeof *st);
    int rc = -1;
    if (!st)
        goto out;
    st[top++] = (frame){e, 0};
    while (top) {
        frame *f = &st[top - 1];
        if (f->i < f->n->nargs) {
            const hs_node *c = f->n->args[f->i++];
            if (vhas(&m, c))
                continue;
            if (HS_VEC_RESERVE(st, cap, top + 1))
                goto out;
            st[top++] = (frame){c, 0};
            continue;
        }
        if (vput(&m, f->n, apply(f->n, &m, in)) != 0)
            goto out;
        top--;
    }
    *value = vget(&m, e, in);
    rc = 0;
out:
    free(st);
    hs_idmap_free(&m);
    return rc;
}
