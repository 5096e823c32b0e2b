"""1-NN and k-NN with k chosen by 5-fold cross-validation (K&G footnote 17)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier, NearestNeighbors
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
        self.classes_, codes = np.unique(y, return_inverse=True)
        n_min_train = len(y) - int(np.ceil(len(y) / self.cv_folds))
        grid = np.array(sorted(int(k) for k in self.k_grid if k <= n_min_train))
        accuracy = self._cv_accuracy(X, codes, grid)
        self.best_k_ = int(grid[np.argmax(accuracy)])  # ties: the smallest k
        self.knn_ = KNeighborsClassifier(n_neighbors=self.best_k_, n_jobs=self.n_jobs).fit(X, y)
        self.hyperparameters_ = {"k": self.best_k_}
        self.cv_results_ = {"k": grid.tolist(), "mean_accuracy": accuracy.tolist()}
        return self

    def _cv_accuracy(self, X, codes, grid):
        """Mean CV accuracy of every k in ``grid``: one neighbour search per CV fold (for the
        largest k), then majority votes over the first k neighbours for every k at once
        (ties go to the smallest class, as in KNeighborsClassifier)."""
        cv = StratifiedKFold(self.cv_folds, shuffle=True, random_state=self.random_state)
        n_classes = len(self.classes_)
        scores = np.zeros((self.cv_folds, grid.size))
        for fold, (train, test) in enumerate(cv.split(X, codes)):
            search = NearestNeighbors(n_neighbors=int(grid[-1]), n_jobs=self.n_jobs).fit(X[train])
            neighbours = search.kneighbors(X[test], return_distance=False)
            onehot = np.eye(n_classes)[codes[train][neighbours]]       # test x k_max x J
            votes = np.cumsum(onehot, axis=1)[:, grid - 1, :]            # test x |grid| x J
            scores[fold] = np.mean(votes.argmax(axis=2) == codes[test][:, None], axis=0)
        return scores.mean(axis=0)

    def predict(self, X):
        check_is_fitted(self, "knn_")
        return self.knn_.predict(validate_data(self, X, reset=False))

    def predict_proba(self, X):
        check_is_fitted(self, "knn_")
        return self.knn_.predict_proba(validate_data(self, X, reset=False))


def make_one_nn() -> KNeighborsClassifier:
    return KNeighborsClassifier(n_neighbors=1)
