"""The covariance function of Kim & Ghahramani (2006), K&G eqs. 13-14, and its gradients.

    c(x_i, x_j) = theta0 exp{-1/2 sum_m l_m d_m(x_i^m, x_j^m)} + theta1 + theta2 delta(i, j)   (13)

    d_m(a, b) = (a - b)^2        if feature m is continuous                               (14)
              = 1 - delta(a, b)  if feature m is discrete

theta0 is the signal variance, theta1 the bias, theta2 the latent noise variance (it sits on
the diagonal of the training covariance only: a test point is a *new* point, so its
covariance with the training points has no theta2 term while its own variance has it, as in
K&G eqs. 24-25) and l_m the inverse lengthscales, either one shared by all features (K&G's
"s" variants) or one per feature ("m", ARD).

Hyperparameters are optimised in log space (K&G sec. 3.5), so the parameter vector is

    [log theta0, log theta1, log theta2, log l_1, ..., log l_k],   k = 1 (shared) or d (ARD),

and :meth:`Covariance.gradients` returns dC/d(log parameter), one n x n slice per entry.
The same object serves every Gaussian-process method of the package (EP, Laplace,
variational, multiclass EP).

:class:`CovarianceFunction` is what the inference and learning layers ask of a prior
covariance; :class:`Covariance` implements it, and so do the multiclass priors built on it
(:class:`~gpcbench.kernels.multiclass.ClassDifferenceCovariance`, K&G eq. 43, and
:class:`~gpcbench.kernels.multiclass.SoftmaxCovariance`, W&B eq. 12).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from scipy.spatial.distance import cdist

SCALAR_NAMES = ("theta0", "theta1", "theta2")
#: The hyperparameters of K&G eq. 13 by name (``inverse_lengthscale`` covers all the l_m).
COVARIANCE_NAMES = (*SCALAR_NAMES, "inverse_lengthscale")
#: Rows of X checked by :meth:`Covariance.is_degenerate` (O(n_points^2 d), whatever n).
DEGENERACY_SAMPLE = 200


class DegenerateCovarianceWarning(UserWarning):
    """The fitted prior covariance does not depend on the training inputs (see
    :meth:`Covariance.is_degenerate`)."""


class CovarianceFunction(Protocol):
    """A prior covariance with hyperparameters learned in log space (K&G sec. 3.5).

    The training-input prior, its contraction with a weight of the same shape (the gradient
    of every evidence or bound), and the log hyperparameter array in and out.
    """

    @property
    def log_params(self) -> np.ndarray:
        """The log hyperparameters (a parameter equal to zero maps to -inf)."""

    def with_log_params(self, log_params) -> CovarianceFunction:
        """A copy with the hyperparameters exp(log_params), same layout as :attr:`log_params`."""

    def __call__(self, X) -> np.ndarray:
        """The prior covariance of the latent values at the training inputs X."""

    def gradient_contraction(self, X, weight) -> np.ndarray:
        """sum_ij weight_ij dK_ij/d(log parameter) for ``weight`` of the shape of
        ``self(X)``, in the layout of :attr:`log_params`."""

    def is_degenerate(self, X) -> bool:
        """True when the prior cannot tell the inputs X apart (see
        :meth:`Covariance.is_degenerate`)."""


def hyperparameter_mask(covariance, names) -> np.ndarray:
    """Which entries of ``covariance.params`` (any covariance with ``param_names``) the
    hyperparameter ``names`` cover: every entry of an ARD inverse_lengthscale for
    'inverse_lengthscale'."""
    return np.array([name.split("[")[0] in names for name in covariance.param_names])


@dataclass(frozen=True)
class Covariance(CovarianceFunction):
    """Covariance of K&G eq. 13 with the feature distance of K&G eq. 14.

    Parameters
    ----------
    theta0, theta1, theta2 : float
        Signal variance, bias and latent-noise variance (all >= 0).
    inverse_lengthscale : float or array-like of shape (d,)
        The l_m of K&G eq. 13: a scalar (one shared value) or one value per feature (ARD).
    discrete_features : array-like of bool or int, optional
        Boolean mask over the d features, or indices of the discrete ones; those use the
        1 - delta distance of K&G eq. 14. None means all features are continuous.
    """

    theta0: float
    theta1: float
    theta2: float
    inverse_lengthscale: np.ndarray
    discrete_features: np.ndarray | None = field(default=None)

    def __post_init__(self):
        scales = np.atleast_1d(np.asarray(self.inverse_lengthscale, dtype=float)).copy()
        if scales.ndim != 1 or scales.size == 0:
            raise ValueError("inverse_lengthscale must be a scalar or a 1-d array")
        scales.setflags(write=False)
        object.__setattr__(self, "inverse_lengthscale", scales)
        for name in SCALAR_NAMES:
            value = float(getattr(self, name))
            object.__setattr__(self, name, value)
        values = self.params
        if not np.all(np.isfinite(values)) or np.any(values < 0):
            raise ValueError(f"covariance hyperparameters must be finite and >= 0, got {values}")
        if self.discrete_features is not None:
            mask = np.asarray(self.discrete_features)
            mask = mask.copy()
            mask.setflags(write=False)
            object.__setattr__(self, "discrete_features", mask)

    # ------------------------------------------------------------------ parameters
    @property
    def shared(self) -> bool:
        """True when one inverse lengthscale is shared by all features (the 's' variants)."""
        return self.inverse_lengthscale.size == 1

    @property
    def n_params(self) -> int:
        return 3 + self.inverse_lengthscale.size

    @property
    def param_names(self) -> list[str]:
        """Names of the entries of :attr:`params` (and of :meth:`gradients`)."""
        if self.shared:
            return [*COVARIANCE_NAMES]
        return [*SCALAR_NAMES] + [
            f"inverse_lengthscale[{m}]" for m in range(self.inverse_lengthscale.size)
        ]

    @property
    def params(self) -> np.ndarray:
        """[theta0, theta1, theta2, l_1..l_k] in natural units."""
        return np.concatenate([[self.theta0, self.theta1, self.theta2], self.inverse_lengthscale])

    @property
    def log_params(self) -> np.ndarray:
        """Log of :attr:`params`; a parameter equal to zero maps to -inf (it cannot be learned)."""
        with np.errstate(divide="ignore"):
            return np.log(self.params)

    def with_log_params(self, log_params) -> Covariance:
        """A copy with all parameters replaced by exp(log_params)."""
        return self.with_params(np.exp(np.asarray(log_params, dtype=float)))

    def with_params(self, params) -> Covariance:
        """A copy with all parameters replaced (natural units, same layout as :attr:`params`)."""
        params = np.asarray(params, dtype=float)
        if params.shape != (self.n_params,):
            raise ValueError(f"expected {self.n_params} parameters, got shape {params.shape}")
        return Covariance(*params[:3], params[3:], self.discrete_features)

    def to_dict(self) -> dict:
        """Plain-Python values (JSON-ready): theta0, theta1, theta2, inverse_lengthscale."""
        scales = self.inverse_lengthscale
        return {
            "theta0": self.theta0,
            "theta1": self.theta1,
            "theta2": self.theta2,
            "inverse_lengthscale": float(scales[0]) if self.shared else scales.tolist(),
        }

    # ------------------------------------------------------------------ evaluation
    def __call__(self, X, X2=None, *, signal=None) -> np.ndarray:
        """Covariance matrix C(X, X2) of K&G eq. 13.

        With ``X2=None`` this is the training covariance, theta2 included on the diagonal
        (delta(i, j) of K&G eq. 13 is the identity of data points, not of their values). With
        ``X2`` given it is the cross-covariance, which has no theta2 term. ``signal``, if
        given, is :meth:`signal` of the same inputs (computed once, reused).
        """
        same = X2 is None
        cov = (self.signal(X, X2) if signal is None else signal) + self.theta1
        if same:
            cov[np.diag_indices_from(cov)] += self.theta2
        return cov

    def signal(self, X, X2=None) -> np.ndarray:
        """The first term of K&G eq. 13, theta0 exp(-1/2 sum_m l_m d_m(x_i^m, x2_j^m))."""
        X = _as_2d(X)
        X2 = X if X2 is None else _as_2d(X2)
        return self.theta0 * np.exp(-0.5 * self._weighted_distance(X, X2))

    def is_degenerate(self, X, n_points: int = DEGENERACY_SAMPLE) -> bool:
        """True when every off-diagonal exp(-1/2 sum_m l_m d_m) of eq. 13 is 0, or every one
        is 1, to rounding, among the first ``n_points`` rows of X: the inputs' scale is so far
        from the lengthscales that C no longer depends on them (e.g. inputs in units of 1e8
        with l_m = 1), and every prediction falls back to the prior."""
        X = _as_2d(X)[:n_points]
        if X.shape[0] < 2:
            return False
        correlation = np.exp(-0.5 * self._weighted_distance(X, X))[np.triu_indices(X.shape[0], 1)]
        rounding = np.finfo(float).eps
        return bool(correlation.max() <= rounding or correlation.min() >= 1.0 - rounding)

    def diag(self, X) -> np.ndarray:
        """Prior variances c(x, x) = theta0 + theta1 + theta2 of new X (kappa, K&G eq. 24)."""
        n = _as_2d(X).shape[0]
        return np.full(n, self.theta0 + self.theta1 + self.theta2)

    def gradients(self, X) -> np.ndarray:
        """dC/d(log parameter) for the training covariance, shape (n_params, n, n).

        d/dlog theta0 = theta0 E, d/dlog theta1 = theta1 11^T, d/dlog theta2 = theta2 I with
        E = exp{-1/2 sum_m l_m d_m}, and d/dlog l_m = theta0 E * (-1/2 l_m d_m) (elementwise);
        the shared case sums the last over m.
        """
        X = _as_2d(X)
        n, d = X.shape
        self._check_dimension(d)
        discrete = self._discrete_mask(d)
        feature_dist = np.stack(
            [_feature_distance(X[:, m], X[:, m], discrete[m]) for m in range(d)]
        )
        scales = self._scales(d)
        signal = self.theta0 * np.exp(-0.5 * np.tensordot(scales, feature_dist, axes=1))
        grads = np.empty((self.n_params, n, n))
        grads[0] = signal
        grads[1] = self.theta1
        grads[2] = self.theta2 * np.eye(n)
        if self.shared:
            grads[3] = -0.5 * self.inverse_lengthscale[0] * signal * feature_dist.sum(axis=0)
        else:
            grads[3:] = -0.5 * scales[:, None, None] * feature_dist * signal
        return grads

    def gradient_contraction(self, X, weight, *, signal=None) -> np.ndarray:
        """sum_ij weight_ij dC_ij/d(log parameter), for every parameter, shape (n_params,).

        Equals ``gradients(X).reshape(p, -1) @ weight.ravel()`` but never forms the
        (p, n, n) stack: for a continuous feature,
        sum_ij g_ij (x_i - x_j)^2 = sum_i x_i^2 (g 1 + g^T 1)_i - 2 x^T g x,  g = weight * theta0 E
        (features centred first to limit cancellation); discrete features use K&G eq. 14 directly.
        The diagonal of g is left out of the distance terms: every d_m(x_i, x_i) is 0, but in
        the expansion it adds terms that cancel only to rounding error, which the inverse
        lengthscale then multiplies (at l ~ e^400, where the off-diagonal E underflows to 0 and
        the exact value is 0, that left gradients of 1e156 and sent W&B's HMC trajectories to
        overflow). ``signal`` is :meth:`signal` of X if the caller has it already.
        """
        X = _as_2d(X)
        n, d = X.shape
        weight = np.asarray(weight, dtype=float)
        if weight.shape != (n, n):
            raise ValueError(f"weight has shape {weight.shape}, expected ({n}, {n})")
        scales = self._scales(d)
        g = weight * (self.signal(X) if signal is None else signal)
        out = np.empty(self.n_params)
        out[0] = g.sum()
        out[1] = self.theta1 * weight.sum()
        out[2] = self.theta2 * np.trace(weight)
        np.fill_diagonal(g, 0.0)  # d_m(x_i, x_i) = 0
        per_feature = self._contract_feature_distances(X, g)
        if self.shared:
            out[3] = -0.5 * self.inverse_lengthscale[0] * per_feature.sum()
        else:
            out[3:] = -0.5 * scales * per_feature
        return out

    # ------------------------------------------------------------------ helpers
    def _contract_feature_distances(self, X, g) -> np.ndarray:
        """sum_ij g_ij d_m(x_i^m, x_j^m) for every feature m (K&G eq. 14)."""
        d = X.shape[1]
        discrete = self._discrete_mask(d)
        out = np.empty(d)
        cont = np.flatnonzero(~discrete)
        if cont.size:
            xc = X[:, cont] - X[:, cont].mean(axis=0)
            both_sums = g.sum(axis=1) + g.sum(axis=0)
            out[cont] = (xc**2).T @ both_sums - 2.0 * np.einsum("im,im->m", xc, g @ xc)
        columns = np.flatnonzero(discrete)
        if columns.size:  # sum_ij g_ij [x_i != x_j] = sum(g) - sum_v e_v^T g e_v, e_v = [x = v]
            codes, _, owner = _value_indicators(X, X, columns)
            matched = np.einsum("ic,ic->c", codes, g @ codes)
            out[columns] = g.sum() - np.bincount(owner, weights=matched, minlength=columns.size)
        return out

    def _scales(self, d: int) -> np.ndarray:
        self._check_dimension(d)
        return np.broadcast_to(self.inverse_lengthscale, (d,))

    def _check_dimension(self, d: int) -> None:
        if not self.shared and self.inverse_lengthscale.size != d:
            raise ValueError(
                f"{self.inverse_lengthscale.size} inverse lengthscales given for {d} features"
            )

    def _discrete_mask(self, d: int) -> np.ndarray:
        if self.discrete_features is None:
            return np.zeros(d, dtype=bool)
        given = self.discrete_features
        if given.dtype == bool:
            if given.shape != (d,):
                raise ValueError(f"discrete_features mask has shape {given.shape}, expected ({d},)")
            return given
        mask = np.zeros(d, dtype=bool)
        mask[given.astype(int)] = True
        return mask

    def _weighted_distance(self, X, X2) -> np.ndarray:
        """sum_m l_m d_m(x_i^m, x2_j^m) of K&G eqs. 13-14."""
        d = X.shape[1]
        if X2.shape[1] != d:
            raise ValueError(f"X has {d} features, X2 has {X2.shape[1]}")
        scales = self._scales(d)
        discrete = self._discrete_mask(d)
        cont = ~discrete
        dist = np.zeros((X.shape[0], X2.shape[0]))
        if cont.any():
            root = np.sqrt(scales[cont])
            dist += cdist(X[:, cont] * root, X2[:, cont] * root, "sqeuclidean")
        columns = np.flatnonzero(discrete)
        if columns.size:  # sum_m l_m [x^m != x2^m] = sum_m l_m - sum_m l_m [x^m = x2^m]
            codes, codes2, owner = _value_indicators(X, X2, columns)
            root = np.sqrt(scales[columns][owner])
            left = codes * root
            # ``left @ left.T`` (one array) is computed symmetric by numpy, as C must be
            matched = left @ (left if X2 is X else codes2 * root).T
            dist += np.maximum(scales[columns].sum() - matched, 0.0)
        return dist


def _value_indicators(X, X2, columns):
    """Indicator codes [x^m = v] of the discrete ``columns``, one column per (feature m, value v
    taken in X or X2): (codes of X, codes of X2, position in ``columns`` of each code's feature).
    Contracting codes turns the per-feature loops of K&G eq. 14's 1 - delta into matrix products."""
    values = [np.unique(np.concatenate([X[:, m], X2[:, m]])) for m in columns]
    codes = np.hstack([X[:, m, None] == v for m, v in zip(columns, values)]).astype(float)
    codes2 = codes if X2 is X else np.hstack(
        [X2[:, m, None] == v for m, v in zip(columns, values)]).astype(float)
    owner = np.repeat(np.arange(columns.size), [v.size for v in values])
    return codes, codes2, owner


def _feature_distance(a: np.ndarray, b: np.ndarray, discrete: bool) -> np.ndarray:
    """d_m of K&G eq. 14 between all pairs of the 1-d arrays a and b."""
    if discrete:
        return (a[:, None] != b[None, :]).astype(float)
    return (a[:, None] - b[None, :]) ** 2


def _as_2d(X) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"expected a 2-d array of inputs, got shape {X.shape}")
    return X
