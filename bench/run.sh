#!/bin/sh
# holosim against hand-written C + GSL and SciPy (bench/README.md, section
# "holosim against baselines").  Builds everything, runs every comparison
# interleaved (each repetition runs every variant once, in turn), takes
# medians, checks that the trajectories agree, prints a Markdown table and
# keeps it in $OUT/results.md.
#
#   sh bench/run.sh                  # from the repository root or bench/
#   REPS=5 SCIPY_REPS=3 sh bench/run.sh
#   HOLOSIM=path/to/holosim SCIPY=0 DENSE=0 PROJ=0 sh bench/run.sh
#
# Environment: REPS (5) repetitions of the C and holosim runs; SCIPY_REPS (3)
# of the SciPy runs (SCIPY=0 skips them); DENSE=0 skips the dense chain
# baseline; PROJ=0 skips the projection-stabilized runs; DP_T (500),
# CHAIN_T8 (100), CHAIN_T32 (50), CHAIN_T128 (20) the simulated spans;
# OUT (build/bench/run) where the CSVs, logs and results go; PY the Python
# with SciPy (/usr/bin/python3, Debian's python3-scipy).
set -eu
cd "$(dirname "$0")/.."
ROOT=$(pwd)
REPS=${REPS:-5}
SCIPY_REPS=${SCIPY_REPS:-3}
SCIPY=${SCIPY:-1}
DENSE=${DENSE:-1}
PROJ=${PROJ:-1}
DP_T=${DP_T:-500}
CHAIN_T8=${CHAIN_T8:-100}
CHAIN_T32=${CHAIN_T32:-50}
CHAIN_T128=${CHAIN_T128:-20}
OUT=${OUT:-$ROOT/build/bench/run}
PY=${PY:-/usr/bin/python3}
B=$ROOT/build/bench

if [ -z "${HOLOSIM:-}" ]; then
    make -s bin/holosim >&2
    HOLOSIM=$ROOT/bin/holosim
fi
make -s -C bench build >&2
if [ "$SCIPY" = 1 ] && ! "$PY" -c 'import scipy' 2>/dev/null; then
    echo "run.sh: no SciPy for $PY (apt-get install -y python3-scipy); SciPy runs skipped" >&2
    SCIPY=0
fi
rm -rf "$OUT"
mkdir -p "$OUT/csv" "$OUT/log" "$OUT/t" "$OUT/bin"
# private copies, so that a rebuild during the run cannot swap the programs
for p in "$HOLOSIM" "$B/baseline_dp" "$B/baseline_chain" "$B/rhs_bench"; do
    cp "$p" "$OUT/bin/"
done
HOLOSIM_SRC=$HOLOSIM
HOLOSIM=$OUT/bin/$(basename "$HOLOSIM")
B=$OUT/bin
sh bench/chain_model.sh -d "$OUT"

now() { date +%s.%N; }

# timed NAME CMD...: run CMD (stdout to the null device), append the wall
# time to $OUT/t/NAME, keep its stderr in $OUT/log/NAME
timed() {
    name=$1
    shift
    s=$(now)
    if ! "$@" > /dev/null 2> "$OUT/log/$name"; then
        echo "run.sh: $name failed:" >&2
        cat "$OUT/log/$name" >&2
        exit 1
    fi
    e=$(now)
    echo "$s $e" | awk '{ printf "%.6f\n", $2 - $1 }' >> "$OUT/t/$name"
    if [ -f "$OUT/log/$name.sum" ]; then     # holosim: the run alone (--summary wall_s)
        hs_runwall "$OUT/log/$name.sum" >> "$OUT/t/$name.run"
        echo >> "$OUT/t/$name.run"
    fi
}

med() {   # median of the numbers in file $1 (- if none)
    [ -s "$1" ] || { echo -; return; }
    sort -g "$1" | awk '{ a[NR] = $1 } END { printf "%.4f", NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }

# ns per RHS evaluation = median wall / rhs evaluations: for holosim the
# run alone (--summary wall_s, without load and compile), for the baselines
# the process; the evaluation counts from --summary and the stderr lines
hs_nrhs() { awk -F, 'NR == 2 { print $4 }' "$1"; }
hs_runwall() { awk -F, 'NR == 2 { printf "%.6f", $11 }' "$1"; }
per() { awk -v w="$1" -v n="$2" 'BEGIN { if (w == "-" || n == "-" || n == 0) print "-"; else printf "%.0f", 1e9 * w / n }'; }
bl_nrhs() { awk '{ for (i = 1; i < NF; i++) if ($i == "rhs_evals" || $i == "nfev") r = $(i + 1) } END { print r ? r : "-" }' "$1"; }

# cmpcsv A B TCHECK: max |difference| over the rows with t <= TCHECK, and on
# the last row (same shape required)
cmpcsv() {
    awk -F, -v tc="$3" '
        NR == FNR { if (FNR > 1) { for (i = 1; i <= NF; i++) a[FNR, i] = $i; nf = NF; na = FNR } next }
        FNR == 1 { next }
        { if (NF != nf) { bad = 1 }
          m = 0
          for (i = 2; i <= NF; i++) { d = a[FNR, i] - $i; if (d < 0) d = -d; if (d > m) m = d }
          if ($1 + 0 <= tc + 1e-9 && m > early) early = m
          last = m; nb = FNR }
        END { if (bad || na != nb) print "shape-mismatch"; else printf "%.1e %.1e", early, last }' "$1" "$2"
}

cols_chain() {   # t,x1,y1,...,xN,yN,x1',y1',...
    awk -v N="$1" 'BEGIN { s = "t"; for (i = 1; i <= N; i++) s = s ",x" i ",y" i
        for (i = 1; i <= N; i++) s = s ",x" i "'\'',y" i "'\''"; print s }'
}

DPM=$ROOT/models/double_pendulum.yaml
DPC="t,x1,y1,x2,y2,x1',y1',x2',y2'"
C=$OUT/csv

echo "run.sh: double pendulum, $DP_T s, $REPS repetitions" >&2
for r in $(seq 1 "$REPS"); do
    timed dp_hs_none "$HOLOSIM" run "$DPM" --t-end "$DP_T" --stabilize none --columns "$DPC" \
        -o "$C/dp_hs_none.csv" --summary "$OUT/log/dp_hs_none.sum" -q
    timed dp_c_w "$B/baseline_dp" -T "$DP_T" -w -o "$C/dp_c_w.csv"
    timed dp_c "$B/baseline_dp" -T "$DP_T" -o "$C/dp_c.csv"
    if [ "$PROJ" = 1 ]; then
        timed dp_hs_proj "$HOLOSIM" run "$DPM" --t-end "$DP_T" --columns "$DPC" \
            -o "$C/dp_hs_proj.csv" --summary "$OUT/log/dp_hs_proj.sum" -q
        timed dp_c_pw "$B/baseline_dp" -T "$DP_T" -p -w -o "$C/dp_c_pw.csv"
    fi
    if [ "$SCIPY" = 1 ] && [ "$r" -le "$SCIPY_REPS" ]; then
        timed dp_scipy "$PY" bench/scipy_dp.py -T "$DP_T" -o "$C/dp_scipy.csv"
    fi
done

for N in 8 32 128; do
    eval "T=\$CHAIN_T$N"
    CM=$OUT/chain$N.yaml
    CC=$(cols_chain "$N")
    echo "run.sh: chain N=$N, $T s, $REPS repetitions" >&2
    for r in $(seq 1 "$REPS"); do
        timed ch${N}_hs_none "$HOLOSIM" run "$CM" --t-end "$T" --stabilize none --columns "$CC" \
            -o "$C/ch${N}_hs_none.csv" --summary "$OUT/log/ch${N}_hs_none.sum" -q
        timed ch${N}_c_band "$B/baseline_chain" -n "$N" -b -w -T "$T" -o "$C/ch${N}_c_band.csv"
        if [ "$DENSE" = 1 ] && { [ "$N" -lt 128 ] || [ "$r" -le 3 ]; }; then
            timed ch${N}_c_dense "$B/baseline_chain" -n "$N" -w -T "$T" -o "$C/ch${N}_c_dense.csv"
        fi
        if [ "$PROJ" = 1 ] && { [ "$N" -lt 128 ] || [ "$r" -le 1 ]; }; then
            timed ch${N}_hs_proj "$HOLOSIM" run "$CM" --t-end "$T" --columns "$CC" \
                -o "$C/ch${N}_hs_proj.csv" --summary "$OUT/log/ch${N}_hs_proj.sum" -q
            timed ch${N}_c_pband "$B/baseline_chain" -n "$N" -b -p -w -T "$T" -o "$C/ch${N}_c_pband.csv"
        fi
        if [ "$SCIPY" = 1 ] && [ "$N" -le 32 ] && [ "$r" -le "$SCIPY_REPS" ]; then
            timed ch${N}_scipy "$PY" bench/scipy_chain.py -n "$N" -T "$T" -o "$C/ch${N}_scipy.csv"
        fi
        timed ch${N}_check "$HOLOSIM" check "$CM"
    done
done

# RHS alone (in-process, min of 7 rounds)
echo "run.sh: right-hand side alone" >&2
rhs_ns() { "$@" | awk '{ print $2 }'; }
RH_dp_hs=$(rhs_ns "$B/rhs_bench" "$DPM")
RH_dp_c=$(rhs_ns "$B/baseline_dp" -r -w)
for N in 8 32 128; do
    eval "RH_ch${N}_hs=\$(rhs_ns \"\$B/rhs_bench\" \"\$OUT/chain$N.yaml\")"
    eval "RH_ch${N}_band=\$(rhs_ns \"\$B/baseline_chain\" -n $N -b -r)"
    if [ "$DENSE" = 1 ]; then
        eval "RH_ch${N}_dense=\$(rhs_ns \"\$B/baseline_chain\" -n $N -r)"
    else
        eval "RH_ch${N}_dense=-"
    fi
done

T=$OUT/t
L=$OUT/log
{
echo "## Results"
echo
echo "$(date -u +%Y-%m-%d), $(uname -m), $(nproc) cores, load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
echo "holosim: $HOLOSIM_SRC ($(cd "$ROOT" && git describe --always --dirty 2>/dev/null || echo '?')); GSL $(pkg-config --modversion gsl);"
echo "SciPy: $([ "$SCIPY" = 1 ] && "$PY" -c 'import scipy, numpy; print(scipy.__version__, "/ NumPy", numpy.__version__)' || echo skipped)."
echo "Medians of $REPS runs (SciPy $SCIPY_REPS; dense N=128 3; projection N=128 1), process wall time in seconds."
echo
echo "| case | holosim (process) | C banded/hand | ratio hs/C | C dense | SciPy | ratio SciPy/hs | hs ns/RHS | C ns/RHS | hs rhs evals | C rhs evals | agree t<=10, end |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
row() {  # label hs c dense scipy hs_sum c_log cmpA cmpB
    hs=$(med "$T/$2"); c=$(med "$T/$3"); de=$(med "$T/$4"); sp=$(med "$T/$5")
    if [ -f "$L/$6" ]; then eh=$(hs_nrhs "$L/$6"); nh=$(per "$(med "$T/$2.run")" "$eh"); else nh=-; eh=-; fi
    if [ -f "$L/$3" ]; then ec=$(bl_nrhs "$L/$3"); nc=$(per "$c" "$ec"); else nc=-; ec=-; fi
    if [ -f "$7" ] && [ -f "$8" ]; then ag=$(cmpcsv "$7" "$8" 10); else ag=-; fi
    echo "| $1 | $hs | $c | $(ratio "$hs" "$c") | $de | $sp | $(ratio "$sp" "$hs") | $nh | $nc | $eh | $ec | $ag |"
}
row "double pendulum $DP_T s, no stabilization (C: 2n+2 state)" dp_hs_none dp_c_w none dp_scipy dp_hs_none.sum "$C/dp_hs_none.csv" "$C/dp_c_w.csv"
row "double pendulum $DP_T s, no stabilization (C: 2n state)" dp_hs_none dp_c none none dp_hs_none.sum "$C/dp_hs_none.csv" "$C/dp_c.csv"
[ "$PROJ" = 1 ] && row "double pendulum $DP_T s, projection" dp_hs_proj dp_c_pw none none dp_hs_proj.sum "$C/dp_hs_proj.csv" "$C/dp_c_pw.csv"
for N in 8 32 128; do
    eval "TT=\$CHAIN_T$N"
    row "chain N=$N, $TT s, no stabilization" ch${N}_hs_none ch${N}_c_band ch${N}_c_dense ch${N}_scipy ch${N}_hs_none.sum "$C/ch${N}_hs_none.csv" "$C/ch${N}_c_band.csv"
    [ "$PROJ" = 1 ] && row "chain N=$N, $TT s, projection" ch${N}_hs_proj ch${N}_c_pband none none ch${N}_hs_proj.sum "$C/ch${N}_hs_proj.csv" "$C/ch${N}_c_pband.csv"
done
echo
echo "Agreement of the SciPy trajectories with the C ones (max |difference| for t <= 10, at the end):"
[ -f "$C/dp_scipy.csv" ] && echo "double pendulum: $(cmpcsv "$C/dp_scipy.csv" "$C/dp_c_w.csv" 10)"
for N in 8 32; do
    [ -f "$C/ch${N}_scipy.csv" ] && echo "chain N=$N: $(cmpcsv "$C/ch${N}_scipy.csv" "$C/ch${N}_c_band.csv" 10)"
done
echo
echo "| holosim run alone (no load/compile; --summary wall_s, median), s | run | process | C | ratio run/C |"
echo "|---|---:|---:|---:|---:|"
for s in dp_hs_none:dp_c_w dp_hs_proj:dp_c_pw ch8_hs_none:ch8_c_band ch8_hs_proj:ch8_c_pband \
         ch32_hs_none:ch32_c_band ch32_hs_proj:ch32_c_pband ch128_hs_none:ch128_c_band \
         ch128_hs_proj:ch128_c_pband; do
    h=${s%%:*}; c=${s#*:}
    [ -f "$T/$h.run" ] && echo "| $h | $(med "$T/$h.run") | $(med "$T/$h") | $(med "$T/$c") | $(ratio "$(med "$T/$h.run")" "$(med "$T/$c")") |"
done
echo
echo "| right-hand side alone, ns / evaluation | holosim (hs_dyn_accel) | C banded/hand | ratio | C dense | holosim ns per link |"
echo "|---|---:|---:|---:|---:|---:|"
echo "| double pendulum | $RH_dp_hs | $RH_dp_c | $(ratio "$RH_dp_hs" "$RH_dp_c") | - | - |"
for N in 8 32 128; do
    eval "h=\$RH_ch${N}_hs; b=\$RH_ch${N}_band; d=\$RH_ch${N}_dense"
    echo "| chain N=$N | $h | $b | $(ratio "$h" "$b") | $d | $(awk -v h="$h" -v n="$N" 'BEGIN { printf "%.0f", h / n }') |"
done
echo
echo "Compile time (holosim check, process wall, median of $REPS): N=8 $(med "$T/ch8_check") s, N=32 $(med "$T/ch32_check") s, N=128 $(med "$T/ch128_check") s (target: N=128 under 0.5 s)."
} > "$OUT/results.md"
cat "$OUT/results.md"
