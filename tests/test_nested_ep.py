"""Nested EP for the multinomial probit GP classifier (Riihimäki, Jylänki & Vehtari 2013).

Independent references: the inner EP against a literal dense EP on w = (f, u) (same fixed
point) and its tilted moments against tensor Gauss-Hermite quadrature of the exact tilted
distribution (J = 2 exactly: one factor; J = 3, 4 within EP's own error); the structured
posterior against dense (Jn x Jn) algebra and the softmax Laplace block functions; J = 2
against binary probit EP; log Z against Kim & Ghahramani's class-difference EP on the same
model; the evidence gradient against finite differences; predictive probabilities against a
long data-augmentation Gibbs run of the same model at fixed hyperparameters."""

import warnings

import numpy as np
import pytest
from numpy.polynomial.hermite_e import hermegauss
from scipy import linalg, stats
from scipy.special import log_ndtr, logsumexp, ndtr, ndtri
from sklearn.exceptions import ConvergenceWarning
from sklearn_checks import assert_passes_check_estimator

from gpcbench.inference.ep import expectation_propagation
from gpcbench.inference.ep_multiclass import class_probabilities
from gpcbench.inference.laplace_softmax import block_factors, posterior_point_blocks
from gpcbench.inference.multinomial_probit import (
    inner_ep_class_probabilities,
    other_classes,
    site_parameters,
    tilted_moments,
)
from gpcbench.inference.nested_ep import nested_ep, posterior_marginals
from gpcbench.kernels.covariance import Covariance
from gpcbench.kernels.multiclass import ClassDifferenceCovariance
from gpcbench.kernels.multiclass import SoftmaxCovariance
from gpcbench.likelihoods import NoisyThresholdLikelihood, ProbitLikelihood
from gpcbench.models import MulticlassEPGaussianProcessClassifier, NestedEPMulticlassClassifier

TIGHT = {"tol": 1e-11, "moment_tol": 1e-9, "max_sweeps": 2000}


def _blobs(n, J, seed=0, spread=1.5):
    rng = np.random.default_rng(seed)
    angles = 2 * np.pi * np.arange(J) / J
    centres = spread * np.column_stack([np.cos(angles), np.sin(angles)])
    y = np.arange(n) % J
    return centres[y] + rng.normal(size=(n, 2)), y


def _random_cavity(J, rng):
    A = rng.normal(size=(J, J))
    return rng.normal(scale=1.5, size=J), A @ A.T + 0.3 * np.eye(J)


def _directions(y, J):
    """Rows b_k = e_y - e_{j_k} + e_u of the inner factors (w = (f, u))."""
    B = np.zeros((J - 1, J + 1))
    for k, j in enumerate(other_classes([y], J)[0]):
        B[k, [y, j, J]] = 1.0, -1.0, 1.0
    return B


# ------------------------------------------------------------------------------ inner EP
def literal_inner_ep(y, m, V, sweeps=200):
    """Textbook sequential EP on w = (f, u) with dense matrices recomputed from scratch, and
    its normaliser as log of prior-times-sites Gaussian integrals (not the code's formula)."""
    J = m.size
    B = _directions(y, J)
    m0, S0 = np.append(m, 0.0), linalg.block_diag(V, 1.0)
    P0 = np.linalg.inv(S0)
    alpha, beta = np.zeros(J - 1), np.zeros(J - 1)

    def posterior():
        cov = np.linalg.inv(P0 + B.T @ (alpha[:, None] * B))
        return cov, cov @ (P0 @ m0 + B.T @ beta)

    for _ in range(sweeps):
        for k in range(J - 1):
            cov, mean = posterior()
            v, mu = B[k] @ cov @ B[k], B[k] @ mean
            cv = 1.0 / (1.0 / v - alpha[k])
            cm = cv * (mu / v - beta[k])
            z = cm / np.sqrt(1 + cv)
            ratio = np.exp(stats.norm.logpdf(z) - log_ndtr(z))
            hat_m = cm + cv * ratio / np.sqrt(1 + cv)
            hat_v = cv - cv**2 * ratio * (z + ratio) / (1 + cv)
            alpha[k], beta[k] = 1 / hat_v - 1 / cv, hat_m / hat_v - cm / cv
    cov, mean = posterior()
    log_z = 0.5 * (mean @ np.linalg.solve(cov, mean) - m0 @ P0 @ m0
                   + np.linalg.slogdet(cov)[1] - np.linalg.slogdet(S0)[1])
    for k in range(J - 1):  # log Z_k minus log integral N(z | cavity) t~_k(z) dz
        v, mu = B[k] @ cov @ B[k], B[k] @ mean  # marginal of z = b_k^T w
        cv = 1.0 / (1.0 / v - alpha[k])
        cm = cv * (mu / v - beta[k])
        log_z += (log_ndtr(cm / np.sqrt(1 + cv))
                  + 0.5 * np.log1p(alpha[k] * cv) - 0.5 * mu**2 / v + 0.5 * cm**2 / cv)
    return log_z, mean[:J], cov[:J, :J]


def quadrature_tilted(y, m, V, nodes):
    """Exact tilted moments of N(f | m, V) p(y | f): the J - 1 differences d = B w carry the
    likelihood prod_k Phi(d_k), integrated on a tensor Gauss-Hermite grid; f | d is Gaussian."""
    J = m.size
    B = _directions(y, J)
    m0, S0 = np.append(m, 0.0), linalg.block_diag(V, 1.0)
    mean_d, cov_d, cov_wd = B @ m0, B @ S0 @ B.T, S0 @ B.T
    x, w = hermegauss(nodes)
    grid = np.stack(np.meshgrid(*[x] * (J - 1), indexing="ij")).reshape(J - 1, -1)
    weight = np.prod(np.stack(np.meshgrid(*[w / np.sqrt(2 * np.pi)] * (J - 1),
                                          indexing="ij")).reshape(J - 1, -1), axis=0)
    d = mean_d[:, None] + np.linalg.cholesky(cov_d) @ grid
    mass = weight * np.exp(log_ndtr(d).sum(axis=0))
    Z = mass.sum()
    mean_t = d @ mass / Z
    cov_t = ((d - mean_t[:, None]) * mass) @ (d - mean_t[:, None]).T / Z
    gain = np.linalg.solve(cov_d, cov_wd.T).T
    mean_w = m0 + gain @ (mean_t - mean_d)
    cov_w = S0 - gain @ cov_wd.T + gain @ cov_t @ gain.T
    return np.log(Z), mean_w[:J], cov_w[:J, :J]


@pytest.mark.parametrize("J", [2, 3, 4])
def test_inner_ep_reaches_the_literal_ep_fixed_point(J):
    rng = np.random.default_rng(J)
    for _ in range(3):
        y, (m, V) = int(rng.integers(J)), _random_cavity(J, rng)
        log_z, mean, cov, *_ = tilted_moments([y], m[None], V[None])
        ref_log_z, ref_mean, ref_cov = literal_inner_ep(y, m, V)
        assert log_z[0] == pytest.approx(ref_log_z, abs=1e-9)
        np.testing.assert_allclose(mean[0], ref_mean, atol=1e-9)
        np.testing.assert_allclose(cov[0], ref_cov, atol=1e-9)


@pytest.mark.parametrize("J", [2, 3, 4])
def test_inner_ep_tilted_moments_against_quadrature(J):
    """One probit factor (J = 2): inner EP is exact (measured 2e-15). J = 3, 4: the inner EP
    approximates the tilted distribution; over these cavities it was within 1.6e-3 / 4.8e-3 in
    log Z, 5e-4 / 1.9e-3 cavity s.d. in the mean and 2.5e-3 / 1.3e-2 of the largest cavity
    variance in the covariance of the quadrature (160 nodes a dimension at J = 3, 64 at J = 4),
    which itself agrees with Genz's Z to 3e-5."""
    rng = np.random.default_rng(10 + J)
    errors = []
    for _ in range(4):
        y, (m, V) = int(rng.integers(J)), _random_cavity(J, rng)
        log_z, mean, cov, _, _, converged = tilted_moments([y], m[None], V[None])
        ref_log_z, ref_mean, ref_cov = quadrature_tilted(y, m, V, nodes=160 if J < 4 else 64)
        B = _directions(y, J)[:, :J]
        genz = stats.multivariate_normal.cdf(np.zeros(J - 1), mean=-B @ m,
                                             cov=B @ V @ B.T + 1 + np.eye(J - 1),
                                             abseps=1e-6, releps=1e-6)
        assert ref_log_z == pytest.approx(np.log(genz), abs=3e-5)
        scale = np.abs(V).max()
        errors.append((abs(log_z[0] - ref_log_z), np.abs(mean[0] - ref_mean).max() / scale**0.5,
                       np.abs(cov[0] - ref_cov).max() / scale))
        assert converged
    errors = np.max(errors, axis=0)
    if J == 2:
        assert errors.max() < 1e-8
    else:
        assert errors[0] < 0.01 and errors[1] < 0.005 and errors[2] < 0.04


def test_outer_site_integrates_u_out_of_the_inner_sites():
    """RJV eqs. 12 and 15 against integrating u out of N(u) prod_k t~_k numerically: the
    quadratic form of the resulting log site in f."""
    rng = np.random.default_rng(1)
    J, y = 4, 2
    alpha, beta = rng.uniform(0.1, 2.0, J - 1), rng.normal(size=J - 1)
    pi, nu = site_parameters([y], alpha[None], beta[None], J)
    B = _directions(y, J)
    x, w = hermegauss(80)

    def log_site(f):
        d = B[:, :J] @ f
        return logsumexp(np.log(w) + np.sum(-0.5 * alpha[:, None] * (d[:, None] + x) ** 2
                                            + beta[:, None] * (d[:, None] + x), axis=0))

    T = np.diag(pi[:, 0]) - np.outer(pi[:, 0], pi[:, 0]) / pi[:, 0].sum()
    f0, f1 = rng.normal(size=J), rng.normal(size=J)
    # log site(f) = -f^T T f / 2 + nu^T f + const: compare differences of values
    expected = (-0.5 * f1 @ T @ f1 + nu[:, 0] @ f1) - (-0.5 * f0 @ T @ f0 + nu[:, 0] @ f0)
    assert log_site(f1) - log_site(f0) == pytest.approx(expected, abs=1e-10)
    np.testing.assert_allclose(T @ np.ones(J), 0.0, atol=1e-14)


# ------------------------------------------------------------------------------ outer EP
def test_structured_posterior_equals_dense_algebra_and_the_softmax_blocks():
    rng = np.random.default_rng(2)
    J, n = 3, 9
    X = rng.normal(size=(n, 2))
    K = np.stack([Covariance(1.0 + c, 0.1, 1e-3, 0.7 - 0.1 * c)(X) for c in range(J)])
    labels = rng.integers(J, size=n)
    alpha, beta = rng.uniform(0, 2, (n, J - 1)), rng.normal(size=(n, J - 1))
    alpha[0] = 0.0  # a site with zero precision
    pi, nu = site_parameters(labels, alpha, beta, J)
    factors, blocks = posterior_marginals(K, pi)
    # dense: T = blockdiag over points of diag(pi_i) - pi_i pi_i^T / s_i, class-major order
    T = np.zeros((J * n, J * n))
    for i in range(n):
        idx = np.arange(J) * n + i
        T[np.ix_(idx, idx)] = np.diag(pi[:, i]) - np.outer(pi[:, i], pi[:, i]) / pi[:, i].sum()
    Kd = linalg.block_diag(*K)
    Sigma = Kd - Kd @ np.linalg.solve(np.eye(J * n) + T @ Kd, T @ Kd)
    for i in range(n):
        idx = np.arange(J) * n + i
        np.testing.assert_allclose(blocks[i], Sigma[np.ix_(idx, idx)], atol=1e-10)
    log_det = factors.logdet - np.sum(np.log(pi.sum(axis=0)))
    assert log_det == pytest.approx(np.linalg.slogdet(np.eye(J * n) + Kd @ T)[1], abs=1e-10)
    mean = Sigma @ nu.ravel()
    weights = nu - factors.apply_R((K @ nu[:, :, None])[:, :, 0])
    np.testing.assert_allclose((K @ weights[:, :, None])[:, :, 0].ravel(), mean, atol=1e-10)
    reference = block_factors(K, pi)
    np.testing.assert_allclose(factors.E, reference.E, atol=1e-12)
    np.testing.assert_allclose(factors.M, reference.M, atol=1e-12)

    class State:  # posterior_point_blocks reads only the factors
        pass

    state = State()
    state.factors = reference
    np.testing.assert_allclose(blocks, posterior_point_blocks(K, state), atol=1e-12)


def test_two_classes_reduce_to_binary_probit_ep():
    """J = 2: p(y = 0 | f) = Phi((f_0 - f_1) / sqrt 2) and (f_0 - f_1) / sqrt 2 ~ GP(K), so
    nested EP is binary probit EP on the prior K (one factor: the inner EP is exact)."""
    X, y = _blobs(24, 2, seed=3)
    K = Covariance(2.0, 0.1, 1e-6, 0.7)(X)
    nested = nested_ep(np.stack([K, K]), y, **TIGHT)
    binary = expectation_propagation(K, np.where(y == 0, 1.0, -1.0), ProbitLikelihood(),
                                     tol=1e-13, site_tol=1e-10, max_sweeps=500)
    assert nested.converged and binary.converged
    assert nested.log_evidence == pytest.approx(binary.log_evidence, abs=1e-9)
    np.testing.assert_allclose((nested.mean[0] - nested.mean[1]) / np.sqrt(2), binary.mean,
                               atol=1e-6)


@pytest.mark.parametrize("J", [3, 4])
def test_log_evidence_equals_class_difference_ep_on_the_same_model(J):
    """K&G's multiclass EP with latent noise theta2 and epsilon = 0 is the multinomial probit
    with covariance (theta0 E + theta1) / theta2; EP on its n(J-1) difference factors and nested
    EP with u kept reach the same fixed point, so their log Z agree."""
    X, y = _blobs(21, J, seed=J)
    theta0, theta1, theta2, scale = 2.0, 0.1, 0.3, 0.7
    base = Covariance(theta0, theta1, theta2, scale)
    differences = ClassDifferenceCovariance(base, y, J)(X)
    kg = expectation_propagation(differences, np.ones(differences.shape[0]),
                                 NoisyThresholdLikelihood(), tol=1e-12, site_tol=1e-10,
                                 max_sweeps=500)
    K = Covariance(theta0 / theta2, theta1 / theta2, 0.0, scale)(X)
    nested = nested_ep(np.broadcast_to(K, (J, 21, 21)), y, **TIGHT)
    assert kg.converged and nested.converged
    assert nested.log_evidence == pytest.approx(kg.log_evidence, abs=1e-8)


@pytest.mark.parametrize("shared", [True, False])
def test_log_evidence_gradient_matches_finite_differences(shared):
    X, y = _blobs(15, 3, seed=5)
    groups = ((Covariance(2.0, 0.1, 1e-3, [0.7, 0.4]),) if shared else
              tuple(Covariance(1.0 + c, 0.1 + 0.05 * c, 1e-3, [0.7, 0.4 + 0.2 * c])
                    for c in range(3)))
    covariance = SoftmaxCovariance(groups, 3)
    result = nested_ep(covariance(X), y, **TIGHT)
    mask = covariance.learned_mask()
    gradient = result.log_evidence_gradient(covariance, X)[mask]
    log_params, h = covariance.log_params, 1e-5
    numeric = []
    for index in zip(*np.nonzero(mask)):
        values = []
        for step in (h, -h):
            shifted = log_params.copy()
            shifted[index] += step
            values.append(nested_ep(covariance.with_log_params(shifted)(X), y,
                                    initial_sites=result.sites, **TIGHT).log_evidence)
        numeric.append((values[0] - values[1]) / (2 * h))
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-7)


def test_a_cap_is_reported_and_an_oscillation_halves_the_damping():
    X, y = _blobs(60, 3, seed=0)
    K = np.broadcast_to(Covariance(300.0, 0.1, 1e-3, 0.7)(X), (3, 60, 60))
    capped = nested_ep(K, y, max_sweeps=2)
    assert not capped.converged and capped.n_sweeps == 2
    undamped = nested_ep(K, y, damping=1.0, max_sweeps=400)
    assert undamped.converged and undamped.damping == 0.5  # halved on a two-cycle of log Z
    assert nested_ep(K, y).log_evidence == pytest.approx(undamped.log_evidence, abs=1e-3)
    with pytest.raises(ValueError, match="damping"):
        nested_ep(K, y, damping=0.0)


# ------------------------------------------------------------------------------ MCMC
GH_NODES, GH_WEIGHTS = hermegauss(40)
GH_LOG_WEIGHTS = np.log(GH_WEIGHTS / np.sqrt(2 * np.pi))


def gibbs_latents(K, y, rng, n_chains=24, n_sweeps=3000, burn_in=500, thin=5):
    """Data-augmentation Gibbs sampler of the multinomial probit GP (shared K): utilities
    z_ic = f_ic + e_ic with z_iy the largest; f_c | z_c is GP regression with unit noise,
    z_iy | rest is N(f_iy, 1) above max_j z_ij and z_ij | z_iy is N(f_ij, 1) below it
    (inverse-CDF draws). Returns kept draws of f, shape (draws, chains, J, n)."""
    J, n, _ = K.shape
    gain = np.linalg.solve(K[0] + np.eye(n), K[0]).T  # K (K + I)^-1
    noise = np.linalg.cholesky(K[0] - gain @ K[0] + 1e-10 * np.eye(n))
    own = np.arange(J)[:, None] == y[None, :]
    points = np.arange(n)
    f, z, kept = np.zeros((n_chains, J, n)), np.zeros((n_chains, J, n)), []
    for sweep in range(n_sweeps):
        top = np.where(own, -np.inf, z).max(axis=1)
        mean = f[:, y, points]
        z[:, y, points] = mean - ndtri(rng.uniform(size=mean.shape) * ndtr(mean - top))
        below = f + ndtri(rng.uniform(size=f.shape) * ndtr(z[:, y, points][:, None, :] - f))
        z = np.where(own, z, below)
        f = z @ gain.T + rng.standard_normal(f.shape) @ noise.T
        if sweep >= burn_in and (sweep - burn_in) % thin == 0:
            kept.append(f.copy())
    return np.array(kept)


def mcmc_class_probabilities(K, cross, prior_variance, draws):
    """Per chain, the average over draws of p(y* = c | f), integrated over f* | f exactly
    (one-dimensional Gauss-Hermite over the shared noise); shape (chains, m, J)."""
    weights = np.linalg.solve(K[0], cross[0].T)
    mean = np.einsum("scjn,nm->scmj", draws, weights)
    sd = np.sqrt(1.0 + prior_variance[0] - np.einsum("mn,nm->m", cross[0], weights))
    J = mean.shape[-1]
    probs = np.empty(mean.shape)
    for c in range(J):
        log_terms = sum(log_ndtr((mean[..., c, None] - mean[..., j, None]
                                  + sd[:, None] * GH_NODES) / sd[:, None])
                        for j in range(J) if j != c)
        probs[..., c] = np.exp(logsumexp(GH_LOG_WEIGHTS + log_terms, axis=-1))
    return probs.mean(axis=0)


@pytest.mark.parametrize("theta0, allowance", [(0.5, 0.0), (4.0, 0.01)])
def test_predictive_probabilities_against_long_mcmc(theta0, allowance):
    """n = 18, J = 3, fixed hyperparameters: nested EP's predictive probabilities (inner EP,
    and Genz) against 24 Gibbs chains x 2500 kept sweeps. A weak likelihood (theta0 = 0.5)
    leaves a nearly Gaussian posterior: within 4 Monte Carlo s.e. (measured: 2.0 s.e., s.e.
    1.2e-3). At theta0 = 4, EP's own error (measured 0.004, s.e. 2.3e-3) is allowed 0.01 more."""
    rng = np.random.default_rng(3)
    J, n = 3, 18
    centres = np.array([[0.0, 1.2], [1.0, -0.7], [-1.0, -0.7]])
    y = np.arange(n) % J
    X = centres[y] + 0.8 * rng.normal(size=(n, 2))
    X_new = np.array([[0, 0], [0.5, 0.3], [-1, 0.5], [1.5, -1], [0, 1.5]])
    covariance = SoftmaxCovariance((Covariance(theta0, 0.1, 1e-6, 0.8),), J)
    K, cross, prior_variance = covariance(X), covariance.cross(X_new, X), covariance.diag(X_new)
    result = nested_ep(K, y, **TIGHT)
    mean, cov = result.latent_predictive(cross, prior_variance)
    by_inner_ep = inner_ep_class_probabilities(mean, cov)
    by_genz = class_probabilities(mean, cov + np.eye(J), rng=0)
    chains = mcmc_class_probabilities(K, cross, prior_variance, gibbs_latents(K, y, rng))
    reference = chains.mean(axis=0)
    se = chains.std(axis=0, ddof=1) / np.sqrt(chains.shape[0])
    for probs in (by_inner_ep, by_genz):
        assert np.all(np.abs(probs - reference) <= 4 * se + allowance)
    np.testing.assert_allclose(by_inner_ep, by_genz, atol=2e-3)


# ------------------------------------------------------------------------------ estimator
def test_estimator_beside_class_difference_ep_at_three_classes():
    """Both maximise the evidence of the same model (K&G's theta2 is nested EP's unit noise;
    the overall scale of K&G's (theta0, theta1, theta2) is free): learned log Z agree and the
    test labels nearly all."""
    X, y = _blobs(45, 3, seed=8, spread=2.0)
    X_test, y_test = _blobs(150, 3, seed=9, spread=2.0)
    nested = NestedEPMulticlassClassifier(shared_hyperparameters=True).fit(X, y)
    kg = MulticlassEPGaussianProcessClassifier(random_state=0).fit(X, y)
    assert nested.converged_ and kg.converged_
    assert nested.log_evidence_ == pytest.approx(kg.log_evidence_, abs=0.05)
    learned = kg.hyperparameters_
    assert nested.hyperparameters_[0]["theta0"] == pytest.approx(
        learned["theta0"] / learned["theta2"], rel=0.1)
    same = np.mean(nested.predict(X_test) == kg.predict(X_test))
    assert same >= 0.97
    accuracy = np.mean(nested.predict(X_test) == y_test)
    assert accuracy == pytest.approx(np.mean(kg.predict(X_test) == y_test), abs=0.03)
    assert accuracy > 0.8


def test_fitted_attributes_caps_and_options():
    X, y = _blobs(30, 3, seed=4)
    model = NestedEPMulticlassClassifier(ard=True, max_iter=1)
    with pytest.warns(ConvergenceWarning, match="L-BFGS-B"):
        model.fit(X, np.array(["a", "b", "c"])[y])
    assert model.classes_.tolist() == ["a", "b", "c"] and not model.converged_
    assert len(model.hyperparameters_) == 3 and len(model.hyperparameters_[0][
        "inverse_lengthscale"]) == 2
    assert model.log_marginal_likelihood_value_ == model.log_evidence_
    assert model.n_iter_ == len(model.trace_) == 2
    assert model.predict_proba(X).shape == (30, 3)
    with pytest.warns(ConvergenceWarning, match="nested EP"):
        NestedEPMulticlassClassifier(learn_hyperparameters=False, max_sweeps=1).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fixed = NestedEPMulticlassClassifier(learn_hyperparameters=False).fit(X, y)
    assert fixed.converged_ and fixed.n_iter_ == 1
    with pytest.raises(ValueError, match="predictive"):
        NestedEPMulticlassClassifier(predictive="mc").fit(X, y)


@pytest.mark.parametrize("estimator", [
    NestedEPMulticlassClassifier(learn_hyperparameters=False),
    NestedEPMulticlassClassifier(max_iter=1, shared_hyperparameters=True),
], ids=repr)
def test_sklearn_conformance(estimator):
    assert_passes_check_estimator(estimator)


def test_method_is_registered_as_not_in_the_papers():
    from gpcbench.experiments.registry import FitContext, method_spec

    spec = method_spec("gpc-nested-ep")
    assert "not in the paper" in spec.label
    ctx = FitContext(options={"max_iter": 5}, seed=3, n_jobs=1,
                     feature_types=("continuous", "discrete"), fold=0)
    model = spec.factory(ctx)
    assert isinstance(model, NestedEPMulticlassClassifier)
    assert model.ard and not model.shared_hyperparameters and model.max_iter == 5
    assert model.random_state == 3 and model.discrete_features == [False, True]
