"""1-NN and k-NN with k chosen by 5-fold cross-validation (K&G footnote 17)."""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier, NearestNeighbors
from sklearn.utils.validation import check_is_fitted, validate_data


TIE_BREAKS = ("smallest_class", "nearest_neighbour")


def majority_votes(neighbour_codes: np.ndarray, ks: np.ndarray, n_classes: int,
                   tie_break: str) -> tuple[np.ndarray, np.ndarray]:
    """Majority votes of the first k neighbours for every k in ``ks`` at once.

    ``neighbour_codes`` (test x k_max, nearest first) holds the neighbours' class codes.
    Returns the vote counts (test x |ks| x J) and the predicted codes (test x |ks|): a tie
    goes to the smallest class code (scikit-learn's KNeighborsClassifier) or to the class of
    the nearest neighbour among the tied classes (MATLAB knnclassify's default).
    """
    onehot = np.eye(n_classes)[neighbour_codes]                          # test x k_max x J
    counts = np.cumsum(onehot, axis=1)[:, ks - 1, :]                     # test x |ks| x J
    if tie_break == "smallest_class":
        return counts, counts.argmax(axis=2)
    tied = counts == counts.max(axis=2, keepdims=True)                   # test x |ks| x J
    rows = np.arange(len(neighbour_codes))[:, None, None]
    columns = np.arange(ks.size)[None, :, None]
    in_tie = tied[rows, columns, neighbour_codes[:, None, :]]            # test x |ks| x k_max
    in_tie &= np.arange(neighbour_codes.shape[1]) < ks[:, None]          # the first k only
    first = in_tie.argmax(axis=2)                                        # nearest tied one
    return counts, np.take_along_axis(neighbour_codes, first, axis=1)


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
    tie_break : {"smallest_class", "nearest_neighbour"}, default="smallest_class"
        Who wins a tied vote, in CV and in prediction: the smallest class index (as
        scikit-learn's KNeighborsClassifier) or the class of the nearest neighbour among the
        tied classes (as MATLAB's knnclassify, which K&G's published k-NN errors match).
    random_state : int or None
        Seeds the shuffling of the CV folds.
    n_jobs : int
        Parallel neighbour searches (joblib).

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

    def __init__(self, k_grid=tuple(range(1, 31)), cv_folds=5, tie_break="smallest_class",
                 random_state=None, n_jobs=1):
        self.k_grid = k_grid
        self.cv_folds = cv_folds
        self.tie_break = tie_break
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y):
        if self.tie_break not in TIE_BREAKS:
            raise ValueError(f"tie_break must be one of {TIE_BREAKS}, got {self.tie_break!r}")
        X, y = validate_data(self, X, y)
        self.classes_, self.codes_ = np.unique(y, return_inverse=True)
        n_min_train = len(y) - int(np.ceil(len(y) / self.cv_folds))
        grid = np.array(sorted(int(k) for k in self.k_grid if k <= n_min_train))
        accuracy = self._cv_accuracy(X, self.codes_, grid)
        self.best_k_ = int(grid[np.argmax(accuracy)])  # ties: the smallest k
        self.search_ = NearestNeighbors(n_neighbors=self.best_k_, n_jobs=self.n_jobs).fit(X)
        self.hyperparameters_ = {"k": self.best_k_}
        self.cv_results_ = {"k": grid.tolist(), "mean_accuracy": accuracy.tolist()}
        return self

    def _cv_accuracy(self, X, codes, grid):
        """Mean CV accuracy of every k in ``grid``: one neighbour search per CV fold (for the
        largest k), then :func:`majority_votes` for every k at once."""
        cv = StratifiedKFold(self.cv_folds, shuffle=True, random_state=self.random_state)
        scores = np.zeros((self.cv_folds, grid.size))
        for fold, (train, test) in enumerate(cv.split(X, codes)):
            search = NearestNeighbors(n_neighbors=int(grid[-1]), n_jobs=self.n_jobs).fit(X[train])
            neighbours = search.kneighbors(X[test], return_distance=False)
            _, predicted = majority_votes(codes[train][neighbours], grid, len(self.classes_),
                                          self.tie_break)
            scores[fold] = np.mean(predicted == codes[test][:, None], axis=0)
        return scores.mean(axis=0)

    def _votes(self, X):
        check_is_fitted(self, "search_")
        neighbours = self.search_.kneighbors(validate_data(self, X, reset=False),
                                             return_distance=False)
        return majority_votes(self.codes_[neighbours], np.array([self.best_k_]),
                              len(self.classes_), self.tie_break)

    def predict(self, X):
        _, predicted = self._votes(X)
        return self.classes_[predicted[:, 0]]

    def predict_proba(self, X):
        """The vote fractions (a tie's winner under ``tie_break`` has no larger share)."""
        counts, _ = self._votes(X)
        return counts[:, 0, :] / self.best_k_


def make_one_nn() -> KNeighborsClassifier:
    return KNeighborsClassifier(n_neighbors=1)
