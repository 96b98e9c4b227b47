/* Contacts with friction (holosim-model(5), CONTACTS and FRICTION),
 * against closed forms: the Siconos friction oscillator (models/
 * friction_oscillator.yaml) on its harmonic arcs and at rest at
 * 15 - sqrt(205) from atan(6/13) + 7 pi on; a bead on a ring (normal
 * force m v^2/R), arc length (R/mu) ln(1 + mu v0 t/R); a block on a table
 * contact stopping at v0^2/(2 mu g) at v0/(mu g) (the friction section and
 * the contact's friction key); Painleve: exit 4; a hop.  And every error
 * of the contacts and friction sections, positioned, exit 2.  Impacts,
 * the slack rope and an opening are in check_contacts.c; the events run
 * is shared with it (tests/contacts_fixture.h). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "contacts_fixture.h"
#include "physics_util.h"

/* ---- friction ---- */

/* The Siconos friction oscillator (models/friction_oscillator.yaml): at
 * rest at 15 - sqrt(205) from atan(6/13) + 7 pi on; before, harmonic arcs
 * about -dir (the friction shift) between the turning points
 * atan(6/13) + j pi. */
START_TEST(test_friction_oscillator)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("friction_oscillator.yaml");
    a.method = adaptive_methods[_i];
    a.columns = "t,x,x',lambda_dry,lambda_table,E,energy_balance";
    evrun x;
    run_events(&a, &x);
    const double ts = atan(6.0 / 13) + 7 * PU_PI, xs = 15 - sqrt(205);
    ck_assert_uint_eq(x.n, 8);
    for (size_t i = 0; i < 7; i++) {
        ck_assert_str_eq(x.name[i], "dry:slip");
        ck_assert_msg(fabs(ev_at(&x, i, "t") - (atan(6.0 / 13) + (double)i * PU_PI)) < 1e-9,
                      "turning point %zu at %.17g", i, ev_at(&x, i, "t"));
    }
    ck_assert_str_eq(x.name[7], "dry:stick");
    ck_assert_msg(fabs(ev_at(&x, 7, "t") - ts) < 1e-9, "sticks at %.17g, not %.17g",
                  ev_at(&x, 7, "t"), ts);
    const pu_table *t = &x.r.tab;
    size_t it = pu_col(t, "t"), ix = pu_col(t, "x"), iv = pu_col(t, "x'"),
           id = pu_col(t, "lambda_dry"), ieb = pu_col(t, "energy_balance");
    for (size_t i = 0; i < t->nrow; i++) {
        double tt = PU_AT(t, i, it), xx = PU_AT(t, i, ix), v = PU_AT(t, i, iv);
        ck_assert(fabs(PU_AT(t, i, ieb)) < 1e-9);
        if (tt > ts + 1e-9) {
            ck_assert_msg(fabs(xx - xs) < 1e-8 && fabs(v) < 1e-8, "at %g: %.17g %g", tt, xx, v);
            ck_assert(fabs(PU_AT(t, i, id) - xs) < 1e-8);    /* it holds the spring's pull */
            continue;
        }
        /* the arc since the last turning point: x = c + A cos(t - tj),
         * c = -dir (friction against the sliding direction dir) */
        int j = tt < atan(6.0 / 13) ? -1 : (int)floor((tt - atan(6.0 / 13)) / PU_PI);
        double c, A, tj;
        if (j < 0) {
            c = -1;
            A = sqrt(205);
            tj = atan(6.0 / 13);
        } else {
            double dir = j % 2 == 0 ? -1 : 1;              /* after an upper turn: down */
            c = -dir;
            A = sqrt(205) - 2 * (j + 1);
            A = j % 2 == 0 ? A : -A;
            tj = atan(6.0 / 13) + j * PU_PI;
        }
        double xe = c + A * cos(tt - tj), ve = -A * sin(tt - tj);
        ck_assert_msg(fabs(xx - xe) < 1e-8 && fabs(v - ve) < 1e-8, "at %g: x %.17g vs %.17g",
                      tt, xx, xe);
        ck_assert(fabs(fabs(PU_AT(t, i, id)) - 1) < 1e-9);
    }
    evrun_free(&x);
}
END_TEST

/* A bead on a horizontal ring (models/bead_ring_friction.yaml): the
 * normal force m v^2/R, s = (R/mu) ln(1 + mu v0 t/R). */
START_TEST(test_bead_ring)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL("bead_ring_friction.yaml");
    a.method = adaptive_methods[_i];
    pu_result r;
    pu_run_ok(&a, &r);
    double d = pu_maxdiff(&r.tab, "s", &r.tab, "s_exact");
    ck_assert_msg(d < 1e-8, "arc length off by %g", d);
    ck_assert(fabs(PU_AT(&r.tab, r.tab.nrow - 1, pu_col(&r.tab, "s")) - 2 * log(2)) < 1e-8);
    pu_result_free(&r);
}
END_TEST

/* A block sliding on a table (a contact) stops at v0^2/(2 mu g) at
 * v0/(mu g) and sticks. */
START_TEST(test_block_table)
{
    pu_args a = pu_defaults();
    a.text = "parameters: {m: 2, g: 9.81, v0: 3}\ncoordinates: [x, y]\nmass: [m, m]\n"
             "potential: m*g*y\ncontacts:\n  table: {gap: y, restitution: 0}\n"
             "friction:\n  slide: {normal: table, slip: x, mu: 0.3, mu_static: 0.5}\n"
             "initial: {q: {x: 0, y: 0}, v: {x: v0}}\n"
             "simulate: {t_end: 2, dt: 0.125, rtol: 1e-12, atol: 1e-12}\n";
    if (_i)                              /* the same as a key of the contact */
        a.text = "parameters: {m: 2, g: 9.81, v0: 3}\ncoordinates: [x, y]\nmass: [m, m]\n"
                 "potential: m*g*y\ncontacts:\n  table: {gap: y, restitution: 0, friction: "
                 "{slip: x, mu: 0.3, mu_static: 0.5}}\n"
                 "initial: {q: {x: 0, y: 0}, v: {x: v0}}\n"
                 "simulate: {t_end: 2, dt: 0.125, rtol: 1e-12, atol: 1e-12}\n";
    evrun x;
    run_events(&a, &x);
    const double g = 9.81, mu = 0.3, v0 = 3, ts = v0 / (mu * g);
    ck_assert_uint_eq(x.n, 1);
    ck_assert_str_eq(x.name[0], _i ? "friction_table:stick" : "slide:stick");
    ck_assert(fabs(ev_at(&x, 0, "t") - ts) < 1e-10);
    const pu_table *t = &x.r.tab;
    for (size_t i = 0; i < t->nrow; i++) {
        double tt = fmin(PU_AT(t, i, pu_col(t, "t")), ts);
        ck_assert(fabs(PU_AT(t, i, pu_col(t, "x")) - (v0 * tt - mu * g * tt * tt / 2)) < 1e-9);
        ck_assert(fabs(PU_AT(t, i, pu_col(t, "lambda_table")) - 2 * g) < 1e-9);
    }
    evrun_free(&x);
}
END_TEST

/* Painleve: a slip whose gradient leans into the table (slip = x + 2y,
 * mu = 1, sliding in +x): the normal reaction would be g + 2 |N|, which
 * no |N| satisfies: exit 4 naming the element and the time. */
START_TEST(test_painleve)
{
    pu_args a = pu_defaults();
    a.text = "coordinates: [x, y]\nmass: [1, 1]\npotential: 9.81*y\n"
             "constraints: {table: y}\n"
             "friction:\n  f: {normal: table, slip: x + 2*y, mu: 1}\n"
             "initial: {q: {x: 0, y: 0}, v: {x: 1, y: 0}}\nsimulate: {t_end: 1, dt: 0.5}\n";
    pu_result r;
    pu_run(&a, &r);
    ck_assert_int_eq(r.rc, 4);
    ck_assert_msg(strstr(r.err.msg, "friction 'f': no consistent contact force at t=0") &&
                  strstr(r.err.msg, "Painleve"), "%s", r.err.msg);
    pu_result_free(&r);
    /* Painleve's rod: a rod of half-length 1 at atan(2) to the floor, its
     * lower end sliding towards the rod's foot side with mu = 1.5 > 4/3 */
    a.text = "parameters: {m: 1, l: 1, g: 9.81, th0: atan(2)}\ncoordinates: [x, y, th]\n"
             "mass: [m, m, m*l^2/3]\npotential: m*g*y\n"
             "contacts:\n  floor: {gap: y - l*sin(th), restitution: 0}\n"
             "friction:\n  slide: {normal: floor, slip: x - l*cos(th), mu: 1.5}\n"
             "initial: {q: {x: 0, y: l*sin(th0), th: th0}, v: {x: -1}}\n"
             "simulate: {t_end: 0.2, dt: 0.1}\n";
    pu_run(&a, &r);
    ck_assert_int_eq(r.rc, 4);
    ck_assert_msg(strstr(r.err.msg, "friction 'slide': no consistent contact force at t=0"),
                  "%s", r.err.msg);
    pu_result_free(&r);
    /* leaning the other way (slip = x - 2y) the force exists though the
     * slope is 2: lambda_table = g + 2 F, F = -|lambda_table|: both -g */
    a.text = "coordinates: [x, y]\nmass: [1, 1]\npotential: 9.81*y\n"
             "constraints: {table: y}\n"
             "friction:\n  f: {normal: table, slip: x - 2*y, mu: 1}\n"
             "initial: {q: {x: 0, y: 0}, v: {x: 1, y: 0}}\nsimulate: {t_end: 1, dt: 0.5}\n";
    a.columns = "t,lambda_table,lambda_f";
    pu_run_ok(&a, &r);
    ck_assert(fabs(PU_AT(&r.tab, 0, 1) + 9.81) < 1e-12 && fabs(PU_AT(&r.tab, 0, 2) + 9.81) < 1e-12);
    pu_result_free(&r);
}
END_TEST

/* A block held by friction against a spring (k = 2, x = 0.3) on a table
 * contact, lifted off it by a push (20 N for 0.1 s): in the air the spring
 * swings it, x = 0.3 cos(sqrt(2) (t - 1/2)); it lands (restitution 0) at
 * the ballistic time, slides against its motion (not the direction it
 * had before lifting) and sticks again. */
START_TEST(test_hop)
{
    pu_args a = pu_defaults();
    a.text = "parameters: {m: 1, g: 9.81}\ncoordinates: [x, y]\nmass: [m, m]\n"
             "potential: m*g*y\nforces: {x: -2*x, y: \"if(t > 0.5, if(t < 0.6, 20, 0), 0)\"}\n"
             "contacts:\n  table: {gap: y, restitution: 0, friction: {mu: 0.5, slip: x}}\n"
             "initial: {q: {x: 0.3, y: 0}}\n"
             "simulate: {t_end: 2, dt: 0.125, rtol: 1e-12, atol: 1e-12}\n";
    evrun x;
    run_events(&a, &x);
    ck_assert_uint_eq(x.n, 3);
    ck_assert_str_eq(x.name[0], "table:open");
    ck_assert_str_eq(x.name[1], "table:impact");
    ck_assert_str_eq(x.name[2], "friction_table:stick");
    const double g = 9.81, a1 = 20 - g, y1 = a1 * 0.01 / 2, v1 = a1 * 0.1;
    double tl = 0.6 + (v1 + sqrt(v1 * v1 + 2 * g * y1)) / g;
    ck_assert_msg(fabs(ev_at(&x, 0, "t") - 0.5) < 1e-10, "opens at %.17g", ev_at(&x, 0, "t"));
    ck_assert_msg(fabs(ev_at(&x, 1, "t") - tl) < 1e-9, "lands at %.17g, not %.17g",
                  ev_at(&x, 1, "t"), tl);
    ck_assert(fabs(ev_at(&x, 1, "x") - 0.3 * cos(sqrt(2) * (tl - 0.5))) < 1e-9);
    ck_assert(fabs(ev_at(&x, 1, "x'") + 0.3 * sqrt(2) * sin(sqrt(2) * (tl - 0.5))) < 1e-9);
    /* it stops: after the stick the state is constant, held by the friction */
    double ts = ev_at(&x, 2, "t"), xs = ev_at(&x, 2, "x");
    ck_assert(ts > tl && ts < tl + 0.1);
    const pu_table *t = &x.r.tab;
    for (size_t i = 0; i < t->nrow; i++)
        if (PU_AT(t, i, 0) > ts) {
            ck_assert(fabs(PU_AT(t, i, pu_col(t, "x")) - xs) < 1e-12);
            ck_assert(fabs(PU_AT(t, i, pu_col(t, "lambda_friction_table")) - 2 * xs) < 1e-9);
        }
    evrun_free(&x);
}
END_TEST

/* ---- errors ---- */

static const struct {
    const char *contacts;      /* the entries of `contacts:` (one line) */
    const char *msg;
    int line, column;
} bad[] = {
    { "floor: {gap: y, restitution: 1.5}", "restitution 1.5 is outside [0, 1]", 6, 32 },
    { "floor: {gap: y, restitution: -0.1}", "restitution -0.1 is outside [0, 1]", 6, 32 },
    { "floor: {gap: y, restitution: abc}", "unknown name 'abc'", 6, 32 },
    { "floor: {gap: y, restitution: 2*m}", "restitution 2 is outside [0, 1]", 6, 32 },
    { "floor: {gap: y, restitution: x/2}", "'x' is not known here", 6, 32 },
    { "floor: {gap: y*y', restitution: 0.5}", "a contact's gap may not depend on velocities",
      6, 16 },
    { "floor: {gap: y, restitution: 0.5, mu: 1}", "unknown key 'mu' in a contact", 6, 37 },
    { "floor: {gap: 2*g, restitution: 0.5}", "does not depend on the coordinates", 6, 16 },
    { "floor: {gap: y}", "contact 'floor' has no 'restitution'", 6, 10 },
    { "floor: {restitution: 0}", "contact 'floor' has no 'gap'", 6, 10 },
    { "floor: y", "contact 'floor' must be a mapping", 6, 10 },
    { "rod: {gap: y, restitution: 0.5}", "contact 'rod' has the name of constraint 'rod'", 6, 3 },
    { "2x: {gap: y, restitution: 0.5}", "'2x' is not a valid contact name", 6, 3 },
    { "wall: {gap: x, restitution: 0.5}", "would hide closed_wall", 2, 21 },
};

START_TEST(test_errors)
{
    char text[600];
    snprintf(text, sizeof text, "parameters: {m: 1, g: 9.81}\n"
             "coordinates: [y, x, closed_wall]\nmass: [m, m, m]\n"
             "constraints: {rod: x}\ncontacts:\n  %s\n"
             "initial: {q: {y: 1, x: 0, closed_wall: 0}}\n", bad[_i].contacts);
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("<test>", text, NULL, &err);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(err.code, 2);
    ck_assert_msg(strstr(err.msg, bad[_i].msg), "%s", err.msg);
    ck_assert_msg(err.line == bad[_i].line && err.column == bad[_i].column,
                  "%s at %d:%d, not %d:%d", err.msg, err.line, err.column, bad[_i].line,
                  bad[_i].column);
}
END_TEST

static const struct {
    const char *friction;
    const char *msg;
    int line, column;
} bad_friction[] = {
    { "f: {normal: rod, slip: y, mu: -0.5}", "mu -0.5 is negative", 6, 33 },
    { "f: {normal: rod, slip: y, mu: 0.5, mu_static: 0.4}", "mu_static 0.4 is below mu", 6, 49 },
    { "f: {normal: rod, slip: 2*m, mu: 0.5}", "does not depend on the coordinates", 6, 26 },
    { "f: {normal: rim, slip: y, mu: 0.5}", "normal 'rim' is not a constraint or contact", 6, 15 },
    { "f: {normal: rod, slip: y', mu: 0.5}", "a friction element's slip may not depend on "
      "velocities", 6, 26 },
    { "rod: {normal: rod, slip: y, mu: 0.5}", "friction element 'rod' has the name of "
      "constraint 'rod'", 6, 3 },
    { "f: {normal: rod, slip: y}", "friction 'f' has no 'mu'", 6, 6 },
    { "f: {normal: rod, slip: y, mu: 0.5, muu: 1}", "unknown key 'muu' in a friction element",
      6, 38 },
    { "f: {normal: f, slip: y, mu: 0.5}", "normal 'f' is a friction element", 6, 15 },
};

START_TEST(test_friction_errors)
{
    char text[600];
    snprintf(text, sizeof text, "parameters: {m: 1, g: 9.81}\n"
             "coordinates: [y, x]\nmass: [m, m]\n"
             "constraints: {rod: x}\nfriction:\n  %s\n"
             "initial: {q: {y: 1, x: 0}}\n", bad_friction[_i].friction);
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("<test>", text, NULL, &err);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(err.code, 2);
    ck_assert_msg(strstr(err.msg, bad_friction[_i].msg), "%s", err.msg);
    ck_assert_msg(err.line == bad_friction[_i].line && err.column == bad_friction[_i].column,
                  "%s at %d:%d, not %d:%d", err.msg, err.line, err.column,
                  bad_friction[_i].line, bad_friction[_i].column);
}
END_TEST

static Suite *contacts_friction_suite(void)
{
    Suite *s = suite_create("contacts_friction");
    TCase *tc = tcase_create("physics");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_friction_oscillator, 0, 5);
    tcase_add_loop_test(tc, test_bead_ring, 0, 5);
    tcase_add_loop_test(tc, test_block_table, 0, 2);
    tcase_add_test(tc, test_painleve);
    tcase_add_test(tc, test_hop);
    suite_add_tcase(s, tc);
    tc = tcase_create("errors");
    tcase_add_loop_test(tc, test_errors, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_loop_test(tc, test_friction_errors, 0,
                        (int)(sizeof bad_friction / sizeof *bad_friction));
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(contacts_friction_suite)
