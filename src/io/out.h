/* Buffered CSV output: large writes, write errors detected (a full disk
 * or /dev/full is an error, not a silent truncation), numbers in %.17g or
 * a chosen precision. */
#ifndef HS_OUT_H
#define HS_OUT_H

#include <stddef.h>
#include <stdio.h>

typedef struct hs_out {
    FILE *f;
    char *buf;
    size_t len, cap;
    int precision;         /* significant digits, 1..17 */
    int failed;            /* a write failed (errno kept in err_no) */
    int err_no;
} hs_out;

int hs_out_init(hs_out *o, FILE *f, int precision);   /* 0 or -1 (memory) */
void hs_out_str(hs_out *o, const char *s);
void hs_out_num(hs_out *o, double x);
void hs_out_char(hs_out *o, char c);
/* Write the buffer out and fflush; returns 0 or -1 (o->failed set). */
int hs_out_flush(hs_out *o);
void hs_out_free(hs_out *o);

#endif
