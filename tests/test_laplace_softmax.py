"""Softmax Laplace (Williams & Barber 1998, app. C) and Laplace-EM (Cho et al. 2015).

Independent checks: the Newton mode against a generic optimiser of the log posterior, every
block identity against dense (Cn x Cn) algebra, the evidence against the dense Laplace formula,
evidence and M-step gradients against finite differences, C = 2 against scikit-learn's binary
logistic Laplace, Monte Carlo probabilities against a high-sample reference."""

import numpy as np
import pytest
from scipy import linalg, optimize
from scipy.special import logsumexp, softmax
from sklearn_checks import assert_passes_check_estimator

from gpcbench.inference.laplace_softmax import (
    NEWTON_FLOOR_TOL,
    evidence_gradient,
    laplace_mode,
    latent_predictive,
    mc_class_probabilities,
    newton_direction,
    posterior_class_covariances,
    posterior_point_blocks,
)
from gpcbench.kernels.covariance import Covariance
from gpcbench.kernels.multiclass import SoftmaxCovariance
from gpcbench.learning.laplace_em import (
    expected_log_prior,
    expected_log_sum_exp,
    laplace_em,
    lower_bound,
    m_step,
    m_step_statistics,
)
from gpcbench.learning.mpl import penalised_objective
from gpcbench.models import (
    LaplaceEMGaussianProcessClassifier,
    SoftmaxLaplaceGaussianProcessClassifier,
)
from gpcbench.monitor import ConvergenceWarning


def _problem(n=14, C=3, seed=0, shared=False):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.normal(size=(n, 2)), rng.integers(0, 3, size=n)])
    y = np.argmax(X[:, :2] @ rng.normal(size=(2, C)) + 0.7 * rng.normal(size=(n, C)), axis=1)
    y[:C] = np.arange(C)  # every class present
    groups = tuple(Covariance(1.5 + 0.7 * c, 0.1 + 0.05 * c, 0.02, [0.6, 1.1 - 0.2 * c, 0.4],
                              discrete_features=[False, False, True])
                   for c in range(1 if shared else C))
    return X, np.eye(C)[y].T, SoftmaxCovariance(groups, C)


def dense(K, pi):
    """Dense block-diagonal K and W = diag(pi) - Pi Pi^T (W&B eq. 23), class-major order."""
    Pi = np.vstack([np.diag(p) for p in pi])
    return linalg.block_diag(*K), np.diag(pi.ravel()) - Pi @ Pi.T


def psi_dense(f, K, Y):
    f = f.reshape(Y.shape)
    return np.sum(Y * f) - np.sum(logsumexp(f, axis=0)) - 0.5 * f.ravel() @ np.linalg.solve(
        K, f.ravel())


@pytest.mark.parametrize("shared", [False, True])
def test_newton_mode_maximises_the_log_posterior(shared):
    X, Y, cov = _problem(shared=shared)
    K = cov(X)
    state = laplace_mode(K, Y)
    Kd = linalg.block_diag(*K)
    direct = optimize.minimize(lambda f: -psi_dense(f, Kd, Y), np.zeros(Y.size),
                               jac=lambda f: -(Y - softmax(f.reshape(Y.shape), axis=0)).ravel()
                               + np.linalg.solve(Kd, f), method="BFGS", options={"gtol": 1e-10})
    assert state.converged and state.n_iter < 15
    np.testing.assert_allclose(state.f.ravel(), direct.x, atol=1e-6)
    np.testing.assert_allclose(state.a, Y - state.pi, atol=1e-8)  # Cho eq. 25: K^-1 f = y - pi


@pytest.mark.parametrize("change", [-1.0, 0.0])
def test_newton_at_the_rounding_floor_reports_convergence_by_the_gradient(monkeypatch, change):
    """Where no halved step raises Psi (simulated: every step lowers it, or leaves it unchanged
    to the last bit, as measured on glass), Newton stops at once and is converged exactly when
    max |grad Psi| < NEWTON_FLOOR_TOL: at the mode, yes; at the start (a = 0), no."""
    from gpcbench.inference import laplace_softmax

    X, Y, cov = _problem()
    K = cov(X)
    mode = laplace_mode(K, Y)
    monkeypatch.setattr(laplace_softmax, "_damped_step",
                        lambda K, Y, a, step, psi: (a + step, None, psi + change))
    at_mode = laplace_mode(K, Y, mode.a, tol=0.0)
    at_start = laplace_mode(K, Y, tol=0.0)
    assert at_mode.n_iter == at_start.n_iter == 0
    assert np.max(np.abs(Y - at_mode.pi - at_mode.a)) < NEWTON_FLOOR_TOL and at_mode.converged
    assert np.max(np.abs(Y - at_start.pi - at_start.a)) > NEWTON_FLOOR_TOL
    assert not at_start.converged


def test_block_identities_equal_dense_algebra():
    """W&B eqs. 24-25 / GPML Alg. 3.3: every O(C n^3) quantity against (Cn) x (Cn) algebra."""
    X, Y, cov = _problem()
    K = cov(X)
    state = laplace_mode(K, Y)
    Kd, W = dense(K, state.pi)
    I = np.eye(Y.size)
    R = W @ np.linalg.inv(I + Kd @ W)  # (K + W^-1)^-1 without W^-1 (W is singular)
    V = np.linalg.inv(np.linalg.inv(Kd) + W)
    assert np.linalg.matrix_rank(W) == Y.size - Y.shape[1]  # W 1 = 0 at every point
    np.testing.assert_allclose(state.factors.logdet, np.linalg.slogdet(I + Kd @ W)[1], rtol=1e-12)
    v = np.random.default_rng(1).normal(size=Y.shape)
    np.testing.assert_allclose(state.factors.apply_R(v).ravel(), R @ v.ravel(), atol=1e-12)
    f_old = 0.3 * state.f
    pi_old = softmax(f_old, axis=0)
    _, W_old = dense(K, pi_old)
    target = np.linalg.solve(np.linalg.inv(Kd) + W_old, W_old @ f_old.ravel() + (Y - pi_old).ravel())
    from gpcbench.inference.laplace_softmax import block_factors
    a_new = newton_direction(K, Y, f_old, pi_old, block_factors(K, pi_old))
    np.testing.assert_allclose(Kd @ a_new.ravel(), target, atol=1e-10)  # Cho eq. 13
    n, C = Y.shape[1], Y.shape[0]
    blocks = posterior_point_blocks(K, state)
    for i in range(n):
        idx = np.arange(C) * n + i
        np.testing.assert_allclose(blocks[i], V[np.ix_(idx, idx)], atol=1e-12)
    for c, V_cc in enumerate(posterior_class_covariances(K, state)):
        np.testing.assert_allclose(V_cc, V[c * n:(c + 1) * n, c * n:(c + 1) * n], atol=1e-12)


def test_evidence_equals_the_dense_laplace_formula():
    """log q = Psi(f^) + Cn/2 log 2 pi - 1/2 log|K| - 1/2 log|K^-1 + W| (W&B eq. 9)."""
    X, Y, cov = _problem(seed=3)
    K = cov(X)
    state = laplace_mode(K, Y)
    Kd, W = dense(K, state.pi)
    psi = psi_dense(state.f.ravel(), Kd, Y)
    naive = psi - 0.5 * np.linalg.slogdet(Kd)[1] - 0.5 * np.linalg.slogdet(np.linalg.inv(Kd) + W)[1]
    assert state.log_evidence == pytest.approx(naive, abs=1e-9)


@pytest.mark.parametrize("shared", [False, True])
def test_evidence_gradient_matches_finite_differences(shared):
    X, Y, cov = _problem(seed=5, shared=shared)
    K = cov(X)
    grad = evidence_gradient(X, cov, K, laplace_mode(K, Y))
    log_params, h = cov.log_params, 1e-5
    fd = np.zeros_like(log_params)
    for index in np.ndindex(log_params.shape):
        step = np.zeros_like(log_params)
        step[index] = h
        up, down = (laplace_mode(cov.with_log_params(log_params + s)(X), Y).log_evidence
                    for s in (step, -step))
        fd[index] = (up - down) / (2 * h)
    np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-7)


def test_penalised_objective_adds_the_log_normal_prior():
    X, Y, cov = _problem(seed=6)
    objective = penalised_objective(X, Y, cov)
    x = cov.log_params[cov.learned_mask()]
    value, grad = objective(x)
    evidence = laplace_mode(cov(X), Y).log_evidence
    prior = np.sum(-0.5 * ((x + 3.0) / 3.0) ** 2)  # N(-3, 3^2) up to its constant
    assert -value == pytest.approx(evidence + prior, abs=1e-9)
    assert cov.learned_mask().sum() == 3 * 5 and not cov.learned_mask()[:, 2].any()
    fd = optimize.approx_fprime(x, lambda v: objective(v)[0], 1e-6)
    np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=1e-5)


def test_two_classes_shared_reduce_to_binary_logistic_laplace():
    """C = 2, K_0 = K_1 = K: g = f_1 - f_0 has prior 2K, h = f_0 + f_1 is independent of g a
    priori and absent from the likelihood sigma(g), so Laplace is exact in h and the softmax
    evidence and latent g-predictive equal binary logistic Laplace with covariance 2K
    (scikit-learn, an independent implementation of GPML Alg. 3.1-3.2)."""
    from sklearn.gaussian_process import GaussianProcessClassifier
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    rng = np.random.default_rng(4)
    X = rng.normal(size=(25, 2))
    y = (X[:, 0] + 0.8 * rng.normal(size=25) > 0).astype(int)
    theta0, theta1, theta2, scale = 1.3, 0.2, 0.05, 0.7
    cov = SoftmaxCovariance((Covariance(theta0, theta1, theta2, scale),), 2)
    Y = np.eye(2)[y].T
    state = laplace_mode(cov(X), Y)
    kernel = (ConstantKernel(2 * theta0) * RBF(1 / np.sqrt(scale)) + ConstantKernel(2 * theta1)
              + WhiteKernel(2 * theta2))
    binary = GaussianProcessClassifier(kernel, optimizer=None).fit(X, y)
    assert state.log_evidence == pytest.approx(binary.log_marginal_likelihood_value_, abs=1e-7)
    Xt = rng.normal(size=(6, 2))
    mean, S = latent_predictive(state, cov.cross(Xt, X), cov.diag(Xt), Y)
    b_mean, b_var = binary.latent_mean_and_variance(Xt)
    np.testing.assert_allclose(mean[:, 1] - mean[:, 0], b_mean, atol=1e-6)
    np.testing.assert_allclose(S[:, 1, 1] + S[:, 0, 0] - 2 * S[:, 0, 1], b_var, atol=1e-6)


def test_latent_predictive_equals_dense_cho_eq_28():
    X, Y, cov = _problem(seed=8)
    K = cov(X)
    state = laplace_mode(K, Y)
    Xt = np.random.default_rng(2).normal(size=(4, 3)).round()
    cross, prior = cov.cross(Xt, X), cov.diag(Xt)
    mean, S = latent_predictive(state, cross, prior, Y)
    Kd, W = dense(K, state.pi)
    R = W @ np.linalg.inv(np.eye(Y.size) + Kd @ W)
    for m in range(len(Xt)):
        Q = linalg.block_diag(*[cross[c, m][:, None] for c in range(Y.shape[0])])  # eq. 27
        np.testing.assert_allclose(mean[m], Q.T @ np.linalg.solve(Kd, state.f.ravel()), atol=1e-8)
        np.testing.assert_allclose(S[m], np.diag(prior[:, m]) - Q.T @ R @ Q, atol=1e-12)


def test_mc_probabilities_match_a_high_sample_reference():
    X, Y, cov = _problem(seed=9)
    state = laplace_mode(cov(X), Y)
    Xt = np.random.default_rng(3).normal(size=(5, 3)).round()
    mean, S = latent_predictive(state, cov.cross(Xt, X), cov.diag(Xt), Y)
    probs = mc_class_probabilities(mean, S, 1000, random_state=0)
    reference = mc_class_probabilities(mean, S, 400_000, random_state=1)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(probs, reference, atol=0.02)  # > 4 standard errors of 1000 draws
    one = mc_class_probabilities(mean[2:3], S[2:3], 1000, random_state=0)
    np.testing.assert_array_equal(one[0], probs[2])  # common draws: batch-independent


def test_m_step_gradient_matches_finite_differences():
    """Cho eq. 21 against central differences of eq. 20."""
    X, Y, cov = _problem(seed=10, shared=True)
    K = cov(X)
    state = laplace_mode(K, Y)
    (A, k), = m_step_statistics(cov, state.f, posterior_class_covariances(K, state))
    base = cov.groups[0]
    value, grad = expected_log_prior(X, base, A, k)
    fd = optimize.approx_fprime(
        base.log_params, lambda lp: expected_log_prior(X, base.with_log_params(lp), A, k)[0], 1e-6)
    np.testing.assert_allclose(grad, fd, rtol=1e-4, atol=1e-5)


def test_bound_terms_and_expected_log_sum_exp():
    """At Theta_t: E_q ln p(f) + H(q) = -1/2 a^T f + 1/2 tr((K + W^-1)^-1 K) - 1/2 ln|I + KW|
    (dense), and the control-variate Monte Carlo of E lse(f) agrees with plain Monte Carlo."""
    X, Y, cov = _problem(seed=11)
    K = cov(X)
    state = laplace_mode(K, Y)
    V = posterior_class_covariances(K, state)
    blocks = posterior_point_blocks(K, state)
    lse = expected_log_sum_exp(state.f.T, blocks)
    z = np.random.default_rng(7).standard_normal((200_000, Y.shape[0]))
    plain = [np.mean(logsumexp(m + z @ np.linalg.cholesky(B).T, axis=1))
             for m, B in zip(state.f.T, blocks)]
    np.testing.assert_allclose(lse, plain, atol=0.02)  # ~3 s.e. of BOUND_DRAWS = 2000
    Kd, W = dense(K, state.pi)
    R = W @ np.linalg.inv(np.eye(Y.size) + Kd @ W)
    closed = (-0.5 * np.sum(state.a * state.f) + 0.5 * np.trace(R @ Kd)
              - 0.5 * np.linalg.slogdet(np.eye(Y.size) + Kd @ W)[1])
    likelihood = np.sum(Y * state.f) - np.sum(lse)
    assert lower_bound(X, Y, cov, K, state, V) == pytest.approx(closed + likelihood, abs=1e-8)


def test_laplace_em_m_steps_raise_the_bound():
    """Every M-step raises eq. 19's F at fixed q (generalised EM); the traced gain is exact."""
    X, Y, cov = _problem(n=30, seed=12)
    result = laplace_em(X, Y, cov, max_iter=6, tol=1e-6, accelerate=False)
    gains = [entry["m_step_gain"] for entry in result.trace[1:]]
    assert len(result.trace) == result.n_iter + 1 == 7 and all(g >= 0 for g in gains)
    assert result.trace[-1]["log_evidence"] > result.trace[0]["log_evidence"]


def test_laplace_em_bound_is_non_decreasing_over_iterations():
    """The full sequence F(q_t, Theta_t) on this problem (it rises for 40 iterations here).

    Not a theorem: a Laplace E-step does not maximise F over q. On Cho et al.'s 4-class
    mixture (160 points, default start) F peaks at iteration 9 and falls at 90 of the 100
    iterations, while every M-step gain stays positive (measured, see the report)."""
    X, Y, cov = _problem(n=30, seed=12)
    bounds = [entry["lower_bound"]
              for entry in laplace_em(X, Y, cov, max_iter=10, accelerate=False).trace]
    assert np.all(np.diff(bounds) >= -1e-6), np.diff(bounds)


def _literal_em_step(X, Y, covariance):
    """CKP's E-step and M-step written out from the building blocks: the next K and bound."""
    K = covariance(X)
    state = laplace_mode(K, Y)
    V = posterior_class_covariances(K, state)
    moved, _ = m_step(X, covariance, m_step_statistics(covariance, state.f, V))
    return moved(X), lower_bound(X, Y, covariance, K, state, V)


@pytest.mark.parametrize("seed", [3, 12])
def test_converged_laplace_em_is_a_fixed_point_of_the_em_map(seed):
    """From the returned hyperparameters one more literal EM step moves K by at most xtol
    (relative to its largest entry; the residual is of the order of the last step); SQUAREM gets there in fewer M-steps than plain EM has
    taken when it is stopped at the same count, still moving."""
    X, Y, cov = _problem(n=30, seed=seed)
    fast = laplace_em(X, Y, cov, tol=1e-5, xtol=1e-5, max_iter=1000)
    assert fast.converged
    K = fast.covariance(X)
    K_next, _ = _literal_em_step(X, Y, fast.covariance)
    assert np.max(np.abs(K_next - K)) <= 2e-5 * np.max(np.abs(K))  # ~ the last step, <= xtol
    with pytest.warns(ConvergenceWarning):
        plain = laplace_em(X, Y, cov, tol=1e-5, xtol=1e-5, max_iter=fast.n_iter,
                           accelerate=False)
    assert not plain.converged


def test_estimators_fit_arbitrary_labels_and_record_state():
    rng = np.random.default_rng(13)
    index = np.repeat(np.arange(3), 10)
    X = 3.0 * np.eye(3)[index] + rng.normal(size=(30, 3))
    y = np.array(["u", "v", "w"])[index]
    mpl = SoftmaxLaplaceGaussianProcessClassifier(ard=True, max_iter=15, random_state=0).fit(X, y)
    em = LaplaceEMGaussianProcessClassifier(max_iter=4, random_state=0).fit(X, y)
    for model in (mpl, em):
        assert model.classes_.tolist() == ["u", "v", "w"]
        assert len(model.hyperparameters_) == 3 and model.n_iter_ >= 1 and model.trace_
        proba = model.predict_proba(X)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        assert np.mean(model.predict(X) == y) > 0.9
    assert len(mpl.hyperparameters_[0]["inverse_lengthscale"]) == 3
    assert mpl.trace_[-1]["log_evidence"] == pytest.approx(mpl.log_evidence_, abs=1e-6)
    with pytest.raises(ValueError, match="hyperparameter_learning"):
        SoftmaxLaplaceGaussianProcessClassifier(hyperparameter_learning="hmc").fit(X, y)


@pytest.mark.parametrize("estimator", [
    SoftmaxLaplaceGaussianProcessClassifier(hyperparameter_learning="fixed", random_state=0),
    SoftmaxLaplaceGaussianProcessClassifier(max_iter=2, n_draws=200, random_state=0),
    LaplaceEMGaussianProcessClassifier(max_iter=1, shared_hyperparameters=True, n_draws=200,
                                       random_state=0),
], ids=repr)
def test_sklearn_conformance(estimator):
    assert_passes_check_estimator(estimator)


def test_methods_are_registered():
    from gpcbench.experiments.registry import FitContext, method_spec

    ctx = FitContext(options={}, seed=3, n_jobs=1, feature_types=("continuous",) * 2, fold=0)
    mpl = method_spec("gpc-softmax-laplace-mpl")
    assert mpl.label == "Gaussian Process (LA, MPL)"  # W&B Table 3
    assert mpl.factory(ctx).get_params()["ard"] is True
    assert method_spec("gpc-laplace-em").factory(ctx).random_state == 3
