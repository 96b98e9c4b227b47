#!/usr/bin/python3
"""The problems of bench/contacts.sh solved with Siconos (Debian's
python3-siconos, 4.4; scripts/install-bench-deps.sh installs it).

    siconos_contacts.py ball ed [RTOL]      event-driven (LsodarOSI, an impact
                                            LCP and an acceleration LCP)
    siconos_contacts.py ball mj H           Moreau-Jean time-stepping, step H
    siconos_contacts.py cradle ed N T_END [ring]
    siconos_contacts.py cradle mj N T_END H [ring]

The bouncing ball: h = 1, e = 0.9, g = 9.81, m = 1, 10 s.  The cradle: the
model of bench/cradle_model.sh (N unit balls, d = 0.1, gaps 0.001, e = 1,
ball 1 at v0 = 1; `ring`: ball N meets ball 1 again at x1 + L).  One line
of NAME=VALUE on standard output: the figures contacts.sh compares with the
closed forms.  Time it from outside (the whole process, interpreter and
import included, as holosim's is).
"""
import math
import sys

import numpy as np
import siconos.kernel as sk

NS_EVENT = 2        # Event::getType() of a NonSmoothEvent (Event.hpp)


def ball(scheme, arg):
    h, g, m, e, t_end = 1.0, 9.81, 1.0, 0.9, 10.0
    ds = sk.LagrangianLinearTIDS([h], [0.0], np.array([[m]]))
    ds.setFExtPtr(np.array([-m * g]))
    inter = sk.Interaction(sk.NewtonImpactNSL(e),
                           sk.LagrangianLinearTIR(np.array([[1.0]])))
    nsds = sk.NonSmoothDynamicalSystem(0.0, t_end)
    nsds.insertDynamicalSystem(ds)
    nsds.link(inter, ds)
    q, v = ds.q(), ds.velocity()
    t1 = math.sqrt(2 * h / g)
    t_acc = t1 * (1 + e) / (1 - e)
    impacts, ymin = [], 0.0
    if scheme == "ed":
        rtol = float(arg) if arg else 1e-14
        sim = sk.EventDriven(nsds, sk.TimeDiscretisation(0.0, 0.01))
        osi = sk.LsodarOSI()
        sim.associate(osi, ds)
        osi.setTol(1, rtol, rtol)
        sim.insertNonSmoothProblem(sk.LCP(), sk.SICONOS_OSNSP_ED_IMPACT)
        sim.insertNonSmoothProblem(sk.LCP(), sk.SICONOS_OSNSP_ED_SMOOTH_ACC)
        sim.initialize()
        em = sim.eventsManager()
        while sim.hasNextEvent():
            sim.advanceToEvent()
            sim.processEvents()
            ymin = min(ymin, q[0])
            ev = em.currentEvent()
            if ev.getType() == NS_EVENT:
                impacts.append(ev.getDoubleTimeOfEvent())
        # Rest: the last impact, after which the contact stays closed.
        t_rest = impacts[-1]
    else:
        step = float(arg)
        osi = sk.MoreauJeanOSI(0.5)
        sim = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, step), osi,
                              sk.LCP())
        t_rest, prev_up = None, True
        while sim.hasNextEvent():
            sim.computeOneStep()
            t = sim.nextTime()
            ymin = min(ymin, q[0])
            # An impact: a step whose impulse is positive and after which
            # the ball moves up (a resting step's impulse is m g H).
            if ds.p(1)[0] > 0 and v[0] > 0 and not prev_up:
                impacts.append(t)
            prev_up = bool(v[0] > 0) if v[0] != 0 else prev_up
            if q[0] > 1e-9:
                t_rest = None
            elif t_rest is None:
                t_rest = t
            sim.nextStep()
        # The velocity flips sign in the resting phase too (chattering):
        # count the impacts before rest only.
        impacts = [t for t in impacts if t_rest is None or t < t_rest]
    # The closed form: t_k = t1 (1 + 2 e + ... + 2 e^(k-1)).
    ref, tk, ek = [], t1, 1.0
    for _ in impacts:
        ref.append(tk)
        ek *= e
        tk += 2 * t1 * ek
    err50 = max(abs(a - b) for a, b in zip(impacts[:50], ref[:50]))
    print("scheme=%s impacts=%d first_err=%.3g max_err_50=%.3g t_rest=%.10f "
          "rest_err=%.3g y_end=%.3g v_end=%.3g y_min=%.3g"
          % (scheme, len(impacts), impacts[0] - t1, err50, t_rest,
             t_rest - t_acc, q[0], v[0], ymin))


def cradle(scheme, n, t_end, step, ring):
    d, gap, v0 = 0.1, 0.001, 1.0
    q0 = np.array([i * (d + gap) for i in range(n)])
    v = np.zeros(n)
    v[0] = v0
    ds = sk.LagrangianLinearTIDS(q0, v, np.eye(n))
    nsds = sk.NonSmoothDynamicalSystem(0.0, t_end)
    nsds.insertDynamicalSystem(ds)
    for i in range(n - 1):
        hrow = np.zeros((1, n))
        hrow[0, i], hrow[0, i + 1] = -1.0, 1.0
        nsds.link(sk.Interaction(sk.NewtonImpactNSL(1.0),
                                 sk.LagrangianLinearTIR(hrow, np.array([-d]))),
                  ds)
    if ring:
        hrow = np.zeros((1, n))
        hrow[0, 0], hrow[0, n - 1] = 1.0, -1.0
        nsds.link(sk.Interaction(sk.NewtonImpactNSL(1.0),
                                 sk.LagrangianLinearTIR(
                                     hrow, np.array([n * (d + gap) - d]))),
                  ds)
    vel = ds.velocity()
    p0, e0 = v0, 0.5 * v0 * v0
    dp = de = 0.0
    impacts = 0
    if scheme == "ed":
        sim = sk.EventDriven(nsds, sk.TimeDiscretisation(0.0, t_end / 100))
        osi = sk.LsodarOSI()
        sim.associate(osi, ds)
        osi.setTol(1, 1e-14, 1e-14)
        sim.insertNonSmoothProblem(sk.LCP(), sk.SICONOS_OSNSP_ED_IMPACT)
        sim.insertNonSmoothProblem(sk.LCP(), sk.SICONOS_OSNSP_ED_SMOOTH_ACC)
        sim.initialize()
        em = sim.eventsManager()
        while sim.hasNextEvent():
            sim.advanceToEvent()
            sim.processEvents()
            if em.currentEvent().getType() == NS_EVENT:
                impacts += 1
            dp = max(dp, abs(vel.sum() - p0))
            de = max(de, abs(0.5 * vel.dot(vel) - e0))
    else:
        osi = sk.MoreauJeanOSI(0.5)
        sim = sk.TimeStepping(nsds, sk.TimeDiscretisation(0.0, step), osi,
                              sk.LCP())
        while sim.hasNextEvent():
            sim.computeOneStep()
            dp = max(dp, abs(vel.sum() - p0))
            de = max(de, abs(0.5 * vel.dot(vel) - e0))
            sim.nextStep()
    moving = int(np.sum(np.abs(vel) > 1e-12))
    print("scheme=%s impacts=%s max_dP=%.3g max_dE=%.3g v_max=%.17g "
          "ball=%d moving=%d"
          % (scheme, impacts if scheme == "ed" else "n/a", dp, de,
             np.max(vel), int(np.argmax(vel)) + 1, moving))


def main(argv):
    if len(argv) >= 2 and argv[0] == "ball" and argv[1] in ("ed", "mj"):
        ball(argv[1], argv[2] if len(argv) > 2 else None)
    elif len(argv) >= 4 and argv[0] == "cradle" and argv[1] == "ed":
        cradle("ed", int(argv[2]), float(argv[3]), None,
               len(argv) > 4 and argv[4] == "ring")
    elif len(argv) >= 5 and argv[0] == "cradle" and argv[1] == "mj":
        cradle("mj", int(argv[2]), float(argv[3]), float(argv[4]),
               len(argv) > 5 and argv[5] == "ring")
    else:
        sys.stderr.write(__doc__)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
