/* libFuzzer harness for the expression engine (src/expr/).
 *
 * Input: the bytes of one expression (at most MAX_LEN).  Names t, x, y, z,
 * a, b resolve to symbols, x' y' z' to velocities; others are unknown.
 * When the text parses:
 *   - print it (hs_format) and re-parse the text: the node must be the same
 *     (nodes are hash-consed, so the same node is the same pointer); a
 *     mismatch or a re-parse error aborts (a finding);
 *   - differentiate w.r.t. x (hs_diff) and take the total derivative;
 *   - compile {e, de/dx, De} into one program, evaluate it at fixed points,
 *     and locate the first non-finite value when an output is not finite.
 * Everything is freed: a leak is a finding under LeakSanitizer. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "expr/expr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MAX_LEN = 4096, MAX_PRINT = 1 << 22 };

/* Symbols in creation order: in[] below is indexed by these numbers. */
static const char *const SYMS[] = {"t", "x", "y", "z", "x'", "y'", "z'", "a", "b"};
enum { T, X, Y, Z, XV, YV, ZV, A, B, NSYM };

/* Inputs the program is evaluated at: ordinary values, then zeros and
 * negatives (domain edges: log 0, sqrt of a negative, 0^0, x/0). */
static const double POINTS[][NSYM] = {
    {0.3, 1.5, -0.7, 2.25, 0.25, -1.25, 0.5, 3.0, 5.0},
    {0.0, 0.0, -1.0, 0.0, 0.0, 1.0, -2.0, -0.5, 0.0},
};

static int is_coord(const char *s, size_t n)
{
    return n == 1 && (s[0] == 'x' || s[0] == 'y' || s[0] == 'z');
}

static const hs_node *lookup(void *ctx, hs_dag *d, const char *name, size_t len,
                             int primed, size_t offset, int *status, hs_error *err)
{
    (void)ctx;
    (void)offset;
    (void)err;
    int known = 0;
    for (int i = 0; i < NSYM; i++)
        known |= strlen(SYMS[i]) == len && memcmp(SYMS[i], name, len) == 0;
    if (!known) {
        *status = HS_RESOLVE_UNKNOWN;
        return NULL;
    }
    if (primed && !is_coord(name, len)) {
        *status = HS_RESOLVE_NO_PRIME;
        return NULL;
    }
    char buf[8];
    snprintf(buf, sizeof buf, "%.*s%s", (int)len, name, primed ? "'" : "");
    int s = hs_dag_find_symbol(d, buf);
    if (s < 0) {
        *status = HS_RESOLVE_UNKNOWN;
        return NULL;
    }
    return hs_sym(d, s);
}

static const hs_resolver RES = {lookup, NULL, NULL};

/* print -> parse must give the node back. */
static void check_roundtrip(hs_dag *d, const hs_node *e, const uint8_t *data, size_t size)
{
    size_t need = hs_format(d, e, NULL, 0);
    if (need > MAX_PRINT)
        return;                 /* a dag printed as a tree can be long: skip */
    char *buf = malloc(need + 1);
    if (!buf)
        return;
    size_t got = hs_format(d, e, buf, need + 1);
    if (got != need) {
        fprintf(stderr, "hs_format: length %zu, then %zu\n", need, got);
        abort();
    }
    buf[need] = '\0';
    hs_error err;
    hs_error_init(&err);
    const hs_node *e2 = hs_parse(d, buf, need, 1, &RES, &err);
    if (e2 != e) {
        fprintf(stderr, "print/parse round trip failed\n  input:   %.*s\n  printed: %s\n",
                (int)size, (const char *)data, buf);
        if (e2) {
            fprintf(stderr, "  re-parsed and printed: ");
            hs_fprint(stderr, d, e2);
            fputc('\n', stderr);
        } else
            fprintf(stderr, "  re-parse error %d:%d: %s\n", err.line, err.column, err.msg);
        abort();
    }
    free(buf);
}

static void evaluate(const hs_dag *d, const hs_node *const *roots, size_t nroots)
{
    hs_error err;
    hs_error_init(&err);
    hs_prog *p = hs_prog_compile(d, roots, nroots, &err);
    if (!p)
        return;
    if (hs_prog_nin(p) > NSYM || hs_prog_nout(p) != nroots) {
        fprintf(stderr, "program reads %zu inputs (of %d), writes %zu outputs (of %zu)\n",
                hs_prog_nin(p), NSYM, hs_prog_nout(p), nroots);
        abort();
    }
    size_t nregs = hs_prog_nregs(p);
    double *regs = malloc((nregs ? nregs : 1) * sizeof *regs);
    double out[3];
    if (regs)
        for (size_t i = 0; i < sizeof POINTS / sizeof POINTS[0]; i++) {
            hs_prog_eval(p, POINTS[i], regs, out);
            int finite = 1;
            for (size_t j = 0; j < nroots; j++)
                finite &= isfinite(out[j]) != 0;
            if (!finite) {
                hs_srcpos pos;
                const char *what = NULL;
                if (hs_prog_find_nonfinite(p, POINTS[i], regs, &pos, &what) && !what) {
                    fprintf(stderr, "hs_prog_find_nonfinite: found, without a reason\n");
                    abort();
                }
            }
        }
    free(regs);
    hs_prog_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > MAX_LEN)
        return -1;              /* not added to the corpus */
    hs_dag *d = hs_dag_new();
    if (!d)
        return 0;
    for (int i = 0; i < NSYM; i++)
        if (hs_dag_symbol(d, SYMS[i]) != i)
            abort();
    hs_error err;
    hs_error_init(&err);
    const hs_node *e = hs_parse(d, (const char *)data, size, 0, &RES, &err);
    if (!e) {
        if (!err.code || !err.msg[0]) {
            fprintf(stderr, "hs_parse failed without an error message\n");
            abort();
        }
    } else if (!hs_dag_failed(d)) {
        check_roundtrip(d, e, data, size);
        const int q[3] = {X, Y, Z}, v[3] = {XV, YV, ZV};
        const hs_node *roots[3] = {e, hs_diff(d, e, X), NULL};
        roots[2] = hs_total_diff(d, e, T, 3, q, v);
        if (!hs_dag_failed(d))
            evaluate(d, roots, 3);
    }
    hs_dag_free(d);
    return 0;
}
