"""Maximum penalised likelihood (MPL) for Laplace GP classification (Williams & Barber 1998).

The penalised likelihood of the log covariance hyperparameters x = log theta is

    log q(y | X, theta) + log p(x),

the Laplace evidence (W&B eq. 9) plus a Gaussian prior on each log hyperparameter, mean -3 and
standard deviation 3 (W&B sec. 5, :class:`~gpcbench.priors.GaussianLogPrior`, shared by every use
here).

Binary: it is also the unnormalised log posterior of x, the target of the Hybrid Monte Carlo
sampler (W&B sec. 3.2 and W&B Appendix D; :mod:`gpcbench.mcmc.hmc`), so
:class:`LaplaceHyperposterior` serves both. Its gradient is the exact one of
:func:`~gpcbench.inference.laplace.log_evidence_gradient` (W&B Appendix B, implicit term included).
Only the ``learned`` hyperparameters move; the others keep their values (e.g. theta2 = 0,
which has no finite logarithm).

Softmax multiclass (W&B sec. 5.2: "a full Bayesian integration over possible parameter
settings was beyond our computational means"): :func:`softmax_mpl` maximises the same
penalised likelihood with q the Laplace approximation of
:mod:`gpcbench.inference.laplace_softmax`, warm-starting Newton from the previous K^-1 f.

W&B maximise with 20 iterations of scaled conjugate gradients; here L-BFGS-B runs to
convergence (bounds on x only keep trial points inside the range where exp(x) and the
covariance stay finite).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import LinAlgError
from scipy.optimize import minimize
from sklearn.exceptions import ConvergenceWarning

from gpcbench.inference.laplace import (
    LaplaceResult,
    laplace_mode,
    log_evidence_gradient,
)
from gpcbench.inference.laplace_softmax import SoftmaxLaplace, evidence_gradient
from gpcbench.inference.laplace_softmax import laplace_mode as softmax_laplace_mode
from gpcbench.kernels.covariance import Covariance
from gpcbench.kernels.multiclass import SoftmaxCovariance
from gpcbench.monitor import Progress, warn_at_cap
from gpcbench.priors import GaussianLogPrior

LOG_BOUND = 15.0
#: Box on the softmax model's log hyperparameters (also Laplace-EM's M-step).
LOG_BOUNDS = (-15.0, 10.0)


@dataclass
class LaplaceHyperposterior:
    """x -> (log q(y | X, theta) + log p(x), gradient) over the learned log hyperparameters.

    Each call finds the Laplace mode warm-started from the previous call's (GPML-style), and
    keeps the last :class:`LaplaceResult` in ``last``. Points where the covariance is not
    finite or the mode cannot be found have log density -inf.

    Parameters
    ----------
    covariance : Covariance
        Supplies the fixed hyperparameters and the layout (shared or ARD lengthscales).
    X : array of shape (n, d)
    y : array of shape (n,) in {-1, +1}
    likelihood : LogisticLikelihood or ProbitLikelihood
    learned : array of bool of shape (covariance.n_params,)
        Which entries of ``covariance.log_params`` are free.
    prior : GaussianLogPrior
    """

    covariance: Covariance
    X: np.ndarray
    y: np.ndarray
    likelihood: object
    learned: np.ndarray
    prior: GaussianLogPrior = field(default_factory=GaussianLogPrior)
    last: LaplaceResult | None = None

    def __post_init__(self):
        self.learned = np.asarray(self.learned, dtype=bool)
        if not np.all(np.isfinite(self.covariance.log_params[self.learned])):
            raise ValueError("hyperparameters equal to 0 cannot be learned in log space")

    @property
    def x0(self) -> np.ndarray:
        """The learned log hyperparameters of ``covariance``."""
        return self.covariance.log_params[self.learned]

    def covariance_at(self, x) -> Covariance:
        """The covariance with the learned log hyperparameters set to x."""
        log_params = self.covariance.log_params.copy()
        log_params[self.learned] = x
        return self.covariance.with_log_params(log_params)

    def laplace(self, x) -> LaplaceResult:
        """The Laplace approximation at x, warm-started from the last one."""
        start = None if self.last is None else self.last.alpha
        kernel = self.covariance_at(x)(self.X)
        self.last = laplace_mode(kernel, self.y, self.likelihood, initial_alpha=start)
        return self.last

    def __call__(self, x):
        x = np.asarray(x, dtype=float)
        log_prior, prior_gradient = self.prior(x)
        try:
            with np.errstate(over="raise", invalid="raise"):
                result = self.laplace(x)
                gradient = log_evidence_gradient(self.covariance_at(x), self.X, result)
        except (FloatingPointError, LinAlgError, ValueError):
            return -np.inf, np.zeros_like(x)
        return result.log_evidence + log_prior, gradient[self.learned] + prior_gradient


@dataclass(frozen=True)
class MPLResult:
    """Outcome of :func:`maximize_penalized_likelihood`."""

    x: np.ndarray
    covariance: Covariance
    laplace: LaplaceResult
    log_posterior: float
    converged: bool
    n_iter: int
    message: str
    trace: list


def maximize_penalized_likelihood(posterior: LaplaceHyperposterior, *, max_iter=200,
                                  gtol=1e-5) -> MPLResult:
    """L-BFGS-B on -(log evidence + log prior) with the analytic gradient, from posterior.x0.

    ``trace`` has one entry per L-BFGS iteration (log evidence, log posterior, gradient norm,
    hyperparameters, Newton iterations of the Laplace mode).
    """
    trace, cache = [], {}

    def evaluate(x):
        """posterior(x) and its Laplace result, computed once per point."""
        key = np.asarray(x, dtype=float).tobytes()
        if key not in cache:
            cache.clear()
            value, gradient = posterior(x)
            cache[key] = (value, gradient, posterior.last)
        return cache[key]

    def negative(x):
        value, gradient, _ = evaluate(x)
        return -value, -gradient

    progress = Progress("Laplace MPL")

    def record(x):
        trace.append(_trace_entry(len(trace), posterior, x, *evaluate(x)))
        progress("iteration %d log posterior %.6f", len(trace) - 1, trace[-1]["log_posterior"])

    x0 = posterior.x0
    if not np.isfinite(evaluate(x0)[0]):
        raise ValueError("the penalised likelihood is not finite at the initial hyperparameters")
    record(x0)
    bounds = [(-LOG_BOUND, LOG_BOUND)] * x0.size
    opt = minimize(negative, x0, jac=True, method="L-BFGS-B", bounds=bounds, callback=record,
                   options={"maxiter": max_iter, "gtol": gtol})
    value, _, laplace = evaluate(opt.x)
    warn_unconverged("Laplace MPL", opt, laplace.converged, max_iter)
    return MPLResult(opt.x, posterior.covariance_at(opt.x), laplace, float(value),
                     bool(opt.success and laplace.converged), int(opt.nit), str(opt.message),
                     trace)


def warn_unconverged(who: str, optimum, newton_converged: bool, max_iter: int) -> None:
    """ConvergenceWarning naming what did not converge: L-BFGS-B at its iteration cap, L-BFGS-B
    stopped short of the gradient test for another reason (its message), or the Newton search
    for the posterior mode at the hyperparameters L-BFGS-B returned."""
    if not optimum.success and optimum.nit >= max_iter:
        warn_at_cap(who, "L-BFGS-B", max_iter, str(optimum.message))
    elif not optimum.success:
        warnings.warn(f"{who}: L-BFGS-B stopped without converging: {optimum.message}",
                      ConvergenceWarning, stacklevel=3)
    elif not newton_converged:
        warnings.warn(f"{who}: the Newton search for the posterior mode did not converge at "
                      "the hyperparameters L-BFGS-B returned", ConvergenceWarning, stacklevel=3)


def _trace_entry(iteration, posterior, x, value, gradient, laplace) -> dict:
    return {
        "iteration": iteration,
        "log_evidence": float(laplace.log_evidence),
        "log_posterior": float(value),
        "gradient_norm": float(np.linalg.norm(gradient)),
        "hyperparameters": posterior.covariance_at(x).to_dict(),
        "newton_iterations": int(laplace.n_iter),
        "newton_converged": bool(laplace.converged),
    }


# ------------------------------------------------------------------ softmax multiclass
@dataclass(frozen=True)
class LearningResult:
    """Fitted covariance, the Laplace approximation at it, per-iteration trace, flags."""

    covariance: SoftmaxCovariance
    laplace: SoftmaxLaplace
    trace: list
    converged: bool
    n_iter: int


def penalised_objective(X, Y, covariance: SoftmaxCovariance,
                        prior: GaussianLogPrior = GaussianLogPrior()):
    """Negative log posterior of the learned log hyperparameters and its gradient, as a
    function of the vector ``covariance.log_params[covariance.learned_mask()]``."""
    mask = covariance.learned_mask()
    warm = {"a": None}

    def negative_log_posterior(values):
        cov = covariance.with_learned(values)
        K = cov(X)
        state = softmax_laplace_mode(K, Y, warm["a"])
        warm["a"] = state.a
        penalty, penalty_grad = prior(values)
        grad = evidence_gradient(X, cov, K, state)[mask] + penalty_grad
        return -(state.log_evidence + penalty), -grad

    return negative_log_posterior


def softmax_mpl(X, Y, covariance: SoftmaxCovariance, *, max_iter=100, tol=1e-5,
                prior: GaussianLogPrior = GaussianLogPrior()) -> LearningResult:
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
    prior : GaussianLogPrior
        The prior on every learned log value (W&B sec. 5 by default).

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

    progress = Progress("softmax Laplace MPL")

    def record(intermediate_result):
        penalty = prior(intermediate_result.x)[0]
        progress("iteration %d log posterior %.6f", len(trace) + 1, -intermediate_result.fun)
        trace.append({"iteration": len(trace) + 1,
                      "log_posterior": -float(intermediate_result.fun),
                      "log_evidence": -float(intermediate_result.fun) - penalty})

    result = minimize(objective, start, jac=True, method="L-BFGS-B",
                               bounds=[LOG_BOUNDS] * start.size, callback=record,
                               options={"maxiter": max_iter, "gtol": tol})
    fitted = covariance.with_learned(result.x)
    state = softmax_laplace_mode(fitted(X), Y)
    warn_unconverged("softmax Laplace MPL", result, state.converged, max_iter)
    return LearningResult(fitted, state, trace, bool(result.success and state.converged),
                          int(result.nfev))
