/* Output (src/io): exact shortest number formatting, the buffered
 * writer's error detection, the CSV sink (its text, nothing before the
 * first row, a failed write cut back to the last complete row), the table
 * of formats, the sink of the caller's functions. */
#include <check.h>

#include "check_main.h"
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/fmt.h"
#include "io/sink.h"
#include "io/out.h"
#include "io/summary.h"
#include "io/table.h"
#include "integrate/integrate.h"

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Reference: the shortest of %.15g, %.16g, %.17g that reads back. */
static size_t reference(char *buf, double x)
{
    int len = 0;
    for (int p = 15; p <= 17; p++) {
        len = snprintf(buf, 32, "%.*g", p, x);
        if (strtod(buf, NULL) == x)
            break;
    }
    return (size_t)len;
}

static void check_one(double x)
{
    char buf[40], ref[40];
    size_t n = hs_fmt_double(buf, x);
    ck_assert_uint_eq(n, strlen(buf));
    ck_assert_uint_lt(n, 32);
    char *end;
    double back = strtod(buf, &end);
    ck_assert_msg(*end == '\0', "trailing text in '%s'", buf);
    ck_assert_msg(memcmp(&back, &x, sizeof x) == 0 || (isnan(x) && isnan(back)) ||
                  (x == 0 && strcmp(buf, "0") == 0),      /* -0 is printed as 0 */
                  "%a printed as '%s' reads back as %a", x, buf, back);
    size_t rn = reference(ref, x);
    ck_assert_msg(n <= rn, "%a: '%s' longer than '%s'", x, buf, ref);
}

/* 10^6 random bit patterns (every exponent, subnormals included), plus
 * random values in ordinary ranges. */
START_TEST(roundtrip_random)
{
    for (int i = 0; i < 1000000; i++) {
        uint64_t b = next64();
        double x;
        memcpy(&x, &b, sizeof x);
        if (!isfinite(x))
            continue;
        check_one(x);
    }
    for (int i = 0; i < 200000; i++) {
        double x = (double)(next64() >> 11) * 0x1p-53 * 200 - 100;
        check_one(x);
        check_one(x * 1e-7);
    }
}
END_TEST

START_TEST(roundtrip_special)
{
    const double v[] = {
        0.0, -0.0, 1.0, -1.0, 0.1, 0.03, 1e-5, 1e-4, 123456789012345678.0, 1e15, 1e16,
        1e17, 1e22, 1e23, DBL_MAX, -DBL_MAX, DBL_MIN, DBL_TRUE_MIN, 4.9406564584124654e-324,
        2.2250738585072009e-308, 9007199254740993.0, 0.5, 0.25, 1024.0, 0x1p-1022,
        0x1p-1023, 0x1p1023, 5e-324, 1.7976931348623157e308, 2.5e-5, 9.999999999999999e22,
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        check_one(v[i]);
    for (int e = -1074; e <= 1023; e++) {     /* every power of two, and neighbours */
        double x = ldexp(1.0, e);
        check_one(x);
        check_one(nextafter(x, 0));
        check_one(nextafter(x, INFINITY));
    }
    for (int e = -323; e <= 308; e++) {       /* powers of ten */
        double x = strtod("1", NULL) * pow(10, e);
        check_one(x);
    }
    char buf[40];
    hs_fmt_double(buf, -0.0);
    ck_assert_str_eq(buf, "0");
    hs_fmt_double(buf, 0.0);
    ck_assert_str_eq(buf, "0");
    hs_fmt_double(buf, 0.03);
    ck_assert_str_eq(buf, "0.03");
    hs_fmt_double(buf, 1e-5);
    ck_assert_str_eq(buf, "1e-05");
    hs_fmt_double(buf, 123.5);
    ck_assert_str_eq(buf, "123.5");
    hs_fmt_double(buf, NAN);
    ck_assert_str_eq(buf, "nan");
}
END_TEST

/* A write error (a full device) is detected, not ignored. */
START_TEST(write_error_detected)
{
    FILE *f = fopen("/dev/full", "w");
    if (!f)
        HS_SKIP("no /dev/full here");
    hs_out o;
    ck_assert_int_eq(hs_out_init(&o, f, 17), 0);
    for (int i = 0; i < 100000; i++) {
        hs_out_num(&o, i * 0.1);
        hs_out_char(&o, '\n');
    }
    ck_assert_int_eq(hs_out_flush(&o), -1);
    ck_assert_int_eq(o.failed, 1);
    ck_assert_int_eq(o.err_no, ENOSPC);
    hs_out_free(&o);
    fclose(f);
}
END_TEST

START_TEST(precision_honoured)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hs_out o;
    ck_assert_int_eq(hs_out_init(&o, f, 5), 0);
    hs_out_num(&o, 3.14159265358979);
    hs_out_char(&o, ',');
    hs_out_num(&o, 1e-20);
    hs_out_char(&o, ',');
    hs_out_num(&o, -0.0);       /* a zero prints without a sign */
    ck_assert_int_eq(hs_out_flush(&o), 0);
    hs_out_free(&o);
    fclose(f);
    ck_assert_str_eq(buf, "3.1416,1e-20,0");
    free(buf);
}
END_TEST

/* Output times read as a person writes them, within an ulp or two of
 * t0 + i dt. */
START_TEST(grid_times)
{
    ck_assert(hs_grid_time(0, 17, 0.1) == 1.7);
    ck_assert(hs_grid_time(0, 3, 0.1) == 0.3);
    ck_assert(hs_grid_time(0.5, 7, 0.2) == 1.9);
    for (long i = 0; i < 100000; i += 7) {
        double raw = 0.25 + (double)i * 0.001, t = hs_grid_time(0.25, i, 0.001);
        ck_assert_msg(fabs(t - raw) <= 4 * DBL_EPSILON * fabs(raw), "%ld: %.17g vs %.17g", i,
                      t, raw);
    }
}
END_TEST

/* Two columns named by hand (no model needed to write). */
static hs_col two_cols[2] = { { HS_QTY_T, 0, (char *)"t" }, { HS_QTY_Q, 0, (char *)"x" } };
static const hs_columns two = { 2, two_cols };

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *b = malloc(1 << 20);
    ck_assert_ptr_nonnull(b);
    *len = fread(b, 1, (1 << 20) - 1, f);
    b[*len] = '\0';
    fclose(f);
    return b;
}

/* The CSV text: header, rows, event rows with a name quoted when it must. */
START_TEST(csv_text)
{
    char *buf = NULL, *ebuf = NULL;
    size_t len = 0, elen = 0;
    FILE *f = open_memstream(&buf, &len), *fe = open_memstream(&ebuf, &elen);
    hs_error err;
    hs_error_init(&err);
    hs_sink_args sa = { .f = f, .precision = 17 }, ea = { .f = fe, .precision = 17, .events = 1 };
    hs_sink *s = hs_csv_open(&sa, &err), *e = hs_csv_open(&ea, &err);
    ck_assert(s && e);
    hs_sink_header(s, &two);
    hs_sink_header(e, &two);
    double x[2] = { 0.1, -2.5e-300 };
    hs_sink_row(s, x, 2);
    x[0] = 3;
    hs_sink_row(s, x, 2);
    hs_sink_event_row(e, "hit", x, 2);
    hs_sink_event_row(e, "a,\"b\"", x, 2);
    ck_assert_int_eq(s->rows, 2);
    ck_assert_int_eq(e->rows, 2);
    ck_assert_int_eq(hs_sink_close(s, 0), 0);
    ck_assert_int_eq(hs_sink_close(e, 0), 0);
    fclose(f);
    fclose(fe);
    ck_assert_str_eq(buf, "t,x\n0.1,-2.5e-300\n3,-2.5e-300\n");
    ck_assert_str_eq(ebuf, "event,t,x\nhit,3,-2.5e-300\n\"a,\"\"b\"\"\",3,-2.5e-300\n");
    free(buf);
    free(ebuf);
}
END_TEST

/* The contract of every format of the table (sink.h), one loop index a
 * format: opened on a path, it opens nothing before the first row. */
static hs_sink *open_format(int i, const char *path, int events)
{
    hs_error err;
    hs_error_init(&err);
    hs_sink_args a = { .path = path, .precision = 17, .events = events };
    hs_sink *s = hs_sink_open(hs_sink_formats[i].name, &a, &err);
    ck_assert_msg(s != NULL, "%s: %s", hs_sink_formats[i].name, err.msg);
    ck_assert_str_eq(s->type->name, hs_sink_formats[i].name);
    return s;
}

/* A file to write is created at the first row, not before; an events file
 * of a run without events holds the header alone (publish). */
START_TEST(sink_first_row)
{
    char dir[] = "/tmp/holosim-io.XXXXXX", p1[64], p2[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(p1, sizeof p1, "%s/a.out", dir);
    snprintf(p2, sizeof p2, "%s/e.out", dir);
    int csv = strcmp(hs_sink_formats[_i].name, "csv") == 0;
    hs_sink *s = open_format(_i, p1, 0), *e = open_format(_i, p2, 1);
    hs_sink_header(s, &two);
    hs_sink_header(e, &two);
    struct stat st;
    ck_assert_int_ne(stat(p1, &st), 0);
    ck_assert_int_eq(hs_sink_close(s, 0), 0);   /* no row: no file */
    ck_assert_int_ne(stat(p1, &st), 0);
    ck_assert_int_eq(hs_sink_close(e, 1), 0);   /* published: the header */
    size_t len;
    char *b = slurp(p2, &len);
    ck_assert_ptr_nonnull(b);
    if (csv)
        ck_assert_str_eq(b, "event,t,x\n");
    free(b);
    s = open_format(_i, p1, 0);
    hs_sink_header(s, &two);
    double x[2] = { 1, 2 };
    hs_sink_row(s, x, 2);
    ck_assert_int_eq(stat(p1, &st), 0);         /* there with its first row */
    ck_assert_int_eq(s->rows, 1);
    ck_assert_int_eq(hs_sink_close(s, 0), 0);
    b = slurp(p1, &len);
    ck_assert_ptr_nonnull(b);
    if (csv)
        ck_assert_str_eq(b, "t,x\n1,2\n");
    free(b);
    unlink(p1);
    unlink(p2);
    rmdir(dir);
}
END_TEST

/* A write that fails (the file size limit) ends the output and cuts the
 * file back to its last complete row; close reports EFBIG.  (Check runs
 * the test in a process of its own: the limit stays there.) */
START_TEST(sink_cut_back)
{
    int csv = strcmp(hs_sink_formats[_i].name, "csv") == 0;
    char dir[] = "/tmp/holosim-io.XXXXXX", p[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/cut.csv", dir);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = { 100000, 100000 };
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        HS_SKIP("no file size limit can be set here");
    hs_sink *s = open_format(_i, p, 0);
    hs_sink_header(s, &two);
    double x[2];
    for (int i = 0; i < 20000 && !s->failed; i++) {
        x[0] = i * 0.001;
        x[1] = sin(i * 0.37) * 1e-3;            /* rows of varied length */
        hs_sink_row(s, x, 2);
    }
    ck_assert_int_eq(s->failed, 1);
    ck_assert_int_eq(hs_sink_close(s, 0), EFBIG);
    size_t len;
    char *b = slurp(p, &len);
    ck_assert_ptr_nonnull(b);
    ck_assert(len > 1000 && len <= 100000);
    size_t lines = 0;
    if (csv)
        ck_assert_int_eq(b[len - 1], '\n');
    for (char *q = b; csv && *q; q++)
        if (*q == '\n') {
            lines++;
            char *start = q;
            while (start > b && start[-1] != '\n')
                start--;
            ck_assert_ptr_nonnull(memchr(start, ',', (size_t)(q - start)));
        }
    ck_assert(!csv || lines > 100);
    free(b);
    unlink(p);
    rmdir(dir);
}
END_TEST

START_TEST(formats)
{
    hs_error err;
    hs_error_init(&err);
    hs_sink_args a = { .f = stdout, .precision = 17 };
    ck_assert_ptr_null(hs_sink_open("xml", &a, &err));
    ck_assert_int_eq(err.code, HS_EXIT_USAGE);
    ck_assert_str_eq(err.msg, "unknown output format 'xml'; choose one of: csv");
    hs_error_init(&err);
    hs_sink *s = hs_sink_open(NULL, &a, &err);
    ck_assert_ptr_nonnull(s);
    ck_assert_str_eq(s->type->name, "csv");
    ck_assert_int_eq(hs_sink_close(s, 0), 0);
    ck_assert_str_eq(hs_sink_formats[0].name, "csv");
    /* finish: a failed write is "cannot write WHAT" (exit 1) unless the call
     * already failed otherwise */
    ck_assert_int_eq(hs_sink_finish(NULL, "the CSV", 0, 0, &err), 0);
}
END_TEST

/* The sink of the caller's functions (hs_sink_fn): rows and event rows to
 * them, as the run computed them, and on to a CSV behind it (a tee),
 * closed with it; a call without a function is dropped. */
typedef struct seen {
    int headers, rows, events;
    double last;
    char event[32];
} seen;
static void seen_header(void *ctx, const hs_columns *c)
{
    ((seen *)ctx)->headers += (int)c->n;
}
static void seen_row(void *ctx, const double *x, size_t n)
{
    seen *v = ctx;
    v->rows++;
    v->last = x[n - 1];
}
static void seen_event(void *ctx, const char *event, const double *x, size_t n)
{
    seen *v = ctx;
    v->events++;
    v->last = x[n - 1];
    snprintf(v->event, sizeof v->event, "%s", event);
}

START_TEST(sink_fn)
{
    char dir[] = "/tmp/holosim-io.XXXXXX", p[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/e.csv", dir);
    seen v = { 0 };
    hs_sink_fn f;
    hs_sink_fn_init(&f, &v, seen_header, seen_row, seen_event);
    f.next = open_format(0, p, 1);
    hs_sink_header(&f.base, &two);
    ck_assert_int_eq(v.headers, 2);
    double x[2] = { 0.1, 1.0 / 3 };
    hs_sink_event_row(&f.base, "floor:impact", x, 2);
    ck_assert_int_eq(v.events, 1);
    ck_assert_str_eq(v.event, "floor:impact");
    ck_assert(v.last == 1.0 / 3);              /* the double itself */
    hs_sink_row(&f.base, x, 2);
    ck_assert_int_eq(v.rows, 1);
    ck_assert_int_eq(f.base.rows, 2);
    ck_assert_int_eq(hs_sink_close(&f.base, 1), 0);
    ck_assert_ptr_null(f.next);
    size_t len;
    char *b = slurp(p, &len);
    ck_assert_ptr_nonnull(b);
    ck_assert_str_eq(b, "event,t,x\nfloor:impact,0.1,0.3333333333333333\n"
                        "0.1,0.3333333333333333\n");
    free(b);
    unlink(p);
    rmdir(dir);
    hs_sink_fn_init(&f, &v, NULL, NULL, NULL);  /* nothing to call: dropped */
    hs_sink_header(&f.base, &two);
    hs_sink_row(&f.base, x, 2);
    hs_sink_event_row(&f.base, "e", x, 2);
    ck_assert_int_eq(v.rows, 1);
    ck_assert_int_eq(f.base.rows, 2);
    ck_assert_int_eq(hs_sink_close(&f.base, 0), 0);
}
END_TEST

/* What a stdio memory stream holds after fn wrote to it. */
static char *written(void (*fn)(FILE *f, void *ctx), void *ctx)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    fn(f, ctx);
    ck_assert_int_eq(fclose(f), 0);
    return buf;
}

static void table_fields(FILE *f, void *ctx)
{
    (void)ctx;
    hs_table t;
    hs_table_init(&t, f, HS_TABLE_SHORTEST);
    hs_table_text(&t, "x'");                   /* a prime needs no quotes */
    hs_table_text(&t, "a,b");                  /* a comma does */
    hs_table_text2(&t, "say \"", "hi\"");      /* a quote doubled */
    hs_table_text(&t, "two\nlines");
    hs_table_num(&t, 0.1);
    hs_table_num(&t, -0.0);                    /* never -0 */
    hs_table_num(&t, (double)NAN);             /* never nan: empty */
    hs_table_num(&t, -(double)INFINITY);
    hs_table_fixed(&t, 1.5, 6);
    hs_table_int(&t, -3);
    hs_table_quoted(&t, "");
    hs_table_end(&t);
    hs_table_init(&t, f, HS_TABLE_G17);
    hs_table_num(&t, 0.1);
    hs_table_empty(&t);
    hs_table_end(&t);
}

START_TEST(table_rules)
{
    char *s = written(table_fields, NULL);
    ck_assert_str_eq(s, "x',\"a,b\",\"say \"\"hi\"\"\",\"two\nlines\",0.1,0,,,1.500000,-3,\"\"\n"
                        "0.10000000000000001,\n");
    free(s);
}
END_TEST

static void summary_both(FILE *f, void *ctx)
{
    hs_sumrow *r = ctx;
    hs_summary_header(f, r, HS_SUM_FILE);
    hs_summary_record(f, r, HS_SUM_FILE);
    hs_summary_record(f, r, HS_SUM_STATUS);
    r->integrated = 0;
    r->message = "";
    hs_summary_record(f, r, HS_SUM_STATUS);
}

START_TEST(summary_fields)
{
    static const char *const names[] = { "x", "dtheta/dl" };
    const double val[] = { 0.25, -1.5 };
    hs_sumrow r;
    hs_sumrow_init(&r);
    r.model = "m,\"1\".yaml";
    r.exit = 4;
    r.integrated = 1;
    r.steps = 10;
    r.nrhs = 130;
    r.rows = 3;
    r.t_reached = 0.5;
    r.max_G = r.max_Gdot = r.max_ebal = r.max_pres = 0;
    r.wall = 0.25;
    r.impacts = 2;
    r.transitions = 1;
    r.nfinal = 2;
    r.final_name = names;
    r.final = val;
    r.message = "failed";
    char *s = written(summary_both, &r);
    ck_assert_str_eq(s,
        "model,exit,steps,rhs_evals,rows,t_reached,max_G,max_Gdot,max_energy_balance,"
        "max_power_residual,wall_s,impacts,transitions,t_rest,final_x,final_dtheta/dl,message\n"
        "\"m,\"\"1\"\".yaml\",4,10,130,3,0.5,0,0,0,0,0.250000,2,1,,0.25,-1.5,\"failed\"\n"
        "4,10,130,3,0.5,0,0,0,0,0.250000,2,1,,0.25,-1.5,\"failed\"\n"
        "4,,,,,,,,,,,,,,,\n");
    free(s);
}
END_TEST

START_TEST(summary_final_lookup)
{
    static const char *const col[] = { "t", "theta", "theta'", "dtheta/dl" };
    size_t idx[4], n = 9;
    hs_error err;
    hs_error_init(&err);
    ck_assert_int_eq(hs_summary_finals(" dtheta/dl ,t", col, 4, NULL, idx, &n, &err), 0);
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(idx[0], 3);
    ck_assert_uint_eq(idx[1], 0);
    ck_assert_uint_eq(hs_summary_nfinal_max("a,b,,c"), 4);
    static const struct { const char *list, *msg; } bad[] = {
        { "thetaa", "final: unknown column 'thetaa' (did you mean 'theta'?); the columns of "
                    "this run: t,theta,theta',dtheta/dl" },
        { "t,t", "final: column named twice 't'" },
        { "t,", "final wants column names separated by commas, got 't,'" },
        { "", "final wants column names" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        hs_error_init(&err);
        ck_assert_int_eq(hs_summary_finals(bad[i].list, col, 4, NULL, idx, &n, &err),
                         HS_EXIT_MODEL);
        ck_assert_msg(strstr(err.msg, bad[i].msg), "%s: %s", bad[i].list, err.msg);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("io");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, roundtrip_random);
    tcase_add_test(tc, roundtrip_special);
    tcase_add_test(tc, write_error_detected);
    tcase_add_test(tc, precision_honoured);
    tcase_add_test(tc, grid_times);
    tcase_add_test(tc, csv_text);
    int nformats = 0;
    while (hs_sink_formats[nformats].name)
        nformats++;
    tcase_add_loop_test(tc, sink_first_row, 0, nformats);
    tcase_add_loop_test(tc, sink_cut_back, 0, nformats);
    tcase_add_test(tc, formats);
    tcase_add_test(tc, sink_fn);
    tcase_add_test(tc, table_rules);
    tcase_add_test(tc, summary_fields);
    tcase_add_test(tc, summary_final_lookup);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
