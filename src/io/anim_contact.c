/* The contacts in an animation (anim.h): the boundaries gap = 0 that can
 * be drawn in a 2D view, traced by marching squares over the view box,
 * and the rings that mark the run's impacts for a moment. */
#include "anim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CELL_PX 6              /* the marching squares' cell, pixels */

/* Whether the point's coordinate expression e reads q_i and no other
 * coordinate. */
static int reads_only(const hs_model *m, const hs_node *e, size_t i)
{
    if (!hs_depends_on(e, m->sym_q[i]))
        return 0;
    for (size_t k = 0; k < m->n; k++)
        if (k != i && hs_depends_on(e, m->sym_q[k]))
            return 0;
    return 1;
}

/* Contact j: the points its impacts mark (those that read a coordinate of
 * its gap) and, in a 2D drawing, the coordinate on each axis of the view
 * (ax[c]) when one point reads every coordinate of the gap, each on an
 * axis of its own and alone there. */
static void contact_geometry(hs_anim *a, size_t j)
{
    const hs_model *m = a->m;
    const hs_drawing *d = m->draw;
    const hs_node *g = m->G[m->contact0 + j];
    size_t dim = (size_t)d->dim, nS = 0;
    long *ax = a->bnd_axis + 2 * j;
    ax[0] = ax[1] = -1;
    for (size_t p = 0; p < d->npt; p++)
        for (size_t i = 0; i < m->n; i++)
            for (size_t c = 0; c < dim; c++)
                if (hs_depends_on(g, m->sym_q[i]) &&
                    hs_depends_on(m->draw_expr[p * dim + c], m->sym_q[i]))
                    a->imp_pt[j * d->npt + p] = 1;
    for (size_t i = 0; i < m->n; i++)
        nS += (size_t)hs_depends_on(g, m->sym_q[i]);
    if (dim != 2 || nS == 0 || nS > 2)
        return;
    for (size_t p = 0; p < d->npt; p++) {
        long map[2] = { -1, -1 };
        size_t found = 0;
        for (size_t i = 0; i < m->n; i++) {
            if (!hs_depends_on(g, m->sym_q[i]))
                continue;
            for (size_t c = 0; c < 2; c++)
                if (map[c] < 0 && reads_only(m, m->draw_expr[p * 2 + c], i)) {
                    map[c] = (long)i;
                    found++;
                    break;
                }
        }
        if (found == nS) {
            ax[0] = map[0];
            ax[1] = map[1];
            return;
        }
    }
}

int hs_anim_contacts_init(hs_anim *a)
{
    const hs_model *m = a->m;
    size_t nc = m->ncontact, npt = m->draw->npt;
    if (!nc || !m->G)
        return 0;
    a->bnd_axis = calloc(2 * nc, sizeof *a->bnd_axis);
    a->imp_pt = calloc(nc * npt + 1, 1);
    if (!a->bnd_axis || !a->imp_pt)
        return -1;
    for (size_t j = 0; j < nc; j++)
        contact_geometry(a, j);
    hs_error err;
    hs_error_init(&err);
    a->bnd_prog = hs_prog_compile(m->dag, m->G + m->contact0, nc, &err);
    if (!a->bnd_prog)
        return -1;
    size_t nin = m->nin > hs_prog_nin(a->bnd_prog) ? m->nin : hs_prog_nin(a->bnd_prog);
    a->bnd_in = calloc(nin + 1, sizeof *a->bnd_in);
    a->bnd_regs = calloc(hs_prog_nregs(a->bnd_prog) + 1, sizeof *a->bnd_regs);
    a->bnd_out = calloc(nc, sizeof *a->bnd_out);
    if (!a->bnd_in || !a->bnd_regs || !a->bnd_out)
        return -1;
    hs_model_inputs(m, a->bnd_in);
    for (size_t i = 0; i < m->n; i++)
        a->bnd_in[m->sym_q[i]] = m->q0[i];
    return 0;
}

void hs_anim_contacts_free(hs_anim *a)
{
    free(a->impact_t);
    free(a->impact_c);
    free(a->bnd_axis);
    free(a->imp_pt);
    hs_prog_free(a->bnd_prog);
    free(a->bnd_in);
    free(a->bnd_regs);
    free(a->bnd_out);
}

int hs_anim_add_impact(hs_anim *a, double t, size_t contact)
{
    if (a->nimpact == a->impact_cap) {
        size_t cap = a->impact_cap ? 2 * a->impact_cap : 64;
        double *ti = realloc(a->impact_t, cap * sizeof *ti);
        if (ti)
            a->impact_t = ti;
        size_t *ci = realloc(a->impact_c, cap * sizeof *ci);
        if (ci)
            a->impact_c = ci;
        if (!ti || !ci)
            return -1;
        a->impact_cap = cap;
    }
    a->impact_t[a->nimpact] = t;
    a->impact_c[a->nimpact++] = contact;
    return 0;
}

int hs_anim_bound_drawn(const hs_anim *a, size_t j)
{
    return a->bnd_axis && (a->bnd_axis[2 * j] >= 0 || a->bnd_axis[2 * j + 1] >= 0);
}

int hs_anim_bound_moves(const hs_anim *a, size_t j)
{
    const hs_model *m = a->m;
    return hs_depends_on(m->G[m->contact0 + j], m->sym_t) != 0;
}

/* Contact j's gap at the world point (x, y) of the view, time t. */
static double gap_at(const hs_anim *a, size_t j, double t, double x, double y)
{
    const hs_model *m = a->m;
    const long *ax = a->bnd_axis + 2 * j;
    double *in = a->bnd_in;
    in[m->sym_t] = t;
    if (ax[0] >= 0)
        in[m->sym_q[ax[0]]] = x;
    if (ax[1] >= 0)
        in[m->sym_q[ax[1]]] = y;
    hs_prog_eval(a->bnd_prog, in, a->bnd_regs, a->bnd_out);
    return a->bnd_out[j];
}

/* The point where the gap crosses 0 on the edge from (x0, y0, g0) to
 * (x1, y1, g1). */
static void cross(double x0, double y0, double g0, double x1, double y1, double g1, double *p)
{
    double w = g0 == g1 ? 0.5 : g0 / (g0 - g1);
    p[0] = x0 + w * (x1 - x0);
    p[1] = y0 + w * (y1 - y0);
}

/* One cell of the marching squares: corners g[4] (x0,y0), (x1,y0),
 * (x1,y1), (x0,y1); the segments' ends appended to seg. */
static size_t cell(const double *g, double gc, double x0, double y0, double x1, double y1,
                   double *seg)
{
    const double cx[4] = { x0, x1, x1, x0 }, cy[4] = { y0, y0, y1, y1 };
    double p[4][2];
    int has[4], k = 0;
    for (int e = 0; e < 4; e++) {
        int f = (e + 1) % 4;
        has[e] = (g[e] >= 0) != (g[f] >= 0);
        if (has[e]) {
            cross(cx[e], cy[e], g[e], cx[f], cy[f], g[f], p[e]);
            k++;
        }
    }
    if (k == 2) {
        size_t n = 0;
        for (int e = 0; e < 4; e++)
            if (has[e]) {
                seg[n++] = p[e][0];
                seg[n++] = p[e][1];
            }
        return 1;
    }
    if (k != 4 || !isfinite(gc))
        return 0;
    /* a saddle: the centre on corner 0's side joins it to corner 2 */
    int pair = (gc >= 0) == (g[0] >= 0);
    int e0[2] = { pair ? 0 : 3, pair ? 2 : 1 }, e1[2] = { pair ? 1 : 0, pair ? 3 : 2 };
    for (int s = 0; s < 2; s++) {
        seg[4 * s] = p[e0[s]][0];
        seg[4 * s + 1] = p[e0[s]][1];
        seg[4 * s + 2] = p[e1[s]][0];
        seg[4 * s + 3] = p[e1[s]][1];
    }
    return 2;
}

double *hs_anim_bounds(const hs_anim *a, const hs_anim_view *v, double t, int still,
                       size_t *nseg)
{
    *nseg = 0;
    if (v->dim != 2 || !a->bnd_prog || !(v->s > 0))
        return NULL;
    const hs_model *m = a->m;
    if (m->ntab)
        hs_model_tables_at(m, t, a->bnd_in, NULL);
    int nx = (v->width + CELL_PX - 1) / CELL_PX, ny = (v->height + CELL_PX - 1) / CELL_PX;
    double h = CELL_PX / v->s;
    double xlo = v->c[0] - 0.5 * v->width / v->s, ylo = v->c[1] - 0.5 * v->height / v->s;
    double *g = malloc((size_t)(nx + 1) * (size_t)(ny + 1) * sizeof *g);
    double *seg = NULL;
    size_t cap = 0;
    for (size_t j = 0; g && j < m->ncontact; j++) {
        if (!hs_anim_bound_drawn(a, j) || (still && hs_anim_bound_moves(a, j)))
            continue;
        for (int iy = 0; iy <= ny; iy++)
            for (int ix = 0; ix <= nx; ix++)
                g[iy * (nx + 1) + ix] = gap_at(a, j, t, xlo + ix * h, ylo + iy * h);
        for (int iy = 0; iy < ny; iy++)
            for (int ix = 0; ix < nx; ix++) {
                const double *r0 = g + iy * (nx + 1) + ix, *r1 = r0 + nx + 1;
                double c4[4] = { r0[0], r0[1], r1[1], r1[0] };
                if (!isfinite(c4[0]) || !isfinite(c4[1]) || !isfinite(c4[2]) ||
                    !isfinite(c4[3]))
                    continue;
                if (*nseg + 2 > cap) {
                    size_t nc = cap ? 2 * cap : 256;
                    double *s2 = realloc(seg, nc * 4 * sizeof *s2);
                    if (!s2) {
                        free(g);
                        free(seg);
                        *nseg = 0;
                        return NULL;
                    }
                    seg = s2;
                    cap = nc;
                }
                double x0 = xlo + ix * h, y0 = ylo + iy * h;
                int saddle = (c4[0] >= 0) == (c4[2] >= 0) && (c4[1] >= 0) == (c4[3] >= 0) &&
                             (c4[0] >= 0) != (c4[1] >= 0);
                double gc = saddle ? gap_at(a, j, t, x0 + 0.5 * h, y0 + 0.5 * h) : (double)NAN;
                *nseg += cell(c4, gc, x0, y0, x0 + h, y0 + h, seg + 4 * *nseg);
            }
    }
    free(g);
    if (!*nseg) {
        free(seg);
        return NULL;
    }
    return seg;
}

size_t hs_anim_flashes(const hs_anim *a, double t, double dur, hs_anim_flash *f, size_t cap)
{
    const hs_model *m = a->m;
    const hs_drawing *d = m->draw;
    size_t dim = (size_t)d->dim, n = 0;
    if (!a->nimpact || !a->imp_pt || !a->nframe)
        return 0;
    double *val = malloc((a->nval + 1) * sizeof *val);
    if (!val)
        return 0;
    for (size_t k = 0; k < a->nimpact && n < cap; k++) {
        double age = (t - a->impact_t[k]) / dur;
        if (!(age >= 0 && age < 1) && !(t >= a->impact_t[k] - a->flash_lead && age < 0))
            continue;
        age = fmax(age, 0);
        hs_anim_values_at(a, a->impact_t[k], val);
        for (size_t p = 0; p < d->npt && n < cap; p++) {
            if (!a->imp_pt[a->impact_c[k] * d->npt + p])
                continue;
            hs_anim_flash *F = &f[n++];
            memset(F, 0, sizeof *F);
            for (size_t c = 0; c < dim; c++)
                F->p[c] = val[p * dim + c];
            for (size_t i = 0; i < d->nitem; i++)
                if (d->item[i].kind == HS_DRAW_CIRCLE && d->item[i].pt[0] == p)
                    F->r = fmax(F->r, fabs(val[d->item[i].rout]));
            F->age = age;
        }
    }
    free(val);
    return n;
}

double hs_anim_flash_time(const hs_anim *a)
{
    return a->flash_time > 0 ? a->flash_time : HS_ANIM_FLASH_TIME * a->speed;
}
