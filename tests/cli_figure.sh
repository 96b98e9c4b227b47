#!/bin/sh
# holosim animate's still figures (issue 43, item 9), POSIX sh:
#
#   HOLOSIM=bin/holosim sh tests/cli_figure.sh       (make check runs it)
#
#   png        the pendulum (pendulum_angle, theta0 = 1) at four times:
#              tests/figure_png.py decodes the PNG (zlib, no imaging
#              library) and recomputes the view of holosim(1) from the CSV
#              of `holosim run` over the same rows: the point's pixel at
#              each time is drawn, nothing 1.15 times as far from the pivot,
#              the first time lighter than the last, the trail half-way
#              between two times, the pivot, a white background
#   kinds      .svg and .pdf of the slider-crank: an SVG document, a PDF
#   gif        the GIF's frames antialiased by cairo (decoded by
#              figure_png.py: 12 frames, each of at least 20 colours)
#   errors     a figure without --at, --at not increasing or not numbers,
#              --at for a .gif, --frames for a figure, a time after the
#              trajectory of a CSV (exit 1, nothing written)
#
# Without cairo in the build every figure is refused with how to get it
# (exit 1, no file): checked then instead, said so.

CLI_NAME=figure
CLI_TIMEOUT=120
. "$(dirname "$0")/cli_lib.sh"

M=$ROOT/models
absent() { [ -e "$1" ] && no "$2"; return 0; }

hs animate "$M/pendulum_angle.yaml" -o "$T/probe.png" --at 0,0.1 -q
if grep -q "built without cairo" "$T/err"; then
    echo "cli_figure.sh: SKIP the drawings: this holosim has no cairo (libcairo2-dev)"
    begin no-cairo
    rc_is 1
    err_has "install it (Debian: libcairo2-dev)"
    absent "$T/probe.png" "a file was written"
    end
    summary
    exit $?
fi

begin png
hs animate "$M/pendulum_angle.yaml" --set theta0=1 -o "$T/p.png" --at 0,0.4,0.8,1.2 --size 400x300
rc_is 0
err_has "wrote $T/p.png: 4 times from t = 0 to 1.2, 400x300"
# the same rows: to the last time, 2000 of them
hs run "$M/pendulum_angle.yaml" --set theta0=1 --t-end 1.2 --dt 0.0006 --columns t,x,y -o "$T/p.csv"
rc_is 0
python3 "$TESTS/figure_png.py" "$T/p.png" "$T/p.csv" 400 300 0,0.4,0.8,1.2 >"$T/px" 2>&1 ||
    no "figure_png.py: $(tail -n 2 "$T/px")"
grep -q FAIL "$T/px" && no "$(grep FAIL "$T/px" | head -n 3)"
[ "$(grep -c '^ok' "$T/px")" -ge 10 ] || no "$(grep -c '^ok' "$T/px") checks passed, want >= 10"
end

begin kinds
hs animate "$M/slider_crank.yaml" -o "$T/sc.svg" --at 0,0.2,0.4 -q
rc_is 0
head -c 200 "$T/sc.svg" | grep -q "<svg" || no "not an SVG document"
hs animate "$M/slider_crank.yaml" -o "$T/sc.pdf" --at 0,0.2,0.4 -q
rc_is 0
[ "$(head -c 5 "$T/sc.pdf")" = "%PDF-" ] || no "not a PDF"
end

begin gif
# the GIF's frames drawn by cairo too: antialiased edges (a frame of the
# double pendulum uses about 60 colours; the hand rasterizer's about 10)
hs animate "$M/double_pendulum.yaml" -o "$T/dp.gif" --frames 12 --size 200x150 -q
rc_is 0
python3 "$TESTS/figure_png.py" --gif "$T/dp.gif" >"$T/gif" 2>&1 || no "decoding: $(tail -n 1 "$T/gif")"
grep -q "^frames 12 size 200x150 " "$T/gif" || no "$(cut -c1-80 "$T/gif")"
few=$(sed 's/.* colours //' "$T/gif" | tr ',' '\n' | awk '$1 < 20' | wc -l)
[ "$few" -eq 0 ] || no "$few frames with fewer than 20 colours: $(cut -c1-120 "$T/gif")"
end

begin errors
hs animate "$M/pendulum_angle.yaml" -o "$T/e1.png"
rc_is 1
err_has "needs --at T1,T2,...: the times to draw"
hs animate "$M/pendulum_angle.yaml" -o "$T/e2.png" --at 1,0.5
rc_is 1
err_has "--at wants increasing times"
hs animate "$M/pendulum_angle.yaml" -o "$T/e3.png" --at 0,x
rc_is 1
err_has "--at wants increasing times"
hs animate "$M/pendulum_angle.yaml" -o "$T/e4.gif" --at 0,1
rc_is 1
err_has "--at is for the figures (.svg, .pdf, .png)"
hs animate "$M/pendulum_angle.yaml" -o "$T/e5.png" --at 0,1 --frames 3
rc_is 1
err_has "--frames is for .gif and .mp4"
hs run "$M/pendulum_angle.yaml" --t-end 1 --columns t,theta -o "$T/short.csv"
hs animate "$M/pendulum_angle.yaml" "$T/short.csv" -o "$T/e6.png" --at 0.5,2
rc_is 1
err_has "--at: the times must lie in the trajectory, t = 0 to 1"
for f in e1.png e2.png e3.png e4.gif e5.png e6.png; do absent "$T/$f" "$f was written"; done
end

summary
