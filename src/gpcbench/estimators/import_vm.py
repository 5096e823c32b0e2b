"""The import vector machine of Zhu & Hastie (2005) as a scikit-learn classifier: binary kernel
logistic regression whose basis is a greedily imported subset of the training rows
(:mod:`gpcbench.inference.import_vm`), ZDJ sec. 5.4's "conventional IVM" of Table 13.

Kernel: ZDJ's, K(x, x') = exp(-|x - x'|^2 / theta^2) with one width, the mean Euclidean distance
between training points (ZDJ sec. 5.1) unless given, plus an optional constant sigma_b^2
(``bias_variance``, the 'bias' kernel component of :class:`~gpcbench.estimators.ivm.IVMClassifier`):
f is the kernel expansion alone, as in Z&H's KLR objective, and sigma_b^2 > 0 gives it an
offset b = sigma_b^2 sum_j a_j, penalised by (lambda / 2) b^2 / sigma_b^2. Without it f falls
to 0 (p = 1/2) away from the import vectors.

Regularisation: the objective is n [mean_i -log sigma(y_i f_i) + (lambda / 2) a^T K_SS a]
(``lambda`` the penalty of the averaged loss, so that one value means the same balance on
the tuning subset and on all rows). lambda is chosen as Z&H describe: the training rows are
split at random (stratified, ``tuning_fraction`` of them held out) into a fitting and a tuning
set; for a decreasing sequence of lambdas the greedy selection runs on the fitting set, each
lambda starting from the previous one's import set, and the lambda with the fewest tuning
errors (the largest among ties) is kept. The classifier is then refitted with that lambda on
all training rows, from an empty import set. A single value in ``lambdas`` skips the tuning.

Prediction: p(y = classes_[1] | x) = sigma(sum_{j in S} a_j K(x, x_j)).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import train_test_split
from sklearn.utils.validation import check_is_fitted, validate_data

from gpcbench.estimators.base import BinaryOnly, binary_signs, store_parameters
from gpcbench.inference.import_vm import select_imports
from gpcbench.kernels.rbf import mean_distance, rbf_with_bias

#: Default lambdas (of the averaged loss), decreasing: 10^-1, 10^-1.5, ..., 10^-6.
DEFAULT_LAMBDAS = tuple(10.0 ** (-k / 2) for k in range(2, 13))


class ImportVectorMachine(BinaryOnly, ClassifierMixin, BaseEstimator):
    """Zhu & Hastie's import vector machine (binary): greedy kernel logistic regression.

    Parameters
    ----------
    kernel_width : 'mean_distance' or float, default='mean_distance'
        theta of the ZDJ kernel exp(-|x - x'|^2 / theta^2).
    bias_variance : float, default=0.0
        sigma_b^2 added to every kernel value (0: Z&H's kernel expansion without offset).
    lambdas : sequence of float or None, default=None
        Candidate penalties of the averaged loss, tried in decreasing order (None:
        :data:`DEFAULT_LAMBDAS`); one value is used as given, without a tuning split.
    tuning_fraction : float, default=0.2
        Share of the training rows held out to choose lambda.
    epsilon : float, default=0.001
        Z&H's stopping rule: stop importing when |H_k - H_{k - delta_k}| / |H_k| < epsilon
        (0 imports every row, up to ``max_imports``).
    delta_k : int, default=1
        The lag of the stopping rule.
    max_imports : int or None, default=None
        Cap on the number of import vectors (None: no cap).
    random_state : int, RandomState or None
        Draws the tuning split.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    import_indices_ : ndarray of shape (q,)
        Training rows imported, in order of import.
    X_import_ : ndarray of shape (q, n_features)
    coef_ : ndarray of shape (q,)
        The kernel expansion's coefficients a.
    lambda_ : float
        The chosen penalty of the averaged loss.
    lambdas_ : ndarray
        The penalties tried, decreasing; ``tuning_errors_`` their tuning misclassification
        rates (empty without a tuning split).
    objectives_ : ndarray
        H_k of the final fit after each import (H_0 = n log 2, the empty model).
    stopped_by_rule_ : bool
        Whether the final fit stopped by the epsilon rule (not the cap or the data's end).
    kernel_width_ : float
    hyperparameters_ : dict
    converged_ : bool
        Whether the final submodel's Newton iteration converged.
    """

    def __init__(self, kernel_width="mean_distance", bias_variance=0.0, lambdas=None,
                 tuning_fraction=0.2,
                 epsilon=1e-3, delta_k=1, max_imports=None, random_state=None):
        store_parameters(self, locals())

    def _validated_lambdas(self) -> np.ndarray:
        width = self.kernel_width
        if not (width == "mean_distance" or (isinstance(width, Real) and width > 0)):
            raise ValueError("kernel_width must be 'mean_distance' or a positive number")
        if not (isinstance(self.bias_variance, Real) and self.bias_variance >= 0):
            raise ValueError("bias_variance must be a number >= 0")
        if not (isinstance(self.tuning_fraction, Real) and 0 < self.tuning_fraction < 1):
            raise ValueError("tuning_fraction must be a number in (0, 1)")
        if not (isinstance(self.epsilon, Real) and self.epsilon >= 0):
            raise ValueError("epsilon must be a number >= 0")
        if not (isinstance(self.delta_k, Integral) and self.delta_k >= 1):
            raise ValueError("delta_k must be an integer >= 1")
        if self.max_imports is not None and not (isinstance(self.max_imports, Integral)
                                                 and self.max_imports >= 1):
            raise ValueError("max_imports must be None or an integer >= 1")
        lambdas = np.asarray(DEFAULT_LAMBDAS if self.lambdas is None else self.lambdas,
                             dtype=float).ravel()
        if lambdas.size == 0 or not np.all(np.isfinite(lambdas) & (lambdas > 0)):
            raise ValueError("lambdas must be one or more positive numbers")
        return np.sort(lambdas)[::-1]

    def _select(self, K, signs, lam, initial=()):
        return select_imports(K, signs, lam * len(signs), epsilon=self.epsilon,
                              delta_k=self.delta_k, max_imports=self.max_imports,
                              initial=initial)

    def fit(self, X, y):
        """Choose lambda on a tuning split (if several are given), then import vectors greedily
        on all training rows with it."""
        lambdas = self._validated_lambdas()
        X, signs = binary_signs(self, X, y)
        X = np.ascontiguousarray(X, dtype=float)
        self.kernel_width_ = (mean_distance(X) if self.kernel_width == "mean_distance"
                              else float(self.kernel_width))
        K = self._kernel(X, X)
        self.lambdas_ = lambdas
        self.tuning_errors_ = self._tune(K, signs, lambdas) if lambdas.size > 1 else np.array([])
        self.lambda_ = float(lambdas[int(np.argmin(self.tuning_errors_))]
                             if lambdas.size > 1 else lambdas[0])
        path = self._select(K, signs, self.lambda_)
        model = path.submodel
        self.import_indices_, self.coef_ = model.indices, model.a
        self.X_import_ = X[model.indices]
        self.objectives_, self.stopped_by_rule_ = path.objectives, path.stopped_by_rule
        self.converged_ = model.converged
        self.hyperparameters_ = {"kernel_width": self.kernel_width_,
                                 "bias_variance": float(self.bias_variance),
                                 "lambda": self.lambda_, "n_imports": int(model.indices.size)}
        return self

    def _tune(self, K, signs, lambdas) -> np.ndarray:
        """Tuning misclassification rate of each lambda along the decreasing path."""
        rows = np.arange(len(signs))
        stratify = signs if np.min(np.unique(signs, return_counts=True)[1]) >= 2 else None
        fitting, tuning = train_test_split(rows, test_size=self.tuning_fraction,
                                           random_state=self.random_state, stratify=stratify)
        K_fit = K[np.ix_(fitting, fitting)]
        errors, imported = [], np.array([], dtype=int)
        for lam in lambdas:
            model = self._select(K_fit, signs[fitting], lam, initial=imported).submodel
            imported = model.indices
            latent = K[np.ix_(tuning, fitting[imported])] @ model.a
            errors.append(np.mean(np.where(latent > 0, 1.0, -1.0) != signs[tuning]))
        return np.array(errors)

    def decision_function(self, X):
        """The latent f(x) = sum_{j in S} a_j K(x, x_j) (positive: ``classes_[1]``)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self._kernel(np.ascontiguousarray(X, dtype=float), self.X_import_) @ self.coef_

    def _kernel(self, A, B):
        return rbf_with_bias(A, B, self.kernel_width_, self.bias_variance)

    def predict_proba(self, X):
        """Columns p(classes_[0] | x), p(classes_[1] | x) = 1 - sigma(f), sigma(f)."""
        p = expit(self.decision_function(X))
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        return self.classes_[(self.decision_function(X) > 0).astype(int)]
