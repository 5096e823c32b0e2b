"""Hybrid (Hamiltonian) Monte Carlo, as in Williams & Barber (1998), W&B Appendix D.

Generic over the target: ``log_density_and_gradient(x) -> (log p(x), d log p / dx)`` up to a
constant, with x a real vector. The potential energy is E = -log p, the kinetic energy
|p|^2 / 2 with unit masses (the same step size for every parameter, W&B sec. 5); a
trajectory of ``n_leapfrog`` leapfrog steps of size ``step_size`` is accepted by the Metropolis
rule on H = E + |p|^2 / 2, and the momenta are redrawn (Gibbs) before each trajectory. A
non-finite log density anywhere on the trajectory rejects it.

:func:`sample` adds W&B's protocol: the first ``burn_in`` fraction of the iterations is
discarded, and the step size is tuned during it (dual averaging, Hoffman & Gelman 2014,
Algorithm 5, on the acceptance probability, target 1 - ``target_rejection``); the retained
iterations use the final tuned step size, fixed, so they are an ordinary HMC chain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class HMCResult:
    """Draws of one chain and what happened at each iteration."""

    samples: np.ndarray  # (n_samples, d)
    log_density: np.ndarray  # (n_samples,)
    accept_probability: np.ndarray  # min(1, exp(-dH)) per iteration
    accepted: np.ndarray  # bool per iteration
    step_size: float

    @property
    def acceptance_rate(self) -> float:
        return float(np.mean(self.accepted))


def leapfrog(log_density_and_gradient, x, momentum, gradient, step_size, n_leapfrog):
    """n_leapfrog leapfrog steps; (x, momentum, log density, gradient), or None if non-finite."""
    momentum = momentum + 0.5 * step_size * gradient
    for step in range(n_leapfrog):
        x = x + step_size * momentum
        log_p, gradient = log_density_and_gradient(x)
        if not (np.isfinite(log_p) and np.all(np.isfinite(gradient))):
            return None
        scale = step_size if step < n_leapfrog - 1 else 0.5 * step_size
        momentum = momentum + scale * gradient
    return x, momentum, log_p, gradient


def hmc_step(log_density_and_gradient, state, step_size, n_leapfrog, rng):
    """One HMC iteration from state = (x, log p, gradient); (new state, accept prob, accepted)."""
    x, log_p, gradient = state
    momentum = rng.standard_normal(x.shape)
    energy = -log_p + 0.5 * momentum @ momentum
    end = leapfrog(log_density_and_gradient, x, momentum, gradient, step_size, n_leapfrog)
    if end is None:
        return state, 0.0, False
    new_x, new_momentum, new_log_p, new_gradient = end
    new_energy = -new_log_p + 0.5 * new_momentum @ new_momentum
    accept_probability = math.exp(min(0.0, energy - new_energy))
    if rng.random() < accept_probability:
        return (new_x, new_log_p, new_gradient), accept_probability, True
    return state, accept_probability, False


def hmc(log_density_and_gradient, x0, n_samples, step_size, n_leapfrog, rng) -> HMCResult:
    """``n_samples`` HMC iterations from x0 with a fixed step size (W&B Appendix D)."""
    return _run(log_density_and_gradient, x0, n_samples, step_size, n_leapfrog, rng)


class DualAveraging:
    """Step-size adaptation of Hoffman & Gelman (2014), Algorithm 5 (gamma = 0.05, t0 = 10,
    kappa = 0.75, mu = log(10 step_size)), driven by the acceptance probability."""

    def __init__(self, step_size, target_acceptance):
        self.mu = math.log(10.0 * step_size)
        self.target = target_acceptance
        self.t, self.error_sum, self.log_average = 0, 0.0, math.log(step_size)

    def update(self, accept_probability) -> float:
        """Record one iteration; the step size for the next one."""
        self.t += 1
        self.error_sum += self.target - accept_probability
        log_step = self.mu - math.sqrt(self.t) / 0.05 * self.error_sum / (self.t + 10)
        weight = self.t**-0.75
        self.log_average = weight * log_step + (1.0 - weight) * self.log_average
        return math.exp(log_step)

    @property
    def tuned(self) -> float:
        """The averaged step size, used after adaptation."""
        return math.exp(self.log_average)


def tune_step_size(log_density_and_gradient, x0, n_iter, step_size, n_leapfrog, rng,
                   target_rejection=0.05) -> tuple[HMCResult, float]:
    """``n_iter`` burn-in iterations adapting the step size by :class:`DualAveraging`.

    Returns the burn-in draws and the tuned step size.
    """
    adapt = DualAveraging(step_size, 1.0 - target_rejection)
    result = _run(log_density_and_gradient, x0, n_iter, step_size, n_leapfrog, rng, adapt)
    return result, adapt.tuned


def sample(log_density_and_gradient, x0, *, n_samples=200, burn_in=1 / 3, step_size=0.1,
           n_leapfrog=20, target_rejection=0.05, rng=None) -> tuple[HMCResult, HMCResult]:
    """W&B's protocol: ``n_samples`` iterations, the first ``burn_in`` fraction discarded.

    The discarded iterations tune the step size (:func:`tune_step_size`); the retained ones
    continue the chain with that step size fixed. Returns (burn-in, retained) results.
    """
    rng = np.random.default_rng(rng)
    n_burn = int(round(burn_in * n_samples))
    warmup, tuned = tune_step_size(log_density_and_gradient, x0, n_burn, step_size,
                                   n_leapfrog, rng, target_rejection)
    start = warmup.samples[-1] if n_burn else np.asarray(x0, dtype=float)
    retained = hmc(log_density_and_gradient, start, n_samples - n_burn, tuned, n_leapfrog, rng)
    return warmup, retained


def _run(log_density_and_gradient, x0, n_iter, step_size, n_leapfrog, rng, adapt=None):
    state = _initial_state(log_density_and_gradient, x0)
    samples, log_ps, probabilities, accepted = [], [], [], []
    for _ in range(n_iter):
        state, probability, ok = hmc_step(log_density_and_gradient, state, step_size,
                                          n_leapfrog, rng)
        samples.append(state[0])
        log_ps.append(state[1])
        probabilities.append(probability)
        accepted.append(ok)
        if adapt is not None:
            step_size = adapt.update(probability)
    return HMCResult(np.reshape(samples, (n_iter, state[0].size)), np.array(log_ps),
                     np.array(probabilities), np.array(accepted, dtype=bool), float(step_size))


def _initial_state(log_density_and_gradient, x0):
    x0 = np.asarray(x0, dtype=float)
    log_p, gradient = log_density_and_gradient(x0)
    if not np.isfinite(log_p):
        raise ValueError("the log density is not finite at the initial point")
    return x0, log_p, np.asarray(gradient, dtype=float)
