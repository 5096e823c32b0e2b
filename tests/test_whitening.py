"""Step (a)'s whitening W = L^-1 K~' (Upsilon = L L', ZDJ eq. 9; ZDJ alg. 1's leverages
H(i, i) = |W_i|^2) on the factors an FBGKM chain meets: :func:`gpcbench.mcmc.holmes_held.whiten`
(block forward substitution, L's diagonal blocks of order 64 inverted by dtrtri, then dgemm and
dtrmm) against dtrsm (the form it replaced) and a reference refined in extended precision.

The tolerances come from benchmarks/whitening_accuracy.py on real data (Table 1's n and
k_max, one chain of 300 sweeps a set, factors rebuilt from every 15th kept state at the chain's
g and at g = 0.1 and 10): cond(L) 50-320 on Digit1, 350-8,200 on COIL2, 6.7e4-9.7e5 on Splice,
1.1e5-2.1e6 on Astroparticle. The largest relative error of a row of W was 3.2e-10 for whiten
and 1.6e-10 for dtrsm (Astroparticle), of a leverage h_i or of w_i = h_i / (1 - h_i) (ZDJ alg.
1's ratio, which amplifies h's error near 1) 3.7e-13 / 1.6e-13 (COIL2) and 2.8e-11 / 1.5e-11
(Astroparticle): whiten's errors are up to 2.3 times dtrsm's. Over (k + cond(L)) eps (k =
n_gamma + 1) whiten's errors were at most 0.88 (W) and 0.20 (h, w) on every set. The problem here
is Astroparticle-like (three inputs, one of them skewed: the kernel matrix's fast spectral decay
makes K_gammagamma as ill-conditioned as jitter 1e-6 allows): cond(L) 2.5e5-6.8e5, whiten's
errors at most 1.07 (W) and 0.09 (h, w) times (k + cond(L)) eps and 4.2 times dtrsm's. The tests
allow 5 and 2 times (k + cond(L)) eps, and 10 times dtrsm's own error.
"""

import numpy as np
import pytest
from scipy.linalg import solve_triangular

from gpcbench.mcmc.active_set import chain_state, initial_state
from gpcbench.mcmc.gkm import new_record, run_chain
from gpcbench.mcmc.holmes_held import whiten
from gpcbench.mcmc.kernel import mean_distance
from gpcbench.mcmc.moves import sampler_settings

EPS = np.finfo(float).eps
PRIORS = dict(a_eta=1.0, b_eta=0.1, a_g=4.0, b_g=0.1, a_alpha=np.inf, b_alpha=np.inf,
              jitter=1e-6, theta_step=0.2)  # the estimators' defaults
N, K_MAX, SWEEPS, EVERY = 400, 100, 200, 20


def _problem(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, 3))
    X[:, 0] = np.exp(X[:, 0])
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    y = (X[:, 0] + np.sin(2 * X[:, 1]) + 0.3 * rng.standard_normal(N) > 0).astype(np.int64)
    return X, y


def _chain(X, y, seed=0):
    """One FBGKM chain of SWEEPS sweeps, every EVERY-th of the second half kept."""
    rng = np.random.default_rng(seed)
    act = np.zeros(K_MAX, dtype=np.int64)
    act[:K_MAX // 2] = rng.choice(N, K_MAX // 2, replace=False)
    theta = np.array([mean_distance(X)])
    record = new_record(SWEEPS, SWEEPS // 2 // EVERY, K_MAX, 1, [])
    settings = sampler_settings(**PRIORS, theta_bounds=np.outer([0.01, 10.0], theta),
                                steps=(1, 1, 1, 0), schedule=(SWEEPS, SWEEPS // 2, EVERY))
    s = np.where(y > 0, 1.0, -1.0) * np.abs(rng.standard_normal(N))
    run_chain(X, y, s, chain_state(act, K_MAX // 2, theta), settings, seed, record)
    return record


@pytest.fixture(scope="module")
def factors():
    """(K~, L, n_gamma + 1) of the chain's kept states, at its g and at g = 0.1, built by the
    chain's own initial_state (the factor of Upsilon it whitened with, up to the rounding of
    its row updates)."""
    X, y = _problem()
    record = _chain(X, y)
    found = []
    for act, theta, (g, eta) in zip(record.active, record.theta, record.precisions):
        k = int((act >= 0).sum())
        for g_used in (g, 0.1):
            chain = chain_state(act.copy(), k, theta, eta, g_used)
            state = initial_state(X, np.zeros((1, N)), chain, PRIORS["jitter"], False, 1.0)
            found.append((state.factors.design, state.factors.upsilon_factor, k + 1))
    return found


def _errors(W, ref):
    """Largest relative errors of W's rows and of h = |W_i|^2 or h / (1 - h)."""
    h, h_ref = (W * W).sum(axis=1), (ref * ref).sum(axis=1)
    w, w_ref = h / (1 - h), h_ref / (1 - h_ref)
    rows = np.linalg.norm(W - ref, axis=1) / np.linalg.norm(ref, axis=1)
    return rows.max(), max(np.max(np.abs(h - h_ref) / h_ref), np.max(np.abs(w - w_ref) / w_ref))


def test_whitening_is_accurate_on_the_chains_factors(factors):
    conds = []
    for Kt, L, k1 in factors:
        K, Lk = Kt[:, :k1], np.tril(L[:k1, :k1])
        trsm = solve_triangular(Lk, K.T, lower=True).T
        residual = (K.T.astype(np.longdouble)
                    - Lk.astype(np.longdouble) @ trsm.T.astype(np.longdouble)).astype(float)
        ref = trsm + solve_triangular(Lk, residual, lower=True).T
        W = np.zeros_like(Kt)
        whiten(Kt, k1, L, W)
        cond = np.linalg.cond(Lk)
        conds.append(cond)
        scale = (k1 + cond) * EPS
        (w_rows, w_lev), (t_rows, t_lev) = _errors(W[:, :k1], ref), _errors(trsm, ref)
        assert w_rows <= 5 * scale and w_lev <= 2 * scale, (cond, w_rows, w_lev)
        assert w_rows <= 10 * t_rows + k1 * EPS and w_lev <= 10 * t_lev + k1 * EPS
        assert np.all(W[:, k1:] == 0)  # the columns beyond n_gamma + 1 are not written
    assert max(conds) > 1e5  # the conditioning of Splice and Astroparticle's chains


def test_whitening_ignores_the_factors_upper_triangle(factors):
    Kt, L, k1 = factors[0]
    W, W_nan = np.zeros_like(Kt), np.zeros_like(Kt)
    whiten(Kt, k1, L, W)
    L_nan = L.copy()
    L_nan[np.triu_indices(L.shape[0], 1)] = np.nan
    whiten(Kt, k1, L_nan, W_nan)
    assert np.array_equal(W, W_nan)


def test_same_seed_same_draws():
    X, y = _problem(1)
    first, second = _chain(X, y, seed=3), _chain(X, y, seed=3)
    for a, b in zip(first, second):
        assert np.array_equal(a, b)
    assert not np.array_equal(first.trace, _chain(X, y, seed=4).trace)
