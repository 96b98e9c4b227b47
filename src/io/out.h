/* Buffered CSV output: large writes, write errors detected (a full disk
 * or /dev/full is an error, not a silent truncation), numbers in %.17g or
 * a chosen precision.
 *
 * Rows are all or nothing: between hs_out_row_begin and hs_out_row_end the
 * row stays in the buffer (the buffer grows rather than write half a row),
 * and hs_out_row_cancel drops it; so the file only ever holds complete
 * lines, whatever stops the run.  After hs_out_start_at_first_row nothing
 * is written before the first row is complete (not even the header), and a
 * file to write is created (or truncated) only then: a run that fails
 * before it leaves an existing file as it was, and a file being tailed
 * keeps its inode (truncated in place, never replaced by a rename).
 *
 * A write that fails (a full disk, the file size limit) ends the output:
 * a regular file is cut back to the end of its last complete row, so a
 * reader never finds half a row.  Rows go to the file descriptor itself
 * (write(2), stdio's buffer flushed first and left empty), so nothing of
 * theirs is left in a buffer to be written after the cut. */
#ifndef HS_OUT_H
#define HS_OUT_H

#include <stddef.h>
#include <stdio.h>

typedef struct hs_out {
    FILE *f;               /* NULL until opened (open_at_first_row) */
    const char *path;      /* the file to open at the first row, or NULL */
    int gate;              /* nothing written before the first row */
    int owned;             /* f was opened here: hs_out_free closes it */
    char *buf;
    size_t len, cap;
    size_t mark;           /* start of the row being written */
    int in_row;
    long rows;             /* complete rows */
    int precision;         /* significant digits, 1..17 */
    int failed;            /* a write failed (errno kept in err_no) */
    int err_no;
    int fd;                /* f's descriptor (-1: none, as a memory stream) */
    long long good;        /* fd's offset after the last complete row written,
                            * -1 when not a seekable file (or not known yet) */
} hs_out;

int hs_out_init(hs_out *o, FILE *f, int precision);   /* 0 or -1 (memory) */
/* Hold everything until the first row ends; then write to f or, when
 * path != NULL, to path opened ("w") only then.  Returns 0. */
int hs_out_start_at_first_row(hs_out *o, const char *path);
/* Lift the wait for a first row: what is held (a header) may be written,
 * the file created, at the next flush (an events file of a run that had
 * no event). */
void hs_out_ungate(hs_out *o);
void hs_out_str(hs_out *o, const char *s);
void hs_out_num(hs_out *o, double x);
void hs_out_char(hs_out *o, char c);
void hs_out_row_begin(hs_out *o);
void hs_out_row_end(hs_out *o);
void hs_out_row_cancel(hs_out *o);   /* drop the row begun */
/* Write the buffer out (all but a row in progress) and fflush; returns 0
 * or -1 (o->failed set).  Before the first row of a start_at_first_row
 * output nothing is written. */
int hs_out_flush(hs_out *o);
/* Free the buffer; close the file when it was opened here. */
void hs_out_free(hs_out *o);

#endif
