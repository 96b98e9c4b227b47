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

# hostile caches: a FIFO, a directory or a link in place of an entry, its
# lock or its failure record blocks no run (each within 30 s) and is never
# loaded; the result is the VM's
if command -v timeout >/dev/null 2>&1; then TO30="timeout 30"; else TO30=""; fi
P=$ROOT/models/pendulum.yaml
"$H" run "$P" -q --no-native -o "$T/p-vm.csv"
for kind in fifo dir link; do
    C=$T/c-$kind
    HOLOSIM_CACHE=$C "$H" run "$P" -q --native=always -o /dev/null
    for e in "$C"/native/k*.so; do
        k=${e%.so}
        rm -f "$k.so" "$k.lock" "$k.fail"
        for x in so lock fail; do
            case $kind in
            fifo) mkfifo "$k.$x" ;;
            dir) mkdir "$k.$x" ;;
            link) ln -s /dev/zero "$k.$x" ;;
            esac
        done
    done
    for mode in auto always; do
        HOLOSIM_CACHE=$C $TO30 "$H" run "$P" -q --native=$mode -o "$T/p-$kind.csv" 2>"$T/err"
        r=$?
        [ $r = 0 ] && cmp -s "$T/p-vm.csv" "$T/p-$kind.csv" && ok ||
            no "a $kind in the cache: --native=$mode exit $r ($(head -c 200 "$T/err"))"
    done
done

# $CC with a sanitizer: the flag is dropped, the build loads, later runs too
CCW=${CC:-cc}
for i in 1 2; do
    CC="$CCW -fsanitize=address -pg" HOLOSIM_CACHE=$T/c-asan $TO30 "$H" run "$P" \
        --native=always -o "$T/p-asan.csv" 2>"$T/err"
    r=$?
    [ $r = 0 ] && cmp -s "$T/p-vm.csv" "$T/p-asan.csv" && ! grep -q native "$T/err" && ok ||
        no "CC with -fsanitize=address, run $i: exit $r ($(head -c 200 "$T/err"))"
done
# a compiler killed by a signal is not remembered as failed: auto retries
printf '#!/bin/sh\nkill -KILL $$\n' >"$T/killcc"
chmod +x "$T/killcc"
CC=$T/killcc HOLOSIM_CACHE=$T/c-kill "$H" run "$P" --native=always -o /dev/null 2>"$T/err"
grep -q 'signal 9' "$T/err" && ok || no "a killed compiler: $(cat "$T/err")"
ls "$T/c-kill/native/"*.fail >/dev/null 2>&1 && no "a killed compiler was recorded as failed" || ok

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
