"""Brooks' (1998) CUSUM "hairiness" burn-in estimate (Zhang, Dai & Jordan 2011, Table 12).

For draws x_1..x_N with mean mu, the CUSUM path S_t = sum_{i<=t} (x_i - mu) has a local
extremum at t exactly when x_t - mu and x_{t+1} - mu differ in sign; d_t = 1 marks one. The
hairiness D_t = (1/t) sum_{j<=t} d_j of an independent, converged sequence is Bin(t, 1/2) / t,
so it lies within 1/2 +- z / (2 sqrt(t)) (z the normal quantile of the level) with that
probability. The burn-in is the first t after which D_t stays inside these bounds to the end
of the chain. Brooks asks for (nearly) independent draws: thin the chain first.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri


def hairiness(draws) -> np.ndarray:
    """Running hairiness D_t, t = 1..N-1, of one chain."""
    x = np.asarray(draws, dtype=float)
    centred = x - x.mean()
    turns = (centred[:-1] * centred[1:]) < 0
    return np.cumsum(turns) / np.arange(1, x.size)


def brooks_burn_in(draws, thin: int = 1, level: float = 0.9) -> float:
    """Burn-in (in iterations of the unthinned chain) by the hairiness criterion.

    Parameters
    ----------
    draws : array-like of shape (N,)
        One chain, from the first iteration on.
    thin : int, default=1
        Use every ``thin``-th draw; the result is scaled back to iterations.
    level : float, default=0.9
        Coverage of the binomial bounds (the paper: 90 %).

    Returns
    -------
    float
        First iteration after which the hairiness stays inside the bounds; 0 for a constant
        chain, NaN if it is outside them at the end of the chain.
    """
    x = np.asarray(draws, dtype=float)[::thin]
    if x.size < 3:
        return float("nan")
    if np.ptp(x) == 0:
        return 0.0
    d = hairiness(x)
    t = np.arange(1, x.size)
    outside = np.abs(d - 0.5) > ndtri(0.5 + level / 2) / (2 * np.sqrt(t))
    if outside[-1]:
        return float("nan")
    last = np.flatnonzero(outside)
    return float((last[-1] + 2 if last.size else 1) * thin)
