/* The mass matrix by entries (internal.h): a mapping of coordinates (or
 * pairs of coordinates) to expressions, families of entries included, into
 * the format-1 list or matrix. */
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>


/* ---------- mass by entries ---------- */

static int split_key(const char *s, size_t *a0, size_t *a1, size_t *b0, size_t *b1)
{
    size_t len = strlen(s), c = hs_fm_comma_of(s, 0, len);
    *a0 = 0, *a1 = c;
    while (*a0 < *a1 && isspace((unsigned char)s[*a0]))
        ++*a0;
    while (*a1 > *a0 && isspace((unsigned char)s[*a1 - 1]))
        --*a1;
    if (c >= len) {
        *b0 = *a0, *b1 = *a1;
        return 1;
    }
    *b0 = c + 1, *b1 = len;
    while (*b0 < *b1 && isspace((unsigned char)s[*b0]))
        ++*b0;
    while (*b1 > *b0 && isspace((unsigned char)s[*b1 - 1]))
        --*b1;
    return hs_fm_comma_of(s, c + 1, len) < len ? -1 : 2;
}

/* An entry of the mapping: its place (i <= j) and value; its key. */
typedef struct ent {
    size_t i, j;
    int val, key;
} ent;

/* The format-1 list from the places: the diagonal, or the n x n matrix
 * (one scalar 0 shared by the empty places); it replaces the mapping. */
static int build_list(fam *F, int root, int mass, int mkey, int coords, int emb, size_t n,
                      int diag, const ent *e, const long *first, const int *val, size_t np)
{
    int rc = 0;
    yaml_node_t *cn;
    int list = 0, zero = 0;
    if (!(list = hs_fm_add_seq(F, mass)))
        rc = F->err->code;
    if (!rc && diag) {
        int *d = calloc(n ? n : 1, sizeof *d);
        if (!d)
            rc = hs_fm_oom(F);
        for (size_t p = 0; p < np && !rc; p++)
            d[e[first[p]].i] = val[p];
        for (size_t i = 0; i < n && !rc; i++) {
            if (!d[i]) {
                cn = NODEP(F, coords);
                int nid = emb ? cn->data.mapping.pairs.start[i].key : cn->data.sequence.items.start[i];
                rc = hs_ytree_error(F->y, F->err, NODEP(F, mkey), "'mass' has no entry for "
                                    "'%s' (the diagonal needs one for each %s)",
                                    hs_ytree_str(NODEP(F, nid)), emb ? "ambient name" : "coordinate");
                break;
            }
            rc = hs_fm_append_item(F, list, d[i]);
        }
        free(d);
    } else if (!rc) {
        int *mtx = calloc(n ? n * n : 1, sizeof *mtx);
        if (!mtx || !(zero = hs_fm_add_scalar(F, "0", 1, mkey, 1)))
            rc = F->err->code ? F->err->code : hs_fm_oom(F);
        for (size_t p = 0; p < np && !rc; p++) {
            size_t i = e[first[p]].i, j = e[first[p]].j;
            mtx[i * n + j] = mtx[j * n + i] = val[p];
        }
        for (size_t i = 0; i < n && !rc; i++) {
            int row = hs_fm_add_seq(F, mass);
            if (!row || hs_fm_append_item(F, list, row)) {
                rc = F->err->code;
                break;
            }
            for (size_t j = 0; j < n && !rc; j++)
                rc = hs_fm_append_item(F, row, mtx[i * n + j] ? mtx[i * n + j] : zero);
        }
        free(mtx);
    }
    if (!rc) {                               /* the list replaces the mapping */
        yaml_node_t *root_n = NODEP(F, root);
        for (yaml_node_pair_t *p = root_n->data.mapping.pairs.start;
             p < root_n->data.mapping.pairs.top; p++)
            if (p->value == mass)
                p->value = list;
    }
    return rc;
}

/* `mass` given as a mapping of entries: into the format-1 list (diagonal)
 * or matrix, entries of the same place added up. */
int hs_fm_mass_entries(fam *F, int root, int mass, int mkey)
{
    int coords = hs_fm_get(F, root, "embedding", NULL);
    int emb = coords != 0;
    if (!emb)
        coords = hs_fm_get(F, root, "coordinates", NULL);
    if (!coords || NODEP(F, coords)->type != (emb ? YAML_MAPPING_NODE : YAML_SEQUENCE_NODE))
        return 0;                            /* the loader says what is missing */
    yaml_node_t *cn = NODEP(F, coords);
    size_t n = emb ? (size_t)(cn->data.mapping.pairs.top - cn->data.mapping.pairs.start)
                   : (size_t)(cn->data.sequence.items.top - cn->data.sequence.items.start);
    hs_strmap ix = { 0 };
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        cn = NODEP(F, coords);
        int nid = emb ? cn->data.mapping.pairs.start[i].key : cn->data.sequence.items.start[i];
        const char *s = hs_ytree_str(NODEP(F, nid));
        if (s && hs_strmap_put(&ix, s, strlen(s), (long)i, NULL) < 0)
            rc = hs_fm_oom(F);
    }
    yaml_node_t *mn = NODEP(F, mass);
    size_t ne = (size_t)(mn->data.mapping.pairs.top - mn->data.mapping.pairs.start);
    ent *e = calloc(ne ? ne : 1, sizeof *e);
    int diag = 1;
    if (!e)
        rc = hs_fm_oom(F);
    for (size_t z = 0; z < ne && !rc; z++) {
        yaml_node_pair_t p = NODEP(F, mass)->data.mapping.pairs.start[z];
        const char *ks = hs_ytree_str(NODEP(F, p.key));
        if (!ks) {
            rc = hs_ytree_error(F->y, F->err, NODEP(F, p.key), "a mass entry's key is a "
                                "coordinate or two separated by a comma");
            break;
        }
        size_t a0, a1, b0, b1;
        int parts = split_key(ks, &a0, &a1, &b0, &b1);
        long r = hs_strmap_get(&ix, ks + a0, a1 - a0), c = hs_strmap_get(&ix, ks + b0, b1 - b0);
        if (parts < 0 || r < 0 || c < 0) {
            size_t u0 = r < 0 ? a0 : b0, u1 = r < 0 ? a1 : b1;
            rc = parts < 0 ? hs_ytree_error(F->y, F->err, NODEP(F, p.key), "a mass entry's key "
                                            "is a coordinate or two separated by a comma, "
                                            "found '%s'", ks)
                           : hs_ytree_error(F->y, F->err, NODEP(F, p.key), "mass entry '%s': "
                                            "'%.*s' is not %s", ks, (int)(u1 - u0), ks + u0,
                                            emb ? "an ambient name" : "a coordinate");
            break;
        }
        if (NODEP(F, p.value)->type != YAML_SCALAR_NODE) {
            rc = hs_ytree_error(F->y, F->err, NODEP(F, p.value), "mass entry '%s' must be an "
                                "expression, found %s", ks, hs_ytree_kind(NODEP(F, p.value)));
            break;
        }
        e[z] = (ent){ (size_t)(r < c ? r : c), (size_t)(r < c ? c : r), p.value, p.key };
        if (r != c)
            diag = 0;
    }
    hs_strmap_free(&ix);
    /* place -> first entry, the later ones of the same place added to it */
    hs_strmap at = { 0 };
    char (*kb)[48] = rc ? NULL : calloc(ne ? ne : 1, sizeof *kb);
    int *val = rc ? NULL : calloc(ne ? ne : 1, sizeof *val);
    if (!rc && (!kb || !val))
        rc = hs_fm_oom(F);
    size_t np = 0;
    long *first = rc ? NULL : calloc(ne ? ne : 1, sizeof *first);
    if (!rc && !first)
        rc = hs_fm_oom(F);
    for (size_t z = 0; z < ne && !rc; z++) {
        int len = snprintf(kb[z], sizeof kb[z], "%zu,%zu", e[z].i, e[z].j);
        long old;
        int put_rc = hs_strmap_put(&at, kb[z], (size_t)len, (long)np, &old);
        if (put_rc < 0) {
            rc = hs_fm_oom(F);
        } else if (put_rc == 0) {
            first[np] = (long)z;
            val[np++] = e[z].val;
        } else {                           /* the sum of both */
            const char *s1 = hs_ytree_str(NODEP(F, val[old])), *s2 = hs_ytree_str(NODEP(F, e[z].val));
            size_t l = strlen(s1) + strlen(s2) + 8;
            char *sum = malloc(l);
            if (!sum) {
                rc = hs_fm_oom(F);
                break;
            }
            snprintf(sum, l, "(%s) + (%s)", s1, s2);
            long saved = F->note;
            const hs_ytree_origin *o = NULL;
            if (F->y->norig && val[old] > F->y->norig)
                o = &F->y->origin[val[old] - F->y->norig - 1];
            F->note = o ? o->note : -1;
            int nid = hs_fm_add_scalar(F, sum, strlen(sum), val[old], 1);
            F->note = saved;
            free(sum);
            if (!nid) {
                rc = F->err->code;
                break;
            }
            val[old] = nid;
        }
    }
    hs_strmap_free(&at);
    if (!rc)
        rc = build_list(F, root, mass, mkey, coords, emb, n, diag, e, first, val, np);
    free(e);
    free(kb);
    free(val);
    free(first);
    return rc;
}

