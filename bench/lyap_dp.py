#!/usr/bin/env python3
# Independent reference for `holosim lyapunov` (issue 38): the largest
# Lyapunov exponent of the planar double pendulum in angle form
# (models/double_pendulum_angles.yaml: m1 = m2 = l1 = l2 = 1, g = 9.81,
# angles from the downward vertical), by Benettin's method.  numpy only
# (no scipy): an adaptive Dormand-Prince 5(4) integrator written here,
# GSL's standard error control (atol + rtol |y|) on the whole augmented
# system (state and tangent vector, as holosim does).  The tangent vector
# is carried by the linearized equations, J(x) dx, formed by complex-step
# differentiation: a(x + i h dx) = a(x) + i h J dx + O(h^2), h = 1e-30, so one
# complex evaluation per stage gives both the motion and the tangent
# (exact to round-off, no symbolic or finite-difference Jacobian).
# Renormalized every DT in the Euclidean norm of (dth1, dth2, dw1, dw2);
# lambda(T) = sum of log growth factors / T.
#
# The runs are vectorized over an ensemble: member 0 starts exactly at
# (th1, th2); the others at th1 + eps * u, th2 + eps * v with u, v uniform in
# [-1, 1] (seeded), so the ensemble shows the spread of the finite-time
# exponent over starts that the integrator cannot tell apart after a few
# Lyapunov times.  Each member has its own step size.
#
#   /usr/bin/python3 bench/lyap_dp.py [--th1 X] [--th2 X] [--T 200] [--every 0.1]
#       [--rtol 1e-10] [--atol 1e-10] [--ens 1] [--eps 1e-9] [--seed 1]
#       [--print-every 0] [--tangent 1,1,1,1] [--state-only]
# prints one line per member: "member th1 th2 lambda(T) steps".
import argparse
import math
import sys

import numpy as np

M1 = M2 = L1 = L2 = 1.0
G = 9.81


def accel(th1, th2, w1, w2):
    """Angular accelerations (works on real or complex arrays)."""
    d = th1 - th2
    c, s = np.cos(d), np.sin(d)
    m11 = (M1 + M2) * L1 * L1
    m12 = M2 * L1 * L2 * c
    m22 = M2 * L2 * L2
    f1 = -M2 * L1 * L2 * s * w2 * w2 - (M1 + M2) * G * L1 * np.sin(th1)
    f2 = M2 * L1 * L2 * s * w1 * w1 - M2 * G * L2 * np.sin(th2)
    det = m11 * m22 - m12 * m12
    return (m22 * f1 - m12 * f2) / det, (m11 * f2 - m12 * f1) / det


H = 1e-30


def rhs(y):
    """y: (8, N) = th1, th2, w1, w2, dth1, dth2, dw1, dw2."""
    z = y[:4] + 1j * H * y[4:]
    a1, a2 = accel(z[0], z[1], z[2], z[3])
    out = np.empty_like(y)
    out[0], out[1] = y[2], y[3]
    out[2], out[3] = a1.real, a2.real
    out[4], out[5] = y[6], y[7]
    out[6], out[7] = a1.imag / H, a2.imag / H
    return out


# Dormand-Prince 5(4)
C = [0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1, 1]
A = [[],
     [1 / 5],
     [3 / 40, 9 / 40],
     [44 / 45, -56 / 15, 32 / 9],
     [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729],
     [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656],
     [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84]]
E = [71 / 57600, 0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40]


def integrate(y, t0, t1, h, rtol, atol, rows):
    """Advance every member (columns of y) from t0 to t1 with its own step
    h (array); rows: how many of y's rows enter the error norm.  Returns
    y, h, steps (array)."""
    n = y.shape[1]
    t = np.full(n, t0)
    steps = np.zeros(n, dtype=np.int64)
    active = t < t1
    while active.any():
        idx = np.nonzero(active)[0]
        yy, tt = y[:, idx], t[idx]
        hh = np.minimum(h[idx], t1 - tt)
        k = [rhs(yy)]
        for s in range(1, 7):
            ys = yy + hh * sum(A[s][j] * k[j] for j in range(s) if A[s][j])
            k.append(rhs(ys))
        ynew = ys                                   # stage 7 is the 5th-order solution
        err = hh * sum(E[j] * k[j] for j in range(7) if E[j])
        sc = atol + rtol * np.maximum(np.abs(yy[:rows]), np.abs(ynew[:rows]))
        en = np.sqrt(np.mean((err[:rows] / sc) ** 2, axis=0))
        ok = en <= 1.0
        fac = np.where(en > 0, 0.9 * en ** -0.2, 5.0)
        fac = np.clip(fac, 0.2, 5.0)
        fac = np.where(ok, fac, np.minimum(fac, 1.0))
        acc = idx[ok]
        y[:, acc] = ynew[:, ok]
        t[acc] = tt[ok] + hh[ok]
        steps[acc] += 1
        # the end clipped the step: keep the step the controller wanted
        hnext = np.where(ok & (hh < h[idx]), h[idx], hh * fac)
        h[idx] = hnext
        t[np.abs(t1 - t) < 1e-12 * max(1.0, abs(t1))] = t1
        active = t < t1
    return y, h, steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--th1", type=float, default=math.pi / 2)
    ap.add_argument("--th2", type=float, default=math.pi / 2)
    ap.add_argument("--T", type=float, default=200.0)
    ap.add_argument("--every", type=float, default=0.1)
    ap.add_argument("--rtol", type=float, default=1e-10)
    ap.add_argument("--atol", type=float, default=1e-10)
    ap.add_argument("--ens", type=int, default=1)
    ap.add_argument("--eps", type=float, default=1e-9)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--print-every", type=float, default=0.0,
                    help="print member 0's running estimate every so often")
    ap.add_argument("--tangent", default="1,1,1,1",
                    help="the first tangent vector (dth1,dth2,dw1,dw2), normalized")
    ap.add_argument("--state-only", action="store_true",
                    help="error control on the state only, not the tangent")
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    n = a.ens
    y = np.zeros((8, n))
    y[0], y[1] = a.th1, a.th2
    if n > 1:
        y[0, 1:] += a.eps * rng.uniform(-1, 1, n - 1)
        y[1, 1:] += a.eps * rng.uniform(-1, 1, n - 1)
    start = y[:2].copy()
    v0 = np.array([float(x) for x in a.tangent.split(",")])
    y[4:] = (v0 / np.linalg.norm(v0))[:, None]

    h = np.full(n, 1e-3)
    rows = 4 if a.state_only else 8
    total = np.zeros(n)
    steps = np.zeros(n, dtype=np.int64)
    nint = int(round(a.T / a.every))
    nextp = a.print_every
    for i in range(1, nint + 1):
        t0, t1 = (i - 1) * a.every, (a.T if i == nint else i * a.every)
        y, h, s = integrate(y, t0, t1, h, a.rtol, a.atol, rows)
        steps += s
        nrm = np.sqrt(np.sum(y[4:] ** 2, axis=0))
        total += np.log(nrm)
        y[4:] /= nrm
        if a.print_every and t1 >= nextp - 1e-9:
            print("# t %.6g lambda %.10f" % (t1, total[0] / t1), flush=True)
            nextp += a.print_every
    lam = total / a.T
    for j in range(n):
        print("%d %.17g %.17g %.6f %d" % (j, start[0, j], start[1, j], lam[j], steps[j]))
    if n > 1:
        print("# ensemble of %d: mean %.4f sd %.4f min %.4f median %.4f max %.4f"
              % (n, lam.mean(), lam.std(ddof=1), lam.min(), np.median(lam), lam.max()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
