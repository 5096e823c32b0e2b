"""The import vector machine (Zhu & Hastie 2005; gpcbench.inference.import_vm and
gpcbench.estimators.import_vm) against independent references: with every row imported it is
full kernel logistic regression, minimised here by scipy.optimize on the objective written out;
its candidates' one-step objectives and its greedy choices against a literal per-candidate
Newton step; Z&H's stopping rule on its own objective path."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize

from gpcbench.estimators.import_vm import ImportVectorMachine
from gpcbench.inference.import_vm import (candidate_objectives, fit_submodel,
                                          select_imports)
from gpcbench.kernels.rbf import rbf


def _data(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) * 1.5
    y = np.where(X[:, 0] ** 2 - X[:, 1] + 0.4 * rng.normal(size=n) > 1.0, 1.0, -1.0)
    return X, y


def _klr_objective(a, K, y, mu):
    """H(a) = sum_i log(1 + exp(-y_i f_i)) + mu/2 a^T K a, f = K a, and its gradient."""
    f = K @ a
    gradient = -K @ (y / (1.0 + np.exp(y * f))) + mu * K @ a
    return np.sum(np.logaddexp(0.0, -y * f)) + 0.5 * mu * a @ K @ a, gradient


def test_every_row_imported_is_full_kernel_logistic_regression():
    """epsilon = 0 imports all 25 rows: the coefficients (reordered) and probabilities equal
    the minimiser of the full KLR objective found by BFGS."""
    X, y = _data(25, 0)
    width, lam = 0.7, 0.01
    K = rbf(X, X, width)
    assert np.linalg.cond(K) < 1e4  # well conditioned: the coefficients are determined
    mu = lam * len(y)
    reference = minimize(_klr_objective, np.zeros(len(y)), args=(K, y, mu), jac=True,
                         method="BFGS", options={"gtol": 1e-11, "maxiter": 10000})
    model = ImportVectorMachine(kernel_width=width, lambdas=[lam], epsilon=0.0).fit(X, y)
    assert model.import_indices_.size == len(y)
    a = np.empty(len(y))
    a[model.import_indices_] = model.coef_
    np.testing.assert_allclose(a, reference.x, rtol=1e-6, atol=1e-6 * np.abs(reference.x).max())
    X_new = np.random.default_rng(5).normal(size=(40, 2)) * 2
    expected = 1.0 / (1.0 + np.exp(-rbf(X_new, X, width) @ reference.x))
    np.testing.assert_allclose(model.predict_proba(X_new)[:, 1], expected, atol=1e-8)
    assert model.objectives_[-1] == pytest.approx(reference.fun, rel=1e-10)


def _one_step_literally(K, y, mu, S, a, l):
    """H after one Newton step on the coefficients of S + [l] from (a, 0), the (k+1)-square
    system built and solved as it stands."""
    T = list(S) + [l]
    b = np.append(a, 0.0)
    f = K[:, T] @ b
    p = 1.0 / (1.0 + np.exp(-f))
    t = (y + 1) / 2
    gradient = K[:, T].T @ (p - t) + mu * K[np.ix_(T, T)] @ b
    hessian = K[:, T].T @ ((p * (1 - p))[:, None] * K[:, T]) + mu * K[np.ix_(T, T)]
    b = b - np.linalg.solve(hessian, gradient)
    f = K[:, T] @ b
    return np.sum(np.logaddexp(0.0, -y * f)) + 0.5 * mu * b @ K[np.ix_(T, T)] @ b


@pytest.mark.parametrize("imported", [[], [3], [3, 7, 0]])
def test_one_step_objectives_of_every_candidate_match_the_literal_newton_step(imported):
    X, y = _data(14, 1)
    K, mu = rbf(X, X, 1.1) + 0.5, 0.3
    model = fit_submodel(K, y, mu, imported)
    candidates = np.setdiff1d(np.arange(14), imported)
    fast = candidate_objectives(K, y, mu, model, candidates)
    literal = [_one_step_literally(K, y, mu, imported, model.a, l) for l in candidates]
    np.testing.assert_allclose(fast, literal, rtol=1e-9)
    # one Newton step cannot go below the candidate submodel's own minimum
    exact = [fit_submodel(K, y, mu, [*imported, l]).objective for l in candidates]
    assert np.all(fast >= np.array(exact) - 1e-9)


def test_greedy_choices_are_the_brute_force_ones():
    """Each step imports the row whose literal one-step objective is smallest, then refits;
    the reference refits with BFGS on the submodel's objective written out."""
    X, y = _data(12, 2)
    K, mu = rbf(X, X, 1.3), 0.2
    path = select_imports(K, y, mu, epsilon=0.0, max_imports=6)
    S, a = [], np.zeros(0)
    for _ in range(6):
        rest = [l for l in range(12) if l not in S]
        S.append(rest[int(np.argmin([_one_step_literally(K, y, mu, S, a, l) for l in rest]))])

        def submodel(b):
            f = K[:, S] @ b
            return (np.sum(np.logaddexp(0.0, -y * f))
                    + 0.5 * mu * b @ K[np.ix_(S, S)] @ b)

        a = minimize(submodel, np.zeros(len(S)), method="BFGS",
                     options={"gtol": 1e-10}).x
    assert path.submodel.indices.tolist() == S
    np.testing.assert_allclose(path.submodel.a, a, rtol=1e-5, atol=1e-7)


def test_selection_stops_by_zhu_and_hastie_rule():
    """Stops at the first k with |H_k - H_{k-1}| / |H_k| < epsilon, not before."""
    X, y = _data(60, 3)
    K = rbf(X, X, 1.5)
    path = select_imports(K, y, 0.5, epsilon=1e-2)
    H = path.objectives
    ratios = np.abs(np.diff(H)) / np.abs(H[1:])
    assert path.stopped_by_rule and ratios[-1] < 1e-2 and np.all(ratios[:-1] >= 1e-2)
    assert path.submodel.indices.size == len(H) - 1 < 60
    assert np.all(np.diff(H) < 0)  # each import lowers the objective


def test_lambda_is_the_first_with_the_fewest_tuning_errors_then_refitted_on_all_rows():
    X, y = _data(120, 4)
    model = ImportVectorMachine(lambdas=[1e-1, 1e-3, 1e-5], random_state=0).fit(X, y)
    assert model.lambdas_.tolist() == [1e-1, 1e-3, 1e-5]
    assert model.lambda_ == model.lambdas_[int(np.argmin(model.tuning_errors_))]
    alone = ImportVectorMachine(lambdas=[model.lambda_]).fit(X, y)
    assert alone.tuning_errors_.size == 0
    np.testing.assert_array_equal(alone.import_indices_, model.import_indices_)
    np.testing.assert_allclose(alone.coef_, model.coef_)
    X_test, y_test = _data(500, 5)
    assert np.mean(model.predict(X_test) == y_test) > 0.8


def test_sklearn_api_labels_and_bad_input():
    from sklearn.base import clone
    from sklearn.utils.estimator_checks import (
        check_get_params_invariance,
        check_no_attributes_set_in_init,
        check_parameters_default_constructible,
        check_set_params,
    )

    for check in (check_get_params_invariance, check_no_attributes_set_in_init,
                  check_parameters_default_constructible, check_set_params):
        check("ImportVectorMachine", ImportVectorMachine())
    X, y = _data(40, 6)
    labels = np.where(y > 0, "b", "a")
    model = clone(ImportVectorMachine(lambdas=[0.01], bias_variance=1.0)).fit(X, labels)
    assert set(model.predict(X)) <= {"a", "b"}
    np.testing.assert_allclose(model.predict_proba(X).sum(axis=1), 1.0)
    for bad, message in [({"lambdas": [0.0]}, "lambdas"), ({"epsilon": -1}, "epsilon"),
                         ({"delta_k": 0}, "delta_k"), ({"tuning_fraction": 1.0}, "tuning"),
                         ({"kernel_width": -2.0}, "kernel_width"),
                         ({"bias_variance": -1.0}, "bias_variance")]:
        with pytest.raises(ValueError, match=message):
            ImportVectorMachine(**bad).fit(X, y)
    with pytest.raises(ValueError, match="binary"):
        ImportVectorMachine().fit(X, np.arange(40) % 3)
