#!/bin/sh
# The lists of steppers that people read agree with the table the program
# uses (src/integrate/steppers.c, printed by `holosim help methods`): the
# --method line of `holosim help run`, the --method entry of holosim(1),
# the `method` entry of holosim-model(5), and the message for an unknown
# method.  A method added to the table and forgotten in one of them fails
# here.
#
#   HOLOSIM=bin/holosim sh tests/cli_methods.sh      (what `make check` runs)

CLI_NAME=methods
CLI_TIMEOUT=20
. "$(dirname "$0")/cli_lib.sh"

# the table, one name a line, sorted
begin "help_methods"
hs help methods
rc_is 0
err_empty
awk '/^[^ ]/ { print $1 }' "$T/out" | sort >"$T/table"
n=$(wc -l <"$T/table")
[ "$n" -ge 12 ] || no "only $n methods listed"
grep -q -x rk8pd "$T/table" || no "rk8pd missing"
# every line: name, 'order', a number or 'var', a kind, a description
awk '/^[^ ]/ && !($2 == "order" && ($3 ~ /^[0-9]+$/ || $3 == "var") && NF >= 6) { exit 1 }
     /^ / && $1 != "option" { exit 1 }' "$T/out" ||
    no "a line is not 'NAME order N KIND ...' or '  option NAME ...'"
# the options (hs_stepper.options): rattle's step, with its range and help
grep -q '^  option step (a positive number: rattle rattle4 rattle6 rattle8): the step' "$T/out" ||
    no "rattle's option step is not listed"
end

# same_set LABEL FILE: FILE (names, one a line) holds the table's names
same_set() {
    sort -u "$2" >"$2.s"
    if ! cmp -s "$T/table" "$2.s"; then
        no "$1 differs from the table: $(diff "$T/table" "$2.s" | grep '^[<>]' | tr '\n' ' ')"
    fi
}

# `holosim help run`: the words after "methods'):" up to the next option
begin "usage_lists_every_method"
hs help run
rc_is 0
awk '/--method NAME/ { on = 1; sub(/.*methods.\):/, "") }
     on && /^  --/ && !/--method/ { exit }
     on { sub(/\(the default:.*/, ""); gsub(/\(default\)|fixed step:|[;,]/, ""); for (i = 1; i <= NF; i++) print $i }' \
    "$T/out" >"$T/usage"
same_set "holosim help run" "$T/usage"
end

# man/holosim.1: the bold names of the --method entry (up to the next .TP)
# that are method names in form (lower case letters and digits)
man_names() {   # man_names FILE START_REGEX
    awk -v start="$2" '
        $0 ~ start { on = 1; next }
        on && /^\.TP/ { exit }
        on && /^\.BR? / {
            line = substr($0, index($0, " ") + 1); k = 0
            # split into troff arguments (quoted strings kept whole)
            while (length(line) > 0) {
                sub(/^ +/, "", line)
                if (line == "") break
                if (substr(line, 1, 1) == "\"") {
                    e = index(substr(line, 2), "\""); arg = substr(line, 2, e - 1)
                    line = substr(line, e + 2)
                } else {
                    e = index(line, " "); if (e == 0) e = length(line) + 1
                    arg = substr(line, 1, e - 1); line = substr(line, e)
                }
                k++
                if ((k % 2 == 1 || $1 == ".B") && arg ~ /^[a-z][a-z0-9]*$/ &&
                    arg != "holosim")
                    print arg
            }
        }' "$1"
}
begin "man_holosim_lists_every_method"
man_names "$ROOT/man/holosim.1" '^\.BI \\\\-\\\\-method " NAME"' >"$T/man1"
same_set "holosim(1) --method" "$T/man1"
end

begin "man_model_lists_every_method"
man_names "$ROOT/man/holosim-model.5" '^\.B method$' >"$T/man5"
same_set "holosim-model(5) method" "$T/man5"
end

# the message for an unknown name lists the same
begin "unknown_method_lists_every_method"
hs run "$ROOT/models/pendulum.yaml" --method rk9
rc_is 1
out_empty
head -1 "$T/err" | tr ' ' '\n' | sed -n '/of:$/,$p' | sed 1d | grep . >"$T/msg"
err_has "try 'holosim help methods'"
same_set "the unknown-method message" "$T/msg"
end

# the tests' per-stepper loops read the table: a name that is not a method
# is refused by every command that takes --method
begin "check_refuses_file_method"
printf 'coordinates: [x]\nmass: [1]\ninitial: {q: {x: 0}}\n' >"$T/m.yaml"
printf 'simulate:\n  t_end: 1\n  method: rk8\n' >>"$T/m.yaml"
hs check "$T/m.yaml"
rc_is 2
out_empty
err_has "m.yaml:6:11: error: unknown method 'rk8' (did you mean 'rk8pd'?); choose one of: rk2 "
end

# a method that cannot run the model: `holosim check` says so at the method
begin "check_refuses_unsuited_method"
hs check "$TESTS/bad/method_rattle_lagrangian.yaml"
rc_is 2
out_empty
err_has "method_rattle_lagrangian.yaml:10:11: error: method 'rattle' needs a constant mass matrix"
err_has "use dop853 or rk8pd"
end

summary
