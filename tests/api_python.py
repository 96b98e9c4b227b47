"""The Python package against the command line (tests/api.sh runs it; make
check).  Plain python3 with assertions; prints "N passed, N failed".

    HOLOSIM=bin/holosim PYTHONPATH=python python3 tests/api_python.py

Every number is compared with what `holosim` prints for the same model and
options, bit for bit (the CSV's 17 significant digits read back exactly).
"""
import ctypes
import ctypes.util
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from api_util import HOLOSIM, ROOT, cli, finish, test  # noqa: E402,F401
import holosim  # noqa: E402
import numpy as np  # noqa: E402  (importable once holosim is)

PEND = os.path.join(ROOT, "models", "pendulum.yaml")
DPEND = os.path.join(ROOT, "models", "double_pendulum.yaml")
TMP = tempfile.mkdtemp(prefix="holosim-api-")


def csv_table(text):
    lines = text.strip("\n").split("\n")
    return lines[0].split(","), np.array([[float(x) for x in ln.split(",")] for ln in lines[1:]])


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def same_bits(a, b):
    """Equal bit for bit, except that the CSV writes -0 as... -0 too: no
    exception needed; NaN never occurs in rows."""
    return a.shape == b.shape and np.array_equal(bits(a), bits(b))


def run_equals_cli(path, cli_args, **kw):
    rc, out, err = cli("run", path, "-q", *cli_args)
    assert rc == 0, err
    names, table = csv_table(out)
    r = holosim.load(path, set=kw.pop("set", None)).run(**kw)
    assert r.columns == names, (r.columns, names)
    assert same_bits(r.data, table), "numbers differ: max %g" % np.max(np.abs(r.data - table))
    return r


@test
def run_pendulum_bit_for_bit():
    r = run_equals_cli(PEND, ["--t-end", "3", "--dt", "0.05"], t_end=3, dt=0.05)
    assert r.data.dtype == np.float64 and r.data.shape == (61, 10)
    assert np.array_equal(r["x"], r.data[:, 1])
    assert len(r) == 61


@test
def run_options_bit_for_bit():
    # every option of run the package passes, against the same options of the CLI
    run_equals_cli(DPEND, ["--t-end", "2", "--dt", "0.1", "--method", "msbdf", "--rtol", "1e-8",
                           "--atol", "1e-9", "--columns", "all", "--set", "m2=2.5"],
                   t_end=2, dt=0.1, method="msbdf", rtol=1e-8, atol=1e-9, columns="all",
                   set={"m2": 2.5})
    r = run_equals_cli(DPEND, ["--t-end", "1", "--columns", "t,x1,lambda_*",
                               "--output-mode", "interpolate"],
                       t_end=1, columns=["t", "x1", "lambda_*"], output_mode="interpolate")
    assert r.columns[:2] == ["t", "x1"]
    rc, out, _ = cli("run", DPEND, "-q", "--t-end", "1", "--columns", "x1",
                     "--output-mode", "interpolate")
    assert same_bits(r["x1"], csv_table(out)[1][:, 0])
    run_equals_cli(PEND, ["--t-end", "1", "--dt", "0.1", "--method", "rattle4", "--step", "0.01"],
                   t_end=1, dt=0.1, method="rattle4", step=0.01)


@test
def load_from_text_and_set_expression():
    text = open(PEND).read()
    a = holosim.load(text, set={"theta0": "pi/8"}).run(t_end=1)
    rc, out, err = cli("run", PEND, "-q", "--t-end", "1", "--set", "theta0=pi/8")
    assert rc == 0 and same_bits(a.data, csv_table(out)[1])
    m = holosim.load(PEND, set={"l": 2})
    assert m.parameters["l"] == 2.0 and m.coordinates == ["x", "y"] and m.constraints == ["rod"]


BAD = """name: bad
parameters: {g: 9.81}
coordinates: [x]
mass: [1]
potential: g*x^^2
initial: {q: {x: 1}, v: {x: 0}}
"""


@test
def model_error_positioned_as_the_cli():
    path = os.path.join(TMP, "bad.yaml")
    with open(path, "w") as f:
        f.write(BAD)
    rc, _, err = cli("run", path)
    assert rc == 2
    try:
        holosim.load(path)
    except holosim.ModelError as e:
        assert isinstance(e, holosim.Error)
        assert e.exit_code == 2 and e.path == path and e.line == 5 and e.column == 16, \
            (e.exit_code, e.path, e.line, e.column)
        assert e.text == err, (e.text, err)
        assert str(e) == err.rstrip("\n")
        assert "expression expected" in e.message
    else:
        raise AssertionError("no ModelError")


@test
def missing_file_names_it():
    path = os.path.join(TMP, "missing.yaml")
    rc, _, err = cli("run", path)
    try:
        holosim.load(path)
    except holosim.Error as e:
        assert path in str(e) and e.exit_code == rc and e.text == err, (e.text, err)
    else:
        raise AssertionError("no Error")


@test
def unknown_parameter_is_a_usage_error():
    rc, _, err = cli("run", PEND, "--set", "nope=1")
    try:
        holosim.load(PEND, set={"nope": 1})
    except holosim.UsageError as e:
        # the same message, the option named as each caller names it
        assert rc == 1 and e.exit_code == 1 and e.text == err.replace("--set", "set"), \
            (rc, e.text, err)
    else:
        raise AssertionError("no UsageError")


@test
def run_errors():
    m = holosim.load(PEND)
    for kw, code, word in (({"t_end": -1}, 1, "t_end"), ({"method": "nope"}, 1, "nope"),
                           ({"columns": "nope"}, None, "nope")):
        try:
            m.run(**kw)
        except holosim.Error as e:
            assert word in e.message, e.text
            assert code is None or e.exit_code == code, e.text
        else:
            raise AssertionError("no error for %r" % kw)
    # the exit code and message of the command line's (whose option parser
    # words a usage error without "error:")
    rc, _, err = cli("run", PEND, "-q", "--method", "nope")
    try:
        m.run(method="nope")
    except holosim.Error as e:
        assert e.exit_code == rc and e.message in err, (e.text, err)


@test
def modes_equal_the_cli():
    for path in (PEND, DPEND):
        rc, out, err = cli("modes", "--csv", path)
        assert rc == 0, err
        names, table = csv_table(out)
        md = holosim.load(path).modes()
        assert len(md) == table.shape[0]
        assert same_bits(md.sigma + 0.0, table[:, 1]) and same_bits(md.omega + 0.0, table[:, 2])
        n = len(md.coordinates)
        assert np.array_equal(md.shapes.real, table[:, 3:3 + n])
        assert np.array_equal(md.shapes.imag, table[:, 3 + n:3 + 2 * n])
        assert np.array_equal(md.eigenvalues, table[:, 1] + 1j * table[:, 2])
    # the pendulum's small oscillation: omega^2 = g / l
    assert abs(holosim.load(PEND).modes().omega[0] ** 2 - 9.81) < 1e-9


@test
def equilibrium_and_check():
    rc, out, err = cli("equilibrium", "--csv", DPEND)
    assert rc == 0, err
    lines = out.strip().split("\n")
    vals = lines[1].split(",")
    eq = holosim.load(DPEND).equilibrium()
    n, k = len(eq.coordinates), len(eq.constraints)
    assert np.array_equal(eq.q, [float(x) for x in vals[:n]])
    assert np.array_equal(eq.multipliers, [float(x) for x in vals[n:n + k]])
    assert eq.verdict == vals[-1] and eq.stable == (vals[-2] == "1")
    c = holosim.load(DPEND).check()
    assert (c.n, c.k, c.rank) == (4, 2, 2) and c.max_G <= c.tolerance


def _runs(m, n=4):
    return [dict(t_end=20 + 5 * i, dt=0.01, method=("rk8pd", "msbdf", "dop853", "rk4imp")[i % 4])
            for i in range(n)]


@test
def threads_equal_sequence_and_release_the_gil():
    m = holosim.load(DPEND)
    jobs = _runs(m)
    t0 = time.perf_counter()
    seq = [m.run(**kw) for kw in jobs]
    t_seq = time.perf_counter() - t0
    par = [None] * 4

    def work(i):
        par[i] = m.run(**jobs[i])
    th = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    t0, c0 = time.perf_counter(), time.process_time()
    for t in th:
        t.start()
    for t in th:
        t.join()
    t_par, c_par = time.perf_counter() - t0, time.process_time() - c0
    for a, b in zip(seq, par):
        assert a.columns == b.columns and same_bits(a.data, b.data)
    # (printed only: on a loaded machine the threads get no second core;
    # CPU time over wall time above 1 shows two of them ran at once)
    print("4 runs: %.3f s in sequence, %.3f s in 4 threads (%.2fx; CPU/wall %.2f; %d cores)"
          % (t_seq, t_par, t_seq / t_par, c_par / t_par, os.cpu_count()))
    # The GIL is released inside the C call: while a long run integrates in
    # a thread, this thread keeps running Python (no gap between two of its
    # iterations as long as the run; with the GIL held there would be one).
    long_run = {}
    t = threading.Thread(target=lambda: long_run.setdefault("r", m.run(t_end=200, dt=0.01)))
    stamps = []
    t0 = time.perf_counter()
    t.start()
    while t.is_alive():
        stamps.append(time.perf_counter())
    dur = time.perf_counter() - t0
    gap = max(np.diff(stamps)) if len(stamps) > 1 else dur
    print("a %.3f s run in a thread: this thread's longest pause %.4f s" % (dur, gap))
    assert "r" in long_run and gap < 0.5 * dur, (gap, dur)


@test
def gsl_handler_unchanged():
    gsl = ctypes.CDLL(ctypes.util.find_library("gsl") or "libgsl.so")
    HANDLER = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                               ctypes.c_int)
    gsl.gsl_set_error_handler.restype = ctypes.c_void_p
    gsl.gsl_set_error_handler.argtypes = [HANDLER]
    mine = HANDLER(lambda reason, file, line, errno: None)
    addr = ctypes.cast(mine, ctypes.c_void_p).value
    old = gsl.gsl_set_error_handler(mine)
    try:
        m = holosim.load(DPEND)

        def work(i):
            for kw in ({"t_end": 1}, {"t_end": -1}):
                try:
                    m.run(**kw)
                except holosim.Error:
                    pass
            try:
                holosim.load(BAD)
            except holosim.ModelError:
                pass
            m.modes()
        th = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in th:
            t.start()
        for t in th:
            t.join()
        work(0)
        now = gsl.gsl_set_error_handler(mine)
        assert now == addr, "the handler is %r, not ours %r" % (now, addr)
    finally:
        gsl.gsl_set_error_handler(ctypes.cast(old, HANDLER) if old else HANDLER())


@test
def in_process_faster_than_the_command_line():
    # 100 runs of a short pendulum: one process each, against one load and
    # 100 runs in this process (the ratio is printed; the assertion keeps a
    # wide margin for a loaded machine)
    args = ["run", PEND, "-q", "--t-end", "1", "--dt", "0.1"]
    t0 = time.perf_counter()
    for _ in range(100):
        subprocess.run([HOLOSIM] + args, stdout=subprocess.DEVNULL, check=True)
    t_cli = time.perf_counter() - t0
    t0 = time.perf_counter()
    m = holosim.load(PEND)
    for _ in range(100):
        m.run(t_end=1, dt=0.1)
    t_lib = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(100):
        holosim.load(PEND).run(t_end=1, dt=0.1)
    t_lib_load = time.perf_counter() - t0
    print("100 pendulum runs: %.3f s as processes, %.3f s in-process (%.0fx), "
          "%.3f s loading each time (%.0fx)" % (t_cli, t_lib, t_cli / t_lib, t_lib_load,
                                               t_cli / t_lib_load))
    assert t_cli / t_lib >= 5, (t_cli, t_lib)
    assert t_cli / t_lib_load >= 1.5, (t_cli, t_lib_load)


@test
def pandas_and_docstrings():
    r = holosim.load(PEND).run(t_end=0.5)
    try:
        import pandas  # noqa: F401
    except ImportError:
        try:
            r.to_pandas()
        except ImportError:
            pass
        else:
            raise AssertionError("to_pandas without pandas")
    else:
        df = r.to_pandas()
        assert list(df.columns) == r.columns and np.array_equal(df["x"].to_numpy(), r["x"])
    for obj in (holosim, holosim.load, holosim.Model.run, holosim.Model.modes,
                holosim.Model.equilibrium, holosim.Model.check, holosim.Result,
                holosim.Error, holosim.ModelError):
        assert obj.__doc__ and len(obj.__doc__) > 40, obj


SPHERE = os.path.join(ROOT, "models", "sphere_liftoff.yaml")
CART = os.path.join(ROOT, "models", "cart_pole.yaml")
PUSH = os.path.join(ROOT, "models", "cart_push.csv")
BALL = os.path.join(ROOT, "models", "bouncing_ball.yaml")


@test
def events_equal_the_cli_events_csv():
    ev = os.path.join(TMP, "ev.csv")
    rc, out, err = cli("run", SPHERE, "-q", "--events", ev)
    assert rc == 0, err
    with open(ev) as f:
        lines = f.read().strip("\n").split("\n")
    names = lines[0].split(",")
    r = holosim.load(SPHERE).run()
    assert names == ["event"] + r.events.columns, names
    assert r.events.names == [ln.split(",")[0] for ln in lines[1:]], r.events.names
    table = np.array([[float(x) for x in ln.split(",")[1:]] for ln in lines[1:]])
    assert same_bits(r.events.data, table)
    assert np.array_equal(r.events["t"], r.events.data[:, 0]) and len(r.events) == 2


@test
def inputs_and_stop_when_bit_for_bit():
    for src in (PUSH, "0.5*sin(3*t)"):
        rc, out, err = cli("run", CART, "-q", "--input", "F=" + src, "--t-end", "2",
                           "--stop-when", "x > 0.05")
        assert rc == 0, err
        names, table = csv_table(out)
        r = holosim.load(CART, inputs={"F": src}, stop_when="x > 0.05").run(t_end=2)
        assert r.columns == names and same_bits(r.data, table), src
        assert r.summary["stopped_by"] == "stop_when" and r.summary["stop_text"] == "x > 0.05"


@test
def bad_input_source_is_positioned():
    try:
        holosim.load(CART, inputs=["F=2*t+"])
    except holosim.ModelError as e:
        assert e.exit_code == 2 and "expression expected" in str(e) and "^" in e.text, e.text
    else:
        raise AssertionError("no error")
    try:
        holosim.load(CART, inputs={"F": "nosuch.csv"})
    except holosim.ModelError as e:
        assert "cannot open the input table" in str(e), str(e)
    else:
        raise AssertionError("no error")


@test
def summary_equals_run_summary():
    for path, extra in ((PEND, ["--t-end", "1"]), (BALL, [])):
        sf = os.path.join(TMP, "sum.csv")
        # (the Result keeps the event rows, as --events does: each is one
        # more right-hand side)
        rc, out, err = cli("run", path, "-q", "--summary", sf, "--events",
                           os.path.join(TMP, "sev.csv"), *extra)
        assert rc == 0, err
        with open(sf) as f:
            head, row = [ln for ln in f.read().split("\n") if ln][:2]
        import csv
        rec = dict(zip(next(csv.reader([head])), next(csv.reader([row]))))
        r = holosim.load(path).run(t_end=1 if extra else None)
        s = r.summary
        assert s["steps"] == int(rec["steps"]) and s["nrhs"] == int(rec["rhs_evals"])
        assert s["rows"] == int(rec["rows"]) == len(r)
        for k in ("max_G", "max_Gdot", "max_energy_balance", "max_power_residual",
                  "t_reached"):
            assert s[k] == float(rec[k]), (k, s[k], rec[k])
        assert s["impacts"] == int(rec["impacts"]) and s["transitions"] == int(rec["transitions"])
        if rec["t_rest"]:
            assert s["rested"] and s["t_rest"] == float(rec["t_rest"])
        assert s["steps"] == r.steps and s["nrhs"] == r.nrhs


finish()
