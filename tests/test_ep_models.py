"""The public estimators: scikit-learn conformance, label handling, predictions against the
paper's formulas written with explicit inverses, fitted attributes, variants, warm starts."""

import json

import numpy as np
import pytest
from scipy import special
from sklearn_checks import assert_passes_check_estimator

from gpcbench.kernels.covariance import Covariance
from gpcbench.estimators.ep_variants import (
    HARD_THETA2,
    PAPER_INITIAL_VALUES,
    VARIANTS,
    initial_hyperparameters,
)
from gpcbench.models import (
    EPGaussianProcessClassifier,
    EPGaussianProcessRegressor,
    gpc_ep_variant,
)


@pytest.mark.parametrize(
    "estimator",
    [
        EPGaussianProcessClassifier(learn_hyperparameters=False),
        EPGaussianProcessClassifier(max_iter=3),
        EPGaussianProcessRegressor(learn_hyperparameters=False),
        EPGaussianProcessRegressor(max_iter=3),
    ],
    ids=repr,
)
def test_sklearn_conformance(estimator):
    """check_estimator with EM capped at 3 iterations to keep it fast; no check may fail.

    The only check allowed to report "skipped" is the array-API one, which scikit-learn skips
    unless SCIPY_ARRAY_API is set; these estimators do not claim array-API support.
    """
    assert_passes_check_estimator(estimator)


def _binary(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = np.where(np.sin(2 * X[:, 0]) + X[:, 1] + 0.3 * rng.standard_normal(n) > 0, 1, 0)
    return X, y


@pytest.mark.parametrize("labels", [("no", "yes"), (3, 7), (False, True), (-1, 1)])
def test_arbitrary_label_values(labels):
    X, y01 = _binary()
    y = np.array(labels, dtype=object if isinstance(labels[0], str) else None)[y01]
    clf = EPGaussianProcessClassifier(learn_hyperparameters=False, inverse_lengthscale=1.0).fit(
        X, y
    )
    assert list(clf.classes_) == sorted(labels)
    pred = clf.predict(X)
    assert set(pred) <= set(labels) and np.mean(pred == y) > 0.8
    proba = clf.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_[proba.argmax(axis=1)], pred)


def test_predictions_match_eqs_24_25_with_explicit_inverses():
    X, y = _binary(seed=1)
    Xt = np.random.default_rng(2).standard_normal((15, 2))
    Xt[:3] = X[
        :3
    ]  # training inputs as new points: their own variance gets theta2, cross terms do not
    clf = EPGaussianProcessClassifier(
        learn_hyperparameters=False, theta2=0.2, inverse_lengthscale=0.8
    ).fit(X, y)
    cov, ep = clf.covariance_, clf.ep_
    C = cov(X)
    Lam = np.diag(1.0 / ep.site_precision)
    k = np.array(
        [
            [cov.theta0 * np.exp(-0.5 * 0.8 * np.sum((a - b) ** 2)) + cov.theta1 for b in X]
            for a in Xt
        ]
    )
    kappa = cov.theta0 + cov.theta1 + cov.theta2
    mean = k @ np.linalg.inv(C) @ ep.mean  # eq. 24
    var = kappa - np.einsum("ij,jk,ik->i", k, np.linalg.inv(Lam + C), k)
    np.testing.assert_allclose(
        clf.predict_proba(Xt)[:, 1], special.ndtr(mean / np.sqrt(var)), rtol=1e-8
    )  # eq. 25
    np.testing.assert_array_equal(clf.predict(Xt), clf.classes_[(mean > 0).astype(int)])


def test_regressor_matches_closed_form_gp_regression():
    rng = np.random.default_rng(3)
    X = rng.uniform(-2, 2, (30, 2))
    y = np.sin(X[:, 0]) * X[:, 1] + 0.1 * rng.standard_normal(30)
    reg = EPGaussianProcessRegressor(learn_hyperparameters=False, noise_variance=0.05).fit(X, y)
    cov = reg.covariance_
    Ky = cov(X) + 0.05 * np.eye(30)
    Xt = rng.uniform(-2, 2, (8, 2))
    mean, std = reg.predict(Xt, return_std=True)
    np.testing.assert_allclose(mean, cov(Xt, X) @ np.linalg.solve(Ky, y), rtol=1e-8, atol=1e-10)
    var = cov.diag(Xt) - np.einsum("ij,ji->i", cov(Xt, X), np.linalg.solve(Ky, cov(X, Xt)))
    np.testing.assert_allclose(std**2, var, rtol=1e-7, atol=1e-10)
    sign, logdet = np.linalg.slogdet(2 * np.pi * Ky)
    np.testing.assert_allclose(
        reg.log_evidence_, -0.5 * logdet - 0.5 * y @ np.linalg.solve(Ky, y), rtol=1e-10
    )
    assert reg.converged_ and reg.n_iter_ == 1


def test_fitted_attributes_and_trace():
    X, y = _binary(seed=4)
    clf = EPGaussianProcessClassifier(max_iter=300).fit(X, y)
    assert set(clf.hyperparameters_) == {
        "theta0",
        "theta1",
        "theta2",
        "inverse_lengthscale",
        "epsilon",
    }
    json.dumps(clf.hyperparameters_)  # plain Python values
    json.dumps(clf.trace_)
    assert clf.trace_ is clf.convergence_trace_ and clf.n_iter_ == len(clf.trace_)
    assert clf.log_evidence_ == clf.log_marginal_likelihood_value_ == clf.trace_[-1]["log_evidence"]
    assert clf.converged_ and clf.trace_[-1]["log_evidence"] > clf.trace_[0]["log_evidence"]
    assert clf.hyperparameters_ == clf.trace_[-1]["hyperparameters"]
    capped = EPGaussianProcessClassifier(max_iter=1).fit(X, y)
    assert not capped.converged_ and capped.n_iter_ == 2


def test_variants_and_warm_start():
    X, y = _binary(n=50, seed=5)
    soft = gpc_ep_variant("GPC-EP(s,soft)").fit(X, y)
    hard = gpc_ep_variant("GPC-EP(s,hard)").fit(X, y)
    assert (
        hard.hyperparameters_["theta2"] == HARD_THETA2 and soft.hyperparameters_["theta2"] != 1e-3
    )
    ard = gpc_ep_variant(
        "GPC-EP(m,soft)", initial_hyperparameters("GPC-EP(m,soft)", same_fold=soft.hyperparameters_)
    )
    assert ard.ard and ard.inverse_lengthscale == soft.hyperparameters_["inverse_lengthscale"]
    ard.fit(X, y)
    assert len(ard.hyperparameters_["inverse_lengthscale"]) == 2
    assert ard.log_evidence_ >= soft.log_evidence_ - 1e-3  # (m) starts at the (s) optimum
    # footnote 11: the next fold starts from this fold's result (on the same data: a fixed point)
    again = gpc_ep_variant(
        "GPC-EP(s,soft)",
        initial_hyperparameters("GPC-EP(s,soft)", previous_fold=soft.hyperparameters_),
    )
    assert again.fit(X, y).n_iter_ <= 3


def test_variant_protocol_of_footnote_11():
    first = initial_hyperparameters("GPC-EP(s,soft)")
    assert first == PAPER_INITIAL_VALUES
    previous = {
        "theta0": 3.0,
        "theta1": 0.2,
        "theta2": 0.01,
        "inverse_lengthscale": 0.4,
        "epsilon": 0.0,
    }
    assert initial_hyperparameters("GPC-EP(s,soft)", previous_fold=previous) == previous
    hard = initial_hyperparameters("GPC-EP(s,hard)", previous_fold=previous)
    assert hard["theta2"] == HARD_THETA2 and "theta2" not in VARIANTS["GPC-EP(s,hard)"].learn
    assert initial_hyperparameters("GPC-EP(m,soft)", same_fold=previous) == previous
    with pytest.raises(ValueError):
        initial_hyperparameters("GPC-EP(m,soft)", previous_fold=previous)
    assert VARIANTS["GPC-EP(m,soft)"].ard and not VARIANTS["GPC-EP(s,soft)"].ard
    defaults = EPGaussianProcessClassifier().get_params()
    assert {key: defaults[key] for key in PAPER_INITIAL_VALUES} == PAPER_INITIAL_VALUES


def test_invalid_configurations_raise():
    X, y = _binary()
    with pytest.raises(ValueError, match="binary"):
        EPGaussianProcessClassifier(learn_hyperparameters=False).fit(X, np.arange(len(y)) % 3)
    with pytest.raises(ValueError):
        EPGaussianProcessClassifier(inverse_lengthscale=[1.0, 2.0], ard=False).fit(X, y)
    with pytest.raises(ValueError):
        EPGaussianProcessClassifier(learn_hyperparameters=("theta9",)).fit(X, y)
    with pytest.raises(ValueError):
        EPGaussianProcessClassifier(theta1=0.0).fit(X, y)  # a learned value must be > 0 (log space)


def test_discrete_features_are_passed_to_the_covariance():
    X, y = _binary()
    X = np.column_stack([X, (X[:, 0] > 0).astype(float)])
    clf = EPGaussianProcessClassifier(learn_hyperparameters=False, discrete_features=[2]).fit(X, y)
    reference = Covariance(1.0, 1e-4, 1e-3, 0.05, discrete_features=[False, False, True])
    np.testing.assert_array_equal(clf.covariance_(X), reference(X))


@pytest.mark.parametrize("method", ["gpc-ep-s-soft", "gpc-ep-m-soft"])
def test_the_discrete_features_option_turns_discrete_columns_into_numbers(method):
    """ZDJ's FGP+KL on Splice: the factory gives K&G eq. 14's 1 - delta distance to the data
    set's discrete columns unless the option ``discrete_features`` lists others; with ``[]``
    the covariance is eq. 13 on squared differences of the codes, written out here."""
    from gpcbench.experiments.registry import FitContext, method_spec

    rng = np.random.default_rng(4)
    X = rng.integers(1, 5, size=(30, 3)).astype(float)  # letter codes 1..4
    y = (X[:, 0] + rng.normal(size=30) > 2.5).astype(int)
    upstream = {"gpc-ep-s-soft/fold0": {"status": "ok", "hyperparameters": {
        "theta0": 1.0, "theta1": 1e-4, "theta2": 1e-3, "inverse_lengthscale": 0.05,
        "epsilon": 0.0}}}

    def built(options):
        ctx = FitContext(options={"warm_start": False, **options}, seed=0, n_jobs=1,
                         feature_types=("discrete",) * 3, fold=0, upstream=upstream)
        return method_spec(method).factory(ctx).set_params(learn_hyperparameters=False)

    assert list(built({}).discrete_features) == [True] * 3
    numbers = built({"discrete_features": []}).fit(X, y)
    h = numbers.hyperparameters_
    scales = np.broadcast_to(np.asarray(h["inverse_lengthscale"], dtype=float), (3,))
    squared = np.sum(scales * (X[:, None, :] - X[None, :, :]) ** 2, axis=2)
    expected = h["theta0"] * np.exp(-0.5 * squared) + h["theta1"] + h["theta2"] * np.eye(30)
    np.testing.assert_allclose(numbers.covariance_(X), expected, rtol=1e-12)
    assert not np.allclose(built({}).fit(X, y).covariance_(X), expected)
