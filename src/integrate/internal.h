/* Private to src/integrate: the state of one run, shared by the files that
 * do its jobs:
 *
 *   integrate.c  hs_run: times checked, set-up, the stepping loop, failure
 *                messages, clean-up
 *   stepper.c    gsl_odeiv2 for holosim: the right-hand side with the work
 *                integrals, the Jacobian, an error control whose ratio
 *                covers only (q, v) (and, in interpolate mode, the energy
 *                balance), bsimp on a shifted state, one step and the
 *                stabilization policy per kind of stepper
 *   dop853.c     DOP853 as a gsl_odeiv2 step type, its continuous extension
 *   rows.c       output rows: grid times, what a row computes (t, q, v
 *                only when nothing else is shown or asked for), rows inside
 *                a step (interpolate mode), the progress line
 *   events.c     events: watched after every accepted step, located by
 *                trial steps from the step's start, stop, record, release
 *   steppers.c   the table of methods (integrate.h: hs_stepper)
 *   rattle.c     RATTLE and its compositions: methods that step themselves
 *
 * Functions shared between these files carry the prefix hs_int_. */
#ifndef HS_INTEGRATE_INTERNAL_H
#define HS_INTEGRATE_INTERNAL_H

#include <gsl/gsl_odeiv2.h>
#include <gsl/gsl_roots.h>

#include "../consistency/consistency.h"
#include "../dynamics/dynamics.h"
#include "../io/columns.h"
#include "../io/sink.h"
#include "integrate.h"

/* The parameters of the right-hand side.  GSL steps in tau = t - t0, so
 * steps are resolved to the digits of the time elapsed, not of t (a run
 * starting at t0 = 1.7e9 has 2.4e-7 between doubles of t, which a stepper
 * restarting at order 1 at tight tolerances needs to go below); the model
 * sees t = t0 + tau.  With t0 = 0, tau = t.  The state handed to GSL is
 * y = (q, v, W_R, W_nc, W_t): the work integrals ride along with the
 * stepper's stages (so they are as accurate as the stepper makes them),
 * but the error control ignores them (stepper.c).  The last evaluation is
 * remembered: a row at the state the stepper last evaluated costs no
 * second evaluation. */
typedef struct hs_int_ctx {
    const hs_model *m;
    hs_work *w;
    size_t dim;                /* 2n + 3 */
    double t0;                 /* GSL's time is tau = t - t0 */
    double *fd_f0, *fd_f1, *fd_y;  /* [dim] finite-difference Jacobian scratch */
    double last_t;             /* the state and rates of the last evaluation */
    double *last_y, *last_f;   /* [dim] */
    int last_ok;               /* last_* and w's outputs belong together */
    int failed;                /* an evaluation failed: w->err says why */
} hs_int_ctx;

/* Rows inside a step come from polynomials through the step's ends and
 * its midpoint (rows.c); the midpoint is one extra step of `helper`. */
#define HS_INT_NP 7            /* points where the work integrals' rates match */
#define HS_INT_NW 10           /* coefficients of their polynomials */
#define HS_INT_DEPTH 6         /* a step is halved at most this often for its rows */
typedef struct hs_int_fired {   /* an event located in a step (events.c) */
    double s;                   /* its time, from the step's start */
    size_t e;                   /* which */
    int to;                     /* the function's sign after it */
} hs_int_fired;

/* rows.c (integrate.c sets it up): the output, what a row computes,
 * interpolation inside a step, the progress line. */
typedef struct hs_int_rows {
    hs_columns cols;
    int cols_ok;
    hs_sink *out;               /* the trajectory, NULL before set-up */
    double *vals;               /* [cols.n + 1] a row's values */
    double E0;                  /* the energy at the first row */
    int need_w;                 /* a column shows W_R, W_nc, W_t or energy_balance */
    int lean;                   /* rows show t, q, v only and no residual is asked
                                 * for (hs_run_opts.no_residuals): nothing to compute */
    int dense;                  /* rows inside a step from the stepper's own dense
                                 * output (hs_stepper.dense) */
    int dense_w;                /* and the work integrals there are the method's */
    double *y_at, *f_at;        /* [dim] a row's state (inside a step), its rates */
    /* interpolate mode without dense output: polynomials through each
     * step's ends and midpoints, the midpoints from the helper */
    gsl_odeiv2_driver *helper;
    double *y_start, *f_start;  /* [dim] the step's start, its rates */
    double *f_end;              /* [dim] the rates at the step's end */
    double *y_mid, *f_mid;      /* [(DEPTH + 1) dim] midpoints of the segments */
    double *y_right, *f_right;  /* [(DEPTH + 1) dim] ends of right halves */
    double *acc_poly;           /* [n] an interpolant's accelerations */
    double *y_unprojected;      /* [dim] the step's end before a projection moved */
    double *f_unprojected;      /* it, its rates */
    double *helper_err;         /* [dim] the helper's error estimate (unused) */
    double w_inverse[HS_INT_NW * HS_INT_NW]; /* data -> coefficients of W's polynomial */
    double w_coef[3][HS_INT_NW];             /* W_R, W_nc, W_t on the current segment */
    /* the progress line */
    int progress;               /* 0 off, 1 after 2 s, 2 now */
    int progress_shown;         /* it is on the screen */
    double next_progress;       /* wall time of its next update */
} hs_int_rows;

/* events.c: the watched functions and the crossings of a step. */
typedef struct hs_int_events {
    size_t n;                   /* model->nev */
    signed char *sign;          /* [n] the last non-zero sign of each function */
    double *g_start, *g_end;    /* [n] the functions at the step's start, end */
    double *g_inside;           /* [3 n] at 1/4, 1/2, 3/4 of the step (interpolant) */
    double *y_start, *f_start;  /* [dim] the step's start (the last accepted point) */
    double tau_start;           /* GSL's time of y_start */
    double *y_trial, *f_trial;  /* [dim] a trial step: state, rates, */
    double *err_trial;          /* error estimate */
    hs_int_fired *fired;        /* [2 n] the events of a step, in time order */
    hs_prog **g1;               /* [ng1] programs of the functions of the events
                                 * located so far, one per step that first saw
                                 * them cross: locating evaluates those alone */
    size_t ng1;
    size_t *g1_at;              /* [n] 1 + the program of event e's function (0: none) */
    size_t *g1_out;             /* [n] its output there */
    double *g1_regs, *g1_val;   /* scratch of the largest of them: registers, outputs */
    size_t g1_nregs, g1_nval;
    gsl_odeiv2_driver *trial_drv; /* the stepper of the trial steps (NULL: the
                                 * stepper's dense output locates them) */
    hs_sink *out;               /* --events, or NULL */
} hs_int_events;

/* What happened to a step after its events (hs_int_events_step). */
typedef enum {
    HS_INT_STEP_STANDS,         /* as taken */
    HS_INT_STEP_CUT,            /* cut at a release (the rows up to there written) */
    HS_INT_STEP_STOPPED,        /* a stop ended the run (its row written) */
} hs_int_step_fate;

/* stepper.c: the energy balance as a steering quantity (interpolate mode). */
typedef struct hs_int_balance {
    hs_work *w;                 /* its evaluations, or NULL: no balance control */
    double *y_less_err;         /* [dim] the step's end minus its error estimate */
} hs_int_balance;

/* stepper.c: the stepper and what it does after a step. */
typedef struct hs_int_stepping {
    const hs_stepper *type;     /* the run's method (steppers.c) */
    gsl_odeiv2_system sys;
    gsl_odeiv2_driver *drv;     /* a gsl_odeiv2 method's stepper, control and
                                 * evolution (NULL for a method that steps itself) */
    hs_step_ctx ctx;            /* what the method's hooks see (integrate.h;
                                 * hs_int_step_ctx), its state in ctx.own */
    double opt[HS_STEP_MAXOPT]; /* the values of the method's options */
    double h;                   /* the next step (GSL's time) */
    double atol, rtol;          /* the tolerances the stepper is handed */
    int projecting;             /* stabilize: projection, with constraints */
    int projected;              /* the last step was projected */
    int multistep;              /* keeps past steps: a projection resets it */
} hs_int_stepping;

/* contact.c: the contacts' state beyond which are let go (hs_work.released). */
typedef struct hs_int_contacts {
    double E_impact;            /* kinetic energy lost in impacts so far */
    double *hist;               /* [4 ncontact] the last impact times of each
                                 * (newest last; NAN: none) */
    double *ratio;              /* [ncontact] the ratio of its impact intervals
                                 * once they are a geometric sequence, else 0 */
    double *lam;                /* [k] the impulses of the last impact */
    double *e;                  /* [k] restitution by constraint */
    signed char *role;          /* [k] hs_dyn_impact's roles */
    double last_rest;           /* the last accumulation point (NAN: none) */
} hs_int_contacts;

typedef struct hs_int_run {
    const hs_model *m;
    const hs_run_opts *o;
    hs_summary *sum;
    hs_error *err;
    double t0, t_end, dt;
    long N;                     /* rows after the first: t0 + i dt, i < N, then t_end */
    size_t dim;                 /* 2n + 3: q, v, W_R, W_nc, W_t */
    hs_work *w;
    hs_proj *proj;
    hs_int_ctx c;
    double *y;                  /* [dim] the state, at model time t */
    double t;
    double tau;                 /* GSL's time, t - t0 (exact at rows) */
    double wall0;               /* wall time at the start */
    hs_int_stepping step;
    hs_int_balance bal;
    hs_int_rows rows;
    hs_int_events ev;
    hs_int_contacts ct;
} hs_int_run;

/* stepper.c */
/* y' at model time t (remembered: a second call at the same state costs
 * nothing); GSL_SUCCESS or GSL_EBADFUNC with c->w->err set. */
int hs_int_eval(hs_int_ctx *c, double t, const double y[], double f[]);
/* The same at GSL's time tau (gsl_odeiv2_system), and its Jacobian. */
int hs_int_rhs(double tau, const double y[], double f[], void *params);
int hs_int_jacobian(double tau, const double y[], double *dfdy, double dfdt[], void *params);
/* The driver of a gsl_odeiv2 method with holosim's control; NULL when out
 * of memory. */
gsl_odeiv2_driver *hs_int_driver_new(hs_int_run *R, const hs_stepper *method);
/* GSL's Brent root solver (gsl_root_fsolver_brent), operation for
 * operation, as a solver of GSL's interface allocated here (brent.c):
 * endpoints that do not straddle 0 give GSL_EINVAL, a non-finite function
 * value GSL_EBADFUNC, as GSL's return when its handler is off, without
 * reaching it; NULL when out of memory; gsl_root_fsolver_free frees it. */
gsl_root_fsolver *hs_int_brent_new(void);
void hs_int_driver_free(gsl_odeiv2_driver *d);  /* NULL is fine */
/* Let the energy balance steer R->drv's steps too (R->wb set). */
void hs_int_balance_control(hs_int_run *R);
/* bsimp on a shifted state, and its tuning (hs_stepper.tune). */
extern const gsl_odeiv2_step_type *const hs_int_bsimp_shifted;
void hs_int_bsimp_tune(gsl_odeiv2_step *step, const hs_settings *set, double atol,
                       double rtol, size_t nctl);
/* The helper of a method: rows inside a step, trial steps for events. */
static inline const hs_stepper *hs_int_helper(const hs_stepper *s)
{
    return s->helper ? s->helper : s;
}
/* One accepted step towards the model time t_stop (reached exactly when
 * the step ends there), then stabilization; 0 or an exit code with R->err
 * set. */
int hs_int_advance(hs_int_run *R, double t_stop);
/* The context of the method's hooks (R->step.ctx: the model, the work,
 * the run's times and state, the tolerances, the callbacks), once the
 * stepper and its driver are set up. */
void hs_int_step_ctx(hs_int_run *R);
/* The smallest step at GSL's time tau that is not an underflow. */
double hs_int_min_step(double tau);
/* A numerical failure at (t, y): w's reason, a rank diagnosis. */
int hs_int_fail(hs_int_run *R, double t, const double *y);

/* dop853.c: DOP853 as a gsl_odeiv2 step type.  Its error norm's scales
 * (the control's tolerances; the first nctl components steer); the
 * continuous extension of its last accepted step (three evaluations, once
 * per step; 0 or GSL's status) with that step's start and length, and its
 * state at theta in [0, 1] of the step. */
extern const gsl_odeiv2_step_type *const hs_int_dop853;
void hs_int_dop853_scales(gsl_odeiv2_step *step, double atol, double rtol, size_t nctl);
int hs_int_dop853_dense(gsl_odeiv2_step *step, double *tau, double *h);
void hs_int_dop853_at(const gsl_odeiv2_step *step, double theta, double *y);
/* The error estimate of its last step, per component (GSL's yerr holds
 * the error norm times each steering component's scale). */
const double *hs_int_dop853_error(const gsl_odeiv2_step *step);

/* rows.c */
/* Write the row at state y (time t); first = 1 for the first row (sets
 * E0).  Returns 0 or an exit code with R->err set. */
int hs_int_emit(hs_int_run *R, double t, const double *y, int first);
/* Interpolate mode: every grid time in the step that just ended, from GSL
 * time taup to R->tau; *i is the next row's index.  hs_int_interp_init
 * first (0 or -1). */
int hs_int_interp_init(hs_int_run *R);
int hs_int_emit_inside(hs_int_run *R, double taup, long *i);
/* The progress line: shown, updated, or (done = 1) cleared. */
void hs_int_progress(hs_int_run *R, long rows_done, int done);
/* A row of the events file: event `name` at state y, time t (lam: NULL,
 * or [k] the values the multiplier columns show instead: an impulse). */
int hs_int_event_row(hs_int_run *R, const char *name, double t, const double *y);
int hs_int_event_row_lam(hs_int_run *R, const char *name, double t, const double *y,
                         const double *lam);

/* contact.c (holosim-model(5), CONTACTS) */
/* Before the projection at t0: the contacts with a gap above the
 * consistency tolerance (or opening) are let go.  0 or an exit code. */
int hs_int_contacts_init(hs_int_run *R);
/* After it: a closed contact pulled (multiplier < 0) opens.  0 or an exit code. */
int hs_int_contacts_start(hs_int_run *R);
/* 1 when event e is a contact's that does not watch now (an impact of a
 * closed contact, an opening of an open one). */
int hs_int_contact_idle(const hs_int_run *R, size_t e);
/* The transition of contact event e at the current state R->y, R->t (an
 * impact with its impulses, or an opening), its rows in the events file
 * (an hs_int_action's fire). */
int hs_int_contact_event(hs_int_run *R, size_t e, hs_int_step_fate *fate);
void hs_int_contacts_free(hs_int_run *R);
/* friction.c (holosim-model(5), FRICTION): the same for friction elements
 * (stick or slide at t0; watched events; stick, slip, reverse). */
int hs_int_friction_init(hs_int_run *R);
int hs_int_friction_start(hs_int_run *R);
int hs_int_friction_idle(const hs_int_run *R, size_t e);
/* After a contact's transition: elements whose contacts opened slide,
 * sliding ones at rest try to stick, sticking ones that cannot slide. */
int hs_int_friction_settle(hs_int_run *R);
int hs_int_friction_event(hs_int_run *R, size_t e, hs_int_step_fate *fate);
/* evstate.c: every event function at state y, time t, into hs_work_events(R->w)
 * (f: rates scratch); every event's function and sign at the current state
 * (the start, or a restart); a clean restart after a jump of the dynamics
 * or the state (rates, stepper history and its reset hook, every event's
 * sign).  0 or an exit code. */
int hs_int_events_eval(hs_int_run *R, double t, const double *y, double *f);
int hs_int_events_signs(hs_int_run *R);
int hs_int_events_restart(hs_int_run *R);

/* actions.c: what an event does, one entry per hs_ev_action (model.h). */
enum {
    HS_ACT_OWN_ROW = 1,      /* it writes its own rows to the events file */
    HS_ACT_KEEPS_STEP = 2    /* the step it fell in stands (no jump: a record) */
};
typedef struct hs_int_action {
    const char *name;
    unsigned flags;
    /* 1 when event e is not watched now (NULL: always watched) */
    int (*idle)(const hs_int_run *R, size_t e);
    /* At the event's state (R->t, R->y; the step cut there): what it does;
     * sets *fate when it ends the run.  0 or an exit code. */
    int (*fire)(hs_int_run *R, size_t e, hs_int_step_fate *fate);
} hs_int_action;
extern const hs_int_action hs_int_actions[HS_EV_NACTIONS];

/* events.c */
/* Set-up (scratch, the trial stepper, the events file); 0 or an exit code. */
int hs_int_events_setup(hs_int_run *R);
/* At the consistent start, before the first row: every event function
 * finite (else exit 2, positioned), their signs (one at 0 does not fire). */
int hs_int_events_start(hs_int_run *R);
/* Before a step: remember its start. */
void hs_int_events_mark(hs_int_run *R);
/* After a step (from GSL time taup; interpolate mode's next row *i):
 * the crossings in it, located and handled in time order, and what became
 * of the step.  0 or an exit code. */
int hs_int_events_step(hs_int_run *R, double taup, long *i, hs_int_step_fate *fate);
/* The events file at the end of the run (rc: how it ended) and clean-up;
 * returns rc or a write error. */
int hs_int_events_finish(hs_int_run *R, int rc);

#endif
