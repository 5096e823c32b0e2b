"""SGP+FIC+MCMC: the Gibbs sampler's predictive probabilities on a tiny problem against brute
force (importance sampling of the joint FIC prior of training and test latents, weighted by
the probit likelihood), and the estimator's diagnostics."""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, ndtr

from gpcbench.estimators.sparse_gp_mcmc import FICMCMCClassifier
from gpcbench.kernels.fic import FICPrior


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
