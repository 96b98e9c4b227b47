/* The table of output formats (sink.h). */
#include "sink.h"

#include <stdio.h>
#include <string.h>

const hs_sink_format hs_sink_formats[] = {
    { "csv", hs_csv_open },
    { NULL, NULL },
};

hs_sink *hs_sink_open(const char *format, const hs_sink_args *a, hs_error *err)
{
    const char *want = format ? format : hs_sink_formats[0].name;
    for (const hs_sink_format *k = hs_sink_formats; k->name; k++)
        if (strcmp(k->name, want) == 0)
            return k->open(a, err);
    char names[256];
    size_t len = 0;
    names[0] = '\0';
    for (const hs_sink_format *k = hs_sink_formats; k->name && len + 1 < sizeof names; k++)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "",
                                k->name);
    hs_error_set(err, HS_EXIT_USAGE, "unknown output format '%s'; choose one of: %s", want,
                 names);
    return NULL;
}

int hs_sink_finish(hs_sink *s, const char *what, int publish, int rc, hs_error *err)
{
    int e = hs_sink_close(s, publish);
    if (e && !(rc && err->code == HS_EXIT_USAGE)) {
        if (!rc) {
            hs_error_init(err);
            hs_error_set(err, HS_EXIT_USAGE, "cannot write %s: %s", what, strerror(e));
        }
        rc = rc ? rc : HS_EXIT_USAGE;
    }
    return rc;
}

/* ---------- rows handed to the caller (hs_sink_fn) ---------- */

static void fn_header(hs_sink *s, const hs_columns *c)
{
    hs_sink_fn *f = (hs_sink_fn *)s;
    if (f->header)
        f->header(f->ctx, c);
    if (f->next)
        hs_sink_header(f->next, c);
}

static void fn_row(hs_sink *s, const double *x, size_t n)
{
    hs_sink_fn *f = (hs_sink_fn *)s;
    if (f->row)
        f->row(f->ctx, x, n);
    s->rows++;
    if (f->next)
        hs_sink_row(f->next, x, n);
}

static void fn_event_row(hs_sink *s, const char *event, const double *x, size_t n)
{
    hs_sink_fn *f = (hs_sink_fn *)s;
    if (f->event_row)
        f->event_row(f->ctx, event, x, n);
    s->rows++;
    if (f->next)
        hs_sink_event_row(f->next, event, x, n);
}

static int fn_close(hs_sink *s, int publish)
{
    hs_sink_fn *f = (hs_sink_fn *)s;
    hs_sink *next = f->next;
    f->next = NULL;
    return hs_sink_close(next, publish);
}

static const hs_sink_type fn_type = { "rows to the caller", fn_header, fn_row, fn_event_row,
                                      fn_close };

void hs_sink_fn_init(hs_sink_fn *s, void *ctx, void (*header)(void *, const hs_columns *),
                     void (*row)(void *, const double *, size_t),
                     void (*event_row)(void *, const char *, const double *, size_t))
{
    memset(s, 0, sizeof *s);
    s->base.type = &fn_type;
    s->ctx = ctx;
    s->header = header;
    s->row = row;
    s->event_row = event_row;
}
