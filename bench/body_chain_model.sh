#!/bin/sh
# Write a planar chain of N rigid rods in N absolute angles as `bodies`:
# rod i (mass m, length l, inertia m l^2/12 about its centre) hangs from
# the end of rod i-1, its joints a chain of defines; g = 9.81, every angle
# th = 1 rad from the downward vertical, at rest.  With --kinetic, the same
# chain with `kinetic: 0` written beside the bodies (the Lagrangian form,
# the dense metric: holosim(1), STRUCTURED EMBEDDINGS).
#   sh bench/body_chain_model.sh [--kinetic] N [T_END] > bodiesN.yaml
set -eu
kin=0
if [ "${1:-}" = --kinetic ]; then kin=1; shift; fi
n=${1:?usage: body_chain_model.sh [--kinetic] N [T_END]}
tend=${2:-10}
awk -v N="$n" -v T="$tend" -v K="$kin" 'BEGIN {
    if (N < 1) { print "body_chain_model.sh: N must be >= 1" > "/dev/stderr"; exit 1 }
    printf "# Planar chain of %d rigid rods in absolute angles (bench/body_chain_model.sh).\n", N
    printf "name: bodies%d\n", N
    printf "parameters:\n  N: %d\n  m: 1.0\n  l: 1.0\n  g: 9.81\n  th0: 1.0\n", N
    printf "coordinates:\n  - th[i=1..N]\n"
    printf "define:\n  X[0]: 0\n  Y[0]: 0\n"
    printf "  X[i=1..N]: X[i-1] + l*sin(th[i])\n  Y[i=1..N]: Y[i-1] - l*cos(th[i])\n"
    printf "bodies:\n  rod[i=1..N]:\n    mass: m\n    inertia: [m*l^2/12, m*l^2/12, m*l^2/12]\n"
    printf "    position:\n      - X[i-1] + l/2*sin(th[i])\n      - Y[i-1] - l/2*cos(th[i])\n      - 0\n"
    printf "    orientation:\n      axes:\n        - [z, \"th[i]\"]\n"
    if (K) printf "kinetic: 0\n"
    printf "potential: m*g*sum(i=1..N, Y[i-1] - l/2*cos(th[i]))\n"
    printf "initial:\n  q:\n    th[i=1..N]: th0\n"
    printf "simulate:\n  t_end: %s\n  dt: 0.01\n  rtol: 1e-10\n  atol: 1e-10\n", T
}'
