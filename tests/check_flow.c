/* src/flow: the variational equations of the constrained flow against
 * finite differences (of the accelerations and of the flow itself), and
 * Floquet multipliers against closed forms and independent integrations
 * (GSL directly, on the linearized equations written by hand here):
 * a hanging pendulum (exp(+-i omega T)), the Mathieu equation (to 1e-8),
 * Kapitza's pendulum in its Cartesian (moving constraint) and angle forms
 * (the same multipliers to 1e-7, the stability threshold between 44.3 and
 * 44.5).  Lyapunov exponents: a small oscillation gives ~0, the spectrum
 * sums to 0.  Sensitivities to parameters: the pendulum's scaling law
 * dtheta/dl = -t theta'/(2 l), a parameter computed from another, initial
 * data written with a parameter, bad names.  Native kernels: the same
 * bits as the VM. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>

#include "check_main.h"
#include "physics_util.h"
#include "flow/flow.h"
#include "model/model.h"
#include "native/native.h"

#define PI 3.14159265358979323846
#define MAXSET 6
typedef struct sets {
    size_t n;
    const char *name[MAXSET];
    double value[MAXSET];
} sets;

typedef struct fcase {
    hs_model *m;
    hs_fl *f;
    hs_error err;
} fcase;

/* Load a shipped model (file) or a text, with --set values, dense; the
 * variational system. */
static void open_case(fcase *c, const char *file, const char *text, const sets *s)
{
    memset(c, 0, sizeof *c);
    hs_error_init(&c->err);
    hs_overrides ov;
    hs_overrides_init(&ov);
    ov.dense = 1;
    if (s) {
        ov.nset = s->n;
        ov.set_name = s->name;
        ov.set_value = s->value;
    }
    c->m = text ? hs_model_load_string("<test>", text, &ov, &c->err)
                : hs_model_load(pu_model_path(file), &ov, &c->err);
    ck_assert_msg(c->m, "load: %s", c->err.msg);
    c->f = hs_fl_new(c->m, &c->err);
    ck_assert_msg(c->f, "hs_fl_new: %s", c->err.msg);
}

static void close_case(fcase *c)
{
    hs_fl_free(c->f);
    hs_model_free(c->m);
}

/* ---- the Jacobians of the accelerations against central differences ---- */

static void jacobian_fd(const char *file, const char *text, double t, const double *q,
                        const double *v)
{
    fcase c;
    open_case(&c, file, text, NULL);
    size_t n = c.m->n;
    double *a = calloc(n, sizeof *a), *ap = calloc(n, sizeof *ap), *am = calloc(n, sizeof *am);
    double *Aq = calloc(n * n, sizeof *Aq), *Av = calloc(n * n, sizeof *Av);
    double *qq = calloc(n, sizeof *qq), *vv = calloc(n, sizeof *vv);
    ck_assert_int_eq(hs_fl_accel(c.f, t, q, v, a, NULL, Aq, Av, &c.err), 0);
    for (int wrt = 0; wrt < 2; wrt++)
        for (size_t j = 0; j < n; j++) {
            double h = 1e-6;
            memcpy(qq, q, n * sizeof *qq);
            memcpy(vv, v, n * sizeof *vv);
            (wrt ? vv : qq)[j] += h;
            ck_assert_int_eq(hs_fl_accel(c.f, t, qq, vv, ap, NULL, NULL, NULL, &c.err), 0);
            (wrt ? vv : qq)[j] -= 2 * h;
            ck_assert_int_eq(hs_fl_accel(c.f, t, qq, vv, am, NULL, NULL, NULL, &c.err), 0);
            for (size_t i = 0; i < n; i++) {
                double fd = (ap[i] - am[i]) / (2 * h), ex = (wrt ? Av : Aq)[i * n + j];
                ck_assert_msg(fabs(fd - ex) <= 1e-6 * (1 + fabs(ex)),
                              "%s: da_%zu/d%s_%zu = %.12g, finite differences %.12g", file ? file
                              : "text", i, wrt ? "v" : "q", j, ex, fd);
            }
        }
    free(a); free(ap); free(am); free(Aq); free(Av); free(qq); free(vv);
    close_case(&c);
}

START_TEST(jacobian_double_pendulum)
{
    /* off the manifold too: a(t, q, v) is defined everywhere */
    double q[4] = { 0.8, -0.55, 1.7, -0.2 }, v[4] = { 0.3, 0.45, -0.7, 1.1 };
    jacobian_fd("double_pendulum.yaml", NULL, 0, q, v);
    double qa[2] = { 1.0, 1.5 }, va[2] = { 0.4, -0.9 };
    jacobian_fd("double_pendulum_angles.yaml", NULL, 0, qa, va);
}
END_TEST

START_TEST(jacobian_moving_constraint)
{
    double q[2] = { 0.3, 1.05 }, v[2] = { -0.4, 0.8 };
    jacobian_fd("kapitza.yaml", NULL, 0.37, q, v);
    double qa[1] = { 0.3 }, va[1] = { -1.2 };
    jacobian_fd("kapitza_angle.yaml", NULL, 0.37, qa, va);
}
END_TEST

/* ---- the flow's derivative against central differences of the flow ---- */

static void flow_fd(const char *file, double T)
{
    fcase c;
    open_case(&c, file, NULL, NULL);
    size_t n = c.m->n, nn = 2 * n, dim;
    double *x0 = calloc(nn, sizeof *x0), *B = calloc(nn * nn, sizeof *B);
    double *P = calloc(nn * nn, sizeof *P), *x = calloc(nn, sizeof *x);
    double *xp = calloc(nn, sizeof *xp), *xm = calloc(nn, sizeof *xm);
    memcpy(x0, c.m->q0, n * sizeof *x0);
    memcpy(x0 + n, c.m->v0, n * sizeof *x0);
    double t0 = c.m->t0;
    ck_assert_int_eq(hs_fl_tangent(c.f, t0, x0, x0 + n, B, &dim, &c.err), 0);
    ck_assert_uint_eq(dim, 2 * (n - c.m->k));
    memcpy(P, B, nn * dim * sizeof *P);
    memcpy(x, x0, nn * sizeof *x);
    ck_assert_int_eq(hs_fl_propagate(c.f, t0, t0 + T, x, P, dim, &c.err), 0);
    double eps = 1e-4;
    for (size_t j = 0; j < dim; j++) {
        for (size_t i = 0; i < nn; i++) {
            xp[i] = x0[i] + eps * B[i * dim + j];
            xm[i] = x0[i] - eps * B[i * dim + j];
        }
        ck_assert_int_eq(hs_fl_propagate(c.f, t0, t0 + T, xp, NULL, 0, &c.err), 0);
        ck_assert_int_eq(hs_fl_propagate(c.f, t0, t0 + T, xm, NULL, 0, &c.err), 0);
        double big = 0;
        for (size_t i = 0; i < nn; i++)
            big = fmax(big, fabs(P[i * dim + j]));
        for (size_t i = 0; i < nn; i++) {
            double fd = (xp[i] - xm[i]) / (2 * eps);
            ck_assert_msg(fabs(fd - P[i * dim + j]) <= 1e-6 * big, "%s: dx_%zu/db_%zu = %.12g, "
                          "finite differences %.12g", file, i, j, P[i * dim + j], fd);
        }
    }
    free(x0); free(B); free(P); free(x); free(xp); free(xm);
    close_case(&c);
}

START_TEST(flow_double_pendulum)
{
    flow_fd("double_pendulum.yaml", 1.0);
    flow_fd("double_pendulum_angles.yaml", 1.0);
}
END_TEST

START_TEST(flow_kapitza)
{
    sets s = { 1, { "theta0" }, { 0.3 } };
    (void)s;
    flow_fd("kapitza.yaml", 0.5);
    flow_fd("kapitza_angle.yaml", 0.5);
}
END_TEST

/* ---- Floquet multipliers ---- */

/* The multipliers of fcase c over T (sorted by |mu| descending). */
static hs_floquet floquet(fcase *c, double T)
{
    hs_floquet fl;
    int rc = hs_fl_floquet(c->f, T, &fl, &c->err);
    ck_assert_msg(rc == 0, "floquet: %s", c->err.msg);
    return fl;
}

/* A 2 x 2 monodromy of y'' = -k(t) y from an integration of its own, and
 * its eigenvalues (re, im) with im >= 0 first. */
typedef struct hill { double delta, eps, w; int kapitza; double a, l, g; } hill;

static int hill_rhs(double t, const double y[], double dy[], void *p)
{
    const hill *h = p;
    double k = h->kapitza ? -(h->g - h->a * h->w * h->w * cos(h->w * t)) / h->l
                          : h->delta + h->eps * cos(h->w * t);
    for (int c = 0; c < 2; c++) {
        dy[2 * c] = y[2 * c + 1];
        dy[2 * c + 1] = -k * y[2 * c];
    }
    return GSL_SUCCESS;
}

static void hill_multipliers(hill *h, double T, double re[2], double im[2])
{
    gsl_odeiv2_system sys = { hill_rhs, NULL, 4, h };
    gsl_odeiv2_driver *d = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-4,
                                                         1e-14, 1e-14);
    double y[4] = { 1, 0, 0, 1 }, t = 0;         /* columns (y, y') of two solutions */
    ck_assert_int_eq(gsl_odeiv2_driver_apply(d, &t, T, y), GSL_SUCCESS);
    gsl_odeiv2_driver_free(d);
    /* M = [y1 y2; y1' y2'], det 1: mu = tr/2 +- sqrt(tr^2/4 - 1) */
    double tr = y[0] + y[3], det = y[0] * y[3] - y[2] * y[1], disc = tr * tr / 4 - det;
    if (disc >= 0) {
        re[0] = tr / 2 + sqrt(disc) * (tr >= 0 ? 1 : -1);
        re[1] = det / re[0];
        im[0] = im[1] = 0;
        if (fabs(re[1]) > fabs(re[0])) {
            double x = re[0]; re[0] = re[1]; re[1] = x;
        }
    } else {
        re[0] = re[1] = tr / 2;
        im[0] = sqrt(-disc);
        im[1] = -im[0];
    }
}

static void same_multipliers(const hs_floquet *fl, const double re[2], const double im[2],
                             double tol, const char *what)
{
    ck_assert_uint_eq(fl->dim, 2);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(fabs(fl->re[i] - re[i]) <= tol && fabs(fl->im[i] - im[i]) <= tol,
                      "%s: mu_%d = %.15g%+.15gi, want %.15g%+.15gi", what, i + 1, fl->re[i],
                      fl->im[i], re[i], im[i]);
}

START_TEST(hanging_pendulum)
{
    static const char *const files[] = { "pendulum.yaml", "pendulum_angle.yaml" };
    static const double Ts[] = { 1.0, 2.5, 0.3 };
    for (int f = 0; f < 2; f++)
        for (int i = 0; i < 3; i++) {
            sets s = { 1, { "theta0" }, { 0 } };
            fcase c;
            open_case(&c, files[f], NULL, &s);
            hs_floquet fl = floquet(&c, Ts[i]);
            double w = sqrt(9.81), re[2] = { cos(w * Ts[i]), cos(w * Ts[i]) };
            double im[2] = { fabs(sin(w * Ts[i])), -fabs(sin(w * Ts[i])) };
            same_multipliers(&fl, re, im, 1e-8, files[f]);
            ck_assert_int_eq(fl.verdict, HS_FL_STABLE);
            ck_assert(fl.gap < 1e-12);
            hs_fl_floquet_free(&fl);
            close_case(&c);
        }
}
END_TEST

START_TEST(mathieu)
{
    static const double pts[][2] = { { 0.25, 0.1 }, { 0.5, 0.1 }, { 1.0, 0.3 }, { 0.9, 0.3 },
                                     { 0.1, 0.4 }, { 2.3, 0.8 } };
    for (size_t p = 0; p < sizeof pts / sizeof *pts; p++) {
        sets s = { 2, { "delta", "eps" }, { pts[p][0], pts[p][1] } };
        fcase c;
        open_case(&c, "mathieu.yaml", NULL, &s);
        double T = 2 * PI, re[2], im[2];
        hs_floquet fl = floquet(&c, T);
        hill h = { pts[p][0], pts[p][1], 1, 0, 0, 0, 0 };
        hill_multipliers(&h, T, re, im);
        same_multipliers(&fl, re, im, 1e-8, "mathieu");
        ck_assert_int_eq(fl.verdict, hypot(re[0], im[0]) > 1 + 1e-6 ? HS_FL_UNSTABLE
                         : HS_FL_STABLE);
        hs_fl_floquet_free(&fl);
        close_case(&c);
    }
}
END_TEST

/* Kapitza's upright pendulum at w: both forms, the same multipliers, and
 * those of theta'' = (g - a w^2 cos w t) theta / l integrated here. */
static hs_fl_verdict kapitza(double w)
{
    hs_floquet fl[2];
    static const char *const files[] = { "kapitza.yaml", "kapitza_angle.yaml" };
    double T = 2 * PI / w, re[2], im[2];
    hill h = { 0, 0, w, 1, 0.1, 1, 9.81 };
    hill_multipliers(&h, T, re, im);
    for (int f = 0; f < 2; f++) {
        sets s = { 1, { "w" }, { w } };
        fcase c;
        open_case(&c, files[f], NULL, &s);
        fl[f] = floquet(&c, T);
        ck_assert_msg(fl[f].gap < 1e-9, "%s at w = %g: not periodic (%g)", files[f], w,
                      fl[f].gap);
        same_multipliers(&fl[f], re, im, 1e-8, files[f]);
        close_case(&c);
    }
    same_multipliers(&fl[0], fl[1].re, fl[1].im, 1e-7, "Cartesian against angle form");
    hs_fl_verdict v = fl[0].verdict;
    ck_assert_int_eq(fl[1].verdict, v);
    hs_fl_floquet_free(&fl[0]);
    hs_fl_floquet_free(&fl[1]);
    return v;
}

START_TEST(kapitza_forms)
{
    ck_assert_int_eq(kapitza(30), HS_FL_UNSTABLE);
    ck_assert_int_eq(kapitza(60), HS_FL_STABLE);
}
END_TEST

START_TEST(kapitza_threshold)
{
    ck_assert_int_eq(kapitza(44.0), HS_FL_UNSTABLE);
    ck_assert_int_eq(kapitza(44.3), HS_FL_UNSTABLE);
    ck_assert_int_eq(kapitza(44.5), HS_FL_STABLE);
    ck_assert_int_eq(kapitza(45.0), HS_FL_STABLE);
}
END_TEST

/* ---- Lyapunov exponents ---- */

typedef struct lyrows { double t, lam[8]; size_t count, rows; } lyrows;

static int keep_row(double t, const double *lambda, size_t count, void *ctx)
{
    lyrows *r = ctx;
    r->t = t;
    r->count = count;
    memcpy(r->lam, lambda, count * sizeof *lambda);
    r->rows++;
    return 0;
}

START_TEST(lyapunov_small_oscillation)
{
    static const char *const files[] = { "pendulum.yaml", "pendulum_angle.yaml" };
    for (int f = 0; f < 2; f++) {
        sets s = { 1, { "theta0" }, { 0.05 } };
        fcase c;
        open_case(&c, files[f], NULL, &s);
        lyrows r = { 0 };
        size_t count;
        ck_assert_int_eq(hs_fl_lyapunov(c.f, 100, 1, 1, keep_row, &r, &count, &c.err), 0);
        ck_assert_uint_eq(count, 2);
        ck_assert_uint_eq(r.rows, 100);
        ck_assert(fabs(r.t - (c.m->t0 + 100)) < 1e-12);
        ck_assert_msg(fabs(r.lam[0]) < 0.02, "%s: lambda_1 = %g", files[f], r.lam[0]);
        ck_assert_msg(fabs(r.lam[0] + r.lam[1]) < 1e-3, "%s: sum %g", files[f],
                      r.lam[0] + r.lam[1]);
        close_case(&c);
    }
}
END_TEST

/* The pendulum balanced upright (theta0 = pi, at rest): the linearization
 * theta'' = w^2 theta, w = sqrt(g/l), holds along the whole run (the orbit
 * leaves the top by sin(pi) e^(w t) ~ 1e-9 by t = 5), so Benettin's
 * running estimate after each renormalization is exactly
 * log |e^(A t) u0| / t, A = [0 1; w^2 0], u0 the first tangent vector (the
 * basis is the identity for a model without constraints: e1 for the
 * spectrum, (1, 1.618...) normalized for the largest alone).  Every row
 * checks the renormalization, the metric and the time base; t -> inf gives
 * sqrt(g/l). */
typedef struct upright { double w, u0[2], worst; size_t rows; int spectrum; } upright;

static int upright_row(double t, const double *lambda, size_t count, void *ctx)
{
    upright *u = ctx;
    double ch = cosh(u->w * t), sh = sinh(u->w * t);
    double x = ch * u->u0[0] + sh / u->w * u->u0[1], y = u->w * sh * u->u0[0] + ch * u->u0[1];
    double want = log(hypot(x, y)) / t;
    u->worst = fmax(u->worst, fabs(lambda[0] - want));
    if (u->spectrum && count == 2)       /* det e^(A t) = 1 */
        u->worst = fmax(u->worst, fabs(lambda[1] + want));
    u->rows++;
    return 0;
}

START_TEST(lyapunov_upright_pendulum)
{
    for (int spectrum = 0; spectrum < 2; spectrum++) {
        sets s = { 1, { "theta0" }, { PI } };
        fcase c;
        open_case(&c, "pendulum_angle.yaml", NULL, &s);
        double phi = 0.6180339887498949, nrm = hypot(1, 1 + phi);
        upright u = { sqrt(9.81), { 1, 0 }, 0, 0, spectrum };
        if (!spectrum) {
            u.u0[0] = 1 / nrm;
            u.u0[1] = (1 + phi) / nrm;
        }
        size_t count;
        ck_assert_int_eq(hs_fl_lyapunov(c.f, 5, 0.25, spectrum, upright_row, &u, &count,
                                        &c.err), 0);
        ck_assert_uint_eq(count, spectrum ? 2 : 1);
        ck_assert_uint_eq(u.rows, 20);
        ck_assert_msg(u.worst < 1e-9, "spectrum %d: worst |lambda - closed form| %g", spectrum,
                      u.worst);
        close_case(&c);
    }
}
END_TEST

/* hs_fl_project (a QR factorization of J^T) against the basis of
 * hs_fl_tangent: P -> B B^T P, off the start, on both Cartesian models. */
START_TEST(project_matches_basis)
{
    static const char *const files[] = { "double_pendulum.yaml", "pendulum.yaml" };
    for (int f = 0; f < 2; f++) {
        fcase c;
        open_case(&c, files[f], NULL, NULL);
        size_t n = c.m->n, nn = 2 * n, d, nc = 3;
        double *x = calloc(nn, sizeof *x), *B = calloc(nn * nn, sizeof *B);
        double *P = calloc(nn * nc, sizeof *P), *W = calloc(nn * nc, sizeof *W);
        memcpy(x, c.m->q0, n * sizeof *x);
        memcpy(x + n, c.m->v0, n * sizeof *x);
        ck_assert_int_eq(hs_fl_propagate(c.f, c.m->t0, c.m->t0 + 0.7, x, NULL, 0, &c.err), 0);
        ck_assert_int_eq(hs_fl_tangent(c.f, c.m->t0 + 0.7, x, x + n, B, &d, &c.err), 0);
        for (size_t i = 0; i < nn * nc; i++)
            P[i] = sin(1.0 + 0.37 * (double)i * (double)i);
        for (size_t r = 0; r < nn; r++)          /* W = B B^T P */
            for (size_t j = 0; j < nc; j++) {
                double sum = 0;
                for (size_t a = 0; a < d; a++) {
                    double bt = 0;
                    for (size_t r2 = 0; r2 < nn; r2++)
                        bt += B[r2 * d + a] * P[r2 * nc + j];
                    sum += B[r * d + a] * bt;
                }
                W[r * nc + j] = sum;
            }
        ck_assert_int_eq(hs_fl_project(c.f, c.m->t0 + 0.7, x, x + n, P, nc, &c.err), 0);
        for (size_t i = 0; i < nn * nc; i++)
            ck_assert_msg(fabs(P[i] - W[i]) < 1e-12, "%s: entry %zu: %.17g against %.17g",
                          files[f], i, P[i], W[i]);
        free(x); free(B); free(P); free(W);
        close_case(&c);
    }
}
END_TEST

/* Liouville: the spectrum sums to 0 up to (1/T) log of the ratio of the
 * Euclidean to the symplectic volume at the ends, a bounded quantity: its
 * running sum times t stays bounded (below 4 here, to t = 200). */
static int sum_row(double t, const double *lambda, size_t count, void *ctx)
{
    double *worst = ctx, s = 0;
    for (size_t j = 0; j < count; j++)
        s += lambda[j];
    if (t >= 20)
        *worst = fmax(*worst, fabs(s) * t);
    return 0;
}

START_TEST(lyapunov_spectrum_sums_to_zero)
{
    static const char *const files[] = { "double_pendulum.yaml", "double_pendulum_angles.yaml" };
    for (int f = 0; f < 2; f++) {
        fcase c;
        open_case(&c, files[f], NULL, NULL);
        double worst = 0;
        size_t count;
        ck_assert_int_eq(hs_fl_lyapunov(c.f, 200, 1, 1, sum_row, &worst, &count, &c.err), 0);
        ck_assert_uint_eq(count, 4);
        ck_assert_msg(worst < 4, "%s: |sum of the exponents| t up to %g", files[f], worst);
        close_case(&c);
    }
}
END_TEST

/* The double pendulum released horizontally, T = 200: chaotic, a largest
 * exponent near 0.85-0.95 in both forms (a finite-time estimate: the
 * trajectories of the two forms part after t ~ 30, so the estimates
 * agree only statistically). */
START_TEST(lyapunov_double_pendulum)
{
    static const char *const files[] = { "double_pendulum.yaml", "double_pendulum_angles.yaml" };
    for (int f = 0; f < 2; f++) {
        sets s = { 2, { "th1", "th2" }, { PI / 2, PI / 2 } };
        fcase c;
        open_case(&c, files[f], NULL, &s);
        lyrows r = { 0 };
        size_t count;
        ck_assert_int_eq(hs_fl_lyapunov(c.f, 200, 1, 0, keep_row, &r, &count, &c.err), 0);
        ck_assert_uint_eq(count, 1);
        ck_assert_msg(r.lam[0] > 0.78 && r.lam[0] < 1.05, "%s: lambda_1 = %g", files[f],
                      r.lam[0]);
        close_case(&c);
    }
}
END_TEST

/* ---- sensitivities to parameters ---- */

typedef struct senscheck {
    double l, factor;      /* dtheta/dp = factor * (-t theta'/(2 l)) */
    double worst;
    long rows;
} senscheck;

static int sens_row(double t, const double *x, const double *lam, const double *S,
                    const double *dlam, void *ctx)
{
    senscheck *c = ctx;
    (void)lam;
    (void)dlam;
    double want = c->factor * (-t * x[1] / (2 * c->l));
    c->worst = fmax(c->worst, fabs(S[0] - want));
    c->rows++;
    return 0;
}

/* theta(t; l) = Theta(t sqrt(g/l)): dtheta/dl = -t theta'/(2 l) exactly. */
START_TEST(sens_pendulum_scaling)
{
    sets s = { 1, { "l" }, { 1.7 } };
    fcase c;
    open_case(&c, "pendulum_angle.yaml", NULL, &s);
    const char *names[2] = { "l", "theta0" };
    hs_fl_sens *sn = hs_fl_sens_new(c.f, names, 2, &c.err);
    ck_assert_msg(sn != NULL, "%s", c.err.msg);
    senscheck k = { 1.7, 1, 0, 0 };
    double off = -1;
    ck_assert_int_eq(hs_fl_sens_run(sn, 10, 0.01, sens_row, &k, &off, &c.err), 0);
    ck_assert_msg(k.worst < 1e-7, "max |dtheta/dl + t theta'/(2l)| = %g", k.worst);
    ck_assert_int_eq(k.rows, 1001);
    ck_assert(off == 0);
    hs_fl_sens_free(sn);
    close_case(&c);
}
END_TEST

/* Native kernels (src/native) for the variational programs: the same
 * doubles bit for bit as the VM, the Jacobians and a propagated monodromy
 * of the moving constraint (Kapitza, Cartesian) compared with memcmp.
 * Without a compiler the handle is NULL and the VM is compared with
 * itself (said on stderr). */
static void propagate_both(hs_fl *f, double *x, double *P, size_t n, hs_error *err)
{
    for (size_t i = 0; i < 2 * n; i++)
        for (size_t j = 0; j < 2 * n; j++)
            P[i * 2 * n + j] = i == j;
    ck_assert_int_eq(hs_fl_propagate(f, 0, 0.3, x, P, 2 * n, err), 0);
}

START_TEST(native_same_bits)
{
    fcase c;
    open_case(&c, "kapitza.yaml", NULL, NULL);
    size_t n = c.m->n;
    char dir[] = "/tmp/holosim-check-flow.XXXXXX";
    ck_assert(mkdtemp(dir) != NULL);
    hs_native_opts no;
    hs_native_opts_init(&no);
    no.policy = HS_NATIVE_ALWAYS;
    no.cache_dir = dir;
    const hs_prog *progs[HS_FL_NPROGS];
    size_t np = hs_fl_programs(c.f, NULL, progs);
    ck_assert_uint_eq(np, 2);
    char note[512];
    hs_native *h = hs_native_load(progs, np, &no, NULL, note, sizeof note);
    if (!h)
        fprintf(stderr, "check_flow: native_same_bits: no native kernels (%s)\n", note);
    double q[2] = { 0.3, 1.05 }, v[2] = { -0.2, 0.4 }, out[2][2 + 1 + 8];
    double *x[2], *P[2];
    for (int k = 0; k < 2; k++) {
        hs_fl_use_native(c.f, NULL, k ? h : NULL);
        double *o = out[k];
        ck_assert_int_eq(hs_fl_accel(c.f, 0.37, q, v, o, o + 2, o + 3, o + 7, &c.err), 0);
        x[k] = calloc(2 * n, sizeof *x[k]);
        P[k] = calloc(4 * n * n, sizeof *P[k]);
        x[k][0] = 0.1;                  /* on the rod at t = 0: y = a + sqrt(l^2 - x^2) */
        x[k][1] = 0.1 + sqrt(1 - 0.01);
        propagate_both(c.f, x[k], P[k], n, &c.err);
    }
    hs_fl_use_native(c.f, NULL, NULL);
    ck_assert(memcmp(out[0], out[1], sizeof out[0]) == 0);
    ck_assert(memcmp(x[0], x[1], 2 * n * sizeof *x[0]) == 0);
    ck_assert(memcmp(P[0], P[1], 4 * n * n * sizeof *P[0]) == 0);
    for (int k = 0; k < 2; k++) {
        free(x[k]);
        free(P[k]);
    }
    hs_native_free(h);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
    close_case(&c);
}
END_TEST

/* A chain of N links in Cartesian coordinates (bench/chain_model.sh's),
 * released at th from the vertical with a small fan velocity. */
static char *chain_text(int N)
{
    size_t cap = 400 + 200 * (size_t)N, len = 0;
    char *t = malloc(cap);
    ck_assert(t != NULL);
    len += (size_t)snprintf(t + len, cap - len, "parameters: {m: 1.0, l: 1.0, g: 9.81, "
                            "th: 1.0}\ncoordinates: [");
    for (int i = 1; i <= N; i++)
        len += (size_t)snprintf(t + len, cap - len, "%sx%d, y%d", i > 1 ? ", " : "", i, i);
    len += (size_t)snprintf(t + len, cap - len, "]\nmass: [");
    for (int i = 1; i <= 2 * N; i++)
        len += (size_t)snprintf(t + len, cap - len, "%sm", i > 1 ? ", " : "");
    len += (size_t)snprintf(t + len, cap - len, "]\npotential: m*g*(y1");
    for (int i = 2; i <= N; i++)
        len += (size_t)snprintf(t + len, cap - len, " + y%d", i);
    len += (size_t)snprintf(t + len, cap - len, ")\nconstraints:\n  link1: x1^2 + y1^2 - l^2\n");
    for (int i = 2; i <= N; i++)
        len += (size_t)snprintf(t + len, cap - len, "  link%d: (x%d - x%d)^2 + (y%d - y%d)^2 - "
                                "l^2\n", i, i, i - 1, i, i - 1);
    len += (size_t)snprintf(t + len, cap - len, "initial:\n  q:\n");
    for (int i = 1; i <= N; i++)
        len += (size_t)snprintf(t + len, cap - len, "    x%d: %d*l*sin(th)\n    y%d: "
                                "-%d*l*cos(th)\n", i, i, i, i);
    len += (size_t)snprintf(t + len, cap - len, "  v:\n");
    for (int i = 1; i <= N; i++)       /* a rotation of the straight chain: permitted */
        len += (size_t)snprintf(t + len, cap - len, "    x%d: %d*0.3*cos(th)\n    y%d: "
                                "%d*0.3*sin(th)\n", i, i, i, i);
    snprintf(t + len, cap - len, "simulate: {rtol: 1e-10, atol: 1e-10}\n");
    return t;
}

/* Along the ODE the saddle-point matrix is factored
 * sparse (KLU): a 12-link Cartesian chain (n + k = 36), its motion and
 * the 24 tangent vectors of the constraint manifold carried over 0.5 s,
 * against the dense LU's, and the tangent flow against central
 * differences of the flow itself. */
START_TEST(sparse_saddle_chain)
{
    char *text = chain_text(12);
    fcase c;
    open_case(&c, NULL, text, NULL);
    size_t n = c.m->n, nn = 2 * n, dim;
    ck_assert_uint_ge(n + c.m->k, 32);
    double *x0 = calloc(nn, sizeof *x0), *B = calloc(nn * nn, sizeof *B);
    double *x[2], *P[2];
    memcpy(x0, c.m->q0, n * sizeof *x0);
    memcpy(x0 + n, c.m->v0, n * sizeof *x0);
    ck_assert_int_eq(hs_fl_tangent(c.f, 0, x0, x0 + n, B, &dim, &c.err), 0);
    ck_assert_uint_eq(dim, 2 * (n - c.m->k));
    for (int k = 0; k < 2; k++) {
        hs_fl_use_sparse(c.f, k == 0);
        x[k] = malloc(nn * sizeof *x[k]);
        P[k] = malloc(nn * dim * sizeof *P[k]);
        memcpy(x[k], x0, nn * sizeof *x0);
        memcpy(P[k], B, nn * dim * sizeof *B);
        ck_assert_msg(hs_fl_propagate(c.f, 0, 0.5, x[k], P[k], dim, &c.err) == 0, "%s",
                      c.err.msg);
    }
    double bigx = 0, bigp = 0, dx = 0, dp = 0;
    for (size_t i = 0; i < nn; i++) {
        bigx = fmax(bigx, fabs(x[1][i]));
        dx = fmax(dx, fabs(x[0][i] - x[1][i]));
    }
    for (size_t i = 0; i < nn * dim; i++) {
        bigp = fmax(bigp, fabs(P[1][i]));
        dp = fmax(dp, fabs(P[0][i] - P[1][i]));
    }
    ck_assert_msg(dx <= 1e-9 * bigx, "state: sparse against dense %.3g (of %.3g)", dx, bigx);
    ck_assert_msg(dp <= 1e-8 * bigp, "tangent vectors: sparse against dense %.3g (of %.3g)",
                  dp, bigp);
    /* the sparse tangent flow against central differences, three directions */
    hs_fl_use_sparse(c.f, 1);
    double eps = 1e-5, *xp = malloc(nn * sizeof *xp), *xm = malloc(nn * sizeof *xm);
    for (size_t j = 0; j < dim; j += dim / 3) {
        for (size_t i = 0; i < nn; i++) {
            xp[i] = x0[i] + eps * B[i * dim + j];
            xm[i] = x0[i] - eps * B[i * dim + j];
        }
        ck_assert_int_eq(hs_fl_propagate(c.f, 0, 0.5, xp, NULL, 0, &c.err), 0);
        ck_assert_int_eq(hs_fl_propagate(c.f, 0, 0.5, xm, NULL, 0, &c.err), 0);
        double big = 0;
        for (size_t i = 0; i < nn; i++)
            big = fmax(big, fabs(P[0][i * dim + j]));
        for (size_t i = 0; i < nn; i++) {
            double fd = (xp[i] - xm[i]) / (2 * eps);
            ck_assert_msg(fabs(fd - P[0][i * dim + j]) <= 1e-5 * big, "dx_%zu/db_%zu = %.12g, "
                          "finite differences %.12g", i, j, P[0][i * dim + j], fd);
        }
    }
    for (int k = 0; k < 2; k++) {
        free(x[k]);
        free(P[k]);
    }
    free(x0); free(B); free(xp); free(xm); free(text);
    close_case(&c);
}
END_TEST

/* Beyond HS_FL_MAX the largest Lyapunov exponent projects through the
 * sparse [I J^T; J 0] instead of a dense QR of J^T, from the vector
 * 1 + phi r projected: on the 12-link chain, the projection of random
 * vectors the same to round-off and idempotent; the handle's dense
 * arrays dropped, its exponent over one interval of 0.5 s against central
 * differences of two motions from the same start (log |dx(T)| / T, the
 * direction projected by the QR); the spectrum refused with the limit. */
START_TEST(lyapunov_sparse_projection)
{
    char *text = chain_text(12);
    fcase c;
    open_case(&c, NULL, text, NULL);
    size_t n = c.m->n, nn = 2 * n, ncol = 3;
    double *x = malloc(nn * sizeof *x), *P[2];
    memcpy(x, c.m->q0, n * sizeof *x);
    memcpy(x + n, c.m->v0, n * sizeof *x);
    unsigned long seed = 3;
    for (int k = 0; k < 2; k++)
        P[k] = malloc(nn * ncol * sizeof *P[k]);
    for (size_t i = 0; i < nn * ncol; i++) {
        seed = seed * 6364136223846793005UL + 1442695040888963407UL;
        P[0][i] = P[1][i] = (double)(seed >> 11) / 9007199254740992.0 - 0.5;
    }
    ck_assert_int_eq(hs_fl_project(c.f, 0.1, x, x + n, P[0], ncol, &c.err), 0);
    ck_assert_int_eq(hs_fl_project_sparse(c.f, 0.1, x, x + n, P[1], ncol, &c.err), 0);
    for (size_t i = 0; i < nn * ncol; i++)
        ck_assert_msg(fabs(P[0][i] - P[1][i]) <= 1e-13, "entry %zu: QR %.17g, sparse %.17g", i,
                      P[0][i], P[1][i]);
    memcpy(P[0], P[1], nn * ncol * sizeof *P[0]);
    ck_assert_int_eq(hs_fl_project_sparse(c.f, 0.1, x, x + n, P[1], ncol, &c.err), 0);
    for (size_t i = 0; i < nn * ncol; i++)
        ck_assert(fabs(P[0][i] - P[1][i]) <= 1e-13);
    /* the start direction, by the QR, unit length */
    double *u = malloc(nn * sizeof *u), *xp = malloc(nn * sizeof *xp), *xm = malloc(nn * sizeof *xm);
    for (size_t r = 0; r < nn; r++)
        u[r] = 1 + 0.6180339887498949 * (double)r;
    ck_assert_int_eq(hs_fl_project(c.f, 0, x, x + n, u, 1, &c.err), 0);
    double nu = 0, eps = 1e-6, T = 0.5;
    for (size_t r = 0; r < nn; r++)
        nu += u[r] * u[r];
    for (size_t r = 0; r < nn; r++) {
        xp[r] = x[r] + eps * u[r] / sqrt(nu);
        xm[r] = x[r] - eps * u[r] / sqrt(nu);
    }
    ck_assert_int_eq(hs_fl_propagate(c.f, 0, T, xp, NULL, 0, &c.err), 0);
    ck_assert_int_eq(hs_fl_propagate(c.f, 0, T, xm, NULL, 0, &c.err), 0);
    double nd = 0;
    for (size_t r = 0; r < nn; r++)
        nd += (xp[r] - xm[r]) * (xp[r] - xm[r]) / (4 * eps * eps);
    double want = log(sqrt(nd)) / T;
    hs_fl_drop_dense(c.f);
    lyrows kp = { 0 };
    size_t count = 0;
    ck_assert_msg(hs_fl_lyapunov(c.f, T, T, 0, keep_row, &kp, &count, &c.err) == 0, "%s",
                  c.err.msg);
    ck_assert_uint_eq(count, 1);
    ck_assert_uint_eq(kp.rows, 1);
    ck_assert_msg(fabs(kp.lam[0] - want) <= 1e-7, "lambda_1 %.17g, central differences %.17g",
                  kp.lam[0], want);
    ck_assert_double_gt(want, 0.05);          /* a direction that grows */
    lyrows none = { 0 };
    ck_assert_int_eq(hs_fl_lyapunov(c.f, T, T, 1, keep_row, &none, &count, &c.err), 2);
    ck_assert(strstr(c.err.msg, "the limit is 400") != NULL);
    free(x); free(P[0]); free(P[1]); free(u); free(xp); free(xm); free(text);
    close_case(&c);
}
END_TEST

/* A parameter computed from another is followed through it: l = 2 L, so
 * dtheta/dL = 2 dtheta/dl; and the initial angle through th0 = 3 a. */
START_TEST(sens_derived_parameter)
{
    static const char text[] =
        "parameters: {L: 0.6, l: 2*L, g: 9.81, a: 0.2, th0: 3*a}\n"
        "coordinates: [theta]\n"
        "kinetic: 0.5*l^2*theta'^2\n"
        "potential: -g*l*cos(theta)\n"
        "initial: {q: {theta: th0}}\n"
        "simulate: {t_end: 5, rtol: 1e-11, atol: 1e-11}\n";
    fcase c;
    open_case(&c, NULL, text, NULL);
    const char *names[2] = { "L", "a" };
    hs_fl_sens *sn = hs_fl_sens_new(c.f, names, 2, &c.err);
    ck_assert_msg(sn != NULL, "%s", c.err.msg);
    senscheck k = { 1.2, 2, 0, 0 };
    double off;
    ck_assert_int_eq(hs_fl_sens_run(sn, 5, 0.05, sens_row, &k, &off, &c.err), 0);
    ck_assert_msg(k.worst < 1e-7, "max |dtheta/dL - 2 dtheta/dl| = %g", k.worst);
    hs_fl_sens_free(sn);
    close_case(&c);
}
END_TEST

/* d theta/d a at t0 = 3 (th0 = 3 a), and d theta'/d a = 0 there. */
static int first_row(double t, const double *x, const double *lam, const double *S,
                     const double *dlam, void *ctx)
{
    (void)t; (void)x; (void)lam; (void)dlam;
    double *first = ctx;
    if (isnan(first[0])) {
        first[0] = S[1];   /* [2n x np]: row 0 (theta), column 1 (a) */
        first[1] = S[3];   /* row 1 (theta'), column 1 */
    }
    return 0;
}

START_TEST(sens_initial_through_parameter)
{
    static const char text[] =
        "parameters: {L: 0.6, l: 2*L, g: 9.81, a: 0.2, th0: 3*a}\n"
        "coordinates: [theta]\n"
        "kinetic: 0.5*l^2*theta'^2\n"
        "potential: -g*l*cos(theta)\n"
        "initial: {q: {theta: th0}}\n";
    fcase c;
    open_case(&c, NULL, text, NULL);
    const char *names[2] = { "L", "a" };
    hs_fl_sens *sn = hs_fl_sens_new(c.f, names, 2, &c.err);
    ck_assert_msg(sn != NULL, "%s", c.err.msg);
    double first[2] = { NAN, NAN }, off;
    ck_assert_int_eq(hs_fl_sens_run(sn, 0.1, 0.1, first_row, first, &off, &c.err), 0);
    ck_assert_msg(first[0] == 3 && first[1] == 0, "d(theta, theta')/da at t0: %g %g",
                  first[0], first[1]);
    hs_fl_sens_free(sn);
    close_case(&c);
}
END_TEST

START_TEST(sens_bad_names)
{
    fcase c;
    open_case(&c, "pendulum.yaml", NULL, NULL);
    const char *typo[1] = { "thet0" }, *twice[2] = { "g", "g" }, *coord[1] = { "x" };
    ck_assert(hs_fl_sens_new(c.f, typo, 1, &c.err) == NULL);
    ck_assert_int_eq(c.err.code, 2);
    ck_assert_msg(strstr(c.err.msg, "unknown parameter 'thet0' (did you mean 'theta0'?)"),
                  "%s", c.err.msg);
    hs_error_init(&c.err);
    ck_assert(hs_fl_sens_new(c.f, twice, 2, &c.err) == NULL);
    ck_assert_msg(c.err.code == 2 && strstr(c.err.msg, "twice"), "%s", c.err.msg);
    hs_error_init(&c.err);
    ck_assert(hs_fl_sens_new(c.f, coord, 1, &c.err) == NULL);
    ck_assert_msg(c.err.code == 2 && strstr(c.err.msg, "unknown parameter 'x'"), "%s",
                  c.err.msg);
    close_case(&c);
}
END_TEST

static Suite *flow_suite(void)
{
    Suite *s = suite_create("flow");
    TCase *t = tcase_create("variational");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, jacobian_double_pendulum);
    tcase_add_test(t, jacobian_moving_constraint);
    tcase_add_test(t, flow_double_pendulum);
    tcase_add_test(t, flow_kapitza);
    tcase_add_test(t, hanging_pendulum);
    tcase_add_test(t, mathieu);
    tcase_add_test(t, kapitza_forms);
    tcase_add_test(t, kapitza_threshold);
    tcase_add_test(t, lyapunov_small_oscillation);
    tcase_add_test(t, lyapunov_spectrum_sums_to_zero);
    tcase_add_test(t, lyapunov_double_pendulum);
    tcase_add_test(t, lyapunov_upright_pendulum);
    tcase_add_test(t, project_matches_basis);
    tcase_add_test(t, sparse_saddle_chain);
    tcase_add_test(t, lyapunov_sparse_projection);
    tcase_add_test(t, sens_pendulum_scaling);
    tcase_add_test(t, sens_derived_parameter);
    tcase_add_test(t, sens_initial_through_parameter);
    tcase_add_test(t, sens_bad_names);
    tcase_add_test(t, native_same_bits);
    suite_add_tcase(s, t);
    return s;
}

HS_CHECK_MAIN(flow_suite)
