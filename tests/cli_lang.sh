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

summary
