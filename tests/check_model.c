/* Tests of src/model/ (the loader and the YAML layer): a table of broken
 * model texts, each with its exit code, 1-based line and column and a part
 * of the message, loaded through hs_model_load_string; deep nesting and
 * absurd sizes; and hs_ytree_scalar_pos on every scalar style.  What the
 * loader builds from good models is check_model_build.c's.
 *
 * Rows marked XFAIL are known bugs in src/ (reported to the lead): they are
 * checked and printed ("XFAIL name: got ...") but do not fail the suite.
 * When one starts to pass it prints "XPASS name": clear its flag. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "check_main.h"
#include "model/model.h"
#include "lang/ytree.h"
#include "model_fixture.h"

#define XFAIL 1

typedef struct bad_case {
    const char *name;
    const char *text;
    int code;
    int line, col;             /* 0, 0: no position expected */
    const char *msg;           /* a part of the message */
    int xfail;
} bad_case;

static const bad_case bad[] = {
    /* YAML syntax */
    {"yaml_unclosed_flow", "coordinates: [x, y\nmass: [1, 1]\n", 2, 2, 5,
     "did not find expected ',' or ']'", 0},
    {"yaml_bad_indent", "coordinates: [x]\n  mass: [1]\n", 2, 2, 3,
     "did not find expected key", 0},
    {"yaml_tab", "coordinates: [x]\n\tmass: [1]\n", 2, 2, 1,
     "cannot start any token", 0},
    /* at the opening quote, not at the end of the file (no line to show there) */
    {"yaml_unclosed_quote", "coordinates: [x]\nmass: \"abc\n", 2, 2, 7,
     "end of stream", 0},
    {"yaml_undefined_alias", "coordinates: [x]\nmass: *nowhere\n", 2, 2, 7,
     "undefined alias", 0},
    /* reader errors are at the offending byte, not at 1:1 */
    {"non_utf8_in_expression", L1_5 L6_7 "  rod: x^2 + y^2 - l^2 + \xff\n" INIT SIM, 2, 8, 26,
     "UTF-8", 0},
    {"latin1_in_name", "name: caf\xe9\n" ONE, 2, 1, 10, "UTF-8", 0},

    /* the document */
    {"empty", "", 2, 0, 0, "empty model file", 0},
    {"only_comment", "# nothing\n", 2, 0, 0, "empty model file", 0},
    {"top_scalar", "just a scalar\n", 2, 1, 1, "a model file must be a mapping", 0},
    {"top_list", "- a\n- b\n", 2, 1, 1, "found a list", 0},
    {"two_documents", ONE "---\ncoordinates: [y]\n", 2, 6, 1, "several YAML documents", 0},
    {"unknown_top_key", BASE "simulat: {}\n", 2, 13, 1,
     "unknown key 'simulat' in the model (did you mean 'simulate'?)", 0},
    {"unknown_top_key_far", BASE "zzzzzzzz: 1\n", 2, 13, 1, "unknown key 'zzzzzzzz'", 0},
    {"duplicate_top_key", BASE "parameters:\n  g: 1\n", 2, 13, 1,
     "duplicate key 'parameters' in the model", 0},
    {"key_not_scalar", BASE "? [a, b]\n: 1\n", 2, 13, 3, "keys in the model must be scalars", 0},
    {"format_2", BASE "format: 2\n", 2, 13, 9, "unsupported format '2'", 0},
    {"name_list", "name: [a]\n" ONE, 2, 1, 7, "'name' must be a scalar", 0},

    /* sections: unknown keys and wrong types */
    {"unknown_simulate_key", L1_5 L6_7 ROD INIT "simulate:\n  t_ned: 1\n", 2, 12, 3,
     "unknown key 't_ned' in 'simulate' (did you mean 't_end'?)", 0},
    {"unknown_initial_key", L1_5 L6_7 ROD INIT "  qq: {x: 1}\n" SIM, 2, 11, 3,
     "unknown key 'qq' in 'initial' (did you mean 'q'?)", 0},
    {"unknown_consistency_key", BASE "consistency:\n  tolerence: 1e-9\n", 2, 14, 3,
     "unknown key 'tolerence' in 'consistency' (did you mean 'tolerance'?)", 0},
    {"consistency_list", BASE "consistency: [1]\n", 2, 13, 14, "'consistency' must be a mapping", 0},
    {"consistency_mode", BASE "consistency:\n  mode: maybe\n", 2, 14, 9,
     "consistency mode must be 'project' or 'reject'", 0},
    {"consistency_tolerance", BASE "consistency:\n  tolerance: -1\n", 2, 14, 14,
     "consistency tolerance must be > 0", 0},
    {"lock_unknown", BASE "consistency:\n  lock: [x, z]\n", 2, 14, 13,
     "'lock' names 'z', which is not a coordinate", 0},
    {"lock_scalar", BASE "consistency:\n  lock: x\n", 2, 14, 9, "'lock' must be a list", 0},
    {"simulate_list", L1_5 L6_7 ROD INIT "simulate: [1]\n", 2, 11, 11,
     "'simulate' must be a mapping", 0},
    {"initial_list", L1_5 L6_7 ROD "initial: [1, 2]\n" SIM, 2, 9, 10,
     "'initial' must be a mapping", 0},
    {"outputs_list", BASE "outputs: [a]\n", 2, 13, 10, "'outputs' must be a mapping", 0},
    {"parameters_list", "coordinates: [x]\nmass: [1]\nparameters: [a]\n", 2, 3, 13,
     "'parameters' must be a mapping", 0},

    /* coordinates */
    {"missing_coordinates", "mass: [1]\ninitial: {q: {x: 0}}\n", 2, 1, 1,
     "missing key 'coordinates'", 0},
    {"coordinates_scalar", "coordinates: x\nmass: [1]\n", 2, 1, 14,
     "'coordinates' must be a list", 0},
    {"coordinates_empty", "coordinates: []\nmass: [1]\n", 2, 1, 14, "'coordinates' is empty", 0},
    {"coordinate_list_item", "coordinates: [x, [y]]\nmass: [1, 1]\n", 2, 1, 18,
     "a coordinate must be a name, found a list", 0},
    {"coordinate_bad_name", "coordinates: [x, 2y]\nmass: [1, 1]\n", 2, 1, 18,
     "'2y' is not a valid coordinate name", 0},
    {"coordinate_reserved", "coordinates: [x, pi]\nmass: [1, 1]\n", 2, 1, 18,
     "'pi' is reserved", 0},
    {"coordinate_reserved_t", "coordinates: [t]\nmass: [1]\n", 2, 1, 15, "'t' is reserved", 0},
    {"duplicate_coordinate", "coordinates: [x, y, x]\nmass: [1, 1, 1]\n", 2, 1, 21,
     "duplicate coordinate 'x'", 0},
    {"coordinate_name_65_chars",
     "coordinates: [x, aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa]\n"
     "mass: [1, 1]\n", 2, 1, 18, "is not a valid coordinate name", 0},

    /* mass */
    {"missing_mass", "coordinates: [x]\ninitial: {q: {x: 0}}\n", 2, 1, 1, "missing key 'mass'", 0},
    {"mass_scalar", "coordinates: [x]\nmass: 1\ninitial: {q: {x: 0}}\n", 2, 2, 7,
     "'mass' must be a list", 0},
    {"mass_wrong_length", "coordinates: [x, y]\nmass: [1, 1, 1]\ninitial: {q: {x: 0, y: 0}}\n",
     2, 2, 7, "'mass' has 3 entries; expected 2", 0},
    {"mass_mixed", "coordinates: [x, y]\nmass: [1, [1, 0]]\ninitial: {q: {x: 0, y: 0}}\n",
     2, 2, 11, "mixes a diagonal list and matrix rows", 0},
    {"mass_row_length",
     "coordinates: [x, y]\nmass: [[1, 0], [0, 1, 1]]\ninitial: {q: {x: 0, y: 0}}\n", 2, 2, 16,
     "mass matrix row 2 must be a list of 2 entries", 0},
    {"mass_not_symmetric",
     "coordinates: [x, y]\nmass: [[1, 0], [0.5, 1]]\ninitial: {q: {x: 0, y: 0}}\n", 2, 2, 17,
     "mass matrix is not symmetric: entry (2,1) is 0.5 but (1,2) is 0", 0},
    {"mass_negative", "coordinates: [x, y]\nmass: [1, -1]\ninitial: {q: {x: 0, y: 0}}\n", 2, 2,
     7, "not positive definite", 0},
    {"mass_zero", "coordinates: [x]\nmass: [0]\ninitial: {q: {x: 0}}\n", 2, 2, 7,
     "not positive definite", 0},
    {"mass_full_not_pd",
     "coordinates: [x, y]\nmass: [[1, 2], [2, 1]]\ninitial: {q: {x: 0, y: 0}}\n", 2, 2, 7,
     "not positive definite at the initial state", 0},
    {"mass_not_pd_at_t0",
     "coordinates: [x, y]\nmass: [1, y]\ninitial: {q: {x: 0, y: -0.5}}\n", 2, 2, 7,
     "entry 2 (y) is -0.5", 0},
    {"mass_velocity", "coordinates: [x, y]\nmass: [1, x']\ninitial: {q: {x: 0, y: 0}}\n", 2, 2,
     7, "the mass matrix may not depend on velocities (it uses x')", 0},

    /* forces */
    {"forces_wrong_length", BASE "forces: [0, 0, 1]\n", 2, 13, 9,
     "'forces' has 3 entries; the model has 2 coordinates", 0},
    {"forces_unknown_coordinate", BASE "forces: {x: 0, z: 1}\n", 2, 13, 16,
     "unknown key 'z' in 'forces'", 0},
    {"forces_scalar", BASE "forces: 3\n", 2, 13, 9, "'forces' must be a list of 2", 0},
    {"forces_duplicate", BASE "forces: {x: 0, x: 1}\n", 2, 13, 16, "duplicate key 'x'", 0},

    /* names */
    {"duplicate_parameter", L1_5 "  m: 2\n", 2, 6, 3, "duplicate key 'm' in 'parameters'", 0},
    {"parameter_is_coordinate", L1_5 "  x: 2\n", 2, 6, 3,
     "parameter 'x' has the name of a coordinate", 0},
    {"define_clashes_parameter", BASE "define:\n  l: 2*m\n", 2, 14, 3,
     "define 'l' clashes with parameter 'l' at line 5", 0},
    {"define_is_coordinate", BASE "define:\n  y: 2*m\n", 2, 14, 3,
     "define 'y' has the name of a coordinate", 0},
    {"parameter_reserved_function", L1_5 "  sin: 2\n", 2, 6, 3,
     "'sin' is reserved and cannot name an entry of 'parameters'", 0},
    {"parameter_reserved_column", L1_5 "  E: 2\n", 2, 6, 3, "'E' is reserved", 0},
    {"define_reserved_t", BASE "define:\n  t: x\n", 2, 14, 3, "'t' is reserved", 0},
    {"output_reserved", BASE "outputs:\n  lambda: x\n", 2, 14, 3, "'lambda' is reserved", 0},
    {"output_is_coordinate", BASE "outputs:\n  x: 2*y\n", 2, 14, 3,
     "output 'x' has the name of a coordinate", 0},
    {"parameter_bad_name", L1_5 "  2k: 2\n", 2, 6, 3, "'2k' is not a valid name", 0},
    {"constraint_bad_name", L1_5 L6_7 "  \"my rod\": x\n" INIT SIM, 2, 8, 3,
     "'my rod' is not a valid constraint name", 0},
    {"duplicate_constraint", L1_5 L6_7 ROD "  rod: x - 1\n" INIT SIM, 2, 9, 3,
     "duplicate key 'rod' in 'constraints'", 0},

    /* unknown names: the column inside the scalar */
    {"unknown_plain", L1_5 L6_7 "  rod: x^2 + y^2 - ll^2\n" INIT SIM, 2, 8, 20,
     "unknown name 'll'", 0},
    {"unknown_single_quoted", L1_5 L6_7 "  rod: 'x^2 + y^2 - ll^2'\n" INIT SIM, 2, 8, 21,
     "unknown name 'll'", 0},
    {"unknown_single_quoted_escape", L1_5 L6_7 "  rod: 'x^2 + y^2 - ll^2 + 0*''a'''\n" INIT SIM,
     2, 8, 21, "unknown name 'll'", 0},
    {"unknown_double_quoted", L1_5 L6_7 "  rod: \"x^2 + y^2 - ll^2\"\n" INIT SIM, 2, 8, 21,
     "unknown name 'll'", 0},
    /* an escape before the error: \t is two bytes in the file, one in the value */
    {"unknown_after_escape", L1_5 L6_7 "  rod: \"x^2 +\\ty^2 - ll^2\"\n" INIT SIM, 2, 8, 22,
     "unknown name 'll'", 0},
    {"unknown_flow_mapping", L1_5 L6_7 ROD "initial:\n  q: {x: 0.6, y: -0.8 * lll}\n" SIM, 2, 10,
     25, "unknown name 'lll'", 0},
    {"unknown_flow_sequence", BASE "forces: [0, 2*qq]\n", 2, 13, 15, "unknown name 'qq'", 0},
    {"unknown_literal_block", L1_5 L6_7 "  rod: |\n    x^2 +\n      y^2 - ll\n" INIT SIM, 2, 10,
     13, "unknown name 'll'", 0},
    {"unknown_folded_block", L1_5 L6_7 "  rod: >\n    x^2 +\n    y^2 - ll\n" INIT SIM, 2, 10, 11,
     "unknown name 'll'", 0},
    {"unknown_plain_multiline", L1_5 L6_7 "  rod: x^2 +\n    y^2 - ll\n" INIT SIM, 2, 9, 11,
     "unknown name 'll'", 0},
    {"unknown_in_output", BASE "outputs:\n  r: hypot(x, zz)\n", 2, 14, 15, "unknown name 'zz'", 0},
    {"unknown_in_define", L1_5 L6_7 "  rod: r2 - l^2\n" INIT SIM "define:\n  r2: x^2 + zz\n", 2,
     14, 13, "unknown name 'zz'", 0},
    {"unknown_in_unused_define", L1_5 L6_7 ROD INIT SIM "define:\n  r2: x^2 + zz\n", 2, 14, 13,
     "unknown name 'zz'", 0},
    {"unknown_function", L1_5 L6_7 "  rod: x^2 + foo(y)\n" INIT SIM, 2, 8, 14,
     "unknown function 'foo'", 0},
    {"nan_is_not_a_literal", L1_5 "  g: nan\n", 2, 6, 6, "unknown name 'nan'", 0},
    {"inf_is_not_a_literal", L1_5 "  g: inf\n", 2, 6, 6, "unknown name 'inf'", 0},
    {"t_in_initial", L1_5 L6_7 ROD "initial:\n  q: {x: t, y: -0.8}\n" SIM, 2, 10, 10,
     "unknown name 't'", 0},
    {"coordinate_in_initial", L1_5 L6_7 ROD "initial:\n  q: {x: 0.6, y: x}\n" SIM, 2, 10, 18,
     "unknown name 'x'", 0},
    {"name_64_chars_ok_65_unknown", ONE "potential: x + "
     "qqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqqq"
     "\n", 2, 5, 16, "unknown name 'qqqq", 0},

    /* primes and velocities */
    {"prime_on_parameter", L1_5 L6_7 "  rod: x^2 + y^2 - l'^2\n" INIT SIM, 2, 8, 20,
     "'l' has no velocity", 0},
    {"velocity_in_constraint", L1_5 L6_7 "  rod: x^2 + y^2 - l^2 + x'\n" INIT SIM, 2, 8, 8,
     "a holonomic constraint may not depend on velocities (it uses x')", 0},
    {"velocity_in_potential", L1_5 "potential: y'^2\nconstraints:\n" ROD INIT SIM, 2, 6, 12,
     "the potential may not depend on velocities (it uses y')", 0},
    {"velocity_in_initial", L1_5 L6_7 ROD "initial:\n  q: {x: 0.6, y: -0.8}\n  v: {x: y'}\n" SIM,
     2, 11, 10, "'y' has no velocity", 0},

    /* expression syntax inside a file */
    {"syntax_trailing_operator", L1_5 L6_7 "  rod: x^2 + y^2 +\n" INIT SIM, 2, 8, 19,
     "expected", 0},
    {"syntax_bad_character", L1_5 L6_7 "  rod: x^2 $ y\n" INIT SIM, 2, 8, 12,
     "unexpected character '$'", 0},
    {"syntax_wrong_arity", L1_5 L6_7 "  rod: atan2(x) + y\n" INIT SIM, 2, 8, 8,
     "'atan2' takes 2 arguments, got 1", 0},
    {"syntax_empty_constraint", L1_5 L6_7 "  rod:\n" INIT SIM, 2, 8, 7, "empty expression", 0},
    /* the position of the '(' in the file, not inside the expression */
    {"syntax_unclosed_paren", L1_5 L6_7 "  rod: (x^2 + y^2\n" INIT SIM, 2, 8, 18,
     "to close '(' at 8:8)", 0},
    {"number_out_of_range", L1_5 L6_7 "  rod: x^2 + y^2 - 1e999\n" INIT SIM, 2, 8, 20,
     "number out of range", 0},
    {"fold_division_by_zero", L1_5 L6_7 "  rod: x^2 + y^2 - 1/0\n" INIT SIM, 2, 8, 21,
     "division by zero", 0},
    {"fold_overflow_parameter", L1_5 "  g: 1e308 * 10\n", 2, 6, 12, "overflow", 0},
    {"fold_sqrt_negative_parameter", L1_5 "  g: sqrt(-1)\n", 2, 6, 6, "sqrt(-1)", 0},
    {"expression_list", L1_5 L6_7 "  rod: [x]\n" INIT SIM, 2, 8, 8,
     "a constraint must be an expression, found a list", 0},
    {"constraints_scalar", L1_5 "constraints: 5\n" INIT SIM, 2, 6, 14,
     "'constraints' must be a mapping name -> expression or a list", 0},

    /* cycles */
    {"define_cycle", L1_5 L6_7 "  rod: x^2 + y^2 - a\n" INIT SIM "define:\n  a: b + 1\n  b: 2*a\n",
     2, 14, 3, "a cycle among defines", 0},
    {"parameter_cycle", L1_5 "  k: 2*j\n  j: k + 1\n", 2, 6, 3,
     "parameter 'k' depends on itself (a cycle among parameters)", 0},
    {"parameter_self", L1_5 "  k: 2*k\n", 2, 6, 3, "parameter 'k' depends on itself", 0},

    /* initial data */
    {"missing_initial", L1_5 L6_7 ROD SIM, 2, 1, 1, "missing key 'initial'", 0},
    {"missing_q", L1_5 L6_7 ROD "initial:\n  t: 0\n" SIM, 2, 10, 3, "missing key 'q' in 'initial'",
     0},
    {"missing_initial_coordinate", L1_5 L6_7 ROD "initial:\n  q: {x: 0.6}\n" SIM, 2, 10, 6,
     "initial.q: missing value for coordinate 'y'", 0},
    {"initial_q_wrong_length", L1_5 L6_7 ROD "initial:\n  q: [0.6]\n" SIM, 2, 10, 6,
     "initial.q has 1 entry", 0},
    {"initial_t_infinite", L1_5 L6_7 ROD INIT "  t: l/0\n" SIM, 2, 11, 7, "division by zero", 0},

    /* simulate */
    {"t_end_not_number", L1_5 L6_7 ROD INIT "simulate:\n  t_end: soon\n", 2, 12, 10,
     "unknown name 'soon' (no parameter has that name", 0},
    /* simulate values are expressions of numbers, pi and the parameters */
    {"t_end_expr_syntax", L1_5 L6_7 ROD INIT "simulate:\n  t_end: 2*pi/\n", 2, 12, 15,
     "expression expected at end of input", 0},
    {"t_end_expr_coordinate", L1_5 L6_7 ROD INIT "simulate:\n  t_end: 2*x\n", 2, 12, 12,
     "unknown name 'x'", 0},
    {"dt_expr_division_by_zero", L1_5 L6_7 ROD INIT "simulate:\n  t_end: 1\n  dt: l/0\n", 2, 13,
     8, "division by zero", 0},
    {"rtol_expr_negative", L1_5 L6_7 ROD INIT "simulate:\n  t_end: 1\n  rtol: -m*1e-9\n", 2,
     13, 9, "simulate.rtol must be > 0 (it is -1e-09)", 0},
    {"step_expr_misspelt", L1_5 L6_7 ROD INIT "simulate:\n  t_end: 1\n  step: 1/(100*ll)\n", 2,
     13, 16, "unknown name 'll' (did you mean 'l'?)", 0},
    {"t_end_huge", L1_5 L6_7 ROD INIT "simulate:\n  t_end: 1e999\n", 2, 12, 10,
     "not finite: '1e999'", 0},
    {"t_end_nan", L1_5 L6_7 ROD INIT "simulate:\n  t_end: nan\n", 2, 12, 10, "not finite", 0},
    {"t_end_list", L1_5 L6_7 ROD INIT "simulate:\n  t_end: [1]\n", 2, 12, 10,
     "expected a number, found a list", 0},
    /* t_end <= t0 is an error of the file: exit 2 there, positioned */
    {"t_end_before_t0", L1_5 L6_7 ROD INIT "simulate:\n  t_end: -1\n", 2, 12, 10, "t_end",
     0},
    {"method_list", BASE "  method: [rk4]\n", 2, 13, 11, "simulate.method must be a stepper name",
     0},
    {"dt_zero", BASE "  dt: 0\n", 2, 13, 7, "simulate.dt must be > 0", 0},
    {"dt_negative", BASE "  dt: -0.5\n", 2, 13, 7, "simulate.dt must be > 0", 0},
    {"rtol_zero", BASE "  rtol: 0\n", 2, 13, 9, "simulate.rtol must be > 0", 0},
    {"atol_negative", BASE "  atol: -1\n", 2, 13, 9, "simulate.atol must be > 0", 0},
    {"alpha_negative", BASE "  alpha: -1\n", 2, 13, 10, "simulate.alpha must be >= 0", 0},
    {"stabilize_unknown", BASE "  stabilize: magic\n", 2, 13, 14,
     "simulate.stabilize must be 'projection', 'baumgarte' or 'none'", 0},

    /* Lagrangian and embedding forms */
    {"kinetic_quartic", "coordinates: [x]\nkinetic: x'^4\ninitial: {q: {x: 1}}\n", 2, 2, 10,
     "the kinetic energy is not quadratic in the velocities", 0},
    {"kinetic_and_mass", "coordinates: [x]\nkinetic: 0.5*x'^2\nmass: [1]\ninitial: {q: {x: 0}}\n",
     2, 3, 1, "'mass' is not used with 'kinetic'", 0},
    {"kinetic_and_lagrangian",
     "coordinates: [x]\nkinetic: 0.5*x'^2\nlagrangian: 0.5*x'^2\ninitial: {q: {x: 0}}\n", 2, 3, 1,
     "give either 'kinetic' or 'lagrangian', not both", 0},
    {"lagrangian_with_potential",
     "coordinates: [x]\nlagrangian: 0.5*x'^2\npotential: x^2\ninitial: {q: {x: 0}}\n", 2, 3, 1,
     "'potential' goes with 'kinetic'", 0},
    {"metric_singular_at_t0",
     "coordinates: [th]\nkinetic: 0.5*sin(th)^2*th'^2\ninitial: {q: {th: 0}}\n", 2, 2, 10,
     "metric d2T/dv2 is not positive definite at the initial state", 0},
    {"embedding_clashes_coordinate",
     "coordinates: [th]\nembedding:\n  x: sin(th)\n  th: -cos(th)\nmass: [1, 1]\n"
     "initial: {q: {th: 0.5}}\n", 2, 4, 3, "ambient name 'th' has the name of a coordinate", 0},
    {"embedding_empty", "coordinates: [th]\nembedding: {}\nmass: [1, 1]\ninitial: {q: {th: 0}}\n",
     2, 2, 12, "'embedding' is empty", 0},
    {"embedding_with_kinetic",
     "coordinates: [th]\nembedding: {x: th}\nkinetic: 1\ninitial: {q: {th: 0}}\n", 2, 2, 1,
     "drop 'kinetic'", 0},
    {"embedding_missing_mass",
     "coordinates: [th]\nembedding: {x: th}\ninitial: {q: {th: 0}}\n", 2, 1, 1,
     "missing key 'mass'", 0},
    {"embedding_velocity", "coordinates: [th]\nembedding: {x: th'}\nmass: [1]\n"
     "initial: {q: {th: 0}}\n", 2, 2, 16, "an embedding may not depend on velocities", 0},
    {"embedding_forces_unknown",
     "coordinates: [th]\nembedding: {x: sin(th), y: -cos(th)}\nmass: [1, 1]\n"
     "forces: {x: 0, z: 1}\ninitial: {q: {th: 0.5}}\n", 2, 4, 16,
     "unknown key 'z' in 'forces' (ambient names)", 0},
};

/* ---- helpers ---- */

static int report_xfail(const char *name, int ok, const char *got)
{
    if (ok)
        printf("XPASS %s (fixed? clear its XFAIL flag in tests/check_model.c)\n", name);
    else
        printf("XFAIL %s: %s\n", name, got);
    return 0;
}

START_TEST(test_bad)
{
    const bad_case *c = &bad[_i];
    hs_error err;
    hs_model *m = load(c->text, NULL, &err);
    char got[1400];
    snprintf(got, sizeof got, "%s: code %d at %d:%d: %s", m ? "loaded" : "error", err.code,
             err.line, err.column, err.msg);
    int ok = !m && err.code == c->code && err.line == c->line && err.column == c->col &&
             strstr(err.msg, c->msg) != NULL;
    /* a positioned error names the file and carries the source line */
    if (ok && c->line > 0)
        ok = strcmp(err.file, "model.yaml") == 0 && err.source[0] != '\0';
    hs_model_free(m);
    if (c->xfail) {
        report_xfail(c->name, ok, got);
        return;
    }
    ck_assert_msg(ok, "%s: want code %d at %d:%d with '%s'; got %s (file '%s', source '%s')",
                  c->name, c->code, c->line, c->col, c->msg, got, err.file, err.source);
}
END_TEST

/* 100000 '(' (and other deep shapes): a positioned error, no crash. */
START_TEST(test_deep_nesting)
{
    static const char *const shapes[][2] = {{"(", ""}, {"-", ""}, {"sin(", ""}, {"2^", ""}};
    for (size_t s = 0; s < sizeof shapes / sizeof *shapes; s++) {
        const char *unit = shapes[s][0];
        size_t reps = 100000, ul = strlen(unit);
        const char *head = ONE "potential: ";
        size_t hl = strlen(head);
        char *text = malloc(hl + reps * ul + 4);
        ck_assert_ptr_nonnull(text);
        memcpy(text, head, hl);
        for (size_t i = 0; i < reps; i++)
            memcpy(text + hl + i * ul, unit, ul);
        strcpy(text + hl + reps * ul, "x\n");
        hs_error err;
        hs_model *m = load(text, NULL, &err);
        ck_assert_msg(!m, "shape '%s': loaded", unit);
        ck_assert_int_eq(err.code, HS_EXIT_MODEL);
        ck_assert_int_eq(err.line, 5);
        ck_assert_msg(strstr(err.msg, "nested too deeply"), "shape '%s': %s", unit, err.msg);
        hs_model_free(m);
        free(text);
    }
}
END_TEST

/* Absurd sizes are refused with a message before the big arrays exist:
 * more than 100000 coordinates; more than 5000 in generalized coordinates
 * (an n x n mass matrix); k*n above 10^7 where a dense Jacobian is kept
 * (here: a model with a contact, whose impacts solve densely). */
START_TEST(test_size_limits)
{
    size_t cap = 4 << 20, len = 0;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
#define PUT(...) (len += (size_t)snprintf(text + len, cap - len, __VA_ARGS__))
    PUT("coordinates: [");
    for (int i = 0; i < 100001; i++)
        PUT("%sq%d", i ? ", " : "", i);
    PUT("]\nmass: [1]\ninitial: {q: {q0: 0}}\n");
    hs_error err;
    hs_model *m = load(text, NULL, &err);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(err.code, HS_EXIT_MODEL);
    ck_assert_int_eq(err.line, 1);
    ck_assert_msg(strstr(err.msg, "too many coordinates (100001; the limit is 100000"), "%s",
                  err.msg);

    len = 0;                        /* 5001 generalized coordinates */
    PUT("coordinates: [");
    for (int i = 0; i < 5001; i++)
        PUT("%sq%d", i ? ", " : "", i);
    PUT("]\nlagrangian: q0'^2/2\ninitial: {q: {");
    for (int i = 0; i < 5001; i++)
        PUT("%sq%d: 0", i ? ", " : "", i);
    PUT("}}\n");
    m = load(text, NULL, &err);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(err.code, HS_EXIT_MODEL);
    ck_assert_int_eq(err.line, 1);
    ck_assert_msg(strstr(err.msg, "too many coordinates for a model in generalized "
                         "coordinates (5001; the limit is 5000"), "%s", err.msg);

    len = 0;                        /* 5001 Cartesian coordinates with a mass matrix */
    PUT("coordinates: [");
    for (int i = 0; i < 5001; i++)
        PUT("%sq%d", i ? ", " : "", i);
    PUT("]\nmass: [[1]]\ninitial: {q: {");
    for (int i = 0; i < 5001; i++)
        PUT("%sq%d: 0", i ? ", " : "", i);
    PUT("}}\n");
    m = load(text, NULL, &err);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(err.code, HS_EXIT_MODEL);
    ck_assert_int_eq(err.line, 2);
    ck_assert_int_eq(err.column, 7);
    ck_assert_msg(strstr(err.msg, "a mass matrix of 5001 coordinates (the limit is 5000"),
                  "%s", err.msg);

    len = 0;                        /* n = 2500, k = 4001 with a contact: k*n > 10^7 */
    PUT("coordinates: [");
    for (int i = 0; i < 2500; i++)
        PUT("%sq%d", i ? ", " : "", i);
    PUT("]\nmass: [");
    for (int i = 0; i < 2500; i++)
        PUT("%s1", i ? ", " : "");
    PUT("]\nconstraints:\n");
    for (int i = 0; i < 4000; i++)
        PUT("  - q%d\n", i % 2500);
    PUT("contacts:\n  floor: {gap: q0 + 1, restitution: 0}\n");
    PUT("initial: {q: {");
    for (int i = 0; i < 2500; i++)
        PUT("%sq%d: 0", i ? ", " : "", i);
    PUT("}}\n");
#undef PUT
    ck_assert_uint_lt(len, cap - 1);
    m = load(text, NULL, &err);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(err.code, HS_EXIT_MODEL);
    ck_assert_msg(strstr(err.msg, "model too large: 2500 coordinates and 4001 constraints"),
                  "%s", err.msg);
    free(text);
}
END_TEST

/* ---- hs_ytree_scalar_pos ---- */

static const char POS_DOC[] =
    "plain: abc + def\n"                 /* 1 */
    "single: 'it''s + zz'\n"             /* 2 */
    "double: \"ab + \\\"q\\\" + zz\"\n"  /* 3 */
    "literal: |\n"                       /* 4 */
    "  x +\n"                            /* 5 */
    "    yy + zz\n"                      /* 6 */
    "folded: >\n"                        /* 7 */
    "  x +\n"                            /* 8 */
    "  y + zz\n"                         /* 9 */
    "multi: x +\n"                       /* 10 */
    "  y + zz\n"                         /* 11 */
    "flow: {a: 1, b: x + zz}\n"          /* 12 */
    "dq_escape: \"\\t + zz\"\n"          /* 13 */
    "seq: [1, 2 + zz]\n"                 /* 14 */
    "sq_multi: 'x +\n"                   /* 15 */
    "  y + zz'\n";                       /* 16 */

typedef struct pos_case {
    const char *key;           /* top-level key; "flow" -> its 'b', "seq" -> item 2 */
    const char *find;          /* the offset is that of this text in the value */
    int line, col;
    int xfail;
} pos_case;

static const pos_case pos[] = {
    {"plain", "abc", 1, 8, 0},
    {"plain", "def", 1, 14, 0},
    {"single", "it", 2, 10, 0},
    {"single", "zz", 2, 18, 0},
    {"double", "ab", 3, 10, 0},
    {"double", "zz", 3, 23, 0},
    {"literal", "x", 5, 3, 0},
    {"literal", "yy", 6, 5, 0},
    {"literal", "zz", 6, 10, 0},
    {"folded", "x", 8, 3, 0},
    {"folded", "zz", 9, 7, 0},
    {"multi", "x", 10, 8, 0},
    {"multi", "zz", 11, 7, 0},
    {"flow", "zz", 12, 21, 0},
    {"dq_escape", "zz", 13, 18, 0},   /* "\t" is two bytes in the file */
    {"seq", "zz", 14, 14, 0},
    {"sq_multi", "zz", 16, 7, 0},
};

static yaml_node_t *value_of(hs_ytree *y, const char *key)
{
    yaml_node_t *root = hs_ytree_root(y);
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        const char *k = hs_ytree_str(hs_ytree_node(y, p->key));
        if (k && strcmp(k, key) == 0)
            return hs_ytree_node(y, p->value);
    }
    return NULL;
}

START_TEST(test_scalar_pos)
{
    const pos_case *c = &pos[_i];
    hs_ytree y;
    hs_error err;
    hs_error_init(&err);
    ck_assert_int_eq(hs_ytree_load_string(&y, "pos.yaml", POS_DOC, strlen(POS_DOC), &err), 0);
    yaml_node_t *n = value_of(&y, c->key);
    ck_assert_ptr_nonnull(n);
    if (n->type == YAML_MAPPING_NODE)       /* flow: {a: 1, b: ...} -> b */
        n = hs_ytree_node(&y, n->data.mapping.pairs.start[1].value);
    else if (n->type == YAML_SEQUENCE_NODE) /* seq: [1, ...] -> item 2 */
        n = hs_ytree_node(&y, n->data.sequence.items.start[1]);
    const char *v = hs_ytree_str(n);
    ck_assert_ptr_nonnull(v);
    const char *at = strstr(v, c->find);
    ck_assert_msg(at, "'%s' not in '%s'", c->find, v);
    int line = 0, col = 0;
    hs_ytree_scalar_pos(&y, n, (size_t)(at - v), &line, &col);
    char got[200];
    snprintf(got, sizeof got, "%s '%s' at %d:%d, want %d:%d", c->key, c->find, line, col, c->line,
             c->col);
    int ok = line == c->line && col == c->col;
    /* the error helper places the same position */
    hs_error e2;
    hs_error_init(&e2);
    hs_ytree_error_in(&y, &e2, n, (size_t)(at - v), "x");
    ok = ok && e2.line == line && e2.column == col && strcmp(e2.file, "pos.yaml") == 0;
    hs_ytree_free(&y);
    if (c->xfail) {
        report_xfail(c->key, ok, got);
        return;
    }
    ck_assert_msg(ok, "%s", got);
}
END_TEST

START_TEST(test_scalar_pos_clamps)
{
    hs_ytree y;
    hs_error err;
    hs_error_init(&err);
    ck_assert_int_eq(hs_ytree_load_string(&y, "pos.yaml", POS_DOC, strlen(POS_DOC), &err), 0);
    yaml_node_t *n = value_of(&y, "plain");
    int line = 0, col = 0;
    hs_ytree_scalar_pos(&y, n, 1000, &line, &col);   /* past the end: the end */
    ck_assert_int_eq(line, 1);
    ck_assert_int_eq(col, 17);
    hs_ytree_free(&y);
}
END_TEST

static Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("loader");
    tcase_set_timeout(tc, 60);
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
    tcase_add_loop_test(tc, test_bad, 0, N(bad));
    tcase_add_test(tc, test_deep_nesting);
    tcase_add_test(tc, test_size_limits);
    suite_add_tcase(s, tc);
    TCase *tp = tcase_create("ytree");
    tcase_add_loop_test(tp, test_scalar_pos, 0, N(pos));
    tcase_add_test(tp, test_scalar_pos_clamps);
    suite_add_tcase(s, tp);
    return s;
}

int main(void)
{
    gsl_set_error_handler(hs_check_gsl_reached);   /* reached: a bug (check_main.h) */
    SRunner *sr = srunner_create(model_suite());
    /* XFAIL/XPASS lines come from the tests themselves: keep one process
     * order-stable output by not buffering stdout */
    setvbuf(stdout, NULL, _IONBF, 0);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
