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
    gram_inputs, fitted = [], []
    original_kernel, original_fit = svm.rbf_kernel, DAGSVC.fit

    def recording_kernel(X_gram, gamma):
        gram_inputs.append((gamma, np.max(np.abs(X_gram))))
        return original_kernel(X_gram, gamma=gamma)

    def recording_fit(self, X_fit, y_fit):
        fitted.append((self.log10_l, X_fit.shape, np.max(np.abs(X_fit))))
        return original_fit(self, X_fit, y_fit)

    monkeypatch.setattr(svm, "rbf_kernel", recording_kernel)
    monkeypatch.setattr(DAGSVC, "fit", recording_fit)
    model = TwoLevelGridSVM(search="C,l", random_state=0).fit(X[:60], y[:60])
    # one Gram matrix a width and level, of the training rows, gamma = l / 2
    widths = np.concatenate([level["log10_l"] for level in model.cv_scores_])
    assert [gamma for gamma, _ in gram_inputs] == [10.0 ** l / 2 for l in widths]
    assert len(widths) == 7 + 9 and max(largest for _, largest in gram_inputs) < 100
    assert model.cv_fits_ == 5 * (7 * 7 + 9 * 9)
    assert len(fitted) == model.cv_fits_ + 1  # + the final model
    # CV fits: 48 of the 60 rows (a fold's training rows of the Gram matrix); final: raw rows
    assert all(log10_l is None and shape == (48, 48) for log10_l, shape, _ in fitted[:-1])
    assert fitted[-1][0] is not None and fitted[-1][1] == (60, 2) and fitted[-1][2] < 100


@pytest.mark.parametrize("search", ["l", "C,l"])
def test_chosen_values_lie_on_the_fine_grid(search):
    X, y = _three_classes(60)
    model = TwoLevelGridSVM(search=search, random_state=0).fit(X, y)
    log10_l = model.hyperparameters_["log10_l"]
    assert -3.4 - 1e-9 <= log10_l <= 0.4 + 1e-9
    assert np.isclose(log10_l * 10, round(log10_l * 10))
    if search == "l":
        assert model.best_params_["C"] == svm.HARD_MARGIN_C


def test_svm_ep_uses_the_kernel_gpc_ep_learned_on_the_same_fold(monkeypatch):
    """SVM-EP(s,soft) is built from the GPC-EP(s,soft) fold record: its training kernel is the
    fitted GPC's covariance matrix without the theta2 diagonal, and its test kernel is the
    GPC's cross-covariance (eqs. 13, 24)."""
    from gpcbench.experiments.registry import FitContext, method_spec
    from gpcbench.models import gpc_ep_variant

    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=40) > 0).astype(int)
    X_test = rng.normal(size=(7, 3))
    gpc = gpc_ep_variant("GPC-EP(s,soft)", max_iter=5).fit(X, y)
    record = {"status": "ok", "hyperparameters": gpc.hyperparameters_}
    ctx = FitContext(options={}, seed=0, n_jobs=1, feature_types=("continuous",) * 3, fold=2,
                     upstream={"gpc-ep-s-soft/fold2": record})
    seen = []
    original = TwoLevelGridSVM.fit
    monkeypatch.setattr(TwoLevelGridSVM, "fit",
                        lambda self, K, y: seen.append(K) or original(self, K, y))
    predict = svm.DAGSVC.predict
    monkeypatch.setattr(svm.DAGSVC, "predict", lambda self, K: seen.append(K) or predict(self, K))
    model = method_spec("svm-ep-s-soft").factory(ctx).fit(X, y)
    model.predict(X_test)
    theta2 = gpc.hyperparameters_["theta2"]
    assert theta2 > 0
    np.testing.assert_allclose(seen[0], gpc.covariance_(X) - theta2 * np.eye(40), rtol=1e-12)
    np.testing.assert_allclose(seen[-1], gpc.covariance_(X_test, X), rtol=1e-12)


def test_svm_ep_fails_without_the_upstream_gpc_result():
    from gpcbench.experiments.registry import FitContext, method_spec

    ctx = FitContext(options={}, seed=0, n_jobs=1, feature_types=("continuous",), fold=0,
                     upstream={"gpc-ep-s-soft/fold0": {"status": "failed"}})
    with pytest.raises(RuntimeError, match="GPC-EP\\(s,soft\\)"):
        method_spec("svm-ep-s-soft").factory(ctx)
