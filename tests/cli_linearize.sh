#!/bin/sh
# End-to-end tests of `holosim linearize` (holosim(1), LINEARIZE): the
# matrices, poles, zeros and frequency responses of closed forms (the CTMS
# inverted pendulum, a point-mass cart-pole in its angle and in Cartesian
# coordinates with the rod as a constraint), the files by extension (the
# .mat read back by SciPy when a Python with SciPy is there), the
# agreement with modes --linearize, and every error path.
#
#   HOLOSIM=bin/holosim sh tests/cli_linearize.sh
#
# The last line of output is always `N passed, N failed`.

CLI_NAME=linearize
CLI_TIMEOUT=20
. "$(dirname "$0")/cli_lib.sh"

# |A - B| <= TOL * max(|B|, FLOOR)
near() {
    awk -v a="$1" -v b="$2" -v tol="$3" -v fl="${5:-0}" \
        'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; if (m < fl) m = fl;
                 exit !(a != "" && b != "" && d <= tol * m) }' || no "$4: $1, want $2"
}
# the lines of stdout after the line starting with $1, up to the next line
# that does not start with two spaces
block() { awk -v h="$1" 'f && /^  / { print; next } f { exit } index($0, h) == 1 { f = 1 }' "$T/out"; }
# the value of entry (row, column) of matrix M in a linearize .csv
entry() { awk -F, -v m="$2" -v r="$3" -v c="$4" '$1 == m && $2 == r && $3 == c { print $4 }' "$1"; }

cd "$T" || exit 1

# The CTMS inverted pendulum (Control Tutorials for MATLAB and Simulink):
# theta from upright, cart friction b, pole inertia I about its centre.
cat >ctms.yaml <<'EOF'
name: CTMS inverted pendulum
parameters: {M: 0.5, m: 0.2, b: 0.1, I: 0.006, l: 0.3, g: 9.8}
inputs: [F]
coordinates: [x, th]
kinetic: 0.5*(M+m)*x'^2 - m*l*x'*th'*cos(th) + 0.5*(I + m*l^2)*th'^2
potential: m*g*l*cos(th)
forces: {x: F - b*x'}
initial: {q: {x: 0, th: 0}}
EOF

# A point-mass cart-pole (theta from upright), and the same in Cartesian
# coordinates: the bob (px, py) held at l from the cart by a constraint.
cat >cp_angle.yaml <<'EOF'
parameters: {M: 1, m: 0.1, l: 0.5, g: 9.81}
inputs: [F]
coordinates: [x, th]
kinetic: 0.5*(M+m)*x'^2 + m*l*x'*th'*cos(th) + 0.5*m*l^2*th'^2
potential: m*g*l*cos(th)
forces: {x: F}
initial: {q: {x: 0, th: 0}}
EOF
cat >cp_cart.yaml <<'EOF'
parameters: {M: 1, m: 0.1, l: 0.5, g: 9.81}
inputs: [F]
coordinates: [x, px, py]
mass: [M, m, m]
potential: m*g*py
forces: {x: F}
constraints: {rod: (px - x)^2 + py^2 - l^2}
initial: {q: {x: 0, px: 0, py: 0.5}}
outputs: {th: "atan2(px - x, py)", ax: "x''", lam: lambda_rod}
EOF

begin "CTMS pendulum: the poles (CTMS's numbers) and the roots of its closed-form polynomial"
hs linearize ctms.yaml
rc_is 0
block "poles" >poles
[ "$(wc -l <poles | tr -d ' ')" = 4 ] || no "$(wc -l <poles) poles"
set -- $(cat poles)
# CTMS's numbers, given to 6 decimals: within 1e-6 absolute
near "$1" -5.604094 1e-6 "pole 1" 1
near "$2" -0.142832 1e-6 "pole 2" 1
near "$3" 0 1 "pole 3" 1e-12
near "$4" 5.565108 1e-6 "pole 4" 1
# s^3 + b (I + m l^2)/q s^2 - (M + m) m g l/q s - b m g l/q = 0, q = (M + m)(I + m l^2) - (m l)^2
for s in "$1" "$2" "$4"; do
    awk -v s="$s" 'BEGIN { M = 0.5; m = 0.2; b = 0.1; I = 0.006; l = 0.3; g = 9.8;
        J = I + m*l*l; q = (M + m)*J - (m*l)^2;
        p = s^3 + b*J/q*s^2 - (M + m)*m*g*l/q*s - b*m*g*l/q;
        exit !(p < 1e-12 * 200 && p > -1e-12 * 200) }' || no "pole $s is no root of the cubic"
done
end

begin "CTMS pendulum: A, B in closed form; zeros of x/F at +-sqrt(m g l/(I + m l^2)), of th/F at 0"
hs linearize ctms.yaml -o ctms.csv
rc_is 0
q=0.0132        # (M + m)(I + m l^2) - (m l)^2
near "$(entry ctms.csv A "x'" th)" "$(awk -v q=$q 'BEGIN { printf "%.17g", 0.04*9.8*0.09/q }')" 1e-14 "A x',th"
near "$(entry ctms.csv A "th'" th)" "$(awk -v q=$q 'BEGIN { printf "%.17g", 0.7*0.2*9.8*0.3/q }')" 1e-14 "A th',th"
near "$(entry ctms.csv A "x'" "x'")" "$(awk -v q=$q 'BEGIN { printf "%.17g", -0.1*0.024/q }')" 1e-14 "A x',x'"
near "$(entry ctms.csv B "x'" F)" "$(awk -v q=$q 'BEGIN { printf "%.17g", 0.024/q }')" 1e-14 "B x'"
near "$(entry ctms.csv B "th'" F)" "$(awk -v q=$q 'BEGIN { printf "%.17g", 0.06/q }')" 1e-14 "B th'"
hs linearize ctms.yaml
set -- $(block "zeros of x/F")
near "$2" "$(awk 'BEGIN { printf "%.17g", sqrt(0.2*9.8*0.3/0.024) }')" 1e-12 "zero of x/F"
near "$1" "$(awk 'BEGIN { printf "%.17g", -sqrt(0.2*9.8*0.3/0.024) }')" 1e-12 "zero of x/F"
set -- $(block "zeros of th/F")
[ "$*" = "0 0" ] || no "zeros of th/F: $*"
end

begin "CTMS pendulum: th/F equals CTMS's transfer function at several w (1e-8)"
# (m l/q) s / (s^3 + b (I + m l^2)/q s^2 - (M + m) m g l/q s - b m g l/q)
hs linearize ctms.yaml --outputs th --bode 0.05:50:9
rc_is 0
out_lines 10
awk -F, 'NR > 1 { M = 0.5; m = 0.2; b = 0.1; I = 0.006; l = 0.3; g = 9.8;
        J = I + m*l*l; q = (M + m)*J - (m*l)^2; w = $1;
        nr = 0; ni = m*l/q*w;                                  # numerator at s = jw
        dr = -b*J/q*w*w - b*m*g*l/q;
        di = -w*w*w - (M + m)*m*g*l/q*w;                       # Im of the cubic
        den = dr*dr + di*di; gr = (nr*dr + ni*di)/den; gi = (ni*dr - nr*di)/den;
        mag = exp($3/20*log(10)); ph = $4*3.141592653589793/180;
        er = mag*cos(ph) - gr; ei = mag*sin(ph) - gi; e = sqrt(er*er + ei*ei)/sqrt(gr*gr + gi*gi);
        if (e > 1e-8 || $2 != "th/F") { print w, e; exit 1 } }' "$T/out" >bode_err ||
    no "th/F differs from CTMS's: $(cat bode_err)"
end

begin "cart-pole, angle form: poles +-sqrt((M + m) g/(M l)), zeros of x/F +-sqrt(g/l)"
hs linearize cp_angle.yaml
rc_is 0
set -- $(block "poles")
p=$(awk 'BEGIN { printf "%.17g", sqrt(1.1*9.81/0.5) }')
z=$(awk 'BEGIN { printf "%.17g", sqrt(9.81/0.5) }')
near "$1" "-$p" 1e-12 "pole"
near "$4" "$p" 1e-12 "pole"
near "$p" 4.645643 1e-6 "the closed form" 1
set -- $(block "zeros of x/F")
near "$1" "-$z" 1e-12 "zero"
near "$2" "$z" 1e-12 "zero"
near "$z" 4.429447 1e-6 "the closed form" 1
end

begin "cart-pole, Cartesian with the rod as a constraint: the same poles and zeros"
hs linearize cp_cart.yaml --outputs x,th,ax,lam
rc_is 0
set -- $(block "poles")
near "$1" "-$p" 1e-12 "pole"
near "$4" "$p" 1e-12 "pole"
set -- $(block "zeros of x/F")
near "$1" "-$z" 1e-12 "zero"
near "$2" "$z" 1e-12 "zero"
# x'' = s^2 x: the zeros of x/F and two at 0; the rod's multiplier does not
# move to first order under a horizontal push
set -- $(block "zeros of ax/F")
[ "$2 $3" = "0 0" ] || no "zeros of ax/F: $*"
near "$4" "$z" 1e-12 "zero of ax/F"
out_has "zeros of lam/F: none (the transfer function is 0)"
end

begin "cart-pole: x/F equals its closed form at several w, in both forms (1e-8)"
# G(jw) = -(l w^2 + g) / (w^2 (M l w^2 + (M + m) g)): real, negative
for f in cp_angle cp_cart; do
    hs linearize $f.yaml --outputs x --bode 0.3:30:7
    rc_is 0
    out_line 1 "w,pair,mag_db,phase_deg"
    out_lines 8
    awk -F, 'NR > 1 { w = $1; g = (0.5*w*w + 9.81) / (w*w*(0.5*w*w + 1.1*9.81));
                      mag = exp($3/20*log(10)); d = mag/g - 1; if (d < 0) d = -d;
                      if (d > 1e-8 || $2 != "x/F" || ($4 != 180 && $4 != -180)) exit 1 }' \
        "$T/out" || no "$f: $(sed -n 2p "$T/out")"
done
end

begin "cart-pole: D exact where an output reads an acceleration; C of the angle output"
hs linearize cp_cart.yaml --outputs ax,th,lambda_rod,x\'\' -o cart.csv
rc_is 0
near "$(entry cart.csv D ax F)" 1 1e-15 "D ax/F (1/M)"
near "$(entry cart.csv D "x''" F)" 1 1e-15 "D x''/F"
near "$(entry cart.csv C ax x)" "$(awk 'BEGIN { printf "%.17g", 0.1*9.81/(1*0.5) }')" 1e-14 "C ax,x"
near "$(entry cart.csv C th px)" 2 1e-15 "C th,px (1/l)"
end

begin "cart-pole, Cartesian: the reactions R_x, R_px at first order, 2 lambda* (dx - dpx)"
# lambda* = m g / (2 l) holds the bob up; R = G_q^T lambda
hs linearize cp_cart.yaml --outputs R_x,R_px,R_py -o react.csv
rc_is 0
r=$(awk 'BEGIN { printf "%.17g", 2*0.1*9.81/(2*0.5) }')
near "$(entry react.csv C R_x x)" "$r" 1e-14 "C R_x,x"
near "$(entry react.csv C R_x px)" "-$r" 1e-14 "C R_x,px"
near "$(entry react.csv C R_px x)" "-$r" 1e-14 "C R_px,x"
near "$(entry react.csv C R_py px)" 0 1 "C R_py,px" 1e-15
end

begin "modes --linearize and linearize: the same A"
for f in cp_angle cp_cart ctms; do
    hs modes $f.yaml --linearize --csv
    sed 1d "$T/out" >modesA
    hs linearize $f.yaml -o $f.csv
    awk -F, 'NR > 1 && $1 == "A"' $f.csv >linA
    n=$(wc -l <modesA | tr -d ' ')
    i=0
    for r in $(cut -d, -f1 modesA); do
        i=$((i + 1))
        want=$(sed -n "${i}p" modesA | cut -d, -f2-)
        got=$(awk -F, -v r="$r" '$2 == r { printf "%s%s", s, $4; s = "," }' linA)
        [ "$got" = "$want" ] || no "$f row $r: $got, want $want"
    done
    [ "$n" -ge 4 ] || no "$f: $n rows"
done
end

begin "the files: .py runs, .m, .csv, .mat with A, B, C, D and the names"
hs linearize cp_cart.yaml --outputs x,ax -o sys.py
rc_is 0
out_empty
hs linearize cp_cart.yaml --outputs x,ax -o sys.m
grep -q "^states = {'x', 'px', 'x''', 'px'''};" sys.m || no ".m names: $(grep states sys.m)"
grep -q "^D = \[0; 1\];" sys.m || no ".m D: $(grep '^D' sys.m)"
hs linearize cp_cart.yaml --outputs x,ax -o sys.mat
rc_is 0
head -c 116 sys.mat | grep -q "^MATLAB 5.0 MAT-file" || no "MAT header"
# version 0x0100 and the endian mark "IM" (little-endian), then the first
# element: miMATRIX (14), class double (6), 4 x 4, named A
[ "$(od -A n -t x1 -j 124 -N 4 sys.mat | tr -d ' \n')" = 0001494d ] || no "MAT version/endian"
[ "$(od -A n -t u4 -j 128 -N 4 sys.mat | tr -d ' ')" = 14 ] || no "MAT first element not miMATRIX"
[ "$(od -A n -t u4 -j 144 -N 4 sys.mat | tr -d ' ')" = 6 ] || no "MAT A not double"
[ "$(od -A n -t d4 -j 160 -N 8 sys.mat | tr -s ' ')" = " 4 4" ] || no "MAT A not 4 x 4"
[ "$(od -A n -c -j 176 -N 1 sys.mat | tr -d ' ')" = A ] || no "MAT first name not A"
hs linearize ctms.yaml --inputs '' -o empty.mat
rc_is 0
PY=
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import scipy.io, numpy' 2>/dev/null; then
        PY=$p
        break
    fi
done
if [ -n "$PY" ]; then
    "$PY" - >py.out 2>&1 <<'EOF' || no "python: $(tail -n 3 py.out)"
import numpy as np, scipy.io as sio
ns = {}
exec(open("sys.py").read(), ns)
d = sio.loadmat("sys.mat")
for k in "ABCD":
    assert np.array_equal(ns[k], d[k]), k
assert [str(s[0]) for s in d["states"][0]] == ["x", "px", "x'", "px'"], d["states"]
assert [str(s[0]) for s in d["inputs"][0]] == ["F"]
assert [str(s[0]) for s in d["outputs"][0]] == ["x", "ax"]
assert ns["states"] == ["x", "px", "x'", "px'"]
e = sio.loadmat("empty.mat")
assert e["B"].shape == (4, 0) and e["D"].shape == (2, 0), (e["B"].shape, e["D"].shape)
print("ok")
EOF
else
    echo "cli_linearize.sh: no Python with SciPy: the .mat read back is skipped" >&2
fi
end

begin "the operating point: --at initial, --at t=T with an input of t"
cat >spring.yaml <<'EOF'
parameters: {k: 4, m: 2}
inputs: [F]
coordinates: [x]
mass: [m]
potential: 0.5*k*x^2
forces: {x: F}
initial: {q: {x: 0.25}}
EOF
hs linearize spring.yaml --input 'F=2*t' --at t=3
rc_is 0
out_has "operating point (t=3): x = 1.5"
out_has "inputs at: F = 6"
printf 't,F\n0,0\n1,4\n2,4\n' >ramp.csv
hs linearize spring.yaml --input F=ramp.csv --at t=0.5
rc_is 0
out_has "operating point (t=0.5): x = 0.5"
out_has "inputs at: F = 2"
hs linearize spring.yaml --at initial
rc_is 0
out_has "operating point (initial): x = 0.25"
err_has "the initial state is not an equilibrium"
hs linearize spring.yaml
out_has "operating point (equilibrium): x = 0"
set -- $(block "poles")
[ "$*" = "0 - 1.4142135623730951i 0 + 1.4142135623730951i" ] || no "poles $*"
end

begin "scripts/plot draws the Bode rows on a logarithmic abscissa"
hs linearize ctms.yaml --outputs th --bode 0.1:100:20
cp "$T/out" bode.csv
if command -v bash >/dev/null 2>&1; then
    bash "$ROOT/scripts/plot" bode.csv --x w --y mag_db --logx --dry-run >plot.gp 2>&1 ||
        no "plot failed: $(tail -n 2 plot.gp)"
    grep -q "^set logscale x" plot.gp || no "no logarithmic abscissa"
    grep -q "using 1:3" plot.gp || no "not mag_db against w"
fi
end

# ---- errors ----------------------------------------------------------------

begin "--inputs naming something that is not an input; --outputs that read nothing"
hs linearize cp_cart.yaml --inputs G
rc_is 2
err_has "the model has no input 'G'"
hs linearize cp_cart.yaml --outputs x,nothing
rc_is 2
err_has "'nothing' is no column linearize can read"
hs linearize cp_cart.yaml --input G=1
rc_is 2
err_has "the model has no input 'G'"
out_empty
end

begin "usage errors: --at, -o, --bode"
hs linearize cp_cart.yaml --at somewhere
rc_is 1
err_has "--at wants equilibrium, initial or t=T"
hs linearize cp_cart.yaml -o sys.txt
rc_is 1
err_has "-o wants FILE.mat, FILE.py, FILE.m or FILE.csv"
cp cp_cart.yaml keep.csv
hs linearize keep.csv -o keep.csv
rc_is 1
err_has "-o 'keep.csv' and the model file 'keep.csv' are the same file: refusing to overwrite the model"
hs linearize spring.yaml --input F=ramp.csv -o ramp.csv
rc_is 1
err_has "-o 'ramp.csv' and the --input table 'ramp.csv' are the same file"
cmp -s keep.csv cp_cart.yaml || no "the model was overwritten"
hs linearize cp_cart.yaml --bode 10:1
rc_is 1
err_has "--bode wants W1:W2[:N]"
hs linearize
rc_is 1
end

begin "no equilibrium: exit 3 as equilibrium"
cat >runaway.yaml <<'EOF'
inputs: [F]
coordinates: [x]
mass: [1]
potential: exp(x)
forces: {x: F}
initial: {q: {x: 0}}
EOF
hs linearize runaway.yaml
rc_is 3
err_has "no equilibrium found"
out_empty
end

begin "an input in a constraint (a prescribed motion): exit 2"
cat >driven.yaml <<'EOF'
inputs: [s]
coordinates: [x, y]
mass: [1, 1]
potential: 0.5*(x^2 + y^2)
constraints: {track: y - s}
initial: {q: {x: 0, y: 0}}
EOF
hs linearize driven.yaml
rc_is 2
err_has "constraint 'track' reads input 's'"
end

begin "a model that changes with time: exit 2 at the time, as modes"
cat >timed.yaml <<'EOF'
inputs: [F]
coordinates: [x]
mass: [1]
potential: 0.5*x^2
forces: {x: F + sin(t)}
initial: {q: {x: 0}}
EOF
hs linearize timed.yaml
rc_is 2
err_has "depends on time"
end

summary
