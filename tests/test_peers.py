"""GPy's classifiers as rows: the wrapper passes GPy's own fit and predictions through, and
GPy's EP at fixed hyperparameters agrees with gpcbench's EP (an independent check of both)."""

import GPy
import numpy as np
import pytest
from sklearn_checks import assert_passes_check_estimator

from gpcbench.baselines.gpy import GPyClassifier
from gpcbench.estimators.ep import EPGaussianProcessClassifier


def _binary(n=40, seed=0, labels=(0, 1)):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.sin(2 * X[:, 0]) + X[:, 1] + 0.3 * rng.normal(size=n) > 0
    return X, np.where(y, labels[1], labels[0]), rng.normal(size=(15, 2))


def test_sklearn_api():
    """check_estimator (binary checks: GPy's classifier is binary); no check may fail, only the
    array-API check may be skipped (scikit-learn skips it unless SCIPY_ARRAY_API is set)."""
    assert_passes_check_estimator(GPyClassifier(max_iters=20))


@pytest.mark.parametrize("inference", ["ep", "laplace"])
def test_predict_proba_is_gpys_own_prediction(inference):
    """The wrapper's probabilities (labels 3 / 7) equal those of GPy's model built and
    optimised by hand, as GPy's documentation does it."""
    X, y, Xt = _binary(labels=(3, 7))
    model = GPyClassifier(inference=inference, random_state=0).fit(X, y)
    np.random.seed(0)
    method = {"ep": GPy.inference.latent_function_inference.EP,
              "laplace": GPy.inference.latent_function_inference.Laplace}[inference]()
    by_hand = GPy.models.GPClassification(X, (y == 7).astype(float)[:, None],
                                          kernel=GPy.kern.RBF(2, ARD=True),
                                          inference_method=method)
    by_hand.optimize()
    p7 = by_hand.predict(Xt)[0][:, 0]
    assert np.allclose(model.predict_proba(Xt), np.column_stack([1 - p7, p7]), atol=1e-10)
    assert np.array_equal(model.predict(Xt), np.where(p7 > 0.5, 7, 3))
    assert model.log_evidence_ == pytest.approx(float(by_hand.log_likelihood()))
    assert len(model.hyperparameters_["lengthscale"]) == 2


def test_gpy_ep_agrees_with_gpcbench_ep_at_fixed_hyperparameters():
    """GPy: probit likelihood Phi(y f), RBF variance v, lengthscales s_m. gpcbench (K&G eq. 13):
    the step likelihood on f + noise of variance theta2 = 1 is the same probit; theta0 = v,
    l_m = 1 / s_m^2, theta1 = 0. Same model, so EP's predictive probabilities and log Z must
    agree (both run to convergence)."""
    X, y, Xt = _binary(n=50, seed=3)
    variance, lengthscale = 2.0, np.array([0.8, 1.5])
    gpy = GPyClassifier(optimize=False, variance=variance, lengthscale=lengthscale,
                        random_state=0).fit(X, y)
    ours = EPGaussianProcessClassifier(theta0=variance, theta1=0.0, theta2=1.0,
                                       inverse_lengthscale=1.0 / lengthscale ** 2, ard=True,
                                       epsilon=0.0, learn_hyperparameters=False).fit(X, y)
    assert np.allclose(gpy.predict_proba(Xt), ours.predict_proba(Xt), atol=1e-4)
    assert np.allclose(gpy.predict_proba(X), ours.predict_proba(X), atol=1e-4)
    assert gpy.log_evidence_ == pytest.approx(ours.log_evidence_, abs=1e-4)


def test_multiclass_is_refused():
    X, y, _ = _binary()
    with pytest.raises(ValueError, match="Only binary"):
        GPyClassifier().fit(X, np.arange(len(y)) % 3)
