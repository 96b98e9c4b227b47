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

#include <stdlib.h>
#include <string.h>

enum { SUMINDEX_MIN_TERMS = 32, SUMINDEX_MAX_FILL = 16 };

/* One entry of the table node id -> index: seen once (x == NULL) or built. */
typedef struct slot {
    uint32_t key;           /* node id + 1, 0 = empty */
    int refused;            /* too large, or out of memory: never again */
    hs_sumindex *x;
} slot;

struct hs_sumtab {
    slot *s;
    size_t cap, n;
};

static size_t slot_of(uint32_t id, size_t cap)
{
    return (id * 2654435761u) & (cap - 1);
}

static slot *find(struct hs_sumtab *t, uint32_t id)
{
    for (size_t j = slot_of(id, t->cap);; j = (j + 1) & (t->cap - 1))
        if (t->s[j].key == id + 1 || t->s[j].key == 0)
            return &t->s[j];
}

static int grow(hs_dag *d, struct hs_sumtab *t)
{
    size_t cap = t->cap ? 2 * t->cap : 64;
    if (!hs_dag_reserve(d, (cap - t->cap) * sizeof *t->s))
        return -1;
    slot *s = calloc(cap, sizeof *s);
    if (!s)
        return -1;
    for (size_t i = 0; i < t->cap; i++) {
        if (!t->s[i].key)
            continue;
        size_t j = slot_of(t->s[i].key - 1, cap);
        while (s[j].key)
            j = (j + 1) & (cap - 1);
        s[j] = t->s[i];
    }
    free(t->s);
    t->s = s;
    t->cap = cap;
    return 0;
}

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
    if (2 * (t->n + 1) > t->cap && grow(d, t) != 0)
        return NULL;
    slot *s = find(t, e->id);
    if (!s->key) {                  /* first derivative: remember it */
        s->key = e->id + 1;
        t->n++;
        return NULL;
    }
    if (!s->x && !s->refused && !(s->x = build(d, e)))
        s->refused = 1;
    return s->x;
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

struct hs_sumtab *hs_sumtab_new(void)
{
    return calloc(1, sizeof(struct hs_sumtab));
}

void hs_sumtab_free(struct hs_sumtab *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->cap; i++)
        free(t->s[i].x);
    free(t->s);
    free(t);
}
