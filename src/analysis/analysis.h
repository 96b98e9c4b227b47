/* Equilibria, stability and small oscillations of a compiled model
 * (`holosim equilibrium`, `holosim modes`):
 *
 *   hs_an_new          the symbolic Jacobians of the equilibrium conditions
 *                      and of the linearization (hs_diff on the model's
 *                      kernels, parameter values folded in), compiled; a
 *                      model whose M, Q or G change with time is refused
 *                      (exit 2, at the place the time enters)
 *   hs_an_equilibrium  Newton with a line search on
 *                          F(q, lambda) = ( Q(q, 0) + G_q(q)^T lambda, G(q) ) = 0
 *                      from a start point (exit 3 with the best point when it
 *                      fails)
 *   hs_an_modes        the linearization on the tangent space ker G_q(q*):
 *                      eigenvalues s = sigma + i omega, mode shapes in the
 *                      model's coordinates, the stability verdict
 *   hs_an_linearize    the state-space matrix A of that linearization in
 *                      n - k of the model's own coordinates
 *
 * Up to n + k = HS_AN_MAX everything is dense (the reference); beyond it
 * (or by hs_an_set_path) equilibrium and modes take the sparse path: Newton
 * on the saddle-point Jacobian factored by KLU, and the lowest modes by
 * shift-invert Lanczos on [K - s M, G_q^T; G_q, 0] (conservative models;
 * holosim(1), SPARSE ANALYSIS).  hs_an_linearize and hs_an_statespace stay
 * dense. */
#ifndef HS_ANALYSIS_H
#define HS_ANALYSIS_H

#include <stddef.h>

#include "../model/model.h"
#include "../util/error.h"

/* Largest n + k analysed densely ((n + k)^2 Jacobians, O((n + k)^3) steps);
 * beyond it equilibrium and modes are sparse. */
#define HS_AN_MAX 2000
/* The modes the sparse path finds when none are asked for (count 0). */
#define HS_AN_SPARSE_COUNT 10
/* Newton iterations before giving up (exit 3). */
#define HS_AN_MAXIT 100

typedef struct hs_an hs_an;

/* Build the analysis of m.  The derived expressions are added to the
 * model's dag (its compiled programs are not touched, so m keeps working
 * for runs).  NULL with err set: exit 2 for a model whose M, Q or G depend
 * on time (positioned at the time dependence) or that is too large, with
 * the position of a derivative that cannot be formed. */
hs_an *hs_an_new(hs_model *m, hs_error *err);
void hs_an_free(hs_an *a);                  /* NULL is fine */

/* Which path equilibrium and modes take: by size (the default: sparse when
 * n + k > HS_AN_MAX), dense, or sparse (the tests compare the two). */
typedef enum { HS_AN_PATH_AUTO, HS_AN_PATH_DENSE, HS_AN_PATH_SPARSE } hs_an_path;
extern const char *const hs_an_path_names[3];    /* "auto", "dense", "sparse" */
void hs_an_set_path(hs_an *a, hs_an_path p);
/* 1 when equilibrium and modes of a take the sparse path. */
int hs_an_sparse(const hs_an *a);

/* An equilibrium: Q(q, 0) + G_q^T lambda = 0, G(q) = 0. */
typedef struct hs_equil {
    size_t n, k;
    double *q;             /* [n] */
    double *lambda;        /* [k] multipliers: the reaction G_q^T lambda holds
                            * the system there (the sign of a run's lambda_*) */
    double res_Q;          /* max_i |Q_i(q, 0) + (G_q^T lambda)_i| */
    double res_G;          /* max_j |G_j(q)| */
    int iterations;        /* Newton steps taken */
    double sscale;         /* max |S_ij| met on the way (S the stiffness block of
                            * the Jacobian): the size of the stiffness terms, for
                            * a K at q* that cancels to round-off (a critical
                            * speed) to count as 0 */
    double floor;          /* 0, or stopped where the line search could not reduce
                            * the residual any more, at this fraction (<= 64 eps)
                            * of the start's: a flat (degenerate) equilibrium,
                            * q* known to less than round-off */
    size_t rank;           /* rank of G_q there; below k (redundant constraints)
                            * lambda is the least Euclidean-norm multiplier */
} hs_equil;

/* Newton from q_start (lambda from least squares there).  Returns 0 with
 * eq filled; or 3 with err saying why (no convergence in HS_AN_MAXIT
 * steps, a line search that cannot reduce |F|, a singular Jacobian naming
 * the coordinate or constraint it leaves undetermined, a non-finite value
 * at its source position) and eq holding the best point met.  Free eq
 * with hs_an_equil_free in both cases. */
int hs_an_equilibrium(hs_an *a, const double *q_start, hs_equil *eq, hs_error *err);
void hs_an_equil_free(hs_equil *eq);

/* The verdict of the linearization (holosim(1), modes): */
typedef enum {
    HS_AN_UNSTABLE,        /* an eigenvalue with sigma > 0 (beyond round-off) */
    HS_AN_MARGINAL,        /* none, but an eigenvalue s = 0 (a neutral direction:
                            * a family of equilibria or a zero-frequency mode)
                            * or a repeated s = i omega without independent mode
                            * shapes (a Jordan block: the linear motion grows
                            * like t); the linearization cannot decide */
    HS_AN_STABLE           /* every sigma <= 0, s = 0 nowhere, every s = i omega
                            * with independent shapes: spectral stability */
} hs_an_verdict;
extern const char *const hs_an_verdict_names[3];   /* "unstable", "marginal", "stable" */

/* The eigenvalues of the linearization at an equilibrium, one row per
 * eigenvalue with omega >= 0 (a complex pair once, each real eigenvalue
 * once), sorted by omega, then by sigma descending. */
typedef struct hs_modes {
    size_t n, dof;         /* coordinates; degrees of freedom n - k */
    size_t count;          /* rows (0 when dof = 0) */
    double *sigma;         /* [count] real parts: growth (> 0) or decay rates */
    double *omega;         /* [count] imaginary parts >= 0, rad per time unit */
    /* [count * n] each: the mode shape d in the model's coordinates, real
     * and imaginary parts, scaled so that the component of largest modulus
     * is 1 (phase 0): q_i - q*_i ~ |d_i| e^(sigma t) cos(omega t + arg d_i);
     * parts below HS_AN_SHAPE_ROUNDOFF are 0 */
    double *shape, *shape_im;
    int conservative;      /* solved as K phi = omega^2 M phi */
    hs_an_verdict verdict;
    int stable;            /* verdict == HS_AN_STABLE */
    size_t nzero;          /* eigenvalues s = 0 (|s| <= 1e-7 max |s|) */
    double jordan_omega;   /* a repeated s = i omega (omega > 0) without independent
                            * shapes, else 0 */
    double sigma_max;      /* the largest sigma (0 when count = 0) */
} hs_modes;

/* Round-off, shown as 0: a part of a mode shape below HS_AN_SHAPE_ROUNDOFF
 * (the largest component being 1); a coordinate of q* below
 * HS_AN_Q_ROUNDOFF of the size of the point (the largest coordinate of the
 * start and of q*), and a multiplier whose reaction is below
 * HS_AN_Q_ROUNDOFF of the largest force term. */
#define HS_AN_SHAPE_ROUNDOFF 1e-13
#define HS_AN_Q_ROUNDOFF 1.4210854715202004e-14     /* 64 DBL_EPSILON */

/* Linearize at eq (from hs_an_equilibrium) and solve the eigenproblem.
 * Returns 0, or 3 with err set (dependent constraints at eq, a mass
 * matrix not positive definite on the tangent space, an eigensolver that
 * did not converge).  Free md with hs_an_modes_free in both cases. */
int hs_an_modes(hs_an *a, const hs_equil *eq, hs_modes *md, hs_error *err);
void hs_an_modes_free(hs_modes *md);

/* The same, the rows of the count eigenvalues K phi = mu M phi nearest
 * mu = 0 (the lowest omega^2 of a stable model) alone: the first count
 * rows of hs_an_modes (a real pair s = +-sqrt(-mu) counts twice) and the
 * verdict of all of them on the dense path; on the sparse path the
 * verdict of those found (stable when the lowest mu > 0) and count 0 means
 * HS_AN_SPARSE_COUNT.  md->dof keeps the degrees of freedom.  Exit 1 for
 * a count above n - k; on the sparse path exit 3 for a model that is not
 * conservative (damping, gyroscopic or circulatory terms: dense only). */
int hs_an_modes_lowest(hs_an *a, const hs_equil *eq, size_t count, hs_modes *md,
                       hs_error *err);

/* The state-space form dx/dt = A x of the linearization, x = (y, y'),
 * y the deviations of dof of the model's coordinates; the other nsolved
 * (the rank of G_q(q*): k, or fewer with redundant constraints) are
 * solved from them (linearized constraints).  The solved ones are the
 * first columns a column-pivoted QR factorization of G_q(q*) picks (the
 * best-conditioned set to solve for), G_q reduced first to as many
 * independent rows (the first pivots of a column-pivoted QR of G_q^T). */
typedef struct hs_linear {
    size_t n, k, dof;
    size_t nsolved;        /* n - dof: the rank of G_q at q* */
    size_t *state;         /* [dof] indices of the coordinates in y, ascending */
    size_t *solved;        /* [nsolved] indices of the coordinates solved from y */
    double *A;             /* [2 dof x 2 dof] row-major */
} hs_linear;

int hs_an_linearize(hs_an *a, const hs_equil *eq, hs_linear *lin, hs_error *err);
void hs_an_linear_free(hs_linear *lin);

/* The state-space model (statespace.c; holosim(1), LINEARIZE) at eq:
 * dx/dt = A x + B u, y = C x + D u, x = (y_s, y_s') the coordinates of
 * hs_an_linearize and their velocities (A is its A), u the inputs named
 * u[0..nu-1] (the model's `inputs`, which must enter Q alone, not G), y
 * the columns named y[0..ny-1]: a coordinate x, a velocity x', an
 * acceleration x'', an output (a model loaded with
 * hs_overrides.keep_outputs), a multiplier lambda_NAME.  Exact symbolic
 * derivatives throughout.  Row-major matrices; 0, or 2 (a name that is no
 * input or column; an input in a constraint) or 3 with err set. */
typedef struct hs_statespace {
    size_t nx, nu, ny;
    char **xname, **uname, **yname;     /* [nx] "x", ..., "x'", ...; [nu]; [ny] */
    double *A, *B, *C, *D;              /* nx x nx, nx x nu, ny x nx, ny x nu */
} hs_statespace;
int hs_an_statespace(hs_an *a, const hs_equil *eq, const char *const *u, size_t nu,
                     const char *const *y, size_t ny, hs_statespace *ss, hs_error *err);
void hs_statespace_free(hs_statespace *ss);      /* NULL is fine */
/* The operating point q as it is (not an equilibrium unless it is one):
 * eq with the least-squares multipliers of Q(q, 0) + G_q^T lambda = 0 and
 * the residuals res_Q, res_G.  Free with hs_an_equil_free. */
int hs_an_point(hs_an *a, const double *q, hs_equil *eq, hs_error *err);

/* Poles, zeros and the frequency response of a state-space model
 * (ssmath.c): the eigenvalues of A into re, im [nx]; the finite
 * transmission zeros of the pair (output i, input j) into re, im [nx]
 * (*nz of them: the finite generalized eigenvalues of the Rosenbrock
 * pencil [A B_j; C_i D_ij] - s [I 0; 0 0]); G(j w) = C (j w I - A)^-1 B
 * + D into re, im [ny x nu].  0, -1 out of memory, -2 no convergence
 * (a singular j w I - A for the response); hs_ss_zeros returns 1 (no
 * zeros to speak of) when the pair's transfer function is 0. */
int hs_ss_poles(const hs_statespace *ss, double *re, double *im);
int hs_ss_zeros(const hs_statespace *ss, size_t i, size_t j, double *re, double *im,
                size_t *nz);
int hs_ss_response(const hs_statespace *ss, double w, double *re, double *im);

#endif
