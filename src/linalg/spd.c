/* A symmetric positive definite sparse matrix of fixed pattern, factored
 * by CHOLMOD (SuiteSparse): the pattern ordered (AMD) and analyzed once,
 * the values factored at each call (simplicial LDL^T).  The C =
 * G_q M^-1 G_q^T of a large model with no narrow band (a cloth, a mesh)
 * and the projection's G_q W G_q^T (linalg.h).  Nothing is printed: the
 * common's print level is 0 and no error handler is set. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

#include <suitesparse/cholmod.h>

#include "linalg.h"

/* CHOLMOD is opened at the first large sparse model (dlopen), not linked:
 * it and what it brings (METIS, LAPACK, OpenMP's runtime) would load at
 * the start of every command.  The table is written once (pthread_once). */
#define CHOLMOD_FUNCS(X) X(start) X(finish) X(allocate_sparse) X(free_sparse) X(analyze) \
    X(factorize) X(solve2) X(free_factor) X(free_dense) X(zeros) X(rcond)
#define STR_(x) #x
#define STR(x) STR_(x)
#define CHOLMOD_SONAME "libcholmod.so." STR(CHOLMOD_MAIN_VERSION)

static struct {
#define X(f) __typeof__(&cholmod_##f) f;
    CHOLMOD_FUNCS(X)
#undef X
} chm;
static int chm_ok;
static pthread_once_t chm_once = PTHREAD_ONCE_INIT;

static void chm_load(void)
{
    void *h = dlopen(CHOLMOD_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return;
#define X(f) \
    if (!(chm.f = (__typeof__(chm.f))dlsym(h, "cholmod_" #f))) \
        return;
    CHOLMOD_FUNCS(X)
#undef X
    chm_ok = 1;
}

int hs_la_spd_available(void)
{
    pthread_once(&chm_once, chm_load);
    return chm_ok;
}

#define cholmod_start chm.start
#define cholmod_finish chm.finish
#define cholmod_allocate_sparse chm.allocate_sparse
#define cholmod_free_sparse chm.free_sparse
#define cholmod_analyze chm.analyze
#define cholmod_factorize chm.factorize
#define cholmod_solve2 chm.solve2
#define cholmod_free_factor chm.free_factor
#define cholmod_free_dense chm.free_dense
#define cholmod_zeros chm.zeros
#define cholmod_rcond chm.rcond

struct hs_la_spd {
    size_t N;
    cholmod_common c;
    cholmod_sparse *A;         /* the lower triangle (stype -1), sorted, packed */
    cholmod_factor *L;
    cholmod_dense *B, *X, *Y, *E;
    double *colsum;            /* [N] the 1-norm's column sums (condition estimate) */
    double *v, *s;             /* [N] scratch of the estimate */
    int *slot, *diag;          /* [np], [N]: where pair z and (i, i) go in A->x */
};

typedef struct entry {
    int row, col;
    size_t t;
} entry;

static int entry_cmp(const void *pa, const void *pb)
{
    const entry *a = pa, *b = pb;
    if (a->col != b->col)
        return a->col < b->col ? -1 : 1;
    return (a->row > b->row) - (a->row < b->row);
}

void hs_la_spd_free(hs_la_spd *S)
{
    if (!S)
        return;
    cholmod_free_factor(&S->L, &S->c);
    cholmod_free_sparse(&S->A, &S->c);
    cholmod_free_dense(&S->B, &S->c);
    cholmod_free_dense(&S->X, &S->c);
    cholmod_free_dense(&S->Y, &S->c);
    cholmod_free_dense(&S->E, &S->c);
    cholmod_finish(&S->c);
    free(S->colsum);
    free(S->v);
    free(S->s);
    free(S->slot);
    free(S->diag);
    free(S);
}

/* The lower triangle's pattern from the diagonal and the pairs; S->slot[z]
 * the entry of pair z, S->diag[i] of (i, i).  0, or -1 out of memory. */
static int pattern(hs_la_spd *S, size_t np, const uint32_t *pi, const uint32_t *pj)
{
    size_t N = S->N, nt = N + np;
    entry *e = malloc(nt * sizeof *e);
    if (!e)
        return -1;
    for (size_t i = 0; i < N; i++)
        e[i] = (entry){ (int)i, (int)i, i };
    for (size_t z = 0; z < np; z++)
        e[N + z] = (entry){ (int)pi[z], (int)pj[z], N + z };
    qsort(e, nt, sizeof *e, entry_cmp);
    size_t nz = 0;
    for (size_t t = 0; t < nt; t++)
        nz += t == 0 || e[t].row != e[t - 1].row || e[t].col != e[t - 1].col;
    S->A = cholmod_allocate_sparse(N, N, nz, 1, 1, -1, CHOLMOD_REAL, &S->c);
    if (!S->A) {
        free(e);
        return -1;
    }
    int *Ap = S->A->p, *Ai = S->A->i;
    memset(Ap, 0, (N + 1) * sizeof *Ap);
    int at = -1;
    for (size_t t = 0; t < nt; t++) {
        if (t == 0 || e[t].row != e[t - 1].row || e[t].col != e[t - 1].col) {
            Ai[++at] = e[t].row;
            Ap[e[t].col + 1]++;
        }
        if (e[t].t < N)
            S->diag[e[t].t] = at;
        else
            S->slot[e[t].t - N] = at;
    }
    for (size_t j = 0; j < N; j++)
        Ap[j + 1] += Ap[j];
    free(e);
    return 0;
}

hs_la_spd *hs_la_spd_new(size_t N, size_t np, const uint32_t *pi, const uint32_t *pj)
{
    if (N == 0 || N > (size_t)1 << 28 || !hs_la_spd_available())
        return NULL;
    hs_la_spd *S = calloc(1, sizeof *S);
    if (!S)
        return NULL;
    S->N = N;
    cholmod_start(&S->c);
    S->c.print = 0;                  /* never a word on the caller's streams */
    S->c.error_handler = NULL;
    /* simplicial LDL^T: Debian's supernodal path goes through OpenMP, whose
     * threads cost 3x the arithmetic on a 100 x 100 cloth (43 ms against
     * 14 ms per evaluation, bench/README.md) and would share the caller's
     * cores unasked; AMD alone (METIS gave the same fill there) */
    S->c.supernodal = CHOLMOD_SIMPLICIAL;
    S->c.nmethods = 1;
    S->c.method[0].ordering = CHOLMOD_AMD;
    S->colsum = malloc(N * sizeof *S->colsum);
    S->v = malloc(N * sizeof *S->v);
    S->s = malloc(N * sizeof *S->s);
    S->slot = malloc((np ? np : 1) * sizeof *S->slot);
    S->diag = malloc(N * sizeof *S->diag);
    S->B = cholmod_zeros(N, 1, CHOLMOD_REAL, &S->c);
    if (!S->colsum || !S->v || !S->s || !S->slot || !S->diag || !S->B ||
        pattern(S, np, pi, pj) ||
        !(S->L = cholmod_analyze(S->A, &S->c))) {
        hs_la_spd_free(S);
        return NULL;
    }
    return S;
}

const int *hs_la_spd_slots(const hs_la_spd *S)
{
    return S->slot;
}

const int *hs_la_spd_diag(const hs_la_spd *S)
{
    return S->diag;
}

double *hs_la_spd_values(hs_la_spd *S)
{
    double *x = S->A->x;
    memset(x, 0, (size_t)((int *)S->A->p)[S->N] * sizeof *x);
    return x;
}

int hs_la_spd_factor(hs_la_spd *S)
{
    if (!cholmod_factorize(S->A, S->L, &S->c))
        return S->c.status == CHOLMOD_OUT_OF_MEMORY ? -2 : -1;
    if (S->c.status == CHOLMOD_NOT_POSDEF || S->L->minor < S->N)
        return -1;
    /* LDL^T goes on through an indefinite matrix: positive definite is
     * every D_jj > 0 (the first entry of each column of the simplicial
     * factor) */
    const int *Lp = S->L->p;
    const double *Lx = S->L->x;
    for (size_t j = 0; !S->L->is_ll && j < S->N; j++)
        if (!(Lx[Lp[j]] > 0))
            return -1;
    return 0;
}

/* x <- C^-1 x: 0, or -1 out of memory (x unchanged). */
static int solve(hs_la_spd *S, double *x)
{
    memcpy(S->B->x, x, S->N * sizeof *x);
    if (!cholmod_solve2(CHOLMOD_A, S->L, S->B, NULL, &S->X, NULL, &S->Y, &S->E, &S->c))
        return -1;
    memcpy(x, S->X->x, S->N * sizeof *x);
    return 0;
}

int hs_la_spd_solve(hs_la_spd *S, double *x)
{
    return solve(S, x);
}

/* Hager's estimate of |C^-1|_1 (Higham's form, at most 5 rounds; C is
 * symmetric, so C^-T = C^-1) times |C|_1. */
static double condest(hs_la_spd *S)
{
    size_t N = S->N;
    const int *Ap = S->A->p, *Ai = S->A->i;
    const double *Ax = S->A->x;
    memset(S->colsum, 0, N * sizeof *S->colsum);
    for (size_t j = 0; j < N; j++)
        for (int p = Ap[j]; p < Ap[j + 1]; p++) {
            S->colsum[j] += fabs(Ax[p]);
            if ((size_t)Ai[p] != j)
                S->colsum[Ai[p]] += fabs(Ax[p]);
        }
    double anorm = 0;
    for (size_t j = 0; j < N; j++)
        anorm = fmax(anorm, S->colsum[j]);
    double *v = S->v, *s = S->s, est = 0;
    for (size_t j = 0; j < N; j++)
        v[j] = 1.0 / (double)N;
    for (int round = 0; round < 5; round++) {
        if (solve(S, v))
            return INFINITY;
        double e = 0;
        for (size_t j = 0; j < N; j++) {
            e += fabs(v[j]);
            s[j] = v[j] >= 0 ? 1 : -1;
        }
        if (round > 0 && e <= est)
            break;
        est = e;
        if (solve(S, s))
            return INFINITY;
        size_t jmax = 0;
        for (size_t j = 1; j < N; j++)
            if (fabs(s[j]) > fabs(s[jmax]))
                jmax = j;
        memset(v, 0, N * sizeof *v);
        v[jmax] = 1;
    }
    return est * anorm;
}

double hs_la_spd_rcond(hs_la_spd *S, int estimate)
{
    if (!estimate)
        return cholmod_rcond(S->L, &S->c);   /* (min L_ii / max L_ii)^2 */
    double k = condest(S);
    return k > 0 && isfinite(k) ? 1 / k : 0;
}

int hs_la_spd_finite(const hs_la_spd *S)
{
    const double *x = S->A->x;
    for (int p = 0; p < ((int *)S->A->p)[S->N]; p++)
        if (!isfinite(x[p]))
            return 0;
    return 1;
}
