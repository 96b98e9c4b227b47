/* The three forms of the model format (Cartesian, Lagrangian, embedding)
 * describe the same motion: the same system written in each must give the
 * same trajectories, and the embedding form must build exactly the reduced
 * d'Alembert equations (checked here against finite differences of the
 * model's own embedding X(t, q)). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "check_main.h"
#include "dynamics/dynamics.h"
#include "physics_util.h"

/* ---- helpers ---- */

static void run_file(const char *file, const char *columns, double t_end, pu_result *r)
{
    pu_args a = pu_defaults();
    a.path = PU_MODEL(file);
    a.columns = columns;
    a.t_end = t_end;
    pu_run_ok(&a, r);
}

static void assert_same(const pu_table *a, const char *ca, const pu_table *b,
                        const char *cb, double tol, const char *what)
{
    double d = pu_maxdiff(a, ca, b, cb);
    ck_assert_msg(d < tol, "%s: max |%s - %s| = %.3g (tolerance %g)", what, ca, cb, d, tol);
}

/* ---- the planar pendulum three ways ---- */

/* Embedding form in theta, inline: the ambient point (x, y) = X(theta). */
static const char pendulum_embedding[] =
    "name: planar pendulum (embedding)\n"
    "parameters: {m: 1.0, l: 1.0, g: 9.81, theta0: 0.5}\n"
    "coordinates: [theta]\n"
    "embedding: {x: l*sin(theta), y: -l*cos(theta)}\n"
    "mass: [m, m]\n"
    "potential: m*g*y\n"
    "initial: {q: {theta: theta0}}\n"
    "simulate: {t_end: 10, dt: 0.01, rtol: 1e-10, atol: 1e-10}\n";

/* x(t), y(t) agree to 1e-8 over 10 s between models/pendulum.yaml
 * (Cartesian), models/pendulum_angle.yaml (Lagrangian) and the embedding
 * above; so do E and the angle. */
START_TEST(pendulum_three_forms)
{
    pu_result rc, rl, re;
    run_file("pendulum.yaml", NULL, 10, &rc);
    run_file("pendulum_angle.yaml", NULL, 10, &rl);
    pu_args a = pu_defaults();
    a.text = pendulum_embedding;
    a.columns = "t,theta,theta',E,x,y";
    pu_run_ok(&a, &re);
    ck_assert_uint_eq(rc.tab.nrow, 1001);
    assert_same(&rc.tab, "x", &rl.tab, "x", 1e-8, "Cartesian vs Lagrangian");
    assert_same(&rc.tab, "y", &rl.tab, "y", 1e-8, "Cartesian vs Lagrangian");
    assert_same(&rc.tab, "x", &re.tab, "x", 1e-8, "Cartesian vs embedding");
    assert_same(&rc.tab, "y", &re.tab, "y", 1e-8, "Cartesian vs embedding");
    assert_same(&rl.tab, "theta", &re.tab, "theta", 1e-8, "Lagrangian vs embedding");
    assert_same(&rc.tab, "theta", &rl.tab, "theta", 1e-8, "Cartesian vs Lagrangian");
    assert_same(&rc.tab, "E", &rl.tab, "E", 1e-8, "Cartesian vs Lagrangian");
    assert_same(&rc.tab, "E", &re.tab, "E", 1e-8, "Cartesian vs embedding");
    pu_result_free(&rc);
    pu_result_free(&rl);
    pu_result_free(&re);
}
END_TEST

/* The double pendulum: Cartesian (4 coordinates, 2 rods) vs angles
 * (Lagrangian, full q-dependent metric), positions to 1e-7 over 5 s. */
START_TEST(double_pendulum_two_forms)
{
    pu_result rc, rl;
    run_file("double_pendulum.yaml", NULL, 5, &rc);
    run_file("double_pendulum_angles.yaml", NULL, 5, &rl);
    ck_assert_uint_eq(rc.tab.nrow, 501);
    static const char *const xy[] = { "x1", "y1", "x2", "y2" };
    for (size_t j = 0; j < 4; j++)
        assert_same(&rc.tab, xy[j], &rl.tab, xy[j], 1e-7, "double pendulum");
    assert_same(&rc.tab, "theta1", &rl.tab, "theta1", 1e-7, "double pendulum");
    assert_same(&rc.tab, "E", &rl.tab, "E", 1e-7, "double pendulum");
    pu_result_free(&rc);
    pu_result_free(&rl);
}
END_TEST

/* The rotating hoop: Cartesian (3 coordinates, a fixed sphere and a
 * turning plane) vs one angle in a time-dependent embedding
 * (models/hoop_angle.yaml): the same bead trajectory x, y, z to 1e-8 over
 * 10 s, and the same energy E (both in the fixed frame: the embedding's T
 * comes from the ambient velocities).  The Jacobi integral (the model's
 * output `jacobi`, and the H column) is conserved. */
START_TEST(hoop_two_forms)
{
    pu_result rc, re;
    run_file("rotating_hoop.yaml", "t,x,y,z,theta,E", 10, &rc);
    run_file("hoop_angle.yaml", "t,x,y,z,theta,jacobi,E,H", 10, &re);
    ck_assert_uint_eq(rc.tab.nrow, 1001);
    static const char *const xyz[] = { "x", "y", "z", "theta", "E" };
    for (size_t j = 0; j < 5; j++)
        assert_same(&rc.tab, xyz[j], &re.tab, xyz[j], 1e-8, "hoop");
    assert_same(&re.tab, "H", &re.tab, "jacobi", 1e-12, "H column and the model's jacobi");
    size_t ij = pu_col(&re.tab, "jacobi");
    double J0 = PU_AT(&re.tab, 0, ij), dJ = 0;
    for (size_t i = 0; i < re.tab.nrow; i++)
        dJ = fmax(dJ, fabs(PU_AT(&re.tab, i, ij) - J0));
    ck_assert_msg(dJ < 1e-8, "Jacobi integral drifts by %.3g", dJ);
    /* the Cartesian E is the Jacobi integral plus m omega^2 rho^2, rho^2 = x^2 + y^2 */
    size_t iE = pu_col(&rc.tab, "E"), ix = pu_col(&rc.tab, "x"), iy = pu_col(&rc.tab, "y");
    for (size_t i = 0; i < rc.tab.nrow; i += 50) {
        double rho2 = pow(PU_AT(&rc.tab, i, ix), 2) + pow(PU_AT(&rc.tab, i, iy), 2);
        ck_assert_double_eq_tol(PU_AT(&rc.tab, i, iE), PU_AT(&re.tab, i, ij) + 25.0 * rho2,
                                1e-7);
    }
    pu_result_free(&rc);
    pu_result_free(&re);
}
END_TEST

/* Rolling disk (Lagrangian form with a constraint): x'' = f/(m + I/a^2) = 1
 * in every row, theta'' = x''/a, x(t) = v0 t + acc t^2 / 2, and the
 * friction lambda_roll does no work: E - E(0) = W_nc = f x. */
START_TEST(rolling_disk_acceleration)
{
    pu_result r;
    run_file("rolling_disk.yaml", "t,x,theta,x',x'',theta'',lambda_roll,E,W_nc,acc_expected",
             5, &r);
    const pu_table *t = &r.tab;
    double m = 2.0, a = 0.5, I = 0.5 * m * a * a, f = 3.0, v0 = 1.0;
    double acc = f / (m + I / (a * a));
    size_t it = pu_col(t, "t"), ix = pu_col(t, "x"), ia = pu_col(t, "x''"),
           ith = pu_col(t, "theta''"), iE = pu_col(t, "E"), iW = pu_col(t, "W_nc"),
           il = pu_col(t, "lambda_roll"), iae = pu_col(t, "acc_expected");
    double E0 = PU_AT(t, 0, iE);
    for (size_t i = 0; i < t->nrow; i++) {
        double tt = PU_AT(t, i, it);
        ck_assert_double_eq_tol(PU_AT(t, i, iae), acc, 1e-15);
        ck_assert_double_eq_tol(PU_AT(t, i, ia), acc, 1e-12);
        ck_assert_double_eq_tol(PU_AT(t, i, ith), acc / a, 1e-12);
        ck_assert_double_eq_tol(PU_AT(t, i, ix), v0 * tt + 0.5 * acc * tt * tt, 1e-9);
        /* m x'' = f + lambda (G_q = (1, -a)): lambda = m acc - f */
        ck_assert_double_eq_tol(PU_AT(t, i, il), m * acc - f, 1e-12);
        ck_assert_double_eq_tol(PU_AT(t, i, iE) - E0, PU_AT(t, i, iW), 1e-8);
        ck_assert_double_eq_tol(PU_AT(t, i, iW), f * PU_AT(t, i, ix), 1e-8);
    }
    pu_result_free(&r);
}
END_TEST

/* ---- the embedding form builds the reduced d'Alembert equations ---- */

/* For x = X(t, q), x' = X_t + DX q', x'' = X_tt + 2 X_tq[q'] + X_qq[q', q']
 * + DX q'', and ambient equations Ma x'' = F (constant Ma), the tangential
 * part DX^T (Ma x'' - F) = 0 reads
 *     M q'' = Q,  M = DX^T Ma DX,
 *     Q = DX^T F - DX^T Ma (X_tt + 2 X_tq[q'] + X_qq[q', q'])
 * with F = forces - grad U at (x, x').  X is read from the model's own
 * ambient outputs and differentiated by central differences. */

typedef struct emb_case {
    const char *what;
    const char *path;      /* model file, or NULL: text */
    const char *text;
    size_t n, na;          /* coordinates, ambient dimension */
    double ma[3];          /* ambient diagonal mass */
    /* ambient force F(t, x, x') including -grad U */
    void (*force)(double t, const double *x, const double *xd, double *F);
    double tmax;
} emb_case;

static void hoop_force(double t, const double *x, const double *xd, double *F)
{
    (void)t, (void)x, (void)xd;
    F[0] = F[1] = 0;
    F[2] = -1.0 * 9.81;          /* m g, potential m*g*z */
}

/* A particle in the plane in polar coordinates (r, phi) of a frame turning
 * at omega and sliding at speed u along x: a time-dependent chart with a
 * non-trivial X_qq, X_tq and X_tt; a spring to the origin (potential) and
 * linear drag (a velocity-dependent ambient force). */
static const char polar_text[] =
    "parameters: {m: 1.7, k: 2.0, c: 0.3, omega: 1.3, u: 0.4}\n"
    "coordinates: [r, phi]\n"
    "embedding:\n"
    "  x: r*cos(phi + omega*t) + u*t\n"
    "  y: r*sin(phi + omega*t)\n"
    "mass: [m, m]\n"
    "potential: 0.5*k*(x^2 + y^2)\n"
    "forces: {x: -c*x', y: -c*y'}\n"
    "initial: {q: {r: 1, phi: 0.2}, v: {r: 0.1, phi: 0.5}}\n"
    "simulate: {t_end: 1}\n";

static void polar_force(double t, const double *x, const double *xd, double *F)
{
    (void)t;
    double k = 2.0, c = 0.3;
    F[0] = -k * x[0] - c * xd[0];
    F[1] = -k * x[1] - c * xd[1];
}

static const emb_case embs[] = {
    { "rotating hoop, time-dependent embedding", "hoop_angle.yaml", NULL, 1, 3, { 1, 1, 1 }, hoop_force, 10 },
    { "polar chart in a turning, sliding frame", NULL, polar_text, 2, 2, { 1.7, 1.7, 0 },
      polar_force, 3 },
};

/* X(t, q) from the model's ambient outputs */
static void emb_X(const hs_model *m, hs_work *w, double t, const double *q, double *X)
{
    double v[4] = { 0, 0, 0, 0 };
    ck_assert_int_eq(hs_dyn_aux(m, w, t, q, v), 0);
    for (size_t a = 0; a < m->namb; a++)
        X[a] = hs_work_aux(w)[m->off_amb + a];
}

/* Central differences of X: first derivatives (h1), second (h2). */
typedef struct jet {
    double X[3], Xt[3], Xtt[3], Xq[2][3], Xtq[2][3], Xqq[2][2][3];
} jet;

static void emb_jet(const hs_model *m, hs_work *w, double t, const double *q, jet *J)
{
    size_t n = m->n, na = m->namb;
    const double h1 = 1e-6, h2 = 1e-4;
    double qq[2], Xp[3], Xm[3], Xpp[3], Xpm[3], Xmp[3], Xmm[3];
    emb_X(m, w, t, q, J->X);
    emb_X(m, w, t + h1, q, Xp);
    emb_X(m, w, t - h1, q, Xm);
    for (size_t a = 0; a < na; a++)
        J->Xt[a] = (Xp[a] - Xm[a]) / (2 * h1);
    emb_X(m, w, t + h2, q, Xp);
    emb_X(m, w, t - h2, q, Xm);
    for (size_t a = 0; a < na; a++)
        J->Xtt[a] = (Xp[a] - 2 * J->X[a] + Xm[a]) / (h2 * h2);
    for (size_t i = 0; i < n; i++) {
        memcpy(qq, q, n * sizeof *q);
        qq[i] = q[i] + h1;
        emb_X(m, w, t, qq, Xp);
        qq[i] = q[i] - h1;
        emb_X(m, w, t, qq, Xm);
        for (size_t a = 0; a < na; a++)
            J->Xq[i][a] = (Xp[a] - Xm[a]) / (2 * h1);
        /* mixed t, q_i */
        qq[i] = q[i] + h2;
        emb_X(m, w, t + h2, qq, Xpp);
        emb_X(m, w, t - h2, qq, Xmp);
        qq[i] = q[i] - h2;
        emb_X(m, w, t + h2, qq, Xpm);
        emb_X(m, w, t - h2, qq, Xmm);
        for (size_t a = 0; a < na; a++)
            J->Xtq[i][a] = (Xpp[a] - Xmp[a] - Xpm[a] + Xmm[a]) / (4 * h2 * h2);
        for (size_t j = 0; j < n; j++) {
            double *pt[4] = { Xpp, Xmp, Xpm, Xmm };   /* (+,+) (-,+) (+,-) (-,-) */
            for (int sg = 0; sg < 4; sg++) {
                memcpy(qq, q, n * sizeof *q);
                qq[i] += (sg & 1) ? -h2 : h2;
                qq[j] += (sg & 2) ? -h2 : h2;
                emb_X(m, w, t, qq, pt[sg]);
            }
            for (size_t a = 0; a < na; a++)
                J->Xqq[i][j][a] = (Xpp[a] - Xmp[a] - Xpm[a] + Xmm[a]) / (4 * h2 * h2);
        }
    }
}

START_TEST(embedding_is_reduced_dalembert)
{
    const emb_case *ec = &embs[_i];
    pu_args args = pu_defaults();
    args.path = ec->path ? PU_MODEL(ec->path) : NULL;
    args.text = ec->text;
    hs_model *m = pu_load(&args);
    ck_assert_int_eq(m->form, HS_FORM_EMBEDDING);
    ck_assert_uint_eq(m->n, ec->n);
    ck_assert_uint_eq(m->namb, ec->na);
    ck_assert_uint_eq(m->k, 0);
    hs_work *w = hs_work_new(m);
    ck_assert_ptr_nonnull(w);
    size_t n = m->n, na = m->namb;
    srand(12345);
    for (int trial = 0; trial < 20; trial++) {
        double t = ec->tmax * rand() / (double)RAND_MAX;
        double q[2], v[2];
        for (size_t i = 0; i < n; i++) {
            q[i] = 0.3 + 2.0 * rand() / (double)RAND_MAX;   /* r > 0, theta off 0 */
            v[i] = -2.0 + 4.0 * rand() / (double)RAND_MAX;
        }
        jet J;
        emb_jet(m, w, t, q, &J);
        /* x' and x'' - DX q'' */
        double xd[3], acc0[3], F[3];
        for (size_t a = 0; a < na; a++) {
            xd[a] = J.Xt[a];
            acc0[a] = J.Xtt[a];
            for (size_t i = 0; i < n; i++) {
                xd[a] += J.Xq[i][a] * v[i];
                acc0[a] += 2 * J.Xtq[i][a] * v[i];
                for (size_t j = 0; j < n; j++)
                    acc0[a] += J.Xqq[i][j][a] * v[i] * v[j];
            }
        }
        ec->force(t, J.X, xd, F);
        double Mref[4], Qref[2], Mgot[4];
        for (size_t i = 0; i < n; i++) {
            Qref[i] = 0;
            for (size_t a = 0; a < na; a++)
                Qref[i] += J.Xq[i][a] * (F[a] - ec->ma[a] * acc0[a]);
            for (size_t j = 0; j < n; j++) {
                Mref[i * n + j] = 0;
                for (size_t a = 0; a < na; a++)
                    Mref[i * n + j] += J.Xq[i][a] * ec->ma[a] * J.Xq[j][a];
            }
        }
        ck_assert_int_eq(hs_dyn_mass(m, w, t, q, v, Mgot), 0);
        ck_assert_int_eq(hs_dyn_accel(m, w, t, q, v, NULL, NULL), 0);
        const double *Qgot = hs_work_Q(m, w);
        double scaleM = 0, scaleQ = 1;
        for (size_t i = 0; i < n * n; i++)
            scaleM = fmax(scaleM, fabs(Mref[i]));
        for (size_t i = 0; i < n; i++)
            scaleQ = fmax(scaleQ, fabs(Qref[i]));
        for (size_t i = 0; i < n * n; i++)
            ck_assert_msg(fabs(Mgot[i] - Mref[i]) < 1e-6 * scaleM,
                          "%s: M[%zu] = %.12g, reduced d'Alembert %.12g (t=%g)", ec->what, i,
                          Mgot[i], Mref[i], t);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(fabs(Qgot[i] - Qref[i]) < 1e-6 * scaleQ,
                          "%s: Q[%zu] = %.12g, reduced d'Alembert %.12g (t=%g q0=%g v0=%g)",
                          ec->what, i, Qgot[i], Qref[i], t, q[0], v[0]);
    }
    hs_work_free(w);
    hs_model_free(m);
}
END_TEST

static Suite *forms_suite(void)
{
    Suite *s = suite_create("forms");
    TCase *tc = tcase_create("equivalence");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, pendulum_three_forms);
    tcase_add_test(tc, double_pendulum_two_forms);
    tcase_add_test(tc, hoop_two_forms);
    tcase_add_test(tc, rolling_disk_acceleration);
    suite_add_tcase(s, tc);

    tc = tcase_create("embedding");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, embedding_is_reduced_dalembert, 0,
                        (int)(sizeof embs / sizeof *embs));
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(forms_suite)
