/* The analysis (src/analysis) at the edges of the range of doubles and at
 * its size limit (issue 30): masses of 1e-160 against stiffnesses of 1e160
 * give the true frequencies (against the closed forms omega = sqrt(k/m),
 * sigma = -c/(2m)), never zeros called "stable"; a state-space matrix whose
 * entries do not fit a double is refused with a message; and a chain near
 * the documented n + k limit is analysed in seconds. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/analysis.h"
#include "check_main.h"
#include "model/model.h"

typedef struct scale_case {
    int a, c;              /* m = 10^-a, k = 10^c */
} scale_case;

static const scale_case scales[] = {
    {160, 160}, {100, 100}, {0, 0}, {-160, -160}, {300, -290}, {-150, 150}};

static hs_model *load_text(const char *text, hs_error *err)
{
    hs_overrides ov;
    hs_overrides_init(&ov);
    hs_error_init(err);
    return hs_model_load_string("scale.yaml", text, &ov, err);
}

static void close_rel(double got, double want, double tol, const char *what, int i)
{
    double e = fabs(got - want) / fabs(want);
    ck_assert_msg(e <= tol, "case %d, %s: %.17g, want %.17g (relative error %.3g)", i, what,
                  got, want, e);
}

/* Two springs (k and 2k) and, when damped, dampers c = 2 zeta sqrt(m k):
 * s = -zeta W +- i W sqrt(1 - zeta^2), W = sqrt(k/m) (and sqrt(2) W). */
START_TEST(modes_scaled)
{
    const scale_case *sc = &scales[_i / 2];
    int damped = _i % 2;
    double m = pow(10, -sc->a), k = pow(10, sc->c), zeta = 0.5;
    double W = pow(10, 0.5 * (sc->a + sc->c));
    double c1 = 2 * zeta * pow(10, 0.5 * (sc->c - sc->a));     /* 2 zeta sqrt(m k) */
    char text[1024];
    snprintf(text, sizeof text,
             "coordinates: [x, y]\nmass: [%.17g, %.17g]\n"
             "potential: 0.5*%.17g*x^2 + %.17g*y^2\n"
             "%s"
             "initial: {q: {x: 0.25, y: -0.5}}\n",
             m, m, k, k,
             damped ? "forces: {x: -C1*x', y: -C2*y'}\n" : "");
    char full[1400];
    snprintf(full, sizeof full, "%sparameters: {C1: %.17g, C2: %.17g}\n", text, c1,
             c1 * sqrt(2));
    hs_error err;
    hs_model *mod = load_text(damped ? full : text, &err);
    ck_assert_msg(mod != NULL, "%s", err.msg);
    hs_an *an = hs_an_new(mod, &err);
    ck_assert_msg(an != NULL, "%s", err.msg);
    hs_equil eq;
    ck_assert_int_eq(hs_an_equilibrium(an, mod->q0, &eq, &err), 0);
    hs_modes md;
    int rc = hs_an_modes(an, &eq, &md, &err);
    ck_assert_msg(rc == 0, "case %d: %s", _i, err.msg);
    ck_assert_uint_eq(md.count, 2);
    ck_assert_int_eq(md.conservative, !damped);
    ck_assert_int_eq(md.stable, 1);
    double w[2] = {W, W * sqrt(2)};
    for (int j = 0; j < 2; j++) {
        if (damped) {
            close_rel(md.omega[j], w[j] * sqrt(1 - zeta * zeta), 1e-9, "omega", _i);
            close_rel(md.sigma[j], -zeta * w[j], 1e-9, "sigma", _i);
        } else {
            close_rel(md.omega[j], w[j], 1e-12, "omega", _i);
            ck_assert(md.sigma[j] == 0);
        }
    }
    /* the state-space matrix: -k/m in the model's time, or refused when
     * it does not fit a double */
    hs_linear lin;
    rc = hs_an_linearize(an, &eq, &lin, &err);
    if (W * W < 1e300) {
        ck_assert_msg(rc == 0, "case %d: %s", _i, err.msg);
        close_rel(lin.A[2 * 4 + 0], -k / m, 1e-12, "A[2][0]", _i);
    } else {
        ck_assert_int_eq(rc, 3);
        ck_assert_msg(strstr(err.msg, "beyond the range of doubles"), "%s", err.msg);
        ck_assert_str_eq(err.file, "scale.yaml");
    }
    hs_an_linear_free(&lin);
    hs_an_modes_free(&md);
    hs_an_equil_free(&eq);
    hs_an_free(an);
    hs_model_free(mod);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("analysis_scale");
    TCase *tc = tcase_create("scale");
    tcase_add_loop_test(tc, modes_scaled, 0, (int)(2 * sizeof scales / sizeof scales[0]));
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
