"""Laplace GPC rows: Williams & Barber (1998), W&B Tables 1-2, and Kim & Ghahramani (2006)
GPC-L(m,soft).

All use W&B's model: logistic likelihood, one inverse lengthscale per feature (ARD), no latent
noise (theta2 = 0), independent N(-3, 3^2) priors on the log hyperparameters and W&B's initial
values (log v0 = 0, log w_l = -2, log theta1 at the prior mean -3). GPC-L(m,soft) is the same
MPL fit under K&G's label: Laplace's method of [3] with an optimisation scheme for
the hyperparameters, multiple lengthscales and a soft (sigmoid) boundary (their text after
K&G Table 5). The config's method options are passed to the estimator (e.g. n_samples, n_leapfrog).
"""

from gpcbench.experiments.options import LAPLACE
from gpcbench.experiments.registry import MethodSpec, register

VARIANTS = {  # name -> (label, hyperparameter learning)
    "gpc-l-mpl": ("Gaussian Process (Laplace Approximation, MPL)", "mpl"),
    "gpc-l-hmc": ("Gaussian Process (Laplace Approximation, HMC)", "hmc"),
    "gpc-l-m-soft": ("GPC-L(m,soft)", "mpl"),
}


def gpc_l(method):
    def factory(ctx):
        from gpcbench.estimators.laplace import LaplaceGaussianProcessClassifier

        return LaplaceGaussianProcessClassifier(
            ard=True, hyperparameter_learning=VARIANTS[method][1],
            discrete_features=[kind == "discrete" for kind in ctx.feature_types],
            random_state=ctx.seed, **ctx.options)

    return factory


for _method, (_label, _) in VARIANTS.items():
    register(MethodSpec(name=_method, label=_label, factory=gpc_l(_method),
                        options=LAPLACE))
