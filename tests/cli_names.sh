#!/bin/sh
# Every name a column or an expression can mean means one thing (issue 24):
# the quantities of a model (E, H, lambda_rod, R_x, ...) are no parameter,
# so --set and --params of such a name are refused, saying what the name
# is; a model's own quantities are read as themselves.  The names refused
# in a model file are the corpus tests/bad/name_*.
#
#   HOLOSIM=bin/holosim sh tests/cli_names.sh   (what `make check` runs)
#
# Same conventions as tests/cli.sh; the last line is `N passed, N failed`.

CLI_NAME=names
CLI_TIMEOUT=20
. "$(dirname "$0")/cli_lib.sh"

PEND=$ROOT/models/pendulum.yaml
SHORT="--t-end 0.01 --dt 0.01 -q"

# set_case NAME MESSAGE: --set NAME=3 refused (exit 1), saying what it is
set_case() {
    begin "set_$1"
    hs run "$PEND" $SHORT --set "$1=3"
    rc_is 1; out_empty
    err_has "--set $1: the model has no parameter '$1' ('$1' is $2, not a parameter)"
    end
}
set_case H "the Jacobi integral"
set_case E "the total energy"
set_case t "the time"
set_case energy_balance "the energy balance"
set_case lambda_rod "the multiplier of constraint 'rod'"
set_case Gdot_rod "the velocity residual of constraint 'rod'"
set_case R_y "the reaction on coordinate 'y'"

# --params: the same, positioned at the name in the file
for nm in H lambda_rod; do
    begin "params_$nm"
    printf 'l: 2\n%s: 5\n' "$nm" >"$T/p.yaml"
    hs run "$PEND" $SHORT --params "$T/p.yaml"
    rc_is 1; out_empty
    case $(head -n 1 "$T/err") in
    "$T/p.yaml:2:1: error: the model has no parameter '$nm' ('$nm' is "*) ;;
    *) no "first line '$(head -n 1 "$T/err")', want $T/p.yaml:2:1 naming what '$nm' is" ;;
    esac
    end
done

# A name that is no quantity of this model stays free: lambda_foo without a
# constraint foo, R_z without a coordinate z.
begin free_names
cat >"$T/free.yaml" <<'EOF'
parameters: {m: 1, l: 1, g: 9.81, lambda_foo: 2, R_z: 3}
coordinates: [x, y]
mass: [m, m]
potential: m*g*y
constraints:
  rod: x^2 + y^2 - l^2
initial:
  q: {x: 0.6, y: -0.8}
simulate: {t_end: 0.01, dt: 0.01}
outputs: {s: lambda_foo + R_z}
EOF
hs run "$T/free.yaml" -q --columns s
rc_is 0; out_line 2 5
end

# The issue's case: an output reads the multiplier, not a define of its name
# (the define is refused, tests/bad/name_define_lambda_read_by_output); the
# output lambda_rod reads equals the column lambda_rod at every row.
begin output_reads_the_multiplier
sed 's/^  theta: .*/  lr: lambda_rod/' "$PEND" >"$T/lr.yaml"
hs run "$T/lr.yaml" --t-end 0.05 --dt 0.01 -q --columns lambda_rod,lr
rc_is 0
awk -F, 'NR > 1 && $1 != $2 { bad = 1 } END { exit bad || NR < 3 }' "$T/out" ||
    no "lambda_rod and lr differ: $(sed -n 2p "$T/out")"
end

summary
