/* Named points, rigid bodies, force elements, dissipation and the total
 * time derivative D(...) (internal.h), written out as format-1 entries:
 *
 *   points: {P: [x, y]}        defines P_x, P_y (P_z)
 *   bodies: {B: {mass, inertia, position, orientation, points}}
 *                              defines B_R11..B_R33 (body to world), B_x,
 *                              B_y, B_z, B_vx.., B_w1..B_w3 (body frame),
 *                              B_wx..B_wz (world), B_P_x.. and B_P_vx.. of
 *                              each point; adds 1/2 m |v|^2 + 1/2 w.I w to
 *                              `kinetic`; Euler parameters add B_norm
 *   springs: {S: {between: [P, Q], k, c, length}}
 *                              define S_length, S_force; potential
 *                              1/2 k (S_length - length)^2, dissipation
 *                              1/2 c D(S_length)^2
 *   dissipation: R             forces -dR/dq' added to `forces`
 *   D(e)                       anywhere: the total derivative of e along
 *                              the motion (dt + q' d/dq + q'' d/dq'),
 *                              printed in place
 *
 * The symbolic work (D, dR/dv) happens in a scratch dag whose symbols
 * carry the names of the file, so the printed text reads back in the
 * loader as the same expression. */
#include "internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <string.h>


static const char *const new_keys[] = { "points", "bodies", "springs", "dissipation" };
const char *const *const hs_lang_keys = new_keys;
const size_t hs_lang_nkeys = sizeof new_keys / sizeof *new_keys;
enum { K_POINTS, K_BODIES, K_SPRINGS, K_DISS, NKEYS };

static int add_define(fam *F, int root, int tmpl, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int add_define(fam *F, int root, int tmpl, const char *name, const char *fmt, ...)
{
    int defs = hs_bd_section(F, root, "define", tmpl);
    if (!defs)
        return F->err->code;
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || !(text = malloc((size_t)n + 1)))
        return hs_fm_oom(F);
    va_start(ap, fmt);
    vsnprintf(text, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int rc = hs_bd_add_entry(F, defs, name, text, tmpl);
    free(text);
    return rc;
}

/* A scalar of the root (potential, kinetic, ...) with more added:
 * "(old) + (more)", or more alone. */
static int add_to_scalar(fam *F, int root, const char *key, const char *more, int tmpl)
{
    yaml_node_t *r = NODEP(F, root);
    for (yaml_node_pair_t *p = r->data.mapping.pairs.start; p < r->data.mapping.pairs.top; p++) {
        const char *ks = hs_bd_str(F, p->key);
        if (!ks || strcmp(ks, key) != 0)
            continue;
        const char *old = hs_bd_str(F, p->value);
        if (!old)
            return hs_ytree_error(F->y, F->err, NODEP(F, p->value), "'%s' must be an "
                                  "expression, found %s", key, hs_ytree_kind(NODEP(F, p->value)));
        if (!old[strspn(old, " \t\r\n")])
            return hs_ytree_error(F->y, F->err, NODEP(F, p->value), "'%s' is empty: write an "
                                  "expression, or leave the key out (holosim adds the bodies' "
                                  "and springs' terms to it)", key);
        buf b = { 0 };
        if (hs_bd_bprintf(&b, "(%s) + (%s)", old, more))
            return hs_fm_oom(F);
        int id = hs_fm_add_scalar(F, b.s, b.len, p->value, 1);
        free(b.s);
        if (!id)
            return F->err->code;
        NODEP(F, root)->data.mapping.pairs.start[p - r->data.mapping.pairs.start].value = id;
        return 0;
    }
    int k = hs_fm_add_scalar(F, key, strlen(key), tmpl, 1);
    int v = k ? hs_fm_add_scalar(F, more, strlen(more), tmpl, 1) : 0;
    return v ? hs_fm_append_pair(F, root, k, v) : F->err->code;
}

/* ---------- points, bodies, springs ---------- */

typedef struct pts {            /* the named points: name -> dimension */
    hs_strmap tab;
    char **names;
    size_t n, cap;
} pts;

static int point_add(fam *F, pts *P, const char *name, int dim)
{
    if (P->n == P->cap) {
        size_t c = P->cap ? 2 * P->cap : 16;
        char **nn = realloc(P->names, c * sizeof *nn);
        if (!nn)
            return hs_fm_oom(F);
        P->names = nn;
        P->cap = c;
    }
    char *s = malloc(strlen(name) + 1);
    if (!s)
        return hs_fm_oom(F);
    strcpy(s, name);
    P->names[P->n++] = s;
    return hs_strmap_put(&P->tab, s, strlen(s), dim, NULL) < 0 ? hs_fm_oom(F) : 0;
}

static const char *const xyz[] = { "x", "y", "z" };

/* A list of dim expressions (dim 0: 2 or 3), else an error naming what. */
static int vec(fam *F, int id, int dim, const char *what, const char **out)
{
    int n = id ? hs_bd_slen(F, id) : -1;
    if (n < 0 || (dim ? n != dim : (n != 2 && n != 3)))
        return hs_ytree_error(F->y, F->err, id ? NODEP(F, id) : NULL, "%s must be a list of %s "
                              "expressions", what, dim == 3 ? "3" : dim == 4 ? "4" : "2 or 3"), -1;
    for (int i = 0; i < n; i++)
        if (!(out[i] = hs_bd_str(F, hs_bd_item(F, id, i))))
            return hs_ytree_error(F->y, F->err, NODEP(F, hs_bd_item(F, id, i)), "%s: each entry "
                                  "must be an expression", what), -1;
    return n;
}

static int check_keys(fam *F, int map, const char *const *allowed, size_t n, const char *what)
{
    size_t m = hs_bd_map_size(F, map);
    for (size_t i = 0; i < m; i++) {
        int k = NODEP(F, map)->data.mapping.pairs.start[i].key;
        const char *ks = hs_bd_str(F, k);
        size_t j = 0;
        while (ks && j < n && strcmp(ks, allowed[j]) != 0)
            j++;
        if (!ks || j == n) {
            char list[256] = "";
            size_t len = 0;
            for (j = 0; j < n; j++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", j ? ", " : "",
                                        allowed[j]);
            return hs_ytree_error(F->y, F->err, NODEP(F, k), "unknown key '%s' in %s "
                                  "(expected one of: %s)", ks ? ks : "?", what, list);
        }
    }
    return 0;
}

/* A name the rewrites build longer names from (B_P_vx, S_length): at most
 * NAME_MAX characters, so that every name they build fits. */
enum { NAME_MAX_LEN = 64 };
static int name_ok(fam *F, int key, const char *nm, const char *what)
{
    if (nm && strlen(nm) > NAME_MAX_LEN)
        return hs_ytree_error(F->y, F->err, NODEP(F, key), "the name of %s is longer than %d "
                              "characters", what, NAME_MAX_LEN);
    return 0;
}

static int read_points(fam *F, int root, int map, pts *P)
{
    if (NODEP(F, map)->type != YAML_MAPPING_NODE)
        return hs_ytree_error(F->y, F->err, NODEP(F, map), "'points' must be a mapping name -> "
                              "[x, y] or [x, y, z]");
    for (size_t i = 0; i < hs_bd_map_size(F, map); i++) {
        yaml_node_pair_t p = NODEP(F, map)->data.mapping.pairs.start[i];
        const char *e[3], *nm = hs_bd_str(F, p.key);
        if (name_ok(F, p.key, nm, "a point"))
            return F->err->code;
        int dim = vec(F, p.value, 0, "a point", e);
        if (dim < 0 || !nm)
            return F->err->code ? F->err->code : HS_EXIT_MODEL;
        for (int c = 0; c < dim; c++) {
            char dn[160];
            snprintf(dn, sizeof dn, "%s_%s", nm, xyz[c]);
            if (add_define(F, root, hs_bd_item(F, p.value, c), dn, "%s", e[c]))
                return F->err->code;
        }
        if (point_add(F, P, nm, dim))
            return F->err->code;
    }
    return 0;
}

/* Rotation matrix text of one axis rotation (axis x, y or z; angle a). */
static void axis_rot(char axis, const char *a, char R[9][96])
{
    char c[90], s[90], ms[92];
    snprintf(c, sizeof c, "cos(%s)", a);
    snprintf(s, sizeof s, "sin(%s)", a);
    snprintf(ms, sizeof ms, "-%s", s);
    const char *m[9];
    if (axis == 'x') {
        const char *t[9] = { "1", "0", "0", "0", c, ms, "0", s, c };
        memcpy(m, t, sizeof m);
    } else if (axis == 'y') {
        const char *t[9] = { c, "0", s, "0", "1", "0", ms, "0", c };
        memcpy(m, t, sizeof m);
    } else {
        const char *t[9] = { c, ms, "0", s, c, "0", "0", "0", "1" };
        memcpy(m, t, sizeof m);
    }
    for (int i = 0; i < 9; i++)
        snprintf(R[i], 96, "%s", m[i]);
}

static int read_orientation(fam *F, int root, const char *B, int o, buf *kin, int *euler,
                            const char **e)
{
    static const char *const okeys[] = { "axes", "matrix", "euler_parameters" };
    if (NODEP(F, o)->type != YAML_MAPPING_NODE || hs_bd_map_size(F, o) != 1 ||
        check_keys(F, o, okeys, 3, "an orientation"))
        return F->err->code ? F->err->code
                            : hs_ytree_error(F->y, F->err, NODEP(F, o), "'orientation' must be "
                                             "one of {axes: [[z, angle], ...]}, {matrix: [[...], "
                                             "[...], [...]]}, {euler_parameters: [e0, e1, e2, e3]}");
    yaml_node_pair_t p = NODEP(F, o)->data.mapping.pairs.start[0];
    const char *kind = hs_bd_str(F, p.key);
    char nm[200];
    (void)kin;
    *euler = 0;
    if (strcmp(kind, "euler_parameters") == 0) {
        if (vec(F, p.value, 4, "'euler_parameters'", e) < 0)
            return F->err->code;
        for (int i = 0; i < 4; i++)         /* the texts below have room for 200 each */
            if (strlen(e[i]) > 200)
                return hs_ytree_error(F->y, F->err, NODEP(F, hs_bd_item(F, p.value, i)), "an Euler "
                                      "parameter longer than 200 characters: name it in "
                                      "'define'");
        *euler = 1;
        const char *E0 = e[0], *E1 = e[1], *E2 = e[2], *E3 = e[3];
        char t[9][1024];
#define EP(i, j) snprintf(t[i], sizeof t[i], "2*((%s)*(%s) %c (%s)*(%s))", j)
        snprintf(t[0], sizeof t[0], "(%s)^2 + (%s)^2 - (%s)^2 - (%s)^2", E0, E1, E2, E3);
        snprintf(t[4], sizeof t[4], "(%s)^2 - (%s)^2 + (%s)^2 - (%s)^2", E0, E1, E2, E3);
        snprintf(t[8], sizeof t[8], "(%s)^2 - (%s)^2 - (%s)^2 + (%s)^2", E0, E1, E2, E3);
        snprintf(t[1], sizeof t[1], "2*((%s)*(%s) - (%s)*(%s))", E1, E2, E0, E3);
        snprintf(t[2], sizeof t[2], "2*((%s)*(%s) + (%s)*(%s))", E1, E3, E0, E2);
        snprintf(t[3], sizeof t[3], "2*((%s)*(%s) + (%s)*(%s))", E1, E2, E0, E3);
        snprintf(t[5], sizeof t[5], "2*((%s)*(%s) - (%s)*(%s))", E2, E3, E0, E1);
        snprintf(t[6], sizeof t[6], "2*((%s)*(%s) - (%s)*(%s))", E1, E3, E0, E2);
        snprintf(t[7], sizeof t[7], "2*((%s)*(%s) + (%s)*(%s))", E2, E3, E0, E1);
#undef EP
        for (int i = 0; i < 9; i++) {
            snprintf(nm, sizeof nm, "%s_R%d%d", B, i / 3 + 1, i % 3 + 1);
            if (add_define(F, root, p.value, nm, "%s", t[i]))
                return F->err->code;
        }
        return 0;
    }
    if (strcmp(kind, "matrix") == 0) {
        if (hs_bd_slen(F, p.value) != 3)
            return hs_ytree_error(F->y, F->err, NODEP(F, p.value), "'matrix' must be 3 rows "
                                  "of 3 expressions");
        for (int i = 0; i < 3; i++) {
            const char *row[3];
            if (vec(F, hs_bd_item(F, p.value, i), 3, "a row of 'matrix'", row) < 0)
                return F->err->code;
            for (int j = 0; j < 3; j++) {
                snprintf(nm, sizeof nm, "%s_R%d%d", B, i + 1, j + 1);
                if (add_define(F, root, hs_bd_item(F, hs_bd_item(F, p.value, i), j), nm, "%s", row[j]))
                    return F->err->code;
            }
        }
        return 0;
    }
    /* axes: R = R_1 R_2 ... (each about a body axis after the previous) */
    int na = hs_bd_slen(F, p.value);
    if (na < 1)
        return hs_ytree_error(F->y, F->err, NODEP(F, p.value), "'axes' must be a list of "
                              "[axis, angle] pairs (axis x, y or z)");
    for (int s = 0; s < na; s++) {
        int pr = hs_bd_item(F, p.value, s);
        const char *ax[2];
        if (vec(F, pr, 2, "an [axis, angle] pair", ax) < 0)
            return F->err->code;
        if (strlen(ax[0]) != 1 || !strchr("xyz", ax[0][0]))
            return hs_ytree_error(F->y, F->err, NODEP(F, hs_bd_item(F, pr, 0)), "axis '%s': write "
                                  "x, y or z", ax[0]);
        char Rk[9][96];
        if (strlen(ax[1]) > 80)
            return hs_ytree_error(F->y, F->err, NODEP(F, hs_bd_item(F, pr, 1)), "an angle of 'axes' "
                                  "longer than 80 characters: name it in 'define'");
        axis_rot(ax[0][0], ax[1], Rk);
        for (int i = 0; i < 9; i++) {
            int r = i / 3, c = i % 3;
            if (s == na - 1)
                snprintf(nm, sizeof nm, "%s_R%d%d", B, r + 1, c + 1);
            else
                snprintf(nm, sizeof nm, "%s_R%d_%d%d", B, s + 1, r + 1, c + 1);
            int rc;
            if (s == 0)
                rc = add_define(F, root, hs_bd_item(F, pr, 1), nm, "%s", Rk[i]);
            else
                rc = add_define(F, root, hs_bd_item(F, pr, 1), nm,
                                "%s_R%d_%d1*(%s) + %s_R%d_%d2*(%s) + %s_R%d_%d3*(%s)",
                                B, s, r + 1, Rk[c], B, s, r + 1, Rk[3 + c], B, s, r + 1,
                                Rk[6 + c]);
            if (rc)
                return F->err->code;
        }
    }
    return 0;
}

/* A body's mass and inertia, where they are constants of the parameters:
 * mass > 0, the inertia symmetric (the kinetic energy reads its upper
 * triangle) and positive definite; a run would otherwise go on with a
 * wrong kinetic energy or die of it ("step size underflow"). */
static int body_mass_ok(fam *F, const char *B, int mass)
{
    double v;
    if (hs_fm_const(F, hs_bd_str(F, mass), &v) && !(v > 0))
        return hs_ytree_error(F->y, F->err, NODEP(F, mass), "the mass of body '%s' is %g: it "
                              "must be > 0", B, v);
    return F->err->code;
}

/* a and b the same but for blanks */
static int same_text(const char *a, const char *b)
{
    for (;; a++, b++) {
        while (*a == ' ' || *a == '\t')
            a++;
        while (*b == ' ' || *b == '\t')
            b++;
        if (*a != *b)
            return 0;
        if (!*a)
            return 1;
    }
}

static int body_inertia_ok(fam *F, const char *B, int in, int matrix, const char *const *I)
{
    double a[9];
    int known = 1, kn[9];
    for (int k = 0; k < 9; k++)
        known &= kn[k] = hs_fm_const(F, I[k], &a[k]);
    if (F->err->code)
        return F->err->code;
    for (int r = 0; matrix && r < 3; r++)
        for (int c = 0; c < r; c++) {
            int l = 3 * r + c, u = 3 * c + r;       /* two numbers, else the same text */
            int same = kn[l] && kn[u] ? fabs(a[l] - a[u]) <= 1e-12 * fmax(fabs(a[l]), fabs(a[u]))
                                      : same_text(I[l], I[u]);
            if (!same)
                return hs_ytree_error(F->y, F->err, NODEP(F, hs_bd_item(F, hs_bd_item(F, in, r), c)),
                                      "the inertia of body '%s' is not symmetric: entry (%d,%d) "
                                      "is %.40s but (%d,%d) is %.40s; give both the same value",
                                      B, r + 1, c + 1, I[3 * r + c], c + 1, r + 1, I[3 * c + r]);
        }
    if (!known)
        return 0;
    /* Sylvester: the leading minors positive */
    double m1 = a[0], m2 = a[0] * a[4] - a[1] * a[1],
           m3 = a[0] * (a[4] * a[8] - a[5] * a[5]) - a[1] * (a[1] * a[8] - a[5] * a[2]) +
                a[2] * (a[1] * a[5] - a[4] * a[2]);
    if (!(m1 > 0 && m2 > 0 && m3 > 0))
        return hs_ytree_error(F->y, F->err, NODEP(F, in), "the inertia of body '%s' is not "
                              "positive definite (%s): its principal moments must be > 0",
                              B, matrix ? "a leading minor is not > 0"
                                        : "a moment is not > 0");
    return 0;
}

/* 'inertia' into I[9] (row-major; principal moments on the diagonal),
 * checked. */
static int read_inertia(fam *F, const char *B, int in, const char **I)
{
    int ni = hs_bd_slen(F, in);
    if (ni == 3 && NODEP(F, hs_bd_item(F, in, 0))->type == YAML_SCALAR_NODE) {
        if (vec(F, in, 3, "'inertia'", I) < 0)
            return F->err->code;
        I[4] = I[1], I[8] = I[2];
        I[1] = I[2] = I[3] = I[5] = I[6] = I[7] = "0";
        return body_inertia_ok(F, B, in, 0, I);
    }
    if (ni != 3)
        return hs_ytree_error(F->y, F->err, NODEP(F, in), "'inertia' must be [I1, I2, I3] "
                              "(principal) or a 3 x 3 matrix in the body frame");
    for (int r = 0; r < 3; r++)
        if (vec(F, hs_bd_item(F, in, r), 3, "a row of 'inertia'", I + 3 * r) < 0)
            return F->err->code;
    return body_inertia_ok(F, B, in, 1, I);
}

static int read_body(fam *F, int root, int key, int bm, pts *P, buf *kin, hs_bd_points *E)
{
    static const char *const bkeys[] = { "mass", "inertia", "position", "orientation", "points" };
    const char *B = hs_bd_str(F, key);
    if (name_ok(F, key, B, "a body") || NODEP(F, bm)->type != YAML_MAPPING_NODE ||
        check_keys(F, bm, bkeys, 5, "a body"))
        return F->err->code ? F->err->code
                            : hs_ytree_error(F->y, F->err, NODEP(F, bm), "body '%s' must be a "
                                             "mapping (mass, inertia, position, orientation, "
                                             "points)", B);
    int mass = hs_fm_get(F, bm, "mass", NULL), in = hs_fm_get(F, bm, "inertia", NULL),
            pos = hs_fm_get(F, bm, "position", NULL), ori = hs_fm_get(F, bm, "orientation", NULL),
            bp = hs_fm_get(F, bm, "points", NULL);
    if (!mass || !hs_bd_str(F, mass) || !pos)
        return hs_ytree_error(F->y, F->err, NODEP(F, key), "body '%s' needs 'mass' (an "
                              "expression) and 'position' (3 expressions)", B);
    const char *x[3], *e[4], *I[9];
    char nm[200];
    if (body_mass_ok(F, B, mass) || vec(F, pos, 3, "'position'", x) < 0)
        return F->err->code;
    for (int c = 0; c < 3; c++) {
        snprintf(nm, sizeof nm, "%s_%s", B, xyz[c]);
        if (add_define(F, root, hs_bd_item(F, pos, c), nm, "%s", x[c]))
            return F->err->code;
        snprintf(nm, sizeof nm, "%s_v%s", B, xyz[c]);
        if (add_define(F, root, hs_bd_item(F, pos, c), nm, "D(%s_%s)", B, xyz[c]))
            return F->err->code;
    }
    if (!E && hs_bd_bprintf(kin, "%s0.5*(%s)*(%s_vx^2 + %s_vy^2 + %s_vz^2)", kin->len ? " + " : "",
                hs_bd_str(F, mass), B, B, B))
        return hs_fm_oom(F);
    int euler = 0;
    if (ori) {
        if (!in)
            return hs_ytree_error(F->y, F->err, NODEP(F, key), "body '%s' has an orientation "
                                  "but no 'inertia' ([I1, I2, I3] or a 3 x 3 matrix)", B);
        if (read_orientation(F, root, B, ori, kin, &euler, e))
            return F->err->code;
        if (read_inertia(F, B, in, I))
            return F->err->code;
        /* angular velocity in the body frame */
        if (euler) {
            static const int L[3][4][2] = {   /* w' = 2 L e', L rows (sign, index) */
                { { -1, 1 }, { 1, 0 }, { 1, 3 }, { -1, 2 } },
                { { -1, 2 }, { -1, 3 }, { 1, 0 }, { 1, 1 } },
                { { -1, 3 }, { 1, 2 }, { -1, 1 }, { 1, 0 } },
            };
            for (int r = 0; r < 3; r++) {
                buf w = { 0 };
                for (int c = 0; c < 4; c++)
                    if (hs_bd_bprintf(&w, "%s(%s)*D(%s)", L[r][c][0] < 0 ? " - " : c ? " + " : "",
                                e[L[r][c][1]], e[c]))
                        return hs_fm_oom(F);
                snprintf(nm, sizeof nm, "%s_w%d", B, r + 1);
                int rc = add_define(F, root, ori, nm, "2*(%s)", w.s);
                free(w.s);
                if (rc)
                    return F->err->code;
            }
        } else {
            static const int W[3][2] = { { 3, 2 }, { 1, 3 }, { 2, 1 } };  /* (R^T R')_ij */
            for (int r = 0; r < 3; r++) {
                int i = W[r][0], j = W[r][1];
                snprintf(nm, sizeof nm, "%s_w%d", B, r + 1);
                if (add_define(F, root, ori, nm, "%s_R1%d*D(%s_R1%d) + %s_R2%d*D(%s_R2%d) + "
                               "%s_R3%d*D(%s_R3%d)", B, i, B, j, B, i, B, j, B, i, B, j))
                    return F->err->code;
            }
        }
        for (int r = 0; r < 3; r++) {
            snprintf(nm, sizeof nm, "%s_w%s", B, xyz[r]);
            if (add_define(F, root, ori, nm, "%s_R%d1*%s_w1 + %s_R%d2*%s_w2 + %s_R%d3*%s_w3",
                           B, r + 1, B, B, r + 1, B, B, r + 1, B))
                return F->err->code;
        }
        if (E) {
            if (hs_bd_points_body(F, E, B, key, hs_bd_str(F, mass), pos, ori,
                                  (const char *const *)I))
                return F->err->code;
        } else if (hs_bd_bprintf(kin, " + 0.5*(")) {
            return hs_fm_oom(F);
        }
        int first = 1;
        for (int r = 0; !E && r < 3; r++)
            for (int c = r; c < 3; c++) {
                if (strcmp(I[3 * r + c], "0") == 0)
                    continue;
                if (hs_bd_bprintf(kin, "%s%s(%s)*%s_w%d*%s_w%d", first ? "" : " + ", r == c ? "" : "2*",
                            I[3 * r + c], B, r + 1, B, c + 1))
                    return hs_fm_oom(F);
                first = 0;
            }
        if (!E && hs_bd_bprintf(kin, "%s)", first ? "0" : ""))
            return hs_fm_oom(F);
        if (euler) {
            /* 2 J (e.e')^2 vanishes on the motion (e.e' = 0) and makes the
             * metric of the 4 parameters positive definite */
            if (hs_bd_bprintf(kin, " + 2*((%s) + (%s) + (%s))/3*((%s)*D(%s) + (%s)*D(%s) + (%s)*D(%s) "
                        "+ (%s)*D(%s))^2", I[0], I[4], I[8], e[0], e[0], e[1], e[1], e[2], e[2],
                        e[3], e[3]))
                return hs_fm_oom(F);
            int cons = hs_bd_section(F, root, "constraints", ori);
            if (!cons)
                return F->err->code;
            if (NODEP(F, cons)->type != YAML_MAPPING_NODE)
                return hs_ytree_error(F->y, F->err, NODEP(F, cons), "with Euler parameters, "
                                      "'constraints' must be a mapping (holosim adds %s_norm)", B);
            char t[1024];
            snprintf(t, sizeof t, "(%s)^2 + (%s)^2 + (%s)^2 + (%s)^2 - 1", e[0], e[1], e[2], e[3]);
            snprintf(nm, sizeof nm, "%s_norm", B);
            if (hs_bd_add_entry(F, cons, nm, t, ori))
                return F->err->code;
        }
    }
    if (E && !ori && hs_bd_points_body(F, E, B, key, hs_bd_str(F, mass), pos, 0, NULL))
        return F->err->code;
    if (bp) {
        if (!ori)
            return hs_ytree_error(F->y, F->err, NODEP(F, bp), "points of body '%s' need its "
                                  "'orientation'", B);
        if (NODEP(F, bp)->type != YAML_MAPPING_NODE)
            return hs_ytree_error(F->y, F->err, NODEP(F, bp), "'points' must be a mapping "
                                  "name -> [x, y, z] in the body frame");
        for (size_t i = 0; i < hs_bd_map_size(F, bp); i++) {
            yaml_node_pair_t p = NODEP(F, bp)->data.mapping.pairs.start[i];
            const char *b[3], *pn = hs_bd_str(F, p.key);
            if (!pn || name_ok(F, p.key, pn, "a body point") || vec(F, p.value, 3, "a body point", b) < 0)
                return F->err->code ? F->err->code : HS_EXIT_MODEL;
            char full[160];             /* (names of at most 64 characters) */
            snprintf(full, sizeof full, "%s_%s", B, pn);
            for (int r = 0; r < 3; r++) {
                snprintf(nm, sizeof nm, "%s_%s", full, xyz[r]);
                if (add_define(F, root, p.value, nm, "%s_%s + %s_R%d1*(%s) + %s_R%d2*(%s) + "
                               "%s_R%d3*(%s)", B, xyz[r], B, r + 1, b[0], B, r + 1, b[1], B,
                               r + 1, b[2]))
                    return F->err->code;
                snprintf(nm, sizeof nm, "%s_v%s", full, xyz[r]);
                if (add_define(F, root, p.value, nm, "D(%s_%s)", full, xyz[r]))
                    return F->err->code;
            }
            if (point_add(F, P, full, 3))
                return F->err->code;
        }
    }
    return 0;
}

/* One end of a spring: a named point or a list of 2 or 3 expressions;
 * the text of each coordinate into c[]. */
static int spring_end(fam *F, pts *P, int id, buf c[3])
{
    const char *s = hs_bd_str(F, id);
    if (s) {
        long dim = hs_strmap_get(&P->tab, s, strlen(s));
        if (dim < 0)
            return hs_ytree_error(F->y, F->err, NODEP(F, id), "'%s' is not a named point "
                                  "(declare it under 'points' or a body's 'points', or give "
                                  "[x, y] or [x, y, z])", s), -1;
        for (int i = 0; i < dim; i++)
            if (hs_bd_bprintf(&c[i], "%s_%s", s, xyz[i]))
                return hs_fm_oom(F), -1;
        return (int)dim;
    }
    const char *e[3];
    int dim = vec(F, id, 0, "an end of a spring", e);
    for (int i = 0; i < dim; i++)           /* the whole text, however long */
        if (hs_bd_bprintf(&c[i], "(%s)", e[i]))
            return hs_fm_oom(F), -1;
    return dim;
}

/* The spring S for the drawing (hs_lang_info.spring): its ends' names
 * (NULL: written as coordinates) and coordinates' texts.  -1 out of memory. */
static int keep_spring(fam *F, const char *S, int dim, const char *na, const char *nb,
                       const buf *a, const buf *b)
{
    hs_lang_info *si = F->info;
    hs_lang_spring *v = realloc(si->spring, (si->nspring + 1) * sizeof *v);
    if (!v)
        return -1;
    si->spring = v;
    hs_lang_spring *sp = &v[si->nspring++];
    memset(sp, 0, sizeof *sp);
    sp->dim = dim;
    int bad = !(sp->name = strdup(S)) || (na && !(sp->end[0] = strdup(na))) ||
              (nb && !(sp->end[1] = strdup(nb)));
    for (int d = 0; !bad && d < dim; d++)
        bad = !(sp->at[0][d] = strdup(a[d].s)) || !(sp->at[1][d] = strdup(b[d].s));
    return bad ? -1 : 0;
}

static int read_springs(fam *F, int root, int map, pts *P, buf *pot, buf *diss)
{
    static const char *const skeys[] = { "between", "k", "c", "length" };
    if (NODEP(F, map)->type != YAML_MAPPING_NODE)
        return hs_ytree_error(F->y, F->err, NODEP(F, map), "'springs' must be a mapping name -> "
                              "{between: [P, Q], k, c, length}");
    for (size_t i = 0; i < hs_bd_map_size(F, map); i++) {
        yaml_node_pair_t p = NODEP(F, map)->data.mapping.pairs.start[i];
        const char *S = hs_bd_str(F, p.key);
        if (name_ok(F, p.key, S, "a spring"))
            return F->err->code;
        if (!S || NODEP(F, p.value)->type != YAML_MAPPING_NODE ||
            check_keys(F, p.value, skeys, 4, "a spring"))
            return F->err->code ? F->err->code
                                : hs_ytree_error(F->y, F->err, NODEP(F, p.value), "a spring is "
                                                 "a mapping {between: [P, Q], k, c, length}");
        int bw = hs_fm_get(F, p.value, "between", NULL), k = hs_fm_get(F, p.value, "k", NULL),
            c = hs_fm_get(F, p.value, "c", NULL), l0 = hs_fm_get(F, p.value, "length", NULL);
        if (!bw || hs_bd_slen(F, bw) != 2)
            return hs_ytree_error(F->y, F->err, NODEP(F, bw ? bw : p.key), "spring '%s' needs "
                                  "'between: [P, Q]' (two points)", S);
        if ((k && !hs_bd_str(F, k)) || (c && !hs_bd_str(F, c)) || (l0 && !hs_bd_str(F, l0)) || (!k && !c))
            return hs_ytree_error(F->y, F->err, NODEP(F, p.value), "spring '%s': k, c and "
                                  "length are expressions (k or c required)", S);
        buf a[3] = { { 0 } }, b[3] = { { 0 } }, t = { 0 };
        int da = spring_end(F, P, hs_bd_item(F, bw, 0), a), db = da < 0 ? -1 : spring_end(F, P, hs_bd_item(F, bw, 1), b);
        int bad = da < 0 || db < 0 ? F->err->code : 0;
        if (!bad && da != db)
            bad = hs_ytree_error(F->y, F->err, NODEP(F, bw), "spring '%s' joins a %dD and a "
                                 "%dD point", S, da, db);
        for (int d = 0; !bad && d < da; d++)
            if (hs_bd_bprintf(&t, "%s(%s - %s)^2", d ? " + " : "", a[d].s, b[d].s))
                bad = hs_fm_oom(F);
        if (!bad && keep_spring(F, S, da, hs_bd_str(F, hs_bd_item(F, bw, 0)),
                                hs_bd_str(F, hs_bd_item(F, bw, 1)), a, b))
            bad = hs_fm_oom(F);
        for (int d = 0; d < 3; d++)
            free(a[d].s), free(b[d].s);
        if (bad) {
            free(t.s);
            return bad;
        }
        char nm[200];
        snprintf(nm, sizeof nm, "%s_length", S);
        int rc = add_define(F, root, bw, nm, "sqrt(%s)", t.s);
        free(t.s);
        if (rc)
            return rc;
        const char *L0 = l0 ? hs_bd_str(F, l0) : "0";
        snprintf(nm, sizeof nm, "%s_force", S);
        buf f = { 0 };
        if ((k && hs_bd_bprintf(&f, "(%s)*(%s_length - (%s))", hs_bd_str(F, k), S, L0)) ||
            (c && hs_bd_bprintf(&f, "%s(%s)*D(%s_length)", k ? " + " : "", hs_bd_str(F, c), S)))
            return hs_fm_oom(F);
        rc = add_define(F, root, p.value, nm, "%s", f.s ? f.s : "0");
        free(f.s);
        if (rc)
            return rc;
        if ((k && hs_bd_bprintf(pot, "%s0.5*(%s)*(%s_length - (%s))^2", pot->len ? " + " : "",
                          hs_bd_str(F, k), S, L0)) ||
            (c && hs_bd_bprintf(diss, "%s0.5*(%s)*D(%s_length)^2", diss->len ? " + " : "", hs_bd_str(F, c), S)))
            return hs_fm_oom(F);
    }
    return 0;
}

int hs_bd_uses(fam *F, int root)
{
    for (int k = 0; k < NKEYS; k++)
        if (hs_fm_get(F, root, new_keys[k], NULL))
            return 1;
    return hs_bd_text_has_D(F);
}

int hs_bd_expand(fam *F, int root)
{
    int key[NKEYS], val[NKEYS];
    for (int k = 0; k < NKEYS; k++)
        val[k] = hs_fm_get(F, root, new_keys[k], &key[k]);
    /* the new keys leave the root: the loader reads format 1 */
    yaml_node_t *r = NODEP(F, root);
    yaml_node_pair_t *w = r->data.mapping.pairs.start;
    for (yaml_node_pair_t *p = r->data.mapping.pairs.start; p < r->data.mapping.pairs.top; p++) {
        const char *ks = hs_bd_str(F, p->key);
        int drop = 0;
        for (int k = 0; k < NKEYS && ks; k++)
            drop |= strcmp(ks, new_keys[k]) == 0;
        if (!drop)
            *w++ = *p;
    }
    r->data.mapping.pairs.top = w;
    pts P = { { 0 }, NULL, 0, 0 };
    buf kin = { 0 }, pot = { 0 }, diss = { 0 };
    size_t roff = 0;            /* where the file's dissipation starts in diss */
    int rc = 0;
    if (val[K_BODIES] && hs_fm_get(F, root, "mass", NULL))
        rc = hs_ytree_error(F->y, F->err, NODEP(F, key[K_BODIES]), "'bodies' add to the kinetic "
                            "energy (the Lagrangian form): drop 'mass' and write point masses "
                            "as 'kinetic' terms or bodies");
    if (!rc && val[K_POINTS])
        rc = read_points(F, root, val[K_POINTS], &P);
    if (!rc && val[K_BODIES]) {
        if (NODEP(F, val[K_BODIES])->type != YAML_MAPPING_NODE)
            rc = hs_ytree_error(F->y, F->err, NODEP(F, val[K_BODIES]), "'bodies' must be a "
                                "mapping name -> {mass, inertia, position, orientation, points}");
        /* bodies alone: the points of an embedding (bodypts.c) */
        hs_bd_points E = { 0, 0 }, *Ep = NULL;
        if (!rc && hs_bd_points_ok(F, root, val[K_BODIES], val[K_SPRINGS], val[K_DISS]))
            rc = hs_bd_points_begin(F, root, key[K_BODIES], Ep = &E);
        for (size_t i = 0; !rc && i < hs_bd_map_size(F, val[K_BODIES]); i++) {
            yaml_node_pair_t p = NODEP(F, val[K_BODIES])->data.mapping.pairs.start[i];
            rc = read_body(F, root, p.key, p.value, &P, &kin, Ep);
        }
        if (!rc && kin.len) {
            int kk = hs_fm_get(F, root, "lagrangian", NULL) ? 0 : 1;
            rc = add_to_scalar(F, root, kk ? "kinetic" : "lagrangian", kin.s, key[K_BODIES]);
        }
    }
    if (!rc && val[K_SPRINGS])
        rc = read_springs(F, root, val[K_SPRINGS], &P, &pot, &diss);
    if (!rc && pot.len) {
        int lag = hs_fm_get(F, root, "lagrangian", NULL);
        if (lag) {
            buf neg = { 0 };
            rc = hs_bd_bprintf(&neg, "-(%s)", pot.s) ? hs_fm_oom(F)
                 : add_to_scalar(F, root, "lagrangian", neg.s, key[K_SPRINGS]);
            free(neg.s);
        } else {
            rc = add_to_scalar(F, root, "potential", pot.s, key[K_SPRINGS]);
        }
    }
    if (!rc && val[K_DISS]) {
        const char *R = hs_bd_str(F, val[K_DISS]);
        if (!R)
            rc = hs_ytree_error(F->y, F->err, NODEP(F, val[K_DISS]), "'dissipation' must be "
                                "an expression R(t, q, q') (forces -dR/dq')");
        else if ((roff = diss.len ? diss.len + 4 : 1),
                 hs_bd_bprintf(&diss, "%s(%s)", diss.len ? " + " : "", R))
            rc = hs_fm_oom(F);
    }
    if (!rc)
        rc = hs_bd_D_pass(F, root, diss.len ? diss.s : NULL, roff,
                          val[K_DISS] ? val[K_DISS] : key[K_SPRINGS]);
    for (size_t i = 0; i < P.n; i++)
        free(P.names[i]);
    free(P.names);
    hs_strmap_free(&P.tab);
    free(kin.s);
    free(pot.s);
    free(diss.s);
    return rc;
}
