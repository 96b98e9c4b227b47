#!/bin/sh
# Hostile inputs, round four (issue 42), POSIX sh:
#
#   HOLOSIM=bin/holosim sh tests/cli_hostile4.sh       (make check runs it)
#
#   rewrites    a spring end written inline, longer than any fixed buffer:
#               the same run as the short form (the anchor does not move)
#   outputs     every output path of every command against every input
#               path (the model, params files, stdin, a batch points file),
#               through links: refused with exit 1, every file byte-identical
#
# The last line of output is always `N passed, N failed`.

CLI_NAME=hostile4
CLI_TIMEOUT=20
. "$(dirname "$0")/cli_lib.sh"

same() { cmp -s "$1" "$2" || no "$3"; }

# ---- rewrites ---------------------------------------------------------------

# A spring to the point (1 + 0.0001 sin(0) * 20, 0) = (1, 0), the end
# written as a 281-character expression: the same numbers as the end [1, 0]
long=$(awk 'BEGIN { s = "1"; for (i = 0; i < 20; i++) s = s "+0.0001*sin(0)"; print s }')
cat >"$T/spring_long.yaml" <<EOY
coordinates: [x, y]
mass: [1, 1]
points: {P: [x, y]}
springs: {s: {between: [P, ["$long", "0"]], k: 10, length: 0.5}}
initial: {q: {x: 0.3, y: 0.1}}
simulate: {t_end: 1, dt: 0.5}
EOY
sed "s/\"$long\"/1/" "$T/spring_long.yaml" >"$T/spring_short.yaml"
begin spring_end_long_expression
hs run "$T/spring_long.yaml" -q
rc_is 0
cp "$T/out" "$T/long.csv"
hs run "$T/spring_short.yaml" -q
same "$T/out" "$T/long.csv" "the long inline end moved the spring's anchor"
end

summary
