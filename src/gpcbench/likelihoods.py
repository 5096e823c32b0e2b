"""Likelihoods p(y | f) of every model, computed stably in the log domain (one concept here).

Three families, one per inference method that uses them:

* EP (:mod:`gpcbench.inference.ep`): the noisy threshold and the Gaussian, through their
  tilted moments (this docstring, then the numba kernels and :class:`Likelihood`).
* Laplace and MCMC (:mod:`gpcbench.inference.laplace`, :mod:`gpcbench.mcmc.gp_latent`): the
  logistic and probit, through log p and its derivatives in f, and their Gaussian predictive
  integrals (:class:`LogisticLikelihood`, :class:`ProbitLikelihood`, :func:`get_likelihood`).
* Multiclass (:mod:`gpcbench.inference.laplace_softmax`, :mod:`gpcbench.mcmc.gp_latent`): the
  softmax, log p(y | F) (:func:`softmax_log_likelihood`).

EP likelihoods
--------------
The classification likelihood is the noisy threshold of Kim & Ghahramani (2006), eq. 10,

    p(y | f) = epsilon + (1 - 2 epsilon) H(y f),

generalised by a probit variance s2 >= 0 to  epsilon + (1 - 2 epsilon) Phi(y f / sqrt(s2)):
s2 = 0 is eq. 10 exactly, and s2 = 1, epsilon = 0 is the probit (cumulative normal) model,
which is the threshold model with unit latent noise (text after eq. 14).

Given a Gaussian cavity N(f | mu, v) the *tilted* distribution is N(f | mu, v) p(y | f) / Z.
For the noisy threshold, with  z = y mu / sqrt(s2 + v)  (eq. 20 when s2 = 0),

    Z = epsilon + (1 - 2 epsilon) Phi(z)                                          (eq. 20)
    w = (1 - 2 epsilon) N(z) / Z,  so that  dlog Z/dmu = y w / sqrt(s2 + v)  (alpha_i of eq. 20)
    d2 log Z / dmu2 = -w (z + w) / (s2 + v),

and the moment-matched site (eq. 21 in natural parameters) is

    site precision      = w (z + w) / (s2 + v (1 - w (z + w)))
    site natural mean   = y sqrt(s2 + v) w (1 + z (z + w)) / (s2 + v (1 - w (z + w))).

Everything is evaluated from log Phi (erfc-based, with the Laplace continued fraction of the
Mills ratio in the left tail) and ratios exp(log N - log Phi); for epsilon = 0 and z < -3 the
quantities z + w, 1 - w (z + w) and 1 + z (z + w), which cancel catastrophically as z -> -inf,
come from the continued fraction without any subtraction. Site precisions can be negative
when epsilon > 0 (the likelihood is not log-concave); EP decides what to do with them.

The Gaussian likelihood N(y | f, sigma2) is the regression case of Rodrigues (2014),
section 4, eqs. 29-33: its tilted distribution is Gaussian and its site is exact.

The scalar kernels are numba-compiled (``tilted_scalar``) so that the sequential EP sweep can
call them site by site inside compiled code; the likelihood objects below wrap them for
numpy arrays. Each likelihood has an integer ``kind`` selecting its kernel.

Laplace and MCMC likelihoods
----------------------------
Labels are y in {-1, +1} (Williams & Barber's targets t in {0, 1} are t = (y + 1) / 2):

    logistic   p(y | f) = sigma(y f) = 1 / (1 + exp(-y f))       (W&B section 3)
    probit     p(y | f) = Phi(y f)

Both are log-concave, so W = -d^2 log p / df^2 >= 0 and the Newton problem of W&B Appendix A is
convex. :meth:`derivatives` returns log p and its first three derivatives in f (GPML's ``lp``,
``dlp``, ``d2lp``, ``d3lp``); the third enters the implicit term of the evidence gradient
(W&B Appendix B). Everything is evaluated in the log domain: ``log_expit`` for the logistic;
for the probit scipy's ``log_ndtr`` and the inverse Mills ratio w = N(z) / Phi(z) through
``erfcx``, finite for every z. With z = y f and t = z + w,

    dlog p/df = y w,   d2 = -w t,   d3 = y w (t (z + 2 w) - 1).

(The probit here is the EP family's threshold with unit probit variance,
:func:`probit_likelihood`, seen through derivatives instead of tilted moments.)

Predictive probability p(y = +1 | x) = integral p(+1 | f) N(f | m, v) df (W&B eq. 7):

* probit: Phi(m / sqrt(1 + v)), exact;
* logistic: W&B Appendix A's expansion in five scaled error functions,
  sigma(x) ~ sum_i c_i Phi(lambda_i x) (Phi(z) = (1 + erf(z / sqrt 2)) / 2), each term of which
  integrates in closed form, integral Phi(lambda f) N(f | m, v) df = Phi(lambda m / sqrt(1 +
  lambda^2 v)). W&B's own constants (footnote 6) are lost in our copy of the paper; the ones
  below were fitted here (c_i by least squares on x in [0, 40] with sum c_i = 1 so both tails
  are exact, lambda_i by Nelder-Mead on the maximum error) and give
  max_x |sigma(x) - sum_i c_i Phi(lambda_i x)| = 1.2e-6, hence the predictive probability to
  within 1.2e-6 for every (m, v) (tests/test_laplace.py checks both).

Softmax likelihood
------------------
J classes, latent values F of shape (J, n), one-hot targets Y (J, n) (W&B eq. 11, Cho et al.
2015 eq. 14):

    log p(y | F) = sum_i (y_i^T f_i - log sum_c exp f_i^c).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit
from scipy import special

THRESHOLD = 0
GAUSSIAN = 1

_SQRT2 = math.sqrt(2.0)
_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)
_TAIL = 3.0  # for z < -_TAIL the left tail comes from the continued fraction
_FRACTION_TERMS = 64  # enough for relative accuracy ~1e-16 at x >= 3


@njit(cache=True)
def _mills_fraction(x):
    """(c, d) of the Laplace continued fraction of the Mills ratio, for x >= 3.

    R(x) = (1 - Phi(x)) / N(x) = 1/(x + c),  c = 1/(x + d),  d = 2/(x + 3/(x + 4/(x + ...))),
    evaluated backwards. With z = -x and w = N(z)/Phi(z) = x + c this gives, without
    cancellation, z + w = c, 1 - w (z + w) = c (d - c) and 1 + z (z + w) = c d.
    """
    d = 0.0
    for k in range(_FRACTION_TERMS, 1, -1):
        d = k / (x + d)
    return 1.0 / (x + d), d


@njit(cache=True)
def log_ndtr(z):
    """log Phi(z), accurate to a few ulp over the whole real line."""
    if z >= 0.0:
        return math.log1p(-0.5 * math.erfc(z / _SQRT2))
    if z > -_TAIL:
        return math.log(0.5 * math.erfc(-z / _SQRT2))
    x = -z
    c, _ = _mills_fraction(x)
    return -0.5 * x * x - _LOG_SQRT_2PI - math.log(x + c)


@njit(cache=True)
def log_ndtr_array(z):
    """Elementwise :func:`log_ndtr`."""
    flat = np.ascontiguousarray(z).ravel()
    out = np.empty(flat.size)
    for i in range(flat.size):
        out[i] = log_ndtr(flat[i])
    return out.reshape(np.shape(z))


@njit(cache=True)
def _logaddexp(a, b):
    big = max(a, b)
    if big == -np.inf:
        return -np.inf
    return big + math.log1p(math.exp(-abs(a - b)))


@njit(cache=True)
def _threshold_terms(z, epsilon):
    """(log Z, w, t = z + w, 1 - w t, 1 + z t) of the noisy threshold (module docstring)."""
    if epsilon == 0.0 and z < -_TAIL:
        x = -z
        c, d = _mills_fraction(x)
        log_z = -0.5 * x * x - _LOG_SQRT_2PI - math.log(x + c)
        return log_z, x + c, c, c * (d - c), c * d
    log_cdf = log_ndtr(z)
    if epsilon == 0.0:
        log_z = log_cdf
        log_scale = 0.0
    else:
        log_scale = math.log1p(-2.0 * epsilon)
        log_z = _logaddexp(math.log(epsilon), log_scale + log_cdf)
    w = math.exp(log_scale - 0.5 * z * z - _LOG_SQRT_2PI - log_z)
    shifted = z + w
    return log_z, w, shifted, 1.0 - w * shifted, 1.0 + z * shifted


@njit(cache=True)
def threshold_tilted(y, mu, var, epsilon, probit_variance):
    """Tilted moments and matched site of the noisy threshold (eqs. 20-21), one site."""
    scale2 = probit_variance + var
    root = math.sqrt(scale2)
    z = y * mu / root
    log_z, w, shifted, one_minus, one_plus = _threshold_terms(z, epsilon)
    denom = probit_variance + var * one_minus  # = (s2 + v) * (tilted variance / v)
    # mu + v dlogZ/dmu and the site of eq. 21, rewritten with mu = y z sqrt(s2 + v) so that
    # no large terms cancel: mean = y (z s2 + v t) / sqrt(s2 + v).
    mean = y * (z * probit_variance + var * shifted) / root
    variance = var * denom / scale2
    site_precision = w * shifted / denom
    site_natural_mean = y * root * w * one_plus / denom
    return log_z, mean, variance, site_precision, site_natural_mean


@njit(cache=True)
def gaussian_tilted(y, mu, var, noise_variance):
    """Exact posterior of N(f | mu, v) N(y | f, sigma2), Rodrigues (2014) eqs. 32-33 and 37."""
    total = var + noise_variance
    resid = y - mu
    log_z = -0.5 * math.log(2.0 * math.pi * total) - 0.5 * resid * resid / total
    mean = (mu * noise_variance + y * var) / total
    variance = var * noise_variance / total
    return log_z, mean, variance, 1.0 / noise_variance, y / noise_variance


@njit(cache=True)
def tilted_scalar(kind, params, y, mu, var):
    """(log Z, tilted mean, tilted variance, site precision, site natural mean) for one site."""
    if kind == THRESHOLD:
        return threshold_tilted(y, mu, var, params[0], params[1])
    return gaussian_tilted(y, mu, var, params[0])


@njit(cache=True)
def tilted_arrays(kind, params, y, mu, var):
    """:func:`tilted_scalar` over arrays; returns five arrays."""
    n = y.size
    out = np.empty((5, n))
    for i in range(n):
        r = tilted_scalar(kind, params, y[i], mu[i], var[i])
        for k in range(5):
            out[k, i] = r[k]
    return out


class TiltedMoments(NamedTuple):
    """Normaliser, moments and moment-matched site of the tilted distributions."""

    log_z: np.ndarray
    mean: np.ndarray
    variance: np.ndarray
    site_precision: np.ndarray
    site_natural_mean: np.ndarray


class Likelihood:
    """Common interface. Subclasses set ``kind`` and implement ``params`` and the M-step pieces."""

    kind: int
    parameter_name: str

    @property
    def params(self) -> np.ndarray:
        raise NotImplementedError

    def tilted(self, y, cavity_mean, cavity_variance) -> TiltedMoments:
        """Tilted moments for every site given Gaussian cavities N(cavity_mean, cavity_variance)."""
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
        """sum_i E_q[log p(y_i | f_i)], q(f_i) = N(mean_i, variance_i) (F_epsilon, Appendix)."""
        raise NotImplementedError

    def optimal_parameter(self, y, mean, variance) -> float:
        """The likelihood parameter maximising :meth:`expected_log_likelihood` (closed form)."""
        raise NotImplementedError(f"{type(self).__name__} has no closed-form M-step")

    def with_parameter(self, value) -> Likelihood:
        raise NotImplementedError


class NoisyThresholdLikelihood(Likelihood):
    """epsilon + (1 - 2 epsilon) Phi(y f / sqrt(probit_variance)); eq. 10 when probit_variance = 0.

    Parameters
    ----------
    epsilon : float in [0, 0.5)
        Labelling-error probability of eq. 10.
    probit_variance : float >= 0
        0 gives the hard threshold H(y f) of eq. 10; 1 (with epsilon = 0) the probit Phi(y f).
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
        """p(y = +1 | x) of eq. 25 (``label_noise=False``) or eq. 26 (``True``)."""
        lik = self if label_noise else NoisyThresholdLikelihood(0.0, self.probit_variance)
        mean = np.asarray(mean, dtype=float)
        variance = np.maximum(np.asarray(variance, dtype=float), np.finfo(float).tiny)
        return np.exp(lik.log_predictive(np.ones_like(mean), mean, variance))

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
        """epsilon = mean_i q(y_i f_i < 0): the maximiser of F_epsilon (Appendix, eq. 56)."""
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


def probit_likelihood() -> NoisyThresholdLikelihood:
    """The probit (cumulative normal) likelihood Phi(y f)."""
    return NoisyThresholdLikelihood(epsilon=0.0, probit_variance=1.0)


class GaussianLikelihood(Likelihood):
    """N(y | f, noise_variance): GP regression, the exact case of EP (Rodrigues 2014, section 4)."""

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


# ------------------------------------------------------------------ Laplace / MCMC likelihoods
ERF_SCALES = np.array([0.2924357022990889, 0.4032102828390699, 0.5572672081875336,
                       0.7780784803207781, 1.0951910561047438])
ERF_WEIGHTS = np.array([0.02276022890168735, 0.18006828912990197, 0.4116685686317932,
                        0.32867021235056443, 0.05683270098605298])
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


class LogisticLikelihood:
    """p(y | f) = sigma(y f), the logistic transfer function of W&B section 3."""

    name = "logistic"

    def log_likelihood(self, z):
        """log p(y | f) as a function of z = y f: log sigma(z), elementwise."""
        return special.log_expit(z)

    def derivatives(self, y, f):
        """(log p, dlog p/df, d2log p/df2, d3log p/df3), elementwise in y and f."""
        y, f = np.asarray(y, dtype=float), np.asarray(f, dtype=float)
        pi = special.expit(f)
        variance = pi * special.expit(-f)  # pi (1 - pi) without cancellation
        return (self.log_likelihood(y * f), y * special.expit(-y * f), -variance,
                variance * np.tanh(0.5 * f))

    def predictive_probability(self, mean, variance):
        """integral sigma(f) N(f | mean, variance) df by the erf expansion of Appendix A."""
        mean = np.asarray(mean, dtype=float)[..., None]
        variance = np.asarray(variance, dtype=float)[..., None]
        z = ERF_SCALES * mean / np.sqrt(1.0 + ERF_SCALES**2 * variance)
        return special.ndtr(z) @ ERF_WEIGHTS


class ProbitLikelihood:
    """p(y | f) = Phi(y f), the cumulative-normal transfer function."""

    name = "probit"

    def log_likelihood(self, z):
        """log p(y | f) as a function of z = y f: log Phi(z), elementwise (scipy's log_ndtr)."""
        return special.log_ndtr(z)

    def derivatives(self, y, f):
        """(log p, dlog p/df, d2log p/df2, d3log p/df3), elementwise in y and f."""
        y, f = np.asarray(y, dtype=float), np.asarray(f, dtype=float)
        z = y * f
        w = _SQRT_2_OVER_PI / special.erfcx(-z / _SQRT2)  # N(z) / Phi(z); 0 when erfcx = inf
        t = z + w
        return self.log_likelihood(z), y * w, -w * t, y * w * (t * (z + 2.0 * w) - 1.0)

    def predictive_probability(self, mean, variance):
        """Phi(mean / sqrt(1 + variance)), exact."""
        return special.ndtr(np.asarray(mean, dtype=float) / np.sqrt(1.0 + np.asarray(variance)))


LIKELIHOODS = {"logistic": LogisticLikelihood(), "probit": ProbitLikelihood()}


def get_likelihood(name: str):
    """The likelihood object called ``name`` ('logistic' or 'probit')."""
    try:
        return LIKELIHOODS[name]
    except KeyError:
        raise ValueError(f"likelihood must be one of {sorted(LIKELIHOODS)}, got {name!r}") from None


# ------------------------------------------------------------------ softmax likelihood
def softmax_log_likelihood(F, Y) -> float:
    """log p(y | F) = sum_i (y_i^T f_i - log sum_c exp f_i^c) (W&B eq. 11; Cho eq. 14).

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
