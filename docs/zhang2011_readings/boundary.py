"""ZDJ's "most = k_max - 1": reweight a measured n_gamma histogram to the chain whose acceptance
ratios omit b_k / d_k (George & McCulloch's form, ZDJ sec. 3.2 last paragraph) while proposing
with ZDJ's boundary probabilities (b = d = 0.3 inside, d_{k_max} = 1). That chain's stationary
distribution is the correct one times 0.3 at n_gamma = k_max (detailed balance between
k_max - 1 and k_max: flux pi'(k_max - 1) 0.3 a = pi'(k_max) 1 a / rho), unchanged elsewhere."""
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    h = {int(k): v for k, v in r["hist"].items()}
    km = r["k_max"]
    if max(h) != km:
        continue
    w = dict(h)
    w[km] = 0.3 * h[km]
    tot = sum(w.values())
    most = max(w, key=w.get)
    print(r["ds"], r["fold"], r["reading"], "k_max", km, "correct: most", max(h, key=h.get),
          f"({h[km]} at k_max, {h.get(km - 1, 0)} at k_max-1 of {sum(h.values())})",
          "| omitted b/d: most", most, f"({w[most] / tot:.2f} of sweeps; k_max {w[km] / tot:.2f})",
          "min", min(h))
