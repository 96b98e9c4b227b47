/* Hash maps: open addressing with linear probing, at most half full, the
 * capacity a power of two.
 *
 *   hs_idmap   a 64-bit key (a node id, or a tag and an id) -> a value of a
 *              fixed size, stored beside the keys (memo tables, caches)
 *   hs_strmap  a string (pointer and length, not owned: it must outlive
 *              the map) -> a long (name tables)
 *
 * An hs_idmap starts empty by HS_IDMAP_INIT(type) or hs_idmap_init; a
 * zero-initialized hs_strmap is empty.  _free leaves a map empty. */
#ifndef HS_MAP_H
#define HS_MAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct hs_idmap {
    uint64_t *key;          /* [cap] key + 1, 0 = empty */
    unsigned char *val;     /* [cap * vsize] */
    size_t vsize, cap, n;
    unsigned shift;         /* 64 - log2(cap): the slot is the hash's top bits */
} hs_idmap;

/* The keys of every empty map (never written): a lookup needs no test of
 * its own for emptiness. */
extern uint64_t hs_idmap_empty_[2];
#define HS_IDMAP_INIT(type) { hs_idmap_empty_, NULL, sizeof(type), 0, 0, 63 }

void hs_idmap_init(hs_idmap *m, size_t vsize);
void hs_idmap_free(hs_idmap *m);
/* Forget every entry, keep the memory. */
void hs_idmap_clear(hs_idmap *m);
/* Room for n entries without growing: 0, or -1 when out of memory. */
int hs_idmap_reserve(hs_idmap *m, size_t n);
/* The bytes the next hs_idmap_put may allocate (0: it fits), for callers
 * that charge their memory to a budget. */
size_t hs_idmap_grow_bytes(const hs_idmap *m);

static inline size_t hs_idmap_slot_(const hs_idmap *m, uint64_t k)
{
    return (size_t)((k * 0x9e3779b97f4a7c15u) >> m->shift);   /* Fibonacci hashing */
}

/* The value slot of key (key < UINT64_MAX): an existing entry's (its
 * value), or a new one's (its value unset: the caller stores one); NULL
 * when out of memory (the map unchanged). */
static inline void *hs_idmap_put_(hs_idmap *m, uint64_t key, size_t vsize)
{
    if (2 * (m->n + 1) > m->cap && hs_idmap_reserve(m, m->n + 1) != 0)
        return NULL;
    uint64_t k = key + 1;
    size_t j = hs_idmap_slot_(m, k);
    while (m->key[j] && m->key[j] != k)
        j = (j + 1) & (m->cap - 1);
    if (!m->key[j]) {
        m->key[j] = k;
        m->n++;
    }
    return m->val + j * vsize;
}

static inline void *hs_idmap_put(hs_idmap *m, uint64_t key)
{
    return hs_idmap_put_(m, key, m->vsize);
}

/* The value of key, or NULL.  HS_IDMAP_GET(m, key, T) and
 * HS_IDMAP_PUT(m, key, T) are the same with the value's type (its size a
 * constant the compiler folds: these are the hot paths of the memo tables). */
static inline void *hs_idmap_get_(const hs_idmap *m, uint64_t key, size_t vsize)
{
    uint64_t k = key + 1;
    for (size_t j = hs_idmap_slot_(m, k); m->key[j]; j = (j + 1) & (m->cap - 1))
        if (m->key[j] == k)
            return m->val + j * vsize;
    return NULL;
}

static inline void *hs_idmap_get(const hs_idmap *m, uint64_t key)
{
    return hs_idmap_get_(m, key, m->vsize);
}

#define HS_IDMAP_GET(m, key, T) ((T *)hs_idmap_get_((m), (key), sizeof(T)))
#define HS_IDMAP_PUT(m, key, T) ((T *)hs_idmap_put_((m), (key), sizeof(T)))

/* Slot j (j < cap) of the map: its value, or NULL when empty (a walk over
 * every entry, in no particular order). */
static inline void *hs_idmap_at(const hs_idmap *m, size_t j)
{
    return m->key[j] ? m->val + j * m->vsize : NULL;
}

typedef struct hs_strmap_slot {
    const char *s;
    size_t len;
    long val;
} hs_strmap_slot;
typedef struct hs_strmap {
    hs_strmap_slot *slot;   /* [cap] */
    size_t cap, n;
} hs_strmap;

/* The value of s[0..len), or -1. */
long hs_strmap_get(const hs_strmap *t, const char *s, size_t len);
/* Enter s[0..len) -> val: 0 entered, 1 present (*old = its value when old
 * != NULL; the value kept), -1 out of memory. */
int hs_strmap_put(hs_strmap *t, const char *s, size_t len, long val, long *old);
void hs_strmap_free(hs_strmap *t);
uint32_t hs_str_hash(const char *s, size_t len);        /* FNV-1a */

#endif
