/* MuJoCo peer for bench/peers.sh: the N-link planar chain (unit point
 * masses, l = 1, g = 9.81, every absolute angle th0 from the downward
 * vertical, at rest) as N nested bodies on hinge joints (relative angles),
 * each body a mass of 1 at the far end of its link (inertia 1e-12, the
 * least MuJoCo accepts comfortably; it shifts the dynamics by ~1e-12),
 * contacts off, integrated with a fixed step: STEPS steps of T_END/STEPS
 * with the RK4 or the semi-implicit Euler integrator.
 *   peers_mujoco rk4|euler N T_END STEPS [TH0]
 * Prints one line: "nstep K cpu_s S wall_s W" then the N final absolute
 * angles, from the positions of the masses (xipos) by atan2.  cpu_s, wall_s:
 * CLOCK_PROCESS_CPUTIME_ID, CLOCK_MONOTONIC around the mj_step loop only. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mujoco/mujoco.h>

static double clock_now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 5 || (strcmp(argv[1], "rk4") && strcmp(argv[1], "euler"))) {
        fprintf(stderr, "usage: peers_mujoco rk4|euler N T_END STEPS [TH0]\n");
        return 2;
    }
    int n = atoi(argv[2]);
    double tend = atof(argv[3]);
    long nstep = atol(argv[4]);
    double th0 = argc > 5 ? atof(argv[5]) : 1.0;
    if (n < 1 || !(tend > 0) || nstep < 1) {
        fprintf(stderr, "peers_mujoco: bad arguments\n");
        return 2;
    }
    /* TinyXML refuses elements nested deeper than about 100: the chain is cut
     * into pieces of at most DEPTH bodies, each piece a file that includes the
     * next one inside its deepest body */
    enum { DEPTH = 64 };
    char dir[] = "/tmp/peers_mujoco_XXXXXX", path[64];
    if (!mkdtemp(dir)) {
        fprintf(stderr, "peers_mujoco: cannot make a temporary directory\n");
        return 4;
    }
    int npiece = (n + DEPTH - 1) / DEPTH;
    for (int p = 0; p < npiece; p++) {
        snprintf(path, sizeof path, "%s/part%d.xml", dir, p);
        FILE *f = fopen(path, "w");
        if (!f) {
            fprintf(stderr, "peers_mujoco: cannot write a temporary model\n");
            return 4;
        }
        fputs("<mujoco model=\"chain\">\n", f);
        if (p == 0)
            /* hinge axis -y: a rotation by q takes (0, 0, -1) to (sin q, 0, -cos q) */
            fprintf(f, "  <option timestep=\"%.17g\" integrator=\"%s\" gravity=\"0 0 -9.81\">\n"
                       "    <flag contact=\"disable\"/>\n  </option>\n  <worldbody>\n",
                    tend / (double)nstep, strcmp(argv[1], "rk4") ? "Euler" : "RK4");
        int lo = p * DEPTH, hi = lo + DEPTH < n ? lo + DEPTH : n;
        for (int i = lo; i < hi; i++)
            fprintf(f, "<body pos=\"0 0 %s\"><joint type=\"hinge\" axis=\"0 -1 0\"/>"
                       "<inertial pos=\"0 0 -1\" mass=\"1\" diaginertia=\"1e-12 1e-12 1e-12\"/>\n",
                    i ? "-1" : "0");
        if (p + 1 < npiece)
            fprintf(f, "<include file=\"part%d.xml\"/>\n", p + 1);
        for (int i = lo; i < hi; i++)
            fputs("</body>", f);
        fputs(p == 0 ? "\n  </worldbody>\n</mujoco>\n" : "\n</mujoco>\n", f);
        fclose(f);
    }
    char err[1000] = "";
    snprintf(path, sizeof path, "%s/part0.xml", dir);
    mjModel *m = mj_loadXML(path, NULL, err, sizeof err);
    for (int p = 0; p < npiece; p++) {
        snprintf(path, sizeof path, "%s/part%d.xml", dir, p);
        unlink(path);
    }
    rmdir(dir);
    if (!m) {
        fprintf(stderr, "peers_mujoco: %s\n", err);
        return 4;
    }
    mjData *d = mj_makeData(m);
    d->qpos[0] = th0;                       /* relative angles th0, 0, 0, ... */
    double w0 = clock_now(CLOCK_MONOTONIC), c0 = clock_now(CLOCK_PROCESS_CPUTIME_ID);
    for (long k = 0; k < nstep; k++)
        mj_step(m, d);
    double c1 = clock_now(CLOCK_PROCESS_CPUTIME_ID), w1 = clock_now(CLOCK_MONOTONIC);
    mj_forward(m, d);
    printf("nstep %ld cpu_s %.6f wall_s %.6f", nstep, c1 - c0, w1 - w0);
    double px = 0, pz = 0;
    for (int i = 1; i <= n; i++) {          /* body 0 is the world */
        double x = d->xipos[3 * i], z = d->xipos[3 * i + 2];
        printf(" %.17g", atan2(x - px, -(z - pz)));
        px = x;
        pz = z;
    }
    printf("\n");
    mj_deleteData(d);
    mj_deleteModel(m);
    return 0;
}
