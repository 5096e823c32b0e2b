"""EP against a literal implementation of the paper's equations, against exact evidences,
against finite differences, and against closed-form GP regression."""

import math

import numpy as np
import pytest
from scipy import special, stats
from sklearn.exceptions import ConvergenceWarning

from gpcbench.inference.ep import expectation_propagation
from gpcbench.kernels.covariance import Covariance
from gpcbench.likelihoods import GaussianLikelihood, NoisyThresholdLikelihood

TIGHT = {"tol": 1e-12, "site_tol": 1e-11, "max_sweeps": 2000}


# ----------------------------------------------------------------------------- references
def _literal_site_update(i, A, h, v, m, y, eps):
    """Steps 1-3 of the paper (eqs. 19-21) for site i; v = inf means 'no site yet'."""
    inv_v = 0.0 if np.isinf(v[i]) else 1.0 / v[i]
    lam = 1.0 / (1.0 / A[i, i] - inv_v)  # eq. 19
    h_cav = h[i] + lam * inv_v * (h[i] - m[i])
    z = y[i] * h_cav / math.sqrt(lam)  # eq. 20
    Z = eps + (1 - 2 * eps) * special.ndtr(z)
    alpha = (
        y[i] / math.sqrt(lam) * (1 - 2 * eps) * math.exp(-0.5 * z * z) / math.sqrt(2 * math.pi) / Z
    )
    h_new = h_cav + lam * alpha
    v_new = lam * (1.0 / (alpha * h_new) - 1.0)  # eq. 21
    m_new = h_new + v_new * alpha
    s_new = Z * math.sqrt(1.0 + lam / v_new) * math.exp(lam * alpha / (2.0 * h_new))
    return v_new, m_new, s_new


def _literal_posterior(C, v, m):
    """Eq. 22 with explicit inverses."""
    inv_lambda = np.diag(np.where(np.isinf(v), 0.0, 1.0 / v))
    A = np.linalg.inv(np.linalg.inv(C) + inv_lambda)
    return A, A @ inv_lambda @ np.where(np.isinf(v), 0.0, m)


def literal_ep(C, y, eps=0.0, sweeps=50, parallel=False):
    """The EP of Kim & Ghahramani (2006), eqs. 18-23, written out with explicit matrices."""
    n = len(y)
    v, m, s = np.full(n, np.inf), np.zeros(n), np.ones(n)  # eq. 18
    A, h = C.copy(), np.zeros(n)
    for _ in range(sweeps):
        if parallel:
            updates = [_literal_site_update(i, A, h, v, m, y, eps) for i in range(n)]
            v, m, s = (np.array(col) for col in zip(*updates))
            A, h = _literal_posterior(C, v, m)
        else:
            for i in range(n):
                v[i], m[i], s[i] = _literal_site_update(i, A, h, v, m, y, eps)
                A, h = _literal_posterior(C, v, m)  # step 4, eq. 22
    Lam = np.diag(v)
    r = np.sum(m**2 / v) - np.sum(A * np.outer(m / v, m / v))
    log_z = (
        0.5 * np.linalg.slogdet(Lam)[1]
        - 0.5 * np.linalg.slogdet(C + Lam)[1]
        - r / 2
        + np.sum(np.log(s))
    )  # eq. 23
    return {"tau": 1 / v, "nu": m / v, "A": A, "h": h, "log_z": log_z}


def _orthant_probability(S):
    """P(g > 0) for g ~ N(0, S): closed forms for n <= 3, scipy's Genz integration for n = 4."""
    n = len(S)
    d = np.sqrt(np.diag(S))
    R = S / np.outer(d, d)
    if n == 1:
        return 0.5
    if n == 2:
        return 0.25 + math.asin(R[0, 1]) / (2 * math.pi)
    if n == 3:
        return 0.125 + (math.asin(R[0, 1]) + math.asin(R[0, 2]) + math.asin(R[1, 2])) / (
            4 * math.pi
        )
    return stats.multivariate_normal.cdf(
        np.zeros(n), cov=R, abseps=1e-6, releps=1e-6, maxpts=4_000_000, rng=np.random.default_rng(0)
    )


def exact_log_evidence(C, y, eps=0.0):
    """log p(y) = log integral N(f|0,C) prod_i [eps + (1-2eps) H(y_i f_i)] df, by expanding the
    product over subsets of sites and using orthant probabilities."""
    n = len(y)
    D = np.diag(y)
    total = 0.0
    for mask in range(1 << n):
        subset = [i for i in range(n) if mask >> i & 1]
        weight = eps ** (n - len(subset)) * (1 - 2 * eps) ** len(subset)
        if weight == 0:
            continue
        prob = 1.0 if not subset else _orthant_probability((D @ C @ D)[np.ix_(subset, subset)])
        total += weight * prob
    return math.log(total)


def _problem(n, d=2, seed=0, theta2=0.3, scales=(0.7, 1.3)):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + 0.6 * rng.standard_normal(n) > 0, 1.0, -1.0)
    cov = Covariance(1.8, 0.1, theta2, list(scales)[:d] if len(scales) > 1 else scales[0])
    return X, y, cov


# ----------------------------------------------------------------------------- literal
@pytest.mark.parametrize("sweeps", [1, 2, 4])
@pytest.mark.parametrize("block_size", [128, 4])
def test_sequential_matches_literal_after_each_sweep(sweeps, block_size):
    X, y, cov = _problem(12)
    C = cov(X)
    ref = literal_ep(C, y, sweeps=sweeps)
    res = expectation_propagation(
        C,
        y,
        NoisyThresholdLikelihood(),
        schedule="sequential",
        max_sweeps=sweeps,
        tol=0,
        site_tol=0,
        block_size=block_size,
    )
    assert res.n_sweeps == sweeps and not res.converged
    np.testing.assert_allclose(res.site_precision, ref["tau"], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(res.site_natural_mean, ref["nu"], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(res.mean, ref["h"], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(res.posterior_covariance(), ref["A"], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("sweeps", [1, 3])
def test_parallel_matches_literal_parallel(sweeps):
    X, y, cov = _problem(10, seed=1)
    C = cov(X)
    ref = literal_ep(C, y, sweeps=sweeps, parallel=True)
    res = expectation_propagation(
        C, y, NoisyThresholdLikelihood(), schedule="parallel", max_sweeps=sweeps, tol=0, site_tol=0
    )
    np.testing.assert_allclose(res.site_precision, ref["tau"], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(res.site_natural_mean, ref["nu"], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(res.mean, ref["h"], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize(
    "schedule, damping",
    [("sequential", 1.0), ("parallel", 1.0), ("parallel", 0.5), ("sequential", 0.7)],
)
@pytest.mark.parametrize("eps, seed", [(0.0, 2), (0.0, 3), (0.02, 4)])
def test_converged_log_evidence_matches_literal_eq_23(schedule, damping, eps, seed):
    X, y, cov = _problem(9, seed=seed)
    C = cov(X)
    ref = literal_ep(C, y, eps=eps, sweeps=60)
    res = expectation_propagation(
        C,
        y,
        NoisyThresholdLikelihood(eps),
        schedule=schedule,
        damping=damping,
        block_size=4,
        **TIGHT,
    )
    assert res.converged and res.n_clipped == 0
    np.testing.assert_allclose(res.log_evidence, ref["log_z"], rtol=0, atol=1e-8)
    np.testing.assert_allclose(res.site_precision, ref["tau"], rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(res.mean, ref["h"], rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("probit_variance", [0.0, 1.0])
def test_schedules_reach_the_same_fixed_point(probit_variance):
    X, y, cov = _problem(60, seed=5, theta2=0.05)
    C = cov(X)
    lik = NoisyThresholdLikelihood(0.0, probit_variance)
    seq = expectation_propagation(C, y, lik, schedule="sequential", block_size=16, **TIGHT)
    par = expectation_propagation(C, y, lik, schedule="parallel", damping=0.5, **TIGHT)
    assert seq.converged and par.converged
    np.testing.assert_allclose(seq.log_evidence, par.log_evidence, rtol=0, atol=1e-9)
    np.testing.assert_allclose(seq.site_precision, par.site_precision, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(seq.site_natural_mean, par.site_natural_mean, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(seq.variance, par.variance, rtol=1e-8)


# ----------------------------------------------------------------------------- exact evidence
@pytest.mark.parametrize("n, eps", [(2, 0.0), (3, 0.0), (4, 0.0), (2, 0.05), (3, 0.05)])
def test_log_evidence_close_to_exact_on_tiny_problems(n, eps):
    """EP is near-exact for n <= 4 (the exact value is an orthant probability, or with label
    noise a sum of them); a wrong term in eq. 23 would be off by O(0.1)."""
    errors = []
    for seed in range(8):
        rng = np.random.default_rng(100 + seed)
        X = rng.standard_normal((n, 2))
        y = rng.choice([-1.0, 1.0], n)
        cov = Covariance(
            rng.uniform(0.5, 3), rng.uniform(0, 0.5), rng.uniform(0.05, 1), rng.uniform(0.2, 2)
        )
        C = cov(X)
        res = expectation_propagation(C, y, NoisyThresholdLikelihood(eps), **TIGHT)
        errors.append(abs(res.log_evidence - exact_log_evidence(C, y, eps)))
    assert max(errors) < 0.03 and np.mean(errors) < 5e-3, errors


# ----------------------------------------------------------------------------- gradient
@pytest.mark.parametrize("scales", [(0.6,), (0.4, 1.5)])
@pytest.mark.parametrize("eps", [0.0, 0.01])
def test_log_evidence_gradient_matches_finite_differences(scales, eps):
    X, y, cov = _problem(25, seed=6, theta2=0.2, scales=scales)
    lik = NoisyThresholdLikelihood(eps)
    res = expectation_propagation(cov(X), y, lik, **TIGHT)
    assert res.n_clipped == 0  # clipped sites are not stationary and void the formula
    grad = res.log_evidence_gradient(cov, X)
    base, h = cov.log_params, 1e-5
    for k in range(cov.n_params):
        step = np.zeros_like(base)
        step[k] = h
        up = expectation_propagation(
            cov.with_log_params(base + step)(X), y, lik, **TIGHT
        ).log_evidence
        down = expectation_propagation(
            cov.with_log_params(base - step)(X), y, lik, **TIGHT
        ).log_evidence
        np.testing.assert_allclose(
            grad[k], (up - down) / (2 * h), rtol=1e-5, atol=1e-7, err_msg=cov.param_names[k]
        )


@pytest.mark.parametrize("zero_sites", [0, 5])
def test_site_kernel_inverse_from_carried_covariance_matches_literal(zero_sites):
    """S - S A S (from the A the sequential schedule carries) is S^1/2 B^-1 S^1/2 = (C + S^-1)^-1,
    by explicit inverses, also with sites of zero precision; the parallel schedule's (from the
    factorisation) agrees."""
    X, y, cov = _problem(20, seed=3)
    C, lik = cov(X), NoisyThresholdLikelihood(0.0)
    tau, nu = expectation_propagation(C, y, lik, schedule="parallel", **TIGHT).sites
    tau = tau.copy()
    tau[:zero_sites] = 0.0
    carried = expectation_propagation(C, y, lik, max_sweeps=0, initial_sites=(tau, nu))
    assert carried.covariance_matrix is not None
    root = np.diag(np.sqrt(tau))
    literal = root @ np.linalg.inv(np.eye(20) + root @ C @ root) @ root
    np.testing.assert_allclose(carried.site_kernel_inverse(), literal, rtol=1e-9, atol=1e-12)
    factored = expectation_propagation(C, y, lik, schedule="parallel", max_sweeps=0,
                                       initial_sites=(tau, nu))
    assert factored.covariance_matrix is None
    np.testing.assert_allclose(factored.site_kernel_inverse(), literal, rtol=1e-9, atol=1e-12)


# ----------------------------------------------------------------------------- invariances
def test_threshold_ignores_scale_of_f():
    """epsilon = 0: scaling theta0, theta1, theta2 by c leaves log Z and predictions unchanged."""
    X, y, cov = _problem(30, seed=7, theta2=0.1)
    Xtest = np.random.default_rng(8).standard_normal((7, 2))
    lik = NoisyThresholdLikelihood()
    results = []
    for c in (1.0, 0.01, 37.0):
        scaled = Covariance(c * cov.theta0, c * cov.theta1, c * cov.theta2, cov.inverse_lengthscale)
        res = expectation_propagation(scaled(X), y, lik, **TIGHT)
        mean, var = res.predict(scaled(Xtest, X), scaled.diag(Xtest))
        results.append((res.log_evidence, lik.predictive_probability(mean, var)))
    for log_z, proba in results[1:]:
        np.testing.assert_allclose(log_z, results[0][0], rtol=0, atol=1e-9)
        np.testing.assert_allclose(proba, results[0][1], rtol=1e-9)


def test_latent_noise_threshold_equals_probit_on_noise_free_covariance():
    """H(y f) with f = g + N(0, theta2) is Phi(y g / sqrt(theta2)) (text after eq. 14)."""
    X, y, cov = _problem(30, seed=9, theta2=0.4)
    Xtest = np.random.default_rng(10).standard_normal((5, 2))
    noisy = expectation_propagation(cov(X), y, NoisyThresholdLikelihood(), **TIGHT)
    clean_cov = Covariance(cov.theta0, cov.theta1, 0.0, cov.inverse_lengthscale)
    probit = NoisyThresholdLikelihood(0.0, probit_variance=cov.theta2)
    clean = expectation_propagation(clean_cov(X), y, probit, **TIGHT)
    np.testing.assert_allclose(noisy.log_evidence, clean.log_evidence, rtol=0, atol=1e-9)
    m1, v1 = noisy.predict(cov(Xtest, X), cov.diag(Xtest))
    m2, v2 = clean.predict(clean_cov(Xtest, X), clean_cov.diag(Xtest))
    np.testing.assert_allclose(
        NoisyThresholdLikelihood().predictive_probability(m1, v1),
        probit.predictive_probability(m2, v2),
        rtol=1e-8,
    )


# ----------------------------------------------------------------------------- regression
@pytest.mark.parametrize("schedule", ["sequential", "parallel"])
def test_gaussian_site_reproduces_gp_regression_after_one_sweep(schedule):
    """Rodrigues (2014), section 4: EP is exact, log Z = log N(y | 0, K + sigma2 I) (eq. 39)."""
    rng = np.random.default_rng(11)
    X = rng.uniform(-3, 3, (40, 1))
    y = np.sin(X[:, 0]) + 0.2 * rng.standard_normal(40)
    cov, noise = Covariance(1.2, 0.05, 0.0, 0.8), 0.04
    K = cov(X)
    res = expectation_propagation(
        K, y, GaussianLikelihood(noise), schedule=schedule, max_sweeps=1, block_size=16
    )
    Ky = K + noise * np.eye(40)
    np.testing.assert_allclose(
        res.log_evidence, stats.multivariate_normal(np.zeros(40), Ky).logpdf(y), rtol=1e-10
    )
    np.testing.assert_allclose(res.mean, K @ np.linalg.solve(Ky, y), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(
        res.posterior_covariance(), K - K @ np.linalg.solve(Ky, K), atol=1e-10
    )
    Xs = np.linspace(-3, 3, 9)[:, None]
    mean, var = res.predict(cov(Xs, X), cov.diag(Xs))
    np.testing.assert_allclose(mean, cov(Xs, X) @ np.linalg.solve(Ky, y), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(
        var,
        cov.diag(Xs) - np.einsum("ij,ji->i", cov(Xs, X), np.linalg.solve(Ky, cov(X, Xs))),
        atol=1e-10,
    )
    again = expectation_propagation(K, y, GaussianLikelihood(noise), schedule=schedule)
    assert again.converged and again.n_sweeps == 2  # the second sweep changes nothing


# ----------------------------------------------------------------------------- control flow
def test_flags_warm_start_and_damping():
    X, y, cov = _problem(50, seed=12, theta2=0.05)
    C, lik = cov(X), NoisyThresholdLikelihood()
    capped = expectation_propagation(C, y, lik, max_sweeps=1)
    assert not capped.converged and capped.n_sweeps == 1
    full = expectation_propagation(C, y, lik)
    assert full.converged and len(full.log_evidence_trace) == full.n_sweeps + 1
    warm = expectation_propagation(C, y, lik, initial_sites=full.sites)
    assert warm.converged and warm.n_sweeps <= 2
    np.testing.assert_allclose(warm.log_evidence, full.log_evidence, atol=1e-4)
    damped = expectation_propagation(C, y, lik, schedule="parallel", damping=0.3, **TIGHT)
    np.testing.assert_allclose(damped.log_evidence, full.log_evidence, atol=1e-4)
    with pytest.raises(ValueError):
        expectation_propagation(C, y, lik, damping=0.0)
    with pytest.raises(ValueError):
        expectation_propagation(C, y, lik, schedule="random")


def test_negative_site_precisions_are_clipped_and_counted():
    """With label noise the likelihood is not log-concave; mislabelled-looking points get a
    negative moment-matched precision, which is set to zero (as GPML does)."""
    rng = np.random.default_rng(13)
    X = rng.standard_normal((40, 1))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    y[:4] *= -1  # flip a few labels
    C = Covariance(4.0, 0.0, 0.01, 2.0)(X)
    res = expectation_propagation(
        C, y, NoisyThresholdLikelihood(0.2), schedule="sequential", damping=0.5
    )
    assert res.n_clipped > 0 and np.all(res.site_precision >= 0) and np.isfinite(res.log_evidence)


def _separable(n=100, seed=0):
    X = np.random.default_rng(seed).normal(size=(n, 2))
    return X, np.where(X[:, 0] + X[:, 1] > 0, 1.0, -1.0)


def test_parallel_schedule_damps_itself_when_log_z_oscillates():
    """Undamped parallel EP two-cycles on separable data (log Z increments of alternating
    sign for 100 sweeps); halving the damping reaches the sequential schedule's fixed point."""
    X, y = _separable()
    C, lik = Covariance(1.0, 1e-4, 1e-3, [1.0])(X), NoisyThresholdLikelihood()
    parallel = expectation_propagation(C, y, lik, schedule="parallel", **TIGHT)
    sequential = expectation_propagation(C, y, lik, **TIGHT)
    assert parallel.converged and parallel.damping < 1.0
    np.testing.assert_allclose(parallel.log_evidence, sequential.log_evidence, atol=1e-4)


def test_estimator_warns_when_ep_stops_at_its_sweep_cap(monkeypatch):
    from gpcbench.inference import ep as ep_module
    from gpcbench.models import EPGaussianProcessClassifier

    monkeypatch.setattr(ep_module, "MIN_DAMPING", 1.0)  # no self-damping: the two-cycle stays
    X, y = _separable()
    clf = EPGaussianProcessClassifier(inverse_lengthscale=1.0, learn_hyperparameters=False,
                                      ep_schedule="parallel")
    with pytest.warns(ConvergenceWarning, match=r"EP \(parallel schedule\) stopped at its cap"):
        clf.fit(X, y)
    assert not clf.converged_
