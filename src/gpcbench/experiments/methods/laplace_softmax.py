"""Softmax Laplace rows: Williams & Barber (1998), W&B Table 3, and Cho, Kim & Park (2015),
CKP sec. 5.

* ``gpc-softmax-laplace-mpl``: W&B's multiclass GP, "Gaussian Process (LA, MPL)" in their
  W&B Table 3: one ARD covariance per class (W&B sec. 4), log w_l started at -2 and log v0 at 0,
  maximum penalised likelihood with N(-3, 3^2) priors on the log hyperparameters (W&B sec. 5).
* ``gpc-laplace-em``: CKP's Laplace-EM (per-class covariances, CKP eq. 3; one shared
  inverse lengthscale per class, as their two-parameter Theta^c suggests), same start.

Both predict by averaging the softmax over 1000 draws seeded by the fold's seed. Options
from the config are passed to the estimator (e.g. ``max_iter``, ``tol``, ``ard``).
"""

from gpcbench.experiments.methods.ep import discrete_mask
from gpcbench.experiments.options import LAPLACE_EM, SOFTMAX_MPL
from gpcbench.experiments.registry import MethodSpec, register


def softmax_laplace_mpl(ctx):
    from gpcbench.estimators.laplace_softmax import SoftmaxLaplaceGaussianProcessClassifier

    options = {"ard": True, **ctx.options}
    return SoftmaxLaplaceGaussianProcessClassifier(
        discrete_features=discrete_mask(ctx), random_state=ctx.seed, **options)


def laplace_em(ctx):
    from gpcbench.estimators.laplace_softmax import LaplaceEMGaussianProcessClassifier

    return LaplaceEMGaussianProcessClassifier(
        discrete_features=discrete_mask(ctx), random_state=ctx.seed, **ctx.options)


register(MethodSpec(name="gpc-softmax-laplace-mpl", label="Gaussian Process (LA, MPL)",
                    factory=softmax_laplace_mpl,
                    options=SOFTMAX_MPL, decision_regions=True))
register(MethodSpec(name="gpc-laplace-em", label="GP Laplace-EM", factory=laplace_em,
                    options=LAPLACE_EM, decision_regions=True))
