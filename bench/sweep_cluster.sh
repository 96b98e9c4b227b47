#!/bin/sh
# Sweep overhead on a cluster: scripts/sweep over N short points of
# models/pendulum.yaml (l from 0.5 by 0.05, --t-end 0.3) run here, through a
# one-node Slurm cluster (default task count: set-up, sbatch, wait, collect)
# and on two ssh hosts (an sshd on loopback, 127.0.0.1 and 127.0.0.2), the
# daemons started here (tests/scripts/cluster.sh, as the tests do; root for
# slurmd).  Interleaved rounds (local, Slurm, ssh, ...); prints the median
# wall time of each, the overhead per point against the local sweep, the
# time of one ssh login and of one empty Slurm job (the scheduling round),
# and checks that every result is byte-identical to the local one.
#
#   sh bench/sweep_cluster.sh              # from the repository root
#   ROUNDS=5 POINTS=31 sh bench/sweep_cluster.sh
#
# Environment: ROUNDS (5), POINTS (31), OUT (build/bench/sweep_cluster).
set -u
cd "$(dirname "$0")/.."
ROOT=$(pwd)
ROUNDS=${ROUNDS:-5}
POINTS=${POINTS:-31}
OUT=${OUT:-$ROOT/build/bench/sweep_cluster}
make -s bin/holosim >&2 || exit 1
rm -rf "$OUT"
mkdir -p "$OUT/bin"
cp bin/holosim scripts/sweep "$OUT/bin/"
HOLOSIM=$OUT/bin/holosim HOLOSIM_CACHE=$OUT/cache
export HOLOSIM HOLOSIM_CACHE
SW=$OUT/bin/sweep
M=$ROOT/models/pendulum.yaml
last=$(awk -v n="$POINTS" 'BEGIN { printf "%.2f", 0.5 + (n - 1) * 0.05 }')
. "$ROOT/tests/scripts/cluster.sh"
trap 'stop_daemons' EXIT
trap 'exit 130' INT TERM

now() { date +%s.%N; }
ssh_ok=0 slurm_ok=0
start_sshd "$OUT/ssh" && ssh_ok=1 || echo "sweep_cluster.sh: no ssh hosts: $WHY" >&2
start_slurm "$OUT/slurm" && slurm_ok=1 || echo "sweep_cluster.sh: no Slurm: $WHY" >&2
same() {    # same DIR: every point CSV as the local sweep's
    for f in "$OUT/local"/l=*.csv; do cmp -s "$f" "$1/${f##*/}" || return 1; done
    [ "$(ls "$1" | grep -c '^l=.*\.csv$')" = "$POINTS" ]
}

: >"$OUT/times"
for r in $(seq 1 "$ROUNDS"); do
    rm -rf "$OUT/local" "$OUT/sl" "$OUT/ssh2"
    a=$(now)
    "$SW" -o "$OUT/local" "$M" "l=0.5:$last:0.05" -- --t-end 0.3 2>/dev/null || echo "local sweep failed" >&2
    b=$(now)
    ts=-1 th=-1 tl=-1 tr=-1
    if [ "$slurm_ok" = 1 ]; then
        c=$(now)
        "$SW" --slurm -o "$OUT/sl" "$M" "l=0.5:$last:0.05" -- --t-end 0.3 2>/dev/null
        job=$(sbatch --parsable --chdir="$OUT" "$OUT/sl/sweep.sbatch")
        wait_job "$job"
        "$SW" --collect "$OUT/sl" 2>/dev/null || echo "round $r: Slurm collect failed" >&2
        d=$(now)
        same "$OUT/sl" || echo "round $r: Slurm results differ" >&2
        ts=$(awk -v c="$c" -v d="$d" 'BEGIN { print d - c }')
        c=$(now); job=$(sbatch --parsable --chdir="$OUT" --output=/dev/null --wrap=true); wait_job "$job"; d=$(now)
        tr=$(awk -v c="$c" -v d="$d" 'BEGIN { print d - c }')
    fi
    if [ "$ssh_ok" = 1 ]; then
        c=$(now)
        "$SW" --ssh "ssh -F $OUT/ssh/config" -S hostA -S hostB -o "$OUT/ssh2" "$M" "l=0.5:$last:0.05" -- --t-end 0.3 2>/dev/null ||
            echo "round $r: ssh sweep failed" >&2
        d=$(now)
        same "$OUT/ssh2" || echo "round $r: ssh results differ" >&2
        th=$(awk -v c="$c" -v d="$d" 'BEGIN { print d - c }')
        c=$(now); ssh -F "$OUT/ssh/config" hostA true; d=$(now)
        tl=$(awk -v c="$c" -v d="$d" 'BEGIN { print d - c }')
    fi
    echo "$a $b $ts $th $tl $tr" | awk '{ printf "%.4f %.4f %.4f %.4f %.4f\n", $2 - $1, $3, $4, $5, $6 }' >>"$OUT/times"
done
med() { sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
tl=$(awk '{ print $1 }' "$OUT/times" | med)
{
echo "$(date -u '+%Y-%m-%d %H:%M') $(uname -m), $(nproc) cores, load average at the end $(cut -d' ' -f1-3 /proc/loadavg); holosim $(git describe --always --dirty 2>/dev/null); $POINTS points, $ROUNDS rounds"
echo
echo "| path | median s | range s | overhead per point (ms, against local) | one login / one empty job s |"
echo "|---|---:|---:|---:|---:|"
printf '| local (holosim batch -j %d) | %s | %s-%s | | |\n' "$(nproc)" "$tl" \
    "$(awk '{ print $1 }' "$OUT/times" | sort -g | head -1)" "$(awk '{ print $1 }' "$OUT/times" | sort -g | tail -1)"
for k in 2 3; do
    case $k in 2) name="Slurm, default tasks (set-up, sbatch, wait, collect)" ex=5 ;;
               *) name="ssh, two hosts (hostA, hostB)" ex=4 ;; esac
    t=$(awk -v k="$k" '$k >= 0 { print $k }' "$OUT/times" | med)
    [ -n "$t" ] && [ "$(awk -v k="$k" '$k >= 0' "$OUT/times" | wc -l)" -gt 0 ] || continue
    printf '| %s | %s | %s-%s | %s | %s |\n' "$name" "$t" \
        "$(awk -v k="$k" '$k >= 0 { print $k }' "$OUT/times" | sort -g | head -1)" \
        "$(awk -v k="$k" '$k >= 0 { print $k }' "$OUT/times" | sort -g | tail -1)" \
        "$(awk -v a="$t" -v b="$tl" -v n="$POINTS" 'BEGIN { printf "%.0f", 1000 * (a - b) / n }')" \
        "$(awk -v k="$ex" '$k >= 0 { print $k }' "$OUT/times" | med)"
done
} | tee "$OUT/results.md"
