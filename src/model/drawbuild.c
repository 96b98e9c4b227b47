/* The drawing under construction (drawing.h): points and items added,
 * looked up, a pair's segment found; below draw.c (the `draw` key) and
 * drawinfer.c (the default), which both build with them. */
#include "drawing.h"

#include <stdlib.h>
#include <string.h>

int hs_dw_long_cmp(const void *pa, const void *pb)
{
    long a = *(const long *)pa, b = *(const long *)pb;
    return (a > b) - (a < b);
}

int hs_dw_oom(loader *L)
{
    return hs_error_nomem(L->err);
}

int hs_dw_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? 2 * *cap : 8;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

long hs_dw_add_point(dbuild *B, const char *name, const hs_node *x, const hs_node *y,
                     const hs_node *z)
{
    hs_drawing *d = B->d;
    size_t np = d->npt;
    size_t had = B->ptcap;      /* the three point arrays grow together */
    if (hs_dw_grow((void **)&d->ptname, &B->ptcap, np + 1, sizeof *d->ptname))
        return hs_dw_oom(B->L), -1;
    size_t cap = B->ptcap;
    B->ptcap = had;
    if (hs_dw_grow((void **)&d->ptrgb, &B->ptcap, cap, sizeof *d->ptrgb) ||
        (B->ptcap = had, hs_dw_grow((void **)&d->ptdot, &B->ptcap, cap, sizeof *d->ptdot)) ||
        hs_dw_grow((void **)&B->expr, &B->cap, 3 * (np + 1), sizeof *B->expr) ||
        !(d->ptname[np] = hs_ld_strdup(name)))
        return hs_dw_oom(B->L), -1;
    d->ptrgb[np] = POINT_RGB;
    d->ptdot[np] = 1;
    B->expr[3 * np] = x;
    B->expr[3 * np + 1] = y;
    B->expr[3 * np + 2] = z;
    if (z)
        d->dim = 3;
    d->npt = np + 1;
    return (long)np;
}

long hs_dw_find_point(const hs_drawing *d, const char *s)
{
    for (size_t i = 0; i < d->npt; i++)
        if (strcmp(d->ptname[i], s) == 0)
            return (long)i;
    return -1;
}

hs_draw_item *hs_dw_add_item(dbuild *B, hs_draw_kind kind, size_t npt, unsigned rgb)
{
    hs_drawing *d = B->d;
    if (hs_dw_grow((void **)&d->item, &B->itemcap, d->nitem + 1, sizeof *d->item))
        return hs_dw_oom(B->L), NULL;
    hs_draw_item *it = &d->item[d->nitem];
    *it = (hs_draw_item){ .kind = kind, .npt = npt, .pt = xcalloc(npt, sizeof(size_t)),
                          .rgb = rgb };
    if (!it->pt)
        return hs_dw_oom(B->L), NULL;
    d->nitem++;
    return it;
}

int hs_dw_has_segment(const hs_drawing *d, size_t a, size_t b)
{
    for (size_t i = 0; i < d->nitem; i++) {
        const hs_draw_item *it = &d->item[i];
        if (it->kind == HS_DRAW_LINE && it->npt == 2 &&
            ((it->pt[0] == a && it->pt[1] == b) || (it->pt[0] == b && it->pt[1] == a)))
            return 1;
    }
    return 0;
}
