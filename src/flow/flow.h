/* Stability of motion (`holosim floquet`, `holosim lyapunov`): the
 * variational equations of the constrained flow, integrated alongside the
 * motion.
 *
 *   hs_fl_new        exact symbolic Jacobians of the accelerations: with
 *                    the residuals r = M a - G_q^T Lambda - Q and
 *                    s = G_q a + gamma (a, Lambda extra symbols), hs_diff
 *                    gives dr/dq, dr/dv, ds/dq, ds/dv; then
 *                        [M  -G_q^T] [da/dx     ]     [dr/dx]
 *                        [G_q   0  ] [dLambda/dx] = - [ds/dx]
 *                    (x = q or v): the derivative of the multipliers
 *                    through the saddle-point system included
 *   hs_fl_tangent    an orthonormal basis of the tangent space of the
 *                    constraint manifold of the state space at (t, q, v):
 *                    ker [G_q 0; dGdot/dq G_q], 2 (n - k) columns
 *   hs_fl_propagate  the motion (q, v) and tangent vectors (dq, dv) carried
 *                    by the linearized flow, one augmented ODE through a
 *                    gsl_odeiv2 method under one error control; the
 *                    vectors' derivatives are directional (the residuals'
 *                    Jacobian blocks times the vectors, then one solve per
 *                    vector on the saddle-point LU), da/dx is not formed
 *   hs_fl_project    vectors onto that tangent space (a QR of J^T)
 *   hs_fl_floquet    the monodromy matrix over a period, projected on the
 *                    tangent space at the start; its eigenvalues
 *   hs_fl_sens_run   forward sensitivities d(q, v, Lambda)/dp to parameters,
 *                    the inhomogeneous variational equations (sensitivity.c)
 *   hs_fl_find_orbit Newton shooting for a periodic orbit (shooting.c)
 *   hs_fl_lyapunov   Benettin's estimate of the largest exponent, or the
 *                    spectrum by Gram-Schmidt (QR), on that tangent space
 *
 * The model is loaded with hs_overrides.dense (M and Q formed for a
 * structured embedding too); the Jacobians are sparse blocks, and the
 * saddle-point matrix is factored sparse along the ODE (saddle.c), but
 * the tangent vectors, the monodromy and the tangent basis are dense
 * (n + k <= HS_FL_MAX).  The motion is integrated
 * without stabilization (the exact flow's accelerations, G_q a = -gamma):
 * Baumgarte's terms vanish to first order on the tangent space. */
#ifndef HS_FLOW_H
#define HS_FLOW_H

#include <stddef.h>

#include "../expr/expr.h"
#include "../model/model.h"
#include "../util/error.h"

/* Largest n + k the variational system takes (--spectrum and Floquet
 * carry 2 (n - k) tangent vectors of 2 n components, dense; da/dx is
 * formed dense where a caller asks for it). */
#define HS_FL_MAX 400

typedef struct hs_fl hs_fl;
struct hs_native;

/* The Jacobians of m's accelerations, compiled (t kept as an input).  NULL
 * with err set: exit 2 for a model too large (n + k > HS_FL_MAX) or a
 * derivative that cannot be formed (positioned).  The integration uses the
 * model's method when it is an explicit gsl_odeiv2 one, else rk8pd
 * (hs_fl_method says which), at the model's rtol and atol. */
hs_fl *hs_fl_new(hs_model *m, hs_error *err);
/* The same for what forms nothing dense of size n + k: forward
 * sensitivities (hs_fl_sens_new, hs_fl_sens_run) and the largest Lyapunov
 * exponent (the projections sparse); the limit is HS_FL_SPARSE_MAX (the
 * Jacobians' build still walks n x (n + k) pairs).  hs_fl_accel with Aq or
 * Av, the spectrum, the tangent basis, hs_fl_project and Floquet are not
 * for such a handle when n + k > HS_FL_MAX (exit 2). */
#define HS_FL_SPARSE_MAX 6000
hs_fl *hs_fl_new_sparse(hs_model *m, hs_error *err);
void hs_fl_free(hs_fl *f);                 /* NULL is fine */
/* on = 0: the saddle-point matrix always dense (tests compare the two). */
void hs_fl_use_sparse(hs_fl *f, int on);
/* hs_fl_project without the dense QR (saddle.c): each column p replaced by
 * the solution p' of [I J^T; J 0] [p'; y] = [p; 0] (KLU), the same
 * orthogonal projection onto ker J; what lyapunov uses beyond HS_FL_MAX.
 * 0, or an exit code with err (3: the constraints dependent there). */
int hs_fl_project_sparse(hs_fl *f, double t, const double *q, const double *v, double *P,
                         size_t ncol, hs_error *err);
/* f from now on as a handle beyond HS_FL_MAX: its dense arrays freed (the
 * sparse paths alone; tests compare them with the dense ones). */
void hs_fl_drop_dense(hs_fl *f);
const char *hs_fl_method(const hs_fl *f);

/* The accelerations a [n] and multipliers lam [k] at (t, q, v); with Aq,
 * Av non-NULL also da/dq and da/dv (n x n, row-major).  0, or 4 (a
 * singular saddle-point matrix, a non-finite value) with err set. */
int hs_fl_accel(hs_fl *f, double t, const double *q, const double *v, double *a,
                double *lam, double *Aq, double *Av, hs_error *err);

/* B [2n x dim] row-major, orthonormal columns spanning the tangent space
 * at (t, q, v); dim = 2 (n - rank).  Returns 0, or 3 (dependent
 * constraints there: the rank is below k), with err set. */
int hs_fl_tangent(hs_fl *f, double t, const double *q, const double *v, double *B,
                  size_t *dim, hs_error *err);

/* P [2n x ncol] row-major onto that tangent space, in place (the
 * orthogonal projection B B^T P, without forming B: a QR factorization of
 * the constraints' Jacobian).  0, or 3 (dependent constraints) with err. */
int hs_fl_project(hs_fl *f, double t, const double *q, const double *v, double *P,
                  size_t ncol, hs_error *err);

/* Integrate from t0 to t1 (> t0): x = (q, v) [2n] and the ncol tangent
 * vectors P [2n x ncol] row-major, in place.  0, or 4 (the stepper failed)
 * with err. */
int hs_fl_propagate(hs_fl *f, double t0, double t1, double *x, double *P, size_t ncol,
                    hs_error *err);

/* The accepted steps and evaluations of the ODE's right-hand side over
 * every integration f has done (for benchmarks). */
void hs_fl_counts(const hs_fl *f, unsigned long *steps, unsigned long *evals);

/* Whether the model's M, Q and G (at q0, v0) are the same at t0 and
 * t0 + T (to 1e-9 of their size): 1 yes, 0 no (what differs first into
 * what[cap]). */
int hs_fl_periodic_model(hs_fl *f, double t0, double T, const double *q, const double *v,
                         char *what, size_t cap);

/* Floquet analysis over one period. */
typedef enum { HS_FL_UNSTABLE, HS_FL_MARGINAL, HS_FL_STABLE } hs_fl_verdict;
extern const char *const hs_fl_verdict_names[3];
#define HS_FL_TOL 1e-6         /* |mu| beyond 1 + tol: unstable; |mu - 1| <= tol: marginal */

typedef struct hs_floquet {
    size_t n, dim;             /* coordinates; 2 (n - k) multipliers */
    double T;
    double *re, *im;           /* [dim] the multipliers, largest |mu| first */
    double *mono;              /* [dim x dim] the monodromy on the tangent basis */
    double *x0, *xT;           /* [2n] the state at the start and after T */
    double gap;                /* max |xT - x0| */
    double mu_max;             /* the largest |mu| */
    hs_fl_verdict verdict;
    double tol;                /* the tolerance of the verdict */
} hs_floquet;

/* The start state (q0, v0 of the model, projected onto the constraints at
 * t0 by the consistency step), then the monodromy over T.  0, or an exit
 * code with err (3 inconsistent start, 4 numerical failure).  Free fl with
 * hs_fl_floquet_free in every case. */
int hs_fl_floquet(hs_fl *f, double T, hs_floquet *fl, hs_error *err);
/* The same from x0 [2n] (on the constraints at t0) instead. */
int hs_fl_floquet_at(hs_fl *f, const double *x0, double T, hs_floquet *fl, hs_error *err);

/* Whether M, Q, G_q, gamma and G do not read t (the period of an orbit is
 * then an unknown of hs_fl_find_orbit). */
int hs_fl_autonomous(const hs_fl *f);

/* Newton shooting (shooting.c) for the periodic orbit nearest the start
 * state (projected): x [2n] with phi_T(x) = x, T given for a driven model,
 * an unknown from the guess *T for an autonomous one (hs_fl_autonomous).
 * 0 with x, *T, the steps and the residual max |x(t0 + T) - x(t0)|
 * (below max(1e-10, 100 rtol) times the size of x); 3 when Newton stops
 * short (no decrease along a step, or 40 steps) with x, *T the best point
 * and err set; 4 a numerical failure. */
int hs_fl_find_orbit(hs_fl *f, double *x, double *T, int *steps, double *resid,
                     hs_error *err);
void hs_fl_floquet_free(hs_floquet *fl);

/* Lyapunov exponents over [t0, t0 + T], renormalized every dt; spectrum:
 * every exponent (QR), else the largest.  row(t, lambda, count, ctx) is
 * called after every renormalization (the last at t0 + T).  0, or an exit
 * code with err. */
typedef int (*hs_fl_row_fn)(double t, const double *lambda, size_t count, void *ctx);
int hs_fl_lyapunov(hs_fl *f, double T, double dt, int spectrum, hs_fl_row_fn row, void *ctx,
                   size_t *count, hs_error *err);

/* Native kernels (src/native): the programs f evaluates, then s's when s
 * is not NULL, into progs[HS_FL_NPROGS]; returns how many.  A handle
 * hs_native_load made from them (in that order) is given back to
 * hs_fl_use_native, which evaluates through its kernels from then on (the
 * same doubles bit for bit; NULL: the VM again).  The handle must outlive
 * f and s, or be taken back first. */
#define HS_FL_NPROGS 3
typedef struct hs_fl_sens hs_fl_sens;
size_t hs_fl_programs(const hs_fl *f, const hs_fl_sens *s, const hs_prog **progs);
void hs_fl_use_native(hs_fl *f, hs_fl_sens *s, const struct hs_native *nat);
/* Both steps under a policy (hs_native_policy: never, always, auto), for
 * the command line and the library alike: the programs, the work a run is
 * expected to do (a thousand rows of 13 right-hand sides, each evaluating
 * every program), hs_native_load (names: the caller's option names for its
 * messages), the handle given to f and s.  NULL: the VM (never, or no
 * kernel).  note[cap] receives what the load has to say, "" for nothing;
 * the caller prints it its own way. */
struct hs_native *hs_fl_native(hs_fl *f, hs_fl_sens *s, int policy, const hs_optnames *names,
                               char *note, size_t cap);

/* Forward sensitivities to the parameters names[np] of f's model: exit 2
 * (unknown parameter, with the nearest name; an input; a name twice; a
 * parameter t0 is written with) with err. */
hs_fl_sens *hs_fl_sens_new(hs_fl *f, const char *const *names, size_t np, hs_error *err);
void hs_fl_sens_free(hs_fl_sens *s);       /* NULL is fine */
size_t hs_fl_sens_count(const hs_fl_sens *s);

/* A row at t: x = (q, v) [2n], Lambda [k], S = d(q, v)/dp [2n x np]
 * row-major, dLambda/dp [k x np]; 0 or an exit code (which stops the run). */
typedef int (*hs_fl_sens_row_fn)(double t, const double *x, const double *lam,
                                 const double *S, const double *dlam, void *ctx);

/* From the projected start at t0 to t_end, a row every dt (NaN: a
 * thousandth of the span), at the times of a run's rows (hs_run_times,
 * hs_grid_time; exit 1 with their messages):
 * the motion without stabilization, S(t0) = d(q0, v0)/dp of the initial
 * data as written.  *offset: how far S(t0) is from the linearized
 * constraints (0 when the initial data are consistent for every value of
 * the parameters).  0, or an exit code with err (3 inconsistent start, 4
 * numerical failure), or row's. */
int hs_fl_sens_run(hs_fl_sens *s, double t_end, double dt, hs_fl_sens_row_fn row, void *ctx,
                   double *offset, hs_error *err);

/* The stop event (the model's or --stop-when) that ended the last
 * hs_fl_sens_run, with its time in *t, or NULL.  A stop event's function
 * is checked after every accepted step; a sign change in its direction
 * inside a step is located by bisection (integrating from the step's
 * start) to round-off, and the last row is there.  Record-only events change
 * nothing and are not watched. */
const hs_event *hs_fl_sens_stopped(const hs_fl_sens *s, double *t);
/* The stop said in words into buf[cap] ("" when no event stopped the run):
 * "stopped by event 'NAME' (TEXT) at t=T; dt/dP = X, ...", the stop time's
 * derivatives in the parameters, -(g_x S + g_p) / (g_t + g_x f) at the
 * stop (g the event's function, f = (v, a)), or why they are not given;
 * returns its length. */
size_t hs_fl_sens_stop_text(hs_fl_sens *s, char *buf, size_t cap);

/* What the sensitivities do not integrate (contacts, friction, events
 * that change the state: release, hold): exit 1 with err naming it, or 0.
 * Inputs are functions of t, evaluated at t (a table piece by piece, its
 * times step ends). */
int hs_fl_sens_refuse(const hs_model *m, hs_error *err);

/* The columns of a run with sensitivities to names[np]: t, the
 * coordinates, the velocities, lambda_c, then per parameter p in order
 * dq/dp, dq'/dp and dlambda_c/dp.  hs_fl_sens_column gives column j's
 * name (in buf when it is made; NULL past the last); hs_fl_sens_pack a
 * row's values (hs_fl_sens_row_fn's arguments) in that order. */
size_t hs_fl_sens_ncols(const hs_model *m, size_t np);
const char *hs_fl_sens_column(const hs_model *m, const char *const *names, size_t np,
                              size_t j, char *buf, size_t len);
void hs_fl_sens_pack(const hs_model *m, size_t np, double t, const double *x,
                     const double *lam, const double *S, const double *dlam, double *row);

#endif
