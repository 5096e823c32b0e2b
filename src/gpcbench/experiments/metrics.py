"""Test-set metrics recorded for every fold."""

from __future__ import annotations

import numpy as np


def error_rate(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    return float(np.mean(np.asarray(y_true) != np.asarray(y_pred)))


def negative_log_predictive(y_true: np.ndarray, proba: np.ndarray) -> float:
    """Mean of -log p(y_i | x_i); infinite when a method gives a true class probability 0."""
    p_true = proba[np.arange(len(y_true)), y_true]
    with np.errstate(divide="ignore"):
        return float(-np.mean(np.log(p_true)))


def brier_score(y_true: np.ndarray, proba: np.ndarray) -> float:
    """Mean over test points of sum_j (p_j - [y = j])^2 (multiclass Brier score)."""
    onehot = np.zeros_like(proba)
    onehot[np.arange(len(y_true)), y_true] = 1.0
    return float(np.mean(np.sum((proba - onehot) ** 2, axis=1)))


def fold_metrics(y_true, y_pred, proba, probabilistic: bool) -> dict:
    """Error, NLPD (``None`` for methods without real probabilities) and Brier score.

    ``proba`` columns are indexed by class index 0..J-1; for a non-probabilistic method the
    Brier score is that of its hard (0/1) predictions.
    """
    y_true = np.asarray(y_true)
    if y_true.size == 0:
        return {"error": None, "nlpd": None, "brier": None, "n_test": 0}
    if proba is None:
        proba = np.eye(int(max(y_true.max(), np.max(y_pred))) + 1)[y_pred]
    if not np.all(np.isfinite(proba)):
        raise FloatingPointError("predicted probabilities contain NaN or infinity")
    return {
        "error": error_rate(y_true, y_pred),
        "nlpd": negative_log_predictive(y_true, proba) if probabilistic else None,
        "brier": brier_score(y_true, proba),
        "n_test": int(y_true.size),
    }
