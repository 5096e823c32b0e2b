"""Multiclass GPC in the class-difference formulation of Kim & Ghahramani (2006), K&G sec. 4.2.

With J independent latent functions f^1..f^J sharing the base covariance c of K&G eqs. 13-14, the
differences g_i^{y_i,j} = f_i^{y_i} - f_i^j (j != y_i), stacked point by point as in K&G eq. 45,
have the Gaussian prior of K&G eq. 43,

    Cov(g_i^{y_i,j}, g_k^{y_k,l}) = (delta(y_i,y_k) - delta(y_i,l) - delta(y_k,j) + delta(j,l))
                                    c(x_i, x_k),                                         (43)

and the likelihood of K&G eq. 47 is one threshold H(g_s) per difference (K&G eqs. 48-49). Multiclass
EP is therefore the binary EP of :mod:`gpcbench.inference.ep` on n(J-1) sites, all labelled
+1, with the prior covariance :class:`ClassDifferenceCovariance`; EM-EP
(:func:`gpcbench.learning.em_ep.em_ep`) runs unchanged on it, because that class offers the
protocol :class:`~gpcbench.covariance.CovarianceFunction` (parameters of the base covariance,
K&G eq. 43's matrix, and gradient contractions pulled back to the base covariance). A labelling
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

from gpcbench.covariance import Covariance, CovarianceFunction


class ClassDifferenceCovariance(CovarianceFunction):
    """Prior covariance of the class differences g (K&G eqs. 43 and 45) over a base covariance.

    Parameters
    ----------
    base : Covariance
        The covariance c of K&G eqs. 13-14 shared by the J latent functions.
    labels : array-like of int, shape (n,)
        Class index y_i in 0..J-1 of every training point.
    n_classes : int
        J >= 2.

    Site s = (i, j) of K&G eq. 45 is row ``s = i (J-1) + r`` where j is the r-th class other
    than y_i in increasing order; :attr:`site_point` and :attr:`site_other` give i and j.
    The hyperparameters (``params``, ``log_params``, ``param_names``, ``to_dict``) are the
    base covariance's.
    """

    def __init__(self, base: Covariance, labels, n_classes: int, _layout=None):
        self.base = base
        if _layout is None:
            _layout = _site_layout(np.asarray(labels, dtype=int), int(n_classes))
        self.labels, self.n_classes, self.site_point, self.site_other, self.structure = _layout
        self._layout = _layout

    # ---------------------------------------------------------------- parameters
    def is_degenerate(self, X) -> bool:
        """Whether the base covariance cannot tell X apart (:meth:`Covariance.is_degenerate`)."""
        return self.base.is_degenerate(X)

    @property
    def n_sites(self) -> int:
        return self.site_point.size

    @property
    def n_params(self) -> int:
        return self.base.n_params

    @property
    def param_names(self) -> list[str]:
        return self.base.param_names

    @property
    def params(self) -> np.ndarray:
        return self.base.params

    @property
    def log_params(self) -> np.ndarray:
        return self.base.log_params

    def with_params(self, params) -> ClassDifferenceCovariance:
        return ClassDifferenceCovariance(self.base.with_params(params), None, 0, self._layout)

    def with_log_params(self, log_params) -> ClassDifferenceCovariance:
        return ClassDifferenceCovariance(self.base.with_log_params(log_params), None, 0,
                                         self._layout)

    def to_dict(self) -> dict:
        return self.base.to_dict()

    # ---------------------------------------------------------------- evaluation
    def signal(self, X) -> np.ndarray:
        """The base covariance's signal term on the training inputs (n x n)."""
        return self.base.signal(X)

    def __call__(self, X, *, signal=None) -> np.ndarray:
        """The n(J-1) x n(J-1) prior covariance of g on training inputs X (K&G eq. 43)."""
        c = self.base(X, signal=signal)
        return _expand(c, self.n_classes - 1) * self.structure

    def gradient_contraction(self, X, weight, *, signal=None) -> np.ndarray:
        """sum_st weight_st dK_st/d(log parameter): the weights times K&G eq. 43's class factor,
        summed over the class pairs of every point pair, contract the base gradients."""
        weight = np.asarray(weight, dtype=float)
        n, k = self.labels.size, self.n_classes - 1
        if weight.shape != (n * k, n * k):
            raise ValueError(f"weight has shape {weight.shape}, expected ({n * k}, {n * k})")
        pulled = (weight * self.structure).reshape(n, k, n, k).sum(axis=(1, 3))
        return self.base.gradient_contraction(X, pulled, signal=signal)

    def class_loadings(self) -> np.ndarray:
        """L[a, s] = delta(a, y_i) - delta(a, j): f^a's covariance with site s = (i, j) is
        L[a, s] c(x, x_i) (the cross terms of K&G eqs. 51-52)."""
        classes = np.arange(self.n_classes)[:, None]
        return ((classes == self.labels[self.site_point][None, :]).astype(float)
                - (classes == self.site_other[None, :]))


def _site_layout(labels: np.ndarray, n_classes: int):
    """(labels, J, site_point, site_other, K&G eq. 43's class factor) in K&G eq. 45's order."""
    if n_classes < 2:
        raise ValueError(f"need at least 2 classes, got {n_classes}")
    if labels.ndim != 1 or labels.size == 0 or labels.min() < 0 or labels.max() >= n_classes:
        raise ValueError(f"labels must be a non-empty 1-d array of class indices 0..{n_classes - 1}")
    n, k = labels.size, n_classes - 1
    classes = np.arange(n_classes)
    others = np.array([classes[classes != y] for y in range(n_classes)])[labels]  # (n, J-1)
    site_point = np.repeat(np.arange(n), k)
    site_other = others.ravel()
    a, j = labels[site_point], site_other
    structure = ((a[:, None] == a[None, :]).astype(float) - (a[:, None] == j[None, :])
                 - (j[:, None] == a[None, :]) + (j[:, None] == j[None, :]))  # K&G eq. 43
    for array in (labels, site_point, site_other, structure):
        array.setflags(write=False)
    return labels, n_classes, site_point, site_other, structure


def _expand(c: np.ndarray, k: int) -> np.ndarray:
    """Every entry of c repeated as a k x k block (c(x_i, x_k) for all sites of i and k)."""
    return np.repeat(np.repeat(c, k, axis=0), k, axis=1)


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
