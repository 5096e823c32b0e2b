"""Logistic and probit likelihoods with their derivatives in f, for Laplace's approximation.

Labels are y in {-1, +1} (Williams & Barber's targets t in {0, 1} are t = (y + 1) / 2):

    logistic   p(y | f) = sigma(y f) = 1 / (1 + exp(-y f))       (W&B section 3)
    probit     p(y | f) = Phi(y f)

Both are log-concave, so W = -d^2 log p / df^2 >= 0 and the Newton problem of W&B Appendix A is
convex. :meth:`derivatives` returns log p and its first three derivatives in f (GPML's ``lp``,
``dlp``, ``d2lp``, ``d3lp``); the third enters the implicit term of the evidence gradient
(W&B Appendix B). Everything is evaluated in the log domain: ``log_expit`` for the logistic;
for the probit ``log_ndtr`` and the inverse Mills ratio w = N(z) / Phi(z) through ``erfcx``,
finite for every z. With z = y f and t = z + w,

    dlog p/df = y w,   d2 = -w t,   d3 = y w (t (z + 2 w) - 1).

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
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import erfcx, expit, log_expit, log_ndtr, ndtr

ERF_SCALES = np.array([0.2924357022990889, 0.4032102828390699, 0.5572672081875336,
                       0.7780784803207781, 1.0951910561047438])
ERF_WEIGHTS = np.array([0.02276022890168735, 0.18006828912990197, 0.4116685686317932,
                        0.32867021235056443, 0.05683270098605298])
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


class LogisticLikelihood:
    """p(y | f) = sigma(y f), the logistic transfer function of W&B section 3."""

    name = "logistic"

    def derivatives(self, y, f):
        """(log p, dlog p/df, d2log p/df2, d3log p/df3), elementwise in y and f."""
        y, f = np.asarray(y, dtype=float), np.asarray(f, dtype=float)
        pi = expit(f)
        variance = pi * expit(-f)  # pi (1 - pi) without cancellation
        return log_expit(y * f), y * expit(-y * f), -variance, variance * np.tanh(0.5 * f)

    def predictive_probability(self, mean, variance):
        """integral sigma(f) N(f | mean, variance) df by the erf expansion of Appendix A."""
        mean = np.asarray(mean, dtype=float)[..., None]
        variance = np.asarray(variance, dtype=float)[..., None]
        z = ERF_SCALES * mean / np.sqrt(1.0 + ERF_SCALES**2 * variance)
        return ndtr(z) @ ERF_WEIGHTS


class ProbitLikelihood:
    """p(y | f) = Phi(y f), the cumulative-normal transfer function."""

    name = "probit"

    def derivatives(self, y, f):
        """(log p, dlog p/df, d2log p/df2, d3log p/df3), elementwise in y and f."""
        y, f = np.asarray(y, dtype=float), np.asarray(f, dtype=float)
        z = y * f
        w = _SQRT_2_OVER_PI / erfcx(-z / math.sqrt(2.0))  # N(z) / Phi(z); 0 when erfcx = inf
        t = z + w
        return log_ndtr(z), y * w, -w * t, y * w * (t * (z + 2.0 * w) - 1.0)

    def predictive_probability(self, mean, variance):
        """Phi(mean / sqrt(1 + variance)), exact."""
        return ndtr(np.asarray(mean, dtype=float) / np.sqrt(1.0 + np.asarray(variance)))


LIKELIHOODS = {"logistic": LogisticLikelihood(), "probit": ProbitLikelihood()}


def get_likelihood(name: str):
    """The likelihood object called ``name`` ('logistic' or 'probit')."""
    try:
        return LIKELIHOODS[name]
    except KeyError:
        raise ValueError(f"likelihood must be one of {sorted(LIKELIHOODS)}, got {name!r}") from None
