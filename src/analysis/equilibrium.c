/* Newton's method on the constrained equilibrium conditions (analysis.h):
 *
 *     F(z) = ( Q(q, 0) + G_q(q)^T lambda ,  G(q) ) = 0,   z = (q, lambda)
 *     J    = [ S(q, lambda)   G_q^T ]     S = dQ(q,0)/dq + sum_j lambda_j d2G_j/dq2
 *            [ G_q            0     ]
 *
 * with the exact symbolic derivatives of kernels.c.  The step solves the
 * equilibrated system (rows, then columns scaled to unit maximum) by LU; a
 * backtracking line search (Armijo) on |W F|^2 with the row weights W of
 * the start keeps it from running away, and a step is shortened to at
 * most max(1, |q|) in the max norm.  Convergence: a step at round-off
 * relative to the point, or a residual at round-off relative to the size
 * of its terms (then one more step, when J allows, polishes q and lambda). */
#include "internal.h"
#include "../linalg/linalg.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_linalg.h>

#define STEP_TOL 1e-12      /* converged: |dq| <= STEP_TOL |q| (and lambda alike) */
#define SMALL_STEP 1e-9     /* steps this small four times running: round-off floor */
#define PIVOT_TOL HS_AK_PIVOT_TOL
#define RANK_SUSPECT 1e-6   /* a pivot ratio below this at the start: G_q's rank is decided */
#define ARMIJO 1e-4
#define ALPHA_MIN 1e-10
#define VERIFY_TOL (1024 * DBL_EPSILON)  /* a success's residual, of its terms' size */
#define FLAT_STEP 1e-6      /* a flat equilibrium's last Newton step, of the point's size */

/* The state of one search (N = n + k unknowns). */
typedef struct newton {
    hs_an *a;
    size_t n, k, N;
    gsl_matrix *J;         /* N x N: J, then equilibrated, then U of its SVD */
    gsl_matrix *LU, *V;    /* N x N: LU factors; right singular vectors */
    gsl_matrix *Gq, *S;    /* k x n, n x n: the blocks of J */
    gsl_permutation *perm; /* N: LU pivoting */
    gsl_vector *z, *F;     /* N: the point (q, lambda) and F there */
    gsl_vector *zt, *Ft;   /* N: a trial point of the line search */
    gsl_vector *dz;        /* N: the Newton step */
    gsl_vector *rs, *cs;   /* N: row and column scales of J */
    gsl_vector *W;         /* N: the merit's weights (row scales at the start) */
    gsl_vector *sv, *work; /* N: singular values; scratch */
    double *best;          /* [N] the point of least merit so far */
    double best_phi;
    double fscale_Q, fscale_G;  /* sizes of the terms of F (residual) */
    double sscale;              /* max |S_ij| met (hs_equil.sscale) */
    int have_best;
    /* the verification's scales, row by row: */
    double *tQ, *tG;       /* [n], [k] term sizes |Q_i| + sum_j |G_q ji lambda_j|,
                            * sum_c |G_q jc q_c| at the last residual */
    double *sQ;            /* [n] max over the search of sum_c |S_ic| qsize_c */
    const double *q0;      /* [n] the start */
    int stop;              /* how iterate() stopped with 0: STOP_* */
    int minnorm;           /* the last step was the least-norm one (J singular) */
    double flat_step;      /* the last Newton step relative to the point (before any cap) */
    double pivot;          /* the last factor()'s smallest pivot ratio */
    size_t rank;           /* G_q's rank decided at the start (below k: reduced steps) */
    double *flat_dq;       /* [n] that step in q */
} newton;

/* The ways Newton stops with success, each verified (verify()). */
enum { STOP_RESIDUAL, STOP_STEP, STOP_FLAT };

static void newton_free(newton *w)
{
    gsl_matrix *mats[] = { w->J, w->LU, w->Gq, w->S, w->V };
    gsl_vector *vecs[] = { w->F, w->dz, w->z, w->zt, w->Ft, w->rs, w->cs, w->W, w->sv,
                           w->work };
    for (size_t i = 0; i < sizeof mats / sizeof *mats; i++)
        if (mats[i])
            gsl_matrix_free(mats[i]);
    for (size_t i = 0; i < sizeof vecs / sizeof *vecs; i++)
        if (vecs[i])
            gsl_vector_free(vecs[i]);
    if (w->perm)
        gsl_permutation_free(w->perm);
    free(w->best);
    free(w->tQ);
    free(w->tG);
    free(w->sQ);
    free(w->flat_dq);
}

static int newton_alloc(newton *w, hs_an *a)
{
    memset(w, 0, sizeof *w);
    w->a = a;
    w->n = a->n;
    w->k = a->k;
    w->N = a->n + a->k;
    size_t N = w->N;
    w->J = hs_la_matrix_alloc(N, N);
    w->V = hs_la_matrix_alloc(N, N);
    w->LU = hs_la_matrix_alloc(N, N);
    w->Gq = hs_la_matrix_alloc(a->k ? a->k : 1, a->n);
    w->S = hs_la_matrix_alloc(a->n, a->n);
    w->perm = hs_la_permutation_alloc(N);
    gsl_vector **vecs[] = { &w->F, &w->dz, &w->z, &w->zt, &w->Ft, &w->rs, &w->cs, &w->W,
                            &w->sv, &w->work };
    int bad = !w->J || !w->V || !w->LU || !w->Gq || !w->S || !w->perm;
    for (size_t i = 0; i < sizeof vecs / sizeof *vecs; i++)
        bad |= !(*vecs[i] = hs_la_vector_alloc(N));
    w->best = calloc(N, sizeof *w->best);
    w->tQ = calloc(w->n + 1, sizeof *w->tQ);
    w->tG = calloc(w->k + 1, sizeof *w->tG);
    w->sQ = calloc(w->n + 1, sizeof *w->sQ);
    w->flat_dq = calloc(w->n + 1, sizeof *w->flat_dq);
    return bad || !w->best || !w->tQ || !w->tG || !w->sQ || !w->flat_dq ? -1 : 0;
}

static int all_finite_vec(const gsl_vector *v)
{
    for (size_t i = 0; i < v->size; i++)
        if (!isfinite(gsl_vector_get(v, i)))
            return 0;
    return 1;
}

/* F(z) into F; 0, or -1 when a value is not finite.  Also the term sizes
 * fscale_Q = max_i (|Q_i| + sum_j |G_q ji lambda_j|), fscale_G = max_j
 * sum_i |G_q ji q_i| that tell a residual at round-off. */
static int residual(newton *w, const gsl_vector *z, gsl_vector *F)
{
    hs_an *a = w->a;
    size_t n = w->n;
    const double *q = z->data, *lambda = z->data + n;
    if (!hs_ak_eval_eq(a, q))
        return -1;
    double *f = F->data, *tq = w->work->data;
    for (size_t i = 0; i < n; i++) {
        f[i] = a->out_eq[i];
        tq[i] = fabs(f[i]);
    }
    for (size_t j = 0; j < w->k; j++)
        f[n + j] = a->out_eq[a->off_G + j];
    double sG = 0;
    for (size_t e = 0; e < a->gq.cnt; e++) {
        double g = a->out_eq[a->off_Gq + e];
        size_t j = (size_t)a->gq.r[e], c = (size_t)a->gq.c[e];
        f[c] += g * lambda[j];
        tq[c] += fabs(g * lambda[j]);
        sG = fmax(sG, fabs(g * q[c]));
    }
    memcpy(w->tQ, tq, n * sizeof *tq);
    w->fscale_Q = 0;
    for (size_t i = 0; i < n; i++)
        w->fscale_Q = fmax(w->fscale_Q, tq[i]);
    w->fscale_G = sG;
    return all_finite_vec(F) ? 0 : -1;
}

/* |W F|^2, the merit of the line search. */
static double merit(const newton *w, const gsl_vector *F)
{
    double s = 0;
    for (size_t i = 0; i < w->N; i++) {
        double x = w->W->data[i] * F->data[i];
        s += x * x;
    }
    return s;
}

/* J at z (after residual(z): the outputs are z's). */
static void jacobian(newton *w, const gsl_vector *z)
{
    size_t n = w->n, k = w->k;
    hs_ak_fill_S(w->a, z->data + n, w->S);
    gsl_matrix_set_zero(w->J);
    for (size_t i = 0; i < n; i++) {
        double row = 0;
        for (size_t c = 0; c < n; c++) {
            double sv = gsl_matrix_get(w->S, i, c);
            gsl_matrix_set(w->J, i, c, sv);
            w->sscale = fmax(w->sscale, fabs(sv));
            row += fabs(sv) * fmax(fabs(z->data[c]), w->q0 ? fabs(w->q0[c]) : 0);
        }
        w->sQ[i] = fmax(w->sQ[i], row);
    }
    if (!k)
        return;
    hs_ak_fill_Gq(w->a, w->Gq);
    for (size_t j = 0; j < k; j++)
        for (size_t c = 0; c < n; c++) {
            double g = gsl_matrix_get(w->Gq, j, c);
            gsl_matrix_set(w->J, n + j, c, g);
            gsl_matrix_set(w->J, c, n + j, g);
        }
}

/* Row maxima of J into s (1 for a zero row): the scales 1/s. */
static void row_scales(const gsl_matrix *J, gsl_vector *s)
{
    for (size_t i = 0; i < J->size1; i++) {
        double mx = 0;
        for (size_t j = 0; j < J->size2; j++)
            mx = fmax(mx, fabs(gsl_matrix_get(J, i, j)));
        gsl_vector_set(s, i, mx > 0 ? 1 / mx : 1);
    }
}

/* J <- R J C (rows, then columns to unit maximum); LU of it.  Returns 0,
 * or -1 when a pivot ratio says J is singular. */
static int factor(newton *w)
{
    size_t N = w->N;
    row_scales(w->J, w->rs);
    for (size_t i = 0; i < N; i++)
        for (size_t j = 0; j < N; j++)
            *gsl_matrix_ptr(w->J, i, j) *= w->rs->data[i];
    for (size_t j = 0; j < N; j++) {
        double mx = 0;
        for (size_t i = 0; i < N; i++)
            mx = fmax(mx, fabs(gsl_matrix_get(w->J, i, j)));
        w->cs->data[j] = mx > 0 ? 1 / mx : 1;
        for (size_t i = 0; i < N; i++)
            *gsl_matrix_ptr(w->J, i, j) *= w->cs->data[j];
    }
    gsl_matrix_memcpy(w->LU, w->J);
    int signum;
    gsl_linalg_LU_decomp(w->LU, w->perm, &signum);
    double umin = INFINITY, umax = 0;
    for (size_t i = 0; i < N; i++) {
        double u = fabs(gsl_matrix_get(w->LU, i, i));
        umin = fmin(umin, u);
        umax = fmax(umax, u);
    }
    w->pivot = umax > 0 ? umin / umax : 0;
    return umax > 0 && umin > PIVOT_TOL * umax ? 0 : -1;
}

/* dz = -J^-1 F through the equilibrated LU. */
static void solve_step(newton *w)
{
    for (size_t i = 0; i < w->N; i++)
        w->dz->data[i] = -w->rs->data[i] * w->F->data[i];
    hs_la_lu_svx(w->LU, w->perm, w->dz);
    for (size_t i = 0; i < w->N; i++)
        w->dz->data[i] *= w->cs->data[i];
}

/* The index of the largest |x_i| (the last one within 1e-9 of it, so of
 * two dependent constraints the later, redundant one is named). */
static size_t argmax_abs(const double *x, size_t n)
{
    double mx = 0;
    for (size_t i = 0; i < n; i++)
        mx = fmax(mx, fabs(x[i]));
    size_t at = 0;
    for (size_t i = 0; i < n; i++)
        if (fabs(x[i]) >= mx * (1 - 1e-9))
            at = i;
    return at;
}

/* What blocks a singular J: the equation of the left null vector that F
 * loads (the balance that cannot be met), else the largest component of
 * the right null vector (the unknown left undetermined). */
static size_t singular_block(newton *w)
{
    size_t N = w->N;
    hs_la_sv_decomp(w->J, w->V, w->sv, w->work);   /* J <- U */
    double *x = w->zt->data;
    double any = 0;
    for (size_t i = 0; i < N; i++) {
        x[i] = gsl_matrix_get(w->J, i, N - 1) * w->rs->data[i] * w->F->data[i];
        any = fmax(any, fabs(x[i]));
    }
    if (!(any > 1e-300))
        for (size_t i = 0; i < N; i++)
            x[i] = gsl_matrix_get(w->V, i, N - 1);
    return argmax_abs(x, N);
}

/* max |dx_i| / max(|x|, ref) over one block: the step relative to the point. */
static double rel_step(const double *dx, const double *x, size_t cnt, double ref)
{
    double d = 0, s = ref;
    for (size_t i = 0; i < cnt; i++) {
        d = fmax(d, fabs(dx[i]));
        s = fmax(s, fabs(x[i]));
    }
    return d == 0 ? 0 : s > 0 ? d / s : (double)INFINITY;
}

static double max_abs(const double *x, size_t cnt)
{
    double m = 0;
    for (size_t i = 0; i < cnt; i++)
        m = fmax(m, fabs(x[i]));
    return m;
}

/* lambda minimizing |Q(q,0) + G_q^T lambda| with the least Euclidean norm
 * (a complete orthogonal decomposition of G_q^T: rank-revealing, so
 * redundant constraints give the minimum-norm multiplier), at the point
 * whose outputs a->out_eq hold; the rank of G_q into *rank.  lambda is
 * left alone when the decomposition fails. */
static void minnorm_lambda(newton *w, double *lambda, size_t *rank, int only_redundant)
{
    size_t n = w->n, k = w->k, mn = n < k ? n : k;
    *rank = k;
    if (!k)
        return;
    gsl_matrix *A = hs_la_matrix_alloc(n, k);
    gsl_vector *tq = hs_la_vector_alloc(mn), *tz = hs_la_vector_alloc(mn);
    gsl_vector *b = hs_la_vector_alloc(n);
    gsl_vector *x = hs_la_vector_alloc(k), *r = hs_la_vector_alloc(n), *wk = hs_la_vector_alloc(k);
    gsl_permutation *p = hs_la_permutation_alloc(k);
    if (A && tq && tz && b && x && r && wk && p) {
        hs_ak_fill_Gq(w->a, w->Gq);
        for (size_t i = 0; i < n; i++) {
            gsl_vector_set(b, i, -w->a->out_eq[i]);
            for (size_t j = 0; j < k; j++)
                gsl_matrix_set(A, i, j, gsl_matrix_get(w->Gq, j, i));
        }
        size_t rk;
        if (gsl_linalg_COD_decomp(A, tq, tz, p, &rk, wk) == 0 &&
            gsl_linalg_COD_lssolve(A, tq, tz, p, rk, b, x, r) == 0 && all_finite_vec(x)) {
            if (!only_redundant || rk < k)
                memcpy(lambda, x->data, k * sizeof *lambda);
            *rank = rk;
        }
    }
    gsl_matrix_free(A);
    gsl_vector_free(tq);
    gsl_vector_free(tz);
    gsl_vector_free(b);
    gsl_vector_free(x);
    gsl_vector_free(r);
    gsl_vector_free(wk);
    gsl_permutation_free(p);
}

/* lambda minimizing |Q(q,0) + G_q^T lambda| at the start: by QR where
 * G_q^T has full column rank, else the least-norm one (minnorm_lambda). */
static void start_lambda(newton *w)
{
    size_t n = w->n, k = w->k, rank;
    double *lambda = w->z->data + n;
    memset(lambda, 0, k * sizeof *lambda);
    minnorm_lambda(w, lambda, &rank, 0);
    if (!k || k > n || rank < k)
        return;
    gsl_matrix *A = hs_la_matrix_alloc(n, k);
    gsl_vector *tau = hs_la_vector_alloc(k), *b = hs_la_vector_alloc(n), *x = hs_la_vector_alloc(k);
    gsl_vector *r = hs_la_vector_alloc(n);
    if (A && tau && b && x && r) {
        hs_ak_fill_Gq(w->a, w->Gq);
        for (size_t i = 0; i < n; i++) {
            gsl_vector_set(b, i, -w->a->out_eq[i]);
            for (size_t j = 0; j < k; j++)
                gsl_matrix_set(A, i, j, gsl_matrix_get(w->Gq, j, i));
        }
        if (gsl_linalg_QR_decomp(A, tau) == 0 && gsl_linalg_QR_lssolve(A, tau, b, x, r) == 0 &&
            all_finite_vec(x))
            memcpy(lambda, x->data, k * sizeof *lambda);
    }
    gsl_matrix_free(A);
    gsl_vector_free(tau);
    gsl_vector_free(b);
    gsl_vector_free(x);
    gsl_vector_free(r);
}

/* A singular J (redundant constraints: lambda is not unique): the
 * least-norm step of the equilibrated system, from a complete orthogonal
 * decomposition of it.  0, or -1 when that fails or J has a rank loss in
 * q as well (then the caller diagnoses it as before). */
static int minnorm_step(newton *w)
{
    size_t N = w->N, mn = N;
    gsl_matrix *A = hs_la_matrix_alloc(N, N);
    gsl_vector *tq = hs_la_vector_alloc(mn), *tz = hs_la_vector_alloc(mn);
    gsl_vector *b = hs_la_vector_alloc(N);
    gsl_vector *r = hs_la_vector_alloc(N), *wk = hs_la_vector_alloc(N);
    gsl_permutation *p = hs_la_permutation_alloc(N);
    int rc = -1;
    if (A && tq && tz && b && r && wk && p) {
        gsl_matrix_memcpy(A, w->J);                        /* equilibrated */
        for (size_t i = 0; i < N; i++)
            gsl_vector_set(b, i, -w->rs->data[i] * w->F->data[i]);
        size_t rk;
        if (gsl_linalg_COD_decomp(A, tq, tz, p, &rk, wk) == 0 && rk + w->k >= N &&
            gsl_linalg_COD_lssolve(A, tq, tz, p, rk, b, w->dz, r) == 0 &&
            all_finite_vec(w->dz)) {
            for (size_t i = 0; i < N; i++)
                w->dz->data[i] *= w->cs->data[i];
            rc = 0;
        }
    }
    gsl_matrix_free(A);
    gsl_vector_free(tq);
    gsl_vector_free(tz);
    gsl_vector_free(b);
    gsl_vector_free(r);
    gsl_vector_free(wk);
    gsl_permutation_free(p);
    return rc;
}

/* Residual norms of F into eq. */
static void residual_norms(const newton *w, const gsl_vector *F, hs_equil *eq)
{
    eq->res_Q = max_abs(F->data, w->n);
    eq->res_G = max_abs(F->data + w->n, w->k);
}

static void keep_best(newton *w, const gsl_vector *z, double phi)
{
    if (!w->have_best || phi < w->best_phi) {
        memcpy(w->best, z->data, w->N * sizeof *w->best);
        w->best_phi = phi;
        w->have_best = 1;
    }
}

/* Exit 3: why, the best point, its residual, what blocks (index into
 * (coordinates, constraints)). */
static int fail(newton *w, hs_equil *eq, const char *why, size_t block, hs_error *err)
{
    hs_an *a = w->a;
    const hs_model *m = a->m;
    memcpy(eq->q, w->best, w->n * sizeof *eq->q);
    memcpy(eq->lambda, w->best + w->n, w->k * sizeof *eq->lambda);
    gsl_vector_view bz = hs_la_vview(w->best, w->N);
    if (residual(w, &bz.vector, w->Ft) == 0)
        residual_norms(w, w->Ft, eq);
    else
        eq->res_Q = eq->res_G = NAN;
    char pt[400], b1[32], b2[32], blk[240];
    hs_ak_point(a, eq->q, pt, sizeof pt);
    int singular = strncmp(why, "singular", 8) == 0;
    if (block < w->n && singular)   /* say it as mechanics: nothing balances that direction */
        snprintf(blk, sizeof blk, "coordinate '%s': no force balance in %s, nothing holds the "
                 "system in that direction", m->qname[block], m->qname[block]);
    else if (block < w->n)
        snprintf(blk, sizeof blk, "coordinate '%s'", m->qname[block]);
    else
        snprintf(blk, sizeof blk, "constraint '%s'", m->cname[block - w->n]);
    hs_error_set(err, HS_EXIT_INCONSISTENT, "no equilibrium found: %s (blocking: %s); best "
                 "point: %s; residual: max |Q + G_q^T lambda| = %s, max |G| = %s", why, blk, pt,
                 hs_ak_num(b1, eq->res_Q), hs_ak_num(b2, eq->res_G));
    snprintf(err->file, sizeof err->file, "%s", m->file);
    return HS_EXIT_INCONSISTENT;
}

/* The largest weighted residual: what keeps Newton from converging. */
static size_t residual_block(const newton *w, const gsl_vector *F)
{
    double *x = w->work->data;
    for (size_t i = 0; i < w->N; i++)
        x[i] = w->W->data[i] * F->data[i];
    return argmax_abs(x, w->N);
}

/* The residual at round-off relative to the size of its terms. */
static int residual_converged(const newton *w)
{
    double tol = 64 * DBL_EPSILON;
    return max_abs(w->F->data, w->n) <= tol * w->fscale_Q &&
           max_abs(w->F->data + w->n, w->k) <= tol * w->fscale_G;
}

/* Backtracking from the full step; 0 with z, F, *phi at the accepted
 * point, or -1 when no step of length >= ALPHA_MIN reduces the merit. */
static int line_search(newton *w, double *phi)
{
    for (double alpha = 1; alpha >= ALPHA_MIN; alpha /= 2) {
        gsl_vector_memcpy(w->zt, w->z);
        gsl_blas_daxpy(alpha, w->dz, w->zt);
        if (residual(w, w->zt, w->Ft))
            continue;
        double pt = merit(w, w->Ft);
        if (pt <= (1 - 2 * ARMIJO * alpha) * *phi) {
            gsl_vector_memcpy(w->z, w->zt);
            gsl_vector_memcpy(w->F, w->Ft);
            *phi = pt;
            return 0;
        }
    }
    return -1;
}

/* z + dz, kept when F is finite there (else z, F as they were). */
static void take_step(newton *w)
{
    gsl_vector_add(w->z, w->dz);
    if (residual(w, w->z, w->F) == 0)
        return;
    gsl_vector_sub(w->z, w->dz);
    residual(w, w->z, w->F);
}

/* The residual is at round-off: one more Newton step when J allows it and
 * the step is that small too (it removes what is left of the error in q
 * and lambda); 0. */
static int polish(newton *w, double qref, double lref)
{
    size_t n = w->n, k = w->k;
    jacobian(w, w->z);
    if (factor(w))
        return 0;
    solve_step(w);
    double rel = fmax(rel_step(w->dz->data, w->z->data, n, qref),
                      rel_step(w->dz->data + n, w->z->data + n, k, lref));
    if (rel <= SMALL_STEP)
        take_step(w);
    return 0;
}

/* dz from hs_ak_reduced_step at z (after jacobian(z)): 0, or -1. */
static int reduced_step(newton *w)
{
    size_t n = w->n, k = w->k;
    const hs_an *a = w->a;
    double *dz = w->dz->data, *z = w->z->data;
    if (hs_ak_reduced_step(w->Gq, w->S, a->out_eq, a->out_eq + a->off_G, w->rank, dz, dz + n))
        return -1;
    for (size_t j = 0; j < k; j++)
        dz[n + j] -= z[n + j];
    return 0;
}

/* The Newton loop from z; 0 when converged (z, F there), else exit 3. */
static int iterate(newton *w, hs_equil *eq, hs_error *err)
{
    size_t n = w->n, k = w->k;
    double phi = merit(w, w->F), qref = max_abs(w->z->data, n), lref = max_abs(w->z->data + n, k);
    double phi0 = phi;
    int small = 0;
    char why[160];
    for (int it = 0;; it++) {
        eq->iterations = it;
        keep_best(w, w->z, phi);
        if (residual_converged(w)) {
            w->stop = STOP_RESIDUAL;
            return polish(w, qref, lref);
        }
        if (it == HS_AN_MAXIT) {
            snprintf(why, sizeof why, "Newton did not converge in %d steps", it);
            return fail(w, eq, why, residual_block(w, w->F), err);
        }
        jacobian(w, w->z);
        w->minnorm = 0;
        int singular = w->rank < k ? 0 : factor(w);
        if (w->rank == k && k && !w->a->m->set.strict_rank && (singular || w->pivot < RANK_SUSPECT))
            w->rank = hs_ak_rank(w->Gq);     /* redundant constraints: as a run decides */
        if (w->rank < k) {
            /* the constraints reduced to that rank: bounded multipliers off the manifold */
            w->minnorm = 1;
            if (reduced_step(w)) {
                snprintf(why, sizeof why, "singular Jacobian of the equilibrium conditions "
                         "reduced to the rank %zu of G_q after %d Newton steps", w->rank, it);
                return fail(w, eq, why, residual_block(w, w->F), err);
            }
        } else if (singular) {
            /* redundant constraints: the least-norm step, unless refused */
            w->minnorm = 1;
            if (w->a->m->set.strict_rank || !w->k || minnorm_step(w)) {
                snprintf(why, sizeof why, "singular Jacobian of the equilibrium conditions "
                         "after %d Newton steps", it);
                return fail(w, eq, why, singular_block(w), err);
            }
        } else {
            solve_step(w);
        }
        if (it == 0) {
            qref = fmax(qref, max_abs(w->dz->data, n));
            lref = fmax(lref, max_abs(w->dz->data + n, k));
        }
        double rel = fmax(rel_step(w->dz->data, w->z->data, n, qref),
                          rel_step(w->dz->data + n, w->z->data + n, k, lref));
        small = rel <= SMALL_STEP ? small + 1 : 0;
        w->flat_step = rel;
        memcpy(w->flat_dq, w->dz->data, n * sizeof *w->flat_dq);
        if (rel <= STEP_TOL || small >= 4) {
            /* the step is at round-off: take it and stop */
            eq->iterations = it + 1;
            take_step(w);
            w->stop = STOP_STEP;
            return 0;
        }
        /* the linear model is not trusted beyond max(1, |q|): a turning
         * point of the force (sin near pi/2) would send Newton many basins
         * away */
        double len = max_abs(w->dz->data, n), cap = fmax(1.0, max_abs(w->z->data, n));
        if (len > cap)
            gsl_vector_scale(w->dz, cap / len);
        if (line_search(w, &phi)) {
            if (phi0 > 0 && sqrt(phi / phi0) <= 64 * DBL_EPSILON) {
                /* the residual at round-off of the start's: a flat equilibrium
                 * (a critical speed, a cubic force: Newton linear), where the
                 * round-off of Q stops the descent */
                eq->floor = sqrt(phi / phi0);
                w->stop = STOP_FLAT;
                return 0;
            }
            snprintf(why, sizeof why, "the line search cannot reduce the residual after %d "
                     "Newton steps (a local minimum of |F| that is not an equilibrium)", it);
            return fail(w, eq, why, residual_block(w, w->F), err);
        }
    }
}

/* Round-off shown as 0 (analysis.h): the coordinates of q* below
 * HS_AN_Q_ROUNDOFF of the size of the point (its largest coordinate or the
 * start's), the multipliers whose reaction max_i |G_q,ji lambda_j| is below
 * it of the largest force term (no -8.8e-52 for a coordinate that is 0);
 * F at the point so cleaned, or the point as it was when F is not finite
 * there. */
static void flush_roundoff(newton *w, const double *q_start)
{
    size_t n = w->n, k = w->k, N = w->N;
    hs_an *a = w->a;
    double *z = w->z->data, *keep = w->zt->data;
    if (residual(w, w->z, w->F))
        return;
    memcpy(keep, z, N * sizeof *z);
    double qs = HS_AN_Q_ROUNDOFF * fmax(max_abs(q_start, n), max_abs(z, n));
    double fs = HS_AN_Q_ROUNDOFF * w->fscale_Q, *react = w->work->data;
    memset(react, 0, k * sizeof *react);
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
    if (changed && residual(w, w->z, w->F)) {
        memcpy(z, keep, N * sizeof *z);
        residual(w, w->z, w->F);
    }
}

/* Every success is checked (a bead on a tilted wire once stopped with a
 * least-norm step of 0 and the residual of its weight, exit 0): row by row,
 *     |F_i| <= VERIFY_TOL * (the size of the terms of F_i at q*)
 * with the terms of a force row |Q_i| + sum_j |G_q ji lambda_j| and
 * sum_c |S_ic| max(|q_c|, |q0_c|) (what Q_i changes by as q moves by its
 * own size: the round-off a residual of q leaves in Q_i), and of a
 * constraint row sum_c |G_q jc| max(|q_c|, |q0_c|).  A flat equilibrium
 * (Q ~ dq^3, the line search at the round-off floor) is judged by the
 * forces met on the way (the stiffness at the start) and by the last
 * Newton step, at most FLAT_STEP of the point.  F and the outputs must be
 * those of z.  0 when verified; else exit 3: the way Newton stopped, the
 * point and the row that is not balanced. */
static int verify(newton *w, hs_equil *eq, hs_error *err)
{
    hs_an *a = w->a;
    size_t n = w->n, k = w->k, worst = 0;
    const double *q = w->z->data, *F = w->F->data, *q0 = w->q0;
    double ratio = 0, *tG = w->tG, keep = w->sscale;
    hs_ak_fill_S(a, q + n, w->S);
    memset(tG, 0, k * sizeof *tG);
    for (size_t e = 0; e < a->gq.cnt; e++) {
        size_t j = (size_t)a->gq.r[e], c = (size_t)a->gq.c[e];
        tG[j] += fabs(a->out_eq[a->off_Gq + e]) * fmax(fabs(q[c]), fabs(q0[c]));
    }
    for (size_t i = 0; i < n + k; i++) {
        double scale = i < n ? w->tQ[i] : tG[i - n];
        for (size_t c = 0; i < n && c < n; c++)
            scale += fabs(gsl_matrix_get(w->S, i, c)) * fmax(fabs(q[c]), fabs(q0[c]));
        if (i < n && w->stop == STOP_FLAT)
            scale = fmax(scale, w->sQ[i]);
        double r = fabs(F[i]) == 0 ? 0 : scale > 0 ? fabs(F[i]) / scale : (double)INFINITY;
        if (r > ratio) {
            ratio = r;
            worst = i;
        }
    }
    w->sscale = keep;
    int flat_far = w->stop == STOP_FLAT && !(w->flat_step <= FLAT_STEP);
    if (ratio <= VERIFY_TOL && !flat_far)
        return 0;
    char why[320], b1[32], b2[32];
    memcpy(w->best, w->z->data, w->N * sizeof *w->best);
    if (w->stop == STOP_FLAT && flat_far)
        snprintf(why, sizeof why, "the line search stopped at %s of the start's residual "
                 "after %d Newton steps, but the next Newton step is %s of the size of the "
                 "point, not a flat equilibrium", hs_ak_num(b1, eq->floor), eq->iterations,
                 hs_ak_num(b2, w->flat_step));
    else if (w->stop == STOP_FLAT)
        snprintf(why, sizeof why, "the line search stopped at %s of the start's residual "
                 "after %d Newton steps, but the residual is %s times the size of the force "
                 "terms there, not round-off", hs_ak_num(b1, eq->floor), eq->iterations,
                 hs_ak_num(b2, ratio));
    else if (w->stop == STOP_STEP && w->minnorm)
        snprintf(why, sizeof why, "singular Jacobian of the equilibrium conditions after %d "
                 "Newton steps, and its least-norm step is 0 while the residual stays at %s "
                 "times the size of the force terms: a force that no constraint reaction "
                 "balances", eq->iterations, hs_ak_num(b1, ratio));
    else if (w->stop == STOP_STEP)
        snprintf(why, sizeof why, "Newton's step fell to round-off after %d steps but the "
                 "residual did not (%s times the size of the force terms)", eq->iterations,
                 hs_ak_num(b1, ratio));
    else
        snprintf(why, sizeof why, "the residual after %d Newton steps is %s times the size "
                 "of the force terms, not round-off", eq->iterations, hs_ak_num(b1, ratio));
    if (flat_far)
        worst = argmax_abs(w->flat_dq, n);
    eq->floor = 0;
    return fail(w, eq, why, worst, err);
}

/* Newton's start at q: z = (q, lambda by least squares), F, the merit's
 * weights (the row scales of J there).  0, or -1 when a value is not finite. */
static int start(newton *w, const double *q)
{
    memcpy(w->z->data, q, w->n * sizeof *q);
    if (!hs_ak_eval_eq(w->a, q))
        return -1;
    start_lambda(w);
    if (residual(w, w->z, w->F))
        return -1;
    jacobian(w, w->z);
    row_scales(w->J, w->W);
    w->have_best = 0;
    return 0;
}

/* Newton failed from a start off the constraint manifold: once more from
 * the start projected onto G = 0, with the rank of G_q decided there
 * (constraints redundant on the manifold but not off it, x^2 + y^2 - r^2
 * beside x - r cos th, y - r sin th with x, y not yet on the circle, are
 * found so, and the steps reduced to that rank).  The first failure (rc,
 * err) stands when the projection does not converge, does not move the
 * start, or Newton fails again. */
static int retry_projected(newton *w, hs_equil *eq, int rc, hs_error *err)
{
    size_t n = w->n, k = w->k, rank = k;
    if (!k || w->a->m->set.strict_rank)
        return rc;
    double *q = malloc(n * sizeof *q);
    if (!q)
        return rc;
    memcpy(q, w->q0, n * sizeof *q);
    hs_error first = *err;
    if (hs_ak_project(w->a, q, &rank) == 0 && memcmp(q, w->q0, n * sizeof *q) &&
        start(w, q) == 0) {
        w->rank = rank;
        hs_error_init(err);
        if ((rc = iterate(w, eq, err)) != 0)
            *err = first;
    }
    free(q);
    return rc;
}

static int equilibrium(hs_an *a, const double *q_start, hs_equil *eq, hs_error *err)
{
    size_t n = a->n, k = a->k;
    memset(eq, 0, sizeof *eq);
    eq->n = n;
    eq->k = k;
    eq->q = calloc(n, sizeof *eq->q);
    eq->lambda = calloc(k + 1, sizeof *eq->lambda);
    newton w;
    if (newton_alloc(&w, a) || !eq->q || !eq->lambda) {
        newton_free(&w);
        return hs_error_nomem(err);
    }
    memcpy(eq->q, q_start, n * sizeof *eq->q);
    w.q0 = q_start;
    w.rank = k;
    int rc;
    if (start(&w, q_start)) {
        rc = hs_ak_nonfinite(a, 0, q_start, HS_EXIT_INCONSISTENT, "in the equilibrium "
                             "conditions at the start point (the initial position)", err);
        goto done;
    }
    rc = iterate(&w, eq, err);
    if (rc == HS_EXIT_INCONSISTENT)
        rc = retry_projected(&w, eq, rc, err);
    if (!rc) {
        /* with redundant constraints Newton's multiplier is one of many:
         * the one of least norm at q* (Newton's own where G_q has full rank) */
        eq->rank = k;
        if (k && hs_ak_eval_eq(a, w.z->data)) {
            minnorm_lambda(&w, w.z->data + n, &eq->rank, 1);
            if (eq->rank < k)
                residual(&w, w.z, w.F);
        }
        flush_roundoff(&w, q_start);
        if (residual(&w, w.z, w.F) == 0 && (rc = verify(&w, eq, err)))
            goto done;
        eq->sscale = w.sscale;
        memcpy(eq->q, w.z->data, n * sizeof *eq->q);
        memcpy(eq->lambda, w.z->data + n, k * sizeof *eq->lambda);
        residual_norms(&w, w.F, eq);
    }
done:
    newton_free(&w);
    return rc;
}

int hs_an_equilibrium(hs_an *a, const double *q_start, hs_equil *eq, hs_error *err)
{
    int r = hs_ak_sparse(a) ? hs_ak_sparse_equilibrium(a, q_start, eq, err)
                            : equilibrium(a, q_start, eq, err);
    return r;
}

void hs_an_equil_free(hs_equil *eq)
{
    if (!eq)
        return;
    free(eq->q);
    free(eq->lambda);
    eq->q = eq->lambda = NULL;
}
