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
if ! command -v chromium >/dev/null 2>&1 || ! command -v node >/dev/null 2>&1 ||
   ! node --experimental-websocket -e 'if (typeof WebSocket !== "function") process.exit(1)' \
       >/dev/null 2>&1; then
    BROWSER=0
    echo "cli_animate.sh: SKIP the browser tests: chromium or node (>= 20, with WebSocket)" \
         "not found; HOLOSIM_FULL_DEPS=1 sh scripts/install-deps.sh installs them"
fi
# browse OUT URL...: one JSON line per URL into OUT; fails on a page error
browse() {
    o=$1
    shift
    node --no-warnings --experimental-websocket "$TESTS/anim_browser.js" "$@" >"$o" 2>"$T/browser.err" ||
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
# check2d JSON LINE CSV T POINT XCOL YCOL: the point's pixel from the CSV row
check2d() {
    r=$(row "$3" "$4")
    [ -n "$r" ] || { no "no row at t=$4"; return; }
    cx=$(col "$3" "$6")
    cy=$(col "$3" "$7")
    x=$(echo "$r" | cut -d, -f"$cx")
    y=$(echo "$r" | cut -d, -f"$cy")
    i=$(js "$1" "$2" "r.names.indexOf('$5')")
    s=$(js "$1" "$2" r.s)
    c0=$(js "$1" "$2" 'r.c[0]')
    c1=$(js "$1" "$2" 'r.c[1]')
    WW=$(js "$1" "$2" r.W)
    HH=$(js "$1" "$2" r.H)
    ex=$(awk -v W="$WW" -v s="$s" -v x="$x" -v c="$c0" 'BEGIN { printf "%.9f", W / 2 + s * (x - c) }')
    ey=$(awk -v H="$HH" -v s="$s" -v y="$y" -v c="$c1" 'BEGIN { printf "%.9f", H / 2 - s * (y - c) }')
    near "$(js "$1" "$2" "r.points[$i][0]")" "$ex" 0.5 "$5 px at t=$4"
    near "$(js "$1" "$2" "r.points[$i][1]")" "$ey" 0.5 "$5 py at t=$4"
    [ "$(js "$1" "$2" "r.frame_t")" = "$(js "$1" "$2" "r.t")" ] || no "t=$4 is not a frame"
    [ "$(js "$1" "$2" "JSON.stringify(r.rgb[$i]) === JSON.stringify([1, 3, 5].map(k => parseInt(r.colors[$i].substr(k, 2), 16)))")" = true ] ||
        no "the pixel of $5 at t=$4 is $(js "$1" "$2" "r.rgb[$i]"), not its colour $(js "$1" "$2" "r.colors[$i]")"
}

# ---- page ---------------------------------------------------------------------

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
end

if [ "$BROWSER" = 1 ]; then
    begin page-positions
    browse "$T/dp.json" "file://$T/dp.html#t=1.5" "file://$T/dp.html#t=4.02" \
        "file://$T/dp.html#t=7.5" "file://$T/dp.html#t=last" "file://$T/dpcsv.html#t=4.02"
    for k in 1 2 3; do
        t=$(js "$T/dp.json" $k r.t)
        check2d "$T/dp.json" $k "$T/dp.csv" "$t" P1 x1 y1
        check2d "$T/dp.json" $k "$T/dp.csv" "$t" P2 x2 y2
        # the anchor of rod1 is the origin
        i=$(js "$T/dp.json" $k "r.names.indexOf('rod1_anchor')")
        near "$(js "$T/dp.json" $k "r.points[$i][0]")" \
             "$(js "$T/dp.json" $k "r.W / 2 - r.s * r.c[0]")" 0.5 "anchor px"
    done
    [ "$(js "$T/dp.json" 2 'JSON.stringify(r.points)')" = "$(js "$T/dp.json" 5 'JSON.stringify(r.points)')" ] ||
        no "the page of the CSV draws other pixels than the page of the run"
    end

    begin page-last-row
    last=$(tail -n 1 "$T/dp.csv" | cut -d, -f1)
    [ "$(js "$T/dp.json" 4 r.t)" = "$last" ] || no "the slider's end is t=$(js "$T/dp.json" 4 r.t), the last row $last"
    check2d "$T/dp.json" 4 "$T/dp.csv" "$last" P2 x2 y2
    end

    begin page-fits
    # every row of the run inside the canvas, through the page's view
    s=$(js "$T/dp.json" 1 r.s); c0=$(js "$T/dp.json" 1 'r.c[0]'); c1=$(js "$T/dp.json" 1 'r.c[1]')
    awk -F, -v s="$s" -v c0="$c0" -v c1="$c1" 'NR > 1 {
        for (k = 2; k <= 4; k += 2) { px = 360 + s * ($k - c0); py = 270 - s * ($(k + 1) - c1);
            if (px < 0 || px > 720 || py < 0 || py > 540) bad = 1 } } END { exit bad }' "$T/dp.csv" ||
        no "a point of the run falls outside the canvas"
    end

    # ---- 3d -------------------------------------------------------------------
    begin 3d
    hs run "$M/spherical_pendulum.yaml" -q -o "$T/sp.csv"
    hs animate "$M/spherical_pendulum.yaml" -o "$T/sp.html" -q
    rc_is 0
    browse "$T/sp.json" "file://$T/sp.html#t=2.5" "file://$T/sp.html#t=6.04"
    for k in 1 2; do
        t=$(js "$T/sp.json" $k r.t)
        [ "$(js "$T/sp.json" $k r.dim)" = 3 ] || no "not a 3D page"
        r=$(row "$T/sp.csv" "$t")
        want=$(echo "$r" | awk -F, -v s="$(js "$T/sp.json" $k r.s)" -v az="$(js "$T/sp.json" $k r.az)" \
            -v el="$(js "$T/sp.json" $k r.el)" -v c="$(js "$T/sp.json" $k 'r.c.join(",")')" '{
            split(c, C, ","); dx = $2 - C[1]; dy = $3 - C[2]; dz = $4 - C[3]
            u = -sin(az) * dx + cos(az) * dy
            w = -sin(el) * (cos(az) * dx + sin(az) * dy) + cos(el) * dz
            printf "%.9f %.9f", 360 + s * u, 270 - s * w }')
        i=$(js "$T/sp.json" $k "r.names.indexOf('P')")
        near "$(js "$T/sp.json" $k "r.points[$i][0]")" "${want% *}" 0.5 "3D px at t=$t"
        near "$(js "$T/sp.json" $k "r.points[$i][1]")" "${want#* }" 0.5 "3D py at t=$t"
    done
    end

    # ---- draw -----------------------------------------------------------------
    begin draw-section
    hs run "$M/pendulum_angle.yaml" -q -o "$T/pa.csv" --columns t,theta --set l=2
    hs animate "$M/pendulum_angle.yaml" -o "$T/pa.html" --set l=2
    rc_is 0
    err_lacks "no 'draw'"
    browse "$T/pa.json" "file://$T/pa.html#t=0.7"
    th=$(row "$T/pa.csv" 0.7 | cut -d, -f2)
    awk -v th="$th" 'BEGIN { printf "t,x,y\n0.7,%.17g,%.17g\n", 2 * sin(th), -2 * cos(th) }' >"$T/pa_xy.csv"
    check2d "$T/pa.json" 1 "$T/pa_xy.csv" 0.7 P x y
    # the rod is 2 m on the screen: |P - O| = 2 s
    near "$(js "$T/pa.json" 1 'Math.hypot(r.points[1][0] - r.points[0][0], r.points[1][1] - r.points[0][1])')" \
         "$(js "$T/pa.json" 1 '2 * r.s')" 0.5 "the rod's length in pixels"
    end
fi

# ---- models ---------------------------------------------------------------------

begin models
urls=""
for f in "$M"/*.yaml; do
    b=$(basename "$f" .yaml)
    hs animate "$f" -o "$T/m_$b.html" -q
    [ "$rc" = 0 ] || no "$b: exit $rc: $(head -n 1 "$T/err")"
    urls="$urls file://$T/m_$b.html#t=0.5"
done
if [ "$BROWSER" = 1 ]; then
    # shellcheck disable=SC2086
    browse "$T/models.json" $urls
    n=$(grep -c '"points"' "$T/models.json")
    [ "$n" = "$(ls "$M"/*.yaml | wc -l | tr -d ' ')" ] || no "$n pages reported"
fi
end

# ---- size -----------------------------------------------------------------------

begin size-chain
sh "$ROOT/bench/chain_model.sh" 32 100 >"$T/chain32.yaml"
hs animate "$T/chain32.yaml" --dt 0.001 -o "$T/chain.html" -q
rc_is 0
bytes=$(wc -c <"$T/chain.html" | tr -d ' ')
[ "$bytes" -lt 5000000 ] || no "the chain's page has $bytes bytes"
if [ "$BROWSER" = 1 ]; then
    browse "$T/chain.json" "file://$T/chain.html#fps=5"
    fps=$(js "$T/chain.json" 1 'r.fps.toFixed(1)')
    load=$(awk '{ print $1 }' /proc/loadavg 2>/dev/null || echo 0)
    cores=$(nproc 2>/dev/null || echo 1)
    echo "cli_animate.sh: the 32-link chain's page ($bytes bytes, 10^5 rows) plays at $fps frames/s (load $load, $cores cores)"
    if awk -v l="$load" -v c="$cores" 'BEGIN { exit !(l > 2 * c) }'; then
        echo "cli_animate.sh: SKIP the >= 50 frames/s assertion: the machine is busy (load $load)"
    else
        awk -v f="$fps" 'BEGIN { exit !(f >= 50) }' || no "the chain's page plays at $fps frames/s"
    fi
fi
end

begin size-thinned
awk 'BEGIN { print "t,x,y"; for (i = 0; i <= 1000000; i++) { t = i / 100;
    printf "%.2f,%.9f,%.9f\n", t, sin(t), -cos(t) } }' >"$T/long.csv"
hs animate "$M/pendulum.yaml" "$T/long.csv" -o "$T/long.html"
rc_is 0
err_has "(thinned to fit)"
bytes=$(wc -c <"$T/long.html" | tr -d ' ')
[ "$bytes" -lt 5500000 ] || no "the 10^6-row page has $bytes bytes"
if [ "$BROWSER" = 1 ]; then
    browse "$T/long.json" "file://$T/long.html#t=last"
    [ "$(js "$T/long.json" 1 r.t)" = 10000 ] || no "the last frame is t=$(js "$T/long.json" 1 r.t)"
    check2d "$T/long.json" 1 "$T/long.csv" 10000 P x y
    nf=$(js "$T/long.json" 1 r.nframe)
    [ "$nf" -le 180000 ] || no "$nf frames stored"
fi
end

# ---- gif ------------------------------------------------------------------------

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

begin gif
hs animate "$M/slider_crank.yaml" -o "$T/sc.gif" --frames 12 --size 200x150 -q
rc_is 0
[ "$(head -c 6 "$T/sc.gif")" = GIF89a ] || no "not a GIF89a file"
hs animate "$M/pendulum.yaml" -o "$T/p.gif" --fps 10 --speed 2 --size 160x120 -q
rc_is 0
if [ "$BROWSER" = 1 ]; then
    gifpage "$T/sc.gif" "$T/sc_gif.html"
    gifpage "$T/p.gif" "$T/p_gif.html"
    browse "$T/gif.json" "file://$T/sc_gif.html" "file://$T/p_gif.html"
    [ "$(js "$T/gif.json" 1 r.frames)" = 12 ] || no "$(js "$T/gif.json" 1 r.frames) frames, want 12"
    [ "$(js "$T/gif.json" 1 r.distinct)" = 12 ] || no "$(js "$T/gif.json" 1 r.distinct) distinct frames of 12"
    [ "$(js "$T/gif.json" 1 '[r.w, r.h]')" = "[200,150]" ] || no "size $(js "$T/gif.json" 1 '[r.w, r.h]')"
    # 10 s at 2x and 10 frames/s: 51 frames
    [ "$(js "$T/gif.json" 2 r.frames)" = 51 ] || no "$(js "$T/gif.json" 2 r.frames) frames, want 51"
fi
end

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
err_has "unk.yaml:$line:20: error: unknown point 'Q' in 'draw' (did you mean 'O'?)"
err_has "  segments: [[O, Q]]"
err_has "                   ^"
[ "$(cat "$T/keep.html")" = keep ] || no "the existing output was changed"
ls "$T" | grep -q 'keep.html.tmp' && no "a temporary file was left"
hs check "$T/unk.yaml"
rc_is 2
end

begin error-draw-values
model col 'draw:' '  points: {P: [x, y]}' '  circles: {P: {radius: 0.1, color: rde}}'
hs animate "$T/col.yaml" -o "$T/col.html"
rc_is 2
err_has "col.yaml:$(grep -n circles "$T/col.yaml" | cut -d: -f1):38: error: unknown colour 'rde' (did you mean 'red'?)"
absent "$T/col.html" "an output was written"
model four 'draw:' '  points: {P: [x, y, 0, 1]}'
hs animate "$T/four.yaml" -o "$T/four.html"
rc_is 2
err_has "four.yaml:$(grep -n 'P: \[' "$T/four.yaml" | cut -d: -f1):14: error: a point is [x, y] or [x, y, z], found 4 entries"
model vel 'draw:' '  points:' "    P: [x, y']"
hs animate "$T/vel.yaml" -o "$T/vel.html"
rc_is 2
err_has "vel.yaml:$(grep -n "P: \[x, y'\]" "$T/vel.yaml" | cut -d: -f1):"
err_has "velocit"
absent "$T/vel.html" "an output was written"
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
err_has "short.csv:1:1: error: the CSV has no columns 'x2' (the drawing reads it), 'y2' (the drawing reads it)"
err_has "t,x1,y1"
absent "$T/short.html" "an output was written"
hs animate "$M/double_pendulum.yaml" "$T/short.csv" -o "$T/short.html" --plot E
err_has "'E' (--plot)"
sed '5s/^\([^,]*\),[^,]*,/\1,abc,/' "$T/dp.csv" >"$T/nan.csv"
hs animate "$M/double_pendulum.yaml" "$T/nan.csv" -o "$T/nan.html"
rc_is 2
err_has "nan.csv:5:6: error: field 2 of row 5 is not a number"
absent "$T/nan.html" "an output was written"
awk 'NR == 4 { print "0.5" substr($0, index($0, ",")); next } { print }' "$T/dp.csv" >"$T/back.csv"
hs animate "$M/double_pendulum.yaml" "$T/back.csv" -o "$T/back.html"
rc_is 2
err_has "back.csv:5:1: error: time goes back at row 5"
end

begin error-output
mkdir "$T/adir"
hs animate "$M/pendulum.yaml" -o "$T/adir"
rc_is 1
err_has "the output '$T/adir' must end in .html, .gif or .mp4"
mkdir "$T/dir.html"
hs animate "$M/pendulum.yaml" -o "$T/dir.html"
rc_is 1
err_has "cannot write '$T/dir.html': it is a directory"
[ -z "$(ls -A "$T/dir.html")" ] || no "something was written into the directory"
hs animate "$M/pendulum.yaml" -o "$T/p.png"
rc_is 1
err_has "must end in .html, .gif or .mp4"
hs animate "$M/pendulum.yaml" -o "$T/tr.html" --trail Q
rc_is 1
err_has "--trail: the drawing has no point 'Q'; its points are P, rod_anchor"
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
