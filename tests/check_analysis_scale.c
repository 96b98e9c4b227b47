/* The analysis (src/analysis) at the edges of the range of doubles and at
 * its size limit (issue 30): masses of 1e-160 against stiffnesses of 1e160
 * give the true frequencies (against the closed forms omega = sqrt(k/m),
 * sigma = -c/(2m)), never zeros called "stable"; a state-space matrix whose
 * entries do not fit a double is refused with a message; and a chain near
 * the documented n + k limit is analysed in seconds. */
#include <check.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_sort_vector.h>
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

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* A chain of N = 666 unit masses on unit rods hanging from the origin
 * (n = 1332, k = 666: n + k = 1998, the documented limit is 2000): its N
 * horizontal modes against a second formulation, the tridiagonal
 * stiffness of the linearized chain (tension T_i = (N - i + 1) g in rod
 * i: K_ii = T_i + T_i+1, K_i,i+1 = -T_i+1, M = I), solved by GSL's own
 * symmetric eigensolver; the analysis in seconds of CPU time (it took
 * about 10 s with the reference BLAS, 60 s and more at n = 2000). */
START_TEST(chain_at_the_limit)
{
    enum { N = 666 };
    const double g = 9.81;
    size_t cap = (size_t)N * 160 + 4096, len = 0;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
#define PUT(...) (len += (size_t)snprintf(text + len, cap - len, __VA_ARGS__))
    PUT("coordinates: [");
    for (int i = 1; i <= N; i++)
        PUT("%sx%d, y%d", i > 1 ? ", " : "", i, i);
    PUT("]\nmass: [");
    for (int i = 1; i <= 2 * N; i++)
        PUT("%s1", i > 1 ? ", " : "");
    PUT("]\npotential: %g*(y1", g);
    for (int i = 2; i <= N; i++)
        PUT(" + y%d", i);
    PUT(")\nconstraints:\n  r1: x1^2 + y1^2 - 1\n");
    for (int i = 2; i <= N; i++)
        PUT("  r%d: (x%d - x%d)^2 + (y%d - y%d)^2 - 1\n", i, i, i - 1, i, i - 1);
    PUT("initial: {q: {");
    for (int i = 1; i <= N; i++)
        PUT("%sx%d: %g, y%d: %d", i > 1 ? ", " : "", i, 1e-4 * i, i, -i);
    PUT("}}\n");
#undef PUT
    ck_assert_uint_lt(len, cap);
    hs_error err;
    hs_model *mod = load_text(text, &err);
    ck_assert_msg(mod != NULL, "%s", err.msg);
    double c0 = cpu_now();
    hs_an *an = hs_an_new(mod, &err);
    ck_assert_msg(an != NULL, "%s", err.msg);
    hs_equil eq;
    ck_assert_msg(hs_an_equilibrium(an, mod->q0, &eq, &err) == 0, "%s", err.msg);
    hs_modes md;
    ck_assert_msg(hs_an_modes(an, &eq, &md, &err) == 0, "%s", err.msg);
    double cpu = cpu_now() - c0;
    ck_assert_uint_eq(md.count, N);
    ck_assert_int_eq(md.stable, 1);
    /* the second formulation */
    gsl_matrix *K = gsl_matrix_calloc(N, N);
    gsl_vector *mu = gsl_vector_alloc(N);
    gsl_eigen_symm_workspace *ws = gsl_eigen_symm_alloc(N);
    for (int i = 0; i < N; i++) {
        double Ti = (N - i) * g, Tn = (N - i - 1) * g;
        gsl_matrix_set(K, i, i, Ti + Tn);
        if (i + 1 < N) {
            gsl_matrix_set(K, i, i + 1, -Tn);
            gsl_matrix_set(K, i + 1, i, -Tn);
        }
    }
    ck_assert_int_eq(gsl_eigen_symm(K, mu, ws), 0);
    gsl_sort_vector(mu);
    double worst = 0;
    for (int j = 0; j < N; j++) {
        double w = sqrt(gsl_vector_get(mu, j));
        worst = fmax(worst, fabs(md.omega[j] - w) / w);
    }
    ck_assert_msg(worst < 1e-8, "omega off by %.3g (relative)", worst);
    ck_assert_msg(cpu < 20, "equilibrium and modes at n + k = 1998 took %.1f s of CPU", cpu);
    fprintf(stderr, "chain_at_the_limit: n + k = %d, %.2f s of CPU, omega within %.2g\n",
            3 * N, cpu, worst);
    gsl_eigen_symm_free(ws);
    gsl_vector_free(mu);
    gsl_matrix_free(K);
    hs_an_modes_free(&md);
    hs_an_equil_free(&eq);
    hs_an_free(an);
    hs_model_free(mod);
    free(text);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("analysis_scale");
    TCase *tc = tcase_create("scale");
    tcase_add_loop_test(tc, modes_scaled, 0, (int)(2 * sizeof scales / sizeof scales[0]));
    suite_add_tcase(s, tc);
    TCase *tl = tcase_create("limit");
    tcase_set_timeout(tl, 300);
    tcase_add_test(tl, chain_at_the_limit);
    suite_add_tcase(s, tl);
    return s;
}

HS_CHECK_MAIN(suite)
