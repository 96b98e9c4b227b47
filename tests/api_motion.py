"""The Python package's analyses of a motion (Model.floquet, .lyapunov,
.linearize, .sensitivity) against closed forms and against the command line, bit for
bit (tests/api.sh runs it; make check).

    HOLOSIM=bin/holosim PYTHONPATH=python python3 tests/api_motion.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from api_util import ROOT, cli, finish, test  # noqa: E402
import holosim  # noqa: E402
import numpy as np  # noqa: E402

MODELS = os.path.join(ROOT, "models")


def csv_rows(text):
    lines = text.strip("\n").split("\n")
    return lines[0].split(","), [ln.split(",") for ln in lines[1:]]


@test
def floquet_harmonic_closed_form_and_cli():
    """eps = 0: x'' + delta x = 0, mu = exp(+-i sqrt(delta) T)."""
    path = os.path.join(MODELS, "mathieu.yaml")
    sets = {"eps": 0, "delta": 0.5, "x0": 0.1}
    T = 2 * np.pi
    f = holosim.load(path, set=sets).floquet(T)
    want = np.exp(1j * np.sqrt(0.5) * T)
    assert f.multipliers.shape == (2,)
    assert min(abs(f.multipliers - want)) < 1e-8 and min(abs(f.multipliers - want.conjugate())) < 1e-8, \
        f.multipliers
    assert abs(f.mu_max - 1) < 1e-8 and f.verdict in ("stable", "marginal")
    assert f.monodromy.shape == (2, 2)
    assert abs(np.linalg.det(f.monodromy) - 1) < 1e-8     # area kept (Liouville)
    assert f.periodic_model and f.gap > 0.01               # x0 = 0.1 does not come back
    args = ["floquet", path, "--period", repr(T), "--csv"]
    for k, v in sets.items():
        args += ["--set", "%s=%r" % (k, v)]
    rc, out, err = cli(*args)
    assert rc == 0, err
    names, rows = csv_rows(out)
    got = sorted(zip(f.multipliers.real, f.multipliers.imag))
    ref = sorted((float(r[names.index("re")]), float(r[names.index("im")])) for r in rows)
    assert got == ref, (got, ref)


@test
def floquet_mathieu_tongue_unstable():
    """delta = 1/4 inside the first tongue (eps = 0.1): a real multiplier
    above 1, the product of the two 1 (trace of the monodromy > 2)."""
    f = holosim.load(os.path.join(MODELS, "mathieu.yaml")).floquet(2 * np.pi)
    assert f.verdict == "unstable" and f.mu_max > 1.1, f
    assert abs(np.prod(f.multipliers) - 1) < 1e-8
    assert abs(np.trace(f.monodromy)) > 2


@test
def floquet_bad_period_is_a_model_error():
    m = holosim.load(os.path.join(MODELS, "mathieu.yaml"))
    for T in (0, -1, float("inf"), float("nan")):
        try:
            m.floquet(T)
        except holosim.ModelError as e:
            assert e.exit_code == 2 and "period" in e.text, e.text
        else:
            raise AssertionError("period %r accepted" % T)


@test
def lyapunov_equals_the_cli():
    path = os.path.join(MODELS, "double_pendulum_angles.yaml")
    ly = holosim.load(path).lyapunov(t_end=2, every=0.05)
    rc, out, err = cli("lyapunov", path, "--t-end", "2", "--every", "0.05", "--csv")
    assert rc == 0, err
    names, rows = csv_rows(out)
    ref = np.array([[float(x) for x in r] for r in rows])
    assert names == ["t", "lambda_1"] and ly.history.shape == ref.shape, (names, ly.history.shape)
    assert np.array_equal(ly.history, ref), np.max(np.abs(ly.history - ref))
    assert ly.exponents[0] == ref[-1, 1]


@test
def lyapunov_small_oscillation_near_zero_and_spectrum_sum():
    path = os.path.join(MODELS, "double_pendulum_angles.yaml")
    small = holosim.load(path, set={"th1": 0.01, "th2": 0.01}).lyapunov(t_end=100)
    assert abs(small.exponents[0]) < 0.02, small.exponents
    s = holosim.load(path).lyapunov(t_end=20, every=0.1, spectrum=True)
    assert len(s.exponents) == 4
    # conservative: in (q, v) the tangent volume changes only as 1/det M(q),
    # here within a factor 2, so the sum is within log(2)/T of 0
    assert abs(sum(s.exponents)) * 20 < np.log(2), s.exponents
    try:
        holosim.load(path).lyapunov(t_end=1, every=-1)
    except holosim.ModelError as e:
        assert e.exit_code == 2 and "every" in e.text, e.text
    else:
        raise AssertionError("every = -1 accepted")


@test
def linearize_cart_pole_poles():
    """The cart-pole of the control tutorials: poles 0, -5.604094,
    -0.142832, 5.565108 (computed from the textbook's transfer
    function, not by holosim)."""
    s = holosim.load(os.path.join(MODELS, "cart_pole.yaml")).linearize(outputs="x,th")
    assert s.inputs == ["F"] and s.outputs == ["x", "th"] and s.A.shape == (4, 4)
    assert s.B.shape == (4, 1) and s.C.shape == (2, 4) and s.D.shape == (2, 1)
    got = np.sort(s.poles().real)
    want = np.array([-5.604094, -0.142832, 0.0, 5.565108])
    assert np.max(np.abs(got - want)) < 2e-6, got
    assert np.max(np.abs(s.poles().imag)) < 1e-12


@test
def linearize_errors_name_the_library_options():
    m = holosim.load(os.path.join(MODELS, "cart_pole.yaml"))
    for kw, text in (({"inputs": ["G"]}, "inputs: the model has no input 'G'"),
                     ({"outputs": ["nope"]}, "outputs: 'nope' is no column")):
        try:
            m.linearize(**kw)
        except holosim.ModelError as e:
            assert e.exit_code == 2 and text in e.text and "--" not in e.text, e.text
        else:
            raise AssertionError("%r accepted" % kw)
    try:
        m.linearize(at="somewhere")
    except holosim.UsageError as e:
        assert e.exit_code == 1
    else:
        raise AssertionError("at='somewhere' accepted")


@test
def on_row_streams_the_rows_of_the_buffer():
    m = holosim.load(os.path.join(MODELS, "pendulum.yaml"))
    whole = m.run(t_end=1, dt=0.1)
    got = []
    r = m.run(t_end=1, dt=0.1, on_row=lambda row: got.append(row))
    assert r.columns == whole.columns and len(r) == 0
    assert np.array_equal(np.array(got), whole.data)
    seen = []
    try:
        m.run(t_end=1, dt=0.1, on_row=lambda row: seen.append(row) or len(seen) == 3)
    except holosim.StoppedError as e:
        assert e.exit_code == 130 and len(seen) == 3
    else:
        raise AssertionError("a true return did not stop the run")

    class Boom(Exception):
        pass

    def boom(row):
        raise Boom("from on_row")
    try:
        m.run(t_end=1, dt=0.1, on_row=boom)
    except Boom:
        pass
    else:
        raise AssertionError("the callback's exception was lost")
    try:
        m.run(t_end=1, on_row=3)
    except holosim.UsageError as e:
        assert e.exit_code == 1
    else:
        raise AssertionError("on_row=3 accepted")


@test
def sensitivity_closed_form_and_cli():
    """A pendulum started at rest: theta(t; l) = Theta(t sqrt(g / l)), so
    dtheta/dl = -t theta' / (2 l) at any amplitude; the columns and the
    numbers are the command line's, bit for bit."""
    path = os.path.join(MODELS, "pendulum_angle.yaml")
    m = holosim.load(path)
    r = m.sensitivity(["l"], t_end=3, dt=0.05)
    assert r.columns == ["t", "theta", "theta'", "dtheta/dl", "dtheta'/dl"], r.columns
    l = m.parameters["l"]
    want = -r["t"] * r["theta'"] / (2 * l)
    assert np.max(np.abs(r["dtheta/dl"] - want)) < 1e-7, np.max(np.abs(r["dtheta/dl"] - want))
    assert np.max(np.abs(want)) > 0.1                     # not a vacuous check
    rc, out, err = cli("run", path, "--sensitivity", "l", "--t-end", "3", "--dt", "0.05")
    assert rc == 0, err
    names, rows = csv_rows(out)
    ref = np.array([[float(x) for x in row] for row in rows])
    assert names == r.columns and np.array_equal(r.data, ref), np.max(np.abs(r.data - ref))
    seen = []
    streamed = m.sensitivity("l", t_end=3, dt=0.05, on_row=seen.append)
    assert len(streamed) == 0 and np.array_equal(np.array(seen), r.data)


@test
def sensitivity_native_summary_and_stop_event():
    """native="always" gives the VM's numbers to the bit; the summary
    counts the augmented system's steps and names the stop event, whose
    time is the command line's; a bad native policy is a usage error."""
    path = os.path.join(MODELS, "pendulum_angle.yaml")
    m = holosim.load(path, stop_when="theta' > 0")
    vm = m.sensitivity("l", t_end=3, dt=0.05)
    nat = m.sensitivity("l", t_end=3, dt=0.05, native="always")
    assert np.array_equal(vm.data, nat.data) and len(vm) > 2
    s = vm.summary
    assert s["stopped_by"] == "stop_when" and s["stop_text"] == "theta' > 0", s
    assert s["steps"] > 0 and s["nrhs"] > s["steps"] and s["rows"] == len(vm), s
    assert s["t_reached"] == vm["t"][-1] and vm["t"][-1] < 3
    rc, out, err = cli("run", path, "--sensitivity", "l", "--t-end", "3", "--dt", "0.05",
                       "--stop-when", "theta' > 0")
    assert rc == 0 and "stopped by event 'stop_when'" in err, err
    names, rows = csv_rows(out)
    assert float(rows[-1][0]) == vm["t"][-1], (rows[-1][0], vm["t"][-1])
    try:
        m.sensitivity("l", native="sometimes")
    except holosim.UsageError as e:
        assert "native must be" in e.text
    else:
        raise AssertionError("native='sometimes' accepted")
    r = holosim.load(path).run(t_end=0.5, native="always")
    assert np.array_equal(r.data, holosim.load(path).run(t_end=0.5).data)


@test
def sensitivity_errors():
    m = holosim.load(os.path.join(MODELS, "pendulum_angle.yaml"))
    for kw, cls, code, text in (
            (dict(params="lenght"), holosim.ModelError, 2, "unknown parameter 'lenght'"),
            (dict(params=[]), holosim.UsageError, 1, "needs at least one parameter"),
            (dict(params="l", t_end=-1), holosim.UsageError, 1, "must be greater than"),
            (dict(params="l", method="rattle2"), holosim.UsageError, 1, "'rattle2' is not one")):
        try:
            m.sensitivity(**kw)
        except cls as e:
            assert e.exit_code == code and text in e.text and "--" not in e.text, e.text
        else:
            raise AssertionError("%r accepted" % (kw,))
    ball = holosim.load(os.path.join(MODELS, "bouncing_ball.yaml"))
    try:
        ball.sensitivity("e")
    except holosim.UsageError as e:
        assert "does not support contacts" in e.text and "--" not in e.text, e.text
    else:
        raise AssertionError("contacts accepted")


@test
def docstrings():
    for obj in (holosim.Model.floquet, holosim.Model.lyapunov, holosim.Model.linearize,
                holosim.Model.sensitivity,
                holosim.Floquet, holosim.Lyapunov, holosim.StateSpace):
        assert obj.__doc__ and len(obj.__doc__) > 40, obj


finish()
