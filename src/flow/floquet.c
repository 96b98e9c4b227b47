/* Floquet multipliers (the monodromy over one period) and Lyapunov
 * exponents (Benettin; the spectrum by Gram-Schmidt), on the tangent space
 * of the constraint manifold (flow.h). */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_eigen.h>

#include "../consistency/consistency.h"
#include "../dynamics/dynamics.h"
#include "../linalg/linalg.h"

const char *const hs_fl_verdict_names[3] = { "unstable", "marginal", "stable" };

/* The consistent start (q0, v0 projected at t0) into x [2n]. */
int hs_fl_start_state(hs_fl *f, double *x, hs_error *err)
{
    hs_model *m = f->m;
    size_t n = f->n;
    memcpy(x, m->q0, n * sizeof *x);
    memcpy(x + n, m->v0, n * sizeof *x);
    hs_work *w = hs_work_new(m);
    if (!w)
        return hs_error_nomem(err);
    int rc = hs_cons_start(m, w, x, x + n, NULL, err);
    hs_work_free(w);
    return rc;
}

void hs_fl_floquet_free(hs_floquet *fl)
{
    free(fl->re);
    free(fl->im);
    free(fl->mono);
    free(fl->x0);
    free(fl->xT);
    memset(fl, 0, sizeof *fl);
}

/* The multipliers: eigenvalues of mono, largest |mu| first (then the
 * larger imaginary part). */
static int multipliers(hs_floquet *fl, hs_error *err)
{
    size_t d = fl->dim;
    gsl_matrix *A = hs_la_matrix_alloc(d, d);
    gsl_vector_complex *ev = hs_la_vector_complex_alloc(d);
    /* size 0: GSL would report it to its handler */
    gsl_eigen_nonsymm_workspace *ws = d ? gsl_eigen_nonsymm_alloc(d) : NULL;
    int rc = 0;
    if (!A || !ev || !ws) {
        rc = hs_error_nomem(err);
        goto done;
    }
    memcpy(A->data, fl->mono, d * d * sizeof *fl->mono);
    if (hs_la_nonsymm(A, ev, ws)) {
        hs_error_set(err, HS_EXIT_NUMERIC, "the eigensolver did not converge on the "
                     "monodromy matrix");
        rc = HS_EXIT_NUMERIC;
        goto done;
    }
    for (size_t i = 0; i < d; i++) {
        gsl_complex z = gsl_vector_complex_get(ev, i);
        fl->re[i] = GSL_REAL(z);
        fl->im[i] = GSL_IMAG(z);
    }
    for (size_t i = 1; i < d; i++)              /* insertion sort: d is small */
        for (size_t j = i; j > 0; j--) {
            double a = hypot(fl->re[j - 1], fl->im[j - 1]), b = hypot(fl->re[j], fl->im[j]);
            if (b > a || (b == a && fl->im[j] > fl->im[j - 1])) {
                double t = fl->re[j]; fl->re[j] = fl->re[j - 1]; fl->re[j - 1] = t;
                t = fl->im[j]; fl->im[j] = fl->im[j - 1]; fl->im[j - 1] = t;
            } else {
                break;
            }
        }
done:
    gsl_matrix_free(A);
    gsl_vector_complex_free(ev);
    gsl_eigen_nonsymm_free(ws);
    return rc;
}

static void verdict(hs_floquet *fl)
{
    fl->tol = HS_FL_TOL;
    fl->mu_max = fl->dim ? hypot(fl->re[0], fl->im[0]) : 0;
    int one = 0;
    for (size_t i = 0; i < fl->dim; i++)
        one |= hypot(fl->re[i] - 1, fl->im[i]) <= fl->tol;
    fl->verdict = fl->mu_max > 1 + fl->tol ? HS_FL_UNSTABLE : one ? HS_FL_MARGINAL
                : HS_FL_STABLE;
}

static int floquet(hs_fl *f, const double *x0, double T, hs_floquet *fl, hs_error *err)
{
    size_t n = f->n, nn = 2 * n;
    memset(fl, 0, sizeof *fl);
    fl->n = n;
    fl->T = T;
    fl->x0 = calloc(nn, sizeof *fl->x0);
    fl->xT = calloc(nn, sizeof *fl->xT);
    double *B = calloc(nn * nn, sizeof *B), *P = calloc(nn * nn, sizeof *P);
    int rc = 0;
    if (!fl->x0 || !fl->xT || !B || !P) {
        rc = hs_error_nomem(err);
        goto done;
    }
    double t0 = f->m->t0;
    if (x0)
        memcpy(fl->x0, x0, nn * sizeof *fl->x0);
    if ((!x0 && (rc = hs_fl_start_state(f, fl->x0, err))) ||
        (rc = hs_fl_tangent(f, t0, fl->x0, fl->x0 + n, B, &fl->dim, err)))
        goto done;
    size_t d = fl->dim;
    memcpy(P, B, nn * d * sizeof *P);
    memcpy(fl->xT, fl->x0, nn * sizeof *fl->xT);
    if ((rc = hs_fl_propagate(f, t0, t0 + T, fl->xT, P, d, err)))
        goto done;
    for (size_t i = 0; i < nn; i++)
        fl->gap = fmax(fl->gap, fabs(fl->xT[i] - fl->x0[i]));
    fl->re = calloc(d + 1, sizeof *fl->re);
    fl->im = calloc(d + 1, sizeof *fl->im);
    fl->mono = calloc(d * d + 1, sizeof *fl->mono);
    if (!fl->re || !fl->im || !fl->mono) {
        rc = hs_error_nomem(err);
        goto done;
    }
    for (size_t i = 0; i < d; i++)              /* mono = B^T P */
        for (size_t j = 0; j < d; j++) {
            double s = 0;
            for (size_t r = 0; r < nn; r++)
                s += B[r * d + i] * P[r * d + j];
            fl->mono[i * d + j] = s;
        }
    if (d && (rc = multipliers(fl, err)))
        goto done;
    verdict(fl);
done:
    free(B);
    free(P);
    return rc;
}

int hs_fl_floquet(hs_fl *f, double T, hs_floquet *fl, hs_error *err)
{
    int rc = floquet(f, NULL, T, fl, err);
    return rc;
}

int hs_fl_floquet_at(hs_fl *f, const double *x0, double T, hs_floquet *fl, hs_error *err)
{
    int rc = floquet(f, x0, T, fl, err);
    return rc;
}

/* ---------- Lyapunov exponents ---------- */

/* Modified Gram-Schmidt on the c columns of P (nn x c): log of each
 * column's norm after removing the previous ones added to sum. */
static int gram_schmidt(double *P, size_t nn, size_t c, double *sum)
{
    for (size_t j = 0; j < c; j++) {
        for (size_t i = 0; i < j; i++) {
            double dot = 0;
            for (size_t r = 0; r < nn; r++)
                dot += P[r * c + i] * P[r * c + j];
            for (size_t r = 0; r < nn; r++)
                P[r * c + j] -= dot * P[r * c + i];
        }
        double nrm = 0;
        for (size_t r = 0; r < nn; r++)
            nrm += P[r * c + j] * P[r * c + j];
        nrm = sqrt(nrm);
        if (!(nrm > 0) || !isfinite(nrm))
            return -1;
        sum[j] += log(nrm);
        for (size_t r = 0; r < nn; r++)
            P[r * c + j] /= nrm;
    }
    return 0;
}

typedef struct lyap {
    double *x, *B, *P, *tmp, *sum, *lam;
} lyap;

static int lyap_alloc(lyap *L, size_t nn, size_t c, hs_error *err)
{
    L->x = calloc(nn, sizeof *L->x);
    L->B = calloc(nn * c, sizeof *L->B);
    L->P = calloc(nn * c, sizeof *L->P);
    L->tmp = calloc(nn * c, sizeof *L->tmp);
    L->sum = calloc(c, sizeof *L->sum);
    L->lam = calloc(c, sizeof *L->lam);
    return L->x && L->B && L->P && L->tmp && L->sum && L->lam ? 0 : hs_error_nomem(err);
}

static void lyap_free(lyap *L)
{
    free(L->x); free(L->B); free(L->P); free(L->tmp); free(L->sum); free(L->lam);
}

/* The first tangent vectors: the basis itself (spectrum), or one generic
 * combination of it. */
static void lyap_first(lyap *L, size_t nn, size_t d, size_t c)
{
    if (c == d) {
        memcpy(L->P, L->B, nn * d * sizeof *L->P);
        return;
    }
    for (size_t r = 0; r < nn; r++) {
        double s = 0;
        for (size_t j = 0; j < d; j++)
            s += L->B[r * d + j] * (1 + 0.6180339887498949 * (double)j);
        L->P[r] = s;
    }
}

static int lyapunov(hs_fl *f, double T, double dt, int spectrum, hs_fl_row_fn row, void *ctx,
                    size_t *count, hs_error *err)
{
    hs_model *m = f->m;
    size_t n = f->n, nn = 2 * n, d = 0, c;
    lyap L = { 0 };
    hs_work *w = hs_work_new(m);
    hs_proj *pj = hs_proj_new(m);
    /* beyond HS_FL_MAX (no dense arrays: the largest exponent only, no
     * basis) the first vector is 1 + phi r, r = 0 .. 2n - 1, projected
     * onto the tangent space, and every projection is sparse */
    int big = !f->K;
    int rc = !w || !pj ? hs_error_nomem(err) : lyap_alloc(&L, nn, big ? 1 : nn, err);
    double t0 = m->t0, t = t0;
    if (!rc && spectrum && big)
        rc = hs_error_set(err, HS_EXIT_MODEL, "%s: the spectrum of a model with n + k = %zu: "
                          "the limit is %d", m->file, n + f->k, HS_FL_MAX);
    if (!rc && !(rc = hs_fl_start_state(f, L.x, err)) && !big)
        rc = hs_fl_tangent(f, t0, L.x, L.x + n, L.B, &d, err);
    if (!rc && big) {
        d = n > f->k ? 2 * (n - f->k) : 0;
        for (size_t r = 0; r < nn; r++)
            L.P[r] = 1 + 0.6180339887498949 * (double)r;
        rc = hs_fl_project_sparse(f, t0, L.x, L.x + n, L.P, 1, err);
    }
    c = spectrum ? d : d ? 1 : 0;
    *count = c;
    if (rc || !c)
        goto done;
    if (!big)
        lyap_first(&L, nn, d, c);
    gram_schmidt(L.P, nn, c, L.tmp);               /* unit length, nothing counted */
    for (long i = 1; !rc && t < t0 + T; i++) {
        double t1 = t0 + (double)i * dt;
        if (t1 > t0 + T || t0 + T - t1 < 1e-9 * dt)
            t1 = t0 + T;
        if ((rc = hs_fl_propagate(f, t, t1, L.x, L.P, c, err)))
            break;
        t = t1;
        if (m->k) {                 /* back onto the manifold and its tangent space */
            if ((rc = hs_proj_apply(pj, w, t, L.x, L.x + n, NULL, 1e-12, 0, err)) ||
                (rc = (big ? hs_fl_project_sparse : hs_fl_project)(f, t, L.x, L.x + n, L.P,
                                                                    c, err)))
                break;
        }
        if (gram_schmidt(L.P, nn, c, L.sum)) {
            hs_error_set(err, HS_EXIT_NUMERIC, "%s: tangent vectors collapsed at t = %.17g",
                         m->file, t);
            rc = HS_EXIT_NUMERIC;
            break;
        }
        for (size_t j = 0; j < c; j++)
            L.lam[j] = L.sum[j] / (t - t0);
        if (row && (rc = row(t, L.lam, c, ctx)))
            break;
    }
done:
    lyap_free(&L);
    hs_proj_free(pj);
    hs_work_free(w);
    return rc;
}

int hs_fl_lyapunov(hs_fl *f, double T, double dt, int spectrum, hs_fl_row_fn row, void *ctx,
                   size_t *count, hs_error *err)
{
    int rc = lyapunov(f, T, dt, spectrum, row, ctx, count, err);
    return rc;
}
