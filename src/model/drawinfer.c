/* The default drawing of a model without a `draw` key (drawing.h;
 * holosim-model(5), DRAW), inferred from the names:
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
 *     distance apart, or from the origin, are joined (embedded_segments);
 *   - a body's points are joined to its centre, and a spring of the model
 *     language is a line of its own colour between its ends.
 * A pair of points is joined once; a point that stands still gets no bar
 * from the origin. */
#include "drawing.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

#include "../util/map.h"

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

/* A line between points a and b in colour rgb, said in the note as
 * ", WORD A-B (WHY)" (the first NOTE_MAX; then ", ..."): 0, or the exit
 * code (out of memory). */
static int add_line(dbuild *B, size_t a, size_t b, unsigned rgb, const char *word,
                    const char *why, size_t *nseg)
{
    hs_drawing *d = B->d;
    hs_draw_item *it = hs_dw_add_item(B, HS_DRAW_LINE, 2, rgb);
    if (!it)
        return B->L->err->code;
    it->pt[0] = a;
    it->pt[1] = b;
    if (*nseg < NOTE_MAX) {
        append(d->note, sizeof d->note, "%s %s %s", *nseg ? "," : ";", word, d->ptname[a]);
        append(d->note, sizeof d->note, "-%s (%s)%s", d->ptname[b], why, "");
    } else if (*nseg == NOTE_MAX) {
        append(d->note, sizeof d->note, ", ...%s%s%s", "", "", "");
    }
    (*nseg)++;
    return 0;
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
    long pa = hs_dw_add_point(B, name, anc[0], anc[1], anc[2]);
    hs_draw_item *gi = pa < 0 ? NULL : hs_dw_add_item(B, HS_DRAW_GROUND, 1, GROUND_RGB);
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
        return hs_dw_oom(L);
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
            if (p2 >= 0 && hs_dw_has_segment(d, (size_t)p1, (size_t)p2))
                continue;
            if (p2 < 0) {
                if (origin < 0) {
                    const hs_node *z = scalar_zero(L);
                    origin = hs_dw_add_point(B, "O", z, z, d->dim == 3 ? z : NULL);
                    hs_draw_item *gi = origin < 0 ? NULL : hs_dw_add_item(B, HS_DRAW_GROUND, 1,
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
            if ((rc = add_line(B, (size_t)p1, (size_t)p2, LINE_RGB, "segment",
                               "a constant distance", nseg)))
                break;
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
            if (hs_dw_has_segment(d, (size_t)pidx[b], (size_t)pidx[j]))
                continue;
            if (add_line(B, (size_t)pidx[b], (size_t)pidx[j], LINE_RGB, "segment", "a body",
                         nseg))
                return L->err->code;
        }
    }
    return 0;
}

/* One end of a spring: its named point when the drawing has it, else a
 * point S_a or S_b at the end's coordinates (a ground mark where they are
 * constant: a fixed anchor).  The point's index, or -1 with L->err set. */
static long spring_end(dbuild *B, const hs_lang_spring *sp, int e)
{
    loader *L = B->L;
    hs_model *m = L->m;
    long p = sp->end[e] ? hs_dw_find_point(B->d, sp->end[e]) : -1;
    if (p >= 0)
        return p;
    const hs_node *c[3] = { NULL, NULL, NULL };
    int fixed = 1;
    size_t ns = (size_t)hs_dag_nsymbols(m->dag);
    unsigned char *used = xcalloc(ns, 1);
    if (!used)
        return hs_dw_oom(L), -1;
    for (int d = 0; d < sp->dim; d++) {
        hs_error pe;
        hs_error_init(&pe);
        if (!(c[d] = hs_ld_parse_text(L, sp->at[e][d], SCOPE_MODEL, &pe))) {
            if (!L->err->code)
                hs_error_set(L->err, HS_EXIT_MODEL, "spring '%s': %s", sp->name, pe.msg);
            free(used);
            return -1;
        }
        hs_symbols_used(c[d], used, ns);
    }
    for (size_t k = 0; k < ns && fixed; k++) {
        int param = 0;
        for (size_t j = 0; j < m->npar && !param; j++)
            param = m->sym_p[j] == (int)k;
        fixed = !used[k] || param;
    }
    free(used);
    char name[160];
    snprintf(name, sizeof name, "%s_%c", sp->name, e ? 'b' : 'a');
    p = hs_dw_add_point(B, name, c[0], c[1], c[2]);
    if (p >= 0 && fixed) {
        hs_draw_item *gi = hs_dw_add_item(B, HS_DRAW_GROUND, 1, GROUND_RGB);
        if (!gi)
            return -1;
        gi->pt[0] = (size_t)p;
        B->d->ptrgb[p] = GROUND_RGB;
    }
    return p;
}

/* The springs of the model language: a line of their colour between the
 * ends (holosim-model(5), SPRINGS). */
static int spring_segments(dbuild *B, size_t *nseg)
{
    loader *L = B->L;
    const hs_lang_info *info = &L->si->lang;
    for (size_t i = 0; i < info->nspring; i++) {
        const hs_lang_spring *sp = &info->spring[i];
        long a = spring_end(B, sp, 0), b = a < 0 ? -1 : spring_end(B, sp, 1);
        if (a < 0 || b < 0)
            return L->err->code ? L->err->code : hs_dw_oom(L);
        if (add_line(B, (size_t)a, (size_t)b, SPRING_RGB, "spring", sp->name, nseg))
            return L->err->code;
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
                rc = L->err->code ? L->err->code : hs_dw_oom(L);
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
            rc = hs_dw_oom(L);
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

int hs_dw_infer(dbuild *B, yaml_node_t *root)
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
        return hs_dw_oom(L);
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
        long p = hs_dw_add_point(B, name, cd[j].c[0], cd[j].c[1], cd[j].c[2]);
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
        rc = hs_dw_oom(L);
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
        qsort(used, nu, sizeof *used, hs_dw_long_cmp);     /* in coordinate order */
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
        if ((rc = add_line(B, (size_t)p1, (size_t)p2, LINE_RGB, "segment", m->cname[c],
                           &nseg)))
            break;
    }
    if (!rc)
        rc = body_segments(B, cd, pidx, nc, &nseg);
    if (!rc)
        rc = spring_segments(B, &nseg);
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
