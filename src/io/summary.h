/* The run summary: one record of named fields, the same for `holosim run
 * --summary FILE` (a header, then the record) and for `holosim batch`'s
 * status lines (the record from `exit` on, no header), which
 * scripts/sweep gathers into summary.csv.  The fields are listed once, in
 * summary.c (name and how each is written); the caller fills an
 * hs_sumrow from the run.  Order (holosim(1), SUMMARY): model, exit, the
 * run's counts and monitors up to wall_s, the contact results (impacts,
 * transitions, t_rest), one final_COL per column named by --final, then
 * message last: a reader by name is not affected by the fields added
 * before message, and a reader by position keeps the first eleven. */
#ifndef HS_SUMMARY_H
#define HS_SUMMARY_H

#include <stddef.h>
#include <stdio.h>

#include "../util/error.h"

typedef struct hs_sumrow {
    const char *model;            /* the model file (a run summary's first field) */
    int exit;                     /* the exit status */
    int integrated;               /* 0: the run never integrated (no step, no row):
                                   * a status leaves the run's fields empty */
    long steps, nrhs, rows;       /* < 0: not known (an empty field) */
    double t_reached, max_G, max_Gdot, max_ebal, max_pres;   /* NaN: not known */
    double wall;                  /* seconds */
    long impacts, transitions;    /* contacts closed by an impact; other contact
                                   * and friction transitions */
    double t_rest;                /* where a contact came to rest (its accumulation
                                   * point); NaN: none (an empty field) */
    size_t nfinal;                /* --final: columns named */
    const char *const *final_name; /* [nfinal] their names (fields final_NAME) */
    const double *final;          /* [nfinal] their values in the last row written;
                                   * NULL: no row (empty fields) */
    const char *message;          /* one line: the error, or the event that stopped
                                   * the run ("" or NULL: none) */
} hs_sumrow;

typedef enum hs_sum_style {
    HS_SUM_FILE,      /* run --summary: model first, every field written, the
                       * message always in quotes */
    HS_SUM_STATUS,    /* batch's status line: from exit on, the run's fields
                       * empty when it never integrated, no message: an
                       * empty field */
} hs_sum_style;

/* A blank record: counts and values not known (empty), exit 0. */
void hs_sumrow_init(hs_sumrow *r);
/* The header line (the names of the fields of style st). */
void hs_summary_header(FILE *f, const hs_sumrow *r, hs_sum_style st);
/* The record, one line. */
void hs_summary_record(FILE *f, const hs_sumrow *r, hs_sum_style st);
/* --final LIST: the comma-separated column names (spaces around a name
 * ignored) looked up among the ncol names the run writes; idx[] (room
 * for as many names as the list has commas + 1) gets their indices,
 * *nfinal their count.  An unknown or repeated name, or an empty list
 * item: HS_EXIT_MODEL with "did you mean" and the columns, the option
 * named through names (HS_OPT_FINAL). */
int hs_summary_finals(const char *list, const char *const *col, size_t ncol,
                      const hs_optnames *names, size_t *idx, size_t *nfinal, hs_error *err);
/* How many names a --final list holds at most (its commas + 1). */
size_t hs_summary_nfinal_max(const char *list);

#endif
