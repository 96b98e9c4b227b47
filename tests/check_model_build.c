/* Tests of src/model/ on good models: what the loader builds (parameters
 * in any order, derived parameters and --set, the settings and their
 * overrides, defines, list constraints, forces maps, full mass matrices,
 * sparse Jacobian rows, the Lagrangian and the embedding, initial values),
 * every shipped model loading, and the one quantity table (every name it
 * makes means one thing, the columns, the man page's reserved names).
 * Broken models are check_model.c's. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "model/model.h"
#include "model_fixture.h"

/* ---- positive tests ---- */

static double param(const hs_model *m, const char *name)
{
    for (size_t i = 0; i < m->npar; i++)
        if (strcmp(m->pname[i], name) == 0)
            return m->pval[i];
    ck_abort_msg("no parameter '%s'", name);
    return NAN;
}

/* Evaluate a symbolic kernel at (t, q, v) with the model's parameter values. */
static double eval_at(const hs_model *m, const hs_node *e, double t, const double *q,
                      const double *v)
{
    int ns = hs_dag_nsymbols(m->dag);
    double *in = calloc((size_t)ns + 1, sizeof *in);
    ck_assert_ptr_nonnull(in);
    in[m->sym_t] = t;
    for (size_t i = 0; i < m->n; i++) {
        in[m->sym_q[i]] = q ? q[i] : 0;
        in[m->sym_v[i]] = v ? v[i] : 0;
    }
    for (size_t i = 0; i < m->npar; i++)
        in[m->sym_p[i]] = m->pval[i];
    double r = hs_eval_tree(e, in);
    free(in);
    return r;
}

static hs_model *load_ok(const char *text, const hs_overrides *ov)
{
    hs_error err;
    hs_model *m = load(text, ov, &err);
    ck_assert_msg(m != NULL, "load failed: %d:%d: %s", err.line, err.column, err.msg);
    return m;
}

START_TEST(test_parameters_any_order)
{
    hs_model *m = load_ok("parameters:\n  I: m*l^2\n  m: 2\n  l: 3\n  g: I/m + 1\n" ONE, NULL);
    ck_assert_uint_eq(m->npar, 4);
    ck_assert_str_eq(m->pname[0], "I"); /* file order is kept */
    ck_assert_double_eq(param(m, "I"), 18);
    ck_assert_double_eq(param(m, "g"), 10);
    hs_model_free(m);
}
END_TEST

START_TEST(test_set_recomputes_derived)
{
    hs_overrides ov;
    hs_overrides_init(&ov);
    const char *names[] = {"m"};
    double vals[] = {4};
    ov.nset = 1;
    ov.set_name = names;
    ov.set_value = vals;
    hs_model *m = load_ok("parameters:\n  I: m*l^2\n  m: 2\n  l: 3\ncoordinates: [x]\nmass: [m]\n"
                "initial: {q: {x: I}}\n", &ov);
    ck_assert_double_eq(param(m, "m"), 4);
    ck_assert_double_eq(param(m, "I"), 36);
    ck_assert_double_eq(m->q0[0], 36);   /* initial values see the new value */
    ck_assert_int_eq(m->mass_kind, HS_MASS_CONST_DIAG);
    ck_assert_double_eq(m->Mconst[0], 4);
    hs_model_free(m);
}
END_TEST

START_TEST(test_set_unknown_parameter)
{
    hs_overrides ov;
    hs_overrides_init(&ov);
    const char *names[] = {"nosuch"};
    double vals[] = {1};
    ov.nset = 1;
    ov.set_name = names;
    ov.set_value = vals;
    hs_error err;
    hs_model *m = load(BASE, &ov, &err);
    ck_assert_ptr_null(m);
    ck_assert_int_eq(err.code, HS_EXIT_USAGE);
    ck_assert_msg(strstr(err.msg, "no parameter 'nosuch'"), "%s", err.msg);
}
END_TEST

START_TEST(test_overrides_settings)
{
    hs_model *m = load_ok(BASE, NULL);
    ck_assert_double_eq(m->set.t_end, 1);
    ck_assert(isnan(m->set.dt));
    ck_assert_str_eq(m->set.method, "");        /* the stepper table's default */
    ck_assert_double_eq(m->set.rtol, 1e-9);
    ck_assert_double_eq(m->set.atol, 1e-9);
    ck_assert_int_eq(m->set.stabilize, HS_STAB_PROJECTION);
    ck_assert_int_eq(m->set.mode, HS_CONS_PROJECT);
    ck_assert_double_eq(m->set.tol, 1e-10);
    hs_model_free(m);

    hs_overrides ov;
    hs_overrides_init(&ov);
    ov.s.t_end = 5;
    ov.s.dt = 0.5;
    snprintf(ov.s.method, sizeof ov.s.method, "rk4");
    ov.s.mode = HS_CONS_REJECT;
    ov.has_mode = 1;
    m = load_ok(BASE, &ov);
    ck_assert_double_eq(m->set.t_end, 5);
    ck_assert_double_eq(m->set.dt, 0.5);
    ck_assert_str_eq(m->set.method, "rk4");
    ck_assert_int_eq(m->set.mode, HS_CONS_REJECT);
    hs_model_free(m);

    /* expressions: in the file, with the parameters after --set, and on the
     * command line (hs_overrides.num_text), evaluated after the parameters */
    m = load_ok(L1_5 L6_7 ROD INIT "simulate:\n  t_end: 2*pi/l\n  dt: pi/(40*l)\n  step: "
                "l*1e-3\n  rtol: 10^-(9 + l)\n  alpha: 2*l\n", NULL);
    ck_assert_double_eq_tol(m->set.t_end, 2 * 3.141592653589793, 1e-15);
    ck_assert_double_eq_tol(m->set.dt, 3.141592653589793 / 40, 1e-16);
    ck_assert_double_eq(m->set.step, 1e-3);
    ck_assert_double_eq_tol(m->set.rtol, 1e-10, 1e-25);
    ck_assert_double_eq(m->set.alpha, 2);
    hs_model_free(m);
    const char *names[1] = { "l" };
    const double vals[1] = { 2 };
    hs_overrides_init(&ov);
    ov.nset = 1;
    ov.set_name = names;
    ov.set_value = vals;
    m = load_ok(L1_5 L6_7 ROD "initial:\n  q: {x: 1.2, y: -1.6}\n" "simulate:\n  t_end: "
                "2*pi/l\n", &ov);
    ck_assert_double_eq_tol(m->set.t_end, 3.141592653589793, 1e-15);
    hs_model_free(m);
    ov.num_text[HS_NUM_T_END] = "4*l";
    ov.num_text[HS_NUM_STEP] = "l/1000";
    m = load_ok(L1_5 L6_7 ROD "initial:\n  q: {x: 1.2, y: -1.6}\n" SIM, &ov);
    ck_assert_double_eq(m->set.t_end, 8);
    ck_assert_double_eq(m->set.step, 0.002);
    ck_assert_int_lt(m->set.step_pos.src, 0);
    hs_model_free(m);
    /* a bad one: exit 1, shown on the option with a caret under the place */
    ov.num_text[HS_NUM_STEP] = "l/(10*m";
    hs_error err;
    ck_assert_ptr_null(load(BASE, &ov, &err));
    ck_assert_int_eq(err.code, HS_EXIT_USAGE);
    ck_assert_msg(strstr(err.msg, "step l/(10*m: ')' expected"), "%s", err.msg);
    ov.num_text[HS_NUM_STEP] = "-l";
    ck_assert_ptr_null(load(BASE, &ov, &err));
    ck_assert_int_eq(err.code, HS_EXIT_USAGE);
    ck_assert_msg(strstr(err.msg, "step -l: the value is -2; step wants a positive number"),
                  "%s", err.msg);
    /* named as the caller names it (the command line: --step) */
    ov.num_option[HS_NUM_STEP] = "--step";
    ck_assert_ptr_null(load(BASE, &ov, &err));
    ck_assert_msg(strstr(err.msg, "--step -l: the value is -2; --step wants a positive number"),
                  "%s", err.msg);
    ov.num_option[HS_NUM_STEP] = NULL;

    /* no t_end anywhere: the loader accepts it (the run then exits 1) */
    m = load_ok(L1_5 L6_7 ROD INIT, NULL);
    ck_assert(isnan(m->set.t_end));
    hs_model_free(m);
}
END_TEST

START_TEST(test_defines_in_constraints)
{
    /* defines in any order, used by a constraint and an output */
    hs_model *m = load_ok(L1_5 L6_7 "  rod: r2 - l^2\n" INIT SIM
                          "define:\n  r2: xx + yy\n  xx: x^2\n  yy: y^2\n"
                          "outputs:\n  r: sqrt(r2)\n", NULL);
    ck_assert_uint_eq(m->k, 1);
    double q[] = {0.6, -0.8}, q2[] = {1, 1};
    ck_assert(fabs(eval_at(m, m->G[0], 0, q, NULL)) < 1e-15);
    ck_assert_double_eq(eval_at(m, m->G[0], 0, q2, NULL), 1);
    ck_assert_double_eq(eval_at(m, hs_model_G_q(m, 0, 0), 0, q2, NULL), 2);   /* d/dx */
    ck_assert_uint_eq(m->nout, 1);
    ck_assert_double_eq(eval_at(m, m->out[0], 0, q2, NULL), sqrt(2));
    hs_model_free(m);
}
END_TEST

START_TEST(test_list_constraints)
{
    hs_model *m = load_ok("coordinates: [x, y, z]\nmass: [1, 1, 1]\n"
                          "constraints:\n  - x^2 + y^2 + z^2 - 1\n  - z - t\n"
                          "initial: {q: {x: 1, y: 0, z: 0}, v: {z: 1}}\n", NULL);
    ck_assert_uint_eq(m->k, 2);
    ck_assert_str_eq(m->cname[0], "1");
    ck_assert_str_eq(m->cname[1], "2");
    double q[] = {0, 0, 0.5};
    ck_assert_double_eq(eval_at(m, m->G_t[1], 0.25, q, NULL), -1);
    ck_assert_double_eq(eval_at(m, m->G[1], 0.25, q, NULL), 0.25);
    ck_assert_double_eq(m->v0[2], 1);
    ck_assert_double_eq(m->v0[0], 0);      /* missing velocities are 0 */
    hs_model_free(m);
    /* numeric names in map form are allowed too */
    m = load_ok("coordinates: [x]\nmass: [1]\nconstraints:\n  1: x - 1\ninitial: {q: {x: 1}}\n",
                NULL);
    ck_assert_str_eq(m->cname[0], "1");
    hs_model_free(m);
}
END_TEST

START_TEST(test_forces_map_missing_zero)
{
    hs_model *m = load_ok("coordinates: [x, y]\nmass: [1, 1]\nforces: {y: -3*y'}\n"
                          "initial: {q: {x: 0, y: 0}}\n", NULL);
    double q[] = {0, 0}, v[] = {5, 2};
    ck_assert_double_eq(eval_at(m, m->Q[0], 0, q, v), 0);
    ck_assert_double_eq(eval_at(m, m->Q[1], 0, q, v), -6);
    ck_assert_int_eq(m->has_nc_forces, 1);
    ck_assert_double_eq(eval_at(m, m->P_nc, 0, q, v), -12);   /* F . v */
    hs_model_free(m);
    /* list form, with a potential: Q = F - grad U */
    m = load_ok("coordinates: [x, y]\nmass: [1, 1]\nforces: [1, t]\npotential: 2*x + y^2\n"
                "initial: {q: {x: 0, y: 0}}\n", NULL);
    double q2[] = {0, 3};
    ck_assert_double_eq(eval_at(m, m->Q[0], 0, q2, NULL), -1);
    ck_assert_double_eq(eval_at(m, m->Q[1], 7, q2, NULL), 1);
    hs_model_free(m);
}
END_TEST

START_TEST(test_mass_forms)
{
    hs_model *m = load_ok("coordinates: [x, y]\nmass: [[2, 0.5], [0.5, 1]]\n"
                          "initial: {q: {x: 0, y: 0}}\n", NULL);
    ck_assert_int_eq(m->mass_kind, HS_MASS_FULL);
    ck_assert_double_eq(eval_at(m, m->M[1], 0, NULL, NULL), 0.5);
    ck_assert_double_eq(eval_at(m, m->M[2], 0, NULL, NULL), 0.5);
    ck_assert_double_eq(eval_at(m, m->M[3], 0, NULL, NULL), 1);
    ck_assert_ptr_null(m->M_diag);
    ck_assert_ptr_eq(hs_model_M(m, 1, 0), m->M[2]);
    hs_model_free(m);
    m = load_ok("coordinates: [x, y]\nmass: [[1, 0], [0, 2]]\ninitial: {q: {x: 0, y: 0}}\n", NULL);
    ck_assert_int_eq(m->mass_kind, HS_MASS_CONST_DIAG);   /* a diagonal matrix */
    hs_model_free(m);
    m = load_ok("coordinates: [x, y]\nmass: [1, 1 + x^2]\ninitial: {q: {x: 0, y: 0}}\n", NULL);
    ck_assert_int_eq(m->mass_kind, HS_MASS_DIAG);
    double q[] = {2, 0};
    ck_assert_double_eq(eval_at(m, hs_model_M(m, 1, 1), 0, q, NULL), 5);
    /* a diagonal list keeps its n entries alone (no n x n array) */
    ck_assert_ptr_null(m->M);
    ck_assert_ptr_nonnull(m->M_diag);
    ck_assert_ptr_null(hs_model_M(m, 0, 1));
    ck_assert_ptr_eq(hs_model_M(m, 1, 1), m->M_diag[1]);
    hs_model_free(m);
}
END_TEST

START_TEST(test_jacobian_sparse_rows)
{
    /* G_q by rows: the columns each constraint uses, increasing; nothing
     * stored for the others */
    hs_model *m = load_ok("coordinates: [a, b, c, d]\nmass: [1, 1, 1, 1]\n"
                          "constraints:\n  r1: d*b - 1\n  r2: c - t\n  r3: a^2 + d^2 - 2\n"
                          "initial: {q: {a: 1, b: 1, c: 0, d: 1}, v: {c: 1}}\n", NULL);
    ck_assert_uint_eq(m->k, 3);
    static const size_t start[] = { 0, 2, 3, 5 }, col[] = { 1, 3, 2, 0, 3 };
    for (size_t i = 0; i <= 3; i++)
        ck_assert_uint_eq(m->G_q_start[i], start[i]);
    for (size_t z = 0; z < 5; z++)
        ck_assert_uint_eq(m->G_q_col[z], col[z]);
    double q[] = {3, 5, 7, 11};
    ck_assert_double_eq(eval_at(m, hs_model_G_q(m, 0, 1), 0, q, NULL), 11);   /* d(db)/db */
    ck_assert_double_eq(eval_at(m, hs_model_G_q(m, 0, 3), 0, q, NULL), 5);
    ck_assert_double_eq(eval_at(m, hs_model_G_q(m, 1, 2), 0, q, NULL), 1);
    ck_assert_double_eq(eval_at(m, hs_model_G_q(m, 2, 0), 0, q, NULL), 6);
    ck_assert_double_eq(eval_at(m, hs_model_G_q(m, 2, 3), 0, q, NULL), 22);
    for (size_t j = 0; j < 4; j++)      /* the others: structurally 0 */
        ck_assert(hs_model_G_q(m, 1, j) == NULL || j == 2);
    ck_assert_ptr_null(hs_model_G_q(m, 0, 0));
    ck_assert_ptr_null(hs_model_G_q(m, 0, 2));
    ck_assert_ptr_null(hs_model_G_q(m, 2, 1));
    hs_model_free(m);
}
END_TEST

START_TEST(test_lagrangian_and_embedding)
{
    /* the same pendulum three ways: M = m l^2 = 8 for m = 2, l = 2 */
    hs_model *m = load_ok("parameters: {m: 2, l: 2, g: 10}\ncoordinates: [th]\n"
                          "kinetic: 0.5*m*l^2*th'^2\npotential: -m*g*l*cos(th)\n"
                          "initial: {q: {th: 0.5}}\n", NULL);
    ck_assert_int_eq(m->form, HS_FORM_LAGRANGIAN);
    double q[] = {0.5};
    ck_assert_double_eq(eval_at(m, m->M[0], 0, q, NULL), 8);
    ck_assert(fabs(eval_at(m, m->Q[0], 0, q, NULL) + 40 * sin(0.5)) < 1e-12);
    hs_model_free(m);
    m = load_ok("parameters: {m: 2, l: 2, g: 10}\ncoordinates: [th]\n"
                "lagrangian: 0.5*m*l^2*th'^2 + m*g*l*cos(th)\n"
                "initial: {q: {th: 0.5}}\n", NULL);
    ck_assert_double_eq(eval_at(m, m->M[0], 0, q, NULL), 8);
    ck_assert(fabs(eval_at(m, m->U, 0, q, NULL) + 40 * cos(0.5)) < 1e-12);
    hs_model_free(m);
    m = load_ok("parameters: {m: 2, l: 2, g: 10}\ncoordinates: [th]\n"
                "embedding: {x: l*sin(th), y: -l*cos(th)}\nmass: [m, m]\npotential: m*g*y\n"
                "initial: {q: {th: 0.5}}\n", NULL);
    ck_assert_int_eq(m->form, HS_FORM_EMBEDDING);
    ck_assert_uint_eq(m->namb, 2);
    ck_assert_str_eq(m->ambname[1], "y");
    ck_assert(fabs(eval_at(m, m->M[0], 0, q, NULL) - 8) < 1e-12);
    ck_assert(fabs(eval_at(m, m->Q[0], 0, q, NULL) + 40 * sin(0.5)) < 1e-12);
    hs_model_free(m);
}
END_TEST

START_TEST(test_initial_values)
{
    hs_model *m = load_ok("parameters: {a: 2}\ncoordinates: [x, y]\nmass: [1, 1]\n"
                          "initial:\n  t: a/4\n  q: [a, -a]\n  v: {y: 3*a}\n", NULL);
    ck_assert_double_eq(m->t0, 0.5);
    ck_assert_double_eq(m->q0[0], 2);
    ck_assert_double_eq(m->q0[1], -2);
    ck_assert_double_eq(m->v0[0], 0);
    ck_assert_double_eq(m->v0[1], 6);
    hs_model_free(m);
}
END_TEST

START_TEST(test_models_load)
{
    static const char *const files[] = {
        "models/pendulum.yaml", "models/double_pendulum.yaml", "models/spherical_pendulum.yaml",
        "models/rotating_hoop.yaml", "models/slider_crank.yaml",
    };
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        hs_error err;
        hs_error_init(&err);
        hs_model *m = hs_model_load(files[i], NULL, &err);
        ck_assert_msg(m != NULL, "%s: %s:%d:%d: %s", files[i], err.file, err.line, err.column,
                      err.msg);
        ck_assert_str_eq(m->file, files[i]);
        hs_model_free(m);
    }
    hs_error err;
    hs_error_init(&err);
    ck_assert_ptr_null(hs_model_load("models/no-such-file.yaml", NULL, &err));
    ck_assert_int_eq(err.code, HS_EXIT_MODEL);
    ck_assert_msg(strstr(err.msg, "cannot open model file"), "%s", err.msg);
    hs_model_free(NULL);
}
END_TEST

/* ---- one quantity table: every name it makes means one thing ---- */

#define QBASE "coordinates: [th, r]\nembedding:\n  px: r*sin(th)\n  py: -r*cos(th)\n"     \
              "mass: [1, 1]\nconstraints:\n  len: r - 1\ninitial: {q: {th: 0.1, r: 1}}\n" \
              "outputs:\n  ang: th\n"            /* lines 1-10 */

/* Each name of each quantity of the table (the per-model ones, and those
 * it makes from this model's coordinates and constraint), taken by a
 * define, a parameter or an output: refused at that name (line 11 or 12,
 * column 3), the message naming the quantity. */
START_TEST(test_quantity_names)
{
    hs_error err;
    hs_model *m = load(QBASE, NULL, &err);
    ck_assert_msg(m, "%s", err.msg);
    size_t tried = 0;
    for (size_t e = 0; e < HS_NQUANTITIES; e++) {
        const hs_quantity *q = &hs_quantities[e];
        ck_assert_int_eq(q->id, (int)e);            /* the table in enum order */
        int bare = q->per != HS_PER_MODEL && !q->prefix[0] && !q->suffix[0];
        for (size_t i = 0; i < hs_quantity_count(m, q) && !bare; i++) {
            char name[64];
            hs_quantity_name(m, q, i, name, sizeof name);
            if (strchr(name, '\''))
                continue;                           /* x'': no entry can be named so */
            static const char *const place[] = { "define:\n  %s: 1\n", "parameters:\n  %s: 1\n",
                                                 "  %s: th\n" };
            for (int p = 0; p < 3; p++) {
                char text[512], entry[128];
                snprintf(entry, sizeof entry, place[p], name);
                snprintf(text, sizeof text, "%s%s", QBASE, entry);
                hs_model *mb = load(text, NULL, &err);
                ck_assert_msg(!mb, "%s as %s: loaded", name, place[p]);
                ck_assert_int_eq(err.code, HS_EXIT_MODEL);
                ck_assert_msg(strstr(err.msg, q->what), "%s: '%s' does not name '%s'", name,
                              err.msg, q->what);
                ck_assert_msg(err.line == (p == 2 ? 11 : 12) && err.column == 3,
                              "%s: at %d:%d", name, err.line, err.column);
                tried++;
            }
        }
    }
    ck_assert_uint_eq(tried, 3 * 18);        /* 13 per model, 3 per constraint, 2 R_q */
    hs_model_free(m);
}
END_TEST

/* The columns are the table's COLUMN entries, in its order. */
START_TEST(test_quantity_columns)
{
    hs_error err;
    hs_model *m = load(QBASE, NULL, &err);
    ck_assert_msg(m, "%s", err.msg);
    ck_assert_ptr_eq(hs_quantity_model("H", 1), &hs_quantities[HS_QTY_H]);
    ck_assert_ptr_null(hs_quantity_model("lambda_len", 10));
    char name[64];
    hs_quantity_name(m, &hs_quantities[HS_QTY_LAMBDA], 0, name, sizeof name);
    ck_assert_str_eq(name, "lambda_len");
    hs_quantity_name(m, &hs_quantities[HS_QTY_A], 1, name, sizeof name);
    ck_assert_str_eq(name, "r''");
    hs_quantity_name(m, &hs_quantities[HS_QTY_AMBV], 1, name, sizeof name);
    ck_assert_str_eq(name, "py'");
    ck_assert_uint_eq(hs_quantity_count(m, &hs_quantities[HS_QTY_OUT]), 1);
    hs_model_free(m);
}
END_TEST

/* holosim-model(5) lists every per-model quantity among the reserved
 * names (the paragraph from "Reserved" to the next section). */
START_TEST(test_quantity_man_page)
{
    FILE *f = fopen("man/holosim-model.5", "r");
    ck_assert_msg(f, "man/holosim-model.5 (run from the repository)");
    static char page[1 << 17];
    size_t len = fread(page, 1, sizeof page - 1, f);
    fclose(f);
    page[len] = '\0';
    char *from = strstr(page, "Reserved (");
    ck_assert_ptr_nonnull(from);
    char *to = strstr(from, "\n.SH ");
    ck_assert_ptr_nonnull(to);
    *to = '\0';
    for (size_t e = 0; e < HS_NQUANTITIES; e++) {
        const hs_quantity *q = &hs_quantities[e];
        if (q->per != HS_PER_MODEL)
            continue;
        char word[40];
        snprintf(word, sizeof word, " %s ", q->prefix);     /* as .BR a ", " b */
        char *at = strstr(from, word);
        if (!at) {
            snprintf(word, sizeof word, "\n.BR %s ", q->prefix);
            at = strstr(from, word);
        }
        ck_assert_msg(at, "the reserved names of holosim-model(5) lack '%s'", q->prefix);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("model_build");
    TCase *tc = tcase_create("loader");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_parameters_any_order);
    tcase_add_test(tc, test_set_recomputes_derived);
    tcase_add_test(tc, test_set_unknown_parameter);
    tcase_add_test(tc, test_overrides_settings);
    tcase_add_test(tc, test_defines_in_constraints);
    tcase_add_test(tc, test_list_constraints);
    tcase_add_test(tc, test_forces_map_missing_zero);
    tcase_add_test(tc, test_mass_forms);
    tcase_add_test(tc, test_jacobian_sparse_rows);
    tcase_add_test(tc, test_lagrangian_and_embedding);
    tcase_add_test(tc, test_initial_values);
    tcase_add_test(tc, test_models_load);
    tcase_add_test(tc, test_quantity_names);
    tcase_add_test(tc, test_quantity_columns);
    tcase_add_test(tc, test_quantity_man_page);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
