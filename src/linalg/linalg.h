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
 * reaches GSL runs between hs_la_quiet() (handler off, the caller's
 * returned) and hs_la_restore() (the caller's put back), and reads GSL's
 * status codes.  Nested entry points nest. */
typedef gsl_error_handler_t *hs_la_handler;
static inline hs_la_handler hs_la_quiet(void) { return gsl_set_error_handler_off(); }
static inline void hs_la_restore(hs_la_handler h) { gsl_set_error_handler(h); }

/* Cholesky factorization in place of a band matrix (bandwidth B->size2 - 1);
 * also stores the 1-norm of A where GSL keeps it (the unused last slot of
 * the last row) for gsl_linalg_cholesky_band_rcond. */
int hs_la_band_cholesky(gsl_matrix *B);
/* x <- A^-1 x with the factor of hs_la_band_cholesky. */
void hs_la_band_svx(const gsl_matrix *L, double *x);

/* Dense Cholesky, L in the lower triangle (as gsl_linalg_cholesky_decomp1
 * leaves it; the upper triangle is not touched). */
int hs_la_small_cholesky(gsl_matrix *C);
/* x <- (L L^T)^-1 x with L in the lower triangle of C. */
void hs_la_small_svx(const gsl_matrix *C, double *x);

#endif
