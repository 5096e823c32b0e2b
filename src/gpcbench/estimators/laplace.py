"""Laplace GP classifier of Williams & Barber (1998) (scikit-learn API). Import it from
:mod:`gpcbench.models`.

A thin layer over :mod:`gpcbench.inference.laplace` (mode, W&B eq. 9 evidence, W&B Appendix B
gradient), :mod:`gpcbench.learning.mpl` (penalised likelihood / hyperparameter posterior) and
:mod:`gpcbench.mcmc.hmc` (W&B Appendix D); no numerics here.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from gpcbench.estimators.base import (
    BinaryOnly,
    Eq13Estimator,
    binary_signs,
    document_covariance,
    store_parameters,
)
from gpcbench.inference.laplace import averaged_predictive, laplace_mode
from gpcbench.learning.mpl import LaplaceHyperposterior, maximize_penalized_likelihood
from gpcbench.likelihoods import get_likelihood
from gpcbench.mcmc import hmc
from gpcbench.mcmc.diagnostics import summarize
from gpcbench.priors import GaussianLogPrior

LEARNING = ("mpl", "hmc", "fixed")
#: W&B sec. 5 learn v0, the offset and the w_l; theta2 (latent noise) is not in their model.
WB_LEARNED = ("theta0", "theta1", "inverse_lengthscale")


@document_covariance
class LaplaceGaussianProcessClassifier(BinaryOnly, ClassifierMixin, Eq13Estimator):
    """Binary GP classifier with Laplace's approximation (Williams & Barber 1998, W&B sec. 3).

    The prior covariance is W&B eq. 13 of Kim & Ghahramani (2006) (theta1 plays W&B's offset v1,
    theta0 their v0, the l_m their w_l), the likelihood logistic sigma(y f) or probit
    Phi(y f). Hyperparameters are fixed, set by maximum penalised likelihood (MPL) or
    integrated over by Hybrid Monte Carlo (HMC); both use independent N(-3, 3^2) priors on
    the log hyperparameters (W&B sec. 5). The defaults start from W&B's initial values
    (log v0 = 0, log w_l = -2; the offset at the prior mean, log theta1 = -3) without latent
    noise (theta2 = 0, not in W&B's model; learnable only if > 0).

    Parameters
    ----------
    {covariance_parameters}
    likelihood : {"logistic", "probit"}, default="logistic"
    hyperparameter_learning : {"mpl", "hmc", "fixed"}, default="mpl"
    learned_hyperparameters : collection of str, default=("theta0", "theta1", "inverse_lengthscale")
        Which of "theta0", "theta1", "theta2", "inverse_lengthscale" MPL / HMC move.
    prior_mean, prior_sd : float, default=-3.0, 3.0
        Gaussian prior on each learned log hyperparameter; ``prior_sd=None`` drops the prior
        (type-II maximum likelihood with "mpl").
    max_iter : int, default=200
        L-BFGS iterations for MPL.
    n_samples : int, default=200
        HMC iterations in all (W&B: 200).
    burn_in : float, default=1/3
        Fraction of the HMC iterations discarded (W&B: the first third); the step size is
        tuned during them.
    n_leapfrog : int, default=20
        Leapfrog steps per HMC trajectory.
    step_size : float, default=0.1
        Initial HMC step size (tuned in the burn-in).
    target_rejection : float, default=0.05
        Rejection probability the burn-in tuning aims at (W&B: below 5 %).
    random_state : int, RandomState instance or None, default=None
        Seeds HMC.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the positive class (y = +1).
    hyperparameters_ : dict
        theta0, theta1, theta2, inverse_lengthscale: the MPL / fixed values, or for HMC
        exp(posterior mean of the log hyperparameters over the retained samples).
    log_evidence_ : float
        Laplace log evidence (W&B eq. 9) at the fitted hyperparameters; for HMC its mean over the
        retained samples. Alias ``log_marginal_likelihood_value_``.
    converged_ : bool
        Newton (every mode) and, for MPL, L-BFGS converged.
    n_iter_ : int
        Newton steps (fixed), L-BFGS iterations (MPL) or HMC iterations (HMC).
    trace_ : list of dict
        One entry per L-BFGS iteration (MPL) or per HMC iteration (HMC: phase, log posterior,
        acceptance probability, accepted, step size, hyperparameters); one entry if fixed.
    samples_ : ndarray of shape (n_draws, n_params)
        Log hyperparameters the predictions average over: the retained HMC states, or the
        single fitted point (n_draws = 1). Columns follow ``covariance_.param_names``.
    mode_weights_ : ndarray of shape (n_draws, n_samples)
        K^-1 f^ of the Laplace mode at each row of ``samples_``.
    acceptance_rate_ : float or None
        Fraction of accepted retained HMC trajectories (None unless HMC).
    diagnostics_ : dict
        HMC only: tuned step size, burn-in acceptance rate, and per learned hyperparameter the
        posterior mean / sd of its log, split R-hat, bulk and tail effective sample size
        (:func:`gpcbench.mcmc.diagnostics.summarize`).
    covariance_ : Covariance
        The covariance at ``hyperparameters_``.
    X_train_ : ndarray of shape (n_samples, n_features)
    y_train_ : ndarray of shape (n_samples,), labels in {-1, +1}
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from gpcbench.models import LaplaceGaussianProcessClassifier
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> clf = LaplaceGaussianProcessClassifier(hyperparameter_learning="fixed")
    >>> clf.fit(X, ["a", "a", "b", "b"]).predict([[0.2], [2.8]]).tolist()
    ['a', 'b']
    """

    def __init__(self, theta0=1.0, theta1=math.exp(-3.0), theta2=0.0,
                 inverse_lengthscale=math.exp(-2.0), ard=False, likelihood="logistic",
                 hyperparameter_learning="mpl", discrete_features=None, *,
                 learned_hyperparameters=WB_LEARNED, prior_mean=-3.0, prior_sd=3.0,
                 max_iter=200, n_samples=200, burn_in=1 / 3, n_leapfrog=20, step_size=0.1,
                 target_rejection=0.05, random_state=None):
        store_parameters(self, locals())

    def fit(self, X, y):
        """Find the hyperparameters (or their posterior) and the Laplace mode(s)."""
        X, signs = binary_signs(self, X, y)
        if self.hyperparameter_learning not in LEARNING:
            raise ValueError(f"hyperparameter_learning must be one of {LEARNING}, "
                             f"got {self.hyperparameter_learning!r}")
        self.y_train_ = signs
        self._likelihood = get_likelihood(self.likelihood)
        posterior = LaplaceHyperposterior(
            self._covariance(X.shape[1]), X, signs, self._likelihood,
            self._learned_mask(X.shape[1]), GaussianLogPrior(self.prior_mean, self.prior_sd))
        getattr(self, f"_fit_{self.hyperparameter_learning}")(posterior)
        return self

    def _fit_fixed(self, posterior):
        covariance = posterior.covariance
        result = laplace_mode(covariance(posterior.X), posterior.y, self._likelihood)
        trace = [{"iteration": 0, "log_evidence": result.log_evidence,
                  "hyperparameters": covariance.to_dict(), "newton_iterations": result.n_iter,
                  "newton_converged": result.converged}]
        self._set_point(posterior, covariance, result, converged=result.converged, trace=trace,
                        n_iter=result.n_iter)

    def _fit_mpl(self, posterior):
        opt = maximize_penalized_likelihood(posterior, max_iter=self.max_iter)
        self._set_point(posterior, opt.covariance, opt.laplace, converged=opt.converged,
                        trace=opt.trace, n_iter=opt.n_iter)

    def _set_point(self, posterior, covariance, result, *, converged, trace, n_iter):
        self._set_fitted(posterior.X, covariance, log_evidence=result.log_evidence,
                         converged=converged, trace=trace, n_iter=n_iter)
        self.samples_ = covariance.log_params[None, :]
        self.mode_weights_ = result.alpha[None, :]
        self.acceptance_rate_ = None
        self.diagnostics_ = {}

    def _fit_hmc(self, posterior):
        rng = check_random_state(self.random_state)
        warmup, retained = hmc.sample(
            posterior, posterior.x0, n_samples=self.n_samples, burn_in=self.burn_in,
            step_size=self.step_size, n_leapfrog=self.n_leapfrog,
            target_rejection=self.target_rejection,
            rng=np.random.default_rng(rng.randint(2**32 - 1)))
        modes = [posterior.laplace(x) for x in retained.samples]
        self._set_fitted(
            posterior.X, posterior.covariance_at(retained.samples.mean(axis=0)),
            log_evidence=float(np.mean([mode.log_evidence for mode in modes])),
            converged=all(mode.converged for mode in modes),
            trace=_hmc_trace(posterior, warmup, "burn-in") + _hmc_trace(
                posterior, retained, "retained", start=warmup.samples.shape[0]),
            n_iter=warmup.samples.shape[0] + retained.samples.shape[0])
        self.samples_ = np.array([posterior.covariance_at(x).log_params
                                  for x in retained.samples])
        self.mode_weights_ = np.array([mode.alpha for mode in modes])
        self.acceptance_rate_ = retained.acceptance_rate
        names = np.array(self.covariance_.param_names)[posterior.learned]
        self.diagnostics_ = {
            "step_size": retained.step_size,
            "burn_in_acceptance_rate": warmup.acceptance_rate,
            "n_retained": int(retained.samples.shape[0]),
            "log_hyperparameters": summarize(retained.samples, [str(n) for n in names]),
        }

    def _predictive(self, X):
        """(p(classes_[0] | x), p(classes_[1] | x)) averaged over ``samples_`` (W&B eq. 7)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return averaged_predictive(self.covariance_, self.samples_, self.mode_weights_,
                                   self.X_train_, self.y_train_, self._likelihood, X)

    def predict_proba(self, X):
        """Class probabilities: the Gaussian integral of the likelihood (W&B Appendix A),
        averaged over the hyperparameter samples for HMC."""
        return np.column_stack(self._predictive(X))

    def decision_function(self, X):
        """log p(classes_[1] | x) - log p(classes_[0] | x): positive means ``classes_[1]``."""
        negative, positive = self._predictive(X)
        with np.errstate(divide="ignore"):
            return np.log(positive) - np.log(negative)

    def predict(self, X):
        """The more probable class."""
        scores = self.decision_function(X)
        return self.classes_[(scores > 0).astype(int)]


def _hmc_trace(posterior, result, phase, start=0) -> list[dict]:
    return [
        {"iteration": start + i, "phase": phase, "log_posterior": float(log_p),
         "accept_probability": float(prob), "accepted": bool(ok),
         "step_size": result.step_size if phase == "retained" else None,
         "hyperparameters": posterior.covariance_at(x).to_dict()}
        for i, (x, log_p, prob, ok) in enumerate(
            zip(result.samples, result.log_density, result.accept_probability,
                result.accepted))
    ]
