/* Named points, rigid bodies, force elements, dissipation and the total
 * time derivative D(...) (family.h), written out as format-1 entries:
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
#include "family.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define NODEP(F, id) (&(F)->doc->nodes.start[(id) - 1])

static const char *const new_keys[] = { "points", "bodies", "springs", "dissipation" };
enum { K_POINTS, K_BODIES, K_SPRINGS, K_DISS, NKEYS };

/* ---------- text ---------- */

typedef struct buf {
    char *s;
    size_t len, cap;
} buf;

static int bprintf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bprintf(buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -1;
    if (b->len + (size_t)n + 1 > b->cap) {
        size_t c = b->cap ? b->cap : 64;
        while (c < b->len + (size_t)n + 1)
            c *= 2;
        char *p = realloc(b->s, c);
        if (!p)
            return -1;
        b->s = p;
        b->cap = c;
    }
    va_start(ap, fmt);
    vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

static const char *str(fam *F, int id)
{
    return id ? hs_ytree_str(NODEP(F, id)) : NULL;
}

/* ---------- the scratch symbolic context ---------- */

typedef struct sctx {
    fam *F;
    hs_dag *d;
    int tsym;
    size_t n;
    int *q, *v, *a;             /* [n] symbols x, x', x'' */
    ld_tab qtab;                /* coordinate name -> index */
    ld_tab ptab;                /* parameter names */
    int defs;                   /* the define mapping */
    ld_tab dtab;                /* define name -> pair index */
    const hs_node **dnode;
    signed char *dstate;
    size_t ndef;
    int emb;                    /* the embedding mapping, or 0 */
    ld_tab atab;
    const hs_node **anode;
    signed char *astate;
    size_t namb;
    int node;                   /* the scalar being rewritten (errors) */
    buf tmp;
    int depth;
} sctx;

static const hs_node *parse_text(sctx *S, const char *t, size_t len, size_t off0);

static const hs_node *named_node(sctx *S, int map, size_t i, const hs_node **cache,
                                 signed char *state)
{
    fam *F = S->F;
    if (state[i] == 2)
        return cache[i];
    yaml_node_pair_t p = NODEP(F, map)->data.mapping.pairs.start[i];
    if (state[i] == 1) {
        hs_ytree_error(F->y, F->err, NODEP(F, p.key), "'%s' depends on itself", str(F, p.key));
        return NULL;
    }
    yaml_node_t *v = NODEP(F, p.value);
    if (v->type != YAML_SCALAR_NODE)
        return NULL;                     /* the loader says what is wrong */
    state[i] = 1;
    int saved = S->node;
    S->node = p.value;
    const hs_node *e = parse_text(S, (const char *)v->data.scalar.value, v->data.scalar.length, 0);
    S->node = saved;
    state[i] = 2;
    cache[i] = e;
    return e;
}

static const hs_node *D_of(sctx *S, const hs_node *e)
{
    /* D = d/dt + q' d/dq + q'' d/dq': both levels as one direction */
    size_t n = S->n;
    int *qs = malloc(2 * n * sizeof *qs + 1), *vs = malloc(2 * n * sizeof *vs + 1);
    if (!qs || !vs) {
        free(qs);
        free(vs);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        qs[i] = S->q[i], qs[n + i] = S->v[i];
        vs[i] = S->v[i], vs[n + i] = S->a[i];
    }
    const hs_node *r = hs_total_diff(S->d, e, S->tsym, 2 * n, qs, vs);
    free(qs);
    free(vs);
    return r;
}

static const hs_node *lookup(void *ctx, hs_dag *d, const char *s, size_t len, int primed,
                             size_t off, int *status, hs_error *perr)
{
    sctx *S = ctx;
    (void)off;
    (void)perr;
    *status = HS_RESOLVE_OK;
    long i = hs_ld_tab_get(&S->qtab, s, len);
    if (i >= 0)
        return hs_sym(d, primed == 0 ? S->q[i] : primed == 1 ? S->v[i] : S->a[i]);
    if (S->emb && (i = hs_ld_tab_get(&S->atab, s, len)) >= 0) {
        const hs_node *X = named_node(S, S->emb, (size_t)i, S->anode, S->astate);
        if (!X || primed > 1)
            goto bad;
        return primed ? D_of(S, X) : X;
    }
    if (primed) {
        *status = HS_RESOLVE_NO_PRIME;
        return NULL;
    }
    if (len == 1 && s[0] == 't')
        return hs_sym(d, S->tsym);
    if (hs_ld_tab_get(&S->ptab, s, len) >= 0) {
        char nm[128];
        snprintf(nm, sizeof nm, "%.*s", (int)len, s);
        return hs_sym(d, hs_dag_symbol(d, nm));
    }
    if (S->defs && (i = hs_ld_tab_get(&S->dtab, s, len)) >= 0) {
        const hs_node *e = named_node(S, S->defs, (size_t)i, S->dnode, S->dstate);
        if (e)
            return e;
        goto bad;
    }
    *status = HS_RESOLVE_UNKNOWN;
    return NULL;
bad:
    *status = HS_RESOLVE_ERROR;
    perr->code = S->F->err->code ? S->F->err->code : HS_EXIT_MODEL;
    return NULL;
}

static int rewrite_D(sctx *S, const char *t, size_t len, size_t off0, buf *out, int *changed);

/* Parse text (offset off0 in the scalar S->node) with every D(...)
 * written out first. */
static const hs_node *parse_text(sctx *S, const char *t, size_t len, size_t off0)
{
    fam *F = S->F;
    if (++S->depth > 64) {
        S->depth--;
        hs_ytree_error(F->y, F->err, NODEP(F, S->node), "D(...) and defines nested too deeply");
        return NULL;
    }
    buf b = { 0 };
    int changed = 0;
    const hs_node *e = NULL;
    if (!rewrite_D(S, t, len, off0, &b, &changed)) {
        hs_resolver r = { lookup, S, NULL };
        hs_error pe;
        hs_error_init(&pe);
        const char *txt = changed ? b.s : t;
        size_t tl = changed ? b.len : len;
        e = hs_parse(S->d, txt, tl, -1, &r, &pe);
        if (!e && !F->err->code)
            hs_ytree_error_in(F->y, F->err, NODEP(F, S->node),
                              off0 + (changed ? 0 : pe.offset > 0 ? (size_t)pe.offset : 0),
                              "%s%s", pe.msg, changed ? " (in an argument of D)" : "");
    }
    free(b.s);
    S->depth--;
    return e;
}

/* The printed text of e appended to out, in parentheses. */
static int print_node(sctx *S, const hs_node *e, buf *out)
{
    size_t n = hs_format(S->d, e, NULL, 0);
    char *p = malloc(n + 1);
    if (!p)
        return hs_fm_oom(S->F);
    hs_format(S->d, e, p, n + 1);
    int rc = bprintf(out, "(%s)", p);
    free(p);
    return rc ? hs_fm_oom(S->F) : 0;
}

/* t with each D(arg) replaced by the printed total derivative of arg. */
static int rewrite_D(sctx *S, const char *t, size_t len, size_t off0, buf *out, int *changed)
{
    fam *F = S->F;
    size_t i = 0, last = 0;
    while (i < len) {
        if (t[i] == 'D' && (i == 0 || !(isalnum((unsigned char)t[i - 1]) || t[i - 1] == '_' ||
                                        t[i - 1] == '.')) &&
            i + 1 < len && t[i + 1] == '(') {
            int depth = 0;
            size_t j = i + 1;
            for (; j < len; j++)
                if (t[j] == '(')
                    depth++;
                else if (t[j] == ')' && --depth == 0)
                    break;
            if (j >= len)
                return hs_ytree_error_in(F->y, F->err, NODEP(F, S->node), off0 + i + 1,
                                         "'(' of D is not closed");
            const hs_node *e = parse_text(S, t + i + 2, j - i - 2, off0 + i + 2);
            if (!e)
                return F->err->code ? F->err->code : HS_EXIT_MODEL;
            const hs_node *de = D_of(S, e);
            if (!de || hs_dag_failed(S->d))
                return hs_ytree_error_in(F->y, F->err, NODEP(F, S->node), off0 + i,
                                         "D(...): %s", hs_dag_failed(S->d)
                                             ? hs_dag_error(S->d)->msg : "out of memory");
            if (bprintf(out, "%.*s", (int)(i - last), t + last) || print_node(S, de, out))
                return hs_fm_oom(F);
            *changed = 1;
            i = last = j + 1;
            continue;
        }
        i++;
    }
    if (*changed && bprintf(out, "%.*s", (int)(len - last), t + last))
        return hs_fm_oom(F);
    return 0;
}

static void sctx_free(sctx *S)
{
    hs_dag_free(S->d);
    free(S->q);
    free(S->v);
    free(S->a);
    hs_ld_tab_free(&S->qtab);
    hs_ld_tab_free(&S->ptab);
    hs_ld_tab_free(&S->dtab);
    hs_ld_tab_free(&S->atab);
    free(S->dnode);
    free(S->dstate);
    free(S->anode);
    free(S->astate);
    free(S->tmp.s);
}

static size_t map_size(fam *F, int id)
{
    yaml_node_t *n = NODEP(F, id);
    return n->type == YAML_MAPPING_NODE
               ? (size_t)(n->data.mapping.pairs.top - n->data.mapping.pairs.start) : 0;
}

static int keys_into(fam *F, int map, ld_tab *t)
{
    size_t n = map_size(F, map);
    for (size_t i = 0; i < n; i++) {
        const char *k = str(F, NODEP(F, map)->data.mapping.pairs.start[i].key);
        if (k && hs_ld_tab_put(t, k, strlen(k), (long)i, NULL) < 0)
            return hs_fm_oom(F);
    }
    return 0;
}

static int sctx_init(sctx *S, fam *F, int root)
{
    memset(S, 0, sizeof *S);
    S->F = F;
    if (!(S->d = hs_dag_new()))
        return hs_fm_oom(F);
    S->tsym = hs_dag_symbol(S->d, "t");
    int coords = hs_fm_get(F, root, "coordinates", NULL);
    if (coords && NODEP(F, coords)->type == YAML_SEQUENCE_NODE) {
        yaml_node_t *c = NODEP(F, coords);
        S->n = (size_t)(c->data.sequence.items.top - c->data.sequence.items.start);
    }
    S->q = calloc(S->n + 1, sizeof *S->q);
    S->v = calloc(S->n + 1, sizeof *S->v);
    S->a = calloc(S->n + 1, sizeof *S->a);
    if (!S->q || !S->v || !S->a)
        return hs_fm_oom(F);
    for (size_t i = 0; i < S->n; i++) {
        const char *nm = str(F, NODEP(F, coords)->data.sequence.items.start[i]);
        if (!nm)
            nm = "?";
        char b[160];
        S->q[i] = hs_dag_symbol(S->d, nm);
        snprintf(b, sizeof b, "%s'", nm);
        S->v[i] = hs_dag_symbol(S->d, b);
        snprintf(b, sizeof b, "%s''", nm);
        S->a[i] = hs_dag_symbol(S->d, b);
        if (hs_ld_tab_put(&S->qtab, nm, strlen(nm), (long)i, NULL) < 0)
            return hs_fm_oom(F);
    }
    int pm = hs_fm_get(F, root, "parameters", NULL);
    if (pm && keys_into(F, pm, &S->ptab))
        return F->err->code;
    S->defs = hs_fm_get(F, root, "define", NULL);
    S->ndef = S->defs ? map_size(F, S->defs) : 0;
    S->emb = hs_fm_get(F, root, "embedding", NULL);
    S->namb = S->emb ? map_size(F, S->emb) : 0;
    S->dnode = calloc(S->ndef + 1, sizeof *S->dnode);
    S->dstate = calloc(S->ndef + 1, 1);
    S->anode = calloc(S->namb + 1, sizeof *S->anode);
    S->astate = calloc(S->namb + 1, 1);
    if (!S->dnode || !S->dstate || !S->anode || !S->astate)
        return hs_fm_oom(F);
    if ((S->defs && keys_into(F, S->defs, &S->dtab)) || (S->emb && keys_into(F, S->emb, &S->atab)))
        return F->err->code;
    return 0;
}

/* ---------- editing the root ---------- */

/* The mapping under key in the root, made when missing. */
static int section(fam *F, int root, const char *key, int tmpl)
{
    int v = hs_fm_get(F, root, key, NULL);
    if (v)
        return v;
    int k = hs_fm_add_scalar(F, key, strlen(key), tmpl, 1);
    int m = k ? hs_fm_add_map(F, tmpl) : 0;
    if (!m || hs_fm_append_pair(F, root, k, m))
        return 0;
    return m;
}

static int add_entry(fam *F, int map, const char *name, const char *text, int tmpl)
{
    int k = hs_fm_add_scalar(F, name, strlen(name), tmpl, 1);
    int v = k ? hs_fm_add_scalar(F, text, strlen(text), tmpl, 1) : 0;
    return v ? hs_fm_append_pair(F, map, k, v) : F->err->code;
}

static int add_define(fam *F, int root, int tmpl, const char *name, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int add_define(fam *F, int root, int tmpl, const char *name, const char *fmt, ...)
{
    int defs = section(F, root, "define", tmpl);
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
    int rc = add_entry(F, defs, name, text, tmpl);
    free(text);
    return rc;
}

/* A scalar of the root (potential, kinetic, ...) with more added:
 * "(old) + (more)", or more alone. */
static int add_to_scalar(fam *F, int root, const char *key, const char *more, int tmpl)
{
    yaml_node_t *r = NODEP(F, root);
    for (yaml_node_pair_t *p = r->data.mapping.pairs.start; p < r->data.mapping.pairs.top; p++) {
        const char *ks = str(F, p->key);
        if (!ks || strcmp(ks, key) != 0)
            continue;
        const char *old = str(F, p->value);
        if (!old)
            return hs_ytree_error(F->y, F->err, NODEP(F, p->value), "'%s' must be an "
                                  "expression, found %s", key, hs_ytree_kind(NODEP(F, p->value)));
        buf b = { 0 };
        if (bprintf(&b, "(%s) + (%s)", old, more))
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
    ld_tab tab;
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
    return hs_ld_tab_put(&P->tab, s, strlen(s), dim, NULL) < 0 ? hs_fm_oom(F) : 0;
}

static const char *const xyz[] = { "x", "y", "z" };

static int slen(fam *F, int id)
{
    yaml_node_t *n = NODEP(F, id);
    return n->type == YAML_SEQUENCE_NODE
               ? (int)(n->data.sequence.items.top - n->data.sequence.items.start) : -1;
}

static int item(fam *F, int seq, int i)
{
    return NODEP(F, seq)->data.sequence.items.start[i];
}

/* A list of dim expressions (dim 0: 2 or 3), else an error naming what. */
static int vec(fam *F, int id, int dim, const char *what, const char **out)
{
    int n = id ? slen(F, id) : -1;
    if (n < 0 || (dim ? n != dim : (n != 2 && n != 3)))
        return hs_ytree_error(F->y, F->err, id ? NODEP(F, id) : NULL, "%s must be a list of %s "
                              "expressions", what, dim == 3 ? "3" : dim == 4 ? "4" : "2 or 3"), -1;
    for (int i = 0; i < n; i++)
        if (!(out[i] = str(F, item(F, id, i))))
            return hs_ytree_error(F->y, F->err, NODEP(F, item(F, id, i)), "%s: each entry "
                                  "must be an expression", what), -1;
    return n;
}

static int check_keys(fam *F, int map, const char *const *allowed, size_t n, const char *what)
{
    size_t m = map_size(F, map);
    for (size_t i = 0; i < m; i++) {
        int k = NODEP(F, map)->data.mapping.pairs.start[i].key;
        const char *ks = str(F, k);
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

static int read_points(fam *F, int root, int map, pts *P)
{
    if (NODEP(F, map)->type != YAML_MAPPING_NODE)
        return hs_ytree_error(F->y, F->err, NODEP(F, map), "'points' must be a mapping name -> "
                              "[x, y] or [x, y, z]");
    for (size_t i = 0; i < map_size(F, map); i++) {
        yaml_node_pair_t p = NODEP(F, map)->data.mapping.pairs.start[i];
        const char *e[3], *nm = str(F, p.key);
        int dim = vec(F, p.value, 0, "a point", e);
        if (dim < 0 || !nm)
            return F->err->code ? F->err->code : HS_EXIT_MODEL;
        for (int c = 0; c < dim; c++) {
            char dn[160];
            snprintf(dn, sizeof dn, "%s_%s", nm, xyz[c]);
            if (add_define(F, root, item(F, p.value, c), dn, "%s", e[c]))
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
    if (NODEP(F, o)->type != YAML_MAPPING_NODE || map_size(F, o) != 1 ||
        check_keys(F, o, okeys, 3, "an orientation"))
        return F->err->code ? F->err->code
                            : hs_ytree_error(F->y, F->err, NODEP(F, o), "'orientation' must be "
                                             "one of {axes: [[z, angle], ...]}, {matrix: [[...], "
                                             "[...], [...]]}, {euler_parameters: [e0, e1, e2, e3]}");
    yaml_node_pair_t p = NODEP(F, o)->data.mapping.pairs.start[0];
    const char *kind = str(F, p.key);
    char nm[200];
    (void)kin;
    *euler = 0;
    if (strcmp(kind, "euler_parameters") == 0) {
        if (vec(F, p.value, 4, "'euler_parameters'", e) < 0)
            return F->err->code;
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
        if (slen(F, p.value) != 3)
            return hs_ytree_error(F->y, F->err, NODEP(F, p.value), "'matrix' must be 3 rows "
                                  "of 3 expressions");
        for (int i = 0; i < 3; i++) {
            const char *row[3];
            if (vec(F, item(F, p.value, i), 3, "a row of 'matrix'", row) < 0)
                return F->err->code;
            for (int j = 0; j < 3; j++) {
                snprintf(nm, sizeof nm, "%s_R%d%d", B, i + 1, j + 1);
                if (add_define(F, root, item(F, item(F, p.value, i), j), nm, "%s", row[j]))
                    return F->err->code;
            }
        }
        return 0;
    }
    /* axes: R = R_1 R_2 ... (each about a body axis after the previous) */
    int na = slen(F, p.value);
    if (na < 1)
        return hs_ytree_error(F->y, F->err, NODEP(F, p.value), "'axes' must be a list of "
                              "[axis, angle] pairs (axis x, y or z)");
    for (int s = 0; s < na; s++) {
        int pr = item(F, p.value, s);
        const char *ax[2];
        if (vec(F, pr, 2, "an [axis, angle] pair", ax) < 0)
            return F->err->code;
        if (strlen(ax[0]) != 1 || !strchr("xyz", ax[0][0]))
            return hs_ytree_error(F->y, F->err, NODEP(F, item(F, pr, 0)), "axis '%s': write "
                                  "x, y or z", ax[0]);
        char Rk[9][96];
        if (strlen(ax[1]) > 80)
            return hs_ytree_error(F->y, F->err, NODEP(F, item(F, pr, 1)), "an angle of 'axes' "
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
                rc = add_define(F, root, item(F, pr, 1), nm, "%s", Rk[i]);
            else
                rc = add_define(F, root, item(F, pr, 1), nm,
                                "%s_R%d_%d1*(%s) + %s_R%d_%d2*(%s) + %s_R%d_%d3*(%s)",
                                B, s, r + 1, Rk[c], B, s, r + 1, Rk[3 + c], B, s, r + 1,
                                Rk[6 + c]);
            if (rc)
                return F->err->code;
        }
    }
    return 0;
}

static int read_body(fam *F, int root, int key, int bm, pts *P, buf *kin)
{
    static const char *const bkeys[] = { "mass", "inertia", "position", "orientation", "points" };
    const char *B = str(F, key);
    if (NODEP(F, bm)->type != YAML_MAPPING_NODE || check_keys(F, bm, bkeys, 5, "a body"))
        return F->err->code ? F->err->code
                            : hs_ytree_error(F->y, F->err, NODEP(F, bm), "body '%s' must be a "
                                             "mapping (mass, inertia, position, orientation, "
                                             "points)", B);
    int mk, mass = hs_fm_get(F, bm, "mass", &mk), in = hs_fm_get(F, bm, "inertia", NULL),
            pos = hs_fm_get(F, bm, "position", NULL), ori = hs_fm_get(F, bm, "orientation", NULL),
            bp = hs_fm_get(F, bm, "points", NULL);
    if (!mass || !str(F, mass) || !pos)
        return hs_ytree_error(F->y, F->err, NODEP(F, key), "body '%s' needs 'mass' (an "
                              "expression) and 'position' (3 expressions)", B);
    const char *x[3], *e[4], *I[9];
    char nm[200];
    if (vec(F, pos, 3, "'position'", x) < 0)
        return F->err->code;
    for (int c = 0; c < 3; c++) {
        snprintf(nm, sizeof nm, "%s_%s", B, xyz[c]);
        if (add_define(F, root, item(F, pos, c), nm, "%s", x[c]))
            return F->err->code;
        snprintf(nm, sizeof nm, "%s_v%s", B, xyz[c]);
        if (add_define(F, root, item(F, pos, c), nm, "D(%s_%s)", B, xyz[c]))
            return F->err->code;
    }
    if (bprintf(kin, "%s0.5*(%s)*(%s_vx^2 + %s_vy^2 + %s_vz^2)", kin->len ? " + " : "",
                str(F, mass), B, B, B))
        return hs_fm_oom(F);
    int euler = 0;
    if (ori) {
        if (!in)
            return hs_ytree_error(F->y, F->err, NODEP(F, key), "body '%s' has an orientation "
                                  "but no 'inertia' ([I1, I2, I3] or a 3 x 3 matrix)", B);
        if (read_orientation(F, root, B, ori, kin, &euler, e))
            return F->err->code;
        int ni = slen(F, in);
        if (ni == 3 && NODEP(F, item(F, in, 0))->type == YAML_SCALAR_NODE) {
            if (vec(F, in, 3, "'inertia'", I) < 0)
                return F->err->code;
            I[4] = I[1], I[8] = I[2], I[0] = I[0];
            I[1] = I[2] = I[3] = I[5] = I[6] = I[7] = "0";
        } else if (ni == 3) {
            for (int r = 0; r < 3; r++)
                if (vec(F, item(F, in, r), 3, "a row of 'inertia'", I + 3 * r) < 0)
                    return F->err->code;
        } else {
            return hs_ytree_error(F->y, F->err, NODEP(F, in), "'inertia' must be [I1, I2, I3] "
                                  "(principal) or a 3 x 3 matrix in the body frame");
        }
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
                    if (bprintf(&w, "%s(%s)*D(%s)", L[r][c][0] < 0 ? " - " : c ? " + " : "",
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
        if (bprintf(kin, " + 0.5*("))
            return hs_fm_oom(F);
        int first = 1;
        for (int r = 0; r < 3; r++)
            for (int c = r; c < 3; c++) {
                if (strcmp(I[3 * r + c], "0") == 0)
                    continue;
                if (bprintf(kin, "%s%s(%s)*%s_w%d*%s_w%d", first ? "" : " + ", r == c ? "" : "2*",
                            I[3 * r + c], B, r + 1, B, c + 1))
                    return hs_fm_oom(F);
                first = 0;
            }
        if (bprintf(kin, "%s)", first ? "0" : ""))
            return hs_fm_oom(F);
        if (euler) {
            /* 2 J (e.e')^2 vanishes on the motion (e.e' = 0) and makes the
             * metric of the 4 parameters positive definite */
            if (bprintf(kin, " + 2*((%s) + (%s) + (%s))/3*((%s)*D(%s) + (%s)*D(%s) + (%s)*D(%s) "
                        "+ (%s)*D(%s))^2", I[0], I[4], I[8], e[0], e[0], e[1], e[1], e[2], e[2],
                        e[3], e[3]))
                return hs_fm_oom(F);
            int cons = section(F, root, "constraints", ori);
            if (!cons)
                return F->err->code;
            if (NODEP(F, cons)->type != YAML_MAPPING_NODE)
                return hs_ytree_error(F->y, F->err, NODEP(F, cons), "with Euler parameters, "
                                      "'constraints' must be a mapping (holosim adds %s_norm)", B);
            char t[1024];
            snprintf(t, sizeof t, "(%s)^2 + (%s)^2 + (%s)^2 + (%s)^2 - 1", e[0], e[1], e[2], e[3]);
            snprintf(nm, sizeof nm, "%s_norm", B);
            if (add_entry(F, cons, nm, t, ori))
                return F->err->code;
        }
    }
    if (bp) {
        if (!ori)
            return hs_ytree_error(F->y, F->err, NODEP(F, bp), "points of body '%s' need its "
                                  "'orientation'", B);
        if (NODEP(F, bp)->type != YAML_MAPPING_NODE)
            return hs_ytree_error(F->y, F->err, NODEP(F, bp), "'points' must be a mapping "
                                  "name -> [x, y, z] in the body frame");
        for (size_t i = 0; i < map_size(F, bp); i++) {
            yaml_node_pair_t p = NODEP(F, bp)->data.mapping.pairs.start[i];
            const char *b[3], *pn = str(F, p.key);
            if (!pn || vec(F, p.value, 3, "a body point", b) < 0)
                return F->err->code ? F->err->code : HS_EXIT_MODEL;
            char full[160];
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
    (void)mk;
    return 0;
}

/* One end of a spring: a named point or a list of 2 or 3 expressions;
 * the text of each coordinate into c[]. */
static int spring_end(fam *F, pts *P, int id, char c[3][200])
{
    const char *s = str(F, id);
    if (s) {
        long dim = hs_ld_tab_get(&P->tab, s, strlen(s));
        if (dim < 0)
            return hs_ytree_error(F->y, F->err, NODEP(F, id), "'%s' is not a named point "
                                  "(declare it under 'points' or a body's 'points', or give "
                                  "[x, y] or [x, y, z])", s), -1;
        for (int i = 0; i < dim; i++)
            snprintf(c[i], 200, "%s_%s", s, xyz[i]);
        return (int)dim;
    }
    const char *e[3];
    int dim = vec(F, id, 0, "an end of a spring", e);
    for (int i = 0; i < dim; i++)
        snprintf(c[i], 200, "(%.190s)", e[i]);
    return dim;
}

static int read_springs(fam *F, int root, int map, pts *P, buf *pot, buf *diss)
{
    static const char *const skeys[] = { "between", "k", "c", "length" };
    if (NODEP(F, map)->type != YAML_MAPPING_NODE)
        return hs_ytree_error(F->y, F->err, NODEP(F, map), "'springs' must be a mapping name -> "
                              "{between: [P, Q], k, c, length}");
    for (size_t i = 0; i < map_size(F, map); i++) {
        yaml_node_pair_t p = NODEP(F, map)->data.mapping.pairs.start[i];
        const char *S = str(F, p.key);
        if (!S || NODEP(F, p.value)->type != YAML_MAPPING_NODE ||
            check_keys(F, p.value, skeys, 4, "a spring"))
            return F->err->code ? F->err->code
                                : hs_ytree_error(F->y, F->err, NODEP(F, p.value), "a spring is "
                                                 "a mapping {between: [P, Q], k, c, length}");
        int bw = hs_fm_get(F, p.value, "between", NULL), k = hs_fm_get(F, p.value, "k", NULL),
            c = hs_fm_get(F, p.value, "c", NULL), l0 = hs_fm_get(F, p.value, "length", NULL);
        if (!bw || slen(F, bw) != 2)
            return hs_ytree_error(F->y, F->err, NODEP(F, bw ? bw : p.key), "spring '%s' needs "
                                  "'between: [P, Q]' (two points)", S);
        if ((k && !str(F, k)) || (c && !str(F, c)) || (l0 && !str(F, l0)) || (!k && !c))
            return hs_ytree_error(F->y, F->err, NODEP(F, p.value), "spring '%s': k, c and "
                                  "length are expressions (k or c required)", S);
        char a[3][200], b[3][200];
        int da = spring_end(F, P, item(F, bw, 0), a), db = da < 0 ? -1 : spring_end(F, P, item(F, bw, 1), b);
        if (da < 0 || db < 0)
            return F->err->code;
        if (da != db)
            return hs_ytree_error(F->y, F->err, NODEP(F, bw), "spring '%s' joins a %dD and a "
                                  "%dD point", S, da, db);
        buf t = { 0 };
        for (int d = 0; d < da; d++)
            if (bprintf(&t, "%s(%s - %s)^2", d ? " + " : "", a[d], b[d]))
                return hs_fm_oom(F);
        char nm[200];
        snprintf(nm, sizeof nm, "%s_length", S);
        int rc = add_define(F, root, bw, nm, "sqrt(%s)", t.s);
        free(t.s);
        if (rc)
            return rc;
        const char *L0 = l0 ? str(F, l0) : "0";
        snprintf(nm, sizeof nm, "%s_force", S);
        buf f = { 0 };
        if ((k && bprintf(&f, "(%s)*(%s_length - (%s))", str(F, k), S, L0)) ||
            (c && bprintf(&f, "%s(%s)*D(%s_length)", k ? " + " : "", str(F, c), S)))
            return hs_fm_oom(F);
        rc = add_define(F, root, p.value, nm, "%s", f.s);
        free(f.s);
        if (rc)
            return rc;
        if ((k && bprintf(pot, "%s0.5*(%s)*(%s_length - (%s))^2", pot->len ? " + " : "",
                          str(F, k), S, L0)) ||
            (c && bprintf(diss, "%s0.5*(%s)*D(%s_length)^2", diss->len ? " + " : "", str(F, c), S)))
            return hs_fm_oom(F);
    }
    return 0;
}

/* forces[q_i] += -dR/dq_i' for the dissipation R. */
static int dissipation_forces(fam *F, sctx *S, int root, const char *R, int tmpl)
{
    if (hs_fm_get(F, root, "embedding", NULL))
        return hs_ytree_error(F->y, F->err, NODEP(F, tmpl), "a dissipation function (or a "
                              "damper) needs the Cartesian or Lagrangian form: in the embedding "
                              "form the forces speak of the ambient names");
    int saved = S->node;
    int tn = hs_fm_add_scalar(F, R, strlen(R), tmpl, 1);
    if (!tn)
        return F->err->code;
    S->node = tn;
    const hs_node *e = parse_text(S, R, strlen(R), 0);
    S->node = saved;
    if (!e)
        return F->err->code ? F->err->code : HS_EXIT_MODEL;
    int fk, forces = hs_fm_get(F, root, "forces", &fk);
    if (forces && NODEP(F, forces)->type == YAML_SEQUENCE_NODE)
        return hs_ytree_error(F->y, F->err, NODEP(F, forces), "with a dissipation function, "
                              "write 'forces' as a mapping coordinate -> force");
    if (!forces && !(forces = section(F, root, "forces", tmpl)))
        return F->err->code;
    for (size_t i = 0; i < S->n; i++) {
        const hs_node *g = hs_diff(S->d, e, S->v[i]);
        if (!g || hs_dag_failed(S->d))
            return hs_ytree_error(F->y, F->err, NODEP(F, tmpl), "dissipation: %s",
                                  hs_dag_failed(S->d) ? hs_dag_error(S->d)->msg : "out of memory");
        if (hs_is_num(g, 0))
            continue;
        buf b = { 0 };
        if (bprintf(&b, "-") || print_node(S, g, &b))
            return hs_fm_oom(F);
        const char *qn = hs_dag_symbol_name(S->d, S->q[i]);
        int done = 0;
        yaml_node_t *fm = NODEP(F, forces);
        for (size_t z = 0; z < map_size(F, forces) && !done; z++) {
            yaml_node_pair_t *p = &fm->data.mapping.pairs.start[z];
            const char *ks = str(F, p->key), *old = str(F, p->value);
            if (!ks || strcmp(ks, qn) != 0 || !old)
                continue;
            buf c = { 0 };
            if (bprintf(&c, "(%s) + %s", old, b.s))
                return hs_fm_oom(F);
            int pv = p->value;
            int id = hs_fm_add_scalar(F, c.s, c.len, pv, 1);
            free(c.s);
            if (!id)
                return F->err->code;
            NODEP(F, forces)->data.mapping.pairs.start[z].value = id;
            done = 1;
        }
        int rc = done ? 0 : add_entry(F, forces, qn, b.s, tmpl);
        free(b.s);
        if (rc)
            return rc;
    }
    (void)fk;
    return 0;
}

/* Every scalar under id with D(...) written out (new nodes in place). */
static int expand_D_tree(fam *F, sctx *S, int id, int *out)
{
    yaml_node_t *n = NODEP(F, id);
    *out = id;
    if (n->type == YAML_SCALAR_NODE) {
        const char *t = (const char *)n->data.scalar.value;
        size_t len = n->data.scalar.length;
        if (!strstr(t, "D("))
            return 0;
        buf b = { 0 };
        int changed = 0;
        S->node = id;
        int rc = rewrite_D(S, t, len, 0, &b, &changed);
        if (!rc && changed) {
            int nid = hs_fm_add_scalar(F, b.s, b.len, id, 1);
            if (!nid)
                rc = F->err->code;
            *out = nid;
        }
        free(b.s);
        return rc;
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        int len = slen(F, id);
        for (int i = 0; i < len; i++) {
            int o;
            if (expand_D_tree(F, S, item(F, id, i), &o))
                return F->err->code;
            NODEP(F, id)->data.sequence.items.start[i] = o;
        }
    } else if (n->type == YAML_MAPPING_NODE) {
        for (size_t i = 0; i < map_size(F, id); i++) {
            int o;
            if (expand_D_tree(F, S, NODEP(F, id)->data.mapping.pairs.start[i].value, &o))
                return F->err->code;
            NODEP(F, id)->data.mapping.pairs.start[i].value = o;
        }
    }
    return 0;
}

/* Whether any scalar of the file holds D( (a cheap scan of the text). */
static int text_has_D(fam *F)
{
    const char *t = F->y->text;
    for (const char *p = t; (p = strstr(p, "D(")); p++)
        if (p == t || !(isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.'))
            return 1;
    return 0;
}

int hs_bd_uses(fam *F, int root)
{
    for (int k = 0; k < NKEYS; k++)
        if (hs_fm_get(F, root, new_keys[k], NULL))
            return 1;
    return text_has_D(F);
}

static const char *const d_sections[] = {
    "define", "potential", "forces", "outputs", "events", "kinetic", "lagrangian",
    "constraints", "embedding", "mass",
};

int hs_bd_expand(fam *F, int root)
{
    int key[NKEYS], val[NKEYS];
    for (int k = 0; k < NKEYS; k++)
        val[k] = hs_fm_get(F, root, new_keys[k], &key[k]);
    /* the new keys leave the root: the loader reads format 1 */
    yaml_node_t *r = NODEP(F, root);
    yaml_node_pair_t *w = r->data.mapping.pairs.start;
    for (yaml_node_pair_t *p = r->data.mapping.pairs.start; p < r->data.mapping.pairs.top; p++) {
        const char *ks = str(F, p->key);
        int drop = 0;
        for (int k = 0; k < NKEYS && ks; k++)
            drop |= strcmp(ks, new_keys[k]) == 0;
        if (!drop)
            *w++ = *p;
    }
    r->data.mapping.pairs.top = w;
    pts P = { { 0 }, NULL, 0, 0 };
    buf kin = { 0 }, pot = { 0 }, diss = { 0 };
    sctx S;
    int rc = 0, have_S = 0;
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
        for (size_t i = 0; !rc && i < map_size(F, val[K_BODIES]); i++) {
            yaml_node_pair_t p = NODEP(F, val[K_BODIES])->data.mapping.pairs.start[i];
            rc = read_body(F, root, p.key, p.value, &P, &kin);
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
            rc = bprintf(&neg, "-(%s)", pot.s) ? hs_fm_oom(F)
                 : add_to_scalar(F, root, "lagrangian", neg.s, key[K_SPRINGS]);
            free(neg.s);
        } else {
            rc = add_to_scalar(F, root, "potential", pot.s, key[K_SPRINGS]);
        }
    }
    if (!rc && val[K_DISS]) {
        const char *R = str(F, val[K_DISS]);
        if (!R)
            rc = hs_ytree_error(F->y, F->err, NODEP(F, val[K_DISS]), "'dissipation' must be "
                                "an expression R(t, q, q') (forces -dR/dq')");
        else if (bprintf(&diss, "%s(%s)", diss.len ? " + " : "", R))
            rc = hs_fm_oom(F);
    }
    if (!rc && (diss.len || text_has_D(F) || kin.len)) {
        rc = sctx_init(&S, F, root);
        have_S = 1;
    }
    if (!rc && diss.len)
        rc = dissipation_forces(F, &S, root, diss.s,
                                val[K_DISS] ? val[K_DISS] : key[K_SPRINGS]);
    for (size_t s = 0; !rc && have_S && s < sizeof d_sections / sizeof *d_sections; s++) {
        int v = hs_fm_get(F, root, d_sections[s], NULL), o;
        if (!v)
            continue;
        rc = expand_D_tree(F, &S, v, &o);
        if (!rc && o != v) {
            yaml_node_t *rr = NODEP(F, root);
            for (yaml_node_pair_t *p = rr->data.mapping.pairs.start; p < rr->data.mapping.pairs.top; p++)
                if (p->value == v)
                    p->value = o;
        }
    }
    if (have_S)
        sctx_free(&S);
    for (size_t i = 0; i < P.n; i++)
        free(P.names[i]);
    free(P.names);
    hs_ld_tab_free(&P.tab);
    free(kin.s);
    free(pot.s);
    free(diss.s);
    return rc;
}
