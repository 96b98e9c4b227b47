#!/bin/sh
# Allocation-failure injection (issue 24), POSIX sh:
#
#   HOLOSIM_OOM=build/rel/tests/holosim_oom sh tests/cli_oom.sh   (make check runs it)
#
# holosim_oom is holosim linked with tests/oom/shim.c: every allocation
# holosim makes goes through it.  For each command below, a clean run
# counts the allocations (N); then the run is repeated with the K-th
# allocation and every later one failing, for K = 1 .. N (every K, or every
# STRIDE-th plus the last).  Each such run must end with exit status 5 and
# "error: out of memory" on stderr: no crash, no other exit status, no
# sanitizer report (under make check SANITIZE=1 a leak makes LeakSanitizer
# change the status).  A K past N fails nothing: that run must succeed.
CLI_NAME=oom
CLI_TIMEOUT=60
. "$(dirname "$0")/cli_lib.sh"

O=${HOLOSIM_OOM:-$ROOT/build/rel/tests/holosim_oom}
case $O in /*) ;; *) O=$(pwd)/$O ;; esac
if [ ! -x "$O" ]; then
    echo "cli_oom.sh: $O is not an executable (make $O)" >&2
    echo "0 passed, 1 failed"
    exit 1
fi
# under the sanitizers a run costs about ten times more: sample more sparsely
case $O in */build/san/*) SCALE=4 ;; *) SCALE=1 ;; esac
M=$ROOT/models
cd "$T" || exit 1

oom() {
    HOLOSIM_FAIL_ALLOC=$1
    export HOLOSIM_FAIL_ALLOC
    shift
    rm -f "$T"/o.*
    $TO "$O" "$@" >"$T/out" 2>"$T/err"
    rc=$?
    unset HOLOSIM_FAIL_ALLOC
}

# sweep NAME STRIDE ARGS...: STRIDE 1 tries every K
sweep() {
    begin "$1"
    stride=$2
    [ "$stride" -gt 1 ] && stride=$((stride * SCALE))
    shift 2
    rm -f "$T"/o.*
    HOLOSIM_COUNT_ALLOC=1 $TO "$O" "$@" >"$T/out" 2>"$T/err"
    rc=$?
    n=$(sed -n 's/^allocations: //p' "$T/err" | tail -n 1)
    rc_is 0
    [ -n "$n" ] && [ "$n" -gt 10 ] || { no "no allocation count ($n)"; n=0; }
    k=1
    bad=0
    while [ "$k" -le "$n" ]; do
        oom "$k" "$@"
        if [ "$rc" != 5 ] || ! grep -q "error: out of memory" "$T/err"; then
            bad=$((bad + 1))
            [ "$bad" -le 3 ] && no "allocation $k of $n failing: exit $rc," \
                "$(head -n 2 "$T/err" | tr '\n' ' ' | cut -c1-160)"
        fi
        if [ "$k" -lt "$n" ] && [ $((k + stride)) -gt "$n" ]; then
            k=$n
        else
            k=$((k + stride))
        fi
    done
    [ "$bad" -gt 3 ] && no "and $((bad - 3)) more"
    oom $((n + 1)) "$@"
    rc_is 0
    end
}

sweep check-every 1 check "$M/pendulum.yaml"
sweep run 2 run "$M/pendulum.yaml" --t-end 0.1 --dt 0.05 --native=never \
    -o "$T/o.csv" --summary "$T/o.sum"
sweep set 3 check "$M/pendulum.yaml" --set "l=2*1.5" --set "m=l/3"
sweep eval-every 1 eval "sin(x)^2 + y" x=0.5 y=2
sweep derive-wrt-every 1 derive --wrt x "sin(x)*x^2 + exp(x)/x"
sweep derive 6 derive "$M/double_pendulum.yaml"
sweep columns 8 columns "$M/spherical_pendulum.yaml"
sweep equilibrium 6 equilibrium "$M/hoop_equilibrium.yaml"
sweep modes 6 modes "$M/double_pendulum_modes.yaml"
sweep sparse-equilibrium 3 equilibrium "$M/hanging_chain.yaml" --linalg sparse
sweep sparse-modes 3 modes "$M/spherical_pendulum.yaml" --linalg sparse --count 2
sweep events 4 run "$M/sphere_liftoff.yaml" --t-end 1 --native=never -o "$T/o.csv" \
    --events "$T/o.ev" --summary "$T/o.sum"
sweep implicit 8 run "$M/double_pendulum.yaml" --t-end 0.2 --native=never --method rk4imp
sweep balance 8 run "$M/slider_crank.yaml" --t-end 0.2 --native=never \
    --columns t,xp,E,energy_balance,power_residual
# a structured embedding: the second parse, its unknowns, the sparse solve
sweep structure 12 run "$M/chain_angles.yaml" --t-end 0.1 --dt 0.05 --native=never \
    -o "$T/o.csv"
# inputs (a table read into the model, its breakpoints) and linearize (the
# state-space matrices, poles and zeros, a MAT file)
sweep inputs 6 run "$M/cart_pole.yaml" --t-end 0.4 --dt 0.1 --native=never \
    --input F="$M/cart_push.csv" -o "$T/o.csv"
sweep linearize 6 linearize "$M/cart_pole.yaml" --outputs x,th,th\'\'
sweep linearize-mat 6 linearize "$M/cart_pole.yaml" -o "$T/o.mat"
sweep final 4 run "$M/pendulum.yaml" --t-end 0.1 --dt 0.05 --native=never -o "$T/o.csv" \
    --summary "$T/o.sum" --final x,lambda_rod
sweep sensitivity-final 6 run "$M/pendulum_angle.yaml" --t-end 0.1 --dt 0.05 -o "$T/o.csv" \
    --sensitivity l --summary "$T/o.sum" --final "dtheta/dl"

summary
