#!/bin/sh
# Peer comparison on planar pendulum chains (bench/README.md, "Peers:
# pendulum chains"): holosim's Cartesian and angle forms against SciPy's
# DOP853 on hand-written angle equations, Simbody (pins, rods) and MuJoCo
# (hinges, RK4), each where installed (scripts/install-bench-deps.sh).
# Writes a markdown report to standard output; progress on stderr.
#   sh bench/peers.sh --quick     N = 8 and 32, one round (a smoke test)
#   sh bench/peers.sh             N = 8, 32, 128, 512, three rounds
#   sh bench/peers.sh --n 128 --rounds 5 --tools holosim-cart,simbody-pins
# (sh bench/peers.sh --help: every option of bench/peers.py)
set -eu
cd "$(dirname "$0")/.."
PY=${PYTHON:-/usr/bin/python3}
OUT=build/bench
mkdir -p "$OUT"
[ -x "${HOLOSIM:-bin/holosim}" ] || ${MAKE:-make} -s bin/holosim >&2
tools=holosim-cart,holosim-angles,holosim-written
missing=""
if "$PY" -c 'import scipy, numpy' 2>/dev/null; then
    tools=$tools,scipy
else
    missing="$missing SciPy (python3-scipy)"
fi
# $1: target; $2: source; the rest: the compiler and its flags
build() {
    t=$1 s=$2
    shift 2
    if [ ! -x "$t" ] || [ "$s" -nt "$t" ]; then
        "$@" -o "$t.tmp" "$s" $LIBS && mv "$t.tmp" "$t"
    fi
}
if pkg-config --exists simbody 2>/dev/null && command -v "${CXX:-c++}" >/dev/null; then
    LIBS=$(pkg-config --libs simbody)
    build "$OUT/peers_simbody" bench/peers_simbody.cpp ${CXX:-c++} -O2 -std=c++14 -w \
        $(pkg-config --cflags simbody) >&2
    tools=$tools,simbody-pins,simbody-rods
else
    missing="$missing Simbody (libsimbody-dev)"
fi
if [ -f /usr/include/mujoco/mujoco.h ]; then
    LIBS="-lmujoco -lm"
    build "$OUT/peers_mujoco" bench/peers_mujoco.c ${CC:-cc} -std=c11 -O2 -Wall -Wextra -Werror >&2
    tools=$tools,mujoco-rk4
else
    missing="$missing MuJoCo (libmujoco-dev)"
fi
case " $* " in *" --tools"*) ;; *) set -- --tools "$tools" "$@" ;; esac
"$PY" bench/peers.py --bindir "$OUT" "$@"
[ -z "$missing" ] || printf '\nNot installed, left out:%s (scripts/install-bench-deps.sh).\n' "$missing"
