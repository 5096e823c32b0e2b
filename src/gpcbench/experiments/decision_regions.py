"""CKP Fig. 1(c): the class a softmax Laplace method predicts over a grid of a two-feature data
set, refitted on one fold's training rows at the hyperparameters the fold recorded. The one
report figure that evaluates a model: ``gpcbench report`` hands :func:`decision_regions` to
the report (:mod:`gpcbench.experiments.report`, which reads results only) to draw."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpcbench.estimators.laplace_softmax import softmax_laplace_predict
from gpcbench.experiments.run_fold import standardize


@dataclass(frozen=True)
class DecisionRegions:
    """A refitted classifier's class over a grid (``g0`` x ``g1``) of a two-feature data set,
    the fold's training rows and its misclassified test rows, and the fold record ``row``."""

    data: object
    train: np.ndarray
    test: np.ndarray
    wrong: np.ndarray
    g0: np.ndarray
    g1: np.ndarray
    on_grid: np.ndarray
    row: pd.Series


def decision_regions(spec: dict, entry: str, folds: pd.DataFrame, data, split: dict,
                     standardize_inputs: bool, grid_size: int = 150) -> DecisionRegions:
    """CKP Fig. 1(c): the class a softmax Laplace method predicts over a grid of the entry's
    two-feature data set (``data``, a :class:`~gpcbench.data.dataset.Dataset`), refitted on
    one fold's training rows (``split``, the split file's content) at the hyperparameters the
    fold recorded, without learning (:func:`softmax_laplace_predict`)."""
    (method,), fold = spec["methods"], spec.get("fold", 0)
    if data.X.shape[1] != 2:
        raise ValueError(f"decision regions need 2 input features; {entry} has {data.X.shape[1]}")
    rows = folds[(folds["experiment"] == spec["experiment"]) & (folds["dataset"] == entry)
                 & (folds["method"] == method) & (folds["fold"] == fold)
                 & (folds["status"] == "ok")]
    if rows.empty:
        raise ValueError(f"no successful result of {method} on {entry} fold {fold}")
    row = rows.iloc[0]
    train, test = (np.asarray(split["folds"][fold][part]) for part in ("train", "test"))
    lo, hi = data.X.min(axis=0), data.X.max(axis=0)
    lo, hi = lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo)
    g0, g1 = np.meshgrid(np.linspace(lo[0], hi[0], grid_size), np.linspace(lo[1], hi[1], grid_size))
    grid = np.column_stack([g0.ravel(), g1.ravel()])
    X_train, X_new = data.X[train], np.vstack([data.X[test], grid])
    if standardize_inputs:
        X_train, X_new = standardize(X_train, X_new)
    predicted = softmax_laplace_predict(
        json.loads(row["hyperparameters"]), X_train, data.y[train], X_new,
        [kind == "discrete" for kind in data.feature_types], int(row["seed"]))
    on_test, on_grid = predicted[:test.size], predicted[test.size:]
    return DecisionRegions(data, train, test, test[on_test != data.y[test]], g0, g1,
                           on_grid.reshape(g0.shape), row)
