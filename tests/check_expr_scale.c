/* Tests of the expression engine's tools for large models (issue 13, item
 * 6) and of the embedding form built on them:
 *   - derivatives of large sums through their index by symbol give the
 *     same nodes as the full walk (the index is built on a sum's second
 *     derivative), right by finite differences, also when the index is
 *     refused;
 *   - the cache of constants, the memo of the last total-derivative
 *     direction (a changed array is a new direction), hs_subst_many, the
 *     symbol set of a large sum, the trig identities' early exit;
 *   - the embedding's metric route: an N-link pendulum in angles against
 *     its closed form (M and Q, and Q in Christoffel form), and an
 *     embedding with a full, position-dependent ambient mass and
 *     velocity-dependent forces, fixed or in a moving frame, against the
 *     same system in the Lagrangian form. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "dynamics/dynamics.h"
#include "expr/expr.h"
#include "physics_util.h"

/* ---- a large sum in NV symbols x0 .. x{NV-1} ---- */

enum { NV = 48 };

static hs_dag *sum_dag(void)
{
    hs_dag *d = hs_dag_new();
    ck_assert_ptr_nonnull(d);
    for (int i = 0; i < NV; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", i);
        ck_assert_int_eq(hs_dag_symbol(d, name), i);
    }
    return d;
}

/* S = sum_i (i + 1) x_i x_{i+1} + sin(x_i) x_{i+2}^2 + 3 x_0: terms of two
 * or three symbols, every symbol in several terms, x_0 also alone. */
static const hs_node *big_sum(hs_dag *d)
{
    const hs_node *t[3 * NV + 1];
    size_t n = 0;
    for (int i = 0; i + 2 < NV; i++) {
        const hs_node *a = hs_sym(d, i), *b = hs_sym(d, i + 1), *c = hs_sym(d, i + 2);
        t[n++] = hs_muln(d, (const hs_node *[]){hs_num(d, i + 1), a, b}, 3);
        t[n++] = hs_mul(d, hs_call1(d, HS_SIN, a), hs_pow(d, c, hs_num(d, 2)));
    }
    t[n++] = hs_mul(d, hs_num(d, 3), hs_sym(d, 0));
    const hs_node *S = hs_addn(d, t, n);
    ck_assert_int_eq(S->kind, HS_ADD);
    ck_assert_uint_ge(S->nargs, 64);       /* large enough for an index */
    return S;
}

static char *text(const hs_dag *d, const hs_node *e)
{
    size_t len = hs_format(d, e, NULL, 0);
    char *s = malloc(len + 1);
    ck_assert_ptr_nonnull(s);
    hs_format(d, e, s, len + 1);
    return s;
}

/* dS/dx_j at in[] by central differences of S itself */
static double fd(const hs_node *S, double *in, int j)
{
    double h = 1e-6, x = in[j];
    in[j] = x + h;
    double p = hs_eval_tree(S, in);
    in[j] = x - h;
    double m = hs_eval_tree(S, in);
    in[j] = x;
    return (p - m) / (2 * h);
}

/* Every partial derivative of S, the sum differentiated along x_0 first
 * (its second derivative on uses the index), equals the derivative taken
 * alone in a fresh dag (the full walk): the same text, so the same nodes
 * built in the same order; and matches finite differences. */
START_TEST(test_sum_index_same_derivatives)
{
    hs_dag *d = sum_dag();
    const hs_node *S = big_sum(d);
    double in[NV];
    for (int i = 0; i < NV; i++)
        in[i] = 0.3 + 0.05 * i;
    (void)hs_diff(d, S, 0);
    for (int j = 0; j < NV; j++) {
        const hs_node *dj = hs_diff(d, S, j);
        hs_dag *f = sum_dag();
        const hs_node *Sf = big_sum(f);
        const hs_node *dfj = hs_diff(f, Sf, j);
        char *a = text(d, dj), *b = text(f, dfj);
        ck_assert_msg(strcmp(a, b) == 0, "d/dx%d: indexed '%s', walked '%s'", j, a, b);
        free(a);
        free(b);
        double want = fd(S, in, j), got = hs_eval_tree(dj, in);
        ck_assert_msg(fabs(got - want) <= 1e-7 * fmax(1, fabs(want)), "d/dx%d: %.17g, fd %.17g",
                      j, got, want);
        hs_dag_free(f);
    }
    ck_assert(!hs_dag_failed(d));
    hs_dag_free(d);
}
END_TEST

/* A quadratic form 1/2 v^T A v over NV symbols (NV^2/2 terms): the
 * gradient, then each row of the Hessian (the gradients' sums indexed),
 * give A exactly. */
START_TEST(test_sum_index_hessian)
{
    hs_dag *d = sum_dag();
    const hs_node **t = malloc(NV * NV * sizeof *t), *g[NV], *h[NV];
    ck_assert_ptr_nonnull(t);
    size_t n = 0;
    double A[NV][NV];
    for (int i = 0; i < NV; i++)
        for (int j = 0; j <= i; j++) {
            A[i][j] = A[j][i] = i == j ? 2.0 + i : 1.0 / (1 + i + j);
            const hs_node *vi = hs_sym(d, i), *vj = hs_sym(d, j);
            t[n++] = i == j ? hs_muln(d, (const hs_node *[]){hs_num(d, 0.5 * A[i][i]), vi, vi}, 3)
                            : hs_muln(d, (const hs_node *[]){hs_num(d, A[i][j]), vi, vj}, 3);
        }
    const hs_node *T = hs_addn(d, t, n);
    free(t);
    int syms[NV];
    for (int i = 0; i < NV; i++)
        syms[i] = i;
    ck_assert_uint_eq(hs_gradient(d, T, syms, NV, g), NV);
    for (int i = 0; i < NV; i++) {
        ck_assert_uint_eq(hs_gradient(d, g[i], syms, NV, h), NV);
        for (int j = 0; j < NV; j++)
            ck_assert_msg(hs_is_num(h[j], A[i][j]), "H[%d][%d] is not %g", i, j, A[i][j]);
    }
    ck_assert(!hs_dag_failed(d));
    hs_dag_free(d);
}
END_TEST

/* A sum whose terms use many symbols each gets no index (it would hold
 * an entry per term and symbol); its derivatives are right all the same. */
START_TEST(test_sum_index_refused)
{
    hs_dag *d = sum_dag();
    const hs_node *t[40];
    for (int k = 0; k < 40; k++) {
        const hs_node *f[NV / 2];
        for (int i = 0; i < NV / 2; i++)
            f[i] = hs_call1(d, HS_SIN, hs_add(d, hs_sym(d, (k + i) % NV), hs_num(d, k)));
        t[k] = hs_muln(d, f, NV / 2);
    }
    const hs_node *S = hs_addn(d, t, 40);
    ck_assert_uint_eq(S->nargs, 40);
    double in[NV];
    for (int i = 0; i < NV; i++)
        in[i] = 0.2 + 0.03 * i;
    for (int pass = 0; pass < 2; pass++)
        for (int j = 0; j < NV; j += 5) {
            double want = fd(S, in, j), got = hs_eval_tree(hs_diff(d, S, j), in);
            ck_assert_msg(fabs(got - want) <= 1e-6 * fmax(1, fabs(want)), "d/dx%d: %.17g, fd %.17g",
                          j, got, want);
        }
    ck_assert(!hs_dag_failed(d));
    hs_dag_free(d);
}
END_TEST

/* ---- constants ---- */

/* Many constants (so that the cache's slots collide): each built twice is
 * one node with its value; -0 is 0; a NaN is an error and poisons nothing. */
START_TEST(test_constant_cache)
{
    hs_dag *d = hs_dag_new();
    ck_assert_ptr_nonnull(d);
    const hs_node *k[2000];
    for (int i = 0; i < 2000; i++) {
        double v = (i - 1000) * 0.37;
        k[i] = hs_num(d, v);
        ck_assert_int_eq(k[i]->kind, HS_NUM);
        ck_assert(k[i]->value == v);
    }
    for (int i = 1999; i >= 0; i--)
        ck_assert_ptr_eq(hs_num(d, (i - 1000) * 0.37), k[i]);
    ck_assert_ptr_eq(hs_num(d, -0.0), hs_num(d, 0.0));
    ck_assert(!signbit(hs_num(d, -0.0)->value));
    ck_assert(!hs_dag_failed(d));
    const hs_node *bad = hs_num(d, NAN);
    ck_assert(hs_dag_failed(d));
    ck_assert(hs_is_num(bad, 0));
    ck_assert(hs_is_num(hs_num(d, 1), 1));
    ck_assert(hs_is_num(hs_num(d, 0.37), 0.37));
    ck_assert(hs_is_num(hs_num(d, 0), 0));
    hs_dag_free(d);
}
END_TEST

/* ---- the memo of the last total-derivative direction ---- */

/* The same arrays again give the same derivative; the same arrays with
 * other contents are another direction (never the memo's). */
START_TEST(test_total_diff_direction_memo)
{
    hs_dag *d = hs_dag_new();
    ck_assert_ptr_nonnull(d);
    int t = hs_dag_symbol(d, "t"), x = hs_dag_symbol(d, "x"), y = hs_dag_symbol(d, "y");
    int xv = hs_dag_symbol(d, "x'"), yv = hs_dag_symbol(d, "y'");
    int q[2] = {x, y}, v[2] = {xv, yv};
    /* G = x^2 y + t x */
    const hs_node *G = hs_add(d, hs_mul(d, hs_pow(d, hs_sym(d, x), hs_num(d, 2)), hs_sym(d, y)),
                              hs_mul(d, hs_sym(d, t), hs_sym(d, x)));
    const hs_node *D1 = hs_total_diff(d, G, t, 2, q, v);
    ck_assert_ptr_eq(hs_total_diff(d, G, t, 2, q, v), D1);
    double in[5];
    in[t] = 0.5, in[x] = 1.5, in[y] = -0.7, in[xv] = 0.3, in[yv] = 2.0;
    /* D G = x + (2 x y + t) x' + x^2 y' */
    double want1 = in[x] + (2 * in[x] * in[y] + in[t]) * in[xv] + in[x] * in[x] * in[yv];
    ck_assert(fabs(hs_eval_tree(D1, in) - want1) <= 1e-14 * fabs(want1));
    /* the velocities swapped in place: D' G = x + (2 x y + t) y' + x^2 x' */
    v[0] = yv;
    v[1] = xv;
    const hs_node *D2 = hs_total_diff(d, G, t, 2, q, v);
    ck_assert_ptr_ne(D2, D1);
    double want2 = in[x] + (2 * in[x] * in[y] + in[t]) * in[yv] + in[x] * in[x] * in[xv];
    ck_assert(fabs(hs_eval_tree(D2, in) - want2) <= 1e-14 * fabs(want2));
    /* fewer coordinates with the same leading arrays: D'' G = x + (2 x y + t) y' */
    const hs_node *D3 = hs_total_diff(d, G, t, 1, q, v);
    double want3 = in[x] + (2 * in[x] * in[y] + in[t]) * in[yv];
    ck_assert(fabs(hs_eval_tree(D3, in) - want3) <= 1e-14 * fabs(want3));
    /* and no time */
    const hs_node *D4 = hs_total_diff(d, G, -1, 1, q, v);
    ck_assert(fabs(hs_eval_tree(D4, in) - (want3 - in[x])) <= 1e-14 * fabs(want3));
    ck_assert(!hs_dag_failed(d));
    hs_dag_free(d);
}
END_TEST

/* ---- hs_subst_many ---- */

static const hs_node *roots_of(hs_dag *d, const hs_node **r)
{
    int x = hs_dag_symbol(d, "x"), y = hs_dag_symbol(d, "y"), k = hs_dag_symbol(d, "k");
    const hs_node *shared = hs_call1(d, HS_SIN, hs_mul(d, hs_sym(d, k), hs_sym(d, x)));
    const hs_node *free_of_k = hs_call1(d, HS_COS, hs_add(d, hs_sym(d, x), hs_sym(d, y)));
    r[0] = hs_add(d, shared, hs_sym(d, y));
    r[1] = hs_mul(d, shared, free_of_k);
    r[2] = free_of_k;
    r[3] = hs_pow(d, hs_sym(d, k), hs_num(d, 3));
    return free_of_k;
}

/* Many roots at once: the nodes of separate hs_subst calls, built in the
 * same number; a subexpression without a mapped symbol comes back as it
 * is and builds nothing. */
START_TEST(test_subst_many)
{
    hs_dag *a = hs_dag_new(), *b = hs_dag_new();
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    const hs_node *ra[4], *rb[4], *oa[4], *ob[4];
    const hs_node *fa = roots_of(a, ra);
    roots_of(b, rb);
    const hs_node *mapa[3] = {NULL, NULL, hs_num(a, 2)}, *mapb[3] = {NULL, NULL, hs_num(b, 2)};
    size_t na = hs_dag_nnodes(a), nb = hs_dag_nnodes(b);
    hs_subst_many(a, ra, 4, mapa, 3, oa);
    for (int i = 0; i < 4; i++)
        ob[i] = hs_subst(b, rb[i], mapb, 3);
    ck_assert_uint_eq(hs_dag_nnodes(a) - na, hs_dag_nnodes(b) - nb);
    for (int i = 0; i < 4; i++) {
        char *s = text(a, oa[i]), *t = text(b, ob[i]);
        ck_assert_str_eq(s, t);
        free(s);
        free(t);
    }
    ck_assert_ptr_eq(oa[2], fa);
    ck_assert(hs_is_num(oa[3], 8));
    size_t before = hs_dag_nnodes(a);
    ck_assert_ptr_eq(hs_subst(a, fa, mapa, 3), fa);
    ck_assert_uint_eq(hs_dag_nnodes(a), before);
    /* values: sin(2x) + y, sin(2x) cos(x + y) */
    double in[3] = {0.4, -1.1, 0};
    ck_assert(fabs(hs_eval_tree(oa[0], in) - (sin(0.8) - 1.1)) <= 1e-15);
    ck_assert(fabs(hs_eval_tree(oa[1], in) - sin(0.8) * cos(0.4 - 1.1)) <= 1e-15);
    hs_dag_free(a);
    hs_dag_free(b);
}
END_TEST

/* ---- the symbol set of a large sum ---- */

/* A sum of many terms whose symbol sets overlap, one of them a raw symbol
 * node numbered past the symbol table (hs_dag_intern builds anything):
 * the set is sorted and each symbol is in it once. */
START_TEST(test_large_sum_symbols)
{
    hs_dag *d = sum_dag();
    const hs_node *t[60];
    size_t n = 0;
    const hs_node *raw = hs_dag_intern(d, HS_SYM, NULL, 0, 0.0, 500);
    for (int i = 0; i < 30; i++) {
        t[n++] = hs_mul(d, hs_sym(d, (7 * i) % NV), hs_sym(d, (7 * i + 3) % NV));
        t[n++] = hs_call1(d, HS_EXP, hs_mul(d, raw, hs_sym(d, (5 * i + 1) % NV)));
    }
    const hs_node *S = hs_addn(d, t, n);
    unsigned char want[501] = {0};
    for (int i = 0; i < 30; i++) {
        want[(7 * i) % NV] = want[(7 * i + 3) % NV] = want[(5 * i + 1) % NV] = 1;
    }
    want[500] = 1;
    size_t ns, nwant = 0;
    const int32_t *s = hs_node_symbols(S, &ns);
    for (int i = 0; i <= 500; i++)
        nwant += want[i];
    ck_assert_uint_eq(ns, nwant);
    for (size_t i = 0; i < ns; i++) {
        ck_assert(want[s[i]]);
        if (i)
            ck_assert_int_lt(s[i - 1], s[i]);
    }
    hs_dag_free(d);
}
END_TEST

/* ---- the trig identities in large sums ---- */

/* Terms with one trig factor each (a kinetic energy's cos(a - b) v_a v_b)
 * are left as they are; a pair c cos a cos b + c sin a sin b among them
 * still becomes c cos(a - b). */
START_TEST(test_trig_in_large_sums)
{
    hs_dag *d = sum_dag();
    const hs_node *t[NV + 2];
    size_t n = 0;
    for (int i = 0; i + 1 < NV; i += 2) {
        const hs_node *a = hs_sym(d, i), *b = hs_sym(d, i + 1);
        t[n++] = hs_mul(d, hs_call1(d, HS_COS, hs_sub(d, a, b)), hs_mul(d, a, b));
    }
    const hs_node *S = hs_addn(d, t, n);
    ck_assert_uint_eq(S->nargs, n);
    const hs_node *a = hs_sym(d, 0), *b = hs_sym(d, 5), *c = hs_sym(d, 9);
    t[n++] = hs_muln(d, (const hs_node *[]){c, hs_call1(d, HS_COS, a), hs_call1(d, HS_COS, b)}, 3);
    t[n++] = hs_muln(d, (const hs_node *[]){c, hs_call1(d, HS_SIN, a), hs_call1(d, HS_SIN, b)}, 3);
    const hs_node *S2 = hs_addn(d, t, n);
    ck_assert_uint_eq(S2->nargs, n - 1);
    const hs_node *want = hs_mul(d, c, hs_call1(d, HS_COS, hs_sub(d, a, b)));
    int found = 0;
    for (uint32_t i = 0; i < S2->nargs; i++)
        found |= S2->args[i] == want;
    ck_assert_msg(found, "c cos(x0 - x5) is not a term");
    hs_dag_free(d);
}
END_TEST

/* ---- the embedding through its metric ---- */

/* M and Q of a loaded model at (t, q, v). */
static void m_and_q(const hs_model *m, hs_work *w, double t, const double *q, const double *v,
                    double *M, double *Q)
{
    ck_assert_int_eq(hs_dyn_mass(m, w, t, q, v, M), 0);
    ck_assert_int_eq(hs_dyn_accel(m, w, t, q, v, NULL, NULL), 0);   /* Q evaluated */
    memcpy(Q, hs_work_Q(m, w), m->n * sizeof *Q);
}

enum { NL = 6 };

static char *nlink_text(void)
{
    static char buf[4096];
    size_t len = 0;
    len += (size_t)snprintf(buf + len, sizeof buf - len,
                            "parameters: {m: 1.3, l: 0.7, g: 9.81}\ncoordinates: [");
    for (int i = 1; i <= NL; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%sth%d", i > 1 ? ", " : "", i);
    len += (size_t)snprintf(buf + len, sizeof buf - len, "]\nembedding:\n");
    for (int i = 1; i <= NL; i++) {
        len += (size_t)snprintf(buf + len, sizeof buf - len, "  x%d: l*sin(th1)", i);
        for (int j = 2; j <= i; j++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, " + l*sin(th%d)", j);
        len += (size_t)snprintf(buf + len, sizeof buf - len, "\n  y%d: -l*cos(th1)", i);
        for (int j = 2; j <= i; j++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, " - l*cos(th%d)", j);
        len += (size_t)snprintf(buf + len, sizeof buf - len, "\n");
    }
    len += (size_t)snprintf(buf + len, sizeof buf - len, "mass: [m");
    for (int i = 1; i < 2 * NL; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, ", m");
    len += (size_t)snprintf(buf + len, sizeof buf - len, "]\npotential: m*g*(y1");
    for (int i = 2; i <= NL; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, " + y%d", i);
    len += (size_t)snprintf(buf + len, sizeof buf - len, ")\ninitial: {q: [0.3");
    for (int i = 2; i <= NL; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, ", 0.3");
    snprintf(buf + len, sizeof buf - len, "]}\nsimulate: {t_end: 1}\n");
    return buf;
}

/* The N-link pendulum in angles: with c_ij = N + 1 - max(i, j),
 *   M_ij = c_ij m l^2 cos(th_i - th_j),
 *   Q_i  = -c_ii m g l sin th_i - sum_j c_ij m l^2 sin(th_i - th_j) v_j^2,
 * and each symbolic Q_i is that sum of N terms (the velocity products of
 * dL/dq and of (d2L/dv dq) v cancelled symbolically). */
START_TEST(test_metric_route_nlink)
{
    pu_args args = pu_defaults();
    args.text = nlink_text();
    hs_model *m = pu_load(&args);
    ck_assert_int_eq(m->form, HS_FORM_EMBEDDING);
    ck_assert_uint_eq(m->n, NL);
    for (size_t i = 0; i < NL; i++) {
        ck_assert_int_eq(m->Q[i]->kind, HS_ADD);
        ck_assert_uint_eq(m->Q[i]->nargs, NL);
    }
    hs_work *w = hs_work_new(m);
    ck_assert_ptr_nonnull(w);
    double ms = 1.3, l = 0.7, g = 9.81, q[NL], v[NL], M[NL * NL], Q[NL];
    srand(777);
    for (int trial = 0; trial < 10; trial++) {
        for (int i = 0; i < NL; i++) {
            q[i] = -3 + 6.0 * rand() / RAND_MAX;
            v[i] = -2 + 4.0 * rand() / RAND_MAX;
        }
        m_and_q(m, w, 0, q, v, M, Q);
        for (int i = 0; i < NL; i++) {
            double Qi = -(NL - i) * ms * g * l * sin(q[i]);
            for (int j = 0; j < NL; j++) {
                double c = NL - (i > j ? i : j);
                double Mij = c * ms * l * l * cos(q[i] - q[j]);
                ck_assert_msg(fabs(M[i * NL + j] - Mij) <= 1e-13 * NL * ms * l * l,
                              "M[%d][%d] = %.17g, want %.17g", i, j, M[i * NL + j], Mij);
                Qi -= c * ms * l * l * sin(q[i] - q[j]) * v[j] * v[j];
            }
            ck_assert_msg(fabs(Q[i] - Qi) <= 1e-12 * (1 + fabs(Qi)), "Q[%d] = %.17g, want %.17g",
                          i, Q[i], Qi);
        }
    }
    hs_work_free(w);
    hs_model_free(m);
}
END_TEST

/* A time-independent embedding with a full ambient mass that depends on
 * the position, a potential and velocity-dependent forces (c moves the
 * frame along x). */
static const char general_text[] =
    "parameters: {a: 1.5, b: 0.6, k: 2.0, mu: 0.3, c: 0}\n"
    "coordinates: [u, w]\n"
    "embedding:\n"
    "  x: a*cos(u) + b*w^2 + c*t\n"
    "  y: a*sin(u)*w\n"
    "  z: b*u*w + sin(w)\n"
    "mass: [[2 + x^2, 0.5, 0], [0.5, 1 + y^2, 0.2*z], [0, 0.2*z, 3]]\n"
    "potential: 0.5*k*(x^2 + y^2 + z^2)\n"
    "forces: {x: -mu*x', y: -mu*y'*z, z: -mu*z'}\n"
    "initial: {q: {u: 0.3, w: 0.8}}\n"
    "simulate: {t_end: 1}\n";

/* The same system in the Lagrangian form, its kinetic energy written by
 * hand as the square of the ambient velocities (defines), the ambient
 * forces as J^T F: an independent route to M and Q.  C is the speed of the
 * frame along x (0: no t in the embedding at all). */
static const char general_lagrangian[] =
    "parameters: {a: 1.5, b: 0.6, k: 2.0, mu: 0.3, c: %g}\n"
    "coordinates: [u, w]\n"
    "define:\n"
    "  x: a*cos(u) + b*w^2 + c*t\n"
    "  y: a*sin(u)*w\n"
    "  z: b*u*w + sin(w)\n"
    "  xd: -a*sin(u)*u' + 2*b*w*w' + c\n"
    "  yd: a*cos(u)*w*u' + a*sin(u)*w'\n"
    "  zd: b*w*u' + (b*u + cos(w))*w'\n"
    "  Fx: -mu*xd\n"
    "  Fy: -mu*yd*z\n"
    "  Fz: -mu*zd\n"
    "kinetic: 0.5*((2 + x^2)*xd^2 + 2*0.5*xd*yd + (1 + y^2)*yd^2 + 2*0.2*z*yd*zd + 3*zd^2)\n"
    "potential: 0.5*k*(x^2 + y^2 + z^2)\n"
    "forces:\n"
    "  u: -Fx*a*sin(u) + Fy*a*cos(u)*w + Fz*b*w\n"
    "  w: Fx*2*b*w + Fy*a*sin(u) + Fz*(b*u + cos(w))\n"
    "initial: {q: {u: 0.3, w: 0.8}}\n"
    "simulate: {t_end: 1}\n";

START_TEST(test_embedding_vs_lagrangian)
{
    double c = _i ? 0.4 : 0;
    char emb[1024], lag[2048];
    snprintf(emb, sizeof emb, "%s", general_text);
    char *p = strstr(emb, "c: 0}");
    ck_assert_ptr_nonnull(p);
    snprintf(p, sizeof emb - (size_t)(p - emb), "c: %g}%s", c, strstr(general_text, "c: 0}") + 5);
    if (c == 0) {              /* no t at all: the metric route */
        p = strstr(emb, " + c*t");
        ck_assert_ptr_nonnull(p);
        memmove(p, p + 6, strlen(p + 6) + 1);
    }
    snprintf(lag, sizeof lag, general_lagrangian, c);
    pu_args args = pu_defaults();
    args.text = emb;
    hs_model *A = pu_load(&args);
    args.text = lag;
    hs_model *B = pu_load(&args);
    ck_assert_int_eq(A->form, HS_FORM_EMBEDDING);
    ck_assert_int_eq(B->form, HS_FORM_LAGRANGIAN);
    hs_work *wa = hs_work_new(A), *wb = hs_work_new(B);
    ck_assert_ptr_nonnull(wa);
    ck_assert_ptr_nonnull(wb);
    double q[2], v[2], MA[4], MB[4], QA[2], QB[2];
    srand(99);
    for (int trial = 0; trial < 20; trial++) {
        for (int i = 0; i < 2; i++) {
            q[i] = -2 + 4.0 * rand() / RAND_MAX;
            v[i] = -3 + 6.0 * rand() / RAND_MAX;
        }
        double t = 2.0 * rand() / RAND_MAX;
        m_and_q(A, wa, t, q, v, MA, QA);
        m_and_q(B, wb, t, q, v, MB, QB);
        for (int i = 0; i < 4; i++)
            ck_assert_msg(fabs(MA[i] - MB[i]) <= 1e-12 * (1 + fabs(MB[i])),
                          "c = %g, M[%d]: embedding %.17g, Lagrangian %.17g", c, i, MA[i], MB[i]);
        for (int i = 0; i < 2; i++)
            ck_assert_msg(fabs(QA[i] - QB[i]) <= 1e-11 * (1 + fabs(QB[i])),
                          "c = %g, Q[%d]: embedding %.17g, Lagrangian %.17g", c, i, QA[i], QB[i]);
    }
    /* the energy bookkeeping (E - E0 - W_R - W_nc - W_t) holds, in the
     * moving frame too */
    {
        pu_result r;
        args.text = emb;
        args.columns = "t,energy_balance";
        pu_run_ok(&args, &r);
        size_t eb = pu_col(&r.tab, "energy_balance");
        for (size_t i = 0; i < r.tab.nrow; i++)
            ck_assert_msg(fabs(PU_AT(&r.tab, i, eb)) <= 1e-7, "c = %g: energy balance %g at row %zu",
                          c, PU_AT(&r.tab, i, eb), i);
        pu_result_free(&r);
    }
    hs_work_free(wa);
    hs_work_free(wb);
    hs_model_free(A);
    hs_model_free(B);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("expr_scale");
    TCase *tc = tcase_create("expr");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_sum_index_same_derivatives);
    tcase_add_test(tc, test_sum_index_hessian);
    tcase_add_test(tc, test_sum_index_refused);
    tcase_add_test(tc, test_constant_cache);
    tcase_add_test(tc, test_total_diff_direction_memo);
    tcase_add_test(tc, test_subst_many);
    tcase_add_test(tc, test_large_sum_symbols);
    tcase_add_test(tc, test_trig_in_large_sums);
    suite_add_tcase(s, tc);
    tc = tcase_create("embedding");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_metric_route_nlink);
    tcase_add_loop_test(tc, test_embedding_vs_lagrangian, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
