#!/bin/sh
# The documentation against the program (issue 29):
#   - the options the program's table accepts (src/cli/opts.c), holosim(1)'s
#     and the help texts (`holosim --help`, `holosim help COMMAND`) are the
#     same sets: nothing accepted undocumented, nothing documented refused;
#   - every command of `holosim help` has its own paragraph in holosim(1)'s
#     COMMANDS and a line in its SYNOPSIS, and the message for an unknown
#     command lists them all;
#   - holosim(1)'s known slips stay fixed (-q's text, EXAMPLES once each,
#     --params in the analysis synopses);
#   - messages that say what to do: an unconstrained model's check, a
#     time-dependent model given to equilibrium, a direction nothing holds.
#
#   HOLOSIM=bin/holosim sh tests/cli_docs.sh   (what `make check` runs)

CLI_NAME=docs
CLI_TIMEOUT=20
. "$(dirname "$0")/cli_lib.sh"

MAN=$ROOT/man/holosim.1
# the options of a text, one per line, sorted (\- of roff read as -)
opts_of() { sed 's/\\-/-/g; s/\\f[A-Z]//g' | grep -o -e '--[a-z][a-z-]*[a-z]' | sort -u; }

grep -o '"--[a-z][a-z-]*"' "$ROOT/src/cli/opts.c" | tr -d '"' |
    { cat; printf '%s\n' --help --version; } | sort -u >"$T/prog"
# --coverage there is a compiler flag holosim drops from HOLOSIM_CC
# (ENVIRONMENT; src/native/cache.c), not an option of holosim
opts_of <"$MAN" | grep -v -x -e '--option' -e '--coverage' >"$T/man"
cmds=$("$H" help | sed -n '/^commands:/,/^$/p' | awk '/^  [a-z]/ { print $1 }' | sort -u)
{ "$H" --help; for c in $cmds; do "$H" help "$c"; done; } 2>&1 | opts_of |
    grep -v -x -e '--option' >"$T/help"

begin "every option the program accepts is in holosim(1)"
missing=$(comm -23 "$T/prog" "$T/man" | tr '\n' ' ')
[ -z "$missing" ] || no "not in holosim(1): $missing"
end

begin "every option holosim(1) names is accepted"
extra=$(comm -13 "$T/prog" "$T/man" | tr '\n' ' ')
[ -z "$extra" ] || no "documented, not accepted: $extra"
end

begin "every option is in a help text, and the help names no other"
missing=$(comm -23 "$T/prog" "$T/help" | tr '\n' ' ')
extra=$(comm -13 "$T/prog" "$T/help" | tr '\n' ' ')
[ -z "$missing$extra" ] || no "help lacks: $missing; help names, program lacks: $extra"
end

begin "every command has a paragraph and a synopsis line in holosim(1)"
[ -n "$cmds" ] || no "no commands read from holosim help"
for c in $cmds; do
    [ "$c" = help ] && continue
    awk -v c="$c" 'p && /^\.B[I]? / && index($0, c) { f = 1 } { p = /^\.TP/ } END { exit !f }' \
        "$MAN" || no "no .TP paragraph for '$c'"
    grep -q -x -e ".B holosim $c" -e ".B holosim $c .*" "$MAN" || no "no synopsis line for '$c'"
done
end

begin "an unknown command lists every command"
hs simulate "$ROOT/models/pendulum.yaml"
rc_is 1
for c in $cmds; do err_has "$c"; done
end

begin "holosim(1): -q's text, EXAMPLES once each, --params in the analysis synopses"
sed -n '/^\.BR \\-q ", " \\-\\-quiet$/,/^\.TP/p' "$MAN" >"$T/q"
grep -q "No summary" "$T/q" || no "-q is not 'No summary ...'"
grep -q "No consistency report" "$T/q" && no "-q still says 'No consistency report'"
dup=$(sed -n '/^\.SH EXAMPLES/,/^\.SH/p' "$MAN" | grep '^holosim' | sort | uniq -d)
[ -z "$dup" ] || no "EXAMPLES twice: $dup"
for c in equilibrium modes; do
    sed -n "/^\\.B holosim $c\$/,/^\\.br/p" "$MAN" | grep -q 'params' ||
        no "the synopsis of $c lacks --params"
done
end

cat >"$T/free.yaml" <<'YAML'
parameters: {m: 1, k: 4}
coordinates: [x]
mass: [m]
potential: k*x^2/2
initial:
  q: {x: 1}
simulate: {t_end: 1}
YAML
begin "check of an unconstrained model says so (no G_q of 0 entries, no C)"
hs check "$T/free.yaml"
rc_is 0
out_has "constraints: none"
out_lacks "structural non-zeros of 0"
out_lacks "C = G_q M^-1 G_q^T"
out_has "E0 = 2"
end

begin "equilibrium of a time-dependent model says what to do instead"
hs equilibrium "$ROOT/models/rotating_hoop.yaml"
rc_is 2
err_has "depends on time through 'omega*t'"
err_has "write the model in a chart that turns with it"
head -n 1 "$T/err" | grep -q '^[^:]*rotating_hoop.yaml:[0-9]*:[0-9]*: error: ' ||
    no "not positioned: $(head -n 1 "$T/err")"
end

cat >"$T/free2.yaml" <<'YAML'
parameters: {k: 1}
coordinates: [x, y]
mass: [1, 1]
potential: k*(y - 1)^2
initial:
  q: {x: 0.3, y: 0}
simulate: {t_end: 1}
YAML
begin "no equilibrium: a direction nothing holds is said as mechanics"
hs equilibrium "$T/free2.yaml"
rc_is 3
err_has "blocking: coordinate 'x': no force balance in x, nothing holds the system in that direction"
end

# the keys a section accepts, as its "unknown key" message lists them, are
# each in holosim-model(5) (as a key: at a line start, or written .B KEY)
MAN5=$ROOT/man/holosim-model.5
keys_doc() {        # SECTION-YAML LABEL
    printf 'coordinates: [x]\nmass: [1]\ninitial: {q: {x: 0}}\n%s\n' "$1" >"$T/k.yaml"
    hs check "$T/k.yaml"
    rc_is 2
    list=$(sed -n '1s/.*(the keys there are \(.*\))$/\1/p' "$T/err" | tr -d ,)
    [ -n "$list" ] || no "$2: no list of keys in '$(head -n 1 "$T/err")'"
    sed 's/\\-/-/g; s/\\f[A-Z]//g; s/"//g' "$MAN5" >"$T/man5"
    for k in $list; do
        grep -q -E -e "^\.(B|BR|BI|RB|IR) (.* )?$k( |,|$)" -e "^ *$k:" "$T/man5" ||
            no "$2: key '$k' not in holosim-model(5)"
    done
}
begin "every key the model accepts is in holosim-model(5)"
keys_doc 'zzz_unknown: 1' "the model"
keys_doc 'simulate: {zzz_unknown: 1}' "simulate"
keys_doc 'consistency: {zzz_unknown: 1}' "consistency"
end

summary
