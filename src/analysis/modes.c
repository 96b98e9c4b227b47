/* The linearization at an equilibrium, its eigenvalues and mode shapes,
 * and its state-space matrix (analysis.h).
 *
 * With q = q* + dq, v = dv, lambda = lambda* + dl in M(q) v' = Q(q, v) +
 * G_q(q)^T lambda, G(q) = 0, to first order (v' = 0 at the equilibrium, so
 * the derivative of M drops out):
 *
 *     M dv' = S dq + D dv + G_q^T dl,     G_q dq = 0,
 *     S = dQ(q,0)/dq + sum_j lambda_j* d2G_j/dq2,   D = dQ/dv at v = 0.
 *
 * With dq = T y, the columns of T a basis of ker G_q, T^T G_q^T = 0
 * removes dl:
 *
 *     Mr y'' + Cr y' + Kr y = 0,  Mr = T^T M T,  Cr = -T^T D T,  Kr = -T^T S T.
 *
 * The sign of the constraint term: for Q = -grad U, along a curve q(s) on
 * G = 0 with q(0) = q*, q'(0) = T y, d2U/ds2 = y^T T^T U_qq T y + U_q q''.
 * At the equilibrium U_q = G_q^T lambda*, and d2G/ds2 = 0 gives G_q q'' =
 * -(y^T T^T G_j,qq T y)_j, so d2U/ds2 = y^T T^T (U_qq - sum_j lambda_j*
 * G_j,qq) T y = y^T Kr y: the Hessian of U - lambda*.G on the tangent
 * space, with S = -U_qq + sum lambda_j* G_j,qq.  (Upright pendulum, G =
 * x^2 + y^2 - l^2 at (0, l): lambda* = m g / (2 l), Kr = -2 lambda* = -m g / l.)
 *
 * Cr splits into damping (symmetric) and gyroscopic (antisymmetric)
 * parts; D is 0 for a model without velocity-dependent forces, and a
 * moving chart's Coriolis terms give its antisymmetric part. */
#include "internal.h"
#include "../linalg/linalg.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_linalg.h>

#define RANK_TOL 1e-12      /* |R_kk| / |R_11| of G_q^T below this: dependent */
#define ROUNDOFF 1e-11      /* damping, gyroscopic terms, asymmetry of K: relative */

/* The reduced matrices of one linearization (m = dof). */
typedef struct reduced {
    size_t n, m;
    double w0;                  /* the time scale: the matrices below are those of
                                 * tau = w0 t, each eigenvalue s = w0 s_tau */
    gsl_matrix *Mr, *Kr, *Cr;   /* m x m, scaled (balance) */
    gsl_matrix *L;              /* Cholesky factor of Mr (lower) */
    double kratio;              /* >= 1: the stiffness met by Newton over max |S(q*)|;
                                 * K phi = mu M phi counts mu as 0 below 64 eps of
                                 * kratio max |mu| (a K that cancels to round-off) */
} reduced;

static void reduced_free(reduced *r)
{
    gsl_matrix *mats[] = { r->Mr, r->Kr, r->Cr, r->L };
    for (size_t i = 0; i < 4; i++)
        if (mats[i])
            gsl_matrix_free(mats[i]);
}

static int is_zero(const gsl_matrix *X)
{
    for (size_t i = 0; i < X->size1; i++)
        for (size_t j = 0; j < X->size2; j++)
            if (gsl_matrix_get(X, i, j) != 0)
                return 0;
    return 1;
}

/* X = T^T A T (A n x n, T n x m), scaled by s; T = I (no constraints) and
 * A = 0 (no damping) without the two n x n x m products. */
static int congruence(const gsl_matrix *A, const gsl_matrix *T, int T_is_I, double s,
                      gsl_matrix *X)
{
    if (is_zero(A)) {
        gsl_matrix_set_zero(X);
        return 0;
    }
    if (T_is_I) {
        gsl_matrix_memcpy(X, A);
        gsl_matrix_scale(X, s);
        return 0;
    }
    gsl_matrix *AT = hs_la_matrix_alloc(A->size1, T->size2);
    if (!AT)
        return -1;
    gsl_blas_dgemm(CblasNoTrans, CblasNoTrans, 1.0, A, T, 0.0, AT);
    gsl_blas_dgemm(CblasTrans, CblasNoTrans, s, T, AT, 0.0, X);
    gsl_matrix_free(AT);
    return 0;
}

static double max_abs(const gsl_matrix *X)
{
    double mx = 0;
    for (size_t i = 0; i < X->size1; i++)
        for (size_t j = 0; j < X->size2; j++)
            mx = fmax(mx, fabs(gsl_matrix_get(X, i, j)));
    return mx;
}

/* 2^e, e even, near x > 0: scaling by it is exact, and so is its sqrt. */
static int even_exp(double x)
{
    int e = ilogb(x);
    return e - (e & 1);
}

/* Scale M y'' + C y' + K y = 0 to order one before any product is formed
 * (masses 1e-160, stiffnesses 1e160: M^-1 K would overflow): with sM =
 * max|M|, sK = max|K|, w0 = sqrt(sK / sM), tau = w0 t gives (M / sM) y'' +
 * (C / sqrt(sM sK)) y' + (K / sK) y = 0, eigenvalues s / w0, the same
 * shapes (no stiffness: w0 = max|C| / sM; neither: 1).  The scales are even
 * powers of two: exact, square roots too, so away from overflow the
 * results are the unscaled ones to the last bit. */
static void balance(reduced *r)
{
    double sM = max_abs(r->Mr), sK = max_abs(r->Kr), sC = max_abs(r->Cr);
    r->w0 = 1;
    if (!(sM > 0) || !isfinite(sM) || !isfinite(sK) || !isfinite(sC))
        return;
    int aM = even_exp(sM), aK, aC;
    if (sK > 0) {
        aK = even_exp(sK);
        aC = (aM + aK) / 2;                 /* C / sqrt(sM sK) */
        r->w0 = ldexp(1, (aK - aM) / 2);
    } else if (sC > 0) {
        aC = even_exp(sC);
        aK = 2 * aC - aM;                    /* K / (sM w0^2), w0 = 2^(aC - aM) */
        r->w0 = ldexp(1, aC - aM);
    } else {
        aK = aC = aM;
    }
    gsl_matrix_scale(r->Mr, ldexp(1, -aM));
    gsl_matrix_scale(r->Kr, ldexp(1, -aK));
    gsl_matrix_scale(r->Cr, ldexp(1, -aC));
}

/* Mr, Kr, Cr at eq in the basis T (balanced, r->w0); the Cholesky factor
 * of Mr.  0, or exit
 * 3 (non-finite values, Mr not positive definite). */
static int reduce(hs_an *a, const hs_equil *eq, const gsl_matrix *T, reduced *r,
                  hs_error *err)
{
    size_t n = a->n, m = T->size2;
    memset(r, 0, sizeof *r);
    r->n = n;
    r->m = m;
    gsl_matrix *M = hs_la_matrix_alloc(n, n), *S = hs_la_matrix_alloc(n, n);
    gsl_matrix *D = hs_la_matrix_alloc(n, n);
    r->Mr = hs_la_matrix_alloc(m, m);
    r->Kr = hs_la_matrix_alloc(m, m);
    r->Cr = hs_la_matrix_alloc(m, m);
    r->L = hs_la_matrix_alloc(m, m);
    int rc = 0;
    if (!M || !S || !D || !r->Mr || !r->Kr || !r->Cr || !r->L) {
        rc = hs_error_nomem(err);
        goto done;
    }
    if (!hs_ak_eval_eq(a, eq->q)) {
        rc = hs_ak_nonfinite(a, 0, eq->q, HS_EXIT_INCONSISTENT, "in the linearization at the "
                             "equilibrium", err);
        goto done;
    }
    hs_ak_fill_S(a, eq->lambda, S);
    double sS = 0;
    for (size_t i = 0; i < n * n; i++)
        sS = fmax(sS, fabs(S->data[i / n * S->tda + i % n]));
    r->kratio = sS > 0 && eq->sscale > sS ? eq->sscale / sS : 1;
    if (!hs_ak_eval_lin(a, eq->q)) {
        rc = hs_ak_nonfinite(a, 1, eq->q, HS_EXIT_INCONSISTENT, "in the mass matrix or "
                             "the damping at the equilibrium", err);
        goto done;
    }
    hs_ak_fill_M(a, M);
    hs_ak_fill_D(a, D);
    int T_is_I = a->k == 0 && m == n;        /* tangent_basis and hs_an_linearize: I */
    if (congruence(M, T, T_is_I, 1, r->Mr) || congruence(S, T, T_is_I, -1, r->Kr) ||
        congruence(D, T, T_is_I, -1, r->Cr)) {
        rc = hs_error_nomem(err);
        goto done;
    }
    balance(r);
    gsl_matrix_memcpy(r->L, r->Mr);
    if (m && hs_la_cholesky(r->L) != GSL_SUCCESS) {
        rc = hs_error_set(err, HS_EXIT_INCONSISTENT, "the %s is not positive definite on "
                          "the tangent space at the equilibrium", a->m->form ==
                          HS_FORM_CARTESIAN ? "mass matrix" : "metric d2T/dv2");
        snprintf(err->file, sizeof err->file, "%s", a->m->file);
    }
done:
    if (M)
        gsl_matrix_free(M);
    if (S)
        gsl_matrix_free(S);
    if (D)
        gsl_matrix_free(D);
    return rc;
}

/* G_q at eq (k x n); NULL when out of memory. */
static gsl_matrix *jacobian_at(hs_an *a, const hs_equil *eq)
{
    gsl_matrix *Gq = hs_la_matrix_alloc(a->k, a->n);
    if (Gq) {
        hs_ak_eval_eq(a, eq->q);
        hs_ak_fill_Gq(a, Gq);
    }
    return Gq;
}

static int dependent(hs_an *a, size_t j, hs_error *err)
{
    hs_error_set(err, HS_EXIT_INCONSISTENT, "the constraints are dependent at the "
                 "equilibrium (rank of G_q below k = %zu; constraint '%s' adds nothing): "
                 "no tangent space to linearize on", a->k, a->m->cname[j]);
    snprintf(err->file, sizeof err->file, "%s", a->m->file);
    return HS_EXIT_INCONSISTENT;
}

/* From this n on, the blocked QR first (tangent_basis_blocked) */
#define BLOCKED_QR_N 256

/* An orthonormal basis T (n x (n - rank)) of ker G_q(q*): the last n -
 * rank columns of Q in the column-pivoted QR factorization G_q^T P = Q R;
 * the rank into *rank_out.  Redundant constraints (rank < k) are an error
 * unless redundant_ok (and consistency.dependent is not reject). */
static int tangent_basis(hs_an *a, const hs_equil *eq, gsl_matrix **Tout, int redundant_ok,
                         size_t *rank_out, hs_error *err)
{
    size_t n = a->n, k = a->k;
    int allow = redundant_ok && !a->m->set.strict_rank;
    *Tout = NULL;
    *rank_out = k;
    if (k > n && !allow)
        return dependent(a, n, err);
    gsl_matrix *T = NULL;
    if (!k) {
        if (!(T = hs_la_matrix_alloc(n, n)))
            return hs_error_nomem(err);
        gsl_matrix_set_identity(T);
        *Tout = T;
        return 0;
    }
    if (n >= BLOCKED_QR_N && k < n) {     /* full rank found by the blocked QR, else QRPT */
        gsl_matrix *G = jacobian_at(a, eq);
        T = hs_la_matrix_alloc(n, n - k);
        int b = G && T ? hs_ak_tangent_blocked(G, T, RANK_TOL) : -1;
        if (G)
            gsl_matrix_free(G);
        if (b < 0) {
            if (T)
                gsl_matrix_free(T);
            return hs_error_nomem(err);
        }
        if (b == 0) {
            *Tout = T;
            return 0;
        }
        gsl_matrix_free(T);
        T = NULL;
    }
    gsl_matrix *Gq = jacobian_at(a, eq), *A = hs_la_matrix_alloc(n, k);
    gsl_matrix *Q = hs_la_matrix_alloc(n, n), *R = hs_la_matrix_alloc(n, k);
    gsl_vector *tau = hs_la_vector_alloc(k < n ? k : n), *norm = hs_la_vector_alloc(k);
    gsl_permutation *p = hs_la_permutation_alloc(k);
    int rc = 0, signum;
    size_t rank = 0;
    if (!Gq || !A || !Q || !R || !tau || !norm || !p) {
        rc = hs_error_nomem(err);
        goto done;
    }
    gsl_matrix_transpose_memcpy(A, Gq);
    gsl_linalg_QRPT_decomp2(A, Q, R, tau, p, &signum, norm);
    double r0 = fabs(gsl_matrix_get(R, 0, 0));
    /* redundant constraints (consistency.dependent: allow, and a caller
     * that takes the rank): the tangent space is ker G_q of dimension
     * n - rank */
    for (size_t j = 0; j < k && j < n; j++)
        rank += fabs(gsl_matrix_get(R, j, j)) > RANK_TOL * r0;
    for (size_t j = 0; j < k && !rc; j++)
        if (!allow && (j >= n || !(fabs(gsl_matrix_get(R, j, j)) > RANK_TOL * r0)))
            rc = dependent(a, gsl_permutation_get(p, j), err);
    if (!rc && !(T = hs_la_matrix_alloc(n, n - rank ? n - rank : 1)))
        rc = hs_error_nomem(err);
    if (!rc && n > rank) {
        gsl_matrix_const_view Q2 = hs_la_submatrix_const(Q, 0, rank, n, n - rank);
        gsl_matrix_memcpy(T, &Q2.matrix);
    }
    *rank_out = rank;
done:
    gsl_matrix_free(Gq);
    gsl_matrix_free(A);
    gsl_matrix_free(Q);
    gsl_matrix_free(R);
    gsl_vector_free(tau);
    gsl_vector_free(norm);
    gsl_permutation_free(p);
    if (rc) {
        if (T)
            gsl_matrix_free(T);
    } else {
        *Tout = T;
    }
    return rc;
}

/* ---------- eigenvalues ---------- */

static void add_row(hs_ak_rows *R, double sigma, double omega, const double *re, const double *im)
{
    R->sigma[R->cnt] = sigma;
    R->omega[R->cnt] = omega;
    memcpy(R->re + R->cnt * R->n, re, R->n * sizeof *re);
    if (im)
        memcpy(R->im + R->cnt * R->n, im, R->n * sizeof *im);
    else
        memset(R->im + R->cnt * R->n, 0, R->n * sizeof *im);
    R->cnt++;
}

/* dq = T y for a real y. */
static void to_model(const gsl_matrix *T, const double *y, double *dq)
{
    gsl_vector_const_view yv = hs_la_vview_const(y, T->size2);
    gsl_vector_view dv = hs_la_vview(dq, T->size1);
    gsl_blas_dgemv(CblasNoTrans, 1.0, T, &yv.vector, 0.0, &dv.vector);
}

/* The rows of a mode of K phi = mu M phi, shape dq in the model's
 * coordinates: mu = omega^2 > 0 gives s = +-i omega (one row), mu < 0 the
 * real pair s = +-sqrt(-mu) (two rows), mu = 0 (to round-off of mumax,
 * the largest |mu| times reduced.kratio)
 * s = 0 twice. */
static void add_sym_mode(hs_ak_rows *R, double u, double mumax, const double *dq)
{
    if (fabs(u) <= 64 * DBL_EPSILON * mumax)
        u = 0;
    if (u > 0) {
        add_row(R, 0, sqrt(u), dq, NULL);
    } else {
        double rt = u < 0 ? sqrt(-u) : 0.0;
        add_row(R, rt, 0, dq, NULL);
        add_row(R, -rt + 0.0, 0, dq, NULL);   /* s = 0 twice: no -0 */
    }
}

#ifdef HS_HAVE_LAPACK
/* LAPACK (built with the BLAS, Makefile): the symmetric eigensolver by
 * divide and conquer, level 3 throughout, where GSL's implicit QR updates
 * the eigenvectors one rotation at a time (70% of modes near the limit). */
void dsyevd_(const char *jobz, const char *uplo, const int *n, double *a, const int *lda,
             double *w, double *work, const int *lwork, int *iwork, const int *liwork,
             int *info);

#define LAPACK_M 256        /* degrees of freedom from which LAPACK solves */

/* Conservative, large: Kt z = mu z (Kt = L^-1 Kr L^-T, symmetrized), y =
 * L^-T z.  0, -1 out of memory, -2 no convergence. */
static int solve_syevd(const reduced *r, const gsl_matrix *Kt, const gsl_matrix *T, hs_ak_rows *R)
{
    size_t m = r->m, n = r->n;
    int mi = (int)m, lwork = -1, liwork = -1, info = 0, iw0 = 0;
    double w0 = 0;
    dsyevd_("V", "U", &mi, NULL, &mi, NULL, &w0, &lwork, &iw0, &liwork, &info);
    lwork = (int)w0;
    liwork = iw0;
    double *A = malloc(m * m * sizeof *A), *mu = malloc(m * sizeof *mu);
    double *work = malloc((size_t)(lwork > 1 ? lwork : 1) * sizeof *work);
    int *iwork = malloc((size_t)(liwork > 1 ? liwork : 1) * sizeof *iwork);
    gsl_matrix *DQ = hs_la_matrix_alloc(m, n);
    int rc = -1;
    if (A && mu && work && iwork && DQ && !info) {
        for (size_t i = 0; i < m; i++)       /* symmetric: row- and column-major alike */
            for (size_t j = 0; j < m; j++)
                A[i * m + j] = 0.5 * (gsl_matrix_get(Kt, i, j) + gsl_matrix_get(Kt, j, i));
        dsyevd_("V", "U", &mi, A, &mi, mu, work, &lwork, iwork, &liwork, &info);
        rc = info ? -2 : 0;
    }
    double mumax = 0;
    for (size_t i = 0; !rc && i < m; i++)
        mumax = fmax(mumax, fabs(mu[i]));
    if (!rc) {
        /* the eigenvectors z_i are the rows of Z (column-major A); all at
         * once: rows y_i^T = z_i^T L^-1, then dq_i^T = y_i^T T^T */
        gsl_matrix_view Z = hs_la_mview(A, m, m);
        gsl_blas_dtrsm(CblasRight, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, r->L,
                       &Z.matrix);
        gsl_blas_dgemm(CblasNoTrans, CblasTrans, 1.0, &Z.matrix, T, 0.0, DQ);
    }
    for (size_t i = 0; !rc && i < m; i++)
        add_sym_mode(R, mu[i], mumax * r->kratio, DQ->data + i * DQ->tda);
    void *v[] = { A, mu, work, iwork };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        free(v[i]);
    if (DQ)
        gsl_matrix_free(DQ);
    return rc;
}

void dgeev_(const char *jobvl, const char *jobvr, const int *n, double *a, const int *lda,
            double *wr, double *wi, double *vl, const int *ldvl, double *vr, const int *ldvr,
            double *work, const int *lwork, int *info);

/* Damped or gyroscopic, large: the first-order form of solve_nonsymm by
 * LAPACK's dgeev (blocked Hessenberg reduction and multishift QR, where
 * GSL's Francis QR works a rotation at a time).  0, -1, -2 as there. */
static int solve_geev(const reduced *r, const gsl_matrix *Kt, const gsl_matrix *Ct,
                      const gsl_matrix *T, hs_ak_rows *R)
{
    size_t m = r->m, n = r->n, m2 = 2 * m;
    int ni = (int)m2, one = 1, lwork = -1, info = 0;
    double w0 = 0;
    dgeev_("N", "V", &ni, NULL, &ni, NULL, NULL, NULL, &one, NULL, &ni, &w0, &lwork, &info);
    lwork = (int)w0;
    double *A = calloc(m2 * m2, sizeof *A), *VR = malloc(m2 * m2 * sizeof *VR);
    double *wr = malloc(m2 * sizeof *wr), *wi = malloc(m2 * sizeof *wi);
    double *work = malloc((size_t)(lwork > 1 ? lwork : 1) * sizeof *work);
    double *yr = malloc(m * sizeof *yr), *yi = malloc(m * sizeof *yi);
    double *dr = malloc(n * sizeof *dr), *di = malloc(n * sizeof *di);
    int rc = -1;
    if (A && VR && wr && wi && work && yr && yi && dr && di && !info) {
        /* column-major: A[i + j m2] = A_ij */
        for (size_t i = 0; i < m; i++) {
            A[i + (m + i) * m2] = 1.0;
            for (size_t j = 0; j < m; j++) {
                A[m + i + j * m2] = -gsl_matrix_get(Kt, i, j);
                A[m + i + (m + j) * m2] = -gsl_matrix_get(Ct, i, j);
            }
        }
        dgeev_("N", "V", &ni, A, &ni, wr, wi, NULL, &one, VR, &ni, work, &lwork, &info);
        rc = info ? -2 : 0;
    }
    for (size_t e = 0; !rc && e < m2; e++) {
        if (wi[e] < 0)
            continue;                  /* the conjugate of the pair's first */
        const double *vre = VR + e * m2, *vim = wi[e] > 0 && e + 1 < m2 ? VR + (e + 1) * m2 : NULL;
        for (size_t j = 0; j < m; j++) {
            yr[j] = vre[j];
            yi[j] = vim ? vim[j] : 0.0;
        }
        gsl_vector_view vr = hs_la_vview(yr, m), vi = hs_la_vview(yi, m);
        gsl_blas_dtrsv(CblasLower, CblasTrans, CblasNonUnit, r->L, &vr.vector);
        gsl_blas_dtrsv(CblasLower, CblasTrans, CblasNonUnit, r->L, &vi.vector);
        to_model(T, yr, dr);
        to_model(T, yi, di);
        add_row(R, wr[e], wi[e] > 0 ? wi[e] : 0.0, dr, di);
    }
    void *v[] = { A, VR, wr, wi, work, yr, yi, dr, di };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        free(v[i]);
    return rc;
}
#endif

/* Conservative and undamped: K phi = omega^2 M phi (gsl_eigen_gensymmv),
 * the rows of add_sym_mode. */
static int solve_gensymm(const reduced *r, const gsl_matrix *T, hs_ak_rows *R)
{
    size_t m = r->m, n = r->n;
    gsl_matrix *K = hs_la_matrix_alloc(m, m), *Mc = hs_la_matrix_alloc(m, m);
    gsl_matrix *phi = hs_la_matrix_alloc(m, m);
    gsl_vector *mu = hs_la_vector_alloc(m);
    /* size 0: GSL would report it to its handler */
    gsl_eigen_gensymmv_workspace *ws = m ? gsl_eigen_gensymmv_alloc(m) : NULL;
    double *y = malloc(m * sizeof *y), *dq = malloc(n * sizeof *dq);
    int rc = -1;
    if (K && Mc && phi && mu && ws && y && dq) {
        for (size_t i = 0; i < m; i++)
            for (size_t j = 0; j < m; j++)
                gsl_matrix_set(K, i, j, 0.5 * (gsl_matrix_get(r->Kr, i, j) +
                                               gsl_matrix_get(r->Kr, j, i)));
        gsl_matrix_memcpy(Mc, r->Mr);
        rc = hs_la_gensymmv(K, Mc, mu, phi, ws) ? -2 : 0;
    }
    double mumax = 0;
    for (size_t i = 0; !rc && i < m; i++)
        mumax = fmax(mumax, fabs(gsl_vector_get(mu, i)));
    for (size_t i = 0; !rc && i < m; i++) {
        for (size_t j = 0; j < m; j++)
            y[j] = gsl_matrix_get(phi, j, i);
        to_model(T, y, dq);
        add_sym_mode(R, gsl_vector_get(mu, i), mumax * r->kratio, dq);
    }
    gsl_matrix_free(K);
    gsl_matrix_free(Mc);
    gsl_matrix_free(phi);
    gsl_vector_free(mu);
    if (ws)
        gsl_eigen_gensymmv_free(ws);
    free(y);
    free(dq);
    return rc;
}

/* X <- L^-1 X L^-T (the congruence that turns Mr into the identity). */
static void whiten(const gsl_matrix *L, gsl_matrix *X)
{
    gsl_blas_dtrsm(CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, 1.0, L, X);
    gsl_blas_dtrsm(CblasRight, CblasLower, CblasTrans, CblasNonUnit, 1.0, L, X);
}

/* The first-order form: z = L^T y, x = (z, z'), A = [0 I; -Kt -Ct] with
 * Kt = L^-1 Kr L^-T, Ct = L^-1 Cr L^-T (gsl_eigen_nonsymmv).  Each real
 * eigenvalue and each pair (omega > 0) gives one row; y = L^-T z. */
static int solve_nonsymm(const reduced *r, const gsl_matrix *Kt, const gsl_matrix *Ct,
                         const gsl_matrix *T, hs_ak_rows *R)
{
    size_t m = r->m, n = r->n, m2 = 2 * m;
    gsl_matrix *A = hs_la_matrix_calloc(m2, m2);
    gsl_vector_complex *s = hs_la_vector_complex_alloc(m2);
    gsl_matrix_complex *X = hs_la_matrix_complex_alloc(m2, m2);
    /* size 0: GSL would report it to its handler */
    gsl_eigen_nonsymmv_workspace *ws = m2 ? gsl_eigen_nonsymmv_alloc(m2) : NULL;
    double *yr = malloc(m * sizeof *yr), *yi = malloc(m * sizeof *yi);
    double *dr = malloc(n * sizeof *dr), *di = malloc(n * sizeof *di);
    int rc = -1;
    if (A && s && X && ws && yr && yi && dr && di) {
        for (size_t i = 0; i < m; i++) {
            gsl_matrix_set(A, i, m + i, 1.0);
            for (size_t j = 0; j < m; j++) {
                gsl_matrix_set(A, m + i, j, -gsl_matrix_get(Kt, i, j));
                gsl_matrix_set(A, m + i, m + j, -gsl_matrix_get(Ct, i, j));
            }
        }
        rc = hs_la_nonsymmv(A, s, X, ws) ? -2 : 0;
    }
    for (size_t e = 0; !rc && e < m2; e++) {
        gsl_complex se = gsl_vector_complex_get(s, e);
        if (GSL_IMAG(se) < 0)
            continue;
        for (size_t j = 0; j < m; j++) {
            gsl_complex x = gsl_matrix_complex_get(X, j, e);
            yr[j] = GSL_REAL(x);
            yi[j] = GSL_IMAG(x);
        }
        gsl_vector_view vr = hs_la_vview(yr, m), vi = hs_la_vview(yi, m);
        gsl_blas_dtrsv(CblasLower, CblasTrans, CblasNonUnit, r->L, &vr.vector);
        gsl_blas_dtrsv(CblasLower, CblasTrans, CblasNonUnit, r->L, &vi.vector);
        to_model(T, yr, dr);
        to_model(T, yi, di);
        add_row(R, GSL_REAL(se), GSL_IMAG(se), dr, di);
    }
    gsl_matrix_free(A);
    gsl_vector_complex_free(s);
    gsl_matrix_complex_free(X);
    if (ws)
        gsl_eigen_nonsymmv_free(ws);
    free(yr);
    free(yi);
    free(dr);
    free(di);
    return rc;
}

/* Undamped, without gyroscopic terms, K symmetric: all to round-off
 * relative to the natural frequency scale (a moving chart leaves its
 * cancelled Coriolis terms at that level). */
static int is_conservative(const gsl_matrix *Kt, const gsl_matrix *Ct)
{
    double kmax = max_abs(Kt), cmax = max_abs(Ct), asym = 0;
    for (size_t i = 0; i < Kt->size1; i++)
        for (size_t j = 0; j < i; j++)
            asym = fmax(asym, fabs(gsl_matrix_get(Kt, i, j) - gsl_matrix_get(Kt, j, i)));
    return cmax <= ROUNDOFF * sqrt(kmax) && asym <= ROUNDOFF * kmax;
}

static void rows_free(hs_ak_rows *R)
{
    free(R->sigma);
    free(R->omega);
    free(R->re);
    free(R->im);
}

/* The eigenproblem of the reduced system r in the basis T: rows into md. */
static int eigen(const reduced *r, const gsl_matrix *T, const char *file, hs_modes *md,
                 hs_error *err)
{
    size_t m = r->m, n = r->n, cap = 2 * m;
    hs_ak_rows R = { n, 0, malloc(cap * sizeof(double)), malloc(cap * sizeof(double)),
               malloc(cap * n * sizeof(double)), malloc(cap * n * sizeof(double)) };
    gsl_matrix *Kt = hs_la_matrix_alloc(m, m), *Ct = hs_la_matrix_alloc(m, m);
    int rc = !R.sigma || !R.omega || !R.re || !R.im || !Kt || !Ct ? -1 : 0;
    if (!rc) {
        gsl_matrix_memcpy(Kt, r->Kr);
        gsl_matrix_memcpy(Ct, r->Cr);
        whiten(r->L, Kt);
        if (!is_zero(Ct))                     /* undamped: Ct stays 0 */
            whiten(r->L, Ct);
        md->conservative = is_conservative(Kt, Ct);
#ifdef HS_HAVE_LAPACK
        if (m >= LAPACK_M)
            rc = md->conservative ? solve_syevd(r, Kt, T, &R) : solve_geev(r, Kt, Ct, T, &R);
        else
#endif
            rc = md->conservative ? solve_gensymm(r, T, &R) : solve_nonsymm(r, Kt, Ct, T, &R);
    }
    for (size_t i = 0; !rc && i < R.cnt; i++) {      /* back to the model's time */
        R.sigma[i] *= r->w0;
        R.omega[i] *= r->w0;
        if (!isfinite(R.sigma[i]) || !isfinite(R.omega[i]))
            rc = -3;
    }
    if (!rc)
        rc = hs_ak_finish(&R, md);
    gsl_matrix_free(Kt);
    gsl_matrix_free(Ct);
    rows_free(&R);
    if (rc == -2)
        return hs_error_set(err, HS_EXIT_INCONSISTENT, "the eigensolver did not converge");
    if (rc == -3) {
        rc = hs_error_set(err, HS_EXIT_INCONSISTENT, "an eigenvalue of the linearization is "
                          "beyond the range of doubles (rate scale %.3g per time unit)", r->w0);
        snprintf(err->file, sizeof err->file, "%s", file);
        return rc;
    }
    return rc ? hs_error_nomem(err) : 0;
}

static int modes(hs_an *a, const hs_equil *eq, hs_modes *md, hs_error *err)
{
    memset(md, 0, sizeof *md);
    md->n = a->n;
    md->verdict = HS_AN_STABLE;
    md->stable = 1;
    gsl_matrix *T;
    size_t rank;
    int rc = tangent_basis(a, eq, &T, 1, &rank, err);
    if (rc)
        return rc;
    md->dof = a->n - rank;
    if (md->dof == 0) {
        gsl_matrix_free(T);
        return 0;
    }
    reduced r;
    rc = reduce(a, eq, T, &r, err);
    if (!rc)
        rc = eigen(&r, T, a->m->file, md, err);
    reduced_free(&r);
    gsl_matrix_free(T);
    return rc;
}

int hs_an_modes(hs_an *a, const hs_equil *eq, hs_modes *md, hs_error *err)
{
    return hs_an_modes_lowest(a, eq, 0, md, err);
}

int hs_an_modes_lowest(hs_an *a, const hs_equil *eq, size_t count, hs_modes *md,
                       hs_error *err)
{
    size_t dof = a->n - (a->k < a->n ? a->k : a->n);
    if (count > dof) {
        memset(md, 0, sizeof *md);
        hs_error_set(err, HS_EXIT_USAGE, "%s %zu: more modes than the %zu degrees of "
                     "freedom (n - k)", hs_optname(a->m->names, HS_OPT_MODE_COUNT), count, dof);
        return HS_EXIT_USAGE;
    }
    int r;
    if (hs_ak_sparse(a)) {
        r = hs_ak_sparse_modes(a, eq, count, md, err);
    } else {
        r = modes(a, eq, md, err);
        if (!r && count && md->count > count)
            md->count = count;
    }
    return r;
}

void hs_an_modes_free(hs_modes *md)
{
    if (!md)
        return;
    free(md->sigma);
    free(md->omega);
    free(md->shape);
    free(md->shape_im);
    md->sigma = md->omega = md->shape = md->shape_im = NULL;
}

/* ---------- the state-space matrix ---------- */

static int cmp_size(const void *pa, const void *pb)
{
    size_t x = *(const size_t *)pa, y = *(const size_t *)pb;
    return x < y ? -1 : x > y;
}

/* rows (r) <- r independent rows of G_q (k x n, rank r): the first r
 * pivots of the column-pivoted QR factorization of G_q^T, ascending. */
static int independent_rows(const gsl_matrix *Gq, size_t r, size_t *rows)
{
    size_t k = Gq->size1, n = Gq->size2;
    gsl_matrix *A = hs_la_matrix_alloc(n, k);
    gsl_vector *tau = hs_la_vector_alloc(k < n ? k : n), *norm = hs_la_vector_alloc(k);
    gsl_permutation *p = hs_la_permutation_alloc(k);
    int signum, rc = -1;
    if (A && tau && norm && p) {
        gsl_matrix_transpose_memcpy(A, Gq);
        gsl_linalg_QRPT_decomp(A, tau, p, &signum, norm);
        for (size_t j = 0; j < r; j++)
            rows[j] = gsl_permutation_get(p, j);
        qsort(rows, r, sizeof *rows, cmp_size);
        rc = 0;
    }
    gsl_matrix_free(A);
    gsl_vector_free(tau);
    gsl_vector_free(norm);
    gsl_permutation_free(p);
    return rc;
}

/* lin->solved: the first r pivots of the column-pivoted QR factorization
 * G_q P = Q R (the best-conditioned coordinates to solve for), G_q reduced
 * to r = rank independent rows (redundant constraints add nothing to the
 * linearized constraints); lin->state: the others.  T (n x dof): dq = T y,
 * with y the state coordinates and the solved ones dq_D = -G_D^-1 G_I y
 * from the linearized constraints. */
static int state_basis(hs_an *a, const hs_equil *eq, size_t k, hs_linear *lin, gsl_matrix *T,
                       hs_error *err)
{
    size_t n = a->n, m = n - k;
    gsl_matrix *Gf = jacobian_at(a, eq), *Gq = hs_la_matrix_alloc(k, n);
    gsl_matrix *A = hs_la_matrix_alloc(k, n), *GD = hs_la_matrix_alloc(k, k);
    gsl_vector *tau = hs_la_vector_alloc(k), *norm = hs_la_vector_alloc(n);
    gsl_vector *x = hs_la_vector_alloc(k);
    gsl_permutation *p = hs_la_permutation_alloc(n), *pk = hs_la_permutation_alloc(k);
    size_t *rows = calloc(k, sizeof *rows);
    int rc = 0, signum;
    if (!Gf || !Gq || !A || !GD || !tau || !norm || !x || !p || !pk || !rows ||
        independent_rows(Gf, k, rows)) {
        rc = hs_error_nomem(err);
        goto done;
    }
    for (size_t r = 0; r < k; r++)
        for (size_t c = 0; c < n; c++)
            gsl_matrix_set(Gq, r, c, gsl_matrix_get(Gf, rows[r], c));
    gsl_matrix_memcpy(A, Gq);
    gsl_linalg_QRPT_decomp(A, tau, p, &signum, norm);   /* rank k: tangent_basis */
    unsigned char *is_solved = calloc(n, 1);
    if (!is_solved) {
        rc = hs_error_nomem(err);
        goto done;
    }
    for (size_t j = 0; j < k; j++) {
        lin->solved[j] = gsl_permutation_get(p, j);
        is_solved[lin->solved[j]] = 1;
    }
    qsort(lin->solved, k, sizeof *lin->solved, cmp_size);
    for (size_t i = 0, s = 0; i < n; i++)
        if (!is_solved[i])
            lin->state[s++] = i;
    free(is_solved);
    for (size_t r = 0; r < k; r++)
        for (size_t c = 0; c < k; c++)
            gsl_matrix_set(GD, r, c, gsl_matrix_get(Gq, r, lin->solved[c]));
    gsl_linalg_LU_decomp(GD, pk, &signum);
    gsl_matrix_set_zero(T);
    for (size_t j = 0; j < m; j++) {
        gsl_matrix_set(T, lin->state[j], j, 1.0);
        for (size_t r = 0; r < k; r++)
            gsl_vector_set(x, r, -gsl_matrix_get(Gq, r, lin->state[j]));
        hs_la_lu_svx(GD, pk, x);     /* G_D dq_D = -G_I e_j */
        for (size_t r = 0; r < k; r++)
            gsl_matrix_set(T, lin->solved[r], j, gsl_vector_get(x, r));
    }
done:
    gsl_matrix_free(Gf);
    gsl_matrix_free(Gq);
    gsl_matrix_free(A);
    gsl_matrix_free(GD);
    gsl_vector_free(tau);
    gsl_vector_free(norm);
    gsl_vector_free(x);
    gsl_permutation_free(p);
    gsl_permutation_free(pk);
    free(rows);
    return rc;
}

/* A = [0 I; -Mr^-1 Kr  -Mr^-1 Cr] into lin->A, in the model's time: the
 * balanced blocks times w0^2 and w0.  -1 when an entry is beyond the
 * range of doubles, -2 out of memory. */
static int state_matrix(const reduced *r, hs_linear *lin)
{
    size_t m = r->m, m2 = 2 * m;
    double *A = lin->A;
    int bad = 0;
    memset(A, 0, m2 * m2 * sizeof *A);
    gsl_vector *col = hs_la_vector_alloc(m);
    for (size_t i = 0; i < m; i++)
        A[i * m2 + m + i] = 1.0;
    for (int which = 0; col && which < 2; which++) {
        const gsl_matrix *X = which ? r->Cr : r->Kr;
        for (size_t j = 0; j < m; j++) {
            for (size_t i = 0; i < m; i++)
                gsl_vector_set(col, i, gsl_matrix_get(X, i, j));
            gsl_linalg_cholesky_svx(r->L, col);
            for (size_t i = 0; i < m; i++) {
                double v = 0.0 - gsl_vector_get(col, i);
                v = which ? v * r->w0 : v * r->w0 * r->w0;
                A[(m + i) * m2 + (which ? m : 0) + j] = v;
                bad |= !isfinite(v);
            }
        }
    }
    if (!col)
        return -2;
    gsl_vector_free(col);
    return -bad;
}

static int linearize(hs_an *a, const hs_equil *eq, hs_linear *lin, hs_error *err)
{
    size_t n = a->n, k = a->k;
    memset(lin, 0, sizeof *lin);
    lin->n = n;
    lin->k = k;
    if (hs_ak_dense_only(a, "the state-space matrix", err))
        return err->code;
    gsl_matrix *T;
    size_t rank;      /* redundant constraints: rank < k coordinates solved */
    int rc = tangent_basis(a, eq, &T, 1, &rank, err);   /* the rank check, naming a constraint */
    gsl_matrix_free(T);
    if (rc)
        return rc;
    size_t m = n - rank;
    lin->dof = m;
    lin->nsolved = rank;
    lin->state = calloc(m + 1, sizeof *lin->state);
    lin->solved = calloc(rank + 1, sizeof *lin->solved);
    lin->A = calloc(4 * m * m + 1, sizeof *lin->A);
    if (!lin->state || !lin->solved || !lin->A)
        return hs_error_nomem(err);
    if (m == 0) {
        for (size_t i = 0; i < n; i++)
            lin->solved[i] = i;
        return 0;
    }
    if (!(T = hs_la_matrix_alloc(n, m)))
        return hs_error_nomem(err);
    if (rank) {
        rc = state_basis(a, eq, rank, lin, T, err);
    } else {
        for (size_t i = 0; i < n; i++)
            lin->state[i] = i;
        gsl_matrix_set_identity(T);
    }
    reduced r;
    memset(&r, 0, sizeof r);
    if (!rc)
        rc = reduce(a, eq, T, &r, err);
    int sm = rc ? 0 : state_matrix(&r, lin);
    if (sm == -2)
        rc = hs_error_nomem(err);
    if (sm == -1) {
        rc = hs_error_set(err, HS_EXIT_INCONSISTENT, "an entry of the state-space matrix is "
                          "beyond the range of doubles (rate scale %.3g per time unit)", r.w0);
        snprintf(err->file, sizeof err->file, "%s", a->m->file);
    }
    reduced_free(&r);
    gsl_matrix_free(T);
    return rc;
}

int hs_an_linearize(hs_an *a, const hs_equil *eq, hs_linear *lin, hs_error *err)
{
    int r = linearize(a, eq, lin, err);
    return r;
}

void hs_an_linear_free(hs_linear *lin)
{
    if (!lin)
        return;
    free(lin->state);
    free(lin->solved);
    free(lin->A);
    lin->state = lin->solved = NULL;
    lin->A = NULL;
}
