"""Steps (b) and (c) of ZDJ sec. 3.2 (numba), shared by the binary and the multiclass chains:
the Gibbs draws of the precisions eta and g, the random-walk move of the kernel widths theta
and the birth, death or swap move of the active set gamma, each accepted by the marginal
likelihood of :mod:`gpcbench.mcmc.active_set`.

S (m, n) holds the auxiliary columns (the binary s: m = 1; the centred multiclass S': m = J)
and the :class:`~gpcbench.mcmc.active_set.Workspace`'s ``copies`` counts the independent
N(0, Q_gamma) columns among them (1, or J - 1 for the multiclass model, ZDJ sec. 6.2, which
shares gamma, eta, g and theta across the classes). The moves update the
:class:`~gpcbench.mcmc.active_set.ChainState` and the workspace in place, as the
:class:`Settings` ask, and count their proposals and acceptances in ``counts`` (4, 2): rows
:data:`BIRTH`, :data:`DEATH`, :data:`SWAP`, :data:`THETA`, columns :data:`PROPOSED`,
:data:`ACCEPTED`.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from gpcbench.jit import njit
from gpcbench.mcmc.active_set import (add_column, factor_upsilon, fill_factors,
                                      log_marginal_cols, log_prior_gamma, remove_column)
from gpcbench.mcmc.cholesky import (chol_append, chol_delete, copy_factor, dot, forward,
                                    log_det)
from gpcbench.kernels.rbf import kernel_column, weights
from gpcbench.mcmc.sweep_progress import MOVES

#: Rows of the move counters (in the order of :data:`MOVES`) and their two columns.
BIRTH, DEATH, SWAP, THETA = range(len(MOVES))
PROPOSED, ACCEPTED = 0, 1

Steps = namedtuple("Steps", ("update_s", "update_eta_g", "update_gamma", "update_theta"))
Steps.__doc__ = """Which updates of a ZDJ sec. 3.2 sweep run (booleans): step (a)'s s, step
(b)'s eta and g (Gibbs) and theta (random walk), step (c)'s gamma."""

Settings = namedtuple("Settings", ("a_eta", "b_eta", "a_g", "b_g", "a_alpha", "b_alpha",
                                   "jitter", "theta_step", "theta_bounds", "steps", "n_sweeps",
                                   "burn_in", "thin"))
Settings.__doc__ = """The sampler's settings (build them with :func:`sampler_settings`): the
priors eta ~ Ga(a_eta/2, b_eta/2), g ~ Ga(a_g/2, b_g/2) (shape, rate; ZDJ sec. 3.1) and the
Beta(a_alpha, b_alpha) of ZDJ eq. 10 (inf, inf: the flat prior on gamma), the jitter added to
K_gammagamma, theta's random-walk variance ``theta_step`` and its uniform priors' ends
``theta_bounds`` (2, q), the :class:`Steps`, and the schedule: ``n_sweeps`` sweeps, sweep t kept
when t >= burn_in and (t + 1 - burn_in) % thin == 0."""


def sampler_settings(*, a_eta, b_eta, a_g, b_g, a_alpha, b_alpha, jitter, theta_step,
                     theta_bounds, steps, schedule):
    """:class:`Settings` with the types the compiled chains are specialised for.

    ``steps`` : four truth values in the order of :class:`Steps`; ``schedule`` : (n_sweeps,
    burn_in, thin); the other arguments as the fields of :class:`Settings`.
    """
    n_sweeps, burn_in, thin = (int(value) for value in schedule)
    return Settings(float(a_eta), float(b_eta), float(a_g), float(b_g), float(a_alpha),
                    float(b_alpha), float(jitter), float(theta_step),
                    np.asarray(theta_bounds, dtype=np.float64),
                    Steps(*(bool(step) for step in steps)), n_sweeps, burn_in, thin)


@njit(cache=True)
def draw_precision(quad, count, a, b):
    """Ga((a + count)/2, (b + quad)/2) (shape, rate): the conjugate update of a precision
    with prior Ga(a/2, b/2) after ``count`` Gaussian coordinates of quadratic form ``quad``."""
    return np.random.gamma(0.5 * (a + count), 2.0 / (b + quad))


@njit(cache=True)
def draw_eta(u, a_eta, b_eta):
    """[eta | u] ~ Ga((a_eta + 1)/2, (b_eta + u^2)/2) (ZDJ sec. 3.2; shape, rate)."""
    return draw_precision(u * u, 1.0, a_eta, b_eta)


@njit(cache=True)
def draw_g(quad, k, a_g, b_g):
    """[g | beta] ~ Ga((a_g + n_gamma)/2, (b_g + beta' K_gammagamma beta)/2) (ZDJ sec. 3.2)."""
    return draw_precision(quad, k, a_g, b_g)


@njit(cache=True)
def draw_precisions(B, k, Kgg, copies, settings):
    """Step (b)'s (eta, g) given the coefficients B (m, k_max + 1), rows (u_j, beta_j): the
    ZDJ sec. 3.2 Gamma conditionals with ``copies`` independent rows (the multiclass B~H: J - 1
    contrasts, its class mean never entering S)."""
    uu, quad = 0.0, 0.0
    for j in range(B.shape[0]):
        uu += B[j, 0] * B[j, 0]
        for a in range(k):
            quad += B[j, a + 1] * dot(Kgg[a], B[j, 1:], k)
    return (draw_precision(uu, copies, settings.a_eta, settings.b_eta),
            draw_precision(quad, copies * k, settings.a_g, settings.b_g))


@njit(cache=True)
def move_probabilities(k, k_max):
    """(b_k, d_k) of ZDJ sec. 3.2: b_k = d_k = 0.3 for 0 < k < k_max, b_0 = 1, d_{k_max} = 1."""
    if k == 0:
        return 1.0, 0.0
    if k >= k_max:
        return 0.0, 1.0
    return 0.3, 0.3


@njit(cache=True)
def update_hyperparameters_and_active_set(X, S, B, chain, workspace, settings, counts):
    """ZDJ sec. 3.2 steps (b) and (c) after the coefficients B were drawn: eta and g (then
    Upsilon refactorised), theta, gamma, as ``settings.steps`` ask; the chain state and the
    workspace updated in place."""
    ss = 0.0
    for j in range(S.shape[0]):
        ss += dot(S[j], S[j], S.shape[1])
    if settings.steps.update_eta_g:
        k = chain.n_active[0]
        eta, g = draw_precisions(B, k, workspace.factors.kernel, workspace.copies, settings)
        chain.eta[0], chain.g[0] = eta, g
        factor_upsilon(workspace.factors, k, eta, g)
    if settings.steps.update_theta:
        theta_move(X, S, ss, chain, workspace, settings, counts)
    if settings.steps.update_gamma:
        gamma_move(X, S, ss, chain, workspace, settings, counts)


@njit(cache=True)
def _random_inactive(position):
    while True:
        j = np.random.randint(position.shape[0])
        if position[j] < 0:
            return j


@njit(cache=True)
def gamma_move(X, S, ss, chain, workspace, settings, counts):
    """Step (c): one birth, death or swap proposal for gamma, ``ss`` = sum_j s_j's_j.

    The proposal's factors are the current ones with a row deleted (death), appended
    (birth) or both (swap); the move probabilities and the prior / proposal ratios are
    ZDJ sec. 3.2's for either model (ZDJ sec. 6.2 shares gamma across the classes).
    """
    n, k, k_max = X.shape[0], chain.n_active[0], chain.active.shape[0]
    current, proposed = workspace.factors, workspace.gamma_proposal.factors
    L2, LK2, C2 = proposed.upsilon_factor, proposed.kernel_factor, proposed.projections
    b_k, d_k = move_probabilities(k, k_max)
    r = np.random.random()
    kind = BIRTH if r < b_k else (DEATH if r < b_k + d_k else SWAP)
    counts[kind, PROPOSED] += 1
    copy_factor(current.upsilon_factor, L2, k + 1)
    copy_factor(current.kernel_factor, LK2, k)
    C2[:, :k + 1] = current.projections[:, :k + 1]
    k2 = k
    m = -1
    if kind != BIRTH:  # death, or the death half of a swap
        m = np.random.randint(k)
        chol_delete(L2, k + 1, m + 1)
        chol_delete(LK2, k, m)
        C2[:, m + 1:k] = current.projections[:, m + 2:k + 1]
        k2 = k - 1
    j = -1
    if kind != DEATH:  # birth, or the birth half of a swap
        j = _random_inactive(workspace.position)
        if not _append_point(X, S, j, m, chain, workspace, settings.jitter):
            return
        k2 += 1
    for q in range(S.shape[0]):
        forward(L2, k2 + 1, C2[q], proposed.whitened[q])
    proposed.log_det_kernel[0] = log_det(LK2, k2)
    proposed.log_det_upsilon[0] = log_det(L2, k2 + 1)
    eta, g, copies = chain.eta[0], chain.g[0], workspace.copies
    log_ratio = (log_marginal_cols(proposed, k2, eta, g, ss, copies)
                 - log_marginal_cols(current, k, eta, g, ss, copies)
                 + log_prior_gamma(k2, n, settings.a_alpha, settings.b_alpha)
                 - log_prior_gamma(k, n, settings.a_alpha, settings.b_alpha))
    if kind == BIRTH:
        log_ratio += math.log(move_probabilities(k + 1, k_max)[1] * (n - k) / (b_k * (k + 1)))
    elif kind == DEATH:
        log_ratio += math.log(move_probabilities(k - 1, k_max)[0] * k / (d_k * (n - k + 1)))
    if math.log(np.random.random()) >= log_ratio:
        return
    counts[kind, ACCEPTED] += 1
    _accept_gamma(chain, workspace, m, j, k2, settings.jitter)


# inlined into its caller by numba (no compiled function of its own: less first-call compile time)
@njit(cache=True, inline="always")
def _append_point(X, S, j, m, chain, workspace, jitter):
    """The birth half of a gamma move: append point j to the proposed factors of the active
    set without position m (m < 0: none), whose size k2 is one less than its new size. False
    when a factor would lose positive definiteness (the move is then rejected)."""
    n, k, g = X.shape[0], chain.n_active[0], chain.g[0]
    k2 = k - 1 if m >= 0 else k
    current, proposal = workspace.factors, workspace.gamma_proposal
    kj, v, kgam = proposal.kernel_column, proposal.design_product, proposal.active_kernel_column
    kernel_column(X, X[j], weights(chain.theta, X.shape[1]), kj)
    _new_column(current.design, kj, chain.active, k, m, v, kgam)
    if not chol_append(proposal.factors.kernel_factor, k2, kgam, 1.0 + jitter):
        return False
    ucol = v.copy()
    for p in range(k2):
        ucol[p + 1] += g * kgam[p]
    if not chol_append(proposal.factors.upsilon_factor, k2 + 1, ucol,
                       dot(kj, kj, n) + g * (1.0 + jitter)):
        return False
    for q in range(S.shape[0]):
        proposal.factors.projections[q, k2 + 1] = dot(kj, S[q], n)
    return True


# inlined into its caller by numba (no compiled function of its own: less first-call compile time)
@njit(cache=True, inline="always")
def _accept_gamma(chain, workspace, m, j, k2, jitter):
    """Make the proposed gamma (position m removed if m >= 0, point j added if j >= 0; k2
    points) the chain's, with its factors."""
    current, proposed = workspace.factors, workspace.gamma_proposal.factors
    if m >= 0:
        remove_column(current, chain, workspace.position, chain.n_active[0], m)
    if j >= 0:
        add_column(current, chain, workspace.position, k2 - 1, j, workspace.gamma_proposal,
                   jitter)
    copy_factor(proposed.upsilon_factor, current.upsilon_factor, k2 + 1)
    copy_factor(proposed.kernel_factor, current.kernel_factor, k2)
    current.projections[:, :k2 + 1] = proposed.projections[:, :k2 + 1]
    current.whitened[:, :k2 + 1] = proposed.whitened[:, :k2 + 1]
    current.log_det_kernel[0] = proposed.log_det_kernel[0]
    current.log_det_upsilon[0] = proposed.log_det_upsilon[0]
    chain.n_active[0] = k2


@njit(cache=True)
def _new_column(Kt, kj, act, k, m, v, kgam):
    """v = K~'kj and kgam = kj[act] over the active set without position m (m < 0: none).
    K~ is read row by row (its rows are contiguous), then position m is dropped."""
    for p in range(k + 1):
        v[p] = 0.0
    for i in range(Kt.shape[0]):
        row, x = Kt[i], kj[i]
        for p in range(k + 1):
            v[p] += row[p] * x
    q = 0
    for p in range(k):
        if p != m:
            v[q + 1] = v[p + 1]
            kgam[q] = kj[act[p]]
            q += 1


@njit(cache=True)
def theta_move(X, S, ss, chain, workspace, settings, counts):
    """Random-walk MH on theta with p(S | gamma, eta, g, theta) (ZDJ eq. 8) and uniform
    priors on ``settings.theta_bounds``; S and ss as in :func:`gamma_move`. The proposal's
    factors are built afresh in the workspace's ``theta_proposal`` and copied on acceptance.
    """
    counts[THETA, PROPOSED] += 1
    theta, bounds = chain.theta, settings.theta_bounds
    star = theta + math.sqrt(settings.theta_step) * np.random.standard_normal(theta.shape[0])
    for l in range(theta.shape[0]):
        if star[l] <= bounds[0, l] or star[l] >= bounds[1, l]:
            return
    k, eta, g, copies = chain.n_active[0], chain.eta[0], chain.g[0], workspace.copies
    current, proposed = workspace.factors, workspace.theta_proposal
    fill_factors(X, S, chain, star, settings.jitter, proposed)
    log_ratio = (log_marginal_cols(proposed, k, eta, g, ss, copies)
                 - log_marginal_cols(current, k, eta, g, ss, copies))
    if math.log(np.random.random()) >= log_ratio:
        return
    counts[THETA, ACCEPTED] += 1
    theta[:] = star
    current.design[:, :k + 1] = proposed.design[:, :k + 1]
    for dst, src in ((current.design_gram, proposed.design_gram),
                     (current.kernel, proposed.kernel),
                     (current.upsilon_factor, proposed.upsilon_factor),
                     (current.kernel_factor, proposed.kernel_factor),
                     (current.projections, proposed.projections),
                     (current.whitened, proposed.whitened)):
        dst[:, :] = src
    current.log_det_kernel[0] = proposed.log_det_kernel[0]
    current.log_det_upsilon[0] = proposed.log_det_upsilon[0]
