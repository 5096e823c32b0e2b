"""EM-EP: the bound F and its gradient (eqs. 29-31, 56-57) against finite differences and
direct evaluation, Theorem 1, monotone M-steps, Jensen's inequality against the exact
evidence and the learning loop."""

import math

import numpy as np
import pytest
from scipy import stats

from gpcbench.kernels.covariance import Covariance
from gpcbench.inference.ep import expectation_propagation
from gpcbench.estimators.ep_variants import HARD_THETA2, PAPER_INITIAL_VALUES
from gpcbench.learning.em_ep import (
    em_ep,
    entropy,
    lower_bound,
    m_step,
    prior_term,
    second_moment,
)
from gpcbench.likelihoods import GaussianLikelihood, NoisyThresholdLikelihood

TIGHT = {"tol": 1e-12, "site_tol": 1e-11, "max_sweeps": 2000}



def _data(n=40, d=3, seed=0, flip=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    X[:, -1] = rng.integers(0, 3, n)  # one discrete feature
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.4 * rng.standard_normal(n) > 0, 1.0, -1.0)
    y[:flip] *= -1
    return X, y


def _covariance(d, ard, theta2=0.1):
    scales = [0.5, 1.2, 0.3][:d] if ard else 0.6
    return Covariance(1.5, 0.2, theta2, scales, discrete_features=[False] * (d - 1) + [True])


@pytest.mark.parametrize("ard", [False, True])
def test_prior_term_value_and_gradient(ard):
    X, y = _data()
    cov = _covariance(3, ard)
    ep = expectation_propagation(cov(X), y, NoisyThresholdLikelihood(), **TIGHT)
    moment = second_moment(ep)
    value, grad = prior_term(cov, X, moment)
    # value: E_q[log N(f | 0, C)] = log N(h | 0, C) - 1/2 tr(C^-1 A), evaluated directly
    C = cov(X)
    direct = stats.multivariate_normal(np.zeros(len(y)), C).logpdf(ep.mean) - 0.5 * np.trace(
        np.linalg.solve(C, ep.posterior_covariance())
    )
    np.testing.assert_allclose(value, direct, rtol=1e-10)
    base, h = cov.log_params, 1e-6
    for k in range(cov.n_params):
        step = np.zeros_like(base)
        step[k] = h
        up = prior_term(cov.with_log_params(base + step), X, moment)[0]
        down = prior_term(cov.with_log_params(base - step), X, moment)[0]
        np.testing.assert_allclose(
            grad[k], (up - down) / (2 * h), rtol=1e-6, atol=1e-8, err_msg=cov.param_names[k]
        )


@pytest.mark.parametrize("ard", [False, True])
def test_theorem_1_bound_gradient_equals_evidence_gradient(ard):
    """Section 3.4: at the E-step's hyperparameters, grad F = grad log Z_EP."""
    X, y = _data(seed=1)
    cov = _covariance(3, ard)
    ep = expectation_propagation(cov(X), y, NoisyThresholdLikelihood(), **TIGHT)
    _, grad_f = prior_term(cov, X, second_moment(ep))
    np.testing.assert_allclose(grad_f, ep.log_evidence_gradient(cov, X), rtol=1e-7, atol=1e-9)


def test_entropy_matches_direct_log_determinant():
    X, y = _data(seed=2)
    cov = _covariance(3, False)
    ep = expectation_propagation(cov(X), y, NoisyThresholdLikelihood(), **TIGHT)
    sign, logdet = np.linalg.slogdet(2 * np.pi * np.e * ep.posterior_covariance())
    assert sign > 0
    np.testing.assert_allclose(entropy(ep), 0.5 * logdet, rtol=1e-10)


@pytest.mark.parametrize("ard, eps", [(False, 0.0), (True, 0.0), (False, 0.05)])
def test_m_step_increases_the_bound_and_reaches_a_stationary_point(ard, eps):
    X, y = _data(seed=3, flip=3)
    cov = _covariance(3, ard)
    lik = NoisyThresholdLikelihood(eps)
    ep = expectation_propagation(cov(X), y, lik, **TIGHT)
    moment = second_moment(ep)
    free = np.ones(cov.n_params, bool)
    new_cov, before, after, result = m_step(cov, X, moment, free, maxiter=1000)
    assert after > before + 1e-3
    np.testing.assert_allclose(before, prior_term(cov, X, moment)[0], rtol=1e-12)
    np.testing.assert_allclose(after, prior_term(new_cov, X, moment)[0], rtol=1e-12)
    f_before = lower_bound(cov, lik, X, y, ep)["F"]
    f_after = lower_bound(new_cov, lik, X, y, ep)["F"]
    assert (f_after > f_before) if eps > 0 else (f_before == f_after == -np.inf)
    _, grad = prior_term(new_cov, X, moment)
    interior = (new_cov.log_params > math.log(1e-10) + 1e-3) & (
        new_cov.log_params < math.log(1e6) - 1e-3
    )
    assert np.all(np.abs(grad[interior]) < 1e-3), (grad, result.message)


def _orthant(S):
    d = np.sqrt(np.diag(S))
    R = S / np.outer(d, d)
    if len(S) == 1:
        return 0.5
    if len(S) == 2:
        return 0.25 + math.asin(R[0, 1]) / (2 * math.pi)
    return 0.125 + (math.asin(R[0, 1]) + math.asin(R[0, 2]) + math.asin(R[1, 2])) / (4 * math.pi)


def _exact_log_evidence(C, y, eps):
    n, D, total = len(y), np.diag(y), 0.0
    for mask in range(1 << n):
        subset = [i for i in range(n) if mask >> i & 1]
        prob = _orthant((D @ C @ D)[np.ix_(subset, subset)]) if subset else 1.0
        total += eps ** (n - len(subset)) * (1 - 2 * eps) ** len(subset) * prob
    return math.log(total)


@pytest.mark.parametrize("seed", range(4))
def test_bound_is_below_the_exact_evidence(seed):
    """Jensen (eq. 29): F <= log p(y | X, theta) for any q, here the EP posterior."""
    rng = np.random.default_rng(seed)
    X, y = rng.standard_normal((3, 2)), rng.choice([-1.0, 1.0], 3)
    cov, lik = Covariance(1.0, 0.1, 0.2, 0.7), NoisyThresholdLikelihood(0.1)
    ep = expectation_propagation(cov(X), y, lik, **TIGHT)
    bound = lower_bound(cov, lik, X, y, ep)["F"]
    assert np.isfinite(bound) and bound <= _exact_log_evidence(cov(X), y, 0.1)


def test_em_ep_loop_records_a_consistent_trace():
    X, y = _data(n=60, seed=4, flip=2)
    start = _covariance(3, False, theta2=1e-3)
    res = em_ep(X, y, start, NoisyThresholdLikelihood(), max_iter=200, accelerate=False)
    assert res.converged and res.n_iter == len(res.trace) - 1
    log_z = [e["log_evidence"] for e in res.trace]
    assert log_z[-1] > log_z[0] + 1.0  # learning improves the evidence substantially
    assert (
        all(e["m_step_gain"] >= 0 for e in res.trace[:-1]) and res.trace[-1]["m_step_gain"] is None
    )
    assert res.trace[-1]["stop_reason"] == "gradient" and res.trace[-1]["gradient_norm"] <= 1e-2
    assert all(e["gradient_norm"] > 1e-2 for e in res.trace[:-1])
    assert res.trace[-1]["hyperparameters"] == {**res.covariance.to_dict(), "epsilon": 0.0}
    assert all(
        e["lower_bound"] == -np.inf and np.isfinite(e["lower_bound_prior"]) for e in res.trace
    )
    np.testing.assert_allclose(res.log_evidence, log_z[-1])
    # the final EP state belongs to the final hyperparameters
    again = expectation_propagation(res.covariance(X), y, NoisyThresholdLikelihood())
    np.testing.assert_allclose(again.log_evidence, res.log_evidence, atol=1e-3)
    # warm start from the result: converged at once
    warm = em_ep(X, y, res.covariance, NoisyThresholdLikelihood(), max_iter=60)
    assert warm.n_iter <= 2


def test_fixed_hyperparameters_stay_fixed_and_epsilon_is_learned():
    X, y = _data(n=60, seed=5, flip=6)
    start = _covariance(3, False, theta2=HARD_THETA2)
    res = em_ep(
        X,
        y,
        start,
        NoisyThresholdLikelihood(0.01),
        learn=("theta0", "inverse_lengthscale", "epsilon"),
        max_iter=40,
    )
    assert res.covariance.theta1 == start.theta1 and res.covariance.theta2 == HARD_THETA2
    assert res.covariance.theta0 != start.theta0
    assert 0.01 < res.likelihood.epsilon < 0.5
    bounds = [e["lower_bound"] for e in res.trace]
    assert all(np.isfinite(bounds))


def test_ard_switches_off_irrelevant_features():
    """Section 3.5.1's relevance data (signal strengthened to 1.5 y for a small, fast test):
    x1..x3 ~ N(1.5 y, 1) are relevant, x4..x6 ~ N(0, 1) are not."""
    rng = np.random.default_rng(0)
    n = 80
    y = rng.choice([-1.0, 1.0], n)
    X = np.column_stack(
        [rng.normal(1.5 * y, 1.0) for _ in range(3)] + [rng.normal(0, 1, n) for _ in range(3)]
    )
    values = {
        k: v for k, v in PAPER_INITIAL_VALUES.items() if k not in ("epsilon", "inverse_lengthscale")
    }
    start = Covariance(**values, inverse_lengthscale=np.full(6, 0.05))
    res = em_ep(X, y, start, NoisyThresholdLikelihood(), max_iter=60)
    scales = res.covariance.inverse_lengthscale
    assert scales[3:].max() < 0.5 * scales[:3].min(), scales


def test_gaussian_likelihood_em_learns_noise_and_matches_eq_39():
    rng = np.random.default_rng(7)
    X = rng.uniform(-3, 3, (50, 1))
    y = np.sin(X[:, 0]) + 0.3 * rng.standard_normal(50)
    start = Covariance(1.0, 0.1, 1e-6, 1.0)
    learn = ("theta0", "inverse_lengthscale", "noise_variance")
    res = em_ep(X, y, start, GaussianLikelihood(1.0), learn=learn, max_iter=100)
    noise = res.likelihood.noise_variance
    assert 0.03 < noise < 0.3  # true value 0.09
    K = res.covariance(X)
    exact = stats.multivariate_normal(np.zeros(50), K + noise * np.eye(50)).logpdf(y)
    np.testing.assert_allclose(res.log_evidence, exact, rtol=1e-10)
    assert res.log_evidence > res.trace[0]["log_evidence"]
