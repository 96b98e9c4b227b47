/* Events (internal.h; holosim-model(5), EVENTS): each event function g is
 * evaluated after every accepted step (so an event never depends on the
 * output grid).  A sign change in the event's direction between the
 * step's start and end is a crossing; it is located by Brent's method
 * (GSL's gsl_root_fsolver_brent, written out in brent.c) on
 * s -> g(y(tau_start + s)), where y(tau_start + s) is the true state of a
 * fresh step of s from the step's start: for a one-step method one step
 * of its own kind (no longer than the accepted one, so at least as
 * accurate), for a multistep method,
 * whose history a trial step cannot use, the helper stepper of interpolate
 * mode run adaptively from the start to tau_start + s.  The bracket is closed
 * to 1e-13 of the elapsed time (plus two ulps of s); the event's state is
 * the trial state at the bracket's end where g has changed sign, so the
 * run goes on from the far side of the crossing and the same crossing is
 * not found twice.
 *
 * A function with the same sign at both ends may cross and come back
 * inside the step: its values at a quarter, half and three quarters of the
 * step on the cubic Hermite interpolant of (q, v), with the ends, give a
 * quartic; where that reaches the other side a trial step looks at the
 * true state, and when it is there both crossings are located (dip).
 *
 * Signs: each event keeps the last non-zero sign its function had; a
 * function at exactly 0 decides nothing (an event at 0 at t0 does not
 * fire there; a zero it only touches is no crossing).  Several crossings
 * in one step are handled in time order: a record writes a row of the
 * events file and goes on; a stop writes its row there and a last row of
 * the trajectory at the event's time; a release cuts the step at the
 * event (rows up to it written, with the dynamics before it), lets the
 * constraints go, and restarts the stepper from there: a stepper's
 * history, the cached rates and every event's sign belong to the old
 * dynamics (a multiplier jumps to 0: no crossing), and crossings later in
 * the cut step are found again under the new one.
 *
 * Contacts and friction elements (contact.c, friction.c) have events of
 * their own, each watched only in the state it can change (the others
 * keep their signs); their crossings cut the step as a release does.  A
 * contact's gap at 0 right after its impact counts as below its floor, and
 * a step that starts and ends below it has flown in between: the flight's
 * end is searched for (dip) however short, and a step where none is found
 * though it ends below the consistency tolerance stops the run (exit 4).
 *
 * Cost: every function is evaluated (one program, prog_ev) at each step's
 * end, and at three inner points when one may dip; the root finder of a
 * crossing evaluates only the functions of the events located (their own
 * program, compiled from the folded expressions prog_ev is built from,
 * once per step that first sees them cross: the same operations, so the
 * same doubles), so locating all crossings of a run is linear in the
 * number of events, not quadratic. */
#include "internal.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_roots.h>

/* Is event e not watched now (its action's idle)? */
static int idle(const hs_int_run *R, size_t e)
{
    const hs_int_action *a = &hs_int_actions[R->m->ev[e].action];
    return a->idle && a->idle(R, e);
}

static int sgn(double x)
{
    return x > 0 ? 1 : x < 0 ? -1 : 0;
}

int hs_int_events_setup(hs_int_run *R)
{
    const hs_model *m = R->m;
    const hs_run_opts *o = R->o;
    R->ev.n = m->nev;
    if ((R->ev.out = o->events))
        hs_sink_header(R->ev.out, &R->rows.cols);
    if (!R->ev.n)
        return 0;
    size_t ne = R->ev.n, dim = R->dim;
    R->ev.sign = calloc(ne, 1);
    R->ev.g_start = calloc(ne, sizeof *R->ev.g_start);
    R->ev.g_end = calloc(ne, sizeof *R->ev.g_end);
    R->ev.g_inside = calloc(3 * ne, sizeof *R->ev.g_inside);
    R->ev.fired = calloc(2 * ne, sizeof *R->ev.fired);
    R->ev.y_start = calloc(dim, sizeof *R->ev.y_start);
    R->ev.f_start = calloc(dim, sizeof *R->ev.f_start);
    R->ev.y_trial = calloc(dim, sizeof *R->ev.y_trial);
    R->ev.f_trial = calloc(dim, sizeof *R->ev.f_trial);
    R->ev.err_trial = calloc(dim, sizeof *R->ev.err_trial);
    R->ev.g1_at = calloc(ne, sizeof *R->ev.g1_at);
    R->ev.g1_out = calloc(ne, sizeof *R->ev.g1_out);
    hs_int_events *E = &R->ev;
    if (!E->sign || !E->g_start || !E->g_end || !E->g_inside || !E->fired || !E->y_start ||
        !E->f_start || !E->y_trial || !E->f_trial || !E->err_trial || !E->g1_at || !E->g1_out)
        return hs_error_nomem(R->err);
    if (!R->step.type->gsl)                /* it steps from any state itself */
        return 0;
    R->ev.trial_drv = hs_int_driver_new(R, hs_int_helper(R->step.type));
    if (!R->ev.trial_drv)
        return hs_error_nomem(R->err);     /* only an allocation fails there */
    return 0;
}

/* A program of the functions of the events in list[0..cnt) that have
 * none yet (one compilation per step, not per event: compiling reads
 * arrays as large as the model's dag).  0 or an exit code. */
static int compile_g1(hs_int_run *R, const hs_int_fired *list, size_t cnt)
{
    const hs_model *m = R->m;
    hs_int_events *E = &R->ev;
    const hs_node **roots = malloc((cnt ? cnt : 1) * sizeof *roots);
    size_t nr = 0;
    if (!roots)
        return hs_error_nomem(R->err);
    for (size_t f = 0; f < cnt; f++) {
        size_t e = list[f].e;
        if (E->g1_at[e])
            continue;
        E->g1_at[e] = E->ng1 + 1;           /* (a duplicate in list: marked once) */
        E->g1_out[e] = nr;
        roots[nr++] = m->ev_root[e];
    }
    int rc = 0;
    hs_prog **g1 = nr ? realloc(E->g1, (E->ng1 + 1) * sizeof *g1) : E->g1;
    if (nr && g1) {
        E->g1 = g1;
        hs_error err;
        hs_error_init(&err);
        hs_prog *p = hs_prog_compile(m->dag, roots, nr, &err);
        size_t nreg = p ? hs_prog_nregs(p) : 0;
        double *regs = E->g1_regs, *val = E->g1_val;
        if (nreg > E->g1_nregs && (regs = realloc(E->g1_regs, nreg * sizeof *regs))) {
            E->g1_regs = regs;
            E->g1_nregs = nreg;
        }
        if (nr > E->g1_nval && (val = realloc(E->g1_val, nr * sizeof *val))) {
            E->g1_val = val;
            E->g1_nval = nr;
        }
        if (p && regs && val) {
            E->g1[E->ng1++] = p;
        } else {
            rc = -1;
            hs_prog_free(p);
        }
    } else if (nr) {
        rc = -1;
    }
    if (rc)                               /* none of them compiled: the full evaluation */
        for (size_t f = 0; f < cnt; f++)
            if (E->g1_at[list[f].e] == E->ng1 + 1)
                E->g1_at[list[f].e] = 0;
    free(roots);
    return rc ? hs_error_nomem(R->err) : 0;
}

/* Event e's function at state y, model time t, into *g (f: rates
 * scratch): its own program when it has one (the inputs as hs_dyn_events
 * sets them), else every function.  A non-finite value goes through
 * eval_g, which says where it arose.  0 or an exit code. */
static int eval_g1(hs_int_run *R, size_t e, double t, const double *y, double *f, double *g)
{
    const hs_model *m = R->m;
    hs_int_events *E = &R->ev;
    hs_work *w = R->w;
    if (!E->g1_at[e]) {
        int rc = hs_int_events_eval(R, t, y, f);
        *g = hs_work_events(w)[e];
        return rc;
    }
    if (m->ev_dyn && hs_int_eval(&R->c, t, y, f) != GSL_SUCCESS)
        return hs_int_fail(R, t, y);
    hs_dyn_set_state(m, w, t, y, y + m->n);
    for (size_t i = 0; m->ev_dyn && m->sym_a && i < m->n; i++)
        if (m->sym_a[i] >= 0)
            hs_work_inputs(w)[m->sym_a[i]] = hs_work_a(w)[i];
    for (size_t j = 0; m->ev_dyn && m->sym_lam && j < m->k; j++)
        if (m->sym_lam[j] >= 0)
            hs_work_inputs(w)[m->sym_lam[j]] = hs_work_Lambda(w)[j];
    hs_prog_eval(E->g1[E->g1_at[e] - 1], hs_work_inputs(w), E->g1_regs, E->g1_val);
    *g = E->g1_val[E->g1_out[e]];
    if (isfinite(*g))
        return 0;
    int rc = hs_int_events_eval(R, t, y, f);
    return rc ? rc : hs_error_set(R->err, HS_EXIT_NUMERIC, "non-finite value of the function "
                                  "of event '%.80s' at t=%.17g", m->ev[e].name, t);
}

/* A comparison already true at the start fires only after it has been
 * false (a crossing): said on the report stream, at the event's `when`. */
static void warn_true_at_start(hs_int_run *R)
{
    const hs_model *m = R->m;
    for (size_t e = 0; e < R->ev.n; e++) {
        const hs_event *ev = &m->ev[e];
        if (!ev->cmp || R->ev.sign[e] != ev->dir)
            continue;
        hs_error w;
        hs_error_init(&w);
        hs_error_set(&w, HS_EXIT_MODEL, "%s%.200s%s '%.200s' is already true at the start "
                     "(t = %g): it %s only where it becomes true, after it has been false%s",
                     ev->pos.src < 0 ? hs_optname(R->m->names, HS_OPT_STOP_WHEN) : "event '",
                     ev->pos.src < 0 ? "" :
                     ev->name, ev->pos.src < 0 ? "" : "':", ev->text, R->t0,
                     ev->action == HS_EV_STOP ? "stops the run" : "fires",
                     ev->action == HS_EV_STOP ? "; if the run should not start there, "
                     "change the initial data" : "");
        hs_model_place(m, ev->pos, &w);
        if (ev->pos.src < 0)
            fputs("holosim: ", R->o->report);
        hs_error_print_as(&w, R->o->report, "warning");
    }
}

int hs_int_events_start(hs_int_run *R)
{
    const hs_model *m = R->m;
    if (!R->ev.n)
        return 0;
    if (m->ev_dyn && hs_int_eval(&R->c, R->t0, R->y, R->ev.f_trial) != GSL_SUCCESS)
        return hs_int_fail(R, R->t0, R->y);
    size_t bad = 0;
    if (hs_dyn_events(m, R->w, R->t0, R->y, R->y + m->n, &bad)) {
        /* a model error: the condition cannot be watched from the start */
        const hs_event *ev = &m->ev[bad];
        if (R->err->code)
            return R->err->code;
        if (ev->pos.src < 0)
            return hs_error_set(R->err, HS_EXIT_MODEL, "%s '%.200s': not finite at "
                                "the start: %.700s", hs_optname(R->m->names, HS_OPT_STOP_WHEN),
                                ev->text, hs_work_err(R->w)->msg);
        hs_error_adopt(R->err, hs_work_err(R->w), HS_EXIT_MODEL);
        if (!R->err->line)
            hs_model_place(m, ev->pos, R->err);
        return R->err->code;
    }
    R->t = R->t0;
    int rc = hs_int_events_signs(R);
    if (!rc && R->o->report)
        warn_true_at_start(R);
    return rc;
}

void hs_int_events_mark(hs_int_run *R)
{
    if (!R->ev.n)
        return;
    memcpy(R->ev.y_start, R->y, R->dim * sizeof *R->ev.y_start);
    R->ev.tau_start = R->tau;
}

/* The true state at GSL time tau_start + s into y: a fresh step of s from the
 * step's start (internal.h).  0 or an exit code. */
static int trial(hs_int_run *R, double s, double *y)
{
    memcpy(y, R->ev.y_start, R->dim * sizeof *y);
    if (s == 0)
        return 0;
    if (R->step.type->step_from)           /* a fixed-step method's own step */
        return R->step.type->step_from(&R->step.ctx, R->ev.tau_start, s, y);
    int st;
    if (R->step.multistep) {
        gsl_odeiv2_driver *d = R->ev.trial_drv;
        double tau = R->ev.tau_start, h0 = fmin(s, fabs(R->step.h));
        /* a positive finite hstart and s > 0: GSL's driver reports neither
         * "invalid hstart" nor an inconsistent direction */
        if (!(h0 > 0 && h0 <= DBL_MAX && s > 0))
            return hs_error_set(R->err, HS_EXIT_NUMERIC, "no step to take at t=%.17g while "
                                "locating an event", R->t0 + (R->ev.tau_start + s));
        gsl_odeiv2_driver_reset_hstart(d, h0);
        st = gsl_odeiv2_driver_apply(d, &tau, R->ev.tau_start + s, y);
    } else {
        gsl_odeiv2_step *sp = R->ev.trial_drv->s;
        gsl_odeiv2_step_reset(sp);
        st = gsl_odeiv2_step_apply(sp, R->ev.tau_start, s, y, R->ev.err_trial,
                                   sp->type->can_use_dydt_in ? R->ev.f_start : NULL,
                                   R->ev.f_trial, &R->step.sys);
    }
    if (R->c.failed)
        return hs_int_fail(R, R->t0 + (R->ev.tau_start + s), y);
    if (st != GSL_SUCCESS)
        return hs_error_set(R->err, HS_EXIT_NUMERIC, "the stepper failed at t=%.17g while "
                            "locating an event: %s", R->t0 + (R->ev.tau_start + s),
                            gsl_strerror(st));
    return 0;
}

/* g_e at tau_start + s, for GSL's root finder. */
typedef struct evfun {
    hs_int_run *R;
    size_t e;
    int rc;              /* a failed evaluation (R->err set) */
    double h, gh;        /* the step and g_e at its trial end (asked twice) */
} evfun;

static double g_at(double s, void *p)
{
    evfun *F = p;
    hs_int_run *R = F->R;
    if (F->rc)
        return NAN;
    if (s == 0)
        return R->ev.g_start[F->e];
    if (s == F->h && !isnan(F->gh))
        return F->gh;
    double g = NAN;
    int rc = trial(R, s, R->ev.y_trial);
    if (!rc)
        rc = eval_g1(R, F->e, R->t0 + (R->ev.tau_start + s), R->ev.y_trial, R->ev.f_trial, &g);
    if (rc) {
        F->rc = rc;
        return NAN;
    }
    return g;
}

/* Brent on [lo0, hi] (g_e(lo0) of the old sign `so`, g_e(hi) not): the
 * end of the closed bracket where g_e no longer has the old sign into *s. */
static int brent(evfun *F, gsl_root_fsolver *solver, double lo0, double hi, int so, double *s)
{
    hs_int_run *R = F->R;
    gsl_function fn = { g_at, F };
    for (int round = 0; round < 8; round++) {
        if (!(lo0 <= hi) || gsl_root_fsolver_set(solver, &fn, lo0, hi) != GSL_SUCCESS)
            break;                  /* GSL's set reports lo0 > hi to its handler */
        double lo = lo0;
        for (int it = 0; it < 200; it++) {
            int st = gsl_root_fsolver_iterate(solver);
            if (F->rc)
                return F->rc;
            if (st != GSL_SUCCESS)
                break;
            lo = gsl_root_fsolver_x_lower(solver);
            hi = gsl_root_fsolver_x_upper(solver);
            if (hi - lo <= 1e-13 * fabs(R->ev.tau_start + hi) + 2 * DBL_EPSILON * hi)
                break;
        }
        double gh = g_at(hi, F);
        if (F->rc)
            return F->rc;
        if (sgn(gh) != so || lo == lo0) {
            *s = hi;
            return 0;
        }
        /* the crossing found goes back to the old sign: an earlier one is
         * before lo, where g_e has the new sign */
        hi = lo;
    }
    *s = hi;
    return 0;
}

/* Locate the crossing of event e in the step [tau_start, tau_start + h] into *s
 * (h itself when the trial step to the end does not see it: then it is
 * within the step's own error of the end). */
static int locate(hs_int_run *R, gsl_root_fsolver *solver, size_t e, double h, double *s)
{
    int so = R->ev.sign[e];
    if (sgn(R->ev.g_start[e]) == 0) {              /* at 0 at the start, a sign before it */
        *s = 0;
        return 0;
    }
    evfun F = { R, e, 0, h, NAN };
    double gh = g_at(h, &F);
    if (F.rc)
        return F.rc;
    F.gh = gh;
    if (sgn(gh) == so || sgn(R->ev.g_start[e]) != so) {
        *s = h;
        return 0;
    }
    return brent(&F, solver, 0, h, so, s);
}

/* The state at u in [0, 1] of the step on the cubic Hermite interpolant of
 * its ends' positions and velocities (velocities: its derivative; the work
 * integrals: linear) into y: a guess, confirmed by a trial step. */
void hs_int_hermite(size_t n, double h, double u, const double *ya, const double *yb,
                    double *y)
{
    double u2 = u * u, u3 = u2 * u;
    double h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h11 = u3 - u2;
    double d00 = 6 * u2 - 6 * u, d10 = 3 * u2 - 4 * u + 1, d11 = 3 * u2 - 2 * u;
    for (size_t i = 0; i < n; i++) {
        double qa = ya[i], qb = yb[i], va = ya[n + i], vb = yb[n + i];
        y[i] = h00 * qa + (1 - h00) * qb + h * (h10 * va + h11 * vb);
        y[n + i] = d00 * (qa - qb) / h + d10 * va + d11 * vb;
    }
}

static void hermite_state(const hs_int_run *R, double h, double u, double *y)
{
    size_t n = R->m->n;
    const double *ya = R->ev.y_start, *yb = R->y;
    hs_int_hermite(n, h, u, ya, yb, y);
    for (size_t i = 2 * n; i < R->dim; i++)
        y[i] = ya[i] + u * (yb[i] - ya[i]);
}

/* Event e has the same sign at both ends of the step: does it cross and
 * come back inside?  Its values at u = 0, 1/4, 1/2, 3/4, 1 (the inner
 * three on the interpolant, R->ev.g_inside) define a quartic; the u in (0, 1) (at
 * 1/64 steps) where the quartic reaches furthest to the other side, or -1
 * when it does not get there. */
static double dip_guess(const hs_int_run *R, size_t e)
{
    const double *gi = R->ev.g_inside;
    double g[5] = { R->ev.g_start[e], gi[e], gi[R->ev.n + e], gi[2 * R->ev.n + e],
                    R->ev.g_end[e] };
    return hs_int_dip_guess(g, R->ev.sign[e]);
}

double hs_int_dip_guess(const double g[5], int so)
{
    /* Newton's form in x = 4u: forward differences d1..d4 */
    double d1 = g[1] - g[0], d2 = g[2] - 2 * g[1] + g[0];
    double d3 = g[3] - 3 * g[2] + 3 * g[1] - g[0];
    double d4 = g[4] - 4 * g[3] + 6 * g[2] - 4 * g[1] + g[0];
    /* on [0, 4] |x| <= 4, |x(x-1)/2| <= 6, |x(x-1)(x-2)/6| <= 4, |.../24| <= 1 */
    if (so * g[0] > 4 * fabs(d1) + 6 * fabs(d2) + 4 * fabs(d3) + fabs(d4))
        return -1;                                 /* cannot reach 0 */
    double best = 0, ub = -1;
    for (int k = 1; k < 64; k++) {
        double x = k / 16.0;
        double v = g[0] + x * (d1 + (x - 1) / 2 * (d2 + (x - 2) / 3 * (d3 + (x - 3) / 4 * d4)));
        if (so * v < best) {
            best = so * v;
            ub = x / 4;
        }
    }
    return ub;
}

/* A contact's gap below 0 at both ends of the step, the start just after
 * its impact: it has flown in between (or the step would not stand). */
static int just_left(const hs_int_run *R, size_t e)
{
    return R->m->ev[e].action == HS_EV_IMPACT && R->ev.sign[e] == -1 &&
           sgn(R->ev.g_start[e]) == -1 && sgn(R->ev.g_end[e]) == -1;
}

/* The guess of dip_guess tried with a true trial step: *s1 gets its time
 * from the step's start when g_e has the other sign there, else -1. */
static int dip(hs_int_run *R, size_t e, double h, int seen, double *s1)
{
    int so = R->ev.sign[e];
    double ub = seen ? dip_guess(R, e) : -1;
    *s1 = -1;
    evfun F = { R, e, 0, h, NAN };
    if (ub >= 0) {
        double gt = g_at(ub * h, &F);
        if (F.rc)
            return F.rc;
        if (sgn(gt) == -so) {
            *s1 = ub * h;
            return 0;
        }
    }
    if (!just_left(R, e))
        return 0;
    /* a contact's flight between impacts, too short for the interpolant's
     * samples: it is above its floor right after the start */
    for (double s = h / 64; s > 1e-12 * h; s /= 4) {
        double gt = g_at(s, &F);
        if (F.rc)
            return F.rc;
        if (sgn(gt) == -so) {
            *s1 = s;
            return 0;
        }
    }
    if (R->ev.g_end[e] >= -R->m->set.tol)
        return 0;                       /* a flight below the tolerance: no harm */
    return hs_error_set(R->err, HS_EXIT_NUMERIC, "contact '%.80s' is %g below its floor at "
                        "t=%.17g, at the end of a step from t=%.17g that it left with an "
                        "impact: the flight in between was not found (try smaller "
                        "tolerances or another method)", R->m->ev[e].name, -R->ev.g_end[e],
                        R->t, R->t0 + R->ev.tau_start);
}

/* The values of every function at u = 1/4, 1/2, 3/4 of the step on the
 * interpolant into R->ev.g_inside.  The interpolant is a guess slightly off the
 * constraints: where the dynamics or a function fails there (a domain
 * edge the true state keeps to), the step is not looked into: 0, and the
 * failure is forgotten; 1 when all three are there. */
static int inner_values(hs_int_run *R, double h)
{
    const hs_model *m = R->m;
    for (int j = 0; j < 3; j++) {
        double u = (j + 1) / 4.0, t = R->t0 + (R->ev.tau_start + u * h);
        hermite_state(R, h, u, R->ev.y_trial);
        if ((m->ev_dyn && hs_int_eval(&R->c, t, R->ev.y_trial, R->ev.f_trial) != GSL_SUCCESS) ||
            hs_dyn_events(m, R->w, t, R->ev.y_trial, R->ev.y_trial + m->n, NULL)) {
            R->c.failed = 0;
            R->c.last_ok = 0;
            hs_error_init(hs_work_err(R->w));
            hs_work_set_fail_kind(R->w, HS_FAIL_NONE);
            return 0;
        }
        memcpy(R->ev.g_inside + (size_t)j * R->ev.n, hs_work_events(R->w),
               R->ev.n * sizeof *R->ev.g_inside);
    }
    return 1;
}

/* Time order; at one time, the order of the events in the model. */
static int by_time(const void *pa, const void *pb)
{
    const hs_int_fired *a = pa, *b = pb;
    return a->s < b->s ? -1 : a->s > b->s ? 1 : a->e < b->e ? -1 : a->e > b->e;
}

/* The crossings of the step just taken into R->ev.fired (time order), each
 * located: a sign change between the step's ends, or for a function with
 * the same sign at both, a dip to the other side and back inside the step
 * (dip): two crossings.  Returns how many, or -1 with R->err set. */
static long find_crossings(hs_int_run *R, double h)
{
    const hs_model *m = R->m;
    size_t nf = 0, nd = 0;
    for (size_t e = 0; e < R->ev.n; e++) {
        int sn = sgn(R->ev.g_end[e]), so = R->ev.sign[e];
        if (idle(R, e)) {        /* a contact's, not watching now */
            if (sn)
                R->ev.sign[e] = (signed char)sn;
            continue;
        }
        if (sn && so && sn != so && (m->ev[e].dir == 0 || m->ev[e].dir == sn))
            R->ev.fired[nf++] = (hs_int_fired){ 0, e, sn };
        else if (sn && so && sn == so && sgn(R->ev.g_start[e]) == so)
            nd++;                               /* may dip */
        else if (sn)
            R->ev.sign[e] = (signed char)sn;
    }
    if (!nf && !nd)
        return 0;
    int may = 0, seen = nd && inner_values(R, h);  /* a dip on the interpolant */
    for (size_t e = 0; e < R->ev.n && nd && !may; e++) {
        int so = R->ev.sign[e];
        if (idle(R, e))
            continue;
        may = sgn(R->ev.g_end[e]) == so && sgn(R->ev.g_start[e]) == so &&
              ((seen && dip_guess(R, e) >= 0) || just_left(R, e));
    }
    if (!nf && !may)
        return 0;
    /* the rates at the start, for the trial steps' first stage */
    if (hs_int_eval(&R->c, R->t0 + R->ev.tau_start, R->ev.y_start, R->ev.f_start) != GSL_SUCCESS) {
        hs_int_fail(R, R->t0 + R->ev.tau_start, R->ev.y_start);
        return -1;
    }
    gsl_root_fsolver *solver = hs_int_brent_new();
    if (!solver) {
        hs_error_nomem(R->err);
        return -1;
    }
    int rc = compile_g1(R, R->ev.fired, nf);
    for (size_t f = 0; f < nf && !rc; f++)
        rc = locate(R, solver, R->ev.fired[f].e, h, &R->ev.fired[f].s);
    for (size_t e = 0; e < R->ev.n && may && !rc; e++) {
        int so = R->ev.sign[e], dir = m->ev[e].dir;
        double s1;
        if (idle(R, e))
            continue;
        if (sgn(R->ev.g_end[e]) != so || sgn(R->ev.g_start[e]) != so ||
            (rc = dip(R, e, h, seen, &s1)) || s1 < 0)
            continue;
        evfun F = { R, e, 0, h, NAN };
        if (dir == 0 || dir == -so) {          /* away: in (0, s1) */
            R->ev.fired[nf] = (hs_int_fired){ 0, e, -so };
            if (!(rc = brent(&F, solver, 0, s1, so, &R->ev.fired[nf].s)))
                nf++;
        }
        if (!rc && (dir == 0 || dir == so)) {  /* back: in (s1, h) */
            R->ev.fired[nf] = (hs_int_fired){ 0, e, so };
            if (!(rc = brent(&F, solver, s1, h, -so, &R->ev.fired[nf].s)))
                nf++;
        }
    }
    gsl_root_fsolver_free(solver);
    if (rc)
        return -1;
    qsort(R->ev.fired, nf, sizeof *R->ev.fired, by_time);
    return (long)nf;
}

/* The step cut at the event: the state there becomes the step's end
 * (interpolate mode writes its rows up to there now, with the dynamics of
 * the step). */
static int cut_step(hs_int_run *R, double s, const double *y, double taup, long *i)
{
    R->tau = R->ev.tau_start + s;
    R->t = R->t0 + R->tau;
    if (y != R->y)
        memcpy(R->y, y, R->dim * sizeof *y);
    R->step.projected = 0;
    if (R->m->set.interpolate)
        return hs_int_emit_inside(R, taup, i);
    return 0;
}

/* The event fired at s (GSL time tau_start + s): its row, and what its
 * action does. */
static int handle(hs_int_run *R, const hs_int_fired *fe, double h, double taup, long *i,
                  hs_int_step_fate *fate)
{
    const hs_model *m = R->m;
    const hs_event *ev = &m->ev[fe->e];
    double s = fe->s;
    const double *y = R->y;
    int rc;
    if (s < h) {
        if ((rc = trial(R, s, R->ev.y_trial)))
            return rc;
        y = R->ev.y_trial;
    }
    double t = s < h ? R->t0 + (R->ev.tau_start + s) : R->t;
    R->ev.sign[fe->e] = (signed char)fe->to;            /* past the crossing */
    const hs_int_action *act = &hs_int_actions[ev->action];
    if (!(act->flags & HS_ACT_OWN_ROW) && (rc = hs_int_event_row(R, ev->name, t, y)))
        return rc;
    if (act->flags & HS_ACT_KEEPS_STEP)
        return 0;
    if (s < h && (rc = cut_step(R, s, y, taup, i)))
        return rc;
    if (s >= h && m->set.interpolate && (rc = hs_int_emit_inside(R, taup, i)))
        return rc;
    *fate = HS_INT_STEP_CUT;
    return act->fire(R, fe->e, fate);
}

int hs_int_events_step(hs_int_run *R, double taup, long *i, hs_int_step_fate *fate)
{
    *fate = HS_INT_STEP_STANDS;
    if (!R->ev.n)
        return 0;
    double h = R->tau - R->ev.tau_start;
    int rc = hs_int_events_eval(R, R->t, R->y, R->ev.f_trial);
    if (rc)
        return rc;
    memcpy(R->ev.g_end, hs_work_events(R->w), R->ev.n * sizeof *R->ev.g_end);
    long nf = find_crossings(R, h);
    if (nf < 0)
        return R->err->code;
    for (long f = 0; f < nf && *fate == HS_INT_STEP_STANDS; f++)
        if ((rc = handle(R, &R->ev.fired[f], h, taup, i, fate)))
            return rc;
    if (*fate == HS_INT_STEP_STANDS)      /* its end starts the next */
        memcpy(R->ev.g_start, R->ev.g_end, R->ev.n * sizeof *R->ev.g_start);
    return 0;
}

int hs_int_events_finish(hs_int_run *R, int rc)
{
    hs_int_driver_free(R->ev.trial_drv);
    hs_int_events *E = &R->ev;
    for (size_t i = 0; i < E->ng1; i++)
        hs_prog_free(E->g1[i]);
    void *v[] = { E->sign, E->g_start, E->g_end, E->g_inside, E->fired, E->y_start, E->f_start,
                  E->y_trial, E->f_trial, E->err_trial, E->g1, E->g1_at, E->g1_out,
                  E->g1_regs, E->g1_val };
    for (size_t k = 0; k < sizeof v / sizeof *v; k++)
        free(v[k]);
    return rc;
}
