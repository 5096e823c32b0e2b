"""Variational bounds on the evidence of logistic GP classification (Gibbs & MacKay 2000).

The model is p(y | f) = prod_i sigma(y_i f_i), y_i = +-1, f ~ N(0, K). Each factor
sigma(z_i), z_i = y_i f_i, is bounded by the exponential of a quadratic (lower) or linear
(upper) function of f_i, so the bounded integrand is a Gaussian prior times Gaussian *sites*
exp(-s_i f_i^2 / 2 + b_i f_i + c_i), whose integral is closed form
(:class:`~gpcbench.gaussian.SiteFactorization`, B = I + S^1/2 K S^1/2):

    log int N(f | 0, K) prod_i exp(-s_i f_i^2/2 + b_i f_i) df = -1/2 log|B| + 1/2 b^T K alpha,

alpha = b - S^1/2 B^-1 S^1/2 K b (the site-posterior mean is K alpha).

Lower bound (Jaakkola & Jordan), contact points z = +-xi_i:

    sigma(z) >= sigma(xi) exp((z - xi)/2 - lambda(xi)(z^2 - xi^2)),  lambda(xi) = tanh(xi/2)/(4 xi),

sites s_i = 2 lambda(xi_i), b_i = y_i / 2, c_i = log sigma(xi_i) - xi_i/2 + lambda(xi_i) xi_i^2.
The update xi_i^2 = E_q[f_i^2] = mu_i^2 + Sigma_ii under the current site posterior q is an EM
step, so the bound never decreases.

Upper bound: log sigma is concave, so it lies below each tangent; at the tangent point eta,

    sigma(z) <= exp(mu z - H(mu)),  mu = sigma(-eta),  H the binary entropy (nats).

An exp-quadratic bound exp(a z^2 + ...) with a > 0 touching sigma at some point lies above
that point's tangent, and a < 0 cannot bound sigma -> 1, so the tangent (a = 0: sites of zero
precision, b_i = y_i mu_i) is the best bound of that form:

    log Z <= U(mu) = 1/2 v^T K v - sum_i H(mu_i),   v = y * mu.

U is convex in mu (Hessian diag(y) K diag(y) + diag(1/(mu(1 - mu)))); its stationarity
condition is the fixed point eta_i = y_i (K v)_i (tangent at the current mean). That plain
fixed-point iteration can oscillate, so it is taken as a damped Newton step (backtracking
keeps U non-increasing); the Newton system is solved with the factorisation of
I + W^1/2 K W^1/2, W = diag(mu (1 - mu)). At the minimum K v is the posterior mode f_hat and
min U = log p(y | f_hat) - 1/2 f_hat^T K^-1 f_hat: Laplace's log evidence without its
-1/2 log|B| term, which is why the upper bound is never below Laplace's approximation. Its
Gaussian q_U(f) = N(K v, K) has the prior covariance (zero-precision sites).

At the optimal variational parameters the bound's gradient with respect to the covariance
hyperparameters is its partial derivative, 1/2 tr[(alpha alpha^T - (K + S^-1)^-1) dK/dtheta]
(the second term vanishes for the upper bound).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy import special

from gpcbench.gaussian import SiteFactorization

BOUNDS = ("lower", "upper")
#: Fixed-point / Newton iterations allowed for one bound optimisation.
MAX_BOUND_ITER = 1000
#: Gauss-Hermite / Gauss-Laguerre nodes of :func:`logistic_gaussian_expectation`.
QUADRATURE_NODES = 64
_HERMITE = np.polynomial.hermite.hermgauss(QUADRATURE_NODES)
_LAGUERRE = np.polynomial.laguerre.laggauss(QUADRATURE_NODES)


# --------------------------------------------------------------------------- sigmoid bounds
def jj_lambda(xi) -> np.ndarray:
    """lambda(xi) = tanh(xi/2) / (4 xi), with its limit 1/8 at xi = 0."""
    xi = np.abs(np.asarray(xi, dtype=float))
    small = xi < 1e-6
    safe = np.where(small, 1.0, xi)
    return np.where(small, 0.125 - xi**2 / 96.0, np.tanh(safe / 2.0) / (4.0 * safe))


def log_sigmoid_lower(z, xi) -> np.ndarray:
    """log of the Jaakkola-Jordan bound: log sigma(xi) + (z - xi)/2 - lambda(xi)(z^2 - xi^2)."""
    z, xi = np.asarray(z, dtype=float), np.asarray(xi, dtype=float)
    return special.log_expit(xi) + (z - xi) / 2.0 - jj_lambda(xi) * (z**2 - xi**2)


def log_sigmoid_upper(z, eta) -> np.ndarray:
    """log of the tangent bound at eta: mu z - H(mu), mu = sigma(-eta)."""
    z, eta = np.asarray(z, dtype=float), np.asarray(eta, dtype=float)
    return special.log_expit(eta) + special.expit(-eta) * (z - eta)


def _entropy(mu) -> np.ndarray:
    """Binary entropy in nats."""
    return special.entr(mu) + special.entr(1.0 - mu)


# --------------------------------------------------------------------------- result
@dataclass(frozen=True)
class BoundResult:
    """An optimised evidence bound at fixed hyperparameters.

    Attributes
    ----------
    bound : {"lower", "upper"}
    value : float
        The bound on log p(y | X, theta).
    variational : ndarray of shape (n,)
        xi (lower bound, contact points +-xi) or eta (upper bound, tangent points), both in
        z = y f.
    factor : SiteFactorization
        Of the bound's Gaussian sites (zero precisions for the upper bound).
    alpha : ndarray of shape (n,)
        Posterior mean = K alpha.
    converged : bool
    n_iter : int
    trace : list of float
        The bound after each iteration (the initial value first).
    """

    bound: str
    value: float
    variational: np.ndarray
    factor: SiteFactorization
    alpha: np.ndarray
    converged: bool
    n_iter: int
    trace: list = field(default_factory=list)

    @property
    def mean(self) -> np.ndarray:
        """Mean of the bound's Gaussian over f (K alpha)."""
        return self.factor.kernel @ self.alpha

    def gradient(self, covariance, X) -> np.ndarray:
        """d bound / d log covariance parameters (exact at the optimal variational parameters)."""
        weight = np.outer(self.alpha, self.alpha) - self.factor.site_kernel_inverse()
        return 0.5 * covariance.gradient_contraction(X, weight)

    def predict(self, cross, prior_variance):
        """Latent predictive mean and variance at new points (see ``SiteFactorization.predict``)."""
        return self.factor.predict(cross, prior_variance, self.alpha)


# --------------------------------------------------------------------------- lower bound
@dataclass(frozen=True)
class LowerState:
    """The lower bound's sites at fixed xi: factorisation, alpha and bound value."""

    xi: np.ndarray
    factor: SiteFactorization
    alpha: np.ndarray
    value: float


def lower_state(kernel, y, xi) -> LowerState:
    """Sites s = 2 lambda(xi), b = y/2 and the value of the lower bound at fixed xi."""
    xi = np.abs(np.asarray(xi, dtype=float))
    lam = jj_lambda(xi)
    factor = SiteFactorization.from_sites(kernel, 2.0 * lam)
    natural = 0.5 * y
    alpha = factor.weights(natural)
    const = special.log_expit(xi) - xi / 2.0 + lam * xi**2
    value = np.sum(const) - 0.5 * factor.log_det + 0.5 * natural @ (kernel @ alpha)
    return LowerState(xi, factor, alpha, float(value))


def em_update(state: LowerState) -> np.ndarray:
    """The EM update xi_i = sqrt(E_q[f_i^2]) = sqrt(mu_i^2 + Sigma_ii); never lowers the bound."""
    return np.sqrt((state.factor.kernel @ state.alpha) ** 2 + state.factor.variance())


def _squarem_cycle(kernel, y, state: LowerState) -> LowerState:
    """Two EM steps, then the SQUAREM extrapolation (Varadhan & Roland 2008, SqS3) if it
    does not lower the bound: the bound is non-decreasing over cycles."""
    first = lower_state(kernel, y, em_update(state))
    second = lower_state(kernel, y, em_update(first))
    r = first.xi - state.xi
    v = second.xi - first.xi - r
    if not np.any(v):
        return second
    step = min(-np.linalg.norm(r) / np.linalg.norm(v), -1.0)
    extrapolated = lower_state(kernel, y, state.xi - 2.0 * step * r + step**2 * v)
    return extrapolated if extrapolated.value >= second.value else second


def optimize_lower_bound(kernel, y, xi=None, *, tol=1e-8, max_iter=MAX_BOUND_ITER) -> BoundResult:
    """Maximise the lower bound over xi by accelerated EM (:func:`em_update`, SQUAREM).

    Parameters
    ----------
    kernel : ndarray of shape (n, n)
        Prior covariance K.
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    xi : ndarray of shape (n,), optional
        Starting variational parameters (default 1).
    tol : float
        Stop when a cycle (two EM steps and an extrapolation) raises the bound by less.
    max_iter : int
        Maximum number of cycles.
    """
    state = lower_state(kernel, y, np.ones(len(y)) if xi is None else xi)
    trace = [state.value]
    for _ in range(max_iter):
        state = _squarem_cycle(kernel, y, state)
        trace.append(state.value)
        if trace[-1] - trace[-2] < tol:
            break
    converged = len(trace) > 1 and trace[-1] - trace[-2] < tol
    return BoundResult("lower", state.value, state.xi, state.factor, state.alpha, converged,
                       len(trace) - 1, trace)


# --------------------------------------------------------------------------- upper bound
def upper_bound_value(kernel, y, mu) -> float:
    """U(mu) = 1/2 v^T K v - sum H(mu), v = y mu."""
    v = y * mu
    return float(0.5 * v @ (kernel @ v) - np.sum(_entropy(mu)))


def _newton_direction(kernel, y, mu):
    """Newton step in mu for U: -(Y K Y + W^-1)^-1 g with g = y K v - eta, W = mu (1 - mu)."""
    gradient = y * (kernel @ (y * mu)) + special.logit(mu)
    factor = SiteFactorization.from_sites(kernel, mu * (1.0 - mu))
    sp = factor.sqrt_precision
    # (Y K Y + W^-1)^-1 = Y W^1/2 B^-1 W^1/2 Y, B = I + W^1/2 K W^1/2
    return -y * sp * factor.solve(sp * y * gradient)


def _upper_step(kernel, y, mu, value):
    """One backtracking Newton step; returns the new (mu, value)."""
    direction = _newton_direction(kernel, y, mu)
    step = 1.0
    while step > 1e-12:
        trial = mu + step * direction
        if np.all((trial > 0.0) & (trial < 1.0)):
            trial_value = upper_bound_value(kernel, y, trial)
            if trial_value <= value:
                return trial, trial_value
        step /= 2.0
    return mu, value


def optimize_upper_bound(kernel, y, eta=None, *, tol=1e-8, max_iter=MAX_BOUND_ITER) -> BoundResult:
    """Minimise the upper bound over the tangent points eta (damped Newton, U non-increasing).

    Parameters are as for :func:`optimize_lower_bound`; ``eta`` defaults to 0 (mu = 1/2).
    """
    mu = np.full(len(y), 0.5) if eta is None else special.expit(-np.asarray(eta, dtype=float))
    value = upper_bound_value(kernel, y, mu)
    trace = [value]
    for _ in range(max_iter):
        mu, value = _upper_step(kernel, y, mu, value)
        trace.append(value)
        if abs(trace[-1] - trace[-2]) < tol:
            break
    converged = len(trace) > 1 and abs(trace[-1] - trace[-2]) < tol
    factor = SiteFactorization.from_sites(kernel, np.zeros(len(y)))
    eta = -special.logit(mu)
    return BoundResult("upper", value, eta, factor, y * mu, converged, len(trace) - 1, trace)


def optimize_bound(bound, kernel, y, start=None, **options) -> BoundResult:
    """Dispatch to :func:`optimize_lower_bound` or :func:`optimize_upper_bound`."""
    if bound == "lower":
        return optimize_lower_bound(kernel, y, start, **options)
    if bound == "upper":
        return optimize_upper_bound(kernel, y, start, **options)
    raise ValueError(f"bound must be one of {BOUNDS}, got {bound!r}")


# --------------------------------------------------------------------------- prediction
def logistic_gaussian_expectation(mean, variance) -> np.ndarray:
    """E[sigma(f)] for f ~ N(mean, variance), accurate to about 1e-12.

    For variance <= 1, Gauss-Hermite quadrature in f (the integrand is smooth on the scale of
    the Gaussian). For variance > 1 the sigmoid is a near-step on that scale, where
    Gauss-Hermite converges slowly, so sigma = step + r is split: E[step(f)] = Phi(m/s)
    exactly, and E[r(f)] = int_0^inf e^-x [N(-x | m, s^2) - N(x | m, s^2)] / (1 + e^-x) dx
    by Gauss-Laguerre quadrature (r decays like e^-|x|; the rest is smooth).
    """
    mean = np.asarray(mean, dtype=float)
    variance = np.broadcast_to(np.asarray(variance, dtype=float), mean.shape)
    wide = variance > 1.0
    out = np.empty(mean.shape)
    out[~wide] = _hermite(mean[~wide], variance[~wide])
    out[wide] = _step_plus_laguerre(mean[wide], np.sqrt(variance[wide]))
    return out


def _hermite(mean, variance):
    nodes, weights = _HERMITE
    f = mean[:, None] + np.sqrt(2.0 * variance)[:, None] * nodes
    return special.expit(f) @ weights / np.sqrt(np.pi)


def _step_plus_laguerre(mean, sd):
    nodes, weights = _LAGUERRE
    m, s = mean[:, None], sd[:, None]
    gauss = np.exp(-0.5 * ((nodes + m) / s) ** 2) - np.exp(-0.5 * ((nodes - m) / s) ** 2)
    remainder = (gauss / (np.sqrt(2.0 * np.pi) * s) / (1.0 + np.exp(-nodes))) @ weights
    return special.ndtr(mean / sd) + remainder
