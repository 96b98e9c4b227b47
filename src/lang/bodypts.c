/* Bodies as the points of an embedding (internal.h: hs_bd_points_*).
 *
 * A rigid body's kinetic energy is that of points: 1/2 m |c'|^2 for its
 * centre c, and for its rotation R (body to world, w the body-frame
 * angular velocity, I the inertia about c)
 *
 *     1/2 w.I w = 1/2 sum_k J_k |(R e_k)'|^2,   J_k = tr(I)/2 - I_k,
 *
 * for principal moments I_k (|(R e_k)'|^2 = |w|^2 - w_k^2): the columns
 * of R as ambient points with masses J_k >= 0 (the triangle inequality of
 * the moments).  A body turning about one fixed axis a has w = phi' e_a
 * and 1/2 I_aa phi'^2: its angle phi is the ambient point, mass I_aa.
 *
 * A model of bodies alone (no kinetic energy, forces or dissipation of
 * its own, at least HS_LANG_CHAIN_MIN_N coordinates) is so written as an
 * embedding: the ambient names B__x, B__y, B__z are the position's
 * texts, B__phi the angle or B__Rrk the rotation's defines.
 * When the bodies hang on one another through defines (a chain or tree),
 * the model layer's structured path (model/chain.c) solves it at O(N)
 * where the Lagrangian form's metric costs N^3.  The motion is the same:
 * T, and so the Lagrangian, is the same function of t, q and q'. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The J_k of principal moments that are constants of the parameters, all
 * >= 0; 0 when a moment is not a known constant or J_k < 0. */
static int moments(const double *Id, double *J)
{
    for (int k = 0; k < 3; k++) {
        J[k] = (Id[0] + Id[1] + Id[2]) / 2 - Id[k];
        if (!(J[k] >= -1e-14 * (Id[0] + Id[1] + Id[2])))
            return 0;
    }
    return 1;
}

/* The body's inertia as principal moments known now (0: not so). */
static int principal(fam *F, int in, double *Id)
{
    int n = in ? hs_bd_slen(F, in) : -1;
    if (n != 3)
        return 0;
    if (NODEP(F, hs_bd_item(F, in, 0))->type == YAML_SCALAR_NODE) {
        for (int k = 0; k < 3; k++) {
            const char *s = hs_bd_str(F, hs_bd_item(F, in, k));
            if (!s || !hs_fm_const(F, s, &Id[k]))
                return 0;
        }
        return 1;
    }
    for (int r = 0; r < 3; r++) {       /* a matrix: diagonal, known */
        int row = hs_bd_item(F, in, r);
        if (hs_bd_slen(F, row) != 3)
            return 0;
        for (int c = 0; c < 3; c++) {
            const char *s = hs_bd_str(F, hs_bd_item(F, row, c));
            double v;
            if (!s || !hs_fm_const(F, s, &v) || (r != c && v != 0))
                return 0;
            if (r == c)
                Id[r] = v;
        }
    }
    return 1;
}

/* One axis: the orientation {axes: [[a, angle]]}; its axis 0..2, else -1. */
static int one_axis(fam *F, int ori, const char **angle)
{
    yaml_node_t *o = NODEP(F, ori);
    if (o->type != YAML_MAPPING_NODE || hs_bd_map_size(F, ori) != 1)
        return -1;
    yaml_node_pair_t p = o->data.mapping.pairs.start[0];
    const char *kind = hs_bd_str(F, p.key);
    if (!kind || strcmp(kind, "axes") || hs_bd_slen(F, p.value) != 1 ||
        hs_bd_slen(F, hs_bd_item(F, p.value, 0)) != 2)
        return -1;
    const char *ax = hs_bd_str(F, hs_bd_item(F, hs_bd_item(F, p.value, 0), 0));
    *angle = hs_bd_str(F, hs_bd_item(F, hs_bd_item(F, p.value, 0), 1));
    if (!ax || !*angle || strlen(ax) != 1 || !strchr("xyz", ax[0]))
        return -1;
    return ax[0] - 'x';
}

int hs_bd_points_ok(fam *F, int root, int bodies, int springs, int diss)
{
    static const char *const own[] = { "kinetic", "lagrangian", "embedding", "forces",
                                       "contacts", "friction", "mass" };
    for (size_t k = 0; k < sizeof own / sizeof *own; k++)
        if (hs_fm_get(F, root, own[k], NULL))
            return 0;
    int coords = hs_fm_get(F, root, "coordinates", NULL);
    if (diss || !coords || hs_bd_slen(F, coords) < HS_LANG_CHAIN_MIN_N ||
        NODEP(F, bodies)->type != YAML_MAPPING_NODE)
        return 0;
    for (size_t i = 0; springs && i < hs_bd_map_size(F, springs); i++) {
        int s = NODEP(F, springs)->data.mapping.pairs.start[i].value;
        if (NODEP(F, s)->type != YAML_MAPPING_NODE || hs_fm_get(F, s, "c", NULL))
            return 0;               /* a damper: forces on the coordinates */
    }
    size_t nb = hs_bd_map_size(F, bodies), nt = 0, cap = 12 * nb;
    int *texts = malloc((cap + 1) * sizeof *texts);     /* what may read t */
    /* at most 12 a body (3 + 9 rotation entries): more axes, dense */
#define PUSH(id) ((ok = nt < cap) ? (texts[nt++] = (id), 1) : 0)
    int ok = texts != NULL;
    for (size_t i = 0; ok && i < nb; i++) {
        int b = NODEP(F, bodies)->data.mapping.pairs.start[i].value;
        if (NODEP(F, b)->type != YAML_MAPPING_NODE) {
            ok = 0;
            break;
        }
        int ori = hs_fm_get(F, b, "orientation", NULL), mass = hs_fm_get(F, b, "mass", NULL),
            pos = hs_fm_get(F, b, "position", NULL), in = hs_fm_get(F, b, "inertia", NULL);
        const char *angle, *ms = hs_bd_str(F, mass);
        double Id[3], J[3], v;
        ok = ms && hs_fm_const(F, ms, &v) && pos && hs_bd_slen(F, pos) == 3;
        for (int c = 0; ok && c < 3; c++)
            PUSH(hs_bd_item(F, pos, c));
        if (!ok || !ori)
            continue;
        if (NODEP(F, ori)->type != YAML_MAPPING_NODE || hs_bd_map_size(F, ori) != 1) {
            ok = 0;             /* read_orientation says what is wrong */
            break;
        }
        int a = one_axis(F, ori, &angle);
        yaml_node_pair_t p = NODEP(F, ori)->data.mapping.pairs.start[0];
        const char *kind = hs_bd_str(F, p.key);
        /* one axis: its moment known; else known moments, J_k >= 0 */
        ok = principal(F, in, Id) && (a >= 0 || moments(Id, J)) && kind &&
             strcmp(kind, "euler_parameters") != 0;
        if (ok && !strcmp(kind, "axes")) {
            for (int k = 0; ok && k < hs_bd_slen(F, p.value); k++)
                if ((ok = hs_bd_slen(F, hs_bd_item(F, p.value, k)) == 2))
                    PUSH(hs_bd_item(F, hs_bd_item(F, p.value, k), 1));
        } else if ((ok = ok && hs_bd_slen(F, p.value) == 3)) {
            for (int r = 0; ok && r < 3; r++)
                for (int c = 0; (ok = ok && hs_bd_slen(F, hs_bd_item(F, p.value, r)) == 3) && c < 3; c++)
                    PUSH(hs_bd_item(F, hs_bd_item(F, p.value, r), c));
        }
    }
#undef PUSH
    ok = ok && !F->err->code && !hs_bd_moving(F, root, texts, nt);
    free(texts);
    return ok;
}

int hs_bd_points_begin(fam *F, int root, int tmpl, hs_bd_points *E)
{
    int k = hs_fm_add_scalar(F, "mass", 4, tmpl, 1);
    E->seq = k ? hs_fm_add_seq(F, tmpl) : 0;
    if (!E->seq || hs_fm_append_pair(F, root, k, E->seq))
        return F->err->code ? F->err->code : hs_fm_oom(F);
    E->map = hs_bd_section(F, root, "embedding", tmpl);
    return E->map ? 0 : F->err->code;
}

/* The ambient name B__what at x, of mass `mass`. */
static int point(fam *F, hs_bd_points *E, const char *B, const char *what, const char *x,
                 const char *mass, int tmpl)
{
    char nm[200];
    snprintf(nm, sizeof nm, "%s__%s", B, what);
    if (hs_bd_add_entry(F, E->map, nm, x, tmpl))
        return F->err->code;
    int v = hs_fm_add_scalar(F, mass, strlen(mass), tmpl, 1);
    return v ? hs_fm_append_item(F, E->seq, v) : F->err->code;
}

int hs_bd_points_body(fam *F, hs_bd_points *E, const char *B, int key, const char *mass,
                      int pos, int ori, const char *const *I)
{
    static const char *const xyz[] = { "x", "y", "z" };
    char nm[200], what[32];
    double v;
    /* the centre: the position's own text (X[i], a define the chain
     * reads, is then the point itself, not a relay B_x = X[i] of its own) */
    for (int c = 0; c < 3; c++) {
        int it = hs_bd_item(F, pos, c);
        const char *xc = hs_bd_str(F, it);
        if (!xc || hs_fm_const(F, xc, &v))  /* a fixed coordinate: no velocity */
            continue;
        if (point(F, E, B, xyz[c], xc, mass, it))
            return F->err->code;
    }
    if (!ori)
        return F->err->code;
    const char *angle;
    int a = one_axis(F, ori, &angle);
    if (a >= 0) {
        if (hs_fm_const(F, angle, &v))
            return F->err->code;
        buf t = { 0 };
        int rc = hs_bd_bprintf(&t, "(%s)", angle) ? hs_fm_oom(F)
                 : point(F, E, B, "phi", t.s, I[4 * a], key);
        free(t.s);
        return rc;
    }
    double Id[3] = { 0, 0, 0 };
    for (int k = 0; k < 3; k++)
        hs_fm_const(F, I[4 * k], &Id[k]);
    for (int k = 0; k < 3; k++) {
        double Jk = (Id[0] + Id[1] + Id[2]) / 2 - Id[k];
        if (!(Jk > 1e-14 * (Id[0] + Id[1] + Id[2])))
            continue;                       /* a lamina's normal: no mass */
        buf m = { 0 };
        if (hs_bd_bprintf(&m, "((%s) + (%s) + (%s))/2 - (%s)", I[0], I[4], I[8], I[4 * k]))
            return hs_fm_oom(F);
        for (int r = 0; r < 3 && !F->err->code; r++) {
            snprintf(what, sizeof what, "R%d%d", r + 1, k + 1);
            snprintf(nm, sizeof nm, "%s_R%d%d", B, r + 1, k + 1);
            point(F, E, B, what, nm, m.s, key);
        }
        free(m.s);
    }
    return F->err->code;
}
