"""Public scikit-learn estimators of gpcbench (import them from here).

* :class:`EPGaussianProcessClassifier`: binary GPC with EP inference and EM-EP learning
  (Kim & Ghahramani 2006, sections 2-3); :func:`gpc_ep_variant` configures the paper's variants.
* :class:`EPGaussianProcessRegressor`: GP regression through the same EP machinery.
* :class:`MulticlassEPGaussianProcessClassifier`: multiclass EP / EM-EP in the class-difference
  formulation (section 4).
* :class:`SoftmaxLaplaceGaussianProcessClassifier`: multiclass softmax GPC with Laplace's
  approximation and MPL hyperparameters (Williams & Barber 1998, sec. 4).
* :class:`LaplaceEMGaussianProcessClassifier`: the same model learned by Laplace-EM (Cho, Kim &
  Park 2015).

Each estimator lives in the module of its method family; this module only gathers them, so
adding an estimator here changes no method's code hash (no fold job reruns).
"""

from gpcbench.estimators.ep import (
    EPGaussianProcessClassifier,
    EPGaussianProcessRegressor,
    gpc_ep_variant,
)
from gpcbench.estimators.laplace_softmax import (
    LaplaceEMGaussianProcessClassifier,
    SoftmaxLaplaceGaussianProcessClassifier,
)
from gpcbench.multiclass import MulticlassEPGaussianProcessClassifier

__all__ = [
    "EPGaussianProcessClassifier",
    "EPGaussianProcessRegressor",
    "LaplaceEMGaussianProcessClassifier",
    "MulticlassEPGaussianProcessClassifier",
    "SoftmaxLaplaceGaussianProcessClassifier",
    "gpc_ep_variant",
]
