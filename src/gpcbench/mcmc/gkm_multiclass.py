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
from collections import namedtuple

import numpy as np

from gpcbench.jit import njit
from gpcbench.mcmc.active_set import initial_state
from gpcbench.mcmc.cholesky import backward_t, dot
from gpcbench.mcmc.gkm import SQRT2, Record, kept_index, new_record, record_state
from gpcbench.mcmc.holmes_held import whitened_step_a
from gpcbench.mcmc.moves import update_hyperparameters_and_active_set
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


MulticlassRecord = namedtuple("MulticlassRecord", Record._fields + ("quadrature",))
MulticlassRecord.__doc__ = """What a multiclass chain records (:func:`new_multiclass_record`), as
:class:`gpcbench.mcmc.gkm.Record` with a ``trace`` (n_sweeps, J + 3) [u_1..u_J, g, eta, n_gamma],
the centred class coefficients B~H and C = K~'S (kept, J, k_max + 1) and the probe points'
probabilities of their class, by the ``quadrature`` (2, Q) of :func:`gauss_hermite`."""


def new_multiclass_record(n_sweeps, n_kept, k_max, n_theta, probe, n_classes):
    """A zeroed :class:`MulticlassRecord` for ``n_classes`` classes (the quadrature:
    :func:`gauss_hermite`'s default nodes)."""
    binary = new_record(n_sweeps, n_kept, k_max, n_theta, probe)
    return MulticlassRecord(*binary._replace(
        trace=np.zeros((n_sweeps, n_classes + 3)),
        coefficients=np.zeros((n_kept, n_classes, k_max + 1)),
        projections=np.zeros((n_kept, n_classes, k_max + 1))), gauss_hermite())


@njit(cache=True)
def _record_multi(t, record, chain, Kt, B, C, y):
    """Store kept draw t as :func:`gpcbench.mcmc.gkm.record_draw` does, with the class
    coefficients B~H, C = K~'S and the probe points' probabilities of their class."""
    record_state(t, chain, record)
    k, quad = chain.n_active[0], record.quadrature
    record.coefficients[t, :, :] = 0.0
    record.coefficients[t, :, :k + 1] = B[:, :k + 1]
    record.projections[t, :, :] = 0.0
    record.projections[t, :, :k + 1] = C[:, :k + 1]
    f = np.zeros(B.shape[0])
    for q in range(record.probe.shape[0]):
        i = record.probe[q]
        for j in range(B.shape[0]):
            f[j] = dot(Kt[i], B[j], k + 1)
        record.probe_probabilities[t, q] = argmax_probability(f, y[i], 1.0, quad[0], quad[1])


@njit(cache=True)
def run_chain_multi(X, y, S, chain, settings, seed, record):
    """Run one chain of the ZDJ sec. 6.2 multiclass sampler; returns the final S.

    Parameters as :func:`gpcbench.mcmc.gkm.run_chain`, except
    y : (n,) class indices 0..J-1; S : (J, n) initial centred auxiliaries S' (updated), each
        column's largest entry at its class.
    record : :class:`MulticlassRecord`, filled.
    """
    np.random.seed(seed)
    n, J, k_max = X.shape[0], S.shape[0], chain.active.shape[0]
    copies = J - 1.0  # independent contrasts of S, of B~H's rows: ZDJ sec. 6.2's N(., . x H)
    workspace = initial_state(X, S, chain, settings.jitter, settings.steps.update_theta, copies)
    factors = workspace.factors
    Kt, L, C, Z = factors.design, factors.upsilon_factor, factors.projections, factors.whitened
    W = np.zeros((n, k_max + 1))
    B, noise = np.zeros((J, k_max + 1)), np.zeros((J, k_max + 1))
    mu, x, row = np.zeros(J), np.zeros(J), np.zeros(J)
    for t in range(settings.n_sweeps):
        k = chain.n_active[0]
        if settings.steps.update_s:  # step (a)
            whitened_step_a(Kt, k + 1, L, W, S, y, C, Z, mu, row, x)
        draw_class_coefficients(L, k + 1, Z, noise, B)
        for j in range(J):
            record.trace[t, j] = B[j, 0]
        record.trace[t, J], record.trace[t, J + 1] = chain.g[0], chain.eta[0]
        record.trace[t, J + 2] = k
        kept = kept_index(t, settings)
        if kept >= 0:
            _record_multi(kept, record, chain, Kt, B, C, y)
        update_hyperparameters_and_active_set(X, S, B, chain, workspace, settings,
                                              record.move_counts)
        report_sweep(t, settings.n_sweeps, chain.n_active[0], record.move_counts)
    return S
