/* RATTLE and its symmetric compositions (integrate.h): fixed-step methods
 * that step themselves, for models with a constant mass matrix M (the
 * Cartesian form with constant masses) and forces Q(t, q) that do not
 * depend on the velocities.  One RATTLE step of h from (t0, q0, v0)
 * (Andersen 1983; Leimkuhler and Skeel 1994; Hairer, Lubich, Wanner,
 * "Geometric Numerical Integration", 2nd ed., Springer 2006, VII.1.4):
 *   v+ = v0 + h/2 M^-1 (Q(t0, q0) + G_q(t0, q0)^T lambda)
 *   q1 = q0 + h v+,            G(t1, q1) = 0            (k equations)
 *   v1 = v+ + h/2 M^-1 (Q(t1, q1) + G_q(t1, q1)^T mu)
 *   G_q(t1, q1) v1 + G_t(t1, q1) = 0                    (k, linear)
 *
 * The position step is Newton's method on x = h^2/2 lambda with the
 * Jacobian G_q(q1) M^-1 G_q(q0)^T taken at q1 = q0 (simplified Newton):
 * C0 = G_q M^-1 G_q^T at the step's start, factored by the dynamics at
 * that state with the dynamics' own band or dense structure and reused for
 * every iteration; an iteration costs one evaluation of G.  It runs until
 * the residual is at round-off: every |G_i| relative to its scale
 * sum_j |dG_i/dq_j| (|q_j| + |h v_j|) no longer halving below 4e-14 (or
 * no longer falling below 1e-11).  A residual left above round-off breaks
 * the symmetry a little at every step and the energy error drifts.  The iteration converges linearly, faster for smaller h |v|
 * against the constraints' curvature (the Jacobian's change over the
 * step); more than 100 iterations is a failure (the step is too large).  The velocity step is one solve with C at
 * q1 (again the dynamics' factor).  For time-independent constraints the
 * method is symplectic and symmetric, of order 2; its energy error stays
 * bounded over exponentially long times instead of drifting.
 *
 * The work integrals (W_R, W_nc, W_t) advance by the trapezoidal rule on
 * their rates at the step's ends, which keeps the augmented step symmetric
 * and of order 2, so the compositions raise its order with the rest of the
 * state and the energy balance closes to the method's accuracy.
 *
 * A composition of s RATTLE steps of gamma_j h (symmetric coefficients,
 * sum 1) has order 4, 6 or 8 (Hairer, Lubich, Wanner V.3):
 *   rattle4  s = 3:  Yoshida (1990, Phys. Lett. A 150, 262), the "triple
 *            jump": gamma_1 = gamma_3 = 1/(2 - 2^(1/3)), gamma_2 = 1 - 2 gamma_1
 *   rattle6  s = 9:  Kahan and Li (1997, Math. Comp. 66, 1089), s9odr6a
 *   rattle8  s = 17: Kahan and Li (1997), s17odr8a
 * (digits as Hairer, Lubich, Wanner print them, V.3.2).
 *
 * Redundant constraints (rank of G_q below k at the start) and singular
 * positions (the dynamics went to its rank-revealing solve, or skipped
 * rows of C) leave no Cholesky factor of C in the dynamics: the steps then
 * solve with C's own eigendecomposition, the rank decided as the other
 * steppers decide it, least-norm solutions (pinv below).
 *
 * Rows land on the output grid: the step divides dt (holosim(1), --step).
 * Rows inside a step (interpolate mode) and the trial states that locate
 * events are the method itself run from the step's start for the part of
 * the step asked for: they keep the constraints as the steps do. */
#include "integrate.h"

#include "../dynamics/dynamics.h"
#include "../linalg/linalg.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>

#define NEWTON_MAX 100

typedef struct rattle {
    const double *gamma;        /* [ns] the composition */
    size_t ns;
    double h;                   /* the step asked for (GSL's time) */
    double *Minv;               /* [n] M^-1 (constant, diagonal) */
    double *Q0, *Gq0;           /* [n], [nnz] Q and G_q at a sub-step's start */
    double *x, *r;              /* [k] Newton's unknowns (h^2/2 lambda), residual */
    double *qf, *vh;            /* [n] the unconstrained position, half-step velocity */
    double *f0, *f1;            /* [dim] the rates at a sub-step's ends */
    double *y_start;            /* [dim] the last step's start, */
    double tau_start, h_last;   /* its GSL time and length (dense output) */
    struct pinv *P, *P1;        /* C^+ (pinv below) at a sub-step's start, end */
    int redundant;              /* the rank of G_q is below k at the start */
    int use0;                   /* this sub-step solves with P (not the dynamics' factor) */
    /* Newton with the Jacobian of the step's end (full_newton), on demand */
    gsl_matrix *J, *JV;         /* k x k: D1 G_q(q1) M^-1 G_q0^T D0, its SVD's V */
    gsl_vector *Js, *Jw;        /* k: singular values, scratch */
    double *d0, *d1;            /* [k] the row scales of G_q0, G_q(q1) in the M^-1 norm */
    double *qkeep, *xkeep;      /* [n], [k] a stagnated solution, kept while Newton
                                 * with the end's Jacobian tries to do better */
} rattle;

static const double order2[1] = { 1.0 };
/* 1/(2 - 2^(1/3)) and 1 - 2 of it, to 20 digits */
static const double yoshida4[3] = {
    1.35120719195965763405, -1.70241438391931526810, 1.35120719195965763405,
};
static const double kahan_li6[9] = {
    0.39216144400731413927925056, 0.33259913678935943859974864,
    -0.70624617255763935980996482, 0.08221359629355080023149045,
    0.79854399093482996339895035,
    0.08221359629355080023149045, -0.70624617255763935980996482,
    0.33259913678935943859974864, 0.39216144400731413927925056,
};
static const double kahan_li8[17] = {
    0.13020248308889008087881763, 0.56116298177510838456196441,
    -0.38947496264484728640807860, 0.15884190655515560089621075,
    -0.39590389413323757733623154, 0.18453964097831570709183254,
    0.25837438768632204729397911, 0.29501172360931029887096624,
    -0.60550853383003451169892108,
    0.29501172360931029887096624, 0.25837438768632204729397911,
    0.18453964097831570709183254, -0.39590389413323757733623154,
    0.15884190655515560089621075, -0.38947496264484728640807860,
    0.56116298177510838456196441, 0.13020248308889008087881763,
};

/* C = G_q M^-1 G_q^T solved without the dynamics' Cholesky factor: for
 * redundant constraints (the rank of G_q below k at the start) and wherever
 * the dynamics found C singular or ill-conditioned (its rank-revealing
 * solve, or rows its small Cholesky skipped), where that factor is not one
 * of C.  The rank is decided as the other steppers decide it (dynamics.h,
 * HS_SV_RTOL): with D the row scales of B = G_q M^-1/2 (rows to unit
 * length), D C D = W diag(s^2) W^T, and singular values s below
 * HS_SV_RTOL of the largest are 0.  C x = b is solved on the r directions
 * kept, W_r^T D (C x - b) = 0, by x = D W_r s_r^-2 W_r^T D b, and x is made
 * the least Euclidean norm of those solutions by removing its part in
 * ker C = ker G_q^T = D span(W_rest) (orthonormal basis N).  Off the
 * manifold (Newton's iterates) the residual G has a part in the dropped
 * directions, of second order in the distance: the kept equations imply it
 * on the manifold. */
typedef struct pinv {
    size_t k, r;
    double *Wd;                 /* [k * k] D W, column a of row i at i * k + a */
    double *s2;                 /* [k] s^2, descending */
    double *N;                  /* [k * k] ker C, orthonormal, k - r columns */
    double *d, *t;              /* [k] row scales; scratch */
    gsl_matrix *C, *W;          /* k x k: D C D (destroyed); its eigenvectors */
    gsl_vector *ev;             /* k */
    gsl_eigen_symmv_workspace *ws;
} pinv;

static void pinv_free(pinv *P)
{
    free(P->Wd);
    free(P->s2);
    free(P->N);
    free(P->d);
    free(P->t);
    gsl_matrix_free(P->C);
    gsl_matrix_free(P->W);
    gsl_vector_free(P->ev);
    if (P->ws)
        gsl_eigen_symmv_free(P->ws);
}

static int pinv_alloc(pinv *P, size_t k)
{
    memset(P, 0, sizeof *P);
    P->k = k;
    P->Wd = calloc(k * k, sizeof *P->Wd);
    P->s2 = calloc(k, sizeof *P->s2);
    P->N = calloc(k * k, sizeof *P->N);
    P->d = calloc(k, sizeof *P->d);
    P->t = calloc(k, sizeof *P->t);
    P->C = hs_la_matrix_alloc(k, k);
    P->W = hs_la_matrix_alloc(k, k);
    P->ev = hs_la_vector_alloc(k);
    /* size 0: GSL would report it to its handler */
    P->ws = k ? gsl_eigen_symmv_alloc(k) : NULL;
    return P->Wd && P->s2 && P->N && P->d && P->t && P->C && P->W && P->ev && P->ws ? 0 : -1;
}

/* The decomposition of C from G_q's non-zeros Gz (a released row is a
 * zero row).  0, or -1 when the eigensolver fails. */
static int pinv_set(pinv *P, const hs_model *m, const hs_work *w, const double *Minv,
                    const double *Gz)
{
    size_t k = P->k;
    for (size_t i = 0; i < k; i++) {
        double nr = 0;
        for (int p = m->gq_start[i]; p < m->gq_start[i + 1]; p++)
            nr += Gz[p] * Gz[p] * Minv[m->gq_col[p]];
        P->d[i] = nr > 0 && !hs_dyn_is_released(w, i) ? 1 / sqrt(nr) : 1;
    }
    for (size_t i = 0; i < k; i++)          /* (D C D)_ij over the columns i, j share */
        for (size_t j = 0; j <= i; j++) {
            double c = 0;
            if (!hs_dyn_is_released(w, i) && !hs_dyn_is_released(w, j))
                for (int p = m->gq_start[i]; p < m->gq_start[i + 1]; p++)
                    for (int q = m->gq_start[j]; q < m->gq_start[j + 1]; q++)
                        if (m->gq_col[p] == m->gq_col[q])
                            c += Gz[p] * Minv[m->gq_col[p]] * Gz[q];
            c *= P->d[i] * P->d[j];
            gsl_matrix_set(P->C, i, j, c);
            gsl_matrix_set(P->C, j, i, c);
        }
    gsl_matrix *W = P->W;
    if (gsl_eigen_symmv(P->C, P->ev, W, P->ws) ||
        gsl_eigen_symmv_sort(P->ev, W, GSL_EIGEN_SORT_VAL_DESC))
        return -1;
    double s0 = gsl_vector_get(P->ev, 0);
    P->r = 0;
    for (size_t a = 0; a < k; a++) {
        P->s2[a] = gsl_vector_get(P->ev, a);
        P->r += s0 > 0 && P->s2[a] > HS_SV_RTOL * HS_SV_RTOL * s0;
        for (size_t i = 0; i < k; i++)
            P->Wd[i * k + a] = P->d[i] * gsl_matrix_get(W, i, a);
    }
    /* N: D W_rest orthonormalized (modified Gram-Schmidt, twice) */
    size_t nk = k - P->r;
    for (size_t b = 0; b < nk; b++) {
        for (size_t i = 0; i < k; i++)
            P->N[i * k + b] = P->Wd[i * k + P->r + b];
        for (int pass = 0; pass < 2; pass++)
            for (size_t c = 0; c < b; c++) {
                double dot = 0;
                for (size_t i = 0; i < k; i++)
                    dot += P->N[i * k + c] * P->N[i * k + b];
                for (size_t i = 0; i < k; i++)
                    P->N[i * k + b] -= dot * P->N[i * k + c];
            }
        double nr = 0;
        for (size_t i = 0; i < k; i++)
            nr += P->N[i * k + b] * P->N[i * k + b];
        nr = sqrt(nr);
        for (size_t i = 0; i < k; i++)
            P->N[i * k + b] = nr > 0 ? P->N[i * k + b] / nr : 0;
    }
    return 0;
}

/* x <- the least-norm solution of C x = x on the kept directions. */
static void pinv_solve(const pinv *P, double *x)
{
    size_t k = P->k, r = P->r;
    for (size_t a = 0; a < r; a++) {        /* t = s_r^-2 (D W_r)^T x */
        double s = 0;
        for (size_t i = 0; i < k; i++)
            s += P->Wd[i * k + a] * x[i];
        P->t[a] = s / P->s2[a];
    }
    for (size_t i = 0; i < k; i++) {        /* x = D W_r t */
        double s = 0;
        for (size_t a = 0; a < r; a++)
            s += P->Wd[i * k + a] * P->t[a];
        x[i] = s;
    }
    for (size_t b = 0; b < k - r; b++) {    /* x -= N N^T x */
        double dot = 0;
        for (size_t i = 0; i < k; i++)
            dot += P->N[i * k + b] * x[i];
        for (size_t i = 0; i < k; i++)
            x[i] -= dot * P->N[i * k + b];
    }
}


/* out = base + scale M^-1 G_q^T z (G_q's non-zeros Gz) */
static void add_GqT(const hs_model *m, const rattle *S, const double *Gz, const double *z,
                    double scale, const double *base, double *out)
{
    size_t n = m->n;
    memcpy(out, base, n * sizeof *out);
    for (size_t i = 0; i < m->k; i++)
        for (int p = m->gq_start[i]; p < m->gq_start[i + 1]; p++) {
            size_t c = (size_t)m->gq_col[p];
            out[c] += scale * S->Minv[c] * Gz[p] * z[i];
        }
}

/* Newton's iteration for the multipliers stopped: which constraint it
 * left unsolved, how far, and the rank C had at the step's start. */
static int newton_failed(hs_step_ctx *cx, const rattle *S, double t1, double h, double worst,
                         size_t at, int it, size_t rank_end)
{
    const hs_model *m = cx->m;
    char rank[160] = "", advice[400];
    if (S->use0)       /* redundant constraints that disagree fail at every step size */
        snprintf(rank, sizeof rank, "; G_q had rank %zu of %zu at the step's start (solved on "
                 "its %zu independent directions)", S->P->r, m->k, S->P->r);
    int n = S->use0 ? snprintf(advice, sizeof advice, "the redundant constraints disagree off "
                               "their first order (no step size helps then), or the step "
                               "crosses a singular position: drop the redundant ones, or use "
                               "dop853 or %s (adaptive, with projection)",
                               hs_stepper_default->name)
                    : snprintf(advice, sizeof advice, "the step %.6g is too large for the "
                               "constraints here: choose a smaller %s", fabs(h),
                               hs_optname(m->names, HS_OPT_STEP));
    if (rank_end < m->k && n > 0 && (size_t)n < sizeof advice)
        snprintf(advice + n, sizeof advice - (size_t)n, " (Newton with the Jacobian of the "
                 "step's end, rank %zu of %zu, failed too)", rank_end, m->k);
    if (!isfinite(worst))
        return hs_error_set(cx->err, HS_EXIT_NUMERIC, "%s: Newton's method for the "
                            "multipliers diverged at t=%.17g: constraint '%s' became "
                            "non-finite after %d iterations%s; %s", cx->type->name, t1,
                            m->cname[at], it, rank, advice);
    return hs_error_set(cx->err, HS_EXIT_NUMERIC, "%s: Newton's method for the multipliers "
                        "did not converge at t=%.17g: constraint '%s' left at relative "
                        "residual %.3g after %d iterations%s; %s", cx->type->name,
                        t1, m->cname[at], worst, it, rank, advice);
}

/* G(t1, q1) into S->r (released rows 0); the worst residual relative to
 * its terms' scale, its row into *at; G_q(q1) is left in hs_work_con_Gq(m, w). */
static double residual(hs_step_ctx *cx, rattle *S, double t1, double h, const double *v0,
                       const double *q1, size_t *at, int *fail)
{
    const hs_model *m = cx->m;
    hs_work *w = cx->w;
    size_t k = m->k;
    *fail = hs_dyn_constraints_sparse(m, w, t1, q1, S->r, NULL);
    if (*fail)
        return INFINITY;
    const double *Gz = hs_work_con_Gq(m, w);
    const unsigned char *rel = hs_work_released(w);
    double worst = 0;
    *at = 0;
    for (size_t i = 0; i < k; i++) {
        if (rel && rel[i]) {
            S->r[i] = 0;
            continue;
        }
        double sc = 0;
        for (int p = m->gq_start[i]; p < m->gq_start[i + 1]; p++) {
            size_t c = (size_t)m->gq_col[p];
            sc += fabs(Gz[p]) * (fabs(q1[c]) + fabs(h * v0[c]));
        }
        double e = fabs(S->r[i]) / (sc > 0 ? sc : DBL_MIN);
        if (!(e <= worst)) {
            worst = isnan(e) ? (double)INFINITY : e;
            *at = i;
        }
    }
    return worst;
}

/* to round-off: a residual left at 1e-14 of the scale made the energy
 * error of rattle8 on the double pendulum grow linearly (1.8e-12 per
 * 400 s), at round-off it stays at 4e-13 */
static int converged(double worst, double prev)
{
    return worst <= 1e-17 || (worst <= 4e-14 && worst > 0.5 * prev) ||
           (worst <= 1e-11 && worst >= prev);
}

/* Row scales 1 / |row i of G_q M^-1/2| (1 for a zero or released row). */
static void row_scales(const hs_model *m, const hs_work *w, const double *Minv,
                       const double *Gz, double *d)
{
    for (size_t i = 0; i < m->k; i++) {
        double nr = 0;
        for (int p = m->gq_start[i]; p < m->gq_start[i + 1]; p++)
            nr += Gz[p] * Gz[p] * Minv[m->gq_col[p]];
        d[i] = nr > 0 && !hs_dyn_is_released(w, i) ? 1 / sqrt(nr) : 1;
    }
}

/* Newton with the Jacobian of the end, J = G_q(q1) M^-1 G_q0^T, when the
 * simplified iteration (J frozen at C0 = G_q0 M^-1 G_q0^T) failed: across
 * a singular position the nearly dependent direction of G_q turns, and
 * C0 then points Newton the wrong way along it.  Each step is J's least
 * Euclidean-norm solution (row- and column-scaled SVD, singular values
 * below HS_SV_RTOL^2 of the largest dropped, as C's).  From x = 0;
 * 0, 1 (not converged: *worst, *at, *rank say how far), or an exit code. */
static int full_newton(hs_step_ctx *cx, rattle *S, double t1, double h, const double *v0,
                       double *q1, double *worst_out, size_t *at_out, size_t *rank_out)
{
    const hs_model *m = cx->m;
    hs_work *w = cx->w;
    size_t k = m->k;
    if (!S->J) {
        S->J = hs_la_matrix_alloc(k, k);
        S->JV = hs_la_matrix_alloc(k, k);
        S->Js = hs_la_vector_alloc(k);
        S->Jw = hs_la_vector_alloc(k);
        S->d0 = calloc(k, sizeof *S->d0);
        S->d1 = calloc(k, sizeof *S->d1);
        if (!S->J || !S->JV || !S->Js || !S->Jw || !S->d0 || !S->d1)
            return hs_error_nomem(cx->err);
    }
    memset(S->x, 0, k * sizeof *S->x);
    memcpy(q1, S->qf, m->n * sizeof *q1);
    row_scales(m, w, S->Minv, S->Gq0, S->d0);
    double prev = INFINITY;
    for (int it = 0; it <= NEWTON_MAX; it++) {
        int fail;
        double worst = residual(cx, S, t1, h, v0, q1, at_out, &fail);
        if (fail)
            return cx->fail(cx, t1, q1);
        *worst_out = worst;
        if (converged(worst, prev))
            return 0;
        if (!isfinite(worst))
            return 1;
        prev = worst;
        const double *Gz = hs_work_con_Gq(m, w);
        row_scales(m, w, S->Minv, Gz, S->d1);
        for (size_t i = 0; i < k; i++)          /* J over the columns rows i, j share */
            for (size_t j = 0; j < k; j++) {
                double c = 0;
                for (int p = m->gq_start[i]; p < m->gq_start[i + 1]; p++)
                    for (int q = m->gq_start[j]; q < m->gq_start[j + 1]; q++)
                        if (m->gq_col[p] == m->gq_col[q])
                            c += Gz[p] * S->Minv[m->gq_col[p]] * S->Gq0[q];
                gsl_matrix_set(S->J, i, j, c * S->d1[i] * S->d0[j]);
            }
        if (hs_la_sv_decomp(S->J, S->JV, S->Js, S->Jw) != GSL_SUCCESS)
            return 1;
        double s0 = gsl_vector_get(S->Js, 0);
        size_t r = 0;
        while (r < k && gsl_vector_get(S->Js, r) > HS_SV_RTOL * HS_SV_RTOL * s0)
            r++;
        *rank_out = r;
        /* dx = -D0 V S_r^-1 U^T D1 res */
        for (size_t a = 0; a < r; a++) {
            double u = 0;
            for (size_t i = 0; i < k; i++)
                u += gsl_matrix_get(S->J, i, a) * S->d1[i] * S->r[i];
            S->Jw->data[a] = u / gsl_vector_get(S->Js, a);
        }
        for (size_t j = 0; j < k; j++) {
            double dx = 0;
            for (size_t a = 0; a < r; a++)
                dx += gsl_matrix_get(S->JV, j, a) * S->Jw->data[a];
            S->x[j] -= S->d0[j] * dx;
        }
        add_GqT(m, S, S->Gq0, S->x, 1.0, S->qf, q1);
    }
    return 1;
}

/* The simplified iteration stagnated above round-off where C0 is nearly
 * singular (a residual of 1e-11 there is 3e-6 in position along the
 * direction G_q nearly loses, where G is quadratic): Newton with the end's
 * Jacobian, kept when it does better.  0 or an exit code. */
static int polish(hs_step_ctx *cx, rattle *S, double t1, double h, const double *v0, double *q1,
                  double worst)
{
    const hs_model *m = cx->m;
    size_t n = m->n, k = m->k, at, rank = k;
    if (!S->qkeep) {
        S->qkeep = calloc(n, sizeof *S->qkeep);
        S->xkeep = calloc(k, sizeof *S->xkeep);
        if (!S->qkeep || !S->xkeep)
            return hs_error_nomem(cx->err);
    }
    memcpy(S->qkeep, q1, n * sizeof *q1);
    memcpy(S->xkeep, S->x, k * sizeof *S->x);
    double w2 = worst;
    int rc = full_newton(cx, S, t1, h, v0, q1, &w2, &at, &rank);
    if (rc > 1)
        return rc;
    if (rc == 0 && w2 < worst)
        return 0;
    memcpy(q1, S->qkeep, n * sizeof *q1);
    memcpy(S->x, S->xkeep, k * sizeof *S->x);
    int fail;                                 /* G_q and G_t at q1 again (the caller's) */
    residual(cx, S, t1, h, v0, q1, &at, &fail);
    return fail ? cx->fail(cx, t1, q1) : 0;
}

/* Newton on G(t1, qf + M^-1 G_q0^T x) = 0 for x (C0 factored in w);
 * the position into q1.  0 or an exit code. */
static int positions(hs_step_ctx *cx, rattle *S, double t1, double h, const double *v0,
                     double *q1)
{
    const hs_model *m = cx->m;
    hs_work *w = cx->w;
    size_t k = m->k;
    memset(S->x, 0, k * sizeof *S->x);
    memcpy(q1, S->qf, m->n * sizeof *q1);
    double prev = INFINITY;
    size_t worst_at = 0;
    for (int it = 0;; it++) {
        size_t at;
        int fail;
        double worst = residual(cx, S, t1, h, v0, q1, &at, &fail);
        if (fail)
            return cx->fail(cx, t1, q1);
        if (converged(worst, prev) && (worst <= 4e-14 || !S->use0))
            return 0;
        if (converged(worst, prev))
            return polish(cx, S, t1, h, v0, q1, worst);
        if (it == NEWTON_MAX || !isfinite(worst)) {
            double w2 = worst;
            size_t at2 = isfinite(worst) ? at : worst_at, rank = k;
            int rc = full_newton(cx, S, t1, h, v0, q1, &w2, &at2, &rank);
            if (rc != 1)
                return rc;                     /* converged (0), or an exit code */
            return newton_failed(cx, S, t1, h, w2, at2, NEWTON_MAX, rank);
        }
        prev = worst;
        worst_at = at;
        if (S->use0)
            pinv_solve(S->P, S->r);
        else
            hs_dyn_solve_C(m, w, S->r);   /* the factor the dynamics left */
        for (size_t i = 0; i < k; i++)
            S->x[i] -= S->r[i];
        add_GqT(m, S, S->Gq0, S->x, 1.0, S->qf, q1);
    }
}

static int pinv_failed(hs_step_ctx *cx, double t)
{
    return hs_error_set(cx->err, HS_EXIT_NUMERIC, "%s: the eigensolver of C = G_q M^-1 G_q^T "
                        "did not converge at t=%.17g", cx->type->name, t);
}

/* The dynamics' last evaluation left no Cholesky factor of C (its
 * rank-revealing solve, or rows its small Cholesky skipped). */
static int no_factor(const hs_work *w)
{
    hs_work_stats st = hs_work_get_stats(w);
    return st.robust || st.nskip;
}

/* One RATTLE step of h from y at GSL time tau; y becomes the state at
 * tau + h (exactly tau_end).  0 or an exit code. */
static int rattle_step(hs_step_ctx *cx, rattle *S, double tau, double tau_end, double *y)
{
    const hs_model *m = cx->m;
    hs_work *w = cx->w;
    size_t n = m->n, k = m->k;
    double h = tau_end - tau, t0 = cx->t0 + tau, t1 = cx->t0 + tau_end;
    /* the start: Q, G_q and C factored there (remembered when it was the
     * last evaluation, as it is after a step) */
    int rc;
    if ((rc = cx->rates(cx, t0, y, S->f0)))
        return rc;
    memcpy(S->Q0, hs_work_Q(m, w), n * sizeof *S->Q0);
    memcpy(S->Gq0, hs_work_Gq(m, w), m->nnz * sizeof *S->Gq0);
    /* redundant or singular there: C^+ of its own (the dynamics' factor is not C's) */
    S->use0 = k && (S->redundant || no_factor(w));
    if (S->use0 && pinv_set(S->P, m, w, S->Minv, S->Gq0))
        return pinv_failed(cx, t0);
    double *q = y, *v = y + n;
    for (size_t i = 0; i < n; i++) {
        S->vh[i] = v[i] + 0.5 * h * S->Minv[i] * S->Q0[i];
        S->qf[i] = q[i] + h * S->vh[i];
    }
    double *q1 = S->f1, *v1 = S->f1 + n;      /* scratch until the end's rates */
    if (k) {
        if ((rc = positions(cx, S, t1, h, v, q1)))
            return rc;
        add_GqT(m, S, S->Gq0, S->x, 1.0 / h, S->vh, v1);   /* v+ = (q1 - q0)/h */
    } else {
        memcpy(q1, S->qf, n * sizeof *q1);
        memcpy(v1, S->vh, n * sizeof *v1);
    }
    double *Gt1 = S->r;                          /* G_t at q1 (Newton's last) */
    if (k)
        memcpy(Gt1, hs_work_con_Gt(m, w), k * sizeof *Gt1);
    /* Q and C at the end */
    cx->forget(cx);
    if (hs_dyn_accel(m, w, t1, q1, v1, NULL, NULL))
        return cx->fail(cx, t1, S->f1);
    const double *Q1 = hs_work_Q(m, w), *Gq1 = hs_work_Gq(m, w);
    for (size_t i = 0; i < n; i++)
        v1[i] += 0.5 * h * S->Minv[i] * Q1[i];
    if (k) {
        for (size_t i = 0; i < k; i++) {
            double s = Gt1[i];
            for (int p = m->gq_start[i]; p < m->gq_start[i + 1]; p++)
                s += Gq1[p] * v1[m->gq_col[p]];
            S->x[i] = hs_dyn_is_released(w, i) ? 0 : s;
        }
        /* G_q1 (v1 - M^-1 G_q1^T x) + G_t = 0 */
        if (S->redundant || no_factor(w)) {
            if (pinv_set(S->P1, m, w, S->Minv, Gq1))
                return pinv_failed(cx, t1);
            pinv_solve(S->P1, S->x);
        } else {
            hs_dyn_solve_C(m, w, S->x);
        }
        for (size_t i = 0; i < k; i++)
            for (int p = m->gq_start[i]; p < m->gq_start[i + 1]; p++) {
                size_t c = (size_t)m->gq_col[p];
                v1[c] -= S->Minv[c] * Gq1[p] * S->x[i];
            }
    }
    memcpy(y, q1, n * sizeof *y);
    memcpy(y + n, v1, n * sizeof *y);
    /* the rates at the end (remembered for the next step and the row) */
    if ((rc = cx->rates(cx, t1, y, S->f1)))
        return rc;
    for (size_t j = 2 * n; j < cx->dim; j++)
        y[j] += 0.5 * h * (S->f0[j] + S->f1[j]);
    return 0;
}

/* The composition: one step from tau to tau_end. */
static int compose(hs_step_ctx *cx, rattle *S, double tau, double tau_end, double *y)
{
    double h = tau_end - tau, ta = tau;
    for (size_t j = 0; j < S->ns; j++) {
        double tb = j + 1 == S->ns ? tau_end : ta + S->gamma[j] * h;
        int rc = rattle_step(cx, S, ta, tb, y);
        if (rc)
            return rc;
        ta = tb;
    }
    return 0;
}

static int rattle_step_from(hs_step_ctx *cx, double tau, double s, double *y)
{
    return compose(cx, cx->own, tau, tau + s, y);
}

static int rattle_advance(hs_step_ctx *cx, double t_stop)
{
    rattle *S = cx->own;
    double tau_stop = t_stop - cx->t0, rem = tau_stop - (*cx->tau);
    /* steps of h: in exact mode h divides dt (checked), so the rows fall on
     * step ends; the last interval, when shorter, in equal steps */
    double ns = ceil(rem / S->h * (1 - 1e-9));
    int last = !(ns > 1);
    double tau_end = last ? tau_stop : (*cx->tau) + rem / ns;
    memcpy(S->y_start, cx->y, cx->dim * sizeof *cx->y);
    S->tau_start = (*cx->tau);
    int rc = compose(cx, S, (*cx->tau), tau_end, cx->y);
    if (rc)
        return rc;
    (*cx->tau) = tau_end;
    *cx->t = last ? t_stop : cx->t0 + tau_end;
    S->h_last = tau_end - S->tau_start;
    (*cx->steps)++;
    return 0;
}

static int rattle_dense(hs_step_ctx *cx, double *tau_start, double *h)
{
    const rattle *S = cx->own;
    *tau_start = S->tau_start;
    *h = S->h_last;
    return 0;
}

static int rattle_dense_at(hs_step_ctx *cx, double theta, double *y)
{
    rattle *S = cx->own;
    memcpy(y, S->y_start, cx->dim * sizeof *y);
    return compose(cx, S, S->tau_start, S->tau_start + theta * S->h_last, y);
}

/* Is M constant (no entry reads t or q)?  Only to name what RATTLE
 * lacks: a full constant M (bars in natural coordinates) is refused too. */
static int mass_constant(const hs_model *m)
{
    if (!m->M)
        return 0;
    for (size_t e = 0; e < m->n * m->n; e++) {
        if (hs_depends_on(m->M[e], m->sym_t))
            return 0;
        for (size_t j = 0; j < m->n; j++)
            if (hs_depends_on(m->M[e], m->sym_q[j]))
                return 0;
    }
    return 1;
}

/* The models RATTLE is written for; else an error naming what to use
 * (hs_stepper.suits). */
/* Why a full mass matrix does not suit: constant or not. */
static const char *full_mass_why(const hs_model *m)
{
    size_t ns = (size_t)hs_dag_nsymbols(m->dag);
    unsigned char *used = calloc(ns + 1, 1);
    int varies = !used || !m->M;
    for (size_t i = 0; !varies && i < m->n * m->n; i++)
        hs_symbols_used(m->M[i], used, ns);
    for (size_t j = 0; !varies && j < m->n; j++)
        varies = used[m->sym_q[j]];
    varies = varies || used[m->sym_t];
    free(used);
    return varies ? "its masses are not constant"
                  : "its mass matrix is constant but not diagonal (RATTLE here takes "
                    "constant diagonal masses, written as a list)";
}

static int suits(const hs_model *m, hs_error *err)
{
    const char *why = NULL;
    char massless[160];
    if (m->form != HS_FORM_CARTESIAN)
        why = m->form == HS_FORM_LAGRANGIAN ? "this model is in the Lagrangian form, whose "
              "mass matrix (the metric d2L/dv2) may depend on q and whose forces depend on "
              "the velocities" : "this model is in the embedding form, whose metric "
              "DX^T M DX depends on q";
    else if (m->mass_kind == HS_MASS_FULL)
        why = full_mass_why(m);
    else if (m->mass_kind != HS_MASS_CONST_DIAG)
        why = mass_constant(m) ? "its mass matrix is constant but not diagonal (this "
              "RATTLE takes point masses, a diagonal M)" : "its masses are not constant";
    for (size_t i = 0; !why && i < m->n; i++)
        if (!(m->Mconst[i] > 0)) {         /* RATTLE divides by each mass */
            snprintf(massless, sizeof massless, "coordinate '%.60s' is massless (RATTLE "
                     "divides by every mass)", m->qname[i]);
            why = massless;
        }
    for (size_t i = 0; !why && i < m->n; i++)
        for (size_t j = 0; !why && j < m->n; j++)
            if (hs_depends_on(m->Q[i], m->sym_v[j]))
                why = "its forces depend on the velocities";
    if (!why)
        return 0;
    int in_file = m->set.method_pos.src >= 0;
    /* the Cartesian form is advice only to a model not written in it */
    hs_error_set(err, in_file ? HS_EXIT_MODEL : HS_EXIT_USAGE, "method '%s' needs a "
                 "constant mass matrix and forces of (t, q) alone (RATTLE, explicit in the "
                 "forces): %s; use dop853 or %s (adaptive, with projection)%s",
                 m->set.method, why, hs_stepper_default->name,
                 m->form != HS_FORM_CARTESIAN ? ", or write the model in the Cartesian form "
                 "with constant masses" : "");
    if (in_file)
        hs_model_place(m, m->set.method_pos, err);
    return err->code;
}

/* An error about the step (option 0), at simulate.step when the file gives it. */
static int step_error(hs_step_ctx *cx, const char *msg)
{
    return hs_stepper_option_error(cx->m, cx->type, 0, cx->err, msg);
}

/* The largest |y_i - z_i| / (atol + rtol |z_i|) over q and v. */
static double error_ratio(const hs_step_ctx *cx, const double *y, const double *z)
{
    double r = 0;
    for (size_t i = 0; i < 2 * cx->m->n; i++) {
        double e = fabs(y[i] - z[i]) / (cx->atol + cx->rtol * fabs(z[i]));
        if (!(e <= r))
            r = isnan(e) ? (double)INFINITY : e;
    }
    return r;
}

/* No step given: dt / N with N the smallest power of two at which N steps
 * and 2N steps over the first output interval agree within the
 * tolerances (the error of N steps is about their difference times
 * 2^p / (2^p - 1) <= 4/3). */
static int choose_step(hs_step_ctx *cx, rattle *S)
{
    double span = fmin(cx->dt, cx->t_end - cx->t0);
    double *a = malloc(cx->dim * sizeof *a), *b = malloc(cx->dim * sizeof *b);
    if (!a || !b) {
        free(a);
        free(b);
        return hs_error_nomem(cx->err);
    }
    int rc = 0, found = 0, have_prev = 0;
    double *prev = a, *cur = b;
    for (long N = 1; N <= (1L << 22) && !rc && !found; N *= 2) {
        memcpy(cur, cx->y, cx->dim * sizeof *cur);
        for (long j = 0; j < N && !rc; j++)
            rc = compose(cx, S, span * (double)j / (double)N, span * (double)(j + 1) / (double)N,
                         cur);
        if (rc) {                  /* too large a step: try a smaller one */
            cx->clear_failure(cx);
            rc = 0;
            have_prev = 0;
            continue;
        }
        if (have_prev && error_ratio(cx, prev, cur) <= 0.75) {
            S->h = span / (double)(N / 2);
            found = 1;
        }
        double *t = prev;
        prev = cur;
        cur = t;
        have_prev = 1;
    }
    free(a);
    free(b);
    cx->forget(cx);
    if (!found)
        return hs_error_set(cx->err, HS_EXIT_NUMERIC, "%s: no step of dt/2^j (j <= 21) "
                            "meets the tolerances over the first output interval; give "
                            "one with %s or simulate.step", cx->type->name,
                            hs_optname(cx->m->names, HS_OPT_STEP));
    return 0;
}

static void rattle_finish(hs_step_ctx *cx)
{
    rattle *S = cx->own;
    if (!S)
        return;
    double *v[] = { S->Minv, S->Q0, S->Gq0, S->x, S->r, S->qf, S->vh, S->f0, S->f1,
                    S->y_start };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        free(v[i]);
    gsl_matrix_free(S->J);
    gsl_matrix_free(S->JV);
    gsl_vector_free(S->Js);
    gsl_vector_free(S->Jw);
    free(S->d0);
    free(S->d1);
    free(S->qkeep);
    free(S->xkeep);
    pinv *P[] = { S->P, S->P1 };
    for (size_t i = 0; i < 2; i++)
        if (P[i]) {
            pinv_free(P[i]);
            free(P[i]);
        }
    free(S);
    cx->own = NULL;
}

static int rattle_start(hs_step_ctx *cx, const double *gamma, size_t ns)
{
    const hs_model *m = cx->m;
    size_t n = m->n, k = m->k, dim = cx->dim;
    /* (suits: hs_stepper_check; the step's range: hs_stepper_options, before) */
    double h = cx->opt[0];
    if (!isnan(h)) {
        if (!((cx->t_end - cx->t0) / h <= 1e10))
            return step_error(cx, "the step is too small: more than 1e10 steps to t_end");
        double per = cx->dt / h;
        if (m->set.interpolate ? h > cx->t_end - cx->t0 : !(per >= 1 - 1e-9))
            return step_error(cx, "the step is longer than the output interval dt");
        if (!m->set.interpolate && fabs(per - nearbyint(per)) > 1e-9 * per) {
            char msg[300];
            snprintf(msg, sizeof msg, "the step %.15g does not divide the output interval "
                     "dt = %.15g (dt/step = %.15g): rows must fall on step ends; choose "
                     "dt/N (N = %.0f gives %.15g) or %s interpolate", h, cx->dt,
                     per, fmax(1, nearbyint(per)), cx->dt / fmax(1, nearbyint(per)),
                     hs_optname(m->names, HS_OPT_OUTPUT_MODE));
            return step_error(cx, msg);
        }
        if (!m->set.interpolate)
            h = cx->dt / nearbyint(per);
    }
    rattle *S = calloc(1, sizeof *S);
    if (!S)
        return hs_error_nomem(cx->err);
    cx->own = S;
    S->gamma = gamma;
    S->ns = ns;
    S->Minv = calloc(n ? n : 1, sizeof *S->Minv);
    S->Q0 = calloc(n ? n : 1, sizeof *S->Q0);
    S->Gq0 = calloc(m->nnz ? m->nnz : 1, sizeof *S->Gq0);
    S->x = calloc(k ? k : 1, sizeof *S->x);
    S->r = calloc(k ? k : 1, sizeof *S->r);
    S->qf = calloc(n ? n : 1, sizeof *S->qf);
    S->vh = calloc(n ? n : 1, sizeof *S->vh);
    S->f0 = calloc(dim, sizeof *S->f0);
    S->f1 = calloc(dim, sizeof *S->f1);
    S->y_start = calloc(dim, sizeof *S->y_start);
    if (!S->Minv || !S->Q0 || !S->Gq0 || !S->x || !S->r || !S->qf || !S->vh || !S->f0 ||
        !S->f1 || !S->y_start)
        return hs_error_nomem(cx->err);
    for (size_t i = 0; i < n; i++)
        S->Minv[i] = 1 / m->Mconst[i];
    /* C^+ of its own: always allocated with constraints (a singular
     * position may need it); used at every step when redundant from the
     * start (hs_cons_start decided the rank, as for every stepper) */
    S->redundant = k && hs_work_get_stats(cx->w).rank0 < k;
    if (k) {
        S->P = calloc(1, sizeof *S->P);
        S->P1 = calloc(1, sizeof *S->P1);
        if (!S->P || !S->P1 || pinv_alloc(S->P, k) || pinv_alloc(S->P1, k))
            return hs_error_nomem(cx->err);
    }
    if (isnan(h))
        return choose_step(cx, S);
    S->h = h;
    return 0;
}

static int start2(hs_step_ctx *cx) { return rattle_start(cx, order2, 1); }
static int start4(hs_step_ctx *cx) { return rattle_start(cx, yoshida4, 3); }
static int start6(hs_step_ctx *cx) { return rattle_start(cx, kahan_li6, 9); }
static int start8(hs_step_ctx *cx) { return rattle_start(cx, kahan_li8, 17); }

/* The options of every RATTLE method: the step. */
static const hs_step_option options[] = {
    { .name = "step", .type = HS_STEP_OPT_NUMBER, .setting = HS_NUM_STEP,
      .optname = HS_OPT_STEP, .def = NAN, .min = 0, .max = INFINITY,
      .range = "a positive number", .who = "fixed-step", .without = "chooses its own steps",
      .help = "the step (it divides dt in exact output mode; default: the largest dt/2^j "
              "that meets rtol and atol over the first output interval)" },
};

#define RATTLE(id, nm, ord, st, ab) \
    const hs_stepper id = { .name = nm, .order = ord, .flags = HS_STEP_FIXED | HS_STEP_DENSE, \
                            .tol_factor = 1, .about = ab, .options = options, \
                            .noptions = sizeof options / sizeof *options, \
                            .suits = suits, .start = st, \
                            .advance = rattle_advance, .step_from = rattle_step_from, \
                            .dense = rattle_dense, .dense_at = rattle_dense_at, \
                            .finish = rattle_finish }

RATTLE(hs_int_step_rattle, "rattle", 2, start2, "RATTLE (Andersen 1983): symplectic, "
       "constraints solved in the step; constant masses");
RATTLE(hs_int_step_rattle4, "rattle4", 4, start4, "RATTLE composed: Yoshida 1990 triple "
       "jump, 3 steps");
RATTLE(hs_int_step_rattle6, "rattle6", 6, start6, "RATTLE composed: Kahan-Li 1997 s9odr6a, "
       "9 steps");
RATTLE(hs_int_step_rattle8, "rattle8", 8, start8, "RATTLE composed: Kahan-Li 1997 s17odr8a, "
       "17 steps");
