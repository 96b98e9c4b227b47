/* CSV output (src/io): exact shortest number formatting, the buffered
 * writer's error detection, column selection. */
#include <check.h>

#include "check_main.h"
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/fmt.h"
#include "io/out.h"
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
        return;             /* no /dev/full here: nothing to test */
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
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
