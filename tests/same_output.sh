#!/bin/sh
# Do two holosim binaries give byte-identical results on every shipped model?
#
#   sh tests/same_output.sh OLD_BINARY NEW_BINARY
#
# For each models/*.yaml: `run` (default columns, every column, interpolated
# rows, each stabilization), `check` and `derive`; stdout and the exit code
# must be identical (stderr is not compared: its summary holds wall times).
# Used to show that a refactoring changed no output: build the old commit's
# binary (git worktree), then run this against bin/holosim.  Prints one line
# per difference and a last line "N same, N different"; exit 1 on any.
set -u
[ $# -eq 2 ] || { echo "usage: sh tests/same_output.sh OLD_BINARY NEW_BINARY" >&2; exit 1; }
old=$1 new=$2
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/holosim-same.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
same=0 diff=0

compare() {   # compare LABEL ARGS...: run both binaries with ARGS
    label=$1; shift
    "$old" "$@" >"$tmp/a" 2>/dev/null; ra=$?
    "$new" "$@" >"$tmp/b" 2>/dev/null; rb=$?
    if [ "$ra" = "$rb" ] && cmp -s "$tmp/a" "$tmp/b"; then
        same=$((same + 1))
    else
        diff=$((diff + 1))
        echo "DIFFERENT: $label (exit $ra vs $rb): $*"
    fi
}

for m in "$root"/models/*.yaml; do
    b=$(basename "$m" .yaml)
    compare "$b run" run "$m" -q --t-end 2
    compare "$b all" run "$m" -q --t-end 1 --columns all
    compare "$b interp" run "$m" -q --t-end 2 --output-mode interpolate --columns all
    compare "$b baumgarte" run "$m" -q --t-end 1 --stabilize baumgarte
    compare "$b none" run "$m" -q --t-end 1 --stabilize none --method rkf45
    compare "$b check" check "$m"
    compare "$b derive" derive "$m"
done
echo "$same same, $diff different"
[ "$diff" -eq 0 ]
