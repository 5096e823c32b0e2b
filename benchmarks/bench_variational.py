"""Benchmark of the variational GP classifier at fixed hyperparameters (everything measured in
this run, one BLAS thread).

For n = 200, 500, 1000 synthetic 2-D points, the fit of
``VariationalGaussianProcessClassifier(learn_hyperparameters=False)`` for the lower and the upper
bound: best wall time, bound iterations, and the ratios to one ``scipy.linalg.cho_factor`` of
the n x n covariance and to scikit-learn's ``GaussianProcessClassifier(optimizer=None)``
(Laplace, logistic likelihood) with the same covariance (ConstantKernel * RBF + ConstantKernel
is eq. 13 with a shared lengthscale and theta2 = 0).

Usage: ``python benchmarks/bench_variational.py [--sizes 200 500 1000] [--repeat R]``.
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_ep import best_time
from scipy.linalg import cho_factor
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel
from threadpoolctl import threadpool_limits

from gpcbench.kernels.covariance import Covariance
from gpcbench.models import VariationalGaussianProcessClassifier

HYPER = {"theta0": 4.0, "theta1": 1e-4, "theta2": 0.0, "inverse_lengthscale": 1.0}


def synthetic(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 2))
    y = (np.sin(2 * X[:, 0]) + X[:, 1] + 0.3 * rng.standard_normal(n) > 0).astype(int)
    return X, y


def sklearn_laplace():
    kernel = ConstantKernel(HYPER["theta0"], "fixed") * RBF(
        HYPER["inverse_lengthscale"] ** -0.5, "fixed") + ConstantKernel(HYPER["theta1"], "fixed")
    return GaussianProcessClassifier(kernel, optimizer=None)


def row(n, repeat):
    """Times of one size: Cholesky, scikit-learn, and both bounds."""
    X, y = synthetic(n)
    K = Covariance(HYPER["theta0"], HYPER["theta1"], 0.0, HYPER["inverse_lengthscale"])(X)
    chol, _ = best_time(lambda: cho_factor(K + np.eye(n)), repeat)
    laplace, _ = best_time(lambda: sklearn_laplace().fit(X, y), repeat)
    out = {"n": n, "cholesky": chol, "sklearn": laplace}
    for bound in ("lower", "upper"):
        model = VariationalGaussianProcessClassifier(**HYPER, ard=False, bound=bound,
                                                     learn_hyperparameters=False)
        seconds, fitted = best_time(lambda m=model: m.fit(X, y), repeat)
        out[bound] = (seconds, fitted.bound_.n_iter, fitted.converged_)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 500, 1000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"fixed hyperparameters {HYPER}; best of {args.repeat}; 1 BLAS thread")
    print(f"{'n':>5} {'chol s':>8} {'sklearn s':>9} | {'bound':>5} {'fit s':>8} {'iter':>4} "
          f"{'conv':>5} {'x chol':>7} {'x sklearn':>9}")
    with threadpool_limits(1):
        for n in args.sizes:
            r = row(n, args.repeat)
            for bound in ("lower", "upper"):
                seconds, n_iter, converged = r[bound]
                print(f"{n:>5} {r['cholesky']:>8.4f} {r['sklearn']:>9.4f} | {bound:>5} "
                      f"{seconds:>8.4f} {n_iter:>4} {converged!s:>5} "
                      f"{seconds / r['cholesky']:>7.1f} {seconds / r['sklearn']:>9.2f}")


if __name__ == "__main__":
    main()
