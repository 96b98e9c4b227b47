#!/bin/sh
# A newcomer's first hour (issue 17), end to end (POSIX sh):
#   - the command-line conventions: options anywhere, --, bundled short
#     flags, --opt=value, a flag given a value, "did you mean", -V, help
#   - --set NAME=EXPR (several per option, the last wins) and --params FILE
#   - holosim columns; --columns with spaces and globs
#   - hints, each with its input, line, column, message and exit code
#   - -0 never printed; the manual pages render clean; make install layout
#   - no file of the project refers to notes outside it
#
#   HOLOSIM=bin/holosim sh tests/cli_newcomer.sh   (what `make check` runs)
#
# Same conventions as tests/cli.sh; the last line is `N passed, N failed`.

CLI_NAME=newcomer
CLI_TIMEOUT=
. "$(dirname "$0")/cli_lib.sh"

PEND=$ROOT/models/pendulum.yaml

command -v timeout >/dev/null 2>&1 && TO="timeout 20"

err_line() {
    got=$(sed -n "$1p" "$T/err")
    [ "$got" = "$2" ] || no "stderr line $1 is '$got', want '$2'"
}
# field F of row R (1-based, the header is row 1) of stdout
field() { sed -n "$1p" "$T/out" | cut -d, -f"$2"; }
# |A - B| <= TOL
near() {
    awk -v a="$1" -v b="$2" -v tol="$3" \
        'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= tol) }'
}
# positioned FILE LINE COL MSG: a FILE:LINE:COL error with MSG, the source
# line and a caret under COL
positioned() {
    first=$(head -n 1 "$T/err")
    case $first in
    "$1:$2:$3: error: "*"$4"*) ;;
    *) no "first line '$first', want '$1:$2:$3: error: ...$4...'" ;;
    esac
    caret=$(sed -n 3p "$T/err")
    [ "${#caret}" = $(($3 + 4)) ] || no "caret at column $((${#caret} - 4)), want $3"
    out_empty
}

# A pendulum short enough for quick runs: rows at t = 0 and 0.01.
SHORT="--t-end 0.01 --dt 0.01"

# ---- options anywhere, --, bundles, --opt=value -------------------------------

hs run "$PEND" $SHORT -q
cp "$T/out" "$T/ref.csv"

begin options_before_the_model
hs run --t-end 0.01 -q --dt 0.01 "$PEND"
rc_is 0; err_empty
cmp -s "$T/out" "$T/ref.csv" || no "options first give another CSV"
end

begin bundled_q_o_separate_value
rm -f "$T/a.csv"
hs run "$PEND" $SHORT -qo "$T/a.csv"
rc_is 0; err_empty; out_empty
cmp -s "$T/a.csv" "$T/ref.csv" || no "-qo FILE wrote something else"
end

begin attached_o_value
rm -f "$T/b.csv"
hs run "$PEND" $SHORT -q -o"$T/b.csv"
rc_is 0; cmp -s "$T/b.csv" "$T/ref.csv" || no "-oFILE wrote something else"
end

begin bundled_q_o_attached_value
rm -f "$T/c.csv"
hs run -qo"$T/c.csv" "$PEND" $SHORT
rc_is 0; cmp -s "$T/c.csv" "$T/ref.csv" || no "-qoFILE wrote something else"
end

begin long_option_equals_value
rm -f "$T/d.csv"
hs run "$PEND" --t-end=0.01 --dt=0.01 --quiet --output="$T/d.csv" --columns=t,x,y,x\',y\',lambda_rod,G_rod,Gdot_rod,E,theta
rc_is 0; cmp -s "$T/d.csv" "$T/ref.csv" || no "--opt=value gave another CSV"
end

begin set_equals_form
hs run "$PEND" $SHORT -q --set=theta0=0.3 --columns=t,theta
rc_is 0; out_line 1 "t,theta"
near "$(field 2 2)" 0.3 1e-15 || no "theta(0) = $(field 2 2)"
end

for f in --quiet=1 --progress=yes --help=run; do
    begin "flag_with_value_$f"
    hs run "$PEND" $SHORT "$f"
    rc_is 1; out_empty; err_has "option '${f%%=*}' takes no value"
    end
done

begin double_dash_ends_options
cp "$PEND" "$T/-m.yaml"
(cd "$T" && $TO "$H" run -q --t-end 0.01 --dt 0.01 -- -m.yaml >"$T/out" 2>"$T/err")
rc=$?
rc_is 0; cmp -s "$T/out" "$T/ref.csv" || no "'-- -m.yaml' gave another CSV"
end

begin dash_operand_without_double_dash
hs derive --wrt x '-x^2'
rc_is 1; out_empty; err_has "unknown option '-x'"; err_has "goes after '--'"
end

begin dash_operand_after_double_dash
hs derive --wrt x -- '-x^2'
rc_is 0; out_line 1 "-2*x"
end

begin value_option_last
hs run "$PEND" -o
rc_is 1; out_empty; err_has "option '--output' needs a value"
end

begin unknown_short_in_bundle
hs run "$PEND" -qx
rc_is 1; out_empty; err_has "unknown option '-x'"
end

# ---- did you mean -----------------------------------------------------------

for c in "--colums:--columns" "--t_end:--t-end" "--presicion:--precision" "--parms:--params"; do
    bad=${c%%:*}
    good=${c#*:}
    begin "suggest_$bad"
    hs run "$PEND" "$bad" x
    rc_is 1; out_empty; err_has "unknown option '$bad' (did you mean '$good'?)"
    err_has "try 'holosim help run'"
    end
done

begin option_of_another_command
hs check "$PEND" --columns t
rc_is 1; out_empty; err_has "unknown option '--columns' for 'check' (an option of 'run', 'batch' and 'animate')"
end

for c in "rnu:run" "chek:check" "colums:columns" "derivee:derive" "hlep:help"; do
    bad=${c%%:*}
    good=${c#*:}
    begin "suggest_command_$bad"
    hs "$bad" "$PEND"
    rc_is 1; out_empty; err_has "unknown command '$bad' (did you mean '$good'?)"
    end
done

begin unknown_command_far
hs frobnicate
rc_is 1; err_has "unknown command 'frobnicate'"
# every command --help lists, the message names (it is made from the table)
for c in $("$H" --help | sed -n '/^commands:/,/^$/s/^  \([a-z]*\) .*/\1/p' | sort -u); do
    grep -q "[ ,]$c\(,\|\$\)" "$T/err" || no "the message lacks '$c'"
done
end

begin top_level_option_suggest
hs --verison
rc_is 1; out_empty; err_has "did you mean '--version'?"
end

# ---- -V, --version, help ------------------------------------------------------

begin version_short
hs -V
rc_is 0; err_empty
[ "$(wc -l <"$T/out" | tr -d ' ')" = 1 ] || no "more than one line"
grep -E -q '^holosim [0-9]+\.[0-9]+\.[0-9]+$' "$T/out" || no "prints '$(head -n 1 "$T/out")'"
cp "$T/out" "$T/v1"
hs --version
cmp -s "$T/out" "$T/v1" || no "-V and --version differ"
end

begin help_unknown_is_an_error
hs help nosuch
rc_is 1; out_empty; err_has "unknown command 'nosuch'"
end

begin help_typo_suggests
hs help rnu
rc_is 1; err_has "did you mean 'run'?"
end

begin help_two_commands
hs help run check
rc_is 1; out_empty
end

begin help_columns
hs help columns
rc_is 0; out_line 1 "usage: holosim columns MODEL [--set NAME=EXPR]... [--params FILE.yaml]"
hs columns --help
rc_is 0; out_has "usage: holosim columns"
end

begin eval_option_typo
hs eval --hepl
rc_is 1; out_empty; err_has "unknown option '--hepl'"
end

# ---- --set NAME=EXPR ----------------------------------------------------------

hs eval '2*pi*sin(0.5)'
x_2pi=$(cat "$T/out")

begin set_expression_pi
hs run "$PEND" $SHORT -q --set 'l=2*pi' --columns t,x,y
rc_is 0
near "$(field 2 2)" "$x_2pi" 1e-14 || no "x(0) = $(field 2 2), want 2 pi sin(0.5) = $x_2pi"
end

begin set_two_with_reference
hs run "$PEND" $SHORT -q --set 'l=2*pi,theta0=l/4' --columns t,x,y
rc_is 0
near "$(field 2 2)" 6.283185307179586 1e-14 || no "x(0) = $(field 2 2), want 2 pi"
near "$(field 2 3)" 0 1e-14 || no "y(0) = $(field 2 3), want 0"
end

begin set_comma_inside_parentheses
hs run "$PEND" $SHORT -q --set 'theta0=atan2(1,2)' --columns t,x
rc_is 0
near "$(field 2 2)" 0.44721359549995793 1e-15 || no "x(0) = $(field 2 2), want 1/sqrt(5)"
end

begin set_if_then_more
hs run "$PEND" $SHORT -q --set 'theta0=if(1 < 2, 0.5, 1), l = 2' --columns t,x
rc_is 0
hs eval '2*sin(0.5)'
want=$(cat "$T/out")
hs run "$PEND" $SHORT -q --set 'theta0=if(1 < 2, 0.5, 1), l = 2' --columns t,x
near "$(field 2 2)" "$want" 1e-15 || no "x(0) = $(field 2 2), want $want"
end

begin set_last_wins
hs eval '3*sin(0.5)'
want=$(cat "$T/out")
for s in "--set l=1 --set l=3" "--set l=1,l=3"; do
    # shellcheck disable=SC2086
    hs run "$PEND" $SHORT -q $s --columns t,x
    rc_is 0
    near "$(field 2 2)" "$want" 1e-15 || no "$s: x(0) = $(field 2 2), want $want"
done
end

begin set_bad_expression_caret
hs run "$PEND" --set 'l=2*'
rc_is 1; out_empty
err_line 1 "holosim: error: --set l=2*: expression expected at end of input (an operand is missing here: a number, a name or a parenthesis)"
err_line 2 "    --set l=2*"
err_line 3 "              ^"
end

begin set_bad_expression_inner
hs run "$PEND" --set 'l=2,theta0=sin(l'
rc_is 1; out_empty
err_has "--set theta0=sin(l: ')' expected"
err_line 2 "    --set theta0=sin(l"
end

begin set_two_operands_in_one
hs run "$PEND" --set 'l=1,2'
rc_is 1; out_empty; err_has "unexpected ',' after the end of the expression"
err_line 3 "             ^"
end

begin set_unknown_parameter_suggests
hs run "$PEND" --set 'lx=2'
rc_is 1; out_empty; err_has "--set lx: the model has no parameter 'lx' (did you mean 'l'?)"
end

begin set_unknown_name_suggests
hs run "$PEND" --set 'l=2*pii'
rc_is 1; out_empty; err_has "unknown name 'pii' (did you mean 'pi'?)"
err_line 3 "              ^"
end

begin set_not_finite
hs run "$PEND" --set 'l=sqrt(0-1)'
rc_is 1; out_empty; err_has "--set l=sqrt(0-1)"
end

begin set_malformed
hs run "$PEND" --set '2l=1'
rc_is 1; out_empty; err_has "--set wants NAME=EXPR"
end

begin set_on_check_columns_derive
hs check "$PEND" --set 'theta0=pi/6'
rc_is 0; out_has "initial data: consistent"
hs derive --set l=2 "$PEND"
rc_is 0; out_has "rod = x^2 + y^2 - l^2"
hs columns --set l=2 "$PEND"
rc_is 0
end

# ---- --params FILE.yaml -------------------------------------------------------

printf 'l: 2*pi\ntheta0: l/4   # a quarter turn\n' >"$T/quarter.yaml"

begin params_file
hs run "$PEND" $SHORT -q --params "$T/quarter.yaml" --columns t,x,y
rc_is 0
near "$(field 2 2)" 6.283185307179586 1e-14 || no "x(0) = $(field 2 2), want 2 pi"
end

begin params_then_set_in_order
hs run "$PEND" $SHORT -q --params "$T/quarter.yaml" --set l=1 --columns t,x
near "$(field 2 2)" 0.24740395925452294 1e-15 || no "x(0) = $(field 2 2), want sin(pi/4*...)"
hs run "$PEND" $SHORT -q --set l=1 --params "$T/quarter.yaml" --columns t,x
near "$(field 2 2)" 6.283185307179586 1e-14 || no "x(0) = $(field 2 2): the file did not win"
end

begin params_empty_file
printf '# nothing yet\n' >"$T/empty.yaml"
hs run "$PEND" $SHORT -q --params "$T/empty.yaml"
rc_is 0; cmp -s "$T/out" "$T/ref.csv" || no "an empty parameter file changed the run"
end

begin params_missing_file
hs run "$PEND" --params "$T/nosuch.yaml"
rc_is 1; out_empty; err_has "--params: cannot open '$T/nosuch.yaml'"
end

# params_case NAME CONTENT LINE COL MESSAGE: a bad parameter file, exit 1
params_case() {
    begin "params_$1"
    printf '%s\n' "$2" >"$T/p_$1.yaml"
    hs run "$PEND" --params "$T/p_$1.yaml"
    rc_is 1
    positioned "$T/p_$1.yaml" "$3" "$4" "$5"
    end
}
params_case syntax 'l: 2*' 1 6 "expression expected at end of input"
params_case quoted_syntax "l: '1 + (2'" 1 11 "')' expected"
params_case unknown_parameter 'lx: 2' 1 1 "the model has no parameter 'lx' (did you mean 'l'?)"
params_case unknown_name "g: 9.81
l: 2*lx" 2 6 "unknown name 'lx' (did you mean 'l'?)"
params_case list_value 'l: [1, 2]' 1 4 "the value of 'l' must be a number or an expression, found a list"
params_case not_a_mapping '- l' 1 1 "a parameter file must be a mapping"
params_case duplicate "l: 1
l: 2" 2 1 "duplicate parameter 'l' (first at line 1)"
params_case bad_name '1x: 3' 1 1 "'1x' is not a valid parameter name"
params_case prime "l: x'" 1 4 "has no velocity"
params_case not_finite 'l: sqrt(0-1)' 1 4 "evaluates to"
params_case yaml_error "l: 1
  m: [" 2 4 "YAML"

# ---- holosim columns and --columns ------------------------------------------

begin columns_lists_default_first
hs columns "$PEND"
rc_is 0; err_empty
cp "$T/out" "$T/cols"
head -n 1 "$T/ref.csv" | tr ',' '\n' >"$T/dflt"
n=$(wc -l <"$T/dflt" | tr -d ' ')
head -n "$n" "$T/cols" | cmp -s - "$T/dflt" || no "the first $n lines are not the default header"
for c in "x''" "y''" T U R_x R_y P_R power_residual W_R W_nc W_t energy_balance; do
    grep -F -x -q -e "$c" "$T/cols" || no "lacks $c"
done
[ "$(sort "$T/cols" | uniq -d)" = "" ] || no "a column is listed twice"
end

begin columns_every_one_runs
hs run "$PEND" $SHORT -q --columns "$(tr '\n' ',' <"$T/cols" | sed 's/,$//')"
rc_is 0
head -n 1 "$T/out" | tr ',' '\n' | cmp -s - "$T/cols" || no "the run's header differs from the list"
hs run "$PEND" $SHORT -q --columns all
head -n 1 "$T/out" | tr ',' '\n' | sort | cmp -s - "$(sort "$T/cols" >"$T/cols.s"; echo "$T/cols.s")" ||
    no "'all' and the list are not the same set"
end

begin columns_embedding_ambient
hs columns "$ROOT/models/hoop_angle.yaml"
rc_is 0
for c in x y z "theta''" R_theta; do
    grep -F -x -q -e "$c" "$T/out" || no "lacks $c"
done
end

begin columns_bad_model
hs columns "$ROOT/tests/bad/unknown_symbol.yaml"
rc_is 2; out_empty; err_has "unknown name 'll'"
end

begin columns_no_model
hs columns
rc_is 1; out_empty; err_has "columns: expected one MODEL"
end

begin columns_spaces_trimmed
hs run "$PEND" $SHORT -q --columns 't, x ,  E'
rc_is 0; out_line 1 "t,x,E"
end

begin columns_glob
hs run "$ROOT/models/slider_crank.yaml" $SHORT -q --columns 't,lambda_*'
rc_is 0; out_line 1 "t,lambda_crank,lambda_rod,lambda_rail"
hs run "$ROOT/models/slider_crank.yaml" $SHORT -q --columns "*''"
rc_is 0; out_line 1 "xp'',yp'',xs'',ys''"
end

begin columns_glob_unmatched
hs run "$PEND" --columns 't,zz*'
rc_is 1; out_empty; err_has "--columns: no column matches 'zz*'"; err_has "lambda_rod"
end

# ---- hints: input, line, column, message, exit code ---------------------------

# hint NAME LINE COL MESSAGE RC: the model $T/NAME.yaml (written before)
hint() {
    begin "hint_$1"
    (cd "$T" && $TO "$H" run "$1.yaml" >"$T/out" 2>"$T/err")
    rc=$?
    rc_is "$5"
    positioned "$1.yaml" "$2" "$3" "$4"
    end
}

base() {
    cat <<EOF
parameters: {m: 1, g: 9.81, l: 1}
coordinates: [x, y, z]
mass: [m, m, m]
potential: $1
initial: {q: {x: 0, y: 0, z: 0}}
simulate: {t_end: 1}
EOF
}
base 'm*g*y + x**2' >"$T/power.yaml"
hint power 4 21 "'**' is not an operator: use ^ for powers" 2
base 'm*g*y + arctan2(y, x)' >"$T/arctan2.yaml"
hint arctan2 4 20 "unknown function 'arctan2' (did you mean 'atan2'?)" 2
base 'M*g*y' >"$T/case.yaml"
hint case 4 12 "unknown name 'M' (did you mean 'm'?)" 2
base 'm*gg*y' >"$T/typo.yaml"
hint typo 4 14 "unknown name 'gg' (did you mean 'g'?)" 2
base 'k*y' >"$T/letter.yaml"
hint letter 4 12 "unknown name 'k'" 2
begin hint_letter_no_wild_guess
grep -q "did you mean" "$T/err" && no "a one-letter name got a guess: $(head -n 1 "$T/err")"
end
base 'E' >"$T/column.yaml"
hint column 4 12 "'E' is computed by the dynamics: only outputs and events can read it" 2
base 'm*g*y' | sed 's/mass: \[m, m, m\]/mass: m/' >"$T/mass.yaml"
hint mass 3 7 "for the same mass on each of the 3 coordinates write [m, m, m]" 2
base 'm*g*y' | sed 's/parameters: {m: 1, g: 9.81, l: 1}/parameters: {m: 1, g: 9.81, l: 2*x}/' \
    >"$T/param_coord.yaml"
hint param_coord 1 34 "'x' is not known here: a parameter may use only numbers, pi and parameters" 2

cat >"$T/dependent.yaml" <<'EOF'
coordinates: [x, y]
mass: [1, 1]
constraints: {rod: x^2 + y^2 - 1}
initial: {q: {x: 0, y: 0}}
simulate: {t_end: 1}
EOF
hint dependent 3 20 "(rank of G_q is 0, there is 1 constraint)" 2

cat >"$T/one_entry.yaml" <<'EOF'
coordinates: [x, y]
mass: [1, 1]
initial: {q: [0]}
simulate: {t_end: 1}
EOF
hint one_entry 3 14 "initial.q has 1 entry; the model has 2 coordinates" 2

begin hint_eval_power
hs eval 'x**2' x=3
rc_is 2; out_empty
err_line 1 "1:2: error: '**' is not an operator: use ^ for powers (x^2)"
err_line 3 "     ^"
end

begin hint_eval_function
hs eval 'ln(2)'
rc_is 2; err_line 1 "1:1: error: unknown function 'ln' (did you mean 'log'?)"
end

# ---- -0 is printed as 0 ---------------------------------------------------------

cat >"$T/zero.yaml" <<'EOF'
coordinates: [x]
mass: [1]
initial: {q: {x: 0}}
simulate: {t_end: 1, dt: 1}
outputs: {mx: -x, nz: -1*x*x}
EOF
for p in 17 3; do
    begin "no_negative_zero_precision_$p"
    hs run "$T/zero.yaml" -q --precision "$p"
    rc_is 0
    grep -q -- '-0\([,]\|$\)' "$T/out" && no "a -0 in: $(grep -- '-0' "$T/out" | head -n 1)"
    out_line 2 "0,0,0,0,0,0"
    end
done

# ---- manual pages -----------------------------------------------------------------

begin model_page_groff_clean
if command -v groff >/dev/null 2>&1; then
    groff -man -Tutf8 -ww -z "$ROOT/man/holosim-model.5" 2>"$T/err"
    [ -s "$T/err" ] && no "groff warns: $(head -n 2 "$T/err")"
else
    no "groff is not installed"
fi
end

if command -v man >/dev/null 2>&1; then
    for page in man/holosim-model.5 man/holosim.1; do
        begin "man_warnings_$page"
        MANWIDTH=80 man --warnings -l "$ROOT/$page" >"$T/out" 2>"$T/err"
        [ -s "$T/err" ] && no "man warns: $(head -n 2 "$T/err")"
        [ -s "$T/out" ] || no "nothing rendered"
        end
    done
fi

begin model_page_covers_the_format
sed 's/\\//g' "$ROOT/man/holosim-model.5" >"$T/page"
for k in format name parameters coordinates define mass potential forces kinetic lagrangian \
         embedding constraints initial consistency simulate outputs events \
         tolerance lock t_end dt method rtol atol stabilize alpha beta \
         energy_balance W_R W_nc W_t P_R power_residual atan2 hypot "if(c, a, b)"; do
    grep -F -q -e "$k" "$T/page" || no "holosim-model(5) does not mention $k"
done
grep -q '^\.SH EVENTS' "$ROOT/man/holosim-model.5" || no "no EVENTS section"
# events run (issue 15): the page says how, without a note that they do not
grep -q 'NOTE' "$ROOT/man/holosim-model.5" && no "a note that events do not run is left"
for k in direction action release record stop lambda_ "x\(aq\(aq"; do
    grep -F -q -e "$k" "$ROOT/man/holosim-model.5" || no "EVENTS does not mention $k"
done
end

begin man1_points_to_model_page
grep -F -q 'holosim\-model (5)' "$ROOT/man/holosim.1" || no "holosim(1) does not refer to holosim-model(5)"
sed -n '/^\.SH SEE ALSO/,$p' "$ROOT/man/holosim.1" | grep -F -q 'holosim\-model (5)' ||
    no "SEE ALSO lacks holosim-model(5)"
end

begin no_reference_outside_the_project
if command -v git >/dev/null 2>&1 && git -C "$ROOT" rev-parse --git-dir >/dev/null 2>&1; then
    git -C "$ROOT" grep -n -E 'DESIGN\.md|MODEL-FORMA[T]|STYLE\.md|shared[/]' >"$T/refs"
    [ -s "$T/refs" ] && no "$(head -n 3 "$T/refs" | tr '\n' ' ')"
fi
end

# ---- make install / uninstall ---------------------------------------------------

P=$T/prefix
mk() { (cd "$ROOT" && env -u MAKEFLAGS -u MAKELEVEL -u SANITIZE make -s "$@") >"$T/make.log" 2>&1; }

begin install_layout
mkdir -p "$P/bin" "$P/share/man/man1"
echo keep >"$P/bin/other"
echo keep >"$P/share/man/man1/other.1"
mk install PREFIX="$P" || no "make install failed: $(tail -n 2 "$T/make.log")"
for f in bin/holosim bin/holosim-sweep bin/holosim-plot; do
    [ -x "$P/$f" ] || no "no executable $f"
done
for f in share/man/man1/holosim.1 share/man/man5/holosim-model.5; do
    [ -f "$P/$f" ] || no "no $f"
done
# the library (README: From C, From Python)
for f in lib/libholosim.so.0.1.0 lib/libholosim.so.0 lib/libholosim.so lib/libholosim.a \
         include/holosim.h lib/pkgconfig/holosim.pc lib/python3/dist-packages/holosim/__init__.py \
         lib/python3/dist-packages/holosim/_lib.py; do
    [ -e "$P/$f" ] || no "no $f"
done
for s in sweep plot; do
    if [ -f "$ROOT/man/holosim-$s.1" ]; then
        [ -f "$P/share/man/man1/holosim-$s.1" ] || no "man/holosim-$s.1 exists but is not installed"
    fi
done
"$P/bin/holosim" -V | grep -q '^holosim ' || no "the installed holosim does not run"
"$P/bin/holosim-sweep" --help >/dev/null 2>&1 || no "holosim-sweep --help fails"
"$P/bin/holosim-plot" --help >/dev/null 2>&1 || no "holosim-plot --help fails"
if command -v man >/dev/null 2>&1; then
    MANPATH=$P/share/man man -w 5 holosim-model >/dev/null 2>&1 || no "man 5 holosim-model not found"
fi
end

begin uninstall_removes_exactly_those
mk uninstall PREFIX="$P" || no "make uninstall failed: $(tail -n 2 "$T/make.log")"
left=$(cd "$P" && find . -type f | sort | tr '\n' ' ')
[ "$left" = "./bin/other ./share/man/man1/other.1 " ] || no "left after uninstall: $left"
end

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
