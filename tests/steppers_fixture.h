/* What the stepper suites share (check_steppers.c, check_steppers_rows.c):
 * the tolerance, the adaptive steppers of the table and the bound on the
 * global error by order, and the closed forms (an Atwood machine, a bead
 * on a rotating wire in two forms, a pendulum by Jacobi elliptic
 * functions) with their error against a run. */
#ifndef HS_TESTS_STEPPERS_FIXTURE_H
#define HS_TESTS_STEPPERS_FIXTURE_H

#include <check.h>
#include <math.h>
#include <string.h>

#include <gsl/gsl_sf_elljac.h>
#include <gsl/gsl_sf_ellint.h>

#include "integrate/internal.h"
#include "physics_util.h"

#define TOL 1e-8

/* The steppers: every method of the table (src/integrate/steppers.c) under
 * error control; those that step with a fixed step have tests of their
 * own (tests/check_rattle.c). */
typedef hs_stepper stepper;
static inline int nsteppers(void)
{
    int n = 0;
    while (hs_steppers[n])
        n++;
    return n;
}
#define NSTEPPERS nsteppers()
/* The i-th stepper, or NULL (the test does nothing) for one that steps
 * with a fixed step. */
static inline const stepper *adaptive(int i)
{
    return hs_steppers[i]->flags & HS_STEP_FIXED ? NULL : hs_steppers[i];
}

/* The bound on the global error, by order, for smooth problems of O(1) over
 * O(1) times at rtol = atol = tol. */
static inline double bound(const stepper *s, double tol)
{
    return s->order == 1 ? 100 * sqrt(tol) : 100 * tol;
}

static inline void use(pu_args *a, const stepper *s, double tol)
{
    a->method = s->name;
    a->rtol = a->atol = tol;
}

/* ---- closed forms ---- */

typedef struct truth {
    const char *col;       /* a CSV column */
    double (*f)(double t); /* its closed form */
} truth;

/* Atwood: y1 = -1 + v0 t - (g (m1 - m2) / (m1 + m2)) t^2 / 2 */
static const double aw_m1 = 2, aw_m2 = 1, aw_g = 9.81, aw_v0 = 0.5;
static inline double aw_acc(void) { return -aw_g * (aw_m1 - aw_m2) / (aw_m1 + aw_m2); }
static inline double aw_y1(double t) { return -1 + aw_v0 * t + 0.5 * aw_acc() * t * t; }
static inline double aw_v1(double t) { return aw_v0 + aw_acc() * t; }
static inline double aw_y2(double t) { return -3 - aw_y1(t); }
static inline double aw_lam(double t)
{
    (void)t;
    return 2 * aw_m1 * aw_m2 * aw_g / (aw_m1 + aw_m2);
}

/* the wire: r = r0 cosh(omega t); omega = 2 here, so errors grow by e^4 */
static double wr_om = 2.0;
static const double wr_r0 = 0.1;
static inline double wr_r(double t) { return wr_r0 * cosh(wr_om * t); }
static inline double wr_rd(double t) { return wr_r0 * wr_om * sinh(wr_om * t); }
static inline double wr_x(double t) { return wr_r(t) * cos(wr_om * t); }
static inline double wr_y(double t) { return wr_r(t) * sin(wr_om * t); }
static inline double wr_xd(double t)
{
    return wr_rd(t) * cos(wr_om * t) - wr_om * wr_r(t) * sin(wr_om * t);
}
static inline double wr_yd(double t)
{
    return wr_rd(t) * sin(wr_om * t) + wr_om * wr_r(t) * cos(wr_om * t);
}

/* the pendulum released at rest from theta0: sin(theta/2) = k sn(K - w t),
 * k = sin(theta0/2), w = sqrt(g/l); x = 2 l k sn dn, y = -l (1 - 2 k^2 sn^2) */
static const double pd_th0 = 1.2, pd_g = 9.81, pd_l = 1.0;
static inline void pd_jac(double t, double *sn, double *cn, double *dn, double *k, double *w)
{
    *k = sin(pd_th0 / 2);
    *w = sqrt(pd_g / pd_l);
    double K = gsl_sf_ellint_Kcomp(*k, GSL_PREC_DOUBLE);
    gsl_sf_elljac_e(K - *w * t, *k * *k, sn, cn, dn);
}
static inline double pd_x(double t)
{
    double sn, cn, dn, k, w;
    pd_jac(t, &sn, &cn, &dn, &k, &w);
    return 2 * pd_l * k * sn * dn;
}
static inline double pd_y(double t)
{
    double sn, cn, dn, k, w;
    pd_jac(t, &sn, &cn, &dn, &k, &w);
    return -pd_l * (1 - 2 * k * k * sn * sn);
}
static inline double pd_xd(double t)
{
    double sn, cn, dn, k, w;
    pd_jac(t, &sn, &cn, &dn, &k, &w);
    return -2 * pd_l * k * w * cn * (dn * dn - k * k * sn * sn);
}

typedef struct ccase {
    const char *what, *file, *text;
    const char *set[2];
    double val[2];
    truth t[4];
} ccase;

static const char wire_cartesian[] =
    "parameters: {m: 1.0, omega: 2.0, r0: 0.1}\n"
    "coordinates: [x, y]\n"
    "mass: [m, m]\n"
    "constraints: {wire: -x*sin(omega*t) + y*cos(omega*t)}\n"
    "initial: {q: {x: r0, y: 0}, v: {x: 0, y: omega*r0}}\n"
    "simulate: {t_end: 2, dt: 0.01}\n";

static const ccase cases[] = {
    { "Atwood machine", "atwood.yaml", NULL, { NULL }, { 0 },
      { { "y1", aw_y1 }, { "y2", aw_y2 }, { "y1'", aw_v1 }, { "lambda_string", aw_lam } } },
    { "bead on a rotating wire (Cartesian)", NULL, wire_cartesian, { NULL }, { 0 },
      { { "x", wr_x }, { "y", wr_y }, { "x'", wr_xd }, { "y'", wr_yd } } },
    { "bead on a rotating wire (embedding)", "rotating_wire.yaml", NULL, { "omega", "r0" },
      { 2.0, 0.1 }, { { "r", wr_r }, { "r'", wr_rd }, { "x'", wr_xd }, { "y'", wr_yd } } },
    { "pendulum", "pendulum.yaml", NULL, { "theta0" }, { 1.2 },
      { { "x", pd_x }, { "y", pd_y }, { "x'", pd_xd }, { NULL, NULL } } },
};
#define NCASES ((int)(sizeof cases / sizeof *cases))

static inline void case_args(const ccase *c, pu_args *a)
{
    if (c->file)
        a->path = PU_MODEL(c->file);
    else
        a->text = c->text;
    for (int j = 0; j < 2; j++)
        if (c->set[j])
            pu_set(a, c->set[j], c->val[j]);
    a->t_end = 2;
    a->dt = 0.01;
    a->columns = "all";
}

/* max over rows and columns of |column - closed form| */
static inline double truth_error(const ccase *c, const pu_table *tab, const char **worst)
{
    size_t it = pu_col(tab, "t");
    double e = 0;
    for (int j = 0; j < 4 && c->t[j].col; j++) {
        size_t ic = pu_col(tab, c->t[j].col);
        for (size_t i = 0; i < tab->nrow; i++) {
            double d = fabs(PU_AT(tab, i, ic) - c->t[j].f(PU_AT(tab, i, it)));
            if (!(d <= e)) {
                e = d;
                *worst = c->t[j].col;
            }
        }
    }
    return e;
}


#endif
