"""LDA, 1-NN and k-NN rows of the papers' tables (Kim & Ghahramani footnote 17)."""

from gpcbench.baselines.lda import make_lda
from gpcbench.baselines.neighbors import CrossValidatedKNN, make_one_nn
from gpcbench.experiments.registry import MethodSpec, register

register(MethodSpec(
    name="lda", label="LDA",
    factory=lambda ctx: make_lda(),
    modules=("gpcbench.baselines.lda",),
))
register(MethodSpec(
    name="1nn", label="1-NN",
    factory=lambda ctx: make_one_nn(),
    modules=("gpcbench.baselines.neighbors",),
    probabilistic=False,
))
register(MethodSpec(
    name="knn", label="k-NN",
    factory=lambda ctx: CrossValidatedKNN(
        k_grid=ctx.options.get("k_grid", range(1, 31)), cv_folds=ctx.options.get("cv_folds", 5),
        random_state=ctx.seed, n_jobs=ctx.n_jobs),
    modules=("gpcbench.baselines.neighbors",),
    probabilistic=False,
))
