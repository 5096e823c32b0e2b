"""BSVM and CSVM, the Bayesian support vector machines of Mallick, Ghosh & Ghosh (2005) (MGG),
as scikit-learn classifiers: ZDJ's (Zhang, Dai & Jordan 2011) comparison methods of their
Tables 2-5.

The sampler is :func:`gpcbench.mcmc.bayes_svm.run_chain`; this module sets ZDJ's settings as
defaults (ZDJ sec. 5.1: Gaussian RBF kernel K(x, x') = exp(-|x - x'|^2 / theta^2) with theta =
the mean Euclidean distance between training points, 10,000 sweeps, 5,000 burn-in, every 5th
sweep kept), runs independent chains, records their convergence diagnostics as the FBGKM / BGKM
/ SGPC estimators do (:mod:`gpcbench.estimators.gkm`) and averages the predictions over the
kept sweeps. The model, its two likelihoods and every assumption made where MGG could not be
consulted are in docs/bayes_svm.md.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from gpcbench.estimators.base import BinaryOnly, binary_signs
from gpcbench.mcmc.bayes_svm import (
    SHRINKAGES,
    TRACED,
    Priors,
    legendre_rule,
    predictive_positive,
    run_chain,
)
from gpcbench.mcmc.diagnostics import (chains_converged, kept_sweeps, sweep_diagnostics,
                                        worst_diagnostics)
from gpcbench.kernels.rbf import mean_distance, rbf

TRACE_EVERY = 20  # sweeps between the entries of convergence_trace_
RULE = legendre_rule(32)  # the BSVM's E[p(+1 | z)], z ~ N(f, sigma^2), piece by piece


class _BayesSVMClassifier(BinaryOnly, ClassifierMixin, BaseEstimator):
    """Shared driver; subclasses set ``_likelihood`` ("bsvm" or "csvm")."""

    _likelihood = "bsvm"

    def __init__(self, n_sweeps=10000, burn_in=5000, thin=5, kernel_width="mean_distance",
                 shrinkage="multiple", n_chains=2, random_state=None, *, a_sigma=1.0,
                 b_sigma=1.0, a_lambda=1.0, b_lambda=1.0, intercept_precision=0.01,
                 n_probe=20, scale_step=0.0):
        self.n_sweeps = n_sweeps
        self.burn_in = burn_in
        self.thin = thin
        self.kernel_width = kernel_width
        self.shrinkage = shrinkage
        self.n_chains = n_chains
        self.random_state = random_state
        self.a_sigma = a_sigma
        self.b_sigma = b_sigma
        self.a_lambda = a_lambda
        self.b_lambda = b_lambda
        self.intercept_precision = intercept_precision
        self.n_probe = n_probe
        self.scale_step = scale_step

    def _validate(self):
        counts = (self.n_sweeps, self.burn_in, self.thin, self.n_chains, self.n_probe)
        if not all(isinstance(v, Integral) and not isinstance(v, bool) for v in counts):
            raise ValueError("n_sweeps, burn_in, thin, n_chains and n_probe must be integers")
        if not (self.thin >= 1 and 0 <= self.burn_in <= self.n_sweeps - self.thin
                and self.n_chains >= 1 and self.n_probe >= 0):
            raise ValueError("need thin >= 1, 0 <= burn_in <= n_sweeps - thin (at least one "
                             "kept sweep), n_chains >= 1 and n_probe >= 0")
        width = self.kernel_width
        if not (isinstance(width, str) and width == "mean_distance"
                or isinstance(width, Real) and not isinstance(width, bool)
                and np.isfinite(width) and width > 0):
            raise ValueError(f"kernel_width must be 'mean_distance' or a positive number, "
                             f"got {width!r}")
        if self.shrinkage not in SHRINKAGES:
            raise ValueError(f"shrinkage must be one of {SHRINKAGES}, got {self.shrinkage!r}")
        priors = Priors(self.a_sigma, self.b_sigma, self.a_lambda, self.b_lambda,
                        self.intercept_precision)
        if not all(isinstance(v, Real) and np.isfinite(v) and v > 0 for v in priors):
            raise ValueError("a_sigma, b_sigma, a_lambda, b_lambda and intercept_precision "
                             f"must be positive and finite, got {priors}")
        step = self.scale_step
        if not (isinstance(step, Real) and not isinstance(step, bool) and np.isfinite(step)
                and step >= 0):
            raise ValueError(f"scale_step must be a finite number >= 0, got {step!r}")
        return priors

    def fit(self, X, y):
        """Run ``n_chains`` chains of the BSVM / CSVM sampler on (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), exactly two classes (``classes_[1]`` is +1)

        Returns
        -------
        self
        """
        priors = self._validate()
        X, signs = binary_signs(self, X, y)
        X = np.asarray(X, dtype=np.float64)
        self.X_train_ = X
        n = X.shape[0]
        width = mean_distance(X) if isinstance(self.kernel_width, str) else float(self.kernel_width)
        self.kernel_width_ = width
        Kt = np.column_stack([np.ones(n), rbf(X, X, width)])
        random_state = check_random_state(self.random_state)
        seeds = random_state.randint(2**31 - 1, size=self.n_chains)
        probe = np.sort(random_state.permutation(n)[: self.n_probe])
        schedule = (self.n_sweeps, self.burn_in, self.thin)
        chains = [run_chain(Kt, signs, self._likelihood, priors, schedule,
                            np.random.default_rng(int(seed)), shrinkage=self.shrinkage,
                            probe=probe, rule=RULE, scale_step=float(self.scale_step))
                  for seed in seeds]
        self._collect(chains)
        return self

    def _collect(self, chains):
        self.coef_ = np.concatenate([c.coef for c in chains])
        self.sigma2_ = np.concatenate([c.sigma2 for c in chains])
        self.lambda_ = np.concatenate([c.lam for c in chains])
        traces = np.stack([c.trace for c in chains])  # (chains, sweeps, len(TRACED))
        rows = kept_sweeps(self.n_sweeps, self.burn_in, self.thin)
        traced = {name: traces[:, :, i] for i, name in enumerate(TRACED)}
        self.samples_ = {name: trace[:, rows] for name, trace in traced.items()}
        self.convergence_trace_ = [
            {"sweep": t + 1, "sigma2": float(traces[0, t, 1]), "beta0": float(traces[0, t, 0])}
            for t in range(TRACE_EVERY - 1, self.n_sweeps, TRACE_EVERY)]
        accepted = sum(c.z_accepted for c in chains)
        proposed = sum(c.z_proposed for c in chains)
        scaled = sum(c.scale_accepted for c in chains)
        tried = sum(c.scale_proposed for c in chains)
        self.acceptance_rates_ = {"z": accepted / proposed if proposed else float("nan"),
                                  "scale": scaled / tried if tried else float("nan")}
        probe = np.stack([c.probe for c in chains])  # (chains, kept, n_probe)
        self.diagnostics_ = self._diagnostics(traced, probe, rows)
        rhats = [self.diagnostics_[name]["rhat"] for name in TRACED]
        rhats.append(self.diagnostics_["probe_probability"]["max_rhat"])
        self.converged_ = chains_converged(rhats, self.diagnostics_["brooks_burn_in"],
                                           self.burn_in)
        self.n_iter_ = self.n_sweeps

    def _diagnostics(self, traced, probe, rows):
        """Per traced scalar: split R-hat, bulk and tail ESS of the kept draws (all chains)
        and the Brooks CUSUM burn-in (max over chains, in sweeps, thinned by the kept draws'
        autocorrelation time); the probe points' largest R-hat and smallest bulk and tail ESS
        of p(y_i = +1 | f_i, sigma^2); the overall Brooks burn-in (NaN if any quantity's is);
        the z acceptance rate."""
        result = {name: sweep_diagnostics(trace, rows, self.thin)
                  for name, trace in traced.items()}
        result["probe_probability"] = worst_diagnostics(probe)
        result["brooks_burn_in"] = float(np.max([result[name]["brooks_burn_in"]
                                                 for name in TRACED]))
        result["z_acceptance"] = self.acceptance_rates_["z"]
        return result

    def predict_proba(self, X):
        """Model-averaged class probabilities over the kept sweeps of all chains.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, 2)
            Columns in ``classes_`` order. BSVM: the average over draws of E[p(+1 | z*)],
            z* ~ N(f_t(x*), sigma_t^2); CSVM: p(+1 | a label, not "don't know", is emitted),
            the ratio of the draws' summed E[exp(-[1 - z*]_+)] and E[Q(z*)].
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        Kt = np.column_stack([np.ones(X.shape[0]), rbf(X, self.X_train_, self.kernel_width_)])
        p = np.clip(predictive_positive(Kt, self.coef_, self.sigma2_, self._likelihood,
                                        RULE), 0.0, 1.0)
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        """Class with the larger model-averaged probability (X as in :meth:`predict_proba`)."""
        positive = self.predict_proba(X)[:, 1] > 0.5
        return self.classes_[positive.astype(int)]


_PARAMETERS = """
    Parameters
    ----------
    n_sweeps : int, default=10000
        MCMC sweeps per chain (ZDJ sec. 5.1).
    burn_in : int, default=5000
        Sweeps discarded before the kept ones.
    thin : int, default=5
        Keep every ``thin``-th sweep after the burn-in (1,000 draws per chain by default).
    kernel_width : 'mean_distance' or float, default='mean_distance'
        theta of K(x, x') = exp(-|x - x'|^2 / theta^2): the mean Euclidean distance between
        training points (ZDJ sec. 5.1) or a fixed number. MGG's Metropolis-Hastings update of
        theta is not implemented (ZDJ fixed theta too).
    shrinkage : {{'multiple', 'single'}}, default='multiple'
        One prior precision lambda_j per kernel coefficient (MGG's multiple shrinkage, their
        recommended model) or one shared by all.
    n_chains : int, default=2
        Independent chains (as the ZDJ estimators); their kept draws are pooled.
    random_state : int, RandomState instance or None, default=None
        Seeds every chain (one ``numpy.random.Generator`` each); the same seed gives the same
        draws and predictions.
    a_sigma, b_sigma : float, default=1, 1
        sigma^2 ~ IG(a_sigma, b_sigma) (shape, rate). Not given by ZDJ; docs/bayes_svm.md.
    a_lambda, b_lambda : float, default=1, 1
        lambda ~ Ga(a_lambda, b_lambda) (shape, rate). Not given by ZDJ; docs/bayes_svm.md.
    intercept_precision : float, default=0.01
        Fixed prior precision of beta_0 (beta_0 ~ N(0, sigma^2 / intercept_precision)).
    n_probe : int, default=20
        Training points whose p(y_i = +1 | f_i, sigma^2) per kept sweep enters
        ``diagnostics_``.
    scale_step : float, default=0
        0: MGG's sampler (Gibbs steps for beta, sigma^2, lambda; Metropolis-Hastings for the
        z_i). Positive: an extra Metropolis-Hastings move per sweep rescaling (z, beta,
        sigma^2) -> (c z, c beta, c^2 sigma^2), log c ~ N(0, scale_step^2); same posterior,
        not in MGG (:mod:`gpcbench.mcmc.bayes_svm`, step 5).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is coded y = +1.
    X_train_ : ndarray of shape (n_samples, n_features)
    kernel_width_ : float
        The fixed kernel width theta.
    coef_ : ndarray of shape (n_chains * n_kept, n_samples + 1)
        Kept draws of (beta_0, beta_1, ..., beta_n), chains pooled.
    sigma2_ : ndarray of shape (n_chains * n_kept,)
        Kept draws of sigma^2.
    lambda_ : ndarray of shape (n_chains * n_kept, n_samples) or (n_chains * n_kept, 1)
        Kept draws of the shrinkage precisions.
    samples_ : dict of ndarray of shape (n_chains, n_kept)
        beta0, sigma2 and log_lambda (the mean of log lambda_j) at the kept sweeps.
    acceptance_rates_ : dict
        ``z``: accepted / proposed Metropolis-Hastings moves of the latent z_i after the
        burn-in; ``scale``: the same for the scale moves (NaN when ``scale_step=0``).
    diagnostics_ : dict
        Per traced quantity (beta0, sigma2, log_lambda): ``rhat``, ``ess_bulk`` and
        ``ess_tail`` over the chains' kept draws (rank-normalised split R-hat, bulk and tail
        ESS, :mod:`gpcbench.mcmc.diagnostics`) and the Brooks (1998) CUSUM burn-in (max over
        chains, in sweeps); ``probe_probability``: ``max_rhat``, ``min_ess_bulk`` and
        ``min_ess_tail`` of p(y_i = +1 | f_i, sigma^2) over the probe points;
        ``brooks_burn_in``: the largest burn-in estimate, NaN if any quantity's is;
        ``z_acceptance``.
    convergence_trace_ : list of dict
        Chain 1's sigma^2 and beta_0 every 20th sweep (``sweep``, ``sigma2``, ``beta0``).
    converged_ : bool
        Every finite R-hat < 1.1 and the Brooks burn-in is within ``burn_in`` (the FBGKM
        estimators' rule).
    n_iter_ : int
        Sweeps per chain.
"""


class BayesianSVMClassifier(_BayesSVMClassifier):
    __doc__ = ("Bayesian SVM, BSVM (Mallick, Ghosh & Ghosh 2005; ZDJ's comparison method): "
               "latent z_i ~ N(f(x_i), sigma^2) and Sollich's normalised hinge likelihood "
               "p(y | z) = exp(-[1 - y z]_+) / (exp(-[1 - z]_+) + exp(-[1 + z]_+)).\n"
               + _PARAMETERS.format())
    _likelihood = "bsvm"


class CompleteSVMClassifier(_BayesSVMClassifier):
    __doc__ = ("Complete SVM, CSVM (Mallick, Ghosh & Ghosh 2005; ZDJ's comparison method): the "
               "BSVM hierarchy with the complete likelihood p(y | z) = kappa exp(-[1 - y z]_+) "
               "for y = -1, +1 and a third outcome 'don't know' with the remaining mass "
               "1 - kappa Q(z), kappa = 1 / (1 + e^-2); predictions condition on a label "
               "being emitted.\n" + _PARAMETERS.format())
    _likelihood = "csvm"
