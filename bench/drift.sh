#!/bin/sh
# Drift table (issue 6): for the pendulum and the double pendulum over long
# spans, each stabilization x {rk8pd, rkf45, msbdf}: max |G|, max |Gdot|,
# max |energy_balance|, right-hand-side evaluations and wall time, read from
# holosim's --summary row.  Usage: bench/drift.sh [HOLOSIM]
set -eu
H=${1:-${HOLOSIM:-bin/holosim}}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
printf '| model | span | stabilize | method | max abs G | max abs Gdot | max abs energy_balance | rhs evals | wall s |\n'
printf '|---|---:|---|---|---:|---:|---:|---:|---:|\n'
for spec in "pendulum.yaml 1000" "double_pendulum.yaml 100"; do
    set -- $spec
    for st in none baumgarte projection; do
        for me in rk8pd rkf45 msbdf; do
            if "$H" run "models/$1" --t-end "$2" --dt 1 --method "$me" --stabilize "$st" \
                   -q -o /dev/null --summary "$tmp" 2>/dev/null; then
                tail -n 1 "$tmp" | awk -F, -v m="$1" -v s="$2" -v st="$st" -v me="$me" \
                    '{ printf "| %s | %s | %s | %s | %.2e | %.2e | %.2e | %s | %.3f |\n", m, s, st, me, $7, $8, $9, $4, $11 }'
            else
                printf '| %s | %s | %s | %s | failed | | | | |\n' "$1" "$2" "$st" "$me"
            fi
        done
    done
done
