"""Baselines: k-NN's cross-validation against a literal re-implementation, LDA sanity."""

import numpy as np
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
    assert model.n_features_in_ == 2 and model.knn_.n_samples_fit_ == 40


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
