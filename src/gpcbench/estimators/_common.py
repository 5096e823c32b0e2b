"""Set-up shared by the GP estimators: label checks and the eq. 13 covariance of their parameters.

* :func:`binary_signs`: validate (X, y) of a binary classifier, set ``classes_`` and code the
  labels as y in {-1, +1} (``classes_[1]`` is +1), as every binary model of the papers does.
* :func:`class_indices`: the same for J >= 2 classes, labels coded 0..J-1 in ``classes_`` order.
* :func:`eq13_covariance`: the prior covariance of Kim & Ghahramani (2006), eq. 13, from an
  estimator's ``theta0``, ``theta1``, ``theta2``, ``inverse_lengthscale``, ``ard`` and
  ``discrete_features`` (every GP estimator but the Zhang et al. samplers uses it).
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import validate_data

from gpcbench.covariance import Covariance


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


def eq13_covariance(estimator, n_features: int) -> Covariance:
    """Eq. 13 from the estimator's covariance parameters (one inverse lengthscale per feature
    when ``ard``, else one shared)."""
    scales = np.atleast_1d(np.asarray(estimator.inverse_lengthscale, dtype=float))
    if estimator.ard:
        if scales.size not in (1, n_features):
            raise ValueError(f"{scales.size} inverse lengthscales for {n_features} features")
        scales = np.broadcast_to(scales, (n_features,))
    elif scales.size != 1:
        raise ValueError("inverse_lengthscale must be a scalar when ard=False")
    return Covariance(estimator.theta0, estimator.theta1, estimator.theta2, scales,
                      estimator.discrete_features)
