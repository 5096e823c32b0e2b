"""GPy's binary Gaussian process classifiers (the peer-library rows), called as its users call
them: ``GPy.models.GPClassification`` with an ARD RBF kernel, a probit Bernoulli likelihood,
EP (its default) or Laplace inference, and ``model.optimize()``, GPy's own L-BFGS-B on the
approximate log marginal likelihood from the kernel's default start (variance 1, lengthscales
1). Nothing is caught: an exception or a non-finite probability of GPy's is the fold's
status.
"""

from __future__ import annotations

import GPy
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from gpcbench.estimators.base import store_parameters

INFERENCE = {"ep": GPy.inference.latent_function_inference.EP,
             "laplace": GPy.inference.latent_function_inference.Laplace}


class GPyClassifier(ClassifierMixin, BaseEstimator):
    """scikit-learn wrapper of ``GPy.models.GPClassification`` (binary labels only: GPy has no
    multiclass classifier).

    Parameters
    ----------
    inference : {"ep", "laplace"}
        GPy's latent-function inference (``EP()`` or ``Laplace()``, default settings).
    ard : bool
        One RBF lengthscale per feature.
    optimize : bool
        Run ``model.optimize()``; False keeps the kernel's initial hyperparameters.
    max_iters : int
        ``model.optimize``'s cap on function evaluations (GPy's default 1000).
    variance : float
        Initial RBF variance (GPy's default: 1).
    lengthscale : float or array of shape (n_features,)
        Initial RBF lengthscale(s) (GPy's default: 1).
    random_state : int or None
        Seeds NumPy's global generator before fitting: GPy's EP draws its site-update order
        from it.

    Attributes
    ----------
    classes_ : ndarray
    model_ : GPy.models.GPClassification
    hyperparameters_ : dict
        Fitted ``variance`` and ``lengthscale`` (list).
    log_evidence_ : float
        GPy's approximate log marginal likelihood at the fitted hyperparameters.
    converged_ : bool
        GPy's optimiser reported ``"Converged"`` (True without optimisation).
    n_iter_ : int or None
        Objective evaluations of the optimiser.
    """

    def __init__(self, inference="ep", ard=True, optimize=True, max_iters=1000, variance=1.0,
                 lengthscale=1.0, random_state=None):
        store_parameters(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y):
        """Build GPy's classifier on (X, y) and optimise its hyperparameters."""
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        if self.inference not in INFERENCE:
            raise ValueError(f"inference must be one of {sorted(INFERENCE)}, "
                             f"got {self.inference!r}")
        self.classes_ = np.unique(y)
        if len(self.classes_) != 2:
            raise ValueError("Only binary classification is supported (GPy's GPClassification); "
                             f"got {len(self.classes_)} classes")
        if self.random_state is not None:
            np.random.seed(self.random_state)
        kernel = GPy.kern.RBF(X.shape[1], variance=self.variance, lengthscale=self.lengthscale,
                              ARD=self.ard)
        targets = (y == self.classes_[1]).astype(float)[:, None]
        self.model_ = GPy.models.GPClassification(X, targets, kernel=kernel,
                                                  inference_method=INFERENCE[self.inference]())
        self.converged_, self.n_iter_ = True, None
        if self.optimize:
            run = self.model_.optimize(max_iters=self.max_iters)
            self.converged_, self.n_iter_ = run.status == "Converged", int(run.funct_eval)
        self.log_evidence_ = float(self.model_.log_likelihood())
        self.hyperparameters_ = {
            "variance": float(kernel.variance.values[0]),
            "lengthscale": [float(v) for v in np.atleast_1d(kernel.lengthscale.values)]}
        return self

    def predict_proba(self, X):
        """GPy's predictive probabilities (probit averaged over the latent posterior)."""
        check_is_fitted(self, "model_")
        X = validate_data(self, X, reset=False)
        p1 = self.model_.predict(X)[0][:, 0]
        return np.column_stack([1.0 - p1, p1])

    def predict(self, X):
        """The more probable class."""
        positive = self.predict_proba(X)[:, 1] > 0.5
        return self.classes_[positive.astype(int)]
