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
(np.longdouble). Printed per data set and g: the range of cond(L) (2-norm) and the largest
condition number of a diagonal block of order 64; for each form, the largest relative error of
a row of W (|dW_i| / |W_i|) and of ZDJ alg. 1's leverage h_i = H(i, i) = |W_i|^2 and
w_i = h_i / (1 - h_i) (the larger of the two), and the largest relative difference between
the two forms' W rows; then the same errors of the library's form over (k + cond(L)) eps,
k = n_gamma + 1, the scale tests/test_whitening.py bounds them by.

Usage: PYTHONPATH=src python benchmarks/whitening_accuracy.py --data DIR [--sweeps 300]
(DIR holds the pipeline's processed <data set>.npz: data/processed after a run, or one made by
``python -m gpcbench fetch`` / ``preprocess``.)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from scipy.linalg import solve_triangular
from threadpoolctl import threadpool_limits

from gpcbench.mcmc.active_set import chain_state, initial_state
from gpcbench.mcmc.gkm import new_record, run_chain
from gpcbench.mcmc.holmes_held import whiten
from gpcbench.mcmc.kernel import mean_distance
from gpcbench.mcmc.lapack import BLOCK
from gpcbench.mcmc.moves import sampler_settings

SETS = {"digit1": (300, 200), "coil2": (300, 200), "splice": (2000, 200),
        "astroparticle": (4000, 200)}  # Table 1's n_train and k_max
PRIORS = dict(a_eta=1.0, b_eta=0.1, a_g=4.0, b_g=0.1, a_alpha=np.inf, b_alpha=np.inf,
              jitter=1e-6, theta_step=0.2)  # the estimators' defaults


def chain_states(X, y, k_max, n_sweeps, every, seed=0):
    """Kept (active set, theta, g, eta) of one FBGKM chain, every ``every``-th of the second
    half of ``n_sweeps``."""
    n = X.shape[0]
    rng = np.random.default_rng(seed)
    act = np.zeros(k_max, dtype=np.int64)
    act[:k_max // 2] = rng.choice(n, k_max // 2, replace=False)
    burn_in = n_sweeps // 2
    n_kept = (n_sweeps - burn_in) // every
    theta = np.array([mean_distance(X)])
    record = new_record(n_sweeps, n_kept, k_max, 1, [])
    settings = sampler_settings(**PRIORS, theta_bounds=np.outer([0.01, 10.0], theta),
                                steps=(1, 1, 1, 0), schedule=(n_sweeps, burn_in, every))
    s = np.where(y > 0, 1.0, -1.0) * np.abs(rng.standard_normal(n))
    run_chain(X, y, s, chain_state(act, k_max // 2, theta), settings, seed, record)
    return [(a[a >= 0], th, g, eta)
            for a, th, (g, eta) in zip(record.active, record.theta, record.precisions)]


def factors(X, act, theta, g, eta, k_max):
    """K~ and L at the state, built as the chain builds them (ZDJ eq. 9)."""
    n, k = X.shape[0], act.size
    full = np.zeros(k_max, dtype=np.int64)
    full[:k] = act
    state = initial_state(X, np.zeros((1, n)), chain_state(full, k, theta, eta, g),
                          PRIORS["jitter"], False, 1.0)
    return state.factors.design, state.factors.upsilon_factor, k + 1


def errors(W, ref):
    """Largest relative errors of W's rows and of h = |W_i|^2 or w = h / (1 - h)."""
    h, h_ref = (W * W).sum(axis=1), (ref * ref).sum(axis=1)
    w, w_ref = h / (1 - h), h_ref / (1 - h_ref)
    rows = np.linalg.norm(W - ref, axis=1) / np.linalg.norm(ref, axis=1)
    return rows.max(), max(np.max(np.abs(h - h_ref) / h_ref), np.max(np.abs(w - w_ref) / w_ref))


def measure(Kt, L, k1):
    """cond(L), the largest diagonal block's cond, errors of whiten and of dtrsm, the two
    forms' largest relative row difference, and whiten's errors over (k1 + cond(L)) eps."""
    K, Lk = Kt[:, :k1], np.tril(L[:k1, :k1])
    trsm = solve_triangular(Lk, K.T, lower=True).T
    residual = (K.T.astype(np.longdouble)
                - Lk.astype(np.longdouble) @ trsm.T.astype(np.longdouble)).astype(float)
    ref = trsm + solve_triangular(Lk, residual, lower=True).T
    W = np.zeros_like(Kt)
    whiten(Kt, k1, L, W)
    W = W[:, :k1]
    blocks = max(np.linalg.cond(Lk[b:b + BLOCK, b:b + BLOCK]) for b in range(0, k1, BLOCK))
    diff = np.max(np.linalg.norm(W - trsm, axis=1) / np.linalg.norm(trsm, axis=1))
    cond, mine = np.linalg.cond(Lk), errors(W, ref)
    scale = (k1 + cond) * np.finfo(float).eps
    return cond, blocks, mine, errors(trsm, ref), diff, (mine[0] / scale, mine[1] / scale)


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
        states = chain_states(X, y, k_max, args.sweeps, args.every)
        for which in ("chain", 0.1, 10.0):
            found = []
            for act, theta, g, eta in states:
                Kt, L, k1 = factors(X, act, theta, g if which == "chain" else which, eta, k_max)
                found.append(measure(Kt, L, k1))
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
