/* The expression parser (holosim-model(5), EXPRESSIONS): a lexer and a
 * recursive-descent parser building nodes through the smart constructors
 * (the names and arities of node kinds are dag.c's).  Numbers are decimal (`2.5`,
 * `1e-3`) or C hexadecimal (`0x10`, `0x1.8p3`: unambiguous, since a digit
 * followed by a letter was an error before).  The recursion is bounded by
 * MAX_NEST: every nesting level passes through parse_unary. */
#include "expr.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "../util/suggest.h"

/* ---- lexer ---- */

typedef enum tokkind {
    T_END, T_NUM, T_NAME, T_PLUS, T_MINUS, T_STAR, T_SLASH, T_CARET,
    T_LPAREN, T_RPAREN, T_COMMA,
    T_LT, T_LE, T_GT, T_GE, T_EQ, T_NE /* same order as HS_LT..HS_NE */
} tokkind;

typedef struct token {
    tokkind kind;
    size_t off, len;       /* the token's bytes, a prime included */
    double value;          /* T_NUM */
    int primed;            /* T_NAME: the primes after it (0, 1 or 2) */
} token;

/* Nesting levels (parentheses, unary operators, exponents) the parser
 * accepts: deep enough for any real model, shallow enough for the C stack. */
enum { MAX_NEST = 1000 };

typedef struct parser {
    hs_dag *d;
    const char *text;
    size_t len, cur;       /* cur: first byte after tok */
    int src;
    const hs_resolver *r;
    token tok;
    int nest;
    hs_error err;
} parser;

static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alnum(int c) { return is_alpha(c) || is_digit(c); }

static void perr(parser *p, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void perr(parser *p, size_t off, const char *fmt, ...)
{
    if (p->err.code)
        return;
    hs_error_init(&p->err);
    p->err.code = HS_EXIT_MODEL;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err.msg, sizeof p->err.msg, fmt, ap);
    va_end(ap);
    hs_error_locate(&p->err, p->text, p->len, off);
}

static void pnomem(parser *p)
{
    hs_error_nomem(&p->err);
}

/* "'tok'" for messages, cut short when long. */
static void tok_text(const parser *p, const token *t, char *buf, size_t cap)
{
    int n = t->len > 40 ? 40 : (int)t->len;
    snprintf(buf, cap, "'%.*s%s'", n, p->text + t->off, t->len > 40 ? "..." : "");
}

/* "near 'tok'" or "at end of input". */
static void tok_near(const parser *p, char *buf, size_t cap)
{
    if (p->tok.kind == T_END) {
        snprintf(buf, cap, "at end of input");
        return;
    }
    char t[64];
    tok_text(p, &p->tok, t, sizeof t);
    snprintf(buf, cap, "near %s", t);
}

static void line_col(const parser *p, size_t off, int *line, int *col)
{
    if (p->r && p->r->locate) {
        p->r->locate(p->r->ctx, off, line, col);
        return;
    }
    size_t start = 0;
    *line = 1;
    for (size_t i = 0; i < off && i < p->len; i++)
        if (p->text[i] == '\n') {
            ++*line;
            start = i + 1;
        }
    *col = (int)(off - start) + 1;
}

static int is_xdigit(int c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* After "0x": hex digits, an optional '.' and fraction, an optional binary
 * exponent p[+-]digits (C's hex notation, as strtod reads it).  Returns
 * the end, *bad set when there is no digit or the exponent has none. */
static size_t lex_hex(const parser *p, size_t i, int *bad)
{
    const char *s = p->text;
    size_t digits = 0;
    for (; i < p->len && is_xdigit(s[i]); i++)
        digits++;
    if (i < p->len && s[i] == '.')
        for (i++; i < p->len && is_xdigit(s[i]); i++)
            digits++;
    *bad = digits == 0;
    if (i < p->len && (s[i] == 'p' || s[i] == 'P')) {
        size_t j = i + 1;
        if (j < p->len && (s[j] == '+' || s[j] == '-'))
            j++;
        if (j < p->len && is_digit(s[j]))
            for (i = j; i < p->len && is_digit(s[i]);)
                i++;
        else {
            *bad = 1;
            i = j;
        }
    }
    return i;
}

static int lex_number(parser *p, size_t i)
{
    const char *s = p->text;
    size_t start = i;
    int bad = 0;
    if (s[i] == '0' && i + 1 < p->len && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
        i = lex_hex(p, i + 2, &bad);
        goto end;
    }
    while (i < p->len && is_digit(s[i]))
        i++;
    if (i < p->len && s[i] == '.')
        for (i++; i < p->len && is_digit(s[i]);)
            i++;
    if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1;
        if (j < p->len && (s[j] == '+' || s[j] == '-'))
            j++;
        if (j < p->len && is_digit(s[j]))
            for (i = j; i < p->len && is_digit(s[i]);)
                i++;
        else {
            bad = 1;
            i = j;
        }
    }
end:
    /* `2x` or `1.2.3`: one malformed token, not an implicit product */
    if (bad || (i < p->len && (is_alnum(s[i]) || s[i] == '.'))) {
        while (i < p->len && (is_alnum(s[i]) || s[i] == '.'))
            i++;
        perr(p, start, "malformed number '%.*s' (numbers are written 12, 1.5, 2e-3 or "
             "0x1.8p3; a product is 2*x)", (int)(i - start > 40 ? 40 : i - start),
             s + start);
        return -1;
    }
    char stack[64], *buf = i - start < sizeof stack ? stack : malloc(i - start + 1);
    if (!buf) {
        pnomem(p);
        return -1;
    }
    memcpy(buf, s + start, i - start);
    buf[i - start] = '\0';
    double v = strtod(buf, NULL);
    if (buf != stack)
        free(buf);
    if (isinf(v)) {
        perr(p, start, "number out of range '%.*s' (the largest finite number is about "
             "1.8e308)", (int)(i - start > 40 ? 40 : i - start), s + start);
        return -1;
    }
    p->tok = (token){T_NUM, start, i - start, v, 0};
    p->cur = i;
    return 0;
}

/* Read the next token into p->tok; -1 (error recorded) on a bad character. */
static int next(parser *p)
{
    const char *s = p->text;
    size_t i = p->cur;
    while (i < p->len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    if (i >= p->len) {
        p->tok = (token){T_END, p->len, 0, 0, 0};
        p->cur = i;
        return 0;
    }
    int c = (unsigned char)s[i];
    if (is_digit(c) || (c == '.' && i + 1 < p->len && is_digit(s[i + 1])))
        return lex_number(p, i);
    if (is_alpha(c)) {
        size_t j = i;
        while (j < p->len && is_alnum(s[j]))
            j++;
        int primed = 0;
        while (primed < 2 && j + (size_t)primed < p->len && s[j + (size_t)primed] == '\'')
            primed++;
        if (primed == 2 && j + 2 < p->len && s[j + 2] == '\'') {
            perr(p, i, "%.*s''' has too many primes (%.*s' is a velocity, %.*s'' an "
                 "acceleration)", (int)(j - i), s + i, (int)(j - i), s + i, (int)(j - i), s + i);
            return -1;
        }
        p->tok = (token){T_NAME, i, j - i + (size_t)primed, 0, primed};
        p->cur = j + (size_t)primed;
        return 0;
    }
    tokkind k;
    size_t n = 1;
    int c2 = i + 1 < p->len ? s[i + 1] : 0;
    switch (c) {
    case '+': k = T_PLUS; break;
    case '-': k = T_MINUS; break;
    case '*': k = T_STAR; break;
    case '/': k = T_SLASH; break;
    case '^': k = T_CARET; break;
    case '(': k = T_LPAREN; break;
    case ')': k = T_RPAREN; break;
    case ',': k = T_COMMA; break;
    case '<': k = c2 == '=' ? (n = 2, T_LE) : T_LT; break;
    case '>': k = c2 == '=' ? (n = 2, T_GE) : T_GT; break;
    case '=':
        if (c2 != '=')
            goto bad;
        k = T_EQ;
        n = 2;
        break;
    case '!':
        if (c2 != '=')
            goto bad;
        k = T_NE;
        n = 2;
        break;
    case '\'':
        perr(p, i, "a prime (') must follow a name");
        return -1;
    default:
        goto bad;
    }
    p->tok = (token){k, i, n, 0, 0};
    p->cur = i + n;
    return 0;
bad:
    if (c == '=')
        perr(p, i, "unexpected '=': an entry is an expression, not an equation (a "
             "constraint G = 0 is written G: drop '= 0', or move the right side over "
             "with '-'; if() compares with '==')");
    else if (c > 0x20 && c < 0x7f)
        perr(p, i, "unexpected character '%c' (expressions are made of numbers, names, "
             "+ - * / ^, parentheses, commas and comparisons in if())", c);
    else
        perr(p, i, "unexpected character '\\x%02X'", (unsigned)c);
    return -1;
}

static int is_cmp(tokkind k) { return k >= T_LT && k <= T_NE; }

static void stamp(parser *p, size_t off)
{
    hs_dag_set_pos(p->d, (hs_srcpos){p->src, (int32_t)off});
}

/* ---- grammar ----
 *   sum     = product { ("+" | "-") product }
 *   product = unary { ("*" | "/") unary }
 *   unary   = ("-" | "+") unary | power
 *   power   = primary [ "^" unary ]          (right-associative)
 *   primary = number | name ["'"] | "pi" | func "(" args ")" | "(" sum ")"
 *   if      = "if" "(" sum cmp sum "," sum "," sum ")"
 * Each function returns NULL after recording an error. */

static const hs_node *parse_sum(parser *p);
static const hs_node *parse_unary(parser *p);

/* Up to 3 argument nodes kept; more are parsed and counted only. */
enum { MAX_ARGS = 3 };

static const struct {
    const char *name;
    hs_kind kind;
    int arity;
} funcs[] = {
    {"sin", HS_SIN, 1},     {"cos", HS_COS, 1},     {"tan", HS_TAN, 1},
    {"asin", HS_ASIN, 1},   {"acos", HS_ACOS, 1},   {"atan", HS_ATAN, 1},
    {"sinh", HS_SINH, 1},   {"cosh", HS_COSH, 1},   {"tanh", HS_TANH, 1},
    {"exp", HS_EXP, 1},     {"log", HS_LOG, 1},     {"sqrt", HS_SQRT, 1},
    {"abs", HS_ABS, 1},     {"sign", HS_SIGN, 1},   {"atan2", HS_ATAN2, 2},
    {"min", HS_MIN, 2},     {"max", HS_MAX, 2},     {"hypot", HS_HYPOT, 2},
    {"pow", HS_POW, 2},     {"if", HS_IF, 3},
};

static int find_func(const char *s, size_t n)
{
    for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
        if (strlen(funcs[i].name) == n && memcmp(funcs[i].name, s, n) == 0)
            return (int)i;
    return -1;
}

int hs_is_language_word(const char *s, size_t n)
{
    return find_func(s, n) >= 0 || (n == 2 && memcmp(s, "pi", 2) == 0);
}

/* Error path only: the function a misspelt name most likely means, from
 * other languages' names (arctan2, ln) or a near spelling. */
static const char *func_hint(const char *s, size_t n)
{
    static const char *const alias[][2] = {
        {"arctan2", "atan2"}, {"arctan", "atan"}, {"arcsin", "asin"}, {"arccos", "acos"},
        {"ln", "log"}, {"fabs", "abs"}, {"sgn", "sign"}, {"power", "pow"},
    };
    char name[64];
    if (n >= sizeof name)
        return NULL;
    memcpy(name, s, n);
    name[n] = '\0';
    for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
        if (strcmp(name, alias[i][0]) == 0)
            return alias[i][1];
    const char *cand[sizeof funcs / sizeof funcs[0]];
    for (size_t i = 0; i < sizeof funcs / sizeof funcs[0]; i++)
        cand[i] = funcs[i].name;
    return hs_nearest(name, cand, sizeof funcs / sizeof funcs[0]);
}

/* The error for a token that cannot continue the expression here. */
static void unexpected(parser *p, const char *what)
{
    char near[80];
    if (is_cmp(p->tok.kind)) {
        perr(p, p->tok.off, "comparison outside if()");
        return;
    }
    if (p->tok.kind == T_STAR && p->tok.off > 0 && p->text[p->tok.off - 1] == '*') {
        perr(p, p->tok.off - 1, "'**' is not an operator: use ^ for powers (x^2)");
        return;
    }
    tok_near(p, near, sizeof near);
    perr(p, p->tok.off, "%s %s%s", what, near, strcmp(what, "expression expected") ? "" :
         " (an operand is missing here: a number, a name or a parenthesis)");
}

/* Expect ')' closing the '(' at offset open. */
static int close_paren(parser *p, size_t open)
{
    if (p->tok.kind == T_RPAREN)
        return next(p);
    if (is_cmp(p->tok.kind)) {
        perr(p, p->tok.off, "comparison outside if()");
        return -1;
    }
    int line, col;
    line_col(p, open, &line, &col);
    char near[80];
    tok_near(p, near, sizeof near);
    perr(p, p->tok.off, "')' expected (to close '(' at %d:%d) %s", line, col, near);
    return -1;
}

/* The condition of if(): a comparison of two sums. */
static const hs_node *parse_cond(parser *p)
{
    const hs_node *a = parse_sum(p);
    if (!a)
        return NULL;
    if (!is_cmp(p->tok.kind)) {
        perr(p, p->tok.off, "if() needs a comparison as its first argument");
        return NULL;
    }
    token op = p->tok;
    if (next(p) != 0)
        return NULL;
    const hs_node *b = parse_sum(p);
    if (!b)
        return NULL;
    stamp(p, op.off);
    return hs_call2(p->d, (hs_kind)(HS_LT + (op.kind - T_LT)), a, b);
}

static const hs_node *parse_call(parser *p, const token *name, int f)
{
    size_t open = p->tok.off;
    if (next(p) != 0)
        return NULL;
    const hs_node *a[MAX_ARGS] = {NULL, NULL, NULL};
    int n = 0;
    if (p->tok.kind != T_RPAREN)
        for (;;) {
            const hs_node *e = funcs[f].kind == HS_IF && n == 0 ? parse_cond(p) : parse_sum(p);
            if (!e)
                return NULL;
            if (n < MAX_ARGS)
                a[n] = e;
            n++;
            if (p->tok.kind != T_COMMA)
                break;
            if (next(p) != 0)
                return NULL;
        }
    if (close_paren(p, open) != 0)
        return NULL;
    if (n != funcs[f].arity) {
        perr(p, name->off, "'%s' takes %d argument%s, got %d", funcs[f].name,
             funcs[f].arity, funcs[f].arity == 1 ? "" : "s", n);
        return NULL;
    }
    stamp(p, name->off);
    switch (funcs[f].arity) {
    case 1: return hs_call1(p->d, funcs[f].kind, a[0]);
    case 2: return hs_call2(p->d, funcs[f].kind, a[0], a[1]);
    default: return hs_if(p->d, a[0], a[1], a[2]);
    }
}

static const hs_node *resolve(parser *p, const token *tok, const char *s, size_t n);

static const hs_node *parse_name(parser *p)
{
    token name = p->tok;
    const char *s = p->text + name.off;
    size_t n = name.len - (size_t)name.primed;
    if (next(p) != 0)
        return NULL;
    int f = find_func(s, n);
    if (p->tok.kind == T_LPAREN) {
        if (f < 0 || name.primed) {
            const char *near = name.primed ? NULL : func_hint(s, n);
            perr(p, name.off, "unknown function '%.*s'%s%s%s", (int)name.len, s,
                 near ? " (did you mean '" : "", near ? near : "", near ? "'?)" :
                 " (the functions: sin cos tan asin acos atan sinh cosh tanh exp log sqrt "
                 "abs sign atan2 min max hypot pow if, D(e) and sum(i=a..b, e))");
            return NULL;
        }
        return parse_call(p, &name, f);
    }
    if (f >= 0) {
        perr(p, name.off, "'%s' is a function: write %s(...)", funcs[f].name, funcs[f].name);
        return NULL;
    }
    stamp(p, name.off);
    if (n == 2 && memcmp(s, "pi", 2) == 0) {
        if (name.primed) {
            perr(p, name.off, "'pi' has no %s: only coordinates take a prime",
                 name.primed > 1 ? "acceleration" : "velocity");
            return NULL;
        }
        return hs_num(p->d, 3.14159265358979323846);
    }
    return resolve(p, &name, s, n);
}

/* A name through the resolver.  Its own function: the hs_error it needs
 * (2 KiB) stays off the frames of the recursive descent. */
__attribute__((noinline)) static const hs_node *resolve(parser *p, const token *tok,
                                                         const char *s, size_t n)
{
    token name = *tok;
    int status = HS_RESOLVE_UNKNOWN;
    hs_error rerr;
    hs_error_init(&rerr);
    const hs_node *e = NULL;
    if (p->r && p->r->lookup)
        e = p->r->lookup(p->r->ctx, p->d, s, n, name.primed, name.off, &status, &rerr);
    if (e)
        return e;
    switch (status) {
    case HS_RESOLVE_NO_PRIME:
        perr(p, name.off, "'%.*s' has no %s: only coordinates take a prime", (int)n, s,
             name.primed > 1 ? "acceleration" : "velocity");
        break;
    case HS_RESOLVE_ERROR:
        if (rerr.code && !p->err.code) {
            p->err = rerr;
            if (p->err.line == 0)
                hs_error_locate(&p->err, p->text, p->len, name.off);
        } else
            perr(p, name.off, "cannot resolve '%.*s'", (int)name.len, s);
        break;
    default:
        perr(p, name.off, "unknown name '%.*s'", (int)n, s);
        break;
    }
    return NULL;
}

static const hs_node *parse_primary(parser *p)
{
    switch (p->tok.kind) {
    case T_NUM: {
        stamp(p, p->tok.off);
        const hs_node *e = hs_num(p->d, p->tok.value);
        return next(p) == 0 ? e : NULL;
    }
    case T_NAME:
        return parse_name(p);
    case T_LPAREN: {
        size_t open = p->tok.off;
        if (next(p) != 0)
            return NULL;
        const hs_node *e = parse_sum(p);
        if (!e || close_paren(p, open) != 0)
            return NULL;
        return e;
    }
    default:
        unexpected(p, "expression expected");
        return NULL;
    }
}

static const hs_node *parse_power(parser *p)
{
    const hs_node *base = parse_primary(p);
    if (!base || p->tok.kind != T_CARET)
        return base;
    size_t op = p->tok.off;
    if (next(p) != 0)
        return NULL;
    const hs_node *ex = parse_unary(p);
    if (!ex)
        return NULL;
    stamp(p, op);
    return hs_pow(p->d, base, ex);
}

static const hs_node *parse_unary(parser *p)
{
    /* every nesting level passes here: parentheses, arguments, signs, exponents */
    if (++p->nest > MAX_NEST) {
        perr(p, p->tok.off, "expression nested too deeply (more than %d levels of "
             "parentheses, signs and powers: give parts of it names under 'define')",
             (int)MAX_NEST);
        return NULL;
    }
    const hs_node *e;
    if (p->tok.kind == T_MINUS || p->tok.kind == T_PLUS) {
        token op = p->tok;
        e = next(p) == 0 ? parse_unary(p) : NULL;
        if (e && op.kind == T_MINUS) {
            stamp(p, op.off);
            e = hs_neg(p->d, e);
        }
    } else
        e = parse_power(p);
    p->nest--;
    return e;
}

/* A chain of n-ary operands collected before one constructor call, so
 * a+b+c+... costs one node, not one per operator. */
typedef struct chain {
    const hs_node *stack[4], **a;
    size_t n, cap;
} chain;

static int chain_push(parser *p, chain *c, const hs_node *e)
{
    if (c->n == c->cap) {
        size_t cap = 2 * c->cap;
        const hs_node **a = malloc(cap * sizeof *a);
        if (!a) {
            pnomem(p);
            return -1;
        }
        memcpy(a, c->a, c->n * sizeof *a);
        if (c->a != c->stack)
            free(c->a);
        c->a = a;
        c->cap = cap;
    }
    c->a[c->n++] = e;
    return 0;
}

static void chain_free(chain *c)
{
    if (c->a != c->stack)
        free(c->a);
}

static const hs_node *parse_product(parser *p)
{
    const hs_node *e = parse_unary(p);
    if (!e || (p->tok.kind != T_STAR && p->tok.kind != T_SLASH))
        return e;
    chain c = {.n = 0, .cap = 4};
    c.a = c.stack;
    c.a[c.n++] = e;
    size_t first = p->tok.off;
    while (e && (p->tok.kind == T_STAR || p->tok.kind == T_SLASH)) {
        token op = p->tok;
        e = next(p) == 0 ? parse_unary(p) : NULL;
        if (e && op.kind == T_SLASH) {
            stamp(p, op.off); /* a literal 1/0 is reported at its '/' */
            e = hs_pow(p->d, e, hs_num(p->d, -1));
        }
        if (e && chain_push(p, &c, e) != 0)
            e = NULL;
    }
    if (e) {
        stamp(p, first);
        e = hs_muln(p->d, c.a, c.n);
    }
    chain_free(&c);
    return e;
}

static const hs_node *parse_sum(parser *p)
{
    const hs_node *e = parse_product(p);
    if (!e || (p->tok.kind != T_PLUS && p->tok.kind != T_MINUS))
        return e;
    chain c = {.n = 0, .cap = 4};
    c.a = c.stack;
    c.a[c.n++] = e;
    size_t first = p->tok.off;
    while (e && (p->tok.kind == T_PLUS || p->tok.kind == T_MINUS)) {
        token op = p->tok;
        e = next(p) == 0 ? parse_product(p) : NULL;
        if (e && op.kind == T_MINUS) {
            stamp(p, op.off);
            e = hs_neg(p->d, e);
        }
        if (e && chain_push(p, &c, e) != 0)
            e = NULL;
    }
    if (e) {
        stamp(p, first);
        e = hs_addn(p->d, c.a, c.n);
    }
    chain_free(&c);
    return e;
}

static const hs_node *parse_top(hs_dag *d, const char *text, size_t len, int src,
                               const hs_resolver *r, hs_error *err, int cond);

const hs_node *hs_parse(hs_dag *d, const char *text, size_t len, int src,
                        const hs_resolver *r, hs_error *err)
{
    return parse_top(d, text, len, src, r, err, 0);
}

const hs_node *hs_parse_cond(hs_dag *d, const char *text, size_t len, int src,
                             const hs_resolver *r, hs_error *err)
{
    return parse_top(d, text, len, src, r, err, 1);
}

/* cond: a comparison of two sums may be the whole expression. */
static const hs_node *parse_top(hs_dag *d, const char *text, size_t len, int src,
                               const hs_resolver *r, hs_error *err, int cond)
{
    parser p = {.d = d, .text = text, .len = len, .src = src, .r = r};
    hs_error_init(&p.err);
    hs_srcpos saved = hs_dag_pos(d);
    int failed_before = hs_dag_failed(d);
    const hs_node *e = NULL;

    if (next(&p) == 0) {
        if (p.tok.kind == T_END)
            perr(&p, p.tok.off, "empty expression (write an expression here, or leave "
                 "the entry out)");
        else if ((e = parse_sum(&p)) != NULL && cond && is_cmp(p.tok.kind)) {
            token op = p.tok;              /* hs_parse_cond: a OP b */
            const hs_node *b = next(&p) == 0 ? parse_sum(&p) : NULL;
            stamp(&p, op.off);
            e = b ? hs_call2(d, (hs_kind)(HS_LT + (op.kind - T_LT)), e, b) : NULL;
        }
        if (e && p.tok.kind != T_END) {
            char t[64];
            tok_text(&p, &p.tok, t, sizeof t);
            if (is_cmp(p.tok.kind))
                perr(&p, p.tok.off, "comparison outside if()");
            else
                perr(&p, p.tok.off, "unexpected %s after the end of the expression", t);
        }
    }
    hs_dag_set_pos(d, saved);

    /* a fold to NaN/Inf or a size limit hit while building this expression */
    if (!p.err.code && !failed_before && hs_dag_failed(d)) {
        const hs_error *de = hs_dag_error(d);
        hs_srcpos at = hs_dag_error_pos(d);
        hs_error_set(&p.err, de->code, "%s", de->msg);
        if (de->code != HS_EXIT_NOMEM && at.src == src && at.off >= 0)
            hs_error_locate(&p.err, text, len, (size_t)at.off);
    }
    if (p.err.code) {
        if (err)
            hs_error_adopt(err, &p.err, 0);
        return NULL;
    }
    return e;
}
