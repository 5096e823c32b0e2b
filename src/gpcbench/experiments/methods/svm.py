"""SVM rows of Kim & Ghahramani (2006) Tables 4, 5 and 7, and scikit-learn's Laplace GPC."""

from gpcbench.baselines.sklearn_gpc import make_sklearn_gpc
from gpcbench.baselines.svm import TwoLevelGridSVM
from gpcbench.experiments.registry import MethodSpec, register

register(MethodSpec(
    name="svm-cv-soft", label="SVM-CV(soft)",
    factory=lambda ctx: TwoLevelGridSVM(search="C,l", cv_folds=ctx.options.get("cv_folds", 5),
                                        random_state=ctx.seed, n_jobs=ctx.n_jobs),
    modules=("gpcbench.baselines.svm",),
    probabilistic=False,
))
register(MethodSpec(
    name="svm-cv-hard", label="SVM-CV(hard)",
    factory=lambda ctx: TwoLevelGridSVM(search="l", cv_folds=ctx.options.get("cv_folds", 5),
                                        random_state=ctx.seed, n_jobs=ctx.n_jobs),
    modules=("gpcbench.baselines.svm",),
    probabilistic=False,
))
register(MethodSpec(
    name="sklearn-gpc", label="sklearn-GPC",
    # Laplace GPC, ARD RBF times a constant, one-vs-rest for multiclass (scikit-learn).
    factory=lambda ctx: make_sklearn_gpc(len(ctx.feature_types), ctx.seed, ctx.n_jobs),
    modules=("gpcbench.baselines.sklearn_gpc",),
))
