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
