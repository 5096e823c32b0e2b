"""The classical comparison rows of W&B Tables 1-3 (from Ripley 1994, 1996): neural networks
with cross-validated weight decay, logistic regression, class-conditional Gaussian mixtures and
a cost-complexity-pruned decision tree, as thin layers over scikit-learn.

Projection pursuit regression (the "PP regression" rows) is the ``projection-pursuit``
package's classifier, used as it is (:mod:`gpcbench.baselines.projection_pursuit`).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.mixture import GaussianMixture
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.neural_network import MLPClassifier
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from gpcbench.estimators.base import store_parameters

#: Weight decays tried by :class:`CrossValidatedMLP` (scikit-learn's ``alpha``: the penalty
#: alpha / 2 * sum w^2 on the summed log loss, so Ripley's decay lambda = alpha / 2); 0 is
#: maximum likelihood.
DEFAULT_ALPHAS = (0.0, 1e-3, 1e-2, 1e-1, 1.0)
#: Logistic regression's inverse L2 penalty on standardised inputs: lambda = 1 / (2 C) = 0.005.
LOGISTIC_C = 100.0


def most_probable(estimator, X) -> np.ndarray:
    """The class of highest ``estimator.predict_proba`` of each row of X."""
    proba = estimator.predict_proba(X)
    return estimator.classes_[np.argmax(proba, axis=1)]


class RefittedClassifier(ClassifierMixin, BaseEstimator):
    """Base of a classifier that predicts with one fitted scikit-learn classifier, the fitted
    attribute named by ``fitted_attribute``."""

    fitted_attribute = "estimator_"

    def predict_proba(self, X):
        """Class probabilities (columns in ``classes_`` order) of the fitted classifier."""
        check_is_fitted(self, self.fitted_attribute)
        X = validate_data(self, X, reset=False)
        return getattr(self, self.fitted_attribute).predict_proba(X)

    def predict(self, X):
        """The most probable class."""
        return most_probable(self, X)


def _restart_seeds(random_state, n: int) -> np.ndarray:
    return check_random_state(random_state).randint(np.iinfo(np.int32).max, size=n)


class RestartedMLP(ClassifierMixin, BaseEstimator):
    """One-hidden-layer network with logistic units (Ripley's ``nnet``: log loss, BFGS-type
    optimiser) fitted from several random starts.

    Parameters
    ----------
    hidden_units : int
        Units of the hidden layer.
    alpha : float
        scikit-learn's L2 penalty on the weights (0: maximum likelihood).
    n_restarts : int
        Fits from independent random initial weights.
    combine : {"best", "average"}
        ``"best"``: predict with the fit of lowest penalised training loss; ``"average"``: with
        the mean of the fits' probabilities (a committee, standing in for Ripley's (1993)
        predictive approach, which weights local minima by their Laplace evidence).
    max_iter : int
        L-BFGS iteration cap of each fit.
    random_state : int or None
        Seeds the initial weights of every restart.

    Attributes
    ----------
    classes_ : ndarray
    networks_ : list of MLPClassifier
        The fits used for prediction (one for ``"best"``).
    losses_ : ndarray
        Final penalised training loss of every restart.
    converged_ : bool
        No restart stopped at ``max_iter``.
    n_iter_ : int
        Iterations of all restarts together.
    """

    def __init__(self, hidden_units=2, alpha=0.0, n_restarts=5, combine="best", max_iter=2000,
                 random_state=None):
        store_parameters(self, locals())

    def fit(self, X, y):
        """Fit ``n_restarts`` networks to (X, y)."""
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        if self.combine not in ("best", "average"):
            raise ValueError(f"combine must be 'best' or 'average', got {self.combine!r}")
        self.classes_ = np.unique(y)
        fits = [MLPClassifier(hidden_layer_sizes=(self.hidden_units,), activation="logistic",
                              solver="lbfgs", alpha=self.alpha, max_iter=self.max_iter,
                              random_state=int(seed)).fit(X, y)
                for seed in _restart_seeds(self.random_state, self.n_restarts)]
        self.losses_ = np.array([fit.loss_ for fit in fits])
        self.n_iter_ = int(sum(fit.n_iter_ for fit in fits))
        self.converged_ = all(fit.n_iter_ < self.max_iter for fit in fits)
        self.networks_ = fits if self.combine == "average" else [fits[int(np.argmin(self.losses_))]]
        return self

    def predict_proba(self, X):
        """Class probabilities (columns in ``classes_`` order)."""
        check_is_fitted(self, "networks_")
        X = validate_data(self, X, reset=False)
        return np.mean([net.predict_proba(X) for net in self.networks_], axis=0)

    def predict(self, X):
        """The most probable class."""
        return most_probable(self, X)


class CrossValidatedMLP(RefittedClassifier):
    """:class:`RestartedMLP` whose weight decay is chosen by stratified K-fold CV log loss on
    the training set, then refitted on all of it.

    Parameters
    ----------
    hidden_units, n_restarts, combine, max_iter :
        As in :class:`RestartedMLP`.
    alphas : sequence of float
        Candidate weight decays (scikit-learn's ``alpha``).
    cv_folds : int
        Cross-validation folds.
    random_state : int or None
        Seeds the CV folds and the networks' initial weights.

    Attributes
    ----------
    classes_ : ndarray
    alpha_ : float
        The chosen weight decay.
    estimator_ : RestartedMLP
        The refitted network(s).
    hyperparameters_ : dict
        ``{"alpha": alpha_}``, recorded in the fold result.
    cv_results_ : dict
        Mean CV log loss per alpha.
    converged_, n_iter_ :
        Those of ``estimator_``.
    """

    def __init__(self, hidden_units=2, alphas=DEFAULT_ALPHAS, n_restarts=5, combine="best",
                 cv_folds=5, max_iter=2000, random_state=None):
        store_parameters(self, locals())

    def fit(self, X, y):
        """Choose the weight decay by CV, then refit on all of (X, y)."""
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        network = RestartedMLP(hidden_units=self.hidden_units, n_restarts=self.n_restarts,
                               combine=self.combine, max_iter=self.max_iter,
                               random_state=self.random_state)
        cv = StratifiedKFold(self.cv_folds, shuffle=True, random_state=self.random_state)
        with warnings.catch_warnings():  # CV fits stopped at max_iter still score; the refit warns
            warnings.simplefilter("ignore", ConvergenceWarning)
            search = GridSearchCV(network, {"alpha": [float(a) for a in self.alphas]},
                                  scoring="neg_log_loss", cv=cv, refit=False).fit(X, y)
        self.alpha_ = float(search.best_params_["alpha"])
        self.cv_results_ = {"alpha": list(search.cv_results_["param_alpha"]),
                            "mean_log_loss": (-search.cv_results_["mean_test_score"]).tolist()}
        self.estimator_ = clone(network).set_params(alpha=self.alpha_).fit(X, y)
        self.classes_ = self.estimator_.classes_
        self.hyperparameters_ = {"alpha": self.alpha_}
        self.converged_ = self.estimator_.converged_
        self.n_iter_ = self.estimator_.n_iter_
        return self


def make_logistic_regression(C: float = LOGISTIC_C, max_iter: int = 10000) -> LogisticRegression:
    """Lightly L2-penalised logistic regression: the crabs training sets are linearly
    separable, where the unpenalised maximum-likelihood weights are infinite."""
    return LogisticRegression(C=C, max_iter=max_iter)


def _n_free_parameters(covariance_type: str, n_components: int, n_features: int) -> int:
    """Free parameters of a Gaussian mixture: means, covariances and mixing weights."""
    covariance = {"full": n_components * n_features * (n_features + 1) // 2,
                  "diag": n_components * n_features, "spherical": n_components,
                  "tied": n_features * (n_features + 1) // 2}[covariance_type]
    return n_components * n_features + covariance + n_components - 1


class ClassConditionalGaussianMixture(ClassifierMixin, BaseEstimator):
    """One Gaussian mixture per class, classified by Bayes' rule with the training class
    frequencies as priors.

    By default each class's mixture is fitted on its own, its size and covariance type chosen
    by BIC: a candidate (covariance type, number of components) is tried for a class only if
    the class has at least as many training rows as the mixture has free parameters; when none
    is (a class of a few rows), the class gets one spherical Gaussian.

    With ``shared_covariance=True`` the model is Hastie & Tibshirani's (1996) mixture
    discriminant analysis (MDA, as in R's ``mda``): every class has ``max_components``
    Gaussian subclasses (fewer if it has fewer distinct training rows) and all subclasses of
    all classes share one full covariance matrix, fitted jointly by maximum likelihood with EM
    (subclass responsibilities within each row's own class; the covariance pooled over all
    rows), from ``n_init`` k-means starts (the one of highest likelihood kept). A subclass
    needs no more rows than a mean, so small classes are not starved. BIC and
    ``covariance_types`` are not used; with ``max_components=1`` this is linear discriminant
    analysis.

    Parameters
    ----------
    max_components : int
        Largest number of components tried per class (per-class mixtures); the number of
        subclasses per class (``shared_covariance=True``).
    covariance_types : sequence of {"full", "diag", "spherical", "tied"}
        Covariance types tried (per-class mixtures only).
    n_init : int
        EM restarts of every candidate (GaussianMixture's ``n_init``), or of the joint EM.
    reg_covar : float
        Added to the covariance diagonals (GaussianMixture's ``reg_covar``).
    shared_covariance : bool
        Mixture discriminant analysis: one covariance shared by every subclass of every class.
    max_iter : int
        EM iterations of the joint fit (``shared_covariance=True``).
    tol : float
        The joint EM stops when the mean log-likelihood per row gains less than ``tol``.
    random_state : int or None
        Seeds the EM initialisations.

    Attributes
    ----------
    classes_ : ndarray
    mixtures_ : list of GaussianMixture
        The chosen mixture of each class (``shared_covariance=True``: "tied" mixtures holding
        the jointly fitted subclass weights and means and the shared covariance).
    class_log_prior_ : ndarray
        Log training frequency of each class.
    hyperparameters_ : dict
        Per class, the chosen ``"<covariance type> x <components>"`` (``"shared x R"``).
    converged_ : bool
        Every chosen mixture's EM converged (the joint EM, when shared).
    n_iter_ : int
        EM iterations of the chosen mixtures (of every start of the joint EM, when shared).
    log_likelihood_ : float
        ``shared_covariance=True``: mean log p(x | class) per training row at the fit.
    """

    def __init__(self, max_components=3, covariance_types=("full", "diag", "spherical"),
                 n_init=3, reg_covar=1e-6, shared_covariance=False, max_iter=500, tol=1e-6,
                 random_state=None):
        store_parameters(self, locals())

    def fit(self, X, y):
        """Fit the class mixtures and the class priors."""
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        self.classes_, codes, counts = np.unique(y, return_inverse=True, return_counts=True)
        self.class_log_prior_ = np.log(counts / counts.sum())
        if self.shared_covariance:
            self.mixtures_ = self._fit_shared(X, codes)
            self.hyperparameters_ = {str(label): f"shared x {m.n_components}"
                                     for label, m in zip(self.classes_, self.mixtures_)}
            return self
        seeds = _restart_seeds(self.random_state, len(self.classes_))
        self.mixtures_ = [self._select(X[codes == c], int(seeds[c]))
                          for c in range(len(self.classes_))]
        self.hyperparameters_ = {
            str(label): f"{m.covariance_type} x {m.n_components}"
            for label, m in zip(self.classes_, self.mixtures_)}
        self.converged_ = all(m.converged_ for m in self.mixtures_)
        self.n_iter_ = int(sum(m.n_iter_ for m in self.mixtures_))
        return self

    def _fit_shared(self, X, codes) -> list:
        """Mixture discriminant analysis by EM: the best of ``n_init`` k-means starts."""
        n, d = X.shape
        parts = [X[codes == c] for c in range(len(self.classes_))]
        sizes = [min(self.max_components, len(np.unique(part, axis=0))) for part in parts]
        best, self.n_iter_ = None, 0
        for seed in _restart_seeds(self.random_state, self.n_init):
            resp = [np.eye(r)[KMeans(r, n_init=1, random_state=int(seed)).fit_predict(part)]
                    if r > 1 else np.ones((len(part), 1)) for part, r in zip(parts, sizes)]
            previous, converged = -np.inf, False
            for _ in range(self.max_iter):
                weights, means, cov = _shared_m_step(parts, resp, n, self.reg_covar)
                resp, loglik = _shared_e_step(parts, weights, means, cov)
                self.n_iter_ += 1
                converged = loglik - previous < self.tol
                previous = loglik
                if converged:
                    break
            if best is None or previous > best[0]:
                best = (previous, converged, weights, means, cov)
        self.log_likelihood_, self.converged_, weights, means, cov = best
        if not self.converged_:
            warnings.warn(f"mixture discriminant EM stopped at max_iter={self.max_iter} "
                          f"before its log-likelihood gain fell below tol={self.tol:g}",
                          ConvergenceWarning)
        precision_cholesky = solve_triangular(np.linalg.cholesky(cov), np.eye(d), lower=True).T
        mixtures = []
        for w, mu in zip(weights, means):
            mixture = GaussianMixture(len(w), covariance_type="tied", reg_covar=self.reg_covar)
            mixture.weights_, mixture.means_, mixture.covariances_ = w, mu, cov
            mixture.precisions_cholesky_ = precision_cholesky
            mixture.precisions_ = precision_cholesky @ precision_cholesky.T
            mixture.converged_, mixture.n_features_in_ = self.converged_, d
            mixtures.append(mixture)
        return mixtures

    def _select(self, X, seed: int) -> GaussianMixture:
        """The lowest-BIC admissible candidate for one class's rows."""
        n, d = X.shape
        candidates = [(kind, k) for kind in self.covariance_types
                      for k in range(1, self.max_components + 1)
                      if _n_free_parameters(kind, k, d) <= n] or [("spherical", 1)]
        fits = [GaussianMixture(k, covariance_type=kind, n_init=self.n_init,
                                reg_covar=self.reg_covar, random_state=seed).fit(X)
                for kind, k in candidates]
        return min(fits, key=lambda m: m.bic(X))

    def predict_log_proba(self, X):
        """log p(class | x) by Bayes' rule: log prior + mixture log density, normalised."""
        check_is_fitted(self, "mixtures_")
        X = validate_data(self, X, reset=False)
        densities = np.column_stack([m.score_samples(X) for m in self.mixtures_])
        joint = densities + self.class_log_prior_
        return joint - logsumexp(joint, axis=1, keepdims=True)

    def predict_proba(self, X):
        """Class posterior probabilities."""
        return np.exp(self.predict_log_proba(X))

    def predict(self, X):
        """The class of highest posterior probability."""
        log_proba = self.predict_log_proba(X)
        return self.classes_[np.argmax(log_proba, axis=1)]


def _shared_m_step(parts, resp, n: int, reg_covar: float):
    """Subclass weights and means per class, and the covariance pooled over all subclasses."""
    d = parts[0].shape[1]
    weights, means, scatter = [], [], np.zeros((d, d))
    for part, r in zip(parts, resp):
        mass = r.sum(axis=0) + 10 * np.finfo(float).eps
        mu = (r.T @ part) / mass[:, None]
        for k in range(len(mass)):
            centred = part - mu[k]
            scatter += (r[:, k, None] * centred).T @ centred
        weights.append(mass / mass.sum())
        means.append(mu)
    return weights, means, scatter / n + reg_covar * np.eye(d)


def _shared_e_step(parts, weights, means, cov):
    """Subclass responsibilities within each row's class, and mean log p(x | class)."""
    d = cov.shape[0]
    chol = np.linalg.cholesky(cov)
    log_det = 2 * np.log(np.diag(chol)).sum()
    resp, total, n = [], 0.0, 0
    for part, w, mu in zip(parts, weights, means):
        z = np.stack([solve_triangular(chol, (part - m).T, lower=True) for m in mu], axis=-1)
        log_joint = (np.log(w) - 0.5 * ((z ** 2).sum(axis=0) + log_det + d * np.log(2 * np.pi)))
        log_density = logsumexp(log_joint, axis=1, keepdims=True)
        resp.append(np.exp(log_joint - log_density))
        total += log_density.sum()
        n += len(part)
    return resp, total / n


class PrunedDecisionTree(RefittedClassifier):
    """Classification tree grown in full, then pruned at the cost-complexity alpha of its
    pruning path with the highest stratified K-fold CV accuracy (ties: the larger alpha, the
    smaller tree).

    Parameters
    ----------
    cv_folds : int
        Cross-validation folds.
    random_state : int or None
        Seeds the CV folds and the trees' tie-breaking between equally good splits.

    Attributes
    ----------
    classes_ : ndarray
    ccp_alpha_ : float
        The chosen cost-complexity parameter.
    tree_ : DecisionTreeClassifier
        The pruned tree fitted on all the training rows.
    cv_results_ : dict
        Mean CV accuracy per path alpha.
    hyperparameters_ : dict
        ``{"ccp_alpha": ccp_alpha_, "n_leaves": ...}``.
    """

    fitted_attribute = "tree_"

    def __init__(self, cv_folds=10, random_state=None):
        store_parameters(self, locals())

    def fit(self, X, y):
        """Grow, choose the pruning level by CV and refit."""
        X, y = validate_data(self, X, y)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        tree = DecisionTreeClassifier(random_state=self.random_state)
        alphas = np.unique(tree.cost_complexity_pruning_path(X, y).ccp_alphas)
        cv = StratifiedKFold(self.cv_folds, shuffle=True, random_state=self.random_state)
        with warnings.catch_warnings():  # a class with fewer rows than folds
            warnings.simplefilter("ignore", UserWarning)
            accuracy = np.array([cross_val_score(clone(tree).set_params(ccp_alpha=a), X, y,
                                                 cv=cv).mean() for a in alphas])
        best = np.flatnonzero(accuracy == accuracy.max())[-1]
        self.ccp_alpha_ = float(alphas[best])
        self.cv_results_ = {"ccp_alpha": alphas.tolist(), "mean_accuracy": accuracy.tolist()}
        self.tree_ = clone(tree).set_params(ccp_alpha=self.ccp_alpha_).fit(X, y)
        self.hyperparameters_ = {"ccp_alpha": self.ccp_alpha_,
                                 "n_leaves": int(self.tree_.get_n_leaves())}
        return self
