/* VM versus hand-written C on the right-hand side of the planar double
 * pendulum in Cartesian coordinates (doc/architecture.md).
 *
 *   q = (x1, y1, x2, y2), unit masses (M = I), g = 9.81, Q = (0, -g, 0, -g)
 *   G1 = x1^2 + y1^2 - 1,  G2 = (x2 - x1)^2 + (y2 - y1)^2 - 1
 *   kernels: G_q (2x4) by hs_diff, gamma = D(D G) (2) by hs_total_diff twice,
 *            compiled into ONE program (10 outputs)
 *   C = G_q M^-1 G_q^T,  Lambda = -C^-1 (G_q M^-1 Q + gamma),
 *   a = M^-1 (Q + G_q^T Lambda)      in plain C, shared by both sides.
 *
 * Timed, interleaved, over a set of varied states: the kernel alone (VM with
 * computed goto, VM with switch, hand-written C) and the whole RHS; the
 * median over repetitions is printed in ns per evaluation.  The hand kernel
 * is `noinline`, as the VM is a call into the library: neither side is
 * vectorised across states.  Usage: vm_bench [-v] (listing of the program). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "expr/expr.h"

/* the switch-dispatch VM: src/expr/vm.c compiled again, renamed (Makefile) */
void hs_prog_eval_switch(const hs_prog *p, const double *in, double *regs, double *out);

enum { NQ = 4, NK = 2, NOUT = NK * NQ + NK, NSTATE = 512, NREP = 41, INNER = 40 };
static const double g = 9.81;

/* G_q and gamma written by hand (the yardstick). */
__attribute__((noinline))
static void hand_kernel(const double *in, double *out)
{
    const double x1 = in[0], y1 = in[1], x2 = in[2], y2 = in[3];
    const double vx1 = in[4], vy1 = in[5], vx2 = in[6], vy2 = in[7];
    const double dx = x2 - x1, dy = y2 - y1, dvx = vx2 - vx1, dvy = vy2 - vy1;
    out[0] = 2 * x1, out[1] = 2 * y1, out[2] = 0, out[3] = 0;
    out[4] = -2 * dx, out[5] = -2 * dy, out[6] = 2 * dx, out[7] = 2 * dy;
    out[8] = 2 * (vx1 * vx1 + vy1 * vy1);
    out[9] = 2 * (dvx * dvx + dvy * dvy);
}

/* The rest of the RHS from G_q (row-major 2x4) and gamma, with M = I. */
static inline void rhs_from(const double *G_q, const double *gamma, double *a)
{
    const double Q[NQ] = {0, -g, 0, -g};
    double C[NK][NK], r[NK];
    for (int i = 0; i < NK; i++) {
        r[i] = gamma[i];                     /* G_q M^-1 Q + gamma */
        for (int k = 0; k < NQ; k++)
            r[i] += G_q[i * NQ + k] * Q[k];
        for (int j = 0; j < NK; j++) {       /* C = G_q M^-1 G_q^T */
            C[i][j] = 0;
            for (int k = 0; k < NQ; k++)
                C[i][j] += G_q[i * NQ + k] * G_q[j * NQ + k];
        }
    }
    double det = C[0][0] * C[1][1] - C[0][1] * C[1][0];
    double L0 = -(C[1][1] * r[0] - C[0][1] * r[1]) / det;   /* Lambda = -C^-1 r */
    double L1 = -(C[0][0] * r[1] - C[1][0] * r[0]) / det;
    for (int k = 0; k < NQ; k++)                             /* a = Q + G_q^T Lambda */
        a[k] = Q[k] + G_q[k] * L0 + G_q[NQ + k] * L1;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
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

static hs_prog *build(hs_dag *d, int verbose)
{
    static const char *const names[2 * NQ] = {"x1", "y1", "x2", "y2",
                                              "vx1", "vy1", "vx2", "vy2"};
    int qs[NQ], vs[NQ];
    const hs_node *s[2 * NQ];
    for (int i = 0; i < 2 * NQ; i++)
        s[i] = hs_sym(d, hs_dag_symbol(d, names[i]));
    for (int i = 0; i < NQ; i++)
        qs[i] = i, vs[i] = NQ + i;
    const hs_node *one = hs_num(d, 1), *two = hs_num(d, 2);
    const hs_node *G[NK] = {
        hs_sub(d, hs_add(d, hs_pow(d, s[0], two), hs_pow(d, s[1], two)), one),
        hs_sub(d, hs_add(d, hs_pow(d, hs_sub(d, s[2], s[0]), two),
                         hs_pow(d, hs_sub(d, s[3], s[1]), two)), one)};
    const hs_node *roots[NOUT];
    for (int i = 0; i < NK; i++) {
        for (int k = 0; k < NQ; k++)
            roots[i * NQ + k] = hs_diff(d, G[i], qs[k]);
        const hs_node *Gdot = hs_total_diff(d, G[i], -1, NQ, qs, vs);
        roots[NK * NQ + i] = hs_total_diff(d, Gdot, -1, NQ, qs, vs);
    }
    if (hs_dag_failed(d)) {
        fprintf(stderr, "vm_bench: %s\n", hs_dag_error(d)->msg);
        exit(1);
    }
    hs_error err;
    hs_error_init(&err);
    hs_prog *p = hs_prog_compile(d, roots, NOUT, &err);
    if (!p) {
        fprintf(stderr, "vm_bench: %s\n", err.msg);
        exit(1);
    }
    if (verbose) {
        for (int i = 0; i < NOUT; i++) {
            printf("; out[%d] = ", i);
            hs_fprint(stdout, d, roots[i]);
            putchar('\n');
        }
        hs_prog_disasm(p, d, stdout);
    }
    return p;
}

int main(int argc, char **argv)
{
    int verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    hs_dag *d = hs_dag_new();
    hs_prog *p = build(d, verbose);
    double *regs = calloc(hs_prog_nregs(p), sizeof *regs);
    static double in[NSTATE][2 * NQ], out[NSTATE][NOUT], a[NSTATE][NQ];
    static double out_h[NSTATE][NOUT], a_h[NSTATE][NQ];

    /* varied states on the constraint manifold, random velocities */
    srand(12345);
    for (int s = 0; s < NSTATE; s++) {
        double t1 = 6.283 * rand() / RAND_MAX, t2 = 6.283 * rand() / RAND_MAX;
        in[s][0] = sin(t1), in[s][1] = -cos(t1);
        in[s][2] = in[s][0] + sin(t2), in[s][3] = in[s][1] - cos(t2);
        for (int k = 0; k < NQ; k++)
            in[s][NQ + k] = 4.0 * rand() / RAND_MAX - 2.0;
    }

    /* both sides agree */
    double maxdiff = 0;
    for (int s = 0; s < NSTATE; s++) {
        hs_prog_eval(p, in[s], regs, out[s]);
        hand_kernel(in[s], out_h[s]);
        rhs_from(out[s], out[s] + NK * NQ, a[s]);
        rhs_from(out_h[s], out_h[s] + NK * NQ, a_h[s]);
        for (int k = 0; k < NQ; k++)
            maxdiff = fmax(maxdiff, fabs(a[s][k] - a_h[s][k]) / fmax(1.0, fabs(a_h[s][k])));
    }
    printf("double pendulum: %zu instructions, %zu registers, %zu outputs, dispatch %s\n",
           hs_prog_ninstr(p), hs_prog_nregs(p), hs_prog_nout(p), hs_prog_dispatch());
    printf("max relative difference of accelerations VM vs hand: %.3g %s\n", maxdiff,
           maxdiff <= 1e-12 ? "(ok)" : "(FAIL)");
    if (maxdiff > 1e-12)
        return 1;

    /* interleaved repetitions; each sample = INNER passes over all states */
    enum { KVM, KSW, KHAND, RVM, RSW, RHAND, NT };
    static const char *const label[NT] = {"kernel VM (goto)", "kernel VM (switch)",
                                          "kernel hand C", "RHS VM (goto)",
                                          "RHS VM (switch)", "RHS hand C"};
    double t[NT][NREP], sink = 0;
    for (int rep = 0; rep < NREP; rep++) {
        for (int m = 0; m < NT; m++) {
            double t0 = now_ns();
            for (int it = 0; it < INNER; it++)
                for (int s = 0; s < NSTATE; s++) {
                    switch (m) {
                    case KVM: hs_prog_eval(p, in[s], regs, out[s]); break;
                    case KSW: hs_prog_eval_switch(p, in[s], regs, out[s]); break;
                    case KHAND: hand_kernel(in[s], out_h[s]); break;
                    case RVM:
                        hs_prog_eval(p, in[s], regs, out[s]);
                        rhs_from(out[s], out[s] + NK * NQ, a[s]);
                        break;
                    case RSW:
                        hs_prog_eval_switch(p, in[s], regs, out[s]);
                        rhs_from(out[s], out[s] + NK * NQ, a[s]);
                        break;
                    default:
                        hand_kernel(in[s], out_h[s]);
                        rhs_from(out_h[s], out_h[s] + NK * NQ, a_h[s]);
                    }
                }
            t[m][rep] = (now_ns() - t0) / (INNER * NSTATE);
            sink += out[rep % NSTATE][0] + out_h[rep % NSTATE][9] + a[0][1] + a_h[0][3];
        }
    }
    double med[NT];
    for (int m = 0; m < NT; m++) {
        med[m] = median(t[m], NREP);
        printf("%-20s %7.1f ns/eval\n", label[m], med[m]);
    }
    printf("ratio kernel VM/hand: goto %.2f, switch %.2f\n", med[KVM] / med[KHAND],
           med[KSW] / med[KHAND]);
    printf("ratio RHS    VM/hand: goto %.2f, switch %.2f\n", med[RVM] / med[RHAND],
           med[RSW] / med[RHAND]);
    if (sink == 42.0)
        puts("");
    hs_prog_free(p);
    free(regs);
    hs_dag_free(d);
    return 0;
}
