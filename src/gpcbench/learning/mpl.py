"""Maximum penalised likelihood (MPL) for the softmax Laplace GP (Williams & Barber 1998).

W&B sec. 5.2: for the multiclass model "a full Bayesian integration over possible parameter
settings was beyond our computational means", so the hyperparameters maximise the penalised
likelihood log q(y | X, theta) + log p(theta), with q the Laplace approximation of
:mod:`gpcbench.inference.laplace_softmax` and p(theta) the prior of W&B sec. 5: independent
Gaussians on the log hyperparameters, mean -3, standard deviation 3. W&B used a scaled
conjugate gradient optimiser; here L-BFGS-B with the analytic gradient (W&B app. B) does the
same job. Each evaluation warm-starts Newton from the previous K^-1 f.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from gpcbench.inference.laplace_softmax import (
    SoftmaxCovariance,
    SoftmaxLaplace,
    evidence_gradient,
    laplace_mode,
)

LOG_PRIOR_MEAN = -3.0  # W&B sec. 5: "Gaussian with a mean of -3 and a standard deviation of 3"
LOG_PRIOR_SD = 3.0
#: Box on the log hyperparameters that keeps trial steps of the optimiser finite.
LOG_BOUNDS = (-15.0, 10.0)


@dataclass(frozen=True)
class LearningResult:
    """Fitted covariance, the Laplace approximation at it, per-iteration trace, flags."""

    covariance: SoftmaxCovariance
    laplace: SoftmaxLaplace
    trace: list
    converged: bool
    n_iter: int


def log_prior(values, mean=LOG_PRIOR_MEAN, sd=LOG_PRIOR_SD):
    """Sum of log N(values; mean, sd^2) and its gradient."""
    z = (np.asarray(values, dtype=float) - mean) / sd
    value = -0.5 * np.sum(z**2) - z.size * np.log(sd * np.sqrt(2.0 * np.pi))
    return float(value), -z / sd


def penalised_objective(X, Y, covariance: SoftmaxCovariance, prior=(LOG_PRIOR_MEAN, LOG_PRIOR_SD)):
    """Negative log posterior of the learned log hyperparameters and its gradient, as a
    function of the vector ``covariance.log_params[covariance.learned_mask()]``."""
    mask = covariance.learned_mask()
    warm = {"a": None}

    def negative_log_posterior(values):
        cov = covariance.with_learned(values)
        K = cov.matrices(X)
        state = laplace_mode(K, Y, warm["a"])
        warm["a"] = state.a
        penalty, penalty_grad = log_prior(values, *prior)
        grad = evidence_gradient(X, cov, K, state)[mask] + penalty_grad
        return -(state.log_evidence + penalty), -grad

    return negative_log_posterior


def softmax_mpl(X, Y, covariance: SoftmaxCovariance, *, max_iter=100, tol=1e-5,
                prior=(LOG_PRIOR_MEAN, LOG_PRIOR_SD)) -> LearningResult:
    """MPL hyperparameters of the softmax Laplace GP (W&B sec. 5.2) by L-BFGS-B.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Y : ndarray of shape (C, n)
        One-hot targets.
    covariance : SoftmaxCovariance
        Starting values; the entries of ``learned_mask()`` are optimised.
    max_iter : int
        L-BFGS-B iterations at most.
    tol : float
        L-BFGS-B projected-gradient tolerance (``gtol``).
    prior : (float, float)
        Mean and standard deviation of the Gaussian prior on every learned log value.

    Returns
    -------
    LearningResult
        ``trace`` has one entry per L-BFGS-B iteration (log posterior and log evidence);
        ``converged`` is the optimiser's success and the final Newton run's convergence;
        ``n_iter`` counts the evidence evaluations (Laplace fits) of the optimiser.
    """
    objective = penalised_objective(X, Y, covariance, prior)
    start = np.clip(covariance.log_params[covariance.learned_mask()], *LOG_BOUNDS)
    trace = []

    def record(intermediate_result):
        penalty = log_prior(intermediate_result.x, *prior)[0]
        trace.append({"iteration": len(trace) + 1,
                      "log_posterior": -float(intermediate_result.fun),
                      "log_evidence": -float(intermediate_result.fun) - penalty})

    result = optimize.minimize(objective, start, jac=True, method="L-BFGS-B",
                               bounds=[LOG_BOUNDS] * start.size, callback=record,
                               options={"maxiter": max_iter, "gtol": tol})
    fitted = covariance.with_learned(result.x)
    state = laplace_mode(fitted.matrices(X), Y)
    return LearningResult(fitted, state, trace, bool(result.success and state.converged),
                          int(result.nfev))
