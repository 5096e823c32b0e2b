"""The multinomial probit likelihood and its inner EP (Riihimäki, Jylänki & Vehtari 2013, RJV).

Equation numbers are RJV eq. 12 (site precision), RJV eq. 15 (site natural mean) and RJV
Appendix A (inner EP), as GPstuff's ``gpep_e`` and ``lik_multinomprobit`` cite them; the other
steps are named, not numbered.

Notation. J classes; at one point the latent vector f = (f_1..f_J) and the label
y. The multinomial probit likelihood is

    p(y | f) = integral N(u | 0, 1) prod_{j != y} Phi(u + f_y - f_j) du,

the probability that f_y + e_y beats every f_j + e_j for independent N(0, 1) noises e. With
the auxiliary u kept, w = (f, u) carries J - 1 probit factors Phi(b_k^T w), b_k = e_y - e_{j_k} +
e_u for the classes j_1 < ... < j_{J-1} other than y (the rows of GPstuff's
``Btilde``, with u last as in the paper).

Inner EP (RJV Appendix A). Given a Gaussian cavity N(f | m, V) of the outer EP,
the tilted distribution of point i, N(f | m, V) p(y | f), is approximated by running EP on the
J + 1 dimensional w with prior N(w | (m, 0), blockdiag(V, 1)) and the J - 1 factors above, each
with a scalar Gaussian site in the direction b_k,

    t~_k(w) = exp(-alpha_k (b_k^T w)^2 / 2 + beta_k b_k^T w),

updated in turn (the one-dimensional probit moments of :func:`~gpcbench.tilted_moments
.threshold_tilted` with unit probit variance; rank-one updates of the w-posterior by
:func:`~gpcbench.inference.ep.site_rank_one`). Its normaliser (the EP evidence of
the inner problem in the natural parameters of :func:`~gpcbench.inference.ep.site_evidence`),

    log Z^ = sum_k [log Z_k + 1/2 log(1 + alpha_k / tau_-k) + nu_-k^2 / (2 tau_-k)
                    - (nu_-k + beta_k)^2 / (2 (tau_-k + alpha_k))]
             - 1/2 log|I + Sigma_0 T_w| + 1/2 mu_w^T (Sigma_0^-1 mu_0 + sum_k beta_k b_k)
             - 1/2 mu_0^T Sigma_0^-1 mu_0,

and its w-posterior gives the tilted mean and covariance of f.

The outer site (RJV eqs. 12 and 15). Integrating u out of N(u | 0, 1) prod_k t~_k leaves a
Gaussian site in f whose precision has the structured form

    T~ = diag(pi) - pi pi^T / (1^T pi),   pi_y = 1,  pi_{j_k} = alpha_k,                 (12)

and whose natural mean is nu~_y = c, nu~_{j_k} = c alpha_k - beta_k with c = sum_k beta_k /
(1^T pi) (RJV eq. 15): the precision of the class differences f_y - f_j once the shared u is
integrated out. T~ 1 = 0, so T~ only sees differences of the latent values, as p(y | f) does.
The outer posterior then needs J Choleskys of n x n and one of the n x n sum S,
:mod:`gpcbench.inference.nested_ep`.

Everything per point is numba-compiled (:func:`inner_ep`, :func:`cavity`) and looped over the
points in compiled code (:func:`inner_ep_batch`, :func:`cavity_batch`); none of it forms an
inverse: the cavity is V = (I - Sigma T~)^-1 Sigma and
m = (I - Sigma T~)^-1 (mu - Sigma nu~) from the posterior marginal N(mu, Sigma).

Predictive class probabilities: the inner-EP normaliser Z^ of every class c at
the latent predictive N(f* | mu*, Sigma*), normalised over the classes
(:func:`inner_ep_class_probabilities`, the paper's predictive and GPstuff's ``predy``); the
exact value is the (J - 1)-dimensional Gaussian orthant probability of f* + e, which
:func:`gpcbench.inference.ep_multiclass.orthant_probabilities` integrates (Genz).
"""

from __future__ import annotations

import math

import numpy as np

from gpcbench.inference.ep import site_evidence, site_rank_one
from gpcbench.jit import njit
from gpcbench.tilted_moments import threshold_tilted

#: Inner EP run to convergence (predictions, tests): passes at most and the largest scaled
#: site change, max_k(|d alpha_k| v_k, |d beta_k| sqrt(v_k)), at which it stops.
INNER_MAX_PASSES = 50
INNER_TOL = 1e-10


# ------------------------------------------------------------------------------ outer sites
def site_parameters(labels, alpha, beta, n_classes):
    """pi (J, n) and the natural means nu~ (J, n) of the outer sites (RJV eqs. 12 and 15).

    ``alpha`` and ``beta`` (n, J-1) are the inner sites of every point, column k belonging to
    the k-th class other than the label in increasing order.
    """
    labels = np.asarray(labels)
    n = labels.size
    others = other_classes(labels, n_classes)
    rows = np.arange(n)[:, None]
    pi = np.zeros((n, n_classes))
    pi[np.arange(n), labels] = 1.0
    pi[rows, others] = alpha
    scale = np.sum(beta, axis=1) / np.sum(pi, axis=1)  # c of RJV eq. 15
    nu = np.zeros((n, n_classes))
    nu[np.arange(n), labels] = scale
    nu[rows, others] = scale[:, None] * alpha - beta
    return pi.T, nu.T


def other_classes(labels, n_classes) -> np.ndarray:
    """The classes other than each label, in increasing order, shape (n, J-1)."""
    k = np.arange(n_classes - 1)[None, :]
    labels = np.asarray(labels)[:, None]
    return k + (k >= labels)


# ------------------------------------------------------------------------------ inner EP
@njit(cache=True)
def _marginal(cov_w, mean_w, y, k, a):
    """Fills a = Sigma_w b for factor k's b = e_y - e_other + e_u (``other`` the k-th class
    other than y) and returns (b^T Sigma_w b, b^T mu_w)."""
    other = k if k < y else k + 1
    u = mean_w.size - 1
    for r in range(mean_w.size):
        a[r] = cov_w[r, y] - cov_w[r, other] + cov_w[r, u]
    return a[y] - a[other] + a[u], mean_w[y] - mean_w[other] + mean_w[u]


@njit(cache=True)
def _factor_cavity(cov_w, mean_w, y, k, a, alpha_k, beta_k):
    """:func:`_marginal` of factor k and its cavity (tau_-k, nu_-k): the marginal's natural
    parameters less the site's (alpha_k, beta_k)."""
    variance, mean = _marginal(cov_w, mean_w, y, k, a)
    return variance, mean, 1.0 / variance - alpha_k, mean / variance - beta_k


@njit(cache=True)
def _rank_one(cov_w, mean_w, a, d_tau, d_nu, variance, mean):
    """Apply a site change (d_tau, d_nu) in the direction whose Sigma_w b is ``a``; returns the
    change of log|I + Sigma_0 T_w| (matrix determinant lemma)."""
    denom, c, g = site_rank_one(d_tau, d_nu, variance, mean)
    d = mean_w.size
    for r in range(d):
        mean_w[r] += g * a[r]
        ca = c * a[r]
        for s in range(d):
            cov_w[r, s] -= ca * a[s]
    return math.log(denom)


@njit(cache=True)
def inner_ep(y, cav_mean, cav_cov, cav_natural_mean, alpha, beta, max_passes, tol):
    """Inner EP for one point (module docstring), warm-started from the sites (alpha, beta).

    Parameters
    ----------
    y : int
        The label.
    cav_mean, cav_cov : arrays (J,), (J, J)
        The cavity N(f | m, V).
    cav_natural_mean : array (J,)
        V^-1 m.
    alpha, beta : arrays (J-1,)
        Inner sites, updated in place.
    max_passes : int
        Passes over the J - 1 factors at most: 1 is the paper's incremental update (one inner
        pass per outer sweep, the paper's incremental update), 0 only evaluates the normaliser.
    tol : float
        Stop when the largest scaled site change of a pass is below it.

    Returns
    -------
    mean_w, cov_w : the w-posterior (tilted moments of f are the first J entries)
    site_terms : (3, J-1) array of log Z_k, tau_-k and nu_-k at the final posterior
    gaussian : the Gaussian part of log Z^ (the last three terms of the module docstring)
    passes : int
    converged : bool
    ok : bool, False if a factor's cavity was improper (not possible for probit sites with
         a proper outer cavity; reported instead of raised inside compiled code)
    """
    J = cav_mean.size
    mean_w = np.zeros(J + 1)
    mean_w[:J] = cav_mean
    cov_w = np.zeros((J + 1, J + 1))
    cov_w[:J, :J] = cav_cov
    cov_w[J, J] = 1.0
    a = np.empty(J + 1)
    site_terms = np.zeros((3, J - 1))
    log_det = 0.0
    for k in range(J - 1):
        if alpha[k] != 0.0 or beta[k] != 0.0:
            variance, mean = _marginal(cov_w, mean_w, y, k, a)
            log_det += _rank_one(cov_w, mean_w, a, alpha[k], beta[k], variance, mean)
    passes, converged, ok = 0, max_passes == 0, True
    for _ in range(max_passes):
        change = 0.0
        for k in range(J - 1):
            variance, mean, cav_tau, cav_nu = _factor_cavity(cov_w, mean_w, y, k, a, alpha[k],
                                                             beta[k])
            if not cav_tau > 0.0:
                return mean_w, cov_w, site_terms, 0.0, passes, False, False
            r = threshold_tilted(1.0, cav_nu / cav_tau, 1.0 / cav_tau, 0.0, 1.0)
            d_tau, d_nu = r[3] - alpha[k], r[4] - beta[k]
            change = max(change, abs(d_tau) * variance, abs(d_nu) * math.sqrt(variance))
            alpha[k], beta[k] = r[3], r[4]
            log_det += _rank_one(cov_w, mean_w, a, d_tau, d_nu, variance, mean)
        passes += 1
        if change < tol:
            converged = True
            break
    quadratic = 0.0  # sum_k beta_k b_k^T mu_w
    for k in range(J - 1):
        _, mean, cav_tau, cav_nu = _factor_cavity(cov_w, mean_w, y, k, a, alpha[k], beta[k])
        if not cav_tau > 0.0:
            ok = False
            cav_tau = 1.0
        r = threshold_tilted(1.0, cav_nu / cav_tau, 1.0 / cav_tau, 0.0, 1.0)
        site_terms[0, k], site_terms[1, k], site_terms[2, k] = r[0], cav_tau, cav_nu
        quadratic += beta[k] * mean
    gaussian = (-0.5 * log_det + 0.5 * (mean_w[:J] @ cav_natural_mean + quadratic)
                - 0.5 * (cav_mean @ cav_natural_mean))
    return mean_w, cov_w, site_terms, gaussian, passes, converged, ok


@njit(cache=True)
def inner_ep_batch(labels, cav_mean, cav_cov, cav_natural_mean, alpha, beta, max_passes, tol):
    """:func:`inner_ep` at every point: cavities (n, J), (n, J, J), (n, J); sites (n, J-1)
    updated in place. Returns tilted means (n, J), covariances (n, J, J), site terms
    (n, 3, J-1), Gaussian parts (n,), passes (n,), converged and ok flags (n,)."""
    n, J = cav_mean.shape
    means = np.empty((n, J))
    covs = np.empty((n, J, J))
    terms = np.empty((n, 3, J - 1))
    gaussian = np.empty(n)
    passes = np.empty(n, dtype=np.int64)
    converged = np.empty(n, dtype=np.bool_)
    ok = np.empty(n, dtype=np.bool_)
    for i in range(n):
        mean_w, cov_w, site_terms, gauss, n_passes, done, fine = inner_ep(
            labels[i], cav_mean[i], cav_cov[i], cav_natural_mean[i], alpha[i], beta[i],
            max_passes, tol)
        terms[i], gaussian[i], passes[i], converged[i], ok[i] = (site_terms, gauss, n_passes,
                                                                 done, fine)
        means[i] = mean_w[:J]
        covs[i] = cov_w[:J, :J]
    return means, covs, terms, gaussian, passes, converged, ok


def tilted_log_normaliser(terms, gaussian, alpha, beta) -> np.ndarray:
    """log Z^ of every point (module docstring) from :func:`inner_ep_batch`'s
    site terms (log Z_k, tau_-k, nu_-k) and Gaussian parts; shape (n,)."""
    per_site = site_evidence(terms[:, 0], alpha, beta, terms[:, 1], terms[:, 2])
    return np.sum(per_site, axis=1) + gaussian


def tilted_moments(labels, cav_mean, cav_cov, *, alpha=None, beta=None,
                   max_passes=INNER_MAX_PASSES, tol=INNER_TOL):
    """Inner-EP approximation of the tilted distributions N(f | m_i, V_i) p(y_i | f).

    Parameters
    ----------
    labels : int array (n,)
    cav_mean, cav_cov : arrays (n, J), (n, J, J)
        Proper Gaussians N(m_i, V_i).
    alpha, beta : arrays (n, J-1), optional
        Starting inner sites (default zero; copied).

    Returns
    -------
    log_z, mean, cov, alpha, beta, converged
        log Z^ (n,), tilted means (n, J) and covariances (n, J, J), the inner sites and
        whether every inner EP met ``tol``.
    """
    labels = np.asarray(labels, dtype=np.int64)
    cav_mean = np.ascontiguousarray(cav_mean, dtype=float)
    cav_cov = np.ascontiguousarray(cav_cov, dtype=float)
    n, J = cav_mean.shape
    alpha = np.zeros((n, J - 1)) if alpha is None else np.array(alpha, dtype=float)
    beta = np.zeros((n, J - 1)) if beta is None else np.array(beta, dtype=float)
    natural = np.linalg.solve(cav_cov, cav_mean[:, :, None])[:, :, 0]
    mean, cov, terms, gaussian, _, converged, ok = inner_ep_batch(
        labels, cav_mean, cav_cov, natural, alpha, beta, max_passes, tol)
    if not np.all(ok):
        raise FloatingPointError(f"inner EP: improper factor cavity at points "
                                 f"{np.flatnonzero(~ok)[:10]}")
    log_z = tilted_log_normaliser(terms, gaussian, alpha, beta)
    return log_z, mean, cov, alpha, beta, bool(np.all(converged))


def inner_ep_class_probabilities(mean, cov) -> np.ndarray:
    """Predictive class probabilities by the inner EP (the paper's; GPstuff's ``predy``): Z^ of every class at the
    latent predictive N(mean_p, cov_p), normalised over the classes; shape (m, J)."""
    mean = np.atleast_2d(np.asarray(mean, dtype=float))
    m, J = mean.shape
    cov = np.asarray(cov, dtype=float).reshape(m, J, J)
    labels = np.tile(np.arange(J), m)
    log_z = tilted_moments(labels, np.repeat(mean, J, axis=0), np.repeat(cov, J, axis=0))[0]
    log_z = log_z.reshape(m, J)
    log_z -= log_z.max(axis=1, keepdims=True)
    probs = np.exp(log_z)
    return probs / probs.sum(axis=1, keepdims=True)


# ------------------------------------------------------------------------------ cavities
@njit(cache=True)
def _is_positive_definite(matrix):
    """Whether the (small) symmetric ``matrix`` has a Cholesky factor."""
    n = matrix.shape[0]
    chol = np.zeros((n, n))
    for j in range(n):
        pivot = matrix[j, j] - np.sum(chol[j, :j] ** 2)
        if not pivot > 0.0:
            return False
        chol[j, j] = math.sqrt(pivot)
        for i in range(j + 1, n):
            chol[i, j] = (matrix[i, j] - np.sum(chol[i, :j] * chol[j, :j])) / chol[j, j]
    return True


@njit(cache=True)
def cavity(post_mean, post_cov, pi, site_nu):
    """The cavity of one point from its posterior marginal N(mu, Sigma) and its
    outer site (pi of RJV eq. 12, nu~ of RJV eq. 15), without inverting:

        A = I - Sigma T~,   V = A^-1 Sigma,   m = A^-1 (mu - Sigma nu~),   V^-1 m = Sigma^-1 mu - nu~.

    Returns (m, V, V^-1 m, log|A|, mu^T Sigma^-1 mu, proper): log|A| = -log|I + V T~| and the
    quadratic enter the outer evidence; ``proper`` is False when V is not positive definite.
    """
    J = post_mean.size
    site_prec = np.diag(pi) - np.outer(pi, pi) / np.sum(pi)  # RJV eq. 12
    A = np.eye(J) - post_cov @ site_prec
    cov = np.linalg.solve(A, post_cov)
    cov = 0.5 * (cov + cov.T)
    mean = np.linalg.solve(A, post_mean - post_cov @ site_nu)
    weights = np.linalg.solve(post_cov, post_mean)
    sign, log_det = np.linalg.slogdet(A)
    proper = sign > 0 and _is_positive_definite(cov)
    return mean, cov, weights - site_nu, log_det, post_mean @ weights, proper


@njit(cache=True)
def cavity_batch(post_mean, post_cov, pi, site_nu):
    """:func:`cavity` at every point: posterior marginals (n, J), (n, J, J), sites (n, J)."""
    n, J = post_mean.shape
    means = np.empty((n, J))
    covs = np.empty((n, J, J))
    natural = np.empty((n, J))
    log_det = np.empty(n)
    quadratic = np.empty(n)
    proper = np.empty(n, dtype=np.bool_)
    for i in range(n):
        mean, cov, nat, det, quad, fine = cavity(post_mean[i], post_cov[i], pi[i], site_nu[i])
        means[i], covs[i], natural[i] = mean, cov, nat
        log_det[i], quadratic[i], proper[i] = det, quad, fine
    return means, covs, natural, log_det, quadratic, proper
