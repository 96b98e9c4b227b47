#!/bin/sh
# Loading indexed families as they grow (holosim-model(5), FAMILIES), in
# instruction counts (valgrind --tool=callgrind), which other jobs on a
# shared machine do not disturb:
#   1. the expansion alone (hs_ld_expand) of models/hanging_chain.yaml at
#      N = 1,000 and 10,000 particles: linear would be 10x, the target is
#      at most 15x (at 10,000 particles, 20,000 coordinates, the loader then
#      refuses the model: holosim keeps n x n arrays up to 5,000
#      coordinates, holosim(1) LIMITS; the expansion is measured before);
#   2. load, check and the first step (`run --t-end DT`) of the family at
#      N = 250 and 2,500 (5,000 coordinates, the limit), against the same
#      chain written out (bench/chain_model.sh);
#   3. `check` of a 2,048-link chain: the family against the chain written
#      out (the target: no slower).
#   sh bench/familyload.sh [HOLOSIM]           # default: bin/holosim
set -eu
here=$(cd "$(dirname "$0")" && pwd)
h=${1:-$here/../bin/holosim}
command -v valgrind > /dev/null || { echo "familyload.sh: needs valgrind" >&2; exit 1; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/holosim-familyload.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
fam=$here/../models/hanging_chain.yaml
# ir FILE_TAG ARGS...: instructions of one run (toggle: TOGGLE, or all)
ir() {
    tag=$1
    shift
    valgrind --tool=callgrind ${TOGGLE:+--toggle-collect=$TOGGLE} \
        --callgrind-out-file="$dir/cg.$tag" "$h" "$@" > /dev/null 2>&1 || true
    awk '/^summary:/ {print $2}' "$dir/cg.$tag"
}
echo "1. expansion alone (hs_ld_expand), instructions"
TOGGLE=hs_ld_expand
a=$(ir e1000 check "$fam" --set N=1000)
b=$(ir e10000 check "$fam" --set N=10000)
echo "   N = 1000: $a   N = 10000: $b   ratio $(echo "$b $a" | awk '{printf "%.2f", $1 / $2}')"
TOGGLE=
echo "2. load, check, first step (run --t-end 0.01), instructions"
for N in 250 2500; do
    sh "$here/chain_model.sh" "$N" > "$dir/chain$N.yaml"
    f=$(ir f$N run "$fam" --set N=$N --t-end 0.01 --dt 0.01)
    c=$(ir c$N run "$dir/chain$N.yaml" --t-end 0.01 --dt 0.01)
    echo "   N = $N: family $f   written out $c   family/written $(echo "$f $c" | awk '{printf "%.3f", $1 / $2}')"
    eval "f$N=$f"
done
echo "   family 2500/250: $(echo "$f2500 $f250" | awk '{printf "%.2f", $1 / $2}')"
echo "3. check of a 2048-link chain, instructions"
sh "$here/chain_model.sh" 2048 > "$dir/chain2048.yaml"
f=$(ir k1 check "$fam" --set N=2048)
c=$(ir k2 check "$dir/chain2048.yaml")
echo "   family $f   written out $c   family/written $(echo "$f $c" | awk '{printf "%.3f", $1 / $2}')"
