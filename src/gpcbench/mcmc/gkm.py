"""Reversible-jump MCMC for Bayesian generalized kernel models (Zhang, Dai & Jordan 2011).

Model (section 3.1): probit data augmentation s = u 1 + K_gamma beta_gamma + e, e ~ N(0, I);
beta~_gamma = (u, beta_gamma')' ~ N(0, Sigma_gamma^-1) with Sigma_gamma = diag(eta, g K_gammagamma)
(Silverman's g-prior on the active set gamma), g ~ Ga(a_g/2, b_g/2), eta ~ Ga(a_eta/2, b_eta/2)
(shape, rate), the Beta-Bernoulli prior (10) on gamma and uniform priors on the kernel widths.
K(x, x') = exp(-sum_l (x_l - x'_l)^2 / theta_l^2) (sections 3.1 and 5.3). K_gammagamma carries a
jitter ``jitter * I`` wherever it appears (Sigma_gamma, the g update, SGPC's predictive), so
that duplicated inputs (a singular K, the paper's Moore-Penrose case) keep the factors finite.

One sweep (section 3.2), all in :func:`run_chain` (numba, no Python per sweep):

(a) s by Holmes & Held's marginal Gibbs update (appendix A, algorithm 1), then
    beta~ ~ N(Upsilon^-1 K~' s, Upsilon^-1) (eq. 9). With Upsilon = L L' the loop is run in
    whitened coordinates: w_i = L^-1 K~_i', H_ii = |w_i|^2, K~_i b = w_i' z for z = L^-1 K~' s,
    and algorithm 1's b <- b + (s_i - a) A(:, i) becomes z <- z + (s_i - a) w_i; so no n x n
    matrix is formed and beta~ = L'^-T (z + eps). W = L^-1 K~' (n x (n_gamma + 1)) is formed
    once per sweep by one BLAS-3 triangular solve (:mod:`gpcbench.mcmc.lapack`), leaving
    O(n_gamma) work per point in the sequential loop.
(b) eta | u, g | beta_gamma by Gibbs (the two Gamma conditionals of section 3.2); theta by
    a Gaussian random walk (variance ``theta_step``) accepted with p(s | gamma, eta, g, theta*)
    / p(s | gamma, eta, g, theta) (eq. 8).
(c) gamma by a birth, death or swap move with the acceptance ratios of section 3.2, b_k = d_k
    = 0.3 for 0 < k < k_max, b_0 = 1, d_{k_max} = 1.

p(s | gamma, eta, g) (eq. 8) is evaluated by eq. 11: s'Q^-1 s = s's - |L^-1 K~' s|^2 and
log|Q| = -log eta - n_gamma log g - log|K_gammagamma| + log|Upsilon|, matrices of size
n_gamma + 1 only. A move appends a row to the Cholesky factors of Upsilon and K_gammagamma
(:func:`chol_append`) or deletes one by a rank-one update of the trailing block
(:func:`chol_delete`): O(n_gamma^2) per proposal plus O(n n_gamma) for the new kernel column.
Upsilon is refactorised once per sweep, after g and eta change (K_gammagamma's factor only
changes with gamma and theta).

Multiclass (section 6.2, :func:`run_chain_multi`): J classes, S = (K~ B~ + E) H (eq. 13) with
the centring H = I - 11'/J, so every row of S sums to zero and y_i = argmax_j s_ij; one active
set gamma for all classes, B~'s columns independent N(0, Sigma_gamma^-1) with the shared eta, g.
For any orthonormal basis V of the centred subspace, S V = K~ (B~V) + E V is J - 1 independent
copies of the binary model; hence (choices where the paper only says "apply section 3.2"):
p(S | gamma) = prod of J - 1 eq.-8 densities (|Q|^-(J-1)/2 exp(-tr S'Q^-1 S / 2)), used by the
gamma and theta moves unchanged otherwise (``copies`` = J - 1); eta | u and g | B~H are the
section 3.2 Gamma conditionals with J - 1 contrasts (the class mean of B~ never enters S; its
posterior is its prior); step (a) is Holmes-Held's marginal update applied to each row of S,
N(mu_i, (1 + r) H) on the cone {s_iy_i > s_il}, sampled by one pass of the paper's univariate
truncated normals (:func:`cone_row`) -- the paper states them conditionally on beta (variance
1); here beta~ is integrated out as in section 3.2's step (a). Predictions: the probit argmax
probability by Gauss-Hermite quadrature (:func:`argmax_probability`).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from gpcbench.mcmc.lapack import cholesky_into, solve_lower_rows

#: Counters of ``run_chain``: proposals and acceptances of birth, death, swap and theta.
MOVES = ("birth", "death", "swap", "theta")


@njit(cache=True, fastmath=True)
def _dot(a, b, m):
    acc = 0.0
    for j in range(m):
        acc += a[j] * b[j]
    return acc


@njit(cache=True)
def forward(L, m, b, out):
    """Solve L[:m, :m] out = b[:m] (forward substitution)."""
    for r in range(m):
        out[r] = (b[r] - _dot(L[r], out, r)) / L[r, r]


@njit(cache=True)
def backward_t(L, m, b, out):
    """Solve L[:m, :m]' out = b[:m] (back substitution with the transpose)."""
    for r in range(m - 1, -1, -1):
        acc = b[r]
        for j in range(r + 1, m):
            acc -= L[j, r] * out[j]
        out[r] = acc / L[r, r]


@njit(cache=True)
def chol_append(L, m, v, c):
    """Grow the factor of A (m x m) to that of [[A, v], [v', c]]; False if not PD."""
    forward(L, m, v, L[m])
    d2 = c - _dot(L[m], L[m], m)
    if d2 <= 0.0:
        return False
    L[m, m] = math.sqrt(d2)
    return True


@njit(cache=True)
def chol_delete(L, m, q):
    """Factor of A (m x m) with row and column q removed, in L[:m-1, :m-1].

    With L = [[L11, 0, 0], [l21', l22, 0], [L31, l32, L33]] the new factor is
    [[L11, 0], [L31, T]] where T T' = L33 L33' + l32 l32' (a rank-one Cholesky update).
    """
    x = np.empty(m - q - 1)
    for i in range(q + 1, m):
        x[i - q - 1] = L[i, q]
        for j in range(q):
            L[i - 1, j] = L[i, j]
        for j in range(q + 1, i + 1):
            L[i - 1, j - 1] = L[i, j]
    for t in range(m - q - 1):
        d = q + t
        r = math.hypot(L[d, d], x[t])
        cs = r / L[d, d]
        sn = x[t] / L[d, d]
        L[d, d] = r
        for i in range(t + 1, m - q - 1):
            L[q + i, d] = (L[q + i, d] + sn * x[i]) / cs
            x[i] = cs * x[i] - sn * L[q + i, d]


@njit(cache=True)
def rbf_value(a, b, w):
    """K(a, b) = exp(-sum_l w_l (a_l - b_l)^2), w_l = 1 / theta_l^2."""
    acc = 0.0
    for l in range(a.shape[0]):
        d = a[l] - b[l]
        acc += w[l] * d * d
    return math.exp(-acc)


@njit(cache=True)
def kernel_column(X, xj, w, out):
    """out_i = K(X_i, xj) for every row i of X."""
    for i in range(X.shape[0]):
        out[i] = rbf_value(X[i], xj, w)


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
def draw_precision(quad, count, a, b):
    """Ga((a + count)/2, (b + quad)/2) (shape, rate): the conjugate update of a precision
    with prior Ga(a/2, b/2) after ``count`` Gaussian coordinates of quadratic form ``quad``."""
    return np.random.gamma(0.5 * (a + count), 2.0 / (b + quad))


@njit(cache=True)
def draw_eta(u, a_eta, b_eta):
    """[eta | u] ~ Ga((a_eta + 1)/2, (b_eta + u^2)/2) (section 3.2; shape, rate)."""
    return draw_precision(u * u, 1.0, a_eta, b_eta)


@njit(cache=True)
def draw_g(quad, k, a_g, b_g):
    """[g | beta] ~ Ga((a_g + n_gamma)/2, (b_g + beta' K_gammagamma beta)/2) (section 3.2)."""
    return draw_precision(quad, k, a_g, b_g)


@njit(cache=True)
def whiten(Kt, k1, L, W):
    """W[i, :k1] = L^-1 K~_i' for every point i (one triangular solve, BLAS-3); appendix A's
    leverage H(i, i) = |W[i, :k1]|^2."""
    n = Kt.shape[0]
    W[:, :k1] = Kt[:, :k1]
    solve_lower_rows(L, k1, W, n)


@njit(cache=True)
def holmes_held(Kt, k1, L, W, z, s, y):
    """Appendix A, algorithm 1 in whitened coordinates (see the module docstring)."""
    whiten(Kt, k1, L, W)
    for i in range(s.shape[0]):
        w = W[i]
        h = _dot(w, w, k1)
        ratio = h / (1.0 - h)
        mean = (1.0 + ratio) * _dot(w, z, k1) - ratio * s[i]
        new = truncated_normal(mean, math.sqrt(1.0 + ratio), y[i] > 0)
        delta = new - s[i]
        s[i] = new
        for j in range(k1):
            z[j] += delta * w[j]


@njit(cache=True)
def log_det(L, m):
    acc = 0.0
    for i in range(m):
        acc += math.log(L[i, i])
    return 2.0 * acc


@njit(cache=True)
def log_marginal_cols(k, eta, g, ld_K, ld_U, ss, Z, copies):
    """log p(S | gamma, eta, g) for the columns Z[j] = L^-1 K~'s_j, sum_j s_j's_j = ss.

    ``copies`` independent N(0, Q_gamma) columns: the binary s (1), or the J - 1 orthonormal
    contrasts of the centred multiclass S (section 6.2, S ~ N_{n,J}(0, Q_gamma x H)), whose
    quadratic form tr(S'Q^-1 S) is the sum over the J centred class columns. Without the
    -n copies/2 log(2 pi).
    """
    log_det_q = -math.log(eta) - k * math.log(g) - ld_K + ld_U
    zz = 0.0
    for j in range(Z.shape[0]):
        zz += _dot(Z[j], Z[j], k + 1)
    return -0.5 * copies * log_det_q - 0.5 * (ss - zz)


@njit(cache=True)
def log_prior_gamma(k, n, a_alpha, b_alpha):
    """log p(gamma) of eq. 10 up to the constant -log Be(a_alpha, b_alpha)."""
    return (math.lgamma(k + a_alpha) + math.lgamma(n - k + b_alpha)
            - math.lgamma(n + a_alpha + b_alpha))


@njit(cache=True)
def move_probabilities(k, k_max):
    """(b_k, d_k) of section 3.2."""
    if k == 0:
        return 1.0, 0.0
    if k >= k_max:
        return 0.0, 1.0
    return 0.3, 0.3


@njit(cache=True)
def build_upsilon(G, Kgg, k, eta, g, U):
    """Upsilon = K~'K~ + Sigma_gamma (eq. 9) into U[:k+1, :k+1]."""
    for i in range(k + 1):
        for j in range(i + 1):
            U[i, j] = G[i, j]
    U[0, 0] += eta
    for i in range(k):
        for j in range(i + 1):
            U[i + 1, j + 1] += g * Kgg[i, j]


@njit(cache=True)
def factor_upsilon(G, Kgg, k, eta, g, C, U, L, Z):
    """Refactor Upsilon (eq. 9) after eta, g or theta change; Z[j] = L^-1 C[j]. Returns
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
def _random_inactive(pos):
    while True:
        j = np.random.randint(pos.shape[0])
        if pos[j] < 0:
            return j


@njit(cache=True)
def _copy_factor(src, dst, m):
    for i in range(m):
        for j in range(i + 1):
            dst[i, j] = src[i, j]


@njit(cache=True)
def gamma_move(X, w, S, ss, Kt, G, Kgg, act, pos, k, k_max, eta, g, L, LK, C, Z, ld,
               work, hyper, counts):
    """Step (c): one birth, death or swap proposal. Returns the new n_gamma.

    S (m, n) holds the auxiliary columns (the binary s: m = 1; the centred multiclass S':
    m = J), C = K~'S and Z = L^-1 C row by row (m, k_max + 1); ``ss`` = sum_j s_j's_j.
    ``ld`` = [log|Kgg|, log|Upsilon|] (updated in place on acceptance); ``work`` holds the
    proposal's buffers; ``hyper`` = (a_alpha, b_alpha, jitter, copies), ``copies`` the number
    of independent N(0, Q_gamma) columns (:func:`log_marginal_cols`). The move probabilities
    and the prior / proposal ratios are section 3.2's for either model (section 6.2 shares
    gamma across the classes).
    """
    n = X.shape[0]
    a_alpha, b_alpha, jitter, copies = hyper
    L2, LK2, C2, Z2, kj, v, kgam = work
    b_k, d_k = move_probabilities(k, k_max)
    r = np.random.random()
    kind = 0 if r < b_k else (1 if r < b_k + d_k else 2)
    counts[kind, 0] += 1
    _copy_factor(L, L2, k + 1)
    _copy_factor(LK, LK2, k)
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
        kjj = _dot(kj, kj, n)
        if not chol_append(LK2, k2, kgam, 1.0 + jitter):
            return k
        ucol = v.copy()
        for p in range(k2):
            ucol[p + 1] += g * kgam[p]
        if not chol_append(L2, k2 + 1, ucol, kjj + g * (1.0 + jitter)):
            return k
        for q in range(S.shape[0]):
            C2[q, k2 + 1] = _dot(kj, S[q], n)
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
    _copy_factor(L2, L, k2 + 1)
    _copy_factor(LK2, LK, k2)
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
def kernel_block(X, act, k, w, Kt):
    """K~ = [1, K(X, X[act])] into Kt[:, :k+1], row by row."""
    for i in range(X.shape[0]):
        Kt[i, 0] = 1.0
        for p in range(k):
            Kt[i, p + 1] = rbf_value(X[i], X[act[p]], w)


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
def _weights(theta, p):
    """w_l = 1 / theta_l^2 for every feature (one shared theta or one per feature)."""
    w = np.empty(p)
    for l in range(p):
        th = theta[0] if theta.shape[0] == 1 else theta[l]
        w[l] = 1.0 / (th * th)
    return w


@njit(cache=True)
def theta_move(X, S, ss, act, k, theta, bounds, step_sd, jitter, eta, g, copies, arrays,
               proposal, ld, counts):
    """Random-walk MH on theta with p(S | gamma, eta, g, theta) (eq. 8) and uniform priors.

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
    kernel_block(X, act, k, _weights(star, X.shape[1]), Kt2)
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


@njit(cache=True)
def _buffers(n, k_max, m):
    """Kt, G, Kgg, U, L, LK and the m auxiliary columns' C = K~'S, Z = L^-1 C."""
    k1 = k_max + 1
    return (np.zeros((n, k1)), np.zeros((k1, k1)), np.zeros((k_max, k_max)),
            np.zeros((k1, k1)), np.zeros((k1, k1)), np.zeros((k_max, k_max)),
            np.zeros((m, k1)), np.zeros((m, k1)))


@njit(cache=True)
def _work(n, k_max, m):
    """Proposal buffers of :func:`gamma_move`."""
    return (np.zeros((k_max + 1, k_max + 1)), np.zeros((k_max, k_max)),
            np.zeros((m, k_max + 1)), np.zeros((m, k_max + 1)), np.zeros(n),
            np.zeros(k_max + 1), np.zeros(k_max))


@njit(cache=True)
def _record(t, Kt, k, act, beta, theta, eta, g, c, probe, out):
    trace, kept_act, kept_coef, kept_c, kept_theta, kept_hyp, kept_probe = out
    kept_act[t, :] = -1
    kept_act[t, :k] = act[:k]
    kept_coef[t, :] = 0.0
    kept_coef[t, :k + 1] = beta[:k + 1]
    kept_c[t, :] = 0.0
    kept_c[t, :k + 1] = c[:k + 1]
    kept_theta[t, :] = theta
    kept_hyp[t, 0], kept_hyp[t, 1] = g, eta
    for q in range(probe.shape[0]):
        f = _dot(Kt[probe[q]], beta, k + 1)
        kept_probe[t, q] = 0.5 * math.erfc(-f / math.sqrt(2.0))


@njit(cache=True)
def run_chain(X, y, s, act, k, theta, bounds, params, k_max, flags, schedule, probe, seed,
              out, counts):
    """Run one chain of the section 3.2 sampler; returns the final s.

    Parameters
    ----------
    X : (n, p) inputs; y : (n,) labels in {0, 1}; s : (n,) initial auxiliaries (updated).
    act : (k_max,) int, initial active indices in act[:k]; theta : (q,) kernel widths (updated).
    bounds : (2, q) uniform-prior ends for theta.
    params : eta, g, a_eta, b_eta, a_g, b_g, a_alpha, b_alpha, jitter, theta_step (variance).
    flags : update s (step a), update eta and g, update gamma (step c), learn theta.
    schedule : n_sweeps, burn_in, thin; sweep t is kept when t >= burn_in and
        (t + 1 - burn_in) % thin == 0.
    probe : int indices of training points whose Phi(u + k_i' beta) is recorded.
    out : trace (n_sweeps, 4) [u, g, eta, n_gamma] and, per kept sweep, the active indices
        (-1 padded), beta~ = (u, beta), c = K~'s, theta, (g, eta) and the probe probabilities.
    counts : (4, 2) proposals / acceptances of birth, death, swap, theta.
    """
    np.random.seed(seed)
    n, p = X.shape
    eta, g, a_eta, b_eta, a_g, b_g, a_alpha, b_alpha, jitter, theta_step = params
    n_sweeps, burn_in, thin = schedule
    pos = np.full(n, -1)
    for q in range(k):
        pos[act[q]] = q
    Kt, G, Kgg, U, L, LK, C, Z = _buffers(n, k_max, 1)
    c, z, S = C[0], Z[0], s.reshape((1, n))  # one auxiliary column, viewed as in the moves
    proposal = _buffers(n if flags[3] else 1, k_max, 1)
    kernel_block(X, act, k, _weights(theta, p), Kt)
    gram(Kt, k, act, jitter, G, Kgg)
    project_cols(Kt, k, S, C)
    ld = np.empty(2)
    ld[0] = factor_kgg(Kgg, k, LK)
    ld[1] = factor_upsilon(G, Kgg, k, eta, g, C, U, L, Z)
    work = _work(n, k_max, 1)
    W, w_row, beta = np.zeros((n, k_max + 1)), np.zeros(k_max + 1), np.zeros(k_max + 1)
    hyper = (a_alpha, b_alpha, jitter, 1.0)
    for t in range(n_sweeps):
        if flags[0]:  # step (a): Holmes-Held, then c = K~'s = L z
            holmes_held(Kt, k + 1, L, W, z, s, y)
            for r in range(k + 1):
                c[r] = _dot(L[r], z, r + 1)
        for r in range(k + 1):  # beta~ ~ N(L'^-1 z, Upsilon^-1) (eq. 9)
            w_row[r] = z[r] + np.random.standard_normal()
        backward_t(L, k + 1, w_row, beta)
        out[0][t, 0], out[0][t, 1], out[0][t, 2], out[0][t, 3] = beta[0], g, eta, k
        kept = t - burn_in
        if kept >= 0 and (kept + 1) % thin == 0:
            _record(kept // thin, Kt, k, act, beta, theta, eta, g, c, probe, out)
        ss = _dot(s, s, n)
        if flags[1]:  # step (b): eta | u, g | beta, then refactor Upsilon
            eta = draw_eta(beta[0], a_eta, b_eta)
            quad = 0.0
            for a in range(k):
                quad += beta[a + 1] * _dot(Kgg[a], beta[1:], k)
            g = draw_g(quad, k, a_g, b_g)
            ld[1] = factor_upsilon(G, Kgg, k, eta, g, C, U, L, Z)
        if flags[3]:
            theta_move(X, S, ss, act, k, theta, bounds, math.sqrt(theta_step), jitter, eta, g,
                       1.0, (Kt, G, Kgg, U, L, LK, C, Z), proposal, ld, counts)
        if flags[2]:  # step (c)
            k = gamma_move(X, _weights(theta, p), S, ss, Kt, G, Kgg, act, pos, k, k_max, eta,
                           g, L, LK, C, Z, ld, work, hyper, counts)
    return s


# --- section 6.2: the multiclass model --------------------------------------------------------

SQRT2 = math.sqrt(2.0)


def gauss_hermite(n_nodes=48):
    """Nodes and weights (2, n_nodes) of E[h(Z)], Z ~ N(0, 1), by probabilists' Gauss-Hermite."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(n_nodes)
    return np.vstack([nodes, weights / math.sqrt(2.0 * math.pi)])


@njit(cache=True)
def argmax_probability(f, c, scale, nodes, weights):
    """P(argmax_l (f_l + scale e_l) = c), e ~ N(0, I_J): the multiclass probit probability
    E_z[prod_{l != c} Phi(z + (f_c - f_l) / scale)], z ~ N(0, 1), by Gauss-Hermite quadrature."""
    acc = 0.0
    for q in range(nodes.shape[0]):
        prod = weights[q]
        for l in range(f.shape[0]):
            if l != c:
                prod *= 0.5 * math.erfc(-(nodes[q] + (f[c] - f[l]) / scale) / SQRT2)
        acc += prod
    return acc


@njit(cache=True)
def add_class_probabilities(F, scale, quad, out):
    """out[i, c] += P(argmax(F[i] + scale[i] e) = c) for every row i and class c."""
    for i in range(F.shape[0]):
        for c in range(F.shape[1]):
            out[i, c] += argmax_probability(F[i], c, scale[i], quad[0], quad[1])


@njit(cache=True)
def cone_row(mu, sd, c, s_row, x):
    """Update a centred auxiliary row s_i whose conditional is N(mu, sd^2 H) (mu centred,
    H = I - 11'/J) restricted to the cone {s_ic > s_il, l != c} (section 6.2).

    The cone is invariant along 1, so x = s_i + xi 1 with a fresh xi ~ N(0, sd^2 / J) has
    the conditional N(mu, sd^2 I) on the cone, whose coordinates are the paper's univariate
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


@njit(cache=True)
def holmes_held_multi(Kt, k1, L, W, Z, S, y, mu, x, row):
    """Step (a) for the centred S (J, n): Holmes-Held's marginal update (appendix A) per row.

    The J - 1 orthonormal contrasts of S are independent N(0, Q_gamma) columns (eq. 13), so
    row i given the other rows is N(mu_i, (1 + r) H) with, column by column, algorithm 1's
    mu_ij = (1 + r) K~_i b_j - r s_ij, r = H_ii / (1 - H_ii), b_j = Upsilon^-1 K~'s_j (linear,
    hence valid on the centred class columns themselves); then the cone (:func:`cone_row`) and
    algorithm 1's b_j <- b_j + (s_ij - a) A(:, i), here Z[j] += delta_j w.
    """
    J = S.shape[0]
    whiten(Kt, k1, L, W)
    for i in range(S.shape[1]):
        w = W[i]
        h = _dot(w, w, k1)
        ratio = h / (1.0 - h)
        for j in range(J):
            mu[j] = (1.0 + ratio) * _dot(w, Z[j], k1) - ratio * S[j, i]
            row[j] = S[j, i]
        cone_row(mu, math.sqrt(1.0 + ratio), y[i], row, x)
        for j in range(J):
            delta = row[j] - S[j, i]
            S[j, i] = row[j]
            for r in range(k1):
                Z[j, r] += delta * w[r]


@njit(cache=True)
def draw_class_coefficients(L, k1, Z, noise, B):
    """B~H by rows B[j] = L'^-1 (Z[j] + e_j), e = E H, E (k1 x J) iid N(0, 1): the centred
    class coefficients, beta~_j ~ N(Upsilon^-1 K~'s_j, Upsilon^-1) per contrast (eq. 9)."""
    J = Z.shape[0]
    for r in range(k1):
        mean = 0.0
        for j in range(J):
            noise[j, r] = np.random.standard_normal()
            mean += noise[j, r]
        mean /= J
        for j in range(J):
            noise[j, r] = Z[j, r] + noise[j, r] - mean
    for j in range(J):
        backward_t(L, k1, noise[j], B[j])


@njit(cache=True)
def _record_multi(t, Kt, k, act, B, theta, eta, g, C, probe, y, quad, f, out):
    trace, kept_act, kept_coef, kept_c, kept_theta, kept_hyp, kept_probe = out
    kept_act[t, :] = -1
    kept_act[t, :k] = act[:k]
    kept_coef[t, :, :] = 0.0
    kept_coef[t, :, :k + 1] = B[:, :k + 1]
    kept_c[t, :, :] = 0.0
    kept_c[t, :, :k + 1] = C[:, :k + 1]
    kept_theta[t, :] = theta
    kept_hyp[t, 0], kept_hyp[t, 1] = g, eta
    for q in range(probe.shape[0]):
        for j in range(B.shape[0]):
            f[j] = _dot(Kt[probe[q]], B[j], k + 1)
        kept_probe[t, q] = argmax_probability(f, y[probe[q]], 1.0, quad[0], quad[1])


@njit(cache=True)
def run_chain_multi(X, y, S, act, k, theta, bounds, params, k_max, flags, schedule, probe,
                    quad, seed, out, counts):
    """Run one chain of the section 6.2 multiclass sampler; returns the final S.

    Parameters as :func:`run_chain`, except
    y : (n,) class indices 0..J-1; S : (J, n) initial centred auxiliaries S' (updated), each
        column's largest entry at its class.
    quad : (2, Q) nodes and weights of :func:`gauss_hermite` (the probe probabilities).
    out : trace (n_sweeps, J + 3) [u_1..u_J, g, eta, n_gamma] and, per kept sweep, the active
        indices (-1 padded), the centred class coefficients B~H (J, k_max + 1), C = K~'S
        (J, k_max + 1), theta, (g, eta) and the probe points' probabilities of their class.
    """
    np.random.seed(seed)
    n, p = X.shape
    J = S.shape[0]
    copies = J - 1.0  # independent contrasts of S, of B~H's rows: section 6.2's N(., . x H)
    eta, g, a_eta, b_eta, a_g, b_g, a_alpha, b_alpha, jitter, theta_step = params
    n_sweeps, burn_in, thin = schedule
    pos = np.full(n, -1)
    for q in range(k):
        pos[act[q]] = q
    Kt, G, Kgg, U, L, LK, C, Z = _buffers(n, k_max, J)
    proposal = _buffers(n if flags[3] else 1, k_max, J)
    kernel_block(X, act, k, _weights(theta, p), Kt)
    gram(Kt, k, act, jitter, G, Kgg)
    project_cols(Kt, k, S, C)
    ld = np.empty(2)
    ld[0] = factor_kgg(Kgg, k, LK)
    ld[1] = factor_upsilon(G, Kgg, k, eta, g, C, U, L, Z)
    work = _work(n, k_max, J)
    W = np.zeros((n, k_max + 1))
    B, noise = np.zeros((J, k_max + 1)), np.zeros((J, k_max + 1))
    mu, x, row, f = np.zeros(J), np.zeros(J), np.zeros(J), np.zeros(J)
    hyper = (a_alpha, b_alpha, jitter, copies)
    for t in range(n_sweeps):
        if flags[0]:  # step (a), then C = K~'S = L Z
            holmes_held_multi(Kt, k + 1, L, W, Z, S, y, mu, x, row)
            for j in range(J):
                for r in range(k + 1):
                    C[j, r] = _dot(L[r], Z[j], r + 1)
        draw_class_coefficients(L, k + 1, Z, noise, B)
        for j in range(J):
            out[0][t, j] = B[j, 0]
        out[0][t, J], out[0][t, J + 1], out[0][t, J + 2] = g, eta, k
        kept = t - burn_in
        if kept >= 0 and (kept + 1) % thin == 0:
            _record_multi(kept // thin, Kt, k, act, B, theta, eta, g, C, probe, y, quad, f,
                          out)
        ss = 0.0
        for j in range(J):
            ss += _dot(S[j], S[j], n)
        if flags[1]:  # step (b): eta | u, g | B, from the J - 1 contrasts, then refactor
            uu, quad_g = 0.0, 0.0
            for j in range(J):
                uu += B[j, 0] * B[j, 0]
                for a in range(k):
                    quad_g += B[j, a + 1] * _dot(Kgg[a], B[j, 1:], k)
            eta = draw_precision(uu, copies, a_eta, b_eta)
            g = draw_precision(quad_g, copies * k, a_g, b_g)
            ld[1] = factor_upsilon(G, Kgg, k, eta, g, C, U, L, Z)
        if flags[3]:
            theta_move(X, S, ss, act, k, theta, bounds, math.sqrt(theta_step), jitter, eta, g,
                       copies, (Kt, G, Kgg, U, L, LK, C, Z), proposal, ld, counts)
        if flags[2]:  # step (c), gamma shared by the classes
            k = gamma_move(X, _weights(theta, p), S, ss, Kt, G, Kgg, act, pos, k, k_max, eta,
                           g, L, LK, C, Z, ld, work, hyper, counts)
    return S
