"""Classical rows of W&B Tables 1-3: scikit-learn API checks and independent checks of what each
estimator claims (Bayes' rule by hand, the CV choice by a literal loop, a known single index)."""

import numpy as np
import pytest
from scipy.stats import multivariate_normal
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold
from sklearn.tree import DecisionTreeClassifier
from sklearn_checks import assert_passes_check_estimator
from skpp import ProjectionPursuitRegressor

from gpcbench.baselines.classical import (ClassConditionalGaussianMixture, CrossValidatedMLP,
                                          PrunedDecisionTree, RestartedMLP,
                                          make_logistic_regression)
from gpcbench.baselines.projection_pursuit import make_projection_pursuit


def _three_classes(seed=0, n=60):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    y = np.repeat(np.arange(3), n // 3)
    return centres[y] + rng.normal(size=(y.size, 2)), y


@pytest.mark.parametrize("estimator", [
    RestartedMLP(n_restarts=2, max_iter=200),
    ClassConditionalGaussianMixture(max_components=2, n_init=1),
    ClassConditionalGaussianMixture(max_components=2, n_init=1, shared_covariance=True),
    PrunedDecisionTree(cv_folds=5),
], ids=repr)
def test_sklearn_api(estimator):
    """check_estimator: no check may fail; only the array-API check may be skipped (scikit-learn
    skips it unless SCIPY_ARRAY_API is set; these estimators do not claim array-API support)."""
    assert_passes_check_estimator(estimator)


def test_cross_validated_mlp_api():
    """fit / predict_proba / predict of the CV wrapper (scikit-learn's checks fit classes of a
    single row, which stratified CV cannot split)."""
    X, y = _three_classes()
    model = CrossValidatedMLP(hidden_units=2, alphas=(0.0, 1.0), n_restarts=2, cv_folds=3,
                              random_state=0).fit(X, y)
    proba = model.predict_proba(X)
    assert proba.shape == (y.size, 3) and np.allclose(proba.sum(axis=1), 1.0)
    assert np.array_equal(model.predict(X), model.classes_[proba.argmax(axis=1)])
    assert model.alpha_ in (0.0, 1.0) and model.hyperparameters_ == {"alpha": model.alpha_}


def test_cv_weight_decay_is_the_best_of_a_literal_cv_loop():
    """The chosen alpha has the lowest mean held-out log loss, recomputed fold by fold."""
    X, y = _three_classes(seed=1)
    alphas, folds = (0.0, 0.1, 10.0), 3
    model = CrossValidatedMLP(hidden_units=2, alphas=alphas, n_restarts=2, cv_folds=folds,
                              random_state=3).fit(X, y)
    losses = []
    for alpha in alphas:
        fold_losses = []
        for train, test in StratifiedKFold(folds, shuffle=True, random_state=3).split(X, y):
            net = RestartedMLP(hidden_units=2, alpha=alpha, n_restarts=2,
                               random_state=3).fit(X[train], y[train])
            p = net.predict_proba(X[test])[np.arange(test.size), y[test]]
            eps = np.finfo(float).eps  # log_loss's clipping
            fold_losses.append(-np.mean(np.log(np.clip(p, eps, 1 - eps))))
        losses.append(np.mean(fold_losses))
    assert model.alpha_ == alphas[int(np.argmin(losses))]
    assert np.allclose(model.cv_results_["mean_log_loss"], losses, rtol=1e-6)


def test_restart_combination():
    """'average' predicts the mean of its networks' probabilities; 'best' keeps the restart of
    lowest penalised training loss, whose loss is the smallest of all restarts."""
    X, y = _three_classes(seed=2)
    average = RestartedMLP(hidden_units=2, n_restarts=3, combine="average",
                           random_state=5).fit(X, y)
    by_hand = np.mean([net.predict_proba(X) for net in average.networks_], axis=0)
    assert len(average.networks_) == 3 and np.allclose(average.predict_proba(X), by_hand)
    best = RestartedMLP(hidden_units=2, n_restarts=3, combine="best", random_state=5).fit(X, y)
    assert best.networks_[0].loss_ == best.losses_.min()
    assert np.allclose(best.losses_, average.losses_)  # same seeds, same fits


def test_mixture_posterior_is_bayes_rule_by_hand():
    """predict_proba = prior x mixture density / sum, each density summed over components
    with scipy's multivariate normal (covariances expanded from each covariance type)."""
    X, y = _three_classes(seed=4, n=150)
    model = ClassConditionalGaussianMixture(max_components=2, random_state=0).fit(X, y)
    Xt = np.random.default_rng(9).normal(scale=2.0, size=(25, 2)) + 1.0
    joint = []
    for mixture, c in zip(model.mixtures_, range(3)):
        density = np.zeros(len(Xt))
        for k in range(mixture.n_components):
            cov = {"full": lambda: mixture.covariances_[k],
                   "diag": lambda: np.diag(mixture.covariances_[k]),
                   "spherical": lambda: mixture.covariances_[k] * np.eye(2),
                   "tied": lambda: mixture.covariances_}[mixture.covariance_type]()
            density += mixture.weights_[k] * multivariate_normal(mixture.means_[k], cov).pdf(Xt)
        joint.append(np.mean(y == c) * density)
    joint = np.column_stack(joint)
    assert np.allclose(model.predict_proba(Xt), joint / joint.sum(axis=1, keepdims=True),
                       rtol=1e-8, atol=1e-12)


def test_mixture_size_by_bic_and_small_classes_admissible():
    """A class drawn from two far-apart clusters gets two components; the BIC of each chosen
    mixture implies (bic + 2 n loglik) / log n free parameters, never more than its rows; a
    class of 5 rows in 4-D gets the spherical single Gaussian."""
    rng = np.random.default_rng(0)
    two = np.vstack([rng.normal(size=(100, 4)) - 6.0, rng.normal(size=(100, 4)) + 6.0])
    few = rng.normal(size=(5, 4))
    X, y = np.vstack([two, few]), np.r_[np.zeros(200, int), np.ones(5, int)]
    model = ClassConditionalGaussianMixture(random_state=0).fit(X, y)
    assert model.mixtures_[0].n_components == 2
    assert model.hyperparameters_["1"] == "spherical x 1"
    for mixture, rows in zip(model.mixtures_, (two, few)):
        n = len(rows)
        p = (mixture.bic(rows) + 2 * n * mixture.score(rows)) / np.log(n)
        assert round(p) <= n or mixture.covariance_type == "spherical"


def _clustered_classes(seed=5):
    """Three classes in 3-D, two of them made of two clusters, one of only 6 rows."""
    rng = np.random.default_rng(seed)
    parts = [rng.normal(size=(40, 3)) + [4, 0, 0], rng.normal(size=(40, 3)) - [4, 0, 0],
             rng.normal(size=(30, 3)) + [0, 4, 0], rng.normal(size=(30, 3)) - [0, 4, 0],
             rng.normal(size=(6, 3)) + [0, 0, 3]]
    return np.vstack(parts), np.repeat([0, 0, 1, 1, 2], [40, 40, 30, 30, 6])


def _mda_by_hand(model, X, classes=3):
    """log of prior x sum_r w_cr N(x; mu_cr, Sigma) per class, with scipy's normal density."""
    cov = model.mixtures_[0].covariances_
    return np.column_stack([
        np.log(sum(w * multivariate_normal(mu, cov).pdf(X)
                   for w, mu in zip(m.weights_, m.means_))) + model.class_log_prior_[c]
        for c, m in zip(range(classes), model.mixtures_)])


def test_mda_posterior_is_bayes_rule_by_hand_with_one_shared_covariance():
    """shared_covariance=True: every class keeps max_components subclasses and one covariance
    shared by all of them; predict_proba is Bayes' rule recomputed with scipy densities."""
    X, y = _clustered_classes()
    model = ClassConditionalGaussianMixture(max_components=2, shared_covariance=True,
                                            random_state=0).fit(X, y)
    assert model.hyperparameters_ == {"0": "shared x 2", "1": "shared x 2", "2": "shared x 2"}
    covariances = [m.covariances_ for m in model.mixtures_]
    assert all(np.array_equal(c, covariances[0]) for c in covariances)
    assert model.converged_
    Xt = np.random.default_rng(9).normal(scale=3.0, size=(30, 3))
    joint = np.exp(_mda_by_hand(model, Xt))
    assert np.allclose(model.predict_proba(Xt), joint / joint.sum(axis=1, keepdims=True),
                       rtol=1e-8, atol=1e-12)
    assert np.array_equal(model.predict(Xt), model.classes_[joint.argmax(axis=1)])


def test_mda_is_a_fixed_point_of_em_by_hand():
    """At convergence the parameters reproduce themselves through one EM step written out by
    hand (responsibilities from scipy densities, weighted means, the covariance pooled over
    every subclass of every class / n), and log_likelihood_ is the mean log class density."""
    X, y = _clustered_classes(seed=6)
    model = ClassConditionalGaussianMixture(max_components=2, shared_covariance=True,
                                            reg_covar=0.0, tol=1e-13, max_iter=5000,
                                            random_state=1).fit(X, y)
    cov = model.mixtures_[0].covariances_
    scatter, loglik = np.zeros((3, 3)), 0.0
    for c, m in enumerate(model.mixtures_):
        rows = X[y == c]
        dens = np.column_stack([w * multivariate_normal(mu, cov).pdf(rows)
                                for w, mu in zip(m.weights_, m.means_)])
        loglik += np.log(dens.sum(axis=1)).sum()
        resp = dens / dens.sum(axis=1, keepdims=True)
        means = resp.T @ rows / resp.sum(axis=0)[:, None]
        assert np.allclose(resp.mean(axis=0), m.weights_, atol=1e-6)
        assert np.allclose(means, m.means_, atol=1e-5)
        for k in range(len(means)):
            scatter += (resp[:, k, None] * (rows - means[k])).T @ (rows - means[k])
    assert np.allclose(scatter / len(X), cov, atol=1e-5)
    assert np.isclose(model.log_likelihood_, loglik / len(X), rtol=1e-8)


def test_mda_with_one_subclass_is_linear_discriminant_analysis():
    """One subclass per class and a shared covariance is LDA: the posterior of scikit-learn's
    LinearDiscriminantAnalysis (maximum-likelihood pooled covariance)."""
    X, y = _clustered_classes(seed=7)
    model = ClassConditionalGaussianMixture(max_components=1, shared_covariance=True,
                                            reg_covar=0.0).fit(X, y)
    lda = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    Xt = np.random.default_rng(3).normal(scale=3.0, size=(40, 3))
    assert np.allclose(model.predict_proba(Xt), lda.predict_proba(Xt), rtol=1e-7, atol=1e-12)


def test_pruned_tree_alpha_is_the_cv_best_of_the_path():
    """Every alpha of the pruning path scored by a literal fold loop; the chosen alpha has the
    best accuracy (ties: the largest alpha), and its tree is no larger than the full tree."""
    X, y = _three_classes(seed=6, n=90)
    X = X + np.random.default_rng(6).normal(scale=1.5, size=X.shape)
    model = PrunedDecisionTree(cv_folds=5, random_state=2).fit(X, y)
    alphas = np.unique(DecisionTreeClassifier(random_state=2).cost_complexity_pruning_path(
        X, y).ccp_alphas)
    accuracy = []
    for alpha in alphas:
        correct = 0
        for train, test in StratifiedKFold(5, shuffle=True, random_state=2).split(X, y):
            tree = DecisionTreeClassifier(ccp_alpha=alpha, random_state=2).fit(X[train], y[train])
            correct += np.sum(tree.predict(X[test]) == y[test])
        accuracy.append(correct)
    best = alphas[np.flatnonzero(np.array(accuracy) == max(accuracy))[-1]]
    assert model.ccp_alpha_ == best
    full = DecisionTreeClassifier(random_state=2).fit(X, y)
    assert model.tree_.get_n_leaves() <= full.get_n_leaves()


def test_logistic_regression_is_the_lightly_penalised_optimum():
    """On separable data (where the unpenalised MLE is infinite) the weights are finite and
    satisfy the stationarity condition X^T (y - p) = w / C of the L2-penalised likelihood."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X @ np.array([1.0, -2.0, 0.5]) > 0).astype(int)
    model = make_logistic_regression().set_params(tol=1e-12).fit(X, y)  # an exact optimum
    w = model.coef_.ravel()
    p = 1.0 / (1.0 + np.exp(-(X @ w + model.intercept_[0])))
    assert np.all(np.isfinite(w)) and np.mean(model.predict(X) == y) > 0.95
    assert np.allclose(X.T @ (y - p), w / model.C, atol=1e-6)
    assert abs(np.sum(y - p)) < 1e-6  # the intercept is not penalised


def test_projection_pursuit_recovers_a_single_index():
    """One ridge function fitted to y = g(a^T x) + noise finds the direction a (up to sign)."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    a = np.array([0.6, -0.8, 0.0, 0.0])
    t = X @ a
    y = t + 0.4 * t ** 2 + 0.05 * rng.normal(size=t.size)
    model = ProjectionPursuitRegressor(r=1, random_state=0).fit(X, y)
    direction = model._alpha_[:, 0]  # the package's fitted projection (no public accessor)
    assert abs(direction @ a) / np.linalg.norm(direction) > 0.99
    assert np.mean((model.predict(X) - y) ** 2) < 0.01


def test_projection_pursuit_classifier_on_class_indicators():
    """Fitted to the class indicators, the classifier labels a single-index problem well and
    predicts only training classes."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(200, 3))
    y = np.where(X @ np.array([1.0, 1.0, 0.0]) > 0.5, 7, 3)
    model = make_projection_pursuit(r=2, random_state=0).fit(X, y)
    assert set(model.predict(X)) <= {3, 7}
    assert np.mean(model.predict(X) == y) > 0.95


@pytest.mark.parametrize("combine", ["sideways"])
def test_restarted_mlp_rejects_unknown_combination(combine):
    with pytest.raises(ValueError, match="combine"):
        RestartedMLP(combine=combine).fit(*_three_classes())


def test_mixture_discriminant_warns_when_em_stops_at_its_cap():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    model = ClassConditionalGaussianMixture(shared_covariance=True, max_iter=1, tol=0.0,
                                            n_init=1, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        model.fit(X, y)
    assert not model.converged_
