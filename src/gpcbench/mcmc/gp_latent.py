"""Fully MCMC Gaussian-process classification: latent values and hyperparameters sampled jointly.

Neal's method as run by Williams & Barber (1998, W&B sec. 3.3 and W&B Appendix E): the Markov chain
alternates (i) updates of the latent values F given the log hyperparameters x and the labels,
and (ii) Hybrid Monte Carlo updates of x given F. One *sweep* here is ``n_latent_updates``
latent updates followed by one HMC trajectory (fbm's ``scan-values N`` + ``heatbath`` +
``hybrid L eps``).

Latents (step i). Neal's code Gibbs-samples the latents one at a time; here each update is an
elliptical slice sampling (ESS) move (Murray, Adams & MacKay 2010, Fig. 2), which leaves
p(F | x, y) invariant exactly like a Gibbs scan, needs no tuning and moves all n J latents at
once: with nu ~ N(0, K) (K block-diagonal over the J latent functions, one Cholesky-whitened
draw per function, nu_j = L_j z_j), the proposal F cos(a) + nu sin(a) is shrunk along the
ellipse until log p(y | F) exceeds a uniform slice level. The J x n matrix F holds one latent
function per row: J = 1 for a binary problem, J = number of classes for softmax.

Hyperparameters (step ii), in the *centred* parameterisation: with F fixed the target is

    log p(x | F) = sum_j log N(f_j | 0, K_j(x) + jitter I) + log p(x) + const,

    d/dx_k = 1/2 sum_ij (A A^T - m K^-1)_ij dK_ij/dx_k,   A = K^-1 F_g^T          (GPML 5.9)

for each group g of m latent functions sharing one covariance, computed with
:meth:`Covariance.gradient_contraction`, and sampled with :func:`gpcbench.mcmc.hmc.hmc_step`.
The centred form needs no derivative of the Cholesky factor and is the parameterisation of
Neal's fbm; the likelihood does not enter it at all. (The whitened form F = L(x) V, V fixed,
mixes better when the data say little about F, but its gradient needs dL/dx and a likelihood
evaluation per leapfrog step.)

The prior covariance is K&G eq. 13 (Kim & Ghahramani 2006; :class:`Covariance`) plus a fixed
``jitter`` on the diagonal: Neal's set-up (W&B Appendix E) uses 0.1 "to improve the
conditioning of the covariance matrix". K(x) + jitter I is factorised once per distinct x:
the factors of the chain's current point and of the last point evaluated are cached, so a
sweep costs exactly ``n_leapfrog`` factorisations (one per leapfrog step), accepted or not.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import LinAlgError, cholesky, lapack, solve_triangular
from scipy.special import softmax

from gpcbench import likelihoods
from gpcbench.gaussian import inverse_from_cholesky, log_det_from_cholesky
from gpcbench.kernels.covariance import Covariance
from gpcbench.mcmc import hmc
from gpcbench.priors import GaussianLogPrior

_LOG_2PI = math.log(2.0 * math.pi)


# ---------------------------------------------------------------------- likelihoods of F
# The likelihoods are those of :mod:`gpcbench.likelihoods`, bound to the labels.
def binary_log_likelihood(name, y):
    """F -> sum_i log p(y_i | F[0, i]), likelihood ``name`` ('logistic' or 'probit'),
    y in {-1, +1}."""
    log_likelihood = likelihoods.get_likelihood(name).log_likelihood
    return lambda F: float(np.sum(log_likelihood(y * F[0])))


def softmax_log_likelihood(labels):
    """F -> sum_i log softmax(F[:, i])[labels_i], labels in 0..J-1 (W&B sec. 4)."""
    Y = np.eye(int(labels.max()) + 1)[labels].T  # one-hot, (J, n)
    return lambda F: likelihoods.softmax_log_likelihood(F, Y)


# ---------------------------------------------------------------------- step (i): latents
def elliptical_slice(F, log_lik, prior_draw, log_likelihood, rng):
    """One ESS update (Murray, Adams & MacKay 2010, Fig. 2); returns (F', log p(y | F'))."""
    threshold = log_lik + math.log(rng.random())
    angle = rng.uniform(0.0, 2.0 * math.pi)
    lower, upper = angle - 2.0 * math.pi, angle
    while True:
        proposal = F * math.cos(angle) + prior_draw * math.sin(angle)
        value = log_likelihood(proposal)
        if value > threshold:
            return proposal, value
        if angle < 0.0:
            lower = angle
        else:
            upper = angle
        angle = rng.uniform(lower, upper)


def latent_updates(F, log_lik, factors, log_likelihood, n_updates, rng):
    """``n_updates`` ESS updates of F (J, n) under the prior N(0, L_j L_j^T) per row.

    ``factors`` (J, n, n) are the lower Cholesky factors; the n_updates prior draws are made
    in one batched product L_j Z_j.
    """
    J, n = F.shape
    draws = np.matmul(factors, rng.standard_normal((J, n, n_updates)))
    for k in range(n_updates):
        F, log_lik = elliptical_slice(F, log_lik, draws[:, :, k], log_likelihood, rng)
    return F, log_lik


# ---------------------------------------------------------------------- step (ii): x | F
@dataclass
class HyperConditional:
    """x -> (log p(x | F) up to a constant, gradient), the HMC target of step (ii).

    Parameters
    ----------
    covariance : Covariance
        Template: the fixed hyperparameters and the layout (shared or ARD lengthscales).
    X : array of shape (n, d)
    learned : array of bool of shape (covariance.n_params,)
        Free entries of ``covariance.log_params``; x stacks them for each group.
    groups : array of int of shape (J,)
        groups[j] = which covariance latent function j uses (all 0 = one shared covariance).
    prior : GaussianLogPrior
        Independent N(-3, 3^2) priors on each log hyperparameter by default (W&B sec. 5).
    jitter : float
        Added to the diagonal of every K (W&B Appendix E: 0.1 in Neal's set-up).
    latents : array of shape (J, n)
        The current F; set it before each HMC step.
    """

    covariance: Covariance
    X: np.ndarray
    learned: np.ndarray
    groups: np.ndarray
    prior: GaussianLogPrior = field(default_factory=GaussianLogPrior)
    jitter: float = 0.1
    latents: np.ndarray | None = None
    _cache: dict = field(default_factory=dict, repr=False)
    _current: bytes = field(default=b"", repr=False)

    def __post_init__(self):
        self.learned = np.asarray(self.learned, dtype=bool)
        self.groups = np.asarray(self.groups, dtype=int)
        if not np.all(np.isfinite(self.covariance.log_params[self.learned])):
            raise ValueError("hyperparameters equal to 0 cannot be learned in log space")

    @property
    def n_groups(self) -> int:
        return int(self.groups.max()) + 1

    @property
    def x0(self) -> np.ndarray:
        """The template's learned log hyperparameters, repeated for each group."""
        return np.tile(self.covariance.log_params[self.learned], self.n_groups)

    def covariances(self, x) -> list[Covariance]:
        """One covariance per group, with the learned log hyperparameters set from x."""
        base = self.covariance.log_params
        out = []
        for row in np.reshape(x, (self.n_groups, -1)):
            log_params = base.copy()
            log_params[self.learned] = row
            out.append(self.covariance.with_log_params(log_params))
        return out

    def factors(self, x) -> list[tuple]:
        """(covariance, signal, lower Cholesky factor of K + jitter I) per group.

        Cached for the last point evaluated and for the chain's current point (the one
        :meth:`latent_factors` was last asked for), so neither an accepted nor a rejected
        trajectory needs an extra factorisation.
        """
        key = _key(x)
        if key not in self._cache:
            self._cache = {k: v for k, v in self._cache.items() if k == self._current}
            self._cache[key] = [self._factor(c) for c in self.covariances(x)]
        return self._cache[key]

    def _factor(self, covariance):
        signal = covariance.signal(self.X)
        kernel = covariance(self.X, signal=signal)
        kernel[np.diag_indices_from(kernel)] += self.jitter
        return covariance, signal, cholesky(kernel, lower=True, check_finite=True)

    def latent_factors(self, x) -> np.ndarray:
        """Cholesky factor of each latent function's prior covariance, shape (J, n, n)."""
        chols = np.stack([factor[2] for factor in self.factors(x)])
        self._current = _key(x)
        return chols[self.groups]

    def __call__(self, x):
        x = np.asarray(x, dtype=float)
        log_prior, prior_gradient = self.prior(x)
        try:
            with np.errstate(over="raise", invalid="raise"):
                terms = [self._group_term(factor, self.latents[self.groups == g])
                         for g, factor in enumerate(self.factors(x))]
        except (FloatingPointError, LinAlgError, ValueError):
            return -np.inf, np.zeros_like(x)
        log_density = sum(t[0] for t in terms) + log_prior
        return log_density, np.concatenate([t[1] for t in terms]) + prior_gradient

    def _group_term(self, factor, F):
        """sum over the m rows f of F of log N(f | 0, K) and its gradient (GPML eq. 5.9)."""
        covariance, signal, chol = factor
        m, n = F.shape
        alpha = lapack.dpotrs(chol, F.T, lower=1)[0]  # K^-1 F^T, (n, m)
        inverse = inverse_from_cholesky(chol)
        log_density = (-0.5 * np.sum(F.T * alpha) - 0.5 * m * log_det_from_cholesky(chol)
                       - 0.5 * m * n * _LOG_2PI)
        weight = alpha @ alpha.T - m * inverse
        gradient = 0.5 * covariance.gradient_contraction(self.X, weight, signal=signal)
        return log_density, gradient[self.learned]

    def test_latents(self, x, F, X_test):
        """GP conditional mean and variance of the latents at X_test given the training
        latents F at hyperparameters x, each (J, m); the test points get the jitter too."""
        factors = self.factors(x)
        shape = (F.shape[0], X_test.shape[0])
        means, variances = np.empty(shape), np.empty(shape)
        for j, g in enumerate(self.groups):
            covariance, _, chol = factors[g]
            whitened = solve_triangular(chol, covariance(X_test, self.X).T, lower=True)
            means[j] = whitened.T @ solve_triangular(chol, F[j], lower=True)
            variances[j] = (covariance.diag(X_test) + self.jitter
                            - np.einsum("ij,ij->j", whitened, whitened))
        return means, np.maximum(variances, 0.0)


def _key(x) -> bytes:
    return np.asarray(x, dtype=float).tobytes()


# ---------------------------------------------------------------------- the chain
@dataclass(frozen=True)
class ChainResult:
    """One chain: the thinned retained draws and a per-sweep record."""

    log_hyperparameters: np.ndarray  # (n_kept, len(x))
    latents: np.ndarray  # (n_kept, J, n)
    accepted: np.ndarray  # bool per sweep
    accept_probability: np.ndarray  # per sweep
    log_likelihood: np.ndarray  # log p(y | F) per sweep
    log_joint: np.ndarray  # log p(y | F) + log N(F | 0, K) + log p(x) per sweep
    n_burn: int
    step_size: float  # the tuned step size of the retained sweeps

    @property
    def acceptance_rate(self) -> float:
        """Fraction of accepted HMC trajectories among the retained sweeps."""
        return float(np.mean(self.accepted[self.n_burn:]))

    @property
    def burn_in_acceptance_rate(self) -> float:
        return float(np.mean(self.accepted[: self.n_burn])) if self.n_burn else float("nan")


@dataclass(frozen=True)
class SweepSettings:
    """How a chain runs (W&B Appendix E's fbm set-up maps to n_latent_updates = 200 scans,
    n_leapfrog = 6, n_samples = 2000 HMC updates)."""

    n_samples: int = 2000
    burn_in: float = 1 / 3
    thin: int = 1
    n_latent_updates: int = 200
    n_leapfrog: int = 6
    step_size: float = 0.1
    target_rejection: float = 0.05

    @property
    def n_burn(self) -> int:
        return round(self.burn_in * self.n_samples)


def run_chain(conditional: HyperConditional, log_likelihood, x0, settings: SweepSettings,
              rng) -> ChainResult:
    """Alternate ESS latent updates and one HMC trajectory on x, ``settings.n_samples`` times.

    F starts from a prior draw at x0. The step size is adapted by dual averaging
    (:class:`gpcbench.mcmc.hmc.DualAveraging`, target acceptance 1 - target_rejection)
    during the first ``n_burn`` sweeps, then fixed at its tuned value, so the retained
    sweeps form an ordinary Markov chain; every ``thin``-th retained sweep is kept.
    """
    x = np.asarray(x0, dtype=float)
    chols = conditional.latent_factors(x)
    F = np.matmul(chols, rng.standard_normal(chols.shape[:2] + (1,)))[..., 0]
    log_lik = log_likelihood(F)
    adapt = hmc.DualAveraging(settings.step_size, 1.0 - settings.target_rejection)
    step_size, kept, record = settings.step_size, [], []
    for sweep in range(settings.n_samples):
        F, log_lik = latent_updates(F, log_lik, chols, log_likelihood,
                                    settings.n_latent_updates, rng)
        conditional.latents = F
        state = (x, *conditional(x))
        state, probability, accepted = hmc.hmc_step(conditional, state, step_size,
                                                    settings.n_leapfrog, rng)
        x, chols = state[0], conditional.latent_factors(state[0])
        record.append((accepted, probability, log_lik, log_lik + state[1]))
        if sweep < settings.n_burn:
            step_size = adapt.update(probability)
            step_size = adapt.tuned if sweep == settings.n_burn - 1 else step_size
        elif (sweep - settings.n_burn) % settings.thin == 0:
            kept.append((x, F))
    accepted, probability, log_liks, log_joints = (np.array(c) for c in zip(*record))
    return ChainResult(np.array([k[0] for k in kept]), np.array([k[1] for k in kept]),
                       accepted.astype(bool), probability, log_liks, log_joints,
                       settings.n_burn, float(step_size))


def run_chains(conditional, log_likelihood, settings: SweepSettings, n_chains, rng,
               init_spread=1.0) -> list[ChainResult]:
    """``n_chains`` chains from over-dispersed starts x0 + init_spread * N(0, I)."""
    starts = conditional.x0 + init_spread * rng.standard_normal((n_chains, conditional.x0.size))
    return [run_chain(conditional, log_likelihood, start, settings, rng) for start in starts]


# ---------------------------------------------------------------------- predictions
def observed_class_probabilities(latents, labels, likelihood_name) -> np.ndarray:
    """p(labels | F) of every draw of F, latents of shape (..., J, n): the binary likelihood
    ``likelihood_name`` of the signs 2 labels - 1 when J = 1, the softmax otherwise."""
    if latents.shape[-2] == 1:
        signs = 2.0 * labels - 1.0
        return np.exp(likelihoods.get_likelihood(likelihood_name).log_likelihood(
            signs * latents[..., 0, :]))
    return np.take_along_axis(softmax(latents, axis=-2), labels[None, None, None],
                              axis=-2)[..., 0, :]


def predictive_probabilities(conditional: HyperConditional, samples, latents, X_test,
                             likelihood_name, draws) -> np.ndarray:
    """Class probabilities at X_test, shape (m, max(J, 2)), averaged over the draws (x, F)
    (W&B eq. 7 / W&B sec. 4): for each, the GP conditional of the test latents
    (:meth:`HyperConditional.test_latents`) integrated against the likelihood, exactly
    (probit) or by the erf expansion (logistic) when J = 1, else by the softmax over the
    common standard normal ``draws`` of shape (n_draws, J, 1)."""
    total = 0.0
    for x, F in zip(samples, latents):
        mean, variance = conditional.test_latents(x, F, X_test)
        if mean.shape[0] == 1:
            positive = likelihoods.get_likelihood(likelihood_name).predictive_probability(
                mean[0], variance[0])
            total = total + np.column_stack([1.0 - positive, positive])
        else:
            test_latents = mean[None] + np.sqrt(variance)[None] * draws  # (draws, J, m)
            total = total + softmax(test_latents, axis=1).mean(axis=0).T
    return total / len(samples)
