#!/bin/sh
# Stability of motion (issue 38): what the variational equations cost
# (README.md, "Stability of motion").
#   sh bench/flow.sh [bin/holosim] [RUNS]
# 1. flow_bench: the 32-link chain (bench/chain_model.sh), the motion alone
#    against the motion with its 2 (n - k) = 64 tangent vectors, the same
#    dense code, stepper (rk8pd) and tolerance (1e-10), interleaved, CPU per
#    accepted step; and a plain `holosim run` of the same chain (its own
#    sparse path, projection) for its time per step.
# 2. CPU (user + system) and peak RSS (/usr/bin/time) of whole commands, RUNS
#    runs each (interleaved where two are compared), median (min - max):
#    floquet of the 32-link chain hanging from a support shaken vertically
#    (y = a cos(w t), a = 0.05, w = 10), one period; lyapunov of the 128-link
#    chain, Cartesian (n + k = 384) and angles (n = 128), over 0.1 s; run
#    against run --sensitivity g,th on the 32-link chain over 10 s.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
hs=${1:-bin/holosim}
runs=${2:-5}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
make -s -C "$here" ../build/bench/flow_bench >/dev/null
fb=$here/../build/bench/flow_bench
sh "$here/chain_model.sh" 32 > "$dir/chain32.yaml"
sh "$here/chain_model.sh" 128 > "$dir/chain128.yaml"
sh "$here/chain_angle_model.sh" 128 > "$dir/chain128a.yaml"
# the support shaken: link1 measured from (0, a cos(w t)); the chain hangs
# straight from (0, a) at rest (consistent at t = 0), a periodic motion
sed -e 's/link1: x1^2 + y1^2 - l^2/link1: x1^2 + (y1 - a*cos(w*t))^2 - l^2/' \
    -e 's/^  th: 1.0/  th: 0.0\n  a: 0.05\n  w: 10/' -e 's/^name: chain32/name: chain32_shaken/' \
    -e 's/^    \(y[0-9]*\): -/    \1: a - /' "$dir/chain32.yaml" > "$dir/shaken32.yaml"

load() { echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"; }
# one timed command: appends "cpu_s rss_kb" to $1
timed() {
    out=$1; shift
    /usr/bin/time -f '%U %S %M' -o "$dir/t" "$@" > /dev/null 2>&1 || {
        echo "flow.sh: failed: $*" >&2; cat "$dir/t" >&2; exit 1; }
    awk '{ printf "%.2f %d\n", $1 + $2, $3 }' "$dir/t" >> "$out"
}
# median (min - max) of column $2 of file $1
stat() {
    sort -g -k"$2" "$1" | awk -v c="$2" '{ a[NR] = $c } END {
        m = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
        printf "%g (%g - %g)", m, a[1], a[NR] }'
}

echo "# holosim: $hs; $runs runs; $(date -u +%Y-%m-%dT%H:%MZ)"
load
echo "## 1. variational against motion-only, per step (32-link chain, T = 1)"
"$fb" "$dir/chain32.yaml" 1 "$runs"
"$hs" run "$dir/chain32.yaml" --t-end 1 --summary "$dir/sum.csv" > /dev/null
tail -1 "$dir/sum.csv" | awk -F, '{ printf "plain holosim run (sparse path): %d steps, %s s wall, %.1f us/step\n", $3, $11, 1e6 * $11 / $3 }'
load

echo "## 2. whole commands: CPU s, peak RSS KB, median (min - max) of $runs"
rm -f "$dir"/*.t
for i in $(seq "$runs"); do
    timed "$dir/floq.t" "$hs" floquet "$dir/shaken32.yaml" --period '2*pi/w'
    timed "$dir/l128.t" "$hs" lyapunov "$dir/chain128.yaml" --t-end 0.1 --every 0.01
    timed "$dir/l128a.t" "$hs" lyapunov "$dir/chain128a.yaml" --t-end 0.1 --every 0.01
    timed "$dir/run.t" "$hs" run "$dir/chain32.yaml" --t-end 10
    timed "$dir/sens.t" "$hs" run "$dir/chain32.yaml" --t-end 10 --sensitivity g,th
done
for c in "floq floquet shaken 32-link chain, one period (2 pi / 10)" \
         "l128 lyapunov 128-link chain, Cartesian, T = 0.1, every 0.01" \
         "l128a lyapunov 128-link chain, angles, T = 0.1, every 0.01" \
         "run run 32-link chain, T = 10" \
         "sens run --sensitivity g,th, 32-link chain, T = 10"; do
    f=${c%% *}; label=${c#* }
    printf '%s: CPU %s s, RSS %s KB\n' "$label" "$(stat "$dir/$f.t" 1)" "$(stat "$dir/$f.t" 2)"
done
paste "$dir/sens.t" "$dir/run.t" | awk '{ print $1 / $3 }' > "$dir/ratio"
printf 'ratio run --sensitivity / run, per pair: %s\n' "$(stat "$dir/ratio" 1)"
load
