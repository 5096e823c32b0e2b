"""Laplace-EM for the softmax GP (Cho, Kim & Park 2015, CKP sec. 3).

E-step (CKP eqs. 8-17): the Laplace approximation q(f) = N(m_f, V), V = (K^-1 + W)^-1, of
:mod:`gpcbench.inference.laplace_softmax`. M-step (CKP eqs. 18-22): with q fixed, maximise

    E_q[ln p(f | X, Theta)] = sum_c [-n/2 ln 2 pi - 1/2 ln|K_c| - 1/2 m_c^T K_c^-1 m_c
                                     - 1/2 tr(K_c^-1 V_cc)]                           (20)

whose gradient is CKP eq. 21; K is block diagonal (CKP eq. 3), so the problem separates into one per
hyperparameter group, with sufficient statistic A = sum_c (m_c m_c^T + V_cc) over the group's
classes. CKP eq. 22 is a plain gradient step; here L-BFGS-B on the same analytic gradient, and a
step that would lower CKP eq. 20 is refused (a generalised M-step).

The bound traced per iteration is CKP eq. 19, F = E_q ln p(f|Theta) + E_q ln p(y|f) + H(q) <=
ln p(y | X, Theta). Its first and last terms are closed form (CKP eq. 20; H(q) = 1/2 ln|2 pi e V|
with ln|V| = ln|K| - ln|I + K W|). CKP does not say how to compute E_q ln p(y|f), which
needs E_q log sum_c exp f_i^c at every point: here it is a Monte Carlo average over
BOUND_DRAWS fixed draws (common random numbers, so the traced F is a deterministic function of
q) with the first-order Taylor expansion of log-sum-exp about the mean as control variate
(its expectation is exact). The M-step changes only CKP eq. 20, so its gain in F is exact.
EM stops at a fixed point of its map (:func:`laplace_em`). The M-step can only raise
F; a Laplace E-step is not the maximiser of F over q, so F is not guaranteed to rise across
E-steps (the trace shows whether it did).
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np
from scipy import linalg, optimize
from scipy.special import logsumexp, softmax
from sklearn.exceptions import ConvergenceWarning

from gpcbench.gaussian import cholesky_lower, log_det_from_cholesky
from gpcbench.inference.laplace_softmax import (
    gaussian_draws,
    laplace_mode,
    posterior_class_covariances,
    posterior_point_blocks,
)
from gpcbench.kernels.multiclass import SoftmaxCovariance
from gpcbench.learning.mpl import LOG_BOUNDS, LearningResult
from gpcbench.learning.squarem import squarem_point
from gpcbench.monitor import Progress, warn_at_cap

LOG_2PI = np.log(2.0 * np.pi)
BOUND_DRAWS = 2000  # Monte Carlo draws for E_q log sum_c exp f_i^c in the bound (CKP eq. 19)
BOUND_SEED = 0


def m_step_statistics(covariance: SoftmaxCovariance, mean, V) -> list:
    """(A, k) per group: A = sum_c (m_c m_c^T + V_cc) over the group's k classes (CKP eq. 20)."""
    second = mean[:, :, None] * mean[:, None, :] + V
    if covariance.shared:
        return [(second.sum(axis=0), covariance.n_classes)]
    return [(block, 1) for block in second]


def expected_log_prior(X, cov, A, k, *, gradient=True):
    """sum over k classes of E_q ln N(f_c; 0, K) given A (CKP eq. 20), and its gradient
    (CKP eq. 21).

    Parameters
    ----------
    cov : Covariance
        The group's covariance K = cov(X).
    A : ndarray of shape (n, n)
        sum_c (m_c m_c^T + V_cc) over the group's classes.
    k : int
        Number of classes in the group.

    Returns
    -------
    value : float
    grad : ndarray of shape (p,) or None
        d/d log(param): sum_ij G_ij dK_ij with G = 1/2 (K^-1 A K^-1 - k K^-1) (CKP eq. 21).
    """
    n = A.shape[0]
    L = cholesky_lower(cov(X))
    KinvA = linalg.cho_solve((L, True), A, check_finite=False)
    value = -0.5 * k * n * LOG_2PI - 0.5 * k * log_det_from_cholesky(L) - 0.5 * np.trace(KinvA)
    if not gradient:
        return float(value), None
    # K^-1 by cho_solve (inverse_from_cholesky would move the fitted values by ~1e-9)
    Kinv = linalg.cho_solve((L, True), np.eye(n), check_finite=False)
    return float(value), cov.gradient_contraction(X, 0.5 * (KinvA @ Kinv - k * Kinv))


def m_step(X, covariance: SoftmaxCovariance, statistics, *, max_iter=100):
    """Maximise CKP eq. 20 group by group with L-BFGS-B; returns (covariance, gain >= 0)."""
    mask = covariance.learned_mask()
    log_params = covariance.log_params
    gain = 0.0
    for g, (cov, (A, k)) in enumerate(zip(covariance.groups, statistics)):
        def negative(values, cov=cov, A=A, k=k, g=g):
            row = log_params[g].copy()
            row[mask[g]] = values
            value, grad = expected_log_prior(X, cov.with_log_params(row), A, k)
            return -value, -grad[mask[g]]

        start = np.clip(log_params[g, mask[g]], *LOG_BOUNDS)
        before = negative(log_params[g, mask[g]])[0]
        result = optimize.minimize(negative, start, jac=True, method="L-BFGS-B",
                                   bounds=[LOG_BOUNDS] * start.size,
                                   options={"maxiter": max_iter})
        if result.fun < before:
            log_params[g, mask[g]] = result.x
            gain += before - result.fun
    return covariance.with_log_params(log_params), float(gain)


def expected_log_sum_exp(mean, cov, n_draws=BOUND_DRAWS, seed=BOUND_SEED) -> np.ndarray:
    """E log sum_c exp f^c under N(mean_i, cov_i) at every point, shape (n,), by Monte Carlo
    with the control variate lse(m) + softmax(m)^T (f - m) (module docstring)."""
    z = np.random.default_rng(seed).standard_normal((n_draws, mean.shape[1]))
    draws = gaussian_draws(mean, cov, z)  # (n, S, C)
    centre = logsumexp(mean, axis=1)
    linear = np.einsum("ic,isc->is", softmax(mean, axis=1), draws - mean[:, None, :])
    return centre + np.mean(logsumexp(draws, axis=2) - centre[:, None] - linear, axis=1)


def lower_bound(X, Y, covariance: SoftmaxCovariance, K, state, V) -> float:
    """F(q, Theta) of CKP eq. 19, E_q ln p(y|f) by Monte Carlo (module docstring)."""
    prior_term = sum(expected_log_prior(X, cov, A, k, gradient=False)[0]
                     for cov, (A, k) in zip(covariance.groups,
                                            m_step_statistics(covariance, state.f, V)))
    point_cov = posterior_point_blocks(K, state)
    likelihood_term = np.sum(Y * state.f) - np.sum(expected_log_sum_exp(state.f.T, point_cov))
    logdet_K = sum(log_det_from_cholesky(cholesky_lower(K_c)) for K_c in K)
    C, n = state.f.shape
    entropy = 0.5 * C * n * (1.0 + LOG_2PI) + 0.5 * (logdet_K - state.factors.logdet)
    return float(prior_term + likelihood_term + entropy)


class EStep(NamedTuple):
    """Hyperparameters, Laplace posterior, its class blocks V_cc and the bound F there."""

    covariance: SoftmaxCovariance
    K: np.ndarray
    state: object
    V: np.ndarray
    bound: float


def _e_step(X, Y, covariance, a0=None) -> EStep:
    """Laplace posterior (CKP eqs. 8-17), its class blocks V_cc and the bound F (CKP eq. 19)."""
    K = covariance(X)
    state = laplace_mode(K, Y, a0)
    V = posterior_class_covariances(K, state)
    return EStep(covariance, K, state, V, lower_bound(X, Y, covariance, K, state, V))


def laplace_em(X, Y, covariance: SoftmaxCovariance, *, max_iter=100, tol=1e-3, xtol=1e-3,
               accelerate=True, m_step_iter=100) -> LearningResult:
    """Laplace-EM (Cho et al. 2015, CKP sec. 3): alternate the E-step and the M-step of CKP eq. 20.

    The estimator is the fixed point of the EM map Theta -> M(E(Theta)). Its convergence is
    linear and slow where the evidence is flat (100 plain iterations leave forensic glass's
    hyperparameters moving by 0.01 per step), so by default every two EM steps are
    extrapolated by SQUAREM (:mod:`gpcbench.learning.squarem`, same fixed points), the jump
    kept when its Newton run converges and its bound is finite (the EM map has no objective
    that every step raises: F can fall across E-steps, and the fixed point is not the maximum
    of the Laplace evidence).

    Parameters
    ----------
    X, Y, covariance
        As for :func:`gpcbench.learning.mpl.softmax_mpl` (the entries of the covariance's
        ``learned_mask()`` are learned).
    max_iter : int
        M-steps at most.
    tol, xtol : float
        Converged at a fixed point of the EM map: one EM step changes the bound F by less than
        ``tol`` and no covariance entry by more than ``xtol`` times the largest
        (:func:`_kernel_change`).
    accelerate : bool
        SQUAREM extrapolation (above); the plain EM map otherwise.
    m_step_iter : int
        L-BFGS-B iterations per group and M-step.

    Returns
    -------
    LearningResult
        ``trace``: one entry per E-step (iteration, log_evidence = Laplace log q(y|X,Theta),
        lower_bound = F(q_t, Theta_t), m_step_gain = F(q_{t-1}, Theta_t) -
        F(q_{t-1}, Theta_{t-1}) >= 0 after an M-step, None after an extrapolation (marked
        ``extrapolated``), newton_iterations, step = :func:`_kernel_change` from the previous
        E-step);
        ``n_iter`` = M-steps done.
    """
    run = _EMRun(X, Y, m_step_iter, Progress("Laplace-EM"))
    current = run.e_step(covariance, None)
    converged = False
    while not converged and run.n_iter < max_iter:
        first = run.em_step(current)
        converged = run.at_fixed_point(current, first, tol, xtol)
        if converged or not accelerate or run.n_iter >= max_iter:
            current = first
            continue
        second = run.em_step(first)
        converged = run.at_fixed_point(first, second, tol, xtol)
        current = second if converged else run.extrapolate(current, first, second)
    if not converged:
        warn_at_cap("Laplace-EM", "EM", max_iter)
    elif not current.state.converged:
        warnings.warn("Laplace-EM: the last Newton run for the posterior mode did not converge",
                      ConvergenceWarning, stacklevel=2)
    converged = bool(converged and current.state.converged)
    return LearningResult(current.covariance, current.state, run.trace, converged, run.n_iter)


class _EMRun:
    """E-steps, M-steps and SQUAREM jumps of one Laplace-EM run, and its trace."""

    def __init__(self, X, Y, m_step_iter, progress):
        self.X, self.Y, self.m_step_iter, self.progress = X, Y, m_step_iter, progress
        self.trace: list[dict] = []
        self.n_iter = 0

    def e_step(self, covariance, previous: EStep | None, gain=None) -> EStep:
        a0 = None if previous is None else previous.state.a
        new = _e_step(self.X, self.Y, covariance, a0)
        step = None if previous is None else _kernel_change(previous.K, new.K)
        self.trace.append({"iteration": len(self.trace), "log_evidence": float(new.state.log_evidence),
                           "lower_bound": new.bound, "m_step_gain": gain,
                           "newton_iterations": new.state.n_iter, "step": step})
        self.progress("E-step %d bound F %.6f", len(self.trace) - 1, new.bound)
        return new

    def em_step(self, current: EStep) -> EStep:
        covariance, gain = m_step(self.X, current.covariance,
                                  m_step_statistics(current.covariance, current.state.f, current.V),
                                  max_iter=self.m_step_iter)
        self.n_iter += 1
        return self.e_step(covariance, current, gain)

    def at_fixed_point(self, before: EStep, after: EStep, tol, xtol) -> bool:
        return (abs(after.bound - before.bound) < tol
                and _kernel_change(before.K, after.K) <= xtol)

    def extrapolate(self, start: EStep, first: EStep, second: EStep) -> EStep:
        """The E-step at the SQUAREM point of three EM iterates if its Newton run converges
        and its bound is finite, else the last iterate."""
        mask = start.covariance.learned_mask()
        point = squarem_point(*(e.covariance.log_params[mask] for e in (start, first, second)))
        if point is None:
            return second
        log_params = second.covariance.log_params
        log_params[mask] = np.clip(point, *LOG_BOUNDS)
        try:
            jump = self.e_step(second.covariance.with_log_params(log_params), second)
        except (linalg.LinAlgError, FloatingPointError):
            return second
        self.trace[-1]["extrapolated"] = True
        return jump if jump.state.converged and np.isfinite(jump.bound) else second


def _kernel_change(K_before, K_after) -> float:
    """Largest change of a covariance entry relative to the largest entry: the step in the
    function the classifier uses, blind to a coordinate drifting to a bound (a signal
    variance or inverse lengthscale running to zero moves its log without end)."""
    return float(np.max(np.abs(K_after - K_before)) / np.max(np.abs(K_before)))
