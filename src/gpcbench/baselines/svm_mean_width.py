"""The conventional SVM of Zhang, Dai & Jordan (2011) (ZDJ) Table 10: a soft-margin SVM with ZDJ
sec. 5.1's kernel, exp(-||x - x'||^2 / theta^2) with theta the mean Euclidean distance between
the training points, no search.

ZDJ sec. 5.1: "All of the methods that we implement are based on a Gaussian RBF kernel with a
single width parameter ... [outside sec. 5.3] the value of theta is set to the mean Euclidean
distance between training data points"; Table 10's SVM is one of theirs (Table 13's is cited
from Zhu & Hastie 2005). The paper names no C; ours is LIBSVM's default, C = 1 (the table's
notes give the readings measured).
"""

from __future__ import annotations

import math

from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from gpcbench.baselines.svm import DAGSVC
from gpcbench.kernels.rbf import mean_distance


def zdj_log10_l(theta: float) -> float:
    """log10 l of :class:`DAGSVC`'s exp(-l/2 d^2) equal to ZDJ's exp(-d^2 / theta^2): l = 2 / theta^2."""
    return math.log10(2.0 / theta ** 2)


class MeanWidthSVM(ClassifierMixin, BaseEstimator):
    """Soft-margin SVM, ZDJ's kernel at theta = the training rows' mean distance.

    Parameters
    ----------
    C : float, default=1.0
        Penalty on the slack variables (LIBSVM's default).

    Attributes
    ----------
    theta_ : float
        The kernel width, :func:`gpcbench.kernels.rbf.mean_distance` of the training rows.
    model_ : DAGSVC
        The fitted SVC (pairwise, with the decision DAG for more than two classes).
    classes_ : ndarray
    hyperparameters_ : dict
        ``{"log10_C": .., "log10_l": .., "theta": ..}`` as recorded in the fold result.
    """

    def __init__(self, C=1.0):
        self.C = C

    def fit(self, X, y):
        X, y = validate_data(self, X, y)
        if not self.C > 0:
            raise ValueError(f"C must be positive, got {self.C!r}")
        self.theta_ = mean_distance(X)
        log10_l = zdj_log10_l(self.theta_)
        self.model_ = DAGSVC(C=self.C, log10_l=log10_l).fit(X, y)
        self.classes_ = self.model_.classes_
        self.hyperparameters_ = {"log10_C": math.log10(self.C), "log10_l": log10_l,
                                 "theta": self.theta_}
        return self

    def predict(self, X):
        check_is_fitted(self, "model_")
        return self.model_.predict(validate_data(self, X, reset=False))
