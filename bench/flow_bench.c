/* The cost of the variational system per step (bench/flow.sh, issue 38):
 * the motion alone (no tangent vectors, no Jacobians) against the motion
 * with the 2 (n - k) tangent vectors a Floquet analysis carries (or NCOL
 * of them), through the same dense code (src/flow/), the same stepper and
 * tolerance, from the same consistent start over [t0, t0 + T].
 * Interleaved: plain, variational, plain, variational, ... R rounds; each
 * round's ratio of CPU time per accepted step; prints every round, then
 * the median ratio and its spread (min, max), the steps and evaluations.
 *   flow_bench MODEL.yaml T [R] [NCOL]
 * The bound of the issue: at most 2 (n - k) + 1 times a plain step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flow/flow.h"
#include "model/model.h"

static double cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One run over T with ncol columns from (x0, B): CPU seconds, steps, evals. */
static int one(hs_fl *f, double t0, double T, const double *x0, const double *B, size_t nn,
               size_t d, size_t ncol, double *sec, unsigned long *steps, unsigned long *evals)
{
    hs_error err;
    hs_error_init(&err);
    double *x = malloc(nn * sizeof *x), *P = malloc(nn * (ncol ? ncol : 1) * sizeof *P);
    if (!x || !P)
        return 1;
    memcpy(x, x0, nn * sizeof *x);
    for (size_t r = 0; r < nn; r++)          /* the first ncol basis vectors */
        for (size_t j = 0; j < ncol; j++)
            P[r * ncol + j] = B[r * d + j % d];
    unsigned long s0, e0, s1, e1;
    hs_fl_counts(f, &s0, &e0);
    double c0 = cpu();
    int rc = hs_fl_propagate(f, t0, t0 + T, x, P, ncol, &err);
    *sec = cpu() - c0;
    hs_fl_counts(f, &s1, &e1);
    *steps = s1 - s0;
    *evals = e1 - e0;
    if (rc)
        fprintf(stderr, "flow_bench: %s\n", err.msg);
    free(x);
    free(P);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: flow_bench MODEL.yaml T [ROUNDS] [NCOL]\n");
        return 1;
    }
    double T = atof(argv[2]);
    int rounds = argc > 3 ? atoi(argv[3]) : 5;
    hs_error err;
    hs_error_init(&err);
    hs_overrides ov;
    hs_overrides_init(&ov);
    ov.dense = 1;
    hs_model *m = hs_model_load(argv[1], &ov, &err);
    hs_fl *f = m ? hs_fl_new(m, &err) : NULL;
    if (!f) {
        fprintf(stderr, "flow_bench: %s\n", err.msg);
        return 2;
    }
    size_t n = m->n, nn = 2 * n, d = 0;
    double *x0 = malloc(nn * sizeof *x0), *B = malloc(nn * nn * sizeof *B);
    memcpy(x0, m->q0, n * sizeof *x0);
    memcpy(x0 + n, m->v0, n * sizeof *x0);
    if (hs_fl_tangent(f, m->t0, x0, x0 + n, B, &d, &err)) {
        fprintf(stderr, "flow_bench: %s\n", err.msg);
        return 3;
    }
    size_t ncol = argc > 4 ? (size_t)atoi(argv[4]) : d;
    printf("# %s: n = %zu, k = %zu, tangent dimension %zu, columns %zu, method %s, "
           "T = %g, bound 2(n-k)+1 = %zu\n", argv[1], n, m->k, d, ncol, hs_fl_method(f), T,
           d + 1);
    printf("# round plain_s plain_steps plain_evals var_s var_steps var_evals "
           "ratio_per_step\n");
    double *ratio = malloc((size_t)rounds * sizeof *ratio);
    for (int r = 0; r < rounds; r++) {
        double sp, sv;
        unsigned long np, ep, nv, ev;
        if (one(f, m->t0, T, x0, B, nn, d, 0, &sp, &np, &ep) ||
            one(f, m->t0, T, x0, B, nn, d, ncol, &sv, &nv, &ev))
            return 4;
        ratio[r] = (sv / (double)nv) / (sp / (double)np);
        printf("%d %.4f %lu %lu %.4f %lu %lu %.2f\n", r, sp, np, ep, sv, nv, ev, ratio[r]);
    }
    qsort(ratio, (size_t)rounds, sizeof *ratio, cmp);
    double med = rounds % 2 ? ratio[rounds / 2]
                            : 0.5 * (ratio[rounds / 2 - 1] + ratio[rounds / 2]);
    printf("median ratio per step %.2f (min %.2f, max %.2f, %d rounds), bound %zu\n", med,
           ratio[0], ratio[rounds - 1], rounds, d + 1);
    free(ratio);
    free(x0);
    free(B);
    hs_fl_free(f);
    hs_model_free(m);
    return 0;
}
