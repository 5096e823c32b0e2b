"""Kernel logistic regression on a greedily imported basis: the import vector machine of Zhu &
Hastie (2005, J. Comp. Graph. Stat. 14, 185-205), binary case.

With labels y in {-1, +1}, the import set S (q training rows) and f(x) = sum_{j in S} a_j
K(x, x_j), the submodel minimises the regularised negative log-likelihood

    H(a) = -sum_i log sigma(y_i f_i) + (mu / 2) a^T K_SS a,   f = K_nS a       (Z&H's KLR
                                                                              objective on S)

(``mu`` is the penalty of the summed loss; Z&H's lambda of the averaged loss is mu / n).
:func:`fit_submodel` minimises it by Newton's method (Z&H's iteratively reweighted least
squares, a <- (K_nS^T W K_nS + mu K_SS)^-1 K_nS^T W z with z = f + W^-1 (t - p)), halving a
step that does not lower H.

:func:`select_imports` is Z&H's greedy forward selection: at every step each remaining row l
is scored by H of the submodel S + {l}, and the best is imported. The candidates' objectives
are Z&H's one-step approximation (the computational short cut of their IVM algorithm): one
Newton step from the current submodel's coefficients with a_l = 0, evaluated for all
candidates at once by the block (Schur complement) form of the (k+1) x (k+1) Newton system

    [A    b_l] [d_S]     [g_S]     A = K_nS^T W K_nS + mu K_SS,  b_l = K_nS^T W k_l + mu k_Sl,
    [b_l^T c_l] [d_l] = - [g_l],    c_l = k_l^T W k_l + mu K_ll,  g = gradient of H at (a, 0),

    s_l = c_l - b_l^T A^-1 b_l,  d_l = -(g_l - b_l^T A^-1 g_S) / s_l,  d_S = -A^-1 (g_S + b_l d_l)

so that the new latent is f0 + d_l (k_l - K_nS A^-1 b_l), f0 = f - K_nS A^-1 g_S: O(n k) per
candidate. The imported submodel is then refitted to convergence, and H_k is its objective.
Selection stops when |H_k - H_{k - dk}| / |H_k| < epsilon (Z&H's rule: dk = 1, epsilon = 0.001)
or when ``max_imports`` rows are imported.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import LinAlgError, cho_solve

from gpcbench.gaussian import cholesky_lower
from gpcbench.likelihoods import LogisticLikelihood

LOGISTIC = LogisticLikelihood()
#: Newton stops when the Newton decrement g^T H^-1 g / 2 is below this times (1 + |H|).
NEWTON_TOL = 1e-13
MAX_NEWTON = 100


@dataclass(frozen=True)
class Submodel:
    """A fitted submodel: import rows ``indices`` (in order of import), coefficients ``a``, the
    latent ``f`` = K_nS a at every training row and the objective H (module docstring)."""

    indices: np.ndarray
    a: np.ndarray
    f: np.ndarray
    objective: float
    converged: bool = True


@dataclass(frozen=True)
class ImportPath:
    """The outcome of :func:`select_imports`: the final submodel and H_k after each import
    (``objectives[0]`` is the starting submodel's, H of the empty model being n log 2)."""

    submodel: Submodel
    objectives: np.ndarray
    stopped_by_rule: bool


def objective(K, y, mu, indices, a) -> float:
    """H(a) of the submodel on ``indices`` (module docstring), from the full kernel K."""
    f = K[:, indices] @ a
    return float(-np.sum(LOGISTIC.log_likelihood(y * f))
                 + 0.5 * mu * a @ K[np.ix_(indices, indices)] @ a)


def _factor(matrix):
    """Cholesky factor of a symmetric positive semi-definite matrix, with jitter if needed."""
    scale = max(float(np.mean(np.diag(matrix))), 1e-300) if matrix.size else 1.0
    for jitter in (0.0, 1e-12, 1e-10, 1e-8, 1e-6):
        try:
            return cholesky_lower(matrix + jitter * scale * np.eye(len(matrix)))
        except (LinAlgError, ValueError):
            continue
    raise LinAlgError("the Newton system of the import vector machine is not positive definite")


def _newton_system(K, y, mu, indices, a, f):
    """Gradient g and Hessian A of H at a (module docstring), and the weights d log p / df, W."""
    _, dlp, d2lp, _ = LOGISTIC.derivatives(y, f)
    K_nS, K_SS = K[:, indices], K[np.ix_(indices, indices)]
    gradient = -K_nS.T @ dlp + mu * K_SS @ a
    hessian = K_nS.T @ (-d2lp[:, None] * K_nS) + mu * K_SS
    return gradient, hessian, dlp, -d2lp


def fit_submodel(K, y, mu, indices, a=None) -> Submodel:
    """Minimise H over the coefficients of the rows ``indices`` by Newton's method from ``a``
    (zeros by default), halving steps that do not lower H."""
    indices = np.asarray(indices, dtype=int)
    a = np.zeros(indices.size) if a is None else np.asarray(a, dtype=float).copy()
    value = objective(K, y, mu, indices, a)
    for _ in range(MAX_NEWTON if indices.size else 0):
        gradient, hessian, _, _ = _newton_system(K, y, mu, indices, a, K[:, indices] @ a)
        step = -cho_solve((_factor(hessian), True), gradient, check_finite=False)
        if -gradient @ step / 2 <= NEWTON_TOL * (1.0 + abs(value)):
            return Submodel(indices, a, K[:, indices] @ a, value)
        for _ in range(60):
            trial = objective(K, y, mu, indices, a + step)
            if trial <= value:
                break
            step = step / 2
        else:
            break
        a, value = a + step, trial
    return Submodel(indices, a, K[:, indices] @ a, value, converged=not indices.size)


def candidate_objectives(K, y, mu, model: Submodel, candidates) -> np.ndarray:
    """Z&H's one-step approximation of H(S + {l}) for every row l of ``candidates``: one Newton
    step from (a, a_l = 0), by the block form of the module docstring; +inf where the Schur
    complement s_l vanishes (k_l already in the span of the imports)."""
    S, a, f = model.indices, model.a, model.f
    _, dlp, d2lp, _ = LOGISTIC.derivatives(y, f)
    w = -d2lp
    K_nS, K_SS = K[:, S], K[np.ix_(S, S)]
    K_nc, K_Sc = K[:, candidates], K[np.ix_(S, candidates)]
    g_S = -K_nS.T @ dlp + mu * K_SS @ a
    g_c = -K_nc.T @ dlp + mu * K_Sc.T @ a
    B = K_nS.T @ (w[:, None] * K_nc) + mu * K_Sc
    c = np.einsum("ic,ic->c", w[:, None] * K_nc, K_nc) + mu * K[candidates, candidates]
    if S.size:
        chol = _factor(K_nS.T @ (w[:, None] * K_nS) + mu * K_SS)
        U, h0 = cho_solve((chol, True), B), cho_solve((chol, True), g_S)
    else:
        U, h0 = np.zeros((0, len(candidates))), np.zeros(0)
    schur = c - np.einsum("sc,sc->c", B, U)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = -(g_c - U.T @ g_S) / schur
    a0, f0 = a - h0, f - K_nS @ h0
    F = f0[:, None] + (K_nc - K_nS @ U) * d
    loss = -np.sum(LOGISTIC.log_likelihood(y[:, None] * F), axis=0)
    # the new coefficients are (a0 - U d, d): their penalty (a0 - u d)^T K_SS (a0 - u d)
    # + 2 d k_Sl^T (a0 - u d) + d^2 K_ll, expanded per candidate
    K_SS_a0, K_SS_U = K_SS @ a0, K_SS @ U
    penalty = (a0 @ K_SS_a0 - 2 * d * (U.T @ K_SS_a0) + d**2 * np.einsum("sc,sc->c", U, K_SS_U)
               + 2 * d * (K_Sc.T @ a0) - 2 * d**2 * np.einsum("sc,sc->c", K_Sc, U)
               + d**2 * K[candidates, candidates])
    values = loss + 0.5 * mu * penalty
    tiny = 1e-12 * np.maximum(c, 1e-300)
    return np.where((schur > tiny) & np.isfinite(values), values, np.inf)


def select_imports(K, y, mu, *, epsilon=1e-3, delta_k=1, max_imports=None,
                   initial=()) -> ImportPath:
    """Z&H's greedy forward selection from the import set ``initial`` (module docstring).

    Parameters
    ----------
    K : ndarray of shape (n, n)
        Kernel matrix of the training rows.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    mu : float
        Penalty of the summed loss (> 0).
    epsilon, delta_k : float, int
        Stop when |H_k - H_{k - delta_k}| / |H_k| < epsilon (0: import until ``max_imports``).
    max_imports : int or None
        Cap on the import set (None: n).
    initial : sequence of int
        Rows imported before the selection starts (a warm start along a lambda path).

    Returns
    -------
    ImportPath
    """
    n = len(y)
    cap = n if max_imports is None else min(int(max_imports), n)
    model = fit_submodel(K, y, mu, np.asarray(initial, dtype=int))
    objectives = [model.objective]
    remaining = np.setdiff1d(np.arange(n), model.indices)
    while model.indices.size < cap and remaining.size:
        scores = candidate_objectives(K, y, mu, model, remaining)
        if not np.isfinite(scores).any():
            break
        best = remaining[int(np.argmin(scores))]
        start = np.append(model.a, 0.0)
        model = fit_submodel(K, y, mu, np.append(model.indices, best), start)
        remaining = remaining[remaining != best]
        objectives.append(model.objective)
        if (len(objectives) > delta_k and abs(objectives[-1] - objectives[-1 - delta_k])
                < epsilon * abs(objectives[-1])):
            return ImportPath(model, np.array(objectives), True)
    return ImportPath(model, np.array(objectives), False)
