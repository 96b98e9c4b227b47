/* The drawing of a model (loader.h; holosim-model(5), DRAW): the `draw`
 * key read into points (expressions of t and q, 2D or 3D) and the lines,
 * circles and ground marks between them, or, without the key, the default
 * of drawinfer.c.  Every point, radius and anchor is compiled into one
 * program (hs_drawing.prog) of t, q and the parameters, evaluated by the
 * caller on the rows it draws (hs_draw_eval). */
#include "drawing.h"

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
        return hs_dw_oom(L);
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
    return d->prog ? 0 : L->err->code ? L->err->code : hs_dw_oom(L);
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
    long i = hs_dw_find_point(d, s);
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
        hs_draw_item *item = hs_dw_add_item(B, HS_DRAW_LINE, np, rgb);
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
        hs_draw_item *item = hs_dw_add_item(B, HS_DRAW_CIRCLE, 1, rgb);
        if (!item || point_ref(B, k, &item->pt[0]))
            return L->err->code;
        const hs_node *e = hs_ld_parse(L, r, SCOPE_MODEL, "a radius");
        if (!e || hs_ld_forbid_velocity(L, e, r, "a radius"))
            return L->err->code;
        if (hs_dw_grow((void **)&B->rad, &B->radcap, B->nrad + 1, sizeof *B->rad))
            return hs_dw_oom(L);
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
        if (hs_dw_add_point(B, hs_ytree_str(k), c[0], c[1], c[2]) < 0)
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
            hs_draw_item *item = hs_dw_add_item(B, HS_DRAW_GROUND, 1, GROUND_RGB);
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

int hs_ld_read_draw(loader *L, yaml_node_t *root)
{
    hs_model *m = L->m;
    hs_drawing *d = m->draw = xcalloc(1, sizeof *m->draw);
    if (!d)
        return hs_dw_oom(L);
    *d = (hs_drawing){ .dim = 2 };
    hs_error_init(&d->none);
    dbuild B = { .L = L, .d = d };
    yaml_node_t *dk = hs_ld_get(L, root, "draw");
    int rc;
    if (dk)
        rc = read_draw_key(&B, dk);
    else {
        d->inferred = 1;
        rc = hs_dw_infer(&B, root);
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
