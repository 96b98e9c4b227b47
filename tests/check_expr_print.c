/* Tests of printing with shared subexpressions (hs_printer, print.c) and
 * of hexadecimal literals (parse.c).  A shared print is checked by parsing
 * it back: each temporary line `_k = ...` defines a name for the lines
 * after it, and the last line must give the root node itself (hash-consing:
 * the same pointer is the same expression). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "expr/expr.h"

/* ---- reading a shared print back ---- */

typedef struct names {
    const char *prefix;
    const hs_node *temp[4096];   /* temp[k] = node of "<prefix>k" */
    size_t n;
} names;

static const hs_node *lookup(void *ctx, hs_dag *d, const char *name, size_t len, int primed,
                             size_t offset, int *status, hs_error *err)
{
    (void)offset;
    (void)err;
    names *nm = ctx;
    size_t pl = strlen(nm->prefix);
    if (!primed && len > pl && memcmp(name, nm->prefix, pl) == 0 &&
        strspn(name + pl, "0123456789") >= len - pl) {
        size_t k = (size_t)strtoul(name + pl, NULL, 10);
        if (k >= 1 && k <= nm->n) {
            *status = HS_RESOLVE_OK;
            return nm->temp[k];
        }
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%.*s%s", (int)len, name, primed > 1 ? "''" : primed ? "'" : "");
    int s = hs_dag_find_symbol(d, buf);
    *status = s < 0 ? HS_RESOLVE_UNKNOWN : HS_RESOLVE_OK;
    return s < 0 ? NULL : hs_sym(d, s);
}

/* Parse the lines of text: "<prefix>k = EXPR" lines define temporaries
 * (numbered 1, 2, ... in order); every other line "LABEL = EXPR" (or
 * just EXPR) gives the next entry of out[]. Returns how many. */
static size_t read_back(hs_dag *d, const char *text, const char *prefix, const hs_node **out,
                        size_t cap)
{
    names *nm = calloc(1, sizeof *nm);
    ck_assert_ptr_nonnull(nm);
    nm->prefix = prefix;
    hs_resolver r = {lookup, nm, NULL};
    size_t nout = 0;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        ck_assert_ptr_nonnull(end);
        const char *eq = strstr(line, " = ");
        const char *expr = eq && eq < end ? eq + 3 : line;
        while (*line == ' ')
            line++;
        hs_error err;
        hs_error_init(&err);
        const hs_node *e = hs_parse(d, expr, (size_t)(end - expr), 1, &r, &err);
        ck_assert_msg(e != NULL, "'%.*s': %s", (int)(end - line), line, err.msg);
        size_t pl = strlen(prefix);
        if (eq && strncmp(line, prefix, pl) == 0 && line[pl] >= '0' && line[pl] <= '9') {
            ck_assert_uint_eq(strtoul(line + pl, NULL, 10), nm->n + 1);
            ck_assert_uint_lt(nm->n + 1, sizeof nm->temp / sizeof nm->temp[0]);
            nm->temp[++nm->n] = e;
        } else {
            ck_assert_uint_lt(nout, cap);
            out[nout++] = e;
        }
        line = end + 1;
    }
    free(nm);
    return nout;
}

/* Print with hs_fprint_shared into a string (caller frees). */
static char *shared_text(const hs_dag *d, const hs_node *const *roots, const char *const *labels,
                         size_t n, size_t *len)
{
    char *buf = NULL;
    FILE *m = open_memstream(&buf, len);
    ck_assert_ptr_nonnull(m);
    hs_fprint_shared(m, d, roots, labels, n);
    fclose(m);
    return buf;
}

/* d1 = x + x^2, d_k = d_{k-1} + d_{k-1}^2: a tree of 2^k terms. */
static const hs_node *doubling(hs_dag *d, int k)
{
    const hs_node *x = hs_sym(d, hs_dag_symbol(d, "x"));
    const hs_node *e = hs_add(d, x, hs_mul(d, x, x));
    for (int i = 2; i <= k; i++)
        e = hs_add(d, e, hs_mul(d, e, e));
    return e;
}

START_TEST(test_doubling_chain)
{
    hs_dag *d = hs_dag_new();
    const hs_node *e = doubling(d, 30);
    const char *label = "d30";
    size_t len;
    char *text = shared_text(d, &e, &label, 1, &len);
    /* printed as a tree: gigabytes; shared: a few kilobytes */
    ck_assert_msg(len < 8000, "%zu bytes:\n%.2000s", len, text);
    ck_assert_ptr_nonnull(strstr(text, "\nd30 = "));
    ck_assert(strncmp(text, "_1 = ", 5) == 0);
    hs_printer *p = hs_printer_new(d, &e, 1);
    ck_assert_uint_ge(hs_printer_ntemps(p), 20);
    hs_printer_free(p);
    const hs_node *back;
    ck_assert_uint_eq(read_back(d, text, "_", &back, 1), 1);
    ck_assert_ptr_eq(back, e);
    free(text);
    hs_dag_free(d);
}
END_TEST

/* Small derivations print exactly as hs_fprint prints them, even with
 * sharing (the shipped models' `holosim derive` output is unchanged). */
START_TEST(test_small_prints_as_tree)
{
    hs_dag *d = hs_dag_new();
    int xs = hs_dag_symbol(d, "x");
    const hs_node *x = hs_sym(d, xs), *y = hs_sym(d, hs_dag_symbol(d, "y"));
    const hs_node *s = hs_call1(d, HS_SIN, hs_mul(d, x, y));
    const hs_node *roots[3] = {hs_add(d, hs_mul(d, s, s), s), hs_diff(d, hs_mul(d, s, s), xs),
                               hs_div(d, s, hs_add(d, s, hs_num(d, 1)))};
    const char *labels[3] = {"G", "dG/dx", "h"};
    hs_printer *p = hs_printer_new(d, roots, 3);
    ck_assert_ptr_nonnull(p);
    ck_assert_uint_eq(hs_printer_ntemps(p), 0);
    char *buf = NULL;
    size_t len;
    FILE *m = open_memstream(&buf, &len);
    for (int i = 0; i < 3; i++)
        hs_printer_line(p, m, "  ", labels[i], roots[i]);
    hs_printer_free(p);
    fclose(m);
    char want[2048], one[512];
    want[0] = '\0';
    for (int i = 0; i < 3; i++) {
        hs_format(d, roots[i], one, sizeof one);
        snprintf(want + strlen(want), sizeof want - strlen(want), "  %s = %s\n", labels[i], one);
    }
    ck_assert_str_eq(buf, want);
    free(buf);
    hs_dag_free(d);
}
END_TEST

/* A symbol that looks like a temporary moves the temporaries to "__". */
START_TEST(test_prefix_avoids_symbols)
{
    hs_dag *d = hs_dag_new();
    const hs_node *u = hs_sym(d, hs_dag_symbol(d, "_1"));
    const hs_node *e = hs_add(d, doubling(d, 12), u);
    size_t len;
    char *text = shared_text(d, &e, NULL, 1, &len);
    ck_assert(strncmp(text, "__1 = ", 6) == 0);
    ck_assert_ptr_nonnull(strstr(text, "\n_1 + x + "));   /* the symbol: its own name */
    const hs_node *back;
    ck_assert_uint_eq(read_back(d, text, "__", &back, 1), 1);
    ck_assert_ptr_eq(back, e);
    free(text);
    hs_dag_free(d);
}
END_TEST

/* Several roots share temporaries: each is defined once, before its first
 * use, whichever root needs it first; indentation on every line; a node
 * outside the roots prints as a tree. */
START_TEST(test_lines_and_roots)
{
    hs_dag *d = hs_dag_new();
    const hs_node *e = doubling(d, 14);
    const hs_node *x = hs_sym(d, hs_dag_find_symbol(d, "x"));
    const hs_node *roots[3] = {hs_call1(d, HS_SIN, e), hs_call1(d, HS_COS, e), hs_mul(d, e, x)};
    hs_printer *p = hs_printer_new(d, roots, 3);
    ck_assert_uint_gt(hs_printer_ntemps(p), 0);
    char *buf = NULL;
    size_t len;
    FILE *m = open_memstream(&buf, &len);
    static const char *const labels[3] = {"a", "b", "c"};
    for (int i = 0; i < 3; i++)
        hs_printer_line(p, m, "    ", labels[i], roots[i]);
    hs_printer_line(p, m, "    ", "other", hs_add(d, x, hs_num(d, 1)));
    hs_printer_free(p);
    fclose(m);
    for (const char *l = buf; *l; l = strchr(l, '\n') + 1)
        ck_assert(strncmp(l, "    ", 4) == 0 && l[4] != ' ');
    ck_assert_ptr_nonnull(strstr(buf, "    other = x + 1\n"));
    /* temporaries are defined once each */
    ck_assert_ptr_null(strstr(strstr(buf, "    _1 = ") + 1, "    _1 = "));
    const hs_node *back[4];
    ck_assert_uint_eq(read_back(d, buf, "_", back, 4), 4);
    for (int i = 0; i < 3; i++)
        ck_assert_ptr_eq(back[i], roots[i]);
    free(buf);
    hs_dag_free(d);
}
END_TEST

/* A shared comparison stays inside its if()s (a line `_k = a < b` would
 * not parse: comparisons exist only as conditions); its operands are
 * named. */
START_TEST(test_comparison_not_named)
{
    hs_dag *d = hs_dag_new();
    const hs_node *x = hs_sym(d, hs_dag_symbol(d, "x")), *y = hs_sym(d, hs_dag_symbol(d, "y"));
    const hs_node *c = hs_call2(d, HS_LT, doubling(d, 12), hs_call1(d, HS_SIN, doubling(d, 11)));
    const hs_node *roots[2] = {hs_if(d, c, x, y), hs_if(d, c, y, hs_mul(d, x, y))};
    size_t len;
    char *text = shared_text(d, roots, NULL, 2, &len);
    ck_assert(strncmp(text, "_1 = ", 5) == 0);
    ck_assert_ptr_null(strstr(text, " = if"));
    const hs_node *back[2];
    ck_assert_uint_eq(read_back(d, text, "_", back, 2), 2);
    ck_assert_ptr_eq(back[0], roots[0]);
    ck_assert_ptr_eq(back[1], roots[1]);
    for (const char *l = text; *l; l = strchr(l, '\n') + 1)
        if (l[0] == '_') {
            const char *eq = strstr(l, " = "), *lt = strstr(l, " < ");
            ck_assert_msg(!lt || lt > strchr(l, '\n') || eq > lt, "%.80s", l);
        }
    free(text);
    hs_dag_free(d);
}
END_TEST

/* A derivative with a shared sub-product: printed linearly, read back. */
START_TEST(test_derivative_shared)
{
    hs_dag *d = hs_dag_new();
    int xs = hs_dag_symbol(d, "x");
    const hs_node *x = hs_sym(d, xs), *f[100];
    for (int i = 0; i < 100; i++)
        f[i] = hs_call1(d, HS_SIN, hs_add(d, x, hs_num(d, i + 1)));
    const hs_node *g = hs_muln(d, f, 100);
    const hs_node *roots[2] = {hs_diff(d, g, xs), hs_diff(d, hs_diff(d, g, xs), xs)};
    size_t len;
    char *text = shared_text(d, roots, NULL, 2, &len);
    ck_assert_msg(len < 100000, "%zu bytes", len);      /* as a tree: 210 kB */
    ck_assert(strncmp(text, "_1 = ", 5) == 0);
    const hs_node *back[2];
    ck_assert_uint_eq(read_back(d, text, "_", back, 2), 2);
    ck_assert_ptr_eq(back[0], roots[0]);
    ck_assert_ptr_eq(back[1], roots[1]);
    free(text);
    hs_dag_free(d);
}
END_TEST

/* ---- hexadecimal literals ---- */

static const struct {
    const char *text;
    double value;
} hex_ok[] = {
    {"0x10", 16}, {"0X1f", 31}, {"0x1p3", 8}, {"0x1.8p1", 3}, {"0X1P-2", 0.25},
    {"0x.8", 0.5}, {"0x1e3", 483}, {"0xff + 1", 256}, {"2*0x10^2", 512}, {"-0x1p-1", -0.5},
};

START_TEST(test_hex_values)
{
    hs_dag *d = hs_dag_new();
    hs_error err;
    hs_error_init(&err);
    const char *t = hex_ok[_i].text;
    const hs_node *e = hs_parse(d, t, strlen(t), 0, NULL, &err);
    ck_assert_msg(e && e->kind == HS_NUM, "'%s': %s", t, err.msg);
    ck_assert_msg(e->value == hex_ok[_i].value, "'%s' = %.17g", t, e->value);
    hs_dag_free(d);
}
END_TEST

static const struct {
    const char *text, *msg;
    int column;
} hex_bad[] = {
    {"0x", "malformed number '0x' (numbers are written 12, 1.5, 2e-3 or "
     "0x1.8p3; a product is 2*x)", 1},
    {"1 + 0xg", "malformed number '0xg' (numbers are written 12, 1.5, 2e-3 or "
     "0x1.8p3; a product is 2*x)", 5},
    {"0x1p", "malformed number '0x1p' (numbers are written 12, 1.5, 2e-3 or "
     "0x1.8p3; a product is 2*x)", 1},
    {"2*0x1p+", "malformed number '0x1p+' (numbers are written 12, 1.5, 2e-3 or "
     "0x1.8p3; a product is 2*x)", 3},
    {"0x10y", "malformed number '0x10y' (numbers are written 12, 1.5, 2e-3 or "
     "0x1.8p3; a product is 2*x)", 1},
    {"0x1.2.3", "malformed number '0x1.2.3' (numbers are written 12, 1.5, 2e-3 or "
     "0x1.8p3; a product is 2*x)", 1},
    {"0x1p99999", "number out of range '0x1p99999' (the largest finite number is about "
     "1.8e308)", 1},
};

START_TEST(test_hex_errors)
{
    hs_dag *d = hs_dag_new();
    hs_error err;
    hs_error_init(&err);
    const char *t = hex_bad[_i].text;
    ck_assert_ptr_null(hs_parse(d, t, strlen(t), 0, NULL, &err));
    ck_assert_int_eq(err.code, HS_EXIT_MODEL);
    ck_assert_str_eq(err.msg, hex_bad[_i].msg);
    ck_assert_int_eq(err.line, 1);
    ck_assert_int_eq(err.column, hex_bad[_i].column);
    hs_dag_free(d);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("expr_print");
    TCase *tc = tcase_create("core");
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
    tcase_add_test(tc, test_doubling_chain);
    tcase_add_test(tc, test_small_prints_as_tree);
    tcase_add_test(tc, test_prefix_avoids_symbols);
    tcase_add_test(tc, test_lines_and_roots);
    tcase_add_test(tc, test_comparison_not_named);
    tcase_add_test(tc, test_derivative_shared);
    tcase_add_loop_test(tc, test_hex_values, 0, N(hex_ok));
    tcase_add_loop_test(tc, test_hex_errors, 0, N(hex_bad));
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
