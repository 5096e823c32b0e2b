"""Gibbs sampling of probit GP classification under the FIC prior (ZDJ's SGP+FIC+MCMC row).

Albert & Chib's (1993) data augmentation: z_i = f_i + e_i, e_i ~ N(0, 1), y_i = sgn(z_i), so
that Phi(y_i f_i) is the marginal of the auxiliary. A sweep draws

    z_i | f_i, y_i ~ N(f_i, 1) truncated to y_i z_i > 0        (every i, numba)
    f | z ~ N(A z, A),   A = (Sigma^-1 + I)^-1

for the FIC prior Sigma = U U^T + diag(d0) (:mod:`gpcbench.kernels.fic`). The second
draw is the Gaussian-site posterior of :class:`~gpcbench.kernels.fic.FICSiteFactorization`
with unit site precisions and natural means z: e = 1 + d0, M = I + U^T diag(1/e) U = L_M L_M^T,
and neither changes between sweeps. With c = z / e and w = M^-1 U^T c, alpha(z) =
c - (U w) / e, so U^T alpha = U^T c - (M - I) w = w, A z = Sigma alpha = d0 c + (U w) / e,
and the square root G L_M^-T of A's low-rank part (G = diag(1/e) U) gives

    f = d0 c + U (w + L_M^-T eps_2) / e + sqrt(d0 / e) eps_1,
        eps_1 ~ N(0, I_n), eps_2 ~ N(0, I_m):

two passes over U a sweep (U^T c, then U v), O(n m); the m x m algebra is negligible.
Predictions are Rao-Blackwellised: given z the latent at x* is Gaussian (mean u*^T U^T
alpha(z), the variance the same for every z), so each kept sweep stores beta = U^T alpha(z)
= w (m numbers) and p(y* = +1) averages Phi(u*^T beta / sqrt(1 + var)).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular

from gpcbench.jit import njit
from gpcbench.kernels.fic import FICPrior, FICSiteFactorization
from gpcbench.mcmc.diagnostics import kept_sweeps
from gpcbench.mcmc.holmes_held import truncated_normal
from gpcbench.tilted_moments import log_ndtr_array


@njit(cache=True)
def seed_sampler(seed):
    """Seed numba's generator (the one :func:`truncated_normal` draws from)."""
    np.random.seed(seed)


@njit(cache=True)
def draw_auxiliaries(f, positive, out):
    """out_i ~ N(f_i, 1) truncated to the half-line of y_i (``positive`` = y_i > 0)."""
    for i in range(f.shape[0]):
        out[i] = truncated_normal(f[i], 1.0, positive[i])


def conditional_latent(factor: FICSiteFactorization, z, eps_n, eps_m):
    """One draw of f | z ~ N(A z, A) from the standard normals ``eps_n`` (n) and ``eps_m`` (m),
    in two passes over U (module docstring), and beta = U^T alpha(z) = w."""
    U, d0, scale = factor.prior.U, factor.prior.d0, factor.scale
    c = z / scale
    w = factor.m_solve(U.T @ c)
    spread = solve_triangular(factor.chol, eps_m, lower=True, trans="T", check_finite=False)
    f = d0 * c + U @ (w + spread) / scale + np.sqrt(d0 / scale) * eps_n
    return f, w


def run_fic_gibbs(prior: FICPrior, y, n_sweeps: int, burn_in: int, thin: int, seed: int):
    """One chain of ``n_sweeps`` sweeps from f = 0.

    Returns
    -------
    betas : array of shape (n_kept, m)
        U^T alpha(z) at every ``thin``-th sweep after ``burn_in``.
    log_likelihood : array of shape (n_sweeps,)
        sum_i log Phi(y_i f_i) after each sweep (the traced scalar of the diagnostics).
    factor : FICSiteFactorization
        The unit-precision factorisation (for predictive variances).
    """
    y = np.asarray(y, dtype=float)
    n, m = prior.U.shape
    factor = FICSiteFactorization.from_sites(prior, np.ones(n))
    positive = y > 0
    seed_sampler(int(seed))
    noise = np.random.default_rng(int(seed))
    f, z = np.zeros(n), np.empty(n)
    kept = kept_sweeps(n_sweeps, burn_in, thin)
    betas = np.empty((len(kept), m))
    trace = np.empty(n_sweeps)
    row = 0
    for sweep in range(n_sweeps):
        draw_auxiliaries(f, positive, z)
        eps_n = noise.standard_normal(n)
        f, beta = conditional_latent(factor, z, eps_n, noise.standard_normal(m))
        trace[sweep] = np.sum(log_ndtr_array(y * f))
        if row < len(kept) and sweep == kept[row]:
            betas[row] = beta
            row += 1
    return betas, trace, factor
