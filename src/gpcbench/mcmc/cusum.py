"""Brooks' (1998) CUSUM "hairiness" burn-in estimate (Zhang, Dai & Jordan 2011, Table 12).

For draws x_1..x_N with mean mu, the CUSUM path S_t = sum_{i<=t} (x_i - mu) has a local
extremum at t exactly when x_t - mu and x_{t+1} - mu differ in sign; d_t = 1 marks one. The
hairiness D_t = (1/t) sum_{j<=t} d_j of an independent, converged sequence is Bin(t, 1/2) / t,
so it lies within 1/2 +- z / (2 sqrt(t)) (z the normal quantile of the level) with that
probability. Brooks computes the hairiness D_{n0,t} of the draws after a candidate burn-in n0;
here the burn-in is the smallest n0 on a grid (steps of 1/50 of the chain) for which the
hairiness of x_{n0+1..N} (CUSUM about their own mean) lies inside the bounds. Brooks asks for
(nearly) independent draws: thin the chain first.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri


def hairiness(draws) -> np.ndarray:
    """Running hairiness D_t, t = 1..N-1, of one chain (CUSUM about the chain's mean)."""
    x = np.asarray(draws, dtype=float)
    centred = x - x.mean()
    turns = (centred[:-1] * centred[1:]) < 0
    return np.cumsum(turns) / np.arange(1, x.size)


def _inside(x, z) -> bool:
    d = hairiness(x)[-1]
    return abs(d - 0.5) <= z / (2 * np.sqrt(x.size - 1))


def brooks_burn_in(draws, thin: int = 1, level: float = 0.9, grid: int = 50) -> float:
    """Burn-in (in iterations of the unthinned chain) by the hairiness criterion.

    Parameters
    ----------
    draws : array-like of shape (N,)
        One chain, from the first iteration on.
    thin : int, default=1
        Use every ``thin``-th draw; the result is scaled back to iterations.
    level : float, default=0.9
        Coverage of the binomial bounds (the paper: 90 %).
    grid : int, default=50
        Candidate burn-ins are multiples of 1/grid of the chain, up to its half.

    Returns
    -------
    float
        Smallest candidate burn-in whose remaining draws are inside the bounds; 0 for a
        constant chain, NaN if none is.
    """
    x = np.asarray(draws, dtype=float)[::thin]
    if np.ptp(x) == 0:
        return 0.0
    z = ndtri(0.5 + level / 2)
    step = max(1, x.size // grid)
    for n0 in range(0, x.size // 2 + 1, step):
        if x.size - n0 >= 10 and _inside(x[n0:], z):
            return float(n0 * thin)
    return float("nan")
