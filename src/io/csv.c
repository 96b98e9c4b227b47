/* The CSV sink (sink.h) over the buffered writer (out.h). */
#include "sink.h"
#include "out.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct csv {
    hs_sink base;
    hs_out o;
    int events;
} csv;

static void sync_rows(csv *c)
{
    c->base.rows = c->o.rows;
    c->base.failed = c->o.failed;
    c->base.err_no = c->o.err_no;
}

static void header(hs_sink *s, const hs_columns *cs)
{
    csv *c = (csv *)s;
    if (c->events)
        hs_out_str(&c->o, cs->n ? "event," : "event");
    for (size_t i = 0; i < cs->n; i++) {
        if (i)
            hs_out_char(&c->o, ',');
        hs_out_str(&c->o, cs->c[i].name);
    }
    hs_out_char(&c->o, '\n');
    sync_rows(c);
}

/* A field of text: as it is, or in double quotes (a quote doubled) when it
 * holds a comma, a quote or a line break. */
static void text_field(hs_out *o, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        hs_out_str(o, s);
        return;
    }
    hs_out_char(o, '"');
    for (; *s; s++) {
        if (*s == '"')
            hs_out_char(o, '"');
        hs_out_char(o, *s);
    }
    hs_out_char(o, '"');
}

static void put_row(csv *c, const char *event, const double *x, size_t n)
{
    hs_out *o = &c->o;
    hs_out_row_begin(o);
    if (event) {
        text_field(o, event);
        if (n)
            hs_out_char(o, ',');
    }
    for (size_t i = 0; i < n; i++) {
        if (i)
            hs_out_char(o, ',');
        hs_out_num(o, x[i]);
    }
    hs_out_char(o, '\n');
    hs_out_row_end(o);
    sync_rows(c);
}

static void row(hs_sink *s, const double *x, size_t n) { put_row((csv *)s, NULL, x, n); }

static void event_row(hs_sink *s, const char *event, const double *x, size_t n)
{
    put_row((csv *)s, event, x, n);
}

static int close_csv(hs_sink *s, int publish)
{
    csv *c = (csv *)s;
    if (publish)
        hs_out_ungate(&c->o);
    int e = hs_out_flush(&c->o) ? c->o.err_no : 0;
    hs_out_free(&c->o);
    free(c);
    return e;
}

static const hs_sink_type csv_type = {
    .name = "csv",
    .header = header,
    .row = row,
    .event_row = event_row,
    .close = close_csv,
};

hs_sink *hs_csv_open(const hs_sink_args *a, hs_error *err)
{
    csv *c = calloc(1, sizeof *c);
    if (!c || hs_out_init(&c->o, a->f, a->precision)) {
        free(c);
        hs_error_nomem(err);
        return NULL;
    }
    hs_out_start_at_first_row(&c->o, a->path);
    c->base.type = &csv_type;
    c->base.tty = a->f && isatty(fileno(a->f));
    c->events = a->events;
    return &c->base;
}
