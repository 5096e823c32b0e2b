"""Hyperparameters of nested EP by L-BFGS-B on its log marginal likelihood (Riihimäki, Jylänki &
Vehtari 2013, RJV: type-II maximum likelihood with the exact gradient of the EP evidence).

The scheme of the binary classifier's ``optimizer="lbfgs"``
(:mod:`gpcbench.learning.evidence_lbfgs`) on the nested-EP evidence: every evaluation runs
nested EP warm-started from the previous one's inner sites with tighter tolerances
(:data:`INNER_EP_OPTIONS`), so that log Z and its gradient
(:meth:`~gpcbench.inference.nested_ep.NestedEPResult.log_evidence_gradient`, exact at a fixed
point) are smooth enough for the line search; the search is the same, L-BFGS-B runs in trust
boxes with a bounded first step (:mod:`gpcbench.learning.trust_box_lbfgs`), stopped by the rule
of :mod:`gpcbench.learning.stopping`. The learned coordinates are those of
:meth:`~gpcbench.kernels.multiclass.SoftmaxCovariance.learned_mask`: theta0, theta1 and
the inverse lengthscales of every class group (theta2 stays a fixed jitter, the multinomial
probit's noise being its unit-variance u).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpcbench.kernels.multiclass import SoftmaxCovariance
from gpcbench.inference.nested_ep import NestedEPResult, nested_ep
from gpcbench.learning.stopping import DEFAULT_FTOL, DEFAULT_GTOL, LOG_BOUNDS, StoppingRule
from gpcbench.learning.trust_box_lbfgs import (
    TRUST_RADIUS,
    WarmStartedEvidence,
    maximize_in_trust_boxes,
)

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


class NestedEvidenceObjective(WarmStartedEvidence):
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
        super().__init__()
        self.X, self.labels, self.covariance = X, labels, covariance
        self.ep_options = {**ep_options, **INNER_EP_OPTIONS}

    def start(self) -> np.ndarray:
        return np.clip(self.covariance.log_params[self.covariance.learned_mask()], *LOG_BOUNDS)

    def fit(self, point):
        """(log Z, gradient, covariance, nested EP result) at ``point``."""
        covariance = self.covariance.with_learned(point)
        ep = nested_ep(covariance(self.X), self.labels, initial_sites=self.sites,
                       **self.ep_options)
        self.sites = ep.sites
        gradient = ep.log_evidence_gradient(covariance, self.X)[covariance.learned_mask()]
        return ep.log_evidence, gradient, covariance, ep

    def trace_entry(self, iteration, evaluation) -> dict:
        log_z, _, covariance, ep = evaluation
        return {"iteration": iteration, "log_evidence": log_z,
                "hyperparameters": hyperparameters(covariance), "ep_sweeps": ep.n_sweeps,
                "ep_converged": ep.converged}


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
    trace, (_, _, cov, ep) = maximize_in_trust_boxes(
        objective, rule, max_iter=max_iter, trust_radius=trust_radius, label=label)
    return NestedEPLearning(cov, ep, trace, rule.converged, len(trace) - 1)
