#!/usr/bin/env python3
# N-link planar pendulum as a holosim model: `emb` = N angles in the
# embedding form (derived metric), `cart` = 2N Cartesian coordinates with N
# rod constraints.  Usage: gen_nlink.py N emb|cart > model.yaml
import sys
N=int(sys.argv[1]); form=sys.argv[2]
out=[]
out.append(f"name: {N}-link pendulum ({form})")
out.append("parameters: {m: 1.0, l: 1.0, g: 9.81}")
if form=="emb":
    out.append("coordinates: [" + ", ".join(f"th{i}" for i in range(1,N+1)) + "]")
    emb=[]
    for i in range(1,N+1):
        emb.append(f"  x{i}: " + " + ".join(f"l*sin(th{j})" for j in range(1,i+1)))
        emb.append(f"  y{i}: " + " - ".join(["0"]+[f"l*cos(th{j})" for j in range(1,i+1)]))
    out.append("embedding:"); out+=emb
    out.append("mass: [" + ", ".join(["m"]*(2*N)) + "]")
    out.append("potential: m*g*(" + " + ".join(f"y{i}" for i in range(1,N+1)) + ")")
    out.append("initial: {q: {" + ", ".join(f"th{i}: 0.3" for i in range(1,N+1)) + "}}")
else:
    out.append("coordinates: [" + ", ".join(f"x{i}, y{i}" for i in range(1,N+1)) + "]")
    out.append("mass: [" + ", ".join(["m"]*(2*N)) + "]")
    out.append("potential: m*g*(" + " + ".join(f"y{i}" for i in range(1,N+1)) + ")")
    out.append("constraints:")
    out.append("  c1: x1^2 + y1^2 - l^2")
    for i in range(2,N+1):
        out.append(f"  c{i}: (x{i} - x{i-1})^2 + (y{i} - y{i-1})^2 - l^2")
    import math
    q=[]; x=y=0
    for i in range(1,N+1):
        x+=math.sin(0.3); y-=math.cos(0.3); q.append(f"x{i}: {x!r}, y{i}: {y!r}")
    out.append("initial: {q: {" + ", ".join(q) + "}}")
out.append("simulate: {t_end: 1, dt: 0.01}")
print("\n".join(out))
