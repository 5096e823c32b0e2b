"""Greedy active-set selection of the informative vector machine (Lawrence, Seeger & Herbrich
2003), by assumed density filtering (ADF) under a GP prior.

The posterior q(f) = N(mu, Sigma) over all n latents holds the Gaussian sites of the active
points only; it starts at the prior N(0, K). At each of d steps every inactive point j is
scored by the entropy its inclusion would remove from its own marginal,

    Delta H_j = 1/2 log(varsigma_j / v_j)       (Lawrence, Seeger & Herbrich (2003) sec. 2)

with varsigma_j = Sigma_jj and v_j the variance of the tilted distribution
p(y_j | f_j) N(f_j | mu_j, varsigma_j) (the ADF "cavity" is the current marginal itself, the
site being absent); the best is included with its moment-matched site (tau_j, nu_j)
(:meth:`~gpcbench.likelihoods.Likelihood.tilted`, the one implementation of the tilted
moments and site update), and q is updated by the rank-one Sherman-Morrison step of EP's
sequential schedule (:func:`gpcbench.inference.ep.site_rank_one`)

    s = Sigma[:, j] = K[:, j] - M^T M[:, j],   c = tau_j / (1 + tau_j varsigma_j),
    mu <- mu + (nu_j - tau_j mu_j) / (1 + tau_j varsigma_j) s,   Sigma <- Sigma - c s s^T,

storing Sigma = K - M^T M by the rows sqrt(c) s of M (d x n): O(n d) memory, O(n k) work at
step k, O(n d^2) in all, and one kernel column per step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpcbench.inference.ep import site_rank_one
from gpcbench.likelihoods import Likelihood


@dataclass(frozen=True)
class ActiveSet:
    """Selected points in order of inclusion, their ADF sites and entropy reductions."""

    indices: np.ndarray
    site_precision: np.ndarray
    site_natural_mean: np.ndarray
    entropy_reduction: np.ndarray


def select_active_set(kernel_column, prior_variance, y, likelihood: Likelihood,
                      d: int) -> ActiveSet:
    """Greedy ADF selection of d active points (module docstring).

    Parameters
    ----------
    kernel_column : callable
        ``kernel_column(j)`` returns K[:, j], shape (n,).
    prior_variance : array of shape (n,)
        diag(K).
    y : array of shape (n,)
        +-1 labels.
    likelihood : Likelihood
        With tilted moments (e.g. :class:`~gpcbench.likelihoods.ProbitLikelihood`).
    d : int
        Number of points to select (at most n).
    """
    y = np.asarray(y, dtype=float)
    n = y.size
    d = min(int(d), n)
    mean = np.zeros(n)
    variance = np.array(prior_variance, dtype=float)
    rows = np.empty((d, n))
    inactive = np.ones(n, dtype=bool)
    chosen = np.empty(d, dtype=np.int64)
    tau, nu, gain = np.empty(d), np.empty(d), np.empty(d)
    for k in range(d):
        tilted = likelihood.tilted(y, mean, variance)
        score = 0.5 * (np.log(variance) - np.log(tilted.variance))
        score[~inactive] = -np.inf
        j = int(np.argmax(score))
        column = kernel_column(j) - rows[:k].T @ rows[:k, j]
        _, c, g = site_rank_one(tilted.site_precision[j], tilted.site_natural_mean[j],
                                variance[j], mean[j])
        mean += g * column
        rows[k] = np.sqrt(c) * column
        variance = np.maximum(variance - c * column**2, np.finfo(float).tiny)
        chosen[k], tau[k], nu[k], gain[k] = j, tilted.site_precision[j], \
            tilted.site_natural_mean[j], score[j]
        inactive[j] = False
    return ActiveSet(chosen, tau, nu, gain)
