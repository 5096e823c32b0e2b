"""Predictions of a binary probit GP classifier from its latent predictive N(mean, variance).

:class:`ProbitPredictions` is the output layer shared by the sparse-GP (SGP+FIC) and IVM
estimators: a subclass implements ``_latent(X) -> (mean, variance)`` and inherits
``decision_function``, ``predict_proba`` (p(y* = +1) = Phi(mean / sqrt(1 + variance)), the
exact probit predictive integral) and ``predict``.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from gpcbench.likelihoods import ProbitLikelihood


class ProbitPredictions:
    """Mixin: probit predictions from ``self._latent(X)``; ``classes_[1]`` is y = +1."""

    def decision_function(self, X):
        """mean / sqrt(1 + variance): positive means ``classes_[1]``."""
        mean, variance = self._latent(X)
        return mean / np.sqrt(1.0 + variance)

    def predict_proba(self, X):
        """p(y* | x*) = Phi(+-mean / sqrt(1 + variance)), columns in ``classes_`` order."""
        mean, variance = self._latent(X)
        likelihood = ProbitLikelihood()
        return np.column_stack([likelihood.predictive_probability(-mean, variance),
                                likelihood.predictive_probability(mean, variance)])

    def predict(self, X):
        """The class of larger predictive probability."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]
