/* Tests of the bytecode compiler and VM (src/expr/compile.c, vm.c).
 *
 * The reference is hs_eval_tree.  The VM may differ from it in the last
 * bits only where lowering changes the order or kind of rounding:
 * x*y^-1 -> x/y (one rounding instead of two), x^n -> repeated squaring
 * instead of pow(), and a product's factors regrouped around a division.
 * Sign propagation (a - b as SUB, sin(-x) = -sin x), constant pooling and
 * the fused MULADD family (no FMA: two roundings, as written) are exact.
 * So values are compared to 1e-12 relative to the larger of 1 and the
 * magnitudes of the terms involved (see near()), and exactly where no
 * such rewriting applies. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "expr/expr.h"
#include "expr/prog.h"   /* white-box: opcodes, constant pool */

/* ---- helpers ---- */

typedef struct fixture {
    hs_dag *d;
    const hs_node *x, *y, *z, *w;
} fixture;

static fixture fx_new(void)
{
    fixture f;
    f.d = hs_dag_new();
    ck_assert_ptr_nonnull(f.d);
    f.x = hs_sym(f.d, hs_dag_symbol(f.d, "x"));
    f.y = hs_sym(f.d, hs_dag_symbol(f.d, "y"));
    f.z = hs_sym(f.d, hs_dag_symbol(f.d, "z"));
    f.w = hs_sym(f.d, hs_dag_symbol(f.d, "w"));
    return f;
}

static hs_prog *compile_ok(const hs_dag *d, const hs_node *const *roots, size_t n)
{
    hs_error err;
    hs_error_init(&err);
    hs_prog *p = hs_prog_compile(d, roots, n, &err);
    ck_assert_msg(p != NULL, "compile failed: %s", err.msg);
    ck_assert_int_eq(err.code, 0);
    return p;
}

/* Evaluate with a fresh register file (filled with NaN: nothing may rely
 * on its previous contents). */
static void run(const hs_prog *p, const double *in, double *out)
{
    size_t nr = hs_prog_nregs(p);
    double *regs = malloc((nr ? nr : 1) * sizeof *regs);
    ck_assert_ptr_nonnull(regs);
    for (size_t i = 0; i < nr; i++)
        regs[i] = NAN;
    hs_prog_eval(p, in, regs, out);
    free(regs);
}

static int near(double a, double b, double scale)
{
    if (a == b)
        return 1;
    if (isnan(a) && isnan(b))
        return 1;
    double m = fmax(1.0, fmax(scale, fmax(fabs(a), fabs(b))));
    return fabs(a - b) <= 1e-12 * m;
}

static hs_op op_at(const hs_prog *p, size_t i)
{
    return (hs_op)HS_INSTR_OP(&p->code[i]);
}

/* ---- CSE, pooling, lowering ---- */

START_TEST(test_cse_one_sin)
{
    fixture f = fx_new();
    const hs_node *s = hs_call1(f.d, HS_SIN, f.x);
    const hs_node *roots[2] = {hs_mul(f.d, s, f.y), hs_add(f.d, s, f.y)};
    hs_prog *p = compile_ok(f.d, roots, 2);
    ck_assert_uint_eq(hs_prog_count_kind(p, HS_SIN), 1);
    ck_assert_uint_eq(hs_prog_nout(p), 2);
    double in[4] = {0.7, 1.3, 0, 0}, out[2];
    run(p, in, out);
    ck_assert(out[0] == sin(0.7) * 1.3);
    ck_assert(out[1] == sin(0.7) + 1.3);
    hs_prog_free(p);
    hs_dag_free(f.d);
}
END_TEST

START_TEST(test_constant_pool)
{
    fixture f = fx_new();
    const hs_node *k = hs_num(f.d, 2.5);
    const hs_node *roots[3] = {hs_mul(f.d, k, f.x), hs_add(f.d, k, f.y),
                               hs_call2(f.d, HS_ATAN2, f.y, k)};
    hs_prog *p = compile_ok(f.d, roots, 3);
    ck_assert_uint_eq(p->nk, 1);
    ck_assert(p->k[0] == 2.5);
    double in[2] = {3.0, 4.0}, out[3];
    run(p, in, out);
    ck_assert(out[0] == 7.5 && out[1] == 6.5 && out[2] == atan2(4.0, 2.5));
    hs_prog_free(p);
    hs_dag_free(f.d);
}
END_TEST

/* One node, one instruction: the canonical forms lower to single ops. */
START_TEST(test_lowering)
{
    fixture f = fx_new();
    hs_dag *d = f.d;
    const struct { const hs_node *e; hs_op op; size_t n; } cases[] = {
        {hs_sub(d, f.x, f.y), HS_OP_SUB, 1},                    /* x + -1*y */
        {hs_div(d, f.x, f.y), HS_OP_DIV, 1},                    /* x * y^-1 */
        {hs_pow(d, f.x, hs_num(d, 2)), HS_OP_SQR, 1},
        {hs_pow(d, f.x, hs_num(d, 3)), HS_OP_CUBE, 1},
        {hs_pow(d, f.x, hs_num(d, 7)), HS_OP_POWI, 1},
        {hs_pow(d, f.x, hs_num(d, -1)), HS_OP_RECIP, 1},
        {hs_pow(d, f.x, hs_num(d, 0.5)), HS_OP_SQRT, 1},
        {hs_pow(d, f.x, hs_num(d, -0.5)), HS_OP_RSQRT, 1},
        {hs_pow(d, f.x, hs_num(d, 1.25)), HS_OP_POW, 1},
        {hs_add(d, hs_mul(d, f.x, f.y), f.z), HS_OP_MULADD, 1},
        {hs_sub(d, f.z, hs_mul(d, f.x, f.y)), HS_OP_NMULADD, 1},
        {hs_if(d, hs_call2(d, HS_LT, f.x, f.y), f.z, f.w), HS_OP_SELECT, 2},
        {hs_neg(d, hs_call1(d, HS_COS, hs_neg(d, f.x))), HS_OP_COS, 1}, /* -cos(x) */
    };
    double in[4] = {1.7, 0.6, -2.2, 0.3};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hs_prog *p = compile_ok(d, &cases[i].e, 1);
        size_t want = cases[i].n;
        ck_assert_msg(hs_prog_ninstr(p) == want, "case %zu: %zu instructions", i,
                      hs_prog_ninstr(p));
        ck_assert_msg(op_at(p, want - 1) == cases[i].op, "case %zu: got %s", i,
                      hs_op_name[op_at(p, want - 1)]);
        double out;
        run(p, in, &out);
        ck_assert_msg(near(out, hs_eval_tree(cases[i].e, in), 0), "case %zu: %.17g vs %.17g",
                      i, out, hs_eval_tree(cases[i].e, in));
        hs_prog_free(p);
    }
    /* a difference of two negated terms still needs no NEG: -x - y */
    const hs_node *e = hs_sub(d, hs_neg(d, f.x), f.y);
    const hs_node *r2[1] = {hs_mul(d, e, f.z)};          /* (-x-y)*z */
    hs_prog *p = compile_ok(d, r2, 1);
    ck_assert_uint_eq(hs_prog_ninstr(p), 2);   /* ADD, MUL; copied out negated */
    double out;
    run(p, in, &out);
    ck_assert(out == (-1.7 - 0.6) * -2.2);
    hs_prog_free(p);

    /* -x, 2*x and -2*x as roots: one MUL, negations on the way out */
    const hs_node *r3[3] = {hs_neg(d, f.x), hs_mul(d, hs_num(d, 2), f.x),
                            hs_mul(d, hs_num(d, -2), f.x)};
    p = compile_ok(d, r3, 3);
    ck_assert_uint_eq(hs_prog_ninstr(p), 1);
    double o3[3];
    run(p, in, o3);
    ck_assert(o3[0] == -1.7 && o3[1] == 3.4 && o3[2] == -3.4);
    hs_prog_free(p);
    hs_dag_free(d);
}
END_TEST

START_TEST(test_roots_constant_symbol_duplicate)
{
    fixture f = fx_new();
    const hs_node *s = hs_call1(f.d, HS_EXP, f.z);
    const hs_node *roots[5] = {hs_num(f.d, -3.5), f.y, s, s, f.y};
    hs_prog *p = compile_ok(f.d, roots, 5);
    ck_assert_uint_eq(hs_prog_ninstr(p), 1);
    ck_assert_uint_eq(hs_prog_nin(p), 3);                 /* 1 + largest symbol */
    double in[3] = {9, 2, 0.5}, out[5];
    run(p, in, out);
    ck_assert(out[0] == -3.5 && out[1] == 2 && out[2] == exp(0.5) && out[3] == out[2]
              && out[4] == 2);
    hs_prog_free(p);

    /* no roots at all, and a program of constants only */
    p = compile_ok(f.d, NULL, 0);
    ck_assert_uint_eq(hs_prog_ninstr(p), 0);
    ck_assert_uint_eq(hs_prog_nin(p), 0);
    run(p, NULL, NULL);
    hs_prog_free(p);
    hs_dag_free(f.d);
}
END_TEST

START_TEST(test_eval_twice_no_leak)
{
    fixture f = fx_new();
    const hs_node *e = hs_add(f.d, hs_mul(f.d, hs_call1(f.d, HS_SIN, f.x), f.y),
                              hs_div(f.d, f.z, hs_add(f.d, f.w, hs_num(f.d, 3))));
    hs_prog *p = compile_ok(f.d, &e, 1);
    double *regs = calloc(hs_prog_nregs(p), sizeof *regs);
    double a[4] = {0.3, 2, 5, 1}, b[4] = {-1, 7, 0.5, 2}, o1, o2, o3;
    hs_prog_eval(p, a, regs, &o1);
    hs_prog_eval(p, b, regs, &o2);         /* different inputs in between */
    hs_prog_eval(p, a, regs, &o3);
    ck_assert(o1 == o3);
    ck_assert(near(o2, hs_eval_tree(e, b), 0));
    free(regs);
    hs_prog_free(p);
    hs_dag_free(f.d);
}
END_TEST

/* ---- register reuse ---- */

START_TEST(test_register_reuse_long_sum)
{
    fixture f = fx_new();
    enum { NT = 10000 };
    const hs_node **t = malloc(NT * sizeof *t);
    ck_assert_ptr_nonnull(t);
    /* distinct terms sin(x^k * y): no constants (POWI takes an immediate) */
    for (int k = 1; k <= NT; k++)
        t[k - 1] = hs_call1(f.d, HS_SIN, hs_mul(f.d, hs_pow(f.d, f.x, hs_num(f.d, k)), f.y));
    const hs_node *sum = hs_addn(f.d, t, NT);
    ck_assert_msg(!hs_dag_failed(f.d), "%s", hs_dag_error(f.d)->msg);
    hs_prog *p = compile_ok(f.d, &sum, 1);
    ck_assert_uint_eq(hs_prog_count_kind(p, HS_SIN), NT);
    ck_assert_msg(hs_prog_nregs(p) < 16, "nregs = %zu", hs_prog_nregs(p));
    double in[2] = {0.9, 1.1}, out;
    run(p, in, &out);
    ck_assert(near(out, hs_eval_tree(sum, in), 0));
    hs_prog_free(p);

    /* a deep chain t = sin(t) * y + x, 1200 levels (depth 3600): the
     * compiler's passes are iterative */
    const hs_node *c = f.x;
    for (int i = 0; i < 1200; i++)
        c = hs_add(f.d, hs_mul(f.d, hs_call1(f.d, HS_SIN, c), f.y), f.x);
    ck_assert_msg(!hs_dag_failed(f.d), "%s", hs_dag_error(f.d)->msg);
    p = compile_ok(f.d, &c, 1);
    ck_assert_msg(hs_prog_nregs(p) < 8, "nregs = %zu", hs_prog_nregs(p));
    run(p, in, &out);
    ck_assert(out == hs_eval_tree(c, in));           /* SIN, MULADD: exact */
    hs_prog_free(p);
    free(t);
    hs_dag_free(f.d);
}
END_TEST

/* ---- sines and cosines of angle differences (addition formulas) ---- */

/* A chain's metric in NA absolute angles: cos(a_i - a_j) and sin(a_i - a_j)
 * for every pair, and sums with both signs.  Compiled, the program calls
 * sin and cos once per angle (2 NA library instructions, not one per
 * pair), and agrees with the tree to round-off in absolute terms (the
 * addition formulas trade the relative accuracy of a tiny difference for
 * an absolute error of a few ulps of 1). */
START_TEST(test_trig_pairs_addition_formulas)
{
    enum { NA = 8 };
    hs_dag *d = hs_dag_new();
    ck_assert_ptr_nonnull(d);
    const hs_node *a[NA], *roots[4 * NA * NA];
    char name[16];
    size_t nr = 0;
    for (int i = 0; i < NA; i++) {
        snprintf(name, sizeof name, "a%d", i);
        a[i] = hs_sym(d, hs_dag_symbol(d, name));
    }
    for (int i = 0; i < NA; i++)
        for (int j = 0; j < i; j++) {
            const hs_node *diff = hs_sub(d, a[i], a[j]), *sum = hs_add(d, a[i], a[j]);
            const hs_node *nsum = hs_neg(d, sum);
            roots[nr++] = hs_call1(d, HS_COS, diff);
            roots[nr++] = hs_mul(d, hs_num(d, 3), hs_call1(d, HS_SIN, diff));
            roots[nr++] = hs_call1(d, HS_SIN, (i + j) % 2 ? sum : nsum);
            roots[nr++] = hs_call1(d, HS_COS, nsum);
        }
    hs_prog *p = compile_ok(d, roots, nr);
    ck_assert_uint_eq(hs_prog_count_kind(p, HS_SIN) + hs_prog_count_kind(p, HS_COS), 2 * NA);
    double in[NA], out[4 * NA * NA];
    for (int i = 0; i < NA; i++)
        in[i] = 0.7 * i - 2.1 + 1e-9 * (i == 3);   /* a3 - a2 = 0.7 + 1e-9 */
    in[5] = in[4] + 1e-12;                        /* a nearly zero difference */
    run(p, in, out);
    for (size_t r = 0; r < nr; r++) {
        double ref = hs_eval_tree(roots[r], in);
        ck_assert_msg(fabs(out[r] - ref) <= 8e-16 * 3, "root %zu: %.17g vs %.17g", r,
                      out[r], ref);
    }
    hs_prog_free(p);

    /* a double pendulum's one cos(a1 - a0) and sin(a1 - a0): kept whole */
    const hs_node *two[2] = { hs_call1(d, HS_COS, hs_sub(d, a[1], a[0])),
                              hs_call1(d, HS_SIN, hs_sub(d, a[1], a[0])) };
    p = compile_ok(d, two, 2);
    ck_assert_uint_eq(hs_prog_count_kind(p, HS_SIN) + hs_prog_count_kind(p, HS_COS), 2);
    run(p, in, out);
    ck_assert(out[0] == cos(in[1] - in[0]) && out[1] == sin(in[1] - in[0]));
    hs_prog_free(p);
    hs_dag_free(d);
}
END_TEST

/* ---- random expressions against the tree evaluator ---- */

static uint64_t rng = 0x9e3779b97f4a7c15u;

static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1p-53;
}

static int irand(int n) { return (int)(urand() * n); }

/* 1 + a^2 >= 1: a safe divisor, log argument, pow base */
static const hs_node *pos(hs_dag *d, const hs_node *a)
{
    return hs_add(d, hs_num(d, 1), hs_pow(d, a, hs_num(d, 2)));
}

/* sin(a) in [-1, 1]: keeps exp, sinh, pow exponents bounded */
static const hs_node *bnd(hs_dag *d, const hs_node *a)
{
    return hs_call1(d, HS_SIN, a);
}

static const hs_node *gen(hs_dag *d, const hs_node *const *sym, int depth)
{
    static const double consts[] = {0.5, 2, 2.5, -1.5, 3, 0.25, -1, 1.75};
    if (depth == 0 || urand() < 0.15) {
        if (urand() < 0.75)
            return sym[irand(4)];
        return hs_num(d, consts[irand(8)]);
    }
    const hs_node *a = gen(d, sym, depth - 1);
    const hs_node *b = irand(3) ? gen(d, sym, depth - 1) : sym[irand(4)];
    switch (irand(30)) {
    case 0: case 1: case 2: return hs_add(d, a, b);
    case 3: case 4: case 5: return hs_sub(d, a, b);
    case 6: case 7: case 8: return hs_mul(d, a, b);
    case 9: case 10: return hs_div(d, a, pos(d, b));
    case 11: return hs_neg(d, a);
    case 12: return hs_pow(d, bnd(d, a), hs_num(d, irand(5)));        /* 0..4 */
    case 13: return hs_pow(d, pos(d, a), hs_num(d, -1 - irand(3)));   /* -1..-3 */
    case 14: return hs_pow(d, pos(d, a), hs_num(d, irand(2) ? 0.5 : -0.5));
    case 15: return hs_pow(d, pos(d, bnd(d, a)), hs_add(d, bnd(d, b), hs_num(d, 0.5)));
    case 16: return hs_call1(d, irand(2) ? HS_SIN : HS_COS, a);
    case 17: return hs_call1(d, HS_TAN, hs_mul(d, hs_num(d, 0.5), bnd(d, a)));
    case 18: return hs_call1(d, irand(2) ? HS_ASIN : HS_ACOS, hs_mul(d, hs_num(d, 0.9), bnd(d, a)));
    case 19: return hs_call1(d, HS_ATAN, a);
    case 20: return hs_call1(d, (hs_kind)(HS_SINH + irand(3)), bnd(d, a));   /* sinh cosh tanh */
    case 21: return hs_call1(d, HS_EXP, bnd(d, a));
    case 22: return hs_call1(d, HS_LOG, pos(d, a));
    case 23: return hs_call1(d, HS_SQRT, pos(d, a));
    case 24: return hs_call1(d, irand(2) ? HS_ABS : HS_SIGN, a);
    case 25: return hs_call2(d, HS_ATAN2, a, b);
    case 26: return hs_call2(d, (hs_kind)(HS_MIN + irand(3)), a, b);       /* min max hypot */
    case 27: return hs_call2(d, (hs_kind)(HS_LT + irand(6)), a, b);
    case 28: return hs_if(d, hs_call2(d, HS_GT, a, b), a, hs_neg(d, b));
    default: return hs_mul(d, hs_num(d, consts[irand(8)]), a);
    }
}

/* Sum of |subterm values|: the scale against which rounding is judged
 * (a sum that cancels to 1e-3 carries the rounding of its 1e3 terms). */
static double scale_of(const hs_node *e, const double *in, int depth)
{
    double s = fabs(hs_eval_tree(e, in));
    if (depth > 3)
        return s;
    for (uint32_t i = 0; i < e->nargs; i++)
        s = fmax(s, scale_of(e->args[i], in, depth + 1));
    return s;
}

START_TEST(test_random_vs_tree)
{
    enum { NEXPR = 1500, NPTS = 4 };
    fixture f = fx_new();
    const hs_node *sym[4] = {f.x, f.y, f.z, f.w};
    const hs_node **e = malloc(NEXPR * sizeof *e);
    double *sep = malloc(NEXPR * NPTS * sizeof *sep), *all = malloc(NEXPR * sizeof *all);
    ck_assert(e && sep && all);
    double pts[NPTS][4];
    for (int k = 0; k < NPTS; k++)
        for (int j = 0; j < 4; j++)
            pts[k][j] = -1.5 + 3 * urand();
    size_t exact = 0, n = 0;
    for (int i = 0; i < NEXPR; i++) {
        e[i] = gen(f.d, sym, 1 + irand(6));
        ck_assert_msg(!hs_dag_failed(f.d), "expr %d: %s", i, hs_dag_error(f.d)->msg);
        hs_prog *p = compile_ok(f.d, &e[i], 1);
        for (int k = 0; k < NPTS; k++) {
            double t = hs_eval_tree(e[i], pts[k]);
            run(p, pts[k], &sep[i * NPTS + k]);
            double v = sep[i * NPTS + k];
            ck_assert_msg(isfinite(t), "expr %d not kept in domain", i);
            if (!near(v, t, scale_of(e[i], pts[k], 0))) {
                hs_fprint(stderr, f.d, e[i]);
                fputc('\n', stderr);
                hs_prog_disasm(p, f.d, stderr);
                ck_abort_msg("expr %d at point %d: vm %.17g tree %.17g", i, k, v, t);
            }
            exact += v == t;
            n++;
        }
        hs_prog_free(p);
    }
    fprintf(stderr, "random: %zu of %zu values bit-exact\n", exact, n);
    /* most are bit-exact: only DIV/POWI/regrouping may round differently */
    ck_assert_msg(exact * 10 >= n * 8, "only %zu of %zu exact", exact, n);

    /* one program for all roots agrees with the separate programs */
    hs_prog *p = compile_ok(f.d, e, NEXPR);
    ck_assert_uint_eq(hs_prog_nout(p), NEXPR);
    fprintf(stderr, "random: one program of %zu instructions, %zu registers\n",
            hs_prog_ninstr(p), hs_prog_nregs(p));
    for (int k = 0; k < NPTS; k++) {
        run(p, pts[k], all);
        for (int i = 0; i < NEXPR; i++)
            ck_assert_msg(near(all[i], sep[i * NPTS + k], scale_of(e[i], pts[k], 0)),
                          "root %d at point %d: %.17g vs %.17g", i, k, all[i],
                          sep[i * NPTS + k]);
    }
    hs_prog_free(p);
    free(e);
    free(sep);
    free(all);
    hs_dag_free(f.d);
}
END_TEST

/* ---- non-finite diagnosis ---- */

static void expect_nonfinite(const hs_prog *p, const double *in, int off, const char *what)
{
    size_t nr = hs_prog_nregs(p);
    double *regs = malloc((nr ? nr : 1) * sizeof *regs);
    hs_srcpos pos = {-1, -1};
    const char *why = NULL;
    int r = hs_prog_find_nonfinite(p, in, regs, &pos, &why);
    ck_assert_int_eq(r, 1);
    ck_assert_int_eq(pos.src, off < 0 ? -1 : 7);
    ck_assert_int_eq(pos.off, off);
    ck_assert_msg(strstr(why, what) != NULL, "got '%s', want '%s'", why, what);
    free(regs);
}

START_TEST(test_find_nonfinite)
{
    fixture f = fx_new();
    hs_dag *d = f.d;
    hs_dag_set_pos(d, (hs_srcpos){7, 10});
    const hs_node *lg = hs_call1(d, HS_LOG, f.x);
    hs_dag_set_pos(d, (hs_srcpos){7, 20});
    const hs_node *sq = hs_call1(d, HS_SQRT, f.y);
    hs_dag_set_pos(d, (hs_srcpos){7, 30});
    const hs_node *dv = hs_div(d, hs_num(d, 1), hs_sub(d, f.z, hs_num(d, 1)));
    hs_dag_set_pos(d, (hs_srcpos){7, 40});
    const hs_node *as = hs_call1(d, HS_ASIN, f.w);
    hs_dag_set_pos(d, (hs_srcpos){7, 50});
    const hs_node *ex = hs_call1(d, HS_EXP, hs_mul(d, f.w, f.z));
    hs_dag_set_pos(d, (hs_srcpos){7, 60});
    /* the untaken branch may be NaN without being blamed */
    const hs_node *guarded = hs_if(d, hs_call2(d, HS_GT, f.x, hs_num(d, 0)), lg, hs_num(d, 0));
    hs_dag_set_pos(d, (hs_srcpos){-1, -1});
    const hs_node *roots[4] = {
        hs_mul(d, hs_add(d, lg, sq), f.w), hs_add(d, dv, guarded), as, ex};
    hs_prog *p = compile_ok(d, roots, 4);

    double ok[4] = {2, 3, 5, 0.5};
    double *regs = malloc(hs_prog_nregs(p) * sizeof *regs);
    hs_srcpos pos;
    const char *why = NULL;
    ck_assert_int_eq(hs_prog_find_nonfinite(p, ok, regs, &pos, &why), 0);
    free(regs);

    expect_nonfinite(p, (double[]){-1, 3, 5, 0.5}, 10, "log of a non-positive");
    expect_nonfinite(p, (double[]){0, 3, 5, 0.5}, 10, "log of a non-positive");
    expect_nonfinite(p, (double[]){2, -3, 5, 0.5}, 20, "sqrt of a negative");
    expect_nonfinite(p, (double[]){2, 3, 1, 0.5}, 30, "division by zero");
    expect_nonfinite(p, (double[]){2, 3, 5, 1.5}, 40, "asin argument outside [-1,1]");
    expect_nonfinite(p, (double[]){2, 3, 1000, 1}, 50, "overflow in exp");
    expect_nonfinite(p, (double[]){2, 3, 5, NAN}, -1, "non-finite input");
    /* x < 0 makes log(x) NaN in both roots 0 and 1; root 1 guards it, but
     * root 0 does not: log is blamed, through root 0 */
    expect_nonfinite(p, (double[]){-2, 3, 5, 0.5}, 10, "log");
    hs_prog_free(p);

    /* log(x) NaN only inside an untaken branch, sqrt(y) NaN in the output */
    const hs_node *r2[2] = {guarded, sq};
    p = compile_ok(d, r2, 2);
    expect_nonfinite(p, (double[]){-1, -4, 0, 0}, 20, "sqrt");
    hs_prog_free(p);
    hs_dag_free(d);
}
END_TEST

/* ---- NaN propagation ----
 * A comparison, min or max with a NaN operand is NaN, and so is if() with
 * a NaN condition, in the program and in the reference evaluator (C's
 * comparisons and fmin/fmax would make it 0, 1 or the other operand). */

enum { N_CMP = 9 };

static void cmp_roots(fixture *f, const hs_node **r)
{
    hs_dag *d = f->d;
    static const hs_kind k[8] = {HS_LT, HS_LE, HS_GT, HS_GE, HS_EQ, HS_NE, HS_MIN, HS_MAX};
    for (int i = 0; i < 8; i++)
        r[i] = hs_call2(d, k[i], f->x, f->y);
    r[8] = hs_if(d, hs_call2(d, HS_LT, f->x, f->y), f->z, f->w);
}

START_TEST(test_nan_propagates)
{
    fixture f = fx_new();
    const hs_node *r[N_CMP];
    cmp_roots(&f, r);
    hs_prog *p = compile_ok(f.d, r, N_CMP);
    /* x < y, <=, >, >=, ==, !=, min, max, if(x < y, z, w) */
    static const struct {
        double x, y, want[N_CMP];
    } rows[] = {
        {1, 2, {1, 1, 0, 0, 0, 1, 1, 2, 10}},
        {2, 1, {0, 0, 1, 1, 0, 1, 1, 2, 20}},
        {3, 3, {0, 1, 0, 1, 1, 0, 3, 3, 20}},
        {-INFINITY, INFINITY, {1, 1, 0, 0, 0, 1, -INFINITY, INFINITY, 10}},
        {INFINITY, INFINITY, {0, 1, 0, 1, 1, 0, INFINITY, INFINITY, 20}},
        {NAN, 1, {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN}},
        {1, NAN, {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN}},
        {NAN, NAN, {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN}},
        {NAN, INFINITY, {NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN, NAN}},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        double in[4] = {rows[i].x, rows[i].y, 10, 20}, out[N_CMP];
        run(p, in, out);
        for (int j = 0; j < N_CMP; j++) {
            double w = rows[i].want[j], t = hs_eval_tree(r[j], in);
            ck_assert_msg(out[j] == w || (isnan(out[j]) && isnan(w)),
                          "row %zu root %d: program %g, want %g", i, j, out[j], w);
            ck_assert_msg(t == w || (isnan(t) && isnan(w)),
                          "row %zu root %d: tree %g, want %g", i, j, t, w);
        }
    }
    /* a NaN in the branch not taken stays out; in the branch taken, in */
    double in[4] = {1, 2, 10, NAN}, out[N_CMP];
    run(p, in, out);
    ck_assert(out[8] == 10);
    in[2] = NAN;
    run(p, in, out);
    ck_assert(isnan(out[8]));
    hs_prog_free(p);
    hs_dag_free(f.d);
}
END_TEST

/* A NaN made inside a condition reaches the output and is traced to where
 * it was made; before, sqrt(x) < 1 was silently false at x < 0. */
START_TEST(test_nan_in_condition_located)
{
    fixture f = fx_new();
    hs_dag *d = f.d;
    hs_dag_set_pos(d, (hs_srcpos){7, 11});
    const hs_node *sq = hs_call1(d, HS_SQRT, f.x);
    hs_dag_set_pos(d, (hs_srcpos){7, 30});
    const hs_node *c = hs_call2(d, HS_LT, sq, hs_num(d, 1));
    const hs_node *roots[3] = {hs_if(d, c, f.y, f.z), hs_call2(d, HS_MAX, hs_call1(d, HS_LOG, f.y), f.z),
                               hs_call2(d, HS_EQ, f.w, sq)};
    hs_dag_set_pos(d, (hs_srcpos){-1, 0});
    hs_prog *p = compile_ok(d, roots, 3);
    double out[3];
    run(p, (double[]){4, 2, 3, 2}, out);
    ck_assert(out[0] == 3 && out[1] == 3 && out[2] == 1);
    run(p, (double[]){-1, 2, 3, 5}, out);
    ck_assert(isnan(out[0]) && out[1] == 3 && isnan(out[2]));
    expect_nonfinite(p, (double[]){-1, 2, 3, 5}, 11, "sqrt of a negative number");
    run(p, (double[]){4, -2, 3, 5}, out);
    ck_assert(out[0] == 3 && isnan(out[1]));
    hs_prog_free(p);
    hs_dag_free(d);
}
END_TEST

START_TEST(test_disasm)
{
    fixture f = fx_new();
    const hs_node *e = hs_add(f.d, hs_call1(f.d, HS_SIN, f.x),
                              hs_pow(f.d, f.y, hs_num(f.d, 5)));
    hs_prog *p = compile_ok(f.d, &e, 1);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(m);
    hs_prog_disasm(p, f.d, m);
    fclose(m);
    ck_assert_msg(strstr(buf, "SIN") && strstr(buf, "POWI") && strstr(buf, "#5")
                  && strstr(buf, "r[a] = sin(r[b])") && strstr(buf, "out[0]"),
                  "listing:\n%s", buf);
    free(buf);
    hs_prog_free(p);
    hs_dag_free(f.d);
}
END_TEST

static Suite *vm_suite(void)
{
    Suite *s = suite_create("vm");
    TCase *tc = tcase_create("compile");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cse_one_sin);
    tcase_add_test(tc, test_constant_pool);
    tcase_add_test(tc, test_lowering);
    tcase_add_test(tc, test_roots_constant_symbol_duplicate);
    tcase_add_test(tc, test_eval_twice_no_leak);
    tcase_add_test(tc, test_register_reuse_long_sum);
    tcase_add_test(tc, test_trig_pairs_addition_formulas);
    tcase_add_test(tc, test_random_vs_tree);
    tcase_add_test(tc, test_find_nonfinite);
    tcase_add_test(tc, test_nan_propagates);
    tcase_add_test(tc, test_nan_in_condition_located);
    tcase_add_test(tc, test_disasm);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(vm_suite)
