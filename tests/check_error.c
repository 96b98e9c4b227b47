/* src/util/error.[ch]: errors as values (error.h): first kept, the one out-of-memory
 * path, context appended, codes changed, errors carried between contexts,
 * the printed form. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "util/error.h"

START_TEST(first_kept)
{
    hs_error e;
    hs_error_init(&e);
    ck_assert_int_eq(hs_error_set(&e, HS_EXIT_MODEL, "first %d", 1), HS_EXIT_MODEL);
    ck_assert_int_eq(hs_error_set(&e, HS_EXIT_NUMERIC, "second"), HS_EXIT_MODEL);
    ck_assert_int_eq(hs_error_nomem(&e), HS_EXIT_MODEL);
    ck_assert_str_eq(e.msg, "first 1");
}
END_TEST

START_TEST(nomem)
{
    hs_error e;
    hs_error_init(&e);
    ck_assert_int_eq(hs_error_nomem(&e), HS_EXIT_NOMEM);
    ck_assert_int_eq(HS_EXIT_NOMEM, 5);
    ck_assert_str_eq(e.msg, "out of memory");
    ck_assert_int_eq(e.line, 0);
    /* out of memory stays out of memory, whoever recodes it */
    ck_assert_int_eq(hs_error_recode(&e, HS_EXIT_USAGE), HS_EXIT_NOMEM);
    hs_error d;
    hs_error_init(&d);
    ck_assert_int_eq(hs_error_adopt(&d, &e, HS_EXIT_NUMERIC), HS_EXIT_NOMEM);
}
END_TEST

START_TEST(append)
{
    hs_error e;
    hs_error_init(&e);
    ck_assert_int_eq(hs_error_append(&e, "ignored"), 0);   /* nothing recorded */
    ck_assert_str_eq(e.msg, "");
    hs_error_set(&e, HS_EXIT_NUMERIC, "step size underflow");
    hs_error_append(&e, "; at %s=%g", "x", 0.5);
    ck_assert_str_eq(e.msg, "step size underflow; at x=0.5");
    for (int i = 0; i < 200; i++)                       /* cut at the capacity */
        hs_error_append(&e, ", more context");
    ck_assert_uint_eq(strlen(e.msg), sizeof e.msg - 1);
    ck_assert_int_eq(e.code, HS_EXIT_NUMERIC);
}
END_TEST

START_TEST(recode_adopt)
{
    hs_error w, e;
    hs_error_init(&w);
    hs_error_init(&e);
    ck_assert_int_eq(hs_error_recode(&e, HS_EXIT_USAGE), 0);   /* nothing to recode */
    ck_assert_int_eq(hs_error_adopt(&e, &w, HS_EXIT_MODEL), 0); /* nothing to carry */
    hs_error_set(&w, HS_EXIT_NUMERIC, "log of a negative number at t=0");
    w.line = 3;
    w.column = 7;
    ck_assert_int_eq(hs_error_adopt(&e, &w, HS_EXIT_MODEL), HS_EXIT_MODEL);
    ck_assert_str_eq(e.msg, w.msg);
    ck_assert_int_eq(e.line, 3);
    ck_assert_int_eq(e.column, 7);
    ck_assert_int_eq(w.code, HS_EXIT_NUMERIC);                  /* the source untouched */
    /* e holds an error: a second one is not copied over it, nor recoded */
    hs_error x;
    hs_error_init(&x);
    hs_error_set(&x, HS_EXIT_INCONSISTENT, "other");
    ck_assert_int_eq(hs_error_adopt(&e, &x, HS_EXIT_NUMERIC), HS_EXIT_MODEL);
    ck_assert_str_eq(e.msg, w.msg);
    ck_assert_int_eq(hs_error_recode(&e, HS_EXIT_INCONSISTENT), HS_EXIT_INCONSISTENT);
    ck_assert_int_eq(hs_error_adopt(&x, &w, 0), HS_EXIT_INCONSISTENT);
}
END_TEST

START_TEST(printed)
{
    hs_error e;
    hs_error_init(&e);
    hs_error_set(&e, HS_EXIT_MODEL, "unknown name 'q'");
    snprintf(e.file, sizeof e.file, "m.yaml");
    const char *text = "a: 1\nb: q + 1\n";
    hs_error_locate(&e, text, strlen(text), 8);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hs_error_print(&e, f);
    fclose(f);
    ck_assert_str_eq(buf, "m.yaml:2:4: error: unknown name 'q'\n    b: q + 1\n       ^\n");
    free(buf);
}
END_TEST

/* The exit codes: one table, in increasing order, 0 to 5 and the
 * interrupts among them; holosim(1)'s EXIT STATUS names every code. */
START_TEST(exit_table)
{
    int prev = -1, n = 0, seen[6] = { 0 }, interrupt = 0;
    for (const hs_exit_code *e = hs_exit_codes; e->text; e++, n++) {
        ck_assert_int_gt(e->code, prev);
        ck_assert_str_eq(hs_exit_text(e->code), e->text);
        if (e->code <= HS_EXIT_NOMEM)
            seen[e->code] = 1;
        interrupt |= e->code == HS_EXIT_INTERRUPT;
        prev = e->code;
    }
    for (int i = 0; i <= HS_EXIT_NOMEM; i++)
        ck_assert_msg(seen[i], "exit code %d missing", i);
    ck_assert(interrupt && HS_EXIT_INTERRUPT == 128 + 2);
    ck_assert_str_eq(hs_exit_text(77), "unknown exit code");
    FILE *f = fopen("man/holosim.1", "r");
    ck_assert_msg(f != NULL, "run from the repository's root");
    static char man[1 << 18];
    size_t len = fread(man, 1, sizeof man - 1, f);
    fclose(f);
    man[len] = '\0';
    const char *sec = strstr(man, ".SH EXIT STATUS"), *end = sec ? strstr(sec + 1, "\n.SH ") : NULL;
    ck_assert(sec && end);
    for (const hs_exit_code *e = hs_exit_codes; e->text; e++) {
        char a[32], b[32], c[32];
        snprintf(a, sizeof a, ".B %d\n", e->code);
        snprintf(b, sizeof b, ".BR %d ", e->code);
        snprintf(c, sizeof c, "\" %d", e->code);     /* .BR 130 ", " 143 */
        const char *p = strstr(sec, a), *q = strstr(sec, b), *r = strstr(sec, c);
        ck_assert_msg((p && p < end) || (q && q < end) || (r && r < end),
                      "holosim(1) EXIT STATUS does not name %d (%s)", e->code, e->text);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("error");
    TCase *tc = tcase_create("errors");
    tcase_add_test(tc, first_kept);
    tcase_add_test(tc, nomem);
    tcase_add_test(tc, append);
    tcase_add_test(tc, recode_adopt);
    tcase_add_test(tc, printed);
    tcase_add_test(tc, exit_table);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
