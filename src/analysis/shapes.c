/* The eigensolvers' rows into hs_modes (internal.h): sorted, the complex
 * mode shapes normalized, round-off flushed, and the verdict.
 *
 * A row is an eigenvalue s = sigma + i omega (omega >= 0) and its shape dq
 * in the model's coordinates (complex: a gyroscopic or damped system has
 * modes whose coordinates move out of phase, a circular mode reads d_x = 1,
 * d_y = +-i).  The shape is divided by its component of largest modulus, so
 * that one is 1 at phase 0; parts below HS_AN_SHAPE_ROUNDOFF are then 0,
 * and so is a sigma below HS_AN_Q_ROUNDOFF of max |s|.
 *
 * The verdict (analysis.h): unstable when an eigenvalue has sigma beyond
 * round-off (STABLE_TOL of max |s|) above 0; marginal when none has, but
 * an eigenvalue is 0 to that round-off (a neutral direction: a family of
 * equilibria, a free coordinate, a critical speed where a frequency goes
 * through 0) or two rows share an s = i omega on the imaginary axis with
 * parallel shapes (a Jordan block, the eigensolver's two perturbed copies
 * of one defective eigenvalue: the linear motion grows like t e^(i omega t));
 * stable otherwise. */
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define STABLE_TOL 1e-7     /* sigma <= STABLE_TOL * max |s|: round-off; |s| below: 0 */
#define SAME_TOL 1e-6       /* |s1 - s2| <= SAME_TOL max |s|: one repeated eigenvalue */
#define PARALLEL_TOL 1e-6   /* 1 - |<d1, d2>| / (|d1| |d2|) below: parallel shapes */

const char *const hs_an_verdict_names[3] = { "unstable", "marginal", "stable" };

/* Scale (re, im) so that the component of largest modulus (the first of
 * those within 1e-9 of the largest) is 1; parts below round-off to 0. */
static void normalize(const double *re, const double *im, size_t n, double *ore, double *oim)
{
    double mx = 0;
    for (size_t i = 0; i < n; i++)
        mx = fmax(mx, hypot(re[i], im[i]));
    size_t p = 0;
    while (p + 1 < n && hypot(re[p], im[p]) < mx * (1 - 1e-9))
        p++;
    double cr = re[p], ci = im[p], c2 = cr * cr + ci * ci;
    for (size_t i = 0; i < n; i++) {
        /* (re + i im) / (cr + i ci) */
        double xr = c2 > 0 ? (re[i] * cr + im[i] * ci) / c2 : 0;
        double xi = c2 > 0 ? (im[i] * cr - re[i] * ci) / c2 : 0;
        ore[i] = i == p ? 1.0 : fabs(xr) <= HS_AN_SHAPE_ROUNDOFF ? 0.0 : xr;
        oim[i] = i == p || fabs(xi) <= HS_AN_SHAPE_ROUNDOFF ? 0.0 : xi;
    }
}

typedef struct order {
    double sigma, omega;
    size_t i;
} order;

/* By omega ascending, then sigma descending (then as found). */
static int order_cmp(const void *pa, const void *pb)
{
    const order *x = pa, *y = pb;
    if (x->omega != y->omega)
        return x->omega < y->omega ? -1 : 1;
    if (x->sigma != y->sigma)
        return x->sigma > y->sigma ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* 1 - |<a, b>| / (|a| |b|) of two complex shapes: 0 when parallel. */
static double angle_gap(const double *ar, const double *ai, const double *br,
                        const double *bi, size_t n)
{
    double pr = 0, pi = 0, na = 0, nb = 0;
    for (size_t i = 0; i < n; i++) {
        pr += ar[i] * br[i] + ai[i] * bi[i];      /* conj(a) . b */
        pi += ar[i] * bi[i] - ai[i] * br[i];
        na += ar[i] * ar[i] + ai[i] * ai[i];
        nb += br[i] * br[i] + bi[i] * bi[i];
    }
    return na > 0 && nb > 0 ? 1 - hypot(pr, pi) / sqrt(na * nb) : 1;
}

/* The verdict of the sorted rows of md. */
static void verdict(hs_modes *md)
{
    size_t n = md->n, c = md->count;
    double rho = 0;
    for (size_t r = 0; r < c; r++)
        rho = fmax(rho, hypot(md->sigma[r], md->omega[r]));
    for (size_t r = 0; r < c; r++)     /* round-off of the eigensolver: 0 */
        if (fabs(md->sigma[r]) <= HS_AN_Q_ROUNDOFF * rho)
            md->sigma[r] = 0;
    md->sigma_max = c ? -INFINITY : 0;
    for (size_t r = 0; r < c; r++)
        md->sigma_max = fmax(md->sigma_max, md->sigma[r]);
    double tol = STABLE_TOL * rho;
    md->nzero = 0;
    md->jordan_omega = 0;
    for (size_t r = 0; r < c; r++) {
        if (hypot(md->sigma[r], md->omega[r]) <= tol) {
            md->nzero++;
            continue;
        }
        if (fabs(md->sigma[r]) > tol)
            continue;
        /* sorted by omega: a repeated eigenvalue's copies are next to it */
        for (size_t u = r + 1; u < c && md->omega[u] - md->omega[r] <= SAME_TOL * rho; u++)
            if (fabs(md->sigma[u]) <= tol &&
                angle_gap(md->shape + r * n, md->shape_im + r * n, md->shape + u * n,
                          md->shape_im + u * n, n) <= PARALLEL_TOL)
                md->jordan_omega = 0.5 * (md->omega[r] + md->omega[u]);
    }
    md->verdict = md->sigma_max > tol ? HS_AN_UNSTABLE
                  : md->nzero || md->jordan_omega > 0 ? HS_AN_MARGINAL
                  : HS_AN_STABLE;
    md->stable = md->verdict == HS_AN_STABLE;
}

int hs_ak_finish(const hs_ak_rows *R, hs_modes *md)
{
    size_t n = R->n, c = R->cnt, c1 = c ? c : 1;
    order *o = malloc(c1 * sizeof *o);
    md->sigma = malloc(c1 * sizeof *md->sigma);
    md->omega = malloc(c1 * sizeof *md->omega);
    md->shape = malloc(c1 * n * sizeof *md->shape);
    md->shape_im = malloc(c1 * n * sizeof *md->shape_im);
    if (!o || !md->sigma || !md->omega || !md->shape || !md->shape_im) {
        free(o);
        return -1;
    }
    for (size_t i = 0; i < c; i++)
        o[i] = (order){ R->sigma[i], R->omega[i], i };
    qsort(o, c, sizeof *o, order_cmp);
    for (size_t r = 0; r < c; r++) {
        size_t i = o[r].i;
        md->sigma[r] = R->sigma[i];
        md->omega[r] = R->omega[i];
        normalize(R->re + i * n, R->im + i * n, n, md->shape + r * n, md->shape_im + r * n);
    }
    md->count = c;
    verdict(md);
    free(o);
    return 0;
}
