/* DAG -> register bytecode for many roots at once.
 *
 * Four passes, all iterative (no recursion-depth risk on deep dags):
 *   1. walk: post-order of the dag nodes reachable from the roots, with a
 *      use count per node.  The dag is hash-consed, so node identity is
 *      common-subexpression identity: each node is lowered once.
 *   2. lower: each node becomes a few binary "vnodes" (SSA values): n-ary
 *      ADD/MUL become chains; MUL(-1, ..) becomes a sign flag carried to the
 *      consumer (a - b -> SUB, -(-x) -> x, sin(-x) -> -sin x) and is only
 *      materialised as NEG where a consumer needs the value itself;
 *      x * y^-1 -> DIV; x^2 -> SQR, x^3 -> CUBE, x^n -> POWI, x^-1 -> RECIP,
 *      x^0.5 -> SQRT, x^-0.5 -> RSQRT; c*a + c*b -> c*(a + b) when the
 *      products are read only there.  In a program full of sines and
 *      cosines of sums and differences of two symbols (a chain's metric in
 *      absolute angles: cos(th_i - th_j) for every pair), those go through
 *      the addition formulas: sin(a - b) = sin a cos b - cos a sin b, so
 *      the program calls sin and cos once per symbol, not once per pair.
 *   3. fuse: a product (or square) used once, by a sum or a difference,
 *      becomes MULADD / MULSUB / NMULADD (derivative code is mostly sums of
 *      products).  Equal vnodes are shared by value numbering throughout,
 *      and a negated root is copied out negated (no NEG instruction).
 *   4. schedule + allocate: post-order from the roots, taller operand
 *      first (so a chain a+b+c+... computes each term just before it is
 *      added, keeping few values live), then linear-scan register reuse: a
 *      temporary's register is free once its last reader has run.
 * Constants are pooled (one slot per distinct constant actually read). */
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "internal.h"
#include "prog.h"
#include "../util/vec.h"

const char *const hs_op_name[HS_NOPS] = {
#define HS_OP(name, nargs, expr, doc) #name,
#define HS_OP_CTRL(name, doc) #name,
#include "ops.def"
#undef HS_OP
#undef HS_OP_CTRL
};

const uint8_t hs_op_nargs[HS_NOPS] = {
#define HS_OP(name, nargs, expr, doc) nargs,
#define HS_OP_CTRL(name, doc) 0,
#include "ops.def"
#undef HS_OP
#undef HS_OP_CTRL
};

const char *const hs_op_doc[HS_NOPS] = {
#define HS_OP(name, nargs, expr, doc) doc,
#define HS_OP_CTRL(name, doc) doc,
#include "ops.def"
#undef HS_OP
#undef HS_OP_CTRL
};

/* Leaves of the lowered graph: not instructions, register slots. */
enum { V_CONST = HS_NOPS, V_INPUT };

#define NONE UINT32_MAX
#define POWI_MAX 1048576.0   /* larger integer exponents go to pow() */

/* One SSA value of the lowered program. */
typedef struct vnode {
    uint8_t op;            /* hs_op, V_CONST or V_INPUT */
    uint8_t kind;          /* hs_kind of the dag node it came from */
    uint8_t live;          /* reachable from a root (set by count_uses) */
    uint32_t arg[3];       /* operand vnodes; POWI: arg[1] = exponent (int32) */
    uint32_t nuse;         /* readers among reachable vnodes (fusion) */
    uint32_t last;         /* index of its last reader in the schedule */
    uint32_t reg;          /* register, NONE until allocated */
    uint32_t height;       /* 1 + largest operand height: scheduling order */
    int32_t sym;           /* V_INPUT: symbol number */
    double value;          /* V_CONST: the constant */
    const hs_node *node;   /* origin: position */
} vnode;

typedef struct compiler {
    hs_error *err;
    vnode *v;              /* [nv] */
    size_t nv, capv;
    size_t nid;            /* dag node ids are < nid */
    uint32_t *val;         /* [nid] vnode of each lowered dag node */
    uint32_t *negv;        /* [nid] its materialised negation, or NONE */
    uint8_t *neg;          /* [nid] 1: the node's value is -v[val] */
    uint32_t *uses;        /* [nid] references from reachable parents, roots */
    uint32_t *ht;          /* [htcap] vnode index + 1, 0 = empty: value numbering */
    size_t htcap;
    int addform;           /* sin/cos of two-symbol sums by the addition formulas */
    int failed;
} compiler;

static int nomem(compiler *c)
{
    hs_error_nomem(c->err);
    c->failed = 1;
    return -1;
}

static int fail(compiler *c, const char *msg)
{
    if (!c->failed)
        hs_error_set(c->err, HS_EXIT_MODEL, "compiling expressions: %s", msg);
    c->failed = 1;
    return -1;
}

static uint32_t vhash(int op, uint32_t b, uint32_t cc, uint32_t d, uint64_t bits)
{
    uint64_t h = (uint64_t)op * 0x9e3779b97f4a7c15u;
    h = (h ^ b) * 0xff51afd7ed558ccdu;
    h = (h ^ cc) * 0xc4ceb9fe1a85ec53u;
    h = (h ^ d) * 0xff51afd7ed558ccdu;
    h = (h ^ bits) * 0xc4ceb9fe1a85ec53u;
    return (uint32_t)(h ^ h >> 32);
}

/* Key of a vnode for value numbering: constants by value, inputs by
 * symbol, operations by opcode and operands. */
static uint64_t vbits(const vnode *x)
{
    if (x->op == V_CONST) {
        uint64_t u;
        memcpy(&u, &x->value, sizeof u);
        return u;
    }
    return x->op == V_INPUT ? (uint64_t)(uint32_t)x->sym : 0;
}

static int grow_table(compiler *c)
{
    size_t cap = c->htcap ? 2 * c->htcap : 1024;
    uint32_t *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < c->nv; i++) {
        const vnode *x = &c->v[i];
        int comm = x->op == HS_OP_ADD || x->op == HS_OP_MUL;
        uint32_t b = x->arg[0], cc = x->arg[1];
        size_t h = vhash(x->op, comm && b > cc ? cc : b, comm && b > cc ? b : cc,
                         x->arg[2], vbits(x)) & (cap - 1);
        while (t[h])
            h = (h + 1) & (cap - 1);
        t[h] = (uint32_t)i + 1;
    }
    free(c->ht);
    c->ht = t;
    c->htcap = cap;
    return 0;
}

/* The vnode (op, b, cc, d) [value / sym for leaves], built once: equal
 * operations are shared (this also merges what lowering synthesises, e.g.
 * the x^2 of a denominator with an existing x^2, 2*x of -2*x with 2*x). */
static uint32_t vget(compiler *c, int op, const hs_node *n, uint32_t b, uint32_t cc,
                     uint32_t d, double value, int32_t sym)
{
    if (c->failed)
        return 0;
    /* commutative: one key for both operand orders, the vnode keeps its own */
    int comm = op == HS_OP_ADD || op == HS_OP_MUL;
    uint32_t kb = comm && b > cc ? cc : b, kc = comm && b > cc ? b : cc;
    if (2 * (c->nv + 1) > c->htcap && grow_table(c) < 0) {
        nomem(c);
        return 0;
    }
    vnode key = {.op = (uint8_t)op, .sym = sym, .value = value};
    uint64_t bits = vbits(&key);
    size_t h = vhash(op, kb, kc, d, bits) & (c->htcap - 1);
    for (; c->ht[h]; h = (h + 1) & (c->htcap - 1)) {
        const vnode *x = &c->v[c->ht[h] - 1];
        if (x->op == op && x->arg[2] == d && vbits(x) == bits
            && ((x->arg[0] == b && x->arg[1] == cc)
                || (comm && x->arg[0] == cc && x->arg[1] == b)))
            return c->ht[h] - 1;
    }
    if (c->nv == c->capv) {
        size_t cap = c->capv ? 2 * c->capv : 256;
        vnode *nvv = cap < NONE ? realloc(c->v, cap * sizeof *nvv) : NULL;
        if (!nvv) {
            nomem(c);
            return 0;
        }
        c->v = nvv;
        c->capv = cap;
    }
    vnode *x = &c->v[c->nv];
    x->op = (uint8_t)op;
    x->kind = (uint8_t)n->kind;
    x->live = 0;
    x->arg[0] = b;
    x->arg[1] = cc;
    x->arg[2] = d;
    x->nuse = 0;
    x->last = 0;
    x->reg = NONE;
    x->sym = sym;
    x->value = value;
    x->node = n;
    x->height = 1;
    for (int j = 0; j < (op < HS_NOPS ? hs_op_nargs[op] : 0); j++)
        if (c->v[x->arg[j]].height >= x->height)
            x->height = c->v[x->arg[j]].height + 1;
    c->ht[h] = (uint32_t)c->nv + 1;
    return (uint32_t)c->nv++;
}

static uint32_t vnew(compiler *c, int op, const hs_node *n, uint32_t b,
                     uint32_t cc, uint32_t d)
{
    return vget(c, op, n, b, cc, d, 0.0, -1);
}

static uint32_t vconst(compiler *c, const hs_node *n, double value)
{
    return vget(c, V_CONST, n, NONE, NONE, NONE, value, -1);
}

static uint32_t v1(compiler *c, int op, const hs_node *n, uint32_t b)
{
    return vnew(c, op, n, b, NONE, NONE);
}

static uint32_t v2(compiler *c, int op, const hs_node *n, uint32_t b, uint32_t cc)
{
    return vnew(c, op, n, b, cc, NONE);
}

/* The value of dag node n itself (NEG emitted once if it was carried as a sign). */
static uint32_t mat(compiler *c, const hs_node *n)
{
    uint32_t id = n->id;
    if (!c->neg[id])
        return c->val[id];
    if (c->negv[id] == NONE)
        c->negv[id] = v1(c, HS_OP_NEG, n, c->val[id]);
    return c->negv[id];
}

static int is_int(double e)
{
    return e == floor(e) && fabs(e) <= POWI_MAX;
}

/* base^e for a numeric exponent: *vo and *sign (value = (-1)^sign * v[*vo]).
 * `n` is the node the instructions are charged to. */
static void lower_pow(compiler *c, const hs_node *n, const hs_node *base, double e,
                      uint32_t *vo, int *sign)
{
    uint32_t b = c->val[base->id];
    int nb = c->neg[base->id];
    if (e == 1.0) {
        *vo = b, *sign = nb;
    } else if (e == 2.0) {
        *vo = v1(c, HS_OP_SQR, n, b), *sign = 0;      /* (-x)^2 = x^2 */
    } else if (e == 3.0) {
        *vo = v1(c, HS_OP_CUBE, n, b), *sign = nb;
    } else if (e == -1.0) {
        *vo = v1(c, HS_OP_RECIP, n, b), *sign = nb;
    } else if (is_int(e)) {
        int32_t k = (int32_t)e;
        *vo = vnew(c, HS_OP_POWI, n, b, (uint32_t)k, NONE);
        *sign = nb && (k & 1);
    } else if (e == 0.5) {
        *vo = v1(c, HS_OP_SQRT, n, mat(c, base)), *sign = 0;
    } else if (e == -0.5) {
        *vo = v1(c, HS_OP_RSQRT, n, mat(c, base)), *sign = 0;
    } else {
        /* a general exponent: the NUM node was lowered to a constant leaf */
        *vo = v2(c, HS_OP_POW, n, mat(c, base), c->val[n->args[1]->id]);
        *sign = 0;
    }
}

/* Product chain of vs[0..n-1] (n >= 1). */
static uint32_t chain(compiler *c, int op, const hs_node *n, const uint32_t *vs,
                      size_t k)
{
    uint32_t acc = vs[0];
    for (size_t i = 1; i < k; i++)
        acc = v2(c, op, n, acc, vs[i]);
    return acc;
}

/* Sum of (-1)^sg[i] v[i]: a chain of ADD/SUB starting from a positive
 * term; *neg set when every term is negated. */
static uint32_t sum(compiler *c, const hs_node *n, const uint32_t *v,
                    const uint32_t *sg, size_t k, int *neg)
{
    size_t first = 0;
    while (first < k && sg[first])
        first++;
    *neg = first == k;
    if (*neg)   /* -(a + b + ...) */
        return chain(c, HS_OP_ADD, n, v, k);
    uint32_t acc = v[first];
    for (size_t i = 0; i < k; i++)
        if (i != first)
            acc = v2(c, sg[i] ? HS_OP_SUB : HS_OP_ADD, n, acc, v[i]);
    return acc;
}

static uint32_t product(compiler *c, const hs_node *n, size_t from, uint32_t *scratch,
                        int *sign);

/* Every term c*t_i or -c*t_i, each read only here: c * (sum of +-t_i),
 * one multiplication instead of one per term (2*vx^2 + 2*vy^2 is
 * frequent in derivatives of squared distances). */
static int common_factor(const compiler *c, const hs_node *n)
{
    const hs_node *t0 = n->args[0];
    if (t0->kind != HS_MUL || t0->args[0]->kind != HS_NUM)
        return 0;
    double k = fabs(t0->args[0]->value);
    if (k == 1.0)
        return 0;
    for (size_t i = 0; i < n->nargs; i++) {
        const hs_node *t = n->args[i];
        if (t->kind != HS_MUL || t->args[0]->kind != HS_NUM
            || fabs(t->args[0]->value) != k || c->uses[t->id] != 1)
            return 0;
    }
    return 1;
}

static void lower_add(compiler *c, const hs_node *n, uint32_t *scratch, size_t maxargs)
{
    size_t k = n->nargs;
    uint32_t *v = scratch + 2 * maxargs, *sg = scratch + 3 * maxargs;
    int neg;
    if (common_factor(c, n)) {
        for (size_t i = 0; i < k; i++) {
            const hs_node *t = n->args[i];
            int s;
            v[i] = product(c, t, 1, scratch, &s);
            sg[i] = (uint32_t)(s ^ (t->args[0]->value < 0));
        }
        uint32_t acc = sum(c, n, v, sg, k, &neg);
        c->val[n->id] = v2(c, HS_OP_MUL, n, vconst(c, n->args[0]->args[0],
                                                   fabs(n->args[0]->args[0]->value)), acc);
        c->neg[n->id] = (uint8_t)neg;
        return;
    }
    for (size_t i = 0; i < k; i++) {
        v[i] = c->val[n->args[i]->id];
        sg[i] = c->neg[n->args[i]->id];
    }
    c->val[n->id] = sum(c, n, v, sg, k, &neg);
    c->neg[n->id] = (uint8_t)neg;
}

/* A factor POW(b, e) with e < 0 read only here goes to the denominator. */
static int denominator_factor(const compiler *c, const hs_node *f)
{
    if (f->kind != HS_POW || f->args[1]->kind != HS_NUM || c->uses[f->id] != 1)
        return 0;
    double e = f->args[1]->value;
    return e < 0 && (is_int(e) || e == -0.5);
}

/* The product of n's factors from `from` on (scratch: 2 * nargs), with
 * *sign: x * y^-1 -> DIV, -1 and negative coefficients become a sign. */
static uint32_t product(compiler *c, const hs_node *n, size_t from, uint32_t *scratch,
                        int *signp)
{
    size_t k = n->nargs, nnum = 0, nden = 0;
    uint32_t *num = scratch, *den = scratch + k;
    int sign = 0;
    for (size_t i = from; i < k; i++) {
        const hs_node *f = n->args[i];
        if (f->kind == HS_NUM && f->value == -1.0) {
            sign ^= 1;
        } else if (f->kind == HS_NUM && f->value < 0) {
            /* -c*x as -(c*x): shares c*x with a +c*x elsewhere */
            num[nnum++] = vconst(c, f, -f->value);
            sign ^= 1;
        } else if (denominator_factor(c, f)) {
            uint32_t vo;
            int s;
            lower_pow(c, f, f->args[0], -f->args[1]->value, &vo, &s);
            den[nden++] = vo;
            sign ^= s;
        } else {
            num[nnum++] = c->val[f->id];
            sign ^= c->neg[f->id];
        }
    }
    uint32_t r;
    if (nnum == 0 && nden == 0) {
        /* only -1 factors (the constructors never build this) */
        *signp = 0;
        return vconst(c, n, (k - from) % 2 ? -1.0 : 1.0);
    }
    if (nden == 0)
        r = chain(c, HS_OP_MUL, n, num, nnum);
    else if (nnum == 0)
        r = v1(c, HS_OP_RECIP, n, chain(c, HS_OP_MUL, n, den, nden));
    else
        r = v2(c, HS_OP_DIV, n, chain(c, HS_OP_MUL, n, num, nnum),
               chain(c, HS_OP_MUL, n, den, nden));
    *signp = sign;
    return r;
}

static void lower_mul(compiler *c, const hs_node *n, uint32_t *scratch)
{
    int sign;
    c->val[n->id] = product(c, n, 0, scratch, &sign);
    c->neg[n->id] = (uint8_t)sign;
}

static int kind_op(hs_kind k)
{
    switch (k) {
    case HS_SIN: return HS_OP_SIN;     case HS_COS: return HS_OP_COS;
    case HS_TAN: return HS_OP_TAN;     case HS_ASIN: return HS_OP_ASIN;
    case HS_ACOS: return HS_OP_ACOS;   case HS_ATAN: return HS_OP_ATAN;
    case HS_SINH: return HS_OP_SINH;   case HS_COSH: return HS_OP_COSH;
    case HS_TANH: return HS_OP_TANH;   case HS_EXP: return HS_OP_EXP;
    case HS_LOG: return HS_OP_LOG;     case HS_SQRT: return HS_OP_SQRT;
    case HS_ABS: return HS_OP_ABS;     case HS_SIGN: return HS_OP_SIGN;
    case HS_ATAN2: return HS_OP_ATAN2; case HS_MIN: return HS_OP_MIN;
    case HS_MAX: return HS_OP_MAX;     case HS_HYPOT: return HS_OP_HYPOT;
    case HS_LT: return HS_OP_LT;       case HS_LE: return HS_OP_LE;
    case HS_GT: return HS_OP_GT;       case HS_GE: return HS_OP_GE;
    case HS_EQ: return HS_OP_EQ;       case HS_NE: return HS_OP_NE;
    default: return -1;
    }
}

/* sin(s1 x1 + s2 x2) or cos(...) of n (a two-symbol sum) from the sines
 * and cosines of x1 and x2 (shared by every pair through value numbering):
 *   sin(a + b) = sin a cos b + cos a sin b
 *   cos(a + b) = cos a cos b - sin a sin b
 * with sin(-x) = -sin x, cos(-x) = cos x. */
static void lower_addform(compiler *c, const hs_node *n, const hs_node *const *x,
                          const int *s)
{
    uint32_t x1 = c->val[x[0]->id], x2 = c->val[x[1]->id];
    uint32_t S1 = v1(c, HS_OP_SIN, n, x1), C1 = v1(c, HS_OP_COS, n, x1);
    uint32_t S2 = v1(c, HS_OP_SIN, n, x2), C2 = v1(c, HS_OP_COS, n, x2);
    uint32_t id = n->id;
    const hs_node *a = n->args[0];      /* the arithmetic's origin: the sum */
    if (n->kind == HS_SIN) {
        /* s1 S1 C2 + s2 C1 S2 = s1 (S1 C2 +- C1 S2) */
        c->val[id] = v2(c, s[0] == s[1] ? HS_OP_ADD : HS_OP_SUB, a,
                        v2(c, HS_OP_MUL, a, S1, C2), v2(c, HS_OP_MUL, a, C1, S2));
        c->neg[id] = (uint8_t)s[0];
    } else {
        /* C1 C2 - s1 s2 S1 S2 */
        c->val[id] = v2(c, s[0] == s[1] ? HS_OP_SUB : HS_OP_ADD, a,
                        v2(c, HS_OP_MUL, a, C1, C2), v2(c, HS_OP_MUL, a, S1, S2));
        c->neg[id] = 0;
    }
}

/* Lower node n; its arguments are lowered already. */
static void lower(compiler *c, const hs_node *n, uint32_t *scratch, size_t maxargs)
{
    uint32_t id = n->id;
    switch (n->kind) {
    case HS_NUM:
        c->val[id] = vconst(c, n, n->value);
        return;
    case HS_SYM:
        c->val[id] = vget(c, V_INPUT, n, NONE, NONE, NONE, 0.0, n->sym);
        return;
    case HS_ADD:
        lower_add(c, n, scratch, maxargs);
        return;
    case HS_MUL:
        lower_mul(c, n, scratch);
        return;
    case HS_POW:
        if (n->args[1]->kind == HS_NUM) {
            int s;
            lower_pow(c, n, n->args[0], n->args[1]->value, &c->val[id], &s);
            c->neg[id] = (uint8_t)s;
        } else {
            c->val[id] = v2(c, HS_OP_POW, n, mat(c, n->args[0]), mat(c, n->args[1]));
        }
        return;
    case HS_IF:
        c->val[id] = vnew(c, HS_OP_SELECT, n, mat(c, n->args[0]),
                          mat(c, n->args[1]), mat(c, n->args[2]));
        return;
    default:
        break;
    }
    const hs_node *x[2];
    int s[2];
    if ((n->kind == HS_SIN || n->kind == HS_COS) && c->addform
        && hs_trig_two_symbol_sum(n->args[0], x, s)) {
        lower_addform(c, n, x, s);
        return;
    }
    switch (n->kind) {
    /* odd functions pass the sign through: sin(-x) = -sin(x) */
    case HS_SIN: case HS_TAN: case HS_ASIN: case HS_ATAN: case HS_SINH: case HS_TANH:
        c->val[id] = v1(c, kind_op(n->kind), n, c->val[n->args[0]->id]);
        c->neg[id] = c->neg[n->args[0]->id];
        return;
    /* even functions drop it: cos(-x) = cos(x) */
    case HS_COS: case HS_COSH: case HS_ABS:
        c->val[id] = v1(c, kind_op(n->kind), n, c->val[n->args[0]->id]);
        return;
    case HS_HYPOT:
        c->val[id] = v2(c, HS_OP_HYPOT, n, c->val[n->args[0]->id],
                        c->val[n->args[1]->id]);
        return;
    default:
        break;
    }
    int op = kind_op(n->kind);
    if (op < 0 || (size_t)hs_op_nargs[op] != n->nargs) {
        fail(c, "unknown node kind");
        c->val[id] = 0;
        return;
    }
    c->val[id] = hs_op_nargs[op] == 1
                     ? v1(c, op, n, mat(c, n->args[0]))
                     : v2(c, op, n, mat(c, n->args[0]), mat(c, n->args[1]));
}

/* Pass 1+2: post-order walk of the dag from the roots, counting uses, and
 * lowering each node after its arguments. */
static int walk_and_lower(compiler *c, const hs_node *const *roots, size_t nroots)
{
    typedef struct { const hs_node *n; uint32_t i; } frame;
    size_t cap = 64, top = 0, maxargs = 1;
    frame *st = malloc(cap * sizeof *st);
    uint8_t *state = calloc(c->nid, 1);       /* 0 new, 1 open, 2 done */
    const hs_node **order = NULL;
    size_t norder = 0, caporder = 0;
    if (!st || !state)
        goto oom;
    for (size_t r = 0; r < nroots; r++) {
        const hs_node *root = roots[r];
        c->uses[root->id]++;
        if (state[root->id])
            continue;
        state[root->id] = 1;
        st[top++] = (frame){root, 0};
        while (top) {
            frame *f = &st[top - 1];
            if (f->i < f->n->nargs) {
                const hs_node *a = f->n->args[f->i++];
                if (a->id >= c->nid) {
                    fail(c, "node not from this dag");
                    goto out;
                }
                c->uses[a->id]++;
                if (state[a->id])
                    continue;
                state[a->id] = 1;
                if (HS_VEC_RESERVE(st, cap, top + 1))
                    goto oom;
                st[top++] = (frame){a, 0};
                continue;
            }
            if (HS_VEC_RESERVE(order, caporder, norder + 1))
                goto oom;
            state[f->n->id] = 2;
            order[norder++] = f->n;
            if (f->n->nargs > maxargs)
                maxargs = f->n->nargs;
            top--;
        }
    }
    /* uses are complete only now: lower in post-order */
    uint8_t *mark = calloc(c->nid, 1);
    if (!mark)
        goto oom;
    c->addform = hs_trig_want_addform(order, norder, mark);
    free(mark);
    uint32_t *scratch = malloc(4 * maxargs * sizeof *scratch);
    if (!scratch)
        goto oom;
    for (size_t i = 0; i < norder && !c->failed; i++)
        lower(c, order[i], scratch, maxargs);
    free(scratch);
    goto out;
oom:
    nomem(c);
out:
    free(st);
    free(state);
    free(order);
    return c->failed ? -1 : 0;
}

static int nargs_of(const vnode *x)
{
    return x->op >= HS_NOPS ? 0 : hs_op_nargs[x->op];
}

/* Count readers of each vnode reachable from the roots. */
static int count_uses(compiler *c, const uint32_t *rootv, size_t nroots)
{
    uint32_t *st = malloc((c->nv + 1) * sizeof *st);
    uint8_t *seen = calloc(c->nv + 1, 1);
    size_t top = 0;
    if (!st || !seen) {
        free(st);
        free(seen);
        return nomem(c);
    }
    for (size_t i = 0; i < c->nv; i++)
        c->v[i].nuse = 0;
    for (size_t r = 0; r < nroots; r++)
        if (!seen[rootv[r]]) {
            seen[rootv[r]] = 1;
            st[top++] = rootv[r];
        }
    while (top) {
        vnode *x = &c->v[st[--top]];
        x->live = 1;
        for (int j = 0; j < nargs_of(x); j++) {
            uint32_t a = x->arg[j];
            c->v[a].nuse++;
            if (!seen[a]) {
                seen[a] = 1;
                st[top++] = a;
            }
        }
    }
    free(st);
    free(seen);
    return 0;
}

/* Pass 3: a product read once, by a sum or difference, fuses into it. */
static void fuse(compiler *c)
{
    for (size_t i = 0; i < c->nv; i++) {
        vnode *x = &c->v[i];
        if (!x->live || (x->op != HS_OP_ADD && x->op != HS_OP_SUB))
            continue;
        vnode *l = &c->v[x->arg[0]], *r = &c->v[x->arg[1]];
        int lm = (l->op == HS_OP_MUL || l->op == HS_OP_SQR) && l->nuse == 1;
        int rm = (r->op == HS_OP_MUL || r->op == HS_OP_SQR) && r->nuse == 1;
        vnode *m;
        uint32_t other;
        if (x->op == HS_OP_ADD && (lm || rm)) {
            m = lm ? l : r;
            other = lm ? x->arg[1] : x->arg[0];
            x->op = HS_OP_MULADD;               /* m + other */
        } else if (x->op == HS_OP_SUB && rm) {
            m = r;
            other = x->arg[0];
            x->op = HS_OP_NMULADD;              /* other - m */
        } else if (x->op == HS_OP_SUB && lm) {
            m = l;
            other = x->arg[1];
            x->op = HS_OP_MULSUB;               /* m - other */
        } else {
            continue;
        }
        x->arg[0] = m->arg[0];
        x->arg[1] = m->op == HS_OP_SQR ? m->arg[0] : m->arg[1];   /* x^2 = x*x */
        x->arg[2] = other;
        m->nuse = 0;
    }
}

/* Index of x's operand of j-th largest height (ties: operand order).
 * Computing the taller operand first keeps fewer values live
 * (Sethi-Ullman): in a chain ((a+b)+c)+d each term is computed just
 * before it is added. */
static int nth_highest(const compiler *c, const vnode *x, int j)
{
    int idx[3] = {0, 1, 2}, n = nargs_of(x);
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && c->v[x->arg[idx[k]]].height
                                   > c->v[x->arg[idx[k - 1]]].height; k--) {
            int t = idx[k];
            idx[k] = idx[k - 1];
            idx[k - 1] = t;
        }
    return idx[j];
}

/* Pass 4: schedule (post-order from the roots), pool constants, allocate
 * registers with reuse, and emit. */
static hs_prog *emit(compiler *c, const uint32_t *rootv, const uint8_t *rootneg,
                     size_t nroots)
{
    hs_prog *p = calloc(1, sizeof *p);
    uint32_t *sched = malloc((c->nv + 1) * sizeof *sched);
    uint32_t *st = malloc((c->nv + 1) * sizeof *st);
    uint8_t *argi = calloc(c->nv + 1, 1);   /* next operand to visit; 0xff done */
    uint32_t *freel = malloc((c->nv + 1) * sizeof *freel);
    size_t ns = 0, nk = 0, top = 0, nfree = 0;
    int32_t maxsym = -1;
    if (!p || !sched || !st || !argi || !freel)
        goto oom;

    for (size_t r = 0; r < nroots; r++) {
        if (argi[rootv[r]])
            continue;
        st[top++] = rootv[r];
        argi[rootv[r]] = 1;
        while (top) {
            uint32_t xi = st[top - 1];
            vnode *x = &c->v[xi];
            int j = argi[xi] - 1;
            if (j < nargs_of(x)) {
                argi[xi]++;
                uint32_t a = x->arg[nth_highest(c, x, j)];
                if (!argi[a]) {
                    argi[a] = 1;
                    st[top++] = a;
                }
                continue;
            }
            top--;
            argi[xi] = 0xff;
            if (x->op == V_CONST)
                x->reg = (uint32_t)nk++;
            else if (x->op == V_INPUT)
                maxsym = x->sym > maxsym ? x->sym : maxsym;
            else
                sched[ns++] = xi;
        }
    }
    size_t nin = (size_t)(maxsym + 1), base = nk + nin;
    if (base >= HS_MAX_REGS)
        goto toolarge;

    /* liveness: last reader of each value; roots live to the end */
    for (size_t i = 0; i < ns; i++) {
        vnode *x = &c->v[sched[i]];
        for (int j = 0; j < nargs_of(x); j++)
            c->v[x->arg[j]].last = (uint32_t)i;
    }
    for (size_t r = 0; r < nroots; r++)
        c->v[rootv[r]].last = NONE;

    p->k = malloc((nk ? nk : 1) * sizeof *p->k);
    p->code = calloc(ns + 1, sizeof *p->code);
    p->pos = malloc((ns ? ns : 1) * sizeof *p->pos);
    p->kind = malloc(ns ? ns : 1);
    p->node = malloc((ns ? ns : 1) * sizeof *p->node);
    p->outreg = malloc((nroots ? nroots : 1) * sizeof *p->outreg);
    p->negout = malloc((nroots ? nroots : 1) * sizeof *p->negout);
    if (!p->k || !p->code || !p->pos || !p->kind || !p->node || !p->outreg || !p->negout)
        goto oom;

    size_t next = base;
    for (size_t i = 0; i < c->nv; i++) {
        vnode *x = &c->v[i];
        if (x->op == V_CONST && x->reg != NONE)
            p->k[x->reg] = x->value;
        else if (x->op == V_INPUT)
            x->reg = (uint32_t)(nk + (size_t)x->sym);
    }
    for (size_t i = 0; i < ns; i++) {
        vnode *x = &c->v[sched[i]];
        int na = nargs_of(x);
        /* free operands read for the last time here (once each) */
        for (int j = 0; j < na; j++) {
            vnode *a = &c->v[x->arg[j]];
            if (a->op < HS_NOPS && a->last == i) {
                freel[nfree++] = a->reg;
                a->last = NONE - 1;   /* not freed twice for x op x */
            }
        }
        x->reg = nfree ? freel[--nfree] : (uint32_t)next++;
        if (next >= HS_MAX_REGS)
            goto toolarge;
        hs_instr *in = &p->code[i];
        in->opa = (uint32_t)x->op | x->reg << 8;
        in->b = na > 0 ? c->v[x->arg[0]].reg : 0;
        in->c = na > 1 ? c->v[x->arg[1]].reg : x->op == HS_OP_POWI ? x->arg[1] : 0;
        in->d = na > 2 ? c->v[x->arg[2]].reg : 0;
        p->pos[i] = x->node->pos;
        p->kind[i] = x->kind;
        p->node[i] = x->node;
    }
    for (size_t r = 0; r < nroots; r++) {
        p->outreg[r] = c->v[rootv[r]].reg;
        if (rootneg[r])
            p->negout[p->nnegout++] = (uint32_t)r;
    }
    p->nk = (uint32_t)nk;
    p->nin = (uint32_t)nin;
    p->nout = (uint32_t)nroots;
    p->nregs = (uint32_t)next;
    p->ninstr = ns;
    goto out;
toolarge:
    fail(c, "program too large (more than 2^24 registers)");
    goto fail;
oom:
    nomem(c);
fail:
    hs_prog_free(p);
    p = NULL;
out:
    free(sched);
    free(st);
    free(argi);
    free(freel);
    return p;
}

hs_prog *hs_prog_compile(const hs_dag *d, const hs_node *const *roots,
                         size_t nroots, hs_error *err)
{
    compiler c = {.err = err};
    hs_prog *p = NULL;
    uint32_t *rootv = NULL;
    uint8_t *rootneg = NULL;
    for (size_t r = 0; r < nroots; r++)
        if (!roots[r]) {
            fail(&c, "NULL root");
            return NULL;
        }
    /* ids are creation order; allow for 0- or 1-based numbering */
    c.nid = hs_dag_nnodes(d) + 1;
    for (size_t r = 0; r < nroots; r++)
        if (roots[r]->id >= c.nid) {
            fail(&c, "node not from this dag");
            return NULL;
        }
    c.val = malloc(c.nid * sizeof *c.val);
    c.negv = malloc(c.nid * sizeof *c.negv);
    c.neg = calloc(c.nid, 1);
    c.uses = calloc(c.nid, sizeof *c.uses);
    rootv = malloc((nroots ? nroots : 1) * sizeof *rootv);
    rootneg = malloc(nroots ? nroots : 1);
    if (!c.val || !c.negv || !c.neg || !c.uses || !rootv || !rootneg) {
        nomem(&c);
        goto out;
    }
    memset(c.negv, 0xff, c.nid * sizeof *c.negv);
    if (walk_and_lower(&c, roots, nroots) < 0)
        goto out;
    /* a negated root is copied out negated: no NEG instruction */
    for (size_t r = 0; r < nroots; r++) {
        rootv[r] = c.val[roots[r]->id];
        rootneg[r] = c.neg[roots[r]->id];
    }
    if (c.failed || count_uses(&c, rootv, nroots) < 0)
        goto out;
    fuse(&c);
    p = emit(&c, rootv, rootneg, nroots);
out:
    free(c.v);
    free(c.val);
    free(c.negv);
    free(c.neg);
    free(c.uses);
    free(c.ht);
    free(rootv);
    free(rootneg);
    return p;
}

void hs_prog_free(hs_prog *p)
{
    if (!p)
        return;
    free(p->code);
    free(p->k);
    free(p->outreg);
    free(p->negout);
    free(p->pos);
    free(p->kind);
    free(p->node);
    free(p);
}

size_t hs_prog_nregs(const hs_prog *p) { return p->nregs; }
size_t hs_prog_nin(const hs_prog *p) { return p->nin; }
size_t hs_prog_nout(const hs_prog *p) { return p->nout; }
size_t hs_prog_ninstr(const hs_prog *p) { return p->ninstr; }

size_t hs_prog_count_kind(const hs_prog *p, hs_kind k)
{
    size_t n = 0;
    for (size_t i = 0; i < p->ninstr; i++)
        n += p->kind[i] == (uint8_t)k;
    return n;
}
