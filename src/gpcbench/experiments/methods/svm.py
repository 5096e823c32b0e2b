"""SVM rows of Kim & Ghahramani (2006), K&G Tables 4, 5 and 7, and scikit-learn's Laplace GPC.

Factories import their estimators lazily, so a fold job loads only its own method's code.
"""

from gpcbench.experiments.options import SVM
from gpcbench.experiments.registry import MethodSpec, register


def svm_cv(search):
    def factory(ctx):
        from gpcbench.baselines.svm import TwoLevelGridSVM

        return TwoLevelGridSVM(search=search, cv_folds=ctx.options.get("cv_folds", 5),
                               random_state=ctx.seed, n_jobs=ctx.n_jobs)

    return factory


def sklearn_gpc(ctx):
    # Laplace GPC, ARD RBF times a constant, one-vs-rest for multiclass (scikit-learn).
    from gpcbench.baselines.sklearn_gpc import make_sklearn_gpc

    return make_sklearn_gpc(len(ctx.feature_types), ctx.seed, ctx.n_jobs)


register(MethodSpec(name="svm-cv-soft", label="SVM-CV(soft)", factory=svm_cv("C,l"),
                    probabilistic=False, options=SVM))
register(MethodSpec(name="svm-cv-hard", label="SVM-CV(hard)", factory=svm_cv("l"),
                    probabilistic=False, options=SVM))
register(MethodSpec(name="sklearn-gpc", label="sklearn-GPC", factory=sklearn_gpc,
                    ))
