/* src/linalg/gslsafe.c and src/integrate/brent.c: GSL kept from its error
 * handler (linalg.h).  This suite runs under a handler that aborts
 * (check_main.h), so a report fails the test that made it.
 *
 *   cholesky   hs_la_cholesky is gsl_linalg_cholesky_decomp1 bit for bit
 *              (both sides of the recursion's crossover at 24), upper
 *              triangle included; GSL_EDOM where GSL would report
 *   storage    every size, 0 included, freed by GSL's _free functions
 *   views      GSL's fields, the zero view for a zero size or a range
 *              outside the parent
 *   guards     a singular LU, NaN into Francis and Jacobi, a B that is
 *              not positive definite into gensymmv: GSL's codes, no report
 *   brent      the written-out Brent is GSL's bit for bit; endpoints that
 *              do not straddle and non-finite values give codes */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_roots.h>

#include "check_main.h"
#include "integrate/internal.h"
#include "linalg/linalg.h"

/* a random SPD matrix of size n (B B^T + n I), deterministic */
static void spd(gsl_matrix *A, unsigned seed)
{
    size_t n = A->size1;
    double *B = malloc(n * n * sizeof *B);
    ck_assert_ptr_nonnull(B);
    for (size_t i = 0; i < n * n; i++) {
        seed = seed * 1103515245u + 12345u;
        B[i] = (double)(seed >> 8) / 16777216.0 - 0.5;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double s = i == j ? (double)n : 0;
            for (size_t p = 0; p < n; p++)
                s += B[i * n + p] * B[j * n + p];
            gsl_matrix_set(A, i, j, s);
        }
    free(B);
}

START_TEST(cholesky)
{
    for (size_t n = 1; n <= 70; n += n < 30 ? 1 : 7) {
        gsl_matrix *A = hs_la_matrix_alloc(n, n), *B = gsl_matrix_alloc(n, n);
        ck_assert(A && B);
        spd(A, (unsigned)n);
        gsl_matrix_memcpy(B, A);
        ck_assert_int_eq(hs_la_cholesky(A), GSL_SUCCESS);
        ck_assert_int_eq(gsl_linalg_cholesky_decomp1(B), GSL_SUCCESS);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(memcmp(A->data + i * A->tda, B->data + i * B->tda,
                                 n * sizeof(double)) == 0, "n = %zu, row %zu", n, i);
        /* not positive definite: a late pivot negative */
        spd(A, (unsigned)n);
        gsl_matrix_set(A, n - 1, n - 1, -1);
        ck_assert_int_eq(hs_la_cholesky(A), GSL_EDOM);
        gsl_matrix_free(A);
        gsl_matrix_free(B);
    }
    gsl_matrix *R = hs_la_matrix_alloc(2, 3);
    ck_assert_int_eq(hs_la_cholesky(R), GSL_ENOTSQR);
    gsl_matrix_free(R);
}
END_TEST

START_TEST(storage)
{
    for (size_t n = 0; n < 4; n++) {
        gsl_matrix *m = hs_la_matrix_alloc(n, n + 1), *z = hs_la_matrix_calloc(n + 1, n);
        gsl_vector *v = hs_la_vector_alloc(n);
        gsl_permutation *p = hs_la_permutation_alloc(n);
        gsl_matrix_complex *c = hs_la_matrix_complex_calloc(n, n);
        gsl_vector_complex *cv = hs_la_vector_complex_alloc(n);
        ck_assert(m && z && v && p && c && cv);
        ck_assert(m->size1 == n && m->size2 == n + 1 && m->tda == n + 1 && !m->owner);
        for (size_t i = 0; i < z->size1 * z->size2; i++)
            ck_assert(z->data[i] == 0);
        for (size_t i = 0; i < n; i++) {
            ck_assert_uint_eq(gsl_permutation_get(p, i), i);
            gsl_vector_set(v, i, (double)i);
        }
        gsl_matrix_free(m);
        gsl_matrix_free(z);
        gsl_vector_free(v);
        gsl_permutation_free(p);
        gsl_matrix_complex_free(c);
        gsl_vector_complex_free(cv);
    }
    ck_assert_ptr_null(hs_la_matrix_alloc((size_t)-1 / 4, 8));   /* overflow */
}
END_TEST

START_TEST(views)
{
    double a[12] = { 0 };
    gsl_matrix_view m = hs_la_mview(a, 3, 4);
    ck_assert(m.matrix.size1 == 3 && m.matrix.size2 == 4 && m.matrix.tda == 4);
    ck_assert(hs_la_mview(a, 0, 4).matrix.data == NULL);
    ck_assert(hs_la_vview(a, 0).vector.size == 0);
    gsl_matrix_view s = hs_la_submatrix(&m.matrix, 1, 2, 2, 2);
    ck_assert(s.matrix.data == a + 6 && s.matrix.tda == 4);
    ck_assert(hs_la_submatrix(&m.matrix, 1, 2, 3, 2).matrix.data == NULL);
    ck_assert(hs_la_submatrix(&m.matrix, 0, 0, 0, 2).matrix.data == NULL);
    gsl_vector_view v = hs_la_vview(a, 12);
    ck_assert(hs_la_subvector(&v.vector, 10, 3).vector.data == NULL);
    ck_assert(hs_la_subvector(&v.vector, 10, 2).vector.data == a + 10);
    ck_assert(hs_la_row_const(&m.matrix, 3).vector.data == NULL);
    ck_assert(hs_la_column_const(&m.matrix, 3).vector.stride == 4);
}
END_TEST

START_TEST(guards)
{
    /* a singular LU factor */
    gsl_matrix *A = hs_la_matrix_calloc(2, 2);
    gsl_permutation *p = hs_la_permutation_alloc(2);
    gsl_vector *x = hs_la_vector_alloc(2);
    gsl_matrix *I = hs_la_matrix_alloc(2, 2);
    int sg;
    gsl_matrix_set(A, 0, 0, 1);
    gsl_linalg_LU_decomp(A, p, &sg);
    ck_assert_int_eq(hs_la_lu_svx(A, p, x), GSL_EDOM);
    ck_assert_int_eq(hs_la_lu_invert(A, p, I), GSL_EDOM);
    /* NaN into Francis' QR and the Jacobi SVD */
    gsl_matrix_set(A, 1, 0, NAN);
    gsl_vector_complex *ev = hs_la_vector_complex_alloc(2);
    gsl_matrix_complex *evec = hs_la_matrix_complex_alloc(2, 2);
    gsl_eigen_nonsymm_workspace *w = gsl_eigen_nonsymm_alloc(2);
    gsl_eigen_nonsymmv_workspace *wv = gsl_eigen_nonsymmv_alloc(2);
    ck_assert_int_eq(hs_la_nonsymm(A, ev, w), GSL_EMAXITER);
    ck_assert_int_eq(hs_la_nonsymmv(A, ev, evec, wv), GSL_EMAXITER);
    ck_assert_int_eq(hs_la_sv_jacobi(A, I, x), GSL_ETOL);
    gsl_matrix *W = hs_la_matrix_alloc(2, 3);
    ck_assert_int_eq(hs_la_sv_decomp(W, I, x, x), GSL_EUNIMPL);
    /* a B that is not positive definite */
    gsl_matrix_set_identity(A);
    gsl_matrix_set_identity(I);
    gsl_matrix_set(I, 1, 1, -1);
    gsl_matrix *V = hs_la_matrix_alloc(2, 2);
    gsl_eigen_gensymmv_workspace *wg = gsl_eigen_gensymmv_alloc(2);
    ck_assert_int_eq(hs_la_gensymmv(A, I, x, V, wg), GSL_EDOM);
    gsl_matrix_set(I, 1, 1, 2);
    ck_assert_int_eq(hs_la_gensymmv(A, I, x, V, wg), GSL_SUCCESS);
    gsl_eigen_gensymmv_free(wg);
    gsl_eigen_nonsymm_free(w);
    gsl_eigen_nonsymmv_free(wv);
    gsl_vector_complex_free(ev);
    gsl_matrix_complex_free(evec);
    gsl_matrix_free(A);
    gsl_matrix_free(I);
    gsl_matrix_free(V);
    gsl_matrix_free(W);
    gsl_permutation_free(p);
    gsl_vector_free(x);
}
END_TEST

static double f_cos(double x, void *p) { (void)p; return cos(x) - x; }
static double f_cubic(double x, void *p) { (void)p; return x * x * x - 2 * x - 5; }
static double f_step(double x, void *p) { (void)p; return x < 0.3 ? -1 : 2; }
static double f_nan(double x, void *p) { (void)p; return x > 0.5 ? NAN : -1; }

START_TEST(brent)
{
    gsl_function fs[] = { { f_cos, NULL }, { f_cubic, NULL }, { f_step, NULL } };
    double lo0[] = { 0, 2, 0 }, hi0[] = { 1, 3, 1 };
    for (size_t k = 0; k < 3; k++) {
        gsl_root_fsolver *a = hs_int_brent_new(), *b = gsl_root_fsolver_alloc(gsl_root_fsolver_brent);
        ck_assert(a && b);
        ck_assert_int_eq(gsl_root_fsolver_set(a, &fs[k], lo0[k], hi0[k]), GSL_SUCCESS);
        ck_assert_int_eq(gsl_root_fsolver_set(b, &fs[k], lo0[k], hi0[k]), GSL_SUCCESS);
        for (int it = 0; it < 60; it++) {
            ck_assert_int_eq(gsl_root_fsolver_iterate(a), gsl_root_fsolver_iterate(b));
            double la = gsl_root_fsolver_x_lower(a), lb = gsl_root_fsolver_x_lower(b);
            double ua = gsl_root_fsolver_x_upper(a), ub = gsl_root_fsolver_x_upper(b);
            ck_assert(memcmp(&la, &lb, sizeof la) == 0 && memcmp(&ua, &ub, sizeof ua) == 0);
            ck_assert(gsl_root_fsolver_root(a) == gsl_root_fsolver_root(b));
        }
        gsl_root_fsolver_free(a);
        gsl_root_fsolver_free(b);
    }
    gsl_root_fsolver *a = hs_int_brent_new();
    ck_assert_int_eq(gsl_root_fsolver_set(a, &fs[0], 2, 3), GSL_EINVAL);   /* no straddle */
    gsl_function fn = { f_nan, NULL };
    ck_assert_int_eq(gsl_root_fsolver_set(a, &fn, 0, 1), GSL_EBADFUNC);
    ck_assert_int_eq(gsl_root_fsolver_set(a, &fn, 0, 0.4), GSL_EINVAL);
    gsl_root_fsolver_free(a);
}
END_TEST

/* The sparse SPD factorization (spd.c, CHOLMOD) against GSL's dense
 * Cholesky on C = G G^T of a random sparse G (rows of 2 to 4 entries, as a
 * mechanism's constraints): the solution to round-off, the condition
 * estimate within a factor 3 of the 1-norm condition computed densely,
 * the pivot ratio within [1/kappa_2, 1]; a singular C refused (-1); the
 * same factor refactored with new values. */
START_TEST(spd_factor)
{
    enum { K = 120, NC = 90 };
    srand(7);
    double *G = calloc(K * NC, sizeof *G);
    ck_assert_ptr_nonnull(G);
    for (int i = 0; i < K; i++)
        for (int e = 0, ne = 2 + i % 3; e < ne; e++)
            G[i * NC + (i * 7 + e * 31 + rand() % 5) % NC] += (double)(rand() % 1000) / 500 - 1;
    for (int round = 0; round < 2; round++) {
        /* the pairs of rows sharing a column (i >= j), as dynamics.c builds them */
        uint32_t *pi = malloc(K * K * sizeof *pi), *pj = malloc(K * K * sizeof *pj);
        double *val = malloc(K * K * sizeof *val);
        ck_assert(pi && pj && val);
        size_t np = 0;
        for (int c = 0; c < NC; c++)
            for (int i = 0; i < K; i++)
                for (int j = 0; j <= i; j++)
                    if (G[i * NC + c] != 0 && G[j * NC + c] != 0) {
                        pi[np] = (uint32_t)i;
                        pj[np] = (uint32_t)j;
                        val[np++] = G[i * NC + c] * G[j * NC + c];
                    }
        hs_la_spd *S = hs_la_spd_new(K, np, pi, pj);
        ck_assert_ptr_nonnull(S);
        const int *slot = hs_la_spd_slots(S), *diag = hs_la_spd_diag(S);
        gsl_matrix *C = gsl_matrix_calloc(K, K);
        double *x = hs_la_spd_values(S);
        for (size_t z = 0; z < np; z++) {
            x[slot[z]] += val[z];
            C->data[pi[z] * K + pj[z]] += val[z];
            if (pi[z] != pj[z])
                C->data[pj[z] * K + pi[z]] += val[z];
        }
        for (int i = 0; i < K; i++) {   /* K > NC: singular; add a diagonal */
            double d = round == 0 ? 0.5 : 1e-3;
            x[diag[i]] += d;
            C->data[i * K + i] += d;
        }
        ck_assert_int_eq(hs_la_spd_factor(S), 0);
        ck_assert(hs_la_spd_finite(S));
        double b[K], y[K];
        for (int i = 0; i < K; i++)
            b[i] = y[i] = sin(i + 1.0);
        ck_assert_int_eq(hs_la_spd_solve(S, y), 0);
        gsl_matrix *L = gsl_matrix_alloc(K, K);
        gsl_matrix_memcpy(L, C);
        ck_assert_int_eq(gsl_linalg_cholesky_decomp1(L), GSL_SUCCESS);
        gsl_vector_view bv = gsl_vector_view_array(b, K);
        gsl_linalg_cholesky_svx(L, &bv.vector);
        double err = 0, size = 0;
        for (int i = 0; i < K; i++) {
            err = fmax(err, fabs(y[i] - b[i]));
            size = fmax(size, fabs(b[i]));
        }
        double rc1;
        gsl_vector *wk = gsl_vector_alloc(3 * K);
        gsl_linalg_cholesky_rcond(L, &rc1, wk);
        ck_assert_msg(err <= 1e3 * DBL_EPSILON * size / rc1, "solve error %g", err);
        double est = hs_la_spd_rcond(S, 1), piv = hs_la_spd_rcond(S, 0);
        ck_assert_msg(est >= rc1 / 3 && est <= 3 * rc1, "estimate %g, dense %g", est, rc1);
        ck_assert_msg(piv > 0 && piv <= 1 && piv >= rc1 / K, "pivot ratio %g", piv);
        /* C - (its smallest eigenvalue + 1) I is indefinite: refused */
        x = hs_la_spd_values(S);
        for (size_t z = 0; z < np; z++)
            x[slot[z]] += val[z];
        for (int i = 0; i < K; i++)
            x[diag[i]] -= 1;
        ck_assert_int_eq(hs_la_spd_factor(S), -1);
        gsl_vector_free(wk);
        gsl_matrix_free(L);
        gsl_matrix_free(C);
        hs_la_spd_free(S);
        free(pi);
        free(pj);
        free(val);
    }
    free(G);
}
END_TEST

static Suite *linalg_suite(void)
{
    Suite *s = suite_create("linalg");
    TCase *tc = tcase_create("gslsafe");
    tcase_add_test(tc, cholesky);
    tcase_add_test(tc, storage);
    tcase_add_test(tc, views);
    tcase_add_test(tc, guards);
    tcase_add_test(tc, brent);
    tcase_add_test(tc, spd_factor);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(linalg_suite)
