"""Gradient of the FIC EP log evidence with respect to the ZDJ kernel widths (log scale).

At an EP fixed point the sites are stationary, so (K&G eq. 31, as for the full GP in
:meth:`gpcbench.inference.ep.EPResult.log_evidence_gradient`)

    d log Z / d t = 1/2 tr[W dSigma/dt],   W = alpha alpha^T - P,   P = (Sigma + S^-1)^-1,

for Sigma the FIC prior (:mod:`gpcbench.kernels.fic`). With V = K_nm K_mm^-1,
dQ = dK_nm V^T + V dK_nm^T - V dK_mm V^T and, K(x, x) = 1 not depending on the widths,
dSigma = dQ - diag(dQ), so with W' = W - diag(w) (w = diag W)

    tr[W dSigma] = 2 <dK_nm, W' V> - <dK_mm, V^T W' V>

(Snelson & Ghahramani (2006) sec. 3's gradient, here with EP's site precisions in place of
the noise). Every product is O(n m^2): P = R - R U M^-1 U^T R by Woodbury (R = diag(r) of the
factorisation), and a kernel-derivative contraction <dK(A, B)/d log theta_l, G> is
(2 / theta_l^2) sum_ij G_ij K_ij (a_il - b_jl)^2, O(|A| |B| p)
(:func:`~gpcbench.kernels.rbf.width_contraction`).
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular

from gpcbench.inference.ep_fic import FICEPResult
from gpcbench.kernels.rbf import rbf, width_contraction


def fic_log_evidence_gradient(result: FICEPResult) -> np.ndarray:
    """d log Z_EP / d log theta (theta the kernel width(s)) at the sites of ``result``.

    Exact at a fixed point of EP (the sites stationary); the layout is that of
    ``result.factor.prior.theta``.
    """
    factor = result.factor
    prior = factor.prior
    U, r, alpha = prior.U, factor.ratio, result.alpha
    V = solve_triangular(prior.chol_mm, U.T, lower=True, trans=1, check_finite=False).T
    half = solve_triangular(factor.chol, U.T, lower=True, check_finite=False)
    w = alpha**2 - (r - r**2 * np.einsum("ij,ij->j", half, half))  # diag(W)
    rv = r[:, None] * V
    p_v = rv - r[:, None] * (U @ factor.m_solve(U.T @ rv))
    wv = np.outer(alpha, alpha @ V) - p_v - w[:, None] * V  # W' V
    vwv = V.T @ wv
    vwv = 0.5 * (vwv + vwv.T)
    k_mm = rbf(prior.Z, prior.Z, prior.theta)
    return 0.5 * (2.0 * width_contraction(prior.X, prior.Z, prior.cross, wv, prior.theta)
                  - width_contraction(prior.Z, prior.Z, k_mm, vwv, prior.theta))
