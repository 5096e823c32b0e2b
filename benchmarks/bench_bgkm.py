"""Sweeps per second of the O(n^2) BGKM chain (:func:`gpcbench.mcmc.bgkm.run_bgkm`) against the
generic sampler in BGKM mode (:func:`gpcbench.mcmc.gkm.run_chain`, all n points active, no
gamma moves, fixed width), O(n^3) per sweep, at n = 300 and 800, p = 60, one thread, in the
same run. Each rate is the whole call's (the fast chain's one eigendecomposition and the
generic one's initial factorisations included). Usage: PYTHONPATH=src python
benchmarks/bench_bgkm.py
"""

import time

import numpy as np
from threadpoolctl import threadpool_limits

from gpcbench.mcmc.active_set import chain_state
from gpcbench.mcmc.bgkm import run_bgkm
from gpcbench.mcmc.gkm import new_record, run_chain
from gpcbench.kernels.rbf import mean_distance
from gpcbench.mcmc.moves import sampler_settings

SWEEPS = {300: (100, 3000), 800: (20, 1000)}  # n -> (generic, fast) sweeps timed


def _problem(n, p=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (X[:, 0] + X[:, 1] ** 2 - 1 + 0.5 * rng.normal(size=n) > 0).astype(np.int64)
    return X, y


def sweeps_per_second(fast, n, n_sweeps, seed=0):
    """One chain of ``n_sweeps`` sweeps (none kept), paper defaults; sweeps per second."""
    X, y = _problem(n, seed=seed)
    s = np.where(y > 0, 1.0, -1.0)
    chain = chain_state(np.arange(n), n, [mean_distance(X)])
    settings = sampler_settings(a_eta=1.0, b_eta=0.1, a_g=4.0, b_g=0.1, a_alpha=1.0,
                                b_alpha=1.0, jitter=1e-6, theta_step=0.2,
                                theta_bounds=[[0.1], [1e3]], steps=(1, 1, 0, 0),
                                schedule=(n_sweeps, n_sweeps, 1))
    record = new_record(n_sweeps, 0, n, 1, [])
    start = time.perf_counter()
    (run_bgkm if fast else run_chain)(X, y, s, chain, settings, seed, record)
    return n_sweeps / (time.perf_counter() - start)


def main():
    for fast in (False, True):  # compile
        sweeps_per_second(fast, 30, 3)
    print(f"{'n':>5} {'run_chain sweeps/s':>19} {'run_bgkm sweeps/s':>18} {'ratio':>7}"
          f" {'10k sweeps: old':>16} {'new':>7}")
    for n, (slow_sweeps, fast_sweeps) in SWEEPS.items():
        old = sweeps_per_second(False, n, slow_sweeps)
        new = sweeps_per_second(True, n, fast_sweeps)
        print(f"{n:>5} {old:>19.1f} {new:>18.1f} {new / old:>7.1f} {1e4 / old:>14.0f} s"
              f" {1e4 / new:>5.0f} s")


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
