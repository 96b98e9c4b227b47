/* libholosim: holosim's models, runs and analyses from a C program (or
 * from Python: python/holosim/).  See doc/api.md.
 *
 * Handles own their memory and are freed by the matching _free function
 * (NULL is fine everywhere).  A model is immutable once loaded: one model
 * may be run from several threads at once, and distinct handles are
 * independent.  Every error is returned, never printed and never fatal:
 * the functions that can fail take a holosim_error *, fill it (the exit
 * code of holosim(1)'s EXIT STATUS table, the position and the message as
 * the command line prints it) and return NULL or that non-zero code. */
#ifndef HOLOSIM_H
#define HOLOSIM_H

#include <signal.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HOLOSIM_API __attribute__((visibility("default")))
#else
#define HOLOSIM_API
#endif

/* The library's version, "0.1.0". */
HOLOSIM_API const char *holosim_version(void);

/* ---- errors ---- */

/* Exit codes (holosim(1), EXIT STATUS). */
enum {
    HOLOSIM_OK = 0,
    HOLOSIM_EUSAGE = 1,        /* a bad option value, an unreadable file */
    HOLOSIM_EMODEL = 2,        /* model or expression error */
    HOLOSIM_EINCONSISTENT = 3, /* initial data rejected, no equilibrium */
    HOLOSIM_ENUMERIC = 4,      /* numerical failure during a run */
    HOLOSIM_ENOMEM = 5,        /* out of memory */
    HOLOSIM_ESTOPPED = 130     /* a run stopped by a callback or its stop flag */
};

typedef struct holosim_error {
    int code;                  /* 0: no error */
    int line, column;          /* 1-based; 0 when unknown */
    char file[512];            /* "" when the error has no file */
    char message[1024];        /* the message alone */
    /* The error as `holosim` prints it on standard error:
     *     FILE:LINE:COLUMN: error: MESSAGE
     *         the source line
     *         ^
     * ("holosim: error: MESSAGE" when it has no position) */
    char text[2200];
} holosim_error;

/* The text of an exit code ("model error"). */
HOLOSIM_API const char *holosim_exit_text(int code);

/* ---- models ---- */

typedef struct holosim_model holosim_model;

/* Load a model file (holosim-model(5)), or a model given as text (name:
 * what errors call it, NULL for "<text>").  set[0..nset-1]: parameter
 * overrides "NAME=EXPR", as `holosim run --set` takes them (the last of a
 * name wins).  NULL with err set (2: a model error, 1: a file that cannot
 * be read or a --set of an unknown parameter). */
HOLOSIM_API holosim_model *holosim_model_load(const char *path, const char *const *set,
                                              size_t nset, holosim_error *err);
HOLOSIM_API holosim_model *holosim_model_load_text(const char *name, const char *text,
                                                   const char *const *set, size_t nset,
                                                   holosim_error *err);
HOLOSIM_API void holosim_model_free(holosim_model *m);

/* What the model is: its name (the file's `name`, maybe ""), the
 * coordinates (n) and the constraints (k), the parameters with their
 * values after the overrides. */
HOLOSIM_API const char *holosim_model_name(const holosim_model *m);
HOLOSIM_API size_t holosim_model_ncoords(const holosim_model *m);
HOLOSIM_API const char *holosim_model_coord(const holosim_model *m, size_t i);
HOLOSIM_API size_t holosim_model_nconstraints(const holosim_model *m);
HOLOSIM_API const char *holosim_model_constraint(const holosim_model *m, size_t j);
HOLOSIM_API size_t holosim_model_nparams(const holosim_model *m);
HOLOSIM_API const char *holosim_model_param(const holosim_model *m, size_t i, double *value);

/* A load with more than overrides: the model's inputs given sources and
 * stop conditions added.  inputs[ninputs]: "NAME=SRC" as `holosim run
 * --input` takes them (SRC a table, a file name ending in .csv with
 * columns t and NAME, or an expression of t and the parameters; the last
 * of a name wins); stop_when[nstop_when]: conditions as `--stop-when`
 * takes them ("x > 1": an event that stops the run).  Each list may be
 * NULL with count 0.  holosim_load_options_init empties every field. */
typedef struct holosim_load_options {
    const char *const *set;        /* "NAME=EXPR", as holosim_model_load's */
    size_t nset;
    const char *const *inputs;     /* "NAME=SRC" */
    size_t ninputs;
    const char *const *stop_when;  /* conditions */
    size_t nstop_when;
} holosim_load_options;

HOLOSIM_API void holosim_load_options_init(holosim_load_options *lo);

/* holosim_model_load and holosim_model_load_text with lo (NULL: none).
 * NULL with err set, as those (an input source that cannot be read or
 * compiled, a bad condition: the positioned message and its code). */
HOLOSIM_API holosim_model *holosim_model_load_with(const char *path,
                                                   const holosim_load_options *lo,
                                                   holosim_error *err);
HOLOSIM_API holosim_model *holosim_model_load_text_with(const char *name, const char *text,
                                                        const holosim_load_options *lo,
                                                        holosim_error *err);

/* ---- runs ---- */

/* Called once, before any row or event row, with the names of the
 * columns (the CSV header's).  Return 0 to go on, non-zero to stop (as a
 * row callback's stop). */
typedef int (*holosim_header_fn)(void *ctx, const char *const *names, size_t ncols);

/* Called with every event row (`holosim run --events`): the event's name
 * and row[ncols], the values of the result's columns at the event (the
 * events CSV's columns are `event` then those).  Return as a row
 * callback. */
typedef int (*holosim_event_fn)(void *ctx, const char *event, const double *row,
                                size_t ncols);

/* What a run would say on standard error, handed over instead: kind
 * HOLOSIM_MSG_REPORT, the consistency projection's report and the
 * warnings of the run (what `--quiet-projection` silences);
 * HOLOSIM_MSG_NOTE, what the native kernels' policy has to tell (what
 * `-q` silences).  text: one line, with its '\n', as the command line
 * prints it ("holosim: ..."). */
enum { HOLOSIM_MSG_REPORT = 1, HOLOSIM_MSG_NOTE = 2 };
typedef void (*holosim_message_fn)(void *ctx, int kind, const char *text);

/* The native kernels' policy (`--native`): the model's programs compiled
 * to C and loaded, or the bytecode VM.  DEFAULT is NEVER (the numbers are
 * the same either way, to the bit). */
enum { HOLOSIM_NATIVE_DEFAULT = -1, HOLOSIM_NATIVE_NEVER = 0, HOLOSIM_NATIVE_AUTO = 1,
       HOLOSIM_NATIVE_ALWAYS = 2 };

/* The progress line of a run (`--progress`, `-q`): OFF never (the
 * default); AUTO on standard error, when that is a terminal, once the run
 * has taken 2 s; ON from the start.  The one thing a run can write
 * itself, and only when asked. */
enum { HOLOSIM_PROGRESS_OFF = -1, HOLOSIM_PROGRESS_AUTO = 0, HOLOSIM_PROGRESS_ON = 1 };

/* What a run did (`holosim run --summary`'s fields, and more).  The
 * strings point into the model (valid while it lives), NULL when none. */
typedef struct holosim_run_summary {
    long steps, nrhs, rows;        /* steps taken, rhs evaluations, rows computed */
    long projections;              /* projection stabilizations applied */
    long splits;                   /* interpolate mode: segments halved */
    double max_G, max_Gdot;        /* largest |G|, |Gdot| over the rows */
    double max_energy_balance, max_power_residual;
    double t_reached;              /* the time of the last row */
    double wall;                   /* seconds the run took */
    long events;                   /* event rows */
    const char *stopped_by;        /* the event that ended the run, or NULL */
    const char *stop_text;         /* its condition as written */
    long impacts;                  /* contacts closed by an impact */
    long transitions;              /* other contact and friction transitions */
    int rested;                    /* a contact came to rest ... */
    double t_rest;                 /* ... at this accumulation point */
    const char *rest_contact;      /* ... that contact */
    size_t k, rank0;               /* constraints, rank of G_q at the start */
    long nrobust, nsingular;       /* rank-revealing solves, near-singular ones */
    double worst_rcond;            /* their worst reciprocal condition */
    int augmented;                 /* a singular mass matrix was met */
} holosim_run_summary;

/* Options of a run: holosim_run_options_init sets every field to "the
 * model's" (NaN, NULL, -1); each one given means what the option of
 * `holosim run` of the same name means.  The fields after `columns` came
 * later; their defaults keep a run as it was without them. */
typedef struct holosim_run_options {
    double t_end;              /* --t-end */
    double dt;                 /* --dt */
    const char *method;        /* --method */
    double step;               /* --step */
    double rtol, atol;         /* --rtol, --atol */
    int output_mode;           /* --output-mode: 0 exact, 1 interpolate */
    const char *columns;       /* --columns (a comma list, globs, default, all) */
    int native;                /* --native: HOLOSIM_NATIVE_* */
    /* checked before every step: non-zero stops the run (HOLOSIM_ESTOPPED,
     * the rows before kept); a signal handler may set it.  NULL: none */
    volatile sig_atomic_t *stop;
    holosim_header_fn header;  /* NULL: none */
    void *header_ctx;
    /* the event rows to this callback; NULL: gathered into the result
     * (holosim_result_nevents) when keep_events is 1, else not computed */
    holosim_event_fn events;
    void *events_ctx;
    int keep_events;
    /* the run's messages to this callback; NULL: dropped */
    holosim_message_fn message;
    void *message_ctx;
    holosim_run_summary *summary;  /* filled when given, after a failure too */
    int progress;              /* HOLOSIM_PROGRESS_* */
    /* 1: the summary's max_G, max_Gdot, max_energy_balance and
     * max_power_residual are not wanted (0 then): a row showing only t, q
     * and v computes nothing else (`-q` without `--summary`) */
    int no_residuals;
} holosim_run_options;

HOLOSIM_API void holosim_run_options_init(holosim_run_options *o);

/* Called with every row as it is computed: row[ncols] in the order of the
 * result's columns.  Return 0 to go on, non-zero to stop the run (the run
 * then fails with HOLOSIM_ESTOPPED, the rows before kept). */
typedef int (*holosim_row_fn)(void *ctx, const double *row, size_t ncols);

typedef struct holosim_result holosim_result;

/* Integrate the model (o NULL: the model's settings).  Without a row
 * callback (fn NULL) the rows are gathered into the result's buffer;
 * with one they go to it and the result holds the columns alone (and the
 * count of rows).  NULL with err set; the same numbers as `holosim run`,
 * which is a client of this function.  The event rows, the messages, the
 * native kernels, the stop flag and the summary as the options say
 * (above); nothing is written to standard output or error, but the
 * progress line when o->progress asks for it. */
HOLOSIM_API holosim_result *holosim_run(const holosim_model *m, const holosim_run_options *o,
                                        holosim_row_fn fn, void *ctx, holosim_error *err);
HOLOSIM_API void holosim_result_free(holosim_result *r);

/* The columns (the names of the CSV header), the rows, and the buffer of
 * nrows * ncols doubles, row after row (NULL with a callback or no row);
 * it lives as long as the result. */
HOLOSIM_API size_t holosim_result_ncols(const holosim_result *r);
HOLOSIM_API const char *holosim_result_column(const holosim_result *r, size_t j);
HOLOSIM_API size_t holosim_result_nrows(const holosim_result *r);
HOLOSIM_API const double *holosim_result_data(const holosim_result *r);
/* Integration steps taken, right-hand side evaluations. */
HOLOSIM_API long holosim_result_steps(const holosim_result *r);
HOLOSIM_API long holosim_result_nrhs(const holosim_result *r);
/* The event rows gathered (a run without an event callback): their
 * count, the name of row i's event, and the buffer of nevents * ncols
 * doubles (the result's columns; NULL when none). */
HOLOSIM_API size_t holosim_result_nevents(const holosim_result *r);
HOLOSIM_API const char *holosim_result_event(const holosim_result *r, size_t i);
HOLOSIM_API const double *holosim_result_event_data(const holosim_result *r);

/* `holosim run --sensitivity P1,P2,...`: the motion with its forward
 * sensitivities to the parameters params[np], in a result whose columns
 * are the command line's: t, the coordinates, the velocities, lambda_c,
 * then per parameter p in the order given dq/dp, dq'/dp, dlambda_c/dp.
 * o as holosim_run's: t_end, dt, method, rtol, atol; native (the
 * variational programs' kernels, the same numbers to the bit); stop;
 * header; message (the notes and warnings `run --sensitivity` prints:
 * the method used instead of the model's, the stop event, initial data
 * inconsistent for other values of the parameters); summary (steps and
 * nrhs of the augmented system, rows, t_reached, wall, stopped_by and
 * stop_text when a stop event ended the run; the rest 0 or NaN).
 * columns, step, output_mode and events / keep_events are refused
 * (HOLOSIM_EUSAGE), and so are models with contacts, friction or events
 * that change the state; stop and record events and inputs are taken.
 * The method must be an explicit gsl_odeiv2 one (the model's is replaced
 * by rk8pd when it is not, as the command line does).  The result's
 * steps and nrhs are the augmented system's.  NULL with err set. */
HOLOSIM_API holosim_result *holosim_sensitivity(const holosim_model *m,
                                                const char *const *params, size_t np,
                                                const holosim_run_options *o,
                                                holosim_row_fn fn, void *ctx,
                                                holosim_error *err);

/* ---- check ---- */

/* `holosim check` in numbers: the sizes, the constraints' residuals at
 * t0 (largest |G|, largest |G_t + G_q v|), the rank of G_q there. */
typedef struct holosim_check_report {
    size_t n, k, nparams;
    size_t rank;
    double max_G, max_Gdot;
    double tolerance;          /* consistency.tolerance */
} holosim_check_report;

/* 0 with r filled, or the exit code with err set (a method that cannot
 * run the model, as `holosim check`). */
HOLOSIM_API int holosim_check(const holosim_model *m, holosim_check_report *r,
                              holosim_error *err);

/* ---- equilibrium and modes ---- */

/* The equilibrium nearest the initial position (`holosim equilibrium`):
 * q[n], lambda[k] (the sign of a run's lambda_*), the residuals, and the
 * verdict of its linearization: "stable", "marginal" or "unstable". */
typedef struct holosim_equilibrium {
    size_t n, k;
    double *q, *lambda;
    double res_Q, res_G;
    int iterations;
    int stable;
    const char *verdict;
} holosim_equilibrium;

/* The modes there (`holosim modes --csv`): count rows of eigenvalues
 * s = sigma + i omega (omega >= 0) and shapes shape[count * n] (real) and
 * shape_im[count * n] (imaginary), row r at r * n. */
typedef struct holosim_modes {
    size_t n, count;
    double *sigma, *omega;
    double *shape, *shape_im;
    int stable;
    const char *verdict;
} holosim_modes;

/* 0 with the struct filled (free it with the matching _free, also after
 * a failure), or the exit code with err set (2: M, Q or G depend on time;
 * 3: no equilibrium found). */
HOLOSIM_API int holosim_equilibrium_find(const holosim_model *m, holosim_equilibrium *eq,
                                         holosim_error *err);
HOLOSIM_API void holosim_equilibrium_free(holosim_equilibrium *eq);
HOLOSIM_API int holosim_modes_find(const holosim_model *m, holosim_modes *md,
                                   holosim_error *err);
HOLOSIM_API void holosim_modes_free(holosim_modes *md);

/* ---- the stability of a motion, linear models ---- */

/* The Floquet multipliers of the motion from the model's initial state
 * over one period (`holosim floquet --period T`): the monodromy matrix
 * on the tangent space of the constraint manifold (dim = 2 (n - k)),
 * from the variational equations integrated with the motion. */
typedef struct holosim_floquet {
    size_t dim;
    double period;
    double *re, *im;           /* [dim] the multipliers, largest |mu| first */
    double *monodromy;         /* [dim * dim] row-major, on the tangent basis */
    double mu_max;             /* the largest |mu| */
    double gap;                /* max |x(t0 + T) - x(t0)| over q and v */
    int periodic_model;        /* 1: M, Q, G the same at t0 and t0 + T */
    double tolerance;          /* of the verdict */
    const char *verdict;       /* "stable", "marginal" or "unstable" */
} holosim_floquet;

/* 0 with fl filled (free it with holosim_floquet_free, also after a
 * failure), or the exit code with err set (2: a period not positive and
 * finite, a model too large; 3: an inconsistent start; 4: the integration
 * failed). */
HOLOSIM_API int holosim_floquet_find(const holosim_model *m, double period,
                                     holosim_floquet *fl, holosim_error *err);
HOLOSIM_API void holosim_floquet_free(holosim_floquet *fl);

/* Lyapunov exponents of the motion over [t0, t0 + T] (`holosim
 * lyapunov`): T = t_end - t0 (t_end NaN: the model's simulate.t_end),
 * renormalized every `every` (NaN: T/100); spectrum: all 2 (n - k)
 * exponents, else the largest.  history holds t and the running
 * estimates after every renormalization, nrows rows of 1 + count. */
typedef struct holosim_lyapunov {
    size_t count;
    double *lambda;            /* [count] the estimates at t0 + T */
    size_t nrows;
    double *history;           /* [nrows * (1 + count)] */
} holosim_lyapunov;

HOLOSIM_API int holosim_lyapunov_find(const holosim_model *m, double t_end, double every,
                                      int spectrum, holosim_lyapunov *ly, holosim_error *err);
HOLOSIM_API void holosim_lyapunov_free(holosim_lyapunov *ly);

/* The linear model x' = A x + B u, y = C x + D u of `holosim linearize`,
 * at the equilibrium nearest the initial position (at_initial 0) or at
 * the initial state as it is (1).  inputs: names of the model's inputs
 * (NULL: every input); outputs: columns a run can write (a coordinate, a
 * velocity x', an output, lambda_NAME, ...; NULL: the coordinates).  The
 * state x is the independent coordinates and their velocities, named in
 * xname. */
typedef struct holosim_statespace {
    size_t nx, nu, ny;
    double *A, *B, *C, *D;     /* row-major: nx x nx, nx x nu, ny x nx, ny x nu */
    char **xname, **uname, **yname;
} holosim_statespace;

HOLOSIM_API int holosim_linearize(const holosim_model *m, const char *const *inputs,
                                  size_t ninputs, const char *const *outputs, size_t noutputs,
                                  int at_initial, holosim_statespace *ss, holosim_error *err);
HOLOSIM_API void holosim_statespace_free(holosim_statespace *ss);

#ifdef __cplusplus
}
#endif

#endif
