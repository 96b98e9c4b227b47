#!/bin/sh
# The structured embedding against the dense metric, on the same models:
# planar chains of N unit masses in N absolute angles, each point written
# from the one before it (a chain of defines).  Per right-hand side
# (bench/rhs_bench.c: the VM, the initial state, min of 7 rounds; -d the
# dense metric, derive's load) and the whole `holosim check` (load, compile,
# check at t0), interleaved rounds, medians.
#
#   sh bench/structure.sh [ROUNDS] [N...]      (default 3 rounds; 8 .. 512)
#
# Needs build/bench/rhs_bench (make -C bench) and bin/holosim.  The dense
# metric is not tried above 256 links (its load needs more than 512 MiB
# of expressions at 512).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
[ $# -gt 0 ] && shift
sizes=${*:-8 16 32 64 128 256 512}
H=$root/bin/holosim
RB=$root/build/bench/rhs_bench
[ -x "$H" ] && [ -x "$RB" ] || { echo "structure.sh: build bin/holosim and build/bench/rhs_bench first (make; make -C bench)" >&2; exit 1; }
T=$(mktemp -d "${TMPDIR:-/tmp}/holosim-structure.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM

chain() {   # chain N: the model
    awk -v N="$1" 'BEGIN {
        printf "parameters: {m: 1.0, l: 1.0, g: 9.81}\ncoordinates:\n  - th[i=1..%d]\n", N
        printf "define:\n  X[0]: 0\n  Y[0]: 0\n"
        printf "  X[i=1..%d]: X[i-1] + l*sin(th[i])\n  Y[i=1..%d]: Y[i-1] - l*cos(th[i])\n", N, N
        printf "embedding:\n  x[i=1..%d]: X[i]\n  y[i=1..%d]: Y[i]\n", N, N
        printf "mass:\n  x[i=1..%d]: m\n  y[i=1..%d]: m\n", N, N
        printf "potential: m*g*sum(i=1..%d, y[i])\n", N
        printf "initial:\n  q:\n    th[i=1..%d]: 0.5 + 0.01*i\n", N
    }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
now() { date +%s.%N; }

echo "| N | dense us/rhs | structured us/rhs | dense / structured | check, structured (s) |"
echo "|---:|---:|---:|---:|---:|"
for n in $sizes; do
    chain "$n" > "$T/c$n.yaml"
    : > "$T/d" ; : > "$T/s" ; : > "$T/c"
    for r in $(seq "$rounds"); do
        if [ "$n" -le 256 ]; then
            "$RB" -d "$T/c$n.yaml" | awk '{ print $2 / 1000 }' >> "$T/d"
        fi
        "$RB" "$T/c$n.yaml" > "$T/line"
        awk '{ print $2 / 1000 }' "$T/line" >> "$T/s"
        grep -q structured "$T/line" && kind="" || kind=" (dense: under 16)"
        t0=$(now); "$H" check "$T/c$n.yaml" > /dev/null; t1=$(now)
        awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }' >> "$T/c"
    done
    d=$( [ -s "$T/d" ] && median < "$T/d" || echo "-")
    s=$(median < "$T/s")
    c=$(median < "$T/c")
    ratio=$( [ "$d" = "-" ] && echo "-" || awk -v a="$d" -v b="$s" 'BEGIN { print a / b }')
    printf "| %s | %s | %.1f%s | %s | %.3f |\n" "$n" \
        "$( [ "$d" = "-" ] && echo "-" || printf "%.1f" "$d")" "$s" "$kind" \
        "$( [ "$ratio" = "-" ] && echo "-" || printf "%.2f" "$ratio")" "$c"
done
