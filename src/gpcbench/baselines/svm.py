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

The search computes each width's Gram matrix once, on the rows it is given, and every CV fit at
that width (every C, every fold) indexes it: K[train][:, train] to train, K[val][:, train] to
score, with SVC(kernel="precomputed"). This is the computation of refitting SVC(kernel="rbf")
from the raw inputs at every grid point and fold (the form before, kept as the reference in
tests/test_svm_search.py and benchmarks/bench_svm_search.py) but for the kernel's rounding: the
Gram matrix is scikit-learn's rbf_kernel (|x|^2 + |x'|^2 - 2 x'x' by BLAS), SVC's own kernel the
same expansion summed in a loop when training and sum (x - x')^2 when predicting. That test finds
every validation accuracy, hence every choice (tie-breaking included) and prediction, unchanged.
The chosen (C, l) is refitted from the raw inputs, as before. Every SVC's kernel cache holds its
whole problem (:func:`kernel_cache_mb`).
"""

from __future__ import annotations

import numpy as np
from joblib import Parallel, delayed
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC
from sklearn.utils.validation import check_is_fitted, check_X_y

COARSE_LOG10_C = np.arange(0.0, 3.0 + 1e-9, 0.5)      # K&G footnote 14
COARSE_LOG10_L = np.arange(-3.0, 0.0 + 1e-9, 0.5)     # K&G footnote 15
FINE_OFFSETS = np.round(np.arange(-0.4, 0.4 + 1e-9, 0.1), 1)
HARD_MARGIN_C = 1e6


def fine_grid(best_log10: float) -> np.ndarray:
    """log10 values -0.4, -0.3, .., +0.4 around the best coarse value (K&G footnotes 14-15)."""
    return np.round(best_log10 + FINE_OFFSETS, 10)


def rbf_gamma(log10_l: float) -> float:
    """scikit-learn's ``gamma`` of K&G's kernel, exp(-l/2 d^2) = exp(-gamma d^2), d = ||x - x'||.

    Parameters
    ----------
    log10_l : float
        log10 of the inverse squared lengthscale l.

    Returns
    -------
    float
        gamma = l / 2.
    """
    return 10.0 ** log10_l / 2.0


def kernel_cache_mb(n: int) -> float:
    """Kernel cache (MB) that holds every column of an SVC problem of ``n`` rows.

    scikit-learn's LIBSVM (svm.cpp, class Cache) keeps columns of Q_ij = y_i y_j K(x_i, x_j) as
    4-byte floats, plus a 32-byte header a row, and recomputes an evicted column when the solver
    needs it again; scikit-learn's default cache, 200 MB, is under the n^2 floats of n > 7,200
    rows. The cache is allocated column by column as the solver asks, so a small problem uses
    little of it; the size does not change the solution. At n = 20,000 (ZDJ's Adult2, the
    largest problem a configured SVM fits) it is 1.5 GB, under one n x n float64 matrix, of
    which a fold job's memory request holds two (workflow/rules/resources.smk).

    Parameters
    ----------
    n : int
        Training rows of the SVC (for a multiclass SVC, the largest pairwise problem is smaller).

    Returns
    -------
    float
        ``cache_size`` for :class:`sklearn.svm.SVC`.
    """
    return (4.0 * n * n + 32.0 * n) / 2**20 + 1.0


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

    def _svc(self, n):
        cache = kernel_cache_mb(n)
        if self.log10_l is None:
            return SVC(C=self.C, kernel="precomputed", decision_function_shape="ovo",
                       cache_size=cache)
        return SVC(C=self.C, kernel="rbf", gamma=rbf_gamma(self.log10_l),
                   decision_function_shape="ovo", cache_size=cache)

    def fit(self, X, y):
        self.svc_ = self._svc(len(y)).fit(X, y)
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

    Each grid point is scored as scikit-learn's GridSearchCV scored it before (mean accuracy
    over the stratified folds) and the best is, as there, the first of the highest mean score in
    its candidate order, C outer and l inner: among ties the smallest C, then the smallest l.
    Every width's Gram matrix is computed once per level (:meth:`_width_scores`).

    Parameters
    ----------
    search : {"C,l", "l", "C"}
        Which parameters are searched: soft margin with Gaussian kernel ("C,l"), hard
        margin ("l", C = 1e6), or a precomputed kernel ("C"; ``X`` is a kernel matrix).
    cv_folds : int
    random_state : int or None
        Seeds the CV fold shuffling.
    n_jobs : int
        Threads fitting the CV folds of one width (bounded by the job's threads).

    Attributes
    ----------
    best_params_ : dict
        Chosen ``C`` and ``log10_l``.
    hyperparameters_ : dict
        ``{"log10_C": .., "log10_l": ..}`` as recorded in the fold result.
    cv_scores_ : list of dict
        The coarse and the fine level: ``"log10_C"`` and ``"log10_l"`` (the grids searched,
        None for a parameter not searched) and ``"scores"``, the validation accuracy of every
        (C, l, fold), shape (C grid, l grid, ``cv_folds``).
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
        """One level of the search: the best (log10 C, log10 l) on ``log10_grid``.

        Returns ``{"C": log10 C or None, "l": log10 l or None}``; None for a parameter the
        search does not vary (C = 1e6 for the hard margin, no width for a precomputed kernel).
        """
        log10_C, log10_l = log10_grid.get("C"), log10_grid.get("l")
        Cs = [HARD_MARGIN_C] if log10_C is None else list(10.0 ** log10_C)
        widths = [None] if log10_l is None else list(log10_l)
        cv = StratifiedKFold(self.cv_folds, shuffle=True, random_state=self.random_state)
        folds = list(cv.split(X, y))
        scores = np.empty((len(Cs), len(widths), len(folds)))
        for j, width in enumerate(widths):
            scores[:, j, :] = self._width_scores(X, y, width, Cs, folds)
        self.cv_scores_.append({"log10_C": log10_C, "log10_l": log10_l, "scores": scores})
        self.cv_fits_ += scores.size
        # GridSearchCV's mean over the folds (np.average) and its choice, the lowest rank of
        # rankdata(-mean, "min"): the first maximum in its candidate order, C outer, l inner
        means = np.average(scores.reshape(-1, len(folds)), axis=1)
        i, j = divmod(int(np.argmax(means)), len(widths))
        return {"C": None if log10_C is None else float(log10_C[i]), "l": widths[j]}

    def _width_scores(self, X, y, log10_l, Cs, folds):
        """Validation accuracy, shape (len(Cs), len(folds)), at one width.

        The Gram matrix of the n search rows is computed once (X itself for a precomputed
        kernel, else scikit-learn's rbf_kernel with the gamma that SVC(kernel="rbf") gets from
        :func:`rbf_gamma`) and every fold and C indexes it. (K&G eq. 13's
        ``Covariance(1, 0, 0, l).signal(X)`` is the same kernel, but its distance loop takes
        12-15 s at Adult's 6,000 x 123 inputs against rbf_kernel's 0.6-1.1 s.)

        Memory: one width at a time, its n x n float64 Gram matrix and, per thread, one fold's
        slices (0.8 n^2 float64 with 5 folds) and SVC's cache of the fold (0.64 n^2 floats):
        about 17 n^2 bytes, 0.6 GB at n = 6,000, the largest search the config runs (Adult1;
        Adult2's subset). A fold job's memory request is mem_mb + 16 n^2 bytes (two n x n
        float64 matrices, workflow/rules/resources.smk).
        """
        K = X if log10_l is None else rbf_kernel(X, gamma=rbf_gamma(log10_l))
        per_fold = Parallel(n_jobs=self.n_jobs, prefer="threads")(
            delayed(_fold_scores)(K, y, train, val, Cs) for train, val in folds)
        return np.array(per_fold).T

    def fit(self, X, y):
        X, y = check_X_y(X, y)
        self.cv_fits_ = 0
        self.cv_scores_ = []
        coarse = self._search(X, y, self._grids())
        fine = self._search(X, y, self._grids(coarse))
        log10_C = np.log10(HARD_MARGIN_C) if fine["C"] is None else fine["C"]
        C = 10.0 ** log10_C
        log10_l = None if self.search == "C" else fine["l"]
        self.model_ = clone(DAGSVC(C=C, log10_l=log10_l)).fit(X, y)
        self.classes_ = self.model_.classes_
        self.best_params_ = {"C": C, "log10_l": log10_l}
        self.hyperparameters_ = {"log10_C": float(log10_C),
                                 **({} if log10_l is None else {"log10_l": float(log10_l)})}
        return self

    def predict(self, X):
        check_is_fitted(self, "model_")
        return self.model_.predict(X)


def _fold_scores(K, y, train, val, Cs):
    """Validation accuracy of the precomputed-kernel DAGSVC at each C on one CV fold of the
    Gram matrix K: trained on K[train][:, train], scored on K[val][:, train]. The accuracy is
    the fraction of validation rows classified right, k / m, as ClassifierMixin.score (the score
    GridSearchCV takes) computes it, without its input checks. K is finite (the rows it comes
    from passed check_X_y), so SVC's finiteness checks of its slices are skipped."""
    K_train, K_val = K[np.ix_(train, train)], K[np.ix_(val, train)]
    with config_context(assume_finite=True):
        return [np.mean(DAGSVC(C=C, log10_l=None).fit(K_train, y[train]).predict(K_val)
                        == y[val]) for C in Cs]


class KernelSVM(ClassifierMixin, BaseEstimator):
    """SVM on a given covariance function (SVM-EP(s,soft)): ``kernel(X, X2)`` gives the kernel
    matrix; C is chosen by K&G's two-level 5-fold search (K&G footnote 14).

    Parameters
    ----------
    kernel : callable
        ``kernel(X, X2) -> ndarray`` of shape (len(X), len(X2)), e.g. a
        :class:`gpcbench.kernels.covariance.Covariance` with the hyperparameters learned by
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
