#!/bin/sh
# Hostile and large inputs of scripts/plot (issue 30): every string that
# reaches gnuplot (file names, column names, --title, the model's name and
# units) is quoted for every character gnuplot treats specially, so none
# runs a command; set-up is linear in the number of columns; a flat --traj
# keeps a readable y axis; --points markers are visible, off the frame.
# Prints one line per failure, then exactly one final line "N passed, N failed".
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
HOLOSIM=${HOLOSIM:-$root/bin/holosim}
case $HOLOSIM in /*) ;; *) HOLOSIM=$(pwd)/$HOLOSIM ;; esac
plot=$root/scripts/plot
LC_ALL=C
export LC_ALL

work=$(mktemp -d "${TMPDIR:-/tmp}/holosim-plot.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
mkdir "$work/tmp"
TMPDIR=$work/tmp
export TMPDIR

npass=0 nfail=0
pass() { npass=$((npass + 1)); }
fail() { nfail=$((nfail + 1)); printf 'FAIL: %s\n' "$*"; }
check() { _what=$1; shift; if "$@"; then pass; else fail "$_what"; fi; }
is_png() {
    [ -f "$1" ] && [ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ]
}
no_pwn() {    # no file PWN1 ... PWN9: no planted command ran
    for _i in 1 2 3 4 5 6 7 8 9; do [ ! -e "$work/PWN$_i" ] || return 1; done
}

if ! command -v gnuplot >/dev/null 2>&1; then
    echo "tests/scripts_plot.sh: gnuplot is missing: run HOLOSIM_FULL_DEPS=1 sh scripts/install-deps.sh" >&2
    echo "0 passed, 1 failed"
    exit 1
fi

cd "$work" || exit 1
nl='
'
printf 't,x,y\n0,1,0\n1,2,0\n2,3,0\n' >ok.csv

# ---- a file name with a line break and gnuplot commands after it
f="evil${nl}system(\"touch PWN1\")${nl}print \`touch PWN2\`${nl}.csv"
cp ok.csv "$f"
"$plot" "$f" -o f1.png 2>err
check "a file name with a line break: plotted (exit 0)" [ $? -eq 0 ]
check "  ... a PNG" is_png f1.png
"$plot" "$f" ok.csv --y x -o f2.png 2>err
check "  ... with another file (in the legend)" is_png f2.png
check "  ... and no command ran" no_pwn

# ---- --title with every special character
t="a'b\"c\\${nl}system(\"touch PWN3\")${nl}\`touch PWN4\` @x \$(touch PWN5) \\"
"$plot" ok.csv --title "$t" -o t1.png 2>err
check "a hostile --title: plotted" is_png t1.png
"$plot" ok.csv --title "$(printf 'cr\rtab\tbell\001end')" --traj x,y -o t2.png 2>err
check "control characters in --title: plotted" is_png t2.png
check "  ... and no command ran" no_pwn
"$plot" ok.csv --title "a${nl}b'c" --dry-run >gp
check "--dry-run: a line break as an octal escape, quotes doubled" \
    grep -qxF "set title ('a'.\"\\012\".'b''c')" gp
check "  ... every command one line" [ "$(grep -c '^plot ' gp)" -eq 1 ]

# ---- column names and the model's name and units
printf 't,q'"'"'`touch PWN6`,@x\\\n0,1,2\n1,2,3\n' >cols.csv
"$plot" cols.csv --y "q'\`touch PWN6\`,@x\\" -o c1.png 2>err
check "hostile column names: plotted" is_png c1.png
cat >m.yaml <<'EOY'
name: "x'y`touch PWN7`\"
units: {x: "m'`touch PWN8`", y: '\'}
EOY
"$plot" ok.csv --model m.yaml -o m1.png 2>err
check "a hostile model name and units: plotted" is_png m1.png
check "  ... and no command ran" no_pwn

# ---- 3,501 columns: linear set-up (was 46 s)
awk 'BEGIN { n = 3500; s = "t"
    for (i = 1; i <= n / 2; i++) s = s ",q" i
    for (i = 1; i <= n / 2; i++) s = s ",q" i "'"'"'"
    print s
    for (r = 0; r < 3; r++) { s = r; for (i = 1; i <= n; i++) s = s "," r * i; print s } }' >wide.csv
s0=$(date +%s)
"$plot" wide.csv --dry-run >gp
s1=$(date +%s)
check "3,501 columns: the commands in under 15 s (took $((s1 - s0)) s)" [ $((s1 - s0)) -lt 15 ]
check "  ... one curve per coordinate (1,750)" [ "$(grep -c 'using 1:' gp)" -eq 1750 ]

# ---- issue 29: a flat --traj, --points
awk 'BEGIN { print "t,x,y"; for (i = 0; i <= 100; i++) print i / 10 "," i / 10 ",0" }' >flat.csv
"$plot" flat.csv --traj x,y --dry-run >gp
check "flat --traj: the y range is a quarter of the x range or more" \
    awk '/^set [xy]range \[/ { sub(/^set /, ""); sub(/range \[/, ":"); sub(/\]$/, "")
            split($0, r, ":"); span[r[1]] = r[3] - r[2] }
        END { exit !(span["x"] > 0 && span["y"] >= span["x"] / 4) }' gp
"$plot" flat.csv --traj x,y -o flat.png
check "  ... plotted" is_png flat.png
"$plot" ok.csv --points --y x --dry-run >gp
check "--points: markers of size 0.8 or more" grep -q 'with points pt 7 ps 0.8' gp
check "  ... the end points off the frame (x offsets)" \
    grep -qx 'set offsets graph 0.03, graph 0.03, graph 0.05, graph 0.05' gp

cd "$root" || exit 1
check "no temporary files left by plot" [ -z "$(ls -A "$TMPDIR")" ]
echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
