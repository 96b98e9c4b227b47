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
fakehs=$root/tests/scripts/fake-holosim
fakessh=$root/tests/scripts/fake-ssh
LC_ALL=C
export LC_ALL

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
no_scratch_left() {   # TMPDIR is empty; else says what is there
    [ -z "$(ls -A "$TMPDIR")" ] && return 0
    printf 'left in TMPDIR: %s\n' "$(ls -A "$TMPDIR" | head -n 5 | tr '\n' ' ')"
    return 1
}
no_part_left() { [ -z "$(find "$1" -name '.part*' -o -name '*.part')" ]; }
mtime() { stat -c %Y.%y "$1" 2>/dev/null || echo none; }
has() {     # has FILE TEXT: FILE contains TEXT (fixed string)
    grep -qF -- "$2" "$1"
}
wait_for() {  # wait_for FILE: up to 20 s for FILE to appear
    _i=0
    while [ ! -e "$1" ] && [ $_i -lt 200 ]; do sleep 0.1; _i=$((_i + 1)); done
    [ -e "$1" ]
}
ncsv() {    # number of run CSVs in a directory (summary.csv excluded)
    _n=0
    for _f in "$1"/*.csv; do
        [ -f "$_f" ] && [ "${_f##*/}" != summary.csv ] && _n=$((_n + 1))
    done
    echo $_n
}

for tool in parallel gnuplot rsync groff; do
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
    "l,theta0,exit,steps,rhs_evals,rows,t_reached,max_G,max_Gdot,max_energy_balance,max_power_residual,wall_s,impacts,transitions,t_rest,message,file" ]
"$HOLOSIM" run "$model" -q --t-end 0.1 -o /dev/null --summary "$work/run-summary.csv"
check "  ... the fields of holosim run --summary (but model), then file" \
    [ "$(head -n 1 "$d/summary.csv" | cut -d, -f3-)" = "$(head -n 1 "$work/run-summary.csv" | cut -d, -f2-),file" ]
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

# --------------------------------------- sweep: point names are unique
# l=1*2-3, l=1*2 and l=1/2 all read l=1_2...: each point its own CSV
d=$work/names
"$sweep" -o "$d" "$model" 'l=1*2-3,1*2,1/2,0.5' -- --t-end 0.2 2>"$work/err"
check "values that sanitize alike: the sweep runs (exit 0)" [ $? -eq 0 ]
check "  ... four CSVs, four names" [ "$(ncsv "$d")" -eq 4 ] &&
    [ "$(cut -f1 "$d/.sweep/in/grid.tsv" | sort | uniq -d | wc -l)" -eq 0 ]
check "  ... each CSV the run of its own value (1/2: l=0.5)" \
    [ "$("$HOLOSIM" run "$model" --set l=1/2 --t-end 0.2 -q | sed -n 2p)" = "$(sed -n 2p "$d/l=1_2~3.csv")" ]
check "  ... the summary names each point's file once" \
    [ "$(awk -F, 'NR > 1 { print $NF }' "$d/summary.csv" | sort -u | wc -l)" -eq 4 ]

# ----------------------------------- holosim batch: names checked, sizes
printf 'name\tl\na\t1\nb\t2\na\t3\n' >"$work/dup.tsv"
mkdir -p "$work/bo"
"$HOLOSIM" batch "$model" --points "$work/dup.tsv" --outdir "$work/bo" --status-dir "$work/bo" 2>"$work/err"
check "batch: two points with one name are refused (exit 1)" [ $? -eq 1 ]
check "  ... at FILE:LINE:COLUMN, naming the first" \
    has "$work/err" "$work/dup.tsv:4:1: point name 'a' given twice (first on line 2)"
check "  ... and nothing ran" [ -z "$(ls -A "$work/bo")" ]
printf 'name\tl\n.x\t1\n' >"$work/dot.tsv"
"$HOLOSIM" batch "$model" --points "$work/dot.tsv" --outdir "$work/bo" --status-dir "$work/bo" 2>"$work/err"
check "batch: a name starting with '.' is refused at its position" [ $? -eq 1 ] && has "$work/err" "$work/dot.tsv:2:1:"
timeout 60 "$HOLOSIM" batch /dev/zero --points "$work/dup.tsv" --outdir "$work/bo" --status-dir "$work/bo" 2>"$work/err"
check "batch: /dev/zero as the model stops at the 64 MiB limit of run (exit 2)" \
    [ $? -eq 2 ] && has "$work/err" "/dev/zero: model file larger than 64 MiB"
head -c 70000000 /dev/zero | tr '\0' '#' >"$work/big.yaml"
"$HOLOSIM" batch "$work/big.yaml" --points "$work/dup.tsv" --outdir "$work/bo" --status-dir "$work/bo" 2>"$work/err"
check "batch: a 70 MB model is refused as run refuses it" [ $? -eq 2 ] && has "$work/err" "model file larger than 64 MiB"
rm -f "$work/big.yaml"
timeout 60 "$HOLOSIM" batch "$model" --points /dev/zero --outdir "$work/bo" --status-dir "$work/bo" 2>"$work/err"
check "batch: /dev/zero as the points file stops at its limit" [ $? -eq 1 ] && has "$work/err" "points file larger than 256 MiB"

"$HOLOSIM" batch "$model" --points "$work/dot.tsv" --outdir "$work/nonexistent" --status-dir "$work/bo" 2>"$work/err"
check "batch: an --outdir that is not a directory: refused before any point" \
    [ $? -eq 1 ] && has "$work/err" "'$work/nonexistent' is not a directory (--outdir)"

# ------------------------------------------- sweep: grid file messages
printf '\357\273\277l,theta0\n1,0.1\n2,0.2\n' >"$work/bom.csv"
"$sweep" -o "$work/bom" --grid "$work/bom.csv" "$model" -- --t-end 0.2 2>"$work/err"
check "a grid file with a UTF-8 byte-order mark runs (exit 0)" [ $? -eq 0 ] && [ "$(ncsv "$work/bom")" -eq 2 ]
printf 'l,the ta\n1,0.1\n' >"$work/badname.csv"
"$sweep" -o "$work/bn" --grid "$work/badname.csv" "$model" 2>"$work/err"
check "a bad name in the grid header: FILE:LINE:COLUMN (exit 1)" \
    [ $? -eq 1 ] && has "$work/err" "$work/badname.csv:1:3: bad parameter name 'the ta'"
printf 'l,theta0\n1,0.1\n1\n' >"$work/short.csv"
"$sweep" -o "$work/bn" --grid "$work/short.csv" "$model" 2>"$work/err"
check "a short grid row: its line" has "$work/err" "$work/short.csv:3:1: 1 fields, the header has 2"
printf 'l\n1\001\n' >"$work/ctl.csv"
"$sweep" -o "$work/bn" --grid "$work/ctl.csv" "$model" 2>"$work/err"
check "a control character in a value: its column" has "$work/err" "$work/ctl.csv:2:2: a control character in a value"

# ------------------------ sweep: runs an event stopped keep their message
"$sweep" -o "$work/ev" "$root/models/sphere_liftoff.yaml" R=1,2 2>/dev/null
check "a sweep of runs an event stops exits 0" [ $? -eq 0 ]
check "  ... and the summary keeps the event's message" \
    [ "$(grep -c ",\"stopped by event 'ground' (z < -R) at t=" "$work/ev/summary.csv")" -eq 2 ]

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

"$sweep" --help >"$work/help"
check "sweep --help exits 0 and shows the usage" has "$work/help" "usage: sweep [OPTIONS] MODEL"
check "sweep --help: metrics are empty for a run that never integrated" \
    has "$work/help" "these empty when the run stopped before integrating"

# ---------------------------------- sweep: a failed point's message and fields
# The model path as the user typed it (relative), never the sweep's own copy
# or an absolute path; a point that never integrated has empty metrics.
(cd "$root" && "$sweep" -o "$work/rel" models/pendulum.yaml l=0,1 -- --t-end 0.2 2>"$work/err")
check "sweep with a bad point exits 1" [ $? -eq 1 ]
check "a point that never integrated: exit 2, twelve empty metric fields, the typed path" \
    grep -q '^0,2,,,,,,,,,,,,,"models/pendulum.yaml:16:8: error: the constraints are dependent' "$work/rel/summary.csv"
check "the message names no absolute path and not the sweep's copy" \
    sh -c "! grep -e '$root' -e '.sweep/' '$work/rel/summary.csv' '$work/err'"
check "the failure on stderr shows the typed path" \
    has "$work/err" "sweep: l=0: exit 2: models/pendulum.yaml:16:8: error:"
check "the good point beside it has its metrics" \
    [ "$(field 3 2 "$work/rel/summary.csv"),$(field 3 5 "$work/rel/summary.csv")" = "0,21" ]

# --------------------------------------------- sweep: options anywhere (GNU)
d=$work/perm
"$sweep" "$model" l=1,2 -o "$d" -- --t-end 0.2 2>/dev/null
check "options after the operands: MODEL l=1,2 -o DIR -- ..." [ $? -eq 0 ] && [ "$(ncsv "$d")" -eq 2 ]
check "the -- after the model passes options to holosim run" \
    [ "$(field 2 5 "$d/summary.csv")" = 21 ]
"$sweep" --output="$d-2" -j1 -- "$model" l=1 -- --t-end 0.2 2>/dev/null
check "--output=DIR, -j1, and a -- before MODEL" [ $? -eq 0 ] && [ -s "$d-2/l=1.csv" ]
check "  ... with the second -- still for holosim run" [ "$(field 2 5 "$d-2/summary.csv")" = 21 ]
"$sweep" "$model" l=1 -o "$d-3" --t-end 5 2>"$work/err"
check "a holosim option before -- exits 1" [ $? -eq 1 ]
check "  ... with the hint to put it after --" [ "$(cat "$work/err")" = \
    "sweep: unknown option '--t-end' (options for holosim run go after '--': sweep MODEL PARAM=SPEC... -- --t-end 5)" ]
check "  ... and runs nothing" [ ! -e "$d-3" ]
"$sweep" "$model" l=1 -o "$d-3" --resum 2>"$work/err"
check "an unknown option: did you mean" has "$work/err" "sweep: unknown option '--resum'; did you mean '--resume'?"
"$sweep" "$model" l=1 -o "$d-3" --tend=5 2>"$work/err"
check "a misspelt holosim option: did you mean, and where it goes" \
    has "$work/err" "did you mean '--t-end' (an option of holosim run: it goes after '--')?"
"$sweep" "$model" l=1 -- -o "$d-3" 2>"$work/err"
check "-o after -- is refused" [ $? -eq 1 ] && has "$work/err" "put -o DIR before the --"
"$sweep" --force=1 "$model" l=1 2>"$work/err"
check "a flag with =VALUE is refused" [ $? -eq 1 ] && has "$work/err" "--force takes no value"

# a --params file for holosim run goes into the sweep with the model (only
# with a holosim that has --params)
if "$HOLOSIM" help run 2>&1 | grep -q -- '--params'; then
    printf 'l: 2\n' >"$work/p2.yaml"
    printf 'zz: 1\n' >"$work/pbad.yaml"
    (cd "$work" && "$sweep" -o pp "$model" theta0=0.5 -- --t-end 0.2 --params p2.yaml 2>/dev/null)
    check "-- --params FILE: the overrides reach every point" \
        [ "$(awk -F, 'NR == 2 { print substr($2, 1, 8) }' "$work/pp/theta0=0.5.csv")" = 0.958851 ]
    (cd "$work" && "$sweep" -o pp2 "$model" theta0=0.5 -- --params=pbad.yaml 2>/dev/null)
    check "  ... and its errors name the file as typed" grep -q '"pbad.yaml:1:1: error: ' "$work/pp2/summary.csv"
    printf 'l: 3\n' >"$work/p2.yaml"
    (cd "$work" && "$sweep" -o pp --resume "$model" theta0=0.5 -- --t-end 0.2 --params p2.yaml 2>"$work/err")
    check "  ... --resume with an edited --params file is refused" [ $? -eq 1 ] && has "$work/err" "another version of 'p2.yaml'"
fi

# ------------------------------------ sweep: results are never mixed or lost
d=$work/perm
before=$(mtime "$d/l=1.csv")
"$sweep" -o "$d" "$model" l=1,2 -- --t-end 0.2 2>"$work/err"
check "a sweep into a directory with results is refused (exit 1)" [ $? -eq 1 ]
check "  ... naming --resume and --force" \
    sh -c "grep -q -- --resume '$work/err' && grep -q -- --force '$work/err'"
check "  ... and leaving the results alone" [ "$(mtime "$d/l=1.csv")" = "$before" ]
echo keep >"$d/notes.txt"
echo "a,b" >"$d/mine.csv"
"$sweep" -o "$d" --force "$model" l=3 -- --t-end 0.2 2>/dev/null
check "--force runs into a directory with results" [ $? -eq 0 ] && [ -s "$d/l=3.csv" ]
check "  ... deleting the old point CSVs" [ ! -e "$d/l=1.csv" ] && [ ! -e "$d/l=2.csv" ]
check "  ... and nothing that is not the sweep's" [ -s "$d/notes.txt" ] && [ -s "$d/mine.csv" ]
check "  ... the summary has the new grid only" [ "$(lines "$d/summary.csv")" -eq 2 ]
# --force deletes only what the sweep's state records: not the files a
# hand-made summary.csv names, not a name no sweep writes
printf 'l,exit,steps,rhs_evals,rows,t_reached,max_G,max_Gdot,max_energy_balance,max_power_residual,wall_s,impacts,transitions,t_rest,message,file\n1,0,,,,,,,,,,,,,,notes.txt\n2,0,,,,,,,,,,,,,,keep.yaml\n' >"$work/f2.summary"
mkdir -p "$work/f2"
cp "$work/f2.summary" "$work/f2/summary.csv"
echo keep >"$work/f2/notes.txt"; echo keep >"$work/f2/keep.yaml"
"$sweep" -o "$work/f2" --force "$model" l=3 -- --t-end 0.2 2>/dev/null
check "--force with a summary.csv that is not a sweep's: runs" [ $? -eq 0 ]
check "  ... and deletes none of the files it names" [ -s "$work/f2/notes.txt" ] && [ -s "$work/f2/keep.yaml" ]
printf 'name\tl\nnotes\t1\n../x\t2\n' >"$work/f2/.sweep/in/grid.tsv"
echo keep >"$work/f2/notes.csv"
"$sweep" -o "$work/f2" --force "$model" l=3 -- --t-end 0.2 2>/dev/null
check "  ... nor a CSV whose name no sweep writes (notes.csv)" [ -s "$work/f2/notes.csv" ]

# a second sweep into a directory while the first runs (the first one's lock
# held here by the test shell) is refused and touches nothing
exec 8>>"$d/.sweep.lock"
flock -n 8
before=$(mtime "$d/l=3.csv")
"$sweep" -o "$d" --resume "$model" l=3,4 -- --t-end 0.2 2>"$work/err"
check "a sweep into a directory in use by another sweep exits 1" [ $? -eq 1 ]
check "  ... saying so" has "$work/err" "is in use by another sweep (it holds '$d/.sweep.lock')"
check "  ... and runs nothing" [ ! -e "$d/l=4.csv" ] && [ "$(mtime "$d/l=3.csv")" = "$before" ]
"$sweep" --collect "$d" 2>"$work/err"
check "  ... --collect too" [ $? -eq 1 ] && has "$work/err" "is in use by another sweep"
exec 8>&-
echo keep >"$d/.notes.part"
"$sweep" -o "$d" --resume "$model" l=3,4 -- --t-end 0.2 2>/dev/null
check "  ... and runs once the lock is gone" [ $? -eq 0 ] && [ -s "$d/l=4.csv" ]
check "  ... leaving a file of the user's named like a part file" [ -s "$d/.notes.part" ]
rm -f "$d/.notes.part"

# a point fails during integration (keeps its rows), --resume reruns it only
d=$work/res
HOLOSIM_REAL=$HOLOSIM FAIL_AT=l=2 HOLOSIM=$fakehs \
    "$sweep" -o "$d" "$model" l=1,2,3 -- --t-end 0.2 2>/dev/null
check "an injected failure exits 1" [ $? -eq 1 ]
check "the failed point keeps its rows and is recorded as failed" \
    [ -s "$d/l=2.csv" ] && [ "$(field 3 2 "$d/summary.csv")" = 4 ]
check "the failed point's status record" grep -q '^4,.*injected failure' "$d/.sweep/status/l=2.status"
t1=$(mtime "$d/l=1.csv") t3=$(mtime "$d/l=3.csv")
sleep 1.1
"$sweep" -o "$d" --resume "$model" l=1,2,3 -- --t-end 0.3 2>"$work/err"
check "--resume with other holosim options is refused" [ $? -eq 1 ] && has "$work/err" "other holosim run options"
cp "$model" "$work/other.yaml"; echo "# edited" >>"$work/other.yaml"
"$sweep" -o "$d" --resume "$work/other.yaml" l=1,2,3 -- --t-end 0.2 2>"$work/err"
check "--resume with another model text is refused" [ $? -eq 1 ] && has "$work/err" "another version"
HOLOSIM_REAL=$HOLOSIM FAKE_LOG=$work/res.log HOLOSIM=$fakehs \
    "$sweep" -o "$d" --resume "$model" l=1,2,3 -- --t-end 0.2 2>/dev/null
check "--resume completes the sweep (exit 0)" [ $? -eq 0 ]
check "  ... running only the failed point" [ "$(lines "$work/res.log")" -eq 1 ]
check "  ... leaving finished points untouched (mtime)" \
    [ "$(mtime "$d/l=1.csv")" = "$t1" ] && [ "$(mtime "$d/l=3.csv")" = "$t3" ]
check "  ... the rerun point is now whole" [ "$(lines "$d/l=2.csv")" -eq 22 ]
check "  ... and the summary covers the whole grid" \
    [ "$(awk -F, 'NR > 1 && $2 == 0' "$d/summary.csv" | wc -l)" -eq 3 ]

# --resume checks each CSV against its status: a CSV cut short reruns
head -c 300 "$d/l=2.csv" >"$work/cut" && mv "$work/cut" "$d/l=2.csv"
HOLOSIM_REAL=$HOLOSIM FAKE_LOG=$work/res2.log HOLOSIM=$fakehs \
    "$sweep" -o "$d" --resume "$model" l=1,2,3 -- --t-end 0.2 2>/dev/null
check "--resume reruns a point whose CSV was cut short" \
    [ $? -eq 0 ] && [ "$(lines "$work/res2.log")" -eq 1 ] && [ "$(lines "$d/l=2.csv")" -eq 22 ]

# an interrupted sweep leaves no truncated CSV that looks done
d=$work/intr
rm -f "$work/stalled"
HOLOSIM_REAL=$HOLOSIM STALL_AT=l=3 STALL_FLAG=$work/stalled HOLOSIM=$fakehs \
    "$sweep" -j1 --chunk 1 -o "$d" "$model" l=1,2,3,4 -- --t-end 0.2 2>"$work/err" &
spid=$!
if wait_for "$work/stalled"; then
    kill -TERM $spid
    wait $spid
    check "a sweep killed with SIGTERM exits 143" [ $? -eq 143 ]
    check "  ... the point cut short has no CSV" [ ! -e "$d/l=3.csv" ] && [ ! -e "$d/.sweep/status/l=3.status" ]
    check "  ... and no partial file under any name" no_part_left "$d"
    check "  ... the run it stopped is gone" sh -c "! kill -0 $(cat "$work/stalled") 2>/dev/null"
    check "  ... the points done before stay" [ -s "$d/l=1.csv" ] && [ -s "$d/l=2.csv" ]
    check "  ... it says how to finish" has "$work/err" "--resume"
    t1=$(mtime "$d/l=1.csv")
    "$sweep" -j1 -o "$d" --resume "$model" l=1,2,3,4 -- --t-end 0.2 2>/dev/null
    check "--resume finishes the interrupted sweep" [ $? -eq 0 ] && [ "$(lines "$d/l=3.csv")" -eq 22 ]
    check "  ... without touching the points done before" [ "$(mtime "$d/l=1.csv")" = "$t1" ]
else
    kill -KILL $spid 2>/dev/null
    fail "the stalled point never started"
fi

# the same without --chunk: one holosim batch with worker processes, no GNU
# parallel; SIGTERM reaches the batch through the worker shell
d=$work/intr-local
rm -f "$work/stalled"
HOLOSIM_REAL=$HOLOSIM STALL_AT=l=3 STALL_FLAG=$work/stalled HOLOSIM=$fakehs \
    "$sweep" -j 2 -o "$d" "$model" l=1,2,3,4 -- --t-end 0.2 2>"$work/err" &
spid=$!
if wait_for "$work/stalled"; then
    kill -TERM $spid
    wait $spid
    check "local batch: SIGTERM exits 143" [ $? -eq 143 ]
    check "  ... the point cut short has no CSV, no status, no partial file" \
        [ ! -e "$d/l=3.csv" ] && [ ! -e "$d/.sweep/status/l=3.status" ] && no_part_left "$d"
    "$sweep" -o "$d" --resume "$model" l=1,2,3,4 -- --t-end 0.2 2>/dev/null
    check "  ... and --resume finishes it" [ $? -eq 0 ] && [ "$(ncsv "$d")" -eq 4 ]
else
    kill -KILL $spid 2>/dev/null
    fail "the stalled point (local batch) never started"
fi

# ---------------------------------------- sweep: points grouped into jobs
d="$work/chunk dir"
HOLOSIM_REAL=$HOLOSIM FAKE_LOG=$work/chunk.log HOLOSIM=$fakehs \
    "$sweep" --chunk 3 -o "$d" "$model" l=1:7:1 -- --t-end 0.2 2>/dev/null
check "--chunk 3: 7 points complete" [ $? -eq 0 ] && [ "$(ncsv "$d")" -eq 7 ]
check "  ... in 3 GNU parallel jobs (one process runs each chunk)" \
    [ "$(sort -u "$work/chunk.log" | wc -l)" -eq 3 ]
check "  ... no partial files and no job files left" no_part_left "$d" && [ ! -e "$d/.sweep/chunks" ]

# ------------------------------------------------------------ sweep: progress
check "no progress line when stderr is not a terminal" \
    sh -c "! grep -q -e ETA -e \"$(printf '\r')\" '$work/err'"
if command -v script >/dev/null 2>&1; then
    script -qec "'$sweep' -o '$work/tty' '$model' l=1,2 -- --t-end 0.2" /dev/null >"$work/tty.out" 2>&1
    check "a progress line with the count and ETA on a terminal" \
        grep -q 'points done, 0 failed, ETA' "$work/tty.out"
fi

# ------------------------------------------------------------ sweep: Slurm
d="$work/slurm dir"
"$sweep" --slurm --tasks 3 --sbatch-option '--time=00:05:00' --sbatch-option=--mem=1G \
    -o "$d" "$model" l=1:5:1 -- --t-end 0.2 2>/dev/null
check "--slurm writes the job script (exit 0)" [ $? -eq 0 ] && [ -s "$d/sweep.sbatch" ]
check "  ... and runs nothing" [ "$(ncsv "$d")" -eq 0 ]
check "  ... bash -n passes" bash -n "$d/sweep.sbatch"
check "  ... a job array of 3 tasks" grep -qx '#SBATCH --array=0-2' "$d/sweep.sbatch"
check "  ... with the --sbatch-option lines" \
    sh -c "grep -qx '#SBATCH --time=00:05:00' '$d/sweep.sbatch' && grep -qx '#SBATCH --mem=1G' '$d/sweep.sbatch'"
for k in 0 2; do
    (cd "$work" && SLURM_ARRAY_TASK_ID=$k bash "$d/sweep.sbatch" >/dev/null 2>&1)
    check "Slurm task $k runs (exit 0)" [ $? -eq 0 ]
done
"$sweep" --collect "$d" 2>"$work/err"
check "--collect with a task missing exits 1" [ $? -eq 1 ]
check "  ... lists the missing points and their task" \
    sh -c "grep -q 'points not run: l=3 l=4' '$work/err' && grep -q -- '--array=1 ' '$work/err'"
check "  ... the summary marks them" [ "$(grep -c '"not run"' "$d/summary.csv")" -eq 2 ]
(cd "$work" && SLURM_ARRAY_TASK_ID=1 bash "$d/sweep.sbatch" >/dev/null 2>&1)
"$sweep" --collect "$d" 2>/dev/null
check "--collect after every task exits 0" [ $? -eq 0 ]
check "  ... with the whole grid in order" [ "$(awk -F, 'NR > 1 && $2 == 0 { printf "%s ", $1 }' "$d/summary.csv")" = "1 2 3 4 5 " ]
(cd "$work" && bash "$d/sweep.sbatch" >/dev/null 2>&1)
check "the job script outside Slurm (no task id) fails" [ $? -ne 0 ]
"$sweep" --slurm --points-per-task 2 -o "$work/slurm2" "$model" l=1:5:1 2>/dev/null
check "--points-per-task 2: 5 points in 3 tasks" grep -qx '#SBATCH --array=0-2' "$work/slurm2/sweep.sbatch"
"$sweep" --collect "$work/nonexistent" 2>/dev/null
check "--collect of a directory without a sweep exits 1" [ $? -eq 1 ]

# ------------------------------------------ sweep: equilibrium and modes
hoop=$root/tests/scripts/hoop.yaml
torque=$root/tests/scripts/torque.yaml
# colcheck FILE AWK-CONDITION: every data row of the summary FILE satisfies
# the condition, written with c["NAME"] for the value of column NAME (ok:
# rows passed; the count must be > 0); prints the first row that fails
# and with the functions acos(x), asin(x) and near(a, b, tol): |a - b| <= tol
colcheck() {
    awk -F, '
        function acos(x) { return atan2(sqrt(1 - x * x), x) }
        function asin(x) { return atan2(x, sqrt(1 - x * x)) }
        function near(a, b, tol) { return a - b <= tol && b - a <= tol }
        NR == 1 { for (i = 1; i <= NF; i++) ix[$i] = i; next }
        { for (k in ix) c[k] = $(ix[k]) }
        '"$2"' { n++; next }
        { print "row " NR ": " $0; bad = 1; exit }
        END { if (bad || !n) exit 1 }' "$1"
}
# g = 9.81, R = 1: omega^2 > g/R past omega = 3.13
d=$work/bif
"$sweep" --command equilibrium -j 3 -o "$d" "$hoop" omega=0:6:0.5 theta0=0,1 2>"$work/err"
check "equilibrium sweep of the hoop: exit 0" [ $? -eq 0 ]
check "  ... summary: the parameters, equilibrium's columns, exit, message, file" \
    [ "$(head -n 1 "$d/summary.csv")" = "omega,theta0,theta,stable,verdict,exit,message,file" ]
check "  ... one row per point (26) in grid order" \
    [ "$(awk -F, 'NR > 1 { printf "%s/%s ", $1, $2 }' "$d/summary.csv" | cut -d' ' -f1-5)" = "0/0 0/1 0.5/0 0.5/1 1/0" ] &&
    [ "$(lines "$d/summary.csv")" -eq 27 ]
check "  ... theta* = acos(g/(omega^2 R)) past omega^2 = g/R, else 0 (from theta0 = 1; to 1e-10)" \
    colcheck "$d/summary.csv" 'c["exit"] == 0 && (c["theta0"] == 0 && c["theta"] == 0 ||
        c["theta0"] == 1 && near(c["theta"], c["omega"]^2 > 9.81 ? acos(9.81 / c["omega"]^2) : 0, 1e-10))'
check "  ... the bottom is stable below omega^2 = g/R, unstable above; theta* stable" \
    colcheck "$d/summary.csv" 'c["stable"] == (c["theta0"] == 1 || c["omega"]^2 < 9.81)'
check "  ... each point's CSV is holosim equilibrium --csv at that point" \
    [ "$("$HOLOSIM" equilibrium "$hoop" --set omega=4.5 --set theta0=1 --csv)" = "$(cat "$d/omega=4.5_theta0=1.csv")" ]
check "  ... the summary names it" grep -q '^4.5,1,.*,0,,omega=4.5_theta0=1.csv$' "$d/summary.csv"
check "  ... the report" has "$work/err" "sweep: 26 points, 26 succeeded, 0 failed; summary in $d/summary.csv"
check "  ... no temporary files left" no_scratch_left
check "  ... and no partial file" no_part_left "$d"

# modes: a row per point and eigenvalue; modes' omega beside the parameter
d=$work/modes
"$sweep" --command modes -o "$d" "$hoop" omega=0:6:1 theta0=0,1 2>"$work/err"
check "modes sweep of the hoop: exit 0" [ $? -eq 0 ]
h=$(head -n 1 "$d/summary.csv")
check "  ... summary header: the parameters, modes' columns (its omega as modes_omega), exit, message, file" \
    sh -c "case '$h' in omega,theta0,mode,sigma,modes_omega,*,exit,message,file) exit 0 ;; esac; exit 1"
check "  ... the bottom past omega^2 = g/R has two rows (s = +-sqrt(omega^2 - g/R)), every other point one" \
    [ "$(lines "$d/summary.csv")" -eq 18 ] &&
    colcheck "$d/summary.csv" 'c["theta0"] == 0 && c["omega"] >= 4 &&
        near(c["sigma"]^2, c["omega"]^2 - 9.81, 1e-9) && c["modes_omega"] == 0 ||
        !(c["theta0"] == 0 && c["omega"] >= 4) && c["mode"] == 1'
check "  ... the frequency sqrt(g/R - omega^2) below, sqrt(omega^2 - g^2/(omega^2 R^2)) at theta* above (to 1e-10)" \
    colcheck "$d/summary.csv" 'c["omega"]^2 > 9.81 && c["theta0"] == 0 ||
        c["omega"]^2 < 9.81 && c["sigma"] == 0 && near(c["modes_omega"] / sqrt(9.81 - c["omega"]^2), 1, 1e-10) ||
        c["omega"]^2 > 9.81 && c["sigma"] == 0 && near(c["modes_omega"] / sqrt(c["omega"]^2 - 9.81^2 / c["omega"]^2), 1, 1e-10)'
check "  ... the rows of a point are its CSV's rows" \
    [ "$(grep -c ',omega=5_theta0=0.csv$' "$d/summary.csv")" -eq "$(($(lines "$d/omega=5_theta0=0.csv") - 1))" ]

# the model as shipped, above the critical speed; the multiplier columns of a
# constrained model: lambda_rod = -m g/(2 l) at the bottom of the pendulum
"$sweep" --command equilibrium -o "$work/hoopm" "$root/models/hoop_equilibrium.yaml" omega=4:6:1 2>/dev/null
check "models/hoop_equilibrium.yaml: theta* = acos(g/(omega^2 R))" \
    colcheck "$work/hoopm/summary.csv" 'near(c["theta"], acos(9.81 / c["omega"]^2), 1e-10)'
"$sweep" --command equilibrium -o "$work/pend" "$model" l=0.5,1,2 2>/dev/null
check "pendulum: y = -l and lambda_rod = -m g/(2 l)" \
    colcheck "$work/pend/summary.csv" 'c["y"] == -c["l"] && near(c["lambda_rod"], -9.81 / (2 * c["l"]), 1e-12)'

# no equilibrium (exit 3) is a result, not a failure
d=$work/torque
(cd "$root/tests/scripts" && "$sweep" --command equilibrium -o "$d" torque.yaml tau=0:12:3 2>"$work/err")
check "exit 3 (no equilibrium past tau = m g l) is a result: the sweep exits 0" [ $? -eq 0 ]
check "  ... theta* = asin(tau/(m g l)) where there is one" \
    colcheck "$d/summary.csv" 'c["tau"] == 12 || c["exit"] == 0 && near(c["theta"], asin(c["tau"] / 9.81), 1e-12)'
check "  ... the point without: exit 3, empty values, the message with the path as typed, no file" \
    grep -q '^12,,,,3,"torque.yaml: error: no equilibrium found: .*",$' "$d/summary.csv"
check "  ... and no CSV for it" [ ! -e "$d/tau=12.csv" ]
check "  ... the report counts it apart" \
    has "$work/err" "sweep: 5 points, 4 succeeded, 1 with no equilibrium (exit 3: see their message), 0 failed"
HOLOSIM_REAL=$HOLOSIM FAKE_LOG=$work/noeq.log HOLOSIM=$fakehs \
    "$sweep" --command equilibrium --resume -o "$d" "$torque" tau=0:15:3 2>/dev/null
check "  ... --resume runs only the new point (not the one without equilibrium)" \
    [ $? -eq 0 ] && [ "$(lines "$work/noeq.log")" -eq 1 ] && [ "$(lines "$d/summary.csv")" -eq 7 ]

# a failed point: its exit and message, empty values; the others go on
d=$work/eqfail
(cd "$root/tests/scripts" && "$sweep" --command equilibrium -o "$d" torque.yaml m=0,1 tau=3 2>"$work/err")
check "equilibrium with a failed point: the sweep exits 1" [ $? -eq 1 ]
ln=$(grep -n '^kinetic:' "$torque" | cut -d: -f1)
check "  ... its row: empty values, exit 2, the first line of the message at FILE:LINE:COLUMN" \
    grep -q "^0,3,,,,2,\"torque.yaml:$ln:10: error: metric d2T/dv2 is not positive definite: .*\",\$" "$d/summary.csv"
check "  ... reported on stderr" has "$work/err" "sweep: m=0_tau=3: exit 2: torque.yaml:$ln:10: error: metric"
check "  ... the other point has its result" grep -q '^1,3,0.31078948834970[0-9]*,1,stable,0,,m=1_tau=3.csv$' "$d/summary.csv"
(cd "$root/tests/scripts" && "$sweep" --command modes -o "$d-m" torque.yaml m=0,1 tau=3 2>/dev/null)
check "modes with a failed point: one row with empty mode columns" \
    [ "$(awk -F, '$1 == 0 && $2 == 3' "$d-m/summary.csv" | grep -c "^0,3,,*2,\"torque.yaml:$ln:10: ")" -eq 1 ]
HOLOSIM_REAL=$HOLOSIM FAIL_AT=tau=6 HOLOSIM=$fakehs \
    "$sweep" --command modes -o "$work/inj" "$torque" tau=3,6 2>/dev/null
check "a point that fails with exit 4: recorded as failed, no CSV" \
    [ $? -eq 1 ] && grep -q '^6,,*4,"holosim: error: injected failure at t=0.1",$' "$work/inj/summary.csv" &&
    [ ! -e "$work/inj/tau=6.csv" ] && [ -s "$work/inj/tau=3.csv" ]

# options after --: --set and --params (copied); the point's value wins
"$sweep" --command equilibrium -o "$work/eqset" "$torque" tau=3 -- --set m=2 --set tau=9 2>/dev/null
check "-- --set m=2 reaches every point, the swept tau wins over -- --set tau=9" \
    colcheck "$work/eqset/summary.csv" 'near(c["theta"], asin(3 / 19.62), 1e-12)'
printf 'l: 2\n' >"$work/l2.yaml"
(cd "$work" && "$sweep" --command equilibrium -o eqpar "$torque" tau=3 -- --params l2.yaml 2>/dev/null)
check "-- --params FILE: copied with the model, read at every point" \
    colcheck "$work/eqpar/summary.csv" 'near(c["theta"], asin(3 / 19.62), 1e-12)' &&
    [ -s "$work/eqpar/.sweep/in/params-1.yaml" ]

# the same grid through GNU parallel (--chunk), a Slurm array, and one worker
"$sweep" --command modes --chunk 2 -o "$work/modes-chunk" "$hoop" omega=0:6:1 theta0=0,1 2>/dev/null
check "modes with --chunk 2 (GNU parallel): the same summary" cmp -s "$work/modes/summary.csv" "$work/modes-chunk/summary.csv"
"$sweep" --command modes -j 1 -o "$work/modes-j1" "$hoop" omega=0:6:1 theta0=0,1 2>/dev/null
check "modes with -j 1: the same summary" cmp -s "$work/modes/summary.csv" "$work/modes-j1/summary.csv"
d="$work/modes slurm"
"$sweep" --command modes --slurm -o "$d" "$hoop" omega=0:6:1 theta0=0,1 2>/dev/null
check "modes with --slurm: the job script (exit 0)" [ $? -eq 0 ] && [ -s "$d/sweep.sbatch" ]
check "  ... having run up to 10 points to measure them" [ "$(ncsv "$d")" -ge 1 ] && [ "$(ncsv "$d")" -le 10 ]
n=$(sed -n 's/^#SBATCH --array=0-//p' "$d/sweep.sbatch")
k=0
while [ "$k" -le "${n:-0}" ]; do
    (cd "$work" && SLURM_ARRAY_TASK_ID=$k bash "$d/sweep.sbatch" >/dev/null 2>&1)
    k=$((k + 1))
done
"$sweep" --collect "$d" 2>/dev/null
check "  ... its tasks and --collect: the same summary" [ $? -eq 0 ] && cmp -s "$work/modes/summary.csv" "$d/summary.csv"

# interrupted: no file of the point cut short, --resume finishes
d=$work/eqintr
rm -f "$work/stalled"
HOLOSIM_REAL=$HOLOSIM STALL_AT=tau=6 STALL_FLAG=$work/stalled HOLOSIM=$fakehs \
    "$sweep" --command equilibrium -j 2 -o "$d" "$torque" tau=3,6,9 2>"$work/err" &
spid=$!
if wait_for "$work/stalled"; then
    kill -TERM $spid
    wait $spid
    check "an equilibrium sweep killed with SIGTERM exits 143" [ $? -eq 143 ]
    check "  ... the point cut short has no CSV, no status, no partial file" \
        [ ! -e "$d/tau=6.csv" ] && [ ! -e "$d/.sweep/status/tau=6.status" ] && no_part_left "$d" &&
        [ -z "$(find "$d" -name '*.part')" ]
    check "  ... the holosim it ran is gone" sh -c "! kill -0 $(cat "$work/stalled") 2>/dev/null"
    HOLOSIM_REAL=$HOLOSIM FAKE_LOG=$work/eqintr.log HOLOSIM=$fakehs \
        "$sweep" --command equilibrium -o "$d" --resume "$torque" tau=3,6,9 2>/dev/null
    check "  ... --resume runs the rest" [ $? -eq 0 ] && [ "$(ncsv "$d")" -eq 3 ] &&
        [ "$(lines "$work/eqintr.log")" -le 2 ]
else
    kill -KILL $spid 2>/dev/null
    fail "the stalled equilibrium point never started"
fi
check "no temporary files left by the equilibrium and modes sweeps" no_scratch_left

# a point without modes (n = k: header only): one row, empty mode columns
printf 'parameters: {a: 1.0}\ncoordinates: [x]\nmass: [1]\nconstraints: {pin: x - a}\ninitial: {q: {x: a}, v: {x: 0}}\n' \
    >"$work/pinned.yaml"
"$sweep" --command modes -o "$work/pinned" "$work/pinned.yaml" a=1,2 2>/dev/null
check "modes of a point without degrees of freedom: exit 0, one row each, empty mode columns" \
    [ $? -eq 0 ] && [ "$(sed -n 3p "$work/pinned/summary.csv")" = "2,,,,,0,,a=2.csv" ]
# --grid: the points from a file, in its order
printf 'omega,theta0\n5,1\n2,0\n' >"$work/hoopgrid.csv"
"$sweep" --command equilibrium --grid "$work/hoopgrid.csv" -o "$work/eqgrid" "$hoop" 2>/dev/null
check "equilibrium with --grid: the grid's rows in its order" \
    [ $? -eq 0 ] && [ "$(cut -d, -f1,2,4 "$work/eqgrid/summary.csv" | tr '\n' ' ')" = "omega,theta0,stable 5,1,1 2,0,1 " ] &&
    colcheck "$work/eqgrid/summary.csv" 'near(c["theta"], c["omega"] == 5 ? acos(9.81 / 25) : 0, 1e-10)'
"$sweep" --collect "$work/eqgrid" 2>/dev/null
check "--collect of an equilibrium sweep: the same summary" \
    [ $? -eq 0 ] && [ "$(cut -d, -f1,2,4 "$work/eqgrid/summary.csv" | tr '\n' ' ')" = "omega,theta0,stable 5,1,1 2,0,1 " ]
"$sweep" --collect "$work/eqgrid" --command modes 2>"$work/err"
check "--collect with --command: exit 1, the directory says which" \
    [ $? -eq 1 ] && has "$work/err" "--collect DIR takes no --command"

# errors: what, why, and what to do; exit 1, nothing run
"$sweep" --command equlibrium -o "$work/x1" "$torque" tau=1 2>"$work/err"
check "an unknown command: exit 1, the commands a sweep runs, did you mean" \
    [ $? -eq 1 ] && [ "$(head -n 1 "$work/err")" = \
    "sweep: --command 'equlibrium': a sweep runs one of: run, equilibrium, modes (did you mean 'equilibrium'?)" ] &&
    [ ! -e "$work/x1" ]
"$sweep" --command equilibrium -o "$work/x1" "$torque" tau=1 -- --t-end 5 2>"$work/err"
check "an option of run after -- for equilibrium: exit 1, says whose option it is" \
    [ $? -eq 1 ] && has "$work/err" \
    "sweep: '--t-end' after '--' is an option of holosim run, not of holosim equilibrium (which takes --set NAME=VALUE and --params FILE there)" &&
    [ ! -e "$work/x1" ]
"$sweep" --command modes -o "$work/x1" "$torque" tau=1 --method rk4 2>"$work/err"
check "an option of run before -- for modes: exit 1, says so" \
    [ $? -eq 1 ] && has "$work/err" "sweep: unknown option '--method': an option of holosim run, not of holosim modes"
"$sweep" -o "$work/x1" "$torque" tau=1 --command=modes --set m=2 2>"$work/err"
check "--set before --: exit 1, shows where it goes" \
    [ $? -eq 1 ] && has "$work/err" \
    "sweep: unknown option '--set' (options for holosim modes go after '--': sweep --command modes MODEL PARAM=SPEC... -- --set m=2)"
"$sweep" --command modes -o "$work/x1" "$torque" tau=1 -- --linearize 2>"$work/err"
check "-- --linearize: exit 1, why not" [ $? -eq 1 ] && has "$work/err" "'--linearize' after '--': not in a sweep"
"$sweep" --command modes -o "$work/x1" "$torque" tau=1 -- --st m=2 2>"$work/err"
check "a misspelt option after --: did you mean" [ $? -eq 1 ] && has "$work/err" "(did you mean '--set'?)"
"$sweep" --command equilibrium -o "$work/x1" "$torque" tau=1 -- extra 2>"$work/err"
check "an argument after -- that is no option: exit 1" \
    [ $? -eq 1 ] && has "$work/err" "'extra' after '--': holosim equilibrium takes --set NAME=VALUE and --params FILE there, no other argument"
"$sweep" --command equilibrium -o "$work/x1" "$torque" tau=1 -- -o other 2>"$work/err"
check "-o after --: put it before" [ $? -eq 1 ] && has "$work/err" "(put -o DIR before the --)"
"$sweep" --command modes --resume -o "$work/torque" "$torque" tau=0:15:3 2>"$work/err"
check "--resume with another command: exit 1, says which" \
    [ $? -eq 1 ] && has "$work/err" "holds a sweep of holosim equilibrium, not of holosim modes; --force to start over"
"$sweep" --resume -o "$work/torque" "$torque" tau=0:15:3 2>"$work/err"
check "  ... run too" [ $? -eq 1 ] && has "$work/err" "not of holosim run"
check "sweep --help: --command and the summary of equilibrium and modes" \
    sh -c "'$sweep' --help | grep -q -- '--command CMD' && '$sweep' --help | grep -q 'one row per point and eigenvalue'"

# ------------------------------- sweep: hosts without a shared file system
# First GNU parallel alone through the stand-in ssh, as the sweep calls it
# (transfer, a job in its own directory, return, cleanup): where that does
# not work (it failed on one CI machine, for a cause not seen from here) the
# remote tests are skipped, saying so and what parallel said, instead of
# failing on the environment; they run wherever parallel can do its part.
p=$work/probe
mkdir -p "$p/hosts" "$p/run"
echo probe >"$p/run/in.txt"
(cd "$p/run" && FAKE_SSH_ROOT=$p/hosts parallel --will-cite --ssh "$fakessh" -S 1/hostP \
    --workdir ... --transferfile in.txt --return 'out{}.txt' --cleanup \
    'cat in.txt > out{}.txt' ::: 1 >"$p/out" 2>"$p/err")
if [ $? -eq 0 ] && [ "$(cat "$p/run/out1.txt" 2>/dev/null)" = probe ]; then
    remote=1
else
    remote=0
    printf 'SKIP: remote sweeps: GNU parallel cannot run a job through tests/scripts/fake-ssh here: %s\n' \
        "$(cat "$p/err" "$p/out" | head -n 5 | tr '\n' ' ')"
    rm -rf "${TMPDIR:?}"/* "${TMPDIR:?}"/.[!.]* 2>/dev/null   # what parallel left
fi

if [ "$remote" = 1 ]; then
# Two stand-in hosts (fake-ssh) that see only what GNU parallel copies to
# them; the command must not name the local output directory or model path.
r=$work/remote
mkdir -p "$r/hosts" "$r/bin" "$r/run"
ln -s "$HOLOSIM" "$r/bin/holosim"
cp "$model" "$r/run/pendulum.yaml"
(cd "$r/run" && FAKE_SSH_ROOT=$r/hosts FAKE_SSH_PATH=$r/bin \
    FAKE_SSH_FORBID="$r/run/out:$r/run/pendulum.yaml" FAKE_SSH_MISSING=$HOLOSIM \
    "$sweep" --ssh "$fakessh" --sshlogin 1/hostA --sshlogin 1/hostB -o out \
        pendulum.yaml l=1:6:1 -- --t-end 0.2 2>"$work/err")
rc=$?
check "a sweep on two stand-in hosts exits 0" [ $rc -eq 0 ]
[ $rc -eq 0 ] || printf 'sweep said: %s\n' "$(head -n 5 "$work/err" | tr '\n' ' ')"
check "  ... every CSV came back" [ "$(ncsv "$r/run/out")" -eq 6 ] && [ "$(lines "$r/run/out/l=6.csv")" -eq 22 ]
check "  ... the summary is complete" \
    [ "$(awk -F, 'NR > 1 && $2 == 0 && $NF != ""' "$r/run/out/summary.csv" | wc -l)" -eq 6 ]
check "  ... both hosts ran jobs" grep -q hostA "$r/hosts/log" && grep -q hostB "$r/hosts/log"
check "  ... and were cleaned up" [ -z "$(find "$r/hosts" -type f ! -name log)" ]
check "  ... nothing left to merge" [ ! -e "$r/run/out/.sweep/ret" ]
check "fake-ssh itself refuses a forbidden path (exit 255)" sh -c \
    "FAKE_SSH_ROOT='$r/hosts' FAKE_SSH_FORBID='$r/run/out' '$fakessh' hostA -- echo '$r/run/out' 2>/dev/null; [ \$? -eq 255 ]"
(cd "$r/run" && FAKE_SSH_ROOT=$r/hosts FAKE_SSH_PATH=$r/bin FAKE_SSH_FORBID=".sweep/in/sweep" \
    "$sweep" --ssh "$fakessh" -S 1/hostA -o out2 pendulum.yaml l=1 -- --t-end 0.2 >/dev/null 2>&1)
check "a host refusing every job: the sweep exits 1" [ $? -eq 1 ]
check "  ... and its summary says the point did not run" grep -q '"not run"' "$r/run/out2/summary.csv"

(cd "$r/run" && FAKE_SSH_ROOT=$r/hosts FAKE_SSH_MISSING=$HOLOSIM \
    "$sweep" --ssh "$fakessh" -S 1/hostA -o out3 pendulum.yaml l=1 -- --t-end 0.2 >/dev/null 2>&1)
check "a host without holosim: the sweep exits 1" [ $? -eq 1 ]
check "  ... and the point's message says so" grep -q '"holosim not found on .*: put it on PATH or set HOLOSIM"' "$r/run/out3/summary.csv"

# equilibrium and modes through the same machinery: the chunks go to the hosts
cp "$root/tests/scripts/hoop.yaml" "$r/run/hoop.yaml"
(cd "$r/run" && FAKE_SSH_ROOT=$r/hosts FAKE_SSH_PATH=$r/bin \
    FAKE_SSH_FORBID="$r/run/outm:$r/run/hoop.yaml" FAKE_SSH_MISSING=$HOLOSIM \
    "$sweep" --command modes --ssh "$fakessh" -S 1/hostA -S 2/hostB --chunk 4 -o outm \
        hoop.yaml omega=0:6:1 theta0=0,1 2>"$work/err")
check "a modes sweep on two stand-in hosts exits 0" [ $? -eq 0 ]
check "  ... with the summary of the local sweep" cmp -s "$work/modes/summary.csv" "$r/run/outm/summary.csv"
check "  ... and the hosts cleaned up" [ -z "$(find "$r/hosts" -type f ! -name log)" ]
fi

# --------------------------------------------- sweep: installed as holosim-sweep
# bin/holosim-sweep finds bin/holosim beside it, without HOLOSIM or PATH.
mkdir -p "$work/inst/bin"
cp "$sweep" "$work/inst/bin/holosim-sweep"
cp "$fakehs" "$work/inst/bin/holosim"
(real=$HOLOSIM; unset HOLOSIM; HOLOSIM_REAL=$real FAKE_LOG=$work/inst.log FAKE_MARK=installed \
    PATH=/usr/bin:/bin "$work/inst/bin/holosim-sweep" -o "$work/inst/out" "$model" l=1 -- --t-end 0.2 2>/dev/null)
check "holosim-sweep finds the holosim installed beside it" \
    [ $? -eq 0 ] && grep -q 'MARK=installed' "$work/inst.log"
"$work/inst/bin/holosim-sweep" --bogus 2>"$work/err"
check "holosim-sweep names itself in its messages" has "$work/err" "holosim-sweep: unknown option '--bogus'"

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


# ----------------------------------------------- plot: defaults and styles
"$plot" "$work/run.csv" --dry-run >"$work/gp"
check "plot --dry-run prints the gnuplot commands (exit 0)" [ $? -eq 0 ] && grep -q '^plot ' "$work/gp"
check "by default the coordinates only: x (column 2) and y (column 3)" \
    [ "$(grep -o 'using [0-9]*:[0-9]*' "$work/gp" | tr '\n' ' ')" = "using 1:2 using 1:3 " ]
check "the two curves differ in colour" \
    [ "$(grep -o "lc rgb '#[0-9A-F]*'" "$work/gp" | sort -u | wc -l)" -eq 2 ]
check "  ... and in dash type" [ "$(grep -o 'dt [0-9]' "$work/gp" | sort -u | wc -l)" -eq 2 ]
check "the axis labels name the columns" \
    sh -c "grep -qx \"set xlabel 't'\" '$work/gp' && grep -qx \"set ylabel 'x, y'\" '$work/gp'"
printf 'n,a,b\n0,1,2\n1,2,3\n' >"$work/plain.csv"
"$plot" "$work/plain.csv" --dry-run >"$work/gp"
check "no coordinates: every column but the first" \
    [ "$(grep -o 'using [0-9]*:[0-9]*' "$work/gp" | tr '\n' ' ')" = "using 1:2 using 1:3 " ]
"$plot" "$work/plain.csv" -o "$work/plain.png"
check "  ... plotted" is_png "$work/plain.png"

(cd "$work" && "$HOLOSIM" run "$model" --t-end 2 --set l=2 -q >b.csv && cp run.csv a.csv &&
    "$plot" a.csv b.csv --y x -o ab.png && "$plot" a.csv b.csv --y x --dry-run >gp)
check "two files overlaid" is_png "$work/ab.png"
check "  ... with their file names in the legend" \
    sh -c "grep -q \"title 'a.csv'\" '$work/gp' && grep -q \"title 'b.csv'\" '$work/gp'"
check "  ... in different colours and dashes" \
    [ "$(grep -o "lc rgb '#[0-9A-F]*' dt [0-9]" "$work/gp" | sort -u | wc -l)" -eq 2 ]
(cd "$work" && "$plot" a.csv b.csv --dry-run >gp)
check "two files, two columns: colour by column, dash by file" \
    [ "$(grep -c "lc rgb '#0072B2' dt 1 title 'a.csv: x'" "$work/gp"),$(grep -c "lc rgb '#0072B2' dt 2 title 'b.csv: x'" "$work/gp")" = 1,1 ]

"$plot" --model "$model" "$work/run.csv" --dry-run >"$work/gp"
check "--model: the model's name is the title" grep -qx "set title 'planar pendulum'" "$work/gp"
{ cat "$model"; printf 'units:   # per column\n  x: m\n  "x'"'"'": m/s\n  y: m\n'; } >"$work/units.yaml"
"$plot" --model "$work/units.yaml" "$work/run.csv" --dry-run >"$work/gp"
check "--model: units: label the axes" grep -qx "set ylabel 'x, y \\[m\\]'" "$work/gp"
"$plot" --model "$work/units.yaml" "$work/run.csv" --phase x --dry-run >"$work/gp"
check "--model: a primed column's unit" grep -qx "set ylabel 'x'' \\[m/s\\]'" "$work/gp"
"$plot" --model "$work/nonexistent.yaml" "$work/run.csv" -o "$work/e8.png" 2>/dev/null
check "plot: missing --model file exits 1" [ $? -eq 1 ] && [ ! -e "$work/e8.png" ]

# ------------------------------------------------- plot: options anywhere
"$plot" --y x "$work/run.csv" -o "$work/o1.png"
check "plot --y x FILE -o PNG" is_png "$work/o1.png"
"$plot" "$work/run.csv" --y=x -o"$work/o2.png"
check "plot FILE --y=x -oPNG" is_png "$work/o2.png"
cp "$work/run.csv" "$work/-odd.csv"
(cd "$work" && "$plot" --y x -o o3.png -- -odd.csv)
check "plot -- ends the options (a file named -odd.csv)" is_png "$work/o3.png"
"$plot" "$work/run.csv" --titel x -o "$work/e9.png" 2>"$work/err"
check "plot: unknown option exits 1 with did you mean" \
    [ $? -eq 1 ] && has "$work/err" "plot: unknown option '--titel'; did you mean '--title'?"
"$plot" -h >"$work/help"
check "plot -h shows the usage (exit 0)" [ $? -eq 0 ] && has "$work/help" "usage: plot [OPTIONS] [FILE.csv...]"
"$plot" --help | grep -q -- '--dry-run'
check "plot --help lists every option" [ $? -eq 0 ]
"$plot" - - --dry-run </dev/null 2>/dev/null
check "plot: standard input twice exits 1" [ $? -eq 1 ]

# ------------------------------- sweep: contact results and --final columns
# The bouncing ball (h = 1, g = 9.81) comes to rest at the accumulation
# point of its impacts, t_rest = t1 (1 + e)/(1 - e) with t1 = sqrt(2 h/g):
# summary.csv carries t_rest, the impacts and no other transition per point.
bb=$root/models/bouncing_ball.yaml
grep -q '^  h: 1.0 ' "$bb" && grep -q '^  g: 9.81$' "$bb" ||
    fail "models/bouncing_ball.yaml: h or g is not the value the closed form below takes"
d=$work/bounce
"$sweep" -o "$d" "$bb" e=0.3:0.9:0.2 2>"$work/err"
check "restitution sweep of the bouncing ball: exit 0" [ $? -eq 0 ]
check "  ... t_rest = t1 (1 + e)/(1 - e) to 1e-8 at every point, impacts counted, no other transition" \
    awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
        { e = $1; t1 = sqrt(2 / 9.81); want = t1 * (1 + e) / (1 - e); n++
          d = $c["t_rest"] - want; if (d < 0) d = -d
          if ($c["t_rest"] == "" || d > 1e-8 || $c["impacts"] < 10 || $c["transitions"] != 0) {
              print "e=" e ": t_rest " $c["t_rest"] ", want " want ", impacts " $c["impacts"]; bad = 1 } }
        END { exit bad || n != 4 }' "$d/summary.csv"
d=$work/nocontact
"$sweep" -o "$d" "$model" l=1 -- --t-end 0.2 2>/dev/null
check "  ... a model without contacts: impacts 0, transitions 0, t_rest an empty field (never nan)" \
    [ "$(cut -d, -f12-14 "$d/summary.csv" | sed -n 2p)" = "0,0," ]

# The sensitivity dtheta/dl of the pendulum in its angle: theta(t; l) =
# Theta(t sqrt(g/l)) for a fixed start, so dtheta/dl = -t theta'/(2 l) at
# any amplitude; and over neighbouring points of the sweep (l = 1, 1.0005,
# 1.001), the finite difference of theta is Simpson's mean of the three
# sensitivities to O(h^4) (measured 3e-12 relative; the trapezoid's mean
# is off by 1e-5, the midpoint's by 5e-6, in the ratio -2 : 1 of h^2 S''/12
# and h^2 S''/24).
pa=$root/models/pendulum_angle.yaml
d=$work/sens
(cd "$root" && "$sweep" -o "$d" models/pendulum_angle.yaml l=0,1,1.0005,1.001,2 -- --t-end 2 \
    --sensitivity l --final "theta, theta',dtheta/dl" 2>"$work/err")
check "sweep with --sensitivity l --final: exit 1 (l = 0 fails)" [ $? -eq 1 ]
check "  ... the header names final_theta, final_theta', final_dtheta/dl before message" \
    [ "$(head -n 1 "$d/summary.csv")" = "l,exit,steps,rhs_evals,rows,t_reached,max_G,max_Gdot,max_energy_balance,max_power_residual,wall_s,impacts,transitions,t_rest,final_theta,final_theta',final_dtheta/dl,message,file" ]
check "  ... the failed point: exit 2 and every run field empty, the finals too" \
    [ "$(sed -n 2p "$d/summary.csv" | cut -d, -f1-18)" = "0,2,,,,,,,,,,,,,,,,\"models/pendulum_angle.yaml:15:10: error: metric d2T/dv2 is not positive definite: diagonal entry 1 (theta) is 0" ]
check "  ... dtheta/dl = -t theta'/(2 l) at t_reached = 2, to 1e-8" \
    awk -F, 'NR > 2 { want = -$6 * $16 / (2 * $1); d = $17 - want; if (d < 0) d = -d
        if ($6 != 2 || $5 != 201 || d > 1e-8 || $17 == "") { print "l=" $1 ": " $17 ", want " want; bad = 1 }; n++ }
        END { exit bad || n != 4 }' "$d/summary.csv"
check "  ... the finite difference of theta over l = 1 .. 1.001: Simpson's mean of the sensitivities to 1e-8" \
    awk -F, 'NR == 3 { l1 = $1; t1 = $15; s1 = $17 } NR == 4 { sm = $17 } NR == 5 { l2 = $1; t2 = $15; s2 = $17 }
        END { fd = (t2 - t1) / (l2 - l1); d = fd - (s1 + 4 * sm + s2) / 6; if (d < 0) d = -d
              if (sm == "" || d > 1e-8 * (fd < 0 ? -fd : fd)) { printf "fd %.12g, sensitivities %s %s %s\n", fd, s1, sm, s2; exit 1 } }' "$d/summary.csv"
# batch itself: an unknown --final column fails the whole batch up front,
# once (exit 2, the message with the columns), no point run
printf 'name\tl\np\t1\nq\t2\n' >"$work/one.tsv"
mkdir -p "$work/fb"
"$HOLOSIM" batch "$pa" --points "$work/one.tsv" --outdir "$work/fb" --status-dir "$work/fb" \
    --t-end 0.1 --final thetaa -q >"$work/fb.out" 2>"$work/fb.err"
fbrc=$?
check "batch --final thetaa: the batch fails with exit 2" [ "$fbrc" -eq 2 ]
check "  ... before any point: no status, no point's line" \
    [ ! -e "$work/fb/p.status" -a ! -e "$work/fb/q.status" -a ! -s "$work/fb.out" ]
check "  ... one message: did you mean, the columns" \
    [ "$(cat "$work/fb.err")" = "holosim: error: --final: unknown column 'thetaa' (did you mean 'theta'?); the columns of this run: t,theta,theta',E,x,y" ]
printf 'name\te\np\t0.9\n' >"$work/one-e.tsv"
"$HOLOSIM" batch "$bb" --points "$work/one-e.tsv" --outdir "$work/fb" --status-dir "$work/fb" \
    --sensitivity g -q >/dev/null 2>&1
check "batch --sensitivity on a contact model: the point fails with exit 1 and says why" \
    [ $? -eq 1 ] && grep -q '^1,,,,,,,,,,,,,"holosim: error: --sensitivity does not support contacts' "$work/fb/p.status"

# ---------------------------------------------------------------- man pages
for page in holosim-sweep holosim-plot; do
    f=$root/man/$page.1
    groff -man -Tutf8 -ww -z "$f" >"$work/groff.err" 2>&1
    check "$page.1: groff prints no warnings" [ -f "$f" ] && [ ! -s "$work/groff.err" ]
    tool=${page#holosim-}
    groff -man -Tutf8 "$f" 2>/dev/null | sed 's/.\x08//g' >"$work/man.txt"
    # every option --help lists in its option column
    for o in $("$root/scripts/$tool" --help |
               sed -n 's/^  \(-[A-Za-z], \)\{0,1\}\(--[a-z][a-z-]*\).*/\2/p'); do
        check "$page.1 documents $o" grep -q -- "$o" "$work/man.txt"
    done
done

check "no temporary files left by the scripts" no_scratch_left

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
