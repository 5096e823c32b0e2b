"""Peer Gaussian-process libraries as table rows: GPy's EP and Laplace classifiers, ARD RBF
kernel, GPy's own optimiser (binary tables only: GPy has no multiclass classifier).

Factories import their estimators lazily, so a fold job loads only its own method's code.
"""

from gpcbench.experiments.options import POSITIVE, POSITIVE_INT
from gpcbench.experiments.registry import MethodSpec, register

GPY = {"max_iters": POSITIVE_INT, "variance": POSITIVE, "lengthscale": POSITIVE}


def gpy_ep(ctx):
    from gpcbench.baselines.gpy import GPyClassifier

    return GPyClassifier(inference="ep", random_state=ctx.seed, **ctx.options)


def gpy_laplace(ctx):
    from gpcbench.baselines.gpy import GPyClassifier

    return GPyClassifier(inference="laplace", random_state=ctx.seed, **ctx.options)


register(MethodSpec(name="gpy-ep", label="GPy EP", factory=gpy_ep, options=GPY))
register(MethodSpec(name="gpy-laplace", label="GPy Laplace", factory=gpy_laplace, options=GPY))
