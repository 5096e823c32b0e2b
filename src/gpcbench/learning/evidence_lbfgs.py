"""Direct maximisation of the EP log evidence by L-BFGS-B (the ``optimizer="lbfgs"`` scheme).

EM-EP (:mod:`gpcbench.learning.em_ep`) climbs log Z_EP through the bound F of K&G eq. 29;
K&G Theorem 1 says that at an EP fixed point the gradient of F with respect to the
covariance hyperparameters is the gradient of log Z_EP itself,

    d log Z / d log theta_k = 1/2 tr[(alpha alpha^T - (C + Lambda)^-1) dC/d log theta_k]

(``EPResult.log_evidence_gradient``, K&G eq. 31), so log Z_EP can be maximised directly by a
quasi-Newton method, as GPML and scikit-learn do for the Laplace evidence. Every evaluation
runs EP warm-started from the sites of the previous one, with tighter tolerances than a
one-off EP run so that log Z and its gradient are smooth enough for the line search.

The likelihood parameter (epsilon of K&G eq. 10, or a Gaussian noise variance), when learned,
is a further log-space coordinate: at a fixed point the sites are stationary, so its
derivative is that of sum_i log Z_i (the tilted normalisers at fixed cavities),
:func:`~gpcbench.learning.em_ep.likelihood_gradient`.

The run stops by the rule of :mod:`gpcbench.learning.stopping` (projected gradient or
relative change of log Z); a coordinate at its :data:`~gpcbench.learning.em_ep.LOG_BOUNDS`
bound whose gradient pushes outwards (an irrelevant input's inverse lengthscale running to
zero) counts as converged and is named in the trace.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from scipy.linalg import LinAlgError
from scipy.optimize import minimize

from gpcbench.kernels.covariance import Covariance
from gpcbench.inference.ep import expectation_propagation
from gpcbench.learning.em_ep import (
    EMEPResult,
    em_ep,
    free_mask,
    learnable,
    likelihood_gradient,
    trace_entry,
)
from gpcbench.learning.stopping import (
    BOUND_SLACK,
    DEFAULT_FTOL,
    DEFAULT_GTOL,
    LOG_BOUNDS,
    StoppingRule,
)
from gpcbench.likelihoods import Likelihood
from gpcbench.monitor import Progress, warn_at_cap

#: EP tolerances inside the optimiser: log Z and its gradient must be smooth in theta.
INNER_EP_OPTIONS = {"tol": 1e-7, "site_tol": 1e-4, "max_sweeps": 200}
#: Largest first step of each L-BFGS-B run, in log units per hyperparameter. With box bounds,
#: its first step is the projected x - g (its Hessian model starts at the identity), so from
#: K&G footnote 11's start (|g| ~ 30) it would leap by 30 log units.
MAX_FIRST_STEP = 1.0
#: Half-width, in log units, of the trust box each L-BFGS-B run is confined to. log Z_EP has
#: plateaus at the edges of the hyperparameter space (an inverse lengthscale -> infinity
#: makes every latent independent: log Z = n log 1/2 for the step likelihood). Unconfined,
#: L-BFGS-B's second step on Pima fold 0 (curvature ~0 over its first unit step) went to the
#: bound 10^6 of the inverse lengthscale, better than where it stood (-124.8 against -143.5)
#: so accepted, but 16.6 nats below the maximum that EM-EP finds 3 log units from the start.
TRUST_RADIUS = 2.0
#: A coordinate that runs into its face of the trust box has its half-width multiplied by
#: this for the next run (up to MAX_TRUST_RADIUS): one that keeps going (an irrelevant input's
#: inverse lengthscale on its way to the lower bound) is not held to 2 log units per run.
TRUST_GROWTH = 2.0
MAX_TRUST_RADIUS = 16.0
#: ``optimizer="em-lbfgs"``: EM-EP hands over to L-BFGS-B when three E-steps raise log Z by
#: less than this, relative (:func:`~gpcbench.learning.stopping.stalled`).
EM_STALL_RTOL = 1e-4


class EvidenceObjective:
    """-log Z_EP and its gradient over the free log hyperparameters, EP warm-started.

    Parameters
    ----------
    X, y : arrays
        Training inputs and targets (+-1, or reals for a Gaussian likelihood).
    covariance : Covariance or ClassDifferenceCovariance
        Its values are the start; ``free`` marks the learned entries of its ``params``.
    likelihood : Likelihood
        Its parameter is the last coordinate when ``learn_likelihood``.
    """

    def __init__(self, X, y, covariance, likelihood, free, learn_likelihood, ep_options):
        self.X, self.y = X, y
        self.covariance, self.likelihood = covariance, likelihood
        self.free, self.learn_likelihood = free, learn_likelihood
        self.ep_options = {**ep_options, **INNER_EP_OPTIONS}
        self.sites = None
        self.best = None  # (log Z, point, covariance, likelihood, ep, gradient)
        self.last = None  # (point, evaluation): L-BFGS-B's callback asks for its last point
        self.n_evaluations = 0
        self.scale = 1.0  # -log Z is divided by it for scipy: see first_step_scale

    def first_step_scale(self, gradient) -> float:
        """The divisor of -log Z that bounds L-BFGS-B's first step by :data:`MAX_FIRST_STEP`
        in every coordinate; later steps use its curvature pairs, which the scale leaves
        invariant (and the stopping rule reads the unscaled log Z and gradient)."""
        return max(1.0, float(np.max(np.abs(gradient), initial=0.0)) / MAX_FIRST_STEP)

    def start(self) -> np.ndarray:
        """The starting point: free log covariance parameters (and the likelihood's)."""
        point = self.covariance.log_params[self.free]
        if self.learn_likelihood:
            point = np.append(point, np.log(self.likelihood.params[0]))
        return np.clip(point, *LOG_BOUNDS)

    def models(self, point):
        """(covariance, likelihood) at ``point``."""
        log_params = self.covariance.log_params
        n_free = int(self.free.sum())
        log_params[self.free] = point[:n_free]
        covariance = self.covariance.with_params(
            np.where(self.free, np.exp(log_params), self.covariance.params))
        likelihood = self.likelihood
        if self.learn_likelihood:
            likelihood = likelihood.with_parameter(float(np.exp(point[n_free])))
        return covariance, likelihood

    def evaluate(self, point):
        """(log Z, gradient in ``point``'s layout, covariance, likelihood, EP result)."""
        if self.last is not None and np.array_equal(self.last[0], point):
            return self.last[1]
        covariance, likelihood = self.models(point)
        ep = expectation_propagation(covariance(self.X), self.y, likelihood,
                                     initial_sites=self.sites, **self.ep_options)
        self.sites = ep.sites
        self.n_evaluations += 1
        gradient = ep.log_evidence_gradient(covariance, self.X)[self.free]
        if self.learn_likelihood:
            gradient = np.append(gradient, likelihood_gradient(likelihood, self.y, ep))
        if self.best is None or ep.log_evidence > self.best[0]:
            self.best = (ep.log_evidence, np.array(point), covariance, likelihood, ep, gradient)
        self.last = (np.array(point), (ep.log_evidence, gradient, covariance, likelihood, ep))
        return self.last[1]

    def __call__(self, point):
        """(-log Z, -gradient) for scipy; a failed EP or factorisation is +inf."""
        try:
            log_z, gradient, *_ = self.evaluate(point)
        except (LinAlgError, FloatingPointError):
            self.sites = None
            return np.inf, np.zeros(point.size)
        return -log_z / self.scale, -gradient / self.scale


def maximize_evidence(
    X,
    y,
    covariance: Covariance,
    likelihood: Likelihood,
    *,
    learn,
    max_iter: int = 200,
    gtol: float = DEFAULT_GTOL,
    ftol: float = DEFAULT_FTOL,
    ep_options: dict | None = None,
    trust_radius: float = TRUST_RADIUS,
    label: str = "EP evidence L-BFGS-B",
) -> EMEPResult:
    """Maximise log Z_EP over the learned hyperparameters with L-BFGS-B and its exact gradient.

    Parameters
    ----------
    X, y, covariance, likelihood, learn, ep_options
        As for :func:`~gpcbench.learning.em_ep.em_ep`.
    max_iter : int
        Maximum number of L-BFGS-B iterations.
    gtol, ftol : float
        The stopping rule (:class:`~gpcbench.learning.stopping.StoppingRule`).
    trust_radius : float
        Initial half-width of the trust box (log units) of the L-BFGS-B runs
        (:data:`TRUST_RADIUS`, grown by :data:`TRUST_GROWTH` per coordinate that runs into
        its face); ``np.inf``: one run on the whole of LOG_BOUNDS.

    Returns
    -------
    EMEPResult
        ``trace`` has one entry per L-BFGS-B iteration, in the layout of EM-EP's (no bound F:
        ``lower_bound`` and ``m_step_gain`` are None) plus ``gradient_norm`` and ``at_bound``.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    learn = learnable(learn, likelihood)
    free = free_mask(covariance, learn)
    learn_likelihood = likelihood.parameter_name in learn
    names = [n for n, f in zip(covariance.param_names, free) if f]
    names += [likelihood.parameter_name] if learn_likelihood else []
    objective = EvidenceObjective(X, y, covariance, likelihood, free, learn_likelihood,
                                  dict(ep_options or {}))
    rule = StoppingRule(names, gtol=gtol, ftol=ftol)
    progress = Progress(label)
    trace: list[dict] = []

    def record(point, final=False, box=None):
        log_z, gradient, cov, lik, ep = objective.evaluate(point)
        entry = trace_entry(len(trace), ep, cov, lik)
        entry.update(rule.update(log_z, point, gradient))
        trace.append(entry)
        progress("iteration %d log Z %.6f |grad| %.2e", entry["iteration"], log_z,
                 entry["gradient_norm"])
        if rule.converged and not final:
            raise _Converged
        if box is not None and on_trust_box_face(point, *box).any():
            raise _LeftTrustBox(np.array(point), on_trust_box_face(point, *box))

    point = objective.start()
    radius = np.full(point.size, trust_radius)
    try:
        record(point)
    except _Converged:
        pass
    while not rule.converged and len(trace) <= max_iter:
        # One L-BFGS-B run in the trust box around ``point``; it ends when the stopping rule
        # is met, when an iterate reaches the box's face (the next run is centred there), or
        # when L-BFGS-B stops by itself (cap, or a line search without progress).
        low, high = trust_box(point, radius)
        objective.scale = objective.first_step_scale(objective.evaluate(point)[1])
        try:
            minimize(objective, point, jac=True, method="L-BFGS-B",
                     bounds=list(zip(low, high)), callback=lambda x: record(x, box=(low, high)),
                     options={"maxiter": max_iter - len(trace) + 1, "ftol": 0.0, "gtol": 0.0,
                              "maxls": 40})
            break
        except _Converged:
            pass
        except _LeftTrustBox as exit:
            point, through_face = exit.args
            radius = np.where(through_face, np.minimum(radius * TRUST_GROWTH,
                                                       max(trust_radius, MAX_TRUST_RADIUS)),
                              radius)
    if not rule.converged and not np.array_equal(objective.best[1], rule.previous[1]):
        # L-BFGS-B stopped by itself (cap, or line search without progress) short of its best
        record(objective.best[1], final=True)
    _, _, cov, lik, ep, _ = objective.best
    last = trace[-1]
    if not rule.converged:
        warn_at_cap(label, "L-BFGS-B", max_iter,
                    f"projected |grad log Z| = {last['gradient_norm']:.2e} > gtol = {gtol}")
    progress("stopped after %d iterations, log Z %.6f, converged %s", len(trace) - 1,
             ep.log_evidence, rule.converged, force=True)
    return EMEPResult(cov, lik, ep, trace, rule.converged, len(trace) - 1)


def trust_box(point, radius):
    """(low, high): the box of half-widths ``radius`` around ``point``, within LOG_BOUNDS."""
    return (np.maximum(point - radius, LOG_BOUNDS[0]), np.minimum(point + radius, LOG_BOUNDS[1]))


def on_trust_box_face(point, low, high, slack=BOUND_SLACK) -> np.ndarray:
    """Which coordinates of ``point`` reached a face of the trust box that is not a face of
    LOG_BOUNDS."""
    at_low = (point <= low + slack) & (low > LOG_BOUNDS[0])
    at_high = (point >= high - slack) & (high < LOG_BOUNDS[1])
    return at_low | at_high


class _Converged(Exception):
    """Raised from the L-BFGS-B callback when the stopping rule is met."""


class _LeftTrustBox(Exception):
    """Raised from the L-BFGS-B callback with the iterate that reached the trust box's face
    and the mask of the coordinates that did."""


def em_then_lbfgs(X, y, covariance: Covariance, likelihood: Likelihood, *, learn,
                  max_iter: int = 200, gtol: float = DEFAULT_GTOL,
                  ep_options: dict | None = None, label: str = "EM-EP + L-BFGS-B") -> EMEPResult:
    """K&G's EM-EP until it converges or stalls (:data:`EM_STALL_RTOL`), then
    :func:`maximize_evidence` from where it stopped (the ``optimizer="em-lbfgs"`` scheme).

    EM-EP follows the paper's path into a maximum's basin but converges only linearly where
    the evidence is flat along some direction (a signal variance traded against a fixed noise
    variance, an ARD lengthscale of a weak input); L-BFGS-B on the same log Z_EP, started at
    EM's last E-step, finishes the climb. The trace holds both phases (``phase`` "em" or
    "lbfgs", iterations numbered on); ``max_iter`` bounds them together.
    """
    first = em_ep(X, y, covariance, likelihood, learn=learn, max_iter=max_iter, gtol=gtol,
                  ep_options=ep_options, stall_rtol=EM_STALL_RTOL, label=label)
    trace = [{**entry, "phase": "em"} for entry in first.trace]
    if first.converged or first.n_iter >= max_iter:
        return replace(first, trace=trace)
    second = maximize_evidence(X, y, first.covariance, first.likelihood, learn=learn,
                               max_iter=max_iter - first.n_iter, gtol=gtol,
                               ep_options=ep_options, label=label)
    trace += [{**entry, "iteration": first.n_iter + entry["iteration"], "phase": "lbfgs"}
              for entry in second.trace[1:]]  # its first entry is EM's last E-step
    return replace(second, trace=trace, n_iter=len(trace) - 1)
