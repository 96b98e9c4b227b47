/* Private to src/dynamics (included through internal.h only): the run
 * state hs_work, the scratch and the results of one evaluation, allocated
 * once per run (hs_work_new), and the thresholds the solves decide by.
 * The model stays const; everything an evaluation changes lives here, as
 * MuJoCo's mjData beside mjModel.  Outside the module hs_work is an
 * incomplete type read through the accessors of dynamics.h. */
#ifndef HS_DYNAMICS_WORK_H
#define HS_DYNAMICS_WORK_H

#include <stdint.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "../linalg/linalg.h"
#include "../native/native.h"
#include "../model/model.h"
#include "dynamics.h"

/* C is factored as a band matrix when k >= HS_BAND_MIN_K and its
 * bandwidth is at most k / HS_BAND_RATIO (measured: bench/README.md). */
#define HS_BAND_MIN_K 8
#define HS_BAND_RATIO 4
/* Otherwise C is factored as a sparse matrix (KLU, linalg/sparse.c) when
 * k >= HS_SPARSE_MIN_K and its pairs fill at most 1 / HS_SPARSE_RATIO of
 * k x k (a cloth, a mesh: no band, and a dense C would cost k^3 / 3);
 * by CHOLMOD (linalg/spd.c). */
#define HS_SPARSE_MIN_K 64
#define HS_SPARSE_RATIO 16
/* C is factored by the written-out dense Cholesky up to this size (GSL's
 * goes through BLAS calls that cost more than the arithmetic at k = 2). */
#define HS_SMALL_K 16

/* C's reciprocal condition number below this stops a run (exit 4):
 * the constraints are (numerically) dependent there.  The 1-norm estimate
 * costs as much as the rest of a small right-hand side, so between output
 * rows it runs only when the cheap bound (min L_ii / max L_ii)^2 >= rcond_2
 * from the Cholesky factor falls below HS_RCOND_PROXY; at every row (and
 * with w->full_rcond) it always runs. */
#define HS_RCOND_MIN 1e-13
#define HS_RCOND_PROXY 1e-6


/* On the small dense path (k <= 16, not strict) a row whose pivot ratio is
 * below HS_PIVOT_SKIP is dependent (within 1e-5 rad of the span of the
 * rows before it): the Cholesky skips it, the others give a multiplier,
 * and its least-norm version comes from the kernel the skipped rows span
 * (linalg.h: hs_la_small_cholesky_skip, hs_la_small_minnorm).  Redundant
 * constraints thus keep the fast path. */
#define HS_PIVOT_SKIP 1e-10
/* The run's own threshold (robust.c): the rank of G_q during a singular
 * passage.  Below it a direction's multiplier is dropped (an O(1) error in
 * the force for as long as it stays below); above it the multiplier is
 * -d / sigma^2 from a right-hand side whose drift (the stages lie off the
 * manifold by the local error) it amplifies as 1 / sigma.  Measured on the
 * N-four-bar at rtol 1e-10 (rk8pd, dop853; three initial speeds): 1e-5
 * gives 2.6e-7 to 8.8e-6, 3e-5 gives 3e-10 to 1e-8, 1e-4 4e-9 to 4e-8,
 * 1e-6 and below 1e-5 to a stop (tests/check_mechanisms.c) */
#define HS_SV_DYN_RTOL 3e-5
#define HS_LOCKUP_RTOL 1e-1

typedef struct hs_chainwork hs_chainwork;   /* dynamics/chain.c */
typedef struct hs_heldwork hs_heldwork;     /* dynamics/held.c */

struct hs_work {
    double *in;            /* [nin] VM inputs: t, q, q', parameters */
    size_t *tab_hint;      /* [model ntab] the input tables' last pieces */
    double *rdyn, *raux, *rpos;  /* VM scratch registers */
    /* native kernels of prog_dyn, prog_aux, prog_pos, prog_out, prog_ev
     * (src/native; the same numbers as the VM, bit for bit), or NULL: the VM */
    hs_kernel_fn kdyn, kaux, kpos, kout, kev, kchain;
    hs_chainwork *cw;      /* the structured embedding (model.h: hs_chain), or NULL */
    double *dyn, *aux, *pos;     /* program outputs */
    double *Minv;          /* [n] diagonal M^-1 (diagonal kinds) */
    gsl_matrix *M;         /* n x n, Cholesky factor (full kind) */
    gsl_matrix *C;         /* k x k (dense path) */
    gsl_matrix *Cb;        /* k x (bw+1) band storage: Cb(j, i-j) = C(i, j) */
    int banded;            /* C factored as a band matrix */
    hs_la_spd *Cs;         /* C factored as a sparse matrix (CHOLMOD), or NULL */
    size_t bw;             /* lower bandwidth of C */
    size_t npair;          /* pairs of G_q entries sharing a column (i >= j) */
    uint32_t *pair_i, *pair_j, *pair_pi, *pair_pj; /* [npair] rows, entries */
    gsl_matrix *Y;         /* k x n: row i = (M^-1 G_q^T)_i (full kind) */
    double *Gqd;           /* [k*n] dense G_q (projection, rank), allocated by the
                            * first hs_dyn_constraints (NULL until then) */
    gsl_vector *z;         /* n: M^-1 Q */
    gsl_vector *rhs;       /* k */
    gsl_vector *work3k;    /* 3k: rcond */
    gsl_vector *tmpn;      /* n */
    double *Lambda;        /* [k] multipliers of the last evaluation */
    double *a;             /* [n] accelerations of the last evaluation */
    double T;              /* v^T M v / 2 at the last evaluation (hs_dyn_kinetic
                            * adds what an embedding's T has beyond it) */
    long nrhs;             /* right-hand-side evaluations */
    int full_rcond;        /* 1: estimate C's condition on every evaluation */
    double rcond;          /* C's reciprocal condition (estimate or bound) */
    hs_error err;          /* why the last call failed */
    int fail_kind;         /* HS_FAIL_* of the last failure */
    double *rout, *out;    /* prog_out: scratch, the outputs (outputs.c) */
    double *rev, *ev;      /* prog_ev: scratch, the event functions */
    unsigned char *released; /* [k] 1: the constraint is let go (an event's
                            * release): its multiplier is 0 and C is formed
                            * without it (held.c); NULL while none is */
    size_t nreleased;
    hs_heldwork *hw;       /* the held rows' system (held.c), from the first release */
    /* friction (impact.c): NULL until a run sets it up (hs_dyn_friction_alloc) */
    signed char *fdir;     /* [nfriction] 0 sticking (its row held), +-1 the
                            * direction it slides in (row let go) */
    double *Qx;            /* [n] the sliding elements' forces, added to Q */
    double *goff;          /* [k] the slip held by a sticking element (its G) */
    double *Ff;            /* [4 nfriction] their forces: applied, new, the
                            * previous iterate and its residual */
    /* the rank-revealing solve (robust_solve in dynamics.c) */
    int strict;            /* 1: a singular or ill-conditioned C stops the run
                            * (consistency.dependent: reject) */
    int mass_zero;         /* a constant diagonal mass with zero entries */
    size_t rank0;          /* rank of G_q at the start (hs_cons_start; k before) */
    size_t rank;           /* numerical rank of G_q at the last evaluation */
    int robust;            /* the last evaluation went through robust_solve */
    int augmented;         /* ... with M + alpha G_q^T G_q (singular M) */
    long nrobust;          /* evaluations through robust_solve */
    long nsingular;        /* evaluations where C was ill-conditioned beyond
                            * the redundancy at the start (scaled rcond < HS_PIVOT_ROBUST) */
    double worst_rcond;    /* the smallest such reciprocal condition (1: none) */
    int near_singular;     /* set by such an evaluation; the stepper clears it
                            * (a projection follows the step: stepper.c) */
    gsl_matrix *rL;        /* n x n: M (or M + alpha G_q^T G_q), its Cholesky factor */
    gsl_matrix *rA, *rV;   /* max(n,k) x min(n,k), min x min: SVD of B^T or B */
    gsl_vector *rS;        /* min(n,k): singular values */
    double *rG, *rBt;      /* [k*n]: dense G_q; rows L^-1 G_q,i^T */
    double *rg, *rr;       /* [k]: gamma (+ Baumgarte), the right-hand side */
    double *rb;            /* [n]: L^-1 Q */
    gsl_vector *rwork;     /* min(n,k): SVD scratch */
    double *rH, *rc, *rD;  /* [p*p], [p]: the minimum-norm system; [k] row norms of B */
    double *Cdiag;         /* [k] C's diagonal before GSL's Cholesky (pivot ratios) */
    unsigned char *skip;   /* [k] rows the small Cholesky skipped (dependent) */
    size_t nskip;          /* how many, at the last evaluation */
    double *mnwork;        /* [2k^2 + k] hs_la_small_minnorm's scratch (k <= 16) */
};

/* Small reads of the work every file of the module makes, inline here
 * (dynamics.h has the same as functions for the other modules). */

static inline double hs_dyn_gq_dot_(const hs_model *m, const hs_work *w, size_t i,
                                    const double *x)
{
    const double *Gz = w->pos + m->k;
    double s = 0;
    for (int z = m->gq_start[i]; z < m->gq_start[i + 1]; z++)
        s += Gz[z] * x[m->gq_col[z]];
    return s;
}

static inline int hs_dyn_is_released_(const hs_work *w, size_t j)
{
    return w->released && w->released[j];
}

/* The sizes of one impact problem (impact.c). */
#define HS_IMPACT_ENUM 12   /* up to this many contacts: every active set (2^12) */
#define HS_IMPACT_MAX 200   /* contacts in one impact problem (Murty's pivoting) */
#define HS_IMPACT_ROWS 256  /* rows (constraints held and contacts) in it */
#endif
