"""Step (a) of the FBGKM / SGPC sweep (ZDJ sec. 3.2) in O(n n_gamma) while gamma and theta stay
as they are: the whitening from an eigenbasis of the active set instead of a triangular solve.

Upsilon = G + Sigma_gamma (ZDJ eq. 9), G = K~'K~, Sigma_gamma = diag(eta, g K_gammagamma),
changes with eta and g at every sweep, so step (a)'s W = L^-1 K~' (Upsilon = L L') costs
n (n_gamma + 1)^2 flops a sweep. With P = diag(1, K_gammagamma) = LP LP' (LK, K_gammagamma's
factor, the chain keeps), Sigma_gamma = g P + (eta - g) e0 e0', and LP^-1 e0 = e0, so

    LP^-1 Upsilon LP^-T = A + g I + c e0 e0',   A = LP^-1 G LP^-T = U diag(lambda) U',
    c = eta - g,

and K~ Upsilon^-1 K~' = Y (D + c a a')^-1 Y' with Y = K~ LP^-T U, D = diag(lambda + g) and
a = U' e0 (U's first row). For u = D^-1/2 a, (I + c u u')^-1 = T^2 with T = I - tau u u',
tau = c / (sqrt(q) (sqrt(q) + 1)), q = 1 + c u'u (> 0: Upsilon is positive definite; this form
has no cancellation). Rows w_i = T D^-1/2 Y_i' are then a whitening as good as L^-1 K~_i': the
Holmes-Held conditionals read only w_i'w_j = K~_i Upsilon^-1 K~_j' and w_i'z with
z = T D^-1/2 U' LP^-1 K~'s (:mod:`gpcbench.mcmc.holmes_held`), so step (a) draws from the same
conditionals whichever whitening it uses. The :class:`Eigenbasis` (Y, lambda, a) depends on
gamma and theta only: built once (3 n (n_gamma + 1)^2 flops and an eigendecomposition of
order n_gamma + 1), it serves every sweep until a move is accepted.

:func:`ready_basis` decides from the chain's history (never its future, so every step (a)
draws from the same conditionals whichever way it goes) whether to build: when the chain's rate
of change so far at its current n_gamma (:class:`History`; chains at k_max change rarely, one
below it often) makes the expected sweeps until the next change outweigh the basis's cost.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from gpcbench.jit import njit
from gpcbench.mcmc.cholesky import dot, forward, multiply_lower
from gpcbench.mcmc.holmes_held import WhitenedState, holmes_held
from gpcbench.mcmc.lapack import gemm, solve_lower_rows

_N, _T = ord("N"), ord("T")

Eigenbasis = namedtuple("Eigenbasis", ("design", "values", "rotation", "factor", "stamp"))
Eigenbasis.__doc__ = """The active set's eigenbasis (module docstring): Y = K~ LP^-T U
(``design``, n x (k_max + 1), rows), lambda (``values``), U (``rotation``; a is its first row),
LP (``factor``) and ``stamp[0]``, the number of accepted moves (:func:`accepted_moves`) when
it was built (-1: never)."""


@njit(cache=True)
def allocate_eigenbasis(n, k_max):
    """An empty :class:`Eigenbasis` for n points and capacity k_max."""
    k1 = k_max + 1
    return Eigenbasis(np.zeros((n, k1)), np.zeros(k1), np.zeros((k1, k1)), np.zeros((k1, k1)),
                      np.full(1, -1, dtype=np.int64))


History = namedtuple("History", ("sweeps", "changes"))
History.__doc__ = """Per n_gamma (the index, 0 to k_max): the sweeps the chain began at that size
and how many of them ended with an accepted move (:func:`note_sweep`)."""


@njit(cache=True)
def new_history(k_max):
    """An empty :class:`History` for capacity k_max."""
    return History(np.zeros(k_max + 1), np.zeros(k_max + 1))


@njit(cache=True)
def note_sweep(history, k, changed):
    """Count a sweep begun at n_gamma = k, and whether a move was accepted in it."""
    history.sweeps[k] += 1.0
    if changed:
        history.changes[k] += 1.0


@njit(cache=True)
def accepted_moves(counts):
    """Accepted gamma and theta moves so far (the move counters' second column): the active
    set and the widths are those of the last build while this number is."""
    total = 0
    for kind in range(counts.shape[0]):
        total += counts[kind, 1]
    return total


@njit(cache=True)
def worth_building(changes, sweeps, n, k1):
    """Whether a basis pays for itself: its cost, 4 + 8 k1 / n whitenings (the solve, the two
    products and the eigendecomposition; measured at n = 400-4,000, k1 = 201-701), against the
    expected sweeps until the next accepted move, (sweeps + 2) / (changes + 1) at the chain's
    rate so far."""
    return (changes + 1.0) / (sweeps + 2.0) * (4.0 + 8.0 * k1 / n) < 0.9


@njit(cache=True)
def ready_basis(basis, history, accepted, Kt, k, LK, fixed):
    """Whether step (a) runs from ``basis``: it was built at the current state (``accepted``
    moves so far), or building it pays at n_gamma = k (:func:`worth_building` on the
    :class:`History`; always where gamma and theta are ``fixed``) and it is built now."""
    if basis.stamp[0] == accepted:
        return True
    if fixed or worth_building(history.changes[k], history.sweeps[k], Kt.shape[0], k + 1):
        build_eigenbasis(Kt, k, LK, basis, accepted)
        return True
    return False


@njit(cache=True)
def build_eigenbasis(Kt, k, LK, basis, stamp):
    """Fill ``basis`` for the active set whose K~ (``Kt``) and K_gammagamma's factor LK are
    given (k active points); ``stamp`` as :class:`Eigenbasis`."""
    k1, n = k + 1, Kt.shape[0]
    LP, U, Y = basis.factor, basis.rotation, basis.design
    LP[:k1, :k1] = 0.0
    LP[0, 0] = 1.0
    for i in range(k):
        for j in range(i + 1):
            LP[i + 1, j + 1] = LK[i, j]
    design = np.empty((n, k1))
    solve_lower_rows(LP, k1, Kt, design, n)  # rows of K~ LP^-T
    # A = (K~ LP^-T)'(K~ LP^-T); column-major the rows of ``design`` are columns of its transpose
    A = np.empty((k1, k1))
    gemm(_N, _T, k1, k1, n, 1.0, design, 0, k1, design, 0, k1, 0.0, A, 0, k1)
    values, vectors = np.linalg.eigh(A)
    basis.values[:k1] = values
    U[:k1, :k1] = vectors
    # Y = (K~ LP^-T) U; column-major: Y' = U' (K~ LP^-T)', U's buffer read column-major is U'
    gemm(_N, _N, k1, n, k1, 1.0, U, 0, U.shape[1], design, 0, k1, 0.0, Y, 0, Y.shape[1])
    basis.stamp[0] = stamp


@njit(cache=True)
def eigen_step_a(basis, k1, eta, g, LK, L, W, S, y, C, Z, mu, row, x):
    """Step (a) of FBGKM and SGPC from ``basis``: :func:`holmes_held` on the whitening of the
    module docstring at the chain's (eta, g), then C = K~'S (from z) and Z = L^-1 C, as
    :func:`gpcbench.mcmc.holmes_held.whitened_step_a` leaves them."""
    values, U, Y = basis.values, basis.rotation, basis.design
    scale, u = np.empty(k1), np.empty(k1)
    for r in range(k1):
        scale[r] = 1.0 / math.sqrt(values[r] + g)
        u[r] = U[0, r] * scale[r]
    c = eta - g
    root = math.sqrt(1.0 + c * dot(u, u, k1))
    tau = c / (root * (root + 1.0))
    for i in range(Y.shape[0]):
        _whiten_row(Y[i], scale, u, tau, k1, W[i])
    lp_c, rotated = np.empty(k1), np.empty(k1)
    for j in range(S.shape[0]):  # z = T D^-1/2 U' LP^-1 C[j]
        for r in range(k1 - 1):
            lp_c[r + 1] = C[j, r + 1]
        forward(LK, k1 - 1, lp_c[1:], lp_c[1:])
        lp_c[0] = C[j, 0]
        for r in range(k1):
            rotated[r] = 0.0
        for q in range(k1):
            for r in range(k1):
                rotated[r] += U[q, r] * lp_c[q]
        _whiten_row(rotated, scale, u, tau, k1, Z[j])
    holmes_held(WhitenedState(W, Z, k1), S, y, mu, row, x)
    # C = K~'S back from z in O(k1^2): C = LP U D^1/2 T^-1 z, T^-1 = I + tau sqrt(q) u u'
    for j in range(S.shape[0]):
        along = tau * root * dot(u, Z[j], k1)
        for r in range(k1):
            rotated[r] = (Z[j, r] + along * u[r]) / scale[r]
        for q in range(k1):
            total = 0.0
            for r in range(k1):
                total += U[q, r] * rotated[r]
            lp_c[q] = total
        C[j, 0] = lp_c[0]
        multiply_lower(LK, k1 - 1, lp_c[1:], C[j, 1:])
        forward(L, k1, C[j], Z[j])


@njit(cache=True, fastmath=True)
def _whiten_row(v, scale, u, tau, k1, out):
    """out = T D^-1/2 v (module docstring)."""
    along = 0.0
    for r in range(k1):
        out[r] = v[r] * scale[r]
        along += out[r] * u[r]
    for r in range(k1):
        out[r] -= tau * along * u[r]
