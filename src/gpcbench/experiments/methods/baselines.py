"""LDA, 1-NN and k-NN rows of the papers' tables (K&G footnote 17).

Factories import their estimators lazily, so a fold job loads only its own method's code.
"""

from gpcbench.experiments.options import KNN
from gpcbench.experiments.registry import MethodSpec, register


def lda(ctx):
    from gpcbench.baselines.lda import make_lda

    return make_lda()


def one_nn(ctx):
    from gpcbench.baselines.neighbors import make_one_nn

    return make_one_nn()


def knn(ctx):
    from gpcbench.baselines.neighbors import CrossValidatedKNN

    return CrossValidatedKNN(k_grid=ctx.options.get("k_grid", range(1, 31)),
                             cv_folds=ctx.options.get("cv_folds", 5),
                             tie_break=ctx.options.get("tie_break", "smallest_class"),
                             random_state=ctx.seed, n_jobs=ctx.n_jobs)


register(MethodSpec(name="lda", label="LDA", factory=lda))
register(MethodSpec(name="1nn", label="1-NN", factory=one_nn,
                    probabilistic=False))
register(MethodSpec(name="knn", label="k-NN", factory=knn,
                    probabilistic=False, options=KNN))
