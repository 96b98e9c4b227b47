/* Buffered CSV writer. */
#include "out.h"
#include "fmt.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define OUT_CAP (1 << 16)

int hs_out_init(hs_out *o, FILE *f, int precision)
{
    memset(o, 0, sizeof *o);
    o->f = f;
    o->fd = -2;                   /* not looked at yet */
    o->good = -1;
    o->precision = precision < 1 ? 1 : precision > 17 ? 17 : precision;
    o->cap = OUT_CAP;
    o->buf = malloc(o->cap);
    return o->buf ? 0 : -1;
}

int hs_out_start_at_first_row(hs_out *o, const char *path)
{
    o->gate = 1;
    if (path) {
        o->f = NULL;
        o->path = path;
    }
    return 0;
}

void hs_out_ungate(hs_out *o)
{
    o->gate = 0;
}

static void fail(hs_out *o, int e)
{
    if (!o->failed) {
        o->failed = 1;
        o->err_no = e ? e : EIO;
    }
}

/* The destination, opened now if it waits for the first row: NULL while
 * it may not be written yet (or cannot be opened: o->failed). */
static FILE *dest(hs_out *o)
{
    if (o->gate && o->rows == 0)
        return NULL;
    if (o->f || o->failed || !o->path)
        return o->f;
    errno = 0;
    o->f = fopen(o->path, "w");
    if (!o->f)
        fail(o, errno);
    o->owned = o->f != NULL;
    return o->f;
}

/* The first write: f's descriptor, and where its rows start when it is a
 * regular file (for the cut after a failed write). */
static void attach(hs_out *o, FILE *f)
{
    errno = 0;
    if (fflush(f) != 0) {         /* what others wrote through f goes first */
        fail(o, errno);
        return;
    }
    o->fd = fileno(f);
    struct stat st;
    if (o->fd >= 0 && fstat(o->fd, &st) == 0 && S_ISREG(st.st_mode)) {
        off_t at = lseek(o->fd, 0, SEEK_CUR);
        o->good = at < 0 ? -1 : (long long)at;
    }
}

/* n bytes of complete rows to the destination; after a failed write a
 * regular file is cut back to its last complete row. */
static void put(hs_out *o, FILE *f, const char *p, size_t n)
{
    if (o->fd == -2)
        attach(o, f);
    if (o->failed)
        return;
    if (o->fd < 0) {              /* a stream without a descriptor */
        errno = 0;
        if (fwrite(p, 1, n, f) != n)
            fail(o, errno);
        return;
    }
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(o->fd, p + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            fail(o, w < 0 ? errno : EIO);
            if (o->good >= 0 && ftruncate(o->fd, (off_t)o->good) == 0)
                lseek(o->fd, (off_t)o->good, SEEK_SET);
            return;
        }
        done += (size_t)w;
    }
    if (o->good >= 0)
        o->good += (long long)n;
}

/* Write out everything before the row in progress and keep that row. */
static void drain(hs_out *o)
{
    size_t n = o->in_row ? o->mark : o->len;
    if (n == 0)
        return;
    FILE *f = dest(o);
    if (!f && !o->failed)
        return;                   /* not yet: kept until the first row */
    if (f && !o->failed)
        put(o, f, o->buf, n);
    memmove(o->buf, o->buf + n, o->len - n);
    o->len -= n;
    o->mark = 0;
}

/* Room for n more bytes: write out what may be written, else grow. */
static int reserve(hs_out *o, size_t n)
{
    if (o->len + n <= o->cap)
        return 0;
    drain(o);
    if (o->len + n <= o->cap)
        return 0;
    size_t cap = o->cap;
    while (cap < o->len + n)
        cap *= 2;
    char *b = realloc(o->buf, cap);
    if (!b) {
        fail(o, ENOMEM);
        return -1;
    }
    o->buf = b;
    o->cap = cap;
    return 0;
}

void hs_out_str(hs_out *o, const char *s)
{
    size_t n = strlen(s);
    if (reserve(o, n))
        return;
    memcpy(o->buf + o->len, s, n);
    o->len += n;
}

void hs_out_char(hs_out *o, char c)
{
    if (reserve(o, 1))
        return;
    o->buf[o->len++] = c;
}

/* At full precision the shortest of 15, 16, 17 digits that reads back as
 * x (fmt.c), so 0.03 prints as 0.03 and every value round-trips. */
void hs_out_num(hs_out *o, double x)
{
    if (reserve(o, 32))
        return;
    char *dst = o->buf + o->len;
    int n = 0;
    if (o->precision < 17)
        n = snprintf(dst, 32, "%.*g", o->precision, x == 0 ? 0.0 : x);   /* never -0 */
    else
        n = (int)hs_fmt_double(dst, x);
    if (n > 0 && n < 32)
        o->len += (size_t)n;
}

void hs_out_row_begin(hs_out *o)
{
    o->mark = o->len;
    o->in_row = 1;
}

void hs_out_row_end(hs_out *o)
{
    o->in_row = 0;
    if (++o->rows == 1 && o->path) {
        drain(o);                 /* the file appears with its first row */
        if (o->f && !o->failed && fflush(o->f) != 0)
            fail(o, errno);
    }
}

void hs_out_row_cancel(hs_out *o)
{
    if (o->in_row)
        o->len = o->mark;
    o->in_row = 0;
}

int hs_out_flush(hs_out *o)
{
    drain(o);
    errno = 0;
    if (o->f && !o->failed && (fflush(o->f) != 0 || ferror(o->f)))
        fail(o, errno);
    return o->failed ? -1 : 0;
}

void hs_out_free(hs_out *o)
{
    if (o->owned && o->f)
        fclose(o->f);
    o->f = NULL;
    o->owned = 0;
    free(o->buf);
    o->buf = NULL;
}
