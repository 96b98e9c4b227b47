/* The expression dag: an arena owning every node, a hash-consing table
 * (equal kind, arguments, symbol and bitwise-equal value give the same
 * node), the symbol table, the position stamp and the first error; and,
 * for the derivative engine, interned integer arrays (each node's symbol
 * set, computed from its arguments' when it is built, so dependency tests
 * cost a binary search and never a walk) and a cache (tag, node) -> node;
 * the last total-derivative direction and the table of sum indexes
 * (diff.c, sumindex.c) live here so that they die with the dag.
 *
 * Nodes and their argument arrays come from chunked arena blocks, so a
 * node never moves and the whole dag is freed in one call.  Every byte the
 * dag holds is counted against HS_MAX_DAG_BYTES. */
#include "internal.h"
#include "../util/map.h"
#include "../util/vec.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK_MIN = 64 * 1024 };
/* Constants recently built, direct-mapped: the constructors ask for 0,
 * 1, -1, 2 and a few coefficients millions of times, and a hit costs no
 * probe of the node table. */
enum { NUM_CACHE = 64 };

typedef struct block {
    struct block *next;
    size_t used, cap;
    max_align_t data[]; /* cap bytes */
} block;


struct hs_dag {
    block *blocks;               /* newest first */
    uintptr_t *table;            /* [tcap] open addressing: tagged node pointers, 0 = empty */
    size_t tcap, nnodes;
    size_t bytes;                /* arena + tables, against max_bytes */
    size_t max_bytes, max_diff;  /* limits: HS_MAX_DAG_BYTES, HS_MAX_DIFF_NODES */
    size_t noperands;            /* sum of nargs over the nodes, at most HS_MAX_OPERANDS */
    const struct hs_symset **sets; /* [setcap] interned arrays, NULL = empty slot */
    size_t setcap, nsets;
    int32_t *sbuf;               /* [sbufcap] scratch for set unions */
    size_t sbufcap;
    uint32_t *mark;              /* [markcap] per symbol: the union that last saw it */
    size_t markcap;
    uint32_t epoch;
    hs_idmap cache;              /* tag << 32 | node id -> const hs_node * */
    void *attached;              /* sumindex.c's indexes of large sums, or NULL */
    void (*attached_free)(void *);
    hs_seedmemo seed;            /* the last total-derivative direction (diff.c) */
    const hs_node *nums[NUM_CACHE]; /* recent constants, by a hash of the value */
    char **names;                /* [nsyms] copied symbol names */
    hs_strmap symtab;            /* name -> symbol number */
    size_t nsyms, namecap;
    hs_srcpos pos;               /* stamped on new nodes */
    hs_error err;
    hs_srcpos errpos;
    const hs_node *fallback;     /* the constant 0, returned after errors */
};

static void too_large(hs_dag *d)
{
    if (d->max_bytes >= (size_t)1 << 20)
        hs_dag_fail(d, d->pos, "expression too large: the expressions need more than %zu MiB",
                    d->max_bytes >> 20);
    else
        hs_dag_fail(d, d->pos, "expression too large: the expressions need more than %zu "
                    "bytes", d->max_bytes);
}

int hs_dag_reserve(hs_dag *d, size_t n)
{
    if (d->bytes + n > d->max_bytes)
        return 0;
    d->bytes += n;
    return 1;
}

hs_seedmemo *hs_dag_seedmemo(hs_dag *d) { return &d->seed; }

void *hs_dag_attached(hs_dag *d) { return d->attached; }

void hs_dag_attach(hs_dag *d, void *p, void (*free_fn)(void *))
{
    d->attached = p;
    d->attached_free = free_fn;
}

/* Can the dag take n more bytes of tables? (error recorded when not) */
static int budget(hs_dag *d, size_t n)
{
    if (d->bytes + n <= d->max_bytes)
        return 1;
    too_large(d);
    return 0;
}

/* ---- arena ---- */

static void *arena_alloc(hs_dag *d, size_t n)
{
    const size_t align = sizeof(max_align_t);
    n = (n + align - 1) / align * align;
    block *b = d->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > BLOCK_MIN ? n : BLOCK_MIN;
        if (d->bytes + cap > d->max_bytes) {
            too_large(d);
            return NULL;
        }
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->next = d->blocks;
        b->used = 0;
        b->cap = cap;
        d->blocks = b;
        d->bytes += cap;
    }
    void *p = (char *)b->data + b->used;
    b->used += n;
    return p;
}

/* ---- errors and positions ---- */

void hs_dag_fail(hs_dag *d, hs_srcpos p, const char *fmt, ...)
{
    if (d->err.code)
        return;
    hs_error_init(&d->err);
    d->err.code = HS_EXIT_MODEL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->err.msg, sizeof d->err.msg, fmt, ap);
    va_end(ap);
    d->errpos = p;
}

void hs_dag_nomem(hs_dag *d)
{
    if (!d->err.code)
        d->errpos = d->pos;
    hs_error_nomem(&d->err);
}

const hs_error *hs_dag_error(const hs_dag *d) { return &d->err; }
int hs_dag_failed(const hs_dag *d) { return d->err.code != 0; }
hs_srcpos hs_dag_error_pos(const hs_dag *d) { return d->errpos; }
void hs_dag_set_pos(hs_dag *d, hs_srcpos p) { d->pos = p; }
hs_srcpos hs_dag_pos(const hs_dag *d) { return d->pos; }
size_t hs_dag_nnodes(const hs_dag *d) { return d->nnodes; }
size_t hs_dag_bytes(const hs_dag *d) { return d->bytes; }
size_t hs_dag_max_diff_nodes(const hs_dag *d) { return d->max_diff; }

void hs_dag_set_limits(hs_dag *d, size_t max_bytes, size_t max_diff_nodes)
{
    d->max_bytes = max_bytes ? max_bytes : HS_MAX_DAG_BYTES;
    d->max_diff = max_diff_nodes ? max_diff_nodes : HS_MAX_DIFF_NODES;
}
int hs_dag_nsymbols(const hs_dag *d) { return (int)d->nsyms; }

/* ---- hashing ---- */

static uint32_t mix(uint32_t h, uint64_t x)
{
    /* FNV-style step over a 64-bit word, then a final avalanche below */
    h ^= (uint32_t)x;
    h *= 16777619u;
    h ^= (uint32_t)(x >> 32);
    h *= 16777619u;
    return h;
}

static uint32_t node_hash(hs_kind k, const hs_node *const *args, size_t nargs,
                          double value, int sym)
{
    uint64_t bits;
    memcpy(&bits, &value, sizeof bits);
    uint32_t h = mix(2166136261u, (uint64_t)k << 32 | (uint32_t)nargs);
    h = mix(h, bits);
    h = mix(h, (uint64_t)(uint32_t)sym);
    /* ids, not pointers, so the table layout is the same on every run */
    for (size_t i = 0; i < nargs; i++)
        h = mix(h, args[i]->id);
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return h;
}

static int node_equal(const hs_node *n, hs_kind k, const hs_node *const *args,
                      size_t nargs, double value, int sym)
{
    if (n->kind != k || n->nargs != nargs || n->sym != sym)
        return 0;
    if (memcmp(&n->value, &value, sizeof value) != 0)
        return 0;
    for (size_t i = 0; i < nargs; i++)
        if (n->args[i] != args[i])
            return 0;
    return 1;
}

/* The node table's slots hold node pointers tagged in their low bits
 * (free: nodes are aligned like max_align_t) with high bits of the node's
 * hash, so that a probe passes over most other nodes without reading them
 * (each read is a cache miss in a large dag; measured: a third of the
 * time of interning). */
#define TAG_MASK ((uintptr_t)_Alignof(max_align_t) - 1)

static uintptr_t slot_of(const hs_node *n, uint32_t h)
{
    return (uintptr_t)n | ((uintptr_t)(h >> 24) & TAG_MASK);
}

static const hs_node *slot_node(uintptr_t s)
{
    return (const hs_node *)(s & ~TAG_MASK);
}

/* Can slot s hold a node of hash h? */
static int slot_may_be(uintptr_t s, uint32_t h)
{
    return (s & TAG_MASK) == ((uintptr_t)(h >> 24) & TAG_MASK);
}

static int table_grow(hs_dag *d)
{
    size_t cap = d->tcap ? 2 * d->tcap : 1024;
    if (!budget(d, (cap - d->tcap) * sizeof *d->table))
        return -1;
    uintptr_t *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    d->bytes += (cap - d->tcap) * sizeof *t;
    for (size_t i = 0; i < d->tcap; i++) {
        if (!d->table[i])
            continue;
        size_t j = slot_node(d->table[i])->hash & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = d->table[i];
    }
    free(d->table);
    d->table = t;
    d->tcap = cap;
    return 0;
}

/* ---- interned integer arrays: symbol sets, direction seeds ---- */

static const struct hs_symset empty_set = {0, 0, 0};

static uint32_t ints_hash(const int32_t *s, size_t n)
{
    uint32_t h = 2166136261u ^ (uint32_t)n;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint32_t)s[i]) * 16777619u;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    return h;
}

static int sets_grow(hs_dag *d)
{
    size_t cap = d->setcap ? 2 * d->setcap : 256;
    if (!budget(d, (cap - d->setcap) * sizeof *d->sets))
        return -1;
    const struct hs_symset **t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < d->setcap; i++) {
        const struct hs_symset *x = d->sets[i];
        if (!x)
            continue;
        size_t j = x->hash & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = x;
    }
    free(d->sets);
    d->bytes += (cap - d->setcap) * sizeof *t;
    d->sets = t;
    d->setcap = cap;
    return 0;
}

const struct hs_symset *hs_dag_intern_ints(hs_dag *d, const int32_t *s, size_t n)
{
    if (n == 0)
        return &empty_set;
    if (n > UINT32_MAX / 2 || !budget(d, n * sizeof *s))
        return NULL;
    if (2 * (d->nsets + 1) > d->setcap && sets_grow(d) != 0)
        goto oom;
    uint32_t h = ints_hash(s, n);
    size_t mask = d->setcap - 1, j = h & mask;
    for (const struct hs_symset *x; (x = d->sets[j]) != NULL; j = (j + 1) & mask)
        if (x->hash == h && x->n == n && memcmp(x->s, s, n * sizeof *s) == 0)
            return x;
    struct hs_symset *x = arena_alloc(d, sizeof *x + n * sizeof *s);
    if (!x)
        goto oom;
    x->n = (uint32_t)n;
    x->hash = h;
    x->id = (uint32_t)++d->nsets;
    memcpy(x->s, s, n * sizeof *s);
    d->sets[j] = x;
    return x;
oom:
    hs_dag_nomem(d);
    return NULL;
}

int hs_symset_has(const struct hs_symset *s, int32_t sym)
{
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->s[mid] < sym)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < s->n && s->s[lo] == sym;
}

/* a is a subset of b (both sorted) */
static int subset(const struct hs_symset *a, const struct hs_symset *b)
{
    if (a == b || a->n == 0)
        return 1;
    if (a->n > b->n || a->s[0] < b->s[0] || a->s[a->n - 1] > b->s[b->n - 1])
        return 0;
    if ((size_t)a->n * 8 < b->n) {
        for (uint32_t i = 0; i < a->n; i++)
            if (!hs_symset_has(b, a->s[i]))
                return 0;
        return 1;
    }
    for (uint32_t i = 0, j = 0; i < a->n; i++, j++) {
        while (j < b->n && b->s[j] < a->s[i])
            j++;
        if (j == b->n || b->s[j] != a->s[i])
            return 0;
    }
    return 1;
}

static int int_cmp(const void *pa, const void *pb)
{
    int32_t a = *(const int32_t *)pa, b = *(const int32_t *)pb;
    return (a > b) - (a < b);
}

/* The symbol set of a new node: its arguments' union (usually one of
 * them: no copy). NULL (error recorded) when out of memory. */
static const struct hs_symset *node_symset(hs_dag *d, hs_kind k, const hs_node *const *args,
                                           size_t nargs, int sym)
{
    if (k == HS_SYM) {
        int32_t v = sym;
        return hs_dag_intern_ints(d, &v, 1);
    }
    if (nargs == 0)
        return &empty_set;
    const struct hs_symset *big = args[0]->syms;
    for (size_t i = 1; i < nargs; i++)
        if (args[i]->syms->n > big->n)
            big = args[i]->syms;
    size_t total = 0, nmerge = 0;
    for (size_t i = 0; i < nargs; i++) {
        nmerge += !subset(args[i]->syms, big);
        total += args[i]->syms->n;
    }
    if (!nmerge)
        return big;
    /* two buffers: the union so far, and the next one merged into */
    if (2 * total > d->sbufcap) {
        size_t cap = 2 * total > 2 * d->sbufcap ? 2 * total : 2 * d->sbufcap;
        if (!budget(d, (cap - d->sbufcap) * sizeof *d->sbuf))
            return NULL;
        int32_t *b = realloc(d->sbuf, cap * sizeof *b);
        if (!b) {
            hs_dag_nomem(d);
            return NULL;
        }
        d->bytes += (cap - d->sbufcap) * sizeof *b;
        d->sbuf = b;
        d->sbufcap = cap;
    }
    int32_t *u = d->sbuf, *v = d->sbuf + total;
    size_t nu = big->n;
    if (nmerge > 8) {
        /* many sets (a large sum): each symbol kept once through a stamp
         * per symbol, then the distinct ones sorted -- sorting all the
         * terms' symbols cost a tenth of a large model's load */
        if (d->markcap < d->nsyms) {
            if (!budget(d, (d->nsyms - d->markcap) * sizeof *d->mark))
                return NULL;
            uint32_t *mk = realloc(d->mark, d->nsyms * sizeof *mk);
            if (!mk) {
                hs_dag_nomem(d);
                return NULL;
            }
            memset(mk + d->markcap, 0, (d->nsyms - d->markcap) * sizeof *mk);
            d->bytes += (d->nsyms - d->markcap) * sizeof *mk;
            d->mark = mk;
            d->markcap = d->nsyms;
        }
        if (++d->epoch == 0) {      /* wrapped: old stamps could collide */
            memset(d->mark, 0, d->markcap * sizeof *d->mark);
            d->epoch = 1;
        }
        nu = 0;
        for (size_t i = 0; i < nargs; i++)
            for (uint32_t z = 0; z < args[i]->syms->n; z++) {
                int32_t x = args[i]->syms->s[z];
                if (x >= 0 && (size_t)x < d->markcap) {
                    if (d->mark[x] == d->epoch)
                        continue;
                    d->mark[x] = d->epoch;
                }
                u[nu++] = x;
            }
        qsort(u, nu, sizeof *u, int_cmp);
        size_t m = 0;               /* a raw node's symbol may lie outside the table */
        for (size_t i = 0; i < nu; i++)
            if (m == 0 || u[m - 1] != u[i])
                u[m++] = u[i];
        return hs_dag_intern_ints(d, u, m);
    }
    memcpy(u, big->s, nu * sizeof *u);
    for (size_t i = 0; i < nargs; i++) {
        const struct hs_symset *a = args[i]->syms;
        if (subset(a, big))
            continue;
        /* merge the sorted a into the sorted union u */
        size_t p = 0, q = 0, m = 0;
        while (p < nu || q < a->n) {
            int32_t x = q == a->n || (p < nu && u[p] <= a->s[q]) ? u[p] : a->s[q];
            if (p < nu && u[p] == x)
                p++;
            if (q < a->n && a->s[q] == x)
                q++;
            v[m++] = x;
        }
        int32_t *t = u;
        u = v;
        v = t;
        nu = m;
    }
    return hs_dag_intern_ints(d, u, nu);
}

const int32_t *hs_node_symbols(const hs_node *e, size_t *n)
{
    *n = e->syms->n;
    return e->syms->s;
}

/* ---- the cache (tag, node id) -> node ---- */

/* At most 2^20 slots (16 MiB, 512k entries): past that it starts over
 * (measured on the 160-link chain in angles: no slower than 2^23 slots,
 * 130 MB less memory). */
#define CACHE_MAX_SLOTS ((size_t)1 << 20)

const hs_node *hs_dag_cache_get(const hs_dag *d, uint32_t tag, uint32_t id)
{
    const hs_node *const *v = HS_IDMAP_GET(&d->cache, (uint64_t)tag << 32 | id, const hs_node *);
    return v ? *v : NULL;
}

void hs_dag_cache_put(hs_dag *d, uint32_t tag, uint32_t id, const hs_node *v)
{
    size_t more = 2 * (d->cache.n + 1) > d->cache.cap ? hs_idmap_grow_bytes(&d->cache) : 0;
    if (!d->cache.cap) {                /* 1024 slots at once: it fills fast */
        more = 1024 * (sizeof *d->cache.key + sizeof v);
        if (!budget(d, more))
            return;
        if (hs_idmap_reserve(&d->cache, 512) != 0) {
            hs_dag_nomem(d);
            return;
        }
    } else if (more) {
        /* a full cache starts over: entries only save time (the derivative
         * walk never reads back what it has not just computed) */
        if (d->cache.cap >= CACHE_MAX_SLOTS) {
            hs_idmap_clear(&d->cache);
            more = 0;
        } else if (!budget(d, more)) {
            return;
        }
    }
    const hs_node **slot = HS_IDMAP_PUT(&d->cache, (uint64_t)tag << 32 | id, const hs_node *);
    if (!slot) {
        hs_dag_nomem(d);
        return;
    }
    d->bytes += more;
    *slot = v;
}

/* ---- nodes ---- */

const hs_node *hs_dag_lookup(const hs_dag *d, hs_kind k, const hs_node *const *args,
                             size_t nargs, double value, int sym)
{
    uint32_t h = node_hash(k, args, nargs, value, sym);
    size_t mask = d->tcap - 1;
    for (size_t j = h & mask; d->table[j]; j = (j + 1) & mask) {
        const hs_node *n = slot_node(d->table[j]);
        if (slot_may_be(d->table[j], h) && n->hash == h &&
            node_equal(n, k, args, nargs, value, sym))
            return n;
    }
    return NULL;
}

/* Build a node without simplification; the one place nodes are created. */
static const hs_node *intern(hs_dag *d, hs_kind k, const hs_node *const *args,
                             size_t nargs, double value, int sym)
{
    uint32_t h = node_hash(k, args, nargs, value, sym);
    size_t mask = d->tcap - 1;
    size_t j = h & mask;
    for (uintptr_t x; (x = d->table[j]) != 0; j = (j + 1) & mask) {
        const hs_node *n = slot_node(x);
        if (slot_may_be(x, h) && n->hash == h && node_equal(n, k, args, nargs, value, sym))
            return n;
    }

    uint32_t depth = 1;
    for (size_t i = 0; i < nargs; i++)
        if (args[i]->depth + 1 > depth)
            depth = args[i]->depth + 1;
    if (depth > HS_MAX_DEPTH) {
        hs_dag_fail(d, d->pos, "expression nested too deeply");
        return d->fallback;
    }
    if (d->nnodes >= HS_MAX_NODES) {
        hs_dag_fail(d, d->pos, "expression too large: more than %zu nodes",
                    HS_MAX_NODES);
        return d->fallback;
    }
    if (d->noperands + nargs > HS_MAX_OPERANDS) {
        hs_dag_fail(d, d->pos, "expression too large: the expressions hold more than %zu "
                    "operands", HS_MAX_OPERANDS);
        return d->fallback;
    }
    const struct hs_symset *syms = node_symset(d, k, args, nargs, sym);
    if (!syms)
        return d->fallback;
    /* keep the load factor at most 1/2 so probe runs stay short */
    if (2 * (d->nnodes + 1) > d->tcap) {
        if (table_grow(d) != 0)
            goto oom;
        mask = d->tcap - 1;
        j = h & mask;
        while (d->table[j])
            j = (j + 1) & mask;
    }
    hs_node *n = arena_alloc(d, sizeof *n + nargs * sizeof *args);
    if (!n)
        goto oom;
    const hs_node **a = (const hs_node **)(n + 1);
    if (nargs)
        memcpy(a, args, nargs * sizeof *args);
    n->kind = k;
    n->id = (uint32_t)d->nnodes;
    n->nargs = (uint32_t)nargs;
    n->hash = h;
    n->depth = depth;
    n->sym = sym;
    n->value = value;
    n->pos = d->pos;
    n->args = a;
    n->syms = syms;
    d->table[j] = slot_of(n, h);
    d->nnodes++;
    d->noperands += nargs;
    return n;
oom:
    hs_dag_nomem(d);
    return d->fallback;
}

const hs_node *hs_dag_num(hs_dag *d, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    size_t j = (size_t)((bits * 0x9e3779b97f4a7c15u) >> 58);
    const hs_node *n = d->nums[j];
    if (n && memcmp(&n->value, &v, sizeof v) == 0)
        return n;
    n = hs_dag_intern(d, HS_NUM, NULL, 0, v, -1);
    if (n->kind == HS_NUM && memcmp(&n->value, &v, sizeof v) == 0)
        d->nums[j] = n;       /* not the fallback of an error */
    return n;
}

const hs_node *hs_dag_intern(hs_dag *d, hs_kind k, const hs_node *const *args,
                             size_t nargs, double value, int sym)
{
    if (k == HS_NUM && !isfinite(value)) {
        hs_dag_fail(d, d->pos, "constant expression evaluates to NaN/Inf");
        return d->fallback;
    }
    return intern(d, k, args, nargs, value, sym);
}

/* ---- lifetime ---- */

hs_dag *hs_dag_new(void)
{
    hs_dag *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    hs_error_init(&d->err);
    d->max_bytes = HS_MAX_DAG_BYTES;
    d->max_diff = HS_MAX_DIFF_NODES;
    d->pos = (hs_srcpos){-1, 0};
    d->errpos = (hs_srcpos){-1, 0};
    hs_idmap_init(&d->cache, sizeof(const hs_node *));
    if (table_grow(d) != 0) {
        free(d);
        return NULL;
    }
    /* the fallback must exist before any error can need it */
    d->fallback = intern(d, HS_NUM, NULL, 0, 0.0, -1);
    if (d->err.code) {
        hs_dag_free(d);
        return NULL;
    }
    return d;
}

void hs_dag_free(hs_dag *d)
{
    if (!d)
        return;
    for (block *b = d->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    for (size_t i = 0; i < d->nsyms; i++)
        free(d->names[i]);
    free(d->names);
    hs_strmap_free(&d->symtab);
    free(d->table);
    free(d->sets);
    free(d->sbuf);
    free(d->mark);
    hs_idmap_free(&d->cache);
    if (d->attached_free)
        d->attached_free(d->attached);
    free(d->seed.q);
    free(d->seed.v);
    free(d);
}

/* ---- symbols ---- */

int hs_dag_find_symbol(const hs_dag *d, const char *name)
{
    return (int)hs_strmap_get(&d->symtab, name, strlen(name));
}

int hs_dag_symbol(hs_dag *d, const char *name)
{
    int s = hs_dag_find_symbol(d, name);
    if (s >= 0)
        return s;
    if (d->nsyms >= (size_t)INT32_MAX - 1) {
        hs_dag_fail(d, d->pos, "too many symbols");
        return -1;
    }
    if (HS_VEC_RESERVE(d->names, d->namecap, d->nsyms + 1))
        goto oom;
    size_t len = strlen(name);
    char *copy = malloc(len + 1);
    if (!copy)
        goto oom;
    memcpy(copy, name, len + 1);
    if (hs_strmap_put(&d->symtab, copy, len, (long)d->nsyms, NULL) < 0) {
        free(copy);
        goto oom;
    }
    s = (int)d->nsyms;
    d->names[d->nsyms++] = copy;
    return s;
oom:
    hs_dag_nomem(d);
    return -1;
}

const char *hs_dag_symbol_name(const hs_dag *d, int sym)
{
    if (sym < 0 || (size_t)sym >= d->nsyms)
        return "?";
    return d->names[sym];
}

/* The names and arities of node kinds (the parser's words, the printer's). */
static const struct {
    const char *name;
    int arity;
} kinds[HS_NKINDS] = {
    [HS_NUM] = {"num", 0},     [HS_SYM] = {"sym", 0},
    [HS_ADD] = {"+", -1},      [HS_MUL] = {"*", -1},
    [HS_POW] = {"^", 2},       [HS_SIN] = {"sin", 1},
    [HS_COS] = {"cos", 1},     [HS_TAN] = {"tan", 1},
    [HS_ASIN] = {"asin", 1},   [HS_ACOS] = {"acos", 1},
    [HS_ATAN] = {"atan", 1},   [HS_SINH] = {"sinh", 1},
    [HS_COSH] = {"cosh", 1},   [HS_TANH] = {"tanh", 1},
    [HS_EXP] = {"exp", 1},     [HS_LOG] = {"log", 1},
    [HS_SQRT] = {"sqrt", 1},   [HS_ABS] = {"abs", 1},
    [HS_SIGN] = {"sign", 1},   [HS_ATAN2] = {"atan2", 2},
    [HS_MIN] = {"min", 2},     [HS_MAX] = {"max", 2},
    [HS_HYPOT] = {"hypot", 2}, [HS_LT] = {"<", 2},
    [HS_LE] = {"<=", 2},       [HS_GT] = {">", 2},
    [HS_GE] = {">=", 2},       [HS_EQ] = {"==", 2},
    [HS_NE] = {"!=", 2},       [HS_IF] = {"if", 3},
};

int hs_kind_arity(hs_kind k)
{
    return (unsigned)k < HS_NKINDS ? kinds[k].arity : 0;
}

const char *hs_kind_name(hs_kind k)
{
    return (unsigned)k < HS_NKINDS ? kinds[k].name : "?";
}
