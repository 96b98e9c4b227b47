/* Helpers shared by the physics tests (tests/check_physics.c,
 * tests/check_forms.c): run a model (a file in models/ or a text) with
 * overrides through hs_run into an in-memory buffer, and read the CSV back
 * into a table of doubles addressed by column name.
 *
 *     pu_args a = pu_defaults();
 *     a.path = PU_MODEL("pendulum.yaml");
 *     a.method = "rkf45";
 *     pu_set(&a, "theta0", 2.5);
 *     pu_result r;
 *     pu_run_ok(&a, &r);                      // ck_asserts exit 0
 *     size_t x = pu_col(&r.tab, "x");         // ck_asserts the column exists
 *     double x5 = PU_AT(&r.tab, 5, x);
 *     pu_result_free(&r);
 *
 * The CSV is parsed strictly: a header, then rows with exactly as many
 * numbers as the header has names; r.tab.well_formed says whether that held
 * and r.tab.nonfinite counts NaN/Inf values. */
#ifndef HS_PHYSICS_UTIL_H
#define HS_PHYSICS_UTIL_H

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "integrate/integrate.h"
#include "model/model.h"
#include "util/error.h"
#include "run_csv.h"

/* Model files are found relative to the repository root (where `make
 * check` runs the tests); HOLOSIM_MODELS overrides the directory. */
#define PU_MODEL(file) pu_model_path(file)

static inline const char *pu_models_dir(void)
{
    const char *dir = getenv("HOLOSIM_MODELS");
    if (!dir)
        dir = access("models/pendulum.yaml", R_OK) == 0 ? "models" : "../../../models";
    return dir;
}

/* A small ring of buffers: a few paths may be alive at once. */
static inline const char *pu_model_path(const char *file)
{
    static char buf[8][1024];
    static int next;
    char *b = buf[next++ % 8];
    snprintf(b, sizeof buf[0], "%s/%s", pu_models_dir(), file);
    return b;
}

#define PU_PI 3.14159265358979323846

#define PU_MAXSET 8

typedef struct pu_args {
    const char *path;          /* model file, or NULL: use text */
    const char *text;          /* model text (name "<test>") */
    const char *method;        /* NULL: the model's */
    double t_end, dt, rtol, atol;   /* NAN: the model's */
    double step;               /* the fixed-step methods' step (NAN: the model's) */
    int stabilize;             /* -1: the model's, else an hs_stab */
    int interpolate;           /* -1: the model's, 0 exact, 1 interpolate */
    const char *columns;       /* NULL: default columns */
    size_t nset;
    const char *set_name[PU_MAXSET];
    double set_value[PU_MAXSET];
} pu_args;

static inline pu_args pu_defaults(void)
{
    pu_args a;
    memset(&a, 0, sizeof a);
    a.t_end = a.dt = a.rtol = a.atol = a.step = NAN;
    a.stabilize = a.interpolate = -1;
    return a;
}

static inline void pu_set(pu_args *a, const char *name, double value)
{
    ck_assert_uint_lt(a->nset, PU_MAXSET);
    a->set_name[a->nset] = name;
    a->set_value[a->nset++] = value;
}

typedef struct pu_table {
    size_t ncol, nrow;
    char **name;               /* [ncol] */
    double *v;                 /* [nrow * ncol] row-major */
    int well_formed;           /* header + complete numeric rows */
    size_t nonfinite;          /* NaN / Inf values seen */
} pu_table;

#define PU_AT(tab, row, col) ((tab)->v[(size_t)(row) * (tab)->ncol + (size_t)(col)])

typedef struct pu_result {
    int rc;                    /* hs_run's (or the loader's) exit code */
    hs_error err;
    hs_summary sum;
    pu_table tab;
    char *csv;                 /* the raw CSV text */
    size_t csv_len;
} pu_result;

static inline void pu_table_free(pu_table *t)
{
    for (size_t i = 0; i < t->ncol; i++)
        free(t->name[i]);
    free(t->name);
    free(t->v);
    memset(t, 0, sizeof *t);
}

/* Parse CSV text strictly into t. */
static inline void pu_parse_csv(const char *s, size_t len, pu_table *t)
{
    memset(t, 0, sizeof *t);
    t->well_formed = 1;
    const char *end = s + len, *nl = memchr(s, '\n', len);
    if (!nl) {
        t->well_formed = 0;
        return;
    }
    size_t cap = 8;
    t->name = malloc(cap * sizeof *t->name);
    ck_assert_ptr_nonnull(t->name);
    for (const char *p = s; p < nl;) {
        const char *c = memchr(p, ',', (size_t)(nl - p));
        const char *e = c ? c : nl;
        if (t->ncol == cap) {
            cap *= 2;
            t->name = realloc(t->name, cap * sizeof *t->name);
            ck_assert_ptr_nonnull(t->name);
        }
        t->name[t->ncol++] = strndup(p, (size_t)(e - p));
        p = e + 1;
        if (!c)
            break;
    }
    size_t rcap = 64;
    t->v = malloc(rcap * t->ncol * sizeof *t->v);
    ck_assert_ptr_nonnull(t->v);
    for (const char *p = nl + 1; p < end;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) {            /* a row without its newline: incomplete */
            t->well_formed = 0;
            break;
        }
        if (t->nrow == rcap) {
            rcap *= 2;
            t->v = realloc(t->v, rcap * t->ncol * sizeof *t->v);
            ck_assert_ptr_nonnull(t->v);
        }
        double *row = t->v + t->nrow * t->ncol;
        const char *q = p;
        for (size_t j = 0; j < t->ncol; j++) {
            char *after;
            row[j] = strtod(q, &after);
            if (after == q || (j + 1 < t->ncol ? *after != ',' : after != eol)) {
                t->well_formed = 0;
                return;
            }
            if (!isfinite(row[j]))
                t->nonfinite++;
            q = after + 1;
        }
        t->nrow++;
        p = eol + 1;
    }
}

/* Column index by name; fails the test when there is none. */
static inline size_t pu_col(const pu_table *t, const char *name)
{
    for (size_t j = 0; j < t->ncol; j++)
        if (strcmp(t->name[j], name) == 0)
            return j;
    ck_abort_msg("no column '%s' in the CSV", name);
    return 0;
}

static inline int pu_has_col(const pu_table *t, const char *name)
{
    for (size_t j = 0; j < t->ncol; j++)
        if (strcmp(t->name[j], name) == 0)
            return 1;
    return 0;
}

static inline hs_overrides pu_overrides(const pu_args *a)
{
    hs_overrides ov;
    hs_overrides_init(&ov);
    ov.nset = a->nset;
    ov.set_name = a->set_name;
    ov.set_value = a->set_value;
    if (a->method)
        snprintf(ov.s.method, sizeof ov.s.method, "%s", a->method);
    ov.s.t_end = a->t_end;
    ov.s.dt = a->dt;
    ov.s.rtol = a->rtol;
    ov.s.atol = a->atol;
    ov.s.step = a->step;
    if (a->stabilize >= 0) {
        ov.has_stabilize = 1;
        ov.s.stabilize = (hs_stab)a->stabilize;
    }
    if (a->interpolate >= 0) {
        ov.has_output = 1;
        ov.s.interpolate = a->interpolate;
    }
    return ov;
}

/* Load the model of `a` (fails the test if it does not load). */
static inline hs_model *pu_load(const pu_args *a)
{
    hs_overrides ov = pu_overrides(a);
    hs_error err;
    hs_error_init(&err);
    hs_model *m = a->path ? hs_model_load(a->path, &ov, &err)
                          : hs_model_load_string("<test>", a->text, &ov, &err);
    ck_assert_msg(m != NULL, "model %s does not load: %s:%d:%d: %s",
                  a->path ? a->path : "<text>", err.file, err.line, err.column, err.msg);
    return m;
}

/* Run an already loaded model into r. */
static inline void pu_run_model(const hs_model *m, const char *columns, pu_result *r)
{
    memset(r, 0, sizeof *r);
    hs_error_init(&r->err);
    FILE *f = open_memstream(&r->csv, &r->csv_len);
    ck_assert_ptr_nonnull(f);
    hs_run_opts o = { .columns = columns, .precision = 17 };  /* rest 0 / NULL */
    r->rc = run_csv(m, o, f, NULL, NULL, &r->sum, &r->err);
    ck_assert_int_eq(fclose(f), 0);
    pu_parse_csv(r->csv, r->csv_len, &r->tab);
}

/* Load and run; r->rc says how the run ended. */
static inline void pu_run(const pu_args *a, pu_result *r)
{
    hs_model *m = pu_load(a);
    pu_run_model(m, a->columns, r);
    hs_model_free(m);
}

/* Load and run; the run must succeed with a well-formed, finite CSV. */
static inline void pu_run_ok(const pu_args *a, pu_result *r)
{
    pu_run(a, r);
    ck_assert_msg(r->rc == 0, "%s: run failed (exit %d): %s",
                  a->path ? a->path : "<text>", r->rc, r->err.msg);
    ck_assert_msg(r->tab.well_formed, "malformed CSV");
    ck_assert_msg(r->tab.nonfinite == 0, "non-finite values in the CSV");
    ck_assert_uint_gt(r->tab.nrow, 0);
}

static inline void pu_result_free(pu_result *r)
{
    pu_table_free(&r->tab);
    free(r->csv);
    r->csv = NULL;
}

/* max over rows of |col(a) - col(b)| (tables of equal shape in rows). */
static inline double pu_maxdiff(const pu_table *a, const char *ca, const pu_table *b,
                                const char *cb)
{
    ck_assert_uint_eq(a->nrow, b->nrow);
    size_t ia = pu_col(a, ca), ib = pu_col(b, cb);
    double d = 0;
    for (size_t i = 0; i < a->nrow; i++)
        d = fmax(d, fabs(PU_AT(a, i, ia) - PU_AT(b, i, ib)));
    return d;
}

/* max over rows of |col| */
static inline double pu_maxabs(const pu_table *t, const char *c)
{
    size_t j = pu_col(t, c);
    double d = 0;
    for (size_t i = 0; i < t->nrow; i++)
        d = fmax(d, fabs(PU_AT(t, i, j)));
    return d;
}

#endif
