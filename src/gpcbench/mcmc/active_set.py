"""The state of the ZDJ sampler at an active set gamma and its marginal likelihood (numba).

K~ = [1, K(X, X_gamma)] (n x (n_gamma + 1), rows contiguous), G = K~'K~, K_gammagamma (with
``jitter * I``), the Cholesky factors of K_gammagamma and of Upsilon = K~'K~ + Sigma_gamma
(ZDJ eq. 9, Sigma_gamma = diag(eta, g K_gammagamma)), C = K~'S and Z = L^-1 C for the m
auxiliary columns S (m, n). p(S | gamma, eta, g) (ZDJ eq. 8) is evaluated by ZDJ eq. 11:
s'Q^-1 s = s's - |L^-1 K~'s|^2 and log|Q| = -log eta - n_gamma log g - log|K_gammagamma|
+ log|Upsilon|, matrices of size n_gamma + 1 only. Upsilon is refactorised after eta, g or
theta change; the gamma moves (:mod:`gpcbench.mcmc.moves`) update both factors by a row.
"""

from __future__ import annotations

import math

import numpy as np

from gpcbench.jit import njit
from gpcbench.mcmc.cholesky import dot, forward, log_det
from gpcbench.kernels.rbf import kernel_block, weights
from gpcbench.mcmc.lapack import cholesky_into


@njit(cache=True)
def buffers(n, k_max, m):
    """Kt, G, Kgg, U, L, LK and the m auxiliary columns' C = K~'S, Z = L^-1 C."""
    k1 = k_max + 1
    return (np.zeros((n, k1)), np.zeros((k1, k1)), np.zeros((k_max, k_max)),
            np.zeros((k1, k1)), np.zeros((k1, k1)), np.zeros((k_max, k_max)),
            np.zeros((m, k1)), np.zeros((m, k1)))


@njit(cache=True)
def move_buffers(n, k_max, m):
    """Proposal buffers of :func:`gpcbench.mcmc.moves.gamma_move`."""
    return (np.zeros((k_max + 1, k_max + 1)), np.zeros((k_max, k_max)),
            np.zeros((m, k_max + 1)), np.zeros((m, k_max + 1)), np.zeros(n),
            np.zeros(k_max + 1), np.zeros(k_max))


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
def remove_column(Kt, G, Kgg, act, pos, k, m):
    """Drop active position m (K~ column m + 1) from the structural arrays."""
    pos[act[m]] = -1
    for p in range(m, k - 1):
        act[p] = act[p + 1]
        pos[act[p]] = p
    for i in range(Kt.shape[0]):
        for p in range(m + 1, k):
            Kt[i, p] = Kt[i, p + 1]
    _delete_sym(G, k + 1, m + 1)
    _delete_sym(Kgg, k, m)


@njit(cache=True)
def _delete_sym(A, m, q):
    for i in range(m):
        for j in range(m):
            if i != q and j != q:
                A[i - (i > q), j - (j > q)] = A[i, j]


@njit(cache=True)
def add_column(Kt, G, Kgg, act, pos, k, j, kj, v, kjj, kgam, jitter):
    """Append point j (kernel column kj, v = K~'kj, kgam = kj[act]) as active position k."""
    act[k] = j
    pos[j] = k
    for i in range(Kt.shape[0]):
        Kt[i, k + 1] = kj[i]
    for p in range(k + 1):
        G[k + 1, p] = v[p]
        G[p, k + 1] = v[p]
    G[k + 1, k + 1] = kjj
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
def factor_upsilon(G, Kgg, k, eta, g, C, U, L, Z):
    """Refactor Upsilon (ZDJ eq. 9) after eta, g or theta change; Z[j] = L^-1 C[j]. Returns
    log|Upsilon|."""
    build_upsilon(G, Kgg, k, eta, g, U)
    if not cholesky_into(U, L, k + 1):
        raise ValueError("Upsilon is not positive definite; raise jitter")
    for j in range(C.shape[0]):
        forward(L, k + 1, C[j], Z[j])
    return log_det(L, k + 1)


@njit(cache=True)
def factor_kgg(Kgg, k, LK):
    """Refactor K_gammagamma (at the start and after theta changes; the gamma moves update its
    factor). Returns log|K_gammagamma|."""
    if not cholesky_into(Kgg, LK, k):
        raise ValueError("K_gammagamma is not positive definite; raise jitter")
    return log_det(LK, k)


@njit(cache=True)
def log_marginal_cols(k, eta, g, ld_K, ld_U, ss, Z, copies):
    """log p(S | gamma, eta, g) (ZDJ eqs. 8 and 11) for the columns Z[j] = L^-1 K~'s_j,
    sum_j s_j's_j = ss.

    ``copies`` independent N(0, Q_gamma) columns: the binary s (1), or the J - 1 orthonormal
    contrasts of the centred multiclass S (ZDJ sec. 6.2, S ~ N_{n,J}(0, Q_gamma x H)), whose
    quadratic form tr(S'Q^-1 S) is the sum over the J centred class columns. Without the
    -n copies/2 log(2 pi).
    """
    log_det_q = -math.log(eta) - k * math.log(g) - ld_K + ld_U
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


@njit(cache=True)
def initial_state(X, S, act, k, theta, k_max, eta, g, jitter, learn_theta):
    """The state at the initial active set act[:k]: pos (point -> active position or -1),
    arrays = (Kt, G, Kgg, U, L, LK, C, Z) (:func:`buffers`), the theta move's proposal
    buffers (``learn_theta``), ld = [log|K_gammagamma|, log|Upsilon|] and the gamma move's
    buffers (:func:`move_buffers`)."""
    n, m = X.shape[0], S.shape[0]
    pos = np.full(n, -1)
    for q in range(k):
        pos[act[q]] = q
    arrays = buffers(n, k_max, m)
    Kt, G, Kgg, U, L, LK, C, Z = arrays
    proposal = buffers(n if learn_theta else 1, k_max, m)
    kernel_block(X, act, k, weights(theta, X.shape[1]), Kt)
    gram(Kt, k, act, jitter, G, Kgg)
    project_cols(Kt, k, S, C)
    ld = np.empty(2)
    ld[0] = factor_kgg(Kgg, k, LK)
    ld[1] = factor_upsilon(G, Kgg, k, eta, g, C, U, L, Z)
    return pos, arrays, proposal, ld, move_buffers(n, k_max, m)
