"""The reference that step (a)'s whitening W = L^-1 K~' (ZDJ eq. 9) is measured against, and
the errors measured: tests/test_whitening.py bounds them with the tolerances that
benchmarks/whitening_accuracy.py measured on real data."""

import numpy as np
from scipy.linalg import solve_triangular


def refined_whitening(Lk, K):
    """(dtrsm's W, the reference): W = (L^-1 K')' by one dtrsm, and that W refined once by
    the residual K' - L W' summed in extended precision (np.longdouble)."""
    trsm = solve_triangular(Lk, K.T, lower=True).T
    residual = (K.T.astype(np.longdouble)
                - Lk.astype(np.longdouble) @ trsm.T.astype(np.longdouble)).astype(float)
    return trsm, trsm + solve_triangular(Lk, residual, lower=True).T


def whitening_errors(W, ref):
    """Largest relative errors of W's rows and of the leverages h = |W_i|^2 or
    w = h / (1 - h) (ZDJ alg. 1's ratio), the larger of the two."""
    h, h_ref = (W * W).sum(axis=1), (ref * ref).sum(axis=1)
    w, w_ref = h / (1 - h), h_ref / (1 - h_ref)
    rows = np.linalg.norm(W - ref, axis=1) / np.linalg.norm(ref, axis=1)
    return rows.max(), max(np.max(np.abs(h - h_ref) / h_ref), np.max(np.abs(w - w_ref) / w_ref))
