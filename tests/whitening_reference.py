"""Step (a)'s whitening W = L^-1 K~' (ZDJ eq. 9) measured on the factors an FBGKM chain meets:
the chain, its factors, the reference W is measured against and the errors measured.
tests/test_whitening.py bounds the errors with the tolerances that
benchmarks/whitening_accuracy.py measured on real data."""

import numpy as np
from scipy.linalg import solve_triangular

from gpcbench.mcmc.active_set import initial_state
from gpcbench.mcmc.gkm import run_chain
from gpcbench.kernels.rbf import mean_distance

#: run_chain's parameter vector at the estimators' defaults (PARAMS[8] is the jitter).
PARAMS = np.array([1.0, 1.0, 1.0, 0.1, 4.0, 0.1, np.inf, np.inf, 1e-6, 0.2])


def fbgkm_chain(X, y, k_max, n_sweeps, every, seed=0):
    """The output arrays of one FBGKM chain (flat p(gamma), theta the mean distance) of
    ``n_sweeps`` sweeps from k_max / 2 random active points, every ``every``-th of the second
    half kept: out[1] the active sets, out[4] theta, out[5] (g, eta) of the kept sweeps."""
    n = X.shape[0]
    rng = np.random.default_rng(seed)
    act = np.zeros(k_max, dtype=np.int64)
    act[:k_max // 2] = rng.choice(n, k_max // 2, replace=False)
    burn_in = n_sweeps // 2
    n_kept = (n_sweeps - burn_in) // every
    theta = np.array([mean_distance(X)])
    out = (np.zeros((n_sweeps, 4)), np.zeros((n_kept, k_max), dtype=np.int64),
           np.zeros((n_kept, k_max + 1)), np.zeros((n_kept, k_max + 1)), np.zeros((n_kept, 1)),
           np.zeros((n_kept, 2)), np.zeros((n_kept, 0)))
    s = np.where(y > 0, 1.0, -1.0) * np.abs(rng.standard_normal(n))
    run_chain(X, y, s, act, k_max // 2, theta, np.outer([0.01, 10.0], theta), PARAMS.copy(),
              k_max, np.array([1, 1, 1, 0]), np.array([n_sweeps, burn_in, every]),
              np.zeros(0, dtype=np.int64), seed, out, np.zeros((4, 2), dtype=np.int64))
    return out


def chain_factors(X, active, theta, g, eta):
    """(K~, L, n_gamma + 1) at a kept state (``active``: a row of the chain's out[1]), built by
    the chain's own initial_state: the factor of Upsilon it whitened with, up to the rounding
    of its row updates."""
    k = int((active >= 0).sum())
    _, arrays, _, _, _ = initial_state(X, np.zeros((1, X.shape[0])), active.copy(), k, theta,
                                       active.size, eta, g, PARAMS[8], False)
    return arrays[0], arrays[4], k + 1


def refined_whitening(Lk, K):
    """(dtrsm's W, the reference): W = (L^-1 K')' by one dtrsm, and that W refined once by
    the residual K' - L W' summed in extended precision (np.longdouble)."""
    trsm = solve_triangular(Lk, K.T, lower=True).T
    residual = (K.T.astype(np.longdouble)
                - Lk.astype(np.longdouble) @ trsm.T.astype(np.longdouble)).astype(float)
    return trsm, trsm + solve_triangular(Lk, residual, lower=True).T


def whitening_errors(W, ref):
    """Largest relative errors of W's rows and of the leverages h = |W_i|^2 or
    w = h / (1 - h) (ZDJ alg. 1's ratio), the larger of the two."""
    h, h_ref = (W * W).sum(axis=1), (ref * ref).sum(axis=1)
    w, w_ref = h / (1 - h), h_ref / (1 - h_ref)
    rows = np.linalg.norm(W - ref, axis=1) / np.linalg.norm(ref, axis=1)
    return rows.max(), max(np.max(np.abs(h - h_ref) / h_ref), np.max(np.abs(w - w_ref) / w_ref))
