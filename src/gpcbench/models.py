"""Public scikit-learn estimators of gpcbench (import them from here).

* :class:`EPGaussianProcessClassifier`: binary GPC with EP inference and EM-EP learning
  (Kim & Ghahramani 2006, K&G secs. 2-3); :func:`gpc_ep_variant` configures K&G's variants.
* :class:`EPGaussianProcessRegressor`: GP regression through the same EP machinery.
* :class:`LaplaceGaussianProcessClassifier`: binary GPC with Laplace's approximation and MPL or
  HMC hyperparameters (Williams & Barber 1998).
* :class:`VariationalGaussianProcessClassifier`: binary GPC with the logistic likelihood and
  Gibbs & MacKay's (2000) variational lower or upper evidence bound (GPC-VL / GPC-VU rows).
* :class:`MCMCGaussianProcessClassifier`: binary or multiclass GPC with latents and
  hyperparameters integrated by MCMC, Neal's method in Williams & Barber (1998).
* :class:`FBGKMClassifier`, :class:`BGKMClassifier`, :class:`SGPCClassifier`: probit
  generalized kernel models with a Silverman g-prior, sampled by reversible-jump MCMC, and the
  sparse GP classifier built on the same chain (Zhang, Dai & Jordan 2011).
* :class:`MulticlassEPGaussianProcessClassifier`: multiclass EP / EM-EP in the class-difference
  formulation (K&G sec. 4).
* :class:`NestedEPMulticlassClassifier`: multiclass GPC with the multinomial probit likelihood
  and nested EP (Riihimäki, Jylänki & Vehtari 2013; not a method of the benchmark's papers).
* :class:`SoftmaxLaplaceGaussianProcessClassifier`: multiclass softmax GPC with Laplace's
  approximation and MPL hyperparameters (Williams & Barber 1998, W&B sec. 4).
* :class:`LaplaceEMGaussianProcessClassifier`: the same model learned by Laplace-EM (Cho, Kim &
  Park 2015).
* :class:`FICGaussianProcessClassifier`: sparse probit GPC with the FIC approximation (Snelson &
  Ghahramani 2006) and EP, ZDJ's SGP+FIC+EP / SGP+FIC+KL rows; :class:`FICMCMCClassifier` the
  same model by Gibbs sampling (SGP+FIC+MCMC).
* :class:`IVMClassifier`: the informative vector machine (Lawrence, Seeger & Herbrich 2003).
* :class:`ImportVectorMachine`: the import vector machine (Zhu & Hastie 2005), greedy kernel
  logistic regression, ZDJ Table 13's IVM row.

Each estimator lives in the module of its method family; this module only gathers them, so
adding an estimator here changes no method's code hash (no fold job reruns).
"""

from gpcbench.estimators.ep import (
    EPGaussianProcessClassifier,
    EPGaussianProcessRegressor,
    gpc_ep_variant,
)
from gpcbench.estimators.ep_multiclass import MulticlassEPGaussianProcessClassifier
from gpcbench.estimators.gkm import BGKMClassifier, FBGKMClassifier, SGPCClassifier
from gpcbench.estimators.import_vm import ImportVectorMachine
from gpcbench.estimators.ivm import IVMClassifier
from gpcbench.estimators.laplace import LaplaceGaussianProcessClassifier
from gpcbench.estimators.laplace_softmax import (
    LaplaceEMGaussianProcessClassifier,
    SoftmaxLaplaceGaussianProcessClassifier,
)
from gpcbench.estimators.mcmc_gpc import MCMCGaussianProcessClassifier
from gpcbench.estimators.nested_ep import NestedEPMulticlassClassifier
from gpcbench.estimators.sparse_gp import FICGaussianProcessClassifier
from gpcbench.estimators.sparse_gp_mcmc import FICMCMCClassifier
from gpcbench.estimators.variational import VariationalGaussianProcessClassifier

__all__ = [
    "BGKMClassifier",
    "FBGKMClassifier",
    "SGPCClassifier",
    "EPGaussianProcessClassifier",
    "EPGaussianProcessRegressor",
    "FICGaussianProcessClassifier",
    "FICMCMCClassifier",
    "IVMClassifier",
    "ImportVectorMachine",
    "LaplaceEMGaussianProcessClassifier",
    "LaplaceGaussianProcessClassifier",
    "MCMCGaussianProcessClassifier",
    "MulticlassEPGaussianProcessClassifier",
    "NestedEPMulticlassClassifier",
    "SoftmaxLaplaceGaussianProcessClassifier",
    "VariationalGaussianProcessClassifier",
    "gpc_ep_variant",
]
