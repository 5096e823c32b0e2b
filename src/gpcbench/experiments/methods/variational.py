"""GPC-VL(m,soft) and GPC-VU(m,soft) rows of Kim & Ghahramani (2006) Tables 1, 4 and 5.

Gibbs & MacKay's (2000) variational classifiers with the section 3.5.2 covariance: ARD
(l_m = 1/sigma_m^2), no latent noise theta2, hyperparameters maximising the lower bound; the
rows differ in the bound that infers the latent values. The paper gives no initial values for
these rows, so every fold starts from footnote 11's (theta0 = 1, theta1 = 1e-4, l_m = 0.05).
"""

from gpcbench.experiments.methods.ep import discrete_mask
from gpcbench.experiments.registry import MethodSpec, register

BOUND_ROWS = {"gpc-vl-m-soft": ("GPC-VL(m,soft)", "lower"),
              "gpc-vu-m-soft": ("GPC-VU(m,soft)", "upper")}
VARIATIONAL_MODULES = ("gpcbench.covariance", "gpcbench.gaussian",
                       "gpcbench.inference.variational", "gpcbench.learning.variational",
                       "gpcbench.estimators.variational")


def variational(bound):
    def factory(ctx):
        from gpcbench.estimators.variational import VariationalGaussianProcessClassifier

        return VariationalGaussianProcessClassifier(
            bound=bound, discrete_features=discrete_mask(ctx), **ctx.options)

    return factory


for _method, (_label, _bound) in BOUND_ROWS.items():
    register(MethodSpec(name=_method, label=_label, factory=variational(_bound),
                        modules=VARIATIONAL_MODULES))
