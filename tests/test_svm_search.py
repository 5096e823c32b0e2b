"""The SVM grid search that reuses each width's Gram matrix against a literal reference
(tests/svm_search_reference.py): the search as it was, scikit-learn's GridSearchCV refitting
SVC(kernel="rbf") from the raw inputs at every (C, l) and fold. On every case: the same (C, l),
the same validation accuracy at every grid point and fold (to 1e-12; accuracies are multiples
of 1 / fold size, so equal to 1e-12 is equal), hence the same tie-breaking, and the same test
predictions and decision values."""

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from svm_search_reference import ReferenceGridSVM

from gpcbench.baselines.svm import DAGSVC, TwoLevelGridSVM, kernel_cache_mb
from gpcbench.kernels.covariance import Covariance


# --- cases: synthetic and real (scikit-learn's bundled data), train / test halves -------------

def _standardised(X_train, X_test):
    mean, sd = X_train.mean(axis=0), X_train.std(axis=0)
    return (X_train - mean) / sd, (X_test - mean) / sd


def _halves(X, y, seed):
    order = np.random.default_rng(seed).permutation(len(y))
    train, test = order[: len(y) // 2], order[len(y) // 2:]
    return (*_standardised(X[train], X[test]), y[train], y[test])


def _two_classes(seed=2, shift=1.2):
    rng = np.random.default_rng(seed)
    y = np.arange(160) % 2
    return _halves(rng.normal(size=(160, 2)) + shift * y[:, None], y, seed)


def _three_classes(seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(180) % 3
    centres = np.array([[0, 0], [2.0, 0.5], [0.5, 2.0]])
    return _halves(centres[y] + rng.normal(scale=0.9, size=(180, 2)), y, seed)


def _separable(seed=4):
    """Two far-apart blobs: every grid point scores 1 on every fold, all of them tie."""
    rng = np.random.default_rng(seed)
    y = np.arange(80) % 2
    return _halves(rng.normal(size=(80, 3)) + 8.0 * y[:, None], y, seed)


def _bundled(loader, rows=None, seed=1):
    X, y = loader(return_X_y=True)
    if rows is not None:
        keep = np.sort(np.random.default_rng(seed).choice(len(y), rows, replace=False))
        X, y = X[keep], y[keep]
    return _halves(X.astype(float), y, seed)


CASES = {
    "two-classes C,l": (_two_classes, "C,l"),
    "three-classes C,l (DAG)": (_three_classes, "C,l"),
    "two-classes l (hard margin)": (lambda: _two_classes(shift=2.5), "l"),
    "separable C,l (all tie)": (_separable, "C,l"),
    "iris C,l (DAG)": (lambda: _bundled(load_iris), "C,l"),
    "wine C,l (DAG)": (lambda: _bundled(load_wine), "C,l"),
    "breast-cancer C,l": (lambda: _bundled(load_breast_cancer, rows=300), "C,l"),
}


def _compare(new, reference):
    """Every level's validation accuracy at every (C, l, fold), new against GridSearchCV's."""
    assert len(new.cv_scores_) == len(reference.searches_) == 2
    for level, search in zip(new.cv_scores_, reference.searches_):
        scores = level["scores"]
        folds = scores.shape[-1]
        split = np.column_stack([search.cv_results_[f"split{k}_test_score"]
                                 for k in range(folds)])
        assert np.max(np.abs(scores.reshape(-1, folds) - split)) <= 1e-12
        means = np.average(scores.reshape(-1, folds), axis=1)
        assert np.max(np.abs(means - search.cv_results_["mean_test_score"])) <= 1e-12
        assert int(np.argmax(means)) == search.best_index_


def _same_grid_point(new, reference):
    """The same chosen (log10 C, log10 l): ours keeps the grid's log10 C, the reference gets
    it back from GridSearchCV's C = 10^x by np.log10 (equal up to the libm's rounding)."""
    assert new.hyperparameters_.keys() == reference.hyperparameters_.keys()
    assert new.hyperparameters_ == pytest.approx(reference.hyperparameters_, rel=0, abs=1e-12)


@pytest.mark.parametrize("case", CASES)
def test_reused_gram_search_chooses_and_predicts_as_the_raw_input_search(case):
    make, search = CASES[case]
    X, X_test, y, _ = make()
    new = TwoLevelGridSVM(search=search, random_state=20061201).fit(X, y)
    reference = ReferenceGridSVM(search=search, random_state=20061201).fit(X, y)
    _same_grid_point(new, reference)
    assert new.best_params_ == reference.best_params_
    assert new.cv_fits_ == reference.cv_fits_ == 5 * ((7 * 7 + 9 * 9) if search == "C,l" else 16)
    _compare(new, reference)
    assert np.array_equal(new.predict(X_test), reference.predict(X_test))
    # the final SVC, refitted from the raw inputs with a problem-sized cache, is the same SVC
    assert np.array_equal(new.model_.decision_function(X_test),
                          reference.model_.decision_function(X_test))


def test_precomputed_kernel_search_chooses_as_the_reference():
    """SVM-EP(s,soft)'s search over C alone on a given kernel matrix."""
    X, X_test, y, _ = _two_classes(seed=5)
    kernel = Covariance(1.3, 0.2, 0.0, 0.7)
    K, K_test = kernel(X, X), kernel(X_test, X)
    new = TwoLevelGridSVM(search="C", random_state=3).fit(K, y)
    reference = ReferenceGridSVM(search="C", random_state=3).fit(K, y)
    _same_grid_point(new, reference)
    _compare(new, reference)
    assert np.array_equal(new.predict(K_test), reference.predict(K_test))


def test_ties_go_to_the_smallest_C_then_the_smallest_width():
    """On separable data every grid point ties at accuracy 1; GridSearchCV's choice (and ours)
    is its first candidate: the smallest C, then the smallest l, at both levels."""
    X, _, y, _ = _separable()
    model = TwoLevelGridSVM(search="C,l", random_state=0).fit(X, y)
    assert all(np.all(level["scores"] == 1.0) for level in model.cv_scores_)
    assert model.hyperparameters_ == {"log10_C": -0.4, "log10_l": -3.4}


def test_kernel_cache_holds_the_whole_problem():
    # n^2 4-byte floats and a 32-byte header a row, in MB, + 1 MB
    for n in (80, 4_800, 20_000):
        assert 4 * n**2 + 32 * n < kernel_cache_mb(n) * 2**20 <= 4 * n**2 + 32 * n + 2**20
    assert kernel_cache_mb(20_000) == pytest.approx(1527.5, abs=0.1)
    model = DAGSVC(C=2.0, log10_l=-1.0).fit(*_two_classes()[::2])
    assert model.svc_.cache_size == kernel_cache_mb(80)
