/* A sweep's points on one loaded model (hs_model_repoint) against loading
 * the model afresh with the same values: the same parameters, hoisted
 * constants, initial data and constant mass, and the same programs; the
 * cases that need a full load say so. */
#include <check.h>

#include "check_main.h"
#include <math.h>
#include <string.h>

#include "model/model.h"

static const char *const text =
    "parameters:\n"
    "  m: 2\n"
    "  l: 1.5\n"
    "  g: 9.81\n"
    "  w: m*g*l            # derived from a kept one\n"
    "  th: 0.4\n"
    "  k: 3                # folded: never varied\n"
    "coordinates: [x, y]\n"
    "mass: [m, 2*m]\n"
    "potential: w*y/l + k*x^2\n"
    "constraints: {rod: x^2 + y^2 - l^2}\n"
    "initial:\n"
    "  t: th/10\n"
    "  q: {x: l*sin(th), y: -l*cos(th)}\n"
    "  v: {x: m*cos(th), y: m*sin(th)}\n";

static const char *const kept[] = { "m", "th", "l" };

static hs_model *load(const double *val, int keep)
{
    char buf[3][40];
    const char *names[3];
    const char *texts[3];
    double v[3];
    hs_overrides ov;
    hs_overrides_init(&ov);
    for (int i = 0; i < 3; i++) {
        snprintf(buf[i], sizeof buf[i], "%.17g", val[i]);
        names[i] = kept[i];
        texts[i] = buf[i];
        v[i] = val[i];
    }
    ov.nset = 3;
    ov.set_name = names;
    ov.set_value = v;
    ov.set_text = texts;
    if (keep) {
        ov.keep = kept;
        ov.nkeep = 3;
    }
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("point.yaml", text, &ov, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    return m;
}

START_TEST(repoint_equals_fresh_load)
{
    const double pts[][3] = { { 2, 0.4, 1.5 }, { 1, 0.1, 1 }, { 3.5, 1.2, 0.25 },
                              { 0.5, -0.7, 4 } };
    hs_model *base = load(pts[0], 1);
    for (size_t p = 1; p < sizeof pts / sizeof *pts; p++) {
        ck_assert_int_eq(hs_model_repoint(base, kept, pts[p], 3), 0);
        hs_model *f = load(pts[p], 1);
        ck_assert_uint_eq(base->npar, f->npar);
        for (size_t j = 0; j < f->npar; j++)
            ck_assert_double_eq(base->pval[j], f->pval[j]);
        ck_assert_double_eq(base->t0, f->t0);
        for (size_t i = 0; i < f->n; i++) {
            ck_assert_double_eq(base->q0[i], f->q0[i]);
            ck_assert_double_eq(base->v0[i], f->v0[i]);
        }
        ck_assert_uint_eq(base->nhoist, f->nhoist);
        for (size_t h = 0; h < f->nhoist; h++)
            ck_assert_double_eq(base->hoist_val[h], f->hoist_val[h]);
        ck_assert_int_eq(base->mass_kind, HS_MASS_CONST_DIAG);
        for (size_t i = 0; i < f->n; i++)
            ck_assert_double_eq(base->Mconst[i], f->Mconst[i]);
        ck_assert_uint_eq(hs_prog_ninstr(base->prog_dyn), hs_prog_ninstr(f->prog_dyn));
        hs_model_free(f);
    }
    hs_model_free(base);
}
END_TEST

/* kept parameters are inputs: the folded model has fewer hoisted constants
 * and the same initial data */
START_TEST(kept_versus_folded)
{
    const double v[3] = { 2, 0.4, 1.5 };
    hs_model *a = load(v, 1), *b = load(v, 0);
    ck_assert_uint_gt(a->nhoist, 0);
    ck_assert_uint_eq(b->nhoist, 0);
    for (size_t i = 0; i < a->n; i++)
        ck_assert_double_eq(a->q0[i], b->q0[i]);
    hs_model_free(a);
    hs_model_free(b);
}
END_TEST

/* what needs a full load: a mass not positive definite, a value not finite,
 * a parameter not kept; the model is usable again after a good point */
START_TEST(repoint_refusals)
{
    const double v[3] = { 2, 0.4, 1.5 }, neg[3] = { -1, 0.4, 1.5 },
                 inf[3] = { 2, INFINITY, 1.5 };
    hs_model *m = load(v, 1);
    ck_assert_int_eq(hs_model_repoint(m, kept, neg, 3), -1);
    ck_assert_int_eq(hs_model_repoint(m, kept, inf, 3), -1);
    const char *const other[] = { "k" };
    const double three[] = { 4 };
    ck_assert_int_eq(hs_model_repoint(m, other, three, 1), -1);
    ck_assert_int_eq(hs_model_repoint(m, kept, v, 3), 0);
    ck_assert_double_eq_tol(m->q0[0], 1.5 * sin(0.4), 1e-15);
    hs_model_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("point");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, repoint_equals_fresh_load);
    tcase_add_test(tc, kept_versus_folded);
    tcase_add_test(tc, repoint_refusals);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
