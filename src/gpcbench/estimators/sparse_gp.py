"""Sparse GP classification with the FIC approximation and EP (ZDJ's SGP+FIC rows).

:class:`FICGaussianProcessClassifier`: binary probit GPC whose prior is the FIC approximation
of Snelson & Ghahramani (2006) with ``k_max`` inducing inputs drawn at random (without
replacement, from ``random_state``) from the training inputs and held fixed, EP inference in
O(n m^2) per sweep (:mod:`gpcbench.inference.ep_fic`, as Naish-Guzman & Holden 2008 and
GPstuff's FIC EP do) and predictions p(y* = +1) = Phi(mean / sqrt(1 + variance)).

The kernel is ZDJ's, K(x, x') = exp(-sum_l (x_l - x'_l)^2 / theta_l^2): one width set to the
mean Euclidean distance between training points (ZDJ sec. 5.1, ``kernel_width="mean_distance"``,
SGP+FIC+EP), or widths learned (``kernel_width="learn"``; one per input with ``ard=True``,
ZDJ sec. 5.3's SGP+FIC+KL) by maximising the FIC EP log evidence with its exact gradient
(:mod:`gpcbench.inference.ep_fic_gradient`) by L-BFGS-B, started from the mean distance, EP
warm-started from the previous evaluation's sites.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from scipy.linalg import LinAlgError
from scipy.optimize import minimize
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from gpcbench.estimators.base import BinaryOnly, binary_signs, store_parameters
from gpcbench.estimators.probit_output import ProbitPredictions
from gpcbench.inference.ep_fic import fic_expectation_propagation
from gpcbench.inference.ep_fic_gradient import fic_log_evidence_gradient
from gpcbench.kernels.fic import DEFAULT_JITTER, FICPrior
from gpcbench.kernels.rbf import mean_distance
from gpcbench.likelihoods import ProbitLikelihood
from gpcbench.monitor import Progress, warn_at_cap

#: Tighter EP tolerances inside the optimiser, so that log Z and its gradient are smooth.
INNER_EP_OPTIONS = {"tol": 1e-7, "site_tol": 1e-4}
#: Learned widths stay within this factor of the mean distance (either way).
WIDTH_RANGE = 1e3


class FICGaussianProcessClassifier(ProbitPredictions, BinaryOnly, ClassifierMixin, BaseEstimator):
    """Binary sparse GP classifier: FIC prior, probit likelihood, EP (ZDJ's SGP+FIC rows).

    Parameters
    ----------
    k_max : int, default=200
        Number of inducing inputs m (capped at n), a random subset of the training inputs.
    kernel_width : 'mean_distance', 'learn' or float, default='mean_distance'
        theta of the ZDJ kernel: the mean Euclidean distance between training points
        (ZDJ sec. 5.1), learned by maximising the EP evidence from that start, or a number.
    ard : bool, default=False
        With ``kernel_width='learn'``, one width per input (ZDJ sec. 5.3).
    jitter : float, default=1e-6
        Added to the diagonal of K_mm.
    max_sweeps : int, default=100
        Cap on EP sweeps per EP run (a ConvergenceWarning when the final run reaches it).
    ep_tol, site_tol : float
        EP's convergence thresholds on the change of log Z and the scaled site change.
    max_iter : int, default=100
        Cap on L-BFGS-B iterations when learning widths (a ConvergenceWarning there).
    tol : float, default=1e-2
        L-BFGS-B's projected-gradient tolerance on d log Z / d log theta.
    random_state : int, RandomState or None
        Draws the inducing inputs.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    inducing_indices_ : ndarray of shape (m,)
        Rows of the training inputs used as inducing inputs.
    kernel_width_ : ndarray
        The width(s) used (one, or one per input).
    hyperparameters_ : dict
        kernel_width (float or list) and n_inducing.
    log_evidence_ : float
        FIC EP log Z at the final widths; alias ``log_marginal_likelihood_value_``.
    ep_ : FICEPResult
    converged_ : bool
        Whether the final EP run (and L-BFGS-B, when learning) met its tolerance.
    n_iter_ : int
        EP sweeps of the final run (fixed width) or L-BFGS-B iterations (learned widths).
    convergence_trace_ : list of dict
        One entry per evidence evaluation: log_evidence, kernel_width, ep_sweeps.
    """

    def __init__(self, k_max=200, kernel_width="mean_distance", ard=False, jitter=DEFAULT_JITTER,
                 max_sweeps=100, ep_tol=1e-4, site_tol=1e-2, max_iter=100, tol=1e-2,
                 random_state=None):
        store_parameters(self, locals())

    def _validate(self):
        width = self.kernel_width
        if not (width in ("mean_distance", "learn") or (isinstance(width, Real) and width > 0)):
            raise ValueError("kernel_width must be 'mean_distance', 'learn' or a positive number")
        if not (self.k_max >= 1 and self.max_sweeps >= 1 and self.max_iter >= 1):
            raise ValueError("k_max, max_sweeps and max_iter must be >= 1")

    def fit(self, X, y):
        """Choose the inducing inputs, (learn the widths and) run FIC EP on binary labels y."""
        self._validate()
        X, signs = binary_signs(self, X, y)
        n, p = X.shape
        rng = check_random_state(self.random_state)
        self.inducing_indices_ = np.sort(rng.choice(n, min(self.k_max, n), replace=False))
        Z = X[self.inducing_indices_]
        start = (mean_distance(X) if isinstance(self.kernel_width, str)
                 else float(self.kernel_width))
        theta = np.full(p if (self.ard and self.kernel_width == "learn") else 1, start)
        likelihood = ProbitLikelihood()
        self.convergence_trace_ = []
        ep_options = {"max_sweeps": self.max_sweeps, "tol": self.ep_tol, "site_tol": self.site_tol}
        learned = None
        if self.kernel_width == "learn":
            theta, learned, sites = self._learn(X, Z, signs, theta, likelihood)
            ep_options["initial_sites"] = sites
        prior = FICPrior.from_inputs(X, Z, theta, self.jitter)
        ep = fic_expectation_propagation(prior, signs, likelihood, **ep_options)
        if not ep.converged:
            warn_at_cap(type(self).__name__, "FIC EP", ep.n_sweeps,
                        f"damping ended at {ep.damping:g}")
        self.X_train_ = X
        self.ep_ = ep
        self.kernel_width_ = theta
        self.hyperparameters_ = {
            "kernel_width": float(theta[0]) if theta.size == 1 else theta.tolist(),
            "n_inducing": int(Z.shape[0])}
        self.log_evidence_ = self.log_marginal_likelihood_value_ = ep.log_evidence
        if learned is None:
            self.convergence_trace_.append(
                {"log_evidence": ep.log_evidence, "kernel_width": self.hyperparameters_[
                    "kernel_width"], "ep_sweeps": ep.n_sweeps})
            self.converged_, self.n_iter_ = bool(ep.converged), ep.n_sweeps
        else:
            self.converged_, self.n_iter_ = bool(learned.success and ep.converged), learned.nit
        return self

    def _learn(self, X, Z, signs, theta, likelihood):
        """L-BFGS-B on log theta maximising the FIC EP log Z with its exact gradient."""
        state = {"sites": None}
        progress = Progress(f"{type(self).__name__} (L-BFGS-B)")

        def objective(log_theta):
            width = np.exp(log_theta)
            try:
                prior = FICPrior.from_inputs(X, Z, width, self.jitter)
                ep = fic_expectation_propagation(
                    prior, signs, likelihood, max_sweeps=max(self.max_sweeps, 200),
                    initial_sites=state["sites"], **INNER_EP_OPTIONS)
            except (LinAlgError, FloatingPointError):
                state["sites"] = None  # restart EP from zero sites at the next point
                return 1e10, np.zeros_like(log_theta)
            state["sites"] = ep.sites
            gradient = fic_log_evidence_gradient(ep)
            self.convergence_trace_.append({
                "log_evidence": ep.log_evidence, "kernel_width": width.tolist(),
                "ep_sweeps": ep.n_sweeps, "gradient_norm": float(np.max(np.abs(gradient)))})
            progress("log Z %.4f, |grad| %.3g", ep.log_evidence, np.max(np.abs(gradient)))
            return -ep.log_evidence, -gradient

        start = np.log(theta)
        bounds = [(s - np.log(WIDTH_RANGE), s + np.log(WIDTH_RANGE)) for s in start]
        result = minimize(objective, start, jac=True, method="L-BFGS-B", bounds=bounds,
                          options={"maxiter": self.max_iter, "gtol": self.tol})
        if not result.success and result.nit >= self.max_iter:
            warn_at_cap(type(self).__name__, "L-BFGS-B on the FIC EP evidence", self.max_iter)
        return np.exp(result.x), result, state["sites"]

    def _latent(self, X):
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.ep_.predict(X)
