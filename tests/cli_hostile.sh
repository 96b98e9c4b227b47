#!/bin/sh
# Hostile inputs at the command line (issue 19), POSIX sh:
#
#   HOLOSIM=bin/holosim sh tests/cli_hostile.sh       (make check runs it)
#
#   signals     SIGTERM and SIGHUP stop a long run like SIGINT: complete
#               rows only, none lost, exit 143 / 129, the summary row
#               written; SIGHUP ignored at the start (nohup) stays ignored
#   outputs     -o or --summary onto the model, onto each other, through
#               ./x, a symbolic or a hard link, or standard output: refused
#               (exit 1) with every file untouched; a run that fails before
#               its first row leaves an existing -o file as it was and
#               creates none; an unwritable --summary found before the run;
#               the CSV file keeps its inode (tail -f keeps following it)
#   summary     a model path with a quote, a comma and a line break: one
#               RFC 4180 field
#   names       eval refuses to bind pi or a function; --set of one name
#               twice: the last wins
#   projection  -q still reports moved initial data; --quiet-projection not
#   limits      generated hostile files (chains of 100,000 parameters or
#               defines, 100,000 keys, a kinetic energy of 1,000
#               coordinates) each within 10 s
#               and, outside sanitizer builds, 1 GB of address space
#
# The last line of output is always `N passed, N failed`.

CLI_NAME=hostile
CLI_TIMEOUT=10
. "$(dirname "$0")/cli_lib.sh"

PEND=$ROOT/models/pendulum.yaml
SLIDER=$ROOT/models/slider_crank.yaml

# ASan reserves terabytes of address space: no ulimit -v for its builds
case $H in */build/san/*) SAN=1 ;; *) SAN=0 ;; esac

same() { cmp -s "$1" "$2" || no "$3"; }
absent() { [ -e "$1" ] && no "$2"; }

# The CSV in $1 has a header and only complete rows of as many fields, and
# ends with a line break.
complete_rows() {
    [ "$(wc -l <"$1")" -gt 10 ] || no "too few rows kept in $1"
    tail -c 1 "$1" | od -c | grep -q '\\n' || no "the last row of $1 is cut"
    awk -F, 'NR == 1 { n = NF } NF != n { bad = 1 } END { exit bad }' "$1" ||
        no "a row of $1 is incomplete"
}

cat >"$T/long.yaml" <<'EOY'
coordinates: [x, y]
mass: [1, 1]
potential: 9.81*y
constraints: {rod: x^2 + y^2 - 1}
initial: {q: {x: 0.6, y: -0.8}}
simulate: {t_end: 1e5, dt: 0.001}
EOY

# ---- signals ----------------------------------------------------------------

# rows_to_stop CSV: the last row's t is where the run stopped (the message's
# t): no computed row lost in a buffer
rows_to_stop() {
    t_msg=$(sed -n 's/.*interrupted at t=\([0-9.e+-]*\);.*/\1/p' "$T/err")
    t_last=$(tail -n 1 "$1" | cut -d, -f1)
    awk -v a="$t_msg" -v b="$t_last" 'BEGIN { d = a - b; if (d < 0) d = -d;
        exit !(a != "" && d <= 0.0011) }' || no "last row at t=$t_last, stopped at t=$t_msg"
}

if command -v timeout >/dev/null 2>&1; then
    begin sigterm_complete_rows
    timeout -s TERM --preserve-status 1 "$H" run "$T/long.yaml" -o "$T/term.csv" \
        --summary "$T/term-summary.csv" 2>"$T/err"
    rc=$?
    rc_is 143
    err_has "interrupted at t="
    err_has "(SIGTERM)"
    complete_rows "$T/term.csv"
    rows_to_stop "$T/term.csv"
    [ "$(wc -l <"$T/term-summary.csv")" = 2 ] || no "the summary is not a header and a row"
    sed -n 2p "$T/term-summary.csv" | grep -q '^"[^"]*long.yaml",143,' ||
        no "summary row: $(sed -n 2p "$T/term-summary.csv" | cut -c1-80)"
    rows=$(($(wc -l <"$T/term.csv") - 1))
    sed -n 2p "$T/term-summary.csv" | cut -d, -f5 | grep -qx "$rows" ||
        no "the summary counts other rows than the CSV's $rows"
    end

    # the same signal twice at once (timeout(1) signals the command, then
    # its process group) is one request: rows complete, exit 143
    begin sigterm_twice_at_once
    "$H" run "$T/long.yaml" -o "$T/twice.csv" 2>"$T/err" &
    pid=$!
    sleep 1
    kill -TERM "$pid"; kill -TERM "$pid"
    wait "$pid"
    rc=$?
    rc_is 143
    err_has "(SIGTERM)"
    complete_rows "$T/twice.csv"
    rows_to_stop "$T/twice.csv"
    end

    begin sighup_complete_rows_on_stdout
    timeout -s HUP --preserve-status 1 "$H" run "$T/long.yaml" >"$T/hup.csv" 2>"$T/err"
    rc=$?
    rc_is 129
    err_has "(SIGHUP)"
    complete_rows "$T/hup.csv"
    rows_to_stop "$T/hup.csv"
    end
fi

# a SIGHUP ignored when holosim starts (nohup) does not stop it
begin sighup_ignored_stays_ignored
(trap '' HUP; exec "$H" run "$T/long.yaml" -q -o "$T/nohup.csv" 2>"$T/err") &
pid=$!
sleep 1
kill -HUP $pid 2>/dev/null
sleep 1
if kill -0 $pid 2>/dev/null; then
    kill -TERM $pid
    wait $pid
    rc=$?
    rc_is 143
    complete_rows "$T/nohup.csv"
else
    wait $pid
    no "an ignored SIGHUP stopped the run (exit $?)"
fi
end

# ---- outputs ------------------------------------------------------------------

cp "$PEND" "$T/m.yaml"
cp "$PEND" "$T/m.orig"
mkdir "$T/sub"

# refused REASON ARGS...: exit 1 before anything runs, the model untouched
refused() {
    begin "refused_$1"
    shift
    cp "$T/m.orig" "$T/m.yaml"      # (an older holosim may have clobbered it)
    hs run "$@"
    rc_is 1
    err_has "are the same file"
    same "$T/m.yaml" "$T/m.orig" "the model file changed"
    out_empty
    end
}
refused o_is_model "$T/m.yaml" -o "$T/m.yaml"
refused o_is_model_dot_slash "$T/m.yaml" -o "$T/sub/../m.yaml"
(cd "$T" && ln -s m.yaml link.yaml && ln m.yaml hard.yaml)
refused o_is_model_symlink "$T/m.yaml" -o "$T/link.yaml"
refused o_is_model_hardlink "$T/m.yaml" -o "$T/hard.yaml"
refused summary_is_model "$T/m.yaml" --summary "$T/m.yaml" -o "$T/x.csv"
refused summary_is_o_new "$T/m.yaml" -o "$T/new.csv" --summary "$T/sub/../new.csv"
(cd "$T" && ln -s dangling-target.csv dangling.csv)
refused summary_is_o_dangling_link "$T/m.yaml" -o "$T/dangling-target.csv" --summary "$T/dangling.csv"
absent "$T/dangling-target.csv" "a refused run created the file"

# every input, not only the model: a --params file (issue 30), by name,
# through a link, the second of two, under each output option
printf 'l: 1.5\n' >"$T/p.yaml"
cp "$T/p.yaml" "$T/p.orig"
printf 'theta0: 0.2\n' >"$T/p2.yaml"
(cd "$T" && ln -s p.yaml plink.yaml && ln p.yaml phard.yaml)
for a in "-o $T/p.yaml" "--summary $T/p.yaml" "--events $T/p.yaml" "-o $T/sub/../p.yaml" \
         "-o $T/plink.yaml" "-o $T/phard.yaml"; do
    begin "refused_params_$(echo "$a" | sed 's|'"$T"'/||; s/[^a-z]/_/g')"
    hs run "$T/m.yaml" --params "$T/p2.yaml" --params "$T/p.yaml" $a
    rc_is 1
    err_has "the --params file"
    err_has "refusing to overwrite an input"
    same "$T/p.yaml" "$T/p.orig" "the --params file changed"
    out_empty
    end
done

# an empty output name: a usage error at option parsing (nothing runs)
for o in -o --summary --events; do
    begin "empty_name_$o"
    hs run "$T/m.yaml" "$o" ''
    rc_is 1
    err_has "needs a file name, got ''"
    out_empty
    end
done
begin empty_name_equals
hs run "$T/m.yaml" --output= --progress
rc_is 1
err_has "--output needs a file name"
err_lacks "%"
end

begin refused_relative_paths
(cd "$T" && $TO "$H" run m.yaml -o ./m.yaml >"$T/out" 2>"$T/err")
rc=$?
rc_is 1
same "$T/m.yaml" "$T/m.orig" "the model file changed"
end

begin refused_summary_is_stdout
echo precious >"$T/s.csv"
$TO "$H" run "$T/m.yaml" --summary "$T/s.csv" >"$T/s.csv" 2>"$T/err"
rc=$?
rc_is 1
err_has "are the same file"
end

begin refused_stdin_model_is_o
cp "$PEND" "$T/in.yaml"
$TO "$H" run - -o "$T/in.yaml" <"$T/in.yaml" >"$T/out" 2>"$T/err"
rc=$?
rc_is 1
same "$T/in.yaml" "$PEND" "the model read from stdin was overwritten"
end

begin dev_null_twice_is_fine
hs run "$T/m.yaml" --t-end 0.1 -q -o /dev/null --summary /dev/null
rc_is 0
end

# failing before the first row: an existing -o file untouched, none created
cat >"$T/huge.yaml" <<'EOY'
coordinates: [x]
mass: [1e308]
initial: {q: {x: 0}, v: {x: 10}}
simulate: {t_end: 1, dt: 0.5}
EOY
cat >"$T/reject.yaml" <<'EOY'
coordinates: [x, y]
mass: [1, 1]
constraints: {rod: x^2 + y^2 - 1}
initial: {q: {x: 0.7, y: -0.8}}
consistency: {mode: reject}
simulate: {t_end: 1}
EOY
printf 'coordinates: [x]\nmass: [1]\ninitial: {q: {x: 0}}\n' >"$T/no_t_end.yaml"
printf 'coordinates: [x]\nmass: [1, 2]\n' >"$T/bad.yaml"
for c in huge:4 reject:3 no_t_end:1 bad:2; do
    begin "early_failure_keeps_output_${c%%:*}"
    echo "precious data" >"$T/keep.csv"
    cp "$T/keep.csv" "$T/keep.orig"
    hs run "$T/${c%%:*}.yaml" -o "$T/keep.csv" --summary "$T/new-summary.csv"
    rc_is "${c#*:}"
    same "$T/keep.csv" "$T/keep.orig" "the existing -o file changed"
    hs run "$T/${c%%:*}.yaml" -o "$T/never.csv"
    absent "$T/never.csv" "a failed run created its -o file"
    end
done

begin summary_written_for_a_run_that_started
hs run "$T/huge.yaml" -o "$T/never.csv" --summary "$T/s4.csv"
rc_is 4
sed -n 2p "$T/s4.csv" | grep -q ',4,0,.*column .E. is inf' || no "no exit-4 summary row"
end

begin summary_not_created_when_nothing_ran
rm -f "$T/new-summary.csv"
hs run "$T/bad.yaml" --summary "$T/new-summary.csv"
rc_is 2
absent "$T/new-summary.csv" "a model error created the summary"
end

begin unwritable_summary_found_before_the_run
hs run "$T/long.yaml" -o "$T/never.csv" --summary "$T/no/such/dir/s.csv"
rc_is 1
err_has "cannot write summary"
absent "$T/never.csv" "the run started"
hs run "$T/long.yaml" --summary "$T/sub"
rc_is 1
err_has "Is a directory"
out_empty
end

begin output_keeps_inode
hs run "$PEND" --t-end 0.1 -q -o "$T/tail.csv"
ino1=$(ls -i "$T/tail.csv" | cut -d' ' -f1)
hs run "$PEND" --t-end 0.2 -q -o "$T/tail.csv"
ino2=$(ls -i "$T/tail.csv" | cut -d' ' -f1)
[ "$ino1" = "$ino2" ] || no "the CSV was replaced (inode $ino1 -> $ino2)"
[ "$(wc -l <"$T/tail.csv")" = 22 ] || no "the second run's rows are not all there"
(cd "$T" && ln -s tail.csv tail-link.csv)
hs run "$PEND" --t-end 0.1 -q -o "$T/tail-link.csv"
[ -L "$T/tail-link.csv" ] || no "the symbolic link was replaced"
[ "$(wc -l <"$T/tail.csv")" = 12 ] || no "the run did not write through the link"

end

# ---- summary fields -------------------------------------------------------------

begin summary_path_rfc4180
weird="$T/a\"b,c
d.yaml"
cp "$PEND" "$weird"
hs run "$weird" --t-end 0.01 --dt 0.01 -q -o /dev/null --summary "$T/ws.csv"
rc_is 0
# the row: "<path with the quote doubled>",0,...  over two lines (the line
# break stays inside the quoted field)
want=$(printf '"%s/a""b,c' "$T")
[ "$(sed -n 2p "$T/ws.csv")" = "$want" ] || no "field starts '$(sed -n 2p "$T/ws.csv")'"
sed -n 3p "$T/ws.csv" | grep -q '^d.yaml",0,' || no "field ends '$(sed -n 3p "$T/ws.csv")'"
if command -v python3 >/dev/null 2>&1; then
    python3 - "$T/ws.csv" "$weird" <<'EOP' || no "python's csv reads another path"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline='')))
sys.exit(not (len(rows) == 2 and len(rows[0]) == len(rows[1]) == 15 and rows[1][0] == sys.argv[2]))
EOP
fi
end

# ---- names ------------------------------------------------------------------------

begin eval_refuses_binding_pi
hs eval pi pi=3
rc_is 1
err_has "'pi' cannot be bound: it is the constant 3.14159"
out_empty
end

begin eval_refuses_binding_function
hs eval 'sin(x)' sin=2 x=1
rc_is 1
err_has "'sin' cannot be bound: 'sin' is a function"
out_empty
end

begin eval_binds_variables
hs eval 'x*t' x=2 t=3
rc_is 0
[ "$(cat "$T/out")" = 6 ] || no "eval x*t gave $(cat "$T/out")"
end

begin set_last_wins
hs run "$PEND" --set l=1 --set l=2 --t-end 0.01 --dt 0.01 -q --columns t,x
rc_is 0
cp "$T/out" "$T/twice.csv"
hs run "$PEND" --set l=2 --t-end 0.01 --dt 0.01 -q --columns t,x
same "$T/twice.csv" "$T/out" "--set l=1 --set l=2 differs from --set l=2"
awk -F, 'NR == 2 { d = $2 - 2 * sin(0.5); exit !(d < 1e-12 && d > -1e-12) }' "$T/out" ||
    no "x(0) is not 2 sin(0.5)"
end

# ---- projection report ----------------------------------------------------------------

begin quiet_still_reports_projection
hs run "$SLIDER" --t-end 0.02 --dt 0.01 -q
rc_is 0
err_has "initial data projected onto the constraints"
hs run "$SLIDER" --t-end 0.02 --dt 0.01 -q --quiet-projection
rc_is 0
err_empty
end

# ---- time and memory limits on hostile files ---------------------------------------------

gen_chain() {   # gen_chain KIND(parameters|define) N FILE
    awk -v kind="$1" -v n="$2" 'BEGIN {
        p = kind == "parameters" ? "p" : "d"
        print kind ":"
        for (i = 0; i < n - 1; i++) printf "  %s%d: %s%d\n", p, i, p, i + 1
        printf "  %s%d: %s\n", p, n - 1, kind == "parameters" ? "1" : "x"
        print "coordinates: [x]\nmass: [1]"
        printf "potential: %s0*x^2\n", p
        print "initial: {q: {x: 1}}\nsimulate: {t_end: 1, dt: 0.5}" }' >"$3"
}
gen_chain parameters 1500 "$T/pchain1500.yaml"
gen_chain parameters 100000 "$T/pchain100k.yaml"
gen_chain define 2000 "$T/dchain2000.yaml"
gen_chain define 100000 "$T/dchain100k.yaml"
awk 'BEGIN { print "parameters:"; for (i = 0; i < 100000; i++) printf "  p%d: %d\n", i, i
    print "  p5: 1\ncoordinates: [x]\nmass: [1]\ninitial: {q: {x: 1}}" }' >"$T/dupkey.yaml"
gen_kinetic() {   # gen_kinetic N FILE: T = sum q_i'^2/2 over N coordinates
awk -v n="$1" 'BEGIN { s = "coordinates: ["
    for (i = 0; i < n; i++) s = s (i ? ", " : "") "q" i; print s "]"
    s = "kinetic: 0.5*("; for (i = 0; i < n; i++) s = s (i ? " + " : "") "q" i "'"'"'^2"; print s ")"
    s = "potential: "; for (i = 0; i < n; i++) s = s (i ? " + " : "") "q" i "^2"; print s
    s = "initial: {q: ["; for (i = 0; i < n; i++) s = s (i ? ", " : "") "1"; print s "]}"
    print "simulate: {t_end: 0.01, dt: 0.005}" }' >"$2"
}
gen_kinetic 300 "$T/kin300.yaml"
gen_kinetic 1000 "$T/kin1000.yaml"

# limited WANT_RC FILE [MESSAGE]: holosim run FILE within 10 s and 1 GB
limited() {
    begin "limits_$(basename "$2" .yaml)"
    if [ "$SAN" = 1 ]; then
        $TO "$H" run "$2" -q >"$T/out" 2>"$T/err"
    else
        (ulimit -v 1048576; exec $TO "$H" run "$2" -q) >"$T/out" 2>"$T/err"
    fi
    rc=$?
    rc_is "$1"
    [ -n "${3:-}" ] && err_has "$3"
    end
}
limited 0 "$T/pchain1500.yaml"
limited 0 "$T/pchain100k.yaml"
limited 0 "$T/dchain2000.yaml"
limited 0 "$T/dchain100k.yaml"
limited 2 "$T/dupkey.yaml" "dupkey.yaml:100002:3: error: duplicate key 'p5' in 'parameters'"
limited 0 "$T/kin300.yaml"
limited 0 "$T/kin1000.yaml"
sed 's/^  p99999: 1$/  p99999: p0/' "$T/pchain100k.yaml" >"$T/pcycle100k.yaml"
limited 2 "$T/pcycle100k.yaml" "pcycle100k.yaml:2:3: error: parameter 'p0' depends on itself"

# ---- many events: locating them is linear in their number (issue 30) -------
# N record events at t = 10 i/(N+1): each row at its time (closed form), and
# 4N events cost about 4 times N's CPU time (it was 13 times: every function
# evaluated at every step of every root finder); the bound 8 leaves room
# for noise, quadratic cost gives 16
evmodel() {
    {
        printf 'coordinates: [x, y]\nmass: [1, 1]\npotential: 9.81*y\n'
        printf 'constraints: {rod: x^2 + y^2 - 1}\ninitial: {q: {x: 0.6, y: -0.8}}\n'
        printf 'simulate: {t_end: 10, dt: 0.1}\nevents:\n'
        awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++)
            printf "  e%d: {when: t - 10*%d/%d, action: record}\n", i, i, n + 1 }'
    } >"$T/ev$1.yaml"
}
cputime() {     # cputime ARGS...: holosim's user + system seconds, or nothing
    /usr/bin/time -f '%U %S' -o "$T/time" "$H" "$@" >/dev/null 2>"$T/err" || return 1
    awk '{ print $1 + $2 }' "$T/time"
}
begin events_linear
evmodel 2500
evmodel 10000
if [ -x /usr/bin/time ]; then
    c1=$(cputime run "$T/ev2500.yaml" -q -o /dev/null --events "$T/ev2500.csv" --no-native)
    c4=$(cputime run "$T/ev10000.yaml" -q -o /dev/null --events "$T/ev10000.csv" --no-native)
    [ -n "$c1" ] && [ -n "$c4" ] || no "the runs failed"
    [ "$(wc -l <"$T/ev10000.csv")" = 10001 ] || no "not 10000 event rows"
    awk -F, -v n=10000 'NR > 1 { i = substr($1, 2) + 0; want = 10 * i / (n + 1)
        d = $2 - want; if (d < 0) d = -d; if (d > 1e-12 * want) bad++ }
        END { exit bad > 0 }' "$T/ev10000.csv" || no "an event row is not at its time"
    awk -v a="$c1" -v b="$c4" 'BEGIN { exit !(b <= 8 * (a > 0.05 ? a : 0.05)) }' ||
        no "4x the events cost ${c4}s against ${c1}s"
else
    echo "cli_hostile.sh: /usr/bin/time missing: events_linear only partly run"
fi
end

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
