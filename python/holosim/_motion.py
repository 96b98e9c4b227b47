"""The analyses of a motion from Python: Floquet multipliers, Lyapunov
exponents and the linear model (`holosim floquet`, `holosim lyapunov`,
`holosim linearize`), over the library's holosim_floquet_find,
holosim_lyapunov_find and holosim_linearize."""
from ._lib import ffi, lib

import numpy as np


def _array(p, k):
    if not k:
        return np.zeros(0)
    return np.frombuffer(ffi.buffer(p, 8 * k), dtype=np.float64).copy()


def _names(p, k):
    return [ffi.string(p[i]).decode("utf-8", "replace") for i in range(k)]


class Floquet:
    """The Floquet analysis of the motion from the initial state over one
    period (`holosim floquet --period T`).

    multipliers    complex NumPy array, 2 (n - k) of them, largest |mu| first
    monodromy      the monodromy matrix on the tangent basis at the start
    mu_max         the largest |mu|; verdict "stable", "marginal" or
                   "unstable" (tolerance: the one it used)
    gap            max |x(t0 + T) - x(t0)|: 0 for a periodic motion
    periodic_model whether M, Q, G are the same at t0 and t0 + T
    """

    def __init__(self, fl):
        d = fl.dim
        self.period = fl.period
        self.multipliers = _array(fl.re, d) + 1j * _array(fl.im, d)
        self.monodromy = _array(fl.monodromy, d * d).reshape(d, d)
        self.mu_max = fl.mu_max
        self.gap = fl.gap
        self.periodic_model = bool(fl.periodic_model)
        self.tolerance = fl.tolerance
        self.verdict = ffi.string(fl.verdict).decode()

    @property
    def exponents(self):
        """The Floquet exponents log(mu) / T (complex)."""
        return np.log(self.multipliers.astype(complex)) / self.period

    def __repr__(self):
        return "<holosim.Floquet T=%g: |mu|max %.6g (%s)>" % (self.period, self.mu_max,
                                                              self.verdict)


class Lyapunov:
    """Lyapunov exponents of the motion (`holosim lyapunov`).

    exponents   NumPy array: the largest, or all 2 (n - k) with spectrum
    history     rows (t, lambda_1, ...) after every renormalization, as
                `holosim lyapunov --csv` writes them
    """

    def __init__(self, ly):
        c, r = ly.count, ly.nrows
        self.exponents = _array(getattr(ly, "lambda"), c)
        self.history = _array(ly.history, r * (1 + c)).reshape(r, 1 + c)

    def __repr__(self):
        return "<holosim.Lyapunov %s>" % ", ".join("%.6g" % x for x in self.exponents)


class StateSpace:
    """The linear model x' = A x + B u, y = C x + D u (`holosim
    linearize`): A, B, C, D NumPy arrays; states, inputs, outputs their
    names.  poles(): the eigenvalues of A."""

    def __init__(self, ss):
        nx, nu, ny = ss.nx, ss.nu, ss.ny
        self.A = _array(ss.A, nx * nx).reshape(nx, nx)
        self.B = _array(ss.B, nx * nu).reshape(nx, nu)
        self.C = _array(ss.C, ny * nx).reshape(ny, nx)
        self.D = _array(ss.D, ny * nu).reshape(ny, nu)
        self.states = _names(ss.xname, nx)
        self.inputs = _names(ss.uname, nu)
        self.outputs = _names(ss.yname, ny)

    def poles(self):
        return np.linalg.eigvals(self.A) if self.A.size else np.zeros(0, dtype=complex)

    def __repr__(self):
        return "<holosim.StateSpace %d states, inputs %s, outputs %s>" % (
            len(self.states), ", ".join(self.inputs) or "-", ", ".join(self.outputs))


def _strings(names):
    if names is None:
        return [], ffi.NULL, 0
    if isinstance(names, str):
        names = [s.strip() for s in names.split(",")]
    keep = [ffi.new("char[]", str(s).encode()) for s in names]
    return keep, ffi.new("const char *[]", keep), len(keep)


def floquet(model, period, raise_error):
    fl = ffi.new("holosim_floquet *")
    err = ffi.new("holosim_error *")
    try:
        if lib.holosim_floquet_find(model._h, float(period), fl, err):
            raise_error(err)
        return Floquet(fl)
    finally:
        lib.holosim_floquet_free(fl)


def lyapunov(model, t_end, every, spectrum, raise_error):
    ly = ffi.new("holosim_lyapunov *")
    err = ffi.new("holosim_error *")
    nan = float("nan")
    try:
        if lib.holosim_lyapunov_find(model._h, nan if t_end is None else float(t_end),
                                     nan if every is None else float(every),
                                     1 if spectrum else 0, ly, err):
            raise_error(err)
        return Lyapunov(ly)
    finally:
        lib.holosim_lyapunov_free(ly)


def linearize(model, inputs, outputs, at, raise_error, usage_error):
    if at not in ("equilibrium", "initial"):
        raise usage_error(1, "at must be 'equilibrium' or 'initial'",
                          "holosim: error: at must be 'equilibrium' or 'initial', not %r\n"
                          % (at,))
    ku, u, nu = _strings(inputs)
    ky, y, ny = _strings(outputs)
    ss = ffi.new("holosim_statespace *")
    err = ffi.new("holosim_error *")
    try:
        if lib.holosim_linearize(model._h, u, nu, y, ny, 1 if at == "initial" else 0, ss,
                                 err):
            raise_error(err)
        return StateSpace(ss)
    finally:
        lib.holosim_statespace_free(ss)
