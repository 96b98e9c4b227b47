#!/usr/bin/python3
"""SciPy yardstick for holosim: the planar double pendulum in Cartesian form
(bench/baseline_dp.c, models/double_pendulum.yaml) with solve_ivp DOP853,
rtol = atol = 1e-10, a NumPy right-hand side (the same formulas:
C = G_q M^-1 G_q^T, Lambda = -C^-1 (G_q M^-1 Q + gamma),
a = M^-1 (Q + G_q^T Lambda)), rows t, q, v every dt written with %.17g.
SciPy's own output mode is used (t_eval: dense-output interpolation; the
stepper does not stop at each row).

    /usr/bin/python3 bench/scipy_dp.py [-T 500] [-d 0.01] [-o FILE]

Prints "scipy_dp: steps? nfev N wall_s S" to stderr."""
import argparse
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp

m1 = m2 = 1.0
l1 = l2 = 1.0
g = 9.81
th1, th2 = 1.0, 1.5
Minv = np.array([1 / m1, 1 / m1, 1 / m2, 1 / m2])
Q = np.array([0.0, -m1 * g, 0.0, -m2 * g])
z = Minv * Q


def rhs(t, y):
    x1, y1, x2, y2, u1, w1, u2, w2 = y
    dx, dy = x2 - x1, y2 - y1
    Gq = np.array([[2 * x1, 2 * y1, 0.0, 0.0],
                   [-2 * dx, -2 * dy, 2 * dx, 2 * dy]])
    du, dw = u2 - u1, w2 - w1
    gamma = np.array([2 * (u1 * u1 + w1 * w1), 2 * (du * du + dw * dw)])
    C = (Gq * Minv) @ Gq.T
    lam = -np.linalg.solve(C, Gq @ z + gamma)
    a = z + Minv * (Gq.T @ lam)
    return np.concatenate((y[4:], a))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-T", type=float, default=500.0)
    ap.add_argument("-d", type=float, default=0.01)
    ap.add_argument("-o", default="-")
    a = ap.parse_args()
    t0 = time.perf_counter()
    y0 = np.zeros(8)
    y0[0] = l1 * np.sin(th1)
    y0[1] = -l1 * np.cos(th1)
    y0[2] = y0[0] + l2 * np.sin(th2)
    y0[3] = y0[1] - l2 * np.cos(th2)
    nrows = int(np.ceil(a.T / a.d - 1e-9))
    grid = np.minimum(np.arange(nrows + 1) * a.d, a.T)
    sol = solve_ivp(rhs, (0.0, a.T), y0, method="DOP853", t_eval=grid,
                    rtol=1e-10, atol=1e-10)
    if not sol.success:
        print("scipy_dp: " + sol.message, file=sys.stderr)
        return 4
    out = sys.stdout if a.o == "-" else open(a.o, "w")
    out.write("t,x1,y1,x2,y2,x1',y1',x2',y2'\n")
    np.savetxt(out, np.column_stack((sol.t, sol.y.T)), fmt="%.17g", delimiter=",")
    if out is not sys.stdout:
        out.close()
    print("scipy_dp: nfev %d wall_s %.6f" % (sol.nfev, time.perf_counter() - t0),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
