"""When a hyperparameter search has converged: one rule for every learning method.

A run is converged at an iterate when either

* the projected gradient of the objective (log Z, or the method's bound) with respect to the
  learned log hyperparameters has max-norm below ``gtol`` (scipy's L-BFGS-B ``pgtol``,
  GPML's ``minimize`` stops on the same quantity), or
* the objective and the hyperparameters have both stopped moving between two consecutive
  iterates: |change of the objective| <= ``ftol`` max(1, |objective|) and max |change of a log
  hyperparameter| <= ``xtol`` (scikit-learn's and scipy's relative-reduction test, plus a step
  test so that a stalled slow iteration is not called converged while it is still moving).

"Projected": a coordinate at its :data:`LOG_BOUNDS` bound (in log space) whose gradient pushes
it outwards cannot move; its gradient does not count. This is how an ARD inverse lengthscale
running to zero (an irrelevant input) stops stalling the test; such coordinates are named in
the trace (``at_bound``).
"""

from __future__ import annotations

import math

import numpy as np

#: Box on every learned log hyperparameter (numerical safety; an ARD inverse lengthscale of
#: an irrelevant input runs to the lower end).
LOG_BOUNDS = (math.log(1e-10), math.log(1e6))
#: Default max-norm of the projected gradient d objective / d log theta at convergence.
DEFAULT_GTOL = 1e-2
#: Default relative change of the objective and absolute change of the log hyperparameters.
DEFAULT_FTOL = 1e-7
DEFAULT_XTOL = 1e-4
#: A log hyperparameter this close to a bound is "at" it.
BOUND_SLACK = 1e-6


def projected_gradient(point, gradient, bounds=LOG_BOUNDS):
    """The ascent gradient with the coordinates at a bound that push outwards set to zero;
    also the mask of the coordinates at a bound."""
    point = np.asarray(point, dtype=float)
    gradient = np.asarray(gradient, dtype=float)
    low = point <= bounds[0] + BOUND_SLACK
    high = point >= bounds[1] - BOUND_SLACK
    blocked = (low & (gradient < 0)) | (high & (gradient > 0))
    return np.where(blocked, 0.0, gradient), low | high


def stalled(values, rtol: float, window: int = 3) -> bool:
    """Whether the last ``window`` values of a maximised objective raised its best by less
    than ``rtol`` max(1, |best|): the linear phase of an EM, where its steps shrink long before
    the gradient is small (``rtol`` <= 0: never)."""
    if rtol <= 0 or len(values) <= window:
        return False
    best = max(values)
    return best - max(values[:-window]) < rtol * max(1.0, abs(best))


class StoppingRule:
    """Tracks successive iterates (objective, log hyperparameters, gradient) of one search.

    Parameters
    ----------
    names : list of str
        Names of the coordinates (for the ``at_bound`` field of the trace).
    gtol, ftol, xtol : float
        The thresholds of the module docstring; ``gtol=0`` disables the gradient test (a method
        without a gradient at hand), ``ftol=0`` the change test.
    """

    def __init__(self, names, *, gtol=DEFAULT_GTOL, ftol=DEFAULT_FTOL, xtol=DEFAULT_XTOL):
        self.names = list(names)
        self.gtol, self.ftol, self.xtol = gtol, ftol, xtol
        self.previous = None
        self.converged = False
        self.reason = None

    def update(self, value, point, gradient=None) -> dict:
        """Record one iterate; returns the trace fields gradient_norm, at_bound, stop_reason."""
        point = np.asarray(point, dtype=float)
        norm = None
        at_bound = (point <= LOG_BOUNDS[0] + BOUND_SLACK) | (point >= LOG_BOUNDS[1] - BOUND_SLACK)
        if gradient is not None:
            projected, at_bound = projected_gradient(point, gradient)
            norm = float(np.max(np.abs(projected), initial=0.0))
            if self.gtol > 0 and norm <= self.gtol:
                self._stop("gradient")
        if self.previous is not None and self.ftol > 0 and not self.converged:
            last_value, last_point = self.previous
            small_change = abs(value - last_value) <= self.ftol * max(1.0, abs(value))
            small_step = np.max(np.abs(point - last_point), initial=0.0) <= self.xtol
            if small_change and small_step:
                self._stop("change")
        self.previous = (value, point)
        return {
            "gradient_norm": norm,
            "at_bound": [n for n, b in zip(self.names, at_bound) if b],
            "stop_reason": self.reason,
        }

    def _stop(self, reason):
        self.converged, self.reason = True, reason
