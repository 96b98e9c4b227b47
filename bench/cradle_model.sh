#!/bin/sh
# Write a holosim model of a Newton's cradle of N equal balls on a line
# (bench/contacts.sh): diameter d, small gaps `gap` between neighbours, e = 1,
# ball 1 moving at v0 towards the others at rest.  Each contact closes with
# its own impact, one after the other (models/newtons_cradle.yaml with N
# balls): N - 1 impacts, then ball N leaves at v0 and the others are at rest.
#   sh bench/cradle_model.sh N [T_END]          the line
#   sh bench/cradle_model.sh N T_END ring       the N balls on a ring of
#       circumference N (d + gap): ball N meets ball 1 again (contact cN1,
#       gap x1 + L - xN - d), so the pulse goes round and round, N impacts
#       a turn, each gap/v0 after the last (2 gap/v0 from cN-1 to cN: ball 1
#       has moved on by gap); momentum m v0 and energy m v0^2/2 are kept
#       throughout.
set -eu
n=${1:?usage: cradle_model.sh N [T_END [ring]]}
tend=${2:-}
ring=${3:-}
awk -v N="$n" -v T="$tend" -v RING="$ring" 'BEGIN {
    if (N < 2) { print "cradle_model.sh: N must be >= 2" > "/dev/stderr"; exit 1 }
    if (RING != "" && RING != "ring") {
        print "cradle_model.sh: third argument must be ring" > "/dev/stderr"; exit 1
    }
    # The line: the pulse takes (N - 1) gap / v0 = 0.049 s for N = 50.
    if (T == "") T = (RING == "ring") ? 1 : 0.1
    printf "# Newton'"'"'s cradle of %d balls%s, e = 1 (bench/cradle_model.sh).\n", N, RING == "ring" ? " on a ring" : ""
    printf "name: cradle%d%s\n", N, RING
    printf "parameters:\n  m: 1.0\n  d: 0.1\n  v0: 1.0\n  gap: 0.001\n"
    if (RING == "ring") printf "  L: %d*(d + gap)\n", N
    s = ""
    for (i = 1; i <= N; i++) s = s (i > 1 ? ", " : "") "x" i
    printf "coordinates: [%s]\n", s
    s = ""
    for (i = 1; i <= N; i++) s = s (i > 1 ? ", " : "") "m"
    printf "mass: [%s]\n", s
    printf "contacts:\n"
    for (i = 1; i < N; i++)
        printf "  c%d: {gap: x%d - x%d - d, restitution: 1}\n", i, i + 1, i
    if (RING == "ring")
        printf "  c%d: {gap: x1 + L - x%d - d, restitution: 1}\n", N, N
    printf "initial:\n  q:\n"
    for (i = 1; i <= N; i++)
        printf "    x%d: %d*(d + gap)\n", i, i - 1
    printf "  v:\n    x1: v0\n"
    for (i = 2; i <= N; i++) printf "    x%d: 0\n", i
    printf "simulate:\n  t_end: %s\n  dt: %s\n  rtol: 1e-12\n  atol: 1e-12\n", T, T / 100
}'
