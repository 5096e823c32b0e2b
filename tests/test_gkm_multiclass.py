"""Tests of the multiclass FBGKM / BGKM / SGPC sampler (Zhang, Dai & Jordan 2011, section 6.2).

References are independent of the sampler: a literal numpy Gibbs sampler of the uncentred
multinomial probit model, rejection sampling of the truncated row, enumeration of p(gamma | S)
with dense Gaussian densities, the binary sampler (J = 2), scipy quadrature.
"""

import copy
import itertools

import numpy as np
import pytest
from numba import njit
from scipy import integrate, special, stats
from sklearn.datasets import make_blobs
from sklearn.utils.estimator_checks import check_classifiers_classes, check_classifiers_train

from gpcbench.mcmc import gkm, gkm_multiclass, moves
from gpcbench.mcmc.active_set import chain_state
from gpcbench.mcmc.holmes_held import cone_row
from gpcbench.kernels.rbf import rbf
from gpcbench.models import BGKMClassifier, FBGKMClassifier, SGPCClassifier

A_ETA, B_ETA, A_G, B_G, JITTER, WIDTH = 1.0, 0.1, 4.0, 0.1, 1e-6, 1.5


@njit
def _seed(seed):
    np.random.seed(seed)


def _problem(n, J=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.argmax(X @ rng.normal(size=(2, J)) + 0.5 * rng.normal(size=(n, J)), axis=1)
    return X, y.astype(np.int64), rng


def _centred_start(y, J, rng):
    x = np.zeros((J, len(y)))
    x[y, np.arange(len(y))] = 0.5 + rng.random(len(y))
    return x - x.mean(axis=0)


def _settings(steps, n_sweeps, thin):
    """The sampler's settings of these tests: ZDJ's priors, Beta(1, 1) on gamma."""
    return moves.sampler_settings(a_eta=A_ETA, b_eta=B_ETA, a_g=A_G, b_g=B_G, a_alpha=1.0,
                                  b_alpha=1.0, jitter=JITTER, theta_step=0.2,
                                  theta_bounds=[[0.1], [10.0]], steps=steps,
                                  schedule=(n_sweeps, 0, thin))


def _chain(active, k_max, eta, g):
    act = np.zeros(k_max, dtype=np.int64)
    act[: len(active)] = active
    return chain_state(act, len(active), [WIDTH], eta, g)


def _run_multi(X, y, S, active, k_max, steps, n_sweeps, thin, eta=1.5, g=0.7, seed=1,
               probe=(0,)):
    """``gkm_multiclass.run_chain_multi`` with fixed width 1.5: (record, move counts, final S)."""
    record = gkm_multiclass.new_multiclass_record(n_sweeps, n_sweeps // thin, k_max, 1, probe,
                                                  S.shape[0])
    S = gkm_multiclass.run_chain_multi(X, y, S.copy(), _chain(active, k_max, eta, g),
                                       _settings(steps, n_sweeps, thin), seed, record)
    return record, record.move_counts, S


def _run_binary(X, y, s, active, k_max, steps, n_sweeps, thin, seed=1):
    record = gkm.new_record(n_sweeps, n_sweeps // thin, k_max, 1, [0])
    gkm.run_chain(X, y, s.copy(), _chain(active, k_max, 1.5, 0.7),
                  _settings(steps, n_sweeps, thin), seed, record)
    return record, record.move_counts


def _dense(X, active, eta, g):
    """K~, Sigma_gamma and Q_gamma (section 3.1, eq. 8), densely."""
    K = rbf(X, X, np.array([WIDTH]))
    Kt = np.column_stack([np.ones(len(X)), K[:, active]])
    Sigma = np.zeros((len(active) + 1,) * 2)
    Sigma[0, 0] = eta
    Sigma[1:, 1:] = g * (K[np.ix_(active, active)] + JITTER * np.eye(len(active)))
    return Kt, Sigma, np.eye(len(X)) + Kt @ np.linalg.solve(Sigma, Kt.T)


def _batch_se(draws, batches=40):
    means = np.array_split(draws, batches)
    return np.std([m.mean(axis=0) for m in means], axis=0, ddof=1) / np.sqrt(batches)


def _z_scores(a, b):
    return (a.mean(axis=0) - b.mean(axis=0)) / np.sqrt(_batch_se(a) ** 2 + _batch_se(b) ** 2)


# --- (a) step (a) and the coefficient draw against a literal uncentred Gibbs sampler ------


def _one_sided_normal(mean, lo, hi, rng):
    """N(mean, 1) restricted to (lo, inf) where lo is finite, else to (-inf, hi), by inversion
    of the tail probability (accurate far in the tails)."""
    u = rng.random(mean.shape)
    above = np.isfinite(lo)
    x = np.empty_like(mean)
    a = lo[above] - mean[above]
    x[above] = -special.ndtri(u[above] * special.ndtr(-a))
    b = hi[~above] - mean[~above]
    x[~above] = special.ndtri(u[~above] * special.ndtr(b))
    return mean + x


def _plain_gibbs(X, y, J, active, eta, g, n_iter, rng):
    """Albert & Chib's multinomial probit Gibbs on the uncentred model X_aux = K~B~ + E,
    y_i = argmax_j x_ij (section 6.2 before centring; argmax is shift invariant, so B~H and
    X_aux H have the centred model's posterior): beta~_j | x_j from eq. 9 class by class, then
    x_ij | rest ~ N(k~_i'beta~_j, 1) truncated as the paper states, one class at a time."""
    Kt, Sigma, _ = _dense(X, active, eta, g)
    cov = np.linalg.inv(Kt.T @ Kt + Sigma)
    chol = np.linalg.cholesky(cov)
    n, k1 = Kt.shape
    x = np.zeros((n, J))
    x[np.arange(n), y] = 1.0
    H = np.eye(J) - 1.0 / J
    coefs, stats_ = [], []
    for _ in range(n_iter):
        B = cov @ Kt.T @ x + chol @ rng.standard_normal((k1, J))
        mean = Kt @ B
        for j in range(J):
            others = np.delete(x, j, axis=1)
            own = y == j
            lo = np.where(own, others.max(axis=1), -np.inf)
            hi = np.where(own, np.inf, x[np.arange(n), y])
            x[:, j] = _one_sided_normal(mean[:, j], lo, hi, rng)
        coefs.append((B @ H).ravel())
        stats_.append((Kt.T @ x @ H).ravel())
    return np.array(coefs), np.array(stats_)


def test_multiclass_auxiliary_and_coefficient_updates_match_plain_gibbs():
    X, y, rng = _problem(6, seed=5)
    active, eta, g, J = [0, 2, 3], 0.3, 0.1, 3
    out, _, _ = _run_multi(X, y, _centred_start(y, J, rng), active, 3, [1, 0, 0, 0], 40_000, 1,
                           eta=eta, g=g)
    coef = out.coefficients[:, :, :4].transpose(0, 2, 1).reshape(len(out.coefficients), -1)
    aux = out.projections[:, :, :4].transpose(0, 2, 1).reshape(len(out.projections), -1)
    ours = np.column_stack([coef, aux, coef ** 2])[2000:]
    B, C = _plain_gibbs(X, y, J, active, eta, g, 20_000, rng)
    ref = np.column_stack([B, C, B ** 2])[1000:]
    z = _z_scores(ours, ref)
    assert np.abs(z).max() < 4.5, z
    # power: the prior mean (zero) of the coefficients is many standard errors away
    assert np.abs(_z_scores(ours[:, :12], ref[:, :12] * 0.0)).max() > 10


# --- (b) the truncated row update ----------------------------------------------------------


@njit
def _iterate_cone_row(mu, sd, c, n, seed):
    np.random.seed(seed)
    row = np.zeros(mu.shape[0])
    row[c] = 1.0
    row -= row.mean()
    x = np.zeros(mu.shape[0])
    draws = np.empty((n, mu.shape[0]))
    for t in range(n):
        cone_row(mu, sd, c, row, x)
        draws[t] = row
    return draws


def _rejection(mu, sd, c, n, rng):
    """Exact draws of N(mu, sd^2 H) restricted to {s_c > s_l}: propose, keep the argmax = c."""
    J = mu.size
    kept = []
    while sum(len(k) for k in kept) < n:
        z = rng.standard_normal((200_000, J))
        s = mu + sd * (z - z.mean(axis=1, keepdims=True))
        kept.append(s[np.argmax(s, axis=1) == c])
    return np.concatenate(kept)[:n]


@pytest.mark.parametrize("mu, c", [([0.8, -0.3, -0.5], 0),          # the label agrees
                                   ([-1.2, 0.2, 0.4, 0.6], 0)])     # the label's mean is lowest
def test_cone_row_draws_the_truncated_row_conditional(mu, c):
    mu = np.asarray(mu) - np.mean(mu)
    sd = 1.3
    draws = _iterate_cone_row(mu, sd, c, 120_000, 11)[1000::10]
    assert np.allclose(draws.sum(axis=1), 0.0, atol=1e-12)
    assert (np.argmax(draws, axis=1) == c).all()
    exact = _rejection(mu, sd, c, 40_000, np.random.default_rng(12))
    for j in range(mu.size):
        assert stats.ks_2samp(draws[:, j], exact[:, j]).pvalue > 1e-3, j
    # power: the untruncated N(mu, sd^2 H) is rejected
    z = np.random.default_rng(13).standard_normal((40_000, mu.size))
    free = mu + sd * (z - z.mean(axis=1, keepdims=True))
    assert stats.ks_2samp(draws[:, c], free[:, c]).pvalue < 1e-6


# --- (c) J = 2 is the binary model ------------------------------------------------------------
#
# With J = 2, H = v v' for v = (1, -1)'/sqrt(2): the contrast t = S v = (s_1 - s_2)/sqrt(2) =
# K~ (B~v) + E v with B~v ~ N(0, Sigma^-1) and E v ~ N(0, I): the binary model (section 3.1)
# for t, with y = 1 iff class 1 wins, beta_bin = B~v, i.e. the centred class coefficients are
# (beta_bin, -beta_bin)/sqrt(2); the eta, g conditionals see one contrast, as the binary ones
# (copies = J - 1 = 1); and p(class 1) = Phi((f_1 - f_2)/sqrt(2)) = Phi(f_bin).


def test_two_class_multiclass_chain_has_the_binary_posterior():
    X, y, rng = _problem(8, J=2, seed=6)
    steps, n_sweeps, thin, k_max = [1, 1, 1, 0], 120_000, 10, 4
    multi, _, _ = _run_multi(X, y, _centred_start(y, 2, rng), [0], k_max, steps, n_sweeps, thin)
    y_bin = (y == 0).astype(np.int64)  # the binary positive class is class 0
    s = np.where(y_bin > 0, 1.0, -1.0)
    binary, _ = _run_binary(X, y_bin, s, [0], k_max, steps, n_sweeps, thin)
    K = rbf(X, X, np.array([WIDTH]))

    def summary(act, coef_diff, hyp):  # per kept draw: p(class 0 | x_i), g, log eta, n_gamma
        rows = []
        for a, b, h in zip(act, coef_diff, hyp):
            a = a[a >= 0]
            f = b[0] + K[:, a] @ b[1:a.size + 1]
            rows.append(np.concatenate([special.ndtr(f), [h[0], np.log(h[1]), a.size]]))
        return np.array(rows)

    ours = summary(multi.active,
                   (multi.coefficients[:, 0] - multi.coefficients[:, 1]) / np.sqrt(2),
                   multi.precisions)
    ref = summary(binary.active, binary.coefficients, binary.precisions)
    z = _z_scores(ours[500:], ref[500:])
    assert np.abs(z).max() < 4.5, z
    # the centred coefficients are (beta, -beta)/sqrt(2): the classes sum to zero
    assert np.abs(multi.coefficients.sum(axis=1)).max() < 1e-12


def test_two_class_predictive_equals_the_binary_one():
    """The same draws written as J = 2 centred class coefficients predict as the binary code."""
    X, y, _ = _problem(60, J=2, seed=7)
    for cls in (FBGKMClassifier, SGPCClassifier):
        binary = cls(n_sweeps=60, burn_in=30, thin=3, k_max=10, random_state=0).fit(X, y)
        multi = copy.deepcopy(binary)
        root2 = np.sqrt(2.0)
        multi.coef_ = np.stack([binary.coef_ / root2, -binary.coef_ / root2], axis=2)
        multi.aux_ = np.stack([binary.aux_ / root2, -binary.aux_ / root2], axis=2)
        X_new = np.random.default_rng(8).normal(size=(40, 2)) * 2
        np.testing.assert_allclose(multi.predict_proba(X_new)[:, 0],
                                   binary.predict_proba(X_new)[:, 1], atol=1e-10)


# --- (d) gamma moves against the enumerated p(gamma | S) --------------------------------------


def test_gamma_moves_visit_subsets_with_exact_multiclass_posterior_frequencies():
    X, y, rng = _problem(5, seed=4)
    J, k_max, eta, g = 3, 3, 1.5, 0.7
    S = _centred_start(y, J, rng) * 2.0
    helmert = np.linalg.qr(np.eye(J) - 1.0 / J)[0][:, : J - 1]  # orthonormal contrasts
    T = S.T @ helmert  # (n, J - 1): independent N(0, Q_gamma) columns (eq. 13)
    subsets = [c for k in range(k_max + 1) for c in itertools.combinations(range(5), k)]
    log_post = np.array([
        sum(stats.multivariate_normal(np.zeros(5), _dense(X, list(c), eta, g)[2]).logpdf(t)
            for t in T.T) + special.betaln(len(c) + 1, 5 - len(c) + 1) for c in subsets])
    post = np.exp(log_post - log_post.max())
    post /= post.sum()
    out, counts, _ = _run_multi(X, y, S, [0], k_max, [0, 0, 1, 0], 200_000, 10, eta=eta, g=g)
    visited = [tuple(sorted(a[a >= 0])) for a in out.active]
    observed = np.array([visited.count(c) for c in subsets])
    assert (counts[:3, 1] > 0).all()
    assert stats.chisquare(observed, post * len(visited)).pvalue > 1e-3
    # power: with one contrast instead of J - 1 the posterior is a different one
    one = np.array([stats.multivariate_normal(np.zeros(5), _dense(X, list(c), eta, g)[2])
                    .logpdf(T[:, 0]) + special.betaln(len(c) + 1, 6 - len(c)) for c in subsets])
    one = np.exp(one - one.max())
    assert stats.chisquare(observed, one / one.sum() * len(visited)).pvalue < 1e-6


# --- numerics: the argmax probability ---------------------------------------------------------


def test_argmax_probability_matches_adaptive_quadrature():
    quad = gkm_multiclass.gauss_hermite()
    rng = np.random.default_rng(9)
    for f in [rng.normal(size=3), rng.normal(size=5) * 3, np.array([4.0, -3.0, 0.0, 1.0])]:
        p = np.array([gkm_multiclass.argmax_probability(f, c, 1.3, quad[0], quad[1])
                      for c in range(f.size)])
        exact = [integrate.quad(lambda z: stats.norm.pdf(z) * np.prod(
            stats.norm.cdf(z + (f[c] - np.delete(f, c)) / 1.3)), -np.inf, np.inf,
            epsabs=1e-13)[0] for c in range(f.size)]
        np.testing.assert_allclose(p, exact, atol=1e-9)
        assert abs(p.sum() - 1.0) < 1e-9


# --- (e) scikit-learn's multiclass checks, (f) accuracy ----------------------------------------

TINY = dict(n_sweeps=20, burn_in=10, thin=2, k_max=10, random_state=0)


@pytest.mark.parametrize("cls", [FBGKMClassifier, SGPCClassifier])
def test_sklearn_multiclass_checks(cls):
    """check_estimator itself runs in test_gkm.py (multi_class tag now True); here the two
    checks that train on three classes, called directly."""
    assert cls().__sklearn_tags__().classifier_tags.multi_class
    check_classifiers_train(cls.__name__, cls(**TINY))
    check_classifiers_classes(cls.__name__, cls(**TINY))
    with pytest.raises(ValueError, match="at least two classes"):
        cls(**TINY).fit(np.zeros((5, 2)), np.ones(5))


@pytest.mark.parametrize("cls", [FBGKMClassifier, SGPCClassifier, BGKMClassifier])
def test_classifies_four_blobs_and_reports_diagnostics(cls):
    X, y = make_blobs(240, centers=[[0, 3], [3, 0], [0, -3], [-3, 0]], cluster_std=0.9,
                      random_state=0)
    labels = np.array(["north", "east", "south", "west"])[y]
    clf = cls(n_sweeps=400, burn_in=200, thin=2, k_max=30, random_state=0)
    clf.fit(X[:120], labels[:120])
    assert list(clf.classes_) == ["east", "north", "south", "west"]
    error = np.mean(clf.predict(X[120:]) != labels[120:])
    assert error < 0.08, error  # Bayes error about 0.02; chance 0.75
    proba = clf.predict_proba(X[120:])
    assert proba.shape == (120, 4)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    own = proba[np.arange(120), np.searchsorted(clf.classes_, labels[120:])]
    assert np.median(own) > 0.8
    assert clf.samples_["u"].shape == (2, 100, 4) and clf.samples_["g"].shape == (2, 100)
    np.testing.assert_allclose(clf.samples_["u"].sum(axis=2), 0.0, atol=1e-8)
    assert clf.coef_.shape[1:] == (31 if cls is not BGKMClassifier else 121, 4)
    assert clf.n_active_trace_.shape == (2, 400)
    assert set(clf.diagnostics_["u"]) >= {"rhat", "ess_bulk", "ess_tail", "brooks_burn_in"}
    assert np.isfinite(clf.diagnostics_["probe_probability"]["max_rhat"])
    assert isinstance(clf.converged_, bool)
