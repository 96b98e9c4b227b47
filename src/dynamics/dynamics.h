/* The Lagrange-multiplier equations (doc/architecture.md) on a compiled model:
 *
 *     C      = G_q M^-1 G_q^T
 *     Lambda = -C^-1 ( G_q M^-1 Q + gamma )
 *     a      = M^-1 ( Q + G_q^T Lambda )
 *
 * plus what the output needs (residuals, energy, reaction power).  All
 * scratch lives in hs_work, allocated once per run: no allocation on the
 * right-hand-side path.  hs_work is opaque here: its definition is private
 * to the module (work.h); other modules read it through the accessors
 * below. */
#ifndef HS_DYNAMICS_H
#define HS_DYNAMICS_H

#include <stdint.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "../linalg/linalg.h"
#include "../native/native.h"
#include "../model/model.h"

typedef struct hs_work hs_work;      /* the run state (private: work.h) */

/* The thresholds the solves decide by that other modules share (the
 * module's own: work.h). */
/* When a pivot ratio L_ii^2 / C_ii of C's Cholesky falls below
 * HS_PIVOT_ROBUST (a constraint gradient within 1e-3 rad of the span of
 * the others, in the M^-1 metric), or the Cholesky fails, or the
 * constraints are redundant at the start, or the mass matrix is singular,
 * the rank-revealing solve takes over (dynamics.c, robust_solve): an SVD
 * of B = G_q L^-T with rows scaled to unit length (M = L L^T, or
 * M + alpha G_q^T G_q = L L^T for a singular M), singular values below
 * HS_SV_DYN_RTOL times the largest treated as zero, the multipliers the least
 * Euclidean-norm solution of C Lambda = -(G_q M^-1 Q + gamma) on the rest.
 * What is dropped is M-orthogonal to the motion: the projection after the
 * step removes it (stepper.c).  When the accelerations it gives miss
 * G_q a + gamma = 0 by more than HS_LOCKUP_RTOL of the size of its terms,
 * the constraints cannot be met (a lock-up, a bifurcation): the run stops. */
#define HS_PIVOT_ROBUST 1e-6
/* The rank of G_q at the start and in the projection (consistency): singular
 * values below HS_SV_RTOL of the largest are zero. */
#define HS_SV_RTOL 1e-5
/* The dense fallbacks (the rank-revealing solve, the rank's QR) refuse a
 * model whose k*n or n*n passes this (a sparse model of model/loader.h:
 * tens of thousands of coordinates, C factored sparse). */
#define HS_DENSE_MAX 1e7

/* Why the last failed evaluation failed (hs_work_fail_kind). */
enum { HS_FAIL_NONE, HS_FAIL_NONFINITE, HS_FAIL_MASS, HS_FAIL_SINGULAR_C };

/* The rank of G_q the run starts with (hs_cons_start): below k, every
 * evaluation goes through the rank-revealing solve. */
void hs_dyn_set_rank0(hs_work *w, size_t rank0);

hs_work *hs_work_new(const hs_model *m);
void hs_work_free(hs_work *w);              /* NULL is fine */

/* Accelerations a[n] and multipliers Lambda[k] (either may be NULL: the
 * values stay in hs_work_a, hs_work_Lambda) at (t, q, v).  Where C
 * is singular or ill-conditioned (redundant constraints, a singular
 * position) or M is singular, the rank-revealing solve gives the unique
 * accelerations and the minimum Euclidean-norm multipliers (hs_work_stats.robust).
 * Returns 0, or HS_EXIT_NUMERIC with w's error (hs_work_err) saying why (a non-finite value
 * and the model position that produced it, a mass matrix that is not
 * positive definite or a singular saddle-point matrix [M G_q^T; G_q 0],
 * constraints that cannot be met (lock-up), or with consistency.dependent: reject a singular
 * or ill-conditioned C). */
int hs_dyn_accel(const hs_model *m, hs_work *w, double t, const double *q,
                 const double *v, double *a, double *Lambda);

/* The energy E = T + U at (t, q, v) without the accelerations (the
 * dynamics program only for a mass that is not a constant diagonal, then
 * the output program; the kinetic energy and hs_work_aux are left at this state, w's other
 * evaluations are not).  Returns 0 or HS_EXIT_NUMERIC with w's error (hs_work_err) set. */
int hs_dyn_energy(const hs_model *m, hs_work *w, double t, const double *q, const double *v,
                  double *E);

/* Evaluate the output program (G, Gdot, G_t, U, P_nc, outputs, ambient)
 * into the work (hs_work_aux).  Returns 0 or HS_EXIT_NUMERIC with w's error
 * (hs_work_err) set. */
int hs_dyn_aux(const hs_model *m, hs_work *w, double t, const double *q,
               const double *v);

/* G (k), dense G_q (k*n, hs_work_Gq_dense, allocated at the first call) and G_t
 * (k) at (t, q); G and G_t go to the caller's arrays (either may be NULL).
 * Returns 0, HS_EXIT_NUMERIC or HS_EXIT_NOMEM (w's error (hs_work_err) set). */
int hs_dyn_constraints(const hs_model *m, hs_work *w, double t, const double *q,
                       double *G, double *G_t);

/* The same without the dense copy: G_q stays in the work (hs_work_con_Gq: non-zeros in
 * the order of model->gq_start/gq_col); see hs_dyn_gq_dot. */
int hs_dyn_constraints_sparse(const hs_model *m, hs_work *w, double t, const double *q,
                              double *G, double *G_t);

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
double hs_dyn_kinetic(const hs_model *m, const hs_work *w);
double hs_dyn_jacobi(const hs_model *m, const hs_work *w);

/* The run's monitors and the reactions (holosim(1), OUTPUT), computed here
 * and nowhere else: for the rows, the summary and the step control alike.
 * aux is prog_aux's outputs at the state (hs_dyn_aux), Lambda the
 * multipliers there (hs_dyn_accel), Gz the non-zeros of G_q
 * (hs_work_Gq).  The order of the operations is part of the contract: the
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

/* ---- the work read from outside the module (access.c) ----
 * hs_work is opaque beyond src/dynamics: these are all the other modules
 * see of it.  The arrays point into the work and stay valid until the
 * next evaluation of the same kind. */

/* Why the last call failed (w's error: first kept; hs_error_init or
 * hs_error_adopt from it), and its HS_FAIL_* (set by the caller when it
 * finds a failure of its own in w's values, cleared after a retry). */
hs_error *hs_work_err(hs_work *w);
int hs_work_fail_kind(const hs_work *w);
void hs_work_set_fail_kind(hs_work *w, int kind);

/* After hs_dyn_accel: a[n], Lambda[k] (the caller may use Lambda as
 * scratch until the next evaluation), Q[n] and the non-zeros of G_q
 * (model.h: gq_start, gq_col) at that state. */
const double *hs_work_a(const hs_work *w);
double *hs_work_Lambda(hs_work *w);
const double *hs_work_Q(const hs_model *m, const hs_work *w);
const double *hs_work_Gq(const hs_model *m, const hs_work *w);

/* After hs_dyn_constraints or hs_dyn_constraints_sparse: G[k], the
 * non-zeros of G_q, G_t[k]; after hs_dyn_constraints, dense G_q [k*n]
 * (row-major; NULL before the first call). */
const double *hs_work_con_G(const hs_work *w);
const double *hs_work_con_Gq(const hs_model *m, const hs_work *w);
const double *hs_work_con_Gt(const hs_model *m, const hs_work *w);
const double *hs_work_Gq_dense(const hs_work *w);

/* The output program's values (hs_dyn_aux; model.h: off_*), the outputs
 * (hs_dyn_outputs: [nout]), the event functions (hs_dyn_events: [nev]),
 * and the VM inputs the last evaluation set (t, q, q', parameters,
 * accelerations and multipliers: model.h, sym_*), which an event's own
 * program reads. */
const double *hs_work_aux(const hs_work *w);
const double *hs_work_outputs(const hs_work *w);
const double *hs_work_events(const hs_work *w);
double *hs_work_inputs(hs_work *w);

/* What the run reports of the solves: counts, the rank-revealing solve,
 * the conditioning of C (dynamics.c). */
typedef struct hs_work_stats {
    long nrhs;             /* right-hand-side evaluations */
    double rcond;          /* C's reciprocal condition at the last evaluation */
    size_t rank0;          /* rank of G_q at the start (hs_dyn_set_rank0) */
    int robust;            /* the last evaluation went through the rank-revealing solve */
    int augmented;         /* ... with M + alpha G_q^T G_q (singular M) */
    int mass_zero;         /* a constant diagonal mass with zero entries */
    size_t nskip;          /* rows of C the small Cholesky skipped at the last one */
    long nrobust;          /* evaluations through the rank-revealing solve */
    long nsingular;        /* evaluations with C ill-conditioned beyond the start's rank */
    double worst_rcond;    /* their smallest reciprocal condition (1: none) */
    int strict;            /* consistency.dependent: reject */
    size_t nreleased;      /* constraints let go */
} hs_work_stats;
hs_work_stats hs_work_get_stats(const hs_work *w);
/* The evaluation count, put back after evaluations that are not the run's. */
void hs_work_set_nrhs(hs_work *w, long nrhs);
/* Estimate C's condition at every evaluation (on = 1) or only when the
 * cheap bound asks (0); returns the previous setting. */
int hs_work_full_rcond(hs_work *w, int on);
/* Whether an evaluation since the last call met an ill-conditioned C (a
 * projection should follow the step: stepper.c); clear = 1 forgets it. */
int hs_work_near_singular(hs_work *w, int clear);

/* The structure of C the dynamics chose (held or not, every row): dense,
 * or band storage of lower bandwidth bw; the pairs of G_q entries that
 * share a column (rows i >= j, entries pi, pj), from which C is summed. */
typedef struct hs_cstruct {
    int banded;
    int sparse;                /* C factored as a sparse matrix (CHOLMOD) */
    size_t bw;
    size_t npair;
    const uint32_t *pair_i, *pair_j, *pair_pi, *pair_pj;
} hs_cstruct;
hs_cstruct hs_work_cstruct(const hs_work *w);

/* Whether constraint j is let go, by constraint ([k], NULL while none is). */
const unsigned char *hs_work_released(const hs_work *w);
/* Evaluate the programs through the native kernels of nat (hs_native_load:
 * prog_dyn, prog_aux, prog_pos, prog_out, prog_ev in that order). */
void hs_work_set_native(const hs_model *m, hs_work *w, const hs_native *nat);

/* The rates of the work integrals (W_R, W_nc, W_t) into W[3] after
 * hs_dyn_accel at velocities v[n] with accelerations a[n]: R.v =
 * Lambda . (G_q v), P_nc, and P_t + bT . a (model.h: off_Pd, off_Pt). */
void hs_dyn_work_rates(const hs_model *m, const hs_work *w, const double *v, const double *a,
                       double *W);

/* Row i of G_q (from the last hs_dyn_constraints*) dotted with x[n]. */
double hs_dyn_gq_dot(const hs_model *m, const hs_work *w, size_t i, const double *x);

/* The projection of a structured embedding with constraints (m->chain,
 * k > 0; consistency.c), through its saddle-point system (dynamics/chain.c):
 * factor it at (t, q): 0, -1 when it is singular (dependent constraints,
 * or singular coordinates), or an exit code with the work's error set;
 * then dq = W G_q^T (G_q W G_q^T)^-1 rhs, W = M^-1, the least change of
 * the coordinates in the metric's norm with G_q dq = rhs. */
int hs_chain_proj_factor(const hs_model *m, hs_work *w, double t, const double *q);
void hs_chain_proj_solve(const hs_model *m, hs_work *w, const double *rhs, double *dq);
/* d^T M(t, q) d of a structured embedding (twice its kinetic energy's part
 * quadratic in the velocities, at the velocity d): 0 or an exit code. */
int hs_chain_metric_norm(const hs_model *m, hs_work *w, double t, const double *q,
                         const double *d, double *out);
/* Whether constraint j was let go (hs_dyn_release). */
int hs_dyn_is_released(const hs_work *w, size_t j);

/* ---- outputs.c: what outputs and events read (model.h) ---- */

/* The outputs at (t, q, v) into the work (hs_work_outputs) [nout]; when m->out_dyn, after
 * hs_dyn_accel at the same state (the accelerations and multipliers are
 * read from the work's).  Returns 0 or HS_EXIT_NUMERIC with w's error (hs_work_err)
 * naming the position that gave a non-finite value. */
int hs_dyn_outputs(const hs_model *m, hs_work *w, double t, const double *q,
                   const double *v);
/* The event functions into the work (hs_work_events) [nev] (after hs_dyn_accel when
 * m->ev_dyn).  Returns 0, or HS_EXIT_NUMERIC with w's error (hs_work_err) set and the
 * index of the first non-finite one in *bad (may be NULL). */
int hs_dyn_events(const hs_model *m, hs_work *w, double t, const double *q,
                  const double *v, size_t *bad);
/* Let constraint j go from now on (hs_dyn_accel then solves with the
 * others; every constraint let go is free motion).  0 or -1 (memory). */
int hs_dyn_release(const hs_model *m, hs_work *w, size_t j);

/* x[k] <- C^-1 x with the factor the last hs_dyn_accel left (not after
 * the rank-revealing solve or skipped rows: hs_work_stats robust, nskip), the
 * rows released at that evaluation cut out of C (their x_i / C_ii). */
void hs_dyn_solve_C(const hs_model *m, hs_work *w, double *x);

/* ---- impact.c: contacts (holosim-model(5), CONTACTS) ---- */

/* The velocity jump of an impact at (t, q): role[k] 0 for a constraint
 * out of the problem (let go), 1 for one held (bilateral: its velocity
 * constraint kept), 2 for a contact closed or closing, with restitution
 * e[j] (e[j] read for role 2 only; e = 0 for a closed contact).  v[n]
 * jumps to v + M^-1 G_q^T Lambda, the impulses into Lam[k] (0 outside),
 * T+ - T- into *dT; q[n] moves onto G = 0 of those rows (one Newton step
 * in the M-norm: the impact's residual is of the size of its location).  0,
 * or HS_EXIT_NUMERIC / HS_EXIT_NOMEM with w's error (hs_work_err) set
 * (no consistent impulses, too many contacts). */
int hs_dyn_impact(const hs_model *m, hs_work *w, double t, double *q, double *v,
                  const signed char *role, const double *e, double *Lam, double *dT);
/* At the start (t, q, v): the contacts whose gap is above the consistency
 * tolerance, or at it and opening (G_t + G_q v above it), are let go
 * (open); the others stay closed, held like constraints (a negative gap
 * is then projected or rejected as any residual).  0 or an exit code. */
int hs_dyn_contacts_open(const hs_model *m, hs_work *w, double t, const double *q,
                         const double *v);
/* Friction: the state allocated at the start (hs_dyn_friction_start);
 * the norm |N| of element f's normal reaction at the last evaluation. */
/* At the start (t, q, v): the state allocated, each element sliding in
 * the direction of its slip rate where that is above the consistency
 * tolerance (its row let go), else sticking at its slip there.  0 or an
 * exit code. */
int hs_dyn_friction_start(const hs_model *m, hs_work *w, double t, const double *q,
                          const double *v);
double hs_dyn_friction_normal(const hs_model *m, const hs_work *w, size_t f);
/* Element f's state: 0 sticking (its row held at the slip of (t, q)), +-1
 * sliding in that direction (its row let go).  0, or an exit code with
 * w's error set. */
int hs_dyn_friction_dir(const hs_work *w, size_t f);
int hs_dyn_friction_set(const hs_model *m, hs_work *w, size_t f, int dir, double t,
                        const double *q);
/* The slip a sticking constraint j holds (its G is offset by it). */
double hs_dyn_friction_offset(const hs_work *w, size_t j);
/* Hold constraint j again (undo hs_dyn_release: a contact closing). 0. */
int hs_dyn_hold(const hs_model *m, hs_work *w, size_t j);


#endif
