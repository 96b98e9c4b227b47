#!/bin/sh
# Write the holosim model of the N-link planar chain that baseline_chain.c
# integrates: unit point masses, links of length l = 1, g = 9.81, the
# straight chain at th = 1 rad from the downward vertical, at rest.
#   sh bench/chain_model.sh N [T_END] > chainN.yaml
#   sh bench/chain_model.sh -d DIR      writes DIR/chain8.yaml, chain32, chain128
set -eu
if [ "${1:-}" = "-d" ]; then
    dir=$2
    mkdir -p "$dir"
    for n in 8 32 128; do
        sh "$0" "$n" > "$dir/chain$n.yaml"
    done
    exit 0
fi
n=${1:?usage: chain_model.sh N [T_END] | -d DIR}
tend=${2:-10}
awk -v N="$n" -v T="$tend" 'BEGIN {
    if (N < 1) { print "chain_model.sh: N must be >= 1" > "/dev/stderr"; exit 1 }
    printf "# Planar chain of %d unit point masses on rigid links (bench/chain_model.sh).\n", N
    printf "name: chain%d\n", N
    printf "parameters:\n  m: 1.0\n  l: 1.0\n  g: 9.81\n  th: 1.0\n"
    s = ""
    for (i = 1; i <= N; i++) s = s (i > 1 ? ", " : "") "x" i ", y" i
    printf "coordinates: [%s]\n", s
    s = ""
    for (i = 1; i <= 2 * N; i++) s = s (i > 1 ? ", " : "") "m"
    printf "mass: [%s]\n", s
    s = ""
    for (i = 1; i <= N; i++) s = s (i > 1 ? " + " : "") "y" i
    printf "potential: m*g*(%s)\n", s
    printf "constraints:\n"
    printf "  link1: x1^2 + y1^2 - l^2\n"
    for (i = 2; i <= N; i++)
        printf "  link%d: (x%d - x%d)^2 + (y%d - y%d)^2 - l^2\n", i, i, i - 1, i, i - 1
    printf "initial:\n  q:\n"
    for (i = 1; i <= N; i++)
        printf "    x%d: %d*l*sin(th)\n    y%d: -%d*l*cos(th)\n", i, i, i, i
    printf "simulate:\n  t_end: %s\n  dt: 0.01\n  rtol: 1e-10\n  atol: 1e-10\n", T
}'
