/* Tests of src/lang/ytree.c, the YAML layer under the model loader:
 *
 *   - hs_ytree_mark_pos against libyaml's own marks (every token of texts
 *     with UTF-8, CR, CR LF, NEL, LS, PS, a BOM and tabs: same line, same
 *     column counted in characters, the token's first byte at the offset),
 *     and a table of exact places; hs_ytree_offset_pos likewise;
 *   - a table of bad texts (input, line, column, message part, exit code,
 *     the source line shown): nesting that an apostrophe or a block scalar
 *     used to hide, the node, anchor and alias limits, UTF-16 and UTF-32,
 *     invalid UTF-8 and control characters, a tab used for indentation,
 *     syntax errors after non-ASCII text and with every kind of line break;
 *   - texts that must load (brackets inside scalars and comments, the
 *     limits themselves, a BOM, CR-only files);
 *   - positions inside scalars after non-ASCII text and with CR breaks;
 *   - time: 4 MiB of '[' behind an apostrophe refused in well under a
 *     second (libyaml alone needs minutes for 1/10 of that). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "lang/ytree.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define T(s) s, sizeof(s) - 1        /* a literal and its length (NULs kept) */

#define BOM "\xEF\xBB\xBF"
#define NEL "\xC2\x85"
#define LS "\xE2\x80\xA8"
#define PS "\xE2\x80\xA9"

/* Characters (not bytes) in text[a, b): UTF-8 lead bytes. */
static size_t chars(const char *text, size_t a, size_t b)
{
    size_t n = 0;
    for (size_t i = a; i < b; i++)
        n += ((unsigned char)text[i] & 0xC0) != 0x80;
    return n;
}

/* ---------- hs_ytree_mark_pos against libyaml's marks ---------- */

static const struct {
    const char *text;
} scan_texts[] = {
    {"# L\xC3\xA4nge \xE2\x84\x93 \xE2\x80\x94 \xC3\x9C" "bung\nname: pendule \xC3\xA0 ressort\n"
     "coordinates: [\xCE\xB8, \xCF\x86]\nmass: [1, 1]\n"},
    {"a: 1\rb: [x, y]\r# c\rc: \xC3\xA4\r"},
    {"a: 1\r\nb: [x, y]\r\n# \xC3\xA4\r\nc: 'x\r\n  y'\r\n"},
    {"a: 1" NEL "b: [\xC3\xA4, y]" NEL "c: 2\n"},
    {"a: 1" LS "b: 2" PS "c: [\xC3\xA9]\n"},
    {BOM "a: \xC3\xA9\nb: [1, 2]\n"},
    {BOM "# \xC3\xBC\r\na: |\r\n  \xE2\x84\x93\r\n  x\rb: \"\\u00e9 \xC3\xBC\"" NEL
     "c: \xF0\x9D\x94\xB8 x\n"},
    {"a:\t[1,\t2]\nb: \"\tx\"\nc: >\n  folded\n  \xC3\xA9 text\n\n  para\n"},
    {"- \xC3\xA9\n- - \xC3\xA9\n  - {k: \xE2\x84\x93, \xC3\xA4: [1]}\n"},
};

START_TEST(test_mark_pos_vs_libyaml)
{
    const char *text = scan_texts[_i].text;
    size_t len = strlen(text);
    yaml_parser_t p;
    ck_assert(yaml_parser_initialize(&p));
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    int ntok = 0;
    for (int done = 0; !done;) {
        yaml_token_t tok;
        ck_assert_msg(yaml_parser_scan(&p, &tok), "text %d: libyaml: %s", _i, p.problem);
        yaml_mark_t marks[2] = { tok.start_mark, tok.end_mark };
        for (int k = 0; k < 2; k++) {
            yaml_mark_t m = marks[k];
            hs_ytree_pos at = hs_ytree_mark_pos(text, len, m);
            ck_assert_msg(at.line == (int)m.line + 1 && at.off <= len,
                          "text %d token %d: line %d, libyaml %zu", _i, ntok, at.line,
                          m.line + 1);
            /* the byte column, counted back in characters, is libyaml's */
            size_t start = at.off - (size_t)(at.col - 1);
            ck_assert_msg(chars(text, start, at.off) == m.column,
                          "text %d token %d: column %d (bytes) is %zu characters, libyaml %zu",
                          _i, ntok, at.col, chars(text, start, at.off), m.column);
            /* offset -> position agrees */
            hs_ytree_pos back = hs_ytree_offset_pos(text, len, at.off);
            ck_assert_int_eq(back.line, at.line);
            ck_assert_int_eq(back.col, at.col);
        }
        hs_ytree_pos at = hs_ytree_mark_pos(text, len, tok.start_mark);
        const char *s = text + at.off;
        if (tok.type == YAML_SCALAR_TOKEN && tok.data.scalar.style == YAML_PLAIN_SCALAR_STYLE)
            ck_assert_msg(strncmp(s, (const char *)tok.data.scalar.value,
                                  strcspn((const char *)tok.data.scalar.value, " \n")) == 0,
                          "text %d: scalar '%s' at '%.8s'", _i, tok.data.scalar.value, s);
        if (tok.type == YAML_FLOW_SEQUENCE_START_TOKEN)
            ck_assert_int_eq(*s, '[');
        if (tok.type == YAML_FLOW_MAPPING_START_TOKEN)
            ck_assert_int_eq(*s, '{');
        if (tok.type == YAML_VALUE_TOKEN)
            ck_assert_int_eq(*s, ':');
        done = tok.type == YAML_STREAM_END_TOKEN;
        yaml_token_delete(&tok);
        ntok++;
    }
    ck_assert_int_gt(ntok, 8);
    yaml_parser_delete(&p);
}
END_TEST

/* Exact places: a mark (only its index, in characters, is used) and a byte
 * offset. */
static const struct {
    const char *text;
    size_t len;
    size_t index;              /* mark.index */
    int line, col;
    size_t off;
} mark_cases[] = {
    {T("\xC3\xA4\nb"), 2, 2, 1, 3},
    {T("a\xC3\xA9 b"), 3, 1, 5, 4},
    {T("a\r\nb"), 3, 2, 1, 3},
    {T("a\rb"), 2, 2, 1, 2},
    {T("a\r\rb"), 3, 3, 1, 3},
    {T("a" NEL "b"), 2, 2, 1, 3},
    {T("a" LS "b"), 2, 2, 1, 4},
    {T("a" PS "b"), 2, 2, 1, 4},
    {T(BOM "ab"), 1, 1, 2, 4},
    {T(BOM "\nab"), 2, 2, 2, 5},
    {T("\xF0\x9D\x94\xB8x"), 1, 1, 5, 4},
    {T("ab"), 9, 1, 3, 2},                 /* past the end: clamped */
    {T("\r\n\r\n x"), 5, 3, 2, 5},
    {T("\t\xC3\xA4\tx"), 3, 1, 5, 4},
};

START_TEST(test_mark_pos_table)
{
    yaml_mark_t m = { mark_cases[_i].index, 0, 0 };
    hs_ytree_pos at = hs_ytree_mark_pos(mark_cases[_i].text, mark_cases[_i].len, m);
    ck_assert_msg(at.line == mark_cases[_i].line && at.col == mark_cases[_i].col &&
                      at.off == mark_cases[_i].off,
                  "case %d: got %d:%d offset %zu, want %d:%d offset %zu", _i, at.line,
                  at.col, at.off, mark_cases[_i].line, mark_cases[_i].col,
                  mark_cases[_i].off);
}
END_TEST

static const struct {
    const char *text;
    size_t len;
    size_t off;
    int line, col;
} off_cases[] = {
    {T("\xC3\xA4\nb"), 3, 2, 1},
    {T("\xC3\xA4\nb"), 1, 1, 2},          /* inside a character: that byte */
    {T("a\r\nb"), 2, 1, 3},               /* the LF of CR LF is on line 1 */
    {T("a\r\nb"), 3, 2, 1},
    {T("a\rb\rc"), 4, 3, 1},
    {T(BOM "ab"), 4, 1, 2},
    {T(BOM "ab"), 0, 1, 1},
    {T("a" NEL "b"), 3, 2, 1},
    {T("a" LS "b" PS "c"), 8, 3, 1},
    {T("a" LS "b" PS "c"), 7, 2, 4},           /* inside PS */
    {T("ab"), 7, 1, 3},
};

START_TEST(test_offset_pos_table)
{
    hs_ytree_pos at = hs_ytree_offset_pos(off_cases[_i].text, off_cases[_i].len,
                                          off_cases[_i].off);
    ck_assert_msg(at.line == off_cases[_i].line && at.col == off_cases[_i].col,
                  "case %d: got %d:%d, want %d:%d", _i, at.line, at.col,
                  off_cases[_i].line, off_cases[_i].col);
}
END_TEST

/* ---------- texts that must be refused ---------- */

typedef struct bad_case {
    const char *name;
    const char *text;
    size_t len;
    int code;
    int line, col;             /* 0, 0: no position */
    const char *msg;           /* a part of the message */
    const char *source;        /* the source line shown, or NULL: not checked */
} bad_case;

#define DEEP10 "[[[[[[[[[["
#define CLOSE10 "]]]]]]]]]]"
#define DEEP70 DEEP10 DEEP10 DEEP10 DEEP10 DEEP10 DEEP10 DEEP10
#define DASH10 "- - - - - - - - - - "
#define NEST "nested too deeply (more than 64 levels"

static const bad_case bad[] = {
    /* the root mapping is level 1: the 64th '[' is level 65 */
    {"deep_after_apostrophe", T("name: it 's x\np: " DEEP70 "\n"), 2, 2, 67, NEST,
     "p: " DEEP70},
    {"deep_after_double_quote_word", T("name: say \"hi\np: " DEEP70 "\n"), 2, 2, 67, NEST, NULL},
    {"deep_after_literal", T("name: |\n  it's 'x\np: " DEEP70 "\n"), 2, 3, 67, NEST, NULL},
    {"deep_after_folded", T("name: >-\n  \"x\n  'y\np: " DEEP70 "\n"), 2, 4, 67, NEST, NULL},
    {"deep_after_sq_escape", T("a: 'it''s'\np: " DEEP70 "\n"), 2, 2, 67, NEST, NULL},
    {"deep_after_dq_escape", T("a: \"x\\\" '\"\np: " DEEP70 "\n"), 2, 2, 67, NEST, NULL},
    {"deep_after_comment", T("# it's\np: " DEEP70 "\n"), 2, 2, 67, NEST, NULL},
    {"deep_in_flow_plain", T("p: [it's, " DEEP70 "]\n"), 2, 1, 73, NEST, NULL},
    {"deep_block_seq", T("p:\n  " DASH10 DASH10 DASH10 DASH10 DASH10 DASH10 DASH10 "x\n"),
     2, 2, 129, NEST, NULL},
    {"deep_after_utf8", T("# \xC3\xA4\xC3\xB6\xC3\xBC\n\xE2\x84\x93: " DEEP70 "\n"),
     2, 2, 69, NEST, NULL},
    /* encodings */
    {"nul_byte", T("a: 1\n\0b: 2\n"), 2, 0, 0, "NUL byte", NULL},
    {"latin1", T("# L\xE4nge\na: 1\n"), 2, 1, 4,
     "invalid UTF-8 at byte offset 3 (0xE4 starts a character that is cut short)",
     "# L\xE4nge"},
    {"bad_lead_after_utf8", T("# \xE2\x84\x93\na: \xFF\n"), 2, 2, 4,
     "invalid UTF-8 at byte offset 9 (0xFF cannot start a character)", NULL},
    {"continuation_alone", T("a: \x80\n"), 2, 1, 4, "byte offset 3 (0x80 cannot start", NULL},
    {"cut_at_end", T("a: \xE2\x84"), 2, 1, 4, "cut short by the end of the file", NULL},
    {"overlong", T("a: \xC0\xAF\n"), 2, 1, 4, "overlong or out-of-range", NULL},
    {"surrogate", T("a: \xED\xA0\x80\n"), 2, 1, 4, "overlong or out-of-range", NULL},
    {"beyond_10ffff", T("a: \xF4\x90\x80\x80\n"), 2, 1, 4, "overlong or out-of-range", NULL},
    {"control_c0", T("a: 1\nb: \x1B[0m\n"), 2, 2, 4,
     "control character U+001B at byte offset 8 is not allowed", NULL},
    {"control_del", T("a: \x7F\n"), 2, 1, 4, "U+007F", NULL},
    {"control_c1", T("a: \xC2\x80\n"), 2, 1, 4, "U+0080", NULL},
    {"noncharacter", T("a: \xEF\xBF\xBE\n"), 2, 1, 4, "U+FFFE", NULL},
    /* a tab for indentation, and other tabs libyaml refuses */
    {"tab_indent", T("initial:\n\tq: {x: 0}\n"), 2, 2, 1,
     "(tabs are not allowed for indentation in YAML; use spaces)", "\tq: {x: 0}"},
    {"tab_after_spaces", T("a:\n  b: 1\n  \tc: 2\n"), 2, 3, 3,
     "tabs are not allowed for indentation", NULL},
    {"tab_before_comment", T("a: 1\n\t# note\n"), 2, 2, 1, "found a tab character that "
     "violates indentation while scanning a plain scalar (tabs are not allowed", NULL},
    {"tab_in_block_scalar", T("a: |\n  x\n\ty\n"), 2, 3, 1, "(tabs are not allowed", NULL},
    {"no_tab_no_hint", T("a: 1\n@b: 2\n"), 2, 2, 1, "cannot start any token while scanning "
     "for the next token", "@b: 2"},
    /* syntax errors: positions after non-ASCII text and every line break */
    {"after_utf8_comment", T("# Pendel: L\xC3\xA4nge \xE2\x84\x93, Masse m \xE2\x80\x94 "
     "f\xC3\xBCr \xC3\x9C" "bungen\n# \xC3\xA4hnlich\ncoordinates: [x]\nmass: [1]\n"
     "initial: {q: {x: 0}}\nsimulate: {t_end: 1, rtol: [1}\n"), 2, 6, 30,
     "did not find expected ',' or ']'", "simulate: {t_end: 1, rtol: [1}"},
    {"after_utf8_key", T("\xC3\xA9\xE2\x84\x93: [1}\n"), 2, 1, 10, "expected ',' or ']'", NULL},
    {"crlf", T("a: 1\r\nb: 2\r\nc: [1}\r\n"), 2, 3, 6, "expected ',' or ']'", "c: [1}"},
    {"cr_only", T("a: 1\rb: 2\rc: [1}\r"), 2, 3, 6, "expected ',' or ']'", "c: [1}"},
    {"nel", T("a: 1" NEL "b: 2" NEL "c: [1}\n"), 2, 3, 6, "expected ',' or ']'", "c: [1}"},
    {"ls_ps", T("a: 1" LS "b: 2" PS "c: [1}\n"), 2, 3, 6, "expected ',' or ']'", "c: [1}"},
    {"bom_line1", T(BOM "a: [1}\n"), 2, 1, 6, "expected ',' or ']'", "a: [1}"},
    {"bom_line2", T(BOM "# \xC3\xA4\na: [1}\n"), 2, 2, 6, "expected ',' or ']'", "a: [1}"},
    /* an unclosed construct: where it began, in bytes */
    {"unclosed_after_utf8", T("\xC3\xA9: [1, 2\n"), 2, 1, 5, "expected ',' or ']'", NULL},
    {"unclosed_quote_cr", T("a: 1\rb: 'x\r"), 2, 2, 4, "end of stream", "b: 'x"},
    /* composer errors */
    {"undefined_alias", T("# \xC3\xA4\na: *x\n"), 2, 2, 4, "found undefined alias", NULL},
    {"duplicate_anchor", T("a: &x 1\n\xC3\xA4: &x 2\n"), 2, 2, 5,
     "found duplicate anchor; first occurrence at 1:4, second occurrence here", NULL},
    {"two_documents", T("a: 1\n--- \nb: 2\n"), 2, 3, 1, "several YAML documents", NULL},
    {"empty", T("# nothing\n"), 2, 0, 0, "empty model file", NULL},
};

static void check_bad(const bad_case *c, int rc, const hs_error *err)
{
    char got[1600];
    snprintf(got, sizeof got, "rc %d code %d at %d:%d: %s [%s]", rc, err->code, err->line,
             err->column, err->msg, err->source);
    int ok = rc == c->code && err->code == c->code && err->line == c->line &&
             err->column == c->col && strstr(err->msg, c->msg) != NULL;
    if (ok && c->line > 0)
        ok = strcmp(err->file, "t.yaml") == 0;
    if (ok && c->source)
        ok = strcmp(err->source, c->source) == 0;
    ck_assert_msg(ok, "%s: want %d at %d:%d '%s' [%s]; got %s", c->name, c->code, c->line,
                  c->col, c->msg, c->source ? c->source : "-", got);
}

START_TEST(test_bad)
{
    const bad_case *c = &bad[_i];
    hs_ytree y;
    hs_error err;
    hs_error_init(&err);
    int rc = hs_ytree_load_string(&y, "t.yaml", c->text, c->len, &err);
    check_bad(c, rc, &err);
    hs_ytree_free(&y);
}
END_TEST

/* The same through hs_ytree_load (a file): the NUL check and the rest. */
START_TEST(test_bad_file)
{
    const bad_case *c = &bad[_i];
    char path[] = "/tmp/check_ytree_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(c->text, 1, c->len, f), c->len);
    fclose(f);
    hs_ytree y;
    hs_error err;
    hs_error_init(&err);
    int rc = hs_ytree_load(&y, path, &err);
    remove(path);
    /* the file name is the path here */
    if (c->line > 0) {
        ck_assert_str_eq(err.file, path);
        snprintf(err.file, sizeof err.file, "t.yaml");
    }
    check_bad(c, rc, &err);
    hs_ytree_free(&y);
}
END_TEST

/* UTF-16 and UTF-32, with and without a byte order mark: "the file is
 * UTF-16 (little-endian); save it as UTF-8" at 1:1, the first line shown
 * decoded. */
START_TEST(test_wide)
{
    size_t unit = _i & 4 ? 4 : 2;
    int be = _i & 1, bom = (_i & 2) != 0;
    const char *ascii = "coordinates: [x]\nmass: [1]\n";
    size_t n = strlen(ascii) + (size_t)bom, len = n * unit;
    unsigned char *text = calloc(len, 1);
    ck_assert_ptr_nonnull(text);
    for (size_t i = 0; i < n; i++) {
        unsigned long c = bom && i == 0 ? 0xFEFF : (unsigned char)ascii[i - (size_t)bom];
        for (size_t b = 0; b < unit; b++)
            text[i * unit + (be ? unit - 1 - b : b)] = (unsigned char)(c >> (8 * b));
    }
    hs_ytree y;
    hs_error err;
    hs_error_init(&err);
    int rc = hs_ytree_load_string(&y, "t.yaml", (const char *)text, len, &err);
    char want[100];
    snprintf(want, sizeof want, "the file is UTF-%d (%s-endian); save it as UTF-8",
             (int)unit * 8, be ? "big" : "little");
    ck_assert_int_eq(rc, HS_EXIT_MODEL);
    ck_assert_str_eq(err.msg, want);
    ck_assert_int_eq(err.line, 1);
    ck_assert_int_eq(err.column, 1);
    ck_assert_str_eq(err.file, "t.yaml");
    ck_assert_str_eq(err.source, "coordinates: [x]");
    hs_ytree_free(&y);
    free(text);
}
END_TEST

/* ---------- texts that must load ---------- */

static const struct {
    const char *name;
    const char *text;
    size_t len;
} good[] = {
    /* brackets inside scalars are not flow indicators */
    {"plain_brackets", T("p: a" DEEP70 DEEP70 "\n")},
    {"plain_braces", T("p: x{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\n")},
    {"dq_brackets", T("p: \"" DEEP70 "\"\n")},
    {"sq_brackets", T("p: '" DEEP70 "'\n")},
    {"comment_brackets", T("# " DEEP70 "\np: 1\n")},
    {"literal_brackets", T("p: |\n  " DEEP70 "\n  " DEEP70 "\n")},
    /* exactly 64 levels: the root mapping and 63 '[' */
    {"depth_64", T("p: " DEEP10 DEEP10 DEEP10 DEEP10 DEEP10 DEEP10 "[[[1]]]" CLOSE10 CLOSE10
                   CLOSE10 CLOSE10 CLOSE10 CLOSE10 "\n")},
    {"bom", T(BOM "a: 1\n")},
    {"cr_only", T("a: 1\rb: [1, 2]\r")},
    {"crlf", T("a: 1\r\nb: [1, 2]\r\n")},
    {"nel_ls_ps", T("a: 1" NEL "b: 2" LS "c: 3" PS "d: 4\n")},
    {"tab_separation", T("a:\t[1,\t2]\nb: \"\tx\"\n")},
    {"utf8_everywhere", T("\xE2\x84\x93: \xC3\xA9\n\xF0\x9D\x94\xB8: [\xCE\xB8, \xCF\x86]\n")},
    {"anchors_and_aliases", T("a: &m 1\nb: [*m, *m]\n")},
};

START_TEST(test_good)
{
    hs_ytree y;
    hs_error err;
    hs_error_init(&err);
    int rc = hs_ytree_load_string(&y, "t.yaml", good[_i].text, good[_i].len, &err);
    ck_assert_msg(rc == 0, "%s: %d:%d: %s", good[_i].name, err.line, err.column, err.msg);
    ck_assert_ptr_nonnull(hs_ytree_root(&y));
    hs_ytree_free(&y);
}
END_TEST

/* A text of `count` items made of head, count times `item` (with %d for
 * its number), tail. */
static char *repeat(const char *head, const char *item, int count, const char *tail)
{
    size_t cap = strlen(head) + strlen(tail) + (size_t)count * (strlen(item) + 12) + 1;
    char *s = malloc(cap);
    ck_assert_ptr_nonnull(s);
    size_t n = (size_t)snprintf(s, cap, "%s", head);
    for (int i = 0; i < count; i++)
        n += (size_t)snprintf(s + n, cap - n, item, i);
    snprintf(s + n, cap - n, "%s", tail);
    return s;
}

/* Anchors, aliases, nodes: the limit loads, one more is refused at the
 * event that goes over it. */
START_TEST(test_limits)
{
    static const struct {
        const char *head, *item, *tail;
        int count;            /* items at the limit */
        const char *msg;
        int item_len;
        int load_at_limit;    /* not for 2 million nodes (340 MB) */
    } lim[] = {
        {"a: [", "&a%04d x, ", "]\n", HS_YTREE_MAX_ANCHORS,
         "too many YAML anchors (more than 1000)", 10, 1},
        {"a: [&z x, ", "*z, ", "]\n", HS_YTREE_MAX_ALIASES,
         "too many YAML aliases (more than 100000)", 4, 1},
        /* the root sequence is one node */
        {"[", "1,", "]\n", HS_YTREE_MAX_NODES - 1,
         "too many YAML nodes (more than 2000000 scalars, lists and mappings)", 2, 0},
    };
    for (int k = 0; k < N(lim); k++) {
        for (int over = !lim[k].load_at_limit; over <= 1; over++) {
            char *s = repeat(lim[k].head, lim[k].item, lim[k].count + over, lim[k].tail);
            hs_ytree y;
            hs_error err;
            hs_error_init(&err);
            int rc = hs_ytree_load_string(&y, "t.yaml", s, strlen(s), &err);
            if (!over) {
                ck_assert_msg(rc == 0, "limit %d: %s", k, err.msg);
            } else {
                ck_assert_int_eq(rc, HS_EXIT_MODEL);
                ck_assert_msg(strstr(err.msg, lim[k].msg), "limit %d: %s", k, err.msg);
                ck_assert_int_eq(err.line, 1);
                int col = (int)strlen(lim[k].head) + lim[k].count * lim[k].item_len + 1;
                ck_assert_int_eq(err.column, col);
            }
            hs_ytree_free(&y);
            free(s);
        }
    }
}
END_TEST

/* ---------- positions inside scalars ---------- */

static const struct {
    const char *doc;
    const char *find;          /* in the value of key p */
    int line, col;
} spos[] = {
    {"# \xE2\x84\x93 \xC3\xA4\np: x + * 2\n", "*", 2, 8},
    {"p: \xC3\xA9 + * 2\n", "*", 1, 9},
    {"a: 1\rp: x + * 2\r", "*", 2, 8},
    {"a: 1\r\np: x +\r\n  * 2\r\n", "*", 3, 3},
    {"p: x +" NEL "  * 2\n", "*", 2, 3},
    {BOM "p: x + * 2\n", "*", 1, 8},
    {"p: \"\\u00e9 + * 2\"\n", "*", 1, 14},
    {"p: \"x +  \n\n  * 2\"\n", "*", 3, 3},
    {"p: \"x +  \r\n  * 2\"\n", "*", 2, 3},
    {"p: \"a\\\n  b * c\"\n", "*", 2, 5},
    {"p: 'it''s * x'\n", "*", 1, 11},
    {"p: '\xC3\xA4\r\n  * x'\n", "*", 2, 3},
    {"p: |\n  x + * 2\n", "*", 2, 7},
    {"p: |  # \xE2\x84\x93 x\n  x + * 2\n", "*", 2, 7},
    {"p: >\r  x +\r  * 2\r", "*", 3, 3},
    {"p: >\n  \xC3\xA9\n\n  * x\n", "*", 4, 3},
    {"p: [\xCE\xB8, \xCF\x86 * x]\n", "*", 1, 12},   /* a list: its second item */
};

START_TEST(test_scalar_pos)
{
    hs_ytree y;
    hs_error err;
    hs_error_init(&err);
    const char *doc = spos[_i].doc;
    ck_assert_msg(hs_ytree_load_string(&y, "t.yaml", doc, strlen(doc), &err) == 0, "%d: %s",
                  _i, err.msg);
    yaml_node_t *root = hs_ytree_root(&y);
    yaml_node_t *n = NULL;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
         p < root->data.mapping.pairs.top; p++)
        if (strcmp(hs_ytree_str(hs_ytree_node(&y, p->key)), "p") == 0)
            n = hs_ytree_node(&y, p->value);
    ck_assert_ptr_nonnull(n);
    int want_col = spos[_i].col;
    if (n->type == YAML_SEQUENCE_NODE)
        n = hs_ytree_node(&y, n->data.sequence.items.start[1]);
    const char *v = hs_ytree_str(n);
    const char *at = strstr(v, spos[_i].find);
    ck_assert_ptr_nonnull(at);
    int line = 0, col = 0;
    hs_ytree_scalar_pos(&y, n, (size_t)(at - v), &line, &col);
    ck_assert_msg(line == spos[_i].line && col == want_col, "%d: '%s' at %d:%d, want %d:%d",
                  _i, v, line, col, spos[_i].line, want_col);
    /* and an error there shows that line with the byte at the caret */
    hs_ytree_error_in(&y, &err, n, (size_t)(at - v), "bad");
    ck_assert_int_eq(err.line, line);
    ck_assert_int_eq(err.source[col - 1], *spos[_i].find);
    hs_ytree_free(&y);
}
END_TEST

/* A node error is at the node's first byte, after any non-ASCII text. */
START_TEST(test_node_error_pos)
{
    const char *doc = "# \xC3\xA4\xC3\xB6\n\xE2\x84\x93: 1\nk: [\xCE\xB8, bad]\n";
    hs_ytree y;
    hs_error err;
    hs_error_init(&err);
    ck_assert_int_eq(hs_ytree_load_string(&y, "t.yaml", doc, strlen(doc), &err), 0);
    yaml_node_t *root = hs_ytree_root(&y);
    yaml_node_t *list = hs_ytree_node(&y, root->data.mapping.pairs.start[1].value);
    yaml_node_t *item = hs_ytree_node(&y, list->data.sequence.items.start[1]);
    ck_assert_str_eq(hs_ytree_str(item), "bad");
    hs_ytree_error(&y, &err, item, "not good: %s", hs_ytree_str(item));
    ck_assert_str_eq(err.msg, "not good: bad");
    ck_assert_int_eq(err.line, 3);
    ck_assert_int_eq(err.column, 9);
    ck_assert_int_eq(err.offset, 22);
    ck_assert_str_eq(err.source, "k: [\xCE\xB8, bad]");
    hs_ytree_free(&y);
}
END_TEST

/* The source line shown: the right line whatever the breaks, no BOM, a long
 * line cut before a whole character. */
START_TEST(test_place_source)
{
    static const struct {
        const char *text;
        int line;
        const char *source;
    } pl[] = {
        {"a\rb\rc", 2, "b"},
        {"a\r\nb\r\nc", 3, "c"},
        {"a" NEL "b" LS "c" PS "d", 4, "d"},
        {BOM "a\nb", 1, "a"},
        {"a\n", 2, ""},
        {"a\n", 7, ""},
    };
    hs_ytree y;
    memset(&y, 0, sizeof y);
    y.file = "t.yaml";
    hs_error err;
    for (int k = 0; k < N(pl); k++) {
        hs_error_init(&err);
        y.text = (char *)pl[k].text;
        y.len = strlen(pl[k].text);
        hs_ytree_place(&y, &err, pl[k].line, 1);
        ck_assert_msg(strcmp(err.source, pl[k].source) == 0, "%d: '%s'", k, err.source);
    }
    char *text = repeat("", "\xE2\x84\x93", 400, "\n");       /* 1200 bytes */
    hs_error_init(&err);
    y.text = text;
    y.len = strlen(text);
    hs_ytree_place(&y, &err, 1, 1);
    size_t n = strlen(err.source);
    ck_assert_uint_eq(n, 510);                /* 170 whole characters */
    ck_assert_int_eq(memcmp(err.source + n - 3, "\xE2\x84\x93", 3), 0);
    free(text);
}
END_TEST

/* ---------- time ---------- */

/* CPU time of this process: other work on the machine does not count */
static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 4 MiB of '[' behind a text that used to hide them from the nesting check
 * (the whole 64 MiB a file may have is measured by hand: see the report
 * of the change); libyaml alone spends minutes on 400 KB of this. */
START_TEST(test_deep_is_fast)
{
    static const char *const heads[] = {
        "name: it 's x\np: ",
        "name: |\n  it's\np: ",
        "p: a[[[[\nq: ",
        "p:\n  ",                         /* '- ' instead of '[' */
    };
    const char *head = heads[_i];
    size_t hl = strlen(head), len = (size_t)4 << 20;
    char *text = malloc(len + 1);
    ck_assert_ptr_nonnull(text);
    memcpy(text, head, hl);
    for (size_t i = hl; i < len; i++)
        text[i] = _i == 3 ? ((i - hl) % 2 ? ' ' : '-') : '[';
    text[len] = '\0';
    hs_ytree y;
    hs_error err;
    hs_error_init(&err);
    double t0 = seconds();
    int rc = hs_ytree_load_string(&y, "t.yaml", text, len, &err);
    double dt = seconds() - t0;
    ck_assert_int_eq(rc, HS_EXIT_MODEL);
    ck_assert_msg(strstr(err.msg, NEST), "%s", err.msg);
    ck_assert_int_eq(err.line, _i == 1 ? 3 : 2);
    ck_assert_msg(dt < 1.0, "4 MiB took %.2f s of CPU time", dt);
    hs_ytree_free(&y);
    free(text);
}
END_TEST

static Suite *ytree_suite(void)
{
    Suite *s = suite_create("ytree");
    TCase *tc = tcase_create("positions");
    tcase_add_loop_test(tc, test_mark_pos_vs_libyaml, 0, N(scan_texts));
    tcase_add_loop_test(tc, test_mark_pos_table, 0, N(mark_cases));
    tcase_add_loop_test(tc, test_offset_pos_table, 0, N(off_cases));
    tcase_add_loop_test(tc, test_scalar_pos, 0, N(spos));
    tcase_add_test(tc, test_node_error_pos);
    tcase_add_test(tc, test_place_source);
    suite_add_tcase(s, tc);
    TCase *tb = tcase_create("bad");
    tcase_set_timeout(tb, 60);
    tcase_add_loop_test(tb, test_bad, 0, N(bad));
    tcase_add_loop_test(tb, test_bad_file, 0, N(bad));
    tcase_add_loop_test(tb, test_wide, 0, 8);
    tcase_add_loop_test(tb, test_good, 0, N(good));
    tcase_add_test(tb, test_limits);
    tcase_add_loop_test(tb, test_deep_is_fast, 0, 4);
    suite_add_tcase(s, tb);
    return s;
}

HS_CHECK_MAIN(ytree_suite)
