/* Newton shooting for a periodic orbit (flow.h, hs_fl_find_orbit): on the
 * constraint manifold, x = x_k + B xi (B the tangent basis at x_k, then the
 * projection back onto the constraints), the residual r = phi_T(x) - x and
 * its Jacobian Phi B - B from the variational equations; for an autonomous
 * model the period is an unknown too (column f(phi_T(x)), the vector field
 * there) with the phase condition f(x) . B xi = 0, and when it has no
 * non-conservative force, the energy held at the start's (orbits of a
 * conservative system come in families, one per energy; the gradient of E
 * along B by central differences: it steers Newton, the residual decides
 * convergence).  Each step is the
 * minimum-norm least-squares solution (an SVD, singular values below 1e-10
 * of the largest dropped: a conservative system's orbits come in families,
 * and the step goes to the nearest), halved until |r| decreases. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_linalg.h>

#include "../consistency/consistency.h"
#include "../linalg/linalg.h"

#define MAX_STEPS 40
#define MAX_HALVINGS 12
#ifndef HS_SHOOT_RCOND
#define HS_SHOOT_RCOND 1e-7
#endif

typedef struct shoot {
    hs_fl *f;
    size_t n, nn, d;
    int aut, cons;             /* autonomous; conservative too: the energy held */
    double E0;                 /* the start's energy (cons) */
    double *B, *P, *xT, *r, *a;    /* [nn x nn], [nn x nn], [nn], [nn], [n] */
    hs_proj *proj;
    hs_work *w;
} shoot;

int hs_fl_autonomous(const hs_fl *f)
{
    return f->autonomous;
}

/* r = phi_T(x) - x, B at x, P = Phi B; *norm = max |r|. */
static int residual(shoot *s, const double *x, double T, double *norm, hs_error *err)
{
    hs_fl *f = s->f;
    double t0 = f->m->t0;
    int rc = hs_fl_tangent(f, t0, x, x + s->n, s->B, &s->d, err);
    if (rc)
        return rc;
    memcpy(s->P, s->B, s->nn * s->d * sizeof *s->P);
    memcpy(s->xT, x, s->nn * sizeof *s->xT);
    if ((rc = hs_fl_propagate(f, t0, t0 + T, s->xT, s->P, s->d, err)))
        return rc;
    *norm = 0;
    for (size_t i = 0; i < s->nn; i++) {
        s->r[i] = s->xT[i] - x[i];
        *norm = fmax(*norm, fabs(s->r[i]));
    }
    return 0;
}

/* The vector field (v, a) at (t, x) into out [nn]. */
static int field(shoot *s, double t, const double *x, double *out, hs_error *err)
{
    int rc = hs_fl_accel(s->f, t, x, x + s->n, s->a, NULL, NULL, NULL, err);
    if (rc)
        return rc;
    memcpy(out, x + s->n, s->n * sizeof *out);
    memcpy(out + s->n, s->a, s->n * sizeof *out);
    return 0;
}

/* The row of the energy condition: dE/dx B (central differences along
 * each column, h relative to x) into row [d], and -(E(x) - E0) into *rhs. */
static int energy_row(shoot *s, const double *x, double *row, double *rhs, hs_error *err)
{
    hs_model *m = s->f->m;
    size_t n = s->n, nn = s->nn;
    double *y = malloc(nn * sizeof *y), E = 0, Ep = 0, Em = 0, scale = 1;
    if (!y)
        return hs_error_nomem(err);
    for (size_t i = 0; i < nn; i++)
        scale = fmax(scale, fabs(x[i]));
    double h = 1e-6 * scale;
    int rc = hs_dyn_energy(m, s->w, m->t0, x, x + n, &E);
    for (size_t j = 0; !rc && j < s->d; j++) {
        for (size_t i = 0; i < nn; i++)
            y[i] = x[i] + h * s->B[i * s->d + j];
        rc = hs_dyn_energy(m, s->w, m->t0, y, y + n, &Ep);
        for (size_t i = 0; !rc && i < nn; i++)
            y[i] = x[i] - h * s->B[i * s->d + j];
        if (!rc)
            rc = hs_dyn_energy(m, s->w, m->t0, y, y + n, &Em);
        row[j] = (Ep - Em) / (2 * h);
    }
    *rhs = -(E - s->E0);
    free(y);
    if (rc)
        hs_error_adopt(err, hs_work_err(s->w), HS_EXIT_NUMERIC);
    return rc;
}

/* The Newton step xi [d] (and dT) at x from the last residual. */
static int newton(shoot *s, const double *x, double T, double *xi, double *dT, hs_error *err)
{
    size_t nn = s->nn, d = s->d, aut = (size_t)s->aut, cons = (size_t)s->cons;
    size_t rows = nn + aut + cons, cols = d + aut;
    gsl_matrix *A = hs_la_matrix_calloc(rows, cols), *V = hs_la_matrix_alloc(cols, cols);
    gsl_vector *S = hs_la_vector_alloc(cols), *work = hs_la_vector_alloc(cols);
    gsl_vector *b = hs_la_vector_alloc(rows), *sol = hs_la_vector_alloc(cols);
    double *fT = calloc(2 * nn + d + 1, sizeof *fT), *f0 = fT + nn, *erow = f0 + nn;
    int rc = 0;
    if (!A || !V || !S || !work || !b || !sol || !fT) {
        rc = hs_error_nomem(err);
        goto done;
    }
    for (size_t i = 0; i < nn; i++) {
        for (size_t j = 0; j < d; j++)
            gsl_matrix_set(A, i, j, s->P[i * d + j] - s->B[i * d + j]);
        gsl_vector_set(b, i, -s->r[i]);
    }
    if (aut) {
        double t0 = s->f->m->t0;
        if ((rc = field(s, t0 + T, s->xT, fT, err)) || (rc = field(s, t0, x, f0, err)))
            goto done;
        for (size_t i = 0; i < nn; i++)
            gsl_matrix_set(A, i, d, fT[i]);
        for (size_t j = 0; j < d; j++) {
            double p = 0;
            for (size_t i = 0; i < nn; i++)
                p += f0[i] * s->B[i * d + j];
            gsl_matrix_set(A, nn, j, p);
        }
        gsl_vector_set(b, nn, 0);
    }
    if (cons) {
        double rhs = 0;
        if ((rc = energy_row(s, x, erow, &rhs, err)))
            goto done;
        for (size_t j = 0; j < d; j++)
            gsl_matrix_set(A, nn + 1, j, erow[j]);
        gsl_vector_set(b, nn + 1, rhs);
    }
    if (hs_la_sv_decomp(A, V, S, work)) {
        hs_error_set(err, HS_EXIT_NUMERIC, "%s: the SVD of the shooting Jacobian failed",
                     s->f->m->file);
        rc = HS_EXIT_NUMERIC;
        goto done;
    }
    double smax = gsl_vector_get(S, 0);
    for (size_t j = 0; j < cols; j++)
        if (!(gsl_vector_get(S, j) > HS_SHOOT_RCOND * smax))
            gsl_vector_set(S, j, 0);
    gsl_linalg_SV_solve(A, V, S, b, sol);
    for (size_t j = 0; j < d; j++)
        xi[j] = gsl_vector_get(sol, j);
    *dT = aut ? gsl_vector_get(sol, d) : 0;
done:
    gsl_matrix_free(A);
    gsl_matrix_free(V);
    gsl_vector_free(S);
    gsl_vector_free(work);
    gsl_vector_free(b);
    gsl_vector_free(sol);
    free(fT);
    return rc;
}

/* x + lambda B xi, projected onto the constraints, into y. */
static int trial(shoot *s, const double *x, const double *xi, double lambda, double *y,
                 hs_error *err)
{
    for (size_t i = 0; i < s->nn; i++) {
        double dx = 0;
        for (size_t j = 0; j < s->d; j++)
            dx += s->B[i * s->d + j] * xi[j];
        y[i] = x[i] + lambda * dx;
    }
    if (!s->f->k)
        return 0;
    return hs_proj_apply(s->proj, s->w, s->f->m->t0, y, y + s->n, NULL, 1e-13, 1, err);
}

static int shoot_alloc(shoot *s, hs_fl *f, hs_error *err)
{
    memset(s, 0, sizeof *s);
    s->f = f;
    s->n = f->n;
    s->nn = 2 * f->n;
    s->aut = f->autonomous;
    s->cons = f->autonomous && !f->m->has_nc_forces;
    size_t nn = s->nn;
    s->B = calloc(nn * nn + 1, sizeof *s->B);
    s->P = calloc(nn * nn + 1, sizeof *s->P);
    s->xT = calloc(nn + 1, sizeof *s->xT);
    s->r = calloc(nn + 1, sizeof *s->r);
    s->a = calloc(s->n + 1, sizeof *s->a);
    s->proj = hs_proj_new(f->m);
    s->w = hs_work_new(f->m);
    return s->B && s->P && s->xT && s->r && s->a && s->proj && s->w ? 0 : hs_error_nomem(err);
}

static void shoot_free(shoot *s)
{
    free(s->B);
    free(s->P);
    free(s->xT);
    free(s->r);
    free(s->a);
    hs_proj_free(s->proj);
    hs_work_free(s->w);
}

/* The iteration from x, T (updated in place, the best point kept). */
static int iterate(shoot *s, double *x, double *T, int *steps, double *resid, hs_error *err)
{
    size_t nn = s->nn;
    double *xi = calloc(nn + 1, sizeof *xi), *y = calloc(nn + 1, sizeof *y), norm, scale = 1;
    if (!xi || !y) {
        free(xi);
        free(y);
        return hs_error_nomem(err);
    }
    for (size_t i = 0; i < nn; i++)
        scale = fmax(scale, fabs(x[i]));
    double tol = fmax(1e-10, 100 * s->f->rtol) * scale;
    int rc = residual(s, x, *T, &norm, err);
    *steps = 0;
    while (!rc && norm > tol && *steps < MAX_STEPS) {
        double dT = 0, lambda = 1, nnew = INFINITY, Tn = *T;
        if ((rc = newton(s, x, *T, xi, &dT, err)))
            break;
        int h;
        for (h = 0; h < MAX_HALVINGS; h++, lambda /= 2) {
            Tn = *T + lambda * dT;
            hs_error e2;
            hs_error_init(&e2);
            if (Tn > 0 && !trial(s, x, xi, lambda, y, &e2) &&
                !residual(s, y, Tn, &nnew, &e2) && nnew < norm)
                break;
        }
        if (h == MAX_HALVINGS)
            break;                          /* no decrease along the step */
        memcpy(x, y, nn * sizeof *x);
        *T = Tn;
        norm = nnew;
        ++*steps;
    }
    *resid = norm;
    free(xi);
    free(y);
    if (!rc && norm > tol) {
        hs_error_set(err, HS_EXIT_INCONSISTENT, "%s: no periodic orbit found: Newton "
                     "shooting stopped after %d step%s with max |x(t0 + T) - x(t0)| = %.3g "
                     "(the target %.3g)", s->f->m->file, *steps, *steps == 1 ? "" : "s", norm,
                     tol);
        rc = HS_EXIT_INCONSISTENT;
    }
    return rc;
}

int hs_fl_find_orbit(hs_fl *f, double *x, double *T, int *steps, double *resid,
                     hs_error *err)
{
    shoot s;
    *steps = 0;
    *resid = INFINITY;
    int rc = shoot_alloc(&s, f, err);
    if (!rc)
        rc = hs_fl_start_state(f, x, err);
    if (!rc && s.cons && hs_dyn_energy(f->m, s.w, f->m->t0, x, x + f->n, &s.E0))
        rc = hs_error_adopt(err, hs_work_err(s.w), HS_EXIT_NUMERIC);
    if (!rc) {
        rc = iterate(&s, x, T, steps, resid, err);
    }
    shoot_free(&s);
    return rc;
}
