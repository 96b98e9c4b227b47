/* The Lagrange-multiplier equations (doc/architecture.md) on a compiled model:
 *
 *     C      = G_q M^-1 G_q^T
 *     Lambda = -C^-1 ( G_q M^-1 Q + gamma )
 *     a      = M^-1 ( Q + G_q^T Lambda )
 *
 * plus what the output needs (residuals, energy, reaction power).  All
 * scratch lives in hs_work, allocated once per run: no allocation on the
 * right-hand-side path. */
#ifndef HS_DYNAMICS_H
#define HS_DYNAMICS_H

#include <stdint.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "../linalg/linalg.h"
#include "../native/native.h"
#include "../model/model.h"

/* C is factored as a band matrix when k >= HS_BAND_MIN_K and its
 * bandwidth is at most k / HS_BAND_RATIO (measured: bench/README.md). */
#define HS_BAND_MIN_K 8
#define HS_BAND_RATIO 4
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

/* When a pivot ratio L_ii^2 / C_ii of C's Cholesky falls below
 * HS_PIVOT_ROBUST (a constraint gradient within 1e-3 rad of the span of
 * the others, in the M^-1 metric), or the Cholesky fails, or the
 * constraints are redundant at the start, or the mass matrix is singular,
 * the rank-revealing solve takes over (dynamics.c, robust_solve): an SVD
 * of B = G_q L^-T with rows scaled to unit length (M = L L^T, or
 * M + alpha G_q^T G_q = L L^T for a singular M), singular values below
 * HS_SV_RTOL times the largest treated as zero, the multipliers the least
 * Euclidean-norm solution of C Lambda = -(G_q M^-1 Q + gamma) on the rest.
 * What is dropped is M-orthogonal to the motion: the projection after the
 * step removes it (stepper.c).  When the accelerations it gives miss
 * G_q a + gamma = 0 by more than HS_LOCKUP_RTOL of the size of its terms,
 * the constraints cannot be met (a lock-up, a bifurcation): the run stops. */
#define HS_PIVOT_ROBUST 1e-6
/* On the small dense path (k <= 16, not strict) a row whose pivot ratio is
 * below HS_PIVOT_SKIP is dependent (within 1e-5 rad of the span of the
 * rows before it): the Cholesky skips it, the others give a multiplier,
 * and its least-norm version comes from the kernel the skipped rows span
 * (linalg.h: hs_la_small_cholesky_skip, hs_la_small_minnorm).  Redundant
 * constraints thus keep the fast path. */
#define HS_PIVOT_SKIP 1e-10
#define HS_SV_RTOL 1e-5
#define HS_LOCKUP_RTOL 1e-1

typedef struct hs_chainwork hs_chainwork;   /* dynamics/chain.c */

typedef struct hs_work {
    double *in;            /* [nin] VM inputs: t, q, q', parameters */
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
                            * release): its multiplier is 0 and C's row and
                            * column for it are cut out; NULL while none is */
    size_t nreleased;
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
} hs_work;

enum { HS_FAIL_NONE, HS_FAIL_NONFINITE, HS_FAIL_MASS, HS_FAIL_SINGULAR_C };

/* The rank of G_q the run starts with (hs_cons_start): below k, every
 * evaluation goes through the rank-revealing solve. */
void hs_dyn_set_rank0(hs_work *w, size_t rank0);

hs_work *hs_work_new(const hs_model *m);
void hs_work_free(hs_work *w);              /* NULL is fine */

/* Accelerations a[n] and multipliers Lambda[k] (either may be NULL: the
 * values stay in w->a, w->Lambda) at (t, q, v).  Also sets w->T.  Where C
 * is singular or ill-conditioned (redundant constraints, a singular
 * position) or M is singular, the rank-revealing solve gives the unique
 * accelerations and the minimum Euclidean-norm multipliers (w->robust).
 * Returns 0, or HS_EXIT_NUMERIC with w->err saying why (a non-finite value
 * and the model position that produced it, a mass matrix that is not
 * positive definite or a singular saddle-point matrix [M G_q^T; G_q 0],
 * constraints that cannot be met (lock-up), or with w->strict a singular
 * or ill-conditioned C). */
int hs_dyn_accel(const hs_model *m, hs_work *w, double t, const double *q,
                 const double *v, double *a, double *Lambda);

/* The energy E = T + U at (t, q, v) without the accelerations (the
 * dynamics program only for a mass that is not a constant diagonal, then
 * the output program; w->T and w->aux are left at this state, w's other
 * evaluations are not).  Returns 0 or HS_EXIT_NUMERIC with w->err set. */
int hs_dyn_energy(const hs_model *m, hs_work *w, double t, const double *q, const double *v,
                  double *E);

/* Evaluate the output program (G, Gdot, G_t, U, P_nc, outputs, ambient)
 * into w->aux.  Returns 0 or HS_EXIT_NUMERIC with w->err set. */
int hs_dyn_aux(const hs_model *m, hs_work *w, double t, const double *q,
               const double *v);

/* G (k), dense G_q (k*n, into w->Gqd, allocated at the first call) and G_t
 * (k) at (t, q); G and G_t go to the caller's arrays (either may be NULL).
 * Returns 0, HS_EXIT_NUMERIC or HS_EXIT_NOMEM (w->err set). */
int hs_dyn_constraints(const hs_model *m, hs_work *w, double t, const double *q,
                       double *G, double *G_t);

/* The same without the dense copy: G_q stays in w->pos + k (non-zeros in
 * the order of model->gq_start/gq_col); see hs_dyn_gq_dot. */
int hs_dyn_constraints_sparse(const hs_model *m, hs_work *w, double t, const double *q,
                              double *G, double *G_t);

/* Row i of G_q (from the last hs_dyn_constraints*) dotted with x[n]. */
static inline double hs_dyn_gq_dot(const hs_model *m, const hs_work *w, size_t i,
                                   const double *x)
{
    const double *Gz = w->pos + m->k;
    double s = 0;
    for (int z = m->gq_start[i]; z < m->gq_start[i + 1]; z++)
        s += Gz[z] * x[m->gq_col[z]];
    return s;
}

/* The diagonal of a diagonal mass matrix (HS_MASS_CONST_DIAG or
 * HS_MASS_DIAG) at (t, q, v) into d[n].  Returns 0 or HS_EXIT_NUMERIC. */
int hs_dyn_mass_diag(const hs_model *m, hs_work *w, double t, const double *q,
                     const double *v, double *d);

/* The mass matrix at (t, q, v) as dense n x n (row-major) into Mout.
 * Returns 0 or HS_EXIT_NUMERIC. */
int hs_dyn_mass(const hs_model *m, hs_work *w, double t, const double *q,
                const double *v, double *Mout);

/* Energy at a state, after hs_dyn_accel and hs_dyn_aux there (model.h):
 * the kinetic energy in the frame of the model's mass (E = T + U), and the
 * Jacobi integral H = q'.dL/dq' - L. */
static inline double hs_dyn_kinetic(const hs_model *m, const hs_work *w)
{
    return w->T + w->aux[m->off_Tx];
}

static inline double hs_dyn_jacobi(const hs_model *m, const hs_work *w)
{
    return w->T - w->aux[m->off_T0] + w->aux[m->off_U];
}

/* The run's monitors and the reactions (holosim(1), OUTPUT), computed here
 * and nowhere else: for the rows, the summary and the step control alike.
 * aux is prog_aux's outputs at the state (hs_dyn_aux), Lambda the
 * multipliers there (hs_dyn_accel), Gz the non-zeros of G_q (w->dyn +
 * m->off_Gq).  The order of the operations is part of the contract: the
 * CSV prints these to the last bit. */

/* energy_balance = E - E0 - W_R - W_nc - W_t, E = T + U; W = (W_R, W_nc,
 * W_t).  0 along the exact motion (W_R integrates the exact rate of E). */
static inline double hs_dyn_balance(double T, double U, double E0, const double *W)
{
    return T + U - E0 - W[0] - W[1] - W[2];
}

/* power_residual = R.v + Lambda . G_t = Lambda . Gdot (the power identity
 * R.v = -Lambda . G_t, checked). */
static inline double hs_dyn_power_residual(const hs_model *m, const double *Lambda,
                                           const double *aux)
{
    double s = 0;
    for (size_t j = 0; j < m->k; j++)
        s += Lambda[j] * aux[m->off_Gdot + j];
    return s;
}

/* P_R = R.v = Lambda . (G_q v) = Lambda . (Gdot - G_t). */
static inline double hs_dyn_reaction_power(const hs_model *m, const double *Lambda,
                                           const double *aux)
{
    double s = 0;
    for (size_t j = 0; j < m->k; j++)
        s += Lambda[j] * (aux[m->off_Gdot + j] - aux[m->off_Gt + j]);
    return s;
}

/* R_i = (G_q^T Lambda)_i, the generalized reaction on coordinate i. */
static inline double hs_dyn_reaction(const hs_model *m, const double *Gz, const double *Lambda,
                                     size_t i)
{
    double s = 0;
    for (size_t j = 0; j < m->k; j++)
        for (int z = m->gq_start[j]; z < m->gq_start[j + 1]; z++)
            if ((size_t)m->gq_col[z] == i)
                s += Gz[z] * Lambda[j];
    return s;
}

/* Fill the VM input vector from a state. */
void hs_dyn_set_state(const hs_model *m, hs_work *w, double t, const double *q,
                      const double *v);

/* ---- outputs.c: what outputs and events read (model.h) ---- */

/* The outputs at (t, q, v) into w->out [nout]; when m->out_dyn, after
 * hs_dyn_accel at the same state (the accelerations and multipliers are
 * read from w->a, w->Lambda).  Returns 0 or HS_EXIT_NUMERIC with w->err
 * naming the position that gave a non-finite value. */
int hs_dyn_outputs(const hs_model *m, hs_work *w, double t, const double *q,
                   const double *v);
/* The event functions into w->ev [nev] (after hs_dyn_accel when
 * m->ev_dyn).  Returns 0, or HS_EXIT_NUMERIC with w->err set and the
 * index of the first non-finite one in *bad (may be NULL). */
int hs_dyn_events(const hs_model *m, hs_work *w, double t, const double *q,
                  const double *v, size_t *bad);
/* Let constraint j go from now on (hs_dyn_accel then solves with the
 * others; every constraint let go is free motion).  0 or -1 (memory). */
int hs_dyn_release(const hs_model *m, hs_work *w, size_t j);
/* Inside hs_dyn_accel, C and its right-hand side assembled: the rows and
 * columns of the released constraints cut out (their multipliers 0). */
void hs_dyn_cut_released(const hs_model *m, hs_work *w);
static inline int hs_dyn_is_released(const hs_work *w, size_t j)
{
    return w->released && w->released[j];
}

/* ---- impact.c: contacts (holosim-model(5), CONTACTS) ---- */

#define HS_IMPACT_ENUM 12   /* up to this many contacts: every active set (2^12) */
#define HS_IMPACT_MAX 200   /* contacts in one impact problem (Murty's pivoting) */
#define HS_IMPACT_ROWS 256  /* rows (constraints held and contacts) in it */
/* The velocity jump of an impact at (t, q): role[k] 0 for a constraint
 * out of the problem (let go), 1 for one held (bilateral: its velocity
 * constraint kept), 2 for a contact closed or closing, with restitution
 * e[j] (e[j] read for role 2 only; e = 0 for a closed contact).  v[n]
 * jumps to v + M^-1 G_q^T Lambda, the impulses into Lam[k] (0 outside),
 * T+ - T- into *dT; q[n] moves onto G = 0 of those rows (one Newton step
 * in the M-norm: the impact's residual is of the size of its location).  0, or HS_EXIT_NUMERIC / HS_EXIT_NOMEM with w->err set
 * (no consistent impulses, too many contacts). */
int hs_dyn_impact(const hs_model *m, hs_work *w, double t, double *q, double *v,
                  const signed char *role, const double *e, double *Lam, double *dT);
/* At the start (t, q, v): the contacts whose gap is above the consistency
 * tolerance, or at it and opening (G_t + G_q v above it), are let go
 * (open); the others stay closed, held like constraints (a negative gap
 * is then projected or rejected as any residual).  0 or an exit code. */
int hs_dyn_contacts_open(const hs_model *m, hs_work *w, double t, const double *q,
                         const double *v);
/* Friction: the state above allocated (0, or HS_EXIT_NOMEM); after the
 * dynamics program at a state, Q += Qx and a sticking slip's held value
 * out of the Baumgarte term; step `it` of the solve of the sliding forces
 * F = -mu |N| dir (|N| from the multipliers just computed): *done when
 * they agree with the applied ones to 1e-14 (then lambda of each sliding
 * element is its force), else Qx takes the next iterate (a secant step
 * per element); the norm |N| of
 * element f's normal reaction at the last evaluation. */
int hs_dyn_friction_alloc(const hs_model *m, hs_work *w);
void hs_dyn_friction_adjust(const hs_model *m, hs_work *w);
/* At the start (t, q, v): the state allocated, each element sliding in
 * the direction of its slip rate where that is above the consistency
 * tolerance (its row let go), else sticking at its slip there.  0 or an
 * exit code. */
int hs_dyn_friction_start(const hs_model *m, hs_work *w, double t, const double *q,
                          const double *v);
int hs_dyn_friction_step(const hs_model *m, hs_work *w, int it, int *done);
double hs_dyn_friction_normal(const hs_model *m, const hs_work *w, size_t f);
/* Hold constraint j again (undo hs_dyn_release: a contact closing). 0. */
int hs_dyn_hold(const hs_model *m, hs_work *w, size_t j);

/* ---- robust.c: the rank-revealing solve (inside hs_dyn_accel) ---- */

/* Its scratch, allocated at the first use: 0, or HS_EXIT_NUMERIC (memory). */
int hs_dyn_robust_alloc(const hs_model *m, hs_work *w);
/* Accelerations into w->a and the least-norm multipliers into w->Lambda
 * from the dynamics outputs dyn, with g (w->rg) = gamma (+ Baumgarte
 * terms); mass_singular: solve with M + alpha G_q^T G_q.  0, or
 * HS_EXIT_NUMERIC with w->err set (a singular saddle-point matrix, a
 * lock-up, with w->strict a rank loss). */
int hs_dyn_robust_solve(const hs_model *m, hs_work *w, double t, const double *dyn,
                        int mass_singular);
/* The errors of a singular C (exact: failed Cholesky or zero singular
 * values, else ill-conditioned at rcond) and of a singular saddle-point
 * matrix (Md: the diagonal of M); both return HS_EXIT_NUMERIC. */
int hs_dyn_singular_C(hs_work *w, double t, int exact, double rcond);
int hs_dyn_saddle_singular(const hs_model *m, hs_work *w, double t, const double *Md);

/* A program through its native kernel when there is one, else the VM. */
/* The structured embedding (dynamics/chain.c): its work space (NULL when
 * out of memory), the accelerations a[n] at the state in w->in (also
 * w->T and the powers the stepper reads), and w->T alone. */
hs_chainwork *hs_chain_work_new(const hs_model *m);
void hs_chain_work_free(hs_chainwork *cw);
int hs_chain_accel(const hs_model *m, hs_work *w, double t, double *a);
int hs_chain_kinetic(const hs_model *m, hs_work *w, double t);
/* A non-finite output of program p: w->err placed at the instruction
 * (HS_EXIT_NUMERIC); whether x[0..n-1] are all finite. */
int hs_dyn_nonfinite(const hs_model *m, hs_work *w, const hs_prog *p, double *regs, double t);
int hs_dyn_all_finite(const double *x, size_t n);

static inline void hs_dyn_run_prog(const hs_prog *p, hs_kernel_fn k, const double *in,
                                   double *regs, double *out)
{
    if (k)
        k(in, regs, out);
    else
        hs_prog_eval(p, in, regs, out);
}

#endif
