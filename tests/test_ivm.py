"""IVM selection (gpcbench.inference.ivm) against a literal O(n^3)-per-step implementation of
Lawrence, Seeger & Herbrich (2003): the posterior refactored densely from all included sites
at every step and the probit's tilted moments written out with scipy."""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from gpcbench.estimators.ivm import IVMClassifier
from gpcbench.inference.ivm import select_active_set
from gpcbench.kernels.rbf import rbf
from gpcbench.likelihoods import ProbitLikelihood


def _literal(K, y, d):
    """Each step: Sigma = (K^-1 + Pi)^-1 and mu = Sigma b from the included sites, densely; the
    tilted moments of Phi(y f) N(f | mu, s): z = y mu / sqrt(1 + s), r = N(z) / Phi(z),
    variance s - s^2 r (z + r) / (1 + s), mean mu + y s r / sqrt(1 + s)."""
    n = y.size
    pi, b, chosen = np.zeros(n), np.zeros(n), []
    for _ in range(d):
        # (the prior itself before any site: step 1 is a tie, broken by the first index)
        sigma = K if not chosen else np.linalg.solve(
            np.linalg.solve(K, np.eye(n)) + np.diag(pi), np.eye(n))
        mu, s = sigma @ b, np.diag(sigma)
        z = y * mu / np.sqrt(1 + s)
        r = np.exp(norm.logpdf(z) - norm.logcdf(z))
        tilted_var = s - s**2 * r * (z + r) / (1 + s)
        tilted_mean = mu + y * s * r / np.sqrt(1 + s)
        score = 0.5 * np.log(s / tilted_var)
        score[chosen] = -np.inf
        j = int(np.argmax(score))
        chosen.append(j)
        pi[j] = 1 / tilted_var[j] - 1 / s[j]
        b[j] = tilted_mean[j] / tilted_var[j] - mu[j] / s[j]
    return np.array(chosen), pi[chosen], b[chosen]


def test_selection_matches_the_literal_algorithm():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(25, 2))
    y = np.sign(X[:, 0] - X[:, 1] ** 2 + 0.5 + 0.3 * rng.normal(size=25))
    K = rbf(X, X, 1.3) + 1e-8 * np.eye(25)
    fast = select_active_set(lambda j: K[:, j], np.diag(K), y, ProbitLikelihood(), 12)
    chosen, tau, nu = _literal(K, y, 12)
    np.testing.assert_array_equal(fast.indices, chosen)
    np.testing.assert_allclose(fast.site_precision, tau, rtol=1e-6)
    np.testing.assert_allclose(fast.site_natural_mean, nu, rtol=1e-6, atol=1e-9)


def test_classifier_predicts_from_its_active_set():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(120, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    model = IVMClassifier(k_max=30).fit(X, y)
    assert model.active_.size == 30 and np.unique(model.active_).size == 30
    X_test = rng.normal(size=(400, 2))
    assert np.mean(model.predict(X_test) == (X_test.sum(axis=1) > 0)) > 0.9
    proba = model.predict_proba(X_test)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_classifier_with_bias_predicts_as_the_dense_posterior():
    """Every point active (k_max = n): the latent at new inputs equals the dense GP posterior of
    the literal algorithm's sites under the kernel rbf + sigma_b^2, mean k*^T (K + Pi^-1)^-1 m
    and variance k** - k*^T (K + Pi^-1)^-1 k*, with m = b / pi the site means."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    y = np.where(np.sum(X**2, axis=1) > 1.5, 1.0, -1.0)
    X_new = rng.normal(size=(7, 2)) * 3
    bias = 2.5
    model = IVMClassifier(k_max=30, kernel_width=1.1, bias_variance=bias).fit(X, y)
    K = rbf(X, X, 1.1) + bias
    chosen, pi, b = _literal(K, y, 30)
    np.testing.assert_array_equal(model.active_, chosen)
    cross = rbf(X_new, X[chosen], 1.1) + bias
    system = K[np.ix_(chosen, chosen)] + np.diag(1 / pi)
    mean = cross @ np.linalg.solve(system, b / pi)
    variance = 1 + bias - np.sum(cross * np.linalg.solve(system, cross.T).T, axis=1)
    fast_mean, fast_variance = model._latent(X_new)
    np.testing.assert_allclose(fast_mean, mean, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(fast_variance, variance, rtol=1e-6, atol=1e-9)
    without_bias = IVMClassifier(k_max=30, kernel_width=1.1, bias_variance=0.0).fit(X, y)
    assert not np.allclose(without_bias._latent(X_new)[0], fast_mean, rtol=1e-3)


def test_sklearn_api_of_the_zdj_peer_estimators():
    """get_params / set_params / clone, default construction, and labels of any type."""
    from sklearn.base import clone
    from sklearn.utils.estimator_checks import (
        check_get_params_invariance,
        check_no_attributes_set_in_init,
        check_parameters_default_constructible,
        check_set_params,
    )

    from gpcbench.models import FICGaussianProcessClassifier, IVMClassifier

    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 2))
    labels = np.where(X[:, 0] > 0, "b", "a")
    for cls in (FICGaussianProcessClassifier, IVMClassifier):
        name = cls.__name__
        for check in (check_get_params_invariance, check_no_attributes_set_in_init,
                      check_parameters_default_constructible, check_set_params):
            check(name, cls())
        model = clone(cls(k_max=10)).fit(X, labels)
        assert set(model.predict(X)) <= {"a", "b"} and model.predict_proba(X).shape == (40, 2)
