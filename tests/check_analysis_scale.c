/* The analysis (src/analysis) at the edges of the range of doubles and at
 * its size limit (issue 30): masses of 1e-160 against stiffnesses of 1e160
 * give the true frequencies (against the closed forms omega = sqrt(k/m),
 * sigma = -c/(2m)), never zeros called "stable"; a state-space matrix whose
 * entries do not fit a double is refused with a message; and a chain near
 * the documented n + k limit is analysed in seconds. */
#include <check.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_sf_bessel.h>
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

/* The text of a chain of N unit masses on unit rods hanging from the
 * origin under g = 9.81, started a little off the vertical. */
static char *chain_text(int N)
{
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
    return text;
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
    char *text = chain_text(N);
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

/* The eigenvalues mu = omega^2 of the linearized hanging chain of N unit
 * masses on unit rods (the second formulation of chain_at_the_limit:
 * horizontal displacements, tension (N - i) g in rod i + 1, M = I),
 * ascending, into mu [N]. */
static void chain_reference(int N, double g, double *mu)
{
    gsl_matrix *K = gsl_matrix_calloc(N, N);
    gsl_vector *v = gsl_vector_alloc(N);
    gsl_eigen_symm_workspace *ws = gsl_eigen_symm_alloc(N);
    ck_assert(K && v && ws);
    for (int i = 0; i < N; i++) {
        double Ti = (N - i) * g, Tn = (N - i - 1) * g;
        gsl_matrix_set(K, i, i, Ti + Tn);
        if (i + 1 < N) {
            gsl_matrix_set(K, i, i + 1, -Tn);
            gsl_matrix_set(K, i + 1, i, -Tn);
        }
    }
    ck_assert_int_eq(gsl_eigen_symm(K, v, ws), 0);
    gsl_sort_vector(v);
    for (int i = 0; i < N; i++)
        mu[i] = gsl_vector_get(v, i);
    gsl_eigen_symm_free(ws);
    gsl_vector_free(v);
    gsl_matrix_free(K);
}

/* The sparse path against the dense one on the same chain (50 and 200
 * links, where the dense analysis runs in well under a second): the same
 * equilibrium (q, lambda to round-off of their size), the same 10 lowest
 * frequencies and mode shapes, the same verdict; at 50 links every mode
 * (Lanczos on all of ker G_q) as well. */
static const int sparse_links[] = { 50, 200 };

START_TEST(sparse_against_dense)
{
    int N = sparse_links[_i];
    size_t n = 2 * (size_t)N, K10 = 10;
    char *text = chain_text(N);
    hs_error err;
    hs_model *mod = load_text(text, &err);
    ck_assert_msg(mod != NULL, "%s", err.msg);
    hs_an *an = hs_an_new(mod, &err);
    ck_assert_msg(an != NULL, "%s", err.msg);
    ck_assert_int_eq(hs_an_sparse(an), 0);         /* small: dense by default */
    hs_equil ed, es;
    hs_modes md, ms;
    ck_assert_msg(hs_an_equilibrium(an, mod->q0, &ed, &err) == 0, "%s", err.msg);
    ck_assert_msg(hs_an_modes_lowest(an, &ed, K10, &md, &err) == 0, "%s", err.msg);
    hs_an_set_path(an, HS_AN_PATH_SPARSE);
    ck_assert_int_eq(hs_an_sparse(an), 1);
    ck_assert_msg(hs_an_equilibrium(an, mod->q0, &es, &err) == 0, "%s", err.msg);
    ck_assert_msg(hs_an_modes_lowest(an, &es, K10, &ms, &err) == 0, "%s", err.msg);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabs(es.q[i] - ed.q[i]) <= 1e-12 * N, "q[%zu]: sparse %.17g, dense "
                      "%.17g", i, es.q[i], ed.q[i]);
    for (int j = 0; j < N; j++)                    /* lambda_j = -(N - j) g / 2 */
        ck_assert_msg(fabs(es.lambda[j] - ed.lambda[j]) <= 1e-12 * fabs(ed.lambda[j]) &&
                      fabs(es.lambda[j] + (N - j) * 9.81 / 2) <= 1e-11 * (N - j),
                      "lambda[%d]: sparse %.17g, dense %.17g", j, es.lambda[j], ed.lambda[j]);
    ck_assert(es.res_Q <= 1e-11 * N && es.res_G <= 1e-12 * N);
    ck_assert_uint_eq(ms.count, K10);
    ck_assert_uint_eq(md.count, K10);
    ck_assert_uint_eq(ms.dof, (size_t)N);
    ck_assert_int_eq(ms.verdict, md.verdict);
    ck_assert_int_eq(ms.stable, 1);
    ck_assert_int_eq(ms.conservative, 1);
    for (size_t r = 0; r < K10; r++) {
        ck_assert_msg(fabs(ms.omega[r] - md.omega[r]) <= 1e-10 * md.omega[r], "omega %zu: "
                      "sparse %.17g, dense %.17g", r, ms.omega[r], md.omega[r]);
        ck_assert(ms.sigma[r] == 0 && md.sigma[r] == 0);
        for (size_t i = 0; i < n; i++)
            ck_assert_msg(fabs(ms.shape[r * n + i] - md.shape[r * n + i]) <= 1e-8,
                          "mode %zu, d[%zu]: sparse %.17g, dense %.17g", r, i,
                          ms.shape[r * n + i], md.shape[r * n + i]);
    }
    hs_an_modes_free(&ms);
    /* from afar (the chain straight at 1 rad): both paths bring it down */
    double *q1 = malloc(n * sizeof *q1);
    ck_assert_ptr_nonnull(q1);
    for (int i = 0; i < N; i++) {
        q1[2 * i] = (i + 1) * sin(1.0);
        q1[2 * i + 1] = -(i + 1) * cos(1.0);
    }
    hs_equil fs, fd;
    ck_assert_msg(hs_an_equilibrium(an, q1, &fs, &err) == 0, "%s", err.msg);
    hs_an_set_path(an, HS_AN_PATH_DENSE);
    ck_assert_msg(hs_an_equilibrium(an, q1, &fd, &err) == 0, "%s", err.msg);
    hs_an_set_path(an, HS_AN_PATH_SPARSE);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabs(fs.q[i] - ed.q[i]) <= 1e-12 * N && fabs(fd.q[i] - ed.q[i]) <= 1e-12 * N,
                      "from 1 rad, q[%zu]: sparse %.17g, dense %.17g", i, fs.q[i], fd.q[i]);
    hs_an_equil_free(&fs);
    hs_an_equil_free(&fd);
    free(q1);
    if (N == 50) {                                 /* every mode */
        hs_modes ma;
        ck_assert_msg(hs_an_modes_lowest(an, &es, (size_t)N, &ma, &err) == 0, "%s", err.msg);
        hs_an_set_path(an, HS_AN_PATH_DENSE);
        hs_an_modes_free(&md);
        ck_assert_msg(hs_an_modes(an, &ed, &md, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(ma.count, (size_t)N);
        ck_assert_uint_eq(md.count, (size_t)N);
        for (int r = 0; r < N; r++)
            ck_assert_msg(fabs(ma.omega[r] - md.omega[r]) <= 1e-10 * md.omega[r],
                          "omega %d: sparse %.17g, dense %.17g", r, ma.omega[r], md.omega[r]);
        hs_an_modes_free(&ma);
    }
    hs_an_modes_free(&md);
    hs_an_equil_free(&ed);
    hs_an_equil_free(&es);
    hs_an_free(an);
    hs_model_free(mod);
    free(text);
}
END_TEST

/* The continuous hanging chain of length L: omega_i = (j_0,i / 2)
 * sqrt(g / L) (j_0,i the zeros of J_0); a chain of N discrete links
 * approaches it as N grows. */
static double continuous_omega(int i, double g, double L)
{
    return 0.5 * gsl_sf_bessel_zero_J0((unsigned)i) * sqrt(g / L);
}

/* A chain of 1000 links (n + k = 3000, beyond the dense limit): the
 * sparse path by default; the equilibrium (hanging straight down, lambda_j
 * = -(N - j + 1) g / 2) and the 10 lowest frequencies against the discrete
 * chain's tridiagonal formulation (to 1e-9) and the continuous chain's
 * Bessel zeros (to 0.1%: the discrete chain's own error at this N is
 * 2.5e-4); the times in CPU seconds (targets 1 s and 2 s on a quiet
 * machine, asserted at 5x). */
START_TEST(chain_1000_sparse)
{
    enum { N = 1000, K10 = 10 };
    const double g = 9.81;
    char *text = chain_text(N);
    hs_error err;
    hs_model *mod = load_text(text, &err);
    ck_assert_msg(mod != NULL, "%s", err.msg);
    double c0 = cpu_now();
    hs_an *an = hs_an_new(mod, &err);
    ck_assert_msg(an != NULL, "%s", err.msg);
    ck_assert_int_eq(hs_an_sparse(an), 1);
    hs_equil eq;
    ck_assert_msg(hs_an_equilibrium(an, mod->q0, &eq, &err) == 0, "%s", err.msg);
    double c1 = cpu_now();
    hs_modes md;
    ck_assert_msg(hs_an_modes_lowest(an, &eq, K10, &md, &err) == 0, "%s", err.msg);
    double c2 = cpu_now();
    for (int i = 0; i < N; i++) {
        ck_assert_msg(fabs(eq.q[2 * i]) <= 1e-9 && fabs(eq.q[2 * i + 1] + (i + 1)) <= 1e-9,
                      "link %d at (%.17g, %.17g)", i + 1, eq.q[2 * i], eq.q[2 * i + 1]);
        ck_assert(fabs(eq.lambda[i] + (N - i) * g / 2) <= 1e-10 * (N - i) * g);
    }
    ck_assert_uint_eq(md.count, K10);
    ck_assert_uint_eq(md.dof, N);
    ck_assert_int_eq(md.stable, 1);
    double *mu = malloc(N * sizeof *mu), worst = 0, worst_c = 0;
    ck_assert_ptr_nonnull(mu);
    chain_reference(N, g, mu);
    for (int j = 0; j < K10; j++) {
        double w = sqrt(mu[j]), wc = continuous_omega(j + 1, g, N);
        worst = fmax(worst, fabs(md.omega[j] - w) / w);
        worst_c = fmax(worst_c, fabs(md.omega[j] - wc) / wc);
        /* the shape: horizontal, the free end moving most */
        ck_assert(md.shape[j * 2 * N + 2 * N - 2] == 1);
        for (int i = 0; i < N; i++)
            ck_assert(fabs(md.shape[j * 2 * N + 2 * i + 1]) <= 1e-9);
    }
    ck_assert_msg(worst < 1e-9, "omega off the discrete chain by %.3g (relative)", worst);
    ck_assert_msg(worst_c < 1e-3, "omega off the continuous chain by %.3g (relative)", worst_c);
    fprintf(stderr, "chain_1000_sparse: equilibrium %.3f s, 10 modes %.3f s of CPU; omega "
            "within %.2g of the discrete chain, %.2g of the continuous one\n", c1 - c0,
            c2 - c1, worst, worst_c);
    ck_assert_msg(c1 - c0 < 5 && c2 - c1 < 10, "equilibrium %.2f s, modes %.2f s of CPU",
                  c1 - c0, c2 - c1);
    free(mu);
    hs_an_modes_free(&md);
    hs_an_equil_free(&eq);
    hs_an_free(an);
    hs_model_free(mod);
    free(text);
}
END_TEST

/* A square membrane of G x G unit masses on unit springs, fixed at its
 * border: x and y decouple and (p, q), (q, p) share a frequency, so every
 * omega^2 = 4 sin^2(p pi / 2(G+1)) + 4 sin^2(q pi / 2(G+1)) comes 2 or 4
 * times.  One Krylov sequence holds each once: the sparse path must find
 * every copy, whatever count cuts through a cluster. */
static char *grid_text(int G)
{
    size_t cap = (size_t)G * G * 200 + 4096, len = 0;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
#define PUT(...) (len += (size_t)snprintf(text + len, cap - len, __VA_ARGS__))
    PUT("coordinates: [");
    for (int i = 1; i <= G; i++)
        for (int j = 1; j <= G; j++)
            PUT("%sx_%d_%d, y_%d_%d", i + j > 2 ? ", " : "", i, j, i, j);
    PUT("]\nmass: [1");
    for (int i = 1; i < 2 * G * G; i++)
        PUT(", 1");
    PUT("]\npotential: 0.5*(0");
    for (int c = 0; c < 2; c++)
        for (int i = 0; i <= G; i++)
            for (int j = 0; j <= G; j++)
                for (int d = 0; d < 2; d++) {       /* the spring to (i+1, j), (i, j+1) */
                    int i2 = i + !d, j2 = j + d;
                    int in1 = i >= 1 && j >= 1 && i <= G && j <= G;
                    int in2 = i2 >= 1 && j2 >= 1 && i2 <= G && j2 <= G;
                    if (!in1 && !in2)
                        continue;
                    char a[32] = "0", b[32] = "0";
                    if (in1)
                        snprintf(a, sizeof a, "%c_%d_%d", "xy"[c], i, j);
                    if (in2)
                        snprintf(b, sizeof b, "%c_%d_%d", "xy"[c], i2, j2);
                    PUT(" + (%s - %s)^2", b, a);
                }
    PUT(")\ninitial: {q: {");
    for (int i = 1; i <= G; i++)
        for (int j = 1; j <= G; j++)
            PUT("%sx_%d_%d: 0, y_%d_%d: 0", i + j > 2 ? ", " : "", i, j, i, j);
    PUT("}}\n");
#undef PUT
    ck_assert_uint_lt(len, cap);
    return text;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

START_TEST(sparse_repeated_eigenvalues)
{
    enum { G = 8 };
    char *text = grid_text(G);
    hs_error err;
    hs_model *mod = load_text(text, &err);
    ck_assert_msg(mod != NULL, "%s", err.msg);
    hs_an *an = hs_an_new(mod, &err);
    ck_assert_ptr_nonnull(an);
    hs_an_set_path(an, HS_AN_PATH_SPARSE);
    hs_equil eq;
    ck_assert_msg(hs_an_equilibrium(an, mod->q0, &eq, &err) == 0, "%s", err.msg);
    double mu[2 * G * G], pi = 4 * atan(1.0);
    for (int p = 1, e = 0; p <= G; p++)
        for (int q = 1; q <= G; q++, e += 2) {
            double sp = sin(p * pi / (2 * (G + 1))), sq = sin(q * pi / (2 * (G + 1)));
            mu[e] = mu[e + 1] = 4 * sp * sp + 4 * sq * sq;
        }
    qsort(mu, 2 * G * G, sizeof *mu, cmp_double);
    const size_t counts[] = { 1, 2, 3, 4, 5, 6, 7, 12, 20 };
    for (size_t t = 0; t < sizeof counts / sizeof *counts; t++) {
        hs_modes md;
        ck_assert_msg(hs_an_modes_lowest(an, &eq, counts[t], &md, &err) == 0, "%s", err.msg);
        ck_assert_uint_eq(md.count, counts[t]);
        for (size_t r = 0; r < counts[t]; r++)
            ck_assert_msg(fabs(md.omega[r] - sqrt(mu[r])) <= 1e-10 * sqrt(mu[r]),
                          "count %zu, omega %zu: %.17g, want %.17g", counts[t], r,
                          md.omega[r], sqrt(mu[r]));
        hs_an_modes_free(&md);
    }
    hs_an_equil_free(&eq);
    hs_an_free(an);
    hs_model_free(mod);
    free(text);
}
END_TEST

/* Bad requests: more modes than degrees of freedom (exit 1, both paths);
 * the sparse modes of a damped model (exit 3: the first-order form is
 * dense only); the state-space matrix beyond the dense limit (exit 2). */
START_TEST(sparse_refusals)
{
    hs_error err;
    hs_model *mod = load_text("coordinates: [x, y]\nmass: [1, 1]\n"
                              "potential: 0.5*x^2 + y^2\nforces: {x: -0.1*x'}\n"
                              "initial: {q: {x: 0.25, y: -0.5}}\n", &err);
    ck_assert_msg(mod != NULL, "%s", err.msg);
    hs_an *an = hs_an_new(mod, &err);
    ck_assert_ptr_nonnull(an);
    hs_equil eq;
    hs_modes md;
    ck_assert_int_eq(hs_an_equilibrium(an, mod->q0, &eq, &err), 0);
    for (int path = 0; path < 2; path++) {
        hs_an_set_path(an, path ? HS_AN_PATH_SPARSE : HS_AN_PATH_DENSE);
        hs_error_init(&err);
        ck_assert_int_eq(hs_an_modes_lowest(an, &eq, 3, &md, &err), 1);
        ck_assert_msg(strstr(err.msg, "more modes than the 2 degrees of freedom"), "%s",
                      err.msg);
        hs_an_modes_free(&md);
    }
    hs_error_init(&err);
    ck_assert_int_eq(hs_an_modes_lowest(an, &eq, 1, &md, &err), 3);
    ck_assert_msg(strstr(err.msg, "conservative"), "%s", err.msg);
    ck_assert_str_eq(err.file, "scale.yaml");
    hs_an_modes_free(&md);
    /* the same model undamped: the sparse path gives sqrt(1), sqrt(2) */
    hs_an_equil_free(&eq);
    hs_an_free(an);
    hs_model_free(mod);
    mod = load_text("coordinates: [x, y]\nmass: [1, 1]\npotential: 0.5*x^2 + y^2\n"
                    "initial: {q: {x: 0.25, y: -0.5}}\n", &err);
    ck_assert_ptr_nonnull(mod);
    an = hs_an_new(mod, &err);
    hs_an_set_path(an, HS_AN_PATH_SPARSE);
    ck_assert_int_eq(hs_an_equilibrium(an, mod->q0, &eq, &err), 0);
    ck_assert(eq.q[0] == 0 && eq.q[1] == 0);
    ck_assert_int_eq(hs_an_modes_lowest(an, &eq, 0, &md, &err), 0);
    ck_assert_uint_eq(md.count, 2);
    close_rel(md.omega[0], 1, 1e-12, "omega", 0);
    close_rel(md.omega[1], sqrt(2), 1e-12, "omega", 1);
    hs_an_modes_free(&md);
    hs_an_equil_free(&eq);
    hs_an_free(an);
    hs_model_free(mod);
    /* a repeated eigenvalue (an isotropic oscillator): both copies */
    mod = load_text("coordinates: [x, y]\nmass: [2, 2]\npotential: x^2 + y^2 + 0*x*y\n"
                    "initial: {q: {x: 0.25, y: -0.5}}\n", &err);
    ck_assert_ptr_nonnull(mod);
    an = hs_an_new(mod, &err);
    hs_an_set_path(an, HS_AN_PATH_SPARSE);
    ck_assert_int_eq(hs_an_equilibrium(an, mod->q0, &eq, &err), 0);
    ck_assert_int_eq(hs_an_modes_lowest(an, &eq, 0, &md, &err), 0);
    ck_assert_uint_eq(md.count, 2);
    close_rel(md.omega[0], 1, 1e-12, "omega", 0);
    close_rel(md.omega[1], 1, 1e-12, "omega", 1);
    ck_assert_int_eq(md.stable, 1);
    hs_an_modes_free(&md);
    hs_an_equil_free(&eq);
    hs_an_free(an);
    hs_model_free(mod);
    /* beyond the limit: linearize is dense only */
    char *text = chain_text(700);
    mod = load_text(text, &err);
    ck_assert_ptr_nonnull(mod);
    an = hs_an_new(mod, &err);
    ck_assert_ptr_nonnull(an);
    ck_assert_int_eq(hs_an_equilibrium(an, mod->q0, &eq, &err), 0);
    hs_linear lin;
    hs_error_init(&err);
    ck_assert_int_eq(hs_an_linearize(an, &eq, &lin, &err), 2);
    ck_assert_msg(strstr(err.msg, "model too large for the state-space matrix: n + k = 2100"),
                  "%s", err.msg);
    hs_an_linear_free(&lin);
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
    TCase *ts = tcase_create("sparse");
    tcase_set_timeout(ts, 300);
    tcase_add_loop_test(ts, sparse_against_dense, 0,
                        (int)(sizeof sparse_links / sizeof sparse_links[0]));
    tcase_add_test(ts, chain_1000_sparse);
    tcase_add_test(ts, sparse_refusals);
    tcase_add_test(ts, sparse_repeated_eigenvalues);
    suite_add_tcase(s, ts);
    return s;
}

HS_CHECK_MAIN(suite)
