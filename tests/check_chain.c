/* An N-link planar chain: the Cartesian form (N constraints, C tridiagonal,
 * factored in band storage) against the same chain in N angles (embedding
 * form, no constraints, dense metric).  Two formulations, one motion. */
#include "check_main.h"
#include "physics_util.h"

#include <gsl/gsl_errno.h>

#include <gsl/gsl_linalg.h>

#include "dynamics/dynamics.h"

#define N 12

static char *chain_text(int cartesian)
{
    static char buf[16384];
    size_t len = 0;
#define PUT(...) (len += (size_t)snprintf(buf + len, sizeof buf - len, __VA_ARGS__))
    PUT("parameters: {m: 1.0, l: 0.5, g: 9.81, th0: 0.4}\n");
    if (cartesian) {
        PUT("coordinates: [");
        for (int i = 1; i <= N; i++)
            PUT("%sx%d, y%d", i > 1 ? ", " : "", i, i);
        PUT("]\nconstraints:\n  c1: x1^2 + y1^2 - l^2\n");
        for (int i = 2; i <= N; i++)
            PUT("  c%d: (x%d - x%d)^2 + (y%d - y%d)^2 - l^2\n", i, i, i - 1, i, i - 1);
        PUT("initial: {q: {");
        for (int i = 1; i <= N; i++)  /* a straight chain at angle th0 */
            PUT("%sx%d: %d*l*sin(th0), y%d: -%d*l*cos(th0)", i > 1 ? ", " : "", i, i, i, i);
        PUT("}}\n");
    } else {
        PUT("coordinates: [");
        for (int i = 1; i <= N; i++)
            PUT("%sth%d", i > 1 ? ", " : "", i);
        PUT("]\nembedding:\n");
        for (int i = 1; i <= N; i++) {
            PUT("  x%d: 0", i);
            for (int j = 1; j <= i; j++)
                PUT(" + l*sin(th%d)", j);
            PUT("\n  y%d: 0", i);
            for (int j = 1; j <= i; j++)
                PUT(" - l*cos(th%d)", j);
            PUT("\n");
        }
        PUT("initial: {q: {");
        for (int i = 1; i <= N; i++)
            PUT("%sth%d: th0", i > 1 ? ", " : "", i);
        PUT("}}\n");
    }
    PUT("mass: [");
    for (int i = 1; i <= 2 * N; i++)
        PUT("%sm", i > 1 ? ", " : "");
    PUT("]\npotential: m*g*(0");
    for (int i = 1; i <= N; i++)
        PUT(" + y%d", i);
    PUT(")\nsimulate: {t_end: 2, dt: 0.05, rtol: 1e-11, atol: 1e-11}\n");
#undef PUT
    ck_assert_uint_lt(len, sizeof buf - 1);
    return buf;
}

/* hs_la_band_cholesky/hs_la_band_svx against GSL's band Cholesky on random SPD
 * band matrices: same factor, same solution, same condition estimate. */
START_TEST(band_cholesky_matches_gsl)
{
    unsigned long seed = 12345;
    for (size_t b = 1; b <= 3; b++) {
        size_t k = 40;
        gsl_matrix *A = gsl_matrix_calloc(k, b + 1), *G = gsl_matrix_calloc(k, b + 1);
        for (size_t j = 0; j < k; j++)
            for (size_t d = 0; d <= b && j + d < k; d++) {
                seed = seed * 6364136223846793005UL + 1442695040888963407UL;
                double r = (double)(seed >> 11) / 9007199254740992.0 - 0.5;
                gsl_matrix_set(A, j, d, d == 0 ? 2.0 * (double)b + 1 + r : r);
            }
        gsl_matrix_memcpy(G, A);
        ck_assert_int_eq(hs_la_band_cholesky(A), 0);
        ck_assert_int_eq(gsl_linalg_cholesky_band_decomp(G), GSL_SUCCESS);
        for (size_t j = 0; j < k; j++)
            for (size_t d = 0; d <= b && j + d < k; d++)
                ck_assert_double_eq_tol(gsl_matrix_get(A, j, d), gsl_matrix_get(G, j, d), 1e-13);
        double x[40], y[40];
        for (size_t i = 0; i < k; i++)
            x[i] = y[i] = sin((double)i);
        hs_la_band_svx(A, x);
        gsl_vector_view yv = gsl_vector_view_array(y, k);
        gsl_linalg_cholesky_band_svx(G, &yv.vector);
        for (size_t i = 0; i < k; i++)
            ck_assert_double_eq_tol(x[i], y[i], 1e-12);
        double ra, rg;
        gsl_vector *work = gsl_vector_alloc(3 * k);
        gsl_linalg_cholesky_band_rcond(A, &ra, work);
        gsl_linalg_cholesky_band_rcond(G, &rg, work);
        ck_assert_double_eq_tol(ra, rg, 1e-12 * rg);
        gsl_vector_free(work);
        gsl_matrix_free(A);
        gsl_matrix_free(G);
    }
}
END_TEST

START_TEST(band_path_chosen)
{
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("chain.yaml", chain_text(1), NULL, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    hs_work *w = hs_work_new(m);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(hs_work_cstruct(w).banded, 1);
    ck_assert_uint_eq(hs_work_cstruct(w).bw, 1);
    hs_work_free(w);
    hs_model_free(m);
}
END_TEST

START_TEST(cartesian_equals_angles)
{
    pu_args a = pu_defaults();
    char cols[64];
    snprintf(cols, sizeof cols, "t,x%d,y%d", N, N);
    a.text = chain_text(1);
    a.columns = cols;
    pu_result cart, ang;
    pu_run_ok(&a, &cart);
    a.text = chain_text(0);
    pu_run_ok(&a, &ang);
    char xn[8], yn[8];
    snprintf(xn, sizeof xn, "x%d", N);
    snprintf(yn, sizeof yn, "y%d", N);
    ck_assert_uint_eq(cart.tab.nrow, ang.tab.nrow);
    double dx = pu_maxdiff(&cart.tab, xn, &ang.tab, xn);
    double dy = pu_maxdiff(&cart.tab, yn, &ang.tab, yn);
    ck_assert_msg(dx < 1e-7 && dy < 1e-7, "end of chain differs: %g %g", dx, dy);
    ck_assert_msg(pu_maxabs(&cart.tab, xn) > 0.5, "the chain did not move");
    pu_result_free(&cart);
    pu_result_free(&ang);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("chain");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, band_cholesky_matches_gsl);
    tcase_add_test(tc, band_path_chosen);
    tcase_add_test(tc, cartesian_equals_angles);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
