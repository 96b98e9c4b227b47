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

#include "work.h"


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

/* x[k] <- C^-1 x with the factor the last hs_dyn_accel left (not after
 * the rank-revealing solve or skipped rows: w->robust, w->nskip), the
 * rows released at that evaluation cut out of C (their x_i / C_ii). */
void hs_dyn_solve_C(const hs_model *m, hs_work *w, double *x);

/* ---- impact.c: contacts (holosim-model(5), CONTACTS) ---- */

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
/* At the start (t, q, v): the state allocated, each element sliding in
 * the direction of its slip rate where that is above the consistency
 * tolerance (its row let go), else sticking at its slip there.  0 or an
 * exit code. */
int hs_dyn_friction_start(const hs_model *m, hs_work *w, double t, const double *q,
                          const double *v);
double hs_dyn_friction_normal(const hs_model *m, const hs_work *w, size_t f);
/* Hold constraint j again (undo hs_dyn_release: a contact closing). 0. */
int hs_dyn_hold(const hs_model *m, hs_work *w, size_t j);


#endif
