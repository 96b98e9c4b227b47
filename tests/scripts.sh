#!/bin/sh
# Tests of the shell tools scripts/sweep and scripts/plot (GNU parallel, gnuplot).
# Run from anywhere: sh tests/scripts.sh  (HOLOSIM=path overrides bin/holosim).
# Prints one line per failure, then exactly one final line "N passed, N failed".
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
HOLOSIM=${HOLOSIM:-$root/bin/holosim}
case $HOLOSIM in /*) ;; *) HOLOSIM=$(pwd)/$HOLOSIM ;; esac
export HOLOSIM
sweep=$root/scripts/sweep
plot=$root/scripts/plot
model=$root/models/pendulum.yaml

work=$(mktemp -d "${TMPDIR:-/tmp}/holosim-scripts.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
# the tools' own scratch files go here, so the tests can see that none is left
mkdir "$work/tmp"
TMPDIR=$work/tmp
export TMPDIR

npass=0 nfail=0
pass() { npass=$((npass + 1)); }
fail() { nfail=$((nfail + 1)); printf 'FAIL: %s\n' "$*"; }
check() {   # check DESCRIPTION COMMAND...: passes when COMMAND succeeds
    _what=$1; shift
    if "$@"; then pass; else fail "$_what"; fi
}
lines() { wc -l <"$1" | tr -d ' '; }
field() {   # field ROW COL FILE: a field before any quoted message (row 1 = header)
    awk -F, -v r="$1" -v c="$2" 'NR == r { print $c }' "$3"
}
is_png() {  # 8-byte PNG signature and more than 1000 bytes
    [ -f "$1" ] || return 1
    [ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ] || return 1
    [ "$(wc -c <"$1" | tr -d ' ')" -gt 1000 ]
}
no_scratch_left() { [ -z "$(ls -A "$TMPDIR")" ]; }
ncsv() {    # number of run CSVs in a directory (summary.csv excluded)
    _n=0
    for _f in "$1"/*.csv; do
        [ -f "$_f" ] && [ "${_f##*/}" != summary.csv ] && _n=$((_n + 1))
    done
    echo $_n
}

for tool in parallel gnuplot; do
    command -v $tool >/dev/null 2>&1 || {
        echo "tests/scripts.sh: $tool is missing: run HOLOSIM_FULL_DEPS=1 sh scripts/install-deps.sh" >&2
        echo "0 passed, 1 failed"; exit 1; }
done

# ---------------------------------------------------------------- sweep: 3 x 3
d=$work/ok
"$sweep" -j 4 -o "$d" "$model" l=0.5:1.5:0.5 theta0=0.1,0.3,0.5 -- --t-end 1 --dt 0.1 \
    2>"$work/err"
check "3x3 sweep exits 0" [ $? -eq 0 ]
check "3x3 sweep writes 9 CSVs" [ "$(ncsv "$d")" -eq 9 ]
check "3x3 summary has a header and 9 rows" [ "$(lines "$d/summary.csv")" -eq 10 ]
check "file name encodes the parameters" [ -s "$d/l=1.5_theta0=0.3.csv" ]
check "each run CSV has a header and 11 rows" [ "$(lines "$d/l=1_theta0=0.5.csv")" -eq 12 ]
check "summary header" [ "$(head -n 1 "$d/summary.csv")" = \
    "l,theta0,exit,steps,rhs_evals,rows,t_reached,max_G,max_Gdot,max_energy_balance,max_power_residual,wall_s,message,file" ]
check "summary rows in grid order" [ "$(awk -F, 'NR > 1 { printf "%s/%s ", $1, $2 }' "$d/summary.csv")" = \
    "0.5/0.1 0.5/0.3 0.5/0.5 1/0.1 1/0.3 1/0.5 1.5/0.1 1.5/0.3 1.5/0.5 " ]
check "all 9 points exit 0 with 11 rows to t=1" \
    [ "$(awk -F, 'NR > 1 && $3 == 0 && $6 == 11 && $7 == 1 && $4 > 0' "$d/summary.csv" | wc -l)" -eq 9 ]
check "no temporary files left by sweep" no_scratch_left

# ------------------------------------- sweep: one bad point among 9 (--grid)
printf '# l = 0 makes the rod constraint degenerate (rank of G_q is 0)\nl,theta0\n' \
    >"$work/grid.csv"
for l in 0.5 1 1.5; do for th in 0.1 0.3 0.5; do
    v=$l; if [ $l = 1 ] && [ $th = 0.3 ]; then v=0; fi
    echo "$v,$th" >>"$work/grid.csv"
done; done
d=$work/bad
"$sweep" -o "$d" --grid "$work/grid.csv" "$model" -- --t-end 1 --dt 0.1 2>"$work/err"
check "a sweep with a failed point exits 1" [ $? -eq 1 ]
check "the failed sweep's summary has 9 rows" [ "$(lines "$d/summary.csv")" -eq 10 ]
check "the bad point is row 5, l=0, with holosim's exit 2" \
    [ "$(field 6 1 "$d/summary.csv"),$(field 6 3 "$d/summary.csv")" = "0,2" ]
check "the bad point's message is captured and quoted" \
    grep -q '^0,0.3,2,.*,".*error: .*constraints are dependent.*",$' "$d/summary.csv"
check "the other 8 points complete" \
    [ "$(awk -F, 'NR > 1 && $3 == 0 && $6 == 11' "$d/summary.csv" | wc -l)" -eq 8 ]
check "8 CSVs" [ "$(ncsv "$d")" -eq 8 ]
check "no (empty) CSV for the bad point" [ ! -e "$d/l=0_theta0=0.3.csv" ]
check "the failure is reported on stderr" grep -q 'l=0_theta0=0.3: exit 2' "$work/err"

# ---------------------------- sweep: a numerical failure (exit 4) keeps its rows
d=$work/num
"$sweep" -o "$d" "$model" g=9.81,1e300 -- --t-end 1 --dt 0.1 2>"$work/err"
check "a sweep with a run-time failure exits 1" [ $? -eq 1 ]
check "the run-time failure has exit 4 and summary fields" \
    [ "$(field 3 2 "$d/summary.csv"),$(field 3 5 "$d/summary.csv")" = "4,1" ]
check "the run-time failure keeps its partial CSV" [ -s "$d/g=1e300.csv" ]
check "the run-time failure names the cause" grep -q 'non-finite' "$d/summary.csv"
check "no temporary files left after failures" no_scratch_left

# ------------------------------------------------------------ sweep: usage
"$sweep" -o "$work/u" "$model" l=1:2:0 2>/dev/null
check "sweep: zero step is a usage error (exit 1)" [ $? -eq 1 ]
"$sweep" -o "$work/u" "$model" 2>/dev/null
check "sweep: nothing to sweep is a usage error (exit 1)" [ $? -eq 1 ]
"$sweep" -o "$work/u" "$work/nonexistent.yaml" l=1 2>/dev/null
check "sweep: missing model (exit 1)" [ $? -eq 1 ]
HOLOSIM=$work/nonexistent "$sweep" -o "$work/u" "$model" l=1 2>/dev/null
check "sweep: HOLOSIM pointing nowhere (exit 1)" [ $? -eq 1 ]
"$sweep" --help | grep -q 'exit status: 0 when every point succeeded, 1 otherwise'
check "sweep --help states the exit status" [ $? -eq 0 ]

# ------------------------------------------------------------------- plot
"$HOLOSIM" run "$model" --t-end 3 --dt 0.01 -q >"$work/run.csv"
"$plot" "$work/run.csv" --x t --y x,y -o "$work/file.png"
check "plot from a file exits 0" [ $? -eq 0 ]
check "plot from a file writes a PNG" is_png "$work/file.png"
"$HOLOSIM" run "$model" --t-end 3 -q | "$plot" --y theta -o "$work/stdin.png" --size 640x360
check "plot from standard input writes a PNG" is_png "$work/stdin.png"
"$plot" "$work/run.csv" --phase x -o "$work/phase.png"
check "plot --phase writes a PNG" is_png "$work/phase.png"
"$plot" "$work/run.csv" --traj x,y --title "pendulum path" -o "$work/traj.png"
check "plot --traj writes a PNG" is_png "$work/traj.png"
"$plot" "$work/run.csv" --y "x',lambda_rod" >"$work/stdout.png"
check "plot without -o writes the PNG to standard output" is_png "$work/stdout.png"
if gnuplot -e 'set terminal' 2>&1 | grep -q '^ *png '; then
    HOLOSIM_PLOT_TERMINAL=png "$plot" "$work/run.csv" --y E -o "$work/gd.png"
    check "plot with gnuplot's png terminal" is_png "$work/gd.png"
fi
check "no temporary files left by plot" no_scratch_left

"$plot" "$work/run.csv" --y nope -o "$work/e1.png" 2>"$work/err"
check "plot: unknown column exits 1" [ $? -eq 1 ]
check "plot: unknown column lists the available ones" grep -q "available: t x y x' y'" "$work/err"
check "plot: no image after an error" [ ! -e "$work/e1.png" ]
: | "$plot" --y t -o "$work/e2.png" 2>/dev/null
check "plot: empty input exits 1" [ $? -eq 1 ]
head -n 1 "$work/run.csv" | "$plot" -o "$work/e3.png" 2>/dev/null
check "plot: header without rows exits 1" [ $? -eq 1 ]
"$plot" "$work/run.csv" --phase theta -o "$work/e4.png" 2>/dev/null
check "plot: --phase without a velocity column exits 1" [ $? -eq 1 ]
"$plot" "$work/run.csv" --traj x -o "$work/e5.png" 2>/dev/null
check "plot: --traj with one column exits 1" [ $? -eq 1 ]
"$plot" "$work/run.csv" --size big -o "$work/e6.png" 2>/dev/null
check "plot: bad --size exits 1" [ $? -eq 1 ]
"$plot" "$work/nonexistent.csv" -o "$work/e7.png" 2>/dev/null
check "plot: missing file exits 1" [ $? -eq 1 ]
check "no temporary files left after plot errors" no_scratch_left

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
