/* gsl_odeiv2 for holosim (internal.h): the right-hand side with the work
 * integrals, the Jacobian, holosim's error control, bsimp on a shifted
 * state, and one step with the stabilization each kind of stepper allows.
 *
 * Why not GSL's standard control: the state carries the work integrals
 * W_R, W_nc, W_t beside (q, v).  Under the standard control W_R ~ 0 held
 * to the absolute tolerance chose the step (its rate Lambda . G_q v is 0 on
 * the constraints but not at the stages).  Here the error ratio covers
 * (q, v) (fewer right-hand sides: bench/README.md, "Measurements behind
 * integrate's choices"), and W_nc, W_t for the implicit and multistep
 * methods (work_steers below); W_R never steers.  The explicit methods
 * integrate the work integrals by the same stages, at their full order,
 * over steps that (q, v) and, in exact mode, the rows bound.
 *
 * Why W_nc and W_t steer the implicit and multistep methods: their rates
 * depend on t beside (q, v) (a moving embedding, a time-dependent force),
 * so they can change while (q, v) stand still.  A state that stays put
 * (Kapitza's pendulum upright, models/kapitza_angle.yaml) makes no error in
 * (q, v): blind to the work integrals, msadams and msbdf never left order 1
 * (GSL raises the order only where the error estimate says a higher one
 * allows a longer step) and their steps grew 5x per step up to the row,
 * so W_t was a backward-Euler sum over steps of 0.006 and 0.03: 0.50 at
 * t = 0.01 for 0.349, an energy balance of 0.995 by t = 0.5; rk2imp and
 * rk1imp (orders 2 and 1) over steps as long as a row left 0.015 and 0.49.
 * Steering on W_nc and W_t, with the error level they are then given
 * (ctl_errlevel), bounds the step and lets the order rise.  The explicit
 * methods keep their numbers: steering them on W_nc, W_t as well changes
 * the default method's rows on shipped models (kapitza_angle at its rtol
 * 1e-12, where W_t's error estimate is above it at some steps; rkf45 on
 * hoop_equilibrium), and interpolate mode has the energy balance control
 * for them.
 *
 * Why a shifted bsimp: GSL's bsimp (ode-initval2/bsimp.c) stops a
 * sub-step as a runaway when sum_i |delta_i| / w_i > 100 dim with
 * w_i = |y_i| (1 where y_i = 0): a component at round-off next to zero (a
 * work integral of constraints that do no work, a coordinate held on a
 * rail by projection) turns every sub-step into a "runaway" and the step
 * halves until it underflows.  holosim hands bsimp y + c with
 * c_i = atol/rtol * sign(y_i), so its weights are |y_i| + atol/rtol: the
 * magnitude below which the error control counts absolutely.  The shift
 * costs nothing in accuracy above (eps / rtol) atol. */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_math.h>

/* ---- the right-hand side ---- */

/* y' = (v, a, R.v, P_nc, P_t + bT . a), R.v = Lambda . (G_q v) (the exact
 * rate of E along the vector field, on the constraints or off). */
int hs_int_eval(hs_int_ctx *c, double t, const double y[], double f[])
{
    const hs_model *m = c->m;
    size_t n = m->n;
    if (c->last_ok && t == c->last_t && memcmp(y, c->last_y, 2 * n * sizeof *y) == 0) {
        memcpy(f, c->last_f, c->dim * sizeof *f);      /* w still holds this state */
        return GSL_SUCCESS;
    }
    c->last_ok = 0;
    const double *q = y, *v = y + n;
    if (hs_dyn_accel(m, c->w, t, q, v, f + n, NULL)) {
        c->failed = 1;
        return GSL_EBADFUNC;
    }
    memcpy(f, v, n * sizeof *f);
    hs_dyn_work_rates(m, c->w, v, f + n, f + 2 * n);
    c->last_t = t;
    memcpy(c->last_y, y, 2 * n * sizeof *y);
    memcpy(c->last_f, f, c->dim * sizeof *f);
    c->last_ok = 1;
    return GSL_SUCCESS;
}

int hs_int_rhs(double tau, const double y[], double f[], void *params)
{
    hs_int_ctx *c = params;
    return hs_int_eval(c, c->t0 + tau, y, f);
}

/* Forward-difference Jacobian for the implicit steppers (h = sqrt(eps)
 * scaled); central differences cost bsimp more steps, not fewer
 * (bench/README.md).  Nothing depends on
 * the work integrals: their columns are 0 without an evaluation. */
int hs_int_jacobian(double tau, const double y[], double *dfdy, double dfdt[], void *params)
{
    hs_int_ctx *c = params;
    size_t dim = c->dim, nq = 2 * c->m->n;
    double t = c->t0 + tau;
    if (hs_int_eval(c, t, y, c->fd_f0) != GSL_SUCCESS)
        return GSL_EBADFUNC;
    memcpy(c->fd_y, y, dim * sizeof *y);
    for (size_t j = 0; j < dim; j++) {
        if (j >= nq) {
            for (size_t i = 0; i < dim; i++)
                dfdy[i * dim + j] = 0;
            continue;
        }
        double h = 1.4901161193847656e-08 * fmax(fabs(y[j]), 1.0);
        c->fd_y[j] = y[j] + h;
        if (hs_int_eval(c, t, c->fd_y, c->fd_f1) != GSL_SUCCESS)
            return GSL_EBADFUNC;
        c->fd_y[j] = y[j];
        for (size_t i = 0; i < dim; i++)
            dfdy[i * dim + j] = (c->fd_f1[i] - c->fd_f0[i]) / h;
    }
    double ht = 1.4901161193847656e-08 * fmax(fabs(tau), 1.0);
    if (hs_int_eval(c, c->t0 + (tau + ht), y, c->fd_f1) != GSL_SUCCESS)
        return GSL_EBADFUNC;
    for (size_t i = 0; i < dim; i++)
        dfdt[i] = (c->fd_f1[i] - c->fd_f0[i]) / ht;
    return GSL_SUCCESS;
}

/* ---- time ---- */

/* The step from tau that lands exactly on a double: the state then sits at
 * the time it is labelled with (a step that does not, ends up to half an
 * ulp of tau away from it). */
static double landing_step(double tau, double h)
{
    double s = (tau + h) - tau;
    return s > 0 ? s : h;
}

double hs_int_min_step(double tau)
{
    return 1e-13 * fmax(1.0, fabs(tau));
}

/* ---- the error control ---- */

typedef struct ctl_state {
    double atol, rtol;
    size_t nctl;           /* leading components that steer the step: q, v */
    int work_steers;       /* W_nc, W_t (components nctl + 1, nctl + 2) steer too */
    double t;              /* start of the step being tried */
    hs_int_run *R;         /* the energy balance steers too (hs_int_balance_control) */
} ctl_state;

/* ---- the energy balance as a steering quantity ---- */

/* The energy balance B = E - E0 - W_R - W_nc - W_t is 0 along the exact
 * motion, on the constraints or off (W_R integrates the exact rate of E
 * along the vector field), and a stepper's errors in the state and in the
 * work integrals move it, each component within its tolerance while B is
 * not.  In interpolate mode (in exact mode steps end on every row) a step
 * is accepted only when the stepper's error estimate also keeps B within
 * atol/4 + rtol S/400, S = |T| + |U| + |W_R| + |W_nc| + |W_t| its scale
 * (and above its round-off, 64 eps S): B at the step's end against B at
 * the end minus the error estimate (the energy there, without the
 * accelerations, in a work of its own, so the stepper's last evaluation
 * stays remembered).  The relative part keeps large energies from asking
 * for round-off; what the control costs and gains: bench/README.md.  It
 * does not depend on what the rows or the summary show, so -q or
 * --columns never change the numbers.  An evaluation that fails there
 * leaves the decision to the state's error. */

/* B + E0 at state y, time t, evaluated with w (R->w: through the
 * remembered evaluation; otherwise the energy alone, no accelerations);
 * its scale |T| + |U| + |W| into *scale.  0, or -1 when an evaluation
 * failed (cleared). */
static int balance_at(hs_int_run *R, hs_work *w, double t, const double *y, double *B,
                      double *scale)
{
    const hs_model *m = R->m;
    size_t n = m->n;
    double E;
    int bad = w == R->w ? hs_int_eval(&R->c, t, y, R->c.fd_f1) != GSL_SUCCESS ||
                              hs_dyn_aux(m, w, t, y, y + n)
                        : hs_dyn_energy(m, w, t, y, y + n, &E) != 0;
    if (bad) {
        if (w == R->w) {                   /* w's outputs no longer match */
            R->c.failed = 0;
            R->c.last_ok = 0;
        }
        hs_error_init(hs_work_err(w));
        hs_work_set_fail_kind(w, HS_FAIL_NONE);
        return -1;
    }
    double T = hs_dyn_kinetic(m, w), U = hs_work_aux(w)[m->off_U];
    const double *W = y + 2 * n;
    *B = hs_dyn_balance(T, U, 0, W);       /* B + E0: E0 drops out of differences */
    *scale = fabs(T) + fabs(U) + fabs(W[0]) + fabs(W[1]) + fabs(W[2]);
    return 0;
}

/* |B(y) - B(y - yerr)| over its tolerance (0 when it cannot be told). */
static double balance_ratio(hs_int_run *R, double tau, const double *y, const double *yerr)
{
    double t = R->t0 + tau, B1, B2, s1, s2;
    double *y2 = R->bal.y_less_err;
    if (R->step.type->error)
        yerr = R->step.type->error(&R->step.ctx);
    for (size_t i = 0; i < R->dim; i++)
        y2[i] = y[i] - yerr[i];
    if (balance_at(R, R->bal.w, t, y2, &B2, &s2) || balance_at(R, R->w, t, y, &B1, &s1))
        return 0;
    double sc = fmax(s1, s2);
    double tol = fmax(0.25 * R->step.atol + 0.0025 * R->step.rtol * sc, 64 * DBL_EPSILON * sc);
    if (!(tol > 0))
        return 0;
    return fabs(B1 - B2) / tol;
}

void hs_int_balance_control(hs_int_run *R)
{
    if (!R->step.drv)
        return;
    ((ctl_state *)R->step.drv->c->state)->R = R;
}

static void *ctl_alloc(void)
{
    return calloc(1, sizeof(ctl_state));
}

static int ctl_init(void *vs, double atol, double rtol, double a_y, double a_dydt)
{
    ctl_state *s = vs;
    (void)a_y;
    (void)a_dydt;
    if (!(atol >= 0) || !(rtol >= 0))
        return GSL_EINVAL;
    s->atol = atol;
    s->rtol = rtol;
    s->nctl = SIZE_MAX;
    return GSL_SUCCESS;
}

/* Does component i steer the step (see the top)? */
static int steers(const ctl_state *s, size_t i)
{
    return i < s->nctl || (s->work_steers && i > s->nctl && i <= s->nctl + 2);
}

/* GSL's standard rule (ode-initval2/cstd.c: D_i = atol + rtol |y_i|, shrink
 * above a ratio of 1.1, grow below 0.5, factors within [0.2, 5], safety
 * 0.9) over the steering components only; a shrunk step lands on a double. */
static int ctl_hadjust(void *vs, size_t dim, unsigned int ord, const double y[],
                       const double yerr[], const double yp[], double *h)
{
    const ctl_state *s = vs;
    (void)yp;
    const double S = 0.9, h_old = *h;
    double rmax = DBL_MIN;
    for (size_t i = 0; i < dim; i++) {
        if (!steers(s, i))
            continue;
        double r = fabs(yerr[i]) / (s->atol + s->rtol * fabs(y[i]));
        if (!(r <= rmax))           /* NaN counts as a failed step */
            rmax = isnan(r) ? (double)INFINITY : r;
    }
    if (s->R && rmax <= 1.1) {             /* would be accepted: B's error too */
        double rb = balance_ratio(s->R, s->t + h_old, y, yerr);
        if (rb > rmax)
            rmax = rb;
    }
    if (rmax > 1.1) {
        double r = S / pow(rmax, 1.0 / ord);
        *h = landing_step(s->t, (r < 0.2 ? 0.2 : r) * h_old);
        return GSL_ODEIV_HADJ_DEC;
    }
    if (rmax < 0.5) {
        double r = S / pow(rmax, 1.0 / (ord + 1.0));
        *h = (r > 5.0 ? 5.0 : r < 1.0 ? 1.0 : r) * h_old;
        return GSL_ODEIV_HADJ_INC;
    }
    return GSL_ODEIV_HADJ_NIL;
}

/* The error level the multistep and implicit steppers weigh components
 * with (their order choice, their corrector's convergence): a work
 * integral that does not steer gets one so large that it never counts. */
static int ctl_errlevel(void *vs, const double y, const double dydt, const double h,
                        const size_t ind, double *errlev)
{
    const ctl_state *s = vs;
    (void)dydt;
    (void)h;
    if (!steers(s, ind)) {
        *errlev = GSL_SQRT_DBL_MAX;
        return GSL_SUCCESS;
    }
    *errlev = s->atol + s->rtol * fabs(y);
    if (!(*errlev > 0)) {
        *errlev = DBL_MIN;
        return GSL_ESANITY;
    }
    return GSL_SUCCESS;
}

static int ctl_set_driver(void *vs, const gsl_odeiv2_driver *d)
{
    (void)vs;
    (void)d;
    return GSL_SUCCESS;
}

static const gsl_odeiv2_control_type ctl_type = {
    "holosim", ctl_alloc, ctl_init, ctl_hadjust, ctl_errlevel, ctl_set_driver, free,
};

/* ---- bsimp on a shifted state ---- */

typedef struct shift_state {
    void *inner;                  /* GSL's bsimp state */
    size_t dim;
    double scale;                 /* atol / rtol */
    double *c, *yu;               /* [dim] shift, unshifted state */
    const gsl_odeiv2_system *sys; /* the system of the current step */
    gsl_odeiv2_system wsys;       /* the same on the shifted state */
} shift_state;

static int shift_f(double t, const double yg[], double f[], void *p)
{
    shift_state *s = p;
    for (size_t i = 0; i < s->dim; i++)
        s->yu[i] = yg[i] - s->c[i];
    return GSL_ODEIV_FN_EVAL(s->sys, t, s->yu, f);
}

static int shift_j(double t, const double yg[], double *dfdy, double dfdt[], void *p)
{
    shift_state *s = p;
    for (size_t i = 0; i < s->dim; i++)
        s->yu[i] = yg[i] - s->c[i];
    return GSL_ODEIV_JA_EVAL(s->sys, t, s->yu, dfdy, dfdt);
}

static void shift_free(void *vs)
{
    shift_state *s = vs;
    if (!s)
        return;
    if (s->inner)
        gsl_odeiv2_step_bsimp->free(s->inner);
    free(s->c);
    free(s->yu);
    free(s);
}

static void *shift_alloc(size_t dim)
{
    shift_state *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->dim = dim;
    s->scale = 1.0;
    s->c = calloc(dim, sizeof *s->c);
    s->yu = calloc(dim, sizeof *s->yu);
    s->inner = gsl_odeiv2_step_bsimp->alloc(dim);
    s->wsys = (gsl_odeiv2_system){ shift_f, shift_j, dim, s };
    if (!s->c || !s->yu || !s->inner) {
        shift_free(s);
        return NULL;
    }
    return s;
}

static int shift_apply(void *vs, size_t dim, double t, double h, double y[], double yerr[],
                       const double dydt_in[], double dydt_out[],
                       const gsl_odeiv2_system *sys)
{
    shift_state *s = vs;
    s->sys = sys;
    for (size_t i = 0; i < dim; i++) {
        s->c[i] = copysign(s->scale, y[i]);
        y[i] += s->c[i];
    }
    int st = gsl_odeiv2_step_bsimp->apply(s->inner, dim, t, h, y, yerr, dydt_in, dydt_out,
                                          &s->wsys);
    for (size_t i = 0; i < dim; i++)
        y[i] -= s->c[i];
    return st;
}

static int shift_set_driver(void *vs, const gsl_odeiv2_driver *d)
{
    shift_state *s = vs;
    return gsl_odeiv2_step_bsimp->set_driver(s->inner, d);
}

static int shift_reset(void *vs, size_t dim)
{
    shift_state *s = vs;
    return gsl_odeiv2_step_bsimp->reset(s->inner, dim);
}

static unsigned int shift_order(void *vs)
{
    shift_state *s = vs;
    return gsl_odeiv2_step_bsimp->order(s->inner);
}

/* can use dydt_in and gives an exact dydt_out, as GSL's bsimp */
static const gsl_odeiv2_step_type shifted_bsimp = {
    "bsimp", 1, 1, shift_alloc, shift_apply, shift_set_driver, shift_reset, shift_order,
    shift_free,
};
const gsl_odeiv2_step_type *const hs_int_bsimp_shifted = &shifted_bsimp;

void hs_int_bsimp_tune(gsl_odeiv2_step *step, const hs_settings *set, double atol,
                       double rtol, size_t nctl)
{
    (void)atol;
    (void)rtol;
    (void)nctl;
    ((shift_state *)step->state)->scale = set->rtol > 0 ? set->atol / set->rtol : 1.0;
}

gsl_odeiv2_driver *hs_int_gsl_driver(const gsl_odeiv2_system *sys, const gsl_odeiv2_step_type *T,
                                     double h, gsl_odeiv2_control *c)
{
    size_t dim = sys->dimension;
    gsl_odeiv2_driver *d = calloc(1, sizeof *d);
    gsl_odeiv2_step *s = malloc(sizeof *s);
    gsl_odeiv2_evolve *e = malloc(sizeof *e);
    double *v[4];
    int ok = d && s && e && c;
    for (int i = 0; i < 4; i++)
        ok &= (v[i] = malloc((dim ? dim : 1) * sizeof(double))) != NULL;
    void *state = ok ? T->alloc(dim) : NULL;  /* GSL's types report their own OOM */
    if (!state) {
        for (int i = 0; i < 4; i++)
            free(v[i]);
        free(d);
        free(s);
        free(e);
        if (c)
            gsl_odeiv2_control_free(c);
        return NULL;
    }
    *s = (gsl_odeiv2_step){ T, dim, state };
    *e = (gsl_odeiv2_evolve){ dim, v[0], v[1], v[2], v[3], 0.0, 0, 0, NULL };
    *d = (gsl_odeiv2_driver){ .sys = sys, .s = s, .c = c, .e = e, .h = h, .hmax = DBL_MAX };
    gsl_odeiv2_step_set_driver(s, d);
    gsl_odeiv2_evolve_set_driver(e, d);
    gsl_odeiv2_control_set_driver(c, d);
    return d;
}

gsl_odeiv2_driver *hs_int_driver_new(hs_int_run *R, const hs_stepper *method)
{
    const hs_settings *s = &R->m->set;
    const gsl_odeiv2_step_type *T = *method->gsl;
    double atol = s->atol * method->tol_factor, rtol = s->rtol * method->tol_factor;
    if (method == R->step.type) {
        R->step.atol = atol;
        R->step.rtol = rtol;
    }
    /* what GSL's driver would report to its handler: a zero or non-finite
     * first step, a negative tolerance (a model's settings are checked
     * positive at load; the caller reports NULL) */
    if (!(fabs(R->step.h) > 0 && fabs(R->step.h) <= DBL_MAX && atol >= 0 && rtol >= 0))
        return NULL;
    /* the control, the step, the driver allocated here (GSL's _alloc
     * report a failed allocation of a state to its handler) */
    gsl_odeiv2_control *c = malloc(sizeof *c);
    ctl_state *cs = c ? ctl_alloc() : NULL;
    if (!cs) {
        free(c);
        return NULL;
    }
    *c = (gsl_odeiv2_control){ &ctl_type, cs };
    gsl_odeiv2_control_init(c, atol, rtol, 1.0, 0.0);   /* atol, rtol >= 0 (above) */
    cs->nctl = 2 * R->m->n;
    cs->work_steers = (method->flags & (HS_STEP_IMPLICIT | HS_STEP_MULTISTEP)) != 0;
    gsl_odeiv2_driver *d = hs_int_gsl_driver(&R->step.sys, T, R->step.h, c);
    if (!d)
        return NULL;
    if (method->tune)
        method->tune(d->s, s, atol, rtol, 2 * R->m->n);
    return d;
}

void hs_int_driver_free(gsl_odeiv2_driver *d)
{
    if (d)
        gsl_odeiv2_driver_free(d);
}

/* ---- failures ---- */

/* After a step-size underflow: if C is nearly singular there, say so and
 * name the constraints whose multipliers blow up, and the configuration. */
static void near_singular(const hs_model *m, hs_work *w, double t, const double *y,
                          hs_error *err)
{
    size_t n = m->n, k = m->k;
    hs_work_full_rcond(w, 1);
    int bad = k == 0 || hs_dyn_accel(m, w, t, y, y + n, NULL, NULL);
    hs_work_full_rcond(w, 0);
    if (bad || !(hs_work_get_stats(w).rcond < 1e-6))
        return;
    hs_error_append(err, "; the configuration is nearly singular (reciprocal condition of C "
                    "%.2g), multipliers", hs_work_get_stats(w).rcond);
    for (int pass = 0; pass < 3; pass++) {
        size_t best = k;                   /* the largest |Lambda| not yet named */
        for (size_t i = 0; i < k; i++)
            if (best == k || fabs(hs_work_Lambda(w)[i]) > fabs(hs_work_Lambda(w)[best]))
                best = i;
        if (best == k)
            break;
        hs_error_append(err, "%s %s = %.3g", pass ? "," : "", m->cname[best],
                        hs_work_Lambda(w)[best]);
        hs_work_Lambda(w)[best] = 0;               /* scratch: next pass names the next */
        if (pass + 1 >= (int)k)
            break;
    }
    for (size_t i = 0; i < n; i++)
        hs_error_append(err, "%s%s=%.6g", i ? ", " : "; at ", m->qname[i], y[i]);
}

/* The callbacks of the method's context (integrate.h: hs_step_ctx). */
static int ctx_rates(hs_step_ctx *c, double t, const double *y, double *f)
{
    hs_int_run *R = c->run;
    return hs_int_eval(&R->c, t, y, f) != GSL_SUCCESS ? hs_int_fail(R, t, y) : 0;
}

static void ctx_forget(hs_step_ctx *c)
{
    c->run->c.last_ok = 0;
}

static int ctx_fail(hs_step_ctx *c, double t, const double *y)
{
    c->run->c.failed = 1;
    return hs_int_fail(c->run, t, y);
}

static void ctx_clear_failure(hs_step_ctx *c)
{
    hs_int_run *R = c->run;
    hs_error_init(R->err);
    hs_error_init(hs_work_err(R->w));
    hs_work_set_fail_kind(R->w, HS_FAIL_NONE);
    R->c.failed = 0;
    R->c.last_ok = 0;
}

void hs_int_step_ctx(hs_int_run *R)
{
    double f = R->step.type->tol_factor;     /* as hs_int_driver_new hands them */
    R->step.ctx = (hs_step_ctx){
        .m = R->m, .w = R->w, .type = R->step.type, .err = R->err, .dim = R->dim,
        .t0 = R->t0, .t_end = R->t_end, .dt = R->dt, .y = R->y, .tau = &R->tau, .t = &R->t,
        .steps = &R->sum->steps, .atol = R->m->set.atol * f,
        .rtol = R->m->set.rtol * f, .opt = R->step.opt,
        .gsl_step = R->step.drv ? R->step.drv->s : NULL,
        .failed = &R->c.failed, .rates = ctx_rates, .forget = ctx_forget, .fail = ctx_fail,
        .clear_failure = ctx_clear_failure, .run = R,
    };
}

int hs_int_fail(hs_int_run *R, double t, const double *y)
{
    const hs_model *m = R->m;
    hs_work *w = R->w;
    hs_error *err = R->err;
    R->c.last_ok = 0;
    if (hs_work_err(w)->code) {
        if (err->code)
            return err->code;
        hs_error_adopt(err, hs_work_err(w), HS_EXIT_NUMERIC);
        if (hs_work_fail_kind(w) == HS_FAIL_SINGULAR_C && m->k) {
            char msg[600];
            size_t rank = hs_cons_rank(m, w, t, y, msg, sizeof msg, NULL);
            if (rank < m->k)
                hs_error_append(err, "; dependent constraints: %s", msg);
            for (size_t i = 0; i < m->n; i++)
                hs_error_append(err, "%s%s=%.6g", i ? ", " : "; configuration ", m->qname[i],
                                y[i]);
        }
        return err->code;
    }
    return hs_error_set(err, HS_EXIT_NUMERIC, "integration failed at t=%.17g", t);
}

static int underflow(hs_int_run *R)
{
    R->t = R->t0 + R->tau;
    hs_error_set(R->err, HS_EXIT_NUMERIC, "step size underflow at t=%.17g (h=%.3g): the "
                 "solution is not smooth here or the tolerances are too tight", R->t, R->step.h);
    R->c.last_ok = 0;
    near_singular(R->m, R->w, R->t, R->y, R->err);
    return HS_EXIT_NUMERIC;
}

/* ---- stabilization ---- */

/* Does a constraint residual call for a projection?  Each constraint's
 * threshold is `tol`, raised to its round-off floor as in the consistency
 * check (16 eps sum_j |dG_i/dq_j q_j| for G, 16 eps (|G_t,i| + sum_j
 * |dG_i/dq_j v_j|) for Gdot) and to `drift` times the error the stepper may
 * make in it in one step (sum_j |dG_i/dq_j| (atol + rtol |q_j|), the same
 * with v_j for Gdot). */
static int residual_exceeds(const hs_int_run *R, double t, const double *y, double tol,
                            double drift)
{
    const hs_model *m = R->m;
    hs_work *w = R->w;
    size_t n = m->n, k = m->k;
    const double *q = y, *v = y + n;
    if (hs_dyn_constraints_sparse(m, w, t, q, NULL, NULL))
        return 1;                          /* let the projection report it */
    const double *G = hs_work_con_G(w), *Gz = hs_work_con_Gq(m, w), *Gt = hs_work_con_Gt(m, w);
    double atol = R->step.atol, rtol = R->step.rtol;
    for (size_t i = 0; i < k; i++) {
        if (hs_dyn_is_released(w, i))          /* let go by an event: no residual */
            continue;
        double sq = 0, sv = fabs(Gt[i]), gd = Gt[i], aq = 0, av = 0;
        for (int z = m->gq_start[i]; z < m->gq_start[i + 1]; z++) {
            double g = fabs(Gz[z]), qj = q[m->gq_col[z]], vj = v[m->gq_col[z]];
            sq += g * fabs(qj);
            sv += g * fabs(vj);
            gd += Gz[z] * vj;
            aq += g * (atol + rtol * fabs(qj));
            av += g * (atol + rtol * fabs(vj));
        }
        if (!(fabs(G[i]) <= fmax(fmax(tol, 16 * DBL_EPSILON * sq), drift * aq)) ||
            !(fabs(gd) <= fmax(fmax(tol, 16 * DBL_EPSILON * sv), drift * av)))
            return 1;
    }
    return 0;
}

/* When to project (stabilize: projection).  The projection aims at
 * min(consistency tolerance, 1e-12); one-step methods are projected after
 * every step whose residuals exceed half of that (a step that kept them
 * there needs none: on the double pendulum most do, and the row after it
 * reuses the stepper's last evaluation).  Multistep methods keep a history
 * of past steps that a projection invalidates (they restart at order 1), so
 * they are projected only when a residual exceeds the consistency
 * tolerance, or 10 times the error they may make in it in one step: a
 * projection below that would be undone by the next step and would restart
 * the method at every step. */
static int wants_projection(const hs_int_run *R)
{
    double tol = R->m->set.tol;
    /* near a singular position a residual at round-off leaves the velocity
     * free to drift along the direction G_q loses (a residual eps allows a
     * drift of eps / sigma_min): a one-step method is projected after every
     * such step.  A multistep method is not: each projection restarts it at
     * order 1, and a passage of hundreds of restarts cost msadams 5e-5 on
     * the N-four-bar at rtol 1e-10 (msbdf 3e-4); with the residual test
     * alone both stay within 1e-8 */
    int singular = hs_work_near_singular(R->w, 1);
    if (singular && !R->step.multistep)
        return 1;
    if (R->step.multistep)
        return residual_exceeds(R, R->t, R->y, tol, 10.0);
    return residual_exceeds(R, R->t, R->y, 0.5 * fmin(tol, 1e-12), 0.0);
}

/* Projection stabilization: positions, then velocities, onto the
 * constraints (at least one Newton step) when wants_projection says so.
 * A multistep method keeps a history of past steps that the jump
 * invalidates: it is reset and restarts at order 1.  One-step methods
 * (the Runge-Kutta family, bsimp) keep only their step size, which stays
 * valid. */
static int stabilize(hs_int_run *R)
{
    const hs_model *m = R->m;
    hs_error pe;
    hs_error_init(&pe);
    R->c.last_ok = 0;                      /* the projection evaluates with w */
    if (hs_proj_apply(R->proj, R->w, R->t, R->y, R->y + m->n, NULL, fmin(m->set.tol, 1e-12),
                      1, &pe)) {
        hs_error_append(&pe, " (projection stabilization)");
        return hs_error_adopt(R->err, &pe, HS_EXIT_NUMERIC);
    }
    if (R->step.multistep) {
        gsl_odeiv2_evolve_reset(R->step.drv->e);
        gsl_odeiv2_step_reset(R->step.drv->s);
    }
    R->sum->projections++;
    return 0;
}

int hs_int_advance(hs_int_run *R, double t_stop)
{
    const hs_model *m = R->m;
    if (R->step.type->advance) {           /* a method that steps itself */
        R->step.projected = 0;
        return R->step.type->advance(&R->step.ctx, t_stop);
    }
    double tau_stop = t_stop - R->t0;
    R->step.h = landing_step(R->tau, R->step.h);
    ((ctl_state *)R->step.drv->c->state)->t = R->tau;
    gsl_odeiv2_driver *d = R->step.drv;
    /* GSL's evolve reports a step against the interval to its handler */
    if ((tau_stop < R->tau && R->step.h > 0) || (tau_stop > R->tau && R->step.h < 0))
        return hs_error_set(R->err, HS_EXIT_NUMERIC, "the step runs away from t=%.17g at "
                            "t=%.17g", t_stop, R->t);
    int st = gsl_odeiv2_evolve_apply(d->e, d->c, d->s, &R->step.sys, &R->tau, tau_stop,
                                     &R->step.h, R->y);
    /* the model time: t_stop itself when the step ended there */
    R->t = R->tau == tau_stop ? t_stop : R->t0 + R->tau;
    if (st != GSL_SUCCESS || R->c.failed) {
        if (R->c.failed)
            return hs_int_fail(R, R->t, R->y);
        if (st == GSL_FAILURE)             /* the control cannot shrink the step further */
            return underflow(R);
        return hs_error_set(R->err, HS_EXIT_NUMERIC, "the stepper %s failed at t=%.17g: %s",
                            R->step.type->name, R->t, gsl_strerror(st));
    }
    R->sum->steps++;
    if (R->step.h < hs_int_min_step(R->tau) && R->tau < tau_stop)
        return underflow(R);
    R->step.projected = 0;
    /* a step that met a singular position is projected whatever the
     * stabilization (wants_projection: what the rank-revealing solve drops
     * there is removed only by a projection) */
    int singular = hs_work_near_singular(R->w, 0) && m->set.stabilize == HS_STAB_BAUMGARTE;
    if ((R->step.projecting && wants_projection(R)) || singular) {
        hs_work_near_singular(R->w, 1);
        if (R->m->set.interpolate)                 /* rows inside follow the step */
            memcpy(R->rows.y_unprojected, R->y, R->dim * sizeof *R->y);
        R->step.projected = 1;
        return stabilize(R);
    }
    return 0;
}
