/* Private to src/dynamics: what the files of the module call in one
 * another and nobody else does (dynamics.h is the interface).  Lowest
 * first: kernels.c (the model's programs at a state), outputs.c,
 * robust.c, chain.c, impact.c, and dynamics.c (hs_dyn_accel) on top, with
 * held.c beside it (the held rows' system, through its factorization). */
#ifndef HS_DYNAMICS_INTERNAL_H
#define HS_DYNAMICS_INTERNAL_H

#include "dynamics.h"
#include "work.h"

/* ---- kernels.c ---- */

/* A program through its native kernel when there is one, else the VM. */
static inline void hs_dyn_run_prog(const hs_prog *p, hs_kernel_fn k, const double *in,
                                   double *regs, double *out)
{
    if (k)
        k(in, regs, out);
    else
        hs_prog_eval(p, in, regs, out);
}
/* A non-finite output of program p: w->err placed at the instruction
 * (HS_EXIT_NUMERIC); whether x[0..n-1] are all finite. */
int hs_dyn_nonfinite(const hs_model *m, hs_work *w, const hs_prog *p, double *regs, double t);
static inline int hs_dyn_all_finite(const double *x, size_t n)
{
    /* x * 0 is 0 for a finite x and NaN otherwise: one test on four sums
     * (independent chains) instead of a test and a branch per element */
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += x[i] * 0.0;
        s1 += x[i + 1] * 0.0;
        s2 += x[i + 2] * 0.0;
        s3 += x[i + 3] * 0.0;
    }
    for (; i < n; i++)
        s0 += x[i] * 0.0;
    return (s0 + s1) + (s2 + s3) == 0.0;
}

/* ---- dynamics.c: C factored, M^-1 applied ---- */

/* A system C Lambda = rhs to factor: every row's C (in w) or the held
 * rows' (held.c); k x k dense C, or k x (bw+1) band storage Cb. */
typedef struct hs_csys {
    size_t k;
    gsl_matrix *C, *Cb;
    int banded;
    hs_la_spd *Cs;             /* factored by CHOLMOD instead (NULL: C or Cb) */
} hs_csys;
/* Factor s's C (Cholesky) and check its conditioning (w->rcond, w->skip
 * and w->nskip for its rows): 0, 1 when C is singular or ill-conditioned
 * (the rank-revealing solve takes over), or HS_EXIT_NUMERIC (an overflow;
 * with w->strict, a singular C).  redundant: the rows dependent at the
 * start (k - rank0), which the small path may skip. */
int hs_dyn_factor_C(hs_work *w, const hs_csys *s, size_t redundant, double t);
/* x[n] <- M^-1 x with the mass factored by the last evaluation. */
void hs_dyn_solve_mass(const hs_model *m, hs_work *w, double *x);

/* ---- held.c: the system of the rows held when some are let go ---- */

/* Its storage, at the first hs_dyn_release (none on the right-hand-side
 * path): 0 or -1 (memory). */
int hs_dyn_held_alloc(const hs_model *m, hs_work *w);
/* After hs_dyn_release or hs_dyn_hold: the held set is to be read again. */
void hs_dyn_held_changed(hs_work *w);
/* Inside hs_dyn_accel: with w->nreleased, the held rows' structure (built
 * again only after a change, into the storage above); 0 when none is
 * released: every row's C is used then. */
int hs_dyn_held_ready(const hs_model *m, hs_work *w);
/* Whether the held system goes through the small dense path (or is empty). */
int hs_dyn_held_small(const hs_work *w);
/* The multipliers of the held rows (0 for the others) into w->Lambda and
 * acc[n] (M^-1 Q on entry) += M^-1 G_q^T Lambda, with C formed over the
 * held rows only.  0, 1 (singular or ill-conditioned: the rank-revealing
 * solve) or HS_EXIT_NUMERIC. */
int hs_dyn_held_solve(const hs_model *m, hs_work *w, double t, const double *dyn,
                      double *acc);
void hs_dyn_held_free(hs_work *w);

/* ---- impact.c: friction inside hs_dyn_accel ---- */

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
int hs_dyn_friction_step(const hs_model *m, hs_work *w, int it, int *done);

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

/* The structured embedding (dynamics/chain.c): its work space (NULL when
 * out of memory), the accelerations a[n] at the state in w->in (also
 * w->T and the powers the stepper reads), and w->T alone. */
hs_chainwork *hs_chain_work_new(const hs_model *m);
void hs_chain_work_free(hs_chainwork *cw);
int hs_chain_accel(const hs_model *m, hs_work *w, double t, double *a);
int hs_chain_kinetic(const hs_model *m, hs_work *w, double t);

#endif
