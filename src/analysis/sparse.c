/* The sparse path's linear algebra (internal.h): the saddle-point matrix
 *
 *     [ cS S + cM M   G_q^T ]      S = dQ(q,0)/dq + sum_j lambda_j d2G_j/dq2
 *     [ G_q           0     ]
 *
 * over (q, lambda), assembled from the kernels' entry lists (no n x n
 * array anywhere) and factored by KLU (linalg: hs_la_sparse, COLAMD order,
 * one refinement step): Newton's Jacobian (cS = 1, cM = 0) and the
 * shift-invert operator of the modes (cS = -1, cM = -sigma: K - sigma M
 * with K = -S). */
#include "internal.h"
#include "../linalg/linalg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct hs_ak_saddle {
    const hs_an *a;
    size_t n, k, nt;
    hs_la_sparse *L;
};

int hs_ak_sparse(const hs_an *a)
{
    return a->path == HS_AN_PATH_SPARSE ||
           (a->path == HS_AN_PATH_AUTO && a->n + a->k > HS_AN_MAX);
}

const char *const hs_an_path_names[3] = { "auto", "dense", "sparse" };

int hs_an_sparse(const hs_an *a)
{
    return hs_ak_sparse(a);
}

void hs_an_set_path(hs_an *a, hs_an_path p)
{
    a->path = p;
}

void hs_ak_saddle_free(hs_ak_saddle *s)
{
    if (!s)
        return;
    hs_la_sparse_free(s->L);
    free(s);
}

/* The contributions, in the order hs_ak_saddle_factor adds them: S (dQ/dq,
 * then the Hessians both ways), M (both ways), G_q and G_q^T.  With row
 * NULL, only their number. */
static size_t pattern(const hs_an *a, int *row, int *col)
{
    size_t t = 0;
    int n = (int)a->n;
#define PUT(R, C) do { if (row) { row[t] = (R); col[t] = (C); } t++; } while (0)
    for (size_t e = 0; e < a->qq.cnt; e++)
        PUT(a->qq.r[e], a->qq.c[e]);
    for (size_t e = 0; e < a->hg.cnt; e++) {
        PUT(a->hg.r[e], a->hg.c[e]);
        if (a->hg.r[e] != a->hg.c[e])
            PUT(a->hg.c[e], a->hg.r[e]);
    }
    for (size_t e = 0; e < a->mm.cnt; e++) {
        PUT(a->mm.r[e], a->mm.c[e]);
        if (a->mm.r[e] != a->mm.c[e])
            PUT(a->mm.c[e], a->mm.r[e]);
    }
    for (size_t e = 0; e < a->gq.cnt; e++) {
        PUT(n + a->gq.r[e], a->gq.c[e]);
        PUT(a->gq.c[e], n + a->gq.r[e]);
    }
#undef PUT
    return t;
}

hs_ak_saddle *hs_ak_saddle_new(const hs_an *a)
{
    hs_ak_saddle *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->a = a;
    s->n = a->n;
    s->k = a->k;
    s->nt = pattern(a, NULL, NULL);
    int *row = malloc((s->nt + 1) * sizeof *row), *col = malloc((s->nt + 1) * sizeof *col);
    if (row && col) {
        pattern(a, row, col);
        s->L = hs_la_sparse_new(a->n + a->k, s->nt, row, col);
    }
    free(row);
    free(col);
    if (!s->L) {
        free(s);
        return NULL;
    }
    return s;
}

int hs_ak_saddle_factor(hs_ak_saddle *s, const double *lambda, double cS, double cM)
{
    const hs_an *a = s->a;
    double *x = hs_la_sparse_values(s->L);
    const int *slot = hs_la_sparse_slots(s->L);
    size_t t = 0;
    for (size_t e = 0; e < a->qq.cnt; e++)
        x[slot[t++]] += cS * a->out_eq[a->off_Qq + e];
    for (size_t e = 0; e < a->hg.cnt; e++) {
        double h = cS * lambda[a->hg.g[e]] * a->out_eq[a->off_Hg + e];
        x[slot[t++]] += h;
        if (a->hg.r[e] != a->hg.c[e])
            x[slot[t++]] += h;
    }
    for (size_t e = 0; e < a->mm.cnt; e++) {
        double mv = cM != 0 ? cM * a->out_lin[e] : 0.0;
        x[slot[t++]] += mv;
        if (a->mm.r[e] != a->mm.c[e])
            x[slot[t++]] += mv;
    }
    for (size_t e = 0; e < a->gq.cnt; e++) {
        double g = a->out_eq[a->off_Gq + e];
        x[slot[t++]] += g;
        x[slot[t++]] += g;
    }
    return hs_la_sparse_factor(s->L);
}

void hs_ak_saddle_solve(hs_ak_saddle *s, double *x)
{
    hs_la_sparse_solve(s->L, x);
}

void hs_ak_M_mul(const hs_an *a, const double *x, double *y)
{
    for (size_t e = 0; e < a->mm.cnt; e++) {
        size_t r = (size_t)a->mm.r[e], c = (size_t)a->mm.c[e];
        y[r] += a->out_lin[e] * x[c];
        if (r != c)
            y[c] += a->out_lin[e] * x[r];
    }
}

void hs_ak_S_mul(const hs_an *a, const double *lambda, const double *x, double *y,
                 int absval)
{
    memset(y, 0, a->n * sizeof *y);
    for (size_t e = 0; e < a->qq.cnt; e++) {
        double v = a->out_eq[a->off_Qq + e];
        size_t r = (size_t)a->qq.r[e], c = (size_t)a->qq.c[e];
        y[r] += absval ? fabs(v) * fabs(x[c]) : v * x[c];
    }
    for (size_t e = 0; e < a->hg.cnt; e++) {
        double h = lambda[a->hg.g[e]] * a->out_eq[a->off_Hg + e];
        size_t r = (size_t)a->hg.r[e], c = (size_t)a->hg.c[e];
        y[r] += absval ? fabs(h) * fabs(x[c]) : h * x[c];
        if (r != c)
            y[c] += absval ? fabs(h) * fabs(x[r]) : h * x[r];
    }
}
