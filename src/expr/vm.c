/* The register VM: straight-line evaluation of a compiled program, the
 * diagnosis of a non-finite result, and the listing.
 *
 * Dispatch is written with Lua's vmdispatch/vmcase/vmbreak macros: a switch
 * in portable C, or (GNU C, unless HS_NO_COMPUTED_GOTO is defined) a jump
 * table of label addresses with one indirect jump at the end of every case,
 * which gives the branch predictor one history per opcode.  Every case is
 * generated from ops.def. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "prog.h"

#if defined(__GNUC__) && !defined(HS_NO_COMPUTED_GOTO)
#define HS_COMPUTED_GOTO 1
#else
#define HS_COMPUTED_GOTO 0
#endif

/* x^n by repeated squaring (n may be negative). */
static inline double powi(double x, int32_t n)
{
    uint32_t m = n < 0 ? 0u - (uint32_t)n : (uint32_t)n;
    double r = 1.0;
    for (;;) {
        if (m & 1u)
            r *= x;
        m >>= 1;
        if (!m)
            break;
        x *= x;
    }
    return n < 0 ? 1.0 / r : r;
}

/* -1, 0 or 1; NaN stays NaN, -0 stays -0 */
static inline double sign(double x)
{
    return x > 0 ? 1.0 : x < 0 ? -1.0 : x;
}

/* Operand access inside ops.def expressions. */
#define B (r[pc->b])
#define C (r[pc->c])
#define D (r[pc->d])
#define N ((int32_t)pc->c)

#if HS_COMPUTED_GOTO
#define vmdispatch(o)  goto *disptab[o];
#define vmcase(l)      L_##l:
#define vmbreak        { pc++; goto *disptab[HS_INSTR_OP(pc)]; }
#else
#define vmdispatch(o)  switch (o)
#define vmcase(l)      case HS_OP_##l:
#define vmbreak        break
#endif

const char *hs_prog_dispatch(void)
{
    return HS_COMPUTED_GOTO ? "computed goto" : "switch";
}

void hs_prog_eval(const hs_prog *p, const double *in, double *r, double *out)
{
#if HS_COMPUTED_GOTO
    static const void *const disptab[HS_NOPS] = {
#define HS_OP(name, nargs, expr, doc) &&L_##name,
#define HS_OP_CTRL(name, doc) &&L_##name,
#include "ops.def"
#undef HS_OP
#undef HS_OP_CTRL
    };
#endif
    const hs_instr *pc = p->code;
    /* register file = [constants | inputs | temporaries]; plain loops: a
     * call to memcpy costs more than these few words */
    const double *k = p->k;
    double *ri = r + p->nk;
    for (uint32_t i = 0; i < p->nk; i++)
        r[i] = k[i];
    for (uint32_t i = 0; i < p->nin; i++)
        ri[i] = in[i];
    for (;; pc++) {
        vmdispatch(HS_INSTR_OP(pc)) {
            vmcase(END) goto done;
#define HS_OP(name, nargs, expr, doc) \
            vmcase(name) { r[HS_INSTR_A(pc)] = (expr); vmbreak; }
#define HS_OP_CTRL(name, doc)
#include "ops.def"
#undef HS_OP
#undef HS_OP_CTRL
        }
    }
done:
    for (uint32_t i = 0; i < p->nout; i++)
        out[i] = r[p->outreg[i]];
    for (uint32_t i = 0; i < p->nnegout; i++)
        out[p->negout[i]] = -out[p->negout[i]];
}

/* The result of one instruction (the slow path for diagnosis). */
static double step(const hs_instr *pc, const double *r)
{
    switch (HS_INSTR_OP(pc)) {
#define HS_OP(name, nargs, expr, doc) case HS_OP_##name: return (expr);
#define HS_OP_CTRL(name, doc)
#include "ops.def"
#undef HS_OP
#undef HS_OP_CTRL
    default:
        return 0.0;
    }
}

/* Why instruction pc gave a non-finite result from finite operands. */
static const char *reason(const hs_instr *pc, const double *r)
{
    switch (HS_INSTR_OP(pc)) {
    case HS_OP_LOG:
        return "log of a non-positive number";
    case HS_OP_DIV:
        return C == 0.0 ? "division by zero" : "overflow in division";
    case HS_OP_RECIP:
        return B == 0.0 ? "division by zero" : "overflow in division";
    case HS_OP_SQRT:
        return "sqrt of a negative number";
    case HS_OP_RSQRT:
        return B < 0.0 ? "sqrt of a negative number" : "division by zero (1/sqrt(0))";
    case HS_OP_ASIN:
        return "asin argument outside [-1,1]";
    case HS_OP_ACOS:
        return "acos argument outside [-1,1]";
    case HS_OP_POW:
        if (B < 0.0 && C != floor(C))
            return "pow of a negative number to a non-integer power";
        if (B == 0.0 && C < 0.0)
            return "pow: zero to a negative power";
        return "pow: non-finite result";
    case HS_OP_POWI:
        return B == 0.0 && N < 0 ? "pow: zero to a negative power"
                                 : "pow: non-finite result";
    case HS_OP_SQR:
    case HS_OP_CUBE:
        return "pow: non-finite result";
    case HS_OP_EXP:
        return "overflow in exp";
    case HS_OP_SINH:
        return "overflow in sinh";
    case HS_OP_COSH:
        return "overflow in cosh";
    case HS_OP_TAN:
        return "tan at a pole";
    case HS_OP_MUL:
        return "overflow in multiplication";
    case HS_OP_ADD:
    case HS_OP_SUB:
    case HS_OP_NEG:
    case HS_OP_MULADD:
    case HS_OP_MULSUB:
    case HS_OP_NMULADD:
        return "overflow in arithmetic";
    case HS_OP_HYPOT:
        return "overflow in hypot";
    /* NaN here comes from an operand (reported as that operand's cause);
     * these name the step when the chain cannot be followed further */
    case HS_OP_LT: case HS_OP_LE: case HS_OP_GT: case HS_OP_GE: case HS_OP_EQ: case HS_OP_NE:
        return "NaN in a comparison";
    case HS_OP_MIN:
    case HS_OP_MAX:
        return "NaN in min/max";
    case HS_OP_SELECT:
        return "NaN in an if() condition";
    default:
        return "non-finite result";
    }
}

/* Registers whose non-finiteness flows into the result (SELECT: the
 * condition and the branch taken). Returns how many, into ops[]. */
static int flow_operands(const hs_instr *pc, const double *r, uint32_t ops[3])
{
    int op = (int)HS_INSTR_OP(pc);
    if (op == HS_OP_SELECT) {
        ops[0] = pc->b;
        ops[1] = B == 0.0 ? pc->d : pc->c;
        return isnan(B) ? 1 : 2;  /* a NaN condition alone makes the result */
    }
    int n = hs_op_nargs[op];
    ops[0] = pc->b;
    ops[1] = pc->c;
    ops[2] = pc->d;
    return n;
}

/* Registers [constants | inputs] as hs_prog_eval sets them. */
static void load(const hs_prog *p, const double *in, double *r)
{
    memcpy(r, p->k, p->nk * sizeof *r);
    if (p->nin)
        memcpy(r + p->nk, in, p->nin * sizeof *r);
}

/* The first non-finite output is traced to the instruction that created
 * the non-finite value (its operands finite), following only the operands
 * that flow into each result; when every output is finite, the first such
 * instruction anywhere is reported.  Allocates a little (error path). */
int hs_prog_find_nonfinite(const hs_prog *p, const double *in, double *r,
                           hs_srcpos *pos, const char **what)
{
    enum { FINITE = -1, INPUT = -2 };
    int32_t *origin = malloc((p->nregs ? p->nregs : 1) * sizeof *origin);
    long first = -1, blame = -1;
    int input_blamed = 0;
    load(p, in, r);
    if (origin)
        for (uint32_t i = 0; i < p->nregs; i++)
            origin[i] = i < p->nk + p->nin && !isfinite(r[i]) ? INPUT : FINITE;
    for (size_t i = 0; i < p->ninstr; i++) {
        const hs_instr *pc = &p->code[i];
        uint32_t ops[3];
        int n = flow_operands(pc, r, ops);
        double x = step(pc, r);
        if (!isfinite(x)) {
            int32_t o = (int32_t)i;
            int from_operand = 0;
            for (int j = 0; j < n; j++)
                if (!isfinite(r[ops[j]])) {
                    from_operand = 1;
                    if (origin)
                        o = origin[ops[j]];
                    break;
                }
            if (!from_operand && first < 0)
                first = (long)i;
            if (origin)
                origin[HS_INSTR_A(pc)] = o;
        } else if (origin) {
            origin[HS_INSTR_A(pc)] = FINITE;
        }
        r[HS_INSTR_A(pc)] = x;
    }
    if (origin)
        for (uint32_t i = 0; i < p->nout && blame < 0 && !input_blamed; i++)
            if (!isfinite(r[p->outreg[i]])) {
                int32_t o = origin[p->outreg[i]];
                if (o == INPUT)
                    input_blamed = 1;
                else
                    blame = o;
            }
    free(origin);
    if (input_blamed) {
        *pos = (hs_srcpos){-1, -1};
        *what = "non-finite input value";
        return 1;
    }
    if (blame < 0)
        blame = first;
    if (blame < 0)
        return 0;
    /* re-run up to the culprit to see its operands */
    load(p, in, r);
    for (long i = 0; i < blame; i++)
        r[HS_INSTR_A(&p->code[i])] = step(&p->code[i], r);
    *pos = p->pos[blame];
    *what = reason(&p->code[blame], r);
    return 1;
}

/* "k3", "x" (a symbol), "r17": a register named by its role. */
static void reg_name(const hs_prog *p, const hs_dag *d, uint32_t reg, FILE *f)
{
    if (reg < p->nk) {
        fprintf(f, "k%u", reg);
    } else if (reg < p->nk + p->nin) {
        int sym = (int)(reg - p->nk);
        const char *name = d && sym < hs_dag_nsymbols(d) ? hs_dag_symbol_name(d, sym) : NULL;
        if (name)
            fprintf(f, "%s", name);
        else
            fprintf(f, "in%d", sym);
    } else {
        fprintf(f, "r%u", reg);
    }
}

void hs_prog_disasm(const hs_prog *p, const hs_dag *d, FILE *f)
{
    fprintf(f, "; %zu instructions, %u constants, %u inputs, %u registers, %u outputs (%s)\n",
            p->ninstr, p->nk, p->nin, p->nregs, p->nout, hs_prog_dispatch());
    for (uint32_t i = 0; i < p->nk; i++)
        fprintf(f, "; k%u = %.17g\n", i, p->k[i]);
    for (size_t i = 0; i < p->ninstr; i++) {
        const hs_instr *pc = &p->code[i];
        int op = (int)HS_INSTR_OP(pc);
        fprintf(f, "%5zu  %-8s ", i, hs_op_name[op]);
        reg_name(p, d, HS_INSTR_A(pc), f);
        uint32_t ops[3] = {pc->b, pc->c, pc->d};
        for (int j = 0; j < hs_op_nargs[op]; j++) {
            fputs(", ", f);
            reg_name(p, d, ops[j], f);
        }
        if (op == HS_OP_POWI)
            fprintf(f, ", #%d", (int)(int32_t)pc->c);
        fprintf(f, "\t; %s", hs_op_doc[op]);
        if (p->pos[i].src >= 0)
            fprintf(f, "  @%d:%d", p->pos[i].src, p->pos[i].off);
        fputc('\n', f);
    }
    for (uint32_t i = 0, j = 0; i < p->nout; i++) {
        int negated = j < p->nnegout && p->negout[j] == i;
        j += negated;
        fprintf(f, "; out[%u] = %s", i, negated ? "-" : "");
        reg_name(p, d, p->outreg[i], f);
        fputc('\n', f);
    }
}
