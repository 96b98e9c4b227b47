/* src/analysis: equilibria, multipliers, eigenvalues and mode shapes
 * against closed forms and textbook eigenproblems (relative 1e-9 for
 * frequencies and growth rates, 1e-10 for equilibria, 1e-9 for
 * multipliers), and every failure with its exit code, message and
 * position. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sort_vector.h>

#include "analysis_fixture.h"
#include "check_main.h"

#define FREQ_TOL 1e-9
#define EQ_TOL 1e-10
#define LAMBDA_TOL 1e-9

/* ---- helpers ---- */

typedef an_sets sets;

static int analyse(an_case *c, const char *text, const char *file, const sets *s)
{
    return an_analyse(c, text, file, s, 0);
}

static void analyse_ok(an_case *c, const char *text, const char *file, const sets *s)
{
    int rc = analyse(c, text, file, s);
    ck_assert_msg(rc == 0, "analysis failed (%d): %s", rc, c->err.msg);
}

static void close_rel(double got, double want, double tol, const char *what)
{
    double err = fabs(got - want) / fabs(want);
    ck_assert_msg(err <= tol, "%s: %.17g, want %.17g (relative error %.3g > %g)", what, got,
                  want, err, tol);
}

static void close_abs(double got, double want, double tol, const char *what)
{
    ck_assert_msg(fabs(got - want) <= tol, "%s: %.17g, want %.17g (error %.3g > %g)", what,
                  got, want, fabs(got - want), tol);
}

static size_t coord(const hs_model *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->qname[i], name) == 0)
            return i;
    ck_abort_msg("no coordinate %s", name);
    return 0;
}

/* The error: exit code, a message part, and line:column (0: unplaced). */
static void expect_error(const an_case *c, int code, const char *part, int line, int col)
{
    ck_assert_msg(c->rc == code, "exit %d, want %d (%s)", c->rc, code, c->err.msg);
    ck_assert_msg(strstr(c->err.msg, part), "message '%s' lacks '%s'", c->err.msg, part);
    if (line) {
        ck_assert_msg(c->err.line == line && c->err.column == col,
                      "at %d:%d, want %d:%d (%s)", c->err.line, c->err.column, line, col,
                      c->err.msg);
        ck_assert_str_eq(c->err.file, "<test>");
        ck_assert_msg(c->err.source[0], "no source line");
    }
}

/* Conservative oscillator rows: sigma = 0, omega = want[r] (ascending). */
static void expect_omegas(const an_case *c, const double *want, size_t cnt, const char *what)
{
    char lab[96];
    ck_assert_msg(c->md.count == cnt, "%s: %zu modes, want %zu", what, c->md.count, cnt);
    for (size_t r = 0; r < cnt; r++) {
        snprintf(lab, sizeof lab, "%s: omega of mode %zu", what, r + 1);
        close_rel(c->md.omega[r], want[r], FREQ_TOL, lab);
        ck_assert_msg(fabs(c->md.sigma[r]) <= 1e-12 * want[r], "%s: sigma %g", what,
                      c->md.sigma[r]);
    }
    ck_assert_int_eq(c->md.stable, 1);
}

/* ---- double pendulum: omega^2 = (2 -+ sqrt 2) g/l ---- */

static const char dp_cart[] = AN_DP_CART;

static const char dp_angles[] =
    "name: double pendulum (angles)\n"
    "parameters: {m: 1.3, l: 0.7, g: 9.81}\n"
    "coordinates: [th1, th2]\n"
    "kinetic: m*l^2*th1'^2 + 0.5*m*l^2*th2'^2 + m*l^2*cos(th1 - th2)*th1'*th2'\n"
    "potential: -2*m*g*l*cos(th1) - m*g*l*cos(th2)\n"
    "initial: {q: {th1: 0.3, th2: -0.2}}\n";

static void dp_omegas(double *w)
{
    double g = 9.81, l = 0.7;
    w[0] = sqrt((2 - sqrt(2.0)) * g / l);
    w[1] = sqrt((2 + sqrt(2.0)) * g / l);
}

START_TEST(double_pendulum_cartesian)
{
    an_case c;
    analyse_ok(&c, dp_cart, NULL, NULL);
    double w[2], m = 1.3, l = 0.7, g = 9.81;
    dp_omegas(w);
    expect_omegas(&c, w, 2, "Cartesian double pendulum");
    ck_assert_int_eq(c.md.conservative, 1);
    const hs_model *M = c.m;
    double want_q[4] = { 0, -l, 0, -2 * l };
    for (size_t i = 0; i < 4; i++)
        close_abs(c.eq.q[i], want_q[i], EQ_TOL * l, M->qname[i]);
    /* y2: -m g - 2 l lambda2 = 0; y1: -m g - 2 l lambda1 + 2 l lambda2 = 0 */
    close_rel(c.eq.lambda[0], -m * g / l, LAMBDA_TOL, "lambda_rod1");
    close_rel(c.eq.lambda[1], -m * g / (2 * l), LAMBDA_TOL, "lambda_rod2");
    /* shapes: dx2/dx1 = 1 + sqrt 2 (slow), 1 - sqrt 2 (fast); no vertical motion */
    size_t x1 = coord(M, "x1"), x2 = coord(M, "x2"), y1 = coord(M, "y1"), y2 = coord(M, "y2");
    const double *s0 = c.md.shape, *s1 = c.md.shape + 4;
    close_rel(s0[x1], sqrt(2.0) - 1, 1e-9, "slow mode d_x1");
    close_abs(s0[x2], 1, 1e-12, "slow mode d_x2");
    close_abs(s1[x1], 1, 1e-12, "fast mode d_x1");
    close_rel(s1[x2], 1 - sqrt(2.0), 1e-9, "fast mode d_x2");
    for (int r = 0; r < 2; r++) {
        close_abs(c.md.shape[r * 4 + y1], 0, 1e-12, "d_y1");
        close_abs(c.md.shape[r * 4 + y2], 0, 1e-12, "d_y2");
    }
    an_case_free(&c);
}
END_TEST

START_TEST(double_pendulum_angles)
{
    an_case c;
    analyse_ok(&c, dp_angles, NULL, NULL);
    double w[2];
    dp_omegas(w);
    expect_omegas(&c, w, 2, "angle double pendulum");
    close_abs(c.eq.q[0], 0, EQ_TOL, "th1*");
    close_abs(c.eq.q[1], 0, EQ_TOL, "th2*");
    /* th1 = th2 / sqrt 2 in the slow mode, -th2 / sqrt 2 in the fast one */
    close_rel(c.md.shape[0], 1 / sqrt(2.0), 1e-9, "slow d_th1");
    close_abs(c.md.shape[1], 1, 1e-12, "slow d_th2");
    close_rel(c.md.shape[2], -1 / sqrt(2.0), 1e-9, "fast d_th1");
    close_abs(c.md.shape[3], 1, 1e-12, "fast d_th2");
    an_case_free(&c);
}
END_TEST

/* The shipped model agrees with the closed form at its own parameters. */
START_TEST(double_pendulum_shipped)
{
    an_case c;
    analyse_ok(&c, NULL, "double_pendulum_modes.yaml", NULL);
    double g = 9.81;
    double w[2] = { sqrt((2 - sqrt(2.0)) * g), sqrt((2 + sqrt(2.0)) * g) };
    expect_omegas(&c, w, 2, "models/double_pendulum_modes.yaml");
    an_case_free(&c);
    analyse_ok(&c, NULL, "double_pendulum.yaml", NULL);
    expect_omegas(&c, w, 2, "models/double_pendulum.yaml");
    an_case_free(&c);
    /* from theta2 = 1.5 a full Newton step on sin would land near -4 pi;
     * the step cap keeps it in the basin of the hanging position */
    analyse_ok(&c, NULL, "double_pendulum_angles.yaml", NULL);
    close_abs(c.eq.q[0], 0, EQ_TOL, "theta1*");
    close_abs(c.eq.q[1], 0, EQ_TOL, "theta2*");
    expect_omegas(&c, w, 2, "models/double_pendulum_angles.yaml");
    an_case_free(&c);
}
END_TEST

/* ---- triple pendulum against its textbook 3 x 3 eigenproblem ---- */

static const double tp_m[3] = { 1.0, 0.7, 0.4 }, tp_l[3] = { 1.2, 0.9, 0.5 }, tp_g = 9.81;

static const char tp_angles[] =
    "name: triple pendulum (angles)\n"
    "parameters: {m1: 1.0, m2: 0.7, m3: 0.4, l1: 1.2, l2: 0.9, l3: 0.5, g: 9.81}\n"
    "coordinates: [a1, a2, a3]\n"
    "kinetic: >-\n"
    "  0.5*(m1 + m2 + m3)*l1^2*a1'^2 + 0.5*(m2 + m3)*l2^2*a2'^2 + 0.5*m3*l3^2*a3'^2\n"
    "  + (m2 + m3)*l1*l2*cos(a1 - a2)*a1'*a2' + m3*l1*l3*cos(a1 - a3)*a1'*a3'\n"
    "  + m3*l2*l3*cos(a2 - a3)*a2'*a3'\n"
    "potential: -(m1 + m2 + m3)*g*l1*cos(a1) - (m2 + m3)*g*l2*cos(a2) - m3*g*l3*cos(a3)\n"
    "initial: {q: {a1: 0.2, a2: -0.1, a3: 0.3}}\n";

static const char tp_cart[] =
    "name: triple pendulum (Cartesian)\n"
    "parameters: {m1: 1.0, m2: 0.7, m3: 0.4, l1: 1.2, l2: 0.9, l3: 0.5, g: 9.81,\n"
    "             a1: 0.2, a2: -0.1, a3: 0.3}\n"
    "coordinates: [x1, y1, x2, y2, x3, y3]\n"
    "mass: [m1, m1, m2, m2, m3, m3]\n"
    "potential: g*(m1*y1 + m2*y2 + m3*y3)\n"
    "constraints:\n"
    "  rod1: x1^2 + y1^2 - l1^2\n"
    "  rod2: (x2 - x1)^2 + (y2 - y1)^2 - l2^2\n"
    "  rod3: (x3 - x2)^2 + (y3 - y2)^2 - l3^2\n"
    "initial:\n"
    "  q:\n"
    "    x1: l1*sin(a1)\n"
    "    y1: -l1*cos(a1)\n"
    "    x2: l1*sin(a1) + l2*sin(a2)\n"
    "    y2: -l1*cos(a1) - l2*cos(a2)\n"
    "    x3: l1*sin(a1) + l2*sin(a2) + l3*sin(a3)\n"
    "    y3: -l1*cos(a1) - l2*cos(a2) - l3*cos(a3)\n";

/* The textbook linearization about the hanging position:
 * M_ij = (sum_{k >= max(i,j)} m_k) l_i l_j, K = diag(g l_i sum_{k >= i} m_k),
 * solved here by GSL's generalized symmetric eigensolver. */
static void tp_textbook(double *w)
{
    gsl_matrix *M = gsl_matrix_alloc(3, 3), *K = gsl_matrix_calloc(3, 3);
    gsl_vector *mu = gsl_vector_alloc(3);
    gsl_eigen_gensymm_workspace *ws = gsl_eigen_gensymm_alloc(3);
    for (size_t i = 0; i < 3; i++) {
        double below = 0;
        for (size_t k = i; k < 3; k++)
            below += tp_m[k];
        gsl_matrix_set(K, i, i, tp_g * tp_l[i] * below);
        for (size_t j = 0; j < 3; j++) {
            double s = 0;
            for (size_t k = i > j ? i : j; k < 3; k++)
                s += tp_m[k];
            gsl_matrix_set(M, i, j, s * tp_l[i] * tp_l[j]);
        }
    }
    ck_assert_int_eq(gsl_eigen_gensymm(K, M, mu, ws), 0);
    gsl_sort_vector(mu);
    for (size_t i = 0; i < 3; i++)
        w[i] = sqrt(gsl_vector_get(mu, i));
    gsl_eigen_gensymm_free(ws);
    gsl_vector_free(mu);
    gsl_matrix_free(M);
    gsl_matrix_free(K);
}

START_TEST(triple_pendulum_textbook)
{
    double w[3];
    tp_textbook(w);
    an_case c;
    analyse_ok(&c, tp_angles, NULL, NULL);
    expect_omegas(&c, w, 3, "triple pendulum (angles)");
    for (size_t i = 0; i < 3; i++)
        close_abs(c.eq.q[i], 0, EQ_TOL, "angle at equilibrium");
    an_case_free(&c);
    analyse_ok(&c, tp_cart, NULL, NULL);
    expect_omegas(&c, w, 3, "triple pendulum (Cartesian)");
    /* each rod carries the weight below it: lambda_j = -g sum_{k>=j} m_k / (2 l_j) */
    for (size_t j = 0; j < 3; j++) {
        double below = 0;
        for (size_t k = j; k < 3; k++)
            below += tp_m[k];
        close_rel(c.eq.lambda[j], -tp_g * below / (2 * tp_l[j]), LAMBDA_TOL, c.m->cname[j]);
    }
    an_case_free(&c);
}
END_TEST

/* ---- bead on a spinning hoop (embedding form: a moving chart) ---- */

static const char hoop_emb[] =
    "name: bead on a spinning hoop\n"
    "parameters: {m: 0.7, R: 0.8, g: 9.81, w: 5.0, theta0: 1.0}\n"
    "coordinates: [theta]\n"
    "embedding:\n"
    "  x: R*sin(theta)*cos(w*t)\n"
    "  y: R*sin(theta)*sin(w*t)\n"
    "  z: -R*cos(theta)\n"
    "mass: [m, m, m]\n"
    "potential: m*g*z\n"
    "initial: {q: {theta: theta0}}\n";

/* w^2 > g/R: cos(th*) = g/(w^2 R), omega = sqrt(w^2 - g^2/(w^2 R^2)); the
 * centrifugal term is the velocity-free part of T, in Q at v = 0. */
START_TEST(hoop_settles)
{
    double R = 0.8, g = 9.81, w = 5.0;
    an_case c;
    analyse_ok(&c, hoop_emb, NULL, NULL);
    close_abs(c.eq.q[0], acos(g / (w * w * R)), EQ_TOL, "theta*");
    double want = sqrt(w * w - g * g / (w * w * R * R));
    expect_omegas(&c, &want, 1, "hoop");
    close_abs(c.md.shape[0], 1, 0, "shape");
    an_case_free(&c);
}
END_TEST

/* The bottom is unstable: s = +-sqrt(w^2 - g/R), two real rows. */
START_TEST(hoop_bottom_unstable)
{
    double R = 0.8, g = 9.81, w = 5.0, r = sqrt(w * w - g / R);
    sets s = { 1, { "theta0" }, { 0.05 } };
    an_case c;
    analyse_ok(&c, hoop_emb, NULL, &s);
    close_abs(c.eq.q[0], 0, EQ_TOL, "theta* (bottom)");
    ck_assert_uint_eq(c.md.count, 2);
    close_rel(c.md.sigma[0], r, FREQ_TOL, "growth rate");
    close_rel(c.md.sigma[1], -r, FREQ_TOL, "decay rate");
    ck_assert(c.md.omega[0] == 0 && c.md.omega[1] == 0);
    ck_assert_int_eq(c.md.stable, 0);
    close_rel(c.md.sigma_max, r, FREQ_TOL, "sigma_max");
    an_case_free(&c);
}
END_TEST

/* Below the critical speed the bottom is stable: omega^2 = g/R - w^2. */
START_TEST(hoop_slow)
{
    double R = 0.8, g = 9.81, w = 2.0;
    sets s = { 2, { "w", "theta0" }, { w, 0.4 } };
    an_case c;
    analyse_ok(&c, hoop_emb, NULL, &s);
    close_abs(c.eq.q[0], 0, EQ_TOL, "theta* (bottom)");
    double want = sqrt(g / R - w * w);
    expect_omegas(&c, &want, 1, "slow hoop");
    an_case_free(&c);
}
END_TEST

/* The shipped model: its equilibrium and frequency. */
START_TEST(hoop_shipped)
{
    double R = 1.0, g = 9.81, w = 5.0;
    an_case c;
    analyse_ok(&c, NULL, "hoop_equilibrium.yaml", NULL);
    close_abs(c.eq.q[0], acos(g / (w * w * R)), EQ_TOL, "theta*");
    double want = sqrt(w * w - g * g / (w * w * R * R));
    expect_omegas(&c, &want, 1, "models/hoop_equilibrium.yaml");
    an_case_free(&c);
}
END_TEST

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

/* ---- gyroscopic: an isotropic spring seen from a turning frame ---- */

static const char spring_turning[] =
    "name: isotropic spring in a turning frame\n"
    "parameters: {m: 1.5, k: 6.0, w: 0.5}\n"
    "coordinates: [a, b]\n"
    "embedding:\n"
    "  x: a*cos(w*t) - b*sin(w*t)\n"
    "  y: a*sin(w*t) + b*cos(w*t)\n"
    "mass: [m, m]\n"
    "potential: 0.5*k*(x^2 + y^2)\n"
    "initial: {q: {a: 0.1, b: -0.2}}\n";

/* In the frame turning at w the circular modes of frequency w0 = sqrt(k/m)
 * appear at |w0 - w| and w0 + w; above w = w0 the stiffness k - m w^2 is
 * negative and the Coriolis (gyroscopic) terms alone keep it stable. */
static void spring_case(double w)
{
    double w0 = 2.0;
    sets s = { 1, { "w" }, { w } };
    an_case c;
    analyse_ok(&c, spring_turning, NULL, &s);
    ck_assert_int_eq(c.md.conservative, 0);
    close_abs(c.eq.q[0], 0, EQ_TOL, "a*");
    close_abs(c.eq.q[1], 0, EQ_TOL, "b*");
    double want[2] = { fabs(w0 - w), w0 + w };
    expect_omegas(&c, want, 2, "turning spring");
    an_case_free(&c);
}

START_TEST(spring_turning_frame)
{
    spring_case(0.5);
    spring_case(3.0);    /* k - m w^2 < 0: gyroscopic stability */
}
END_TEST

/* ---- damping: sigma = -c/(2m) ---- */

static const char pend_damped[] =
    "name: damped pendulum\n"
    "parameters: {m: 0.8, l: 0.6, g: 9.81, c: 0.3}\n"
    "coordinates: [x, y]\n"
    "mass: [m, m]\n"
    "potential: m*g*y\n"
    "forces: {x: -c*x', y: -c*y'}\n"
    "constraints: {rod: x^2 + y^2 - l^2}\n"
    "initial: {q: {x: 0.1, y: -0.5}}\n";

static const char pend_damped_angle[] =
    "name: damped pendulum (angle)\n"
    "parameters: {m: 0.8, l: 0.6, g: 9.81, c: 0.3}\n"
    "coordinates: [theta]\n"
    "kinetic: 0.5*m*l^2*theta'^2\n"
    "potential: -m*g*l*cos(theta)\n"
    "forces: {theta: -c*l^2*theta'}\n"
    "initial: {q: {theta: 0.4}}\n";

START_TEST(damped_pendulum)
{
    double m = 0.8, l = 0.6, g = 9.81, c = 0.3;
    const char *texts[2] = { pend_damped, pend_damped_angle };
    for (int f = 0; f < 2; f++) {
        an_case a;
        analyse_ok(&a, texts[f], NULL, NULL);
        ck_assert_int_eq(a.md.conservative, 0);
        ck_assert_uint_eq(a.md.count, 1);
        close_rel(a.md.sigma[0], -c / (2 * m), FREQ_TOL, "sigma");
        close_rel(a.md.omega[0], sqrt(g / l - c * c / (4 * m * m)), FREQ_TOL, "omega");
        ck_assert_int_eq(a.md.stable, 1);
        an_case_free(&a);
    }
}
END_TEST

/* Overdamped: two real decay rates -c/(2m) -+ sqrt(c^2/(4m^2) - g/l). */
START_TEST(overdamped_pendulum)
{
    double m = 0.8, l = 0.6, g = 9.81, c = 8.0;
    sets s = { 1, { "c" }, { c } };
    an_case a;
    analyse_ok(&a, pend_damped_angle, NULL, &s);
    ck_assert_uint_eq(a.md.count, 2);
    double d = sqrt(c * c / (4 * m * m) - g / l);
    close_rel(a.md.sigma[0], -c / (2 * m) + d, FREQ_TOL, "slow decay");
    close_rel(a.md.sigma[1], -c / (2 * m) - d, FREQ_TOL, "fast decay");
    ck_assert(a.md.omega[0] == 0 && a.md.omega[1] == 0);
    an_case_free(&a);
}
END_TEST

/* ---- the upright pendulum ---- */

static const char pend_up[] =
    "name: upright pendulum\n"
    "parameters: {m: 0.8, l: 0.6, g: 9.81}\n"
    "coordinates: [x, y]\n"
    "mass: [m, m]\n"
    "potential: m*g*y\n"
    "constraints: {rod: x^2 + y^2 - l^2}\n"
    "initial: {q: {x: 0.05, y: 0.55}}\n";

/* Unstable with growth sqrt(g/l); the reaction G_q^T lambda = (0, 2 l
 * lambda) = (0, m g) holds the weight. */
START_TEST(upright_pendulum)
{
    double m = 0.8, l = 0.6, g = 9.81;
    an_case c;
    analyse_ok(&c, pend_up, NULL, NULL);
    close_abs(c.eq.q[0], 0, EQ_TOL * l, "x*");
    close_rel(c.eq.q[1], l, EQ_TOL, "y*");
    close_rel(c.eq.lambda[0], m * g / (2 * l), LAMBDA_TOL, "lambda_rod");
    close_rel(2 * c.eq.q[1] * c.eq.lambda[0], m * g, LAMBDA_TOL, "vertical reaction");
    ck_assert_uint_eq(c.md.count, 2);
    close_rel(c.md.sigma[0], sqrt(g / l), FREQ_TOL, "growth rate");
    close_rel(c.md.sigma[1], -sqrt(g / l), FREQ_TOL, "decay rate");
    ck_assert_int_eq(c.md.stable, 0);
    an_case_free(&c);
}
END_TEST

/* ---- no degrees of freedom: n = k ---- */

static const char held_point[] =
    "name: a point held by two constraints\n"
    "parameters: {m: 2.0, g: 9.81}\n"
    "coordinates: [x, y]\n"
    "mass: [m, m]\n"
    "potential: m*g*y\n"
    "constraints: {cx: x - 1, cy: y - 2}\n"
    "initial: {q: {x: 0.5, y: 2.5}}\n";

START_TEST(no_degrees_of_freedom)
{
    an_case c;
    analyse_ok(&c, held_point, NULL, NULL);
    close_abs(c.eq.q[0], 1, EQ_TOL, "x*");
    close_abs(c.eq.q[1], 2, EQ_TOL, "y*");
    close_abs(c.eq.lambda[0], 0, 1e-12, "lambda_cx");
    close_rel(c.eq.lambda[1], 2.0 * 9.81, LAMBDA_TOL, "lambda_cy");
    ck_assert_uint_eq(c.md.dof, 0);
    ck_assert_uint_eq(c.md.count, 0);
    ck_assert_int_eq(c.md.stable, 1);
    hs_linear lin;
    ck_assert_int_eq(hs_an_linearize(c.a, &c.eq, &lin, &c.err), 0);
    ck_assert_uint_eq(lin.dof, 0);
    hs_an_linear_free(&lin);
    an_case_free(&c);
}
END_TEST

/* A free particle: every point is an equilibrium; s = 0 twice, a neutral
 * direction: marginal, not stable (the linearization cannot decide). */
START_TEST(neutral_direction)
{
    an_case c;
    analyse_ok(&c, "coordinates: [x]\nmass: [2]\ninitial: {q: {x: 0.3}}\n", NULL, NULL);
    close_abs(c.eq.q[0], 0.3, 0, "x* (the start)");
    ck_assert_uint_eq(c.md.count, 2);
    for (int r = 0; r < 2; r++)
        ck_assert(c.md.sigma[r] == 0 && !signbit(c.md.sigma[r]) && c.md.omega[r] == 0);
    ck_assert_int_eq(c.md.verdict, HS_AN_MARGINAL);
    ck_assert_int_eq(c.md.stable, 0);
    an_case_free(&c);
}
END_TEST

/* ---- the state-space matrix ---- */

/* Cartesian double pendulum: the state is (x1, x2, x1', x2') (y1, y2 solved
 * from them: G_q has its large entries there), and the eigenvalues of A are
 * +-i omega of the closed form. */
START_TEST(linearize_double_pendulum)
{
    an_case c;
    analyse_ok(&c, dp_cart, NULL, NULL);
    hs_linear lin;
    ck_assert_int_eq(hs_an_linearize(c.a, &c.eq, &lin, &c.err), 0);
    ck_assert_uint_eq(lin.dof, 2);
    ck_assert_str_eq(c.m->qname[lin.state[0]], "x1");
    ck_assert_str_eq(c.m->qname[lin.state[1]], "x2");
    ck_assert_str_eq(c.m->qname[lin.solved[0]], "y1");
    ck_assert_str_eq(c.m->qname[lin.solved[1]], "y2");
    gsl_matrix_view A = gsl_matrix_view_array(lin.A, 4, 4);
    gsl_vector_complex *s = gsl_vector_complex_alloc(4);
    gsl_eigen_nonsymm_workspace *ws = gsl_eigen_nonsymm_alloc(4);
    ck_assert_int_eq(gsl_eigen_nonsymm(&A.matrix, s, ws), 0);
    double w[2], got[2];
    size_t ng = 0;
    dp_omegas(w);
    for (size_t i = 0; i < 4; i++) {
        gsl_complex z = gsl_vector_complex_get(s, i);
        ck_assert(fabs(GSL_REAL(z)) <= 1e-12 * w[1]);
        if (GSL_IMAG(z) > 0)
            got[ng++] = GSL_IMAG(z);
    }
    ck_assert_uint_eq(ng, 2);
    if (got[0] > got[1]) {
        double t = got[0];
        got[0] = got[1];
        got[1] = t;
    }
    close_rel(got[0], w[0], FREQ_TOL, "A: slow omega");
    close_rel(got[1], w[1], FREQ_TOL, "A: fast omega");
    gsl_eigen_nonsymm_free(ws);
    gsl_vector_complex_free(s);
    hs_an_linear_free(&lin);
    an_case_free(&c);
}
END_TEST

/* Damped angle pendulum: A = [0 1; -g/l -c/(m)] exactly as written by hand. */
START_TEST(linearize_damped)
{
    double m = 0.8, l = 0.6, g = 9.81, cd = 0.3;
    an_case c;
    analyse_ok(&c, pend_damped_angle, NULL, NULL);
    hs_linear lin;
    ck_assert_int_eq(hs_an_linearize(c.a, &c.eq, &lin, &c.err), 0);
    ck_assert_uint_eq(lin.dof, 1);
    close_abs(lin.A[0], 0, 0, "A00");
    close_abs(lin.A[1], 1, 0, "A01");
    close_rel(lin.A[2], -g / l, 1e-12, "A10");
    close_rel(lin.A[3], -cd / m, 1e-12, "A11");
    hs_an_linear_free(&lin);
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

static Suite *analysis_suite(void)
{
    Suite *s = suite_create("analysis");
    TCase *t = tcase_create("closed forms");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, double_pendulum_cartesian);
    tcase_add_test(t, double_pendulum_angles);
    tcase_add_test(t, double_pendulum_shipped);
    tcase_add_test(t, triple_pendulum_textbook);
    tcase_add_test(t, hoop_settles);
    tcase_add_test(t, hoop_bottom_unstable);
    tcase_add_test(t, hoop_slow);
    tcase_add_test(t, hoop_shipped);
    tcase_add_test(t, spring_turning_frame);
    tcase_add_test(t, damped_pendulum);
    tcase_add_test(t, overdamped_pendulum);
    tcase_add_test(t, upright_pendulum);
    tcase_add_test(t, no_degrees_of_freedom);
    tcase_add_test(t, neutral_direction);
    tcase_add_test(t, linearize_double_pendulum);
    tcase_add_test(t, linearize_damped);
    suite_add_tcase(s, t);
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

HS_CHECK_MAIN(analysis_suite)
