/* Redundant constraints in the analysis (internal.h): the rank of G_q as
 * a run decides it, and Newton's step on the equilibrium conditions with
 * the constraints reduced to that rank.
 *
 * With D the row scales of G_q (rows to unit length) and the SVD
 * D G_q = U diag(s) V^T, the r constraints kept are U_r^T D G = 0, whose
 * Jacobian s_r V_r^T has full rank r; their multipliers mu give
 * lambda = D U_r mu (G_q^T lambda = V_r s_r mu).  Off the constraint
 * manifold a redundant row is independent to first order in the distance
 * (x^2 + y^2 - r^2 beside x - r cos th, y - r sin th), and the full
 * system's multipliers grow like one over that distance; the reduced one
 * stays as well conditioned as the model without the redundant row. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>

#include "../dynamics/dynamics.h"
#include "../linalg/linalg.h"

#define PROJECT_MAXIT 50
#define PROJECT_TOL 1e-12   /* max_j |G_j| / |grad G_j|, of max(1, |q|) */

/* The SVD of D G_q: Kk (k x m) the constraint-space vectors, Nn (n x m)
 * the coordinate-space ones, s (m) descending, d (k) the row scales,
 * m = min(n, k).  0, or -1 (out of memory, SVD failed). */
typedef struct svd {
    size_t n, k, m;
    gsl_matrix *Kk, *Nn, *A, *V;
    gsl_vector *s, *work;
    double *d;
} svd;

static void svd_free(svd *v)
{
    gsl_matrix_free(v->A);
    gsl_matrix_free(v->V);
    gsl_vector_free(v->s);
    gsl_vector_free(v->work);
    free(v->d);
}

static int svd_of(svd *v, const gsl_matrix *Gq)
{
    size_t k = Gq->size1, n = Gq->size2, m = n < k ? n : k;
    memset(v, 0, sizeof *v);
    v->n = n;
    v->k = k;
    v->m = m;
    v->d = malloc(k * sizeof *v->d);
    v->A = hs_la_matrix_alloc(n >= k ? n : k, m);
    v->V = hs_la_matrix_alloc(m, m);
    v->s = hs_la_vector_alloc(m);
    v->work = hs_la_vector_alloc(m);
    if (!v->d || !v->A || !v->V || !v->s || !v->work)
        return -1;
    for (size_t j = 0; j < k; j++) {
        gsl_vector_const_view row = hs_la_row_const(Gq, j);
        double nr = gsl_blas_dnrm2(&row.vector);
        v->d[j] = nr > 0 ? 1 / nr : 1;
    }
    /* n >= k: A = (D G_q)^T = U s V^T, so Nn = U, Kk = V; else A = D G_q */
    for (size_t j = 0; j < k; j++)
        for (size_t c = 0; c < n; c++)
            gsl_matrix_set(v->A, n >= k ? c : j, n >= k ? j : c,
                           v->d[j] * gsl_matrix_get(Gq, j, c));
    if (hs_la_sv_decomp(v->A, v->V, v->s, v->work))
        return -1;
    v->Nn = n >= k ? v->A : v->V;
    v->Kk = n >= k ? v->V : v->A;
    return 0;
}

size_t hs_ak_rank(const gsl_matrix *Gq)
{
    size_t k = Gq->size1, r = k;
    svd v;
    if (k && svd_of(&v, Gq) == 0) {
        double s0 = gsl_vector_get(v.s, 0);
        r = 0;
        for (size_t i = 0; i < v.m; i++)
            r += s0 > 0 && gsl_vector_get(v.s, i) > HS_SV_RTOL * s0;
    }
    if (k)
        svd_free(&v);
    return r;
}

int hs_ak_reduced_step(const gsl_matrix *Gq, const gsl_matrix *S, const double *Q,
                       const double *G, size_t r, double *dq, double *lambda)
{
    size_t k = Gq->size1, n = Gq->size2, N = n + r;
    svd v;
    gsl_matrix *J = hs_la_matrix_alloc(N, N);
    gsl_vector *x = hs_la_vector_alloc(N), *rs = hs_la_vector_alloc(N), *cs = hs_la_vector_alloc(N);
    gsl_permutation *p = hs_la_permutation_alloc(N);
    int rc = -1;
    if (svd_of(&v, Gq) || !J || !x || !rs || !cs || !p || r > v.m)
        goto done;
    /* [ S  Gb^T ] [dq]    [ Q  ]
     * [ Gb  0   ] [mu] = -[ Gr ],  Gb = s_r Nn_r^T, Gr = Kk_r^T D G */
    gsl_matrix_set_zero(J);
    for (size_t i = 0; i < n; i++) {
        for (size_t c = 0; c < n; c++)
            gsl_matrix_set(J, i, c, gsl_matrix_get(S, i, c));
        gsl_vector_set(x, i, -Q[i]);
    }
    for (size_t a = 0; a < r; a++) {
        double sa = gsl_vector_get(v.s, a), g = 0;
        for (size_t c = 0; c < n; c++) {
            double e = sa * gsl_matrix_get(v.Nn, c, a);
            gsl_matrix_set(J, n + a, c, e);
            gsl_matrix_set(J, c, n + a, e);
        }
        for (size_t j = 0; j < k; j++)
            g += gsl_matrix_get(v.Kk, j, a) * v.d[j] * G[j];
        gsl_vector_set(x, n + a, -g);
    }
    /* equilibrated (rows, then columns to unit maximum) LU */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < N; i++) {
            double mx = 0;
            for (size_t j = 0; j < N; j++)
                mx = fmax(mx, fabs(pass ? gsl_matrix_get(J, j, i) : gsl_matrix_get(J, i, j)));
            double sc = mx > 0 ? 1 / mx : 1;
            gsl_vector_set(pass ? cs : rs, i, sc);
            for (size_t j = 0; j < N; j++)
                *(pass ? gsl_matrix_ptr(J, j, i) : gsl_matrix_ptr(J, i, j)) *= sc;
        }
    gsl_vector_mul(x, rs);
    int signum;
    gsl_linalg_LU_decomp(J, p, &signum);
    double umin = INFINITY, umax = 0;
    for (size_t i = 0; i < N; i++) {
        umin = fmin(umin, fabs(gsl_matrix_get(J, i, i)));
        umax = fmax(umax, fabs(gsl_matrix_get(J, i, i)));
    }
    if (!(umax > 0 && umin > HS_AK_PIVOT_TOL * umax))
        goto done;
    hs_la_lu_svx(J, p, x);
    gsl_vector_mul(x, cs);
    for (size_t i = 0; i < n; i++)
        dq[i] = gsl_vector_get(x, i);
    for (size_t j = 0; j < k; j++) {          /* lambda = D Kk_r mu */
        double l = 0;
        for (size_t a = 0; a < r; a++)
            l += gsl_matrix_get(v.Kk, j, a) * gsl_vector_get(x, n + a);
        lambda[j] = v.d[j] * l;
    }
    rc = 0;
    for (size_t i = 0; i < n + k && rc == 0; i++)
        rc = isfinite(i < n ? dq[i] : lambda[i - n]) ? 0 : -1;
done:
    svd_free(&v);
    gsl_matrix_free(J);
    gsl_vector_free(x);
    gsl_vector_free(rs);
    gsl_vector_free(cs);
    gsl_permutation_free(p);
    return rc;
}

/* max_j |G_j| / |row j of G_q| at the last hs_ak_eval_eq (G_q in Gq). */
static double scaled_G(const hs_an *a, const gsl_matrix *Gq)
{
    double mx = 0;
    for (size_t j = 0; j < a->k; j++) {
        gsl_vector_const_view row = hs_la_row_const(Gq, j);
        double nr = gsl_blas_dnrm2(&row.vector);
        mx = fmax(mx, fabs(a->out_eq[a->off_G + j]) / (nr > 0 ? nr : 1));
    }
    return mx;
}

int hs_ak_project(hs_an *a, double *q, size_t *rank)
{
    size_t n = a->n, k = a->k;
    gsl_matrix *Gq = hs_la_matrix_alloc(k, n), *I = hs_la_matrix_alloc(n, n);
    double *dq = calloc(n, sizeof *dq), *lam = calloc(k, sizeof *lam);
    double *zero = calloc(n, sizeof *zero), *qt = calloc(n, sizeof *qt);
    int rc = -1;
    if (!Gq || !I || !dq || !lam || !zero || !qt || !hs_ak_eval_eq(a, q))
        goto done;
    gsl_matrix_set_identity(I);
    hs_ak_fill_Gq(a, Gq);
    double res = scaled_G(a, Gq);
    for (int it = 0; it < PROJECT_MAXIT && rc; it++) {
        double size = 0;
        for (size_t i = 0; i < n; i++)
            size = fmax(size, fabs(q[i]));
        if (res <= PROJECT_TOL * fmax(1, size)) {
            rc = 0;
            break;
        }
        /* the least-norm Gauss-Newton step, G_q reduced to its rank */
        if (hs_ak_reduced_step(Gq, I, zero, a->out_eq + a->off_G, hs_ak_rank(Gq), dq, lam))
            break;
        double alpha = 1, rt = INFINITY;
        for (; alpha >= 1.0 / 1024; alpha /= 2) {
            for (size_t i = 0; i < n; i++)
                qt[i] = q[i] + alpha * dq[i];
            if (hs_ak_eval_eq(a, qt)) {
                hs_ak_fill_Gq(a, Gq);
                if ((rt = scaled_G(a, Gq)) < res)
                    break;
            }
        }
        if (!(rt < res))
            break;
        memcpy(q, qt, n * sizeof *q);
        res = rt;
    }
    if (!rc)
        *rank = hs_ak_rank(Gq);
done:
    gsl_matrix_free(Gq);
    gsl_matrix_free(I);
    free(dq);
    free(lam);
    free(zero);
    free(qt);
    return rc;
}
