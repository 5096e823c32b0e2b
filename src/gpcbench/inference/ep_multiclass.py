"""Multiclass GPC in the class-difference formulation of Kim & Ghahramani (2006), K&G sec. 4.2.

With J independent latent functions f^1..f^J sharing the base covariance c of K&G eqs. 13-14, the
differences g_i^{y_i,j} = f_i^{y_i} - f_i^j (j != y_i), stacked point by point as in K&G eq. 45,
have the Gaussian prior of K&G eq. 43,

    Cov(g_i^{y_i,j}, g_k^{y_k,l}) = (delta(y_i,y_k) - delta(y_i,l) - delta(y_k,j) + delta(j,l))
                                    c(x_i, x_k),                                         (43)

and the likelihood of K&G eq. 47 is one threshold H(g_s) per difference (K&G eqs. 48-49). Multiclass
EP is therefore the binary EP of :mod:`gpcbench.inference.ep` on n(J-1) sites, all labelled
+1, with the prior covariance
:class:`~gpcbench.kernels.multiclass.ClassDifferenceCovariance`; EM-EP
(:func:`gpcbench.learning.em_ep.em_ep`) runs unchanged on it, because that class offers the
protocol :class:`~gpcbench.kernels.covariance.CovarianceFunction` (parameters of the base
covariance, K&G eq. 43's matrix, and gradient contractions pulled back to the base
covariance). A labelling
error epsilon > 0 is put on each difference site, epsilon + (1 - 2 epsilon) H(g_s), the
factorised counterpart of the text's epsilon + (1 - 2 epsilon) prod_j H(g_i^{y_i,j}).

Prediction (K&G eqs. 50-54): the EP posterior gives a J-dimensional Gaussian over the latent
values f~ of a test point (:func:`latent_predictive`); K&G eq. 52's g~^{m,l} is the difference of
its means, K&G eq. 53 and K&G eq. 54 are K&G's label rules, and K&G eq. 50's class probability
P(f~^m > f~^l for all l != m) is a (J-1)-dimensional Gaussian orthant probability
(:func:`class_probabilities`, Genz's method through scipy).
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

from gpcbench.kernels.multiclass import ClassDifferenceCovariance


# ------------------------------------------------------------------------------ prediction
def latent_predictive(ep, covariance: ClassDifferenceCovariance, cross, prior_variance):
    """Mean (m, J) and covariance (m, J, J) of the latent values f~ at m test points.

    ``cross`` is c(x~, X_train) (m x n, no theta2), ``prior_variance`` c(x~, x~) (with
    theta2, as in K&G eq. 25). With K_a = cross[:, site_point] * L[a] the covariance of f~^a with
    g, the EP posterior gives E[f~^a] = K_a alpha and
    Cov(f~^a, f~^b) = delta(a, b) c(x~, x~) - K_a (K + Lambda)^-1 K_b^T (K&G eqs. 24, 51).
    """
    cross = np.atleast_2d(np.asarray(cross, dtype=float))
    spread = cross[:, covariance.site_point]  # (m, n(J-1))
    loadings = covariance.class_loadings()  # (J, n(J-1))
    J = loadings.shape[0]
    blocks = spread[None, :, :] * loadings[:, None, :]  # (J, m, n(J-1)): K_a
    mean = (blocks @ ep.alpha).T
    halves = np.stack([ep.factor.half_solve(block.T) for block in blocks])  # (J, N, m)
    cov = -np.einsum("asm,bsm->mab", halves, halves)
    cov[:, np.arange(J), np.arange(J)] += np.asarray(prior_variance, dtype=float)[:, None]
    return mean, cov


def pairwise_differences(mean: np.ndarray) -> np.ndarray:
    """g~^{m,l} = E[f~^m] - E[f~^l] for all class pairs, shape (n_points, J, J) (K&G eq. 52)."""
    return mean[:, :, None] - mean[:, None, :]


def label_eq53(mean: np.ndarray) -> np.ndarray:
    """argmax_m sum_{l != m} H(g~^{m,l}) (K&G eq. 53); ties go to the lowest class index."""
    votes = (pairwise_differences(mean) > 0).sum(axis=2)
    return np.argmax(votes, axis=1)


def label_eq54(mean: np.ndarray) -> np.ndarray:
    """K&G eq. 54 with j* = the first class: it if every g~^{1,l} > 0, else argmin_l g~^{1,l}."""
    first = pairwise_differences(mean)[:, 0, 1:]  # g~^{1,l}, l = 2..J
    return np.where(np.all(first > 0, axis=1), 0, 1 + np.argmin(first, axis=1))


def orthant_probabilities(mean, cov, rng=None) -> np.ndarray:
    """P(f~^m > f~^l for all l != m) for every class m (K&G eq. 50), shape (n_points, J).

    For J = 2 this is Phi of a standardised difference; for J > 2 each class is a
    (J-1)-dimensional orthant probability of N(D_m mean, D_m cov D_m^T), D_m the difference
    map f -> (f^m - f^l)_{l != m}, integrated by Genz's method
    (``scipy.stats.multivariate_normal.cdf``; quasi-random, ``rng`` fixes it). The events
    partition the latent space, so the values sum to one up to integration error.
    """
    mean = np.atleast_2d(np.asarray(mean, dtype=float))
    n_points, J = mean.shape
    cov = np.asarray(cov, dtype=float).reshape(n_points, J, J)
    rng = np.random.default_rng(rng)
    probs = np.empty((n_points, J))
    for m in range(J):
        diff = -np.delete(np.eye(J), m, axis=0)
        diff[:, m] = 1.0  # rows e_m - e_l, l != m
        g_mean = mean @ diff.T
        g_cov = np.einsum("la,pab,kb->plk", diff, cov, diff)
        if J == 2:
            sd = np.sqrt(np.maximum(g_cov[:, 0, 0], np.finfo(float).tiny))
            probs[:, m] = special.ndtr(g_mean[:, 0] / sd)
            continue
        for p in range(n_points):  # P(g > 0) = P(-g < 0)
            probs[p, m] = stats.multivariate_normal.cdf(
                np.zeros(J - 1), mean=-g_mean[p], cov=g_cov[p], allow_singular=True,
                abseps=1e-6, releps=1e-6, rng=rng)
    return probs


def class_probabilities(mean, cov, rng=None) -> np.ndarray:
    """:func:`orthant_probabilities` normalised over classes (rows sum to one exactly)."""
    probs = orthant_probabilities(mean, cov, rng)
    return probs / probs.sum(axis=1, keepdims=True)
