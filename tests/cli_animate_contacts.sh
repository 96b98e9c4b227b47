#!/bin/sh
# holosim animate: contacts drawn and impacts marked (issue 37, item 4)
# and the run's rows handed over in memory (issue 36, item 2), POSIX sh:
#
#   HOLOSIM=bin/holosim sh tests/cli_animate_contacts.sh   (make check runs it)
#
#   floor      the bouncing ball's GIF (decoded by tests/anim_contacts.py,
#              through tests/figure_png.py): the floor y = 0, the boundary
#              of its contact, is drawn across the whole frame (grey at both
#              edges of the row of y = 0, beyond the drawing's own segment),
#              white above; the same in a PNG figure (with cairo)
#   impact     the first impact at sqrt(2 h/g) = 0.4515 s: the frame nearest
#              it (t = 0.45, just before) and the next show the ring, frames
#              far from any impact (t = 0.2, 0.8) do not; a GIF made from
#              the run's CSV has no ring (a CSV does not carry the impacts)
#   page       the page carries the floor's segments and the impacts (the
#              cradle's: two points each, no boundary, a gap between two
#              points); --events writes its file as `run` does
#   memory     the frames come from the run's doubles, not from rounded
#              text: --precision 3 leaves the page as it was
#
# Without python3 the decoding tests are skipped, said so.

CLI_NAME=animate_contacts
CLI_TIMEOUT=120
. "$(dirname "$0")/cli_lib.sh"

M=$ROOT/models
PY=1
command -v python3 >/dev/null 2>&1 || {
    PY=0
    echo "cli_animate_contacts.sh: SKIP the decoding tests: python3 not found"
}
CAIRO=1
hs animate "$M/bouncing_ball.yaml" -o "$T/probe.png" --at 0,0.1 -q
grep -q "built without cairo" "$T/err" && CAIRO=0
# check FILE LINES: every line of FILE 'ok ...', else no with the failures
check() {
    grep -q '^FAIL' "$1" && no "$(grep '^FAIL' "$1" | head -n 2 | cut -c1-160 | tr '\n' ';')"
    [ -s "$1" ] || no "nothing decoded"
    return 0
}
# orange GIF FRAME: the number of the ring's pixels in that frame
orange() { python3 "$TESTS/anim_contacts.py" rings "$1" "$2" | sed -n 's/^orange //p'; }

if [ "$PY" = 1 ]; then
    begin floor
    hs animate "$M/bouncing_ball.yaml" -o "$T/bb.gif" --t-end 1 --frames 21 -q
    rc_is 0
    python3 "$TESTS/anim_contacts.py" floor "$T/bb.gif" 0 >"$T/floor" 2>&1
    check "$T/floor"
    if [ "$CAIRO" = 1 ]; then
        hs animate "$M/bouncing_ball.yaml" -o "$T/bb.png" --at 0,0.4 -q
        rc_is 0
        python3 "$TESTS/anim_contacts.py" floor "$T/bb.png" >"$T/floor" 2>&1
        check "$T/floor"
    fi
    end

    begin impact
    # frames every 0.05 s: 9 is t = 0.45, 10 is 0.5; 4 is 0.2, 16 is 0.8
    for k in 9 10; do
        n=$(orange "$T/bb.gif" $k)
        [ "${n:-0}" -gt 50 ] || no "frame $k has ${n:-no} ring pixels"
    done
    for k in 4 16; do
        n=$(orange "$T/bb.gif" $k)
        [ "${n:-1}" -eq 0 ] || no "frame $k, far from the impacts, has $n ring pixels"
    done
    hs run "$M/bouncing_ball.yaml" --t-end 1 -o "$T/bb.csv" -q
    hs animate "$M/bouncing_ball.yaml" "$T/bb.csv" -o "$T/csv.gif" --frames 21 -q
    rc_is 0
    n=$(orange "$T/csv.gif" 10)
    [ "${n:-1}" -eq 0 ] || no "the GIF of a CSV has $n ring pixels"
    end
fi

begin page
hs animate "$M/bouncing_ball.yaml" -o "$T/bb.html" --t-end 1 -q
rc_is 0
grep -q "^  bounds: \[-" "$T/bb.html" || no "the page has no floor"
grep -q "^  impacts: \[0.4515" "$T/bb.html" || no "the page's first impact: $(grep -o 'impacts: .\{0,30\}' "$T/bb.html")"
hs animate "$M/newtons_cradle.yaml" -o "$T/nc.html" --events "$T/ev.csv" -q
rc_is 0
grep -q "^  bounds: \[\]," "$T/nc.html" || no "the cradle has a boundary"
n=$(sed -n 's/^  impacts: \[//p' "$T/nc.html" | tr ',' '\n' | wc -l)
[ "$n" -ge 10 ] || no "the cradle's impacts: $n numbers"
[ "$(head -n 1 "$T/ev.csv" | cut -d, -f1)" = event ] || no "no events file"
grep -q "^c12:impact," "$T/ev.csv" || no "the events file lacks c12:impact"
hs animate "$M/pendulum.yaml" -o "$T/p.html" --t-end 1 -q
grep -q "bounds:" "$T/p.html" && no "a model without contacts carries bounds"
end

begin memory
hs animate "$M/double_pendulum.yaml" -o "$T/a.html" --t-end 1 -q
hs animate "$M/double_pendulum.yaml" -o "$T/b.html" --t-end 1 --precision 3 -q
rc_is 0
cmp -s "$T/a.html" "$T/b.html" || no "--precision changed the frames"
end

summary
