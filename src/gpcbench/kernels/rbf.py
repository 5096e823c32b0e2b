"""The ZDJ kernel K(x, x') = exp(-sum_l (x_l - x'_l)^2 / theta_l^2) (ZDJ secs. 3.1 and 5.3), one
width theta per feature or one shared, and ZDJ sec. 5.1's default width.

:func:`rbf_value` (numba) serves the samplers' kernel columns and the predictions' kernel
matrices (:func:`rbf`; :func:`rbf_with_bias` adds a constant): it sums squared coordinate
differences, so inputs far from the origin keep their precision. The samplers' whole design
block (:func:`kernel_block`, rebuilt at every move of the widths) is a matrix product instead,
on inputs shifted to their column means, agreeing with it to rounding (tests/test_gkm.py).
:func:`width_contraction` contracts the kernel's derivatives in the log widths with a weight
matrix (the FIC evidence gradient, :mod:`gpcbench.inference.ep_fic_gradient`).
"""

from __future__ import annotations

import math

import numpy as np

from gpcbench.jit import njit


@njit(cache=True)
def weights(theta, p):
    """w_l = 1 / theta_l^2 for every feature (one shared theta or one per feature)."""
    w = np.empty(p)
    for l in range(p):
        th = theta[0] if theta.shape[0] == 1 else theta[l]
        w[l] = 1.0 / (th * th)
    return w


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
def kernel_block(X, act, k, w, Kt):
    """K~ = [1, K(X, X[act])] into Kt[:, :k+1]: the weighted squared distances as
    |a|^2 + |b|^2 - 2 a'b with the cross term one matrix product (BLAS-3: the samplers rebuild
    the whole block at every theta move), after scaling by sqrt(w) and shifting by X's column
    means so that inputs far from the origin do not cancel; a point's distance to itself is 0
    exactly and rounding never makes a distance negative."""
    n, p = X.shape
    scale = np.sqrt(w)
    shift = np.zeros(p)
    for i in range(n):
        shift += X[i]
    shift /= n
    scaled = (X - shift) * scale
    active = np.empty((k, p))
    for q in range(k):
        active[q] = scaled[act[q]]
    cross = scaled @ active.T
    norms = np.empty(n)
    for i in range(n):
        norms[i] = np.dot(scaled[i], scaled[i])
    for i in range(n):
        Kt[i, 0] = 1.0
        for q in range(k):
            j = act[q]
            d = 0.0 if i == j else max(norms[i] + norms[j] - 2.0 * cross[i, q], 0.0)
            Kt[i, q + 1] = math.exp(-d)


@njit(cache=True)
def kernel_matrix(A, B, w, out):
    """out[i, j] = K(A_i, B_j) for every pair of rows."""
    for i in range(A.shape[0]):
        kernel_column(B, A[i], w, out[i])


def rbf(A, B, theta) -> np.ndarray:
    """K(A_i, B_j) = exp(-sum_l (A_il - B_jl)^2 / theta_l^2), shape (len(A), len(B))."""
    A, B = np.ascontiguousarray(A, dtype=float), np.ascontiguousarray(B, dtype=float)
    out = np.empty((A.shape[0], B.shape[0]))
    kernel_matrix(A, B, weights(np.atleast_1d(np.asarray(theta, dtype=float)), A.shape[1]), out)
    return out



def rbf_with_bias(A, B, theta, bias_variance) -> np.ndarray:
    """K(A_i, B_j) + sigma_b^2: the ZDJ kernel plus the prior variance of a constant offset
    b ~ N(0, sigma_b^2) (the 'rbf' + 'bias' kernel of Lawrence, Seeger & Herbrich 2003)."""
    return rbf(A, B, theta) + bias_variance

def width_contraction(A, B, kernel, G, theta) -> np.ndarray:
    """sum_ij G_ij dK(a_i, b_j) / d log theta_l for the ZDJ kernel
    K = exp(-sum_l (a_l - b_l)^2 / theta_l^2), given K = ``kernel`` (|A| x |B|).

    One value per width (``theta`` of length p) or their sum over features (one shared width).
    The squared distance is expanded per feature as a^2 + b^2 - 2 a b after a common shift.
    """
    H = np.asarray(G) * kernel
    shift = A.mean(axis=0)
    A, B = A - shift, B - shift
    per_feature = ((A**2).T @ H.sum(axis=1) + (B**2).T @ H.sum(axis=0)
                   - 2.0 * np.einsum("il,il->l", A, H @ B))
    theta = np.atleast_1d(theta)
    if theta.size == 1:
        return np.array([2.0 / theta[0] ** 2 * per_feature.sum()])
    return 2.0 / theta**2 * per_feature


def mean_distance(X, chunk: int = 512) -> float:
    """Mean Euclidean distance over the pairs of rows of X (ZDJ sec. 5.1's kernel width).

    X is centred first, so that |a|^2 + |b|^2 - 2 a'b does not cancel for inputs far from the
    origin (a shift by 1e8 would otherwise leave O(1) errors in every squared distance).
    """
    n = X.shape[0]
    if n < 2:
        return 1.0
    X = X - X.mean(axis=0)
    sq = np.einsum("ij,ij->i", X, X)
    total = 0.0
    for start in range(0, n, chunk):
        block = sq[start:start + chunk, None] + sq[None, :] - 2 * X[start:start + chunk] @ X.T
        total += np.sqrt(np.maximum(block, 0.0)).sum()
    return float(total / (n * (n - 1))) or 1.0
