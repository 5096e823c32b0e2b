"""Fully MCMC GPC row "Gaussian Process (Neal's method)" of Williams & Barber (1998),
W&B Tables 1-3.

W&B ran Neal's fbm code (W&B Appendix E); here the same model class is sampled by
:class:`~gpcbench.estimators.mcmc_gpc.MCMCGaussianProcessClassifier`: logistic likelihood
(softmax for glass, one latent function per class with shared hyperparameters as in Neal's
code), one inverse lengthscale per feature, no latent noise, Neal's jitter 0.1, W&B's
N(-3, 3^2) log-hyperparameter priors (fbm used Gamma priors) and W&B's initial values. The
config's method options (n_samples, n_latent_updates, ...) are passed to the estimator.
"""

from gpcbench.experiments.options import MCMC_GPC
from gpcbench.experiments.registry import MethodSpec, register


def factory(ctx):
    from gpcbench.estimators.mcmc_gpc import MCMCGaussianProcessClassifier

    return MCMCGaussianProcessClassifier(
        ard=True, discrete_features=[kind == "discrete" for kind in ctx.feature_types],
        random_state=ctx.seed, **ctx.options)


register(MethodSpec(name="gpc-mcmc", label="Gaussian Process (Neal's method)", factory=factory,
                    options=MCMC_GPC))
