/* Tests of src/expr/ (parser, dag, simplifier, printer, derivatives):
 * table-driven syntax and error cases, canonical forms as printed text,
 * derivatives of every function against central finite differences, and a
 * seeded random property test (print -> parse is the identity on nodes;
 * the symbolic derivative matches a finite difference). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "expr/expr.h"

/* ---- fixtures: a dag with fixed symbol numbers and a resolver ---- */

/* Symbols in creation order, so in[] below is indexed by these numbers. */
static const char *const SYMS[] = {"x", "y", "z", "t", "l", "m", "a", "b", "c",
                                   "x'", "y'", "z'"};
enum { X, Y, Z, T, L, M, A, B, C, XV, YV, ZV, NSYM };
static const double IN[NSYM] = {1.5, -0.7, 2.25, 0.3, 1.1, 2.0, 3.0, 5.0, 7.0,
                                0.25, -1.25, 0.5};

static hs_dag *dag;

static int is_coord(const char *s, size_t n)
{
    return n == 1 && (s[0] == 'x' || s[0] == 'y' || s[0] == 'z');
}

/* Names in SYMS resolve; x, y, z take a prime; others are unknown. */
static const hs_node *lookup(void *ctx, hs_dag *d, const char *name, size_t len,
                             int primed, size_t offset, int *status, hs_error *err)
{
    (void)ctx;
    (void)offset;
    if (len == 3 && memcmp(name, "bad", 3) == 0) {
        hs_error_set(err, HS_EXIT_MODEL, "'bad' is defined in terms of itself");
        *status = HS_RESOLVE_ERROR;
        return NULL;
    }
    if (primed && !is_coord(name, len)) {
        int known = 0;
        for (int i = 0; i < NSYM; i++)
            known |= strlen(SYMS[i]) == len && memcmp(SYMS[i], name, len) == 0;
        *status = known ? HS_RESOLVE_NO_PRIME : HS_RESOLVE_UNKNOWN;
        return NULL;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%.*s%s", (int)len, name, primed > 1 ? "''" : primed ? "'" : "");
    int s = hs_dag_find_symbol(d, buf);
    if (s < 0) {
        *status = HS_RESOLVE_UNKNOWN;
        return NULL;
    }
    return hs_sym(d, s);
}

static const hs_resolver RES = {lookup, NULL, NULL};

static void setup(void)
{
    dag = hs_dag_new();
    ck_assert_ptr_nonnull(dag);
    for (int i = 0; i < NSYM; i++)
        ck_assert_int_eq(hs_dag_symbol(dag, SYMS[i]), i);
}

static void teardown(void)
{
    hs_dag_free(dag);
    dag = NULL;
}

static const hs_node *parse_ok(const char *text)
{
    hs_error err;
    hs_error_init(&err);
    const hs_node *e = hs_parse(dag, text, strlen(text), 0, &RES, &err);
    ck_assert_msg(e != NULL, "'%s': %s", text, err.msg);
    ck_assert_int_eq(err.code, 0);
    return e;
}

static const char *str(const hs_node *e)
{
    static char buf[4096];
    size_t n = hs_format(dag, e, buf, sizeof buf);
    ck_assert_uint_lt(n, sizeof buf);
    return buf;
}

/* ---- precedence and associativity, checked by value ---- */

static const struct {
    const char *text;
    double value; /* with the symbol values IN[] */
} precedence[] = {
    {"-x^2", -2.25},
    {"-2^2", -4},
    {"2^3^2", 512},
    {"2^-1", 0.5},
    {"2^-x^2", 0.2102241038134287}, /* 2^(-(x^2)) */
    {"a-b-c", -9},
    {"a/b/c", 3.0 / 35.0},
    {"a-b+c", 5},
    {"a/b*c", 4.2},
    {"--x", 1.5},
    {"-+x", -1.5},
    {"+-+-x", 1.5},
    {"x - -y", 0.8},
    {"2*3+4*5", 26},
    {"2+3*4^2", 50},
    {"(1+2)*3", 9},
    {"2^3*2", 16},
    {"-a*b", -15},
    {"a*-b", -15},
    {".5 + 1e-3 + 2.5E+2 + 1.", 251.501},
    {"pi", 3.14159265358979323846},
    {"sin(x)^2 + cos(x)^2", 1},
    {"atan2(1, -1)", 2.35619449019234492885},
    {"pow(2, 10)", 1024},
    {"x'", 0.25},
    {"x' * y'", -0.3125},
    {"if(x < y, 1, 2)", 2},
    {"if(x >= y, 1, 2)", 1},
    {"if(a == 3, 1, 2)", 1},
    {"if(a != 3, 1, 2)", 2},
    {"if(a <= 3, 1, 2)", 1},
    {"if(a > 3, 1, 2)", 2},
    {"min(a, b) + max(a, b)", 8},
    {"hypot(3, 4)", 5},
    {"abs(y) + sign(y)", -0.3},
    {" \t\n x \n* 2 ", 3},
    {"t", 0.3},
};

START_TEST(test_precedence)
{
    const hs_node *e = parse_ok(precedence[_i].text);
    double v = hs_eval_tree(e, IN);
    double want = precedence[_i].value;
    ck_assert_msg(fabs(v - want) <= 1e-14 * fmax(1, fabs(want)), "'%s' = %.17g, want %.17g",
                  precedence[_i].text, v, want);
}
END_TEST

/* ---- every parse error: message part, line, column ---- */

static const struct {
    const char *text;
    const char *msg;
    int line, column;
} bad[] = {
    {"x # y", "unexpected character '#'", 1, 3},
    {"x + \x01", "unexpected character '\\x01'", 1, 5},
    {"x = y", "unexpected '=': an entry is an expression, not an equation", 1, 3},
    {"(x + y", "')' expected (to close '(' at 1:1) at end of input", 1, 7},
    {"x*(y\n + (z", "')' expected (to close '(' at 2:4)", 2, 6},
    {"sin(x, y", "')' expected (to close '(' at 1:4)", 1, 9},
    {"x + y)", "unexpected ')' after the end of the expression", 1, 6},
    {"x +", "expression expected at end of input", 1, 4},
    {"(x * )", "expression expected near ')'", 1, 6},
    {"x * * y", "expression expected near '*'", 1, 5},
    {"atan2(x)", "'atan2' takes 2 arguments, got 1", 1, 1},
    {"sin(x, y)", "'sin' takes 1 argument, got 2", 1, 1},
    {"hypot()", "'hypot' takes 2 arguments, got 0", 1, 1},
    {"if(x < y, 1)", "'if' takes 3 arguments, got 2", 1, 1},
    {"sinn(x)", "unknown function 'sinn'", 1, 1},
    {"2 * foo(x)", "unknown function 'foo'", 1, 5},
    {"sin + 1", "'sin' is a function", 1, 1},
    {"", "empty expression", 1, 1},
    {"  \n ", "empty expression", 2, 2},
    {"x y", "unexpected 'y' after the end of the expression", 1, 3},
    {"x 2", "unexpected '2' after the end of the expression", 1, 3},
    {"m'", "'m' has no velocity: only coordinates take a prime", 1, 1},
    {"x + pi'", "'pi' has no velocity", 1, 5},
    {"x '", "a prime (') must follow a name", 1, 3},
    {"m''", "'m' has no acceleration: only coordinates take a prime", 1, 1},
    {"1 + x'''", "x''' has too many primes (x' is a velocity, x'' an acceleration)", 1, 5},
    {"pi''", "'pi' has no acceleration", 1, 1},
    {"foo + 1", "unknown name 'foo'", 1, 1},
    {"x + foo'", "unknown name 'foo'", 1, 5},
    {"x + 2*bad", "'bad' is defined in terms of itself", 1, 7},
    {"x < y", "comparison outside if()", 1, 3},
    {"sin(x < y)", "comparison outside if()", 1, 7},
    {"if(x < y, x < y, 1)", "comparison outside if()", 1, 13},
    {"if(x < y < z, 1, 2)", "comparison outside if()", 1, 10},
    {"if(x, 1, 2)", "if() needs a comparison as its first argument", 1, 5},
    {"1e999", "number out of range '1e999'", 1, 1},
    {"2x", "malformed number '2x'", 1, 1},
    {"1e+", "malformed number '1e+'", 1, 1},
    {"1.2.3", "malformed number '1.2.3'", 1, 1},
    {"log(-1)", "constant expression evaluates to NaN/Inf", 1, 1},
    {"x + 1/0", "division by zero", 1, 6},
    {"x + sqrt(1 - 2)", "constant expression evaluates to NaN/Inf", 1, 5},
};

START_TEST(test_parse_errors)
{
    const char *text = bad[_i].text;
    hs_error err;
    hs_error_init(&err);
    const hs_node *e = hs_parse(dag, text, strlen(text), 0, &RES, &err);
    ck_assert_msg(e == NULL, "'%s' parsed", text);
    ck_assert_int_eq(err.code, HS_EXIT_MODEL);
    ck_assert_msg(strstr(err.msg, bad[_i].msg) != NULL, "'%s': message '%s', want '%s'", text,
                  err.msg, bad[_i].msg);
    ck_assert_msg(err.line == bad[_i].line && err.column == bad[_i].column,
                  "'%s': at %d:%d, want %d:%d", text, err.line, err.column, bad[_i].line,
                  bad[_i].column);
}
END_TEST

/* hs_parse_cond: a whole text may be one comparison (an event's
 * condition); anything else parses as hs_parse does. */
START_TEST(test_parse_cond)
{
    hs_error err;
    hs_error_init(&err);
    const char *t1 = "x^2 + y > a - 1";
    const hs_node *e = hs_parse_cond(dag, t1, strlen(t1), 0, &RES, &err);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(e->kind, HS_GT);
    ck_assert_ptr_eq(e->args[0], parse_ok("x^2 + y"));
    ck_assert_ptr_eq(e->args[1], parse_ok("a - 1"));
    const char *t2 = "if(x < y, 1, 2) <= 3";
    e = hs_parse_cond(dag, t2, strlen(t2), 0, &RES, &err);
    ck_assert(e && e->kind == HS_LE);
    ck_assert_ptr_eq(hs_parse_cond(dag, "x + 1", 5, 0, &RES, &err), parse_ok("x + 1"));
    static const struct { const char *text, *msg; int col; } bad_cond[] = {
        {"x > y > 1", "comparison outside if()", 7},
        {"x >", "at end of input", 4},
        {"sin(x < 1)", "comparison outside if()", 7},
    };
    for (size_t i = 0; i < sizeof bad_cond / sizeof *bad_cond; i++) {
        hs_error_init(&err);
        const char *t = bad_cond[i].text;
        ck_assert_ptr_null(hs_parse_cond(dag, t, strlen(t), 0, &RES, &err));
        ck_assert_msg(strstr(err.msg, bad_cond[i].msg), "'%s': %s", t, err.msg);
        ck_assert_int_eq(err.column, bad_cond[i].col);
    }
}
END_TEST

/* Deep nesting ends in a clean positioned error, not a stack overflow. */
START_TEST(test_deep_nesting)
{
    const size_t n = 100000;
    static const char *const fmt[] = {"(", "-", "sin(", "2^"};
    for (size_t k = 0; k < sizeof fmt / sizeof fmt[0]; k++) {
        size_t w = strlen(fmt[k]);
        char *text = malloc(n * w + 2);
        ck_assert_ptr_nonnull(text);
        for (size_t i = 0; i < n; i++)
            memcpy(text + i * w, fmt[k], w);
        strcpy(text + n * w, "x");
        hs_error err;
        hs_error_init(&err);
        ck_assert_ptr_null(hs_parse(dag, text, strlen(text), 0, &RES, &err));
        ck_assert_int_eq(err.code, HS_EXIT_MODEL);
        ck_assert_str_eq(err.msg, "expression nested too deeply (more than 1000 levels of "
                         "parentheses, signs and powers: give parts of it names under "
                         "'define')");
        ck_assert_int_eq(err.line, 1);
        ck_assert_int_gt(err.column, 100);
        free(text);
    }
    /* moderately deep input still parses */
    char text[2100];
    memset(text, '(', 900);
    text[900] = 'x';
    memset(text + 901, ')', 900);
    text[1801] = '\0';
    ck_assert_ptr_eq(parse_ok(text), hs_sym(dag, X));
}
END_TEST

/* The dag refuses nodes deeper than HS_MAX_DEPTH, recording an error. */
START_TEST(test_depth_limit)
{
    const hs_node *e = hs_sym(dag, X);
    for (int i = 0; i < HS_MAX_DEPTH - 1; i++)
        e = hs_call1(dag, HS_SIN, e);
    ck_assert_int_eq(e->depth, HS_MAX_DEPTH);
    ck_assert(!hs_dag_failed(dag));
    /* one level more is refused */
    hs_call1(dag, HS_SIN, e);
    ck_assert(hs_dag_failed(dag));
    ck_assert_str_eq(hs_dag_error(dag)->msg, "expression nested too deeply");
    ck_assert_int_eq(hs_dag_error(dag)->code, HS_EXIT_MODEL);
    /* the derivative of the deepest allowed expression, on a dag of its
     * own: bounded recursion, no crash; its chain rule holds the 4000
     * cosines' products, about 8e6 operands, past HS_MAX_OPERANDS: "too
     * large", recorded, or a result */
    hs_dag *d2 = hs_dag_new();
    ck_assert_ptr_nonnull(d2);
    int x2 = hs_dag_symbol(d2, "x");
    const hs_node *e2 = hs_sym(d2, x2);
    for (int i = 0; i < HS_MAX_DEPTH - 1; i++)
        e2 = hs_call1(d2, HS_SIN, e2);
    ck_assert(!hs_dag_failed(d2));
    const hs_node *de = hs_diff(d2, e2, x2);
    ck_assert(de != NULL || hs_dag_failed(d2));
    if (hs_dag_failed(d2))
        ck_assert_msg(strstr(hs_dag_error(d2)->msg, "expression too large") != NULL, "%s",
                      hs_dag_error(d2)->msg);
    hs_dag_free(d2);
}
END_TEST

/* ---- hash-consing ---- */

START_TEST(test_hash_consing)
{
    ck_assert_ptr_eq(parse_ok("x + y"), parse_ok("y + x"));
    ck_assert_ptr_eq(parse_ok("x*y*z"), parse_ok("z*(y*x)"));
    ck_assert_ptr_eq(parse_ok("sin(x)*2 + 1"), parse_ok("1 + 2*sin(x)"));
    ck_assert_ptr_eq(parse_ok("x - y"), parse_ok("-y + x"));
    ck_assert_ptr_eq(parse_ok("x/y"), parse_ok("x*y^-1"));
    const hs_node *e = parse_ok("sin(x + y) * cos(y + x)");
    const hs_node *s = parse_ok("y + x");
    ck_assert_int_eq(e->kind, HS_MUL);
    ck_assert_ptr_eq(e->args[0]->args[0], s);
    ck_assert_ptr_eq(e->args[1]->args[0], s);
    ck_assert_ptr_eq(hs_num(dag, 2.5), hs_num(dag, 2.5));
    ck_assert_ptr_eq(hs_num(dag, -0.0), hs_num(dag, 0.0));
    /* the raw table compares values bitwise */
    ck_assert_ptr_ne(hs_dag_intern(dag, HS_NUM, NULL, 0, -0.0, -1), hs_num(dag, 0.0));
    size_t n = hs_dag_nnodes(dag);
    parse_ok("sin(x + y) * cos(y + x)");
    ck_assert_uint_eq(hs_dag_nnodes(dag), n);
    ck_assert_int_eq(hs_dag_find_symbol(dag, "x'"), XV);
    ck_assert_int_eq(hs_dag_find_symbol(dag, "nope"), -1);
    ck_assert_int_eq(hs_dag_symbol(dag, "y"), Y);
    ck_assert_str_eq(hs_dag_symbol_name(dag, ZV), "z'");
    ck_assert_int_eq(hs_dag_nsymbols(dag), NSYM);
}
END_TEST

/* ---- simplifier, as printed text ---- */

static const struct {
    const char *in, *out;
} simp[] = {
    {"x + x", "2*x"},
    {"x*1e-200*1e-200", "0"},          /* a coefficient that underflows (fuzz) */
    {"sin(x)^2 + cos(x)^2", "1"},      /* Pythagoras, for derived metrics */
    {"3*y*sin(x)^2 + 3*y*cos(x)^2", "3*y"},
    {"sin(x)^2 + cos(x)^2 + x", "x + 1"},
    {"sin(x)^2 + cos(y)^2", "sin(x)^2 + cos(y)^2"},
    {"cos(x)*cos(y) + sin(x)*sin(y)", "cos(x - y)"},      /* linkage metrics */
    {"3*z*cos(x)*cos(y) + 3*z*sin(x)*sin(y)", "3*z*cos(x - y)"},
    {"sin(x)*cos(y) - cos(x)*sin(y)", "sin(x - y)"},
    {"cos(x)*cos(y) - sin(x)*sin(y)", "cos(x)*cos(y) - sin(x)*sin(y)"},
    {"cos(x)*cos(y) + sin(x)*sin(y) - cos(x - y)", "0"},
    {"x/1e300/1e300", "0"},
    {"3*x - x", "2*x"},
    {"x + 2*x", "3*x"},
    {"x - x", "0"},
    {"x + y - x", "y"},
    {"x*x", "x^2"},
    {"x^2*x^3", "x^5"},
    {"x*x^-1", "1"},
    {"x/x", "1"},
    {"x^0.5*x^0.5", "x"},
    {"(x^2)^3", "x^6"},
    {"(x^2)^0.5", "(x^2)^0.5"},
    {"(x^0.5)^2", "x"},
    {"sqrt(x)^2", "sqrt(x)^2"},
    {"2*(3*x)", "6*x"},
    {"2*(x + y)", "2*(x + y)"},
    {"(x + y)*(x + y)", "(x + y)^2"},
    {"(x + y)*(x - y)", "(x + y)*(x - y)"},
    {"(x*y)^2", "x^2*y^2"},
    {"(2*x)^-1", "1/(2*x)"},
    {"x + 0", "x"},
    {"x*1", "x"},
    {"x*0", "0"},
    {"0*sin(x)/y", "0"},
    {"x^1", "x"},
    {"x^0", "1"},
    {"1^x", "1"},
    {"0^x", "0^x"},
    {"0^2", "0"},
    {"-(-x)", "x"},
    {"-(x - y)", "-(x - y)"},
    {"sin(0)", "0"},
    {"cos(0) + exp(0) + sqrt(4)", "4"},
    {"abs(-2)*sign(-3)", "-2"},
    {"if(1 < 2, x, y)", "x"},
    {"if(2 < 1, x, y)", "y"},
    {"if(x < y, z, z)", "z"},
    {"min(x, x) + max(y, y)", "x + y"},
    {"abs(abs(x))", "abs(x)"},
    {"x - y", "x - y"},
    {"-x + y", "y - x"},
    {"-x - y", "-x - y"},
    {"1 + x", "x + 1"},
    {"x - 1", "x - 1"},
    {"x/y", "x/y"},
    {"x^2/(2*y)", "x^2/(2*y)"},
    {"x/(y*z)", "x/(y*z)"},
    {"-sin(x)", "-sin(x)"},
    {"x^-1", "1/x"},
    {"-x^-2", "-1/x^2"},
    {"x^-0.5", "1/x^0.5"},
    {"2^x", "2^x"},
    {"2^-x", "2^(-x)"},
    {"x^y^z", "x^y^z"},
    {"(x^y)^z", "(x^y)^z"},
    {"(-x)^0.5", "(-x)^0.5"},
    {"(x + y)^0.5", "(x + y)^0.5"},
    {"0.1*x", "x/10"},
    {"0.3*x", "0.3*x"},
    {"1e-3*x", "x/1000"},
    {"1e300*x", "1e+300*x"},
    {"x/3", "x/3"},
    {"0.1 + 0.2", "0.30000000000000004"},
    {"2.5 - x", "2.5 - x"},
    {"x'^2 + y'", "x'^2 + y'"},
    {"if(x < y, x^2, -y)", "if(x < y, x^2, -y)"},
    {"atan2(y, x) + hypot(x, y)", "atan2(y, x) + hypot(x, y)"},
    {"pow(x, 2)", "x^2"},
    {"pi", "3.141592653589793"},
};

START_TEST(test_simplify)
{
    const hs_node *e = parse_ok(simp[_i].in);
    ck_assert_str_eq(str(e), simp[_i].out);
    ck_assert_ptr_eq(parse_ok(simp[_i].out), e);
}
END_TEST

START_TEST(test_constructors)
{
    const hs_node *x = hs_sym(dag, X), *y = hs_sym(dag, Y);
    ck_assert_ptr_eq(hs_addn(dag, NULL, 0), hs_num(dag, 0));
    ck_assert_ptr_eq(hs_muln(dag, NULL, 0), hs_num(dag, 1));
    ck_assert_ptr_eq(hs_sub(dag, x, x), hs_num(dag, 0));
    ck_assert_ptr_eq(hs_div(dag, hs_mul(dag, x, y), y), x);
    ck_assert_ptr_eq(hs_neg(dag, hs_neg(dag, y)), y);
    ck_assert_ptr_eq(hs_call2(dag, HS_LT, x, x), hs_num(dag, 0));
    ck_assert_ptr_eq(hs_call2(dag, HS_LE, x, x), hs_num(dag, 1));
    ck_assert_ptr_eq(hs_call2(dag, HS_POW, x, hs_num(dag, 2)),
                     hs_mul(dag, x, x));
    ck_assert(hs_is_num(hs_num(dag, 3), 3));
    ck_assert(!hs_is_num(x, 3));
    /* a wide sum: one node, merged terms */
    const hs_node *t[300];
    for (int i = 0; i < 300; i++)
        t[i] = hs_mul(dag, hs_num(dag, i % 3 + 1), hs_sym(dag, i % 7));
    const hs_node *s = hs_addn(dag, t, 300);
    ck_assert_int_eq(s->kind, HS_ADD);
    ck_assert_uint_eq(s->nargs, 7);
    const hs_node *p = hs_muln(dag, t, 300);
    ck_assert_int_eq(p->kind, HS_MUL);
    ck_assert_uint_eq(p->nargs, 8); /* coefficient and 7 powers */
    /* rebuilding any canonical node gives it back */
    const hs_node *e = parse_ok("2*x^2*y/(z + 1) - sin(x)^3 + if(x < y, a, b) + 4");
    ck_assert_ptr_eq(hs_rebuild(dag, e->kind, e->args, e->nargs, e), e);
    for (uint32_t i = 0; i < e->nargs; i++) {
        const hs_node *c = e->args[i];
        ck_assert_ptr_eq(hs_rebuild(dag, c->kind, c->args, c->nargs, c), c);
    }
    ck_assert_str_eq(hs_kind_name(HS_ATAN2), "atan2");
    ck_assert_str_eq(hs_kind_name(HS_LE), "<=");
    ck_assert_int_eq(hs_kind_arity(HS_ADD), -1);
    ck_assert_int_eq(hs_kind_arity(HS_IF), 3);
    ck_assert_int_eq(hs_kind_arity(HS_SQRT), 1);
    ck_assert(!hs_dag_failed(dag));
}
END_TEST

/* A fold to NaN/Inf is an error at the node being built; a valid node is
 * still returned. */
START_TEST(test_fold_error)
{
    hs_dag_set_pos(dag, (hs_srcpos){7, 42});
    const hs_node *e = hs_call1(dag, HS_LOG, hs_num(dag, -1));
    ck_assert_ptr_nonnull(e);
    ck_assert(hs_dag_failed(dag));
    ck_assert_int_eq(hs_dag_error_pos(dag).src, 7);
    ck_assert_int_eq(hs_dag_error_pos(dag).off, 42);
    ck_assert_ptr_nonnull(strstr(hs_dag_error(dag)->msg, "NaN/Inf"));
    /* the first error is kept */
    hs_dag_fail(dag, (hs_srcpos){1, 1}, "second");
    ck_assert_int_eq(hs_dag_error_pos(dag).src, 7);
}
END_TEST

START_TEST(test_format_cap)
{
    const hs_node *e = parse_ok("x^2 + y^2 - l^2");
    char buf[6];
    size_t n = hs_format(dag, e, buf, sizeof buf);
    ck_assert_uint_eq(n, strlen("x^2 + y^2 - l^2"));
    ck_assert_str_eq(buf, "x^2 +");
    ck_assert_uint_eq(hs_format(dag, e, NULL, 0), n);
}
END_TEST

/* ---- derivatives as text ---- */

static const struct {
    const char *in;
    int wrt;
    const char *out;
} dtext[] = {
    {"x^2 + y^2 - l^2", X, "2*x"},
    {"0.5*m*x^2", X, "m*x"},
    {"sin(x)^2", X, "2*sin(x)*cos(x)"},
    {"x*y", X, "y"},
    {"x*y", Z, "0"},
    {"exp(2*x)", X, "2*exp(2*x)"},
    {"log(x)", X, "1/x"},
    {"sqrt(x)", X, "1/(2*sqrt(x))"},
    {"cos(x)", X, "-sin(x)"},
    {"tan(x)", X, "tan(x)^2 + 1"},
    {"abs(x)", X, "sign(x)"},
    {"sign(x)", X, "0"},
    {"min(x, y)", X, "if(x <= y, 1, 0)"},
    {"max(x, y)", Y, "if(x >= y, 0, 1)"},
    {"if(x < y, x^2, 3*x)", X, "if(x < y, 2*x, 3)"},
    {"x^y", Y, "x^y*log(x)"},
    {"t*x'", T, "x'"},
};

START_TEST(test_diff_text)
{
    const hs_node *e = parse_ok(dtext[_i].in);
    ck_assert_str_eq(str(hs_diff(dag, e, dtext[_i].wrt)), dtext[_i].out);
    ck_assert(!hs_dag_failed(dag));
}
END_TEST

/* ---- derivatives against finite differences ----
 * Central difference (f(x+h) - f(x-h)) / 2h has truncation error
 * h^2 |f'''| / 6 and rounding error about eps |f| / h.  Each row picks h
 * (1e-5 times the local scale: the distance to a domain edge, or |x|) so
 * both stay below 1e-7 relative to |f'| even at the edges (asin at 0.999:
 * f' ~ 22, f''' ~ 6e6, h = 1e-6 gives 1e-6 absolute); the tolerance is
 * 1e-6 relative (absolute below |f'| = 1). */

static double fd_check(const hs_node *e, int wrt, const double *in0, double h, double *exact)
{
    double in[NSYM];
    memcpy(in, in0, sizeof in);
    *exact = hs_eval_tree(hs_diff(dag, e, wrt), in);
    double x = in[wrt];
    in[wrt] = x + h;
    double fp = hs_eval_tree(e, in);
    in[wrt] = x - h;
    double fm = hs_eval_tree(e, in);
    return (fp - fm) / (2 * h);
}

static const struct {
    const char *text;
    int wrt;
    double x, y, h; /* the point (x, y) and the step */
} fd[] = {
    {"sin(x)", X, -2, 0, 1e-5}, {"sin(x)", X, 0.3, 0, 1e-5}, {"sin(x)", X, 20, 0, 1e-4},
    {"cos(x)", X, -2, 0, 1e-5}, {"cos(x)", X, 1.2, 0, 1e-5},
    {"tan(x)", X, -1, 0, 1e-5}, {"tan(x)", X, 1.5, 0, 1e-7}, /* near pi/2 */
    {"asin(x)", X, -0.999, 0, 1e-6}, {"asin(x)", X, 0, 0, 1e-5}, {"asin(x)", X, 0.999, 0, 1e-6},
    {"acos(x)", X, -0.999, 0, 1e-6}, {"acos(x)", X, 0.5, 0, 1e-5}, {"acos(x)", X, 0.999, 0, 1e-6},
    {"atan(x)", X, -3, 0, 1e-5}, {"atan(x)", X, 0.1, 0, 1e-5}, {"atan(x)", X, 100, 0, 1e-3},
    {"sinh(x)", X, -2, 0, 1e-5}, {"sinh(x)", X, 0.5, 0, 1e-5},
    {"cosh(x)", X, -2, 0, 1e-5}, {"cosh(x)", X, 0.5, 0, 1e-5},
    {"tanh(x)", X, -2, 0, 1e-5}, {"tanh(x)", X, 0.5, 0, 1e-5},
    {"exp(x)", X, -3, 0, 1e-5}, {"exp(x)", X, 5, 0, 1e-5},
    {"log(x)", X, 1e-3, 0, 1e-8}, {"log(x)", X, 1, 0, 1e-5}, {"log(x)", X, 100, 0, 1e-3},
    {"sqrt(x)", X, 1e-4, 0, 1e-9}, {"sqrt(x)", X, 2, 0, 1e-5},
    {"abs(x)", X, -2, 0, 1e-5}, {"abs(x)", X, 0.5, 0, 1e-5},
    {"sign(x)", X, -2, 0, 1e-5}, {"sign(x)", X, 0.5, 0, 1e-5},
    /* atan2 in all four quadrants, both arguments */
    {"atan2(y, x)", X, 1, 2, 1e-5}, {"atan2(y, x)", Y, 1, 2, 1e-5},
    {"atan2(y, x)", X, -1, 2, 1e-5}, {"atan2(y, x)", Y, -1, 2, 1e-5},
    {"atan2(y, x)", X, -1, -2, 1e-5}, {"atan2(y, x)", Y, -1, -2, 1e-5},
    {"atan2(y, x)", X, 1, -2, 1e-5}, {"atan2(y, x)", Y, 1, -2, 1e-5},
    {"hypot(x, y)", X, 3, -4, 1e-5}, {"hypot(x, y)", Y, 3, -4, 1e-5},
    {"hypot(x, y)", X, 1e-3, 1e-3, 1e-8},
    {"min(x, y)", X, 1, 2, 1e-5}, {"min(x, y)", Y, 1, 2, 1e-5},
    {"max(x, y)", X, 1, 2, 1e-5}, {"max(x, y)", Y, 1, 2, 1e-5},
    {"x^3", X, -2, 0, 1e-5}, {"x^-2", X, -0.5, 0, 1e-6}, {"x^0.5", X, 0.01, 0, 1e-7},
    {"x^y", X, 2, 0.7, 1e-5}, {"x^y", Y, 2, 0.7, 1e-5}, {"x^x", X, 0.4, 0, 1e-5},
    {"2^x", X, 1.3, 0, 1e-5}, {"pow(y, x)", X, 3, 1.5, 1e-5},
    {"if(x < y, x^2, sin(x))", X, 1, 2, 1e-5}, {"if(x < y, x^2, sin(x))", X, 3, 2, 1e-5},
    {"x*y*sin(x*y)/(1 + x^2)", X, 0.7, -1.3, 1e-5},
    {"exp(-x^2/2)*cos(3*x)", X, 0.9, 0, 1e-5},
};

START_TEST(test_diff_fd)
{
    const hs_node *e = parse_ok(fd[_i].text);
    double in[NSYM];
    memcpy(in, IN, sizeof in);
    in[X] = fd[_i].x;
    in[Y] = fd[_i].y;
    double exact, approx = fd_check(e, fd[_i].wrt, in, fd[_i].h, &exact);
    ck_assert_msg(isfinite(exact) && fabs(exact - approx) <= 1e-6 * fmax(1, fabs(exact)),
                  "d %s / d%s at (%g, %g): %.17g, finite difference %.17g", fd[_i].text,
                  SYMS[fd[_i].wrt], fd[_i].x, fd[_i].y, exact, approx);
    ck_assert(!hs_dag_failed(dag));
}
END_TEST

/* D(x^2 + y^2 - l^2) = 2 x x' + 2 y y' (l is a parameter), and
 * D(t*x) = x + t x'. */
START_TEST(test_total_diff)
{
    int q[2] = {X, Y}, v[2] = {XV, YV};
    const hs_node *g = parse_ok("x^2 + y^2 - l^2");
    const hs_node *dg = hs_total_diff(dag, g, T, 2, q, v);
    ck_assert_ptr_eq(dg, parse_ok("2*x*x' + 2*y*y'"));
    const hs_node *h = parse_ok("t*x + sin(t)");
    ck_assert_ptr_eq(hs_total_diff(dag, h, T, 2, q, v), parse_ok("x + t*x' + cos(t)"));
    ck_assert_ptr_eq(hs_total_diff(dag, h, -1, 2, q, v), parse_ok("t*x'"));
    /* gamma = D(D g) is again a polynomial */
    const hs_node *ddg = hs_total_diff(dag, dg, T, 2, q, v);
    ck_assert_ptr_eq(ddg, parse_ok("2*x'^2 + 2*y'^2"));
}
END_TEST

START_TEST(test_subst_symbols)
{
    const hs_node *e = parse_ok("x^2 + sin(y) + z*a");
    const hs_node *map[NSYM] = {0};
    map[X] = parse_ok("2*y");
    map[Z] = hs_num(dag, 0);
    ck_assert_ptr_eq(hs_subst(dag, e, map, NSYM), parse_ok("4*y^2 + sin(y)"));
    ck_assert_ptr_eq(hs_subst(dag, e, map, 0), e);
    unsigned char used[NSYM] = {0};
    hs_symbols_used(e, used, NSYM);
    ck_assert(used[X] && used[Y] && used[Z] && used[A]);
    ck_assert(!used[B] && !used[T] && !used[XV]);
    ck_assert(hs_depends_on(e, A));
    ck_assert(!hs_depends_on(e, B));
    ck_assert(!hs_depends_on(e, 100));
    /* a constant substituted into log folds, and the fold error is recorded */
    const hs_node *lg = parse_ok("log(x)");
    map[X] = hs_num(dag, -1);
    hs_subst(dag, lg, map, NSYM);
    ck_assert(hs_dag_failed(dag));
}
END_TEST

/* Memoization: a dag whose tree would have 2^60 leaves is walked once. */
START_TEST(test_shared_dag)
{
    const hs_node *e = hs_sym(dag, X);
    for (int i = 0; i < 60; i++)
        e = hs_add(dag, hs_call1(dag, HS_SIN, e), hs_call1(dag, HS_COS, e));
    ck_assert(hs_depends_on(e, X));
    const hs_node *de = hs_diff(dag, e, X);
    ck_assert_ptr_nonnull(de);
    const hs_node *map[NSYM] = {0};
    map[X] = hs_sym(dag, Y);
    const hs_node *s = hs_subst(dag, e, map, NSYM);
    ck_assert(!hs_depends_on(s, X));
    ck_assert(hs_depends_on(s, Y));
    ck_assert(!hs_dag_failed(dag));
}
END_TEST

/* ---- randomized property test ---- */

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
    /* Knuth's MMIX LCG; the high bits are the good ones */
    rng = rng * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(rng >> 33) % n;
}

/* A random expression of the given depth over x, y, z, x', every operator
 * and function, arguments kept inside their domains and away from poles. */
static const hs_node *gen(int depth)
{
    hs_dag *d = dag;
    if (depth == 0 || rnd(8) == 0) {
        static const double nums[] = {0.5, 2, 3, -1.5, 0.1, 1.25};
        static const int syms[] = {X, Y, Z, XV};
        if (rnd(3) == 0)
            return hs_num(d, nums[rnd(6)]);
        return hs_sym(d, syms[rnd(4)]);
    }
    const hs_node *a = gen(depth - 1), *b;
    const hs_node *one = hs_num(d, 1), *two = hs_num(d, 2);
    switch (rnd(26)) {
    case 0: case 1: return hs_add(d, a, gen(depth - 1));
    case 2: return hs_sub(d, a, gen(depth - 1));
    case 3: case 4: return hs_mul(d, a, gen(depth - 1));
    case 5: return hs_div(d, a, hs_add(d, two, hs_call1(d, HS_SIN, gen(depth - 1))));
    case 6: return hs_neg(d, a);
    case 7: return hs_pow(d, a, hs_num(d, (double)rnd(4) + 1));
    case 8: return hs_pow(d, hs_add(d, two, hs_call1(d, HS_COS, a)),
                          gen(depth - 1)); /* positive base, any exponent */
    case 9: return hs_call1(d, HS_SIN, a);
    case 10: return hs_call1(d, HS_COS, a);
    case 11: return hs_call1(d, HS_TAN, hs_call1(d, HS_TANH, a));
    case 12: return hs_call1(d, HS_ASIN, hs_mul(d, hs_num(d, 0.9), hs_call1(d, HS_SIN, a)));
    case 13: return hs_call1(d, HS_ACOS, hs_mul(d, hs_num(d, 0.9), hs_call1(d, HS_TANH, a)));
    case 14: return hs_call1(d, HS_ATAN, a);
    case 15: return hs_call1(d, rnd(2) ? HS_SINH : HS_COSH, hs_call1(d, HS_SIN, a));
    case 16: return hs_call1(d, HS_TANH, a);
    case 17: return hs_call1(d, HS_EXP, hs_call1(d, HS_COS, a));
    case 18: return hs_call1(d, HS_LOG, hs_add(d, one, hs_pow(d, a, two)));
    case 19: return hs_call1(d, HS_SQRT, hs_add(d, two, hs_call1(d, HS_SIN, a)));
    case 20: return hs_call1(d, rnd(2) ? HS_ABS : HS_SIGN, a);
    case 21: return hs_call2(d, HS_ATAN2, a, hs_add(d, two, hs_call1(d, HS_COS, gen(depth - 1))));
    case 22: return hs_call2(d, HS_HYPOT, a, hs_add(d, one, hs_pow(d, gen(depth - 1), two)));
    case 23: return hs_call2(d, rnd(2) ? HS_MIN : HS_MAX, a, gen(depth - 1));
    case 24:
        b = gen(depth - 1);
        return hs_if(d, hs_call2(d, (hs_kind)(HS_LT + (int)rnd(6)), a, b), b,
                     hs_call1(d, HS_SIN, a));
    default: return hs_pow(d, hs_add(d, one, hs_pow(d, a, two)), hs_num(d, -0.5));
    }
}

static double eval_at(const hs_node *e, const double *in, int wrt, double x)
{
    double v[NSYM];
    memcpy(v, in, sizeof v);
    v[wrt] = x;
    return hs_eval_tree(e, v);
}

START_TEST(test_random)
{
    rng = 12345;
    int checked = 0, kinks = 0;
    char *text = malloc(1 << 20);
    ck_assert_ptr_nonnull(text);
    for (int iter = 0; iter < 1500; iter++) {
        const hs_node *e = gen(2 + (int)rnd(4));
        ck_assert_msg(!hs_dag_failed(dag), "%s", hs_dag_error(dag)->msg);

        /* printing then parsing gives the same node */
        size_t n = hs_format(dag, e, text, 1 << 20);
        ck_assert_uint_lt(n, 1 << 20);
        hs_error err;
        hs_error_init(&err);
        const hs_node *back = hs_parse(dag, text, n, 0, &RES, &err);
        ck_assert_msg(back == e, "%d: '%s' re-parses to '%s' (%s)", iter, text,
                      back ? str(back) : "NULL", err.msg);

        /* the derivative matches a central difference (rationale above
         * test_diff_fd; h = 1e-6 here, larger f''' from nesting allowed for
         * by a 1e-4 relative tolerance) */
        /* differentiate with respect to a symbol e uses, when it has one */
        static const int wrts[] = {X, Y, Z, XV};
        unsigned char used[NSYM] = {0};
        hs_symbols_used(e, used, NSYM);
        int wrt = wrts[rnd(4)];
        for (int k = 0; k < 4 && !used[wrt]; k++)
            wrt = wrts[k];
        if (!used[wrt]) {
            ck_assert_ptr_eq(hs_diff(dag, e, wrt), hs_num(dag, 0));
            continue;
        }
        double in[NSYM];
        memcpy(in, IN, sizeof in);
        in[X] = (double)rnd(2001) / 1000 - 1; /* in [-1, 1] */
        in[Y] = (double)rnd(2001) / 1000 - 1;
        double x = in[wrt], h = 1e-6;
        const hs_node *de = hs_diff(dag, e, wrt);
        ck_assert_msg(!hs_dag_failed(dag), "%s", hs_dag_error(dag)->msg);
        double exact = eval_at(de, in, wrt, x);
        double f0 = eval_at(e, in, wrt, x), fp = eval_at(e, in, wrt, x + h),
               fm = eval_at(e, in, wrt, x - h);
        double central = (fp - fm) / (2 * h), fwd = (fp - f0) / h, bwd = (f0 - fm) / h;
        ck_assert_msg(isfinite(f0), "%s = %g", text, f0);
        /* a kink (abs, min, if, sign) within h: one-sided slopes disagree */
        if (fabs(fwd - bwd) > 1e-2 * (1 + fabs(central))) {
            kinks++;
            continue;
        }
        ck_assert_msg(fabs(exact - central) <= 1e-4 * (1 + fabs(exact) + fabs(f0)),
                      "%d: d/d%s %s at %s=%.17g: %.17g, finite difference %.17g", iter,
                      SYMS[wrt], text, SYMS[wrt], x, exact, central);
        checked++;
    }
    free(text);
    ck_assert_int_ge(checked, 1000); /* most expressions use a symbol */
    ck_assert_int_le(kinks, 100);
}
END_TEST

static Suite *expr_suite(void)
{
    Suite *s = suite_create("expr");
    TCase *tc = tcase_create("parse");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
    tcase_add_loop_test(tc, test_precedence, 0, N(precedence));
    tcase_add_loop_test(tc, test_parse_errors, 0, N(bad));
    tcase_add_test(tc, test_parse_cond);
    tcase_add_test(tc, test_deep_nesting);
    tcase_add_test(tc, test_depth_limit);
    tcase_add_test(tc, test_hash_consing);
    tcase_add_loop_test(tc, test_simplify, 0, N(simp));
    tcase_add_test(tc, test_constructors);
    tcase_add_test(tc, test_fold_error);
    tcase_add_test(tc, test_format_cap);
    tcase_add_loop_test(tc, test_diff_text, 0, N(dtext));
    tcase_add_loop_test(tc, test_diff_fd, 0, N(fd));
    tcase_add_test(tc, test_total_diff);
    tcase_add_test(tc, test_subst_symbols);
    tcase_add_test(tc, test_shared_dag);
    tcase_add_test(tc, test_random);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(expr_suite)
