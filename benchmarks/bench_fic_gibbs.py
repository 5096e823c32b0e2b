"""CPU time per sweep of the FIC Gibbs sampler (:func:`gpcbench.mcmc.fic_gibbs.run_fic_gibbs`,
ZDJ's SGP+FIC+MCMC row) at n = 2,000, 6,000 and 20,000 (Splice, Adult1, Adult2) with m = 200
inducing inputs, p = 20, one thread, as a ratio to its memory-bound floor measured in the same
run: two matrix-vector products with the n x m matrix U (U^T c and U v, the two passes over U a
sweep makes). The truncated-normal draws and the O(n) vector work make up the rest. A sweep is
the difference of a 2S- and an S-sweep chain divided by S: set-up (the prior's kernel, the m x m
factorisation) is not counted.

Usage: PYTHONPATH=src python benchmarks/bench_fic_gibbs.py
"""

import time

import numpy as np
from threadpoolctl import threadpool_limits

from gpcbench.kernels.fic import FICPrior
from gpcbench.kernels.rbf import mean_distance
from gpcbench.mcmc.fic_gibbs import run_fic_gibbs

M, P, SWEEPS, REPEATS = 200, 20, 100, 3
SIZES = (2000, 6000, 20000)


def best_cpu_seconds(work, repeats=REPEATS):
    """Smallest CPU time of ``repeats`` calls of ``work``."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times)


def problem(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, P))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    inducing = X[rng.choice(n, M, replace=False)]
    return FICPrior.from_inputs(X, inducing, mean_distance(X)), y


def main():
    print("| n | m | sweep (ms) | two passes over U (ms) | sweep / two passes |")
    print("|---|---|---|---|---|")
    with threadpool_limits(1):
        run_fic_gibbs(*problem(200), 10, 0, 1, 0)  # compile the numba draws
        for n in SIZES:
            prior, y = problem(n)
            chain = [best_cpu_seconds(lambda s=s: run_fic_gibbs(prior, y, s, 0, 1, 1))
                     for s in (SWEEPS, 2 * SWEEPS)]
            sweep = (chain[1] - chain[0]) / SWEEPS
            c, v = np.ones(n), np.ones(M)
            passes = best_cpu_seconds(
                lambda: [(prior.U.T @ c, prior.U @ v) for _ in range(SWEEPS)]) / SWEEPS
            print(f"| {n} | {M} | {1e3 * sweep:.2f} | {1e3 * passes:.2f} | {sweep / passes:.2f} |")


if __name__ == "__main__":
    main()
