#!/bin/sh
# End-to-end tests of inputs (holosim-model(5), INPUTS; holosim(1),
# --input): a push read from a table against the same push written as an
# expression of t, the tables' errors with their positions, the section's
# errors, check's list.
#
#   HOLOSIM=bin/holosim sh tests/cli_inputs.sh
#
# The last line of output is always `N passed, N failed`.

CLI_NAME=inputs
CLI_TIMEOUT=20
. "$(dirname "$0")/cli_lib.sh"

placed() {
    first=$(head -n 1 "$T/err")
    case $first in
    "$1:$2:$3: error: "*) ;;
    *) no "stderr starts '$first', want '$1:$2:$3: error: ...'" ;;
    esac
    caret=$(sed -n 3p "$T/err")
    [ "${#caret}" = $(($3 + 4)) ] || no "caret at column $((${#caret} - 4))"
}
# the largest |a - b| over the columns 2..NC of two CSVs of the same rows
maxdiff() {
    paste -d, "$1" "$2" | awk -F, -v nc="$3" 'NR == 1 { next }
        { for (i = 1; i <= nc; i++) { d = $i - $(i + nc); if (d < 0) d = -d; if (d > m) m = d } }
        END { printf "%.3g\n", m + 0 }'
}

cd "$T" || exit 1
cat >push.yaml <<'EOF'
name: pushed cart-pole
parameters: {M: 1, m: 0.1, l: 0.5, g: 9.81}
inputs: [F]
coordinates: [x, th]
kinetic: 0.5*(M+m)*x'^2 + m*l*x'*th'*cos(th) + 0.5*m*l^2*th'^2
potential: -m*g*l*cos(th)
forces: {x: F}
initial: {q: {x: 0, th: 0.1}}
simulate: {t_end: 2, dt: 0.05, rtol: 1e-12, atol: 1e-12}
EOF
printf 't,F\n0,0\n0.35,1\n0.7,-0.5\n1.2,0.25\n' >push.csv
# the same piecewise linear push, held after its last row
EXPR='if(t < 0.35, t/0.35, if(t < 0.7, 1 - 1.5*(t - 0.35)/0.35, if(t < 1.2, -0.5 + 0.75*(t - 0.7)/0.5, 0.25)))'

begin "a push from a table equals the same push as an expression of t, row by row"
hs run push.yaml --input F=push.csv -o table.csv -q
rc_is 0
hs run push.yaml --input "F=$EXPR" -o expr.csv -q
rc_is 0
d=$(maxdiff table.csv expr.csv 6)
awk -v d="$d" 'BEGIN { exit !(d <= 1e-9) }' || no "rows differ by $d"
hs run push.yaml -q
cmp -s "$T/out" table.csv && no "the push changed nothing"
end

begin "interpolated rows: the same push, a table in another column order"
printf 'F,t\n0,0\n1,0.35\n-0.5,0.7\n0.25,1.2\n' >swapped.csv
hs run push.yaml --input F=swapped.csv --output-mode interpolate -o interp.csv -q
rc_is 0
d=$(maxdiff interp.csv expr.csv 6)
awk -v d="$d" 'BEGIN { exit !(d <= 1e-9) }' || no "rows differ by $d"
end

begin "a table of t and one other column, any name; the last --input wins"
printf 't,force\n0,0\n0.35,1\n0.7,-0.5\n1.2,0.25\n' >other.csv
hs run push.yaml --input F=3 --input F=other.csv -o other_out.csv -q
rc_is 0
cmp -s other_out.csv table.csv || no "not the table's run"
end

begin "a long table (20001 rows): each evaluation reads one piece, every row a step end"
awk 'BEGIN { print "t,F"; for (i = 0; i <= 20000; i++) printf "%.4f,%.17g\n", i/10000, sin(i/1000) }' >long.csv
hs run push.yaml --input F=long.csv --t-end 2 --dt 0.5 -q --summary long_sum.csv
rc_is 0
steps=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "steps") c = i } NR == 2 { print $c }' long_sum.csv)
[ "${steps:-0}" -ge 20000 ] || no "$steps steps: the rows' times are not all step ends"
end

begin "an input not given is 0; an expression of t and parameters"
hs run push.yaml --input 'F=0*m*t' -o zero.csv -q
hs run push.yaml -o none.csv -q
cmp -s zero.csv none.csv || no "F = 0 differs from no --input"
end

begin "check lists the inputs and their sources"
hs check push.yaml --input F=push.csv
rc_is 0
out_has "inputs: F = table push.csv: 4 rows, t from 0 to 1.2"
out_has "4 parameters"
hs check push.yaml
out_has "inputs: F = 0 (no --input)"
end

begin "batch passes --input through"
printf 'name\tl\np1\t0.5\n' >points.tsv
mkdir -p bo bs
hs batch push.yaml --points points.tsv --outdir bo --status-dir bs --input F=push.csv -q
rc_is 0
f=bo/p1.csv
[ -n "$f" ] && cmp -s "$f" table.csv || no "the batch point is not the table's run ($f)"
end

begin "an input in a constraint: a prescribed motion, its derivatives exact"
# y = s(t) = t^2/2: y' = t and m y'' = -m g + lambda, so lambda = m (1 + g)
cat >lift.yaml <<'EOF'
parameters: {m: 2, g: 9.81}
inputs: [s]
coordinates: [x, y]
mass: [m, m]
potential: m*g*y
constraints: {track: y - s}
initial: {q: {x: 0, y: 0}, v: {x: 1, y: 0}}
simulate: {t_end: 1, dt: 0.25}
EOF
hs run lift.yaml --input 's=0.5*t^2' -q
rc_is 0
awk -F, 'NR > 1 { t = $1; d1 = $3 - t*t/2; d2 = $5 - t; d3 = $6 - 2*(1 + 9.81);
                  if (d1 < 0) d1 = -d1; if (d2 < 0) d2 = -d2; if (d3 < 0) d3 = -d3;
                  if (d1 > 1e-12 || d2 > 1e-12 || d3 > 1e-12) exit 1 }' "$T/out" ||
    no "not y = t^2/2, y' = t, lambda = m (1 + g): $(sed -n 5p "$T/out")"
end

begin "sweep copies an input table with the model (a relative path works)"
if command -v bash >/dev/null 2>&1; then
    HOLOSIM=$H bash "$ROOT/scripts/sweep" -o sw push.yaml l=0.5 -- --input F=push.csv \
        >sweep.out 2>&1 || no "sweep failed: $(tail -n 2 sweep.out)"
    [ -f sw/.sweep/in/input-1.csv ] || no "no copy of the table"
    cmp -s "sw/l=0.5.csv" table.csv || no "the sweep's point is not the table's run"
fi
end

begin "equilibrium and modes take an input at its value at t0"
cat >spring.yaml <<'EOF'
parameters: {k: 4, m: 1}
inputs: [F]
coordinates: [x]
mass: [m]
potential: 0.5*k*x^2
forces: {x: F}
initial: {t: 1, q: {x: 0}}
EOF
hs equilibrium spring.yaml --input 'F=2*t' --csv
rc_is 0
out_line 2 "0.5,1,stable"
printf 't,F\n0,0\n2,4\n' >ramp.csv
hs equilibrium spring.yaml --input F=ramp.csv --csv
out_line 2 "0.5,1,stable"
hs modes spring.yaml --input F=ramp.csv --csv
rc_is 0
out_line 2 "1,0,2,1,0"
end

# ---- errors ----------------------------------------------------------------

printf 't,F\n0,0\n0.5,1\n0.5,2\n' >dup_t.csv
printf 't,F\n0,0\n0.5,nan\n' >nan.csv
printf 't,F\n0,0\n0.5,inf\n' >inf.csv
printf 't,G,H\n0,0,1\n' >nocol.csv
printf 'F,G\n0,1\n' >not.csv
printf 't,F\n0,0\n1,x\n' >word.csv
printf 't,F\n' >norows.csv

begin "a table whose t does not increase: exit 2 at the cell"
hs run push.yaml --input F=dup_t.csv
rc_is 2
placed dup_t.csv 4 1
err_has "must increase strictly"
out_empty
end

begin "a table holding a NaN, an infinity, a word: exit 2 at the cell"
hs run push.yaml --input F=nan.csv
rc_is 2
placed nan.csv 3 5
err_has "not a finite number"
hs run push.yaml --input F=inf.csv
rc_is 2
placed inf.csv 3 5
hs run push.yaml --input F=word.csv
rc_is 2
placed word.csv 3 3
err_has "'x' in column F is not a number"
end

begin "a table without the input's column or without t; without rows"
hs run push.yaml --input F=nocol.csv
rc_is 2
placed nocol.csv 1 1
err_has "no column 'F'"
hs run push.yaml --input F=not.csv
rc_is 2
placed not.csv 1 1
err_has "no column 't'"
hs run push.yaml --input F=norows.csv
rc_is 2
err_has "no rows"
end

begin "a table that does not exist"
hs run push.yaml --input F=missing.csv
rc_is 2
err_has "--input F=missing.csv: cannot open the input table"
out_empty
end

begin "--input naming something that is not an input"
hs run push.yaml --input G=1
rc_is 2
err_has "the model has no input 'G' (did you mean 'F'?)"
hs run push.yaml --input th=1
rc_is 2
err_has "('th' is a coordinate)"
hs run push.yaml --input M=1
rc_is 2
err_has "('M' is a parameter: --set M=VALUE)"
hs run push.yaml --set F=1
rc_is 1
err_has "'F' is an input, not a parameter"
end

begin "--input with an expression that reads a coordinate, or does not parse"
hs run push.yaml --input 'F=x + 1'
rc_is 2
err_has "it reads 'x'"
hs run push.yaml --input 'F=2*(t'
rc_is 2
err_has "')' expected"
hs run push.yaml --input F
rc_is 1
err_has "--input wants NAME=EXPR or NAME=FILE.csv"
end

# a model of push.yaml with its inputs line replaced
variant() { sed "s/^inputs: \[F\]\$/$1/" push.yaml >v.yaml; }

begin "inputs: clashes with a coordinate, a parameter, a column; duplicates"
variant 'inputs: [th]'
hs check v.yaml
rc_is 2
placed v.yaml 3 10
err_has "input 'th' has the name of a coordinate"
variant 'inputs: [M]'
hs check v.yaml
rc_is 2
placed v.yaml 3 10
err_has "input 'M' clashes with parameter 'M'"
variant 'inputs: [F, F]'
hs check v.yaml
rc_is 2
placed v.yaml 3 13
err_has "duplicate input 'F'"
variant 'inputs: [E]'
hs check v.yaml
rc_is 2
placed v.yaml 3 10
err_has "'E' is reserved"
end

begin "inputs: bad types"
variant 'inputs: F'
hs check v.yaml
rc_is 2
placed v.yaml 3 9
err_has "'inputs' must be a list"
variant 'inputs: [[F]]'
hs check v.yaml
rc_is 2
placed v.yaml 3 10
err_has "an input must be a name"
variant 'inputs: [2x]'
hs check v.yaml
rc_is 2
err_has "not a valid input name"
end

begin "parameters and initial data cannot read an input"
sed 's/g: 9.81}/g: 9.81, k: F}/' push.yaml >v.yaml
hs check v.yaml
rc_is 2
placed v.yaml 2 48
err_has "'F' is an input, a function of time: a parameter cannot read it"
sed 's/th: 0.1}}/th: F}}/' push.yaml >v.yaml
hs check v.yaml
rc_is 2
placed v.yaml 8 25
end

summary
