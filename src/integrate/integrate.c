/* gsl_odeiv2 driver loop.  State y = (q, v, W_R, W_nc, W_t): the work integrals
 * are quadrature components, so energy_balance = E - E0 - W_R - W_nc is
 * checked against the solver's own accuracy. */
#include "integrate.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>

#include "../consistency/consistency.h"
#include "../dynamics/dynamics.h"
#include "../io/columns.h"

typedef struct method {
    const char *name;
    const gsl_odeiv2_step_type *const *type;
    int needs_jac;
} method;

static const method methods[] = {
    { "rk2", &gsl_odeiv2_step_rk2, 0 },       { "rk4", &gsl_odeiv2_step_rk4, 0 },
    { "rkf45", &gsl_odeiv2_step_rkf45, 0 },   { "rkck", &gsl_odeiv2_step_rkck, 0 },
    { "rk8pd", &gsl_odeiv2_step_rk8pd, 0 },   { "rk1imp", &gsl_odeiv2_step_rk1imp, 1 },
    { "rk2imp", &gsl_odeiv2_step_rk2imp, 1 }, { "rk4imp", &gsl_odeiv2_step_rk4imp, 1 },
    { "bsimp", &gsl_odeiv2_step_bsimp, 1 },   { "msadams", &gsl_odeiv2_step_msadams, 0 },
    { "msbdf", &gsl_odeiv2_step_msbdf, 1 },
};

static const method *find_method(const char *name)
{
    for (size_t i = 0; i < sizeof methods / sizeof *methods; i++)
        if (strcmp(methods[i].name, name) == 0)
            return &methods[i];
    return NULL;
}

int hs_method_known(const char *name)
{
    return find_method(name) != NULL;
}

const char *hs_method_list(void)
{
    return "rk2 rk4 rkf45 rkck rk8pd rk1imp rk2imp rk4imp bsimp msadams msbdf";
}

typedef struct ctx {
    const hs_model *m;
    hs_work *w;
    double *f0, *f1, *ytmp;   /* [dim] finite-difference Jacobian scratch */
    size_t dim;
    int failed;
} ctx;

/* y' = (v, a, R.v, P_nc, P_t) */
static int rhs(double t, const double y[], double f[], void *params)
{
    ctx *c = params;
    const hs_model *m = c->m;
    size_t n = m->n, k = m->k;
    const double *q = y, *v = y + n;
    if (hs_dyn_accel(m, c->w, t, q, v, f + n, NULL)) {
        c->failed = 1;
        return GSL_EBADFUNC;
    }
    memcpy(f, v, n * sizeof *f);
    const double *dyn = c->w->dyn, *Gq = dyn + m->off_Gq;
    double pr = 0;                              /* R.v = Lambda . (G_q v) */
    for (size_t i = 0; i < k; i++) {
        double s = 0;
        for (int p = m->gq_start[i]; p < m->gq_start[i + 1]; p++)
            s += Gq[p] * v[m->gq_col[p]];
        pr += c->w->Lambda[i] * s;
    }
    f[2 * n] = pr;
    f[2 * n + 1] = dyn[m->off_Pd];
    f[2 * n + 2] = dyn[m->off_Pt];
    return GSL_SUCCESS;
}

/* Forward-difference Jacobian for the implicit steppers (h = sqrt(eps)
 * scaled).  Measured: central differences made bsimp take 14x more steps on
 * the pendulum, so the cheaper forward form stays. */
static int jac(double t, const double y[], double *dfdy, double dfdt[], void *params)
{
    ctx *c = params;
    size_t dim = c->dim;
    if (rhs(t, y, c->f0, params) != GSL_SUCCESS)
        return GSL_EBADFUNC;
    memcpy(c->ytmp, y, dim * sizeof *y);
    for (size_t j = 0; j < dim; j++) {
        double h = 1.4901161193847656e-08 * fmax(fabs(y[j]), 1.0);
        c->ytmp[j] = y[j] + h;
        if (rhs(t, c->ytmp, c->f1, params) != GSL_SUCCESS)
            return GSL_EBADFUNC;
        c->ytmp[j] = y[j];
        for (size_t i = 0; i < dim; i++)
            dfdy[i * dim + j] = (c->f1[i] - c->f0[i]) / h;
    }
    double ht = 1.4901161193847656e-08 * fmax(fabs(t), 1.0);
    if (rhs(t + ht, y, c->f1, params) != GSL_SUCCESS)
        return GSL_EBADFUNC;
    for (size_t i = 0; i < dim; i++)
        dfdt[i] = (c->f1[i] - c->f0[i]) / ht;
    return GSL_SUCCESS;
}

/* The i-th output time t0 + i dt, rounded to 15 significant digits, so a
 * grid of dt = 0.1 reads 1.7 and not 1.7000000000000002 (the difference is
 * an ulp or two; the integration stops exactly at the rounded time). */
double hs_grid_time(double t0, long i, double dt)
{
    char buf[40];
    snprintf(buf, sizeof buf, "%.15g", t0 + (double)i * dt);
    return strtod(buf, NULL);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void progress(double frac, int done)
{
    int width = 40, fill = (int)(frac * width + 0.5);
    fprintf(stderr, "\r[");
    for (int i = 0; i < width; i++)
        fputc(i < fill ? '#' : ' ', stderr);
    fprintf(stderr, "] %3d%%%s", (int)(frac * 100 + 0.5), done ? "\n" : "");
    fflush(stderr);
}

/* The state at ti inside the step [t0, t1] (interpolate mode): q by the
 * quintic Hermite interpolant of q, v, a at both ends (error O(h^6)), v by
 * its derivative, the work integrals by the cubic Hermite interpolant of
 * their values and rates. */
static void hermite(size_t n, double t0, const double *y0, const double *f0, double t1,
                    const double *y1, const double *f1, double ti, double *yi)
{
    double h = t1 - t0, s = (ti - t0) / h, s2 = s * s, s3 = s2 * s, s4 = s3 * s, s5 = s4 * s;
    double H0 = 1 - 10 * s3 + 15 * s4 - 6 * s5, H1 = s - 6 * s3 + 8 * s4 - 3 * s5;
    double H2 = 0.5 * (s2 - 3 * s3 + 3 * s4 - s5), H3 = 10 * s3 - 15 * s4 + 6 * s5;
    double H4 = -4 * s3 + 7 * s4 - 3 * s5, H5 = 0.5 * (s3 - 2 * s4 + s5);
    double D0 = -30 * s2 + 60 * s3 - 30 * s4, D1 = 1 - 18 * s2 + 32 * s3 - 15 * s4;
    double D2 = 0.5 * (2 * s - 9 * s2 + 12 * s3 - 5 * s4), D3 = -D0;
    double D4 = -12 * s2 + 28 * s3 - 15 * s4, D5 = 0.5 * (3 * s2 - 8 * s3 + 5 * s4);
    for (size_t i = 0; i < n; i++) {
        double q0 = y0[i], v0 = y0[n + i], a0 = f0[n + i];
        double q1 = y1[i], v1 = y1[n + i], a1 = f1[n + i];
        yi[i] = q0 * H0 + h * v0 * H1 + h * h * a0 * H2 + q1 * H3 + h * v1 * H4 + h * h * a1 * H5;
        yi[n + i] = (q0 * D0 + h * v0 * D1 + h * h * a0 * D2 + q1 * D3 + h * v1 * D4 +
                     h * h * a1 * D5) / h;
    }
    double c00 = 2 * s3 - 3 * s2 + 1, c10 = s3 - 2 * s2 + s, c01 = -2 * s3 + 3 * s2,
           c11 = s3 - s2;
    for (size_t i = 2 * n; i < 2 * n + 3; i++)
        yi[i] = c00 * y0[i] + h * c10 * f0[i] + c01 * y1[i] + h * c11 * f1[i];
}

/* Compute everything of a row at the state y and write it. */
static int emit(const hs_model *m, hs_work *w, const hs_columns *cols, hs_out *o,
                double t, const double *y, double E0, hs_summary *sum, int first,
                double *E0_out)
{
    size_t n = m->n, k = m->k;
    w->full_rcond = 1;           /* the condition estimate at every row */
    int bad = hs_dyn_accel(m, w, t, y, y + n, NULL, NULL);
    w->full_rcond = 0;
    if (bad || hs_dyn_aux(m, w, t, y, y + n) ||
        hs_dyn_constraints_sparse(m, w, t, y, NULL, NULL))
        return HS_EXIT_NUMERIC;
    hs_row r = { t, y, y + n, w->a, w->Lambda, w->aux, w->pos + k, w->T, y[2 * n],
                 y[2 * n + 1], y[2 * n + 2], E0 };
    if (first) {
        r.E0 = w->T + w->aux[m->off_U];
        *E0_out = r.E0;
    }
    hs_columns_row(m, cols, &r, o);
    sum->rows++;
    for (size_t i = 0; i < k; i++) {
        sum->max_G = fmax(sum->max_G, fabs(w->aux[m->off_G + i]));
        sum->max_Gdot = fmax(sum->max_Gdot, fabs(w->aux[m->off_Gdot + i]));
    }
    hs_col eb = { HS_COL_EBAL, 0, NULL }, pres = { HS_COL_PRES, 0, NULL };
    sum->max_ebal = fmax(sum->max_ebal, fabs(hs_column_value(m, &eb, &r)));
    sum->max_pres = fmax(sum->max_pres, fabs(hs_column_value(m, &pres, &r)));
    sum->t_reached = t;
    return 0;
}

/* After a step-size underflow: if C is nearly singular there, say so and
 * name the constraints whose multipliers blow up, and the configuration. */
static void near_singular(const hs_model *m, hs_work *w, double t, const double *y,
                          hs_error *err)
{
    size_t n = m->n, k = m->k;
    w->full_rcond = 1;
    int bad = k == 0 || hs_dyn_accel(m, w, t, y, y + n, NULL, NULL);
    w->full_rcond = 0;
    if (bad || !(w->rcond < 1e-6))
        return;
    size_t len = strlen(err->msg);
    len += (size_t)snprintf(err->msg + len, sizeof err->msg - len, "; the configuration is "
                            "nearly singular (reciprocal condition of C %.2g), multipliers",
                            w->rcond);
    for (int pass = 0; pass < 3 && len + 1 < sizeof err->msg; pass++) {
        size_t best = k;                   /* the largest |Lambda| not yet named */
        for (size_t i = 0; i < k; i++)
            if (best == k || fabs(w->Lambda[i]) > fabs(w->Lambda[best]))
                best = i;
        if (best == k)
            break;
        len += (size_t)snprintf(err->msg + len, sizeof err->msg - len, "%s %s = %.3g",
                                pass ? "," : "", m->cname[best], w->Lambda[best]);
        w->Lambda[best] = 0;               /* scratch: next pass names the next */
        if (pass + 1 >= (int)k)
            break;
    }
    for (size_t i = 0; i < n && len + 1 < sizeof err->msg; i++)
        len += (size_t)snprintf(err->msg + len, sizeof err->msg - len, "%s%s=%.6g",
                                i ? ", " : "; at ", m->qname[i], y[i]);
}

/* A numerical failure: rank diagnosis for a singular C, named time. */
static int fail(const hs_model *m, hs_work *w, double t, const double *y, hs_error *err)
{
    if (w->err.code) {
        *err = w->err;
        err->code = HS_EXIT_NUMERIC;
        if (w->fail_kind == HS_FAIL_SINGULAR_C && m->k) {
            char msg[600];
            size_t rank = hs_cons_rank(m, w, t, y, msg, sizeof msg, NULL);
            size_t len = strlen(err->msg);
            if (rank < m->k)
                snprintf(err->msg + len, sizeof err->msg - len, "; dependent constraints: %s",
                         msg);
            len = strlen(err->msg);
            for (size_t i = 0; i < m->n && len + 1 < sizeof err->msg; i++)
                len += (size_t)snprintf(err->msg + len, sizeof err->msg - len, "%s%s=%.6g",
                                        i ? ", " : "; configuration ", m->qname[i], y[i]);
        }
        return err->code;
    }
    return hs_error_set(err, HS_EXIT_NUMERIC, "integration failed at t=%.17g", t);
}

/* max(|G|, |G_t + G_q v|) at the state y (infinity on failure). */
static double residual(const hs_model *m, hs_work *w, double t, const double *y)
{
    size_t n = m->n, k = m->k;
    if (hs_dyn_constraints_sparse(m, w, t, y, NULL, NULL))
        return INFINITY;
    double r = 0;
    for (size_t i = 0; i < k; i++) {
        double gd = w->pos[k + m->nnz + i] + hs_dyn_gq_dot(m, w, i, y + n);
        r = fmax(r, fmax(fabs(w->pos[i]), fabs(gd)));
    }
    return r;
}

/* Projection stabilization: positions, then velocities, onto the
 * constraints (at least one Newton step).  The multistep methods keep past
 * states, so they are reset after the jump; single-step methods (the Runge-
 * Kutta family, bsimp) keep only step-size and order control, which stays
 * valid and is not thrown away. */
static int stabilize(const hs_model *m, hs_work *w, hs_proj *proj, gsl_odeiv2_driver *drv,
                     double t, double *y, int multistep, hs_error *err)
{
    hs_error pe;
    hs_error_init(&pe);
    if (hs_proj_apply(proj, w, t, y, y + m->n, NULL, fmin(m->set.tol, 1e-12), 1, &pe)) {
        *err = pe;
        err->code = HS_EXIT_NUMERIC;
        size_t len = strlen(err->msg);
        snprintf(err->msg + len, sizeof err->msg - len, " (projection stabilization)");
        return HS_EXIT_NUMERIC;
    }
    if (multistep) {
        gsl_odeiv2_evolve_reset(drv->e);
        gsl_odeiv2_step_reset(drv->s);
    }
    return 0;
}

int hs_run(const hs_model *m, const hs_run_opts *o, hs_summary *sum, hs_error *err)
{
    size_t n = m->n, dim = 2 * n + 3;
    const hs_settings *s = &m->set;
    double wall0 = now();
    memset(sum, 0, sizeof *sum);
    const method *meth = find_method(s->method);
    if (!meth)
        return hs_error_set(err, HS_EXIT_USAGE, "unknown method '%s'; choose one of: %s",
                            s->method, hs_method_list());
    double t0 = m->t0, t_end = s->t_end;
    if (isnan(t_end))
        return hs_error_set(err, HS_EXIT_USAGE, "no end time: give simulate.t_end in the "
                            "model or --t-end");
    if (!(t_end > t0))
        return hs_error_set(err, HS_EXIT_USAGE, "t_end (%g) must be greater than the "
                            "initial time (%g)", t_end, t0);
    double dt = isnan(s->dt) ? (t_end - t0) / 1000 : s->dt;
    if (!(dt > 0))
        return hs_error_set(err, HS_EXIT_USAGE, "dt must be > 0");
    double span = (t_end - t0) / dt;
    if (span > 1e9)
        return hs_error_set(err, HS_EXIT_USAGE, "too many output rows (%.3g): choose a "
                            "larger dt", span);
    /* rows at t0 + i dt, i = 0..N-1, then t_end (a last partial interval
     * shorter than 1e-9 dt is merged into t_end) */
    long N = (long)ceil(span - 1e-9);

    hs_columns cols;
    if (hs_columns_select(m, o->columns, &cols, err))
        return err->code;
    hs_work *w = hs_work_new(m);
    hs_proj *proj = hs_proj_new(m);
    double *y = calloc(dim, sizeof *y), *yp = calloc(dim, sizeof *y), *yi = calloc(dim, sizeof *y);
    double *fp = calloc(dim, sizeof *y), *fn = calloc(dim, sizeof *y);
    ctx c = { m, w, calloc(dim, sizeof(double)), calloc(dim, sizeof(double)),
              calloc(dim, sizeof(double)), dim, 0 };
    hs_out out;
    int out_ok = 0;
    FILE *file = NULL;
    gsl_odeiv2_driver *drv = NULL;
    int rc = 0, show = 0;
    if (!w || !proj || !y || !yp || !yi || !fp || !fn || !c.f0 || !c.f1 || !c.ytmp) {
        rc = hs_error_set(err, HS_EXIT_NUMERIC, "out of memory");
        goto out;
    }
    memcpy(y, m->q0, n * sizeof *y);
    memcpy(y + n, m->v0, n * sizeof *y);
    if ((rc = hs_cons_start(m, w, y, y + n, o->report, err)))
        goto out;
    if (o->out_path && !(file = fopen(o->out_path, "w"))) {
        rc = hs_error_set(err, HS_EXIT_USAGE, "cannot open '%s' for writing: %s", o->out_path,
                          strerror(errno));
        goto out;
    }
    if (hs_out_init(&out, file ? file : o->out, o->precision)) {
        rc = hs_error_set(err, HS_EXIT_NUMERIC, "out of memory");
        goto out;
    }
    out_ok = 1;

    gsl_odeiv2_system sys = { rhs, meth->needs_jac ? jac : NULL, dim, &c };
    double h0 = fmin(dt, (t_end - t0)) * 1e-3;
    drv = gsl_odeiv2_driver_alloc_standard_new(&sys, *meth->type, h0, s->atol, s->rtol,
                                               1.0, 0.0);
    if (!drv) {
        rc = hs_error_set(err, HS_EXIT_NUMERIC, "cannot set up the stepper '%s'", s->method);
        goto out;
    }
    hs_columns_header(&cols, &out);
    double E0 = 0, t = t0, h = h0;
    show = o->progress && isatty(STDERR_FILENO);
    if ((rc = emit(m, w, &cols, &out, t, y, 0, sum, 1, &E0))) {
        rc = fail(m, w, t, y, err);
        goto out;
    }
    int projecting = s->stabilize == HS_STAB_PROJECTION && m->k > 0;
    int multistep = strncmp(meth->name, "ms", 2) == 0;
    /* bsimp keeps its extrapolation tableau between steps: project it only at
     * output times too (measured: every-step projection costs it 1000x) */
    int sparse_proj = multistep || strcmp(meth->name, "bsimp") == 0;
    int interp = s->interpolate;
    if (interp && rhs(t, y, fp, &c) != GSL_SUCCESS) {
        rc = fail(m, w, t, y, err);
        goto out;
    }
    for (long i = 1; i <= N;) {
        double t_target = i == N ? t_end : hs_grid_time(t0, i, dt);
        double t_stop = interp ? t_end : t_target, tp = t;
        if (o->stop && *o->stop) {
            rc = hs_error_set(err, 130, "interrupted at t=%.17g; the rows so far are "
                              "written", t);
            goto out;
        }
        if (interp)
            memcpy(yp, y, dim * sizeof *y);
        int st = gsl_odeiv2_evolve_apply(drv->e, drv->c, drv->s, &sys, &t, t_stop, &h, y);
        if (st != GSL_SUCCESS || c.failed) {
            if (c.failed)
                rc = fail(m, w, t, y, err);
            else
                rc = hs_error_set(err, HS_EXIT_NUMERIC, "the stepper %s failed at "
                                  "t=%.17g: %s", s->method, t, gsl_strerror(st));
            goto out;
        }
        sum->steps++;
        if (h < 1e-13 * fmax(1.0, fabs(t)) && t < t_stop) {
            rc = hs_error_set(err, HS_EXIT_NUMERIC, "step size underflow at t=%.17g "
                              "(h=%.3g): the solution is not smooth here or the "
                              "tolerances are too tight", t, h);
            near_singular(m, w, t, y, err);
            goto out;
        }
        /* single-step methods: project after every step; multistep ones
         * only at output times (a reset costs them a restart at order 1),
         * or sooner if the residual passes 1e3 times the tolerance */
        if (projecting && (!sparse_proj || (t >= t_target) ||
                           residual(m, w, t, y) > 1e3 * s->tol)) {
            if ((rc = stabilize(m, w, proj, drv, t, y, multistep, err)))
                goto out;
        }
        long i0 = i;
        if (interp) {
            if (rhs(t, y, fn, &c) != GSL_SUCCESS) {
                rc = fail(m, w, t, y, err);
                goto out;
            }
            for (; i <= N; i++) {
                double ti = i == N ? t_end : hs_grid_time(t0, i, dt);
                if (ti > t)
                    break;
                if (ti < t)
                    hermite(n, tp, yp, fp, t, y, fn, ti, yi);
                if ((rc = emit(m, w, &cols, &out, ti, ti < t ? yi : y, E0, sum, 0, NULL))) {
                    rc = fail(m, w, ti, ti < t ? yi : y, err);
                    goto out;
                }
            }
            double *sw = fp;
            fp = fn;
            fn = sw;
        } else if (t >= t_target) {
            if ((rc = emit(m, w, &cols, &out, t, y, E0, sum, 0, NULL))) {
                rc = fail(m, w, t, y, err);
                goto out;
            }
            i++;
        }
        if (out.failed)
            break;
        if (show && i != i0 && (i / 64 != i0 / 64 || i > N))
            progress((double)(i - 1) / (double)N, i > N);
    }
out:
    if (show && rc)
        fputc('\n', stderr);
    if (out_ok) {
        if (hs_out_flush(&out) && !(rc && err->code == HS_EXIT_USAGE)) {
            hs_error we;
            hs_error_init(&we);
            hs_error_set(&we, HS_EXIT_USAGE, "cannot write the CSV: %s", strerror(out.err_no));
            if (!rc)
                *err = we;
            rc = rc ? rc : HS_EXIT_USAGE;
        }
        hs_out_free(&out);
    }
    if (file && fclose(file) != 0 && !rc)
        rc = hs_error_set(err, HS_EXIT_USAGE, "cannot write '%s': %s", o->out_path,
                          strerror(errno));
    if (drv)
        gsl_odeiv2_driver_free(drv);
    if (w)
        sum->nrhs = w->nrhs;
    sum->wall = now() - wall0;
    hs_columns_free(&cols);
    hs_work_free(w);
    hs_proj_free(proj);
    free(y);
    free(yp);
    free(yi);
    free(fp);
    free(fn);
    free(c.f0);
    free(c.f1);
    free(c.ytmp);
    return rc;
}
