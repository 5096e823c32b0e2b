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
(b) eta | u, g | beta_gamma by Gibbs (the two Gamma conditionals of ZDJ sec. 3.2); theta by
    a Gaussian random walk (variance ``theta_step``) accepted with p(s | gamma, eta, g, theta*)
    / p(s | gamma, eta, g, theta) (ZDJ eq. 8).
(c) gamma by a birth, death or swap move with the acceptance ratios of ZDJ sec. 3.2
    (:mod:`gpcbench.mcmc.moves`), p(s | gamma, eta, g) by ZDJ eq. 11 and the factors updated
    by a row (:mod:`gpcbench.mcmc.active_set`).
"""

from __future__ import annotations

import math

import numpy as np

from gpcbench.jit import njit
from gpcbench.mcmc.active_set import initial_state
from gpcbench.mcmc.cholesky import backward_t, dot
from gpcbench.mcmc.holmes_held import whitened_step_a
from gpcbench.mcmc.moves import steps_b_c
from gpcbench.mcmc.sweep_progress import report_sweep

SQRT2 = math.sqrt(2.0)


@njit(cache=True)
def record_state(t, k, act, theta, eta, g, out):
    """Store kept draw t's active set (-1 padded), theta and (g, eta) in ``out``."""
    kept_act, kept_theta, kept_hyp = out[1], out[4], out[5]
    kept_act[t, :] = -1
    kept_act[t, :k] = act[:k]
    kept_theta[t, :] = theta
    kept_hyp[t, 0], kept_hyp[t, 1] = g, eta


@njit(cache=True)
def record(t, Kt, k, act, beta, theta, eta, g, c, probe, out):
    """Store kept draw t in ``out`` (:func:`run_chain`): :func:`record_state`, beta~,
    c = K~'s and the probe points' Phi(u + k_i' beta)."""
    record_state(t, k, act, theta, eta, g, out)
    kept_coef, kept_c, kept_probe = out[2], out[3], out[6]
    kept_coef[t, :] = 0.0
    kept_coef[t, :k + 1] = beta[:k + 1]
    kept_c[t, :] = 0.0
    kept_c[t, :k + 1] = c[:k + 1]
    for q in range(probe.shape[0]):
        f = dot(Kt[probe[q]], beta, k + 1)
        kept_probe[t, q] = 0.5 * math.erfc(-f / SQRT2)


@njit(cache=True)
def run_chain(X, y, s, act, k, theta, bounds, params, k_max, flags, schedule, probe, seed,
              out, counts):
    """Run one chain of the ZDJ sec. 3.2 sampler; returns the final s.

    Parameters
    ----------
    X : (n, p) inputs; y : (n,) labels in {0, 1}; s : (n,) initial auxiliaries (updated).
    act : (k_max,) int, initial active indices in act[:k]; theta : (q,) kernel widths (updated).
    bounds : (2, q) uniform-prior ends for theta.
    params : eta, g, a_eta, b_eta, a_g, b_g, a_alpha, b_alpha, jitter, theta_step (variance).
    flags : update s (step a), update eta and g, update gamma (step c), learn theta.
    schedule : n_sweeps, burn_in, thin; sweep t is kept when t >= burn_in and
        (t + 1 - burn_in) % thin == 0.
    probe : int indices of training points whose Phi(u + k_i' beta) is recorded.
    out : trace (n_sweeps, 4) [u, g, eta, n_gamma] and, per kept sweep, the active indices
        (-1 padded), beta~ = (u, beta), c = K~'s, theta, (g, eta) and the probe probabilities.
    counts : (4, 2) proposals / acceptances of birth, death, swap, theta.
    """
    np.random.seed(seed)
    n = X.shape[0]
    eta, g, jitter = params[0], params[1], params[8]
    n_sweeps, burn_in, thin = schedule
    S = s.reshape((1, n))  # one auxiliary column, as the shared steps see it
    pos, arrays, proposal, ld, work = initial_state(X, S, act, k, theta, k_max, eta, g, jitter,
                                                    flags[3])
    Kt, G, Kgg, U, L, LK, C, Z = arrays
    W, mu, row, x = np.zeros((n, k_max + 1)), np.zeros(1), np.zeros(1), np.zeros(1)
    w_row, beta = np.zeros(k_max + 1), np.zeros(k_max + 1)
    for t in range(n_sweeps):
        if flags[0]:  # step (a)
            whitened_step_a(Kt, k + 1, L, W, S, y, C, Z, mu, row, x)
        for r in range(k + 1):  # beta~ ~ N(L'^-1 z, Upsilon^-1) (ZDJ eq. 9)
            w_row[r] = Z[0, r] + np.random.standard_normal()
        backward_t(L, k + 1, w_row, beta)
        out[0][t, 0], out[0][t, 1], out[0][t, 2], out[0][t, 3] = beta[0], g, eta, k
        kept = t - burn_in
        if kept >= 0 and (kept + 1) % thin == 0:
            record(kept // thin, Kt, k, act, beta, theta, eta, g, C[0], probe, out)
        k, eta, g = steps_b_c(X, S, beta.reshape((1, k_max + 1)), act, pos, k, k_max, theta,
                              bounds, params, flags, 1.0, eta, g, (arrays, proposal, ld, work),
                              counts)
        report_sweep(t, n_sweeps, k, counts)
    return s
