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

cat >"$T/tilted.yaml" <<'EOF'
name: bead on a tilted wire
parameters: {m: 1, g: 9.81, a: 0.5}
coordinates: [x, y]
mass: [m, m]
potential: m*g*y
constraints: {wire: y - a*x}
initial: {q: {x: 0.3, y: 0.15}}
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
out_line 1 "x,y,lambda_rod,stable,verdict"
near_rel "$(field 2 2)" -1 1e-12 "y*"
near_rel "$(field 2 3)" -4.905 1e-12 "lambda_rod"
[ "$(field 2 4),$(field 2 5)" = 1,stable ] || no "stable is '$(field 2 4),$(field 2 5)'"
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
out_line 1 "theta,stable,verdict"
want=$(awk 'BEGIN { c = 9.81/25; printf "%.17g", atan2(sqrt(1 - c*c), c) }')
near_rel "$(field 2 1)" "$want" 1e-10 "theta*"
[ "$(field 2 2),$(field 2 3)" = 1,stable ] || no "stable is '$(field 2 2),$(field 2 3)'"
end

# the bottom of the spinning hoop is an equilibrium, and unstable
begin equilibrium_hoop_bottom_unstable
hs equilibrium "$MODELS/hoop_equilibrium.yaml" --set theta0=0.05 --csv
rc_is 0
near_abs "$(field 2 1)" 0 1e-10 "theta* (the bottom)"
[ "$(field 2 2),$(field 2 3)" = 0,unstable ] || no "stable is '$(field 2 2),$(field 2 3)', want 0,unstable"
end

begin equilibrium_stdin
hs equilibrium - --csv <"$MODELS/pendulum_angle.yaml"
rc_is 0
out_line 1 "theta,stable,verdict"
out_line 2 "0,1,stable"
end

begin equilibrium_held_point
hs equilibrium "$T/held.yaml" --csv
rc_is 0
out_line 1 "x,y,lambda_cx,lambda_cy,stable,verdict"
out_line 2 "1,2,0,19.62,1,stable"
end

# ---- modes ------------------------------------------------------------------

begin modes_csv_double_pendulum
hs modes "$MODELS/double_pendulum_modes.yaml" --csv
rc_is 0
out_lines 3
out_line 1 "mode,sigma,omega,d_theta1,d_theta2,im_d_theta1,im_d_theta2"
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
out_line 1 "mode,sigma,omega,d_x1,d_y1,d_x2,d_y2,im_d_x1,im_d_y1,im_d_x2,im_d_y2"
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
out_line 1 "mode,sigma,omega,d_theta,im_d_theta"
near_rel "$(field 2 2)" -0.1875 1e-9 "sigma = -c/(2m)"
hs modes "$T/damped.yaml"
out_has "solved in first-order form"
end

begin modes_no_dof
hs modes "$T/held.yaml" --csv
rc_is 0
out_lines 1
out_line 1 "mode,sigma,omega,d_x,d_y,im_d_x,im_d_y"
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

# ---- outputs, events and the drawing are not part of the analysis ---------

# an output NaN at these parameters (above the critical speed): equilibrium
# and modes work, run refuses it where it is written (the CSV never holds NaN)
cat >"$T/nan_out.yaml" <<'EOF'
coordinates: [x, y]
mass: [1, 1]
parameters: {g: 9.81, a: 1, omega: 10}
potential: 0.5*x^2 + 0.5*y^2
outputs:
  w_small: sqrt(2*g*a - omega^2)
initial:
  q: {x: 0.1, y: 0}
EOF

begin nan_output_analysed
hs equilibrium "$T/nan_out.yaml" --csv
rc_is 0
out_line 1 "x,y,stable,verdict"
out_line 2 "0,0,1,stable"
err_empty
hs modes "$T/nan_out.yaml" --csv
rc_is 0
out_line 2 "1,0,1,1,0,0,0"
out_line 3 "2,0,1,0,1,0,0"
err_empty
hs modes "$T/nan_out.yaml"
rc_is 0
out_has "stability: stable"
end

begin nan_output_run_refused
hs run "$T/nan_out.yaml" --t-end 1
rc_is 2
out_empty
placed "$T/nan_out.yaml" 6 12
err_has "constant expression evaluates to NaN/Inf: sqrt(-80.38)"
hs check "$T/nan_out.yaml"
rc_is 2
placed "$T/nan_out.yaml" 6 12
end

# NaN only at some states (it reads x): never evaluated by the analysis;
# run stops at t = 0, at the output
sed 's/sqrt(2\*g\*a - omega^2)/sqrt(-1 - x^2)/' "$T/nan_out.yaml" >"$T/nan_out_q.yaml"
begin nan_output_of_q
hs modes "$T/nan_out_q.yaml" --csv
rc_is 0
out_line 2 "1,0,1,1,0,0,0"
hs equilibrium "$T/nan_out_q.yaml"
rc_is 0
out_has "  x = 0"
hs run "$T/nan_out_q.yaml" --t-end 1
rc_is 4
placed "$T/nan_out_q.yaml" 6 12
err_has "sqrt of a negative number in output 'w_small' at t=0"
end

# a define only an output reads, an event and a drawing that cannot be
# evaluated at these parameters: not read by the analysis
cat >"$T/nan_rest.yaml" <<'EOF'
coordinates: [x, y]
mass: [1, 1]
parameters: {g: 9.81, a: 1, omega: 10}
define:
  w: sqrt(2*g*a - omega^2)
potential: 0.5*x^2 + 0.5*y^2
outputs:
  w_small: w
events:
  hit: {when: x > log(a - 1), action: stop}
draw:
  points: {p: [x, y + sqrt(-a)]}
initial:
  q: {x: 0.1, y: 0}
EOF

begin nan_define_event_draw
hs modes "$T/nan_rest.yaml" --csv
rc_is 0
out_line 2 "1,0,1,1,0,0,0"
hs run "$T/nan_rest.yaml" --t-end 1
rc_is 2
out_empty
placed "$T/nan_rest.yaml" 10 19
err_has "constant expression evaluates to NaN/Inf: log(0)"
end

# a define the potential reads is part of the analysis: refused at it
cat >"$T/nan_def_used.yaml" <<'EOF'
coordinates: [x, y]
mass: [1, 1]
parameters: {g: 9.81, a: 1, omega: 10}
define:
  w: sqrt(2*g*a - omega^2)
potential: 0.5*x^2 + 0.5*y^2 + w*x
initial:
  q: {x: 0.1, y: 0}
EOF
begin nan_define_in_potential
hs modes "$T/nan_def_used.yaml"
rc_is 2
out_empty
placed "$T/nan_def_used.yaml" 5 6
err_has "constant expression evaluates to NaN/Inf: sqrt(-80.38)"
end

# the shipped hoop below the critical speed: its output theta_star =
# acos(g/(omega^2 R)) has no value; the bottom is stable at sqrt(g/R - omega^2)
begin hoop_below_critical
hs modes "$MODELS/hoop_equilibrium.yaml" --set omega=2 --csv
rc_is 0
[ "$(field 2 2)" = 0 ] || no "sigma is '$(field 2 2)'"
near_rel "$(field 2 3)" "$(awk 'BEGIN { printf "%.17g", sqrt(9.81 - 4) }')" 1e-12 "omega"
hs run "$MODELS/hoop_equilibrium.yaml" --set omega=2
rc_is 2
placed "$MODELS/hoop_equilibrium.yaml" 36 15
err_has "acos(2.4525)"
end

# ---- complex mode shapes: an isotropic spring seen from a turning frame -----

# the inertial circular modes at w0 = sqrt(k/m) = 2 appear at |w0 - w| and
# w0 + w, circular: |d_a| = |d_b| = 1, d_b = -+i (phase -+90 degrees) below
# w0, +i for both above it
cat >"$T/turning.yaml" <<'EOF'
name: isotropic spring in a turning frame
parameters: {m: 1.5, k: 6.0, w: 0.5}
coordinates: [a, b]
embedding:
  x: a*cos(w*t) - b*sin(w*t)
  y: a*sin(w*t) + b*cos(w*t)
mass: [m, m]
potential: 0.5*k*(x^2 + y^2)
initial: {q: {a: 0.1, b: -0.2}}
EOF

begin gyroscopic_shapes_csv
hs modes "$T/turning.yaml" --csv
rc_is 0
out_lines 3
out_line 1 "mode,sigma,omega,d_a,d_b,im_d_a,im_d_b"
near_rel "$(field 2 3)" 1.5 1e-12 "omega = w0 - w"
near_rel "$(field 3 3)" 2.5 1e-12 "omega = w0 + w"
[ "$(field 2 2),$(field 2 4),$(field 2 5),$(field 2 6)" = "0,1,0,0" ] ||
    no "slow mode: sigma, d_a, d_b, im_d_a = $(field 2 2),$(field 2 4),$(field 2 5),$(field 2 6)"
near_rel "$(field 2 7)" -1 1e-12 "slow mode: im_d_b"
[ "$(field 3 2),$(field 3 4),$(field 3 5),$(field 3 6)" = "0,1,0,0" ] ||
    no "fast mode: sigma, d_a, d_b, im_d_a = $(field 3 2),$(field 3 4),$(field 3 5),$(field 3 6)"
near_rel "$(field 3 7)" 1 1e-12 "fast mode: im_d_b"
hs modes "$T/turning.yaml" --set w=3 --csv
near_rel "$(field 2 3)" 1 1e-12 "omega = w - w0"
near_rel "$(field 2 7)" 1 1e-12 "above w0: im_d_b of the slow mode"
near_rel "$(field 3 7)" 1 1e-12 "above w0: im_d_b of the fast mode"
end

begin gyroscopic_shapes_text
hs modes "$T/turning.yaml"
rc_is 0
out_has "|d_a|        arg_a        |d_b|        arg_b"
row1=$(sed -n '/^   1 /p' "$T/out")
row2=$(sed -n '/^   2 /p' "$T/out")
echo "$row1" | grep -q ' 1  *0  *1  *-90$' || no "slow row: $row1"
echo "$row2" | grep -q ' 1  *0  *1  *90$' || no "fast row: $row2"
out_has "mode shape d, complex: |d_| its magnitude, arg_ its phase in degrees, largest component 1 at phase 0"
out_has "stability: stable (every eigenvalue"
hs modes "$MODELS/double_pendulum.yaml"
out_has "d_: mode shape, real, largest component 1"
out_lacks "arg_"
end

# ---- the verdict: stable, marginal, unstable --------------------------------

# the hoop at its critical speed omega^2 = g/R (g = 9, omega = 3: exact):
# K = 0 at the bottom, s = 0 twice; the quartic term decides
begin marginal_critical_speed
hs modes "$MODELS/hoop_equilibrium.yaml" --set g=9 --set omega=3 --set theta0=0 --csv
rc_is 0
out_line 2 "1,0,0,1,0"
out_line 3 "2,0,0,1,0"
hs equilibrium "$MODELS/hoop_equilibrium.yaml" --set g=9 --set omega=3 --set theta0=0 --csv
out_line 2 "0,0,marginal"
hs equilibrium "$MODELS/hoop_equilibrium.yaml" --set g=9 --set omega=3 --set theta0=0
out_has "stability: marginal (2 eigenvalues s = 0: a neutral direction, a family of equilibria or a zero-frequency mode"
out_has "the linearization cannot decide"
end

# from theta0 = 1 Newton converges linearly (the force is cubic in theta
# there) down to where the round-off of Q stops it: theta* at the cube root
# of round-off, K there below round-off of the stiffness met on the way:
# still marginal; at g = 9.81 the line search ends at the round-off floor,
# and says so
begin marginal_critical_speed_from_afar
hs equilibrium "$MODELS/hoop_equilibrium.yaml" --set g=9 --set omega=3 --csv
rc_is 0
near_abs "$(field 2 1)" 0 1e-7 "theta*"
[ "$(field 2 2),$(field 2 3)" = 0,marginal ] || no "verdict '$(field 2 2),$(field 2 3)'"
hs equilibrium "$MODELS/hoop_equilibrium.yaml" --set 'omega=sqrt(g/R)'
rc_is 0
out_has "; stopped where the residual cannot decrease any more, at "
out_has "of the start's: a flat equilibrium, q* known less well than round-off):"
out_has "stability: marginal (2 eigenvalues s = 0"
theta=$(sed -n 's/^  theta = //p' "$T/out")
near_abs "$theta" 0 1e-7 "theta*"
end

# the turning spring at w = w0: the centrifugal force balances the spring
# everywhere, a family of equilibria (Newton stays at the start)
begin marginal_family
hs equilibrium "$T/turning.yaml" --set w=2
rc_is 0
out_has "  a = 0.1"
out_has "  b = -0.2"
out_has "stability: marginal (2 eigenvalues s = 0"
hs modes "$T/turning.yaml" --set w=2 --csv
near_rel "$(field 4 3)" 4 1e-12 "omega = 2 w"
end

# a free particle seen from a turning frame: s = i w twice with one shape,
# a Jordan block (the straight inertial line is t e^(-i w t) there)
begin marginal_jordan
hs modes "$T/turning.yaml" --set k=0 --set w=1.5
rc_is 0
out_has "stability: marginal (the eigenvalue s = i*1.5 is repeated without independent mode shapes, a Jordan block: the linear motion grows like t"
hs equilibrium "$T/turning.yaml" --set k=0 --set w=1.5 --csv
out_line 2 "0,0,0,marginal"
end

# ---- round-off shown as 0 ---------------------------------------------------

# the Cartesian double pendulum: x1* = x2* = 0 and no vertical motion in
# the modes, exactly (no 1e-29 or 1e-16 of Newton's and the eigensolver's)
begin roundoff_zero
hs equilibrium "$MODELS/double_pendulum.yaml" --csv
rc_is 0
out_line 2 "0,-1,0,-2,-9.81,-4.905,1,stable"
hs modes "$MODELS/double_pendulum.yaml" --csv
for r in 2 3; do
    got="$(field $r 5),$(field $r 7),$(field $r 8),$(field $r 9),$(field $r 10),$(field $r 11)"
    [ "$got" = 0,0,0,0,0,0 ] || no "row $r: d_y1, d_y2, im_d_* = $got"
done
near_rel "$(field 2 4)" 0.41421356237309505 1e-12 "slow d_x1 = sqrt 2 - 1"
# the hanging chain of 8 links: x_i* = 0 exactly, y_i* = -i, link j
# carrying the 9 - j masses below it: lambda_j = -(9 - j) m g / (2 l)
hs equilibrium "$MODELS/hanging_chain.yaml" --csv
for i in 1 2 3 4 5 6 7 8; do
    [ "$(field 2 $((2 * i - 1)))" = 0 ] || no "x$i* is '$(field 2 $((2 * i - 1)))'"
    near_rel "$(field 2 $((2 * i)))" "-$i" 1e-12 "y$i*"
    near_rel "$(field 2 $((16 + i)))" "$(awk -v j=$i 'BEGIN { print -(9 - j) * 4.905 }')" 1e-12 \
        "lambda_$i"
done
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
out_line 1 "mode,sigma,omega,d_theta,im_d_theta"
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

# no false equilibrium: a bead on a tilted wire has none (once exit 0,
# "marginal", with a residual of half its weight); nor has the shipped
# Atwood machine with unequal masses; every analysis says so
begin no_false_equilibrium
for cmd in equilibrium modes "modes --linearize"; do
    hs $cmd "$T/tilted.yaml"
    rc_is 3
    out_empty
    err_has "$T/tilted.yaml: error: no equilibrium found: singular Jacobian of the equilibrium conditions after 2 Newton steps, and its least-norm step is 0 while the residual stays at"
    err_has "a force that no constraint reaction balances"
    err_has "best point: x = 0.3, y = 0.15"
    hs $cmd "$MODELS/atwood.yaml" --csv
    rc_is 3
    out_empty
    err_has "least-norm step is 0"
done
hs equilibrium "$MODELS/atwood.yaml" --set m2=2 --csv
rc_is 0
[ "$(field 2 1),$(field 2 2),$(field 2 5)" = -1,-2,marginal ] || no "atwood m1 = m2: $(sed -n 2p "$T/out")"
near_rel "$(field 2 3)" 19.62 1e-14 "lambda_string = m g"
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

# ---- the lowest modes, the sparse path ---------------------------------------

begin count_dense
hs modes "$MODELS/double_pendulum.yaml" --csv
rc_is 0
sed -n 1,2p "$T/out" >"$T/first"
hs modes "$MODELS/double_pendulum.yaml" --csv --count 1
rc_is 0
cmp -s "$T/out" "$T/first" || no "--count 1 is not the first row of the full list"
hs modes "$MODELS/double_pendulum.yaml" --count 1
rc_is 0
out_has "the 1 lowest of 2 (omega^2 nearest 0)"
end

begin count_errors
for bad in 0 -1 abc 1.5 ''; do
    hs modes "$MODELS/double_pendulum.yaml" --count "$bad"
    rc_is 1
    err_has "--count wants a positive integer"
done
hs modes "$MODELS/double_pendulum.yaml" --count 3
rc_is 1
err_has "--count 3: more modes than the 2 degrees of freedom (n - k)"
hs equilibrium "$MODELS/double_pendulum.yaml" --count 1
rc_is 1
err_has "unknown option '--count'"
end

begin linalg_sparse_small
hs modes "$MODELS/double_pendulum.yaml" --csv
cp "$T/out" "$T/dense"
hs modes "$MODELS/double_pendulum.yaml" --csv --linalg sparse
rc_is 0
for r in 2 3; do
    near_rel "$(field $r 3)" "$(sed -n "${r}p" "$T/dense" | cut -d, -f3)" 1e-12 "omega row $r"
done
hs equilibrium "$MODELS/cart_pole.yaml" --csv --linalg sparse
rc_is 0
[ "$(sed -n 2p "$T/out")" = "0,0,0,undecided" ] || no "row: $(sed -n 2p "$T/out")"
hs equilibrium "$MODELS/cart_pole.yaml" --linalg sparse
out_has "stability: undecided (the sparse modes need a conservative linearization"
hs modes "$MODELS/cart_pole.yaml" --linalg sparse
rc_is 3
err_has "the sparse modes need a conservative linearization"
# a critical speed reached from afar: K cancels to round-off at q*, 0 as on
# the dense path (marginal_critical_speed_from_afar)
hs equilibrium "$MODELS/hoop_equilibrium.yaml" --set g=9 --set omega=3 --set theta0=0.3 \
    --csv --linalg sparse
rc_is 0
[ "$(sed -n 2p "$T/out" | cut -d, -f2-)" = "0,marginal" ] || no "row: $(sed -n 2p "$T/out")"
hs equilibrium "$T/falling.yaml" --linalg sparse
rc_is 3
err_has "no equilibrium found (sparse Newton)"
hs equilibrium "$MODELS/parallelogram3.yaml" --linalg sparse
rc_is 3
err_has "dependent constraints need the dense analysis"
hs modes "$MODELS/double_pendulum.yaml" --linalg fast
rc_is 1
err_has "--linalg must be auto, dense or sparse, got 'fast'"
end

# 700 links: n + k = 2100, beyond the dense limit
begin sparse_chain
hs equilibrium "$MODELS/hanging_chain.yaml" --set N=700 --set th=0.2 --csv
rc_is 0
x700=$(field 2 1399); y700=$(field 2 1400); l1=$(field 2 1401)
near_abs "$x700" 0 1e-9 "x_700"
near_rel "$y700" -700 1e-12 "y_700"
near_rel "$l1" "$(awk 'BEGIN { print -700 * 9.81 / 2 }')" 1e-12 "lambda_link_1"
[ "$(field 2 2101)" = 1 ] || no "stable: $(field 2 2101)"
hs modes "$MODELS/hanging_chain.yaml" --set N=700 --set th=0.2 --csv --count 3
rc_is 0
[ "$(wc -l <"$T/out")" -eq 4 ] || no "$(wc -l <"$T/out") lines, want a header and 3 rows"
# the continuous hanging chain: omega_i = (j0_i / 2) sqrt(g / L), L = 700
w1=$(awk 'BEGIN { print 2.404825557695773 / 2 * sqrt(9.81 / 700) }')
w3=$(awk 'BEGIN { print 8.653727912911013 / 2 * sqrt(9.81 / 700) }')
near_rel "$(field 2 3)" "$w1" 1e-3 "omega_1"
near_rel "$(field 4 3)" "$w3" 1e-3 "omega_3"
hs modes "$MODELS/hanging_chain.yaml" --set N=700 --set th=0.2
rc_is 0
out_has "the 10 lowest of 700 (omega^2 nearest 0: sparse shift-invert Lanczos)"
hs modes "$MODELS/hanging_chain.yaml" --set N=700 --set th=0.2 --linearize
rc_is 2
err_has "model too large for the state-space matrix: n + k = 2100"
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
out_has "usage: holosim equilibrium MODEL [--set NAME=VALUE]... [--params FILE] [--csv]"
out_has "  marginal   no sigma > 0, but an eigenvalue s = 0"
hs help modes
rc_is 0
out_has "usage: holosim modes MODEL [--set NAME=VALUE]... [--params FILE] [--csv] [--linearize]"
out_has "header mode,sigma,omega,d_NAME...,im_d_NAME... and"
hs modes --help
rc_is 0
out_has "--linearize"
hs --help
out_has "equilibrium MODEL"
out_has "modes MODEL"
end

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
