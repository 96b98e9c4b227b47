/* src/analysis: equilibria, multipliers, eigenvalues and mode shapes
 * against closed forms and textbook eigenproblems (relative 1e-9 for
 * frequencies and growth rates, 1e-10 for equilibria, 1e-9 for
 * multipliers).  Every failure, with its exit code, message and position,
 * is in check_analysis_failures.c; the helpers are shared with it
 * (tests/analysis_expect.h). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <gsl/gsl_eigen.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_sort_vector.h>

#include "analysis_expect.h"
#include "check_main.h"

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
    return s;
}

HS_CHECK_MAIN(analysis_suite)
