/* Small CSV tables written field by field: the analysis commands' --csv
 * (equilibrium, modes, floquet, lyapunov), linearize's Bode rows and CSV
 * file, and the run summary (summary.h).  The rules every such table
 * shares, in one place:
 *   - fields separated by commas, a record ended by a newline;
 *   - text quoted (RFC 4180: in double quotes, a quote doubled) when it
 *     holds a comma, a double quote or a line break, as is; a field that a
 *     reader must always see quoted (a path, a message) is written with
 *     hs_table_quoted;
 *   - numbers in the table's policy: the shortest of 15-17 significant
 *     digits that reads back exactly (HS_TABLE_SHORTEST, the CSV rows'
 *     own) or printf's %.17g (HS_TABLE_G17, the summary's); -0 as 0; a
 *     number that is not finite is an empty field, never inf or nan.
 * Writes go to a stdio FILE; its error indicator reports a failed write. */
#ifndef HS_TABLE_H
#define HS_TABLE_H

#include <stddef.h>
#include <stdio.h>

typedef enum hs_table_numfmt { HS_TABLE_SHORTEST, HS_TABLE_G17 } hs_table_numfmt;

typedef struct hs_table {
    FILE *f;
    hs_table_numfmt numfmt;
    size_t nfield;             /* fields written in the current record */
} hs_table;

void hs_table_init(hs_table *t, FILE *f, hs_table_numfmt numfmt);
/* One field of text, quoted when it needs to be. */
void hs_table_text(hs_table *t, const char *s);
/* One field: the two texts joined (a column name built from a prefix and
 * a model's name: lambda_ + rod), quoted when it needs to be. */
void hs_table_text2(hs_table *t, const char *a, const char *b);
/* One field of text, always in double quotes (a quote inside doubled). */
void hs_table_quoted(hs_table *t, const char *s);
/* A number in the table's policy (not finite: an empty field). */
void hs_table_num(hs_table *t, double x);
/* A number with a fixed count of decimals (seconds: %.6f; not finite:
 * an empty field). */
void hs_table_fixed(hs_table *t, double x, int decimals);
void hs_table_int(hs_table *t, long x);
void hs_table_empty(hs_table *t);
/* End the record (a newline). */
void hs_table_end(hs_table *t);
/* A header: the names, one record. */
void hs_table_header(hs_table *t, const char *const *names, size_t n);

#endif
