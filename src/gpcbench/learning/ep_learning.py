"""What the binary EP hyperparameter searches share: their result, the learned coordinates,
the gradient of log Z with respect to the likelihood parameter and the trace entry.

Both EM-EP (:mod:`gpcbench.learning.em_ep`, K&G sec. 3.3) and the direct maximisation of log
Z_EP (:mod:`gpcbench.learning.evidence_lbfgs`) learn the log hyperparameters of a
:class:`~gpcbench.kernels.covariance.Covariance` (K&G eq. 13) and, optionally, the likelihood's
parameter (epsilon of K&G eq. 10, or a Gaussian noise variance), and return an
:class:`EPLearning`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from gpcbench.kernels.covariance import COVARIANCE_NAMES, Covariance, hyperparameter_mask
from gpcbench.inference.ep import EPResult
from gpcbench.likelihoods import Likelihood

#: Relative step of the central difference in :func:`likelihood_gradient`.
LIKELIHOOD_STEP = 1e-5


@dataclass
class EPLearning:
    """Outcome of :func:`~gpcbench.learning.em_ep.em_ep`,
    :func:`~gpcbench.learning.evidence_lbfgs.maximize_evidence` and
    :func:`~gpcbench.learning.evidence_lbfgs.em_then_lbfgs`: the learned covariance and
    likelihood, EP at them, the trace (one entry per E-step or L-BFGS-B iterate), whether the
    stopping rule was met and the number of iterations."""

    covariance: Covariance
    likelihood: Likelihood
    ep: EPResult
    trace: list[dict]
    converged: bool
    n_iter: int

    @property
    def log_evidence(self) -> float:
        return self.ep.log_evidence


def learnable(learn, likelihood: Likelihood) -> tuple[str, ...]:
    """``learn`` as a tuple of names, checked against the covariance's and the likelihood's."""
    learn = tuple(learn)
    unknown = set(learn) - set(COVARIANCE_NAMES) - {likelihood.parameter_name}
    if unknown:
        raise ValueError(f"cannot learn {sorted(unknown)}")
    return learn


def free_mask(covariance: Covariance, learn) -> np.ndarray:
    """Which entries of ``covariance.params`` are optimised."""
    mask = hyperparameter_mask(covariance, learn)
    bad = [n for n, free, v in zip(covariance.param_names, mask, covariance.params)
           if free and not v > 0]
    if bad:
        raise ValueError(f"learned hyperparameters must be > 0 (log space); {bad} are not")
    return mask


def likelihood_gradient(likelihood: Likelihood, y, ep: EPResult) -> float:
    """d log Z / d log(likelihood parameter) at an EP fixed point.

    The sites are stationary there, so only the tilted normalisers sum_i log Z_i at the fixed
    cavities depend on the parameter; their derivative is taken by a central difference in
    log space. Zero for a parameter equal to zero (epsilon = 0 of K&G footnote 12).
    """
    value = float(likelihood.params[0])
    if value == 0.0:
        return 0.0
    step = LIKELIHOOD_STEP
    log_z = [np.sum(likelihood.with_parameter(value * math.exp(s)).tilted(
        y, ep.cavity_mean, ep.cavity_variance).log_z) for s in (step, -step)]
    return float((log_z[0] - log_z[1]) / (2 * step))


def hyperparameter_values(covariance, likelihood) -> dict:
    """The covariance's and the likelihood's parameter values by name."""
    return {**covariance.to_dict(), likelihood.parameter_name: float(likelihood.params[0])}


def trace_entry(iteration, ep, covariance, likelihood, bound=None) -> dict:
    """One trace entry: the E-step's log Z, bound F (None without one: a fit without M-step,
    or an L-BFGS-B step) and the hyperparameters."""
    return {
        "iteration": iteration,
        "log_evidence": ep.log_evidence,
        "lower_bound": None if bound is None else bound["F"],
        "lower_bound_prior": None if bound is None else bound["prior"],
        "m_step_gain": None,
        "hyperparameters": hyperparameter_values(covariance, likelihood),
        "ep_sweeps": ep.n_sweeps,
        "ep_converged": ep.converged,
    }
