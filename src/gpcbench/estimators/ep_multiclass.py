"""Multiclass EP GP classifier in the class-difference formulation of Kim & Ghahramani (2006),
K&G sec. 4.2 (scikit-learn API); import it from :mod:`gpcbench.models`.

A thin layer over the binary EP estimators' fitting logic
(:class:`~gpcbench.estimators.ep.EPGaussianProcessBase`) with the prior of K&G eq. 43 and the
predictions of K&G eqs. 50-54, both in :mod:`gpcbench.inference.ep_multiclass`.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from gpcbench.estimators.base import class_indices, store_parameters
from gpcbench.estimators.ep import EPGaussianProcessBase
from gpcbench.inference.ep import DEFAULT_SCHEDULE
from gpcbench.inference.ep_multiclass import (
    class_probabilities,
    label_eq53,
    label_eq54,
    latent_predictive,
)
from gpcbench.kernels.covariance import COVARIANCE_NAMES
from gpcbench.kernels.multiclass import ClassDifferenceCovariance
from gpcbench.learning.stopping import DEFAULT_GTOL
from gpcbench.likelihoods import NoisyThresholdLikelihood

PREDICTION_RULES = ("probability", "eq54", "eq53")


class MulticlassEPGaussianProcessClassifier(ClassifierMixin, EPGaussianProcessBase):
    """Multiclass GPC with EP and EM-EP in the class-difference formulation (K&G sec. 4.2).

    Parameters
    ----------
    theta0, theta1, theta2, inverse_lengthscale, ard, epsilon, learn_hyperparameters,
    discrete_features, ep_schedule, optimizer, max_iter, tol
        As for :class:`gpcbench.models.EPGaussianProcessClassifier`; they describe the base
        covariance c shared by the J latent functions (K&G eq. 43). ``epsilon`` is put on every
        difference site (:mod:`gpcbench.inference.ep_multiclass`).
    prediction_rule : {"probability", "eq54", "eq53"}, default="probability"
        The label ``predict`` returns: the most probable class under K&G eq. 50, or K&G's
        rule of K&G eq. 54 (used for its K&G Table 7) or of K&G eqs. 52-53.
    random_state : int, Generator or None, default=None
        Seeds the quasi-random Genz integration of the class probabilities (J > 2).

    Attributes
    ----------
    classes_ : ndarray of shape (J,)
    hyperparameters_, log_evidence_, trace_, converged_, n_iter_, ep_, X_train_,
    n_features_in_
        As for the binary classifier; ``ep_`` holds the n(J-1) difference sites.
    covariance_ : ClassDifferenceCovariance
        K&G eq. 43 over the fitted base covariance (``covariance_.base``).
    """

    _default_learn = COVARIANCE_NAMES

    def __init__(self, theta0=1.0, theta1=1e-4, theta2=1e-3, inverse_lengthscale=0.05,
                 ard=False, epsilon=0.0, learn_hyperparameters=True, discrete_features=None, *,
                 ep_schedule=DEFAULT_SCHEDULE, optimizer="lbfgs", max_iter=200,
                 tol=DEFAULT_GTOL, prediction_rule="probability", random_state=None):
        store_parameters(self, locals())

    def _covariance(self, n_features: int) -> ClassDifferenceCovariance:
        base = super()._covariance(n_features)
        return ClassDifferenceCovariance(base, self._class_index, self.classes_.size)

    def fit(self, X, y):
        """Fit EP on the n(J-1) class differences (and EM-EP when learning)."""
        if self.prediction_rule not in PREDICTION_RULES:
            raise ValueError(f"prediction_rule must be one of {PREDICTION_RULES}, "
                             f"got {self.prediction_rule!r}")
        X, self._class_index = class_indices(self, X, y)
        sites = np.ones(self._class_index.size * (self.classes_.size - 1))
        return self._fit_targets(X, sites, NoisyThresholdLikelihood(self.epsilon))

    def latent_predictive(self, X):
        """Mean (m, J) and covariance (m, J, J) of the latent values at X (K&G eqs. 51-52)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        base = self.covariance_.base
        return latent_predictive(self.ep_, self.covariance_, base(X, self.X_train_), base.diag(X))

    def predict_proba(self, X):
        """Class probabilities of K&G eq. 50 (orthant probabilities, normalised over classes)."""
        mean, cov = self.latent_predictive(X)
        return class_probabilities(mean, cov, self.random_state)

    def predict(self, X):
        """Labels by ``prediction_rule``."""
        if self.prediction_rule == "probability":
            index = np.argmax(self.predict_proba(X), axis=1)
        else:
            mean, _ = self.latent_predictive(X)
            index = (label_eq54 if self.prediction_rule == "eq54" else label_eq53)(mean)
        return self.classes_[index]
