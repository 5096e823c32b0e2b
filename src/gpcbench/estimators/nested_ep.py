"""Multiclass GP classifier with the multinomial probit likelihood and nested EP (Riihimäki,
Jylänki & Vehtari 2013, RJV), scikit-learn API; import it from :mod:`gpcbench.models`.

A thin layer over :mod:`gpcbench.inference.nested_ep` (outer EP, evidence and gradient),
:mod:`gpcbench.inference.multinomial_probit` (inner EP, predictive probabilities) and
:mod:`gpcbench.learning.nested_ep_evidence` (L-BFGS-B on the evidence). Not a method of the
benchmark's papers: it is set beside Kim & Ghahramani's multiclass EP (K&G sec. 4), which
approximates the same model (K&G's eq. 43 prior with latent noise theta2 and epsilon = 0 is the
multinomial probit with covariance (theta0 E + theta1) / theta2) at (J - 1)^3 times a binary
EP's cost per sweep, where nested EP pays about J times.
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
from gpcbench.inference.ep_multiclass import class_probabilities
from gpcbench.inference.multinomial_probit import inner_ep_class_probabilities
from gpcbench.inference.nested_ep import DEFAULT_DAMPING, nested_ep
from gpcbench.kernels.multiclass import SoftmaxCovariance
from gpcbench.learning.nested_ep_evidence import hyperparameters, maximize_nested_evidence
from gpcbench.learning.stopping import DEFAULT_GTOL
from gpcbench.monitor import warn_at_cap

PREDICTIVES = ("inner-ep", "orthant")


@document_covariance
class NestedEPMulticlassClassifier(ClassifierMixin, Eq13Estimator):
    """Multiclass GPC: multinomial probit likelihood, nested EP, evidence-maximising
    hyperparameters (Riihimäki, Jylänki & Vehtari 2013).

    Every class has a latent function with the covariance of K&G eq. 13 (theta2 a fixed
    jitter; the likelihood's unit-variance noise sets the scale of the latent values),
    p(y = c | f) = integral N(u | 0, 1) prod_{j != c} Phi(u + f_c - f_j) du.

    Parameters
    ----------
    {covariance_parameters}
    learn_hyperparameters : bool, default=True
        Maximise the nested-EP log marginal likelihood over theta0, theta1 and the inverse
        lengthscales by L-BFGS-B with its exact gradient; False keeps the given values.
    shared_hyperparameters : bool, default=False
        One covariance for all classes; False gives each class its own, as the softmax models.
    damping : float in (0, 1], default=0.5
        Damping of the outer EP's parallel updates.
    max_sweeps : int, default=200
        Outer EP sweeps at most (a run at fixed hyperparameters stopping there warns).
    ep_tol : float, default=1e-4
        Outer EP convergence: change of log Z relative to max(1, |log Z|) (the moment gap
        must also be below 1e-3).
    predictive : {"inner-ep", "orthant"}, default="inner-ep"
        Class probabilities from the latent predictive N(mu*, Sigma*): the inner-EP normaliser
        of every class, normalised (the paper's), or the exact
        (J-1)-dimensional Gaussian orthant probabilities of f* + noise by Genz's method
        (:func:`~gpcbench.inference.ep_multiclass.orthant_probabilities`).
    max_iter : int, default=200
        L-BFGS-B iterations at most; stopping there warns (ConvergenceWarning) and leaves
        ``converged_`` False.
    tol : float, default=1e-2
        Converged when the projected max |d log Z / d log theta| is below ``tol`` (or log Z
        and the hyperparameters stopped moving; :mod:`gpcbench.learning.stopping`).
    random_state : int, Generator or None, default=None
        Seeds the quasi-random Genz integration (``predictive="orthant"``).

    Attributes
    ----------
    classes_ : ndarray of shape (J,)
    hyperparameters_ : list of dict
        Fitted theta0, theta1, theta2, inverse_lengthscale of every class (order of
        ``classes_``).
    log_evidence_ : float
        Nested-EP log Z at the fitted values; alias
        ``log_marginal_likelihood_value_``.
    converged_ : bool
        L-BFGS-B met its stopping rule and the final nested EP its tolerances.
    n_iter_ : int
        Entries of ``trace_``: the start and one per L-BFGS-B iteration (1 without learning).
    trace_ : list of dict
        One entry per L-BFGS-B iterate (:func:`~gpcbench.learning.nested_ep_evidence
        .maximize_nested_evidence`), or the single nested EP run.
    covariance_ : SoftmaxCovariance
    ep_ : NestedEPResult
    X_train_, n_features_in_

    Examples
    --------
    >>> import numpy as np
    >>> from gpcbench.models import NestedEPMulticlassClassifier
    >>> X = np.array([[0.0], [0.5], [2.0], [2.5], [4.0], [4.5]])
    >>> clf = NestedEPMulticlassClassifier(learn_hyperparameters=False, theta0=10.0,
    ...                                    inverse_lengthscale=1.0)
    >>> clf.fit(X, ["a", "a", "b", "b", "c", "c"]).predict([[0.2], [2.2], [4.2]]).tolist()
    ['a', 'b', 'c']
    """

    def __init__(self, theta0=1.0, theta1=0.05, theta2=1e-3, inverse_lengthscale=np.exp(-2.0),
                 ard=False, discrete_features=None, *, learn_hyperparameters=True,
                 shared_hyperparameters=False, damping=DEFAULT_DAMPING, max_sweeps=200,
                 ep_tol=1e-4, predictive="inner-ep", max_iter=200, tol=DEFAULT_GTOL,
                 random_state=None):
        store_parameters(self, locals())

    def fit(self, X, y):
        """Nested EP (and the hyperparameters when learning) on labels y."""
        if self.predictive not in PREDICTIVES:
            raise ValueError(f"predictive must be one of {PREDICTIVES}, got {self.predictive!r}")
        X, labels = class_indices(self, X, y)
        J = self.classes_.size
        base = self._covariance(X.shape[1])
        covariance = SoftmaxCovariance((base,) * (1 if self.shared_hyperparameters else J), J)
        options = {"damping": self.damping, "max_sweeps": self.max_sweeps, "tol": self.ep_tol}
        label = type(self).__name__
        if self.learn_hyperparameters:
            learned = maximize_nested_evidence(X, labels, covariance, max_iter=self.max_iter,
                                               gtol=self.tol, ep_options=options, label=label)
            covariance, ep, trace = learned.covariance, learned.ep, learned.trace
            converged = learned.converged and ep.converged
        else:
            ep = nested_ep(covariance(X), labels, **options)
            trace = [{"iteration": 0, "log_evidence": ep.log_evidence,
                      "hyperparameters": hyperparameters(covariance), "ep_sweeps": ep.n_sweeps,
                      "ep_converged": ep.converged}]
            converged = ep.converged
            if not ep.converged:
                warn_at_cap(label, "nested EP", ep.n_sweeps, f"damping ended at {ep.damping:g}")
        self._set_fitted(X, covariance, log_evidence=ep.log_evidence, converged=converged,
                         trace=trace, hyperparameters=hyperparameters(covariance))
        self.ep_ = ep
        return self

    def latent_predictive(self, X):
        """Mean (m, J) and covariance (m, J, J) of the latent values at X."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        cov = self.covariance_
        return self.ep_.latent_predictive(cov.cross(X, self.X_train_), cov.diag(X))

    def predict_proba(self, X):
        """Class probabilities by ``predictive`` (rows sum to one)."""
        mean, cov = self.latent_predictive(X)
        if self.predictive == "inner-ep":
            return inner_ep_class_probabilities(mean, cov)
        noisy = cov + np.eye(mean.shape[1])  # f* + e, e ~ N(0, I): the likelihood's noise
        return class_probabilities(mean, noisy, self.random_state)

    def predict(self, X):
        """The most probable class."""
        index = np.argmax(self.predict_proba(X), axis=1)
        return self.classes_[index]
