"""Variational GPC (Gibbs & MacKay 2000): sigmoid bounds, evidence sandwich against brute-force
quadrature, monotone variational updates, bound gradients, predictive integral, learning,
the degenerate upper-bound maximisation, scikit-learn conformance and pipeline registration."""

import numpy as np
import pytest
from scipy import integrate, special
from sklearn_checks import assert_passes_check_estimator

from gpcbench.inference.variational import (
    em_update,
    log_sigmoid_lower,
    log_sigmoid_upper,
    logistic_gaussian_expectation,
    lower_state,
    optimize_bound,
    optimize_lower_bound,
    optimize_upper_bound,
)
from gpcbench.kernels.covariance import Covariance, hyperparameter_mask
from gpcbench.learning.stopping import projected_gradient
from gpcbench.learning.variational import LEARNED, learn_hyperparameters
from gpcbench.models import VariationalGaussianProcessClassifier


def _data(n=30, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def test_sigmoid_bounds_hold_pointwise_and_touch_at_the_variational_parameter():
    z = np.linspace(-30, 30, 6001)
    for p in (0.0, 0.3, 1.0, 4.0, 12.0):
        assert np.all(log_sigmoid_lower(z, p) <= special.log_expit(z) + 1e-12)
        np.testing.assert_allclose(log_sigmoid_lower([p, -p], p), special.log_expit([p, -p]),
                                   atol=1e-12)
    for eta in (-8.0, -1.0, 0.0, 2.5, 10.0):
        assert np.all(log_sigmoid_upper(z, eta) >= special.log_expit(z) - 1e-12)
        np.testing.assert_allclose(log_sigmoid_upper(eta, eta), special.log_expit(eta), atol=1e-14)
    # a loose parameter gives a strictly looser bound away from the contact point
    assert log_sigmoid_lower(0.0, 5.0) < special.log_expit(0.0) - 0.1


def _exact_log_evidence(K, y):
    """log int prod_i sigma(y_i f_i) N(f | 0, K) df by quadrature (1-D adaptive, 2-D tensor)."""
    if len(y) == 1:
        s = np.sqrt(K[0, 0])
        value = integrate.quad(lambda f: special.expit(y[0] * f) * np.exp(-0.5 * (f / s) ** 2),
                               -40 * s, 40 * s, epsabs=1e-13, epsrel=1e-12, limit=400)[0]
        return np.log(value / (np.sqrt(2 * np.pi) * s))
    nodes, weights = np.polynomial.hermite.hermgauss(150)
    t = np.sqrt(2.0) * np.stack(np.meshgrid(nodes, nodes, indexing="ij")).reshape(2, -1)
    f = np.linalg.cholesky(K) @ t
    w = np.outer(weights, weights).ravel() / np.pi
    return np.log(w @ np.prod(special.expit(y[:, None] * f), axis=0))


@pytest.mark.parametrize("K, y", [
    (np.array([[1.0]]), np.array([1.0])),
    (np.array([[6.0]]), np.array([-1.0])),
    (np.array([[2.0, 1.2], [1.2, 1.5]]), np.array([1.0, -1.0])),
    (np.array([[3.0, 2.5], [2.5, 3.0]]), np.array([1.0, 1.0])),
])
def test_lower_bound_le_exact_evidence_le_upper_bound(K, y):
    exact = _exact_log_evidence(K, y)
    lower = optimize_lower_bound(K, y, tol=1e-13)
    upper = optimize_upper_bound(K, y, tol=1e-13)
    assert lower.converged and upper.converged
    assert lower.value < exact < upper.value
    # the gaps are those of loose bounds, not of a wrong integral
    assert exact - lower.value < 0.5 and upper.value - exact < 1.5


def test_quadrature_reference_agrees_for_n1_and_n2():
    """The 2-D tensor rule of the sandwich test reproduces the 1-D adaptive one."""
    K = np.array([[2.0, 0.0], [0.0, 1.0]])
    y = np.array([1.0, -1.0])
    separate = _exact_log_evidence(K[:1, :1], y[:1]) + _exact_log_evidence(K[1:, 1:], y[1:])
    np.testing.assert_allclose(_exact_log_evidence(K, y), separate, atol=1e-10)


def test_em_updates_never_lower_the_bound_and_reach_the_fixed_point():
    X, y = _data(40)
    K = Covariance(8.0, 1e-4, 0.0, [1.0, 0.5])(X)
    state = lower_state(K, y, np.full(len(y), 7.0))
    values = [state.value]
    for _ in range(30):
        state = lower_state(K, y, em_update(state))
        values.append(state.value)
    assert np.all(np.diff(values) >= -1e-10) and values[-1] > values[0] + 1.0
    result = optimize_lower_bound(K, y, tol=1e-12)
    assert np.all(np.diff(result.trace) >= -1e-10)
    assert result.value >= values[-1] - 1e-9
    mean, variance = result.mean, result.factor.variance()
    np.testing.assert_allclose(result.variational**2, mean**2 + variance, rtol=1e-5)


def test_upper_bound_decreases_to_the_tangent_fixed_point_at_the_posterior_mode():
    X, y = _data(40)
    K = Covariance(8.0, 1e-4, 0.0, [1.0, 0.5])(X)
    result = optimize_upper_bound(K, y, tol=1e-13)
    assert np.all(np.diff(result.trace) <= 1e-10)
    mode = result.mean
    np.testing.assert_allclose(result.variational, y * mode, atol=1e-5)  # eta = y f_hat
    # min U = log p(y | f_hat) - 1/2 f_hat^T K^-1 f_hat (Laplace's objective at its mode)
    psi = np.sum(special.log_expit(y * mode)) - 0.5 * mode @ np.linalg.solve(K, mode)
    np.testing.assert_allclose(result.value, psi, atol=1e-6)


@pytest.mark.parametrize("bound", ["lower", "upper"])
def test_bound_gradient_matches_finite_differences_of_the_optimised_bound(bound):
    X, y = _data(25, d=2, seed=3)
    cov = Covariance(2.0, 0.3, 0.01, [0.7, 1.3])
    result = optimize_bound(bound, cov(X), y, tol=1e-14)
    gradient = result.gradient(cov, X)
    h = 1e-5
    numeric = []
    for k in range(cov.n_params):
        step = np.zeros(cov.n_params)
        step[k] = h
        values = [optimize_bound(bound, cov.with_log_params(cov.log_params + sign * step)(X), y,
                                 result.variational, tol=1e-14).value for sign in (1, -1)]
        numeric.append((values[0] - values[1]) / (2 * h))
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-7)


def _quad_reference(m, v):
    s = np.sqrt(v)
    return integrate.quad(lambda f: special.expit(f) * np.exp(-0.5 * ((f - m) / s) ** 2),
                          m - 40 * s, m + 40 * s, points=[0.0], epsabs=1e-14, epsrel=1e-12,
                          limit=500)[0] / (np.sqrt(2 * np.pi) * s)


def test_logistic_gaussian_expectation_against_references():
    means = np.array([0.0, 0.3, 3.0, -7.0, 40.0, 1.5, -2.0, 0.1])
    variances = np.array([0.0, 1e-4, 0.5, 1.0, 2.0, 10.0, 100.0, 1e4])
    got = logistic_gaussian_expectation(means, variances)
    assert got[0] == pytest.approx(0.5, abs=1e-15)
    nodes, weights = np.polynomial.hermite.hermgauss(120)
    for m, v, g in zip(means[1:], variances[1:], got[1:]):
        assert g == pytest.approx(_quad_reference(m, v), abs=1e-10)
        if v <= 2.0:  # where a high-order Gauss-Hermite rule is itself accurate
            gh = weights @ special.expit(m + np.sqrt(2 * v) * nodes) / np.sqrt(np.pi)
            assert g == pytest.approx(gh, abs=1e-10)


@pytest.mark.parametrize("bound", ["lower", "upper"])
def test_predictions_match_the_bound_gaussian_written_with_explicit_inverses(bound):
    X, y = _data(30)
    Xt = np.random.default_rng(5).standard_normal((12, 2))
    clf = VariationalGaussianProcessClassifier(theta0=4.0, theta1=0.1, theta2=0.05,
                                               inverse_lengthscale=0.8,
                                               bound=bound, learn_hyperparameters=False)
    clf.fit(X, (y > 0).astype(int))
    cov, res = clf.covariance_, clf.bound_
    K, k = cov(X), cov(Xt, X)
    precision = res.factor.sqrt_precision**2
    if bound == "lower":
        sigma = np.linalg.inv(np.linalg.inv(K) + np.diag(precision))
        mean_f = sigma @ (0.5 * y)
        np.testing.assert_allclose(precision, np.tanh(res.variational / 2) / (2 * res.variational))
    else:
        sigma, mean_f = K, K @ (y * special.expit(-res.variational))
        assert np.all(precision == 0)
    K_inv = np.linalg.inv(K)
    mean = k @ K_inv @ mean_f
    var = cov.diag(Xt) - np.einsum("ij,jk,ik->i", k, K_inv - K_inv @ sigma @ K_inv, k)
    np.testing.assert_allclose(clf.latent(Xt)[0], mean, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(clf.latent(Xt)[1], var, rtol=1e-7, atol=1e-9)
    expected = [_quad_reference(m, v) for m, v in zip(mean, var)]
    np.testing.assert_allclose(clf.predict_proba(Xt)[:, 1], expected, atol=1e-9)
    np.testing.assert_array_equal(clf.predict(Xt), (mean > 0).astype(int))


def test_learning_raises_the_lower_bound_and_fills_the_fitted_attributes():
    X, y = _data(40, d=3)
    X[:, 2] = np.random.default_rng(9).standard_normal(40)  # irrelevant feature
    start = VariationalGaussianProcessClassifier(learn_hyperparameters=False).fit(X, y)
    for bound in ("lower", "upper"):
        clf = VariationalGaussianProcessClassifier(bound=bound, max_iter=30).fit(X, y)
        assert clf.lower_bound_ > start.lower_bound_ + 1.0
        assert clf.n_iter_ == len(clf.trace_) > 1
        values = [entry["lower_bound"] for entry in clf.trace_]
        assert values[0] == pytest.approx(start.lower_bound_) and values[-1] >= max(values) - 1e-6
        assert clf.hyperparameters_["theta2"] == 0.0
        assert len(clf.hyperparameters_["inverse_lengthscale"]) == 3
        assert (clf.log_evidence_ > clf.lower_bound_) == (bound == "upper")
        assert np.mean(clf.predict(X) == y) > 0.85


def test_learning_stops_where_the_finite_difference_gradient_is_below_gtol():
    """The shared stopping rule ends the search: at the returned hyperparameters the projected
    gradient of the optimised bound, by central differences, is below gtol (an irrelevant
    input's inverse lengthscale may sit at its bound, where an outward gradient is allowed)."""
    X, y = _data(40, d=3, seed=4)
    X[:, 2] = np.random.default_rng(5).standard_normal(40)
    cov = Covariance(1.0, 0.1, 0.0, [1.0, 1.0, 1.0])
    gtol = 1e-3
    fit = learn_hyperparameters(X, y, cov, gtol=gtol, ftol=0.0, max_iter=500)
    assert fit.converged and fit.trace[-1]["stop_reason"] == "gradient"
    mask = hyperparameter_mask(cov, LEARNED)
    point = fit.covariance.log_params[mask]
    h, numeric = 1e-5, []
    for k in range(point.size):
        values = []
        for sign in (1, -1):
            log_params = fit.covariance.log_params.copy()
            log_params[np.flatnonzero(mask)[k]] += sign * h
            values.append(optimize_bound("lower", cov.with_log_params(log_params)(X), y,
                                         fit.result.variational, tol=1e-14).value)
        numeric.append((values[0] - values[1]) / (2 * h))
    projected, _ = projected_gradient(point, numeric)
    assert np.max(np.abs(projected)) < 1.5 * gtol


def test_maximising_the_upper_bound_would_send_theta0_to_infinity():
    """The reason both rows learn with the lower bound: min_mu U grows with theta0 toward 0."""
    X, y = _data(30)
    values = [optimize_upper_bound(Covariance(t, 1e-4, 0.0, [1.0, 1.0])(X), y).value
              for t in (1.0, 10.0, 100.0, 1e3, 1e4)]
    assert np.all(np.diff(values) > 0) and -2.0 < values[-1] < 0.0
    lower = [optimize_lower_bound(Covariance(t, 1e-4, 0.0, [1.0, 1.0])(X), y).value
             for t in (10.0, 1e4)]
    assert lower[1] < lower[0]  # the lower bound (<= log Z) has an interior maximum


@pytest.mark.parametrize("estimator", [
    VariationalGaussianProcessClassifier(learn_hyperparameters=False),
    VariationalGaussianProcessClassifier(bound="upper", learn_hyperparameters=False),
    VariationalGaussianProcessClassifier(max_iter=2),
], ids=repr)
def test_sklearn_conformance(estimator):
    """check_estimator must pass; only the array-API check may be skipped (as for EP)."""
    assert_passes_check_estimator(estimator)


def test_rows_are_registered_with_the_printed_labels():
    """GPC-VL learns on its fold; GPC-VU reuses GPC-VL's hyperparameters of the same fold
    (a pipeline dependency) and only infers the latent values with the upper bound."""
    from gpcbench.experiments.registry import FitContext, method_spec

    learned = {"theta0": 2.0, "theta1": 1e-3, "theta2": 0.0, "inverse_lengthscale": [0.3, 0.7]}
    upstream = {"gpc-vl-m-soft/fold0": {"status": "ok", "hyperparameters": learned}}
    for name, label, bound in [("gpc-vl-m-soft", "GPC-VL(m,soft)", "lower"),
                               ("gpc-vu-m-soft", "GPC-VU(m,soft)", "upper")]:
        spec = method_spec(name)
        assert spec.label == label and spec.probabilistic
        ctx = FitContext(options={"max_iter": 5}, seed=0, n_jobs=1,
                         feature_types=("continuous", "discrete"), fold=0, upstream=upstream)
        model = spec.factory(ctx)
        assert model.bound == bound and model.ard and model.max_iter == 5
        assert model.discrete_features == [False, True]
    assert method_spec("gpc-vl-m-soft").upstream(4, {}) == []
    assert method_spec("gpc-vu-m-soft").upstream(4, {}) == [("gpc-vl-m-soft", 4)]
    assert model.learn_hyperparameters is False
    assert {key: getattr(model, key) for key in learned} == learned
