/* VM against native kernels (src/native) on a model's programs.
 *
 *   native_bench [-c CHUNK] [-O OPT] [-r REPS] [-B] MODEL.yaml
 *
 * 1. Build: in a fresh cache directory (removed afterwards), what a short
 *    `auto` run pays when nothing is cached (emit, hash, look), the first
 *    hs_native_load with policy `always` (emit + compile + load), then a
 *    second one (cached: emit, hash, check, dlopen).  Wall seconds.
 * 2. Exactness: prog_dyn, prog_aux and prog_pos on 64 varied states, the
 *    VM's outputs against the kernels', bit for bit (NaN = NaN); exits 1
 *    on any difference.
 * 3. Speed (unless -B): prog_dyn alone, VM and native interleaved (A B A B
 *    ...), REPS rounds (default 31) of passes over the states (about 20 ms
 *    of VM time each, process CPU time); per round ns per evaluation of
 *    each and their ratio; prints the medians and the spread (min, max)
 *    of the ratio.
 * -c and -O change the chunk size and the optimization flag (build-time
 * study). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "model/model.h"
#include "native/native.h"

enum { NSTATE = 64, NPROG = 3 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The speed rounds count this process's CPU time: other work on the
 * machine then costs caches, not whole time slices. */
static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static uint64_t rng = 0x2545f4914f6cdd1du;
static double urand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1p-53;
}

/* in[] of state s: the initial state, perturbed; parameters where the
 * program reads them as inputs. */
static void make_state(const hs_model *m, double *in, size_t nin)
{
    for (size_t i = 0; i < nin; i++)
        in[i] = urand() - 0.5;
    if ((size_t)m->sym_t < nin)
        in[m->sym_t] = m->t0 + urand();
    for (size_t i = 0; i < m->n; i++) {
        if ((size_t)m->sym_q[i] < nin)
            in[m->sym_q[i]] = m->q0[i] + 0.1 * (urand() - 0.5);
        if ((size_t)m->sym_v[i] < nin)
            in[m->sym_v[i]] = m->v0[i] + urand() - 0.5;
    }
    for (size_t j = 0; j < m->npar; j++)
        if ((size_t)m->sym_p[j] < nin)
            in[m->sym_p[j]] = m->pval[j];
}

static int same(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static hs_native *load(const hs_prog *const *progs, const hs_native_opts *o,
                       hs_native_status want, double *secs)
{
    char note[512];
    hs_native_status st;
    double t0 = now();
    hs_native *h = hs_native_load(progs, NPROG, o, &st, note, sizeof note);
    *secs = now() - t0;
    if (!h || st != want) {
        fprintf(stderr, "native_bench: status %d, want %d: %s\n", (int)st, (int)want, note);
        exit(1);
    }
    return h;
}

static void time_dyn(const hs_prog *p, hs_kernel_fn f, double (*in)[1], size_t nin, int reps)
{
    size_t nr = hs_prog_nregs(p), no = hs_prog_nout(p);
    double *regs = calloc(nr + 1, sizeof *regs), *out = calloc(no + 1, sizeof *out);
    const double *states = in[0];
    /* passes per round: about 20 ms of VM time */
    long inner = 1;
    for (double t = 0; t < 0.02 && inner < (1L << 24); inner *= 2) {
        double t0 = cpu();
        for (long k = 0; k < inner; k++)
            for (int s = 0; s < NSTATE; s++)
                hs_prog_eval(p, states + s * nin, regs, out);
        t = cpu() - t0;
    }
    double *tv = malloc((size_t)reps * sizeof *tv), *tn = malloc((size_t)reps * sizeof *tn);
    double *ratio = malloc((size_t)reps * sizeof *ratio), sink = 0;
    for (int r = 0; r < reps; r++) {
        for (int side = 0; side < 2; side++) {
            double t0 = cpu();
            for (long k = 0; k < inner; k++)
                for (int s = 0; s < NSTATE; s++) {
                    if (side == 0)
                        hs_prog_eval(p, states + s * nin, regs, out);
                    else
                        f(states + s * nin, regs, out);
                }
            double ns = 1e9 * (cpu() - t0) / (double)(inner * NSTATE);
            (side ? tn : tv)[r] = ns;
            sink += out[0];
        }
        ratio[r] = tv[r] / tn[r];
    }
    double rmin = ratio[0], rmax = ratio[0];
    for (int r = 1; r < reps; r++) {
        rmin = fmin(rmin, ratio[r]);
        rmax = fmax(rmax, ratio[r]);
    }
    double mv = median(tv, reps), mn = median(tn, reps), mr = median(ratio, reps);
    printf("prog_dyn: VM %.1f ns, native %.1f ns per evaluation; VM/native %.2f "
           "(median of %d interleaved rounds; range %.2f-%.2f)%s\n",
           mv, mn, mr, reps, rmin, rmax, sink == 12345.678 ? " " : "");
    free(tv);
    free(tn);
    free(ratio);
    free(regs);
    free(out);
}

int main(int argc, char **argv)
{
    hs_native_opts o;
    hs_native_opts_init(&o);
    o.policy = HS_NATIVE_ALWAYS;
    int reps = 31, build_only = 0, opt;
    while ((opt = getopt(argc, argv, "c:O:r:B")) != -1) {
        if (opt == 'c')
            o.chunk = (size_t)atol(optarg);
        else if (opt == 'O')
            o.opt = optarg;
        else if (opt == 'r')
            reps = atoi(optarg);
        else if (opt == 'B')
            build_only = 1;
        else
            return 2;
    }
    if (optind + 1 != argc || reps < 1) {
        fprintf(stderr, "usage: native_bench [-c CHUNK] [-O OPT] [-r REPS] [-B] MODEL.yaml\n");
        return 2;
    }
    hs_error err;
    hs_error_init(&err);
    hs_overrides ov;
    hs_overrides_init(&ov);
    hs_model *m = hs_model_load(argv[optind], &ov, &err);
    if (!m) {
        fprintf(stderr, "native_bench: %s\n", err.msg);
        return 2;
    }
    const hs_prog *progs[NPROG] = {m->prog_dyn, m->prog_aux, m->prog_pos};
    char dir[] = "/tmp/native_bench.XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    o.cache_dir = dir;
    size_t srclen = 0;
    free(hs_native_source(progs, NPROG, o.chunk, &srclen));
    double t_build, t_cached, t_miss;
    hs_native_opts ao = o;                  /* what a short auto run pays: a lookup */
    ao.policy = HS_NATIVE_AUTO;
    ao.work = 0;
    hs_native *h = hs_native_load(progs, NPROG, &ao, NULL, NULL, 0);
    double t0 = now();
    for (int i = 0; i < 10; i++)
        h = hs_native_load(progs, NPROG, &ao, NULL, NULL, 0);
    t_miss = (now() - t0) / 10;
    h = load(progs, &o, HS_NATIVE_BUILT, &t_build);
    hs_native_free(h);
    h = load(progs, &o, HS_NATIVE_CACHED, &t_cached);
    struct stat st;
    long sosize = stat(hs_native_path(h), &st) == 0 ? (long)st.st_size : -1;
    printf("%s: %zu + %zu + %zu instructions; C source %zu bytes, .so %ld bytes; "
           "chunk %zu, %s\n", argv[optind], hs_prog_ninstr(progs[0]), hs_prog_ninstr(progs[1]),
           hs_prog_ninstr(progs[2]), srclen, sosize, o.chunk, o.opt);
    printf("build %.3f s, cached load %.4f s, auto lookup (nothing cached) %.4f s\n", t_build,
           t_cached, t_miss);

    size_t nin = m->nin ? m->nin : 1, bad = 0, compared = 0;
    double (*in)[1] = malloc(NSTATE * nin * sizeof(double));
    for (int s = 0; s < NSTATE; s++)
        make_state(m, in[0] + s * nin, nin);
    for (int pi = 0; pi < NPROG; pi++) {
        const hs_prog *p = progs[pi];
        size_t nr = hs_prog_nregs(p), no = hs_prog_nout(p);
        double *r1 = calloc(nr + 1, sizeof *r1), *r2 = calloc(nr + 1, sizeof *r2);
        double *o1 = calloc(no + 1, sizeof *o1), *o2 = calloc(no + 1, sizeof *o2);
        for (int s = 0; s < NSTATE; s++) {
            hs_prog_eval(p, in[0] + s * nin, r1, o1);
            hs_native_fn(h, (size_t)pi)(in[0] + s * nin, r2, o2);
            for (size_t i = 0; i < no; i++, compared++)
                if (!same(o1[i], o2[i]) && bad++ < 5)
                    fprintf(stderr, "program %d state %d out[%zu]: VM %a native %a\n", pi, s,
                            i, o1[i], o2[i]);
        }
        free(r1);
        free(r2);
        free(o1);
        free(o2);
    }
    printf("exactness: %zu of %zu outputs differ\n", bad, compared);
    if (!build_only && !bad)
        time_dyn(progs[0], hs_native_fn(h, 0), in, nin, reps);
    hs_native_free(h);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "native_bench: could not remove %s\n", dir);
    free(in);
    hs_model_free(m);
    return bad ? 1 : 0;
}
