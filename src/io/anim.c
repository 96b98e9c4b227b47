/* The frames of an animation (anim.h): rows kept as they stream in,
 * thinned when they would pass the cap, and the view shared by the page
 * and the rasterizer. */
#include "anim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int hs_anim_init(hs_anim *a, const hs_model *m, size_t nplot, double interval, size_t cap)
{
    const hs_drawing *d = m->draw;
    *a = (hs_anim){ .m = m, .nval = d->nout, .nplot = nplot, .interval = interval,
                    .cap = cap, .speed = 1, .fps = 60, .width = 720, .height = 540,
                    .trail_time = 2 };
    a->plotname = calloc(nplot + 1, sizeof *a->plotname);
    a->trail = calloc(d->npt + 1, 1);
    return a->plotname && a->trail ? 0 : -1;
}

void hs_anim_free(hs_anim *a)
{
    if (!a)
        return;
    for (size_t i = 0; a->plotname && i < a->nplot; i++)
        free(a->plotname[i]);
    free(a->plotname);
    free(a->trail);
    free(a->t);
    free(a->val);
    free(a->plot);
    memset(a, 0, sizeof *a);
}

/* A row at least interval after the last kept frame (relative slack for
 * grid times that round: 0.1 + 0.2). */
int hs_anim_wants(const hs_anim *a, double t)
{
    if (!a->nframe)
        return 1;
    double last = a->t[a->nframe - 1];
    return t - last >= a->interval * (1 - 1e-9);
}

/* Twice the interval: keep the first frame and each one at least the new
 * interval after the last kept; the final frame stays. */
static void thin(hs_anim *a)
{
    a->interval *= 2;
    a->thinned++;
    size_t w = 1;
    for (size_t r = 1; r < a->nframe; r++) {
        if (r + 1 < a->nframe && a->t[r] - a->t[w - 1] < a->interval * (1 - 1e-9))
            continue;
        a->t[w] = a->t[r];
        memmove(a->val + w * a->nval, a->val + r * a->nval, a->nval * sizeof *a->val);
        memmove(a->plot + w * a->nplot, a->plot + r * a->nplot, a->nplot * sizeof *a->plot);
        w++;
    }
    a->nframe = w;
}

int hs_anim_add(hs_anim *a, double t, const double *val, const double *plot)
{
    size_t per = a->nval + a->nplot + 1;
    while (a->nframe > 2 && (a->nframe + 1) * per > a->cap)
        thin(a);
    if (a->nframe == a->cap_frames) {
        size_t c = a->cap_frames ? 2 * a->cap_frames : 256;
        double *t2 = realloc(a->t, c * sizeof *t2);
        if (!t2)
            return -1;
        a->t = t2;
        float *v2 = realloc(a->val, (c * a->nval + 1) * sizeof *v2);
        if (!v2)
            return -1;
        a->val = v2;
        float *p2 = realloc(a->plot, (c * a->nplot + 1) * sizeof *p2);
        if (!p2)
            return -1;
        a->plot = p2;
        a->cap_frames = c;
    }
    size_t f = a->nframe++;
    a->t[f] = t;
    for (size_t i = 0; i < a->nval; i++)
        a->val[f * a->nval + i] = (float)val[i];
    for (size_t i = 0; i < a->nplot; i++)
        a->plot[f * a->nplot + i] = (float)plot[i];
    return 0;
}

void hs_anim_values_at(const hs_anim *a, double t, double *val)
{
    size_t lo = 0, hi = a->nframe - 1;
    if (t <= a->t[0])
        hi = 0;
    else if (t >= a->t[hi])
        lo = hi;
    else
        while (hi - lo > 1) {           /* t[lo] <= t < t[hi] */
            size_t mid = lo + (hi - lo) / 2;
            if (a->t[mid] <= t)
                lo = mid;
            else
                hi = mid;
        }
    double w = hi > lo ? (t - a->t[lo]) / (a->t[hi] - a->t[lo]) : 0;
    for (size_t i = 0; i < a->nval; i++) {
        double x0 = (double)a->val[lo * a->nval + i], x1 = (double)a->val[hi * a->nval + i];
        val[i] = x0 + w * (x1 - x0);
    }
}

void hs_anim_view_init(const hs_anim *a, hs_anim_view *v)
{
    const hs_drawing *d = a->m->draw;
    size_t dim = (size_t)d->dim;
    double lo[3] = { INFINITY, INFINITY, INFINITY }, hi[3] = { -INFINITY, -INFINITY, -INFINITY };
    double rmax = 0;
    for (size_t f = 0; f < a->nframe; f++) {
        const float *x = a->val + f * a->nval;
        for (size_t p = 0; p < d->npt; p++)
            for (size_t c = 0; c < dim; c++) {
                double u = (double)x[p * dim + c];
                if (isfinite(u)) {
                    lo[c] = fmin(lo[c], u);
                    hi[c] = fmax(hi[c], u);
                }
            }
        for (size_t r = d->npt * dim; r < a->nval; r++)
            if (isfinite((double)x[r]))
                rmax = fmax(rmax, fabs((double)x[r]));
    }
    *v = (hs_anim_view){ .dim = (int)dim, .width = a->width, .height = a->height,
                         .az = HS_ANIM_AZ, .el = HS_ANIM_EL };
    double span[3] = { 0, 0, 0 };
    for (size_t c = 0; c < dim; c++) {
        if (!(lo[c] <= hi[c]))
            lo[c] = hi[c] = 0;
        v->c[c] = 0.5 * (lo[c] + hi[c]);
        span[c] = hi[c] - lo[c] + 2 * rmax;
    }
    double margin = 0.05 * (a->width < a->height ? a->width : a->height);
    double W = a->width - 2 * margin, H = a->height - 2 * margin;
    if (dim == 2) {
        double sx = span[0] > 0 ? W / span[0] : HUGE_VAL, sy = span[1] > 0 ? H / span[1] : HUGE_VAL;
        v->s = fmin(sx, sy);
    } else {
        double R = 0.5 * sqrt(span[0] * span[0] + span[1] * span[1] + span[2] * span[2]);
        v->s = R > 0 ? 0.5 * fmin(W, H) / R : HUGE_VAL;
    }
    if (!isfinite(v->s))
        v->s = 0.25 * fmin(W, H);      /* one point that never moves */
}

void hs_anim_project(const hs_anim_view *v, const double *p, double *px, double *py,
                     double *depth)
{
    double dx = p[0] - v->c[0], dy = p[1] - v->c[1];
    if (v->dim == 2) {
        *px = 0.5 * v->width + v->s * dx;
        *py = 0.5 * v->height - v->s * dy;
        *depth = 0;
        return;
    }
    double dz = p[2] - v->c[2], ca = cos(v->az), sa = sin(v->az), ce = cos(v->el),
           se = sin(v->el);
    double u = -sa * dx + ca * dy, w = -se * (ca * dx + sa * dy) + ce * dz;
    *px = 0.5 * v->width + v->s * u;
    *py = 0.5 * v->height - v->s * w;
    *depth = ce * (ca * dx + sa * dy) + se * dz;
}

void hs_anim_floor(const hs_anim *a, const hs_anim_view *v, double *zlo, double *span)
{
    const hs_drawing *d = a->m->draw;
    double lo = HUGE_VAL, ext = 0;
    if (d->dim == 3)
        for (size_t f = 0; f < a->nframe; f++)
            for (size_t p = 0; p < d->npt; p++) {
                const float *x = a->val + f * a->nval + 3 * p;
                if (!isfinite((double)x[0]) || !isfinite((double)x[1]) || !isfinite((double)x[2]))
                    continue;
                lo = fmin(lo, (double)x[2]);
                ext = fmax(ext, 2 * fmax(fabs((double)x[0] - v->c[0]),
                                         fabs((double)x[1] - v->c[1])));
            }
    *zlo = isfinite(lo) ? lo : 0;
    *span = 1.2 * (ext > 0 ? ext : 1);
}
