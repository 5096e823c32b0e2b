"""Softmax Laplace GP classifiers (scikit-learn API); import them from :mod:`gpcbench.models`.

* :class:`SoftmaxLaplaceGaussianProcessClassifier`: Williams & Barber (1998), W&B sec. 4 /
  W&B Appendix C, hyperparameters by maximum penalised likelihood (W&B sec. 5.2) or fixed.
* :class:`LaplaceEMGaussianProcessClassifier`: Cho, Kim & Park (2015), Laplace-EM.

Both put one covariance of CKP eq. 13 (Kim & Ghahramani 2006; W&B eq. 4 with theta1 = v1 and a
fixed jitter theta2) on every class (W&B eq. 12, CKP eq. 3), separate per class by default,
and predict by averaging the softmax over ``n_draws`` draws of the Gaussian latent predictive
(W&B sec. 4; CKP eqs. 23-29), seeded by ``random_state``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from gpcbench.estimators.base import (
    Eq13Estimator,
    class_indices,
    document_covariance,
    store_parameters,
)
from gpcbench.inference.laplace_softmax import (
    laplace_mode,
    latent_predictive,
    mc_class_probabilities,
)
from gpcbench.kernels.covariance import Covariance
from gpcbench.kernels.multiclass import SoftmaxCovariance
from gpcbench.learning.laplace_em import laplace_em
from gpcbench.learning.mpl import LearningResult, softmax_mpl

HYPERPARAMETER_LEARNING = ("mpl", "fixed")


class _SoftmaxLaplaceBase(ClassifierMixin, Eq13Estimator):
    """Validation, class coding, fitted attributes and prediction shared by both estimators."""

    def _class_covariances(self, n_features: int, n_classes: int) -> SoftmaxCovariance:
        """K&G eq. 13 on every class (W&B eq. 12), one shared or one per class."""
        base = self._covariance(n_features)
        return SoftmaxCovariance((base,) * (1 if self.shared_hyperparameters else n_classes),
                                 n_classes)

    def fit(self, X, y):
        """Fit the Laplace approximation and, unless fixed, the hyperparameters."""
        X, index = class_indices(self, X, y)
        Y = np.eye(self.classes_.size)[index].T  # one-hot, (C, n)
        result = self._learn(X, Y, self._class_covariances(X.shape[1], self.classes_.size))
        self._set_fitted(X, result.covariance, log_evidence=float(result.laplace.log_evidence),
                         converged=result.converged, trace=result.trace, n_iter=result.n_iter,
                         hyperparameters=[c.to_dict() for c in result.covariance.per_class()])
        self.Y_train_, self.laplace_ = Y, result.laplace
        return self

    def latent_predictive(self, X):
        """Mean (m, C) and covariance (m, C, C) of the latent values at X (CKP eqs. 25-28)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        cov = self.covariance_
        return latent_predictive(self.laplace_, cov.cross(X, self.X_train_), cov.diag(X),
                                 self.Y_train_)

    def predict_proba(self, X):
        """E[softmax(f_*)] by Monte Carlo over ``n_draws`` draws (W&B sec. 4; CKP eq. 29)."""
        mean, cov = self.latent_predictive(X)
        return mc_class_probabilities(mean, cov, self.n_draws, self.random_state)

    def predict(self, X):
        """The class of largest Monte Carlo probability (CKP eq. 29)."""
        index = np.argmax(self.predict_proba(X), axis=1)
        return self.classes_[index]


@document_covariance
class SoftmaxLaplaceGaussianProcessClassifier(_SoftmaxLaplaceBase):
    """Multiclass GPC with the softmax likelihood and Laplace's approximation (W&B 1998).

    Every class has the covariance of K&G eq. 13 (W&B eq. 12): theta0, theta1 and the l_m are
    W&B's v0, v1 and w_l (started at log v0 = 0 and log w_l = -2, W&B sec. 5; W&B eq. 4 has
    one w_l per feature), theta2 is a fixed jitter.

    Parameters
    ----------
    {covariance_parameters}
    hyperparameter_learning : {"mpl", "fixed"}, default="mpl"
        Maximum penalised likelihood with Gaussian priors N(-3, 3^2) on the log
        hyperparameters (W&B sec. 5.2), or keep the starting values.
    shared_hyperparameters : bool, default=False
        One covariance for all classes; False gives each class its own (W&B sec. 4).
    n_draws : int, default=1000
        Monte Carlo draws per prediction (W&B sec. 4).
    random_state : int, RandomState or None, default=None
        Seeds the prediction draws.
    max_iter : int, default=100
        L-BFGS-B iterations of MPL.
    tol : float, default=1e-5
        L-BFGS-B projected-gradient tolerance of MPL.

    Attributes
    ----------
    classes_ : ndarray of shape (C,)
    hyperparameters_ : list of dict
        Fitted theta0, theta1, theta2, inverse_lengthscale of every class (order of
        ``classes_``).
    log_evidence_ : float
        Laplace approximate log q(y | X, theta) at the fitted values (without the prior).
    converged_ : bool
        Optimiser success and convergence of the final Newton run.
    n_iter_ : int
        Laplace fits (evidence evaluations) of MPL; 1 when fixed.
    trace_ : list of dict
        Log posterior and log evidence per L-BFGS-B iteration.
    covariance_ : SoftmaxCovariance
    laplace_ : SoftmaxLaplace
        Mode, block factors and evidence of the final Laplace approximation.
    X_train_, Y_train_, n_features_in_

    Examples
    --------
    >>> import numpy as np
    >>> from gpcbench.models import SoftmaxLaplaceGaussianProcessClassifier
    >>> X = np.array([[0.0], [0.5], [2.0], [2.5], [4.0], [4.5]])
    >>> clf = SoftmaxLaplaceGaussianProcessClassifier(hyperparameter_learning="fixed",
    ...     theta0=10.0, inverse_lengthscale=1.0, random_state=0)
    >>> clf.fit(X, ["a", "a", "b", "b", "c", "c"]).predict([[0.2], [2.2], [4.2]]).tolist()
    ['a', 'b', 'c']
    """

    def __init__(self, theta0=1.0, theta1=0.05, theta2=1e-3, inverse_lengthscale=np.exp(-2.0),
                 ard=False, discrete_features=None, *, hyperparameter_learning="mpl",
                 shared_hyperparameters=False, n_draws=1000, random_state=None, max_iter=100,
                 tol=1e-5):
        store_parameters(self, locals())

    def _learn(self, X, Y, covariance):
        if self.hyperparameter_learning not in HYPERPARAMETER_LEARNING:
            raise ValueError(f"hyperparameter_learning must be one of {HYPERPARAMETER_LEARNING},"
                             f" got {self.hyperparameter_learning!r}")
        if self.hyperparameter_learning == "mpl":
            return softmax_mpl(X, Y, covariance, max_iter=self.max_iter, tol=self.tol)
        state = laplace_mode(covariance(X), Y)
        trace = [{"iteration": 0, "log_evidence": state.log_evidence}]
        return LearningResult(covariance, state, trace, state.converged, 1)


class LaplaceEMGaussianProcessClassifier(_SoftmaxLaplaceBase):
    """Multiclass softmax GPC learned by Laplace-EM (Cho, Kim & Park 2015).

    Parameters
    ----------
    theta0, theta1, theta2, inverse_lengthscale, ard, discrete_features, shared_hyperparameters
        As for :class:`SoftmaxLaplaceGaussianProcessClassifier` (theta0, theta1 and the
        inverse lengthscales are learned; theta2 is a fixed jitter).
    n_draws : int, default=1000
        Monte Carlo draws per prediction (CKP eq. 29).
    max_iter : int, default=100
        EM iterations (M-steps) at most.
    tol : float, default=1e-3
        EM stops at a fixed point: one EM step changes the bound of CKP eq. 19 by less than
        ``tol`` and no covariance entry by more than ``xtol`` times the largest.
    xtol : float, default=1e-3
        See ``tol``.
    accelerate : bool, default=True
        SQUAREM extrapolation of the EM map (same fixed point, several times fewer E-steps);
        False runs CKP's plain EM.
    random_state : int, RandomState or None, default=None
        Seeds the prediction draws.

    Attributes
    ----------
    classes_, hyperparameters_, log_evidence_, covariance_, laplace_, X_train_, Y_train_,
    n_features_in_
        As for :class:`SoftmaxLaplaceGaussianProcessClassifier`.
    converged_ : bool
        EM reached a fixed point (``tol``, ``xtol``) within ``max_iter`` M-steps and the last
        Newton run converged.
    n_iter_ : int
        M-steps performed.
    trace_ : list of dict
        Per E-step: iteration, log_evidence, lower_bound (CKP eq. 19), m_step_gain,
        newton_iterations, step, extrapolated
        (:func:`gpcbench.learning.laplace_em.laplace_em`).
    """

    def __init__(self, theta0=1.0, theta1=0.05, theta2=1e-3, inverse_lengthscale=np.exp(-2.0),
                 ard=False, discrete_features=None, *, shared_hyperparameters=False,
                 n_draws=1000, max_iter=100, tol=1e-3, xtol=1e-3, accelerate=True,
                 random_state=None):
        store_parameters(self, locals())

    def _learn(self, X, Y, covariance):
        return laplace_em(X, Y, covariance, max_iter=self.max_iter, tol=self.tol,
                          xtol=self.xtol, accelerate=self.accelerate)


def softmax_laplace_predict(hyperparameters: list[dict], X_train, y_train, X,
                            discrete_features=None, random_state=None) -> np.ndarray:
    """Classes of ``X`` predicted by the softmax Laplace GP at fixed per-class hyperparameters.

    What :class:`SoftmaxLaplaceGaussianProcessClassifier` does with
    ``hyperparameter_learning="fixed"`` (the Laplace mode at the given covariances, the
    Gaussian latent predictive, the class of largest Monte Carlo softmax probability with its
    default 1000 draws; W&B sec. 4), composed from :mod:`gpcbench.inference.laplace_softmax`
    because the estimators take one set of hyperparameters for all classes, while Laplace-EM
    and MPL record one per class (``hyperparameters_``, one dict per class in class order).
    """
    classes, index = np.unique(y_train, return_inverse=True)
    if len(hyperparameters) != classes.size:
        raise ValueError(f"{len(hyperparameters)} sets of hyperparameters for "
                         f"{classes.size} classes")
    Y = np.eye(classes.size)[index].T
    covariance = SoftmaxCovariance(tuple(Covariance(**h, discrete_features=discrete_features)
                                         for h in hyperparameters), classes.size)
    state = laplace_mode(covariance(X_train), Y)
    mean, cov = latent_predictive(state, covariance.cross(X, X_train), covariance.diag(X), Y)
    return classes[np.argmax(mc_class_probabilities(mean, cov, random_state=random_state),
                             axis=1)]
