"""Nested EP for multiclass GP classification with the multinomial probit likelihood
(Riihimäki, Jylänki & Vehtari 2013, RJV), the outer EP.

Equation numbers as in :mod:`gpcbench.inference.multinomial_probit`. J classes, n points, latent values f of shape (J, n) stacked class by
class with the prior N(0, K), K = blockdiag(K_1..K_J) (``K`` of shape (J, n, n); one shared
covariance or one per class). Every point has one J-dimensional Gaussian site whose precision
has the structure of RJV eq. 12, T~_i = diag(pi_i) - pi_i pi_i^T / s_i with s_i = 1^T pi_i, and
natural mean nu~_i (RJV eq. 15), both computed from its inner-EP sites
(:mod:`gpcbench.inference.multinomial_probit`). Stacked, the site precision is

    T = D - D R N^-1 R^T D,   D = diag(pi),   N = diag(s) = sum_c D_c,   R = [I_n; ...; I_n],

the form of the softmax Laplace Hessian W (W&B eq. 23) with the normaliser N in place of I. The
identities of :mod:`gpcbench.inference.laplace_softmax` carry over because S = sum_c E_c =
N - R^T D (K^-1 + D)^-1 D R also here (E_c = D_c^1/2 B_c^-1 D_c^1/2, B_c = I + D_c^1/2 K_c
D_c^1/2): with its :class:`~gpcbench.inference.laplace_softmax.BlockFactors` 

    (K + T^-1)^-1 = E - E R S^-1 R^T E                       (``BlockFactors.apply_R``)
    log|I + K T|  = sum_c log|B_c| + log|S| - sum_i log s_i,
    mu = K a,     a = nu~ - (K + T^-1)^-1 K nu~,

and the J x J posterior marginals Sigma_i of every point (:func:`posterior_marginals`, the
factors and the point blocks of that module computed in one pass by triangular solves), a
sweep costs J + 1 Choleskys of n x n and 3 J triangular solves with n right-hand sides, never a
(Jn)^3 factorisation.

The outer EP is parallel (as GPstuff's ``gpep_e``): from the posterior marginals the
cavities of all points, one incremental pass of inner EP at each (the paper's incremental
update: the inner sites are warm-started from the previous sweep, one pass over the J - 1 factors),
and the damped update alpha <- alpha + d (alpha^ - alpha), beta likewise, on the inner sites
(damping the inner sites keeps the structure of RJV eq. 12). A step whose posterior leaves a
cavity improper is halved, and the damping kept at the halved value; the damping is also
halved (down to :data:`~gpcbench.inference.ep.MIN_DAMPING`) whenever, over
:data:`~gpcbench.inference.ep.OSCILLATION_SWEEPS` sweeps, log Z has alternated by more than
:data:`OSCILLATION_NATS` without shrinking, as binary parallel EP watches for, or the moment gap
below has made no new low (near a fixed point log Z alternates at rounding level, which is no
oscillation). A run stops when the change of log Z is below ``tol`` max(1, |log Z|) and the
largest scaled gap between the posterior marginals and the tilted moments (means over
posterior s.d., covariances over the products of s.d.s) is below ``moment_tol`` (GPstuff's
convergence check, scaled).

The log marginal likelihood (GPstuff's ``logZep``) is

    log Z_EP = sum_i [log Z^_i - 1/2 log|A_i| - 1/2 mu_i^T Sigma_i^-1 mu_i + 1/2 m_i^T V_i^-1 m_i]
               - 1/2 log|I + K T| + 1/2 nu~^T mu,

with Z^_i the inner-EP normaliser at the cavity N(m_i, V_i), A_i = I - Sigma_i T~_i (so that
-1/2 log|A_i| = 1/2 log|I + V_i T~_i|). At a fixed point nested EP is EP on the model with u
kept (one scalar factor Phi(b^T w) per class difference), so log Z_EP is stationary in the
sites and its gradient in a log hyperparameter is the explicit one (Seeger 2005; K&G Theorem 1
for the binary case),

    d log Z_EP / d theta = 1/2 sum_c tr[(a_c a_c^T - R_cc) dK_c / d theta],
    R_cc = E_c - E_c S^-1 E_c,                                 (diagonal blocks of (K + T^-1)^-1)

contracted by the covariance's ``gradient_contraction``. Predictions: the latent predictive of
CKP eqs. 25-28 with K^-1 E[f] = a in place of y - pi
(:func:`~gpcbench.inference.laplace_softmax.latent_predictive`), then class probabilities by
the inner EP or by Genz (:mod:`gpcbench.inference.multinomial_probit`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy.linalg import LinAlgError
from scipy.linalg.blas import dtrsm
from scipy.linalg.lapack import dpotrf

from gpcbench.gaussian import cholesky_lower
from gpcbench.inference import laplace_softmax
from gpcbench.inference.ep import MIN_DAMPING, OSCILLATION_SWEEPS, log_evidence_alternates
from gpcbench.inference.laplace_softmax import BlockFactors
from gpcbench.inference.multinomial_probit import (
    cavity_batch,
    inner_ep_batch,
    site_parameters,
    tilted_log_normaliser,
)

#: Damping of the inner-site updates (the paper and GPstuff damp the parallel updates). On
#: synthetic blobs (n = 200, J = 3 and 6, theta0 = 3 ... 300, tolerances of the optimiser) 0.7
#: needed 18-23 sweeps, 0.5 27-34, 0.3 46-58, 0.85 14-85; undamped updates fall into a two-cycle
#: at theta0 >= 30 and converge in 32-38 once halved to 0.5 (benchmarks/bench_nested_ep.py).
DEFAULT_DAMPING = 0.7
#: Halvings of a step whose posterior leaves a cavity improper before giving up.
MAX_HALVINGS = 20
#: log Z alternating by more than this (nats) without shrinking is a two-cycle of the updates.
OSCILLATION_NATS = 1e-3


@dataclass
class NestedEPResult:
    """Last state of nested EP and everything computed from it.

    ``alpha``, ``beta`` (n, J-1) are the inner sites, ``pi`` and ``site_natural_mean`` (J, n)
    the outer sites they give (RJV eqs. 12, 15), ``weights`` a = K^-1 mu and ``mean`` mu
    (J, n), ``point_covariances`` the J x J posterior marginals (n, J, J).
    """

    labels: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    pi: np.ndarray
    site_natural_mean: np.ndarray
    factors: BlockFactors
    weights: np.ndarray
    mean: np.ndarray
    point_covariances: np.ndarray
    log_evidence: float
    converged: bool
    n_sweeps: int
    damping: float
    log_evidence_trace: list[float] = field(default_factory=list)

    @property
    def sites(self) -> tuple[np.ndarray, np.ndarray]:
        """(alpha, beta): pass as ``initial_sites`` to warm-start nested EP."""
        return self.alpha, self.beta

    def latent_predictive(self, cross, prior_variance):
        """Mean (m, J) and covariance (m, J, J) of the latent values at m new points.

        ``cross`` is K_c(X_new, X) (J, m, n), ``prior_variance`` k_c(x, x) (J, m). The mean is
        k_c^T a_c and the covariance diag(k**) - Q^T (K + T^-1)^-1 Q (CKP eqs. 25-28); the
        latter is the softmax Laplace one, whose mean k^T (y - pi) is k^T K^-1 f at its mode:
        here K^-1 E[f] = a is passed for y - pi.
        """
        state = laplace_softmax.SoftmaxLaplace(
            f=self.mean, a=self.weights, pi=np.zeros_like(self.weights), factors=self.factors,
            log_evidence=self.log_evidence, converged=self.converged, n_iter=self.n_sweeps)
        return laplace_softmax.latent_predictive(state, cross, prior_variance, self.weights)

    def log_evidence_gradient(self, covariance, X) -> np.ndarray:
        """d log Z_EP / d log(param) for every group of ``covariance`` (a
        :class:`~gpcbench.kernels.multiclass.SoftmaxCovariance`), shape (n_groups, p)
        (module docstring). Exact at a fixed point."""
        factors, a = self.factors, self.weights
        halves = np.stack([factors.half_S(E_c) for E_c in factors.E])  # M^-1 E_c
        kernel_inverse = factors.E - np.swapaxes(halves, 1, 2) @ halves  # R_cc
        weights = 0.5 * (a[:, :, None] * a[:, None, :] - kernel_inverse)
        return covariance.gradient_contraction(X, weights)


class _State(NamedTuple):
    """Outer sites, the posterior they give and the cavities of that posterior."""

    alpha: np.ndarray
    beta: np.ndarray
    pi: np.ndarray
    site_natural_mean: np.ndarray
    factors: BlockFactors
    weights: np.ndarray
    mean: np.ndarray
    blocks: np.ndarray
    cavities: tuple


def _matvec(K, v):
    """K v for block-diagonal K (J, n, n) and v (J, n)."""
    return (K @ v[:, :, None])[:, :, 0]


def posterior_marginals(K, pi):
    """The block factors of T = D - D R N^-1 R^T D and the J x J posterior marginals Sigma_i of
    every point, in one pass over the classes (the sweep's O(J n^3) part).

    Equal to :func:`~gpcbench.inference.laplace_softmax.block_factors` followed by
    :func:`~gpcbench.inference.laplace_softmax.posterior_point_blocks` (tested), computed
    with triangular solves on the Cholesky factor of each B_c instead of its explicit inverse
    and a product: with V_c = L_c^-1 D_c^1/2 K_c,

        diag(K_c E_c K_c) = column sums of V_c^2,     E_c K_c = D_c^1/2 L_c^-T V_c,
        E_c = D_c - (E_c K_c) D_c                      (E_c K_c D_c = D_c^1/2 (I - B_c^-1) D_c^1/2),

    then Sigma_i[a, b] = delta_ab (K_a - K_a E_a K_a)_ii + (G_a^T G_b)_ii, G_c = M^-1 E_c K_c
    (S = M M^T). Per class a Cholesky and three triangular solves with n right-hand sides (two
    with L_c, one with M; 3.3 n^3 flops), no inverse. E_c from the last identity (symmetrised)
    agreed with a direct solve of (K + D^-1) E = I to 1.3e-12 of its largest entry at signal
    variance 1e3 and 1.5e-9 at 1e6 (n = 200, site precisions from 1e-14 to 1), where
    D_c^1/2 B_c^-1 D_c^1/2 by LAPACK's potri agreed to 1e-12 and 9e-10 (2e-14 with half the
    precisions at 1e-12). Returns (BlockFactors, Sigma of shape (n, J, J)).
    """
    n_classes, n = pi.shape
    E = np.empty((n_classes, n, n))
    EK = []
    own = np.empty((n_classes, n))
    logdet_B = 0.0
    for c in range(n_classes):
        sd = np.sqrt(pi[c])
        half = (K[c] * sd).T  # D^1/2 K in Fortran order (the transpose of a C array)
        b_matrix = half * sd
        b_matrix[np.diag_indices(n)] += 1.0
        chol, info = dpotrf(b_matrix, lower=1, clean=0, overwrite_a=1)
        if info != 0:
            raise LinAlgError(f"Cholesky of B = I + D^1/2 K D^1/2 failed (info={info})")
        logdet_B += 2.0 * np.sum(np.log(np.diag(chol)))
        half = dtrsm(1.0, chol, half, lower=1, overwrite_b=1)  # V = L^-1 D^1/2 K
        own[c] = np.diag(K[c]) - np.einsum("ij,ij->j", half, half)
        ek = dtrsm(1.0, chol, half, lower=1, trans_a=1, overwrite_b=1)
        ek *= sd[:, None]  # E_c K_c
        np.multiply(ek.T, pi[c][:, None], out=E[c])  # D_c (E_c K_c)^T, C order
        E[c] += E[c].T
        E[c] *= -0.5
        E[c][np.diag_indices(n)] += pi[c]  # E_c = D_c - (D_c K_c E_c + E_c K_c D_c) / 2
        EK.append(ek)
    M = cholesky_lower(E.sum(axis=0))
    factors = BlockFactors(E, logdet_B, M)
    M = np.asfortranarray(M)
    G = [dtrsm(1.0, M, ek, lower=1, overwrite_b=1) for ek in EK]  # M^-1 E_c K_c
    blocks = np.empty((n, n_classes, n_classes))
    for a in range(n_classes):
        for b in range(a, n_classes):
            blocks[:, a, b] = blocks[:, b, a] = np.einsum("ki,ki->i", G[a], G[b])
        blocks[:, a, a] += own[a]
    return factors, blocks


def _state(K, labels, alpha, beta) -> _State | None:
    """The posterior of the sites (alpha, beta) and its cavities; None if one is improper."""
    n_classes = K.shape[0]
    pi, site_nu = site_parameters(labels, alpha, beta, n_classes)
    factors, blocks = posterior_marginals(K, pi)
    weights = site_nu - factors.apply_R(_matvec(K, site_nu))
    mean = _matvec(K, weights)
    cavities = cavity_batch(np.ascontiguousarray(mean.T), blocks, np.ascontiguousarray(pi.T),
                            np.ascontiguousarray(site_nu.T))
    if not np.all(cavities[5]):
        return None
    return _State(alpha, beta, pi, site_nu, factors, weights, mean, blocks, cavities)


def _inner(labels, state: _State, max_passes, tol):
    """Inner EP at every cavity of ``state`` from its inner sites (copied)."""
    cav_mean, cav_cov, cav_nat = state.cavities[:3]
    alpha, beta = state.alpha.copy(), state.beta.copy()
    result = inner_ep_batch(labels, cav_mean, cav_cov, cav_nat, alpha, beta, max_passes, tol)
    if not np.all(result[6]):
        raise FloatingPointError("nested EP: an inner factor's cavity is improper")
    return alpha, beta, result


def log_evidence(labels, state: _State) -> float:
    """log Z_EP of the module docstring at ``state`` (inner normalisers at its inner sites)."""
    _, _, (_, _, terms, gaussian, _, _, _) = _inner(labels, state, 0, 0.0)
    log_z_tilted = tilted_log_normaliser(terms, gaussian, state.alpha, state.beta)
    cav_mean, _, cav_nat, log_det_a, quadratic, _ = state.cavities
    per_point = (log_z_tilted - 0.5 * log_det_a - 0.5 * quadratic
                 + 0.5 * np.einsum("ij,ij->i", cav_mean, cav_nat))
    log_det = state.factors.logdet - np.sum(np.log(np.sum(state.pi, axis=0)))
    value = float(np.sum(per_point) - 0.5 * log_det
                  + 0.5 * np.sum(state.site_natural_mean * state.mean))
    if not math.isfinite(value):
        raise FloatingPointError(f"nested EP: log evidence is not finite ({value})")
    return value


def _oscillates(trace, gaps) -> bool:
    """Whether the parallel updates orbit instead of converging: over the last
    OSCILLATION_SWEEPS sweeps log Z alternated by more than :data:`OSCILLATION_NATS` without
    shrinking (a two-cycle), or the moment gap made no new low (a chaotic orbit). Near a fixed
    point log Z also alternates, at the level of rounding, and halving the damping there only
    slows the approach."""
    if len(gaps) <= OSCILLATION_SWEEPS:
        return False
    steps = np.diff(trace[-OSCILLATION_SWEEPS - 1:])
    two_cycle = (log_evidence_alternates(trace) and abs(steps[-1]) > OSCILLATION_NATS
                 and abs(steps[-1]) >= 0.5 * abs(steps[-3]))
    return two_cycle or min(gaps[-OSCILLATION_SWEEPS:]) >= min(gaps[:-OSCILLATION_SWEEPS])


def _moment_gap(state: _State, tilted_mean, tilted_cov) -> float:
    """Largest gap between posterior marginals and tilted moments, in posterior s.d. units."""
    sd = np.sqrt(np.einsum("iaa->ia", state.blocks))
    mean_gap = np.abs(state.mean.T - tilted_mean) / sd
    cov_gap = np.abs(state.blocks - tilted_cov) / (sd[:, :, None] * sd[:, None, :])
    return float(max(mean_gap.max(), cov_gap.max()))


def nested_ep(K, labels, *, damping: float = DEFAULT_DAMPING, max_sweeps: int = 200,
              tol: float = 1e-4, moment_tol: float = 1e-3, initial_sites=None) -> NestedEPResult:
    """Run nested EP for the prior N(0, blockdiag(K)) and multinomial probit labels.

    Parameters
    ----------
    K : array of shape (J, n, n)
        Prior covariance of every class's latent values (a broadcast view when shared).
    labels : int array of shape (n,)
        Class indices 0..J-1.
    damping : float in (0, 1]
        Step on the inner sites (module docstring); halved when a step leaves a cavity
        improper, and kept there.
    max_sweeps : int
        Outer sweeps at most.
    tol, moment_tol : float
        Convergence thresholds on the change of log Z relative to max(1, |log Z|) (its
        rounding grows with the latent scale: at signal variances near 1e6 log Z wanders by
        1e-5 at a fixed point) and on the scaled gap between posterior
        marginals and tilted moments.
    initial_sites : (alpha, beta), optional
        Inner sites (n, J-1) to start from (``NestedEPResult.sites``); default zero.

    Returns
    -------
    NestedEPResult
    """
    labels = np.asarray(labels, dtype=np.int64)
    n_classes, n = K.shape[0], labels.size
    if K.shape[1:] != (n, n):
        raise ValueError(f"K has shape {K.shape}, expected ({n_classes}, {n}, {n})")
    if not 0.0 < damping <= 1.0:
        raise ValueError(f"damping must lie in (0, 1], got {damping}")
    if initial_sites is None:
        alpha, beta = np.zeros((n, n_classes - 1)), np.zeros((n, n_classes - 1))
    else:
        alpha, beta = (np.array(a, dtype=float) for a in initial_sites)
    state = _state(K, labels, np.maximum(alpha, 0.0), beta)
    if state is None and initial_sites is not None:  # a stale warm start: from the prior
        zero = np.zeros((n, n_classes - 1))
        state = _state(K, labels, zero, zero.copy())
    if state is None:
        raise FloatingPointError("nested EP: improper cavity at the starting sites")
    trace, gaps, sweeps, damped_at = [], [], 0, 0
    while True:
        trace.append(log_evidence(labels, state))
        new_alpha, new_beta, inner = _inner(labels, state, 1, 0.0)
        gaps.append(_moment_gap(state, inner[0], inner[1]))
        converged = (len(trace) >= 2
                     and abs(trace[-1] - trace[-2]) < tol * max(1.0, abs(trace[-1]))
                     and gaps[-1] < moment_tol)
        if converged or sweeps >= max_sweeps:
            break
        if _oscillates(trace[damped_at:], gaps[damped_at:]) and damping > MIN_DAMPING:
            damping, damped_at = max(0.5 * damping, MIN_DAMPING), len(gaps) - 1
        for _ in range(MAX_HALVINGS):
            proposal = _state(K, labels, state.alpha + damping * (new_alpha - state.alpha),
                              state.beta + damping * (new_beta - state.beta))
            if proposal is not None:
                break
            damping *= 0.5
        else:
            raise FloatingPointError("nested EP: every damped step leaves a cavity improper")
        state = proposal
        sweeps += 1
    return NestedEPResult(
        labels=labels, alpha=state.alpha, beta=state.beta, pi=state.pi,
        site_natural_mean=state.site_natural_mean, factors=state.factors,
        weights=state.weights, mean=state.mean, point_covariances=state.blocks,
        log_evidence=trace[-1], converged=bool(converged), n_sweeps=sweeps, damping=damping,
        log_evidence_trace=trace)
