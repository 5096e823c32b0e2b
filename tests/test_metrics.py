"""Fold metrics against independent computations (scikit-learn's)."""

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss, confusion_matrix

from gpcbench.experiments.metrics import fold_metrics


def test_confusion_is_scikit_learns_with_a_row_and_column_per_class_of_the_data_set():
    rng = np.random.default_rng(3)
    y_true = rng.integers(0, 3, size=50)        # class 3 of 4 never occurs in the test rows
    y_pred = np.where(rng.random(50) < 0.7, y_true, rng.integers(0, 3, size=50))
    metrics = fold_metrics(y_true, y_pred, None, False, n_classes=4)
    expected = confusion_matrix(y_true, y_pred, labels=[0, 1, 2, 3])
    assert metrics["confusion"] == expected.tolist()
    assert all(isinstance(v, int) for row in metrics["confusion"] for v in row)
    assert metrics["error"] == pytest.approx(1 - np.trace(expected) / 50)


def test_hard_predictions_brier_ignores_classes_never_predicted():
    y_true, y_pred = np.array([0, 1, 1, 0]), np.array([0, 1, 0, 0])
    metrics = fold_metrics(y_true, y_pred, None, False, n_classes=3)
    # binary Brier of the 0/1 predictions, times 2 for the two classes' squared errors
    assert metrics["brier"] == pytest.approx(2 * brier_score_loss(y_true, y_pred))
    assert metrics["nlpd"] is None


def test_no_test_points_no_confusion():
    assert fold_metrics(np.array([], dtype=int), np.array([], dtype=int), None, False,
                        n_classes=2)["confusion"] is None


def test_an_infinite_nlpd_is_flagged():
    y_true, y_pred = np.array([0, 1, 1]), np.array([0, 1, 0])
    certain = np.eye(2)[y_pred]  # the third point's true class has probability 0
    metrics = fold_metrics(y_true, y_pred, certain, True, n_classes=2)
    assert metrics["nlpd"] == np.inf and metrics["nonfinite_nlpd"] is True
    hedged = fold_metrics(y_true, y_pred, 0.8 * certain + 0.1, True, n_classes=2)
    assert np.isfinite(hedged["nlpd"]) and hedged["nonfinite_nlpd"] is False
    assert fold_metrics(y_true, y_pred, None, False, n_classes=2)["nonfinite_nlpd"] is None
