"""Bayesian SVM (BSVM) and complete SVM (CSVM) of Mallick, Ghosh & Ghosh (2005) (MGG), the
sampler; the scikit-learn estimators are :mod:`gpcbench.estimators.bayes_svm`.

Model (MGG's hierarchy as docs/bayes_svm.md reconstructs it: MGG's text could not be consulted,
so no MGG equation numbers are cited; ZDJ sec. 5.1 fixes the kernel and the run length, and
docs/bayes_svm.md lists every assumption):

* f(x) = beta_0 + sum_j beta_j K(x, x_j), the RKHS expansion on the n training points, so that
  f = Kt beta at the training points with Kt = [1, K] (n x (n + 1));
* latent z_i = f(x_i) + eps_i, eps_i ~ N(0, sigma^2) (the data augmentation);
* y_i | z_i from the hinge loss [1 - y z]_+:
  BSVM, Sollich's (2002) normalisation over y in {-1, +1}:
      p(y | z) = exp(-[1 - y z]_+) / Q(z),  Q(z) = exp(-[1 - z]_+) + exp(-[1 + z]_+);
  CSVM, the "complete" likelihood (assumed reading): a third outcome "don't know" takes the
  mass the two labels leave, p(y | z) = kappa exp(-[1 - y z]_+) for y = -1, +1 and
  1 - kappa Q(z) for "don't know", kappa = 1 / max_z Q(z) = 1 / (1 + e^-2) (Q peaks at |z| = 1);
* beta | sigma^2, D ~ N(0, sigma^2 D^-1), D = diag(d_0, lambda_1, ..., lambda_n): a fixed
  intercept precision d_0 and one shrinkage precision per coefficient ("multiple") or one
  shared by all ("single"), lambda ~ Ga(a_lambda, b_lambda) (shape, rate);
  sigma^2 ~ IG(a_sigma, b_sigma) (shape, rate); the kernel width theta is fixed.

One sweep (:func:`run_chain`), a systematic-scan Gibbs sampler:

1. beta | z, sigma^2, D ~ N(A^-1 Kt'z, sigma^2 A^-1), A = Kt'Kt + D (Cholesky A = L L';
   beta = L'^-1 (L^-1 Kt'z + sigma e));
2. sigma^2 | z, beta, D ~ IG(a_sigma + n + 1/2, b_sigma + (|z - f|^2 + beta'D beta) / 2);
3. lambda_j | beta_j, sigma^2 ~ Ga(a_lambda + 1/2, b_lambda + beta_j^2 / (2 sigma^2))
   ("single": Ga(a_lambda + n/2, b_lambda + sum_j beta_j^2 / (2 sigma^2)));
4. z_i | y_i, f_i, sigma^2 by one Metropolis-Hastings step each, proposal z* ~ N(f_i, sigma^2)
   (the conditional prior, an independence proposal), accepted with probability
   min(1, p(y_i | z*) / p(y_i | z_i)). The z_i are conditionally independent given (beta,
   sigma^2), so the n accept / reject decisions are one vectorised block update.
5. (optional, not MGG's; ``scale_step`` > 0) a joint rescaling (z, beta, sigma^2) ->
   (c z, c beta, c^2 sigma^2), log c ~ N(0, scale_step^2), accepted with probability
   min(1, prod_i [p(y_i | c z_i) / p(y_i | z_i)] c^(-2 a_sigma)
   exp(-b_sigma (c^-2 - 1) / sigma^2)):
   the joint density ratio times the Jacobian c^(2n + 3); |z - f|^2 / sigma^2,
   beta'D beta / sigma^2 and the lambdas' conditionals are unchanged by it. Steps 1-4 move
   along this direction slowly (sigma^2's conditional has shape a_sigma + n + 1/2): the
   data augmentation's slow mode, worst when the hinge likelihood saturates.

Every random number comes from the ``numpy.random.Generator`` a chain is given. Likelihoods
are evaluated in the log domain (``logaddexp``), so |z| = 1e3 is as exact as |z| = 1.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.linalg import LinAlgError
from scipy.linalg.lapack import dpotrf, dtrtrs
from scipy.special import expit, log_ndtr

from gpcbench.mcmc.diagnostics import kept_sweeps
from gpcbench.monitor import Progress

LIKELIHOODS = ("bsvm", "csvm")
SHRINKAGES = ("multiple", "single")
#: log kappa of the CSVM: kappa = 1 / max_z Q(z) = 1 / (1 + e^-2)
LOG_KAPPA = -math.log1p(math.exp(-2.0))
TRACED = ("beta0", "sigma2", "log_lambda")  # per-sweep scalars of Chain.trace
PROGRESS = Progress("BSVM chain")
REPORT_EVERY = 500


class Priors(NamedTuple):
    """Hyperparameters: sigma^2 ~ IG(a_sigma, b_sigma), lambda ~ Ga(a_lambda, b_lambda)
    (shape, rate) and the fixed prior precision d_0 of the intercept (times 1 / sigma^2)."""

    a_sigma: float = 1.0
    b_sigma: float = 1.0
    a_lambda: float = 1.0
    b_lambda: float = 1.0
    intercept_precision: float = 0.01


class Chain(NamedTuple):
    """One chain's output. Kept sweeps are t >= burn_in with (t + 1 - burn_in) % thin == 0.

    coef : (n_kept, n + 1) beta = (beta_0, beta_1..n); sigma2 : (n_kept,);
    lam : (n_kept, n) or (n_kept, 1) the shrinkage precisions;
    trace : (n_sweeps, 3) beta_0, sigma^2 and the mean of log lambda after every sweep;
    probe : (n_kept, n_probe) the label probability p(y = +1 | f_i, sigma^2) at the probe points;
    z_accepted, z_proposed : accepted and proposed z moves after the burn-in;
    scale_accepted, scale_proposed : the same for the step-5 scale moves.
    """

    coef: np.ndarray
    sigma2: np.ndarray
    lam: np.ndarray
    trace: np.ndarray
    probe: np.ndarray
    z_accepted: int
    z_proposed: int
    scale_accepted: int = 0
    scale_proposed: int = 0


# --- likelihoods ---------------------------------------------------------------------------


def hinge(u):
    """[1 - u]_+ elementwise."""
    return np.maximum(1.0 - np.asarray(u, dtype=float), 0.0)


def log_q(z):
    """log Q(z) = log(exp(-[1 - z]_+) + exp(-[1 + z]_+)), Sollich's normaliser."""
    return np.logaddexp(-hinge(z), -hinge(-np.asarray(z, dtype=float)))


def log_likelihood(y, z, likelihood: str):
    """log p(y | z), y in {-1, +1}: BSVM -[1 - y z]_+ - log Q(z); CSVM log kappa - [1 - y z]_+."""
    y, z = np.asarray(y, dtype=float), np.asarray(z, dtype=float)
    if likelihood == "bsvm":
        return -hinge(y * z) - log_q(z)
    if likelihood == "csvm":
        return LOG_KAPPA - hinge(y * z)
    raise ValueError(f"likelihood must be one of {LIKELIHOODS}, got {likelihood!r}")


def outcome_probabilities(z, likelihood: str):
    """(p(-1 | z), p(+1 | z), p("don't know" | z)); the three sum to one (the third is 0 for
    the BSVM, whose two labels carry all the mass)."""
    minus, plus = (np.exp(log_likelihood(s, z, likelihood)) for s in (-1.0, 1.0))
    if likelihood == "bsvm":
        return minus, plus, np.zeros_like(plus)
    return minus, plus, -np.expm1(LOG_KAPPA + log_q(z))  # 1 - kappa Q(z) >= 0


def legendre_rule(n_nodes: int = 32):
    """Gauss-Legendre nodes and weights (2, n_nodes) on [-1, 1], for :func:`bsvm_positive`."""
    return np.vstack(np.polynomial.legendre.leggauss(n_nodes))


#: p(+1 | z) of the BSVM on its three smooth pieces: a logistic function on each
BSVM_PIECES = ((-np.inf, -1.0, -1.0, 1.0), (-1.0, 1.0, 0.0, 2.0), (1.0, np.inf, 1.0, 1.0))
HALF_WIDTH = 8.0  # standard deviations integrated either side of the mean


def bsvm_positive(f, sigma2, rule):
    """E[p(+1 | z)] of the BSVM for z ~ N(f, sigma2) (f any shape, sigma2 broadcast).

    p(+1 | z) is expit(z - 1) on z <= -1, expit(2 z) on |z| <= 1 and expit(z + 1) on z >= 1:
    smooth on each piece, kinked at z = +-1. Each piece of [f - 8 sd, f + 8 sd] is integrated
    by Gauss-Legendre ``rule`` (32 nodes: absolute error < 1e-8 for every f and sd tried
    against adaptive quadrature); the mass left out is below 1e-15."""
    f = np.asarray(f, dtype=float)
    s = np.sqrt(np.broadcast_to(np.asarray(sigma2, dtype=float), f.shape))
    x, w = rule
    total = np.zeros(f.shape)
    for left, right, shift, slope in BSVM_PIECES:
        lo = np.maximum(f - HALF_WIDTH * s, left)
        hi = np.minimum(f + HALF_WIDTH * s, right)
        half = np.maximum(hi - lo, 0.0) / 2.0
        z = ((hi + lo) / 2.0)[..., None] + half[..., None] * x
        u = (z - f[..., None]) / s[..., None]
        total += half * ((expit(slope * z + shift) * np.exp(-0.5 * u * u)) @ w)
    return total / (s * math.sqrt(2.0 * math.pi))


def log_expected_hinge_factor(m, s):
    """log E[exp(-[1 - z]_+)] for z ~ N(m, s^2), exactly:
    P(z >= 1) + exp(m - 1 + s^2/2) Phi((1 - m - s^2) / s)."""
    m, s = np.asarray(m, dtype=float), np.asarray(s, dtype=float)
    tail = m - 1.0 + 0.5 * s * s + log_ndtr((1.0 - m - s * s) / s)
    return np.logaddexp(log_ndtr((m - 1.0) / s), tail)


def label_probability(f, sigma2, likelihood: str, rule):
    """p(y = +1 | f, sigma^2) of one draw, z ~ N(f, sigma2) integrated out, at latent means f
    (any shape) and noise variance sigma2 (broadcast). BSVM: E[p(+1 | z)]
    (:func:`bsvm_positive`, Gauss-Legendre ``rule``); CSVM: p(+1 | a label is emitted) =
    E[exp(-[1 - z]_+)] / E[Q(z)], in closed form."""
    if likelihood == "bsvm":
        return bsvm_positive(f, sigma2, rule)
    log_num, log_den = csvm_predictive_logs(f, sigma2)
    return np.exp(log_num - log_den)


def csvm_predictive_logs(f, sigma2):
    """log E[exp(-[1 - z]_+)] and log E[Q(z)], z ~ N(f, sigma2), for the CSVM's ratio of
    averages (kappa cancels between them)."""
    f = np.asarray(f, dtype=float)
    s = np.sqrt(np.broadcast_to(np.asarray(sigma2, dtype=float), f.shape))
    plus, minus = log_expected_hinge_factor(f, s), log_expected_hinge_factor(-f, s)
    return plus, np.logaddexp(plus, minus)


# --- the sampler ---------------------------------------------------------------------------


def _draw_beta(KtK, Ktz, d, sigma2, rng, sweep):
    """beta ~ N(A^-1 Kt'z, sigma^2 A^-1), A = Kt'Kt + diag(d), by one Cholesky A = L L'
    (step 1): beta = L'^-1 (L^-1 Kt'z + sigma e). LAPACK's potrf / trtrs directly (the
    scipy.linalg wrappers' checks cost more than the factorisation when n is small)."""
    A = KtK.copy()
    A.flat[:: A.shape[0] + 1] += d
    L, info = dpotrf(A.T, lower=1, clean=0, overwrite_a=1)  # A.T: the same matrix, F-ordered
    if info != 0:
        raise LinAlgError(f"BSVM sweep {sweep}: Kt'Kt + D is not positive definite "
                          f"(potrf info {info}, smallest precision {d.min():.3g})")
    w, _ = dtrtrs(L, Ktz, lower=1)
    w += math.sqrt(sigma2) * rng.standard_normal(w.size)
    beta, _ = dtrtrs(L, w, lower=1, trans=1, overwrite_b=1)
    return beta


def run_chain(Kt, y, likelihood: str, priors: Priors, schedule, rng, *, shrinkage="multiple",
              probe=None, sigma2=None, lam=None, rule=None, scale_step=0.0) -> Chain:
    """Run one chain of the BSVM / CSVM sampler (module docstring, steps 1-4).

    Parameters
    ----------
    Kt : ndarray of shape (n, n + 1)
        [1, K(X, X)] at the training points.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    likelihood : {"bsvm", "csvm"}
    priors : Priors
    schedule : (n_sweeps, burn_in, thin)
    rng : numpy.random.Generator
        The only source of random numbers.
    shrinkage : {"multiple", "single"}
    probe : int array, optional
        Training points whose p(y = +1 | f_i, sigma^2) is recorded per kept sweep.
    sigma2, lam : float or array, optional
        Hold sigma^2 or the lambdas fixed at these values (their Gibbs steps are skipped).
    rule : (2, q) Gauss-Legendre rule of the BSVM probes (default :func:`legendre_rule`).
    scale_step : float, default=0
        If positive, step 5 (module docstring) with log c ~ N(0, scale_step^2); skipped when
        sigma^2 is held fixed.

    Returns
    -------
    Chain
    """
    if likelihood not in LIKELIHOODS or shrinkage not in SHRINKAGES:
        raise ValueError(f"likelihood must be one of {LIKELIHOODS} and shrinkage one of "
                         f"{SHRINKAGES}")
    n_sweeps, burn_in, thin = (int(v) for v in schedule)
    Kt, y = np.ascontiguousarray(Kt, dtype=float), np.asarray(y, dtype=float)
    n = y.size
    probe = np.zeros(0, dtype=int) if probe is None else np.asarray(probe, dtype=int)
    rule = legendre_rule() if rule is None else rule
    KtK = Kt.T @ Kt
    n_lam = n if shrinkage == "multiple" else 1
    fixed_sigma2, fixed_lam = sigma2 is not None, lam is not None
    s2 = float(sigma2) if fixed_sigma2 else 1.0
    lam_now = (np.broadcast_to(np.asarray(lam, dtype=float), (n_lam,)).copy() if fixed_lam
               else np.full(n_lam, priors.a_lambda / priors.b_lambda))
    d = np.empty(n + 1)
    d[0] = priors.intercept_precision
    z = y * np.abs(rng.standard_normal(n))  # start on the labels' side
    loglik = log_likelihood(y, z, likelihood)
    kept = kept_sweeps(n_sweeps, burn_in, thin)
    coef, s2_kept = np.zeros((kept.size, n + 1)), np.zeros(kept.size)
    lam_kept, probe_kept = np.zeros((kept.size, n_lam)), np.zeros((kept.size, probe.size))
    trace = np.zeros((n_sweeps, len(TRACED)))
    accepted = proposed = scale_accepted = scale_proposed = 0
    shape_sigma = priors.a_sigma + n + 0.5  # (n residuals + n + 1 coefficients) / 2
    row = 0
    for t in range(n_sweeps):
        d[1:] = lam_now
        beta = _draw_beta(KtK, Kt.T @ z, d, s2, rng, t)  # step 1
        f = Kt @ beta
        if not fixed_sigma2:  # step 2
            r = z - f
            rate = priors.b_sigma + 0.5 * (r @ r + beta @ (d * beta))
            s2 = rate / rng.gamma(shape_sigma)
        if not fixed_lam:  # step 3
            b2 = beta[1:] ** 2 / (2.0 * s2)
            if n_lam == n:
                lam_now = rng.gamma(priors.a_lambda + 0.5, 1.0 / (priors.b_lambda + b2))
            else:
                lam_now = rng.gamma(priors.a_lambda + 0.5 * n, 1.0 / (priors.b_lambda + b2.sum()),
                                    size=1)
        proposal = f + math.sqrt(s2) * rng.standard_normal(n)  # step 4
        log_u = np.log(rng.random(n))
        loglik_new = log_likelihood(y, proposal, likelihood)
        accept = log_u < loglik_new - loglik
        z = np.where(accept, proposal, z)
        loglik = np.where(accept, loglik_new, loglik)
        if scale_step > 0 and not fixed_sigma2:  # step 5
            u = scale_step * rng.standard_normal()
            c = math.exp(u)
            loglik_c = log_likelihood(y, c * z, likelihood)
            log_ratio = (loglik_c.sum() - loglik.sum() - 2.0 * priors.a_sigma * u
                         - priors.b_sigma / s2 * math.expm1(-2.0 * u))
            ok = math.log(rng.random()) < log_ratio
            if ok:
                z, beta, f, loglik, s2 = c * z, c * beta, c * f, loglik_c, s2 * c * c
            if t >= burn_in:
                scale_accepted += int(ok)
                scale_proposed += 1
        if not (math.isfinite(s2) and s2 > 0 and np.isfinite(beta).all()
                and np.isfinite(lam_now).all()):
            raise FloatingPointError(f"BSVM sweep {t}: non-finite state (sigma^2 = {s2})")
        trace[t] = beta[0], s2, np.mean(np.log(lam_now))
        if t >= burn_in:
            accepted += int(accept.sum())
            proposed += n
        if row < kept.size and t == kept[row]:
            coef[row], s2_kept[row], lam_kept[row] = beta, s2, lam_now
            if probe.size:
                probe_kept[row] = label_probability(f[probe], s2, likelihood, rule)
            row += 1
        if (t + 1) % REPORT_EVERY == 0 or t + 1 == n_sweeps:
            PROGRESS("sweep %d of %d, sigma^2 %.3g, z acceptance %.2f", t + 1, n_sweeps, s2,
                     accept.mean(), force=t + 1 == n_sweeps)
    return Chain(coef, s2_kept, lam_kept, trace, probe_kept, accepted, proposed, scale_accepted,
                 scale_proposed)


def predictive_positive(Kt_test, coef, sigma2, likelihood: str, rule=None,
                        block_elements: int = 4_000_000) -> np.ndarray:
    """p(y* = +1 | x*, data) from the kept draws (MGG's Bayes model average).

    Parameters
    ----------
    Kt_test : (m, n + 1) [1, K(X*, X)]; coef : (T, n + 1) kept beta; sigma2 : (T,) kept sigma^2.
    likelihood : {"bsvm", "csvm"}; rule : Gauss-Legendre rule of :func:`bsvm_positive`.

    BSVM: (1/T) sum_t E[p(+1 | z)], z ~ N(f_t(x*), sigma_t^2). CSVM: the probability of the
    label +1 given that a label (not "don't know") is emitted,
    sum_t E_t[exp(-[1 - z]_+)] / sum_t E_t[Q(z)] (kappa cancels), summed in the log domain.
    Draws are processed in blocks of about ``block_elements`` (test point, draw, node) values.
    """
    rule = legendre_rule() if rule is None else rule
    m, T = Kt_test.shape[0], coef.shape[0]
    width = 3 * rule.shape[1] if likelihood == "bsvm" else 1
    step = max(1, int(block_elements // max(1, m * width)))
    if likelihood == "bsvm":
        total = np.zeros(m)
        for start in range(0, T, step):
            F = Kt_test @ coef[start:start + step].T  # (m, block)
            total += bsvm_positive(F, sigma2[start:start + step], rule).sum(axis=1)
        return total / T
    log_num, log_den = np.full(m, -np.inf), np.full(m, -np.inf)
    for start in range(0, T, step):
        F = Kt_test @ coef[start:start + step].T
        num, den = csvm_predictive_logs(F, sigma2[start:start + step])
        log_num = np.logaddexp(log_num, np.logaddexp.reduce(num, axis=1))
        log_den = np.logaddexp(log_den, np.logaddexp.reduce(den, axis=1))
    return np.exp(log_num - log_den)
