/* Events and what outputs read (issue 15), against closed forms at
 * rtol = atol = 1e-12:
 *
 *   - outputs reading lambda_NAME, x'', R_x, T, U, E, H: a pendulum's rod
 *     tension m (3 g cos(theta) - 2 g cos(theta0)) and vertical
 *     acceleration l (cos(theta) theta'^2 + sin(theta) theta'') from energy
 *     conservation; an ambient acceleration of a bead on a rotating wire,
 *     x'' = -2 r0 omega^2 sinh(omega t) sin(omega t);
 *   - a particle released at rest near the top of a frictionless sphere
 *     leaves it where cos(theta) = (2/3) cos(theta0), at the time given by
 *     the quadrature t = int dtheta / theta'(theta) (GSL's qags here);
 *   - after `release` the flight is the parabola of free fall from the
 *     release state, the multiplier reads 0 and G keeps showing x^2 + ...;
 *   - a 2-rad pendulum's recorded up-crossings are spaced by its period
 *     4 sqrt(l/g) K(sin 1);
 *   - --stop-when 'x^2 + y^2 > 4' on a bead on a rotating wire stops at
 *     acosh(2/r0)/omega;
 *   - several events in one step in time order, an event at 0 at t0,
 *     the events file, and every error (positioned, exit 2).
 *
 * The event times are held to 1e-11 (the bound; SciPy's DOP853
 * locates the sphere's lift-off to 1.3e-13): measured 1e-15 (rk8pd) on
 * the sphere.  The physics runs with rk8pd and with other steppers of
 * order >= 4 (bsimp, msadams, msbdf).  Measured, exact output mode: the
 * sphere 1e-15 (rk8pd), 1.4e-14 (bsimp), 4.4e-13 (msadams), 2.4e-13 (msbdf);
 * the period 2.3e-13, 4e-14, 8e-12, 4e-12; the wire 4e-16, 9e-14, 2e-12.
 * (rk4imp is 9e-12 on the sphere: its global error, not the location.) */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_integration.h>
#include <gsl/gsl_sf_ellint.h>

#include "check_main.h"
#include "physics_util.h"
#include "run_csv.h"
#include "integrate/internal.h"

#define TOL 1e-12            /* rtol = atol of the runs */
#define TIME_TOL 1e-11       /* event times against closed forms */

/* ---- running with an events file ---- */

typedef struct evtab {         /* the events CSV: names, then numbers */
    size_t n, ncol;
    char **name;               /* [n] event names */
    pu_table num;              /* the numeric columns (t, ...) */
    char *text;
    size_t len;
} evtab;

typedef struct evrun {
    pu_result r;               /* the trajectory */
    evtab ev;
    hs_model *m;               /* alive while r.sum names its events */
} evrun;

/* The events CSV: its header starts with "event,", each row with a name;
 * the rest is parsed as the trajectory's CSV is. */
static void parse_events(evtab *e)
{
    ck_assert_msg(e->len >= 6 && strncmp(e->text, "event,", 6) == 0,
                  "events file without its header: '%.40s'", e->text ? e->text : "");
    /* strip the first field of every line into name[], keep the rest */
    char *rest = malloc(e->len + 1);
    ck_assert_ptr_nonnull(rest);
    size_t rl = 0, cap = 16;
    e->name = malloc(cap * sizeof *e->name);
    for (const char *p = e->text, *end = e->text + e->len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        ck_assert_msg(nl != NULL, "events file ends inside a row");
        const char *c = memchr(p, ',', (size_t)(nl - p));
        ck_assert_ptr_nonnull(c);
        if (p != e->text) {
            if (e->n == cap)
                e->name = realloc(e->name, (cap *= 2) * sizeof *e->name);
            e->name[e->n++] = strndup(p, (size_t)(c - p));
        }
        memcpy(rest + rl, c + 1, (size_t)(nl - c));
        rl += (size_t)(nl - c);
        p = nl + 1;
    }
    pu_parse_csv(rest, rl, &e->num);
    free(rest);
    ck_assert_msg(e->num.well_formed, "malformed events file");
    ck_assert_uint_eq(e->num.nrow, e->n);
}

/* Load with overrides (nstop conditions) and run into memory. */
static void run_events(const pu_args *a, size_t nstop, const char *const *stop, evrun *x)
{
    hs_overrides ov = pu_overrides(a);
    ov.nstop = nstop;
    ov.stop_when = stop;
    hs_error err;
    hs_error_init(&err);
    hs_model *m = a->path ? hs_model_load(a->path, &ov, &err)
                          : hs_model_load_string("<test>", a->text, &ov, &err);
    ck_assert_msg(m != NULL, "model does not load: %d:%d: %s", err.line, err.column, err.msg);
    memset(x, 0, sizeof *x);
    hs_error_init(&x->r.err);
    FILE *f = open_memstream(&x->r.csv, &x->r.csv_len);
    FILE *fe = open_memstream(&x->ev.text, &x->ev.len);
    ck_assert(f && fe);
    hs_run_opts o = { .columns = a->columns, .precision = 17 };
    x->r.rc = run_csv(m, o, f, NULL, fe, &x->r.sum, &x->r.err);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(fclose(fe), 0);
    x->m = m;
    ck_assert_msg(x->r.rc == 0, "run failed (exit %d): %s", x->r.rc, x->r.err.msg);
    pu_parse_csv(x->r.csv, x->r.csv_len, &x->r.tab);
    ck_assert(x->r.tab.well_formed && x->r.tab.nonfinite == 0);
    parse_events(&x->ev);
}

static void evrun_free(evrun *x)
{
    hs_model_free(x->m);
    pu_result_free(&x->r);
    for (size_t i = 0; i < x->ev.n; i++)
        free(x->ev.name[i]);
    free(x->ev.name);
    pu_table_free(&x->ev.num);
    free(x->ev.text);
}

static double ev_at(const evrun *x, size_t row, const char *col)
{
    return PU_AT(&x->ev.num, row, pu_col(&x->ev.num, col));
}

/* ---- outputs that read the dynamics ---- */

static const char pendulum[] =
    "parameters: {m: 1.5, l: 1.2, g: 9.81, theta0: 2.0}\n"
    "coordinates: [x, y]\n"
    "mass: [m, m]\n"
    "potential: m*g*y\n"
    "constraints: {rod: x^2 + y^2 - l^2}\n"
    "initial: {q: {x: l*sin(theta0), y: -l*cos(theta0)}}\n"
    "simulate: {t_end: 5, dt: 0.05, rtol: 1e-12, atol: 1e-12}\n"
    "outputs:\n"
    "  tension: -2*l*lambda_rod\n"
    "  ay: y''\n"
    "  ax: x''\n"
    "  Rx: R_x\n"
    "  Ry: R_y\n"
    "  Eo: E\n"
    "  To: T\n"
    "  Uo: U\n"
    "  Ho: H\n";

START_TEST(test_outputs_pendulum)
{
    pu_args a = pu_defaults();
    a.text = pendulum;
    a.columns = "t,x,y,x',y',x'',y'',lambda_rod,R_x,R_y,E,T,U,H,tension,ay,ax,Rx,Ry,Eo,To,Uo,Ho";
    pu_result r;
    pu_run_ok(&a, &r);
    const pu_table *t = &r.tab;
    const double m = 1.5, l = 1.2, g = 9.81, c0 = cos(2.0);
    size_t ix = pu_col(t, "x"), iy = pu_col(t, "y"), iT = pu_col(t, "tension"),
           iay = pu_col(t, "ay");
    double worst_T = 0, worst_a = 0;
    for (size_t i = 0; i < t->nrow; i++) {
        double x = PU_AT(t, i, ix), y = PU_AT(t, i, iy);
        double c = -y / l, s = x / l;
        /* energy: theta'^2 = 2 g / l (cos(theta) - cos(theta0)) */
        double w2 = 2 * g / l * (c - c0), th2 = -g / l * s;
        worst_T = fmax(worst_T, fabs(PU_AT(t, i, iT) - m * (3 * g * c - 2 * g * c0)));
        worst_a = fmax(worst_a, fabs(PU_AT(t, i, iay) - l * (c * w2 + s * th2)));
    }
    /* the state is as accurate as the run (about 1e-11 here) */
    ck_assert_msg(worst_T < 1e-9, "tension off by %g", worst_T);
    ck_assert_msg(worst_a < 1e-9, "y'' off by %g", worst_a);
    /* the same quantities as their columns, to rounding */
    static const char *const same[][2] = {
        { "ay", "y''" }, { "ax", "x''" }, { "Rx", "R_x" }, { "Ry", "R_y" },
        { "Eo", "E" }, { "To", "T" }, { "Uo", "U" }, { "Ho", "H" },
    };
    for (size_t k = 0; k < sizeof same / sizeof *same; k++)
        ck_assert_msg(pu_maxdiff(t, same[k][0], t, same[k][1]) < 1e-12, "%s vs %s: %g",
                      same[k][0], same[k][1], pu_maxdiff(t, same[k][0], t, same[k][1]));
    pu_result_free(&r);
}
END_TEST

/* The bead on a rotating wire (embedding): r = r0 cosh(omega t); the
 * ambient x = r cos(omega t) has x'' = -2 r0 omega^2 sinh(omega t)
 * sin(omega t), the coordinate r'' = omega^2 r. */
START_TEST(test_outputs_embedding_accel)
{
    pu_args a = pu_defaults();
    a.text = "parameters: {m: 1.0, omega: 1.3, r0: 0.2}\n"
             "coordinates: [r]\n"
             "embedding: {x: r*cos(omega*t), y: r*sin(omega*t)}\n"
             "mass: [m, m]\n"
             "initial: {q: {r: r0}}\n"
             "simulate: {t_end: 2, dt: 0.05, rtol: 1e-12, atol: 1e-12}\n"
             "outputs: {ax: x'', ay: y'', ar: r''}\n";
    pu_result r;
    pu_run_ok(&a, &r);
    const pu_table *t = &r.tab;
    size_t it = pu_col(t, "t"), iax = pu_col(t, "ax"), iay = pu_col(t, "ay"),
           iar = pu_col(t, "ar");
    const double w = 1.3, r0 = 0.2;
    double worst = 0;
    for (size_t i = 0; i < t->nrow; i++) {
        double u = w * PU_AT(t, i, it);
        worst = fmax(worst, fabs(PU_AT(t, i, iax) + 2 * r0 * w * w * sinh(u) * sin(u)));
        worst = fmax(worst, fabs(PU_AT(t, i, iay) - 2 * r0 * w * w * sinh(u) * cos(u)));
        worst = fmax(worst, fabs(PU_AT(t, i, iar) - w * w * r0 * cosh(u)));
    }
    ck_assert_msg(worst < 1e-9, "accelerations off by %g", worst);
    pu_result_free(&r);
}
END_TEST

/* ---- the sphere ---- */

#define G 9.81
#define TH0 0.1

static const char sphere_fmt[] =
    "parameters: {m: 1.0, R: 1.0, g: 9.81, th0: 0.1}\n"
    "coordinates: [x, y, z]\n"
    "mass: [m, m, m]\n"
    "potential: m*g*z\n"
    "constraints: {sphere: x^2 + y^2 + z^2 - R^2}\n"
    "initial: {q: {x: R*sin(th0), y: 0, z: R*cos(th0)}}\n"
    "simulate: {t_end: 3, dt: 0.01, rtol: 1e-12, atol: 1e-12}\n"
    "events:\n"
    "  leave: {when: lambda_sphere, direction: down, action: %s}\n"
    "  ground: {when: \"z < -R\", action: stop}\n";

/* theta'^2 = 2 g (cos(th0) - cos(theta)) from energy (R = 1), with
 * theta = th0 + u^2 (dtheta = 2 u du) and cos(th0) - cos(theta) =
 * 2 sin(th0 + u^2/2) sin(u^2/2) (no cancellation): the integrand
 * 2u / theta' is smooth, 2 / sqrt(2 g sin(th0)) at u = 0. */
static double sphere_dt(double u, void *p)
{
    (void)p;
    if (u == 0)
        return 2 / sqrt(2 * G * sin(TH0));
    double h = u * u / 2;
    return 2 * u / sqrt(4 * G * sin(TH0 + h) * sin(h));
}

/* The lift-off time and angle by quadrature (R = 1). */
static double sphere_liftoff(double *th1)
{
    *th1 = acos(2.0 / 3.0 * cos(TH0));
    gsl_integration_workspace *ws = gsl_integration_workspace_alloc(1000);
    gsl_function f = { sphere_dt, NULL };
    double t, err;
    ck_assert_int_eq(gsl_integration_qags(&f, 0, sqrt(*th1 - TH0), 0, 1e-13, 1000, ws, &t,
                                          &err), 0);
    gsl_integration_workspace_free(ws);
    ck_assert_msg(err < 1e-13, "quadrature error %g", err);
    return t;
}

static const char *const sphere_methods[] = { "rk8pd", "bsimp", "msadams", "msbdf" };

START_TEST(test_sphere_stop)
{
    char text[1024];
    snprintf(text, sizeof text, sphere_fmt, "stop");
    pu_args a = pu_defaults();
    a.text = text;
    a.method = sphere_methods[_i];
    a.interpolate = _i == 0 ? 1 : -1;      /* rk8pd also in interpolate mode */
    for (int pass = 0; pass < (_i == 0 ? 2 : 1); pass++) {
        a.interpolate = pass ? 1 : 0;
        evrun x;
        run_events(&a, 0, NULL, &x);
        double th1, t1 = sphere_liftoff(&th1);
        ck_assert_uint_eq(x.ev.n, 1);
        ck_assert_str_eq(x.ev.name[0], "leave");
        double te = ev_at(&x, 0, "t");
        ck_assert_msg(fabs(te - t1) < TIME_TOL, "%s%s: lift-off at %.17g, quadrature %.17g "
                      "(%.3g)", a.method, pass ? " interpolate" : "", te, t1, te - t1);
        ck_assert_msg(fabs(ev_at(&x, 0, "z") - cos(th1)) < TIME_TOL, "cos(theta) %.17g vs %.17g",
                      ev_at(&x, 0, "z"), cos(th1));
        /* the trajectory ends with a row at the event, once */
        const pu_table *t = &x.r.tab;
        size_t it = pu_col(t, "t");
        ck_assert_double_eq(PU_AT(t, t->nrow - 1, it), te);
        ck_assert(PU_AT(t, t->nrow - 2, it) < te);
        ck_assert_str_eq(x.r.sum.stopped_by, "leave");
        ck_assert_double_eq(x.r.sum.t_reached, te);
        evrun_free(&x);
    }
}
END_TEST

START_TEST(test_sphere_release)
{
    char text[1024];
    snprintf(text, sizeof text, sphere_fmt, "release sphere");
    pu_args a = pu_defaults();
    a.text = text;
    a.method = sphere_methods[_i];
    a.columns = "t,x,y,z,x',z',lambda_sphere,G_sphere,E";
    evrun x;
    run_events(&a, 0, NULL, &x);
    double th1, t1 = sphere_liftoff(&th1);
    ck_assert_uint_eq(x.ev.n, 2);
    ck_assert_str_eq(x.ev.name[0], "leave");
    ck_assert_str_eq(x.ev.name[1], "ground");
    double te = ev_at(&x, 0, "t");
    ck_assert_msg(fabs(te - t1) < TIME_TOL, "%s: release at %.17g, quadrature %.17g", a.method,
                  te, t1);
    /* free fall from the release state */
    double x1 = ev_at(&x, 0, "x"), z1 = ev_at(&x, 0, "z");
    double vx = ev_at(&x, 0, "x'"), vz = ev_at(&x, 0, "z'");
    const pu_table *t = &x.r.tab;
    size_t it = pu_col(t, "t"), ix = pu_col(t, "x"), iz = pu_col(t, "z"),
           il = pu_col(t, "lambda_sphere"), iG = pu_col(t, "G_sphere"), iE = pu_col(t, "E");
    size_t after = 0;
    double worst = 0;
    for (size_t i = 0; i < t->nrow; i++) {
        double s = PU_AT(t, i, it) - te;
        if (s <= 0)
            continue;
        after++;
        double X = x1 + vx * s, Z = z1 + vz * s - G / 2 * s * s;
        worst = fmax(worst, fmax(fabs(PU_AT(t, i, ix) - X), fabs(PU_AT(t, i, iz) - Z)));
        ck_assert_double_eq(PU_AT(t, i, il), 0);
        /* G keeps showing the constraint function: off the sphere now */
        double r2 = X * X + Z * Z;
        ck_assert_msg(fabs(PU_AT(t, i, iG) - (r2 - 1)) < 1e-9, "G_sphere %g vs %g",
                      PU_AT(t, i, iG), r2 - 1);
        ck_assert(fabs(PU_AT(t, i, iE) - PU_AT(t, 0, iE)) < 1e-9);
    }
    ck_assert_uint_gt(after, 30);
    ck_assert_msg(worst < 1e-10, "%s: flight off the parabola by %g", a.method, worst);
    /* the ground, from the parabola: z1 + vz s - g s^2 / 2 = -1 */
    double sg = (vz + sqrt(vz * vz + 2 * G * (z1 + 1))) / G;
    ck_assert_msg(fabs(ev_at(&x, 1, "t") - (te + sg)) < TIME_TOL, "ground at %.17g vs %.17g",
                  ev_at(&x, 1, "t"), te + sg);
    ck_assert_double_eq(PU_AT(t, t->nrow - 1, it), ev_at(&x, 1, "t"));
    evrun_free(&x);
}
END_TEST

/* ---- the pendulum's period ---- */

START_TEST(test_pendulum_period)
{
    static const char *const methods[] = { "rk8pd", "bsimp", "msbdf" };
    pu_args a = pu_defaults();
    a.text = "parameters: {m: 1.0, l: 1.0, g: 9.81, theta0: 2.0}\n"
             "coordinates: [x, y]\n"
             "mass: [m, m]\n"
             "potential: m*g*y\n"
             "constraints: {rod: x^2 + y^2 - l^2}\n"
             "initial: {q: {x: l*sin(theta0), y: -l*cos(theta0)}}\n"
             "simulate: {t_end: 20, dt: 0.5, rtol: 1e-12, atol: 1e-12}\n"
             "events: {up: {when: x, direction: up}}\n";
    a.method = methods[_i];
    a.columns = "t,x,y,x'";
    evrun x;
    run_events(&a, 0, NULL, &x);
    double T = 4 * sqrt(1 / 9.81) * gsl_sf_ellint_Kcomp(sin(1.0), GSL_PREC_DOUBLE);
    ck_assert_uint_ge(x.ev.n, 6);
    /* released at rest at x > 0: up-crossings at 3T/4 + j T */
    ck_assert_msg(fabs(ev_at(&x, 0, "t") - 0.75 * T) < TIME_TOL, "first at %.17g vs %.17g",
                  ev_at(&x, 0, "t"), 0.75 * T);
    for (size_t i = 0; i + 1 < x.ev.n; i++) {
        ck_assert_str_eq(x.ev.name[i], "up");
        double d = ev_at(&x, i + 1, "t") - ev_at(&x, i, "t");
        ck_assert_msg(fabs(d - T) < 1e-10, "%s: spacing %.17g vs period %.17g (%.3g)",
                      a.method, d, T, d - T);
        /* the bracket closes to 1e-13 of the elapsed time (plus two ulps):
         * the event's x is within that time of x = 0 at speed x' (at the
         * bottom, 5.3: up to 3.9e-12 at t = 7.3) */
        double te = ev_at(&x, i, "t"), xe = ev_at(&x, i, "x");
        double bound = 1.5 * fabs(ev_at(&x, i, "x'")) * (1e-13 * te + 4 * DBL_EPSILON * te);
        ck_assert_msg(fabs(xe) <= bound, "%s: x = %.3g at t = %.17g (bound %.3g)", a.method,
                      xe, te, bound);
    }
    /* recorded only: the run goes to t_end */
    ck_assert_double_eq(x.r.sum.t_reached, 20);
    ck_assert_ptr_null(x.r.sum.stopped_by);
    evrun_free(&x);
}
END_TEST

/* ---- --stop-when ---- */

START_TEST(test_stop_when_wire)
{
    static const char *const methods[] = { "rk8pd", "bsimp", "msadams" };
    pu_args a = pu_defaults();
    a.path = PU_MODEL("rotating_wire.yaml");
    a.method = methods[_i];
    a.rtol = a.atol = TOL;
    a.t_end = 4;
    const char *stop[] = { "x^2 + y^2 > 4" };
    evrun x;
    run_events(&a, 1, stop, &x);
    /* the model's r0 = 0.2, omega = 1: r0 cosh(omega t) = 2 */
    double te = acosh(2 / 0.2) / 1.0;
    ck_assert_uint_eq(x.ev.n, 1);
    ck_assert_str_eq(x.ev.name[0], "stop_when");
    ck_assert_msg(fabs(ev_at(&x, 0, "t") - te) < TIME_TOL, "%s: stopped at %.17g, exact %.17g",
                  a.method, ev_at(&x, 0, "t"), te);
    ck_assert_msg(fabs(ev_at(&x, 0, "r") - 2) < 1e-11, "r = %.17g", ev_at(&x, 0, "r"));
    const pu_table *t = &x.r.tab;
    ck_assert_double_eq(PU_AT(t, t->nrow - 1, pu_col(t, "t")), ev_at(&x, 0, "t"));
    ck_assert_str_eq(x.r.sum.stopped_by, "stop_when");
    ck_assert_str_eq(x.r.sum.stop_text, "x^2 + y^2 > 4");
    evrun_free(&x);
}
END_TEST

/* ---- order, zeros, the events file ---- */

/* Time events (closed forms: their own times): three in one step of a
 * run with rows 1 s apart, handled in time order; the stop between the
 * two records ends the run before the second. */
START_TEST(test_same_step_order)
{
    pu_args a = pu_defaults();
    a.text = "coordinates: [x]\n"
             "mass: [1]\n"
             "initial: {q: {x: 0}, v: {x: 1}}\n"
             "simulate: {t_end: 3, dt: 1, rtol: 1e-12, atol: 1e-12}\n"
             "events:\n"
             "  late: {when: t - 0.5000002, action: record}\n"
             "  early: \"t > 0.5\"\n"
             "  halt: {when: \"x > 0.5000001\", action: stop}\n";
    evrun x;
    run_events(&a, 0, NULL, &x);
    ck_assert_uint_eq(x.ev.n, 2);
    ck_assert_str_eq(x.ev.name[0], "early");
    ck_assert_str_eq(x.ev.name[1], "halt");
    ck_assert(fabs(ev_at(&x, 0, "t") - 0.5) < 1e-13);
    ck_assert(fabs(ev_at(&x, 1, "t") - 0.5000001) < 1e-13);
    /* one step (the first row's interval is 1 s): both in it */
    ck_assert_uint_eq(x.r.tab.nrow, 2);
    evrun_free(&x);
}
END_TEST

/* x = 0 at t0 does not fire; the crossings of a pendulum started at the
 * bottom come every half period (both directions). */
START_TEST(test_zero_at_start)
{
    pu_args a = pu_defaults();
    a.text = "parameters: {l: 1, g: 9.81, v0: 1}\n"
             "coordinates: [x, y]\n"
             "mass: [1, 1]\n"
             "potential: g*y\n"
             "constraints: {rod: x^2 + y^2 - l^2}\n"
             "initial: {q: {x: 0, y: -l}, v: {x: v0}}\n"
             "simulate: {t_end: 4, dt: 0.1, rtol: 1e-12, atol: 1e-12}\n"
             "events: {cross: x}\n";
    evrun x;
    run_events(&a, 0, NULL, &x);
    /* amplitude: 1 - cos(th) = v0^2 / (2 g l) */
    double thm = acos(1 - 1 / (2 * 9.81));
    double T = 4 * sqrt(1 / 9.81) * gsl_sf_ellint_Kcomp(sin(thm / 2), GSL_PREC_DOUBLE);
    ck_assert_uint_ge(x.ev.n, 3);
    for (size_t i = 0; i < x.ev.n; i++)
        ck_assert_msg(fabs(ev_at(&x, i, "t") - (double)(i + 1) * T / 2) < TIME_TOL,
                      "crossing %zu at %.17g vs %.17g", i, ev_at(&x, i, "t"),
                      (double)(i + 1) * T / 2);
    evrun_free(&x);
}
END_TEST

/* No event: a header alone at the end; a run that fails before its first
 * row: nothing at all. */
START_TEST(test_events_file)
{
    pu_args a = pu_defaults();
    a.text = "coordinates: [x]\n"
             "mass: [1]\n"
             "initial: {q: {x: 0}, v: {x: 1}}\n"
             "simulate: {t_end: 1, dt: 0.5}\n"
             "events: {far: \"x > 10\"}\n";
    a.columns = "t,x";
    evrun x;
    run_events(&a, 0, NULL, &x);
    ck_assert_str_eq(x.ev.text, "event,t,x\n");
    evrun_free(&x);
    /* not finite at t0: exit 2 before any row, nothing written */
    hs_overrides ov = pu_overrides(&a);
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("<test>", "coordinates: [x]\nmass: [1]\n"
                                       "initial: {q: {x: -1}}\nsimulate: {t_end: 1}\n"
                                       "events: {e: log(x)}\n", &ov, &err);
    ck_assert_ptr_nonnull(m);
    char *b1 = NULL, *b2 = NULL;
    size_t l1 = 0, l2 = 0;
    FILE *f = open_memstream(&b1, &l1), *fe = open_memstream(&b2, &l2);
    hs_run_opts o = { .precision = 17 };
    hs_summary sum;
    int rc = run_csv(m, o, f, NULL, fe, &sum, &err);
    fclose(f);
    fclose(fe);
    ck_assert_int_eq(rc, 2);
    ck_assert_int_eq(err.line, 5);
    ck_assert_int_eq(err.column, 13);
    ck_assert_msg(strstr(err.msg, "log of a non-positive number in the function of event 'e'"),
                  "%s", err.msg);
    ck_assert_uint_eq(l1, 0);
    ck_assert_uint_eq(l2, 0);
    free(b1);
    free(b2);
    hs_model_free(m);
}
END_TEST

/* ---- errors ---- */

typedef struct bad_case {
    const char *events;        /* the events key's text, or NULL */
    const char *stop;          /* a --stop-when, or NULL */
    int line, col;             /* 0: no file position */
    const char *msg;
} bad_case;

static const bad_case bad[] = {
    { "  e: {when: lambda_rood, action: stop}", NULL, 9, 13,
      "unknown name 'lambda_rood' (did you mean 'lambda_rod'?)" },
    { "  e: {when: x, action: release rood}", NULL, 9, 32,
      "release: 'rood' is not a constraint of the model (did you mean 'rod'?)" },
    { "  e: {when: x, direction: upward}", NULL, 9, 27, "unknown direction 'upward'" },
    { "  e: {when: x, action: halt}", NULL, 9, 24, "unknown action 'halt'" },
    { "  e: {when: x, action: release}", NULL, 9, 24, "release needs the constraints" },
    { "  e: {when: x, action: hold}", NULL, 9, 24, "hold needs the constraints to take back" },
    { "  e: {when: x, action: hold rood}", NULL, 9, 29,
      "hold: 'rood' is not a constraint of the model (did you mean 'rod'?)" },
    { "  e: {when: x, action: stop rod}", NULL, 9, 29, "'stop' takes no names (only release and hold do)" },
    { "  e: {when: x, action: holt rod}", NULL, 9, 24, "unknown action 'holt' (stop, record, release NAME... or hold NAME...); did you mean 'hold'?" },
    { "  e: {when: \"x == 1\"}", NULL, 9, 13, "'==' has no crossing to find" },
    { "  e: {when: \"x > 1\", direction: up}", NULL, 9, 33, "a comparison fires where" },
    { "  e: {direction: up}", NULL, 9, 6, "has no 'when'" },
    { "  e: {when: l - 1}", NULL, 9, 13, "'when' is constant" },
    { "  e: {when: x, on: 1}", NULL, 9, 16, "unknown key 'on' in an event" },
    { "  e: \"x''' > 1\"", NULL, 9, 7, "x''' has too many primes" },
    { NULL, "x + yy > 1", 0, 0, "stop_when 'x + yy > 1': unknown name 'yy'" },
    { NULL, "x > 1 +", 0, 0, "stop_when 'x > 1 +'" },
    { NULL, "l > 2", 0, 0, "the condition is constant" },
};

START_TEST(test_errors)
{
    const bad_case *b = &bad[_i];
    char text[1024];
    snprintf(text, sizeof text,
             "parameters: {l: 1}\n"
             "coordinates: [x, y]\n"
             "mass: [1, 1]\n"
             "potential: 9.81*y\n"
             "constraints: {rod: x^2 + y^2 - l^2}\n"
             "initial: {q: {x: 0.5, y: -0.8660254037844386}}\n"
             "simulate: {t_end: 1}\n"
             "%s%s\n", b->events ? "events:\n" : "", b->events ? b->events : "");
    hs_overrides ov;
    hs_overrides_init(&ov);
    ov.nstop = b->stop ? 1 : 0;
    ov.stop_when = &b->stop;
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("<test>", text, &ov, &err);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(err.code, HS_EXIT_MODEL);
    ck_assert_msg(strstr(err.msg, b->msg), "message '%s' lacks '%s'", err.msg, b->msg);
    ck_assert_int_eq(err.line, b->line);
    if (b->line)
        ck_assert_int_eq(err.column, b->col);
}
END_TEST

/* Accelerations and the dynamics' names outside outputs and events. */
START_TEST(test_not_in_model)
{
    static const char *const pot[] = { "9.81*y + x''", "9.81*y + lambda_rod", "9.81*y + H" };
    static const char *const msg[] = {
        "x'' is an acceleration: only outputs and events can read accelerations",
        "('lambda_rod' is computed by the dynamics: only outputs and events can read it)",
        "('H' is computed by the dynamics: only outputs and events can read it)",
    };
    char text[512];
    snprintf(text, sizeof text, "coordinates: [x, y]\nmass: [1, 1]\npotential: %s\n"
             "constraints: {rod: x^2 + y^2 - 1}\ninitial: {q: {x: 0, y: -1}}\n", pot[_i]);
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("<test>", text, NULL, &err);
    ck_assert_ptr_null(m);
    ck_assert_msg(strstr(err.msg, msg[_i]), "%s", err.msg);
    ck_assert_int_eq(err.line, 3);
    ck_assert_int_eq(err.column, 21);
}
END_TEST

/* The table of actions (integrate/actions.c) has an entry for every action
 * of the model, each with what it does (a record keeps its step and does
 * nothing), and the actions a model file names keep their keywords. */
START_TEST(test_action_table)
{
    static const char *const written[HS_EV_NWRITTEN] = { "stop", "record", "release", "hold" };
    for (int a = 0; a < HS_EV_NACTIONS; a++) {
        const hs_int_action *act = &hs_int_actions[a];
        ck_assert_msg(act->name != NULL, "action %d has no entry", a);
        ck_assert_msg((act->fire != NULL) != ((act->flags & HS_ACT_KEEPS_STEP) != 0),
                      "action %s: a fire function, or it keeps the step", act->name);
        if (a < HS_EV_NWRITTEN)
            ck_assert_str_eq(act->name, written[a]);
    }
}
END_TEST

static Suite *events_suite(void)
{
    Suite *s = suite_create("events");
    TCase *tc = tcase_create("outputs");
    tcase_add_test(tc, test_outputs_pendulum);
    tcase_add_test(tc, test_outputs_embedding_accel);
    suite_add_tcase(s, tc);
    tc = tcase_create("physics");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_sphere_stop, 0, 4);
    tcase_add_loop_test(tc, test_sphere_release, 0, 4);
    tcase_add_loop_test(tc, test_pendulum_period, 0, 3);
    tcase_add_loop_test(tc, test_stop_when_wire, 0, 3);
    tcase_add_test(tc, test_same_step_order);
    tcase_add_test(tc, test_zero_at_start);
    suite_add_tcase(s, tc);
    tc = tcase_create("files and errors");
    tcase_add_test(tc, test_events_file);
    tcase_add_loop_test(tc, test_errors, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, test_action_table);
    tcase_add_loop_test(tc, test_not_in_model, 0, 3);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(events_suite)
