"""Zhang, Dai & Jordan (2011) rows: FBGKM, BGKM and SGPC (ZDJ Tables 2, 10, 13).

ZDJ's settings (ZDJ sec. 5.1) are the estimators' defaults: probit link, Gaussian RBF kernel
with width = the mean Euclidean distance between training points, a_eta = 1, b_eta = 0.1,
a_g = 4, b_g = 0.1 (shape, rate), 10,000 sweeps, 5,000 burn-in, every 5th sweep kept, the flat
prior p(gamma) = 2^-n on the active set (gamma_prior; ZDJ eq. 10 with a_alpha = b_alpha = 1 is
the option, docs/zhang2011_sampler.md says why) and k_max = 200 (capped at n); two independent
chains (their 2 x 1,000 kept draws pooled), which the config sets to one, ZDJ sec. 3.3's
T = 1,000 kept draws. The config's method options are passed to the estimator (e.g. n_sweeps,
k_max, n_chains). Data sets with more than two classes run the ZDJ sec. 6.2 multiclass sampler
(centred auxiliary matrix, one active set shared by the classes) through the same estimators.
FBGKM and SGPC of a fold sample their chains once (ZDJ sec. 4.2: SGPC is the FBGKM sampler with
another predictor): the SGPC job reads the FBGKM job's result of its fold (an upstream
dependency), takes its seed when their options agree, and fits from the chains that job left
in the cache of :mod:`gpcbench.experiments.shared_chains`, whose fit seconds the reports add to
SGPC's time.

Resources (one core, benchmarks/bench_mcmc.py, per chain of 10,000 sweeps): FBGKM / SGPC
about 10 s at (n, k_max) = (300, 100), 50 s at (500, 200), 3 min at (2000, 200), growing as
n k_max^2 (Adult2, n = 20,000: about half an hour per chain); SGPC's prediction refactors
g K_gammagamma + K_gamma'K_gamma per kept draw (about the cost of 1,000 sweeps). BGKM has all
n points active: binary at a fixed width it runs gpcbench.mcmc.bgkm, O(n^2) per sweep after
one eigendecomposition (benchmarks/bench_bgkm.py: about 3 s per chain at n = 300, 25 s at
n = 800); multiclass or with a learned width it keeps the generic sampler, O(n^3) per sweep
(about 35 s per chain at n = 300, 9 min at n = 800); run it on ZDJ Table 2's data sets only.
Memory: O(n k_max) per chain plus the kept draws (O(k_max) each, O(J k_max) with J classes).
Multiclass, (n, k_max) = (300, 100): J = 3 about as fast per sweep as binary, J = 6 about
1.1x slower; glass (n = 192, J = 6, paper defaults) about 35 s per fold for FBGKM, 85 s for
SGPC (its prediction refactors per kept draw).
"""

from gpcbench.experiments.options import GKM
from gpcbench.experiments.registry import MethodSpec, register

VARIANTS = {  # name -> (label, estimator class name)
    "fbgkm": ("FBGKM", "FBGKMClassifier"),
    "bgkm": ("BGKM", "BGKMClassifier"),
    "sgpc": ("SGPC", "SGPCClassifier"),
}


def gkm(method):
    def factory(ctx):
        from gpcbench.estimators import gkm as estimators

        cls = getattr(estimators, VARIANTS[method][1])
        return cls(random_state=ctx.seed, **ctx.options)

    return factory


def shared_gkm(method):
    """FBGKM or SGPC on the fold's one set of chains (gpcbench.experiments.shared_chains)."""
    def factory(ctx):
        from gpcbench.experiments.shared_chains import CLASSES

        return CLASSES[method](random_state=chain_seed(ctx), **ctx.options)

    return factory


def chain_seed(ctx):
    """The seed of the fold's FBGKM job when this job's upstream holds its result with this
    job's options (SGPC's), else this job's own."""
    for record in ctx.upstream.values():
        if record.get("options") == ctx.options:
            return record["seed"]
    return ctx.seed


def fbgkm_of_the_fold(fold, options):
    return [("fbgkm", fold)]


SHARED_CHAINS = {"fbgkm": lambda fold, options: [], "sgpc": fbgkm_of_the_fold}  # -> upstream

for _method, (_label, _) in VARIANTS.items():
    if _method in SHARED_CHAINS:
        register(MethodSpec(name=_method, label=_label, factory=shared_gkm(_method),
                            options=GKM, upstream=SHARED_CHAINS[_method]))
    else:
        register(MethodSpec(name=_method, label=_label, factory=gkm(_method), options=GKM))
