/* Private to src/cli: what the command files share.
 *
 *   main.c     dispatch to the commands, --help, --version
 *   opts.c     the option table of run/check/derive/columns and its
 *              parser (GNU conventions: options anywhere, -- ends them,
 *              bundled short flags, --opt=value, "did you mean")
 *   run.c      `run`: load, integrate, the summary
 *   check.c    `check`: load and the consistency report
 *   exprcmd.c  `derive` (a model's kernels, or --wrt of one expression)
 *              and `eval`
 *   columns.c  `columns`: every column a run of the model can write
 *   batch.c    `batch`: many points of a grid in one process (scripts/sweep)
 *   analysis.c `equilibrium` and `modes` (src/analysis)
 *   animate.c  `animate`: a page, GIF or video of the model's drawing
 *   flow.c     `floquet` and `lyapunov`: stability of a motion (src/flow)
 *   files.c    every output path against every input path, in one place
 *
 * Only main and the commands print; everything below returns hs_error
 * values. */
#ifndef HS_CLI_H
#define HS_CLI_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>

#include "../model/model.h"
#include "params.h"
#include "../native/native.h"
#include "../io/summary.h"
#include "../util/error.h"

extern const char hs_usage_main[], hs_usage_run[], hs_usage_check[], hs_usage_derive[],
    hs_usage_eval[], hs_usage_columns[], hs_usage_batch[], hs_usage_equilibrium[],
    hs_usage_modes[], hs_usage_animate[];
extern const char hs_usage_floquet[], hs_usage_lyapunov[], hs_usage_linearize[];

/* Which commands accept an option. */
enum { CMD_RUN = 1, CMD_CHECK = 2, CMD_DERIVE = 4, CMD_COLUMNS = 8, CMD_EVAL = 16,
       CMD_BATCH = 32, CMD_EQUILIBRIUM = 64, CMD_MODES = 128, CMD_ANIMATE = 256,
       CMD_FLOQUET = 1 << 12, CMD_LYAPUNOV = 1 << 13, CMD_LINEARIZE = 1 << 14 };

typedef struct opts {
    hs_overrides ov;
    hs_params params;        /* --set and --params, in command-line order */
    const char *model, *output, *columns, *summary, *wrt;
    const char *events;      /* run: --events FILE */
    const char **stop_when;  /* [argc] --stop-when, in order (o->ov points here) */
    const char *points, *outdir, *statusdir;   /* batch */
    long jobs;                                 /* batch: worker processes */
    int precision, progress, quiet, quiet_projection;
    int csv, linearize;      /* equilibrium, modes */
    size_t count;            /* modes --count K (0: all, or the sparse default) */
    int linalg;              /* equilibrium, modes --linalg: an hs_an_path */
    hs_native_policy native; /* run, batch: --native (default auto) */
    const char *fps, *size, *frames, *speed, *trail, *plot;  /* animate */
    const char *period, *every;  /* floquet --period, lyapunov --every (checked there) */
    int spectrum;            /* lyapunov --spectrum */
    int find;                /* floquet --find */
    const char *sensitivity; /* run --sensitivity p1,p2,... (sens.c) */
    const char *final;       /* run, batch --final COL,...: summary fields (run.c) */
    char **input_name, **input_text;  /* [argc] --input NAME=SRC (o->ov points here) */
    size_t ninput;
    const char *lin_inputs, *lin_outputs, *lin_at, *bode;   /* linearize */
    const char **pos;        /* positional arguments after the first */
    size_t npos;
    struct hs_cli_optfile {  /* [nfiles] every file option, in order (files.c) */
        const char *what, *path;
        int out;             /* written (else read); "-": stdout (stdin) */
    } *files;
    size_t nfiles;
} opts;

/* Parse the options of a command (CMD_*) whose usage text is cmd_usage:
 * options and operands in any order (the first operand is o->model, the
 * others o->pos), `--` ends the options.  Returns 0; -1 after printing the
 * help (exit 0); or an exit code after printing the usage error.
 * hs_cli_free_opts in every case. */
int hs_cli_parse_opts(int argc, char **argv, const char *cmd_usage, unsigned cmd, opts *o);
void hs_cli_free_opts(opts *o);

/* The opening the commands share, in steps:
 *   hs_cli_begin      parse the options: 0 to go on; else -1 with *rc the
 *                     exit code (0 after the help)
 *   hs_cli_one_model  exactly one MODEL operand: 0; else -1 with *rc = 1
 *                     ("NAME: expected one MODEL (missing MODEL)")
 *   hs_cli_load       load it (with the --set/--params overrides): the
 *                     model; else NULL with the error printed, *rc its code
 *   hs_cli_open       the three: the model with *o filled (free both), or
 *                     NULL with *rc the exit code
 *   hs_cli_model      the same for a command that needs only the model
 *   hs_cli_check_method  the model's method can run it (run, check): 0;
 *                     else -1 with the error printed, m freed, *rc its code
 * On failure o is freed. */
int hs_cli_begin(int argc, char **argv, const char *usage, unsigned cmd, opts *o, int *rc);
int hs_cli_one_model(opts *o, const char *usage, const char *name, int *rc);
hs_model *hs_cli_load(opts *o, int *rc);
hs_model *hs_cli_open(int argc, char **argv, const char *usage, unsigned cmd, const char *name,
                      opts *o, int *rc);
hs_model *hs_cli_model(int argc, char **argv, const char *usage, unsigned cmd, const char *name,
                       int *rc);
int hs_cli_check_method(hs_model *m, int *rc);

/* The files of a command compared in one place (files.c): no output is
 * an input or another output, after resolving links, "-" and ./x.
 *   hs_cli_files_new      the model and every input option of o (NULL: out
 *                         of memory)
 *   hs_cli_files_add      one more file the command reads or writes (a
 *                         CSV operand, standard output); 0 or -1 (memory)
 *   hs_cli_files_check    with the output options of o: 0, or the exit
 *                         code after saying which two coincide
 *   hs_cli_files_check_one  one of many outputs (a batch point's CSV)
 *                         against every file of the set, nothing kept
 *   hs_cli_check_files    the whole, with at most one more input and one
 *                         more output (NULL: none)
 * hs_cli_canon_path: the canonical name of a path that may not exist yet
 * (malloc'd; NULL with errno). */
typedef struct hs_cli_files hs_cli_files;
hs_cli_files *hs_cli_files_new(const opts *o);
int hs_cli_files_add(hs_cli_files *F, const char *what, const char *path, int out);
int hs_cli_files_check(hs_cli_files *F, const opts *o);
int hs_cli_files_check_one(const hs_cli_files *F, const char *what, const char *path);
void hs_cli_files_free(hs_cli_files *F);
int hs_cli_check_files(const opts *o, const char *what_in, const char *in,
                       const char *what_out, const char *out);
char *hs_cli_canon_path(const char *path);

/* Print an error (the position and caret when it has one); its exit code. */
int hs_cli_fail(const hs_error *e);
/* "holosim: error: out of memory"; HS_EXIT_NOMEM. */
int hs_cli_nomem(void);
/* One line saying what is wrong, one saying where help is; exit code 1. */
int hs_cli_usage_error(const char *cmd_usage, const char *fmt, const char *arg);
/* A finite number and nothing else; 0 or -1. */
int hs_cli_parse_double(const char *s, double *out);

/* Non-zero once SIGINT, SIGTERM or SIGHUP asks a run to stop (run: the
 * signal's number). */
extern volatile sig_atomic_t hs_cli_interrupted;
/* SIGINT, SIGTERM and SIGHUP (unless ignored) set hs_cli_interrupted; a
 * second one half a second later takes the default action (run.c). */
void hs_cli_catch_signals(void);

/* Native kernels for a run of the model (--native, default auto): the
 * handle, or NULL for the VM; a note worth telling goes to stderr unless
 * quiet.  runs: how many runs of it the caller makes (batch points). */
struct hs_native *hs_cli_native(const hs_model *m, const opts *o, double runs);

/* Run a loaded model (run's options o: native kernels, signals, the
 * summary and events files) with its CSV to path, or to out when path is
 * NULL, in the given columns; the exit code, the error printed. */
int hs_cli_run_model(hs_model *m, const opts *o, const char *path, FILE *out,
                     const char *columns);
struct hs_sink;
struct hs_sink_fn;
/* The same with the rows to sink (taken: closed here, its failure "cannot
 * write the CSV") and the events, when spy is not NULL, to spy as well
 * (taken likewise; the events file of --events goes on behind it). */
int hs_cli_run_model_to(hs_model *m, const opts *o, struct hs_sink *sink,
                        struct hs_sink_fn *spy, const char *columns);

/* --final (final.c): the columns named, their places in a row and their
 * values in the last row written. */
typedef struct hs_cli_final {
    size_t n;
    size_t *idx;               /* [n] places in a row */
    const char **name;         /* [n] names (copies) */
    double *val;               /* [n] values in the last row written */
    int have;                  /* a row was written */
} hs_cli_final;
struct hs_summary;
struct hs_sink;
/* o->final looked up among the ncol names col; none: F empty.  0, or the exit code with err set. */
int hs_cli_final_init(hs_cli_final *F, const opts *o, const char *const *col, size_t ncol,
                      hs_error *err);
/* The same among the columns a run of m writes (columns: --columns). */
int hs_cli_final_columns(hs_cli_final *F, const opts *o, const hs_model *m,
                         const char *columns, hs_error *err);
/* run --summary FILE: the header and the record r (its model and message
 * set here: the message the error's, or stop when rc is 0); 0 or 1 after
 * a message (final.c). */
int hs_cli_summary_file(const char *path, hs_sumrow *r, const hs_model *m, int rc,
                        const hs_error *err, const char *stop);
void hs_cli_final_free(hs_cli_final *F);
/* A row's values x: the finals kept. */
void hs_cli_final_keep(hs_cli_final *F, const double *x);
/* inner wrapped in a sink that keeps the finals of each row written
 * (inner itself when none are named; NULL, inner closed: out of memory). */
struct hs_sink *hs_cli_final_sink(struct hs_sink *inner, hs_cli_final *F);
/* The summary record of a run: exit rc, the integrator's summary s, the
 * finals F (NULL: none). */
void hs_cli_sumrow(hs_sumrow *r, const struct hs_summary *s, int rc, const hs_cli_final *F);

int hs_cli_run(int argc, char **argv);
int hs_cli_check(int argc, char **argv);
int hs_cli_derive(int argc, char **argv);
int hs_cli_eval(int argc, char **argv);
int hs_cli_columns(int argc, char **argv);
/* run --sensitivity on a model loaded dense: the CSV to path (NULL:
 * stdout), the summary to o->summary; the exit code, the error printed
 * (sens.c). */
int hs_cli_run_sens(hs_model *m, const opts *o, const char *path);
/* The same for a point of batch: the CSV to path, the summary's record
 * into r (finals in F, which the record points to), nothing printed but
 * the notes o->quiet silences; the exit code with err set. */
int hs_cli_sens_point(hs_model *m, const opts *o, const char *path, hs_cli_final *F,
                      hs_sumrow *r, hs_error *err);
/* --final's columns among those of run --sensitivity on m (nothing
 * runs): 0, or the exit code with err set (an unknown column: 2). */
int hs_cli_sens_finals(const hs_model *m, const opts *o, hs_error *err);
int hs_cli_batch(int argc, char **argv);
int hs_cli_equilibrium(int argc, char **argv);
int hs_cli_modes(int argc, char **argv);
int hs_cli_animate(int argc, char **argv);
int hs_cli_floquet(int argc, char **argv);
/* Native kernels for the variational system f (and the sensitivities s,
 * when not NULL) under --native, as hs_cli_native for a run: f and s
 * evaluate through them (hs_fl_use_native) until the handle returned is
 * freed after them; NULL: the VM (flow.c). */
struct hs_fl;
struct hs_fl_sens;
struct hs_native *hs_cli_flow_native(const opts *o, struct hs_fl *f, struct hs_fl_sens *s);
int hs_cli_lyapunov(int argc, char **argv);
int hs_cli_linearize(int argc, char **argv);

/* linearize's files (ssfile.c): the kind of -o FILE by its extension ('M'
 * .mat, 'p' .py, 'm' .m, 'c' .csv; 0 none of them), and the file written
 * (0, or 1 after printing why it could not be). */
struct hs_statespace;
int hs_cli_ss_kind(const char *path);
int hs_cli_ss_write(const char *path, const struct hs_statespace *ss, const char *model);

/* The command line's option names for the core's messages (opts.c). */
extern const hs_optnames hs_cli_optnames;

/* mp4.c: whether ffmpeg is on the PATH; the frames of A from t0 to t1
 * (nframes, fps) written as an mp4 at tmp through ffmpeg (0, or -1: a
 * failed start or write, an interrupt). */
struct hs_anim;
int hs_cli_have_ffmpeg(void);
int hs_cli_write_mp4(const struct hs_anim *A, const char *tmp, size_t nframes, double t0,
                     double t1, double fps);

#endif
