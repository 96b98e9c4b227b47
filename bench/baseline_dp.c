/* Hand-written C + GSL yardstick for holosim: the planar double pendulum in
 * Cartesian coordinates, integrated the way holosim integrates it.
 *
 *   q = (x1, y1, x2, y2), M = diag(m1, m1, m2, m2), Q = (0, -m1 g, 0, -m2 g)
 *   G1 = x1^2 + y1^2 - l1^2,  G2 = (x2-x1)^2 + (y2-y1)^2 - l2^2
 *   C = G_q M^-1 G_q^T,  Lambda = -C^-1 (G_q M^-1 Q + gamma),
 *   a = M^-1 (Q + G_q^T Lambda),  gamma = D(D G)
 *
 * C is factored with gsl_linalg_cholesky_decomp1 (as holosim does, without
 * its condition estimate).  gsl_odeiv2 rk8pd, rtol = atol = 1e-10, driven by
 * gsl_odeiv2_evolve_apply with t1 = the next output time, so every output
 * time is a step end, exactly like src/integrate/integrate.c.  Rows t, q, v
 * with printf("%.17g").
 *
 *   baseline_dp [-T t_end] [-d dt] [-o FILE] [-p] [-w] [-r]
 *     -T  end time (500)          -d  output interval (0.01)
 *     -o  CSV file (stdout)       -p  project onto G = 0, Gdot = 0 after every
 *                                     step, as holosim --stabilize projection
 *     -w  integrate the work integrals W_R, W_nc too (state 2n+2, as holosim)
 *     -r  time the right-hand side alone (ns per evaluation) and exit
 * A summary line (steps, rhs evaluations, wall seconds) goes to stderr. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_odeiv2.h>

enum { N = 4, K = 2 };

static const double m1 = 1, m2 = 1, l1 = 1, l2 = 1, g = 9.81;
static const double th1 = 1.0, th2 = 1.5;

typedef struct {
    gsl_matrix *C;
    gsl_vector *rhs;
    double Lambda[K];
    long nrhs;
} work;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* G_q rows (nonzeros of row 1: x1, y1; row 2: x1, y1, x2, y2). */
static void jac_rows(const double *q, double gq1[2], double gq2[4])
{
    double dx = q[2] - q[0], dy = q[3] - q[1];
    gq1[0] = 2 * q[0];
    gq1[1] = 2 * q[1];
    gq2[0] = -2 * dx;
    gq2[1] = -2 * dy;
    gq2[2] = 2 * dx;
    gq2[3] = 2 * dy;
}

static int accel(work *w, const double *q, const double *v, double *a)
{
    const double mi[N] = { 1 / m1, 1 / m1, 1 / m2, 1 / m2 };
    const double Q[N] = { 0, -m1 * g, 0, -m2 * g };
    double gq1[2], gq2[4];
    w->nrhs++;
    jac_rows(q, gq1, gq2);
    double dvx = v[2] - v[0], dvy = v[3] - v[1];
    double gamma1 = 2 * (v[0] * v[0] + v[1] * v[1]);
    double gamma2 = 2 * (dvx * dvx + dvy * dvy);
    double z[N];
    for (int i = 0; i < N; i++)
        z[i] = mi[i] * Q[i];                               /* z = M^-1 Q */
    double *Cd = w->C->data;
    Cd[0] = gq1[0] * mi[0] * gq1[0] + gq1[1] * mi[1] * gq1[1];
    Cd[1] = Cd[2] = gq1[0] * mi[0] * gq2[0] + gq1[1] * mi[1] * gq2[1];
    Cd[3] = gq2[0] * mi[0] * gq2[0] + gq2[1] * mi[1] * gq2[1] + gq2[2] * mi[2] * gq2[2] +
            gq2[3] * mi[3] * gq2[3];
    double *r = w->rhs->data;
    r[0] = gq1[0] * z[0] + gq1[1] * z[1] + gamma1;
    r[1] = gq2[0] * z[0] + gq2[1] * z[1] + gq2[2] * z[2] + gq2[3] * z[3] + gamma2;
    if (gsl_linalg_cholesky_decomp1(w->C) != GSL_SUCCESS)
        return GSL_EBADFUNC;
    gsl_linalg_cholesky_svx(w->C, w->rhs);
    w->Lambda[0] = -r[0];
    w->Lambda[1] = -r[1];
    a[0] = z[0] + mi[0] * (gq1[0] * w->Lambda[0] + gq2[0] * w->Lambda[1]);
    a[1] = z[1] + mi[1] * (gq1[1] * w->Lambda[0] + gq2[1] * w->Lambda[1]);
    a[2] = z[2] + mi[2] * gq2[2] * w->Lambda[1];
    a[3] = z[3] + mi[3] * gq2[3] * w->Lambda[1];
    return GSL_SUCCESS;
}

static int with_work;   /* -w */

static int rhs(double t, const double y[], double f[], void *params)
{
    (void)t;
    work *w = params;
    const double *q = y, *v = y + N;
    memcpy(f, v, N * sizeof *f);
    if (accel(w, q, v, f + N) != GSL_SUCCESS)
        return GSL_EBADFUNC;
    if (with_work) {               /* R.v = Lambda . (G_q v), P_nc = 0 */
        double gq1[2], gq2[4];
        jac_rows(q, gq1, gq2);
        f[2 * N] = w->Lambda[0] * (gq1[0] * v[0] + gq1[1] * v[1]) +
                   w->Lambda[1] * (gq2[0] * v[0] + gq2[1] * v[1] + gq2[2] * v[2] +
                                   gq2[3] * v[3]);
        f[2 * N + 1] = 0;
    }
    return GSL_SUCCESS;
}

static void constraints(const double *q, double G[K])
{
    double dx = q[2] - q[0], dy = q[3] - q[1];
    G[0] = q[0] * q[0] + q[1] * q[1] - l1 * l1;
    G[1] = dx * dx + dy * dy - l2 * l2;
}

/* A = G_q M^-1 G_q^T (factored into L), out = M^-1 G_q^T A^-1 r */
static void min_norm_step(const double *q, const double r[K], double out[N])
{
    const double mi[N] = { 1 / m1, 1 / m1, 1 / m2, 1 / m2 };
    double gq1[2], gq2[4];
    jac_rows(q, gq1, gq2);
    double A00 = gq1[0] * mi[0] * gq1[0] + gq1[1] * mi[1] * gq1[1];
    double A10 = gq1[0] * mi[0] * gq2[0] + gq1[1] * mi[1] * gq2[1];
    double A11 = gq2[0] * mi[0] * gq2[0] + gq2[1] * mi[1] * gq2[1] +
                 gq2[2] * mi[2] * gq2[2] + gq2[3] * mi[3] * gq2[3];
    double L00 = sqrt(A00), L10 = A10 / L00, L11 = sqrt(A11 - L10 * L10);
    double u0 = r[0] / L00, u1 = (r[1] - L10 * u0) / L11;   /* L u = r */
    double mu1 = u1 / L11, mu0 = (u0 - L10 * mu1) / L00;     /* L^T mu = u */
    out[0] = mi[0] * (gq1[0] * mu0 + gq2[0] * mu1);
    out[1] = mi[1] * (gq1[1] * mu0 + gq2[1] * mu1);
    out[2] = mi[2] * gq2[2] * mu1;
    out[3] = mi[3] * gq2[3] * mu1;
}

static double max_abs2(const double G[K])
{
    return fmax(fabs(G[0]), fabs(G[1]));
}

/* holosim's projection stabilization: Newton steps in the M-norm (at least
 * one while G != 0, until max |G| <= 1e-12, halving on no decrease), then
 * the velocity projection v <- v - M^-1 G_q^T A^-1 G_q v. */
static void project(double *q, double *v)
{
    double G[K], dq[N], qt[N], Gn[K];
    constraints(q, G);
    for (int it = 0; it < 100 && (max_abs2(G) > 1e-12 || (it < 1 && max_abs2(G) > 0)); it++) {
        min_norm_step(q, G, dq);
        double g0 = hypot(G[0], G[1]), alpha = 1;
        int ok = 0;
        for (int h = 0; h < 30; h++, alpha *= 0.5) {
            for (int c = 0; c < N; c++)
                qt[c] = q[c] - alpha * dq[c];
            constraints(qt, Gn);
            double gn = hypot(Gn[0], Gn[1]);
            if (gn < (1 - 1e-4 * alpha) * g0 || gn == 0) {
                ok = 1;
                break;
            }
        }
        if (!ok)
            break;
        memcpy(q, qt, sizeof qt);
        memcpy(G, Gn, sizeof Gn);
    }
    double gq1[2], gq2[4], r[K], dv[N];
    jac_rows(q, gq1, gq2);
    r[0] = gq1[0] * v[0] + gq1[1] * v[1];
    r[1] = gq2[0] * v[0] + gq2[1] * v[1] + gq2[2] * v[2] + gq2[3] * v[3];
    min_norm_step(q, r, dv);
    for (int c = 0; c < N; c++)
        v[c] -= dv[c];
}

static void row(FILE *f, double t, const double *y)
{
    fprintf(f, "%.17g", t);
    for (int i = 0; i < 2 * N; i++)
        fprintf(f, ",%.17g", y[i]);
    fputc('\n', f);
}

static int time_rhs(work *w)
{
    double y[2 * N + 2] = { 0 }, f[2 * N + 2];
    y[0] = l1 * sin(th1);
    y[1] = -l1 * cos(th1);
    y[2] = y[0] + l2 * sin(th2);
    y[3] = y[1] - l2 * cos(th2);
    /* a tangent velocity, so gamma != 0 */
    y[4] = -y[1];
    y[5] = y[0];
    y[6] = -y[1];
    y[7] = y[0];
    long reps = 2000000;
    double best = INFINITY, sink = 0;
    for (int r = 0; r < 7; r++) {
        double t0 = now();
        for (long i = 0; i < reps; i++) {
            y[4] += 1e-300;            /* keep the call from being hoisted */
            rhs(0, y, f, w);
            sink += f[N];
        }
        best = fmin(best, (now() - t0) / (double)reps);
    }
    printf("rhs_ns %.1f (min of 7 x %ld; %g)\n", best * 1e9, reps, sink != sink ? 0.0 : 1.0);
    return 0;
}

int main(int argc, char **argv)
{
    double t_end = 500, dt = 0.01;
    const char *out = NULL;
    int proj = 0, rhs_only = 0, opt;
    while ((opt = getopt(argc, argv, "T:d:o:pwr")) != -1) {
        switch (opt) {
        case 'T': t_end = atof(optarg); break;
        case 'd': dt = atof(optarg); break;
        case 'o': out = optarg; break;
        case 'p': proj = 1; break;
        case 'w': with_work = 1; break;
        case 'r': rhs_only = 1; break;
        default:
            fprintf(stderr, "usage: baseline_dp [-T t_end] [-d dt] [-o FILE] [-p] [-w] [-r]\n");
            return 1;
        }
    }
    double wall0 = now();
    work w = { gsl_matrix_alloc(K, K), gsl_vector_alloc(K), { 0, 0 }, 0 };
    if (rhs_only)
        return time_rhs(&w);
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) {
        perror(out);
        return 1;
    }
    size_t dim = 2 * N + (with_work ? 2 : 0);
    double y[2 * N + 2] = { 0 };
    y[0] = l1 * sin(th1);
    y[1] = -l1 * cos(th1);
    y[2] = y[0] + l2 * sin(th2);
    y[3] = y[1] - l2 * cos(th2);
    if (proj)
        project(y, y + N);
    gsl_odeiv2_system sys = { rhs, NULL, dim, &w };
    double t = 0, h = fmin(dt, t_end) * 1e-3;
    gsl_odeiv2_driver *drv = gsl_odeiv2_driver_alloc_standard_new(
        &sys, gsl_odeiv2_step_rk8pd, h, 1e-10, 1e-10, 1.0, 0.0);
    fprintf(f, "t,x1,y1,x2,y2,x1',y1',x2',y2'\n");
    row(f, t, y);
    long nrows = (long)ceil(t_end / dt - 1e-9), steps = 0;
    for (long i = 1; i <= nrows; i++) {
        double t1 = i == nrows ? t_end : (double)i * dt;
        while (t < t1) {
            int st = gsl_odeiv2_evolve_apply(drv->e, drv->c, drv->s, &sys, &t, t1, &h, y);
            if (st != GSL_SUCCESS) {
                fprintf(stderr, "baseline_dp: stepper failed at t=%.17g: %s\n", t,
                        gsl_strerror(st));
                return 4;
            }
            steps++;
            if (proj) {
                project(y, y + N);
                gsl_odeiv2_evolve_reset(drv->e);
                gsl_odeiv2_step_reset(drv->s);
            }
        }
        row(f, t, y);
    }
    if (f != stdout && fclose(f) != 0) {
        perror(out);
        return 1;
    }
    fprintf(stderr, "baseline_dp: steps %ld rhs_evals %ld wall_s %.6f\n", steps, w.nrhs,
            now() - wall0);
    gsl_odeiv2_driver_free(drv);
    gsl_matrix_free(w.C);
    gsl_vector_free(w.rhs);
    return 0;
}
