"""1-NN and k-NN with k chosen by 5-fold cross-validation (Kim & Ghahramani, footnote 17)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.utils.validation import check_is_fitted, validate_data


class CrossValidatedKNN(ClassifierMixin, BaseEstimator):
    """k-nearest-neighbour classifier whose k is chosen by stratified K-fold CV on the
    training data only.

    Parameters
    ----------
    k_grid : sequence of int
        Candidate numbers of neighbours; values above the size of the smallest CV training
        fold are dropped.
    cv_folds : int
        Number of cross-validation folds.
    random_state : int or None
        Seeds the shuffling of the CV folds.
    n_jobs : int
        Parallel CV fits (joblib).

    Attributes
    ----------
    classes_ : ndarray
        Class labels.
    best_k_ : int
        The chosen number of neighbours.
    hyperparameters_ : dict
        ``{"k": best_k_}``, recorded in the fold result.
    cv_results_ : dict
        Mean CV accuracy per k.
    """

    def __init__(self, k_grid=tuple(range(1, 31)), cv_folds=5, random_state=None, n_jobs=1):
        self.k_grid = k_grid
        self.cv_folds = cv_folds
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y):
        X, y = validate_data(self, X, y)
        n_min_train = len(y) - int(np.ceil(len(y) / self.cv_folds))
        grid = [int(k) for k in self.k_grid if k <= n_min_train]
        cv = StratifiedKFold(self.cv_folds, shuffle=True, random_state=self.random_state)
        search = GridSearchCV(KNeighborsClassifier(), {"n_neighbors": grid}, cv=cv,
                              n_jobs=self.n_jobs, error_score="raise")
        search.fit(X, y)
        self.knn_ = search.best_estimator_
        self.classes_ = self.knn_.classes_
        self.best_k_ = int(search.best_params_["n_neighbors"])
        self.hyperparameters_ = {"k": self.best_k_}
        self.cv_results_ = {"k": grid, "mean_accuracy": search.cv_results_["mean_test_score"].tolist()}
        return self

    def predict(self, X):
        check_is_fitted(self, "knn_")
        return self.knn_.predict(validate_data(self, X, reset=False))

    def predict_proba(self, X):
        check_is_fitted(self, "knn_")
        return self.knn_.predict_proba(validate_data(self, X, reset=False))


def make_one_nn() -> KNeighborsClassifier:
    return KNeighborsClassifier(n_neighbors=1)
