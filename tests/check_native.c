/* Tests of the native kernels (src/native): the emitted C computes what the
 * VM computes, bit for bit (NaN = NaN, -0 != +0), on every shipped model,
 * on random expression programs and on random raw bytecode (registers
 * reused, constants and inputs overwritten, uninitialised reads, duplicate
 * and repeated negated outputs, extreme POWI exponents), split into
 * chunks of a few instructions and not split; and the cache and policy:
 * cached loads, truncated and altered entries rebuilt, concurrent
 * builders, unusable cache directories, no compiler, a failing compiler, a
 * compiler that produces garbage, the background build of `auto`.
 *
 * Every test uses a cache under a temporary directory ($HOLOSIM_CACHE is
 * set for the whole suite), never the user's.  Compile work is kept small:
 * each build is one compiler run on a few hundred lines, most tests share
 * one tiny program. */
#define _GNU_SOURCE                 /* setresuid, setgroups */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <grp.h>
#include <unistd.h>

#include "check_main.h"
#include "expr/expr.h"
#include "expr/prog.h"      /* white-box: raw programs */
#include "model/model.h"
#include "native/native.h"
#include "native/nat.h"     /* white-box: the build without its lock */

/* ---- helpers ---- */

static char root[] = "/tmp/check_native.XXXXXX";

static void suite_setup(void)
{
    ck_assert_ptr_nonnull(mkdtemp(root));
    setenv("HOLOSIM_CACHE", root, 1);
}

static void suite_teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "chmod -R u+rwx '%s'; rm -rf '%s'", root, root);
    if (system(cmd) != 0)
        fprintf(stderr, "check_native: could not remove %s\n", root);
}

/* A fresh directory under the suite's root (a cache of its own). */
static void fresh(char *dir, size_t cap)
{
    snprintf(dir, cap, "%s/c.XXXXXX", root);
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static hs_native_opts opts(hs_native_policy pol, const char *dir)
{
    hs_native_opts o;
    hs_native_opts_init(&o);
    o.policy = pol;
    o.cache_dir = dir;
    return o;
}

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

static int same_bits(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

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

/* VM and kernel on the same inputs and the same initial scratch: every
 * output the same, bit for bit.  Returns the number of differences. */
static int compare(const hs_prog *p, hs_kernel_fn f, const double *in, const char *what)
{
    size_t nr = hs_prog_nregs(p), no = hs_prog_nout(p);
    double *r1 = malloc((nr + 1) * sizeof *r1), *r2 = malloc((nr + 1) * sizeof *r2);
    double *o1 = malloc((no + 1) * sizeof *o1), *o2 = malloc((no + 1) * sizeof *o2);
    ck_assert(r1 && r2 && o1 && o2);
    for (size_t i = 0; i < nr; i++)
        r1[i] = r2[i] = 0.25 * (double)i - 3;   /* what an uninitialised read sees */
    for (size_t i = 0; i < no; i++)
        o1[i] = o2[i] = NAN;
    hs_prog_eval(p, in, r1, o1);
    f(in, r2, o2);
    int bad = 0;
    for (size_t i = 0; i < no; i++)
        if (!same_bits(o1[i], o2[i]) && bad++ < 3)
            fprintf(stderr, "%s: out[%zu]: VM %a, native %a\n", what, i, o1[i], o2[i]);
    if (bad)
        hs_prog_disasm(p, NULL, stderr);
    free(r1);
    free(r2);
    free(o1);
    free(o2);
    return bad;
}

/* sin(x)*y + 2.5*z - x^3: a few instructions, constants, inputs */
static hs_dag *tiny_dag;
static hs_prog *tiny(void)
{
    hs_dag *d = tiny_dag = hs_dag_new();
    const hs_node *x = hs_sym(d, hs_dag_symbol(d, "x")), *y = hs_sym(d, hs_dag_symbol(d, "y"));
    const hs_node *z = hs_sym(d, hs_dag_symbol(d, "z"));
    const hs_node *e[2] = {
        hs_sub(d, hs_add(d, hs_mul(d, hs_call1(d, HS_SIN, x), y), hs_mul(d, hs_num(d, 2.5), z)),
               hs_pow(d, x, hs_num(d, 3))),
        hs_call2(d, HS_ATAN2, y, x)};
    hs_error err;
    hs_error_init(&err);
    hs_prog *p = hs_prog_compile(d, e, 2, &err);
    ck_assert_msg(p != NULL, "%s", err.msg);
    return p;
}

static void tiny_free(hs_prog *p)
{
    hs_prog_free(p);
    hs_dag_free(tiny_dag);
}

static void check_tiny(const hs_native *h, const hs_prog *p)
{
    const double in[3] = {0.7, -1.25, 3.5};
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(compare(p, hs_native_fn(h, 0), in, "tiny"), 0);
}

static hs_native *load1(const hs_prog *p, const hs_native_opts *o, hs_native_status *st,
                        char *note, size_t cap)
{
    return hs_native_load(&p, 1, o, st, note, cap);
}

/* Entries k*.so in dir/native. */
static int count_entries(const char *dir, char *last, size_t cap)
{
    char sub[512];
    snprintf(sub, sizeof sub, "%s/native", dir);
    DIR *d = opendir(sub);
    int n = 0;
    if (!d)
        return 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t l = strlen(e->d_name);
        if (l > 3 && strcmp(e->d_name + l - 3, ".so") == 0 && !strstr(e->d_name, ".tmp.")) {
            n++;
            if (last)
                snprintf(last, cap, "%s/%s", sub, e->d_name);
        }
    }
    closedir(d);
    return n;
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

/* ---- cache ---- */

START_TEST(test_cache_hit_and_policies)
{
    hs_prog *p = tiny();
    char dir[512], note[512], path[1024];
    fresh(dir, sizeof dir);
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_NEVER, dir);
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_OFF);
    ck_assert_str_eq(note, "");

    o.policy = HS_NATIVE_AUTO;                     /* short run, nothing cached */
    o.work = 1000;
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_SHORT);
    ck_assert_str_eq(note, "");
    char sub[600];
    snprintf(sub, sizeof sub, "%s/native", dir);
    ck_assert_msg(access(sub, F_OK) != 0, "a short run created %s", sub);

    o.policy = HS_NATIVE_ALWAYS;
    hs_native *h = load1(p, &o, &st, note, sizeof note);
    ck_assert_msg(h != NULL, "%s", note);
    ck_assert_int_eq(st, HS_NATIVE_BUILT);
    ck_assert_str_eq(note, "");
    check_tiny(h, p);
    ck_assert_int_eq(count_entries(dir, path, sizeof path), 1);
    ck_assert_str_eq(hs_native_path(h), path);
    hs_native_free(h);

    o.policy = HS_NATIVE_AUTO;                     /* cached: used even when short */
    h = load1(p, &o, &st, note, sizeof note);
    ck_assert_int_eq(st, HS_NATIVE_CACHED);
    check_tiny(h, p);
    hs_native_free(h);
    o.policy = HS_NATIVE_ALWAYS;
    h = load1(p, &o, &st, note, sizeof note);
    ck_assert_int_eq(st, HS_NATIVE_CACHED);
    hs_native_free(h);

    /* other flags, another chunk size: other entries */
    o.opt = "-O0";
    h = load1(p, &o, &st, note, sizeof note);
    ck_assert_int_eq(st, HS_NATIVE_BUILT);
    check_tiny(h, p);
    hs_native_free(h);
    ck_assert_int_eq(count_entries(dir, NULL, 0), 2);

    /* no work files left behind */
    DIR *d = opendir(sub);
    for (struct dirent *e; (e = readdir(d));)
        ck_assert_msg(!strstr(e->d_name, ".tmp."), "left behind: %s", e->d_name);
    closedir(d);
    ck_assert_ptr_null(hs_native_fn(NULL, 0));
    hs_native_free(NULL);
    ck_assert_str_eq(hs_native_policy_names[HS_NATIVE_ALWAYS], "always");
    tiny_free(p);
}
END_TEST

/* Truncated, altered, and trailer-less entries: not loaded; always
 * rebuilds, auto falls back to the VM quietly. */
START_TEST(test_cache_corrupt)
{
    hs_prog *p = tiny();
    char dir[512], note[512], path[1024];
    fresh(dir, sizeof dir);
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
    hs_native_free(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_BUILT);
    ck_assert_int_eq(count_entries(dir, path, sizeof path), 1);
    struct stat sb;
    ck_assert_int_eq(stat(path, &sb), 0);
    for (int damage = 0; damage < 4; damage++) {
        if (damage == 0) {
            ck_assert_int_eq(truncate(path, sb.st_size / 2), 0);
        } else if (damage == 3) {
            ck_assert_int_eq(truncate(path, sb.st_size - 93), 0);   /* trailer gone */
        } else {
            /* one byte flipped in the code (1) or in the trailer's hash (2) */
            int fd = open(path, O_RDWR);
            off_t at = damage == 1 ? sb.st_size / 3 : sb.st_size - 5;
            unsigned char c;
            ck_assert(pread(fd, &c, 1, at) == 1);
            c ^= 0x10;
            ck_assert(pwrite(fd, &c, 1, at) == 1);
            close(fd);
        }
        ck_assert(!hs_nat_entry_ok(path, strrchr(path, '/') + 2));
        o.policy = HS_NATIVE_AUTO;
        o.work = 0;
        ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
        ck_assert_int_eq(st, HS_NATIVE_SHORT);
        o.policy = HS_NATIVE_ALWAYS;
        hs_native *h = load1(p, &o, &st, note, sizeof note);
        ck_assert_msg(h != NULL, "damage %d: %s", damage, note);
        ck_assert_int_eq(st, HS_NATIVE_BUILT);
        check_tiny(h, p);
        hs_native_free(h);
        ck_assert_int_eq(stat(path, &sb), 0);
    }
    tiny_free(p);
}
END_TEST

/* Two processes build the same entry at once, through the policy (one
 * waits for the other's lock) and through the bare build (both compile,
 * both rename): both succeed and the entry is valid. */
START_TEST(test_concurrent_builders)
{
    hs_prog *p = tiny();
    char dir[512], path[1024];
    for (int bare = 0; bare < 2; bare++) {
        fresh(dir, sizeof dir);
        pid_t pid[2];
        for (int i = 0; i < 2; i++) {
            pid[i] = fork();
            ck_assert_int_ge(pid[i], 0);
            if (pid[i] == 0) {
                hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
                char note[512];
                hs_native_status st;
                int ok;
                if (bare) {
                    /* what the policy would build, minus the lock */
                    size_t len;
                    char *src = hs_native_source((const hs_prog *const *)&p, 1, 0, &len);
                    hs_nat_cc cc;
                    char why[512], d[4096];
                    int dfd = -1;
                    ok = src && hs_nat_cc_find(&cc, why, sizeof why) == 0
                         && hs_nat_cache_dir(dir, 1, d, sizeof d, &dfd, why, sizeof why) == 0
                         && hs_nat_build(&cc, "-O1", src, len, dfd, "0123456789abcdef0123456789abcdef",
                                         0, why, sizeof why) == 0;
                    _exit(ok ? 0 : 1);
                }
                hs_native *h = load1(p, &o, &st, note, sizeof note);
                ok = h && (st == HS_NATIVE_BUILT || st == HS_NATIVE_CACHED);
                if (ok) {
                    const double in[3] = {0.7, -1.25, 3.5};
                    ok = compare(p, hs_native_fn(h, 0), in, "concurrent") == 0;
                }
                _exit(ok ? 0 : 1);
            }
        }
        for (int i = 0; i < 2; i++) {
            int status;
            ck_assert_int_eq(waitpid(pid[i], &status, 0), pid[i]);
            ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "builder %d failed", i);
        }
        ck_assert_int_eq(count_entries(dir, path, sizeof path), 1);
        ck_assert(hs_nat_entry_ok(path, strrchr(path, '/') + 2));
    }
    tiny_free(p);
}
END_TEST

START_TEST(test_unusable_cache_dir)
{
    hs_prog *p = tiny();
    char dir[512], file[600], note[512];
    fresh(dir, sizeof dir);
    snprintf(file, sizeof file, "%s/plain", dir);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    char below[700];
    snprintf(below, sizeof below, "%s/cache", file);     /* under a regular file: ENOTDIR,
                                                          * even for root */
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, below);
    hs_native *h = load1(p, &o, &st, note, sizeof note);
    ck_assert_msg(h != NULL, "%s", note);
    ck_assert_int_eq(st, HS_NATIVE_BUILT);
    ck_assert_msg(strstr(note, "temporary directory") && strstr(note, "cannot create"), "%s",
                  note);
    ck_assert_str_eq(hs_native_path(h), "");
    check_tiny(h, p);
    hs_native_free(h);

    o.policy = HS_NATIVE_AUTO;                       /* a long run: no build, a note */
    o.work = 1e12;
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_FAILED);
    ck_assert_msg(strstr(note, "cannot create") && strstr(note, "VM"), "%s", note);

    /* a directory that others may write is not used */
    char open_dir[600];
    snprintf(open_dir, sizeof open_dir, "%s/open", dir);
    ck_assert_int_eq(mkdir(open_dir, 0700), 0);
    snprintf(below, sizeof below, "%s/native", open_dir);
    ck_assert_int_eq(mkdir(below, 0700), 0);
    ck_assert_int_eq(chmod(below, 0777), 0);
    o.policy = HS_NATIVE_ALWAYS;
    o.cache_dir = open_dir;
    h = load1(p, &o, &st, note, sizeof note);
    ck_assert_msg(h != NULL && strstr(note, "not yours alone"), "%s", note);
    hs_native_free(h);
    ck_assert_int_eq(count_entries(open_dir, NULL, 0), 0);

    /* read-only for a non-root user: still read, never written */
    if (geteuid() != 0) {
        char ro[600];
        snprintf(ro, sizeof ro, "%s/ro", dir);
        ck_assert_int_eq(mkdir(ro, 0500), 0);
        o.cache_dir = ro;
        h = load1(p, &o, &st, note, sizeof note);
        ck_assert_msg(h != NULL && strstr(note, "temporary directory"), "%s", note);
        hs_native_free(h);
    }
    tiny_free(p);
}
END_TEST

/* Writes an executable shell script; returns its path in out. */
static void script(const char *dir, const char *name, const char *body, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", dir, name);
    FILE *f = fopen(out, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "#!/bin/sh\n%s\n", body);
    fclose(f);
    ck_assert_int_eq(chmod(out, 0700), 0);
}

START_TEST(test_no_compiler)
{
    hs_prog *p = tiny();
    char dir[512], note[512];
    fresh(dir, sizeof dir);
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
    char *old_cc = getenv("CC") ? strdup(getenv("CC")) : NULL;
    char *old_path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;

    setenv("CC", "/nonexistent/cc", 1);
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_FAILED);
    ck_assert_msg(strstr(note, "no C compiler") && strstr(note, "/nonexistent/cc")
                  && strstr(note, "VM") && !strchr(note, '\n'), "%s", note);

    unsetenv("CC");
    setenv("PATH", dir, 1);                       /* no cc there */
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_msg(strstr(note, "'cc' not found in PATH"), "%s", note);
    o.policy = HS_NATIVE_AUTO;                     /* short: quiet */
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_SHORT);
    ck_assert_str_eq(note, "");
    o.work = 1e12;                                 /* long: says why */
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_FAILED);
    ck_assert_msg(strstr(note, "not found in PATH"), "%s", note);

    if (old_path)
        setenv("PATH", old_path, 1);
    if (old_cc)
        setenv("CC", old_cc, 1);
    free(old_cc);
    free(old_path);
    tiny_free(p);
}
END_TEST

/* A compiler that fails: the note carries its error; auto remembers it.
 * One that writes garbage: dlopen fails, the VM is used. */
START_TEST(test_failing_compiler)
{
    hs_prog *p = tiny();
    char dir[512], note[512], cc[700];
    fresh(dir, sizeof dir);
    char *old_cc = getenv("CC") ? strdup(getenv("CC")) : NULL;
    script(dir, "badcc", "echo 'kernels.c:1:1: error: planted failure' >&2; exit 1", cc,
           sizeof cc);
    setenv("CC", cc, 1);
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_FAILED);
    ck_assert_msg(strstr(note, "build failed") && strstr(note, "planted failure"), "%s", note);
    o.policy = HS_NATIVE_AUTO;
    o.work = 1e12;
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_FAILED);
    ck_assert_msg(strstr(note, "earlier build") && strstr(note, "planted failure"), "%s", note);

    /* garbage with exit status 0: loaded in a child first, refused there,
     * never sealed as an entry; remembered as the code's failure */
    script(dir, "junkcc",
           "while [ $# -gt 0 ]; do [ \"$1\" = -o ] && echo junk > \"$2\"; shift; done; exit 0",
           cc, sizeof cc);
    setenv("CC", cc, 1);
    o.policy = HS_NATIVE_ALWAYS;
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_FAILED);
    ck_assert_msg(strstr(note, "do not load") && strstr(note, "dlopen"), "%s", note);
    ck_assert_int_eq(count_entries(dir, NULL, 0), 0);
    o.policy = HS_NATIVE_AUTO;
    o.work = 1e12;
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    ck_assert_int_eq(st, HS_NATIVE_FAILED);
    ck_assert_msg(strstr(note, "earlier build") && strstr(note, "do not load"), "%s", note);

    if (old_cc)
        setenv("CC", old_cc, 1);
    else
        unsetenv("CC");
    free(old_cc);
    tiny_free(p);
}
END_TEST

/* auto on a long run: the VM now, a detached build, the entry next time.
 * The caller does not wait for the compiler. */
START_TEST(test_auto_background)
{
    hs_prog *p = tiny();
    char dir[512], note[512];
    fresh(dir, sizeof dir);
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_AUTO, dir);
    o.work = 1e12;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    ck_assert_int_eq(st, HS_NATIVE_PENDING);
    ck_assert_msg(strstr(note, "background"), "%s", note);
    double waited = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    ck_assert_msg(waited < 0.5, "auto waited %.3f s", waited);
    hs_native *h = NULL;
    o.work = 0;
    for (int i = 0; i < 600 && !h; i++) {         /* up to 30 s */
        h = load1(p, &o, &st, note, sizeof note);
        if (!h) {
            ck_assert_int_eq(st, HS_NATIVE_SHORT);
            nanosleep(&(struct timespec){0, 50000000}, NULL);
        }
    }
    ck_assert_msg(h != NULL, "the background build did not finish");
    ck_assert_int_eq(st, HS_NATIVE_CACHED);
    check_tiny(h, p);
    hs_native_free(h);
    tiny_free(p);
}
END_TEST

/* Work files of a build that died are swept by the next build. */
START_TEST(test_stale_work_files)
{
    hs_prog *p = tiny();
    char dir[512], note[512], stale[700];
    fresh(dir, sizeof dir);
    snprintf(stale, sizeof stale, "%s/native", dir);
    ck_assert_int_eq(mkdir(stale, 0700), 0);
    snprintf(stale, sizeof stale, "%s/native/k0123.999.0.tmp.c", dir);
    FILE *f = fopen(stale, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    struct timespec old[2] = {{1000000000, 0}, {1000000000, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, stale, old, 0), 0);
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
    hs_native *h = load1(p, &o, &st, note, sizeof note);
    ck_assert_msg(h != NULL, "%s", note);
    ck_assert_int_ne(access(stale, F_OK), 0);
    hs_native_free(h);
    tiny_free(p);
}
END_TEST

/* ---- hostile caches ---- */

/* The key of p's entry: built once in a cache of its own. */
static void key_of(const hs_prog *p, char key[33])
{
    char dir[512], note[512], path[1024];
    fresh(dir, sizeof dir);
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
    hs_native *h = load1(p, &o, &st, note, sizeof note);
    ck_assert_msg(h != NULL, "%s", note);
    hs_native_free(h);
    ck_assert_int_eq(count_entries(dir, path, sizeof path), 1);
    snprintf(key, 33, "%s", strrchr(path, '/') + 2);
}

/* An attacker's kernels: another program (x + 1000) and a constructor that
 * leaves a mark where it ran. */
static char *evil_source(const char *marker, size_t *len)
{
    hs_dag *d = hs_dag_new();
    const hs_node *x = hs_sym(d, hs_dag_symbol(d, "x")), *y = hs_sym(d, hs_dag_symbol(d, "y"));
    const hs_node *e[2] = {hs_add(d, x, hs_num(d, 1000)), y};
    hs_error err;
    hs_error_init(&err);
    hs_prog *ep = hs_prog_compile(d, e, 2, &err);
    ck_assert_ptr_nonnull(ep);
    size_t n;
    char *k = hs_native_source((const hs_prog *const *)&ep, 1, 0, &n);
    ck_assert_ptr_nonnull(k);
    char head[1024];
    int w = snprintf(head, sizeof head,
                     "#include <fcntl.h>\n#include <unistd.h>\n"
                     "__attribute__((constructor)) static void pwn(void)\n"
                     "{ close(open(\"%s\", O_WRONLY | O_CREAT, 0666)); }\n", marker);
    char *s = malloc((size_t)w + n + 1);
    ck_assert_ptr_nonnull(s);
    memcpy(s, head, (size_t)w);
    memcpy(s + w, k, n + 1);
    *len = (size_t)w + n;
    free(k);
    hs_prog_free(ep);
    hs_dag_free(d);
    return s;
}

static int swap_to, swap_from;          /* the victim's pipes to and from the attacker */

/* In the victim: tell the attacker each step, wait until it has acted. */
static void victim_hook(const char *step, const char *name)
{
    char line[512], ack;
    int w = snprintf(line, sizeof line, "%s %s\n", step, strrchr(name, '/') ? "-" : name);
    if (write(swap_to, line, (size_t)w) != w || read(swap_from, &ack, 1) != 1)
        _exit(9);
}

static void become(uid_t id)
{
    if (id == 0)
        return;
    if (setgroups(0, NULL) || setresgid(id, id, id) || setresuid(id, id, id))
        _exit(8);
}

static void put_file(const char *path, const char *s, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd >= 0) {
        ssize_t w = write(fd, s, n);
        (void)w;
        fchmod(fd, 0666);
        close(fd);
    }
}

/* The attacker: owns the directory above the cache; prepares a directory
 * with its own kernels under the victim's key, and at step `target` moves
 * the victim's native/ aside and its own in, planting its source or object
 * under the work file's name. */
static void attacker(const char *cache, const char *key, const char *target, int rd, int wr,
                     const char *src, size_t len)
{
    char evil[700], native[700], old[700], path[1500];
    snprintf(evil, sizeof evil, "%s/evil", cache);
    snprintf(native, sizeof native, "%s/native", cache);
    snprintf(old, sizeof old, "%s/native.old", cache);
    if (mkdir(evil, 0777) || chmod(evil, 0777))
        _exit(3);
    int efd = open(evil, O_RDONLY | O_DIRECTORY);
    hs_nat_cc cc;
    char why[512];
    if (efd < 0 || hs_nat_cc_find(&cc, why, sizeof why)
        || hs_nat_build(&cc, "-O1", src, len, efd, key, 0, why, sizeof why))
        _exit(4);
    /* the build tried the object in a child: that mark is the attacker's own */
    snprintf(path, sizeof path, "%s/../marks/pwned", cache);
    unlink(path);
    snprintf(path, sizeof path, "%s/k%s.so", evil, key);
    struct stat sb;
    if (stat(path, &sb))
        _exit(5);
    char *obj = malloc((size_t)sb.st_size);
    int ofd = open(path, O_RDONLY);
    if (!obj || ofd < 0 || read(ofd, obj, (size_t)sb.st_size) != sb.st_size)
        _exit(6);
    close(ofd);
    if (write(wr, "R", 1) != 1)
        _exit(7);
    FILE *f = fdopen(rd, "r");
    char line[512];
    int done = 0;
    while (f && fgets(line, sizeof line, f)) {
        char step[64], name[256];
        if (sscanf(line, "%63s %255s", step, name) != 2)
            _exit(10);
        if (!done && strcmp(step, target) == 0) {
            done = 1;
            if (rename(native, old) || rename(evil, native))
                _exit(11);
            size_t n = strlen(name);
            snprintf(path, sizeof path, "%s/%s", native, name);
            if (n > 2 && strcmp(name + n - 2, ".c") == 0)
                put_file(path, src, len);
            else if (n > 3 && strcmp(name + n - 3, ".so") == 0)
                put_file(path, obj, (size_t)sb.st_size);
        }
        if (write(wr, "k", 1) != 1)
            _exit(12);
    }
    _exit(done ? 0 : 13);
}

/* An attacker who can rename the cache directory (it owns the directory
 * above) swaps in its own at each step of a build and a load: the victim's
 * process never runs the attacker's code and loads its own kernels.  Two
 * unprivileged users when the suite runs as root, else one user playing
 * both parts (the fd-relative steps are the same). */
START_TEST(test_swap_attack)
{
    static const char *const steps[] = {"dir-held", "source-written", "compiled", "sealed",
                                        "renamed", "entry-verified", "loading"};
    hs_prog *p = tiny();
    char key[33];
    key_of(p, key);
    uid_t victim = 0, thief = 0;
    if (geteuid() == 0) {
        victim = 61001;
        thief = 61002;
    } else {
        fprintf(stderr, "check_native: not root: the swap attack runs as one user "
                        "(two users need root to switch)\n");
    }
    for (size_t si = 0; si < sizeof steps / sizeof steps[0]; si++) {
        for (int cached = 0; cached < 2; cached++) {
            char base[] = "/tmp/check_native_swap.XXXXXX";
            ck_assert_ptr_nonnull(mkdtemp(base));
            ck_assert_int_eq(chmod(base, 0755), 0);
            char cache[600], marker[700], cmd[800];
            snprintf(cache, sizeof cache, "%s/cache", base);
            snprintf(marker, sizeof marker, "%s/marks/pwned", base);
            ck_assert_int_eq(mkdir(cache, 0777), 0);
            ck_assert_int_eq(chmod(cache, 0777), 0);
            snprintf(cmd, sizeof cmd, "%s/marks", base);
            ck_assert_int_eq(mkdir(cmd, 0777), 0);
            ck_assert_int_eq(chmod(cmd, 0777), 0);
            if (thief)
                ck_assert_int_eq(chown(cache, thief, thief), 0);
            size_t len;
            char *src = evil_source(marker, &len);
            if (cached) {           /* the victim's own entry is there already */
                pid_t v = fork();
                ck_assert_int_ge(v, 0);
                if (v == 0) {
                    become(victim);
                    hs_native_opts o = opts(HS_NATIVE_ALWAYS, cache);
                    hs_native_status st;
                    char note[512];
                    _exit(load1(p, &o, &st, note, sizeof note) ? 0 : 1);
                }
                int status;
                ck_assert_int_eq(waitpid(v, &status, 0), v);
                ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
            }
            int to_a[2], from_a[2];
            ck_assert_int_eq(pipe(to_a), 0);
            ck_assert_int_eq(pipe(from_a), 0);
            pid_t a = fork();
            ck_assert_int_ge(a, 0);
            if (a == 0) {
                close(to_a[1]);
                close(from_a[0]);
                become(thief);
                attacker(cache, key, steps[si], to_a[0], from_a[1], src, len);
            }
            close(to_a[0]);
            close(from_a[1]);
            char ready;
            ck_assert_int_eq(read(from_a[0], &ready, 1), 1);
            pid_t v = fork();
            ck_assert_int_ge(v, 0);
            if (v == 0) {
                become(victim);
                setenv("TMPDIR", "/tmp", 1);
                swap_to = to_a[1];
                swap_from = from_a[0];
                hs_nat_test_hook = victim_hook;
                hs_native_opts o = opts(HS_NATIVE_ALWAYS, cache);
                hs_native_status st;
                char note[512];
                hs_native *h = load1(p, &o, &st, note, sizeof note);
                const double in[3] = {0.7, -1.25, 3.5};
                int bad = !h ? 1 : compare(p, hs_native_fn(h, 0), in, "after a swap") ? 2 : 0;
                if (bad == 1)
                    fprintf(stderr, "%s\n", note);
                _exit(bad);
            }
            close(to_a[1]);
            close(from_a[0]);
            int vs, as;
            ck_assert_int_eq(waitpid(v, &vs, 0), v);
            ck_assert_int_eq(waitpid(a, &as, 0), a);
            int marked = access(marker, F_OK) == 0;
            snprintf(cmd, sizeof cmd, "rm -rf '%s'", base);
            ck_assert_int_eq(system(cmd), 0);
            free(src);
            ck_assert_msg(!marked, "step %s (%s): the attacker's code ran in the victim",
                          steps[si], cached ? "cached" : "built");
            ck_assert_msg(WIFEXITED(vs) && WEXITSTATUS(vs) == 0,
                          "step %s (%s): the victim did not load its own kernels (status %d)",
                          steps[si], cached ? "cached" : "built", vs);
            /* a step the cached path never reaches: the attacker waited in vain */
            ck_assert(WIFEXITED(as));
            ck_assert_msg(WEXITSTATUS(as) == 0 || WEXITSTATUS(as) == 13,
                          "attacker status %d", WEXITSTATUS(as));
        }
    }
    tiny_free(p);
}
END_TEST

/* A FIFO (or a directory, or a link) in place of the entry, the lock or
 * the failure record: no run waits on it, none is loaded; always builds
 * past it. */
START_TEST(test_fifo_entries)
{
    hs_prog *p = tiny();
    char key[33];
    key_of(p, key);
    static const char *const ext[] = {".so", ".lock", ".fail"};
    for (int kind = 0; kind < 3; kind++) {
        char dir[512], sub[600], path[700];
        fresh(dir, sizeof dir);
        snprintf(sub, sizeof sub, "%s/native", dir);
        ck_assert_int_eq(mkdir(sub, 0700), 0);
        for (size_t i = 0; i < 3; i++) {
            snprintf(path, sizeof path, "%s/k%s%s", sub, key, ext[i]);
            if (kind == 0)
                ck_assert_int_eq(mkfifo(path, 0600), 0);
            else if (kind == 1)
                ck_assert_int_eq(mkdir(path, 0700), 0);
            else
                ck_assert_int_eq(symlink("/dev/zero", path), 0);
        }
        pid_t c = fork();
        ck_assert_int_ge(c, 0);
        if (c == 0) {
            alarm(60);
            hs_native_status st;
            char note[512];
            hs_native_opts o = opts(HS_NATIVE_AUTO, dir);
            o.work = 0;
            if (load1(p, &o, &st, note, sizeof note) || st != HS_NATIVE_SHORT)
                _exit(2);
            o.work = 1e12;
            if (load1(p, &o, &st, note, sizeof note) || st == HS_NATIVE_CACHED)
                _exit(3);
            /* always: a FIFO or link at the entry's name is replaced by the
             * build; a directory there stays, and the kernels are still built
             * (in a temporary directory) or the VM is used */
            o = opts(HS_NATIVE_ALWAYS, dir);
            hs_native *h = load1(p, &o, &st, note, sizeof note);
            if (kind != 1 && !h)
                _exit(4);
            if (h)
                check_tiny(h, p);
            hs_native_free(h);
            _exit(0);
        }
        int status;
        ck_assert_int_eq(waitpid(c, &status, 0), c);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                      "kind %d: status %d (SIGALRM: blocked on a FIFO)", kind, status);
    }
    tiny_free(p);
}
END_TEST

/* $CC with instrumentation: the words dropped, the kernels load; a
 * compiler that instruments by itself: its object is tried in a child,
 * refused there, never loaded here. */
START_TEST(test_runtime_flags)
{
    ck_assert(hs_nat_runtime_flag("-fsanitize=address"));
    ck_assert(hs_nat_runtime_flag("-fsanitize=undefined"));
    ck_assert(hs_nat_runtime_flag("-pg"));
    ck_assert(hs_nat_runtime_flag("-p"));
    ck_assert(hs_nat_runtime_flag("-fprofile-generate"));
    ck_assert(hs_nat_runtime_flag("--coverage"));
    ck_assert(hs_nat_runtime_flag("-shared-libasan"));
    ck_assert(hs_nat_runtime_flag("-fopenmp"));
    ck_assert(!hs_nat_runtime_flag("-O2"));
    ck_assert(!hs_nat_runtime_flag("-pipe"));
    ck_assert(!hs_nat_runtime_flag("-march=native"));
    ck_assert(!hs_nat_runtime_flag("-fno-sanitize=all"));
    hs_prog *p = tiny();
    char dir[512], note[512], cc[700];
    fresh(dir, sizeof dir);
    char *old_cc = getenv("CC") ? strdup(getenv("CC")) : NULL;
    const char *base = old_cc && *old_cc ? old_cc : "cc";
    char words[600];
    snprintf(words, sizeof words, "%s -fsanitize=address -pg -fprofile-arcs", base);
    setenv("CC", words, 1);
    hs_native_status st;
    hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
    hs_native *h = load1(p, &o, &st, note, sizeof note);
    ck_assert_msg(h != NULL, "%s", note);
    check_tiny(h, p);
    hs_native_free(h);
    hs_nat_cc c;
    char why[256];
    ck_assert_int_eq(hs_nat_cc_find(&c, why, sizeof why), 0);
    ck_assert_uint_eq(c.dropped, 3);
    for (size_t i = 0; i < c.nwords; i++)
        ck_assert(!hs_nat_runtime_flag(c.argv[i]));
    hs_nat_cc_free(&c);

    /* the instrumentation hidden in a wrapper: loaded in a child first */
    char body[800];
    snprintf(body, sizeof body, "exec %s -fsanitize=address \"$@\"", base);
    script(dir, "asancc", body, cc, sizeof cc);
    setenv("CC", cc, 1);
    h = load1(p, &o, &st, note, sizeof note);
    if (h) {                  /* a toolchain whose ASan objects load anywhere */
        check_tiny(h, p);
        hs_native_free(h);
    } else {
        ck_assert_msg(strstr(note, "do not load"), "%s", note);
    }
    if (old_cc)
        setenv("CC", old_cc, 1);
    else
        unsetenv("CC");
    free(old_cc);
    tiny_free(p);
}
END_TEST

/* A build stopped by a signal, or starved of disk, is not the code's
 * fault: not remembered, auto tries again; an empty record from an older
 * run is no record ("failed ()" never appears). */
START_TEST(test_transient_failures)
{
    hs_prog *p = tiny();
    static const char *const bodies[] = {
        "kill -TERM $$",
        "echo 'kernels.c:9:1: fatal error: error writing to /tmp/ccX.s: No space left on device' >&2; exit 1",
        "echo 'gcc: fatal error: Killed signal terminated program cc1' >&2; exit 1",
        "exit 1"};
    char *old_cc = getenv("CC") ? strdup(getenv("CC")) : NULL;
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        char dir[512], note[512], cc[700], path[800];
        fresh(dir, sizeof dir);
        script(dir, "flakycc", bodies[i], cc, sizeof cc);
        setenv("CC", cc, 1);
        hs_native_status st;
        hs_native_opts o = opts(HS_NATIVE_ALWAYS, dir);
        ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
        ck_assert_int_eq(st, HS_NATIVE_FAILED);
        ck_assert_msg(!strstr(note, "()"), "%s", note);
        DIR *d = opendir(strcat(strcpy(path, dir), "/native"));
        ck_assert_ptr_nonnull(d);
        for (struct dirent *e; (e = readdir(d));)
            ck_assert_msg(!strstr(e->d_name, ".fail"), "%s: recorded %s", bodies[i], e->d_name);
        closedir(d);
        o.policy = HS_NATIVE_AUTO;
        o.work = 1e12;
        ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
        ck_assert_msg(!strstr(note, "earlier build"), "%s", note);
        /* an empty record: ignored and removed */
        char key[33];
        if (i == 0) {
            if (old_cc)
                setenv("CC", old_cc, 1);
            else
                unsetenv("CC");
            key_of(p, key);
            char fail[900];
            snprintf(fail, sizeof fail, "%s/native/k%s.fail", dir, key);
            FILE *f = fopen(fail, "w");
            ck_assert_ptr_nonnull(f);
            fclose(f);
            o.work = 1e12;
            ck_assert_ptr_null(load1(p, &o, &st, note, sizeof note));
            ck_assert_msg(!strstr(note, "earlier build") && !strstr(note, "()"), "%s", note);
            ck_assert_int_ne(access(fail, F_OK), 0);
        }
    }
    if (old_cc)
        setenv("CC", old_cc, 1);
    else
        unsetenv("CC");
    free(old_cc);
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
    tcase_add_test(tc, test_cache_hit_and_policies);
    tcase_add_test(tc, test_cache_corrupt);
    tcase_add_test(tc, test_concurrent_builders);
    tcase_add_test(tc, test_unusable_cache_dir);
    tcase_add_test(tc, test_no_compiler);
    tcase_add_test(tc, test_failing_compiler);
    tcase_add_test(tc, test_auto_background);
    tcase_add_test(tc, test_stale_work_files);
    tcase_add_test(tc, test_swap_attack);
    tcase_add_test(tc, test_fifo_entries);
    tcase_add_test(tc, test_runtime_flags);
    tcase_add_test(tc, test_transient_failures);
    suite_add_tcase(s, tc);
    return s;
}

HS_CHECK_MAIN(suite)
