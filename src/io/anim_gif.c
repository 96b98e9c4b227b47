/* Frames of an animation drawn without a graphics library (anim.h): a
 * small rasterizer into an indexed image (thick lines stamped along their
 * length, filled discs, a 5x7 font for the time), and a GIF89a encoder
 * (LZW, one global palette of the colours the drawing uses, looping).
 * The view is the page's (hs_anim_view), so a frame of the GIF and the
 * page at the same time put the points on the same pixels. */
#include "anim.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

typedef struct canvas {
    int w, h;
    unsigned char *px;        /* [w*h] palette indices */
    unsigned pal[256];
    int npal;
} canvas;

/* The palette index of a colour (added when new; the nearest when full). */
static int colour(canvas *c, unsigned rgb)
{
    for (int i = 0; i < c->npal; i++)
        if (c->pal[i] == rgb)
            return i;
    if (c->npal < 256) {
        c->pal[c->npal] = rgb;
        return c->npal++;
    }
    int best = 0;
    long bd = -1;
    for (int i = 0; i < 256; i++) {
        long d = 0;
        for (int s = 0; s < 24; s += 8) {
            long e = (long)(rgb >> s & 255) - (long)(c->pal[i] >> s & 255);
            d += e * e;
        }
        if (bd < 0 || d < bd)
            bd = d, best = i;
    }
    return best;
}

/* rgb blended toward white: a share f of the colour kept */
static unsigned fade(unsigned rgb, double f)
{
    unsigned o = 0;
    for (int s = 0; s < 24; s += 8) {
        double v = f * (double)(rgb >> s & 255) + (1 - f) * 255;
        o |= (unsigned)lround(v) << s;
    }
    return o;
}

static void disc(canvas *c, double x, double y, double r, int idx)
{
    int y0 = (int)floor(y - r), y1 = (int)ceil(y + r);
    for (int j = y0 > 0 ? y0 : 0; j <= y1 && j < c->h; j++) {
        double dy = j - y, dx2 = r * r - dy * dy;
        if (dx2 < 0)
            continue;
        double dx = sqrt(dx2);
        int x0 = (int)ceil(x - dx), x1 = (int)floor(x + dx);
        if (x0 < 0)
            x0 = 0;
        for (int i = x0; i <= x1 && i < c->w; i++)
            c->px[(size_t)j * (size_t)c->w + (size_t)i] = (unsigned char)idx;
    }
}

/* A line of width 2r: discs stamped every half pixel (clipped to the
 * canvas with a margin, so a point far outside costs nothing). */
static void line(canvas *c, double x0, double y0, double x1, double y1, double r, int idx)
{
    if (!isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1))
        return;
    double len = hypot(x1 - x0, y1 - y0);
    int n = (int)fmin(ceil(2 * len), 20000.0);
    for (int k = 0; k <= n; k++) {
        double s = n ? (double)k / n : 0, x = x0 + s * (x1 - x0), y = y0 + s * (y1 - y0);
        if (x > -r && y > -r && x < c->w + r && y < c->h + r)
            disc(c, x, y, r, idx);
    }
}

static void ring(canvas *c, double x, double y, double R, double r, int idx)
{
    int n = (int)fmin(fmax(16, 2 * PI * R), 4000);
    for (int k = 0; k < n; k++) {
        double a0 = 2 * PI * k / n, a1 = 2 * PI * (k + 1) / n;
        line(c, x + R * cos(a0), y + R * sin(a0), x + R * cos(a1), y + R * sin(a1), r, idx);
    }
}

/* 5x7 glyphs of "0123456789.-+=ets " (rows top to bottom, bit 4 = left) */
static const char glyph_chars[] = "0123456789.-+=tse ";
static const unsigned char glyphs[][7] = {
    { 14, 17, 19, 21, 25, 17, 14 }, { 4, 12, 4, 4, 4, 4, 14 },   { 14, 17, 1, 2, 4, 8, 31 },
    { 31, 2, 4, 2, 1, 17, 14 },     { 2, 6, 10, 18, 31, 2, 2 },  { 31, 16, 30, 1, 1, 17, 14 },
    { 6, 8, 16, 30, 17, 17, 14 },   { 31, 1, 2, 4, 8, 8, 8 },    { 14, 17, 17, 14, 17, 17, 14 },
    { 14, 17, 17, 15, 1, 2, 12 },   { 0, 0, 0, 0, 0, 12, 12 },   { 0, 0, 0, 31, 0, 0, 0 },
    { 0, 4, 4, 31, 4, 4, 0 },       { 0, 0, 31, 0, 31, 0, 0 },   { 8, 8, 28, 8, 8, 9, 6 },
    { 0, 0, 14, 16, 14, 1, 30 },    { 0, 0, 14, 17, 31, 16, 14 }, { 0, 0, 0, 0, 0, 0, 0 },
};

static void text(canvas *c, int x, int y, const char *s, int scale, int idx)
{
    for (; *s; s++, x += 6 * scale) {
        const char *g = strchr(glyph_chars, *s);
        if (!g)
            continue;
        const unsigned char *rows = glyphs[g - glyph_chars];
        for (int j = 0; j < 7; j++)
            for (int i = 0; i < 5; i++)
                if (rows[j] >> (4 - i) & 1)
                    for (int u = 0; u < scale; u++)
                        for (int v = 0; v < scale; v++) {
                            int X = x + i * scale + u, Y = y + j * scale + v;
                            if (X >= 0 && Y >= 0 && X < c->w && Y < c->h)
                                c->px[(size_t)Y * (size_t)c->w + (size_t)X] = (unsigned char)idx;
                        }
    }
}

typedef struct circ_key {
    double depth;
    size_t idx;                   /* into the drawing's items */
} circ_key;

typedef struct scene {
    const hs_anim *a;
    hs_anim_view v;
    double floor_z, floor_span;   /* 3D: hs_anim_floor */
    double *val, *px, *py, *pd;
    circ_key *order;              /* [nitem] circles by depth */
} scene;

static double *project_frame(scene *S, const double *val, double *px, double *py, double *pd)
{
    const hs_drawing *d = S->a->m->draw;
    for (size_t p = 0; p < d->npt; p++) {
        double w[3] = { val[p * (size_t)d->dim], val[p * (size_t)d->dim + 1],
                        d->dim == 3 ? val[p * (size_t)d->dim + 2] : 0 };
        hs_anim_project(&S->v, w, &px[p], &py[p], &pd[p]);
    }
    return px;
}

/* Circles drawn far to near; equal depths in the drawing's order (no
 * state outside the keys: two animations may be drawn at once). */
static int by_depth(const void *x, const void *y)
{
    const circ_key *a = x, *b = y;
    return a->depth != b->depth ? (a->depth > b->depth) - (a->depth < b->depth)
                                : (a->idx > b->idx) - (a->idx < b->idx);
}

/* The page's floor grid and axes (anim_html.c, floor3d), thin lines. */
static void floor_grid(scene *S, canvas *c)
{
    double lo = S->floor_z, r = S->floor_span / 2, *C = S->v.c, p[4][3], X[4], Y[4], D;
    int grid = colour(c, 0xe4e4e4);
    for (int i = 0; i <= 8; i++) {
        double u = -r + 2 * r * i / 8;
        double q[4][3] = { { C[0] + u, C[1] - r, lo }, { C[0] + u, C[1] + r, lo },
                           { C[0] - r, C[1] + u, lo }, { C[0] + r, C[1] + u, lo } };
        for (int k = 0; k < 4; k++)
            hs_anim_project(&S->v, q[k], &X[k], &Y[k], &D);
        line(c, X[0], Y[0], X[1], Y[1], 0.5, grid);
        line(c, X[2], Y[2], X[3], Y[3], 0.5, grid);
    }
    static const unsigned axis[3] = { 0xd62728, 0x2ca02c, 0x1f77b4 };
    for (int k = 0; k < 3; k++) {
        p[0][0] = C[0] - r, p[0][1] = C[1] - r, p[0][2] = lo;
        memcpy(p[1], p[0], sizeof p[0]);
        p[1][k] += r / 3;
        hs_anim_project(&S->v, p[0], &X[0], &Y[0], &D);
        hs_anim_project(&S->v, p[1], &X[1], &Y[1], &D);
        line(c, X[0], Y[0], X[1], Y[1], 0.6, colour(c, axis[k]));
    }
}

/* The contacts' boundaries at time t (anim_contact.c), thin grey lines. */
static void bounds(scene *S, canvas *c, double t)
{
    size_t n;
    double *seg = hs_anim_bounds(S->a, &S->v, t, 0, &n);
    int idx = colour(c, HS_ANIM_BOUND_RGB);
    for (size_t k = 0; seg && k < n; k++) {
        double p0[3] = { seg[4 * k], seg[4 * k + 1], 0 }, p1[3] = { seg[4 * k + 2],
                                                                   seg[4 * k + 3], 0 };
        double x0, y0, x1, y1, D;
        hs_anim_project(&S->v, p0, &x0, &y0, &D);
        hs_anim_project(&S->v, p1, &x1, &y1, &D);
        line(c, x0, y0, x1, y1, 0.7, idx);
    }
    free(seg);
}

/* The rings of the impacts just before t (anim_contact.c). */
static void flashes(scene *S, canvas *c, double t)
{
    hs_anim_flash f[64];
    size_t n = hs_anim_flashes(S->a, t, hs_anim_flash_time(S->a), f, 64);
    for (size_t k = 0; k < n; k++) {
        double x, y, D, R = f[k].r * S->v.s + 4 + 10 * f[k].age;
        hs_anim_project(&S->v, f[k].p, &x, &y, &D);
        if (isfinite(x) && isfinite(y) && isfinite(R))
            ring(c, x, y, R, 1.2, colour(c, HS_ANIM_FLASH_RGB));
    }
}

/* One frame at time t into the canvas (the page's picture, without its
 * gradients and transparency). */
static void draw_frame(scene *S, canvas *c, double t)
{
    const hs_anim *a = S->a;
    const hs_drawing *d = a->m->draw;
    int white = colour(c, 0xffffff);
    memset(c->px, white, (size_t)c->w * (size_t)c->h);
    hs_anim_values_at(a, t, S->val);
    project_frame(S, S->val, S->px, S->py, S->pd);
    if (d->dim == 3)
        floor_grid(S, c);
    /* trails: the kept frames of the last trail_time seconds */
    for (size_t p = 0; p < d->npt; p++) {
        if (!a->trail[p])
            continue;
        int idx = colour(c, fade(d->ptrgb[p], 0.45));
        double lx = NAN, ly = NAN;
        for (size_t f = 0; f < a->nframe && a->t[f] <= t; f++) {
            if (a->t[f] < t - a->trail_time)
                continue;
            const float *x = a->val + f * a->nval + p * (size_t)d->dim;
            double w[3] = { x[0], x[1], d->dim == 3 ? (double)x[2] : 0 }, X, Y, D;
            hs_anim_project(&S->v, w, &X, &Y, &D);
            if (isfinite(lx))
                line(c, lx, ly, X, Y, 0.8, idx);
            lx = X, ly = Y;
        }
        if (isfinite(lx))
            line(c, lx, ly, S->px[p], S->py[p], 0.8, idx);
    }
    bounds(S, c, t);
    int gidx = colour(c, 0x404040);
    for (size_t i = 0; i < d->nitem; i++) {
        const hs_draw_item *it = &d->item[i];
        if (it->kind != HS_DRAW_GROUND)
            continue;
        double x = S->px[it->pt[0]], y = S->py[it->pt[0]];
        line(c, x, y, x - 7, y + 11, 0.7, gidx);
        line(c, x, y, x + 7, y + 11, 0.7, gidx);
        line(c, x - 11, y + 11, x + 11, y + 11, 0.7, gidx);
        for (int k = -9; k <= 9; k += 6)
            line(c, x + k, y + 11, x + k - 4, y + 16, 0.6, gidx);
    }
    for (size_t i = 0; i < d->nitem; i++) {
        const hs_draw_item *it = &d->item[i];
        if (it->kind != HS_DRAW_LINE)
            continue;
        int idx = colour(c, it->rgb);
        for (size_t j = 1; j < it->npt; j++)
            line(c, S->px[it->pt[j - 1]], S->py[it->pt[j - 1]], S->px[it->pt[j]],
                 S->py[it->pt[j]], 1.5, idx);
    }
    size_t nc = 0;
    for (size_t i = 0; i < d->nitem; i++)
        if (d->item[i].kind == HS_DRAW_CIRCLE)
            S->order[nc++] = (circ_key){ S->pd[d->item[i].pt[0]], i };
    qsort(S->order, nc, sizeof *S->order, by_depth);
    for (size_t k = 0; k < nc; k++) {
        const hs_draw_item *it = &d->item[S->order[k].idx];
        double x = S->px[it->pt[0]], y = S->py[it->pt[0]], R = fabs(S->val[it->rout]) * S->v.s;
        if (!isfinite(x) || !isfinite(y) || !isfinite(R))
            continue;
        disc(c, x, y, R, colour(c, fade(it->rgb, d->dim == 3 ? 0.7 : 0.25)));
        ring(c, x, y, R, 1, colour(c, it->rgb));
    }
    for (size_t p = 0; p < d->npt; p++)
        if (d->ptdot[p] && isfinite(S->px[p]) && isfinite(S->py[p]))
            disc(c, S->px[p], S->py[p], 4, colour(c, d->ptrgb[p]));
    flashes(S, c, t);
    char buf[64];
    snprintf(buf, sizeof buf, "t = %.2f s", t);
    int scale = c->h >= 400 ? 2 : 1;
    text(c, 8, 8, buf, scale, colour(c, 0x222222));
}

static int scene_init(scene *S, const hs_anim *a)
{
    const hs_drawing *d = a->m->draw;
    memset(S, 0, sizeof *S);
    S->a = a;
    hs_anim_view_init(a, &S->v);
    hs_anim_floor(a, &S->v, &S->floor_z, &S->floor_span);
    S->val = calloc(a->nval + 1, sizeof *S->val);
    S->px = calloc(d->npt + 1, sizeof *S->px);
    S->py = calloc(d->npt + 1, sizeof *S->py);
    S->pd = calloc(d->npt + 1, sizeof *S->pd);
    S->order = calloc(d->nitem + 1, sizeof *S->order);
    return S->val && S->px && S->py && S->pd && S->order ? 0 : -1;
}

static void scene_free(scene *S)
{
    free(S->val);
    free(S->px);
    free(S->py);
    free(S->pd);
    free(S->order);
}

void hs_anim_raster(const hs_anim *a, double t, unsigned char *rgb)
{
    if (hs_fig_frame_rgb(a, t, rgb) == 0)          /* antialiased, by cairo */
        return;
    scene S = { .a = a };
    canvas c = { .w = a->width, .h = a->height };
    c.px = malloc((size_t)c.w * (size_t)c.h);
    if (scene_init(&S, a) == 0 && c.px) {
        draw_frame(&S, &c, t);
        for (size_t i = 0; i < (size_t)c.w * (size_t)c.h; i++) {
            unsigned v = c.pal[c.px[i]];
            rgb[3 * i] = (unsigned char)(v >> 16);
            rgb[3 * i + 1] = (unsigned char)(v >> 8);
            rgb[3 * i + 2] = (unsigned char)v;
        }
    } else {
        memset(rgb, 255, (size_t)a->width * (size_t)a->height * 3);
    }
    free(c.px);
    scene_free(&S);
}

/* ---------- GIF89a ---------- */

typedef struct bits {
    FILE *f;
    unsigned char blk[256];
    int nblk;
    unsigned long acc;
    int nacc;
} bits;

static void blk_byte(bits *b, unsigned char x)
{
    b->blk[1 + b->nblk++] = x;
    if (b->nblk == 255) {
        b->blk[0] = 255;
        fwrite(b->blk, 1, 256, b->f);
        b->nblk = 0;
    }
}

static void put_code(bits *b, unsigned code, int width)
{
    b->acc |= (unsigned long)code << b->nacc;
    b->nacc += width;
    while (b->nacc >= 8) {
        blk_byte(b, (unsigned char)(b->acc & 255));
        b->acc >>= 8;
        b->nacc -= 8;
    }
}

/* LZW of the indices (8-bit codes): a hash of (prefix, byte) -> code. */
#define HBITS 14
#define HSIZE (1 << HBITS)
static int lzw(FILE *f, const unsigned char *px, size_t n)
{
    int *key = malloc(HSIZE * sizeof *key), *val = malloc(HSIZE * sizeof *val);
    if (!key || !val) {
        free(key);
        free(val);
        return -1;
    }
    bits b = { .f = f };
    const unsigned clear = 256, eoi = 257;
    unsigned next = 258;
    int width = 9;
    fputc(8, f);                              /* minimum code size */
    memset(key, -1, HSIZE * sizeof *key);
    put_code(&b, clear, width);
    unsigned prefix = px[0];
    for (size_t i = 1; i < n; i++) {
        unsigned ch = px[i];
        int k = (int)(prefix << 8 | ch);
        unsigned h = ((unsigned)k * 2654435761u) >> (32 - HBITS);
        while (key[h] != -1 && key[h] != k)
            h = (h + 1) & (HSIZE - 1);
        if (key[h] == k) {
            prefix = (unsigned)val[h];
            continue;
        }
        put_code(&b, prefix, width);
        if (next < 4096) {
            key[h] = k;
            val[h] = (int)next;
            if (next == (1u << width) && width < 12)
                width++;
            next++;
        } else {                              /* table full: start again */
            put_code(&b, clear, width);
            memset(key, -1, HSIZE * sizeof *key);
            next = 258;
            width = 9;
        }
        prefix = ch;
    }
    put_code(&b, prefix, width);
    put_code(&b, eoi, width);
    if (b.nacc > 0)
        blk_byte(&b, (unsigned char)(b.acc & 255));
    if (b.nblk) {
        b.blk[0] = (unsigned char)b.nblk;
        fwrite(b.blk, 1, (size_t)b.nblk + 1, f);
    }
    fputc(0, f);                              /* block terminator */
    free(key);
    free(val);
    return 0;
}

static void u16(FILE *f, int v)
{
    fputc(v & 255, f);
    fputc(v >> 8 & 255, f);
}

/* Every colour a frame can use, in the palette before the first frame (so
 * the frames stream out one at a time, each LZW-coded as it is drawn). */
static void palette_init(const hs_anim *a, canvas *c)
{
    const hs_drawing *d = a->m->draw;
    colour(c, 0xffffff);
    colour(c, 0x404040);
    colour(c, 0x222222);
    if (d->dim == 3) {
        colour(c, 0xe4e4e4);
        colour(c, 0xd62728);
        colour(c, 0x2ca02c);
        colour(c, 0x1f77b4);
    }
    for (size_t p = 0; p < d->npt; p++) {
        colour(c, d->ptrgb[p]);
        colour(c, fade(d->ptrgb[p], 0.45));
    }
    for (size_t i = 0; i < d->nitem; i++) {
        colour(c, d->item[i].rgb);
        colour(c, fade(d->item[i].rgb, d->dim == 3 ? 0.7 : 0.25));
    }
    if (a->m->ncontact) {              /* anim_contact.c */
        colour(c, HS_ANIM_BOUND_RGB);
        colour(c, HS_ANIM_FLASH_RGB);
    }
}

/* Antialiased frames (cairo, hs_fig_frame_rgb) into the palette: every
 * colour of palette_init faded toward white in eighths (the edges of a
 * line over the background), each pixel the nearest entry, memoized in
 * an open-addressed table of the colours met (cleared when half full). */
typedef struct quant {
    unsigned char *rgb;          /* [w*h*3] the frame cairo drew */
    uint32_t *key;               /* [QSLOTS] rgb | 1 << 24, 0: empty */
    unsigned char *idx;          /* [QSLOTS] */
    size_t used;
} quant;
#define QSLOTS 65536

static void palette_fades(canvas *c)
{
    int n = c->npal;
    for (int i = 0; i < n; i++)
        for (int k = 1; k < 8 && c->pal[i] != 0xffffff; k++)
            if (c->npal < 256)
                colour(c, fade(c->pal[i], k / 8.0));
}

static int nearest(const canvas *c, unsigned rgb)
{
    int best = 0;
    long bd = -1;
    for (int i = 0; i < c->npal; i++) {
        long d = 0;
        for (int s = 0; s < 24; s += 8) {
            long e = (long)(rgb >> s & 255) - (long)(c->pal[i] >> s & 255);
            d += e * e;
        }
        if (bd < 0 || d < bd)
            bd = d, best = i;
    }
    return best;
}

static int quant_frame(const hs_anim *a, quant *Q, canvas *c, double t)
{
    if (hs_fig_frame_rgb(a, t, Q->rgb) != 0)
        return -1;
    size_t npx = (size_t)c->w * (size_t)c->h;
    for (size_t i = 0; i < npx; i++) {
        const unsigned char *p = Q->rgb + 3 * i;
        uint32_t k = (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2] | 1u << 24;
        size_t h = (size_t)((k * 2654435761u) >> 16) & (QSLOTS - 1);
        while (Q->key[h] && Q->key[h] != k)
            h = (h + 1) & (QSLOTS - 1);
        if (!Q->key[h]) {
            if (Q->used > QSLOTS / 2) {
                memset(Q->key, 0, QSLOTS * sizeof *Q->key);
                Q->used = 0;
                h = (size_t)((k * 2654435761u) >> 16) & (QSLOTS - 1);
            }
            Q->key[h] = k;
            Q->idx[h] = (unsigned char)nearest(c, k & 0xffffff);
            Q->used++;
        }
        c->px[i] = Q->idx[h];
    }
    return 0;
}

int hs_anim_write_gif(const hs_anim *a, FILE *f, size_t nframes, double t0, double t1,
                      int delay_cs)
{
    scene S = { .a = a };
    canvas c = { .w = a->width, .h = a->height };
    size_t npx = (size_t)c.w * (size_t)c.h;
    c.px = malloc(npx);
    int rc = -1;
    quant Q = { 0 };
    int smooth = hs_fig_available() && a->m->draw->dim == 2;
    if (smooth) {
        Q.rgb = malloc(npx * 3);
        Q.key = calloc(QSLOTS, sizeof *Q.key);
        Q.idx = malloc(QSLOTS);
        smooth = Q.rgb && Q.key && Q.idx;
    }
    if (!c.px || scene_init(&S, a) != 0)
        goto out;
    palette_init(a, &c);
    if (smooth)
        palette_fades(&c);
    fwrite("GIF89a", 1, 6, f);
    u16(f, c.w);
    u16(f, c.h);
    fputc(0xf7, f);                           /* global table of 256 colours */
    fputc(0, f);
    fputc(0, f);
    for (int i = 0; i < 256; i++) {
        unsigned v = i < c.npal ? c.pal[i] : 0;
        fputc((int)(v >> 16 & 255), f);
        fputc((int)(v >> 8 & 255), f);
        fputc((int)(v & 255), f);
    }
    static const unsigned char loop[] = { 0x21, 0xff, 11, 'N', 'E', 'T', 'S', 'C', 'A', 'P',
                                          'E', '2', '.', '0', 3, 1, 0, 0, 0 };
    fwrite(loop, 1, sizeof loop, f);
    for (size_t k = 0; k < nframes; k++) {
        if (a->stop && *a->stop)              /* interrupted: no GIF */
            goto out;
        double t = nframes > 1 ? t0 + (t1 - t0) * (double)k / (double)(nframes - 1) : t0;
        if (k == nframes - 1)
            t = t1;
        if (!smooth || quant_frame(a, &Q, &c, t) != 0)
            draw_frame(&S, &c, t);
        static const unsigned char gce[] = { 0x21, 0xf9, 4, 0 };
        fwrite(gce, 1, 4, f);
        u16(f, delay_cs);
        fputc(0, f);                          /* transparent index (unused) */
        fputc(0, f);
        fputc(0x2c, f);                       /* image descriptor */
        u16(f, 0);
        u16(f, 0);
        u16(f, c.w);
        u16(f, c.h);
        fputc(0, f);
        if (lzw(f, c.px, npx))
            goto out;
    }
    fputc(0x3b, f);
    rc = fflush(f) != 0 || ferror(f) ? -1 : 0;
out:
    free(c.px);
    free(Q.rgb);
    free(Q.key);
    free(Q.idx);
    scene_free(&S);
    return rc;
}
