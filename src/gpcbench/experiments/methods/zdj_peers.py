"""Zhang, Dai & Jordan (2011)'s comparison methods: SGP+FIC+EP (ZDJ Tables 10-11), SGP+FIC+MCMC
(ZDJ Tables 10-12), SGP+FIC+KL (ZDJ Tables 8-9), IVM (ZDJ Table 13) and Table 10's SVM. SGP+FIC: sparse GP
classification with the FIC approximation (Snelson & Ghahramani 2006), probit likelihood and EP
(:mod:`gpcbench.estimators.sparse_gp`).

SGP+FIC+EP: ZDJ sec. 5.1's kernel, one width = the mean Euclidean distance between training
points; k_max = 200 inducing inputs, a random subset of the training inputs drawn from the
fold's seed (ZDJ sec. 5.3: "we fix the size of active set k_max to 200"). SGP+FIC+KL: one width
per input learned by maximising the FIC EP evidence (L-BFGS-B, exact gradient), k_max = 100 (ZDJ
sec. 5.3; the paper sampled this model by MCMC, see the table notes). SGP+FIC+MCMC: the
SGP+FIC+EP model (same width, same inducing draw) sampled by Albert & Chib's Gibbs sampler with
ZDJ sec. 5.1's 10,000 sweeps, 5,000 burn-in, every 5th kept (the config runs one chain, as for
the ZDJ samplers; the estimator's default is two; :mod:`gpcbench.estimators.sparse_gp_mcmc`).
IVM: ZDJ's published IVM numbers are Zhu & Hastie's (2005) import vector machine
(ZDJ sec. 5.4): kernel logistic regression on greedily imported training rows, lambda chosen on a
tuning split along a decreasing path (:mod:`gpcbench.estimators.import_vm`), with the same fixed kernel
plus a bias variance of 1 (the factory's default; without it the latent falls to 0 away from the
import vectors, Table 13's notes). Informative VM (Lawrence et al.): the informative vector
machine of Lawrence, Seeger & Herbrich (2003), greedy ADF selection of k_max = 200 active points
(capped at n) with the same fixed kernel plus a bias variance of 1
(:mod:`gpcbench.estimators.ivm`), a different method, kept under its own name. SVM (Table 10):
ZDJ's own, so sec. 5.1's kernel at the mean distance, C = 1 (:mod:`gpcbench.baselines.svm_mean_width`).

Resources (one core, synthetic data of the paper's sizes, benchmarks/bench_fic.py for a sweep):
SGP+FIC+EP about 0.3 s per fit at n = 4,000, m = 200 (EP converges in ~6-10 sweeps of ~10-30 ms;
the n x m kernel and the mean distance dominate); SGP+FIC+KL about 1-10 s at n = 1,000, m = 100
(tens of EP evidence evaluations); SGP+FIC+MCMC about 35 s per fit at n = 4,000, m = 200
(2 chains x 10,000 sweeps of O(n m); half that for one chain); the informative VM well under a
second at n = 400, d = 200 (O(n d^2)); the import VM 4-12 s at n = 400 (eleven lambdas on the
320-row fitting split, then the refit; O(n^2 q) a greedy step with q imports, 10-160 of them).
Memory O(n m) (the import VM: O(n^2), its kernel matrix).
"""

from gpcbench.experiments.options import (COUNT, FLAG, NONNEGATIVE, POSITIVE, POSITIVE_INT,
                                          PROPER_FRACTION)
from gpcbench.experiments.registry import MethodSpec, register

#: A kernel width fixed at ZDJ sec. 5.1's mean distance or given (no learned width).
FIXED_WIDTH = {"oneOf": [{"enum": ["mean_distance"]}, POSITIVE]}
FIC = {
    "k_max": POSITIVE_INT, "ard": FLAG, "jitter": NONNEGATIVE,
    "kernel_width": {"oneOf": [{"enum": ["mean_distance", "learn"]}, POSITIVE]},
    "max_sweeps": POSITIVE_INT, "ep_tol": POSITIVE, "site_tol": POSITIVE,
    "max_iter": POSITIVE_INT, "tol": POSITIVE,
}
#: name -> (label, estimator defaults the config's options override)
VARIANTS = {
    "sgp-fic-ep": ("SGP+FIC+EP", {"k_max": 200, "kernel_width": "mean_distance"}),
    "sgp-fic-kl": ("SGP+FIC+KL", {"k_max": 100, "kernel_width": "learn", "ard": True}),
}


def sgp_fic(method):
    def factory(ctx):
        from gpcbench.estimators.sparse_gp import FICGaussianProcessClassifier

        return FICGaussianProcessClassifier(random_state=ctx.seed,
                                            **{**VARIANTS[method][1], **ctx.options})

    return factory


def sgp_fic_mcmc(ctx):
    from gpcbench.estimators.sparse_gp_mcmc import FICMCMCClassifier

    return FICMCMCClassifier(random_state=ctx.seed, **ctx.options)


def informative_vm(ctx):
    from gpcbench.estimators.ivm import IVMClassifier

    return IVMClassifier(**ctx.options)


#: Import VM defaults the config's options override: ZDJ's kernel plus a bias component.
IMPORT_VM = {"bias_variance": 1.0}


def import_vm(ctx):
    from gpcbench.estimators.import_vm import ImportVectorMachine

    return ImportVectorMachine(random_state=ctx.seed, **{**IMPORT_VM, **ctx.options})


def mean_width_svm(ctx):
    from gpcbench.baselines.svm_mean_width import MeanWidthSVM

    return MeanWidthSVM(**ctx.options)


for _method, (_label, _) in VARIANTS.items():
    register(MethodSpec(name=_method, label=_label, factory=sgp_fic(_method), options=FIC))
register(MethodSpec(name="sgp-fic-mcmc", label="SGP+FIC+MCMC", factory=sgp_fic_mcmc, options={
    "k_max": POSITIVE_INT, "jitter": NONNEGATIVE, "n_sweeps": POSITIVE_INT, "burn_in": COUNT,
    "thin": POSITIVE_INT, "n_chains": POSITIVE_INT,
    "kernel_width": FIXED_WIDTH}))
register(MethodSpec(name="ivm", label="IVM", factory=import_vm, options={
    "kernel_width": FIXED_WIDTH, "bias_variance": NONNEGATIVE,
    "lambdas": {"type": "array", "items": POSITIVE, "minItems": 1},
    "tuning_fraction": PROPER_FRACTION, "epsilon": NONNEGATIVE, "delta_k": POSITIVE_INT,
    "max_imports": POSITIVE_INT}))
register(MethodSpec(name="informative-vm", label="Informative VM (Lawrence et al.)",
                    factory=informative_vm, options={
                        "k_max": POSITIVE_INT, "bias_variance": NONNEGATIVE,
                        "kernel_width": FIXED_WIDTH}))
register(MethodSpec(name="svm-mean-width", label="SVM(C = 1, θ = mean distance)",
                    factory=mean_width_svm, probabilistic=False, options={"C": POSITIVE}))
