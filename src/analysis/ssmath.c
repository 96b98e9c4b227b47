/* Poles, transmission zeros and frequency response of a state-space model
 * (analysis.h). */
#include "internal.h"
#include "../linalg/linalg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_complex_math.h>
#include <gsl/gsl_eigen.h>
#include <gsl/gsl_linalg.h>

static int poles(const hs_statespace *ss, double *re, double *im)
{
    size_t N = ss->nx;
    if (!N)
        return 0;
    gsl_matrix *A = hs_la_matrix_alloc(N, N);
    gsl_vector_complex *ev = hs_la_vector_complex_alloc(N);
    /* size 0: GSL would report it to its handler */
    gsl_eigen_nonsymm_workspace *w = N ? gsl_eigen_nonsymm_alloc(N) : NULL;
    int rc = -1;
    if (A && ev && w) {
        memcpy(A->data, ss->A, N * N * sizeof *ss->A);   /* tda = N */
        rc = hs_la_nonsymm(A, ev, w) ? -2 : 0;
        for (size_t i = 0; !rc && i < N; i++) {
            gsl_complex z = gsl_vector_complex_get(ev, i);
            re[i] = GSL_REAL(z);
            im[i] = GSL_IMAG(z);
        }
    }
    gsl_matrix_free(A);
    gsl_vector_complex_free(ev);
    if (w)
        gsl_eigen_nonsymm_free(w);
    return rc;
}

int hs_ss_poles(const hs_statespace *ss, double *re, double *im)
{
    int r = poles(ss, re, im);
    return r;
}

/* 1 when the pair's transfer function is 0 (d and every Markov parameter
 * c A^i b, i < N, at round-off of |c| |A|^i |b|), 0 otherwise, -1 out of
 * memory. */
static int zero_transfer(const hs_statespace *ss, size_t i, size_t j)
{
    size_t N = ss->nx, nu = ss->nu;
    if (ss->D[i * nu + j] != 0)
        return 0;
    double *x = malloc((N + 1) * sizeof *x), *y = malloc((N + 1) * sizeof *y);
    if (!x || !y) {
        free(x);
        free(y);
        return -1;
    }
    double na = 0, nb = 0, nc = 0, bound;
    for (size_t r = 0; r < N; r++) {
        double s = 0;
        for (size_t c = 0; c < N; c++)
            s += fabs(ss->A[r * N + c]);
        na = fmax(na, s);
        x[r] = ss->B[r * nu + j];
        nb += fabs(x[r]);
        nc += fabs(ss->C[i * N + r]);
    }
    bound = nb * nc;
    int zero = 1;
    for (size_t k = 0; k < N && zero; k++) {
        double h = 0;
        for (size_t r = 0; r < N; r++)
            h += ss->C[i * N + r] * x[r];
        zero = fabs(h) <= 1e-13 * bound;
        for (size_t r = 0; r < N; r++) {             /* x = A x */
            double s = 0;
            for (size_t c = 0; c < N; c++)
                s += ss->A[r * N + c] * x[c];
            y[r] = s;
        }
        memcpy(x, y, N * sizeof *x);
        bound *= na;
    }
    free(x);
    free(y);
    return zero;
}

/* The finite generalized eigenvalues of [A b; c d] - s [I 0; 0 0]: an
 * eigenvalue is infinite where |alpha| exceeds 1e8 |beta| times the size
 * of the pencil (QZ leaves beta at round-off there). */
static int zeros(const hs_statespace *ss, size_t i, size_t j, double *re, double *im,
                 size_t *nz)
{
    size_t N = ss->nx, P = N + 1, nu = ss->nu;
    *nz = 0;
    int z0 = zero_transfer(ss, i, j);
    if (z0)
        return z0;
    gsl_matrix *A = hs_la_matrix_calloc(P, P), *B = hs_la_matrix_calloc(P, P);
    gsl_vector_complex *alpha = hs_la_vector_complex_alloc(P);
    gsl_vector *beta = hs_la_vector_alloc(P);
    /* size 0: GSL would report it to its handler */
    gsl_eigen_gen_workspace *w = P ? gsl_eigen_gen_alloc(P) : NULL;
    int rc = -1;
    if (A && B && alpha && beta && w) {
        double scale = 1;
        for (size_t r = 0; r < N; r++) {
            for (size_t c = 0; c < N; c++)
                gsl_matrix_set(A, r, c, ss->A[r * N + c]);
            gsl_matrix_set(A, r, N, ss->B[r * nu + j]);
            gsl_matrix_set(A, N, r, ss->C[i * N + r]);
            gsl_matrix_set(B, r, r, 1.0);
        }
        gsl_matrix_set(A, N, N, ss->D[i * nu + j]);
        for (size_t e = 0; e < P * P; e++)
            scale = fmax(scale, fabs(A->data[e]));
        rc = gsl_eigen_gen(A, B, alpha, beta, w) ? -2 : 0;
        for (size_t e = 0; !rc && e < P; e++) {
            gsl_complex a = gsl_vector_complex_get(alpha, e);
            double b = gsl_vector_get(beta, e), mag = gsl_complex_abs(a);
            if (!(fabs(b) * 1e8 * scale > mag) || b == 0)
                continue;
            re[*nz] = GSL_REAL(a) / b;
            im[*nz] = GSL_IMAG(a) / b;
            if (fabs(re[*nz]) <= 1e-12 * scale)     /* round-off of a zero at 0 */
                re[*nz] = 0;
            if (fabs(im[*nz]) <= 1e-12 * scale)
                im[*nz] = 0;
            ++*nz;
        }
    }
    gsl_matrix_free(A);
    gsl_matrix_free(B);
    gsl_vector_complex_free(alpha);
    gsl_vector_free(beta);
    if (w)
        gsl_eigen_gen_free(w);
    return rc;
}

int hs_ss_zeros(const hs_statespace *ss, size_t i, size_t j, double *re, double *im,
                size_t *nz)
{
    int r = zeros(ss, i, j, re, im, nz);
    return r;
}

static int response(const hs_statespace *ss, double w, double *re, double *im)
{
    size_t N = ss->nx, nu = ss->nu, ny = ss->ny;
    for (size_t e = 0; e < ny * nu; e++) {
        re[e] = ss->D[e];
        im[e] = 0;
    }
    if (!N)
        return 0;
    gsl_matrix_complex *Z = hs_la_matrix_complex_calloc(N, N);
    gsl_permutation *p = hs_la_permutation_alloc(N);
    gsl_vector_complex *x = hs_la_vector_complex_alloc(N);
    int rc = -1, signum;
    if (Z && p && x) {
        for (size_t r = 0; r < N; r++)
            for (size_t c = 0; c < N; c++)       /* j w I - A */
                gsl_matrix_complex_set(Z, r, c, gsl_complex_rect(-ss->A[r * N + c],
                                                                 r == c ? w : 0.0));
        rc = gsl_linalg_complex_LU_decomp(Z, p, &signum) ? -2 : 0;
        for (size_t r = 0; !rc && r < N; r++)
            if (gsl_complex_abs(gsl_matrix_complex_get(Z, r, r)) == 0)
                rc = -2;
        for (size_t j = 0; !rc && j < nu; j++) {
            for (size_t r = 0; r < N; r++)
                gsl_vector_complex_set(x, r, gsl_complex_rect(ss->B[r * nu + j], 0));
            hs_la_complex_lu_svx(Z, p, x);
            for (size_t i = 0; i < ny; i++)
                for (size_t r = 0; r < N; r++) {
                    gsl_complex z = gsl_vector_complex_get(x, r);
                    re[i * nu + j] += ss->C[i * N + r] * GSL_REAL(z);
                    im[i * nu + j] += ss->C[i * N + r] * GSL_IMAG(z);
                }
        }
    }
    gsl_matrix_complex_free(Z);
    gsl_permutation_free(p);
    gsl_vector_complex_free(x);
    return rc;
}

int hs_ss_response(const hs_statespace *ss, double w, double *re, double *im)
{
    int r = response(ss, w, re, im);
    return r;
}
