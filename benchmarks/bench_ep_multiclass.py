"""Benchmark of multiclass EP in the class-difference formulation (issue 5). Everything
compared is measured in this run.

EP to convergence at fixed hyperparameters for n = 200, 500 and J = 3, 6 on synthetic data
(J Gaussian blobs in 3-D): wall time, sweeps, and the ratio to binary EP on the same n
points (labels: class 0 against the rest), against the issue's target of 3 (J - 1). The
multiclass EP here is the binary EP run densely on n(J-1) sites (eq. 43's prior), so the
ratio shows what that costs.

Usage: ``python benchmarks/bench_ep_multiclass.py [--repeat R] [--threads T]``.
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_ep import best_time
from threadpoolctl import threadpool_limits

from gpcbench.covariance import Covariance
from gpcbench.inference.ep import expectation_propagation
from gpcbench.likelihoods import NoisyThresholdLikelihood
from gpcbench.multiclass import ClassDifferenceCovariance

BASE = Covariance(theta0=1.0, theta1=1e-4, theta2=0.1, inverse_lengthscale=0.5)


def blobs(n, J, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=2.0, size=(J, 3))
    y = np.arange(n) % J
    return centres[y] + rng.normal(size=(n, 3)), y


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args(argv)
    lik = NoisyThresholdLikelihood()
    expectation_propagation(np.eye(4), np.ones(4), lik)  # numba warm-up
    print(f"{'n':>5} {'J':>3} {'sites':>6} | {'binary s':>8} {'sw':>3} | {'multi s':>8} {'sw':>3}"
          f" | {'ratio':>7} {'target':>6}")
    with threadpool_limits(args.threads):
        for n in (200, 500):
            for J in (3, 6):
                X, y = blobs(n, J)
                C = BASE(X)
                signs = np.where(y == 0, 1.0, -1.0)
                t_bin, bin_ep = best_time(lambda: expectation_propagation(C, signs, lik),
                                          args.repeat)
                K = ClassDifferenceCovariance(BASE, y, J)(X)
                sites = np.ones(K.shape[0])
                t_multi, multi_ep = best_time(lambda: expectation_propagation(K, sites, lik),
                                              args.repeat)
                flags = ["" if ep.converged else "!" for ep in (bin_ep, multi_ep)]
                print(f"{n:5d} {J:3d} {K.shape[0]:6d} | {t_bin:8.3f} {bin_ep.n_sweeps:3d}{flags[0]}"
                      f" | {t_multi:8.3f} {multi_ep.n_sweeps:3d}{flags[1]}"
                      f" | {t_multi / t_bin:7.1f} {3 * (J - 1):6d}", flush=True)
    print("('!' = not converged within 100 sweeps)")


if __name__ == "__main__":
    main()
