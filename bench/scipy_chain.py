#!/usr/bin/python3
"""SciPy yardstick for holosim: the N-link planar chain of bench/baseline_chain.c
and bench/chain_model.sh (unit masses, l = 1, g = 9.81, straight at 1 rad,
at rest) with solve_ivp DOP853, rtol = atol = 1e-10 (--tol), a vectorized NumPy
right-hand side with the tridiagonal C solved banded
(scipy.linalg.solveh_banded), rows t, q, v every dt written with %.17g
(solve_ivp's t_eval: dense-output interpolation).

    /usr/bin/python3 bench/scipy_chain.py -n N [-T 10] [-d 0.01] [-o FILE] [--tol X]

Prints "scipy_chain: nfev N wall_s S" to stderr."""
import argparse
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp
from scipy.linalg import solveh_banded

g, l, th = 9.81, 1.0, 1.0


def make_rhs(N):
    mi = np.ones(N)                      # inverse masses
    zy = -g * np.ones(N)                 # M^-1 Q, y components (x: 0)
    ab = np.zeros((2, N))

    def rhs(t, y):
        p = y[:2 * N].reshape(N, 2)
        v = y[2 * N:].reshape(N, 2)
        d = np.diff(p, axis=0, prepend=0.0)          # link vectors
        w = np.diff(v, axis=0, prepend=0.0)
        mprev = np.concatenate(([0.0], mi[:-1]))
        ab[0] = 4 * np.einsum("ij,ij->i", d, d) * (mi + mprev)
        ab[1, :-1] = -4 * np.einsum("ij,ij->i", d[1:], d[:-1]) * mi[:-1]
        dz = np.diff(zy, prepend=0.0)
        r = 2 * d[:, 1] * dz + 2 * np.einsum("ij,ij->i", w, w)
        lam = -solveh_banded(ab, r, lower=True)
        f = 2 * d * lam[:, None]                     # G_q^T Lambda, per mass
        f[:-1] -= 2 * d[1:] * lam[1:, None]
        acc = f * mi[:, None]
        acc[:, 1] += zy
        return np.concatenate((y[2 * N:], acc.ravel()))

    return rhs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=8)
    ap.add_argument("-T", type=float, default=10.0)
    ap.add_argument("-d", type=float, default=0.01)
    ap.add_argument("-o", default="-")
    ap.add_argument("--tol", type=float, default=1e-10, help="rtol = atol")
    a = ap.parse_args()
    N = a.n
    t0 = time.perf_counter()
    y0 = np.zeros(4 * N)
    k = np.arange(1, N + 1)
    y0[0:2 * N:2] = k * l * np.sin(th)
    y0[1:2 * N:2] = -k * l * np.cos(th)
    nrows = int(np.ceil(a.T / a.d - 1e-9))
    grid = np.minimum(np.arange(nrows + 1) * a.d, a.T)
    sol = solve_ivp(make_rhs(N), (0.0, a.T), y0, method="DOP853", t_eval=grid,
                    rtol=a.tol, atol=a.tol)
    if not sol.success:
        print("scipy_chain: " + sol.message, file=sys.stderr)
        return 4
    out = sys.stdout if a.o == "-" else open(a.o, "w")
    hdr = ["t"] + ["%s%d" % (c, i) for i in k for c in "xy"] + \
          ["%s%d'" % (c, i) for i in k for c in "xy"]
    out.write(",".join(hdr) + "\n")
    np.savetxt(out, np.column_stack((sol.t, sol.y.T)), fmt="%.17g", delimiter=",")
    if out is not sys.stdout:
        out.close()
    print("scipy_chain: N %d nfev %d wall_s %.6f" % (N, sol.nfev, time.perf_counter() - t0),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
