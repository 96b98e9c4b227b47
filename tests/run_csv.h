/* A run into FILE*s or a path, as the command line makes one: CSV sinks
 * opened before the run and finished after it (io/sink.h: the caller owns
 * the output).  o's out and events are set here; fe NULL: no events. */
#ifndef HS_TEST_RUN_CSV_H
#define HS_TEST_RUN_CSV_H

#include <stdio.h>

#include "integrate/integrate.h"
#include "io/sink.h"

static inline int run_csv(const hs_model *m, hs_run_opts o, FILE *f, const char *path, FILE *fe,
                          hs_summary *sum, hs_error *err)
{
    int prec = o.precision ? o.precision : 17;
    hs_sink_args sa = { .f = f, .path = path, .precision = prec, .model = m };
    hs_sink_args ea = { .f = fe, .precision = prec, .events = 1, .model = m };
    o.out = hs_sink_open(NULL, &sa, err);
    o.events = o.out && fe ? hs_sink_open(NULL, &ea, err) : NULL;
    int rc = o.out && (!fe || o.events) ? hs_run(m, &o, sum, err) : err->code;
    rc = hs_sink_finish(o.out, "the CSV", 0, rc, err);
    return hs_sink_finish(o.events, "the events CSV", !rc, rc, err);
}

#endif
