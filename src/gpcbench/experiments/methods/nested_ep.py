"""Nested EP row, a method of none of the papers: the multinomial probit GP classifier of
Riihimäki, Jylänki & Vehtari (2013) with nested EP and evidence-maximising hyperparameters
(:class:`~gpcbench.estimators.nested_ep.NestedEPMulticlassClassifier`).

* ``gpc-nested-ep``: one ARD covariance of K&G eq. 13 per class (as W&B's softmax row), learned
  by L-BFGS-B on the nested-EP log marginal likelihood from W&B's starting values on every
  fold; predictive probabilities by the inner EP (the paper's). It is set beside K&G Table 7's
  class-difference EP (the same multinomial probit model when K&G's covariance is shared) and
  W&B Table 3's softmax models. Options from the config are passed to the estimator.
"""

from gpcbench.experiments.methods.ep import discrete_mask
from gpcbench.experiments.options import COVARIANCE, FLAG, ITERATIONS, POSITIVE, POSITIVE_INT
from gpcbench.experiments.registry import MethodSpec, register

NESTED_EP = {
    **COVARIANCE, **ITERATIONS, "learn_hyperparameters": FLAG, "shared_hyperparameters": FLAG,
    "damping": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
    "max_sweeps": POSITIVE_INT, "ep_tol": POSITIVE, "predictive": {"enum": ["inner-ep", "orthant"]},
}


def gpc_nested_ep(ctx):
    from gpcbench.estimators.nested_ep import NestedEPMulticlassClassifier

    options = {"ard": True, **ctx.options}
    return NestedEPMulticlassClassifier(discrete_features=discrete_mask(ctx),
                                        random_state=ctx.seed, **options)


register(MethodSpec(name="gpc-nested-ep", label="Nested EP (not in the paper)",
                    factory=gpc_nested_ep, options=NESTED_EP))
