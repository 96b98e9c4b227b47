/* Hostile inputs (issue 19): what must neither crash, nor take quadratic
 * time, nor write a non-finite number, nor lose or clobber data.
 *
 *   chains      parameters p0: p1, ..., and defines d0: d1, ... of 1,500
 *               to 100,000 links load (dependency order, no recursion),
 *               with the right values, cycles found at the right place
 *   linear      100,000 parameters with a duplicate key, found at its line
 *   columns     every name that would make a second CSV column of one
 *               name refused at its position, naming the other; and, for a
 *               rich model, every column `all` lists, used as an output
 *               name, refused
 *   finite      a huge mass: exit 4 naming column E and t=0, no file
 *               created, an existing one untouched; an overflow after the
 *               first row: that row complete, no inf or nan anywhere
 *   out         the writer keeps rows whole: a cancelled row vanishes, a
 *               row longer than the buffer is written whole, nothing (not
 *               even a file) before the first row
 *   overflow    C = G_q M^-1 G_q^T beyond double range is "overflow", not
 *               "losing rank"
 *   set         repeated --set of a name: the last one wins */
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "integrate/integrate.h"
#include "io/columns.h"
#include "io/out.h"
#include "model/model.h"
#include "run_csv.h"

/* ---- a growing string ---- */

typedef struct sbuf {
    char *s;
    size_t len, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    ck_assert_int_ge(n, 0);
    if (b->len + (size_t)n + 1 > b->cap) {
        b->cap = 2 * (b->len + (size_t)n + 1);
        b->s = realloc(b->s, b->cap);
        ck_assert_ptr_nonnull(b->s);
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static hs_model *load(const char *text, const hs_overrides *ov, hs_error *err)
{
    hs_overrides none;
    hs_overrides_init(&none);
    hs_error_init(err);
    return hs_model_load_string("hostile.yaml", text, ov ? ov : &none, err);
}

/* The load fails with this code, position and message part. */
static void load_fails(const char *text, int code, int line, int col, const char *part)
{
    hs_error err;
    hs_model *m = load(text, NULL, &err);
    if (m)
        hs_model_free(m);
    ck_assert_msg(!m, "loaded; wanted an error containing '%s'", part);
    ck_assert_int_eq(err.code, code);
    ck_assert_msg(strstr(err.msg, part), "message '%s' lacks '%s'", err.msg, part);
    ck_assert_int_eq(err.line, line);
    ck_assert_int_eq(err.column, col);
}

static long param_index(const hs_model *m, const char *name)
{
    for (size_t i = 0; i < m->npar; i++)
        if (strcmp(m->pname[i], name) == 0)
            return (long)i;
    return -1;
}

/* ---- chains ---- */

#define TAIL "coordinates: [x]\nmass: [1]\npotential: %s\ninitial: {q: {x: 1}}\n" \
             "simulate: {t_end: 1}\n"

/* p0: p1, ..., p(n-1): 1.5 (reversed: the last link first in the file). */
static char *param_chain(size_t n, int reversed, const char *last)
{
    sbuf b = { 0 };
    sb_printf(&b, "parameters:\n");
    for (size_t k = 0; k < n; k++) {
        size_t i = reversed ? n - 1 - k : k;
        if (i + 1 < n)
            sb_printf(&b, "  p%zu: p%zu\n", i, i + 1);
        else
            sb_printf(&b, "  p%zu: %s\n", i, last);
    }
    sb_printf(&b, TAIL, "p0*x^2");
    return b.s;
}

static void chain_values(size_t n, int reversed)
{
    char *text = param_chain(n, reversed, "1.5");
    hs_error err;
    double t0 = now();
    hs_model *m = load(text, NULL, &err);
    double dt = now() - t0;
    ck_assert_msg(m, "%s", err.msg);
    ck_assert_uint_eq(m->npar, n);
    for (size_t i = 0; i < n; i++)
        ck_assert(m->pval[i] == 1.5);
    /* linear: 100,000 links load in well under the 10 s of a hostile file
     * (about 1 s in a release build; the bound allows a sanitizer build) */
    ck_assert_msg(dt < 10, "%zu links took %.2f s", n, dt);
    hs_model_free(m);
    free(text);
}

START_TEST(param_chain_1500) { chain_values(1500, 0); }
END_TEST
START_TEST(param_chain_1500_reversed) { chain_values(1500, 1); }
END_TEST
START_TEST(param_chain_100k) { chain_values(100000, 0); }
END_TEST

/* A cycle closed at the far end of a long chain: reported at p0 (line 2),
 * the entry found again while its turn was under way. */
START_TEST(param_chain_cycle)
{
    char *text = param_chain(3000, 0, "p0 + 1");
    load_fails(text, 2, 2, 3, "parameter 'p0' depends on itself");
    free(text);
}
END_TEST

static char *define_chain(size_t n, const char *last)
{
    sbuf b = { 0 };
    sb_printf(&b, "define:\n");
    for (size_t i = 0; i + 1 < n; i++)
        sb_printf(&b, "  d%zu: d%zu\n", i, i + 1);
    sb_printf(&b, "  d%zu: %s\n", n - 1, last);
    sb_printf(&b, TAIL, "d0^2");
    return b.s;
}

static void define_values(size_t n)
{
    char *text = define_chain(n, "3*x");
    hs_error err;
    hs_model *m = load(text, NULL, &err);
    ck_assert_msg(m, "%s", err.msg);
    /* U = (3x)^2 = 9 x^2, Q = -18 x */
    double *in = calloc((size_t)hs_dag_nsymbols(m->dag), sizeof *in);
    in[m->sym_q[0]] = 2;
    ck_assert_double_eq_tol(hs_eval_tree(m->U, in), 36, 1e-12);
    ck_assert_double_eq_tol(hs_eval_tree(m->Q[0], in), -36, 1e-12);
    free(in);
    hs_model_free(m);
    free(text);
}

START_TEST(define_chain_2000) { define_values(2000); }
END_TEST
START_TEST(define_chain_100k) { define_values(100000); }
END_TEST

START_TEST(define_chain_cycle)
{
    char *text = define_chain(2500, "d0 * x");
    load_fails(text, 2, 2, 3, "define 'd0' refers to itself");
    free(text);
}
END_TEST

/* What the dependency scan must read as it is read by the parser: `2e5`
 * is a number (no define e5 mentioned by it), `f(` a call, `q'` a velocity. */
START_TEST(define_scan_like_parser)
{
    const char *text = "define:\n  a: 2e5 + e5 + 1.5e-3*b\n  e5: x\n  b: x^2\n"
                       "coordinates: [x]\nmass: [1]\npotential: a\n"
                       "initial: {q: {x: 1}}\nsimulate: {t_end: 1}\n";
    hs_error err;
    hs_model *m = load(text, NULL, &err);
    ck_assert_msg(m, "%s", err.msg);
    double *in = calloc((size_t)hs_dag_nsymbols(m->dag), sizeof *in);
    in[m->sym_q[0]] = 2;
    ck_assert_double_eq_tol(hs_eval_tree(m->U, in), 2e5 + 2 + 1.5e-3 * 4, 1e-9);
    free(in);
    hs_model_free(m);
    /* a name followed by '(' is a call: no cycle, an unknown function */
    load_fails("define:\n  a: a(x)\ncoordinates: [x]\nmass: [1]\npotential: a\n"
               "initial: {q: {x: 1}}\n", 2, 2, 6, "unknown function 'a'");
}
END_TEST

/* 100,000 parameters with one duplicate key at the end: found at its line,
 * in linear time. */
START_TEST(duplicate_key_100k)
{
    sbuf b = { 0 };
    sb_printf(&b, "parameters:\n");
    for (int i = 0; i < 100000; i++)
        sb_printf(&b, "  p%d: %d\n", i, i);
    sb_printf(&b, "  p77: 1\n");
    sb_printf(&b, TAIL, "p1*x^2");
    double t0 = now();
    load_fails(b.s, 2, 100002, 3, "duplicate key 'p77' in 'parameters'");
    ck_assert_double_lt(now() - t0, 10);
    free(b.s);
}
END_TEST

/* --set p=... twice: the last wins, derived parameters follow it. */
START_TEST(set_last_wins)
{
    const char *text = "parameters:\n  a: 1\n  b: 2*a\n" TAIL;
    char buf[512];
    snprintf(buf, sizeof buf, text, "b*x^2");
    const char *names[] = { "a", "a", "a" };
    const double vals[] = { 5, 7, NAN };
    const char *texts[] = { NULL, NULL, "3 + 4*pi" };
    hs_overrides ov;
    hs_overrides_init(&ov);
    ov.nset = 2;
    ov.set_name = names;
    ov.set_value = vals;
    hs_error err;
    hs_model *m = load(buf, &ov, &err);
    ck_assert_msg(m, "%s", err.msg);
    ck_assert(m->pval[param_index(m, "a")] == 7);
    ck_assert(m->pval[param_index(m, "b")] == 14);
    hs_model_free(m);
    ov.nset = 3;                  /* a text after two numbers: the text wins */
    ov.set_text = texts;
    m = load(buf, &ov, &err);
    ck_assert_msg(m, "%s", err.msg);
    ck_assert_double_eq_tol(m->pval[param_index(m, "b")], 2 * (3 + 4 * 3.14159265358979323846), 1e-12);
    hs_model_free(m);
}
END_TEST

/* ---- columns: two columns of one name ---- */

typedef struct col_case {
    const char *name, *text;
    int line, col;
    const char *msg;
} col_case;

#define PEND_CS(extra)                                                          \
    "coordinates: [x, y]\nmass: [1, 1]\npotential: 9.81*y\n"                    \
    "constraints:\n  rod: x^2 + y^2 - 1\ninitial: {q: {x: 0.6, y: -0.8}}\n"      \
    "simulate: {t_end: 1}\n" extra

static const col_case col_cases[] = {
    {"output_W_R", PEND_CS("outputs:\n  W_R: x\n"), 9, 3,
     "'W_R' is reserved and cannot name an entry of 'outputs': it names the work of the "
     "reactions W_R, a column"},
    {"output_energy_balance", PEND_CS("outputs:\n  energy_balance: x\n"), 9, 3,
     "it names the energy balance energy_balance"},
    {"output_W_nc", PEND_CS("outputs:\n  a: y\n  W_nc: x\n"), 10, 3, "'W_nc'"},
    {"output_W_t", PEND_CS("outputs:\n  W_t: x\n"), 9, 3, "'W_t'"},
    {"output_H", PEND_CS("outputs:\n  H: x\n"), 9, 3, "'H'"},
    {"output_lambda", PEND_CS("outputs:\n  lambda_rod: x\n"), 9, 3,
     "output 'lambda_rod' would hide lambda_rod, the multiplier of constraint 'rod' (line "
     "5, column 3), a column outputs and events read: rename the output"},
    {"output_G", PEND_CS("outputs:\n  G_rod: x\n"), 9, 3, "constraint 'rod' (line 5"},
    {"output_Gdot", PEND_CS("outputs:\n  Gdot_rod: x\n"), 9, 3, "constraint 'rod' (line 5"},
    {"output_reaction", PEND_CS("outputs:\n  R_y: x\n"), 9, 3,
     "output 'R_y' would hide R_y, the reaction on coordinate 'y' (line 1, column 18)"},
    {"coordinate_G_of_constraint",
     "coordinates: [x, y, G_rod]\nmass: [1, 1, 1]\nconstraints:\n  rod: x^2 + y^2 - 1\n"
     "initial: {q: {x: 0.6, y: -0.8, G_rod: 0}}\nsimulate: {t_end: 1}\n", 1, 21,
     "coordinate 'G_rod' would hide G_rod, the residual of constraint 'rod' (line 4, "
     "column 3), a column: rename the coordinate"},
    {"coordinate_W_R",
     "coordinates: [x, W_R]\nmass: [1, 1]\ninitial: {q: {x: 0, W_R: 0}}\n", 1, 18,
     "'W_R' is reserved and cannot be a coordinate: it names the work of the reactions"},
    {"list_constraint_output",
     "coordinates: [x, y]\nmass: [1, 1]\nconstraints: [x^2 + y^2 - 1]\n"
     "initial: {q: {x: 0.6, y: -0.8}}\noutputs:\n  lambda_1: x\n", 6, 3,
     "constraint '1' (line 3, column 15)"},
    {"output_is_ambient_name",
     "coordinates: [th]\nembedding:\n  px: sin(th)\n  py: -cos(th)\nmass: [1, 1]\n"
     "initial: {q: {th: 0.1}}\noutputs:\n  px: th\n", 3, 3,
     "ambient name 'px' has the name of an output (line 8, column 3): rename one of them"},
};

START_TEST(column_clashes)
{
    const col_case *c = &col_cases[_i];
    hs_error err;
    hs_model *m = load(c->text, NULL, &err);
    if (m)
        hs_model_free(m);
    ck_assert_msg(!m, "%s: loaded", c->name);
    ck_assert_int_eq(err.code, 2);
    ck_assert_msg(strstr(err.msg, c->msg), "%s: '%s' lacks '%s'", c->name, err.msg, c->msg);
    ck_assert_msg(err.line == c->line && err.column == c->col, "%s: at %d:%d, wanted %d:%d",
                  c->name, err.line, err.column, c->line, c->col);
}
END_TEST

static int is_name(const char *s)
{
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
        return 0;
    for (; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9')))
            return 0;
    return 1;
}

/* Every column `all` has (for a model with a coordinate, a constraint, an
 * output and ambient names), taken as the name of one more output: refused
 * (a reserved word, a coordinate's name or a column clash; never a second
 * column).  A column added to io/columns.c without the loader knowing it
 * fails here. */
START_TEST(every_column_name_refused_as_output)
{
    const char *base = "coordinates: [th, r]\nembedding:\n  px: r*sin(th)\n  py: -r*cos(th)\n"
                       "mass: [1, 1]\nconstraints:\n  len: r - 1\n"
                       "initial: {q: {th: 0.1, r: 1}}\noutputs:\n  ang: th\n";
    hs_error err;
    hs_model *m = load(base, NULL, &err);
    ck_assert_msg(m, "%s", err.msg);
    hs_columns all;
    ck_assert_int_eq(hs_columns_select(m, "all", &all, &err), 0);
    size_t tried = 0;
    for (size_t i = 0; i < all.n; i++)
        for (size_t j = 0; j < i; j++)
            ck_assert_msg(strcmp(all.c[i].name, all.c[j].name) != 0, "two columns '%s'",
                          all.c[i].name);
    for (size_t i = 0; i < all.n; i++) {
        if (!is_name(all.c[i].name))
            continue;               /* x', x'': not a name an output can have */
        char text[1024];
        snprintf(text, sizeof text, "%s  %s: th\n", base, all.c[i].name);
        hs_model *m2 = load(text, NULL, &err);
        if (m2)
            hs_model_free(m2);
        ck_assert_msg(!m2, "an output named '%s' was accepted", all.c[i].name);
        ck_assert_int_eq(err.code, 2);
        tried++;
    }
    ck_assert_uint_ge(tried, 15);
    hs_columns_free(&all);
    hs_model_free(m);
}
END_TEST

/* ---- finiteness of what is written ---- */

static char tmpdir[64];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/check_hostile.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    sbuf b = { 0 };
    char chunk[4096];
    size_t n;
    sb_printf(&b, "%s", "");
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        sb_printf(&b, "%.*s", (int)n, chunk);
    fclose(f);
    *len = b.len;
    return b.s;
}

/* Run `text` into path (NULL: /dev/null) with these columns. */
static int run_text(const char *text, const char *path, const char *columns, hs_error *err)
{
    hs_model *m = load(text, NULL, err);
    ck_assert_msg(m, "%s", err->msg);
    FILE *null = path ? NULL : fopen("/dev/null", "w");
    hs_run_opts ro = { .columns = columns, .precision = 17 };
    hs_summary sum;
    hs_error_init(err);
    int rc = run_csv(m, ro, null, path, NULL, &sum, err);
    if (null)
        fclose(null);
    hs_model_free(m);
    return rc;
}

#define HUGE_MASS "coordinates: [x]\nmass: [1e308]\ninitial: {q: {x: 0}, v: {x: 10}}\n" \
                  "simulate: {t_end: 1, dt: 0.5}\n"

START_TEST(huge_mass_exit_4_no_file)
{
    make_tmpdir();
    char path[128], keep[128];
    snprintf(path, sizeof path, "%s/new.csv", tmpdir);
    hs_error err;
    ck_assert_int_eq(run_text(HUGE_MASS, path, NULL, &err), 4);
    ck_assert_msg(strstr(err.msg, "column 'E' is inf at t=0 (T = inf"), "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "no row is written"), "%s", err.msg);
    struct stat st;
    ck_assert_int_ne(stat(path, &st), 0);           /* not even created */
    /* an existing file keeps its content */
    snprintf(keep, sizeof keep, "%s/old.csv", tmpdir);
    FILE *f = fopen(keep, "w");
    fputs("precious\n", f);
    fclose(f);
    ck_assert_int_eq(run_text(HUGE_MASS, keep, NULL, &err), 4);
    size_t len;
    char *s = slurp(keep, &len);
    ck_assert_str_eq(s, "precious\n");
    free(s);
    /* E not shown: the energy balance, a monitor of every run, still is
     * checked */
    ck_assert_int_eq(run_text(HUGE_MASS, keep, "t,x", &err), 4);
    ck_assert_msg(strstr(err.msg, "energy_balance is nan at t=0"), "%s", err.msg);
    remove(keep);
    rmdir(tmpdir);
}
END_TEST

/* Finite at the first rows, then T = M v^2/2 passes the largest double
 * (M = 1e308, v from 1 to 1.5; U = -1e308 x stays finite, so no program
 * output overflows and only the row check sees it): the rows before are
 * written whole, the failing one not at all. */
START_TEST(overflow_after_first_rows)
{
    make_tmpdir();
    char path[128];
    snprintf(path, sizeof path, "%s/o.csv", tmpdir);
    const char *text = "coordinates: [x]\nmass: [1e308]\npotential: -1e308*x\n"
                       "initial: {q: {x: 0}, v: {x: 1}}\nsimulate: {t_end: 1, dt: 0.25}\n";
    hs_error err;
    ck_assert_int_eq(run_text(text, path, NULL, &err), 4);
    ck_assert_msg(strstr(err.msg, "column 'E' is inf at t=0.5 (T = inf"), "%s", err.msg);
    ck_assert_msg(strstr(err.msg, "the rows before it are written"), "%s", err.msg);
    size_t len;
    char *s = slurp(path, &len);
    ck_assert_ptr_nonnull(s);
    const char *head = "t,x,x',E\n0,0,1,5e+307\n0.25,";
    ck_assert_msg(strncmp(s, head, strlen(head)) == 0, "%s", s);
    int lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += s[i] == '\n';
    ck_assert_int_eq(lines, 3);
    ck_assert_int_eq(s[len - 1], '\n');
    ck_assert_ptr_null(strstr(s, "inf"));
    ck_assert_ptr_null(strstr(s, "nan"));
    free(s);
    remove(path);
    rmdir(tmpdir);
}
END_TEST

/* ---- the writer ---- */

START_TEST(out_rows_whole)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hs_out o;
    ck_assert_int_eq(hs_out_init(&o, f, 17), 0);
    hs_out_row_begin(&o);
    hs_out_str(&o, "a,b\n");
    hs_out_row_end(&o);
    /* a row longer than the buffer: what comes before is written out, the
     * row stays whole in memory until cancelled */
    hs_out_row_begin(&o);
    for (int i = 0; i < 50000; i++)
        hs_out_num(&o, i);
    fflush(f);
    ck_assert_uint_eq(len, 4);
    ck_assert(memcmp(buf, "a,b\n", 4) == 0);
    hs_out_row_cancel(&o);
    ck_assert_int_eq(hs_out_flush(&o), 0);
    ck_assert_uint_eq(len, 4);
    /* the same row, ended: written whole */
    hs_out_row_begin(&o);
    for (int i = 0; i < 50000; i++)
        hs_out_char(&o, 'x');
    hs_out_char(&o, '\n');
    hs_out_row_end(&o);
    ck_assert_int_eq(hs_out_flush(&o), 0);
    ck_assert_uint_eq(len, 4 + 50001);
    ck_assert_int_eq(buf[len - 1], '\n');
    ck_assert_int_eq(buf[len - 2], 'x');
    hs_out_free(&o);
    fclose(f);
    free(buf);
}
END_TEST

START_TEST(out_nothing_before_first_row)
{
    make_tmpdir();
    char path[128];
    snprintf(path, sizeof path, "%s/w.csv", tmpdir);
    hs_out o;
    ck_assert_int_eq(hs_out_init(&o, NULL, 17), 0);
    ck_assert_int_eq(hs_out_start_at_first_row(&o, path), 0);
    for (int i = 0; i < 20000; i++)       /* a header longer than the buffer */
        hs_out_str(&o, "column,");
    hs_out_char(&o, '\n');
    hs_out_row_begin(&o);
    hs_out_num(&o, 1);
    hs_out_row_cancel(&o);
    ck_assert_int_eq(hs_out_flush(&o), 0);
    struct stat st;
    ck_assert_int_ne(stat(path, &st), 0);
    /* the first row ends: the file appears, header and row in it */
    hs_out_row_begin(&o);
    hs_out_num(&o, 2.5);
    hs_out_char(&o, '\n');
    hs_out_row_end(&o);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq((int)st.st_size, 20000 * 7 + 1 + 4);
    ck_assert_int_eq(hs_out_flush(&o), 0);
    hs_out_free(&o);
    remove(path);
    rmdir(tmpdir);
}
END_TEST

/* ---- overflow in C ---- */

START_TEST(overflow_not_rank)
{
    const char *texts[] = {
        "coordinates: [x, y]\nmass: [1, 1]\npotential: 9.81*y\n"
        "constraints:\n  rod: 1e200*(x^2 + y^2 - 1)\ninitial: {q: {x: 0.6, y: -0.8}}\n"
        "simulate: {t_end: 1, dt: 0.5}\n",
        "coordinates: [x, y]\nmass: [1e-300, 1e-300]\npotential: 9.81*y\n"
        "constraints:\n  rod: 1e10*(x^2 + y^2 - 1)\ninitial: {q: {x: 0.6, y: -0.8}}\n"
        "simulate: {t_end: 1, dt: 0.5}\n",
    };
    for (size_t i = 0; i < 2; i++) {
        hs_error err;
        ck_assert_int_eq(run_text(texts[i], NULL, NULL, &err), 4);
        ck_assert_msg(strstr(err.msg, "overflow at t=0"), "%s", err.msg);
        ck_assert_msg(!strstr(err.msg, "rank"), "%s", err.msg);
    }
}
END_TEST

static Suite *hostile_suite(void)
{
    Suite *s = suite_create("hostile");
    TCase *tc = tcase_create("chains");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, param_chain_1500);
    tcase_add_test(tc, param_chain_1500_reversed);
    tcase_add_test(tc, param_chain_100k);
    tcase_add_test(tc, param_chain_cycle);
    tcase_add_test(tc, define_chain_2000);
    tcase_add_test(tc, define_chain_100k);
    tcase_add_test(tc, define_chain_cycle);
    tcase_add_test(tc, define_scan_like_parser);
    tcase_add_test(tc, duplicate_key_100k);
    tcase_add_test(tc, set_last_wins);
    suite_add_tcase(s, tc);
    TCase *tn = tcase_create("columns");
    tcase_add_loop_test(tn, column_clashes, 0, (int)(sizeof col_cases / sizeof *col_cases));
    tcase_add_test(tn, every_column_name_refused_as_output);
    suite_add_tcase(s, tn);
    TCase *tf = tcase_create("finite");
    tcase_set_timeout(tf, 60);
    tcase_add_test(tf, huge_mass_exit_4_no_file);
    tcase_add_test(tf, overflow_after_first_rows);
    tcase_add_test(tf, out_rows_whole);
    tcase_add_test(tf, out_nothing_before_first_row);
    tcase_add_test(tf, overflow_not_rank);
    suite_add_tcase(s, tf);
    return s;
}

HS_CHECK_MAIN(hostile_suite)
