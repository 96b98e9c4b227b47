#!/bin/sh
# The loader's paths for large models (issue 13, item 6), end to end: past
# 16 names or keys, duplicates are found by sorting and names through a
# hash; the errors must read as they do on small models (message, line,
# column, caret, exit code), and the first bad entry in file order is the
# one reported.  Also: `check` of a chain prints its constraint residuals
# from the sparse G_q; an embedding in angles (the metric route) runs and
# agrees with the same pendulum in Cartesian coordinates.
#
#   HOLOSIM=bin/holosim sh tests/cli_loadspeed.sh   (what `make check` runs)
#
# Same conventions as tests/cli.sh; the last line is `N passed, N failed`.

CLI_NAME=loadspeed
CLI_TIMEOUT=20
. "$(dirname "$0")/cli_lib.sh"

# holosim run in the scratch folder (the models name their files relatively)
hs() {
    (cd "$T" && $TO "$H" "$@") >"$T/out" 2>"$T/err"
    rc=$?
}

# positioned FILE LINE COL MSG: a FILE:LINE:COL error with MSG, the source
# line and a caret under COL
positioned() {
    first=$(head -n 1 "$T/err")
    case $first in
    "$1:$2:$3: error: "*"$4"*) ;;
    *) no "first line '$first', want '$1:$2:$3: error: ...$4...'" ;;
    esac
    caret=$(sed -n 3p "$T/err")
    [ "${#caret}" = $(($3 + 4)) ] || no "caret at column $((${#caret} - 4)), want $3"
    out_empty
}

# chain FILE N [EDIT]: a Cartesian chain of N links (2N coordinates) written
# one entry a line, so that line numbers are easy to name; EDIT is a sed
# script applied to it
chain() {
    awk -v N="$2" 'BEGIN {
        print "parameters: {m: 1, l: 1, g: 9.81}"
        print "coordinates:"
        for (i = 1; i <= N; i++) { print "  - x" i; print "  - y" i }
        print "mass:"
        for (i = 1; i <= 2 * N; i++) print "  - m"
        s = ""
        for (i = 1; i <= N; i++) s = s (i > 1 ? " + " : "") "y" i
        print "potential: m*g*(" s ")"
        print "constraints:"
        print "  c1: x1^2 + y1^2 - l^2"
        for (i = 2; i <= N; i++)
            print "  c" i ": (x" i " - x" i - 1 ")^2 + (y" i " - y" i - 1 ")^2 - l^2"
        print "initial:"
        print "  q:"
        for (i = 1; i <= N; i++) { printf "    x%d: %.17g\n", i, i * sin(1); printf "    y%d: %.17g\n", i, -i * cos(1) }
        print "simulate: {t_end: 0.05, dt: 0.01}"
    }' | sed "${3:-}" > "$T/$1"
}

N=12                       # 24 coordinates: past the plain scans' 16
chain ok.yaml $N

begin chain_checks
hs check ok.yaml
rc_is 0
out_has "n = 24 coordinates, k = 12 constraints"
out_has "initial data: consistent"
[ "$(grep -c 'G_t + G_q v = 0 ' "$T/out")" = 12 ] || no "not 12 residual lines with G_t + G_q v = 0"
end

# line of "  - y5" in the coordinates list: 2 + 2*5
begin duplicate_coordinate_large
chain dupc.yaml $N 's/^  - y5$/  - x3/'
hs run dupc.yaml
rc_is 2; positioned dupc.yaml 12 5 "duplicate coordinate 'x3'"
end

begin duplicate_coordinate_first_reported
chain dupc2.yaml $N 's/^  - y9$/  - x3/; s/^  - y5$/  - x2/'
hs run dupc2.yaml
rc_is 2; positioned dupc2.yaml 12 5 "duplicate coordinate 'x2'"
end

# initial.q: the line of "    y4: ..." is the header lines + ... found by grep
begin duplicate_initial_key_large
chain dupk.yaml $N 's/^    y4: /    x2: /'
line=$(grep -n '^    x2: ' "$T/dupk.yaml" | sed -n 2p | cut -d: -f1)
hs run dupk.yaml
rc_is 2; positioned dupk.yaml "$line" 5 "duplicate key 'x2' in initial.q"
end

begin unknown_initial_key_large
chain unk.yaml $N 's/^    y7: /    yy7: /'
line=$(grep -n '^    yy7: ' "$T/unk.yaml" | cut -d: -f1)
hs run unk.yaml
rc_is 2; positioned unk.yaml "$line" 5 "unknown key 'yy7' in initial.q (did you mean 'y7'?)"
end

begin unknown_before_duplicate
chain both.yaml $N 's/^    y2: /    yy2: /; s/^    y6: /    x1: /'
line=$(grep -n '^    yy2: ' "$T/both.yaml" | cut -d: -f1)
hs run both.yaml
rc_is 2; positioned both.yaml "$line" 5 "unknown key 'yy2' in initial.q"
end

begin missing_initial_value_large
chain miss.yaml $N '/^    y11: /d'
hs run miss.yaml
rc_is 2
grep -F -q "initial.q: missing value for coordinate 'y11'" "$T/err" || no "no missing-value message"
out_empty
end

begin velocity_in_diagonal_mass
chain vmass.yaml $N "s/^  - m\$/  - m + 0*x1/; 30s/^  - m + 0\\*x1\$/  - m + y3'^2/"
line=$(grep -n "y3'" "$T/vmass.yaml" | head -n 1 | cut -d: -f1)
hs run vmass.yaml
rc_is 2
grep -F -q "the mass matrix may not depend on velocities (it uses y3')" "$T/err" ||
    no "no velocity message"
out_empty
end

# a mass given as rows: an off-diagonal entry with a velocity is found too
begin velocity_in_mass_rows
awk 'BEGIN {
    print "coordinates: [a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, a18]"
    print "mass:"
    for (i = 1; i <= 18; i++) {
        s = ""
        for (j = 1; j <= 18; j++)
            s = s (j > 1 ? ", " : "") (i == j ? "1" : (i == 17 && j == 3) || (i == 3 && j == 17) ? "a5'\''" : "0")
        print "  - [" s "]"
    }
    print "initial: {q: [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]}"
    print "simulate: {t_end: 1}"
}' > "$T/rows.yaml"
hs run rows.yaml
rc_is 2
grep -F -q "may not depend on velocities (it uses a5')" "$T/err" || no "no velocity message"
end

# 18 angles, the embedding form (metric route) against 18 Cartesian links
begin angles_match_cartesian
python3 "$ROOT/bench/gen_nlink.py" 18 emb > "$T/e.yaml" &&
    python3 "$ROOT/bench/gen_nlink.py" 18 cart > "$T/c.yaml" || no "gen_nlink.py failed"
hs run e.yaml -q --t-end 0.3 --columns x18,y18
e=$(tail -n 1 "$T/out")
hs run c.yaml -q --t-end 0.3 --columns x18,y18
c=$(tail -n 1 "$T/out")
ex=${e%,*} ey=${e#*,} cx=${c%,*} cy=${c#*,}
awk -v a="$ex" -v b="$cx" -v c="$ey" -v d="$cy" \
    'BEGIN { exit !((a - b < 1e-6 && b - a < 1e-6) && (c - d < 1e-6 && d - c < 1e-6)) }' ||
    no "last bob: angles ($e), Cartesian ($c)"
end

# Memory linear in the model: `check` and a short run of a 2048-link chain
# (4096 coordinates, 2048 constraints) keep no n x n mass matrix and no
# k x n Jacobian, symbolic or numeric; their peak resident set stays under
# 60 MB (a dense n x n array of node pointers alone is 134 MB; 230 MB
# before).  The peak is the kernel's count (wait4), not a time: no flakiness
# from other jobs.  Under ASan (shadow memory) only the results are checked.
case $H in */build/san/*) SAN=1 ;; *) SAN=0 ;; esac
maxrss_kb() {       # maxrss_kb ARGS...: holosim's peak RSS in KB (out, err in $T)
    (cd "$T" && $TO python3 -c 'import os, sys
pid = os.fork()
if pid == 0:
    os.dup2(os.open("out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
    os.dup2(os.open("err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
    os.execv(sys.argv[1], sys.argv[1:])
_, st, ru = os.wait4(pid, 0)
print(ru.ru_maxrss)
sys.exit(os.waitstatus_to_exitcode(st))' "$H" "$@")
}
begin chain2048_memory
chain big.yaml 2048
kb=$(maxrss_kb check big.yaml); rc=$?
rc_is 0
out_has "n = 4096 coordinates, k = 2048 constraints"
out_has "initial data: consistent"
echo "chain2048_memory: check peak RSS ${kb} KB"
[ "$SAN" = 1 ] || [ "${kb:-999999}" -lt 61440 ] || no "check of 2048 links: peak RSS ${kb} KB (want < 60 MB)"
kb=$(maxrss_kb run big.yaml --t-end 0.01 --no-native -q --columns t,y2048); rc=$?
rc_is 0
[ "$(wc -l < "$T/out")" = 3 ] || no "not a header and 2 rows"
echo "chain2048_memory: run peak RSS ${kb} KB"
[ "$SAN" = 1 ] || [ "${kb:-999999}" -lt 61440 ] || no "run of 2048 links: peak RSS ${kb} KB (want < 60 MB)"
end

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
