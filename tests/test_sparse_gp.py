"""FIC EP (gpcbench.inference.ep_fic) against the dense full-GP EP of gpcbench.inference.ep,
its evidence gradient against finite differences, and the SGP+FIC estimator."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from gpcbench.estimators.sparse_gp import FICGaussianProcessClassifier
from gpcbench.inference.ep import expectation_propagation
from gpcbench.inference.ep_fic import fic_expectation_propagation
from gpcbench.inference.ep_fic_gradient import fic_log_evidence_gradient
from gpcbench.kernels.fic import FICPrior, FICSiteFactorization
from gpcbench.kernels.rbf import rbf
from gpcbench.likelihoods import ProbitLikelihood
from gpcbench.models import EPGaussianProcessClassifier

TIGHT = {"tol": 1e-12, "site_tol": 1e-10, "max_sweeps": 1000}
PROBIT = ProbitLikelihood()


def _data(n=40, p=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    return X, np.sign(X[:, 0] + 0.5 * rng.normal(size=n))


def test_fic_ep_equals_dense_ep_on_the_fic_covariance():
    """m < n: FIC EP's O(n m^2) algebra gives the dense EP posterior of Sigma = Q + diag(K - Q)."""
    X, y = _data()
    prior = FICPrior.from_inputs(X, X[:15], 1.5)
    fic = fic_expectation_propagation(prior, y, PROBIT, **TIGHT)
    full = expectation_propagation(prior.dense(), y, PROBIT, schedule="parallel", **TIGHT)
    assert fic.converged and full.converged
    assert fic.log_evidence == pytest.approx(full.log_evidence, abs=1e-9)
    np.testing.assert_allclose(fic.mean, full.mean, atol=1e-8)
    np.testing.assert_allclose(fic.variance, full.variance, atol=1e-8)
    covariance = FICSiteFactorization.from_sites(prior, fic.site_precision).covariance()
    np.testing.assert_allclose(covariance, full.posterior_covariance(), atol=1e-8)
    X_new = np.random.default_rng(5).normal(size=(7, 3))
    u_new = prior.projection(X_new)
    mean, variance = full.predict(u_new @ prior.U.T, np.ones(7))  # FIC: Q_*n, K_** = 1
    fic_mean, fic_variance = fic.predict(X_new)
    np.testing.assert_allclose(fic_mean, mean, atol=1e-8)
    np.testing.assert_allclose(fic_variance, variance, atol=1e-8)


def test_all_training_points_inducing_is_the_full_gp():
    """Z = X: the diagonal correction vanishes (up to the jitter) and FIC EP is full-GP EP."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-3, 3, size=(30, 2))
    y = np.sign(X[:, 0] + 0.3 * rng.normal(size=30))
    prior = FICPrior.from_inputs(X, X, 1.0, jitter=1e-10)
    assert prior.d0.max() < 1e-8
    fic = fic_expectation_propagation(prior, y, PROBIT, **TIGHT)
    full = expectation_propagation(rbf(X, X, 1.0), y, PROBIT, schedule="parallel", **TIGHT)
    assert fic.log_evidence == pytest.approx(full.log_evidence, abs=1e-6)
    np.testing.assert_allclose(fic.mean, full.mean, atol=1e-6)
    np.testing.assert_allclose(fic.variance, full.variance, atol=1e-6)
    np.testing.assert_allclose(fic.site_precision, full.site_precision, rtol=1e-5)
    # the estimators: probit on K is K&G's threshold on K + I (theta2 = 1), the same model
    labels = (y > 0).astype(int)
    sparse = FICGaussianProcessClassifier(k_max=30, kernel_width=1.0, jitter=1e-10, ep_tol=1e-12,
                                          site_tol=1e-10, max_sweeps=1000).fit(X, labels)
    dense = EPGaussianProcessClassifier(theta0=1.0, theta1=0.0, theta2=1.0,
                                        inverse_lengthscale=2.0, learn_hyperparameters=False,
                                        ep_schedule="parallel").fit(X, labels)
    assert sparse.log_evidence_ == pytest.approx(dense.log_evidence_, abs=1e-6)
    X_new = rng.uniform(-3, 3, size=(10, 2))
    np.testing.assert_allclose(sparse.predict_proba(X_new), dense.predict_proba(X_new), atol=1e-4)


def _log_z(X, Z, y, theta):
    return fic_expectation_propagation(FICPrior.from_inputs(X, Z, theta), y, PROBIT,
                                       tol=1e-13, site_tol=1e-11, max_sweeps=2000)


@pytest.mark.parametrize("theta", [np.array([1.5]), np.array([1.2, 2.0, 0.8])])
def test_evidence_gradient_matches_finite_differences(theta):
    X, y = _data()
    Z = X[:15]
    gradient = fic_log_evidence_gradient(_log_z(X, Z, y, theta))
    step = 1e-5
    numeric = []
    for k in range(theta.size):
        shift = np.zeros(theta.size)
        shift[k] = step
        numeric.append((_log_z(X, Z, y, theta * np.exp(shift)).log_evidence
                        - _log_z(X, Z, y, theta * np.exp(-shift)).log_evidence) / (2 * step))
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-7)


def test_learned_widths_raise_the_evidence_and_warn_at_the_cap():
    X, y = _data(n=80, p=3, seed=3)
    fixed = FICGaussianProcessClassifier(k_max=20, random_state=0).fit(X, y)
    learned = FICGaussianProcessClassifier(k_max=20, kernel_width="learn", ard=True,
                                           random_state=0).fit(X, y)
    assert learned.converged_ and learned.kernel_width_.shape == (3,)
    assert learned.log_evidence_ > fixed.log_evidence_
    np.testing.assert_array_equal(learned.inducing_indices_, fixed.inducing_indices_)
    with pytest.warns(ConvergenceWarning):
        capped = FICGaussianProcessClassifier(k_max=20, kernel_width="learn", ard=True,
                                              max_iter=1, random_state=0).fit(X, y)
    assert not capped.converged_
    assert set(capped.predict(X)) <= {-1.0, 1.0}
