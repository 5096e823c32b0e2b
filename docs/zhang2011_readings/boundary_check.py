"""Check docs/zhang2011_readings/boundary.py's reweighting by simulation: a birth / death / swap chain on the
set size with ZDJ sec. 3.2's proposal probabilities whose acceptance omits b_k / d_k."""
import numpy as np
rng = np.random.default_rng(0)
km, lo = 100, 80
k_vals = np.arange(lo, km + 1)
logpi = 0.35 * (k_vals - km)  # a target pinned at k_max (ratio e^0.35 = 1.42 per vector)
pi = np.exp(logpi); pi /= pi.sum()
k, counts = km, np.zeros(km + 1)
for t in range(1_000_000):
    b, d = (0.0, 1.0) if k == km else (0.3, 0.3)
    r = rng.random()
    if r < b:
        k2 = k + 1
    elif r < b + d:
        k2 = k - 1
    else:
        k2 = k
    if lo <= k2 <= km and np.log(rng.random()) < logpi[k2 - lo] - logpi[k - lo]:
        k = k2
    counts[k] += 1
emp = counts[lo:] / counts.sum()
pred = pi.copy(); pred[-1] *= 0.3; pred /= pred.sum()
print("k:", k_vals[-4:], "\nsimulated:", np.round(emp[-4:], 3), "\npredicted:", np.round(pred[-4:], 3),
      "\ncorrect chain:", np.round(pi[-4:], 3))
