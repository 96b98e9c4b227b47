#!/usr/bin/env python3
"""Pixels of the bouncing ball's contact in a frame of holosim animate
(tests/cli_animate_contacts.sh), decoded by tests/figure_png.py (no imaging
library):

    python3 tests/anim_contacts.py floor FILE.gif|FILE.png [FRAME]
    python3 tests/anim_contacts.py rings FILE.gif FRAME

floor: the view of holosim(1) recomputed for models/bouncing_ball.yaml
(h = 1, the ball's point B = [0, y + 0.05] of radius 0.05, the segment
F0-F1 from x = -0.3 to 0.3 at y = 0; 640x480): the row of y = 0 is grey
near both edges of the frame, beyond the segment F0-F1, and white 40
pixels above.  rings: the number of orange pixels (the impact's ring,
#ff7f0e: red high, green between, blue low and well under green).  One line per check, 'ok ...'
or 'FAIL ...'; rings prints 'orange N'."""
import os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
NS = {}
exec(open(os.path.join(HERE, 'figure_png.py')).read().split("if sys.argv[1] == '--gif':")[0], NS)


def frame(path, k):
    """rows of (r, g, b) of frame k of a GIF, or of a PNG"""
    if path.endswith('.png'):
        return NS['png'](path)[2]
    w, h, pal, frames = NS['decode'](path)
    f = frames[k]
    return [[pal[i] for i in f[y * w:(y + 1) * w]] for y in range(h)]


def floor(px):
    W, H, r = 640, 480, 0.05
    m = 0.05 * min(W, H)
    s = min((W - 2 * m) / (0.6 + 2 * r), (H - 2 * m) / (1.05 + 2 * r))
    row = H / 2 + s * 0.525            # y = 0; the view's centre y = 1.05 / 2
    grey = lambda c: max(c) < 235 and max(c) - min(c) < 30
    for x in (12, W - 12):
        band = [px[y][x] for y in (int(row) - 1, int(row), int(row) + 1)]
        print(('ok' if any(grey(c) for c in band) else 'FAIL') +
              ' the floor at x=%d, row %.1f: %s' % (x, row, band))
        c = px[int(row) - 40][x]
        print(('ok' if min(c) >= 250 else 'FAIL') + ' white above it at x=%d: %s' % (x, c))


def rings(px):
    n = sum(1 for line in px for (r, g, b) in line if r > 200 and 80 < g < 200 and b < 100 and g - b > 50)
    print('orange %d' % n)


if __name__ == '__main__':
    what, path = sys.argv[1], sys.argv[2]
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    (floor if what == 'floor' else rings)(frame(path, k))
