"""predict_proba of FBGKM and SGPC (Zhang, Dai & Jordan 2011) against literal per-draw
references written here: the model average of section 3.3 over the kept draws, with
Phi(u + k*' beta) (FBGKM), the section 4.2 predictive N(m, v) of s* in the paper's own form
(M_gamma = I + g^-1 K_gamma K_gammagamma^-1 K_gamma', no Woodbury; SGPC) and, for three
classes, section 6.2's argmax probabilities of the class scores.

The estimator batches the draws (one product per chunk of draws; SGPC: windows of consecutive
draws sharing a generalized eigendecomposition); these references take one draw at a time,
each with its own g, active set, kernel width and coefficients.
"""

import itertools

import numpy as np
import pytest
from scipy.linalg import cho_solve, cholesky, solve_triangular
from scipy.special import ndtr

from gpcbench.kernels.rbf import rbf
from gpcbench.mcmc.gkm_multiclass import argmax_probability, gauss_hermite
from gpcbench.models import FBGKMClassifier, SGPCClassifier

QUADRATURE = gauss_hermite(48)


def _problem(J, n=40, n_test=15, seed=0, duplicates=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n + n_test, 3))
    X[n - duplicates:n] = X[:duplicates]  # exact copies: a singular K but for the jitter
    y = np.argmax(X[:, :2] @ rng.normal(size=(2, J)) + 0.5 * rng.normal(size=(n + n_test, J)),
                  axis=1)
    return X[:n], y[:n], X[n:], rng


def _fit(cls, J, learn=False, **problem):
    """A short chain with thin = 1, so that consecutive draws share or nearly share their
    active sets (SGPC's windows) and g changes every draw; ``learn``: several kernel widths."""
    X, y, X_test, rng = _problem(J, **problem)
    clf = cls(n_sweeps=70, burn_in=10, thin=1, k_max=10, random_state=1,
              kernel_width="learn" if learn else "mean_distance").fit(X, y)
    return clf, X_test, rng


def _draw(clf, t):
    """Draw t's active points and its kernel values K_gamma (train) and k* (test) maker."""
    act = clf.active_[t][clf.active_[t] >= 0]
    return act, lambda A: rbf(A, clf.X_train_[act], clf.theta_[t])


def _with_auxiliaries(clf, rng):
    """SGPC keeps K~'s of each draw, not s: give every draw a fresh s (one column per class
    when multiclass) and store its K~'s, so the literal predictive can use s itself."""
    shape = clf.X_train_.shape[:1] + clf.coef_.shape[2:]
    S = rng.normal(size=(clf.active_.shape[0],) + shape)
    for t in range(S.shape[0]):
        act, kernel = _draw(clf, t)
        clf.aux_[t] = 0.0
        clf.aux_[t, 0] = S[t].sum(axis=0)
        clf.aux_[t, 1:act.size + 1] = kernel(clf.X_train_).T @ S[t]
    return S


def _class_probability(F, scale):
    """Section 6.2: p(y* = c) = P(argmax_l (F_l + scale e_l) = c), point by point."""
    return np.array([[argmax_probability(F[i], c, scale[i], *QUADRATURE)
                      for c in range(F.shape[1])] for i in range(F.shape[0])])


def _probability(F, scale):
    return ndtr(F / scale) if F.ndim == 1 else _class_probability(F, scale)


def _literal_fbgkm(clf, X):
    """Section 3.3: 1/T sum_t Phi(u_t + k_gamma(x*)' beta_gamma,t) (or the class scores')."""
    total = 0.0
    for t in range(clf.active_.shape[0]):
        act, kernel = _draw(clf, t)
        F = clf.coef_[t, 0] + kernel(X) @ clf.coef_[t, 1:act.size + 1]
        total = total + _probability(F, np.ones(X.shape[0]))
    return total / clf.active_.shape[0]


def _literal_sgpc(clf, X, S):
    """Section 4.2 as printed: s* | s, gamma, u ~ N(m, v) with
    m = u + g^-1 k*' K_gg^-1 K_g' M^-1 (s - u 1),
    v = g^-1 k*' K_gg^-1 k* + 1 - g^-2 k*' K_gg^-1 K_g' M^-1 K_g K_gg^-1 k*,
    M = I + g^-1 K_g K_gg^-1 K_g' (K_gg jittered), averaged over the draws as Phi(m / sqrt(v))."""
    total = 0.0
    for t in range(clf.active_.shape[0]):
        act, kernel = _draw(clf, t)
        g, u = clf.hyper_[t, 0], clf.coef_[t, 0]
        K_g, k_star = kernel(clf.X_train_), kernel(X)
        K_gg = K_g[act] + clf.jitter * np.eye(act.size)
        M = np.eye(K_g.shape[0]) + K_g @ np.linalg.solve(K_gg, K_g.T) / g
        A = np.linalg.solve(K_gg, k_star.T)  # K_gg^-1 k*, one column per test point
        m = u + A.T @ K_g.T @ np.linalg.solve(M, S[t] - u) / g
        B = K_g @ A
        v = (np.sum(k_star.T * A, axis=0) / g + 1.0
             - np.sum(B * np.linalg.solve(M, B), axis=0) / g**2)
        total = total + _probability(m, np.sqrt(v))
    return total / clf.active_.shape[0]


def _per_draw_cholesky(clf, X):
    """Section 4.2 after Woodbury, one Cholesky of P = g K_gg + K_g'K_g per draw:
    m = u + k*' P^-1 K_g'(s - u 1), v = 1 + |R^-1 k*|^2 (the implementation before batching)."""
    total = 0.0
    for t in range(clf.active_.shape[0]):
        act, kernel = _draw(clf, t)
        g, u = clf.hyper_[t, 0], clf.coef_[t, 0]
        K_g, k_star = kernel(clf.X_train_), kernel(X)
        R = cholesky(g * (K_g[act] + clf.jitter * np.eye(act.size)) + K_g.T @ K_g, lower=True)
        h = clf.aux_[t, 1:act.size + 1] - np.multiply.outer(K_g.sum(axis=0), u)
        V = solve_triangular(R, k_star.T, lower=True)
        total = total + _probability(u + k_star @ cho_solve((R, True), h),
                                     np.sqrt(1.0 + np.sum(V * V, axis=0)))
    return total / clf.active_.shape[0]


def _positive(clf, X):
    proba = clf.predict_proba(X)
    return proba[:, 1] if proba.shape[1] == 2 else proba


@pytest.mark.parametrize("J", [2, 3])
@pytest.mark.parametrize("learn", [False, True])
def test_fbgkm_predict_proba_equals_the_literal_model_average(J, learn):
    clf, X_test, _ = _fit(FBGKMClassifier, J, learn)
    np.testing.assert_allclose(_positive(clf, X_test), _literal_fbgkm(clf, X_test),
                               rtol=0, atol=1e-10)


@pytest.mark.parametrize("J", [2, 3])
@pytest.mark.parametrize("learn", [False, True])
def test_sgpc_predict_proba_equals_the_literal_section_4_2_predictive(J, learn):
    clf, X_test, rng = _fit(SGPCClassifier, J, learn)
    S = _with_auxiliaries(clf, rng)
    sets = [tuple(np.sort(a[a >= 0])) for a in clf.active_]
    changes = sum(a != b for a, b in itertools.pairwise(sets))
    assert 0 < changes < len(sets) - 1  # draws that share their active set and draws that do not
    assert np.unique(clf.hyper_[:, 0]).size == clf.hyper_.shape[0]
    if learn:
        assert np.unique(clf.theta_, axis=0).shape[0] > 1
    np.testing.assert_allclose(_positive(clf, X_test), _literal_sgpc(clf, X_test, S),
                               rtol=0, atol=1e-10)


@pytest.mark.parametrize("J", [2, 3])
def test_sgpc_predict_proba_with_duplicated_training_points(J):
    """K_gammagamma singular but for the jitter 1e-6 (every training point twice, and test
    points on training points): the batched predictive equals one Cholesky of P per draw."""
    clf, X_test, rng = _fit(SGPCClassifier, J, duplicates=20)
    active = [a[a >= 0] for a in clf.active_]  # points i and 20 + i coincide
    assert sum(np.intersect1d(a[a < 20], a[a >= 20] - 20).size > 0 for a in active) > 20
    _with_auxiliaries(clf, rng)
    X_test = np.vstack([X_test, clf.X_train_[:4]])
    np.testing.assert_allclose(_positive(clf, X_test), _per_draw_cholesky(clf, X_test),
                               rtol=0, atol=1e-10)
