/* Still figures of a model's drawing (anim.h: hs_fig_write): the mechanism
 * at chosen times drawn over one another (a stroboscopic figure), the
 * earlier ones lighter, with the trails of the trail points from the
 * first time to the last, through cairo (vector SVG and PDF, antialiased
 * PNG) with real fonts.  The view is the animation's (hs_anim_view) over
 * the frames kept, so a figure and a GIF frame of the same frames put a
 * point on the same pixel.  Built without cairo (no HS_HAVE_CAIRO), every
 * call fails with a message saying how to get it. */
#include "anim.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef HS_HAVE_CAIRO

#include <cairo.h>
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <dlfcn.h>
#include <pthread.h>

#define PI 3.14159265358979323846

/* cairo is opened at the first figure or smooth frame (dlopen), not linked:
 * it brings 19 shared libraries (X11, fontconfig, freetype, ...) whose
 * loading was half of every command's start-up (bench/README.md).  The
 * table is written once (pthread_once) and read after. */
#define CAIRO_FUNCS(X) X(arc) X(create) X(destroy) X(fill) X(fill_preserve) \
    X(image_surface_create) X(image_surface_get_data) X(image_surface_get_stride) \
    X(line_to) X(move_to) X(new_sub_path) X(paint) X(pdf_surface_create_for_stream) \
    X(select_font_face) X(set_font_size) X(set_line_cap) X(set_line_join) \
    X(set_line_width) X(set_source_rgba) X(show_text) X(status) X(status_to_string) \
    X(stroke) X(surface_destroy) X(surface_finish) X(surface_flush) X(surface_status) \
    X(surface_write_to_png_stream) X(svg_surface_create_for_stream)

static struct {
#define X(f) __typeof__(&cairo_##f) f;
    CAIRO_FUNCS(X)
#undef X
} cai;
static int cai_ok;
static char cai_why[300];
static pthread_once_t cai_once = PTHREAD_ONCE_INIT;

static void cai_load(void)
{
    void *h = dlopen("libcairo.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(cai_why, sizeof cai_why, "%s", e ? e : "libcairo.so.2 not found");
        return;
    }
#define X(f) \
    if (!(cai.f = (__typeof__(cai.f))dlsym(h, "cairo_" #f))) { \
        snprintf(cai_why, sizeof cai_why, "libcairo.so.2 has no cairo_" #f); \
        return; \
    }
    CAIRO_FUNCS(X)
#undef X
    cai_ok = 1;
}

/* Every cairo call below goes through the table. */
#define cairo_arc cai.arc
#define cairo_create cai.create
#define cairo_destroy cai.destroy
#define cairo_fill cai.fill
#define cairo_fill_preserve cai.fill_preserve
#define cairo_image_surface_create cai.image_surface_create
#define cairo_image_surface_get_data cai.image_surface_get_data
#define cairo_image_surface_get_stride cai.image_surface_get_stride
#define cairo_line_to cai.line_to
#define cairo_move_to cai.move_to
#define cairo_new_sub_path cai.new_sub_path
#define cairo_paint cai.paint
#define cairo_pdf_surface_create_for_stream cai.pdf_surface_create_for_stream
#define cairo_select_font_face cai.select_font_face
#define cairo_set_font_size cai.set_font_size
#define cairo_set_line_cap cai.set_line_cap
#define cairo_set_line_join cai.set_line_join
#define cairo_set_line_width cai.set_line_width
#define cairo_set_source_rgba cai.set_source_rgba
#define cairo_show_text cai.show_text
#define cairo_status cai.status
#define cairo_status_to_string cai.status_to_string
#define cairo_stroke cai.stroke
#define cairo_surface_destroy cai.surface_destroy
#define cairo_surface_finish cai.surface_finish
#define cairo_surface_flush cai.surface_flush
#define cairo_surface_status cai.surface_status
#define cairo_surface_write_to_png_stream cai.surface_write_to_png_stream
#define cairo_svg_surface_create_for_stream cai.svg_surface_create_for_stream

int hs_fig_available(void)
{
    pthread_once(&cai_once, cai_load);
    return cai_ok;
}

static void source(cairo_t *cr, unsigned rgb, double alpha)
{
    cairo_set_source_rgba(cr, (rgb >> 16 & 255) / 255.0, (rgb >> 8 & 255) / 255.0,
                          (rgb & 255) / 255.0, alpha);
}

/* The pixel of point p in the frame values val. */
static void pixel(const hs_anim_view *v, const hs_drawing *d, const double *val, size_t p,
                  double *x, double *y)
{
    const double *w = val + p * (size_t)d->dim;
    double q[3] = { w[0], w[1], d->dim == 3 ? w[2] : 0 }, depth;
    hs_anim_project(v, q, x, y, &depth);
}

/* The trails: every kept frame from at[0] to the last time, and those
 * times themselves (the frames' values between rows are linear). */
static void trails(cairo_t *cr, const hs_anim *a, const hs_anim_view *v, double t0, double t1,
                   double *val)
{
    const hs_drawing *d = a->m->draw;
    for (size_t p = 0; p < d->npt; p++) {
        if (!a->trail[p])
            continue;
        double x, y;
        hs_anim_values_at(a, t0, val);
        pixel(v, d, val, p, &x, &y);
        if (!isfinite(x) || !isfinite(y))
            continue;
        cairo_move_to(cr, x, y);
        for (size_t f = 0; f < a->nframe; f++) {
            if (!(a->t[f] > t0 && a->t[f] < t1))
                continue;
            hs_anim_values_at(a, a->t[f], val);
            pixel(v, d, val, p, &x, &y);
            if (isfinite(x) && isfinite(y))
                cairo_line_to(cr, x, y);
        }
        hs_anim_values_at(a, t1, val);
        pixel(v, d, val, p, &x, &y);
        if (isfinite(x) && isfinite(y))
            cairo_line_to(cr, x, y);
        source(cr, d->ptrgb[p], 0.55);
        cairo_set_line_width(cr, 1.2);
        cairo_stroke(cr);
    }
}

/* A frame's trails: the kept frames of the last trail_time seconds. */
static void frame_trails(cairo_t *cr, const hs_anim *a, const hs_anim_view *v, double t,
                         double *val)
{
    double t0 = t - a->trail_time;
    if (a->nframe && t0 < a->t[0])
        t0 = a->t[0];
    if (t > t0)
        trails(cr, a, v, t0, t, val);
}

/* The ground marks (fixed points: drawn once, at the last time). */
static void grounds(cairo_t *cr, const hs_anim_view *v, const hs_drawing *d, const double *val)
{
    source(cr, 0x404040, 1);
    cairo_set_line_width(cr, 1.0);
    for (size_t i = 0; i < d->nitem; i++) {
        const hs_draw_item *it = &d->item[i];
        if (it->kind != HS_DRAW_GROUND)
            continue;
        double x, y;
        pixel(v, d, val, it->pt[0], &x, &y);
        if (!isfinite(x) || !isfinite(y))
            continue;
        cairo_move_to(cr, x - 7, y + 11);
        cairo_line_to(cr, x, y);
        cairo_line_to(cr, x + 7, y + 11);
        cairo_move_to(cr, x - 11, y + 11);
        cairo_line_to(cr, x + 11, y + 11);
        for (int k = -9; k <= 9; k += 6) {
            cairo_move_to(cr, x + k, y + 11);
            cairo_line_to(cr, x + k - 4, y + 16);
        }
        cairo_stroke(cr);
    }
}

/* The contacts' boundaries at time t (anim_contact.c): thin grey lines. */
static void bounds(cairo_t *cr, const hs_anim *a, const hs_anim_view *v, double t)
{
    size_t n;
    double *seg = hs_anim_bounds(a, v, t, 0, &n);
    if (!seg)
        return;
    for (size_t k = 0; k < n; k++) {
        double p0[3] = { seg[4 * k], seg[4 * k + 1], 0 }, p1[3] = { seg[4 * k + 2],
                                                                   seg[4 * k + 3], 0 };
        double x0, y0, x1, y1, depth;
        hs_anim_project(v, p0, &x0, &y0, &depth);
        hs_anim_project(v, p1, &x1, &y1, &depth);
        cairo_move_to(cr, x0, y0);
        cairo_line_to(cr, x1, y1);
    }
    free(seg);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    source(cr, HS_ANIM_BOUND_RGB, 1);
    cairo_set_line_width(cr, 1.5);
    cairo_stroke(cr);
}

/* The rings of the impacts just before t (anim_contact.c). */
static void flashes(cairo_t *cr, const hs_anim *a, const hs_anim_view *v, double t)
{
    hs_anim_flash f[64];
    size_t n = hs_anim_flashes(a, t, hs_anim_flash_time(a), f, 64);
    for (size_t k = 0; k < n; k++) {
        double x, y, depth;
        hs_anim_project(v, f[k].p, &x, &y, &depth);
        double R = f[k].r * v->s + 4 + 10 * f[k].age;
        if (!isfinite(x) || !isfinite(y) || !isfinite(R))
            continue;
        cairo_new_sub_path(cr);
        cairo_arc(cr, x, y, R, 0, 2 * PI);
        source(cr, HS_ANIM_FLASH_RGB, 1 - 0.6 * f[k].age);
        cairo_set_line_width(cr, 2.5);
        cairo_stroke(cr);
    }
}

/* The mechanism at one time, with opacity alpha: bars, circles, dots. */
static void mechanism(cairo_t *cr, const hs_anim *a, const hs_anim_view *v, const double *val,
                      double alpha)
{
    const hs_drawing *d = a->m->draw;
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    for (size_t i = 0; i < d->nitem; i++) {
        const hs_draw_item *it = &d->item[i];
        if (it->kind != HS_DRAW_LINE)
            continue;
        int open = 0;
        for (size_t j = 0; j < it->npt; j++) {
            double x, y;
            pixel(v, d, val, it->pt[j], &x, &y);
            if (!isfinite(x) || !isfinite(y)) {
                open = 0;
                continue;
            }
            if (open)
                cairo_line_to(cr, x, y);
            else
                cairo_move_to(cr, x, y);
            open = 1;
        }
        source(cr, it->rgb, alpha);
        cairo_set_line_width(cr, 3.0);
        cairo_stroke(cr);
    }
    for (size_t i = 0; i < d->nitem; i++) {
        const hs_draw_item *it = &d->item[i];
        if (it->kind != HS_DRAW_CIRCLE)
            continue;
        double x, y, R = fabs(val[it->rout]) * v->s;
        pixel(v, d, val, it->pt[0], &x, &y);
        if (!isfinite(x) || !isfinite(y) || !isfinite(R))
            continue;
        cairo_new_sub_path(cr);
        cairo_arc(cr, x, y, R, 0, 2 * PI);
        source(cr, it->rgb, 0.25 * alpha);
        cairo_fill_preserve(cr);
        source(cr, it->rgb, alpha);
        cairo_set_line_width(cr, 1.5);
        cairo_stroke(cr);
    }
    for (size_t p = 0; p < d->npt; p++) {
        double x, y;
        pixel(v, d, val, p, &x, &y);
        if (!d->ptdot[p] || !isfinite(x) || !isfinite(y))
            continue;
        cairo_new_sub_path(cr);
        cairo_arc(cr, x, y, 4.5, 0, 2 * PI);
        source(cr, d->ptrgb[p], alpha);
        cairo_fill(cr);
    }
}

/* The caption: the times drawn, in the corner. */
static void caption(cairo_t *cr, const double *at, size_t nat)
{
    char buf[256];
    size_t k = (size_t)snprintf(buf, sizeof buf, "t = ");
    for (size_t i = 0; i < nat && k + 32 < sizeof buf; i++)
        k += (size_t)snprintf(buf + k, sizeof buf - k, "%s%.4g", i ? ", " : "", at[i]);
    if (k + 4 < sizeof buf)
        snprintf(buf + k, sizeof buf - k, " s");
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 13);
    source(cr, 0x222222, 1);
    cairo_move_to(cr, 10, 20);
    cairo_show_text(cr, buf);
}

static cairo_status_t to_file(void *closure, const unsigned char *data, unsigned int len)
{
    return fwrite(data, 1, len, closure) == len ? CAIRO_STATUS_SUCCESS
                                                : CAIRO_STATUS_WRITE_ERROR;
}

/* The figure drawn on cr (any surface). */
static int draw(cairo_t *cr, const hs_anim *a, const double *at, size_t nat)
{
    hs_anim_view v;
    hs_anim_view_init(a, &v);
    double *val = calloc(a->nval + 1, sizeof *val);
    if (!val)
        return -1;
    source(cr, 0xffffff, 1);
    cairo_paint(cr);
    trails(cr, a, &v, at[0], at[nat - 1], val);
    hs_anim_values_at(a, at[nat - 1], val);
    bounds(cr, a, &v, at[nat - 1]);
    grounds(cr, &v, a->m->draw, val);
    for (size_t i = 0; i < nat; i++) {
        hs_anim_values_at(a, at[i], val);
        mechanism(cr, a, &v, val, nat == 1 ? 1 : 0.25 + 0.75 * (double)i / (double)(nat - 1));
    }
    caption(cr, at, nat);
    free(val);
    return 0;
}

int hs_fig_frame_rgb(const hs_anim *a, double t, unsigned char *rgb)
{
    if (a->m->draw->dim != 2 || a->nframe == 0 || !hs_fig_available())
        return -1;
    int w = a->width, h = a->height;
    cairo_surface_t *s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
    cairo_t *cr = cairo_create(s);
    double *val = calloc(a->nval + 1, sizeof *val);
    int rc = -1;
    if (val && cairo_status(cr) == CAIRO_STATUS_SUCCESS) {
        hs_anim_view v;
        hs_anim_view_init(a, &v);
        source(cr, 0xffffff, 1);
        cairo_paint(cr);
        frame_trails(cr, a, &v, t, val);
        hs_anim_values_at(a, t, val);
        bounds(cr, a, &v, t);
        grounds(cr, &v, a->m->draw, val);
        mechanism(cr, a, &v, val, 1);
        flashes(cr, a, &v, t);
        char buf[64];
        snprintf(buf, sizeof buf, "t = %.2f s", t);
        cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                               CAIRO_FONT_WEIGHT_NORMAL);
        cairo_set_font_size(cr, h >= 400 ? 16 : 11);
        source(cr, 0x222222, 1);
        cairo_move_to(cr, 8, h >= 400 ? 22 : 16);
        cairo_show_text(cr, buf);
        cairo_surface_flush(s);
        rc = cairo_status(cr) == CAIRO_STATUS_SUCCESS ? 0 : -1;
    }
    if (!rc) {
        const unsigned char *d = cairo_image_surface_get_data(s);
        int stride = cairo_image_surface_get_stride(s);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                uint32_t p;
                memcpy(&p, d + (size_t)y * (size_t)stride + 4 * (size_t)x, 4);
                unsigned char *o = rgb + 3 * ((size_t)y * (size_t)w + (size_t)x);
                o[0] = (unsigned char)(p >> 16);
                o[1] = (unsigned char)(p >> 8);
                o[2] = (unsigned char)p;
            }
    }
    free(val);
    cairo_destroy(cr);
    cairo_surface_destroy(s);
    return rc;
}

int hs_fig_write(const hs_anim *a, FILE *f, hs_fig_kind kind, const double *at, size_t nat,
                 hs_error *err)
{
    if (nat == 0 || a->nframe == 0)
        return hs_error_set(err, HS_EXIT_USAGE, "a figure needs at least one time and one row");
    if (!hs_fig_available())
        return hs_error_set(err, HS_EXIT_USAGE, "cairo, which draws the figures, could not be "
                            "loaded: %s (Debian: libcairo2)", cai_why);
    cairo_surface_t *s =
        kind == HS_FIG_SVG ? cairo_svg_surface_create_for_stream(to_file, f, a->width, a->height)
        : kind == HS_FIG_PDF ? cairo_pdf_surface_create_for_stream(to_file, f, a->width,
                                                                   a->height)
        : cairo_image_surface_create(CAIRO_FORMAT_ARGB32, a->width, a->height);
    cairo_t *cr = cairo_create(s);
    int rc = draw(cr, a, at, nat);
    cairo_status_t st = cairo_status(cr);
    cairo_destroy(cr);
    if (!rc && st == CAIRO_STATUS_SUCCESS && kind == HS_FIG_PNG)
        st = cairo_surface_write_to_png_stream(s, to_file, f);
    cairo_surface_finish(s);
    if (st == CAIRO_STATUS_SUCCESS)
        st = cairo_surface_status(s);
    cairo_surface_destroy(s);
    if (rc)
        return hs_error_nomem(err);
    if (st != CAIRO_STATUS_SUCCESS)
        return hs_error_set(err, HS_EXIT_USAGE, "cairo could not write the figure: %s",
                            cairo_status_to_string(st));
    return 0;
}

#else

int hs_fig_available(void)
{
    return 0;
}

int hs_fig_frame_rgb(const hs_anim *a, double t, unsigned char *rgb)
{
    (void)a, (void)t, (void)rgb;
    return -1;
}

int hs_fig_write(const hs_anim *a, FILE *f, hs_fig_kind kind, const double *at, size_t nat,
                 hs_error *err)
{
    (void)a, (void)f, (void)kind, (void)at, (void)nat;
    return hs_error_set(err, HS_EXIT_USAGE, "%s", HS_FIG_MISSING);
}

#endif
