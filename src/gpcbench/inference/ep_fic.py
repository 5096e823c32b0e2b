"""Expectation propagation for a sparse GP prior with the FIC (FITC) approximation.

The prior Sigma = U U^T + diag(d0) of Snelson & Ghahramani (2006) eq. 9 and the posterior
algebra of its Gaussian sites are :mod:`gpcbench.kernels.fic`'s (:class:`FICPrior`,
:class:`FICSiteFactorization`). The likelihood terms are approximated by Gaussian sites in
natural parameters (s_i, nu_i), and EP runs the parallel schedule of
:mod:`gpcbench.inference.ep` (K&G eqs. 16-23, :func:`~gpcbench.inference.ep.parallel_ep`): the
cavities, tilted moments, site updates, damping, stopping rule and evidence are that module's;
only the linear algebra of the posterior q(f) = N(A nu, A), A = (Sigma^-1 + S)^-1, is passed
in, in the low-rank-plus-diagonal form (Naish-Guzman & Holden 2008 sec. 3), so a sweep costs
O(n m^2) and memory O(n m). Predictions at new inputs follow Snelson & Ghahramani (2006) eq. 8
with EP sites in place of Gaussian noise (:meth:`FICSiteFactorization.predict`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import numpy as np

from gpcbench.inference.ep import parallel_ep, starting_sites
from gpcbench.kernels.fic import FICPrior, FICSiteFactorization
from gpcbench.likelihoods import Likelihood


@dataclass
class FICEPResult:
    """Converged (or last) state of FIC EP."""

    site_precision: np.ndarray
    site_natural_mean: np.ndarray
    factor: FICSiteFactorization
    alpha: np.ndarray
    mean: np.ndarray
    variance: np.ndarray
    log_evidence: float
    log_evidence_trace: list[float]  # one value per sweep, the last = log_evidence
    converged: bool
    damping: float  # the final damping (halved on oscillation)
    n_sweeps: int
    n_clipped: int  # negative site precisions set to zero

    @property
    def sites(self) -> tuple[np.ndarray, np.ndarray]:
        """(site precisions, site natural means): pass as ``initial_sites`` to warm-start."""
        return self.site_precision, self.site_natural_mean

    @property
    def beta(self) -> np.ndarray:
        """U^T alpha, all a prediction needs of the training sites."""
        return self.factor.prior.U.T @ self.alpha

    def predict(self, X_new):
        """Latent predictive mean and variance at new inputs (module docstring)."""
        return self.factor.predict(self.factor.prior.projection(X_new), self.beta)


def _posterior(prior, tau, nu):
    """The FIC factorisation for sites (tau, nu), and alpha, the mean and diag(A) of its
    posterior (module docstring)."""
    factor = FICSiteFactorization.from_sites(prior, tau)
    alpha = factor.weights(nu)
    return factor, (alpha, factor.mean(alpha), factor.variance())


def fic_expectation_propagation(prior: FICPrior, y, likelihood: Likelihood, *,
                                damping: float = 1.0, max_sweeps: int = 100, tol: float = 1e-4,
                                site_tol: float = 1e-2, initial_sites=None) -> FICEPResult:
    """Parallel EP for the FIC prior and likelihood terms p(y_i | f_i).

    Parameters
    ----------
    prior : FICPrior
    y : array of shape (n,)
        +-1 labels.
    likelihood : Likelihood
        Supplies the tilted moments (K&G eqs. 20-21).
    damping, max_sweeps, tol, site_tol, initial_sites
        As for :func:`gpcbench.inference.ep.expectation_propagation` (parallel schedule).

    Returns
    -------
    FICEPResult
    """
    y = np.asarray(y, dtype=float)
    n = prior.n
    if y.shape != (n,):
        raise ValueError(f"{y.shape} labels for {n} latents")
    tau, nu = starting_sites(initial_sites, n, damping)
    factor, tau, nu, (alpha, mean, variance), run = parallel_ep(
        partial(_posterior, prior), y, likelihood, tau, nu, damping, max_sweeps, tol, site_tol)
    return FICEPResult(tau, nu, factor, alpha, mean, variance, log_evidence=run["trace"][-1],
                       log_evidence_trace=run["trace"], converged=run["converged"],
                       damping=run["damping"], n_sweeps=run["n_sweeps"],
                       n_clipped=run["n_clipped"])
