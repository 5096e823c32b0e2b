"""Benchmark of the softmax Laplace mode (Williams & Barber 1998, app. C). Everything compared
is measured in this run, with one BLAS thread.

For n = 200, 500 and C = 3, 6 on synthetic data (C Gaussian blobs in 3-D), at fixed
hyperparameters (one covariance per class):

* Newton to convergence (:func:`gpcbench.inference.laplace_softmax.laplace_mode`): wall time,
  Newton steps, time per step, and both as ratios to C Choleskys of n x n (the unit the block
  algorithm is built from: a step does C + 1 Choleskys, C inverses from the factors, and O(C n^2)
  products, so the per-step ratio should be a small constant, independent of C, while a dense
  (Cn) x (Cn) Cholesky alone would be C^2 times the unit);
* a dense (Cn) x (Cn) Cholesky, measured, for the factor the block structure saves;
* C times our binary logistic Laplace mode (:func:`gpcbench.inference.laplace.laplace_mode`,
  class 0 against the rest, covariance of class 0): the issue's reference, C binary problems;
* scikit-learn's GaussianProcessClassifier (one-vs-rest binary Laplace, optimizer=None, same
  covariance as an RBF + constant + white kernel), fit on the same data.

Usage: ``python benchmarks/bench_laplace_softmax.py [--repeat R]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import linalg
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
from threadpoolctl import threadpool_limits

from gpcbench.inference.laplace import laplace_mode as binary_laplace_mode
from gpcbench.inference.laplace_softmax import laplace_mode
from gpcbench.kernels.covariance import Covariance
from gpcbench.kernels.multiclass import SoftmaxCovariance
from gpcbench.likelihoods import get_likelihood

LOGISTIC = get_likelihood("logistic")

THETA0, THETA1, THETA2, SCALE = 2.0, 0.1, 1e-3, 0.5


def best_time(function, repeat):
    """Smallest wall time of ``repeat`` calls, and the last result."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def blobs(n, C, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % C
    centres = 2.0 * rng.normal(size=(C, 3))
    return centres[y] + rng.normal(size=(n, 3)), y


def run(n, C, repeat):
    X, y = blobs(n, C)
    Y = np.eye(C)[y].T
    cov = SoftmaxCovariance(tuple(Covariance(THETA0 * (1 + 0.1 * c), THETA1, THETA2, SCALE)
                                  for c in range(C)), C)
    K = cov(X)
    chol_C, _ = best_time(lambda: [linalg.cholesky(K_c, lower=True) for K_c in K], repeat)
    dense = linalg.block_diag(*K)
    chol_dense, _ = best_time(lambda: linalg.cholesky(dense, lower=True), max(1, repeat // 2))
    newton, state = best_time(lambda: laplace_mode(K, Y), repeat)
    signs = np.where(y == 0, 1.0, -1.0)
    binary, _ = best_time(lambda: binary_laplace_mode(K[0], signs, LOGISTIC), repeat)
    kernel = (ConstantKernel(THETA0) * RBF(1 / np.sqrt(SCALE)) + ConstantKernel(THETA1)
              + WhiteKernel(THETA2))
    sk, _ = best_time(lambda: GaussianProcessClassifier(kernel, optimizer=None).fit(X, y), repeat)
    steps = state.n_iter
    print(f"| {n} | {C} | {1e3 * chol_C:.1f} | {1e3 * chol_dense:.1f} | {1e3 * newton:.1f} "
          f"| {steps} | {newton / chol_C:.1f} | {newton / (steps + 1) / chol_C:.1f} "
          f"| {1e3 * C * binary:.1f} | {newton / (C * binary):.2f} | {1e3 * sk:.1f} "
          f"| {newton / sk:.2f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print("| n | C | C Choleskys n x n (ms) | dense (Cn)^2 Cholesky (ms) | Newton mode (ms) "
          "| steps | Newton / C chol | per factorisation / C chol | C x binary mode (ms) "
          "| Newton / (C x binary) | sklearn OvR Laplace (ms) | Newton / sklearn |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    with threadpool_limits(1):
        for n in (200, 500):
            for C in (3, 6):
                run(n, C, args.repeat)


if __name__ == "__main__":
    main()
