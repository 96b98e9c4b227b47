/* Indexed families (internal.h): a mapping key or list item that holds a
 * range `name[i=a..b]` is repeated for each i (bounds: expressions of
 * parameters and outer indices), everything under it rewritten with i
 * bound; `x[e]` in any expression is the name x_E (E the value of e), checked
 * against the declared ranges once the whole file is expanded;
 * `sum(i=a..b, body)` and `prod(...)` are written out; a list parameter
 * `L: [..]` is L_1, L_2, ...; `mass` may be a mapping of entries
 * (`x[i=1..N]: m`, `"x[i=2..N], x[i-1]": m/6`) that adds up into the
 * format-1 matrix. The result is plain format 1: the loader reads it as if
 * written out by hand. */
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>



/* ---------- the tree ---------- */

/* The ranges declared in text t (a key or item), in order: name [s, e),
 * range [r0, r1). */
typedef struct rng {
    size_t s, e, r0, r1;
} rng;

static int ranges_of(const char *t, size_t len, rng *r, int max)
{
    int nr = 0;
    for (size_t j = 1; j < len; j++)
        if (t[j] == '[' && hs_fm_is_id((unsigned char)t[j - 1])) {
            size_t cl = hs_fm_close_of(t, j, len), eq;
            for (size_t e = j + 1; e < cl && nr < max;) {
                size_t c = hs_fm_comma_of(t, e, cl), ne = hs_fm_binding_at(t, e, c, &eq);
                if (ne) {
                    size_t s = e;
                    while (isspace((unsigned char)t[s]))
                        s++;
                    r[nr++] = (rng){ s, ne, eq + 1, c };
                }
                e = c + 1;
            }
            j = cl;
        }
    return nr;
}

static int copy(fam *F, int id, int decl, int *out);

/* The note of the index values bound now ("i = 3, j = 2"). */
static int make_note(fam *F)
{
    hs_ytree *y = F->y;
    char nb[FM_MAX_ENV * 96];
    size_t len = 0;
    for (int k = 0; k < F->nenv; k++) {      /* "i = 3, j = 2" */
        size_t nl = F->env[k].len < 64 ? F->env[k].len : 64;
        if (k)
            memcpy(nb + len, ", ", 2), len += 2;
        memcpy(nb + len, F->env[k].name, nl);
        len += nl;
        memcpy(nb + len, " = ", 3);
        len += 3 + hs_fm_fmt_long(nb + len + 3, F->env[k].val);
    }
    if (!F->nenv) {
        F->note = -1;
        return 0;
    }
    if (hs_fm_grow((void **)&y->notes, &F->capn, y->nnotes + len + 1, 1))
        return hs_fm_oom(F);
    F->note = (long)y->nnotes;
    memcpy(y->notes + y->nnotes, nb, len);
    y->notes[y->nnotes + len] = '\0';
    y->nnotes += len + 1;
    return 0;
}

/* Expand a key (or item) with ranges: for each value of range k, then
 * the leaf: emit(F, ctx). */
typedef int (*leaf_fn)(fam *F, void *ctx);

/* A line of the derivation's list of families: the section, the template
 * as written, its first range's values (the outermost family only). */
static int record_family(fam *F, const char *t, const rng *r, int nr, long lo, long hi)
{
    hs_lang_info *si = F->info;
    size_t old = si->families ? strlen(si->families) : 0;
    size_t tl = strlen(t) < 200 ? strlen(t) : 200;
    char *p = realloc(si->families, old + tl + strlen(F->section) + 128);
    if (!p)
        return hs_fm_oom(F);
    si->families = p;
    (void)nr;
    snprintf(p + old, tl + strlen(F->section) + 128, "# family in %s: %.*s (%.*s = %ld..%ld, %ld "
             "entr%s)\n", F->section, (int)tl, t, (int)(r[0].e - r[0].s), t + r[0].s, lo, hi,
             hi >= lo ? hi - lo + 1 : 0, hi - lo == 0 ? "y" : "ies");
    return 0;
}

static int each(fam *F, int tmpl, const char *t, const rng *r, int nr, int k, leaf_fn fn,
                void *ctx)
{
    if (k == nr) {
        long saved = F->note;
        int rc = make_note(F) || fn(F, ctx);
        F->note = saved;
        return rc ? F->err->code : 0;
    }
    long lo, hi;
    if (hs_fm_eval_range(F, tmpl, t, r[k].r0, r[k].r1, &lo, &hi))
        return F->err->code;
    if (F->nenv == 0 && F->section && record_family(F, t, r, nr, lo, hi))
        return F->err->code;
    for (long v = lo; v <= hi; v++) {
        if (hs_fm_push(F, tmpl, t + r[k].s, r[k].e - r[k].s, v))
            return F->err->code;
        int rc = each(F, tmpl, t, r, nr, k + 1, fn, ctx);
        F->nenv--;
        if (rc)
            return rc;
    }
    return 0;
}

typedef struct pairctx {
    int key, val, map, decl;
} pairctx;

static int emit_pair(fam *F, void *ctx)
{
    pairctx *c = ctx;
    yaml_node_t *k = NODEP(F, c->key);
    int nk = hs_fm_rewrite_scalar(F, c->key, 0, k->data.scalar.length, c->decl ? RW_DECL : RW_KEY);
    int nv;
    if (!nk || copy(F, c->val, 0, &nv))
        return F->err->code ? F->err->code : hs_fm_oom(F);
    return hs_fm_append_pair(F, c->map, nk, nv);
}

typedef struct itemctx {
    int item, seq, decl;
} itemctx;

static int emit_item(fam *F, void *ctx)
{
    itemctx *c = ctx;
    yaml_node_t *n = NODEP(F, c->item);
    const char *t = (const char *)n->data.scalar.value;
    size_t len = n->data.scalar.length;
    for (size_t e = 0; e <= len;) {            /* x[i=1..N], y[i]: one item each */
        size_t cm = hs_fm_comma_of(t, e, len);
        size_t a = e, b = cm;
        while (a < b && isspace((unsigned char)t[a]))
            a++;
        while (b > a && isspace((unsigned char)t[b - 1]))
            b--;
        int ni = hs_fm_rewrite_scalar(F, c->item, a, b, c->decl ? RW_DECL : RW_KEY);
        if (!ni || hs_fm_append_item(F, c->seq, ni))
            return F->err->code ? F->err->code : hs_fm_oom(F);
        e = cm + 1;
    }
    return 0;
}

/* A list parameter L: [a, b, ...] -> L_1: a, L_2: b, ... */
static int list_param(fam *F, int key, int val, int map)
{
    yaml_node_t *k = NODEP(F, key);
    const char *ks = hs_ytree_str(k);
    if (!ks)
        return hs_ytree_error(F->y, F->err, k, "a parameter's name must be a scalar");
    yaml_node_t *v = NODEP(F, val);
    size_t n = (size_t)(v->data.sequence.items.top - v->data.sequence.items.start);
    if (n == 0)
        return hs_ytree_error(F->y, F->err, v, "list parameter '%s' is empty", ks);
    for (size_t i = 0; i < n; i++) {
        int item = NODEP(F, val)->data.sequence.items.start[i];
        char name[200];
        int len = snprintf(name, sizeof name, "%s_%zu", ks, i + 1);
        long idx = (long)i + 1;
        if (len >= (int)sizeof name)
            return hs_ytree_error(F->y, F->err, k, "name too long");
        if (hs_fm_declare(F, name, strlen(ks), 1, &idx))
            return F->err->code;
        int nk = hs_fm_add_scalar(F, name, (size_t)len, key, 1), nv;
        if (!nk || copy(F, item, 0, &nv) || hs_fm_append_pair(F, map, nk, nv))
            return F->err->code ? F->err->code : hs_fm_oom(F);
    }
    return 0;
}

/* Copy node id with everything under it rewritten; decl: its keys (items)
 * declare names. */
static int copy(fam *F, int id, int decl, int *out)
{
    yaml_node_t *n = NODEP(F, id);
    if (n->type == YAML_SCALAR_NODE) {
        *out = hs_fm_rewrite_scalar(F, id, 0, n->data.scalar.length, RW_EXPR);
        return *out ? 0 : F->err->code ? F->err->code : hs_fm_oom(F);
    }
    if (n->type == YAML_SEQUENCE_NODE) {
        int s = hs_fm_add_seq(F, id);
        if (!s)
            return F->err->code;
        size_t len = (size_t)(NODEP(F, id)->data.sequence.items.top -
                              NODEP(F, id)->data.sequence.items.start);
        for (size_t i = 0; i < len; i++) {
            int item = NODEP(F, id)->data.sequence.items.start[i];
            yaml_node_t *it = NODEP(F, item);
            rng r[FM_MAX_ENV];
            int nr = it->type == YAML_SCALAR_NODE
                         ? ranges_of((const char *)it->data.scalar.value,
                                     it->data.scalar.length, r, FM_MAX_ENV) : 0;
            if (nr || (decl == 3 && it->type == YAML_SCALAR_NODE)) {
                itemctx c = { item, s, decl == 3 };
                if (each(F, item, (const char *)it->data.scalar.value, r, nr, 0, emit_item, &c))
                    return F->err->code;
                continue;
            }
            int ni;
            if (copy(F, item, 0, &ni) || hs_fm_append_item(F, s, ni))
                return F->err->code;
        }
        *out = s;
        return 0;
    }
    if (n->type != YAML_MAPPING_NODE) {
        *out = id;
        return 0;
    }
    int mp = hs_fm_add_map(F, id);
    if (!mp)
        return F->err->code;
    size_t len = (size_t)(NODEP(F, id)->data.mapping.pairs.top -
                          NODEP(F, id)->data.mapping.pairs.start);
    for (size_t i = 0; i < len; i++) {
        yaml_node_pair_t p = NODEP(F, id)->data.mapping.pairs.start[i];
        yaml_node_t *k = NODEP(F, p.key);
        if (decl == 2 && NODEP(F, p.value)->type == YAML_SEQUENCE_NODE) {
            if (list_param(F, p.key, p.value, mp))
                return F->err->code;
            continue;
        }
        rng r[FM_MAX_ENV];
        int nr = k->type == YAML_SCALAR_NODE
                     ? ranges_of((const char *)k->data.scalar.value, k->data.scalar.length,
                                 r, FM_MAX_ENV) : 0;
        if (k->type == YAML_SCALAR_NODE) {
            pairctx c = { p.key, p.value, mp, decl == 1 || decl == 2 };
            if (each(F, p.key, (const char *)k->data.scalar.value, r, nr, 0, emit_pair, &c))
                return F->err->code;
            continue;
        }
        int nv;
        if (copy(F, p.value, 0, &nv) || hs_fm_append_pair(F, mp, p.key, nv))
            return F->err->code;
    }
    *out = mp;
    return 0;
}

/* The draw section: its `points` declare names (P[i=0..N]: [x[i], y[i]]),
 * everything else in it reads them (polylines: [[P[i=0..N]]]). */
static int copy_draw(fam *F, int id, int *out)
{
    if (NODEP(F, id)->type != YAML_MAPPING_NODE)
        return copy(F, id, 0, out);
    int mp = hs_fm_add_map(F, id);
    if (!mp)
        return F->err->code;
    size_t len = (size_t)(NODEP(F, id)->data.mapping.pairs.top -
                          NODEP(F, id)->data.mapping.pairs.start);
    for (size_t i = 0; i < len; i++) {
        yaml_node_pair_t p = NODEP(F, id)->data.mapping.pairs.start[i];
        const char *ks = hs_ytree_str(NODEP(F, p.key));
        int nv;
        if (copy(F, p.value, ks && strcmp(ks, "points") == 0, &nv) ||
            hs_fm_append_pair(F, mp, p.key, nv))
            return F->err->code;
    }
    *out = mp;
    return 0;
}

/* ---------- the whole file ---------- */

static const char *const verbatim[] = { "format", "name", "simulate" };
static const char *const declaring[] = {
    "parameters", "define", "embedding", "constraints", "outputs", "events", "coordinates",
    "points", "bodies", "springs",
};

static int in_list(const char *s, const char *const *l, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        if (strcmp(s, l[i]) == 0)
            return 1;
    return 0;
}

/* Whether the file uses families: a '[' or sum( / prod( in a scalar of a
 * section that is not verbatim, or a list parameter. */
int hs_fm_uses(fam *F, int root)
{
    yaml_node_t *r = NODEP(F, root);
    for (yaml_node_pair_t *p = r->data.mapping.pairs.start; p < r->data.mapping.pairs.top; p++) {
        const char *ks = hs_ytree_str(NODEP(F, p->key));
        if (!ks || in_list(ks, verbatim, 3))
            continue;
        /* the nodes of the section are a contiguous run of ids */
        int hi = p + 1 < r->data.mapping.pairs.top ? (p + 1)->key : (int)(F->doc->nodes.top -
                                                                          F->doc->nodes.start) + 1;
        for (int id = p->value; id < hi; id++) {
            yaml_node_t *n = NODEP(F, id);
            if (strcmp(ks, "parameters") == 0 && n->type == YAML_SEQUENCE_NODE)
                return 1;
            if (n->type != YAML_SCALAR_NODE)
                continue;
            const char *s = (const char *)n->data.scalar.value;
            if (strchr(s, '[') || strstr(s, "sum(") || strstr(s, "prod(") || strstr(s, "sum (") ||
                strstr(s, "prod ("))
                return 1;
        }
    }
    return 0;
}

void hs_fm_free(fam *F)
{
    hs_strmap_free(&F->ptab);
    hs_strmap_free(&F->names);
    hs_strmap_free(&F->bases);
    free(F->pstate);
    free(F->pval);
    free(F->pused);
    free(F->out);
    for (size_t i = 0; i < F->nstr; i++)
        free(F->str[i]);
    free(F->str);
    free(F->base);
    free(F->ref);
    hs_dag_free(F->dag);
}

/* Every reference names a declared member of its family. */
static int check_refs(fam *F)
{
    for (size_t r = 0; r < F->nref; r++) {
        fm_ref *R = &F->ref[r];
        const char *nm = R->name;
        if (hs_strmap_get(&F->names, nm, strlen(nm)) >= 0)
            continue;
        fm_base *B = &F->base[R->base];
        char want[160] = "", got[96];
        size_t bl = 0;
        for (size_t i = 0; i < F->bases.cap; i++)
            if (F->bases.slot[i].s && F->bases.slot[i].val == (long)R->base)
                bl = F->bases.slot[i].len;
        int gl = snprintf(got, sizeof got, "%.*s[", (int)bl, nm);
        for (int d = 0; d < R->ndim && gl < (int)sizeof got; d++)
            gl += snprintf(got + gl, sizeof got - (size_t)gl, "%s%ld", d ? ", " : "", R->idx[d]);
        snprintf(got + (gl < (int)sizeof got ? gl : (int)sizeof got - 1),
                 sizeof got - (size_t)(gl < (int)sizeof got ? gl : (int)sizeof got - 1), "]");
        yaml_node_t *at = NODEP(F, R->node);
        if (B->ndim == -2 || B->hi[0] < 0)
            return hs_ytree_error_in(F->y, F->err, at, R->off, "'%.*s' is not indexed: no family "
                                     "or list parameter declares %s", (int)bl, nm, got);
        if (B->ndim < 0)                     /* members of different shapes */
            return hs_ytree_error_in(F->y, F->err, at, R->off, "%s is not a member of the "
                                     "family %.*s", got, (int)bl, nm);
        if (B->ndim != R->ndim)
            return hs_ytree_error_in(F->y, F->err, at, R->off, "%s: %.*s has %d ind%s", got,
                                     (int)bl, nm, B->ndim, B->ndim == 1 ? "ex" : "ices");
        size_t wl = 0;
        for (int d = 0; d < B->ndim && d < FM_MAX_DIM; d++)
            wl += (size_t)snprintf(want + wl, sizeof want - wl, "%s%ld..%ld", d ? ", " : "",
                                   B->lo[d], B->hi[d]);
        return hs_ytree_error_in(F->y, F->err, at, R->off, "%s is outside the family %.*s "
                                 "(%.*s[%s])", got, (int)bl, nm, (int)bl, nm, want);
    }
    return 0;
}

/* The parameters that size a family or give an index, kept in the model:
 * another point of a sweep with a new value of one needs a new load
 * (hs_model_repoint refuses it). */
static int record_structural(fam *F)
{
    hs_lang_info *si = F->info;
    for (size_t i = 0; i < F->npar; i++) {
        if (!F->pused[i])
            continue;
        char **sp = realloc(si->spar, (si->nspar + 1) * sizeof *sp);
        if (!sp)
            return hs_fm_oom(F);
        si->spar = sp;
        const char *nm = hs_ytree_str(NODEP(F, NODEP(F, F->params)->data.mapping.pairs.start[i].key));
        if (!(si->spar[si->nspar] = strdup(nm ? nm : "")))
            return hs_fm_oom(F);
        si->nspar++;
    }
    return 0;
}

/* The new root's content moves into node 1 (libyaml's root is the first
 * node); the copy keeps an empty scalar. */
static int swap_root(fam *F, int nroot)
{
    yaml_node_t *r = NODEP(F, 1), *n = NODEP(F, nroot);
    yaml_char_t *empty = malloc(1);
    if (!empty)
        return hs_fm_oom(F);
    empty[0] = '\0';
    free(r->data.mapping.pairs.start);
    r->data.mapping = n->data.mapping;
    yaml_node_t blank = *n;
    blank.type = YAML_SCALAR_NODE;
    blank.data.scalar.value = empty;
    blank.data.scalar.length = 0;
    blank.data.scalar.style = YAML_PLAIN_SCALAR_STYLE;
    *n = blank;
    return 0;
}

/* The file's parameters as a table: name -> index (range bounds and indices
 * are evaluated from them, hs_fm_eval_range). */
int hs_fm_params(fam *F)
{
    int rc = 0;
    F->params = hs_fm_get(F, 1, "parameters", NULL);
    if (F->params && NODEP(F, F->params)->type == YAML_MAPPING_NODE) {
        yaml_node_t *pm = NODEP(F, F->params);
        F->npar = (size_t)(pm->data.mapping.pairs.top - pm->data.mapping.pairs.start);
        F->pstate = calloc(F->npar + 1, 1);
        F->pval = calloc(F->npar + 1, sizeof *F->pval);
        F->pused = calloc(F->npar + 1, 1);
        if (!F->pstate || !F->pval || !F->pused)
            rc = hs_fm_oom(F);
        for (size_t i = 0; i < F->npar && !rc; i++) {
            const char *ks = hs_ytree_str(NODEP(F, NODEP(F, F->params)->data.mapping.pairs.start[i].key));
            if (ks && hs_strmap_put(&F->ptab, ks, strlen(ks), (long)i, NULL) < 0)
                rc = hs_fm_oom(F);
        }
    } else {
        F->params = 0;
    }
    return rc;
}

/* Every family, sum, list parameter and mass entry written out; the new
 * root replaces the file's. */
int hs_fm_expand(fam *F)
{
    int rc = 0, nroot = hs_fm_add_map(F, 1);
    size_t np = (size_t)(NODEP(F, 1)->data.mapping.pairs.top -
                         NODEP(F, 1)->data.mapping.pairs.start);
    for (size_t i = 0; i < np && !rc && nroot; i++) {
        yaml_node_pair_t p = NODEP(F, 1)->data.mapping.pairs.start[i];
        const char *ks = hs_ytree_str(NODEP(F, p.key));
        int nv = p.value;
        F->section = ks;
        if (ks && strcmp(ks, "draw") == 0) {
            rc = copy_draw(F, p.value, &nv);
        } else if (!in_list(ks, verbatim, 3)) {
            int decl = !in_list(ks, declaring, 10) ? 0 : strcmp(ks, "parameters") == 0 ? 2
                     : strcmp(ks, "coordinates") == 0 ? 3 : 1;
            rc = copy(F, p.value, decl, &nv);
        }
        if (!rc)
            rc = hs_fm_append_pair(F, nroot, p.key, nv);
    }
    if (!nroot)
        rc = F->err->code;
    if (!rc)
        rc = check_refs(F) || record_structural(F);
    if (!rc)
        rc = swap_root(F, nroot);
    int mkey, mass = rc ? 0 : hs_fm_get(F, 1, "mass", &mkey);
    if (mass && NODEP(F, mass)->type == YAML_MAPPING_NODE)
        rc = hs_fm_mass_entries(F, 1, mass, mkey);
    return rc;
}
