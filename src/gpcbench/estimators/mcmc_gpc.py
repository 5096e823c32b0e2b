"""Fully MCMC GP classifier, "Gaussian Process (Neal's method)" of Williams & Barber (1998)
(scikit-learn API). Import it from :mod:`gpcbench.models`.

A thin layer over :mod:`gpcbench.mcmc.gp_latent` (the sampler) and
:mod:`gpcbench.mcmc.diagnostics`; prediction averages the GP conditional of the test latents
over the retained (F, x) draws.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from gpcbench.estimators.base import (
    Eq13Estimator,
    class_indices,
    document_covariance,
    store_parameters,
)
from gpcbench.estimators.laplace import WB_LEARNED
from gpcbench.mcmc.diagnostics import summarize
from gpcbench.mcmc.gp_latent import (
    HyperConditional,
    SweepSettings,
    binary_log_likelihood,
    observed_class_probabilities,
    predictive_probabilities,
    run_chains,
    softmax_log_likelihood,
)
from gpcbench.priors import GaussianLogPrior

#: Training points whose predictive probability is diagnosed (R-hat, ESS).
N_PROBES = 3


@document_covariance
class MCMCGaussianProcessClassifier(ClassifierMixin, Eq13Estimator):
    """GP classifier with latents and hyperparameters integrated by MCMC (Neal's method).

    The model is that of :class:`LaplaceGaussianProcessClassifier` (K&G eq. 13 covariance,
    independent N(-3, 3^2) priors on the learned log hyperparameters, W&B sec. 5) plus
    Neal's ``jitter`` on the latent covariance (W&B Appendix E); a binary problem has one
    latent function (logistic or probit), a J-class problem J independent ones with the
    softmax likelihood (W&B sec. 4). One sweep = ``n_latent_updates`` elliptical slice
    sampling updates of all latents (in place of Neal's Gibbs scans; both leave
    p(F | x, y) invariant) + one HMC trajectory on the log hyperparameters given F
    (:mod:`gpcbench.mcmc.gp_latent`).

    Parameters
    ----------
    {covariance_parameters}
    likelihood : {"logistic", "probit"}, default="logistic"
        Binary problems only; more classes use the softmax.
    learned_hyperparameters : collection of str, default=("theta0", "theta1", "inverse_lengthscale")
    share_class_hyperparameters : bool, default=True
        One covariance for all J latent functions (as in Neal's code, W&B sec. 5.2);
        False gives each class its own hyperparameters (W&B's multiclass model).
    prior_mean, prior_sd : float, default=-3.0, 3.0
    jitter : float, default=0.1
        Added to the latent covariance of training and test points (Neal's set-up).
    n_samples : int, default=2000
        Sweeps per chain (Neal's set-up: 500 x 4 = 2000 HMC updates).
    burn_in : float, default=1/3
        Fraction of the sweeps discarded; the HMC step size is tuned during them.
    thin : int, default=1
        Keep every ``thin``-th retained sweep.
    n_chains : int, default=2
        Independent chains from over-dispersed starts (log hyperparameters perturbed by
        ``init_spread`` N(0, 1), latents drawn from the prior).
    n_latent_updates : int, default=200
        ESS updates per sweep (Neal's set-up: 200 Gibbs scans).
    n_leapfrog : int, default=6
        Leapfrog steps per HMC trajectory (fbm's ``hybrid 6``).
    step_size : float, default=0.1
        Initial HMC step size, tuned in the burn-in towards ``target_rejection``.
    target_rejection : float, default=0.05
        W&B Appendix E: "a rejection rate of around 5%".
    init_spread : float, default=1.0
    n_predictive_draws : int, default=1000
        Monte Carlo draws per retained sample for the softmax predictive (W&B: 1000).
    random_state : int, RandomState instance or None, default=None

    Attributes
    ----------
    classes_ : ndarray
    samples_ : ndarray of shape (n_chains, n_kept, n_columns)
        Learned log hyperparameters of every kept draw.
    sample_names_ : list of str
        Names of the columns of ``samples_`` ("class <label>: <name>" per class if the
        classes do not share hyperparameters).
    latents_ : ndarray of shape (n_chains, n_kept, J, n_train)
    acceptance_rates_ : ndarray of shape (n_chains,)
        Accepted fraction of the retained HMC trajectories of each chain.
    diagnostics_ : dict
        Step sizes, burn-in acceptance rates, and mean, sd, split R-hat, bulk and tail ESS
        (:func:`gpcbench.mcmc.diagnostics.summarize`) over all chains of each log
        hyperparameter ("log_hyperparameters") and of the sampled probability of the observed
        class at N_PROBES training points ("training_predictive").
    hyperparameters_ : dict or list of dict
        exp(posterior mean of the log hyperparameters) as :meth:`Covariance.to_dict`; one
        dict per class if the classes do not share them.
    converged_ : bool
        Every split R-hat in ``diagnostics_`` below 1.1.
    n_iter_ : int
        Sweeps per chain.
    trace_ : list of dict
        Every ``thin``-th sweep of every chain: phase, HMC acceptance, log p(y | F) and log
        joint density.
    """

    def __init__(self, theta0=1.0, theta1=math.exp(-3.0), theta2=0.0,
                 inverse_lengthscale=math.exp(-2.0), ard=False, likelihood="logistic",
                 discrete_features=None, *, learned_hyperparameters=WB_LEARNED,
                 share_class_hyperparameters=True, prior_mean=-3.0, prior_sd=3.0, jitter=0.1,
                 n_samples=2000, burn_in=1 / 3, thin=1, n_chains=2, n_latent_updates=200,
                 n_leapfrog=6, step_size=0.1, target_rejection=0.05, init_spread=1.0,
                 n_predictive_draws=1000, random_state=None):
        store_parameters(self, locals())

    def fit(self, X, y):
        """Run the chains; keep the thinned retained (F, x) draws and their diagnostics."""
        X, labels = class_indices(self, X, y)
        settings = self._settings()
        self.X_train_ = X
        self._conditional = self._hyper_conditional(X)
        rng = check_random_state(self.random_state)
        chains = run_chains(self._conditional, self._log_likelihood(labels), settings,
                            self.n_chains, np.random.default_rng(rng.randint(2**32 - 1)),
                            self.init_spread)
        self._predict_seed = rng.randint(2**32 - 1)
        self.samples_ = np.array([chain.log_hyperparameters for chain in chains])
        self.sample_names_ = self._sample_names()
        self.latents_ = np.array([chain.latents for chain in chains])
        self.acceptance_rates_ = np.array([chain.acceptance_rate for chain in chains])
        self.n_iter_ = settings.n_samples
        self.trace_ = _trace(chains, settings.thin)
        self._set_diagnostics(chains, labels)
        return self

    def _settings(self) -> SweepSettings:
        settings = SweepSettings(self.n_samples, self.burn_in, self.thin, self.n_latent_updates,
                                 self.n_leapfrog, self.step_size, self.target_rejection)
        n_kept = len(range(settings.n_burn, settings.n_samples, settings.thin))
        if n_kept < 4:
            raise ValueError(f"n_samples={self.n_samples}, burn_in={self.burn_in}, "
                             f"thin={self.thin} keep {n_kept} draws per chain; need >= 4")
        return settings

    def _hyper_conditional(self, X) -> HyperConditional:
        J = 1 if self.classes_.size == 2 else self.classes_.size
        groups = np.zeros(J, int) if self.share_class_hyperparameters else np.arange(J)
        return HyperConditional(self._covariance(X.shape[1]), X,
                                self._learned_mask(X.shape[1]), groups,
                                GaussianLogPrior(self.prior_mean, self.prior_sd), self.jitter)

    def _log_likelihood(self, labels):
        if self.classes_.size > 2:
            return softmax_log_likelihood(labels)
        return binary_log_likelihood(self.likelihood, 2.0 * labels - 1.0)

    def _sample_names(self) -> list[str]:
        """Names of the columns of ``samples_``."""
        conditional = self._conditional
        names = np.array(conditional.covariance.param_names)[conditional.learned].tolist()
        if conditional.n_groups == 1:
            return names
        return [f"class {label}: {name}" for label in self.classes_ for name in names]

    def _set_diagnostics(self, chains, labels):
        probes = np.linspace(0, labels.size - 1, N_PROBES).astype(int)
        probabilities = self._training_probabilities(probes, labels)
        self.diagnostics_ = {
            "step_sizes": [chain.step_size for chain in chains],
            "burn_in_acceptance_rates": [chain.burn_in_acceptance_rate for chain in chains],
            "n_kept_per_chain": int(self.samples_.shape[1]),
            "log_hyperparameters": summarize(self.samples_, self.sample_names_),
            "training_predictive": summarize(probabilities, [f"p(y_{i})" for i in probes]),
        }
        rhats = [s["rhat"] for part in ("log_hyperparameters", "training_predictive")
                 for s in self.diagnostics_[part].values()]
        self.converged_ = bool(np.all(np.array(rhats) < 1.1))
        mean = self.samples_.mean(axis=(0, 1))
        covariances = self._conditional.covariances(mean)
        self.hyperparameters_ = (covariances[0].to_dict() if len(covariances) == 1
                                 else [c.to_dict() for c in covariances])

    def _training_probabilities(self, probes, labels) -> np.ndarray:
        """p(observed class | sampled latents) at the probe points, (chains, kept, N_PROBES)."""
        return observed_class_probabilities(self.latents_[..., probes], labels[probes],
                                            self.likelihood)

    def predict_proba(self, X):
        """Class probabilities averaged over the kept draws (W&B eq. 7 / W&B sec. 4)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        draws = np.random.default_rng(self._predict_seed).standard_normal(
            (self.n_predictive_draws, self.latents_.shape[2], 1))
        n_chains, n_kept, n_columns = self.samples_.shape
        return predictive_probabilities(
            self._conditional, self.samples_.reshape(n_chains * n_kept, n_columns),
            self.latents_.reshape(n_chains * n_kept, *self.latents_.shape[2:]), X,
            self.likelihood, draws)

    def predict(self, X):
        """The most probable class."""
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


def _trace(chains, thin) -> list[dict]:
    return [
        {"chain": c, "sweep": s, "phase": "burn-in" if s < chain.n_burn else "retained",
         "accepted": bool(chain.accepted[s]),
         "accept_probability": float(chain.accept_probability[s]),
         "log_likelihood": float(chain.log_likelihood[s]),
         "log_joint": float(chain.log_joint[s])}
        for c, chain in enumerate(chains) for s in range(0, chain.accepted.size, thin)
    ]
