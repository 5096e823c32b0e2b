"""The state of the ZDJ sampler at an active set gamma and its marginal likelihood (numba).

K~ = [1, K(X, X_gamma)] (n x (n_gamma + 1), rows contiguous), G = K~'K~, K_gammagamma (with
``jitter * I``), the Cholesky factors of K_gammagamma and of Upsilon = K~'K~ + Sigma_gamma
(ZDJ eq. 9, Sigma_gamma = diag(eta, g K_gammagamma)), C = K~'S and Z = L^-1 C for the m
auxiliary columns S (m, n). p(S | gamma, eta, g) (ZDJ eq. 8) is evaluated by ZDJ eq. 11:
s'Q^-1 s = s's - |L^-1 K~'s|^2 and log|Q| = -log eta - n_gamma log g - log|K_gammagamma|
+ log|Upsilon|, matrices of size n_gamma + 1 only. Upsilon is refactorised after eta, g or
theta change; the gamma moves (:mod:`gpcbench.mcmc.moves`) update both factors by a row.
These matrices are a :class:`Factors`, the chain's unknowns a :class:`ChainState`, and what
the moves keep besides (positions, proposals) a :class:`Workspace`.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from gpcbench.jit import njit
from gpcbench.mcmc.cholesky import dot, forward, log_det
from gpcbench.kernels.rbf import kernel_block, weights
from gpcbench.mcmc.lapack import cholesky_into

ChainState = namedtuple("ChainState", ("active", "n_active", "theta", "eta", "g"))
ChainState.__doc__ = """The unknowns of ZDJ sec. 3.1 a sweep updates besides s and beta~, in
place: the active set gamma as indices ``active[:n_active[0]]`` (capacity k_max =
``active.size``), the kernel widths ``theta``, and the precisions ``eta[0]`` (of u) and
``g[0]`` (Silverman's g-prior)."""


def chain_state(active, n_active, theta, eta=1.0, g=1.0):
    """A :class:`ChainState` with the types the compiled chains are specialised for: the
    active indices in ``active[:n_active]`` (its length the capacity k_max), the widths
    ``theta`` (both used in place when already int64 / float64) and the precisions."""
    return ChainState(np.asarray(active, dtype=np.int64), np.array([n_active], dtype=np.int64),
                      np.asarray(theta, dtype=np.float64), np.array([float(eta)]),
                      np.array([float(g)]))


Factors = namedtuple("Factors", ("design", "design_gram", "kernel", "upsilon", "upsilon_factor",
                                 "kernel_factor", "projections", "whitened", "log_det_kernel",
                                 "log_det_upsilon"))
Factors.__doc__ = """The sampler's matrices at an active set (module docstring): K~ (``design``,
n x (k_max + 1)), G = K~'K~, K_gammagamma + jitter I (``kernel``), Upsilon (ZDJ eq. 9) and the
Cholesky factors L of Upsilon and LK of K_gammagamma, C = K~'S (``projections``) and
Z = L^-1 C (``whitened``) row by row (m, k_max + 1), and log|K_gammagamma|, log|Upsilon|
(1-element arrays)."""

Workspace = namedtuple("Workspace", ("factors", "position", "theta_proposal", "gamma_proposal",
                                     "copies"))
Workspace.__doc__ = """What the moves keep beside the :class:`ChainState`: its :class:`Factors`,
``position`` (point -> active position, or -1), the theta move's proposal :class:`Factors`, the
gamma move's :class:`GammaProposal`, and ``copies``, the number of independent N(0, Q_gamma)
columns of S (1, or J - 1 for the multiclass model, ZDJ sec. 6.2; :func:`log_marginal_cols`)."""

GammaProposal = namedtuple("GammaProposal", ("factors", "kernel_column", "design_product",
                                             "active_kernel_column"))
GammaProposal.__doc__ = """Buffers of a birth, death or swap proposal
(:func:`gpcbench.mcmc.moves.gamma_move`): the proposed :class:`Factors` (only L, LK, C, Z and
the log determinants: the move updates them by a row), the new point's kernel column k_j
(n), v = K~'k_j (k_max + 1) and k_j over the active set (k_max)."""


@njit(cache=True)
def allocate_factors(n, k_max, m):
    """Zeroed :class:`Factors` for n points, capacity k_max and m auxiliary columns."""
    k1 = k_max + 1
    return Factors(np.zeros((n, k1)), np.zeros((k1, k1)), np.zeros((k_max, k_max)),
                   np.zeros((k1, k1)), np.zeros((k1, k1)), np.zeros((k_max, k_max)),
                   np.zeros((m, k1)), np.zeros((m, k1)), np.zeros(1), np.zeros(1))


@njit(cache=True)
def allocate_gamma_proposal(n, k_max, m):
    """Zeroed :class:`GammaProposal` (its K~, G, K_gammagamma and Upsilon empty)."""
    k1 = k_max + 1
    factors = Factors(np.zeros((0, k1)), np.zeros((0, k1)), np.zeros((0, k_max)),
                      np.zeros((0, k1)), np.zeros((k1, k1)), np.zeros((k_max, k_max)),
                      np.zeros((m, k1)), np.zeros((m, k1)), np.zeros(1), np.zeros(1))
    return GammaProposal(factors, np.zeros(n), np.zeros(k1), np.zeros(k_max))


@njit(cache=True)
def gram(Kt, k, act, jitter, G, Kgg):
    """G = K~'K~ and Kgg = K_gammagamma + jitter I from K~ (K~ read row by row)."""
    G[:k + 1, :k + 1] = 0.0
    for i in range(Kt.shape[0]):
        row = Kt[i]
        for a in range(k + 1):
            x = row[a]
            for b in range(a + 1):
                G[a, b] += x * row[b]
    for a in range(k + 1):
        for b in range(a):
            G[b, a] = G[a, b]
    for a in range(k):
        for b in range(k):
            Kgg[a, b] = Kt[act[a], b + 1]
        Kgg[a, a] += jitter


@njit(cache=True)
def project_cols(Kt, k, S, C):
    """C[j, a] = K~[:, a]'s_j for a <= k: the sufficient statistics K~'S (K~ read by rows)."""
    C[:, :k + 1] = 0.0
    for i in range(Kt.shape[0]):
        row = Kt[i]
        for j in range(S.shape[0]):
            x = S[j, i]
            for a in range(k + 1):
                C[j, a] += row[a] * x


@njit(cache=True)
def remove_column(factors, chain, position, k, m):
    """Drop active position m (K~ column m + 1) of the k active points from K~, G,
    K_gammagamma and the chain's active set."""
    act, Kt = chain.active, factors.design
    position[act[m]] = -1
    for p in range(m, k - 1):
        act[p] = act[p + 1]
        position[act[p]] = p
    for i in range(Kt.shape[0]):
        for p in range(m + 1, k):
            Kt[i, p] = Kt[i, p + 1]
    _delete_sym(factors.design_gram, k + 1, m + 1)
    _delete_sym(factors.kernel, k, m)


@njit(cache=True)
def _delete_sym(A, m, q):
    for i in range(m):
        for j in range(m):
            if i != q and j != q:
                A[i - (i > q), j - (j > q)] = A[i, j]


@njit(cache=True)
def add_column(factors, chain, position, k, j, proposal, jitter):
    """Append point j as active position k to K~, G, K_gammagamma and the chain's active set,
    from the :class:`GammaProposal`'s k_j, v = K~'k_j and k_j over the active set."""
    Kt, G, Kgg = factors.design, factors.design_gram, factors.kernel
    kj, v, kgam = proposal.kernel_column, proposal.design_product, proposal.active_kernel_column
    chain.active[k] = j
    position[j] = k
    for i in range(Kt.shape[0]):
        Kt[i, k + 1] = kj[i]
    for p in range(k + 1):
        G[k + 1, p] = v[p]
        G[p, k + 1] = v[p]
    G[k + 1, k + 1] = dot(kj, kj, Kt.shape[0])
    for p in range(k):
        Kgg[k, p] = kgam[p]
        Kgg[p, k] = kgam[p]
    Kgg[k, k] = 1.0 + jitter


@njit(cache=True)
def build_upsilon(G, Kgg, k, eta, g, U):
    """Upsilon = K~'K~ + Sigma_gamma (ZDJ eq. 9) into U[:k+1, :k+1]."""
    for i in range(k + 1):
        for j in range(i + 1):
            U[i, j] = G[i, j]
    U[0, 0] += eta
    for i in range(k):
        for j in range(i + 1):
            U[i + 1, j + 1] += g * Kgg[i, j]


@njit(cache=True)
def factor_upsilon(factors, k, eta, g):
    """Refactor Upsilon (ZDJ eq. 9) after eta, g or theta change, Z[j] = L^-1 C[j] and
    log|Upsilon|."""
    U, L, Z = factors.upsilon, factors.upsilon_factor, factors.whitened
    build_upsilon(factors.design_gram, factors.kernel, k, eta, g, U)
    if not cholesky_into(U, L, k + 1):
        raise ValueError("Upsilon is not positive definite; raise jitter")
    for j in range(Z.shape[0]):
        forward(L, k + 1, factors.projections[j], Z[j])
    factors.log_det_upsilon[0] = log_det(L, k + 1)


@njit(cache=True)
def factor_kernel(factors, k):
    """Refactor K_gammagamma and log|K_gammagamma| (at the start and after theta changes; the
    gamma moves update its factor)."""
    if not cholesky_into(factors.kernel, factors.kernel_factor, k):
        raise ValueError("K_gammagamma is not positive definite; raise jitter")
    factors.log_det_kernel[0] = log_det(factors.kernel_factor, k)


@njit(cache=True)
def log_marginal_cols(factors, k, eta, g, ss, copies):
    """log p(S | gamma, eta, g) (ZDJ eqs. 8 and 11) from the :class:`Factors` at k active
    points (Z[j] = L^-1 K~'s_j and the log determinants), sum_j s_j's_j = ss.

    ``copies`` independent N(0, Q_gamma) columns: the binary s (1), or the J - 1 orthonormal
    contrasts of the centred multiclass S (ZDJ sec. 6.2, S ~ N_{n,J}(0, Q_gamma x H)), whose
    quadratic form tr(S'Q^-1 S) is the sum over the J centred class columns. Without the
    -n copies/2 log(2 pi).
    """
    log_det_q = (-math.log(eta) - k * math.log(g) - factors.log_det_kernel[0]
                 + factors.log_det_upsilon[0])
    Z = factors.whitened
    zz = 0.0
    for j in range(Z.shape[0]):
        zz += dot(Z[j], Z[j], k + 1)
    return -0.5 * copies * log_det_q - 0.5 * (ss - zz)


@njit(cache=True)
def log_prior_gamma(k, n, a_alpha, b_alpha):
    """log p(gamma) of ZDJ eq. 10 up to the constant -log Be(a_alpha, b_alpha).

    a_alpha = b_alpha = inf is the limit alpha = 1/2 (Beta(a, a) -> a point mass as a grows):
    p(gamma) = 2^-n for every gamma, returned as 0 (the estimators' ``gamma_prior='flat'``).
    """
    if math.isinf(a_alpha):
        return 0.0
    return (math.lgamma(k + a_alpha) + math.lgamma(n - k + b_alpha)
            - math.lgamma(n + a_alpha + b_alpha))


# inlined into its caller by numba (no compiled function of its own: less first-call compile time)
@njit(cache=True, inline="always")
def fill_factors(X, S, chain, theta, jitter, factors):
    """The :class:`Factors` at the chain's active set and precisions for the widths theta."""
    k, act = chain.n_active[0], chain.active
    kernel_block(X, act, k, weights(theta, X.shape[1]), factors.design)
    gram(factors.design, k, act, jitter, factors.design_gram, factors.kernel)
    project_cols(factors.design, k, S, factors.projections)
    factor_kernel(factors, k)
    factor_upsilon(factors, k, chain.eta[0], chain.g[0])


@njit(cache=True)
def initial_state(X, S, chain, jitter, learn_theta, copies):
    """The :class:`Workspace` of the chain at its initial active set (the theta move's
    proposal buffers full-sized when ``learn_theta``)."""
    n, m, k_max = X.shape[0], S.shape[0], chain.active.shape[0]
    position = np.full(n, -1)
    for q in range(chain.n_active[0]):
        position[chain.active[q]] = q
    factors = allocate_factors(n, k_max, m)
    fill_factors(X, S, chain, chain.theta, jitter, factors)
    return Workspace(factors, position, allocate_factors(n if learn_theta else 1, k_max, m),
                     allocate_gamma_proposal(n, k_max, m), copies)
