"""Accuracy of step (a)'s whitening W = L^-1 K~' (Upsilon = L L', ZDJ eq. 9) on the factors that
FBGKM chains meet on real data sets: the library's :func:`gpcbench.mcmc.holmes_held.whiten`
(block forward substitution, inverted diagonal blocks of order 64 times dgemm / dtrmm) against
one dtrsm (scipy's solve_triangular, the form it replaced).

Per data set: n training rows drawn at random, standardised on themselves as the pipeline does,
one FBGKM chain (:func:`gpcbench.mcmc.gkm.run_chain`, the estimators' defaults: flat p(gamma),
jitter 1e-6, theta the mean distance, k_max of config/config.yaml) of ``--sweeps`` sweeps, every
``--every``-th kept. Each kept state (active set, theta, g, eta) is rebuilt into K~ and L by the
chain's own :func:`gpcbench.mcmc.active_set.initial_state` (the factor the chain whitened with at
that sweep, up to the rounding of its row updates), at the chain's g and at g = 0.1 and 10.
Reference: the dtrsm result refined once by the residual K~' - L W' summed in extended precision
(np.longdouble; tests/whitening_reference.py, shared with the test). Printed per data set and
g: the range of cond(L) (2-norm) and the largest condition number of a diagonal block of
order 64; for each form, the largest relative error of a row of W (|dW_i| / |W_i|) and of ZDJ
alg. 1's leverage h_i = H(i, i) = |W_i|^2 and w_i = h_i / (1 - h_i) (the larger of the two),
and the largest relative difference between
the two forms' W rows; then the same errors of the library's form over (k + cond(L)) eps,
k = n_gamma + 1, the scale tests/test_whitening.py bounds them by.

Usage: PYTHONPATH=src python benchmarks/whitening_accuracy.py --data DIR [--sweeps 300]
(DIR holds the pipeline's processed <data set>.npz: data/processed after a run, or one made by
``python -m gpcbench fetch`` / ``preprocess``.)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from whitening_reference import (  # noqa: E402
    chain_factors,
    fbgkm_chain,
    refined_whitening,
    whitening_errors,
)

from gpcbench.mcmc.holmes_held import whiten  # noqa: E402
from gpcbench.mcmc.lapack import BLOCK  # noqa: E402

SETS = {"digit1": (300, 200), "coil2": (300, 200), "splice": (2000, 200),
        "astroparticle": (4000, 200)}  # Table 1's n_train and k_max


def measure(Kt, L, k1):
    """cond(L), the largest diagonal block's cond, errors of whiten and of dtrsm, the two
    forms' largest relative row difference, and whiten's errors over (k1 + cond(L)) eps."""
    Lk = np.tril(L[:k1, :k1])
    trsm, ref = refined_whitening(Lk, Kt[:, :k1])
    W = np.zeros_like(Kt)
    whiten(Kt, k1, L, W)
    W = W[:, :k1]
    blocks = max(np.linalg.cond(Lk[b:b + BLOCK, b:b + BLOCK]) for b in range(0, k1, BLOCK))
    diff = np.max(np.linalg.norm(W - trsm, axis=1) / np.linalg.norm(trsm, axis=1))
    cond, mine = np.linalg.cond(Lk), whitening_errors(W, ref)
    scale = (k1 + cond) * np.finfo(float).eps
    return (cond, blocks, mine, whitening_errors(trsm, ref), diff,
            (mine[0] / scale, mine[1] / scale))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--sweeps", type=int, default=300)
    parser.add_argument("--every", type=int, default=15)
    parser.add_argument("--sets", nargs="*", default=list(SETS))
    args = parser.parse_args()
    print(f"{'data set':<14} {'n':>5} {'g':>6} {'cond(L)':>17} {'block':>8}   "
          f"{'whiten: W':>9} {'h, w':>8}   {'dtrsm: W':>8} {'h, w':>8}   {'|dW|/|W|':>8}   "
          f"{'whiten / (k + cond) eps: W':>26} {'h, w':>6}")
    for name in args.sets:
        data = np.load(args.data / f"{name}.npz", allow_pickle=True)
        n, k_max = SETS[name]
        rows = np.random.default_rng(1).choice(data["X"].shape[0], n, replace=False)
        X = data["X"][rows].astype(float)
        scale = X.std(axis=0)
        X = (X - X.mean(axis=0)) / np.where(scale > 0, scale, 1.0)
        y = (data["y"][rows] == data["y"].max()).astype(np.int64)
        out = fbgkm_chain(X, y, k_max, args.sweeps, args.every)
        for which in ("chain", 0.1, 10.0):
            found = [measure(*chain_factors(X, act, theta, g if which == "chain" else which, eta))
                     for act, theta, (g, eta) in out]
            conds = [f[0] for f in found]
            worst = [max(f[i][j] for f in found) for i in (2, 3, 5) for j in range(2)]
            g_text = "chain" if which == "chain" else f"{which:g}"
            print(f"{name:<14} {n:>5} {g_text:>6} {min(conds):>8.1e}-{max(conds):>8.1e} "
                  f"{max(f[1] for f in found):>8.1e}   {worst[0]:>9.1e} {worst[1]:>8.1e}   "
                  f"{worst[2]:>8.1e} {worst[3]:>8.1e}   {max(f[4] for f in found):>8.1e}   "
                  f"{worst[4]:>26.2f} {worst[5]:>6.2f}", flush=True)


if __name__ == "__main__":
    with threadpool_limits(1):
        main()
