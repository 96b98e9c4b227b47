/* src/analysis: every failure with its exit code, message and position
 * (time dependence refused or folded away, no equilibrium, redundant
 * constraints, no false equilibrium, a start that is not finite), and
 * what the analysis does with redundant constraints (the minimum-norm
 * multipliers, a four-bar with a redundant crank).  The closed forms are
 * in check_analysis.c; the helpers are shared with it
 * (tests/analysis_expect.h). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_expect.h"
#include "check_main.h"

/* The same hoop with Cartesian coordinates and a turning plane: the
 * constraint depends on t (rheonomic), so there is no equilibrium in this
 * sense: exit 2 at the time dependence. */
static const char hoop_cart[] =
    "name: bead on a spinning hoop (Cartesian)\n"
    "parameters: {m: 0.7, R: 0.8, g: 9.81, w: 5.0}\n"
    "coordinates: [x, y, z]\n"
    "mass: [m, m, m]\n"
    "potential: m*g*z\n"
    "constraints:\n"
    "  sphere: x^2 + y^2 + z^2 - R^2\n"
    "  plane: -x*sin(w*t) + y*cos(w*t)\n"
    "initial: {q: {x: 0.5, y: 0, z: -0.6}}\n";

START_TEST(hoop_cartesian_rheonomic)
{
    an_case c;
    analyse(&c, hoop_cart, NULL, NULL);
    expect_error(&c, HS_EXIT_MODEL, "constraint 'plane'", 8, 18);
    ck_assert_msg(strstr(c.err.msg, "depends on time through 'w*t'"), "%s", c.err.msg);
    an_case_free(&c);
}
END_TEST


/* ---- failures ---- */

/* A pendulum whose length is driven in time: the metric and the force
 * depend on t (exit 2, at 'W*t' in the define). */
static const char driven_length[] =
    "name: driven pendulum\n"
    "parameters: {m: 1.0, l0: 1.0, e: 0.1, W: 3.0, g: 9.81}\n"
    "coordinates: [theta]\n"
    "define:\n"
    "  l: l0*(1 + e*sin(W*t))\n"
    "kinetic: 0.5*m*l^2*theta'^2\n"
    "potential: -m*g*l*cos(theta)\n"
    "initial: {q: {theta: 0.1}}\n";

static const char driven_force[] =
    "name: forced pendulum\n"
    "parameters: {m: 1.0, l: 1.0, g: 9.81, F0: 0.5, W: 3.0}\n"
    "coordinates: [theta]\n"
    "kinetic: 0.5*m*l^2*theta'^2\n"
    "potential: -m*g*l*cos(theta)\n"
    "forces: {theta: F0*cos(W*t)}\n"
    "initial: {q: {theta: 0.1}}\n";

/* A shaken support in embedding form: unlike a turning frame, the reduced
 * Lagrangian keeps t. */
static const char shaken_support[] =
    "name: pendulum on a shaken support\n"
    "parameters: {m: 1.0, l: 1.0, g: 9.81, A: 0.05, W: 7.0}\n"
    "coordinates: [theta]\n"
    "embedding:\n"
    "  x: A*sin(W*t) + l*sin(theta)\n"
    "  y: -l*cos(theta)\n"
    "mass: [m, m]\n"
    "potential: m*g*y\n"
    "initial: {q: {theta: 0.1}}\n";

START_TEST(time_dependence_refused)
{
    an_case c;
    analyse(&c, driven_length, NULL, NULL);
    expect_error(&c, HS_EXIT_MODEL, "M[theta,theta]", 5, 21);
    ck_assert_msg(strstr(c.err.msg, "depends on time through 'W*t'"), "%s", c.err.msg);
    an_case_free(&c);
    analyse(&c, driven_force, NULL, NULL);
    expect_error(&c, HS_EXIT_MODEL, "the generalized force Q[theta]", 6, 25);
    an_case_free(&c);
    analyse(&c, shaken_support, NULL, NULL);
    expect_error(&c, HS_EXIT_MODEL, "Q[theta]", 5, 13);
    ck_assert_msg(strstr(c.err.msg, "'W*t'"), "%s", c.err.msg);
    an_case_free(&c);
}
END_TEST

/* The driving amplitude 0: the model no longer depends on t, accepted. */
START_TEST(time_dependence_folded_away)
{
    sets s = { 1, { "e" }, { 0.0 } };
    an_case c;
    analyse_ok(&c, driven_length, NULL, &s);
    double want = sqrt(9.81);
    expect_omegas(&c, &want, 1, "undriven pendulum");
    an_case_free(&c);
}
END_TEST

/* A free particle under gravity: no force balances the weight (singular
 * Jacobian, the vertical balance blocks). */
static const char falling[] =
    "name: falling particle\n"
    "parameters: {m: 1.0, g: 9.81}\n"
    "coordinates: [x, y]\n"
    "mass: [m, m]\n"
    "potential: m*g*y\n"
    "initial: {q: {x: 0.3, y: 1.0}}\n";

/* U = exp(x): the force never vanishes, Newton walks off to -infinity. */
static const char runaway[] =
    "name: runaway\n"
    "coordinates: [x]\n"
    "mass: [1]\n"
    "potential: exp(x)\n"
    "initial: {q: {x: 0}}\n";

/* The same rod twice: dependent constraints, refused with
 * consistency.dependent: reject (twice_ok below: allowed by default). */
#define TWICE \
    "name: pendulum with a doubled rod\n" \
    "parameters: {m: 1.0, l: 1.0, g: 9.81}\n" \
    "coordinates: [x, y]\n" \
    "mass: [m, m]\n" \
    "potential: m*g*y\n" \
    "constraints: {rod: x^2 + y^2 - l^2, rod2: x^2 + y^2 - l^2}\n" \
    "initial: {q: {x: 0.2, y: -0.9}}\n"
static const char twice[] = TWICE "consistency: {dependent: reject}\n";
static const char twice_ok[] = TWICE;

START_TEST(no_equilibrium)
{
    an_case c;
    analyse(&c, falling, NULL, NULL);
    expect_error(&c, HS_EXIT_INCONSISTENT, "singular Jacobian", 0, 0);
    ck_assert_msg(strstr(c.err.msg, "blocking: coordinate 'y'"), "%s", c.err.msg);
    ck_assert_msg(strstr(c.err.msg, "best point: x = 0.3, y = 1"), "%s", c.err.msg);
    ck_assert_msg(strstr(c.err.msg, "max |Q + G_q^T lambda| = 9.81"), "%s", c.err.msg);
    ck_assert_str_eq(c.err.file, "<test>");
    an_case_free(&c);

    analyse(&c, runaway, NULL, NULL);
    expect_error(&c, HS_EXIT_INCONSISTENT, "did not converge in 100 steps", 0, 0);
    ck_assert_msg(strstr(c.err.msg, "blocking: coordinate 'x'"), "%s", c.err.msg);
    ck_assert_msg(c.eq.q[0] < -90, "best point x = %g", c.eq.q[0]);
    ck_assert_msg(c.eq.res_Q < 1e-30 && c.eq.res_Q > 0, "residual %g", c.eq.res_Q);
    an_case_free(&c);

    analyse(&c, twice, NULL, NULL);
    expect_error(&c, HS_EXIT_INCONSISTENT, "singular Jacobian", 0, 0);
    ck_assert_msg(strstr(c.err.msg, "blocking: constraint 'rod2'"), "%s", c.err.msg);
    an_case_free(&c);
}
END_TEST

/* Redundant constraints allowed: the bottom, rank 1 of 2, and the
 * minimum-norm multiplier: the rod's tension m g = 2 l (lambda_1 +
 * lambda_2) shared equally, lambda_j = -m g / (4 l); one mode at sqrt(g/l). */
START_TEST(redundant_minimum_norm)
{
    an_case c;
    analyse_ok(&c, twice_ok, NULL, NULL);
    ck_assert_uint_eq(c.eq.rank, 1);
    close_abs(c.eq.q[0], 0, 1e-12, "x");
    close_abs(c.eq.q[1], -1, 1e-12, "y");
    close_rel(c.eq.lambda[0], -9.81 / 4, 1e-12, "lambda_rod");
    close_rel(c.eq.lambda[1], -9.81 / 4, 1e-12, "lambda_rod2");
    ck_assert_uint_eq(c.md.dof, 1);
    an_case_free(&c);
}
END_TEST

/* A crank-rocker four-bar (crank r = 0.3 about O, coupler L = 1, rocker
 * b = 0.8 about (d, 0), d = 1): the crank tip (xa, ya) tied to the crank
 * angle th by two equations; FOURBAR_RED adds its length, a redundant
 * third (rank 4 of 5 on the manifold, independent off it).  Point masses at
 * the tips, gravity. */
#define FOURBAR_HEAD \
    "name: crank-rocker four-bar\n" \
    "parameters: {J: 0.01, ma: 1, mb: 2, r: 0.3, L: 1, b: 0.8, d: 1, g: 9.81, th0: -1.8,\n" \
    "             xa0: 0, ya0: 0}\n" \
    "coordinates: [th, xa, ya, xb, yb]\n" \
    "mass: [J, ma, ma, mb, mb]\n" \
    "potential: g*(ma*ya + mb*yb)\n" \
    "constraints:\n" \
    "  cx: xa - r*cos(th)\n" \
    "  cy: ya - r*sin(th)\n"
#define FOURBAR_TAIL \
    "  coupler: (xb - xa)^2 + (yb - ya)^2 - L^2\n" \
    "  rocker: (xb - d)^2 + yb^2 - b^2\n" \
    "initial:\n" \
    "  q: {th: th0, xa: r*cos(th0) + xa0, ya: r*sin(th0) + ya0, xb: 1.5, yb: -0.6}\n"
static const char fourbar[] = FOURBAR_HEAD FOURBAR_TAIL;
static const char fourbar_red[] = FOURBAR_HEAD "  crank: xa^2 + ya^2 - r^2\n" FOURBAR_TAIL;

/* omega of A (2 x 2: one degree of freedom): sqrt(-A[1][0]). */
static double fourbar_A_omega(an_case *c, size_t nsolved)
{
    hs_linear lin;
    ck_assert_int_eq(hs_an_linearize(c->a, &c->eq, &lin, &c->err), 0);
    ck_assert_uint_eq(lin.dof, 1);
    ck_assert_uint_eq(lin.nsolved, nsolved);
    ck_assert_str_eq(c->m->qname[lin.state[0]], "th");
    ck_assert(lin.A[0] == 0 && lin.A[1] == 1 && lin.A[3] == 0);
    double w = sqrt(-lin.A[2]);
    hs_an_linear_free(&lin);
    return w;
}

/* Redundant constraints: the same equilibrium, eigenvalue and state-space
 * matrix as without the redundant row, from starts 0.4 rad on either side
 * of q* (th* = -1.397) and from one off the manifold (the crank tip 0.1
 * and 0.2 off its circle: the redundancy shows only after a projection);
 * lambda is the reaction of the four-bar's own (lambda_ext, with 0 for the
 * crank row) plus t nu, nu = (2 xa, 2 ya, -1, 0, 0) spanning ker G_q^T,
 * with the least norm: lambda . nu = 0. */
START_TEST(redundant_fourbar)
{
    static const struct { double th0, xa0, ya0; } starts[] = {
        { -1.797, 0, 0 }, { -0.997, 0, 0 }, { -1.8, -0.1, 0.2 }, { -1.0, 0.1, 0.2 },
    };
    for (size_t s = 0; s < sizeof starts / sizeof *starts; s++) {
        sets st = { 3, { "th0", "xa0", "ya0" }, { starts[s].th0, starts[s].xa0,
                                                  starts[s].ya0 } };
        an_case c, r;
        analyse_ok(&c, fourbar, NULL, &st);
        analyse_ok(&r, fourbar_red, NULL, &st);
        ck_assert_uint_eq(c.eq.rank, 4);
        ck_assert_uint_eq(r.eq.rank, 4);
        close_abs(c.eq.q[0], -1.3971602093524995, 1e-12, "th* (the four-bar)");
        for (size_t i = 0; i < 5; i++)
            close_abs(r.eq.q[i], c.eq.q[i], 1e-12, "q* with the redundant row");
        double xa = r.eq.q[1], ya = r.eq.q[2], *l = r.eq.lambda, *l0 = c.eq.lambda;
        double t = -l[2];           /* constraint order: cx, cy, crank, coupler, rocker */
        close_abs(l[0], l0[0] + 2 * xa * t, 1e-10, "lambda_cx");
        close_abs(l[1], l0[1] + 2 * ya * t, 1e-10, "lambda_cy");
        close_abs(l[3], l0[2], 1e-10, "lambda_coupler");
        close_abs(l[4], l0[3], 1e-10, "lambda_rocker");
        close_abs(l[0] * 2 * xa + l[1] * 2 * ya - l[2], 0, 1e-10, "lambda . nu (least norm)");
        ck_assert_uint_eq(c.md.count, 1);
        ck_assert_uint_eq(r.md.count, 1);
        ck_assert_uint_eq(r.md.dof, 1);
        close_rel(r.md.omega[0], c.md.omega[0], 1e-10, "omega with the redundant row");
        close_rel(fourbar_A_omega(&r, 4), c.md.omega[0], 1e-10, "omega of A, redundant");
        close_rel(fourbar_A_omega(&c, 4), c.md.omega[0], 1e-10, "omega of A");
        an_case_free(&c);
        an_case_free(&r);
    }
}
END_TEST

/* No false equilibrium: every way Newton can stop, fed a model without
 * an equilibrium, ends in exit 3 with the best point (never exit 0 with a
 * residual of the size of the forces). */

/* A bead on a straight wire tilted by atan(a), under gravity: J singular
 * (S = 0), the least-norm step is 0, the residual m g sin cos stays. */
static const char tilted_bead[] =
    "name: bead on a tilted wire\n"
    "parameters: {m: 1, g: 9.81, a: 0.5}\n"
    "coordinates: [x, y]\n"
    "mass: [m, m]\n"
    "potential: m*g*y\n"
    "constraints: {wire: y - a*x}\n"
    "initial: {q: {x: 0.3, y: 0.15}}\n";

/* Q_x = 1 - x^3 (an equilibrium at x = 1, from far), Q_y = -(y^2 + c)
 * (none): the line search ends below 64 eps of the start's residual, the
 * round-off floor of a flat equilibrium, with Q_y = -c left. */
static const char flat_none[] =
    "name: no equilibrium at a round-off floor\n"
    "parameters: {c: 1e-6, x0: 1e10}\n"
    "coordinates: [x, y]\n"
    "mass: [1, 1]\n"
    "potential: x^4/4 - x + y^3/3 + c*y\n"
    "initial: {q: {x: x0, y: 1}}\n";

/* Q = -(x^2 + 1): |Q| has its minimum 1 at x = 0, where the line search stops. */
static const char parabola_none[] =
    "name: no equilibrium, a minimum of |Q|\n"
    "coordinates: [x]\n"
    "mass: [1]\n"
    "potential: x^3/3 + x\n"
    "initial: {q: {x: 0.7}}\n";

/* Exit 3 saying how Newton stopped, the best point's residual at least res_Q. */
static void expect_no_equilibrium(const char *text, const char *file, const sets *s,
                                  const char *how, double res_Q)
{
    an_case c;
    analyse(&c, text, file, s);
    expect_error(&c, HS_EXIT_INCONSISTENT, "no equilibrium found: ", 0, 0);
    ck_assert_msg(strstr(c.err.msg, how), "'%s' lacks '%s'", c.err.msg, how);
    ck_assert_msg(strstr(c.err.msg, "best point: "), "%s", c.err.msg);
    ck_assert_msg(c.eq.res_Q >= res_Q, "residual %g < %g", c.eq.res_Q, res_Q);
    an_case_free(&c);
}

START_TEST(no_false_equilibrium)
{
    /* a singular Jacobian with nothing to balance the weight (k = 0) */
    expect_no_equilibrium(falling, NULL, NULL, "singular Jacobian", 9.81);
    /* the least-norm step: the weight's component along the wire is left,
     * at least the least-squares residual m g a / (1 + a^2) (lambda = m g /
     * (1 + a^2) minimizes |Q + G_q^T lambda|) */
    expect_no_equilibrium(tilted_bead, NULL, NULL, "its least-norm step is 0 while the "
                          "residual", 9.81 * 0.5 / 1.25);
    sets steep = { 1, { "a" }, { 3 } };
    expect_no_equilibrium(tilted_bead, NULL, &steep, "a force that no constraint reaction "
                          "balances", 9.81 * 9 / 10);
    /* the round-off floor of the line search: the residual left is not
     * round-off (Q_y = -c), or the next step is not small (x far away) */
    expect_no_equilibrium(flat_none, NULL, NULL, "but the residual is", 1e-6);
    sets closer = { 1, { "x0" }, { 1e9 } };
    expect_no_equilibrium(flat_none, NULL, &closer, "but the next Newton step is", 1e-6);
    /* a line search that cannot reduce |F|: at least min |Q| = 1 */
    expect_no_equilibrium(parabola_none, NULL, NULL, "the line search cannot reduce", 1);
    /* the Atwood machine: no equilibrium with m1 != m2 (once exit 0,
     * "marginal", with the residual g (m1 - m2) / 2); a family of them with
     * m1 = m2, balanced to round-off */
    expect_no_equilibrium(NULL, "atwood.yaml", NULL, "least-norm step is 0", 9.81 / 2);
    an_case c;
    sets equal = { 1, { "m2" }, { 2 } };
    analyse_ok(&c, NULL, "atwood.yaml", &equal);
    ck_assert_msg(c.eq.res_Q <= 1e-14 * 2 * 9.81, "residual %g", c.eq.res_Q);
    close_rel(c.eq.lambda[0], 2 * 9.81, 1e-14, "lambda_string = m g");
    an_case_free(&c);
}
END_TEST

/* A value that is not finite at the start: exit 3 at its source. */
static const char sqrt_negative[] =
    "name: bad start\n"
    "coordinates: [x]\n"
    "mass: [1]\n"
    "potential: sqrt(x)\n"
    "initial: {q: {x: -1}}\n";

/* The metric x^4 log(x) vanishes at the equilibrium x = 1. */
static const char metric_vanishes[] =
    "name: vanishing metric\n"
    "coordinates: [x]\n"
    "kinetic: 0.5*x^4*log(x)*x'^2\n"
    "potential: (x - 1)^2\n"
    "initial: {q: {x: 2}}\n";

START_TEST(nonfinite_start)
{
    an_case c;
    analyse(&c, sqrt_negative, NULL, NULL);
    expect_error(&c, HS_EXIT_INCONSISTENT, "at the start point", 4, 12);
    an_case_free(&c);
    analyse(&c, metric_vanishes, NULL, NULL);
    expect_error(&c, HS_EXIT_INCONSISTENT, "metric d2T/dv2 is not positive definite on the "
                 "tangent space at the equilibrium", 0, 0);
    close_abs(c.eq.q[0], 1, EQ_TOL, "the equilibrium found before");
    an_case_free(&c);
}
END_TEST

static Suite *analysis_failures_suite(void)
{
    Suite *s = suite_create("analysis_failures");
    TCase *f = tcase_create("failures");
    tcase_add_test(f, hoop_cartesian_rheonomic);
    tcase_add_test(f, time_dependence_refused);
    tcase_add_test(f, time_dependence_folded_away);
    tcase_add_test(f, no_equilibrium);
    tcase_add_test(f, redundant_minimum_norm);
    tcase_add_test(f, no_false_equilibrium);
    tcase_add_test(f, redundant_fourbar);
    tcase_add_test(f, nonfinite_start);
    suite_add_tcase(s, f);
    return s;
}

HS_CHECK_MAIN(analysis_failures_suite)
