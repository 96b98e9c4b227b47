/* Small linear algebra the dynamics and the projection share, written out
 * where GSL's general routines cost more than the arithmetic:
 *
 *   hs_la_band_cholesky / hs_la_band_svx    symmetric positive definite band
 *       matrices in GSL's band storage (B(j, i-j) = A(i, j), i >= j), the
 *       narrow C = G_q M^-1 G_q^T of chains; the same layout as
 *       gsl_linalg_cholesky_band_*, so GSL's condition estimate reads the
 *       factor
 *   hs_la_small_cholesky / hs_la_small_svx  dense, for the k <= 16 of most
 *       models (GSL goes through BLAS calls there)
 *
 * Status codes, not aborts: 0, or -1 when the matrix is not positive
 * definite.  Condition estimates are GSL's (gsl_linalg_cholesky_rcond,
 * gsl_linalg_cholesky_band_rcond) on these factors. */
#ifndef HS_LINALG_H
#define HS_LINALG_H

#include <stdint.h>

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_permutation.h>
#include <gsl/gsl_vector.h>

/* GSL reports errors through a process-wide handler whose default aborts.
 * holosim never touches that handler and calls no GSL function in a way
 * that reaches it: GSL's storage is allocated here, through malloc (an
 * out of memory is ours to report), views are made here (an empty one
 * instead of GSL's error on a zero size), the Cholesky factorization is
 * GSL's algorithm written out with a status code where GSL's calls its
 * handler, and every other routine gets its preconditions checked at the
 * call (a singular LU factor, non-finite input to an iterative
 * eigensolver or SVD, dimensions).  doc/architecture.md, Errors, lists
 * what guards each routine. */

/* Storage in one malloc'd block with owner 0, so gsl_matrix_free,
 * gsl_vector_free, gsl_permutation_free (its data apart) and the complex
 * ones free it; any size, 0 included; NULL when out of memory. */
gsl_matrix *hs_la_matrix_alloc(size_t n1, size_t n2);
gsl_matrix *hs_la_matrix_calloc(size_t n1, size_t n2);
gsl_vector *hs_la_vector_alloc(size_t n);
gsl_permutation *hs_la_permutation_alloc(size_t n);
gsl_matrix_complex *hs_la_matrix_complex_alloc(size_t n1, size_t n2);
gsl_matrix_complex *hs_la_matrix_complex_calloc(size_t n1, size_t n2);
gsl_vector_complex *hs_la_vector_complex_alloc(size_t n);

/* GSL's views and submatrices, except that a zero size or a range outside
 * the parent gives the all-zero view GSL returns after reporting an error
 * (what holosim received while it switched the handler off). */
gsl_matrix_view hs_la_mview(double *base, size_t n1, size_t n2);
_gsl_matrix_const_view hs_la_mview_const(const double *base, size_t n1, size_t n2);
gsl_vector_view hs_la_vview(double *base, size_t n);
_gsl_vector_const_view hs_la_vview_const(const double *base, size_t n);
gsl_matrix_view hs_la_submatrix(gsl_matrix *m, size_t i, size_t j, size_t n1, size_t n2);
_gsl_matrix_const_view hs_la_submatrix_const(const gsl_matrix *m, size_t i, size_t j,
                                            size_t n1, size_t n2);
gsl_vector_view hs_la_subvector(gsl_vector *v, size_t i, size_t n);
_gsl_vector_const_view hs_la_row_const(const gsl_matrix *m, size_t i);
_gsl_vector_const_view hs_la_column_const(const gsl_matrix *m, size_t j);

/* gsl_linalg_cholesky_decomp1, operation for operation (the same BLAS
 * calls in the same order, so the same bits), returning GSL_EDOM where
 * GSL reports "matrix is not positive definite" to its handler, and
 * GSL_ENOTSQR for a matrix that is not square. */
int hs_la_cholesky(gsl_matrix *A);
/* 1 when the LU factor has a zero on U's diagonal: the test
 * gsl_linalg_LU_svx, _solve and _invert make before reporting "matrix is
 * singular" to GSL's handler. */
int hs_la_lu_singular(const gsl_matrix *LU);
int hs_la_complex_lu_singular(const gsl_matrix_complex *LU);
/* GSL's routines behind their preconditions (the status GSL returns when
 * its handler is off, without calling it):
 *   hs_la_lu_svx, hs_la_lu_invert, hs_la_complex_lu_svx   GSL_EDOM on a
 *       zero on U's diagonal ("matrix is singular")
 *   hs_la_sv_decomp, hs_la_sv_jacobi   GSL_EUNIMPL when A has fewer rows
 *       than columns; the Jacobi SVD GSL_ETOL on non-finite A (its sweeps
 *       would run out: "did not reach desired tolerance")
 *   hs_la_nonsymm, hs_la_nonsymmv   GSL_EMAXITER on non-finite A (Francis'
 *       QR would run out of iterations)
 *   hs_la_gensymmv   B's Cholesky tried first on a copy with hs_la_cholesky
 *       (the same operations as the one gsl_eigen_gensymmv makes, whose
 *       failure it reports): its status (GSL_EDOM), GSL_ENOMEM for the copy */
int hs_la_lu_svx(const gsl_matrix *LU, const gsl_permutation *p, gsl_vector *x);
int hs_la_lu_invert(const gsl_matrix *LU, const gsl_permutation *p, gsl_matrix *inverse);
int hs_la_complex_lu_svx(const gsl_matrix_complex *LU, const gsl_permutation *p,
                         gsl_vector_complex *x);
int hs_la_sv_decomp(gsl_matrix *A, gsl_matrix *V, gsl_vector *S, gsl_vector *work);
int hs_la_sv_jacobi(gsl_matrix *A, gsl_matrix *Q, gsl_vector *S);
int hs_la_nonsymm(gsl_matrix *A, gsl_vector_complex *eval, gsl_eigen_nonsymm_workspace *w);
int hs_la_nonsymmv(gsl_matrix *A, gsl_vector_complex *eval, gsl_matrix_complex *evec,
                   gsl_eigen_nonsymmv_workspace *w);
int hs_la_gensymmv(gsl_matrix *A, gsl_matrix *B, gsl_vector *eval, gsl_matrix *evec,
                   gsl_eigen_gensymmv_workspace *w);
/* 1 when every entry is finite: an iterative eigensolver or SVD (whose
 * non-convergence GSL reports to its handler) is called on finite data
 * only. */
int hs_la_finite(const gsl_matrix *A);

/* Cholesky factorization in place of a band matrix (bandwidth B->size2 - 1);
 * also stores the 1-norm of A where GSL keeps it (the unused last slot of
 * the last row) for gsl_linalg_cholesky_band_rcond. */
int hs_la_band_cholesky(gsl_matrix *B);
/* The same, and *weak |= 1 when a pivot is below tau times the diagonal
 * entry it came from (L_jj^2 < tau A_jj: row j nearly in the span of the
 * rows before it; one multiplication per pivot). */
int hs_la_band_cholesky_piv(gsl_matrix *B, double tau, int *weak);
/* x <- A^-1 x with the factor of hs_la_band_cholesky. */
void hs_la_band_svx(const gsl_matrix *L, double *x);

/* Dense Cholesky, L in the lower triangle (as gsl_linalg_cholesky_decomp1
 * leaves it; the upper triangle is not touched). */
int hs_la_small_cholesky(gsl_matrix *C);
int hs_la_small_cholesky_piv(gsl_matrix *C, double tau, int *weak);
/* Dense Cholesky that skips dependent rows: where a pivot is at most
 * tau_skip times its diagonal entry (or the row is zero), row j becomes an
 * identity row of L (L(j,j) = 1, the rest of row and column j 0), the
 * row it eliminated to kept above the diagonal (C(p, j), p < j) for
 * hs_la_small_minnorm, and skip[j] = 1.  A kept pivot below tau_weak times
 * its entry sets *weak; *rmin: the smallest pivot ratio L_jj^2 / C_jj.
 * Returns how many rows were skipped, or -1 at a non-finite pivot.  Solving with the factor (rows
 * skipped given 0) gives a solution of a consistent C x = b. */
int hs_la_small_cholesky_skip(gsl_matrix *C, double tau_skip, double tau_weak, int *weak,
                              unsigned char *skip, double *rmin);
/* x <- its component orthogonal to ker C, which the skipped rows span
 * (n_d = e_d - c_d, L^T c_d = the row d eliminated to): among the
 * solutions of C x = b, the one of least Euclidean norm.  scratch: 2 k^2
 * + k doubles. */
void hs_la_small_minnorm(const gsl_matrix *C, const unsigned char *skip, double *x,
                         double *scratch);
/* x <- (L L^T)^-1 x with L in the lower triangle of C. */
void hs_la_small_svx(const gsl_matrix *C, double *x);

/* A square sparse system K x = b of fixed pattern (sparse.c, KLU):
 * hs_la_sparse_new takes the pattern as nt contributions (row[t], col[t])
 * (repeated positions add up), NULL when out of memory; each evaluation
 * takes hs_la_sparse_values (the entries, zeroed) and adds contribution t
 * at hs_la_sparse_slots(S)[t], then hs_la_sparse_factor (0, or -1 when K
 * is singular) and hs_la_sparse_solve (x <- K^-1 x, refined once).  The
 * pivots of the first factorization are kept while they stay sound (the
 * same numbers for the same sequence of matrices). */
typedef struct hs_la_sparse hs_la_sparse;
hs_la_sparse *hs_la_sparse_new(size_t N, size_t nt, const int *row, const int *col);
void hs_la_sparse_free(hs_la_sparse *S);            /* NULL is fine */
double *hs_la_sparse_values(hs_la_sparse *S);
const int *hs_la_sparse_slots(const hs_la_sparse *S);
int hs_la_sparse_factor(hs_la_sparse *S);
void hs_la_sparse_solve(hs_la_sparse *S, double *x);
/* A symmetric positive definite sparse matrix of fixed pattern (spd.c,
 * CHOLMOD): C = G_q W G_q^T for a diagonal W, from np positions of its
 * lower triangle (pi[z] >= pj[z]; repeats add up) and the whole diagonal.
 * An evaluation takes hs_la_spd_values (zeroed), adds position z at
 * hs_la_spd_slots(S)[z] and sets (i, i) at hs_la_spd_diag(S)[i], then hs_la_spd_factor (0; -1 not
 * positive definite; -2 out of memory) and hs_la_spd_solve (x <- C^-1 x;
 * 0, or -1 out of memory).  hs_la_spd_rcond: the squared ratio of the
 * factor's smallest to largest diagonal (estimate 0), or the reciprocal of
 * Hager's 1-norm condition estimate (1; about ten solves).  NULL from
 * hs_la_spd_new when out of memory. */
typedef struct hs_la_spd hs_la_spd;
/* CHOLMOD could be opened (it is loaded at the first call, not linked):
 * 1, or 0 (the callers keep their dense or band path then). */
int hs_la_spd_available(void);
hs_la_spd *hs_la_spd_new(size_t N, size_t np, const uint32_t *pi, const uint32_t *pj);
const int *hs_la_spd_slots(const hs_la_spd *S);
const int *hs_la_spd_diag(const hs_la_spd *S);
void hs_la_spd_free(hs_la_spd *S);                  /* NULL is fine */
double *hs_la_spd_values(hs_la_spd *S);
int hs_la_spd_factor(hs_la_spd *S);
int hs_la_spd_solve(hs_la_spd *S, double *x);
double hs_la_spd_rcond(hs_la_spd *S, int estimate);
int hs_la_spd_finite(const hs_la_spd *S);

#endif
