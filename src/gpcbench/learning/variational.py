"""Hyperparameter learning for the variational GP classifiers (Gibbs & MacKay 2000).

The hyperparameters maximise the optimised *lower* bound L*(theta) = max_xi L(theta, xi) by
L-BFGS-B in log space; each evaluation re-optimises xi, warm-started from the previous
evaluation, and the gradient is the partial derivative at the optimal xi.

The upper bound is not maximised: U*(theta) = max_f [log p(y | f) - 1/2 f^T K^-1 f]
(see :mod:`gpcbench.inference.variational`) only grows with the signal variance theta0 --
substituting f = sqrt(c) f' with K = c K' leaves the prior term unchanged while the
likelihood term of the rescaled best f' approaches 0 -- so its supremum, 0, is approached
only as theta0 -> infinity whenever some f separates the labels (always, for distinct inputs
and a squared-exponential covariance). The upper-bound classifier therefore learns its
hyperparameters with the lower bound and uses the upper bound to infer the latent values,
which is how Kim & Ghahramani (2006, K&G sec. 3.5.2) describe GPC-VU.

Covariance (Kim & Ghahramani 2006, K&G sec. 3.5.2): the variational rows use K&G eq. 13 without the
latent-noise term (theta2 = 0, not learned) and ARD weights "of type 1/sigma_m^2": the
squared-exponential exp(-1/2 sum_m (x_m - x'_m)^2 / sigma_m^2) of Gibbs & MacKay is K&G eq. 13
with l_m = 1/sigma_m^2, the same function, so the fitted inverse lengthscales are the l_m of
K&G Table 1 directly (sigma_m = l_m^-1/2); the optimum does not depend on which of the two is
the optimisation variable.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from gpcbench.inference.variational import BoundResult, optimize_bound
from gpcbench.kernels.covariance import Covariance, hyperparameter_mask
from gpcbench.learning.stopping import DEFAULT_FTOL, DEFAULT_GTOL, LOG_BOUNDS, StoppingRule
from gpcbench.monitor import Progress, warn_at_cap

#: Hyperparameters learned by default: theta2 is absent from the variational models.
LEARNED = ("theta0", "theta1", "inverse_lengthscale")
#: Box constraints on every learned log hyperparameter (numerical safety only).


@dataclass
class VariationalFit:
    """Outcome of :func:`learn_hyperparameters`."""

    covariance: Covariance
    result: BoundResult
    trace: list
    converged: bool


class _Objective:
    """-L*(theta) and its gradient over the learned log hyperparameters, xi warm-started."""

    def __init__(self, X, y, covariance, mask, tol):
        self.X, self.y, self.covariance, self.mask, self.tol = X, y, covariance, mask, tol
        self.start = None
        self.last = None
        self.evaluated = None  # (point, value, ascent gradient) of the last call

    def covariance_at(self, log_learned) -> Covariance:
        log_params = self.covariance.log_params.copy()
        log_params[self.mask] = log_learned
        return self.covariance.with_params(np.exp(log_params))

    def __call__(self, log_learned):
        covariance = self.covariance_at(log_learned)
        result = optimize_bound("lower", covariance(self.X), self.y, self.start, tol=self.tol)
        self.start, self.last = result.variational, result
        gradient = result.gradient(covariance, self.X)[self.mask]
        self.evaluated = (np.array(log_learned, dtype=float), result.value, gradient)
        return -result.value, -gradient

    def value_and_gradient(self, log_learned):
        """The bound and its ascent gradient at a point (L-BFGS-B's callback point is its
        last evaluation, so this rarely evaluates again)."""
        if self.evaluated is None or not np.array_equal(self.evaluated[0], log_learned):
            self(log_learned)
        return self.evaluated[1:]


def trace_entry(iteration, covariance, value, result, rule_fields=None) -> dict:
    """One trace record: iteration, lower_bound, hyperparameters, inner iterations and status,
    and the stopping rule's gradient_norm, at_bound and stop_reason."""
    return {
        "iteration": iteration,
        "lower_bound": float(value),
        "hyperparameters": covariance.to_dict(),
        "bound_iterations": result.n_iter,
        "bound_converged": result.converged,
        **(rule_fields or {}),
    }


def learn_hyperparameters(X, y, covariance: Covariance, *, learn=LEARNED, max_iter=100,
                          tol=1e-8, gtol=DEFAULT_GTOL, ftol=DEFAULT_FTOL) -> VariationalFit:
    """Maximise the lower bound over the ``learn``-ed log hyperparameters (L-BFGS-B), stopped
    by the rule shared by every learning method (:mod:`gpcbench.learning.stopping`).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    covariance : Covariance
        Starting hyperparameters; the others stay fixed.
    learn : collection of str
        Names among theta0, theta1, theta2, inverse_lengthscale.
    max_iter : int
        L-BFGS-B iterations.
    tol : float
        Tolerance of each inner bound optimisation.
    gtol, ftol : float
        The stopping rule (:class:`~gpcbench.learning.stopping.StoppingRule`) on the bound:
        projected gradient max-norm, or relative change of the bound with the log
        hyperparameters' step; L-BFGS-B's own convergence also ends the search.

    Returns
    -------
    VariationalFit
        The lower-bound result at the final hyperparameters, a trace with one entry per
        L-BFGS-B iteration (entry 0: the start), and whether L-BFGS-B and the last inner
        optimisation converged.
    """
    mask = hyperparameter_mask(covariance, learn)
    if not np.all(covariance.params[mask] > 0):
        raise ValueError("learned hyperparameters must start > 0 (they are learned in log space)")
    objective = _Objective(X, y, covariance, mask, tol)
    names = [name for name, learned in zip(covariance.param_names, mask) if learned]
    rule = StoppingRule(names, gtol=gtol, ftol=ftol)
    progress = Progress("variational bound")
    trace = []

    def record(point):
        value, gradient = objective.value_and_gradient(point)
        rule_fields = rule.update(value, point, gradient)
        trace.append(trace_entry(len(trace), objective.covariance_at(point), value,
                                 objective.last, rule_fields))
        progress("iteration %d bound %.6f", len(trace) - 1, value)
        if rule.converged:
            raise StopIteration

    start = covariance.log_params[mask]
    try:
        record(start)
        optimum = minimize(objective, start, jac=True, method="L-BFGS-B",
                           bounds=[LOG_BOUNDS] * int(mask.sum()), callback=record,
                           options={"maxiter": max_iter})
        point, message = optimum.x, str(optimum.message)
        converged = rule.converged or optimum.success
    except StopIteration:  # the rule met at the start
        point, message, converged = start, "", True
    fitted = objective.covariance_at(point)
    final = optimize_bound("lower", fitted(X), y, objective.start, tol=tol)
    converged = bool(converged and final.converged)
    if not converged:
        warn_at_cap("variational bound", "L-BFGS-B", max_iter, message)
    return VariationalFit(fitted, final, trace, converged)
