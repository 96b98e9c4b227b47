#!/bin/sh
# End-to-end tests of `holosim floquet`, `holosim lyapunov` and `holosim run
# --sensitivity` (POSIX sh): bad input (message, caret, exit code), the
# Kapitza pendulum's stability on both sides of its threshold in two forms,
# the Mathieu equation against its closed form (eps = 0) and against an
# independent RK4 integration of its monodromy (awk), a parametrically
# excited pendulum (the pumped swing) against RK4 too, the pendulum's
# sensitivities against the scaling law dtheta/dl = -t theta'/(2 l) and
# against finite differences of two runs and the multiplier's closed form,
# floquet --find (an orbit found, the pendulum's period against the
# elliptic integral, exit 3 without an orbit), sweep --command floquet, the
# CSV shapes.
#
#   HOLOSIM=bin/holosim sh tests/cli_flow.sh      (what `make check` runs)
#
# The last line of output is always `N passed, N failed`.

CLI_NAME=flow
CLI_TIMEOUT=60
. "$(dirname "$0")/cli_lib.sh"

MODELS=$ROOT/models

# field F of line L of stdout
field() { sed -n "$1p" "$T/out" | cut -d, -f"$2"; }
# |A - B| <= TOL
near_abs() {
    awk -v a="$1" -v b="$2" -v tol="$3" \
        'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= tol) }' || no "$4: $1, want $2"
}
# the caret of an option's error: stderr line 3 has '^' at column C of line 2
caret_at() {
    c=$(sed -n 3p "$T/err")
    [ "${#c}" = "$1" ] || no "caret at column ${#c}, want $1 ($(sed -n 2,3p "$T/err" | tr '\n' '|'))"
}

# ---- bad input ----------------------------------------------------------------

begin "--period not positive: exit 2"
hs floquet "$MODELS/mathieu.yaml" --period 0
rc_is 2; err_has "--period 0: the value is 0; --period must be a positive, finite number"; out_empty
hs floquet "$MODELS/mathieu.yaml" --period -1
rc_is 2; err_has "the value is -1"
end

begin "--period not finite: exit 2, placed"
hs floquet "$MODELS/mathieu.yaml" --period 1/0
rc_is 2; err_has "division by zero"; caret_at 15
hs floquet "$MODELS/mathieu.yaml" --period 1e400
rc_is 2; err_has "number out of range"
end

begin "--period garbage: exit 2 with a caret under the place"
hs floquet "$MODELS/mathieu.yaml" --period '2*(pi'
rc_is 2; err_has "--period 2*(pi: ')' expected"; caret_at 19
hs floquet "$MODELS/mathieu.yaml" --period '2*pi/ww'
rc_is 2; err_has "unknown name 'ww' (did you mean 'w'?)"; caret_at 19
end

begin "floquet without --period: usage, exit 1"
hs floquet "$MODELS/mathieu.yaml"
rc_is 1; err_has "floquet needs --period T"
end

begin "lyapunov --every not positive: exit 2"
hs lyapunov "$MODELS/mathieu.yaml" --every 0
rc_is 2; err_has "--every must be a positive, finite number"
end

begin "--spectrum on a too large model: exit 2, the limit said"
hs lyapunov "$MODELS/chain_angles.yaml" --set N=65 --spectrum --t-end 0.01
rc_is 2; err_has "2 (n - k) = 130 exponents: the limit is 128"
end

# N links in Cartesian coordinates (bench/chain_model.sh's chain), released
# at th0 from the vertical
cart_chain() {
    awk -v N="$1" 'BEGIN {
        print "parameters: {m: 1.0, l: 1.0, g: 9.81, th: 1.0}"
        s = ""; for (i = 1; i <= N; i++) s = s (i > 1 ? ", " : "") "x" i ", y" i
        print "coordinates: [" s "]"
        s = ""; for (i = 1; i <= 2 * N; i++) s = s (i > 1 ? ", " : "") "m"
        print "mass: [" s "]"
        s = ""; for (i = 1; i <= N; i++) s = s (i > 1 ? " + " : "") "y" i
        print "potential: m*g*(" s ")"
        print "constraints:\n  link1: x1^2 + y1^2 - l^2"
        for (i = 2; i <= N; i++)
            printf "  link%d: (x%d - x%d)^2 + (y%d - y%d)^2 - l^2\n", i, i, i - 1, i, i - 1
        print "initial:\n  q:"
        for (i = 1; i <= N; i++) printf "    x%d: %d*l*sin(th)\n    y%d: -%d*l*cos(th)\n", i, i, i, i
        print "simulate: {rtol: 1e-12, atol: 1e-12}"
    }'
}

begin "floquet on a model with n + k > 400: exit 2, the limit said"
cart_chain 134 >"$T/c134.yaml"
hs floquet "$T/c134.yaml" --period 1
rc_is 2
err_has "n + k = 402 (the limit is 400: the tangent vectors and the monodromy are dense; run --sensitivity and the largest Lyapunov exponent take more)"
out_empty
end

begin "--sensitivity beyond 400 unknowns (a 150-link chain, n + k = 450): central differences"
# nothing dense of size n + k: the saddle-point matrix sparse, the
# multipliers' derivatives along S; dq/dg against (q(g + h) - q(g - h))/2h
cart_chain 150 >"$T/c150.yaml"
hs run "$T/c150.yaml" --sensitivity g --t-end 0.2 --dt 0.2
rc_is 0
last=$(tail -n 1 "$T/out")
for g in 9.8101 9.8099; do
    hs run "$T/c150.yaml" --set g=$g --t-end 0.2 --dt 0.2 -q
    rc_is 0
    tail -n 1 "$T/out" >"$T/g$g.csv"
done
# columns: t, q (300), v (300), lambda (150), then dq/dg (300)
d=$(printf '%s\n' "$last" | cat - "$T/g9.8101.csv" "$T/g9.8099.csv" | awk -F, '
    NR == 1 { for (i = 2; i <= 301; i++) s[i] = $(751 + i - 1) }
    NR == 2 { for (i = 2; i <= 301; i++) p[i] = $i }
    NR == 3 { for (i = 2; i <= 301; i++) { fd = (p[i] - $i) / 2e-4; e = fd - s[i]
              if (e < 0) e = -e; if (e > m) m = e; if (s[i] > b || -s[i] > b) b = (s[i] < 0 ? -s[i] : s[i]) }
              printf "%.3g %.3g\n", m, b }')
awk -v d="$d" 'BEGIN { split(d, a, " "); exit !(a[2] > 1e-3 && a[1] < 1e-6 * a[2]) }' ||
    no "dq/dg against central differences: max error, max |dq/dg| = $d"
end

begin "lyapunov beyond 400 unknowns (a 150-link chain): the largest exponent, sparse"
cart_chain 150 >"$T/c150.yaml"
hs lyapunov "$T/c150.yaml" --t-end 0.1 --every 0.05 --csv
rc_is 0
[ "$(wc -l <"$T/out")" = 3 ] || no "want a header and 2 rows: $(cat "$T/out")"
tail -n 1 "$T/out" | awk -F, '{ exit !($1 == 0.1 && $2 + 0 == $2 && $2 > 0 && $2 < 100) }' ||
    no "the last row: $(tail -n 1 "$T/out")"
end

begin "--sensitivity and lyapunov beyond n + k = 6000: exit 2, the limit said"
cart_chain 2001 >"$T/c2001.yaml"
for cmd in "run --sensitivity g" "lyapunov"; do
    hs $cmd "$T/c2001.yaml" --t-end 0.01
    rc_is 2
    err_has "n + k = 6003 (the limit is 6000: the derivation of the variational equations walks n (n + k) pairs)"
    out_empty
done
end

begin "--sensitivity: an unknown parameter, exit 2 with a suggestion"
hs run "$MODELS/pendulum.yaml" --sensitivity l,theta --t-end 0.1
rc_is 2; err_has "unknown parameter 'theta' (did you mean 'theta0'?)"
err_has "(parameters: m, l, g, theta0)"; out_empty
hs run "$MODELS/pendulum.yaml" --sensitivity x --t-end 0.1
rc_is 2; err_has "unknown parameter 'x'"
hs run "$MODELS/pendulum.yaml" --sensitivity l,l --t-end 0.1
rc_is 2; err_has "names 'l' twice"
hs run "$MODELS/pendulum.yaml" --sensitivity 'l,,g' --t-end 0.1
rc_is 1; err_has "parameter names separated by commas"
end

begin "--sensitivity refuses what it does not support"
hs run "$MODELS/bouncing_ball.yaml" --sensitivity g
rc_is 1; err_has "--sensitivity does not support contacts"
hs run "$MODELS/pendulum.yaml" --sensitivity l --columns t,x
rc_is 1; err_has "--sensitivity does not support --columns"
hs run "$MODELS/sphere_liftoff.yaml" --sensitivity g
rc_is 1; out_empty
err_has "--sensitivity does not support events that change the state or the constraints (event 'leave')"
hs run "$MODELS/pendulum.yaml" --sensitivity l --method bsimp
rc_is 1; err_has "--method bsimp is not one"
hs run "$MODELS/pendulum.yaml" --sensitivity l --stabilize baumgarte
rc_is 1; err_has "--sensitivity does not support --stabilize"
end

begin "--sensitivity with a stop event: the last row at the run's stop time, the scaling law there"
# the angle form's dtheta/dl = -t theta'/(2 l) holds at every fixed t, the
# stop time too (the sensitivity of the stop time itself is not given)
hs run "$MODELS/pendulum_angle.yaml" -q --set l=1.7 --rtol 1e-11 --atol 1e-11 \
    --stop-when 'theta < 0' --summary "$T/sum.csv" -o /dev/null
rc_is 0
tstop=$(awk -F, 'NR == 2 { print $6 }' "$T/sum.csv")
hs run "$MODELS/pendulum_angle.yaml" --sensitivity l --set l=1.7 --rtol 1e-11 --atol 1e-11 \
    --stop-when 'theta < 0' --summary "$T/ssum.csv"
rc_is 0
err_has "stopped by event 'stop_when' (theta < 0) at t="
last=$(tail -n 1 "$T/out")
near_abs "$(echo "$last" | cut -d, -f1)" "$tstop" 1e-9 "the stop time"
near_abs "$(echo "$last" | cut -d, -f2)" 0 1e-9 "theta at the stop"
d=$(echo "$last" | awk -F, '{ d = $4 + $1 * $3 / (2 * 1.7); print (d < 0 ? -d : d) }')
near_abs "$d" 0 1e-7 "dtheta/dl + t theta'/(2 l) at the stop"
grep -q "stopped by event 'stop_when' (theta < 0)" "$T/ssum.csv" || no "summary: $(tail -n 1 "$T/ssum.csv")"
# rows 5 s apart (the angle crosses 0 several times between two): the first
# crossing all the same, as every accepted step is watched
hs run "$MODELS/pendulum_angle.yaml" --sensitivity l --set l=1.7 --rtol 1e-11 --atol 1e-11 \
    --stop-when 'theta < 0' --dt 5 --t-end 10
rc_is 0
near_abs "$(tail -n 1 "$T/out" | cut -d, -f1)" "$tstop" 1e-9 "the stop time, rows 5 s apart"
# before the stop, the rows of a run without it, byte for byte
n=$(($(wc -l <"$T/out") - 1))
head -n "$n" "$T/out" >"$T/stopped.csv"
hs run "$MODELS/pendulum_angle.yaml" --sensitivity l --set l=1.7 --rtol 1e-11 --atol 1e-11 \
    --t-end 2
head -n "$n" "$T/out" | cmp -s - "$T/stopped.csv" || no "the rows before the stop differ"
# the stop time's derivatives: t_stop scales as sqrt(l), so dt/dl =
# t_stop / (2 l); dt/dtheta0 against central differences of two runs' stop
# times; an event that reads an acceleration: not given, said so
hs run "$MODELS/pendulum_angle.yaml" --sensitivity l,theta0 --set l=1.7 --rtol 1e-11 \
    --atol 1e-11 --stop-when 'theta < 0' -o /dev/null
rc_is 0
dtdl=$(sed -n 's/.*; dt\/dl = \([^,]*\),.*/\1/p' "$T/err")
near_abs "$dtdl" "$(awk -v t="$tstop" 'BEGIN { printf "%.17g", t / (2 * 1.7) }')" 1e-10 \
    "dt_stop/dl against t_stop / (2 l)"
dtdth=$(sed -n 's/.*, dt\/dtheta0 = \(.*\)$/\1/p' "$T/err")
for th in 0.500001 0.499999; do
    hs run "$MODELS/pendulum_angle.yaml" -q --set l=1.7 --set theta0=$th --rtol 1e-11 \
        --atol 1e-11 --stop-when 'theta < 0' --summary "$T/s$th.csv" -o /dev/null
    rc_is 0
done
fd=$(awk -F, 'FNR == 2 { t[++n] = $6 } END { printf "%.17g", (t[1] - t[2]) / 2e-6 }' \
    "$T/s0.500001.csv" "$T/s0.499999.csv")
near_abs "$dtdth" "$fd" 1e-8 "dt_stop/dtheta0 against central differences"
hs run "$MODELS/pendulum_angle.yaml" --sensitivity l --stop-when 't > 0.5' -o /dev/null
rc_is 0
err_has "; dt/dl = 0"                         # a stop at a fixed time: 0, not -0
hs run "$MODELS/pendulum_angle.yaml" --sensitivity l --stop-when "theta'' > 1" -o /dev/null
rc_is 0
err_has "the stop time's derivatives not given (the event reads accelerations or multipliers"
# a dip inside one step (theta reaches -0.5 at t = 1.0 and comes back: it
# stays below -0.4999 for 0.012 s, shorter than a step): the run's stop
# all the same, the first of the two crossings
for th in 0.4999 0.499999; do
    hs run "$MODELS/pendulum_angle.yaml" -q --stop-when "theta < -$th" \
        --summary "$T/dsum.csv" -o /dev/null
    rc_is 0
    tdip=$(awk -F, 'NR == 2 { print $6 }' "$T/dsum.csv")
    hs run "$MODELS/pendulum_angle.yaml" --sensitivity l --stop-when "theta < -$th"
    rc_is 0
    last=$(tail -n 1 "$T/out")
    near_abs "$(echo "$last" | cut -d, -f1)" "$tdip" 1e-9 "the stop at a dip below -$th"
    near_abs "$(echo "$last" | cut -d, -f2)" "-$th" 1e-12 "theta at the dip's stop"
    awk -F, -v t="$tdip" 'BEGIN { exit !(t > 0.9 && t < 1.02) }' ||
        no "the plain run's stop at $tdip, not the first dip"
done
end

begin "--sensitivity with a record-only event: the same rows as without it"
hs run "$MODELS/double_pendulum_poincare.yaml" --sensitivity g,th2 --t-end 3
rc_is 0
cp "$T/out" "$T/rec.csv"
sed '/^events:/,/^  section:/d' "$MODELS/double_pendulum_poincare.yaml" >"$T/noev.yaml"
hs run "$T/noev.yaml" --sensitivity g,th2 --t-end 3
rc_is 0
grep -q "^ *section:" "$T/noev.yaml" && no "the event was not removed"
cmp -s "$T/out" "$T/rec.csv" || no "a record event changed the sensitivities"
end

begin "--sensitivity checks the times as a run does, and writes nothing then"
hs run "$MODELS/pendulum.yaml" --sensitivity l --t-end -1
rc_is 1; err_has "t_end (-1) must be greater than the initial time (0)"; out_empty
hs run "$MODELS/pendulum.yaml" --sensitivity l --t-end 1 --dt 1e-12
rc_is 1; err_has "too many output rows"; out_empty
hs run "$MODELS/pendulum.yaml" --sensitivity l --t-end 0.3 --dt 0.1
rc_is 0
[ "$(cut -d, -f1 "$T/out" | tr '\n' ' ')" = "t 0 0.1 0.2 0.3 " ] ||
    no "the times of the rows: $(cut -d, -f1 "$T/out" | tr '\n' ' ')"
end

# ---- Kapitza's pendulum: upright stable at w = 60, unstable at w = 30 ---------
# (a = 0.1, l = 1, g = 9.81; the threshold 44.3908, the classical estimate
# sqrt(2 g l)/a = 44.29: bracketed here within 0.08)

for f in kapitza kapitza_angle; do
    begin "Kapitza upright ($f): unstable at w = 30, stable at w = 60"
    hs floquet "$MODELS/$f.yaml" --period '2*pi/w' --set w=30
    rc_is 0; out_has "stability: unstable"
    hs floquet "$MODELS/$f.yaml" --period '2*pi/w' --set w=60 --csv
    rc_is 0; out_line 1 "mu,re,im,abs,arg,exponent,abs_max,verdict"; out_lines 3
    [ "$(field 2 8)" = stable ] || no "w = 60: verdict $(field 2 8)"
    # conservative: both on the unit circle, complex conjugates
    near_abs "$(field 2 4)" 1 1e-9 "w = 60 |mu_1|"
    near_abs "$(field 3 4)" 1 1e-9 "w = 60 |mu_2|"
    near_abs "$(field 2 3)" "$(awk -v x="$(field 3 3)" 'BEGIN { printf "%.17g", -x }')" 1e-9 "conjugate"
    end
    begin "Kapitza ($f): the threshold between w = 44.35 and 44.43"
    hs floquet "$MODELS/$f.yaml" --period '2*pi/w' --set w=44.35 --csv
    [ "$(field 2 8)" = unstable ] || no "w = 44.35: $(field 2 8)"
    hs floquet "$MODELS/$f.yaml" --period '2*pi/w' --set w=44.43 --csv
    [ "$(field 2 8)" = stable ] || no "w = 44.43: $(field 2 8)"
    end
done

begin "Kapitza: the Cartesian and the angle form give the same multipliers"
hs floquet "$MODELS/kapitza.yaml" --period '2*pi/w' --set w=30 --csv
a=$(field 2 2); b=$(field 3 2)
hs floquet "$MODELS/kapitza_angle.yaml" --period '2*pi/w' --set w=30 --csv
near_abs "$(field 2 2)" "$a" 1e-8 "mu_1"
near_abs "$(field 3 2)" "$b" 1e-8 "mu_2"
end

# ---- Mathieu: x'' + (delta + eps cos(w t)) x = 0 ------------------------------

# the trace of the monodromy over 2 pi / w by classical RK4 (N steps), awk:
# an integration that shares nothing with holosim's
mathieu_trace() {
    awk -v d="$1" -v e="$2" -v w="$3" -v N=20000 'BEGIN {
        pi = atan2(0, -1); T = 2 * pi / w; h = T / N; tr = 0
        for (c = 0; c < 2; c++) {
            x = (c == 0); v = (c == 1); t = 0
            for (i = 0; i < N; i++) {
                k1x = v; k1v = -(d + e * cos(w * t)) * x
                k2x = v + h / 2 * k1v; k2v = -(d + e * cos(w * (t + h / 2))) * (x + h / 2 * k1x)
                k3x = v + h / 2 * k2v; k3v = -(d + e * cos(w * (t + h / 2))) * (x + h / 2 * k2x)
                k4x = v + h * k3v; k4v = -(d + e * cos(w * (t + h))) * (x + h * k3x)
                x += h / 6 * (k1x + 2 * k2x + 2 * k3x + k4x)
                v += h / 6 * (k1v + 2 * k2v + 2 * k3v + k4v)
                t += h
            }
            tr += (c == 0) ? x : v
        }
        printf "%.15g\n", tr }'
}

begin "Mathieu, eps = 0: mu = exp(+-i 2 pi sqrt(delta)) (closed form)"
hs floquet "$MODELS/mathieu.yaml" --period '2*pi/w' --set eps=0 --set delta=0.3 --csv
rc_is 0
want=$(awk 'BEGIN { printf "%.17g", cos(2 * atan2(0, -1) * sqrt(0.3)) }')
near_abs "$(field 2 2)" "$want" 1e-9 "Re mu"
want=$(awk 'BEGIN { s = sin(2 * atan2(0, -1) * sqrt(0.3)); printf "%.17g", s < 0 ? -s : s }')
im=$(field 2 3); case $im in -*) im=${im#-} ;; esac
near_abs "$im" "$want" 1e-9 "|Im mu|"
end

# the floquet --csv in $T/out against a trace $1 computed apart: mu_1 +
# mu_2 to 1e-8, mu_1 mu_2 = 1 to 1e-9 (no damping: Liouville; the swing's
# exp(-int 2 L'/L) over a period), the verdict $2
two_multipliers() {
    tr=$(awk -F, 'NR > 1 { s += $2 } END { printf "%.15g\n", s }' "$T/out")
    near_abs "$tr" "$1" 1e-8 "mu_1 + mu_2"
    det=$(awk -F, 'NR == 2 { a = $2; b = $3 } NR == 3 { c = $2; d = $3 }
                   END { printf "%.15g\n", a * c - b * d }' "$T/out")
    near_abs "$det" 1 1e-9 "mu_1 mu_2"
    [ "$(field 2 8)" = "$2" ] || no "verdict $(field 2 8)"
}

for pt in "0.25 0.1 unstable" "0.5 0.1 stable" "1.0 0.3 unstable" "0.1 0.05 stable"; do
    set -- $pt
    begin "Mathieu delta = $1, eps = $2: the trace against RK4, verdict $3"
    hs floquet "$MODELS/mathieu.yaml" --period '2*pi/w' --set delta=$1 --set eps=$2 --csv
    rc_is 0
    two_multipliers "$(mathieu_trace $1 $2 1)" "$3"
    end
done

# ---- a parametrically excited pendulum: the pumped swing ----------------------

# the trace of its monodromy over 2 pi / w, theta'' = -2 (L'/L) theta' -
# (g/L) theta, L = l0 (1 + e cos(w t)), l0 = 1, g = 9.81, by RK4 (awk)
swing_trace() {
    awk -v e="$1" -v w="$2" -v N=20000 'BEGIN {
        pi = atan2(0, -1); T = 2 * pi / w; h = T / N; tr = 0
        for (c = 0; c < 2; c++) {
            x = (c == 0); v = (c == 1); t = 0
            for (i = 0; i < N; i++) {
                for (s = 0; s < 4; s++) {
                    ts = t + (s == 0 ? 0 : s == 3 ? h : h / 2)
                    xs = x + (s == 0 ? 0 : (s == 3 ? h : h / 2) * kx[s - 1])
                    vs = v + (s == 0 ? 0 : (s == 3 ? h : h / 2) * kv[s - 1])
                    L = 1 + e * cos(w * ts); Ld = -e * w * sin(w * ts)
                    kx[s] = vs; kv[s] = -2 * Ld / L * vs - 9.81 / L * xs
                }
                x += h / 6 * (kx[0] + 2 * kx[1] + 2 * kx[2] + kx[3])
                v += h / 6 * (kv[0] + 2 * kv[1] + 2 * kv[2] + kv[3])
                t += h
            }
            tr += (c == 0) ? x : v
        }
        printf "%.15g\n", tr }'
}

for pt in "0.1 6.264184 unstable" "0.1 4 stable" "0.2 7 unstable"; do
    set -- $pt
    begin "pumped swing eps = $1, w = $2: the trace against RK4, det = 1, verdict $3"
    hs floquet "$MODELS/pumped_swing.yaml" --period '2*pi/w' --set eps=$1 --set w=$2 --csv
    rc_is 0
    two_multipliers "$(swing_trace $1 $2)" "$3"
    end
done

# ---- floquet --find ---------------------------------------------------------------

begin "--find, driven: Kapitza from theta0 = 0.1 finds the upright orbit theta = 0"
hs floquet "$MODELS/kapitza_angle.yaml" --period '2*pi/w' --set w=60 --set theta0=0.1 --find
rc_is 0
th=$(sed -n 's/^periodic orbit .*: theta = \([^,]*\), .*/\1/p' "$T/out")
near_abs "$th" 0 1e-9 "theta of the orbit"
out_has "stability: stable"
end

begin "--find, autonomous: the pendulum's period at amplitude 0.5 (4 K(sin 0.25)/sqrt(g/l))"
hs floquet "$MODELS/pendulum_angle.yaml" --period 2 --find --csv
rc_is 0
err_has "the period an unknown"
Tf=$(sed -n 's/.*, T = \([^;]*\);.*/\1/p' "$T/err")
Tk=$(awk 'BEGIN { pi = atan2(0, -1); k = sin(0.25); a = 1; b = sqrt(1 - k * k)
              for (i = 0; i < 30; i++) { t = (a + b) / 2; b = sqrt(a * b); a = t }
              printf "%.17g", 4 * pi / (2 * a) / sqrt(9.81) }')
near_abs "$Tf" "$Tk" 1e-8 "T"
end

begin "--find: no periodic orbit (a steady push), exit 3 with the best point"
cat >"$T/push.yaml" <<'EOF'
name: pushed particle
parameters: {m: 1.0}
coordinates: [x]
kinetic: 0.5*m*x'^2
potential: -(1 + cos(t))*x
initial: {q: {x: 0}}
EOF
hs floquet "$T/push.yaml" --period '2*pi' --find
rc_is 3
err_has "holosim: best point: x = "
err_has "no periodic orbit found: Newton shooting stopped after"
end

# ---- lyapunov -------------------------------------------------------------------

begin "lyapunov --csv: t and one column per exponent, the last row at t_end"
hs lyapunov "$MODELS/mathieu.yaml" --t-end 10 --every 1 --spectrum --csv --set delta=0.5
rc_is 0; out_line 1 "t,lambda_1,lambda_2"; out_lines 11
[ "$(field 11 1)" = 10 ] || no "last t $(field 11 1)"
# a conservative system: the spectrum sums to 0
s=$(awk -F, 'END { printf "%.15g\n", $2 + $3 }' "$T/out")
near_abs "$s" 0 1e-6 "lambda_1 + lambda_2"
end

# ---- run --sensitivity ----------------------------------------------------------

begin "--sensitivity: the CSV's columns"
hs run "$MODELS/pendulum.yaml" --sensitivity l,theta0 --t-end 1 --dt 0.5
rc_is 0
out_line 1 "t,x,y,x',y',lambda_rod,dx/dl,dy/dl,dx'/dl,dy'/dl,dlambda_rod/dl,dx/dtheta0,dy/dtheta0,dx'/dtheta0,dy'/dtheta0,dlambda_rod/dtheta0"
out_lines 4
end

begin "--sensitivity, angle form: dtheta/dl = -t theta'/(2 l) to 1e-7 over 10 s"
hs run "$MODELS/pendulum_angle.yaml" --sensitivity l,theta0 --set l=1.7 --rtol 1e-11 --atol 1e-11
rc_is 0
out_line 1 "t,theta,theta',dtheta/dl,dtheta'/dl,dtheta/dtheta0,dtheta'/dtheta0"
worst=$(awk -F, 'NR > 1 { e = $4 + $1 * $3 / (2 * 1.7); if (e < 0) e = -e; if (e > m) m = e }
                 END { printf "%.3g\n", m }' "$T/out")
near_abs "$worst" 0 1e-7 "max |dtheta/dl + t theta'/(2 l)|"
# the initial angle: S(t0) = (1, 0), and dtheta/dl = 0 at t0
[ "$(field 2 6)" = 1 ] || no "dtheta/dtheta0 at t0: $(field 2 6)"
[ "$(field 2 4)" = 0 ] || no "dtheta/dl at t0: $(field 2 4)"
end

begin "--sensitivity, Cartesian form (a constraint): the scaling law through theta = atan2(x, -y)"
hs run "$MODELS/pendulum.yaml" --sensitivity l --set l=1.3 --rtol 1e-11 --atol 1e-11
rc_is 0
# theta' = (-y x' + x y')/l^2, dtheta/dl = (-y dx/dl + x dy/dl)/l^2
worst=$(awk -F, -v l=1.3 'NR > 1 { th1 = (-$3 * $4 + $2 * $5) / (l * l)
                 dth = (-$3 * $7 + $2 * $8) / (l * l); e = dth + $1 * th1 / (2 * l)
                 if (e < 0) e = -e; if (e > m) m = e } END { printf "%.3g\n", m }' "$T/out")
near_abs "$worst" 0 1e-7 "max |dtheta/dl + t theta'/(2 l)|"
end

begin "--sensitivity: dlambda/dl against lambda = m (g y - |v|^2)/(2 l^2) differentiated by hand"
# (x.a + |v|^2 = 0 and m a = -m g e_y + 2 lambda (x, y)); m = 1
hs run "$MODELS/pendulum.yaml" --sensitivity l --set l=1.3 --rtol 1e-11 --atol 1e-11
rc_is 0
worst=$(awk -F, -v l=1.3 -v g=9.81 'NR > 1 {
        lam = (g * $3 - $4 * $4 - $5 * $5) / (2 * l * l)
        e1 = lam - $6; if (e1 < 0) e1 = -e1; if (e1 > m1) m1 = e1
        d = -2 * lam / l + (g * $8 - 2 * ($4 * $9 + $5 * $10)) / (2 * l * l)
        e = d - $11; if (e < 0) e = -e; if (e > m) m = e }
        END { printf "%.3g\n", (m1 > m ? m1 : m) }' "$T/out")
near_abs "$worst" 0 1e-7 "max |lambda, dlambda_rod/dl - by hand|"
end

# the central difference (run(p + h) - run(p - h)) / 2h against every column
fd_check() {    # fd_check MODEL PARAM VALUE H TOL COLUMNS [OPTION...]
    m=$1 p=$2 v=$3 h=$4 tol=$5 cols=$6
    shift 6
    "$H" run "$m" --sensitivity "$p" --set "$p=$v" "$@" >"$T/s.csv" 2>/dev/null ||
        no "run --sensitivity $p"
    up=$(awk -v v="$v" -v h="$h" 'BEGIN { printf "%.17g", v + h }')
    dn=$(awk -v v="$v" -v h="$h" 'BEGIN { printf "%.17g", v - h }')
    "$H" run "$m" -q --set "$p=$up" --columns "$cols" "$@" >"$T/up.csv" 2>/dev/null || no "run +h"
    "$H" run "$m" -q --set "$p=$dn" --columns "$cols" "$@" >"$T/dn.csv" 2>/dev/null || no "run -h"
    set -- "$m" "$p" "$v" "$h" "$tol" "$cols"
    ncol=$(echo "$6" | tr ',' '\n' | wc -l)
    worst=$(paste -d, "$T/s.csv" "$T/up.csv" "$T/dn.csv" | awk -F, -v k="$ncol" -v h="$4" '
        NR == 1 { nf = NF - 2 * k; next }
        { for (i = 2; i <= k; i++) {
              fd = ($(nf + i) - $(nf + k + i)) / (2 * h); e = fd - $(k + i - 1)
              if (e < 0) e = -e; if (e > m) m = e } }
        END { printf "%.3g\n", m }')
    [ -z "${FLOW_VERBOSE:-}" ] || echo "fd $2: $worst" >&2
    near_abs "$worst" 0 "$5" "max |S - finite difference| in $2"
}

begin "--sensitivity against finite differences of two runs: l, theta0, g (Cartesian)"
fd_check "$MODELS/pendulum.yaml" l 1 1e-5 1e-6 "t,x,y,x',y',lambda_rod"
fd_check "$MODELS/pendulum.yaml" theta0 0.5 1e-5 1e-6 "t,x,y,x',y',lambda_rod"
fd_check "$MODELS/pendulum.yaml" g 9.81 1e-4 1e-6 "t,x,y,x',y',lambda_rod"
end

begin "--sensitivity against finite differences: a moving constraint (Kapitza, w)"
fd_check "$MODELS/kapitza.yaml" w 30 1e-5 1e-5 "t,x,y,x',y',lambda_rod"
end

# x'' = -w^2 x + u(t), u = sin(W t) an input, x(0) = x0, x'(0) = 0:
# x = x0 cos(w t) - W sin(w t)/(w D) + sin(W t)/D, D = w^2 - W^2
cat >"$T/osc.yaml" <<'EOF'
name: forced linear oscillator
parameters: {m: 1.0, w: 2.0, x0: 0.3}
inputs: [u]
coordinates: [x]
mass: [m]
potential: 0.5*m*w^2*x^2
forces: {x: m*u}
initial: {q: {x: x0}}
simulate: {t_end: 6, dt: 0.25, rtol: 1e-12, atol: 1e-12}
EOF

begin "--sensitivity with an input: the forced oscillator's x and dx/dw against the closed form"
hs run "$T/osc.yaml" --sensitivity w,x0 --input 'u=sin(1.3*t)'
rc_is 0
[ "$(head -n 1 "$T/out")" = "t,x,x',dx/dw,dx'/dw,dx/dx0,dx'/dx0" ] || no "header $(head -n 1 "$T/out")"
# dx/dw differentiated by hand; dx/dx0 = cos(w t)
worst=$(awk -F, -v w=2 -v W=1.3 -v x0=0.3 'NR > 1 { t = $1; D = w * w - W * W
        x = x0 * cos(w * t) - W * sin(w * t) / (w * D) + sin(W * t) / D
        a = t * cos(w * t) / (w * D) - sin(w * t) * (D + 2 * w * w) / (w * w * D * D)
        dx = -x0 * t * sin(w * t) - W * a - 2 * w * sin(W * t) / (D * D)
        e[1] = x - $2; e[2] = dx - $4; e[3] = cos(w * t) - $6
        for (i = 1; i <= 3; i++) { if (e[i] < 0) e[i] = -e[i]; if (e[i] > m) m = e[i] } }
        END { printf "%.3g\n", m }' "$T/out")
near_abs "$worst" 0 1e-9 "max |x, dx/dw, dx/dx0 - closed form|"
[ "$(wc -l <"$T/out")" = 26 ] || no "$(wc -l <"$T/out") lines, want 26"
end

begin "--sensitivity with inputs: finite differences, a table input's kinks stepped to"
# h = 1e-4: the central difference's error is O(h^2) (1e-8 times the third
# derivative, O(1) here) plus the runs' error over h (1e-12 / 1e-4)
fd_check "$T/osc.yaml" w 2 1e-4 1e-6 "t,x,x'" --input 'u=sin(1.3*t)'
cat >"$T/push.yaml" <<'EOF'
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
printf 't,F\n0,0\n0.35,1\n0.7,-0.5\n1.2,0.25\n' >"$T/push.csv"
# the cart-pole's third derivative in l is near 1e2 (the difference goes
# as h^2: 1e-4 at h = 1e-3, 1e-6 at 1e-4), so h = 1e-5: 1e-8, plus the
# runs' error over h (1e-12 / 1e-5)
fd_check "$T/push.yaml" l 0.5 1e-5 2e-7 "t,x,th,x',th'" --input "F=$T/push.csv"
# the same push as an expression of t: the same sensitivities
hs run "$T/push.yaml" --sensitivity l,M --input "F=$T/push.csv"
cp "$T/out" "$T/table.csv"
hs run "$T/push.yaml" --sensitivity l,M --input 'F=if(t < 0.35, t/0.35, if(t < 0.7, 1 - 1.5*(t - 0.35)/0.35, if(t < 1.2, -0.5 + 0.75*(t - 0.7)/0.5, 0.25)))'
d=$(paste -d, "$T/table.csv" "$T/out" | awk -F, 'NR > 1 { k = NF / 2
        for (i = 2; i <= k; i++) { e = $i - $(i + k); if (e < 0) e = -e; if (e > m) m = e } }
        END { printf "%.3g\n", m + 0 }')
near_abs "$d" 0 1e-8 "table and expression differ by"
end

begin "floquet and lyapunov with an input: the forced oscillator's multipliers exp(+-i w T)"
hs floquet "$T/osc.yaml" --period '2*pi/1.3' --input 'u=sin(1.3*t)' --csv
rc_is 0
re=$(awk -v w=2 'BEGIN { printf "%.17g", cos(w * 2 * atan2(0, -1) / 1.3) }')
im=$(awk -v w=2 'BEGIN { s = sin(w * 2 * atan2(0, -1) / 1.3); printf "%.17g", s < 0 ? -s : s }')
near_abs "$(field 2 2)" "$re" 1e-9 "re mu"
near_abs "$(field 2 3)" "$im" 1e-9 "|im mu|"
near_abs "$(field 2 4)" 1 1e-9 "|mu|"
hs lyapunov "$T/osc.yaml" --t-end 20 --every 1 --input 'u=sin(1.3*t)' --csv
rc_is 0
near_abs "$(tail -n 1 "$T/out" | cut -d, -f2)" 0 0.1 "lambda_1 of a linear oscillator"
end

begin "--sensitivity: inconsistent-in-p initial data warned"
cat >"$T/off.yaml" <<'EOF'
name: pendulum whose start does not follow l
parameters: {m: 1.0, l: 1.0, g: 9.81}
coordinates: [x, y]
mass: [m, m]
potential: m*g*y
constraints:
  rod: x^2 + y^2 - l^2
initial:
  q: {x: 0.6, y: -0.8}
simulate: {t_end: 1, dt: 0.5}
EOF
hs run "$T/off.yaml" --sensitivity l
rc_is 0; err_has "the initial data are not consistent for every value of the parameters"
end

begin "native kernels: floquet, lyapunov and --sensitivity byte for byte the VM's"
# the variational programs compiled to C (--native=always) against the VM
# (--native=never): the same doubles, so the same bytes; a build must land
# in the cache (else the comparison compared the VM with itself)
if command -v "${CC:-cc}" >/dev/null 2>&1; then
    HOLOSIM_CACHE=$T/cache
    export HOLOSIM_CACHE
    same() {
        hs "$@" --native=never; cp "$T/out" "$T/vm.out"; r1=$rc
        hs "$@" --native=always; r2=$rc
        [ "$r1" = 0 ] && [ "$r2" = 0 ] && cmp -s "$T/vm.out" "$T/out" ||
            no "differ (exit $r1, $r2): $*"
    }
    for f in kapitza kapitza_angle; do
        same floquet "$MODELS/$f.yaml" --period '2*pi/w' --set w=60 --csv
    done
    same floquet "$MODELS/pendulum_angle.yaml" --period 2 --find --csv
    same lyapunov "$MODELS/double_pendulum.yaml" --t-end 2 --every 0.5 --spectrum --csv
    same lyapunov "$MODELS/double_pendulum_angles.yaml" --t-end 2 --every 0.5 --csv
    same run "$MODELS/pendulum.yaml" --sensitivity l,theta0 --t-end 2
    same run "$MODELS/double_pendulum.yaml" --sensitivity g --t-end 1
    same run "$MODELS/kapitza.yaml" --sensitivity w,a --t-end 1
    n=$(ls "$T/cache/native"/*.so 2>/dev/null | wc -l)
    [ "$n" -ge 8 ] || no "$n native builds in the cache, want one per model and command"
    unset HOLOSIM_CACHE
else
    echo "SKIP cli_flow.sh: no C compiler for the native kernels" >&2
fi
end

begin "batch --sensitivity: an unknown --final column fails the batch up front, once"
printf 'name\tl\na\t1\nb\t2\n' >"$T/pts.tsv"
mkdir -p "$T/bo" "$T/bs"
hs batch "$MODELS/pendulum.yaml" --points "$T/pts.tsv" --outdir "$T/bo" --status-dir "$T/bs" \
    --t-end 0.1 --sensitivity l --final dx/dll
rc_is 2; out_empty
[ "$(grep -c . "$T/err")" = 1 ] || no "$(grep -c . "$T/err") lines on stderr, want 1"
err_has "--final: unknown column 'dx/dll' (did you mean 'dx/dl'?)"
[ -z "$(ls "$T/bs")" ] || no "statuses written: $(ls "$T/bs")"
# a known one: every point runs, its status holds the CSV's last dx/dl
hs batch "$MODELS/pendulum.yaml" --points "$T/pts.tsv" --outdir "$T/bo" --status-dir "$T/bs" \
    --t-end 0.1 --sensitivity l --final dx/dl
rc_is 0
for p in a b; do
    f=$(tail -n 1 "$T/bo/$p.csv" | cut -d, -f7)
    awk -F, -v f="$f" '{ exit !(f != "" && $(NF - 1) + 0 == f + 0) }' "$T/bs/$p.status" ||
        no "$p: final dx/dl $f not in the status: $(cat "$T/bs/$p.status")"
done
end

begin "sweep --command floquet: a stability chart (abs_max per point)"
if command -v bash >/dev/null 2>&1; then
    HOLOSIM=$H bash "$ROOT/scripts/sweep" --command floquet -j 1 -o "$T/chart" \
        "$MODELS/kapitza_angle.yaml" w=30,60 -- --period '2*pi/w' >"$T/out" 2>"$T/err"
    rc=$?
    rc_is 0
    head -n 1 "$T/chart/summary.csv" | grep -q '^w,mu,re,im,abs,arg,exponent,abs_max,verdict,exit,message,file$' ||
        no "summary header: $(head -n 1 "$T/chart/summary.csv")"
    a30=$(awk -F, '$1 == 30 && $2 == 1 { print $8 }' "$T/chart/summary.csv")
    a60=$(awk -F, '$1 == 60 && $2 == 1 { print $8 }' "$T/chart/summary.csv")
    awk -v a="$a30" 'BEGIN { exit !(a > 1.5) }' || no "w = 30: abs_max $a30"
    near_abs "$a60" 1 1e-9 "w = 60: abs_max"
    # the same as floquet run directly at that point
    hs floquet "$MODELS/kapitza_angle.yaml" --period '2*pi/w' --set w=30 --csv
    [ "$(field 2 7)" = "$a30" ] || no "w = 30: sweep $a30, floquet $(field 2 7)"
else
    echo "SKIP cli_flow.sh: no bash for scripts/sweep" >&2
fi
end

summary
