"""Set-up shared by the GP estimators: parameters, label checks and the K&G eq. 13 covariance.

Public, so that the baselines (:mod:`gpcbench.baselines`, a layer above) take their
constructors' :func:`store_parameters` from here too.

* :func:`store_parameters`: the body of every constructor (scikit-learn's rule: ``__init__``
  stores its arguments unchanged, under their own names, so ``get_params`` and ``clone`` work;
  the signatures stay explicit because scikit-learn reads them).
* :func:`binary_signs`: validate (X, y) of a binary classifier, set ``classes_`` and code the
  labels as y in {-1, +1} (``classes_[1]`` is +1), as every binary model of the papers does.
* :func:`class_indices`: the same for J >= 2 classes, labels coded 0..J-1 in ``classes_`` order.
* :class:`Eq13Estimator`: the hyperparameter block of K&G eq. 13 (``theta0``, ``theta1``,
  ``theta2``, ``inverse_lengthscale``, ``ard``, ``discrete_features``; :data:`COVARIANCE_DOC`
  describes them, :func:`document_covariance` puts that text in a docstring) turned into a :class:`~gpcbench.kernels.covariance.Covariance`, the mask of
  ``learned_hyperparameters``, and the fitted attributes every GP estimator sets.
* :class:`BinaryOnly`: the scikit-learn tag of the binary classifiers.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import validate_data

from gpcbench.kernels.covariance import (COVARIANCE_NAMES, Covariance, DegenerateCovarianceWarning,
                                         hyperparameter_mask)

#: The parameter text of the K&G eq. 13 block, for the estimators' docstrings.
COVARIANCE_DOC = """theta0, theta1, theta2 : float
        Signal variance, bias and latent-noise variance of K&G eq. 13 (starting values when
        learned).
    inverse_lengthscale : float or array-like of shape (n_features,)
        The l_m of K&G eq. 13; a scalar is shared by all features unless ``ard`` is True.
    ard : bool
        One inverse lengthscale per feature (the "m" variants).
    discrete_features : array-like of bool or int, default=None
        Mask or indices of discrete features (distance 1 - delta, K&G eq. 14)."""


def document_covariance(cls):
    """Class decorator: ``{covariance_parameters}`` in the docstring becomes
    :data:`COVARIANCE_DOC`."""
    cls.__doc__ = cls.__doc__.replace("{covariance_parameters}", COVARIANCE_DOC)
    return cls


def store_parameters(estimator, arguments: dict) -> None:
    """Set every constructor argument (``locals()`` of ``__init__``) as an attribute."""
    for name, value in arguments.items():
        if name != "self":
            setattr(estimator, name, value)


def binary_signs(estimator, X, y):
    """Validated X and the labels as signs; sets ``estimator.classes_`` (exactly two)."""
    X, y = validate_data(estimator, X, y)
    check_classification_targets(y)
    estimator.classes_ = np.unique(y)
    if estimator.classes_.size != 2:
        raise ValueError(
            "Only binary classification is supported. The type of the target is "
            f"{type_of_target(y)!r} with {estimator.classes_.size} class(es)."
        )
    return X, np.where(y == estimator.classes_[1], 1.0, -1.0)


def class_indices(estimator, X, y):
    """Validated X and the labels as indices into ``estimator.classes_`` (set, >= 2 classes)."""
    X, y = validate_data(estimator, X, y)
    check_classification_targets(y)
    estimator.classes_, index = np.unique(y, return_inverse=True)
    if estimator.classes_.size < 2:
        raise ValueError("Classifier can't train when only one class is present.")
    return X, index


class Eq13Estimator(BaseEstimator):
    """Base of the GP estimators whose prior is K&G eq. 13 (see the module docstring)."""

    def _covariance(self, n_features: int) -> Covariance:
        """K&G eq. 13 from the covariance parameters (one inverse lengthscale per feature when
        ``ard``, else one shared)."""
        scales = np.atleast_1d(np.asarray(self.inverse_lengthscale, dtype=float))
        if self.ard:
            if scales.size not in (1, n_features):
                raise ValueError(f"{scales.size} inverse lengthscales for {n_features} features")
            scales = np.broadcast_to(scales, (n_features,))
        elif scales.size != 1:
            raise ValueError("inverse_lengthscale must be a scalar when ard=False")
        return Covariance(self.theta0, self.theta1, self.theta2, scales, self.discrete_features)

    def _learned_mask(self, n_features: int) -> np.ndarray:
        """Which entries of the covariance's parameters ``learned_hyperparameters`` names."""
        unknown = set(self.learned_hyperparameters) - set(COVARIANCE_NAMES)
        if unknown:
            raise ValueError(f"learned_hyperparameters names unknown ones {sorted(unknown)}")
        return hyperparameter_mask(self._covariance(n_features), self.learned_hyperparameters)

    def _set_fitted(self, X, covariance, *, log_evidence, converged, trace, n_iter=None,
                    hyperparameters=None):
        """The fitted attributes of every GP estimator; ``n_iter`` defaults to ``len(trace)``,
        ``hyperparameters`` to the covariance's ``to_dict()``."""
        if covariance.is_degenerate(X):
            warnings.warn(f"{type(self).__name__}: the fitted covariance is the same for every "
                          f"pair of training inputs (largest |x| {np.max(np.abs(X)):.3g}): the "
                          "inputs' scale is far from the lengthscales, so predictions fall back "
                          "to the prior; standardise the inputs", DegenerateCovarianceWarning,
                          stacklevel=3)
        self.X_train_ = X
        self.covariance_ = covariance
        self.hyperparameters_ = covariance.to_dict() if hyperparameters is None else hyperparameters
        self.log_evidence_ = self.log_marginal_likelihood_value_ = log_evidence
        self.converged_ = bool(converged)
        self.trace_ = trace
        self.n_iter_ = len(trace) if n_iter is None else int(n_iter)


class BinaryOnly:
    """Tags a classifier as binary only (scikit-learn's ``multi_class`` tag)."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags
