"""EM-EP hyperparameter learning (Kim & Ghahramani 2006, K&G sec. 3.3 and Appendix).

E-step: EP at the current hyperparameters gives q(f) = N(h, A) = N(C alpha, A) (K&G eq. 27).
M-step: with q fixed, maximise the Jensen lower bound (K&G eqs. 29, 55)

    F = E_q[log p(y | f, epsilon)] + E_q[log p(f | X, theta_cov)] + H(q)
      =            F_epsilon       +          F_theta_cov          + H(q)

over the hyperparameters. F_theta_cov (K&G eq. 56) is

    F_theta_cov = -1/2 log|2 pi C| - 1/2 tr(C^-1 (h h^T + A)),

with gradient (K&G eq. 57, i.e. K&G eq. 31 after h = C alpha)

    dF/dtheta = 1/2 tr[(C^-1 (h h^T + A) C^-1 - C^-1) dC/dtheta],

maximised in log space with L-BFGS-B. F_epsilon = sum_i [P_i log(1 - eps) + (1 - P_i) log eps],
P_i = q(y_i f_i > 0), is maximised in closed form by eps = mean_i (1 - P_i) (the
likelihood's ``optimal_parameter``). The two steps alternate until the stopping rule of
:mod:`gpcbench.learning.stopping` holds at an E-step (gradient of log Z, free by Theorem 1,
or log Z and the hyperparameters no longer moving); every iteration is recorded in a trace.

Theorem 1: at the E-step's hyperparameters the gradient of F_theta_cov equals the gradient of
the EP log evidence (``EPResult.log_evidence_gradient``); the tests check this identity.

With epsilon = 0 the likelihood is H(y f), log p(y | f) = -inf on a set of positive q-mass and
F itself is -inf; F_theta_cov, which is all the M-step uses, stays finite and is recorded too.

K&G's variants (K&G Tables 4-5) and its initialisation protocol (K&G footnotes 11-12) are in
:mod:`gpcbench.estimators.ep_variants`; the result and trace shared with the L-BFGS-B search of
:mod:`gpcbench.learning.evidence_lbfgs` are in :mod:`gpcbench.learning.ep_learning`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.linalg import LinAlgError, cholesky
from scipy.optimize import minimize

from gpcbench.kernels.covariance import COVARIANCE_NAMES, Covariance
from gpcbench.gaussian import inverse_from_cholesky, log_det_from_cholesky
from gpcbench.inference.ep import EPResult, expectation_propagation
from gpcbench.learning.ep_learning import (
    EPLearning,
    free_mask,
    learnable,
    likelihood_gradient,
    trace_entry,
)
from gpcbench.learning.squarem import squarem_point
from gpcbench.learning.stopping import DEFAULT_GTOL, LOG_BOUNDS, StoppingRule, stalled
from gpcbench.likelihoods import Likelihood
from gpcbench.monitor import Progress, warn_at_cap

#: L-BFGS-B iterations per M-step (see :func:`m_step`).
M_STEP_MAXITER = 10


# ---------------------------------------------------------------------------- the bound
def _prior_cholesky(cov) -> np.ndarray:
    """Lower Cholesky factor of the prior covariance C, which F needs to be positive definite."""
    try:
        return cholesky(cov, lower=True)
    except LinAlgError as err:
        raise LinAlgError(
            "the prior covariance C is not positive definite (duplicated inputs with "
            "theta2 = 0?); the bound F of eq. 29 needs theta2 > 0"
        ) from err


def prior_term(covariance: Covariance, X, second_moment):
    """F_theta_cov = E_q[log N(f | 0, C)] and its gradient w.r.t. all log hyperparameters.

    ``second_moment`` is E_q[f f^T] = h h^T + A (K&G eq. 56); returns (value, gradient) with the
    gradient of K&G eq. 57 in the layout of ``covariance.params``.
    """
    signal = covariance.signal(X)
    cov = covariance(X, signal=signal)
    n = cov.shape[0]
    chol = _prior_cholesky(cov)
    cov_inv = inverse_from_cholesky(chol)
    weighted = cov_inv @ second_moment  # C^-1 E[f f^T]
    value = (
        -0.5 * n * math.log(2 * math.pi) - 0.5 * log_det_from_cholesky(chol)
        - 0.5 * np.trace(weighted)
    )
    outer = weighted @ cov_inv - cov_inv  # C^-1 E[f f^T] C^-1 - C^-1
    return float(value), 0.5 * covariance.gradient_contraction(X, outer, signal=signal)


def second_moment(ep: EPResult) -> np.ndarray:
    """E_q[f f^T] = h h^T + A for the E-step posterior."""
    return np.outer(ep.mean, ep.mean) + ep.posterior_covariance()


def entropy(ep: EPResult) -> float:
    """H(q) = 1/2 log|2 pi e A|, with log|A| = log|C| - log|B| (A = (C^-1 + S)^-1)."""
    n = ep.mean.size
    chol = _prior_cholesky(ep.factor.kernel)
    log_det_a = log_det_from_cholesky(chol) - ep.factor.log_det
    return float(0.5 * n * math.log(2 * math.pi * math.e) + 0.5 * log_det_a)


def lower_bound(
    covariance: Covariance, likelihood: Likelihood, X, y, ep: EPResult, moment=None
) -> dict:
    """The bound F of K&G eq. 29 for q = ``ep``'s posterior, its three parts (K&G eq. 56) and the
    gradient of F_theta_cov (K&G eq. 57), which is that of log Z by Theorem 1."""
    moment = second_moment(ep) if moment is None else moment
    prior, gradient = prior_term(covariance, X, moment)
    expected = likelihood.expected_log_likelihood(y, ep.mean, ep.variance)
    ent = entropy(ep)
    return {"prior": prior, "likelihood": expected, "entropy": ent, "F": expected + prior + ent,
            "prior_gradient": gradient}


def _increase(new: float, old: float) -> float:
    """new - old, with -inf -> -inf counted as no change (F is -inf when epsilon = 0)."""
    return 0.0 if new == old else float(new - old)


# ---------------------------------------------------------------------------- M-step
def m_step(covariance: Covariance, X, moment, free, *, maxiter: int = M_STEP_MAXITER,
           start_value: float | None = None):
    """Maximise F_theta_cov over the free log hyperparameters with L-BFGS-B.

    At most ``maxiter`` quasi-Newton iterations: by default a partial maximisation (a
    generalised EM step, like the fixed line-search budget of K&G's conjugate-gradient
    ``minimize``), which needs fewer bound evaluations in total than maximising fully.
    ``start_value`` is F_theta_cov at ``covariance`` if the caller has it (the E-step's bound).
    Returns (new covariance, F_theta_cov before, F_theta_cov after, optimiser result).
    """
    start = covariance.log_params
    bounds = [LOG_BOUNDS] * int(free.sum())

    def negative_bound(free_log_params):
        log_params = start.copy()
        log_params[free] = free_log_params
        try:
            value, gradient = prior_term(covariance.with_log_params(log_params), X, moment)
        except LinAlgError:
            return np.inf, np.zeros(free_log_params.size)
        return -value, -gradient[free]

    # raises if C is not positive definite
    before = -(prior_term(covariance, X, moment)[0] if start_value is None else start_value)
    result = minimize(
        negative_bound,
        np.clip(start[free], *LOG_BOUNDS),
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"maxiter": maxiter, "ftol": 1e-12, "gtol": 1e-6},
    )
    if not np.isfinite(result.fun) or result.fun > before:
        # never move to a worse point than the start (F must not decrease in an M-step)
        return covariance, -before, -before, result
    params = covariance.params.copy()  # fixed entries stay bit-for-bit as given
    params[free] = np.exp(result.x)
    return covariance.with_params(params), -before, -float(result.fun), result


# ---------------------------------------------------------------------------- EM loop
def em_ep(
    X,
    y,
    covariance: Covariance,
    likelihood: Likelihood,
    *,
    learn=COVARIANCE_NAMES,
    max_iter: int = 200,
    gtol: float = DEFAULT_GTOL,
    ftol: float = 0.0,
    ep_options: dict | None = None,
    m_step_maxiter: int = M_STEP_MAXITER,
    accelerate: bool = True,
    stall_rtol: float = 0.0,
    label: str = "EM-EP",
) -> EPLearning:
    """Fit hyperparameters by EM-EP.

    Parameters
    ----------
    X : array of shape (n, d)
    y : array of shape (n,)
        +-1 labels (or real targets with a Gaussian likelihood).
    covariance : Covariance
        Starting covariance (K&G eq. 13); its values are the initial hyperparameters.
    likelihood : Likelihood
        Starting likelihood; its parameter (epsilon, or the Gaussian noise variance) is learned
        when its ``parameter_name`` is in ``learn``.
    learn : collection of str
        Names among theta0, theta1, theta2, inverse_lengthscale and the likelihood parameter.
    max_iter : int
        Maximum number of EM iterations (M-steps); stopping there warns.
    gtol, ftol : float
        The stopping rule of :mod:`gpcbench.learning.stopping`, applied at every E-step: the
        gradient of log Z there is free (Theorem 1: it is the gradient of F_theta_cov, which the
        bound computes anyway). The change test is off by default (``ftol=0``): EM's steps
        shrink where the evidence is flat long before its gradient is small.
    ep_options : dict, optional
        Passed to :func:`~gpcbench.inference.ep.expectation_propagation`.
    m_step_maxiter : int
        L-BFGS-B iteration limit per M-step.
    accelerate : bool
        Extrapolate every two EM steps by SQUAREM (:meth:`_EMRun.extrapolate`); the
        plain EM map otherwise.
    stall_rtol : float
        If > 0, stop unconverged (no warning) where log Z stalls (stopping.stalled).
    label : str
        Names the fit in progress lines and warnings.

    Returns
    -------
    EPLearning
        ``trace`` holds one dict per E-step: iteration, log_evidence, lower_bound (F, -inf when
        epsilon = 0), lower_bound_prior (F_theta_cov), m_step_gain (increase of F in the
        following M-step, None after the last E-step), the hyperparameters, EP's sweeps and
        convergence flag, and the stopping rule's gradient_norm, at_bound and stop_reason.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    learn = learnable(learn, likelihood)
    run = _EMRun(X, y, covariance, likelihood, learn, dict(ep_options or {}), m_step_maxiter,
                 StoppingRule([], gtol=gtol, ftol=ftol), Progress(label), stall_rtol)
    state = run.e_step(covariance, likelihood)
    while not run.done(max_iter):
        first = run.e_step(*run.m_step(state))
        if not accelerate or run.done(max_iter):
            state = first
            continue
        second = run.e_step(*run.m_step(first))
        state = second if run.done(max_iter) else run.extrapolate(state, first, second)
    if not run.rule.converged and not run.stalled():
        warn_at_cap(label, "EM", max_iter,
                    f"|grad log Z| = {run.trace[-1]['gradient_norm']:.2e} > gtol = {gtol}; "
                    "optimizer='lbfgs' converges faster")
    covariance, likelihood, ep = state[:3]
    run.progress("stopped after %d iterations, log Z %.6f, converged %s", len(run.trace) - 1,
                 ep.log_evidence, run.rule.converged, force=True)
    return EPLearning(covariance, likelihood, ep, run.trace, run.rule.converged,
                      len(run.trace) - 1)


class EStep(NamedTuple):
    """The state after an E-step: hyperparameters, EP, E_q[f f^T] and F_theta_cov there."""

    covariance: Covariance
    likelihood: Likelihood
    ep: EPResult
    moment: np.ndarray
    prior: float


class _EMRun:
    """E-steps, M-steps and SQUAREM extrapolation of one EM-EP run, and its trace.

    A state is (covariance, likelihood, EP result); its point is the vector of learned log
    hyperparameters. Every E-step is one trace entry and one iteration of the stopping rule.
    """

    def __init__(self, X, y, covariance, likelihood, learn, ep_options, m_step_maxiter, rule,
                 progress, stall_rtol=0.0):
        self.X, self.y, self.ep_options = X, y, ep_options
        self.m_step_maxiter = m_step_maxiter
        self.free = free_mask(covariance, learn)
        self.learn_likelihood = likelihood.parameter_name in learn
        self.template = (covariance, likelihood)
        rule.names = [n for n, f in zip(covariance.param_names, self.free) if f]
        rule.names += [likelihood.parameter_name] * self.learn_likelihood
        self.rule, self.progress, self.stall_rtol = rule, progress, stall_rtol
        self.trace: list[dict] = []
        self.sites = None

    def done(self, max_iter) -> bool:
        return self.rule.converged or len(self.trace) > max_iter or self.stalled()

    def stalled(self) -> bool:
        """:func:`~gpcbench.learning.stopping.stalled` on log Z (marked in the trace)."""
        values = [entry["log_evidence"] for entry in self.trace]
        if self.rule.converged or not stalled(values, self.stall_rtol):
            return False
        self.trace[-1]["stop_reason"] = "stalled"
        return True

    def point(self, covariance, likelihood) -> np.ndarray:
        point = covariance.log_params[self.free]
        if self.learn_likelihood:
            with np.errstate(divide="ignore"):
                point = np.append(point, np.log(likelihood.params[0]))
        return point

    def models(self, point):
        """(covariance, likelihood) at a point (clipped to LOG_BOUNDS)."""
        covariance, likelihood = self.template
        point = np.clip(point, *LOG_BOUNDS)
        n_free = int(self.free.sum())
        params = covariance.params.copy()
        params[self.free] = np.exp(point[:n_free])
        if self.learn_likelihood:
            likelihood = likelihood.with_parameter(float(np.exp(point[n_free])))
        return covariance.with_params(params), likelihood

    def e_step(self, covariance, likelihood):
        """EP (warm-started) at the given hyperparameters; one trace entry; the new state."""
        ep = expectation_propagation(covariance(self.X), self.y, likelihood,
                                     initial_sites=self.sites, **self.ep_options)
        self.sites = ep.sites
        moment = second_moment(ep)
        bound = lower_bound(covariance, likelihood, self.X, self.y, ep, moment)
        entry = trace_entry(len(self.trace), ep, covariance, likelihood, bound)
        gradient = bound["prior_gradient"][self.free]  # = grad log Z (Theorem 1)
        if self.learn_likelihood:
            gradient = np.append(gradient, likelihood_gradient(likelihood, self.y, ep))
        point = np.clip(self.point(covariance, likelihood), *LOG_BOUNDS)
        entry.update(self.rule.update(ep.log_evidence, point, gradient))
        self.trace.append(entry)
        self.progress("iteration %d log Z %.6f |grad| %.2e", entry["iteration"],
                      ep.log_evidence, entry["gradient_norm"])
        return EStep(covariance, likelihood, ep, moment, bound["prior"])

    def m_step(self, state):
        """The M-step from a state's E-step (K&G eqs. 56-57 and the closed-form epsilon)."""
        covariance, likelihood, ep, moment, prior = state
        gain = 0.0
        if self.free.any():
            covariance, before, after, _ = m_step(covariance, self.X, moment, self.free,
                                                  maxiter=self.m_step_maxiter, start_value=prior)
            gain += after - before
        if self.learn_likelihood:
            y = self.y
            old = likelihood.expected_log_likelihood(y, ep.mean, ep.variance)
            likelihood = likelihood.with_parameter(
                likelihood.optimal_parameter(y, ep.mean, ep.variance))
            gain += _increase(likelihood.expected_log_likelihood(y, ep.mean, ep.variance), old)
        self.trace[-1]["m_step_gain"] = gain
        return covariance, likelihood

    def extrapolate(self, start, first, second):
        """The E-step at the SQUAREM point of three EM iterates (:mod:`~gpcbench.learning.squarem`)
        if its log Z is at least theta2's, else theta2's state."""
        point = squarem_point(*(self.point(*state[:2]) for state in (start, first, second)))
        if point is None:
            return second
        try:
            jump = self.e_step(*self.models(point))
        except (LinAlgError, FloatingPointError):
            jump = None
        if jump is not None:
            self.trace[-1]["extrapolated"] = True
            if jump.ep.log_evidence >= second.ep.log_evidence or self.rule.converged:
                return jump
        self.sites = second.ep.sites
        return second
