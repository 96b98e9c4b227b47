/* Hash maps (map.h). */
#include "map.h"

#include <stdlib.h>
#include <string.h>

/* ---------- hs_idmap ---------- */

uint64_t hs_idmap_empty_[2];

void hs_idmap_init(hs_idmap *m, size_t vsize)
{
    *m = (hs_idmap){ hs_idmap_empty_, NULL, vsize, 0, 0, 63 };
}

void hs_idmap_free(hs_idmap *m)
{
    if (m->cap)
        free(m->key);
    free(m->val);
    hs_idmap_init(m, m->vsize);
}

void hs_idmap_clear(hs_idmap *m)
{
    if (m->cap)
        memset(m->key, 0, m->cap * sizeof *m->key);
    m->n = 0;
}

/* The capacity that holds n entries at most half full (0: the one there). */
static size_t cap_for(const hs_idmap *m, size_t n)
{
    if (2 * n <= m->cap)
        return 0;
    size_t cap = m->cap ? m->cap : 64;
    while (2 * n > cap) {
        if (cap > SIZE_MAX / 4)
            return SIZE_MAX;
        cap *= 2;
    }
    return cap;
}

size_t hs_idmap_grow_bytes(const hs_idmap *m)
{
    size_t cap = cap_for(m, m->n + 1);
    return cap ? (cap - m->cap) * (sizeof *m->key + m->vsize) : 0;
}

int hs_idmap_reserve(hs_idmap *m, size_t n)
{
    size_t cap = cap_for(m, n);
    if (!cap)
        return 0;
    if (cap > SIZE_MAX / (sizeof *m->key + m->vsize))
        return -1;
    hs_idmap g = { calloc(cap, sizeof *g.key), malloc(cap * m->vsize), m->vsize, cap, m->n, 64 };
    for (size_t c = cap; c > 1; c >>= 1)
        g.shift--;
    if (!g.key || !g.val) {
        free(g.key);
        free(g.val);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->key[i])
            continue;
        size_t j = hs_idmap_slot_(&g, m->key[i]);
        while (g.key[j])
            j = (j + 1) & (cap - 1);
        g.key[j] = m->key[i];
        memcpy(g.val + j * g.vsize, m->val + i * m->vsize, m->vsize);
    }
    if (m->cap)
        free(m->key);
    free(m->val);
    *m = g;
    return 0;
}

/* ---------- hs_strmap ---------- */

uint32_t hs_str_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static size_t probe(const hs_strmap *t, const char *s, size_t len)
{
    size_t mask = t->cap - 1, i = hs_str_hash(s, len) & mask;
    while (t->slot[i].s && !(t->slot[i].len == len && memcmp(t->slot[i].s, s, len) == 0))
        i = (i + 1) & mask;
    return i;
}

long hs_strmap_get(const hs_strmap *t, const char *s, size_t len)
{
    if (!t->cap)
        return -1;
    size_t i = probe(t, s, len);
    return t->slot[i].s ? t->slot[i].val : -1;
}

int hs_strmap_put(hs_strmap *t, const char *s, size_t len, long val, long *old)
{
    if (2 * (t->n + 1) > t->cap) {
        hs_strmap g = { NULL, t->cap ? 2 * t->cap : 16, t->n };
        g.slot = calloc(g.cap, sizeof *g.slot);
        if (!g.slot)
            return -1;
        for (size_t i = 0; i < t->cap; i++)
            if (t->slot[i].s)
                g.slot[probe(&g, t->slot[i].s, t->slot[i].len)] = t->slot[i];
        free(t->slot);
        *t = g;
    }
    size_t i = probe(t, s, len);
    if (t->slot[i].s) {
        if (old)
            *old = t->slot[i].val;
        return 1;
    }
    t->slot[i] = (hs_strmap_slot){ s, len, val };
    t->n++;
    return 0;
}

void hs_strmap_free(hs_strmap *t)
{
    free(t->slot);
    memset(t, 0, sizeof *t);
}
