"""GPC-VL(m,soft) and GPC-VU(m,soft) rows of Kim & Ghahramani (2006), K&G Tables 1, 4 and 5.

Gibbs & MacKay's (2000) variational classifiers with the K&G sec. 3.5.2 covariance: ARD
(l_m = 1/sigma_m^2), no latent noise theta2, hyperparameters maximising the lower bound; the
rows differ in the bound that infers the latent values. K&G gives no initial values for
these rows, so every GPC-VL fold starts from K&G footnote 11's (theta0 = 1, theta1 = 1e-4,
l_m = 0.05); GPC-VU takes the hyperparameters GPC-VL learned on the same fold (an upstream
dependency: the same optimum, computed once).
"""

from gpcbench.experiments.methods.ep import discrete_mask, fitted
from gpcbench.experiments.options import ITERATIONS, VARIATIONAL
from gpcbench.experiments.registry import MethodSpec, register

LOWER, UPPER = "gpc-vl-m-soft", "gpc-vu-m-soft"

def lower_bound_rows(ctx):
    from gpcbench.estimators.variational import VariationalGaussianProcessClassifier

    return VariationalGaussianProcessClassifier(
        bound="lower", discrete_features=discrete_mask(ctx), **ctx.options)


def upper_bound_rows(ctx):
    from gpcbench.estimators.variational import VariationalGaussianProcessClassifier

    learned = fitted(ctx, LOWER, ctx.fold)
    if learned is None:
        raise RuntimeError("GPC-VL(m,soft) has no fitted hyperparameters on this fold")
    return VariationalGaussianProcessClassifier(
        **learned, bound="upper", learn_hyperparameters=False,
        discrete_features=discrete_mask(ctx), **ctx.options)


register(MethodSpec(name=LOWER, label="GPC-VL(m,soft)", factory=lower_bound_rows,
                    options=VARIATIONAL))
register(MethodSpec(name=UPPER, label="GPC-VU(m,soft)", factory=upper_bound_rows,
                    upstream=lambda fold, options: [(LOWER, fold)], options=ITERATIONS))
