/* Bytecode -> C.  Each instruction i becomes one local
 *
 *     const double t<i> = OP_<NAME>(B, C, D, N);
 *
 * where OP_<NAME> is a macro made from the instruction's expression in
 * ops.def (the VM's own text, so the semantics are the VM's by
 * construction) and B, C, D are the operands: the local of the value's
 * definition, a constant K<p>[j], an input in[j], or r[R] for a value
 * defined in an earlier chunk.  The VM reuses registers; here every
 * definition gets its own name (SSA), which the C compiler allocates to
 * machine registers.
 *
 * A program is cut into chunks of `chunk` instructions, one static
 * noinline function each (a C compiler's time grows faster than linearly
 * with a function's size); a value read by a later chunk is stored to its
 * VM register r[R] right after its definition (the VM's own allocation
 * guarantees that R is not redefined before that read).  Outputs are
 * written in the chunk that defines them, negated an odd number of times
 * where the VM's negout says so.
 *
 * Constants live in a hidden, non-const global array: the compiler cannot
 * see their values, so it cannot fold a libm call on a constant (GCC
 * rounds sin(constant) with MPFR, correctly rounded, where glibc's sin may
 * differ in the last bit) nor rewrite pow(x, 2.0) as x*x (glibc's pow is
 * not always correctly rounded: 31404 of 5e7 random x differ here).  A
 * load per use is what a literal costs anyway (SSE has no immediates). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nat.h"
#include "../expr/prog.h"

#define NONE SIZE_MAX

static const char *const op_name[HS_NOPS] = {
#define HS_OP(name, nargs, expr, doc) #name,
#define HS_OP_CTRL(name, doc) #name,
#include "../expr/ops.def"
#undef HS_OP
#undef HS_OP_CTRL
};

/* The expression of each value op, as written in ops.def (NULL: control). */
static const char *const op_expr[HS_NOPS] = {
#define HS_OP(name, nargs, expr, doc) #expr,
#define HS_OP_CTRL(name, doc) NULL,
#include "../expr/ops.def"
#undef HS_OP
#undef HS_OP_CTRL
};

static const uint8_t op_nargs[HS_NOPS] = {
#define HS_OP(name, nargs, expr, doc) nargs,
#define HS_OP_CTRL(name, doc) 0,
#include "../expr/ops.def"
#undef HS_OP
#undef HS_OP_CTRL
};

/* The VM's helpers (src/expr/vm.c), the same text: same operations in the
 * same order, so the same roundings. */
static const char prelude[] =
    "#include <math.h>\n"
    "#include <stdint.h>\n"
    "#if defined(__GNUC__)\n"
    "#define HS_NOINLINE __attribute__((noinline))\n"
    "#define HS_HIDDEN __attribute__((visibility(\"hidden\")))\n"
    "#else\n"
    "#define HS_NOINLINE\n"
    "#define HS_HIDDEN\n"
    "#endif\n"
    "\n"
    "/* x^n by repeated squaring (n may be negative). */\n"
    "static inline double powi(double x, int32_t n)\n"
    "{\n"
    "    uint32_t m = n < 0 ? 0u - (uint32_t)n : (uint32_t)n;\n"
    "    double r = 1.0;\n"
    "    for (;;) {\n"
    "        if (m & 1u)\n"
    "            r *= x;\n"
    "        m >>= 1;\n"
    "        if (!m)\n"
    "            break;\n"
    "        x *= x;\n"
    "    }\n"
    "    return n < 0 ? 1.0 / r : r;\n"
    "}\n"
    "\n"
    "/* -1, 0 or 1; NaN stays NaN, -0 stays -0 */\n"
    "static inline double sign(double x)\n"
    "{\n"
    "    return x > 0 ? 1.0 : x < 0 ? -1.0 : x;\n"
    "}\n"
    "\n"
    "/* the opcodes of ops.def: r[a] = EXPR */\n";

/* ---- the text buffer ---- */

static int reserve(hs_nat_buf *b, size_t more)
{
    if (b->failed)
        return -1;
    if (b->n + more + 1 <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + more + 1)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

void hs_nat_put(hs_nat_buf *b, const char *s, size_t n)
{
    if (reserve(b, n))
        return;
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

void hs_nat_puts(hs_nat_buf *b, const char *s)
{
    hs_nat_put(b, s, strlen(s));
}

void hs_nat_printf(hs_nat_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = 1;
        return;
    }
    if ((size_t)n < sizeof small) {
        hs_nat_put(b, small, (size_t)n);
        return;
    }
    if (reserve(b, (size_t)n))
        return;
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)n;
}

/* Decimal digits of v after a prefix (the hot path: no printf). */
static void put_id(hs_nat_buf *b, const char *prefix, size_t v)
{
    char tmp[48];
    size_t k = sizeof tmp;
    do {
        tmp[--k] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    size_t lp = strlen(prefix);
    memcpy(tmp + k - lp, prefix, lp);
    hs_nat_put(b, tmp + k - lp, sizeof tmp - (k - lp));
}

/* ---- one program ---- */

typedef struct emitter {
    hs_nat_buf *b;
    const hs_prog *p;
    size_t pi;              /* program index */
    size_t chunk;
    size_t *def;            /* [nregs] instruction last writing each register */
    unsigned char *store;   /* [ninstr] value read by a later chunk */
    size_t *outdef;         /* [nout] defining instruction of each output */
    unsigned char *negate;  /* [nout] odd number of negations */
} emitter;

/* The C text of register reg read by the current instruction. */
static void put_operand(emitter *e, uint32_t reg, size_t chunk_start)
{
    const hs_prog *p = e->p;
    size_t d = e->def[reg];
    if (d != NONE && d >= chunk_start) {
        put_id(e->b, "t", d);
    } else if (d != NONE || reg >= p->nk + p->nin) {
        put_id(e->b, "r[", reg);          /* earlier chunk (or never written) */
        hs_nat_put(e->b, "]", 1);
    } else if (reg < p->nk) {
        put_id(e->b, "K", e->pi);
        put_id(e->b, "[", reg);
        hs_nat_put(e->b, "]", 1);
    } else {
        put_id(e->b, "in[", reg - p->nk);
        hs_nat_put(e->b, "]", 1);
    }
}

/* Register operands of an instruction (POWI's c is an immediate). */
static int reg_operands(const hs_instr *in, uint32_t ops[3])
{
    int op = (int)HS_INSTR_OP(in);
    ops[0] = in->b;
    ops[1] = in->c;
    ops[2] = in->d;
    return op < HS_NOPS ? op_nargs[op] : 0;
}

/* Which values must be stored for a later chunk; outputs' definitions. */
static void analyse(emitter *e)
{
    const hs_prog *p = e->p;
    for (size_t r = 0; r < p->nregs; r++)
        e->def[r] = NONE;
    for (size_t i = 0; i < p->ninstr; i++) {
        const hs_instr *in = &p->code[i];
        uint32_t ops[3];
        int n = reg_operands(in, ops);
        for (int j = 0; j < n; j++) {
            size_t d = e->def[ops[j]];
            if (d != NONE && d / e->chunk != i / e->chunk)
                e->store[d] = 1;
        }
        e->def[HS_INSTR_A(in)] = i;
    }
    for (size_t o = 0; o < p->nout; o++) {
        e->outdef[o] = e->def[p->outreg[o]];
        e->negate[o] = 0;
    }
    for (size_t j = 0; j < p->nnegout; j++)
        e->negate[p->negout[j]] ^= 1;
}

/* out[o] = value, for the outputs whose definition lies in [lo, hi) (or,
 * with lo = hi = NONE, those never defined by an instruction). */
static void put_outputs(emitter *e, size_t lo, size_t hi)
{
    const hs_prog *p = e->p;
    for (size_t o = 0; o < p->nout; o++) {
        size_t d = e->outdef[o];
        if (lo == NONE ? d != NONE : d == NONE || d < lo || d >= hi)
            continue;
        put_id(e->b, "    out[", o);
        hs_nat_puts(e->b, e->negate[o] ? "] = -" : "] = ");
        if (d != NONE) {
            put_id(e->b, "t", d);
        } else {
            put_operand(e, p->outreg[o], 0);   /* a constant or an input */
        }
        hs_nat_put(e->b, ";\n", 2);
    }
}

static void put_instr(emitter *e, size_t i, size_t lo)
{
    const hs_instr *in = &e->p->code[i];
    int op = (int)HS_INSTR_OP(in);
    uint32_t ops[3];
    int n = reg_operands(in, ops);
    put_id(e->b, "    const double t", i);
    hs_nat_puts(e->b, " = OP_");
    hs_nat_puts(e->b, op_name[op]);
    hs_nat_put(e->b, "(", 1);
    for (int j = 0; j < 3; j++) {
        if (j)
            hs_nat_put(e->b, ", ", 2);
        if (j < n)
            put_operand(e, ops[j], lo);
        else
            hs_nat_put(e->b, "0", 1);
    }
    if (op == HS_OP_POWI) {
        int32_t k = (int32_t)in->c;
        if (k == INT32_MIN)
            hs_nat_puts(e->b, ", (-2147483647 - 1))");
        else
            hs_nat_printf(e->b, ", (%d))", (int)k);
    } else {
        hs_nat_puts(e->b, ", 0)");
    }
    hs_nat_put(e->b, ";\n", 2);
    if (e->store[i]) {
        put_id(e->b, "    r[", HS_INSTR_A(in));
        put_id(e->b, "] = t", i);
        hs_nat_put(e->b, ";\n", 2);
    }
    e->def[HS_INSTR_A(in)] = i;
}

static void put_chunk(emitter *e, size_t c)
{
    size_t lo = c * e->chunk, hi = lo + e->chunk;
    if (hi > e->p->ninstr)
        hi = e->p->ninstr;
    hs_nat_printf(e->b, "static HS_NOINLINE void p%zuc%zu(const double *restrict in, "
                  "double *restrict r, double *restrict out)\n{\n", e->pi, c);
    hs_nat_puts(e->b, "    (void)in; (void)r; (void)out;\n");
    for (size_t i = lo; i < hi; i++)
        put_instr(e, i, lo);
    put_outputs(e, lo, hi);
    hs_nat_puts(e->b, "}\n\n");
}

/* A constant, exactly: finite ones as hex literals; the compiler never
 * pools a non-finite one (a fold giving NaN or Inf is a model error), but
 * any program must build: infinities exactly, NaN as NAN (its sign kept,
 * its payload not). */
static void put_constant(hs_nat_buf *b, double k)
{
    if (isfinite(k))
        hs_nat_printf(b, "    %a,\n", k);
    else if (isinf(k))
        hs_nat_puts(b, k < 0 ? "    -HUGE_VAL,\n" : "    HUGE_VAL,\n");
    else
        hs_nat_puts(b, signbit(k) ? "    -NAN,\n" : "    NAN,\n");
}

static void put_prog(emitter *e)
{
    const hs_prog *p = e->p;
    size_t nchunk = (p->ninstr + e->chunk - 1) / e->chunk;
    hs_nat_printf(e->b, "/* program %zu: %zu instructions, %u constants, %u inputs, "
                  "%u registers, %u outputs */\n", e->pi, p->ninstr, p->nk, p->nin,
                  p->nregs, p->nout);
    if (p->nk) {
        hs_nat_printf(e->b, "HS_HIDDEN double K%zu[%u] = {\n", e->pi, p->nk);
        for (uint32_t j = 0; j < p->nk; j++)
            put_constant(e->b, p->k[j]);
        hs_nat_puts(e->b, "};\n\n");
    }
    analyse(e);
    for (size_t r = 0; r < p->nregs; r++)
        e->def[r] = NONE;
    for (size_t c = 0; c < nchunk; c++)
        put_chunk(e, c);
    hs_nat_printf(e->b, "void hs_native_p%zu(const double *in, double *r, double *out)\n{\n",
                  e->pi);
    hs_nat_puts(e->b, "    (void)in; (void)r; (void)out;\n");
    for (size_t c = 0; c < nchunk; c++)
        hs_nat_printf(e->b, "    p%zuc%zu(in, r, out);\n", e->pi, c);
    put_outputs(e, NONE, NONE);
    hs_nat_puts(e->b, "}\n\n");
}

/* The opcode macros: OP_ADD(B, C, D, N) (B + C), and so on. */
static void put_ops(hs_nat_buf *b)
{
    for (int op = 0; op < HS_NOPS; op++)
        if (op_expr[op])
            hs_nat_printf(b, "#define OP_%s(B, C, D, N) (%s)\n", op_name[op], op_expr[op]);
    hs_nat_puts(b, "\n");
}

int hs_nat_emit(hs_nat_buf *b, const hs_prog *const *progs, size_t nprogs, size_t chunk)
{
    if (!chunk)
        chunk = HS_NATIVE_CHUNK;
    hs_nat_printf(b, "/* holosim native kernels, format %d: generated from bytecode, "
                  "%zu instructions per function */\n", HS_NAT_FORMAT, chunk);
    hs_nat_puts(b, prelude);
    put_ops(b);
    for (size_t pi = 0; pi < nprogs; pi++) {
        const hs_prog *p = progs[pi];
        if (!p)
            continue;
        emitter e = {b, p, pi, chunk, NULL, NULL, NULL, NULL};
        e.def = malloc((p->nregs ? p->nregs : 1) * sizeof *e.def);
        e.store = calloc(p->ninstr ? p->ninstr : 1, 1);
        e.outdef = malloc((p->nout ? p->nout : 1) * sizeof *e.outdef);
        e.negate = malloc(p->nout ? p->nout : 1);
        if (e.def && e.store && e.outdef && e.negate)
            put_prog(&e);
        else
            b->failed = 1;
        free(e.def);
        free(e.store);
        free(e.outdef);
        free(e.negate);
    }
    return b->failed ? -1 : 0;
}

char *hs_native_source(const hs_prog *const *progs, size_t nprogs, size_t chunk,
                       size_t *len)
{
    hs_nat_buf b = {NULL, 0, 0, 0};
    if (hs_nat_emit(&b, progs, nprogs, chunk) || !b.p) {
        free(b.p);
        return NULL;
    }
    if (len)
        *len = b.n;
    return b.p;
}
