/* Newton's method on the equilibrium conditions, sparse (internal.h; the
 * dense reference is equilibrium.c):
 *
 *     F(z) = ( Q(q, 0) + G_q(q)^T lambda ,  G(q) ) = 0,   z = (q, lambda)
 *     J    = [ S  G_q^T ; G_q  0 ]   factored by KLU (sparse.c)
 *
 * The start's multipliers are the static reaction, [M G_q^T; G_q 0]
 * (x, lambda) = (-Q, 0) (lambda = -C^-1 G_q M^-1 Q, as a run at rest
 * computes them).  The same safeguards as the dense Newton: steps capped at
 * max(1, |q|), an Armijo line search on |W F|^2 (W the row scales of J at
 * the start), convergence by a step or a residual at round-off, and every
 * success verified row by row.  Redundant constraints (a singular J) are
 * the dense path's alone: here they stop with exit 3. */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STEP_TOL 1e-12
#define SMALL_STEP 1e-9
#define ARMIJO 1e-4
#define ALPHA_MIN 1e-10
#define VERIFY_TOL (1024 * DBL_EPSILON)

typedef struct snewton {
    hs_an *a;
    hs_ak_saddle *J;
    size_t n, k, N;
    double *z, *F, *zt, *Ft, *dz, *W;   /* [N] */
    double *best, best_phi;             /* [N] the point of least merit */
    double *tQ, *work;                  /* [n] term sizes of the force rows; scratch [N] */
    double fscale_Q, fscale_G, sscale;
    const double *q0;
} snewton;

static double vmax(const double *x, size_t cnt)
{
    double m = 0;
    for (size_t i = 0; i < cnt; i++)
        m = fmax(m, fabs(x[i]));
    return m;
}

/* F(z), the term sizes; 0, or -1 when a value is not finite. */
static int residual(snewton *w, const double *z, double *F)
{
    hs_an *a = w->a;
    size_t n = w->n;
    const double *lambda = z + n;
    if (!hs_ak_eval_eq(a, z))
        return -1;
    for (size_t i = 0; i < n; i++) {
        F[i] = a->out_eq[i];
        w->tQ[i] = fabs(F[i]);
    }
    for (size_t j = 0; j < w->k; j++)
        F[n + j] = a->out_eq[a->off_G + j];
    double sG = 0;
    for (size_t e = 0; e < a->gq.cnt; e++) {
        double g = a->out_eq[a->off_Gq + e];
        size_t j = (size_t)a->gq.r[e], c = (size_t)a->gq.c[e];
        F[c] += g * lambda[j];
        w->tQ[c] += fabs(g * lambda[j]);
        sG = fmax(sG, fabs(g * z[c]));
    }
    w->fscale_Q = vmax(w->tQ, n);
    w->fscale_G = sG;
    for (size_t i = 0; i < w->N; i++)
        if (!isfinite(F[i]))
            return -1;
    return 0;
}

static double merit(const snewton *w, const double *F)
{
    double s = 0;
    for (size_t i = 0; i < w->N; i++)
        s += (w->W[i] * F[i]) * (w->W[i] * F[i]);
    return s;
}

/* J at z (after residual(z)) factored; the largest |S_ij| into sscale. */
static int factor(snewton *w)
{
    hs_an *a = w->a;
    for (size_t e = 0; e < a->qq.cnt; e++)
        w->sscale = fmax(w->sscale, fabs(a->out_eq[a->off_Qq + e]));
    for (size_t e = 0; e < a->hg.cnt; e++)
        w->sscale = fmax(w->sscale, fabs(w->z[w->n + a->hg.g[e]] * a->out_eq[a->off_Hg + e]));
    return hs_ak_saddle_factor(w->J, w->z + w->n, 1, 0);
}

/* The merit's weights: 1 / the largest entry of each row of J at the start. */
static void row_scales(snewton *w)
{
    hs_an *a = w->a;
    size_t n = w->n;
    double *W = w->W;
    memset(W, 0, w->N * sizeof *W);
    for (size_t e = 0; e < a->qq.cnt; e++)
        W[a->qq.r[e]] = fmax(W[a->qq.r[e]], fabs(a->out_eq[a->off_Qq + e]));
    for (size_t e = 0; e < a->hg.cnt; e++) {
        double h = fabs(w->z[n + a->hg.g[e]] * a->out_eq[a->off_Hg + e]);
        W[a->hg.r[e]] = fmax(W[a->hg.r[e]], h);
        W[a->hg.c[e]] = fmax(W[a->hg.c[e]], h);
    }
    for (size_t e = 0; e < a->gq.cnt; e++) {
        double g = fabs(a->out_eq[a->off_Gq + e]);
        W[a->gq.c[e]] = fmax(W[a->gq.c[e]], g);
        W[n + a->gq.r[e]] = fmax(W[n + a->gq.r[e]], g);
    }
    for (size_t i = 0; i < w->N; i++)
        W[i] = W[i] > 0 ? 1 / W[i] : 1;
}

/* z = (q, the static reaction), F there, the weights; 0, -1 not finite,
 * -2 the start's saddle matrix is singular, -3 out of memory. */
static int start(snewton *w, const double *q)
{
    size_t n = w->n, N = w->N;
    memcpy(w->z, q, n * sizeof *q);
    memset(w->z + n, 0, w->k * sizeof *w->z);
    if (!hs_ak_eval_eq(w->a, q) || !hs_ak_eval_lin(w->a, q))
        return -1;
    if (w->k) {
        /* [M G_q^T; G_q 0] (x, lambda) = (-Q, 0): cS = 0, cM = 1 */
        if (hs_ak_saddle_factor(w->J, w->z + n, 0, 1))
            return -2;
        for (size_t i = 0; i < N; i++)
            w->work[i] = i < n ? -w->a->out_eq[i] : 0;
        hs_ak_saddle_solve(w->J, w->work);
        memcpy(w->z + n, w->work + n, w->k * sizeof *w->z);
    }
    if (residual(w, w->z, w->F))
        return -1;
    row_scales(w);
    w->best_phi = INFINITY;
    return 0;
}

static void keep_best(snewton *w, double phi)
{
    if (phi < w->best_phi) {
        memcpy(w->best, w->z, w->N * sizeof *w->best);
        w->best_phi = phi;
    }
}

/* Exit 3: why, the best point and its residual, the row farthest from
 * balance (block: index into (coordinates, constraints)). */
static int fail(snewton *w, hs_equil *eq, const char *why, hs_error *err)
{
    hs_an *a = w->a;
    size_t n = w->n;
    memcpy(eq->q, w->best, n * sizeof *eq->q);
    memcpy(eq->lambda, w->best + n, w->k * sizeof *eq->lambda);
    eq->res_Q = eq->res_G = NAN;
    size_t block = 0;
    if (residual(w, w->best, w->Ft) == 0) {
        eq->res_Q = vmax(w->Ft, n);
        eq->res_G = vmax(w->Ft + n, w->k);
        double big = -1;
        for (size_t i = 0; i < w->N; i++)
            if (fabs(w->W[i] * w->Ft[i]) > big) {
                big = fabs(w->W[i] * w->Ft[i]);
                block = i;
            }
    }
    char pt[400], b1[32], b2[32], blk[240];
    hs_ak_point(a, eq->q, pt, sizeof pt);
    if (block < n)
        snprintf(blk, sizeof blk, "coordinate '%s'", a->m->qname[block]);
    else
        snprintf(blk, sizeof blk, "constraint '%s'", a->m->cname[block - n]);
    hs_error_set(err, HS_EXIT_INCONSISTENT, "no equilibrium found (sparse Newton): %s "
                 "(blocking: %s); best point: %s; residual: max |Q + G_q^T lambda| = %s, "
                 "max |G| = %s", why, blk, pt, hs_ak_num(b1, eq->res_Q),
                 hs_ak_num(b2, eq->res_G));
    snprintf(err->file, sizeof err->file, "%s", a->m->file);
    return HS_EXIT_INCONSISTENT;
}

static int converged(const snewton *w)
{
    double tol = 64 * DBL_EPSILON;
    return vmax(w->F, w->n) <= tol * w->fscale_Q && vmax(w->F + w->n, w->k) <= tol * w->fscale_G;
}

/* dz = -J^-1 F at z (J factored); the step relative to the point. */
static double newton_step(snewton *w, double qref, double lref)
{
    size_t n = w->n;
    for (size_t i = 0; i < w->N; i++)
        w->dz[i] = -w->F[i];
    hs_ak_saddle_solve(w->J, w->dz);
    return fmax(vmax(w->dz, n) / fmax(vmax(w->z, n), qref),
                w->k ? vmax(w->dz + n, w->k) / fmax(vmax(w->z + n, w->k), lref) : 0);
}

/* z + dz when F is finite there. */
static void take_step(snewton *w)
{
    for (size_t i = 0; i < w->N; i++)
        w->zt[i] = w->z[i] + w->dz[i];
    if (residual(w, w->zt, w->Ft) == 0) {
        memcpy(w->z, w->zt, w->N * sizeof *w->z);
        memcpy(w->F, w->Ft, w->N * sizeof *w->F);
    } else {
        residual(w, w->z, w->F);
    }
}

static int line_search(snewton *w, double *phi)
{
    for (double alpha = 1; alpha >= ALPHA_MIN; alpha /= 2) {
        for (size_t i = 0; i < w->N; i++)
            w->zt[i] = w->z[i] + alpha * w->dz[i];
        if (residual(w, w->zt, w->Ft))
            continue;
        double pt = merit(w, w->Ft);
        if (pt <= (1 - 2 * ARMIJO * alpha) * *phi) {
            memcpy(w->z, w->zt, w->N * sizeof *w->z);
            memcpy(w->F, w->Ft, w->N * sizeof *w->F);
            *phi = pt;
            return 0;
        }
    }
    residual(w, w->z, w->F);
    return -1;
}

static int iterate(snewton *w, hs_equil *eq, hs_error *err)
{
    size_t n = w->n, k = w->k;
    double phi = merit(w, w->F), qref = vmax(w->z, n), lref = vmax(w->z + n, k);
    int small = 0;
    char why[200];
    for (int it = 0;; it++) {
        eq->iterations = it;
        keep_best(w, phi);
        if (converged(w)) {
            /* one more step removes what is left of the error */
            if (factor(w) == 0 && newton_step(w, qref, lref) <= SMALL_STEP)
                take_step(w);
            return 0;
        }
        if (it == HS_AN_MAXIT) {
            snprintf(why, sizeof why, "Newton did not converge in %d steps", it);
            return fail(w, eq, why, err);
        }
        if (factor(w)) {
            snprintf(why, sizeof why, "singular Jacobian of the equilibrium conditions after "
                     "%d Newton steps (redundant constraints need the dense analysis)", it);
            return fail(w, eq, why, err);
        }
        double rel = newton_step(w, qref, lref);
        if (it == 0) {
            qref = fmax(qref, vmax(w->dz, n));
            lref = fmax(lref, vmax(w->dz + n, k));
        }
        small = rel <= SMALL_STEP ? small + 1 : 0;
        if (rel <= STEP_TOL || small >= 4) {
            eq->iterations = it + 1;
            take_step(w);
            return 0;
        }
        double len = vmax(w->dz, n), cap = fmax(1.0, vmax(w->z, n));
        if (len > cap)
            for (size_t i = 0; i < w->N; i++)
                w->dz[i] *= cap / len;
        if (line_search(w, &phi)) {
            snprintf(why, sizeof why, "the line search cannot reduce the residual after %d "
                     "Newton steps (a local minimum of |F| that is not an equilibrium)", it);
            return fail(w, eq, why, err);
        }
    }
}

/* Round-off shown as 0, as the dense path does (analysis.h). */
static void flush_roundoff(snewton *w, const double *q_start)
{
    hs_an *a = w->a;
    size_t n = w->n, N = w->N;
    double *z = w->z;
    memcpy(w->zt, z, N * sizeof *z);
    double qs = HS_AN_Q_ROUNDOFF * fmax(vmax(q_start, n), vmax(z, n));
    double fs = HS_AN_Q_ROUNDOFF * w->fscale_Q, *react = w->work;
    memset(react, 0, w->k * sizeof *react);
    for (size_t e = 0; e < a->gq.cnt; e++) {
        size_t j = (size_t)a->gq.r[e];
        react[j] = fmax(react[j], fabs(a->out_eq[a->off_Gq + e] * z[n + j]));
    }
    int changed = 0;
    for (size_t i = 0; i < N; i++)
        if (z[i] != 0 && (i < n ? fabs(z[i]) <= qs : react[i - n] <= fs)) {
            z[i] = 0;
            changed = 1;
        }
    if (changed && residual(w, z, w->F)) {
        memcpy(z, w->zt, N * sizeof *z);
        residual(w, z, w->F);
    }
}

/* Row by row, |F_i| <= VERIFY_TOL (the size of the terms of F_i): the
 * dense path's verification (equilibrium.c) with |S| |max(|q|, |q0|)|. */
static int verify(snewton *w, hs_equil *eq, hs_error *err)
{
    hs_an *a = w->a;
    size_t n = w->n, k = w->k;
    const double *q = w->z;
    double *qa = w->zt, *sq = w->Ft, *tG = w->work, ratio = 0;
    if (residual(w, w->z, w->F))
        return fail(w, eq, "a value that is not finite at the point found", err);
    for (size_t c = 0; c < n; c++)
        qa[c] = fmax(fabs(q[c]), fabs(w->q0[c]));
    hs_ak_S_mul(a, q + n, qa, sq, 1);
    memset(tG, 0, k * sizeof *tG);
    for (size_t e = 0; e < a->gq.cnt; e++)
        tG[a->gq.r[e]] += fabs(a->out_eq[a->off_Gq + e]) * qa[a->gq.c[e]];
    for (size_t i = 0; i < n + k; i++) {
        double scale = i < n ? w->tQ[i] + sq[i] : tG[i - n], f = fabs(w->F[i]);
        double r = f == 0 ? 0 : scale > 0 ? f / scale : (double)INFINITY;
        ratio = fmax(ratio, r);
    }
    if (ratio <= VERIFY_TOL)
        return 0;
    char why[200], b1[32];
    memcpy(w->best, w->z, w->N * sizeof *w->best);
    snprintf(why, sizeof why, "the residual after %d Newton steps is %s times the size of "
             "the force terms, not round-off", eq->iterations, hs_ak_num(b1, ratio));
    return fail(w, eq, why, err);
}

static void snewton_free(snewton *w)
{
    hs_ak_saddle_free(w->J);
    double *v[] = { w->z, w->F, w->zt, w->Ft, w->dz, w->W, w->best, w->tQ, w->work };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        free(v[i]);
}

static int snewton_alloc(snewton *w, hs_an *a)
{
    memset(w, 0, sizeof *w);
    w->a = a;
    w->n = a->n;
    w->k = a->k;
    w->N = a->n + a->k;
    double **v[] = { &w->z, &w->F, &w->zt, &w->Ft, &w->dz, &w->W, &w->best, &w->tQ, &w->work };
    int bad = 0;
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        bad |= !(*v[i] = calloc(w->N + 1, sizeof(double)));
    w->J = hs_ak_saddle_new(a);
    return bad || !w->J ? -1 : 0;
}

int hs_ak_sparse_equilibrium(hs_an *a, const double *q_start, hs_equil *eq, hs_error *err)
{
    size_t n = a->n, k = a->k;
    memset(eq, 0, sizeof *eq);
    eq->n = n;
    eq->k = k;
    eq->q = calloc(n + 1, sizeof *eq->q);
    eq->lambda = calloc(k + 1, sizeof *eq->lambda);
    snewton w;
    int rc = snewton_alloc(&w, a);
    if (rc || !eq->q || !eq->lambda) {
        snewton_free(&w);
        return hs_error_nomem(err);
    }
    memcpy(eq->q, q_start, n * sizeof *eq->q);
    w.q0 = q_start;
    int st = start(&w, q_start);
    if (st == -1) {
        rc = hs_ak_nonfinite(a, 0, q_start, HS_EXIT_INCONSISTENT, "in the equilibrium "
                             "conditions at the start point (the initial position)", err);
    } else if (st == -2) {
        memcpy(w.best, w.z, w.N * sizeof *w.best);
        rc = fail(&w, eq, "the saddle-point matrix [M G_q^T; G_q 0] is singular at the start "
                  "(dependent constraints need the dense analysis)", err);
    } else {
        rc = iterate(&w, eq, err);
    }
    if (!rc) {
        flush_roundoff(&w, q_start);
        rc = verify(&w, eq, err);
    }
    if (!rc) {
        eq->sscale = w.sscale;
        eq->rank = k;
        memcpy(eq->q, w.z, n * sizeof *eq->q);
        memcpy(eq->lambda, w.z + n, k * sizeof *eq->lambda);
        eq->res_Q = vmax(w.F, n);
        eq->res_G = vmax(w.F + n, k);
    }
    snewton_free(&w);
    return rc;
}
