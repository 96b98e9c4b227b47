/* Private to src/expr: what dag.c offers the other files of the engine
 * beyond expr.h -- interned integer arrays (the symbol set of each node,
 * the seed of a derivative direction), a cache (tag, node) -> node that
 * lives as long as the dag, lookup without creation, the work counter
 * the symbolic limits read, a cache of constants, the memo of the last
 * total-derivative direction, optional memory against the dag's limit;
 * and what sumindex.c offers diff.c (large sums indexed by symbol). */
#ifndef HS_EXPR_INTERNAL_H
#define HS_EXPR_INTERNAL_H

#include "expr.h"

/* An interned array of int32 (equal contents give the same object).  As a
 * node's symbol set: sorted, no repeats.  `id` numbers arrays in creation
 * order (0 = the empty array), so it can key the cache. */
struct hs_symset {
    uint32_t n, hash, id;
    int32_t s[];
};

/* The interned copy of s[0..n-1]; NULL (error recorded) when out of memory
 * or past the size limit. */
const struct hs_symset *hs_dag_intern_ints(hs_dag *d, const int32_t *s, size_t n);

/* The cache: `tag` names what is cached (derivative directions, see
 * diff.c), `id` is a node id.  get returns NULL when absent; put records
 * an error when the dag's memory limit is reached (the caller goes on: a
 * missing entry only costs time). */
const hs_node *hs_dag_cache_get(const hs_dag *d, uint32_t tag, uint32_t id);
void hs_dag_cache_put(hs_dag *d, uint32_t tag, uint32_t id, const hs_node *v);

/* The existing node (k, args, value, sym), or NULL: never creates one
 * (the simplifier asks whether a partner term can exist). */
const hs_node *hs_dag_lookup(const hs_dag *d, hs_kind k, const hs_node *const *args,
                             size_t nargs, double value, int sym);

/* The dag's limit on the nodes one derivative may build. */
size_t hs_dag_max_diff_nodes(const hs_dag *d);

/* The compiler's addition formulas (sum.c): n's argument a is s1*x1 +
 * s2*x2 or its negation (x symbols, s[i] = 1 for a minus sign); whether a
 * program's sines and cosines of such sums (order: its post-order nodes,
 * mark: [node ids] zeroed scratch) are worth taking apart. */
int hs_trig_two_symbol_sum(const hs_node *a, const hs_node **x, int *s);
int hs_trig_want_addform(const hs_node *const *order, size_t norder, uint8_t *mark);

/* simplify.c's helpers that sum.c shares: scratch arrays on the stack
 * when small (HS_SCRATCH_SMALL entries), an insertion sort for short arrays, node
 * order (by id), an n-ary node of sorted children, a sum's or product's
 * children flattened (count first). */
enum { HS_SCRATCH_SMALL = 16 };
typedef struct hs_scratch {
    void *p;
    void *heap;
} hs_scratch;
void *hs_scratch_get(hs_dag *d, hs_scratch *s, void *stack, size_t n, size_t size);
void hs_scratch_free(hs_scratch *s);
void hs_sort_small(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
int hs_node_cmp(const void *pa, const void *pb);
const hs_node *hs_make_nary(hs_dag *d, hs_kind k, const hs_node **a, size_t n);
size_t hs_flat_count(hs_kind k, const hs_node *const *a, size_t n);
size_t hs_flatten(hs_kind k, const hs_node *const *a, size_t n, const hs_node **out);

/* The constant v (finite; an error recorded otherwise), as hs_dag_intern
 * would return it, through a small cache of recent constants. */
const hs_node *hs_dag_num(hs_dag *d, double v);

/* Is sym in the sorted set? */
int hs_symset_has(const struct hs_symset *s, int32_t sym);

/* Take n more bytes against the dag's memory limit for an optional
 * structure: 1 when within the limit, 0 (no error recorded) when not. */
int hs_dag_reserve(hs_dag *d, size_t n);

/* The terms of a large sum by symbol (sumindex.c): for each symbol of
 * the sum, the positions of the terms that use it, ascending. */
typedef struct hs_sumindex {
    const struct hs_symset *syms;   /* the sum's symbols */
    const uint32_t *start, *pos;    /* symbol k: pos[start[k] .. start[k+1]) */
} hs_sumindex;

/* The index of e, or NULL: e is not a sum of many terms, this is its
 * first derivative (an index would not pay), or the index would be too
 * large or past the memory limit (no error: the caller visits every
 * term). */
const hs_sumindex *hs_sumindex_get(hs_dag *d, const hs_node *e);
/* The positions of the terms that use sym (*n of them, maybe 0). */
const uint32_t *hs_sumindex_terms(const hs_sumindex *x, int32_t sym, size_t *n);

/* The last direction hs_total_diff built (diff.c): its arguments and its
 * interned seed array, so that the same (t, q, v) again (every
 * constraint's Gdot and gamma) costs a comparison, not a sort. */
typedef struct hs_seedmemo {
    int tsym;
    size_t n;
    int *q, *v;                      /* [n] copies, malloc'd (dag.c frees them) */
    const struct hs_symset *w;       /* NULL: none yet */
} hs_seedmemo;
hs_seedmemo *hs_dag_seedmemo(hs_dag *d);

/* The dag's table of indexes of large sums (sumindex.c: created on first
 * use; NULL when out of memory).  The dag holds it as an attachment it
 * frees with itself through the function given (dag.c). */
struct hs_sumtab *hs_dag_sumtab(hs_dag *d);
void *hs_dag_attached(hs_dag *d);
void hs_dag_attach(hs_dag *d, void *p, void (*free_fn)(void *));

#endif
