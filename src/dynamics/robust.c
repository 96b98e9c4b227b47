/* The rank-revealing solve of the Lagrange-multiplier equations
 * (dynamics.h): redundant constraints, singular positions, singular mass
 * matrices.  Only where the Cholesky paths of dynamics.c cannot serve. */
#include "internal.h"
#include "../linalg/linalg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

/* Today's stop (strict mode, or constraints that cannot be met). */
int hs_dyn_singular_C(hs_work *w, double t, int exact, double rcond)
{
    hs_error_init(&w->err);
    w->fail_kind = HS_FAIL_SINGULAR_C;
    if (exact)
        return hs_error_set(&w->err, HS_EXIT_NUMERIC, "constraint matrix C = G_q M^-1 "
                            "G_q^T is singular at t=%.17g (G_q lost rank)", t);
    if (!(rcond < HS_RCOND_MIN))          /* never "2.5e-07 < 1e-13" */
        return hs_error_set(&w->err, HS_EXIT_NUMERIC, "constraint matrix C = G_q M^-1 "
                            "G_q^T is nearly singular at t=%.17g (reciprocal condition %.3g)",
                            t, rcond);
    return hs_error_set(&w->err, HS_EXIT_NUMERIC, "constraint matrix C = G_q M^-1 G_q^T "
                        "is ill-conditioned at t=%.17g (reciprocal condition %.3g < "
                        "%g: G_q is losing rank)", t, rcond, HS_RCOND_MIN);
}

int hs_dyn_robust_alloc(const hs_model *m, hs_work *w)
{
    size_t n = m->n, k = m->k, p = n < k ? n : k;
    if (w->rL)
        return 0;
    if ((double)k * (double)n > HS_DENSE_MAX || (double)n * (double)n > HS_DENSE_MAX) {
        hs_error_init(&w->err);         /* a sparse model (loader.h): no dense fallback */
        w->fail_kind = HS_FAIL_NONFINITE;
        return hs_error_set(&w->err, HS_EXIT_NUMERIC, "the constraint matrix C = G_q M^-1 "
                            "G_q^T is singular or ill-conditioned, and the rank-revealing "
                            "solve of a %zu x %zu constraint system is too large (its dense "
                            "arrays: k*n and n*n at most %.0f)", k, n, HS_DENSE_MAX);
    }
    w->rL = hs_la_matrix_alloc(n, n);
    w->rA = hs_la_matrix_alloc(n >= k ? n : k, p);
    w->rV = hs_la_matrix_alloc(p, p);
    w->rS = hs_la_vector_alloc(p);
    w->rwork = hs_la_vector_alloc(p);
    w->rH = calloc(p * p, sizeof *w->rH);
    w->rc = calloc(p, sizeof *w->rc);
    w->rD = calloc(k, sizeof *w->rD);
    w->rG = calloc(k * n, sizeof *w->rG);
    w->rBt = calloc(k * n, sizeof *w->rBt);
    w->rg = calloc(k, sizeof *w->rg);
    w->rr = calloc(k, sizeof *w->rr);
    w->rb = calloc(n, sizeof *w->rb);
    if (w->rL && w->rA && w->rV && w->rS && w->rwork && w->rH && w->rc && w->rD && w->rG && w->rBt && w->rg && w->rr && w->rb)
        return 0;
    hs_error_init(&w->err);
    w->fail_kind = HS_FAIL_NONFINITE;
    return hs_error_set(&w->err, HS_EXIT_NUMERIC, "out of memory (the rank-revealing solve "
                        "of a %zu x %zu constraint system)", k, n);
}

/* [M G_q^T; G_q 0] singular: name the coordinates with neither mass nor a
 * constraint (a zero diagonal entry of M, a zero column of G_q), else the
 * massless ones the constraints do not fix. */
int hs_dyn_saddle_singular(const hs_model *m, hs_work *w, double t, const double *Md)
{
    size_t n = m->n, k = m->k;
    char list[400];
    size_t len = 0, cnt = 0;
    list[0] = '\0';
    for (int pass = 0; pass < 2 && !cnt; pass++)
        for (size_t c = 0; c < n && len + 1 < sizeof list; c++) {
            if (Md[c] != 0)
                continue;
            int touched = 0;
            for (size_t i = 0; i < k && !touched; i++)
                touched = !hs_dyn_is_released_(w, i) && w->rG[i * n + c] != 0;
            if (pass == 0 && touched)
                continue;
            len += (size_t)snprintf(list + len, sizeof list - len, "%s'%s'", cnt ? ", " : "",
                                    m->qname[c]);
            cnt++;
        }
    const char *what = m->form == HS_FORM_CARTESIAN ? "mass matrix" : "metric d2T/dv2";
    int none = 1;
    for (size_t c = 0; c < n && none; c++)
        for (size_t i = 0; i < k && none; i++)
            none = !(Md[c] == 0 && w->rG[i * n + c] != 0 && !hs_dyn_is_released_(w, i));
    hs_error_init(&w->err);
    w->fail_kind = HS_FAIL_MASS;
    if (!cnt)
        return hs_error_set(&w->err, HS_EXIT_NUMERIC, "%s is not positive definite at "
                            "t=%.17g, and not on the tangent space of the constraints "
                            "either (the saddle-point matrix [M G_q^T; G_q 0] is singular)",
                            what, t);
    return hs_error_set(&w->err, HS_EXIT_NUMERIC, "%s is not positive definite at t=%.17g "
                        "and the saddle-point matrix [M G_q^T; G_q 0] is singular there: "
                        "%s %s %s", what, t, list,
                        none || cnt == 1 ? (cnt == 1 ? "carries" : "carry") : "carry",
                        none ? "neither mass nor a constraint" :
                        "no mass and the constraints do not fix them");
}

/* Accelerations and minimum-norm multipliers through an SVD (dynamics.h):
 * with M_r = L L^T (M, or M + alpha G_q^T G_q and Q_r = Q - alpha G_q^T g
 * for a singular M: the same equations on G_q a = -g), B^T = L^-1 G_q^T,
 * b = L^-1 Q_r, r = g + B b:
 *     Lambda = -sum_{s_j > tol} w_j (w_j . r) / s_j^2   (C^+ = (B B^T)^+)
 *     a      = L^-T (b + B^T Lambda)
 * g = gamma (+ Baumgarte terms), rows of released constraints 0. */
/* M_r = L L^T, b = L^-1 Q_r, the rows of B (L^-1 G_q,i^T) and r. */
static int factor_system(const hs_model *m, hs_work *w, double t, const double *dyn,
                         int mass_singular)
{
    size_t n = m->n, k = m->k;
    const double *Gq = dyn + m->off_Gq, *g = w->rg;
    double *G = w->rG, *b = w->rb, *r = w->rr, *Bt = w->rBt;
    memset(G, 0, k * n * sizeof *G);
    for (size_t i = 0; i < k; i++)
        if (!hs_dyn_is_released_(w, i))
            for (int z = m->gq_start[i]; z < m->gq_start[i + 1]; z++)
                G[i * n + (size_t)m->gq_col[z]] = Gq[z];
    gsl_matrix *L = w->rL;
    double *Ld = L->data;
    size_t tda = L->tda;
    gsl_matrix_set_zero(L);
    if (m->mass_kind == HS_MASS_FULL) {
        size_t z = m->off_M;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j <= i; j++, z++)
                Ld[i * tda + j] = Ld[j * tda + i] = dyn[z];
    } else {
        for (size_t i = 0; i < n; i++)
            Ld[i * tda + i] = m->mass_kind == HS_MASS_CONST_DIAG ? m->Mconst[i]
                                                                 : dyn[m->off_M + i];
    }
    double *Md = w->tmpn->data;                       /* diagonal of M (messages) */
    for (size_t i = 0; i < n; i++)
        Md[i] = Ld[i * tda + i];
    memcpy(b, dyn + m->off_Q, n * sizeof *b);
    if (mass_singular) {
        /* alpha G_q^T G_q as large as M: M_r's condition stays M's */
        double mmax = 0, gmax = 0;
        for (size_t c = 0; c < n; c++) {
            double col = 0;
            for (size_t i = 0; i < k; i++)
                col += G[i * n + c] * G[i * n + c];
            gmax = fmax(gmax, col);
            mmax = fmax(mmax, Md[c]);
        }
        double alpha = gmax > 0 ? (mmax > 0 ? mmax : 1.0) / gmax : 1.0;
        for (size_t i = 0; i < k; i++)
            for (int z1 = m->gq_start[i]; z1 < m->gq_start[i + 1]; z1++) {
                size_t c1 = (size_t)m->gq_col[z1];
                double a1 = alpha * G[i * n + c1];
                if (a1 == 0)
                    continue;
                b[c1] -= a1 * g[i];
                for (int z2 = m->gq_start[i]; z2 < m->gq_start[i + 1]; z2++) {
                    size_t c2 = (size_t)m->gq_col[z2];
                    Ld[c1 * tda + c2] += a1 * G[i * n + c2];
                }
            }
    }
    if (hs_la_cholesky(L) != GSL_SUCCESS)
        return hs_dyn_saddle_singular(m, w, t, Md);
    gsl_vector_view bv = hs_la_vview(b, n);
    gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, L, &bv.vector);   /* b = L^-1 Q_r */
    for (size_t i = 0; i < k; i++) {
        double *x = Bt + i * n;
        memcpy(x, G + i * n, n * sizeof *x);
        gsl_vector_view xv = hs_la_vview(x, n);
        gsl_blas_dtrsv(CblasLower, CblasNoTrans, CblasNonUnit, L, &xv.vector);
        double s = g[i];
        for (size_t c = 0; c < n; c++)
            s += x[c] * b[c];
        r[i] = s;                                     /* r = g + G M_r^-1 Q_r */
    }
    return 0;
}

/* The row-scaled SVD and the least-norm Lambda; the numerical rank and the
 * scaled reciprocal condition beyond the start's rank into *rank, *rc. */
static int minnorm(const hs_model *m, hs_work *w, double t, size_t *rank_out, double *rc_out)
{
    size_t n = m->n, k = m->k, p = n < k ? n : k;
    const double *r = w->rr, *Bt = w->rBt;
    /* rows scaled to unit length, Bn = D^-1 B (D_i = |B_i|): its singular
     * values measure how nearly dependent the constraints are, whatever
     * their units.  SVD of the taller of Bn^T (n x k) and Bn (k x n); W
     * (k x p): the left singular vectors of Bn, Bn Bn^T = W S^2 W^T */
    double *D = w->rD;
    for (size_t i = 0; i < k; i++) {
        double d = 0;
        for (size_t c = 0; c < n; c++)
            d += Bt[i * n + c] * Bt[i * n + c];
        D[i] = d > 0 ? sqrt(d) : 1;
    }
    gsl_matrix *A = w->rA;
    for (size_t i = 0; i < k; i++)
        for (size_t c = 0; c < n; c++)
            if (n >= k)
                A->data[c * A->tda + i] = Bt[i * n + c] / D[i];
            else
                A->data[i * A->tda + c] = Bt[i * n + c] / D[i];
    if (hs_la_sv_decomp(A, w->rV, w->rS, w->rwork) != GSL_SUCCESS) {
        hs_error_init(&w->err);
        w->fail_kind = HS_FAIL_NONFINITE;
        return hs_error_set(&w->err, HS_EXIT_NUMERIC, "the singular value decomposition of "
                            "the constraint system failed at t=%.17g", t);
    }
    const gsl_matrix *W = n >= k ? w->rV : A;
    const double *S = w->rS->data;
    double smax = S[0];                               /* sorted, decreasing */
    double tol = HS_SV_DYN_RTOL * smax;
    size_t rank = 0;
    while (rank < p && S[rank] > tol)
        rank++;
    w->rank = rank;
    /* the least Euclidean-norm Lambda lies in range(B) = D span(W_kept):
     * Lambda = D W_r c with (W_r^T D^2 W_r) c = -S_r^-2 W_r^T D^-1 r */
    double *H = w->rH, *cc = w->rc;
    for (size_t j = 0; j < rank; j++) {
        double d = 0;
        for (size_t i = 0; i < k; i++)
            d += W->data[i * W->tda + j] * r[i] / D[i];
        cc[j] = -d / (S[j] * S[j]);
        for (size_t l = 0; l <= j; l++) {
            double h = 0;
            for (size_t i = 0; i < k; i++)
                h += W->data[i * W->tda + j] * D[i] * D[i] * W->data[i * W->tda + l];
            H[j * rank + l] = H[l * rank + j] = h;
        }
    }
    memset(w->Lambda, 0, k * sizeof *w->Lambda);
    if (rank) {
        gsl_matrix_view Hv = hs_la_mview(H, rank, rank);
        gsl_vector_view cv = hs_la_vview(cc, rank);
        if (hs_la_cholesky(&Hv.matrix) != GSL_SUCCESS ||
            gsl_linalg_cholesky_svx(&Hv.matrix, &cv.vector) != GSL_SUCCESS)
            return hs_dyn_singular_C(w, t, 1, 0);
        for (size_t i = 0; i < k; i++) {
            double x = 0;
            for (size_t j = 0; j < rank; j++)
                x += W->data[i * W->tda + j] * cc[j];
            w->Lambda[i] = D[i] * x;
        }
    }
    /* the condition beyond the redundancy of the start: the rank0-th
     * largest scaled singular value against the largest, squared (the
     * reciprocal condition of the scaled C) */
    double rc = 0;
    size_t r0 = w->rank0 < p ? w->rank0 : p;
    if (r0 > 0 && smax > 0) {
        double sr = S[r0 - 1] / smax;
        rc = sr * sr;
    }
    w->rcond = w->rank0 == k ? rc : 0;
    size_t nrel = 0;
    for (size_t i = 0; i < k; i++)
        nrel += hs_dyn_is_released_(w, i);
    if (nrel == 0 && rc < HS_PIVOT_ROBUST) {
        w->nsingular++;
        w->near_singular = 1;
        w->worst_rcond = fmin(w->worst_rcond, rc);
    }
    *rank_out = rank;
    *rc_out = rc;
    if (w->strict && (rank < k - nrel || rc < HS_RCOND_MIN))
        return hs_dyn_singular_C(w, t, rank < k - nrel, rc);
    return 0;
}

/* a = L^-T (b + B^T Lambda), then: the constraints met?  G_q a + g = 0
 * within HS_LOCKUP_RTOL of its terms, else the lock-up stop. */
static int accelerations(const hs_model *m, hs_work *w, double t, const double *dyn,
                         size_t rank, double rc)
{
    size_t n = m->n, k = m->k, p = n < k ? n : k;
    const double *Gq = dyn + m->off_Gq, *g = w->rg, *Bt = w->rBt;
    double *b = w->rb;                      /* b, then the size of its terms (below) */
    const gsl_matrix *W = n >= k ? w->rV : w->rA;
    double *acc = w->a;
    for (size_t c = 0; c < n; c++)
        acc[c] = b[c];
    for (size_t c = 0; c < n; c++)
        b[c] = fabs(b[c]);
    for (size_t i = 0; i < k; i++)
        if (w->Lambda[i] != 0)
            for (size_t c = 0; c < n; c++) {
                acc[c] += Bt[i * n + c] * w->Lambda[i];
                b[c] += fabs(Bt[i * n + c] * w->Lambda[i]);
            }
    gsl_vector_view av = hs_la_vview(acc, n);
    gsl_blas_dtrsv(CblasLower, CblasTrans, CblasNonUnit, w->rL, &av.vector);
    /* the residual's scale: the terms before they cancel (the forces and
     * the reactions that balance them, |b| + |B^T Lambda| through L's
     * diagonal), not what is left of them: a body at rest between two
     * constraints 1e-3 rad apart has accelerations of 1e-11 from forces
     * of 10, and their round-off was read as a lock-up */
    double emax = 0, scale = 0;
    for (size_t i = 0; i < k; i++) {
        if (hs_dyn_is_released_(w, i))
            continue;
        double e = g[i], sc = fabs(g[i]);
        for (int z = m->gq_start[i]; z < m->gq_start[i + 1]; z++) {
            size_t c = (size_t)m->gq_col[z];
            double x = Gq[z] * acc[c], Lcc = fabs(w->rL->data[c * w->rL->tda + c]);
            e += x;
            sc += fmax(fabs(x), Lcc > 0 ? fabs(Gq[z]) * b[c] / Lcc : 0);
        }
        emax = fmax(emax, fabs(e));
        scale = fmax(scale, sc);
    }
    if (emax > HS_LOCKUP_RTOL * scale && emax > 0) {
        hs_dyn_singular_C(w, t, rank < k, rc);
        size_t len = strlen(w->err.msg);
        len += (size_t)snprintf(w->err.msg + len, sizeof w->err.msg - len, ", and no "
                                "acceleration meets the constraints there (max |G_q a + "
                                "gamma| = %.3g against terms of %.3g): a lock-up or a "
                                "bifurcation, the motion is not determined", emax, scale);
        /* the constraints of the directions dropped (those that lock) */
        int any = 0;
        for (size_t j = rank; j < p; j++)
            for (size_t i = 0; i < k && len + 1 < sizeof w->err.msg; i++)
                if (fabs(W->data[i * W->tda + j]) > 0.1)
                    len += (size_t)snprintf(w->err.msg + len, sizeof w->err.msg - len,
                                            "%s'%s'", any++ ? ", " : "; nearly dependent "
                                            "there: ", m->cname[i]);
        return HS_EXIT_NUMERIC;
    }
    return 0;
}

int hs_dyn_robust_solve(const hs_model *m, hs_work *w, double t, const double *dyn,
                        int mass_singular)
{
    if (hs_dyn_robust_alloc(m, w))
        return HS_EXIT_NUMERIC;
    w->nrobust++;
    w->robust = 1;
    w->augmented = mass_singular;
    size_t rank = 0;
    double rc = 0;
    if (factor_system(m, w, t, dyn, mass_singular) || minnorm(m, w, t, &rank, &rc))
        return HS_EXIT_NUMERIC;
    return accelerations(m, w, t, dyn, rank, rc);
}
