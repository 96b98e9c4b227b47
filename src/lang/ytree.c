/* YAML document loading and positioned errors for the model loader. */
#include "ytree.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE_BYTES ((size_t)64 << 20) /* a model larger than this is refused */
#define HS_STR_(x) #x
#define HS_STR(x) HS_STR_(x)

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

/* ---------- positions ---------- */

static size_t bom_len(const unsigned char *u, size_t len)
{
    return len >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF ? 3 : 0;
}

/* Bytes of the line break at u[i] as libyaml counts breaks (LF, CR, CR LF,
 * NEL U+0085, LS U+2028, PS U+2029); 0 if there is none. */
static size_t break_len(const unsigned char *u, size_t i, size_t len)
{
    switch (u[i]) {
    case '\n': return 1;
    case '\r': return i + 1 < len && u[i + 1] == '\n' ? 2 : 1;
    case 0xC2: return i + 1 < len && u[i + 1] == 0x85 ? 2 : 0;
    case 0xE2: return i + 2 < len && u[i + 1] == 0x80 &&
                      (u[i + 2] == 0xA8 || u[i + 2] == 0xA9) ? 3 : 0;
    default: return 0;
    }
}

/* Bytes of the UTF-8 character at u[i] by its first byte, as libyaml's
 * WIDTH (1 for a byte that starts none; the text is validated first). */
static size_t char_len(const unsigned char *u, size_t i, size_t len)
{
    unsigned c = u[i];
    size_t w = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
             : (c & 0xF8) == 0xF0 ? 4 : 1;
    return i + w <= len ? w : len - i;
}

/* Go from the start of the text (after a BOM) over at most `chars`
 * characters (libyaml's mark.index: a CR LF pair is two) and at most
 * `bytes` bytes, counting line breaks.  Returns the byte offset reached;
 * *line is its line, *start the offset where that line begins. */
static size_t walk(const unsigned char *u, size_t len, size_t chars, size_t bytes,
                   int *line, size_t *start)
{
    size_t i = bom_len(u, len), n = 0;
    *line = 1;
    *start = i;
    if (bytes > len)
        bytes = len;
    while (i < bytes && n < chars) {
        size_t b = break_len(u, i, len);
        size_t w = b ? b : char_len(u, i, len);
        size_t c = b == 2 && u[i] == '\r' ? 2 : 1;
        if (i + w > bytes || n + c > chars)
            break;
        i += w;
        n += c;
        if (b) {
            ++*line;
            *start = i;
        }
    }
    return i;
}

hs_ytree_pos hs_ytree_mark_pos(const char *text, size_t len, yaml_mark_t m)
{
    int line;
    size_t start;
    size_t i = walk((const unsigned char *)text, len, m.index, len, &line, &start);
    hs_ytree_pos p = { line, (int)(i - start) + 1, i };
    return p;
}

hs_ytree_pos hs_ytree_offset_pos(const char *text, size_t len, size_t off)
{
    int line;
    size_t start;
    if (off > len)
        off = len;
    walk((const unsigned char *)text, len, SIZE_MAX, off, &line, &start);
    hs_ytree_pos p = { line, (int)(off > start ? off - start : 0) + 1, off };
    return p;
}

/* Byte offset where line `line` (1-based) begins; len past the last line. */
static size_t line_start(const unsigned char *u, size_t len, int line)
{
    size_t i = bom_len(u, len);
    for (int l = 1; l < line && i < len;) {
        size_t b = break_len(u, i, len);
        i += b ? b : char_len(u, i, len);
        l += b != 0;
    }
    return i;
}

void hs_ytree_place(const hs_ytree *y, hs_error *err, int line, int col)
{
    const unsigned char *u = (const unsigned char *)y->text;
    snprintf(err->file, sizeof err->file, "%s", y->file);
    err->line = line;
    err->column = col;
    size_t s = line_start(u, y->len, line), n = 0;
    err->offset = (long)(s + (size_t)(col > 0 ? col - 1 : 0) < y->len
                         ? s + (size_t)(col > 0 ? col - 1 : 0) : y->len);
    while (s + n < y->len && u[s + n] && !break_len(u, s + n, y->len) &&
           n + 1 < sizeof err->source)
        n++;
    if (n + 1 >= sizeof err->source)        /* cut before a whole character */
        while (n > 0 && (u[s + n] & 0xC0) == 0x80)
            n--;
    memcpy(err->source, u + s, n);
    err->source[n] = '\0';
}

static void place_pos(const hs_ytree *y, hs_error *err, hs_ytree_pos p)
{
    hs_ytree_place(y, err, p.line, p.col);
}

/* ---------- the encoding ---------- */

/* UTF-16 or UTF-32: by the byte order mark, or else by the NUL bytes
 * around the first (ASCII) character, as YAML 1.2 (section 5.2) detects
 * them.  The error shows the first line, decoded as far as it is ASCII. */
static int check_wide(const hs_ytree *y, hs_error *err)
{
    const unsigned char *u = (const unsigned char *)y->text;
    size_t n = y->len, unit = 0, skip = 0;
    int be = 0;
    if (n >= 4 && !u[0] && !u[1] && u[2] == 0xFE && u[3] == 0xFF)
        unit = 4, be = 1, skip = 4;
    else if (n >= 4 && u[0] == 0xFF && u[1] == 0xFE && !u[2] && !u[3])
        unit = 4, skip = 4;
    else if (n >= 2 && (u[0] == 0xFE || u[0] == 0xFF) && u[1] == (u[0] ^ 1))
        unit = 2, be = u[0] == 0xFE, skip = 2;
    else if (n >= 4 && !u[0] && !u[1] && !u[2] && u[3])
        unit = 4, be = 1;
    else if (n >= 4 && u[0] && !u[1] && !u[2] && !u[3])
        unit = 4;
    else if (n >= 2 && !u[0] && u[1])
        unit = 2, be = 1;
    else if (n >= 2 && u[0] && !u[1])
        unit = 2;
    if (!unit)
        return 0;
    hs_error_set(err, HS_EXIT_MODEL, "the file is UTF-%d (%s-endian); save it as UTF-8",
                 (int)unit * 8, be ? "big" : "little");
    snprintf(err->file, sizeof err->file, "%s", y->file);
    err->line = err->column = 1;
    err->offset = 0;
    size_t k = 0;
    for (size_t i = skip; i + unit <= n && k + 1 < sizeof err->source; i += unit) {
        unsigned long c = 0;
        for (size_t b = 0; b < unit; b++)
            c = c << 8 | u[i + (be ? b : unit - 1 - b)];
        if (c == '\n' || c == '\r')
            break;
        err->source[k++] = (char)(c == '\t' || (c >= 0x20 && c < 0x7F) ? c : '?');
    }
    err->source[k] = '\0';
    return err->code;
}

/* Why the UTF-8 sequence at u[i] is invalid, or NULL; *cp its value. */
static const char *utf8_problem(const unsigned char *u, size_t i, size_t len,
                                size_t *w, unsigned long *cp)
{
    unsigned c = u[i];
    *w = (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    if (!*w)
        return "cannot start a character";
    if (i + *w > len)
        return "starts a character cut short by the end of the file";
    *cp = c & (0x7F >> *w);
    for (size_t k = 1; k < *w; k++) {
        if ((u[i + k] & 0xC0) != 0x80)
            return "starts a character that is cut short";
        *cp = *cp << 6 | (u[i + k] & 0x3F);
    }
    static const unsigned long least[] = { 0, 0, 0x80, 0x800, 0x10000 };
    if (*cp < least[*w] || (*cp >= 0xD800 && *cp <= 0xDFFF) || *cp > 0x10FFFF)
        return "starts an overlong or out-of-range sequence";
    return NULL;
}

/* Valid UTF-8 of characters YAML allows (libyaml's reader refuses the
 * rest, with only a byte offset): the first bad byte, positioned. */
static int check_utf8(const hs_ytree *y, hs_error *err)
{
    const unsigned char *u = (const unsigned char *)y->text;
    size_t i = 0, n = y->len;
    while (i < n) {
        unsigned long cp = u[i];
        size_t w = 1;
        if (cp >= 0x20 && cp < 0x7F) {
            i++;
            continue;
        }
        if (cp >= 0x80) {
            const char *why = utf8_problem(u, i, n, &w, &cp);
            if (why) {
                hs_error_set(err, HS_EXIT_MODEL, "invalid UTF-8 at byte offset %zu "
                             "(0x%02X %s); save the file as UTF-8", i, u[i], why);
                place_pos(y, err, hs_ytree_offset_pos(y->text, n, i));
                return err->code;
            }
        }
        /* YAML's printable set: TAB LF CR, 0x20-0x7E, NEL, 0xA0-0xD7FF,
         * 0xE000-0xFFFD, 0x10000-0x10FFFF */
        if (!(cp == '\t' || cp == '\n' || cp == '\r' || (cp >= 0x20 && cp < 0x7F) ||
              cp == 0x85 || (cp >= 0xA0 && cp <= 0xD7FF) ||
              (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000)) {
            hs_error_set(err, HS_EXIT_MODEL, "control character U+%04lX at byte offset "
                         "%zu is not allowed in YAML", cp, i);
            place_pos(y, err, hs_ytree_offset_pos(y->text, n, i));
            return err->code;
        }
        i += w;
    }
    return 0;
}

static int check_text(const hs_ytree *y, hs_error *err)
{
    if (check_wide(y, err))
        return err->code;
    if (memchr(y->text, '\0', y->len))
        return hs_error_set(err, HS_EXIT_MODEL, "%s: model file contains a NUL byte "
                            "(is it a binary file?)", y->file);
    return check_utf8(y, err);
}

/* ---------- parsing ---------- */

/* What to do about libyaml's most common complaints ("" when unknown). */
static const char *yaml_hint(const char *problem, const char *context)
{
    static const struct { const char *problem, *context, *hint; } h[] = {
        { "did not find expected key", "block mapping", " (the keys of one mapping must "
          "be indented alike, with spaces: line this one up with its siblings)" },
        { "did not find expected ',' or ']'", NULL, " (close the list with ']', separate "
          "its items with commas, and quote an item holding ',', ':' or brackets)" },
        { "did not find expected ',' or '}'", NULL, " (close the mapping with '}', "
          "separate its entries with commas, and quote a value holding ',' or ':')" },
        { "", "while scanning a quoted scalar", " (close the quote)" },
        { "found undefined alias", NULL, " (an alias *NAME needs an anchor &NAME earlier "
          "in the file)" },
        { "mapping values are not allowed", NULL, " (a value holding ': ' must be quoted)" },
        { "cannot start any token", NULL, " (quote the value)" },
        { "could not find expected ':'", NULL, " (a key is followed by ': ' and its "
          "value)" },
    };
    for (size_t i = 0; i < sizeof h / sizeof h[0]; i++)
        if (strstr(problem, h[i].problem) &&
            (!h[i].context || (context && strstr(context, h[i].context))))
            return h[i].hint;
    return "";
}

/* libyaml's error in parser p, positioned. */
static int parser_error(const hs_ytree *y, const yaml_parser_t *p, hs_error *err)
{
    const char *problem = p->problem ? p->problem : "syntax error";
    const char *context = p->context;
    if (p->error == YAML_MEMORY_ERROR)
        return hs_error_nomem(err);
    if (p->error == YAML_READER_ERROR) {     /* not after check_text; kept for safety */
        hs_error_set(err, HS_EXIT_MODEL, "YAML: %s at byte offset %zu", problem,
                     p->problem_offset);
        place_pos(y, err, hs_ytree_offset_pos(y->text, y->len, p->problem_offset));
        return err->code;
    }
    hs_ytree_pos at = hs_ytree_mark_pos(y->text, y->len, p->problem_mark);
    if (p->error == YAML_COMPOSER_ERROR && context) {
        /* "found duplicate anchor; first occurrence" ... "second occurrence" */
        hs_ytree_pos first = hs_ytree_mark_pos(y->text, y->len, p->context_mark);
        hs_error_set(err, HS_EXIT_MODEL, "YAML: %s at %d:%d, %s here", context,
                     first.line, first.col, problem);
        place_pos(y, err, at);
        return err->code;
    }
    if (context && at.off >= y->len)  /* ran into the end: where the construct began */
        at = hs_ytree_mark_pos(y->text, y->len, p->context_mark);
    int tab = at.off < y->len && y->text[at.off] == '\t';   /* what libyaml stops at */
    hs_error_set(err, HS_EXIT_MODEL, "YAML: %s%s%s%s", problem, context ? " " : "",
                 context ? context : "",
                 tab ? " (tabs are not allowed for indentation in YAML; use spaces)"
                     : yaml_hint(problem, context));
    place_pos(y, err, at);
    return err->code;
}

/* The limit a first-pass event exceeds, as a message, or NULL. */
static const char *over_limit(const yaml_event_t *ev, long *depth, long *nodes,
                              long *anchors, long *aliases)
{
    const yaml_char_t *anchor = NULL;
    switch (ev->type) {
    case YAML_SEQUENCE_START_EVENT:
        anchor = ev->data.sequence_start.anchor;
        ++*depth;
        break;
    case YAML_MAPPING_START_EVENT:
        anchor = ev->data.mapping_start.anchor;
        ++*depth;
        break;
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        --*depth;
        return NULL;
    case YAML_SCALAR_EVENT:
        anchor = ev->data.scalar.anchor;
        break;
    case YAML_ALIAS_EVENT:
        return ++*aliases > HS_YTREE_MAX_ALIASES ? "too many YAML aliases (more than "
               HS_STR(HS_YTREE_MAX_ALIASES) ")" : NULL;
    default:
        return NULL;
    }
    if (*depth > HS_YTREE_MAX_DEPTH)
        return "YAML nested too deeply (more than " HS_STR(HS_YTREE_MAX_DEPTH)
               " levels of lists and mappings)";
    if (++*nodes > HS_YTREE_MAX_NODES)
        return "too many YAML nodes (more than " HS_STR(HS_YTREE_MAX_NODES)
               " scalars, lists and mappings)";
    if (anchor && ++*anchors > HS_YTREE_MAX_ANCHORS)
        return "too many YAML anchors (more than " HS_STR(HS_YTREE_MAX_ANCHORS) ")";
    return NULL;
}

/* A first pass over libyaml's events, up to the first error (which the
 * load then reports), the end of the second document (the last the load
 * reads) or the first event over a limit of ytree.h: libyaml's scanner
 * spends time proportional to the flow nesting on every token (10^5
 * levels of [ take minutes), its composer compares every anchor with every
 * earlier one.  Linear: the scanner runs at most about 1024 characters
 * ahead of its events. */
static int prescan(const hs_ytree *y, hs_error *err)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return hs_error_nomem(err);
    yaml_parser_set_input_string(&p, (const unsigned char *)y->text, y->len);
    long depth = 0, nodes = 0, anchors = 0, aliases = 0, docs = 0;
    for (int done = 0; !done && !err->code;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev))
            break;
        const char *msg = over_limit(&ev, &depth, &nodes, &anchors, &aliases);
        if (msg) {
            hs_error_set(err, HS_EXIT_MODEL, "%s", msg);
            place_pos(y, err, hs_ytree_mark_pos(y->text, y->len, ev.start_mark));
        }
        done = ev.type == YAML_STREAM_END_EVENT ||
               (ev.type == YAML_DOCUMENT_START_EVENT && ++docs > 2);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return err->code;
}

static int load_parser(hs_ytree *y, hs_error *err)
{
    if (check_text(y, err) || prescan(y, err))
        return err->code;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return hs_error_nomem(err);
    yaml_parser_set_input_string(&p, (const unsigned char *)y->text, y->len);
    int rc = 0;
    if (!yaml_parser_load(&p, &y->doc)) {
        rc = parser_error(y, &p, err);
        yaml_parser_delete(&p);
        return rc;
    }
    y->loaded = 1;
    if (!yaml_document_get_root_node(&y->doc)) {
        rc = hs_error_set(err, HS_EXIT_MODEL, "%s: empty model file", y->file);
    } else {
        yaml_document_t second;
        if (!yaml_parser_load(&p, &second)) {
            rc = parser_error(y, &p, err);
        } else {
            yaml_node_t *r2 = yaml_document_get_root_node(&second);
            if (r2) {
                rc = hs_error_set(err, HS_EXIT_MODEL,
                                  "several YAML documents in one model file; "
                                  "a model is one document");
                place_pos(y, err, hs_ytree_mark_pos(y->text, y->len, r2->start_mark));
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
        return hs_error_nomem(err);
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
    if (rc == -1)
        return hs_error_nomem(err);
    if (rc)
        return hs_error_set(err, HS_EXIT_MODEL, "cannot read model file '%s'", path);
    return load_parser(y, err);
}

void hs_ytree_free(hs_ytree *y)
{
    if (!y)
        return;
    if (y->loaded)
        yaml_document_delete(&y->doc);
    free(y->text);
    free(y->origin);
    free(y->seg);
    free(y->notes);
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

/* ---------- positions inside scalars ---------- */

/* A line break that folding turns into a space or a newline of the value
 * (LF, CR, CR LF, NEL); LS and PS stay in the value as they are. */
static size_t fold_break(const unsigned char *t, size_t i, size_t end)
{
    size_t b = break_len(t, i, end);
    return b == 3 ? 0 : b;
}

/* Bytes of the value that the escape sequence at t[j] ('\\') yields, and
 * (*src) the bytes it takes in the source. */
static size_t escape_len(const unsigned char *t, size_t j, size_t end, size_t *src)
{
    char e = (char)t[j + 1];
    size_t hex = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
    *src = 2 + hex;
    if (!hex)
        return e == 'N' || e == '_' ? 2 : e == 'L' || e == 'P' ? 3 : 1;
    unsigned long cp = 0;
    for (size_t k = 0; k < hex && j + 2 + k < end; k++) {
        unsigned char h = t[j + 2 + k];
        cp = cp << 4 | (unsigned long)(h <= '9' ? h - '0' : (h | 0x20) - 'a' + 10);
    }
    return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/* The source byte of value byte `off` of a double-quoted scalar whose text
 * starts at t[j] (after the quote): decode escapes and folded lines as
 * libyaml does (blanks before a break dropped; one break is a space, n
 * breaks are n - 1 newlines; the next line's leading blanks dropped). */
static size_t dq_source(const unsigned char *t, size_t j, size_t end, size_t off)
{
    size_t i = 0;
    while (j < end && t[j] != '"') {
        size_t src = 1, produced = 1, k = j;
        while (k < end && (t[k] == ' ' || t[k] == '\t'))
            k++;
        int escaped = t[j] == '\\' && j + 1 < end && fold_break(t, j + 1, end);
        if (escaped || (k < end && fold_break(t, k, end))) {
            size_t nb = 0;
            k = escaped ? j + 1 : k;
            for (;;) {                        /* the run of blanks and breaks */
                size_t b = k < end ? fold_break(t, k, end) : 0;
                if (b)
                    nb++, k += b;
                else if (k < end && (t[k] == ' ' || t[k] == '\t'))
                    k++;
                else
                    break;
            }
            src = k - j;
            produced = escaped ? nb - 1 : nb == 1 ? 1 : nb - 1;
        } else if (t[j] == '\\' && j + 1 < end) {
            produced = escape_len(t, j, end, &src);
        }
        if (i + produced > off)
            return j;
        i += produced;
        j += src;
    }
    return j;
}

/* The same for the other styles: match value bytes to source bytes in
 * order, skipping what the value lacks (quotes of '', indentation, a block
 * scalar's header); a space or newline of the value may be a folded break.
 * `fallback` when the value is not found (should not happen). */
static size_t match_source(const unsigned char *t, size_t j, size_t end,
                           const unsigned char *v, size_t vlen, size_t off,
                           size_t fallback)
{
    for (size_t i = 0; i < vlen; i++) {
        size_t k = j, b = 0;
        while (k < end && t[k] != v[i]) {
            if ((v[i] == ' ' || v[i] == '\n') && (b = fold_break(t, k, end)))
                break;
            k++;
        }
        if (k >= end)
            return fallback;
        if (i == off)
            return k;
        j = k + (b ? b : 1);
    }
    return j;
}

static const hs_ytree_origin *origin_of(const hs_ytree *y, const yaml_node_t *n)
{
    if (!y->norig || !n)
        return NULL;
    long id = (long)(n - y->doc.nodes.start) + 1;
    if (id <= y->norig || (size_t)(id - y->norig - 1) >= y->norigin)
        return NULL;
    return &y->origin[id - y->norig - 1];
}

const char *hs_ytree_note(const hs_ytree *y, const yaml_node_t *n)
{
    const hs_ytree_origin *o = origin_of(y, n);
    return o && o->note >= 0 ? y->notes + o->note : NULL;
}

void hs_ytree_scalar_pos(const hs_ytree *y, const yaml_node_t *n, size_t off,
                         int *line, int *col)
{
    const hs_ytree_origin *o = origin_of(y, n);
    if (o) {                                 /* an added node: in its template */
        for (size_t k = o->nseg; k-- > 0;) {
            const hs_ytree_seg *g = &y->seg[o->seg + k];
            if (g->out <= off || k == 0) {
                size_t d = off > g->out ? off - g->out : 0;
                off = g->src + (d < g->len ? d : g->len);
                break;
            }
        }
        n = yaml_document_get_node((yaml_document_t *)&y->doc, o->tmpl);
        if (n->type != YAML_SCALAR_NODE) {
            hs_ytree_pos p = hs_ytree_mark_pos(y->text, y->len, n->start_mark);
            *line = p.line;
            *col = p.col;
            return;
        }
    }
    const unsigned char *t = (const unsigned char *)y->text;
    size_t j = hs_ytree_mark_pos(y->text, y->len, n->start_mark).off;
    size_t end = hs_ytree_mark_pos(y->text, y->len, n->end_mark).off;
    size_t vlen = n->data.scalar.length;
    if (off > vlen)
        off = vlen;
    switch (n->data.scalar.style) {
    case YAML_SINGLE_QUOTED_SCALAR_STYLE:
    case YAML_DOUBLE_QUOTED_SCALAR_STYLE:
        j++;
        break;
    case YAML_LITERAL_SCALAR_STYLE:
    case YAML_FOLDED_SCALAR_STYLE:           /* skip the | or > header line */
        while (j < end && !break_len(t, j, end))
            j++;
        j += j < end ? break_len(t, j, end) : 0;
        break;
    default:
        break;
    }
    if (j > end)
        j = end;
    if (n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
        j = dq_source(t, j, end, off);
    else
        j = match_source(t, j, end, n->data.scalar.value, vlen, off,
                         j + off < end ? j + off : end);
    hs_ytree_pos p = hs_ytree_offset_pos(y->text, y->len, j);
    *line = p.line;
    *col = p.col;
}

static int verror(const hs_ytree *y, hs_error *err, const yaml_node_t *n, int line,
                  int col, const char *fmt, va_list ap)
{
    if (err->code)
        return err->code;
    char msg[sizeof err->msg];
    vsnprintf(msg, sizeof msg, fmt, ap);
    const char *note = hs_ytree_note(y, n);
    if (note)
        hs_error_set(err, HS_EXIT_MODEL, "%s (at %s)", msg, note);
    else
        hs_error_set(err, HS_EXIT_MODEL, "%s", msg);
    hs_ytree_place(y, err, line, col);
    return err->code;
}

int hs_ytree_error(const hs_ytree *y, hs_error *err, const yaml_node_t *n,
                   const char *fmt, ...)
{
    hs_ytree_pos p = { 1, 1, 0 };
    if (n && !err->code)
        p = hs_ytree_mark_pos(y->text, y->len, n->start_mark);
    va_list ap;
    va_start(ap, fmt);
    int rc = verror(y, err, n, p.line, p.col, fmt, ap);
    va_end(ap);
    return rc;
}

int hs_ytree_error_in(const hs_ytree *y, hs_error *err, const yaml_node_t *n,
                      size_t off, const char *fmt, ...)
{
    int line = 1, col = 1;
    if (!err->code)
        hs_ytree_scalar_pos(y, n, off, &line, &col);
    va_list ap;
    va_start(ap, fmt);
    int rc = verror(y, err, n, line, col, fmt, ap);
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
