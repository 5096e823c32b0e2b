"""ZDJ Table 10's SVM (gpcbench.baselines.svm_mean_width) against a literal reading of ZDJ sec.
5.1: the mean over all pairs of training rows of ||x_i - x_j|| by a double loop, and an SVC
whose Gram matrix is exp(-||x - x'||^2 / theta^2) entry by entry."""

import itertools

import numpy as np
import pytest
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import check_estimator

from gpcbench.baselines.svm_mean_width import MeanWidthSVM


def _problem(seed=0, n=120, m=60, p=3, classes=2):
    rng = np.random.default_rng(seed)
    y = np.arange(n + m) % classes
    X = rng.normal(size=(n + m, p)) + 1.3 * y[:, None] + 50.0  # far from the origin
    return X[:n], y[:n], X[n:]


def _literal_gram(A, B, theta):
    return np.array([[np.exp(-np.sum((a - b) ** 2) / theta ** 2) for b in B] for a in A])


@pytest.mark.parametrize("C", [0.3, 1.0, 10.0])
def test_equals_literal_zdj_svm(C):
    X, y, X_test = _problem()
    pairs = list(itertools.combinations(range(len(X)), 2))
    theta = np.mean([np.linalg.norm(X[i] - X[j]) for i, j in pairs])
    literal = SVC(C=C, kernel="precomputed").fit(_literal_gram(X, X, theta), y)
    ours = MeanWidthSVM(C=C).fit(X, y)
    assert ours.theta_ == pytest.approx(theta, rel=1e-9)  # mean_distance expands |a|^2 + |b|^2 - 2 a'b
    # both are LIBSVM solutions stopped at its KKT tolerance (1e-3) from Gram matrices that
    # differ by rounding, so their decision values agree to about that tolerance
    expected = literal.decision_function(_literal_gram(X_test, X, theta))
    np.testing.assert_allclose(ours.model_.decision_function(X_test), expected, atol=2e-3)
    clear = np.abs(expected) > 2e-3
    np.testing.assert_array_equal(ours.predict(X_test)[clear],
                                  literal.predict(_literal_gram(X_test, X, theta))[clear])
    assert ours.hyperparameters_["theta"] == ours.theta_


def test_width_matters():
    """The literal reference tells widths apart: at half the mean distance it decides otherwise."""
    X, y, X_test = _problem(seed=3)
    ours = MeanWidthSVM().fit(X, y)
    theta = ours.theta_
    other = SVC(kernel="precomputed").fit(_literal_gram(X, X, theta / 2), y)
    assert not np.allclose(ours.model_.decision_function(X_test),
                           other.decision_function(_literal_gram(X_test, X, theta / 2)))


def test_multiclass_and_bad_C():
    X, y, X_test = _problem(classes=3)
    assert set(MeanWidthSVM().fit(X, y).predict(X_test)) <= {0, 1, 2}
    with pytest.raises(ValueError, match="C must be positive"):
        MeanWidthSVM(C=0.0).fit(X, y)


def test_scikit_learn_api():
    check_estimator(MeanWidthSVM())
