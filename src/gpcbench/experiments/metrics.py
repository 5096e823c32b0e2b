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


def confusion_matrix(y_true: np.ndarray, y_pred: np.ndarray, n_classes: int) -> list[list[int]]:
    """Counts of test points by (true class, predicted class): J x J, rows true class index."""
    counts = np.zeros((n_classes, n_classes), dtype=np.int64)
    np.add.at(counts, (np.asarray(y_true, dtype=int), np.asarray(y_pred, dtype=int)), 1)
    return counts.tolist()


def fold_metrics(y_true, y_pred, proba, probabilistic: bool, *, n_classes: int) -> dict:
    """Error, NLPD (``None`` for methods without real probabilities), Brier score and the
    confusion matrix.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (m,)
        True and predicted class indices 0..J-1 of the test points.
    proba : ndarray of shape (m, J) or None
        Predicted probabilities, columns indexed by class; None for a non-probabilistic
        method, whose Brier score is then that of its hard (0/1) predictions.
    probabilistic : bool
        Whether ``proba`` holds real probabilities (else the NLPD is ``None``).
    n_classes : int
        J, the number of classes of the data set (the confusion matrix is J x J even when a
        class is absent from the test rows).

    Returns
    -------
    dict
        error, nlpd, nonfinite_nlpd (whether the NLPD is infinite: a test point's true class
        has probability 0, so that summaries can count such folds), brier, n_test and
        confusion (J x J list of ints, rows the true class, columns the predicted class); all
        but n_test are None without test points, nlpd and nonfinite_nlpd None for a
        non-probabilistic method.
    """
    y_true = np.asarray(y_true)
    if y_true.size == 0:
        return {"error": None, "nlpd": None, "nonfinite_nlpd": None, "brier": None, "n_test": 0,
                "confusion": None}
    if proba is None:
        proba = np.eye(n_classes)[y_pred]
    if not np.all(np.isfinite(proba)):
        raise FloatingPointError("predicted probabilities contain NaN or infinity")
    nlpd = negative_log_predictive(y_true, proba) if probabilistic else None
    return {
        "error": error_rate(y_true, y_pred), "nlpd": nlpd,
        "nonfinite_nlpd": None if nlpd is None else not np.isfinite(nlpd),
        "brier": brier_score(y_true, proba),
        "n_test": int(y_true.size),
        "confusion": confusion_matrix(y_true, y_pred, n_classes),
    }
