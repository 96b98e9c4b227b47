#!/bin/sh
# Redundant constraints, singular positions, massless coordinates from the
# command line (holosim(1), holosim-model(5) CONSISTENCY): check reports the
# redundancy as information, the run's summary says so once,
# --dependent reject restores the refusal at the first dependent
# constraint, equilibrium prints the minimum-norm multiplier and says so.
CLI_NAME=mechanisms
CLI_TIMEOUT=120
. "$(dirname "$0")/cli_lib.sh"

P3=$ROOT/models/parallelogram3.yaml
NF=$ROOT/models/nfourbar_singular.yaml
DN=$ROOT/models/double_pendulum_natural.yaml

near() {
    awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d;
        exit !(a != "" && d <= t) }' || no "$4: $1, want $2 (within $3)"
}

begin check_reports_redundancy
hs check "$P3"
rc_is 0
out_has "rank of G_q at t0: 5 of 6: 'y2' depends on"
out_has "redundant constraints: allowed; lambda_* are the minimum-norm multipliers"
out_has "initial data: consistent"
end

begin run_summary_says_so_once
hs run "$P3" --t-end 1 -o "$T/p3.csv"
rc_is 0
[ "$(grep -c 'redundant constraints: rank of G_q is 5 of 6' "$T/err")" = 1 ] ||
    no "the redundancy note is not there once: $(cat "$T/err")"
end

begin dependent_reject_option
hs run "$P3" --dependent reject -o "$T/never.csv"
rc_is 2
out_empty
head -n 1 "$T/err" | grep -q "^$P3:28:7: error: the constraints are dependent at the initial position (rank of G_q is 5, there are 6 constraints): 'y2' depends on" ||
    no "not positioned at y2: $(head -n 1 "$T/err")"
[ "$(sed -n 2p "$T/err")" = "      y2: l*sin(th2) - yc" ] || no "source line: '$(sed -n 2p "$T/err")'"
[ -e "$T/never.csv" ] && no "-o file created"
end

begin dependent_reject_key
sed 's/^initial:/consistency: {dependent: reject}\ninitial:/' "$P3" >"$T/strict.yaml"
hs check "$T/strict.yaml"
rc_is 2
out_has "redundant constraints: refused (consistency.dependent: reject)"
err_has "the constraints are dependent at the initial position"
end

begin dependent_bad_value
hs run "$P3" --dependent maybe
rc_is 1
err_has "--dependent must be allow or reject, got 'maybe'"
sed 's/^initial:/consistency: {dependent: sometimes}\ninitial:/' "$P3" >"$T/bad.yaml"
hs run "$T/bad.yaml"
rc_is 2
head -n 1 "$T/err" | grep -q "bad.yaml:31:26: error: consistency.dependent must be 'allow' or 'reject'" ||
    no "message: $(head -n 1 "$T/err")"
end

begin singular_positions_summary
hs run "$NF" --t-end 2 -o "$T/nf.csv"
rc_is 0
err_has "near-singular evaluations passed with the rank-revealing solve"
hs run "$NF" --t-end 2 --dependent reject -o "$T/nf2.csv"
rc_is 4
err_has "G_q"
end

begin massless_summary_and_modes
hs run "$DN" --t-end 1 -o "$T/dn.csv"
rc_is 0
err_has "singular mass matrix: solved through [M G_q^T; G_q 0]"
hs modes "$DN" --csv
rc_is 0
# omega^2 = (2 -+ sqrt 2) g / l for equal masses and rods
near "$(sed -n 2p "$T/out" | cut -d, -f3)" 2.3971993979 1e-8 "slow mode"
near "$(sed -n 3p "$T/out" | cut -d, -f3)" 5.7873512980 1e-8 "fast mode"
end

begin equilibrium_minimum_norm
hs equilibrium "$P3"
rc_is 0
out_has "1 degree of freedom"
out_has "the constraints are redundant there, rank of G_q 5 of 6: not unique, these are the minimum-norm ones"
# the coupler's weight mc g shared equally by the three pins: 6.54 each
near "$(sed -n 's/^  lambda_y1 = //p' "$T/out")" -6.54 1e-12 "lambda_y1"
near "$(sed -n 's/^  lambda_y2 = //p' "$T/out")" -6.54 1e-12 "lambda_y2"
near "$(sed -n 's/^  lambda_x3 = //p' "$T/out")" 0 1e-12 "lambda_x3"
hs modes "$P3" --csv
rc_is 0
# one pendulum: omega^2 = (3 m / 2 + mc) g / ((m + mc) l)
near "$(sed -n 2p "$T/out" | cut -d, -f3)" 3.3830459648 1e-8 "omega"
end

summary
