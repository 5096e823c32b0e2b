"""Steps (b) and (c) of ZDJ sec. 3.2 (numba), shared by the binary and the multiclass chains:
the Gibbs draws of the precisions eta and g, the random-walk move of the kernel widths theta
and the birth, death or swap move of the active set gamma, each accepted by the marginal
likelihood of :mod:`gpcbench.mcmc.active_set`.

S (m, n) holds the auxiliary columns (the binary s: m = 1; the centred multiclass S': m = J)
and ``copies`` counts the independent N(0, Q_gamma) columns among them (1, or J - 1 for the
multiclass model, ZDJ sec. 6.2, which shares gamma, eta, g and theta across the classes).
"""

from __future__ import annotations

import math

import numpy as np

from gpcbench.jit import njit
from gpcbench.mcmc.active_set import (add_column, factor_kgg, factor_upsilon, gram,
                                      log_marginal_cols, log_prior_gamma, project_cols,
                                      remove_column)
from gpcbench.mcmc.cholesky import (chol_append, chol_delete, copy_factor, dot, forward,
                                    log_det)
from gpcbench.kernels.rbf import kernel_block, kernel_column, weights

#: Counters of the chains: proposals and acceptances of birth, death, swap and theta.
MOVES = ("birth", "death", "swap", "theta")


@njit(cache=True)
def draw_precision(quad, count, a, b):
    """Ga((a + count)/2, (b + quad)/2) (shape, rate): the conjugate update of a precision
    with prior Ga(a/2, b/2) after ``count`` Gaussian coordinates of quadratic form ``quad``."""
    return np.random.gamma(0.5 * (a + count), 2.0 / (b + quad))


@njit(cache=True)
def draw_eta(u, a_eta, b_eta):
    """[eta | u] ~ Ga((a_eta + 1)/2, (b_eta + u^2)/2) (ZDJ sec. 3.2; shape, rate)."""
    return draw_precision(u * u, 1.0, a_eta, b_eta)


@njit(cache=True)
def draw_g(quad, k, a_g, b_g):
    """[g | beta] ~ Ga((a_g + n_gamma)/2, (b_g + beta' K_gammagamma beta)/2) (ZDJ sec. 3.2)."""
    return draw_precision(quad, k, a_g, b_g)


@njit(cache=True)
def draw_scales(B, k, Kgg, copies, a_eta, b_eta, a_g, b_g):
    """Step (b): (eta, g) given the coefficients B (m, k_max + 1), rows (u_j, beta_j): the
    ZDJ sec. 3.2 Gamma conditionals with ``copies`` independent rows (the multiclass B~H: J - 1
    contrasts, its class mean never entering S)."""
    uu, quad = 0.0, 0.0
    for j in range(B.shape[0]):
        uu += B[j, 0] * B[j, 0]
        for a in range(k):
            quad += B[j, a + 1] * dot(Kgg[a], B[j, 1:], k)
    return (draw_precision(uu, copies, a_eta, b_eta),
            draw_precision(quad, copies * k, a_g, b_g))


@njit(cache=True)
def move_probabilities(k, k_max):
    """(b_k, d_k) of ZDJ sec. 3.2: b_k = d_k = 0.3 for 0 < k < k_max, b_0 = 1, d_{k_max} = 1."""
    if k == 0:
        return 1.0, 0.0
    if k >= k_max:
        return 0.0, 1.0
    return 0.3, 0.3


@njit(cache=True)
def steps_b_c(X, S, B, act, pos, k, k_max, theta, bounds, params, flags, copies, eta, g,
              state, counts):
    """ZDJ sec. 3.2 steps (b) and (c) after the coefficients B were drawn: eta and g (then
    Upsilon refactorised), theta, gamma, as ``flags`` (.., update eta and g, update gamma,
    learn theta) ask. ``pos`` and ``state`` = (arrays, proposal, ld, work) as returned by
    :func:`gpcbench.mcmc.active_set.initial_state`; ``params`` as in
    :func:`gpcbench.mcmc.gkm.run_chain`. Returns the new (n_gamma, eta, g)."""
    _, _, a_eta, b_eta, a_g, b_g, a_alpha, b_alpha, jitter, theta_step = params
    arrays, proposal, ld, work = state
    Kt, G, Kgg, U, L, LK, C, Z = arrays
    ss = 0.0
    for j in range(S.shape[0]):
        ss += dot(S[j], S[j], S.shape[1])
    if flags[1]:
        eta, g = draw_scales(B, k, Kgg, copies, a_eta, b_eta, a_g, b_g)
        ld[1] = factor_upsilon(G, Kgg, k, eta, g, C, U, L, Z)
    if flags[3]:
        theta_move(X, S, ss, act, k, theta, bounds, math.sqrt(theta_step), jitter, eta, g,
                   copies, arrays, proposal, ld, counts)
    if flags[2]:
        k = gamma_move(X, weights(theta, X.shape[1]), S, ss, Kt, G, Kgg, act, pos, k, k_max,
                       eta, g, L, LK, C, Z, ld, work, (a_alpha, b_alpha, jitter, copies),
                       counts)
    return k, eta, g


@njit(cache=True)
def _random_inactive(pos):
    while True:
        j = np.random.randint(pos.shape[0])
        if pos[j] < 0:
            return j


@njit(cache=True)
def gamma_move(X, w, S, ss, Kt, G, Kgg, act, pos, k, k_max, eta, g, L, LK, C, Z, ld,
               work, hyper, counts):
    """Step (c): one birth, death or swap proposal. Returns the new n_gamma.

    S (m, n) holds the auxiliary columns (the binary s: m = 1; the centred multiclass S':
    m = J), C = K~'S and Z = L^-1 C row by row (m, k_max + 1); ``ss`` = sum_j s_j's_j.
    ``ld`` = [log|Kgg|, log|Upsilon|] (updated in place on acceptance); ``work`` holds the
    proposal's buffers; ``hyper`` = (a_alpha, b_alpha, jitter, copies), ``copies`` the number
    of independent N(0, Q_gamma) columns
    (:func:`gpcbench.mcmc.active_set.log_marginal_cols`). The move probabilities
    and the prior / proposal ratios are ZDJ sec. 3.2's for either model (ZDJ sec. 6.2 shares
    gamma across the classes).
    """
    n = X.shape[0]
    a_alpha, b_alpha, jitter, copies = hyper
    L2, LK2, C2, Z2, kj, v, kgam = work
    b_k, d_k = move_probabilities(k, k_max)
    r = np.random.random()
    kind = 0 if r < b_k else (1 if r < b_k + d_k else 2)
    counts[kind, 0] += 1
    copy_factor(L, L2, k + 1)
    copy_factor(LK, LK2, k)
    C2[:, :k + 1] = C[:, :k + 1]
    k2 = k
    m = -1
    if kind >= 1:  # death, or the death half of a swap
        m = np.random.randint(k)
        chol_delete(L2, k + 1, m + 1)
        chol_delete(LK2, k, m)
        C2[:, m + 1:k] = C[:, m + 2:k + 1]
        k2 = k - 1
    j = -1
    kjj = 0.0
    if kind != 1:  # birth, or the birth half of a swap
        j = _random_inactive(pos)
        kernel_column(X, X[j], w, kj)
        _new_column(Kt, kj, act, k, m, v, kgam)
        kjj = dot(kj, kj, n)
        if not chol_append(LK2, k2, kgam, 1.0 + jitter):
            return k
        ucol = v.copy()
        for p in range(k2):
            ucol[p + 1] += g * kgam[p]
        if not chol_append(L2, k2 + 1, ucol, kjj + g * (1.0 + jitter)):
            return k
        for q in range(S.shape[0]):
            C2[q, k2 + 1] = dot(kj, S[q], n)
        k2 += 1
    for q in range(S.shape[0]):
        forward(L2, k2 + 1, C2[q], Z2[q])
    ld_K2, ld_U2 = log_det(LK2, k2), log_det(L2, k2 + 1)
    log_ratio = (log_marginal_cols(k2, eta, g, ld_K2, ld_U2, ss, Z2, copies)
                 - log_marginal_cols(k, eta, g, ld[0], ld[1], ss, Z, copies)
                 + log_prior_gamma(k2, n, a_alpha, b_alpha)
                 - log_prior_gamma(k, n, a_alpha, b_alpha))
    if kind == 0:
        log_ratio += math.log(move_probabilities(k + 1, k_max)[1] * (n - k) / (b_k * (k + 1)))
    elif kind == 1:
        log_ratio += math.log(move_probabilities(k - 1, k_max)[0] * k / (d_k * (n - k + 1)))
    if math.log(np.random.random()) >= log_ratio:
        return k
    counts[kind, 1] += 1
    if m >= 0:
        remove_column(Kt, G, Kgg, act, pos, k, m)
    if j >= 0:
        add_column(Kt, G, Kgg, act, pos, k2 - 1, j, kj, v, kjj, kgam, jitter)
    copy_factor(L2, L, k2 + 1)
    copy_factor(LK2, LK, k2)
    C[:, :k2 + 1] = C2[:, :k2 + 1]
    Z[:, :k2 + 1] = Z2[:, :k2 + 1]
    ld[0], ld[1] = ld_K2, ld_U2
    return k2


@njit(cache=True)
def _new_column(Kt, kj, act, k, m, v, kgam):
    """v = K~'kj and kgam = kj[act] over the active set without position m (m < 0: none).
    K~ is read row by row (its rows are contiguous), then position m is dropped."""
    for p in range(k + 1):
        v[p] = 0.0
    for i in range(Kt.shape[0]):
        row, x = Kt[i], kj[i]
        for p in range(k + 1):
            v[p] += row[p] * x
    q = 0
    for p in range(k):
        if p != m:
            v[q + 1] = v[p + 1]
            kgam[q] = kj[act[p]]
            q += 1


@njit(cache=True)
def theta_move(X, S, ss, act, k, theta, bounds, step_sd, jitter, eta, g, copies, arrays,
               proposal, ld, counts):
    """Random-walk MH on theta with p(S | gamma, eta, g, theta) (ZDJ eq. 8) and uniform
    priors.

    ``arrays`` = (Kt, G, Kgg, U, L, LK, C, Z) (current state, overwritten on acceptance),
    ``proposal`` the same buffers for theta*; ``bounds`` (2, q) the uniform priors' ends;
    S, ss and ``copies`` as in :func:`gamma_move`.
    """
    counts[3, 0] += 1
    star = theta + step_sd * np.random.standard_normal(theta.shape[0])
    for l in range(theta.shape[0]):
        if star[l] <= bounds[0, l] or star[l] >= bounds[1, l]:
            return
    Kt, G, Kgg, U, L, LK, C, Z = arrays
    Kt2, G2, Kgg2, U2, L2, LK2, C2, Z2 = proposal
    kernel_block(X, act, k, weights(star, X.shape[1]), Kt2)
    gram(Kt2, k, act, jitter, G2, Kgg2)
    project_cols(Kt2, k, S, C2)
    ld_K2 = factor_kgg(Kgg2, k, LK2)
    ld_U2 = factor_upsilon(G2, Kgg2, k, eta, g, C2, U2, L2, Z2)
    log_ratio = (log_marginal_cols(k, eta, g, ld_K2, ld_U2, ss, Z2, copies)
                 - log_marginal_cols(k, eta, g, ld[0], ld[1], ss, Z, copies))
    if math.log(np.random.random()) >= log_ratio:
        return
    counts[3, 1] += 1
    theta[:] = star
    Kt[:, :k + 1] = Kt2[:, :k + 1]
    for dst, src in ((G, G2), (Kgg, Kgg2), (L, L2), (LK, LK2), (C, C2), (Z, Z2)):
        dst[:, :] = src
    ld[0], ld[1] = ld_K2, ld_U2
