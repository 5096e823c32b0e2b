"""Laplace GPC (Williams & Barber 1998) and HMC, each against an independent computation:
finite differences, scipy optimisation and quadrature, dense-matrix formulas, scikit-learn's
Laplace GPC and known targets (the MCMC diagnostics: tests/test_diagnostics.py)."""

import numpy as np
import pytest
from scipy import integrate, optimize, special, stats
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel
from sklearn_checks import assert_passes_check_estimator

from gpcbench.inference.laplace import laplace_mode, log_evidence_gradient
from gpcbench.kernels.covariance import Covariance
from gpcbench.learning.mpl import LaplaceHyperposterior, maximize_penalized_likelihood
from gpcbench.likelihoods import ERF_SCALES, ERF_WEIGHTS, get_likelihood
from gpcbench.mcmc.diagnostics import ess_bulk
from gpcbench.mcmc.hmc import sample
from gpcbench.models import LaplaceGaussianProcessClassifier
from gpcbench.priors import GaussianLogPrior

LIKELIHOODS = ["logistic", "probit"]



def _problem(n=12, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.7 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def _psi(f, K, y, lik):
    """Psi(f) of W&B eq. 8 (no constants) with an explicit inverse: a slow literal version."""
    return np.sum(lik.derivatives(y, f)[0]) - 0.5 * f @ np.linalg.solve(K, f)


# ---------------------------------------------------------------- likelihoods
@pytest.mark.parametrize("name", LIKELIHOODS)
def test_likelihood_derivatives_match_finite_differences(name):
    lik = get_likelihood(name)
    f = np.linspace(-8, 8, 33)
    h = 1e-5
    for y in (-1.0, 1.0):
        out = lik.derivatives(y, f)
        for k in range(3):
            numeric = (lik.derivatives(y, f + h)[k] - lik.derivatives(y, f - h)[k]) / (2 * h)
            np.testing.assert_allclose(out[k + 1], numeric, rtol=1e-6, atol=1e-8)
    reference = special.log_expit if name == "logistic" else special.log_ndtr
    np.testing.assert_allclose(lik.derivatives(1.0, f)[0], reference(f))


@pytest.mark.parametrize("name", LIKELIHOODS)
def test_likelihood_is_finite_far_in_the_tails(name):
    out = np.array(get_likelihood(name).derivatives(1.0, np.array([-1e4, -40.0, 40.0, 1e4])))
    assert np.all(np.isfinite(out))
    assert np.all(out[2] <= 0)  # W >= 0: log-concave


def test_erf_expansion_approximates_the_logistic_to_1e_6():
    x = np.linspace(-50, 50, 200001)
    approx = special.ndtr(np.outer(x, ERF_SCALES)) @ ERF_WEIGHTS
    assert np.max(np.abs(approx - special.expit(x))) < 1.2e-6


@pytest.mark.parametrize("name", LIKELIHOODS)
def test_predictive_probability_matches_gauss_hermite(name):
    lik = get_likelihood(name)
    nodes, weights = np.polynomial.hermite_e.hermegauss(300)
    weights = weights / weights.sum()
    mean = np.array([-3.0, -0.5, 0.0, 0.4, 2.0, 5.0])
    for variance in (0.01, 0.5, 2.0, 6.0):
        f = mean[:, None] + np.sqrt(variance) * nodes[None, :]
        link = special.expit(f) if name == "logistic" else special.ndtr(f)
        np.testing.assert_allclose(lik.predictive_probability(mean, variance), link @ weights,
                                   rtol=0, atol=2e-6)


# ---------------------------------------------------------------- mode, Hessian, evidence
@pytest.mark.parametrize("name", LIKELIHOODS)
def test_mode_is_the_direct_maximiser_of_the_log_posterior(name):
    X, y = _problem()
    K = Covariance(2.0, 0.3, 0.1, 0.8)(X)
    lik = get_likelihood(name)
    result = laplace_mode(K, y, lik)
    direct = optimize.minimize(lambda f: -_psi(f, K, y, lik), np.zeros(y.size),
                               method="BFGS", options={"gtol": 1e-10})
    assert result.converged
    np.testing.assert_allclose(result.mode, direct.x, atol=1e-5)
    assert result.objective == pytest.approx(_psi(result.mode, K, y, lik), abs=1e-9)


@pytest.mark.parametrize("name", LIKELIHOODS)
def test_laplace_covariance_is_the_inverse_numerical_hessian(name):
    X, y = _problem(n=6)
    K = Covariance(1.5, 0.2, 0.1, 0.5)(X)
    lik = get_likelihood(name)
    result = laplace_mode(K, y, lik)
    h, n = 1e-4, y.size
    hessian = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            ei, ej = h * np.eye(n)[i], h * np.eye(n)[j]
            hessian[i, j] = (_psi(result.mode + ei + ej, K, y, lik)
                             - _psi(result.mode + ei - ej, K, y, lik)
                             - _psi(result.mode - ei + ej, K, y, lik)
                             + _psi(result.mode - ei - ej, K, y, lik)) / (4 * h * h)
    np.testing.assert_allclose(np.linalg.inv(-hessian), result.factor.covariance(), rtol=1e-5)


@pytest.mark.parametrize("name", LIKELIHOODS)
def test_evidence_equals_the_dense_laplace_formula(name):
    """log p(y|f^) + log N(f^|0,K) + n/2 log 2 pi - 1/2 log|K^-1 + W| with explicit matrices."""
    X, y = _problem(n=9)
    K = Covariance(1.0, 0.5, 0.2, 1.2)(X)
    lik = get_likelihood(name)
    result = laplace_mode(K, y, lik)
    log_lik, _, d2, _ = lik.derivatives(y, result.mode)
    precision = np.linalg.inv(K) + np.diag(-d2)
    dense = (log_lik.sum() + stats.multivariate_normal(np.zeros(y.size), K).logpdf(result.mode)
             + 0.5 * y.size * np.log(2 * np.pi) - 0.5 * np.linalg.slogdet(precision)[1])
    assert result.log_evidence == pytest.approx(dense, abs=1e-9)


@pytest.mark.parametrize("name", LIKELIHOODS)
def test_evidence_by_quadrature_for_one_and_two_points(name):
    """n = 1: the integral of exp(second-order expansion of the log joint) is the Laplace value
    exactly, and the exact evidence (quadrature) is close to it. n = 2: dblquad likewise."""
    lik = get_likelihood(name)
    K1 = np.array([[0.7]])
    result = laplace_mode(K1, np.array([1.0]), lik)
    f0, w = result.mode[0], -lik.derivatives(1.0, result.mode)[2][0]

    def log_joint(f):
        return lik.derivatives(1.0, f)[0] + stats.norm(0, np.sqrt(0.7)).logpdf(f)

    quadratic = integrate.quad(
        lambda f: np.exp(log_joint(f0) - 0.5 * (1 / 0.7 + w) * (f - f0) ** 2), -np.inf, np.inf)[0]
    exact = integrate.quad(lambda f: np.exp(log_joint(f)), -np.inf, np.inf)[0]
    assert result.log_evidence == pytest.approx(np.log(quadratic), abs=1e-9)
    assert result.log_evidence == pytest.approx(np.log(exact), abs=0.02)

    K2 = np.array([[1.0, 0.6], [0.6, 1.0]])
    y2 = np.array([1.0, -1.0])
    prior = stats.multivariate_normal(np.zeros(2), K2)
    exact2 = integrate.dblquad(
        lambda b, a: np.exp(np.sum(lik.derivatives(y2, np.array([a, b]))[0])
                            + prior.logpdf([a, b])), -12, 12, -12, 12)[0]
    assert laplace_mode(K2, y2, lik).log_evidence == pytest.approx(np.log(exact2), abs=0.05)


# ---------------------------------------------------------------- evidence gradient
def _finite_difference_gradient(covariance, X, y, lik, h=1e-5):
    x0 = covariance.log_params
    out = np.empty(x0.size)
    for j in range(x0.size):
        step = h * np.eye(x0.size)[j]
        up = laplace_mode(covariance.with_log_params(x0 + step)(X), y, lik).log_evidence
        down = laplace_mode(covariance.with_log_params(x0 - step)(X), y, lik).log_evidence
        out[j] = (up - down) / (2 * h)
    return out


def _explicit_gradient_only(covariance, X, result):
    """1/2 a^T dK a - 1/2 tr((K + W^-1)^-1 dK): Appendix B without the mode's dependence."""
    r_matrix = result.factor.site_kernel_inverse()
    return np.array([0.5 * result.alpha @ dK @ result.alpha - 0.5 * np.sum(r_matrix * dK)
                     for dK in covariance.gradients(X)])


@pytest.mark.parametrize("name", LIKELIHOODS)
@pytest.mark.parametrize("scales", [0.7, [0.4, 1.3, 0.9]])
def test_evidence_gradient_matches_finite_differences(name, scales):
    X, y = _problem(n=14, d=3, seed=3)
    X[:, 2] = np.round(X[:, 2])  # a discrete feature (eq. 14)
    covariance = Covariance(3.0, 0.4, 0.05, scales, discrete_features=[2])
    lik = get_likelihood(name)
    result = laplace_mode(covariance(X), y, lik)
    analytic = log_evidence_gradient(covariance, X, result)
    numeric = _finite_difference_gradient(covariance, X, y, lik)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", LIKELIHOODS)
def test_evidence_gradient_needs_the_implicit_term(name):
    """Without d f^/d theta (Appendix B) the gradient is measurably wrong."""
    X, y = _problem(n=14, d=2, seed=5)
    covariance = Covariance(4.0, 0.3, 0.02, [0.5, 1.5])
    lik = get_likelihood(name)
    result = laplace_mode(covariance(X), y, lik)
    numeric = _finite_difference_gradient(covariance, X, y, lik)
    explicit = _explicit_gradient_only(covariance, X, result)
    assert np.max(np.abs(explicit - numeric)) > 1e-3
    np.testing.assert_allclose(log_evidence_gradient(covariance, X, result), numeric,
                               rtol=1e-6, atol=1e-7)


def test_evidence_matches_scikit_learn_laplace_gpc():
    """scikit-learn's GaussianProcessClassifier is Laplace + logistic (GPML Alg. 3.1-3.2)."""
    X, y = _problem(n=40, d=2, seed=7)
    theta0, theta1, theta2, scale = 2.0, 0.3, 0.05, 0.6
    kernel = (ConstantKernel(theta0, "fixed") * RBF(1 / np.sqrt(scale), "fixed")
              + ConstantKernel(theta1, "fixed") + WhiteKernel(theta2, "fixed"))
    reference = GaussianProcessClassifier(kernel, optimizer=None).fit(X, y)
    result = laplace_mode(Covariance(theta0, theta1, theta2, scale)(X), y,
                          get_likelihood("logistic"))
    assert result.log_evidence == pytest.approx(reference.log_marginal_likelihood_value_,
                                                abs=1e-6)


# ---------------------------------------------------------------- HMC
def _check_moments(draws, mean, cov, n_sigma=4.5):
    """Sample mean within n_sigma Monte Carlo standard errors (ESS-based), covariance close."""
    for k in range(draws.shape[1]):
        se = np.sqrt(cov[k, k] / ess_bulk(draws[:, k]))
        assert abs(draws[:, k].mean() - mean[k]) < n_sigma * se
    np.testing.assert_allclose(np.cov(draws.T), cov, atol=0.15 * np.max(np.diag(cov)))


def test_hmc_samples_a_correlated_gaussian():
    cov = np.array([[1.0, 0.9], [0.9, 1.0]])
    precision = np.linalg.inv(cov)
    mean = np.array([1.0, -2.0])

    def target(x):
        return -0.5 * (x - mean) @ precision @ (x - mean), -precision @ (x - mean)

    warmup, retained = sample(target, np.zeros(2), n_samples=3000, n_leapfrog=10, rng=1)
    assert retained.samples.shape == (2000, 2) and warmup.samples.shape == (1000, 2)
    assert 1 - retained.acceptance_rate < 0.1
    _check_moments(retained.samples, mean, cov)


def test_hmc_samples_a_banana():
    """x1 ~ N(0, 1), x2 | x1 ~ N(b (x1^2 - 1), 1): mean 0, cov diag(1, 1 + 2 b^2)."""
    b = 0.5

    def target(x):
        if np.max(np.abs(x)) > 1e3:  # far out: density 0 (avoids overflow in x**2)
            return -np.inf, np.zeros(2)
        r = x[1] - b * (x[0] ** 2 - 1)
        return -0.5 * x[0] ** 2 - 0.5 * r**2, np.array([-x[0] + 2 * b * x[0] * r, -r])

    _, retained = sample(target, np.zeros(2), n_samples=4500, n_leapfrog=10, rng=2)
    _check_moments(retained.samples, np.zeros(2), np.diag([1.0, 1 + 2 * b**2]))


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_hmc_on_the_laplace_hyperposterior_matches_grid_moments():
    """W&B's HMC over log w of a 1-D GPC: sample mean and variance against the normalised
    posterior evaluated on a fine grid (the posterior mean is > 10 s.e. from the prior's).
    Warm-up steps reach log w ~ 400; no gradient there may overflow the next point's prior."""
    rng = np.random.default_rng(0)
    X = np.sort(rng.uniform(-2, 2, (20, 1)), axis=0)
    y = np.where(np.sin(3 * X[:, 0]) > 0, 1.0, -1.0)
    covariance = Covariance(theta0=5.0, theta1=0.01, theta2=0.0, inverse_lengthscale=1.0)
    posterior = LaplaceHyperposterior(covariance, X, y, get_likelihood("logistic"),
                                      np.array([False, False, False, True]),
                                      GaussianLogPrior(0.0, 1.5))
    grid = np.linspace(-6.0, 6.0, 241)
    log_density = np.array([posterior(np.array([x]))[0] for x in grid])
    weights = np.exp(log_density - log_density.max())
    weights /= weights.sum()
    mean = weights @ grid
    variance = weights @ (grid - mean) ** 2
    _, retained = sample(posterior, np.zeros(1), n_samples=600, n_leapfrog=4, step_size=0.5,
                         rng=3)
    draws = retained.samples[:, 0]
    se = np.sqrt(variance / ess_bulk(draws))
    assert abs(mean) > 10 * se  # the data move the posterior away from the prior mean 0
    assert abs(draws.mean() - mean) < 4 * se
    assert abs(draws.var() / variance - 1) < 0.35


def test_hmc_rejects_trajectories_through_non_finite_density():
    def target(x):  # N(0, 1) truncated to x < 1
        return (-0.5 * x @ x, -x) if x[0] < 1 else (-np.inf, np.zeros(1))

    _, retained = sample(target, np.zeros(1), n_samples=600, n_leapfrog=5, rng=3)
    assert np.all(retained.samples < 1) and retained.acceptance_rate < 1


# ---------------------------------------------------------------- MPL
def test_mpl_optimum_is_stationary_and_beats_nearby_points():
    X, y = _problem(n=40, d=3, seed=9)
    covariance = Covariance(1.0, np.exp(-3), 0.0, np.full(3, np.exp(-2)))
    learned = np.array([True, True, False, True, True, True])
    posterior = LaplaceHyperposterior(covariance, X, y, get_likelihood("logistic"), learned,
                                      GaussianLogPrior(-3.0, 3.0))
    result = maximize_penalized_likelihood(posterior)
    value, gradient = posterior(result.x)
    assert result.converged
    assert np.all(np.abs(result.x) < 15)  # an interior optimum
    assert np.linalg.norm(gradient) < 1e-3
    rng = np.random.default_rng(0)
    for _ in range(10):
        assert posterior(result.x + 0.05 * rng.standard_normal(result.x.size))[0] < value
    assert result.trace[-1]["log_posterior"] == pytest.approx(value)
    assert value > result.trace[0]["log_posterior"]


def test_log_prior_is_the_gaussian_log_density_up_to_a_constant():
    prior = GaussianLogPrior(-3.0, 3.0)
    x = np.array([-5.0, 0.5, 2.0])
    expected = stats.norm(-3, 3).logpdf(x).sum() - stats.norm(-3, 3).logpdf(-3.0) * 3
    assert prior(x)[0] == pytest.approx(expected)
    np.testing.assert_allclose(prior(x)[1], -(x + 3) / 9)


# ---------------------------------------------------------------- estimator
@pytest.mark.parametrize(
    "estimator",
    [
        LaplaceGaussianProcessClassifier(max_iter=5),
        LaplaceGaussianProcessClassifier(likelihood="probit", hyperparameter_learning="fixed",
                                         ard=True),
        LaplaceGaussianProcessClassifier(hyperparameter_learning="hmc", n_samples=6,
                                         n_leapfrog=2, random_state=0),
    ],
    ids=repr,
)
def test_sklearn_conformance(estimator):
    assert_passes_check_estimator(estimator)


def test_more_than_two_classes_is_an_error():
    X, _ = _problem(n=30)
    with pytest.raises(ValueError, match="Only binary classification"):
        LaplaceGaussianProcessClassifier().fit(X, np.arange(30) % 3)


def test_fixed_fit_predicts_like_scikit_learn():
    X, y = _problem(n=50, d=2, seed=11)
    Xt, _ = _problem(n=20, d=2, seed=12)
    kernel = (ConstantKernel(2.0, "fixed") * RBF(1 / np.sqrt(0.6), "fixed")
              + ConstantKernel(0.3, "fixed") + WhiteKernel(0.05, "fixed"))
    reference = GaussianProcessClassifier(kernel, optimizer=None).fit(X, y)
    ours = LaplaceGaussianProcessClassifier(2.0, 0.3, 0.05, 0.6,
                                            hyperparameter_learning="fixed").fit(X, y)
    # scikit-learn integrates the logistic with GPML's five-term expansion (error ~1e-4)
    np.testing.assert_allclose(ours.predict_proba(Xt), reference.predict_proba(Xt), atol=5e-4)
    np.testing.assert_array_equal(ours.predict(Xt), reference.predict(Xt))


def test_hmc_fit_records_samples_and_diagnostics():
    X, y = _problem(n=30, d=2, seed=13)
    clf = LaplaceGaussianProcessClassifier(ard=True, hyperparameter_learning="hmc",
                                           n_samples=30, n_leapfrog=5, random_state=0)
    clf.fit(X, y)
    assert clf.samples_.shape == (20, 5) and clf.mode_weights_.shape == (20, 30)
    assert np.all(clf.samples_[:, 2] == -np.inf)  # theta2 = 0 stays fixed
    assert 0 < clf.acceptance_rate_ <= 1 and len(clf.trace_) == 30
    assert set(clf.diagnostics_["log_hyperparameters"]) == {
        "theta0", "theta1", "inverse_lengthscale[0]", "inverse_lengthscale[1]"}
    single = LaplaceGaussianProcessClassifier(hyperparameter_learning="fixed").set_params(
        theta0=np.exp(clf.samples_[0, 0]), theta1=np.exp(clf.samples_[0, 1]), ard=True,
        inverse_lengthscale=np.exp(clf.samples_[0, 3:])).fit(X, y)
    average = np.mean([
        single.set_params(theta0=np.exp(s[0]), theta1=np.exp(s[1]),
                          inverse_lengthscale=np.exp(s[3:])).fit(X, y).predict_proba(X)
        for s in clf.samples_], axis=0)
    np.testing.assert_allclose(clf.predict_proba(X), average, atol=1e-10)


@pytest.mark.parametrize("success, nit, newton, message", [
    (False, 50, True, r"^M: L-BFGS-B stopped at its cap of 50 iterations without converging"),
    (False, 12, True, r"^M: L-BFGS-B stopped without converging: ABNORMAL"),
    (True, 12, False, r"^M: the Newton search for the posterior mode did not converge"),
])
def test_unconverged_mpl_warns_naming_what_did_not_converge(success, nit, newton, message):
    """Only a fit that used up its iterations is said to have stopped at its cap (a nearly
    separable data set, theta0 -> infinity, leaves the inner Newton search unconverged)."""
    import types
    import warnings

    from sklearn.exceptions import ConvergenceWarning

    from gpcbench.learning.mpl import warn_unconverged

    optimum = types.SimpleNamespace(success=success, nit=nit, message="ABNORMAL_TERMINATION")
    with pytest.warns(ConvergenceWarning, match=message):
        warn_unconverged("M", optimum, newton, max_iter=50)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warn_unconverged("M", types.SimpleNamespace(success=True, nit=3, message=""), True, 50)
