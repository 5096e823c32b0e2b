"""EP estimators (scikit-learn API), composed from the covariance, likelihood, inference and
learning modules (a thin layer: no numerics here). Import them from :mod:`gpcbench.models`.

* :class:`EPGaussianProcessClassifier`: binary GPC with the covariance of K&G eq. 13, the noisy
  threshold likelihood of K&G eq. 10, EP inference (K&G eqs. 16-23), EM-EP hyperparameter learning
  (K&G sec. 3.3) and predictions by K&G eqs. 24-25 (Kim & Ghahramani 2006).
* :class:`EPGaussianProcessRegressor`: the same machinery with a Gaussian site, i.e. GP
  regression, where EP is exact (Rodrigues sec. 4).
* :func:`gpc_ep_variant`: an estimator configured as one of K&G's GPC-EP variants.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin, RegressorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from gpcbench.kernels.covariance import COVARIANCE_NAMES
from gpcbench.estimators.base import (
    BinaryOnly,
    Eq13Estimator,
    binary_signs,
    document_covariance,
    store_parameters,
)
from gpcbench.estimators.ep_variants import VARIANTS, initial_hyperparameters
from gpcbench.inference.ep import DEFAULT_SCHEDULE, expectation_propagation
from gpcbench.learning.em_ep import em_ep
from gpcbench.learning.ep_learning import hyperparameter_values, trace_entry
from gpcbench.learning.evidence_lbfgs import em_then_lbfgs, maximize_evidence
from gpcbench.learning.stopping import DEFAULT_GTOL
from gpcbench.likelihoods import GaussianLikelihood, NoisyThresholdLikelihood
from gpcbench.monitor import warn_at_cap

#: Hyperparameter learning schemes: "em" is K&G's EM-EP (K&G sec. 3.3), "lbfgs" maximises log Z_EP
#: directly with its exact gradient (K&G Theorem 1; :mod:`gpcbench.learning.evidence_lbfgs`),
#: "em-lbfgs" runs EM-EP until it converges or stalls, then "lbfgs" from there.
LEARNERS = {"lbfgs": maximize_evidence, "em": em_ep, "em-lbfgs": em_then_lbfgs}
OPTIMIZERS = tuple(LEARNERS)


class EPGaussianProcessBase(Eq13Estimator):
    """Fitting logic shared by the EP classifiers and the regressor (subclasses choose the
    likelihood and may wrap the covariance, as the multiclass classifier does)."""

    _default_learn: tuple[str, ...] = ()

    def _learned(self) -> tuple[str, ...]:
        """``learn_hyperparameters`` as names (:func:`~gpcbench.learning.em_ep.em_ep` checks
        them)."""
        if self.learn_hyperparameters is True:
            return self._default_learn
        if self.learn_hyperparameters is False or self.learn_hyperparameters is None:
            return ()
        return tuple(self.learn_hyperparameters)

    def _fit_targets(self, X, targets, likelihood):
        """EM-EP (or a single EP run) on validated inputs; sets all fitted attributes."""
        covariance = self._covariance(X.shape[1])
        learn = self._learned()
        ep_options = {"schedule": self.ep_schedule}
        if learn:
            if self.optimizer not in OPTIMIZERS:
                raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
            result = LEARNERS[self.optimizer](X, targets, covariance, likelihood, learn=learn,
                             max_iter=self.max_iter, gtol=self.tol, ep_options=ep_options,
                             label=f"{type(self).__name__} ({self.optimizer})")
            covariance, likelihood, ep = result.covariance, result.likelihood, result.ep
            trace, converged = result.trace, result.converged
        else:
            ep = expectation_propagation(covariance(X), targets, likelihood, **ep_options)
            trace = [trace_entry(0, ep, covariance, likelihood)]
            converged = True
            if not ep.converged:
                warn_at_cap(type(self).__name__, f"EP ({self.ep_schedule} schedule)",
                            ep.n_sweeps, f"damping ended at {ep.damping:g}")
        self._set_fitted(X, covariance, log_evidence=ep.log_evidence,
                         converged=converged and ep.converged, trace=trace,
                         hyperparameters=hyperparameter_values(covariance, likelihood))
        self.convergence_trace_ = trace
        self.likelihood_ = likelihood
        self.ep_ = ep
        return self

    def _latent(self, X):
        """Latent predictive mean and variance at X (K&G eq. 24)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        cross = self.covariance_(X, self.X_train_)
        return self.ep_.predict(cross, self.covariance_.diag(X))


@document_covariance
class EPGaussianProcessClassifier(BinaryOnly, ClassifierMixin, EPGaussianProcessBase):
    """Binary Gaussian process classifier with EP inference and EM-EP learning.

    The prior covariance is K&G eq. 13 of Kim & Ghahramani (2006) and the likelihood K&G eq. 10,
    epsilon + (1 - 2 epsilon) H(y f). The defaults are K&G's GPC-EP(s,soft) with the
    initial values of K&G footnote 11 and epsilon = 0 (K&G footnote 12); theta2 > 0 with epsilon = 0
    makes the threshold a probit of variance theta2 (a "soft" boundary).

    Parameters
    ----------
    {covariance_parameters}
    epsilon : float in [0, 0.5), default=0.0
        Labelling-error probability of K&G eq. 10.
    learn_hyperparameters : bool or collection of str, default=True
        True learns theta0, theta1, theta2 and the inverse lengthscales by EM-EP (epsilon stays
        fixed, as in K&G); False keeps all values; a collection names the learned ones
        among ``"theta0", "theta1", "theta2", "inverse_lengthscale", "epsilon"``.
    ep_schedule : {"sequential", "parallel"}, default="sequential"
        EP site-update schedule (see :mod:`gpcbench.inference.ep`).
    optimizer : {"lbfgs", "em", "em-lbfgs"}, default="lbfgs"
        How hyperparameters are learned: "lbfgs" maximises the EP log evidence directly by
        L-BFGS-B with its exact gradient (K&G Theorem 1), EP warm-started at every step;
        "em" is K&G's EM-EP (K&G sec. 3.3); "em-lbfgs" runs EM-EP until it converges or
        stalls in its linear phase, then "lbfgs" from there. All maximise the same log Z_EP
        and stop by the same rule (:mod:`gpcbench.learning.stopping`); "em" is several times
        slower and may stop at the cap where the evidence is flat.
    max_iter : int, default=200
        Maximum number of L-BFGS-B or EM iterations; stopping there warns
        (:class:`~sklearn.exceptions.ConvergenceWarning`) and leaves ``converged_`` False.
    tol : float, default=1e-2
        Converged when the largest |d log Z / d log theta| over the learned hyperparameters
        (projected: one at its bound pushing outwards does not count) is below ``tol``, or
        when log Z and the hyperparameters have stopped moving.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        Class labels; ``classes_[1]`` is the positive class (y = +1 of K&G).
    hyperparameters_ : dict
        Fitted theta0, theta1, theta2, inverse_lengthscale (float or list) and epsilon.
    log_evidence_ : float
        EP log Z (K&G eq. 23) at the final hyperparameters; alias
        ``log_marginal_likelihood_value_``.
    trace_ : list of dict
        One entry per iteration (E-step or L-BFGS-B step): iteration, log_evidence,
        lower_bound F, lower_bound_prior, m_step_gain (these three None for "lbfgs"),
        hyperparameters, ep_sweeps, ep_converged, gradient_norm, at_bound (learned
        hyperparameters held at a bound, e.g. an irrelevant input's inverse lengthscale) and
        stop_reason; alias ``convergence_trace_``. Without learning the single entry has no
        bound (None).
    converged_ : bool
        Whether the hyperparameter search met its stopping rule (``tol``; False when it stopped
        at ``max_iter``) and EP at the returned hyperparameters met its own tolerances. With
        "lbfgs" (and the L-BFGS-B phase of "em-lbfgs") the returned hyperparameters and EP
        run are those of the largest log Z among all of the search's evaluations, EP run
        warm-started with the search's tighter tolerances; with "em", the E-step EM-EP stopped
        at. Without learning: whether the single EP run converged.
    n_iter_ : int
        ``len(trace_)``: the start and every E-step or L-BFGS-B iterate (not the line
        searches' other EP runs), plus the best point where L-BFGS-B stopped short of it; 1
        without learning.
    covariance_ : Covariance
    likelihood_ : NoisyThresholdLikelihood
    ep_ : EPResult
        The final EP state (sites, posterior, factorisation).
    X_train_ : ndarray of shape (n_samples, n_features)
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from gpcbench.models import EPGaussianProcessClassifier
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> clf = EPGaussianProcessClassifier(learn_hyperparameters=False).fit(X, ["a", "a", "b", "b"])
    >>> clf.predict([[0.2], [2.8]]).tolist()
    ['a', 'b']
    """

    _default_learn = COVARIANCE_NAMES

    def __init__(self, theta0=1.0, theta1=1e-4, theta2=1e-3, inverse_lengthscale=0.05,
                 ard=False, epsilon=0.0, learn_hyperparameters=True, discrete_features=None, *,
                 ep_schedule=DEFAULT_SCHEDULE, optimizer="lbfgs", max_iter=200,
                 tol=DEFAULT_GTOL):
        store_parameters(self, locals())

    def fit(self, X, y):
        """Fit EP (and EM-EP when learning hyperparameters) to binary labels y."""
        X, signs = binary_signs(self, X, y)
        return self._fit_targets(X, signs, NoisyThresholdLikelihood(self.epsilon))

    def decision_function(self, X):
        """The argument of Phi in K&G eq. 25: E[f~] / sqrt(Var[f~]) (plus any probit variance).

        Its sign is that of the latent mean k^T C^-1 h, so positive means ``classes_[1]``, and
        it orders points exactly as ``predict_proba[:, 1]`` does.
        """
        mean, variance = self._latent(X)
        return self.likelihood_.decision_value(mean, variance)

    def predict_proba(self, X):
        """Class probabilities by K&G eq. 25 (the test label is assumed free of labelling error)."""
        mean, variance = self._latent(X)
        positive = self.likelihood_.predictive_probability(mean, variance)
        negative = self.likelihood_.predictive_probability(-mean, variance)
        return np.column_stack([negative, positive])

    def predict(self, X):
        """sgn(E[f~]) mapped to ``classes_`` (text after K&G eq. 26)."""
        check_is_fitted(self)
        return self.classes_[(self.decision_function(X) > 0).astype(int)]


class EPGaussianProcessRegressor(RegressorMixin, EPGaussianProcessBase):
    """Gaussian process regression through the EP machinery with a Gaussian site.

    EP is exact here (Rodrigues sec. 4): after one sweep the posterior and log Z are the
    closed-form GP regression ones (Rodrigues eq. 39). Hyperparameters are learned as for the
    classifier (``optimizer``; EM's M-step of the noise variance is closed form).

    Parameters
    ----------
    theta0, theta1, theta2, inverse_lengthscale, ard, discrete_features
        As for :class:`EPGaussianProcessClassifier` (K&G eq. 13). theta2 defaults to a fixed jitter
        of 1e-6 (the noise is the likelihood's), which keeps C positive definite for the
        M-step when inputs are duplicated.
    noise_variance : float, default=0.1
        sigma^2 of the Gaussian likelihood N(y | f, sigma^2).
    learn_hyperparameters : bool or collection of str, default=True
        True learns theta0, theta1, inverse_lengthscale and noise_variance.
    ep_schedule, optimizer, max_iter, tol
        As for the classifier.

    Attributes
    ----------
    hyperparameters_ : dict
        Fitted theta0, theta1, theta2, inverse_lengthscale and noise_variance.
    log_evidence_ : float
        log N(y | 0, C + sigma^2 I) at the final hyperparameters (Rodrigues eq. 39); alias
        ``log_marginal_likelihood_value_``.
    trace_, convergence_trace_, converged_, n_iter_, covariance_, likelihood_, ep_, X_train_,
    n_features_in_
        As for the classifier.
    """

    _default_learn = ("theta0", "theta1", "inverse_lengthscale", "noise_variance")

    def __init__(self, theta0=1.0, theta1=1.0, theta2=1e-6, inverse_lengthscale=1.0, ard=False,
                 noise_variance=0.1, learn_hyperparameters=True, discrete_features=None, *,
                 ep_schedule=DEFAULT_SCHEDULE, optimizer="lbfgs", max_iter=200,
                 tol=DEFAULT_GTOL):
        store_parameters(self, locals())

    def fit(self, X, y):
        """Fit the GP regression posterior (and hyperparameters when learning)."""
        X, y = validate_data(self, X, y, y_numeric=True)
        return self._fit_targets(X, y.astype(float), GaussianLikelihood(self.noise_variance))

    def predict(self, X, return_std=False):
        """Posterior mean of f at X; with ``return_std`` also its standard deviation
        (K&G eq. 24)."""
        mean, variance = self._latent(X)
        return (mean, np.sqrt(variance)) if return_std else mean


def gpc_ep_variant(name: str, init: dict | None = None, *,
                   classifier=EPGaussianProcessClassifier, **options):
    """A GPC-EP classifier configured as a variant of K&G Tables 4, 5 and 7.

    Parameters
    ----------
    name : {"GPC-EP(s,hard)", "GPC-EP(s,soft)", "GPC-EP(m,soft)"}
    init : dict, optional
        Starting hyperparameters, normally from
        :func:`~gpcbench.estimators.ep_variants.initial_hyperparameters` (K&G footnote 11: the
        previous fold's ``hyperparameters_``, or for (m,soft) the same fold's (s,soft) result).
        Default: K&G's first-fold values (required explicitly for (m,soft)).
    classifier : class, default=EPGaussianProcessClassifier
        The estimator to configure, e.g.
        :class:`~gpcbench.estimators.ep_multiclass.MulticlassEPGaussianProcessClassifier` for
        K&G Table 7.
    **options
        Further constructor arguments (ep_schedule, max_iter, tol, ...).
    """
    variant = VARIANTS[name]
    values = initial_hyperparameters(variant) if init is None else {**init, **variant.fixed}
    return classifier(
        **values, ard=variant.ard, learn_hyperparameters=variant.learn, **options
    )
