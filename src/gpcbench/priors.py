"""Priors on the log covariance hyperparameters (Williams & Barber 1998, W&B sec. 5).

W&B put an independent Gaussian, mean -3 and standard deviation 3, on each log hyperparameter
(:class:`GaussianLogPrior`): the penalty of maximum penalised likelihood
(:mod:`gpcbench.learning.mpl`) and the prior of the hyperparameter samplers
(:mod:`gpcbench.mcmc.gp_latent`, the HMC of :mod:`gpcbench.estimators.laplace`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class GaussianLogPrior:
    """Independent N(mean, sd^2) priors on the log hyperparameters; sd=None is flat (ML-II)."""

    mean: float = -3.0
    sd: float | None = 3.0

    def __call__(self, x):
        """(log density up to a constant, gradient) at the log hyperparameters x."""
        x = np.asarray(x, dtype=float)
        if self.sd is None:
            return 0.0, np.zeros_like(x)
        z = (x - self.mean) / self.sd
        return float(-0.5 * z @ z), -z / self.sd
