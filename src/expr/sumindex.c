/* Indexes of large sums by symbol, for the derivative walk (diff.c).
 *
 * A partial derivative of a sum visits every term to ask whether it
 * depends on the symbol (a binary search in the term's symbol set); a
 * gradient of a sum of T terms over S symbols thus costs T * S searches
 * even when each term uses only a few symbols (a kinetic energy
 * 1/2 v^T M v of n coordinates has n^2/2 terms of about six symbols, and
 * the n derivatives dL/dv_i cost n^3).  The index lists, for each symbol
 * of the sum, the positions of the terms that use it, in term order: a
 * derivative then visits only those, in the order the full walk would,
 * so it builds the same nodes in the same order.
 *
 * An index is built on the second derivative of a sum (one derivative
 * costs no more without it), only for sums of SUMINDEX_MIN_TERMS terms
 * or more whose terms use few symbols each (the index has an entry per
 * (term, symbol) pair: SUMINDEX_MAX_FILL per term on average at most).
 * Its memory counts against the dag's limit, but a refused index is no
 * error: the walk just visits every term. */
#include "internal.h"
#include "../util/map.h"

#include <stdlib.h>
#include <string.h>

enum { SUMINDEX_MIN_TERMS = 32, SUMINDEX_MAX_FILL = 16 };

/* The table node id -> index: NULL (seen once), the index, or REFUSED
 * (too large, or out of memory: never again). */
struct hs_sumtab {
    hs_idmap map;           /* node id -> hs_sumindex * */
};
static hs_sumindex refused_mark;
#define REFUSED (&refused_mark)

/* Position of sym in the sorted set (it is there). */
static uint32_t rank(const struct hs_symset *s, int32_t sym)
{
    uint32_t lo = 0, hi = s->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->s[mid] < sym)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The index of sum e, or NULL when too large (no error recorded). */
static hs_sumindex *build(hs_dag *d, const hs_node *e)
{
    const struct hs_symset *S = e->syms;
    size_t total = 0;
    for (uint32_t i = 0; i < e->nargs; i++)
        total += e->args[i]->syms->n;
    if (total > (size_t)SUMINDEX_MAX_FILL * e->nargs || total > UINT32_MAX)
        return NULL;
    size_t bytes = sizeof(hs_sumindex) + (S->n + 1 + total) * sizeof(uint32_t);
    if (!hs_dag_reserve(d, bytes))
        return NULL;
    hs_sumindex *x = malloc(bytes);
    if (!x)
        return NULL;
    uint32_t *start = (uint32_t *)(x + 1), *pos = start + S->n + 1;
    memset(start, 0, (S->n + 1) * sizeof *start);
    /* count the terms of each symbol, then place them in term order */
    for (uint32_t i = 0; i < e->nargs; i++) {
        const struct hs_symset *c = e->args[i]->syms;
        for (uint32_t k = 0; k < c->n; k++)
            start[rank(S, c->s[k]) + 1]++;
    }
    for (uint32_t k = 0; k < S->n; k++)
        start[k + 1] += start[k];
    for (uint32_t i = 0; i < e->nargs; i++) {
        const struct hs_symset *c = e->args[i]->syms;
        for (uint32_t k = 0; k < c->n; k++)
            pos[start[rank(S, c->s[k])]++] = i;
    }
    /* the fill moved each start to the next symbol's: shift back */
    memmove(start + 1, start, S->n * sizeof *start);
    start[0] = 0;
    x->syms = S;
    x->start = start;
    x->pos = pos;
    return x;
}

const hs_sumindex *hs_sumindex_get(hs_dag *d, const hs_node *e)
{
    if (e->kind != HS_ADD || e->nargs < SUMINDEX_MIN_TERMS)
        return NULL;
    struct hs_sumtab *t = hs_dag_sumtab(d);
    if (!t)
        return NULL;
    hs_sumindex **s = HS_IDMAP_GET(&t->map, e->id, hs_sumindex *);
    if (!s) {                       /* first derivative: remember it */
        size_t more = hs_idmap_grow_bytes(&t->map);
        if ((more && !hs_dag_reserve(d, more)) || !(s = HS_IDMAP_PUT(&t->map, e->id, hs_sumindex *)))
            return NULL;
        *s = NULL;
        return NULL;
    }
    if (!*s && !(*s = build(d, e)))
        *s = REFUSED;
    return *s == REFUSED ? NULL : *s;
}

const uint32_t *hs_sumindex_terms(const hs_sumindex *x, int32_t sym, size_t *n)
{
    uint32_t k = rank(x->syms, sym);
    if (k == x->syms->n || x->syms->s[k] != sym) {
        *n = 0;
        return x->pos;
    }
    *n = x->start[k + 1] - x->start[k];
    return x->pos + x->start[k];
}

static void sumtab_free(void *p)
{
    struct hs_sumtab *t = p;
    if (!t)
        return;
    for (size_t j = 0; j < t->map.cap; j++) {
        hs_sumindex **s = hs_idmap_at(&t->map, j);
        if (s && *s != REFUSED)
            free(*s);
    }
    hs_idmap_free(&t->map);
    free(t);
}

struct hs_sumtab *hs_dag_sumtab(hs_dag *d)
{
    struct hs_sumtab *t = hs_dag_attached(d);
    if (!t && (t = malloc(sizeof *t))) {
        hs_idmap_init(&t->map, sizeof(hs_sumindex *));
        hs_dag_attach(d, t, sumtab_free);
    }
    return t;
}
