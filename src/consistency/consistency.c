/* Projection onto the constraint manifold and rank diagnosis. */
#include "internal.h"
#include "../linalg/linalg.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_permutation.h>

#define MAX_NEWTON 100
#define MAX_HALVINGS 30


static hs_proj *proj_new(const hs_model *m)
{
    hs_proj *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    size_t n = m->n, k = m->k ? m->k : 1;
    p->m = m;
    p->G = calloc(k, sizeof *p->G);
    p->Gt = calloc(k, sizeof *p->Gt);
    p->Gnew = calloc(k, sizeof *p->Gnew);
    p->r = calloc(k, sizeof *p->r);
    size_t nf = m->mass_kind == HS_MASS_FULL && !m->chain ? n : 1;   /* dense only when needed */
    p->W = calloc(nf * nf, sizeof *p->W);
    p->Mfull = calloc(nf * nf, sizeof *p->Mfull);
    p->WGt = calloc(nf * k, sizeof *p->WGt);
    p->Md = calloc(n, sizeof *p->Md);
    p->dq = calloc(n, sizeof *p->dq);
    p->qtry = calloc(n, sizeof *p->qtry);
    p->free_idx = calloc(n, sizeof *p->free_idx);
    p->fixed = calloc(k, 1);
    p->Wd = calloc(n, sizeof *p->Wd);
    p->work3k = hs_la_vector_alloc(3 * k);
    p->mu = hs_la_vector_alloc(k);
    p->Mff = hs_la_matrix_alloc(nf, nf);
    if (!p->G || !p->Gt || !p->Gnew || !p->r || !p->W || !p->Mfull || !p->WGt || !p->dq ||
        !p->qtry || !p->free_idx || !p->fixed || !p->Wd || !p->Md || !p->work3k || !p->mu ||
        !p->Mff) {
        hs_proj_free(p);
        return NULL;
    }
    return p;
}

hs_proj *hs_proj_new(const hs_model *m)
{
    hs_proj *r = proj_new(m);
    return r;
}

void hs_proj_free(hs_proj *p)
{
    if (!p)
        return;
    free(p->G);
    free(p->Gt);
    free(p->Gnew);
    free(p->r);
    free(p->W);
    free(p->Mfull);
    free(p->WGt);
    free(p->dq);
    free(p->qtry);
    free(p->free_idx);
    free(p->fixed);
    free(p->Wd);
    free(p->Md);
    if (p->work3k) gsl_vector_free(p->work3k);
    if (p->Ab) gsl_matrix_free(p->Ab);
    hs_la_spd_free(p->As);
    if (p->A) gsl_matrix_free(p->A);
    if (p->mu) gsl_vector_free(p->mu);
    if (p->Mff) gsl_matrix_free(p->Mff);
    if (p->rL) gsl_matrix_free(p->rL);
    if (p->rA) gsl_matrix_free(p->rA);
    if (p->rV) gsl_matrix_free(p->rV);
    if (p->rS) gsl_vector_free(p->rS);
    free(p->rBt);
    free(p->rmu);
    free(p->ry);
    free(p);
}

static double max_abs(const double *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        if (!(fabs(x[i]) <= s))
            s = fabs(x[i]);
    return s;
}

static double norm2(const double *x, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i] * x[i];
    return sqrt(s);
}

/* W = M^-1 restricted to the free coordinates (0 rows/columns for locked). */
static int build_W(hs_proj *p, hs_work *w, double t, const double *q, const double *v,
                   const unsigned char *lock, hs_error *err)
{
    const hs_model *m = p->m;
    size_t n = m->n;
    p->lock = lock;
    p->diagW = m->mass_kind != HS_MASS_FULL;
    p->msing = 0;
    if (m->chain) {            /* no metric formed: its saddle-point system, factored */
        int r = hs_chain_proj_factor(m, w, t, q);
        if (r > 0) {
            hs_error_set(err, hs_work_err(w)->code, "%s", hs_work_err(w)->msg);
            return err->code;
        }
        p->diagW = 0;
        p->chain_ok = r == 0;
        return 0;
    }
    if (p->diagW) {
        if (hs_dyn_mass_diag(m, w, t, q, v, p->Md)) {
            hs_error_set(err, hs_work_err(w)->code, "%s", hs_work_err(w)->msg);
            return err->code;
        }
        for (size_t i = 0; i < n; i++) {
            if (!(p->Md[i] >= 0))
                return hs_error_set(err, HS_EXIT_NUMERIC, "mass matrix is not positive "
                                    "definite at t=%.17g", t);
            p->msing |= p->Md[i] == 0;   /* massless: robust_build's norm */
            p->Wd[i] = lock && lock[i] ? 0 : p->Md[i] > 0 ? 1.0 / p->Md[i] : 0;
        }
        return 0;
    }
    if (hs_dyn_mass(m, w, t, q, v, p->Mfull)) {
        hs_error_set(err, hs_work_err(w)->code, "%s", hs_work_err(w)->msg);
        return err->code;
    }
    memset(p->W, 0, n * n * sizeof *p->W);
    size_t nf = 0;
    for (size_t i = 0; i < n; i++)
        if (!lock || !lock[i])
            p->free_idx[nf++] = i;
    gsl_matrix_view F = hs_la_submatrix(p->Mff, 0, 0, nf, nf);
    for (size_t a = 0; a < nf; a++)
        for (size_t b = 0; b < nf; b++)
            gsl_matrix_set(&F.matrix, a, b, p->Mfull[p->free_idx[a] * n + p->free_idx[b]]);
    if (nf && (hs_la_cholesky(&F.matrix) != GSL_SUCCESS ||
               gsl_linalg_cholesky_invert(&F.matrix) != GSL_SUCCESS)) {
        for (size_t i = 0; i < n; i++)
            if (!(p->Mfull[i * n + i] >= 0) || !m->k)
                return hs_error_set(err, HS_EXIT_NUMERIC, "mass matrix is not positive "
                                    "definite at t=%.17g", t);
        p->msing = 1;            /* semidefinite: robust_build's norm */
    }
    for (size_t a = 0; a < nf; a++)
        for (size_t b = 0; b < nf; b++)
            p->W[p->free_idx[a] * n + p->free_idx[b]] = gsl_matrix_get(&F.matrix, a, b);
    return 0;
}

/* G and G_t at (t, q); G_q sparse in w->pos, and dense in hs_work_Gq_dense(w) too when
 * the mass is full (the dense path of build_A reads it). */
static int constraints(const hs_proj *p, hs_work *w, double t, const double *q, double *G,
                       double *G_t)
{
    int rc = p->m->mass_kind == HS_MASS_FULL ? hs_dyn_constraints(p->m, w, t, q, G, G_t)
                                             : hs_dyn_constraints_sparse(p->m, w, t, q, G, G_t);
    /* a constraint an event let go (dynamics.h) is not projected onto: its
     * residual counts as met, its row of A is the identity (as a fixed one) */
    size_t nreleased = rc ? 0 : hs_work_get_stats(w).nreleased;
    for (size_t i = 0; nreleased && i < p->m->k; i++)
        if (hs_dyn_is_released(w, i)) {
            if (G)
                G[i] = 0;
            if (G_t)
                G_t[i] = 0;
        }
    return rc;
}

/* A = G_q W G_q^T, factored (Cholesky; in band storage when the dynamics
 * uses a band for C).  For a diagonal W it is assembled from the pairs of
 * G_q entries sharing a column (as C is in dynamics.c); for a full mass,
 * densely through WGt = W G_q^T.  A constraint that touches only locked
 * coordinates cannot be moved: it is marked fixed and its row and column
 * replaced by the identity (its multiplier is 0). */
static void set_A(hs_proj *p, hs_work *w, size_t i, size_t j, double v)
{
    const hs_cstruct cs = hs_work_cstruct(w);
    if (cs.banded)
        p->Ab->data[j * p->Ab->tda + (i - j)] = v;   /* i >= j */
    else
        p->A->data[i * p->A->tda + j] = p->A->data[j * p->A->tda + i] = v;
}

/* A of a sparse model (the dynamics' C is sparse, W diagonal): the pairs
 * into CHOLMOD's entries, a fixed row's off-diagonal left out, its diagonal 1;
 * factored, its condition checked as build_A's.  0 or -1. */
static int build_A_sparse(hs_proj *p, hs_work *w, const hs_cstruct *cs)
{
    const hs_model *m = p->m;
    size_t k = m->k;
    const double *Gz = hs_work_con_Gq(m, w);
    if (!p->As && !(p->As = hs_la_spd_new(k, cs->npair, cs->pair_i, cs->pair_j))) {
        p->nomem = 1;
        return -1;
    }
    for (size_t i = 0; i < k; i++)
        p->fixed[i] = hs_proj_row_fixed(p, m, w, i);
    double *x = hs_la_spd_values(p->As);
    const int *slot = hs_la_spd_slots(p->As), *diag = hs_la_spd_diag(p->As);
    for (size_t z = 0; z < cs->npair; z++) {
        size_t i = cs->pair_i[z], j = cs->pair_j[z];
        if (!p->fixed[i] && !p->fixed[j])
            x[slot[z]] +=
                Gz[cs->pair_pi[z]] * p->Wd[m->gq_col[cs->pair_pi[z]]] * Gz[cs->pair_pj[z]];
    }
    for (size_t i = 0; i < k; i++)
        if (p->fixed[i])
            x[diag[i]] = 1;
    int f = hs_la_spd_factor(p->As);
    p->nomem |= f == -2;
    if (f)
        return -1;
    double rcond = hs_la_spd_rcond(p->As, 0);
    if (p->full_rcond || !(rcond >= 1e-6))
        rcond = hs_la_spd_rcond(p->As, 1);
    if (!(rcond >= 1e-15))
        return -1;
    p->a_valid = 1;
    return 0;
}

static int build_A(hs_proj *p, hs_work *w)
{
    const hs_cstruct cs = hs_work_cstruct(w);
    const hs_model *m = p->m;
    size_t n = m->n, k = m->k;
    const double *Gz = hs_work_con_Gq(m, w);               /* G_q non-zeros, row order */
    p->robust = 0;
    if (p->msing)
        return -1;
    if (cs.sparse && p->diagW)
        return build_A_sparse(p, w, &cs);
    if ((cs.banded && !p->Ab && !(p->Ab = hs_la_matrix_alloc(k, cs.bw + 1))) ||
        (!cs.banded && !p->A && !(p->A = hs_la_matrix_alloc(k, k)))) {
        p->nomem = 1;
        return -1;
    }
    if (p->diagW) {
        if (cs.banded)
            memset(p->Ab->data, 0, k * p->Ab->tda * sizeof(double));
        else
            for (size_t i = 0; i < k; i++)
                memset(p->A->data + i * p->A->tda, 0, k * sizeof(double));
        for (size_t z = 0; z < cs.npair; z++) {
            size_t i = cs.pair_i[z], j = cs.pair_j[z];
            double v = Gz[cs.pair_pi[z]] * p->Wd[m->gq_col[cs.pair_pi[z]]] * Gz[cs.pair_pj[z]];
            if (cs.banded)
                p->Ab->data[j * p->Ab->tda + (i - j)] += v;
            else
                p->A->data[i * p->A->tda + j] += v;
        }
        if (!cs.banded)
            for (size_t i = 0; i < k; i++)
                for (size_t j = 0; j < i; j++)
                    p->A->data[j * p->A->tda + i] = p->A->data[i * p->A->tda + j];
    } else {
        const double *Gq = hs_work_Gq_dense(w);
        for (size_t c = 0; c < n; c++)
            for (size_t j = 0; j < k; j++) {
                double s = 0;
                for (size_t l = 0; l < n; l++)
                    s += p->W[c * n + l] * Gq[j * n + l];
                p->WGt[c * k + j] = s;
            }
        for (size_t i = 0; i < k; i++)
            for (size_t j = 0; j <= i; j++) {
                double s = 0;
                for (size_t c = 0; c < n; c++)
                    s += Gq[i * n + c] * p->WGt[c * k + j];
                set_A(p, w, i, j, s);
            }
    }
    for (size_t i = 0; i < k; i++) {
        int fixed = p->fixed[i] = hs_proj_row_fixed(p, m, w, i);
        if (!fixed)
            continue;
        size_t lo = cs.banded && i > cs.bw ? i - cs.bw : 0;
        size_t hi = cs.banded ? (i + cs.bw < k ? i + cs.bw : k - 1) : k - 1;
        for (size_t j = lo; j <= hi; j++)
            set_A(p, w, i > j ? i : j, i > j ? j : i, 0);
        set_A(p, w, i, i, 1);
    }
    gsl_matrix_view A = hs_la_submatrix(cs.banded ? p->Ab : p->A, 0, 0, k,
                                             cs.banded ? cs.bw + 1 : k);
    if (cs.banded ? hs_la_band_cholesky(&A.matrix) != 0
                  : hs_la_cholesky(&A.matrix) != GSL_SUCCESS)
        return -1;
    /* the squared ratio of the smallest to the largest pivot is a cheap
     * guess of the reciprocal condition; GSL's estimate runs when the
     * guess is poor, and always at the start of a run (full_rcond) */
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < k; i++) {
        double l = A.matrix.data[i * A.matrix.tda + (cs.banded ? 0 : i)];
        lo = l < lo ? l : lo;
        hi = l > hi ? l : hi;
    }
    double rcond = (lo / hi) * (lo / hi);
    if (p->full_rcond || !(rcond >= 1e-6)) {
        if (cs.banded)
            gsl_linalg_cholesky_band_rcond(&A.matrix, &rcond, p->work3k);
        else
            gsl_linalg_cholesky_rcond(&A.matrix, &rcond, p->work3k);
    }
    if (!(rcond >= 1e-15))
        return -1;
    p->a_valid = 1;
    return 0;
}

/* build_A, else robust_build: 0, or -1 when neither can factor. */
static int factor_A(hs_proj *p, hs_work *w)
{
    if (p->m->chain) {         /* factored by build_W; no robust path (chain.c) */
        p->robust = 0;
        memset(p->fixed, 0, p->m->k);
        p->a_valid = p->chain_ok;
        return p->chain_ok ? 0 : -1;
    }
    if (build_A(p, w) == 0)
        return 0;
    if (p->nomem || (hs_work_get_stats(w).strict && !p->msing))
        return -1;
    return hs_proj_robust_build(p, w);
}

/* out = W G_q^T A^-1 rhs */
static void solve_step(hs_proj *p, hs_work *w, const double *rhs, double *out)
{
    const hs_cstruct cs = hs_work_cstruct(w);
    const hs_model *m = p->m;
    size_t n = m->n, k = m->k;
    if (m->chain) {
        hs_chain_proj_solve(m, w, rhs, out);
        return;
    }
    if (p->robust) {
        hs_proj_robust_step(p, rhs, out);
        return;
    }
    gsl_vector_view mu = hs_la_subvector(p->mu, 0, k);
    for (size_t i = 0; i < k; i++)
        mu.vector.data[i] = p->fixed[i] ? 0 : rhs[i];
    if (cs.sparse && p->diagW) {
        if (hs_la_spd_solve(p->As, mu.vector.data))
            p->nomem = 1;           /* (the factor's solve: memory held, in practice) */
    } else if (cs.banded) {
        hs_la_band_svx(p->Ab, mu.vector.data);
    } else {
        gsl_matrix_view A = hs_la_submatrix(p->A, 0, 0, k, k);
        gsl_linalg_cholesky_svx(&A.matrix, &mu.vector);
    }
    if (p->diagW) {
        const double *Gz = hs_work_con_Gq(m, w);
        memset(out, 0, n * sizeof *out);
        for (size_t i = 0; i < k; i++)
            for (int z = m->gq_start[i]; z < m->gq_start[i + 1]; z++)
                out[m->gq_col[z]] += Gz[z] * mu.vector.data[i];
        for (size_t c = 0; c < n; c++)
            out[c] *= p->Wd[c];
        return;
    }
    for (size_t c = 0; c < n; c++) {
        double s = 0;
        for (size_t j = 0; j < k; j++)
            s += p->WGt[c * k + j] * mu.vector.data[j];
        out[c] = s;
    }
}

static void list_violations(const hs_model *m, const double *G, double tol, char *buf,
                            size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < m->k && len + 1 < cap; i++)
        if (!(fabs(G[i]) <= tol))
            len += (size_t)snprintf(buf + len, cap - len, "%s%s (residual %.3g)",
                                    len ? ", " : "", m->cname[i], G[i]);
}

/* Minimum-norm Newton steps q <- q - W G_q^T A^-1 G with a backtracking
 * line search on |G|, until max |G| <= tol (and at least min_steps steps
 * while G != 0).  p->G holds G(q) on return. */
/* Is |G_i| within the tolerance for every i?  The tolerance is raised to
 * the round-off floor of G_i at q, 16 eps sum_j |dG_i/dq_j q_j| (x^2 + y^2 -
 * l^2 with l = 1000 cannot come closer to 0 than about 1e-10): an absolute
 * tolerance alone would make large models unprojectable.  Needs G_q at q
 * in w->pos. */
static int satisfied(const hs_model *m, const hs_work *w, const double *q, const double *G,
                     double tol)
{
    const double *Gz = hs_work_con_Gq(m, w);
    for (size_t i = 0; i < m->k; i++) {
        double scale = 0;
        for (int z = m->gq_start[i]; z < m->gq_start[i + 1]; z++)
            scale += fabs(Gz[z] * q[m->gq_col[z]]);
        if (!(fabs(G[i]) <= fmax(tol, 16 * DBL_EPSILON * scale)))
            return 0;
    }
    return 1;
}

static int newton(hs_proj *p, hs_work *w, double t, double *q, const double *v,
                  const unsigned char *lock, double tol, int min_steps, hs_error *err)
{
    const hs_model *m = p->m;
    size_t n = m->n, k = m->k;
    if (constraints(p, w, t, q, p->G, p->Gt)) {
        hs_error_set(err, hs_work_err(w)->code, "%s", hs_work_err(w)->msg);
        return err->code;
    }
    int it = 0;
    while (!satisfied(m, w, q, p->G, tol) || (it < min_steps && max_abs(p->G, k) > 0)) {
        if (it++ >= MAX_NEWTON)
            break;
        if (build_W(p, w, t, q, v, lock, err))
            return err->code;
        if (factor_A(p, w)) {
            if (p->nomem)
                return hs_error_nomem(err);
            char buf[600];
            list_violations(m, p->G, tol, buf, sizeof buf);
            return hs_error_set(err, HS_EXIT_INCONSISTENT, "cannot project onto the "
                                "constraints at t=%.17g: G_q W G_q^T is singular%s (the "
                                "constraints are dependent here%s); unmet: %s", t,
                                lock ? " with the locked coordinates held" : "",
                                lock ? ", or the locked coordinates leave no freedom" : "",
                                buf[0] ? buf : "none");
        }
        for (size_t i = 0; i < k; i++)
            if (p->fixed[i] && !(fabs(p->G[i]) <= tol))
                return hs_error_set(err, HS_EXIT_INCONSISTENT, "constraint '%s' involves "
                                    "only locked coordinates and is violated (residual "
                                    "%.3g): unlock one of them or correct the initial "
                                    "values", m->cname[i], p->G[i]);
        solve_step(p, w, p->G, p->dq);
        double g0 = norm2(p->G, k), alpha = 1;
        int accepted = 0;
        for (int h = 0; h < MAX_HALVINGS; h++, alpha *= 0.5) {
            for (size_t c = 0; c < n; c++)
                p->qtry[c] = q[c] - alpha * p->dq[c];
            if (constraints(p, w, t, p->qtry, p->Gnew, NULL))
                continue;            /* outside the domain: shorter step */
            if (norm2(p->Gnew, k) < (1 - 1e-4 * alpha) * g0 || norm2(p->Gnew, k) == 0) {
                accepted = 1;
                break;
            }
        }
        if (!accepted) {
            constraints(p, w, t, q, p->G, NULL);    /* G_q back at q for the check */
            break;
        }
        memcpy(q, p->qtry, n * sizeof *q);
        memcpy(p->G, p->Gnew, k * sizeof *p->G);
    }
    if (!satisfied(m, w, q, p->G, tol)) {
        char buf[600];
        list_violations(m, p->G, tol, buf, sizeof buf);
        return hs_error_set(err, HS_EXIT_INCONSISTENT, "could not satisfy the constraints "
                            "near the given position at t=%.17g (%d Newton steps): %s "
                            "(tolerance %g)", t, it, buf, tol);
    }
    return 0;
}

/* From a point on the manifold, move to the point nearest to q0 in the
 * M-norm: the linearized problem min |x - q0|_M s.t. G(q) + G_q (x - q) = 0
 * gives x = q0 - W G_q^T A^-1 (G(q) + G_q (q0 - q)); each x is pulled back
 * onto the manifold by Newton steps.  Stops when the point no longer moves;
 * a step that does not bring the point nearer to q0 is refused, so the
 * branch chosen by the first phase is kept. */
/* (a - b)^T M (a - b) with the mass matrix of the last build_W (a
 * structured embedding's metric is not formed: its kinetic energy at a,
 * at the velocity a - b, twice). */
static double mdist(hs_proj *p, hs_work *w, double t, const double *a, const double *b)
{
    size_t n = p->m->n;
    double s = 0;
    if (p->m->chain) {         /* no metric formed: 2 T2 of the velocity a - b at a */
        for (size_t i = 0; i < n; i++)
            p->qtry[i] = a[i] - b[i];
        return hs_chain_metric_norm(p->m, w, t, a, p->qtry, &s) ? (double)INFINITY : s;
    }
    if (p->diagW) {
        for (size_t i = 0; i < n; i++)
            s += (a[i] - b[i]) * p->Md[i] * (a[i] - b[i]);
        return s;
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            s += (a[i] - b[i]) * p->Mfull[i * n + j] * (a[j] - b[j]);
    return s;
}

static void nearest_point(hs_proj *p, hs_work *w, double t, double *q, const double *v,
                          const double *q0, const unsigned char *lock, double tol)
{
    const hs_model *m = p->m;
    size_t n = m->n, k = m->k;
    double *x = malloc(2 * n * sizeof *x), *rhs = malloc(k * sizeof *rhs);
    if (!x || !rhs)
        goto out;
    double *save = x + n;
    for (int it = 0; it < 50; it++) {
        hs_error e;
        hs_error_init(&e);
        if (constraints(p, w, t, q, p->G, NULL) || build_W(p, w, t, q, v, lock, &e) ||
            factor_A(p, w))
            break;
        for (size_t c = 0; c < n; c++)
            x[c] = q0[c] - q[c];
        for (size_t i = 0; i < k; i++)
            rhs[i] = p->G[i] + hs_dyn_gq_dot(m, w, i, x);
        solve_step(p, w, rhs, p->dq);
        double d_old = mdist(p, w, t, q, q0), move = 0, scale = 0;
        for (size_t c = 0; c < n; c++) {
            save[c] = q[c];
            x[c] = q0[c] - p->dq[c];
            move += (x[c] - q[c]) * (x[c] - q[c]);
            scale += q[c] * q[c];
        }
        if (move <= 1e-28 * (1 + scale))
            break;
        memcpy(q, x, n * sizeof *q);
        if (newton(p, w, t, q, v, lock, tol, 1, &e)) {
            memcpy(q, save, n * sizeof *q);
            break;
        }
        if (mdist(p, w, t, q, q0) > d_old * (1 + 1e-12)) { /* not nearer: keep the old point */
            memcpy(q, save, n * sizeof *q);
            break;
        }
    }
out:
    free(x);
    free(rhs);
    constraints(p, w, t, q, p->G, NULL);
}

/* max_i |r_i| / (its round-off floor): <= 1 when r is at round-off. */
static double velocity_excess(const hs_model *m, const hs_work *w, const double *v,
                              const double *r)
{
    const double *Gz = hs_work_con_Gq(m, w), *Gt = hs_work_con_Gt(m, w);
    double worst = 0;
    for (size_t i = 0; i < m->k; i++) {
        double scale = fabs(Gt[i]);
        for (int z = m->gq_start[i]; z < m->gq_start[i + 1]; z++)
            scale += fabs(Gz[z] * v[m->gq_col[z]]);
        double e = fabs(r[i]) / fmax(DBL_MIN, 2 * DBL_EPSILON * scale);
        if (!(e <= worst))
            worst = e;
    }
    return worst;
}

/* Velocities: v <- v - W G_q^T A^-1 (G_t + G_q v), G_q and G_t at the
 * projected q (w->pos holds them: every path of newton and nearest_point
 * ends with the constraints evaluated at q).  The factorization of A and W
 * from the last Newton step serve, corrected by up to two more solves with
 * the same factor (q moved by about the tolerance, so A changed by as
 * little); only when that does not bring the residual to round-off are W
 * and A built anew at q. */
static int project_velocities(hs_proj *p, hs_work *w, double t, const double *q, double *v,
                              const unsigned char *lock, hs_error *err)
{
    const hs_model *m = p->m;
    size_t n = m->n, k = m->k;
    const double *Gt = hs_work_con_Gt(m, w);
    for (int pass = 0; pass < 2; pass++) {
        if (!p->a_valid || pass == 1) {
            if (build_W(p, w, t, q, v, lock, err))
                return err->code;
            int failed = factor_A(p, w);
            if (failed && p->nomem)
                return hs_error_nomem(err);
            if (failed)
                return hs_error_set(err, HS_EXIT_INCONSISTENT, "cannot project the "
                                    "velocities at t=%.17g: G_q W G_q^T is singular", t);
        }
        for (int it = 0; it < 3; it++) {
            for (size_t i = 0; i < k; i++)
                p->r[i] = hs_dyn_is_released(w, i) ? 0 : Gt[i] + hs_dyn_gq_dot(m, w, i, v);
            if (velocity_excess(m, w, v, p->r) <= 1)
                return 0;
            solve_step(p, w, p->r, p->dq);
            for (size_t c = 0; c < n; c++)
                v[c] -= p->dq[c];
        }
        for (size_t i = 0; i < k; i++)
            p->r[i] = hs_dyn_is_released(w, i) ? 0 : Gt[i] + hs_dyn_gq_dot(m, w, i, v);
        if (velocity_excess(m, w, v, p->r) <= 1)
            return 0;
    }
    return 0;
}

static int proj_apply(hs_proj *p, hs_work *w, double t, double *q, double *v,
                      const unsigned char *lock, double tol, int min_steps, hs_error *err)
{
    const hs_model *m = p->m;
    size_t n = m->n, k = m->k;
    if (!k)
        return 0;
    double *q0 = NULL;
    if (min_steps == 0) {      /* the start of a run: remember the user's point */
        q0 = malloc(n * sizeof *q0);
        if (!q0)
            return hs_error_nomem(err);
        memcpy(q0, q, n * sizeof *q0);
    }
    p->a_valid = 0;
    p->full_rcond = q0 != NULL;
    int rc = newton(p, w, t, q, v, lock, tol, min_steps, err);
    if (!rc && q0)
        nearest_point(p, w, t, q, v, q0, lock, tol);
    free(q0);
    if (rc)
        return rc;
    return project_velocities(p, w, t, q, v, lock, err);
}

int hs_proj_apply(hs_proj *p, hs_work *w, double t, double *q, double *v,
                  const unsigned char *lock, double tol, int min_steps, hs_error *err)
{
    int r = proj_apply(p, w, t, q, v, lock, tol, min_steps, err);
    return r;
}

static int cons_start(const hs_model *m, hs_work *w, double *q, double *v,
                      FILE *report, hs_error *err)
{
    size_t n = m->n, k = m->k;
    double t = m->t0;
    if (!k)
        return 0;
    char msg[800];
    size_t dep = 0;
    size_t rank = hs_cons_rank(m, w, t, q, msg, sizeof msg, &dep);
    /* redundant constraints: the rank-revealing solve from the start (its
     * multipliers the minimum-norm ones), unless consistency.dependent
     * is reject */
    hs_dyn_set_rank0(w, rank);
    /* a constraint with a zero gradient at q0 (x^2 + y^2 = 0) is not a
     * redundant one: refused as before */
    int zero_row = 0;
    if (rank < k && !hs_dyn_constraints_sparse(m, w, t, q, NULL, NULL))
        for (size_t i = 0; i < k && !zero_row; i++) {
            int zero = 1;
            for (int z = m->gq_start[i]; z < m->gq_start[i + 1]; z++)
                zero &= hs_work_con_Gq(m, w)[z] == 0;
            if (zero) {
                zero_row = 1;
                dep = i;
            }
        }
    if (rank < k && (m->set.strict_rank || zero_row)) {
        hs_error_set(err, HS_EXIT_MODEL, "the constraints are dependent at the initial "
                     "position (rank of G_q is %zu, there %s %zu constraint%s): %s%s", rank,
                     k == 1 ? "is" : "are", k, k == 1 ? "" : "s", msg, zero_row ? "" :
                     " (consistency.dependent is reject)");
        hs_model_place(m, m->cpos[dep], err);     /* at the first dependent one */
        return err->code;
    }
    double *G = calloc(k, sizeof *G), *Gd = calloc(k, sizeof *Gd), *Gt = calloc(k, sizeof *Gt);
    double *q_old = calloc(n, sizeof *q_old), *v_old = calloc(n, sizeof *v_old);
    hs_proj *p = hs_proj_new(m);
    int rc = 0;
    if (!G || !Gd || !Gt || !q_old || !v_old || !p) {
        rc = hs_error_nomem(err);
        goto out;
    }
    if (hs_dyn_constraints_sparse(m, w, t, q, G, Gt)) {
        /* a domain error in the model at the initial data: a model error,
         * positioned in the file */
        rc = hs_error_adopt(err, hs_work_err(w), HS_EXIT_MODEL);
        if (rc != HS_EXIT_NOMEM)
            hs_error_append(err, ", the initial position: the expression must be finite "
                            "there (change 'initial', or the expression)");
        goto out;
    }
    for (size_t i = 0; i < k; i++)
        Gd[i] = Gt[i] + hs_dyn_gq_dot(m, w, i, v);
    size_t nreleased = hs_work_get_stats(w).nreleased;
    for (size_t i = 0; nreleased && i < k; i++)
        if (hs_dyn_is_released(w, i))                         /* an open contact: no residual */
            G[i] = Gd[i] = 0;
    double tol = m->set.tol;
    /* round-off floors as in satisfied(): |G_i| against sum |dG_i/dq_j q_j|,
     * |Gdot_i| against sum |dG_i/dq_j v_j| + |G_t,i| */
    int pos_bad = !satisfied(m, w, q, G, tol), vel_bad = 0;
    for (size_t i = 0; i < k; i++) {
        double scale = fabs(Gt[i]);
        for (int z = m->gq_start[i]; z < m->gq_start[i + 1]; z++)
            scale += fabs(hs_work_con_Gq(m, w)[z] * v[m->gq_col[z]]);
        if (!(fabs(Gd[i]) <= fmax(tol, 16 * DBL_EPSILON * scale)))
            vel_bad = 1;
    }
    if (!pos_bad && !vel_bad)
        goto out;                                   /* consistent: untouched */
    if (m->set.mode == HS_CONS_REJECT) {
        char buf[900];
        size_t len = 0, first = k;
        buf[0] = '\0';
        for (size_t i = 0; i < k && len + 1 < sizeof buf; i++) {
            if (first == k && (fabs(G[i]) > tol || fabs(Gd[i]) > tol))
                first = i;
            if (fabs(G[i]) > tol)
                len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s: position "
                                        "residual G = %.6g", len ? "; " : "", m->cname[i], G[i]);
            if (fabs(Gd[i]) > tol && len + 1 < sizeof buf)
                len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s: velocity "
                                        "residual G_t + G_q v = %.6g", len ? "; " : "",
                                        m->cname[i], Gd[i]);
        }
        rc = hs_error_set(err, HS_EXIT_INCONSISTENT, "inconsistent initial data "
                          "(consistency mode reject, tolerance %g): %s; give 'initial' data on "
                          "the constraints (G = 0, and a tangent velocity: G_t + G_q v = 0), "
                          "or use the default consistency mode, project, which moves them "
                          "there and reports the change", tol, buf);
        if (first < k)
            hs_model_place(m, m->cpos[first], err);     /* at the first violated one */
        goto out;
    }
    memcpy(q_old, q, n * sizeof *q);
    memcpy(v_old, v, n * sizeof *v);
    int any_lock = 0;
    for (size_t i = 0; i < n; i++)
        any_lock |= m->lock[i];
    rc = hs_proj_apply(p, w, t, q, v, any_lock ? m->lock : NULL, tol, 0, err);
    if (rc) {
        rc = hs_error_recode(err, HS_EXIT_INCONSISTENT);
        goto out;
    }
    if (report) {
        fprintf(report, "holosim: initial data projected onto the constraints "
                "(consistency mode project, tolerance %g):\n", tol);
        for (size_t i = 0; i < n; i++) {
            if (q[i] != q_old[i])
                fprintf(report, "  %-12s %.17g -> %.17g\n", m->qname[i], q_old[i], q[i]);
            if (v[i] != v_old[i])
                fprintf(report, "  %-12s %.17g -> %.17g\n", m->vname[i], v_old[i], v[i]);
        }
        double *G2 = calloc(k, sizeof *G2), *Gt2 = calloc(k, sizeof *Gt2);
        if (G2 && Gt2 && !hs_dyn_constraints_sparse(m, w, t, q, G2, Gt2)) {
            for (size_t i = 0; i < k; i++) {
                if (hs_dyn_is_released(w, i))
                    continue;
                double s = Gt2[i] + hs_dyn_gq_dot(m, w, i, v);
                fprintf(report, "  constraint %-10s G: %.3g -> %.3g   Gdot: %.3g -> %.3g\n",
                        m->cname[i], G[i], G2[i], Gd[i], s);
            }
        }
        free(G2);
        free(Gt2);
    }
out:
    free(G);
    free(Gd);
    free(Gt);
    free(q_old);
    free(v_old);
    hs_proj_free(p);
    return rc;
}

int hs_cons_start(const hs_model *m, hs_work *w, double *q, double *v,
                  FILE *report, hs_error *err)
{
    int r = cons_start(m, w, q, v, report, err);
    return r;
}
