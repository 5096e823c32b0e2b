"""Reversible-jump MCMC for Bayesian generalized kernel models (ZDJ: Zhang, Dai & Jordan 2011),
the binary chain; the multiclass one is :mod:`gpcbench.mcmc.gkm_multiclass`.

Model (ZDJ sec. 3.1): probit data augmentation s = u 1 + K_gamma beta_gamma + e, e ~ N(0, I);
beta~_gamma = (u, beta_gamma')' ~ N(0, Sigma_gamma^-1) with Sigma_gamma = diag(eta, g K_gammagamma)
(Silverman's g-prior on the active set gamma), g ~ Ga(a_g/2, b_g/2), eta ~ Ga(a_eta/2, b_eta/2)
(shape, rate), the Beta-Bernoulli prior (ZDJ eq. 10) on gamma and uniform priors on the kernel
widths. K(x, x') = exp(-sum_l (x_l - x'_l)^2 / theta_l^2) (:mod:`gpcbench.kernels.rbf`).
K_gammagamma carries a jitter ``jitter * I`` wherever it appears (Sigma_gamma, the g update,
SGPC's predictive), so that duplicated inputs (a singular K, ZDJ's Moore-Penrose case)
keep the factors finite.

One sweep (ZDJ sec. 3.2), all in :func:`run_chain` (numba, no Python per sweep):

(a) s by Holmes & Held's marginal Gibbs update (ZDJ Appendix A, ZDJ alg. 1) in whitened
    coordinates (:mod:`gpcbench.mcmc.holmes_held`), then beta~ ~ N(Upsilon^-1 K~'s,
    Upsilon^-1) (ZDJ eq. 9): with Upsilon = L L' and z = L^-1 K~'s, beta~ = L'^-T (z + eps).
    The whitening is W = L^-1 K~' (a triangular solve, n (n_gamma + 1)^2 flops) or, while
    gamma and theta stay as they are and where it pays, one from the active set's eigenbasis
    (:mod:`gpcbench.mcmc.eigen_whitening`, O(n n_gamma) a sweep); both give the same
    conditionals.
(b) eta | u, g | beta_gamma by Gibbs (the two Gamma conditionals of ZDJ sec. 3.2); theta by
    a Gaussian random walk (variance ``theta_step``) accepted with p(s | gamma, eta, g, theta*)
    / p(s | gamma, eta, g, theta) (ZDJ eq. 8).
(c) gamma by a birth, death or swap move with the acceptance ratios of ZDJ sec. 3.2
    (:mod:`gpcbench.mcmc.moves`), p(s | gamma, eta, g) by ZDJ eq. 11 and the factors updated
    by a row (:mod:`gpcbench.mcmc.active_set`).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from gpcbench.jit import njit
from gpcbench.mcmc.active_set import initial_state
from gpcbench.mcmc.cholesky import backward_t, dot
from gpcbench.mcmc.eigen_whitening import (accepted_moves, allocate_eigenbasis, eigen_step_a,
                                           new_history, note_sweep, ready_basis)
from gpcbench.mcmc.holmes_held import whitened_step_a
from gpcbench.mcmc.moves import MOVES, update_hyperparameters_and_active_set
from gpcbench.mcmc.sweep_progress import report_sweep

SQRT2 = math.sqrt(2.0)

Record = namedtuple("Record", ("trace", "active", "coefficients", "projections", "theta",
                               "precisions", "probe_probabilities", "probe", "move_counts"))
Record.__doc__ = """What a chain records (:func:`new_record`): the ``trace`` (n_sweeps, 4)
[u, g, eta, n_gamma] of every sweep and, per kept sweep, the active indices (-1 padded),
the coefficients beta~ = (u, beta), the projections c = K~'s, theta, the precisions (g, eta)
and the ``probe`` points' Phi(u + k_i' beta); ``move_counts`` (4, 2) the proposals and
acceptances of the moves (:data:`gpcbench.mcmc.moves.MOVES`)."""


def new_record(n_sweeps, n_kept, k_max, n_theta, probe):
    """A zeroed :class:`Record` of a binary chain; ``probe`` int indices of training points."""
    return Record(np.zeros((n_sweeps, 4)), np.zeros((n_kept, k_max), dtype=np.int64),
                  np.zeros((n_kept, k_max + 1)), np.zeros((n_kept, k_max + 1)),
                  np.zeros((n_kept, n_theta)), np.zeros((n_kept, 2)),
                  np.zeros((n_kept, len(probe))), np.asarray(probe, dtype=np.int64),
                  np.zeros((len(MOVES), 2), dtype=np.int64))


# inlined into its caller by numba (no compiled function of its own: less first-call compile time)
@njit(cache=True, inline="always")
def kept_index(t, settings):
    """The index among the kept draws of sweep t, or -1 when the schedule does not keep it."""
    kept = t - settings.burn_in
    if kept >= 0 and (kept + 1) % settings.thin == 0:
        return kept // settings.thin
    return -1


@njit(cache=True)
def record_state(t, chain, record):
    """Store kept draw t's active set (-1 padded), theta and (g, eta) in ``record``."""
    k = chain.n_active[0]
    record.active[t, :] = -1
    record.active[t, :k] = chain.active[:k]
    record.theta[t, :] = chain.theta
    record.precisions[t, 0], record.precisions[t, 1] = chain.g[0], chain.eta[0]


@njit(cache=True)
def record_draw(t, record, chain, Kt, beta, c):
    """Store kept draw t in ``record``: :func:`record_state`, beta~, c = K~'s and the probe
    points' Phi(u + k_i' beta)."""
    record_state(t, chain, record)
    k = chain.n_active[0]
    record.coefficients[t, :] = 0.0
    record.coefficients[t, :k + 1] = beta[:k + 1]
    record.projections[t, :] = 0.0
    record.projections[t, :k + 1] = c[:k + 1]
    for q in range(record.probe.shape[0]):
        f = dot(Kt[record.probe[q]], beta, k + 1)
        record.probe_probabilities[t, q] = 0.5 * math.erfc(-f / SQRT2)


@njit(cache=True)
def run_chain(X, y, s, chain, settings, seed, record):
    """Run one chain of the ZDJ sec. 3.2 sampler; returns the final s.

    Parameters
    ----------
    X : (n, p) inputs; y : (n,) labels in {0, 1}; s : (n,) initial auxiliaries (updated).
    chain : :class:`gpcbench.mcmc.active_set.ChainState`, the initial state (updated).
    settings : :class:`gpcbench.mcmc.moves.Settings`.
    seed : the seed of numba's random stream.
    record : :class:`Record`, filled.
    """
    np.random.seed(seed)
    n, k_max = X.shape[0], chain.active.shape[0]
    S = s.reshape((1, n))  # one auxiliary column, as the shared steps see it
    workspace = initial_state(X, S, chain, settings.jitter, settings.steps.update_theta, 1.0)
    factors = workspace.factors
    Kt, L, C, Z = factors.design, factors.upsilon_factor, factors.projections, factors.whitened
    W, mu, row, x = np.zeros((n, k_max + 1)), np.zeros(1), np.zeros(1), np.zeros(1)
    w_row, beta = np.zeros(k_max + 1), np.zeros(k_max + 1)
    basis, history = allocate_eigenbasis(n, k_max), new_history(k_max)
    fixed = not (settings.steps.update_gamma or settings.steps.update_theta)
    for t in range(settings.n_sweeps):
        k = chain.n_active[0]
        accepted = accepted_moves(record.move_counts)
        if settings.steps.update_s:  # step (a)
            if ready_basis(basis, history, accepted, Kt, k, factors.kernel_factor, fixed):
                eigen_step_a(basis, k + 1, chain.eta[0], chain.g[0], factors.kernel_factor, L, W,
                             S, y, C, Z, mu, row, x)
            else:
                whitened_step_a(Kt, k + 1, L, W, S, y, C, Z, mu, row, x)
        for r in range(k + 1):  # beta~ ~ N(L'^-1 z, Upsilon^-1) (ZDJ eq. 9)
            w_row[r] = Z[0, r] + np.random.standard_normal()
        backward_t(L, k + 1, w_row, beta)
        trace = record.trace
        trace[t, 0], trace[t, 1], trace[t, 2], trace[t, 3] = beta[0], chain.g[0], chain.eta[0], k
        kept = kept_index(t, settings)
        if kept >= 0:
            record_draw(kept, record, chain, Kt, beta, C[0])
        update_hyperparameters_and_active_set(X, S, beta.reshape((1, k_max + 1)), chain,
                                              workspace, settings, record.move_counts)
        note_sweep(history, k, accepted_moves(record.move_counts) != accepted)
        report_sweep(t, settings.n_sweeps, chain.n_active[0], record.move_counts)
    return s
