/* libFuzzer harness for the expression engine (src/expr/).
 *
 * Input: the bytes of one expression (at most MAX_LEN).  Names t, x, y, z,
 * a, b resolve to symbols, x' y' z' to velocities; others are unknown.
 * When the text parses:
 *   - print it (hs_format) and re-parse the text: the node must be the same
 *     (nodes are hash-consed, so the same node is the same pointer); a
 *     mismatch or a re-parse error aborts (a finding);
 *   - differentiate w.r.t. x (hs_diff) and take the total derivative
 *     twice (as the loader builds Gdot and gamma);
 *   - print {e, de/dx, De, DDe} with shared subexpressions named
 *     (hs_fprint_shared) and parse that text back, the temporaries `_k`
 *     resolving to what their lines gave: each root must come back as the
 *     same node (a mismatch aborts);
 *   - compile the four into one program, evaluate it at fixed points,
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
    snprintf(buf, sizeof buf, "%.*s%s", (int)len, name, primed > 1 ? "''" : primed ? "'" : "");
    int s = hs_dag_find_symbol(d, buf);
    if (s < 0) {
        *status = HS_RESOLVE_UNKNOWN;
        return NULL;
    }
    return hs_sym(d, s);
}

static const hs_resolver RES = {lookup, NULL, NULL};

/* Temporaries of a shared print: "_k" is temp[k]; other names as RES. */
typedef struct temps {
    const hs_node **temp;   /* [cap] */
    size_t n, cap;
} temps;

static const hs_node *lookup_temp(void *ctx, hs_dag *d, const char *name, size_t len,
                                  int primed, size_t offset, int *status, hs_error *err)
{
    temps *t = ctx;
    if (!primed && len > 1 && name[0] == '_' && strspn(name + 1, "0123456789") >= len - 1) {
        size_t k = (size_t)strtoul(name + 1, NULL, 10);
        if (k >= 1 && k <= t->n) {
            *status = HS_RESOLVE_OK;
            return t->temp[k];
        }
    }
    return lookup(NULL, d, name, len, primed, offset, status, err);
}

/* hs_fprint_shared, then each line parsed back: "_k = ..." lines define
 * the temporaries, the other lines must give roots[] in order. */
static void check_shared_print(hs_dag *d, const hs_node *const *roots, size_t nroots)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return;
    hs_fprint_shared(m, d, roots, NULL, nroots);
    fclose(m);
    temps t = {NULL, 0, 0};
    hs_resolver r = {lookup_temp, &t, NULL};
    size_t k = 0;
    for (char *line = buf; len <= MAX_PRINT && *line;) {
        char *end = strchr(line, '\n');
        if (!end)
            break;
        int is_temp = line[0] == '_' && strstr(line, " = ") && strstr(line, " = ") < end;
        const char *text = is_temp ? strstr(line, " = ") + 3 : line;
        hs_error err;
        hs_error_init(&err);
        const hs_node *e = hs_parse(d, text, (size_t)(end - text), 2, &r, &err);
        if (!e || (!is_temp && (k >= nroots || e != roots[k]))) {
            fprintf(stderr, "shared print read back: line '%.*s' gives %s\n", (int)(end - line),
                    line, e ? "another node" : err.msg);
            abort();
        }
        if (is_temp) {
            if (t.n + 2 > t.cap) {
                size_t cap = t.cap ? 2 * t.cap : 16;
                const hs_node **nt = realloc(t.temp, cap * sizeof *nt);
                if (!nt)
                    break;
                t.temp = nt;
                t.cap = cap;
            }
            t.temp[++t.n] = e;
        } else {
            k++;
        }
        line = end + 1;
    }
    free(t.temp);
    free(buf);
}

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
    double out[4];
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
        const hs_node *roots[4] = {e, hs_diff(d, e, X), NULL, NULL};
        roots[2] = hs_total_diff(d, e, T, 3, q, v);
        roots[3] = hs_total_diff(d, roots[2], T, 3, q, v);
        if (!hs_dag_failed(d))
            check_shared_print(d, roots, 4);
        if (!hs_dag_failed(d))
            evaluate(d, roots, 4);
    }
    hs_dag_free(d);
    return 0;
}
