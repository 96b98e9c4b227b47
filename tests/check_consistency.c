/* Consistent initial data, locking, reject mode, rank diagnosis
 * (src/consistency). */
#include <check.h>

#include "check_main.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "consistency/consistency.h"
#include "integrate/integrate.h"
#include "model/model.h"
#include "run_csv.h"

static hs_model *load(const char *text, hs_error *err)
{
    hs_error_init(err);
    hs_model *m = hs_model_load_string("test.yaml", text, NULL, err);
    ck_assert_msg(m != NULL, "load failed: %s", err->msg);
    return m;
}

/* Run hs_cons_start on copies of q0, v0. */
static int start(const hs_model *m, double *q, double *v, hs_error *err)
{
    memcpy(q, m->q0, m->n * sizeof *q);
    memcpy(v, m->v0, m->n * sizeof *v);
    hs_work *w = hs_work_new(m);
    ck_assert_ptr_nonnull(w);
    hs_error_init(err);
    int rc = hs_cons_start(m, w, q, v, NULL, err);
    hs_work_free(w);
    return rc;
}

/* A pendulum started off the circle, with a radial velocity component:
 * the M-nearest point of the circle is the radial projection (equal masses),
 * and the projected velocity is the tangential part. */
START_TEST(pendulum_off_circle)
{
    const char *text =
        "parameters: {l: 2.0}\n"
        "coordinates: [x, y]\n"
        "mass: [3, 3]\n"
        "potential: 9.81*3*y\n"
        "constraints: {rod: x^2 + y^2 - l^2}\n"
        "initial: {q: {x: 1.2, y: -1.9}, v: {x: 0.7, y: 0.4}}\n";
    hs_error err;
    hs_model *m = load(text, &err);
    double q[2], v[2];
    ck_assert_int_eq(start(m, q, v, &err), 0);
    double r = hypot(1.2, -1.9);
    ck_assert_double_eq_tol(q[0], 1.2 * 2.0 / r, 1e-12);
    ck_assert_double_eq_tol(q[1], -1.9 * 2.0 / r, 1e-12);
    ck_assert(fabs(q[0] * q[0] + q[1] * q[1] - 4.0) <= 1e-10);
    /* velocity: remove the component along the radius */
    double ux = q[0] / 2.0, uy = q[1] / 2.0, vr = 0.7 * ux + 0.4 * uy;
    ck_assert_double_eq_tol(v[0], 0.7 - vr * ux, 1e-12);
    ck_assert_double_eq_tol(v[1], 0.4 - vr * uy, 1e-12);
    ck_assert(fabs(q[0] * v[0] + q[1] * v[1]) <= 1e-10);
    hs_model_free(m);
}
END_TEST

/* With unequal masses the M-nearest point is not the radial one: check the
 * optimality condition M (q - q0) parallel to grad G at the solution. */
START_TEST(nearest_in_mass_norm)
{
    const char *text =
        "coordinates: [x, y]\n"
        "mass: [1, 9]\n"
        "constraints: {c: x^2 + y^2 - 1}\n"
        "initial: {q: {x: 0.9, y: 0.8}}\n";
    hs_error err;
    hs_model *m = load(text, &err);
    double q[2], v[2];
    ck_assert_int_eq(start(m, q, v, &err), 0);
    double dx = 1 * (q[0] - 0.9), dy = 9 * (q[1] - 0.8);
    /* (dx, dy) x (2x, 2y) = 0 */
    ck_assert(fabs(dx * q[1] - dy * q[0]) <= 1e-9);
    ck_assert(fabs(q[0] * q[0] + q[1] * q[1] - 1) <= 1e-10);
    /* and it is the branch nearest to q0 (first quadrant) */
    ck_assert(q[0] > 0 && q[1] > 0);
    hs_model_free(m);
}
END_TEST

/* The slider-crank with the crank pin locked: the crank stays, the slider
 * is solved on the branch of the guess (xs > 0, not the mirror xs < xp). */
START_TEST(lock_slider_crank)
{
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load("models/slider_crank.yaml", NULL, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    double q[4], v[4];
    ck_assert_int_eq(start(m, q, v, &err), 0);
    ck_assert(q[0] == m->q0[0] && q[1] == m->q0[1]);      /* bit for bit */
    ck_assert(v[0] == m->v0[0] && v[1] == m->v0[1]);
    double r = 0.3, L = 1.0, phi = 0.7;
    double xs = r * cos(phi) + sqrt(L * L - r * r * sin(phi) * sin(phi));
    ck_assert_double_eq_tol(q[2], xs, 1e-10);
    ck_assert(fabs(q[3]) <= 1e-10);
    /* velocity of the slider from differentiating the closed form */
    double w0 = 6.0;
    double dxs = -r * sin(phi) * w0 -
                 r * r * sin(phi) * cos(phi) * w0 / sqrt(L * L - r * r * sin(phi) * sin(phi));
    ck_assert_double_eq_tol(v[2], dxs, 1e-9);
    hs_model_free(m);
}
END_TEST

/* Reject mode: consistent data untouched bit for bit; inconsistent data
 * exit 3 naming the constraint and the failed condition. */
START_TEST(reject_mode)
{
    const char *ok =
        "coordinates: [x, y]\n"
        "mass: [1, 1]\n"
        "constraints: {rod: x^2 + y^2 - 1}\n"
        "initial: {q: {x: 0.6, y: -0.8}, v: {x: 0.8, y: 0.6}}\n"
        "consistency: {mode: reject}\n";
    hs_error err;
    hs_model *m = load(ok, &err);
    double q[2], v[2];
    ck_assert_int_eq(start(m, q, v, &err), 0);
    ck_assert(memcmp(q, m->q0, sizeof q) == 0 && memcmp(v, m->v0, sizeof v) == 0);
    hs_model_free(m);

    const char *bad_pos =
        "coordinates: [x, y]\n"
        "mass: [1, 1]\n"
        "constraints: {rod: x^2 + y^2 - 1}\n"
        "initial: {q: {x: 0.7, y: -0.8}}\n"
        "consistency: {mode: reject}\n";
    m = load(bad_pos, &err);
    ck_assert_int_eq(start(m, q, v, &err), HS_EXIT_INCONSISTENT);
    ck_assert_ptr_nonnull(strstr(err.msg, "rod: position residual"));
    ck_assert(memcmp(q, m->q0, sizeof q) == 0);
    hs_model_free(m);

    const char *bad_vel =
        "coordinates: [x, y]\n"
        "mass: [1, 1]\n"
        "constraints: {rod: x^2 + y^2 - 1}\n"
        "initial: {q: {x: 0.6, y: -0.8}, v: {x: 0.6, y: -0.8}}\n"
        "consistency: {mode: reject}\n";
    m = load(bad_vel, &err);
    ck_assert_int_eq(start(m, q, v, &err), HS_EXIT_INCONSISTENT);
    ck_assert_ptr_nonnull(strstr(err.msg, "rod: velocity residual"));
    ck_assert_ptr_null(strstr(err.msg, "position residual"));
    hs_model_free(m);
}
END_TEST

/* An empty constraint set near q0: exit 3, bounded time. */
START_TEST(empty_set)
{
    const char *text =
        "coordinates: [x, y]\n"
        "mass: [1, 1]\n"
        "constraints: {imaginary: x^2 + y^2 + 1}\n"
        "initial: {q: {x: 0.5, y: 0.5}}\n";
    hs_error err;
    hs_model *m = load(text, &err);
    double q[2], v[2];
    ck_assert_int_eq(start(m, q, v, &err), HS_EXIT_INCONSISTENT);
    ck_assert_ptr_nonnull(strstr(err.msg, "imaginary"));
    hs_model_free(m);
}
END_TEST

/* Duplicate constraint and a dependent triple: allowed (redundant), and
 * with consistency.dependent: reject exit 2 naming them. */
START_TEST(dependent_constraints)
{
    const char *dup =
        "coordinates: [x, y]\n"
        "mass: [1, 1]\n"
        "constraints: {a: x^2 + y^2 - 1, b: x^2 + y^2 - 1}\n"
        "initial: {q: {x: 0.6, y: -0.8}}\n";
    hs_error err;
    hs_model *m = load(dup, &err);
    double q[3], v[3];
    ck_assert_int_eq(start(m, q, v, &err), 0);      /* redundant: allowed */
    m->set.strict_rank = 1;                         /* consistency.dependent: reject */
    ck_assert_int_eq(start(m, q, v, &err), HS_EXIT_MODEL);
    ck_assert_msg(strstr(err.msg, "'a'") && strstr(err.msg, "'b'"), "%s", err.msg);
    hs_model_free(m);

    /* three points on a line: the third distance follows from the other two */
    const char *triple =
        "coordinates: [x1, x2, x3]\n"
        "mass: [1, 1, 1]\n"
        "constraints:\n"
        "  d12: x2 - x1 - 1\n"
        "  d23: x3 - x2 - 1\n"
        "  d13: x3 - x1 - 2\n"
        "initial: {q: {x1: 0, x2: 1, x3: 2}}\n";
    m = load(triple, &err);
    ck_assert_int_eq(start(m, q, v, &err), 0);
    m->set.strict_rank = 1;
    ck_assert_int_eq(start(m, q, v, &err), HS_EXIT_MODEL);
    ck_assert_msg(strstr(err.msg, "d12") && strstr(err.msg, "d23") && strstr(err.msg, "d13"),
                  "%s", err.msg);
    ck_assert_ptr_nonnull(strstr(err.msg, "rank of G_q is 2"));
    hs_model_free(m);
}
END_TEST

/* A time-dependent constraint with t0 != 0: the velocity projection uses
 * G_t at t0.  Particle on the line x = c t started at rest at t0 = 2: the
 * projected velocity x' is c (and the position 2c). */
/* The rank of G_q: certified by the Cholesky of C when C is well
 * conditioned, decided by the pivoted QR otherwise.  Rows (1, 0) and
 * (1, eps): cond(G_q) ~ 2/eps.  eps = 1e-7: C's reciprocal condition is
 * ~1e-15, below the certificate's 1e-12, yet the QR (relative tolerance
 * 1e-9) finds full rank; eps = 1e-11: rank 1, the second depends on the
 * first; an exact duplicate: rank 1; a chain of 64 links: full rank. */
static size_t rank_of(const char *text, char *msg, size_t cap)
{
    hs_error err;
    hs_model *m = load(text, &err);
    hs_work *w = hs_work_new(m);
    ck_assert_ptr_nonnull(w);
    size_t r = hs_cons_rank(m, w, m->t0, m->q0, msg, cap, NULL);
    hs_work_free(w);
    hs_model_free(m);
    return r;
}

START_TEST(rank_certificate_and_qr)
{
    char msg[400], text[16384];
    const char *fmt =
        "coordinates: [x, y]\n"
        "mass: [1, 1]\n"
        "constraints: {a: x, b: 'x + %s*y'}\n"
        "initial: {q: {x: 0, y: 0}}\n";
    snprintf(text, sizeof text, fmt, "1e-7");
    ck_assert_uint_eq(rank_of(text, msg, sizeof msg), 2);
    snprintf(text, sizeof text, fmt, "1e-11");
    ck_assert_uint_eq(rank_of(text, msg, sizeof msg), 1);
    ck_assert_msg(strstr(msg, "depends on") != NULL, "%s", msg);
    snprintf(text, sizeof text, fmt, "0");
    ck_assert_uint_eq(rank_of(text, msg, sizeof msg), 1);
    /* a 64-link chain (band C): certified */
    size_t len = (size_t)snprintf(text, sizeof text, "coordinates: [");
    for (int i = 1; i <= 64; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%sx%d, y%d", i > 1 ? ", " : "", i, i);
    len += (size_t)snprintf(text + len, sizeof text - len, "]\nmass: [");
    for (int i = 1; i <= 128; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%s1", i > 1 ? ", " : "");
    len += (size_t)snprintf(text + len, sizeof text - len, "]\nconstraints:\n  l1: x1^2 + y1^2 - 1\n");
    for (int i = 2; i <= 64; i++)
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "  l%d: (x%d - x%d)^2 + (y%d - y%d)^2 - 1\n", i, i, i - 1, i, i - 1);
    len += (size_t)snprintf(text + len, sizeof text - len, "initial:\n  q: {");
    for (int i = 1; i <= 64; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%sx%d: %d, y%d: 0", i > 1 ? ", " : "",
                                i, i, i);
    snprintf(text + len, sizeof text - len, "}\n");
    ck_assert_uint_eq(rank_of(text, msg, sizeof msg), 64);
}
END_TEST

START_TEST(rheonomic_t0)
{
    const char *text =
        "parameters: {c: 0.5}\n"
        "coordinates: [x, y]\n"
        "mass: [1, 1]\n"
        "constraints: {moving: x - c*t}\n"
        "initial: {t: 2, q: {x: 0, y: 0}}\n";
    hs_error err;
    hs_model *m = load(text, &err);
    double q[2], v[2];
    ck_assert_int_eq(start(m, q, v, &err), 0);
    ck_assert_double_eq_tol(q[0], 1.0, 1e-12);
    ck_assert_double_eq_tol(v[0], 0.5, 1e-12);
    ck_assert(q[1] == 0 && v[1] == 0);
    hs_model_free(m);
}
END_TEST

/* A system driven into a singular configuration during the run: a particle
 * on the unit circle and on the line y = 0.5 t - 1 ... tangent at t = 4
 * (y = 1): exit 4 naming the time, rows before kept. */
START_TEST(singular_during_run)
{
    const char *text =
        "coordinates: [x, y]\n"
        "mass: [1, 1]\n"
        "constraints: {circle: x^2 + y^2 - 1, line: y - 0.25*t}\n"
        "initial: {q: {x: 1, y: 0}}\n"
        "simulate: {t_end: 10, dt: 0.1}\n";
    hs_error err;
    hs_model *m = load(text, &err);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hs_run_opts o = { .precision = 17 };
    hs_summary s;
    hs_error_init(&err);
    int rc = run_csv(m, o, f, NULL, NULL, &s, &err);
    fclose(f);
    ck_assert_int_eq(rc, HS_EXIT_NUMERIC);
    ck_assert_msg(strstr(err.msg, "t=") != NULL, "%s", err.msg);
    double tfail = atof(strstr(err.msg, "t=") + 2);
    ck_assert_msg(tfail > 3.5 && tfail <= 4.0 + 1e-9, "failed at %g: %s", tfail, err.msg);
    /* it names the cause: C nearly singular, both constraints, the place */
    ck_assert_msg(strstr(err.msg, "singular") && strstr(err.msg, "circle") &&
                  strstr(err.msg, "line") && strstr(err.msg, "x="), "%s", err.msg);
    /* rows: header + one per 0.1 up to the failure, all complete */
    int lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += buf[i] == '\n';
    ck_assert_int_ge(lines, 1 + 36);
    ck_assert(len > 0 && buf[len - 1] == '\n');
    ck_assert_ptr_null(strstr(buf, "nan"));
    free(buf);
    hs_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("consistency");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, pendulum_off_circle);
    tcase_add_test(tc, nearest_in_mass_norm);
    tcase_add_test(tc, lock_slider_crank);
    tcase_add_test(tc, reject_mode);
    tcase_add_test(tc, empty_set);
    tcase_add_test(tc, dependent_constraints);
    tcase_add_test(tc, rank_certificate_and_qr);
    tcase_add_test(tc, rheonomic_t0);
    tcase_add_test(tc, singular_during_run);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
