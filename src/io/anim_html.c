/* The animation page (anim.h): one self-contained HTML file, no network
 * and no external script.  The frames go in as base64 (times as float64,
 * the drawing's values and the plotted columns as float32, little-endian);
 * the script below (hand-written canvas 2D, an orthographic orbiting view
 * for 3D drawings) plays them in real time, interpolating linearly between
 * frames.  Test modes, chosen by the URL fragment, write JSON into
 * <pre id="hs-test">: #t=TIME (or #t=last, through the time slider) the
 * pixel of every point and its colour there; #fps=SECONDS the frames drawn
 * in that many seconds of playback. */
#include "anim.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char page_head[] =
    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
    "<meta name=\"generator\" content=\"holosim animate\">\n"
    "<style>\n"
    "body { font: 14px sans-serif; margin: 12px; color: #222; }\n"
    "#bar { display: flex; gap: 10px; align-items: center; margin-bottom: 6px; }\n"
    "#slider { flex: 1; }\n"
    "#time { font-variant-numeric: tabular-nums; min-width: 9em; }\n"
    "canvas { border: 1px solid #ccc; display: block; }\n"
    "canvas.plot { border-top: none; }\n"
    "#note { color: #666; font-size: 12px; margin-top: 4px; }\n"
    "</style>\n"
    "<script>window.addEventListener('error', function (e) {\n"
    "  var x = document.getElementById('hs-errors');\n"
    "  if (x) x.textContent += (e.message || 'error') + '\\n';\n"
    "});</script>\n";

static const char page_script[] =
    "(function () {\n"
    "  'use strict';\n"
    "  var errs = document.getElementById('hs-errors');\n"
    "  function b64(s, Ctor) {\n"
    "    var bin = atob(s), n = bin.length, u = new Uint8Array(n);\n"
    "    for (var i = 0; i < n; i++) u[i] = bin.charCodeAt(i);\n"
    "    return new Ctor(u.buffer);\n"
    "  }\n"
    "  var T = b64(HS.T, Float64Array), V = b64(HS.V, Float32Array), P = b64(HS.P, Float32Array);\n"
    "  var nf = HS.nframe, nv = HS.nval, npt = HS.names.length, dim = HS.dim, np = HS.plots.length;\n"
    "  var t0 = T[0], t1 = T[nf - 1];\n"
    "  var cv = document.getElementById('view'), g = cv.getContext('2d');\n"
    "  var W = cv.width, H = cv.height;\n"
    "  var view = { c: HS.view.c, s: HS.view.s, az: HS.view.az, el: HS.view.el };\n"
    "  var t = t0, playing = true, speed = HS.speed, trails = true, last = null;\n"
    "  var val = new Float64Array(nv), px = new Float64Array(npt), py = new Float64Array(npt),\n"
    "      pd = new Float64Array(npt);\n"
    "  var playBtn = document.getElementById('play'), slider = document.getElementById('slider'),\n"
    "      tlabel = document.getElementById('time'), speedSel = document.getElementById('speed'),\n"
    "      trailBox = document.getElementById('trails');\n"
    "\n"
    "  /* the frame at or before t (binary search) */\n"
    "  function frameAt(tt) {\n"
    "    if (tt <= T[0]) return 0;\n"
    "    if (tt >= T[nf - 1]) return nf - 1;\n"
    "    var lo = 0, hi = nf - 1;\n"
    "    while (hi - lo > 1) {\n"
    "      var mid = (lo + hi) >> 1;\n"
    "      if (T[mid] <= tt) lo = mid; else hi = mid;\n"
    "    }\n"
    "    return lo;\n"
    "  }\n"
    "  /* the drawing's values at t, linear between frames */\n"
    "  function valuesAt(tt, out) {\n"
    "    var lo = frameAt(tt), hi = lo + 1 < nf ? lo + 1 : lo;\n"
    "    var w = hi > lo ? (tt - T[lo]) / (T[hi] - T[lo]) : 0;\n"
    "    if (w < 0) w = 0;\n"
    "    if (w > 1) w = 1;\n"
    "    for (var i = 0; i < nv; i++) {\n"
    "      var a = V[lo * nv + i], b = V[hi * nv + i];\n"
    "      out[i] = a + w * (b - a);\n"
    "    }\n"
    "    return lo;\n"
    "  }\n"
    "  /* world -> pixel (anim.h, hs_anim_project) */\n"
    "  var pr = [0, 0, 0];\n"
    "  function project(x, y, z) {\n"
    "    var dx = x - view.c[0], dy = y - view.c[1];\n"
    "    if (dim === 2) {\n"
    "      pr[0] = W / 2 + view.s * dx; pr[1] = H / 2 - view.s * dy; pr[2] = 0;\n"
    "      return pr;\n"
    "    }\n"
    "    var dz = z - view.c[2], ca = Math.cos(view.az), sa = Math.sin(view.az),\n"
    "        ce = Math.cos(view.el), se = Math.sin(view.el);\n"
    "    var u = -sa * dx + ca * dy, w = -se * (ca * dx + sa * dy) + ce * dz;\n"
    "    pr[0] = W / 2 + view.s * u; pr[1] = H / 2 - view.s * w;\n"
    "    pr[2] = ce * (ca * dx + sa * dy) + se * dz;\n"
    "    return pr;\n"
    "  }\n"
    "  function projectAll(v) {\n"
    "    for (var p = 0; p < npt; p++) {\n"
    "      var q = project(v[p * dim], v[p * dim + 1], dim === 3 ? v[p * dim + 2] : 0);\n"
    "      px[p] = q[0]; py[p] = q[1]; pd[p] = q[2];\n"
    "    }\n"
    "  }\n"
    "\n"
    "  /* a faint floor grid and axes in 3D, under everything */\n"
    "  function floor3d() {\n"
    "    var lo = HS.floor, n = 8, r = HS.span / 2;\n"
    "    g.strokeStyle = '#e4e4e4'; g.lineWidth = 1;\n"
    "    for (var i = 0; i <= n; i++) {\n"
    "      var a = -r + 2 * r * i / n, q;\n"
    "      g.beginPath();\n"
    "      q = project(view.c[0] + a, view.c[1] - r, lo); g.moveTo(q[0], q[1]);\n"
    "      q = project(view.c[0] + a, view.c[1] + r, lo); g.lineTo(q[0], q[1]);\n"
    "      q = project(view.c[0] - r, view.c[1] + a, lo); g.moveTo(q[0], q[1]);\n"
    "      q = project(view.c[0] + r, view.c[1] + a, lo); g.lineTo(q[0], q[1]);\n"
    "      g.stroke();\n"
    "    }\n"
    "    var ax = ['#d62728', '#2ca02c', '#1f77b4'], names = ['x', 'y', 'z'];\n"
    "    var o = project(view.c[0] - r, view.c[1] - r, lo), ox = o[0], oy = o[1];\n"
    "    for (var k = 0; k < 3; k++) {\n"
    "      var e = [view.c[0] - r, view.c[1] - r, lo];\n"
    "      e[k] += r / 3;\n"
    "      var q2 = project(e[0], e[1], e[2]);\n"
    "      g.strokeStyle = ax[k]; g.beginPath(); g.moveTo(ox, oy); g.lineTo(q2[0], q2[1]); g.stroke();\n"
    "      g.fillStyle = ax[k]; g.fillText(names[k], q2[0] + 3, q2[1] - 3);\n"
    "    }\n"
    "  }\n"
    "  function ground(x, y) {\n"
    "    g.strokeStyle = '#404040'; g.lineWidth = 1.5;\n"
    "    g.beginPath(); g.moveTo(x, y); g.lineTo(x - 7, y + 11); g.lineTo(x + 7, y + 11);\n"
    "    g.closePath(); g.stroke();\n"
    "    g.beginPath(); g.moveTo(x - 11, y + 11); g.lineTo(x + 11, y + 11); g.stroke();\n"
    "    for (var k = -9; k <= 9; k += 6) {\n"
    "      g.beginPath(); g.moveTo(x + k, y + 11); g.lineTo(x + k - 4, y + 16); g.stroke();\n"
    "    }\n"
    "  }\n"
    "  function trail(p, fi) {\n"
    "    var tmin = t - HS.trailTime, f0 = frameAt(tmin), step = Math.max(1, Math.ceil((fi - f0) / 600));\n"
    "    g.strokeStyle = HS.rgb[p]; g.globalAlpha = 0.45; g.lineWidth = 1.5;\n"
    "    g.beginPath();\n"
    "    var first = true;\n"
    "    for (var f = f0; f <= fi; f += step) {\n"
    "      var q = project(V[f * nv + p * dim], V[f * nv + p * dim + 1],\n"
    "                      dim === 3 ? V[f * nv + p * dim + 2] : 0);\n"
    "      if (first) { g.moveTo(q[0], q[1]); first = false; } else g.lineTo(q[0], q[1]);\n"
    "    }\n"
    "    g.lineTo(px[p], py[p]);\n"
    "    g.stroke();\n"
    "    g.globalAlpha = 1;\n"
    "  }\n"
    "\n"
    "  var plots = [], lineColours = [], dotColours = [];\n"
    "  HS.items.forEach(function (it) {\n"
    "    if (it.k === 0 && lineColours.indexOf(it.c) < 0) lineColours.push(it.c);\n"
    "  });\n"
    "  HS.rgb.forEach(function (c) { if (dotColours.indexOf(c) < 0) dotColours.push(c); });\n"
    "  function drawScene() {\n"
    "    var fi = valuesAt(t, val);\n"
    "    projectAll(val);\n"
    "    g.fillStyle = '#ffffff'; g.fillRect(0, 0, W, H);\n"
    "    if (dim === 3) floor3d();\n"
    "    if (trails) for (var k = 0; k < HS.trail.length; k++) trail(HS.trail[k], fi);\n"
    "    var items = HS.items, i, it;\n"
    "    for (i = 0; i < items.length; i++) {\n"
    "      it = items[i];\n"
    "      if (it.k === 2) ground(px[it.p[0]], py[it.p[0]]);\n"
    "    }\n"
;
/* ... the contacts' boundaries here (page_bounds) ... */
static const char page_script2[] =
    "    g.lineCap = 'round'; g.lineJoin = 'round'; g.lineWidth = 3;\n"
    "    for (var ci = 0; ci < lineColours.length; ci++) {   /* one path per colour */\n"
    "      g.strokeStyle = lineColours[ci]; g.beginPath();\n"
    "      for (i = 0; i < items.length; i++) {\n"
    "        it = items[i];\n"
    "        if (it.k !== 0 || it.c !== lineColours[ci]) continue;\n"
    "        g.moveTo(px[it.p[0]], py[it.p[0]]);\n"
    "        for (var j = 1; j < it.p.length; j++) g.lineTo(px[it.p[j]], py[it.p[j]]);\n"
    "      }\n"
    "      g.stroke();\n"
    "    }\n"
    "    /* circles (spheres in 3D), the farthest first */\n"
    "    var circ = [];\n"
    "    for (i = 0; i < items.length; i++) if (items[i].k === 1) circ.push(items[i]);\n"
    "    circ.sort(function (a, b) { return pd[a.p[0]] - pd[b.p[0]]; });\n"
    "    for (i = 0; i < circ.length; i++) {\n"
    "      it = circ[i];\n"
    "      var r = Math.abs(val[it.r]) * view.s, x = px[it.p[0]], y = py[it.p[0]];\n"
    "      g.beginPath(); g.arc(x, y, r, 0, 2 * Math.PI);\n"
    "      if (dim === 3) {\n"
    "        var gr = g.createRadialGradient(x - r / 3, y - r / 3, r / 10, x, y, r);\n"
    "        gr.addColorStop(0, '#ffffff'); gr.addColorStop(1, it.c);\n"
    "        g.fillStyle = gr; g.fill();\n"
    "      } else {\n"
    "        g.globalAlpha = 0.25; g.fillStyle = it.c; g.fill(); g.globalAlpha = 1;\n"
    "        g.strokeStyle = it.c; g.lineWidth = 2; g.stroke();\n"
    "      }\n"
    "    }\n"
    "    for (ci = 0; ci < dotColours.length; ci++) {\n"
    "      g.fillStyle = dotColours[ci]; g.beginPath();\n"
    "      for (var p = 0; p < npt; p++) {\n"
    "        if (!HS.dot[p] || HS.rgb[p] !== dotColours[ci]) continue;\n"
    "        g.moveTo(px[p] + 4, py[p]); g.arc(px[p], py[p], 4, 0, 2 * Math.PI);\n"
    "      }\n"
    "      g.fill();\n"
    "    }\n"
;
/* ... the contacts' rings here (page_flashes) ... */
static const char page_script3[] =
    "    tlabel.textContent = 't = ' + t.toFixed(3) + ' s';\n"
    "    for (i = 0; i < plots.length; i++) plotCursor(plots[i]);\n"
    "    return fi;\n"
    "  }\n"
    "\n"
    "  /* the small plots: the curve drawn once, a cursor each frame */\n"
    "  function makePlot(k) {\n"
    "    var c = document.createElement('canvas');\n"
    "    c.width = W; c.height = 80; c.className = 'plot';\n"
    "    document.getElementById('plots').appendChild(c);\n"
    "    var base = document.createElement('canvas');\n"
    "    base.width = W; base.height = 80;\n"
    "    var b = base.getContext('2d'), lo = Infinity, hi = -Infinity, f;\n"
    "    for (f = 0; f < nf; f++) {\n"
    "      var y = P[f * np + k];\n"
    "      if (isFinite(y)) { if (y < lo) lo = y; if (y > hi) hi = y; }\n"
    "    }\n"
    "    if (!(lo <= hi)) { lo = 0; hi = 1; }\n"
    "    if (hi === lo) { hi += 0.5; lo -= 0.5; }\n"
    "    b.fillStyle = '#fafafa'; b.fillRect(0, 0, W, 80);\n"
    "    b.strokeStyle = '#1f77b4'; b.lineWidth = 1; b.beginPath();\n"
    "    var x0 = 40, w = W - 50, first = true;\n"
    "    function X(tt) { return x0 + w * (tt - t0) / (t1 > t0 ? t1 - t0 : 1); }\n"
    "    function Y(v) { return 70 - 60 * (v - lo) / (hi - lo); }\n"
    "    var step = Math.max(1, Math.floor(nf / (4 * w)));\n"
    "    for (f = 0; f < nf; f += step) {\n"
    "      var v = P[f * np + k];\n"
    "      if (!isFinite(v)) continue;\n"
    "      if (first) { b.moveTo(X(T[f]), Y(v)); first = false; } else b.lineTo(X(T[f]), Y(v));\n"
    "    }\n"
    "    b.stroke();\n"
    "    b.fillStyle = '#333'; b.font = '11px sans-serif';\n"
    "    b.fillText(HS.plots[k], 4, 14);\n"
    "    b.fillText(hi.toPrecision(4), 4, 28); b.fillText(lo.toPrecision(4), 4, 72);\n"
    "    return { c: c, g: c.getContext('2d'), base: base, X: X };\n"
    "  }\n"
    "  function plotCursor(pl) {\n"
    "    pl.g.drawImage(pl.base, 0, 0);\n"
    "    var x = pl.X(t);\n"
    "    pl.g.strokeStyle = '#d62728'; pl.g.beginPath(); pl.g.moveTo(x, 2); pl.g.lineTo(x, 78);\n"
    "    pl.g.stroke();\n"
    "  }\n"
    "  for (var k = 0; k < np; k++) plots.push(makePlot(k));\n"
    "\n"
    "  /* controls */\n"
    "  var SL = 100000;\n"
    "  slider.max = SL;\n"
    "  function syncSlider() { slider.value = t1 > t0 ? Math.round(SL * (t - t0) / (t1 - t0)) : 0; }\n"
    "  function setPlaying(on) { playing = on; playBtn.textContent = on ? 'pause' : 'play'; last = null; }\n"
    "  playBtn.onclick = function () { if (!playing && t >= t1) t = t0; setPlaying(!playing); };\n"
    "  slider.oninput = function () {\n"
    "    setPlaying(false);\n"
    "    var s = +slider.value;\n"
    "    t = s >= SL ? t1 : t0 + (t1 - t0) * s / SL;\n"
    "    drawScene();\n"
    "  };\n"
    "  var speeds = [0.1, 0.25, 0.5, 1, 2, 4, 10];\n"
    "  if (speeds.indexOf(speed) < 0) { speeds.push(speed); speeds.sort(function (a, b) { return a - b; }); }\n"
    "  for (var si = 0; si < speeds.length; si++) {\n"
    "    var o = document.createElement('option');\n"
    "    o.value = speeds[si]; o.textContent = speeds[si] + 'x';\n"
    "    if (speeds[si] === speed) o.selected = true;\n"
    "    speedSel.appendChild(o);\n"
    "  }\n"
    "  speedSel.onchange = function () { speed = +speedSel.value; };\n"
    "  trailBox.checked = true;\n"
    "  trailBox.onchange = function () { trails = trailBox.checked; drawScene(); };\n"
    "  document.addEventListener('keydown', function (e) {\n"
    "    if (e.key === ' ') { e.preventDefault(); playBtn.onclick(); }\n"
    "  });\n"
    "  if (dim === 3) {   /* orbit: drag; zoom: wheel */\n"
    "    var drag = null;\n"
    "    cv.onmousedown = function (e) { drag = [e.clientX, e.clientY]; };\n"
    "    window.addEventListener('mouseup', function () { drag = null; });\n"
    "    cv.onmousemove = function (e) {\n"
    "      if (!drag) return;\n"
    "      view.az -= (e.clientX - drag[0]) * 0.01;\n"
    "      view.el = Math.max(-1.5, Math.min(1.5, view.el + (e.clientY - drag[1]) * 0.01));\n"
    "      drag = [e.clientX, e.clientY];\n"
    "      if (!playing) drawScene();\n"
    "    };\n"
    "    cv.onwheel = function (e) {\n"
    "      e.preventDefault(); view.s *= e.deltaY < 0 ? 1.1 : 1 / 1.1;\n"
    "      if (!playing) drawScene();\n"
    "    };\n"
    "  }\n"
    "\n"
    "  /* test modes (#t=TIME, #t=last, #fps=SECONDS): the result as JSON in #hs-test */\n"
    "  var mode = /^#(t|fps)=([-+0-9.eE]+|last)$/.exec(location.hash), out = document.getElementById('hs-test');\n"
    "  function report(o) { out.textContent = JSON.stringify(o); document.title = 'done'; }\n"
    "  if (mode && mode[1] === 't') {\n"
    "    if (mode[2] === 'last') {\n"
    "      slider.value = SL; slider.oninput();\n"
    "    } else {\n"
    "      setPlaying(false); t = +mode[2]; drawScene(); syncSlider();\n"
    "    }\n"
    "    var fi = frameAt(t), pix = [], pts = [], img = g.getImageData(0, 0, W, H).data;\n"
    "    for (var p = 0; p < npt; p++) {\n"
    "      var ix = Math.round(px[p]), iy = Math.round(py[p]), rgb = null;\n"
    "      if (ix >= 0 && iy >= 0 && ix < W && iy < H) {\n"
    "        var o4 = 4 * (iy * W + ix);\n"
    "        rgb = [img[o4], img[o4 + 1], img[o4 + 2]];\n"
    "      }\n"
    "      pts.push([px[p], py[p]]); pix.push(rgb);\n"
    "    }\n"
    "    report({ t: t, frame: fi, frame_t: T[fi], nframe: nf, dim: dim, names: HS.names,\n"
    "             points: pts, rgb: pix, colors: HS.rgb, s: view.s, c: view.c, az: view.az,\n"
    "             el: view.el, W: W, H: H, errors: errs.textContent });\n"
    "    return;\n"
    "  }\n"
    "  var fpsRun = mode && mode[1] === 'fps' ? { secs: +mode[2], n: 0, start: null } : null;\n"
    "  function tick(now) {\n"
    "    if (last !== null && playing) {\n"
    "      t += (now - last) / 1000 * speed;\n"
    "      if (t > t1) t = t0 + (t - t1) % (t1 > t0 ? t1 - t0 : 1);\n"
    "    }\n"
    "    last = now;\n"
    "    drawScene();\n"
    "    syncSlider();\n"
    "    if (fpsRun) {\n"
    "      if (fpsRun.start === null) fpsRun.start = now;\n"
    "      fpsRun.n++;\n"
    "      var el = (now - fpsRun.start) / 1000;\n"
    "      if (el >= fpsRun.secs) {\n"
    "        report({ frames: fpsRun.n - 1, seconds: el, fps: (fpsRun.n - 1) / el,\n"
    "                 errors: errs.textContent });\n"
    "        return;\n"
    "      }\n"
    "    }\n"
    "    requestAnimationFrame(tick);\n"
    "  }\n"
    "  drawScene();\n"
    "  requestAnimationFrame(tick);\n"
    "})();\n";

/* Inserted into drawScene for a model with contacts (anim_contact.c):
 * the boundaries (world segments, HS.bounds: those that do not move),
 * and a ring at each marked point (HS.impacts: t, x, y, z, r per point)
 * for HS.flash seconds of playback after its impact. */
static const char page_bounds[] =
    "    var B = HS.bounds;\n"
    "    if (B.length) {\n"
    "      g.strokeStyle = '#808080'; g.lineWidth = 1.5; g.lineCap = 'round'; g.beginPath();\n"
    "      for (i = 0; i + 3 < B.length; i += 4) {\n"
    "        var b0 = project(B[i], B[i + 1], 0); g.moveTo(b0[0], b0[1]);\n"
    "        b0 = project(B[i + 2], B[i + 3], 0); g.lineTo(b0[0], b0[1]);\n"
    "      }\n"
    "      g.stroke();\n"
    "    }\n";
static const char page_flashes[] =
    "    var I = HS.impacts, dur = HS.flash * speed;\n"
    "    g.strokeStyle = '#ff7f0e'; g.lineWidth = 2.5;\n"
    "    for (i = 0; i + 4 < I.length; i += 5) {\n"
    "      var age = (t - I[i]) / dur;\n"
    "      if (!(age >= 0 && age < 1)) continue;\n"
    "      var fq = project(I[i + 1], I[i + 2], I[i + 3]);\n"
    "      g.globalAlpha = 1 - 0.6 * age; g.beginPath();\n"
    "      g.arc(fq[0], fq[1], I[i + 4] * view.s + 4 + 10 * age, 0, 2 * Math.PI); g.stroke();\n"
    "    }\n"
    "    g.globalAlpha = 1;\n";

/* ---------- a buffered writer with base64 ---------- */

typedef struct wr {
    FILE *f;
    int failed;
    unsigned char in[3];
    int nin;
    size_t col;
} wr;

static void put(wr *w, const char *s)
{
    if (fputs(s, w->f) == EOF)
        w->failed = 1;
}

static void putf(wr *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(wr *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (vfprintf(w->f, fmt, ap) < 0)
        w->failed = 1;
    va_end(ap);
}

/* Text into HTML (the title, the note): entities, which a browser shows
 * as the characters (a JS escape there showed as "Newton\x27s"); control
 * characters as spaces. */
static void put_html(wr *w, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        const char *ent = c == '&' ? "&amp;" : c == '<' ? "&lt;" : c == '>' ? "&gt;"
                        : c == '"' ? "&quot;" : c == '\'' ? "&#39;" : NULL;
        if (ent)
            put(w, ent);
        else
            fputc(c < 0x20 || c == 0x7f ? ' ' : c, w->f);
    }
}

/* Text into a JS string in single quotes inside <script>: what could end
 * either escaped. */
static void put_text(wr *w, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '\'' || c == '\\' || c == '<' || c == '>' || c == '&' || c == '"' || c < 0x20)
            putf(w, "\\x%02x", c);
        else
            fputc(c, w->f);
    }
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void b64_flush(wr *w)
{
    unsigned v = (unsigned)w->in[0] << 16 | (unsigned)w->in[1] << 8 | w->in[2];
    char o[5] = { b64[v >> 18 & 63], b64[v >> 12 & 63], b64[v >> 6 & 63], b64[v & 63], 0 };
    if (w->nin < 3)
        o[3] = '=';
    if (w->nin < 2)
        o[2] = '=';
    put(w, o);
    w->nin = 0;
    w->in[0] = w->in[1] = w->in[2] = 0;
}

static void b64_bytes(wr *w, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        w->in[w->nin++] = p[i];
        if (w->nin == 3)
            b64_flush(w);
    }
}

static void b64_end(wr *w)
{
    if (w->nin)
        b64_flush(w);
}

/* little-endian, whatever the host */
static void b64_f64(wr *w, double x)
{
    uint64_t u;
    memcpy(&u, &x, 8);
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)(u >> (8 * i));
    b64_bytes(w, b, 8);
}

static void b64_f32(wr *w, float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    unsigned char b[4];
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(u >> (8 * i));
    b64_bytes(w, b, 4);
}

static void put_rgb(wr *w, unsigned rgb)
{
    putf(w, "'#%06x'", rgb & 0xffffff);
}

/* HS.bounds and HS.impacts (page_bounds, page_flashes). */
static void put_contacts(wr *w, const hs_anim *a, const hs_anim_view *v)
{
    size_t n = 0;
    double *seg = hs_anim_bounds(a, v, a->t[0], 1, &n);   /* none that moves */
    putf(w, "  flash: %.17g,\n  bounds: [", HS_ANIM_FLASH_TIME);
    for (size_t k = 0; k < 4 * n; k++)
        putf(w, "%s%.9g", k ? (k % 16 ? "," : ",\n    ") : "", seg[k]);
    free(seg);
    put(w, "],\n  impacts: [");
    hs_anim_flash f[64];
    size_t nout = 0;
    for (size_t k = 0; k < a->nimpact && nout < 100000; k++) {
        /* the marks at the impact's own time: this impact's, and those of
         * any other at the same time (each written once) */
        if (k && a->impact_t[k] == a->impact_t[k - 1])
            continue;
        size_t nf = hs_anim_flashes(a, a->impact_t[k], 1e-300, f, 64);
        for (size_t i = 0; i < nf; i++) {
            if (f[i].age != 0)
                continue;
            putf(w, "%s%.17g,%.9g,%.9g,%.9g,%.9g", nout++ ? (nout % 4 ? "," : ",\n    ") : "",
                 a->impact_t[k], f[i].p[0], f[i].p[1], f[i].p[2], f[i].r);
        }
    }
    put(w, "],\n");
}

int hs_anim_write_html(const hs_anim *a, FILE *f)
{
    const hs_model *m = a->m;
    const hs_drawing *d = m->draw;
    wr w = { .f = f };
    hs_anim_view v;
    hs_anim_view_init(a, &v);
    int contacts = m->ncontact > 0;
    put(&w, page_head);
    put(&w, "<title>");
    put_html(&w, m->name[0] ? m->name : m->file);
    put(&w, " (holosim animate)</title>\n</head>\n<body>\n<div id=\"bar\">"
        "<button id=\"play\">pause</button>"
        "<input type=\"range\" id=\"slider\" min=\"0\" max=\"100000\" value=\"0\">"
        "<span id=\"time\"></span>"
        "<label>speed <select id=\"speed\"></select></label>"
        "<label><input type=\"checkbox\" id=\"trails\" checked> trails</label></div>\n");
    putf(&w, "<canvas id=\"view\" width=\"%d\" height=\"%d\"></canvas>\n<div id=\"plots\">"
         "</div>\n<div id=\"note\">", a->width, a->height);
    put_html(&w, m->name[0] ? m->name : m->file);
    putf(&w, ": %zu frames from t = %.6g to %.6g s%s; space: play/pause%s</div>\n",
         a->nframe, a->t[0], a->t[a->nframe - 1], a->thinned ? " (thinned)" : "",
         d->dim == 3 ? "; drag: orbit; wheel: zoom" : "");
    put(&w, "<pre id=\"hs-test\" hidden></pre><pre id=\"hs-errors\" hidden></pre>\n<script>\n");
    /* the configuration */
    putf(&w, "var HS = {\n  dim: %d, nframe: %zu, nval: %zu, speed: %.17g, trailTime: %.17g,\n",
         d->dim, a->nframe, a->nval, a->speed, a->trail_time);
    put(&w, "  names: [");
    for (size_t i = 0; i < d->npt; i++) {
        put(&w, i ? ", '" : "'");
        put_text(&w, d->ptname[i]);
        put(&w, "'");
    }
    put(&w, "],\n  rgb: [");
    for (size_t i = 0; i < d->npt; i++) {
        put(&w, i ? ", " : "");
        put_rgb(&w, d->ptrgb[i]);
    }
    put(&w, "],\n  dot: [");
    for (size_t i = 0; i < d->npt; i++)
        putf(&w, "%s%d", i ? ", " : "", d->ptdot[i]);
    put(&w, "],\n  items: [");
    for (size_t i = 0; i < d->nitem; i++) {
        const hs_draw_item *it = &d->item[i];
        putf(&w, "%s\n    { k: %d, c: ", i ? "," : "", it->kind == HS_DRAW_LINE ? 0
             : it->kind == HS_DRAW_CIRCLE ? 1 : 2);
        put_rgb(&w, it->rgb);
        put(&w, ", p: [");
        for (size_t j = 0; j < it->npt; j++)
            putf(&w, "%s%zu", j ? ", " : "", it->pt[j]);
        putf(&w, "], r: %zu }", it->kind == HS_DRAW_CIRCLE ? it->rout : 0);
    }
    put(&w, "],\n  trail: [");
    int first = 1;
    for (size_t i = 0; i < d->npt; i++)
        if (a->trail[i]) {
            putf(&w, "%s%zu", first ? "" : ", ", i);
            first = 0;
        }
    put(&w, "],\n  plots: [");
    for (size_t i = 0; i < a->nplot; i++) {
        put(&w, i ? ", '" : "'");
        put_text(&w, a->plotname[i]);
        put(&w, "'");
    }
    double zlo, span;
    hs_anim_floor(a, &v, &zlo, &span);
    putf(&w, "],\n  view: { c: [%.17g, %.17g, %.17g], s: %.17g, az: %.17g, el: %.17g },\n"
         "  floor: %.17g, span: %.17g,\n", v.c[0], v.c[1], v.c[2], v.s, v.az, v.el, zlo, span);
    if (contacts)
        put_contacts(&w, a, &v);
    put(&w, "  T: '");
    for (size_t i = 0; i < a->nframe; i++)
        b64_f64(&w, a->t[i]);
    b64_end(&w);
    put(&w, "',\n  V: '");
    for (size_t i = 0; i < a->nframe * a->nval; i++)
        b64_f32(&w, a->val[i]);
    b64_end(&w);
    put(&w, "',\n  P: '");
    for (size_t i = 0; i < a->nframe * a->nplot; i++)
        b64_f32(&w, a->plot[i]);
    b64_end(&w);
    put(&w, "'\n};\n");
    put(&w, page_script);
    put(&w, contacts ? page_bounds : "");
    put(&w, page_script2);
    put(&w, contacts ? page_flashes : "");
    put(&w, page_script3);
    put(&w, "</script>\n</body>\n</html>\n");
    if (fflush(f) != 0 || ferror(f))
        w.failed = 1;
    return w.failed ? -1 : 0;
}
