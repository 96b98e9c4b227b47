#!/usr/bin/env python3
"""Pixels of a holosim figure (tests/cli_figure.sh), with no imaging library:
the PNG decoded with zlib (8-bit RGB or RGBA, the five filters).

    python3 tests/figure_png.py FIG.png RUN.csv W H T1,T2,...
    python3 tests/figure_png.py --gif ANIM.gif     (frames, the colours of each)

RUN.csv: t, x, y of the drawn point P (the pivot O at the origin), the rows
the figure drew.  Recomputes the view of holosim(1) (the bounding box of
every row from T1 to the last time, a margin of 5% of the smaller side),
then prints one line per check: 'ok ...' or 'FAIL ...'."""
import csv, struct, sys, zlib


def png(path):
    b = open(path, 'rb').read()
    assert b[:8] == b'\x89PNG\r\n\x1a\n', 'not a PNG'
    i, idat, w = 8, b'', None
    while i < len(b):
        n, = struct.unpack('>I', b[i:i + 4]); k = b[i + 4:i + 8]; d = b[i + 8:i + 8 + n]
        if k == b'IHDR':
            w, h, depth, ctype = struct.unpack('>IIBB', d[:10])
            assert depth == 8 and ctype in (2, 6), (depth, ctype)
            bpp = 3 if ctype == 2 else 4
        elif k == b'IDAT':
            idat += d
        i += 12 + n
    raw, stride, out, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for r in range(h):
        f, line = raw[r * (stride + 1)], bytearray(raw[r * (stride + 1) + 1:(r + 1) * (stride + 1)])
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            c = prev[x - bpp] if x >= bpp else 0
            u = prev[x]
            if f == 1: line[x] = (line[x] + a) & 255
            elif f == 2: line[x] = (line[x] + u) & 255
            elif f == 3: line[x] = (line[x] + (a + u) // 2) & 255
            elif f == 4:
                p = a + u - c; pa, pb, pc = abs(p - a), abs(p - u), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else u if pb <= pc else c)) & 255
        out.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, out


def main():
    fig, run, W, H, times = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), \
        [float(s) for s in sys.argv[5].split(',')]
    w, h, px = png(fig)
    print(('ok' if (w, h) == (W, H) else 'FAIL') + ' size %dx%d' % (w, h))
    rows = [tuple(map(float, r)) for r in list(csv.reader(open(run)))[1:]]
    inside = [r for r in rows if times[0] - 1e-12 <= r[0] <= times[-1] + 1e-12]
    xs = [0.0] + [r[1] for r in inside]; ys = [0.0] + [r[2] for r in inside]
    m = 0.05 * min(W, H)
    s = min((W - 2 * m) / (max(xs) - min(xs)), (H - 2 * m) / (max(ys) - min(ys)))
    cx, cy = (max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2
    pix = lambda x, y: (W / 2 + s * (x - cx), H / 2 - s * (y - cy))
    at = lambda t: min(rows, key=lambda r: abs(r[0] - t))
    white = lambda c: min(c) >= 250
    def get(x, y):
        return px[int(round(y - 0.5))][int(round(x - 0.5))]
    shades = []
    for i, t in enumerate(times):
        r = at(t)
        X, Y = pix(r[1], r[2])
        c = get(X, Y)
        shades.append(sum(c))
        print(('FAIL' if white(c) else 'ok') + ' the point at t=%g: pixel (%.1f, %.1f) is %s' % (t, X, Y, c))
        # beyond the point, 1.15 times as far from the pivot: nothing drawn
        Xb, Yb = pix(1.15 * r[1], 1.15 * r[2])
        if 0 <= Xb < W and 0 <= Yb < H and Yb > 30:      # (not the caption)
            c = get(Xb, Yb)
            print(('ok' if white(c) else 'FAIL') + ' nothing beyond it (%.1f, %.1f): %s' % (Xb, Yb, c))
    # the earlier the lighter: the first time's dot lighter than the last's
    print(('ok' if shades[0] > shades[-1] + 60 else 'FAIL') +
          ' the first time lighter than the last (%d, %d)' % (shades[0], shades[-1]))
    # the trail: half-way between two times, a coloured pixel within 1.5 px
    for a, b in zip(times, times[1:]):
        r = at((a + b) / 2)
        X, Y = pix(r[1], r[2])
        hit = [get(X + dx, Y + dy) for dx in (-1.5, -0.5, 0.5, 1.5) for dy in (-1.5, -0.5, 0.5, 1.5)
               if 0 <= X + dx < W and 0 <= Y + dy < H]
        ok = any(not white(c) for c in hit)
        print(('ok' if ok else 'FAIL') + ' the trail at t=%g (%.1f, %.1f)' % ((a + b) / 2, X, Y))
    # the pivot O: drawn; the corner opposite the caption: white
    X, Y = pix(0, 0)
    print(('FAIL' if white(get(X, Y)) else 'ok') + ' the pivot at (%.1f, %.1f)' % (X, Y))
    print(('ok' if white(px[H - 2][W - 2]) else 'FAIL') + ' the background white')


# A GIF89a decoded (LZW by hand): its frames as lists of palette indices.
def decode(path):
    b = open(path,'rb').read(); assert b[:6]==b'GIF89a'
    w,h,flags = struct.unpack('<HHB', b[6:11]); i=13
    pal=[]
    if flags & 0x80:
        n = 2 << (flags & 7); pal=[tuple(b[i+3*k:i+3*k+3]) for k in range(n)]; i += 3*n
    frames=[]
    while i < len(b):
        if b[i]==0x21:
            i+=2
            while b[i]: i+=b[i]+1
            i+=1
        elif b[i]==0x2c:
            x,y,fw,fh,fl = struct.unpack('<HHHHB', b[i+1:i+10]); i+=10
            mcs=b[i]; i+=1; data=b''
            while b[i]: data+=b[i+1:i+1+b[i]]; i+=b[i]+1
            i+=1
            # LZW
            clear=1<<mcs; eoi=clear+1; size=mcs+1; dic=None; out=[]; bits=0; nb=0; prev=None
            def reset():
                return [[k] for k in range(clear)]+[None,None]
            dic=reset(); pos=0
            while True:
                while nb < size and pos < len(data):
                    bits |= data[pos] << nb; nb += 8; pos+=1
                if nb < size: break
                code = bits & ((1<<size)-1); bits >>= size; nb -= size
                if code==clear: dic=reset(); size=mcs+1; prev=None; continue
                if code==eoi: break
                if code < len(dic): entry=dic[code]
                else: entry=prev+[prev[0]]
                out+=entry
                if prev is not None:
                    dic.append(prev+[entry[0]])
                    if len(dic)==(1<<size) and size<12: size+=1
                prev=entry
            frames.append(out)
        elif b[i]==0x3b: break
        else: raise Exception('bad %x'%b[i])
    return w,h,pal,frames


if sys.argv[1] == '--gif':
    w, h, pal, frames = decode(sys.argv[2])
    print('frames %d size %dx%d colours %s' % (len(frames), w, h,
          ','.join(str(len(set(f))) for f in frames)))
else:
    main()
