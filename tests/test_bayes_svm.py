"""Tests of the BSVM / CSVM sampler and estimators (Mallick, Ghosh & Ghosh 2005, as run by
Zhang, Dai & Jordan 2011): the chain's stationary distribution against brute-force numerical
integration of the model's density, the likelihoods' normalisation, reproducibility, accuracy
on a separable problem and input validation."""

import itertools

import numpy as np
import pytest
from scipy import integrate, stats
from sklearn_checks import assert_passes_check_estimator

from gpcbench.estimators.bayes_svm import BayesianSVMClassifier, CompleteSVMClassifier
from gpcbench.kernels.rbf import rbf
from gpcbench.mcmc import bayes_svm
from gpcbench.mcmc.diagnostics import ess_bulk

LIKELIHOODS = ("bsvm", "csvm")
Z_TOL = 4.5  # Monte Carlo standard errors allowed between the chain and the reference


def _design(X, width=1.0):
    return np.column_stack([np.ones(len(X)), rbf(X, X, width)])


def _grid(n, half, m):
    g = np.linspace(-half, half, m)
    return np.stack(np.meshgrid(*[g] * n, indexing="ij"), -1).reshape(-1, n)


def _reference_fixed(Kt, y, likelihood, sigma2, lam, d0, half=8.0, m=161):
    """Posterior mean and variance of f = Kt beta with sigma^2 and lambda fixed, by summing
    the density of z on a grid: beta integrated out, z ~ N(0, sigma^2 S) a priori with
    S = I + Kt D^-1 Kt', then E[f | z] = H z and Var(f | z) = sigma^2 H with
    H = Kt (Kt'Kt + D)^-1 Kt' = I - S^-1 (Woodbury)."""
    n = len(y)
    S = np.eye(n) + Kt @ np.diag(1.0 / np.r_[d0, lam]) @ Kt.T
    H = np.eye(n) - np.linalg.inv(S)
    Z = _grid(n, half, m)
    log_w = (bayes_svm.log_likelihood(y, Z, likelihood).sum(axis=1)
             - 0.5 * np.einsum("ki,ij,kj->k", Z, np.linalg.inv(sigma2 * S), Z))
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    mean_z = w @ Z
    cov_z = (Z * w[:, None]).T @ Z - np.outer(mean_z, mean_z)
    return H @ mean_z, np.diag(sigma2 * H + H @ cov_z @ H.T)


def _reference_full(Kt, y, likelihood, priors, shrinkage, half=14.0, m=181,
                    log_lambdas=(-6.0, 4.5, 36)):
    """Posterior mean and variance of f under the full hierarchy (n = 2): beta and sigma^2
    integrated out analytically, z (2-D) and log lambda (1 or 2 dimensions) on a grid.
    p(z, lambda | y) is prop. to prod_i p(y_i | z_i) Ga(lambda) |S|^-1/2
    (b_sigma + z'S^-1 z / 2)^-(a_sigma + n/2), and E[sigma^2 | z, lambda] =
    (b_sigma + z'S^-1 z / 2) / (a_sigma + n/2 - 1)."""
    n = len(y)
    a, b = priors.a_sigma, priors.b_sigma
    Z = _grid(n, half, m)
    log_lik = bayes_svm.log_likelihood(y, Z, likelihood).sum(axis=1)
    grid = np.linspace(*log_lambdas)
    top, mass, first, second = -np.inf, 0.0, np.zeros(n), np.zeros(n)
    for logs in itertools.product(grid, repeat=n if shrinkage == "multiple" else 1):
        lam = np.broadcast_to(np.exp(logs), (n,))
        S = np.eye(n) + Kt @ np.diag(1.0 / np.r_[priors.intercept_precision, lam]) @ Kt.T
        S_inv = np.linalg.inv(S)
        H = np.eye(n) - S_inv
        q = np.einsum("ki,ij,kj->k", Z, S_inv, Z)
        log_prior = priors.a_lambda * np.sum(logs) - priors.b_lambda * np.exp(logs).sum()
        log_w = (log_lik + log_prior - 0.5 * np.linalg.slogdet(S)[1]
                 - (a + n / 2) * np.log(b + q / 2))
        if log_w.max() > top:  # rescale the running sums to the new maximum
            scale = np.exp(top - log_w.max())
            mass, first, second, top = mass * scale, first * scale, second * scale, log_w.max()
        w = np.exp(log_w - top)
        HZ = Z @ H.T
        mean_s2 = (b + q / 2) / (a + n / 2 - 1)
        mass += w.sum()
        first += w @ HZ
        second += w @ (HZ**2 + mean_s2[:, None] * np.diag(H))
    mean = first / mass
    return mean, second / mass - mean**2


def _chain_moments(Kt, y, likelihood, priors, n_sweeps, seed, **options):
    """Posterior mean and variance of f from one chain, with their Monte Carlo standard
    errors (ESS of f and of (f - mean)^2)."""
    chain = bayes_svm.run_chain(Kt, y, likelihood, priors, (n_sweeps, 2000, 1),
                                np.random.default_rng(seed), **options)
    F = chain.coef @ Kt.T
    mean, var = F.mean(axis=0), F.var(axis=0)
    sq = (F - mean) ** 2
    se_mean = [F[:, i].std() / np.sqrt(ess_bulk(F[:, i])) for i in range(len(y))]
    se_var = [sq[:, i].std() / np.sqrt(ess_bulk(sq[:, i])) for i in range(len(y))]
    return mean, var, np.array(se_mean), np.array(se_var), chain


# --- (a) stationary distribution -----------------------------------------------------------


@pytest.mark.parametrize("likelihood", LIKELIHOODS)
def test_chain_matches_grid_integration_with_sigma2_and_lambda_fixed(likelihood):
    """n = 3, sigma^2 and the lambdas held fixed: the posterior mean and variance of f at the
    training points agree with a 3-D grid integration over z within Monte Carlo error, and
    the other likelihood's reference does not (the comparison can fail)."""
    X, y = np.array([[-1.0], [0.3], [1.2]]), np.array([1.0, -1.0, 1.0])
    Kt, sigma2, lam = _design(X), 0.6, np.array([1.5, 0.8, 1.2])
    priors = bayes_svm.Priors(intercept_precision=1.0)
    mean, var, se_mean, se_var, chain = _chain_moments(Kt, y, likelihood, priors, 100_000, 1,
                                                       sigma2=sigma2, lam=lam)
    ref_mean, ref_var = _reference_fixed(Kt, y, likelihood, sigma2, lam, 1.0)
    assert np.all(np.abs(mean - ref_mean) < Z_TOL * se_mean), (mean, ref_mean, se_mean)
    assert np.all(np.abs(var - ref_var) < Z_TOL * se_var + 0.01 * ref_var), (var, ref_var)
    other = _reference_fixed(Kt, y, "csvm" if likelihood == "bsvm" else "bsvm", sigma2, lam, 1.0)
    assert np.max(np.abs(mean - other[0]) / se_mean) > Z_TOL + 2  # would fail, by a margin
    assert 0.5 < chain.z_accepted / chain.z_proposed < 1.0
    np.testing.assert_array_equal(chain.sigma2, sigma2)  # held fixed


@pytest.mark.parametrize("likelihood, shrinkage, scale_step",
                         [("bsvm", "single", 0.0), ("csvm", "multiple", 0.0),
                          ("bsvm", "multiple", 0.3)])
def test_chain_matches_grid_integration_of_the_full_hierarchy(likelihood, shrinkage,
                                                              scale_step):
    """n = 2 with sigma^2 and lambda sampled (and the optional scale move): the mean and
    variance of f agree with a grid integration over (z, log lambda) with beta and sigma^2
    integrated out analytically."""
    X, y = np.array([[-0.4], [0.7]]), np.array([1.0, -1.0])
    Kt = _design(X)
    priors = bayes_svm.Priors(a_sigma=5.0, b_sigma=4.0, a_lambda=2.0, b_lambda=2.0,
                              intercept_precision=1.0)
    mean, var, se_mean, se_var, chain = _chain_moments(Kt, y, likelihood, priors, 80_000, 2,
                                                       shrinkage=shrinkage,
                                                       scale_step=scale_step)
    ref_mean, ref_var = _reference_full(Kt, y, likelihood, priors, shrinkage)
    assert np.all(np.abs(mean - ref_mean) < Z_TOL * se_mean), (mean, ref_mean, se_mean)
    assert np.all(np.abs(var - ref_var) < Z_TOL * se_var + 0.01 * ref_var), (var, ref_var)
    assert chain.lam.shape[1] == (2 if shrinkage == "multiple" else 1)
    if scale_step:
        assert 0.2 < chain.scale_accepted / chain.scale_proposed < 1.0


def test_beta_step_draws_its_gaussian_conditional():
    """Step 1 alone: mean A^-1 Kt'z and covariance sigma^2 A^-1, A = Kt'Kt + D."""
    rng = np.random.default_rng(3)
    M = rng.normal(size=(5, 5))
    KtK, Ktz, d = M @ M.T, rng.normal(size=5), np.array([0.01, 0.5, 1.0, 2.0, 3.0])
    draws = np.array([bayes_svm._draw_beta(KtK, Ktz, d, 2.0, rng, 0) for _ in range(40_000)])
    A = KtK + np.diag(d)
    cov = 2.0 * np.linalg.inv(A)
    se = np.sqrt(np.diag(cov) / len(draws))
    assert np.all(np.abs(draws.mean(axis=0) - np.linalg.solve(A, Ktz)) < 5 * se)
    np.testing.assert_allclose(np.cov(draws.T), cov, atol=0.05 * np.abs(cov).max())


# --- (b) likelihoods -------------------------------------------------------------------------


@pytest.mark.parametrize("likelihood", LIKELIHOODS)
def test_outcome_probabilities_sum_to_one_and_stay_finite(likelihood):
    z = np.r_[np.linspace(-6, 6, 1201), -1e3, 1e3, -1e300, 1e300]
    minus, plus, unknown = bayes_svm.outcome_probabilities(z, likelihood)
    np.testing.assert_allclose(minus + plus + unknown, 1.0, rtol=0, atol=1e-14)
    assert np.all((minus >= 0) & (plus >= 0) & (unknown >= -1e-16))
    for y in (-1.0, 1.0):
        log_p = bayes_svm.log_likelihood(y, np.array([-1e3, 1e3]), likelihood)
        assert np.all(np.isfinite(log_p))
        shift = 0.0 if likelihood == "bsvm" else bayes_svm.LOG_KAPPA
        # the wrong side pays the hinge 1 + 1e3; the right side pays nothing (Q(+-1e3) = 1)
        np.testing.assert_allclose(log_p, shift + (np.r_[-1001.0, 0.0] if y > 0
                                                   else np.r_[0.0, -1001.0]), rtol=1e-15)


def test_bsvm_likelihood_is_mgg_piecewise_logistic():
    """p(y | z) = 1 / (1 + exp(-2 y z)) for |z| <= 1, 1 / (1 + exp(-y (z + sgn z))) beyond."""
    z = np.linspace(-5, 5, 1001)
    for y in (-1.0, 1.0):
        expected = np.where(np.abs(z) <= 1, 1 / (1 + np.exp(-2 * y * z)),
                            1 / (1 + np.exp(-y * (z + np.sign(z)))))
        np.testing.assert_allclose(np.exp(bayes_svm.log_likelihood(y, z, "bsvm")), expected,
                                   rtol=1e-12)


def test_csvm_dont_know_mass_vanishes_exactly_at_the_margins():
    _, _, unknown = bayes_svm.outcome_probabilities(np.array([-1.0, 0.0, 1.0, 50.0]), "csvm")
    np.testing.assert_allclose(unknown[[0, 2]], 0.0, atol=1e-15)
    np.testing.assert_allclose(unknown[1], 1 - 2 * np.exp(-1) / (1 + np.exp(-2)), rtol=1e-14)
    np.testing.assert_allclose(unknown[3], 1 - 1 / (1 + np.exp(-2)), rtol=1e-12)


@pytest.mark.parametrize("m, s", [(0.0, 0.3), (0.9, 0.05), (-2.5, 1.7), (1.1, 6.0), (40.0, 2.0)])
def test_predictive_integrals_match_adaptive_quadrature(m, s):
    lo, hi = m - 14 * s, m + 14 * s
    cuts = sorted({lo, hi, *[c for c in (-1.0, 1.0) if lo < c < hi]})

    def expect(g):
        return sum(integrate.quad(lambda z: g(z) * stats.norm.pdf(z, m, s), a, b,
                                  epsabs=1e-14, epsrel=1e-12)[0]
                   for a, b in zip(cuts[:-1], cuts[1:]))

    bsvm = expect(lambda z: np.exp(bayes_svm.log_likelihood(1.0, z, "bsvm")))
    got = bayes_svm.bsvm_positive(m, s * s, bayes_svm.legendre_rule())
    assert abs(got - bsvm) < 1e-8
    num = expect(lambda z: np.exp(-bayes_svm.hinge(z)))
    den = num + expect(lambda z: np.exp(-bayes_svm.hinge(-z)))
    log_num, log_den = bayes_svm.csvm_predictive_logs(m, s * s)
    np.testing.assert_allclose(np.exp([log_num, log_den]), [num, den], rtol=1e-9)


# --- estimators: (c) reproducibility, (d) accuracy, (e) validation ---------------------------


def _ring(n, seed):
    """Inner disk (radius < 1) against an outer ring (1.6 to 2.5): separable, not linearly."""
    rng = np.random.default_rng(seed)
    r = np.where(rng.random(n) < 0.5, rng.uniform(0, 1, n), rng.uniform(1.6, 2.5, n))
    angle = rng.uniform(0, 2 * np.pi, n)
    return np.column_stack([r * np.cos(angle), r * np.sin(angle)]), np.where(r < 1.3, "in", "out")


FAST = {"n_sweeps": 400, "burn_in": 200, "thin": 2}


@pytest.mark.parametrize("cls", [BayesianSVMClassifier, CompleteSVMClassifier])
def test_same_seed_same_draws_different_seed_different_draws(cls):
    X, y = _ring(40, 0)
    a = cls(**FAST, random_state=7).fit(X, y)
    b = cls(**FAST, random_state=7).fit(X, y)
    c = cls(**FAST, random_state=8).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))
    assert not np.allclose(a.coef_, c.coef_)
    assert not np.array_equal(a.sigma2_, c.sigma2_)


@pytest.mark.parametrize("cls", [BayesianSVMClassifier, CompleteSVMClassifier])
def test_separable_ring_is_learned(cls):
    X, y = _ring(80, 0)
    X_test, y_test = _ring(400, 1)
    model = cls(**FAST, random_state=0).fit(X, y)
    assert np.mean(model.predict(X_test) != y_test) < 0.10
    proba = model.predict_proba(X_test)
    assert proba.shape == (400, 2) and np.all(np.isfinite(proba))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert list(model.classes_) == ["in", "out"]
    n_kept = 2 * (FAST["n_sweeps"] - FAST["burn_in"]) // FAST["thin"]
    assert model.coef_.shape == (n_kept, 81) and model.lambda_.shape == (n_kept, 80)
    assert set(model.diagnostics_) >= {"beta0", "sigma2", "log_lambda", "probe_probability",
                                       "brooks_burn_in", "z_acceptance"}
    assert set(model.diagnostics_["sigma2"]) == {"rhat", "ess_bulk", "ess_tail",
                                                 "brooks_burn_in", "brooks_thin"}
    assert set(model.diagnostics_["probe_probability"]) == {"max_rhat", "min_ess_bulk",
                                                            "min_ess_tail"}
    assert model.samples_["sigma2"].shape == (2, n_kept // 2)


@pytest.mark.parametrize("params", [
    {"thin": 0}, {"burn_in": 500, "n_sweeps": 400}, {"n_sweeps": 10.5}, {"n_chains": 0},
    {"kernel_width": -1.0}, {"kernel_width": "median"}, {"shrinkage": "none"},
    {"a_sigma": 0.0}, {"b_lambda": -1.0}, {"intercept_precision": np.inf},
    {"scale_step": -0.1},
])
def test_bad_parameters_raise_value_error(params):
    X, y = _ring(20, 0)
    with pytest.raises(ValueError):
        BayesianSVMClassifier(**{**FAST, **params}).fit(X, y)


def test_bad_data_raise_value_error():
    X, y = _ring(20, 0)
    model = CompleteSVMClassifier(**FAST)
    with pytest.raises(ValueError, match="binary"):
        model.fit(X, np.arange(20) % 3)
    with pytest.raises(ValueError):
        model.fit(X, np.zeros(20))
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError):
        model.fit(bad, y)
    model.fit(X, y)
    with pytest.raises(ValueError):
        model.predict(np.ones((3, 5)))
    with pytest.raises(ValueError):
        bayes_svm.log_likelihood(1.0, 0.0, "logistic")


@pytest.mark.parametrize("cls", [BayesianSVMClassifier, CompleteSVMClassifier])
def test_scikit_learn_estimator_checks(cls):
    assert_passes_check_estimator(cls(n_sweeps=30, burn_in=10, thin=2, random_state=0))
