/* Private to src/flow: the variational system and what its files share.
 *
 *   variational.c  the programs (accelerations, their exact Jacobians, the
 *                  tangent space), the augmented ODE
 *   floquet.c      the monodromy and its multipliers; Lyapunov exponents */
#ifndef HS_FL_INTERNAL_H
#define HS_FL_INTERNAL_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_permutation.h>

#include "flow.h"
#include "../expr/expr.h"
#include "../native/native.h"

struct hs_stepper;

/* The non-zero entries (r[e], c[e]) of a matrix, outputs off.. of a program. */
typedef struct hs_fl_blk {
    size_t off, cnt, cap;
    int *r, *c;
} hs_fl_blk;

struct hs_fl {
    hs_model *m;
    size_t n, k;
    int autonomous;                /* M, Q, G_q, gamma, G do not read t */
    const struct hs_stepper *step;
    double rtol, atol;
    int *sym_a, *sym_lam;          /* the symbols a_i and Lambda_j of the residuals */
    /* prog_acc: M (lower) | Q | G_q | gamma | G | Gdot | dGdot/dq */
    hs_prog *prog_acc;
    hs_kernel_fn kacc, kjac;       /* their native kernels (NULL: the VM) */
    hs_fl_blk bM, bQ, bGq, bgam, bG, bGd, bGdq;
    /* prog_jac: dr/dq | dr/dv | ds/dq | ds/dv */
    hs_prog *prog_jac;
    hs_fl_blk bRq, bRv, bSq, bSv;
    size_t nacc, njac, nin;
    double *in, *regs, *out_acc, *out_jac;
    gsl_matrix *K;                 /* the saddle-point matrix (LU) */
    double *rhs, *rhsp;            /* [(n + k) 2n]: da/dx's right-hand sides, scratch */
    gsl_permutation *perm;
    gsl_vector *col;
    double *a, *lam;               /* the last evaluation: a [n], Lambda [k], */
    double *Aq, *Av;               /* [(n + k) x n]: da/dq, then dLambda/dq (and in v) */
    double *dir;                   /* accel_dir's right-hand sides and solutions */
    size_t dircap;
    /* the sparse factorization of K (saddle.c; NULL below HS_FL_SPARSE_MIN):
     * contribution t is sp_sign[t] out_acc[sp_src[t]] */
    struct hs_la_sparse *sp;
    size_t sp_nt, *sp_src;
    signed char *sp_sign;
    int sp_off;                    /* hs_fl_use_sparse(f, 0): always dense */
    int fact_sparse;               /* the last factorization: sparse (1) or f->K */
    /* [I J^T; J 0], J = [G_q 0; dGdot/dq G_q]: the sparse projection onto
     * the tangent space (hs_fl_project_sparse; made at its first call) */
    struct hs_la_sparse *pj;
    size_t pj_nt, *pj_src;
    unsigned long steps, evals;    /* accepted steps and ODE right-hand sides, all runs */
};

/* Program p, or its native kernel k when there is one (the same doubles
 * bit for bit, src/native). */
static inline void hs_fl_run(hs_kernel_fn k, const hs_prog *p, const double *in,
                             double *regs, double *out)
{
    if (k)
        k(in, regs, out);
    else
        hs_prog_eval(p, in, regs, out);
}

/* The saddle-point matrix K = [M -G_q^T; G_q 0] at the last evaluation
 * (saddle.c).  From this many unknowns n + k it is factored sparse along
 * the ODE: every size (`run --sensitivity g,th` over 5 s of chains in
 * Cartesian coordinates, CPU, dense LU against KLU, median of 5
 * interleaved: n + k = 6 1.19x, 12 1.23x, 18 1.36x, 33 1.96x, 48 2.16x,
 * 96 3.84x). */
#define HS_FL_SPARSE_MIN 1
/* its pattern (0, or -1 out of memory); freed with hs_fl_saddle_free */
int hs_fl_saddle_new(hs_fl *f);
void hs_fl_saddle_free(hs_fl *f);
/* The dense arrays (K, its permutation, da/dx's right-hand sides and
 * solutions: (n + k)^2 and (n + k) 2n doubles), allocated for n + k <=
 * HS_FL_MAX only: 0, or -1 out of memory */
int hs_fl_saddle_dense(hs_fl *f);
/* K from out_acc, factored (dense: GSL's LU into f->K, whatever the
 * size; else sparse where there is a pattern; sparse always without the
 * dense arrays): 0, or -1 singular */
int hs_fl_saddle_factor(hs_fl *f, int dense);
/* X <- K^-1 X, ncol right-hand sides (X row-major, (n + k) x ncol), tmp
 * [(n + k) ncol] scratch (not read for ncol = 1: NULL is fine): 0, or -1
 * where the result is not finite */
int hs_fl_saddle_solve(hs_fl *f, double *X, double *tmp, size_t ncol);
/* The columns of P (2n x ncol) projected onto ker J through [I J^T; J 0]
 * at out_acc (hs_fl_project_sparse): 0; -1 out of memory, 1 a non-finite
 * G_q or dGdot/dq, 2 the matrix singular (dependent constraints). */
int hs_fl_saddle_project(hs_fl *f, double *P, size_t ncol);

/* K^-1 [dr/dq dr/dv; ds/dq ds/dv] P, P (2n x ncol) the rows dq then dv,
 * at f's last evaluation (variational.c): *Y [(n + k) x ncol] in f's
 * scratch, minus the derivatives of a and Lambda along P.  0, or an exit
 * code with err. */
int hs_fl_dir(hs_fl *f, double t, const double *P, size_t ncol, double **Y, hs_error *err);

/* prog_acc at (t, q, v) into out_acc. */
void hs_fl_eval_acc(hs_fl *f, double t, const double *q, const double *v);
/* Add a block's entries to X (row-major, leading dimension ld); sym: also
 * at (c, r). */
void hs_fl_blk_fill(const hs_fl_blk *k, const double *out, double *X, size_t ld, int sym);

/* The residuals r (n) and s (k) with the parameters replaced through map
 * (variational.c): 0, or -1 out of memory. */
int hs_fl_residuals(hs_fl *f, const hs_node *const *map, size_t nmap, const hs_node **out);

/* The start state (q0, v0) projected onto the constraints at t0
 * (floquet.c): 0, or an exit code with err. */
int hs_fl_start_state(hs_fl *f, double *x, hs_error *err);

/* The inhomogeneous term of the tangent columns: called after the
 * homogeneous part of dP/dt is formed, with f's last evaluation at (t, x)
 * (a, Lambda and the saddle-point factorization); adds to dV, the rows
 * dv' (n x ncol).  0, or an exit code with err. */
typedef int (*hs_fl_force_fn)(void *ctx, double t, double *dV, hs_error *err);
int hs_fl_propagate_forced(hs_fl *f, double t0, double t1, double *x, double *P, size_t ncol,
                           hs_fl_force_fn force, void *fctx, hs_error *err);

/* A watch on the accepted steps of a propagation: fn(ctx, t, y, err) after
 * each, y = (x, P) at its end (t_prev the step's start and y_prev [2n (1 +
 * ncol)], the caller's, the state there): 0 goes on, 1 stops the
 * propagation there (hit set, t_hit the step's end), -1 an error in err. */
typedef struct hs_fl_watch {
    int (*fn)(void *ctx, double t, const double *y, hs_error *err);
    void *ctx;
    double *y_prev;
    double t_prev, t_hit;
    int hit;
} hs_fl_watch;
/* hs_fl_propagate_forced under a watch: the steps the same as without. */
int hs_fl_propagate_watched(hs_fl *f, double t0, double t1, double *x, double *P,
                            size_t ncol, hs_fl_force_fn force, void *fctx, hs_fl_watch *wt,
                            hs_error *err);

#endif
