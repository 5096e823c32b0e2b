"""SVM baselines of Kim & Ghahramani (2006), K&G sec. 3.5.2, K&G footnotes 13-16, and K&G sec. 4.3.

* SVM-CV(soft): Gaussian kernel ``exp(-l/2 ||x - x'||^2)`` (one lengthscale, no theta0..theta2),
  (C, l) chosen by 5-fold CV with K&G's two-level grid: coarse log10 C in {0, 0.5, .., 3}
  and log10 l in {-3, -2.5, .., 0}, then +-0.4 in steps of 0.1 around the best coarse values.
* SVM-CV(hard): the same kernel with the hard margin, l by the same two-level search. The hard
  margin is realised as C = 1e6: with a Gaussian kernel the Gram matrix is positive definite,
  so the training data are always separable and a finite C this large never binds.
* SVM-EP(s,soft): a precomputed kernel (the GPC-EP(s,soft) covariance without theta2, see
  gpcbench.experiments.methods.svm); C by the same two-level search.
* Multiclass: DAGSVM (Platt, Cristianini & Shawe-Taylor 2000) over scikit-learn's pairwise
  (one-vs-one) SVCs.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC
from sklearn.utils.validation import check_is_fitted

COARSE_LOG10_C = np.arange(0.0, 3.0 + 1e-9, 0.5)      # K&G footnote 14
COARSE_LOG10_L = np.arange(-3.0, 0.0 + 1e-9, 0.5)     # K&G footnote 15
FINE_OFFSETS = np.round(np.arange(-0.4, 0.4 + 1e-9, 0.1), 1)
HARD_MARGIN_C = 1e6


def fine_grid(best_log10: float) -> np.ndarray:
    """log10 values -0.4, -0.3, .., +0.4 around the best coarse value (K&G footnotes 14-15)."""
    return np.round(best_log10 + FINE_OFFSETS, 10)


class DAGSVC(ClassifierMixin, BaseEstimator):
    """C-SVM whose multiclass decision is the decision DAG over the pairwise classifiers.

    Parameters
    ----------
    C : float
        Penalty on the slack variables.
    log10_l : float or None
        log10 of the inverse squared lengthscale of ``exp(-l/2 ||x - x'||^2)``;
        None means ``X`` is a precomputed kernel matrix.

    Attributes
    ----------
    classes_ : ndarray
    svc_ : sklearn.svm.SVC
        The fitted pairwise classifiers.
    """

    def __init__(self, C=1.0, log10_l=0.0):
        self.C = C
        self.log10_l = log10_l

    def _svc(self):
        if self.log10_l is None:
            return SVC(C=self.C, kernel="precomputed", decision_function_shape="ovo")
        gamma = 10.0 ** self.log10_l / 2.0  # exp(-l/2 d^2) = exp(-gamma d^2)
        return SVC(C=self.C, kernel="rbf", gamma=gamma, decision_function_shape="ovo")

    def fit(self, X, y):
        self.svc_ = self._svc().fit(X, y)
        self.classes_ = self.svc_.classes_
        return self

    def decision_function(self, X):
        check_is_fitted(self, "svc_")
        return self.svc_.decision_function(X)

    def predict(self, X):
        check_is_fitted(self, "svc_")
        J = len(self.classes_)
        if J == 2:
            return self.svc_.predict(X)
        return self.classes_[dag_decision(self.svc_.decision_function(X), J)]

    @property
    def _pairwise(self):  # scikit-learn < 1.6; newer versions read __sklearn_tags__
        return self.log10_l is None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.log10_l is None
        return tags


def pair_index(i: np.ndarray, j: np.ndarray, J: int) -> np.ndarray:
    """Column of the (i, j), i < j, classifier in scikit-learn's one-vs-one order
    (0,1), (0,2), .., (0,J-1), (1,2), .."""
    return i * J - i * (i + 1) // 2 + (j - i - 1)


def dag_decision(ovo_decision: np.ndarray, J: int) -> np.ndarray:
    """Class index chosen by the DAG: keep the list of candidate classes [lo..hi]-style by
    testing the first remaining class against the last one and discarding the loser,
    J - 1 times (Platt et al. 2000). A positive (i, j) decision votes for class i."""
    n = ovo_decision.shape[0]
    rows = np.arange(n)
    lo, hi = np.zeros(n, dtype=int), np.full(n, J - 1)
    for _ in range(J - 1):
        first_wins = ovo_decision[rows, pair_index(lo, hi, J)] > 0
        hi = np.where(first_wins, hi - 1, hi)
        lo = np.where(first_wins, lo, lo + 1)
    return lo


class TwoLevelGridSVM(ClassifierMixin, BaseEstimator):
    """DAGSVC with C and/or l chosen by K&G's two-level 5-fold grid search.

    Parameters
    ----------
    search : {"C,l", "l", "C"}
        Which parameters are searched: soft margin with Gaussian kernel ("C,l"), hard
        margin ("l", C = 1e6), or a precomputed kernel ("C"; ``X`` is a kernel matrix).
    cv_folds : int
    random_state : int or None
        Seeds the CV fold shuffling.
    n_jobs : int
        joblib workers for the grid search (bounded by the job's threads).

    Attributes
    ----------
    best_params_ : dict
        Chosen ``C`` and ``log10_l``.
    hyperparameters_ : dict
        ``{"log10_C": .., "log10_l": ..}`` as recorded in the fold result.
    cv_fits_ : int
        Number of SVMs trained during the search.
    """

    def __init__(self, search="C,l", cv_folds=5, random_state=None, n_jobs=1):
        self.search = search
        self.cv_folds = cv_folds
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _grids(self, centre=None):
        """Coarse grids (centre None) or fine grids around ``centre`` (log10 values)."""
        grid = {}
        if "C" in self.search:
            grid["C"] = COARSE_LOG10_C if centre is None else fine_grid(centre["C"])
        if "l" in self.search:
            grid["l"] = COARSE_LOG10_L if centre is None else fine_grid(centre["l"])
        return grid

    def _search(self, X, y, log10_grid):
        base = DAGSVC(C=HARD_MARGIN_C, log10_l=None if self.search == "C" else 0.0)
        params = {}
        if "C" in log10_grid:
            params["C"] = list(10.0 ** log10_grid["C"])
        if "l" in log10_grid:
            params["log10_l"] = list(log10_grid["l"])
        cv = StratifiedKFold(self.cv_folds, shuffle=True, random_state=self.random_state)
        search = GridSearchCV(base, params, cv=cv, n_jobs=self.n_jobs, error_score="raise")
        search.fit(X, y)
        best = search.best_params_
        self.cv_fits_ += self.cv_folds * len(search.cv_results_["params"])
        return {"C": np.log10(best["C"]) if "C" in best else None,
                "l": best.get("log10_l")}, search.best_estimator_

    def fit(self, X, y):
        self.cv_fits_ = 0
        coarse, _ = self._search(X, y, self._grids())
        fine, _ = self._search(X, y, self._grids(coarse))
        C = HARD_MARGIN_C if fine["C"] is None else 10.0 ** fine["C"]
        log10_l = None if self.search == "C" else fine["l"]
        self.model_ = clone(DAGSVC(C=C, log10_l=log10_l)).fit(X, y)
        self.classes_ = self.model_.classes_
        self.best_params_ = {"C": C, "log10_l": log10_l}
        self.hyperparameters_ = {"log10_C": float(np.log10(C)),
                                 **({} if log10_l is None else {"log10_l": float(log10_l)})}
        return self

    def predict(self, X):
        check_is_fitted(self, "model_")
        return self.model_.predict(X)


class KernelSVM(ClassifierMixin, BaseEstimator):
    """SVM on a given covariance function (SVM-EP(s,soft)): ``kernel(X, X2)`` gives the kernel
    matrix; C is chosen by K&G's two-level 5-fold search (K&G footnote 14).

    Parameters
    ----------
    kernel : callable
        ``kernel(X, X2) -> ndarray`` of shape (len(X), len(X2)), e.g. a
        :class:`gpcbench.covariance.Covariance` with the hyperparameters learned by
        GPC-EP(s,soft) and theta2 = 0.
    cv_folds, random_state, n_jobs
        As for :class:`TwoLevelGridSVM`.
    """

    def __init__(self, kernel=None, cv_folds=5, random_state=None, n_jobs=1):
        self.kernel = kernel
        self.cv_folds = cv_folds
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y):
        self.X_fit_ = np.asarray(X, dtype=float)
        self.search_ = TwoLevelGridSVM(search="C", cv_folds=self.cv_folds,
                                       random_state=self.random_state, n_jobs=self.n_jobs)
        self.search_.fit(self.kernel(self.X_fit_, self.X_fit_), y)
        self.classes_ = self.search_.classes_
        self.hyperparameters_ = self.search_.hyperparameters_
        return self

    def predict(self, X):
        check_is_fitted(self, "search_")
        return self.search_.predict(self.kernel(np.asarray(X, dtype=float), self.X_fit_))
