/* The structured embedding's accelerations (model.h: hs_chain; the
 * symbolic side is model/chain.c).  Unknowns x = (q'' [n], z'' [nz],
 * lambda [nz]); the saddle-point system, symmetric:
 *
 *     q row r:       sum_i B_ir lambda_i                       = Q_r
 *     z row j:       m_j z''_j + sum_i (B_i,n+j - d_ij) lambda_i = F_j
 *     lambda row i:  sum_r B_ir q''_r + sum_j (B_i,n+j - d_ij) z''_j = -gamma_i
 *
 * (B = [dPhi/dq dPhi/dz], the defining equations z = Phi(q, z)).  For a
 * chain or a tree it has O(n) entries; KLU (SuiteSparse) orders it once
 * (AMD), factors it with partial pivoting at the first evaluation and
 * refactors it in the same pivot order after that: O(n) per evaluation.
 * A refactorization whose pivots have degraded (reciprocal pivot ratio
 * below HS_CHAIN_RCOND_REPIVOT) is redone with fresh pivoting; a matrix
 * singular even then means the coordinates are singular there (the
 * metric is not positive definite), as the dense path says. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <suitesparse/klu.h>

#include "dynamics.h"

#define HS_CHAIN_RCOND_REPIVOT 1e-8
#define HS_CHAIN_RCOND_MIN 1e-14

struct hs_chainwork {
    size_t N;                  /* n + 2 nz */
    int *Ap, *Ai;              /* the pattern, compressed columns */
    double *Ax;
    size_t nt;
    int *t_pos;                /* [nt] each contribution's slot in Ax */
    int *t_src;                /* [nt] program output it takes, or -1 */
    double *t_k;               /* [nt] its factor (or the constant) */
    double *x;                 /* [N] right-hand side, then the solution */
    double *b, *r, *den;       /* [N] the right-hand side kept; refinement */
    double *out, *regs;        /* the program's outputs and registers */
    klu_common common;
    klu_symbolic *sym;
    klu_numeric *num;
};

typedef struct triplet {
    int row, col, src;
    double k;
} triplet;

static int trip_cmp(const void *pa, const void *pb)
{
    const triplet *a = pa, *b = pb;
    if (a->col != b->col)
        return a->col < b->col ? -1 : 1;
    return (a->row > b->row) - (a->row < b->row);
}

/* The contributions, in the layout above. */
static triplet *triplets(const hs_model *m, size_t *nt)
{
    const hs_chain *c = m->chain;
    size_t n = m->n, nz = c->nz, lam = n + nz, t = 0;
    triplet *T = malloc((2 * c->nb + 3 * nz + 1) * sizeof *T);
    if (!T)
        return NULL;
    for (size_t e = 0; e < c->nb; e++) {
        int i = (int)(lam + c->b_row[e]), col = (int)c->b_col[e];
        T[t++] = (triplet){col, i, (int)e, 1.0};    /* col < n: q row; else z row */
        T[t++] = (triplet){i, col, (int)e, 1.0};
    }
    for (size_t j = 0; j < nz; j++) {
        int zj = (int)(n + j), lj = (int)(lam + j);
        T[t++] = (triplet){zj, zj, (int)(c->off_mass + j), 1.0};
        T[t++] = (triplet){zj, lj, -1, -1.0};
        T[t++] = (triplet){lj, zj, -1, -1.0};
    }
    *nt = t;
    return T;
}

void hs_chain_work_free(hs_chainwork *cw)
{
    if (!cw)
        return;
    if (cw->num)
        klu_free_numeric(&cw->num, &cw->common);
    if (cw->sym)
        klu_free_symbolic(&cw->sym, &cw->common);
    free(cw->Ap); free(cw->Ai); free(cw->Ax);
    free(cw->t_pos); free(cw->t_src); free(cw->t_k);
    free(cw->x); free(cw->b); free(cw->r); free(cw->den); free(cw->out); free(cw->regs);
    free(cw);
}

hs_chainwork *hs_chain_work_new(const hs_model *m)
{
    const hs_chain *c = m->chain;
    hs_chainwork *cw = calloc(1, sizeof *cw);
    size_t nt = 0;
    triplet *T = cw ? triplets(m, &nt) : NULL;
    if (!T) {
        free(cw);
        return NULL;
    }
    size_t N = m->n + 2 * c->nz;
    cw->N = N;
    cw->nt = nt;
    cw->Ap = calloc(N + 1, sizeof *cw->Ap);
    cw->Ai = calloc(nt ? nt : 1, sizeof *cw->Ai);
    cw->Ax = calloc(nt ? nt : 1, sizeof *cw->Ax);
    cw->t_pos = calloc(nt ? nt : 1, sizeof *cw->t_pos);
    cw->t_src = calloc(nt ? nt : 1, sizeof *cw->t_src);
    cw->t_k = calloc(nt ? nt : 1, sizeof *cw->t_k);
    cw->x = calloc(N, sizeof *cw->x);
    cw->b = calloc(N, sizeof *cw->b);
    cw->r = calloc(N, sizeof *cw->r);
    cw->den = calloc(N, sizeof *cw->den);
    cw->out = calloc(c->nout ? c->nout : 1, sizeof *cw->out);
    cw->regs = calloc(hs_prog_nregs(c->prog) ? hs_prog_nregs(c->prog) : 1, sizeof *cw->regs);
    size_t *idx = malloc((nt ? nt : 1) * sizeof *idx);
    triplet *S = malloc((nt ? nt : 1) * sizeof *S);
    int ok = cw->Ap && cw->Ai && cw->Ax && cw->t_pos && cw->t_src && cw->t_k && cw->x &&
             cw->b && cw->r && cw->den &&
             cw->out && cw->regs && idx && S;
    if (ok) {
        /* sort a copy (the slot of each contribution: its position after
         * merging equal (row, col) pairs) */
        memcpy(S, T, nt * sizeof *S);
        for (size_t t = 0; t < nt; t++)
            S[t].k = (double)t;                 /* carry the original index */
        qsort(S, nt, sizeof *S, trip_cmp);
        int slot = -1;
        for (size_t t = 0; t < nt; t++) {
            if (t == 0 || S[t].row != S[t - 1].row || S[t].col != S[t - 1].col) {
                cw->Ai[++slot] = S[t].row;
                cw->Ap[S[t].col + 1]++;
            }
            idx[(size_t)S[t].k] = (size_t)slot;
        }
        for (size_t j = 0; j < N; j++)
            cw->Ap[j + 1] += cw->Ap[j];
        for (size_t t = 0; t < nt; t++) {
            cw->t_pos[t] = (int)idx[t];
            cw->t_src[t] = T[t].src;
            cw->t_k[t] = T[t].k;
        }
        klu_defaults(&cw->common);

        cw->sym = klu_analyze((int)N, cw->Ap, cw->Ai, &cw->common);
        ok = cw->sym != NULL;
    }
    free(idx);
    free(S);
    free(T);
    if (!ok) {
        hs_chain_work_free(cw);
        return NULL;
    }
    return cw;
}

static int singular(const hs_model *m, hs_work *w, double t)
{
    hs_error_init(&w->err);
    w->fail_kind = HS_FAIL_MASS;
    (void)m;
    return hs_error_set(&w->err, HS_EXIT_NUMERIC, "metric d2T/dv2 is not positive definite "
                        "at t=%.17g (the coordinates are singular there)", t);
}

/* Factor the filled matrix: refactor in the last pivot order, pivot
 * afresh when that degraded. */
static int factor(hs_chainwork *cw)
{
    if (cw->num && klu_refactor(cw->Ap, cw->Ai, cw->Ax, cw->sym, cw->num, &cw->common) &&
        klu_rcond(cw->sym, cw->num, &cw->common) && cw->common.rcond >= HS_CHAIN_RCOND_REPIVOT)
        return 0;
    if (cw->num)
        klu_free_numeric(&cw->num, &cw->common);
    cw->num = klu_factor(cw->Ap, cw->Ai, cw->Ax, cw->sym, &cw->common);
    if (!cw->num || !klu_rcond(cw->sym, cw->num, &cw->common) ||
        !(cw->common.rcond >= HS_CHAIN_RCOND_MIN))
        return -1;
    return 0;
}

/* Run the program at the state in w->in; T and the powers the stepper
 * reads (P_nc, P_t) set.  0 or HS_EXIT_NUMERIC. */
static int chain_eval(const hs_model *m, hs_work *w, double t)
{
    const hs_chain *c = m->chain;
    hs_chainwork *cw = w->cw;
    hs_dyn_run_prog(c->prog, w->kchain, w->in, cw->regs, cw->out);
    if (!hs_dyn_all_finite(cw->out, c->nout))
        return hs_dyn_nonfinite(m, w, c->prog, cw->regs, t);
    const double *o = cw->out;
    double T = 0;
    for (size_t j = 0; j < c->nz; j++)
        T += o[c->off_mass + j] * o[c->off_zdot + j] * o[c->off_zdot + j];
    w->T = 0.5 * T;
    w->dyn[m->off_Pd] = o[c->off_Pnc];
    w->dyn[m->off_Pt] = o[c->off_Pt];
    return 0;
}

/* Iterative refinement (as LAPACK's xGERFS, one step): when the
 * componentwise backward error max_i |b - K x|_i / (|K| |x| + |b|)_i is
 * above a few ulps, x += K^-1 (b - K x) (a second step costs 9% of an
 * evaluation and changed no test).  The saddle-point matrix of a
 * straightened chain amplifies KLU's threshold pivoting to 1e-10 relative
 * error in the accelerations; one step brings it to the dense metric's
 * round-off (tests/check_structure.c). */
static void refine(hs_chainwork *cw)
{
    size_t N = cw->N;
    double *r = cw->r, *den = cw->den;
    memcpy(r, cw->b, N * sizeof *r);
    for (size_t i = 0; i < N; i++)
        den[i] = fabs(cw->b[i]);
    for (size_t j = 0; j < N; j++)
        for (int p = cw->Ap[j]; p < cw->Ap[j + 1]; p++) {
            double t = cw->Ax[p] * cw->x[j];
            r[cw->Ai[p]] -= t;
            den[cw->Ai[p]] += fabs(t);
        }
    double berr = 0;
    for (size_t i = 0; i < N; i++)
        if (den[i] > 0 && fabs(r[i]) > berr * den[i])
            berr = fabs(r[i]) / den[i];
    if (berr <= 4 * DBL_EPSILON)
        return;
    klu_solve(cw->sym, cw->num, (int)N, 1, r, &cw->common);
    for (size_t j = 0; j < N; j++)
        cw->x[j] += r[j];
}

int hs_chain_accel(const hs_model *m, hs_work *w, double t, double *a)
{
    const hs_chain *c = m->chain;
    hs_chainwork *cw = w->cw;
    size_t n = m->n, nz = c->nz;
    if (chain_eval(m, w, t))
        return HS_EXIT_NUMERIC;
    const double *o = cw->out;
    memset(cw->Ax, 0, (size_t)cw->Ap[cw->N] * sizeof *cw->Ax);
    for (size_t i = 0; i < cw->nt; i++)
        cw->Ax[cw->t_pos[i]] += cw->t_src[i] >= 0 ? cw->t_k[i] * o[cw->t_src[i]] : cw->t_k[i];
    memcpy(cw->x, o + c->off_Q, n * sizeof *cw->x);
    memcpy(cw->x + n, o + c->off_F, nz * sizeof *cw->x);
    for (size_t j = 0; j < nz; j++)
        cw->x[n + nz + j] = -o[c->off_gamma + j];
    if (factor(cw))
        return singular(m, w, t);
    memcpy(cw->b, cw->x, cw->N * sizeof *cw->b);
    klu_solve(cw->sym, cw->num, (int)cw->N, 1, cw->x, &cw->common);
    refine(cw);
    if (!hs_dyn_all_finite(cw->x, n)) {
        hs_error_init(&w->err);
        w->fail_kind = HS_FAIL_NONFINITE;
        return hs_error_set(&w->err, HS_EXIT_NUMERIC, "non-finite acceleration at t=%.17g", t);
    }
    memcpy(a, cw->x, n * sizeof *a);
    return 0;
}

int hs_chain_kinetic(const hs_model *m, hs_work *w, double t)
{
    return chain_eval(m, w, t);
}
