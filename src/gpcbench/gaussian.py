"""Linear algebra of a Gaussian prior times diagonal Gaussian sites.

Every Gaussian-site approximation of the package (EP, Laplace, ...) has a posterior

    q(f) ∝ N(f | 0, K) prod_i exp(-s_i f_i^2 / 2 + b_i f_i) = N(f | mu, Sigma),
    Sigma = (K^-1 + S)^-1,   mu = Sigma b,                       (K&G eq. 22)

with S = diag(s), s >= 0 the site precisions (Lambda^-1 of K&G eq. 22 for EP, W for Laplace) and
b the site natural means (Lambda^-1 m). Nothing is inverted explicitly: all quantities come
from the Cholesky factor of the well-conditioned matrix

    B = I + S^1/2 K S^1/2 = L L^T                               (eigenvalues >= 1)

(Rasmussen & Williams 2006, GPML secs. 3.4.3 and 3.6.3; GPML's ``sW`` and ``L``). The
identities used are

    Sigma         = K - K S^1/2 B^-1 S^1/2 K
    (K + S^-1)^-1 = S^1/2 B^-1 S^1/2                             (Lambda + C)^-1 of K&G eq. 24
    mu            = K alpha,  alpha = b - S^1/2 B^-1 S^1/2 K b     (h = C alpha, K&G eq. 27)
    log|I + K S|  = log|B| = 2 sum log L_ii.

The dense helpers :func:`cholesky_lower`, :func:`log_det_from_cholesky` and
:func:`inverse_from_cholesky` serve every module that factors a prior covariance itself.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_solve, cholesky, solve_triangular
from scipy.linalg.lapack import dpotri


def cholesky_lower(matrix) -> np.ndarray:
    """Lower Cholesky factor L of a symmetric positive definite matrix, L L^T = matrix."""
    return cholesky(matrix, lower=True, check_finite=False)


def log_det_from_cholesky(chol) -> float:
    """log|A| = 2 sum log L_ii from the lower Cholesky factor L of A."""
    return 2.0 * np.sum(np.log(np.diag(chol)))


def inverse_from_cholesky(chol) -> np.ndarray:
    """A^-1 from the lower Cholesky factor of A (LAPACK potri, then symmetrised).

    For the gradients that contract a full matrix such as C^-1 E[f f^T] C^-1 - C^-1
    (K&G eq. 57) with every dC/dtheta, and for the softmax blocks E_c (W&B eqs. 24-25).
    """
    lower, info = dpotri(chol, lower=1)
    if info != 0:
        raise LinAlgError(f"potri failed (info={info})")
    return np.tril(lower) + np.tril(lower, -1).T


@dataclass(frozen=True)
class SiteFactorization:
    """Cholesky factorisation of B = I + S^1/2 K S^1/2 for a prior K and site precisions s >= 0.

    Build it with :meth:`from_sites`.
    """

    kernel: np.ndarray
    sqrt_precision: np.ndarray
    chol: np.ndarray

    @classmethod
    def from_sites(cls, kernel, precision) -> SiteFactorization:
        """Factor B for prior covariance ``kernel`` (n x n) and site precisions (n,) >= 0."""
        kernel = np.asarray(kernel, dtype=float)
        precision = np.asarray(precision, dtype=float)
        if precision.shape != (kernel.shape[0],):
            raise ValueError(f"{precision.shape} site precisions for a {kernel.shape} prior")
        if not np.all(precision >= 0):
            raise ValueError("site precisions must be >= 0 (and not NaN) to factor B")
        sqrt_precision = np.sqrt(precision)
        b_matrix = sqrt_precision[:, None] * kernel * sqrt_precision[None, :]
        b_matrix[np.diag_indices_from(b_matrix)] += 1.0
        try:
            chol = cholesky(b_matrix, lower=True)
        except (LinAlgError, ValueError) as err:
            raise LinAlgError(f"Cholesky of B = I + S^1/2 K S^1/2 failed: {err}") from err
        return cls(kernel, sqrt_precision, chol)

    @property
    def n(self) -> int:
        return self.sqrt_precision.size

    @property
    def log_det(self) -> float:
        """log|B| = log|I + K S| = log|K + S^-1| + log|S| (the latter when S > 0)."""
        return float(log_det_from_cholesky(self.chol))

    def solve(self, rhs) -> np.ndarray:
        """B^-1 rhs."""
        return cho_solve((self.chol, True), rhs)

    def half_solve(self, rhs) -> np.ndarray:
        """L^-1 S^1/2 rhs, the building block of every variance (GPML's V)."""
        rhs = np.asarray(rhs, dtype=float)
        scaled = self.sqrt_precision.reshape((-1,) + (1,) * (rhs.ndim - 1)) * rhs
        return solve_triangular(self.chol, scaled, lower=True)

    def weights(self, natural_mean) -> np.ndarray:
        """alpha with Sigma b = K alpha, i.e. alpha = b - S^1/2 B^-1 S^1/2 K b (K&G eq. 27)."""
        natural_mean = np.asarray(natural_mean, dtype=float)
        sp = self.sqrt_precision
        return natural_mean - sp * self.solve(sp * (self.kernel @ natural_mean))

    def variance(self) -> np.ndarray:
        """diag(Sigma) = diag(K) - column sums of V^2, V = L^-1 S^1/2 K."""
        v = self.half_solve(self.kernel)
        return np.diag(self.kernel) - np.einsum("ij,ij->j", v, v)

    def covariance(self) -> np.ndarray:
        """The full posterior covariance Sigma = K - V^T V (symmetric by construction)."""
        v = self.half_solve(self.kernel)
        return self.kernel - v.T @ v

    def site_kernel_inverse(self) -> np.ndarray:
        """(K + S^-1)^-1 = S^1/2 B^-1 S^1/2, finite also where s_i = 0."""
        sp = self.sqrt_precision
        return sp[:, None] * self.solve(np.diag(sp))

    def predict(self, cross, prior_variance, alpha):
        """Latent predictive mean and variance at new points (K&G eq. 24).

        Parameters
        ----------
        cross : array of shape (n_new, n)
            k(x_new, x_train), the cross-covariance (no latent-noise term).
        prior_variance : array of shape (n_new,)
            kappa = c(x_new, x_new).
        alpha : array of shape (n,)
            :meth:`weights` of the site natural means.

        Returns
        -------
        mean : k^T alpha (= k^T C^-1 h)
        variance : kappa - k^T (Lambda + C)^-1 k, clipped at 0 against round-off.
        """
        cross = np.atleast_2d(np.asarray(cross, dtype=float))
        mean = cross @ alpha
        v = self.half_solve(cross.T)
        variance = np.asarray(prior_variance, dtype=float) - np.einsum("ij,ij->j", v, v)
        return mean, np.maximum(variance, 0.0)
