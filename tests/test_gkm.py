"""Tests of the FBGKM / BGKM / SGPC sampler (Zhang, Dai & Jordan 2011)."""

import itertools
from collections import Counter

import numpy as np
import pytest
from numba import njit
from scipy import special, stats
from sklearn_checks import assert_passes_check_estimator

from gpcbench.kernels.rbf import kernel_block, mean_distance, rbf, weights
from gpcbench.mcmc import active_set, cholesky, gkm, holmes_held, moves
from gpcbench.mcmc.cusum import brooks_burn_in
from gpcbench.models import BGKMClassifier, FBGKMClassifier, SGPCClassifier

A_ETA, B_ETA, A_G, B_G, JITTER = 1.0, 0.1, 4.0, 0.1, 1e-6



@njit
def _seed(seed):
    np.random.seed(seed)


def _problem(n, p=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = (X[:, 0] + 0.5 * rng.normal(size=n) > 0).astype(np.int64)
    return X, y, rng


def _settings(steps, n_sweeps, thin):
    """The sampler's settings of these tests: ZDJ's priors, Beta(1, 1) on gamma."""
    return moves.sampler_settings(a_eta=A_ETA, b_eta=B_ETA, a_g=A_G, b_g=B_G, a_alpha=1.0,
                                  b_alpha=1.0, jitter=JITTER, theta_step=0.2,
                                  theta_bounds=[[0.1], [10.0]], steps=steps,
                                  schedule=(n_sweeps, 0, thin))


def _run(X, y, s, active, k_max, steps, n_sweeps, thin, eta=1.5, g=0.7, seed=1):
    """Run ``gkm.run_chain`` with fixed width 1.5 and return (record, move counts, final s)."""
    act = np.zeros(k_max, dtype=np.int64)
    act[: len(active)] = active
    record = gkm.new_record(n_sweeps, n_sweeps // thin, k_max, 1, [0])
    s = gkm.run_chain(X, y, s.copy(), active_set.chain_state(act, len(active), [1.5], eta, g),
                      _settings(steps, n_sweeps, thin), seed, record)
    return record, record.move_counts, s


def _dense_parts(X, s, active, eta, g):
    """K~, Sigma_gamma and Q_gamma of section 3.1 and eq. 8, densely."""
    K = rbf(X, X, np.array([1.5]))
    Kt = np.column_stack([np.ones(len(X)), K[:, active]])
    Sigma = np.zeros((len(active) + 1,) * 2)
    Sigma[0, 0] = eta
    Sigma[1:, 1:] = g * (K[np.ix_(active, active)] + JITTER * np.eye(len(active)))
    Q = np.eye(len(X)) + Kt @ np.linalg.solve(Sigma, Kt.T)
    return Kt, Sigma, Q


def _factors(X, s, active, eta, g):
    """The sampler's low-rank :class:`~gpcbench.mcmc.active_set.Factors` for the active set."""
    chain = active_set.chain_state(active, len(active), [1.5], eta, g)
    factors = active_set.allocate_factors(len(X), len(active), 1)
    active_set.fill_factors(X, s[None], chain, chain.theta, JITTER, factors)
    return factors


# --- eq. 11 and the rank-one factor updates -------------------------------------------


def test_eq11_inverse_and_determinant_match_dense():
    X, y, rng = _problem(9)
    s = rng.normal(size=9)
    active, eta, g = [1, 4, 5, 7], 1.3, 0.6
    Kt, _, Q = _dense_parts(X, s, active, eta, g)
    factors = _factors(X, s, active, eta, g)
    Linv_Kt = np.linalg.solve(np.tril(factors.upsilon_factor), Kt.T)
    np.testing.assert_allclose(np.eye(9) - Linv_Kt.T @ Linv_Kt, np.linalg.inv(Q), atol=1e-10)
    log_det_q = (-np.log(eta) - len(active) * np.log(g) - factors.log_det_kernel[0]
                 + factors.log_det_upsilon[0])
    np.testing.assert_allclose(log_det_q, np.linalg.slogdet(Q)[1], rtol=1e-10)
    dense = stats.multivariate_normal(np.zeros(9), Q).logpdf(s) + 4.5 * np.log(2 * np.pi)
    np.testing.assert_allclose(
        active_set.log_marginal_cols(factors, len(active), eta, g, s @ s, 1.0), dense, rtol=1e-10)


def _spd(m, seed):
    B = np.random.default_rng(seed).normal(size=(m, m))
    return B @ B.T + m * np.eye(m)


def test_chol_append_equals_refactorisation():
    A = _spd(8, 0)
    L = np.zeros((8, 8))
    L[:7, :7] = np.linalg.cholesky(A[:7, :7])
    assert cholesky.chol_append(L, 7, A[7, :7].copy(), A[7, 7])
    np.testing.assert_allclose(np.tril(L), np.linalg.cholesky(A), atol=1e-12)


@pytest.mark.parametrize("q", [0, 3, 7])
def test_chol_delete_equals_refactorisation(q):
    A = _spd(8, 1)
    L = np.linalg.cholesky(A)
    cholesky.chol_delete(L, 8, q)
    keep = np.delete(np.arange(8), q)
    np.testing.assert_allclose(np.tril(L[:7, :7]), np.linalg.cholesky(A[np.ix_(keep, keep)]),
                               atol=1e-12)


def test_append_then_delete_restores_factor():
    A = _spd(6, 2)
    L = np.zeros((7, 7))
    L[:6, :6] = np.linalg.cholesky(A)
    v = np.random.default_rng(3).normal(size=7)
    assert cholesky.chol_append(L, 6, v, 50.0)
    cholesky.chol_delete(L, 7, 6)
    np.testing.assert_allclose(np.tril(L[:6, :6]), np.linalg.cholesky(A), atol=1e-12)


# --- step (c): birth / death / swap against the enumerated posterior --------------------


def _exact_gamma_posterior(X, s, k_max, eta, g):
    """p(gamma | s, eta, g) over all subsets with n_gamma <= k_max (eqs. 8 and 10)."""
    n = len(X)
    subsets = [c for k in range(k_max + 1) for c in itertools.combinations(range(n), k)]
    log_post = np.array([
        stats.multivariate_normal(np.zeros(n), _dense_parts(X, s, list(c), eta, g)[2]).logpdf(s)
        + special.betaln(len(c) + 1, n - len(c) + 1) for c in subsets])
    post = np.exp(log_post - log_post.max())
    return subsets, post / post.sum()


def test_gamma_moves_visit_subsets_with_exact_posterior_frequencies():
    X, y, rng = _problem(5, seed=4)
    s = np.where(y > 0, 1.0, -1.0) * (0.5 + rng.random(5))
    subsets, post = _exact_gamma_posterior(X, s, 3, 1.5, 0.7)
    thin = 10
    out, counts, _ = _run(X, y, s, [0], 3, [0, 0, 1, 0], 200_000, thin)
    visited = [tuple(sorted(a[a >= 0])) for a in out.active]
    observed = np.array([visited.count(c) for c in subsets])
    assert observed.sum() == len(visited)
    assert (counts[:3, 1] > 0).all()  # every move type was accepted
    result = stats.chisquare(observed, post * len(visited))
    assert result.pvalue > 1e-3, (result, observed, np.round(post * len(visited)))


def test_gamma_chain_is_not_the_prior():
    """The chi-square test has power: the posterior differs from the (truncated) prior."""
    X, y, rng = _problem(5, seed=4)
    s = np.where(y > 0, 1.0, -1.0) * (0.5 + rng.random(5))
    subsets, post = _exact_gamma_posterior(X, s, 3, 1.5, 0.7)
    prior = np.exp([special.betaln(len(c) + 1, 6 - len(c)) for c in subsets])
    prior /= prior.sum()
    assert stats.chisquare(post * 20_000, prior * 20_000).pvalue < 1e-6


# --- step (a): Holmes-Held against plain Gibbs -----------------------------------------


def _plain_gibbs(X, y, s, active, eta, g, n_iter, rng):
    """Albert & Chib: beta~ | s from eq. 9, then s_i | beta~ ~ TN(K~_i beta~, 1) independently."""
    Kt, Sigma, _ = _dense_parts(X, s, active, eta, g)
    cov = np.linalg.inv(Kt.T @ Kt + Sigma)
    chol = np.linalg.cholesky(cov)
    betas, cs = [], []
    for _ in range(n_iter):
        beta = cov @ Kt.T @ s + chol @ rng.standard_normal(len(active) + 1)
        mean = Kt @ beta
        lo = np.where(y > 0, -mean, -np.inf)
        hi = np.where(y > 0, np.inf, -mean)
        s = mean + stats.truncnorm.rvs(lo, hi, random_state=rng)
        betas.append(beta)
        cs.append(Kt.T @ s)
    return np.array(betas), np.array(cs)


def _batch_se(draws, batches=40):
    means = np.array_split(draws, batches)
    return np.std([m.mean(axis=0) for m in means], axis=0, ddof=1) / np.sqrt(batches)


def test_holmes_held_leaves_joint_of_s_and_beta_invariant():
    X, y, rng = _problem(6, seed=5)
    active, eta, g = [0, 2, 3], 0.2, 0.05  # a weak prior: H_ii near 1, a demanding test
    s0 = np.where(y > 0, 1.0, -1.0)
    out, _, _ = _run(X, y, s0, active, 3, [1, 0, 0, 0], 40_000, 1, eta=eta, g=g)
    hh = np.column_stack([out.coefficients[:, :4], out.projections[:, :4],
                         out.coefficients[:, :4] ** 2])[2000:]
    betas, cs = _plain_gibbs(X, y, s0, active, eta, g, 20_000, rng)
    gibbs = np.column_stack([betas, cs, betas ** 2])[2000:]
    se = np.sqrt(_batch_se(hh) ** 2 + _batch_se(gibbs) ** 2)
    z = (hh.mean(axis=0) - gibbs.mean(axis=0)) / se
    assert np.abs(z).max() < 4.5, z


# --- step (b): conjugate g and eta --------------------------------------------------------


def test_eta_and_g_draws_follow_their_gamma_conditionals():
    _seed(7)
    u, quad, k = 0.8, 3.2, 6
    eta = [moves.draw_eta(u, A_ETA, B_ETA) for _ in range(4000)]
    g = [moves.draw_g(quad, k, A_G, B_G) for _ in range(4000)]
    eta_law = stats.gamma((A_ETA + 1) / 2, scale=2 / (B_ETA + u**2))
    g_law = stats.gamma((A_G + k) / 2, scale=2 / (B_G + quad))
    assert stats.kstest(eta, eta_law.cdf).pvalue > 1e-3
    assert stats.kstest(g, g_law.cdf).pvalue > 1e-3
    assert stats.kstest(g, stats.gamma((A_G + k) / 2, scale=(B_G + quad) / 2).cdf).pvalue < 1e-6


def test_truncated_normal_draws():
    _seed(8)
    for mean, positive in [(-3.0, True), (0.4, True), (2.5, False), (-0.2, False)]:
        draws = [holmes_held.truncated_normal(mean, 1.3, positive) for _ in range(3000)]
        a, b = ((-mean / 1.3, np.inf) if positive else (-np.inf, -mean / 1.3))
        assert stats.kstest(draws, stats.truncnorm(a, b, loc=mean, scale=1.3).cdf).pvalue > 1e-3


# --- Brooks' CUSUM burn-in ------------------------------------------------------------------


def test_brooks_burn_in_finds_the_transient():
    rng = np.random.default_rng(9)
    chain = np.concatenate([np.linspace(20, 0, 300), rng.normal(size=3000)])
    burn = brooks_burn_in(chain)
    assert 150 <= burn < 1500, burn
    assert brooks_burn_in(np.full(50, 2.0)) == 0.0
    assert np.isnan(brooks_burn_in(np.cumsum(rng.normal(size=3000))))  # a random walk


@pytest.mark.parametrize("draw", [lambda rng, n: rng.normal(size=n),
                                  lambda rng, n: rng.lognormal(size=n),
                                  lambda rng, n: rng.poisson(3.0, size=n).astype(float)],
                         ids=["normal", "lognormal", "poisson"])
def test_brooks_bounds_cover_independent_draws_at_their_level(draw):
    """Independent draws are inside the 90 % bounds 90 % of the time, skewed (eta, g) and
    discrete (n_gamma) ones too: 1/2 as the centre would reject almost every log-normal chain."""
    from scipy.special import ndtri

    from gpcbench.mcmc.cusum import _inside

    rng = np.random.default_rng(5)
    inside = [_inside(draw(rng, 1000), ndtri(0.95)) for _ in range(2000)]
    assert abs(np.mean(inside) - 0.90) < 0.02  # 3 binomial standard errors
    assert np.mean([brooks_burn_in(draw(rng, 1000)) == 0 for _ in range(200)]) > 0.8


def test_run_burn_in_is_undefined_when_one_quantity_is():
    clf = FBGKMClassifier(n_sweeps=400, burn_in=200, thin=2, random_state=0)
    rng = np.random.default_rng(0)
    traced = {name: rng.normal(size=(2, 400)) for name in ("u", "g", "eta", "n_gamma")}
    traced["g"] = np.cumsum(traced["g"], axis=1)  # a random walk: never settles
    probe = rng.normal(size=(2, 100, 4))
    diagnostics = clf._diagnostics(traced, probe)
    assert np.isnan(diagnostics["g"]["brooks_burn_in"]) and diagnostics["u"]["brooks_burn_in"] >= 0
    assert np.isnan(diagnostics["brooks_burn_in"])
    traced["g"] = rng.normal(size=(2, 400))
    assert clf._diagnostics(traced, probe)["brooks_burn_in"] == max(
        clf._diagnostics(traced, probe)[name]["brooks_burn_in"] for name in traced)


# --- estimators ------------------------------------------------------------------------------

TINY = dict(n_sweeps=20, burn_in=10, thin=2, k_max=10, random_state=0)


@pytest.mark.parametrize("estimator", [FBGKMClassifier(**TINY), BGKMClassifier(**TINY),
                                       SGPCClassifier(**TINY, kernel_width="learn", ard=True)],
                         ids=repr)
def test_sklearn_conformance(estimator):
    assert_passes_check_estimator(estimator)


@pytest.mark.parametrize("cls", [FBGKMClassifier, SGPCClassifier, BGKMClassifier])
def test_classifies_a_nonlinear_problem_and_reports_diagnostics(cls):
    rng = np.random.default_rng(10)
    X = rng.normal(size=(300, 2))
    y = np.where(X[:, 0] ** 2 + X[:, 1] ** 2 > 1.4, "out", "in")
    clf = cls(n_sweeps=600, burn_in=300, thin=3, k_max=40, random_state=0).fit(X[:150], y[:150])
    assert np.mean(clf.predict(X[150:]) != y[150:]) < 0.15
    assert clf.samples_["u"].shape == (2, 100)
    assert clf.n_active_trace_.shape == (2, 600) and clf.n_iter_ == 600
    assert clf.n_active_trace_.max() <= (150 if cls is BGKMClassifier else 40)
    assert set(clf.diagnostics_["g"]) >= {"rhat", "ess_bulk", "ess_tail", "brooks_burn_in"}
    assert set(clf.diagnostics_["probe_probability"]) == {"max_rhat", "min_ess_bulk",
                                                          "min_ess_tail"}
    proba = clf.predict_proba(X[150:])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # Table 7's active-set summary and Figure 2's trace, against a direct count of chain 1
    sizes = Counter(clf.n_active_trace_[0, 300:].tolist())
    most, frequency = max(sizes.items(), key=lambda item: (item[1], -item[0]))
    assert clf.diagnostics_["n_active"] == {"max": max(sizes), "min": min(sizes), "most": most,
                                            "most_frequency": frequency}
    assert [step["sweep"] for step in clf.convergence_trace_] == list(range(20, 601, 20))
    assert [step["n_gamma"] for step in clf.convergence_trace_] == \
        clf.n_active_trace_[0, 19::20].tolist()


@pytest.mark.parametrize("classes", [2, 3])
def test_sgpc_on_fbgkms_chains_predicts_as_sgpc_on_its_own(classes):
    """SGPC fitted from FBGKM's chains equals SGPC that sampled them itself (same parameters
    and seed: one sampler, ZDJ sec. 4.2), prediction for prediction; and the other way round."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(90, 3))
    y = np.digitize(X[:, 0] + X[:, 1] ** 2, [0.5, 1.5][:classes - 1])
    options = dict(n_sweeps=60, burn_in=30, thin=3, k_max=15, n_chains=2, random_state=5)
    for source, target in ((FBGKMClassifier, SGPCClassifier), (SGPCClassifier, FBGKMClassifier)):
        fitted = source(**options).fit(X[:60], y[:60])
        shared = target(**options).fit_from_chains(fitted)
        own = target(**options).fit(X[:60], y[:60])
        np.testing.assert_array_equal(shared.predict_proba(X[60:]), own.predict_proba(X[60:]))
        assert repr(shared.diagnostics_) == repr(own.diagnostics_)  # NaN-aware equality
        assert repr(shared.acceptance_rates_) == repr(own.acceptance_rates_)
    fbgkm = FBGKMClassifier(**options).fit(X[:60], y[:60])
    sgpc = SGPCClassifier(**options).fit_from_chains(fbgkm)
    assert not np.array_equal(sgpc.predict_proba(X), fbgkm.predict_proba(X))  # two predictors


def test_only_sparse_estimators_with_equal_parameters_share_chains():
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(40, 2)), np.arange(40) % 2
    fitted = FBGKMClassifier(**TINY).fit(X, y)
    with pytest.raises(ValueError, match="k_max"):
        SGPCClassifier(**{**TINY, "k_max": 12}).fit_from_chains(fitted)
    with pytest.raises(ValueError, match="BGKM"):
        BGKMClassifier(**TINY).fit_from_chains(fitted)


def test_the_samplers_block_is_the_kernel_of_every_pair_to_rounding():
    """K~ = [1, K(X, X[act])] by one matrix product equals the kernel summed pair by pair
    (rbf_value) on ARD widths, to 1e-13, with each active point's own entry exactly 1."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 20)) * rng.uniform(0.1, 5.0, size=20) + 3.0
    act = rng.choice(300, 40, replace=False)
    theta = rng.uniform(1.0, 10.0, size=20)
    Kt = np.full((300, 51), np.nan)
    kernel_block(X, act, 40, weights(theta, 20), Kt)
    np.testing.assert_allclose(Kt[:, 1:41], rbf(X, X[act], theta), rtol=1e-13, atol=1e-15)
    assert (Kt[:, 0] == 1.0).all() and (Kt[act, np.arange(1, 41)] == 1.0).all()
    assert np.isnan(Kt[:, 41:]).all()  # columns past k are left alone


def test_kernel_keeps_its_precision_for_shifted_inputs():
    """Inputs shifted by 1e8 keep their kernel (|a|^2 + |b|^2 - 2 a'b of the raw inputs would
    cancel to O(1) errors), in rbf and in the sampler's K~ (shifted to the column means)."""
    X = np.random.default_rng(0).normal(size=(6, 3))
    theta = np.array([1.5])
    K = rbf(X, X, theta)
    np.testing.assert_allclose(rbf(X + 1e8, X + 1e8, theta), K, atol=1e-6)
    Kt = np.zeros((6, 7))
    kernel_block(X + 1e8, np.arange(6), 6, weights(theta, 3), Kt)
    np.testing.assert_allclose(Kt[:, 1:], K, atol=1e-6)


def test_default_width_and_fit_keep_their_precision_for_shifted_inputs():
    """ZDJ sec. 5.1's width (the mean pairwise distance) is shift-invariant, and so are the
    fitted chain's test errors: 1e8 + x keeps x to about 1e-8."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 2))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    brute = np.mean([np.linalg.norm(a - b) for i, a in enumerate(X) for b in X[i + 1:]])
    assert mean_distance(X) == pytest.approx(brute, rel=1e-9)
    assert mean_distance(X + 1e8) == pytest.approx(brute, rel=1e-6)
    settings = dict(n_sweeps=300, burn_in=100, thin=5, k_max=20, random_state=0)
    errors = [np.mean(FBGKMClassifier(**settings).fit(X[:80] + shift, y[:80])
                      .predict(X[80:] + shift) != y[80:]) for shift in (0.0, 1e8)]
    assert errors[0] <= 0.1 and errors[1] == pytest.approx(errors[0], abs=0.05)


def test_chain_progress_lines_name_the_sweep_n_gamma_and_acceptance(caplog):
    X = np.random.default_rng(4).normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    with caplog.at_level("INFO", logger="gpcbench.progress"):
        FBGKMClassifier(n_sweeps=120, burn_in=20, thin=5, k_max=10, n_chains=1,
                        random_state=0).fit(X, y)
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0].startswith("ZDJ chain: sweep 50 of 120, n_gamma ")
    assert lines[-1].startswith("ZDJ chain: sweep 120 of 120, n_gamma ")
    assert "acceptance birth " in lines[-1] and " theta " in lines[-1]
