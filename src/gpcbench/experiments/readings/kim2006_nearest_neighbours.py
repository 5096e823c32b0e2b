"""K&G's 1-NN / k-NN cells (K&G Tables 4, 5 and 7) under four readings on the pipeline's own
folds: raw or standardised inputs (z-scored on the training rows), and a tied vote broken by
the nearest neighbour among the tied classes (MATLAB knnclassify's rule) or by the smallest
class index (scikit-learn's), with the pipeline's estimators
(:class:`~gpcbench.baselines.neighbors.CrossValidatedKNN`, standardised as the fold jobs do).
k is chosen by 5-fold CV over k = 1..25 (K&G footnote 17). This
measurement led the config to run these rows on raw inputs with ties to the nearest neighbour
(raw_input_methods, tie_break: nearest_neighbour)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from gpcbench.baselines.neighbors import CrossValidatedKNN
from gpcbench.experiments.run_fold import standardize

GRID = tuple(range(1, 26))
SETS = {"kim2006_binary": ["heart", "ionosphere", "boston"],
        "kim2006_multiclass": ["thyroid3", "autompg", "boston3"]}
TIES = {"nearest": "nearest_neighbour", "smallest": "smallest_class"}
INPUTS = [path for experiment, names in SETS.items() for name in names
          for path in (f"data/processed/{name}.npz", f"data/splits/{experiment}/{name}.json")]


def fold_errors(X, y, folds, tie, standardise, seed) -> dict:
    """Mean error of the pipeline's 1-NN and k-NN estimators (k by 5-fold CV over
    :data:`GRID`) over the folds, and the k chosen most often."""
    errors, ks = {"1-NN": [], "k-NN": []}, []
    for fold in folds:
        train, test = np.array(fold["train"]), np.array(fold["test"])
        X_train, X_test = X[train], X[test]
        if standardise:
            X_train, X_test = standardize(X_train, X_test)
        for name, grid in (("1-NN", (1,)), ("k-NN", GRID)):
            knn = CrossValidatedKNN(k_grid=grid, cv_folds=5, tie_break=TIES[tie],
                                    random_state=seed).fit(X_train, y[train])
            errors[name].append(np.mean(knn.predict(X_test) != y[test]))
        ks.append(knn.best_k_)
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
