"""The FBGKM chain's n_gamma against its exact posterior (Zhang, Dai & Jordan 2011).

With the auxiliaries s held fixed (step (a) off) and theta fixed, the chain's target is
p(gamma, eta, g | s) (ZDJ secs. 3.1 and 3.2): ZDJ eq. 10's prior on gamma (or the flat one),
eta ~ Ga(a_eta/2, b_eta/2), g ~ Ga(a_g/2, b_g/2) and s | gamma, eta, g ~ N(0, Q_gamma) (ZDJ eq. 8).
On n = 7 points every one of the 2^7 active sets is enumerated, p(s | gamma) is integrated
over log eta and log g on a grid, and the n_gamma histogram of a long chain (eta and g by their
Gibbs draws, gamma by the birth / death / swap moves) must match it in total variation. The
chain is run through the estimator's own translation of its options into the sampler's
settings, so a wrong Gamma convention or a wrong prior on gamma there fails the test, as the
two "deliberately wrong" cases below check.
"""

import itertools

import numpy as np
import pytest
from scipy import special

from gpcbench.mcmc import gkm
from gpcbench.mcmc.active_set import chain_state
from gpcbench.mcmc.moves import Steps
from gpcbench.kernels.rbf import rbf
from gpcbench.models import FBGKMClassifier

N, WIDTH, JITTER = 7, 1.2, 1e-6
SWEEPS, BURN = 300_000, 2_000
TOLERANCE = 0.03  # total variation; the chain's own error is about 0.01 at SWEEPS


def _problem():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(N, 2))
    s = 2.5 * np.sign(X[:, 0] + 0.3) + 0.3 * rng.normal(size=N)
    return X, s


def _log_gamma_density(log_x, a, b, scale):
    """log of Ga(a/2, b/2)'s density in log x (shape a/2; rate b/2, or scale b/2)."""
    shape, rate = a / 2, (2.0 / b if scale else b / 2)
    x = np.exp(log_x)
    return shape * np.log(rate) - special.gammaln(shape) + shape * log_x - rate * x


def _enumerated_n_gamma(X, s, gamma_prior, scale):
    """p(n_gamma | s) with p(s | gamma) = int int N(s; 0, Q_gamma(eta, g)) p(eta) p(g) over a
    grid in (log eta, log g); ZDJ sec. 5.1's hyperparameters."""
    K = rbf(X, X, WIDTH)
    log_eta, log_g = np.linspace(-30, 9, 131), np.linspace(-25, 10, 121)
    d_eta, d_g = log_eta[1] - log_eta[0], log_g[1] - log_g[0]
    prior = (_log_gamma_density(log_eta, 1.0, 0.1, scale)[:, None]
             + _log_gamma_density(log_g, 4.0, 0.1, scale)[None, :])
    inv_eta, inv_g = np.exp(-log_eta)[:, None, None, None], np.exp(-log_g)[None, :, None, None]
    ones = np.ones((N, N))
    log_p = np.full(N + 1, -np.inf)
    for k in range(N + 1):
        for subset in itertools.combinations(range(N), k):
            idx = list(subset)
            Kg = K[:, idx]
            M = Kg @ np.linalg.solve(K[np.ix_(idx, idx)] + JITTER * np.eye(k), Kg.T) if k else 0
            Q = np.eye(N) + inv_eta * ones + inv_g * M
            sign, log_det = np.linalg.slogdet(Q)
            quad = np.einsum("i,...i->...", s, np.linalg.solve(Q, s))
            log_lik = -0.5 * (log_det + quad) + prior
            log_marginal = special.logsumexp(log_lik) + np.log(d_eta * d_g)
            if gamma_prior == "beta_binomial":  # ZDJ eq. 10, a_alpha = b_alpha = 1
                log_marginal += special.betaln(k + 1, N - k + 1)
            log_p[k] = np.logaddexp(log_p[k], log_marginal)
    return np.exp(log_p - special.logsumexp(log_p))


def _chain_n_gamma(X, s, estimator):
    """Histogram of n_gamma over SWEEPS sweeps of the chain with step (a) off."""
    act = np.zeros(N, dtype=np.int64)
    act[:3] = [0, 3, 5]
    record = gkm.new_record(SWEEPS, 1, N, 1, [0])
    settings = estimator._sampler_settings(np.array([WIDTH]))._replace(
        theta_bounds=np.array([[0.1], [10.0]]), steps=Steps(False, True, True, False),
        n_sweeps=SWEEPS, burn_in=SWEEPS - 1, thin=1)
    y = (s > 0).astype(np.int64)
    gkm.run_chain(X, y, s.copy(), chain_state(act, 3, [WIDTH]), settings, 5, record)
    assert (record.move_counts[:3, 1] > 0).all()
    n_gamma = record.trace[BURN:, 3].astype(int)
    return np.bincount(n_gamma, minlength=N + 1) / n_gamma.size


def _total_variation(p, q):
    return 0.5 * np.abs(p - q).sum()


@pytest.fixture(scope="module")
def problem():
    return _problem()


@pytest.mark.parametrize("gamma_prior", ["flat", "beta_binomial"])
@pytest.mark.parametrize("precision_prior", ["shape_rate", "shape_scale"])
def test_n_gamma_matches_the_enumerated_posterior(problem, gamma_prior, precision_prior):
    X, s = problem
    exact = _enumerated_n_gamma(X, s, gamma_prior, precision_prior == "shape_scale")
    estimator = FBGKMClassifier(gamma_prior=gamma_prior, precision_prior=precision_prior,
                                jitter=JITTER)
    observed = _chain_n_gamma(X, s, estimator)
    assert _total_variation(observed, exact) < TOLERANCE, (observed.round(3), exact.round(3))


@pytest.mark.parametrize("wrong", [
    {"gamma_prior": "beta_binomial"},  # the chain's prior on gamma is not the enumerated one
    {"precision_prior": "shape_scale"},  # g ~ Ga(2, scale 0.05) instead of Ga(2, rate 0.05)
])
def test_the_check_fails_for_a_wrong_reading(problem, wrong):
    """The enumeration is for the flat prior on gamma with shape-rate Gamma priors; the chain
    with either of the other readings lands far outside the tolerance."""
    X, s = problem
    exact = _enumerated_n_gamma(X, s, "flat", scale=False)
    options = {"gamma_prior": "flat", "precision_prior": "shape_rate", **wrong}
    observed = _chain_n_gamma(X, s, FBGKMClassifier(jitter=JITTER, **options))
    assert _total_variation(observed, exact) > 3 * TOLERANCE, (observed.round(3), exact.round(3))
