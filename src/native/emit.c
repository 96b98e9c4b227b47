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
 * guarantees that R is not redefined before that read).  Each output is
 * written right after the instruction that gives its register its last
 * value (fewer values live at once: less spilling, faster compiles),
 * negated an odd number of times where the VM's negout says so.
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

#define MAX_SLOTS 1024      /* extra doubles on the stack for hoisted values */

typedef struct emitter {
    hs_nat_buf *b;
    const hs_prog *p;
    size_t pi;              /* program index */
    size_t chunk;
    size_t *def;            /* [nregs] instruction last writing each register */
    unsigned char *store;   /* [ninstr] value read by a later chunk */
    size_t *outdef;         /* [nout] defining instruction of each output */
    size_t *first_out;      /* [ninstr] first output it defines, NONE: none */
    size_t *next_out;       /* [nout] next output of the same instruction */
    unsigned char *negate;  /* [nout] odd number of negations */
    size_t *partner;        /* [ninstr] the later of a sin/cos pair, at the earlier */
    size_t *early;          /* [ninstr] the earlier one, at the later; NONE */
    size_t *slot;           /* [ninstr] x[] slot carrying a hoisted value, or NONE */
    size_t *seen;           /* [2 (ninstr + nregs)] first SIN / COS of each value */
    size_t nx;              /* x[] slots used */
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

/* sin and cos of one value, wherever they are: the later one is computed
 * beside the earlier, so that the C compiler makes one sincos call of them
 * (glibc's sincos gives sin's and cos's bits: 0 differences in 5e7 random
 * arguments here; the tests compare every model).  Called before
 * instruction i updates def[]. */
static void pair_sincos(emitter *e, size_t i)
{
    const hs_instr *in = &e->p->code[i];
    int op = (int)HS_INSTR_OP(in);
    if (op != HS_OP_SIN && op != HS_OP_COS)
        return;
    size_t d = e->def[in->b];             /* the value: its definition, or */
    size_t key = d != NONE ? d : e->p->ninstr + in->b;    /* never written */
    size_t n = e->p->ninstr + e->p->nregs;
    size_t *mine = &e->seen[(op == HS_OP_COS) * n + key];
    size_t *other = &e->seen[(op != HS_OP_COS) * n + key];
    if (*other != NONE && e->partner[*other] == NONE) {
        e->partner[*other] = i;
        e->early[i] = *other;
    } else if (*mine == NONE) {
        *mine = i;
    }
}

/* x[] slots for hoisted values that cross into a later chunk (reused once
 * read; pairs beyond MAX_SLOTS are not hoisted). */
static void assign_slots(emitter *e)
{
    size_t busy[MAX_SLOTS];               /* the reader of each slot's value */
    for (size_t i = 0; i < e->p->ninstr; i++) {
        size_t j = e->partner[i];
        if (j == NONE || i / e->chunk == j / e->chunk)
            continue;
        size_t s = 0;
        while (s < e->nx && busy[s] >= i)
            s++;
        if (s == e->nx && e->nx == MAX_SLOTS) {
            e->partner[i] = e->early[j] = NONE;
            continue;
        }
        if (s == e->nx)
            e->nx++;
        busy[s] = j;
        e->slot[j] = s;
    }
}

/* Which values must be stored for a later chunk; outputs' definitions;
 * sin/cos pairs. */
static void analyse(emitter *e)
{
    const hs_prog *p = e->p;
    for (size_t r = 0; r < p->nregs; r++)
        e->def[r] = NONE;
    for (size_t i = 0; i < 2 * (p->ninstr + p->nregs); i++)
        e->seen[i] = NONE;
    for (size_t i = 0; i < p->ninstr; i++)
        e->first_out[i] = e->partner[i] = e->early[i] = e->slot[i] = NONE;
    for (size_t i = 0; i < p->ninstr; i++) {
        const hs_instr *in = &p->code[i];
        uint32_t ops[3];
        int n = reg_operands(in, ops);
        for (int j = 0; j < n; j++) {
            size_t d = e->def[ops[j]];
            if (d != NONE && d / e->chunk != i / e->chunk)
                e->store[d] = 1;
        }
        pair_sincos(e, i);
        e->def[HS_INSTR_A(in)] = i;
    }
    for (size_t o = p->nout; o-- > 0;) {
        size_t d = e->outdef[o] = e->def[p->outreg[o]];
        e->negate[o] = 0;
        if (d != NONE) {
            e->next_out[o] = e->first_out[d];
            e->first_out[d] = o;
        }
    }
    for (size_t j = 0; j < p->nnegout; j++)
        e->negate[p->negout[j]] ^= 1;
    assign_slots(e);
}

/* out[o] = value. */
static void put_output(emitter *e, size_t o)
{
    size_t d = e->outdef[o];
    put_id(e->b, "    out[", o);
    hs_nat_puts(e->b, e->negate[o] ? "] = -" : "] = ");
    if (d != NONE)
        put_id(e->b, "t", d);
    else
        put_operand(e, e->p->outreg[o], 0);     /* a constant or an input */
    hs_nat_put(e->b, ";\n", 2);
}

/* const double t<dst> = OP_<op of instruction i>(operands of i); */
static void put_value(emitter *e, size_t dst, size_t i, size_t lo, int op)
{
    const hs_instr *in = &e->p->code[i];
    uint32_t ops[3];
    int n = reg_operands(in, ops);
    put_id(e->b, "    const double t", dst);
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
}

static void put_instr(emitter *e, size_t i, size_t lo)
{
    const hs_instr *in = &e->p->code[i];
    size_t j = e->partner[i];
    if (e->early[i] == NONE) {
        put_value(e, i, i, lo, (int)HS_INSTR_OP(in));
    } else if (e->slot[i] != NONE) {      /* computed in an earlier chunk */
        put_id(e->b, "    const double t", i);
        put_id(e->b, " = x[", e->slot[i]);
        hs_nat_put(e->b, "];\n", 3);
    }
    if (j != NONE) {                      /* the partner, on the same operand */
        put_value(e, j, i, lo, (int)HS_INSTR_OP(&e->p->code[j]));
        if (e->slot[j] != NONE) {
            put_id(e->b, "    x[", e->slot[j]);
            put_id(e->b, "] = t", j);
            hs_nat_put(e->b, ";\n", 2);
        }
    }
    if (e->store[i]) {
        put_id(e->b, "    r[", HS_INSTR_A(in));
        put_id(e->b, "] = t", i);
        hs_nat_put(e->b, ";\n", 2);
    }
    e->def[HS_INSTR_A(in)] = i;
    for (size_t o = e->first_out[i]; o != NONE; o = e->next_out[o])
        put_output(e, o);
}

static void put_chunk(emitter *e, size_t c)
{
    size_t lo = c * e->chunk, hi = lo + e->chunk;
    if (hi > e->p->ninstr)
        hi = e->p->ninstr;
    hs_nat_printf(e->b, "static HS_NOINLINE void p%zuc%zu(const double *restrict in, "
                  "double *restrict r, double *restrict out, double *restrict x)\n{\n",
                  e->pi, c);
    hs_nat_puts(e->b, "    (void)in; (void)r; (void)out; (void)x;\n");
    for (size_t i = lo; i < hi; i++)
        put_instr(e, i, lo);
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
    if (e->nx)
        hs_nat_printf(e->b, "    double x[%zu];\n", e->nx);
    for (size_t c = 0; c < nchunk; c++)
        hs_nat_printf(e->b, "    p%zuc%zu(in, r, out, %s);\n", e->pi, c, e->nx ? "x" : "0");
    for (size_t o = 0; o < p->nout; o++)
        if (e->outdef[o] == NONE)
            put_output(e, o);
    hs_nat_puts(e->b, "}\n\n");
}

static void emit_prog(hs_nat_buf *b, const hs_prog *p, size_t pi, size_t chunk)
{
    emitter e;
    memset(&e, 0, sizeof e);
    e.b = b;
    e.p = p;
    e.pi = pi;
    e.chunk = chunk;
    size_t ni = p->ninstr + 1, nr = p->nregs + 1, no = p->nout + 1;
    e.def = malloc(nr * sizeof *e.def);
    e.store = calloc(ni, 1);
    e.outdef = malloc(no * sizeof *e.outdef);
    e.negate = malloc(no);
    e.first_out = malloc(ni * sizeof *e.first_out);
    e.next_out = malloc(no * sizeof *e.next_out);
    e.partner = malloc(ni * sizeof *e.partner);
    e.early = malloc(ni * sizeof *e.early);
    e.slot = malloc(ni * sizeof *e.slot);
    e.seen = malloc(2 * (ni + nr) * sizeof *e.seen);
    if (e.def && e.store && e.outdef && e.negate && e.first_out && e.next_out && e.partner
        && e.early && e.slot && e.seen)
        put_prog(&e);
    else
        b->failed = 1;
    free(e.def);
    free(e.store);
    free(e.outdef);
    free(e.negate);
    free(e.first_out);
    free(e.next_out);
    free(e.partner);
    free(e.early);
    free(e.slot);
    free(e.seen);
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
    for (size_t pi = 0; pi < nprogs; pi++)
        if (progs[pi])
            emit_prog(b, progs[pi], pi, chunk);
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
