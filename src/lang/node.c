/* Node making for the language's rewrites (internal.h): every node made
 * here gets an origin (its template and the note of the index values it was
 * made at), so errors in generated entries point at the file. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hs_fm_oom(fam *F)
{
    return hs_error_nomem(F->err);
}

/* The index values bound now ("k = 3, i = 5"), else the note of the
 * nodes made now, else "". */
static void where(fam *F, char *b, size_t cap)
{
    size_t len = 0;
    b[0] = '\0';
    for (int k = 0; k < F->nenv && len + 96 < cap; k++) {
        len += (size_t)snprintf(b + len, cap - len, "%s%.*s = ", k ? ", " : "",
                                (int)(F->env[k].len < 64 ? F->env[k].len : 64), F->env[k].name);
        len += hs_fm_fmt_long(b + len, F->env[k].val);
    }
    if (!F->nenv && F->note >= 0)
        snprintf(b, cap, "%s", F->y->notes + F->note);
}

int hs_fm_budget(fam *F, int tmpl, size_t more)
{
    hs_ytree *y = F->y;
    const char *what = NULL;
    char lim[64];
    if (F->made + more > FM_MAX_TEXT) {
        what = "MiB of text";
        snprintf(lim, sizeof lim, "%d", FM_MAX_TEXT >> 20);
    } else if (y->nseg >= FM_MAX_SEG) {
        what = "pieces of text (names, numbers, operators written out)";
        snprintf(lim, sizeof lim, "%d", FM_MAX_SEG);
    } else if (y->norigin >= FM_MAX_NODES || y->norigin + (size_t)y->norig >= HS_YTREE_MAX_NODES) {
        what = "YAML nodes";
        snprintf(lim, sizeof lim, "%d", y->norigin >= FM_MAX_NODES ? FM_MAX_NODES
                                                                   : HS_YTREE_MAX_NODES);
    }
    if (!what)
        return 0;
    if (F->err->code)
        return F->err->code;
    char at[FM_MAX_ENV * 96 + 8];
    where(F, at, sizeof at);
    yaml_node_t *t = tmpl > 0 ? NODEP(F, hs_fm_tmpl(F, tmpl)) : NULL;
    if (at[0])
        return hs_ytree_error(y, F->err, t, "the families expand to more than %s %s (at %s)", lim,
                              what, at);
    /* nothing bound now (D(...), bodies): a generated node's own note */
    return hs_ytree_error(y, F->err, tmpl > 0 ? NODEP(F, tmpl) : NULL, "the families expand "
                          "to more than %s %s", lim, what);
}

int hs_fm_tmpl(fam *F, int id)
{
    hs_ytree *y = F->y;
    if (y->norig && id > y->norig && (size_t)(id - y->norig - 1) < y->norigin)
        return y->origin[id - y->norig - 1].tmpl;
    return id;
}

int hs_fm_grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (!q)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* The origin of node id (just added): template tmpl, segments seg0..nseg
 * (none: the identity), the current note. */
static int add_origin(fam *F, int id, int tmpl, int identity)
{
    hs_ytree *y = F->y;
    if (hs_fm_budget(F, tmpl, 0))
        return F->err->code;
    if ((size_t)(id - y->norig) != y->norigin + 1 ||
        hs_fm_grow((void **)&y->origin, &F->capo, y->norigin + 1, sizeof *y->origin))
        return hs_fm_oom(F);
    tmpl = hs_fm_tmpl(F, tmpl);
    y->origin[y->norigin++] = (hs_ytree_origin){
        tmpl, F->note, identity ? 0 : F->seg0, identity ? 0 : y->nseg - F->seg0 };
    yaml_node_t *n = NODEP(F, id), *t = NODEP(F, tmpl);
    n->start_mark = t->start_mark;
    n->end_mark = t->end_mark;
    return 0;
}

int hs_fm_add_scalar(fam *F, const char *s, size_t len, int tmpl, int identity)
{
    if (hs_fm_budget(F, tmpl, len))
        return 0;
    F->made += len;
    int id = yaml_document_add_scalar(F->doc, NULL, (yaml_char_t *)(len ? s : ""),
                                      (int)len, YAML_PLAIN_SCALAR_STYLE);
    if (!id || add_origin(F, id, tmpl, identity))
        return hs_fm_oom(F), 0;
    return id;
}

int hs_fm_add_seq(fam *F, int tmpl)
{
    int id = yaml_document_add_sequence(F->doc, NULL, YAML_BLOCK_SEQUENCE_STYLE);
    if (!id || add_origin(F, id, tmpl, 1))
        return hs_fm_oom(F), 0;
    return id;
}

int hs_fm_add_map(fam *F, int tmpl)
{
    int id = yaml_document_add_mapping(F->doc, NULL, YAML_BLOCK_MAPPING_STYLE);
    if (!id || add_origin(F, id, tmpl, 1))
        return hs_fm_oom(F), 0;
    return id;
}

int hs_fm_append_item(fam *F, int seq, int item)
{
    return yaml_document_append_sequence_item(F->doc, seq, item) ? 0 : hs_fm_oom(F);
}

int hs_fm_append_pair(fam *F, int map, int key, int val)
{
    if (NODEP(F, map)->type != YAML_MAPPING_NODE)     /* libyaml asserts */
        return hs_ytree_error(F->y, F->err, NODEP(F, map), "internal error: entries added "
                              "to %s", hs_ytree_kind(NODEP(F, map)));
    return yaml_document_append_mapping_pair(F->doc, map, key, val) ? 0 : hs_fm_oom(F);
}

int hs_fm_get(fam *F, int map, const char *key, int *keyid)
{
    yaml_node_t *m = NODEP(F, map);
    if (m->type != YAML_MAPPING_NODE)
        return 0;
    for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top; p++) {
        const char *ks = hs_ytree_str(NODEP(F, p->key));
        if (ks && strcmp(ks, key) == 0) {
            if (keyid)
                *keyid = p->key;
            return p->value;
        }
    }
    return 0;
}

/* v in decimal into b (at least 21 bytes), without printf: the expansion
 * writes one per member. */
size_t hs_fm_fmt_long(char *b, long v)
{
    char t[24];
    size_t n = 0, k = 0;
    unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
    do
        t[n++] = (char)('0' + u % 10);
    while ((u /= 10) > 0);
    if (v < 0)
        b[k++] = '-';
    while (n > 0)
        b[k++] = t[--n];
    b[k] = '\0';
    return k;
}
