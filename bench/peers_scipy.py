#!/usr/bin/python3
"""SciPy peer for bench/peers.sh: the N-link planar chain (unit point masses,
l = 1, g = 9.81, every absolute angle th0 from the downward vertical, at rest)
in N absolute angles, integrated with solve_ivp DOP853 on hand-written
equations M(th) th'' = f(th, th'):

    M_ij = l^2 cos(th_i - th_j) c_ij,  f_i = -sum_j l^2 sin(th_i - th_j) c_ij th_j'^2
                                            - g l c_ii sin(th_i),
    c_ij = number of masses at or below link max(i, j) = N + 1 - max(i, j),

vectorised with NumPy (the differences through the addition formulas: outer
products into reused buffers), M solved with numpy.linalg.solve (LAPACK).

    /usr/bin/python3 bench/peers_scipy.py N T_END TOL [TH0]

Prints one line to stdout: "nfev K cpu_s S wall_s W" then the N final angles
(th_i(T_END), %.17g).  cpu_s and wall_s: the process CPU time and the
monotonic wall clock around solve_ivp alone."""
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp

g, l = 9.81, 1.0


def make_rhs(N):
    idx = np.arange(1, N + 1)
    c = (N + 1 - np.maximum.outer(idx, idx)).astype(float) * l * l
    cdiag = np.diag(c).copy()

    B1, B2, B3 = np.empty((N, N)), np.empty((N, N)), np.empty((N, N))

    def rhs(t, y):                       # buffers reused: no N x N allocation
        th, w = y[:N], y[N:]
        s, co = np.sin(th), np.cos(th)
        np.multiply.outer(co, co, out=B1)
        np.multiply.outer(s, s, out=B2)
        np.add(B1, B2, out=B1)
        np.multiply(B1, c, out=B1)       # M
        np.multiply.outer(s, co, out=B2)
        np.multiply.outer(co, s, out=B3)
        np.subtract(B2, B3, out=B2)
        np.multiply(B2, c, out=B2)       # l^2 sin(th_i - th_j) c_ij
        f = -(B2 @ (w * w)) - (g / l) * cdiag * s
        return np.concatenate((w, np.linalg.solve(B1, f)))

    return rhs


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    N, T, tol = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
    th0 = float(sys.argv[4]) if len(sys.argv) > 4 else 1.0
    y0 = np.concatenate((np.full(N, th0), np.zeros(N)))
    rhs = make_rhs(N)
    w0, c0 = time.monotonic(), time.process_time()
    sol = solve_ivp(rhs, (0.0, T), y0, method="DOP853", rtol=tol, atol=tol, t_eval=[T])
    c1, w1 = time.process_time(), time.monotonic()
    if not sol.success:
        print("peers_scipy: " + sol.message, file=sys.stderr)
        return 4
    print("nfev %d cpu_s %.6f wall_s %.6f " % (sol.nfev, c1 - c0, w1 - w0) +
          " ".join("%.17g" % v for v in sol.y[:N, -1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
