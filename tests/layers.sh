#!/bin/sh
# The layers of doc/architecture.md, checked: every `#include "../X/..."` in
# src/Y/ must point to a layer listed below Y, and every directory of src/
# must be in the list.  Also: no .c file over 900 lines, no function over
# 150 lines (a function runs from a line starting with `{` to one starting
# with `}`).  Prints one line per violation, then "N passed, N failed".
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
pass=0 fail=0
bad() { fail=$((fail + 1)); printf 'FAIL: %s\n' "$*"; }
# "1. `util`: ..." lines of the Layers section, in order
layers=$(sed -n '/^## Layers/,/^## /p' doc/architecture.md |
         sed -n 's/^ *[0-9][0-9]*\. `\([a-z_]*\)`.*/\1/p')
[ -n "$layers" ] || { echo "FAIL: no layer list in doc/architecture.md"; echo "0 passed, 1 failed"; exit 1; }
rank() { echo "$layers" | awk -v m="$1" '$0 == m { print NR; exit }'; }
for d in src/*/; do
    m=$(basename "$d")
    if [ -z "$(rank "$m")" ]; then bad "src/$m is not in the layer list of doc/architecture.md"; else pass=$((pass + 1)); fi
done
for f in src/*/*.c src/*/*.h; do
    m=$(basename "$(dirname "$f")")
    rm_=$(rank "$m")
    for dep in $(sed -n 's|^#include "\.\./\([a-z_]*\)/.*|\1|p' "$f" | sort -u); do
        rd=$(rank "$dep")
        if [ -n "$rd" ] && [ -n "$rm_" ] && [ "$rd" -lt "$rm_" ]; then
            pass=$((pass + 1))
        else
            bad "$f includes $dep, which is not below $m"
        fi
    done
done
for f in src/*/*.c; do
    n=$(wc -l <"$f")
    if [ "$n" -gt 900 ]; then bad "$f has $n lines (limit 900)"; else pass=$((pass + 1)); fi
    long=$(awk '/^\{/ { s = NR; name = prev } /^\}/ && s { if (NR - s + 1 > 150) print name " (" NR - s + 1 " lines)"; s = 0 } { prev = $0 }' "$f")
    if [ -n "$long" ]; then bad "$f: function over 150 lines: $long"; else pass=$((pass + 1)); fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
