/* Printing expressions as a person writes them, with the fewest
 * parentheses the grammar needs: `x - y`, `2*x`, `x^2/(2*y)`, `-sin(x)`,
 * `if(a < b, x, y)`.  Numbers use the shortest of %.15g/%.16g/%.17g that
 * reads back exactly, so the text re-parses to the same node.
 *
 * The dag is printed as a tree: shared subexpressions are repeated. */
#include "expr.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Binding strength of the printed forms, loosest first. */
enum { P_CMP, P_ADD, P_MUL, P_UNARY, P_POW, P_ATOM };

typedef struct out {
    char *buf;
    size_t cap, len;
    FILE *f;
} out;

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

static void put_num(out *o, double v)
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
static int is_negative(const hs_node *e)
{
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

static int is_denominator(const hs_node *f)
{
    return f->kind == HS_POW && f->args[1]->kind == HS_NUM && f->args[1]->value < 0;
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
        is_denominator(f[i]) ? nden++ : nnum++;

    int any = 0;
    if (coef != 1 && !kden) {
        put_num(o, coef);
        any = 1;
    }
    for (size_t i = 0; i < n; i++) {
        if (is_denominator(f[i]))
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
        if (!is_denominator(f[i]))
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

static void emit_sum(out *o, const hs_dag *d, const hs_node *e)
{
    /* a positive term first, the constant last unless it alone is
     * positive: `x - y + 1`, `2.5 - x` */
    size_t n = e->nargs, k = 0;
    const hs_node *stack[16], **t = n <= 16 ? stack : malloc(n * sizeof *t);
    if (!t)
        t = (const hs_node **)e->args; /* out of memory: stored order */
    else {
        const hs_node *num = e->args[0]->kind == HS_NUM ? e->args[0] : NULL;
        size_t lead = n;
        for (size_t i = 0; i < n && lead == n; i++)
            if (e->args[i] != num && !is_negative(e->args[i]))
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
        int neg = is_negative(x);
        if (i > 0)
            puts_(o, neg ? " - " : " + ");
        else if (neg)
            puts_(o, "-");
        if (x->kind == HS_NUM)
            put_num(o, fabs(x->value));
        else if (x->kind == HS_MUL && x->args[0]->kind == HS_NUM)
            emit_product(o, d, x, x->args[0]->value);
        else
            emit(o, d, x, P_ADD + 1);
    }
    if (t != stack && t != (const hs_node **)e->args)
        free(t);
}

static void emit_call(out *o, const hs_dag *d, const hs_node *e)
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
static void emit(out *o, const hs_dag *d, const hs_node *e, int ctx)
{
    int prec;
    switch (e->kind) {
    case HS_NUM: prec = e->value < 0 ? P_UNARY : P_ATOM; break;
    case HS_ADD: prec = P_ADD; break;
    case HS_MUL:
        /* a negative product prints with a leading '-': unary strength */
        prec = is_negative(e) ? P_UNARY : P_MUL;
        break;
    case HS_POW:
        prec = is_denominator(e) ? P_MUL : P_POW;
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
        if (is_denominator(e)) {
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
    out o = {buf, cap, 0, NULL};
    emit(&o, d, e, P_CMP);
    if (cap)
        buf[o.len < cap ? o.len : cap - 1] = '\0';
    return o.len;
}

void hs_fprint(FILE *f, const hs_dag *d, const hs_node *e)
{
    out o = {NULL, 0, 0, f};
    emit(&o, d, e, P_CMP);
}
