/* Consistent initial data and rank diagnosis (doc/architecture.md):
 *
 *   positions   q <- q - W G_q^T (G_q W G_q^T)^-1 G     (Gauss-Newton in the
 *               M-norm, W = M^-1 on the free coordinates, 0 on locked ones,
 *               with a backtracking line search on |G|)
 *   velocities  v <- v - W G_q^T (G_q W G_q^T)^-1 (G_t + G_q v)
 *
 * The same projection serves the start of a run and the `projection`
 * stabilization after every step. */
#ifndef HS_CONSISTENCY_H
#define HS_CONSISTENCY_H

#include <stdio.h>

#include "../dynamics/dynamics.h"

typedef struct hs_proj hs_proj;

hs_proj *hs_proj_new(const hs_model *m);
void hs_proj_free(hs_proj *p);                  /* NULL is fine */

/* Project q onto G(t, q) = 0 (max |G| <= tol, at least `min_steps` Newton
 * steps when G is not exactly 0), then v onto G_t + G_q v = 0.  lock[i] =
 * 1 holds q[i] and v[i] fixed (lock may be NULL).  Returns 0, or
 * HS_EXIT_INCONSISTENT with err naming the constraints that could not be
 * met and their residuals (or HS_EXIT_NUMERIC for a non-finite value). */
int hs_proj_apply(hs_proj *p, hs_work *w, double t, double *q, double *v,
                  const unsigned char *lock, double tol, int min_steps, hs_error *err);

/* Rank of G_q at (t, q).  Full rank is certified first by the factorization
 * of C = G_q M^-1 G_q^T the run uses (band or dense Cholesky, reciprocal
 * condition >= HS_RANK_RCOND: then cond(G_q) is below about 1e6, far from
 * the QR's threshold); otherwise QR with column pivoting of G_q^T decides,
 * with the relative tolerance HS_RANK_RTOL.  When rank < k, writes into msg
 * the dependent constraints and those they depend on, and the index of the
 * first dependent constraint into *first_dependent (may be NULL).  A model
 * too large for the dense QR (k*n above HS_DENSE_MAX) whose C is not
 * certified gets k, with the reason in msg (the run then stops at its
 * first singular C). */
#define HS_RANK_RTOL 1e-9
#define HS_RANK_RCOND 1e-12
size_t hs_cons_rank(const hs_model *m, hs_work *w, double t, const double *q,
                    char *msg, size_t cap, size_t *first_dependent);

/* The start of a run: rank check (its rank into w: hs_dyn_set_rank0; with
 * consistency.dependent reject, rank < k is exit 2), then per consistency.mode
 * reject (exit 3 naming violated constraints, data untouched) or project
 * (q0, v0 changed, a report of what changed written to `report` when
 * non-NULL and anything changed).  q, v hold the initial data on entry and
 * the (projected) data on return. */
int hs_cons_start(const hs_model *m, hs_work *w, double *q, double *v,
                  FILE *report, hs_error *err);

#endif
