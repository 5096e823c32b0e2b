"""Step (a) from the active set's eigenbasis (:mod:`gpcbench.mcmc.eigen_whitening`) against the
triangular-solve whitening it stands in for, on the factors an FBGKM chain meets (the
ill-conditioned, Astroparticle-like problem of tests/test_whitening.py: cond(L) up to 7e5):
the leverages and the products the Holmes-Held conditionals read equal the reference refined
in extended precision as closely as the solve's own do, and one step (a) from the same seed
draws the same auxiliaries either way."""

import numpy as np
import pytest
from numba import njit
from test_whitening import K_MAX, _chain, _problem
from whitening_reference import PRIORS, exact_whitening

from gpcbench.mcmc.active_set import chain_state, initial_state
from gpcbench.mcmc.eigen_whitening import (allocate_eigenbasis, build_eigenbasis,
                                           eigen_step_a, new_history, note_sweep, ready_basis,
                                           worth_building)
from gpcbench.mcmc.holmes_held import whiten, whitened_step_a

EPS = np.finfo(float).eps


@njit
def _seed(seed):
    np.random.seed(seed)


def _states():
    """(X, y, workspace, eta, g) at the chain's kept states, at its g and at g = 0.1 and 10, and
    eta far from g both ways (the rank-one correction of the module docstring)."""
    X, y = _problem()
    rng = np.random.default_rng(7)
    for act, theta, (g, eta) in _chain(X, y)[::2]:
        k = int((act >= 0).sum())
        for g_used, eta_used in ((g, eta), (0.1, 30.0), (10.0, 0.05)):
            s = np.where(y > 0, 1.0, -1.0) * np.abs(rng.standard_normal(len(y)))
            S = s.reshape(1, -1)
            workspace = initial_state(X, S, chain_state(act.copy(), k, theta, eta_used, g_used),
                                      PRIORS["jitter"], False, 1.0)
            yield X, y, S, workspace, eta_used, g_used, k


@pytest.fixture(scope="module")
def states():
    return list(_states())


def _eigen_whitening(workspace, k, eta, g, S):
    """(W, Z) of the eigenbasis path before its Holmes-Held loop: run it with no point to
    visit (a zero-row view of S's columns), W and Z as it leaves them."""
    factors = workspace.factors
    n = factors.design.shape[0]
    basis = allocate_eigenbasis(n, factors.design.shape[1] - 1)
    build_eigenbasis(factors.design, k, factors.kernel_factor, basis, 0)
    W, Z = np.zeros_like(factors.design), factors.whitened.copy()
    C = factors.projections.copy()
    buffers = np.zeros(1), np.zeros(1), np.zeros(1)
    eigen_step_a(basis, k + 1, eta, g, factors.kernel_factor,
                 factors.upsilon_factor, W, S[:, :0], np.zeros(0, dtype=np.int64), C, Z,
                 *buffers)
    return W, Z, basis


def _ratios(W):
    """ZDJ alg. 1's w = h / (1 - h) of every row's leverage h = |W_i|^2 (it amplifies h's
    error near 1)."""
    h = (W.astype(np.longdouble) ** 2).sum(axis=1)
    return h / (1 - h)


def test_the_eigenbasis_whitening_is_as_accurate_as_the_problem_allows(states):
    """Against the extended-precision whitening of the same K~ and K_gammagamma: the eigenbasis
    path's leverage ratios within 5 (k + cond(L)) eps (k = n_gamma + 1), and closer than the
    triangular solve's, whose Upsilon carries G = K~'K~ rounded in double; its cross products
    w_i'w_j (the conditional means' weights) as close."""
    measured = []
    for X, y, S, workspace, eta, g, k in states:
        f = workspace.factors
        k1 = k + 1
        W, _, _ = _eigen_whitening(workspace, k, eta, g, S)
        W_solve = np.zeros_like(f.design)
        whiten(f.design, k1, f.upsilon_factor, W_solve)
        exact = exact_whitening(f.design[:, :k1], f.kernel[:k, :k], eta, g)
        errors = [float(np.max(np.abs(_ratios(V[:, :k1]) - _ratios(exact)) / _ratios(exact)))
                  for V in (W, W_solve)]
        block = slice(0, 60)
        gram = W[block, :k1] @ W[block, :k1].T
        gram_exact = (exact[block] @ exact[block].T).astype(float)
        gram_error = np.abs(gram - gram_exact).max() / np.abs(gram_exact).max()
        scale = (k1 + np.linalg.cond(np.tril(f.upsilon_factor[:k1, :k1]))) * EPS
        assert errors[0] <= 5 * scale and errors[0] <= errors[1], (errors, scale)
        assert gram_error <= 5 * scale, (gram_error, scale)
        measured.append(errors)
    assert len(measured) >= 6
    # the problem is as ill-conditioned as the chains' (the solve's error is far from eps)
    assert max(solve for _, solve in measured) > 1e-8


def test_step_a_draws_the_same_auxiliaries_either_way(states):
    for X, y, S, workspace, eta, g, k in states[:4]:
        f = workspace.factors
        k1 = k + 1
        results = []
        for path in ("solve", "eigenbasis"):
            S_run, C, Z = S.copy(), f.projections.copy(), f.whitened.copy()
            W = np.zeros_like(f.design)
            buffers = np.zeros(1), np.zeros(1), np.zeros(1)
            _seed(3)
            if path == "solve":
                whitened_step_a(f.design, k1, f.upsilon_factor, W, S_run, y, C, Z, *buffers)
            else:
                basis = allocate_eigenbasis(len(y), f.design.shape[1] - 1)
                build_eigenbasis(f.design, k, f.kernel_factor, basis, 0)
                eigen_step_a(basis, k1, eta, g, f.kernel_factor, f.upsilon_factor, W,
                             S_run, y, C, Z, *buffers)
            results.append((S_run, C[:, :k1], Z[:, :k1]))
        (S1, C1, Z1), (S2, C2, Z2) = results
        # the same uniforms and normals through conditionals that differ by the solve's error
        # (up to 5e-7 relative in the leverage ratios here): equal to 1e-4
        np.testing.assert_allclose(S2, S1, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(C2, C1, rtol=1e-4, atol=1e-4 * np.abs(C1).max())
        np.testing.assert_allclose(Z2, Z1, rtol=1e-4, atol=1e-4 * np.abs(Z1).max())
        assert not np.array_equal(S1, S)  # the step moved the auxiliaries


def test_a_basis_is_built_only_where_it_pays():
    # (changes, sweeps) at the chain's current n_gamma
    # Table 10's shapes: n = 4,000, n_gamma = 200 = k_max, where 2-3 % of sweeps change gamma
    assert worth_building(300, 10_000, 4000, 201)
    # Table 13's: n = 400, n_gamma near 400, gamma changes at 30-60 % of sweeps
    assert not worth_building(4_000, 10_000, 400, 381)
    # an active set that has not changed for 100 sweeps, even with n_gamma = n
    assert worth_building(0, 100, 300, 301)
    assert not worth_building(0, 1, 300, 301)


def test_the_basis_is_rebuilt_only_after_an_accepted_move(states):
    X, y, S, workspace, eta, g, k = states[0]
    f = workspace.factors
    n, k_max = f.design.shape[0], f.design.shape[1] - 1
    basis, history = allocate_eigenbasis(n, k_max), new_history(k_max)
    # no history at this n_gamma: a basis does not pay yet, unless gamma and theta are fixed
    assert not ready_basis(basis, history, 0, f.design, k, f.kernel_factor, False)
    assert basis.stamp[0] == -1
    for _ in range(200):  # 200 sweeps at this n_gamma, 2 of them with an accepted move
        note_sweep(history, k, False)
    note_sweep(history, k, True)
    note_sweep(history, k, True)
    assert ready_basis(basis, history, 2, f.design, k, f.kernel_factor, False)
    assert basis.stamp[0] == 2
    basis.values[:] = np.nan  # a rebuild would overwrite it: none while no move is accepted
    assert ready_basis(basis, history, 2, f.design, k, f.kernel_factor, False)
    assert np.isnan(basis.values).all()
    assert ready_basis(basis, history, 3, f.design, k, f.kernel_factor, False)
    assert basis.stamp[0] == 3 and np.isfinite(basis.values[:k + 1]).all()
    # a fixed active set and widths: always from the basis
    fresh = allocate_eigenbasis(n, k_max)
    assert ready_basis(fresh, new_history(k_max), 0, f.design, k, f.kernel_factor, True)
