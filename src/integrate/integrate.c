/* hs_run (integrate.h): the times checked before anything is allocated,
 * the set-up, the stepping loop and the clean-up.  The stepping itself is
 * in stepper.c, the rows in rows.c (internal.h).
 *
 * The state handed to gsl_odeiv2 is y = (q, v, W_R, W_nc, W_t): the work
 * integrals are integrated by the same stages as (q, v) but do not steer
 * the step size, so energy_balance = E - E0 - W_R - W_nc - W_t measures how
 * well the computed trajectory keeps the energy identity: the stepper's
 * local errors, and the jumps of projection stabilization. */
#include "internal.h"
#include "../linalg/linalg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <gsl/gsl_errno.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Set-up, times: the end time, the output interval and the number of rows,
 * checked in floating point before any conversion or allocation. */
static int plan_times(hs_int_run *R)
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
    if (!isfinite(R->t0) || !isfinite(R->t_end))
        return hs_error_set(R->err, HS_EXIT_USAGE, "the initial time (%g) and t_end (%g) "
                            "must be finite", R->t0, R->t_end);
    if (!(R->t_end > R->t0))
        return hs_error_set(R->err, HS_EXIT_USAGE, "t_end (%g) must be greater than the "
                            "initial time (%g)", R->t_end, R->t0);
    double span = R->t_end - R->t0;
    if (!isfinite(span))
        return hs_error_set(R->err, HS_EXIT_USAGE, "the time span from %g to %g is too "
                            "large to represent", R->t0, R->t_end);
    R->dt = isnan(s->dt) ? span / 1000 : s->dt;
    if (!(R->dt > 0) || !isfinite(R->dt))
        return hs_error_set(R->err, HS_EXIT_USAGE, "dt must be > 0");
    double rows = span / R->dt;
    if (!(rows <= 1e9))
        return hs_error_set(R->err, HS_EXIT_USAGE, "too many output rows (%.3g): choose a "
                            "larger dt", rows);
    /* output times are rounded to 15 significant digits: a smaller dt
     * would give rows with equal or unevenly spaced times */
    double tmax = fmax(fabs(R->t0), fabs(R->t_end));
    double res = pow(10.0, floor(log10(tmax)) - 14);
    if (R->dt < res)
        return hs_error_set(R->err, HS_EXIT_USAGE, "dt (%g) is below the resolution of the "
                            "output times near t = %g (%g: times are rounded to 15 significant "
                            "digits); choose a larger dt or an initial time nearer 0",
                            R->dt, tmax, res);
    /* a last partial interval shorter than 1e-9 dt is merged into t_end */
    R->N = (long)ceil(rows - 1e-9);
    return 0;
}

/* Should the progress line show (0 no, 1 after 2 s, 2 from the start)? */
static int progress_mode(const hs_run_opts *o, FILE *csv)
{
    if (o->progress < 0 || !isatty(STDERR_FILENO))
        return 0;
    if (o->progress > 0)
        return 2;
    return o->report && !(csv && isatty(fileno(csv))) ? 1 : 0;
}

static double *vec(size_t n)
{
    return calloc(n ? n : 1, sizeof(double));
}

/* Set-up, state: columns, scratch, the consistent start, the output file
 * (opened only now, so a model that fails before its first row leaves an
 * existing file untouched) and the stepper. */
static int setup(hs_int_run *R)
{
    const hs_model *m = R->m;
    const hs_run_opts *o = R->o;
    size_t n = m->n, dim = R->dim;
    if (hs_columns_select(m, o->columns, &R->cols, R->err))
        return R->err->code;
    R->cols_ok = 1;
    R->lean = o->no_residuals;
    for (size_t i = 0; i < R->cols.n; i++) {
        hs_col_kind k = R->cols.c[i].kind;
        R->need_w |= k == HS_COL_WR || k == HS_COL_WNC || k == HS_COL_WT || k == HS_COL_EBAL;
        R->lean &= k == HS_COL_T || k == HS_COL_Q || k == HS_COL_V;
    }
    R->w = hs_work_new(m);
    /* interpolate mode: the energy balance's error steers the step too
     * (stepper.c); not for rk1imp, first order */
    int balance = m->set.interpolate && strcmp(m->set.method, "rk1imp") != 0;
    if (balance)
        R->wb = hs_work_new(m);
    hs_work *ws[2] = { R->w, R->wb };
    for (int i = 0; i < 2; i++)
        if (ws[i] && o->native) {
            ws[i]->kdyn = hs_native_fn(o->native, 0);
            ws[i]->kaux = hs_native_fn(o->native, 1);
            ws[i]->kpos = hs_native_fn(o->native, 2);
            ws[i]->kout = hs_native_fn(o->native, 3);
            ws[i]->kev = hs_native_fn(o->native, 4);
        }
    R->proj = hs_proj_new(m);
    double **v[] = { &R->y, &R->yp, &R->yi, &R->fp, &R->fn, &R->fi, &R->yerr, &R->yu, &R->fu,
                     &R->ytb, &R->c.f0, &R->c.f1, &R->c.ytmp, &R->c.last_y, &R->c.last_f };
    int ok = R->w && R->proj && (!balance || R->wb);
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        ok &= (*v[i] = vec(dim)) != NULL;
    size_t nd = (HS_INT_DEPTH + 1) * dim;
    ok &= (R->ym = vec(nd)) && (R->fm = vec(nd)) && (R->ye = vec(nd)) && (R->fe = vec(nd)) &&
          (R->acc = vec(n));
    if (!ok)
        return hs_error_nomem(R->err);
    R->c.m = m;
    R->c.w = R->w;
    R->c.dim = dim;
    R->c.t0 = R->t0;
    memcpy(R->y, m->q0, n * sizeof *R->y);
    memcpy(R->y + n, m->v0, n * sizeof *R->y);
    int rc = hs_cons_start(m, R->w, R->y, R->y + n, o->report, R->err);
    if (rc)
        return rc;
    /* nothing written (an -o file not even created) before the first row */
    int unknown;
    R->out = hs_sink_open(o->format, o->out, o->out_path, o->precision, 0, &unknown);
    if (unknown)
        return hs_error_set(R->err, HS_EXIT_USAGE, "unknown output format '%s'", o->format);
    R->vals = vec(R->cols.n + 1);
    if (!R->out || !R->vals)
        return hs_error_nomem(R->err);
    unsigned flags = hs_methods[R->method].flags;
    R->multistep = (flags & HS_METHOD_MULTISTEP) != 0;
    /* dop853's own extension serves the rows unless they show the work
     * integrals (rows.c) */
    R->dense = (flags & HS_METHOD_DENSE) && !R->need_w;
    int helper = hs_int_helper_method(R->method);
    int implicit = (flags | hs_methods[helper].flags) & HS_METHOD_IMPLICIT;
    R->sys = (gsl_odeiv2_system){ hs_int_rhs, implicit ? hs_int_jacobian : NULL, dim, &R->c };
    R->h = fmin(R->dt, R->t_end - R->t0) * 1e-3;     /* a guess the control corrects */
    R->drv = hs_int_driver_new(R, R->method);
    int helped = m->set.interpolate && !R->dense;
    if (helped)
        R->helper = hs_int_driver_new(R, helper);
    if (!R->drv || (helped && (!R->helper || hs_int_interp_init(R))))
        return hs_error_nomem(R->err);     /* only an allocation fails there */
    if (R->wb)
        hs_int_balance_control(R);
    R->projecting = m->set.stabilize == HS_STAB_PROJECTION && m->k > 0;
    R->show = progress_mode(o, o->out);
    return hs_int_events_setup(R);
}

/* The stepping loop: the first row, then steps until every row is out. */
static int step_loop(hs_int_run *R)
{
    const hs_model *m = R->m;
    const hs_run_opts *o = R->o;
    int interp = m->set.interpolate, rc;
    int reuse = R->drv->s->type->can_use_dydt_in;
    hs_sink_header(R->out, &R->cols);
    R->t = R->t0;
    R->tau = 0;
    if ((rc = hs_int_events_start(R)) || (rc = hs_int_emit(R, R->t, R->y, 1)))
        return rc;
    memcpy(R->fp, R->fi, R->dim * sizeof *R->fp);
    for (long i = 1; i <= R->N;) {
        double t_target = i == R->N ? R->t_end : hs_grid_time(R->t0, i, R->dt);
        double t_stop = interp ? R->t_end : t_target, taup = R->tau;
        int ev = 0;          /* events: 1 the step was cut at a release, 2 a stop */
        if (o->stop && *o->stop)
            return hs_error_set(R->err, 130, "interrupted at t=%.17g; the rows so far are "
                                "written", R->t);
        if (interp)
            memcpy(R->yp, R->y, R->dim * sizeof *R->y);
        hs_int_events_mark(R);
        if ((rc = hs_int_advance(R, t_stop)) || (rc = hs_int_events_step(R, taup, &i, &ev)))
            return rc;
        if (ev == 2)
            break;
        if (interp) {
            if (!ev && (rc = hs_int_emit_inside(R, taup, &i)))
                return rc;
        } else if (R->t >= t_target) {
            if ((rc = hs_int_emit(R, R->t, R->y, 0)))
                return rc;
            if (reuse) {         /* the next step starts from the row's rates */
                if (R->lean && hs_int_eval(&R->c, R->t, R->y, R->fi) != GSL_SUCCESS)
                    return hs_int_fail(R, R->t, R->y);  /* (a lean row computes none) */
                memcpy(R->drv->e->dydt_out, R->fi, R->dim * sizeof *R->fi);
            }
            i++;
        }
        if (R->out->failed)
            break;
        hs_int_progress(R, i - 1, 0);
    }
    return 0;
}

int hs_int_close_output(hs_int_run *R, hs_sink *s, const char *what, int publish, int rc)
{
    int e = hs_sink_close(s, publish);
    if (e && !(rc && R->err->code == HS_EXIT_USAGE)) {
        if (!rc) {
            hs_error_init(R->err);
            hs_error_set(R->err, HS_EXIT_USAGE, "cannot write %s: %s", what, strerror(e));
        }
        rc = rc ? rc : HS_EXIT_USAGE;
    }
    return rc;
}

/* Output: flush and close (a write error is exit 1 unless the run already
 * failed), then free everything. */
static int finish(hs_int_run *R, int rc)
{
    hs_int_progress(R, 0, 1);
    if (R->out)
        rc = hs_int_close_output(R, R->out, "the CSV", 0, rc);
    rc = hs_int_events_finish(R, rc);
    hs_int_driver_free(R->drv);
    hs_int_driver_free(R->helper);
    if (R->w)
        R->sum->nrhs = R->w->nrhs;   /* (the balance control evaluates no accelerations) */
    if (R->cols_ok)
        hs_columns_free(&R->cols);
    hs_work_free(R->w);
    hs_work_free(R->wb);
    hs_proj_free(R->proj);
    double *v[] = { R->vals, R->y, R->yp, R->ym, R->yi, R->fp, R->fm, R->fn, R->fi, R->yerr, R->acc, R->ytb,
                    R->yu, R->fu, R->ye, R->fe,
                    R->c.f0, R->c.f1, R->c.ytmp, R->c.last_y, R->c.last_f };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        free(v[i]);
    return rc;
}

static int run(const hs_model *m, const hs_run_opts *o, hs_summary *sum, hs_error *err)
{
    memset(sum, 0, sizeof *sum);
    hs_int_run R;
    memset(&R, 0, sizeof R);
    R.wall0 = now();
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
    sum->wall = now() - R.wall0;
    return rc;
}

int hs_run(const hs_model *m, const hs_run_opts *o, hs_summary *sum, hs_error *err)
{
    hs_la_handler h = hs_la_quiet();
    int r = run(m, o, sum, err);
    hs_la_restore(h);
    return r;
}
