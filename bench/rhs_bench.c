/* holosim's right-hand side alone: load MODEL, then time hs_dyn_accel (the
 * compiled program, M, C assembly and Cholesky, Lambda, a) at the model's
 * initial state; the minimum of 7 rounds, in ns per evaluation.  The
 * counterpart of `baseline_dp -r` and `baseline_chain -r`.
 *
 *   rhs_bench [-d] MODEL.yaml
 *
 * -d: the dense metric even where the structured embedding would serve
 * (hs_overrides.dense: derive's load), to compare the two. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dynamics/dynamics.h"
#include "model/model.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    int dense = argc == 3 && strcmp(argv[1], "-d") == 0;
    if (argc != 2 + dense) {
        fprintf(stderr, "usage: rhs_bench [-d] MODEL.yaml\n");
        return 1;
    }
    argv += dense;
    hs_error err;
    hs_error_init(&err);
    hs_overrides ov;
    hs_overrides_init(&ov);
    ov.dense = dense;
    double t0 = now();
    hs_model *m = hs_model_load(argv[1], &ov, &err);
    double t_load = now() - t0;
    if (!m) {
        fprintf(stderr, "rhs_bench: %s\n", err.msg);
        return 2;
    }
    hs_work *w = hs_work_new(m);
    size_t n = m->n;
    double *v = calloc(n, sizeof *v), *a = calloc(n, sizeof *a);
    for (size_t i = 0; i < n; i++)
        v[i] = m->v0[i];
    if (hs_dyn_accel(m, w, m->t0, m->q0, v, a, NULL)) {
        fprintf(stderr, "rhs_bench: %s\n", hs_work_err(w)->msg);
        return 4;
    }
    double t1 = now();
    long reps = 1;
    while (now() - t1 < 0.05 && reps < (1L << 30)) {   /* ~50 ms per round */
        for (long i = 0; i < reps; i++)
            hs_dyn_accel(m, w, m->t0, m->q0, v, a, NULL);
        reps *= 2;
    }
    double best = INFINITY, sink = 0;
    for (int r = 0; r < 7; r++) {
        double s = now();
        for (long i = 0; i < reps; i++) {
            hs_dyn_accel(m, w, m->t0, m->q0, v, a, NULL);
            sink += a[0];
        }
        best = fmin(best, (now() - s) / (double)reps);
    }
    printf("rhs_ns %.1f n %zu k %zu%s (min of 7 x %ld; load+compile %.3f s)%s\n", best * 1e9,
           n, m->k, m->chain ? " structured" : "", reps, t_load, isfinite(sink) ? "" : " !");
    free(v);
    free(a);
    hs_work_free(w);
    hs_model_free(m);
    return 0;
}
