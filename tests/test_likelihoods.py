"""Likelihoods: log Phi against scipy, tilted moments against numerical integration and
scipy's truncated normal, matched sites against the moments, the closed-form M-steps; the
softmax log-likelihood against scipy's logsumexp and a direct sum. (The logistic and probit
derivatives and predictives of the Laplace family are tested in test_laplace.py.)"""

import math
from decimal import Decimal, getcontext

import numpy as np
import pytest
from scipy import integrate, special, stats

from gpcbench.likelihoods import (
    GaussianLikelihood,
    NoisyThresholdLikelihood,
    ProbitLikelihood,
    get_likelihood,
    softmax_log_likelihood,
)
from gpcbench.tilted_moments import log_ndtr_array


def test_log_ndtr_matches_scipy_everywhere():
    z = np.concatenate(
        [np.linspace(-80, 40, 4001), -np.logspace(0, 9, 60), [-36.99, -37.0, -37.01]]
    )
    ours = log_ndtr_array(z)
    # scipy's log_ndtr takes log(ndtr(z)) for 0 < z < 6, which loses relative accuracy as
    # ndtr(z) -> 1; log1p(-ndtr(-z)) with scipy's own ndtr is the accurate reference there.
    with np.errstate(divide="ignore"):
        ref = np.where(z > 0, np.log1p(-special.ndtr(-z)), special.log_ndtr(z))
    # Phi(-z) for large z inherits the rounding of z / sqrt(2) in either code: ~ z^2 * 1e-16
    tolerance = 5e-15 + 5e-16 * np.where(z > 0, z**2, 0.0)
    assert np.all(np.abs(ours - ref) <= 1e-300 + tolerance * np.abs(ref))


def _quadrature_moments(pdf_times_lik, mu, var):
    """Normaliser, mean and variance of N(f | mu, var) lik(f) by adaptive quadrature."""
    sd = math.sqrt(var)
    lo, hi = mu - 12 * sd, mu + 12 * sd
    points = [0.0] if lo < 0 < hi else None
    moments = [
        integrate.quad(
            lambda f, k=k: f**k * pdf_times_lik(f),
            lo,
            hi,
            points=points,
            epsabs=0,
            epsrel=1e-12,
            limit=200,
        )[0]
        for k in range(3)
    ]
    z, m1, m2 = moments
    mean = m1 / z
    return math.log(z), mean, m2 / z - mean**2


CASES = [  # y, cavity mean, cavity variance
    (1.0, 0.3, 0.8),
    (-1.0, 0.3, 0.8),
    (1.0, -2.5, 0.4),
    (-1.0, 4.0, 2.0),
    (1.0, 1.5, 0.05),
    (1.0, -0.2, 9.0),
]


@pytest.mark.parametrize("epsilon", [0.0, 0.05, 0.3])
@pytest.mark.parametrize("probit_variance", [0.0, 1.0, 0.2])
@pytest.mark.parametrize("y, mu, var", CASES)
def test_tilted_moments_match_quadrature(epsilon, probit_variance, y, mu, var):
    lik = NoisyThresholdLikelihood(epsilon, probit_variance)

    def integrand(f):
        if probit_variance == 0:
            p = epsilon + (1 - 2 * epsilon) * (y * f > 0)
        else:
            p = epsilon + (1 - 2 * epsilon) * stats.norm.cdf(y * f / math.sqrt(probit_variance))
        return stats.norm.pdf(f, mu, math.sqrt(var)) * p

    log_z, mean, variance = _quadrature_moments(integrand, mu, var)
    t = lik.tilted(np.array([y]), np.array([mu]), np.array([var]))
    np.testing.assert_allclose(t.log_z[0], log_z, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(t.mean[0], mean, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(t.variance[0], variance, rtol=1e-8, atol=1e-12)
    # the matched site is tilted / cavity in natural parameters (eq. 21)
    np.testing.assert_allclose(t.site_precision[0], 1 / variance - 1 / var, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(
        t.site_natural_mean[0], mean / variance - mu / var, rtol=1e-6, atol=1e-9
    )


def _decimal_pi():
    """pi to the current decimal precision, by Machin's formula 16 atan(1/5) - 4 atan(1/239)."""

    def arctan_inverse(k):
        total, power, n = Decimal(0), Decimal(1) / k, 0
        while power > Decimal(10) ** (-getcontext().prec - 5):
            total += (-1) ** n * power / (2 * n + 1)
            power /= k * k
            n += 1
        return total

    return 16 * arctan_inverse(5) - 4 * arctan_inverse(239)


def _upper_tail_reference(x):
    """log(1 - Phi(x)), mean and variance of N(0, 1) truncated to f > x, in decimal arithmetic.

    1 - Phi(x) comes from the Taylor series of erf at x <= 40 (with enough digits to survive
    its cancellation) and from the asymptotic Mills-ratio series beyond; both are independent
    of the code, which uses a continued fraction. Then lam = N(x) / (1 - Phi(x)), the mean is
    lam and the variance 1 - lam (lam - x).
    """
    context = getcontext()
    context.prec = int(0.44 * x * x) + 60 if x <= 40 else 80
    context.Emin, context.Emax = -(10**15), 10**15
    xd = Decimal(x)
    pi = _decimal_pi()
    density = (-xd * xd / 2).exp() / (2 * pi).sqrt()
    if x <= 40:
        y = xd / Decimal(2).sqrt()
        term, total, n = y, y, 0
        while abs(term) > Decimal(10) ** (-context.prec + 5):
            n += 1
            term = -term * y * y / n
            total += term / (2 * n + 1)
        tail = (1 - 2 / pi.sqrt() * total) / 2
    else:
        ratio, term = Decimal(0), 1 / xd
        for k in range(40):
            ratio += term
            term = -term * (2 * k + 1) / (xd * xd)
        tail = density * ratio
    lam = density / tail
    return float(tail.ln()), float(lam), float(1 - lam * (lam - xd))


@pytest.mark.parametrize("z", [-1e6, -3e3, -250.0, -39.0, -30.5, -12.0, -5.0, -3.01, -2.99, -1.0])
def test_far_tail_against_high_precision_truncated_normal(z):
    """epsilon = 0: the tilted distribution is N(mu, v) truncated to f > 0."""
    var = 2.0
    mu = z * math.sqrt(var)
    t = NoisyThresholdLikelihood().tilted(np.array([1.0]), np.array([mu]), np.array([var]))
    log_z, std_mean, std_var = _upper_tail_reference(-z)
    np.testing.assert_allclose(t.log_z[0], log_z, rtol=1e-14)
    np.testing.assert_allclose(
        t.mean[0], math.sqrt(var) * std_mean + mu, rtol=1e-12, atol=1e-15 * abs(mu)
    )
    np.testing.assert_allclose(t.variance[0], var * std_var, rtol=1e-12)
    # moment matching in natural parameters: tilted precision = cavity + site precision
    np.testing.assert_allclose(1 / t.variance[0], 1 / var + t.site_precision[0], rtol=1e-12)


def test_tail_switch_is_continuous():
    mus = np.array([-3.0 - 1e-13, -3.0 + 1e-13])
    t = NoisyThresholdLikelihood().tilted(np.ones(2), mus, np.ones(2))
    for field in t:
        np.testing.assert_allclose(field[0], field[1], rtol=1e-11)


def test_probit_is_threshold_with_latent_noise():
    """Phi(y f / sqrt(s2)) under N(mu, v) integrates like H(y f) under N(mu, v + s2)
    (the text after eq. 14)."""
    rng = np.random.default_rng(0)
    y = rng.choice([-1.0, 1.0], 20)
    mu, var = rng.normal(0, 2, 20), rng.uniform(0.1, 3, 20)
    for s2 in (1.0, 0.3):
        probit = NoisyThresholdLikelihood(0.0, s2).tilted(y, mu, var)
        threshold = NoisyThresholdLikelihood().tilted(y, mu, var + s2)
        np.testing.assert_allclose(probit.log_z, threshold.log_z, rtol=1e-13)
    assert ProbitLikelihood().probit_variance == 1.0


def test_one_probit_with_both_capabilities():
    """The probit's tilted moments (EP) and derivatives / predictive (Laplace) are one model."""
    rng = np.random.default_rng(1)
    y = rng.choice([-1.0, 1.0], 30)
    mu, var = rng.normal(0, 3, 30), rng.uniform(0.1, 4, 30)
    probit = get_likelihood("probit")
    assert isinstance(probit, NoisyThresholdLikelihood)
    tilted = probit.tilted(y, mu, var)
    np.testing.assert_allclose(tilted.log_z, special.log_ndtr(y * mu / np.sqrt(1 + var)),
                               rtol=1e-12)
    np.testing.assert_allclose(np.exp(tilted.log_z[y > 0]),
                               probit.predictive_probability(mu, var)[y > 0], rtol=1e-12)
    np.testing.assert_allclose(probit.derivatives(y, mu)[0], special.log_ndtr(y * mu),
                               rtol=1e-12)
    with pytest.raises(NotImplementedError):
        get_likelihood("logistic").tilted(y, mu, var)


def test_predictive_probability_eqs_25_26():
    mean, var = np.array([-1.0, 0.0, 2.5]), np.array([0.5, 1.0, 4.0])
    lik = NoisyThresholdLikelihood(0.1)
    np.testing.assert_allclose(
        lik.predictive_probability(mean, var), stats.norm.cdf(mean / np.sqrt(var))
    )
    np.testing.assert_allclose(
        lik.predictive_probability(mean, var, label_noise=True),
        0.1 + 0.8 * stats.norm.cdf(mean / np.sqrt(var)),
    )


def test_gaussian_site_is_exact():
    lik = GaussianLikelihood(0.3)
    y, mu, var = np.array([1.2, -0.4]), np.array([0.5, 0.1]), np.array([2.0, 0.2])
    t = lik.tilted(y, mu, var)
    np.testing.assert_allclose(t.log_z, stats.norm.logpdf(y, mu, np.sqrt(var + 0.3)))
    np.testing.assert_allclose(1 / t.variance, 1 / var + 1 / 0.3)
    np.testing.assert_allclose(t.mean / t.variance, mu / var + y / 0.3)
    np.testing.assert_allclose(t.site_precision, 1 / 0.3)
    np.testing.assert_allclose(t.site_natural_mean, y / 0.3)


def _expected_log_lik_quadrature(lik, y, mean, var):
    total = 0.0
    for yi, m, v in zip(y, mean, var):
        total += integrate.quad(
            lambda f: stats.norm.pdf(f, m, math.sqrt(v)) * math.log(lik(yi, f)),
            m - 12 * math.sqrt(v),
            m + 12 * math.sqrt(v),
            points=[0.0],
            limit=200,
        )[0]
    return total


def test_expected_log_likelihood_matches_quadrature():
    rng = np.random.default_rng(1)
    y, mean, var = rng.choice([-1.0, 1.0], 5), rng.normal(0, 1, 5), rng.uniform(0.2, 2, 5)
    eps = 0.07
    hard = NoisyThresholdLikelihood(eps)
    ref = _expected_log_lik_quadrature(
        lambda yi, f: eps + (1 - 2 * eps) * (yi * f > 0), y, mean, var
    )
    np.testing.assert_allclose(hard.expected_log_likelihood(y, mean, var), ref, rtol=1e-8)
    soft = NoisyThresholdLikelihood(eps, 0.5)
    ref = _expected_log_lik_quadrature(
        lambda yi, f: eps + (1 - 2 * eps) * stats.norm.cdf(yi * f / math.sqrt(0.5)), y, mean, var
    )
    np.testing.assert_allclose(soft.expected_log_likelihood(y, mean, var), ref, rtol=1e-6)
    assert NoisyThresholdLikelihood(0.0).expected_log_likelihood(y, mean, var) == -np.inf


@pytest.mark.parametrize("lik", [NoisyThresholdLikelihood(0.2), GaussianLikelihood(0.5)])
def test_closed_form_parameter_update_maximises_expected_log_likelihood(lik):
    rng = np.random.default_rng(2)
    mean, var = rng.normal(0, 1.5, 30), rng.uniform(0.1, 1, 30)
    noise = rng.normal(size=30)
    y = np.sign(mean + 0.5 * noise) if isinstance(lik, NoisyThresholdLikelihood) else mean + noise
    best = lik.optimal_parameter(y, mean, var)
    value = lik.with_parameter(best).expected_log_likelihood(y, mean, var)
    for factor in (0.9, 0.99, 1.01, 1.1):
        assert value > lik.with_parameter(best * factor).expected_log_likelihood(y, mean, var)


def test_invalid_parameters_raise():
    with pytest.raises(ValueError):
        NoisyThresholdLikelihood(0.5)
    with pytest.raises(ValueError):
        GaussianLikelihood(0.0)
    with pytest.raises(ValueError):
        NoisyThresholdLikelihood().tilted([1.0], [0.0], [0.0])


def test_softmax_log_likelihood_matches_scipy_to_the_last_bit():
    """Same arithmetic as scipy's logsumexp (ties of the column maximum included), and the
    value of the direct sum sum_i log softmax(F[:, i])[y_i] to rounding."""
    rng = np.random.default_rng(0)
    for scale in (0.0, 1e-3, 1.0, 30.0, 800.0):
        F = scale * rng.normal(size=(4, 50))
        F[1, ::5] = F[0, ::5]  # ties for the maximum in some columns
        labels = rng.integers(0, 4, 50)
        Y = np.eye(4)[labels].T
        assert softmax_log_likelihood(F, Y) == float(
            np.sum(Y * F) - np.sum(special.logsumexp(F, axis=0)))
        direct = np.sum(special.log_softmax(F, axis=0)[labels, np.arange(50)])
        assert softmax_log_likelihood(F, Y) == pytest.approx(direct, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("name, link", [("logistic", special.expit), ("probit", special.ndtr)])
def test_binary_log_likelihood_is_log_of_the_link(name, link):
    z = np.linspace(-30, 30, 61)  # exp(log p) loses |log p| ulp: up to ~5e-14 relative here
    np.testing.assert_allclose(np.exp(get_likelihood(name).log_likelihood(z)), link(z),
                               rtol=1e-12)
