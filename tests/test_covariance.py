"""Covariance of eqs. 13-14: values against a literal double loop, gradients against finite
differences, the contraction against the explicit gradient stack."""

import math

import numpy as np
import pytest

from gpcbench.kernels.covariance import Covariance, hyperparameter_mask


def _literal(cov: Covariance, X, X2=None, discrete=None):
    """Eq. 13 element by element."""
    same = X2 is None
    X2 = X if same else X2
    d = X.shape[1]
    scales = np.broadcast_to(cov.inverse_lengthscale, (d,))
    discrete = np.zeros(d, bool) if discrete is None else discrete
    out = np.empty((len(X), len(X2)))
    for i in range(len(X)):
        for j in range(len(X2)):
            dist = 0.0
            for m in range(d):
                if discrete[m]:
                    dist += scales[m] * (X[i, m] != X2[j, m])
                else:
                    dist += scales[m] * (X[i, m] - X2[j, m]) ** 2
            out[i, j] = cov.theta0 * math.exp(-0.5 * dist) + cov.theta1
            if same and i == j:
                out[i, j] += cov.theta2
    return out


@pytest.fixture
def mixed_inputs():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((9, 4))
    X[:, 1] = rng.integers(0, 3, 9)  # discrete
    X[:, 2] = rng.integers(-1, 3, 9)  # discrete
    X[:, 3] = 50.0 + 3.0 * X[:, 3]  # offset continuous feature
    return X, np.array([False, True, True, False])


@pytest.mark.parametrize("scales", [0.7, [0.3, 1.1, 0.05, 2.0]])
def test_matches_literal_equation_13(mixed_inputs, scales):
    X, discrete = mixed_inputs
    cov = Covariance(1.7, 0.3, 0.05, scales, discrete_features=discrete)
    np.testing.assert_allclose(cov(X), _literal(cov, X, discrete=discrete), rtol=1e-12)
    np.testing.assert_array_equal(cov(X), cov(X).T)  # exactly symmetric, as Cholesky expects
    X2 = X[:4] + 0.1  # discrete values that X does not take
    np.testing.assert_allclose(cov(X2, X), _literal(cov, X2, X, discrete=discrete), rtol=1e-12)


def test_theta2_only_on_training_diagonal(mixed_inputs):
    X, discrete = mixed_inputs
    with_noise = Covariance(1.0, 0.1, 0.4, 0.5, discrete)
    without = Covariance(1.0, 0.1, 0.0, 0.5, discrete)
    np.testing.assert_allclose(with_noise(X) - without(X), 0.4 * np.eye(len(X)))
    np.testing.assert_allclose(with_noise(X, X), without(X, X))  # cross-covariance: no theta2
    np.testing.assert_allclose(with_noise.diag(X), np.diag(with_noise(X)))


def test_discrete_indices_equal_mask(mixed_inputs):
    X, discrete = mixed_inputs
    by_mask = Covariance(1.0, 0.1, 0.1, [0.3, 1.1, 0.05, 2.0], discrete)
    by_index = Covariance(1.0, 0.1, 0.1, [0.3, 1.1, 0.05, 2.0], [1, 2])
    np.testing.assert_array_equal(by_mask(X), by_index(X))


@pytest.mark.parametrize("scales", [0.4, [0.3, 1.1, 0.05, 0.02]])
def test_gradients_match_finite_differences(mixed_inputs, scales):
    X, discrete = mixed_inputs
    cov = Covariance(1.3, 0.2, 0.1, scales, discrete)
    grads = cov.gradients(X)
    base = cov.log_params
    h = 1e-6
    for k in range(cov.n_params):
        step = np.zeros_like(base)
        step[k] = h
        fd = (cov.with_log_params(base + step)(X) - cov.with_log_params(base - step)(X)) / (2 * h)
        np.testing.assert_allclose(grads[k], fd, rtol=1e-6, atol=1e-9, err_msg=cov.param_names[k])


@pytest.mark.parametrize("scales", [0.4, [0.3, 1.1, 0.05, 0.02]])
def test_contraction_equals_gradient_stack(mixed_inputs, scales):
    X, discrete = mixed_inputs
    cov = Covariance(1.3, 0.2, 0.1, scales, discrete)
    weight = np.random.default_rng(0).standard_normal((len(X), len(X)))
    stack = cov.gradients(X)
    expected = stack.reshape(len(stack), -1) @ weight.ravel()
    np.testing.assert_allclose(cov.gradient_contraction(X, weight), expected, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("log_scale", [200.0, 396.0])
def test_contraction_is_exact_where_every_correlation_underflows(log_scale):
    """At an inverse lengthscale so large that exp(-l d / 2) is 0 off the diagonal, every
    distance term is 0 (d_m(x, x) = 0 on it): the lengthscale's entry is 0, as the stack says,
    not rounding error times l (1e156 at l = e^396, which sent W&B's HMC trajectories over
    log l to overflow in the prior)."""
    X = np.sort(np.random.default_rng(0).uniform(-2, 2, (20, 1)), axis=0)
    weight = np.random.default_rng(1).standard_normal((20, 20))
    cov = Covariance(5.0, 0.01, 0.0, math.exp(log_scale))
    stack = cov.gradients(X)
    expected = stack.reshape(len(stack), -1) @ weight.ravel()
    contraction = cov.gradient_contraction(X, weight)
    assert expected[3] == 0.0 and contraction[3] == 0.0
    np.testing.assert_allclose(contraction, expected, rtol=1e-12)


def test_parameter_vector_round_trip():
    cov = Covariance(2.0, 0.5, 0.25, [0.1, 0.2, 0.3])
    assert cov.param_names[3:] == [f"inverse_lengthscale[{m}]" for m in range(3)]
    back = cov.with_log_params(cov.log_params)
    np.testing.assert_allclose(back.params, cov.params)
    assert cov.to_dict() == {
        "theta0": 2.0,
        "theta1": 0.5,
        "theta2": 0.25,
        "inverse_lengthscale": [0.1, 0.2, 0.3],
    }
    shared = Covariance(2.0, 0.5, 0.25, 0.1)
    assert shared.shared and shared.to_dict()["inverse_lengthscale"] == 0.1


def test_invalid_values_raise():
    with pytest.raises(ValueError):
        Covariance(-1.0, 0.0, 0.0, 1.0)
    with pytest.raises(ValueError):
        Covariance(1.0, 0.0, 0.0, [1.0, 2.0])(np.zeros((3, 3)))
    with pytest.raises(ValueError):
        Covariance(1.0, 0.0, np.nan, 1.0)


def test_mask_covers_every_ard_entry_of_a_named_hyperparameter():
    ard = Covariance(1.0, 0.5, 0.0, np.array([0.1, 0.2, 0.3]))
    assert ard.param_names[3:] == [f"inverse_lengthscale[{m}]" for m in range(3)]
    assert hyperparameter_mask(ard, ["theta0", "inverse_lengthscale"]).tolist() == [
        True, False, False, True, True, True]
    shared = Covariance(1.0, 0.5, 0.0, 0.1)
    assert hyperparameter_mask(shared, ["theta1"]).tolist() == [False, True, False, False]
    assert not hyperparameter_mask(shared, []).any()
