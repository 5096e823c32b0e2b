"""Fully MCMC GPC (Neal's method): exact invariance checks of both Gibbs blocks, a quadrature
reference for the predictive, convergence diagnostics and scikit-learn conformance."""

import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import expit
from sklearn_checks import assert_passes_check_estimator
from threadpoolctl import threadpool_limits

from gpcbench.kernels.covariance import Covariance
from gpcbench.mcmc.diagnostics import ess_bulk
from gpcbench.mcmc.gp_latent import (
    HyperConditional,
    SweepSettings,
    latent_updates,
    run_chain,
    softmax_log_likelihood,
)
from gpcbench.models import MCMCGaussianProcessClassifier
from gpcbench.priors import GaussianLogPrior


@pytest.fixture(autouse=True)
def _one_thread():
    with threadpool_limits(1):
        yield


def _inputs(n, d=1, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d))


# ---------------------------------------------------------------- step (i): ESS
def test_ess_leaves_the_gaussian_posterior_invariant():
    """Gaussian likelihood through the same ESS code: mean / cov of the closed-form posterior."""
    X, y, noise = _inputs(3), np.array([1.0, -0.5, 2.0]), 0.5
    K = Covariance(1.0, 0.1, 0.0, 1.0)(X) + 0.1 * np.eye(3)
    cov = np.linalg.inv(np.linalg.inv(K) + np.eye(3) / noise)
    mean = cov @ y / noise

    def log_lik(F):
        return -0.5 * float(np.sum((y - F[0]) ** 2)) / noise

    rng, F = np.random.default_rng(1), np.zeros((1, 3))
    chol, draws = np.linalg.cholesky(K)[None], []
    for _ in range(4000):
        F, _ = latent_updates(F, log_lik(F), chol, log_lik, 5, rng)
        draws.append(F[0])
    draws = np.array(draws)
    for i in range(3):
        ess = ess_bulk(draws[:, i])
        assert abs(draws[:, i].mean() - mean[i]) < 4.5 * math.sqrt(cov[i, i] / ess)
        spread = draws[:, i].var() / cov[i, i]
        assert abs(spread - 1.0) < 4.5 * math.sqrt(2.0 / ess)
    corr = np.corrcoef(draws.T)[0, 2]
    assert abs(corr - cov[0, 2] / math.sqrt(cov[0, 0] * cov[2, 2])) < 0.08


def test_ess_moves_every_softmax_latent_function():
    rng = np.random.default_rng(2)
    labels = np.array([0, 1, 2, 1])
    log_lik = softmax_log_likelihood(labels)
    chol = np.stack([np.linalg.cholesky(np.eye(4) + 0.5)] * 3)
    F, value = latent_updates(np.zeros((3, 4)), log_lik(np.zeros((3, 4))), chol, log_lik, 3, rng)
    assert F.shape == (3, 4) and np.all(F != 0.0) and value == pytest.approx(log_lik(F))


# ---------------------------------------------------------------- step (ii): x | F
def _conditional(X, learned, groups, F, jitter=0.1):
    covariance = Covariance(1.0, 0.05, 0.0, np.full(X.shape[1], 0.5))
    conditional = HyperConditional(covariance, X, learned, groups, GaussianLogPrior(), jitter)
    conditional.latents = F
    return conditional


def test_hyper_conditional_density_and_gradient():
    """log N(F | 0, K) + log prior against scipy, gradient against central differences."""
    X = _inputs(6, d=2)
    F = np.random.default_rng(3).standard_normal((3, 6))
    learned = np.array([True, True, False, True, True])
    conditional = _conditional(X, learned, np.array([0, 1, 0]), F)
    x = np.array([0.3, -2.0, -0.4, 0.2, -0.1, -3.5, 0.1, -1.0])
    value, gradient = conditional(x)
    expected = sum(stats.multivariate_normal(cov=conditional.covariances(x)[g](X)
                                             + 0.1 * np.eye(6)).logpdf(F[j])
                   for j, g in enumerate([0, 1, 0]))
    expected += stats.norm(-3.0, 3.0).logpdf(x).sum() + 0.5 * x.size * math.log(2 * math.pi * 9)
    assert value == pytest.approx(expected, rel=1e-10)
    step = 1e-6
    numeric = [(conditional(x + step * e)[0] - conditional(x - step * e)[0]) / (2 * step)
               for e in np.eye(x.size)]
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-6)


def test_hmc_with_latents_fixed_samples_the_exact_conditional():
    """1 free log hyperparameter (log theta0), F fixed (no latent updates): KS against the
    CDF of p(x | F) by quadrature, computed independently with scipy."""
    X = _inputs(5)
    learned = np.array([True, False, False, False])
    conditional = HyperConditional(Covariance(1.0, 0.05, 0.0, 0.5), X, learned,
                                   np.zeros(1, int), GaussianLogPrior(), 0.1)
    settings = SweepSettings(n_samples=1500, burn_in=0.1, thin=2, n_latent_updates=0,
                             n_leapfrog=4, step_size=0.5)
    chain = run_chain(conditional, lambda F: 0.0, np.array([0.0]), settings,
                      np.random.default_rng(4))
    F = chain.latents[0, 0]
    assert np.all(chain.latents == F)

    def density(x):
        cov = math.exp(x) * np.exp(-0.25 * (X - X.T) ** 2) + 0.05 + 0.1 * np.eye(5)
        return math.exp(stats.multivariate_normal(cov=cov).logpdf(F)
                        + stats.norm(-3.0, 3.0).logpdf(x))

    grid = np.linspace(-15.0, 10.0, 2001)
    pdf = np.array([density(x) for x in grid])
    cdf = integrate.cumulative_trapezoid(pdf, grid, initial=0.0)
    cdf /= cdf[-1]
    samples = chain.log_hyperparameters[:, 0]
    assert stats.kstest(samples, lambda s: np.interp(s, grid, cdf)).pvalue > 1e-3
    assert 0.5 < chain.acceptance_rate < 1.0


# ---------------------------------------------------------------- the estimator
def _exact_predictive(X, y, Xtest, covariance, jitter):
    """p(y* = +1 | y) for 2 training points, logistic likelihood, by 2-D quadrature."""
    K = covariance(X) + jitter * np.eye(2)
    grid = np.linspace(-9.0, 9.0, 361)
    f = np.stack(np.meshgrid(grid, grid, indexing="ij"), axis=-1).reshape(-1, 2)
    weight = (stats.multivariate_normal(cov=K).pdf(f)
              * expit(y[0] * f[:, 0]) * expit(y[1] * f[:, 1]))
    cross = covariance(Xtest, X)
    mean = f @ np.linalg.solve(K, cross.T)  # (grid, m)
    var = covariance.diag(Xtest) + jitter - np.einsum("ij,ji->i", cross, np.linalg.solve(K, cross.T))
    nodes, gh = np.polynomial.hermite_e.hermegauss(40)
    inner = expit(mean[..., None] + np.sqrt(var)[None, :, None] * nodes) @ gh / gh.sum()
    return weight @ inner / weight.sum()


def test_predictive_matches_quadrature_with_fixed_hyperparameters():
    X, y, Xtest = np.array([[-0.5], [0.7]]), np.array([-1.0, 1.0]), np.array([[-1.0], [0.1], [2.0]])
    clf = MCMCGaussianProcessClassifier(theta0=4.0, theta1=0.1, inverse_lengthscale=1.0,
                                        learned_hyperparameters=(), n_samples=3000, thin=2,
                                        n_latent_updates=2, n_leapfrog=1, random_state=0)
    proba = clf.fit(X, y).predict_proba(Xtest)[:, 1]
    exact = _exact_predictive(X, y, Xtest, Covariance(4.0, 0.1, 0.0, 1.0), 0.1)
    np.testing.assert_allclose(proba, exact, atol=0.015)
    assert clf.converged_


def test_predictive_close_to_laplace_mpl_when_hyperparameters_are_learned():
    from gpcbench.models import LaplaceGaussianProcessClassifier

    X = _inputs(40, d=2, seed=5)
    y = np.where(X[:, 0] - X[:, 1] + 0.4 * np.random.default_rng(5).standard_normal(40) > 0, 1, 0)
    Xtest = _inputs(20, d=2, seed=6)
    mcmc = MCMCGaussianProcessClassifier(ard=True, jitter=1e-3, n_samples=200,
                                         n_latent_updates=10, random_state=0).fit(X, y)
    laplace = LaplaceGaussianProcessClassifier(ard=True, hyperparameter_learning="mpl").fit(X, y)
    difference = np.abs(mcmc.predict_proba(Xtest) - laplace.predict_proba(Xtest))[:, 1]
    assert difference.mean() < 0.06 and difference.max() < 0.2
    assert np.all(mcmc.acceptance_rates_ > 0.7)


def test_rhat_flags_chains_started_apart_with_too_few_sweeps():
    X = _inputs(30, d=2, seed=7)
    y = X[:, 0] > 0
    clf = MCMCGaussianProcessClassifier(ard=True, n_samples=12, burn_in=0.0, n_chains=3,
                                        init_spread=6.0, n_latent_updates=2, step_size=0.01,
                                        random_state=0).fit(X, y)
    rhats = [s["rhat"] for s in clf.diagnostics_["log_hyperparameters"].values()]
    assert max(rhats) > 1.1 and not clf.converged_
    assert clf.samples_.shape == (3, 12, 4) and clf.n_iter_ == 12


@pytest.mark.parametrize("share", [True, False])
def test_multiclass_shapes_and_probabilities(share):
    X = _inputs(30, d=2, seed=8)
    y = np.array(["red", "green", "blue"])[np.digitize(X[:, 0], [-0.4, 0.4])]
    clf = MCMCGaussianProcessClassifier(n_samples=30, n_latent_updates=3, thin=2,
                                        share_class_hyperparameters=share,
                                        n_predictive_draws=200, random_state=1).fit(X, y)
    proba = clf.predict_proba(_inputs(7, d=2, seed=9))
    n_columns = 3 if share else 9
    assert clf.samples_.shape == (2, 10, n_columns) and len(clf.sample_names_) == n_columns
    assert clf.latents_.shape == (2, 10, 3, 30)
    assert proba.shape == (7, 3) and np.allclose(proba.sum(axis=1), 1.0)
    assert set(clf.predict(X)) <= {"red", "green", "blue"}
    assert isinstance(clf.hyperparameters_, dict if share else list)
    assert len(clf.trace_) == 2 * 15 and clf.trace_[0]["phase"] == "burn-in"


def test_too_few_kept_draws_is_an_error():
    with pytest.raises(ValueError, match="need >= 4"):
        MCMCGaussianProcessClassifier(n_samples=5).fit(_inputs(10), np.arange(10) % 2)


def test_sklearn_conformance():
    estimator = MCMCGaussianProcessClassifier(n_samples=12, n_latent_updates=2, n_leapfrog=2,
                                              n_predictive_draws=50, random_state=0)
    assert_passes_check_estimator(estimator)
