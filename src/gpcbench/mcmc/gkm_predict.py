"""Model-averaged predictions of the ZDJ samplers' kept draws (ZDJ secs. 3.3, 4.2 and 6.2).

* FBGKM / BGKM: p(y* = 1) ~ 1/T sum_t Phi(u_t + k_gamma(x*)' beta_gamma,t);
* SGPC (ZDJ sec. 4.2): s* ~ N(m_t, v_t) given (s, gamma, u) with
  m_t = u + k*' P^-1 K_gamma'(s - u 1), v_t = 1 + k*' P^-1 k*, P = g K_gammagamma + K_gamma'K_gamma
  (ZDJ's expressions after Woodbury); p(y* = 1) averages P(s* > 0) = Phi(m_t / sqrt(v_t)),
  the probability of ZDJ's draw of s* being positive (its Rao-Blackwellised value).
* More than two classes (ZDJ sec. 6.2): centred class scores f = B~H' k~(x*) per kept draw, and
  p(y* = j) averages the probit argmax probability P(f_j + e_j > f_l + e_l, l != j)
  (:func:`gpcbench.mcmc.gkm_multiclass.argmax_probability`, 48-node Gauss-Hermite); SGPC uses
  its predictive N(m_t, v_t H) of the centred s*, f = m_t / sqrt(v_t) class by class.

The draws of each kernel width are batched: FBGKM / BGKM scatter the draws' beta_gamma into one
dense (union of their active points, draws) matrix, one product with the test kernels per chunk
of draws. SGPC splits the draws, in chain order, into windows whose active sets lie in a common
base (their union): one generalized eigendecomposition of the base's (K'K, K_gammagamma) gives
P^-1 for every g, and a correction of rank the number of base points a draw lacks gives its own
active set (:func:`_window_sum`), so the n_test n_gamma^2 cost of a triangular solve per draw is
paid once per window. Same probabilities as one Cholesky of P per draw, up to rounding.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.linalg import cholesky, eigh, solve_triangular
from scipy.special import ndtr

from gpcbench.kernels.rbf import rbf
from gpcbench.mcmc.gkm_multiclass import add_class_probabilities, gauss_hermite

QUADRATURE = gauss_hermite(48)  # nodes, weights of the multiclass argmax probability
BLOCK_BYTES = 100e6  # bound on the (n_test, draws) score blocks held at once


class KeptDraws(NamedTuple):
    """The kept draws of the chains (pooled) and the training inputs they refer to.

    active : (T, k_max) active indices, -1 padded; coef : (T, k_max + 1) (u, beta_gamma)
    (multiclass: (T, k_max + 1, J), B~H); aux : K~'s (multiclass: K~'S), same shape as coef;
    theta : (T, q) kernel widths; hyper : (T, 2) (g, eta); jitter : K_gammagamma's jitter.
    """

    X_train: np.ndarray
    active: np.ndarray
    coef: np.ndarray
    aux: np.ndarray
    theta: np.ndarray
    hyper: np.ndarray
    jitter: float


def model_average(X, kept: KeptDraws, sgpc: bool) -> np.ndarray:
    """Binary: p(y* = 1); multiclass: (n, J) class probabilities, averaged over the kept draws
    (ZDJ sec. 3.3), one kernel width (the draws sharing theta) at a time; ``sgpc``: SGPC's
    predictive of s* (ZDJ sec. 4.2), else FBGKM's / BGKM's Phi(u + k*' beta)."""
    groups = np.unique(kept.theta, axis=0, return_inverse=True)[1].ravel()
    total = np.zeros(X.shape[:1] + kept.coef.shape[2:])
    for group in np.unique(groups):
        draws = np.flatnonzero(groups == group)
        theta = kept.theta[draws[0]]
        union = np.unique(kept.active[draws][kept.active[draws] >= 0])
        K_test = rbf(kept.X_train[union], X, theta).T  # Fortran order: columns contiguous
        total += (_sgpc_sum(kept, draws, union, K_test, theta) if sgpc
                  else _gkm_sum(kept, draws, union, K_test))
    return total / kept.active.shape[0]


def probability_sum(F, scale):
    """Sum over draws of the probit probabilities of scores F (n, draws) (multiclass:
    (n, draws, J), ZDJ sec. 6.2's argmax probabilities) with noise scale (n, draws) or 1."""
    if F.ndim == 2:
        return ndtr(F / scale).sum(axis=1)
    out = np.zeros((F.shape[0], F.shape[2]))
    scale = np.broadcast_to(scale, F.shape[:2])
    for i in range(F.shape[1]):
        add_class_probabilities(np.ascontiguousarray(F[:, i]),
                                np.ascontiguousarray(scale[:, i]), QUADRATURE, out)
    return out


def _n_scores(kept):
    """Scores per draw and test point: 1 (binary) or J."""
    return kept.coef.shape[2] if kept.coef.ndim == 3 else 1


def _gkm_sum(kept, draws, union, K_test):
    """FBGKM / BGKM: the sum over the draws of Phi(u + k*' beta) (multiclass: the argmax
    probabilities of f = u + B' k*). Each chunk of draws is one product K_test @ B, B the
    draws' coefficients scattered into the kernel width's union of active points."""
    n_chunks = int(np.ceil(draws.size * K_test.shape[0] * _n_scores(kept) * 8 / BLOCK_BYTES))
    total = 0.0
    for chunk in np.array_split(draws, n_chunks):
        F = np.tensordot(K_test, _scatter(kept, chunk, union), axes=1)
        total = total + probability_sum(F + kept.coef[chunk, 0], 1.0)
    return total


def _scatter(kept, chunk, union):
    """(union, draws) (multiclass: (union, draws, J)) coefficients beta_gamma of the
    chunk's draws, zero where a draw's point is inactive."""
    act = kept.active[chunk]
    draw, slot = np.nonzero(act >= 0)
    B = np.zeros((union.size, chunk.size) + kept.coef.shape[2:])
    B[np.searchsorted(union, act[draw, slot]), draw] = kept.coef[chunk[draw], slot + 1]
    return B


def _train_blocks(kept, union, theta):
    """SGPC: K(X_train, X_union)'s rows at the union, its Gram matrix and column sums,
    shared by the draws of one kernel width."""
    K = rbf(kept.X_train, kept.X_train[union], theta)
    return K[union], K.T @ K, K.sum(axis=0)


def _sgpc_sum(kept, draws, union, K_test, theta):
    """SGPC (ZDJ sec. 4.2): the sum over the draws of Phi(m / sqrt(v)) (multiclass: the
    argmax probabilities of m_j / sqrt(v)), window by window (:func:`_windows`)."""
    train = _train_blocks(kept, union, theta)
    columns = [np.searchsorted(union, act[act >= 0]) for act in kept.active[draws]]
    total = 0.0
    for window, base in _windows(columns, union.size, K_test.shape[0], _n_scores(kept)):
        total = total + _window_sum(kept, draws[window], columns[window], base, K_test, train)
    return total


def _window_cost(n_test, n_scores, base, n_draws, n_active):
    """Estimated flops per draw and bytes of an SGPC prediction window of ``n_draws`` draws
    with ``n_active`` active points in all, on a base of ``base`` points: the base's
    eigendecomposition (~20 base^3) and whitened test kernels (2 n_test base^2) are shared,
    each draw adds 2 n_test base columns for its dropped points, scores and variance; the
    (n_test, columns) blocks take 8 n_test columns bytes."""
    columns = n_draws * base - n_active + n_draws * (n_scores + 1)
    flops = base**2 * (2 * n_test + 20 * base) + 2 * n_test * base * columns
    return flops / n_draws, 8 * n_test * columns


def _windows(columns, size, n_test, n_scores):
    """Split the draws (chain order; ``columns``: their active points in the union) into
    windows of consecutive draws, each with a base: the union of their active sets. A
    window grows while :func:`_window_cost`'s flops per draw do not rise and its blocks
    stay within BLOCK_BYTES. Returns (slice of draws, base) pairs."""
    windows, start = [], 0
    while start < len(columns):
        inside = np.zeros(size, dtype=bool)
        inside[columns[start]] = True
        end, n_active = start + 1, columns[start].size
        cost = _window_cost(n_test, n_scores, inside.sum(), 1, n_active)[0]
        while end < len(columns):
            new = columns[end][~inside[columns[end]]]
            grown, nbytes = _window_cost(n_test, n_scores, inside.sum() + new.size,
                                         end + 1 - start, n_active + columns[end].size)
            if grown > cost or nbytes > BLOCK_BYTES:
                break
            inside[new] = True
            end, n_active, cost = end + 1, n_active + columns[end].size, grown
        windows.append((slice(start, end), np.flatnonzero(inside)))
        start = end
    return windows


def _window_sum(kept, draws, columns, base, K_test, train):
    """ZDJ sec. 4.2's predictive summed over one window's draws.

    The base's generalized eigendecomposition Phi' K_bb Phi = I, Phi' G_bb Phi = diag(lam)
    (K_bb: K_gammagamma of the base points, jittered; G = K'K; scipy's eigh reduces it by
    the Cholesky K_bb = R R' to eigh(R^-1 G_bb R^-T) with triangular solves) gives
    g K_bb + G_bb = Phi^-T (g I + diag(lam)) Phi^-1 for every g, and each draw's P^-1 =
    Phi (diag(delta) - F F') Phi' (:func:`_draw_operator`). With the test kernels in these
    coordinates, w* = Phi' k*_base (the rows of W): m = u + w*' a and
    v = 1 + sum_j delta_j w*_j^2 - |F' w*|^2, three products of W by the window's a, delta
    and F.
    """
    K_union, gram, sums = train
    block = np.ix_(base, base)
    lam, Phi = eigh(gram[block], K_union[block] + kept.jitter * np.eye(base.size))
    W = K_test[:, base] @ Phi
    delta, weights, F = zip(*[_draw_operator(kept, t, cols, base, lam, Phi, sums)
                              for t, cols in zip(draws, columns)])
    M = np.tensordot(W, np.stack(weights, axis=1), axes=1)
    Z = W @ np.hstack(F)
    owner = np.eye(draws.size)[np.repeat(np.arange(draws.size), [f.shape[1] for f in F])]
    V = 1.0 + (W * W) @ np.column_stack(delta) - (Z * Z) @ owner
    return probability_sum(M + kept.coef[draws, 0], np.sqrt(V))


def _draw_operator(kept, t, cols, base, lam, Phi, sums):
    """Draw t's P^-1 (ZDJ sec. 4.2) in the base coordinates of :func:`_window_sum`.

    P is the block of P_b = g K_bb + G_bb at the draw's active points, and P_b^-1 = Phi
    diag(delta) Phi' with delta = 1 / (g + lam). The inverse of a block from the inverse of
    the whole, with C = Phi's rows at the base points the draw drops: P^-1 (zero-padded) =
    Phi (diag(delta) - F F') Phi', F = diag(delta) C' L^-T, L L' = C diag(delta) C'.

    Returns
    -------
    delta : ndarray of shape (base,)
    weights : ndarray of shape (base,) or (base, J)
        a = (diag(delta) - F F') Phi' h, h = K_gamma'(s - u 1) at the active points.
    F : ndarray of shape (base, dropped)
    """
    pos = np.searchsorted(base, cols)
    dropped = np.ones(base.size, dtype=bool)
    dropped[pos] = False
    delta = 1.0 / (kept.hyper[t, 0] + lam)
    E = delta[:, None] * Phi[dropped].T
    L = cholesky(Phi[dropped] @ E, lower=True)
    F = solve_triangular(L, E.T, lower=True).T
    u = kept.coef[t, 0]
    h = np.zeros(base.shape + np.shape(u))
    h[pos] = kept.aux[t, 1:cols.size + 1] - np.multiply.outer(sums[cols], u)
    proj = Phi.T @ h
    return delta, (proj.T * delta).T - F @ (F.T @ proj), F
