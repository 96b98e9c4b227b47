/* The projection's rank-revealing factorization (internal.h), where the
 * Cholesky factor of A = G_q W G_q^T fails: dependent constraints, a
 * singular position, a singular mass. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

/* The rank-revealing factorization (where build_A fails): with M_r the
 * free block of M (or of M + alpha G_q^T G_q for a singular M) = L L^T and
 * B^T = L^-1 G_q^T over the free coordinates, the SVD of B^T; the step
 * M_r^-1 G_q^T (G_q M_r^-1 G_q^T)^+ rhs is then the least-squares step of
 * least M_r-norm (singular values below HS_SV_RTOL of the largest
 * dropped).  0, or -1 (M_r not positive definite, memory). */
int hs_proj_robust_build(hs_proj *p, hs_work *w)
{
    const hs_model *m = p->m;
    size_t n = m->n, k = m->k;
    const double *Gz = hs_work_con_Gq(m, w);
    if (!p->rBt) {
        size_t mn = n < k ? n : k;
        if ((double)k * (double)n > HS_DENSE_MAX || (double)n * (double)n > HS_DENSE_MAX)
            return -1;            /* a sparse model (dynamics.h): no dense fallback */
        p->rL = hs_la_matrix_alloc(n, n);
        p->rA = hs_la_matrix_alloc(n > k ? n : k, mn);
        p->rV = hs_la_matrix_alloc(mn, mn);
        p->rS = hs_la_vector_alloc(mn);
        p->rBt = calloc(k * n, sizeof *p->rBt);
        p->rmu = calloc(k, sizeof *p->rmu);
        p->ry = calloc(n, sizeof *p->ry);
        if (!p->rL || !p->rA || !p->rV || !p->rS || !p->rBt || !p->rmu || !p->ry) {
            p->nomem = 1;
            return -1;
        }
    }
    size_t nf = 0;
    for (size_t c = 0; c < n; c++)
        if (!p->lock || !p->lock[c])
            p->free_idx[nf++] = c;
    p->nf = nf;
    if (!nf)
        return -1;
    gsl_matrix_view Lv = hs_la_submatrix(p->rL, 0, 0, nf, nf);
    gsl_matrix *L = &Lv.matrix;
    for (size_t a = 0; a < nf; a++)
        for (size_t b = 0; b < nf; b++) {
            size_t ca = p->free_idx[a], cb = p->free_idx[b];
            gsl_matrix_set(L, a, b, p->diagW ? (a == b ? p->Md[ca] : 0)
                                              : p->Mfull[ca * n + cb]);
        }
    /* dense G_q over the free columns into rBt (k x nf), fixed rows 0 */
    double *G = p->rBt;
    memset(G, 0, k * nf * sizeof *G);
    for (size_t i = 0; i < k; i++) {
        if ((p->fixed[i] = hs_proj_row_fixed(p, m, w, i)))
            continue;
        for (int z = m->gq_start[i]; z < m->gq_start[i + 1]; z++)
            for (size_t a = 0; a < nf; a++)
                if (p->free_idx[a] == (size_t)m->gq_col[z])
                    G[i * nf + a] += Gz[z];
    }
    if (p->msing) {
        double mmax = 0, gmax = 0;
        for (size_t a = 0; a < nf; a++) {
            double cs = 0;
            for (size_t i = 0; i < k; i++)
                cs += G[i * nf + a] * G[i * nf + a];
            gmax = fmax(gmax, cs);
            mmax = fmax(mmax, gsl_matrix_get(L, a, a));
        }
        double alpha = gmax > 0 ? (mmax > 0 ? mmax : 1.0) / gmax : 1.0;
        for (size_t i = 0; i < k; i++)
            for (size_t a = 0; a < nf; a++)
                if (G[i * nf + a] != 0)
                    for (size_t b = 0; b < nf; b++)
                        *gsl_matrix_ptr(L, a, b) += alpha * G[i * nf + a] * G[i * nf + b];
    }
    if (hs_la_cholesky(L) != GSL_SUCCESS)
        return -1;
    for (size_t i = 0; i < k; i++) {
        gsl_vector_view x = hs_la_vview(G + i * nf, nf);
        gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, L, &x.vector);
    }
    size_t mn = nf < k ? nf : k;
    gsl_matrix_view A = hs_la_submatrix(p->rA, 0, 0, nf >= k ? nf : k, mn);
    for (size_t i = 0; i < k; i++)
        for (size_t a = 0; a < nf; a++)
            if (nf >= k)
                gsl_matrix_set(&A.matrix, a, i, G[i * nf + a]);
            else
                gsl_matrix_set(&A.matrix, i, a, G[i * nf + a]);
    gsl_matrix_view V = hs_la_submatrix(p->rV, 0, 0, mn, mn);
    gsl_vector_view S = hs_la_subvector(p->rS, 0, mn);
    if (hs_la_sv_jacobi(&A.matrix, &V.matrix, &S.vector) != GSL_SUCCESS)
        return -1;
    p->robust = 1;
    p->a_valid = 1;
    return 0;
}

void hs_proj_robust_step(hs_proj *p, const double *rhs, double *out)
{
    const hs_model *m = p->m;
    size_t n = m->n, k = m->k, nf = p->nf, mn = nf < k ? nf : k;
    int tall = nf >= k;
    const double *S = p->rS->data;
    double smax = 0;
    for (size_t j = 0; j < mn; j++)
        smax = fmax(smax, S[j]);
    memset(p->rmu, 0, k * sizeof *p->rmu);
    for (size_t j = 0; j < mn; j++) {
        if (!(S[j] > HS_SV_RTOL * smax))
            continue;
        double d = 0;
        for (size_t i = 0; i < k; i++) {
            double wij = tall ? gsl_matrix_get(p->rV, i, j) : gsl_matrix_get(p->rA, i, j);
            d += wij * (p->fixed[i] ? 0 : rhs[i]);
        }
        d /= S[j] * S[j];
        for (size_t i = 0; i < k; i++)
            p->rmu[i] += (tall ? gsl_matrix_get(p->rV, i, j) : gsl_matrix_get(p->rA, i, j)) * d;
    }
    /* y = B^T mu, out_free = L^-T y */
    memset(p->ry, 0, nf * sizeof *p->ry);
    for (size_t i = 0; i < k; i++)
        for (size_t a = 0; a < nf; a++)
            p->ry[a] += p->rBt[i * nf + a] * p->rmu[i];
    gsl_matrix_view Lv = hs_la_submatrix(p->rL, 0, 0, nf, nf);
    gsl_vector_view y = hs_la_vview(p->ry, nf);
    gsl_blas_dtrsv(CblasLower, CblasTrans, CblasNonUnit, &Lv.matrix, &y.vector);
    memset(out, 0, n * sizeof *out);
    for (size_t a = 0; a < nf; a++)
        out[p->free_idx[a]] = p->ry[a];
}
