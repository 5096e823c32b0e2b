"""What an iterative fit tells its user while it runs and when it stops.

* :class:`Progress`: INFO lines on the ``gpcbench.progress`` logger (EM iteration and log Z,
  MCMC sweep and acceptance rates, ...), at most one every ``interval`` seconds, so that
  ``tail -f`` on a fold job's log shows a live fit (``gpcbench run-fold`` sends the
  ``gpcbench`` loggers to the log) while a library user sees nothing unless they configure
  logging.
* :func:`warn_at_cap`: the :class:`sklearn.exceptions.ConvergenceWarning` an estimator raises
  when an iteration stops at its cap instead of at its convergence criterion, as
  scikit-learn's own estimators do.
"""

from __future__ import annotations

import logging
import time
import warnings

from sklearn.exceptions import ConvergenceWarning

LOG = logging.getLogger("gpcbench.progress")
PROGRESS_INTERVAL_S = 5.0


class Progress:
    """Rate-limited progress lines of one fit.

    Parameters
    ----------
    label : str
        What is running, the start of every line (e.g. ``"EM-EP"``).
    interval : float
        Seconds between two lines at least; the first call always writes.
    """

    def __init__(self, label: str, interval: float = PROGRESS_INTERVAL_S):
        self.label = label
        self.interval = interval
        self._last = None

    def __call__(self, message: str, *args, final: bool = False) -> None:
        """Log ``label: message % args`` if ``interval`` has passed (always when ``final``)."""
        now = time.monotonic()
        if final or self._last is None or now - self._last >= self.interval:
            self._last = now
            if LOG.isEnabledFor(logging.INFO):
                LOG.info("%s: " + message, self.label, *args)


def warn_at_cap(who: str, what: str, cap: int, advice: str = "") -> None:
    """Warn that ``who``'s ``what`` stopped at its cap of ``cap`` iterations unconverged."""
    text = f"{who}: {what} stopped at its cap of {cap} iterations without converging"
    warnings.warn(text + (f"; {advice}" if advice else ""), ConvergenceWarning, stacklevel=3)
