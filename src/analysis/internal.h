/* Private to src/analysis: the analysis object and what its files share.
 *
 *   kernels.c      the time check, the derivative kernels and their two
 *                  programs, evaluation into dense matrices
 *   equilibrium.c  Newton on the equilibrium conditions
 *   modes.c        the linearization on the tangent space, eigenvalues,
 *                  mode shapes, the state-space matrix
 *   shapes.c       the eigensolvers' rows into hs_modes: sorted, complex
 *                  shapes normalized, round-off flushed, the verdict
 *   redundant.c    the rank of G_q as a run decides it; Newton's step with
 *                  the constraints reduced to that rank */
#ifndef HS_AN_INTERNAL_H
#define HS_AN_INTERNAL_H

#include <gsl/gsl_matrix.h>

#include "analysis.h"

/* A sparse list of matrix entries: entry e of a program block sits at
 * (r[e], c[e]); g[e] is the constraint of a Hessian entry. */
typedef struct hs_ak_list {
    size_t cnt;
    int *r, *c, *g;
} hs_ak_list;

struct hs_an {
    hs_model *m;
    size_t n, k;
    /* prog_eq: Q(q,0) [n] | G [k] | G_q [gq] | dQ(q,0)/dq [qq] | d2G_j/dq2 [hg]
     * (the Hessian entries with r >= c; used symmetrically) */
    hs_prog *prog_eq;
    hs_ak_list gq, qq, hg;
    size_t off_G, off_Gq, off_Qq, off_Hg, neq;
    /* prog_lin: M lower triangle [mm] | dQ/dv at v = 0 [qv] */
    hs_prog *prog_lin;
    hs_ak_list mm, qv;
    size_t off_Qv, nlin;
    double *in;            /* [nin] VM inputs: t = t0, q, v = 0, parameters */
    size_t nin;
    double *regs;          /* VM scratch (the larger program's) */
    double *out_eq, *out_lin;
};

/* Evaluate prog_eq at q: out_eq.  Returns 1 when every output is finite. */
int hs_ak_eval_eq(hs_an *a, const double *q);
/* Evaluate prog_lin at q: out_lin (finite: 1). */
int hs_ak_eval_lin(hs_an *a, const double *q);
/* From the last hs_ak_eval_eq: G_q (k x n), and
 * S = dQ(q,0)/dq + sum_j lambda_j d2G_j/dq2 (n x n). */
void hs_ak_fill_Gq(const hs_an *a, gsl_matrix *Gq);
void hs_ak_fill_S(const hs_an *a, const double *lambda, gsl_matrix *S);
/* From the last hs_ak_eval_lin: M (n x n) and D = dQ/dv at v = 0. */
void hs_ak_fill_M(const hs_an *a, gsl_matrix *M);
void hs_ak_fill_D(const hs_an *a, gsl_matrix *D);
/* After a non-finite evaluation of prog_eq (lin = 0) or prog_lin (1) at q:
 * err (code) with the operation and its source position; returns code. */
int hs_ak_nonfinite(hs_an *a, int lin, const double *q, int code, const char *when,
                    hs_error *err);

/* The rows an eigensolver collects: s = sigma + i omega, the shape dq
 * (re, im) in the model's coordinates, unscaled. */
typedef struct hs_ak_rows {
    size_t n, cnt;
    double *sigma, *omega, *re, *im;   /* [cap], [cap * n] */
} hs_ak_rows;

/* The rows sorted (by omega, then sigma descending) into md (allocated
 * here), the shapes normalized, the verdict; 0, or -1 out of memory. */
int hs_ak_finish(const hs_ak_rows *R, hs_modes *md);

/* Format x into buf (32 bytes): the shortest exact form. */
const char *hs_ak_num(char *buf, double x);
/* "x = 1, y = -2" of the point q (truncated to cap). */
void hs_ak_point(const hs_an *a, const double *q, char *buf, size_t cap);

/* T (n x (n - k)) = an orthonormal basis of ker G_q by the blocked QR of
 * G_q^T (Gq k x n): 0, 1 when a pivot falls below rank_tol of the largest
 * column (rank deficient: use the pivoted QR), -1 out of memory. */
int hs_ak_tangent_blocked(const gsl_matrix *Gq, gsl_matrix *T, double rank_tol);

/* Equilibrated LU pivot ratio below this: singular. */
#define HS_AK_PIVOT_TOL 1e-13

/* The rank of G_q (k x n) as a run decides it (dynamics.h: the singular
 * values of G_q with rows scaled to unit length, below HS_SV_RTOL of the
 * largest, are 0); k when the SVD fails. */
size_t hs_ak_rank(const gsl_matrix *Gq);

/* Newton's step on Q(q,0) + G_q^T lambda = 0, G = 0 with the constraints
 * reduced to rank r (redundant.c): dq [n] and the new multipliers lambda
 * [k] (lambda = D U_r mu, no component the dropped directions carry), from
 * S (n x n, internal.h: hs_ak_fill_S), Q(q,0) [n] and G [k].  0, or -1 when
 * the reduced system is singular too (then the coordinates are
 * undetermined) or out of memory. */
int hs_ak_reduced_step(const gsl_matrix *Gq, const gsl_matrix *S, const double *Q,
                       const double *G, size_t r, double *dq, double *lambda);

/* q (in place) onto G = 0 by least-norm Gauss-Newton steps (G_q reduced
 * to its rank, a halving line search on max_j |G_j| / |grad G_j|), the
 * rank of G_q there (hs_ak_rank) into *rank: 0; -1 when the projection does
 * not converge (q is then the best point met) or out of memory. */
int hs_ak_project(hs_an *a, double *q, size_t *rank);

#endif
