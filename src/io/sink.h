/* Where rows go.  A sink is one struct of function pointers and the state
 * behind it, as SQLite's VFS: the integrator computes a row into a vector
 * of doubles (columns.h) and hands it to the sink its caller opened; the
 * caller owns the sink (opens it before the run, closes it after, with
 * hs_sink_finish).  CSV (csv.c) is the first implementation; a new output
 * format is a new file with its own hs_sink_type and constructor, and one
 * entry in the table of formats (sink.c) that hs_sink_open reads
 * (tests/check_io.c runs the contract below over every entry).
 *
 * Contract of every implementation:
 *   - rows are all or nothing: a reader never finds half a row, whatever
 *     stops the run (a failed write cuts a file back to its last complete
 *     row);
 *   - nothing is written, no file created, before the first row (or
 *     before close with publish set): a run that fails early leaves an
 *     existing file as it was;
 *   - the first failed write sets `failed` and `err_no` and ends the
 *     output (later calls write nothing); close reports it. */
#ifndef HS_SINK_H
#define HS_SINK_H

#include <stddef.h>
#include <stdio.h>

#include "columns.h"
#include "../util/error.h"

typedef struct hs_sink hs_sink;

typedef struct hs_sink_type {
    const char *name;
    /* The column names, once, before any row (an events sink: preceded by
     * a column `event`). */
    void (*header)(hs_sink *s, const hs_columns *c);
    /* One row: x[n] (n = the number of columns), all finite. */
    void (*row)(hs_sink *s, const double *x, size_t n);
    /* One row of an events sink: the event's name, then x[n]. */
    void (*event_row)(hs_sink *s, const char *event, const double *x, size_t n);
    /* Write everything out and free the sink (closing what it opened).
     * publish: write what is held even without a row (the header of an
     * events file of a run that had no event).  0, or the errno value of
     * the first failed write. */
    int (*close)(hs_sink *s, int publish);
} hs_sink_type;

struct hs_sink {
    const hs_sink_type *type;
    long rows;             /* complete rows written */
    int failed;            /* a write failed: the output has ended */
    int err_no;            /* errno of that write */
    int tty;               /* it writes to a terminal (no progress line then) */
};

static inline void hs_sink_header(hs_sink *s, const hs_columns *c) { s->type->header(s, c); }
static inline void hs_sink_row(hs_sink *s, const double *x, size_t n) { s->type->row(s, x, n); }
static inline void hs_sink_event_row(hs_sink *s, const char *event, const double *x, size_t n)
{
    s->type->event_row(s, event, x, n);
}
/* NULL is fine (0). */
static inline int hs_sink_close(hs_sink *s, int publish)
{
    return s ? s->type->close(s, publish) : 0;
}

/* What a sink is opened with: where (f, or f NULL and path: the file
 * created at the first row, or at close with publish), the number format
 * (precision: significant digits; 17 the shortest that reads back
 * exactly), whether rows carry an event's name first, and what the rows
 * come from (the model, NULL when unknown: a format that records metadata
 * takes it from there; the column kinds come with header). */
typedef struct hs_sink_args {
    FILE *f;
    const char *path;
    int precision;
    int events;
    const hs_model *model;
} hs_sink_args;

/* A sink's constructor: NULL with err set (out of memory, a bad argument). */
typedef hs_sink *(*hs_sink_open_fn)(const hs_sink_args *a, hs_error *err);

/* The formats (sink.c), NULL-terminated: name and constructor. */
typedef struct hs_sink_format {
    const char *name;
    hs_sink_open_fn open;
} hs_sink_format;
extern const hs_sink_format hs_sink_formats[];

/* Open a sink of the format named (NULL: the first of the table, CSV);
 * NULL with err set: an unknown format (a usage error naming the
 * formats), or what the constructor reports. */
hs_sink *hs_sink_open(const char *format, const hs_sink_args *a, hs_error *err);

/* Close s (NULL: nothing) and report its first failed write as "cannot
 * write WHAT: REASON" (exit 1) unless rc already says the call failed for
 * another reason (a usage error stands; any other keeps its message).
 * Returns the resulting exit code (rc, or 1). */
int hs_sink_finish(hs_sink *s, const char *what, int publish, int rc, hs_error *err);

/* ---- sink.c: rows handed to the caller ---- */

/* A sink with no file and no text: each row (and each event row, when
 * event_row is set) goes to the caller's function as the vector of
 * doubles the run computed, with ctx; header (NULL: none) sees the
 * columns once.  next, when set, gets every call after them (a tee: the
 * events file of --events behind an observer) and is closed with it.
 * The caller owns the struct (embedded or on its stack: close frees
 * nothing).  Not in hs_sink_formats[], whose entries are file formats
 * opened from hs_sink_args; the library's result buffer (src/api) and
 * `holosim animate` (its frames, its impacts) are its users. */
typedef struct hs_sink_fn {
    hs_sink base;
    void *ctx;
    void (*header)(void *ctx, const hs_columns *c);
    void (*row)(void *ctx, const double *x, size_t n);
    void (*event_row)(void *ctx, const char *event, const double *x, size_t n);
    hs_sink *next;
} hs_sink_fn;

/* s as such a sink with those functions (any may be NULL: that call is
 * dropped), next NULL. */
void hs_sink_fn_init(hs_sink_fn *s, void *ctx, void (*header)(void *, const hs_columns *),
                     void (*row)(void *, const double *, size_t),
                     void (*event_row)(void *, const char *, const double *, size_t));

/* ---- csv.c ---- */

/* A CSV sink (RFC 4180: a header line, comma-separated fields, a text
 * field quoted when it holds a comma, a quote or a line break; numbers in
 * the shortest of 15-17 significant digits that reads back exactly, or
 * `precision` digits); the file opened "w".  An hs_sink_open_fn. */
hs_sink *hs_csv_open(const hs_sink_args *a, hs_error *err);

#endif
