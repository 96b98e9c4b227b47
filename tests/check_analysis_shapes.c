/* src/analysis: complex mode shapes against closed forms (circular modes
 * of a spring seen from a turning frame), the verdict (stable, marginal,
 * unstable) on models whose linearization is known by hand, round-off
 * shown as 0, and a load for the analysis (hs_overrides.statics) that
 * leaves out outputs, events and the drawing. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_fixture.h"
#include "check_main.h"

#define FREQ_TOL 1e-9
#define SHAPE_TOL 1e-12

/* Load text (with --set name=value pairs, statics), equilibrium, modes:
 * all must succeed. */
static void analyse(an_case *c, const char *text, size_t nset, const char *const *name,
                    const double *value)
{
    an_sets s = { nset, { 0 }, { 0 } };
    ck_assert(nset <= AN_MAXSET);
    for (size_t i = 0; i < nset; i++) {
        s.name[i] = name[i];
        s.value[i] = value[i];
    }
    int rc = an_analyse(c, text, NULL, &s, 1);
    ck_assert_msg(rc == 0, "analysis failed (%d): %s", rc, c->err.msg);
}

static void close_rel(double got, double want, double tol, const char *what)
{
    ck_assert_msg(fabs(got - want) <= tol * fabs(want), "%s: %.17g, want %.17g", what, got,
                  want);
}

/* Component i of row r of the shape: re, im. */
static double re_of(const an_case *c, size_t r, size_t i) { return c->md.shape[r * c->md.n + i]; }
static double im_of(const an_case *c, size_t r, size_t i)
{
    return c->md.shape_im[r * c->md.n + i];
}

/* ---- circular modes in a turning frame ---- */

/* x + i y = e^(+-i w0 t) inertial, w0 = sqrt(k/m) = 2; a + i b =
 * e^(-i w t)(x + i y) in the frame turning at w: frequencies |w0 - w| and
 * w0 + w, circular (|d_a| = |d_b|), d_b = -i d_a for the one turning with
 * the frame below w0 (a = cos, b = sin), +i for the others. */
static const char turning[] =
    "name: isotropic spring in a turning frame\n"
    "parameters: {m: 1.5, k: 6.0, w: 0.5}\n"
    "coordinates: [a, b]\n"
    "embedding:\n"
    "  x: a*cos(w*t) - b*sin(w*t)\n"
    "  y: a*sin(w*t) + b*cos(w*t)\n"
    "mass: [m, m]\n"
    "potential: 0.5*k*(x^2 + y^2)\n"
    "initial: {q: {a: 0.1, b: -0.2}}\n";

static void circular(double w, double b_slow, double b_fast)
{
    static const char *const nm[] = { "w" };
    an_case c;
    analyse(&c, turning, 1, nm, &w);
    ck_assert_int_eq(c.md.conservative, 0);
    ck_assert_uint_eq(c.md.count, 2);
    close_rel(c.md.omega[0], fabs(2 - w), FREQ_TOL, "slow omega");
    close_rel(c.md.omega[1], 2 + w, FREQ_TOL, "fast omega");
    double want[2] = { b_slow, b_fast };
    for (size_t r = 0; r < 2; r++) {
        ck_assert_msg(c.md.sigma[r] == 0, "sigma %g (round-off is 0)", c.md.sigma[r]);
        /* the largest component (the first of equals): 1 at phase 0 */
        ck_assert(re_of(&c, r, 0) == 1 && im_of(&c, r, 0) == 0);
        ck_assert_msg(re_of(&c, r, 1) == 0, "Re d_b = %g", re_of(&c, r, 1));
        close_rel(im_of(&c, r, 1), want[r], SHAPE_TOL, "Im d_b");
    }
    ck_assert_int_eq(c.md.verdict, HS_AN_STABLE);
    ck_assert_int_eq(c.md.stable, 1);
    an_case_free(&c);
}

START_TEST(circular_modes)
{
    circular(0.5, -1, 1);
    circular(3.0, 1, 1);     /* k - m w^2 < 0: held by the Coriolis terms alone */
}
END_TEST

/* A real mode keeps a zero imaginary part: the double pendulum, Cartesian,
 * x1/x2 = sqrt 2 - 1 and no vertical motion, all exact where 0. */
static const char dp_cart[] = AN_DP_CART;

START_TEST(roundoff_is_zero)
{
    an_case c;
    analyse(&c, dp_cart, 0, NULL, NULL);
    ck_assert_msg(c.eq.q[0] == 0 && c.eq.q[2] == 0, "x1* = %g, x2* = %g", c.eq.q[0],
                  c.eq.q[2]);
    close_rel(c.eq.q[1], -0.7, 1e-12, "y1*");
    close_rel(c.eq.q[3], -1.4, 1e-12, "y2*");
    ck_assert_uint_eq(c.md.count, 2);
    for (size_t r = 0; r < 2; r++) {
        ck_assert_msg(re_of(&c, r, 1) == 0 && re_of(&c, r, 3) == 0, "vertical motion %g %g",
                      re_of(&c, r, 1), re_of(&c, r, 3));
        for (size_t i = 0; i < 4; i++)
            ck_assert_msg(im_of(&c, r, i) == 0, "Im d_%zu = %g", i, im_of(&c, r, i));
    }
    close_rel(re_of(&c, 0, 0), sqrt(2.0) - 1, SHAPE_TOL, "slow d_x1");
    ck_assert(re_of(&c, 0, 2) == 1 && re_of(&c, 1, 0) == 1);
    ck_assert_int_eq(c.md.verdict, HS_AN_STABLE);
    an_case_free(&c);
}
END_TEST

/* ---- the verdict ---- */

/* A free particle: every point an equilibrium, s = 0 twice: marginal. */
START_TEST(marginal_free_particle)
{
    an_case c;
    analyse(&c, "coordinates: [x]\nmass: [2]\ninitial: {q: {x: 0.3}}\n", 0, NULL, NULL);
    ck_assert(c.eq.q[0] == 0.3);
    ck_assert_uint_eq(c.md.nzero, 2);
    ck_assert_int_eq(c.md.verdict, HS_AN_MARGINAL);
    ck_assert_int_eq(c.md.stable, 0);
    ck_assert_str_eq(hs_an_verdict_names[c.md.verdict], "marginal");
    an_case_free(&c);
}
END_TEST

/* The bead on a hoop turning at its critical speed omega^2 = g/R: the
 * bottom has K = 0 (the quartic term decides): marginal; just below it
 * stable, just above it unstable (growth sqrt(omega^2 - g/R)). */
static const char hoop[] =
    "parameters: {m: 0.7, R: 1.0, g: 9.0, w: 3.0}\n"
    "coordinates: [theta]\n"
    "embedding:\n"
    "  x: R*sin(theta)*cos(w*t)\n"
    "  y: R*sin(theta)*sin(w*t)\n"
    "  z: -R*cos(theta)\n"
    "mass: [m, m, m]\n"
    "potential: m*g*z\n"
    "initial: {q: {theta: 0}}\n";

static const char hoop_from[] =
    "parameters: {m: 0.7, R: 1.0, g: 9.0, w: 3.0, th0: 1.0}\n"
    "coordinates: [theta]\n"
    "embedding:\n"
    "  x: R*sin(theta)*cos(w*t)\n"
    "  y: R*sin(theta)*sin(w*t)\n"
    "  z: -R*cos(theta)\n"
    "mass: [m, m, m]\n"
    "potential: m*g*z\n"
    "initial: {q: {theta: th0}}\n";

START_TEST(critical_speed)
{
    static const char *const nm[] = { "w" };
    an_case c;
    double w = 3.0;
    analyse(&c, hoop, 1, nm, &w);
    ck_assert_uint_eq(c.md.count, 2);
    ck_assert(c.md.sigma[0] == 0 && c.md.omega[0] == 0 && c.md.sigma[1] == 0 &&
              c.md.omega[1] == 0);
    ck_assert_uint_eq(c.md.nzero, 2);
    ck_assert_int_eq(c.md.verdict, HS_AN_MARGINAL);
    ck_assert(c.eq.floor == 0);
    an_case_free(&c);
    /* from theta = 1: Newton linear on the cubic force, down to round-off;
     * K there cancels below round-off of the stiffness met on the way */
    static const char *const nm2[] = { "w", "th0" };
    const double val2[] = { 3.0, 1.0 };
    analyse(&c, hoop_from, 2, nm2, val2);
    ck_assert_msg(fabs(c.eq.q[0]) < 1e-7, "theta* = %g", c.eq.q[0]);
    ck_assert_uint_eq(c.md.nzero, 2);
    ck_assert_int_eq(c.md.verdict, HS_AN_MARGINAL);
    an_case_free(&c);
    w = 2.9;
    analyse(&c, hoop, 1, nm, &w);
    close_rel(c.md.omega[0], sqrt(9.0 - w * w), FREQ_TOL, "below: omega");
    ck_assert_int_eq(c.md.verdict, HS_AN_STABLE);
    an_case_free(&c);
    w = 3.1;
    analyse(&c, hoop, 1, nm, &w);
    close_rel(c.md.sigma_max, sqrt(w * w - 9.0), FREQ_TOL, "above: growth");
    ck_assert_int_eq(c.md.verdict, HS_AN_UNSTABLE);
    an_case_free(&c);
}
END_TEST

/* The turning spring at w = w0: the centrifugal force cancels the spring
 * everywhere (a family of equilibria, s = 0 twice, semisimple), the other
 * pair at 2 w: marginal. */
START_TEST(marginal_family)
{
    static const char *const nm[] = { "w" };
    double w = 2.0;
    an_case c;
    analyse(&c, turning, 1, nm, &w);
    ck_assert(c.eq.q[0] == 0.1 && c.eq.q[1] == -0.2);
    ck_assert_uint_eq(c.md.count, 3);
    ck_assert_uint_eq(c.md.nzero, 2);
    close_rel(c.md.omega[2], 4, FREQ_TOL, "2 w");
    ck_assert_int_eq(c.md.verdict, HS_AN_MARGINAL);
    an_case_free(&c);
}
END_TEST

/* A free particle seen from a turning frame: s = +-i w, each twice, with
 * one shape (d_b = i d_a): a Jordan block, x + i y = e^(-i w t)(c0 + c1 t). */
START_TEST(marginal_jordan)
{
    static const char *const nm[] = { "k", "w" };
    const double val[] = { 0, 1.5 };
    an_case c;
    analyse(&c, turning, 2, nm, val);
    ck_assert_uint_eq(c.md.count, 2);
    ck_assert_uint_eq(c.md.nzero, 0);
    close_rel(c.md.jordan_omega, 1.5, 1e-7, "the repeated omega");
    ck_assert_int_eq(c.md.verdict, HS_AN_MARGINAL);
    an_case_free(&c);
}
END_TEST

/* Two equal undamped oscillators beside a damped one: i omega twice with
 * independent shapes in the first-order form: stable, not marginal. */
START_TEST(repeated_semisimple)
{
    an_case c;
    analyse(&c,
            "coordinates: [x, y, z]\nmass: [1, 1, 1]\n"
            "potential: 2*x^2 + 2*y^2 + 0.5*z^2\nforces: {z: -0.3*z'}\n"
            "initial: {q: {x: 0.1, y: 0.2, z: 0.3}}\n", 0, NULL, NULL);
    ck_assert_int_eq(c.md.conservative, 0);
    size_t twice = 0;
    for (size_t r = 0; r < c.md.count; r++)
        twice += fabs(c.md.omega[r] - 2) <= 1e-12 && c.md.sigma[r] == 0;
    ck_assert_uint_eq(twice, 2);
    ck_assert(c.md.jordan_omega == 0);
    ck_assert_int_eq(c.md.verdict, HS_AN_STABLE);
    an_case_free(&c);
}
END_TEST

/* ---- the load for the analysis ---- */

#define NAN_OUTPUT \
    "coordinates: [x, y]\n" \
    "mass: [1, 1]\n" \
    "parameters: {g: 9.81, a: 1, omega: 10}\n" \
    "potential: 0.5*x^2 + 0.5*y^2\n" \
    "outputs:\n" \
    "  w_small: sqrt(2*g*a - omega^2)\n" \
    "initial:\n" \
    "  q: {x: 0.1, y: 0}\n"
static const char nan_output[] = NAN_OUTPUT;
static const char nan_everywhere[] = NAN_OUTPUT
    "events:\n"
    "  hit: {when: x > log(a - 1), action: stop}\n"
    "draw:\n"
    "  points: {p: [x, y + sqrt(-a)]}\n";

START_TEST(statics_load)
{
    an_case c;
    analyse(&c, nan_everywhere, 0, NULL, NULL);
    ck_assert_uint_eq(c.m->nout, 0);
    ck_assert_uint_eq(c.m->nev, 0);
    ck_assert_ptr_null(c.m->draw);
    ck_assert_int_eq(c.md.verdict, HS_AN_STABLE);
    an_case_free(&c);
    /* a run's load refuses it at the output */
    hs_error err;
    hs_error_init(&err);
    hs_overrides ov;
    hs_overrides_init(&ov);
    hs_model *m = hs_model_load_string("<test>", nan_output, &ov, &err);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(err.code, HS_EXIT_MODEL);
    ck_assert_msg(strstr(err.msg, "constant expression evaluates to NaN/Inf: sqrt(-80.38)"),
                  "%s", err.msg);
    ck_assert_int_eq(err.line, 6);
    ck_assert_int_eq(err.column, 12);
    /* a name clash of an output is still found */
    hs_error_init(&err);
    ov.statics = 1;
    m = hs_model_load_string("<test>", "coordinates: [x]\nmass: [1]\noutputs: {x: 1}\n"
                             "initial: {q: {x: 0}}\n", &ov, &err);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(err.code, HS_EXIT_MODEL);
    ck_assert_int_eq(err.line, 3);
}
END_TEST

static Suite *shapes_suite(void)
{
    Suite *s = suite_create("analysis_shapes");
    TCase *t = tcase_create("shapes and verdicts");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, circular_modes);
    tcase_add_test(t, roundoff_is_zero);
    tcase_add_test(t, marginal_free_particle);
    tcase_add_test(t, critical_speed);
    tcase_add_test(t, marginal_family);
    tcase_add_test(t, marginal_jordan);
    tcase_add_test(t, repeated_semisimple);
    tcase_add_test(t, statics_load);
    suite_add_tcase(s, t);
    return s;
}

HS_CHECK_MAIN(shapes_suite)
