#!/bin/sh
# Symbolic front end as models grow (issue 5): load and compile (no
# integration) an N-link planar pendulum written in N angles (embedding form:
# the metric DX^T M DX and the generalized forces are derived symbolically),
# N = 5, 10, 20, 40, 80; report seconds, DAG nodes and bytecode instructions.
# Then run N = 10 for 1 s in both forms and compare the last bob.
set -eu
H=${1:-${HOLOSIM:-bin/holosim}}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
here=$(dirname "$0")
printf '| N | load+compile s | DAG nodes | instructions (dyn+out+proj) |\n|---:|---:|---:|---|\n'
for N in 5 10 20 40 80; do
    python3 "$here/gen_nlink.py" "$N" emb > "$dir/n.yaml"
    best=
    for rep in 1 2 3; do
        t0=$(date +%s.%N)
        "$H" check "$dir/n.yaml" > "$dir/out.txt"
        t1=$(date +%s.%N)
        s=$(echo "$t1 - $t0" | bc -l)
        if [ -z "$best" ] || [ "$(echo "$s < $best" | bc -l)" = 1 ]; then best=$s; fi
    done
    nodes=$(sed -n 's/^compiled: \([0-9]*\) expression nodes; \([0-9]*\) + \([0-9]*\) + \([0-9]*\).*/\1/p' "$dir/out.txt")
    instr=$(sed -n 's/^compiled: \([0-9]*\) expression nodes; \([0-9]*\) + \([0-9]*\) + \([0-9]*\).*/\2+\3+\4/p' "$dir/out.txt")
    printf '| %s | %.3f | %s | %s |\n' "$N" "$best" "$nodes" "$instr"
done
python3 "$here/gen_nlink.py" 10 emb > "$dir/e.yaml"
python3 "$here/gen_nlink.py" 10 cart > "$dir/c.yaml"
e=$("$H" run "$dir/e.yaml" -q --columns x10,y10 | tail -n 1)
c=$("$H" run "$dir/c.yaml" -q --columns x10,y10 | tail -n 1)
echo
echo "N = 10 after 1 s: angles (embedding) $e; Cartesian $c"
