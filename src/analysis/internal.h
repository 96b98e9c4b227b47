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
    hs_an_path path;       /* hs_an_set_path: dense, sparse or by size */
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

/* ---------- the sparse path (sparse.c, sequil.c, lanczos.c) ---------- */

/* The saddle-point matrix [A G_q^T; G_q 0] over (q, lambda), N = n + k,
 * A = cS S + cM M (S of hs_ak_fill_S, M of hs_ak_fill_M), factored by KLU
 * (linalg: hs_la_sparse); the pattern of S, M and G_q fixed at _new. */
typedef struct hs_ak_saddle hs_ak_saddle;
hs_ak_saddle *hs_ak_saddle_new(const hs_an *a);         /* NULL: out of memory */
void hs_ak_saddle_free(hs_ak_saddle *s);                  /* NULL is fine */
/* The values from the last hs_ak_eval_eq (S, G_q) and, when cM != 0, the
 * last hs_ak_eval_lin (M); then the factorization: 0, or -1 singular. */
int hs_ak_saddle_factor(hs_ak_saddle *s, const double *lambda, double cS, double cM);
/* x [N] <- the saddle matrix^-1 x (after hs_ak_saddle_factor). */
void hs_ak_saddle_solve(hs_ak_saddle *s, double *x);
/* y [n] += M x, M from the last hs_ak_eval_lin (symmetric from its lower
 * triangle). */
void hs_ak_M_mul(const hs_an *a, const double *x, double *y);
/* y [n] = S x from the last hs_ak_eval_eq; with absval, |S| |x|. */
void hs_ak_S_mul(const hs_an *a, const double *lambda, const double *x, double *y,
                 int absval);

/* Exit 2 (err set) when a is too large for the dense-only analysis what
 * (linearize, the state-space model); else 0. */
int hs_ak_dense_only(const hs_an *a, const char *what, hs_error *err);
/* Whether the analysis of a takes the sparse path. */
int hs_ak_sparse(const hs_an *a);
/* The sparse equilibrium (sequil.c), as hs_an_equilibrium. */
int hs_ak_sparse_equilibrium(hs_an *a, const double *q_start, hs_equil *eq, hs_error *err);
/* The count lowest modes (lanczos.c), as hs_an_modes_lowest. */
int hs_ak_sparse_modes(hs_an *a, const hs_equil *eq, size_t count, hs_modes *md,
                       hs_error *err);

#endif
