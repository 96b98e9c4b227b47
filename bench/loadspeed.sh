#!/bin/sh
# Start-up as models grow (issue 13, item 6; issue 31): wall time, CPU time
# and peak resident set of `holosim check` (load, derive, compile,
# consistency at t0; no integration) of the N-link pendulum in angles
# (embedding form, bench/gen_nlink.py) and of the N-link Cartesian chain
# (bench/chain_model.sh), for one or more holosim binaries, interleaved:
# each repetition runs every binary on every model once, in turn.  Prints,
# per binary, the median wall time, CPU time (user + system,
# bench/timecmd.py: depends less on the other jobs of a shared machine) and
# peak RSS of each model, the bytecode sizes `check` reports, and the median
# over repetitions of the ratios large/small (160 vs 40 angle links, 2048
# vs 128 chain links: linear would be 4x and 16x; the targets are 16x and
# 20x) with their spread (min-max).
#
# RUN=1 measures `run --t-end 0.01 --no-native` (the same start-up, then a
# few steps in the bytecode VM) as well, each model's row and ratio after
# check's.
#
#   sh bench/loadspeed.sh [HOLOSIM ...]      # default: bin/holosim
#   REPS=7 ANGLES="40 160" CHAINS="128 2048" sh bench/loadspeed.sh old/holosim bin/holosim
#   ANGLES= CHAINS="128 512 2048" CHAIN_RATIO="128 2048" RUN=1 sh bench/loadspeed.sh
# (ANGLE_RATIO="40 160" and CHAIN_RATIO="128 2048" pick the sizes of the
# ratios; they must be among ANGLES and CHAINS, and an empty ANGLES or
# CHAINS drops that family and its ratio.)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
REPS=${REPS:-5}
ANGLES=${ANGLES-"10 40 160"}
CHAINS=${CHAINS-"128 512 2048"}
ANGLE_RATIO=${ANGLE_RATIO:-"40 160"}    # the ratios printed: large vs small
CHAIN_RATIO=${CHAIN_RATIO:-"128 2048"}
RUN=${RUN:-0}
cmds=check
[ "$RUN" = 1 ] && cmds="check run"
[ $# -gt 0 ] || set -- "$here/../bin/holosim"
dir=$(mktemp -d "${TMPDIR:-/tmp}/holosim-loadspeed.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
models=
for N in $ANGLES; do
    python3 "$here/gen_nlink.py" "$N" emb > "$dir/angles$N.yaml"
    models="$models angles$N"
done
for N in $CHAINS; do
    sh "$here/chain_model.sh" "$N" > "$dir/chain$N.yaml"
    models="$models chain$N"
done
# private copies: a rebuild during the run cannot swap the programs
b=0
for h in "$@"; do
    b=$((b + 1))
    cp "$h" "$dir/bin$b"
    echo "$h" > "$dir/name$b"
done
nb=$b

for rep in $(seq "$REPS"); do
    b=0
    while [ "$b" -lt "$nb" ]; do
        b=$((b + 1))
        for m in $models; do
            for c in $cmds; do
                if [ "$c" = run ]; then
                    set -- run --t-end 0.01 --no-native -q
                else
                    set -- check
                fi
                tc=$(python3 "$here/timecmd.py" "$dir/out.$b.$c.$m" "$dir/bin$b" "$@" \
                    "$dir/$m.yaml") ||
                    { echo "loadspeed.sh: binary $b failed on $c $m" >&2; exit 1; }
                set -- $tc
                echo "$rep $1" >> "$dir/t.$b.$c.$m"
                echo "$rep $2" >> "$dir/c.$b.$c.$m"
                echo "$rep $3" >> "$dir/m.$b.$c.$m"
            done
        done
    done
done

median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
# ratio t|c|m B CMD SMALL LARGE: median, min and max over repetitions of large/small
ratio() {
    paste -d ' ' "$dir/$1.$2.$3.$4" "$dir/$1.$2.$3.$5" | awk '{print $4 / ($2 > 0 ? $2 : 1)}' > "$dir/r"
    printf '%.1fx (%.1f-%.1f)' "$(median < "$dir/r")" "$(sort -n "$dir/r" | head -n 1)" \
        "$(sort -n "$dir/r" | tail -n 1)"
}
b=0
while [ "$b" -lt "$nb" ]; do
    b=$((b + 1))
    echo "## $(cat "$dir/name$b") ($REPS interleaved repetitions)"
    echo
    echo "| command | model | median wall s | median CPU s | peak RSS MB | bytecode (dyn + out + proj) |"
    echo "|---|---|---:|---:|---:|---|"
    for m in $models; do
        for c in $cmds; do
            s=$(awk '{print $2}' "$dir/t.$b.$c.$m" | median)
            u=$(awk '{print $2}' "$dir/c.$b.$c.$m" | median)
            r=$(awk '{print $2}' "$dir/m.$b.$c.$m" | median)
            code=$(sed -n 's/^compiled: .*; \([0-9]*\) + \([0-9]*\) + \([0-9]*\) bytecode.*/\1 + \2 + \3/p' \
                "$dir/out.$b.$c.$m")
            printf '| %s | %s | %.3f | %.3f | %.1f | %s |\n' "$c" "$m" \
                "$(echo "$s / 1000000" | bc -l)" "$(echo "$u / 1000000" | bc -l)" \
                "$(echo "$r / 1024" | bc -l)" "$code"
        done
    done
    echo
    for c in $cmds; do
        for kind in t c m; do
            what=$( [ "$kind" = t ] && echo wall || { [ "$kind" = c ] && echo CPU || echo RSS; } )
            line=
            if [ -n "$ANGLES" ]; then
                set -- $ANGLE_RATIO
                line="angles $2 vs $1: $(ratio "$kind" "$b" "$c" "angles$1" "angles$2")"
            fi
            if [ -n "$CHAINS" ]; then
                set -- $CHAIN_RATIO
                line="$line${line:+; }chain $2 vs $1: $(ratio "$kind" "$b" "$c" "chain$1" "chain$2")"
            fi
            echo "$c $what: $line"
        done
    done
    echo
done
