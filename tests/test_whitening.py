"""Step (a)'s whitening W = L^-1 K~' (Upsilon = L L', ZDJ eq. 9; ZDJ alg. 1's leverages
H(i, i) = |W_i|^2) on the factors an FBGKM chain meets: :func:`gpcbench.mcmc.holmes_held.whiten`
(block forward substitution, L's diagonal blocks of order 64 inverted by dtrtri, then dgemm and
dtrmm) against dtrsm (the form it replaced) and a reference refined in extended precision
(tests/whitening_reference.py).

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
from whitening_reference import chain_factors, fbgkm_chain, refined_whitening, whitening_errors

from gpcbench.mcmc.holmes_held import whiten

EPS = np.finfo(float).eps
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
    return fbgkm_chain(X, y, K_MAX, SWEEPS, EVERY, seed)


@pytest.fixture(scope="module")
def factors():
    """(K~, L, n_gamma + 1) of the chain's kept states, at its g and at g = 0.1."""
    X, y = _problem()
    out = _chain(X, y)
    return [chain_factors(X, act, theta, g_used, eta)
            for act, theta, (g, eta) in out for g_used in (g, 0.1)]


def test_whitening_is_accurate_on_the_chains_factors(factors):
    conds = []
    for Kt, L, k1 in factors:
        Lk = np.tril(L[:k1, :k1])
        trsm, ref = refined_whitening(Lk, Kt[:, :k1])
        W = np.zeros_like(Kt)
        whiten(Kt, k1, L, W)
        cond = np.linalg.cond(Lk)
        conds.append(cond)
        scale = (k1 + cond) * EPS
        w_rows, w_lev = whitening_errors(W[:, :k1], ref)
        t_rows, t_lev = whitening_errors(trsm, ref)
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
    flat = [np.concatenate([np.ravel(part) for part in (act, theta, precisions)])
            for act, theta, precisions in first]
    assert all(np.array_equal(a, np.concatenate([np.ravel(part) for part in b]))
               for a, b in zip(flat, second))
    other = _chain(X, y, seed=4)
    assert not all(np.array_equal(a, b[0]) for a, b in zip([f[0] for f in first], other))
