/* Animations of a model's drawing (holosim(1), ANIMATE): the frames kept
 * from a trajectory, and the writers of a self-contained HTML page
 * (anim_html.c) and of GIF images or raw video frames (anim_gif.c).
 *
 * Frames are rows of the trajectory, kept as they stream in (hs_anim_keep):
 * a row is kept when it is at least `interval` of simulated time after the
 * last one kept, and the last row always is; when the stored numbers would
 * pass `cap`, the interval doubles and the kept frames are thinned to it.
 * Each kept frame holds the drawing's values (model.h, hs_drawing: points'
 * coordinates, then radii) and the plotted columns, as floats. */
#ifndef HS_ANIM_H
#define HS_ANIM_H

#include <stddef.h>
#include <signal.h>
#include <stdio.h>

#include "../model/model.h"
#include "../util/error.h"

typedef struct hs_anim {
    const hs_model *m;     /* the drawing: m->draw */
    size_t nval;           /* m->draw->nout */
    size_t nplot;
    char **plotname;       /* [nplot] the columns drawn as small plots */
    unsigned char *trail;  /* [npt] 1: the point leaves a trail */
    double trail_time;     /* how long a trail lasts, simulated seconds */
    double speed;          /* simulated seconds per second of playback */
    double fps;            /* frames per second of playback */
    int width, height;     /* pixels of the drawing */
    /* the frames */
    size_t nframe, cap_frames;
    double *t;             /* [nframe] */
    float *val;            /* [nframe * nval] */
    float *plot;           /* [nframe * nplot] */
    double interval;       /* simulated time between kept frames (grows) */
    size_t cap;            /* at most this many stored numbers (frames x values) */
    long thinned;          /* times the interval doubled */
    volatile sig_atomic_t *stop;  /* non-zero (a signal): the writers stop, fail */
    /* contacts (anim_contact.c): the run's impacts, and how each contact's
     * boundary is drawn */
    size_t nimpact, impact_cap;
    double *impact_t;      /* [nimpact] the times of the run's impacts, in order */
    size_t *impact_c;      /* [nimpact] the contact of each (0 .. m->ncontact - 1) */
    long *bnd_axis;        /* [2 ncontact] the coordinate on each axis of a 2D view
                            * (-1: none; both -1: the boundary is not drawn) */
    unsigned char *imp_pt; /* [ncontact * npt] 1: an impact of the contact marks the point */
    struct hs_prog *bnd_prog;      /* the contacts' gaps */
    double *bnd_in, *bnd_regs, *bnd_out;  /* its scratch (the drawing is single-threaded) */
    double flash_time;     /* simulated seconds a ring lasts (0: hs_anim_flash_time's default) */
    double flash_lead;     /* and how long before its impact it shows (the frame
                            * nearest an impact shows it: half a frame) */
} hs_anim;

/* An empty animation of the model's drawing; 0 or -1 (memory). */
int hs_anim_init(hs_anim *a, const hs_model *m, size_t nplot, double interval, size_t cap);
void hs_anim_free(hs_anim *a);

/* 1 when a row at time t is to be kept (then call hs_anim_add). */
int hs_anim_wants(const hs_anim *a, double t);
/* Keep a frame: the drawing's values val[nval], the plotted values
 * plot[nplot]; 0 or -1 (memory). */
int hs_anim_add(hs_anim *a, double t, const double *val, const double *plot);

/* The drawing's values at time t (linear between the kept frames). */
void hs_anim_values_at(const hs_anim *a, double t, double *val);

/* How world coordinates map to pixels (the page computes the same):
 * 2D: px = W/2 + s (x - cx), py = H/2 - s (y - cy), with s the largest
 * scale that fits every frame's points (and circles) inside a margin of
 * 5% of the smaller side; 3D: the orthographic view from azimuth az and
 * elevation el (radians, z up), u = -sin(az) dx + cos(az) dy,
 * w = -sin(el) (cos(az) dx + sin(az) dy) + cos(el) dz with d = p - c,
 * px = W/2 + s u, py = H/2 - s w, s fitting the bounding sphere. */
typedef struct hs_anim_view {
    int dim, width, height;
    double c[3], s, az, el;
} hs_anim_view;
#define HS_ANIM_AZ (-1.0471975511965976)     /* -60 degrees */
#define HS_ANIM_EL 0.3490658503988659        /* 20 degrees */
void hs_anim_view_init(const hs_anim *a, hs_anim_view *v);
/* The pixel of a world point p[dim]; depth (toward the viewer) in *depth. */
void hs_anim_project(const hs_anim_view *v, const double *p, double *px, double *py,
                     double *depth);

/* The floor of a 3D view: the lowest z of every frame's points, and the
 * side of the square grid drawn there (1.2 times their horizontal extent
 * around the view's centre). */
void hs_anim_floor(const hs_anim *a, const hs_anim_view *v, double *zlo, double *span);

/* ---- contacts (anim_contact.c) ---- */

/* A contact's boundary gap(t, q) = 0 is drawn in a 2D view when one
 * drawn point reads every coordinate the gap reads, each alone on an
 * axis of its own (a floor y, a wall x, a circle x^2 + y^2 - l^2 of a
 * particle's point [x, y], or [0, y + r] lifting a disc onto the floor
 * y = 0): that axis is the coordinate's, and the boundary is the zero
 * set of the gap over the view box, traced by marching squares (a
 * straight line, exactly, for an affine gap).  A gap between two points
 * (x2 - x1 - d) has none.  An impact marks the points that read a
 * coordinate of its gap with a ring, for a moment after it. */
/* After hs_anim_init (0, or -1: memory); free before hs_anim_free. */
int hs_anim_contacts_init(hs_anim *a);
void hs_anim_contacts_free(hs_anim *a);
/* Keep an impact of contact j at time t (in order); 0, or -1 (memory). */
int hs_anim_add_impact(hs_anim *a, double t, size_t j);
/* Whether contact j's boundary is drawn; whether it moves (its gap reads t). */
int hs_anim_bound_drawn(const hs_anim *a, size_t j);
int hs_anim_bound_moves(const hs_anim *a, size_t j);
/* The boundaries drawn in view v at time t (still: only those that do
 * not move): *nseg segments in world coordinates, seg[4k .. 4k + 3] =
 * x0, y0, x1, y1 (malloc, the caller frees); NULL when none (a 3D view, no
 * contact drawn, memory). */
double *hs_anim_bounds(const hs_anim *a, const hs_anim_view *v, double t, int still,
                       size_t *nseg);
/* The impact marks at time t: one per marked point of each impact in
 * (t - dur, t + a->flash_lead], at the point's place at the impact (p, world), with the
 * radius of its largest circle (r, world; 0: none) and how far into dur
 * (age, 0 .. 1; 0 before the impact); their number, at most cap. */
typedef struct hs_anim_flash {
    double p[3], r, age;
} hs_anim_flash;
#define HS_ANIM_FLASH_RGB 0xff7f0e      /* the impact's ring */
#define HS_ANIM_BOUND_RGB 0x808080      /* the contacts' boundaries */
#define HS_ANIM_FLASH_TIME 0.25         /* seconds of playback a ring lasts (at least) */
size_t hs_anim_flashes(const hs_anim *a, double t, double dur, hs_anim_flash *f, size_t cap);
/* a->flash_time, or HS_ANIM_FLASH_TIME seconds of playback at a->speed. */
double hs_anim_flash_time(const hs_anim *a);

/* The page: one HTML file, no network; 0 or -1 (a write failed). */
int hs_anim_write_html(const hs_anim *a, FILE *f);

/* A frame drawn into rgb[width * height * 3] at time t (by cairo,
 * antialiased, when hs_fig_frame_rgb can; else by the hand rasterizer).
 * The GIF's frames likewise, reduced to a palette. */
void hs_anim_raster(const hs_anim *a, double t, unsigned char *rgb);
/* An animated GIF of nframes frames from t0 to t1 (inclusive), each shown
 * delay_cs hundredths of a second, looping; 0 or -1 (memory, a write). */
int hs_anim_write_gif(const hs_anim *a, FILE *f, size_t nframes, double t0, double t1,
                      int delay_cs);

/* Still figures (figure.c, through cairo): the drawing at the times
 * at[0..nat-1] (increasing, inside the kept frames) drawn over one another,
 * the earlier ones lighter, the trail points' paths from at[0] to the last,
 * the times as a caption; width x height points (SVG, PDF) or pixels (PNG,
 * antialiased).  0, or an error (HS_EXIT_USAGE: a write failed, or the
 * build has no cairo: HS_FIG_MISSING; memory). */
typedef enum { HS_FIG_SVG, HS_FIG_PDF, HS_FIG_PNG } hs_fig_kind;
#define HS_FIG_MISSING "this holosim was built without cairo, which draws the figures (.svg, " \
    ".pdf, .png): install it (Debian: libcairo2-dev) and build again (make)"
int hs_fig_available(void);
/* One frame of the animation (the GIF's, the video's) drawn by cairo,
 * antialiased, into rgb[width * height * 3]: 0, or -1 (no cairo, a 3D
 * drawing, which the hand rasterizer of anim_gif.c draws, or memory). */
int hs_fig_frame_rgb(const hs_anim *a, double t, unsigned char *rgb);
int hs_fig_write(const hs_anim *a, FILE *f, hs_fig_kind kind, const double *at, size_t nat,
                 hs_error *err);

#endif
