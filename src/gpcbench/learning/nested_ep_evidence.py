"""Hyperparameters of nested EP by L-BFGS-B on its log marginal likelihood (Riihimäki, Jylänki &
Vehtari 2013, RJV: type-II maximum likelihood with the exact gradient of the EP evidence).

The scheme of the binary classifier's ``optimizer="lbfgs"``
(:mod:`gpcbench.learning.evidence_lbfgs`) on the nested-EP evidence: every evaluation runs
nested EP warm-started from the previous one's inner sites with tighter tolerances
(:data:`INNER_EP_OPTIONS`), so that log Z and its gradient
(:meth:`~gpcbench.inference.nested_ep.NestedEPResult.log_evidence_gradient`, exact at a fixed
point) are smooth enough for the line search; the first step is bounded by
:data:`~gpcbench.learning.evidence_lbfgs.MAX_FIRST_STEP` per coordinate; each L-BFGS-B run is
confined to a trust box around its start (the same radius and growth), and the search stops by
the rule of :mod:`gpcbench.learning.stopping`. The learned coordinates are those of
:meth:`~gpcbench.inference.laplace_softmax.SoftmaxCovariance.learned_mask`: theta0, theta1 and
the inverse lengthscales of every class group (theta2 stays a fixed jitter, the multinomial
probit's noise being its unit-variance u).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError
from scipy.optimize import minimize

from gpcbench.kernels.multiclass import SoftmaxCovariance
from gpcbench.inference.nested_ep import NestedEPResult, nested_ep
from gpcbench.learning.evidence_lbfgs import (
    MAX_FIRST_STEP,
    MAX_TRUST_RADIUS,
    TRUST_GROWTH,
    TRUST_RADIUS,
    on_trust_box_face,
    trust_box,
)
from gpcbench.learning.stopping import DEFAULT_FTOL, DEFAULT_GTOL, LOG_BOUNDS, StoppingRule
from gpcbench.monitor import Progress, warn_at_cap

#: Nested EP tolerances inside the optimiser: log Z and its gradient must be smooth in theta.
INNER_EP_OPTIONS = {"tol": 1e-7, "moment_tol": 1e-5, "max_sweeps": 500}


@dataclass(frozen=True)
class NestedEPLearning:
    """Outcome of :func:`maximize_nested_evidence`."""

    covariance: SoftmaxCovariance
    ep: NestedEPResult
    trace: list[dict]
    converged: bool
    n_iter: int


def coordinate_names(covariance: SoftmaxCovariance) -> list[str]:
    """Names of the learned coordinates, group by group (``class c:`` prefixes when the
    classes have their own covariances)."""
    names = []
    for group, (cov, mask) in enumerate(zip(covariance.groups, covariance.learned_mask())):
        prefix = "" if len(covariance.groups) == 1 else f"class {group}: "
        names += [prefix + name for name, free in zip(cov.param_names, mask) if free]
    return names


def hyperparameters(covariance: SoftmaxCovariance) -> list[dict]:
    """Every class's covariance by name (a list in class order, as the softmax models keep)."""
    return [cov.to_dict() for cov in covariance.per_class()]


class NestedEvidenceObjective:
    """-log Z_EP and its gradient over the learned log hyperparameters, nested EP warm-started.

    Parameters
    ----------
    X : array (n, d)
    labels : int array (n,)
    covariance : SoftmaxCovariance
        The starting values; its ``learned_mask`` entries are the coordinates.
    ep_options : dict
        Options of :func:`~gpcbench.inference.nested_ep.nested_ep`, overridden by
        :data:`INNER_EP_OPTIONS`.
    """

    def __init__(self, X, labels, covariance: SoftmaxCovariance, ep_options):
        self.X, self.labels, self.covariance = X, labels, covariance
        self.ep_options = {**ep_options, **INNER_EP_OPTIONS}
        self.sites = None
        self.best = None  # (log Z, point, covariance, ep, gradient)
        self.last = None
        self.scale = 1.0

    def start(self) -> np.ndarray:
        return np.clip(self.covariance.log_params[self.covariance.learned_mask()], *LOG_BOUNDS)

    def first_step_scale(self, gradient) -> float:
        """The divisor of -log Z that bounds L-BFGS-B's first step by MAX_FIRST_STEP."""
        return max(1.0, float(np.max(np.abs(gradient), initial=0.0)) / MAX_FIRST_STEP)

    def evaluate(self, point):
        """(log Z, gradient, covariance, nested EP result) at ``point``."""
        if self.last is not None and np.array_equal(self.last[0], point):
            return self.last[1]
        covariance = self.covariance.with_learned(point)
        ep = nested_ep(covariance(self.X), self.labels, initial_sites=self.sites,
                       **self.ep_options)
        self.sites = ep.sites
        gradient = ep.log_evidence_gradient(covariance, self.X)[covariance.learned_mask()]
        if self.best is None or ep.log_evidence > self.best[0]:
            self.best = (ep.log_evidence, np.array(point), covariance, ep, gradient)
        self.last = (np.array(point), (ep.log_evidence, gradient, covariance, ep))
        return self.last[1]

    def __call__(self, point):
        """(-log Z, -gradient) scaled for scipy; a failed nested EP is +inf."""
        try:
            log_z, gradient, *_ = self.evaluate(point)
        except (LinAlgError, FloatingPointError):
            self.sites = None
            return np.inf, np.zeros(point.size)
        return -log_z / self.scale, -gradient / self.scale


class _Converged(Exception):
    """Raised from the L-BFGS-B callback when the stopping rule is met."""


class _LeftTrustBox(Exception):
    """Raised from the callback with the iterate on the trust box's face and the mask."""


def maximize_nested_evidence(X, labels, covariance: SoftmaxCovariance, *, max_iter: int = 200,
                             gtol: float = DEFAULT_GTOL, ftol: float = DEFAULT_FTOL,
                             ep_options: dict | None = None, trust_radius: float = TRUST_RADIUS,
                             label: str = "nested EP evidence L-BFGS-B") -> NestedEPLearning:
    """Maximise log Z_EP of nested EP over the learned log hyperparameters (module docstring).

    Parameters
    ----------
    X, labels
        Training inputs and class indices.
    covariance : SoftmaxCovariance
        Starting values (one covariance shared by the classes, or one per class).
    max_iter : int
        L-BFGS-B iterations at most; reaching it warns (ConvergenceWarning).
    gtol, ftol : float
        The stopping rule (:class:`~gpcbench.learning.stopping.StoppingRule`).
    ep_options : dict, optional
        Further options of :func:`~gpcbench.inference.nested_ep.nested_ep` (damping).
    trust_radius : float
        Initial half-width of the trust box, log units (``np.inf``: one run on LOG_BOUNDS).

    Returns
    -------
    NestedEPLearning
        ``trace`` has one entry per L-BFGS-B iteration: iteration, log_evidence,
        hyperparameters, ep_sweeps, ep_converged, gradient_norm, at_bound, stop_reason.
    """
    objective = NestedEvidenceObjective(np.asarray(X, dtype=float), np.asarray(labels),
                                        covariance, dict(ep_options or {}))
    rule = StoppingRule(coordinate_names(covariance), gtol=gtol, ftol=ftol)
    progress = Progress(label)
    trace: list[dict] = []

    def record(point, final=False, box=None):
        log_z, gradient, cov, ep = objective.evaluate(point)
        entry = {"iteration": len(trace), "log_evidence": log_z,
                 "hyperparameters": hyperparameters(cov), "ep_sweeps": ep.n_sweeps,
                 "ep_converged": ep.converged, **rule.update(log_z, point, gradient)}
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
        record(objective.best[1], final=True)  # L-BFGS-B stopped short of its best point
    _, _, cov, ep, _ = objective.best
    if not rule.converged:
        warn_at_cap(label, "L-BFGS-B", max_iter, f"projected |grad log Z| = "
                    f"{trace[-1]['gradient_norm']:.2e} > gtol = {gtol}")
    progress("stopped after %d iterations, log Z %.6f, converged %s", len(trace) - 1,
             ep.log_evidence, rule.converged, force=True)
    return NestedEPLearning(cov, ep, trace, rule.converged, len(trace) - 1)
