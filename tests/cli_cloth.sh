#!/bin/sh
# Large sparse models (issue 41, item 4): a cloth of particles joined by
# rods, in the Cartesian form with a diagonal mass, takes the sparse path
# (C = G_q M^-1 G_q^T and the projection's matrix factored by KLU) and
# passes the old limits (5000 coordinates, k*n <= 10^7); --native=auto
# leaves kernels this large to the VM.  Checked against
# a second formulation: the same cloth with its rods in another order, so
# that C is a band (the band Cholesky), the motions equal to round-off.
#
#   HOLOSIM=bin/holosim sh tests/cli_cloth.sh   (what `make check` runs)
#
# Same conventions as tests/cli.sh; the last line is `N passed, N failed`.

CLI_NAME=cloth
CLI_TIMEOUT=120
. "$(dirname "$0")/cli_lib.sh"

cloth() {   # cloth N ORDER: the model into $T/cN_ORDER.yaml
    awk -v N="$1" -v ORDER="$2" -f "$TESTS/cloth.awk" > "$T/c$1$2.yaml"
}

# maxdiff A B COLS: the largest |difference| of columns 2..COLS of two CSVs
maxdiff() {
    awk -F, -v nc="$3" 'NR == FNR { for (c = 2; c <= nc; c++) a[FNR, c] = $c; next }
        FNR > 1 { for (c = 2; c <= nc; c++) { d = a[FNR, c] - $c; if (d < 0) d = -d
                  if (d > m) m = d } } END { printf "%.3g\n", m + 0 }' "$1" "$2"
}

# 20 x 20: 1140 coordinates, 741 rods; the sparse path against the band
cloth 20 a
cloth 20 b
begin "sparse C against banded C, 20 x 20 cloth"
hs run "$T/c20a.yaml" --t-end 0.5 --dt 0.05 -q -o "$T/a.csv"
rc_is 0
hs run "$T/c20b.yaml" --t-end 0.5 --dt 0.05 -q -o "$T/b.csv"
rc_is 0
rows=$(wc -l < "$T/a.csv")
[ "$rows" -eq 12 ] || no "$rows lines in the CSV, want 12"
d=$(maxdiff "$T/a.csv" "$T/b.csv" 2281)      # t, then q and v: 2 x 1140
awk -v d="$d" 'BEGIN { exit !(d <= 1e-9) }' || no "q, v differ by $d (want <= 1e-9)"
end

begin "the sparse path keeps the energy and the constraints"
hs run "$T/c20a.yaml" --t-end 0.5 --dt 0.05 -q --columns t,E,energy_balance -o "$T/e.csv" \
    --summary "$T/s.csv"
rc_is 0
awk -F, 'NR > 1 { b = $3 < 0 ? -$3 : $3; if (b > m) m = b } END { exit !(m <= 1e-6) }' \
    "$T/e.csv" || no "energy_balance beyond 1e-6"
end

# 40 x 40: 4680 coordinates, 3081 rods, k*n = 1.4e7 (refused before)
cloth 40 a
begin "a 40 x 40 cloth loads, checks and runs"
hs check "$T/c40a.yaml"
rc_is 0
out_has "n = 4680 coordinates, k = 3081 constraints"
out_has "rank of G_q at t0: 3081 of 3081"
out_has "initial data: consistent"
hs run "$T/c40a.yaml" --t-end 0.02 --dt 0.01 -o "$T/r.csv" --columns t,z_20_39 \
    --summary "$T/s40.csv"
rc_is 0
[ "$(wc -l < "$T/r.csv")" -eq 4 ] || no "$(wc -l < "$T/r.csv") lines, want 4"
end

# the 40 x 40 cloth with one rod twice: C singular, and the model is too
# large for the dense fallbacks, which say so rather than allocate gigabytes
sed 's/^  v_1_1: \(.*\)$/  v_1_1: \1\n  vdup: \1/' "$T/c40a.yaml" > "$T/dup.yaml"
begin "redundant rods in a sparse model: check says the rank is not certified"
hs check "$T/dup.yaml"
rc_is 4
out_has "rank of G_q at t0: not certified (C = G_q M^-1 G_q^T is singular or ill-conditioned, and a 3082 x 4680 G_q is too large for the dense QR)"
out_lacks "3082 of 3082"
err_has "the rank-revealing solve of a 3082 x 4680 constraint system is too large (its dense arrays: k*n and n*n at most 10000000)"
end

begin "redundant rods in a sparse model: run stops at once, exit 4"
hs run "$T/dup.yaml" --t-end 0.01 -o "$T/dup.csv" --native never
rc_is 4
err_has "holosim: error: the constraint matrix C = G_q M^-1 G_q^T is singular or ill-conditioned"
[ -e "$T/dup.csv" ] && no "a CSV was written"
end

# 60 x 60: 255,633 instructions; a long run under --native=auto uses the VM
# and says why, rather than start minutes of compiling (the run stops at once)
cloth 60 a
begin "auto builds no kernels this large unasked"
hs run "$T/c60a.yaml" --t-end 1 --dt 0.001 --stop-when 't > 0.002' -o /dev/null --native auto
rc_is 0
err_has "native: the kernels have 255633 instructions, more than auto builds unasked (200000"
err_has "using the VM (--native=always builds them)"
err_lacks "building kernels in the background"
end

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
