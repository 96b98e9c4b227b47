/* Private to src/consistency: the projection's state (consistency.c) and
 * its rank-revealing factorization (robust.c), which both read. */
#ifndef HS_CONSISTENCY_INTERNAL_H
#define HS_CONSISTENCY_INTERNAL_H

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_vector.h>

#include "../linalg/linalg.h"
#include "consistency.h"

struct hs_proj {
    const hs_model *m;
    double *G, *Gt, *Gnew, *r;      /* [k] */
    double *W;                      /* [n*n] M^-1 on the free coordinates */
    double *Mfull;                  /* [n*n] */
    double *WGt;                    /* [n*k] W G_q^T */
    double *dq, *qtry;              /* [n] */
    gsl_matrix *A;                  /* k x k: G_q W G_q^T */
    gsl_vector *mu;                 /* k */
    gsl_matrix *Mff;                /* n x n scratch for the free block */
    size_t *free_idx;               /* [n] */
    unsigned char *fixed;           /* [k] constraint touches no free coordinate */
    const unsigned char *lock;      /* [n] of the last build_W, or NULL */
    int diagW;                      /* W is diagonal (held in Wd) */
    double *Wd;                     /* [n] diagonal of W */
    double *Md;                     /* [n] diagonal of M (diagonal kinds) */
    gsl_matrix *Ab;                 /* k x (bw+1) band storage of A */
    hs_la_spd *As;                  /* A factored sparse (where the dynamics factors
                                     * C so, with a diagonal W), or NULL */
    gsl_vector *work3k;             /* rcond scratch */
    int a_valid;                    /* A holds a factorization from this call */
    int full_rcond;                 /* 1: condition estimate on every build_A */
    /* the rank-revealing step (robust_build): dependent constraints, a
     * singular position, a singular mass (then the norm of M + alpha
     * G_q^T G_q), allocated at its first use */
    int msing;                      /* M singular (positive semidefinite) */
    int robust;                     /* the last factorization is robust_build's */
    int nomem;                      /* a matrix allocated at first use could not be */
    int chain_ok;                   /* a structured embedding (m->chain): W and A are
                                     * its saddle-point system, factored (1) or
                                     * singular (0) at the last build_W */
    size_t nf;                      /* free coordinates (free_idx) */
    gsl_matrix *rL, *rA, *rV;       /* nf x nf; max(nf,k) x min; min x min */
    gsl_vector *rS;                 /* min(nf, k) singular values */
    double *rBt, *rmu, *ry;         /* [k*n] rows L^-1 G_q,i^T; [k]; [n] */
};

/* Constraint i is held fixed in the projection: every coordinate of its
 * row is locked (structurally), or it has been released by an event. */
static inline unsigned char hs_proj_row_fixed(const hs_proj *p, const hs_model *m,
                                              const hs_work *w, size_t i)
{
    int fixed = p->lock != NULL;
    for (int z = m->gq_start[i]; fixed && z < m->gq_start[i + 1]; z++)
        fixed = p->lock[m->gq_col[z]];
    return (unsigned char)(fixed | hs_dyn_is_released(w, i));
}

/* The rank-revealing factorization (where the factor of A fails): 0, or
 * -1 (M_r not positive definite, memory, a model too large for it). */
int hs_proj_robust_build(hs_proj *p, hs_work *w);
/* out = the least-squares step of least M_r-norm for rhs [k]. */
void hs_proj_robust_step(hs_proj *p, const double *rhs, double *out);

#endif
