#!/bin/sh
# One chain, two ways of writing it (issue 41, item 1): N unit masses in
# N absolute angles (bench/chain_angle_model.sh), the points
#   defs    a chain of defines, each point from the one before
#   terms   written out term by term, x3: l*sin(th1) + l*sin(th2) + ...
# The second is rewritten as the first (holosim(1), STRUCTURED
# EMBEDDINGS; a family's running sum is too, measured there).  For each N,
# REPS interleaved rounds (defs, terms, defs, terms, ...) of `check` and of
# `run --t-end 1` (the default native policy; a warm-up run first builds
# and caches the kernels); prints the median CPU (user + system,
# bench/timecmd.py) and peak RSS of each, and the median over rounds of
# the terms' CPU over the defines' in the same round.
#   sh bench/written.sh [N ...]            (default 32 128 512; REPS=7)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
H=${HOLOSIM:-$here/../bin/holosim}
REPS=${REPS:-7}
sizes=${*:-32 128 512}
T=$(mktemp -d "${TMPDIR:-/tmp}/holosim-written.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
export HOLOSIM_CACHE="$T/cache"

# the defines' model with its points written out term by term
terms() {
    awk '
    /^define:/ { d = 1; next }
    /^embedding:/ { d = 0; e = 1; print; next }
    d { split($0, a, ": "); n = a[1]; gsub(/ /, "", n); v = a[2]
        if (v ~ /^[XY][0-9]+ /) { split(v, b, " "); sub(/^[XY][0-9]+/, D[b[1]], v) }
        D[n] = v; next }
    e && /^  [xy][0-9]+: [XY][0-9]+$/ { split($0, a, ": "); print a[1] ": " D[a[2]]; next }
    { e = 0; print }'
}
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "| N | command | defs CPU s | terms CPU s | terms / defs (min-max) | peak RSS MB (defs, terms) |"
echo "|---:|---|---:|---:|---|---|"
for N in $sizes; do
    sh "$here/chain_angle_model.sh" "$N" 1 >"$T/defs.yaml"
    terms <"$T/defs.yaml" >"$T/terms.yaml"
    for f in defs terms; do
        "$H" check "$T/$f.yaml" | grep -q "dynamics: structured embedding" ||
            { echo "written.sh: $f at N = $N is not structured" >&2; exit 1; }
        "$H" run "$T/$f.yaml" -q -o /dev/null
    done
    for c in check run; do
        : >"$T/rows"
        for r in $(seq "$REPS"); do
            line=
            for f in defs terms; do
                if [ "$c" = run ]; then set -- run "$T/$f.yaml" -q -o /dev/null --t-end 1
                else set -- check "$T/$f.yaml"; fi
                line="$line $(python3 "$here/timecmd.py" /dev/null "$H" "$@")"
            done
            echo "$line" >>"$T/rows"
        done
        # columns: wall cpu rss, twice
        cpu() { awk -v k="$1" '{ print $k / 1e6 }' "$T/rows" | median; }
        rss() { awk -v k="$1" '{ print $k / 1024 }' "$T/rows" | median; }
        awk '{ print $5 / $2 }' "$T/rows" | sort -g >"$T/r"
        printf '| %s | %s | %.3f | %.3f | %.2f (%.2f-%.2f) | %.0f, %.0f |\n' "$N" "$c" \
            "$(cpu 2)" "$(cpu 5)" "$(median <"$T/r")" "$(head -n 1 "$T/r")" "$(tail -n 1 "$T/r")" \
            "$(rss 3)" "$(rss 6)"
    done
done
