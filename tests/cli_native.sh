#!/bin/sh
# Native kernels from the command line: --native=always gives the same CSV
# as the VM (--no-native) on every shipped model, byte for byte; a sweep's
# points share one build; no compiler falls back to the VM with a note;
# bad values are usage errors.  The cache is a temporary HOLOSIM_CACHE.
LC_ALL=C
export LC_ALL
H=${HOLOSIM:-bin/holosim}
case $H in /*) ;; *) H=$(pwd)/$H ;; esac
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/holosim-native.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT INT TERM
HOLOSIM_CACHE=$T/cache
export HOLOSIM_CACHE
pass=0 fail=0
ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }

if ! command -v "${CC:-cc}" >/dev/null 2>&1; then
    echo "cli_native.sh: no C compiler: only the fallback is tested"
fi
for f in "$ROOT"/models/*.yaml; do
    b=$(basename "$f" .yaml)
    "$H" run "$f" -q --t-end 1 --columns all --no-native -o "$T/vm.csv" 2>/dev/null
    r1=$?
    "$H" run "$f" -q --t-end 1 --columns all --native=always -o "$T/nat.csv" 2>"$T/err"
    r2=$?
    if [ "$r1" = "$r2" ] && cmp -s "$T/vm.csv" "$T/nat.csv"; then ok; else no "$b: native and VM differ (exit $r1 vs $r2)"; fi
done
n=$(ls "$T/cache/native"/*.so 2>/dev/null | wc -l)
[ "$n" -ge 1 ] && ok || no "no cached build after --native=always"

# a second run finds the build: no new entry
"$H" run "$ROOT/models/pendulum.yaml" -q --native=always -o /dev/null
[ "$(ls "$T/cache/native"/*.so | wc -l)" = "$n" ] && ok || no "a cached build was not reused"

# batch: the points share one build
printf 'name\tl\ttheta0\na\t1\t0.5\nb\t2\t0.3\nc\t0.5\t0.1\n' >"$T/pts.tsv"
mkdir "$T/o" "$T/s" "$T/c2"
HOLOSIM_CACHE=$T/c2 "$H" batch "$ROOT/models/pendulum.yaml" --points "$T/pts.tsv" --outdir "$T/o" \
    --status-dir "$T/s" --t-end 1 --native=always >/dev/null
[ $? = 0 ] && [ "$(ls "$T/c2/native"/*.so | wc -l)" = 1 ] && ok || no "batch points did not share one build"
cp "$T/o/b.csv" "$T/b-native.csv"
"$H" batch "$ROOT/models/pendulum.yaml" --points "$T/pts.tsv" --outdir "$T/o" \
    --status-dir "$T/s" --t-end 1 --no-native >/dev/null
cmp -s "$T/o/b.csv" "$T/b-native.csv" && ok || no "batch: native and VM differ"

# no compiler: the VM, with a note, same result
CC=/nonexistent/cc HOLOSIM_CACHE=$T/c3 "$H" run "$ROOT/models/pendulum.yaml" --native=always \
    -o "$T/nc.csv" 2>"$T/err"
[ $? = 0 ] && grep -q 'native' "$T/err" && ok || no "no compiler: no fallback note"
"$H" run "$ROOT/models/pendulum.yaml" --no-native -q -o "$T/vm2.csv"
cmp -s "$T/nc.csv" "$T/vm2.csv" && ok || no "no compiler: the VM's result differs"

# auto on a short run starts nothing and creates no cache directory
HOLOSIM_CACHE=$T/c4 "$H" run "$ROOT/models/pendulum.yaml" -q -o /dev/null
[ ! -e "$T/c4" ] && ok || no "a short auto run touched the cache"

# usage errors
"$H" run "$ROOT/models/pendulum.yaml" --native=sometimes 2>"$T/err" >/dev/null
[ $? = 1 ] && grep -q "must be always, auto or never" "$T/err" && ok || no "a bad --native value"
"$H" check "$ROOT/models/pendulum.yaml" --native=always 2>"$T/err" >/dev/null
[ $? = 1 ] && ok || no "--native on check is not refused"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
