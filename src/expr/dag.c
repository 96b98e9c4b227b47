/* The expression dag: an arena owning every node, a hash-consing table
 * (equal kind, arguments, symbol and bitwise-equal value give the same
 * node), the symbol table, the position stamp and the first error.
 *
 * Nodes and their argument arrays come from chunked arena blocks, so a
 * node never moves and the whole dag is freed in one call. */
#include "expr.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCK_MIN = 64 * 1024 };

typedef struct block {
    struct block *next;
    size_t used, cap;
    max_align_t data[]; /* cap bytes */
} block;

struct hs_dag {
    block *blocks;               /* newest first */
    const hs_node **table;       /* [tcap] open addressing, NULL = empty */
    size_t tcap, nnodes;
    char **names;                /* [nsyms] copied symbol names */
    int *symtab;                 /* [scap] symbol number + 1, 0 = empty */
    size_t nsyms, namecap, scap;
    hs_srcpos pos;               /* stamped on new nodes */
    hs_error err;
    hs_srcpos errpos;
    const hs_node *fallback;     /* the constant 0, returned after errors */
};

/* ---- arena ---- */

static void *arena_alloc(hs_dag *d, size_t n)
{
    const size_t align = sizeof(max_align_t);
    n = (n + align - 1) / align * align;
    block *b = d->blocks;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > BLOCK_MIN ? n : BLOCK_MIN;
        b = malloc(sizeof *b + cap);
        if (!b)
            return NULL;
        b->next = d->blocks;
        b->used = 0;
        b->cap = cap;
        d->blocks = b;
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

const hs_error *hs_dag_error(const hs_dag *d) { return &d->err; }
int hs_dag_failed(const hs_dag *d) { return d->err.code != 0; }
hs_srcpos hs_dag_error_pos(const hs_dag *d) { return d->errpos; }
void hs_dag_set_pos(hs_dag *d, hs_srcpos p) { d->pos = p; }
hs_srcpos hs_dag_pos(const hs_dag *d) { return d->pos; }
size_t hs_dag_nnodes(const hs_dag *d) { return d->nnodes; }
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

static int table_grow(hs_dag *d)
{
    size_t cap = d->tcap ? 2 * d->tcap : 1024;
    const hs_node **t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < d->tcap; i++) {
        const hs_node *n = d->table[i];
        if (!n)
            continue;
        size_t j = n->hash & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = n;
    }
    free(d->table);
    d->table = t;
    d->tcap = cap;
    return 0;
}

/* Build a node without simplification; the one place nodes are created. */
static const hs_node *intern(hs_dag *d, hs_kind k, const hs_node *const *args,
                             size_t nargs, double value, int sym)
{
    uint32_t h = node_hash(k, args, nargs, value, sym);
    size_t mask = d->tcap - 1;
    size_t j = h & mask;
    for (const hs_node *n; (n = d->table[j]) != NULL; j = (j + 1) & mask)
        if (n->hash == h && node_equal(n, k, args, nargs, value, sym))
            return n;

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
    d->table[j] = n;
    d->nnodes++;
    return n;
oom:
    hs_dag_fail(d, d->pos, "out of memory");
    return d->fallback;
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
    d->pos = (hs_srcpos){-1, 0};
    d->errpos = (hs_srcpos){-1, 0};
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
    free(d->symtab);
    free(d->table);
    free(d);
}

/* ---- symbols ---- */

static uint32_t str_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

int hs_dag_find_symbol(const hs_dag *d, const char *name)
{
    if (!d->scap)
        return -1;
    size_t mask = d->scap - 1;
    for (size_t j = str_hash(name) & mask; d->symtab[j]; j = (j + 1) & mask)
        if (strcmp(d->names[d->symtab[j] - 1], name) == 0)
            return d->symtab[j] - 1;
    return -1;
}

static int symtab_grow(hs_dag *d)
{
    size_t cap = d->scap ? 2 * d->scap : 64;
    int *t = calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < d->nsyms; i++) {
        size_t j = str_hash(d->names[i]) & (cap - 1);
        while (t[j])
            j = (j + 1) & (cap - 1);
        t[j] = (int)i + 1;
    }
    free(d->symtab);
    d->symtab = t;
    d->scap = cap;
    return 0;
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
    if (d->nsyms == d->namecap) {
        size_t cap = d->namecap ? 2 * d->namecap : 32;
        char **n = realloc(d->names, cap * sizeof *n);
        if (!n)
            goto oom;
        d->names = n;
        d->namecap = cap;
    }
    if (2 * (d->nsyms + 1) > d->scap && symtab_grow(d) != 0)
        goto oom;
    size_t len = strlen(name);
    char *copy = malloc(len + 1);
    if (!copy)
        goto oom;
    memcpy(copy, name, len + 1);
    s = (int)d->nsyms;
    d->names[d->nsyms++] = copy;
    size_t mask = d->scap - 1, j = str_hash(name) & mask;
    while (d->symtab[j])
        j = (j + 1) & mask;
    d->symtab[j] = s + 1;
    return s;
oom:
    hs_dag_fail(d, d->pos, "out of memory");
    return -1;
}

const char *hs_dag_symbol_name(const hs_dag *d, int sym)
{
    if (sym < 0 || (size_t)sym >= d->nsyms)
        return "?";
    return d->names[sym];
}
