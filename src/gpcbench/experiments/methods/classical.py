"""The classical rows of W&B Tables 1-3 (Ripley 1994, 1996): neural networks, logistic
regression, projection pursuit regression, Gaussian mixtures and a pruned decision tree.

Labels are W&B's printed row names; a table printing the same method under another name maps
it with ``method_names`` (Table 2's "Logistic Regression"). Factories import their estimators
lazily, so a fold job loads only its own method's code.
"""

from gpcbench.experiments.options import CV_FOLDS, FLAG, NONNEGATIVE, POSITIVE, POSITIVE_INT
from gpcbench.experiments.registry import MethodSpec, register

MLP = {"hidden_units": POSITIVE_INT, "n_restarts": POSITIVE_INT, "cv_folds": CV_FOLDS,
       "combine": {"enum": ["best", "average"]}, "max_iter": POSITIVE_INT,
       "alphas": {"type": "array", "items": NONNEGATIVE, "minItems": 1}}
PPR = {"r": POSITIVE_INT, "fit_type": {"enum": ["polyfit", "spline"]}, "degree": POSITIVE_INT,
       "opt_level": {"enum": ["low", "medium", "high"]}}
MIXTURE = {"max_components": POSITIVE_INT, "n_init": POSITIVE_INT, "reg_covar": POSITIVE,
           "covariance_types": {"type": "array", "minItems": 1,
                                "items": {"enum": ["full", "diag", "spherical", "tied"]}},
           "shared_covariance": FLAG, "max_iter": POSITIVE_INT, "tol": POSITIVE}
LOGISTIC = {"C": POSITIVE, "max_iter": POSITIVE_INT}
TREE = {"cv_folds": CV_FOLDS}


def _network(ctx, hidden_units: int, combine: str):
    from gpcbench.baselines.classical import CrossValidatedMLP

    return CrossValidatedMLP(**{"hidden_units": hidden_units, "combine": combine,
                                "random_state": ctx.seed, **ctx.options})


def nn_1(ctx):
    """W&B sec. 5.1 (Ripley 1996): 2 hidden units, skip-layer connections, maximum likelihood;
    the restart of lowest training loss."""
    return _network(ctx, hidden_units=2, combine="best")


def nn_2(ctx):
    """W&B Table 1 caption (Ripley 1994): 2 hidden units, local minima weighted by Laplace's
    approximation; here the restarts' probabilities averaged."""
    return _network(ctx, hidden_units=2, combine="average")


def nn_1hu(ctx):
    """W&B Table 2 caption: 1 hidden unit, maximum likelihood; the best restart."""
    return _network(ctx, hidden_units=1, combine="best")


def nn_4hu(ctx):
    """W&B Table 3 (Ripley 1996): 4 hidden units; the restarts' probabilities averaged."""
    return _network(ctx, hidden_units=4, combine="average")


def logistic(ctx):
    from gpcbench.baselines.classical import make_logistic_regression

    return make_logistic_regression(**ctx.options)


def _projection_pursuit(ctx, ridge_functions: int):
    from gpcbench.baselines.projection_pursuit import make_projection_pursuit

    return make_projection_pursuit(**{"r": ridge_functions, "random_state": ctx.seed,
                                      **ctx.options})


def ppr_4(ctx):
    return _projection_pursuit(ctx, ridge_functions=4)


def ppr_5(ctx):
    return _projection_pursuit(ctx, ridge_functions=5)


def gaussian_mixture(ctx):
    from gpcbench.baselines.classical import ClassConditionalGaussianMixture

    return ClassConditionalGaussianMixture(random_state=ctx.seed, **ctx.options)


def decision_tree(ctx):
    from gpcbench.baselines.classical import PrunedDecisionTree

    return PrunedDecisionTree(random_state=ctx.seed, **ctx.options)


register(MethodSpec(name="nn-1", label="Neural Network(1)", factory=nn_1, options=MLP))
register(MethodSpec(name="nn-2", label="Neural Network(2)", factory=nn_2, options=MLP))
register(MethodSpec(name="nn-1hu", label="Neural Network", factory=nn_1hu, options=MLP))
register(MethodSpec(name="nn-4hu", label="Neural Network (4HU)", factory=nn_4hu, options=MLP))
register(MethodSpec(name="logistic", label="Logistic regression", factory=logistic,
                    options=LOGISTIC))
# fitted to the class indicators (one response per class), labelled by the largest fitted value
register(MethodSpec(name="ppr-4", label="PP regression (4 ridge functions)",
                    factory=ppr_4, probabilistic=False, options=PPR))
register(MethodSpec(name="ppr-5", label="PP regression (5 ridge functions)",
                    factory=ppr_5, probabilistic=False, options=PPR))
register(MethodSpec(name="gaussian-mixture", label="Gaussian Mixture", factory=gaussian_mixture,
                    options=MIXTURE))
register(MethodSpec(name="decision-tree", label="Decision Tree", factory=decision_tree,
                    options=TREE))
