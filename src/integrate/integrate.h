/* The run: consistent start, gsl_odeiv2 stepping with output rows exactly
 * at t0, t0+dt, ..., t_end (or interpolated inside the steps),
 * stabilization, failure handling (rows already computed stay written and
 * flushed), the progress line, and the end-of-run summary. */
#ifndef HS_INTEGRATE_H
#define HS_INTEGRATE_H

#include <signal.h>
#include <stdio.h>

#include <gsl/gsl_odeiv2.h>

#include "../io/sink.h"
#include "../model/model.h"
#include "../native/native.h"
#include "../util/error.h"

typedef struct hs_run_opts {
    hs_sink *out;                  /* the rows (io/sink.h), opened and closed
                                    * by the caller (hs_sink_finish, publish
                                    * 0); the run writes the header and rows */
    const char *columns;           /* --columns list or NULL */
    int precision;                 /* significant digits (17) */
    FILE *report;                  /* consistency report (stderr) or NULL (quiet) */
    int progress;                  /* HS_PROGRESS_*: the progress line on stderr */
    volatile sig_atomic_t *stop;   /* set by a signal handler: stop, exit 130 */
    const hs_native *native;       /* kernels of prog_dyn, prog_aux, prog_pos,
                                    * prog_out, prog_ev in that order
                                    * (hs_native_load), or NULL: VM */
    hs_sink *events;               /* the events' rows, or NULL: none kept (the
                                    * caller closes it with publish set when
                                    * the run succeeded: the header alone) */
    int no_residuals;              /* the caller shows none of the summary's
                                    * max_G, max_Gdot, max_ebal, max_pres (they
                                    * stay 0): a row whose columns show only t,
                                    * q and v computes nothing else */
} hs_run_opts;

/* The progress line (simulated time, share done, time elapsed and left)
 * goes to standard error only when that is a terminal.  AUTO shows it once
 * a run has taken 2 s, unless the caller is quiet (report == NULL) or the
 * CSV itself goes to a terminal; ON (--progress) shows it from the start;
 * OFF (-q) never.  It is erased when the run ends. */
enum { HS_PROGRESS_OFF = -1, HS_PROGRESS_AUTO = 0, HS_PROGRESS_ON = 1 };

typedef struct hs_summary {
    long steps, nrhs, rows;
    long projections;              /* projection stabilizations applied */
    long splits;                   /* interpolate mode: segments halved for accuracy */
    double max_G, max_Gdot, max_ebal, max_pres;
    double t_reached, wall;
    long events;                   /* event occurrences (rows of the events file) */
    const char *stopped_by;        /* the event that ended the run (its name), or
                                    * NULL; it and stop_text point into the model */
    const char *stop_text;         /* its condition as written */
    long impacts;                  /* contacts closed by an impact (holosim-model(5)) */
    long transitions;              /* contact openings, stick and slip transitions */
    int rested;                    /* a Zeno sequence ended in resting contact ... */
    double t_rest;                 /* ... at this accumulation point (the last one) */
    const char *rest_contact;      /* its contact (points into the model) */
    /* the rank-revealing solve (dynamics.h): the rank of G_q at the start
     * (k: none redundant), evaluations through it, the near-singular ones
     * and their worst reciprocal condition of C, a singular mass met */
    size_t k, rank0;
    long nrobust, nsingular;
    double worst_rcond;
    int augmented;
} hs_summary;

/* The steppers (simulate.method, --method): one const type per method,
 * in the manner of gsl_odeiv2_step_type, listed once in hs_steppers
 * (steppers.c).  A method is either a gsl_odeiv2 step type (`gsl`, with
 * holosim's error control) or steps itself (`advance`: a fixed step that
 * solves for the multipliers inside it, no error estimate); either may
 * have a dense output of its own.  Adding a method: its type in a file of
 * its own (or beside GSL's in steppers.c) and one entry in hs_steppers. */
#define HS_STEP_MAXOPT 4        /* options of one method (hs_stepper.options) */
enum {
    HS_STEP_IMPLICIT = 1,      /* a gsl_odeiv2 method that needs the Jacobian */
    HS_STEP_MULTISTEP = 2,     /* keeps past steps (a projection or an event
                                * restarts it) */
    HS_STEP_DENSE = 4,         /* its own continuous extension serves rows and
                                * events inside a step (dense, dense_at) */
    HS_STEP_FIXED = 8,         /* steps itself with a fixed step (advance): no
                                * error estimate, no error control */
};
struct hs_int_run;             /* the run's state (src/integrate/internal.h) */
struct hs_stepper;
typedef struct hs_work hs_work;    /* the dynamics' run state (dynamics.h) */

/* What a method's hooks are handed: the model, the dynamics' work, the
 * run's times and state, the tolerances, the method's option values, and
 * the run's services as callbacks; nothing else of the run.  GSL steps in
 * tau = t - t0; y is the state (q, v, W_R, W_nc, W_t). */
typedef struct hs_step_ctx {
    const hs_model *m;
    hs_work *w;                /* the dynamics' evaluations (dynamics.h) */
    const struct hs_stepper *type; /* the run's method */
    hs_error *err;             /* the run's error (first kept) */
    size_t dim;                /* 2n + 3 */
    double t0, t_end, dt;      /* the start, the end, the output interval */
    double *y;                 /* [dim] the run's state, at GSL time *tau, */
    double *tau, *t;           /* and model time *t (advance moves all three) */
    long *steps;               /* the summary's count of accepted steps */
    double atol, rtol;         /* the tolerances the method is handed */
    const double *opt;         /* the values of the method's options (hs_stepper.options) */
    void *own;                 /* the method's state: start sets it, finish frees it */
    void *gsl_step;            /* a gsl_odeiv2 method's gsl_odeiv2_step (NULL else) */
    const int *failed;         /* an evaluation failed (w's error says why) */
    /* the rates y' at model time t (the run's remembered evaluation when it
     * is at that state): 0, or an exit code with err set */
    int (*rates)(struct hs_step_ctx *c, double t, const double *y, double *f);
    /* the work's last evaluation is no longer the remembered one */
    void (*forget)(struct hs_step_ctx *c);
    /* a failed evaluation (of the dynamics, at (t, y)) into err, with a
     * rank diagnosis; returns the exit code */
    int (*fail)(struct hs_step_ctx *c, double t, const double *y);
    /* forget a failure (a trial the method retries): err, w's error */
    void (*clear_failure)(struct hs_step_ctx *c);
    struct hs_int_run *run;    /* the run's, for the callbacks alone */
} hs_step_ctx;

/* One option of a method, declared in its table entry and checked from
 * there (hs_stepper_options): its value is the model's numeric setting
 * `setting` (model.h: simulate.NAME in the file, the command line's option
 * `optname`), NAN when not given (then `def`). */
typedef enum { HS_STEP_OPT_NUMBER } hs_step_opt_type;
typedef struct hs_step_option {
    const char *name;          /* "step" */
    hs_step_opt_type type;
    hs_numset setting;         /* where the value is read (model.h: hs_numsets) */
    int optname;               /* HS_OPT_*: how the caller names it (util/error.h) */
    double def;                /* the value when not given (NAN: the method chooses) */
    double min, max;           /* the range: min < value <= max, and finite */
    const char *range;         /* the range in words: "a positive number" */
    const char *who;           /* the methods that take it, in words: "fixed-step" */
    const char *without;       /* what a method without it does instead */
    const char *help;          /* one line: what it is, its default */
} hs_step_option;

typedef struct hs_stepper {
    const char *name;
    int order;                 /* its order (variable-order methods: the highest) */
    unsigned flags;            /* HS_STEP_* */
    double tol_factor;         /* the tolerances it is handed, x rtol and atol */
    const struct hs_stepper *helper; /* rows inside a step and trial steps for
                                * events where it cannot (multistep): NULL, itself */
    const char *about;         /* one line for `holosim help methods` */
    const hs_step_option *options; /* [noptions] its options (NULL: none) */
    size_t noptions;           /* at most HS_STEP_MAXOPT */
    /* a gsl_odeiv2 method: its step type, and what it is told beyond GSL's
     * interface once allocated (NULL: nothing) */
    const gsl_odeiv2_step_type *const *gsl;
    void (*tune)(gsl_odeiv2_step *s, const hs_settings *set, double atol, double rtol,
                 size_t nctl);
    /* the error estimate of its last step per component, when the one GSL
     * hands the control is something else (NULL: GSL's yerr) */
    const double *(*error)(const hs_step_ctx *c);
    /* dense output (HS_STEP_DENSE): make the last step's extension, its
     * start and length in GSL's time, then the state at theta in [0, 1]
     * of it (each 0 or an exit code with the run's error set) */
    int (*dense)(hs_step_ctx *c, double *tau_start, double *h);
    int (*dense_at)(hs_step_ctx *c, double theta, double *y);
    /* NULL, or whether the method can run the model: 0, or an error
     * placed at the method in the model file (exit 2) or exit 1 when the
     * command line chose it (hs_stepper_check calls it) */
    int (*suits)(const hs_model *m, hs_error *err);
    /* a method that steps itself (HS_STEP_FIXED): set-up (0 or an exit
     * code), one step towards model time t_stop (the run's state and
     * times advanced; 0 or an exit code), one step of s from the state y
     * at GSL time tau (y updated in place: events' trial steps; 0 or an
     * exit code), clean-up (nothing set up is fine); all through the
 * context (hs_step_ctx), with the run's state and times in it */
    int (*start)(hs_step_ctx *c);
    int (*advance)(hs_step_ctx *c, double t_stop);
    int (*step_from)(hs_step_ctx *c, double tau, double s, double *y);
    void (*finish)(hs_step_ctx *c);
    /* A method that steps itself and keeps state between steps: forget it
     * after a jump of the state or the dynamics (an impact, a release, a
     * hold; evstate.c calls it), or NULL. */
    void (*reset)(hs_step_ctx *c);
} hs_stepper;

/* GSL's driver (as gsl_odeiv2_driver_alloc_*), built here: the step of
 * type T (its state from T->alloc), an evolve, the control c (taken over,
 * freed on failure), first step h (nonzero, finite); GSL's allocators
 * report a failed allocation of a state, holosim's own types' included,
 * to GSL's handler.  NULL when out of memory; gsl_odeiv2_driver_free frees
 * it. */
gsl_odeiv2_driver *hs_int_gsl_driver(const gsl_odeiv2_system *sys, const gsl_odeiv2_step_type *T,
                                     double h, gsl_odeiv2_control *c);

/* Every method, in the order `holosim help methods` lists them; NULL ends it. */
extern const hs_stepper *const hs_steppers[];
/* The method of that name, or NULL. */
/* The method of that name; "" is the default method (hs_stepper_default). */
extern const hs_stepper *const hs_stepper_default;
const hs_stepper *hs_stepper_find(const char *name);
/* "rk2 rk4 ..." (every name, one space apart) into buf[cap]; returns buf. */
const char *hs_stepper_names(char *buf, size_t cap);
/* " (did you mean 'rattle'?)" for a misspelt stepper name, else "" (in buf). */
const char *hs_stepper_hint(const char *name, char *buf, size_t cap);
/* The same for the methods that have every flag of `flags`. */
const char *hs_stepper_names_with(char *buf, size_t cap, unsigned flags);
/* The model's method (m->set.method) is known and can run the model, or
 * an error: at its place in the model file (exit 2) when it came from
 * there, exit 1 otherwise. */
int hs_stepper_check(const hs_model *m, hs_error *err);
/* The values of method s's options (hs_stepper.options) into val[noptions]
 * (the default for one not given), each checked against its range; an
 * option of another method given to s is refused (a usage error, or a
 * model error at its place in the file).  0 or an exit code. */
int hs_stepper_options(const hs_model *m, const hs_stepper *s, double *val, hs_error *err);
/* An error about option j of s: msg after the option's name (simulate.NAME
 * at its place in the file when it came from there, exit 2; else the
 * caller's option name, exit 1).  Returns the code. */
int hs_stepper_option_error(const hs_model *m, const hs_stepper *s, size_t j, hs_error *err,
                            const char *msg);
/* `holosim help methods`: one line per method (name, order, kind, about),
 * then one per option of the methods that have them. */
void hs_stepper_print(FILE *f);

/* Output time i: t0 + i dt rounded to 15 significant digits (rows read
 * 0.3, not 0.30000000000000004), exactly as strtod(sprintf("%.15g")) would
 * round it, without formatting. */
double hs_grid_time(double t0, long i, double dt);

/* Run the model; returns 0 or an exit code with err set.  130 when
 * interrupted through opts->stop. */
int hs_run(const hs_model *m, const hs_run_opts *opts, hs_summary *sum, hs_error *err);

/* The output grid of a run from m's t0 to t_end every dt_in (NaN: a
 * thousandth of the span): *dt and the count of intervals *N (a last one
 * shorter than 1e-9 dt merged into t_end); exit 1 with err when t_end is
 * missing, not finite or not after t0, dt not positive, more than 1e9
 * rows, or dt below the 15-digit resolution of the times. */
int hs_run_times(const hs_model *m, double t_end, double dt_in, double *dt, long *N,
                 hs_error *err);

/* Two crossings of an event inside one step (events.c; the stop events of
 * `run --sensitivity` too).  hs_int_hermite: on a step of length h from
 * ya to yb (each q [n] then v [n]), the state at u in [0, 1] on the cubic
 * Hermite interpolant of the positions (velocities: its derivative) into
 * y [2n], a guess for a trial step to confirm.  hs_int_dip_guess: an event
 * function's values g at u = 0, 1/4, 1/2, 3/4, 1 of the step, the sign so
 * it has at both ends: the u in (0, 1) (1/64 steps) where the quartic
 * through them reaches furthest to the other side, or -1 when it does not
 * get there. */
void hs_int_hermite(size_t n, double h, double u, const double *ya, const double *yb,
                    double *y);
double hs_int_dip_guess(const double g[5], int so);

#endif
