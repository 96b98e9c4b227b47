#!/bin/sh
# End-to-end tests of `holosim equilibrium` and `holosim modes` (POSIX sh):
# exit codes, CSV headers and rows, messages with their positions, the
# numbers of the shipped models against their closed forms.
#
#   HOLOSIM=bin/holosim sh tests/cli_analysis.sh      (what `make check` runs)
#
# The last line of output is always `N passed, N failed`.

CLI_NAME=analysis
CLI_TIMEOUT=10
. "$(dirname "$0")/cli_lib.sh"

MODELS=$ROOT/models

# field F of line L of stdout
field() { sed -n "$1p" "$T/out" | cut -d, -f"$2"; }
# |A - B| <= TOL * |B|
near_rel() {
    awk -v a="$1" -v b="$2" -v tol="$3" \
        'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b;
                 exit !(a != "" && b != "" && d <= tol * m) }' || no "$4: $1, want $2"
}
# |A - B| <= TOL
near_abs() {
    awk -v a="$1" -v b="$2" -v tol="$3" \
        'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= tol) }' || no "$4: $1, want $2"
}
# the first line of stderr is FILE:LINE:COL: error: ..., then the source
# line and a caret under COL
placed() {
    first=$(head -n 1 "$T/err")
    case $first in
    "$1:$2:$3: error: "*) ;;
    *) no "stderr starts '$first', want '$1:$2:$3: error: ...'" ;;
    esac
    caret=$(sed -n 3p "$T/err")
    [ "${#caret}" = $(($3 + 4)) ] || no "caret at column $((${#caret} - 4))"
}

# ---- models written for these tests -----------------------------------------

cat >"$T/falling.yaml" <<'EOF'
name: falling particle
parameters: {m: 1.0, g: 9.81}
coordinates: [x, y]
mass: [m, m]
potential: m*g*y
initial: {q: {x: 0.3, y: 1.0}}
EOF

cat >"$T/runaway.yaml" <<'EOF'
coordinates: [x]
mass: [1]
potential: exp(x)
initial: {q: {x: 0}}
EOF

cat >"$T/held.yaml" <<'EOF'
name: a point held by two constraints
parameters: {m: 2.0, g: 9.81}
coordinates: [x, y]
mass: [m, m]
potential: m*g*y
constraints: {cx: x - 1, cy: y - 2}
initial: {q: {x: 0.5, y: 2.5}}
EOF

cat >"$T/forced.yaml" <<'EOF'
name: forced pendulum
parameters: {m: 1.0, l: 1.0, g: 9.81, F0: 0.5, W: 3.0}
coordinates: [theta]
kinetic: 0.5*m*l^2*theta'^2
potential: -m*g*l*cos(theta)
forces: {theta: F0*cos(W*t)}
initial: {q: {theta: 0.1}}
EOF

cat >"$T/damped.yaml" <<'EOF'
name: damped pendulum
parameters: {m: 0.8, l: 0.6, g: 9.81, c: 0.3}
coordinates: [theta]
kinetic: 0.5*m*l^2*theta'^2
potential: -m*g*l*cos(theta)
forces: {theta: -c*l^2*theta'}
initial: {q: {theta: 0.4}}
EOF

# ---- equilibrium ------------------------------------------------------------

begin equilibrium_csv_pendulum
hs equilibrium "$MODELS/pendulum.yaml" --csv
rc_is 0
out_lines 2
out_line 1 "x,y,lambda_rod,stable"
near_rel "$(field 2 2)" -1 1e-12 "y*"
near_rel "$(field 2 3)" -4.905 1e-12 "lambda_rod"
[ "$(field 2 4)" = 1 ] || no "stable is '$(field 2 4)'"
err_empty
end

begin equilibrium_text_hoop
hs equilibrium "$MODELS/hoop_equilibrium.yaml"
rc_is 0
out_has "model: $MODELS/hoop_equilibrium.yaml -- bead on a spinning hoop"
out_has "form: embedding; n = 1 coordinate, k = 0 constraints, 1 degree of freedom"
out_has "  theta = 1.16755690380504"
out_has "residual: max |Q + G_q^T lambda| = "
out_has "stability: stable"
err_empty
end

# cos(theta*) = g/(omega^2 R), theta* = acos(9.81/25)
begin equilibrium_hoop_closed_form
hs equilibrium "$MODELS/hoop_equilibrium.yaml" --csv
rc_is 0
out_line 1 "theta,stable"
want=$(awk 'BEGIN { c = 9.81/25; printf "%.17g", atan2(sqrt(1 - c*c), c) }')
near_rel "$(field 2 1)" "$want" 1e-10 "theta*"
[ "$(field 2 2)" = 1 ] || no "stable is '$(field 2 2)'"
end

# the bottom of the spinning hoop is an equilibrium, and unstable
begin equilibrium_hoop_bottom_unstable
hs equilibrium "$MODELS/hoop_equilibrium.yaml" --set theta0=0.05 --csv
rc_is 0
near_abs "$(field 2 1)" 0 1e-10 "theta* (the bottom)"
[ "$(field 2 2)" = 0 ] || no "stable is '$(field 2 2)', want 0"
end

begin equilibrium_stdin
hs equilibrium - --csv <"$MODELS/pendulum_angle.yaml"
rc_is 0
out_line 1 "theta,stable"
out_line 2 "0,1"
end

begin equilibrium_held_point
hs equilibrium "$T/held.yaml" --csv
rc_is 0
out_line 1 "x,y,lambda_cx,lambda_cy,stable"
out_line 2 "1,2,0,19.62,1"
end

# ---- modes ------------------------------------------------------------------

begin modes_csv_double_pendulum
hs modes "$MODELS/double_pendulum_modes.yaml" --csv
rc_is 0
out_lines 3
out_line 1 "mode,sigma,omega,d_theta1,d_theta2"
[ "$(field 2 1),$(field 2 2)" = "1,0" ] || no "row 1 starts '$(field 2 1),$(field 2 2)'"
w1=$(awk 'BEGIN { printf "%.17g", sqrt((2 - sqrt(2))*9.81) }')
w2=$(awk 'BEGIN { printf "%.17g", sqrt((2 + sqrt(2))*9.81) }')
near_rel "$(field 2 3)" "$w1" 1e-9 "slow omega"
near_rel "$(field 3 3)" "$w2" 1e-9 "fast omega"
near_rel "$(field 2 4)" 0.70710678118654752 1e-9 "slow d_theta1"
[ "$(field 2 5)" = 1 ] || no "slow d_theta2 is '$(field 2 5)'"
near_rel "$(field 3 4)" -0.70710678118654752 1e-9 "fast d_theta1"
err_empty
end

# the Cartesian double pendulum: the same frequencies, shapes in x1 y1 x2 y2
begin modes_csv_cartesian
hs modes "$MODELS/double_pendulum.yaml" --csv
rc_is 0
out_line 1 "mode,sigma,omega,d_x1,d_y1,d_x2,d_y2"
near_rel "$(field 2 3)" "$w1" 1e-9 "slow omega"
near_rel "$(field 3 3)" "$w2" 1e-9 "fast omega"
end

begin modes_text_hoop
hs modes "$MODELS/hoop_equilibrium.yaml"
rc_is 0
out_has "conservative and undamped, solved as K phi = omega^2 M phi"
out_has "d_theta"
out_has "stability: stable"
end

# the bottom: two real rows, sorted by sigma descending
begin modes_hoop_bottom
hs modes "$MODELS/hoop_equilibrium.yaml" --set theta0=0.05 --csv
rc_is 0
out_lines 3
r=$(awk 'BEGIN { printf "%.17g", sqrt(25 - 9.81) }')
near_rel "$(field 2 2)" "$r" 1e-9 "growth rate"
near_rel "$(field 3 2)" "-$r" 1e-9 "decay rate"
[ "$(field 2 3),$(field 3 3)" = "0,0" ] || no "omega not 0"
end

begin modes_damped
hs modes "$T/damped.yaml" --csv
rc_is 0
out_line 1 "mode,sigma,omega,d_theta"
near_rel "$(field 2 2)" -0.1875 1e-9 "sigma = -c/(2m)"
hs modes "$T/damped.yaml"
out_has "solved in first-order form"
end

begin modes_no_dof
hs modes "$T/held.yaml" --csv
rc_is 0
out_lines 1
out_line 1 "mode,sigma,omega,d_x,d_y"
hs modes "$T/held.yaml"
rc_is 0
out_has "no degrees of freedom left (n = k): no modes"
end

begin modes_linearize_csv
hs modes "$MODELS/double_pendulum.yaml" --linearize --csv
rc_is 0
out_lines 5
out_line 1 "state,x1,x2,x1',x2'"
out_line 2 "x1,0,0,1,0"
out_line 3 "x2,0,0,0,1"
near_rel "$(field 4 2)" -29.43 1e-12 "A(x1', x1) = -3 g/l"
near_rel "$(field 4 3)" 9.81 1e-12 "A(x1', x2) = g/l"
end

begin modes_linearize_text
hs modes "$MODELS/double_pendulum.yaml" --linearize
rc_is 0
out_has "state-space form dx/dt = A x, x = deviations from (q*, 0) of (x1, x2, x1', x2')"
out_has "solved from them through the linearized constraints: y1 y2"
out_has "mode"
end

# ---- failures ---------------------------------------------------------------

# a turning constraint: no equilibrium in this sense (exit 2 at omega*t)
begin rheonomic_refused
hs equilibrium "$MODELS/rotating_hoop.yaml"
rc_is 2
out_empty
placed "$MODELS/rotating_hoop.yaml" 23 22
err_has "constraint 'plane' (a moving, rheonomic constraint) depends on time through 'omega*t'"
sed -n 2p "$T/err" | grep -F -q "plane: -x*sin(omega*t) + y*cos(omega*t)" || no "source line"
end

begin time_force_refused
hs modes "$T/forced.yaml" --csv
rc_is 2
out_empty
placed "$T/forced.yaml" 6 25
err_has "the generalized force Q[theta]"
err_has "depends on time through 'W*t'"
end

# a moving chart whose reduced Lagrangian has no t is accepted
begin moving_chart_accepted
hs modes "$MODELS/hoop_angle.yaml" --csv
rc_is 0
out_line 1 "mode,sigma,omega,d_theta"
end

begin singular_exit3
hs equilibrium "$T/falling.yaml"
rc_is 3
out_empty
err_has "$T/falling.yaml: error: no equilibrium found: singular Jacobian"
err_has "(blocking: coordinate 'y': no force balance in y"
err_has "best point: x = 0.3, y = 1"
err_has "residual: max |Q + G_q^T lambda| = 9.81, max |G| = 0"
end

begin no_convergence_exit3
hs modes "$T/runaway.yaml"
rc_is 3
out_empty
err_has "Newton did not converge in 100 steps (blocking: coordinate 'x')"
err_has "best point: x = -"
end

begin write_error
if [ -w /dev/full ]; then
    $TO "$H" modes "$MODELS/pendulum.yaml" >/dev/full 2>"$T/err"
    rc=$?
    rc_is 1
    err_has "cannot write the output"
fi
end

# ---- usage ------------------------------------------------------------------

begin usage_errors
hs equilibrium
rc_is 1
err_has "equilibrium: expected one MODEL"
hs modes "$MODELS/pendulum.yaml" extra
rc_is 1
err_has "try 'holosim help modes'"
hs equilibrium "$MODELS/pendulum.yaml" --linearize
rc_is 1
err_has "unknown option '--linearize'"
hs modes "$MODELS/pendulum.yaml" --set nosuch=1
rc_is 1
out_empty
end

begin help_texts
hs help equilibrium
rc_is 0
out_has "usage: holosim equilibrium MODEL [--set NAME=VALUE]... [--csv]"
hs help modes
rc_is 0
out_has "usage: holosim modes MODEL [--set NAME=VALUE]... [--csv] [--linearize]"
hs modes --help
rc_is 0
out_has "--linearize"
hs --help
out_has "equilibrium MODEL"
out_has "modes MODEL"
end

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
