#!/bin/sh
# Contacts (issue 37, item 6): the bouncing ball (models/bouncing_ball.yaml,
# h = 1, e = 0.9) and a Newton's cradle of 50 balls with e = 1
# (bench/cradle_model.sh: the line, 49 impacts, and the ring, where the
# pulse goes round for 1 s, 980 impacts), with holosim and, when
# python3-siconos is installed (scripts/install-bench-deps.sh), with Siconos
# (bench/siconos_contacts.py): accuracy against the closed forms, then CPU
# and peak RSS of the whole process (/usr/bin/time -f), holosim and Siconos
# run in turn (A B A B ...), the ratio taken pair by pair.
#   sh bench/contacts.sh [bin/holosim] [RUNS]      (RUNS: pairs, default 11)
# Not part of `make check`.  See bench/README.md, "Contacts".
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
hs=${1:-$root/bin/holosim}
runs=${2:-11}
[ -x "$hs" ] || { echo "contacts.sh: no $hs (make -j1 bin/holosim)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "contacts.sh: needs /usr/bin/time" >&2; exit 1; }
py=/usr/bin/python3
sic=""
if $py -c 'import siconos.kernel' 2>/dev/null; then
    sic="$py $here/siconos_contacts.py"
else
    echo "contacts.sh: python3-siconos not installed" \
         "(scripts/install-bench-deps.sh): holosim only" >&2
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/contacts.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

ball=$root/models/bouncing_ball.yaml
sh "$here/cradle_model.sh" 50 0.1 > "$tmp/line.yaml"
sh "$here/cradle_model.sh" 50 1 ring > "$tmp/ring.yaml"

echo "# contacts.sh: $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -m)," \
     "$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo '?') cores," \
     "load average $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
echo "# holosim $("$hs" --version 2>/dev/null | head -n 1)," \
     "$(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo '?')"
[ -n "$sic" ] && echo "# siconos $(dpkg-query -W -f '${Version}' python3-siconos 2>/dev/null || echo '?')"

# ---- accuracy -------------------------------------------------------------
echo
echo "## holosim: bouncing ball (h = 1, e = 0.9, g = 9.81, rtol = atol = 1e-12)"
/usr/bin/time -f '%e s wall, %U s user, %S s system, %M KiB peak RSS' -o "$tmp/ball.time" \
    "$hs" run "$ball" -o "$tmp/ball.csv" --events "$tmp/ball.ev" 2> "$tmp/ball.err"
sed 's/^/# \/usr\/bin\/time: /' "$tmp/ball.time"
sed -n 's/^holosim: //p' "$tmp/ball.err" | sed 's/^/# /'
# Impact times against t_k = t1 (1 + 2 e + ... + 2 e^(k-1)); the rest row;
# the lowest y of every row and event; the last row (y, y', lambda_floor).
awk -F, -v h=1 -v g=9.81 -v e=0.9 -v m=1 -v Q="'" '
    function abs(x) { return x < 0 ? -x : x }
    FNR == 1 { for (i = 1; i <= NF; i++) col[FILENAME, $i] = i; next }
    FILENAME ~ /\.ev$/ {
        y = $col[FILENAME, "y"] + 0; if (y < ymin) ymin = y
        if ($1 ~ /:impact$/) {
            n++; t = $col[FILENAME, "t"] + 0
            if (n == 1) { t1 = sqrt(2 * h / g); tk = t1; ek = 1; first = t - t1 }
            else { ek *= e; tk += 2 * t1 * ek }
            if (n <= 50 && abs(t - tk) > err50) err50 = abs(t - tk)
        }
        if ($1 ~ /:rest$/) { rest = $col[FILENAME, "t"] + 0; nrest++ }
        next
    }
    { y = $col[FILENAME, "y"] + 0; if (y < ymin) ymin = y
      yl = $col[FILENAME, "y"]; vl = $col[FILENAME, "y" Q]
      ll = $col[FILENAME, "lambda_floor"] }
    END {
        tacc = sqrt(2 * h / g) * (1 + e) / (1 - e)
        # impacts: the rows "impact" and the one "rest" (the impact with
        # e = 0 that ends the sequence), as holosim counts them.
        printf "impacts=%d first_err=%.3g max_err_50=%.3g t_rest=%.10f rest_err=%.3g y_min=%.3g\n",
            n + nrest, first, err50, rest, rest - tacc, ymin
        printf "last row: y=%s y" Q "=%s lambda_floor - m g=%.3g\n", yl, vl, ll - m * g
    }' "$tmp/ball.ev" "$tmp/ball.csv" | tee "$tmp/ball.acc"

# Momentum sum of v_i and energy E over every row and every event row.
cradle_acc() {
    awk -F, -v Q="'" '
        function abs(x) { return x < 0 ? -x : x }
        FNR == 1 { nv[FILENAME] = 0
                   for (i = 1; i <= NF; i++) {
                       if ($i ~ ("^x[0-9]+" Q "$")) vc[FILENAME, ++nv[FILENAME]] = i
                       if ($i == "E") ec[FILENAME] = i
                   }
                   next }
        FILENAME ~ /\.ev$/ && $1 ~ /:impact$/ { n++ }
        { p = 0; for (k = 1; k <= nv[FILENAME]; k++) p += $vc[FILENAME, k]
          if (!started) { p0 = p; e0 = $ec[FILENAME]; started = 1 }
          if (abs(p - p0) > dp) dp = abs(p - p0)
          if (abs($ec[FILENAME] - e0) > de) de = abs($ec[FILENAME] - e0)
          if (FILENAME !~ /\.ev$/) {
              mv = 0; vmax = -1e300
              for (k = 1; k <= nv[FILENAME]; k++) {
                  v = $vc[FILENAME, k] + 0
                  if (abs(v) > 1e-12) mv++
                  if (v > vmax) { vmax = v; kmax = k }
              }
          } }
        END { printf "impacts=%d max_dP=%.3g max_dE=%.3g v_max=%.17g ball=%d moving=%d\n",
                  n, dp, de, vmax, kmax, mv }' "$1.csv" "$1.ev"
}
for c in line ring; do
    echo
    echo "## holosim: cradle of 50 balls, $c (e = 1, momentum 1, energy 0.5;" \
         "at the end ball $( [ $c = line ] && echo 50 || echo 31 ) alone moves, at v0 = 1)"
    /usr/bin/time -f '%e s wall, %U s user, %S s system, %M KiB peak RSS' -o "$tmp/$c.time" \
        "$hs" run "$tmp/$c.yaml" -o "$tmp/$c.csv" --events "$tmp/$c.ev" 2> "$tmp/$c.err"
    sed 's/^/# \/usr\/bin\/time: /' "$tmp/$c.time"
    sed -n 's/^holosim: //p' "$tmp/$c.err" | sed 's/^/# /'
    cradle_acc "$tmp/$c" | tee "$tmp/$c.acc"
done

if [ -n "$sic" ]; then
    echo
    echo "## Siconos: bouncing ball"
    echo "# event-driven (LsodarOSI rtol = atol = 1e-14; 1e-12 for the second line)"
    $sic ball ed 1e-14 2> /dev/null | tee "$tmp/sball.acc"
    $sic ball ed 1e-12 2> /dev/null
    echo "# Moreau-Jean (theta = 0.5), H = 1e-3, 1e-4"
    $sic ball mj 1e-3 2> /dev/null
    $sic ball mj 1e-4 2> /dev/null
    for c in line ring; do
        tend=0.1; r=""
        [ "$c" = ring ] && { tend=1; r=ring; }
        echo
        echo "## Siconos: cradle of 50 balls, $c (event-driven; Moreau-Jean, theta = 0.5)"
        # shellcheck disable=SC2086
        $sic cradle ed 50 $tend $r 2> /dev/null | tee "$tmp/s$c.acc"
        for H in 1e-4 1e-3; do
            # shellcheck disable=SC2086
            $sic cradle mj 50 $tend $H $r 2> /dev/null | sed "s/\$/ H=$H/"
        done
    done
fi

# ---- time -----------------------------------------------------------------
# cpu (user + system, s) and peak RSS (KiB) of one whole process, from
# /usr/bin/time (its 10 ms resolution shows in the ball's and the line's
# figures; bench/timecmd.py's microseconds carry the ~10 ms of forking a
# Python interpreter, and posix_spawn from Python its ~3 ms and 8 MB RSS).
t1run() {
    /usr/bin/time -f '%U %S %M' -o "$tmp/time" "$@" > /dev/null 2>&1 ||
        { echo "contacts.sh: failed: $*" >&2; exit 1; }
    awk '{ printf "%.2f %d\n", $1 + $2, $3 }' "$tmp/time"
}
# min/median/max of a column of numbers.
mmm() { sort -n | awk '{ a[++n] = $1 } END {
    printf "%.3g/%.3g/%.3g", a[1], (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2), a[n] }'; }
med() { sort -n | awk '{ a[++n] = $1 } END {
    printf "%.6g", (n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2) }'; }

echo
echo "## time: $runs pairs, holosim and Siconos (event-driven) in turn;" \
     "cpu s min/median/max, peak RSS MiB (median), per impact: median cpu / impacts" \
     "(Siconos: its own count in parentheses)"
echo "| problem | impacts | holosim cpu | holosim RSS | holosim ms/impact |" \
     "Siconos cpu | Siconos RSS | Siconos ms/impact | ratio holosim/Siconos (median of pairs) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
for p in ball line ring; do
    case $p in
        ball) a="$hs run $ball -o $tmp/t.csv --events $tmp/t.ev -q"
              b="$sic ball ed 1e-14" ;;
        line) a="$hs run $tmp/line.yaml -o $tmp/t.csv --events $tmp/t.ev -q"
              b="$sic cradle ed 50 0.1" ;;
        ring) a="$hs run $tmp/ring.yaml -o $tmp/t.csv --events $tmp/t.ev -q"
              b="$sic cradle ed 50 1 ring" ;;
    esac
    : > "$tmp/a"; : > "$tmp/b"; : > "$tmp/r"
    # One warm-up each, not counted.
    # shellcheck disable=SC2086
    t1run $a > /dev/null
    # shellcheck disable=SC2086
    [ -n "$sic" ] && t1run $b > /dev/null
    i=0
    while [ "$i" -lt "$runs" ]; do
        # shellcheck disable=SC2086
        ra=$(t1run $a); echo "$ra" >> "$tmp/a"
        if [ -n "$sic" ]; then
            # shellcheck disable=SC2086
            rb=$(t1run $b); echo "$rb" >> "$tmp/b"
            echo "$ra $rb" | awk '{ printf "%.6g\n", ($3 > 0 ? $1 / $3 : 0) }' >> "$tmp/r"
        fi
        i=$((i + 1))
    done
    n=$(sed -n 's/^impacts=\([0-9]*\).*/\1/p' "$tmp/$p.acc")
    ca=$(cut -d' ' -f1 "$tmp/a" | mmm)
    ma=$(cut -d' ' -f2 "$tmp/a" | med | awk '{ printf "%.1f", $1 / 1024 }')
    pa=$(cut -d' ' -f1 "$tmp/a" | med | awk -v n="$n" '{ printf "%.3g", 1000 * $1 / n }')
    if [ -n "$sic" ]; then
        cb=$(cut -d' ' -f1 "$tmp/b" | mmm)
        mb=$(cut -d' ' -f2 "$tmp/b" | med | awk '{ printf "%.1f", $1 / 1024 }')
        nb=$(sed -n 's/^scheme=ed impacts=\([0-9]*\).*/\1/p' "$tmp/s$p.acc")
        pb=$(cut -d' ' -f1 "$tmp/b" | med | awk -v n="$nb" '{ printf "%.3g (%d)", 1000 * $1 / n, n }')
        rr=$(mmm < "$tmp/r")
    else
        cb=-; mb=-; pb=-; rr=-
    fi
    echo "| $p | $n | $ca | $ma | $pa | $cb | $mb | $pb | $rr |"
    cut -d' ' -f1 "$tmp/a" | med > "$tmp/$p.cpu"
    [ -n "$sic" ] && cut -d' ' -f1 "$tmp/b" | med > "$tmp/s$p.cpu"
done
# The cost of an impact without the start-up: the ring's extra CPU over the
# line's, over its extra impacts.
awk -v cl="$(cat "$tmp/line.cpu")" -v cr="$(cat "$tmp/ring.cpu")" \
    -v nl="$(sed -n 's/^impacts=\([0-9]*\).*/\1/p' "$tmp/line.acc")" \
    -v nr="$(sed -n 's/^impacts=\([0-9]*\).*/\1/p' "$tmp/ring.acc")" \
    'BEGIN { printf "holosim, marginal per impact (ring - line): %.3g ms\n", 1000 * (cr - cl) / (nr - nl) }'
[ -n "$sic" ] &&
awk -v cl="$(cat "$tmp/sline.cpu")" -v cr="$(cat "$tmp/sring.cpu")" \
    -v nl="$(sed -n 's/^scheme=ed impacts=\([0-9]*\).*/\1/p' "$tmp/sline.acc")" \
    -v nr="$(sed -n 's/^scheme=ed impacts=\([0-9]*\).*/\1/p' "$tmp/sring.acc")" \
    'BEGIN { printf "Siconos, marginal per impact (ring - line): %.3g ms\n", 1000 * (cr - cl) / (nr - nl) }'
echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo '?')"
