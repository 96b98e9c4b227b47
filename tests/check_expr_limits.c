/* Tests of the expression engine at scale (src/expr/): the symbolic
 * blow-ups of issue 19 (a constraint that is a product of many factors or
 * a deep nest of sines, through G_q, Gdot = D G and gamma = D Gdot) checked
 * against closed forms and bounded in nodes and bytes; the derivative
 * cache (repeated work builds nothing); the limits (derivative work, dag
 * memory) as positioned errors; every walk at the maximum depth (run under
 * `make check SANITIZE=1`, where stack frames are large); the sparse
 * gradient and the symbol sets. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "expr/expr.h"

/* Symbols in creation order: the input slots of the programs below. */
enum { T, X, Y, XV, YV, A, B, NSYM };
static const char *const SYMS[] = {"t", "x", "y", "x'", "y'", "a", "b"};
static const int Q[2] = {X, Y}, V[2] = {XV, YV};

static hs_dag *new_dag(void)
{
    hs_dag *d = hs_dag_new();
    ck_assert_ptr_nonnull(d);
    for (int i = 0; i < NSYM; i++)
        ck_assert_int_eq(hs_dag_symbol(d, SYMS[i]), i);
    return d;
}

/* The loader's kernels of one constraint G(q) with q = (x, y):
 * out = {G_x, G_y, Gdot, gamma}, compiled and evaluated at in[]. */
static void kernels(hs_dag *d, const hs_node *G, const double *in, double out[4])
{
    const hs_node *k[4];
    k[0] = hs_diff(d, G, X);
    k[1] = hs_diff(d, G, Y);
    k[2] = hs_total_diff(d, G, T, 2, Q, V);
    k[3] = hs_total_diff(d, k[2], T, 2, Q, V);
    ck_assert_msg(!hs_dag_failed(d), "%s", hs_dag_error(d)->msg);
    hs_error err;
    hs_error_init(&err);
    hs_prog *p = hs_prog_compile(d, k, 4, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    double *regs = malloc(hs_prog_nregs(p) * sizeof *regs);
    ck_assert_ptr_nonnull(regs);
    hs_prog_eval(p, in, regs, out);
    /* the reference evaluator agrees with the program */
    for (int i = 0; i < 4; i++)
        ck_assert_msg(fabs(hs_eval_tree(k[i], in) - out[i]) <= 1e-12 * fmax(1, fabs(out[i])),
                      "kernel %d: tree %.17g, program %.17g", i, hs_eval_tree(k[i], in), out[i]);
    free(regs);
    hs_prog_free(p);
}

static void close_to(double got, double want, double rel, const char *what)
{
    ck_assert_msg(isfinite(got) && fabs(got - want) <= rel * fabs(want),
                  "%s: %.17g, want %.17g", what, got, want);
}

/* ---- a product of n factors sin(x + i) ----
 * f = prod sin(x + i): f' = f S1, f'' = f (S1^2 - S2) with S1 = sum
 * cot(x + i), S2 = sum csc^2(x + i).  G = f + y^2, so G_x = f', G_y = 2y,
 * Gdot = f' x' + 2 y y', gamma = f'' x'^2 + 2 y'^2. */
static const int product_n[] = {12, 100, 200, 500};

START_TEST(test_product_kernels)
{
    int n = product_n[_i];
    hs_dag *d = new_dag();
    const hs_node **f = malloc((size_t)n * sizeof *f);
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < n; i++)
        f[i] = hs_call1(d, HS_SIN, hs_add(d, hs_sym(d, X), hs_num(d, i + 1)));
    const hs_node *G = hs_add(d, hs_muln(d, f, (size_t)n), hs_pow(d, hs_sym(d, Y), hs_num(d, 2)));
    free(f);
    size_t before = hs_dag_nnodes(d);

    double in[NSYM] = {0.1, 0.3, 0.7, 0.9, -0.4, 0, 0}, out[4];
    kernels(d, G, in, out);
    double x = in[X], prod = 1, s1 = 0, s2 = 0;
    for (int i = 1; i <= n; i++) {
        double s = sin(x + i), c = cos(x + i);
        prod *= s;
        s1 += c / s;
        s2 += 1 / (s * s);
    }
    double fp = prod * s1, fpp = prod * (s1 * s1 - s2);
    close_to(out[0], fp, 1e-10, "G_x");
    close_to(out[1], 2 * in[Y], 1e-15, "G_y");
    close_to(out[2], fp * in[XV] + 2 * in[Y] * in[YV], 1e-10, "Gdot");
    close_to(out[3], fpp * in[XV] * in[XV] + 2 * in[YV] * in[YV], 1e-9, "gamma");
    /* n log n, not n^3 (the n-ary product rule built about n^3 / 2
     * factors: 85 s and 911 MB at n = 100) */
    size_t built = hs_dag_nnodes(d) - before;
    ck_assert_msg(built < 50 * (size_t)n, "%zu nodes for n = %d", built, n);
    ck_assert_uint_lt(hs_dag_bytes(d), 64u << 20);
    hs_dag_free(d);
}
END_TEST

/* ---- s_n = sin(sin(... sin(x))) n deep ----
 * Derivatives by forward accumulation of (s, s', s'') through
 * sin: (sin s, cos s s', cos s s'' - sin s s'^2). */
static const int nest_n[] = {120, 300};

START_TEST(test_nested_sines)
{
    int n = nest_n[_i];
    hs_dag *d = new_dag();
    const hs_node *s = hs_sym(d, X);
    for (int i = 0; i < n; i++)
        s = hs_call1(d, HS_SIN, s);
    const hs_node *G = hs_add(d, s, hs_pow(d, hs_sym(d, Y), hs_num(d, 2)));
    size_t before = hs_dag_nnodes(d);
    double in[NSYM] = {0, 1.2, -0.5, 0.8, 0.3, 0, 0}, out[4];
    kernels(d, G, in, out);
    double v = in[X], v1 = 1, v2 = 0;
    for (int i = 0; i < n; i++) {
        double c = cos(v), sn = sin(v);
        v2 = c * v2 - sn * v1 * v1;
        v1 = c * v1;
        v = sn;
    }
    close_to(out[0], v1, 1e-11, "G_x");
    close_to(out[2], v1 * in[XV] + 2 * in[Y] * in[YV], 1e-11, "Gdot");
    close_to(out[3], v2 * in[XV] * in[XV] + 2 * in[YV] * in[YV], 1e-9, "gamma");
    /* linear in n: the second derivative shares the first (before: 10 s
     * and 615 MB at n = 120) */
    size_t built = hs_dag_nnodes(d) - before;
    ck_assert_msg(built < 20 * (size_t)n, "%zu nodes for n = %d", built, n);
    hs_dag_free(d);
}
END_TEST

/* ---- the derivative cache ---- */

START_TEST(test_derivative_cache)
{
    hs_dag *d = new_dag();
    const hs_node *x = hs_sym(d, X), *y = hs_sym(d, Y);
    const hs_node *G = hs_add(d, hs_mul(d, hs_call1(d, HS_SIN, hs_mul(d, x, y)), hs_call1(d, HS_EXP, x)),
                              hs_pow(d, y, hs_num(d, 3)));
    const hs_node *gx = hs_diff(d, G, X);
    size_t n = hs_dag_nnodes(d);
    /* the same derivative again: no node built, the same node back */
    ck_assert_ptr_eq(hs_diff(d, G, X), gx);
    const hs_node *gd = hs_total_diff(d, G, T, 2, Q, V);
    size_t n2 = hs_dag_nnodes(d);
    ck_assert_uint_gt(n2, n);
    ck_assert_ptr_eq(hs_total_diff(d, G, T, 2, Q, V), gd);
    ck_assert_uint_eq(hs_dag_nnodes(d), n2);
    /* a different direction is a different derivative: D without time
     * equals D here (G does not depend on t), D with swapped velocities
     * does not */
    ck_assert_ptr_eq(hs_total_diff(d, G, -1, 2, Q, V), gd);
    const int vswap[2] = {YV, XV};
    ck_assert_ptr_ne(hs_total_diff(d, G, T, 2, Q, vswap), gd);
    /* a symbol G does not use: 0 without building anything */
    n2 = hs_dag_nnodes(d);
    ck_assert(hs_is_num(hs_diff(d, G, B), 0));
    ck_assert(hs_is_num(hs_diff(d, G, 1000), 0));
    ck_assert(hs_is_num(hs_diff(d, G, -1), 0));
    ck_assert_uint_eq(hs_dag_nnodes(d), n2);
    /* derivatives of a subexpression reuse the cached ones */
    const hs_node *sub = hs_call1(d, HS_SIN, hs_mul(d, x, y));
    n2 = hs_dag_nnodes(d);
    hs_diff(d, sub, X);
    ck_assert_uint_eq(hs_dag_nnodes(d), n2);
    ck_assert(!hs_dag_failed(d));
    hs_dag_free(d);
}
END_TEST

/* ---- the limits: positioned errors ---- */

START_TEST(test_derivative_work_limit)
{
    hs_dag *d = new_dag();
    hs_dag_set_limits(d, 0, 50);
    hs_dag_set_pos(d, (hs_srcpos){3, 17});
    const hs_node *f[30];
    for (int i = 0; i < 30; i++)
        f[i] = hs_call1(d, HS_SIN, hs_add(d, hs_sym(d, X), hs_num(d, i + 1)));
    const hs_node *G = hs_muln(d, f, 30);
    hs_dag_set_pos(d, (hs_srcpos){-1, 0});
    ck_assert(!hs_dag_failed(d));
    ck_assert(hs_is_num(hs_diff(d, G, X), 0));
    ck_assert(hs_dag_failed(d));
    ck_assert_str_eq(hs_dag_error(d)->msg,
                     "expression too large: the derivative work exceeded 50 nodes");
    ck_assert_int_eq(hs_dag_error(d)->code, HS_EXIT_MODEL);
    ck_assert_int_eq(hs_dag_error_pos(d).src, 3);
    ck_assert_int_eq(hs_dag_error_pos(d).off, 17);
    hs_dag_free(d);

    /* the default limit is far above a 500-factor product's derivative */
    ck_assert_uint_ge(HS_MAX_DIFF_NODES, 1000000);
}
END_TEST

START_TEST(test_memory_limit)
{
    hs_dag *d = new_dag();
    const size_t limit = 256 * 1024;
    hs_dag_set_limits(d, limit, 0);
    hs_dag_set_pos(d, (hs_srcpos){5, 9});
    const hs_node *e = hs_sym(d, X);
    /* distinct nodes until the budget runs out: sum of x^k */
    for (int k = 2; k < 1000000 && !hs_dag_failed(d); k++)
        e = hs_add(d, e, hs_pow(d, hs_sym(d, X), hs_num(d, k)));
    ck_assert(hs_dag_failed(d));
    ck_assert_str_eq(hs_dag_error(d)->msg,
                     "expression too large: the expressions need more than 262144 bytes");
    ck_assert_int_eq(hs_dag_error_pos(d).src, 5);
    ck_assert_int_eq(hs_dag_error_pos(d).off, 9);
    ck_assert_uint_le(hs_dag_bytes(d), limit);
    hs_dag_free(d);
    /* the default: 512 MiB */
    ck_assert_uint_eq(HS_MAX_DAG_BYTES, (size_t)512 << 20);
}
END_TEST

/* ---- every walk at the maximum depth ----
 * Chains of each shape 3990 deep (HS_MAX_DEPTH is 4000; a derivative may
 * add a level or two), each level using the one below once (printed as a
 * tree, a node used twice per level would be exponential) and through a
 * sum (sin(sin(x)) 4000 deep is correct too, but its derivative is a
 * product of 4000 factors flattened at each of 4000 levels: seconds).  Under ASan the frames are large: a recursive walk
 * over the depth would overflow the stack here. */
enum { DEEP = HS_MAX_DEPTH - 10 };

static const hs_node *deep_chain(hs_dag *d, int shape)
{
    const hs_node *x = hs_sym(d, X), *y = hs_sym(d, Y), *e = hs_add(d, x, hs_num(d, 1));
    while (e->depth < DEEP && !hs_dag_failed(d)) {
        switch (shape) {
        case 0: e = hs_call1(d, HS_SIN, hs_add(d, e, x)); break;          /* sin(sin(e + x) + x) */
        case 1: e = hs_mul(d, hs_add(d, e, x), y); break;                 /* ((e + x) y + x) y */
        case 2:                     /* if(e < x, y, x), then if(x < y, e, y): e once */
            e = e->depth % 2 ? hs_if(d, hs_call2(d, HS_LT, e, x), y, x)
                             : hs_if(d, hs_call2(d, HS_LT, x, y), e, y);
            break;
        case 3: e = hs_pow(d, hs_add(d, e, x), hs_num(d, 0.5)); break;
        default: e = hs_div(d, hs_num(d, 1), hs_add(d, e, x)); break;
        }
    }
    return e;
}

START_TEST(test_deep_walks)
{
    hs_dag *d = new_dag();
    const hs_node *e = deep_chain(d, _i);
    ck_assert(!hs_dag_failed(d));
    ck_assert_uint_ge(e->depth, DEEP);
    double in[NSYM] = {0, 0.5, 0.9, 0.1, 0.2, 0.3, 0.4};

    /* derivatives: a result, or the positioned depth error */
    const hs_node *de = hs_diff(d, e, X);
    const hs_node *dd = hs_total_diff(d, e, T, 2, Q, V);
    const hs_node *ga = hs_total_diff(d, dd, T, 2, Q, V);
    if (hs_dag_failed(d))
        ck_assert_str_eq(hs_dag_error(d)->msg, "expression nested too deeply");
    ck_assert_ptr_nonnull(de);
    ck_assert_ptr_nonnull(ga);

    /* substitution x -> a rebuilds the whole chain */
    const hs_node *map[NSYM] = {0};
    map[X] = hs_sym(d, A);
    const hs_node *s = hs_subst(d, e, map, NSYM);
    ck_assert(hs_depends_on(s, A) && !hs_depends_on(s, X));
    unsigned char used[NSYM] = {0};
    hs_symbols_used(e, used, NSYM);
    ck_assert(used[X] && !used[A]);

    /* evaluation: the tree walk and the program agree */
    hs_error err;
    hs_error_init(&err);
    hs_prog *p = hs_prog_compile(d, &e, 1, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    double *regs = malloc(hs_prog_nregs(p) * sizeof *regs), out;
    ck_assert_ptr_nonnull(regs);
    hs_prog_eval(p, in, regs, &out);
    double tree = hs_eval_tree(e, in);
    ck_assert_msg(out == tree || (isnan(out) && isnan(tree)), "%.17g vs %.17g", out, tree);
    free(regs);
    hs_prog_free(p);

    /* printing: as a tree and with the printer */
    size_t len = hs_format(d, e, NULL, 0);
    ck_assert_uint_gt(len, DEEP);
    char *buf = malloc(len + 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(hs_format(d, e, buf, len + 1), len);
    free(buf);
    FILE *null = fopen("/dev/null", "w");
    ck_assert_ptr_nonnull(null);
    const hs_node *roots[2] = {e, de};
    hs_fprint_shared(null, d, roots, NULL, 2);
    fclose(null);
    hs_dag_free(d);
}
END_TEST

/* A dag whose tree has 2^40 leaves evaluates in its number of nodes. */
START_TEST(test_eval_tree_shared)
{
    hs_dag *d = new_dag();
    const hs_node *x = hs_sym(d, X), *e = x;
    double v = 0.5;
    for (int i = 0; i < 40; i++) {
        e = hs_call1(d, HS_SIN, hs_add(d, hs_mul(d, e, e), e));
        v = sin(v * v + v);
    }
    double in[NSYM] = {0, 0.5, 0, 0, 0, 0, 0};
    ck_assert_double_eq_tol(hs_eval_tree(e, in), v, 1e-15);
    hs_dag_free(d);
}
END_TEST

/* ---- gradients and symbol sets ---- */

START_TEST(test_gradient)
{
    hs_dag *d = new_dag();
    const hs_node *x = hs_sym(d, X), *y = hs_sym(d, Y), *a = hs_sym(d, A);
    const hs_node *e = hs_add(d, hs_mul(d, hs_pow(d, x, hs_num(d, 2)), y), hs_call1(d, HS_SIN, a));
    const int syms[5] = {X, Y, B, A, T};
    const hs_node *g[5];
    ck_assert_uint_eq(hs_gradient(d, e, syms, 5, g), 3);
    ck_assert_ptr_eq(g[0], hs_mul(d, hs_num(d, 2), hs_mul(d, x, y)));
    ck_assert_ptr_eq(g[1], hs_pow(d, x, hs_num(d, 2)));
    ck_assert(hs_is_num(g[2], 0));
    ck_assert_ptr_eq(g[3], hs_call1(d, HS_COS, a));
    ck_assert(hs_is_num(g[4], 0));
    for (int j = 0; j < 5; j++)
        ck_assert_ptr_eq(g[j], hs_diff(d, e, syms[j]));
    /* the symbols e uses, sorted: ask for exactly those */
    size_t n;
    const int32_t *s = hs_node_symbols(e, &n);
    ck_assert_uint_eq(n, 3);
    ck_assert(s[0] == X && s[1] == Y && s[2] == A);
    ck_assert_uint_eq(hs_gradient(d, e, (const int[]){X, Y, A}, 3, g), 3);
    ck_assert(!hs_dag_failed(d));
    hs_dag_free(d);
}
END_TEST

START_TEST(test_symbol_sets)
{
    hs_dag *d = new_dag();
    const hs_node *x = hs_sym(d, X), *b = hs_sym(d, B), *yv = hs_sym(d, YV);
    size_t n;
    hs_node_symbols(hs_num(d, 3), &n);
    ck_assert_uint_eq(n, 0);
    const int32_t *s = hs_node_symbols(b, &n);
    ck_assert(n == 1 && s[0] == B);
    /* unions through every kind of node; repeated symbols counted once */
    const hs_node *e = hs_if(d, hs_call2(d, HS_LT, x, b), hs_mul(d, x, yv),
                             hs_call2(d, HS_ATAN2, b, hs_add(d, x, hs_num(d, 1))));
    s = hs_node_symbols(e, &n);
    ck_assert(n == 3 && s[0] == X && s[1] == YV && s[2] == B);
    ck_assert(hs_depends_on(e, YV) && !hs_depends_on(e, Y) && !hs_depends_on(e, -1) &&
              !hs_depends_on(e, 1 << 20));
    /* a sum over many symbols: sorted, whatever the build order */
    char name[16];
    const hs_node *terms[64];
    for (int i = 0; i < 64; i++) {
        snprintf(name, sizeof name, "s%d", 63 - i);
        terms[i] = hs_mul(d, hs_sym(d, hs_dag_symbol(d, name)), x);
    }
    s = hs_node_symbols(hs_addn(d, terms, 64), &n);
    ck_assert_uint_eq(n, 65);
    for (size_t i = 1; i < n; i++)
        ck_assert_int_lt(s[i - 1], s[i]);
    hs_dag_free(d);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("expr_limits");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
    tcase_add_loop_test(tc, test_product_kernels, 0, N(product_n));
    tcase_add_loop_test(tc, test_nested_sines, 0, N(nest_n));
    tcase_add_test(tc, test_derivative_cache);
    tcase_add_test(tc, test_derivative_work_limit);
    tcase_add_test(tc, test_memory_limit);
    tcase_add_loop_test(tc, test_deep_walks, 0, 5);
    tcase_add_test(tc, test_eval_tree_shared);
    tcase_add_test(tc, test_gradient);
    tcase_add_test(tc, test_symbol_sets);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
