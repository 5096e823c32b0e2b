"""Inputs whose scale makes the eq. 13 covariance degenerate (every off-diagonal correlation
0 or 1 to rounding) give a DegenerateCovarianceWarning instead of silent prior predictions."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification

from gpcbench.kernels.covariance import Covariance, DegenerateCovarianceWarning
from gpcbench.models import (
    EPGaussianProcessClassifier,
    LaplaceGaussianProcessClassifier,
    MulticlassEPGaussianProcessClassifier,
    SoftmaxLaplaceGaussianProcessClassifier,
    VariationalGaussianProcessClassifier,
)

BINARY = make_classification(n_samples=40, n_features=3, n_informative=3, n_redundant=0,
                             random_state=0)
MULTI = make_classification(n_samples=45, n_features=3, n_informative=3, n_redundant=0,
                            n_classes=3, n_clusters_per_class=1, random_state=1)
FIXED = [
    (EPGaussianProcessClassifier(inverse_lengthscale=1.0, learn_hyperparameters=False), BINARY),
    (LaplaceGaussianProcessClassifier(inverse_lengthscale=1.0, hyperparameter_learning="fixed"),
     BINARY),
    (VariationalGaussianProcessClassifier(inverse_lengthscale=1.0, learn_hyperparameters=False),
     BINARY),
    (MulticlassEPGaussianProcessClassifier(inverse_lengthscale=1.0, learn_hyperparameters=False),
     MULTI),
    (SoftmaxLaplaceGaussianProcessClassifier(inverse_lengthscale=1.0,
                                             hyperparameter_learning="fixed"), MULTI),
]


@pytest.mark.parametrize("estimator, data", FIXED, ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("scale", [1e8, 1e-9])
def test_inputs_far_from_the_lengthscale_warn(estimator, data, scale):
    X, y = data
    with pytest.warns(DegenerateCovarianceWarning, match="standardise the inputs"):
        estimator.fit(X * scale, y)


@pytest.mark.parametrize("estimator, data", FIXED, ids=lambda e: type(e).__name__)
def test_standardised_inputs_do_not_warn(estimator, data):
    X, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateCovarianceWarning)
        estimator.fit(X, y)


def test_is_degenerate_against_the_correlations():
    X = np.random.default_rng(0).normal(size=(30, 2))
    cov = Covariance(1.0, 0.1, 0.01, [1.0])
    assert not cov.is_degenerate(X)
    assert cov.is_degenerate(X * 1e8) and cov.is_degenerate(X * 1e-9)
    assert not cov.is_degenerate(X[:1] * 1e8)  # one point: nothing to tell apart
