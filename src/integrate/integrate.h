/* The run: consistent start, gsl_odeiv2 stepping with output rows exactly
 * at t0, t0+dt, ..., t_end (or interpolated inside the steps),
 * stabilization, failure handling (rows already computed stay written and
 * flushed), the progress line, and the end-of-run summary. */
#ifndef HS_INTEGRATE_H
#define HS_INTEGRATE_H

#include <signal.h>
#include <stdio.h>

#include "../model/model.h"
#include "../native/native.h"
#include "../util/error.h"

typedef struct hs_run_opts {
    FILE *out;                     /* CSV destination, or NULL: */
    const char *out_path;          /* opened after the consistency step, so a
                                    * model that fails before its first row
                                    * leaves an existing file untouched */
    const char *columns;           /* --columns list or NULL */
    int precision;                 /* significant digits (17) */
    FILE *report;                  /* consistency report (stderr) or NULL (quiet) */
    int progress;                  /* HS_PROGRESS_*: the progress line on stderr */
    volatile sig_atomic_t *stop;   /* set by a signal handler: stop, exit 130 */
    const hs_native *native;       /* kernels of prog_dyn, prog_aux, prog_pos,
                                    * prog_out, prog_ev in that order
                                    * (hs_native_load), or NULL: VM */
    FILE *events;                  /* --events: the events CSV, or NULL: */
    const char *events_path;       /* opened at its first row (or at the end of
                                    * a run with none: the header alone) */
    const char *format;            /* output format (io/sink.c), NULL: "csv" */
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
} hs_summary;

/* Output time i: t0 + i dt rounded to 15 significant digits (rows read
 * 0.3, not 0.30000000000000004), exactly as strtod(sprintf("%.15g")) would
 * round it, without formatting. */
double hs_grid_time(double t0, long i, double dt);

/* Run the model; returns 0 or an exit code with err set.  130 when
 * interrupted through opts->stop. */
int hs_run(const hs_model *m, const hs_run_opts *opts, hs_summary *sum, hs_error *err);

#endif
