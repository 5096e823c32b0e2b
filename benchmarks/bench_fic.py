"""Time per FIC EP sweep (:func:`gpcbench.inference.ep_fic.fic_expectation_propagation`) at
n = 1,000, 2,000 and 4,000 with m = 200 inducing inputs, p = 20, one thread, as a ratio to one
m x m Cholesky factorisation timed in the same run, and the fitted slope of log time against
log n (O(n m^2) per sweep: slope ~1). A sweep is the difference of a 2S- and an S-sweep run
(tolerances 0, so neither stops early) divided by S: set-up and the prior's n x m kernel are
not counted. Usage: PYTHONPATH=src python benchmarks/bench_fic.py
"""

import time

import numpy as np
from threadpoolctl import threadpool_limits

from gpcbench.gaussian import cholesky_lower
from gpcbench.inference.ep_fic import fic_expectation_propagation
from gpcbench.kernels.fic import FICPrior
from gpcbench.kernels.rbf import mean_distance, rbf
from gpcbench.likelihoods import ProbitLikelihood

M, P, SWEEPS, REPEATS = 200, 20, 10, 5
SIZES = (1000, 2000, 4000)


def _run(prior, y, sweeps):
    start = time.perf_counter()
    fic_expectation_propagation(prior, y, ProbitLikelihood(), max_sweeps=sweeps, tol=0.0,
                                site_tol=0.0)
    return time.perf_counter() - start


def sweep_seconds(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, P))
    y = np.sign(X[:, 0] + X[:, 1] ** 2 - 1 + 0.5 * rng.normal(size=n))
    Z = X[rng.choice(n, M, replace=False)]
    prior = FICPrior.from_inputs(X, Z, mean_distance(X))
    return min((_run(prior, y, 2 * SWEEPS) - _run(prior, y, SWEEPS)) / SWEEPS
               for _ in range(REPEATS))


def cholesky_seconds(repeats=200):
    Z = np.random.default_rng(1).normal(size=(M, P))
    k_mm = rbf(Z, Z, mean_distance(Z)) + 1e-6 * np.eye(M)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        cholesky_lower(k_mm)
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def main():
    with threadpool_limits(1):
        chol = cholesky_seconds()
        times = {n: sweep_seconds(n) for n in SIZES}
    print(f"one {M} x {M} Cholesky: {chol * 1e3:.3f} ms")
    for n, t in times.items():
        print(f"n = {n:5d}, m = {M}: {t * 1e3:8.2f} ms per EP sweep = {t / chol:7.1f} Choleskys"
              f" ({t / chol / (n / M):.2f} per n/m)")
    slope = np.polyfit(np.log(SIZES), np.log([times[n] for n in SIZES]), 1)[0]
    print(f"slope of log time vs log n: {slope:.2f}")


if __name__ == "__main__":
    main()
