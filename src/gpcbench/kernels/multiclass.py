"""The multiclass priors built on the covariance of K&G eq. 13 (:mod:`gpcbench.kernels.covariance`).

* :class:`ClassDifferenceCovariance`: the prior of the class differences
  g_i^{y_i,j} = f_i^{y_i} - f_i^j (j != y_i) of J independent latent functions sharing the base
  covariance c, stacked point by point as in K&G eq. 45 (Kim & Ghahramani 2006, sec. 4.2):

    Cov(g_i^{y_i,j}, g_k^{y_k,l}) = (delta(y_i,y_k) - delta(y_i,l) - delta(y_k,j) + delta(j,l))
                                    c(x_i, x_k).                                         (43)

  Multiclass EP (:mod:`gpcbench.inference.ep_multiclass`) and EM-EP run on it.
* :class:`SoftmaxCovariance`: the block-diagonal prior K = blockdiag(K_1..K_C) of the softmax
  model (W&B eq. 12, CKP eq. 3), one covariance per class or one shared, used by the Laplace
  approximation of :mod:`gpcbench.inference.laplace_softmax` and nested EP.

Both offer the protocol :class:`~gpcbench.kernels.covariance.CovarianceFunction` (parameters of
the base covariances, the prior matrix, and gradient contractions pulled back to the base
covariances), so the learning layer treats them as any other prior covariance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpcbench.kernels.covariance import Covariance, CovarianceFunction


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



# ------------------------------------------------------------------ softmax classes
@dataclass(frozen=True)
class SoftmaxCovariance(CovarianceFunction):
    """The C per-class covariances of W&B eq. 12 / CKP eq. 3, as hyperparameter groups.

    Parameters
    ----------
    groups : tuple of Covariance
        One covariance per class (W&B: "a separate set of parameters for each class"), or a
        single covariance shared by all classes.
    n_classes : int
        C >= 2.

    Hyperparameters are handled group-wise: ``log_params`` has shape (n_groups, p) and
    :meth:`gradient_contraction` pulls per-class weight matrices back to the groups (summing
    over the classes of a shared group).
    """

    groups: tuple
    n_classes: int

    def __post_init__(self):
        if len(self.groups) not in (1, self.n_classes):
            raise ValueError(f"need 1 or {self.n_classes} covariances, got {len(self.groups)}")

    def is_degenerate(self, X) -> bool:
        """Whether some class's covariance cannot tell X apart
        (:meth:`Covariance.is_degenerate`)."""
        return any(group.is_degenerate(X) for group in self.groups)

    @property
    def shared(self) -> bool:
        return len(self.groups) == 1 and self.n_classes > 1

    def per_class(self) -> list[Covariance]:
        """The covariance of every class, in class order."""
        return list(self.groups) * self.n_classes if self.shared else list(self.groups)

    @property
    def log_params(self) -> np.ndarray:
        return np.array([cov.log_params for cov in self.groups])

    def learned_mask(self) -> np.ndarray:
        """Which entries of :attr:`log_params` are learned, shape (n_groups, p).

        W&B eq. 4's v0, v1 and w_l: theta0, theta1 and the inverse lengthscales. theta2 stays
        a fixed jitter, and a parameter set to zero stays zero (its log is -inf).
        """
        mask = np.isfinite(self.log_params)
        mask[:, 2] = False
        return mask

    def with_learned(self, values) -> SoftmaxCovariance:
        """A copy with the entries of :meth:`learned_mask` set to the log values ``values``."""
        log_params = self.log_params
        log_params[self.learned_mask()] = values
        return self.with_log_params(log_params)

    def with_log_params(self, log_params) -> SoftmaxCovariance:
        log_params = np.asarray(log_params, dtype=float)
        groups = tuple(cov.with_log_params(row) for cov, row in zip(self.groups, log_params))
        return SoftmaxCovariance(groups, self.n_classes)

    def __call__(self, X) -> np.ndarray:
        """K_c(X, X) for every class, shape (C, n, n)."""
        if self.shared:
            return np.broadcast_to(self.groups[0](X), (self.n_classes, len(X), len(X)))
        return np.stack([cov(X) for cov in self.groups])

    def cross(self, X, X_train) -> np.ndarray:
        """K_c(X, X_train) (no theta2) for every class, shape (C, m, n)."""
        return np.stack([cov(X, X_train) for cov in self.per_class()])

    def diag(self, X) -> np.ndarray:
        """Prior variances k_c(x, x) of new points, shape (C, m)."""
        return np.stack([cov.diag(X) for cov in self.per_class()])

    def gradient_contraction(self, X, weights) -> np.ndarray:
        """sum_ij weights[c]_ij dK_c,ij / d log(param) per group, shape (n_groups, p)."""
        weights = np.asarray(weights, dtype=float)
        if self.shared:
            return self.groups[0].gradient_contraction(X, weights.sum(axis=0))[None, :]
        return np.array([cov.gradient_contraction(X, w) for cov, w in zip(self.groups, weights)])


