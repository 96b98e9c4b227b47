"""holosim from Python: load a model once, run it many times in-process.

    >>> import holosim
    >>> m = holosim.load("models/pendulum.yaml", set={"theta0": 0.3})
    >>> r = m.run(t_end=2, dt=0.1)
    >>> r.columns                 # the CSV header of `holosim run`
    ['t', 'x', 'y', "x'", "y'", 'lambda_rod', 'G_rod', 'Gdot_rod', 'E', 'theta']
    >>> r["x"]                    # a column, a float64 NumPy array
    >>> r.data.shape              # rows x columns
    (21, 10)

The numbers are those of `holosim run` with the same options, bit for bit.
The package sits on libholosim (include/holosim.h) through cffi in ABI mode;
a run releases the GIL while it integrates, so runs in several threads run
in parallel.  Errors raise holosim.Error or one of its subclasses, carrying
the exit code and the text the command line prints (holosim(1)).
"""
from ._lib import ffi, lib, debian_fallback

try:
    import numpy as np
except ImportError:
    debian_fallback("numpy")
    import numpy as np

__all__ = ["load", "Model", "Result", "CheckReport", "Equilibrium", "Modes", "Floquet",
           "Lyapunov", "StateSpace", "Error",
           "UsageError", "ModelError", "InconsistentError", "NumericError",
           "OutOfMemoryError", "StoppedError", "version"]


def version():
    """The version of the C library under the package ("0.1.0")."""
    return ffi.string(lib.holosim_version()).decode()


# ---------- errors ----------

class Error(Exception):
    """An error of holosim.  Attributes:

    exit_code  the exit code `holosim` would end with (holosim(1), EXIT STATUS)
    message    the message alone
    text       the error as the command line prints it on standard error:
               "FILE:LINE:COLUMN: error: MESSAGE", the source line and a caret
               (str(error) is this text without its last newline)
    path       the file it points into, or None
    line, column   1-based, or None when unknown
    """

    def __init__(self, exit_code, message, text, path=None, line=None, column=None):
        super().__init__(text.rstrip("\n"))
        self.exit_code = exit_code
        self.message = message
        self.text = text
        self.path = path
        self.line = line
        self.column = column


class UsageError(Error):
    """Exit code 1: a bad option value, a file that cannot be read, an
    unknown parameter in `set`."""



_NATIVE = {"never": 0, "auto": 1, "always": 2}


def _run_options(t_end=None, dt=None, method=None, rtol=None, atol=None, columns=None,
                 step=None, output_mode=None, native=None):
    """The holosim_run_options of run()'s keywords, and the strings it points
    to (kept alive by the caller)."""
    o = ffi.new("holosim_run_options *")
    lib.holosim_run_options_init(o)
    keep = []
    if t_end is not None:
        o.t_end = float(t_end)
    if dt is not None:
        o.dt = float(dt)
    if step is not None:
        o.step = float(step)
    if rtol is not None:
        o.rtol = float(rtol)
    if atol is not None:
        o.atol = float(atol)
    if method is not None:
        keep.append(ffi.new("char[]", str(method).encode()))
        o.method = keep[-1]
    if columns is not None:
        if not isinstance(columns, str):
            columns = ",".join(columns)
        keep.append(ffi.new("char[]", columns.encode()))
        o.columns = keep[-1]
    if output_mode is not None:
        if output_mode not in _OUTPUT_MODES:
            raise UsageError(1, "output_mode must be 'exact' or 'interpolate'",
                             "holosim: error: output_mode must be 'exact' or "
                             "'interpolate', not %r\n" % (output_mode,))
        o.output_mode = _OUTPUT_MODES[output_mode]
    if native is not None:
        if native not in _NATIVE:
            raise UsageError(1, "native must be 'never', 'auto' or 'always'",
                             "holosim: error: native must be 'never', 'auto' or "
                             "'always', not %r\n" % (native,))
        o.native = _NATIVE[native]
    return o, keep


def _gather(call, on_row, summary_p=None):
    """A Result from call(fn, err) (holosim_run or holosim_sensitivity with
    the row callback fn, or NULL), the rows to on_row when given; the
    summary from summary_p (a holosim_run_summary * the call fills) and
    the events gathered, when given."""
    err = ffi.new("holosim_error *")
    fn, failure = ffi.NULL, []
    if on_row is not None:
        if not callable(on_row):
            raise UsageError(1, "on_row must be callable",
                             "holosim: error: on_row must be callable, not %r\n" % (on_row,))

        def _row(ctx, row, ncols):
            try:
                a = np.frombuffer(ffi.buffer(row, 8 * ncols), dtype=np.float64).copy()
                return 1 if on_row(a) else 0
            except BaseException as e:       # raised again after the run
                failure.append(e)
                return 1

        fn = ffi.callback("int(void *, const double *, size_t)", _row)
    r = call(fn, err)
    summary = _summary(summary_p) if summary_p is not None else None
    if failure:
        if r != ffi.NULL:
            lib.holosim_result_free(r)
        raise failure[0]
    if r == ffi.NULL:
        _raise(err)
    try:
        nc, nr = lib.holosim_result_ncols(r), lib.holosim_result_nrows(r)
        names = [_str(lib.holosim_result_column(r, j)) for j in range(nc)]
        if nr and nc and on_row is None:
            buf = ffi.buffer(lib.holosim_result_data(r), 8 * nr * nc)
            data = np.frombuffer(buf, dtype=np.float64).reshape(nr, nc).copy()
        else:                                  # no rows, or they went to on_row
            data = np.zeros((0 if on_row is not None else nr, nc))
        res = Result(names, data, lib.holosim_result_steps(r), lib.holosim_result_nrhs(r))
        if summary_p is not None:
            res.summary = summary
            ne = lib.holosim_result_nevents(r)
            ev = np.zeros((ne, nc))
            if ne and nc:
                buf = ffi.buffer(lib.holosim_result_event_data(r), 8 * ne * nc)
                ev = np.frombuffer(buf, dtype=np.float64).reshape(ne, nc).copy()
            res.events = Events(names, [_str(lib.holosim_result_event(r, i))
                                        for i in range(ne)], ev)
        return res
    finally:
        lib.holosim_result_free(r)

class ModelError(Error):
    """Exit code 2: an error in the model (or an expression), with its
    position: .path, .line, .column."""


class InconsistentError(Error):
    """Exit code 3: initial data rejected, a projection that failed, no
    equilibrium found."""


class NumericError(Error):
    """Exit code 4: a numerical failure during a run."""


class OutOfMemoryError(Error):
    """Exit code 5: out of memory."""


class StoppedError(Error):
    """Exit code 130: a run stopped before its end."""


_ERRORS = {1: UsageError, 2: ModelError, 3: InconsistentError, 4: NumericError,
           5: OutOfMemoryError, 130: StoppedError}


_SUMMARY_FIELDS = ("steps", "nrhs", "rows", "projections", "splits", "max_G", "max_Gdot",
                   "max_energy_balance", "max_power_residual", "t_reached", "wall", "events",
                   "impacts", "transitions", "rested", "t_rest", "k", "rank0", "nrobust",
                   "nsingular", "worst_rcond", "augmented")


def _summary(p):
    """A holosim_run_summary as a dict (the strings copied: they point into
    the model)."""
    d = {f: getattr(p, f) for f in _SUMMARY_FIELDS}
    d["rested"], d["augmented"] = bool(d["rested"]), bool(d["augmented"])
    for f in ("stopped_by", "stop_text", "rest_contact"):
        d[f] = _str(getattr(p, f))
    return d


def _raise(err):
    s = lambda a: ffi.string(a).decode("utf-8", "replace")
    cls = _ERRORS.get(err.code, Error)
    path = s(err.file) or None
    raise cls(err.code, s(err.message), s(err.text), path,
              err.line or None, err.column or None)


def _str(p):
    return ffi.string(p).decode("utf-8", "replace") if p != ffi.NULL else None


# ---------- results ----------

class Result:
    """The rows of a run.

    columns   the names of the columns, as in the CSV header of `holosim run`
    data      a float64 NumPy array, one row per output time, one column per name
    steps     integration steps taken
    nrhs      right-hand side evaluations

    result["x"] is the column named x (a NumPy array); len(result) the rows.
    """

    def __init__(self, columns, data, steps, nrhs):
        self.columns = columns
        self.data = data
        self.steps = steps
        self.nrhs = nrhs
        self._index = {c: j for j, c in enumerate(columns)}

    def __getitem__(self, name):
        try:
            return self.data[:, self._index[name]]
        except KeyError:
            raise KeyError("no column %r (the columns: %s)" % (name, ", ".join(self.columns)))

    def __len__(self):
        return self.data.shape[0]

    def __repr__(self):
        return "<holosim.Result %d rows x %d columns: %s>" % (
            self.data.shape[0], self.data.shape[1], ", ".join(self.columns))

    def to_pandas(self):
        """The rows as a pandas DataFrame (columns named as in the CSV);
        ImportError when pandas is not installed."""
        import pandas
        return pandas.DataFrame(self.data, columns=list(self.columns))


class Events:
    """The event rows of a run (`holosim run --events`): names[i] is the
    event of row i; data a float64 NumPy array, a row per event, in the
    run's columns (the events CSV's columns after `event`).
    events["x"] is the column x; len(events) the rows."""

    def __init__(self, columns, names, data):
        self.columns = columns
        self.names = names
        self.data = data
        self._index = {c: j for j, c in enumerate(columns)}

    def __getitem__(self, name):
        return self.data[:, self._index[name]]

    def __len__(self):
        return self.data.shape[0]

    def __repr__(self):
        return "<holosim.Events %d rows: %s>" % (len(self.names), ", ".join(self.names))


class CheckReport:
    """`holosim check` in numbers: n, k, nparams, rank (of G_q at t0),
    max_G and max_Gdot (the largest constraint residuals at t0) and the
    consistency tolerance."""

    def __init__(self, r):
        self.n, self.k, self.nparams, self.rank = r.n, r.k, r.nparams, r.rank
        self.max_G, self.max_Gdot, self.tolerance = r.max_G, r.max_Gdot, r.tolerance

    def __repr__(self):
        return ("<holosim.CheckReport n=%d k=%d rank=%d max_G=%g max_Gdot=%g>"
                % (self.n, self.k, self.rank, self.max_G, self.max_Gdot))


class Equilibrium:
    """The equilibrium nearest the initial position (`holosim equilibrium`).

    coordinates   the names; q: their values there (NumPy array)
    constraints   the names; multipliers: lambda of each (a run's sign)
    residual_Q, residual_G   max |Q + G_q^T lambda| and max |G| there
    iterations    Newton steps; stable, verdict ("stable", "marginal",
                  "unstable") of the linearization there
    """

    def __init__(self, model, eq):
        self.coordinates = model.coordinates
        self.constraints = model.constraints
        get = lambda p, k: (np.frombuffer(ffi.buffer(p, 8 * k), dtype=np.float64).copy()
                            if k else np.zeros(0))
        self.q = get(eq.q, eq.n)
        self.multipliers = get(getattr(eq, "lambda"), eq.k)   # a keyword in Python
        self.residual_Q, self.residual_G = eq.res_Q, eq.res_G
        self.iterations = eq.iterations
        self.stable = bool(eq.stable)
        self.verdict = _str(eq.verdict)

    def __repr__(self):
        return "<holosim.Equilibrium %s (%s)>" % (
            ", ".join("%s=%.6g" % (c, x) for c, x in zip(self.coordinates, self.q)),
            self.verdict)


class Modes:
    """The small oscillations about the equilibrium (`holosim modes`).

    sigma, omega   NumPy arrays: each eigenvalue s = sigma + i omega
                   (omega >= 0), in the order of `holosim modes --csv`
    eigenvalues    the same as a complex array
    shapes         complex array, one row per mode, one column per
                   coordinate (the largest component 1)
    coordinates    the names; stable, verdict as in Equilibrium
    """

    def __init__(self, model, md):
        c, n = md.count, md.n
        get = lambda p, k: (np.frombuffer(ffi.buffer(p, 8 * k), dtype=np.float64).copy()
                            if k else np.zeros(0))
        self.coordinates = model.coordinates
        self.sigma = get(md.sigma, c)
        self.omega = get(md.omega, c)
        self.eigenvalues = self.sigma + 1j * self.omega
        self.shapes = (get(md.shape, c * n) + 1j * get(md.shape_im, c * n)).reshape(c, n)
        self.stable = bool(md.stable)
        self.verdict = _str(md.verdict)

    def __len__(self):
        return len(self.sigma)

    def __repr__(self):
        return "<holosim.Modes %d (%s): omega %s>" % (len(self), self.verdict,
                                                     ", ".join("%.6g" % w for w in self.omega))


# ---------- models ----------

_OUTPUT_MODES = {"exact": 0, "interpolate": 1}


def _set_args(set):
    if not set:
        return [], ffi.NULL, 0
    items = set.items() if hasattr(set, "items") else set
    keep = []
    for name, value in items:
        if isinstance(value, str):
            text = value
        else:
            text = repr(float(value))
        keep.append(ffi.new("char[]", ("%s=%s" % (name, text)).encode()))
    return keep, ffi.new("const char *[]", keep), len(keep)


class Model:
    """A model loaded and compiled once (holosim.load): immutable, so one
    Model may be run many times and from several threads at once.

    name          the model's `name` ("" when it has none)
    coordinates   the names of the coordinates
    constraints   the names of the constraints
    parameters    {name: value} after the overrides
    """

    def __init__(self, handle):
        self._h = ffi.gc(handle, lib.holosim_model_free)
        h = self._h
        self.name = _str(lib.holosim_model_name(h)) or ""
        self.coordinates = [_str(lib.holosim_model_coord(h, i))
                            for i in range(lib.holosim_model_ncoords(h))]
        self.constraints = [_str(lib.holosim_model_constraint(h, j))
                            for j in range(lib.holosim_model_nconstraints(h))]
        v = ffi.new("double *")
        self.parameters = {}
        for i in range(lib.holosim_model_nparams(h)):
            name = _str(lib.holosim_model_param(h, i, v))
            self.parameters[name] = v[0]

    def __repr__(self):
        return "<holosim.Model %r: %s>" % (self.name, ", ".join(self.coordinates))

    def run(self, t_end=None, dt=None, method=None, rtol=None, atol=None, columns=None,
            step=None, output_mode=None, on_row=None, native=None):
        """Integrate the model and return a Result: what `holosim run` writes
        with the same options, bit for bit.  Each option left None keeps the
        model's (its `simulate` section, or holosim's default):

        t_end, dt    end time and output interval (--t-end, --dt)
        method       the stepper's name (--method; `holosim help methods`)
        rtol, atol   error tolerances (--rtol, --atol)
        columns      a list of names or a comma list, globs, "default", "all"
                     (--columns; `holosim columns MODEL`)
        step         the fixed step of the rattle methods (--step)
        output_mode  "exact" or "interpolate" (--output-mode)
        native       "never" (the default), "auto" or "always": the
                     model's programs compiled to C (--native; the same
                     numbers to the bit)

        on_row       a callable given each row as it is computed (a float64
                     NumPy array in the order of the columns, a copy); the
                     Result then holds no rows (len 0).  A true return
                     value stops the run: StoppedError (exit code 130),
                     the rows before it delivered.  An exception raised in
                     it stops the run and is raised again by run().

        The Result also holds .events (an Events: the event rows, as
        `--events` writes them) and .summary (a dict: steps, nrhs, rows,
        max_G, max_Gdot, impacts, t_rest, stopped_by, ... as `--summary`).

        The GIL is released while the run integrates (and taken for
        on_row).  Raises Error (a subclass by exit code) when the run
        cannot start or fails."""
        o, keep = _run_options(t_end, dt, method, rtol, atol, columns, step, output_mode,
                               native)
        o.keep_events = 1
        sp = ffi.new("holosim_run_summary *")
        o.summary = sp
        return _gather(lambda fn, err: lib.holosim_run(self._h, o, fn, ffi.NULL, err), on_row,
                       sp)

    def sensitivity(self, params, t_end=None, dt=None, method=None, rtol=None, atol=None,
                    on_row=None, native=None):
        """Integrate the model with its forward sensitivities to the
        parameters params (a list of names, or a comma list) and return a
        Result: what `holosim run --sensitivity P1,...` writes, bit for bit,
        in its columns (t, the coordinates, the velocities, lambda_c, then
        per parameter p: dq/dp, dq'/dp, dlambda_c/dp; read them as
        result["dtheta/dl"]).  t_end, dt, method, rtol, atol and on_row as
        in run(); the method must be an explicit gsl_odeiv2 one.  native:
        "never" (the default), "auto" or "always", the kernels of the
        variational programs compiled to C (--native; the same numbers to
        the bit).  .summary holds steps and nrhs of the augmented system,
        rows, t_reached and stopped_by (the stop event that ended the
        rows, or None).  Raises ModelError for an unknown parameter (with
        the nearest name), UsageError for a model with contacts, friction
        or events that change the state."""
        if isinstance(params, str):
            params = [p.strip() for p in params.split(",")]
        o, keep = _run_options(t_end, dt, method, rtol, atol, native=native)
        sp = ffi.new("holosim_run_summary *")
        o.summary = sp
        cp = [ffi.new("char[]", str(p).encode()) for p in params]
        arr = ffi.new("const char *[]", cp or [ffi.NULL])
        return _gather(lambda fn, err: lib.holosim_sensitivity(self._h, arr, len(cp), o, fn,
                                                               ffi.NULL, err), on_row, sp)

    def check(self):
        """`holosim check` in numbers (a CheckReport); raises Error when the
        initial data are inconsistent (exit 3) or the method cannot run the
        model."""
        rep = ffi.new("holosim_check_report *")
        err = ffi.new("holosim_error *")
        if lib.holosim_check(self._h, rep, err):
            _raise(err)
        return CheckReport(rep)

    def equilibrium(self):
        """The equilibrium nearest the initial position (an Equilibrium),
        as `holosim equilibrium`; raises ModelError when M, Q or G depend on
        time, InconsistentError when Newton finds none."""
        eq = ffi.new("holosim_equilibrium *")
        err = ffi.new("holosim_error *")
        try:
            if lib.holosim_equilibrium_find(self._h, eq, err):
                _raise(err)
            return Equilibrium(self, eq)
        finally:
            lib.holosim_equilibrium_free(eq)

    def modes(self):
        """The eigenvalues and mode shapes at that equilibrium (a Modes), as
        `holosim modes`; the same errors as equilibrium()."""
        md = ffi.new("holosim_modes *")
        err = ffi.new("holosim_error *")
        try:
            if lib.holosim_modes_find(self._h, md, err):
                _raise(err)
            return Modes(self, md)
        finally:
            lib.holosim_modes_free(md)


    def floquet(self, period):
        """The Floquet multipliers of the motion from the initial state over
        one period T (a Floquet), as `holosim floquet --period T`; raises
        ModelError for a period not positive and finite, NumericError when
        the integration fails."""
        return _motion.floquet(self, period, _raise)

    def lyapunov(self, t_end=None, every=None, spectrum=False):
        """Lyapunov exponents over [t0, t_end] (None: the model's t_end),
        renormalized every `every` (None: a hundredth of the interval); the
        largest, or all 2 (n - k) with spectrum=True (a Lyapunov), as
        `holosim lyapunov`."""
        return _motion.lyapunov(self, t_end, every, spectrum, _raise)

    def linearize(self, inputs=None, outputs=None, at="equilibrium"):
        """The linear model A, B, C, D (a StateSpace) at the equilibrium
        nearest the initial position, or at="initial" at the initial state
        as it is, as `holosim linearize`: inputs (None: every input) and
        outputs (None: the coordinates) as lists of names or comma lists."""
        return _motion.linearize(self, inputs, outputs, at, _raise, UsageError)


def _strings(items):
    keep = [ffi.new("char[]", str(x).encode()) for x in items or ()]
    return keep, (ffi.new("const char *[]", keep) if keep else ffi.NULL), len(keep)


def load(path_or_text, set=None, name=None, inputs=None, stop_when=None):
    """Load and compile a model: a file path, or the model's YAML text
    itself (a string holding a line break is text).  set: parameter
    overrides {name: value}, a value a number or an expression (as
    `holosim run --set NAME=EXPR`).  name: what errors in a text call it
    ("<text>" by default).  inputs: {name: source} for the model's inputs,
    a source a table file (ending in .csv) or an expression of t (as
    `--input NAME=SRC`).  stop_when: a condition or a list of them that
    end a run (as `--stop-when`).  Returns a Model; raises ModelError (exit
    code 2, with .path, .line, .column) for an error in the model or an
    input's source, UsageError (exit 1) for a file that cannot be read or
    an unknown parameter."""
    import os
    if not isinstance(path_or_text, str):
        path_or_text = os.fspath(path_or_text)
    keep, arr, n = _set_args(set)
    if inputs is not None and hasattr(inputs, "items"):
        inputs = ["%s=%s" % (k, v) for k, v in inputs.items()]
    if isinstance(stop_when, str):
        stop_when = [stop_when]
    ki, ai, ni = _strings(inputs)
    ks, as_, ns = _strings(stop_when)
    lo = ffi.new("holosim_load_options *")
    lib.holosim_load_options_init(lo)
    lo.set, lo.nset = arr, n
    lo.inputs, lo.ninputs = ai, ni
    lo.stop_when, lo.nstop_when = as_, ns
    err = ffi.new("holosim_error *")
    if "\n" in path_or_text:
        h = lib.holosim_model_load_text_with((name or "<text>").encode(),
                                             path_or_text.encode(), lo, err)
    else:
        h = lib.holosim_model_load_with(str(path_or_text).encode(), lo, err)
    del keep, ki, ks
    if h == ffi.NULL:
        _raise(err)
    return Model(h)


from . import _motion                                       # noqa: E402
from ._motion import Floquet, Lyapunov, StateSpace          # noqa: E402,F401
