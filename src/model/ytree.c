/* YAML document loading and positioned errors for the model loader. */
#include "ytree.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE_BYTES ((size_t)64 << 20) /* a model larger than this is refused */

static int read_all(FILE *f, char **out, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return -1;
    for (;;) {
        if (n + 1 >= cap) {
            if (cap >= MAX_FILE_BYTES) {
                free(buf);
                return -2;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return -1;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(buf);
        return -3;
    }
    buf[n] = '\0';
    *out = buf;
    *len = n;
    return 0;
}

void hs_ytree_place(const hs_ytree *y, hs_error *err, int line, int col)
{
    snprintf(err->file, sizeof err->file, "%s", y->file);
    err->line = line;
    err->column = col;
    /* copy the source line */
    const char *p = y->text;
    for (int l = 1; l < line && p; l++) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    size_t n = 0;
    if (p)
        while (p[n] && p[n] != '\n' && p[n] != '\r' && n + 1 < sizeof err->source)
            n++;
    if (p)
        memcpy(err->source, p, n);
    err->source[n] = '\0';
}

static void index_pos(const hs_ytree *y, size_t idx, int *line, int *col)
{
    int l = 1;
    size_t start = 0;
    if (idx > y->len)
        idx = y->len;
    for (size_t i = 0; i < idx; i++)
        if (y->text[i] == '\n') {
            l++;
            start = i + 1;
        }
    *line = l;
    *col = (int)(idx - start) + 1;
}

/* libyaml's time grows quadratically with the nesting of flow collections
 * ([ and {): refuse absurd nesting before handing it the text. */
#define MAX_FLOW_DEPTH 256

static int check_nesting(hs_ytree *y, hs_error *err)
{
    int depth = 0;
    char quote = 0;
    for (size_t i = 0; i < y->len; i++) {
        char c = y->text[i];
        if (quote) {
            if (c == quote)
                quote = 0;
            else if (c == '\\' && quote == '"')
                i++;
            continue;
        }
        if (c == '#' && (i == 0 || y->text[i - 1] == ' ' || y->text[i - 1] == '\n')) {
            while (i < y->len && y->text[i] != '\n')
                i++;
        } else if (c == '"' || c == '\'') {
            if (i == 0 || strchr(" :-[{,\n", y->text[i - 1]))
                quote = c;
        } else if (c == '[' || c == '{') {
            if (++depth > MAX_FLOW_DEPTH) {
                int line, col;
                index_pos(y, i, &line, &col);
                hs_error_set(err, HS_EXIT_MODEL, "YAML nested too deeply (more than %d "
                             "levels of [ or {)", MAX_FLOW_DEPTH);
                hs_ytree_place(y, err, line, col);
                return HS_EXIT_MODEL;
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            depth--;
        } else if (c == '\n' && depth == 0) {
            quote = 0;
        }
    }
    return 0;
}

static int load_parser(hs_ytree *y, hs_error *err)
{
    if (check_nesting(y, err))
        return err->code;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return hs_error_set(err, HS_EXIT_MODEL, "out of memory");
    yaml_parser_set_input_string(&p, (const unsigned char *)y->text, y->len);
    int rc = 0;
    if (!yaml_parser_load(&p, &y->doc)) {
        hs_error_set(err, HS_EXIT_MODEL, "YAML: %s%s%s",
                     p.problem ? p.problem : "syntax error",
                     p.context ? " " : "", p.context ? p.context : "");
        int line, col;
        if (p.error == YAML_READER_ERROR) {       /* bad bytes: only an offset */
            size_t off = p.problem_offset;
            /* a broken multi-byte sequence: show its first byte */
            const unsigned char *u = (const unsigned char *)y->text;
            while (off > 0 && off <= y->len && (u[off - 1] & 0xC0) == 0x80)
                off--;
            if (off > 0 && off <= y->len && u[off - 1] >= 0xC0 &&
                (off == y->len || (u[off] & 0xC0) != 0x80 || u[off] < 0x80))
                off--;
            index_pos(y, off, &line, &col);
        } else if (p.context && p.problem_mark.index >= y->len) {
            /* ran into the end of the file: show where the construct began */
            line = (int)p.context_mark.line + 1;
            col = (int)p.context_mark.column + 1;
        } else {
            line = (int)p.problem_mark.line + 1;
            col = (int)p.problem_mark.column + 1;
        }
        hs_ytree_place(y, err, line, col);
        yaml_parser_delete(&p);
        return HS_EXIT_MODEL;
    }
    y->loaded = 1;
    if (!yaml_document_get_root_node(&y->doc)) {
        rc = hs_error_set(err, HS_EXIT_MODEL, "%s: empty model file", y->file);
    } else {
        yaml_document_t second;
        if (!yaml_parser_load(&p, &second)) {
            yaml_mark_t m = p.problem_mark;
            rc = hs_error_set(err, HS_EXIT_MODEL, "YAML: %s",
                              p.problem ? p.problem : "syntax error");
            hs_ytree_place(y, err, (int)m.line + 1, (int)m.column + 1);
        } else {
            yaml_node_t *r2 = yaml_document_get_root_node(&second);
            if (r2) {
                rc = hs_error_set(err, HS_EXIT_MODEL,
                                  "several YAML documents in one model file; "
                                  "a model is one document");
                hs_ytree_place(y, err, (int)r2->start_mark.line + 1,
                               (int)r2->start_mark.column + 1);
            }
            yaml_document_delete(&second);
        }
    }
    yaml_parser_delete(&p);
    return rc;
}

int hs_ytree_load_string(hs_ytree *y, const char *name, const char *text,
                         size_t len, hs_error *err)
{
    memset(y, 0, sizeof *y);
    y->file = name;
    y->text = malloc(len + 1);
    if (!y->text)
        return hs_error_set(err, HS_EXIT_MODEL, "out of memory");
    memcpy(y->text, text, len);
    y->text[len] = '\0';
    y->len = len;
    return load_parser(y, err);
}

int hs_ytree_load(hs_ytree *y, const char *path, hs_error *err)
{
    memset(y, 0, sizeof *y);
    int is_stdin = strcmp(path, "-") == 0;
    y->file = is_stdin ? "<stdin>" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f)
        return hs_error_set(err, HS_EXIT_MODEL, "cannot open model file '%s': %s",
                            path, strerror(errno));
    int rc = read_all(f, &y->text, &y->len);
    if (!is_stdin)
        fclose(f);
    if (rc == -2)
        return hs_error_set(err, HS_EXIT_MODEL, "%s: model file larger than %zu MiB",
                            y->file, MAX_FILE_BYTES >> 20);
    if (rc)
        return hs_error_set(err, HS_EXIT_MODEL, "cannot read model file '%s'", path);
    if (memchr(y->text, '\0', y->len))
        return hs_error_set(err, HS_EXIT_MODEL, "%s: model file contains a NUL byte "
                            "(is it a binary file?)", y->file);
    return load_parser(y, err);
}

void hs_ytree_free(hs_ytree *y)
{
    if (!y)
        return;
    if (y->loaded)
        yaml_document_delete(&y->doc);
    free(y->text);
    memset(y, 0, sizeof *y);
}

yaml_node_t *hs_ytree_root(hs_ytree *y)
{
    return yaml_document_get_root_node(&y->doc);
}

yaml_node_t *hs_ytree_node(hs_ytree *y, int id)
{
    return yaml_document_get_node(&y->doc, id);
}

void hs_ytree_scalar_pos(const hs_ytree *y, const yaml_node_t *n, size_t off,
                         int *line, int *col)
{
    size_t j = n->start_mark.index, end = n->end_mark.index;
    const char *v = (const char *)n->data.scalar.value;
    size_t vlen = n->data.scalar.length;
    if (end > y->len)
        end = y->len;
    if (off > vlen)
        off = vlen;
    switch (n->data.scalar.style) {
    case YAML_SINGLE_QUOTED_SCALAR_STYLE:
    case YAML_DOUBLE_QUOTED_SCALAR_STYLE:
        j++;
        break;
    case YAML_LITERAL_SCALAR_STYLE:
    case YAML_FOLDED_SCALAR_STYLE:
        while (j < end && y->text[j] != '\n') /* skip the | or > header */
            j++;
        break;
    default:
        break;
    }
    if (n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE) {
        /* decode escapes: \t is one value byte, \x41 one, \u00e9 two ... */
        size_t i = 0;
        while (i < off && j < end) {
            const char *t = y->text;
            if (t[j] == '\\' && j + 1 < end) {
                char e = t[j + 1];
                if (e == '\n' || e == '\r') {            /* line continuation */
                    j += 2;
                    while (j < end && (t[j] == ' ' || t[j] == '\t' || t[j] == '\n'))
                        j++;
                    continue;
                }
                size_t len = e == 'x' ? 4 : e == 'u' ? 6 : e == 'U' ? 10 : 2;
                unsigned long cp = 0;
                if (len > 2 && j + len <= end) {
                    char hex[9] = { 0 };
                    memcpy(hex, t + j + 2, len - 2);
                    cp = strtoul(hex, NULL, 16);
                }
                size_t produced = len == 2 ? (e == 'N' || e == '_' ? 2 : e == 'L' || e == 'P' ? 3 : 1)
                                : cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
                i += produced;
                j += len;
            } else if (t[j] == '\n') {                     /* folded: one space */
                i++;
                j++;
                while (j < end && (t[j] == ' ' || t[j] == '\t'))
                    j++;
            } else {
                i++;
                j++;
            }
        }
        index_pos(y, j, line, col);
        return;
    }
    /* Walk value and source together: the source may hold extra quotes,
     * indentation and line breaks that the value lacks. */
    size_t start = j;
    size_t i = 0;
    for (; i <= off && i < vlen; i++) {
        size_t k = j;
        while (k < end && y->text[k] != v[i])
            k++;
        if (k >= end) { /* lost track (escape sequence): fall back */
            j = start + off;
            break;
        }
        if (i == off) {
            j = k;
            break;
        }
        j = k + 1;
    }
    index_pos(y, j, line, col);
}

static int verror(const hs_ytree *y, hs_error *err, int line, int col,
                  const char *fmt, va_list ap)
{
    if (err->code)
        return err->code;
    char msg[sizeof err->msg];
    vsnprintf(msg, sizeof msg, fmt, ap);
    hs_error_set(err, HS_EXIT_MODEL, "%s", msg);
    hs_ytree_place(y, err, line, col);
    return err->code;
}

int hs_ytree_error(const hs_ytree *y, hs_error *err, const yaml_node_t *n,
                   const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = verror(y, err, n ? (int)n->start_mark.line + 1 : 1,
                    n ? (int)n->start_mark.column + 1 : 1, fmt, ap);
    va_end(ap);
    return rc;
}

int hs_ytree_error_in(const hs_ytree *y, hs_error *err, const yaml_node_t *n,
                      size_t off, const char *fmt, ...)
{
    int line, col;
    hs_ytree_scalar_pos(y, n, off, &line, &col);
    va_list ap;
    va_start(ap, fmt);
    int rc = verror(y, err, line, col, fmt, ap);
    va_end(ap);
    return rc;
}

const char *hs_ytree_str(const yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

const char *hs_ytree_kind(const yaml_node_t *n)
{
    if (!n)
        return "nothing";
    switch (n->type) {
    case YAML_MAPPING_NODE: return "a mapping";
    case YAML_SEQUENCE_NODE: return "a list";
    case YAML_SCALAR_NODE: return "a scalar";
    default: return "nothing";
    }
}

int hs_ytree_number(const hs_ytree *y, const yaml_node_t *n, double *out,
                    hs_error *err)
{
    const char *s = hs_ytree_str(n);
    if (!s)
        return hs_ytree_error(y, err, n, "expected a number, found %s", hs_ytree_kind(n));
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    while (*end == ' ' || *end == '\t')
        end++;
    if (end == s || *end)
        return hs_ytree_error(y, err, n, "expected a number, found '%s'", s);
    if (!isfinite(v) || errno == ERANGE)
        if (!isfinite(v))
            return hs_ytree_error(y, err, n, "number out of range or not finite: '%s'", s);
    *out = v;
    return 0;
}
