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

#include <gsl/gsl_errno.h>
#include <gsl/gsl_matrix.h>

/* GSL reports errors through a process-wide handler whose default aborts.
 * The library never relies on its caller having switched it off and never
 * leaves a caller's handler replaced: each exported entry point that
 * reaches GSL runs between hs_la_quiet() (handler off) and
 * hs_la_restore() (the caller's put back), and reads GSL's
 * status codes.  Nested entry points nest, and so do entry points running
 * at once in several threads (libholosim): a mutex guards a count of the
 * threads inside an entry point (nesting within a thread is counted per
 * thread, without the lock), the first one in saves the caller's handler
 * and switches it off, the last one out puts it back (linalg.c).  The
 * compromise left: GSL's handler is one per process, so while any entry
 * point runs in any thread it is off for every thread (a host thread's
 * own GSL calls in that window return their status without calling its
 * handler), and a handler the host installs in that window is replaced by
 * the saved one when the last entry point leaves.  hs_la_restore's
 * argument is the value hs_la_quiet returned (NULL, kept for the callers:
 * the counts decide). */
typedef gsl_error_handler_t *hs_la_handler;
hs_la_handler hs_la_quiet(void);
void hs_la_restore(hs_la_handler h);

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

#endif
