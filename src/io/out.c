/* Buffered CSV writer. */
#include "out.h"
#include "fmt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define OUT_CAP (1 << 16)

int hs_out_init(hs_out *o, FILE *f, int precision)
{
    memset(o, 0, sizeof *o);
    o->f = f;
    o->precision = precision < 1 ? 1 : precision > 17 ? 17 : precision;
    o->cap = OUT_CAP;
    o->buf = malloc(o->cap);
    return o->buf ? 0 : -1;
}

static void drain(hs_out *o)
{
    if (o->len && !o->failed) {
        errno = 0;
        if (fwrite(o->buf, 1, o->len, o->f) != o->len) {
            o->failed = 1;
            o->err_no = errno ? errno : EIO;
        }
    }
    o->len = 0;
}

static void reserve(hs_out *o, size_t n)
{
    if (o->len + n > o->cap)
        drain(o);
}

void hs_out_str(hs_out *o, const char *s)
{
    size_t n = strlen(s);
    if (n > o->cap / 2) {
        drain(o);
        if (!o->failed && fwrite(s, 1, n, o->f) != n) {
            o->failed = 1;
            o->err_no = errno ? errno : EIO;
        }
        return;
    }
    reserve(o, n);
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

void hs_out_char(hs_out *o, char c)
{
    reserve(o, 1);
    o->buf[o->len++] = c;
}

/* At full precision the shortest of 15, 16, 17 digits that reads back as
 * x (fmt.c), so 0.03 prints as 0.03 and every value round-trips. */
void hs_out_num(hs_out *o, double x)
{
    reserve(o, 32);
    char *dst = o->buf + o->len;
    int n = 0;
    if (o->precision < 17)
        n = snprintf(dst, 32, "%.*g", o->precision, x == 0 ? 0.0 : x);   /* never -0 */
    else
        n = (int)hs_fmt_double(dst, x);
    if (n > 0 && n < 32)
        o->len += (size_t)n;
}

int hs_out_flush(hs_out *o)
{
    drain(o);
    if (!o->failed && (fflush(o->f) != 0 || ferror(o->f))) {
        o->failed = 1;
        o->err_no = errno ? errno : EIO;
    }
    return o->failed ? -1 : 0;
}

void hs_out_free(hs_out *o)
{
    free(o->buf);
    o->buf = NULL;
}
