"""Step (a)'s whitening W = L^-1 K~' (ZDJ eq. 9) measured on the factors an FBGKM chain meets:
the chain, its factors, the reference W is measured against and the errors measured.
tests/test_whitening.py bounds the errors with the tolerances that
benchmarks/whitening_accuracy.py measured on real data."""

import numpy as np
from scipy.linalg import solve_triangular

from gpcbench.kernels.rbf import mean_distance
from gpcbench.mcmc.active_set import chain_state, initial_state
from gpcbench.mcmc.gkm import new_record, run_chain
from gpcbench.mcmc.moves import sampler_settings

#: The sampler's priors, jitter and theta step at the estimators' defaults.
PRIORS = dict(a_eta=1.0, b_eta=0.1, a_g=4.0, b_g=0.1, a_alpha=np.inf, b_alpha=np.inf,
              jitter=1e-6, theta_step=0.2)


def fbgkm_chain(X, y, k_max, n_sweeps, every, seed=0):
    """The kept states of one FBGKM chain (flat p(gamma), theta the mean distance) of
    ``n_sweeps`` sweeps from k_max / 2 random active points, every ``every``-th of the second
    half kept: (active set, theta, (g, eta)) per kept sweep."""
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
    return list(zip(record.active, record.theta, record.precisions))


def chain_factors(X, active, theta, g, eta):
    """(K~, L, n_gamma + 1) at a kept state (``active``: a kept active set, -1 padded), built
    by the chain's own initial_state: the factor of Upsilon it whitened with, up to the
    rounding of its row updates."""
    k = int((active >= 0).sum())
    state = initial_state(X, np.zeros((1, X.shape[0])), chain_state(active.copy(), k, theta, eta, g),
                          PRIORS["jitter"], False, 1.0)
    return state.factors.design, state.factors.upsilon_factor, k + 1


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


def exact_whitening(Kt, Kgg, eta, g):
    """Rows L^-1 K~_i' for the Upsilon = K~'K~ + diag(eta, g K_gammagamma) (ZDJ eq. 9) formed
    and factorised in extended precision (np.longdouble) from K~ (n x (n_gamma + 1)) and
    K_gammagamma as given: a reference free of the rounding of G = K~'K~ in double, which
    bounds every double-precision whitening's accuracy when K_gammagamma is ill-conditioned."""
    K = Kt.astype(np.longdouble)
    upsilon = K.T @ K
    upsilon[0, 0] += np.longdouble(eta)
    upsilon[1:, 1:] += np.longdouble(g) * Kgg.astype(np.longdouble)
    m = upsilon.shape[0]
    L = np.zeros_like(upsilon)
    for j in range(m):
        L[j, j] = np.sqrt(upsilon[j, j] - L[j, :j] @ L[j, :j])
        L[j + 1:, j] = (upsilon[j + 1:, j] - L[j + 1:, :j] @ L[j, :j]) / L[j, j]
    W = np.zeros_like(K)
    for r in range(m):
        W[:, r] = (K[:, r] - W[:, :r] @ L[r, :r]) / L[r, r]
    return W
