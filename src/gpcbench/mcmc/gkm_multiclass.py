"""The multiclass ZDJ sampler (ZDJ sec. 6.2) and its probit argmax probabilities.

J classes, S = (K~ B~ + E) H (ZDJ eq. 13) with the centring H = I - 11'/J, so every row of S
sums to zero and y_i = argmax_j s_ij; one active set gamma for all classes, B~'s columns
independent N(0, Sigma_gamma^-1) with the shared eta, g. For any orthonormal basis V of the
centred subspace, S V = K~ (B~V) + E V is J - 1 independent copies of the binary model
(:mod:`gpcbench.mcmc.gkm`); hence (choices where ZDJ only says "apply ZDJ sec. 3.2"):
p(S | gamma) = prod of J - 1 ZDJ eq. 8 densities (|Q|^-(J-1)/2 exp(-tr S'Q^-1 S / 2)), used by
the gamma and theta moves unchanged otherwise (``copies`` = J - 1); eta | u and g | B~H are the
ZDJ sec. 3.2 Gamma conditionals with J - 1 contrasts (the class mean of B~ never enters S; its
posterior is its prior); step (a) is Holmes-Held's marginal update applied to each row of S,
N(mu_i, (1 + r) H) on the cone {s_iy_i > s_il}, sampled by one pass of ZDJ's univariate
truncated normals (:func:`gpcbench.mcmc.holmes_held.cone_row`) -- ZDJ states them
conditionally on beta (variance 1); here beta~ is integrated out as in ZDJ sec. 3.2's step (a).
Predictions: the probit argmax probability by Gauss-Hermite quadrature
(:func:`argmax_probability`).
"""

from __future__ import annotations

import math

import numpy as np

from gpcbench.jit import njit
from gpcbench.mcmc.active_set import initial_state
from gpcbench.mcmc.cholesky import backward_t, dot
from gpcbench.mcmc.gkm import SQRT2, record_state
from gpcbench.mcmc.holmes_held import whitened_step_a
from gpcbench.mcmc.moves import steps_b_c
from gpcbench.mcmc.sweep_progress import report_sweep


def gauss_hermite(n_nodes=48):
    """Nodes and weights (2, n_nodes) of E[h(Z)], Z ~ N(0, 1), by probabilists' Gauss-Hermite."""
    nodes, weights = np.polynomial.hermite_e.hermegauss(n_nodes)
    return np.vstack([nodes, weights / math.sqrt(2.0 * math.pi)])


@njit(cache=True)
def argmax_probability(f, c, scale, nodes, weights):
    """P(argmax_l (f_l + scale e_l) = c), e ~ N(0, I_J): the multiclass probit probability
    E_z[prod_{l != c} Phi(z + (f_c - f_l) / scale)], z ~ N(0, 1), by Gauss-Hermite quadrature."""
    acc = 0.0
    for q in range(nodes.shape[0]):
        prod = weights[q]
        for l in range(f.shape[0]):
            if l != c:
                prod *= 0.5 * math.erfc(-(nodes[q] + (f[c] - f[l]) / scale) / SQRT2)
        acc += prod
    return acc


@njit(cache=True)
def add_class_probabilities(F, scale, quad, out):
    """out[i, c] += P(argmax(F[i] + scale[i] e) = c) for every row i and class c."""
    for i in range(F.shape[0]):
        for c in range(F.shape[1]):
            out[i, c] += argmax_probability(F[i], c, scale[i], quad[0], quad[1])


@njit(cache=True)
def draw_class_coefficients(L, k1, Z, noise, B):
    """B~H by rows B[j] = L'^-1 (Z[j] + e_j), e = E H, E (k1 x J) iid N(0, 1): the centred
    class coefficients, beta~_j ~ N(Upsilon^-1 K~'s_j, Upsilon^-1) per contrast (ZDJ eq. 9)."""
    J = Z.shape[0]
    for r in range(k1):
        mean = 0.0
        for j in range(J):
            noise[j, r] = np.random.standard_normal()
            mean += noise[j, r]
        mean /= J
        for j in range(J):
            noise[j, r] = Z[j, r] + noise[j, r] - mean
    for j in range(J):
        backward_t(L, k1, noise[j], B[j])


@njit(cache=True)
def _record_multi(t, Kt, k, act, B, theta, eta, g, C, probe, y, quad, f, out):
    """Store kept draw t as :func:`gpcbench.mcmc.gkm.record` does, with the class
    coefficients B~H, C = K~'S and the probe points' probabilities of their class."""
    record_state(t, k, act, theta, eta, g, out)
    kept_coef, kept_c, kept_probe = out[2], out[3], out[6]
    kept_coef[t, :, :] = 0.0
    kept_coef[t, :, :k + 1] = B[:, :k + 1]
    kept_c[t, :, :] = 0.0
    kept_c[t, :, :k + 1] = C[:, :k + 1]
    for q in range(probe.shape[0]):
        for j in range(B.shape[0]):
            f[j] = dot(Kt[probe[q]], B[j], k + 1)
        kept_probe[t, q] = argmax_probability(f, y[probe[q]], 1.0, quad[0], quad[1])


@njit(cache=True)
def run_chain_multi(X, y, S, act, k, theta, bounds, params, k_max, flags, schedule, probe,
                    quad, seed, out, counts):
    """Run one chain of the ZDJ sec. 6.2 multiclass sampler; returns the final S.

    Parameters as :func:`gpcbench.mcmc.gkm.run_chain`, except
    y : (n,) class indices 0..J-1; S : (J, n) initial centred auxiliaries S' (updated), each
        column's largest entry at its class.
    quad : (2, Q) nodes and weights of :func:`gauss_hermite` (the probe probabilities).
    out : trace (n_sweeps, J + 3) [u_1..u_J, g, eta, n_gamma] and, per kept sweep, the active
        indices (-1 padded), the centred class coefficients B~H (J, k_max + 1), C = K~'S
        (J, k_max + 1), theta, (g, eta) and the probe points' probabilities of their class.
    """
    np.random.seed(seed)
    n, J = X.shape[0], S.shape[0]
    copies = J - 1.0  # independent contrasts of S, of B~H's rows: ZDJ sec. 6.2's N(., . x H)
    eta, g, jitter = params[0], params[1], params[8]
    n_sweeps, burn_in, thin = schedule
    pos, arrays, proposal, ld, work = initial_state(X, S, act, k, theta, k_max, eta, g, jitter,
                                                    flags[3])
    Kt, G, Kgg, U, L, LK, C, Z = arrays
    W = np.zeros((n, k_max + 1))
    B, noise = np.zeros((J, k_max + 1)), np.zeros((J, k_max + 1))
    mu, x, row, f = np.zeros(J), np.zeros(J), np.zeros(J), np.zeros(J)
    for t in range(n_sweeps):
        if flags[0]:  # step (a)
            whitened_step_a(Kt, k + 1, L, W, S, y, C, Z, mu, row, x)
        draw_class_coefficients(L, k + 1, Z, noise, B)
        for j in range(J):
            out[0][t, j] = B[j, 0]
        out[0][t, J], out[0][t, J + 1], out[0][t, J + 2] = g, eta, k
        kept = t - burn_in
        if kept >= 0 and (kept + 1) % thin == 0:
            _record_multi(kept // thin, Kt, k, act, B, theta, eta, g, C, probe, y, quad, f,
                          out)
        k, eta, g = steps_b_c(X, S, B, act, pos, k, k_max, theta, bounds, params, flags, copies,
                              eta, g, (arrays, proposal, ld, work), counts)
        report_sweep(t, n_sweeps, k, counts)
    return S
