/* A square sparse system of fixed pattern, factored by KLU (SuiteSparse):
 * the pattern ordered once (in klu_analyze), the values factored with
 * partial pivoting at the first call and refactored in the same pivot
 * order after that (O(entries of the factors) each), afresh when the
 * pivots have degraded; solutions refined once (linalg.h).  The ordering is
 * COLAMD's (callgrind, a 128-link chain in angles, per evaluation: 453k
 * instructions with AMD, 396k with COLAMD, 463k without the block
 * triangular form). */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <suitesparse/klu.h>

#include "linalg.h"

/* A refactorization whose reciprocal pivot ratio (min/max |U_ii|) falls
 * below this is redone with fresh pivoting; below HS_LA_SPARSE_RCOND_MIN
 * even then, the matrix is singular. */
#define HS_LA_SPARSE_REPIVOT 1e-8
#define HS_LA_SPARSE_RCOND_MIN 1e-14

struct hs_la_sparse {
    size_t N, nt;
    int *Ap, *Ai;              /* the pattern, compressed columns */
    double *Ax;
    int *slot;                 /* [nt] each contribution's entry in Ax */
    double *b, *r, *den;       /* [N] right-hand side kept; refinement */
    klu_common common;
    klu_symbolic *sym;
    klu_numeric *num;
};

typedef struct contrib {
    int row, col;
    size_t t;
} contrib;

static int contrib_cmp(const void *pa, const void *pb)
{
    const contrib *a = pa, *b = pb;
    if (a->col != b->col)
        return a->col < b->col ? -1 : 1;
    return (a->row > b->row) - (a->row < b->row);
}

void hs_la_sparse_free(hs_la_sparse *S)
{
    if (!S)
        return;
    if (S->num)
        klu_free_numeric(&S->num, &S->common);
    if (S->sym)
        klu_free_symbolic(&S->sym, &S->common);
    free(S->Ap); free(S->Ai); free(S->Ax); free(S->slot);
    free(S->b); free(S->r); free(S->den);
    free(S);
}

hs_la_sparse *hs_la_sparse_new(size_t N, size_t nt, const int *row, const int *col)
{
    hs_la_sparse *S = calloc(1, sizeof *S);
    contrib *c = malloc((nt ? nt : 1) * sizeof *c);
    if (!S || !c || N == 0 || N > (size_t)1 << 28) {
        free(S);
        free(c);
        return NULL;
    }
    S->N = N;
    S->nt = nt;
    S->Ap = calloc(N + 1, sizeof *S->Ap);
    S->Ai = calloc(nt ? nt : 1, sizeof *S->Ai);
    S->Ax = calloc(nt ? nt : 1, sizeof *S->Ax);
    S->slot = calloc(nt ? nt : 1, sizeof *S->slot);
    S->b = calloc(N, sizeof *S->b);
    S->r = calloc(N, sizeof *S->r);
    S->den = calloc(N, sizeof *S->den);
    int ok = S->Ap && S->Ai && S->Ax && S->slot && S->b && S->r && S->den;
    if (ok) {
        for (size_t t = 0; t < nt; t++)
            c[t] = (contrib){ row[t], col[t], t };
        qsort(c, nt, sizeof *c, contrib_cmp);
        int e = -1;
        for (size_t t = 0; t < nt; t++) {
            if (t == 0 || c[t].row != c[t - 1].row || c[t].col != c[t - 1].col) {
                S->Ai[++e] = c[t].row;
                S->Ap[c[t].col + 1]++;
            }
            S->slot[c[t].t] = e;
        }
        for (size_t j = 0; j < N; j++)
            S->Ap[j + 1] += S->Ap[j];
        klu_defaults(&S->common);
        S->common.ordering = 1;          /* COLAMD: 13% fewer instructions per
                                          * evaluation than AMD on a 128-link chain */
        S->sym = klu_analyze((int)N, S->Ap, S->Ai, &S->common);
        ok = S->sym != NULL;
    }
    free(c);
    if (!ok) {
        hs_la_sparse_free(S);
        return NULL;
    }
    return S;
}

double *hs_la_sparse_values(hs_la_sparse *S)
{
    memset(S->Ax, 0, (size_t)S->Ap[S->N] * sizeof *S->Ax);
    return S->Ax;
}

const int *hs_la_sparse_slots(const hs_la_sparse *S)
{
    return S->slot;
}

int hs_la_sparse_factor(hs_la_sparse *S)
{
    if (S->num && klu_refactor(S->Ap, S->Ai, S->Ax, S->sym, S->num, &S->common) &&
        klu_rcond(S->sym, S->num, &S->common) && S->common.rcond >= HS_LA_SPARSE_REPIVOT)
        return 0;
    if (S->num)
        klu_free_numeric(&S->num, &S->common);
    S->num = klu_factor(S->Ap, S->Ai, S->Ax, S->sym, &S->common);
    if (!S->num || !klu_rcond(S->sym, S->num, &S->common) ||
        !(S->common.rcond >= HS_LA_SPARSE_RCOND_MIN))
        return -1;
    return 0;
}

/* One step of iterative refinement (as LAPACK's xGERFS): when the
 * componentwise backward error max_i |b - K x|_i / (|K| |x| + |b|)_i is
 * above a few ulps, x += K^-1 (b - K x).  The saddle-point matrix of a
 * straightened chain amplifies KLU's threshold pivoting to 1e-10 relative
 * error in the accelerations; one step brings it to the dense metric's
 * round-off (tests/check_structure.c; a second step cost 9% of an
 * evaluation and changed no test). */
static void refine(hs_la_sparse *S, double *x)
{
    size_t N = S->N;
    double *r = S->r, *den = S->den;
    memcpy(r, S->b, N * sizeof *r);
    for (size_t i = 0; i < N; i++)
        den[i] = fabs(S->b[i]);
    for (size_t j = 0; j < N; j++)
        for (int p = S->Ap[j]; p < S->Ap[j + 1]; p++) {
            double t = S->Ax[p] * x[j];
            r[S->Ai[p]] -= t;
            den[S->Ai[p]] += fabs(t);
        }
    double berr = 0;
    for (size_t i = 0; i < N; i++)
        if (den[i] > 0 && fabs(r[i]) > berr * den[i])
            berr = fabs(r[i]) / den[i];
    if (berr <= 4 * DBL_EPSILON)
        return;
    klu_solve(S->sym, S->num, (int)N, 1, r, &S->common);
    for (size_t j = 0; j < N; j++)
        x[j] += r[j];
}

void hs_la_sparse_solve(hs_la_sparse *S, double *x)
{
    memcpy(S->b, x, S->N * sizeof *S->b);
    klu_solve(S->sym, S->num, (int)S->N, 1, x, &S->common);
    refine(S, x);
}
