/* What the contact suites share (check_contacts.c,
 * check_contacts_friction.c): a run that writes its events file too, the
 * events parsed (names and numbers), and the adaptive methods the models
 * whose motion is not a polynomial run with. */
#ifndef HS_TESTS_CONTACTS_FIXTURE_H
#define HS_TESTS_CONTACTS_FIXTURE_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "physics_util.h"

typedef struct evrun {
    pu_result r;
    size_t n;                  /* event rows */
    char **name;               /* [n] */
    pu_table ev;               /* their numbers (t, ...) */
    char *text;
    size_t len;
} evrun;

static inline void parse_events(evrun *x)
{
    ck_assert_msg(x->len >= 6 && strncmp(x->text, "event,", 6) == 0, "no events header");
    char *rest = malloc(x->len + 1);
    size_t rl = 0, cap = 16;
    x->name = malloc(cap * sizeof *x->name);
    for (const char *p = x->text, *end = x->text + x->len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *c = memchr(p, ',', (size_t)(nl - p));
        ck_assert(nl && c);
        if (p != x->text) {
            if (x->n == cap)
                x->name = realloc(x->name, (cap *= 2) * sizeof *x->name);
            x->name[x->n++] = strndup(p, (size_t)(c - p));
        }
        memcpy(rest + rl, c + 1, (size_t)(nl - c));
        rl += (size_t)(nl - c);
        p = nl + 1;
    }
    pu_parse_csv(rest, rl, &x->ev);
    free(rest);
    ck_assert(x->ev.well_formed && x->ev.nrow == x->n);
}

static inline void run_events(const pu_args *a, evrun *x)
{
    memset(x, 0, sizeof *x);
    hs_model *m = pu_load(a);
    hs_error_init(&x->r.err);
    FILE *f = open_memstream(&x->r.csv, &x->r.csv_len);
    FILE *fe = open_memstream(&x->text, &x->len);
    hs_run_opts o = { .columns = a->columns, .precision = 17 };
    x->r.rc = run_csv(m, o, f, NULL, fe, &x->r.sum, &x->r.err);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(fclose(fe), 0);
    hs_model_free(m);
    ck_assert_msg(x->r.rc == 0, "run failed (exit %d): %s", x->r.rc, x->r.err.msg);
    pu_parse_csv(x->r.csv, x->r.csv_len, &x->r.tab);
    ck_assert(x->r.tab.well_formed && x->r.tab.nonfinite == 0);
    parse_events(x);
}

static inline void evrun_free(evrun *x)
{
    pu_result_free(&x->r);
    for (size_t i = 0; i < x->n; i++)
        free(x->name[i]);
    free(x->name);
    pu_table_free(&x->ev);
    free(x->text);
}

static inline double ev_at(const evrun *x, size_t row, const char *col)
{
    return PU_AT(&x->ev, row, pu_col(&x->ev, col));
}

/* the adaptive ones, for models whose motion is not a polynomial (a fixed
 * step would need a `step` of its own) */
static const char *const adaptive_methods[] = { "rk8pd", "rkf45", "dop853", "msadams", "msbdf" };

#endif
