#!/bin/sh
# The model language at scale at the command line (holosim-model(5),
# FAMILIES, BODIES, FORCE ELEMENTS), POSIX sh:
#
#   HOLOSIM=bin/holosim sh tests/cli_lang.sh       (make check runs it)
#
#   size      --set N=40 rebuilds the N-four-bar: 82 coordinates, 81
#             constraints; `columns` lists the expanded names x_0 ... x_40
#   globs     --columns 't,x_*' selects a family's columns
#   chain     the hanging chain family gives the rows of the same chain
#             written out by bench/chain_model.sh, byte for byte
#   errors    a neighbour out of range: FILE:LINE:COLUMN at the template,
#             the index value named, the caret, exit 2, no CSV
#   derive    lists each family once with its range, then prints the
#             expanded kernels (link_2 in x_1, x_2)
#   sweep     scripts/sweep over N (the size) and g: every point as a
#             single run gives it
#   plot      scripts/plot takes the expanded names (--dry-run)
#   sums      the chain written out in full, each point the running sum of
#             its links, runs as the chain of defines (the structured path)
#             and writes the same rows, byte for byte
#   prefix    the chain written out term by term (x3: a + b + c after
#             x2: a + b), in `embedding` and in `define`, runs as the chain
#             of defines, byte for byte, and as the dense path (values in
#             parentheses are not rewritten) to 1e-9; an error in a
#             rewritten entry points at the file's text; below 32
#             coordinates, or with a name the rewrite would take, the
#             model stays dense; a chart that moves (the pivot shaken)
#             is structured too, every column the dense path's to 1e-8;
#             so is a loop closed over it (constraints on the tip), under
#             each stabilization; a released or dependent constraint
#             sends the model to the dense path (also from stdin)
#   bodies    a chain of 40 rods as `bodies` (the points of an
#             embedding, structured) against the same chain with
#             `kinetic: 0` (the Lagrangian form, dense), every column and
#             a velocity output to 1e-8 (point masses as bodies: the
#             chain of defines, its unknowns and rows); in 3D (two axes)
#             the same, and
#             closed into a loop (the tip's define, which no body reads,
#             held: multipliers too); a
#             body whose moments break the triangle inequality, a pivot
#             that moves, a damper or forces keep the model dense; a bad
#             orientation is the body's own error, at its place; 512
#             rods load (D of a define stays a define); D through a
#             define of an acceleration is an error at the define
#
# The last line of output is always `N passed, N failed`.

CLI_NAME=lang
CLI_TIMEOUT=120
. "$(dirname "$0")/cli_lib.sh"

FOUR=$ROOT/models/nfourbar.yaml
CHAIN=$ROOT/models/hanging_chain.yaml

begin size
hs check "$FOUR" --set N=40
rc_is 0
out_has "n = 82 coordinates, k = 81 constraints"
hs columns "$FOUR" --set N=40
rc_is 0
out_has "x_40"
out_has "lambda_link_40"
out_lacks "x_41"
end

begin globs
hs run "$FOUR" --t-end 0.1 --columns 't,x_*'
rc_is 0
out_line 1 "t,x_0,x_1,x_2,x_3,x_4,x_0',x_1',x_2',x_3',x_4',x_0'',x_1'',x_2'',x_3'',x_4''"
end

begin chain
sh "$ROOT/bench/chain_model.sh" 5 1 > "$T/hand.yaml"
hs run "$T/hand.yaml"
tail -n +2 "$T/out" > "$T/hand.rows"
hs run "$CHAIN" --set N=5 --t-end 1
rc_is 0
tail -n +2 "$T/out" > "$T/fam.rows"
cmp -s "$T/hand.rows" "$T/fam.rows" || no "the family's rows differ from the chain written out"
out_line 1 "t,x_1,y_1,x_2,y_2,x_3,y_3,x_4,y_4,x_5,y_5,x_1',y_1',x_2',y_2',x_3',y_3',x_4',y_4',x_5',y_5',lambda_link_1,lambda_link_2,lambda_link_3,lambda_link_4,lambda_link_5,G_link_1,G_link_2,G_link_3,G_link_4,G_link_5,Gdot_link_1,Gdot_link_2,Gdot_link_3,Gdot_link_4,Gdot_link_5,E"
end

begin errors
sed 's/link\[i=1..N\]: (x\[i\] - x\[i-1\])/link[i=1..N]: (x[i+1] - x[i-1])/' "$FOUR" > "$T/bad.yaml"
hs run "$T/bad.yaml" -o "$T/bad.csv"
rc_is 2
err_has "bad.yaml:22:18: error: x[5] is outside the family x (x[0..4]) (at i = 4)"
err_has "link[i=1..N]: (x[i+1] - x[i-1])^2"
grep -q '^ *\^$' "$T/err" || no "no caret line"
[ -e "$T/bad.csv" ] && no "a CSV was written"
end

begin derive
hs derive "$CHAIN" --set N=2
rc_is 0
out_has "link_2 = (x_2 - x_1)^2"
out_has "U = m*g*(y_1 + y_2)"
out_has "# family in constraints: link[i=1..N] (i = 1..2, 2 entries)"
end

begin sweep
# a sweep over the size: each N is loaded anew, each g of one N moved to
"$ROOT/scripts/sweep" -o "$T/sw" "$CHAIN" N=2,3 g=9.81,1.62 -- --t-end 0.5 > "$T/out" 2> "$T/err"
rc=$?
rc_is 0
err_has "4 points, 4 succeeded"
hs run "$CHAIN" --set N=3 --set g=1.62 --t-end 0.5
tail -n 1 "$T/out" > "$T/one"
f=$(ls "$T"/sw/*N=3*g=1.62*.csv 2>/dev/null | head -n 1)
[ -n "$f" ] && tail -n 1 "$f" | cmp -s - "$T/one" || no "the sweep's N=3, g=1.62 differs from a single run"
end

begin plot
if command -v gnuplot > /dev/null 2>&1; then
    hs run "$CHAIN" --set N=3 --t-end 0.5 -o "$T/c.csv"
    bash "$ROOT/scripts/plot" "$T/c.csv" --y x_1,x_3 --dry-run > "$T/out" 2> "$T/err"
    rc=$?
    rc_is 0
    out_has "x_3"
fi
end

# The same 40-link chain in angles twice: the points as a chain of defines,
# and written out in full as running sums (y negated): the sums telescope
# (holosim(1), STRUCTURED EMBEDDINGS), so both take the structured path and
# write the same numbers.
begin sums
tail='coordinates: ["th[i=1..N]"]
mass:
  x[i=1..N]: m
  y[i=1..N]: m
potential: m*g*sum(i=1..N, y[i])
initial:
  q:
    th[i=1..N]: 0.02*i
simulate: {t_end: 0.3, dt: 0.05, rtol: 1e-10, atol: 1e-10}'
printf 'parameters: {N: 40, m: 1.0, l: 1.0, g: 9.81}\n%s\ndefine:\n  X[0]: 0\n  Y[0]: 0\n  X[i=1..N]: X[i-1] + l*sin(th[i])\n  Y[i=1..N]: Y[i-1] - l*cos(th[i])\nembedding:\n  x[i=1..N]: X[i]\n  y[i=1..N]: Y[i]\n' "$tail" >"$T/defs.yaml"
printf 'parameters: {N: 40, m: 1.0, l: 1.0, g: 9.81}\n%s\nembedding:\n  x[i=1..N]: sum(j=1..i, l*sin(th[j]))\n  y[i=1..N]: -sum(j=1..i, l*cos(th[j]))\n' "$tail" >"$T/full.yaml"
hs check "$T/full.yaml"
rc_is 0
out_has "dynamics: structured embedding, 80 internal unknowns"
hs run "$T/defs.yaml" -o "$T/defs.csv"
rc_is 0
hs run "$T/full.yaml" -o "$T/full.csv"
rc_is 0
[ -s "$T/full.csv" ] && cmp -s "$T/defs.csv" "$T/full.csv" || no "the running sums' rows differ from the chain of defines'"
hs derive "$T/full.yaml"
out_has "# family in define: x__sum[i=(1)+1..N] (i = 2..40, 39 entries)"
end

# Points written out term by term: N links, every point the one before
# plus its own link.  $1 N; $2 how each value is written: full (in
# `embedding`), paren (the same in parentheses), defs (as defines, the
# embedding reading them).
written() {
    awk -v N="$1" -v W="$2" 'BEGIN {
        print "parameters: {m: 1.0, l: 1.0, g: 9.81}"
        s = ""; for (i = 1; i <= N; i++) s = s (i > 1 ? ", " : "") "th" i
        print "coordinates: [" s "]"
        x = ""; y = "0"
        for (i = 1; i <= N; i++) {
            x = x (i > 1 ? " + " : "") "l*sin(th" i ")"; y = y " - l*cos(th" i ")"
            X[i] = x; Y[i] = y
        }
        if (W == "defs" || W == "bodies") {
            print "define:"
            for (i = 1; i <= N; i++) print "  X" i ": " X[i] "\n  Y" i ": " Y[i]
        }
        if (W == "bodies") {      # point masses as bodies at the defines
            print "bodies:"
            for (i = 1; i <= N; i++) print "  p" i ": {mass: m, position: [X" i ", Y" i ", 0]}"
            s = ""; for (i = 1; i <= N; i++) s = s (i > 1 ? " + " : "") "Y" i
            print "potential: m*g*(" s ")"
        }
        if (W != "bodies") print "embedding:"
        for (i = 1; i <= N; i++)
            if (W == "defs") print "  x" i ": X" i "\n  y" i ": Y" i
            else if (W == "bodies") continue
            else if (W == "paren") print "  x" i ": (" X[i] ")\n  y" i ": (" Y[i] ")"
            else print "  x" i ": " X[i] "\n  y" i ": " Y[i]
        s = ""; for (i = 1; i <= 2 * N; i++) s = s (i > 1 ? ", " : "") "m"
        if (W != "bodies") print "mass: [" s "]"
        s = ""; for (i = 1; i <= N; i++) s = s (i > 1 ? " + " : "") "y" i
        if (W != "bodies") print "potential: m*g*(" s ")"
        s = ""; for (i = 1; i <= N; i++) s = s (i > 1 ? ", " : "") "th" i ": " 0.02 * i
        print "initial: {q: {" s "}}"
        print "simulate: {t_end: 0.3, dt: 0.05, rtol: 1e-10, atol: 1e-10}"
    }'
}
# the largest difference between two CSVs of the same shape
csv_diff() {
    awk -F, 'NR == FNR { for (i = 1; i <= NF; i++) a[FNR, i] = $i; n = FNR; next }
        FNR > 1 { for (i = 1; i <= NF; i++) { d = a[FNR, i] - $i; if (d < 0) d = -d
                  if (d > m) m = d } }
        END { if (FNR != n) print "rows"; else printf "%.3g\n", m }' "$1" "$2"
}

begin prefix
written 40 full >"$T/pfull.yaml"
written 40 paren >"$T/pparen.yaml"
written 40 defs >"$T/pdefs.yaml"
hs check "$T/pfull.yaml"
rc_is 0
out_has "dynamics: structured embedding, 80 internal unknowns"
hs check "$T/pdefs.yaml"
rc_is 0
out_has "dynamics: structured embedding, 80 internal unknowns"
hs check "$T/pparen.yaml"
rc_is 0
out_lacks "structured"
for w in full paren defs; do
    hs run "$T/p$w.yaml" -o "$T/p$w.csv"
    rc_is 0
done
[ -s "$T/pfull.csv" ] && cmp -s "$T/pfull.csv" "$T/pdefs.csv" ||
    no "the points written out give other rows than the chain of defines"
d=$(csv_diff "$T/pfull.csv" "$T/pparen.csv")
awk -v d="$d" 'BEGIN { exit !(d != "rows" && d + 0 < 1e-9) }' ||
    no "structured and dense paths differ by $d (want < 1e-9)"
end

# A chart that moves (the pivot shaken, holosim(1) STRUCTURED EMBEDDINGS):
# written term by term it takes the structured path, and every column
# (energy, Jacobi integral, the time's work) is the dense path's
# $1 a structured model, $2 the same on the dense path: every column of
# their runs the same to 1e-8 ($3 names the case)
same_as_dense() {
    hs run "$1" --columns all -o "$1.csv"
    rc_is 0
    hs run "$2" --columns all -o "$2.csv"
    rc_is 0
    d=$(csv_diff "$1.csv" "$2.csv")
    awk -v d="$d" 'BEGIN { exit !(d != "rows" && d + 0 < 1e-8) }' ||
        no "$3: structured and dense paths differ by $d (want < 1e-8)"
}

begin prefix_moving
written 40 full | sed 's/^\(  x[0-9]*: \)/\1a*sin(w*t) + /; s/^\(  y[0-9]*: \)0 /\10.5*a*cos(w*t) /;
    s/^parameters: {/parameters: {a: 0.1, w: 7.0, /' >"$T/pmove.yaml"
sed 's/^\(  [xy][0-9]*: \)\(.*\)$/\1(\2)/' "$T/pmove.yaml" >"$T/pmovep.yaml"
hs check "$T/pmove.yaml"
rc_is 0
out_has "dynamics: structured embedding, 80 internal unknowns"
hs check "$T/pmovep.yaml"
rc_is 0
out_lacks "structured"
same_as_dense "$T/pmove.yaml" "$T/pmovep.yaml" "a moving chart"
head -n 1 "$T/pmove.yaml.csv" | grep -q ",H,.*,W_t," || no "no H or W_t column"
end

# Ambient masses that read the positions (holosim(1), STRUCTURED
# EMBEDDINGS): each x mass reads its link's angle, the last y mass the tip's
# height; structured against the dense path (parenthesized points), every
# column, energy included
begin prefix_heavy
heavy() {
    written 40 "$1" | awk '/^mass:/ { s = ""
        for (i = 1; i <= 40; i++) s = s (i > 1 ? ", " : "") "m*(1 + 0.05*th" i "^2), " \
            (i < 40 ? "m" : "m*(1 + 0.1*y40^2)")
        print "mass: [" s "]"; next } { print }'
}
heavy full >"$T/pheavy.yaml"
heavy paren >"$T/pheavyp.yaml"
hs check "$T/pheavy.yaml"
rc_is 0
out_has "dynamics: structured embedding, 80 internal unknowns"
hs check "$T/pheavyp.yaml"
rc_is 0
out_lacks "structured"
same_as_dense "$T/pheavy.yaml" "$T/pheavyp.yaml" "moving masses"
end

# A loop closed over the chain (holosim(1), STRUCTURED EMBEDDINGS): N
# links written term by term, the tip pinned at (d, 0) by constraints on
# the ambient names; $2 full or paren (the dense path).  The start, an
# arc, is projected onto the constraints.
closed() {
    awk -v N="$1" -v W="$2" 'BEGIN {
        print "parameters: {m: 1.0, l: 1.0, g: 9.81, d: " N * 0.8 "}"
        s = ""; for (i = 1; i <= N; i++) s = s (i > 1 ? ", " : "") "th" i
        print "coordinates: [" s "]"
        x = ""; y = "0"
        print "embedding:"
        for (i = 1; i <= N; i++) {
            x = x (i > 1 ? " + " : "") "l*sin(th" i ")"; y = y " - l*cos(th" i ")"
            if (W == "paren") print "  x" i ": (" x ")\n  y" i ": (" y ")"
            else print "  x" i ": " x "\n  y" i ": " y
        }
        s = ""; for (i = 1; i <= 2 * N; i++) s = s (i > 1 ? ", " : "") "m"
        if (W != "bodies") print "mass: [" s "]"
        s = ""; for (i = 1; i <= N; i++) s = s (i > 1 ? " + " : "") "y" i
        if (W != "bodies") print "potential: m*g*(" s ")"
        print "constraints: {cx: x" N " - d, cy: y" N "}"
        s = ""
        for (i = 1; i <= N; i++)
            s = s (i > 1 ? ", " : "") "th" i ": " sprintf("%.6f", 2.7708 - 2.4 * (i - 0.5) / N)
        print "initial: {q: {" s "}}"
        print "simulate: {t_end: 0.5, dt: 0.05, rtol: 1e-10, atol: 1e-10}"
    }'
}

begin prefix_closed
closed 40 full >"$T/cl.yaml"
closed 40 paren >"$T/clp.yaml"
hs check "$T/cl.yaml"
rc_is 0
out_has "dynamics: structured embedding, 80 internal unknowns"
out_has "rank of G_q at t0: 2 of 2"
out_has "the structured saddle-point system with the constraints' rows regular at t0"
hs check "$T/clp.yaml"
rc_is 0
out_lacks "structured"
for st in projection baumgarte none; do
    hs run "$T/cl.yaml" --stabilize "$st" --columns all -o "$T/cl.csv"
    rc_is 0
    hs run "$T/clp.yaml" --stabilize "$st" --columns all -o "$T/clp.csv"
    rc_is 0
    head -n 1 "$T/cl.csv" | grep -q ",lambda_cx,lambda_cy," || no "no multipliers' columns"
    d=$(csv_diff "$T/cl.csv" "$T/clp.csv")
    awk -v d="$d" 'BEGIN { exit !(d != "rows" && d + 0 < 1e-8) }' ||
        no "a closed loop ($st): structured and dense paths differ by $d (want < 1e-8)"
done
# a constraint an event lets go, and a dependent one: the dense path, the
# same numbers as the dense file's
sed 's/^simulate:/events: {go: {when: t > 0.2, action: release cy}}\nsimulate:/' "$T/cl.yaml" >"$T/clr.yaml"
sed 's/^simulate:/events: {go: {when: t > 0.2, action: release cy}}\nsimulate:/' "$T/clp.yaml" >"$T/clrp.yaml"
hs check "$T/clr.yaml"
rc_is 0
out_lacks "structured"
same_as_dense "$T/clr.yaml" "$T/clrp.yaml" "a released loop (both dense)"
sed 's/^constraints: {cx: x40 - d, cy: y40}/constraints: {cx: x40 - d, cy: y40, cz: 2*x40 - 2*d}/' \
    "$T/cl.yaml" >"$T/cld.yaml"
hs check "$T/cld.yaml"
rc_is 0
out_lacks "structured"
out_has "rank of G_q at t0: 2 of 3"
hs run - -o "$T/cld.csv" <"$T/cld.yaml"
rc_is 0
[ -s "$T/cld.csv" ] || no "a dependent loop from standard input wrote no rows"
end

begin prefix_error
written 40 full | sed '/^  x5:/s/sin(th5)/sin(thq5)/' >"$T/perr.yaml"
hs check "$T/perr.yaml"
rc_is 2
err_has "perr.yaml:12:65: error: unknown name 'thq5' (did you mean 'th5'?)"
err_has "  x5: l*sin(th1) + l*sin(th2) + l*sin(th3) + l*sin(th4) + l*sin(thq5)"
[ "$(sed -n 3p "$T/err")" = "$(printf '%69s' '^')" ] || no "the caret is not under thq5"
end

begin prefix_small
written 31 full >"$T/p31.yaml"
hs check "$T/p31.yaml"
rc_is 0
out_lacks "structured"
out_has "mass matrix: full"
# a parameter holding a name the rewrite would make: left as written
written 40 full | sed 's/^parameters: {/parameters: {x7__sum: 0, /' >"$T/ptaken.yaml"
hs check "$T/ptaken.yaml"
rc_is 0
out_lacks "structured"
end

# A chain of N rods as bodies (planar: one axis; 3d: two axes; 3dm: the
# pivot shaken; arc: planar, started on an arc, the tip's define X_N, Y_N
# held where it starts: a loop, constraints on defines no body reads); $3
# extra top-level text (kinetic: 0 for the dense path).
rods() {
    awk -v N="$1" -v D="$2" -v X="$3" 'BEGIN {
        if (M = D == "3dm") D = "3d"
        if (A = D == "arc") D = "planar"
        printf "parameters: {m: 1.0, l: 1.0, g: 9.81, a0: 0.1, w: 7.0}\n"
        printf "coordinates:\n"
        for (i = 1; i <= N; i++) printf "  - a%d\n", i
        for (i = 1; D == "3d" && i <= N; i++) printf "  - b%d\n", i
        printf "define:\n"
        if (M) printf "  X0: a0*sin(w*t)\n  Y0: 0\n  Z0: 0\n"
        else if (D == "3d") printf "  X0: 0\n  Y0: 0\n  Z0: 0\n"
        else printf "  X0: 0\n  Y0: 0\n"
        for (i = 1; i <= N; i++) {
            if (D == "3d") {
                u[1] = "-sin(a" i ")*sin(b" i ")"; u[2] = "cos(a" i ")*sin(b" i ")"; u[3] = "-cos(b" i ")"
                printf "  X%d: X%d + l*%s\n  Y%d: Y%d + l*%s\n  Z%d: Z%d + l*%s\n", i, i - 1, u[1], i, i - 1, u[2], i, i - 1, u[3]
            } else {
                printf "  X%d: X%d + l*sin(a%d)\n  Y%d: Y%d - l*cos(a%d)\n", i, i - 1, i, i, i - 1, i
            }
        }
        printf "bodies:\n"
        for (i = 1; i <= N; i++) {
            printf "  rod%d:\n    mass: m\n", i
            if (D == "3d") {
                printf "    inertia: [2*m, 3*m, 4*m]\n"
                printf "    position: [\"X%d + l/2*%s\", \"Y%d + l/2*%s\", \"Z%d + l/2*%s\"]\n", i - 1, u[1], i - 1, u[2], i - 1, u[3]
                printf "    orientation: {axes: [[z, a%d], [x, b%d]]}\n", i, i
            } else {
                printf "    inertia: [m*l^2/24, m*l^2/18, m*l^2/12]\n"
                printf "    position: [X%d + l/2*sin(a%d), Y%d - l/2*cos(a%d), 0]\n", i - 1, i, i - 1, i
                printf "    orientation: {axes: [[z, a%d]]}\n", i
            }
        }
        if (X != "") printf "%s\n", X
        for (i = 1; A && i <= N; i++) { tx += sin(0.5 + 0.02 * i); ty -= cos(0.5 + 0.02 * i) }
        if (A) printf "constraints: {tx: X%d - %.17g, ty: Y%d - %.17g}\n", N, tx, N, ty
        p = ""
        for (i = 1; i <= N; i++) p = p (i > 1 ? " + " : "") "rod" i (D == "3d" ? "_z" : "_y")
        printf "potential: m*g*(%s)\n", p
        printf "initial:\n  q:\n"
        for (i = 1; i <= N; i++) printf "    a%d: %.17g\n", i, D == "3d" ? 0.3 : A ? 0.5 + 0.02 * i : 1.0
        for (i = 1; D == "3d" && i <= N; i++) printf "    b%d: 0.5\n", i
        printf "outputs:\n  vtip: rod%d_vx\n  wtip: rod%d_wz\n", N, N
        printf "simulate: {t_end: 0.5, dt: 0.05, rtol: 1e-10, atol: 1e-10}\n"
    }'
}

# the structured (bodies alone) and the dense (kinetic: 0) run of $1 rods
# in $2, every default column and the outputs to 1e-8
rods_same() {
    rods "$1" "$2" "" >"$T/rs.yaml"
    rods "$1" "$2" "kinetic: 0" >"$T/rd.yaml"
    hs check "$T/rs.yaml"
    rc_is 0
    out_has "form: embedding"
    out_has "dynamics: structured embedding"
    hs check "$T/rd.yaml"
    rc_is 0
    out_lacks "structured"
    hs run "$T/rs.yaml" -o "$T/rs.csv"
    rc_is 0
    hs run "$T/rd.yaml" -o "$T/rd.csv"
    rc_is 0
    cmp -s "$(head -n 1 "$T/rs.csv" >"$T/h1"; echo "$T/h1")" \
        "$(head -n 1 "$T/rd.csv" >"$T/h2"; echo "$T/h2")" || no "$2 rods: other columns"
    grep -q ',vtip,wtip$' "$T/h1" || no "$2 rods: no velocity outputs"
    d=$(csv_diff "$T/rs.csv" "$T/rd.csv")
    awk -v d="$d" 'BEGIN { exit !(d != "rows" && d + 0 < 1e-8) }' ||
        no "$2 rods: bodies as points and the Lagrangian form differ by $d (want < 1e-8)"
    [ "$(wc -l <"$T/rs.csv")" -eq 12 ] || no "$2 rods: not 11 rows"
}

begin bodies_planar
rods_same 40 planar
# point masses as bodies (no orientation) at the chain's defines: the
# chain of defines itself, as many unknowns, the same rows
written 40 bodies >"$T/pbod.yaml"
written 40 defs >"$T/pdefs.yaml"
hs check "$T/pbod.yaml"
rc_is 0
out_has "dynamics: structured embedding, 80 internal unknowns"
hs run "$T/pbod.yaml" -o "$T/pbod.csv"
rc_is 0
hs run "$T/pdefs.yaml" -o "$T/pdefs.csv"
rc_is 0
d=$(csv_diff "$T/pbod.csv" "$T/pdefs.csv")
awk -v d="$d" 'BEGIN { exit !(d != "rows" && d + 0 < 1e-9) }' ||
    no "point-mass bodies and the chain of defines differ by $d (want < 1e-9)"
end

begin bodies_closed
rods_same 40 arc
grep -q ',lambda_tx,lambda_ty,' "$T/h1" || no "closed rods: no multiplier columns"
end

begin bodies_3d
rods_same 32 3d
# moments 1, 1, 5 (no points carry them), a shaken pivot (the Lagrangian
# form's E is v^T M v / 2, the embedding's all of T), a damper, forces:
# dense
rods 32 3dm "" >"$T/rm.yaml"
hs check "$T/rm.yaml"
rc_is 0
out_lacks "structured"
rods 32 3d "" | sed 's/inertia: \[2\*m, 3\*m, 4\*m\]/inertia: [m, m, 5*m]/' >"$T/rt.yaml"
hs check "$T/rt.yaml"
rc_is 0
out_lacks "structured"
out_has "form: Lagrangian"
# a bad orientation in a large model of bodies: the body's own error
rods 32 3d "" | sed '0,/orientation: {axes: \[\[z, a1\], \[x, b1\]\]}/s//orientation: {matrix: [[1, 0, 0], [0, 1, 0]]}/' >"$T/rbm.yaml"
hs check "$T/rbm.yaml"
rc_is 2
err_has "rbm.yaml:172:27: error: 'matrix' must be 3 rows of 3 expressions"
rods 32 3d "" | sed '0,/orientation: {axes: \[\[z, a1\], \[x, b1\]\]}/s//orientation: [z, a1]/' >"$T/rbo.yaml"
hs check "$T/rbo.yaml"
rc_is 2
err_has "rbo.yaml:172:18: error: 'orientation' must be one of"
rods 40 planar "dissipation: 0.1*a1'^2" >"$T/rdis.yaml"
hs check "$T/rdis.yaml"
rc_is 0
out_lacks "structured"
rods 40 planar "forces: {a1: 0.1}" >"$T/rfor.yaml"
hs check "$T/rfor.yaml"
rc_is 0
out_lacks "structured"
end

begin bodies_large
rods 512 planar "" >"$T/r512.yaml"
hs check "$T/r512.yaml"
rc_is 0
out_has "dynamics: structured embedding"
# D through a define that holds an acceleration: an error at the define
rods 32 planar "" | sed 's/^define:/define:\n  acc: a1'"''"'/; s/^outputs:/outputs:\n  jerk: D(acc)/' \
    >"$T/racc.yaml"
hs check "$T/racc.yaml"
rc_is 2
err_has "racc.yaml:36:8: error: D(...) of an expression holding the acceleration a1'' (through this define): holosim has no third derivatives"
err_has "  acc: a1''"
end

summary
