"""holosim from Python (README.md, "From Python"): one model loaded, runs in
the same process, the modes, an error.  From the repository's root after
`make`:  PYTHONPATH=python python3 doc/example.py"""
import holosim

m = holosim.load("models/pendulum.yaml", set={"theta0": 0.1})
r = m.run(t_end=2, dt=0.5, columns="t,x,E")
print(r.columns, r.data.shape)
print(r["x"])

# the small oscillation: omega^2 = g / l
md = m.modes()
print("omega =", md.omega[0], " omega^2 =", md.omega[0] ** 2)

# a sweep: one load per length, the energy drift of each run
for l in (0.5, 1.0, 2.0):
    E = holosim.load("models/pendulum.yaml", set={"l": l}).run(t_end=10)["E"]
    print("l = %.1f: max |E - E0| = %.1e" % (l, abs(E - E[0]).max()))

try:
    holosim.load("name: bad\ncoordinates: [x]\nmass: [1]\npotential: x^^2\n")
except holosim.ModelError as e:
    print("exit code", e.exit_code, "at line", e.line, "column", e.column)
    print(e)
