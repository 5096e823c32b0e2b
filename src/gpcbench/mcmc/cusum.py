"""Brooks' (1998) CUSUM "hairiness" burn-in estimate (Zhang, Dai & Jordan 2011, ZDJ Table 12).

For draws x_1..x_N with mean mu, the CUSUM path S_t = sum_{i<=t} (x_i - mu) has a local
extremum at t exactly when x_t - mu and x_{t+1} - mu differ in sign; d_t = 1 marks one. For a
symmetric distribution the hairiness D_t = (1/t) sum_{j<=t} d_j of an independent, converged
sequence is Bin(t, 1/2) / t, so it lies within 1/2 +- z / (2 sqrt(t)) (z the normal quantile
of the level) with that probability: Brooks' bounds. For a skewed distribution (eta, g) or a
discrete one (n_gamma) a draw lies above mu with probability p != 1/2 and 1/2 is the wrong
centre: a long independent chain of log-normal draws would never settle. Given the n1 draws
above mu and the n2 below (n = n1 + n2), the turns of an exchangeable sequence are the runs of
Wald and Wolfowitz's test less one: mean 2 n1 n2 / n, variance
2 n1 n2 (2 n1 n2 - n) / (n^2 (n - 1)); the bounds used here are those moments +- z sd, which
are Brooks' when n1 = n2 and keep the level's coverage for any p.
Brooks computes the hairiness D_{n0,t} of the draws after a candidate burn-in n0;
here the burn-in is the smallest n0 on a grid (steps of 1/50 of the chain) for which the
hairiness of x_{n0+1..N} (CUSUM about their own mean) lies inside the bounds. Brooks asks for
(nearly) independent draws: thin the chain first.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri


def _inside(x, z) -> bool:
    """Whether the turns of x about its mean are within the runs-test bounds (docstring)."""
    above = x > x.mean()
    n, n1 = above.size, int(above.sum())
    n2 = n - n1
    turns = np.count_nonzero(above[:-1] != above[1:])
    mean = 2.0 * n1 * n2 / n
    variance = 2.0 * n1 * n2 * (2.0 * n1 * n2 - n) / (n * n * (n - 1))
    return abs(turns - mean) <= z * np.sqrt(max(variance, 0.0))


def brooks_burn_in(draws, thin: int = 1, level: float = 0.9, grid: int = 50) -> float:
    """Burn-in (in iterations of the unthinned chain) by the hairiness criterion.

    Parameters
    ----------
    draws : array-like of shape (N,)
        One chain, from the first iteration on.
    thin : int, default=1
        Use every ``thin``-th draw; the result is scaled back to iterations.
    level : float, default=0.9
        Coverage of the binomial bounds (ZDJ: 90 %).
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
