"""SVM-CV(soft) whose (C, l) search runs on a random subset of the training rows.

K&G's two-level 5-fold grid search (:class:`gpcbench.baselines.svm.TwoLevelGridSVM`) trains
650 SVCs on four fifths of the training rows. SVC's cost grows as n^2-n^3, so on Zhang, Dai &
Jordan's Adult2 (n = 20,000) the search would take hours a partition (one SVC fit on 16,000 of
its rows takes 20-35 CPU-s). Here the search runs on ``search_rows`` rows drawn at random
without replacement from the fold's seed (6,000 by default: Adult1's training size, where the
full search cost 6-10 CPU-min refitting SVC from the raw inputs at every grid point, and costs
about a quarter of that reusing each width's Gram matrix: 831 against 197 CPU-s on Adult1's
partition 0 on one host, the two forms of benchmarks/bench_svm_search.py), and the SVC with
the chosen (C, l) is then fitted to every training row, its kernel cache holding the whole
problem (1.5 GB at 20,000 rows; :func:`gpcbench.baselines.svm.kernel_cache_mb`). With
``search_rows >= n`` this is :class:`TwoLevelGridSVM` itself.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, check_X_y

from gpcbench.baselines.svm import DAGSVC, TwoLevelGridSVM


class SubsetSearchSVM(ClassifierMixin, BaseEstimator):
    """Soft-margin Gaussian-kernel SVM, (C, l) by K&G's two-level search on a random subset.

    Parameters
    ----------
    search_rows : int
        Training rows the grid search sees (all of them when ``n <= search_rows``).
    cv_folds : int
    random_state : int or None
        Seeds the subset and the CV fold shuffling.
    n_jobs : int
        joblib workers for the grid search.

    Attributes
    ----------
    search_ : TwoLevelGridSVM
        The search, fitted to the subset.
    search_rows_ : ndarray of int
        Indices of the rows the search saw, sorted.
    model_ : DAGSVC
        The SVC with the chosen (C, l), fitted to every training row.
    hyperparameters_ : dict
        ``{"log10_C": .., "log10_l": ..}`` as recorded in the fold result.
    cv_fits_ : int
        Number of SVMs trained during the search.
    """

    def __init__(self, search_rows=6000, cv_folds=5, random_state=None, n_jobs=1):
        self.search_rows = search_rows
        self.cv_folds = cv_folds
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y):
        X, y = check_X_y(X, y)
        n = len(y)
        rows = np.arange(n)
        if n > self.search_rows:
            rng = np.random.default_rng(self.random_state)
            rows = np.sort(rng.choice(n, self.search_rows, replace=False))
        self.search_rows_ = rows
        self.search_ = TwoLevelGridSVM(search="C,l", cv_folds=self.cv_folds,
                                       random_state=self.random_state,
                                       n_jobs=self.n_jobs).fit(X[rows], y[rows])
        self.cv_fits_ = self.search_.cv_fits_
        self.hyperparameters_ = self.search_.hyperparameters_
        if rows.size == n:
            self.model_ = self.search_.model_
        else:
            self.model_ = DAGSVC(**self.search_.best_params_).fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict(self, X):
        check_is_fitted(self, "model_")
        return self.model_.predict(X)
