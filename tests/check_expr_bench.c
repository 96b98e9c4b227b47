/* The Lagrangian front end at scale: the kernels of an N-link planar
 * chain in angles, built as src/model/forms.c builds them (embedding
 * X_a(q), ambient velocities D X_a, T = 1/2 m sum Xdot_a^2, L = T - U,
 * p_i = dL/dv_i, M_ij = dp_i/dv_j, Q_i = dL/dq_i - dp_i/dt - sum_j
 * dp_i/dq_j v_j), checked against the closed form of the chain (unit-free:
 * m, l, g symbols), and timed.
 *
 *   build/rel/tests/check_expr_bench            the Check suite (N = 3, 7)
 *   build/rel/tests/check_expr_bench bench N..  times per N, two ways:
 *     loader: the calls forms.c makes today (hs_diff per entry, Q by N
 *             partials, hs_depends_on per velocity);
 *     api:    M row by hs_gradient, Q_i = dL/dq_i - D p_i (one total
 *             derivative instead of N partials), symbols by
 *             hs_node_symbols.
 * Built with -DHS_BENCH_OLD_API it uses only the functions of the engine
 * before the derivative cache (hs_diff, hs_total_diff, hs_depends_on), so
 * the same source times the previous library (the "loader" way). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <gsl/gsl_errno.h>

#include "expr/expr.h"

typedef struct chain {
    hs_dag *d;
    int n, t, m, l, g;
    int *q, *v;                 /* [n] symbols */
    const hs_node *L;           /* the Lagrangian */
    const hs_node **M, **Q;     /* [n*n], [n] */
} chain;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* X_i = l sum_{j<=i} sin th_j, Y_i = -l sum_{j<=i} cos th_j (as the
 * embedding form parses them), velocities by D, T, U, L = T - U. */
static void chain_build(chain *c, int n)
{
    hs_dag *d = c->d = hs_dag_new();
    char name[32];
    c->n = n;
    c->t = hs_dag_symbol(d, "t");
    c->q = malloc((size_t)n * sizeof *c->q);
    c->v = malloc((size_t)n * sizeof *c->v);
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "th%d", i + 1);
        c->q[i] = hs_dag_symbol(d, name);
    }
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "th%d'", i + 1);
        c->v[i] = hs_dag_symbol(d, name);
    }
    c->m = hs_dag_symbol(d, "m");
    c->l = hs_dag_symbol(d, "l");
    c->g = hs_dag_symbol(d, "g");
    const hs_node *m = hs_sym(d, c->m), *l = hs_sym(d, c->l), *g = hs_sym(d, c->g);
    const hs_node **t = malloc((size_t)(2 * n + 1) * sizeof *t);
    const hs_node **kin = malloc((size_t)(2 * n) * sizeof *kin);
    const hs_node **pot = malloc((size_t)n * sizeof *pot);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j <= i; j++)
            t[j] = hs_mul(d, l, hs_call1(d, HS_SIN, hs_sym(d, c->q[j])));
        const hs_node *X = hs_addn(d, t, (size_t)i + 1);
        for (int j = 0; j <= i; j++)
            t[j] = hs_neg(d, hs_mul(d, l, hs_call1(d, HS_COS, hs_sym(d, c->q[j]))));
        const hs_node *Y = hs_addn(d, t, (size_t)i + 1);
        const hs_node *Xd = hs_total_diff(d, X, c->t, (size_t)n, c->q, c->v);
        const hs_node *Yd = hs_total_diff(d, Y, c->t, (size_t)n, c->q, c->v);
        kin[2 * i] = hs_mul(d, hs_mul(d, m, Xd), Xd);
        kin[2 * i + 1] = hs_mul(d, hs_mul(d, m, Yd), Yd);
        pot[i] = hs_mul(d, hs_mul(d, m, g), Y);
    }
    const hs_node *T = hs_mul(d, hs_num(d, 0.5), hs_addn(d, kin, (size_t)(2 * n)));
    c->L = hs_sub(d, T, hs_addn(d, pot, (size_t)n));
    c->M = calloc((size_t)n * (size_t)n, sizeof *c->M);
    c->Q = calloc((size_t)n, sizeof *c->Q);
    free(t);
    free(kin);
    free(pot);
}

/* M and Q with the calls forms.c's lagrangian_kernels makes. */
static int kernels_loader(chain *c)
{
    hs_dag *d = c->d;
    int n = c->n;
    const hs_node **p = malloc((size_t)n * sizeof *p);
    for (int i = 0; i < n; i++)
        p[i] = hs_diff(d, c->L, c->v[i]);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j <= i; j++) {
            const hs_node *Mij = hs_diff(d, p[i], c->v[j]);
            c->M[i * n + j] = c->M[j * n + i] = Mij;
            for (int k = 0; k < n; k++)
                if (hs_depends_on(Mij, c->v[k])) {
                    free(p);
                    return -1;
                }
        }
        const hs_node *Qi = hs_diff(d, c->L, c->q[i]);
        Qi = hs_sub(d, Qi, hs_diff(d, p[i], c->t));
        for (int j = 0; j < n; j++)
            Qi = hs_sub(d, Qi, hs_mul(d, hs_diff(d, p[i], c->q[j]), hs_sym(d, c->v[j])));
        c->Q[i] = Qi;
    }
    free(p);
    return hs_dag_failed(d) ? -1 : 0;
}

#ifndef HS_BENCH_OLD_API
/* The same kernels through the newer API: a gradient per row of M, the
 * total derivative for the velocity terms of Q. */
static int kernels_api(chain *c)
{
    hs_dag *d = c->d;
    int n = c->n;
    const hs_node **p = malloc((size_t)n * sizeof *p);
    hs_gradient(d, c->L, c->v, (size_t)n, p);
    for (int i = 0; i < n; i++) {
        hs_gradient(d, p[i], c->v, (size_t)i + 1, c->M + (size_t)i * (size_t)n);
        for (int j = 0; j <= i; j++) {
            const hs_node *Mij = c->M[i * n + j];
            c->M[j * n + i] = Mij;
            size_t ns;
            const int32_t *s = hs_node_symbols(Mij, &ns);
            for (size_t k = 0; k < ns; k++)
                if (s[k] >= c->v[0] && s[k] <= c->v[n - 1]) {
                    free(p);
                    return -1;      /* not quadratic in the velocities */
                }
        }
        /* Q_i = dL/dq_i - (dp_i/dt + sum_j dp_i/dq_j v_j) = dL/dq_i - D p_i */
        c->Q[i] = hs_sub(d, hs_diff(d, c->L, c->q[i]),
                         hs_total_diff(d, p[i], c->t, (size_t)n, c->q, c->v));
    }
    free(p);
    return hs_dag_failed(d) ? -1 : 0;
}
#endif

static void chain_free(chain *c)
{
    hs_dag_free(c->d);
    free(c->q);
    free(c->v);
    free(c->M);
    free(c->Q);
}

/* The closed form (1-based i, j; w_ij = n - max(i, j) + 1 masses below
 * both joints): M_ij = m l^2 w_ij cos(th_i - th_j), Q_i = -m g l w_ii
 * sin th_i - sum_j m l^2 w_ij sin(th_i - th_j) th_j'^2. */
static void check_closed_form(const chain *c, double tol)
{
    int n = c->n;
    size_t ns = (size_t)hs_dag_nsymbols(c->d);
    double *in = calloc(ns, sizeof *in);
    const double m = 1.3, l = 0.7, g = 9.81;
    in[c->m] = m;
    in[c->l] = l;
    in[c->g] = g;
    for (int i = 0; i < n; i++) {
        in[c->q[i]] = 0.3 + 0.37 * i - 0.05 * i * i;
        in[c->v[i]] = 0.9 - 0.21 * i;
    }
    for (int i = 0; i < n; i++) {
        double qi = 0;
        for (int j = 0; j < n; j++) {
            double w = n - (i > j ? i : j), dth = in[c->q[i]] - in[c->q[j]];
            double Mij = m * l * l * w * cos(dth);
            double got = hs_eval_tree(c->M[i * n + j], in);
            ck_assert_msg(fabs(got - Mij) <= tol * fmax(1, fabs(Mij)), "M[%d][%d] = %.17g, want %.17g",
                          i, j, got, Mij);
            qi -= m * l * l * w * sin(dth) * in[c->v[j]] * in[c->v[j]];
        }
        qi -= m * g * l * (n - i) * sin(in[c->q[i]]);
        double got = hs_eval_tree(c->Q[i], in);
        ck_assert_msg(fabs(got - qi) <= tol * fmax(1, fabs(qi)), "Q[%d] = %.17g, want %.17g", i,
                      got, qi);
    }
    free(in);
}

static const int sizes[] = {3, 7};

START_TEST(test_chain_loader)
{
    chain c;
    chain_build(&c, sizes[_i]);
    ck_assert_int_eq(kernels_loader(&c), 0);
    check_closed_form(&c, 1e-12);
    chain_free(&c);
}
END_TEST

#ifndef HS_BENCH_OLD_API
START_TEST(test_chain_api)
{
    chain c;
    chain_build(&c, sizes[_i]);
    ck_assert_int_eq(kernels_api(&c), 0);
    check_closed_form(&c, 1e-12);
    /* the two ways give the same M (same nodes: hash-consing) */
    chain c2;
    chain_build(&c2, sizes[_i]);
    ck_assert_int_eq(kernels_loader(&c2), 0);
    for (int k = 0; k < c.n * c.n; k++) {
        char a[4096], b[4096];
        hs_format(c.d, c.M[k], a, sizeof a);
        hs_format(c2.d, c2.M[k], b, sizeof b);
        ck_assert_str_eq(a, b);
    }
    chain_free(&c2);
    chain_free(&c);
}
END_TEST
#endif

static Suite *suite(void)
{
    Suite *s = suite_create("expr_bench");
    TCase *tc = tcase_create("chain");
    tcase_add_loop_test(tc, test_chain_loader, 0, 2);
#ifndef HS_BENCH_OLD_API
    tcase_add_loop_test(tc, test_chain_api, 0, 2);
#endif
    suite_add_tcase(s, tc);
    return s;
}

/* One timing: build + kernels + one program of M and Q, in seconds. */
static double time_once(int n, int api)
{
    double t0 = now();
    chain c;
    chain_build(&c, n);
#ifndef HS_BENCH_OLD_API
    int rc = api ? kernels_api(&c) : kernels_loader(&c);
#else
    (void)api;
    int rc = kernels_loader(&c);
#endif
    const hs_node **roots = malloc((size_t)(n * n + n) * sizeof *roots);
    memcpy(roots, c.M, (size_t)(n * n) * sizeof *roots);
    memcpy(roots + n * n, c.Q, (size_t)n * sizeof *roots);
    hs_error err;
    hs_error_init(&err);
    hs_prog *p = hs_prog_compile(c.d, roots, (size_t)(n * n + n), &err);
    double t = now() - t0;
    if (getenv("HS_BENCH_VERBOSE"))
        fprintf(stderr, "N = %d: %zu nodes, %zu instructions\n", n, hs_dag_nnodes(c.d),
                p ? hs_prog_ninstr(p) : 0);
    if (rc || !p)
        fprintf(stderr, "N = %d: failed (%s)\n", n, hs_dag_error(c.d)->msg);
    hs_prog_free(p);
    free(roots);
    chain_free(&c);
    return t;
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    if (argc > 1 && strcmp(argv[1], "bench") == 0) {
        for (int a = 2; a < argc; a++) {
            int n = atoi(argv[a]);
            printf("N = %d: loader %.4f s", n, time_once(n, 0));
#ifndef HS_BENCH_OLD_API
            printf(", api %.4f s", time_once(n, 1));
#endif
            printf("\n");
            fflush(stdout);
        }
        return 0;
    }
    SRunner *sr = srunner_create(suite());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
