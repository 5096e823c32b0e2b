"""Laplace approximation for the multiclass softmax GP (Williams & Barber 1998, W&B sec. 4,
W&B Appendix C).

Notation of GPML (Rasmussen & Williams 2006), GPML sec. 3.5 and GPML algs. 3.3-3.4. C classes,
n points;
latent values ``f`` of shape (C, n) stacked class by class (W&B eq. 13, CKP eq. 1);
one-hot targets ``Y`` (C, n); ``pi`` = softmax over classes of every column (W&B eq. 11,
CKP eqs. 6, 15); the prior covariance K = blockdiag(K_1..K_C) (W&B eq. 12, CKP eq. 3;
:class:`~gpcbench.kernels.multiclass.SoftmaxCovariance`), ``K`` of shape (C, n, n). The
likelihood Hessian is (W&B Appendix C, W&B eq. 23, CKP eqs. 16-17)

    W = D - Pi Pi^T,   D = diag(pi),   Pi = D R,   R = [I_n; ...; I_n]  (Cn x n),

singular (W 1 = 0 at every point), so nothing below forms W^-1 or any (Cn x Cn) matrix. With
B_c = I + D_c^1/2 K_c D_c^1/2 = L_c L_c^T and E_c = D_c^1/2 B_c^-1 D_c^1/2, the identities of
W&B eqs. 24-25 give (derived in the module tests against dense algebra)

    (K + W^-1)^-1 = W (I + K W)^-1 = E - E R S^-1 R^T E,   S = sum_c E_c = M M^T,
    log|I + K W| = sum_c log|B_c| + log|S|,

so a Newton step or the evidence costs C + 1 Choleskys of n x n and O(C n^3) products, not
O((Cn)^3). Newton's step (W&B Appendix A, W&B eq. 18 / W&B Appendix C; CKP eq. 13) is GPML alg. 3.3:
b = W f + Y - pi, a = b - E K b + E R S^-1 R^T E K b, f = K a. The approximate log evidence
(W&B eq. 9 in its multiclass form; GPML eq. 3.44) is

    log q(y | X, theta) = -1/2 a^T f + y^T f - sum_i log sum_c exp f_i^c - 1/2 log|I + K W|.

Its gradient follows W&B Appendix B (explicit term plus the implicit dependence of the mode on
theta, GPML eqs. 5.22-5.24 in multiclass form). Predictions: CKP eqs. 25-28 give the Gaussian
latent predictive N(mu_*, Sigma_*) with (K + W^-1)^-1 as above; class probabilities average
the softmax over draws from it (W&B sec. 4: "1000 draws"; CKP eq. 29).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg
from scipy.special import softmax
from sklearn.utils import check_random_state

from gpcbench.gaussian import cholesky_lower, inverse_from_cholesky, log_det_from_cholesky
from gpcbench.kernels.multiclass import SoftmaxCovariance
from gpcbench.likelihoods import softmax_log_likelihood

NEWTON_TOL = 1e-9  # converged when max |grad Psi| = max |y - pi - K^-1 f| < this (CKP eq. 9)
NEWTON_MAX_ITER = 100
#: Newton that can no longer raise Psi (no halved step raises it) has reached the rounding
#: floor; it is converged if max |grad Psi| is below this (a large signal variance, e.g. K_cc
#: ~ 200 on iris, puts the floor above NEWTON_TOL).
NEWTON_FLOOR_TOL = 1e-6
MAX_HALVINGS = 30  # step halvings when a full Newton step lowers Psi
MC_BATCH_VALUES = 2**22  # latent draws held in memory at once when predicting


# ------------------------------------------------------------------ block linear algebra
@dataclass(frozen=True)
class BlockFactors:
    """E_c, log|B_c| and the Cholesky factor M of S = sum_c E_c at one pi (module docstring)."""

    E: np.ndarray  # (C, n, n)
    logdet_B: float  # sum_c log|B_c|
    M: np.ndarray  # lower Cholesky factor of S (n, n)

    @property
    def logdet(self) -> float:
        """log|I + K W| = sum_c log|B_c| + log|S| (W&B eqs. 24-25)."""
        return self.logdet_B + log_det_from_cholesky(self.M)

    def solve_S(self, v) -> np.ndarray:
        """S^-1 v."""
        return linalg.cho_solve((self.M, True), v, check_finite=False)

    def half_S(self, v) -> np.ndarray:
        """M^-1 v, so that (M^-1 u)^T (M^-1 v) = u^T S^-1 v."""
        return linalg.solve_triangular(self.M, v, lower=True, check_finite=False)

    def apply_R(self, v) -> np.ndarray:
        """(K + W^-1)^-1 v = E v - E R S^-1 R^T E v for v of shape (C, n)."""
        Ev = _matvec(self.E, v)
        return Ev - self.E @ self.solve_S(Ev.sum(axis=0))


def block_factors(K, pi) -> BlockFactors:
    """The per-class factors of GPML alg. 3.3, lines 5-9 (C + 1 Choleskys of n x n)."""
    C, n = pi.shape
    E = np.empty((C, n, n))
    logdet_B = 0.0
    for c in range(C):
        sd = np.sqrt(pi[c])
        L = cholesky_lower(np.eye(n) + sd[:, None] * K[c] * sd[None, :])
        E[c] = sd[:, None] * inverse_from_cholesky(L) * sd[None, :]
        logdet_B += log_det_from_cholesky(L)
    M = cholesky_lower(E.sum(axis=0))
    return BlockFactors(E, logdet_B, M)


# ------------------------------------------------------------------ Newton mode
@dataclass(frozen=True)
class SoftmaxLaplace:
    """The Laplace approximation at the mode: q(f) = N(f, (K^-1 + W)^-1) (CKP eq. 12)."""

    f: np.ndarray  # mode, (C, n)
    a: np.ndarray  # K^-1 f, (C, n)
    pi: np.ndarray  # softmax(f), (C, n)
    factors: BlockFactors
    log_evidence: float
    converged: bool
    n_iter: int


def _psi(a, f, Y) -> float:
    """Psi = log p(y|f) - 1/2 f^T K^-1 f, up to constants (W&B Appendix C; CKP eq. 8)."""
    return softmax_log_likelihood(f, Y) - 0.5 * float(np.sum(a * f))


def _matvec(K, v) -> np.ndarray:
    """K v for block-diagonal K (C, n, n) and v (C, n)."""
    return (K @ v[:, :, None])[:, :, 0]


def newton_direction(K, Y, f, pi, factors: BlockFactors) -> np.ndarray:
    """The Newton target a_new = (K^-1 + W)^-1 (W f + y - pi) / K (GPML alg. 3.3, lines 10-12).

    CKP eq. 13 (W&B Appendix A, W&B eq. 18): f_new = (K^-1 + W)^-1 (W f + grad log p(y|f)), written
    as f_new = K a_new with a_new = b - (K + W^-1)^-1 K b.
    """
    Wf = pi * f - pi * np.sum(pi * f, axis=0)  # (D - Pi Pi^T) f, W&B eq. 23
    b = Wf + Y - pi  # CKP eq. 14: grad log p(y|f) = y - pi
    return b - factors.apply_R(_matvec(K, b))


def laplace_mode(K, Y, a0=None, *, tol=NEWTON_TOL, max_iter=NEWTON_MAX_ITER) -> SoftmaxLaplace:
    """Mode of the softmax GP posterior by Newton's method (GPML alg. 3.3).

    Parameters
    ----------
    K : ndarray of shape (C, n, n)
        Per-class prior covariances (W&B eq. 12).
    Y : ndarray of shape (C, n)
        One-hot targets.
    a0 : ndarray of shape (C, n), optional
        Warm start, f = K a0 (e.g. the previous hyperparameters' K^-1 f); default f = 0
        (W&B sec. 5: pi initialised to 1/m).
    tol : float
        Converged when max |grad Psi| < ``tol``; a step that lowers Psi is halved, and the
        iteration also stops when no halved step raises Psi (the rounding floor, where a
        step may leave Psi unchanged to the last bit: converged if max |grad Psi| <
        :data:`NEWTON_FLOOR_TOL`).
    max_iter : int
        Newton steps at most.

    Returns
    -------
    SoftmaxLaplace
        Mode, K^-1 f, pi, the block factors at the mode, log q(y|X, theta), convergence flag.
    """
    a = np.zeros_like(Y, dtype=float) if a0 is None else np.array(a0, dtype=float)
    f = _matvec(K, a)
    psi = _psi(a, f, Y)
    converged, n_iter = False, 0
    for n_iter in range(max_iter + 1):
        pi = softmax(f, axis=0)
        converged = np.max(np.abs(Y - pi - a)) < tol  # grad Psi = y - pi - K^-1 f = 0
        if converged or n_iter == max_iter:
            break
        step = newton_direction(K, Y, f, pi, block_factors(K, pi)) - a
        a_new, f_new, psi_new = _damped_step(K, Y, a, step, psi)
        if psi_new <= psi:  # no halving raised Psi: no ascent left at rounding level
            converged = np.max(np.abs(Y - pi - a)) < NEWTON_FLOOR_TOL
            break
        a, f, psi = a_new, f_new, psi_new
    factors = block_factors(K, pi)
    log_evidence = psi - 0.5 * factors.logdet  # GPML eq. 3.44 / W&B eq. 9
    return SoftmaxLaplace(f, a, pi, factors, log_evidence, bool(converged), n_iter)


def _damped_step(K, Y, a, step, psi):
    """The full Newton step, halved until Psi does not decrease (at most MAX_HALVINGS times)."""
    t = 1.0
    for _ in range(MAX_HALVINGS):
        a_new = a + t * step
        f_new = _matvec(K, a_new)
        psi_new = _psi(a_new, f_new, Y)
        if psi_new >= psi:
            break
        t *= 0.5
    return a_new, f_new, psi_new


# ------------------------------------------------------------------ posterior blocks
def posterior_point_blocks(K, state: SoftmaxLaplace) -> np.ndarray:
    """The C x C blocks V_i of V = (K^-1 + W)^-1 at every training point, shape (n, C, C).

    V = K - K (K + W^-1)^-1 K, so V_i[a, b] = delta_ab (K_a - K_a E_a K_a)_ii + (G_a^T G_b)_ii
    with G_a = M^-1 E_a K_a (O(C n^3), never (Cn)^3).
    """
    EK, G = _posterior_factors(K, state)
    own = np.einsum("cii->ci", K) - np.einsum("cij,cji->ci", K, EK)
    blocks = np.einsum("aki,bki->iab", G, G)
    blocks[:, np.arange(K.shape[0]), np.arange(K.shape[0])] += own.T
    return blocks


def posterior_class_covariances(K, state: SoftmaxLaplace) -> np.ndarray:
    """The diagonal class blocks V_cc of V = (K^-1 + W)^-1 (CKP eq. 12), shape (C, n, n)."""
    EK, G = _posterior_factors(K, state)
    return K - K @ EK + np.swapaxes(G, 1, 2) @ G


def _posterior_factors(K, state: SoftmaxLaplace):
    """E_c K_c and G_c = M^-1 E_c K_c for every class, each of shape (C, n, n)."""
    EK = state.factors.E @ K
    return EK, np.stack([state.factors.half_S(block) for block in EK])


# ------------------------------------------------------------------ evidence gradient
def evidence_gradient(X, covariance: SoftmaxCovariance, K, state: SoftmaxLaplace) -> np.ndarray:
    """d log q(y | X, theta) / d log(param) for every group, shape (n_groups, p) (W&B Appendix B).

    Explicit part: 1/2 a_c^T dK_c a_c - 1/2 tr(R_cc dK_c), R = (K + W^-1)^-1 (GPML eq. 5.23).
    Implicit part: the mode moves by df = (I + K W)^-1 dK (y - pi) (W&B Appendix B), and
    d log q / d f_i^c = -1/2 tr(V dW/df_i^c) = s2[c, i]; so it adds u^T dK a with
    u = (I + W K)^-1 s2 = s2 - R K s2. One gradient contraction per group.
    """
    factors, a = state.factors, state.a
    H = np.stack([factors.half_S(E_c) for E_c in factors.E])  # M^-1 E_c
    R_diag = factors.E - np.swapaxes(H, 1, 2) @ H  # R_cc = E_c - E_c S^-1 E_c
    u_s2 = _mode_sensitivity(K, state)
    weights = 0.5 * (a[:, :, None] * a[:, None, :] - R_diag) + u_s2[:, :, None] * a[:, None, :]
    return covariance.gradient_contraction(X, weights)


def _mode_sensitivity(K, state: SoftmaxLaplace) -> np.ndarray:
    """u = (I + W K)^-1 s2, s2 = -1/2 d log|I + K W| / d f at the mode, shape (C, n).

    With V_i the point blocks of V and dpi/df_c = pi_c (e_c - pi) at each point,
    tr(V_i dW_i/df_c) = pi_c V_cc - pi_c pi^T diag(V) - 2 pi_c (V pi)_c + 2 pi_c pi^T V pi.
    """
    pi = state.pi.T  # (n, C)
    V = posterior_point_blocks(K, state)
    Vpi = np.einsum("iab,ib->ia", V, pi)
    diagV = np.einsum("iaa->ia", V)
    trace = pi * (diagV - np.sum(pi * diagV, axis=1, keepdims=True) - 2.0 * Vpi
                  + 2.0 * np.sum(pi * Vpi, axis=1, keepdims=True))
    s2 = -0.5 * trace.T
    return s2 - state.factors.apply_R(_matvec(K, s2))


# ------------------------------------------------------------------ prediction
def latent_predictive(state: SoftmaxLaplace, cross, prior_variance, Y):
    """Mean (m, C) and covariance (m, C, C) of the latent values at m test points.

    CKP eqs. 25-26: mu_*^c = k_*^c^T (y^c - pi^c); CKP eq. 28: Sigma_* = diag(k_**) - Q_*^T
    (K + W^-1)^-1 Q_* with (K + W^-1)^-1 = E - E R S^-1 R^T E (W is singular, so CKP eq. 28's
    W^-1 is read through this identity). ``cross`` is K_c(X_*, X) of shape (C, m, n),
    ``prior_variance`` k_c(x_*, x_*) of shape (C, m).
    """
    mean = np.einsum("cmn,cn->mc", cross, Y - state.pi)
    EQ = state.factors.E @ np.swapaxes(cross, 1, 2)  # E_c K_*c, (C, n, m)
    G = np.stack([state.factors.half_S(block) for block in EQ])
    cov = np.einsum("akm,bkm->mab", G, G)
    own = prior_variance - np.einsum("cmn,cnm->cm", cross, EQ)
    C = cross.shape[0]
    cov[:, np.arange(C), np.arange(C)] += own.T
    return mean, cov


def mc_class_probabilities(mean, cov, n_draws=1000, random_state=None) -> np.ndarray:
    """E[softmax(f_*)] under N(mean, cov) by Monte Carlo (W&B sec. 4; CKP eqs. 23-29).

    One set of ``n_draws`` standard normal vectors is drawn and shared by all test points
    (common random numbers), so each point's estimate depends only on its own Gaussian and
    the seed: the same point gets the same probabilities in any batch (points are processed
    in batches of at most MC_BATCH_VALUES draws' values). Square roots of the
    C x C covariances come from their eigendecompositions (negative rounding clipped).
    """
    z = check_random_state(random_state).standard_normal((n_draws, mean.shape[1]))
    batch = max(1, MC_BATCH_VALUES // z.size)  # points per batch, bounds the draws' memory
    parts = [softmax(gaussian_draws(mean[i:i + batch], cov[i:i + batch], z), axis=2).mean(axis=1)
             for i in range(0, len(mean), batch)]
    return np.concatenate(parts)


def gaussian_draws(mean, cov, z) -> np.ndarray:
    """mean_m + cov_m^1/2 z_s for m points and S standard normal vectors, shape (m, S, C)."""
    values, vectors = np.linalg.eigh(cov)
    roots = vectors * np.sqrt(np.clip(values, 0.0, None))[:, None, :]  # (m, C, C)
    return mean[:, None, :] + z @ np.swapaxes(roots, 1, 2)
