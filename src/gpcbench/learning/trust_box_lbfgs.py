"""L-BFGS-B on an EP log evidence in trust boxes: the search that the binary EP
(:mod:`gpcbench.learning.evidence_lbfgs`) and nested EP
(:mod:`gpcbench.learning.nested_ep_evidence`) hyperparameter learning share.

The objective is -log Z_EP over the learned log hyperparameters with its exact gradient (K&G
Theorem 1 and eq. 31 for binary EP), every evaluation warm-started from the sites of the
previous one (:class:`WarmStartedEvidence`). Each L-BFGS-B run is confined to a box around its
start (:func:`trust_box`) and its first step is bounded (:data:`MAX_FIRST_STEP`); a run whose
iterate reaches a face of its box ends there and the next is centred at that iterate, the box
widened along the coordinates that reached it. The search stops by the rule of
:mod:`gpcbench.learning.stopping`; a coordinate at its LOG_BOUNDS bound whose gradient pushes
outwards (an irrelevant input's inverse lengthscale running to zero) counts as converged and
is named in the trace.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError
from scipy.optimize import minimize

from gpcbench.learning.stopping import BOUND_SLACK, LOG_BOUNDS, StoppingRule
from gpcbench.monitor import Progress, warn_at_cap

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


class WarmStartedEvidence:
    """-log Z_EP and its gradient over the learned log hyperparameters, for scipy.

    Subclasses give :meth:`start`, :meth:`fit` (EP at a point, warm-started from
    ``self.sites``, which it updates) and :meth:`trace_entry`. An evaluation is the tuple
    (log Z, gradient in the point's layout, the models and EP result at the point) that
    :meth:`fit` returns; the last and the best (largest log Z) are kept with their points.
    """

    def __init__(self):
        self.sites = None
        self.best = None  # (point, evaluation) of the largest log Z so far
        self.last = None  # (point, evaluation): L-BFGS-B's callback asks for its last point
        self.scale = 1.0  # -log Z is divided by it for scipy: see first_step_scale

    def start(self) -> np.ndarray:
        """The starting point (within LOG_BOUNDS)."""
        raise NotImplementedError

    def fit(self, point) -> tuple:
        """The evaluation at ``point``: (log Z, gradient, models..., EP result)."""
        raise NotImplementedError

    def trace_entry(self, iteration, evaluation) -> dict:
        """The trace entry of an iterate (the stopping rule's fields are added to it)."""
        raise NotImplementedError

    def first_step_scale(self, gradient) -> float:
        """The divisor of -log Z that bounds L-BFGS-B's first step by :data:`MAX_FIRST_STEP`
        in every coordinate; later steps use its curvature pairs, which the scale leaves
        invariant (and the stopping rule reads the unscaled log Z and gradient)."""
        return max(1.0, float(np.max(np.abs(gradient), initial=0.0)) / MAX_FIRST_STEP)

    def evaluate(self, point):
        """The evaluation at ``point`` (the last one again when ``point`` is the last point)."""
        if self.last is not None and np.array_equal(self.last[0], point):
            return self.last[1]
        evaluation = self.fit(point)
        if self.best is None or evaluation[0] > self.best[1][0]:
            self.best = (np.array(point), evaluation)
        self.last = (np.array(point), evaluation)
        return evaluation

    def __call__(self, point):
        """(-log Z, -gradient) scaled for scipy; a failed EP or factorisation is +inf."""
        try:
            log_z, gradient, *_ = self.evaluate(point)
        except (LinAlgError, FloatingPointError):
            self.sites = None
            return np.inf, np.zeros(point.size)
        return -log_z / self.scale, -gradient / self.scale


def maximize_in_trust_boxes(objective: WarmStartedEvidence, rule: StoppingRule, *, max_iter: int,
                            trust_radius: float, label: str):
    """Maximise log Z by L-BFGS-B runs in trust boxes (module docstring).

    Parameters
    ----------
    objective : WarmStartedEvidence
    rule : StoppingRule
        Named by the objective's coordinates; met at an iterate, the search stops there.
    max_iter : int
        L-BFGS-B iterations at most, all runs together; reaching it warns (ConvergenceWarning).
    trust_radius : float
        Initial half-width of the trust box (log units), grown by :data:`TRUST_GROWTH` per
        coordinate that runs into its face; ``np.inf``: one run on the whole of LOG_BOUNDS.
    label : str
        Names the search in progress lines and warnings.

    Returns
    -------
    trace : list of dict
        One entry per L-BFGS-B iterate (the start first): the objective's trace entry and the
        stopping rule's gradient_norm, at_bound and stop_reason.
    best : tuple
        The evaluation of the largest log Z.
    """
    progress = Progress(label)
    trace: list[dict] = []

    def record(point, final=False, box=None):
        evaluation = objective.evaluate(point)
        log_z, gradient = evaluation[:2]
        entry = objective.trace_entry(len(trace), evaluation)
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
    if not rule.converged and not np.array_equal(objective.best[0], rule.previous[1]):
        # L-BFGS-B stopped by itself (cap, or line search without progress) short of its best
        record(objective.best[0], final=True)
    best = objective.best[1]
    if not rule.converged:
        warn_at_cap(label, "L-BFGS-B", max_iter, f"projected |grad log Z| = "
                    f"{trace[-1]['gradient_norm']:.2e} > gtol = {rule.gtol}")
    progress("stopped after %d iterations, log Z %.6f, converged %s", len(trace) - 1,
             best[0], rule.converged, force=True)
    return trace, best


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
