/* Private to compile.c and vm.c: the layout of a compiled program.
 *
 * Register file (nregs doubles, the caller's scratch):
 *     [ constants (nk) | inputs (nin) | temporaries ]
 * hs_prog_eval copies the constant pool and in[0..nin-1] in at the start
 * (measured: cheaper than a second operand mode in every instruction), runs
 * the straight-line code, then copies out[i] = r[outreg[i]] (negated for
 * the roots listed in negout: -x costs no instruction).
 *
 * Instruction (16 bytes, four per cache line): the opcode and the
 * destination share the first word, so four-operand fused ops fit:
 *     opa = op | a << 8;  b, c, d = operand registers (c is the signed
 *     exponent of POWI).  Registers are < 2^24. */
#ifndef HS_PROG_H
#define HS_PROG_H

#include <stdint.h>

#include "expr.h"

typedef enum hs_op {
#define HS_OP(name, nargs, expr, doc) HS_OP_##name,
#define HS_OP_CTRL(name, doc) HS_OP_##name,
#include "ops.def"
#undef HS_OP
#undef HS_OP_CTRL
    HS_NOPS
} hs_op;

typedef struct hs_instr {
    uint32_t opa;          /* op | a << 8 */
    uint32_t b, c, d;
} hs_instr;

#define HS_INSTR_OP(i) ((i)->opa & 0xffu)
#define HS_INSTR_A(i)  ((i)->opa >> 8)
#define HS_MAX_REGS    ((size_t)1 << 24)

struct hs_prog {
    /* hot: what eval touches */
    hs_instr *code;        /* [ninstr + 1], END last */
    double *k;             /* [nk] constant pool, copied to r[0..nk-1] */
    uint32_t *outreg;      /* [nout] register of each root */
    uint32_t *negout;      /* [nnegout] roots copied out negated */
    uint32_t nk, nin, nout, nregs, nnegout;
    size_t ninstr;
    /* cold: diagnostics, listing, tests */
    hs_srcpos *pos;        /* [ninstr] source position of each instruction */
    uint8_t *kind;         /* [ninstr] hs_kind of the node it came from */
    const hs_node **node;  /* [ninstr] that node (valid while the dag lives) */
};

/* Name, operand count and semantics of each opcode (compile.c). */
extern const char *const hs_op_name[HS_NOPS];
extern const uint8_t hs_op_nargs[HS_NOPS];
extern const char *const hs_op_doc[HS_NOPS];

#endif
