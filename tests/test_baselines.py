"""Baselines: k-NN's cross-validation against a literal re-implementation, LDA sanity,
scikit-learn GPC's optimiser record."""

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

from gpcbench.baselines.neighbors import CrossValidatedKNN


def _brute_force_best_k(X, y, grid, folds, seed):
    """Literal CV: for each k, classify each held-out point by majority of its k nearest."""
    cv = StratifiedKFold(folds, shuffle=True, random_state=seed)
    accuracy = []
    for k in grid:
        fold_accuracy = []
        for train, test in cv.split(X, y):
            d = ((X[test, None, :] - X[None, train, :]) ** 2).sum(-1)
            nearest = np.argsort(d, axis=1, kind="stable")[:, :k]
            votes = np.array([np.bincount(y[train][row], minlength=y.max() + 1) for row in nearest])
            fold_accuracy.append(np.mean(votes.argmax(1) == y[test]))
        accuracy.append(np.mean(fold_accuracy))
    return grid[int(np.argmax(accuracy))]


def test_knn_picks_the_k_a_literal_cv_picks():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(90, 3))
    y = (X[:, 0] + 0.8 * rng.normal(size=90) > 0).astype(int)
    grid = [1, 3, 5, 7, 9, 15]
    model = CrossValidatedKNN(k_grid=grid, cv_folds=5, random_state=7).fit(X, y)
    assert model.best_k_ == _brute_force_best_k(X, y, grid, 5, 7)


def test_knn_cv_sees_only_the_training_rows():
    rng = np.random.default_rng(0)
    X_train, y_train = rng.normal(size=(40, 2)), np.arange(40) % 2
    model = CrossValidatedKNN(k_grid=[1, 3], random_state=0).fit(X_train, y_train)
    assert model.n_features_in_ == 2 and model.search_.n_samples_fit_ == 40


def _literal_nearest_tie_votes(X_train, y_train, X_test, k):
    """Majority of the k nearest; a tie goes to the tied class met first walking outwards."""
    predicted = []
    for x in X_test:
        order = np.argsort(((X_train - x) ** 2).sum(axis=1), kind="stable")[:k]
        counts = np.bincount(y_train[order], minlength=y_train.max() + 1)
        tied = set(np.flatnonzero(counts == counts.max()))
        predicted.append(next(label for label in y_train[order] if label in tied))
    return np.array(predicted)


@pytest.mark.parametrize("k", [2, 4, 6])
def test_nearest_neighbour_tie_break_matches_a_literal_vote(k):
    """Three classes and even k, so ties are common; the smallest-class rule is
    scikit-learn's KNeighborsClassifier, the nearest-neighbour rule a literal walk."""
    from sklearn.neighbors import KNeighborsClassifier

    rng = np.random.default_rng(k)
    X, X_test = rng.normal(size=(60, 2)), rng.normal(size=(200, 2))
    y = rng.integers(0, 3, size=60)
    nearest = CrossValidatedKNN(k_grid=[k], tie_break="nearest_neighbour").fit(X, y)
    smallest = CrossValidatedKNN(k_grid=[k]).fit(X, y)
    literal = _literal_nearest_tie_votes(X, y, X_test, k)
    assert np.array_equal(nearest.predict(X_test), literal)
    sklearn = KNeighborsClassifier(n_neighbors=k).fit(X, y)
    assert np.array_equal(smallest.predict(X_test), sklearn.predict(X_test))
    assert np.allclose(nearest.predict_proba(X_test), sklearn.predict_proba(X_test))
    assert (nearest.predict(X_test) != smallest.predict(X_test)).any()  # ties were met


def test_nearest_neighbour_tie_break_in_cv_matches_the_literal_cv():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(80, 2))
    y = (X[:, 0] + rng.normal(size=80) > 0).astype(int)
    grid = [1, 2, 3, 4, 6, 8]
    model = CrossValidatedKNN(k_grid=grid, cv_folds=4, tie_break="nearest_neighbour",
                              random_state=3).fit(X, y)
    cv = StratifiedKFold(4, shuffle=True, random_state=3)
    accuracy = [np.mean([np.mean(_literal_nearest_tie_votes(X[train], y[train], X[test], k)
                                 == y[test]) for train, test in cv.split(X, y)]) for k in grid]
    assert np.allclose(model.cv_results_["mean_accuracy"], accuracy)


def test_knn_cv_scores_equal_scikit_learns_grid_search():
    from sklearn.model_selection import GridSearchCV, StratifiedKFold
    from sklearn.neighbors import KNeighborsClassifier

    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 4))
    y = np.digitize(X[:, 0] + X[:, 1] + rng.normal(size=120), [-0.5, 0.5])  # three classes
    grid = list(range(1, 16))
    model = CrossValidatedKNN(k_grid=grid, cv_folds=5, random_state=2).fit(X, y)
    search = GridSearchCV(KNeighborsClassifier(), {"n_neighbors": grid},
                          cv=StratifiedKFold(5, shuffle=True, random_state=2)).fit(X, y)
    assert np.allclose(model.cv_results_["mean_accuracy"], search.cv_results_["mean_test_score"])
    assert model.best_k_ == search.best_params_["n_neighbors"]


def test_sklearn_gpc_records_its_optimiser_runs_without_changing_its_numbers():
    """An ABNORMAL L-BFGS end (scikit-learn only warns) makes converged_ False; converging
    one-vs-rest problems give converged_ True and scikit-learn's own probabilities."""
    import warnings

    from sklearn.datasets import make_classification
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.gaussian_process import GaussianProcessClassifier
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel

    from gpcbench.baselines.sklearn_gpc import make_sklearn_gpc

    X = np.random.default_rng(7).normal(size=(40, 2))
    with pytest.warns(ConvergenceWarning, match=r"\(status=2\): ABNORMAL"):
        model = make_sklearn_gpc(2, seed=0, n_jobs=1).fit(X, (X[:, 0] > 0).astype(int))
    assert model.converged_ is False
    X3, y3 = make_classification(n_samples=75, n_features=3, n_informative=3, n_redundant=0,
                                 n_classes=3, n_clusters_per_class=1, random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        model = make_sklearn_gpc(3, seed=0, n_jobs=1).fit(X3, y3)
        stock = GaussianProcessClassifier(kernel=ConstantKernel(1.0) * RBF(np.ones(3)),
                                          multi_class="one_vs_rest", random_state=0).fit(X3, y3)
    assert model.converged_ is True
    assert [len(e.optimizer.runs) for e in model.base_estimator_.estimators_] == [1, 1, 1]
    assert np.array_equal(model.predict_proba(X3), stock.predict_proba(X3))
