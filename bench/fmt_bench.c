/* CSV number formatting: hs_fmt_double (shortest round-trip) against
 * snprintf("%.17g"), on the values of a pendulum-like trajectory and on
 * random doubles.  ns per number, medians of interleaved repetitions. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "io/fmt.h"

#define NV 200000
#define REPS 9

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void)
{
    static double v[NV];
    static char buf[40];
    uint64_t s = 88172645463325252ULL;
    for (int i = 0; i < NV; i++) {
        if (i % 2) {
            v[i] = sin(i * 0.001) * 0.8 + cos(i * 0.0007) * 1e-3;
        } else {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            v[i] = ((double)(s >> 11) * 0x1p-53 - 0.5) * pow(10, (int)(s % 40) - 20);
        }
    }
    double tf[REPS], tp[REPS];
    size_t sink = 0;
    for (int r = 0; r < REPS; r++) {
        double t0 = now();
        for (int i = 0; i < NV; i++)
            sink += hs_fmt_double(buf, v[i]);
        double t1 = now();
        for (int i = 0; i < NV; i++)
            sink += (size_t)snprintf(buf, sizeof buf, "%.17g", v[i]);
        double t2 = now();
        tf[r] = (t1 - t0) / NV * 1e9;
        tp[r] = (t2 - t1) / NV * 1e9;
    }
    qsort(tf, REPS, sizeof *tf, cmp);
    qsort(tp, REPS, sizeof *tp, cmp);
    printf("fmt: hs_fmt_double %.1f ns/number, snprintf %%.17g %.1f ns/number, ratio %.2f "
           "(checksum %zu)\n", tf[REPS / 2], tp[REPS / 2], tp[REPS / 2] / tf[REPS / 2], sink);
    return 0;
}
