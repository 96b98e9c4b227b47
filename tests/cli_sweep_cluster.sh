#!/bin/sh
# scripts/sweep on a real one-node Slurm cluster (munged, slurmctld, slurmd)
# and on real ssh hosts (an sshd on loopback), each started here in a
# scratch folder (own keys, config, unprivileged ports) and stopped by its
# process id.  Every result must be byte-identical to the same sweep run
# locally.  Where a daemon cannot run (not installed, not root for slurmd),
# its part is skipped with a line saying why; the packages come from
# HOLOSIM_FULL_DEPS=1 scripts/install-deps.sh.
LC_ALL=C
export LC_ALL
H=${HOLOSIM:-bin/holosim}
case $H in /*) ;; *) H=$(pwd)/$H ;; esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SWEEP=$ROOT/scripts/sweep
M=$ROOT/models/pendulum.yaml
T=$(mktemp -d "${TMPDIR:-/tmp}/holosim-cluster.XXXXXX") || exit 1
. "$ROOT/tests/scripts/cluster.sh"
trap 'stop_daemons; rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
pass=0 fail=0
ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { _w=$1; shift; if "$@"; then ok; else no "$_w"; fi; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
no_long_batch() {  # no process runs `holosim batch ... --t-end 2000` (from /proc)
    for _f in /proc/[0-9]*/cmdline; do
        { tr '\0' ' ' <"$_f"; } 2>/dev/null | grep -q 'holosim batch .*--t-end 2000' && return 1
    done
    return 0
}
same_results() {   # same_results DIR LOCALDIR: every point CSV byte-identical, same grid
    [ "$(cd "$2" && ls ./*.csv | wc -l)" = "$(cd "$1" && ls ./*.csv | wc -l)" ] || return 1
    for _f in "$2"/*=*.csv; do cmp -s "$_f" "$1/${_f##*/}" || { echo "differs: ${_f##*/}"; return 1; }; done
    # the summaries without wall_s
    _c=$(head -n 1 "$2/summary.csv" | tr ',' '\n' | grep -n '^wall_s$' | cut -d: -f1)
    cut -d, -f"$_c" --complement "$2/summary.csv" >"$T/s1"
    cut -d, -f"$_c" --complement "$1/summary.csv" >"$T/s2"
    cmp -s "$T/s1" "$T/s2"
}

# the reference: 31 short points here
t0=$(now)
"$SWEEP" -o "$T/local" "$M" l=0.5:2:0.05 -- --t-end 0.3 2>/dev/null
check "the local sweep of 31 points exits 0" [ $? -eq 0 ]
t1=$(now)
tlocal=$(secs "$t0" "$t1")
echo "cli_sweep_cluster.sh: 31 points here: $tlocal s"

# =================================================================== sshd
S=$T/ssh
if ! start_sshd "$S"; then
    echo "SKIP: ssh hosts: $WHY"
else
    ssh_="ssh -F $S/config"
    # the sweep's own scratch files (ControlMaster sockets) where this test
    # sees them; an ssh that logs each call
    mkdir -p "$T/tmp"
    printf '#!/bin/sh\necho "$*" >>%s/calls\nexec ssh -F %s "$@"\n' "$S" "$S/config" >"$S/logssh"
    chmod +x "$S/logssh"
    t0=$(now)
    TMPDIR=$T/tmp "$SWEEP" --ssh "$S/logssh" -S hostA -S hostB -o "$T/ssh1" "$M" l=0.5:2:0.05 -- --t-end 0.3 2>"$T/err"
    rc=$?
    t1=$(now)
    check "ssh: one connection per host for 31 points (a job each, nothing else logs in)" \
        [ "$(grep -c 'remote-job' "$S/calls")" -eq 2 ] && [ "$(grep -v -e 'remote-job' -e '^-V$' -e ' -O exit ' "$S/calls" | wc -l)" -eq 0 ]
    check "  ... sharing a ControlMaster" grep -q 'ControlMaster=auto' "$S/calls"
    check "ssh: 31 points on two hosts exit 0 ($(head -c 300 "$T/err"))" [ $rc -eq 0 ]
    check "ssh: every result byte-identical to the local sweep" same_results "$T/ssh1" "$T/local"
    tssh=$(secs "$t0" "$t1")
    echo "cli_sweep_cluster.sh: 31 points on two ssh hosts: $tssh s (here $tlocal s)"
    # a login on each host at once, as the sweep makes them (the remote
    # shell's start, ~/.bashrc, can take seconds)
    t0=$(now); ssh -F "$S/config" hostA true & lp=$!; ssh -F "$S/config" hostB true; wait $lp; t1=$(now)
    tlogin=$(secs "$t0" "$t1")
    echo "cli_sweep_cluster.sh: (a login on both hosts at once: $tlogin s)"
    # 5 s plus the local time plus the logins (twice what two at once took
    # alone: this machine may be busy with other work)
    check "ssh: 31 points in under 5 s plus the local time plus the logins ($tssh s)" \
        awk -v a="$tssh" -v b="$tlocal" -v c="$tlogin" 'BEGIN { exit !(a < 5 + b + 2 * c) }'
    check "ssh: no remote directory left" [ -z "$(ls -A "$S/rtmp" | grep '^holosim-sweep')" ]
    check "ssh: no connection left open (no ControlMaster socket)" [ -z "$(ls -A "$T/tmp")" ]

    # a dead host among live ones: no point lost
    "$SWEEP" --ssh "$ssh_" -S hostC -S hostA -S hostB -o "$T/ssh2" "$M" l=0.5:2:0.05 -- --t-end 0.3 2>"$T/err"
    check "ssh: a dead host among two live ones: exit 0" [ $? -eq 0 ]
    check "  ... every result as the local sweep's" same_results "$T/ssh2" "$T/local"
    check "  ... saying the host failed" grep -q "host 'hostC' failed (exit 255: .*refused" "$T/err"

    # a host that answers but fails every job (its connection drops):
    # its chunks go to the other host
    printf '#!/bin/sh\ncase "$*" in *hostB*remote-job*) exit 255 ;; esac\nexec ssh -F %s "$@"\n' "$S/config" >"$S/flaky"
    chmod +x "$S/flaky"
    "$SWEEP" --ssh "$S/flaky" -S hostA -S hostB -o "$T/ssh3" "$M" l=0.5:2:0.05 -- --t-end 0.3 2>"$T/err"
    check "ssh: a host failing its jobs: exit 0" [ $? -eq 0 ]
    check "  ... every result as the local sweep's" same_results "$T/ssh3" "$T/local"
    check "  ... saying so" grep -q "host 'hostB' failed" "$T/err"

    # an interrupted sweep: the remote job stops and its directory goes
    "$SWEEP" --ssh "$ssh_" -S 1/hostA -o "$T/ssh4" "$M" l=1,2 -- --t-end 2000 --dt 0.001 2>/dev/null &
    spid=$!
    i=0
    until [ -n "$(ls -A "$S/rtmp" | grep '^holosim-sweep')" ] || [ $i -ge 200 ]; do sleep 0.1; i=$((i + 1)); done
    check "ssh: the long job started remotely" [ -n "$(ls -A "$S/rtmp" | grep '^holosim-sweep')" ]
    sleep 1
    kill -TERM "$spid"
    wait "$spid"
    check "ssh: the interrupted sweep exits 143" [ $? -eq 143 ]
    i=0
    until [ -z "$(ls -A "$S/rtmp" | grep '^holosim-sweep')" ] || [ $i -ge 50 ]; do sleep 0.1; i=$((i + 1)); done
    check "  ... and the remote directory is removed" [ -z "$(ls -A "$S/rtmp" | grep '^holosim-sweep')" ]
    check "  ... and the remote run stopped" no_long_batch
    stop_daemons
fi

# ================================================================== Slurm
C=$T/slurm
if ! start_slurm "$C"; then
    echo "SKIP: Slurm: $WHY"
else
    # a directory with a blank, quotes and % in its name; the default
    # task count; a HOLOSIM in the submitting shell does not replace the
    # binary recorded at set-up
    D="$T/s \"q\" 'x' 50% dir"
    t0=$(now)
    "$SWEEP" --slurm -o "$D" "$M" l=0.5:2:0.05 -- --t-end 0.3 2>"$T/err"
    check "slurm: the set-up exits 0" [ $? -eq 0 ]
    check "  ... the hint quotes the path" grep -qF "sbatch $(bash -c 'printf %q "$1"' _ "$D/sweep.sbatch")" "$T/err"
    check "  ... 31 short points: one task by default" grep -qx '#SBATCH --array=0-0' "$D/sweep.sbatch"
    job=$(cd "$T" && HOLOSIM=/nonexistent sbatch --parsable "$D/sweep.sbatch")
    wait_job "$job"
    "$SWEEP" --collect "$D" 2>"$T/err"
    rc=$?
    t1=$(now)
    tsl=$(secs "$t0" "$t1")
    echo "cli_sweep_cluster.sh: 31 points through Slurm (set-up, sbatch, collect): $tsl s (here $tlocal s)"
    check "slurm: --collect exits 0 ($(head -c 300 "$T/err"))" [ $rc -eq 0 ]
    check "slurm: every result byte-identical to the local sweep" same_results "$D" "$T/local"
    check "slurm: the task's output went into the directory" [ -f "$D/.sweep/slurm/$(cat "$D/.sweep/slurm/current")/0.out" ]
    check "slurm: no slurm-*.out where sbatch ran" [ -z "$(ls "$T" | grep '^slurm-')" ]
    # under 3x the local time plus one scheduling round: the time an
    # empty job takes from sbatch to its end, measured here
    t0=$(now)
    job=$(cd "$T" && sbatch --parsable --output=/dev/null --wrap=true)
    wait_job "$job"
    t1=$(now)
    tround=$(secs "$t0" "$t1")
    echo "cli_sweep_cluster.sh: (an empty job: $tround s)"
    check "slurm: 31 points in under 3x the local time plus one round ($tsl s)" \
        awk -v a="$tsl" -v b="$tlocal" -v c="$tround" 'BEGIN { exit !(a < 3 * b + c) }'

    # a second submission while the first is queued is refused
    E=$T/queued
    "$SWEEP" --slurm --tasks 2 --sbatch-option=--begin=now+120 -o "$E" "$M" l=1:4:1 -- --t-end 0.2 2>/dev/null
    job=$(cd "$T" && sbatch --parsable "$E/sweep.sbatch")
    "$SWEEP" --slurm --resume -o "$E" "$M" l=1:4:1 -- --t-end 0.2 2>"$T/err"
    check "slurm: --resume while the job is queued is refused" [ $? -eq 1 ]
    check "  ... naming the job" grep -q "has a Slurm job queued or running ($job" "$T/err"
    "$SWEEP" --force -o "$E" "$M" l=1:4:1 -- --t-end 0.2 2>/dev/null
    check "  ... --force too" [ $? -eq 1 ]
    "$SWEEP" --collect "$E" 2>"$T/err"
    check "  ... --collect says the job is still queued" grep -q "Slurm job still queued or running: $job" "$T/err"
    scancel "$job"
    wait_job "$job"
    # the same script submitted twice at once: both run, nothing mixed
    j1=$(cd "$T" && sbatch --parsable --begin=now "$E/sweep.sbatch")
    j2=$(cd "$T" && sbatch --parsable --begin=now "$E/sweep.sbatch")
    wait_job "$j1"; wait_job "$j2"
    "$SWEEP" --collect "$E" 2>/dev/null
    check "slurm: one script submitted twice: --collect exits 0" [ $? -eq 0 ]
    "$SWEEP" -o "$T/local4" "$M" l=1:4:1 -- --t-end 0.2 2>/dev/null
    check "  ... and the results are the local ones" same_results "$E" "$T/local4"

    # the binary missing on the node: collect shows each task's reason
    mkdir -p "$T/gone"
    cp "$H" "$T/gone/holosim"
    HOLOSIM=$T/gone/holosim "$SWEEP" --slurm --tasks 2 -o "$T/nobin" "$M" l=1:4:1 -- --t-end 0.2 2>/dev/null
    rm -f "$T/gone/holosim"
    job=$(cd "$T" && sbatch --parsable "$T/nobin/sweep.sbatch")
    wait_job "$job"
    "$SWEEP" --collect "$T/nobin" 2>"$T/err"
    check "slurm: the binary missing on the node: --collect exits 1" [ $? -eq 1 ]
    check "  ... and says why, per point" grep -q "exit 127: holosim not usable on .*gone/holosim' is not an executable file" "$T/err"
    stop_daemons
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
