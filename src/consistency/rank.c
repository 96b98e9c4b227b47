/* Rank diagnosis of G_q (consistency.h: hs_cons_rank). */
#include "consistency.h"
#include "../linalg/linalg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_linalg.h>
#include <gsl/gsl_permutation.h>

/* Full rank, certified cheaply: C = G_q M^-1 G_q^T factors with a
 * reciprocal condition above HS_RANK_RCOND, through the dynamics' own
 * factorization (band or small dense: O(k b^2), not the O(n k^2) of a
 * dense QR).  Any failure (C singular, a force not finite at rest) only
 * means "not certified": the QR decides then. */
static int full_rank_certified(const hs_model *m, hs_work *w, double t, const double *q)
{
    double *v0 = calloc(m->n, sizeof *v0);
    if (!v0)
        return 0;
    long nrhs = hs_work_get_stats(w).nrhs;  /* not a right-hand side of the run */
    int full = hs_work_full_rcond(w, 1);
    int ok = hs_dyn_accel(m, w, t, q, v0, NULL, NULL) == 0 &&
             hs_work_get_stats(w).rcond >= HS_RANK_RCOND;
    hs_work_full_rcond(w, full);
    hs_work_set_nrhs(w, nrhs);
    hs_error_init(hs_work_err(w));
    free(v0);
    return ok;
}

static size_t rank_of(const hs_model *m, hs_work *w, double t, const double *q,
                      char *msg, size_t cap, size_t *first_dependent)
{
    size_t n = m->n, k = m->k;
    if (cap)
        msg[0] = '\0';
    if (!k)
        return 0;
    if (full_rank_certified(m, w, t, q))
        return k;
    if ((double)k * (double)n > HS_DENSE_MAX) {
        if (cap)      /* a sparse model (loader.h): C is singular, the run says so */
            snprintf(msg, cap, "C = G_q M^-1 G_q^T is singular or ill-conditioned, and a "
                     "%zu x %zu G_q is too large for the dense QR", k, n);
        return k;
    }
    if (hs_dyn_constraints(m, w, t, q, NULL, NULL))
        return k;     /* a domain error here is reported by the caller later */
    gsl_matrix *A = hs_la_matrix_alloc(n, k);
    gsl_vector *tau = hs_la_vector_alloc(n < k ? n : k);
    gsl_permutation *perm = hs_la_permutation_alloc(k);
    gsl_vector *norm = hs_la_vector_alloc(k);
    size_t rank = k;
    if (!A || !tau || !perm || !norm)
        goto out;
    for (size_t i = 0; i < k; i++)
        for (size_t c = 0; c < n; c++)
            gsl_matrix_set(A, c, i, hs_work_Gq_dense(w)[i * n + c]);   /* A = G_q^T */
    int signum;
    gsl_linalg_QRPT_decomp(A, tau, perm, &signum, norm);
    size_t dmax = n < k ? n : k;
    double r0 = fabs(gsl_matrix_get(A, 0, 0));
    rank = 0;
    for (size_t i = 0; i < dmax; i++)
        if (fabs(gsl_matrix_get(A, i, i)) > HS_RANK_RTOL * (r0 > 0 ? r0 : 1) && r0 > 0)
            rank++;
    if (rank < k && first_dependent)
        *first_dependent = gsl_permutation_get(perm, rank);
    if (rank == k || !cap)
        goto out;
    /* each dependent column r: R11 c = R[0:rank, r]; c_i != 0 names a partner */
    size_t len = 0;
    for (size_t r = rank; r < k && len + 1 < cap; r++) {
        size_t jr = gsl_permutation_get(perm, r);
        len += (size_t)snprintf(msg + len, cap - len, "%s'%s'", len ? "; " : "", m->cname[jr]);
        double c[64];
        size_t nr = rank < 64 ? rank : 64;
        for (size_t i = nr; i-- > 0;) {
            double s = r < n ? gsl_matrix_get(A, i, r) : 0;
            for (size_t j = i + 1; j < nr; j++)
                s -= gsl_matrix_get(A, i, j) * c[j];
            c[i] = s / gsl_matrix_get(A, i, i);
        }
        int any = 0;
        for (size_t i = 0; i < nr && len + 1 < cap; i++)
            if (fabs(c[i]) > 1e-8) {
                len += (size_t)snprintf(msg + len, cap - len, "%s'%s'", any ? ", " : " depends on ",
                                        m->cname[gsl_permutation_get(perm, i)]);
                any = 1;
            }
        if (!any && len + 1 < cap)
            len += (size_t)snprintf(msg + len, cap - len, " has a zero gradient here");
    }
out:
    if (A) gsl_matrix_free(A);
    if (tau) gsl_vector_free(tau);
    if (perm) gsl_permutation_free(perm);
    if (norm) gsl_vector_free(norm);
    return rank;
}

size_t hs_cons_rank(const hs_model *m, hs_work *w, double t, const double *q,
                    char *msg, size_t cap, size_t *first_dependent)
{
    size_t r = rank_of(m, w, t, q, msg, cap, first_dependent);
    return r;
}
