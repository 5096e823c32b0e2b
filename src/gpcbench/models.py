"""Public scikit-learn estimators of gpcbench (import them from here).

* :class:`EPGaussianProcessClassifier`: binary GPC with EP inference and EM-EP learning
  (Kim & Ghahramani 2006, sections 2-3); :func:`gpc_ep_variant` configures the paper's variants.
* :class:`EPGaussianProcessRegressor`: GP regression through the same EP machinery.
* :class:`LaplaceGaussianProcessClassifier`: binary GPC with Laplace's approximation and MPL or
  HMC hyperparameters (Williams & Barber 1998).
* :class:`MulticlassEPGaussianProcessClassifier`: multiclass EP / EM-EP in the class-difference
  formulation (section 4).

Each estimator lives in the module of its method family; this module only gathers them, so
adding an estimator here changes no method's code hash (no fold job reruns).
"""

from gpcbench.estimators.ep import (
    EPGaussianProcessClassifier,
    EPGaussianProcessRegressor,
    gpc_ep_variant,
)
from gpcbench.estimators.laplace import LaplaceGaussianProcessClassifier
from gpcbench.multiclass import MulticlassEPGaussianProcessClassifier

__all__ = [
    "EPGaussianProcessClassifier",
    "EPGaussianProcessRegressor",
    "LaplaceGaussianProcessClassifier",
    "MulticlassEPGaussianProcessClassifier",
    "gpc_ep_variant",
]
