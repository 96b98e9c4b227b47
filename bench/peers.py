#!/usr/bin/python3
"""Peer comparison on planar pendulum chains (driven by bench/peers.sh; see
bench/README.md, "Peers: pendulum chains").

N unit point masses on rigid massless links of length 1, g = 9.81, planar,
every absolute angle 1 rad from the downward vertical, at rest, to T_END.
For every tool and form a ladder of tolerances (or fixed steps) is run; the
error of a run is max_i |th_i(T_END) - th_ref_i| (angles from positions by
atan2 where the tool integrates positions), the reference holosim's
Cartesian form at rtol = atol = 1e-13 (dop853), cross-checked against rk8pd
and SciPy at the same tolerance.  The CPU time to reach each target error is
interpolated log-log between the two runs of the ladder that bracket it.

Standard library only; the peers are separate programs (bench/peers_*.{py,cpp,c}).
"""
import argparse
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TH0 = 1.0
TARGETS = (1e-6, 1e-9)


def log(msg):
    print("peers: " + msg, file=sys.stderr, flush=True)


def proc_cpu(pid):
    """CPU seconds (user + system, clock ticks) of a running process."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            w = f.read().rsplit(")", 1)[1].split()
        return (int(w[11]) + int(w[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def run_timed(cmd, out_path, timeout, env=None):
    """Run CMD, stdout to OUT_PATH, stderr captured; killed past TIMEOUT s of
    CPU or 3 TIMEOUT s of wall clock.  Returns (status, cpu_s, stderr, wall_s)
    with status 'ok', 'timeout' or 'exit N'; cpu_s from wait4 (user +
    system).  (No RLIMIT_CPU: with it set, Linux keeps the process CPU clock
    in ticks.)"""
    with open(out_path, "wb") as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        done = threading.Event()
        killed = []

        def watchdog():
            while not done.wait(0.05):
                if time.monotonic() - t0 > 3 * timeout or proc_cpu(p.pid) > timeout:
                    killed.append(True)
                    p.kill()
                    return
        w = threading.Thread(target=watchdog, daemon=True)
        w.start()
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        done.set()
        w.join()
        p.returncode = os.waitstatus_to_exitcode(status)
        cpu = ru.ru_utime + ru.ru_stime
        err.seek(0)
        text = err.read().decode("utf-8", "replace")
    rc = p.returncode
    if rc == 0:
        return "ok", cpu, text, wall
    if killed:
        return "timeout", cpu, text, wall
    return "exit %d" % rc, cpu, text, wall


def wrap(d):
    return (d + math.pi) % (2 * math.pi) - math.pi


def angles_from_xy(xy):
    px = py = 0.0
    th = []
    for i in range(0, len(xy), 2):
        x, y = xy[i], xy[i + 1]
        th.append(math.atan2(x - px, -(y - py)))
        px, py = x, y
    return th


def last_csv_row(path):
    with open(path) as f:
        lines = [ln for ln in f.read().splitlines() if ln]
    return [float(v) for v in lines[-1].split(",")]


def max_err(th, ref):
    if len(th) != len(ref) or any(not math.isfinite(v) for v in th):
        return math.inf
    return max(abs(wrap(a - b)) for a, b in zip(th, ref))


class Ctx:
    def __init__(self, a):
        self.a = a
        self.tmp = tempfile.mkdtemp(prefix="peers.")
        self.holosim = os.environ.get("HOLOSIM", os.path.join(ROOT, "bin", "holosim"))
        self.py = os.environ.get("PYTHON", "/usr/bin/python3")
        self.bindir = a.bindir
        self.env = dict(os.environ)
        # one thread in every BLAS (numpy, holosim's optional OpenBLAS)
        for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            self.env[k] = "1"
        self.env.setdefault("HOLOSIM_CACHE", os.path.join(a.bindir, "peers-cache"))

    def model(self, form, n):
        path = os.path.join(self.tmp, "%s%d.yaml" % (form, n))
        if not os.path.exists(path):
            script = "chain_model.sh" if form == "cart" else "chain_angle_model.sh"
            flag = ["--written"] if form == "written" else []
            with open(path, "w") as f:
                subprocess.run(["sh", os.path.join(HERE, script)] + flag +
                               [str(n), repr(self.a.t_end)], stdout=f, check=True)
        return path


# ---------- tools: each gives run(n, knob) -> dict or failure string ----------

class Holosim:
    ladder = [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12]
    knob_name = "rtol"

    def __init__(self, ctx, form, method):
        self.ctx, self.form, self.method = ctx, form, method
        self.name = "holosim %s (%s)" % ({"cart": "Cartesian", "angles": "angles",
                                          "written": "angles written out"}[form], method)
        self.warm = {}

    def cmd(self, n, tol, out_summary, native=None):
        c = self.ctx
        cols = ",".join("x%d,y%d" % (i, i) for i in range(1, n + 1)) if self.form == "cart" \
            else ",".join("th%d" % i for i in range(1, n + 1))
        t = repr(c.a.t_end)
        cmd = [c.holosim, "run", c.model(self.form, n), "--method", self.method,
               "--rtol", repr(tol), "--atol", repr(tol), "--t-end", t, "--dt", t,
               "--columns", cols, "--summary", out_summary, "-q"]
        if native:
            cmd.append("--native=" + native)
        return cmd

    def prepare(self, n):
        """Warm the native cache with one untimed run (--native=always); a
        model that does not load is reported here."""
        if n in self.warm:
            return self.warm[n]
        c = self.ctx
        summ = os.path.join(c.tmp, "warm.csv")
        out = os.path.join(c.tmp, "warm.out")
        st, cpu, err, _ = run_timed(self.cmd(n, 1e-3, summ, "always"), out,
                                    c.a.load_timeout, c.env)
        if st == "ok":
            r = None
        elif st == "timeout":
            r = "does not load (no result in %.0f s CPU)" % cpu
        else:
            msg = err.strip().splitlines()
            r = "does not load (%s: %s)" % (st, msg[-1][:90] if msg else "?")
        self.warm[n] = r
        return r

    def run(self, n, tol):
        c = self.ctx
        summ = os.path.join(c.tmp, "summary.csv")
        out = os.path.join(c.tmp, "out.csv")
        if os.path.exists(summ):
            os.unlink(summ)
        st, cpu, err, wall = run_timed(self.cmd(n, tol, summ), out, c.a.timeout, c.env)
        if st != "ok":
            return st
        row = last_csv_row(out)          # the columns asked for, no t
        th = angles_from_xy(row) if self.form == "cart" else row
        with open(summ) as f:
            lines = f.read().splitlines()
        hdr = lines[0].split(",")
        vals = lines[1].split(",")
        integ = float(vals[hdr.index("wall_s")])
        nfev = int(vals[hdr.index("rhs_evals")])
        return {"th": th, "integ": integ, "iwall": integ, "proc": cpu, "pwall": wall,
                "work": "%d f" % nfev}


class External:
    """A peer program printing 'WORD K cpu_s S wall_s W th_1 ... th_N'."""

    def __init__(self, ctx, name, argv, ladder, knob_name, unit):
        self.ctx, self.name, self.argv = ctx, name, argv
        self.ladder, self.knob_name, self.unit = ladder, knob_name, unit

    def prepare(self, n):
        return None

    def run(self, n, knob):
        c = self.ctx
        out = os.path.join(c.tmp, "peer.out")
        cmd = self.argv(n, knob)
        st, cpu, err, wall = run_timed(cmd, out, c.a.timeout, c.env)
        if st != "ok":
            if st.startswith("exit"):
                msg = err.strip().splitlines()
                st += " (%s)" % (msg[-1][:80] if msg else "?")
            return st
        with open(out) as f:
            w = f.read().split()
        th = [float(v) for v in w[6:]]
        return {"th": th, "integ": float(w[3]), "iwall": float(w[5]), "proc": cpu, "pwall": wall,
                "work": "%s %s" % (w[1], self.unit)}


def make_tools(ctx, which):
    a = ctx.a
    t = repr(a.t_end)
    th0 = repr(TH0)
    b = ctx.bindir
    tol_ladder = [1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8, 1e-9, 1e-10, 1e-11, 1e-12]
    all_tools = {
        "holosim-cart": lambda: Holosim(ctx, "cart", a.method),
        "holosim-angles": lambda: Holosim(ctx, "angles", a.method),
        "holosim-written": lambda: Holosim(ctx, "written", a.method),
        "scipy": lambda: External(
            ctx, "SciPy DOP853, angle equations",
            lambda n, k: [ctx.py, os.path.join(HERE, "peers_scipy.py"), str(n), t, repr(k), th0],
            tol_ladder, "rtol", "f"),
        "simbody-pins": lambda: External(
            ctx, "Simbody pins (RK Merson)",
            lambda n, k: [os.path.join(b, "peers_simbody"), "pins", str(n), t, repr(k), th0],
            tol_ladder, "accuracy", "realizations"),
        "simbody-rods": lambda: External(
            ctx, "Simbody rods (RK Merson)",
            lambda n, k: [os.path.join(b, "peers_simbody"), "rods", str(n), t, repr(k), th0],
            tol_ladder, "accuracy", "realizations"),
        "mujoco-rk4": lambda: External(
            ctx, "MuJoCo hinges (RK4)",
            lambda n, k: [os.path.join(b, "peers_mujoco"), "rk4", str(n), t, str(k), th0],
            [int(round(a.t_end * s)) for s in (50, 100, 200, 400, 800, 1600, 3200, 6400,
                                               12800, 25600)], "steps", "steps"),
    }
    return [(k, all_tools[k]()) for k in which]


# ---------- reference ----------

def reference(ctx, n):
    """Angles at T_END from holosim's Cartesian form at 1e-13 (dop853), cached
    in BINDIR/peers-ref; with the cross-checks (rk8pd, SciPy's Cartesian
    DOP853 at 1e-13, SciPy's angle equations at 1e-13 for N <= 128)."""
    a = ctx.a
    d = os.path.join(ctx.bindir, "peers-ref")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "chain%d_T%s.txt" % (n, repr(a.t_end)))
    if os.path.exists(path):
        with open(path) as f:
            lines = f.read().splitlines()
        return [float(v) for v in lines[0].split()], lines[1]
    tol = 1e-13
    res = {}
    for method in ("dop853", "rk8pd"):
        h = Holosim(ctx, "cart", method)
        if h.prepare(n):
            sys.exit("peers: the reference does not load: " + h.warm[n])
        saved = a.timeout
        a.timeout = 600
        r = h.run(n, tol)
        a.timeout = saved
        if isinstance(r, str):
            sys.exit("peers: the reference run failed: " + r)
        res[method] = r["th"]
    ref = res["dop853"]
    notes = ["rk8pd %.1e" % max_err(res["rk8pd"], ref)]
    out = os.path.join(ctx.tmp, "sc.csv")
    t = repr(a.t_end)
    st, _, _, _ = run_timed([ctx.py, os.path.join(HERE, "scipy_chain.py"), "-n", str(n), "-T", t,
                          "-d", t, "--tol", repr(tol), "-o", out], os.devnull, 1200, ctx.env)
    if st == "ok":
        notes.append("SciPy Cartesian %.1e" % max_err(angles_from_xy(last_csv_row(out)[1:2 * n + 1]),
                                                      ref))
    else:
        notes.append("SciPy Cartesian: " + st)
    if n <= 128:
        st, _, _, _ = run_timed([ctx.py, os.path.join(HERE, "peers_scipy.py"), str(n), t,
                              repr(tol), repr(TH0)], out, 1200, ctx.env)
        if st == "ok":
            with open(out) as f:
                th = [float(v) for v in f.read().split()[6:]]
            notes.append("SciPy angles %.1e" % max_err(th, ref))
    with open(path, "w") as f:
        f.write(" ".join("%.17g" % v for v in ref) + "\n" + ", ".join(notes) + "\n")
    return ref, ", ".join(notes)


# ---------- the measurement ----------

def to_target(rungs, target, key):
    """Time to reach TARGET: log-log interpolation between the last rung above
    the target and the first at or below it (ladder order, loose to tight).
    Returns (seconds or None, note)."""
    prev = None
    for r in rungs:
        if not isinstance(r.get("err"), float) or key not in r:
            return None, "not reached" + ("" if prev is None else " (best %.0e)" % prev["err"])
        if r["err"] <= target:
            if prev is None or not (prev["err"] > 0 and r["err"] > 0) or prev["err"] == math.inf:
                return r[key], "<=" if prev is None else ""
            x0, x1 = math.log(prev["err"]), math.log(r["err"])
            y0, y1 = math.log(prev[key]), math.log(r[key])
            if x1 == x0:
                return r[key], ""
            return math.exp(y0 + (math.log(target) - x0) * (y1 - y0) / (x1 - x0)), ""
        prev = r
    best = min((r["err"] for r in rungs if isinstance(r.get("err"), float)), default=None)
    return None, "not reached" + ("" if best is None else " (best %.0e)" % best)


def machine(load0, load1):
    model, cpus = "?", os.cpu_count()
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for ln in out.splitlines():
            if ln.startswith("Model name:"):
                model = ln.split(":", 1)[1].strip()
    except OSError:
        pass
    try:
        rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip() or "?"
    except OSError:
        rev = "?"
    return ("Machine: %s, %s CPUs (lscpu); %s UTC; holosim at %s; load average "
            "(1 min) %.2f at the start, %.2f at the end." % (
                model, cpus, time.strftime("%Y-%m-%d %H:%M", time.gmtime()), rev,
                load0[0], load1[0]))


def ratio_of(v, base):
    return "%.2gx" % (v / base) if v and base else "-"


def fmt_t(v):
    if v is None:
        return "-"
    if v < 1e-3:
        return "%.0f us" % (v * 1e6)
    if v < 1:
        return "%.2f ms" % (v * 1e3) if v < 0.01 else "%.1f ms" % (v * 1e3)
    return "%.2f s" % v


def table(ns, tools, state, ki, kp):
    """The time to each target, integration (KI) and whole process (KP)."""
    print("| N | tool, form | integration to 1e-6 | whole process to 1e-6 | integration to "
          "1e-9 | whole process to 1e-9 | / holosim Cartesian, integration 1e-6, 1e-9 | "
          "/ holosim angles, integration 1e-6, 1e-9 |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for n in ns:
        base = {}
        for key, tool in tools:
            s = state[(key, n)]
            cells, ratio, ratio_a = [], [], []
            for tg in TARGETS:
                if s["fail"]:
                    cells += [s["fail"] if tg == TARGETS[0] else "", ""]
                    continue
                vi, note = to_target(s["rungs"], tg, ki)
                vp, _ = to_target(s["rungs"], tg, kp)
                if vi is None:
                    last = s["rungs"][-1] if s["rungs"] else {}
                    if "fail" in last:
                        note = "%s (%s at %s %g)" % (note, last["fail"], tool.knob_name,
                                                    last["knob"])
                    elif "budget" in s:
                        note = "%s (ladder stopped before %s %g: %.3g s CPU spent)" % (
                            note, tool.knob_name, s["budget"], s["spent"])
                    cells += [note, ""]
                else:
                    cells += [(note + " " if note else "") + fmt_t(vi),
                              (note + " " if note else "") + fmt_t(vp)]
                if key in ("holosim-cart", "holosim-angles"):
                    base[(key, tg)] = vi
                ratio.append(ratio_of(vi, base.get(("holosim-cart", tg))))
                ratio_a.append(ratio_of(vi, base.get(("holosim-angles", tg))))
            print("| %d | %s | %s | %s | %s | %s | %s | %s |" % (
                n, tool.name, cells[0], cells[1], cells[2], cells[3],
                ", ".join(ratio) if key != "holosim-cart" else "",
                ", ".join(ratio_a) if key != "holosim-angles" else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="N = 8, 32; one round")
    ap.add_argument("--n", default=None, help="comma list of N (default 8,32,128,512)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds (default 3; quick 1)")
    ap.add_argument("--t-end", type=float, default=2.0)
    ap.add_argument("--method", default="dop853", help="holosim's stepper (default dop853)")
    ap.add_argument("--tools", default="holosim-cart,holosim-angles,holosim-written,scipy,"
                    "simbody-pins,"
                    "simbody-rods,mujoco-rk4")
    ap.add_argument("--timeout", type=float, default=None,
                    help="CPU seconds per timed run (default 60; quick 10)")
    ap.add_argument("--load-timeout", type=float, default=None,
                    help="CPU seconds for holosim's untimed warm-up/load (default 120; quick 20)")
    ap.add_argument("--budget", type=float, default=None,
                    help="CPU seconds of one tool's first ladder at one N; past it the "
                    "ladder stops (default 120; quick 20)")
    ap.add_argument("--long", type=float, default=5.0,
                    help="a rung whose first run takes more CPU seconds than this is not repeated")
    ap.add_argument("--reps", type=int, default=3,
                    help="runs per round, after the first, of a rung under --short s CPU "
                    "(default 3)")
    ap.add_argument("--short", type=float, default=1.0)
    ap.add_argument("--bindir", default=os.path.join(ROOT, "build", "bench"))
    a = ap.parse_args()
    ns = [int(v) for v in (a.n or ("8,32" if a.quick else "8,32,128,512")).split(",")]
    rounds = a.rounds or (1 if a.quick else 3)
    a.timeout = a.timeout or (10.0 if a.quick else 60.0)
    a.load_timeout = a.load_timeout or (20.0 if a.quick else 120.0)
    a.budget = a.budget or (20.0 if a.quick else 120.0)
    ctx = Ctx(a)
    tools = make_tools(ctx, [t for t in a.tools.split(",") if t])
    t_start = time.process_time()
    load0 = os.getloadavg()
    refs = {}
    for n in ns:
        log("reference N = %d" % n)
        refs[n] = reference(ctx, n)
    # state[(tool, n)] = {"fail": str|None, "rungs": [dict per ladder entry run so far],
    #                     "stop": bool}
    state = {}
    for key, tool in tools:
        for n in ns:
            state[(key, n)] = {"fail": tool.prepare(n), "rungs": [], "stop": False,
                               "spent": 0.0}
    keys = ("integ", "iwall", "proc", "pwall")
    for rnd in range(rounds):
        log("round %d of %d" % (rnd + 1, rounds))
        for n in ns:
            depth = max(len(t.ladder) for _, t in tools)
            for k in range(depth):              # rung k of every tool in turn: ABCABC...
                for rep in range(1 if rnd == 0 else a.reps):
                    for key, tool in tools:
                        s = state[(key, n)]
                        if s["fail"] or k >= len(tool.ladder):
                            continue
                        if rnd == 0:
                            if s["stop"]:
                                continue
                        elif k >= len(s["rungs"]) or rep >= s["rungs"][k].get("repeat", 0):
                            continue
                        r = tool.run(n, tool.ladder[k])
                        if rnd == 0:
                            if isinstance(r, str):
                                s["rungs"].append({"knob": tool.ladder[k], "fail": r})
                                s["stop"] = True
                                continue
                            s["spent"] += r["proc"]
                            if s["spent"] > a.budget and k + 1 < len(tool.ladder):
                                s["stop"] = True
                                s["budget"] = tool.ladder[k + 1]
                            e = max_err(r["th"], refs[n][0])
                            rung = {"knob": tool.ladder[k], "err": e, "work": r["work"]}
                            for kk in keys:
                                rung[kk + "_l"] = [r[kk]]
                            s["rungs"].append(rung)
                            if e <= min(TARGETS):
                                s["stop"] = True
                        elif not isinstance(r, str):
                            for kk in keys:
                                s["rungs"][k][kk + "_l"].append(r[kk])
            # after round 1: repeat only the rungs that bracket a target and
            # are not long; the short ones --reps times a round
            if rnd == 0:
                for key, tool in tools:
                    rs = state[(key, n)]["rungs"]
                    for tg in TARGETS:
                        for i, r in enumerate(rs):
                            if isinstance(r.get("err"), float) and r["err"] <= tg:
                                for j in (i - 1, i):
                                    if j >= 0 and "err" in rs[j] and \
                                            rs[j]["proc_l"][0] <= a.long:
                                        rs[j]["repeat"] = a.reps if \
                                            rs[j]["proc_l"][0] <= a.short else 1
                                break
    for s in state.values():
        for r in s["rungs"]:
            if "integ_l" in r:
                for kk in keys:
                    r[kk] = statistics.median(r[kk + "_l"])
    used = time.process_time() - t_start
    load1 = os.getloadavg()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    # ---------- report ----------
    print("Chains of N unit point masses on rigid links (l = 1, g = 9.81), every absolute "
          "angle %g rad from the downward vertical, at rest, to t_end = %g s. Error: max over "
          "links of |th_i(t_end) - th_ref_i|; reference: holosim's Cartesian form, dop853 at "
          "rtol = atol = 1e-13. Times are medians of %d interleaved round(s) "
          "(rungs over %g s CPU run once, rungs under %g s %d times a round after the first; a timed run is stopped past %g s CPU, a tool's ladder "
          "at one N past %g s CPU in all); the time to a target is interpolated log-log "
          "between the two ladder runs that bracket it (\"<=\": the loosest run already "
          "meets it). Integration alone: holosim's own timer (wall clock, monotonic, around "
          "the integration), the peers' CPU time around their integration; whole process: "
          "CPU time (user + system) of the process. holosim: --method %s, native kernels "
          "from a warm cache (default --native=auto after one --native=always run).\n"
          % (TH0, a.t_end, rounds, a.long, a.short, a.reps, a.timeout, a.budget, a.method))
    print(machine(load0, load1) + "\n")
    table(ns, tools, state, "integ", "proc")
    print("\nThe same runs, integration alone on one clock for every tool (monotonic wall "
          "clock around the integration: holosim's timer, the peers' own), whole process in "
          "wall clock:\n")
    table(ns, tools, state, "iwall", "pwall")
    print("\nReference cross-checks (max angle difference from the reference at t_end):\n")
    for n in ns:
        print("- N = %d: %s" % (n, refs[n][1]))
    print("\nLadders (round 1 error; median times):\n")
    print("| N | tool, form | knob | error | work | integration | whole process | "
          "integration, wall | process CPU / wall | runs | spread |")
    print("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    spreads = []
    for n in ns:
        for key, tool in tools:
            s = state[(key, n)]
            if s["fail"]:
                print("| %d | %s | | %s | | | | | | | |" % (n, tool.name, s["fail"]))
            for r in s["rungs"]:
                if "fail" in r:
                    print("| %d | %s | %s %g | %s | | | | | | | |" % (
                        n, tool.name, tool.knob_name, r["knob"], r["fail"]))
                else:
                    sp = ""
                    if len(r["integ_l"]) > 1 and r["integ"] > 0:
                        v = (max(r["integ_l"]) - min(r["integ_l"])) / r["integ"]
                        spreads.append(v)
                        sp = "%.0f%%" % (100 * v)
                    share = statistics.median(c / w for c, w in zip(r["proc_l"], r["pwall_l"])
                                              if w > 0)
                    print("| %d | %s | %s %g | %.1e | %s | %s | %s | %s | %.2f | %d | %s |" % (
                        n, tool.name, tool.knob_name, r["knob"], r["err"], r["work"],
                        fmt_t(r["integ"]), fmt_t(r["proc"]), fmt_t(r["iwall"]), share,
                        len(r["integ_l"]), sp))
    if spreads:
        spreads.sort()
        print("\nSpread (max - min) / median of the integration times of the repeated runs: "
              "median %.0f%%, worst %.0f%% (%d rungs)." % (
                  100 * statistics.median(spreads), 100 * spreads[-1], len(spreads)))
    print("\nCPU of this run: %.0f s (the driver %.0f s, the runs %.0f s)." % (
        used + children.ru_utime + children.ru_stime, used,
        children.ru_utime + children.ru_stime))
    return 0


if __name__ == "__main__":
    sys.exit(main())
