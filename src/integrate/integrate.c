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

/* GSL's steppers in the order of hs_methods (model.h). */
static const gsl_odeiv2_step_type *const *const step_types[HS_NMETHODS] = {
    &gsl_odeiv2_step_rk2, &gsl_odeiv2_step_rk4, &gsl_odeiv2_step_rkf45,
    &gsl_odeiv2_step_rkck, &gsl_odeiv2_step_rk8pd, &gsl_odeiv2_step_rk1imp,
    &gsl_odeiv2_step_rk2imp, &gsl_odeiv2_step_rk4imp, &gsl_odeiv2_step_bsimp,
    &gsl_odeiv2_step_msadams, &gsl_odeiv2_step_msbdf,
};

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
    if (hs_columns_row(m, cols, &r, o, &w->err)) {
        w->fail_kind = HS_FAIL_NONFINITE;
        return HS_EXIT_NUMERIC;
    }
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

/* One run's state: what hs_run's steps share. */
typedef struct run {
    const hs_model *m;
    const hs_run_opts *o;
    hs_summary *sum;
    hs_error *err;
    int method;                 /* index into hs_methods */
    double t0, t_end, dt;
    long N;                     /* rows after the first: t0 + i dt, i < N, then t_end */
    size_t dim;                 /* 2n + 3: q, v, W_R, W_nc, W_t */
    hs_columns cols;
    int cols_ok;
    hs_work *w;
    hs_proj *proj;
    double *y, *yp, *yi, *fp, *fn;   /* [dim] state, previous state, interpolated,
                                      * rates at the previous and the new state */
    ctx c;
    hs_out out;
    int out_ok;
    FILE *file;
    gsl_odeiv2_system sys;
    gsl_odeiv2_driver *drv;
    double E0, t, h;
    int show, projecting, multistep, sparse_proj;
} run;

/* Set-up, times: the end time, the output interval and the number of rows,
 * checked before anything is allocated. */
static int plan_times(run *R)
{
    const hs_settings *s = &R->m->set;
    R->method = hs_method_index(s->method);
    if (R->method < 0)
        return hs_error_set(R->err, HS_EXIT_USAGE, "unknown method '%s'; choose one of: %s",
                            s->method, hs_method_list());
    R->t0 = R->m->t0;
    R->t_end = s->t_end;
    if (isnan(R->t_end))
        return hs_error_set(R->err, HS_EXIT_USAGE, "no end time: give simulate.t_end in the "
                            "model or --t-end");
    if (!(R->t_end > R->t0))
        return hs_error_set(R->err, HS_EXIT_USAGE, "t_end (%g) must be greater than the "
                            "initial time (%g)", R->t_end, R->t0);
    R->dt = isnan(s->dt) ? (R->t_end - R->t0) / 1000 : s->dt;
    if (!(R->dt > 0))
        return hs_error_set(R->err, HS_EXIT_USAGE, "dt must be > 0");
    double span = (R->t_end - R->t0) / R->dt;
    if (span > 1e9)
        return hs_error_set(R->err, HS_EXIT_USAGE, "too many output rows (%.3g): choose a "
                            "larger dt", span);
    /* a last partial interval shorter than 1e-9 dt is merged into t_end */
    R->N = (long)ceil(span - 1e-9);
    return 0;
}

/* Set-up, state: columns, scratch, the consistent start, the output file
 * (opened only now, so a model that fails before its first row leaves an
 * existing file untouched) and the stepper. */
static int setup(run *R)
{
    const hs_model *m = R->m;
    const hs_run_opts *o = R->o;
    const hs_settings *s = &m->set;
    size_t n = m->n, dim = R->dim;
    if (hs_columns_select(m, o->columns, &R->cols, R->err))
        return R->err->code;
    R->cols_ok = 1;
    R->w = hs_work_new(m);
    R->proj = hs_proj_new(m);
    R->y = calloc(dim, sizeof *R->y);
    R->yp = calloc(dim, sizeof *R->yp);
    R->yi = calloc(dim, sizeof *R->yi);
    R->fp = calloc(dim, sizeof *R->fp);
    R->fn = calloc(dim, sizeof *R->fn);
    R->c = (ctx){ m, R->w, calloc(dim, sizeof(double)), calloc(dim, sizeof(double)),
                  calloc(dim, sizeof(double)), dim, 0 };
    if (!R->w || !R->proj || !R->y || !R->yp || !R->yi || !R->fp || !R->fn || !R->c.f0 ||
        !R->c.f1 || !R->c.ytmp)
        return hs_error_set(R->err, HS_EXIT_NUMERIC, "out of memory");
    memcpy(R->y, m->q0, n * sizeof *R->y);
    memcpy(R->y + n, m->v0, n * sizeof *R->y);
    int rc = hs_cons_start(m, R->w, R->y, R->y + n, o->report, R->err);
    if (rc)
        return rc;
    if (hs_out_init(&R->out, o->out, o->precision) ||
        hs_out_start_at_first_row(&R->out, o->out_path))
        return hs_error_set(R->err, HS_EXIT_NUMERIC, "out of memory");
    R->out_ok = 1;
    unsigned flags = hs_methods[R->method].flags;
    R->sys = (gsl_odeiv2_system){ rhs, flags & HS_METHOD_IMPLICIT ? jac : NULL, dim, &R->c };
    R->h = fmin(R->dt, (R->t_end - R->t0)) * 1e-3;
    R->drv = gsl_odeiv2_driver_alloc_standard_new(&R->sys, *step_types[R->method], R->h,
                                                  s->atol, s->rtol, 1.0, 0.0);
    if (!R->drv)
        return hs_error_set(R->err, HS_EXIT_NUMERIC, "cannot set up the stepper '%s'",
                            s->method);
    R->projecting = s->stabilize == HS_STAB_PROJECTION && m->k > 0;
    R->multistep = (flags & HS_METHOD_MULTISTEP) != 0;
    /* bsimp keeps its extrapolation tableau between steps: project it only at
     * output times too (measured: every-step projection costs it 1000x) */
    R->sparse_proj = R->multistep || strcmp(s->method, "bsimp") == 0;
    R->show = o->progress && isatty(STDERR_FILENO);
    return 0;
}

/* Output, interpolate mode: every grid time in the step (tp, t] that just
 * ended, from the Hermite interpolant; i is the next row's index. */
static int emit_interpolated(run *R, double tp, long *i)
{
    const hs_model *m = R->m;
    size_t n = m->n;
    if (rhs(R->t, R->y, R->fn, &R->c) != GSL_SUCCESS)
        return fail(m, R->w, R->t, R->y, R->err);
    for (; *i <= R->N; (*i)++) {
        double ti = *i == R->N ? R->t_end : hs_grid_time(R->t0, *i, R->dt);
        if (ti > R->t)
            break;
        const double *yr = R->y;
        if (ti < R->t) {
            hermite(n, tp, R->yp, R->fp, R->t, R->y, R->fn, ti, R->yi);
            yr = R->yi;
        }
        if (emit(m, R->w, &R->cols, &R->out, ti, yr, R->E0, R->sum, 0, NULL))
            return fail(m, R->w, ti, yr, R->err);
    }
    double *sw = R->fp;
    R->fp = R->fn;
    R->fn = sw;
    return 0;
}

/* One accepted step towards t_stop, then stabilization.  Returns 0 or an
 * exit code with R->err set. */
static int advance(run *R, double t_target, double t_stop)
{
    const hs_model *m = R->m;
    const hs_settings *s = &m->set;
    int st = gsl_odeiv2_evolve_apply(R->drv->e, R->drv->c, R->drv->s, &R->sys, &R->t,
                                     t_stop, &R->h, R->y);
    if (st != GSL_SUCCESS || R->c.failed) {
        if (R->c.failed)
            return fail(m, R->w, R->t, R->y, R->err);
        return hs_error_set(R->err, HS_EXIT_NUMERIC, "the stepper %s failed at t=%.17g: %s",
                            s->method, R->t, gsl_strerror(st));
    }
    R->sum->steps++;
    if (R->h < 1e-13 * fmax(1.0, fabs(R->t)) && R->t < t_stop) {
        hs_error_set(R->err, HS_EXIT_NUMERIC, "step size underflow at t=%.17g (h=%.3g): the "
                     "solution is not smooth here or the tolerances are too tight",
                     R->t, R->h);
        near_singular(m, R->w, R->t, R->y, R->err);
        return HS_EXIT_NUMERIC;
    }
    /* single-step methods: project after every step; multistep ones
     * only at output times (a reset costs them a restart at order 1),
     * or sooner if the residual passes 1e3 times the tolerance */
    if (R->projecting && (!R->sparse_proj || (R->t >= t_target) ||
                          residual(m, R->w, R->t, R->y) > 1e3 * s->tol))
        return stabilize(m, R->w, R->proj, R->drv, R->t, R->y, R->multistep, R->err);
    return 0;
}

/* The stepping loop: the first row, then steps until every row is out. */
static int step_loop(run *R)
{
    const hs_model *m = R->m;
    const hs_run_opts *o = R->o;
    int interp = m->set.interpolate, rc;
    hs_columns_header(&R->cols, &R->out);
    R->t = R->t0;
    if (emit(m, R->w, &R->cols, &R->out, R->t, R->y, 0, R->sum, 1, &R->E0))
        return fail(m, R->w, R->t, R->y, R->err);
    if (interp && rhs(R->t, R->y, R->fp, &R->c) != GSL_SUCCESS)
        return fail(m, R->w, R->t, R->y, R->err);
    for (long i = 1; i <= R->N;) {
        double t_target = i == R->N ? R->t_end : hs_grid_time(R->t0, i, R->dt);
        double t_stop = interp ? R->t_end : t_target, tp = R->t;
        if (o->stop && *o->stop)
            return hs_error_set(R->err, 130, "interrupted at t=%.17g; the rows so far are "
                                "written", R->t);
        if (interp)
            memcpy(R->yp, R->y, R->dim * sizeof *R->y);
        if ((rc = advance(R, t_target, t_stop)))
            return rc;
        long i0 = i;
        if (interp) {
            if ((rc = emit_interpolated(R, tp, &i)))
                return rc;
        } else if (R->t >= t_target) {
            if (emit(m, R->w, &R->cols, &R->out, R->t, R->y, R->E0, R->sum, 0, NULL))
                return fail(m, R->w, R->t, R->y, R->err);
            i++;
        }
        if (R->out.failed)
            break;
        if (R->show && i != i0 && (i / 64 != i0 / 64 || i > R->N))
            progress((double)(i - 1) / (double)R->N, i > R->N);
    }
    return 0;
}

/* Output: flush and close (a write error is exit 1 unless the run already
 * failed), then free everything. */
static int finish(run *R, int rc)
{
    hs_error *err = R->err;
    if (R->show && rc)
        fputc('\n', stderr);
    if (R->out_ok) {
        if (hs_out_flush(&R->out) && !(rc && err->code == HS_EXIT_USAGE)) {
            hs_error we;
            hs_error_init(&we);
            hs_error_set(&we, HS_EXIT_USAGE, "cannot write the CSV: %s",
                         strerror(R->out.err_no));
            if (!rc)
                *err = we;
            rc = rc ? rc : HS_EXIT_USAGE;
        }
        hs_out_free(&R->out);
    }
    if (R->file && fclose(R->file) != 0 && !rc)
        rc = hs_error_set(err, HS_EXIT_USAGE, "cannot write '%s': %s", R->o->out_path,
                          strerror(errno));
    if (R->drv)
        gsl_odeiv2_driver_free(R->drv);
    if (R->w)
        R->sum->nrhs = R->w->nrhs;
    if (R->cols_ok)
        hs_columns_free(&R->cols);
    hs_work_free(R->w);
    hs_proj_free(R->proj);
    free(R->y);
    free(R->yp);
    free(R->yi);
    free(R->fp);
    free(R->fn);
    free(R->c.f0);
    free(R->c.f1);
    free(R->c.ytmp);
    return rc;
}

int hs_run(const hs_model *m, const hs_run_opts *o, hs_summary *sum, hs_error *err)
{
    double wall0 = now();
    memset(sum, 0, sizeof *sum);
    run R;
    memset(&R, 0, sizeof R);
    R.m = m;
    R.o = o;
    R.sum = sum;
    R.err = err;
    R.dim = 2 * m->n + 3;
    int rc = plan_times(&R);
    if (rc)
        return rc;
    rc = setup(&R);
    if (!rc)
        rc = step_loop(&R);
    rc = finish(&R, rc);
    sum->wall = now() - wall0;
    return rc;
}
