"""An O(n^2)-per-sweep chain for BGKM (ZDJ: Zhang, Dai & Jordan 2011, ZDJ sec. 5): the ZDJ sec. 3.2
sampler with every point active (gamma = all n), no gamma moves and a fixed kernel width.

With gamma and theta fixed only eta and g change between sweeps, so one eigendecomposition of
K_gammagamma = K + jitter I = V diag(kappa) V' (the jittered kernel of
:mod:`gpcbench.mcmc.active_set`) at the start serves every sweep; lam = kappa - jitter are K's
eigenvalues (K~ = [1, K] holds the unjittered kernel). Write b = V'1 and a = V's (s in eigen
coordinates).

Step (a), s | eta, g (ZDJ Appendix A, Holmes & Held's marginal update): the prior covariance
of s (ZDJ eq. 8) is Q = I + K~ Sigma^-1 K~' = I + 11'/eta + K (g K_gammagamma)^-1 K
= V diag(1 + mu/g) V' + 11'/eta, mu = lam^2 / kappa >= 0. By Sherman-Morrison
Q^-1 = V diag(D) V' - r r'/rho, D = 1 / (1 + mu/g), r = V D b, rho = eta + b'D b, so
(Q^-1)_ii = sum_j V_ij^2 D_j - r_i^2/rho and (Q^-1 s)_i = sum_j V_ij D_j a_j - r_i (r's)/rho:
O(n) per point given a and r's, both updated in O(n) when s_i moves. s_i | s_-i is
N(s_i - (Q^-1 s)_i / (Q^-1)_ii, 1 / (Q^-1)_ii) truncated to the sign of y_i, the same
conditional as ZDJ alg. 1's N((1 + r) K~_i b - r s_i, 1 + r); the sequential loop is the shared
:func:`gpcbench.mcmc.holmes_held.holmes_held` on an :class:`EigenState`.

beta~ | s, eta, g ~ N(Upsilon^-1 K~'s, Upsilon^-1) (ZDJ eq. 9): in the coordinates (u, gamma),
beta = V gamma, Upsilon becomes the arrowhead [[n + eta, c'], [c, diag(e)]] with c = lam b
(K~ = [1, V diag(lam) V']), e = lam^2 + g kappa (K~'K~ and g K_gammagamma both diagonal in V),
and K~'s becomes h = (1's, lam a). Its Cholesky factor with the gamma block first is
[[diag(sqrt e), 0], [c'/sqrt e, ell]], ell^2 = n + eta - sum c^2/e = eta + sum b^2 g kappa/e
(using b'b = n: a sum of positive terms, no cancellation); beta~ is drawn as with Upsilon's
Cholesky factor in :func:`gpcbench.mcmc.gkm.run_chain`, in O(n), then beta = V gamma in O(n^2).

Step (b) is unchanged: eta | u, and g | beta with beta' K_gammagamma beta = sum kappa gamma^2.

Numerics: kappa > 0 is required (raise ``jitter`` otherwise, as the Cholesky of K_gammagamma
would); then mu >= 0, 0 < D <= 1 for every g > 0 (D -> 1 as g grows, D ~ g/mu as g -> 0, never
a 1/g overflow), e >= g kappa > 0 and ell^2 >= eta > 0. a = V's is recomputed every sweep so
its rank-one updates do not accumulate rounding.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba.extending import overload

from gpcbench.jit import njit
from gpcbench.mcmc.active_set import project_cols
from gpcbench.mcmc.cholesky import dot
from gpcbench.mcmc.gkm import kept_index, record_draw
from gpcbench.mcmc.holmes_held import conditional, holmes_held, is_state, update
from gpcbench.kernels.rbf import kernel_block, weights
from gpcbench.mcmc.moves import draw_eta, draw_g
from gpcbench.mcmc.sweep_progress import report_sweep


Eigenbasis = namedtuple("Eigenbasis", ("V", "kappa", "lam", "b"))
Eigenbasis.__doc__ = """K_gammagamma = V diag(kappa) V' (module docstring): V (eigenvectors by
columns, rows contiguous), kappa (eigenvalues of K + jitter I), lam = kappa - jitter (of K) and
b = V'1."""


@njit(cache=True)
def eigenbasis(Kt, jitter):
    """The :class:`Eigenbasis` of K = Kt[:, 1:] (all n points active)."""
    n = Kt.shape[0]
    Kgg = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            Kgg[i, j] = Kt[i, j + 1]
        Kgg[i, i] += jitter
    kappa, V = np.linalg.eigh(Kgg)
    if kappa[0] <= 0.0:
        raise ValueError("K_gammagamma is not positive definite; raise jitter")
    V = np.ascontiguousarray(V)
    return Eigenbasis(V, kappa, kappa - jitter, rotate(V, np.ones(n)))


@njit(cache=True)
def rotate(V, x):
    """V'x, V read by rows."""
    out = np.zeros(V.shape[1])
    for i in range(V.shape[0]):
        row, xi = V[i], x[i]
        for j in range(V.shape[1]):
            out[j] += row[j] * xi
    return out


@njit(cache=True)
def precision_terms(basis, eta, g, D, r, d):
    """Q^-1 = V diag(D) V' - r r'/rho (module docstring) for the current eta, g: fills D, r and
    d_i = sum_j V_ij^2 D_j; returns rho = eta + b'D b."""
    V, kappa, lam, b = basis
    n = V.shape[0]
    rho = eta
    for j in range(n):
        D[j] = 1.0 / (1.0 + lam[j] * lam[j] / (kappa[j] * g))
        rho += D[j] * b[j] * b[j]
    for i in range(n):
        row = V[i]
        ri, di = 0.0, 0.0
        for j in range(n):
            ri += row[j] * D[j] * b[j]
            di += row[j] * row[j] * D[j]
        r[i], d[i] = ri, di
    return rho


EigenState = namedtuple("EigenState", ("V", "D", "r", "d", "rho", "a", "rs"))
EigenState.__doc__ = """Q^-1 = V diag(D) V' - r r'/rho (module docstring) with d_i = sum_j V_ij^2 D_j,
a = V's and rs[0] = r's (kept in step with s)."""


@overload(conditional)
def _eigen_conditional(state, i, S, mu):
    """Mean and sd of s_i | s_-i under N(0, Q) (ZDJ Appendix A): s_i - (Q^-1 s)_i / (Q^-1)_ii
    and 1 / sqrt((Q^-1)_ii)."""
    if not is_state(state, EigenState):
        return None

    def impl(state, i, S, mu):
        Vi, ri, rho = state.V[i], state.r[i], state.rho
        qs = -ri * state.rs[0] / rho
        for j in range(Vi.shape[0]):
            qs += Vi[j] * state.D[j] * state.a[j]
        qii = state.d[i] - ri * ri / rho
        mu[0] = S[0, i] - qs / qii
        return math.sqrt(1.0 / qii)

    return impl


@overload(update)
def _eigen_update(state, S, i, j, value):
    """s_i += delta (delta = value - s_i: the new value up to rounding, the sum this chain has
    always formed), and a = V's and r's kept in step."""
    if not is_state(state, EigenState):
        return None

    def impl(state, S, i, j, value):
        delta = value - S[0, i]
        S[0, i] += delta
        state.rs[0] += delta * state.r[i]
        row = state.V[i]
        for q in range(state.a.shape[0]):
            state.a[q] += delta * row[q]

    return impl


@njit(cache=True)
def coefficients(basis, eta, g, s_sum, a, noise, gamma, beta):
    """beta~ = (u, beta) = mean + F noise ~ N(Upsilon^-1 K~'s, Upsilon^-1) (ZDJ eq. 9) for
    ``noise`` (n + 1) iid N(0, 1) (noise[0] for u), through the arrowhead Cholesky factor of
    the module docstring: gamma <- L^-1 h + noise, then L' (u, gamma) = that. Fills gamma
    (beta = V gamma) and beta (n + 1); returns beta' K_gammagamma beta = sum kappa gamma^2."""
    V, kappa, lam, b = basis
    n = V.shape[0]
    ell2, y_u = eta, s_sum
    for j in range(n):
        e = lam[j] * lam[j] + g * kappa[j]
        gamma[j] = lam[j] * a[j] / math.sqrt(e)  # (L^-1 h)_j
        y_u -= lam[j] * b[j] / math.sqrt(e) * gamma[j]
        ell2 += b[j] * b[j] * g * kappa[j] / e
    ell = math.sqrt(ell2)
    u = (y_u / ell + noise[0]) / ell
    quad = 0.0
    for j in range(n):
        sq = math.sqrt(lam[j] * lam[j] + g * kappa[j])
        gamma[j] = (gamma[j] + noise[j + 1] - lam[j] * b[j] / sq * u) / sq
        quad += kappa[j] * gamma[j] * gamma[j]
    beta[0] = u
    for i in range(n):
        beta[i + 1] = dot(V[i], gamma, n)
    return quad


@njit(cache=True)
def run_bgkm(X, y, s, chain, settings, seed, record):
    """Run one BGKM chain (binary, fixed theta, all n points active); returns the final s.

    Same sweeps and records as :func:`gpcbench.mcmc.gkm.run_chain` with the steps s and
    (eta, g) only and every point active (``chain.active`` = 0..n-1, n_gamma = k_max = n; gamma
    and theta never move, so ``record.move_counts`` stays as it is), at O(n^2) per sweep after
    one O(n^3) eigendecomposition.
    """
    np.random.seed(seed)
    n, p = X.shape
    act = chain.active
    Kt = np.zeros((n, n + 1))
    kernel_block(X, act, n, weights(chain.theta, p), Kt)
    basis = eigenbasis(Kt, settings.jitter)
    V = basis.V
    D, r, d, gamma = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
    beta, C = np.zeros(n + 1), np.zeros((1, n + 1))
    S, a, rs = s.reshape((1, n)), rotate(V, s), np.zeros(1)
    mu, row, x = np.zeros(1), np.zeros(1), np.zeros(1)
    for t in range(settings.n_sweeps):
        eta, g = chain.eta[0], chain.g[0]
        rho = precision_terms(basis, eta, g, D, r, d)
        rs[0] = dot(r, s, n)  # step (a)
        holmes_held(EigenState(V, D, r, d, rho, a, rs), S, y, mu, row, x)
        a = rotate(V, s)  # afresh: no rounding drift from the rank-one updates
        quad = coefficients(basis, eta, g, s.sum(), a, np.random.standard_normal(n + 1), gamma,
                            beta)
        record.trace[t, 0], record.trace[t, 1], record.trace[t, 2] = beta[0], g, eta
        record.trace[t, 3] = n
        kept = kept_index(t, settings)
        if kept >= 0:
            project_cols(Kt, n, S, C)  # c = K~'s
            record_draw(kept, record, chain, Kt, beta, C[0])
        chain.eta[0] = draw_eta(beta[0], settings.a_eta, settings.b_eta)  # step (b)
        chain.g[0] = draw_g(quad, n, settings.a_g, settings.b_g)
        report_sweep(t, settings.n_sweeps, n, record.move_counts)
    return s
