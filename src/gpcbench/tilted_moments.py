"""Tilted moments of the EP likelihoods: numba kernels, one site at a time.

The classification likelihood is the noisy threshold of Kim & Ghahramani (2006), K&G eq. 10,

    p(y | f) = epsilon + (1 - 2 epsilon) H(y f),

generalised by a probit variance s2 >= 0 to  epsilon + (1 - 2 epsilon) Phi(y f / sqrt(s2)):
s2 = 0 is K&G eq. 10 exactly, and s2 = 1, epsilon = 0 is the probit (cumulative normal) model,
which is the threshold model with unit latent noise (text after K&G eq. 14).

Given a Gaussian cavity N(f | mu, v) the *tilted* distribution is N(f | mu, v) p(y | f) / Z.
For the noisy threshold, with  z = y mu / sqrt(s2 + v)  (K&G eq. 20 when s2 = 0),

    Z = epsilon + (1 - 2 epsilon) Phi(z)                                          (K&G eq. 20)
    w = (1 - 2 epsilon) N(z) / Z,  so that  dlog Z/dmu = y w / sqrt(s2 + v)  (alpha_i of K&G eq. 20)
    d2 log Z / dmu2 = -w (z + w) / (s2 + v),

and the moment-matched site (K&G eq. 21 in natural parameters) is

    site precision      = w (z + w) / (s2 + v (1 - w (z + w)))
    site natural mean   = y sqrt(s2 + v) w (1 + z (z + w)) / (s2 + v (1 - w (z + w))).

Everything is evaluated from log Phi (erfc-based, with the Laplace continued fraction of the
Mills ratio in the left tail) and ratios exp(log N - log Phi); for epsilon = 0 and z < -3 the
quantities z + w, 1 - w (z + w) and 1 + z (z + w), which cancel catastrophically as z -> -inf,
come from the continued fraction without any subtraction. Site precisions can be negative
when epsilon > 0 (the likelihood is not log-concave); EP decides what to do with them.

The Gaussian likelihood N(y | f, sigma2) is the regression case of Rodrigues (2014),
Rodrigues sec. 4, Rodrigues eqs. 29-33: its tilted distribution is Gaussian and its site is exact.

The scalar kernels are numba-compiled (:func:`tilted_scalar`) so that the sequential EP sweep
can call them site by site inside compiled code; the likelihood objects of
:mod:`gpcbench.likelihoods` wrap them for numpy arrays. Each likelihood has an integer
``kind`` selecting its kernel.
"""

from __future__ import annotations

import math

import numpy as np

from gpcbench.jit import njit

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
    """Tilted moments and matched site of the noisy threshold (K&G eqs. 20-21), one site."""
    scale2 = probit_variance + var
    root = math.sqrt(scale2)
    z = y * mu / root
    log_z, w, shifted, one_minus, one_plus = _threshold_terms(z, epsilon)
    denom = probit_variance + var * one_minus  # = (s2 + v) * (tilted variance / v)
    # mu + v dlogZ/dmu and the site of K&G eq. 21, rewritten with mu = y z sqrt(s2 + v) so that
    # no large terms cancel: mean = y (z s2 + v t) / sqrt(s2 + v).
    mean = y * (z * probit_variance + var * shifted) / root
    variance = var * denom / scale2
    site_precision = w * shifted / denom
    site_natural_mean = y * root * w * one_plus / denom
    return log_z, mean, variance, site_precision, site_natural_mean


@njit(cache=True)
def gaussian_tilted(y, mu, var, noise_variance):
    """Exact posterior of N(f | mu, v) N(y | f, sigma2), Rodrigues eqs. 32-33 and 37."""
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
