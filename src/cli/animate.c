/* `holosim animate MODEL [RUN.csv] -o OUT`: the model's drawing
 * (model.h, hs_drawing) moving along a trajectory, as a page (.html), a
 * GIF (.gif) or a video (.mp4, through ffmpeg); or still at the times of
 * --at, drawn over one another (.svg, .pdf, .png, through cairo).
 *
 * The trajectory is RUN.csv when given, or a run of the model with every
 * option of `run`, its rows (in the columns the drawing and the plots
 * read) and its contacts' impacts handed over in memory (animrows.c).
 * The output is written to a temporary file beside OUT and renamed at the
 * end: a failure leaves no OUT, and an existing OUT as it was. */
#define _DEFAULT_SOURCE     /* strsep */
#define _XOPEN_SOURCE 700   /* mkstemp, fdopen */
#include "animate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../util/suggest.h"

const char hs_usage_animate[] =
    "usage: holosim animate MODEL [RUN.csv] -o OUT [OPTIONS]\n"
    "\n"
    "Draw the model (its 'draw' section, or the default drawing inferred from\n"
    "coordinate names xN, yN[, zN] and the constraints between them) moving\n"
    "along RUN.csv, or along a run of the model when no CSV is given (every\n"
    "option of 'holosim run' is accepted; --columns names the plotted columns).\n"
    "OUT by its extension:\n"
    "  .html   one self-contained page: play/pause, time slider, speed, trails,\n"
    "          small plots of chosen columns; 3D drawings orbit with the mouse\n"
    "  .gif    an animated GIF (antialiased by cairo when built with it)\n"
    "  .mp4    a video (needs ffmpeg on the PATH)\n"
    "  .svg, .pdf, .png   a still figure: the drawing at the times of --at\n"
    "          drawn over one another, the earlier lighter, with the trails\n"
    "          (drawn by cairo: vector SVG and PDF, antialiased PNG)\n"
    "\n"
    "  -o, --output OUT          the file to write (required)\n"
    "  --at T1,T2,...            a figure's times (required for .svg, .pdf,\n"
    "                            .png; increasing); the run ends at the last\n"
    "                            unless --t-end is given\n"
    "  --fps N                   frames per second of playback (page: 60, the\n"
    "                            frames stored per simulated second at speed 1;\n"
    "                            GIF: 25; video: 30)\n"
    "  --speed X                 simulated seconds per second of playback\n"
    "                            (default 1: real time)\n"
    "  --frames N                GIF, video: exactly N frames from the first row\n"
    "                            to the last\n"
    "  --size WxH                pixels of the drawing (default 720x540; GIF and\n"
    "                            video 640x480)\n"
    "  --trail P1,P2,...         points that leave a trail ('none'; default: the\n"
    "                            last point of the drawing)\n"
    "  --plot C1,C2,...          columns drawn as small plots under the page's\n"
    "                            drawing ('none'; default: E when there is one)\n"
    "\n"
    "A page stores at most 60 frames per simulated second (--fps, at --speed 1)\n"
    "and at most 900000 numbers (about 5 MB): beyond that the time between kept\n"
    "rows doubles until they fit.  Every stored frame is a row of the\n"
    "trajectory; the page interpolates linearly between them.  A run makes rows\n"
    "for the frames drawn only (two per GIF or video frame, what a page stores),\n"
    "whatever --speed asks.  Interrupted (Ctrl-C), animate writes nothing and\n"
    "leaves no temporary file (exit 130).\n"
    "\n"
    "Contacts: a boundary gap = 0 whose coordinates one drawn point carries (a\n"
    "floor, a wall, a rope's circle) is a thin grey line; each impact of the run\n"
    "is an orange ring around the points it hit for a moment (GIF, video, page;\n"
    "none from a CSV, none in a figure).\n";

enum { OUT_HTML, OUT_GIF, OUT_MP4, OUT_SVG, OUT_PDF, OUT_PNG };
#define IS_FIG(k) ((k) >= OUT_SVG)
#define MAX_AT 64
#define PAGE_CAP 900000        /* numbers a page stores at most (documented) */
#define MAX_GIF_FRAMES 20000

/* ---------- options ---------- */

typedef struct aopts {
    int kind;
    double fps, speed;
    long frames;               /* 0: from the duration */
    int width, height;
    const char *trail, *plot;
    double at[MAX_AT];         /* a figure's times (--at) */
    size_t nat;
} aopts;

/* --at T1,T2,...: increasing numbers, at most MAX_AT */
static int parse_at(const char *spec, aopts *a)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", spec);
    a->nat = 0;
    for (char *s = buf, *tok; (tok = strsep(&s, ","));) {
        double x;
        if (a->nat == MAX_AT || hs_cli_parse_double(tok, &x) || !isfinite(x) ||
            (a->nat && !(x > a->at[a->nat - 1])))
            return hs_cli_usage_error(hs_usage_animate, "--at wants increasing times "
                                      "T1,T2,... (at most 64), got '%s'", spec);
        a->at[a->nat++] = x;
    }
    return 0;
}

static int parse_aopts(const opts *o, aopts *a)
{
    const char *ext = strrchr(o->output, '.');
    if (ext && strchr(ext, '/'))
        ext = NULL;
    if (ext && (strcmp(ext, ".html") == 0 || strcmp(ext, ".htm") == 0))
        a->kind = OUT_HTML;
    else if (ext && strcmp(ext, ".gif") == 0)
        a->kind = OUT_GIF;
    else if (ext && strcmp(ext, ".mp4") == 0)
        a->kind = OUT_MP4;
    else if (ext && strcmp(ext, ".svg") == 0)
        a->kind = OUT_SVG;
    else if (ext && strcmp(ext, ".pdf") == 0)
        a->kind = OUT_PDF;
    else if (ext && strcmp(ext, ".png") == 0)
        a->kind = OUT_PNG;
    else
        return hs_cli_usage_error(hs_usage_animate, "animate: the output '%s' must end in "
                                  ".html, .gif, .mp4, .svg, .pdf or .png (the kind of file "
                                  "to write)", o->output);
    if (IS_FIG(a->kind) && !o->lin_at)
        return hs_cli_usage_error(hs_usage_animate, "animate: a figure (%s) needs --at "
                                  "T1,T2,...: the times to draw", o->output);
    if (!IS_FIG(a->kind) && o->lin_at)
        return hs_cli_usage_error(hs_usage_animate, "%s", "--at is for the figures (.svg, "
                                  ".pdf, .png)");
    if (o->lin_at && parse_at(o->lin_at, a))
        return HS_EXIT_USAGE;
    a->fps = a->kind == OUT_HTML ? 60 : a->kind == OUT_GIF ? 25 : 30;
    a->speed = 1;
    a->width = a->kind == OUT_HTML ? 720 : 640;
    a->height = a->kind == OUT_HTML ? 540 : 480;
    double x;
    if (o->fps && (hs_cli_parse_double(o->fps, &a->fps) || !(a->fps > 0 && a->fps <= 1000)))
        return hs_cli_usage_error(hs_usage_animate, "--fps wants a number in (0, 1000], got "
                                  "'%s'", o->fps);
    if (o->speed && (hs_cli_parse_double(o->speed, &a->speed) || !(a->speed > 0)))
        return hs_cli_usage_error(hs_usage_animate, "--speed wants a positive number, got "
                                  "'%s'", o->speed);
    if (o->frames) {
        if (a->kind == OUT_HTML || IS_FIG(a->kind))
            return hs_cli_usage_error(hs_usage_animate, "%s", "--frames is for .gif and .mp4 "
                                      "(a page stores the frames --fps asks for, a figure "
                                      "draws the times of --at)");
        if (hs_cli_parse_double(o->frames, &x) || x < 2 || x > MAX_GIF_FRAMES || x != floor(x))
            return hs_cli_usage_error(hs_usage_animate, "--frames wants an integer 2..20000, "
                                      "got '%s'", o->frames);
        a->frames = (long)x;
    }
    if (o->size) {
        int w, h, n = 0;
        if (sscanf(o->size, "%dx%d%n", &w, &h, &n) != 2 || o->size[n] || w < 64 || h < 64 ||
            w > 4096 || h > 4096)
            return hs_cli_usage_error(hs_usage_animate, "--size wants WxH, each 64..4096 "
                                      "pixels, got '%s'", o->size);
        a->width = w;
        a->height = h;
    }
    if (a->kind == OUT_MP4) {          /* yuv420p: even sides */
        a->width &= ~1;
        a->height &= ~1;
    }
    a->trail = o->trail;
    a->plot = o->plot ? o->plot : o->columns;
    return 0;
}

/* ---------- files ---------- */

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* OUT can be written: not a directory, its directory writable; no output
 * (-o, --summary, --events) an input (the model, --params files, the CSV)
 * or another output (files.c).  The temporary file beside OUT is made
 * later. */
static int check_output(const opts *o, const char *csv)
{
    const char *out = o->output;
    if (is_dir(out)) {
        fprintf(stderr, "holosim: cannot write '%s': it is a directory (give a file name "
                "ending in .html, .gif, .mp4, .svg, .pdf or .png)\n", out);
        return HS_EXIT_USAGE;
    }
    int rc = hs_cli_check_files(o, "the CSV", csv, NULL, NULL);
    if (rc)
        return rc;
    char *dir = strdup(out), *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash && slash != dir)
        *slash = '\0';
    const char *d = !slash ? "." : slash == dir ? "/" : dir;
    int ok = dir && access(d, W_OK | X_OK) == 0;
    int e = errno;
    if (!dir)
        return hs_cli_nomem();
    if (!ok)
        fprintf(stderr, "holosim: cannot write '%s': %s\n", out, strerror(e));
    free(dir);
    return ok ? 0 : HS_EXIT_USAGE;
}

/* A temporary file beside path (renamed onto it at the end). */
static FILE *open_beside(const char *path, char **tmp)
{
    size_t len = strlen(path) + 16;
    *tmp = malloc(len);
    if (!*tmp)
        return NULL;
    snprintf(*tmp, len, "%s.tmpXXXXXX", path);
    int fd = mkstemp(*tmp);
    if (fd < 0) {
        free(*tmp);
        *tmp = NULL;
        return NULL;
    }
    fchmod(fd, 0644 & ~umask(umask(0)));
    FILE *f = fdopen(fd, "wb");
    if (!f) {
        close(fd);
        unlink(*tmp);
        free(*tmp);
        *tmp = NULL;
    }
    return f;
}

/* ---------- lists of names ---------- */

/* Split a comma list into names (owned copies) */
static size_t split_list(const char *s, char ***out)
{
    size_t n = 1;
    for (const char *p = s; *p; p++)
        n += *p == ',';
    char **v = calloc(n + 1, sizeof *v);
    size_t k = 0;
    char *copy = strdup(s), *save = copy;
    if (!v || !copy) {
        free(v);
        free(copy);
        *out = NULL;
        return 0;
    }
    for (char *tok; (tok = strsep(&save, ","));) {
        while (*tok == ' ')
            tok++;
        size_t l = strlen(tok);
        while (l && tok[l - 1] == ' ')
            tok[--l] = '\0';
        if (*tok)
            v[k++] = strdup(tok);
    }
    free(copy);
    *out = v;
    return k;
}

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* --trail: point names (or none) into a->trail; default the last point
 * of the drawing that is not an anchor. */
static int set_trails(hs_anim *A, const char *spec)
{
    const hs_drawing *d = A->m->draw;
    if (!spec) {
        for (size_t i = d->npt; i-- > 0;)
            if (!strstr(d->ptname[i], "_anchor")) {
                A->trail[i] = 1;
                break;
            }
        return 0;
    }
    if (strcmp(spec, "none") == 0)
        return 0;
    char **v;
    size_t n = split_list(spec, &v);
    for (size_t k = 0; k < n; k++) {
        size_t i = 0;
        while (i < d->npt && strcmp(d->ptname[i], v[k]) != 0)
            i++;
        if (i == d->npt) {
            const char *near = hs_nearest(v[k], (const char *const *)d->ptname, d->npt);
            char msg[400];
            snprintf(msg, sizeof msg, "--trail: the drawing has no point '%.100s'%s%s%s; its "
                     "points are", v[k], near ? " (did you mean '" : "", near ? near : "",
                     near ? "'?)" : "");
            fprintf(stderr, "holosim: %s", msg);
            for (size_t j = 0; j < d->npt; j++)
                fprintf(stderr, "%s%s", j ? ", " : " ", d->ptname[j]);
            fprintf(stderr, "\n");
            free_list(v, n);
            return HS_EXIT_USAGE;
        }
        A->trail[i] = 1;
    }
    free_list(v, n);
    return 0;
}

/* ---------- writing ---------- */

/* The frames a GIF or video of t0..t1 draws: --frames, else the playback's. */
static size_t frames_drawn(const aopts *ao, double t0, double t1)
{
    if (ao->frames)
        return (size_t)ao->frames;
    double n = floor((t1 - t0) * ao->fps / ao->speed + 1e-9) + 1;
    return n < 2 || !(n == n) ? 2 : n > MAX_GIF_FRAMES ? MAX_GIF_FRAMES : (size_t)n;
}

/* 128 + the signal that interrupted the output, said so; 0 when none. */
static int interrupted(const char *out)
{
    int sig = hs_cli_interrupted;
    if (!sig)
        return 0;
    fprintf(stderr, "holosim: interrupted (%s): '%s' not written\n", sig == SIGTERM ? "SIGTERM"
            : sig == SIGHUP ? "SIGHUP" : "SIGINT", out);
    return 128 + sig;
}

static int write_output(const hs_anim *A, const aopts *ao, const char *out, int quiet)
{
    char *tmp = NULL;
    FILE *f = open_beside(out, &tmp);
    if (!f) {
        fprintf(stderr, "holosim: cannot write '%s': %s\n", out, strerror(errno));
        return HS_EXIT_USAGE;
    }
    double t0 = A->t[0], t1 = A->t[A->nframe - 1];
    size_t nframes = frames_drawn(ao, t0, t1);
    int rc = 0;
    hs_error ferr;
    hs_error_init(&ferr);
    if (IS_FIG(ao->kind)) {
        hs_fig_kind k = ao->kind == OUT_SVG ? HS_FIG_SVG : ao->kind == OUT_PDF ? HS_FIG_PDF
                                                                                : HS_FIG_PNG;
        rc = hs_fig_write(A, f, k, ao->at, ao->nat, &ferr);
    } else if (ao->kind == OUT_HTML) {
        rc = hs_anim_write_html(A, f);
    } else if (ao->kind == OUT_GIF) {
        int delay = (int)lround(100 / ao->fps);
        rc = hs_anim_write_gif(A, f, nframes, t0, t1, delay < 2 ? 2 : delay);
    } else {
        fclose(f);
        f = NULL;
        rc = hs_cli_write_mp4(A, tmp, nframes, t0, t1, ao->fps);
    }
    if (f && fclose(f) != 0)
        rc = -1;
    if (hs_cli_interrupted) {                 /* Ctrl-C while writing: no output, no tmp */
        unlink(tmp);
        free(tmp);
        return interrupted(out);
    }
    if (rc || rename(tmp, out) != 0) {
        int e = errno;
        unlink(tmp);
        free(tmp);
        if (ferr.code)                 /* the figure's own reason (cairo, memory) */
            return hs_cli_fail(&ferr);
        fprintf(stderr, "holosim: cannot write '%s'%s%s\n", out, ao->kind == OUT_MP4 ?
                " (ffmpeg failed)" : ": ", ao->kind == OUT_MP4 ? "" : strerror(e ? e : EIO));
        return HS_EXIT_USAGE;
    }
    free(tmp);
    if (!quiet) {
        if (IS_FIG(ao->kind))
            fprintf(stderr, "holosim: wrote %s: %zu times from t = %.6g to %.6g, %dx%d\n", out,
                    ao->nat, ao->at[0], ao->at[ao->nat - 1], A->width, A->height);
        else if (ao->kind == OUT_HTML)
            fprintf(stderr, "holosim: wrote %s: %zu frames, t = %.6g to %.6g%s\n", out,
                    A->nframe, t0, t1, A->thinned ? " (thinned to fit)" : "");
        else
            fprintf(stderr, "holosim: wrote %s: %zu frames of %dx%d, t = %.6g to %.6g\n", out,
                    nframes, A->width, A->height, t0, t1);
    }
    return 0;
}

/* ---------- figures ---------- */

/* A figure's run: to the last time of --at unless --t-end is given, rows
 * 2000 to that time unless --dt is given (the drawing between rows is
 * linear: 1/2000 of the span keeps it below a pixel). */
static int figure_run(const opts *o, const aopts *ao, hs_model *m)
{
    int t_end_given = !isnan(o->ov.s.t_end) || o->ov.num_text[HS_NUM_T_END];
    double last = ao->at[ao->nat - 1];
    if (!(ao->at[0] >= m->t0) || (!t_end_given && !(last > m->t0))) {
        char t0[64];
        snprintf(t0, sizeof t0, "%.6g", m->t0);
        return hs_cli_usage_error(hs_usage_animate, "--at: the times must lie in the run, "
                                  "after its start t0 = %s", t0);
    }
    if (!t_end_given)
        m->set.t_end = last;
    if (isnan(o->ov.s.dt) && !o->ov.num_text[HS_NUM_DT])
        m->set.dt = fmin(isnan(m->set.dt) ? HUGE_VAL : m->set.dt, (last - m->t0) / 2000);
    return 0;
}

/* The frames a figure draws: those from the first time of --at to the
 * last (and one either side, between which the ends are interpolated),
 * so that the view fits what is drawn; each time inside the trajectory. */
static int figure_frames(hs_anim *A, const aopts *ao)
{
    double lo = ao->at[0], hi = ao->at[ao->nat - 1];
    if (A->nframe == 0 || lo < A->t[0] || hi > A->t[A->nframe - 1]) {
        fprintf(stderr, "holosim: error: --at: the times must lie in the trajectory, t = %.6g "
                "to %.6g\n", A->nframe ? A->t[0] : (double)NAN,
                A->nframe ? A->t[A->nframe - 1] : (double)NAN);
        return HS_EXIT_USAGE;
    }
    size_t first = 0, last = A->nframe - 1, nv = A->nval, np = A->nplot;
    while (first + 1 < A->nframe && A->t[first + 1] <= lo)
        first++;
    while (last > first && A->t[last - 1] >= hi)
        last--;
    size_t n = last - first + 1;
    memmove(A->t, A->t + first, n * sizeof *A->t);
    memmove(A->val, A->val + first * nv, n * nv * sizeof *A->val);
    if (np)
        memmove(A->plot, A->plot + first * np, n * np * sizeof *A->plot);
    A->nframe = n;
    return 0;
}

/* ---------- the command ---------- */

/* The run, its rows (in the columns the drawing and the plots read) and
 * impacts handed over in memory; the frames in E.  0, or an exit code:
 * the run's (its message printed), or with err set. */
static int animate_run(opts *o, const aopts *ao, hs_model *m, anim_rows *E, double frame_dt,
                       hs_error *err)
{
    const hs_anim *A = E->A;
    size_t len = 16;
    for (size_t i = 0; i < m->n; i++)
        len += strlen(m->qname[i]) + 1;
    for (size_t i = 0; i < A->nplot; i++)
        len += strlen(A->plotname[i]) + 1;
    char *cols = malloc(len);
    if (!cols)
        return hs_error_nomem(err);
    size_t k = (size_t)snprintf(cols, len, "t");
    for (size_t i = 0; i < m->n; i++)
        k += (size_t)snprintf(cols + k, len - k, ",%s", m->qname[i]);
    for (size_t i = 0; i < A->nplot; i++)
        k += (size_t)snprintf(cols + k, len - k, ",%s", A->plotname[i]);
    int rc = 0;
    if (IS_FIG(ao->kind))
        rc = figure_run(o, ao, m);
    else if (isnan(o->ov.s.dt) && (isnan(m->set.dt) || m->set.dt > frame_dt)) {
        m->set.dt = frame_dt;
        if (!o->quiet)
            fprintf(stderr, "holosim: rows every %.6g s (what the frames need; --dt "
                    "chooses)\n", frame_dt);
    }
    hs_sink_fn rows, events;
    hs_cli_anim_sinks(E, &rows, &events);
    if (!rc)
        rc = hs_cli_run_model_to(m, o, &rows.base, m->ncontact ? &events : NULL, cols);
    free(cols);
    if (!rc && !hs_cli_interrupted)
        rc = hs_cli_anim_rows_end(E, err);
    return rc;
}


static int animate(opts *o, const aopts *ao, const char *csv)
{
    hs_error err;
    hs_error_init(&err);
    /* run mode: no --dt given and rows sparser than the frames: rows at
     * the frame interval (a smooth picture), said so */
    double frame_dt = ao->speed / ao->fps;
    hs_cli_catch_signals();                   /* the run, reading, writing: stop cleanly */
    hs_model *m = hs_model_load(o->model, &o->ov, &err);
    if (!m)
        return hs_cli_fail(&err);
    if (m->draw->none.code) {
        int rc = hs_cli_fail(&m->draw->none);
        hs_model_free(m);
        return rc;
    }
    if (m->draw->inferred && !o->quiet)
        fprintf(stderr, "holosim: %s\n", m->draw->note);
    /* the plotted columns */
    char **plots = NULL;
    size_t nplot = 0;
    if (ao->plot && strcmp(ao->plot, "none") != 0)
        nplot = split_list(ao->plot, &plots);
    else if (!ao->plot && !csv)
        nplot = split_list(m->has_potential || m->form == HS_FORM_EMBEDDING ? "E" : "T",
                           &plots);
    else if (!ao->plot && hs_cli_csv_has_column(csv, "E"))
        nplot = split_list("E", &plots);
    hs_anim A;
    size_t cap = ao->kind == OUT_HTML ? PAGE_CAP : (size_t)4e7;
    double interval = ao->kind == OUT_HTML ? frame_dt : frame_dt / 2;
    if (ao->frames)
        interval = m->set.t_end > m->t0 && !csv
                   ? (m->set.t_end - m->t0) / (double)(ao->frames - 1) / 2 : 0;
    if (ao->kind != OUT_HTML)          /* smooth trails, whatever the frame rate */
        interval = fmin(interval, ao->speed / 60);
    /* but no rows finer than the frames drawn need (--speed 1e-6 made
     * rows every 1.7e-8 s whatever it drew): two per frame of a GIF or
     * video (trails), as many as a page can store */
    double span = m->set.t_end - m->t0;
    if (!csv && !IS_FIG(ao->kind) && span > 0 && isfinite(span)) {
        double per = (double)(m->draw->nout + nplot + 1);
        double nf = ao->kind == OUT_HTML ? fmax(2, floor(PAGE_CAP / per))
                                         : 2.0 * (double)frames_drawn(ao, m->t0, m->set.t_end);
        frame_dt = fmax(frame_dt, span / nf);
        interval = fmax(interval, span / nf);
    }
    if (IS_FIG(ao->kind))              /* a figure keeps every row */
        interval = 0;
    int rc = hs_anim_init(&A, m, nplot, interval, cap) || hs_anim_contacts_init(&A);
    if (rc) {
        hs_anim_contacts_free(&A);
        hs_anim_free(&A);
        hs_model_free(m);
        free_list(plots, nplot);
        return hs_cli_nomem();
    }
    A.speed = ao->speed;
    A.fps = ao->fps;
    A.width = ao->width;
    A.height = ao->height;
    for (size_t i = 0; i < nplot; i++) {
        A.plotname[i] = plots[i];
        plots[i] = NULL;
    }
    free(plots);
    rc = set_trails(&A, ao->trail);
    anim_rows E = { 0 };
    if (!rc && hs_cli_anim_rows_init(&E, &A))
        rc = hs_error_nomem(&err);
    if (!rc && csv) {
        rc = hs_cli_anim_read_csv(&E, csv, &err);
    } else if (!rc) {
        rc = animate_run(o, ao, m, &E, frame_dt, &err);
    }
    if (rc && err.code)
        hs_cli_fail(&err);
    hs_cli_anim_rows_free(&E);
    A.stop = &hs_cli_interrupted;
    if (!rc && hs_cli_interrupted)            /* while reading the rows */
        rc = interrupted(o->output);
    if (!rc && IS_FIG(ao->kind))
        rc = figure_frames(&A, ao);
    if (!rc && (ao->kind == OUT_GIF || ao->kind == OUT_MP4)) {
        /* an impact's ring: in the frame nearest it and the next at least */
        double t0 = A.t[0], t1 = A.t[A.nframe - 1];
        size_t nf = frames_drawn(ao, t0, t1);
        double frame = (t1 - t0) / (double)(nf - 1);
        A.flash_time = fmax(HS_ANIM_FLASH_TIME * A.speed, 1.5 * frame);
        A.flash_lead = 0.5 * frame;
    }
    if (!rc)
        rc = write_output(&A, ao, o->output, o->quiet);
    hs_anim_contacts_free(&A);
    hs_anim_free(&A);
    hs_model_free(m);
    return rc;
}

int hs_cli_animate(int argc, char **argv)
{
    opts o;
    int rc;
    if (hs_cli_begin(argc, argv, hs_usage_animate, CMD_ANIMATE, &o, &rc))
        return rc;
    aopts ao = { 0 };
    const char *csv = o.npos ? o.pos[0] : NULL;
    if (!o.model)
        rc = hs_cli_usage_error(hs_usage_animate, "%s", "animate: missing MODEL");
    else if (o.npos > 1)
        rc = hs_cli_usage_error(hs_usage_animate, "animate: one MODEL and at most one CSV, "
                                "got '%s' too", o.pos[1]);
    else if (!o.output)
        rc = hs_cli_usage_error(hs_usage_animate, "%s", "animate: -o OUT is required (.html, "
                                ".gif, .mp4, .svg, .pdf or .png)");
    if (!rc)
        rc = parse_aopts(&o, &ao);
    if (!rc && IS_FIG(ao.kind) && !hs_fig_available())
        rc = hs_cli_usage_error(hs_usage_animate, "%s", HS_FIG_MISSING);
    if (!rc && ao.kind == OUT_MP4 && !hs_cli_have_ffmpeg()) {
        fprintf(stderr, "holosim: writing '%s' needs ffmpeg, not found on the PATH: install "
                "it (Debian: ffmpeg), or write .gif or .html\n", o.output);
        rc = HS_EXIT_USAGE;
    }
    if (!rc)
        rc = check_output(&o, csv);
    if (!rc)
        rc = animate(&o, &ao, csv);
    hs_cli_free_opts(&o);
    return rc;
}
