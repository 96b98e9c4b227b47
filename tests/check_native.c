/* Tests of the native kernels (src/native): the emitted C computes what the
 * VM computes, bit for bit (NaN = NaN, -0 != +0), on every shipped model,
 * on random expression programs and on random raw bytecode (registers
 * reused, constants and inputs overwritten, uninitialised reads, duplicate
 * and repeated negated outputs, extreme POWI exponents), split into
 * chunks of a few instructions and not split.  The cache and policy are
 * check_native_cache.c's, the hostile caches check_native_hostile.c's.
 *
 * Every test uses a cache under a temporary directory ($HOLOSIM_CACHE is
 * set for the whole suite), never the user's.  Compile work is kept small:
 * each build is one compiler run on a few hundred lines. */
#include <check.h>
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_main.h"
#include "expr/expr.h"
#include "expr/prog.h"      /* white-box: raw programs */
#include "model/model.h"
#include "native/native.h"
#include "native_fixture.h"

/* ---- helpers ---- */

#ifndef NATIVE_SEED                 /* -DNATIVE_SEED=... for a longer local search */
#define NATIVE_SEED 0x9e3779b97f4a7c15u
#endif
static uint64_t rng = NATIVE_SEED;

static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1p-53;
}

static double wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int irand(int n) { return (int)(urand() * n); }

/* The expressions of ops.def. */
static const char *const expr_text[HS_NOPS] = {
#define HS_OP(name, nargs, expr, doc) #expr,
#define HS_OP_CTRL(name, doc) "",
#include "expr/ops.def"
#undef HS_OP
#undef HS_OP_CTRL
};

/* While ops.def computes MIN and MAX with fmin and fmax, the VM's own
 * result for -0 against +0 depends on the compiler that built it: GCC
 * takes fmin as commutative and swaps its operands (vm.o at -O1 and -O2
 * calls fmin(r[c], r[b]); glibc returns the second of two equal
 * operands), so min(-0, +0) is -0 in the VM and +0 as written, and the
 * difference propagates.  The kernels keep the written order
 * (-fno-builtin-fmin).  Then, and only then, the random programs leave
 * MIN and MAX out and test_minmax avoids ties of zeros; with
 * compare-and-select expressions in ops.def everything is tested. */
static int minmax_tie_ambiguous(void)
{
    return strstr(expr_text[HS_OP_MIN], "fmin") || strstr(expr_text[HS_OP_MAX], "fmax");
}

/* ---- the shipped models ---- */

/* in[] of a state near the model's initial one (parameters where read). */
static void model_state(const hs_model *m, double *in, size_t nin)
{
    for (size_t i = 0; i < nin; i++)
        in[i] = urand() - 0.5;
    if (m->sym_t >= 0 && (size_t)m->sym_t < nin)
        in[m->sym_t] = m->t0 + urand();
    for (size_t i = 0; i < m->n; i++) {
        if ((size_t)m->sym_q[i] < nin)
            in[m->sym_q[i]] = m->q0[i] + 0.2 * (urand() - 0.5);
        if ((size_t)m->sym_v[i] < nin)
            in[m->sym_v[i]] = m->v0[i] + 2 * (urand() - 0.5);
    }
    for (size_t j = 0; j < m->npar; j++)
        if ((size_t)m->sym_p[j] < nin)
            in[m->sym_p[j]] = m->pval[j];
}

START_TEST(test_models_bit_exact)
{
    enum { MAXM = 64, NSTATES = 8 };
    hs_model *m[MAXM];
    enum { NP = 5 };                  /* dyn, aux, pos, out, ev (as src/cli/run.c) */
    const hs_prog *progs[NP * MAXM];
    size_t nm = 0;
    DIR *d = opendir("models");
    ck_assert_msg(d != NULL, "run from the source tree (models/)");
    for (struct dirent *e; (e = readdir(d)) && nm < MAXM;) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".yaml"))
            continue;
        char path[512];
        snprintf(path, sizeof path, "models/%s", e->d_name);
        hs_error err;
        hs_error_init(&err);
        m[nm] = hs_model_load(path, NULL, &err);
        ck_assert_msg(m[nm] != NULL, "%s: %s", path, err.msg);
        progs[NP * nm] = m[nm]->prog_dyn;
        progs[NP * nm + 1] = m[nm]->prog_aux;
        progs[NP * nm + 2] = m[nm]->prog_pos;
        progs[NP * nm + 3] = m[nm]->prog_out;   /* NULL without outputs: no kernel */
        progs[NP * nm + 4] = m[nm]->prog_ev;
        nm++;
    }
    closedir(d);
    ck_assert_uint_ge(nm, 9);
    /* one shared object for every program of every model (one compiler
     * run), in chunks of 16 instructions: values cross chunk boundaries */
    char dir[512], note[512];
    fresh(dir, sizeof dir);
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
    o.chunk = 16;
    hs_native_status st;
    double w0 = wall();
    hs_native *h = hs_native_load(progs, NP * nm, &o, &st, note, sizeof note);
    fprintf(stderr, "models build %.2f s\n", wall() - w0);
    ck_assert_msg(h != NULL, "%s", note);
    ck_assert_int_eq(st, HS_NATIVE_BUILT);
    size_t checked = 0, big = 0, nprog = 0;
    for (size_t i = 0; i < nm; i++) {
        size_t nin = m[i]->nin ? m[i]->nin : 1;
        double *in = malloc(nin * sizeof *in);
        for (int s = 0; s < NSTATES; s++) {
            model_state(m[i], in, nin);
            for (size_t j = 0; j < NP; j++) {
                const hs_prog *p = progs[NP * i + j];
                if (!p) {
                    ck_assert_ptr_null(hs_native_fn(h, NP * i + j));
                    continue;
                }
                nprog += s == 0;
                big += hs_prog_ninstr(p) > 16;
                ck_assert_msg(compare(p, hs_native_fn(h, NP * i + j), in, m[i]->file) == 0,
                              "%s program %zu state %d", m[i]->file, j, s);
                checked += hs_prog_nout(p);
            }
        }
        free(in);
    }
    ck_assert_uint_gt(big, 0);              /* some programs span several chunks */
    ck_assert_uint_ge(nprog, 3 * nm + 2);   /* outputs and events of some models too */
    fprintf(stderr, "models: %zu programs, %zu outputs compared, all bit-exact\n", nprog,
            checked);
    hs_native_free(h);
    for (size_t i = 0; i < nm; i++)
        hs_model_free(m[i]);
}
END_TEST

/* ---- random programs ---- */

static const hs_node *pos_(hs_dag *d, const hs_node *a)
{
    return hs_add(d, hs_num(d, 1), hs_pow(d, a, hs_num(d, 2)));
}

/* Random expressions over every kind (domains not guarded: NaN and Inf
 * must agree too). */
static const hs_node *gen(hs_dag *d, const hs_node *const *sym, int depth)
{
    static const double consts[] = {0.5, 2, 2.5, -1.5, 3, 0.1, -1, 1e300, 7};
    if (depth == 0 || urand() < 0.15)
        return urand() < 0.75 ? sym[irand(4)] : hs_num(d, consts[irand(9)]);
    /* an operation on constants alone would be folded, and a fold that
     * gives NaN or Inf is an error: one operand at least is not constant */
    const hs_node *a = gen(d, sym, depth - 1);
    const hs_node *b = irand(3) ? gen(d, sym, depth - 1) : sym[irand(4)];
    if (a->kind == HS_NUM)
        a = sym[irand(4)];
    switch (irand(24)) {
    case 0: case 1: return hs_add(d, a, b);
    case 2: case 3: return hs_sub(d, a, b);
    case 4: case 5: return hs_mul(d, a, b);
    case 6: return hs_div(d, a, b);
    case 7: return hs_neg(d, a);
    case 8: return hs_pow(d, a, hs_num(d, irand(9) - 4));               /* SQR, CUBE, POWI, RECIP */
    case 9: return hs_pow(d, a, hs_num(d, irand(2) ? 0.5 : -0.5));      /* SQRT, RSQRT */
    case 10: return hs_pow(d, pos_(d, a), b);                           /* POW */
    case 11: return hs_pow(d, a, hs_num(d, 2.5));                       /* POW, constant exponent */
    case 12: return hs_call1(d, (hs_kind)(HS_SIN + irand(3)), a);       /* sin cos tan */
    case 13: return hs_call1(d, (hs_kind)(HS_ASIN + irand(3)), a);      /* asin acos atan */
    case 14: return hs_call1(d, (hs_kind)(HS_SINH + irand(3)), a);      /* sinh cosh tanh */
    case 15: return hs_call1(d, irand(2) ? HS_EXP : HS_LOG, a);
    case 16: return hs_call1(d, irand(2) ? HS_ABS : HS_SIGN, a);
    case 17: return hs_call1(d, HS_SQRT, a);
    case 18: return hs_call2(d, HS_ATAN2, a, b);
    case 19:                                                            /* min max hypot */
        return hs_call2(d, minmax_tie_ambiguous() ? HS_HYPOT : (hs_kind)(HS_MIN + irand(3)), a, b);
    case 20: return hs_call2(d, (hs_kind)(HS_LT + irand(6)), a, b);     /* comparisons */
    case 21: return hs_if(d, hs_call2(d, HS_GT, a, b), a, hs_neg(d, b));
    case 22: return hs_add(d, hs_mul(d, a, b), sym[irand(4)]);          /* MULADD family */
    default: return hs_sub(d, sym[irand(4)], hs_mul(d, a, b));
    }
}

/* Raw bytecode: any opcode, any registers (constants and inputs
 * overwritten, temporaries read before they are written), outputs
 * repeated and negated more than once. */
static hs_prog *raw(void)
{
    static const double ks[] = {0.5, -0.0, 0.0, 3, NAN, INFINITY, -2.25, 1e-310, 1e300};
    static const int32_t ex[] = {INT32_MIN, INT32_MAX, -1, 0, 1, 2, 3, 7, -5, 1 << 20};
    hs_prog *p = calloc(1, sizeof *p);
    ck_assert_ptr_nonnull(p);
    p->nk = (uint32_t)irand(4);
    p->nin = (uint32_t)irand(4);
    p->nregs = p->nk + p->nin + 1 + (uint32_t)irand(10);
    p->ninstr = (size_t)irand(50);
    p->nout = 1 + (uint32_t)irand(8);
    p->nnegout = (uint32_t)irand(5);
    p->code = calloc(p->ninstr + 1, sizeof *p->code);
    p->k = calloc(p->nk + 1, sizeof *p->k);
    p->outreg = calloc(p->nout, sizeof *p->outreg);
    p->negout = calloc(p->nnegout + 1, sizeof *p->negout);
    p->pos = calloc(p->ninstr + 1, sizeof *p->pos);
    ck_assert(p->code && p->k && p->outreg && p->negout && p->pos);
    for (size_t i = 0; i < p->ninstr; i++)
        p->pos[i] = (hs_srcpos){-1, -1};
    for (uint32_t j = 0; j < p->nk; j++)
        p->k[j] = ks[irand(9)];
    for (size_t i = 0; i < p->ninstr; i++) {
        uint32_t op = 1 + (uint32_t)irand(HS_NOPS - 1), a = (uint32_t)irand((int)p->nregs);
        while ((op == HS_OP_MIN || op == HS_OP_MAX) && minmax_tie_ambiguous())
            op = 1 + (uint32_t)irand(HS_NOPS - 1);
        p->code[i].opa = op | a << 8;
        p->code[i].b = (uint32_t)irand((int)p->nregs);
        p->code[i].c = op == HS_OP_POWI ? (uint32_t)ex[irand(10)] : (uint32_t)irand((int)p->nregs);
        p->code[i].d = (uint32_t)irand((int)p->nregs);
    }
    for (uint32_t o = 0; o < p->nout; o++)
        p->outreg[o] = (uint32_t)irand((int)p->nregs);
    for (uint32_t j = 0; j < p->nnegout; j++)
        p->negout[j] = (uint32_t)irand((int)p->nout);
    return p;
}

static double special(void)
{
    static const double v[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e308, -1e-310, 1, -1};
    return irand(3) ? 4 * urand() - 2 : v[irand(9)];
}

/* nd programs from random expressions (1..12 roots each) and nr raw ones,
 * one build with chunk instructions per function, 6 points each. */
static void random_round(size_t chunk, int nd, int nr)
{
    int n = nd + nr;
    hs_prog **p = calloc((size_t)n, sizeof *p);
    ck_assert_ptr_nonnull(p);
    for (int i = 0; i < nd; i++) {
        /* a dag each: a fold that overflows (rare: 1e300^3 after the
         * simplifier distributes a power) spoils only this attempt */
        for (int attempt = 0; !p[i]; attempt++) {
            ck_assert_int_lt(attempt, 20);
            hs_dag *d = hs_dag_new();
            const hs_node *sym[4], *roots[6];
            for (int j = 0; j < 4; j++) {
                char name[2] = {(char)('a' + j), 0};
                sym[j] = hs_sym(d, hs_dag_symbol(d, name));
            }
            int nroots = 1 + irand(6);
            for (int j = 0; j < nroots; j++)
                roots[j] = gen(d, sym, 1 + irand(6));
            if (!hs_dag_failed(d)) {
                hs_error err;
                hs_error_init(&err);
                p[i] = hs_prog_compile(d, roots, (size_t)nroots, &err);
                ck_assert_msg(p[i] != NULL, "%s", err.msg);
            }
            hs_dag_free(d);
        }
    }
    for (int i = nd; i < n; i++)
        p[i] = raw();
    size_t total = 0;
    for (int i = 0; i < n; i++)
        total += hs_prog_ninstr(p[i]);
    char dir[512], note[512];
    fresh(dir, sizeof dir);
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
    o.chunk = chunk;
    hs_native_status st;
    double w0 = wall();
    hs_native *h = hs_native_load((const hs_prog *const *)p, (size_t)n, &o, &st, note,
                                  sizeof note);
    ck_assert_msg(h != NULL, "%s", note);
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 6; k++) {
            double in[4];
            for (int j = 0; j < 4; j++)
                in[j] = k < 3 ? 4 * urand() - 2 : special();
            char what[64];
            snprintf(what, sizeof what, "program %d (%s), point %d, chunk %zu", i,
                     i < nd ? "expressions" : "raw", k, chunk);
            ck_assert_msg(compare(p[i], hs_native_fn(h, (size_t)i), in, what) == 0, "%s", what);
        }
    hs_native_free(h);
    fprintf(stderr, "random: %d programs, %zu instructions, chunk %zu: %.2f s%s\n", n, total,
            chunk, wall() - w0, minmax_tie_ambiguous() ? " (without MIN, MAX)" : "");
    for (int i = 0; i < n; i++)
        hs_prog_free(p[i]);
    free(p);
}

START_TEST(test_random_programs)
{
    random_round(4, 8, 30);            /* cut every 4 instructions */
    random_round(0, 16, 40);           /* one function per program */
}
END_TEST

/* MIN and MAX (see minmax_tie_ambiguous). */
START_TEST(test_minmax)
{
    hs_dag *d = hs_dag_new();
    const hs_node *a = hs_sym(d, hs_dag_symbol(d, "a")), *b = hs_sym(d, hs_dag_symbol(d, "b"));
    const hs_node *e[2] = {hs_call2(d, HS_MIN, a, b), hs_call2(d, HS_MAX, a, b)};
    hs_error err;
    hs_error_init(&err);
    hs_prog *p = hs_prog_compile(d, e, 2, &err);
    ck_assert_ptr_nonnull(p);
    char dir[512], note[512];
    fresh(dir, sizeof dir);
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
    hs_native_status st;
    hs_native *h = hs_native_load((const hs_prog *const *)&p, 1, &o, &st, note, sizeof note);
    ck_assert_msg(h != NULL, "%s", note);
    const double v[] = {-2, -0.5, 0.0, -0.0, 1, 3, INFINITY, -INFINITY, NAN, 1e-310};
    int ties = 0;
    for (size_t i = 0; i < 10; i++)
        for (size_t j = 0; j < 10; j++) {
            if (v[i] == 0 && v[j] == 0 && signbit(v[i]) != signbit(v[j])
                && minmax_tie_ambiguous())
                continue;
            ties += v[i] == v[j];
            double in[2] = {v[i], v[j]};
            ck_assert_int_eq(compare(p, hs_native_fn(h, 0), in, "min/max"), 0);
        }
    ck_assert_int_ge(ties, 6);
    hs_native_free(h);
    hs_prog_free(p);
    hs_dag_free(d);
}
END_TEST

/* sin and cos of one value are computed together (one sincos call), also
 * across chunks (the later value travels in a stack slot); of a register
 * that was redefined in between, they are not. */
START_TEST(test_sincos_pairs)
{
    enum { SIN = HS_OP_SIN, COS = HS_OP_COS };
    static const uint32_t code[][4] = {      /* op, a, b, c */
        {SIN, 2, 0, 0},                      /* sin(in0) */
        {HS_OP_MUL, 3, 0, 1},
        {COS, 4, 0, 0},                      /* cos(in0): pairs with 0 */
        {HS_OP_ADD, 0, 0, 1},                /* in0's register redefined */
        {COS, 5, 0, 0},                      /* cos of the new value: not with 0 */
        {SIN, 6, 0, 0},                      /* pairs with 4 */
        {SIN, 2, 3, 0},                      /* r2 reused */
        {HS_OP_ADD, 8, 2, 6},
        {COS, 7, 3, 0},                      /* pairs with 6 */
    };
    hs_prog *p = calloc(1, sizeof *p);
    p->nin = 2;
    p->nregs = 9;
    p->ninstr = sizeof code / sizeof code[0];
    p->code = calloc(p->ninstr + 1, sizeof *p->code);
    p->pos = calloc(p->ninstr, sizeof *p->pos);
    for (size_t i = 0; i < p->ninstr; i++) {
        p->code[i] = (hs_instr){code[i][0] | code[i][1] << 8, code[i][2], code[i][3], 0};
        p->pos[i] = (hs_srcpos){-1, -1};
    }
    static const uint32_t outs[] = {2, 4, 5, 6, 7, 3, 8, 0};
    p->nout = sizeof outs / sizeof outs[0];
    p->outreg = malloc(sizeof outs);
    memcpy(p->outreg, outs, sizeof outs);
    const hs_prog *ps[1] = {p};
    for (size_t chunk = 1; chunk <= 10; chunk += 3) {
        char *src = hs_native_source(ps, 1, chunk, NULL);
        ck_assert_ptr_nonnull(src);
        /* three pairs: the later of each is computed beside the earlier */
        ck_assert_msg(strstr(src, "t0 = OP_SIN(in[0]") && strstr(src, "t2 = OP_COS(in[0]")
                      && !strstr(src, "t4 = OP_COS(in[0]")
                      && (chunk > 1 || strstr(src, "t5 = OP_SIN(r[0]")), "chunk %zu", chunk);
        static const char *const pairs[3][2] = {{"t0 = OP_SIN(", "t2 = OP_COS("},
                                                {"t4 = OP_COS(", "t5 = OP_SIN("},
                                                {"t6 = OP_SIN(", "t8 = OP_COS("}};
        for (int k = 0; k < 3; k++) {
            const char *a = strstr(src, pairs[k][0]), *b = strstr(src, pairs[k][1]);
            ck_assert_msg(a && b && b > a && b - a < 60, "pair %d, chunk %zu", k, chunk);
        }
        ck_assert_int_eq(chunk == 1 ? 1 : 0, strstr(src, "x[0] = t2;") != NULL);
        free(src);
        char dir[512], note[512];
        fresh(dir, sizeof dir);
        hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
        o.chunk = chunk;
        hs_native_status st;
        hs_native *h = hs_native_load(ps, 1, &o, &st, note, sizeof note);
        ck_assert_msg(h != NULL, "%s", note);
        for (int k = 0; k < 8; k++) {
            double in[2] = {8 * urand() - 4, k < 4 ? urand() : special()};
            ck_assert_int_eq(compare(p, hs_native_fn(h, 0), in, "sincos"), 0);
        }
        hs_native_free(h);
    }
    hs_prog_free(p);
}
END_TEST

/* The emitted text: hex constants, ops.def's expressions, no literal
 * constant in an operation. */
START_TEST(test_source)
{
    hs_prog *p = tiny();
    const hs_prog *ps[2] = {NULL, p};
    size_t len = 0;
    char *s = hs_native_source(ps, 2, 0, &len);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(strlen(s), len);
    ck_assert_msg(strstr(s, "0x1.4p+1") != NULL, "2.5 as a hex literal:\n%s", s);
    ck_assert(strstr(s, "#define OP_MULADD(B, C, D, N) (B * C + D)") != NULL);
    ck_assert(strstr(s, "#define OP_POWI(B, C, D, N) (powi(B, N))") != NULL);
    ck_assert(strstr(s, "void hs_native_p1(") != NULL);
    ck_assert(strstr(s, "hs_native_p0(") == NULL);
    ck_assert(strstr(s, "K1[") != NULL);
    free(s);
    tiny_free(p);
}
END_TEST
static Suite *suite(void)
{
    Suite *s = suite_create("native");
    TCase *tc = tcase_create("native");
    tcase_set_timeout(tc, 120);
    tcase_add_unchecked_fixture(tc, suite_setup, suite_teardown);
    tcase_add_test(tc, test_source);
    tcase_add_test(tc, test_models_bit_exact);
    tcase_add_test(tc, test_random_programs);
    tcase_add_test(tc, test_minmax);
    tcase_add_test(tc, test_sincos_pairs);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
