"""SVM baselines: the paper's grids, DAG decisions by hand, CV confined to the training fold."""

import numpy as np
import pytest
from sklearn.svm import SVC

from gpcbench.baselines import svm
from gpcbench.baselines.svm import DAGSVC, TwoLevelGridSVM, dag_decision, fine_grid


def test_coarse_and_fine_grids_are_the_papers():
    # footnote 14: log10 C = 0, 0.5, ..., 3; footnote 15: log10 l = -3, -2.5, ..., 0
    assert np.allclose(svm.COARSE_LOG10_C, [0, 0.5, 1, 1.5, 2, 2.5, 3])
    assert np.allclose(svm.COARSE_LOG10_L, [-3, -2.5, -2, -1.5, -1, -0.5, 0])
    # then log10 C1 - 0.4, -0.3, ..., + 0.4 in steps of 0.1
    assert np.allclose(fine_grid(1.5), [1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9])
    assert np.allclose(fine_grid(-3.0), np.arange(-3.4, -2.55, 0.1))


def _three_classes(n=60, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0, 0], [2.0, 0.5], [0.5, 2.0]])
    y = np.arange(n) % 3
    return centres[y] + rng.normal(scale=0.9, size=(n, 2)), y


def test_dag_equals_a_hand_computed_dag_on_three_classes():
    X, y = _three_classes()
    X_test, _ = _three_classes(200, seed=1)
    gamma = 10 ** -0.5 / 2
    model = DAGSVC(C=3.0, log10_l=-0.5).fit(X, y)

    def pairwise(i, j):
        mask = (y == i) | (y == j)
        return SVC(C=3.0, kernel="rbf", gamma=gamma).fit(X[mask], y[mask]).predict(X_test)

    p01, p02, p12 = pairwise(0, 1), pairwise(0, 2), pairwise(1, 2)
    # DAG over the list [0, 1, 2]: test 0 vs 2 first; the loser leaves the list.
    by_hand = np.where(p02 == 0, p01, p12)
    assert np.array_equal(model.predict(X_test), by_hand)


def test_dag_decision_on_a_literal_vote_table():
    J = 4  # columns (0,1) (0,2) (0,3) (1,2) (1,3) (2,3); positive -> first class of the pair
    decisions = np.array([[1, 1, 1, 1, 1, 1],        # 0 beats everyone -> 0
                          [-1, -1, -1, -1, -1, -1],  # the later class always wins -> 3
                          [1, -1, -1, 1, 1, -1]])    # 0v3 -> 3; 1v3 -> 1; 1v2 -> 1
    assert dag_decision(decisions.astype(float), J).tolist() == [0, 3, 1]


def test_grid_search_sees_only_the_training_rows(monkeypatch):
    X, y = _three_classes(90)
    X[60:] += 1000.0  # the "test fold": far away, so any use of it is visible
    seen = []
    original_fit = DAGSVC.fit

    def recording_fit(self, X_fit, y_fit):
        seen.append(np.max(np.abs(X_fit)))
        return original_fit(self, X_fit, y_fit)

    monkeypatch.setattr(DAGSVC, "fit", recording_fit)
    model = TwoLevelGridSVM(search="C,l", random_state=0).fit(X[:60], y[:60])
    assert max(seen) < 100
    assert model.cv_fits_ == 5 * (7 * 7 + 9 * 9)
    assert len(seen) == model.cv_fits_ + 2 + 1  # + refits of both searches + final model


@pytest.mark.parametrize("search", ["l", "C,l"])
def test_chosen_values_lie_on_the_fine_grid(search):
    X, y = _three_classes(60)
    model = TwoLevelGridSVM(search=search, random_state=0).fit(X, y)
    log10_l = model.hyperparameters_["log10_l"]
    assert -3.4 - 1e-9 <= log10_l <= 0.4 + 1e-9
    assert np.isclose(log10_l * 10, round(log10_l * 10))
    if search == "l":
        assert model.best_params_["C"] == svm.HARD_MARGIN_C
