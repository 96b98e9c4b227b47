#!/bin/sh
# Sweep throughput: scripts/sweep over N short points of models/pendulum.yaml
# (l from 0.505 by 0.005, --t-end 0.3) against the same N `holosim run`
# calls written by hand, (a) one after the other in a shell loop and (b) as
# many at once as there are cores (xargs -P).  Interleaved rounds
# (sweep, loop, xargs, sweep, ...); prints the median of the per-round
# ratios sweep/loop and sweep/xargs with their range, and the per-point
# cost of a sweep (its time less that of a sweep of one point, per point).
#
#   sh bench/sweep.sh                  # from the repository root
#   ROUNDS=9 POINTS=400 sh bench/sweep.sh
#
# Environment: ROUNDS (7), POINTS (200), OUT (build/bench/sweep).
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROUNDS=${ROUNDS:-7}
POINTS=${POINTS:-200}
OUT=${OUT:-$ROOT/build/bench/sweep}
make -s bin/holosim >&2
rm -rf "$OUT"
mkdir -p "$OUT/bin"
cp bin/holosim scripts/sweep "$OUT/bin/"
H=$OUT/bin/holosim
M=$ROOT/models/pendulum.yaml
HOLOSIM=$H HOLOSIM_CACHE=$OUT/cache
export HOLOSIM HOLOSIM_CACHE
J=$(nproc)
last=$(awk -v n="$POINTS" 'BEGIN { printf "%.3f", 0.5 + n * 0.005 }')
awk -v n="$POINTS" 'BEGIN { for (i = 1; i <= n; i++) printf "%.3f\n", 0.5 + i * 0.005 }' > "$OUT/values"

now() { date +%s.%N; }
: > "$OUT/times"
for r in $(seq 1 "$ROUNDS"); do
    rm -rf "$OUT/sw" "$OUT/sw1" "$OUT/loop" "$OUT/xargs"
    mkdir -p "$OUT/loop" "$OUT/xargs"
    z=$(now)
    "$OUT/bin/sweep" -o "$OUT/sw1" "$M" l=0.505 -- --t-end 0.3 2>/dev/null
    s=$(now)
    "$OUT/bin/sweep" -o "$OUT/sw" "$M" "l=0.505:$last:0.005" -- --t-end 0.3 2>/dev/null
    a=$(now)
    while read -r l; do
        "$H" run "$M" --set "l=$l" --t-end 0.3 -q -o "$OUT/loop/l=$l.csv"
    done < "$OUT/values"
    b=$(now)
    xargs -P "$J" -I{} "$H" run "$M" --set l={} --t-end 0.3 -q -o "$OUT/xargs/l={}.csv" < "$OUT/values"
    c=$(now)
    n1=$(ls "$OUT/sw" | grep -c '^l=.*\.csv$') n2=$(ls "$OUT/loop" | wc -l) n3=$(ls "$OUT/xargs" | wc -l)
    [ "$n1" = "$POINTS" ] && [ "$n2" = "$POINTS" ] && [ "$n3" = "$POINTS" ] ||
        { echo "sweep.sh: round $r: $n1, $n2, $n3 CSVs, not $POINTS each" >&2; exit 1; }
    echo "$s $a $b $c $z" | awk '{ printf "%.4f %.4f %.4f %.4f\n", $2 - $1, $3 - $2, $4 - $3, $1 - $5 }' >> "$OUT/times"
done
{
echo "$(date -u +%Y-%m-%d) $(uname -m), $J cores, load average at the end $(cut -d' ' -f1-3 /proc/loadavg); holosim $(git describe --always --dirty 2>/dev/null); $POINTS points, $ROUNDS rounds"
echo
echo "| comparison | median ratio | range | median seconds (A, B) |"
echo "|---|---:|---:|---:|"
med() { sort -g | awk '{ v[NR] = $1 } END { printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for k in 2 3; do
    case $k in 2) name="scripts/sweep / shell loop of holosim run" ;;
               *) name="scripts/sweep / xargs -P $J of holosim run" ;; esac
    m=$(awk -v k="$k" '{ print $1 / $k }' "$OUT/times" | med)
    lo=$(awk -v k="$k" '{ print $1 / $k }' "$OUT/times" | sort -g | head -1)
    hi=$(awk -v k="$k" '{ print $1 / $k }' "$OUT/times" | sort -g | tail -1)
    ma=$(awk '{ print $1 }' "$OUT/times" | med) mb=$(awk -v k="$k" '{ print $k }' "$OUT/times" | med)
    printf '| %s | %s | %.3f-%.3f | %s, %s |\n' "$name" "$m" "$lo" "$hi" "$ma" "$mb"
done
t1=$(awk '{ print $4 }' "$OUT/times" | med) tn=$(awk '{ print $1 }' "$OUT/times" | med)
tl=$(awk '{ print $2 }' "$OUT/times" | med)
echo
echo "sweep of 1 point: $t1 s (the fixed cost); each further point: $(awk -v a="$tn" -v b="$t1" -v n="$POINTS" \
    'BEGIN { printf "%.2f", 1000 * (a - b) / (n - 1) }') ms of wall time ($J cores); a bare run in the loop: $(awk -v a="$tl" -v n="$POINTS" 'BEGIN { printf "%.2f", 1000 * a / n }') ms"
} | tee "$OUT/results.md"
