"""Likelihoods p(y | f) of every model, computed stably in the log domain (one concept here).

One interface, :class:`Likelihood`, with two capabilities, each used by one family of
inference methods:

* tilted moments (EP, :mod:`gpcbench.inference.ep`): :meth:`Likelihood.tilted`, the EM-EP
  M-step pieces and the predictive integral; the numba kernels and their equations are in
  :mod:`gpcbench.tilted_moments`. :class:`NoisyThresholdLikelihood` (K&G eq. 10) and
  :class:`GaussianLikelihood` (Rodrigues sec. 4) have it.
* log-likelihood derivatives (Laplace and MCMC, :mod:`gpcbench.inference.laplace`,
  :mod:`gpcbench.mcmc.gp_latent`): :meth:`Likelihood.log_likelihood`,
  :meth:`Likelihood.derivatives` and the predictive integral. :class:`LogisticLikelihood`
  (W&B sec. 3) has it; :class:`ProbitLikelihood` has both, being the noisy threshold with
  epsilon = 0 and unit probit variance (the one probit of the package).

The softmax of the multiclass models, log p(y | F), is :func:`softmax_log_likelihood`.

Derivatives
-----------
Labels are y in {-1, +1} (W&B's targets t in {0, 1} are t = (y + 1) / 2):

    logistic   p(y | f) = sigma(y f) = 1 / (1 + exp(-y f))       (W&B sec. 3)
    probit     p(y | f) = Phi(y f)

Both are log-concave, so W = -d^2 log p / df^2 >= 0 and the Newton problem of W&B Appendix A is
convex. :meth:`~Likelihood.derivatives` returns log p and its first three derivatives in f
(GPML's ``lp``, ``dlp``, ``d2lp``, ``d3lp``); the third enters the implicit term of the evidence
gradient (W&B Appendix B). Everything is evaluated in the log domain: ``log_expit`` for the
logistic; for the probit scipy's ``log_ndtr`` and the inverse Mills ratio w = N(z) / Phi(z)
through ``erfcx``, finite for every z. With z = y f and t = z + w,

    dlog p/df = y w,   d2 = -w t,   d3 = y w (t (z + 2 w) - 1).

Predictive probability p(y = +1 | x) = integral p(+1 | f) N(f | m, v) df (W&B eq. 7):

* probit: Phi(m / sqrt(1 + v)), exact;
* logistic: W&B Appendix A's expansion in five scaled error functions,
  sigma(x) ~ sum_i c_i Phi(lambda_i x) (Phi(z) = (1 + erf(z / sqrt 2)) / 2), each term of which
  integrates in closed form, integral Phi(lambda f) N(f | m, v) df = Phi(lambda m / sqrt(1 +
  lambda^2 v)). W&B's own constants (W&B footnote 6) are lost in our copy of W&B; the ones
  below were fitted here (c_i by least squares on x in [0, 40] with sum c_i = 1 so both tails
  are exact, lambda_i by Nelder-Mead on the maximum error) and give
  max_x |sigma(x) - sum_i c_i Phi(lambda_i x)| = 1.2e-6, hence the predictive probability to
  within 1.2e-6 for every (m, v) (tests/test_laplace.py checks both).

Softmax
-------
J classes, latent values F of shape (J, n), one-hot targets Y (J, n) (W&B eq. 11, CKP eq. 14):

    log p(y | F) = sum_i (y_i^T f_i - log sum_c exp f_i^c).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy import special

from gpcbench.tilted_moments import GAUSSIAN, THRESHOLD, log_ndtr_array, tilted_arrays

ERF_SCALES = np.array([0.2924357022990889, 0.4032102828390699, 0.5572672081875336,
                       0.7780784803207781, 1.0951910561047438])
ERF_WEIGHTS = np.array([0.02276022890168735, 0.18006828912990197, 0.4116685686317932,
                        0.32867021235056443, 0.05683270098605298])
_SQRT2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


class TiltedMoments(NamedTuple):
    """Normaliser, moments and moment-matched site of the tilted distributions."""

    log_z: np.ndarray
    mean: np.ndarray
    variance: np.ndarray
    site_precision: np.ndarray
    site_natural_mean: np.ndarray


class Likelihood:
    """The interface of every likelihood p(y | f); a subclass implements the capabilities it
    has (module docstring) and the others raise NotImplementedError.

    Tilted moments (EP): ``kind`` (the kernel of :func:`~gpcbench.tilted_moments.tilted_scalar`),
    ``parameter_name``, :attr:`params`, :meth:`with_parameter`, :meth:`expected_log_likelihood`
    and :meth:`optimal_parameter`; :meth:`tilted` and :meth:`log_predictive` follow from them.
    Derivatives (Laplace, MCMC): :meth:`log_likelihood` and :meth:`derivatives`. Both:
    :meth:`predictive_probability`.
    """

    kind: int | None = None
    parameter_name: str

    @property
    def params(self) -> np.ndarray:
        raise NotImplementedError(f"{type(self).__name__} has no tilted moments")

    def tilted(self, y, cavity_mean, cavity_variance) -> TiltedMoments:
        """Tilted moments for every site given Gaussian cavities N(cavity_mean, cavity_variance)."""
        if self.kind is None:
            raise NotImplementedError(f"{type(self).__name__} has no tilted moments")
        y, mu, var = np.broadcast_arrays(
            *(np.asarray(a, dtype=float) for a in (y, cavity_mean, cavity_variance))
        )
        if not np.all((var > 0) & np.isfinite(var)):
            raise ValueError("cavity variances must be positive and finite")
        out = tilted_arrays(self.kind, self.params, y.ravel(), mu.ravel(), var.ravel())
        return TiltedMoments(*(row.reshape(y.shape) for row in out))

    def log_predictive(self, y, mean, variance) -> np.ndarray:
        """log integral N(f | mean, variance) p(y | f) df, elementwise."""
        return self.tilted(y, mean, variance).log_z

    def expected_log_likelihood(self, y, mean, variance) -> float:
        """sum_i E_q[log p(y_i | f_i)], q(f_i) = N(mean_i, variance_i) (K&G Appendix A)."""
        raise NotImplementedError(f"{type(self).__name__} has no EM-EP M-step")

    def optimal_parameter(self, y, mean, variance) -> float:
        """The likelihood parameter maximising :meth:`expected_log_likelihood` (closed form)."""
        raise NotImplementedError(f"{type(self).__name__} has no closed-form M-step")

    def with_parameter(self, value) -> Likelihood:
        raise NotImplementedError(f"{type(self).__name__} has no likelihood parameter")

    def log_likelihood(self, z) -> np.ndarray:
        """log p(y | f) as a function of z = y f, elementwise."""
        raise NotImplementedError(f"{type(self).__name__} has no derivatives")

    def derivatives(self, y, f):
        """(log p, dlog p/df, d2log p/df2, d3log p/df3), elementwise in y and f."""
        raise NotImplementedError(f"{type(self).__name__} has no derivatives")

    def predictive_probability(self, mean, variance) -> np.ndarray:
        """p(y = +1 | x) = integral p(+1 | f) N(f | mean, variance) df."""
        raise NotImplementedError


class NoisyThresholdLikelihood(Likelihood):
    """epsilon + (1 - 2 epsilon) Phi(y f / sqrt(probit_variance)); K&G eq. 10 if it is 0.

    Parameters
    ----------
    epsilon : float in [0, 0.5)
        Labelling-error probability of K&G eq. 10.
    probit_variance : float >= 0
        0 gives the hard threshold H(y f) of K&G eq. 10; 1 (with epsilon = 0) the probit Phi(y f).
    """

    kind = THRESHOLD
    parameter_name = "epsilon"

    def __init__(self, epsilon: float = 0.0, probit_variance: float = 0.0):
        if not 0.0 <= epsilon < 0.5:
            raise ValueError(f"epsilon must lie in [0, 0.5), got {epsilon}")
        if not probit_variance >= 0.0:
            raise ValueError(f"probit_variance must be >= 0, got {probit_variance}")
        self.epsilon = float(epsilon)
        self.probit_variance = float(probit_variance)

    def __repr__(self):
        return (
            f"NoisyThresholdLikelihood(epsilon={self.epsilon}, "
            f"probit_variance={self.probit_variance})"
        )

    @property
    def params(self) -> np.ndarray:
        return np.array([self.epsilon, self.probit_variance])

    def with_parameter(self, value) -> NoisyThresholdLikelihood:
        return NoisyThresholdLikelihood(value, self.probit_variance)

    def predictive_probability(self, mean, variance, label_noise: bool = False) -> np.ndarray:
        """p(y = +1 | x) of K&G eq. 25 (``label_noise=False``) or K&G eq. 26 (``True``)."""
        lik = self if label_noise else NoisyThresholdLikelihood(0.0, self.probit_variance)
        mean = np.asarray(mean, dtype=float)
        variance = np.maximum(np.asarray(variance, dtype=float), np.finfo(float).tiny)
        return np.exp(lik.log_predictive(np.ones_like(mean), mean, variance))

    def decision_value(self, mean, variance) -> np.ndarray:
        """The argument of Phi in K&G eq. 25, mean / sqrt(variance + probit variance); its sign is
        that of the mean and it orders points as :meth:`predictive_probability` does."""
        return mean / np.sqrt(np.maximum(variance + self.probit_variance, np.finfo(float).tiny))

    def _wrong_side_log_probability(self, y, mean, variance):
        """log q(y f < 0) under q(f) = N(mean, variance) (hard threshold only)."""
        return log_ndtr_array(-np.asarray(y) * mean / np.sqrt(variance))

    def expected_log_likelihood(self, y, mean, variance) -> float:
        y, mean, variance = (np.asarray(a, dtype=float) for a in (y, mean, variance))
        if self.probit_variance > 0:
            return float(np.sum(self._gauss_hermite_expectation(y, mean, variance)))
        p_wrong = np.exp(self._wrong_side_log_probability(y, mean, variance))
        if self.epsilon == 0.0:
            return 0.0 if np.all(p_wrong == 0) else -np.inf
        return float(
            np.sum((1 - p_wrong) * math.log1p(-self.epsilon) + p_wrong * math.log(self.epsilon))
        )

    def optimal_parameter(self, y, mean, variance) -> float:
        """epsilon = mean_i q(y_i f_i < 0): maximiser of F_epsilon (K&G Appendix A, K&G eq. 56)."""
        if self.probit_variance > 0:
            raise NotImplementedError("the closed-form epsilon update needs probit_variance = 0")
        y, mean, variance = (np.asarray(a, dtype=float) for a in (y, mean, variance))
        p_wrong = np.exp(self._wrong_side_log_probability(y, mean, variance))
        return float(min(np.mean(p_wrong), 0.5 - 1e-9))

    def _gauss_hermite_expectation(self, y, mean, variance, degree: int = 64):
        nodes, weights = np.polynomial.hermite_e.hermegauss(degree)
        f = mean[:, None] + np.sqrt(variance)[:, None] * nodes[None, :]
        z = y[:, None] * f / math.sqrt(self.probit_variance)
        log_cdf = log_ndtr_array(z)
        if self.epsilon > 0:
            log_lik = np.logaddexp(math.log(self.epsilon), math.log1p(-2 * self.epsilon) + log_cdf)
        else:
            log_lik = log_cdf
        return log_lik @ weights / math.sqrt(2 * math.pi)


class ProbitLikelihood(NoisyThresholdLikelihood):
    """p(y | f) = Phi(y f): the noisy threshold with epsilon = 0 and unit probit variance (the
    threshold with unit latent noise, text after K&G eq. 14), with both capabilities."""

    def __init__(self):
        super().__init__(epsilon=0.0, probit_variance=1.0)

    def __repr__(self):
        return "ProbitLikelihood()"

    def log_likelihood(self, z):
        """log Phi(z), elementwise (scipy's log_ndtr)."""
        return special.log_ndtr(z)

    def derivatives(self, y, f):
        y, f = np.asarray(y, dtype=float), np.asarray(f, dtype=float)
        z = y * f
        w = _SQRT_2_OVER_PI / special.erfcx(-z / _SQRT2)  # N(z) / Phi(z); 0 when erfcx = inf
        t = z + w
        return self.log_likelihood(z), y * w, -w * t, y * w * (t * (z + 2.0 * w) - 1.0)

    def predictive_probability(self, mean, variance, label_noise: bool = False):
        """Phi(mean / sqrt(1 + variance)), exact (epsilon = 0: no label noise either way)."""
        return special.ndtr(np.asarray(mean, dtype=float) / np.sqrt(1.0 + np.asarray(variance)))


class GaussianLikelihood(Likelihood):
    """N(y | f, noise_variance): GP regression, the exact case of EP (Rodrigues sec. 4)."""

    kind = GAUSSIAN
    parameter_name = "noise_variance"

    def __init__(self, noise_variance: float = 1.0):
        if not noise_variance > 0:
            raise ValueError(f"noise_variance must be > 0, got {noise_variance}")
        self.noise_variance = float(noise_variance)

    def __repr__(self):
        return f"GaussianLikelihood(noise_variance={self.noise_variance})"

    @property
    def params(self) -> np.ndarray:
        return np.array([self.noise_variance])

    def with_parameter(self, value) -> GaussianLikelihood:
        return GaussianLikelihood(value)

    def expected_log_likelihood(self, y, mean, variance) -> float:
        y, mean, variance = (np.asarray(a, dtype=float) for a in (y, mean, variance))
        s2 = self.noise_variance
        return float(
            np.sum(-0.5 * np.log(2 * np.pi * s2) - ((y - mean) ** 2 + variance) / (2 * s2))
        )

    def optimal_parameter(self, y, mean, variance) -> float:
        """sigma2 = mean_i E_q[(y_i - f_i)^2]."""
        y, mean, variance = (np.asarray(a, dtype=float) for a in (y, mean, variance))
        return float(np.mean((y - mean) ** 2 + variance))


class LogisticLikelihood(Likelihood):
    """p(y | f) = sigma(y f), the logistic transfer function of W&B sec. 3 (derivatives only)."""

    def log_likelihood(self, z):
        """log sigma(z), elementwise."""
        return special.log_expit(z)

    def derivatives(self, y, f):
        y, f = np.asarray(y, dtype=float), np.asarray(f, dtype=float)
        pi = special.expit(f)
        variance = pi * special.expit(-f)  # pi (1 - pi) without cancellation
        return (self.log_likelihood(y * f), y * special.expit(-y * f), -variance,
                variance * np.tanh(0.5 * f))

    def predictive_probability(self, mean, variance):
        """integral sigma(f) N(f | mean, variance) df by the erf expansion of W&B Appendix A."""
        mean = np.asarray(mean, dtype=float)[..., None]
        variance = np.asarray(variance, dtype=float)[..., None]
        z = ERF_SCALES * mean / np.sqrt(1.0 + ERF_SCALES**2 * variance)
        return special.ndtr(z) @ ERF_WEIGHTS


LIKELIHOODS = {"logistic": LogisticLikelihood(), "probit": ProbitLikelihood()}


def get_likelihood(name: str) -> Likelihood:
    """The likelihood with derivatives called ``name`` ('logistic' or 'probit')."""
    try:
        return LIKELIHOODS[name]
    except KeyError:
        raise ValueError(f"likelihood must be one of {sorted(LIKELIHOODS)}, got {name!r}") from None


# ------------------------------------------------------------------ softmax likelihood
def softmax_log_likelihood(F, Y) -> float:
    """log p(y | F) = sum_i (y_i^T f_i - log sum_c exp f_i^c) (W&B eq. 11; CKP eq. 14).

    F and the one-hot Y have shape (J, n). The MCMC sampler calls this some 10^6 times per
    fit, where scipy's ``logsumexp`` costs about seven times more than the numpy below.
    """
    return float(np.sum(Y * F) - np.sum(_log_sum_exp_columns(F)))


def _log_sum_exp_columns(F):
    """log sum_c exp F[c, i] for every column i, by scipy's ``logsumexp`` arithmetic.

    With M_i the column maximum and m_i the number of entries equal to it, the other terms are
    summed apart, s_i = sum_{F[c, i] < M_i} exp(F[c, i] - M_i) / m_i, and the result is
    log1p(s_i) + log(m_i) + M_i (the log1p keeps a small s_i exact): the operations of scipy
    1.17's ``logsumexp``, in its order, hence its values to the last bit (tests check it).
    """
    top = F.max(axis=0)
    is_top = F == top
    count = is_top.sum(axis=0)
    rest = (np.exp(F - top) * ~is_top).sum(axis=0) / count  # the maxima's terms set to 0
    return np.log1p(rest) + np.log(count) + top
