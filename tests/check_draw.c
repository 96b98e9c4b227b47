/* The drawing of a model (src/model/draw.c): the default inferred from the
 * names and constraints (points, segments, anchors found from the
 * constraint's second derivative, a moving anchor, constraints that draw
 * nothing), a `draw` section's points evaluated against the same
 * expressions computed here by hand, and its errors with their positions. */
#include <check.h>

#include "check_main.h"
#include "physics_util.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"

static hs_model *load(const char *text, hs_error *err)
{
    hs_overrides ov;
    hs_overrides_init(&ov);
    hs_error_init(err);
    return hs_model_load_string("draw.yaml", text, &ov, err);
}

static long point(const hs_drawing *d, const char *name)
{
    for (size_t i = 0; i < d->npt; i++)
        if (strcmp(d->ptname[i], name) == 0)
            return (long)i;
    return -1;
}

/* the drawing's values at (t, q) */
static void eval(const hs_model *m, double t, const double *q, double *out)
{
    size_t nin = m->nin > hs_prog_nin(m->draw->prog) ? m->nin : hs_prog_nin(m->draw->prog);
    double *in = calloc(nin + 1, sizeof *in);
    double *regs = calloc(hs_prog_nregs(m->draw->prog) + 1, sizeof *regs);
    ck_assert_ptr_nonnull(in);
    ck_assert_ptr_nonnull(regs);
    hs_model_inputs(m, in);
    hs_draw_eval(m, t, q, in, regs, out);
    free(in);
    free(regs);
}

/* Two points on rods: P1 anchored at a moving support (0, A sin(w t)),
 * written with the square expanded; P2 on a rod to P1; z of neither. */
START_TEST(default_drawing)
{
    hs_error err;
    hs_model *m = load("parameters: {l: 1.5, A: 0.2, w: 3}\n"
                       "coordinates: [x1, y1, x2, y2, s]\n"
                       "mass: [1, 1, 1, 1, 1]\n"
                       "constraints:\n"
                       "  rod1: x1^2 + y1^2 - 2*y1*A*sin(w*t) + A^2*sin(w*t)^2 - l^2\n"
                       "  rod2: (x2 - x1)^2 + (y2 - y1)^2 - l^2\n"
                       "  rail: s - y2\n"
                       "  line: sqrt(x2^2 + y2^2) - 2*l\n"
                       "initial:\n"
                       "  q: {x1: l, y1: 0, x2: l, y2: -l, s: -l}\n"
                       "simulate: {t_end: 1}\n", &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    const hs_drawing *d = m->draw;
    ck_assert_int_eq(d->inferred, 1);
    ck_assert_int_eq(d->dim, 2);
    ck_assert_int_eq(d->none.code, 0);
    long p1 = point(d, "P1"), p2 = point(d, "P2"), a = point(d, "rod1_anchor");
    ck_assert(p1 >= 0 && p2 >= 0 && a >= 0);
    ck_assert_int_eq((int)d->npt, 3);          /* the sqrt form has no anchor */
    /* segments: anchor-P1 (rod1), P1-P2 (rod2); rail reads s: nothing */
    size_t nline = 0, nground = 0;
    for (size_t i = 0; i < d->nitem; i++) {
        const hs_draw_item *it = &d->item[i];
        if (it->kind == HS_DRAW_GROUND) {
            ck_assert_int_eq((int)it->pt[0], (int)a);
            nground++;
        } else {
            ck_assert_int_eq(it->kind, HS_DRAW_LINE);
            ck_assert_int_eq((int)it->npt, 2);
            ck_assert((it->pt[0] == (size_t)a && it->pt[1] == (size_t)p1) ||
                      (it->pt[0] == (size_t)p1 && it->pt[1] == (size_t)p2));
            nline++;
        }
    }
    ck_assert_int_eq((int)nline, 2);
    ck_assert_int_eq((int)nground, 1);
    ck_assert_ptr_nonnull(strstr(d->note, "segment rod1_anchor-P1 (rod1)"));
    /* the anchor moves with the support, wherever P1 is */
    double q[5] = { 0.3, -0.7, 1.1, -2.0, 0 }, out[6];
    for (double t = 0; t < 2; t += 0.37) {
        eval(m, t, q, out);
        ck_assert_double_eq_tol(out[2 * a], 0, 1e-14);
        ck_assert_double_eq_tol(out[2 * a + 1], 0.2 * sin(3 * t), 1e-14);
        ck_assert_double_eq(out[2 * p1], 0.3);
        ck_assert_double_eq(out[2 * p2 + 1], -2.0);
    }
    hs_model_free(m);
}
END_TEST

/* An embedding's ambient names x, y, z make a 3D point; a spherical
 * constraint on a Cartesian point anchors it at its centre. */
START_TEST(default_3d)
{
    hs_error err;
    hs_model *m = load("parameters: {R: 2}\n"
                       "coordinates: [x, y, z]\n"
                       "mass: [1, 1, 1]\n"
                       "constraints: {ball: (x - 1)^2 + (y + 2)^2 + (z - 3)^2 - R^2}\n"
                       "initial: {q: {x: 3, y: -2, z: 3}}\n"
                       "simulate: {t_end: 1}\n", &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    ck_assert_int_eq(m->draw->dim, 3);
    long a = point(m->draw, "ball_anchor");
    ck_assert(a >= 0);
    double q[3] = { 0.5, 0.25, -4 }, out[6];
    eval(m, 0, q, out);
    ck_assert_double_eq_tol(out[3 * a], 1, 1e-14);
    ck_assert_double_eq_tol(out[3 * a + 1], -2, 1e-14);
    ck_assert_double_eq_tol(out[3 * a + 2], 3, 1e-14);
    hs_model_free(m);
    m = load("parameters: {w: 2}\n"
             "coordinates: [r]\n"
             "embedding: {x: r*cos(w*t), y: r*sin(w*t), z: r}\n"
             "mass: [1, 1, 1]\n"
             "initial: {q: {r: 1}}\n"
             "simulate: {t_end: 1}\n", &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    ck_assert_int_eq(m->draw->dim, 3);
    ck_assert_int_eq((int)m->draw->npt, 1);
    double r = 1.5;
    eval(m, 0.4, &r, out);
    ck_assert_double_eq_tol(out[0], 1.5 * cos(0.8), 1e-15);
    ck_assert_double_eq_tol(out[1], 1.5 * sin(0.8), 1e-15);
    ck_assert_double_eq_tol(out[2], 1.5, 1e-15);
    hs_model_free(m);
}
END_TEST

/* A double pendulum as an embedding: its links are constant distances
 * (P1 from the origin, P2 from P1); P2 from the origin is not. */
START_TEST(default_embedding)
{
    hs_error err;
    hs_model *m = load("parameters: {l1: 1, l2: 1.5}\n"
                       "coordinates: [a, b]\n"
                       "embedding:\n"
                       "  x1: l1*sin(a)\n"
                       "  y1: -l1*cos(a)\n"
                       "  x2: l1*sin(a) + l2*sin(b)\n"
                       "  y2: -l1*cos(a) - l2*cos(b)\n"
                       "mass: [1, 1, 1, 1]\n"
                       "initial: {q: {a: 1, b: 1.5}}\n"
                       "simulate: {t_end: 1}\n", &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    const hs_drawing *d = m->draw;
    long p1 = point(d, "P1"), p2 = point(d, "P2"), o = point(d, "O");
    ck_assert(p1 >= 0 && p2 >= 0 && o >= 0);
    int joined[3][3] = { { 0 } };
    size_t nline = 0;
    for (size_t i = 0; i < d->nitem; i++)
        if (d->item[i].kind == HS_DRAW_LINE) {
            joined[d->item[i].pt[0]][d->item[i].pt[1]] = joined[d->item[i].pt[1]][d->item[i].pt[0]] = 1;
            nline++;
        }
    ck_assert_int_eq((int)nline, 2);
    ck_assert_int_eq(joined[p1][p2], 1);
    ck_assert_int_eq(joined[o][p1], 1);
    ck_assert_int_eq(joined[o][p2], 0);
    double q[2] = { 0.4, -1.1 }, out[6];
    eval(m, 0, q, out);
    ck_assert_double_eq_tol(out[2 * p2], sin(0.4) + 1.5 * sin(-1.1), 1e-15);
    ck_assert_double_eq(out[2 * o], 0);
    hs_model_free(m);
}
END_TEST

/* Outputs that are positions draw a model in angles; an output that reads
 * a velocity is not a point. */
START_TEST(default_outputs)
{
    hs_error err;
    hs_model *m = load("parameters: {l: 2}\n"
                       "coordinates: [th]\n"
                       "kinetic: 0.5*l^2*th'^2\n"
                       "initial: {q: {th: 0.3}}\n"
                       "simulate: {t_end: 1}\n"
                       "outputs: {x: l*sin(th), y: -l*cos(th), x2: th', y2: 1}\n", &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    const hs_drawing *d = m->draw;
    ck_assert_int_eq((int)d->npt, 2);           /* P and O */
    long p = point(d, "P"), o = point(d, "O");
    ck_assert(p >= 0 && o >= 0);
    ck_assert_int_eq(point(d, "P2"), -1);
    double th = 1.1, out[4];
    eval(m, 0, &th, out);
    ck_assert_double_eq_tol(out[2 * p], 2 * sin(1.1), 1e-15);
    ck_assert_double_eq_tol(out[2 * p + 1], -2 * cos(1.1), 1e-15);
    hs_model_free(m);
}
END_TEST

/* A draw section: points of angles and parameters, radii, colours, dots. */
START_TEST(draw_section)
{
    hs_error err;
    hs_model *m = load("parameters: {l: 2, g: 9.81}\n"
                       "coordinates: [th]\n"
                       "define: {px: l*sin(th)}\n"
                       "kinetic: 0.5*l^2*th'^2\n"
                       "potential: -g*l*cos(th)\n"
                       "initial: {q: {th: 0.3}}\n"
                       "simulate: {t_end: 1}\n"
                       "draw:\n"
                       "  points: {O: [0, 0], P: [px, -l*cos(th)], Q: [t, 0, 1]}\n"
                       "  segments: [[O, P], {points: [P, Q], color: '#102030'}]\n"
                       "  polylines: [[O, P, Q, O]]\n"
                       "  circles: {P: {radius: l/10, color: blue}, Q: 0.5}\n"
                       "  ground: [O]\n"
                       "  dots: [P]\n"
                       "  colors: {P: green}\n", &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    const hs_drawing *d = m->draw;
    ck_assert_int_eq(d->inferred, 0);
    ck_assert_int_eq(d->dim, 3);
    ck_assert_int_eq((int)d->npt, 3);
    ck_assert_int_eq((int)d->nitem, 6);
    ck_assert_uint_eq(d->item[1].rgb, 0x102030);
    ck_assert_uint_eq(d->ptrgb[1], 0x2ca02c);
    ck_assert_int_eq(d->ptdot[0], 0);
    ck_assert_int_eq(d->ptdot[1], 1);
    ck_assert_int_eq((int)d->nout, 11);
    double th = 0.7, out[11];
    eval(m, 0.25, &th, out);
    ck_assert_double_eq_tol(out[3], 2 * sin(0.7), 1e-15);
    ck_assert_double_eq_tol(out[4], -2 * cos(0.7), 1e-15);
    ck_assert_double_eq(out[5], 0);
    ck_assert_double_eq(out[6], 0.25);
    ck_assert_double_eq(out[8], 1);
    ck_assert_double_eq_tol(out[d->item[3].rout], 0.2, 1e-15);
    ck_assert_double_eq(out[d->item[4].rout], 0.5);
    hs_model_free(m);
}
END_TEST

/* Bad draw sections: message, line, column, exit 2. */
static const struct {
    const char *draw, *msg;
    int line, col;
} bad[] = {
    { "draw:\n  points: {O: [0, 0]}\n  segments: [[O, Q]]\n",
      "unknown point 'Q' in 'draw' (did you mean 'O'?)", 9, 18 },
    { "draw:\n  points: {O: [0, 0, 1, 2]}\n", "a point is [x, y] or [x, y, z], found 4", 8, 15 },
    { "draw:\n  points: {O: [x', 0]}\n", "velocit", 8, 0 },
    { "draw:\n  points: {O: [0, 0]}\n  circles: {O: {radius: 1, color: bleu}}\n",
      "unknown colour 'bleu' (did you mean 'blue'?)", 9, 35 },
    { "draw:\n  points: {O: [0, 0]}\n  polylines: [[O]]\n",
      "a polyline joins two points or more, found 1", 9, 15 },
    { "draw:\n  points: {O: [0, 0]}\n  segment: [[O, O]]\n",
      "unknown key 'segment' in 'draw' (did you mean 'segments'?)", 9, 3 },
    { "draw:\n  segments: [[O, O]]\n", "'draw' needs 'points'", 8, 3 },
    { "draw:\n  points: {O: [0, zz]}\n", "unknown name 'zz'", 8, 19 },
};

START_TEST(draw_errors)
{
    const char *base = "coordinates: [x, y]\n"
                       "mass: [1, 1]\n"
                       "constraints: {rod: x^2 + y^2 - 1}\n"
                       "initial: {q: {x: 1, y: 0}}\n"
                       "simulate: {t_end: 1}\n"
                       "name: bad draw\n";
    char text[1024];
    snprintf(text, sizeof text, "%s%s", base, bad[_i].draw);
    hs_error err;
    hs_model *m = load(text, &err);
    ck_assert_msg(m == NULL, "case %d loaded", _i);
    ck_assert_int_eq(err.code, HS_EXIT_MODEL);
    ck_assert_msg(strstr(err.msg, bad[_i].msg) != NULL, "case %d: %s", _i, err.msg);
    ck_assert_int_eq(err.line, bad[_i].line);
    if (bad[_i].col)
        ck_assert_int_eq(err.column, bad[_i].col);
}
END_TEST

/* Nothing to draw: the model loads (every other command works), and the
 * drawing says why, at the coordinates. */
START_TEST(nothing_to_draw)
{
    hs_error err;
    hs_model *m = load("coordinates: [th]\n"
                       "kinetic: 0.5*th'^2\n"
                       "initial: {q: {th: 0}}\n"
                       "simulate: {t_end: 1}\n", &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    ck_assert_int_eq(m->draw->none.code, HS_EXIT_MODEL);
    ck_assert_int_eq(m->draw->none.line, 1);
    ck_assert_ptr_nonnull(strstr(m->draw->none.msg, "no 'draw' and no coordinates"));
    hs_model_free(m);
}
END_TEST

/* A family in the drawing: the points P[i=0..N] of a chain whose size is a
 * parameter, one polyline through all of them; at --set N=5 six points
 * where the coordinates put them, the polyline through them in order. */
START_TEST(draw_family)
{
    static const char text[] =
        "parameters: {N: 3, l: 1}\n"
        "coordinates:\n  - x[i=1..N], y[i]\n"
        "define:\n  x[0]: 0\n  y[0]: 0\n"
        "mass:\n  x[i=1..N]: 1\n  y[i=1..N]: 1\n"
        "potential: sum(i=1..N, 9.81*y[i])\n"
        "constraints:\n  link[i=1..N]: (x[i] - x[i-1])^2 + (y[i] - y[i-1])^2 - l^2\n"
        "initial:\n  q:\n    x[i=1..N]: i*l\n    y[i=1..N]: 0\n"
        "draw:\n"
        "  points:\n    P[i=0..N]: [\"x[i]\", \"y[i]\"]\n"
        "  polylines: [[\"P[i=0..N]\"]]\n"
        "  ground: [\"P[0]\"]\n";
    const char *name[] = { "N" };
    double val[] = { 5 };
    hs_overrides ov;
    hs_overrides_init(&ov);
    ov.nset = 1;
    ov.set_name = name;
    ov.set_value = val;
    hs_error err;
    hs_error_init(&err);
    hs_model *m = hs_model_load_string("draw.yaml", text, &ov, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    const hs_drawing *d = m->draw;
    ck_assert_int_eq(d->inferred, 0);
    ck_assert_int_eq((int)d->npt, 6);
    long P[6];
    for (int i = 0; i < 6; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "P_%d", i);
        P[i] = point(d, nm);
        ck_assert_msg(P[i] >= 0, "no point %s", nm);
    }
    size_t nline = 0, nground = 0;
    for (size_t j = 0; j < d->nitem; j++) {
        const hs_draw_item *it = &d->item[j];
        if (it->kind == HS_DRAW_LINE) {
            nline++;
            ck_assert_int_eq((int)it->npt, 6);
            for (int i = 0; i < 6; i++)
                ck_assert_int_eq((int)it->pt[i], (int)P[i]);
        } else if (it->kind == HS_DRAW_GROUND) {
            nground++;
            ck_assert_int_eq((int)it->pt[0], (int)P[0]);
        }
    }
    ck_assert_int_eq((int)nline, 1);
    ck_assert_int_eq((int)nground, 1);
    double q[10], out[64];
    for (int i = 0; i < 10; i++)
        q[i] = 0.1 * (i + 1);
    eval(m, 0, q, out);
    ck_assert_double_eq(out[2 * P[0]], 0);
    for (int i = 1; i <= 5; i++) {
        /* the item interleaves the families: x_1, y_1, x_2, ... */
        ck_assert_double_eq(out[2 * P[i]], q[2 * (i - 1)]);
        ck_assert_double_eq(out[2 * P[i] + 1], q[2 * (i - 1) + 1]);
    }
    hs_model_free(m);
}
END_TEST


/* The inferred drawing of bodies joined by springs (the flyball governor
 * without its draw key): each pair of points joined once (a body and a
 * constant distance both find the spindle and its anchor), and no bar from
 * the origin to the spindle's fixed centre or anchor. */
START_TEST(inferred_no_duplicates)
{
    FILE *f = fopen(PU_MODEL("flyball_governor.yaml"), "r");
    ck_assert_ptr_nonnull(f);
    static char text[8192];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    char *cut = strstr(text, "\ndraw:");
    ck_assert_ptr_nonnull(cut);
    char *next = cut + 1;           /* the draw key to the next top-level key */
    while ((next = strchr(next, '\n')) && (next[1] == ' ' || next[1] == '#'))
        next++;
    if (next)
        memmove(cut, next, strlen(next) + 1);
    else
        cut[1] = '\0';
    hs_error err;
    hs_model *m = load(text, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    const hs_drawing *d = m->draw;
    ck_assert_int_eq(d->inferred, 1);
    ck_assert_int_eq((int)point(d, "O"), -1);
    size_t nline = 0;
    for (size_t i = 0; i < d->nitem; i++) {
        const hs_draw_item *a = &d->item[i];
        if (a->kind != HS_DRAW_LINE)
            continue;
        nline++;
        for (size_t j = i + 1; j < d->nitem; j++) {
            const hs_draw_item *b = &d->item[j];
            ck_assert(!(b->kind == HS_DRAW_LINE && b->npt == 2 && a->npt == 2 &&
                        ((a->pt[0] == b->pt[0] && a->pt[1] == b->pt[1]) ||
                         (a->pt[0] == b->pt[1] && a->pt[1] == b->pt[0]))));
        }
    }
    ck_assert_int_eq((int)nline, 5);       /* the spindle and each ball to its point, two springs */
    hs_model_free(m);
}
END_TEST


/* A spring of the language in the inferred drawing: a line of the springs'
 * colour from a fixed anchor (a ground mark there, at its coordinates) to
 * the named point it pulls. */
START_TEST(inferred_spring)
{
    static const char text[] =
        "parameters: {k: 10, a: 2}\n"
        "coordinates: [u, v]\n"
        "mass: [1, 1]\n"
        "points:\n  B: [u, v]\n"
        "springs:\n  s: {between: [[0, a], B], k: k, length: 1}\n"
        "initial: {q: {u: 1, v: 0}}\n";
    hs_error err;
    hs_model *m = load(text, &err);
    ck_assert_msg(m != NULL, "%s", err.msg);
    const hs_drawing *d = m->draw;
    long b = point(d, "B"), sa = point(d, "s_a");
    ck_assert(b >= 0 && sa >= 0);
    int nspring = 0, ground = 0;
    for (size_t i = 0; i < d->nitem; i++) {
        const hs_draw_item *it = &d->item[i];
        if (it->kind == HS_DRAW_LINE && it->rgb == 0x8c6d31) {
            nspring++;
            ck_assert_int_eq((int)it->pt[0], (int)sa);
            ck_assert_int_eq((int)it->pt[1], (int)b);
        }
        if (it->kind == HS_DRAW_GROUND && it->pt[0] == (size_t)sa)
            ground = 1;
    }
    ck_assert_int_eq(nspring, 1);
    ck_assert_int_eq(ground, 1);
    ck_assert_ptr_nonnull(strstr(d->note, "spring s_a-B (s)"));
    double q[2] = { 0.3, -0.4 }, out[16];
    eval(m, 0.7, q, out);
    ck_assert_double_eq(out[2 * sa], 0);
    ck_assert_double_eq(out[2 * sa + 1], 2);
    ck_assert_double_eq(out[2 * b], 0.3);
    ck_assert_double_eq(out[2 * b + 1], -0.4);
    hs_model_free(m);
}
END_TEST


static Suite *draw_suite(void)
{
    Suite *s = suite_create("draw");
    TCase *tc = tcase_create("draw");
    tcase_add_test(tc, default_drawing);
    tcase_add_test(tc, default_3d);
    tcase_add_test(tc, default_embedding);
    tcase_add_test(tc, default_outputs);
    tcase_add_test(tc, draw_section);
    tcase_add_test(tc, draw_family);
    tcase_add_test(tc, inferred_no_duplicates);
    tcase_add_test(tc, inferred_spring);
    tcase_add_loop_test(tc, draw_errors, 0, (int)(sizeof bad / sizeof *bad));
    tcase_add_test(tc, nothing_to_draw);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(draw_suite)
