"""K&G's 1-NN / k-NN cells (K&G Tables 4, 5 and 7) under four readings on the pipeline's own
folds: raw or standardised inputs (z-scored on the training rows), and a tied vote broken by
the nearest neighbour among the tied classes (MATLAB knnclassify's rule) or by the smallest
class index (scikit-learn's). k is chosen by 5-fold CV over k = 1..25 (K&G footnote 17). This
measurement led the config to run these rows on raw inputs with ties to the nearest neighbour
(raw_input_methods, tie_break: nearest_neighbour)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.neighbors import NearestNeighbors

GRID = np.arange(1, 26)
SETS = {"kim2006_binary": ["heart", "ionosphere", "boston"],
        "kim2006_multiclass": ["thyroid3", "autompg", "boston3"]}
TIES = {"nearest": "nearest neighbour", "smallest": "smallest class"}
INPUTS = [path for experiment, names in SETS.items() for name in names
          for path in (f"data/processed/{name}.npz", f"data/splits/{experiment}/{name}.json")]


def vote(labels: np.ndarray, k: int, n_classes: int, tie: str) -> np.ndarray:
    """Majority vote of the first k neighbours' labels (rows: test points, nearest first)."""
    counts = np.stack([(labels[:, :k] == j).sum(axis=1) for j in range(n_classes)], axis=1)
    if tie == "smallest":
        return counts.argmax(axis=1)
    tied = counts == counts.max(axis=1, keepdims=True)
    nearest_tied = tied[np.arange(len(labels))[:, None], labels[:, :k]]
    return labels[np.arange(len(labels)), nearest_tied.argmax(axis=1)]


def neighbour_labels(X_train, y_train, X_test, k):
    search = NearestNeighbors(n_neighbors=k).fit(X_train)
    return y_train[search.kneighbors(X_test, return_distance=False)]


def chosen_k(X, y, n_classes, tie, seed):
    """k of the grid with the best 5-fold CV accuracy on the training rows."""
    accuracy = np.zeros(GRID.size)
    for train, test in StratifiedKFold(5, shuffle=True, random_state=seed).split(X, y):
        labels = neighbour_labels(X[train], y[train], X[test], GRID[-1])
        accuracy += [np.mean(vote(labels, k, n_classes, tie) == y[test]) for k in GRID]
    return int(GRID[accuracy.argmax()])


def fold_errors(X, y, folds, tie, standardise, seed) -> dict:
    """Mean error of 1-NN and k-NN over the folds and the k chosen most often."""
    n_classes = int(y.max()) + 1
    errors, ks = {"1-NN": [], "k-NN": []}, []
    for fold in folds:
        train, test = np.array(fold["train"]), np.array(fold["test"])
        X_train, X_test = X[train], X[test]
        if standardise:
            mean, sd = X_train.mean(axis=0), X_train.std(axis=0)
            sd[sd == 0] = 1.0
            X_train, X_test = (X_train - mean) / sd, (X_test - mean) / sd
        k = chosen_k(X_train, y[train], n_classes, tie, seed)
        labels = neighbour_labels(X_train, y[train], X_test, k)
        errors["k-NN"].append(np.mean(vote(labels, k, n_classes, tie) != y[test]))
        errors["1-NN"].append(np.mean(labels[:, 0] != y[test]))
        ks.append(k)
    return {**{m: float(np.mean(e)) for m, e in errors.items()},
            "k": int(np.bincount(ks).argmax())}


def measure(root: Path, seed: int) -> dict:
    """data set -> inputs (raw, standardised) -> tie rule -> {1-NN, k-NN, k}."""
    values = {}
    for experiment, names in SETS.items():
        for name in names:
            data = np.load(root / f"data/processed/{name}.npz")
            split = root / f"data/splits/{experiment}/{name}.json"
            folds = json.loads(split.read_text())["folds"]
            values[name] = {inputs: {tie: fold_errors(data["X"], data["y"], folds, tie,
                                                      inputs == "standardised", seed)
                                     for tie in TIES}
                            for inputs in ("raw", "standardised")}
    return values
