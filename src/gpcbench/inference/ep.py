"""Expectation propagation for a Gaussian-process prior (Kim & Ghahramani 2006, K&G eqs. 16-23).

Notation. Each likelihood term t_i(f_i) is approximated by a Gaussian site (K&G eq. 16),
written here in natural parameters (GPML's ``ttau``, ``tnu``):

    t~_i(f_i) ∝ exp(-tau_i f_i^2 / 2 + nu_i f_i),   tau_i = 1 / v_i,  nu_i = m_i / v_i,

so K&G's initialisation v_i = inf, m_i = 0 (K&G eq. 18) is tau = nu = 0, and a site can be
"removed" without dividing by infinity. The posterior q(f) = N(h, A) of K&G eq. 22 is held as a
:class:`~gpcbench.gaussian.SiteFactorization` (Cholesky of B = I + S^1/2 C S^1/2, S = diag(tau)).
The cavity of site i (K&G eq. 19) has precision 1/A_ii - tau_i and natural mean h_i/A_ii - nu_i; the
tilted moments and the matched site (K&G eqs. 20-21) come from the likelihood object.

Schedules.
``sequential`` (K&G's, K&G eqs. 19-22 site by site): sites are visited in blocks; inside a
block a numba-compiled kernel performs the exact rank-one updates of the block's part of A and
h site after site, then the whole block's change is applied to A and h at once by a Woodbury
(rank-b) update, two BLAS-3 symmetric rank-k products. This is the same arithmetic as n
rank-one updates (no approximation) with one Python-level step per block; log|B| is carried
along by the matrix determinant lemma, so a sweep needs no Cholesky factorisation.
``parallel``: all sites are updated from the same cavities, then B is refactored once
(:func:`parallel_ep`, which takes the factorisation as a parameter: dense here, the FIC prior's
low-rank-plus-diagonal one in :mod:`gpcbench.inference.ep_fic`).

When both converge they reach the same fixed points, but the undamped parallel schedule often
oscillates on the threshold model (benchmarks/bench_ep.py); damping 0.5 cures that at the price
of more sweeps. Damping (site <- (1 - d) old + d new) and a maximum number of sweeps guard
against oscillation; negative site precisions (possible when
epsilon > 0) are set to zero, as GPML does, and counted. A run stops when the change of log Z
is below ``tol`` and the largest scaled site change, max_i(|d tau_i| A_ii, |d nu_i| sqrt(A_ii)),
is below ``site_tol``; ``converged`` says whether that happened within ``max_sweeps``.

The evidence (K&G eq. 23) is evaluated in natural parameters as

    log Z = sum_i [log Z_i + 1/2 log(1 + tau_i/tau_-i) + nu_-i^2/(2 tau_-i)
                   - (nu_i + nu_-i)^2/(2 (tau_i + tau_-i))]  - 1/2 log|B| + 1/2 nu^T A nu,

with Z_i the tilted normalisers at the cavities (tau_-i, nu_-i) of the current posterior; it
equals K&G eq. 23 at a fixed point and stays finite for tau_i = 0. Its gradient with respect to a
covariance hyperparameter at a fixed point is (1/2) tr[(alpha alpha^T - (C + Lambda)^-1) dC],
which by Theorem 1 equals the gradient of the EM lower bound F (K&G eq. 31).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import partial

import numpy as np
from scipy.linalg import LinAlgError, cholesky
from scipy.linalg.blas import dsyrk, dtrsm

from gpcbench.gaussian import SiteFactorization
from gpcbench.jit import njit
from gpcbench.likelihoods import Likelihood
from gpcbench.tilted_moments import tilted_scalar

SCHEDULES = ("parallel", "sequential")
#: Chosen by ``benchmarks/bench_ep.py`` (time to convergence at the same tolerance): the
#: sequential schedule needs ~3x fewer sweeps, each about as costly as a parallel one, and the
#: undamped parallel schedule can oscillate.
DEFAULT_SCHEDULE = "sequential"
DEFAULT_BLOCK_SIZE = 64
#: The parallel schedule halves its damping after this many log Z increments of alternating
#: sign (a two-cycle, as undamped parallel EP shows on separable data), down to MIN_DAMPING.
OSCILLATION_SWEEPS = 3
MIN_DAMPING = 1.0 / 64
#: The sequential schedule recomputes A from a fresh Cholesky factor every this many sweeps.
REFRESH_EVERY = 10


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
    covariance_matrix: np.ndarray | None = field(default=None, repr=False)

    @property
    def sites(self) -> tuple[np.ndarray, np.ndarray]:
        """(site precisions, site natural means): pass as ``initial_sites`` to warm-start EP."""
        return self.site_precision, self.site_natural_mean

    def predict(self, cross, prior_variance):
        """Latent mean k^T alpha and variance kappa - k^T (Lambda + C)^-1 k at new X
        (K&G eq. 24)."""
        return self.factor.predict(cross, prior_variance, self.alpha)

    def posterior_covariance(self) -> np.ndarray:
        """A of K&G eq. 22, the full n x n posterior covariance (read-only).

        The sequential schedule keeps A anyway and stores it in ``covariance_matrix``; otherwise
        it is computed from the factorisation on first use.
        """
        if self.covariance_matrix is None:
            self.covariance_matrix = self.factor.covariance()
            self.covariance_matrix.setflags(write=False)
        return self.covariance_matrix

    def log_evidence_gradient(self, covariance, X) -> np.ndarray:
        """d log Z / d log theta_k = 1/2 tr[(alpha alpha^T - (C + Lambda)^-1) dC/d log theta_k].

        ``covariance`` is the :class:`~gpcbench.kernels.covariance.Covariance` that produced the prior
        for inputs ``X``; the result has the layout of ``covariance.params``. Exact at a fixed
        point of EP, where the site parameters are stationary; sites whose negative precision
        was clipped to zero (``n_clipped`` > 0, only with epsilon > 0) are not, and then this is
        only an approximation.
        """
        weight = np.outer(self.alpha, self.alpha) - self.site_kernel_inverse()
        return 0.5 * covariance.gradient_contraction(X, weight)

    def site_kernel_inverse(self) -> np.ndarray:
        """(C + Lambda)^-1 = S^1/2 B^-1 S^1/2, S = diag(tau).

        With A = (C^-1 + S)^-1 at hand (the sequential schedule carries it), this is
        S - S A S, an O(n^2) identity: with M = S^1/2 C S^1/2, S A S = S^1/2 M (I + M)^-1 S^1/2
        and I - M (I + M)^-1 = (I + M)^-1 = B^-1. It holds for any tau >= 0 and saves the
        O(n^3) solve of :meth:`~gpcbench.gaussian.SiteFactorization.site_kernel_inverse`.
        """
        if self.covariance_matrix is None:
            return self.factor.site_kernel_inverse()
        tau = self.site_precision
        inverse = -(tau[:, None] * self.covariance_matrix * tau[None, :])
        inverse[np.diag_indices_from(inverse)] += tau
        return inverse


def expectation_propagation(
    kernel,
    y,
    likelihood: Likelihood,
    *,
    schedule: str = DEFAULT_SCHEDULE,
    damping: float = 1.0,
    max_sweeps: int = 100,
    tol: float = 1e-4,
    site_tol: float = 1e-2,
    initial_sites=None,
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> EPResult:
    """Run EP for prior N(0, kernel) and likelihood terms p(y_i | f_i).

    Parameters
    ----------
    kernel : array of shape (n, n)
        Prior covariance C of K&G eq. 13 (latent noise theta2 included on the diagonal).
    y : array of shape (n,)
        Targets: +-1 labels for classification, reals for the Gaussian likelihood.
    likelihood : Likelihood
        Supplies the tilted moments (K&G eqs. 20-21).
    schedule : {"parallel", "sequential"}
    damping : float in (0, 1]
        1 means undamped (K&G's EP). The parallel schedule halves it (down to
        :data:`MIN_DAMPING`) whenever log Z has oscillated for :data:`OSCILLATION_SWEEPS`
        sweeps (increments of alternating sign); ``EPResult.damping`` is the final value.
    max_sweeps : int
        Maximum number of passes over all sites.
    tol : float
        Convergence threshold on the change of log Z between sweeps.
    site_tol : float
        Convergence threshold on the scaled site change max_i(|d tau_i| A_ii, |d nu_i| sqrt(A_ii)).
    initial_sites : (precision, natural_mean), optional
        Warm start, e.g. ``previous.sites``; default is K&G's tau = nu = 0 (K&G eq. 18).
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
    tau, nu = starting_sites(initial_sites, n, damping)
    if schedule == "sequential":
        return _run_sequential(kernel, y, likelihood, tau, nu, damping, max_sweeps, tol, site_tol,
                               block_size)
    factor, tau, nu, posterior, run = parallel_ep(partial(_dense_posterior, kernel), y,
                                                  likelihood, tau, nu, damping, max_sweeps, tol,
                                                  site_tol)
    return _result(factor, tau, nu, y, likelihood, run, posterior)


# ---------------------------------------------------------------------------- shared pieces
def starting_sites(initial_sites, n, damping):
    """Check that damping lies in (0, 1] and return the sites (tau, nu) EP starts from: K&G's
    tau = nu = 0 (K&G eq. 18), or the warm start ``initial_sites`` with negative precisions
    set to zero."""
    if not 0.0 < damping <= 1.0:
        raise ValueError(f"damping must lie in (0, 1], got {damping}")
    if initial_sites is None:
        return np.zeros(n), np.zeros(n)
    tau, nu = (np.array(a, dtype=float) for a in initial_sites)
    if tau.shape != (n,) or nu.shape != (n,):
        raise ValueError("initial_sites must be two arrays of length n")
    return np.maximum(tau, 0.0), nu


def _cavities(mean, variance, tau, nu):
    """Cavity precision and natural mean of every site (K&G eq. 19); fail loudly if improper."""
    cav_tau = 1.0 / variance - tau
    cav_nu = mean / variance - nu
    bad = ~(cav_tau > 0) | ~np.isfinite(cav_nu)
    if np.any(bad):
        raise FloatingPointError(
            f"EP: cavity precision not positive or not finite at sites {np.flatnonzero(bad)[:10]}"
        )
    return cav_tau, cav_nu


def site_evidence(tilted_log_z, tau, nu, cav_tau, cav_nu) -> np.ndarray:
    """The per-site terms of log Z (K&G eq. 23 in natural parameters, module docstring),
    log Z_i + 1/2 log(1 + tau_i/tau_-i) + nu_-i^2/(2 tau_-i) - (nu_i + nu_-i)^2/(2 (tau_i + tau_-i))
    with Z_i the tilted normalisers at the cavities (tau_-i, nu_-i)."""
    return (tilted_log_z + 0.5 * np.log1p(tau / cav_tau) + 0.5 * cav_nu**2 / cav_tau
            - 0.5 * (nu + cav_nu) ** 2 / (tau + cav_tau))


def _log_evidence(tilted_log_z, tau, nu, cav_tau, cav_nu, log_det_b, nu_dot_mean) -> float:
    """log Z of K&G eq. 23 in natural parameters (module docstring)."""
    per_site = site_evidence(tilted_log_z, tau, nu, cav_tau, cav_nu)
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
        max(
            np.max(np.abs(tau_new - tau) * variance),
            np.max(np.abs(nu_new - nu) * np.sqrt(variance)),
        )
    )


def log_evidence_alternates(trace) -> bool:
    """Whether the last OSCILLATION_SWEEPS increments of log Z alternate in sign."""
    steps = np.diff(trace[-OSCILLATION_SWEEPS - 1:])
    return steps.size == OSCILLATION_SWEEPS and bool(np.all(steps[1:] * steps[:-1] < 0))


def _is_converged(trace, change, tol, site_tol) -> bool:
    return len(trace) >= 2 and abs(trace[-1] - trace[-2]) < tol and change < site_tol


def _dense_posterior(kernel, tau, nu):
    """The dense factorisation of B for prior ``kernel`` and sites (tau, nu), and alpha, the
    mean h = C alpha and diag(A) of its posterior (K&G eq. 22)."""
    factor = SiteFactorization.from_sites(kernel, tau)
    alpha = factor.weights(nu)
    return factor, (alpha, kernel @ alpha, factor.variance())


def _result(factor, tau, nu, y, likelihood, run: dict, posterior, covariance=None) -> EPResult:
    """Package the final state; ``posterior`` = (alpha, mean, variance)."""
    alpha, mean, variance = posterior
    cav_tau, _, _, log_z = _evidence_at(y, likelihood, mean, variance, tau, nu, factor.log_det)
    cav_var = 1.0 / cav_tau
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
        log_evidence_trace=run["trace"][:-1] + [log_z],
        covariance_matrix=covariance,
        **{key: run[key] for key in ("converged", "n_sweeps", "schedule", "damping", "n_clipped")},
    )


# ---------------------------------------------------------------------------- parallel
def parallel_ep(posterior, y, likelihood, tau, nu, damping, max_sweeps, tol, site_tol):
    """The parallel schedule from sites (tau, nu), for any factorisation of the posterior.

    ``posterior(tau, nu)`` returns (factor, (alpha, mean, variance)): a factorisation with
    ``log_det`` = log|B| (dense here, FIC in :mod:`gpcbench.inference.ep_fic`), alpha, the mean
    h and diag(A) of q(f) (K&G eq. 22). Every sweep updates all sites from the cavities of the
    same posterior (K&G eqs. 19-21), damped, clips negative precisions, and halves the damping
    after OSCILLATION_SWEEPS log Z increments of alternating sign (module docstring). Returns
    (factor, tau, nu, (alpha, mean, variance), run) at the last sweep; ``run`` holds trace
    (log Z per sweep), converged, n_sweeps, schedule, damping (final) and n_clipped.
    """
    run = {"trace": [], "schedule": "parallel", "damping": damping, "n_sweeps": 0, "n_clipped": 0}
    change, damped_at = np.inf, 0
    while True:
        factor, state = posterior(tau, nu)
        _, mean, variance = state
        _, _, tilted, log_z = _evidence_at(y, likelihood, mean, variance, tau, nu, factor.log_det)
        run["trace"].append(log_z)
        run["converged"] = _is_converged(run["trace"], change, tol, site_tol)
        if run["converged"] or run["n_sweeps"] >= max_sweeps:
            return factor, tau, nu, state, run
        if log_evidence_alternates(run["trace"][damped_at:]) and damping > MIN_DAMPING:
            damping = run["damping"] = max(0.5 * damping, MIN_DAMPING)
            damped_at = len(run["trace"]) - 1
        new_tau = damping * tilted.site_precision + (1.0 - damping) * tau
        new_nu = damping * tilted.site_natural_mean + (1.0 - damping) * nu
        if not (np.all(np.isfinite(new_tau)) and np.all(np.isfinite(new_nu))):
            raise FloatingPointError("EP: non-finite site update")
        run["n_clipped"] += int(np.sum(new_tau < 0))
        new_tau = np.maximum(new_tau, 0.0)
        change = _site_change(new_tau, tau, new_nu, nu, variance)
        tau, nu = new_tau, new_nu
        run["n_sweeps"] += 1


# ---------------------------------------------------------------------------- sequential
@njit(cache=True)
def site_rank_one(d_tau, d_nu, variance, mean):
    """Sherman-Morrison update of q(f) = N(h, A) (K&G eq. 22) when one site changes by
    (d_tau, d_nu), its marginal being N(mean, variance): with a = A[:, k], A <- A - c a a^T and
    h <- h + g a for c = d_tau / e, g = (d_nu - d_tau mean) / e, e = 1 + d_tau variance
    (= (new tau + cavity precision) / (old tau + cavity precision) > 0; log|B| grows by log e).
    Returns (e, c, g)."""
    denom = 1.0 + d_tau * variance
    return denom, d_tau / denom, (d_nu - d_tau * mean) / denom


@njit(cache=True)
def _sequential_block(kind, params, y, sigma, mean, tau, nu, damping):
    """Site-by-site EP updates (K&G eqs. 19-22) within one block, numba-compiled.

    ``sigma`` and ``mean`` are the block's part of A and h and are updated in place by the
    exact rank-one formulas A <- A - c a a^T, h <- h + g a of :func:`site_rank_one` (a = column
    of A). ``tau`` and ``nu`` are updated in place. Returns the
    number of clipped (negative precision) sites and the change of log|B|,
    sum_k log(1 + d_tau_k A_kk) by the matrix determinant lemma. Raises on an improper cavity
    or a non-finite site, as the parallel schedule does.
    """
    b = y.size
    clipped = 0
    log_det_change = 0.0
    column = np.empty(b)
    for k in range(b):
        s_kk = sigma[k, k]
        cav_tau = 1.0 / s_kk - tau[k]
        cav_nu = mean[k] / s_kk - nu[k]
        if not (cav_tau > 0.0) or not math.isfinite(cav_nu):
            raise FloatingPointError("EP: cavity precision not positive or not finite")
        r = tilted_scalar(kind, params, y[k], cav_nu / cav_tau, 1.0 / cav_tau)
        new_tau = damping * r[3] + (1.0 - damping) * tau[k]
        new_nu = damping * r[4] + (1.0 - damping) * nu[k]
        if not (math.isfinite(new_tau) and math.isfinite(new_nu)):
            raise FloatingPointError("EP: non-finite site update")
        if new_tau < 0.0:
            new_tau = 0.0
            clipped += 1
        d_tau = new_tau - tau[k]
        d_nu = new_nu - nu[k]
        tau[k] = new_tau
        nu[k] = new_nu
        denom, c, g = site_rank_one(d_tau, d_nu, s_kk, mean[k])
        log_det_change += math.log(denom)
        for i in range(b):
            column[i] = sigma[i, k]
        for i in range(b):
            mean[i] += g * column[i]
            ci = c * column[i]
            for j in range(b):
                sigma[i, j] -= ci * column[j]
    return clipped, log_det_change


def _lower_panel(sigma, start, stop):
    """Columns start:stop of the symmetric matrix whose lower triangle ``sigma`` holds."""
    panel = np.empty((sigma.shape[0], stop - start))
    panel[:start] = sigma[start:stop, :start].T
    block = sigma[start:stop, start:stop]
    upper = np.triu_indices(stop - start, 1)
    square = block.copy()
    square[upper] = block.T[upper]
    panel[start:stop] = square
    panel[stop:] = sigma[stop:, start:stop]
    return panel


def _apply_block(sigma, mean, panel, start, stop, d_tau, d_nu):
    """Apply the site changes (d_tau, d_nu) of sites B = start:stop to A (lower triangle) and h.

    Woodbury, with P = A[:, B] and D = diag(d_tau):
        h <- h + P (I + D A[B, B])^-1 (d_nu - D h[B]),
        A <- (A^-1 + D)^-1 = A - P (I + D A[B, B])^-1 D P^T.
    The A update is done as two symmetric rank-k (BLAS syrk) updates of the lower triangle:
    first the sites whose precision grew (a positive semi-definite downdate), then, on the
    updated matrix, those whose precision shrank (an update), each factored by a small Cholesky.
    """
    system = np.eye(stop - start) + d_tau[:, None] * panel[start:stop]
    mean += panel @ np.linalg.solve(system, d_nu - d_tau * mean[start:stop])
    grew, shrank = np.flatnonzero(d_tau > 0), np.flatnonzero(d_tau < 0)
    shrank_panel = panel[:, shrank]
    if grew.size:
        factor = _woodbury_factor(panel[:, grew], panel[start + grew][:, grew], d_tau[grew], 1.0)
        dsyrk(-1.0, factor, beta=1.0, c=sigma, lower=1, overwrite_c=1)
        if shrank.size:  # columns of the downdated A that the second step needs
            shrank_panel = shrank_panel - factor @ factor[start + shrank].T
    if shrank.size:
        block = shrank_panel[start + shrank]
        factor = _woodbury_factor(shrank_panel, block, -d_tau[shrank], -1.0)
        dsyrk(1.0, factor, beta=1.0, c=sigma, lower=1, overwrite_c=1)


def _woodbury_factor(columns, block, magnitude, sign):
    """G with G G^T = P E^1/2 (I + sign E^1/2 A_BB E^1/2)^-1 E^1/2 P^T, E = diag(magnitude) > 0.

    ``columns`` is P = A[:, B'] and ``block`` = A[B', B'] for the selected sites B'. With
    sign = +1 this is the downdate of a precision increase, with sign = -1 the update of a
    decrease; the Cholesky fails exactly when the decrease would make A improper.
    G = P E^1/2 L^-T comes from one BLAS trsm on the right, in Fortran order for syrk.
    """
    root = np.sqrt(magnitude)
    inner = sign * root[:, None] * block * root[None, :]
    inner.flat[:: inner.shape[0] + 1] += 1.0
    try:  # finite: A and the site changes were checked
        chol = cholesky(inner, lower=True, check_finite=False)
    except LinAlgError as err:
        raise FloatingPointError(
            "EP: a block of site updates makes the posterior improper"
        ) from err
    scaled = np.asfortranarray(columns * root)
    return dtrsm(1.0, chol, scaled, side=1, lower=1, trans_a=1, overwrite_b=1)


def _sequential_result(kernel, tau, nu, y, likelihood, run, sigma, variance):
    """Final state: a fresh factorisation (for log|B|, alpha and predictions) and the mean from
    it; the variances and A are the ones carried through the sweep (no extra O(n^3) work)."""
    factor = SiteFactorization.from_sites(kernel, tau)
    alpha = factor.weights(nu)
    covariance = np.tril(sigma) + np.tril(sigma, -1).T
    covariance.setflags(write=False)
    posterior = (alpha, kernel @ alpha, variance)
    return _result(factor, tau, nu, y, likelihood, run, posterior, covariance)


def _sequential_state(kernel, tau, nu):
    """Factorisation, A (Fortran order, lower triangle), h and log|B| from scratch."""
    factor = SiteFactorization.from_sites(kernel, tau)
    sigma = kernel.copy(order="F") if not np.any(tau) else np.asfortranarray(factor.covariance())
    return factor, sigma, kernel @ factor.weights(nu), factor.log_det


def _run_sequential(kernel, y, likelihood, tau, nu, damping, max_sweeps, tol, site_tol, block_size):
    n = y.size
    _, sigma, mean, log_det = _sequential_state(kernel, tau, nu)
    run = {"trace": [], "schedule": "sequential", "damping": damping, "n_sweeps": 0, "n_clipped": 0}
    change = np.inf
    while True:
        variance = np.diag(sigma).copy()
        _, _, _, log_z = _evidence_at(y, likelihood, mean, variance, tau, nu, log_det)
        run["trace"].append(log_z)
        run["converged"] = _is_converged(run["trace"], change, tol, site_tol)
        if run["converged"] or run["n_sweeps"] >= max_sweeps:
            return _sequential_result(kernel, tau, nu, y, likelihood, run, sigma, variance)
        tau_old, nu_old = tau.copy(), nu.copy()
        for start in range(0, n, block_size):
            stop = min(start + block_size, n)
            panel = _lower_panel(sigma, start, stop)
            sub_sigma, sub_mean = panel[start:stop].copy(), mean[start:stop].copy()
            sub_tau, sub_nu = tau[start:stop].copy(), nu[start:stop].copy()
            clipped, d_log_det = _sequential_block(
                likelihood.kind, likelihood.params, y[start:stop], sub_sigma, sub_mean, sub_tau,
                sub_nu, damping,
            )  # fmt: skip
            run["n_clipped"] += clipped
            log_det += d_log_det
            d_tau, d_nu = sub_tau - tau[start:stop], sub_nu - nu[start:stop]
            _apply_block(sigma, mean, panel, start, stop, d_tau, d_nu)
            tau[start:stop], nu[start:stop] = sub_tau, sub_nu
        change = _site_change(tau, tau_old, nu, nu_old, variance)
        run["n_sweeps"] += 1
        if run["n_sweeps"] % REFRESH_EVERY == 0:  # bound the drift of the rank-k updates
            _, sigma, mean, log_det = _sequential_state(kernel, tau, nu)
