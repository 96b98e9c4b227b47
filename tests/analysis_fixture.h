/* The fixture the analysis suites share (check_analysis.c,
 * check_analysis_failures.c, check_analysis_shapes.c; the first two add
 * tests/analysis_expect.h): one analysis of a model (load, equilibrium,
 * modes) with --set pairs, and the Cartesian double pendulum whose modes
 * are known by hand (omega^2 = (2 -+ sqrt 2) g/l, x1/x2 = sqrt 2 - 1). */
#ifndef HS_TESTS_ANALYSIS_FIXTURE_H
#define HS_TESTS_ANALYSIS_FIXTURE_H

#include <check.h>
#include <string.h>

#include "analysis/analysis.h"
#include "model/model.h"
#include "physics_util.h"

typedef struct an_case {
    hs_model *m;
    hs_an *a;
    hs_equil eq;
    hs_modes md;
    hs_error err;
    int rc;
} an_case;

#define AN_MAXSET 6
typedef struct an_sets {
    size_t n;
    const char *name[AN_MAXSET];
    double value[AN_MAXSET];
} an_sets;

/* Load text (or, text NULL, the file of models/) with the pairs of s (may
 * be NULL), statics as hs_overrides.statics; then equilibrium and modes
 * until the first failure.  The load must succeed; returns the first
 * analysis exit code (c->err says why) or 0. */
static inline int an_analyse(an_case *c, const char *text, const char *file,
                             const an_sets *s, int statics)
{
    memset(c, 0, sizeof *c);
    hs_error_init(&c->err);
    hs_overrides ov;
    hs_overrides_init(&ov);
    if (s) {
        ov.nset = s->n;
        ov.set_name = s->name;
        ov.set_value = s->value;
    }
    ov.statics = statics;
    ck_assert(text || file);
    c->m = text ? hs_model_load_string("<test>", text, &ov, &c->err)
                : hs_model_load(pu_model_path(file ? file : ""), &ov, &c->err);
    ck_assert_msg(c->m, "load: %s", c->err.msg);
    c->a = hs_an_new(c->m, &c->err);
    if (!c->a)
        return c->rc = c->err.code;
    if ((c->rc = hs_an_equilibrium(c->a, c->m->q0, &c->eq, &c->err)))
        return c->rc;
    return c->rc = hs_an_modes(c->a, &c->eq, &c->md, &c->err);
}

static inline void an_case_free(an_case *c)
{
    hs_an_modes_free(&c->md);
    hs_an_equil_free(&c->eq);
    hs_an_free(c->a);
    hs_model_free(c->m);
}

/* The double pendulum in Cartesian coordinates, two rods of length l. */
#define AN_DP_CART                                                                        \
    "name: double pendulum (Cartesian)\n"                                                 \
    "parameters: {m: 1.3, l: 0.7, g: 9.81, th1: 0.3, th2: -0.2}\n"                        \
    "coordinates: [x1, y1, x2, y2]\n"                                                     \
    "mass: [m, m, m, m]\n"                                                                \
    "potential: m*g*(y1 + y2)\n"                                                          \
    "constraints:\n"                                                                      \
    "  rod1: x1^2 + y1^2 - l^2\n"                                                         \
    "  rod2: (x2 - x1)^2 + (y2 - y1)^2 - l^2\n"                                           \
    "initial:\n"                                                                          \
    "  q: {x1: l*sin(th1), y1: -l*cos(th1), x2: l*sin(th1) + l*sin(th2),\n"              \
    "      y2: -l*cos(th1) - l*cos(th2)}\n"

#endif
