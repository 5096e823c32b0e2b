"""Laplace's approximation for binary GP classification (Williams & Barber 1998, W&B sec. 3).

Notation (W&B's y is our latent f, their t our label y in {-1, +1}; GPML names in brackets).
The unnormalised log posterior of the latent values is (W&B eq. 8, constants dropped)

    Psi(f) = sum_i log p(y_i | f_i) - 1/2 f^T K^-1 f,

maximised by Newton's method (W&B Appendix A, W&B eqs. 15-18). With
W = -diag(d2 log p / df2) >= 0 and f = K a, the Newton step is taken in a (GPML alg. 3.1,
stable form of W&B eq. 18):

    b = W f + dlog p(f),   a_new = b - W^1/2 B^-1 W^1/2 K b,   B = I + W^1/2 K W^1/2,

(``SiteFactorization.weights(b)`` with site precisions W), followed by step halving on
Psi(a) = sum log p(y | K a) - 1/2 a^T K a until Psi does not decrease; the iteration stops when
a step changes f by less than ``tol`` (max norm). K^-1 is never formed, so K may be singular (theta2 = 0).

At the mode f^ the approximate log evidence is (W&B eq. 9; GPML eq. 3.32, GPML alg. 3.2)

    log q(y | X) = sum_i log p(y_i | f^_i) - 1/2 a^T f^ - sum_i log L_ii,   L L^T = B.

Its gradient in a log covariance hyperparameter theta_j (W&B Appendix B; GPML alg. 5.1,
GPML eqs. 5.22-5.24) has the explicit part, at fixed f^,

    1/2 a^T dK_j a - 1/2 tr(R dK_j),   R = W^1/2 B^-1 W^1/2 = (K + W^-1)^-1,

and the implicit part through the mode, d f^/dtheta_j = (I + K W)^-1 dK_j dlog p (W&B Appendix B):

    sum_i s2_i (df^/dtheta_j)_i,   s2 = d(-1/2 log|B|)/df^ = 1/2 diag((K^-1 + W)^-1) d3log p

(dW_ii/df_i = -d3log p_i; GPML's code ``dfhat = g.*d3lp`` has this sign), so that the
implicit part is  s2^T (I - K R) dK_j dlog p = u^T dK_j dlog p,  u = s2 - R K s2. Both parts are
one contraction sum_kl Omega_kl dK_j,kl with Omega = 1/2 (a a^T - R) + u dlog p^T
(:meth:`Covariance.gradient_contraction`), so the whole gradient costs O(n^3) once plus O(n^2 d).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpcbench.gaussian import SiteFactorization

MAX_HALVINGS = 30
ROUNDOFF = 1e-12


@dataclass(frozen=True)
class LaplaceResult:
    """The Laplace approximation N(f^, (K^-1 + W)^-1) at the mode and its evidence."""

    mode: np.ndarray  # f^ = K a
    alpha: np.ndarray  # a = K^-1 f^ (= dlog p(f^) at the mode, W&B eq. 16)
    dlog_lik: np.ndarray  # dlog p / df at f^
    d3log_lik: np.ndarray  # d3log p / df3 at f^
    factor: SiteFactorization  # B = I + W^1/2 K W^1/2 at f^
    objective: float  # Psi(f^), W&B eq. 8 without constants
    log_evidence: float  # W&B eq. 9
    converged: bool
    n_iter: int

    def predict(self, cross, prior_variance):
        """Latent mean k^T a and variance kappa - k^T (K + W^-1)^-1 k at new X (W&B Appendix A)."""
        return self.factor.predict(cross, prior_variance, self.alpha)


def laplace_mode(kernel, y, likelihood, *, initial_alpha=None, tol=1e-8, max_iter=100):
    """Newton's method for the mode of the latent posterior (W&B Appendix A, GPML alg. 3.1).

    Parameters
    ----------
    kernel : array of shape (n, n)
        Prior covariance K (K&G eq. 13, theta2 on the diagonal).
    y : array of shape (n,)
        Labels in {-1, +1}.
    likelihood : LogisticLikelihood or ProbitLikelihood
        See :mod:`gpcbench.likelihoods`.
    initial_alpha : array of shape (n,), optional
        Warm start a (f = K a), used only if its Psi beats that of a = 0 (as GPML does).
    tol : float
        Stop when a Newton step changes no f_i by more than this (W&B stop on the relative
        change of W, 1e-4; Newton's quadratic convergence makes the final f far more accurate
        than ``tol``).
    max_iter : int
        Maximum number of Newton steps.

    Returns
    -------
    LaplaceResult
    """
    kernel = np.asarray(kernel, dtype=float)
    y = np.asarray(y, dtype=float)
    alpha = np.zeros(y.size)
    psi = _objective(kernel @ alpha, alpha, y, likelihood)
    if initial_alpha is not None:
        warm = np.asarray(initial_alpha, dtype=float)
        warm_psi = _objective(kernel @ warm, warm, y, likelihood)
        if warm_psi > psi:
            alpha, psi = warm, warm_psi
    converged = False
    for n_iter in range(1, max_iter + 1):
        step = _newton_step(kernel, y, likelihood, alpha, psi)
        if step is None:  # no step size increases Psi: stuck (not at a converged mode)
            break
        alpha, psi, change = step
        if change < tol:
            converged = True
            break
    return laplace_state(kernel, y, likelihood, alpha, converged=converged, n_iter=n_iter)


def laplace_state(kernel, y, likelihood, alpha, *, converged=True, n_iter=0) -> LaplaceResult:
    """The approximation at f = K alpha: factor of B, Psi and log evidence (W&B eq. 9)."""
    kernel = np.asarray(kernel, dtype=float)
    alpha = np.asarray(alpha, dtype=float)
    f = kernel @ alpha
    log_lik, dlog_lik, d2log_lik, d3log_lik = likelihood.derivatives(y, f)
    factor = SiteFactorization.from_sites(kernel, -d2log_lik)
    objective = float(np.sum(log_lik) - 0.5 * alpha @ f)
    log_evidence = objective - 0.5 * factor.log_det  # W&B eq. 9: - sum log L_ii = -1/2 log|B|
    return LaplaceResult(f, alpha, dlog_lik, d3log_lik, factor, objective, log_evidence,
                         converged, n_iter)


def averaged_predictive(covariance, log_params, weights, X, y, likelihood, X_test):
    """(p(y = -1 | x), p(y = +1 | x)) at X_test averaged over hyperparameter draws (W&B eq. 7,
    W&B Appendix A's integral for each): row k of ``log_params`` sets the covariance's log
    hyperparameters, row k of ``weights`` is the alpha = K^-1 f^ of its Laplace mode."""
    negative, positive = np.zeros(X_test.shape[0]), np.zeros(X_test.shape[0])
    for row, alpha in zip(log_params, weights):
        at_row = covariance.with_log_params(row)
        state = laplace_state(at_row(X), y, likelihood, alpha)
        mean, variance = state.predict(at_row(X_test, X), at_row.diag(X_test))
        positive += likelihood.predictive_probability(mean, variance)
        negative += likelihood.predictive_probability(-mean, variance)
    return negative / len(log_params), positive / len(log_params)


def log_evidence_gradient(covariance, X, result: LaplaceResult) -> np.ndarray:
    """d log q(y | X) / d log(covariance parameter), explicit + implicit parts (W&B Appendix B).

    Parameters
    ----------
    covariance : Covariance
        The covariance whose training matrix ``result`` was computed with.
    X : array of shape (n, d)
        Training inputs.
    result : LaplaceResult
        The converged approximation (the implicit term assumes dPsi/df = 0 at ``result.mode``).

    Returns
    -------
    ndarray of shape (covariance.n_params,)
    """
    factor = result.factor
    r_matrix = factor.site_kernel_inverse()  # R = W^1/2 B^-1 W^1/2      (GPML alg. 5.1 line 7)
    posterior_variance = factor.variance()  # diag((K^-1 + W)^-1)       (line 8)
    s2 = 0.5 * posterior_variance * result.d3log_lik  # d log q / d f^    (line 8)
    u = s2 - r_matrix @ (factor.kernel @ s2)  # (I - R K) s2             (line 13, transposed)
    weight = 0.5 * (np.outer(result.alpha, result.alpha) - r_matrix)  # (line 10)
    weight += np.outer(u, result.dlog_lik)  # implicit part s2^T (I - K R) dK dlog p (11-13)
    return covariance.gradient_contraction(X, weight)


def _objective(f, alpha, y, likelihood) -> float:
    """Psi = sum log p(y | f) - 1/2 a^T f (W&B eq. 8 without constants)."""
    return float(np.sum(likelihood.derivatives(y, f)[0]) - 0.5 * alpha @ f)


def _newton_step(kernel, y, likelihood, alpha, psi):
    """One Newton step in a (GPML alg. 3.1 lines 4-8) with step halving.

    Returns (a, Psi, max |change of f|), or None if no halving increases Psi. Changes of Psi
    within round-off (``ROUNDOFF`` relative) count as increases, so that steps near the mode,
    where Psi changes by less than its rounding error, are taken.
    """
    f = kernel @ alpha
    _, dlog_lik, d2log_lik, _ = likelihood.derivatives(y, f)
    factor = SiteFactorization.from_sites(kernel, -d2log_lik)
    step = factor.weights(-d2log_lik * f + dlog_lik) - alpha  # b = W f + dlog p    (line 6-8)
    kernel_step = kernel @ step
    slack = ROUNDOFF * max(1.0, abs(psi))
    scale = 1.0
    for _ in range(MAX_HALVINGS):
        trial = alpha + scale * step
        trial_psi = _objective(f + scale * kernel_step, trial, y, likelihood)
        if trial_psi >= psi - slack:
            return trial, trial_psi, scale * float(np.max(np.abs(kernel_step)))
        scale *= 0.5
    return None
