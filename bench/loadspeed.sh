#!/bin/sh
# Start-up as models grow (issue 13, item 6): wall time of `holosim check`
# (load, derive, compile, consistency at t0; no integration) of the N-link
# pendulum in angles (embedding form, bench/gen_nlink.py) and of the
# N-link Cartesian chain (bench/chain_model.sh), for one or more holosim
# binaries, interleaved: each repetition runs every binary on every model
# once, in turn.  Prints, per binary, the median wall time of each model,
# the median over repetitions of the ratios large/small (160 vs 40 angle
# links, 2048 vs 128 chain links: linear would be 4x and 16x; the targets
# are 24x and 32x) with their spread (min-max), and the bytecode sizes
# `check` reports; the same for CPU time (user + system, bench/timecmd.py),
# which depends less on the other jobs of a shared machine.
#
#   sh bench/loadspeed.sh [HOLOSIM ...]      # default: bin/holosim
#   REPS=7 ANGLES="40 160" CHAINS="128 2048" sh bench/loadspeed.sh old/holosim bin/holosim
# (ANGLE_RATIO="40 160" and CHAIN_RATIO="128 2048" pick the sizes of the
# ratios; they must be among ANGLES and CHAINS.)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
REPS=${REPS:-5}
ANGLES=${ANGLES:-"10 40 160"}
CHAINS=${CHAINS:-"128 512 2048"}
ANGLE_RATIO=${ANGLE_RATIO:-"40 160"}    # the ratios printed: large vs small
CHAIN_RATIO=${CHAIN_RATIO:-"128 2048"}
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
done
nb=$b

for rep in $(seq "$REPS"); do
    b=0
    while [ "$b" -lt "$nb" ]; do
        b=$((b + 1))
        for m in $models; do
            tc=$(python3 "$here/timecmd.py" "$dir/out.$b.$m" "$dir/bin$b" check "$dir/$m.yaml") ||
                { echo "loadspeed.sh: binary $b failed on $m" >&2; exit 1; }
            echo "$rep ${tc% *}" >> "$dir/t.$b.$m"
            echo "$rep ${tc#* }" >> "$dir/c.$b.$m"
        done
    done
done

median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
# ratio t|c B SMALL LARGE: median, min and max over repetitions of large/small
ratio() {
    paste -d ' ' "$dir/$1.$2.$3" "$dir/$1.$2.$4" | awk '{print $4 / ($2 > 0 ? $2 : 1)}' > "$dir/r"
    printf '%.1fx (%.1f-%.1f)' "$(median < "$dir/r")" "$(sort -n "$dir/r" | head -n 1)" \
        "$(sort -n "$dir/r" | tail -n 1)"
}
b=0
for h in "$@"; do
    b=$((b + 1))
    echo "## $h ($REPS interleaved repetitions)"
    echo
    echo "| model | median wall s | median CPU s | bytecode (dyn + out + proj) |"
    echo "|---|---:|---:|---|"
    for m in $models; do
        s=$(awk '{print $2}' "$dir/t.$b.$m" | median)
        c=$(awk '{print $2}' "$dir/c.$b.$m" | median)
        code=$(sed -n 's/^compiled: .*; \([0-9]*\) + \([0-9]*\) + \([0-9]*\) bytecode.*/\1 + \2 + \3/p' \
            "$dir/out.$b.$m")
        printf '| %s | %.3f | %.3f | %s |\n' "$m" "$(echo "$s / 1000000" | bc -l)" \
            "$(echo "$c / 1000000" | bc -l)" "$code"
    done
    echo
    for kind in t c; do
        set -- $ANGLE_RATIO
        line="angles $2 vs $1: $(ratio "$kind" "$b" "angles$1" "angles$2")"
        set -- $CHAIN_RATIO
        echo "$([ "$kind" = t ] && echo wall || echo CPU): $line; chain $2 vs $1: $(ratio "$kind" "$b" "chain$1" "chain$2")"
    done
    echo
done
