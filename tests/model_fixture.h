/* What the model suites share (check_model.c, check_model_build.c): a base
 * model written line by line (the line numbers of the errors the suites
 * expect depend on it), a one-coordinate model, and a load from text as
 * the file model.yaml. */
#ifndef HS_TESTS_MODEL_FIXTURE_H
#define HS_TESTS_MODEL_FIXTURE_H

#include "model/model.h"

/* ---- a base model, line by line (the line numbers matter in the suites) ---- */

#define L1_5 "coordinates: [x, y]\nmass: [m, m]\nparameters:\n  m: 1\n  l: 1\n"
#define L6_7 "potential: 9.81*m*y\nconstraints:\n"
#define ROD "  rod: x^2 + y^2 - l^2\n"                 /* line 8 */
#define INIT "initial:\n  q: {x: 0.6, y: -0.8}\n"     /* lines 9-10 */
#define SIM "simulate:\n  t_end: 1\n"                 /* lines 11-12 */
#define BASE L1_5 L6_7 ROD INIT SIM

/* one coordinate, no constraint: lines 1-4 */
#define ONE "coordinates: [x]\nmass: [1]\ninitial: {q: {x: 0}}\nsimulate: {t_end: 1}\n"

static inline hs_model *load(const char *text, const hs_overrides *ov, hs_error *err)
{
    hs_error_init(err);
    return hs_model_load_string("model.yaml", text, ov, err);
}

#endif
