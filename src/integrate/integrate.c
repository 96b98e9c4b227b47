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
    if (hs_stepper_check(R->m, R->err))
        return R->err->code;
    R->step.type = hs_stepper_find(s->method);
    if (hs_stepper_options(R->m, R->step.type, R->step.opt, R->err))
        return R->err->code;
    R->t0 = R->m->t0;
    R->t_end = s->t_end;
    return hs_run_times(R->m, s->t_end, s->dt, &R->dt, &R->N, R->err);
}

/* The output grid (integrate.h): every check a run's times get. */
int hs_run_times(const hs_model *m, double t_end, double dt_in, double *dt, long *N,
                 hs_error *err)
{
    double t0 = m->t0;
    if (isnan(t_end))
        return hs_error_set(err, HS_EXIT_USAGE, "no end time: give simulate.t_end in the "
                            "model or %s", hs_optname(m->names, HS_OPT_T_END));
    if (!isfinite(t0) || !isfinite(t_end))
        return hs_error_set(err, HS_EXIT_USAGE, "the initial time (%g) and t_end (%g) "
                            "must be finite", t0, t_end);
    if (!(t_end > t0))
        return hs_error_set(err, HS_EXIT_USAGE, "t_end (%g) must be greater than the "
                            "initial time (%g)", t_end, t0);
    double span = t_end - t0;
    if (!isfinite(span))
        return hs_error_set(err, HS_EXIT_USAGE, "the time span from %g to %g is too "
                            "large to represent", t0, t_end);
    *dt = isnan(dt_in) ? span / 1000 : dt_in;
    if (!(*dt > 0) || !isfinite(*dt))
        return hs_error_set(err, HS_EXIT_USAGE, "dt must be > 0");
    double rows = span / *dt;
    if (!(rows <= 1e9))
        return hs_error_set(err, HS_EXIT_USAGE, "too many output rows (%.3g): choose a "
                            "larger dt", rows);
    /* output times are rounded to 15 significant digits: a smaller dt
     * would give rows with equal or unevenly spaced times */
    double tmax = fmax(fabs(t0), fabs(t_end));
    double res = pow(10.0, floor(log10(tmax)) - 14);
    if (*dt < res)
        return hs_error_set(err, HS_EXIT_USAGE, "dt (%g) is below the resolution of the "
                            "output times near t = %g (%g: times are rounded to 15 significant "
                            "digits); choose a larger dt or an initial time nearer 0",
                            *dt, tmax, res);
    /* a last partial interval shorter than 1e-9 dt is merged into t_end */
    *N = (long)ceil(rows - 1e-9);
    return 0;
}

/* Should the progress line show (0 no, 1 after 2 s, 2 from the start)? */
static int progress_mode(const hs_run_opts *o, const hs_sink *out)
{
    if (o->progress < 0 || !isatty(STDERR_FILENO))
        return 0;
    if (o->progress > 0)
        return 2;
    return o->report && !out->tty ? 1 : 0;
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
    if (hs_columns_select(m, o->columns, &R->rows.cols, R->err))
        return R->err->code;
    R->rows.cols_ok = 1;
    R->rows.lean = o->no_residuals;
    for (size_t i = 0; i < R->rows.cols.n; i++) {
        hs_col_kind k = R->rows.cols.c[i].kind;
        R->rows.need_w |= k == HS_QTY_WR || k == HS_QTY_WNC || k == HS_QTY_WT || k == HS_QTY_EBAL;
        R->rows.lean &= k == HS_QTY_T || k == HS_QTY_Q || k == HS_QTY_V;
    }
    R->w = hs_work_new(m);
    /* interpolate mode: the energy balance's error steers the step too
     * (stepper.c); not for rk1imp, first order */
    const hs_stepper *type = R->step.type;
    int fixed = (type->flags & HS_STEP_FIXED) != 0;
    int balance = m->set.interpolate && type->order != 1 && !fixed;
    if (balance)
        R->bal.w = hs_work_new(m);
    hs_work *ws[2] = { R->w, R->bal.w };
    for (int i = 0; i < 2; i++)
        if (ws[i] && o->native)
            hs_work_set_native(m, ws[i], o->native);
    R->proj = hs_proj_new(m);
    double **v[] = { &R->y, &R->rows.y_start, &R->rows.y_at, &R->rows.f_start,
                     &R->rows.f_end, &R->rows.f_at, &R->rows.helper_err,
                     &R->rows.y_unprojected, &R->rows.f_unprojected, &R->bal.y_less_err,
                     &R->c.fd_f0, &R->c.fd_f1, &R->c.fd_y, &R->c.last_y, &R->c.last_f };
    int ok = R->w && R->proj && (!balance || R->bal.w);
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        ok &= (*v[i] = vec(dim)) != NULL;
    size_t nd = (HS_INT_DEPTH + 1) * dim;
    ok &= (R->rows.y_mid = vec(nd)) && (R->rows.f_mid = vec(nd)) &&
          (R->rows.y_right = vec(nd)) && (R->rows.f_right = vec(nd)) &&
          (R->rows.acc_poly = vec(n));
    if (!ok)
        return hs_error_nomem(R->err);
    R->c.m = m;
    R->c.w = R->w;
    R->c.dim = dim;
    R->c.t0 = R->t0;
    memcpy(R->y, m->q0, n * sizeof *R->y);
    memcpy(R->y + n, m->v0, n * sizeof *R->y);
    int rc = hs_int_contacts_init(R);   /* (the open contacts let go first) */
    if (!rc)
        rc = hs_int_friction_init(R);
    if (!rc)
        rc = hs_cons_start(m, R->w, R->y, R->y + n, o->report, R->err);
    if (!rc)
        rc = hs_int_contacts_start(R);
    if (!rc)
        rc = hs_int_friction_start(R);
    if (rc)
        return rc;
    if (R->bal.w)
        hs_dyn_set_rank0(R->bal.w, hs_work_get_stats(R->w).rank0);
    R->rows.out = o->out;
    R->rows.vals = vec(R->rows.cols.n + 1);
    if (!R->rows.vals)
        return hs_error_nomem(R->err);
    R->step.multistep = (type->flags & HS_STEP_MULTISTEP) != 0;
    /* dop853's own extension serves the rows unless they show the work
     * integrals (rows.c) */
    R->rows.dense = (type->flags & HS_STEP_DENSE) && (!R->rows.need_w || fixed);
    R->rows.dense_w = R->rows.dense && fixed;     /* a step from the step's start */
    const hs_stepper *helper = hs_int_helper(type);
    int implicit = (type->flags | helper->flags) & HS_STEP_IMPLICIT;
    R->step.sys = (gsl_odeiv2_system){ hs_int_rhs, implicit ? hs_int_jacobian : NULL, dim,
                                       &R->c };
    R->step.h = fmin(R->dt, R->t_end - R->t0) * 1e-3;     /* a guess the control corrects */
    if (type->gsl)
        R->step.drv = hs_int_driver_new(R, type);
    int helped = m->set.interpolate && !R->rows.dense;
    if (helped)
        R->rows.helper = hs_int_driver_new(R, helper);
    if ((type->gsl && !R->step.drv) ||
        (helped && (!R->rows.helper || hs_int_interp_init(R))))
        return hs_error_nomem(R->err);     /* only an allocation fails there */
    hs_int_step_ctx(R);
    if (type->start && (rc = type->start(&R->step.ctx)))
        return rc;
    if (R->bal.w)
        hs_int_balance_control(R);
    /* a fixed-step method solves the constraints in its steps */
    R->step.projecting = m->set.stabilize == HS_STAB_PROJECTION && m->k > 0 && !fixed;
    R->rows.progress = progress_mode(o, o->out);
    return hs_int_events_setup(R);
}

/* The first time of an input table (model.h: brk) after t, when it comes
 * before t_stop: steps end there, as at a row, so none crosses a kink. */
static double next_break(const hs_model *m, double t, double t_stop)
{
    size_t lo = 0, hi = m->nbrk;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->brk[mid] <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->nbrk && m->brk[lo] < t_stop ? m->brk[lo] : t_stop;
}

/* The stepping loop: the first row, then steps until every row is out. */
static int step_loop(hs_int_run *R)
{
    const hs_model *m = R->m;
    const hs_run_opts *o = R->o;
    int interp = m->set.interpolate, rc;
    int reuse = R->step.drv && R->step.drv->s->type->can_use_dydt_in;
    hs_sink_header(R->rows.out, &R->rows.cols);
    R->t = R->t0;
    R->tau = 0;
    if ((rc = hs_int_events_start(R)) || (rc = hs_int_emit(R, R->t, R->y, 1)))
        return rc;
    memcpy(R->rows.f_start, R->rows.f_at, R->dim * sizeof *R->rows.f_start);
    for (long i = 1; i <= R->N;) {
        double t_target = i == R->N ? R->t_end : hs_grid_time(R->t0, i, R->dt);
        double t_stop = interp ? R->t_end : t_target, taup = R->tau;
        if (m->nbrk)
            t_stop = next_break(m, R->t, t_stop);
        hs_int_step_fate fate = HS_INT_STEP_STANDS;
        if (o->stop && *o->stop)
            return hs_error_set(R->err, HS_EXIT_INTERRUPT, "interrupted at t=%.17g; the rows so far are "
                                "written", R->t);
        if (interp)
            memcpy(R->rows.y_start, R->y, R->dim * sizeof *R->y);
        hs_int_events_mark(R);
        if ((rc = hs_int_advance(R, t_stop)) || (rc = hs_int_events_step(R, taup, &i, &fate)))
            return rc;
        if (fate == HS_INT_STEP_STOPPED)
            break;
        if (interp) {
            if (fate == HS_INT_STEP_STANDS && (rc = hs_int_emit_inside(R, taup, &i)))
                return rc;
        } else if (R->t >= t_target) {
            if ((rc = hs_int_emit(R, R->t, R->y, 0)))
                return rc;
            if (reuse) {         /* the next step starts from the row's rates */
                if (R->rows.lean && hs_int_eval(&R->c, R->t, R->y, R->rows.f_at) != GSL_SUCCESS)
                    return hs_int_fail(R, R->t, R->y);  /* (a lean row computes none) */
                memcpy(R->step.drv->e->dydt_out, R->rows.f_at, R->dim * sizeof *R->rows.f_at);
            }
            i++;
        }
        if (R->rows.out->failed)
            break;
        hs_int_progress(R, i - 1, 0);
    }
    return 0;
}

/* Output: flush and close (a write error is exit 1 unless the run already
 * failed), then free everything. */
static int finish(hs_int_run *R, int rc)
{
    hs_int_progress(R, 0, 1);
    rc = hs_int_events_finish(R, rc);
    hs_int_contacts_free(R);
    if (R->step.type && R->step.type->finish)
        R->step.type->finish(&R->step.ctx);
    hs_int_driver_free(R->step.drv);
    hs_int_driver_free(R->rows.helper);
    if (R->w) {
        hs_summary *s = R->sum;
        /* (the balance control evaluates no accelerations) */
        hs_work_stats ws = hs_work_get_stats(R->w);
        s->nrhs = ws.nrhs;
        s->k = R->m->k;
        s->rank0 = ws.rank0;
        s->nrobust = ws.nrobust;
        s->nsingular = ws.nsingular;
        s->worst_rcond = ws.worst_rcond;
        s->augmented = ws.mass_zero || ws.augmented;
        if (R->bal.w) {
            s->nsingular += hs_work_get_stats(R->bal.w).nsingular;
            s->worst_rcond = fmin(s->worst_rcond, hs_work_get_stats(R->bal.w).worst_rcond);
        }
    }
    if (R->rows.cols_ok)
        hs_columns_free(&R->rows.cols);
    hs_work_free(R->w);
    hs_work_free(R->bal.w);
    hs_proj_free(R->proj);
    double *v[] = { R->rows.vals, R->y, R->rows.y_start, R->rows.y_mid, R->rows.y_at, R->rows.f_start,
                    R->rows.f_mid, R->rows.f_end, R->rows.f_at, R->rows.helper_err,
                    R->rows.acc_poly, R->bal.y_less_err, R->rows.y_unprojected,
                    R->rows.f_unprojected, R->rows.y_right, R->rows.f_right,
                    R->c.fd_f0, R->c.fd_f1, R->c.fd_y, R->c.last_y, R->c.last_f };
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
    int r = run(m, o, sum, err);
    return r;
}
