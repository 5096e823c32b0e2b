"""Expectation propagation for a Gaussian-process prior (Kim & Ghahramani 2006, eqs. 16-23).

Notation. Each likelihood term t_i(f_i) is approximated by a Gaussian site (eq. 16),
written here in natural parameters (GPML's ``ttau``, ``tnu``):

    t~_i(f_i) ∝ exp(-tau_i f_i^2 / 2 + nu_i f_i),   tau_i = 1 / v_i,  nu_i = m_i / v_i,

so the paper's initialisation v_i = inf, m_i = 0 (eq. 18) is tau = nu = 0, and a site can be
"removed" without dividing by infinity. The posterior q(f) = N(h, A) of eq. 22 is held as a
:class:`~gpcbench.gaussian.SiteFactorization` (Cholesky of B = I + S^1/2 C S^1/2, S = diag(tau)).
The cavity of site i (eq. 19) has precision 1/A_ii - tau_i and natural mean h_i/A_ii - nu_i; the
tilted moments and the matched site (eqs. 20-21) come from the likelihood object.

Schedules.
``sequential`` (the paper's, eqs. 19-22 site by site): sites are visited in blocks; inside a
block a numba-compiled kernel performs the exact rank-one updates of the block's part of A and
h site after site, then the whole block's change is applied to A and h at once by a Woodbury
(rank-b) update, a BLAS-3 product. This is the same arithmetic as n rank-one updates (no
approximation) but costs O(n^2 b) per block instead of n Python-level steps.
``parallel``: all sites are updated from the same cavities, then B is refactored once.

Both converge to the same fixed points. Damping (site <- (1 - d) old + d new) and a maximum
number of sweeps guard against oscillation; negative site precisions (possible when
epsilon > 0) are set to zero, as GPML does, and counted. A run stops when both the change of
log Z and the largest scaled site change, max_i(|d tau_i| A_ii, |d nu_i| sqrt(A_ii)), are
below ``tol``; ``converged`` says whether that happened within ``max_sweeps``.

The evidence (eq. 23) is evaluated in natural parameters as

    log Z = sum_i [log Z_i + 1/2 log(1 + tau_i/tau_-i) + nu_-i^2/(2 tau_-i) - (nu_i + nu_-i)^2/(2 (tau_i + tau_-i))]
            - 1/2 log|B| + 1/2 nu^T A nu,

with Z_i the tilted normalisers at the cavities (tau_-i, nu_-i) of the current posterior; it
equals eq. 23 at a fixed point and stays finite for tau_i = 0. Its gradient with respect to a
covariance hyperparameter at a fixed point is (1/2) tr[(alpha alpha^T - (C + Lambda)^-1) dC],
which by Theorem 1 equals the gradient of the EM lower bound F (eq. 31).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from gpcbench.gaussian import SiteFactorization
from gpcbench.likelihoods import Likelihood, tilted_scalar

SCHEDULES = ("parallel", "sequential")
#: Chosen by ``benchmarks/bench_ep.py`` (time to convergence, same tolerance): see the note there.
DEFAULT_SCHEDULE = "parallel"
DEFAULT_BLOCK_SIZE = 128


@dataclass
class EPResult:
    """Converged (or last) state of EP and everything computed from it."""

    site_precision: np.ndarray
    site_natural_mean: np.ndarray
    factor: SiteFactorization
    alpha: np.ndarray
    mean: np.ndarray
    variance: np.ndarray
    cavity_mean: np.ndarray
    cavity_variance: np.ndarray
    log_evidence: float
    converged: bool
    n_sweeps: int
    schedule: str
    damping: float
    log_evidence_trace: list[float] = field(default_factory=list)
    n_clipped: int = 0
    n_skipped: int = 0

    @property
    def sites(self) -> tuple[np.ndarray, np.ndarray]:
        """(site precisions, site natural means): pass as ``initial_sites`` to warm-start EP."""
        return self.site_precision, self.site_natural_mean

    def predict(self, cross, prior_variance):
        """Latent mean k^T alpha and variance kappa - k^T (Lambda + C)^-1 k at new points (eq. 24)."""
        return self.factor.predict(cross, prior_variance, self.alpha)

    def posterior_covariance(self) -> np.ndarray:
        """A of eq. 22, the full n x n posterior covariance."""
        return self.factor.covariance()

    def log_evidence_gradient(self, kernel_gradients) -> np.ndarray:
        """d log Z / d theta_k = 1/2 tr[(alpha alpha^T - (C + Lambda)^-1) dC/d theta_k].

        ``kernel_gradients`` has shape (p, n, n) (e.g. :meth:`Covariance.gradients`); exact at a
        fixed point of EP, where the site parameters are stationary.
        """
        kernel_gradients = np.asarray(kernel_gradients, dtype=float)
        weight = np.outer(self.alpha, self.alpha) - self.factor.site_kernel_inverse()
        p = kernel_gradients.shape[0]
        return 0.5 * kernel_gradients.reshape(p, -1) @ weight.ravel()


def expectation_propagation(
    kernel,
    y,
    likelihood: Likelihood,
    *,
    schedule: str = DEFAULT_SCHEDULE,
    damping: float = 1.0,
    max_sweeps: int = 100,
    tol: float = 1e-6,
    initial_sites=None,
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> EPResult:
    """Run EP for prior N(0, kernel) and likelihood terms p(y_i | f_i).

    Parameters
    ----------
    kernel : array of shape (n, n)
        Prior covariance C of eq. 13 (latent noise theta2 included on the diagonal).
    y : array of shape (n,)
        Targets: +-1 labels for classification, reals for the Gaussian likelihood.
    likelihood : Likelihood
        Supplies the tilted moments (eqs. 20-21).
    schedule : {"parallel", "sequential"}
    damping : float in (0, 1]
        1 means undamped (the paper's EP).
    max_sweeps : int
        Maximum number of passes over all sites.
    tol : float
        Convergence threshold on |change of log Z| and on the scaled site change.
    initial_sites : (precision, natural_mean), optional
        Warm start, e.g. ``previous.sites``; default is the paper's tau = nu = 0 (eq. 18).
    block_size : int
        Sites per block of the sequential schedule.

    Returns
    -------
    EPResult
    """
    kernel = np.asarray(kernel, dtype=float)
    y = np.asarray(y, dtype=float)
    n = y.size
    if kernel.shape != (n, n):
        raise ValueError(f"kernel has shape {kernel.shape}, expected ({n}, {n})")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    if not 0.0 < damping <= 1.0:
        raise ValueError(f"damping must lie in (0, 1], got {damping}")
    tau, nu = _initial_sites(initial_sites, n)
    run = _run_parallel if schedule == "parallel" else _run_sequential
    return run(kernel, y, likelihood, tau, nu, damping, max_sweeps, tol, block_size)


# ---------------------------------------------------------------------------- shared pieces
def _initial_sites(initial_sites, n):
    if initial_sites is None:
        return np.zeros(n), np.zeros(n)
    tau, nu = (np.array(a, dtype=float) for a in initial_sites)
    if tau.shape != (n,) or nu.shape != (n,):
        raise ValueError("initial_sites must be two arrays of length n")
    return np.maximum(tau, 0.0), nu


def _cavities(mean, variance, tau, nu):
    """Cavity precision and natural mean of every site (eq. 19); fail loudly if improper."""
    cav_tau = 1.0 / variance - tau
    cav_nu = mean / variance - nu
    bad = ~(cav_tau > 0) | ~np.isfinite(cav_nu)
    if np.any(bad):
        raise FloatingPointError(
            f"EP: cavity precision not positive or not finite at sites {np.flatnonzero(bad)[:10]}"
        )
    return cav_tau, cav_nu


def _log_evidence(tilted_log_z, tau, nu, cav_tau, cav_nu, log_det_b, nu_dot_mean) -> float:
    """log Z of eq. 23 in natural parameters (module docstring)."""
    per_site = (
        tilted_log_z
        + 0.5 * np.log1p(tau / cav_tau)
        + 0.5 * cav_nu**2 / cav_tau
        - 0.5 * (nu + cav_nu) ** 2 / (tau + cav_tau)
    )
    value = float(np.sum(per_site) - 0.5 * log_det_b + 0.5 * nu_dot_mean)
    if not math.isfinite(value):
        raise FloatingPointError(f"EP: log evidence is not finite ({value})")
    return value


def _evidence_at(y, likelihood, mean, variance, tau, nu, log_det_b):
    """Cavities of the current posterior, their tilted moments and log Z."""
    cav_tau, cav_nu = _cavities(mean, variance, tau, nu)
    tilted = likelihood.tilted(y, cav_nu / cav_tau, 1.0 / cav_tau)
    log_z = _log_evidence(tilted.log_z, tau, nu, cav_tau, cav_nu, log_det_b, nu @ mean)
    return cav_tau, cav_nu, tilted, log_z


def _site_change(tau_new, tau, nu_new, nu, variance) -> float:
    """Largest change of a site relative to its posterior marginal (scale-free)."""
    return float(
        max(np.max(np.abs(tau_new - tau) * variance), np.max(np.abs(nu_new - nu) * np.sqrt(variance)))
    )


def _is_converged(trace, change, tol) -> bool:
    return len(trace) >= 2 and abs(trace[-1] - trace[-2]) < tol and change < tol


def _result(factor, tau, nu, y, likelihood, trace, converged, sweeps, schedule, damping, clipped, skipped):
    """Recompute the posterior from the factorisation and package it."""
    alpha = factor.weights(nu)
    mean = factor.kernel @ alpha
    variance = factor.variance()
    cav_tau, _, _, log_z = _evidence_at(y, likelihood, mean, variance, tau, nu, factor.log_det)
    cav_var = 1.0 / cav_tau
    trace = list(trace[:-1]) + [log_z]
    return EPResult(
        site_precision=tau,
        site_natural_mean=nu,
        factor=factor,
        alpha=alpha,
        mean=mean,
        variance=variance,
        cavity_mean=(mean / variance - nu) * cav_var,
        cavity_variance=cav_var,
        log_evidence=log_z,
        converged=converged,
        n_sweeps=sweeps,
        schedule=schedule,
        damping=damping,
        log_evidence_trace=trace,
        n_clipped=clipped,
        n_skipped=skipped,
    )


# ---------------------------------------------------------------------------- parallel
def _run_parallel(kernel, y, likelihood, tau, nu, damping, max_sweeps, tol, block_size):
    trace, change, clipped, sweeps = [], np.inf, 0, 0
    converged = False
    while True:
        factor = SiteFactorization.from_sites(kernel, tau)
        alpha = factor.weights(nu)
        mean, variance = kernel @ alpha, factor.variance()
        _, _, tilted, log_z = _evidence_at(y, likelihood, mean, variance, tau, nu, factor.log_det)
        trace.append(log_z)
        converged = _is_converged(trace, change, tol)
        if converged or sweeps >= max_sweeps:
            break
        new_tau = damping * tilted.site_precision + (1.0 - damping) * tau
        new_nu = damping * tilted.site_natural_mean + (1.0 - damping) * nu
        if not (np.all(np.isfinite(new_tau)) and np.all(np.isfinite(new_nu))):
            raise FloatingPointError("EP: non-finite site update")
        clipped += int(np.sum(new_tau < 0))
        new_tau = np.maximum(new_tau, 0.0)
        change = _site_change(new_tau, tau, new_nu, nu, variance)
        tau, nu = new_tau, new_nu
        sweeps += 1
    return _result(factor, tau, nu, y, likelihood, trace, converged, sweeps, "parallel", damping, clipped, 0)


# ---------------------------------------------------------------------------- sequential
@njit(cache=True)
def _sequential_block(kind, params, y, sigma, mean, tau, nu, damping):
    """Site-by-site EP updates (eqs. 19-22) within one block, numba-compiled.

    ``sigma`` and ``mean`` are the block's part of A and h and are updated in place by the
    exact rank-one formulas A <- A - c a a^T, h <- h + g a (a = column of A, Sherman-Morrison
    on the precision change of one site). ``tau`` and ``nu`` are updated in place. Returns the
    numbers of clipped (negative precision) and skipped (improper cavity) sites.
    """
    b = y.size
    clipped = 0
    skipped = 0
    column = np.empty(b)
    for k in range(b):
        s_kk = sigma[k, k]
        cav_tau = 1.0 / s_kk - tau[k]
        cav_nu = mean[k] / s_kk - nu[k]
        if not (cav_tau > 0.0) or not math.isfinite(cav_nu):
            skipped += 1
            continue
        r = tilted_scalar(kind, params, y[k], cav_nu / cav_tau, 1.0 / cav_tau)
        new_tau = damping * r[3] + (1.0 - damping) * tau[k]
        new_nu = damping * r[4] + (1.0 - damping) * nu[k]
        if not (math.isfinite(new_tau) and math.isfinite(new_nu)):
            skipped += 1
            continue
        if new_tau < 0.0:
            new_tau = 0.0
            clipped += 1
        d_tau = new_tau - tau[k]
        d_nu = new_nu - nu[k]
        tau[k] = new_tau
        nu[k] = new_nu
        denom = 1.0 + d_tau * s_kk
        c = d_tau / denom
        g = (d_nu - d_tau * mean[k]) / denom
        for i in range(b):
            column[i] = sigma[i, k]
        for i in range(b):
            mean[i] += g * column[i]
            ci = c * column[i]
            for j in range(b):
                sigma[i, j] -= ci * column[j]
    return clipped, skipped


def _apply_block(sigma, mean, block, d_tau, d_nu):
    """Apply the precision change d_tau (natural-mean change d_nu) of sites ``block`` to A, h.

    Woodbury: A <- A - A[:, B] (I + D A[B, B])^-1 D A[B, :],
              h <- h + A[:, B] (I + D A[B, B])^-1 (d_nu - D h[B]),  D = diag(d_tau).
    """
    panel = sigma[:, block].copy()
    system = np.eye(d_tau.size) + d_tau[:, None] * panel[block]
    rhs = np.column_stack([np.diag(d_tau), d_nu - d_tau * mean[block]])
    sol = np.linalg.solve(system, rhs)
    mean += panel @ sol[:, -1]
    sigma -= (panel @ sol[:, :-1]) @ panel.T


def _run_sequential(kernel, y, likelihood, tau, nu, damping, max_sweeps, tol, block_size):
    n = y.size
    factor = SiteFactorization.from_sites(kernel, tau)
    sigma = factor.covariance()
    mean = kernel @ factor.weights(nu)
    trace, change, clipped, skipped, sweeps = [], np.inf, 0, 0, 0
    kind, params = likelihood.kind, likelihood.params
    converged = False
    while True:
        variance = np.diag(sigma).copy()
        _, _, _, log_z = _evidence_at(y, likelihood, mean, variance, tau, nu, factor.log_det)
        trace.append(log_z)
        converged = _is_converged(trace, change, tol)
        if converged or sweeps >= max_sweeps:
            break
        tau_old, nu_old = tau.copy(), nu.copy()
        for start in range(0, n, block_size):
            block = np.arange(start, min(start + block_size, n))
            sub_sigma = sigma[np.ix_(block, block)]
            sub_mean = mean[block]
            sub_tau, sub_nu = tau[block], nu[block]
            c, s = _sequential_block(kind, params, y[block], sub_sigma, sub_mean, sub_tau, sub_nu, damping)
            clipped, skipped = clipped + c, skipped + s
            _apply_block(sigma, mean, block, sub_tau - tau[block], sub_nu - nu[block])
            tau[block], nu[block] = sub_tau, sub_nu
        change = _site_change(tau, tau_old, nu, nu_old, variance)
        factor = SiteFactorization.from_sites(kernel, tau)
        sweeps += 1
    return _result(factor, tau, nu, y, likelihood, trace, converged, sweeps, "sequential", damping, clipped, skipped)
