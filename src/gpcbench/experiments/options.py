"""JSON schemas of the method options a config may set (``methods.<m>``, ``options.<m>``).

Each registered method declares the options its factory accepts (``MethodSpec.options``),
built here from one table of option schemas per family, so that a misspelt or ill-typed option
is a config error naming its key before any job runs. ``tests/test_registry.py`` checks that
every declared option reaches the estimator the factory builds (or the factory itself).
"""

from __future__ import annotations

POSITIVE_INT = {"type": "integer", "minimum": 1}
COUNT = {"type": "integer", "minimum": 0}
POSITIVE = {"type": "number", "exclusiveMinimum": 0}
NONNEGATIVE = {"type": "number", "minimum": 0}
FLAG = {"type": "boolean"}
FRACTION = {"type": "number", "minimum": 0, "exclusiveMaximum": 1}
PROPER_FRACTION = {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}
ONE_OR_PER_FEATURE = {"oneOf": [POSITIVE, {"type": "array", "items": POSITIVE, "minItems": 1}]}

CV_FOLDS = {"type": "integer", "minimum": 2}

#: K&G eq. 13 covariance block (initial values) shared by the GP estimators.
COVARIANCE = {
    "theta0": POSITIVE, "theta1": NONNEGATIVE, "theta2": NONNEGATIVE,
    "inverse_lengthscale": ONE_OR_PER_FEATURE, "ard": FLAG,
}
ITERATIONS = {"max_iter": POSITIVE_INT, "tol": POSITIVE}

KNN = {"k_grid": {"type": "array", "items": POSITIVE_INT, "minItems": 1}, "cv_folds": CV_FOLDS,
       "tie_break": {"enum": ["smallest_class", "nearest_neighbour"]}}
SVM = {"cv_folds": CV_FOLDS}

EP = {
    **COVARIANCE, **ITERATIONS, "epsilon": NONNEGATIVE, "learn_hyperparameters": FLAG,
    "ep_schedule": {"enum": ["sequential", "parallel"]},
    "optimizer": {"enum": ["lbfgs", "em", "em-lbfgs"]},  # L-BFGS-B, K&G's EM-EP, or EM then L-BFGS-B
    "warm_start": FLAG,  # K&G footnote 11: start from the previous fold's (or same fold's) fit
    # the inputs K&G eq. 14 treats as discrete, overriding the data set's feature types
    # ([]: every input a number)
    "discrete_features": {"type": "array", "items": COUNT, "uniqueItems": True},
}
EP_MULTICLASS = {**EP, "prediction_rule": {"enum": ["eq53", "eq54", "probability"]}}

LAPLACE = {
    **COVARIANCE, "max_iter": POSITIVE_INT, "likelihood": {"enum": ["logistic", "probit"]},
    "prior_mean": {"type": "number"}, "prior_sd": {"oneOf": [POSITIVE, {"type": "null"}]},
    "n_samples": POSITIVE_INT, "burn_in": FRACTION, "n_leapfrog": POSITIVE_INT,
    "step_size": POSITIVE, "target_rejection": FRACTION,
}
LAPLACE_SOFTMAX = {**COVARIANCE, **ITERATIONS, "shared_hyperparameters": FLAG,
                   "n_draws": POSITIVE_INT}
LAPLACE_EM = {**LAPLACE_SOFTMAX, "xtol": POSITIVE, "accelerate": FLAG}
SOFTMAX_MPL = {**LAPLACE_SOFTMAX, "hyperparameter_learning": {"enum": ["mpl"]}}

MCMC_GPC = {
    **COVARIANCE, "likelihood": {"enum": ["logistic", "probit"]},
    "share_class_hyperparameters": FLAG, "prior_mean": {"type": "number"}, "prior_sd": POSITIVE,
    "jitter": NONNEGATIVE, "n_samples": POSITIVE_INT, "burn_in": FRACTION,
    "thin": POSITIVE_INT, "n_chains": POSITIVE_INT, "n_latent_updates": POSITIVE_INT,
    "n_leapfrog": POSITIVE_INT, "step_size": POSITIVE, "target_rejection": FRACTION,
    "init_spread": POSITIVE, "n_predictive_draws": POSITIVE_INT,
}

VARIATIONAL = {**COVARIANCE, **ITERATIONS}

GKM = {
    "n_sweeps": POSITIVE_INT, "burn_in": COUNT, "thin": POSITIVE_INT, "k_max": POSITIVE_INT,
    "kernel_width": {"oneOf": [{"enum": ["mean_distance", "learn"]}, POSITIVE]}, "ard": FLAG,
    "n_chains": POSITIVE_INT, "a_eta": POSITIVE, "b_eta": POSITIVE, "a_g": POSITIVE,
    "b_g": POSITIVE, "a_alpha": POSITIVE, "b_alpha": POSITIVE, "theta_step": POSITIVE,
    "theta_bounds": {"type": "array", "items": POSITIVE, "minItems": 2, "maxItems": 2},
    "jitter": NONNEGATIVE, "n_probe": COUNT,
    "gamma_prior": {"enum": ["flat", "beta_binomial"]},
    "precision_prior": {"enum": ["shape_rate", "shape_scale"]},
}


def options_schema(options: dict) -> dict:
    """The JSON schema of one method's options: only the declared keys, each of its type."""
    return {"type": "object", "additionalProperties": False, "properties": options}
