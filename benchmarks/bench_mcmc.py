"""Sweeps per second of the FBGKM sampler (Zhang, Dai & Jordan 2011, section 3.2) on one core.

Runs one chain of :func:`gpcbench.mcmc.gkm.run_chain` (steps a-c, fixed kernel width) on
synthetic data of the paper's sizes (n, k_max) = (300, 100), (500, 200), (2000, 200) and p = 60,
starting from n_gamma = k_max (Table 7: chains sit near k_max) and prints sweeps per second and
the implied time of 10,000 sweeps beside the paper's reported FBGKM times for data sets of the
same n and k_max (config/published/zhang2011_table3.csv, table11.csv: whole runs, Matlab on a
2.8 GHz Pentium 4, including prediction), and the share of a sweep spent in step (a)'s
whitening solve W = L^-1 K~' (:func:`gpcbench.mcmc.holmes_held.whiten`, a triangular solve
with n right-hand sides, n n_gamma^2 flops; sampler_roofline.py times every step), timed alone in the same run at the chain's mean n_gamma: the part of the
sweep no reordering of the sampler's loops can remove. Then the multiclass sampler of section 6.2
(:func:`gpcbench.mcmc.gkm_multiclass.run_chain_multi`) at n = 300, k_max = 100 for J = 3 and 6 classes,
beside the binary sampler's rate at the same n and k_max measured in the same run (the paper
reports no multiclass timings). Usage: PYTHONPATH=src python benchmarks/bench_mcmc.py
"""

import time
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from gpcbench.mcmc.active_set import chain_state
from gpcbench.mcmc.gkm import new_record, run_chain
from gpcbench.mcmc.gkm_multiclass import new_multiclass_record, run_chain_multi
from gpcbench.mcmc.holmes_held import whiten
from gpcbench.kernels.rbf import mean_distance
from gpcbench.mcmc.moves import sampler_settings

PUBLISHED = Path(__file__).resolve().parents[1] / "config" / "published"
SIZES = {(300, 100): ["Letters (A vs. B)", "Letters (A vs. C)"],
         (500, 200): ["USPS (0 vs. 1)", "USPS (0 vs. 9)", "NewsGroups"],
         (2000, 200): ["Splice"]}


def _settings(n_sweeps):
    """ZDJ's priors, Beta(1, 1) on gamma, steps (a)-(c) at a fixed width, no draw kept."""
    return sampler_settings(a_eta=1.0, b_eta=0.1, a_g=4.0, b_g=0.1, a_alpha=1.0, b_alpha=1.0,
                            jitter=1e-6, theta_step=0.2, theta_bounds=[[0.1], [1e3]],
                            steps=(1, 1, 1, 0), schedule=(n_sweeps, n_sweeps, 1))


def sweeps_per_second(n, k_max, n_sweeps, p=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (X[:, 0] + X[:, 1] ** 2 - 1 + 0.5 * rng.normal(size=n) > 0).astype(np.int64)
    s = np.where(y > 0, 1.0, -1.0)
    act = rng.choice(n, k_max, replace=False).astype(np.int64)
    record = new_record(n_sweeps, 0, k_max, 1, [])
    start = time.perf_counter()
    run_chain(X, y, s, chain_state(act, k_max, [mean_distance(X)]), _settings(n_sweeps), seed,
              record)
    return n_sweeps / (time.perf_counter() - start), record.trace[:, 3].mean()


def whitening_seconds(n, k, repeats=50, seed=0):
    """Seconds of one :func:`whiten` (W = L^-1 K~' for n points, k + 1 columns)."""
    rng = np.random.default_rng(seed)
    Kt = rng.random((n, k + 1))
    L = np.linalg.cholesky(Kt.T @ Kt + np.eye(k + 1))
    W = np.zeros_like(Kt)
    whiten(Kt, k + 1, L, W)  # compile
    start = time.perf_counter()
    for _ in range(repeats):
        whiten(Kt, k + 1, L, W)
    return (time.perf_counter() - start) / repeats


def multiclass_sweeps_per_second(n, k_max, J, n_sweeps, p=60, seed=0):
    """As :func:`sweeps_per_second` for J classes (labels: argmax of J noisy features)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.argmax(X[:, :J] + 0.5 * rng.normal(size=(n, J)), axis=1).astype(np.int64)
    x = np.zeros((J, n))
    x[y, np.arange(n)] = 1.0
    S = x - x.mean(axis=0)
    act = rng.choice(n, k_max, replace=False).astype(np.int64)
    record = new_multiclass_record(n_sweeps, 0, k_max, 1, [], J)
    start = time.perf_counter()
    run_chain_multi(X, y, S, chain_state(act, k_max, [mean_distance(X)]), _settings(n_sweeps),
                    seed, record)
    return n_sweeps / (time.perf_counter() - start), record.trace[:, -1].mean()


def published_seconds(datasets):
    rows = pd.concat([pd.read_csv(PUBLISHED / f) for f in ("zhang2011_table3.csv",
                                                            "zhang2011_table11.csv")])
    rows = rows[(rows["method"] == "FBGKM") & rows["dataset"].isin(datasets)]
    return ", ".join(f"{r.dataset} {r.time_s:.0f} s" for r in rows.itertuples())


def main():
    sweeps_per_second(50, 10, 5)  # compile
    print(f"{'n':>6} {'k_max':>6} {'mean n_gamma':>13} {'sweeps/s':>9} {'10k sweeps':>11} "
          f"{'whitening share':>16}  paper (FBGKM)")
    for (n, k_max), datasets in SIZES.items():
        rate, n_gamma = sweeps_per_second(n, k_max, max(200, 300_000 // n))
        share = whitening_seconds(n, round(n_gamma)) * rate
        print(f"{n:>6} {k_max:>6} {n_gamma:>13.1f} {rate:>9.0f} {1e4 / rate:>9.1f} s "
              f"{share:>16.2f}  {published_seconds(datasets)}")
    multiclass_sweeps_per_second(50, 10, 3, 5)  # compile
    n, k_max = 300, 100
    binary, _ = sweeps_per_second(n, k_max, 1000)
    print(f"\nmulticlass (section 6.2), n = {n}, k_max = {k_max}; binary in this run: "
          f"{binary:.0f} sweeps/s")
    print(f"{'J':>3} {'mean n_gamma':>13} {'sweeps/s':>9} {'binary / multiclass':>20} {'10k sweeps':>11}")
    for J in (3, 6):
        rate, n_gamma = multiclass_sweeps_per_second(n, k_max, J, 1000)
        print(f"{J:>3} {n_gamma:>13.1f} {rate:>9.0f} {binary / rate:>20.2f} {1e4 / rate:>9.1f} s")


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
