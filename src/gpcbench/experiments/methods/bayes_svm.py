"""Zhang, Dai & Jordan (2011)'s Bayesian SVM rows (ZDJ Tables 2-5): BSVM and CSVM of Mallick, Ghosh
& Ghosh (2005), by data augmentation and MCMC (:mod:`gpcbench.estimators.bayes_svm`).

ZDJ sec. 5.1's kernel (one width = the mean Euclidean distance between training points) and run
length (10,000 sweeps, 5,000 burn-in, every 5th kept); two chains by default, one in the config,
as for the ZDJ samplers. MGG's text was not available offline: docs/bayes_svm.md states the
model as reconstructed and every assumption (the CSVM's "complete" likelihood, the priors'
values), and the table notes repeat it.

Resources (one core, one chain, synthetic data of Table 2's shape, 241 inputs): about 6-8 s
at n = 300 and 18-19 s at n = 500 fit + predict, twice that with two chains.
"""

from gpcbench.experiments.options import COUNT, NONNEGATIVE, POSITIVE, POSITIVE_INT
from gpcbench.experiments.registry import MethodSpec, register

OPTIONS = {
    "n_sweeps": POSITIVE_INT, "burn_in": COUNT, "thin": POSITIVE_INT, "n_chains": POSITIVE_INT,
    "kernel_width": {"oneOf": [{"enum": ["mean_distance"]}, POSITIVE]},
    "shrinkage": {"enum": ["multiple", "single"]},
    "a_sigma": POSITIVE, "b_sigma": POSITIVE, "a_lambda": POSITIVE, "b_lambda": POSITIVE,
    "intercept_precision": POSITIVE, "n_probe": COUNT, "scale_step": NONNEGATIVE,
}
#: name -> (label, estimator class in gpcbench.estimators.bayes_svm)
VARIANTS = {"bsvm": ("BSVM", "BayesianSVMClassifier"), "csvm": ("CSVM", "CompleteSVMClassifier")}


def bayes_svm(method):
    def factory(ctx):
        from gpcbench.estimators import bayes_svm as module

        return getattr(module, VARIANTS[method][1])(random_state=ctx.seed, **ctx.options)

    return factory


for _method, (_label, _) in VARIANTS.items():
    register(MethodSpec(name=_method, label=_label, factory=bayes_svm(_method), options=OPTIONS))
