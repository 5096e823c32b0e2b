"""Progress lines of the ZDJ chains, written from inside their compiled sweep loops.

Every :data:`REPORT_EVERY` sweeps (and at the last) a chain leaves nopython mode for a moment
(numba ``objmode``, no random draws) and hands its sweep, n_gamma and move counters to a
:class:`gpcbench.monitor.Progress`, which writes at most a line every few seconds. The chains'
numbers do not depend on it.
"""

from __future__ import annotations

import numpy as np

from gpcbench.jit import njit, objmode
from gpcbench.monitor import Progress

REPORT_EVERY = 50
MOVES = ("birth", "death", "swap", "theta")
PROGRESS = Progress("ZDJ chain")


def log_sweep(sweep: int, n_sweeps: int, n_gamma: int, counts: np.ndarray) -> None:
    """One progress line: sweep, n_gamma and each move's acceptance rate so far (a chain's
    first and last report are always written)."""
    rates = ", ".join(f"{name} {accepted / proposed:.2f}" if proposed else f"{name} -"
                      for name, (proposed, accepted) in zip(MOVES, counts))
    PROGRESS("sweep %d of %d, n_gamma %d, acceptance %s", sweep, n_sweeps, n_gamma, rates,
             force=sweep in (REPORT_EVERY, n_sweeps))


@njit(cache=True)
def report_sweep(t, n_sweeps, n_gamma, counts):
    """Call :func:`log_sweep` after sweep t (0-based) when it is due."""
    if (t + 1) % REPORT_EVERY == 0 or t + 1 == n_sweeps:
        with objmode():
            log_sweep(t + 1, n_sweeps, n_gamma, counts)
