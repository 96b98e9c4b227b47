/* The saddle-point matrix of the variational equations (internal.h),
 *     K = [M  -G_q^T]
 *         [G_q   0  ]
 * at f's last evaluation, factored once per right-hand side of the ODE and
 * solved for the accelerations and multipliers, the tangent vectors'
 * directional derivatives and the sensitivities' inhomogeneous terms.
 *
 * Two ways: GSL's dense LU (partial pivoting), and from HS_FL_SPARSE_MIN
 * unknowns on the sparse LU of linalg (KLU, the pattern ordered once,
 * refactored in its pivot order, one step of refinement per solve), whose
 * cost follows the entries of M and G_q instead of (n + k)^3: a chain
 * keeps its O(n).  The dense factor is always taken where the caller
 * forms da/dx whole (accel with jac: 2n right-hand sides at once, BLAS 3
 * triangular solves on f->K). */
#include "internal.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>

#include "../linalg/linalg.h"

int hs_fl_saddle_new(hs_fl *f)
{
    size_t n = f->n, nk = n + f->k, nt = 0;
    for (size_t e = 0; e < f->bM.cnt; e++)
        nt += f->bM.r[e] == f->bM.c[e] ? 1 : 2;
    nt += 2 * f->bGq.cnt;
    int *row = malloc((nt + 1) * sizeof *row), *col = malloc((nt + 1) * sizeof *col);
    f->sp_src = malloc((nt + 1) * sizeof *f->sp_src);
    f->sp_sign = malloc((nt + 1) * sizeof *f->sp_sign);
    int rc = !row || !col || !f->sp_src || !f->sp_sign;
    size_t t = 0;
    for (size_t e = 0; !rc && e < f->bM.cnt; e++) {
        int r = f->bM.r[e], c = f->bM.c[e];
        row[t] = r, col[t] = c, f->sp_src[t] = f->bM.off + e, f->sp_sign[t++] = 1;
        if (r != c)
            row[t] = c, col[t] = r, f->sp_src[t] = f->bM.off + e, f->sp_sign[t++] = 1;
    }
    for (size_t e = 0; !rc && e < f->bGq.cnt; e++) {
        int r = (int)n + f->bGq.r[e], c = f->bGq.c[e];
        row[t] = r, col[t] = c, f->sp_src[t] = f->bGq.off + e, f->sp_sign[t++] = 1;
        row[t] = c, col[t] = r, f->sp_src[t] = f->bGq.off + e, f->sp_sign[t++] = -1;
    }
    if (!rc && !(f->sp = hs_la_sparse_new(nk, nt, row, col)))
        rc = 1;
    f->sp_nt = nt;
    free(row);
    free(col);
    return rc ? -1 : 0;
}

int hs_fl_saddle_dense(hs_fl *f)
{
    size_t n = f->n, nk = n + f->k;
    f->K = hs_la_matrix_alloc(nk, nk);
    f->perm = hs_la_permutation_alloc(nk);
    f->rhs = calloc(nk * 2 * n + 1, sizeof *f->rhs);
    f->rhsp = calloc(nk * 2 * n + 1, sizeof *f->rhsp);
    f->Aq = calloc(nk * n + 1, sizeof *f->Aq);
    f->Av = calloc(nk * n + 1, sizeof *f->Av);
    return f->K && f->perm && f->rhs && f->rhsp && f->Aq && f->Av ? 0 : -1;
}

void hs_fl_drop_dense(hs_fl *f)
{
    gsl_matrix_free(f->K);
    gsl_permutation_free(f->perm);
    free(f->rhs);
    free(f->rhsp);
    free(f->Aq);
    free(f->Av);
    f->K = NULL;
    f->rhs = f->rhsp = NULL;
    f->perm = NULL;
    f->Aq = f->Av = NULL;
}

void hs_fl_saddle_free(hs_fl *f)
{
    hs_la_sparse_free(f->pj);
    free(f->pj_src);
    hs_la_sparse_free(f->sp);
    free(f->sp_src);
    free(f->sp_sign);
}

void hs_fl_use_sparse(hs_fl *f, int on)
{
    f->sp_off = !on;
}

int hs_fl_saddle_factor(hs_fl *f, int dense)
{
    size_t n = f->n;
    const double *o = f->out_acc;
    f->fact_sparse = f->sp && (!f->K || (!f->sp_off && !dense));
    if (f->fact_sparse) {
        double *Ax = hs_la_sparse_values(f->sp);
        const int *slot = hs_la_sparse_slots(f->sp);
        for (size_t t = 0; t < f->sp_nt; t++)
            Ax[slot[t]] += f->sp_sign[t] * o[f->sp_src[t]];
        return hs_la_sparse_factor(f->sp);
    }
    gsl_matrix_set_zero(f->K);
    double *K = f->K->data;
    size_t ld = f->K->tda;
    for (size_t e = 0; e < f->bM.cnt; e++) {
        size_t r = (size_t)f->bM.r[e], c = (size_t)f->bM.c[e];
        K[r * ld + c] = K[c * ld + r] = o[f->bM.off + e];
    }
    for (size_t e = 0; e < f->bGq.cnt; e++) {
        size_t r = (size_t)f->bGq.r[e], c = (size_t)f->bGq.c[e];
        double g = o[f->bGq.off + e];
        K[(n + r) * ld + c] = g;
        K[c * ld + n + r] = -g;
    }
    int sgn;
    return gsl_linalg_LU_decomp(f->K, f->perm, &sgn) ? -1 : 0;
}

static int all_finite(const double *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return 0;
    return 1;
}

int hs_fl_saddle_solve(hs_fl *f, double *X, double *tmp, size_t ncol)
{
    size_t nk = f->n + f->k;
    if (f->fact_sparse && ncol == 1) {
        hs_la_sparse_solve(f->sp, X);
    } else if (f->fact_sparse) {
        for (size_t j = 0; j < ncol; j++) {
            for (size_t i = 0; i < nk; i++)
                tmp[i] = X[i * ncol + j];
            hs_la_sparse_solve(f->sp, tmp);
            for (size_t i = 0; i < nk; i++)
                X[i * ncol + j] = tmp[i];
        }
    } else if (ncol == 1) {
        gsl_vector_view x = hs_la_vview(X, nk);
        if (hs_la_lu_svx(f->K, f->perm, &x.vector))
            return -1;
    } else {                   /* P, then L and U as BLAS 3 on every column */
        for (size_t i = 0; i < nk; i++)
            memcpy(tmp + i * ncol, X + f->perm->data[i] * ncol, ncol * sizeof *tmp);
        gsl_matrix_view Xv = hs_la_mview(tmp, nk, ncol);
        gsl_blas_dtrsm(CblasLeft, CblasLower, CblasNoTrans, CblasUnit, 1.0, f->K, &Xv.matrix);
        gsl_blas_dtrsm(CblasLeft, CblasUpper, CblasNoTrans, CblasNonUnit, 1.0, f->K, &Xv.matrix);
        memcpy(X, tmp, nk * ncol * sizeof *X);
    }
    return all_finite(X, nk * ncol) ? 0 : -1;
}

/* The pattern of [I J^T; J 0] (2n + 2k), J = [G_q 0; dGdot/dq G_q]:
 * contribution t is sign 1 times out_acc[src[t]], or the constant 1
 * (src[t] = SIZE_MAX, the identity). */
static int proj_new(hs_fl *f)
{
    size_t n = f->n, k = f->k, nn = 2 * n, nt = nn + 2 * (2 * f->bGq.cnt + f->bGdq.cnt);
    int *row = malloc((nt + 1) * sizeof *row), *col = malloc((nt + 1) * sizeof *col);
    f->pj_src = malloc((nt + 1) * sizeof *f->pj_src);
    int rc = !row || !col || !f->pj_src;
    size_t t = 0;
#define PUT(r_, c_, s_) (row[t] = (int)(r_), col[t] = (int)(c_), f->pj_src[t++] = (s_))
    for (size_t i = 0; !rc && i < nn; i++)
        PUT(i, i, SIZE_MAX);
    for (size_t e = 0; !rc && e < f->bGq.cnt; e++) {
        size_t r = (size_t)f->bGq.r[e], c = (size_t)f->bGq.c[e], o = f->bGq.off + e;
        PUT(nn + r, c, o);                     /* G_q dq */
        PUT(c, nn + r, o);
        PUT(nn + k + r, n + c, o);             /* G_q dv */
        PUT(n + c, nn + k + r, o);
    }
    for (size_t e = 0; !rc && e < f->bGdq.cnt; e++) {
        size_t r = (size_t)f->bGdq.r[e], c = (size_t)f->bGdq.c[e], o = f->bGdq.off + e;
        PUT(nn + k + r, c, o);                 /* dGdot/dq dq */
        PUT(c, nn + k + r, o);
    }
#undef PUT
    if (!rc && !(f->pj = hs_la_sparse_new(nn + 2 * k, nt, row, col)))
        rc = 1;
    f->pj_nt = nt;
    free(row);
    free(col);
    return rc ? -1 : 0;
}

int hs_fl_saddle_project(hs_fl *f, double *P, size_t ncol)
{
    size_t n = f->n, k = f->k, nn = 2 * n, N = nn + 2 * k;
    if (!k || !ncol)
        return 0;
    if (!f->pj && proj_new(f))
        return -1;
    double *x = malloc(N * sizeof *x);
    if (!x)
        return -1;
    int rc = all_finite(f->out_acc, f->nacc) ? 0 : 1;
    if (!rc) {
        double *Ax = hs_la_sparse_values(f->pj);
        const int *slot = hs_la_sparse_slots(f->pj);
        for (size_t e = 0; e < f->pj_nt; e++)
            Ax[slot[e]] += f->pj_src[e] == SIZE_MAX ? 1.0 : f->out_acc[f->pj_src[e]];
        rc = hs_la_sparse_factor(f->pj) ? 2 : 0;
    }
    for (size_t j = 0; !rc && j < ncol; j++) {
        for (size_t r = 0; r < nn; r++)
            x[r] = P[r * ncol + j];
        memset(x + nn, 0, 2 * k * sizeof *x);
        hs_la_sparse_solve(f->pj, x);          /* p' = p - J^T y, J p' = 0 */
        rc = all_finite(x, nn) ? 0 : 2;
        for (size_t r = 0; !rc && r < nn; r++)
            P[r * ncol + j] = x[r];
    }
    free(x);
    return rc;
}
