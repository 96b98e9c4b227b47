/* Printing expressions as a person writes them, with the fewest
 * parentheses the grammar needs: `x - y`, `2*x`, `x^2/(2*y)`, `-sin(x)`,
 * `if(a < b, x, y)`.  Numbers use the shortest of %.15g/%.16g/%.17g that
 * reads back exactly, so the text re-parses to the same node.
 *
 * hs_format and hs_fprint print the dag as a tree: shared subexpressions
 * are repeated.  A printer (hs_printer_new) looks at the sharing of all
 * the roots first and, when the tree would be much larger than the dag,
 * names each big shared subexpression once, as a temporary `_1 = ...`
 * printed before its first use: the output is then linear in the dag. */
#include "expr.h"
#include "../util/map.h"
#include "../util/vec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Printing names temporaries only when the roots printed as trees would
 * have SHARE_RATIO times more nodes than the dag and more than SHARE_MIN
 * (so small derivations print exactly as hs_fprint prints them); then a
 * node used twice or more whose tree has at least TEMP_MIN nodes is one. */
enum { SHARE_RATIO = 4, SHARE_MIN = 2000, TEMP_MIN = 6 };

struct hs_printer {
    const hs_dag *d;
    hs_idmap index;         /* node id of a reachable node -> its index below (uint32_t) */
    size_t n;
    const hs_node **node;   /* [n] post-order */
    uint32_t *uses;         /* [n] references from the reachable nodes and the roots */
    uint32_t *temp;         /* [n] temporary number, 0 = printed inline */
    uint32_t *seen;         /* [n] line stamp of the last walk that met it */
    uint8_t *candidate;     /* [n] will be a temporary when first printed */
    uint32_t ntemps, stamp;
    int failed;             /* an allocation failed while printing */
    char prefix[8];         /* "_", or more '_' when a symbol looks like _1 */
};

/* Binding strength of the printed forms, loosest first. */
enum { P_CMP, P_ADD, P_MUL, P_UNARY, P_POW, P_ATOM };

typedef struct out {
    char *buf;
    size_t cap, len;
    FILE *f;
    const hs_printer *pr;  /* names of temporaries, or NULL */
    const hs_node *self;   /* the temporary being defined (printed in full) */
    int failed;            /* an allocation failed: a sum in its stored order */
} out;

static uint32_t temp_of(const hs_printer *pr, const hs_node *e);

/* A node printed by its temporary's name: an atom. */
static int named(const out *o, const hs_node *e)
{
    return o->pr && e != o->self && temp_of(o->pr, e) != 0;
}

static void put(out *o, const char *s, size_t n)
{
    if (o->f)
        fwrite(s, 1, n, o->f);
    else if (o->len < o->cap) {
        size_t room = o->cap - o->len;
        memcpy(o->buf + o->len, s, n < room ? n : room);
    }
    o->len += n;
}

static void puts_(out *o, const char *s) { put(o, s, strlen(s)); }

__attribute__((noinline)) static void put_num(out *o, double v)
{
    char b[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(b, sizeof b, "%.*g", prec, v);
        if (strtod(b, NULL) == v)
            break;
    }
    puts_(o, b);
}

static void emit(out *o, const hs_dag *d, const hs_node *e, int ctx);

/* A term of a sum or a product is negative when its coefficient is. */
static int is_negative(const out *o, const hs_node *e)
{
    if (named(o, e))
        return 0;
    if (e->kind == HS_NUM)
        return e->value < 0;
    return e->kind == HS_MUL && e->args[0]->kind == HS_NUM && e->args[0]->value < 0;
}

/* 1/|c| when it is a small integer that gives c back exactly, else 0. */
static double reciprocal_int(double c)
{
    c = fabs(c);
    if (c >= 1 || c == 0)
        return 0;
    double k = 1 / c;
    if (k > 1e6 || k != floor(k) || 1 / k != c)
        return 0;
    return k;
}

static int is_denominator(const out *o, const hs_node *f)
{
    return !named(o, f) && f->kind == HS_POW && f->args[1]->kind == HS_NUM && f->args[1]->value < 0;
}

/* |e| for a product: its coefficient taken positive, printed as a fraction
 * when some factors have negative numeric exponents. */
static void emit_product(out *o, const hs_dag *d, const hs_node *e, double coef)
{
    size_t first = e->kind == HS_MUL && e->args[0]->kind == HS_NUM;
    const hs_node *const *f = e->kind == HS_MUL ? e->args + first : &e;
    size_t n = e->kind == HS_MUL ? e->nargs - first : 1;
    coef = fabs(coef);
    double kden = reciprocal_int(coef);
    size_t nnum = 0, nden = kden != 0;
    for (size_t i = 0; i < n; i++)
        is_denominator(o, f[i]) ? nden++ : nnum++;

    int any = 0;
    if (coef != 1 && !kden) {
        put_num(o, coef);
        any = 1;
    }
    for (size_t i = 0; i < n; i++) {
        if (is_denominator(o, f[i]))
            continue;
        if (any)
            puts_(o, "*");
        emit(o, d, f[i], P_MUL);
        any = 1;
    }
    if (!nden)
        return;
    if (!any)
        puts_(o, "1");
    puts_(o, "/");
    if (nden > 1)
        puts_(o, "(");
    any = 0;
    if (kden) {
        put_num(o, kden);
        any = 1;
    }
    for (size_t i = 0; i < n; i++) {
        if (!is_denominator(o, f[i]))
            continue;
        if (any)
            puts_(o, "*");
        double ex = -f[i]->args[1]->value;
        if (ex == 1)
            emit(o, d, f[i]->args[0], nden > 1 ? P_MUL : P_POW);
        else {
            emit(o, d, f[i]->args[0], P_ATOM);
            puts_(o, "^");
            put_num(o, ex);
        }
        any = 1;
    }
    if (nden > 1)
        puts_(o, ")");
}

/* The recursive printers keep their frames small (the term order of a
 * sum on the heap, a temporary's name in its own function): a 4000-deep
 * expression prints in under 1 MiB of stack even under ASan. */
__attribute__((noinline)) static void emit_sum(out *o, const hs_dag *d, const hs_node *e)
{
    /* a positive term first, the constant last unless it alone is
     * positive: `x - y + 1`, `2.5 - x` */
    size_t n = e->nargs, k = 0;
    const hs_node **t = malloc(n * sizeof *t);
    if (!t) {
        t = (const hs_node **)e->args; /* out of memory: stored order */
        o->failed = 1;
    } else {
        const hs_node *num = e->args[0]->kind == HS_NUM ? e->args[0] : NULL;
        size_t lead = n;
        for (size_t i = 0; i < n && lead == n; i++)
            if (e->args[i] != num && !is_negative(o, e->args[i]))
                lead = i;
        if (lead < n)
            t[k++] = e->args[lead];
        else if (num && num->value > 0)
            t[k++] = num;
        for (size_t i = 0; i < n; i++)
            if (i != lead && e->args[i] != num)
                t[k++] = e->args[i];
        if (num && k < n)
            t[k++] = num;
    }
    for (size_t i = 0; i < n; i++) {
        const hs_node *x = t[i];
        int neg = is_negative(o, x);
        if (i > 0)
            puts_(o, neg ? " - " : " + ");
        else if (neg)
            puts_(o, "-");
        if (named(o, x))
            emit(o, d, x, P_ADD + 1);
        else if (x->kind == HS_NUM)
            put_num(o, fabs(x->value));
        else if (x->kind == HS_MUL && x->args[0]->kind == HS_NUM)
            emit_product(o, d, x, x->args[0]->value);
        else
            emit(o, d, x, P_ADD + 1);
    }
    if (t != (const hs_node **)e->args)
        free(t);
}

__attribute__((noinline)) static void emit_call(out *o, const hs_dag *d, const hs_node *e)
{
    puts_(o, hs_kind_name(e->kind));
    puts_(o, "(");
    for (uint32_t i = 0; i < e->nargs; i++) {
        if (i)
            puts_(o, ", ");
        emit(o, d, e->args[i], P_CMP);
    }
    puts_(o, ")");
}

/* Print e where the surrounding form binds with strength ctx. */
__attribute__((noinline)) static void put_name(out *o, const hs_node *e)
{
    char name[48];
    snprintf(name, sizeof name, "%s%u", o->pr->prefix, temp_of(o->pr, e));
    puts_(o, name);
}

static void emit(out *o, const hs_dag *d, const hs_node *e, int ctx)
{
    if (named(o, e)) {
        put_name(o, e);
        return;
    }
    int prec;
    switch (e->kind) {
    case HS_NUM: prec = e->value < 0 ? P_UNARY : P_ATOM; break;
    case HS_ADD: prec = P_ADD; break;
    case HS_MUL:
        /* a negative product prints with a leading '-': unary strength */
        prec = is_negative(o, e) ? P_UNARY : P_MUL;
        break;
    case HS_POW:
        prec = is_denominator(o, e) ? P_MUL : P_POW;
        break;
    case HS_LT: case HS_LE: case HS_GT: case HS_GE: case HS_EQ: case HS_NE:
        prec = P_CMP;
        break;
    default: prec = P_ATOM; break;
    }
    int paren = prec < ctx;
    if (paren)
        puts_(o, "(");
    switch (e->kind) {
    case HS_NUM:
        put_num(o, e->value);
        break;
    case HS_SYM:
        puts_(o, hs_dag_symbol_name(d, e->sym));
        break;
    case HS_ADD:
        emit_sum(o, d, e);
        break;
    case HS_MUL: {
        double c = e->args[0]->kind == HS_NUM ? e->args[0]->value : 1;
        if (c < 0)
            puts_(o, "-");
        emit_product(o, d, e, c);
        break;
    }
    case HS_POW:
        if (is_denominator(o, e)) {
            emit_product(o, d, e, 1);
            break;
        }
        emit(o, d, e->args[0], P_ATOM);
        puts_(o, "^");
        /* right-associative: x^y^z needs no parentheses */
        emit(o, d, e->args[1], P_POW);
        break;
    case HS_LT: case HS_LE: case HS_GT: case HS_GE: case HS_EQ: case HS_NE:
        emit(o, d, e->args[0], P_ADD);
        puts_(o, " ");
        puts_(o, hs_kind_name(e->kind));
        puts_(o, " ");
        emit(o, d, e->args[1], P_ADD);
        break;
    default:
        emit_call(o, d, e);
        break;
    }
    if (paren)
        puts_(o, ")");
}

size_t hs_format(const hs_dag *d, const hs_node *e, char *buf, size_t cap)
{
    out o = {buf, cap, 0, NULL, NULL, NULL, 0};
    emit(&o, d, e, P_CMP);
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len;
}

int hs_fprint(FILE *f, const hs_dag *d, const hs_node *e)
{
    out o = {NULL, 0, 0, f, NULL, NULL, 0};
    emit(&o, d, e, P_CMP);
    return o.failed ? -1 : 0;
}

/* ---- printing with named shared subexpressions ---- */

/* Index of e among the reachable nodes, or -1. */
static long find(const hs_printer *p, const hs_node *e)
{
    const uint32_t *i = HS_IDMAP_GET(&p->index, e->id, uint32_t);
    return i ? (long)*i : -1;
}

static uint32_t temp_of(const hs_printer *pr, const hs_node *e)
{
    long i = e->nargs ? find(pr, e) : -1;
    return i < 0 ? 0 : pr->temp[i];
}

/* Add e to the reachable set (index n); 1 if new, 0 if known, -1 if full. */
static int add_node(hs_printer *p, const hs_node *e)
{
    if (find(p, e) >= 0)
        return 0;
    uint32_t *i = HS_IDMAP_PUT(&p->index, e->id, uint32_t);     /* reserved: no allocation */
    if (!i)
        return -1;
    *i = (uint32_t)p->n;
    p->node[p->n++] = e;
    return 1;
}

void hs_printer_free(hs_printer *p)
{
    if (!p)
        return;
    hs_idmap_free(&p->index);
    free(p->node);
    free(p->uses);
    free(p->temp);
    free(p->seen);
    free(p->candidate);
    free(p);
}

/* Collect the reachable nodes in post-order (explicit stack). */
static int collect(hs_printer *p, const hs_node *const *roots, size_t nroots)
{
    typedef struct { const hs_node *n; uint32_t i; } frame;
    size_t cap = 0, top = 0;
    frame *st = NULL;
    if (HS_VEC_RESERVE(st, cap, 64))
        return -1;
    for (size_t r = 0; r < nroots; r++) {
        if (find(p, roots[r]) >= 0)
            continue;
        st[top++] = (frame){roots[r], 0};
        while (top) {
            frame *f = &st[top - 1];
            if (f->i < f->n->nargs) {
                const hs_node *c = f->n->args[f->i++];
                if (find(p, c) >= 0)
                    continue;
                if (HS_VEC_RESERVE(st, cap, top + 1))
                    goto fail;
                st[top++] = (frame){c, 0};
                continue;
            }
            if (add_node(p, f->n) < 0)
                goto fail;
            top--;
        }
    }
    free(st);
    return 0;
fail:
    free(st);
    return -1;
}

/* "_", or "__", ... : a prefix no symbol of d followed by digits uses. */
static void choose_prefix(hs_printer *p)
{
    size_t k = 1;
    for (int s = 0; s < hs_dag_nsymbols(p->d); s++) {
        const char *name = hs_dag_symbol_name(p->d, s);
        size_t u = strspn(name, "_");
        if (u >= k && u < sizeof p->prefix - 1 && name[u] >= '0' && name[u] <= '9' &&
            strspn(name + u, "0123456789") == strlen(name + u))
            k = u + 1;
    }
    memset(p->prefix, '_', k);
    p->prefix[k] = '\0';
}

hs_printer *hs_printer_new(const hs_dag *d, const hs_node *const *roots, size_t nroots)
{
    hs_printer *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->d = d;
    /* the reachable nodes: at most the dag's, usually far fewer */
    size_t bound = hs_dag_nnodes(d) + 1;
    hs_idmap_init(&p->index, sizeof(uint32_t));
    p->node = malloc(bound * sizeof *p->node);
    if (hs_idmap_reserve(&p->index, bound) != 0 || !p->node || collect(p, roots, nroots) != 0)
        goto fail;
    size_t n = p->n;
    double *tree = malloc((n ? n : 1) * sizeof *tree);
    p->uses = calloc(n ? n : 1, sizeof *p->uses);
    p->temp = calloc(n ? n : 1, sizeof *p->temp);
    p->seen = calloc(n ? n : 1, sizeof *p->seen);
    p->candidate = calloc(n ? n : 1, 1);
    if (!tree || !p->uses || !p->temp || !p->seen || !p->candidate) {
        free(tree);
        goto fail;
    }
    /* tree sizes in post-order (children first); uses from every parent */
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        const hs_node *e = p->node[i];
        tree[i] = 1;
        for (uint32_t a = 0; a < e->nargs; a++) {
            const hs_node *c = e->args[a];
            long k = find(p, c);
            tree[i] += k >= 0 ? tree[k] : 1;
            if (k >= 0)
                p->uses[k]++;
        }
    }
    for (size_t r = 0; r < nroots; r++) {
        long k = find(p, roots[r]);
        total += tree[k];
        p->uses[k]++;
    }
    if (total > SHARE_MIN && total > SHARE_RATIO * (double)n)
        for (size_t i = 0; i < n; i++) {
            hs_kind k = p->node[i]->kind;
            /* a comparison is no expression of its own (only an if()
             * condition): it stays inline, its operands may be named */
            p->candidate[i] = p->node[i]->nargs > 0 && p->uses[i] >= 2 && tree[i] >= TEMP_MIN &&
                              (k < HS_LT || k > HS_NE);
        }
    free(tree);
    choose_prefix(p);
    return p;
fail:
    hs_printer_free(p);
    return NULL;
}

size_t hs_printer_ntemps(const hs_printer *p)
{
    size_t k = 0;
    for (size_t i = 0; i < p->n; i++)
        k += p->candidate[i];
    return k;
}

static void print_def(hs_printer *p, FILE *f, const char *indent, const char *label,
                      const hs_node *e, const hs_node *self)
{
    out o = {NULL, 0, 0, f, p, self, 0};
    fputs(indent ? indent : "", f);
    if (label)
        fprintf(f, "%s = ", label);
    emit(&o, p->d, e, P_CMP);
    fputc('\n', f);
    p->failed |= o.failed;
}

/* Print, children first, the temporaries under e not printed yet. */
static int print_temps(hs_printer *p, FILE *f, const char *indent, const hs_node *e)
{
    typedef struct { const hs_node *n; uint32_t i; } frame;
    size_t cap = 64, top = 0;
    frame *st = malloc(cap * sizeof *st);
    if (!st)
        return -1;
    p->stamp++;
    st[top++] = (frame){e, 0};
    while (top) {
        frame *fr = &st[top - 1];
        if (fr->i < fr->n->nargs) {
            const hs_node *c = fr->n->args[fr->i++];
            long k = c->nargs ? find(p, c) : -1;
            /* a printed temporary is a name; a node met in this walk is done */
            if (k < 0 || p->temp[k] || p->seen[k] == p->stamp)
                continue;
            p->seen[k] = p->stamp;
            if (HS_VEC_RESERVE(st, cap, top + 1)) {
                free(st);
                return -1;
            }
            st[top++] = (frame){c, 0};
            continue;
        }
        long k = find(p, fr->n);
        if (k >= 0 && p->candidate[k] && !p->temp[k] && top > 1) {
            char name[48];
            p->temp[k] = ++p->ntemps;
            snprintf(name, sizeof name, "%s%u", p->prefix, p->temp[k]);
            print_def(p, f, indent, name, fr->n, fr->n);
        }
        top--;
    }
    free(st);
    return 0;
}

void hs_printer_line(hs_printer *p, FILE *f, const char *indent, const char *label,
                     const hs_node *e)
{
    int found = find(p, e) >= 0;
    if (!found || print_temps(p, f, indent, e) != 0) {
        /* not among the roots (or out of memory): as a tree */
        p->failed |= found;
        fputs(indent ? indent : "", f);
        if (label)
            fprintf(f, "%s = ", label);
        p->failed |= hs_fprint(f, p->d, e) != 0;
        fputc('\n', f);
        return;
    }
    print_def(p, f, indent, label, e, NULL);
}

int hs_printer_failed(const hs_printer *p) { return p->failed; }

int hs_fprint_shared(FILE *f, const hs_dag *d, const hs_node *const *roots,
                     const char *const *labels, size_t n)
{
    hs_printer *p = hs_printer_new(d, roots, n);
    int failed = !p;
    for (size_t i = 0; i < n; i++) {
        const char *label = labels ? labels[i] : NULL;
        if (p) {
            hs_printer_line(p, f, NULL, label, roots[i]);
        } else {
            if (label)
                fprintf(f, "%s = ", label);
            failed |= hs_fprint(f, d, roots[i]) != 0;
            fputc('\n', f);
        }
    }
    failed |= p && p->failed;
    hs_printer_free(p);
    return failed ? -1 : 0;
}
