/* The table of output formats (sink.h). */
#include "sink.h"

#include <string.h>

const hs_sink_format hs_sink_formats[] = {
    { "csv", hs_csv_open },
    { NULL, NULL },
};

hs_sink *hs_sink_open(const char *format, FILE *f, const char *path, int precision,
                      int events, int *unknown)
{
    *unknown = 0;
    for (const hs_sink_format *k = hs_sink_formats; k->name; k++)
        if (strcmp(k->name, format ? format : "csv") == 0)
            return k->open(f, path, precision, events);
    *unknown = 1;
    return NULL;
}
