#!/bin/sh
# Write the N-link planar chain of bench/chain_model.sh in N absolute angles
# (embedding form, the points as a chain of defines): unit point masses,
# links of length l = 1, g = 9.81, every angle th = 1 rad from the downward
# vertical, at rest.  With --written, the same chain with each point written
# out in full as the sum of its links (x3: l*sin(th1) + l*sin(th2) +
# l*sin(th3)), no defines: the textbook way (holosim(1), STRUCTURED
# EMBEDDINGS, says how holosim reads it).
#   sh bench/chain_angle_model.sh [--written] N [T_END] > chainN_angles.yaml
set -eu
written=0
if [ "${1:-}" = --written ]; then written=1; shift; fi
n=${1:?usage: chain_angle_model.sh [--written] N [T_END]}
tend=${2:-10}
awk -v N="$n" -v T="$tend" -v W="$written" 'BEGIN {
    if (N < 1) { print "chain_angle_model.sh: N must be >= 1" > "/dev/stderr"; exit 1 }
    printf "# Planar chain of %d unit point masses on rigid links, in absolute angles\n", N
    printf "# (bench/chain_angle_model.sh).\n"
    printf "name: chain%d_angles\n", N
    printf "parameters:\n  m: 1.0\n  l: 1.0\n  g: 9.81\n  th: 1.0\n"
    s = ""
    for (i = 1; i <= N; i++) s = s (i > 1 ? ", " : "") "th" i
    printf "coordinates: [%s]\n", s
    if (W) {
        printf "embedding:\n"
        for (i = 1; i <= N; i++) {
            printf "  x%d: l*sin(th1)", i
            for (j = 2; j <= i; j++) printf " + l*sin(th%d)", j
            printf "\n  y%d: -l*cos(th1)", i
            for (j = 2; j <= i; j++) printf " - l*cos(th%d)", j
            printf "\n"
        }
    } else {
        printf "define:\n  X1: l*sin(th1)\n  Y1: -l*cos(th1)\n"
        for (i = 2; i <= N; i++)
            printf "  X%d: X%d + l*sin(th%d)\n  Y%d: Y%d - l*cos(th%d)\n", i, i - 1, i, i, i - 1, i
        printf "embedding:\n"
        for (i = 1; i <= N; i++)
            printf "  x%d: X%d\n  y%d: Y%d\n", i, i, i, i
    }
    s = ""
    for (i = 1; i <= 2 * N; i++) s = s (i > 1 ? ", " : "") "m"
    printf "mass: [%s]\n", s
    s = ""
    for (i = 1; i <= N; i++) s = s (i > 1 ? " + " : "") "y" i
    printf "potential: m*g*(%s)\n", s
    printf "initial:\n  q:\n"
    for (i = 1; i <= N; i++)
        printf "    th%d: th\n", i
    printf "simulate:\n  t_end: %s\n  dt: 0.01\n  rtol: 1e-10\n  atol: 1e-10\n", T
}'
