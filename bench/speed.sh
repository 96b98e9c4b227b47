#!/bin/sh
# holosim against hand-written C + GSL (and SciPy), the targets of
# bench/README.md "Speed against the baselines": every comparison runs its
# two sides interleaved (A B A B ...), and reports the median of the
# per-pair ratios A/B with their range (min-max), process wall time.
#
#   sh bench/speed.sh                    # from the repository root
#   REPS=9 SCIPY=0 sh bench/speed.sh
#
# holosim runs with its native kernels (a warm cache: one run with
# --native=always first, so that the timed runs, in the default auto mode,
# find the build), and as --no-native (the VM) for the same cases.
# Environment: REPS (7) pairs per comparison; SCIPY (1) also time SciPy's
# DOP853 on chain 32; OUT (build/bench/speed) for the models, CSVs, logs.
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
REPS=${REPS:-7}
SCIPY=${SCIPY:-1}
OUT=${OUT:-$ROOT/build/bench/speed}
PY=${PY:-/usr/bin/python3}
make -s bin/holosim >&2
make -s -C bench build >&2
rm -rf "$OUT"
mkdir -p "$OUT/bin" "$OUT/csv"
cp bin/holosim build/bench/baseline_dp build/bench/baseline_chain "$OUT/bin/"
H=$OUT/bin/holosim B=$OUT/bin
HOLOSIM_CACHE=$OUT/cache
export HOLOSIM_CACHE
for n in 8 32 128 512; do sh bench/chain_model.sh "$n" > "$OUT/chain$n.yaml"; done
for n in 128 2048; do sh bench/chain_model.sh "$n" > "$OUT/chk$n.yaml"; done
for n in 40 160; do python3 bench/gen_nlink.py "$n" emb > "$OUT/ang$n.yaml"; done

t() {   # t CMD...: wall seconds of CMD (stdout, stderr to the null device)
    s=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || { echo "speed.sh: failed: $*" >&2; exit 1; }
    e=$(date +%s.%N)
    echo "$s $e" | awk '{ printf "%.6f", $2 - $1 }'
}
med() { sort -g | awk '{ v[NR] = $1 } END { printf "%.4f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# pair NAME REPS 'CMD A' 'CMD B': interleaved runs, one ratio A/B per pair
NP=0
pair() {
    name=$1 reps=$2 a=$3 b=$4
    NP=$((NP + 1))
    rf=$OUT/pair$NP.r
    : > "$rf"
    for r in $(seq 1 "$reps"); do
        ta=$(eval "t $a") tb=$(eval "t $b")
        echo "$ta $tb" | awk '{ printf "%.4f %.4f %.4f\n", $1 / $2, $1, $2 }' >> "$rf"
    done
    ma=$(awk '{ print $2 }' "$rf" | med) mb=$(awk '{ print $3 }' "$rf" | med)
    sort -g "$rf" | awk -v n="$name" -v ma="$ma" -v mb="$mb" '{ r[NR] = $1 }
        END { m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
              printf "| %s | %.3f | %.3f-%.3f | %.3f, %.3f | %d |\n", n, m, r[1], r[NR], ma, mb, NR }'
}

DP=models/double_pendulum.yaml
DPC="t,x1,y1,x2,y2,x1',y1',x2',y2'"
cols() { awk -v N="$1" 'BEGIN { s = "t"; for (i = 1; i <= N; i++) s = s ",x" i ",y" i
        for (i = 1; i <= N; i++) s = s ",x" i "'\'',y" i "'\''"; print s }'; }
# warm the native cache (the timed runs use the default, auto)
"$H" run $DP --t-end 1 --native=always -q -o /dev/null
for n in 8 32 128 512; do "$H" run "$OUT/chain$n.yaml" --t-end 0.1 --native=always -q -o /dev/null; done

{
echo "$(date -u +%Y-%m-%d) $(uname -m), $(nproc) cores, load average at the start $(cut -d' ' -f1-3 /proc/loadavg); holosim $(git describe --always --dirty 2>/dev/null); $REPS pairs each"
echo
echo "| comparison (A / B) | median ratio | range | median A, B (s) | pairs |"
echo "|---|---:|---:|---:|---:|"
pair "double pendulum 500 s: holosim / C dense (2n state)" "$REPS" \
    "\"$H\" run $DP --t-end 500 --stabilize none --columns \"$DPC\" -q -o $OUT/csv/a.csv" \
    "\"$B/baseline_dp\" -T 500 -o $OUT/csv/b.csv"
pair "double pendulum 500 s: holosim VM / C dense" "$REPS" \
    "\"$H\" run $DP --t-end 500 --stabilize none --columns \"$DPC\" --no-native -q -o $OUT/csv/a.csv" \
    "\"$B/baseline_dp\" -T 500 -o $OUT/csv/b.csv"
for n in 8 32 128 512; do
    case $n in 8) T=100 ;; 32) T=50 ;; 128) T=20 ;; 512) T=5 ;; esac
    C=$(cols "$n")
    pair "chain $n, $T s: holosim / C band (GSL)" "$REPS" \
        "\"$H\" run $OUT/chain$n.yaml --t-end $T --stabilize none --columns \"$C\" -q -o $OUT/csv/a.csv" \
        "\"$B/baseline_chain\" -n $n -b -T $T -o $OUT/csv/b.csv"
    pair "chain $n, $T s: holosim / C inline tridiagonal" "$REPS" \
        "\"$H\" run $OUT/chain$n.yaml --t-end $T --stabilize none --columns \"$C\" -q -o $OUT/csv/a.csv" \
        "\"$B/baseline_chain\" -n $n -t -T $T -o $OUT/csv/b.csv"
    pair "chain $n, $T s: holosim VM / C band (GSL)" "$REPS" \
        "\"$H\" run $OUT/chain$n.yaml --t-end $T --stabilize none --columns \"$C\" --no-native -q -o $OUT/csv/a.csv" \
        "\"$B/baseline_chain\" -n $n -b -T $T -o $OUT/csv/b.csv"
done
C=$(cols 32)
pair "chain 32, 50 s: holosim projection / none" "$REPS" \
    "\"$H\" run $OUT/chain32.yaml --t-end 50 --columns \"$C\" -q -o $OUT/csv/a.csv" \
    "\"$H\" run $OUT/chain32.yaml --t-end 50 --stabilize none --columns \"$C\" -q -o $OUT/csv/b.csv"
# the first run with an empty cache: --native=always waits for the compiler
# (auto would run on the VM, as the VM rows, and build in the background)
fresh() { rm -rf "$OUT/fresh"; HOLOSIM_CACHE=$OUT/fresh "$@"; }
pair "double pendulum 500 s: first run (empty cache, --native=always) / cached" "$REPS" \
    "fresh \"$H\" run $DP --t-end 500 --stabilize none --columns \"$DPC\" --native=always -q -o $OUT/csv/a.csv" \
    "\"$H\" run $DP --t-end 500 --stabilize none --columns \"$DPC\" -q -o $OUT/csv/b.csv"
C=$(cols 128)
pair "chain 128, 20 s: first run (empty cache, --native=always) / cached" "$REPS" \
    "fresh \"$H\" run $OUT/chain128.yaml --t-end 20 --stabilize none --columns \"$C\" --native=always -q -o $OUT/csv/a.csv" \
    "\"$H\" run $OUT/chain128.yaml --t-end 20 --stabilize none --columns \"$C\" -q -o $OUT/csv/b.csv"
C=$(cols 32)
pair "check: chain 2048 / chain 128" "$REPS" "\"$H\" check $OUT/chk2048.yaml" "\"$H\" check $OUT/chk128.yaml"
pair "load (check): 160-link / 40-link pendulum in angles" "$REPS" \
    "\"$H\" check $OUT/ang160.yaml" "\"$H\" check $OUT/ang40.yaml"
if [ "$SCIPY" = 1 ] && "$PY" -c 'import scipy' 2>/dev/null; then
    pair "chain 32, 50 s: SciPy DOP853 / holosim" 3 \
        "\"$PY\" bench/scipy_chain.py -n 32 -T 50 -o $OUT/csv/s.csv" \
        "\"$H\" run $OUT/chain32.yaml --t-end 50 --stabilize none --columns \"$C\" -q -o $OUT/csv/a.csv"
    pair "chain 32, 50 s: SciPy DOP853 / holosim --output-mode interpolate" 3 \
        "\"$PY\" bench/scipy_chain.py -n 32 -T 50 -o $OUT/csv/s.csv" \
        "\"$H\" run $OUT/chain32.yaml --t-end 50 --stabilize none --output-mode interpolate --columns \"$C\" -q -o $OUT/csv/a.csv"
    pair "chain 32, 50 s: SciPy DOP853 / holosim --method dop853 --output-mode interpolate" 5 \
        "\"$PY\" bench/scipy_chain.py -n 32 -T 50 -o $OUT/csv/s.csv" \
        "\"$H\" run $OUT/chain32.yaml --t-end 50 --stabilize none --method dop853 --output-mode interpolate --columns \"$C\" -q -o $OUT/csv/a.csv"
fi
} | tee "$OUT/results.md"
