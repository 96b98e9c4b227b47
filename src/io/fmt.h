/* Fast, exact number formatting for the CSV: the shortest of 15, 16 or 17
 * significant digits that reads back (strtod) as the same double, in
 * printf's %g layout.  About 3x faster than snprintf("%.17g") (bench/fmt_bench.c),
 * with snprintf as the fallback for the rare values where the
 * extended-precision check cannot decide. */
#ifndef HS_FMT_H
#define HS_FMT_H

#include <stddef.h>

/* Write x into buf (at least 32 bytes), NUL-terminated; returns the
 * length.  -0 is written as 0. */
size_t hs_fmt_double(char *buf, double x);

#endif
