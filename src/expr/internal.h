/* Private to src/expr: what dag.c offers the other files of the engine
 * beyond expr.h -- interned integer arrays (the symbol set of each node,
 * the seed of a derivative direction), a cache (tag, node) -> node that
 * lives as long as the dag, lookup without creation, and the work counter
 * the symbolic limits read. */
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

/* The identities sin^2 + cos^2 = 1, cos a cos b + sin a sin b = cos(a - b)
 * and sin a cos b - cos a sin b = sin(a - b) on the k merged terms out[]
 * of a sum (trig.c); a number they produce is added to *c.  Returns 1
 * when anything changed (out[] and *k rewritten: collect them again), 0
 * when not, -1 when out of memory (error recorded). */
int hs_trig_identities(hs_dag *d, const hs_node **out, size_t *k, double *c);

/* Is sym in the sorted set? */
int hs_symset_has(const struct hs_symset *s, int32_t sym);

#endif
