"""K&G's 1-NN / k-NN cells under the reading that reproduces them: unstandardised inputs, k
chosen by 5-fold CV (K&G footnote 17) over k = 1..25, and a vote tie broken by the nearest
neighbour among the tied classes (MATLAB knnclassify's default rule), against ties to the
smallest class index (scikit-learn's rule), on the pipeline's own folds. This measurement led
the config to run these rows so (raw_input_methods, tie_break: nearest_neighbour).

    python docs/kim2006_readings/nearest_neighbours.py  # from a work tree the pipeline made
"""
import json

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import NearestNeighbors

GRID = np.arange(1, 26)
SETS = {"kim2006_binary": ["heart", "ionosphere", "boston"],
        "kim2006_multiclass": ["thyroid3", "autompg", "boston3"]}


def vote(labels: np.ndarray, k: int, n_classes: int, tie: str) -> np.ndarray:
    """Majority vote of the first k neighbours' labels (rows: test points, nearest first)."""
    counts = np.stack([(labels[:, :k] == j).sum(axis=1) for j in range(n_classes)], axis=1)
    if tie == "smallest class":
        return counts.argmax(axis=1)
    tied = counts == counts.max(axis=1, keepdims=True)
    nearest_tied = tied[np.arange(len(labels))[:, None], labels[:, :k]]
    return labels[np.arange(len(labels)), nearest_tied.argmax(axis=1)]


def neighbour_labels(X_train, y_train, X_test, k):
    search = NearestNeighbors(n_neighbors=k).fit(X_train)
    return y_train[search.kneighbors(X_test, return_distance=False)]


def chosen_k(X, y, n_classes, tie, seed=0):
    accuracy = np.zeros(GRID.size)
    for train, test in StratifiedKFold(5, shuffle=True, random_state=seed).split(X, y):
        labels = neighbour_labels(X[train], y[train], X[test], GRID[-1])
        accuracy += [np.mean(vote(labels, k, n_classes, tie) == y[test]) for k in GRID]
    return int(GRID[accuracy.argmax()])


for experiment, names in SETS.items():
    for name in names:
        data = np.load(f"data/processed/{name}.npz")
        X, y = data["X"], data["y"]
        n_classes = int(y.max()) + 1
        folds = json.load(open(f"data/splits/{experiment}/{name}.json"))["folds"]
        for tie in ("smallest class", "nearest neighbour"):
            errors = {"1-NN": [], "k-NN": []}
            for fold in folds:
                train, test = np.array(fold["train"]), np.array(fold["test"])
                k = chosen_k(X[train], y[train], n_classes, tie)
                labels = neighbour_labels(X[train], y[train], X[test], k)
                errors["k-NN"].append(np.mean(vote(labels, k, n_classes, tie) != y[test]))
                errors["1-NN"].append(np.mean(labels[:, 0] != y[test]))
            shown = {m: f"{np.mean(e):.4f} +- {np.std(e, ddof=1) / np.sqrt(len(e)):.4f}"
                     for m, e in errors.items()}
            print(f"{experiment} {name}, raw inputs, ties to the {tie}: {shown}")
