/* The drawing of a model (loader.h; holosim-model(5), DRAW): the `draw`
 * key read into points (expressions of t and q, 2D or 3D) and the lines,
 * circles and ground marks between them, or, without the key, a default
 * inferred from the names:
 *
 *   - coordinates (and ambient names of an embedding, and outputs that are
 *     expressions of t and q) xN, yN[, zN] with the same suffix N are the
 *     point PN (z = 0 where a 3D drawing has none);
 *   - a constraint reading the coordinates of exactly two such points, and
 *     no other coordinate, is a segment between them;
 *   - a constraint reading one such point p whose second derivative in p
 *     is c I (|p - a|^2 = l^2 in any arrangement) is a segment to its
 *     anchor a = p - (dG/dp)/c, an expression of t (a moving support
 *     draws too), drawn with a ground mark;
 *   - points not made of coordinates (an embedding's, outputs) a constant
 *     distance apart, or from the origin, are joined (embedded_segments).
 *
 * Every point, radius and anchor is compiled into one program
 * (hs_drawing.prog) of t, q and the parameters, evaluated by the caller
 * on the rows it draws (hs_draw_eval). */
#include "loader.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

#include "../util/map.h"
#include "../util/suggest.h"

/* ---------- colours ---------- */

static const struct {
    const char *name;
    unsigned rgb;
} colours[] = {
    { "black", 0x000000 }, { "gray", 0x808080 }, { "grey", 0x808080 },
    { "red", 0xd62728 }, { "green", 0x2ca02c }, { "blue", 0x1f77b4 },
    { "orange", 0xff7f0e }, { "purple", 0x9467bd }, { "brown", 0x8c564b },
    { "pink", 0xe377c2 }, { "olive", 0xbcbd22 }, { "cyan", 0x17becf },
    { "teal", 0x008080 }, { "navy", 0x000080 }, { "white", 0xffffff },
};
enum { NCOLOURS = sizeof colours / sizeof *colours };

#define LINE_RGB 0x1f3a5f        /* segments and polylines */
#define POINT_RGB 0xd62728       /* dots */
#define CIRCLE_RGB 0x1f77b4
#define GROUND_RGB 0x404040

/* A colour name or #rrggbb into *rgb; an error at n otherwise. */
static int read_colour(loader *L, yaml_node_t *n, unsigned *rgb)
{
    const char *s = hs_ytree_str(n);
    if (!s)
        return hs_ld_expect(L, n, YAML_SCALAR_NODE, "a colour");
    if (s[0] == '#' && strlen(s) == 7) {
        int ok = 1;
        for (int i = 1; i < 7; i++)
            ok &= isxdigit((unsigned char)s[i]) != 0;
        if (ok) {
            *rgb = (unsigned)strtoul(s + 1, NULL, 16);
            return 0;
        }
    }
    const char *names[NCOLOURS];
    for (size_t i = 0; i < NCOLOURS; i++) {
        if (strcmp(s, colours[i].name) == 0) {
            *rgb = colours[i].rgb;
            return 0;
        }
        names[i] = colours[i].name;
    }
    const char *near = hs_nearest(s, names, NCOLOURS);
    return hs_ytree_error(L->y, L->err, n, "unknown colour '%s'%s%s%s: a name (black, gray, "
                          "red, green, blue, orange, purple, brown, pink, olive, cyan, teal, "
                          "navy, white) or #rrggbb", s, near ? " (did you mean '" : "",
                          near ? near : "", near ? "'?)" : "");
}

/* ---------- building the drawing ---------- */

typedef struct dbuild {
    loader *L;
    hs_drawing *d;
    const hs_node **expr;      /* [nexpr] the program's roots: 3 per point, radii after */
    size_t nexpr, cap;
    size_t ptcap, itemcap;
    const hs_node **rad;       /* [nrad] circle radii */
    size_t nrad, radcap;
} dbuild;

static int long_cmp(const void *pa, const void *pb)
{
    long a = *(const long *)pa, b = *(const long *)pb;
    return (a > b) - (a < b);
}

static int oom(loader *L)
{
    return hs_error_nomem(L->err);
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
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

/* A point named name at (x, y, z) (z NULL: a planar point); its index. */
static long add_point(dbuild *B, const char *name, const hs_node *x, const hs_node *y,
                      const hs_node *z)
{
    hs_drawing *d = B->d;
    size_t np = d->npt;
    size_t had = B->ptcap;      /* the three point arrays grow together */
    if (grow((void **)&d->ptname, &B->ptcap, np + 1, sizeof *d->ptname))
        return oom(B->L), -1;
    size_t cap = B->ptcap;
    B->ptcap = had;
    if (grow((void **)&d->ptrgb, &B->ptcap, cap, sizeof *d->ptrgb) ||
        (B->ptcap = had, grow((void **)&d->ptdot, &B->ptcap, cap, sizeof *d->ptdot)) ||
        grow((void **)&B->expr, &B->cap, 3 * (np + 1), sizeof *B->expr) ||
        !(d->ptname[np] = hs_ld_strdup(name)))
        return oom(B->L), -1;
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

static long find_point(const hs_drawing *d, const char *s)
{
    for (size_t i = 0; i < d->npt; i++)
        if (strcmp(d->ptname[i], s) == 0)
            return (long)i;
    return -1;
}

static hs_draw_item *add_item(dbuild *B, hs_draw_kind kind, size_t npt, unsigned rgb)
{
    hs_drawing *d = B->d;
    if (grow((void **)&d->item, &B->itemcap, d->nitem + 1, sizeof *d->item))
        return oom(B->L), NULL;
    hs_draw_item *it = &d->item[d->nitem];
    *it = (hs_draw_item){ .kind = kind, .npt = npt, .pt = xcalloc(npt, sizeof(size_t)),
                          .rgb = rgb };
    if (!it->pt)
        return oom(B->L), NULL;
    d->nitem++;
    return it;
}

/* Whether the drawing already joins points a and b by a segment (a body
 * and a constant distance may both find the same pair). */
static int has_segment(const hs_drawing *d, size_t a, size_t b)
{
    for (size_t i = 0; i < d->nitem; i++) {
        const hs_draw_item *it = &d->item[i];
        if (it->kind == HS_DRAW_LINE && it->npt == 2 &&
            ((it->pt[0] == a && it->pt[1] == b) || (it->pt[0] == b && it->pt[1] == a)))
            return 1;
    }
    return 0;
}

/* The compiled program: x, y[, z] of each point, then the radii. */
static int finish(dbuild *B)
{
    loader *L = B->L;
    hs_model *m = L->m;
    hs_drawing *d = B->d;
    size_t dim = (size_t)d->dim;
    d->nout = d->npt * dim + B->nrad;
    m->draw_expr = xcalloc(d->nout, sizeof *m->draw_expr);
    if (!m->draw_expr)
        return oom(L);
    const hs_node *zero = scalar_zero(L);
    for (size_t i = 0; i < d->npt; i++)
        for (size_t c = 0; c < dim; c++)
            m->draw_expr[i * dim + c] = B->expr[3 * i + c] ? B->expr[3 * i + c] : zero;
    for (size_t r = 0; r < B->nrad; r++)
        m->draw_expr[d->npt * dim + r] = B->rad[r];
    for (size_t i = 0; i < d->nitem; i++)
        if (d->item[i].kind == HS_DRAW_CIRCLE)
            d->item[i].rout += d->npt * dim;
    if (hs_ld_dag_check(L))
        return L->err->code;
    d->prog = hs_prog_compile(m->dag, m->draw_expr, d->nout, L->err);
    return d->prog ? 0 : L->err->code ? L->err->code : oom(L);
}

/* ---------- the draw key ---------- */

/* A point's name in a list of the drawing: a known point. */
static int point_ref(dbuild *B, yaml_node_t *n, size_t *out)
{
    loader *L = B->L;
    hs_drawing *d = B->d;
    const char *s = hs_ytree_str(n);
    if (!s)
        return hs_ld_expect(L, n, YAML_SCALAR_NODE, "a point of 'draw'");
    long i = find_point(d, s);
    if (i >= 0) {
        *out = (size_t)i;
        return 0;
    }
    const char *near = hs_nearest(s, (const char *const *)d->ptname, d->npt);
    return hs_ytree_error(L->y, L->err, n, "unknown point '%s' in 'draw'%s%s%s (the points "
                          "are the keys of draw: points)", s, near ? " (did you mean '" : "",
                          near ? near : "", near ? "'?)" : "");
}

static const char *const line_keys[] = { "points", "color" };
static const char *const circle_keys[] = { "radius", "color" };

/* segments (npt = 2) or polylines (npt >= 2): a list of entries, each a
 * list of point names or {points: [...], color: C}. */
static int read_lines(dbuild *B, yaml_node_t *list, int segment)
{
    loader *L = B->L;
    const char *what = segment ? "'draw: segments'" : "'draw: polylines'";
    if (hs_ld_expect(L, list, YAML_SEQUENCE_NODE, what))
        return L->err->code;
    FOR_ITEMS(list, it) {
        yaml_node_t *e = NODE(L, *it), *pts = e;
        unsigned rgb = LINE_RGB;
        if (e->type == YAML_MAPPING_NODE) {
            if (hs_ld_check_keys(L, e, line_keys, 2, what))
                return L->err->code;
            yaml_node_t *c = hs_ld_get(L, e, "color");
            if (c && read_colour(L, c, &rgb))
                return L->err->code;
            if (!(pts = hs_ld_get(L, e, "points")))
                return hs_ytree_error(L->y, L->err, e, "an entry of %s needs 'points'", what);
        }
        if (hs_ld_expect(L, pts, YAML_SEQUENCE_NODE, "an entry of 'draw' lines"))
            return L->err->code;
        size_t np = seq_len(pts);
        if (segment ? np != 2 : np < 2)
            return hs_ytree_error(L->y, L->err, pts, "%s: %s, found %zu", what,
                                  segment ? "a segment joins two points" :
                                  "a polyline joins two points or more", np);
        hs_draw_item *item = add_item(B, HS_DRAW_LINE, np, rgb);
        if (!item)
            return L->err->code;
        size_t j = 0;
        FOR_ITEMS(pts, p)
            if (point_ref(B, NODE(L, *p), &item->pt[j++]))
                return L->err->code;
    }
    return 0;
}

/* circles: {POINT: RADIUS or {radius: R, color: C}}. */
static int read_circles(dbuild *B, yaml_node_t *map)
{
    loader *L = B->L;
    if (hs_ld_expect(L, map, YAML_MAPPING_NODE, "'draw: circles'") ||
        hs_ld_check_keys(L, map, NULL, 0, "'draw: circles'"))
        return L->err->code;
    FOR_PAIRS(map, p) {
        yaml_node_t *k = NODE(L, p->key), *v = NODE(L, p->value), *r = v;
        unsigned rgb = CIRCLE_RGB;
        if (v->type == YAML_MAPPING_NODE) {
            if (hs_ld_check_keys(L, v, circle_keys, 2, "a circle"))
                return L->err->code;
            yaml_node_t *c = hs_ld_get(L, v, "color");
            if (c && read_colour(L, c, &rgb))
                return L->err->code;
            if (!(r = hs_ld_get(L, v, "radius")))
                return hs_ytree_error(L->y, L->err, v, "a circle needs 'radius'");
        }
        hs_draw_item *item = add_item(B, HS_DRAW_CIRCLE, 1, rgb);
        if (!item || point_ref(B, k, &item->pt[0]))
            return L->err->code;
        const hs_node *e = hs_ld_parse(L, r, SCOPE_MODEL, "a radius");
        if (!e || hs_ld_forbid_velocity(L, e, r, "a radius"))
            return L->err->code;
        if (grow((void **)&B->rad, &B->radcap, B->nrad + 1, sizeof *B->rad))
            return oom(L);
        item->rout = B->nrad;
        B->rad[B->nrad++] = e;
    }
    return 0;
}

static const char *const draw_keys[] = {
    "points", "segments", "polylines", "circles", "ground", "colors", "dots",
};

static int read_draw_key(dbuild *B, yaml_node_t *dk)
{
    loader *L = B->L;
    if (hs_ld_expect(L, dk, YAML_MAPPING_NODE, "'draw'") ||
        hs_ld_check_keys(L, dk, draw_keys, sizeof draw_keys / sizeof *draw_keys, "'draw'"))
        return L->err->code;
    yaml_node_t *pts = hs_ld_get(L, dk, "points");
    if (!pts)
        return hs_ytree_error(L->y, L->err, dk, "'draw' needs 'points': a mapping of point "
                              "names to [x, y] or [x, y, z]");
    if (hs_ld_expect(L, pts, YAML_MAPPING_NODE, "'draw: points'") ||
        hs_ld_check_keys(L, pts, NULL, 0, "'draw: points'"))
        return L->err->code;
    if (!map_len(pts))
        return hs_ytree_error(L->y, L->err, pts, "'draw: points' is empty");
    FOR_PAIRS(pts, p) {
        yaml_node_t *k = NODE(L, p->key), *v = NODE(L, p->value);
        if (hs_ld_expect(L, v, YAML_SEQUENCE_NODE, "a point of 'draw'"))
            return L->err->code;
        size_t nc = seq_len(v);
        if (nc != 2 && nc != 3)
            return hs_ytree_error(L->y, L->err, v, "a point is [x, y] or [x, y, z], found "
                                  "%zu entries", nc);
        const hs_node *c[3] = { NULL, NULL, NULL };
        size_t j = 0;
        FOR_ITEMS(v, it) {
            yaml_node_t *e = NODE(L, *it);
            if (!(c[j] = hs_ld_parse(L, e, SCOPE_MODEL, "a coordinate of a point")) ||
                hs_ld_forbid_velocity(L, c[j], e, "a point of 'draw'"))
                return L->err->code;
            j++;
        }
        if (add_point(B, hs_ytree_str(k), c[0], c[1], c[2]) < 0)
            return L->err->code;
    }
    yaml_node_t *n;
    if ((n = hs_ld_get(L, dk, "segments")) && read_lines(B, n, 1))
        return L->err->code;
    if ((n = hs_ld_get(L, dk, "polylines")) && read_lines(B, n, 0))
        return L->err->code;
    if ((n = hs_ld_get(L, dk, "circles")) && read_circles(B, n))
        return L->err->code;
    if ((n = hs_ld_get(L, dk, "ground"))) {
        if (hs_ld_expect(L, n, YAML_SEQUENCE_NODE, "'draw: ground'"))
            return L->err->code;
        FOR_ITEMS(n, it) {
            hs_draw_item *item = add_item(B, HS_DRAW_GROUND, 1, GROUND_RGB);
            if (!item || point_ref(B, NODE(L, *it), &item->pt[0]))
                return L->err->code;
        }
    }
    if ((n = hs_ld_get(L, dk, "dots"))) {      /* only these points as dots */
        if (hs_ld_expect(L, n, YAML_SEQUENCE_NODE, "'draw: dots'"))
            return L->err->code;
        memset(B->d->ptdot, 0, B->d->npt);
        FOR_ITEMS(n, it) {
            size_t i;
            if (point_ref(B, NODE(L, *it), &i))
                return L->err->code;
            B->d->ptdot[i] = 1;
        }
    }
    if ((n = hs_ld_get(L, dk, "colors"))) {    /* the dots' colours: {POINT: C} */
        if (hs_ld_expect(L, n, YAML_MAPPING_NODE, "'draw: colors'"))
            return L->err->code;
        FOR_PAIRS(n, p) {
            size_t i;
            if (point_ref(B, NODE(L, p->key), &i) ||
                read_colour(L, NODE(L, p->value), &B->d->ptrgb[i]))
                return L->err->code;
        }
    }
    return 0;
}

/* ---------- the default ---------- */

/* A name x<suffix>, y<suffix> or z<suffix>: 0, 1, 2; else -1. */
static int axis_of(const char *s)
{
    return s[0] == 'x' ? 0 : s[0] == 'y' ? 1 : s[0] == 'z' ? 2 : -1;
}

typedef struct cand {
    const char *suffix;        /* xN: N; a define P_x: P (named) */
    size_t slen;
    int named;                 /* the point of defines P_x, P_y[, P_z] */
    const hs_node *c[3];
    long q[3];                 /* the coordinate of each axis, or -1 (ambient) */
    const char *names[3];
} cand;

#define NOTE_MAX 6   /* points and segments the note names one by one */

static void append(char *buf, size_t cap, const char *fmt, const char *a, const char *b,
                   const char *c)
{
    size_t len = strlen(buf);
    if (len + 1 < cap)
        snprintf(buf + len, cap - len, fmt, a, b, c);
}

/* The anchor of constraint c on point p (a new point with a ground mark)
 * when d2G/dp2 = h0 I, h0 != 0 free of p: a = p - (dG/dp)/h0.  Its index;
 * -1 when G is not of that kind; -2 on an error (L->err). */
static long anchor(dbuild *B, size_t c, long p)
{
    loader *L = B->L;
    hs_model *m = L->m;
    const hs_node *G = m->G[c];
    size_t dim = B->expr[3 * p + 2] ? 3 : 2;
    int sym[3];
    for (size_t a = 0; a < dim; a++) {
        const hs_node *e = B->expr[3 * p + a];
        if (e->kind != HS_SYM)
            return -1;
        sym[a] = e->sym;
    }
    const hs_node *g[3], *h0 = NULL, *anc[3] = { NULL, NULL, NULL };
    int ok = 1;
    for (size_t a = 0; a < dim && ok; a++) {
        g[a] = hs_diff(m->dag, G, sym[a]);
        for (size_t b = 0; b < dim && ok; b++) {
            const hs_node *h = hs_diff(m->dag, g[a], sym[b]);
            if (a != b)
                ok = hs_is_num(h, 0);
            else if (!h0)
                ok = (h0 = h) && !hs_is_num(h, 0) && !hs_depends_on(h, sym[0]) &&
                     !hs_depends_on(h, sym[1]) && (dim < 3 || !hs_depends_on(h, sym[2]));
            else
                ok = h == h0;
        }
    }
    if (hs_ld_dag_check(L))
        return -2;
    if (!ok)
        return -1;
    for (size_t a = 0; a < dim; a++)
        anc[a] = hs_sub(m->dag, B->expr[3 * p + a], hs_div(m->dag, g[a], h0));
    char name[120];
    snprintf(name, sizeof name, "%s_anchor", m->cname[c]);
    long pa = add_point(B, name, anc[0], anc[1], anc[2]);
    hs_draw_item *gi = pa < 0 ? NULL : add_item(B, HS_DRAW_GROUND, 1, GROUND_RGB);
    if (!gi)
        return -2;
    gi->pt[0] = (size_t)pa;
    B->d->ptrgb[pa] = GROUND_RGB;
    return pa;
}

/* Whether point a of the samples x (ns states of np points) stands still. */
static int fixed_point(const double *x, size_t np, size_t a, size_t ns)
{
    for (size_t k = 1; k < ns; k++)
        for (size_t c = 0; c < 3; c++)
            if (x[(k * np + a) * 3 + c] != x[a * 3 + c])
                return 0;
    return 1;
}

/* An embedding states its constraints in its map: two of its points a
 * constant distance apart (at four sample states of t and q) are joined,
 * and a point at a constant distance from the origin is joined to it (the
 * point O, with a ground mark). */
static int embedded_segments(dbuild *B, const long *amb_point, size_t namb_point,
                             size_t *nseg)
{
    loader *L = B->L;
    hs_model *m = L->m;
    hs_drawing *d = B->d;
    enum { NS = 4 };
    size_t ns = (size_t)hs_dag_nsymbols(m->dag);
    double *in = xcalloc(ns, sizeof *in), *x = xcalloc(3 * NS * (namb_point + 1), sizeof *x);
    if (!in || !x) {
        free(in);
        free(x);
        return oom(L);
    }
    for (size_t j = 0; j < m->npar; j++)
        in[m->sym_p[j]] = m->pval[j];
    for (size_t k = 0; k < NS; k++) {
        in[m->sym_t] = 0.13 + 0.61 * (double)k;
        for (size_t i = 0; i < m->n; i++) {     /* scattered in (0.2, 1.2): no relation */
            double h = sin(12.9898 * (double)(k + 1) + 78.233 * (double)(i + 1)) * 43758.5453;
            in[m->sym_q[i]] = 0.2 + (h - floor(h));
        }
        for (size_t a = 0; a < namb_point; a++)
            for (size_t c = 0; c < 3; c++) {
                const hs_node *e = B->expr[3 * amb_point[a] + c];
                x[(k * namb_point + a) * 3 + c] = e ? hs_eval_tree(e, in) : 0;
            }
    }
    long origin = -1;
    int rc = 0;
    for (size_t a = 0; a < namb_point && !rc; a++)
        for (size_t b = a; b <= namb_point && !rc; b++) {   /* b == namb_point: the origin */
            double lo = HUGE_VAL, hi = -HUGE_VAL;
            for (size_t k = 0; k < NS; k++) {
                double d2 = 0;
                for (size_t c = 0; c < 3; c++) {
                    double u = x[(k * namb_point + a) * 3 + c] -
                               (b < namb_point ? x[(k * namb_point + b) * 3 + c] : 0);
                    d2 += u * u;
                }
                lo = fmin(lo, d2);
                hi = fmax(hi, d2);
            }
            if (b == a || !(lo > 0) || !isfinite(hi) || hi - lo > 1e-9 * hi)
                continue;
            long p1 = amb_point[a], p2 = b < namb_point ? amb_point[b] : -1;
            if (p2 < 0 && fixed_point(x, namb_point, a, NS))
                continue;           /* a fixed point: no bar from the origin to it */
            if (p2 >= 0 && has_segment(d, (size_t)p1, (size_t)p2))
                continue;
            if (p2 < 0) {
                if (origin < 0) {
                    const hs_node *z = scalar_zero(L);
                    origin = add_point(B, "O", z, z, d->dim == 3 ? z : NULL);
                    hs_draw_item *gi = origin < 0 ? NULL : add_item(B, HS_DRAW_GROUND, 1,
                                                                   GROUND_RGB);
                    if (!gi) {
                        rc = L->err->code;
                        break;
                    }
                    gi->pt[0] = (size_t)origin;
                    d->ptrgb[origin] = GROUND_RGB;
                }
                p2 = p1;
                p1 = origin;
            }
            hs_draw_item *it = add_item(B, HS_DRAW_LINE, 2, LINE_RGB);
            if (!it) {
                rc = L->err->code;
                break;
            }
            it->pt[0] = (size_t)p1;
            it->pt[1] = (size_t)p2;
            if (*nseg < NOTE_MAX) {
                append(d->note, sizeof d->note, "%s segment %s-%s", *nseg ? "," : ";",
                       d->ptname[p1], d->ptname[p2]);
                append(d->note, sizeof d->note, " (a constant distance)%s%s%s", "", "", "");
            } else if (*nseg == NOTE_MAX) {
                append(d->note, sizeof d->note, ", ...%s%s%s", "", "", "");
            }
            (*nseg)++;
        }
    free(in);
    free(x);
    return rc;
}

/* e reads only t, the coordinates and the parameters (an output that is
 * a position, not a velocity or a multiplier). */
static int of_t_q(const hs_model *m, const hs_node *e)
{
    size_t ns = (size_t)hs_dag_nsymbols(m->dag);
    unsigned char *used = xcalloc(ns, 1), *ok = xcalloc(ns, 1);
    int r = used && ok;
    if (r) {
        hs_symbols_used(e, used, ns);
        ok[m->sym_t] = 1;
        for (size_t i = 0; i < m->n; i++)
            ok[m->sym_q[i]] = 1;
        for (size_t j = 0; j < m->npar; j++)
            ok[m->sym_p[j]] = 1;
        for (size_t k = 0; k < ns && r; k++)
            r = !used[k] || ok[k];
    }
    free(used);
    free(ok);
    return r;
}

/* A body B (a define B_R11) draws as its points joined: the point B (its
 * centre) to each point B_P of defines B_P_x, B_P_y[, B_P_z]. */
static int body_segments(dbuild *B, const cand *cd, const long *pidx, size_t nc,
                         size_t *nseg)
{
    loader *L = B->L;
    hs_drawing *d = B->d;
    for (size_t b = 0; b < nc; b++) {
        if (!cd[b].named || pidx[b] < 0)
            continue;
        char r11[200];
        snprintf(r11, sizeof r11, "%.*s_R11", (int)cd[b].slen, cd[b].suffix);
        if (hs_ld_find_named(L, NAME_DEF, r11, strlen(r11)) < 0)
            continue;
        for (size_t j = 0; j < nc; j++) {
            if (!cd[j].named || pidx[j] < 0 || cd[j].slen <= cd[b].slen + 1 ||
                strncmp(cd[j].suffix, cd[b].suffix, cd[b].slen) != 0 ||
                cd[j].suffix[cd[b].slen] != '_')
                continue;
            if (has_segment(d, (size_t)pidx[b], (size_t)pidx[j]))
                continue;
            hs_draw_item *it = add_item(B, HS_DRAW_LINE, 2, LINE_RGB);
            if (!it)
                return L->err->code;
            it->pt[0] = (size_t)pidx[b];
            it->pt[1] = (size_t)pidx[j];
            if (*nseg < NOTE_MAX) {
                append(d->note, sizeof d->note, "%s segment %s-%s", *nseg ? "," : ";",
                       d->ptname[pidx[b]], d->ptname[pidx[j]]);
                append(d->note, sizeof d->note, " (a body)%s%s%s", "", "", "");
            } else if (*nseg == NOTE_MAX) {
                append(d->note, sizeof d->note, ", ...%s%s%s", "", "", "");
            }
            (*nseg)++;
        }
    }
    return 0;
}

/* The candidate points: names grouped by suffix (xN, yN, zN) or by
 * prefix (defines P_x, P_y, P_z) into cd[*nc]. */
static int group_names(dbuild *B, cand *cd, size_t ncand, size_t *pnc)
{
    /* group the names by suffix: coordinates first, then ambient names,
     * then outputs that are positions (expressions of t and q alone) */
    loader *L = B->L;
    hs_model *m = L->m;
    size_t nc = 0;
    int rc = 0;
    hs_strmap group[2] = { { NULL, 0, 0 }, { NULL, 0, 0 } };    /* suffix -> cd index: xN, P_x */
    for (size_t i = 0; i < ncand && !rc; i++) {
        int amb = i >= m->n;
        int def = i >= m->n + m->namb + m->nout;
        int out = i >= m->n + m->namb && !def;
        size_t o = out || def ? i - m->n - m->namb : 0, df = def ? o - m->nout : 0;
        const char *s = def ? L->def[df].name : out ? m->outname[o]
                      : amb ? m->ambname[i - m->n] : m->qname[i];
        size_t len = strlen(s);
        /* a define P_x, P_y, P_z (named points and bodies write them) */
        int ax = !def ? axis_of(s) : len > 2 && s[len - 2] == '_' ? axis_of(s + len - 1) : -1;
        const hs_node *e = NULL;
        if (ax >= 0 && def) {
            if (hs_ld_settle(L, NAME_DEF, df) || !L->def[df].expr) {
                rc = L->err->code ? L->err->code : oom(L);
                break;
            }
            e = L->def[df].expr;
        }
        if (ax < 0 || (out && !of_t_q(m, m->out[o])) || (def && !of_t_q(m, e)))
            continue;
        const char *suf = def ? s : s + 1;
        size_t slen = def ? len - 2 : len - 1;
        long old;                        /* the suffix's group: one lookup, not nc */
        int put = hs_strmap_put(&group[def != 0], suf, slen, (long)nc, &old);
        if (put < 0) {
            rc = oom(L);
            break;
        }
        size_t j = put ? (size_t)old : nc;
        if (j == nc) {
            cd[nc] = (cand){ .suffix = suf, .slen = slen, .named = def, .q = { -1, -1, -1 } };
            nc++;
        }
        if (cd[j].c[ax])
            continue;
        cd[j].c[ax] = def ? e : out ? m->out[o] : amb ? m->amb[i - m->n]
                    : hs_sym(m->dag, m->sym_q[i]);
        cd[j].q[ax] = amb ? -1 : (long)i;
        cd[j].names[ax] = s;
    }
    hs_strmap_free(&group[0]);
    hs_strmap_free(&group[1]);
    *pnc = nc;
    return rc;
}

static int infer(dbuild *B, yaml_node_t *root)
{
    loader *L = B->L;
    hs_model *m = L->m;
    hs_drawing *d = B->d;
    size_t ncand = m->n + m->namb + m->nout + L->ndef;
    cand *cd = xcalloc(ncand, sizeof *cd);
    long *qpoint = xcalloc(m->n, sizeof *qpoint);   /* point of coordinate i, or -1 */
    long *pidx = xcalloc(ncand, sizeof *pidx);      /* cand -> point index */
    long *ambp = xcalloc(ncand, sizeof *ambp);      /* the points of ambient names */
    size_t nambp = 0;
    if (!cd || !qpoint || !pidx || !ambp) {
        free(cd), free(qpoint), free(pidx), free(ambp);
        return oom(L);
    }
    size_t nc = 0;
    for (size_t i = 0; i < m->n; i++)
        qpoint[i] = -1;
    int rc = group_names(B, cd, ncand, &nc);
    char *note = d->note;
    size_t cap = sizeof d->note;
    snprintf(note, cap, "no 'draw' in the model: drawing");
    size_t npoints = 0;
    for (size_t j = 0; j < nc && !rc; j++) {
        pidx[j] = -1;
        if (!cd[j].c[0] || !cd[j].c[1])
            continue;
        char name[80];
        snprintf(name, sizeof name, "%s%.*s", cd[j].named ? "" : "P", (int)cd[j].slen,
                 cd[j].suffix);
        long p = add_point(B, name, cd[j].c[0], cd[j].c[1], cd[j].c[2]);
        if (p < 0) {
            rc = L->err->code;
            break;
        }
        pidx[j] = p;
        if (cd[j].q[0] < 0 && cd[j].q[1] < 0 && cd[j].q[2] < 0)
            ambp[nambp++] = p;
        for (int a = 0; a < 3; a++)
            if (cd[j].q[a] >= 0)
                qpoint[cd[j].q[a]] = p;
        char coords[220];
        snprintf(coords, sizeof coords, "%s, %s%s%s", cd[j].names[0], cd[j].names[1],
                 cd[j].names[2] ? ", " : "", cd[j].names[2] ? cd[j].names[2] : "");
        if (npoints < NOTE_MAX)
            append(note, cap, "%s point %s (%s)", npoints ? "," : "", name, coords);
        else if (npoints == NOTE_MAX)
            append(note, cap, ", ...%s%s%s", "", "", "");
        npoints++;
    }
    if (!rc && !npoints) {
        yaml_node_t *cn = hs_ld_get_key(L, root, "coordinates");
        hs_ytree_error(L->y, &d->none, cn ? cn : root, "the model has no 'draw' and no "
                       "coordinates (or ambient names) xN, yN[, zN] to draw: add a 'draw' "
                       "section (holosim-model(5), DRAW)");
        d->none.code = HS_EXIT_MODEL;
        note[0] = '\0';
    }
    /* the constraints: segments between points, and to anchors; the
     * coordinates each one uses from its symbols (not k x n tests) */
    size_t nseg = 0, nsym = (size_t)hs_dag_nsymbols(m->dag);
    long *qof = m->k && npoints ? xcalloc(nsym + m->n, sizeof *qof) : NULL;
    long *used = qof ? qof + nsym : NULL;    /* [n] the coordinates of one constraint */
    if (m->k && npoints && !qof)
        rc = oom(L);
    for (size_t s = 0; qof && s < nsym; s++)
        qof[s] = -1;
    for (size_t i = 0; qof && i < m->n; i++)
        qof[m->sym_q[i]] = (long)i;
    for (size_t c = 0; c < m->k && !rc && npoints; c++) {
        const hs_node *G = m->G[c];
        long p1 = -1, p2 = -1;
        int other = 0;
        size_t ns, nu = 0;
        const int32_t *sy = hs_node_symbols(G, &ns);
        for (size_t z = 0; z < ns; z++)
            if ((size_t)sy[z] < nsym && qof[sy[z]] >= 0)
                used[nu++] = qof[sy[z]];
        qsort(used, nu, sizeof *used, long_cmp);     /* in coordinate order */
        for (size_t u = 0; u < nu && !other; u++) {
            size_t i = (size_t)used[u];
            long p = qpoint[i];
            if (p < 0)
                other = 1;
            else if (p1 < 0 || p1 == p)
                p1 = p;
            else if (p2 < 0 || p2 == p)
                p2 = p;
            else
                other = 1;
        }
        if (other || p1 < 0)
            continue;
        if (p2 < 0) {                  /* one point: a segment to its anchor, if any */
            long pa = anchor(B, c, p1);
            if (pa == -2) {
                rc = L->err->code;
                break;
            }
            if (pa < 0)
                continue;
            p2 = p1;
            p1 = pa;
        }
        hs_draw_item *it = add_item(B, HS_DRAW_LINE, 2, LINE_RGB);
        if (!it) {
            rc = L->err->code;
            break;
        }
        it->pt[0] = (size_t)p1;
        it->pt[1] = (size_t)p2;
        if (nseg < NOTE_MAX) {
            append(note, cap, "%s segment %s-%s", nseg ? "," : ";", d->ptname[p1],
                   d->ptname[p2]);
            append(note, cap, " (%s)", m->cname[c], "", "");
        } else if (nseg == NOTE_MAX) {
            append(note, cap, ", ...%s%s%s", "", "", "");
        }
        nseg++;
    }
    if (!rc)
        rc = body_segments(B, cd, pidx, nc, &nseg);
    if (!rc && nambp)
        rc = embedded_segments(B, ambp, nambp, &nseg);
    if (!rc && (npoints > NOTE_MAX || nseg > NOTE_MAX)) {
        char counts[80];
        snprintf(counts, sizeof counts, " (%zu points, %zu segments)", npoints, nseg);
        append(note, cap, "%s%s%s", counts, "", "");
    }
    if (npoints && !rc)
        append(note, cap, "; add a 'draw' section to choose (holosim-model(5), DRAW)%s%s%s",
               "", "", "");
    free(cd);
    free(qpoint);
    free(qof);
    free(pidx);
    free(ambp);
    return rc;
}

int hs_ld_read_draw(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    hs_drawing *d = m->draw = xcalloc(1, sizeof *m->draw);
    if (!d)
        return oom(L);
    *d = (hs_drawing){ .dim = 2 };
    hs_error_init(&d->none);
    dbuild B = { .L = L, .d = d };
    yaml_node_t *dk = hs_ld_get(L, root, "draw");
    int rc;
    if (dk)
        rc = read_draw_key(&B, dk);
    else {
        d->inferred = 1;
        rc = infer(&B, root);
    }
    if (!rc)
        rc = finish(&B);
    free(B.expr);
    free(B.rad);
    return rc;
}

void hs_ld_free_draw(hs_model *m)
{
    hs_drawing *d = m->draw;
    if (!d)
        return;
    for (size_t i = 0; i < d->npt; i++)
        free(d->ptname[i]);
    free(d->ptname);
    free(d->ptrgb);
    free(d->ptdot);
    for (size_t i = 0; i < d->nitem; i++)
        free(d->item[i].pt);
    free(d->item);
    hs_prog_free(d->prog);
    free(m->draw_expr);
    free(d);
    m->draw = NULL;
}

void hs_draw_eval(const hs_model *m, double t, const double *q, double *in, double *regs,
                  double *out)
{
    in[m->sym_t] = t;
    for (size_t i = 0; i < m->n; i++)
        in[m->sym_q[i]] = q[i];
    if (m->ntab)
        hs_model_tables_at(m, t, in, NULL);
    hs_prog_eval(m->draw->prog, in, regs, out);
}

int hs_draw_reads(const hs_model *m, size_t i)
{
    for (size_t j = 0; j < m->draw->nout; j++)
        if (hs_depends_on(m->draw_expr[j], m->sym_q[i]))
            return 1;
    return 0;
}
