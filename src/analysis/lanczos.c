/* The lowest modes of a large conservative model (internal.h; the dense
 * reference is modes.c): K phi = mu M phi on ker G_q(q*), K = -S, by
 * shift-invert Lanczos over the sparse saddle-point factorization.
 *
 * The operator x -> y, [K - sigma M, G_q^T; G_q, 0] (y, z) = (M x, 0),
 * maps into ker G_q and is M-symmetric there, with the eigenvalues
 * theta = 1 / (mu - sigma): the mu nearest the shift come first.  Lanczos
 * in the M inner product with full reorthogonalization (twice, classical
 * Gram-Schmidt against the stored M V), Rayleigh-Ritz on the projected
 * operator V^T M Op V (full: its entries are the orthogonalization
 * coefficients, so any restart keeps it exact), a Ritz pair accepted when
 * its residual |Op y - theta y|_M, computed, is below RITZ_TOL |theta|.
 * A repeated eigenvalue, which one Krylov sequence holds once, is found by
 * restarting at convergence from the wanted Ritz vectors and a new vector
 * until a convergence brings nothing new (thick restarts: run()).  The
 * shift is 0 (the lowest omega^2 of a stable model; the unstable mu < 0
 * nearest 0 as well), moved below 0 when K itself is singular on ker G_q (a free
 * direction).  Why not ARPACK: a few tens of vectors of length n, each an
 * O(n) KLU solve, converge in well under a second for the chains it is
 * meant for, without a new dependency (bench/README.md). */
#include "internal.h"
#include "../linalg/linalg.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_eigen.h>

#define ROUNDOFF 1e-11      /* damping, asymmetry of K: relative (modes.c) */
#define RITZ_TOL 1e-10      /* a Ritz pair's residual, relative to theta: computed,
                             * its floor is the solves' round-off (1e-13 to 1e-12
                             * for a 1000-link chain) */
#define MAX_RESTARTS 40     /* restarts before giving up */
#define CHECK_EVERY 8       /* Lanczos steps between convergence checks, at least */

typedef struct lanczos {
    hs_an *a;
    hs_ak_saddle *J;
    size_t n, N, dof, count, mmax, m;
    double sigma;
    double *V, *MV;         /* [mmax + 1][n] the Lanczos vectors, M times them */
    double *H;              /* [mmax][mmax + 1] column j: the coefficients of
                             * v_0 .. v_j in Op v_j (the projected operator) */
    double *y;              /* [3 n] a Ritz vector, its residual, M times that */
    double *prev;           /* [count] the wanted Ritz values at the last convergence */
    int have_prev;
    double *b;              /* [N] the saddle system's right-hand side */
    double *theta, *s;      /* [mmax], [mmax][mmax] T's eigenpairs (columns) */
    size_t *idx;            /* [mmax] the Ritz values by |theta| descending */
    unsigned long long rng; /* xorshift state: the start vectors */
    int truncate;           /* a count was asked for: keep that many rows */
} lanczos;

static double dot(const double *x, const double *y, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i] * y[i];
    return s;
}

/* y = (K - sigma M)^-1 M x restricted to ker G_q. */
static void op(lanczos *L, const double *x, double *y)
{
    memset(L->b, 0, L->N * sizeof *L->b);
    hs_ak_M_mul(L->a, x, L->b);
    hs_ak_saddle_solve(L->J, L->b);
    memcpy(y, L->b, L->n * sizeof *y);
}

typedef struct entry {
    int r, c;
    double v;
} entry;

static int entry_cmp(const void *pa, const void *pb)
{
    const entry *x = pa, *y = pb;
    if (x->r != y->r)
        return x->r < y->r ? -1 : 1;
    return (x->c > y->c) - (x->c < y->c);
}

/* The largest |D_ij| and |S_ij - S_ji| (dQ/dq alone: the Hessians are
 * symmetric) against the size of K and M: 1 conservative, 0 not, -1 out
 * of memory. */
static int conservative(const hs_an *a, double kmax, double mmax)
{
    double dmax = 0, asym = 0;
    for (size_t e = 0; e < a->qv.cnt; e++)
        dmax = fmax(dmax, fabs(a->out_lin[a->off_Qv + e]));
    size_t c = a->qq.cnt;
    entry *E = malloc((c + 1) * sizeof *E);
    if (!E)
        return -1;
    for (size_t e = 0; e < c; e++)
        E[e] = (entry){ a->qq.r[e], a->qq.c[e], a->out_eq[a->off_Qq + e] };
    qsort(E, c, sizeof *E, entry_cmp);
    for (size_t e = 0; e < c; e++) {
        entry key = { E[e].c, E[e].r, 0 };
        const entry *m = bsearch(&key, E, c, sizeof *E, entry_cmp);
        asym = fmax(asym, fabs(E[e].v - (m ? m->v : 0)));
    }
    free(E);
    return dmax <= ROUNDOFF * sqrt(kmax * mmax) && asym <= ROUNDOFF * kmax;
}

/* Factor K - sigma M at sigma = 0, else a little below 0: 0, or -1. */
static int shift(lanczos *L, const double *lambda, double kmax, double mmax)
{
    const double tries[] = { 0, 1e-8, 1e-5, 1e-2 };
    for (size_t t = 0; t < sizeof tries / sizeof *tries; t++) {
        L->sigma = -tries[t] * (kmax > 0 && mmax > 0 ? kmax / mmax : 1);
        if (hs_ak_saddle_factor(L->J, lambda, -1, -L->sigma) == 0)
            return 0;
    }
    return -1;
}

/* y [n] = V s_i, the Ritz vector of Ritz value i (M-normalized). */
static void ritz_vector(const lanczos *L, size_t i, double *y)
{
    size_t n = L->n;
    memset(y, 0, n * sizeof *y);
    for (size_t j = 0; j < L->m; j++) {
        double c = L->s[j * L->mmax + i];
        const double *v = L->V + j * n;
        for (size_t t = 0; t < n; t++)
            y[t] += c * v[t];
    }
}

/* |Op y - theta y|_M <= RITZ_TOL |theta|, computed (one solve): the
 * restarts leave no three-term relation to read it from. */
static int ritz_converged(lanczos *L, size_t i)
{
    size_t n = L->n;
    double *y = L->y, *r = L->y + n, *Mr = L->y + 2 * n, th = L->theta[i];
    ritz_vector(L, i, y);
    op(L, y, r);
    for (size_t t = 0; t < n; t++)
        r[t] -= th * y[t];
    memset(Mr, 0, n * sizeof *Mr);
    hs_ak_M_mul(L->a, r, Mr);
    return sqrt(fabs(dot(r, Mr, n))) <= RITZ_TOL * fabs(th);
}

/* Rayleigh-Ritz on span V (m vectors): A = V^T M Op V from the
 * orthogonalization coefficients (A_ik, i <= k, is the coefficient of v_i
 * in Op v_k, computed when v_k was processed; symmetric), its eigenpairs
 * sorted by |theta| descending; 1 when the count wanted have converged,
 * 0 not yet, -1 out of memory. */
static int ritz(lanczos *L, gsl_eigen_symmv_workspace *ws)
{
    size_t m = L->m, h = L->mmax + 1;
    gsl_matrix *A = hs_la_matrix_alloc(m, m), *S = hs_la_matrix_alloc(m, m);
    gsl_vector *th = hs_la_vector_alloc(m);
    int ok = A && S && th;
    if (ok) {
        for (size_t i = 0; i < m; i++)
            for (size_t k = i; k < m; k++) {
                gsl_matrix_set(A, i, k, L->H[k * h + i]);
                gsl_matrix_set(A, k, i, L->H[k * h + i]);
            }
        ok = gsl_eigen_symmv(A, th, S, ws) == GSL_SUCCESS;
    }
    int conv = 0;
    if (ok) {
        for (size_t i = 0; i < m; i++) {
            L->theta[i] = gsl_vector_get(th, i);
            for (size_t j = 0; j < m; j++)
                L->s[j * L->mmax + i] = gsl_matrix_get(S, j, i);
            L->idx[i] = i;
        }
        for (size_t i = 1; i < m; i++)          /* insertion sort, |theta| descending */
            for (size_t j = i; j > 0 && fabs(L->theta[L->idx[j]]) >
                                        fabs(L->theta[L->idx[j - 1]]); j--) {
                size_t t = L->idx[j];
                L->idx[j] = L->idx[j - 1];
                L->idx[j - 1] = t;
            }
        conv = m >= L->count;
        for (size_t r = 0; conv && r < L->count; r++)
            conv = ritz_converged(L, L->idx[r]);
    }
    if (A)
        gsl_matrix_free(A);
    if (S)
        gsl_matrix_free(S);
    if (th)
        gsl_vector_free(th);
    return ok ? conv : -1;
}

/* w [n] <- w M-orthogonal to the first j vectors (twice), the
 * coefficients added into h [j] (h NULL: not kept); M w into Mw. */
static void reorth(lanczos *L, size_t j, double *w, double *Mw, double *h)
{
    size_t n = L->n;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < j; i++) {
            double c = dot(w, L->MV + i * n, n);
            const double *vi = L->V + i * n;
            for (size_t t = 0; t < n; t++)
                w[t] -= c * vi[t];
            if (h)
                h[i] += c;
        }
    memset(Mw, 0, n * sizeof *Mw);
    hs_ak_M_mul(L->a, w, Mw);
}

/* w, Mw <- themselves over |w|_M: 0, or -1 when |w|_M^2 <= tiny. */
static int normalize(size_t n, double *w, double *Mw, double tiny)
{
    double q = dot(w, Mw, n);
    if (!(q > tiny))
        return -1;
    double nrm = sqrt(q);
    for (size_t t = 0; t < n; t++) {
        w[t] /= nrm;
        Mw[t] /= nrm;
    }
    return 0;
}

/* A new start vector V[j]: pseudo-random (the same every run), through the
 * operator into ker G_q, M-orthogonal to V[0..j-1], normalized; 0, or -1
 * when nothing is left (the vectors span an invariant subspace). */
static int start_vector(lanczos *L, size_t j)
{
    size_t n = L->n;
    double *v = L->V + j * n, *Mv = L->MV + j * n;
    for (size_t i = 0; i < n; i++) {
        L->rng ^= L->rng << 13;
        L->rng ^= L->rng >> 7;
        L->rng ^= L->rng << 17;
        Mv[i] = (double)(L->rng >> 11) / 9007199254740992.0 - 0.5;
    }
    op(L, Mv, v);
    memset(Mv, 0, n * sizeof *Mv);
    hs_ak_M_mul(L->a, v, Mv);
    double before = dot(v, Mv, n);
    reorth(L, j, v, Mv, NULL);
    return normalize(n, v, Mv, 1e-20 * before);
}

/* The wanted Ritz values unchanged since the last convergence (to 1e-9):
 * no eigenvalue came in with the restart.  Keeps them for the next call. */
static int same_as_before(lanczos *L)
{
    int same = L->have_prev;
    for (size_t r = 0; r < L->count; r++) {
        double t = L->theta[L->idx[r]];
        same = same && fabs(t - L->prev[r]) <= 1e-9 * fabs(t);
        L->prev[r] = t;
    }
    L->have_prev = 1;
    return same;
}

/* Thick restart: the keep leading Ritz vectors become V[0..keep) (the
 * projected operator diag(theta) there), and V[keep] the Lanczos
 * continuation V[m] (from_w: their residuals all lie along it) or a new
 * pseudo-random start.  In place: each coordinate t of the keep new
 * vectors from coordinate t of the m old ones.  0, or -1 when no new start
 * is left. */
static int thick_restart(lanczos *L, size_t keep, int from_w)
{
    size_t n = L->n, m = L->m, h = L->mmax + 1;
    double *tmp = L->y;                         /* keep <= dof <= n of 3 n */
    double *X[2] = { L->V, L->MV };
    for (int x = 0; x < 2; x++)
        for (size_t t = 0; t < n; t++) {
            for (size_t k = 0; k < keep; k++) {
                double sum = 0;
                for (size_t j = 0; j < m; j++)
                    sum += X[x][j * n + t] * L->s[j * L->mmax + L->idx[k]];
                tmp[k] = sum;
            }
            for (size_t k = 0; k < keep; k++)
                X[x][k * n + t] = tmp[k];
        }
    for (size_t k = 0; k < keep; k++) {
        memset(L->H + k * h, 0, h * sizeof *L->H);
        L->H[k * h + k] = L->theta[L->idx[k]];
    }
    L->m = keep;
    if (!from_w)
        return start_vector(L, keep);
    memcpy(L->V + keep * n, L->V + m * n, n * sizeof *L->V);
    memcpy(L->MV + keep * n, L->MV + m * n, n * sizeof *L->MV);
    return 0;
}

/* Lanczos until count Ritz pairs have converged twice, a new start in
 * between: 0, -1 out of memory, -2 no convergence, -4 M not positive
 * definite on ker G_q.  One Krylov sequence holds a repeated eigenvalue
 * once (round-off brings the other copies in late, if at all): at
 * convergence the wanted Ritz vectors are kept and a new pseudo-random
 * vector M-orthogonal to them continues, until a convergence that brings
 * no new wanted value; a sequence that closes (an invariant subspace) goes
 * on from a new vector too; at mmax vectors a thick restart keeps the
 * best half. */
static int run(lanczos *L)
{
    size_t n = L->n, h = L->mmax + 1;
    /* size 0: GSL would report it to its handler */
    gsl_eigen_symmv_workspace *ws = L->mmax ? gsl_eigen_symmv_alloc(L->mmax) : NULL;
    if (!ws)
        return -1;
    L->rng = 88172645463325252ULL;
    int rc = start_vector(L, 0) ? -4 : -2, restarts = 0;
    size_t next = L->count;        /* the next convergence check, in vectors */
    for (size_t j = 0; rc == -2; j++) {
        double *v = L->V + j * n, *w = L->V + (j + 1) * n, *Mw = L->MV + (j + 1) * n;
        double *col = L->H + j * h;
        memset(col, 0, h * sizeof *col);
        op(L, v, w);
        reorth(L, j + 1, w, Mw, col);
        L->m = j + 1;
        int inv = L->m == L->dof || normalize(n, w, Mw, 1e-26 * col[j] * col[j]);
        if (!(inv || L->m == L->mmax || L->m >= next))
            continue;
        /* the m x m eigensolver costs m^3: checks at geometric intervals */
        next = L->m + (L->m / 4 > CHECK_EVERY ? L->m / 4 : CHECK_EVERY);
        int c = ritz(L, ws);
        size_t keep = c > 0 ? L->count : L->count + (L->mmax - L->count) / 2;
        if (c < 0) {
            rc = -1;
        } else if (c > 0 && (same_as_before(L) || L->m == L->dof)) {
            rc = 0;
        } else if (L->m == L->dof || ++restarts > MAX_RESTARTS) {
            break;
        } else if (c > 0 || L->m == L->mmax) {
            if (thick_restart(L, keep, c == 0 && !inv))
                rc = c > 0 ? 0 : -2;    /* nothing left to start from */
            j = L->m - 1;
            next = L->m + CHECK_EVERY;
        } else if (inv && start_vector(L, j + 1)) {
            break;
        }
    }
    gsl_eigen_symmv_free(ws);
    return rc;
}

/* The rows of a mode mu with shape dq (modes.c's add_sym_mode): mu > 0 one
 * row s = i omega, mu < 0 the pair s = +-sqrt(-mu), mu at round-off of
 * mumax s = 0 twice. */
static void add_mode(hs_ak_rows *R, double mu, double mumax, const double *dq)
{
    size_t n = R->n;
    if (fabs(mu) <= 64 * DBL_EPSILON * mumax)
        mu = 0;
    for (int twice = 0; twice < (mu > 0 ? 1 : 2); twice++) {
        double rt = mu < 0 ? sqrt(-mu) : 0.0;
        R->sigma[R->cnt] = mu > 0 ? 0 : twice ? -rt + 0.0 : rt;
        R->omega[R->cnt] = mu > 0 ? sqrt(mu) : 0;
        memcpy(R->re + R->cnt * n, dq, n * sizeof *dq);
        memset(R->im + R->cnt * n, 0, n * sizeof *dq);
        R->cnt++;
    }
}

/* The count converged Ritz pairs into rows: mu = sigma + 1 / theta, the
 * shapes V s. */
static int collect(lanczos *L, double mumax, hs_modes *md)
{
    size_t n = L->n, cap = 2 * L->count;
    hs_ak_rows R = { n, 0, malloc(cap * sizeof(double)), malloc(cap * sizeof(double)),
                     malloc(cap * n * sizeof(double)), malloc(cap * n * sizeof(double)) };
    double *dq = calloc(n, sizeof *dq);
    int rc = !R.sigma || !R.omega || !R.re || !R.im || !dq ? -1 : 0;
    for (size_t r = 0; !rc && r < L->count; r++) {
        size_t i = L->idx[r];
        memset(dq, 0, n * sizeof *dq);
        for (size_t j = 0; j < L->m; j++) {
            double c = L->s[j * L->mmax + i];
            const double *v = L->V + j * n;
            for (size_t t = 0; t < n; t++)
                dq[t] += c * v[t];
        }
        add_mode(&R, L->sigma + 1 / L->theta[i], mumax, dq);
    }
    if (!rc)
        rc = hs_ak_finish(&R, md);
    if (!rc && L->truncate && md->count > L->count)
        md->count = L->count;
    free(R.sigma);
    free(R.omega);
    free(R.re);
    free(R.im);
    free(dq);
    return rc;
}

static void lanczos_free(lanczos *L)
{
    hs_ak_saddle_free(L->J);
    free(L->V);
    free(L->MV);
    free(L->H);
    free(L->y);
    free(L->prev);
    free(L->b);
    free(L->theta);
    free(L->s);
    free(L->idx);
}

/* The sizes of K = -S and M: the largest entries, and the scale of mu
 * below which 64 eps of it is round-off: the largest row sum of |K|, or
 * the stiffness Newton met on its way (sscale: a K that cancels to
 * round-off at q*, as at a critical speed, counts as 0, as modes.c's
 * kratio does), over the smallest diagonal entry of M. */
static void sizes(const hs_an *a, const double *lambda, double sscale, double *kmax,
                  double *mmax, double *mumax, double *scratch)
{
    size_t n = a->n;
    double *one = scratch, *row = scratch + n, mmin = INFINITY;
    for (size_t i = 0; i < n; i++)
        one[i] = 1;
    hs_ak_S_mul(a, lambda, one, row, 1);
    *kmax = *mmax = *mumax = 0;
    *mumax = sscale;
    for (size_t i = 0; i < n; i++)
        *mumax = fmax(*mumax, row[i]);
    for (size_t e = 0; e < a->qq.cnt; e++)
        *kmax = fmax(*kmax, fabs(a->out_eq[a->off_Qq + e]));
    for (size_t e = 0; e < a->hg.cnt; e++)
        *kmax = fmax(*kmax, fabs(lambda[a->hg.g[e]] * a->out_eq[a->off_Hg + e]));
    for (size_t e = 0; e < a->mm.cnt; e++) {
        *mmax = fmax(*mmax, fabs(a->out_lin[e]));
        if (a->mm.r[e] == a->mm.c[e])
            mmin = fmin(mmin, a->out_lin[e]);
    }
    *mumax = mmin > 0 && isfinite(mmin) ? *mumax / mmin : *mumax;
}

static int fail(const hs_an *a, hs_error *err, const char *why)
{
    hs_error_set(err, HS_EXIT_INCONSISTENT, "%s", why);
    snprintf(err->file, sizeof err->file, "%s", a->m->file);
    return HS_EXIT_INCONSISTENT;
}

int hs_ak_sparse_modes(hs_an *a, const hs_equil *eq, size_t count, hs_modes *md,
                       hs_error *err)
{
    size_t n = a->n, k = a->k;
    memset(md, 0, sizeof *md);
    md->n = n;
    md->verdict = HS_AN_STABLE;
    md->stable = 1;
    md->dof = n - (k < n ? k : n);
    md->conservative = 1;
    if (md->dof == 0)
        return 0;
    if (!hs_ak_eval_eq(a, eq->q))
        return hs_ak_nonfinite(a, 0, eq->q, HS_EXIT_INCONSISTENT, "in the linearization at "
                               "the equilibrium", err);
    if (!hs_ak_eval_lin(a, eq->q))
        return hs_ak_nonfinite(a, 1, eq->q, HS_EXIT_INCONSISTENT, "in the mass matrix or the "
                               "damping at the equilibrium", err);
    lanczos L;
    memset(&L, 0, sizeof L);
    L.a = a;
    L.n = n;
    L.N = n + k;
    L.dof = md->dof;
    L.truncate = count > 0;
    L.count = count ? count : (md->dof < HS_AN_SPARSE_COUNT ? md->dof : HS_AN_SPARSE_COUNT);
    L.mmax = 4 * L.count + 100 < L.dof ? 4 * L.count + 100 : L.dof;
    size_t mm = L.mmax;
    L.J = hs_ak_saddle_new(a);
    L.V = malloc((mm + 1) * n * sizeof *L.V);
    L.MV = malloc((mm + 1) * n * sizeof *L.MV);
    L.H = calloc(mm * (mm + 1) + 1, sizeof *L.H);
    L.y = calloc(3 * n + 1, sizeof *L.y);
    L.prev = calloc(L.count + 1, sizeof *L.prev);
    L.b = calloc(L.N + n + 1, sizeof *L.b);
    L.theta = calloc(mm + 1, sizeof *L.theta);
    L.s = calloc(mm * mm + 1, sizeof *L.s);
    L.idx = calloc(mm + 1, sizeof *L.idx);
    int rc = 0;
    if (!L.J || !L.V || !L.MV || !L.H || !L.y || !L.prev || !L.b || !L.theta || !L.s ||
        !L.idx) {
        lanczos_free(&L);
        return hs_error_nomem(err);
    }
    double kmax, mmax, mumax;
    sizes(a, eq->lambda, eq->sscale, &kmax, &mmax, &mumax, L.b);
    int cons = conservative(a, kmax, mmax);
    if (cons < 0)
        rc = hs_error_nomem(err);
    else if (!cons)
        rc = fail(a, err, "the sparse modes need a conservative linearization (no damping, "
                  "gyroscopic or circulatory terms): the first-order form is dense only "
                  "(n + k <= 2000)");
    else if (shift(&L, eq->lambda, kmax, mmax))
        rc = fail(a, err, "the shifted saddle-point matrix [K - s M, G_q^T; G_q, 0] is "
                  "singular for every shift tried (dependent constraints at the equilibrium?)");
    if (!rc) {
        int r = run(&L);
        if (r == -1)
            rc = hs_error_nomem(err);
        else if (r == -2)
            rc = fail(a, err, "the Lanczos eigensolver did not converge");
        else if (r == -4)
            rc = fail(a, err, "the mass matrix is not positive definite on the tangent space "
                      "at the equilibrium");
        else if (collect(&L, mumax, md))
            rc = hs_error_nomem(err);
    }
    lanczos_free(&L);
    return rc;
}
