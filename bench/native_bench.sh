#!/bin/sh
# VM against native kernels (src/native) on the chain models of
# bench/chain_model.sh: for each N, native_bench builds the kernels in a
# fresh cache (first build, then a cached load), checks them against the VM
# bit for bit and times prog_dyn interleaved (median of ratios).
#   sh bench/native_bench.sh                 N = 8 32 128 512
#   NS="8 32" REPS=51 sh bench/native_bench.sh
#   NLINK=1 sh bench/native_bench.sh         also the N-link pendulum in angles
#                                            (bench/gen_nlink.py, N = 10 20 40)
# Run it on a quiet machine (uptime first); see bench/README.md.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
NS=${NS:-8 32 128 512}
REPS=${REPS:-31}
NLINK=${NLINK:-0}
make -C "$root" build/rel/libholosim.a >/dev/null
mkdir -p "$root/build/bench"
bin=$root/build/bench/native_bench
${CC:-cc} -std=c11 -D_POSIX_C_SOURCE=200809L -O2 -g -I"$root/src" -o "$bin" \
    "$here/native_bench.c" "$root/build/rel/libholosim.a" \
    $(pkg-config --libs gsl yaml-0.1) -lm
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "# $(date -u '+%Y-%m-%d %H:%M') $(uname -m), $(${CC:-cc} --version | head -n 1); load: $(uptime | sed 's/.*load average: //')"
for n in $NS; do
    sh "$here/chain_model.sh" "$n" > "$dir/chain$n.yaml"
    "$bin" -r "$REPS" "$dir/chain$n.yaml"
done
if [ "$NLINK" = 1 ]; then
    for n in 10 20 40; do
        python3 "$here/gen_nlink.py" "$n" emb > "$dir/nlink$n.yaml"
        "$bin" -r "$REPS" "$dir/nlink$n.yaml"
    done
fi
echo "# load after: $(uptime | sed 's/.*load average: //')"
