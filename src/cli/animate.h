/* Private to `holosim animate` (animate.c: options, the run, the output;
 * animrows.c: the trajectory's rows into frames).  The rows come from a
 * CSV file or from a run in memory; each kept row is evaluated by the
 * drawing's program (model.h, hs_draw_eval) into a frame of hs_anim. */
#ifndef HS_CLI_ANIMATE_H
#define HS_CLI_ANIMATE_H

#include "cli.h"
#include "../io/anim.h"
#include "../io/sink.h"

/* Rows into frames: the values of a row are t, q [n], the plotted
 * columns [A->nplot], in that order (a CSV's are found by name). */
typedef struct anim_rows {
    hs_anim *A;
    const hs_model *m;
    double *in, *regs, *q, *val;   /* the drawing's evaluation */
    long *qcol;            /* [n] index into a row of q_i, or -1 (the CSV has no
                            * column the drawing reads: q0) */
    double *pend;          /* [1 + n + nplot] the run's last row not kept */
    int has_pend;
    int nomem;             /* a frame or an impact could not be kept */
} anim_rows;

/* Ready to take A's rows (A initialized, its plots named); 0, or -1
 * (memory).  hs_cli_anim_rows_free: NULL parts are fine. */
int hs_cli_anim_rows_init(anim_rows *E, hs_anim *A);
void hs_cli_anim_rows_free(anim_rows *E);

/* The frames of the CSV file csv: 0, or an exit code with err set (a
 * field not a number, a missing column...) or, err->code 0, the message
 * printed (the file cannot be read). */
int hs_cli_anim_read_csv(anim_rows *E, const char *csv, hs_error *err);

/* The sinks a run hands its rows (rows) and events (events: each
 * contact's impacts kept, hs_anim_add_impact) to; after the run,
 * hs_cli_anim_rows_end keeps the last row: 0, or an exit code with err
 * set (memory, no row). */
void hs_cli_anim_sinks(anim_rows *E, hs_sink_fn *rows, hs_sink_fn *events);
int hs_cli_anim_rows_end(anim_rows *E, hs_error *err);

/* The CSV's header names the column (the default plot: E when there). */
int hs_cli_csv_has_column(const char *csv, const char *name);

#endif
