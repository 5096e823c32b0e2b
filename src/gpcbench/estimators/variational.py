"""Variational-bound GP classifier (scikit-learn API): Gibbs & MacKay (2000), the GPC-VL(m,soft)
and GPC-VU(m,soft) rows of Kim & Ghahramani (2006). Import it from :mod:`gpcbench.models`.

Numerics live in :mod:`gpcbench.inference.variational` (bounds, variational parameters,
predictive integral) and :mod:`gpcbench.learning.variational` (hyperparameters).
"""

from __future__ import annotations

import numpy as np
from scipy import special
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from gpcbench.estimators.base import (
    BinaryOnly,
    Eq13Estimator,
    binary_signs,
    document_covariance,
    store_parameters,
)
from gpcbench.inference.variational import (
    BOUNDS,
    logistic_gaussian_expectation,
    optimize_bound,
)
from gpcbench.learning.variational import LEARNED, learn_hyperparameters, trace_entry


@document_covariance
class VariationalGaussianProcessClassifier(BinaryOnly, ClassifierMixin, Eq13Estimator):
    """Binary GP classifier with the logistic likelihood and a variational evidence bound.

    The prior covariance is K&G eq. 13 of Kim & Ghahramani (2006) (theta2 = 0 by default: the
    variational models have no latent noise; their ARD weights l_m = 1/sigma_m^2 are the
    inverse lengthscales of K&G eq. 13). ``bound="lower"`` uses the Jaakkola-Jordan lower bound
    (GPC-VL), ``bound="upper"`` the tangent upper bound (GPC-VU); see
    :mod:`gpcbench.inference.variational`. Hyperparameters maximise the lower bound in both
    cases (maximising the upper bound drives theta0 to infinity; see
    :mod:`gpcbench.learning.variational`).

    Parameters
    ----------
    {covariance_parameters}
    bound : {"lower", "upper"}, default="lower"
        The bound that infers the latent values and gives ``log_evidence_``.
    learn_hyperparameters : bool, default=True
        Learn theta0, theta1 and the inverse lengthscales; False keeps the given values.
    max_iter : int, default=100
        L-BFGS-B iterations of hyperparameter learning.
    tol : float, default=1e-8
        Each bound optimisation stops when the bound changes by less than this.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the positive class (y = +1).
    hyperparameters_ : dict
        theta0, theta1, theta2, inverse_lengthscale (float or list).
    log_evidence_ : float
        The optimised bound (lower or upper) on log p(y | X) at ``hyperparameters_``.
    lower_bound_ : float
        The optimised lower bound at ``hyperparameters_`` (equals ``log_evidence_`` for
        ``bound="lower"``).
    trace_ : list of dict
        One entry per L-BFGS-B iteration (entry 0: the start): iteration, lower_bound,
        hyperparameters, bound_iterations, bound_converged. A single entry without learning.
    converged_ : bool
        L-BFGS-B (when learning) and the final bound optimisation met their tolerances.
    n_iter_ : int
        ``len(trace_)``.
    bound_ : BoundResult
        The final bound optimisation (variational parameters, sites, Gaussian over f).
    covariance_ : Covariance
    X_train_ : ndarray of shape (n_samples, n_features)
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from gpcbench.models import VariationalGaussianProcessClassifier
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> clf = VariationalGaussianProcessClassifier(learn_hyperparameters=False).fit(X, [0, 0, 1, 1])
    >>> clf.predict([[0.2], [2.8]]).tolist()
    [0, 1]
    """

    def __init__(self, theta0=1.0, theta1=1e-4, theta2=0.0, inverse_lengthscale=0.05, ard=True,
                 bound="lower", learn_hyperparameters=True, discrete_features=None, *,
                 max_iter=100, tol=1e-8):
        store_parameters(self, locals())

    def fit(self, X, y):
        """Learn the hyperparameters (optional) and optimise the chosen bound on labels y."""
        if self.bound not in BOUNDS:
            raise ValueError(f"bound must be one of {BOUNDS}, got {self.bound!r}")
        X, signs = binary_signs(self, X, y)
        covariance = self._covariance(X.shape[1])
        if self.learn_hyperparameters:
            fit = learn_hyperparameters(X, signs, covariance, learn=LEARNED,
                                        max_iter=self.max_iter, tol=self.tol)
            covariance, lower, trace = fit.covariance, fit.result, fit.trace
            learned_ok = fit.converged
        else:
            lower = optimize_bound("lower", covariance(X), signs, tol=self.tol)
            trace = [trace_entry(0, covariance, lower.value, lower)]
            learned_ok = lower.converged
        result = lower if self.bound == "lower" else optimize_bound(
            "upper", covariance(X), signs, tol=self.tol)
        self._set_fitted(X, covariance, log_evidence=result.value,
                         converged=learned_ok and result.converged, trace=trace)
        self.bound_ = result
        self.lower_bound_ = lower.value
        return self

    def latent(self, X):
        """Mean and variance of the bound's Gaussian predictive over the latent f~ at X."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.bound_.predict(self.covariance_(X, self.X_train_), self.covariance_.diag(X))

    def decision_function(self, X):
        """Log-odds of ``predict_proba``; its sign is that of the latent mean (positive means
        ``classes_[1]``), and it orders points exactly as ``predict_proba[:, 1]`` does."""
        return special.logit(self.predict_proba(X)[:, 1])

    def predict_proba(self, X):
        """E[sigma(f~)] under the bound's Gaussian predictive over f~ (quadrature, ~1e-12)."""
        positive = logistic_gaussian_expectation(*self.latent(X))
        return np.column_stack([1.0 - positive, positive])

    def predict(self, X):
        """The class of larger predictive probability, i.e. sgn(E[f~]) mapped to ``classes_``."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]
