#!/bin/sh
# Command-line tests of the integrator (src/integrate): every --method on
# the closed-form models, the columns H and x' (ambient velocities), E in a
# moving chart, interpolate mode, time arithmetic (epoch start times, spans
# and dt checked before any conversion), grid times, and the progress line.
#
#   HOLOSIM=bin/holosim sh tests/cli_integrate.sh      (what `make check` runs)
#
# Same conventions as tests/cli.sh: each test asserts exit codes and output;
# the last line is `N passed, N failed`.

CLI_NAME=integrate
CLI_TIMEOUT=120
. "$(dirname "$0")/cli_lib.sh"

M=$ROOT/models

# maxabs FILE COLUMN: max |value| of a named CSV column
maxabs() {
    awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
        { v = $k < 0 ? -$k : $k; if (v > m) m = v } END { printf "%.3g\n", m + 0 }' "$1"
}
# maxdiff FILE COL_A COL_B: max |a - b|
maxdiff() {
    awk -F, -v a="$2" -v b="$3" 'NR == 1 { for (i = 1; i <= NF; i++) { if ($i == a) x = i;
        if ($i == b) y = i } next } { d = $x - $y; if (d < 0) d = -d; if (d > m) m = d }
        END { printf "%.3g\n", m + 0 }' "$1"
}
# lt X Y: X < Y as numbers
lt() { awk -v x="$1" -v y="$2" 'BEGIN { exit !(x + 0 < y + 0) }'; }

# ---- every stepper ----------------------------------------------------------

# Each --method runs the Atwood machine (exact for order >= 2) and the
# rotating wire (r = r0 cosh(omega t)) to t_end; errors within 1e-6 at
# rtol = atol = 1e-8, rk1imp (first order) within 1e-2.  The methods are
# those of the table under error control (`holosim help methods`).
for meth in $("$H" help methods | awk '/^[^ ]/ && $4 != "fixed" { print $1 }'); do
    lim=1e-6
    [ $meth = rk1imp ] && lim=1e-2
    begin "method_$meth"
    hs run "$M/atwood.yaml" --method $meth --rtol 1e-8 --atol 1e-8 --columns t,y1,y1_exact
    rc_is 0
    e=$(maxdiff "$T/out" y1 y1_exact)
    lt "$e" $lim || no "Atwood error $e"
    hs run "$M/rotating_wire.yaml" --method $meth --rtol 1e-8 --atol 1e-8 --set omega=2 \
        --columns t,r,r_exact
    rc_is 0
    e=$(maxdiff "$T/out" r r_exact)
    lt "$e" $lim || no "wire error $e"
    [ "$(wc -l <"$T/out")" = 202 ] || no "$(wc -l <"$T/out") lines"
    end
done

# ---- columns ----------------------------------------------------------------

begin columns_H_and_ambient_velocities
hs run "$M/rotating_wire.yaml" --columns "t,r,E,H,W_t,x',y'"
rc_is 0
[ "$(head -1 "$T/out")" = "t,r,E,H,W_t,x',y'" ] || no "header $(head -1 "$T/out")"
# H = -m omega^2 r0^2 / 2 = -0.02 in every row; E - E0 = W_t
awk -F, 'NR > 1 { d = $4 + 0.02; if (d < 0) d = -d; if (d > 1e-12) bad = 1
    w = $3 - 0.02 - $5; if (w < 0) w = -w; if (w > 1e-12) bad = 2 }
    END { exit bad }' "$T/out" || no "H or W_t off"
end

begin columns_all_embedding
hs run "$M/hoop_angle.yaml" --columns all --t-end 0.02
rc_is 0
for c in H x y z "x'" "y'" "z'" W_t energy_balance; do
    head -1 "$T/out" | tr ',' '\n' | grep -F -x -q -e "$c" || no "'all' lacks $c"
done
end

begin energy_in_moving_chart
# the hoop in its rotating chart and in Cartesian coordinates: the same E
hs run "$M/hoop_angle.yaml" --columns t,E -q --t-end 2
cp "$T/out" "$T/emb.csv"
hs run "$M/rotating_hoop.yaml" --columns t,E -q --t-end 2
paste -d, "$T/emb.csv" "$T/out" | awk -F, 'NR > 1 { d = $2 - $4; if (d < 0) d = -d;
    if (d > m) m = d } END { exit !(m < 1e-8) }' || no "E differs between the forms"
end

# ---- interpolate mode -------------------------------------------------------

begin interpolate_balance
hs run "$M/rotating_wire.yaml" --output-mode interpolate --columns t,E,W_t,energy_balance
rc_is 0
e=$(maxabs "$T/out" energy_balance)
lt "$e" 1e-8 || no "energy_balance $e"
[ "$(wc -l <"$T/out")" = 202 ] || no "$(wc -l <"$T/out") lines"
end

# ---- time -------------------------------------------------------------------

cat >"$T/epoch.yaml" <<'EOF'
parameters: {m: 1.0, l: 1.0, g: 9.81, theta0: 0.5}
coordinates: [x, y]
mass: [m, m]
potential: m*g*y
constraints: {rod: x^2 + y^2 - l^2}
initial: {t: 1.7e9, q: {x: l*sin(theta0), y: -l*cos(theta0)}}
simulate: {t_end: 1700000010, dt: 0.01}
EOF

begin epoch_start
for meth in rk8pd msbdf bsimp; do
    hs run "$T/epoch.yaml" --method $meth --columns t,x,E -q
    rc_is 0
    [ "$(sed -n 3p "$T/out" | cut -d, -f1)" = 1700000000.01 ] || no "second row $(sed -n 3p "$T/out")"
    [ "$(tail -1 "$T/out" | cut -d, -f1)" = 1700000010 ] || no "last row $(tail -1 "$T/out")"
    [ "$(wc -l <"$T/out")" = 1002 ] || no "$meth: $(wc -l <"$T/out") lines"
done
end

begin dt_below_resolution
hs run "$T/epoch.yaml" --dt 1e-6
rc_is 1
err_has "below the resolution of the output times"
[ -s "$T/out" ] && no "CSV written"
end

begin span_not_finite
sed 's/t: 1.7e9/t: -1e308/; s/t_end: 1700000010/t_end: 1e308/' "$T/epoch.yaml" >"$T/huge.yaml"
hs run "$T/huge.yaml"
rc_is 1
err_has "too large to represent"
hs run "$T/huge.yaml" --dt 1e300
rc_is 1
err_has "too large to represent"
end

begin grid_times_print_short
hs run "$M/pendulum.yaml" --t-end 2 --dt 0.1 --columns t -q
rc_is 0
[ "$(sed -n 19p "$T/out")" = 1.7 ] || no "row 18 at t=$(sed -n 19p "$T/out")"
[ "$(sed -n 5p "$T/out")" = 0.3 ] || no "row 4 at t=$(sed -n 5p "$T/out")"
end

# ---- the progress line ------------------------------------------------------

# script(1) gives the command a terminal.  A run interrupted after 3 s shows
# the line by itself (after 2 s), unless -q; a short run does not; --progress
# shows it from the start; with standard error not a terminal, never.
if command -v script >/dev/null 2>&1 && command -v timeout >/dev/null 2>&1; then
    long="$M/double_pendulum.yaml --t-end 1e5 --dt 10 -o $T/long.csv"
    begin progress_after_2s
    script -qec "timeout -s INT 3 $H run $long" "$T/ts" >/dev/null 2>&1
    grep -q 'elapsed, about' "$T/ts" || no "no progress line: $(tr '\r' '\n' <"$T/ts" | tail -3)"
    end

    begin progress_quiet
    script -qec "timeout -s INT 3 $H run $long -q" "$T/ts" >/dev/null 2>&1
    grep -q 'elapsed' "$T/ts" && no "a progress line with -q"
    end

    begin progress_short_run
    script -qec "$H run $M/pendulum.yaml -o $T/short.csv" "$T/ts" >/dev/null 2>&1
    grep -q 'elapsed' "$T/ts" && no "a progress line on a short run"
    end

    begin progress_forced
    script -qec "$H run $M/pendulum.yaml -q --progress -o $T/short.csv" "$T/ts" >/dev/null 2>&1
    grep -q '100%, .* elapsed' "$T/ts" || no "no final line with --progress"
    end

    begin progress_not_a_terminal
    hs run "$M/pendulum.yaml" --progress -o "$T/short.csv"
    rc_is 0
    grep -q 'elapsed' "$T/err" && no "a progress line in a pipe"
    end
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
