/* The expression engine: text -> hash-consed DAG -> derivatives ->
 * simplified DAG -> one register-bytecode program -> numbers.
 *
 * A dag (hs_dag) owns every node in an arena, freed in one call.  Nodes are
 * hash-consed: building a node structurally equal to an existing one returns
 * the existing node, so pointer equality is structural equality.  Nodes are
 * built only through the smart constructors below, which simplify as they
 * build (constant folding, neutral elements, numeric factors and like terms
 * collected), so every node in a dag is already in simplified form.
 *
 * Canonical forms kept by the constructors:
 *   - HS_ADD is n-ary (n >= 2), flattened (no ADD child), at most one
 *     numeric child, which comes first; a term with a numeric factor is
 *     HS_MUL(num, rest...); like terms merged (x + 2*x -> 3*x).
 *   - HS_MUL is n-ary (n >= 2), flattened, at most one numeric child, first;
 *     like bases merged through HS_POW (x*x -> x^2, x/x -> 1).
 *   - a - b is ADD(a, MUL(-1, b)); -a is MUL(-1, a); a / b is
 *     MUL(a, POW(b, -1)).
 *   - children of ADD/MUL are sorted in a fixed order (numbers first, then by
 *     node id), so a+b and b+a are one node.
 *
 * Errors (a fold that yields NaN or Inf, too many nodes, recursion too
 * deep) are recorded in the dag (first one kept, see hs_dag_error); the
 * constructor then returns some valid node and the caller checks the dag's
 * error after a batch of work. */
#ifndef HS_EXPR_H
#define HS_EXPR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../util/error.h"

typedef enum hs_kind {
    HS_NUM,    /* constant `value` */
    HS_SYM,    /* symbol number `sym` (an input slot) */
    HS_ADD,    /* n-ary sum */
    HS_MUL,    /* n-ary product */
    HS_POW,    /* args[0] ^ args[1] */
    /* one argument */
    HS_SIN, HS_COS, HS_TAN, HS_ASIN, HS_ACOS, HS_ATAN,
    HS_SINH, HS_COSH, HS_TANH, HS_EXP, HS_LOG, HS_SQRT, HS_ABS, HS_SIGN,
    /* two arguments */
    HS_ATAN2, HS_MIN, HS_MAX, HS_HYPOT,
    /* comparisons: 1.0 when true, 0.0 when false */
    HS_LT, HS_LE, HS_GT, HS_GE, HS_EQ, HS_NE,
    HS_IF,     /* args[0] != 0 ? args[1] : args[2] */
    HS_NKINDS
} hs_kind;

/* A source position: `src` is a caller-chosen source number (a model file
 * numbers its expressions), `off` a byte offset inside that source text;
 * src = -1 means no position. */
typedef struct hs_srcpos {
    int32_t src, off;
} hs_srcpos;

typedef struct hs_node {
    hs_kind kind;
    uint32_t id;           /* creation order, unique in its dag */
    uint32_t nargs;
    uint32_t hash;
    uint32_t depth;        /* 1 for leaves, 1 + max child depth otherwise */
    int32_t sym;           /* HS_SYM: symbol number; otherwise -1 */
    double value;          /* HS_NUM: the constant */
    hs_srcpos pos;         /* where the node was first built */
    const struct hs_node *const *args; /* [nargs] */
    const struct hs_symset *syms;      /* symbols it depends on (hs_node_symbols) */
} hs_node;

typedef struct hs_dag hs_dag;

/* ---- dag, arena, symbols (dag.c) ---- */

hs_dag *hs_dag_new(void);
void hs_dag_free(hs_dag *d);                  /* NULL is fine */

/* The error recorded in the dag (code 0 = none). */
const hs_error *hs_dag_error(const hs_dag *d);
/* Record out of memory in the dag (HS_EXIT_NOMEM, first error kept). */
void hs_dag_nomem(hs_dag *d);
int hs_dag_failed(const hs_dag *d);
/* Record an error at position p (first one kept). */
void hs_dag_fail(hs_dag *d, hs_srcpos p, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Position of the first error recorded (src = -1 when none). */
hs_srcpos hs_dag_error_pos(const hs_dag *d);

/* Position stamped on nodes created from now on. */
void hs_dag_set_pos(hs_dag *d, hs_srcpos p);
hs_srcpos hs_dag_pos(const hs_dag *d);

/* Symbols are numbered 0, 1, 2, ... in order of creation; the number is
 * the input slot the VM reads.  Names are copied.  Creating a name twice
 * returns the first number. */
int hs_dag_symbol(hs_dag *d, const char *name);
int hs_dag_find_symbol(const hs_dag *d, const char *name); /* -1 if none */
const char *hs_dag_symbol_name(const hs_dag *d, int sym);
int hs_dag_nsymbols(const hs_dag *d);
size_t hs_dag_nnodes(const hs_dag *d);
/* Bytes the dag holds (nodes, symbol sets, tables, derivative cache);
 * at most HS_MAX_DAG_BYTES. */
size_t hs_dag_bytes(const hs_dag *d);

/* Limits (a dag refuses to grow past them, recording an error at the
 * position of the expression being worked on).  No sane model comes near:
 * a 512-link chain needs under 1 MiB of dag and 10^4 nodes per derivative. */
#define HS_MAX_NODES   ((size_t)20000000)
#define HS_MAX_DEPTH   4000     /* expression nesting depth */
/* Memory of a dag (nodes, symbol sets, hash tables, derivative cache):
 * "expression too large: the expressions need more than 512 MiB". */
#define HS_MAX_DAG_BYTES ((size_t)512 << 20)
/* Operands of all the nodes of a dag (a sum of k terms holds k): the work
 * of building them grows with it, so a model whose defines each repeat
 * the one before (a chain in angles written through its points, at
 * N = 4000: 3.2e7 operands, 50 s) stops in seconds: "expression too
 * large: the expressions hold more than 4194304 operands". */
#define HS_MAX_OPERANDS ((size_t)4 << 20)
/* Nodes one derivative (hs_diff, hs_total_diff, hs_gradient) may build:
 * "expression too large: the derivative work exceeded 2000000 nodes". */
#define HS_MAX_DIFF_NODES ((size_t)2000000)
/* Other limits for one dag (0 = the default above): tests, or a caller
 * that wants a tighter budget. */
void hs_dag_set_limits(hs_dag *d, size_t max_bytes, size_t max_diff_nodes);

/* Raw hash-consed node, no simplification: used by the constructors. */
const hs_node *hs_dag_intern(hs_dag *d, hs_kind k, const hs_node *const *args,
                             size_t nargs, double value, int sym);

/* ---- smart constructors (simplify.c) ---- */

const hs_node *hs_num(hs_dag *d, double v);
const hs_node *hs_sym(hs_dag *d, int sym);
const hs_node *hs_add(hs_dag *d, const hs_node *a, const hs_node *b);
const hs_node *hs_sub(hs_dag *d, const hs_node *a, const hs_node *b);
const hs_node *hs_mul(hs_dag *d, const hs_node *a, const hs_node *b);
const hs_node *hs_div(hs_dag *d, const hs_node *a, const hs_node *b);
const hs_node *hs_neg(hs_dag *d, const hs_node *a);
const hs_node *hs_pow(hs_dag *d, const hs_node *a, const hs_node *b);
/* Sum / product of n terms (n = 0 gives 0 / 1). */
const hs_node *hs_addn(hs_dag *d, const hs_node *const *a, size_t n);
const hs_node *hs_muln(hs_dag *d, const hs_node *const *a, size_t n);
/* Any function or comparison kind with its arity (HS_SIN..HS_NE). */
const hs_node *hs_call1(hs_dag *d, hs_kind k, const hs_node *a);
const hs_node *hs_call2(hs_dag *d, hs_kind k, const hs_node *a, const hs_node *b);
const hs_node *hs_if(hs_dag *d, const hs_node *c, const hs_node *a, const hs_node *b);
/* Rebuild any kind from new arguments through the constructors. */
const hs_node *hs_rebuild(hs_dag *d, hs_kind k, const hs_node *const *args,
                          size_t nargs, const hs_node *like);

/* e is the constant v (inline: kernels test it n^2 times) */
static inline int hs_is_num(const hs_node *e, double v)
{
    return e->kind == HS_NUM && e->value == v;
}

/* ---- names, arity (parse.c) ---- */

const char *hs_kind_name(hs_kind k);   /* "sin", "atan2", "+", "<", "if" ... */
int hs_kind_arity(hs_kind k);          /* -1 for n-ary */
/* The language's own words (a function name or pi): 1, else 0. */
int hs_is_language_word(const char *s, size_t n);

/* ---- parser (parse.c) ---- */

/* How the parser turns a name into a node.  `lookup` is called for each
 * identifier other than a function name, `pi`; `primed` counts the primes
 * after it: 0 for x, 1 for x' (a velocity), 2 for x'' (an acceleration;
 * a resolver that has none answers HS_RESOLVE_NO_PRIME).
 * It returns the node, or NULL with one of the HS_RESOLVE_ codes in
 * *status (then the parser writes the message), or NULL with
 * HS_RESOLVE_ERROR after recording its own error in err. */
enum { HS_RESOLVE_OK, HS_RESOLVE_UNKNOWN, HS_RESOLVE_NO_PRIME, HS_RESOLVE_ERROR };
typedef struct hs_resolver {
    const hs_node *(*lookup)(void *ctx, hs_dag *d, const char *name, size_t len,
                             int primed, size_t offset, int *status, hs_error *err);
    void *ctx;
    /* Optional: the position to show in messages for a byte offset of the
     * text (a model file maps it into the file); NULL = line:column of the
     * text itself. */
    void (*locate)(void *ctx, size_t offset, int *line, int *col);
} hs_resolver;

/* Parse `text` (len bytes, need not be NUL-terminated) into a node of d,
 * stamping positions {src, byte offset}.  On error returns NULL and fills
 * err (code HS_EXIT_MODEL) with the message, err->offset, and line/column
 * and source line relative to text (hs_error_locate). Messages: see
 * parse.c; e.g. "unexpected character '#'", "')' expected (to close '(' at
 * 1:5)", "unknown function 'sinn'", "'atan2' takes 2 arguments, got 1",
 * "unknown name 'foo'", "'m' has no velocity: only coordinates take a
 * prime", "'m' has no acceleration", "x''' has too many primes",
 * "empty expression", "unexpected 'x' after the end of the
 * expression", "expression nested too deeply". */
const hs_node *hs_parse(hs_dag *d, const char *text, size_t len, int src,
                        const hs_resolver *r, hs_error *err);

/* The same, where the whole text may also be one comparison a OP b of
 * two expressions (an event's condition: `x^2 + y^2 > 4`). */
const hs_node *hs_parse_cond(hs_dag *d, const char *text, size_t len, int src,
                             const hs_resolver *r, hs_error *err);

/* ---- printing (print.c) ---- */

/* Write e as a person would: `2*x`, `x - y`, `x^2/y`, `-sin(x)`, minimal
 * parentheses, %.17g numbers trimmed (`0.5`, `2`).  The text re-parses to
 * the same node.  Returns the length it needed (like snprintf). */
size_t hs_format(const hs_dag *d, const hs_node *e, char *buf, size_t cap);
/* The same to f; 0, or -1 when out of memory (then a sum may print in its
 * stored term order). */
int hs_fprint(FILE *f, const hs_dag *d, const hs_node *e);

/* Printing with shared subexpressions named once.  hs_printer_new looks
 * at every root (and what they share) first; when the roots printed as
 * trees would be much larger than the dag (4x and over 2000 nodes), each
 * subexpression used twice or more with at least 6 nodes becomes a
 * temporary `_1`, `_2`, ... ("_" doubled when a symbol of d already looks
 * like one), printed on its own line `INDENT_k = ...` just before the
 * first line that needs it; otherwise lines print exactly as hs_fprint.
 * The output is then linear in the size of the dag (a chain of doubling
 * defines d30 = d29 + d29^2 prints 30 short lines, not 2^30 terms).
 * Temporaries are numbered in order of printing; each line re-parses,
 * with the temporaries as names, to its node.  NULL when out of memory. */
typedef struct hs_printer hs_printer;
hs_printer *hs_printer_new(const hs_dag *d, const hs_node *const *roots, size_t nroots);
void hs_printer_free(hs_printer *p);               /* NULL is fine */
/* Print "INDENT LABEL = EXPR\n" (no "LABEL = " when label is NULL;
 * indent may be NULL), preceded by the lines of the temporaries e needs
 * that are not printed yet.  e should be one of the roots (or under
 * them); another node prints as a tree. */
void hs_printer_line(hs_printer *p, FILE *f, const char *indent, const char *label,
                     const hs_node *e);
/* 1 when an allocation failed in a line printed so far (the lines stay
 * valid, printed as trees or in stored term order). */
int hs_printer_failed(const hs_printer *p);
/* How many subexpressions become temporaries (0: plain tree printing). */
size_t hs_printer_ntemps(const hs_printer *p);
/* All at once: each root as a line "labels[i] = ..." (labels may be NULL),
 * with the temporaries before the lines that use them.  0, or -1 when an
 * allocation failed (every line printed still). */
int hs_fprint_shared(FILE *f, const hs_dag *d, const hs_node *const *roots,
                     const char *const *labels, size_t n);

/* ---- analysis, rewriting (diff.c) ---- */

/* Derivatives are cached in the dag under (direction, node): a second
 * call for the same or an overlapping expression reuses earlier work (the
 * cache is bounded, 16 MiB: when full it starts over, which costs time,
 * never correctness), and a part of e that does not depend on the
 * direction costs nothing (no walk, no allocation proportional to the
 * symbol table).  A sum of many terms differentiated a second time is
 * indexed by symbol, so that a partial derivative visits only the terms
 * that use the symbol (the gradient of a kinetic energy of n^2 terms costs
 * n^2, not n^3); the nodes built are the same.  One call may
 * build at most HS_MAX_DIFF_NODES nodes; past that it records "expression
 * too large: the derivative work exceeded N nodes" at e's position and
 * returns 0.  The walks are iterative (no C recursion on the depth). */

/* Exact partial derivative d e / d sym, simplified (0 when sym is not a
 * symbol of d). */
const hs_node *hs_diff(hs_dag *d, const hs_node *e, int sym);

/* Total derivative D e = d e/dt + sum_i v_i d e/dq_i (velocities are
 * independent symbols; tsym may be -1 for no explicit time).  The
 * direction (tsym, q, v) is interned: repeated calls with the same arrays
 * (Gdot, then gamma = D Gdot) share one cache. */
const hs_node *hs_total_diff(hs_dag *d, const hs_node *e, int tsym,
                             size_t n, const int *qsym, const int *vsym);

/* Sparse gradient: out[j] = d e / d syms[j] for j < nsyms (the constant 0
 * wherever e does not depend on syms[j], at O(log) cost).  Returns how
 * many out[j] are not the constant 0.  Pair it with hs_node_symbols to ask
 * only for the symbols e uses. */
size_t hs_gradient(hs_dag *d, const hs_node *e, const int *syms, size_t nsyms,
                   const hs_node **out);

/* The symbols e depends on, sorted ascending, no repeats; *n receives the
 * count.  Kept in every node when it is built: O(1), valid while the dag
 * lives. */
const int32_t *hs_node_symbols(const hs_node *e, size_t *n);

/* Replace each symbol s with map[s] when s < nmap and map[s] != NULL,
 * rebuilding through the constructors (so constants fold). */
const hs_node *hs_subst(hs_dag *d, const hs_node *e, const hs_node *const *map,
                        size_t nmap);
/* out[i] = hs_subst(d, roots[i], map, nmap) for i < n, with one memo: a
 * subexpression shared by several roots is rewritten once (the same nodes
 * as n calls, built in the same order).  A subexpression that uses no
 * mapped symbol is never visited. */
void hs_subst_many(hs_dag *d, const hs_node *const *roots, size_t n,
                   const hs_node *const *map, size_t nmap, const hs_node **out);

/* Mark used[s] = 1 for each symbol s < nsyms that e depends on (cost: the
 * number of symbols e uses, no walk). */
void hs_symbols_used(const hs_node *e, unsigned char *used, size_t nsyms);
/* Does e depend on symbol sym?  A binary search in e's symbol set. */
int hs_depends_on(const hs_node *e, int sym);

/* Reference evaluation (eval.c; for tests and one-off values, slower than
 * a program): each distinct node computed once, iteratively.  in[s] is the
 * value of symbol s; *value receives e's value (NaN propagates as in the
 * VM).  0, or -1 when out of memory. */
int hs_eval_node(const hs_node *e, const double *in, double *value);
/* The same, for tests: the value, NaN when out of memory. */
double hs_eval_tree(const hs_node *e, const double *in);

/* ---- bytecode (compile.c, vm.c, ops.def) ---- */

typedef struct hs_prog hs_prog;

/* One program computing every root: out[i] = value of roots[i].  Each
 * distinct node is computed once; constants pooled.  NULL with err set on
 * failure (allocation, size limit). */
hs_prog *hs_prog_compile(const hs_dag *d, const hs_node *const *roots,
                         size_t nroots, hs_error *err);
void hs_prog_free(hs_prog *p);                  /* NULL is fine */

size_t hs_prog_nregs(const hs_prog *p);   /* doubles of scratch eval needs */
size_t hs_prog_nin(const hs_prog *p);     /* 1 + largest symbol read (0: none) */
size_t hs_prog_nout(const hs_prog *p);
size_t hs_prog_ninstr(const hs_prog *p);
/* How many instructions compute a node of kind k (for tests: CSE). */
size_t hs_prog_count_kind(const hs_prog *p, hs_kind k);

/* out[i] = roots[i] at inputs in[0 .. nin-1]; regs is scratch of nregs
 * doubles.  No allocation, no checks: NaN/Inf propagate. */
void hs_prog_eval(const hs_prog *p, const double *in, double *regs, double *out);

/* After an eval produced a non-finite output: re-run and find the first
 * instruction whose result is not finite while its operands are. Returns 1
 * and fills *pos (the node's source position) and *what (e.g. "log of a
 * negative number", "division by zero", "sqrt of a negative number",
 * "non-finite result of pow"), or 0 when every value is finite. */
int hs_prog_find_nonfinite(const hs_prog *p, const double *in, double *regs,
                           hs_srcpos *pos, const char **what);

/* Human-readable listing, one instruction a line. */
void hs_prog_disasm(const hs_prog *p, const hs_dag *d, FILE *f);

/* How the VM dispatches: "computed goto" or "switch" (for benchmarks). */
const char *hs_prog_dispatch(void);

#endif
