#!/bin/sh
# Hostile inputs, round four (issue 42), POSIX sh:
#
#   HOLOSIM=bin/holosim sh tests/cli_hostile4.sh       (make check runs it)
#
#   rewrites    a spring end written inline, longer than any fixed buffer:
#               the same run as the short form (the anchor does not move)
#   expansion   small files that expand without bound (families of sums,
#               sums of sums, nested lists): refused as they grow, in
#               seconds under 1 GiB, naming the index values; a sum of
#               trigonometric terms no longer quadratic in its terms
#   outputs     every output path of every command against every input
#               path (the model, params files, stdin, a batch points file),
#               through links: refused with exit 1, every file byte-identical;
#               scripts/plot -o onto a CSV, the --model file or stdin too
#   batch       points files: a NUL byte, a parameter twice in the header
#               (positioned errors, no point run), 5 MB of blank lines
#               under 100 columns (within 1 GiB)
#   sweep       --command modes with a parameter named modes_omega
#   t0          a negative ambient mass in a dense embedding (its metric
#               positive definite at t0), a body's mass 0 or < 0, an
#               inertia not symmetric or not positive definite: exit 2,
#               positioned, before any run; two independent constraints
#               0.9e-3 rad apart at rest under gravity: a run, not a
#               "lock-up" with "reciprocal condition 2e-07 < 1e-13"
#   messages    RATTLE on a massless coordinate, on a constant full mass
#               matrix, on redundant constraints that disagree: what is
#               wrong, not "non-finite input value", "masses are not
#               constant" or "choose a smaller --step"
#   ffmpeg      -o -x.mp4, x:y.mp4, tcp:...: ffmpeg gets file:NAME; a
#               reader that exits: exit 1, no temporary file, no output
#   animate     --speed 1e-6: rows for the frames drawn only (in seconds);
#               SIGINT while a GIF is written (run and CSV mode): 130, no
#               output, no temporary file; nan, inf, 1e999 in a hand-made
#               CSV: positioned errors; the page's title and note as HTML
#               entities, not JS escapes
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

# ---- the expansion's size, bounded as it grows ------------------------------

case $H in */build/san/*) SAN=1 ;; *) SAN=0 ;; esac
limited() {   # limited FILE: check FILE under 1 GiB (not under ASan) in 20 s
    if [ "$SAN" = 0 ]; then
        (ulimit -v 1048576; $TO "$H" check "$1" >"$T/out" 2>"$T/err")
    else
        $TO "$H" check "$1" >"$T/out" 2>"$T/err"
    fi
}
expand_case() {   # expand_case NAME BODY MESSAGE
    begin "expansion_$1"
    printf 'coordinates: [x, y]\nmass: [1, 1]\n%b\ninitial: {q: {x: 0, y: 0}}\n' "$2" >"$T/big.yaml"
    limited "$T/big.yaml"
    rc=$?
    rc_is 2
    err_has "$3"
    end
}
expand_case family_of_sums 'define:\n  e[k=1..100000]: sum(i=1..1000, x*i*k)' \
    'big.yaml:4:19: error: the families expand to more than 1048576 pieces of text (names, numbers, operators written out) (at k = 175, i = 734)'
expand_case sum_of_sums 'potential: sum(i=1..3000, sum(j=1..3000, i*j*x))' \
    'big.yaml:3:12: error: the families expand to more than 1048576 pieces of text (names, numbers, operators written out) (at i = 50, j = 2776)'
expand_case text 'define:\n  e[k=1..100]: sum(i=1..100000, sin(x*abcdefghijklmnopqrstuvwxyz))' \
    'big.yaml:4:16: error: the families expand to more than 4 MiB of text (at k = 2, i = 7547)'
expand_case nodes 'define:\n  c[i=1..10000000]: [[[[[[[[]]]]]]]]' \
    'big.yaml:4:26: error: the families expand to more than 1000000 YAML nodes (at i = 111111)'
# D(...) written out past the limit: the family's index of the output
expand_case D_of_sums 'parameters: {N: 300}\noutputs:\n  o[i=1..N]: D(D(sum(j=1..N, sin(x*j*i))))' \
    'big.yaml:5:14: error: the families expand to more than 4 MiB of text (at i = 157)'
# a sum of 8000 trigonometric terms (the identities' partner search was
# quadratic in the terms: 25000 of them took 9 s)
begin expansion_trig_sum_linear
printf 'coordinates: [x, y]\nmass: [1, 1]\npotential: sum(i=1..8000, sin(x*i+y)^2*cos(y*i))\ninitial: {q: {x: 0, y: 0}}\n' >"$T/trig.yaml"
limited "$T/trig.yaml"
rc=$?
rc_is 0
end

# the chain in angles at N = 4000 (under the 5000 limit): its defines, each
# the one before plus a term, hold N^2 operands: 55 s and 1.05 GB before
# "expression too large"; now refused at the define that passed the limit
begin expansion_chain_angles_4000
cp "$ROOT/models/chain_angles.yaml" "$T/ca.yaml"
(ulimit -t 10; [ "$SAN" = 0 ] && ulimit -v 1048576; exec "$H" check "$T/ca.yaml" --set N=4000 \
    >"$T/out" 2>"$T/err")
rc=$?
rc_is 2
err_has "ca.yaml:18:21: error: expression too large: the expressions hold more than 4194304 operands (at i = 2044)"
end
begin expansion_chain_angles_1000_runs
hs run "$T/ca.yaml" --set N=1000 --t-end 0.01 --dt 0.01 -q
rc_is 0
end

# ---- outputs against inputs (one check: src/cli/files.c) --------------------

cp "$ROOT/models/pendulum.yaml" "$T/m.yaml"
cp "$T/m.yaml" "$T/m.orig"
printf 'l: 1.5\n' >"$T/par.yaml"
cp "$T/par.yaml" "$T/par.orig"
(cd "$T" && ln m.yaml mhard.yaml && ln -s par.yaml plink.yaml && ln -s par.yaml plink.html)

# kept NAME: every input byte-identical, no CSV on stdout
kept() {
    same "$T/m.yaml" "$T/m.orig" "the model changed"
    same "$T/par.yaml" "$T/par.orig" "the params file changed"
    out_empty
    cp "$T/m.orig" "$T/m.yaml"      # (into the same inode: the links stay)
    cp "$T/par.orig" "$T/par.yaml"
}

begin run_params_stdin_is_o
$TO "$H" run "$T/m.yaml" --params - -o "$T/par.yaml" <"$T/par.yaml" >"$T/out" 2>"$T/err"
rc=$?
rc_is 1
err_has "-o '$T/par.yaml' and the --params file '-' are the same file"
kept
end

for a in "--summary $T/m.yaml" "--events $T/m.yaml" "--summary $T/mhard.yaml" \
         "--events $T/plink.yaml --params $T/par.yaml" "-o $T/plink.html --params $T/par.yaml"; do
    begin "animate_refused_$(echo "$a" | sed 's|'"$T"'/||g; s/[^a-z]/_/g')"
    case $a in -o*) hs animate "$T/m.yaml" -q $a ;; *) hs animate "$T/m.yaml" -o "$T/a.html" -q $a ;; esac
    rc_is 1
    err_has "are the same file: refusing to overwrite"
    kept
    [ -e "$T/a.html" ] && no "a refused animate wrote its page"
    end
done

begin animate_csv_is_o
hs run "$T/m.yaml" -q -o "$T/run.csv" --t-end 0.1
cp "$T/run.csv" "$T/run.orig"
ln "$T/run.csv" "$T/run.html"
hs animate "$T/m.yaml" "$T/run.csv" -o "$T/run.html" -q
rc_is 1
err_has "-o '$T/run.html' and the CSV '$T/run.csv' are the same file"
same "$T/run.csv" "$T/run.orig" "the CSV changed"
end

begin animate_o_twice_last_wins
hs animate "$T/m.yaml" -o "$T/a.html" -o "$T/b.html" -q --t-end 0.1
rc_is 0
[ -s "$T/b.html" ] || no "no page in the last -o"
[ -e "$T/a.html" ] && no "the first -o was written"
end

# --input tables are inputs too (run -o and --summary, animate --summary
# overwrote one; linearize -o compared only the model and the tables, not
# the --params files)
cp "$ROOT/models/cart_pole.yaml" "$T/cp.yaml"
printf 't,F\n0,1\n1,2\n' >"$T/tab.csv"
cp "$T/tab.csv" "$T/tab.orig"
(cd "$T" && ln -s tab.csv tablink.csv && ln par.yaml parhard.csv)
for a in "run -q -o $T/tab.csv" "run -q --summary $T/tablink.csv" \
         "animate -q -o $T/a.html --summary $T/tab.csv" "linearize -o $T/tablink.csv"; do
    begin "input_table_refused_$(echo "$a" | sed 's|'"$T"'/||g; s/[^a-z]/_/g')"
    set -- $a
    c=$1
    shift
    hs $c "$T/cp.yaml" --input F="$T/tab.csv" "$@"
    rc_is 1
    err_has "and the --input table '$T/tab.csv' are the same file: refusing to overwrite an input"
    same "$T/tab.csv" "$T/tab.orig" "the table changed"
    end
done
begin linearize_o_params_hard_link
hs linearize "$T/cp.yaml" --params "$T/par.yaml" -o "$T/parhard.csv"
rc_is 1
err_has "-o '$T/parhard.csv' and the --params file '$T/par.yaml' are the same file"
same "$T/par.yaml" "$T/par.orig" "the params file changed"
end

mkdir "$T/od" "$T/st"
begin batch_points_in_outdir
printf 'name\tl\np1\t1\np2\t2\n' >"$T/od/p1.csv"
cp "$T/od/p1.csv" "$T/pts.orig"
hs batch "$T/m.yaml" --points "$T/od/p1.csv" --outdir "$T/od" --status-dir "$T/st"
rc_is 1
err_has "a point's CSV '$T/od/p1.csv' and the --points file '$T/od/p1.csv' are the same file"
same "$T/od/p1.csv" "$T/pts.orig" "the points file changed"
[ -e "$T/st/p2.status" ] && no "a point ran"
end

begin batch_status_is_model_link
ln "$T/m.yaml" "$T/st/p2.status"
hs batch "$T/m.yaml" --points "$T/pts.orig" --outdir "$T/od" --status-dir "$T/st"
rc_is 1
err_has "the status of a point '$T/st/p2.status' and the model file"
kept
rm -f "$T/st/p2.status"
end

# DIR/m.yaml.csv with DIR 4088 bytes long: cut at 4095 it was DIR/m.yaml
begin batch_long_path_not_cut
(cd "$T" && printf 'name\tl\nm.yaml\t1\n' >cut.tsv &&
 $TO "$H" batch m.yaml --points cut.tsv --outdir "$(awk 'BEGIN { s = "."; for (i = 0; i < 2043; i++) s = s "/."; print s "/" }')" \
     --status-dir st >"$T/out.txt" 2>"$T/err")
rc=$?
rc_is 1
same "$T/m.yaml" "$T/m.orig" "the model was replaced by a point's CSV"
grep -q 'File name too long' "$T/st/m.yaml.status" || no "the status does not say the name is too long"
end

# scripts/plot -o onto an input: refused before gnuplot is looked for
printf 't,x\n0,1\n1,2\n' >"$T/in.csv"
cp "$T/in.csv" "$T/in.orig"
(cd "$T" && ln in.csv inhard.csv && ln -s in.csv inlink.csv)
plot_refused() {   # plot_refused NAME WHAT ARGS... (stdin: in.csv)
    begin "plot_refused_$1"
    w=$2
    shift 2
    bash "$ROOT/scripts/plot" "$@" <"$T/in.csv" >"$T/out" 2>"$T/err"
    rc=$?
    rc_is 1
    err_has "are the same file: refusing to overwrite an input with the PNG"
    err_has "$w"
    same "$T/in.csv" "$T/in.orig" "the CSV changed"
    same "$T/m.yaml" "$T/m.orig" "the model changed"
    end
}
plot_refused input "the input '$T/in.csv'" "$T/in.csv" -o "$T/in.csv"
plot_refused hard_link "the input '$T/in.csv'" "$T/in.csv" -o "$T/inhard.csv"
plot_refused symlink "the input '$T/in.csv'" "$T/in.csv" --output="$T/inlink.csv"
plot_refused stdin "standard input" -o "$T/inhard.csv"
plot_refused model "the --model file" "$T/in.csv" --model "$T/m.yaml" -o "$T/mhard.yaml"

# ---- ffmpeg: names passed as files, a reader that goes away ---------------
# A stand-in ffmpeg on the PATH logs its arguments, reads the frames and
# writes its last argument, which must be file:NAME (never an option, a URL
# or a shell word); FAKE_MODE=quit exits at once without reading.
mkdir "$T/bin" "$T/mp4"
cat >"$T/bin/ffmpeg" <<'EOS'
#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done >"$FAKE_LOG"
for a in "$@"; do last=$a; done
[ "${FAKE_MODE:-ok}" = quit ] && exit 1
cat >/dev/null
case $last in file:*) printf 'ftypfake' >"${last#file:}" ;; *) exit 1 ;; esac
EOS
chmod +x "$T/bin/ffmpeg"
mp4() {   # mp4 NAME OUT [MODE]: animate into OUT (relative to $T/mp4)
    begin "mp4_$1"
    (cd "$T/mp4" && PATH="$T/bin:$PATH" FAKE_LOG="$T/ffmpeg.log" FAKE_MODE=${3:-ok} \
        $TO "$H" animate "$T/m.yaml" -o "$2" --t-end 0.5 -q >"$T/out" 2>"$T/err")
    rc=$?
    ls -a "$T/mp4" | grep -q 'tmp' && no "a temporary file was left"
}
for n in -x.mp4 x:y.mp4 tcp:127.0.0.1:9999.mp4 "a'b c.mp4"; do
    mp4 "name_$(echo "$n" | sed 's/[^a-z0-9]/_/g')" "$n"
    rc_is 0
    [ "$(tail -n 1 "$T/ffmpeg.log" | cut -c1-5)" = file: ] || no "ffmpeg's output is not file:NAME"
    [ "$(cat "$T/mp4/$n")" = ftypfake ] || no "the video is not under its name"
    [ "$(grep -c . "$T/ffmpeg.log")" -gt 20 ] || no "ffmpeg got too few arguments"
    end
    rm -f -- "$T/mp4/$n"
done
# a path whose shell quoting was over 4200 bytes (cut before, exit 0 with
# an empty output): 1000 folders named '
deep=$(awk 'BEGIN { for (i = 0; i < 1000; i++) printf "\047/"; }')
mkdir -p "$T/mp4/$deep"
mp4 deep_quotes "$deep/v.mp4"
rc_is 0
[ "$(cat "$T/mp4/$deep/v.mp4")" = ftypfake ] || no "the video is not under its name"
end
mp4 reader_goes_away q.mp4 quit
rc_is 1
err_has "cannot write 'q.mp4' (ffmpeg failed)"
[ -e "$T/mp4/q.mp4" ] && no "an output was left"
end

# ---- animate: rows for the frames drawn, interrupts, odd data ---------------
mkdir "$T/an"
# (rows every 1.7e-8 s were 6e8 rows: at most 2 per frame now, a page's cap)
for o in "s.gif --frames 50:1001" "s.gif --frames 2000 --size 64x64:4001" "s.html:300001"; do
    most=${o#*:}
    o=${o%:*}
    begin "animate_speed_tiny_$(echo "$o" | sed 's/[^a-z0-9]/_/g')"
    (cd "$T/an" && { [ "$SAN" = 1 ] || ulimit -v 1048576; } && $TO "$H" animate "$T/m.yaml" -o $o --speed 1e-6 \
        >"$T/out" 2>"$T/err")
    rc=$?
    rc_is 0
    rows=$(sed -n 's/.* \([0-9]*\) rows to .*/\1/p' "$T/err")
    [ -n "$rows" ] && [ "$rows" -le "$most" ] || no "$rows rows, want at most $most"
    [ -s "$T/an/${o%% *}" ] || no "no output"
    ls -a "$T/an" | grep -q tmp && no "a temporary file was left"
    rm -f "$T/an/"*
    end
done

hs run "$T/m.yaml" -q -o "$T/an.csv"
for mode in run csv; do
    begin "animate_interrupted_gif_$mode"
    case $mode in run) set -- ;; csv) set -- "$T/an.csv" ;; esac
    (cd "$T/an" && exec "$H" animate "$T/m.yaml" "$@" -o g.gif --frames 20000 -q \
        >"$T/out" 2>"$T/err") &
    pid=$!
    sleep 1
    kill -INT $pid
    wait $pid
    rc=$?
    rc_is 130
    err_has "holosim: interrupted (SIGINT): 'g.gif' not written"
    [ -n "$(ls -A "$T/an")" ] && no "left $(ls -A "$T/an")"
    end
done

for v in nan -inf 1e999; do
    begin "animate_csv_not_finite_$(echo "$v" | sed 's/[^a-z0-9]/_/g')"
    printf 't,x,y\n0,0.1,-1\n0.5,0.1,%s\n1,0.2,-1\n' "$v" >"$T/nf.csv"
    hs animate "$T/m.yaml" "$T/nf.csv" -o "$T/an/nf.html" -q
    rc_is 2
    err_has "nf.csv:3:9: error: field 3 of line 3 is not a finite number ('$v')"
    [ -e "$T/an/nf.html" ] && no "a page was written"
    end
done

begin animate_title_html_entities
sed "s/^name: .*/name: \"Newton's cradle \& <friends>\"/" "$T/m.yaml" >"$T/nm.yaml"
grep -q "^name: \"Newton" "$T/nm.yaml" || printf 'name: "Newton'"'"'s cradle & <friends>"\n' >>"$T/nm.yaml"
hs animate "$T/nm.yaml" -o "$T/an/t.html" -q --t-end 0.1
rc_is 0
grep -q "<title>Newton&#39;s cradle &amp; &lt;friends&gt; (holosim animate)</title>" "$T/an/t.html" ||
    no "title $(grep -o '<title>.*</title>' "$T/an/t.html")"
grep -q '<div id="note">Newton&#39;s cradle &amp; &lt;friends&gt;: ' "$T/an/t.html" || no "the note"
grep -q 'x27\|x26' "$T/an/t.html" && grep -o '<title>.*</title>' "$T/an/t.html" | grep -q 'x2' && no "JS escapes in the title"
rm -f "$T/an/t.html"
end

# ---- checks at t0 ---------------------------------------------------------------
t0_refused() {   # t0_refused NAME FILE WHERE MESSAGE [ARGS...]
    begin "t0_$1"
    f=$2 w=$3 msg=$4
    shift 4
    hs run "$f" -q "$@"
    rc_is 2
    err_has "$w: error: $msg"
    out_empty
    end
}
sed 's/^  x\[i=1..N\]: m$/  x[i=1..N]: if(i == 2, -0.1, m)/' "$ROOT/models/chain_angles.yaml" >"$T/ca_neg.yaml"
t0_refused ambient_negative_dense "$T/ca_neg.yaml" ca_neg.yaml:24:14 \
    "the ambient mass of 'x_2' is -0.1: an ambient mass must be > 0 (or 0 on a point that only relays others) (at i = 2)" --set N=3
t0_refused ambient_negative_structured "$T/ca_neg.yaml" ca_neg.yaml:24:14 \
    "the ambient mass of 'x_2' is -0.1" --set N=32
cp "$ROOT/models/heavy_top.yaml" "$T/top.yaml"
t0_refused body_mass_negative "$T/top.yaml" top.yaml:21:11 "the mass of body 'top' is -1: it must be > 0" --set m=-1
t0_refused body_mass_zero "$T/top.yaml" top.yaml:21:11 "the mass of body 'top' is 0: it must be > 0" --set m=0
t0_refused body_inertia_negative "$T/top.yaml" top.yaml:22:14 \
    "the inertia of body 'top' is not positive definite (a moment is not > 0)" --set C=-0.08
sed 's/inertia: \[A0, A0, C\]/inertia: [[A0, 0.01, 0], [0, A0, 0], [0, 0, C]]/' "$T/top.yaml" >"$T/top_asym.yaml"
t0_refused body_inertia_asymmetric "$T/top_asym.yaml" top_asym.yaml:22:31 \
    "the inertia of body 'top' is not symmetric: entry (2,1) is 0 but (1,2) is 0.01; give both the same value"
sed 's/inertia: \[A0, A0, C\]/inertia: [[A0, l, 0], [l, A0, 0], [0, 0, C]]/' "$T/top.yaml" >"$T/top_indef.yaml"
t0_refused body_inertia_indefinite "$T/top_indef.yaml" top_indef.yaml:22:14 \
    "the inertia of body 'top' is not positive definite (a leading minor is not > 0)"

# a point on a sphere and a plane 0.9e-3 rad from tangent to it: a circle
# of radius 9e-4, at rest under gravity; the residual of its accelerations
# (1e-11) was measured against what was left of the terms (1e-11), not
# the forces of 10 that cancel in them
begin t0_nearly_dependent_not_lockup
cat >"$T/near.yaml" <<'EOY'
parameters: {d: 0.0009}
coordinates: [x, y, z]
mass: [1, 1, 1]
constraints:
  sphere: x^2 + y^2 + z^2 - 1
  plane: x - cos(d)
potential: 9.81*(y + z)
initial: {q: {x: cos(d), y: sin(d), z: 0}}
simulate: {t_end: 0.01, dt: 0.001}
EOY
hs run "$T/near.yaml" -q --columns t,x,y,z
rc_is 0
grep -q "lock-up\|< 1e-13" "$T/err" && no "refused as a lock-up"
[ "$(grep -c . "$T/out")" = 12 ] || no "$(grep -c . "$T/out") lines"
# on the circle at the end: x^2 + y^2 + z^2 = 1 and x = cos(d)
tail -n 1 "$T/out" | awk -F, '{ r = $2 * $2 + $3 * $3 + $4 * $4 - 1; c = $2 - cos(0.0009)
    exit !(r < 1e-9 && r > -1e-9 && c < 1e-9 && c > -1e-9) }' || no "off the constraints"
end

# ---- messages ----------------------------------------------------------------
printf 'coordinates: [x, y, u]\nmass: [1, 1, 0]\nconstraints:\n  rod: x^2 + y^2 - 1\n  c2: u - x\npotential: 9.81*y\ninitial: {q: {x: 1, y: 0, u: 1}}\nsimulate: {t_end: 0.1, dt: 0.01}\n' >"$T/massless.yaml"
begin rattle_massless
hs run "$T/massless.yaml" --method rattle --step 0.001 -q
rc_is 1
err_has "method 'rattle' needs a constant mass matrix and forces of (t, q) alone (RATTLE, explicit in the forces): coordinate 'u' is massless (RATTLE divides by every mass); use dop853"
grep -q "non-finite input" "$T/err" && no "non-finite input value"
out_empty
end
printf 'coordinates: [x, y]\nmass: [[2, 0.5], [0.5, 1]]\nconstraints:\n  rod: x^2 + y^2 - 1\npotential: 9.81*y\ninitial: {q: {x: 1, y: 0}}\nsimulate: {t_end: 0.1, dt: 0.01}\n' >"$T/fullmass.yaml"
begin rattle_constant_full_mass
hs run "$T/fullmass.yaml" --method rattle --step 0.001 -q
rc_is 1
err_has "its mass matrix is constant but not diagonal (RATTLE here takes constant diagonal masses, written as a list)"
grep -q "not constant" "$T/err" && no "called constant masses not constant"
end
# a circle and a parabola tangent at (1, 0): redundant there, disagreeing
# beyond first order, so no step size helps
printf 'coordinates: [x, y]\nmass: [1, 1]\nconstraints:\n  rod: x^2 + y^2 - 1\n  par: x - 1 + y^2\npotential: 9.81*x\ninitial: {q: {x: 1, y: 0}, v: {y: 1}}\nsimulate: {t_end: 0.1, dt: 0.01}\n' >"$T/redundant.yaml"
for st in 0.01 0.0001; do
    begin "rattle_redundant_disagree_$st"
    hs run "$T/redundant.yaml" --method rattle --step $st -q -o "$T/red.csv"
    rc_is 4
    err_has "G_q had rank 1 of 2 at the step's start (solved on its 1 independent directions); the redundant constraints disagree off their first order (no step size helps then)"
    grep -q "smaller --step" "$T/err" && no "advises a smaller --step"
    end
done

# ---- sweep --command modes: a parameter named like a prefixed column -----
# omega and modes_omega both swept: the eigenvalue's omega column becomes
# modes_modes_omega (one name each), its value the closed form
# sqrt(omega^2 - g^2/(omega^2 R^2)) of models/hoop_equilibrium.yaml
begin sweep_modes_column_clash
sed 's/^  theta0: 1.0 .*/  theta0: 1.0\n  modes_omega: 2/' "$ROOT/models/hoop_equilibrium.yaml" >"$T/hoopm.yaml"
HOLOSIM=$H $TO bash "$ROOT/scripts/sweep" "$T/hoopm.yaml" --command modes -o "$T/sw" \
    omega=4,5 modes_omega=1 >"$T/out" 2>"$T/err"
rc=$?
rc_is 0
[ "$(head -n 1 "$T/sw/summary.csv")" = \
  "omega,modes_omega,mode,sigma,modes_modes_omega,d_theta,im_d_theta,exit,message,file" ] ||
    no "header $(head -n 1 "$T/sw/summary.csv")"
awk -F, 'NR > 1 { w = $1; want = sqrt(w * w - 9.81 * 9.81 / (w * w)); d = $5 - want
    if (d < 0) d = -d; if (d > 1e-9 || $2 != 1) bad = 1 } END { exit bad || NR != 3 }' \
    "$T/sw/summary.csv" || no "the mode's frequency is not the closed form"
end

# a run sweep: parameters named exit and file beside the summary's own
begin sweep_run_column_clash
sed 's/^  g: 9.81.*/  g: 9.81\n  exit: 1\n  file: 2/' "$T/m.yaml" >"$T/pe.yaml"
HOLOSIM=$H $TO bash "$ROOT/scripts/sweep" "$T/pe.yaml" -o "$T/sw2" exit=1,2 file=3 >"$T/out" 2>"$T/err"
rc=$?
rc_is 0
[ "$(head -n 1 "$T/sw2/summary.csv")" = \
  "exit,file,run_exit,steps,rhs_evals,rows,t_reached,max_G,max_Gdot,max_energy_balance,max_power_residual,wall_s,impacts,transitions,t_rest,message,run_file" ] ||
    no "header $(head -n 1 "$T/sw2/summary.csv")"
awk -F, 'NR > 1 && ($3 != 0 || $17 !~ /\.csv$/) { bad = 1 } END { exit bad || NR != 3 }' \
    "$T/sw2/summary.csv" || no "the rows"
end

# a sweep's inputs among the files it writes in DIR: the model named
# DIR/summary.csv (replaced by the summary), a --params file hard-linked
# as a point's CSV; refused before anything is written or deleted
mkdir "$T/swi"
cp "$T/m.yaml" "$T/swi/summary.csv"
begin sweep_model_is_summary
HOLOSIM=$H $TO bash "$ROOT/scripts/sweep" "$T/swi/summary.csv" -o "$T/swi" --force l=1,2 >"$T/out" 2>"$T/err"
rc=$?
rc_is 1
err_has "is '$T/swi/summary.csv', a file the sweep writes in '$T/swi': refusing to overwrite an input"
same "$T/swi/summary.csv" "$T/m.orig" "the model was replaced"
end
rm "$T/swi/summary.csv"
ln "$T/par.yaml" "$T/swi/l=1.csv"
begin sweep_params_is_point_csv
HOLOSIM=$H $TO bash "$ROOT/scripts/sweep" "$T/m.yaml" -o "$T/swi" --force l=1,2 -- --params "$T/par.yaml" \
    >"$T/out" 2>"$T/err"
rc=$?
rc_is 1
err_has "'$T/par.yaml' is '$T/swi/l=1.csv', a file the sweep writes"
same "$T/par.yaml" "$T/par.orig" "the params file changed"
end

# ---- batch points files ------------------------------------------------------
mkdir "$T/bo" "$T/bs"
begin batch_points_nul_byte
printf 'name\tl\np1\t1\np2\t1.\0005\np3\t2\n' >"$T/nul.tsv"
hs batch "$T/m.yaml" --points "$T/nul.tsv" --outdir "$T/bo" --status-dir "$T/bs"
rc_is 1
err_has "nul.tsv:3:6: the points file holds a NUL byte (at byte 17)"
[ -n "$(ls -A "$T/bo")$(ls -A "$T/bs")" ] && no "a point ran"
end
begin batch_points_header_twice
printf 'name\tl\tg\tl\np1\t1\t9\t2\n' >"$T/dup.tsv"
hs batch "$T/m.yaml" --points "$T/dup.tsv" --outdir "$T/bo" --status-dir "$T/bs"
rc_is 1
err_has "dup.tsv:1:10: parameter 'l' named twice in the header (columns 2 and 4)"
[ -n "$(ls -A "$T/bo")$(ls -A "$T/bs")" ] && no "a point ran"
end
# 5 MB of blank lines under a header of 100 parameters, then one point:
# memory follows the rows, not lines x columns (it was "out of memory")
begin batch_points_blank_lines
{ printf 'name'; awk 'BEGIN { for (i = 1; i <= 100; i++) printf "\tp%d", i; print "" }'
  head -c 5000000 /dev/zero | tr '\0' '\n'
  printf 'p1'; awk 'BEGIN { for (i = 1; i <= 100; i++) printf "\t1"; print "" }'; } >"$T/blank.tsv"
awk 'BEGIN { for (i = 1; i <= 100; i++) printf "  p%d: 0\n", i }' >"$T/p100"
sed "/^parameters:/r $T/p100" "$T/m.yaml" >"$T/pm.yaml"
if [ "$SAN" = 0 ]; then
    ([ "$SAN" = 1 ] || ulimit -v 1048576; $TO "$H" batch "$T/pm.yaml" --points "$T/blank.tsv" --outdir "$T/bo" \
        --status-dir "$T/bs" >"$T/out" 2>"$T/err")
else
    $TO "$H" batch "$T/pm.yaml" --points "$T/blank.tsv" --outdir "$T/bo" --status-dir "$T/bs" \
        >"$T/out" 2>"$T/err"
fi
rc=$?
rc_is 0
out_has "p1	0"
[ -s "$T/bo/p1.csv" ] || no "the point wrote no CSV"
end

summary
