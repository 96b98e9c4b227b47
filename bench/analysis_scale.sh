#!/bin/sh
# Equilibria and modes at scale (issue 41, item 5): wall time, CPU time
# (user + system) and peak resident set, from /usr/bin/time -v, of
#   holosim check                          (the load alone: the baseline)
#   holosim equilibrium --linalg sparse    (Newton on the KLU-factored
#                                           saddle-point Jacobian)
#   holosim modes --count 10 --linalg sparse   (shift-invert Lanczos)
# and of the same two commands with --linalg dense where n + k <= DENSE_MAX
# (the dense reference: 2000 by default, the documented limit), on the
# N-link Cartesian chain of bench/chain_model.sh (unit masses on unit rods,
# started straight at 1 rad from the vertical: Newton takes it down).
# Interleaved: each repetition runs every command on every size once, in
# turn.  Prints one row per (size, command): the median wall and CPU
# seconds and the largest peak RSS over the repetitions.
#
#   sh bench/analysis_scale.sh [HOLOSIM]       # default: bin/holosim
#   REPS=7 LINKS="250 500 1000 2000" DENSE_MAX=2000 sh bench/analysis_scale.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
REPS=${REPS:-5}
LINKS=${LINKS:-"250 500 1000"}
DENSE_MAX=${DENSE_MAX:-2000}
H=${1:-$here/../bin/holosim}
[ -x /usr/bin/time ] || { echo "analysis_scale.sh: needs GNU time (/usr/bin/time)" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/holosim-analysis.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
cp "$H" "$dir/holosim"          # a rebuild during the run cannot swap it
for N in $LINKS; do
    sh "$here/chain_model.sh" "$N" > "$dir/chain$N.yaml"
done

# the commands of one size, one per line: NAME ARGS...
cmds() {
    echo "check check"
    echo "equilibrium-sparse equilibrium --linalg sparse"
    echo "modes10-sparse modes --count 10 --linalg sparse"
    if [ $((3 * $1)) -le "$DENSE_MAX" ]; then
        echo "equilibrium-dense equilibrium --linalg dense"
        echo "modes10-dense modes --count 10 --linalg dense"
    fi
}

for rep in $(seq "$REPS"); do
    for N in $LINKS; do
        cmds "$N" | while read -r name args; do
            # shellcheck disable=SC2086
            /usr/bin/time -v "$dir/holosim" $args "$dir/chain$N.yaml" \
                >/dev/null 2>"$dir/time" || {
                echo "analysis_scale.sh: $name on $N links failed:" >&2
                cat "$dir/time" >&2
                exit 1
            }
            awk -v N="$N" -v name="$name" '
                /Elapsed \(wall clock\)/ { n = split($NF, p, ":"); w = 0
                                           for (i = 1; i <= n; i++) w = w * 60 + p[i] }
                /User time \(seconds\)/ { u = $NF }
                /System time \(seconds\)/ { s = $NF }
                /Maximum resident set size/ { r = $NF }
                END { printf "%s %s %.3f %.3f %d\n", N, name, w, u + s, r }' \
                "$dir/time" >> "$dir/rows"
        done
    done
done

echo "holosim: $H; $REPS repetitions, interleaved; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%6s %6s  %-20s %9s %9s %12s\n' links "n+k" command "wall s" "CPU s" "peak RSS MB"
for N in $LINKS; do
    cmds "$N" | while read -r name args; do
        awk -v N="$N" -v name="$name" '$1 == N && $2 == name { print $3, $4, $5 }' \
            "$dir/rows" | sort -n | awk -v N="$N" -v name="$name" '
            { w[NR] = $1; c[NR] = $2; if ($3 > r) r = $3 }
            END {
                # the median of each column alone
                n = NR; m = int((n + 1) / 2)
                for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
                    if (c[j] < c[i]) { t = c[i]; c[i] = c[j]; c[j] = t }
                printf "%6d %6d  %-20s %9.3f %9.3f %12.1f\n", N, 3 * N, name, w[m], c[m],
                       r / 1024
            }'
    done
done
