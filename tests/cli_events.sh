#!/bin/sh
# Events at the command line (issue 15), POSIX sh:
#
#   HOLOSIM=bin/holosim sh tests/cli_events.sh       (make check runs it)
#
#   run        models/sphere_liftoff.yaml: the events file (header, a row per
#              event, names), the trajectory ending at the stop, the summary
#              naming the event on stderr and in --summary's message
#   stop-when  the bead on a rotating wire stops at acosh(2/r0)/omega;
#              several conditions: the first to happen, names stop_when_N;
#              an error shown under the option's text (exit 2, no output);
#              accepted by batch, where each point stops at its own time
#   files      --events - beside -o FILE; refused beside a trajectory on
#              standard output and onto the model or -o (exit 1, nothing
#              written); a header alone when no event happens; no file at
#              all when the run fails before its first row
#   section    the Poincare model records only where x1 = 0 going right
#   graze      a crossing and its return inside one step, found by every
#              stepper but rk1imp and bsimp (times against the closed form),
#              and a stop there
#   hold       a rope let go where its tension would push and taken back
#              where it is taut again, against the same rope as a contact
#   plot       scripts/plot --points draws dots
#
# The last line of output is always `N passed, N failed`.

CLI_NAME=events
CLI_TIMEOUT=60
. "$(dirname "$0")/cli_lib.sh"

SPHERE=$ROOT/models/sphere_liftoff.yaml
WIRE=$ROOT/models/rotating_wire.yaml

absent() { [ -e "$1" ] && no "$2"; return 0; }
# near A B TOL: |A - B| <= TOL
near() {
    awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d;
        exit !(a != "" && d <= t) }' || no "$4: $1, want $2 (within $3)"
}

# ---- run --------------------------------------------------------------------

begin sphere_events_file
hs run "$SPHERE" --columns t,x,z -o "$T/sphere.csv" --events "$T/sphere-ev.csv" \
    --summary "$T/sum.csv"
rc_is 0
out_empty
[ "$(head -n 1 "$T/sphere-ev.csv")" = "event,t,x,z" ] || no "header: $(head -n 1 "$T/sphere-ev.csv")"
[ "$(cut -d, -f1 "$T/sphere-ev.csv" | tr '\n' ' ')" = "event leave ground " ] ||
    no "events: $(cut -d, -f1 "$T/sphere-ev.csv" | tr '\n' ' ')"
# quadrature of dt = dtheta/theta' (R = 1, g = 9.81, theta0 = 0.1)
near "$(sed -n 2p "$T/sphere-ev.csv" | cut -d, -f2)" 0.907110111046269 1e-11 "lift-off time"
near "$(sed -n 2p "$T/sphere-ev.csv" | cut -d, -f4)" 0.663336110185350 1e-11 "lift-off cos(theta)"
# the trajectory's last row is the stop's
[ "$(tail -n 1 "$T/sphere.csv")" = "$(sed -n 3p "$T/sphere-ev.csv" | cut -d, -f2-)" ] ||
    no "last row $(tail -n 1 "$T/sphere.csv") is not the stop's"
err_has "holosim: stopped by event 'ground' (z < -R) at t=1.32650346437"
grep -q ',"stopped by event .ground. (z < -R) at t=1.32650346437[0-9]*"$' "$T/sum.csv" ||
    no "summary message: $(tail -n 1 "$T/sum.csv" | cut -c1-200)"
end

begin sphere_quiet
hs run "$SPHERE" -q -o "$T/q.csv"
rc_is 0
[ -s "$T/err" ] && no "-q printed: $(head -n 1 "$T/err")"
end

# ---- --stop-when ------------------------------------------------------------

begin stop_when_wire
hs run "$WIRE" --stop-when 'x^2 + y^2 > 4' --t-end 4 --rtol 1e-12 --atol 1e-12 --columns t,r
rc_is 0
near "$(tail -n 1 "$T/out" | cut -d, -f1)" 2.993222846126381 1e-11 "stop time acosh(10)"
near "$(tail -n 1 "$T/out" | cut -d, -f2)" 2 1e-11 "r at the stop"
err_has "stopped by event 'stop_when' (x^2 + y^2 > 4) at t=2.99322284612638"
end

begin stop_when_true_at_start_warns
# z > 0 holds at the start (theta0 = 0.1 from the top): said, not silently
# waited for; the run goes on to the ground event
hs run "$SPHERE" --stop-when 'z > 0' --columns t,z -o "$T/w.csv"
rc_is 0
err_has "holosim: warning: --stop-when 'z > 0' is already true at the start (t = 0): it stops the run only where it becomes true, after it has been false"
err_has "change the initial data"
err_has "stopped by event 'ground'"
end

begin event_true_at_start_positioned
sed 's/^events:$/events:\n  up: {when: "z > 0", action: stop}/' "$SPHERE" >"$T/up.yaml"
hs run "$T/up.yaml" --columns t,z -o "$T/up.csv"
rc_is 0
line=$(grep -n 'up: {when' "$T/up.yaml" | cut -d: -f1)
err_has "$T/up.yaml:$line:15: warning: event 'up': 'z > 0' is already true at the start"
[ "$(grep -A2 ': warning:' "$T/err" | sed -n 3p)" = "                  ^" ] ||
    no "caret: $(grep -A2 ': warning:' "$T/err" | sed -n 3p)"
hs run "$T/up.yaml" --columns t,z -o "$T/up.csv" --quiet-projection -q
rc_is 0; grep -q warning "$T/err" && no "warning despite --quiet-projection"
hs run "$WIRE" --stop-when 'x^2 + y^2 > 4' --t-end 4 --columns t,r -o "$T/w2.csv"
rc_is 0; grep -q warning "$T/err" && no "warning for a condition false at the start"
end

begin stop_when_first_of_several
hs run "$WIRE" --stop-when 'r > 1.5' --stop-when 't > 0.5' --t-end 4 --columns t,r \
    --events "$T/sw.csv"
rc_is 0
near "$(tail -n 1 "$T/out" | cut -d, -f1)" 0.5 1e-12 "stop time"
[ "$(sed -n 2p "$T/sw.csv" | cut -d, -f1)" = stop_when_2 ] || no "events: $(cat "$T/sw.csv")"
[ "$(wc -l <"$T/sw.csv")" = 2 ] || no "more than one event"
end

begin stop_when_error
hs run "$WIRE" --stop-when 'x^2 + yy > 4' -o "$T/never.csv" --events "$T/never-ev.csv"
rc_is 2
out_empty
err_has "--stop-when 'x^2 + yy > 4': unknown name 'yy' (did you mean 'y'?)"
[ "$(sed -n 3p "$T/err")" = "                      ^" ] || no "caret: '$(sed -n 3p "$T/err")'"
absent "$T/never.csv" "-o file created"
absent "$T/never-ev.csv" "--events file created"
end

begin stop_when_not_finite_at_start
hs run "$WIRE" --stop-when 'log(r - 1) > 0'
rc_is 2
out_empty
err_has "--stop-when 'log(r - 1) > 0': not finite at the start: log of a non-positive number"
end

begin stop_when_empty
hs run "$WIRE" --stop-when ' '
rc_is 1
err_has "--stop-when wants a condition"
end

begin stop_when_not_for_check
hs check "$WIRE" --stop-when 'r > 1'
rc_is 1
err_has "unknown option '--stop-when' for 'check'"
end

begin stop_when_batch
printf 'name\tomega\nslow\t1\nfast\t2\n' >"$T/points.tsv"
mkdir -p "$T/b" "$T/bs"
hs batch "$WIRE" --points "$T/points.tsv" --outdir "$T/b" --status-dir "$T/bs" \
    --stop-when 'x^2 + y^2 > 4' --t-end 4 --columns t,r -q
rc_is 0
near "$(tail -n 1 "$T/b/slow.csv" | cut -d, -f1)" 2.993222846126381 1e-9 "slow stop"
near "$(tail -n 1 "$T/b/fast.csv" | cut -d, -f1)" 1.4966114230631905 1e-9 "fast stop"
end

# ---- files ------------------------------------------------------------------

begin events_stdout_beside_file
hs run "$SPHERE" --events - -o "$T/traj.csv" --columns t,z -q
rc_is 0
[ "$(head -n 1 "$T/out")" = "event,t,z" ] || no "stdout: $(head -n 1 "$T/out")"
[ "$(wc -l <"$T/out")" = 3 ] || no "$(wc -l <"$T/out") lines on stdout"
end

begin events_stdout_twice
hs run "$SPHERE" --events -
rc_is 1
out_empty
err_has "--events - and the trajectory would both go to standard output"
end

begin events_onto_model
cp "$SPHERE" "$T/m.yaml"
hs run "$T/m.yaml" --events "$T/m.yaml" -q -o "$T/m.csv"
rc_is 1
cmp -s "$SPHERE" "$T/m.yaml" || no "the model was changed"
absent "$T/m.csv" "-o file created"
end

begin events_onto_output
hs run "$SPHERE" --events "$T/same.csv" -o "$T/same.csv" -q
rc_is 1
absent "$T/same.csv" "a file was written"
end

begin events_unwritable
hs run "$SPHERE" --events "$T/no/such/dir/ev.csv" -q -o "$T/x.csv"
rc_is 1
err_has "cannot write the events file"
absent "$T/x.csv" "-o file created"
end

begin events_none_header_only
hs run "$WIRE" --events "$T/none.csv" --columns t,r -q
rc_is 0
[ "$(cat "$T/none.csv")" = "event,t,r" ] || no "events file: $(head -c 100 "$T/none.csv")"
end

begin events_failed_run_no_file
cat >"$T/bad.yaml" <<'EOY'
coordinates: [x]
mass: [1]
initial: {q: {x: -1}}
simulate: {t_end: 1}
events: {e: log(x)}
EOY
hs run "$T/bad.yaml" --events "$T/bad-ev.csv" -o "$T/bad.csv"
rc_is 2
err_has "bad.yaml:5:13: error: log of a non-positive number in the function of event 'e' at t=0"
absent "$T/bad-ev.csv" "events file created"
absent "$T/bad.csv" "-o file created"
end

begin help_lists_options
hs run --help
rc_is 0
grep -q -- '--stop-when COND' "$T/out" || no "--help lacks --stop-when"
grep -q -- '--events FILE' "$T/out" || no "--help lacks --events"
end

# ---- the Poincare section ---------------------------------------------------

begin poincare_section
hs run "$ROOT/models/double_pendulum_poincare.yaml" --t-end 200 -q -o "$T/dp.csv" \
    --events "$T/sec.csv" --columns t,x1,x1\',theta2,omega2
rc_is 0
[ "$(wc -l <"$T/sec.csv")" -gt 50 ] || no "only $(wc -l <"$T/sec.csv") lines"
awk -F, 'NR > 1 && ($1 != "section" || $3 > 1e-9 || $3 < -1e-9 || $4 <= 0) { bad = NR }
         END { exit bad > 0 }' "$T/sec.csv" || no "a row off the section: $(sed -n 2p "$T/sec.csv")"
end

# ---- a crossing and its return inside one step --------------------------------
# x = cos t grazes c = cos(0.01): x > c only for |t - 2 pi j| < 0.01, a
# hundredth of a step of rk8pd here (dt 5: the rows do not cut the steps).
# Up at 2 pi j - d, down at 2 pi j + d (d = acos c), and the first down
# crossing at d itself.  The times carry the trajectory's phase error
# (up to 1.3e-7 with rkf45 at 1e-10); x at the event is c to round-off.
# Left out: rk1imp (its damping takes the amplitude below c) and bsimp
# (steps of 1.4 s: the dip is below the error of a step's interpolant).

cat >"$T/graze.yaml" <<'EOF2'
name: oscillator grazing a threshold
parameters: {c: 0.99995}
coordinates: [x]
mass: [1]
potential: x^2/2
initial: {q: {x: 1}, v: {x: 0}}
simulate: {t_end: 20, dt: 5, rtol: 1e-10, atol: 1e-10}
events:
  up: {when: x - c, direction: up}
  down: {when: x - c, direction: down}
EOF2
D=0.010000041667135     # acos(0.99995)

begin graze_every_stepper
for me in $("$H" help methods | awk '/^[^ ]/ && $4 != "fixed" && $1 != "rk1imp" && $1 != "bsimp" {
                                       print $1 }'); do
    hs run "$T/graze.yaml" --method "$me" -q -o "$T/g.csv" --events "$T/gev.csv"
    rc_is 0
    [ "$(cut -d, -f1 "$T/gev.csv" | tr '\n' ' ')" = "event down up down up down up down " ] ||
        no "$me: events $(cut -d, -f1 "$T/gev.csv" | tr '\n' ' ')"
    bad=$(awk -F, -v d="$D" 'NR > 1 { j = int((NR - 1) / 2); p = 8 * atan2(1, 1) * j
            want = $1 == "up" ? p - d : p + d
            if ((e = $2 - want) < 0) e = -e
            if ((f = $3 - 0.99995) < 0) f = -f
            if (e > 5e-7 || f > 1e-12) { print $1, $2, "want", want, "x", $3; exit } }' "$T/gev.csv")
    [ -z "$bad" ] || no "$me: $bad"
done
end

begin graze_stop
# a stop at a dip ends the run there: the first up crossing
hs run "$T/graze.yaml" -q -o "$T/g.csv" --stop-when 'x > c'
rc_is 0
near "$(tail -n 1 "$T/g.csv" | cut -d, -f1)" "$(awk -v d="$D" 'BEGIN { printf "%.15f", 8 * atan2(1, 1) - d }')" \
    5e-8 "stop time"
end

begin graze_domain_edge
# the pendulum starts horizontal: sqrt(l^2 - x^2) is 0 there and finite on
# the true path, but not on the interpolant of the first step (x > l): the
# search inside that step is skipped, the run goes on (it used to stop with
# "sqrt of a negative number" at t = 0.00025)
cat >"$T/edge.yaml" <<'EOF2'
name: pendulum from the horizontal
parameters: {l: 1, g: 9.81}
coordinates: [x, y]
mass: [1, 1]
potential: g*y
constraints: {rod: x^2 + y^2 - l^2}
initial: {q: {x: l, y: 0}, v: {x: 0, y: 0}}
simulate: {t_end: 3, dt: 1, rtol: 1e-10, atol: 1e-10}
events: {low: "sqrt(l^2 - x^2) - 0.5"}
EOF2
hs run "$T/edge.yaml" -q -o "$T/e.csv" --events "$T/eev.csv" --columns t,x,y
rc_is 0
err_empty
[ "$(cut -d, -f1 "$T/eev.csv" | tr '\n' ' ')" = "event low low low low low " ] ||
    no "events: $(cut -d, -f1 "$T/eev.csv" | tr '\n' ' ')"
awk -F, 'NR > 1 { d = $3 * $3 - 0.75; if (d < 0) d = -d; if (d > 1e-12) exit 1 }' "$T/eev.csv" ||
    no "x at the events is not +-sqrt(3)/2: $(cut -d, -f3 "$T/eev.csv" | tr '\n' ' ')"
end

# ---- hold: a released constraint taken back ------------------------------------

# A pendulum launched from the bottom at v0^2 = 3.43 g l goes slack where
# its tension reaches 0, at y = l (v0^2 - 2 g l) / (3 g l), flies freely
# inside the circle and is taken back (a plastic impact) where it reaches
# the circle again.  The same rope as a contact with restitution 0 is a
# second formulation: the two trajectories agree row by row.
begin hold_vs_contact
for kind in hold contact; do
    {
        echo "parameters: {m: 1.0, l: 1.0, g: 9.81, v0: 5.8}"
        echo "coordinates: [x, y]"
        echo "mass: [m, m]"
        echo "potential: m*g*y"
        if [ $kind = hold ]; then
            echo "constraints: {rope: x^2 + y^2 - l^2}"
            echo "events:"
            echo "  slack: {when: lambda_rope > 0, action: release rope}"
            echo "  taut: {when: x^2 + y^2 > l^2, action: hold rope}"
        else
            echo "contacts: {rope: {gap: l^2 - x^2 - y^2, restitution: 0}}"
        fi
        echo "initial: {q: {x: 0, y: -l}, v: {x: v0, y: 0}}"
        echo "simulate: {t_end: 3, dt: 0.01, rtol: 1e-12, atol: 1e-12}"
    } >"$T/$kind.yaml"
    hs run "$T/$kind.yaml" -q --columns t,x,y,"x'","y'",energy_balance -o "$T/$kind.csv" \
        --events "$T/$kind-ev.csv"
    rc_is 0
done
[ "$(cut -d, -f1 "$T/hold-ev.csv" | tr '\n' ' ')" = "event slack taut " ] ||
    no "hold events: $(cut -d, -f1 "$T/hold-ev.csv" | tr '\n' ' ')"
near "$(sed -n 2p "$T/hold-ev.csv" | cut -d, -f4)" \
    "$(awk 'BEGIN { g = 9.81; printf "%.17g", (5.8 * 5.8 - 2 * g) / (3 * g) }')" 1e-11 "slack y"
near "$(sed -n 3p "$T/hold-ev.csv" | cut -d, -f2)" "$(sed -n 3p "$T/contact-ev.csv" | cut -d, -f2)" \
    1e-12 "taut time against the contact's impact"
paste -d, "$T/hold.csv" "$T/contact.csv" | awk -F, 'NR > 1 { for (i = 2; i <= 5; i++) {
        d = $i - $(i + 6); if (d < 0) d = -d; if (d > m) m = d }
        b = $6; if (b < 0) b = -b; if (b > mb) mb = b }
    END { if (m > 1e-9 || mb > 1e-10) { print m, mb; exit 1 } }' >"$T/d" ||
    no "hold and contact differ (state, balance): $(cat "$T/d")"
end

# ---- scripts/plot --points ----------------------------------------------------

begin plot_points
if command -v bash >/dev/null 2>&1; then
    "$ROOT/scripts/plot" "$T/sec.csv" --x theta2 --y omega2 --points --dry-run \
        >"$T/gp" 2>"$T/err"
    rc=$?
    rc_is 0
    grep -q 'with points' "$T/gp" || no "no points in: $(grep plot "$T/gp" | head -n 1)"
    "$ROOT/scripts/plot" "$T/sec.csv" --x theta2 --y omega2 --dry-run >"$T/gp" 2>"$T/err"
    grep -q 'with lines' "$T/gp" || no "lines are no longer the default"
fi
end

summary
