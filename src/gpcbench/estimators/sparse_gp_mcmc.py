"""SGP+FIC+MCMC (ZDJ Tables 10-12): probit GP classification under the FIC prior sampled by
Gibbs with data augmentation (:func:`gpcbench.mcmc.fic_gibbs.run_fic_gibbs`), ZDJ's kernel with
one width set to the mean Euclidean distance between training points (ZDJ sec. 5.1), k_max
inducing inputs drawn at random from the training inputs (the same draw as
:class:`~gpcbench.estimators.sparse_gp.FICGaussianProcessClassifier` for the same
``random_state``), and ZDJ sec. 5.1's MCMC settings: 10,000 sweeps, 5,000 burn-in, every 5th
sweep kept; predictions average the Rao-Blackwellised Phi(mean / sqrt(1 + var)) over the kept
sweeps of all chains.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from gpcbench.estimators.base import BinaryOnly, binary_signs, store_parameters
from gpcbench.kernels.fic import DEFAULT_JITTER, FICPrior
from gpcbench.kernels.rbf import mean_distance
from gpcbench.likelihoods import ProbitLikelihood
from gpcbench.mcmc.diagnostics import chains_converged, kept_sweeps, sweep_diagnostics
from gpcbench.mcmc.fic_gibbs import run_fic_gibbs

PREDICT_CHUNK = 1000  # test rows per block of the kept-sweep average


class FICMCMCClassifier(BinaryOnly, ClassifierMixin, BaseEstimator):
    """Binary sparse GP classifier: FIC prior, probit likelihood, Gibbs sampling.

    Parameters
    ----------
    k_max : int, default=200
        Number of inducing inputs (capped at n), a random subset of the training inputs.
    kernel_width : 'mean_distance' or float, default='mean_distance'
    jitter : float, default=1e-6
    n_sweeps, burn_in, thin : int, default=10000, 5000, 5
    n_chains : int, default=2
    random_state : int, RandomState or None

    Attributes
    ----------
    classes_, inducing_indices_, kernel_width_, hyperparameters_
    betas_ : ndarray of shape (n_kept * n_chains, m)
        U^T alpha(z) of the kept sweeps.
    diagnostics_ : dict
        ``log_likelihood``: rank-normalised split R-hat, bulk and tail ESS of the traced
        log-likelihood sum_i log Phi(y_i f_i) after the burn-in, its Brooks burn-in and the
        thinning it read (:func:`~gpcbench.mcmc.diagnostics.sweep_diagnostics`);
        ``brooks_burn_in``: that burn-in (Brooks' cusum criterion, ZDJ Table 12).
    converged_ : bool
        R-hat < 1.1 (with two chains or more) and Brooks' burn-in within ``burn_in``.
    n_iter_ : int
        Sweeps per chain.
    """

    def __init__(self, k_max=200, kernel_width="mean_distance", jitter=DEFAULT_JITTER,
                 n_sweeps=10000, burn_in=5000, thin=5, n_chains=2, random_state=None):
        store_parameters(self, locals())

    def fit(self, X, y):
        """Draw the inducing inputs and run ``n_chains`` Gibbs chains on binary labels y."""
        width = self.kernel_width
        if not (width == "mean_distance" or (isinstance(width, Real) and width > 0)):
            raise ValueError("kernel_width must be 'mean_distance' or a positive number")
        if not (self.thin >= 1 and 0 <= self.burn_in <= self.n_sweeps - self.thin
                and self.n_chains >= 1 and self.k_max >= 1):
            raise ValueError("need thin >= 1, 0 <= burn_in <= n_sweeps - thin, n_chains >= 1 "
                             "and k_max >= 1")
        X, signs = binary_signs(self, X, y)
        n = X.shape[0]
        rng = check_random_state(self.random_state)
        self.inducing_indices_ = np.sort(rng.choice(n, min(self.k_max, n), replace=False))
        theta = mean_distance(X) if width == "mean_distance" else float(width)
        self.prior_ = FICPrior.from_inputs(X, X[self.inducing_indices_], theta, self.jitter)
        seeds = rng.randint(2**31 - 1, size=self.n_chains)
        runs = [run_fic_gibbs(self.prior_, signs, self.n_sweeps, self.burn_in, self.thin, s)
                for s in seeds]
        self.betas_ = np.concatenate([betas for betas, _, _ in runs])
        self.factor_ = runs[0][2]
        traces = np.stack([trace for _, trace, _ in runs])
        log_likelihood = sweep_diagnostics(
            traces, kept_sweeps(self.n_sweeps, self.burn_in, self.thin), self.thin)
        self.diagnostics_ = {"log_likelihood": log_likelihood,
                             "brooks_burn_in": log_likelihood["brooks_burn_in"]}
        rhats = [log_likelihood["rhat"]] if self.n_chains > 1 else []
        self.converged_ = chains_converged(rhats, log_likelihood["brooks_burn_in"],
                                           self.burn_in)
        self.n_iter_ = self.n_sweeps
        self.kernel_width_ = theta
        self.hyperparameters_ = {"kernel_width": theta, "n_inducing": int(self.betas_.shape[1])}
        self.convergence_trace_ = [{"sweep": t + 1, "log_likelihood": float(traces[0, t])}
                                   for t in range(19, self.n_sweeps, 20)]
        return self

    def predict_proba(self, X):
        """p(y* | x*): the kept sweeps' Phi(+-u*^T beta / sqrt(1 + var)), averaged."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        likelihood = ProbitLikelihood()
        positive = np.empty(X.shape[0])
        for start in range(0, X.shape[0], PREDICT_CHUNK):
            u = self.prior_.projection(X[start:start + PREDICT_CHUNK])
            _, variance = self.factor_.predict(u, np.zeros(u.shape[1]))
            means = u @ self.betas_.T
            positive[start:start + u.shape[0]] = likelihood.predictive_probability(
                means, variance[:, None]).mean(axis=1)
        return np.column_stack([1.0 - positive, positive])

    def predict(self, X):
        """The class of larger predictive probability."""
        return self.classes_[(self.predict_proba(X)[:, 1] > 0.5).astype(int)]
