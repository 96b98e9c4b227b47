/* GSL without its error handler (linalg.h): storage through malloc, views
 * that never report, GSL's Cholesky with a status code, the preconditions
 * of the routines that would report. */
#include "linalg.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>

/* n1 * n2 * each bytes after a header of hdr bytes, or NULL (overflow
 * included). */
static void *block(size_t hdr, size_t n1, size_t n2, size_t each, int zero)
{
    if (n2 && n1 > SIZE_MAX / n2)
        return NULL;
    size_t n = n1 * n2;
    if (n > (SIZE_MAX - hdr) / each)
        return NULL;
    return zero ? calloc(1, hdr + n * each) : malloc(hdr + n * each);
}

/* the data after the header, aligned for doubles (the headers are
 * multiples of sizeof(double) in practice; the rounding makes it sure) */
#define HDR(T) ((sizeof(T) + sizeof(double) - 1) / sizeof(double) * sizeof(double))

static gsl_matrix *matrix(size_t n1, size_t n2, int zero)
{
    gsl_matrix *m = block(HDR(gsl_matrix), n1, n2, sizeof(double), zero);
    if (!m)
        return NULL;
    *m = (gsl_matrix){ n1, n2, n2, (double *)((char *)m + HDR(gsl_matrix)), NULL, 0 };
    return m;
}

gsl_matrix *hs_la_matrix_alloc(size_t n1, size_t n2) { return matrix(n1, n2, 0); }
gsl_matrix *hs_la_matrix_calloc(size_t n1, size_t n2) { return matrix(n1, n2, 1); }

gsl_vector *hs_la_vector_alloc(size_t n)
{
    gsl_vector *v = block(HDR(gsl_vector), n, 1, sizeof(double), 0);
    if (v)
        *v = (gsl_vector){ n, 1, (double *)((char *)v + HDR(gsl_vector)), NULL, 0 };
    return v;
}

gsl_permutation *hs_la_permutation_alloc(size_t n)
{
    gsl_permutation *p = malloc(sizeof *p);
    size_t *data = n <= SIZE_MAX / sizeof(size_t) ? malloc(n ? n * sizeof(size_t) : 1) : NULL;
    if (!p || !data) {
        free(p);
        free(data);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        data[i] = i;
    *p = (gsl_permutation){ n, data };
    return p;
}

static gsl_matrix_complex *cmatrix(size_t n1, size_t n2, int zero)
{
    gsl_matrix_complex *m = block(HDR(gsl_matrix_complex), n1, n2, 2 * sizeof(double), zero);
    if (!m)
        return NULL;
    *m = (gsl_matrix_complex){ n1, n2, n2,
                               (double *)((char *)m + HDR(gsl_matrix_complex)), NULL, 0 };
    return m;
}

gsl_matrix_complex *hs_la_matrix_complex_alloc(size_t n1, size_t n2)
{
    return cmatrix(n1, n2, 0);
}

gsl_matrix_complex *hs_la_matrix_complex_calloc(size_t n1, size_t n2)
{
    return cmatrix(n1, n2, 1);
}

gsl_vector_complex *hs_la_vector_complex_alloc(size_t n)
{
    gsl_vector_complex *v = block(HDR(gsl_vector_complex), n, 1, 2 * sizeof(double), 0);
    if (v)
        *v = (gsl_vector_complex){ n, 1, (double *)((char *)v + HDR(gsl_vector_complex)),
                                   NULL, 0 };
    return v;
}

/* Views: GSL's own fields, or the zero view where GSL would report. */
gsl_matrix_view hs_la_mview(double *base, size_t n1, size_t n2)
{
    gsl_matrix_view v = {{ 0, 0, 0, 0, 0, 0 }};
    if (n1 && n2)
        v.matrix = (gsl_matrix){ n1, n2, n2, base, NULL, 0 };
    return v;
}

_gsl_matrix_const_view hs_la_mview_const(const double *base, size_t n1, size_t n2)
{
    _gsl_matrix_const_view v = {{ 0, 0, 0, 0, 0, 0 }};
    if (n1 && n2)
        v.matrix = (gsl_matrix){ n1, n2, n2, (double *)base, NULL, 0 };
    return v;
}

gsl_vector_view hs_la_vview(double *base, size_t n)
{
    gsl_vector_view v = {{ 0, 0, 0, 0, 0 }};
    if (n)
        v.vector = (gsl_vector){ n, 1, base, NULL, 0 };
    return v;
}

_gsl_vector_const_view hs_la_vview_const(const double *base, size_t n)
{
    _gsl_vector_const_view v = {{ 0, 0, 0, 0, 0 }};
    if (n)
        v.vector = (gsl_vector){ n, 1, (double *)base, NULL, 0 };
    return v;
}

static int inside(const gsl_matrix *m, size_t i, size_t j, size_t n1, size_t n2)
{
    return n1 && n2 && i < m->size1 && j < m->size2 && n1 <= m->size1 - i &&
           n2 <= m->size2 - j;
}

gsl_matrix_view hs_la_submatrix(gsl_matrix *m, size_t i, size_t j, size_t n1, size_t n2)
{
    gsl_matrix_view v = {{ 0, 0, 0, 0, 0, 0 }};
    if (inside(m, i, j, n1, n2))
        v.matrix = (gsl_matrix){ n1, n2, m->tda, m->data + i * m->tda + j, m->block, 0 };
    return v;
}

_gsl_matrix_const_view hs_la_submatrix_const(const gsl_matrix *m, size_t i, size_t j,
                                            size_t n1, size_t n2)
{
    _gsl_matrix_const_view v = {{ 0, 0, 0, 0, 0, 0 }};
    if (inside(m, i, j, n1, n2))
        v.matrix = (gsl_matrix){ n1, n2, m->tda, m->data + i * m->tda + j, m->block, 0 };
    return v;
}

gsl_vector_view hs_la_subvector(gsl_vector *w, size_t i, size_t n)
{
    gsl_vector_view v = {{ 0, 0, 0, 0, 0 }};
    if (n && i < w->size && n <= w->size - i)
        v.vector = (gsl_vector){ n, w->stride, w->data + i * w->stride, w->block, 0 };
    return v;
}

_gsl_vector_const_view hs_la_row_const(const gsl_matrix *m, size_t i)
{
    _gsl_vector_const_view v = {{ 0, 0, 0, 0, 0 }};
    if (i < m->size1)
        v.vector = (gsl_vector){ m->size2, 1, m->data + i * m->tda, m->block, 0 };
    return v;
}

_gsl_vector_const_view hs_la_column_const(const gsl_matrix *m, size_t j)
{
    _gsl_vector_const_view v = {{ 0, 0, 0, 0, 0 }};
    if (j < m->size2)
        v.vector = (gsl_vector){ m->size1, m->tda, m->data + j, m->block, 0 };
    return v;
}

/* GSL's cholesky_decomp_L2 (Golub and Van Loan's gaxpy Cholesky with level
 * 2 BLAS): the same calls, GSL_EDOM at a pivot that is not positive. */
static int cholesky_L2(gsl_matrix *A)
{
    size_t N = A->size1;
    for (size_t j = 0; j < N; j++) {
        gsl_vector_view v = { { N - j, A->tda, A->data + j * A->tda + j, A->block, 0 } };
        if (j > 0) {
            gsl_vector_view w = { { j, 1, A->data + j * A->tda, A->block, 0 } };
            gsl_matrix_view m = hs_la_submatrix(A, j, 0, N - j, j);
            gsl_blas_dgemv(CblasNoTrans, -1.0, &m.matrix, &w.vector, 1.0, &v.vector);
        }
        double ajj = A->data[j * A->tda + j];
        if (ajj <= 0.0)
            return GSL_EDOM;
        ajj = sqrt(ajj);
        gsl_vector_scale(&v.vector, 1.0 / ajj);
    }
    return GSL_SUCCESS;
}

/* GSL's cholesky_decomp_L3 (the recursive blocked algorithm, its split
 * and crossover: GSL_LINALG_SPLIT, CROSSOVER_CHOLESKY = 24). */
static int cholesky_L3(gsl_matrix *A)
{
    size_t N = A->size1;
    if (N <= 24)
        return cholesky_L2(A);
    size_t N1 = N >= 16 ? (N + 8) / 16 * 8 : N / 2, N2 = N - N1;
    gsl_matrix_view A11 = hs_la_submatrix(A, 0, 0, N1, N1);
    gsl_matrix_view A21 = hs_la_submatrix(A, N1, 0, N2, N1);
    gsl_matrix_view A22 = hs_la_submatrix(A, N1, N1, N2, N2);
    int status = cholesky_L3(&A11.matrix);
    if (status)
        return status;
    gsl_blas_dtrsm(CblasRight, CblasLower, CblasTrans, CblasNonUnit, 1.0, &A11.matrix,
                   &A21.matrix);                            /* A21 = A21 L11^-T */
    gsl_blas_dsyrk(CblasLower, CblasNoTrans, -1.0, &A21.matrix, 1.0, &A22.matrix);
    return cholesky_L3(&A22.matrix);
}

int hs_la_cholesky(gsl_matrix *A)
{
    if (A->size1 != A->size2)
        return GSL_ENOTSQR;
    size_t N = A->size1, tda = A->tda;
    double *a = A->data;
    /* the matrix kept in the upper triangle, for gsl_linalg_cholesky_rcond
     * (gsl_matrix_transpose_tricpy(CblasLower, CblasUnit, A, A)) */
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < i; j++)
            a[j * tda + i] = a[i * tda + j];
    return cholesky_L3(A);
}

int hs_la_lu_singular(const gsl_matrix *LU)
{
    for (size_t i = 0; i < LU->size1 && i < LU->size2; i++)
        if (LU->data[i * LU->tda + i] == 0)
            return 1;
    return 0;
}

int hs_la_complex_lu_singular(const gsl_matrix_complex *LU)
{
    for (size_t i = 0; i < LU->size1 && i < LU->size2; i++) {
        const double *z = LU->data + 2 * (i * LU->tda + i);
        if (z[0] == 0 && z[1] == 0)
            return 1;
    }
    return 0;
}

int hs_la_finite(const gsl_matrix *A)
{
    for (size_t i = 0; i < A->size1; i++)
        for (size_t j = 0; j < A->size2; j++)
            if (!isfinite(A->data[i * A->tda + j]))
                return 0;
    return 1;
}

int hs_la_lu_svx(const gsl_matrix *LU, const gsl_permutation *p, gsl_vector *x)
{
    return hs_la_lu_singular(LU) ? GSL_EDOM : gsl_linalg_LU_svx(LU, p, x);
}

int hs_la_lu_invert(const gsl_matrix *LU, const gsl_permutation *p, gsl_matrix *inverse)
{
    return hs_la_lu_singular(LU) ? GSL_EDOM : gsl_linalg_LU_invert(LU, p, inverse);
}

int hs_la_complex_lu_svx(const gsl_matrix_complex *LU, const gsl_permutation *p,
                         gsl_vector_complex *x)
{
    return hs_la_complex_lu_singular(LU) ? GSL_EDOM : gsl_linalg_complex_LU_svx(LU, p, x);
}

int hs_la_sv_decomp(gsl_matrix *A, gsl_matrix *V, gsl_vector *S, gsl_vector *work)
{
    return A->size1 < A->size2 ? GSL_EUNIMPL : gsl_linalg_SV_decomp(A, V, S, work);
}

int hs_la_sv_jacobi(gsl_matrix *A, gsl_matrix *Q, gsl_vector *S)
{
    if (A->size1 < A->size2)
        return GSL_EUNIMPL;
    return hs_la_finite(A) ? gsl_linalg_SV_decomp_jacobi(A, Q, S) : GSL_ETOL;
}

int hs_la_nonsymm(gsl_matrix *A, gsl_vector_complex *eval, gsl_eigen_nonsymm_workspace *w)
{
    return hs_la_finite(A) ? gsl_eigen_nonsymm(A, eval, w) : GSL_EMAXITER;
}

int hs_la_nonsymmv(gsl_matrix *A, gsl_vector_complex *eval, gsl_matrix_complex *evec,
                   gsl_eigen_nonsymmv_workspace *w)
{
    return hs_la_finite(A) ? gsl_eigen_nonsymmv(A, eval, evec, w) : GSL_EMAXITER;
}

int hs_la_gensymmv(gsl_matrix *A, gsl_matrix *B, gsl_vector *eval, gsl_matrix *evec,
                   gsl_eigen_gensymmv_workspace *w)
{
    gsl_matrix *L = hs_la_matrix_alloc(B->size1, B->size2);
    if (!L)
        return GSL_ENOMEM;
    for (size_t i = 0; i < B->size1; i++)
        memcpy(L->data + i * L->tda, B->data + i * B->tda, B->size2 * sizeof(double));
    int st = hs_la_cholesky(L);
    gsl_matrix_free(L);
    return st ? st : gsl_eigen_gensymmv(A, B, eval, evec, w);
}
