#!/bin/sh
# libholosim and the Python package (make check, after `make`):
#   - lib/libholosim.so exports only hs_/holosim_ symbols, soname libholosim.so.0
#   - the C tests built against it (API_BIN: tests/api_*.c, e.g. the threads)
#   - tests/api_python.py (the package against the command line)
#   - tests/api_motion.py (Floquet, Lyapunov, linearize from Python)
#   - make install PREFIX=tmp: doc/example.c built through pkg-config with
#     -Wall -Werror and run, `import holosim` from PREFIX; make uninstall
#     leaves exactly what was there before
#
#   HOLOSIM=bin/holosim API_BIN=build/rel/tests/api_threads sh tests/api.sh
# Prints "N passed, N failed".
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
H=${HOLOSIM:-$ROOT/bin/holosim}
case $H in /*) ;; *) H=$(pwd)/$H ;; esac
pass=0 fail=0
no() { fail=$((fail + 1)); printf 'FAIL: %s\n' "$*"; }
ok() { pass=$((pass + 1)); }
T=$(mktemp -d "${TMPDIR:-/tmp}/holosim-api.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
cd "$ROOT" || exit 1
LIB=lib/libholosim.so.0

# ---- the shared library's symbols ----
if [ -f "$LIB" ]; then
    nm -D --defined-only "$LIB" | awk '{ print $NF }' >"$T/syms"
    bad=$(grep -v -e '^hs_' -e '^holosim_' "$T/syms" | tr '\n' ' ')
    if [ -n "$bad" ]; then no "exported beyond hs_/holosim_: $bad"; else ok; fi
    grep -q '^holosim_run$' "$T/syms" && ok || no "holosim_run is not exported"
    grep -q '^hs_' "$T/syms" && no "internal hs_ symbols exported: $(grep '^hs_' "$T/syms" | head -3 | tr '\n' ' ')" || ok
    readelf -d "$LIB" | grep -q 'SONAME.*\[libholosim\.so\.0\]' && ok || no "soname is not libholosim.so.0"
    [ -f lib/libholosim.a ] && ok || no "no lib/libholosim.a"
else
    no "no $LIB (make builds it)"
fi

# ---- the C tests ----
for b in ${API_BIN:-}; do
    if "$b" >"$T/c.out" 2>&1; then ok; else no "$b: $(grep -v '^[0-9]* passed' "$T/c.out" | head -n 3)"; fi
    tail -n 1 "$T/c.out"
done

# ---- the Python package ----
if HOLOSIM=$H PYTHONPATH=python python3 tests/api_python.py >"$T/py.out" 2>&1; then ok; else
    no "tests/api_python.py:"; grep -v '^[0-9]* passed' "$T/py.out" | head -n 20
fi
grep -v '^FAIL\|^Traceback\|^  ' "$T/py.out"
if HOLOSIM=$H PYTHONPATH=python python3 tests/api_motion.py >"$T/pym.out" 2>&1; then ok; else
    no "tests/api_motion.py:"; grep -v '^[0-9]* passed' "$T/pym.out" | head -n 20
fi
(cd "$T" && PYTHONPATH=$ROOT/python python3 -c "import holosim; print(holosim.version())") \
    >"$T/v" 2>&1 && ok || no "import holosim from elsewhere: $(tail -n 1 "$T/v")"

# ---- make install, a C program through pkg-config, uninstall ----
P=$T/prefix
mkdir -p "$P/lib" "$P/include"
echo keep >"$P/lib/other.so"
echo keep >"$P/include/other.h"
mk() { env -u MAKEFLAGS -u MAKELEVEL -u SANITIZE make -s "$@" >"$T/make.log" 2>&1; }
if mk install PREFIX="$P"; then ok; else no "make install: $(tail -n 3 "$T/make.log")"; fi
for f in lib/libholosim.so.0.1.0 lib/libholosim.so.0 lib/libholosim.so lib/libholosim.a \
         include/holosim.h lib/pkgconfig/holosim.pc lib/python3/dist-packages/holosim/__init__.py; do
    [ -e "$P/$f" ] && ok || no "not installed: $f"
done
export PKG_CONFIG_PATH="$P/lib/pkgconfig"
# shellcheck disable=SC2046
if ${CC:-cc} -Wall -Werror $(pkg-config --cflags holosim) doc/example.c \
       $(pkg-config --libs holosim) -o "$T/example" 2>"$T/cc.err"; then ok; else
    no "doc/example.c against the installed library: $(head -n 3 "$T/cc.err")"
fi
if [ -x "$T/example" ]; then
    "$T/example" >"$T/ex.out" 2>&1 && ok || no "the example fails: $(head -n 3 "$T/ex.out")"
    # the period at amplitude theta0 = 0.5 rad: T = 2 pi sqrt(l/g) (1 + theta0^2/16
    # + 11 theta0^4/3072 + ...) = 2.0379 sqrt(l) s (the next term is below 1e-5)
    for l in "1 2.04" "2 2.88" "3 3.53"; do
        set -- $l
        grep -q "^l = $1: period $2\$" "$T/ex.out" && ok || no "example, l = $1: $(cat "$T/ex.out")"
    done
    grep -q "^exit code 2 (model error):" "$T/ex.out" && ok || no "example: no model error"
    ldd "$T/example" | grep -q "$P/lib/libholosim.so.0" && ok ||
        no "the example does not use the installed library: $(ldd "$T/example" | grep holosim)"
fi
(cd "$T" && PYTHONPATH=$P/lib/python3/dist-packages python3 -c "
import holosim, os
assert os.path.realpath(holosim._lib.__file__).startswith(os.path.realpath('$P'))
print(holosim.load('$ROOT/models/pendulum.yaml').run(t_end=1).data.shape)") >"$T/ip" 2>&1 &&
    grep -q '^(101, 10)$' "$T/ip" && ok || no "import holosim from PREFIX: $(tail -n 2 "$T/ip")"
if mk uninstall PREFIX="$P"; then ok; else no "make uninstall: $(tail -n 3 "$T/make.log")"; fi
left=$(cd "$P" && find . -path ./share -prune -o -path ./bin -prune -o \( -type f -o -type l \) -print | sort | tr '\n' ' ')
[ "$left" = "./include/other.h ./lib/other.so " ] && ok || no "left after uninstall: $left"
[ -d "$P/lib/python3/dist-packages/holosim" ] && no "uninstall left the package directory" || ok

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
