"""Direct maximisation of the EP log evidence by L-BFGS-B (the ``optimizer="lbfgs"`` scheme).

EM-EP (:mod:`gpcbench.learning.em_ep`) climbs log Z_EP through the bound F of K&G eq. 29;
K&G Theorem 1 says that at an EP fixed point the gradient of F with respect to the
covariance hyperparameters is the gradient of log Z_EP itself,

    d log Z / d log theta_k = 1/2 tr[(alpha alpha^T - (C + Lambda)^-1) dC/d log theta_k]

(``EPResult.log_evidence_gradient``, K&G eq. 31), so log Z_EP can be maximised directly by a
quasi-Newton method, as GPML and scikit-learn do for the Laplace evidence. Every evaluation
runs EP warm-started from the sites of the previous one, with tighter tolerances than a
one-off EP run so that log Z and its gradient are smooth enough for the line search.

The likelihood parameter (epsilon of K&G eq. 10, or a Gaussian noise variance), when learned,
is a further log-space coordinate: at a fixed point the sites are stationary, so its
derivative is that of sum_i log Z_i (the tilted normalisers at fixed cavities),
:func:`~gpcbench.learning.ep_learning.likelihood_gradient`.

The search, L-BFGS-B runs in trust boxes stopped by the rule of
:mod:`gpcbench.learning.stopping`, is that of :mod:`gpcbench.learning.trust_box_lbfgs`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from gpcbench.kernels.covariance import Covariance
from gpcbench.inference.ep import expectation_propagation
from gpcbench.learning.em_ep import em_ep
from gpcbench.learning.ep_learning import (
    EPLearning,
    free_mask,
    learnable,
    likelihood_gradient,
    trace_entry,
)
from gpcbench.learning.stopping import DEFAULT_FTOL, DEFAULT_GTOL, LOG_BOUNDS, StoppingRule
from gpcbench.learning.trust_box_lbfgs import (
    TRUST_RADIUS,
    WarmStartedEvidence,
    maximize_in_trust_boxes,
)
from gpcbench.likelihoods import Likelihood

#: EP tolerances inside the optimiser: log Z and its gradient must be smooth in theta.
INNER_EP_OPTIONS = {"tol": 1e-7, "site_tol": 1e-4, "max_sweeps": 200}
#: ``optimizer="em-lbfgs"``: EM-EP hands over to L-BFGS-B when three E-steps raise log Z by
#: less than this, relative (:func:`~gpcbench.learning.stopping.stalled`).
EM_STALL_RTOL = 1e-4


class EvidenceObjective(WarmStartedEvidence):
    """-log Z_EP and its gradient over the free log hyperparameters, EP warm-started.

    Parameters
    ----------
    X, y : arrays
        Training inputs and targets (+-1, or reals for a Gaussian likelihood).
    covariance : Covariance or ClassDifferenceCovariance
        Its values are the start; ``free`` marks the learned entries of its ``params``.
    likelihood : Likelihood
        Its parameter is the last coordinate when ``learn_likelihood``.
    """

    def __init__(self, X, y, covariance, likelihood, free, learn_likelihood, ep_options):
        super().__init__()
        self.X, self.y = X, y
        self.covariance, self.likelihood = covariance, likelihood
        self.free, self.learn_likelihood = free, learn_likelihood
        self.ep_options = {**ep_options, **INNER_EP_OPTIONS}

    def start(self) -> np.ndarray:
        """The starting point: free log covariance parameters (and the likelihood's)."""
        point = self.covariance.log_params[self.free]
        if self.learn_likelihood:
            point = np.append(point, np.log(self.likelihood.params[0]))
        return np.clip(point, *LOG_BOUNDS)

    def models(self, point):
        """(covariance, likelihood) at ``point``."""
        log_params = self.covariance.log_params
        n_free = int(self.free.sum())
        log_params[self.free] = point[:n_free]
        covariance = self.covariance.with_params(
            np.where(self.free, np.exp(log_params), self.covariance.params))
        likelihood = self.likelihood
        if self.learn_likelihood:
            likelihood = likelihood.with_parameter(float(np.exp(point[n_free])))
        return covariance, likelihood

    def fit(self, point):
        """(log Z, gradient in ``point``'s layout, covariance, likelihood, EP result)."""
        covariance, likelihood = self.models(point)
        ep = expectation_propagation(covariance(self.X), self.y, likelihood,
                                     initial_sites=self.sites, **self.ep_options)
        self.sites = ep.sites
        gradient = ep.log_evidence_gradient(covariance, self.X)[self.free]
        if self.learn_likelihood:
            gradient = np.append(gradient, likelihood_gradient(likelihood, self.y, ep))
        return ep.log_evidence, gradient, covariance, likelihood, ep

    def trace_entry(self, iteration, evaluation) -> dict:
        _, _, covariance, likelihood, ep = evaluation
        return trace_entry(iteration, ep, covariance, likelihood)


def maximize_evidence(
    X,
    y,
    covariance: Covariance,
    likelihood: Likelihood,
    *,
    learn,
    max_iter: int = 200,
    gtol: float = DEFAULT_GTOL,
    ftol: float = DEFAULT_FTOL,
    ep_options: dict | None = None,
    trust_radius: float = TRUST_RADIUS,
    label: str = "EP evidence L-BFGS-B",
) -> EPLearning:
    """Maximise log Z_EP over the learned hyperparameters with L-BFGS-B and its exact gradient.

    Parameters
    ----------
    X, y, covariance, likelihood, learn, ep_options
        As for :func:`~gpcbench.learning.em_ep.em_ep`.
    max_iter : int
        Maximum number of L-BFGS-B iterations.
    gtol, ftol : float
        The stopping rule (:class:`~gpcbench.learning.stopping.StoppingRule`).
    trust_radius : float
        Initial half-width of the trust box (log units) of the L-BFGS-B runs
        (:func:`~gpcbench.learning.trust_box_lbfgs.maximize_in_trust_boxes`); ``np.inf``: one
        run on the whole of LOG_BOUNDS.

    Returns
    -------
    EPLearning
        ``trace`` has one entry per L-BFGS-B iteration, in the layout of EM-EP's (no bound F:
        ``lower_bound`` and ``m_step_gain`` are None) plus ``gradient_norm`` and ``at_bound``.
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    learn = learnable(learn, likelihood)
    free = free_mask(covariance, learn)
    learn_likelihood = likelihood.parameter_name in learn
    names = [n for n, f in zip(covariance.param_names, free) if f]
    names += [likelihood.parameter_name] if learn_likelihood else []
    objective = EvidenceObjective(X, y, covariance, likelihood, free, learn_likelihood,
                                  dict(ep_options or {}))
    rule = StoppingRule(names, gtol=gtol, ftol=ftol)
    trace, (_, _, cov, lik, ep) = maximize_in_trust_boxes(
        objective, rule, max_iter=max_iter, trust_radius=trust_radius, label=label)
    return EPLearning(cov, lik, ep, trace, rule.converged, len(trace) - 1)


def em_then_lbfgs(X, y, covariance: Covariance, likelihood: Likelihood, *, learn,
                  max_iter: int = 200, gtol: float = DEFAULT_GTOL,
                  ep_options: dict | None = None, label: str = "EM-EP + L-BFGS-B") -> EPLearning:
    """K&G's EM-EP until it converges or stalls (:data:`EM_STALL_RTOL`), then
    :func:`maximize_evidence` from where it stopped (the ``optimizer="em-lbfgs"`` scheme).

    EM-EP follows the paper's path into a maximum's basin but converges only linearly where
    the evidence is flat along some direction (a signal variance traded against a fixed noise
    variance, an ARD lengthscale of a weak input); L-BFGS-B on the same log Z_EP, started at
    EM's last E-step, finishes the climb. The trace holds both phases (``phase`` "em" or
    "lbfgs", iterations numbered on); ``max_iter`` bounds them together.
    """
    first = em_ep(X, y, covariance, likelihood, learn=learn, max_iter=max_iter, gtol=gtol,
                  ep_options=ep_options, stall_rtol=EM_STALL_RTOL, label=label)
    trace = [{**entry, "phase": "em"} for entry in first.trace]
    if first.converged or first.n_iter >= max_iter:
        return replace(first, trace=trace)
    second = maximize_evidence(X, y, first.covariance, first.likelihood, learn=learn,
                               max_iter=max_iter - first.n_iter, gtol=gtol,
                               ep_options=ep_options, label=label)
    trace += [{**entry, "iteration": first.n_iter + entry["iteration"], "phase": "lbfgs"}
              for entry in second.trace[1:]]  # its first entry is EM's last E-step
    return replace(second, trace=trace, n_iter=len(trace) - 1)
