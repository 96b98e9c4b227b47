/* Contacts (issue 37; holosim-model(5), CONTACTS), against closed forms:
 *
 *   - the bouncing ball of models/bouncing_ball.yaml (h = 1, e = 0.9,
 *     g = 9.81): impacts at t1 = sqrt(2h/g), then t_k+1 = t_k + 2 e^k t1,
 *     flights y = e^k g t1 s - g s^2/2; the state on a grid of 0.01 s
 *     before the accumulation point t1 (1+e)/(1-e) = 8.578949..., at rest
 *     after it (y = 0, y' = 0, lambda_floor = m g), a finite events file
 *     ending with `floor:rest`, never more than 1e-9 below the floor;
 *   - two bodies colliding (e = 1, e = 0.5): the velocities after the
 *     impact from Newton's law and momentum;
 *   - three equal balls, two touching, hit at v: simultaneous Newton gives
 *     (-v/3, 2v/3, 2v/3) in either listing order; with small gaps
 *     (models/newtons_cradle.yaml) the impacts are sequential: (0, 0, v);
 *   - the slack rope (models/slack_rope.yaml): the jerk at
 *     sqrt(2 sqrt(l^2 - x0^2)/g), the radial velocity removed there (the
 *     energy lost, E_impact, is its kinetic energy), then the pendulum:
 *     energy kept, on the circle;
 *   - the ball in the Lagrangian and embedding forms (on an incline):
 *     the accumulation point to 1e-9; a step whose flight is not found
 *     (bsimp): exit 4, never a ball below the floor;
 *   - the slack rope's swing against an independent integration of the
 *     pendulum equation; a negative gap at t0 projected or rejected;
 *   - a resting contact that opens where a growing lift makes its
 *     multiplier 0 (t = 1/2), then y = g (t - 1/2)^3 / 3;
 *   - friction and every error of the contacts and friction sections:
 *     check_contacts_friction.c (the events run is shared:
 *     tests/contacts_fixture.h).
 *
 * The ball runs with the one-step methods whose flights are exact
 * (rk8pd, rkf45, dop853, rattle4: polynomials of degree 2); the multistep methods
 * lose about 1e-11 of velocity per flight at this tolerance, so their
 * accumulation point is held to 1e-5 (measured: msadams 5.6e-6, msbdf
 * 1.8e-6). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_odeiv2.h>

#include "check_main.h"
#include "contacts_fixture.h"
#include "physics_util.h"

/* ---- the bouncing ball ---- */

static const char *const ball_methods[] = { "rk8pd", "rkf45", "dop853", "rattle4", "msadams",
                                            "msbdf" };

/* The closed form at t (before the accumulation point): y, y'. */
static void ball_exact(double t, double *y, double *v)
{
    const double g = 9.81, e = 0.9, t1 = sqrt(2 / g);
    if (t <= t1) {
        *y = 1 - g * t * t / 2;
        *v = -g * t;
        return;
    }
    double tk = t1, w = e * g * t1;          /* impact k's time, speed after it */
    while (t > tk + 2 * w / g) {
        tk += 2 * w / g;
        w *= e;
    }
    double s = t - tk;
    *y = w * s - g * s * s / 2;
    *v = w - g * s;
}

START_TEST(test_bouncing_ball)
{
    const char *meth = ball_methods[_i];
    int exact_flights = _i < 4;
    pu_args a = pu_defaults();
    a.path = PU_MODEL("bouncing_ball.yaml");
    a.method = meth;
    a.columns = "t,y,y',lambda_floor,closed_floor,E,E_impact,energy_balance";
    evrun x;
    run_events(&a, &x);
    const double g = 9.81, m = 1, t1 = sqrt(2 / g), t_rest = t1 * 19;
    /* the first impact */
    ck_assert_str_eq(x.name[0], "floor:impact");
    ck_assert_msg(fabs(ev_at(&x, 0, "t") - t1) < 1e-10, "%s: first impact at %.17g, not %.17g",
                  meth, ev_at(&x, 0, "t"), t1);
    ck_assert_msg(fabs(ev_at(&x, 0, "y'") - 0.9 * g * t1) < 1e-10, "%s: rebound", meth);
    /* the impulse in the impact's row: m (1 + e) g t1 */
    ck_assert_msg(fabs(ev_at(&x, 0, "lambda_floor") - m * 1.9 * g * t1) < 1e-10,
                  "%s: impulse %.17g", meth, ev_at(&x, 0, "lambda_floor"));
    /* finitely many rows, the last one the rest */
    ck_assert_uint_lt(x.n, 400);
    ck_assert_str_eq(x.name[x.n - 1], "floor:rest");
    double tr = ev_at(&x, x.n - 1, "t");
    double ttol = exact_flights ? 1e-8 : 1e-5;
    ck_assert_msg(fabs(tr - t_rest) < ttol, "%s: at rest from %.17g, not %.17g", meth, tr,
                  t_rest);
    /* the accumulation point the summary gives: the last impact + the
     * geometric remainder */
    ck_assert(x.r.sum.rested);
    ck_assert_msg(fabs(x.r.sum.t_rest - t_rest) < (exact_flights ? 1e-9 : 1e-5),
                  "%s: accumulation point %.17g, not %.17g", meth, x.r.sum.t_rest, t_rest);
    ck_assert_int_eq(x.r.sum.impacts, (long)x.n);
    const pu_table *t = &x.r.tab;
    size_t it = pu_col(t, "t"), iy = pu_col(t, "y"), iv = pu_col(t, "y'"),
           il = pu_col(t, "lambda_floor"), ic = pu_col(t, "closed_floor"),
           ieb = pu_col(t, "energy_balance");
    double worst = 0, below = 0;
    for (size_t i = 0; i < t->nrow; i++) {
        double tt = PU_AT(t, i, it), y = PU_AT(t, i, iy), v = PU_AT(t, i, iv);
        below = fmin(below, y);
        ck_assert_msg(fabs(PU_AT(t, i, ieb)) < 1e-9, "%s: energy balance %g at %g", meth,
                      PU_AT(t, i, ieb), tt);
        if (tt >= t_rest + 1e-6) {
            ck_assert_msg(fabs(y) <= 1e-9 && fabs(v) <= 1e-9, "%s: not at rest at %g: %g %g",
                          meth, tt, y, v);
            ck_assert_msg(fabs(PU_AT(t, i, il) - m * g) < 1e-9, "%s: contact force %.17g",
                          meth, PU_AT(t, i, il));
            ck_assert(PU_AT(t, i, ic) == 1);
        } else if (exact_flights && tt < t_rest - 1e-6) {
            double ye, ve;
            ball_exact(tt, &ye, &ve);
            worst = fmax(worst, fmax(fabs(y - ye), fabs(v - ve)));
            ck_assert(PU_AT(t, i, ic) == 0);
        }
    }
    for (size_t i = 0; i < x.n; i++)
        below = fmin(below, ev_at(&x, i, "y"));
    ck_assert_msg(worst < 1e-8, "%s: state off the closed form by %g", meth, worst);
    ck_assert_msg(below >= -1e-9, "%s: %g below the floor", meth, below);
    /* all the energy is lost in the impacts */
    ck_assert_msg(fabs(PU_AT(t, t->nrow - 1, pu_col(t, "E_impact")) - m * g) < 1e-8,
                  "%s: E_impact", meth);
    evrun_free(&x);
}
END_TEST

/* The same ball in the Lagrangian form, and on an incline y = a s in the
 * embedding form (s'' = -g a/(1 + a^2)): the accumulation point
 * sqrt(2 h/acc) (1 + e)/(1 - e). */
START_TEST(test_ball_forms)
{
    static const char *const text[] = {
        "parameters: {m: 1, g: 9.81, h: 1}\ncoordinates: [y]\nkinetic: 0.5*m*y'^2\n"
        "potential: m*g*y\ncontacts:\n  floor: {gap: y, restitution: 0.9}\n"
        "initial: {q: {y: h}}\nsimulate: {t_end: 10, dt: 0.5, rtol: 1e-12, atol: 1e-12}\n",
        "parameters: {m: 1, g: 9.81, h: 1, a: 0.5}\ncoordinates: [s]\n"
        "embedding: {x: s, y: a*s}\nmass: [m, m]\npotential: m*g*y\n"
        "contacts:\n  floor: {gap: s, restitution: 0.9}\n"
        "initial: {q: {s: h}}\nsimulate: {t_end: 15, dt: 0.5, rtol: 1e-12, atol: 1e-12}\n",
    };
    pu_args a = pu_defaults();
    a.text = text[_i];
    pu_result r;
    pu_run_ok(&a, &r);
    double acc = _i ? 9.81 * 0.5 / 1.25 : 9.81, t_rest = sqrt(2 / acc) * 19;
    ck_assert(r.sum.rested);
    ck_assert_msg(fabs(r.sum.t_rest - t_rest) < 1e-9, "rest at %.17g, not %.17g",
                  r.sum.t_rest, t_rest);
    const pu_table *t = &r.tab;
    ck_assert(fabs(PU_AT(t, t->nrow - 1, 1)) < 1e-12);   /* y or s: on the floor */
    pu_result_free(&r);
}
END_TEST

/* A floor moving up at 0.3 (gap y - 0.3 t): the same geometric sequence
 * in the relative motion, first impact where 1 - 0.3 t - g t^2/2 = 0;
 * its flights fall below the rounding of the gap (y and 0.3 t are of
 * order 1) before the intervals reach 1e-9: at rest, riding the floor.
 * A floor oscillating as 0.1 sin(3t) (acceleration below g): the ball
 * comes to rest on it and rides it, never below it. */
START_TEST(test_moving_floor)
{
    static const char *const gap[] = { "y - 0.3*t", "y - 0.1*sin(3*t)" };
    char text[400];
    snprintf(text, sizeof text, "coordinates: [y]\nmass: [1]\npotential: 9.81*y\n"
             "contacts:\n  floor: {gap: %s, restitution: 0.8}\ninitial: {q: {y: 1}}\n"
             "simulate: {t_end: 10, dt: 0.05, rtol: 1e-12, atol: 1e-12}\n", gap[_i]);
    pu_args a = pu_defaults();
    a.text = text;
    a.columns = "t,y,y',G_floor,closed_floor,lambda_floor";
    pu_result r;
    pu_run_ok(&a, &r);
    const pu_table *t = &r.tab;
    ck_assert(r.sum.rested);
    if (_i == 0) {
        const double g = 9.81, e = 0.8, t1 = (-0.3 + sqrt(0.09 + 2 * g)) / g;
        double ts = t1 + 2 * (0.3 + g * t1) * e / (g * (1 - e));
        ck_assert_msg(fabs(r.sum.t_rest - ts) < 1e-8, "rest at %.17g, not %.17g",
                      r.sum.t_rest, ts);
    }
    ck_assert(PU_AT(t, t->nrow - 1, pu_col(t, "closed_floor")) == 1);
    for (size_t i = 0; i < t->nrow; i++) {
        ck_assert(PU_AT(t, i, pu_col(t, "G_floor")) > -1e-9);
        if (PU_AT(t, i, 0) > r.sum.t_rest + 1e-6) {
            double tt = PU_AT(t, i, 0);
            double vf = _i ? 0.3 * cos(3 * tt) : 0.3, af = _i ? -0.9 * sin(3 * tt) : 0;
            ck_assert(fabs(PU_AT(t, i, pu_col(t, "y'")) - vf) < 1e-6);
            ck_assert(fabs(PU_AT(t, i, pu_col(t, "lambda_floor")) - (9.81 + af)) < 1e-6);
        }
    }
    pu_result_free(&r);
}
END_TEST

/* A step over a whole flight that the stepper's trial steps cannot see
 * into (bsimp on the last rebounds): exit 4 naming the contact, not a
 * ball below the floor. */
START_TEST(test_missed_flight)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("bouncing_ball.yaml");
    a.method = "bsimp";
    pu_result r;
    pu_run(&a, &r);
    ck_assert_int_eq(r.rc, 4);
    ck_assert_msg(strstr(r.err.msg, "contact 'floor' is") &&
                  strstr(r.err.msg, "below its floor"), "%s", r.err.msg);
    pu_result_free(&r);
}
END_TEST

/* ---- two bodies ---- */

START_TEST(test_two_bodies)
{
    const double es[] = { 1, 0.5 };
    double e = es[_i];
    char text[600];
    snprintf(text, sizeof text,
             "parameters: {m1: 1.5, m2: 3.25, d: 1}\n"
             "coordinates: [x1, x2]\nmass: [m1, m2]\n"
             "contacts:\n  hit: {gap: x2 - x1 - d, restitution: %g}\n"
             "initial: {q: {x1: 0, x2: 2}, v: {x1: 2.5, x2: -0.75}}\n"
             "simulate: {t_end: 1, dt: 0.5, rtol: 1e-12, atol: 1e-12}\n", e);
    pu_args a = pu_defaults();
    a.text = text;
    evrun x;
    run_events(&a, &x);
    ck_assert_uint_eq(x.n, 1);
    const double m1 = 1.5, m2 = 3.25, u1 = 2.5, u2 = -0.75;
    double p = m1 * u1 + m2 * u2, rel = u2 - u1;       /* closing at -rel */
    double w2 = (p - m1 * e * rel) / (m1 + m2), w1 = w2 + e * rel;
    ck_assert_msg(fabs(ev_at(&x, 0, "t") - 1 / 3.25) < 1e-12, "time %.17g", ev_at(&x, 0, "t"));
    ck_assert_msg(fabs(ev_at(&x, 0, "x1'") - w1) < 1e-12, "x1' %.17g vs %.17g",
                  ev_at(&x, 0, "x1'"), w1);
    ck_assert_msg(fabs(ev_at(&x, 0, "x2'") - w2) < 1e-12, "x2' %.17g vs %.17g",
                  ev_at(&x, 0, "x2'"), w2);
    double lost = 0.5 * m1 * u1 * u1 + 0.5 * m2 * u2 * u2 - 0.5 * m1 * w1 * w1 -
                  0.5 * m2 * w2 * w2;
    ck_assert_msg(fabs(ev_at(&x, 0, "E_impact") - lost) < 1e-12, "E_impact");
    evrun_free(&x);
}
END_TEST

/* ---- three balls ---- */

static const char three_fwd[] =
    "parameters: {v: 3, d: 1}\ncoordinates: [x1, x2, x3]\nmass: [1, 1, 1]\n"
    "contacts:\n  c12: {gap: x2 - x1 - d, restitution: 1}\n"
    "  c23: {gap: x3 - x2 - d, restitution: 1}\n"
    "initial: {q: {x1: -1, x2: 1, x3: 2}, v: {x1: v}}\n"
    "simulate: {t_end: 1, dt: 0.5, rtol: 1e-12, atol: 1e-12}\n";
static const char three_rev[] =
    "parameters: {v: 3, d: 1}\ncoordinates: [x1, x2, x3]\nmass: [1, 1, 1]\n"
    "contacts:\n  c23: {gap: x3 - x2 - d, restitution: 1}\n"
    "  c12: {gap: x2 - x1 - d, restitution: 1}\n"
    "initial: {q: {x1: -1, x2: 1, x3: 2}, v: {x1: v}}\n"
    "simulate: {t_end: 1, dt: 0.5, rtol: 1e-12, atol: 1e-12}\n";

START_TEST(test_three_balls_simultaneous)
{
    pu_args a = pu_defaults();
    a.text = _i ? three_rev : three_fwd;
    a.columns = "t,x1',x2',x3',E";
    pu_result r;
    pu_run_ok(&a, &r);
    const pu_table *t = &r.tab;
    size_t last = t->nrow - 1;
    const double v = 3;
    ck_assert(fabs(PU_AT(t, last, pu_col(t, "x1'")) + v / 3) < 1e-12);
    ck_assert(fabs(PU_AT(t, last, pu_col(t, "x2'")) - 2 * v / 3) < 1e-12);
    ck_assert(fabs(PU_AT(t, last, pu_col(t, "x3'")) - 2 * v / 3) < 1e-12);
    ck_assert(fabs(PU_AT(t, last, pu_col(t, "E")) - v * v / 2) < 1e-12);
    pu_result_free(&r);
}
END_TEST

/* N = 20 equal balls in a row touching, the first hit at v = 1 (the
 * 18 closed contacts and the closing one: Murty's pivoting, beyond the
 * enumeration): simultaneous Newton with e = 1 gives -(N-2)/N to the
 * first, 2/N to every other; momentum and energy kept to 1e-12. */
START_TEST(test_touching_row)
{
    enum { N = 20 };
    char *text = malloc(8192);
    size_t len = 0;
    len += (size_t)snprintf(text + len, 8192 - len, "coordinates: [x1");
    for (int i = 2; i <= N; i++)
        len += (size_t)snprintf(text + len, 8192 - len, ", x%d", i);
    len += (size_t)snprintf(text + len, 8192 - len, "]\nmass: [1");
    for (int i = 2; i <= N; i++)
        len += (size_t)snprintf(text + len, 8192 - len, ", 1");
    len += (size_t)snprintf(text + len, 8192 - len, "]\ncontacts:\n");
    for (int i = 1; i < N; i++)
        len += (size_t)snprintf(text + len, 8192 - len,
                                "  c%d: {gap: x%d - x%d - 0.1, restitution: 1}\n", i, i + 1, i);
    len += (size_t)snprintf(text + len, 8192 - len, "initial:\n  q: {x1: -0.1");
    for (int i = 2; i <= N; i++)
        len += (size_t)snprintf(text + len, 8192 - len, ", x%d: %g", i, 0.1 * (i - 1));
    snprintf(text + len, 8192 - len, "}\n  v: {x1: 1}\n"
             "simulate: {t_end: 0.5, dt: 0.25, rtol: 1e-12, atol: 1e-12}\n");
    pu_args a = pu_defaults();
    a.text = text;
    a.columns = "all";
    pu_result r;
    pu_run_ok(&a, &r);
    const pu_table *t = &r.tab;
    size_t last = t->nrow - 1;
    double p = 0, E = 0;
    for (int i = 1; i <= N; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "x%d'", i);
        double v = PU_AT(t, last, pu_col(t, nm));
        double ve = i == 1 ? -(double)(N - 2) / N : 2.0 / N;
        ck_assert_msg(fabs(v - ve) < 1e-12, "%s = %.17g, not %.17g", nm, v, ve);
        p += v;
        E += v * v / 2;
    }
    ck_assert(fabs(p - 1) < 1e-12 && fabs(E - 0.5) < 1e-12);
    ck_assert_int_eq(r.sum.impacts, 1);
    pu_result_free(&r);
    free(text);
}
END_TEST

START_TEST(test_cradle_sequential)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("newtons_cradle.yaml");
    evrun x;
    run_events(&a, &x);
    ck_assert_uint_eq(x.n, 2);
    ck_assert_str_eq(x.name[0], "c12:impact");
    ck_assert_str_eq(x.name[1], "c23:impact");
    /* d = 0.1, v0 = 1, gaps 0.1 and 0.001: at 0.1, then 0.101 */
    ck_assert(fabs(ev_at(&x, 0, "t") - 0.1) < 1e-12);
    ck_assert(fabs(ev_at(&x, 1, "t") - 0.101) < 1e-12);
    const pu_table *t = &x.r.tab;
    size_t last = t->nrow - 1;
    ck_assert(fabs(PU_AT(t, last, pu_col(t, "x1'"))) < 1e-12);
    ck_assert(fabs(PU_AT(t, last, pu_col(t, "x2'"))) < 1e-12);
    ck_assert(fabs(PU_AT(t, last, pu_col(t, "x3'")) - 1) < 1e-12);
    evrun_free(&x);
}
END_TEST

/* A ring of 20 balls, e = 0.3: the held contacts' system (dynamics/held.c)
 * is a narrow band inside a C of every row that is not (ball 20 meets
 * ball 1), then none held between impacts; momentum 1 throughout, energy
 * never rising, no gap below -1e-9; once per method (RATTLE solves with
 * the held rows' factor). */
START_TEST(test_ring_held)
{
    enum { N = 20 };
    static const char *const meth[] = { "rk8pd", "rattle" };
    char *text = malloc(8192);
    size_t len = 0;
    len += (size_t)snprintf(text + len, 8192 - len, "coordinates: [x1");
    for (int i = 2; i <= N; i++)
        len += (size_t)snprintf(text + len, 8192 - len, ", x%d", i);
    len += (size_t)snprintf(text + len, 8192 - len, "]\nmass: [1");
    for (int i = 2; i <= N; i++)
        len += (size_t)snprintf(text + len, 8192 - len, ", 1");
    len += (size_t)snprintf(text + len, 8192 - len, "]\ncontacts:\n");
    for (int i = 1; i < N; i++)
        len += (size_t)snprintf(text + len, 8192 - len,
                                "  c%d: {gap: x%d - x%d - 0.1, restitution: 0.3}\n", i, i + 1, i);
    len += (size_t)snprintf(text + len, 8192 - len, "  c%d: {gap: x1 + %d*0.101 - x%d - 0.1, "
                            "restitution: 0.3}\ninitial:\n  q: {x1: 0", N, N, N);
    for (int i = 2; i <= N; i++)
        len += (size_t)snprintf(text + len, 8192 - len, ", x%d: %.17g", i, 0.101 * (i - 1));
    snprintf(text + len, 8192 - len, "}\n  v: {x1: 1}\nsimulate: {t_end: 0.5, dt: 0.01, "
             "rtol: 1e-12, atol: 1e-12%s}\n", _i ? ", method: rattle, step: 1e-4" : "");
    pu_args a = pu_defaults();
    a.text = text;
    a.columns = "all";
    pu_result r;
    pu_run_ok(&a, &r);
    const pu_table *t = &r.tab;
    double E0 = 0.5;
    for (size_t row = 0; row < t->nrow; row++) {
        double p = 0, E = 0;
        for (int i = 1; i <= N; i++) {
            char nm[16];
            snprintf(nm, sizeof nm, "x%d'", i);
            double v = PU_AT(t, row, pu_col(t, nm));
            p += v;
            E += v * v / 2;
            snprintf(nm, sizeof nm, "x%d", i);
            double x = PU_AT(t, row, pu_col(t, nm)), y;
            snprintf(nm, sizeof nm, "x%d", i == N ? 1 : i + 1);
            y = PU_AT(t, row, pu_col(t, nm)) + (i == N ? N * 0.101 : 0);
            ck_assert_msg(y - x - 0.1 > -1e-9, "%s: gap %g at row %zu", meth[_i],
                          y - x - 0.1, row);
        }
        ck_assert_msg(fabs(p - 1) < 1e-11, "%s: momentum %.17g at row %zu", meth[_i], p, row);
        ck_assert_msg(E <= E0 + 1e-12, "%s: energy rose to %.17g", meth[_i], E);
        E0 = E;
    }
    ck_assert(E0 < 0.45);              /* inelastic: energy lost */
    pu_result_free(&r);
    free(text);
}
END_TEST

/* ---- the slack rope ---- */

START_TEST(test_slack_rope)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("slack_rope.yaml");
    a.method = adaptive_methods[_i];
    a.columns = "t,x,y,x',y',closed_rope,E,E_impact,tension";
    evrun x;
    run_events(&a, &x);
    const double g = 9.81, l = 1, x0 = 0.5, yj = -sqrt(l * l - x0 * x0);
    double tj = sqrt(2 * -yj / g);
    ck_assert_str_eq(x.name[0], "rope:impact");
    ck_assert_msg(fabs(ev_at(&x, 0, "t") - tj) < 1e-10, "jerk at %.17g, not %.17g",
                  ev_at(&x, 0, "t"), tj);
    /* before: free fall; at the jerk the radial velocity is removed */
    double vy = -g * tj, vr = vy * yj / l;         /* radial component (unit (x0, yj)/l) */
    ck_assert(fabs(ev_at(&x, 0, "x'") - (0 - vr * x0 / l)) < 1e-9);
    ck_assert(fabs(ev_at(&x, 0, "y'") - (vy - vr * yj / l)) < 1e-9);
    ck_assert(fabs(ev_at(&x, 0, "E_impact") - vr * vr / 2) < 1e-9);
    /* after it: the pendulum, its energy E0 - E_impact = -vr^2/2 ... on the circle */
    const pu_table *t = &x.r.tab;
    double E1 = -vr * vr / 2;       /* T + U = 0 before the jerk (free fall from rest at y = 0) */
    for (size_t i = 0; i < t->nrow; i++) {
        double tt = PU_AT(t, i, pu_col(t, "t"));
        double xx = PU_AT(t, i, pu_col(t, "x")), yy = PU_AT(t, i, pu_col(t, "y"));
        if (tt < tj) {
            ck_assert(fabs(yy + g * tt * tt / 2) < 1e-9 && fabs(xx - x0) < 1e-12);
            continue;
        }
        if (PU_AT(t, i, pu_col(t, "closed_rope")) != 1)
            break;                                 /* slack again */
        ck_assert_msg(fabs(xx * xx + yy * yy - l * l) < 1e-9, "off the circle at %g", tt);
        ck_assert_msg(fabs(PU_AT(t, i, pu_col(t, "E")) - E1) < 1e-9, "E at %g", tt);
        ck_assert(PU_AT(t, i, pu_col(t, "tension")) >= 0);
    }
    evrun_free(&x);
}
END_TEST

/* The swing after the jerk against an independent integration of the
 * pendulum equation theta'' = -(g/l) sin(theta) from the state the jerk
 * leaves (GSL's rk8pd at 1e-13), while the rope stays taut. */
static int pend_rhs(double t, const double y[], double f[], void *p)
{
    (void)t;
    (void)p;
    f[0] = y[1];
    f[1] = -9.81 * sin(y[0]);
    return GSL_SUCCESS;
}

START_TEST(test_slack_rope_swing)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("slack_rope.yaml");
    a.columns = "t,x,y,closed_rope";
    pu_result r;
    pu_run_ok(&a, &r);
    const double g = 9.81, x0 = 0.5, yj = -sqrt(0.75), tj = sqrt(2 * -yj / g);
    /* after the jerk: on the circle at angle th0 from the downward
     * vertical, the tangential velocity kept: omega = (x y' - y x') */
    double vy = -g * tj;
    /* the tangent velocity v - (v.n) n, n = (x0, yj) (l = 1), v = (0, vy);
     * theta = atan2(x, -y), theta' = -y x' + x y' */
    double vx_t = -(vy * yj) * x0, vy_t = vy - (vy * yj) * yj;
    double y[2] = { atan2(x0, -yj), -yj * vx_t + x0 * vy_t };
    gsl_odeiv2_system sys = { pend_rhs, NULL, 2, NULL };
    gsl_odeiv2_driver *d = gsl_odeiv2_driver_alloc_y_new(&sys, gsl_odeiv2_step_rk8pd, 1e-6,
                                                         1e-13, 1e-13);
    double tt = tj, worst = 0;
    const pu_table *t = &r.tab;
    size_t n = 0;
    for (size_t i = 0; i < t->nrow; i++) {
        double ti = PU_AT(t, i, 0);
        if (ti <= tj)
            continue;
        if (PU_AT(t, i, 3) != 1)
            break;
        ck_assert_int_eq(gsl_odeiv2_driver_apply(d, &tt, ti, y), GSL_SUCCESS);
        worst = fmax(worst, fmax(fabs(PU_AT(t, i, 1) - sin(y[0])),
                                 fabs(PU_AT(t, i, 2) + cos(y[0]))));
        n++;
    }
    gsl_odeiv2_driver_free(d);
    ck_assert_uint_gt(n, 50);
    ck_assert_msg(worst < 1e-8, "swing off the pendulum by %g", worst);
    pu_result_free(&r);
}
END_TEST

/* A negative gap at the start: projected onto 0 (closed, at rest), or in
 * reject mode exit 3 at the gap's position. */
START_TEST(test_negative_gap_at_start)
{
    static const char *const mode[] = { "project", "reject" };
    char text[400];
    snprintf(text, sizeof text, "coordinates: [y]\nmass: [1]\npotential: 9.81*y\n"
             "contacts:\n  floor: {gap: y, restitution: 0.5}\ninitial: {q: {y: -0.1}}\n"
             "consistency: {mode: %s}\nsimulate: {t_end: 1, dt: 0.5}\n", mode[_i]);
    pu_args a = pu_defaults();
    a.text = text;
    pu_result r;
    pu_run(&a, &r);
    if (_i == 0) {
        ck_assert_int_eq(r.rc, 0);
        ck_assert(pu_maxabs(&r.tab, "y") == 0);
        ck_assert(fabs(PU_AT(&r.tab, 0, pu_col(&r.tab, "lambda_floor")) - 9.81) < 1e-12);
    } else {
        ck_assert_int_eq(r.rc, 3);
        ck_assert_msg(strstr(r.err.msg, "floor: position residual G = -0.1"), "%s", r.err.msg);
        ck_assert_int_eq(r.err.line, 5);
        ck_assert_int_eq(r.err.column, 16);
    }
    pu_result_free(&r);
}
END_TEST

/* ---- an opening ---- */

START_TEST(test_lift_opens)
{
    pu_args a = pu_defaults();
    a.text = "parameters: {m: 2, g: 9.81}\ncoordinates: [y]\nmass: [m]\npotential: m*g*y\n"
             "forces: {y: 2*m*g*t}\ncontacts:\n  floor: {gap: y, restitution: 0.5}\n"
             "initial: {q: {y: 0}}\n"
             "simulate: {t_end: 1, dt: 0.125, rtol: 1e-12, atol: 1e-12}\n";
    evrun x;
    run_events(&a, &x);
    ck_assert_uint_eq(x.n, 1);
    ck_assert_str_eq(x.name[0], "floor:open");
    ck_assert_msg(fabs(ev_at(&x, 0, "t") - 0.5) < 1e-10, "opens at %.17g", ev_at(&x, 0, "t"));
    const pu_table *t = &x.r.tab;
    for (size_t i = 0; i < t->nrow; i++) {
        double tt = PU_AT(t, i, pu_col(t, "t")), y = PU_AT(t, i, pu_col(t, "y"));
        double lam = PU_AT(t, i, pu_col(t, "lambda_floor"));
        if (tt <= 0.5) {
            ck_assert(fabs(y) < 1e-12 && fabs(lam - 2 * 9.81 * (1 - 2 * tt)) < 1e-9);
        } else {
            double s = tt - 0.5;
            ck_assert_msg(fabs(y - 9.81 * s * s * s / 3) < 1e-10, "y at %g", tt);
            ck_assert(lam == 0 && PU_AT(t, i, pu_col(t, "closed_floor")) == 0);
        }
    }
    evrun_free(&x);
}
END_TEST

static Suite *contacts_suite(void)
{
    Suite *s = suite_create("contacts");
    TCase *tc = tcase_create("physics");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_bouncing_ball, 0,
                        (int)(sizeof ball_methods / sizeof *ball_methods));
    tcase_add_loop_test(tc, test_ball_forms, 0, 2);
    tcase_add_test(tc, test_missed_flight);
    tcase_add_loop_test(tc, test_moving_floor, 0, 2);
    tcase_add_loop_test(tc, test_two_bodies, 0, 2);
    tcase_add_loop_test(tc, test_three_balls_simultaneous, 0, 2);
    tcase_add_test(tc, test_cradle_sequential);
    tcase_add_test(tc, test_touching_row);
    tcase_add_loop_test(tc, test_ring_held, 0, 2);
    tcase_add_loop_test(tc, test_slack_rope, 0, 3);
    tcase_add_test(tc, test_lift_opens);
    tcase_add_test(tc, test_slack_rope_swing);
    tcase_add_loop_test(tc, test_negative_gap_at_start, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(contacts_suite)
