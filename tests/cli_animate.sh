#!/bin/sh
# holosim animate (issue 32), POSIX sh:
#
#   HOLOSIM=bin/holosim sh tests/cli_animate.sh       (make check runs it)
#
#   page       the double pendulum's page opened in headless Chromium
#              (tests/anim_browser.js, the DevTools protocol; any script or
#              console error fails): at three times every drawn point is
#              within half a pixel of where the CSV of `holosim run` puts it
#              (through the view the page reports), its pixel has the point's
#              colour, every row of the run fits the canvas; #t=last (the
#              time slider dragged to its end) shows the last row; the page
#              made from that CSV draws the same pixels as the page that ran
#              the model itself
#   3d         the spherical pendulum: the orthographic view of holosim(1)
#              (azimuth, elevation) recomputed from the CSV's x, y, z
#   draw       a `draw` section (pendulum_angle: l sin theta, -l cos theta);
#              --set reaches the drawing (a rod of 2 m)
#   models     every shipped model animates, its page loads without error
#   size       a 32-link chain over 100 s at dt = 0.001 (10^5 rows): a page
#              under 5 MB that plays at >= 50 frames per second of wall time
#              over 5 s (the rate is printed; on a machine busier than twice
#              its cores the assertion is skipped, said so); a 10^6-row CSV
#              is thinned to the page's cap and still ends at its last row
#   gif        --frames N gives N frames (decoded by Chromium's ImageDecoder),
#              all different; --fps and --speed set the count
#   errors     a draw naming an unknown point, a bad colour, a point of four
#              entries, a velocity in a point, nothing to draw (each
#              positioned, exit 2); a CSV missing a column or with a field
#              that is not a number (positioned in the CSV); an output that
#              is a directory, of an unknown kind, --trail of an unknown
#              point, .mp4 without ffmpeg (exit 1): nothing written, an
#              existing output left as it was
#
# The browser tests need chromium and node (HOLOSIM_FULL_DEPS=1 sh
# scripts/install-deps.sh installs them); without them they are skipped,
# said so.  The last line of output is always `N passed, N failed`.

CLI_NAME=animate
CLI_TIMEOUT=120
. "$(dirname "$0")/cli_lib.sh"

M=$ROOT/models
absent() { [ -e "$1" ] && no "$2"; return 0; }

BROWSER=1
if ! command -v chromium >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1; then
    BROWSER=0
    echo "cli_animate.sh: SKIP the browser tests: chromium or node not found" \
         "(HOLOSIM_FULL_DEPS=1 sh scripts/install-deps.sh installs them)"
fi
# browse OUT URL...: one JSON line per URL into OUT; fails on a page error
browse() {
    o=$1
    shift
    node "$TESTS/anim_browser.js" "$@" >"$o" 2>"$T/browser.err" ||
        no "browser: $(head -n 3 "$T/browser.err" | cut -c1-300)"
}
# js FILE LINE EXPR: EXPR of the JSON on line LINE of FILE (r), printed
js() {
    node -e 'const fs = require("fs");
        const r = JSON.parse(fs.readFileSync(process.argv[1], "utf8").split("\n")[process.argv[2] - 1]);
        const v = eval(process.argv[3]); console.log(typeof v === "object" ? JSON.stringify(v) : v);' \
        "$1" "$2" "$3"
}
# row CSV T: the row of the CSV at time T
row() {
    awk -F, -v t="$2" 'NR > 1 && $1 + 0 == t + 0 { print; exit }' "$1"
}
# col CSV NAME: the 1-based column of NAME
col() {
    head -n 1 "$1" | tr ',' '\n' | awk -v n="$2" '$0 == n { print NR; exit }'
}
# near A B TOL WHAT
near() {
    awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d;
        exit !(a != "" && b != "" && d <= t) }' || no "$4: $1, want $2 (within $3)"
}
# The checks of a page's report, in one node process each:
#   point JSON LINE NAME X Y [Z]: the point NAME is drawn within half a pixel
#   of the view of (X, Y[, Z]) (holosim(1): px = W/2 + s u, py = H/2 - s w),
#   its pixel has its colour, and the report's time is a frame's
cat >"$T/check.js" <<'EOF'
const fs = require('fs');
const [file, line, name, ...w] = process.argv.slice(2);
const r = JSON.parse(fs.readFileSync(file, 'utf8').split('\n')[line - 1]);
const p = w.map(Number), d = [p[0] - r.c[0], p[1] - r.c[1], (p[2] || 0) - r.c[2]];
let u = d[0], v = d[1];
if (r.dim === 3) {
  u = -Math.sin(r.az) * d[0] + Math.cos(r.az) * d[1];
  v = -Math.sin(r.el) * (Math.cos(r.az) * d[0] + Math.sin(r.az) * d[1]) + Math.cos(r.el) * d[2];
}
const ex = r.W / 2 + r.s * u, ey = r.H / 2 - r.s * v, i = r.names.indexOf(name), bad = [];
if (i < 0) bad.push('no point ' + name);
else {
  const [gx, gy] = r.points[i];
  if (!(Math.abs(gx - ex) <= 0.5 && Math.abs(gy - ey) <= 0.5))
    bad.push(name + ' at t=' + r.t + ' drawn at (' + gx + ', ' + gy + '), want (' + ex + ', ' + ey + ')');
  const want = [1, 3, 5].map((k) => parseInt(r.colors[i].substr(k, 2), 16));
  if (JSON.stringify(r.rgb[i]) !== JSON.stringify(want))
    bad.push('the pixel of ' + name + ' is ' + JSON.stringify(r.rgb[i]) + ', not ' + r.colors[i]);
}
if (r.frame_t !== r.t) bad.push('t=' + r.t + ' is not a frame (' + r.frame_t + ')');
if (r.dim !== (p.length === 3 ? 3 : 2)) bad.push('a ' + r.dim + 'D page');
console.log(bad.join('; '));
EOF
point() {
    msg=$(node "$T/check.js" "$@")
    [ -z "$msg" ] || no "$msg"
}
# check2d JSON LINE CSV T POINT XCOL YCOL: the point from the CSV's row at T
check2d() {
    r=$(row "$3" "$4")
    [ -n "$r" ] || { no "no row at t=$4"; return; }
    x=$(echo "$r" | cut -d, -f"$(col "$3" "$6")")
    y=$(echo "$r" | cut -d, -f"$(col "$3" "$7")")
    point "$1" "$2" "$5" "$x" "$y"
}

# Every page is made first (with the checks of the command line), its URLs
# listed (`want NAME URL` numbers them: line $L_NAME of the report); then one
# Chromium opens them all in turn, the frame rate's page last; then the
# reports are checked.
urls=""
nurl=0
want() {
    nurl=$((nurl + 1))
    urls="$urls $2"
    eval "L_$1=$nurl"
}
R=$T/report.json

# ---- the pages --------------------------------------------------------------------

begin page-files
hs run "$M/double_pendulum.yaml" -q -o "$T/dp.csv"
rc_is 0
hs animate "$M/double_pendulum.yaml" -o "$T/dp.html"
rc_is 0
err_has "no 'draw' in the model: drawing point P1 (x1, y1), point P2 (x2, y2); segment rod1_anchor-P1 (rod1), segment P1-P2 (rod2)"
err_has "wrote $T/dp.html: 501 frames, t = 0 to 10"
hs animate "$M/double_pendulum.yaml" "$T/dp.csv" -o "$T/dpcsv.html" -q
rc_is 0
err_empty
grep -q 'src=\|https\?:' "$T/dp.html" && no "the page refers to something outside it"
want dp1 "file://$T/dp.html#t=1.5"
want dp2 "file://$T/dp.html#t=4.02"
want dp3 "file://$T/dp.html#t=7.5"
want dplast "file://$T/dp.html#t=last"
want dpcsv "file://$T/dpcsv.html#t=4.02"
end

begin 3d-files
hs run "$M/spherical_pendulum.yaml" -q -o "$T/sp.csv"
hs animate "$M/spherical_pendulum.yaml" -o "$T/sp.html" -q
rc_is 0
want sp1 "file://$T/sp.html#t=2.5"
want sp2 "file://$T/sp.html#t=6.04"
end

begin draw-files
hs run "$M/pendulum_angle.yaml" -q -o "$T/pa.csv" --columns t,theta --set l=2
hs animate "$M/pendulum_angle.yaml" -o "$T/pa.html" --set l=2
rc_is 0
err_lacks "no 'draw'"
want pa "file://$T/pa.html#t=0.7"
end

begin models
for f in "$M"/*.yaml; do
    b=$(basename "$f" .yaml)
    hs animate "$f" -o "$T/m_$b.html" -q
    [ "$rc" = 0 ] || no "$b: exit $rc: $(head -n 1 "$T/err")"
    want "m_$b" "file://$T/m_$b.html#t=0.5"
done
end

begin size-chain
sh "$ROOT/bench/chain_model.sh" 32 100 >"$T/chain32.yaml"
hs animate "$T/chain32.yaml" --dt 0.001 -o "$T/chain.html" -q
rc_is 0
bytes=$(wc -c <"$T/chain.html" | tr -d ' ')
[ "$bytes" -lt 5000000 ] || no "the chain's page has $bytes bytes"
end

begin size-thinned
awk 'BEGIN { print "t,x,y"; for (i = 0; i <= 1000000; i++) { t = i / 100;
    printf "%.2f,%.9f,%.9f\n", t, sin(t), -cos(t) } }' >"$T/long.csv"
hs animate "$M/pendulum.yaml" "$T/long.csv" -o "$T/long.html"
rc_is 0
err_has "(thinned to fit)"
bytes=$(wc -c <"$T/long.html" | tr -d ' ')
[ "$bytes" -lt 5500000 ] || no "the 10^6-row page has $bytes bytes"
want long "file://$T/long.html#t=last"
end

# gifpage GIF HTML: a page that decodes GIF with ImageDecoder and reports the
# frame count, how many distinct frames, and the size
gifpage() {
    {
        printf '<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>\n'
        printf '<script type="text/plain" id="gif">'
        base64 <"$1" | tr -d '\n'
        printf '</script><pre id="hs-test"></pre><script>\n'
        cat <<'EOF'
(async function () {
  var b = atob(document.getElementById('gif').textContent), u = new Uint8Array(b.length);
  for (var i = 0; i < b.length; i++) u[i] = b.charCodeAt(i);
  var dec = new ImageDecoder({ data: u, type: 'image/gif' });
  await dec.tracks.ready;
  await dec.completed;
  var n = dec.tracks.selectedTrack.frameCount, sums = [], w = 0, h = 0;
  for (var k = 0; k < n; k++) {
    var f = (await dec.decode({ frameIndex: k })).image;
    var c = document.createElement('canvas');
    w = c.width = f.displayWidth; h = c.height = f.displayHeight;
    var g = c.getContext('2d');
    g.drawImage(f, 0, 0);
    var d = g.getImageData(0, 0, w, h).data, s = 0;
    for (var j = 0; j < d.length; j += 4) s = (s * 31 + d[j] + 7 * d[j + 1] + 13 * d[j + 2]) >>> 0;
    sums.push(s);
    f.close();
  }
  document.getElementById('hs-test').textContent =
    JSON.stringify({ frames: n, distinct: new Set(sums).size, w: w, h: h });
  document.title = 'done';
})();
</script></body></html>
EOF
    } >"$2"
}

begin gif-files
hs animate "$M/slider_crank.yaml" -o "$T/sc.gif" --frames 12 --size 200x150 -q
rc_is 0
[ "$(head -c 6 "$T/sc.gif")" = GIF89a ] || no "not a GIF89a file"
hs animate "$M/pendulum.yaml" -o "$T/p.gif" --fps 10 --speed 2 --size 160x120 -q
rc_is 0
gifpage "$T/sc.gif" "$T/sc_gif.html"
gifpage "$T/p.gif" "$T/p_gif.html"
want scgif "file://$T/sc_gif.html"
want pgif "file://$T/p_gif.html"
want chain "file://$T/chain.html#fps=5"
end

# ---- in the browser ---------------------------------------------------------------

if [ "$BROWSER" = 1 ]; then
    begin browser
    # shellcheck disable=SC2086
    browse "$R" $urls
    [ "$(wc -l <"$R" | tr -d ' ')" = "$nurl" ] || no "$(wc -l <"$R") reports of $nurl pages"
    end

    begin page-positions
    for k in $L_dp1 $L_dp2 $L_dp3; do
        t=$(js "$R" $k r.t)
        check2d "$R" $k "$T/dp.csv" "$t" P1 x1 y1
        check2d "$R" $k "$T/dp.csv" "$t" P2 x2 y2
        # the anchor of rod1 is the origin
        point "$R" $k rod1_anchor 0 0
    done
    [ "$(js "$R" $L_dp2 'JSON.stringify(r.points)')" = "$(js "$R" $L_dpcsv 'JSON.stringify(r.points)')" ] ||
        no "the page of the CSV draws other pixels than the page of the run"
    end

    begin page-last-row
    last=$(tail -n 1 "$T/dp.csv" | cut -d, -f1)
    [ "$(js "$R" $L_dplast r.t)" = "$last" ] || no "the slider's end is t=$(js "$R" $L_dplast r.t), the last row $last"
    check2d "$R" $L_dplast "$T/dp.csv" "$last" P2 x2 y2
    end

    begin page-fits
    # every row of the run inside the canvas, through the page's view
    s=$(js "$R" $L_dp1 r.s); c0=$(js "$R" $L_dp1 'r.c[0]'); c1=$(js "$R" $L_dp1 'r.c[1]')
    awk -F, -v s="$s" -v c0="$c0" -v c1="$c1" 'NR > 1 {
        for (k = 2; k <= 4; k += 2) { px = 360 + s * ($k - c0); py = 270 - s * ($(k + 1) - c1);
            if (px < 0 || px > 720 || py < 0 || py > 540) bad = 1 } } END { exit bad }' "$T/dp.csv" ||
        no "a point of the run falls outside the canvas"
    end

    begin 3d
    for k in $L_sp1 $L_sp2; do
        r=$(row "$T/sp.csv" "$(js "$R" $k r.t)")
        # shellcheck disable=SC2046
        point "$R" $k P $(echo "$r" | cut -d, -f2-4 | tr ',' ' ')
    done
    end

    begin draw-section
    th=$(row "$T/pa.csv" 0.7 | cut -d, -f2)
    # shellcheck disable=SC2046
    point "$R" $L_pa P $(awk -v th="$th" 'BEGIN { printf "%.17g %.17g", 2 * sin(th), -2 * cos(th) }')
    point "$R" $L_pa O 0 0
    end

    begin size-thinned-page
    [ "$(js "$R" $L_long r.t)" = 10000 ] || no "the last frame is t=$(js "$R" $L_long r.t)"
    check2d "$R" $L_long "$T/long.csv" 10000 P x y
    nf=$(js "$R" $L_long r.nframe)
    [ "$nf" -le 180000 ] || no "$nf frames stored"
    end

    begin gif
    [ "$(js "$R" $L_scgif r.frames)" = 12 ] || no "$(js "$R" $L_scgif r.frames) frames, want 12"
    [ "$(js "$R" $L_scgif r.distinct)" = 12 ] || no "$(js "$R" $L_scgif r.distinct) distinct frames of 12"
    [ "$(js "$R" $L_scgif '[r.w, r.h]')" = "[200,150]" ] || no "size $(js "$R" $L_scgif '[r.w, r.h]')"
    # 10 s at 2x and 10 frames/s: 51 frames
    [ "$(js "$R" $L_pgif r.frames)" = 51 ] || no "$(js "$R" $L_pgif r.frames) frames, want 51"
    end

    begin frame-rate
    fps=$(js "$R" $L_chain 'r.fps.toFixed(1)')
    load=$(awk '{ print $1 }' /proc/loadavg 2>/dev/null || echo 0)
    cores=$(nproc 2>/dev/null || echo 1)
    echo "cli_animate.sh: the 32-link chain's page ($(wc -c <"$T/chain.html" | tr -d ' ') bytes, 10^5 rows) plays at $fps frames/s (load $load, $cores cores)"
    if awk -v l="$load" -v c="$cores" 'BEGIN { exit !(l > 2 * c) }'; then
        echo "cli_animate.sh: SKIP the >= 50 frames/s assertion: the machine is busy (load $load)"
    else
        awk -v f="$fps" 'BEGIN { exit !(f >= 50) }' || no "the chain's page plays at $fps frames/s"
    fi
    end
fi

# ---- errors ---------------------------------------------------------------------

# model NAME DRAW...: the pendulum with a draw section (the lines given)
model() {
    f=$T/$1.yaml
    shift
    sed -n '1,/^outputs:/p' "$M/pendulum.yaml" | sed '$d' >"$f"
    for l in "$@"; do printf '%s\n' "$l" >>"$f"; done
}

begin error-unknown-point
model unk 'draw:' '  points: {O: [0, 0], P: [x, y]}' '  segments: [[O, Q]]'
echo keep >"$T/keep.html"
hs animate "$T/unk.yaml" -o "$T/keep.html"
rc_is 2
line=$(grep -n 'segments' "$T/unk.yaml" | cut -d: -f1)
err_has "unk.yaml:$line:18: error: unknown point 'Q' in 'draw' (did you mean 'O'?)"
err_has "  segments: [[O, Q]]"
err_has "                 ^"
[ "$(cat "$T/keep.html")" = keep ] || no "the existing output was changed"
ls "$T" | grep -q 'keep.html.tmp' && no "a temporary file was left"
hs check "$T/unk.yaml"
rc_is 2
end

begin error-draw-values
model col 'draw:' '  points: {P: [x, y]}' '  circles: {P: {radius: 0.1, color: bleu}}'
hs animate "$T/col.yaml" -o "$T/col.html"
rc_is 2
err_has "col.yaml:$(grep -n circles "$T/col.yaml" | cut -d: -f1):37: error: unknown colour 'bleu' (did you mean 'blue'?)"
absent "$T/col.html" "an output was written"
model four 'draw:' '  points: {P: [x, y, 0, 1]}'
hs animate "$T/four.yaml" -o "$T/four.html"
rc_is 2
err_has "four.yaml:$(grep -n 'P: \[' "$T/four.yaml" | cut -d: -f1):15: error: a point is [x, y] or [x, y, z], found 4 entries"
model vel 'draw:' '  points:' "    P: [x, y']"
hs animate "$T/vel.yaml" -o "$T/vel.html"
rc_is 2
err_has "vel.yaml:$(grep -n "P: \[x, y'\]" "$T/vel.yaml" | cut -d: -f1):"
err_has "velocit"
absent "$T/vel.html" "an output was written"
end

begin body-default
# a body without a draw section: its centre and its named point, joined
sed '/^draw:/,$d' "$M/heavy_top.yaml" >"$T/top.yaml"
hs animate "$T/top.yaml" -o "$T/top.html"
rc_is 0
err_has "drawing point top (top_x, top_y, top_z), point top_tip (top_tip_x, top_tip_y, top_tip_z); segment top-top_tip (a body)"
end

begin error-nothing-to-draw
hs animate "$M/rolling_disk.yaml" -o "$T/x.html" -q
rc_is 0
sed '/^draw:/,$d' "$M/rolling_disk.yaml" >"$T/nodraw.yaml"
hs animate "$T/nodraw.yaml" -o "$T/nodraw.html"
rc_is 2
err_has "nodraw.yaml:$(grep -n '^coordinates' "$T/nodraw.yaml" | cut -d: -f1):1: error: the model has no 'draw' and no coordinates (or ambient names) xN, yN[, zN] to draw"
absent "$T/nodraw.html" "an output was written"
end

begin error-csv
cut -d, -f1-3 "$T/dp.csv" >"$T/short.csv"
hs animate "$M/double_pendulum.yaml" "$T/short.csv" -o "$T/short.html"
rc_is 2
err_has "short.csv:1:1: error: the CSV has no columns 'x2', 'y2' (the drawing reads them)"
err_has "t,x1,y1"
absent "$T/short.html" "an output was written"
hs animate "$M/double_pendulum.yaml" "$T/short.csv" -o "$T/short.html" --plot E
err_has "'E' (--plot)"
# line 4 is t = 0.02, a kept frame (every field of a kept row is read)
sed '4s/^\([^,]*\),[^,]*,/\1,abc,/' "$T/dp.csv" >"$T/nan.csv"
hs animate "$M/double_pendulum.yaml" "$T/nan.csv" -o "$T/nan.html"
rc_is 2
err_has "nan.csv:4:6: error: field 2 of line 4 is not a number"
absent "$T/nan.html" "an output was written"
awk 'NR == 4 { print "0.5" substr($0, index($0, ",")); next } { print }' "$T/dp.csv" >"$T/back.csv"
hs animate "$M/double_pendulum.yaml" "$T/back.csv" -o "$T/back.html"
rc_is 2
err_has "back.csv:5:1: error: time goes back at line 5"
end

begin error-output
mkdir "$T/adir"
hs animate "$M/pendulum.yaml" -o "$T/adir"
rc_is 1
err_has "the output '$T/adir' must end in .html, .gif, .mp4, .svg, .pdf or .png"
mkdir "$T/dir.html"
hs animate "$M/pendulum.yaml" -o "$T/dir.html"
rc_is 1
err_has "cannot write '$T/dir.html': it is a directory"
[ -z "$(ls -A "$T/dir.html")" ] || no "something was written into the directory"
hs animate "$M/pendulum.yaml" -o "$T/p.bmp"
rc_is 1
err_has "must end in .html, .gif, .mp4, .svg, .pdf or .png"
hs animate "$M/pendulum.yaml" -o "$T/tr.html" --trail Q
rc_is 1
err_has "--trail: the drawing has no point 'Q' (did you mean 'P'?); its points are P, rod_anchor"
absent "$T/tr.html" "an output was written"
hs animate "$M/pendulum.yaml"
rc_is 1
err_has "-o OUT is required"
hs animate "$M/pendulum.yaml" -o "$T/f.html" --frames 10
rc_is 1
err_has "--frames is for .gif and .mp4"
if command -v ffmpeg >/dev/null 2>&1; then
    hs animate "$M/pendulum.yaml" -o "$T/p.mp4" --t-end 1 -q
    rc_is 0
    head -c 12 "$T/p.mp4" | grep -q ftyp || no "not an MP4 file"
else
    hs animate "$M/pendulum.yaml" -o "$T/p.mp4"
    rc_is 1
    err_has "needs ffmpeg, not found on the PATH"
    absent "$T/p.mp4" "an output was written"
fi
end

summary
