/* The impulse problem of an impact (dynamics.h: hs_dyn_impact;
 * holosim-model(5), CONTACTS).
 *
 * At the impact's state (t, q) the velocity jumps by M dv = G_q^T Lambda,
 * Lambda the impulses of the rows in the problem: every bilateral
 * constraint held (its velocity constraint kept: u+ = 0) and every contact
 * closed or closing.  With W = G_q M^-1 G_q^T over those rows and u =
 * G_q v + G_t the rates of their residuals, u+ = u- + W Lambda, and on each
 * contact Newton's law as a complementarity:
 *
 *   Lambda_i >= 0,  u+_i + e_i u-_i >= 0,  Lambda_i (u+_i + e_i u-_i) = 0
 *
 * (a closed contact has u- = 0: it may only be pushed open).  For W
 * positive definite (independent rows) this linear complementarity
 * problem has one solution; it is found by enumerating the active sets A
 * of the contacts (2^c of them, c <= HS_IMPACT_ENUM), beyond that by
 * Murty's least-index principal pivoting: for each set tried, the
 * equalities of the bilateral rows and of A solved by Gaussian elimination
 * with partial pivoting, the inequalities checked.  The solution does not
 * depend on the order the contacts are listed in. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Cholesky of the n x n matrix A in place (lower triangle); -1 when it is
 * not positive definite. */
static int cholesky(double *A, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        double d = A[j * n + j];
        for (size_t p = 0; p < j; p++)
            d -= A[j * n + p] * A[j * n + p];
        if (!(d > 0))
            return -1;
        d = sqrt(d);
        A[j * n + j] = d;
        for (size_t i = j + 1; i < n; i++) {
            double s = A[i * n + j];
            for (size_t p = 0; p < j; p++)
                s -= A[i * n + p] * A[j * n + p];
            A[i * n + j] = s / d;
        }
    }
    return 0;
}

/* The same for a diagonal A: the O(n) of the loops above that are not
 * sums of zeros (the same numbers). */
static int diag_cholesky(double *A, size_t n)
{
    for (size_t j = 0; j < n; j++) {
        if (!(A[j * n + j] > 0))
            return -1;
        A[j * n + j] = sqrt(A[j * n + j]);
    }
    return 0;
}

/* x <- A^-1 x with the factor L of either (diag: of diag_cholesky). */
static void chol_solve(const double *L, size_t n, int diag, double *x)
{
    if (diag) {
        for (size_t i = 0; i < n; i++)
            x[i] = x[i] / L[i * n + i] / L[i * n + i];
        return;
    }
    for (size_t i = 0; i < n; i++) {
        double s = x[i];
        for (size_t p = 0; p < i; p++)
            s -= L[i * n + p] * x[p];
        x[i] = s / L[i * n + i];
    }
    for (size_t i = n; i-- > 0;) {
        double s = x[i];
        for (size_t p = i + 1; p < n; p++)
            s -= L[p * n + i] * x[p];
        x[i] = s / L[i * n + i];
    }
}

/* A x = b for the p x p matrix A (overwritten), b into x; -1 when singular
 * (a pivot below 1e-13 of the largest entry). */
static int gauss(double *A, double *b, size_t p)
{
    double big = 0;
    for (size_t i = 0; i < p * p; i++)
        big = fmax(big, fabs(A[i]));
    for (size_t c = 0; c < p; c++) {
        size_t r = c;
        for (size_t i = c + 1; i < p; i++)
            if (fabs(A[i * p + c]) > fabs(A[r * p + c]))
                r = i;
        if (!(fabs(A[r * p + c]) > 1e-13 * big))
            return -1;
        if (r != c) {
            for (size_t j = 0; j < p; j++) {
                double tmp = A[r * p + j];
                A[r * p + j] = A[c * p + j];
                A[c * p + j] = tmp;
            }
            double tb = b[r];
            b[r] = b[c];
            b[c] = tb;
        }
        for (size_t i = c + 1; i < p; i++) {
            double f = A[i * p + c] / A[c * p + c];
            for (size_t j = c; j < p; j++)
                A[i * p + j] -= f * A[c * p + j];
            b[i] -= f * b[c];
        }
    }
    for (size_t i = p; i-- > 0;) {
        double s = b[i];
        for (size_t j = i + 1; j < p; j++)
            s -= A[i * p + j] * b[j];
        b[i] = s / A[i * p + i];
    }
    return 0;
}

typedef struct imp {
    size_t n, p;            /* coordinates, rows in the problem */
    size_t *row;            /* [p] the constraint of each row */
    int *con;               /* [p] 1: a contact (inequality) */
    double *e;              /* [p] restitution (contacts) */
    double *W, *um;         /* [p*p], [p] */
    double *A, *x, *lam;    /* scratch [p*p], [p], [p] */
} imp;

/* Active set in[p] (1: the row's equality holds; every bilateral row is
 * in): Lambda into I->lam, and the first contact row (in order) that
 * breaks a condition into *bad (p: none).  0, or -1 when the equalities
 * are singular. */
static int solve_set(imp *I, const unsigned char *in, double tol, size_t *bad)
{
    size_t p = I->p, ne = 0;
    size_t idx[HS_IMPACT_ROWS];
    for (size_t r = 0; r < p; r++)
        if (in[r])
            idx[ne++] = r;
    for (size_t a = 0; a < ne; a++) {
        size_t r = idx[a];
        for (size_t b = 0; b < ne; b++)
            I->A[a * ne + b] = I->W[r * p + idx[b]];
        /* bilateral: u+ = 0; contact in A: u+ = -e u- */
        double target = I->con[r] ? -I->e[r] * I->um[r] : 0;
        I->x[a] = target - I->um[r];
    }
    if (ne && gauss(I->A, I->x, ne))
        return -1;
    memset(I->lam, 0, p * sizeof *I->lam);
    for (size_t a = 0; a < ne; a++)
        I->lam[idx[a]] = I->x[a];
    *bad = p;
    for (size_t r = 0; r < p && *bad == p; r++) {
        if (!I->con[r])
            continue;
        double up = I->um[r];
        for (size_t b = 0; b < p; b++)
            up += I->W[r * p + b] * I->lam[b];
        if (in[r] ? I->lam[r] < -tol : up + I->e[r] * I->um[r] < -tol)
            *bad = r;
    }
    return 0;
}

/* The LCP: for at most HS_IMPACT_ENUM contacts every active set in turn
 * (the first that meets every condition; for independent rows there is
 * one), else Murty's least-index principal pivoting (the first broken
 * condition's row toggled, from the empty set: finite for the P-matrix of
 * independent rows).  1 when solved. */
static int solve_lcp(imp *I, double tol, unsigned char *in, size_t nc)
{
    size_t p = I->p, bad;
    if (nc <= HS_IMPACT_ENUM) {
        for (unsigned long mask = 0; mask < (1ul << nc); mask++) {
            for (size_t r = 0, c = 0; r < p; r++) {
                in[r] = (unsigned char)(!I->con[r] || ((mask >> c) & 1));
                c += I->con[r] != 0;
            }
            if (!solve_set(I, in, tol, &bad) && bad == p)
                return 1;
        }
        return 0;
    }
    for (size_t r = 0; r < p; r++)
        in[r] = (unsigned char)!I->con[r];
    for (long it = 0; it < 100000; it++) {
        if (solve_set(I, in, tol, &bad))
            return 0;
        if (bad == p)
            return 1;
        in[bad] = (unsigned char)!in[bad];
    }
    return 0;
}

int hs_dyn_impact(const hs_model *m, hs_work *w, double t, double *q, double *v,
                  const signed char *role, const double *e, double *Lam, double *dT)
{
    size_t n = m->n, k = m->k, p = 0, nc = 0;
    for (size_t j = 0; j < k; j++) {
        p += role[j] != 0;
        nc += role[j] == 2;
    }
    hs_error_init(&w->err);
    memset(Lam, 0, k * sizeof *Lam);
    *dT = 0;
    if (nc > HS_IMPACT_MAX || p > HS_IMPACT_ROWS)
        return hs_error_set(&w->err, HS_EXIT_NUMERIC, "an impact at t=%.17g involves %zu "
                            "contacts and %zu rows (the limit is %d contacts, %d rows)",
                            t, nc, p, HS_IMPACT_MAX, HS_IMPACT_ROWS);
    double *G = NULL;
    double *M = malloc((n * n + 1) * sizeof *M), *Gt = malloc((k + 1) * sizeof *Gt);
    double *Y = malloc((p * n + 1) * sizeof *Y), *dv = calloc(n + 1, sizeof *dv);
    imp I = { n, p, malloc((p + 1) * sizeof(size_t)), malloc((p + 1) * sizeof(int)),
              malloc((p + 1) * sizeof(double)), malloc((p * p + 1) * sizeof(double)),
              malloc((p + 1) * sizeof(double)), malloc((p * p + 1) * sizeof(double)),
              malloc((p + 1) * sizeof(double)), malloc((p + 1) * sizeof(double)) };
    int rc = 0;
    if (!M || !Gt || !Y || !dv || !I.row || !I.con || !I.e || !I.W || !I.um || !I.A ||
        !I.x || !I.lam) {
        rc = hs_error_nomem(&w->err);
        goto out;
    }
    G = malloc((k + 1) * sizeof *G);
    if (!G) {
        rc = hs_error_nomem(&w->err);
        goto out;
    }
    if ((rc = hs_dyn_mass(m, w, t, q, v, M)) || (rc = hs_dyn_constraints(m, w, t, q, G, Gt)))
        goto out;
    double T0 = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            T0 += 0.5 * v[i] * M[i * n + j] * v[j];
    double *L = M;                      /* factored in place; T0 taken first */
    int diag = 1;                       /* a diagonal M (masses of points): L_jj alone */
    for (size_t i = 0; i < n && diag; i++)
        for (size_t j = 0; j < n; j++)
            diag &= i == j || M[i * n + j] == 0;
    if (diag ? diag_cholesky(L, n) : cholesky(L, n)) {
        rc = hs_error_set(&w->err, HS_EXIT_NUMERIC, "the mass matrix is not positive "
                          "definite at the impact at t=%.17g", t);
        goto out;
    }
    double scale = 0;
    for (size_t j = 0, r = 0; j < k; j++) {
        if (!role[j])
            continue;
        I.row[r] = j;
        I.con[r] = role[j] == 2;
        I.e[r] = role[j] == 2 ? e[j] : 0;
        double *y = Y + r * n, u = Gt[j];
        memcpy(y, w->Gqd + j * n, n * sizeof *y);
        for (size_t c = 0; c < n; c++)
            u += y[c] * v[c];
        chol_solve(L, n, diag, y);      /* M^-1 G_q,j^T */
        I.um[r] = u;
        scale = fmax(scale, fabs(u));
        r++;
    }
    for (size_t a = 0; a < p; a++)
        for (size_t b = 0; b < p; b++) {
            const double *g = w->Gqd + I.row[a] * n, *y = Y + b * n;
            double s = 0;
            for (size_t c = 0; c < n; c++)
                s += g[c] * y[c];
            I.W[a * p + b] = s;
        }
    double tol = 1e-12 * scale;         /* rates: relative to the largest one */
    unsigned char *in = malloc(p + 1);
    int found = in && solve_lcp(&I, tol, in, nc);
    free(in);
    if (!found) {
        rc = hs_error_set(&w->err, HS_EXIT_NUMERIC, "the impact at t=%.17g has no "
                          "consistent impulses (dependent constraints and contacts?)", t);
        goto out;
    }
    for (size_t r = 0; r < p; r++) {
        Lam[I.row[r]] = I.lam[r];
        for (size_t c = 0; c < n; c++)
            dv[c] += Y[r * n + c] * I.lam[r];
    }
    for (size_t c = 0; c < n; c++)
        v[c] += dv[c];
    /* the position onto G = 0 of the rows in the problem (one Newton step:
     * the impact is located to a residual of rounding size, which would
     * otherwise start a small rebound below its floor) */
    for (size_t a = 0; a < p; a++) {
        for (size_t b = 0; b < p; b++)
            I.A[a * p + b] = I.W[a * p + b];
        I.x[a] = -G[I.row[a]];
    }
    if (p && !gauss(I.A, I.x, p))
        for (size_t r = 0; r < p; r++)
            for (size_t c = 0; c < n; c++)
                q[c] += Y[r * n + c] * I.x[r];
    /* T+ - T- = dv . (M v- + M dv / 2) = dv . G_q^T Lambda ... from M itself */
    if ((rc = hs_dyn_mass(m, w, t, q, v, M)))
        goto out;
    double T1 = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++)
            T1 += 0.5 * v[i] * M[i * n + j] * v[j];
    *dT = T1 - T0;
out:
    free(G);
    free(M);
    free(Gt);
    free(Y);
    free(dv);
    void *f[] = { I.row, I.con, I.e, I.W, I.um, I.A, I.x, I.lam };
    for (size_t i = 0; i < sizeof f / sizeof *f; i++)
        free(f[i]);
    return rc;
}

int hs_dyn_hold(const hs_model *m, hs_work *w, size_t j)
{
    (void)m;
    if (w->released && w->released[j]) {
        w->released[j] = 0;
        w->nreleased--;
        hs_dyn_held_changed(w);
    }
    return 0;
}

int hs_dyn_contacts_open(const hs_model *m, hs_work *w, double t, const double *q,
                         const double *v)
{
    size_t k = m->k, k0 = m->contact0;
    if (!m->ncontact)
        return 0;
    double *G = malloc(2 * k * sizeof *G);
    if (!G)
        return hs_error_nomem(&w->err);
    int rc = hs_dyn_constraints_sparse(m, w, t, q, G, G + k);
    double tol = m->set.tol;
    for (size_t j = k0; j < k0 + m->ncontact && !rc; j++) {
        double u = G[k + j] + hs_dyn_gq_dot_(m, w, j, v);
        if ((G[j] > tol || (G[j] > -tol && u > tol)) && hs_dyn_release(m, w, j))
            rc = hs_error_nomem(&w->err);
    }
    free(G);
    return rc;
}

/* ---- Coulomb friction (holosim-model(5), FRICTION) ---- */

int hs_dyn_friction_alloc(const hs_model *m, hs_work *w)
{
    size_t nf = m->nfriction;
    if (!nf || w->fdir)
        return 0;
    w->fdir = calloc(nf, 1);
    w->Qx = calloc(m->n + 1, sizeof *w->Qx);
    w->goff = calloc(m->k, sizeof *w->goff);
    w->Ff = calloc(4 * nf, sizeof *w->Ff);
    if (!w->fdir || !w->Qx || !w->goff || !w->Ff)
        return hs_error_nomem(&w->err);
    return 0;
}

void hs_dyn_friction_adjust(const hs_model *m, hs_work *w)
{
    if (!w->fdir)
        return;
    for (size_t i = 0; i < m->n; i++)
        w->dyn[m->off_Q + i] += w->Qx[i];
    if (m->set.stabilize == HS_STAB_BAUMGARTE)
        for (size_t j = m->fric0; j < m->k; j++)
            w->dyn[m->off_Gb + j] -= w->goff[j];
}

/* |N| of element f from the multipliers and the G_q non-zeros Gz. */
static double normal_force(const hs_model *m, const hs_work *w, const double *Gz, size_t f,
                           double *Nv)
{
    memset(Nv, 0, m->n * sizeof *Nv);
    for (size_t p = m->fric_norm_start[f]; p < m->fric_norm_start[f + 1]; p++) {
        size_t r = m->fric_norm[p];
        for (int z = m->gq_start[r]; z < m->gq_start[r + 1]; z++)
            Nv[m->gq_col[z]] += Gz[z] * w->Lambda[r];
    }
    double s = 0;
    for (size_t i = 0; i < m->n; i++)
        s += Nv[i] * Nv[i];
    return sqrt(s);
}

double hs_dyn_friction_normal(const hs_model *m, const hs_work *w, size_t f)
{
    double *Nv = w->tmpn->data;
    return normal_force(m, w, w->dyn + m->off_Gq, f, Nv);
}

int hs_dyn_friction_step(const hs_model *m, hs_work *w, int it, int *done)
{
    size_t nf = m->nfriction;
    const double *Gz = w->dyn + m->off_Gq;
    /* F applied, Fn = phi(F) computed from it, Fp and rp the previous
     * iterate and its residual phi - F */
    double *F = w->Ff, *Fn = F + nf, *Fp = F + 2 * nf, *rp = F + 3 * nf;
    double dmax = 0, fmax_ = 0;
    for (size_t f = 0; f < nf; f++) {
        Fn[f] = w->fdir[f] ? -m->fric_mu[f] * hs_dyn_friction_normal(m, w, f) * w->fdir[f] : 0;
        dmax = fmax(dmax, fabs(Fn[f] - F[f]));
        fmax_ = fmax(fmax_, fabs(Fn[f]));
    }
    *done = dmax <= 1e-14 * fmax_;
    if (*done) {
        for (size_t f = 0; f < nf; f++)
            if (w->fdir[f])
                w->Lambda[m->fric0 + f] = F[f];      /* the force applied */
        return 0;
    }
    /* the next iterate: the secant step on phi(F) - F = 0 for each
     * element (exact in two steps where |N| is linear in F, whatever the
     * slope, where plain iteration needs a slope below 1) */
    for (size_t f = 0; f < nf; f++) {
        double r = Fn[f] - F[f], next = Fn[f];
        if (it > 0 && r != rp[f] && F[f] != Fp[f])
            next = F[f] - r * (F[f] - Fp[f]) / (r - rp[f]);
        Fp[f] = F[f];
        rp[f] = r;
        F[f] = next;
    }
    memset(w->Qx, 0, m->n * sizeof *w->Qx);
    for (size_t f = 0; f < nf; f++) {
        size_t j = m->fric0 + f;
        for (int z = m->gq_start[j]; z < m->gq_start[j + 1]; z++)
            w->Qx[m->gq_col[z]] += Gz[z] * F[f];
    }
    return 0;
}

int hs_dyn_friction_start(const hs_model *m, hs_work *w, double t, const double *q,
                          const double *v)
{
    if (!m->nfriction)
        return 0;
    int rc = hs_dyn_friction_alloc(m, w);
    if (!rc)
        rc = hs_dyn_constraints_sparse(m, w, t, q, NULL, NULL);
    for (size_t f = 0; f < m->nfriction && !rc; f++) {
        size_t j = m->fric0 + f;
        double rate = w->pos[m->k + m->nnz + j] + hs_dyn_gq_dot_(m, w, j, v);
        if (fabs(rate) > m->set.tol) {
            w->fdir[f] = (signed char)(rate > 0 ? 1 : -1);
            if (hs_dyn_release(m, w, j))
                rc = hs_error_nomem(&w->err);
        } else {
            w->fdir[f] = 0;
            w->goff[j] = w->pos[j];         /* the slip held: its value now */
        }
    }
    return rc;
}
