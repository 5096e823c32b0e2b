"""Step (a) of ZDJ sec. 3.2: Holmes & Held's (2006) marginal update of the probit auxiliaries,
ZDJ Appendix A, ZDJ alg. 1, one shared sequential loop for FBGKM, SGPC and BGKM, binary and
multiclass.

The auxiliary matrix S (m, n) has one column per point (m = 1: the binary s; m = J: the
centred multiclass S', ZDJ sec. 6.2). Point by point, :func:`holmes_held` draws S[:, i] from
its conditional given the other points, N(mu_i, sd_i^2) on the binary half-line of y_i, or
N(mu_i, sd_i^2 H) on the cone {s_iy_i > s_il} (:func:`cone_row`), with beta~ integrated out;
the leave-one-out mean mu_i and sd_i come from a representation of the prior covariance Q of
s (ZDJ eq. 8) that is updated in O(n_gamma) when S[:, i] moves. The representation is what
differs between the chains: a named tuple ``state``, for whose type :func:`conditional`
(S[:, i]'s leave-one-out mean and sd) and :func:`update` (S[j, i]'s new value into S and the
state) are implemented (``numba.extending.overload``, chosen when the chain is compiled):

* :class:`WhitenedState` (FBGKM and SGPC): with Upsilon = L L' (ZDJ eq. 9), W = L^-1 K~' and Z[j] = L^-1 K~'s_j, ZDJ alg. 1's mean (1 + r) K~_i b - r s_i and
  variance 1 + r read mu_ij = (1 + r) w_i'Z[j] - r s_ij, r = H_ii / (1 - H_ii), H_ii = |w_i|^2,
  and ZDJ alg. 1's b <- b + (s_i - a) A(:, i) becomes Z[j] <- Z[j] + delta_j w_i; so no n x n
  matrix is formed. W is formed once per sweep by a BLAS-3 triangular solve (:func:`whiten`).
* BGKM's eigenbasis form, :class:`gpcbench.mcmc.bgkm.EigenState`.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import types
from numba.extending import overload

from gpcbench.jit import njit
from gpcbench.mcmc.cholesky import dot, multiply_lower
from gpcbench.mcmc.lapack import solve_lower_rows


@njit(cache=True)
def truncated_normal(mean, sd, positive):
    """Draw from N(mean, sd^2) restricted to > 0 (``positive``) or < 0.

    Standardised bound a = -mean/sd (sign-flipped for < 0): plain rejection when a < 0.45,
    else Robert's (1995) exponential proposal with the optimal rate (a + sqrt(a^2 + 4)) / 2.
    """
    mu = mean if positive else -mean
    a = -mu / sd
    if a < 0.45:
        while True:
            z = np.random.standard_normal()
            if z > a:
                break
    else:
        rate = 0.5 * (a + math.sqrt(a * a + 4.0))
        while True:
            z = a + np.random.exponential(1.0 / rate)
            if np.random.random() <= math.exp(-0.5 * (z - rate) ** 2):
                break
    x = mu + sd * z
    return x if positive else -x


@njit(cache=True)
def cone_row(mu, sd, c, s_row, x):
    """Update a centred auxiliary row s_i whose conditional is N(mu, sd^2 H) (mu centred,
    H = I - 11'/J) restricted to the cone {s_ic > s_il, l != c} (ZDJ sec. 6.2).

    The cone is invariant along 1, so x = s_i + xi 1 with a fresh xi ~ N(0, sd^2 / J) has
    the conditional N(mu, sd^2 I) on the cone, whose coordinates are ZDJ's univariate
    truncated normals: x_c > max_{l != c} x_l, then every x_l < x_c given x_c (one Gibbs pass,
    the x_l are conditionally independent given x_c). s_i <- H x. A Markov kernel that leaves
    the row's conditional invariant, not an independent draw.
    """
    J = mu.shape[0]
    xi = sd / math.sqrt(J) * np.random.standard_normal()
    top = -np.inf
    for l in range(J):
        x[l] = s_row[l] + xi
        if l != c and x[l] > top:
            top = x[l]
    x[c] = top + truncated_normal(mu[c] - top, sd, True)
    mean = x[c]
    for l in range(J):
        if l != c:
            x[l] = x[c] + truncated_normal(mu[l] - x[c], sd, False)
            mean += x[l]
    mean /= J
    for l in range(J):
        s_row[l] = x[l] - mean


WhitenedState = namedtuple("WhitenedState", ("W", "Z", "k1"))
WhitenedState.__doc__ = """W = L^-1 K~' by rows (n, k_max + 1), Z = L^-1 K~'S (m, k_max + 1), and
k1 = n_gamma + 1 (the columns in use)."""


def conditional(state, i, S, mu):
    """Fill mu (m,) with S[:, i]'s leave-one-out mean under the representation ``state``;
    return its sd. numba only, implemented per state type (module docstring)."""
    raise NotImplementedError("called from numba code only")


def update(state, S, i, j, value):
    """Set S[j, i] to its new ``value`` and carry the change into ``state``. numba only
    (module docstring)."""
    raise NotImplementedError("called from numba code only")


def is_state(state, cls) -> bool:
    """Whether the numba type ``state`` is the named tuple ``cls`` (for the overloads)."""
    return isinstance(state, types.BaseNamedTuple) and state.instance_class is cls


@njit(cache=True)
def holmes_held(state, S, y, mu, row, x):
    """ZDJ Appendix A, ZDJ alg. 1 over every point in turn (see the module docstring).

    Parameters
    ----------
    state : representation of Q (:class:`WhitenedState` or
        :class:`gpcbench.mcmc.bgkm.EigenState`), updated with S.
    S : (m, n) auxiliaries (updated); y : (n,) labels ({0, 1} when m = 1, else 0..J-1).
    mu, row, x : (m,) work buffers.
    """
    m = S.shape[0]
    for i in range(S.shape[1]):
        sd = conditional(state, i, S, mu)
        if m == 1:
            row[0] = truncated_normal(mu[0], sd, y[i] > 0)
        else:
            for j in range(m):
                row[j] = S[j, i]
            cone_row(mu, sd, y[i], row, x)
        for j in range(m):
            update(state, S, i, j, row[j])


@njit(cache=True)
def whiten(Kt, k1, L, W):
    """W[i, :k1] = L^-1 K~_i' for every point i, Upsilon = L L' (ZDJ eq. 9), so that ZDJ alg. 1's
    H = K~ Upsilon^-1 K~' has H(i, i) = |W[i, :k1]|^2 and K~_i b = W[i, :k1]'Z: one triangular
    solve with the n points as right-hand sides, by block forward substitution at BLAS-3 speed
    (:func:`gpcbench.mcmc.lapack.solve_lower_rows`)."""
    solve_lower_rows(L, k1, Kt, W, Kt.shape[0])


@overload(conditional)
def _whitened_conditional(state, i, S, mu):
    """ZDJ alg. 1's mean and sd of S[:, i] in whitened coordinates."""
    if not is_state(state, WhitenedState):
        return None

    def impl(state, i, S, mu):
        w = state.W[i]
        h = dot(w, w, state.k1)
        ratio = h / (1.0 - h)
        for j in range(S.shape[0]):
            mu[j] = (1.0 + ratio) * dot(w, state.Z[j], state.k1) - ratio * S[j, i]
        return math.sqrt(1.0 + ratio)

    return impl


@overload(update)
def _whitened_update(state, S, i, j, value):
    """ZDJ alg. 1's b_j <- b_j + (s_ij - a) A(:, i), whitened: Z[j] += delta w_i."""
    if not is_state(state, WhitenedState):
        return None

    def impl(state, S, i, j, value):
        delta = value - S[j, i]
        S[j, i] = value
        for r in range(state.k1):
            state.Z[j, r] += delta * state.W[i, r]

    return impl


@njit(cache=True)
def whitened_step_a(Kt, k1, L, W, S, y, C, Z, mu, row, x):
    """Step (a) of FBGKM and SGPC: :func:`holmes_held` on the :class:`WhitenedState` (W from
    :func:`whiten`, Z = L^-1 K~'S updated), then C = K~'S = L Z."""
    whiten(Kt, k1, L, W)
    holmes_held(WhitenedState(W, Z, k1), S, y, mu, row, x)
    for j in range(S.shape[0]):
        multiply_lower(L, k1, Z[j], C[j])
