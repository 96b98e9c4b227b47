/* Points written out in full, each the one before plus its own terms,
 *
 *     x1: l*sin(th1)
 *     x2: l*sin(th1) + l*sin(th2)
 *     x3: l*sin(th1) + l*sin(th2) + l*sin(th3)
 *
 * are the other textbook way to write a chain (a generator's output, or a
 * hand-written model), and written out they are dense: x_i holds i terms,
 * the Jacobian a full triangle, the metric N^3 work per evaluation.  An
 * entry of `embedding` whose value begins with another entry's whole value
 * and goes on with a + or - at the top level reads that entry instead:
 *
 *     define:    x1__sum: l*sin(th1)
 *                x2__sum: x1__sum + l*sin(th2)
 *                x3__sum: x2__sum + l*sin(th3)
 *     embedding: x1: x1__sum,  x2: x2__sum,  x3: x3__sum
 *
 * the chain of defines the structured path of an embedding recognizes
 * (model/chain.c), at O(N).  An entry of `define` so written reads the
 * define it begins with (x3: x2 + l*sin(th3)).  The longest such entry is
 * taken (the one just before, in a chain).
 *
 * The numbers are the same: the parser reads a + b + c as one sum of its
 * terms left to right, and the entry's own terms follow its predecessor's.
 * The predecessor's text must be one operand of that + or -: at its top
 * level (outside parentheses) only names, numbers and the operators
 * + - * / ^ (a comparison or a comma there would bind looser than the +).
 * Only entries of the file itself are read (not those families made:
 * the running sums of a family are telescope.c's), and only for a model
 * of at least HS_LANG_CHAIN_MIN_N coordinates with an embedding: below, the
 * dense metric is cheaper and the file is left as it is.  Errors in a
 * rewritten entry point at the file's text: the new value's bytes map to
 * the old one's (ytree.h, segments). */
#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../util/map.h"

typedef struct pentry {
    int pair;                  /* index of the pair in its mapping */
    const char *key, *v;       /* the key and value texts */
    size_t a, b;               /* the value, trimmed: v[a, b) */
    long pred;                 /* the entry it begins with, or -1 */
    size_t cut;                /* where its own terms begin (the + or -) */
    int used;                  /* some entry begins with it */
} pentry;

static int blank(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* One step of the texts' hash (a polynomial in the bytes, mod 2^64). */
static uint64_t mix(uint64_t h, unsigned char c)
{
    return h * 0x100000001b3u + c + 1;
}

/* Key of the map: the hash with its top bit cleared (hs_idmap keys are
 * below UINT64_MAX). */
static uint64_t key_of(uint64_t h)
{
    return h & 0x7fffffffffffffffu;
}

/* May c stand outside parentheses in an operand of a sum? */
static int operand_char(int c)
{
    return hs_fm_is_id(c) || c == '.' || c == '\'' || c == '*' || c == '/' || c == '^' ||
           c == '+' || c == '-' || blank(c);
}

/* The predecessor of entry e: the longest entry whose trimmed value is the
 * start of e's, ended at a top-level binary + or -.  The scan follows the
 * parser's tokens: a number's exponent sign is no operator, and a + or -
 * after an operator is a sign. */
static void find_pred(pentry *E, long e, const hs_idmap *by_text)
{
    pentry *x = &E[e];
    const char *v = x->v;
    uint64_t h = 0;
    size_t trim_end = x->a;    /* end of the text read, blanks dropped */
    uint64_t trim_h = 0;       /* its hash */
    int depth = 0, operand = 0;
    for (size_t i = x->a; i < x->b;) {
        unsigned char c = (unsigned char)v[i];
        if (depth == 0 && operand && (c == '+' || c == '-') && trim_end > x->a) {
            const long *hit = hs_idmap_get(by_text, key_of(trim_h));
            if (hit && *hit != e) {
                const pentry *p = &E[*hit];
                if (p->b - p->a == trim_end - x->a &&
                    memcmp(p->v + p->a, v + x->a, trim_end - x->a) == 0) {
                    x->pred = *hit;
                    x->cut = i;
                }
            }
        }
        if (depth == 0 && !operand_char(c) && c != '(' && c != '[')
            return;            /* a longer start is no operand of a sum */
        size_t j = i + 1;
        if ((c >= '0' && c <= '9') || (c == '.' && i + 1 < x->b && v[i + 1] >= '0' &&
                                       v[i + 1] <= '9')) {
            while (j < x->b && ((v[j] >= '0' && v[j] <= '9') || v[j] == '.'))
                j++;
            if (j < x->b && (v[j] == 'e' || v[j] == 'E')) {
                j++;
                if (j < x->b && (v[j] == '+' || v[j] == '-'))
                    j++;
            }
            while (j < x->b && hs_fm_is_id((unsigned char)v[j]))
                j++;
            operand = 1;
        } else if (hs_fm_is_id0(c)) {
            while (j < x->b && (hs_fm_is_id((unsigned char)v[j]) || v[j] == '\''))
                j++;
            operand = 1;
        } else if (c == '(' || c == '[') {
            depth++;
            operand = 0;
        } else if (c == ')' || c == ']') {
            if (depth > 0)
                depth--;
            operand = 1;
        } else if (!blank(c)) {
            operand = 0;
        }
        for (size_t k = i; k < j; k++) {
            h = mix(h, (unsigned char)v[k]);
            if (!blank((unsigned char)v[k])) {
                trim_end = k + 1;
                trim_h = h;
            }
        }
        i = j;
    }
}

static uint64_t text_hash(const char *v, size_t a, size_t b)
{
    uint64_t h = 0;
    for (size_t i = a; i < b; i++)
        h = mix(h, (unsigned char)v[i]);
    return h;
}

/* The plain entries (a name, a scalar value of the file) of mapping map. */
static size_t entries_of(fam *F, int map, pentry *E)
{
    yaml_node_t *m = NODEP(F, map);
    size_t ne = 0, np = (size_t)(m->data.mapping.pairs.top - m->data.mapping.pairs.start);
    for (size_t i = 0; i < np; i++) {
        yaml_node_pair_t p = m->data.mapping.pairs.start[i];
        const char *k = hs_ytree_str(NODEP(F, p.key)), *v = hs_ytree_str(NODEP(F, p.value));
        if (!k || !v || (F->y->norig && p.value > F->y->norig))
            continue;
        size_t kl = strlen(k), kk = 0;
        while (kk < kl && hs_fm_is_id((unsigned char)k[kk]))
            kk++;
        if (!kl || kk != kl || !hs_fm_is_id0((unsigned char)k[0]) || kl > 100)
            continue;
        size_t a = 0, b = strlen(v);
        while (a < b && blank((unsigned char)v[a]))
            a++;
        while (b > a && blank((unsigned char)v[b - 1]))
            b--;
        E[ne++] = (pentry){ (int)i, k, v, a, b, -1, 0, 0 };
    }
    return ne;
}

/* Enter the keys of mapping id, or the items of sequence id, into names
 * (the texts stay the document's): 0, or -1 when out of memory. */
static int names_of(fam *F, int id, hs_strmap *names)
{
    if (!id)
        return 0;
    yaml_node_t *m = NODEP(F, id);
    if (m->type == YAML_MAPPING_NODE) {
        for (yaml_node_pair_t *p = m->data.mapping.pairs.start; p < m->data.mapping.pairs.top;
             p++) {
            const char *k = hs_ytree_str(NODEP(F, p->key));
            if (k && hs_strmap_put(names, k, strlen(k), 0, NULL) < 0)
                return -1;
        }
    } else if (m->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = m->data.sequence.items.start; it < m->data.sequence.items.top;
             it++) {
            const char *k = hs_ytree_str(NODEP(F, *it));
            if (k && hs_strmap_put(names, k, strlen(k), 0, NULL) < 0)
                return -1;
        }
    }
    return 0;
}

/* The new value of entry x: name, then x's text from its cut on, each
 * byte of the rest mapped to its place in the file's scalar. */
static int reading(fam *F, const pentry *x, int tmpl, const char *name)
{
    hs_ytree *y = F->y;
    size_t nl = strlen(name), rl = x->b - x->cut;
    char *text = malloc(nl + rl + 1);
    if (!text || hs_fm_grow((void **)&y->seg, &F->caps, y->nseg + 2, sizeof *y->seg)) {
        free(text);
        return hs_fm_oom(F), 0;
    }
    memcpy(text, name, nl);
    memcpy(text + nl, x->v + x->cut, rl);
    text[nl + rl] = '\0';
    F->seg0 = y->nseg;
    y->seg[y->nseg++] = (hs_ytree_seg){ 0, x->a, 0 };
    y->seg[y->nseg++] = (hs_ytree_seg){ nl, x->cut, rl };
    int id = hs_fm_add_scalar(F, text, nl + rl, tmpl, 0);
    free(text);
    return id;
}

/* Before the first node made: the file's nodes are those made so far. */
static void first_node(fam *F)
{
    if (!F->y->norig)
        F->y->norig = (int)(F->doc->nodes.top - F->doc->nodes.start);
}

/* One section (embed: `embedding`, else `define`). */
static int section(fam *F, int root, int embed)
{
    int map = hs_fm_get(F, root, embed ? "embedding" : "define", NULL);
    if (!map || NODEP(F, map)->type != YAML_MAPPING_NODE)
        return 0;
    size_t np = (size_t)(NODEP(F, map)->data.mapping.pairs.top -
                         NODEP(F, map)->data.mapping.pairs.start);
    if (np < 2)
        return 0;
    pentry *E = malloc(np * sizeof *E);
    hs_idmap by_text = HS_IDMAP_INIT(long);
    if (!E || hs_idmap_reserve(&by_text, np)) {
        free(E);
        hs_idmap_free(&by_text);
        return hs_fm_oom(F);
    }
    size_t ne = entries_of(F, map, E);
    for (size_t e = 0; e < ne; e++) {          /* the first entry of each text */
        uint64_t k = key_of(text_hash(E[e].v, E[e].a, E[e].b));
        long *slot = hs_idmap_get(&by_text, k) ? NULL : hs_idmap_put(&by_text, k);
        if (slot)
            *slot = (long)e;
    }
    size_t found = 0;
    for (size_t e = 0; e < ne; e++) {
        find_pred(E, (long)e, &by_text);
        if (E[e].pred >= 0) {
            E[E[e].pred].used = 1;
            found++;
        }
    }
    hs_idmap_free(&by_text);
    int rc = 0, defs = 0, coords = hs_fm_get(F, root, "coordinates", NULL);
    int params = hs_fm_get(F, root, "parameters", NULL);
    char name[128];
    if (found && embed) {      /* every new define's name must be free */
        defs = hs_fm_get(F, root, "define", NULL);
        hs_strmap names = { 0 };
        if (names_of(F, defs, &names) || names_of(F, map, &names) ||
            names_of(F, coords, &names) || names_of(F, params, &names))
            rc = hs_fm_oom(F);
        for (size_t e = 0; e < ne && found && !rc; e++) {
            int l = snprintf(name, sizeof name, "%s__sum", E[e].key);
            if ((E[e].pred >= 0 || E[e].used) && hs_strmap_get(&names, name, (size_t)l) >= 0)
                found = 0;
        }
        hs_strmap_free(&names);
        if (found && !rc)
            first_node(F);
        if (found && !rc && !(defs = hs_bd_section(F, root, "define", map)))
            rc = F->err->code ? F->err->code : hs_fm_oom(F);
    }
    if (found)
        first_node(F);
    for (size_t e = 0; found && !rc && e < ne; e++) {
        pentry *x = &E[e];
        if (x->pred < 0 && !(embed && x->used))
            continue;
        yaml_node_pair_t p = NODEP(F, map)->data.mapping.pairs.start[x->pair];
        int nv = 0;
        if (embed) {           /* NAME__sum: the value, or the one before's define and the rest */
            snprintf(name, sizeof name, "%s__sum", x->key);
            int dk = hs_fm_add_scalar(F, name, strlen(name), p.key, 1);
            if (x->pred >= 0) {
                char pn[128];
                snprintf(pn, sizeof pn, "%s__sum", E[x->pred].key);
                nv = dk ? reading(F, x, p.value, pn) : 0;
            } else {
                nv = dk ? hs_fm_add_scalar(F, x->v + x->a, x->b - x->a, p.value, 1) : 0;
            }
            if (!nv || hs_fm_append_pair(F, defs, dk, nv)) {
                rc = F->err->code ? F->err->code : hs_fm_oom(F);
                break;
            }
            nv = hs_fm_add_scalar(F, name, strlen(name), p.value, 1);
        } else {
            nv = reading(F, x, p.value, E[x->pred].key);
        }
        if (!nv) {
            rc = F->err->code ? F->err->code : hs_fm_oom(F);
            break;
        }
        NODEP(F, map)->data.mapping.pairs.start[x->pair].value = nv;
    }
    free(E);
    return rc;
}

int hs_fm_prefix(fam *F)
{
    int root = 1, coords = hs_fm_get(F, root, "coordinates", NULL);
    if (!hs_fm_get(F, root, "embedding", NULL) || !coords ||
        NODEP(F, coords)->type != YAML_SEQUENCE_NODE ||
        NODEP(F, coords)->data.sequence.items.top - NODEP(F, coords)->data.sequence.items.start <
            HS_LANG_CHAIN_MIN_N)
        return 0;
    int rc = section(F, root, 0);
    return rc ? rc : section(F, root, 1);
}
