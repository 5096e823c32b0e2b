"""SGP+FIC+MCMC: the Gibbs sampler's draw of f | z against the dense Gaussian it stands for,
its predictive probabilities on a tiny problem against brute force (importance sampling of the
joint FIC prior of training and test latents, weighted by the probit likelihood), and the
estimator's diagnostics."""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, ndtr

from gpcbench.estimators.sparse_gp_mcmc import FICMCMCClassifier
from gpcbench.kernels.fic import FICPrior, FICSiteFactorization
from gpcbench.mcmc.fic_gibbs import conditional_latent


def test_conditional_latent_is_the_dense_gaussian_it_stands_for():
    """f | z ~ N(A z, A), A = (Sigma^-1 + I)^-1 with Sigma = U U^T + diag(d0) formed densely:
    the draw's mean (zero noise) is A z, the linear map from the noise has covariance A, and
    beta = U^T alpha(z) with alpha(z) = (Sigma + I)^-1 z."""
    rng = np.random.default_rng(5)
    X, Z = rng.normal(size=(9, 2)), rng.normal(size=(3, 2))
    prior = FICPrior.from_inputs(X, Z, 0.8)
    factor = FICSiteFactorization.from_sites(prior, np.ones(9))
    sigma = prior.U @ prior.U.T + np.diag(prior.d0)
    covariance = np.linalg.inv(np.linalg.inv(sigma) + np.eye(9))
    z = rng.normal(size=9)
    mean, beta = conditional_latent(factor, z, np.zeros(9), np.zeros(3))
    np.testing.assert_allclose(mean, covariance @ z, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(beta, prior.U.T @ np.linalg.solve(sigma + np.eye(9), z),
                               rtol=1e-10, atol=1e-12)
    units = np.eye(12)
    noise_map = np.column_stack([conditional_latent(factor, np.zeros(9), e[:9], e[9:])[0]
                                 for e in units])
    np.testing.assert_allclose(noise_map @ noise_map.T, covariance, rtol=1e-10, atol=1e-12)


def test_predictive_matches_brute_force_on_a_tiny_problem():
    rng = np.random.default_rng(0)
    X = np.array([[-1.0, 0.2], [-0.3, -0.5], [0.4, 0.8], [1.2, -0.1]])
    labels = np.array([0, 0, 1, 0])
    X_new = np.array([[0.0, 0.0], [1.0, 1.0], [-1.5, 0.5]])
    model = FICMCMCClassifier(k_max=2, kernel_width=1.0, n_sweeps=40000, burn_in=1000, thin=1,
                              n_chains=1, random_state=3).fit(X, labels)
    sampled = model.predict_proba(X_new)[:, 1]
    # brute force: the joint FIC prior of (f, f*): Q = u u^T plus diag(1 - |u|^2) (eq. 9 of
    # Snelson & Ghahramani 2006 on training and test points alike)
    Z = X[model.inducing_indices_]
    u = FICPrior.from_inputs(np.vstack([X, X_new]), Z, 1.0).U
    joint = u @ u.T + np.diag(1.0 - np.einsum("ij,ij->i", u, u))
    draws = rng.multivariate_normal(np.zeros(7), joint, size=2_000_000, method="cholesky")
    signs = np.where(labels == 1, 1.0, -1.0)
    log_w = log_ndtr(draws[:, :4] * signs).sum(axis=1)
    w = np.exp(log_w - log_w.max())
    exact = (w[:, None] * ndtr(draws[:, 4:])).sum(axis=0) / w.sum()
    np.testing.assert_allclose(sampled, exact, atol=3e-3)


def test_diagnostics_and_paper_defaults():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    model = FICMCMCClassifier(k_max=10, n_sweeps=400, burn_in=200, random_state=0).fit(X, y)
    assert model.betas_.shape == (2 * 40, 10)
    assert set(model.diagnostics_) == {"log_likelihood", "brooks_burn_in"}
    assert set(model.diagnostics_["log_likelihood"]) == {
        "rhat", "ess_bulk", "ess_tail", "brooks_burn_in", "brooks_thin"}
    assert np.mean(model.predict(X) == y) > 0.9
    defaults = FICMCMCClassifier()
    assert (defaults.n_sweeps, defaults.burn_in, defaults.thin) == (10000, 5000, 5)
