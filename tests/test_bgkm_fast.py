"""Tests of the O(n^2)-per-sweep BGKM chain (:mod:`gpcbench.mcmc.bgkm`) against the dense
formulas and the generic section 3.2 sampler (:func:`gpcbench.mcmc.gkm.run_chain`)."""

import numpy as np
import pytest

from numba import njit

from gpcbench.mcmc import bgkm, gkm
from gpcbench.mcmc.active_set import chain_state
from gpcbench.mcmc.holmes_held import conditional
from gpcbench.kernels.rbf import kernel_block, weights
from test_gkm import JITTER, _dense_parts, _factors, _problem, _settings

N = 10
THETA = np.array([1.5])  # the width of test_gkm's dense helpers


def _basis(X):
    n = len(X)
    Kt = np.zeros((n, n + 1))
    kernel_block(X, np.arange(n), n, weights(THETA, X.shape[1]), Kt)
    return Kt, bgkm.eigenbasis(Kt, JITTER)


@njit
def _conditionals(state, S):
    """(mean, variance) of every s_i | s_-i by the shared Holmes-Held conditional."""
    out, mu = np.empty((S.shape[1], 2)), np.zeros(1)
    for i in range(S.shape[1]):
        sd = conditional(state, i, S, mu)
        out[i, 0], out[i, 1] = mu[0], sd * sd
    return out


@pytest.mark.parametrize("eta, g", [(1.3, 0.6), (0.05, 1e-4), (20.0, 1e4)])
def test_conditional_of_s_matches_dense_and_whitened_formulas(eta, g):
    X, _, rng = _problem(N, seed=3)
    s = rng.normal(size=N)
    _, basis = _basis(X)
    V = basis.V
    D, r, d = np.zeros(N), np.zeros(N), np.zeros(N)
    rho = bgkm.precision_terms(basis, eta, g, D, r, d)
    a = bgkm.rotate(V, s)
    state = bgkm.EigenState(V, D, r, d, rho, a, np.array([r @ s]))
    fast = _conditionals(state, s[None].copy())
    Qinv = np.linalg.inv(_dense_parts(X, s, list(range(N)), eta, g)[2])
    dense = np.column_stack([s - Qinv @ s / np.diag(Qinv), 1.0 / np.diag(Qinv)])
    np.testing.assert_allclose(fast, dense, rtol=1e-10, atol=1e-10)
    # appendix A's form used by run_chain: N((1 + r) K~_i b - r s_i, 1 + r), r = h/(1 - h)
    factors = _factors(X, s, list(range(N)), eta, g)
    Kt, L, z = factors.design, factors.upsilon_factor, factors.whitened[0]
    W = np.linalg.solve(np.tril(L), Kt.T).T
    h = np.einsum("ij,ij->i", W, W)
    ratio = h / (1 - h)
    whitened = np.column_stack([(1 + ratio) * (W @ z) - ratio * s, 1 + ratio])
    # 1 - H_ii loses digits when g is small (H_ii -> 1): the looser tolerance is the
    # whitened form's, the eigenbasis matches the dense inverse to 1e-10 above
    np.testing.assert_allclose(fast, whitened, rtol=1e-6)


@pytest.mark.parametrize("eta, g", [(1.3, 0.6), (0.05, 1e-3), (20.0, 1e3)])
def test_coefficient_draw_has_eq9_mean_and_covariance(eta, g):
    X, _, rng = _problem(N, seed=4)
    s = rng.normal(size=N)
    Kt, basis = _basis(X)
    _, Sigma, _ = _dense_parts(X, s, list(range(N)), eta, g)
    Upsilon = Kt.T @ Kt + Sigma

    def draw(noise):
        gamma, beta = np.zeros(N), np.zeros(N + 1)
        quad = bgkm.coefficients(basis, eta, g, s.sum(), bgkm.rotate(basis.V, s), noise, gamma,
                                 beta)
        np.testing.assert_allclose(quad, beta[1:] @ Sigma[1:, 1:] @ beta[1:] / g, rtol=1e-9)
        return beta

    mean = draw(np.zeros(N + 1))  # beta~ = mean + F noise is linear in the noise
    F = np.column_stack([draw(e) - mean for e in np.eye(N + 1)])
    scale = np.abs(np.linalg.solve(Upsilon, Kt.T @ s)).max()
    np.testing.assert_allclose(mean, np.linalg.solve(Upsilon, Kt.T @ s), atol=1e-9 * scale)
    cov = np.linalg.inv(Upsilon)
    np.testing.assert_allclose(F @ F.T, cov, atol=1e-9 * np.abs(cov).max())


def _chain(fast, X, y, n_sweeps, seed, probe):
    n = len(X)
    chain = chain_state(np.arange(n), n, THETA.copy(), 1.5, 0.7)
    record = gkm.new_record(n_sweeps, n_sweeps, n, 1, probe)
    s = np.where(y > 0, 1.0, -1.0)
    settings = _settings([1, 1, 0, 0], n_sweeps, 1)
    run = bgkm.run_bgkm if fast else gkm.run_chain
    return record, run(X, y, s, chain, settings, seed, record)


def _summary(out, burn):
    """Per-sweep statistics: u, u^2, log g, log eta, the probe probabilities."""
    trace = out.trace[burn:]
    return np.column_stack([trace[:, 0], trace[:, 0] ** 2, np.log(trace[:, 1]),
                            np.log(trace[:, 2]), out.probe_probabilities[burn:]])


def _mean_and_se(x, batches=50):
    means = x[: len(x) // batches * batches].reshape(batches, -1, x.shape[1]).mean(axis=1)
    return x.mean(axis=0), means.std(axis=0, ddof=1) / np.sqrt(batches)


def test_fast_chain_matches_run_chain_in_distribution():
    X, y, _ = _problem(N, seed=5)
    probe = np.array([0, 3, 7])
    n_sweeps, burn = 60_000, 1000
    fast, s = _chain(True, X, y, n_sweeps, 11, probe)
    slow, _ = _chain(False, X, y, n_sweeps, 12, probe)
    # the records' layout: active set, c = K~'s of the last sweep, trace's n_gamma
    np.testing.assert_array_equal(fast.active[-1], np.arange(N))
    np.testing.assert_allclose(fast.projections[-1], _basis(X)[0].T @ s, rtol=1e-12)
    assert np.all(fast.trace[:, 3] == N) and np.all(np.sign(s) == np.where(y > 0, 1, -1))
    (m1, se1), (m2, se2) = (_mean_and_se(_summary(o, burn)) for o in (fast, slow))
    z = (m1 - m2) / np.sqrt(se1**2 + se2**2)
    assert np.all(np.abs(z) < 4.5), (m1, m2, z)
