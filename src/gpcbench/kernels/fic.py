"""The FIC (FITC) sparse prior of Snelson & Ghahramani (2006) with the ZDJ kernel, and the
linear algebra of its posterior under diagonal Gaussian sites.

Prior. With m inducing inputs Z (here a subset of the training inputs) and the ZDJ kernel K
(:mod:`gpcbench.kernels.rbf`), Snelson & Ghahramani (2006) eq. 9 replace the prior covariance
of the training latents by

    Sigma = Q + diag(K_nn - Q),   Q = K_nm K_mm^-1 K_mn = U U^T,   U = K_nm L_mm^-T,

(L_mm the Cholesky factor of K_mm + jitter I), i.e. a rank-m part plus a diagonal
d0 = diag(K_nn) - rowsum(U^2) (:class:`FICPrior`). With Z = X the diagonal is zero up to the
jitter and Sigma = K, the full GP.

Sites. For Gaussian sites in natural parameters (s_i, nu_i) the posterior
q(f) = N(A nu, A), A = (Sigma^-1 + S)^-1, keeps the low-rank-plus-diagonal form (Naish-Guzman &
Holden 2008 sec. 3; :class:`FICSiteFactorization`, the FIC counterpart of
:class:`gpcbench.gaussian.SiteFactorization`). With e_i = 1 + d0_i s_i and
r_i = s_i / e_i (= 1 / (d0_i + 1/s_i), finite at s_i = 0),

    M      = I_m + U^T diag(r) U = L_M L_M^T                  (m x m, eigenvalues >= 1)
    A      = diag(d0 / e) + G M^-1 G^T,        G = diag(1/e) U
    alpha  = (Sigma + S^-1)^-1 S^-1 nu = c - r * U M^-1 U^T c,  c = nu / e
    mean   = Sigma alpha = d0 * alpha + U (U^T alpha)
    log|I + Sigma S| = sum log e_i + log|M|

so a factorisation costs O(n m^2) (one m x m Cholesky and two n x m triangular solves) and
memory O(n m). EP (:mod:`gpcbench.inference.ep_fic`) and the Gibbs sampler
(:mod:`gpcbench.mcmc.fic_gibbs`) both use it.

Predictions at new inputs x*: the FIC prior covariance between x* and the training latents is
Q_*n = u*^T U^T (u* = L_mm^-1 k_m*), its prior variance K(x*, x*), so (Snelson & Ghahramani
(2006) eq. 8 with sites in place of Gaussian noise)

    mean = u*^T U^T alpha,   variance = K(x*, x*) - |u*|^2 + |L_M^-1 u*|^2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_solve, solve_triangular

from gpcbench.gaussian import cholesky_lower, log_det_from_cholesky
from gpcbench.kernels.rbf import rbf

#: Added to the diagonal of K_mm before its Cholesky factorisation (relative to K(x, x) = 1).
DEFAULT_JITTER = 1e-6


@dataclass(frozen=True)
class FICPrior:
    """The FIC prior Sigma = U U^T + diag(d0) of the training latents (module docstring).

    Build it with :meth:`from_inputs`. ``theta`` holds one ZDJ kernel width or one per feature
    (ZDJ sec. 5.3); ``chol_mm`` is the Cholesky factor of K_mm + jitter I.
    """

    X: np.ndarray
    Z: np.ndarray
    theta: np.ndarray
    jitter: float
    cross: np.ndarray  # K_nm
    chol_mm: np.ndarray
    U: np.ndarray
    d0: np.ndarray

    @classmethod
    def from_inputs(cls, X, Z, theta, jitter: float = DEFAULT_JITTER) -> FICPrior:
        X = np.ascontiguousarray(X, dtype=float)
        Z = np.ascontiguousarray(Z, dtype=float)
        theta = np.atleast_1d(np.asarray(theta, dtype=float))
        cross = rbf(X, Z, theta)
        k_mm = rbf(Z, Z, theta)
        k_mm[np.diag_indices_from(k_mm)] += jitter
        try:
            chol_mm = cholesky_lower(k_mm)
        except (LinAlgError, ValueError) as err:
            raise LinAlgError(f"FIC: Cholesky of K_mm + {jitter:g} I failed: {err}") from err
        U = solve_triangular(chol_mm, cross.T, lower=True, check_finite=False).T
        d0 = np.maximum(1.0 - np.einsum("ij,ij->i", U, U), 0.0)  # K(x, x) = 1 (ZDJ kernel)
        return cls(X, Z, theta, float(jitter), cross, chol_mm, U, d0)

    @property
    def n(self) -> int:
        return self.U.shape[0]

    def dense(self) -> np.ndarray:
        """Sigma as an n x n matrix (for tests and small problems only)."""
        return self.U @ self.U.T + np.diag(self.d0)

    def projection(self, X_new) -> np.ndarray:
        """u* = L_mm^-1 k_m* for every row of X_new, shape (n_new, m)."""
        cross = rbf(np.ascontiguousarray(X_new, dtype=float), self.Z, self.theta)
        return solve_triangular(self.chol_mm, cross.T, lower=True, check_finite=False).T


@dataclass(frozen=True)
class FICSiteFactorization:
    """Cholesky factor of M = I + U^T diag(r) U for the FIC prior and site precisions s >= 0."""

    prior: FICPrior
    precision: np.ndarray
    scale: np.ndarray  # e = 1 + d0 s
    ratio: np.ndarray  # r = s / e
    chol: np.ndarray  # L_M

    @classmethod
    def from_sites(cls, prior: FICPrior, precision) -> FICSiteFactorization:
        precision = np.asarray(precision, dtype=float)
        if precision.shape != (prior.n,) or not np.all(precision >= 0):
            raise ValueError("need n site precisions >= 0 (and not NaN)")
        scale = 1.0 + prior.d0 * precision
        ratio = precision / scale
        U = prior.U
        inner = (U * ratio[:, None]).T @ U
        inner[np.diag_indices_from(inner)] += 1.0
        try:
            chol = cholesky_lower(inner)
        except (LinAlgError, ValueError) as err:
            raise LinAlgError(f"FIC: Cholesky of I + U^T R U failed: {err}") from err
        return cls(prior, precision, scale, ratio, chol)

    @property
    def log_det(self) -> float:
        """log|I + Sigma S| = sum log(1 + d0 s) + log|M|."""
        return float(np.sum(np.log(self.scale)) + log_det_from_cholesky(self.chol))

    def m_solve(self, rhs) -> np.ndarray:
        """M^-1 rhs."""
        return cho_solve((self.chol, True), rhs, check_finite=False)

    def weights(self, natural_mean) -> np.ndarray:
        """alpha = (Sigma + S^-1)^-1 S^-1 nu (the ``alpha`` of K&G eq. 27), finite where s = 0."""
        c = np.asarray(natural_mean, dtype=float) / self.scale
        U = self.prior.U
        return c - self.ratio * (U @ self.m_solve(U.T @ c))

    def mean(self, alpha) -> np.ndarray:
        """Posterior mean Sigma alpha = A nu."""
        return self.prior.d0 * alpha + self.prior.U @ (self.prior.U.T @ alpha)

    def variance(self) -> np.ndarray:
        """diag(A) = d0 / e + column sums of (L_M^-1 G^T)^2, G = diag(1/e) U."""
        half = solve_triangular(self.chol, (self.prior.U / self.scale[:, None]).T, lower=True,
                                check_finite=False)
        return self.prior.d0 / self.scale + np.einsum("ij,ij->j", half, half)

    def covariance(self) -> np.ndarray:
        """A as an n x n matrix (for tests and small problems only)."""
        half = solve_triangular(self.chol, (self.prior.U / self.scale[:, None]).T, lower=True,
                                check_finite=False)
        return np.diag(self.prior.d0 / self.scale) + half.T @ half

    def predict(self, projection, beta, prior_variance=1.0):
        """Latent mean u*^T beta (beta = U^T alpha) and variance
        K(x*, x*) - |u*|^2 + |L_M^-1 u*|^2 at new inputs with projections u* (rows)."""
        projection = np.atleast_2d(projection)
        half = solve_triangular(self.chol, projection.T, lower=True, check_finite=False)
        variance = (prior_variance - np.einsum("ij,ij->i", projection, projection)
                    + np.einsum("ij,ij->j", half, half))
        return projection @ beta, np.maximum(variance, 0.0)
