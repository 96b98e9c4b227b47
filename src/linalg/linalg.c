/* Band and small dense Cholesky factorizations (linalg.h). */
#include "linalg.h"

#include <math.h>

/* The tridiagonal case (b = 1: the chains), the general loops written out:
 * the same operations in the same order, so the same bits. */
static int tridiag_cholesky(double *L, size_t k, size_t tda, double tau, int *weak)
{
    double norm = 0, prev = 0;       /* prev: |A(j, j-1)| */
    for (size_t j = 0; j < k; j++) {
        double sub = j + 1 < k ? fabs(L[j * tda + 1]) : 0;
        double col = fabs(L[j * tda]) + sub + prev;
        if (col > norm)
            norm = col;
        prev = sub;
    }
    double lprev = 0;                /* L(j, j-1) */
    for (size_t j = 0; j < k; j++) {
        double d = L[j * tda];
        double a = d;
        if (j > 0)
            d -= lprev * lprev;
        if (!(d > 0))
            return -1;
        *weak |= d < tau * a;
        double ljj = sqrt(d);
        L[j * tda] = ljj;
        if (j + 1 < k)
            lprev = L[j * tda + 1] = L[j * tda + 1] / ljj;
    }
    L[(k - 1) * tda + 1] = norm;
    return 0;
}

int hs_la_band_cholesky(gsl_matrix *B)
{
    int weak = 0;
    return hs_la_band_cholesky_piv(B, 0, &weak);
}

int hs_la_band_cholesky_piv(gsl_matrix *B, double tau, int *weak)
{
    size_t k = B->size1, b = B->size2 - 1, tda = B->tda;
    double *L = B->data;
    if (b == 1 && k > 0)
        return tridiag_cholesky(L, k, tda, tau, weak);
#define BL(i, j) L[(j) * tda + ((i) - (j))]     /* element (i, j), i >= j */
    /* the 1-norm of A, kept where GSL keeps it (the unused last slot of
     * the last row) for gsl_linalg_cholesky_band_rcond */
    double norm = 0;
    for (size_t j = 0; j < k; j++) {
        double col = 0;
        for (size_t i = j; i <= j + b && i < k; i++)
            col += fabs(BL(i, j));
        for (size_t p = j > b ? j - b : 0; p < j; p++)
            col += fabs(BL(j, p));
        if (col > norm)
            norm = col;
    }
    for (size_t j = 0; j < k; j++) {
        size_t p0 = j > b ? j - b : 0;
        double d = BL(j, j), a = d;
        for (size_t p = p0; p < j; p++)
            d -= BL(j, p) * BL(j, p);
        if (!(d > 0))
            return -1;
        *weak |= d < tau * a;
        double ljj = sqrt(d);
        BL(j, j) = ljj;
        size_t iend = j + b < k - 1 ? j + b : k - 1;
        for (size_t i = j + 1; i <= iend; i++) {
            double sum = BL(i, j);
            size_t q0 = i > b ? i - b : 0;
            for (size_t p = q0; p < j; p++)
                sum -= BL(i, p) * BL(j, p);
            BL(i, j) = sum / ljj;
        }
    }
    if (b > 0)
        L[(k - 1) * tda + b] = norm;
    return 0;
}

void hs_la_band_svx(const gsl_matrix *B, double *x)
{
    size_t k = B->size1, b = B->size2 - 1, tda = B->tda;
    const double *L = B->data;
    if (b == 1) {                                  /* tridiagonal, written out */
        for (size_t i = 0; i < k; i++)
            x[i] = (i ? x[i] - L[(i - 1) * tda + 1] * x[i - 1] : x[i]) / L[i * tda];
        for (size_t i = k; i-- > 0;)
            x[i] = (i + 1 < k ? x[i] - L[i * tda + 1] * x[i + 1] : x[i]) / L[i * tda];
        return;
    }
    for (size_t i = 0; i < k; i++) {               /* L y = x */
        double sum = x[i];
        for (size_t p = i > b ? i - b : 0; p < i; p++)
            sum -= BL(i, p) * x[p];
        x[i] = sum / BL(i, i);
    }
    for (size_t i = k; i-- > 0;) {                 /* L^T x = y */
        double sum = x[i];
        size_t rend = i + b < k - 1 ? i + b : k - 1;
        for (size_t r = i + 1; r <= rend; r++)
            sum -= BL(r, i) * x[r];
        x[i] = sum / BL(i, i);
    }
#undef BL
}

int hs_la_small_cholesky(gsl_matrix *C)
{
    int weak = 0;
    return hs_la_small_cholesky_piv(C, 0, &weak);
}

/* Column j of a Cholesky factor in place (lower triangle, row stride tda):
 * the pivot d = C_jj - sum_p L_jp^2, and the column below it given d > 0.
 * One helper for the plain and the skipping factorizations, so both do
 * the same operations in the same order. */
static double chol_pivot(const double *a, size_t tda, size_t j)
{
    double d = a[j * tda + j];
    for (size_t p = 0; p < j; p++)
        d -= a[j * tda + p] * a[j * tda + p];
    return d;
}

static void chol_column(double *a, size_t tda, size_t k, size_t j, double d)
{
    double ljj = sqrt(d);
    a[j * tda + j] = ljj;
    for (size_t i = j + 1; i < k; i++) {
        double s = a[i * tda + j];
        for (size_t p = 0; p < j; p++)
            s -= a[i * tda + p] * a[j * tda + p];
        a[i * tda + j] = s / ljj;
    }
}

int hs_la_small_cholesky_piv(gsl_matrix *C, double tau, int *weak)
{
    size_t k = C->size1, tda = C->tda;
    double *a = C->data;
    for (size_t j = 0; j < k; j++) {
        double ajj = a[j * tda + j], d = chol_pivot(a, tda, j);
        if (!(d > 0))
            return -1;
        *weak |= d < tau * ajj;
        chol_column(a, tda, k, j, d);
    }
    return 0;
}

void hs_la_small_svx(const gsl_matrix *C, double *x)
{
    size_t k = C->size1, tda = C->tda;
    const double *a = C->data;
    for (size_t i = 0; i < k; i++) {
        double s = x[i];
        for (size_t p = 0; p < i; p++)
            s -= a[i * tda + p] * x[p];
        x[i] = s / a[i * tda + i];
    }
    for (size_t i = k; i-- > 0;) {
        double s = x[i];
        for (size_t r = i + 1; r < k; r++)
            s -= a[r * tda + i] * x[r];
        x[i] = s / a[i * tda + i];
    }
}

int hs_la_small_cholesky_skip(gsl_matrix *C, double tau_skip, double tau_weak, int *weak,
                              unsigned char *skip, double *rmin)
{
    size_t k = C->size1, tda = C->tda;
    double *a = C->data;
    int nskip = 0;
    *rmin = 1;
    for (size_t j = 0; j < k; j++) {
        double ajj = a[j * tda + j], d = chol_pivot(a, tda, j);
        if (!(d - d == 0))
            return -1;                       /* inf or NaN: left in place */
        double ratio = ajj > 0 ? d / ajj : 0;
        *rmin = ratio < *rmin ? (ratio > 0 ? ratio : 0) : *rmin;
        skip[j] = !(d > tau_skip * ajj) || !(ajj > 0);
        if (skip[j]) {
            /* an identity row; the eliminated row kept above the diagonal */
            for (size_t p = 0; p < j; p++) {
                a[p * tda + j] = a[j * tda + p];
                a[j * tda + p] = 0;
            }
            a[j * tda + j] = 1;
            for (size_t i = j + 1; i < k; i++)
                a[i * tda + j] = 0;
            nskip++;
            continue;
        }
        *weak |= d < tau_weak * ajj;
        chol_column(a, tda, k, j, d);
    }
    return nskip;
}

void hs_la_small_minnorm(const gsl_matrix *C, const unsigned char *skip, double *x,
                         double *scratch)
{
    size_t k = C->size1, tda = C->tda, m = 0;
    const double *a = C->data;
    double *N = scratch, *H = scratch + k * k;   /* N: k x m by columns; H: m x m */
    for (size_t d = 0; d < k; d++) {
        if (!skip[d])
            continue;
        double *nd = N + m * k;                  /* n_d = e_d - c, L_<d^T c = l_d */
        for (size_t i = 0; i < k; i++)
            nd[i] = 0;
        nd[d] = 1;
        for (size_t p = d; p-- > 0;) {
            double s = skip[p] ? 0 : a[p * tda + d];
            for (size_t r = p + 1; r < d; r++)
                s -= a[r * tda + p] * -nd[r];
            nd[p] = skip[p] ? 0 : -s / a[p * tda + p];
        }
        m++;
    }
    if (!m)
        return;
    /* x <- x - N (N^T N)^-1 N^T x */
    double *y = H + m * m;
    for (size_t i = 0; i < m; i++) {
        double s = 0;
        for (size_t r = 0; r < k; r++)
            s += N[i * k + r] * x[r];
        y[i] = s;
        for (size_t j = 0; j <= i; j++) {
            double h = 0;
            for (size_t r = 0; r < k; r++)
                h += N[i * k + r] * N[j * k + r];
            H[i * m + j] = H[j * m + i] = h;
        }
    }
    gsl_matrix_view Hv = hs_la_mview(H, m, m);
    if (hs_la_small_cholesky(&Hv.matrix))
        return;
    hs_la_small_svx(&Hv.matrix, y);
    for (size_t i = 0; i < m; i++)
        for (size_t r = 0; r < k; r++)
            x[r] -= N[i * k + r] * y[i];
}
