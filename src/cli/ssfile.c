/* The files `holosim linearize -o FILE` writes, by extension (cli.h):
 * .mat (MAT version 5, written here byte by byte: A, B, C, D as double
 * matrices, states, inputs, outputs as cell arrays of strings), .py
 * (NumPy arrays), .m (Octave/MATLAB), .csv (matrix,row,column,value). */
#include "cli.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/analysis.h"
#include "../io/fmt.h"
#include "../io/table.h"

static const char *num(char *buf, double x)
{
    hs_fmt_double(buf, x == 0 ? 0.0 : x);
    return buf;
}

/* ---------- MAT version 5 ---------- */

typedef struct buf {
    unsigned char *p;
    size_t n, cap;
    int bad;
} buf;

static void put(buf *b, const void *data, size_t len)
{
    if (b->bad)
        return;
    if (b->n + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + len)
            cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            b->bad = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, data, len);
    b->n += len;
}

static void put_u32(buf *b, uint32_t v) { put(b, &v, 4); }
static void put_i32(buf *b, int32_t v) { put(b, &v, 4); }

static void pad8(buf *b)
{
    static const unsigned char zero[8] = { 0 };
    if (b->n % 8)
        put(b, zero, 8 - b->n % 8);
}

enum { MI_INT8 = 1, MI_UINT16 = 4, MI_INT32 = 5, MI_UINT32 = 6, MI_DOUBLE = 9,
       MI_MATRIX = 14 };
enum { MX_CELL = 1, MX_CHAR = 4, MX_DOUBLE = 6 };

/* A miMATRIX element's opening: its tag (size patched by close_matrix),
 * flags, dimensions and name; returns where the size goes. */
static size_t open_matrix(buf *b, int cls, size_t rows, size_t cols, const char *name)
{
    put_u32(b, MI_MATRIX);
    size_t at = b->n;
    put_u32(b, 0);
    put_u32(b, MI_UINT32);
    put_u32(b, 8);
    put_u32(b, (uint32_t)cls);
    put_u32(b, 0);
    put_u32(b, MI_INT32);
    put_u32(b, 8);
    put_i32(b, (int32_t)rows);
    put_i32(b, (int32_t)cols);
    size_t len = strlen(name);
    put_u32(b, MI_INT8);
    put_u32(b, (uint32_t)len);
    put(b, name, len);
    pad8(b);
    return at;
}

static void close_matrix(buf *b, size_t at)
{
    if (b->bad)
        return;
    uint32_t size = (uint32_t)(b->n - at - 4);
    memcpy(b->p + at, &size, 4);
}

/* X (rows x cols, row-major) as a double matrix (column-major). */
static void mat_double(buf *b, const char *name, const double *X, size_t rows, size_t cols)
{
    size_t at = open_matrix(b, MX_DOUBLE, rows, cols, name);
    put_u32(b, MI_DOUBLE);
    put_u32(b, (uint32_t)(rows * cols * 8));
    for (size_t c = 0; c < cols; c++)
        for (size_t r = 0; r < rows; r++)
            put(b, &X[r * cols + c], 8);
    close_matrix(b, at);
}

static void mat_string(buf *b, const char *name, const char *s)
{
    size_t len = strlen(s);
    size_t at = open_matrix(b, MX_CHAR, 1, len, name);
    put_u32(b, MI_UINT16);
    put_u32(b, (uint32_t)(2 * len));
    for (size_t i = 0; i < len; i++) {
        uint16_t ch = (unsigned char)s[i];
        put(b, &ch, 2);
    }
    pad8(b);
    close_matrix(b, at);
}

static void mat_cell(buf *b, const char *name, char *const *s, size_t n)
{
    size_t at = open_matrix(b, MX_CELL, 1, n, name);
    for (size_t i = 0; i < n; i++)
        mat_string(b, "", s[i]);
    close_matrix(b, at);
}

static int write_mat(FILE *f, const hs_statespace *ss, const char *model)
{
    buf b = { NULL, 0, 0, 0 };
    char head[128];
    memset(head, ' ', 116);
    int len = snprintf(head, 117, "MATLAB 5.0 MAT-file, written by holosim linearize %s: "
                       "dx/dt = A x + B u, y = C x + D u", model);
    if (len >= 0 && len < 116)
        head[len] = ' ';
    memset(head + 116, 0, 8);
    uint16_t version = 0x0100;
    memcpy(head + 124, &version, 2);
    head[126] = 'I';
    head[127] = 'M';
    put(&b, head, 128);
    mat_double(&b, "A", ss->A, ss->nx, ss->nx);
    mat_double(&b, "B", ss->B, ss->nx, ss->nu);
    mat_double(&b, "C", ss->C, ss->ny, ss->nx);
    mat_double(&b, "D", ss->D, ss->ny, ss->nu);
    mat_cell(&b, "states", ss->xname, ss->nx);
    mat_cell(&b, "inputs", ss->uname, ss->nu);
    mat_cell(&b, "outputs", ss->yname, ss->ny);
    int rc = b.bad ? -2 : fwrite(b.p, 1, b.n, f) == b.n ? 0 : -1;
    free(b.p);
    return rc;
}

/* ---------- text formats ---------- */

static void names_list(FILE *f, const char *open, const char *close, char *const *s, size_t n,
                       int matlab)
{
    fputs(open, f);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ", " : "", f);
        if (matlab) {                  /* 'x''' : a quote doubled */
            fputc('\'', f);
            for (const char *p = s[i]; *p; p++)
                if (*p == '\'')
                    fputs("''", f);
                else
                    fputc(*p, f);
            fputc('\'', f);
        } else {
            fprintf(f, "\"%s\"", s[i]);
        }
    }
    fputs(close, f);
}

static void py_matrix(FILE *f, const char *name, const double *X, size_t r, size_t c)
{
    char b[32];
    fprintf(f, "%s = np.array([", name);
    for (size_t i = 0; i < r * c; i++)
        fprintf(f, "%s%s", i ? ", " : "", num(b, X[i]));
    fprintf(f, "], dtype=float).reshape(%zu, %zu)\n", r, c);
}

static void m_matrix(FILE *f, const char *name, const double *X, size_t r, size_t c)
{
    char b[32];
    if (!r || !c) {
        fprintf(f, "%s = zeros(%zu, %zu);\n", name, r, c);
        return;
    }
    fprintf(f, "%s = [", name);
    for (size_t i = 0; i < r; i++) {
        for (size_t j = 0; j < c; j++)
            fprintf(f, "%s%s", j ? " " : "", num(b, X[i * c + j]));
        fputs(i + 1 < r ? "; " : "", f);
    }
    fputs("];\n", f);
}

static void csv_matrix(FILE *f, const char *name, const double *X, size_t r, size_t c,
                       char *const *rn, char *const *cn)
{
    hs_table t;
    hs_table_init(&t, f, HS_TABLE_SHORTEST);
    for (size_t i = 0; i < r; i++)
        for (size_t j = 0; j < c; j++) {
            hs_table_text(&t, name);
            hs_table_text(&t, rn[i]);
            hs_table_text(&t, cn[j]);
            hs_table_num(&t, X[i * c + j]);
            hs_table_end(&t);
        }
}

static int ends_with(const char *s, const char *ext)
{
    size_t n = strlen(s), e = strlen(ext);
    return n > e && strcmp(s + n - e, ext) == 0;
}

int hs_cli_ss_kind(const char *path)
{
    return ends_with(path, ".mat") ? 'M' : ends_with(path, ".py") ? 'p'
         : ends_with(path, ".m") ? 'm' : ends_with(path, ".csv") ? 'c' : 0;
}

int hs_cli_ss_write(const char *path, const hs_statespace *ss, const char *model)
{
    int kind = hs_cli_ss_kind(path);
    FILE *f = fopen(path, kind == 'M' ? "wb" : "w");
    if (!f) {
        fprintf(stderr, "holosim: cannot write '%s': %s\n", path, strerror(errno));
        return HS_EXIT_USAGE;
    }
    int bad = 0;
    if (kind == 'M' && (bad = write_mat(f, ss, model)) == -2) {
        fclose(f);
        remove(path);
        return hs_cli_nomem();
    }
    if (kind == 'p') {
        fprintf(f, "# holosim linearize %s: dx/dt = A x + B u, y = C x + D u\n"
                "import numpy as np\n", model);
        names_list(f, "states = [", "]\n", ss->xname, ss->nx, 0);
        names_list(f, "inputs = [", "]\n", ss->uname, ss->nu, 0);
        names_list(f, "outputs = [", "]\n", ss->yname, ss->ny, 0);
        py_matrix(f, "A", ss->A, ss->nx, ss->nx);
        py_matrix(f, "B", ss->B, ss->nx, ss->nu);
        py_matrix(f, "C", ss->C, ss->ny, ss->nx);
        py_matrix(f, "D", ss->D, ss->ny, ss->nu);
    } else if (kind == 'm') {
        fprintf(f, "%% holosim linearize %s: dx/dt = A x + B u, y = C x + D u\n", model);
        names_list(f, "states = {", "};\n", ss->xname, ss->nx, 1);
        names_list(f, "inputs = {", "};\n", ss->uname, ss->nu, 1);
        names_list(f, "outputs = {", "};\n", ss->yname, ss->ny, 1);
        m_matrix(f, "A", ss->A, ss->nx, ss->nx);
        m_matrix(f, "B", ss->B, ss->nx, ss->nu);
        m_matrix(f, "C", ss->C, ss->ny, ss->nx);
        m_matrix(f, "D", ss->D, ss->ny, ss->nu);
    } else if (kind == 'c') {
        hs_table t;
        hs_table_init(&t, f, HS_TABLE_SHORTEST);
        static const char *const head[] = { "matrix", "row", "column", "value" };
        hs_table_header(&t, head, 4);
        csv_matrix(f, "A", ss->A, ss->nx, ss->nx, ss->xname, ss->xname);
        csv_matrix(f, "B", ss->B, ss->nx, ss->nu, ss->xname, ss->uname);
        csv_matrix(f, "C", ss->C, ss->ny, ss->nx, ss->yname, ss->xname);
        csv_matrix(f, "D", ss->D, ss->ny, ss->nu, ss->yname, ss->uname);
    }
    bad |= ferror(f);
    bad |= fclose(f) != 0;
    if (bad) {
        fprintf(stderr, "holosim: cannot write '%s'\n", path);
        return HS_EXIT_USAGE;
    }
    return 0;
}
