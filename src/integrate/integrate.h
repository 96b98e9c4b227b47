/* The run: consistent start, gsl_odeiv2 stepping with output rows exactly
 * at t0, t0+dt, ..., t_end, stabilization, failure handling (rows already
 * computed stay written and flushed), and the end-of-run summary. */
#ifndef HS_INTEGRATE_H
#define HS_INTEGRATE_H

#include <signal.h>
#include <stdio.h>

#include "../model/model.h"
#include "../util/error.h"

typedef struct hs_run_opts {
    FILE *out;                     /* CSV destination, or NULL: */
    const char *out_path;          /* opened after the consistency step, so a
                                    * model that fails before its first row
                                    * leaves an existing file untouched */
    const char *columns;           /* --columns list or NULL */
    int precision;                 /* significant digits (17) */
    FILE *report;                  /* consistency report (stderr) or NULL */
    int progress;                  /* progress bar on stderr */
    volatile sig_atomic_t *stop;   /* set by a signal handler: stop, exit 130 */
} hs_run_opts;

typedef struct hs_summary {
    long steps, nrhs, rows;
    double max_G, max_Gdot, max_ebal, max_pres;
    double t_reached, wall;
} hs_summary;

/* Output time i: t0 + i dt rounded to 15 significant digits (rows read
 * 0.3, not 0.30000000000000004). */
double hs_grid_time(double t0, long i, double dt);

/* Run the model; returns 0 or an exit code with err set.  130 when
 * interrupted through opts->stop. */
int hs_run(const hs_model *m, const hs_run_opts *opts, hs_summary *sum, hs_error *err);

#endif
