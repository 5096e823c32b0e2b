"""Cholesky-factor kernels of the ZDJ samplers (numba): dot products, triangular solves and
products with a C-ordered lower factor (one right-hand side: BLAS-2, dtrsv / dtrmv), and the
factor's updates when a row and column are appended or deleted (the gamma moves of ZDJ sec. 3.2
change K_gammagamma and Upsilon by one row and column)."""

from __future__ import annotations

import math

import numpy as np

from gpcbench.jit import njit
from gpcbench.mcmc.lapack import trmv, trsv

_TRANS, _NOTRANS = ord("T"), ord("N")  # op of trsv / trmv on L's buffer read column-major (L')


@njit(cache=True, fastmath=True)
def dot(a, b, m):
    """sum_j a_j b_j over the first m entries."""
    acc = 0.0
    for j in range(m):
        acc += a[j] * b[j]
    return acc


@njit(cache=True)
def forward(L, m, b, out):
    """Solve L[:m, :m] out = b[:m] (forward substitution, dtrsv; b may be out)."""
    for r in range(m):
        out[r] = b[r]
    trsv(_TRANS, m, L, out)


@njit(cache=True)
def backward_t(L, m, b, out):
    """Solve L[:m, :m]' out = b[:m] (back substitution with the transpose, dtrsv; b may be
    out)."""
    for r in range(m):
        out[r] = b[r]
    trsv(_NOTRANS, m, L, out)


@njit(cache=True)
def multiply_lower(L, m, b, out):
    """out[:m] = L[:m, :m] b[:m] (dtrmv; b may be out)."""
    for r in range(m):
        out[r] = b[r]
    trmv(_TRANS, m, L, out)


@njit(cache=True)
def log_det(L, m):
    """log|A| from the Cholesky factor L[:m, :m] of A."""
    acc = 0.0
    for i in range(m):
        acc += math.log(L[i, i])
    return 2.0 * acc


@njit(cache=True)
def copy_factor(src, dst, m):
    """dst[:m, :m] <- the lower triangle of src[:m, :m]."""
    for i in range(m):
        for j in range(i + 1):
            dst[i, j] = src[i, j]


@njit(cache=True)
def chol_append(L, m, v, c):
    """Grow the factor of A (m x m) to that of [[A, v], [v', c]]; False if not PD."""
    forward(L, m, v, L[m])
    d2 = c - dot(L[m], L[m], m)
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
