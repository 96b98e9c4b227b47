/* The factorizations every solve of the module shares (internal.h): x
 * through M (its diagonal or its Cholesky factor), and C = G_q M^-1 G_q^T
 * of a constraint system (all rows, or the held ones: held.c), banded,
 * small with dependent rows skipped, or dense, with its conditioning
 * checked.  Below dynamics.c and held.c, which both call them. */
#include "internal.h"
#include "../linalg/linalg.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

void hs_dyn_solve_mass(const hs_model *m, hs_work *w, double *x)
{
    if (m->mass_kind != HS_MASS_FULL) {
        for (size_t i = 0; i < m->n; i++)
            x[i] *= w->Minv[i];
        return;
    }
    gsl_vector_view xv = hs_la_vview(x, m->n);
    gsl_linalg_cholesky_svx(w->M, &xv.vector);
}


/* Every stored entry finite (C or its partial factor, after a failure). */
static int matrix_finite(const gsl_matrix *A)
{
    for (size_t i = 0; i < A->size1; i++)
        if (!hs_dyn_all_finite(A->data + i * A->tda, A->size2))
            return 0;
    return 1;
}

int hs_dyn_factor_C(hs_work *w, const hs_csys *s, size_t redundant, double t)
{
    size_t k = s->k;
    int st, weak = 0;
    w->nskip = 0;
    double rcond = 0, tau = w->strict ? 0 : HS_PIVOT_ROBUST;
    /* L_jj^2 / C_jj is the squared sine of the angle between row j of
     * B = G_q M^-1/2 and the rows before it (whatever the units): below
     * tau, a constraint is nearly dependent on the others */
    if (s->Cs) {
        /* no pivot-ratio test per row here: the condition below (the
         * factor's pivot ratio, else a 1-norm estimate) decides */
        int f = hs_la_spd_factor(s->Cs);
        if (f == -2) {
            hs_error_init(&w->err);
            return hs_error_nomem(&w->err);
        }
        st = f ? GSL_EDOM : GSL_SUCCESS;
    } else if (s->banded) {
        st = hs_la_band_cholesky_piv(s->Cb, tau, &weak) ? GSL_EDOM : GSL_SUCCESS;
    } else if (k <= HS_SMALL_K && !w->full_rcond && !w->strict) {
        double rmin;          /* (the SVD reports the condition of what it solves) */
        int ns = hs_la_small_cholesky_skip(s->C, HS_PIVOT_SKIP, tau, &weak, w->skip, &rmin);
        st = ns < 0 || ns == (int)k ? GSL_EDOM : GSL_SUCCESS;  /* non-finite; C = 0 */
        w->nskip = ns > 0 ? (size_t)ns : 0;
        if (ns > 0 && (size_t)ns > redundant)      /* beyond the start's redundancy: */
            weak = 1;                                  /* a singular position, the SVD */
    } else if (k <= HS_SMALL_K && !w->full_rcond) {
        st = hs_la_small_cholesky_piv(s->C, tau, &weak) ? GSL_EDOM : GSL_SUCCESS;
    } else {
        for (size_t i = 0; i < k; i++)
            w->Cdiag[i] = s->C->data[i * s->C->tda + i];
        st = hs_la_cholesky(s->C);
        for (size_t i = 0; st == GSL_SUCCESS && i < k; i++) {
            double l = s->C->data[i * s->C->tda + i];
            weak |= l * l < tau * w->Cdiag[i];
        }
    }
    if (st == GSL_SUCCESS && s->Cs) {
        rcond = hs_la_spd_rcond(s->Cs, 0);
        if (w->full_rcond || !(rcond >= HS_RCOND_PROXY))
            rcond = hs_la_spd_rcond(s->Cs, 1);
    } else if (st == GSL_SUCCESS) {
        /* L_ii^2 are pivots, each within [lambda_min, lambda_max] */
        double lo = INFINITY, hi = 0;
        for (size_t i = 0; i < k; i++) {
            if (w->nskip && w->skip[i])
                continue;                          /* a skipped row: L_ii = 1 */
            double l = s->banded ? s->Cb->data[i * s->Cb->tda] : s->C->data[i * s->C->tda + i];
            lo = l < lo ? l : lo;
            hi = l > hi ? l : hi;
        }
        rcond = (lo / hi) * (lo / hi);
        if (w->full_rcond || !(rcond >= HS_RCOND_PROXY)) {
            gsl_vector_view wk = hs_la_subvector(w->work3k, 0, 3 * k);
            if (s->banded)
                gsl_linalg_cholesky_band_rcond(s->Cb, &rcond, &wk.vector);
            else
                gsl_linalg_cholesky_rcond(s->C, &rcond, &wk.vector);
        }
    }
    w->rcond = st == GSL_SUCCESS ? rcond : 0;
    /* nearly dependent rows or ill-conditioned: the rank-revealing solve,
     * unless strict */
    if (st != GSL_SUCCESS || !(rcond >= HS_RCOND_MIN) || weak) {
        if (s->Cs ? !hs_la_spd_finite(s->Cs) : !matrix_finite(s->banded ? s->Cb : s->C)) {
            /* inf or nan in C or its factor: an overflow, not a rank loss */
            hs_error_init(&w->err);
            w->fail_kind = HS_FAIL_NONFINITE;
            return hs_error_set(&w->err, HS_EXIT_NUMERIC, "overflow at t=%.17g: the "
                                "constraint matrix C = G_q M^-1 G_q^T has entries beyond the "
                                "range of a double (G_q very large or masses very small: "
                                "rescale the constraints or the units)", t);
        }
        if (!w->strict)
            return 1;
        return hs_dyn_singular_C(w, t, st != GSL_SUCCESS, rcond);
    }
    return 0;
}
