"""scikit-learn's Laplace GPC (the ``sklearn-GPC`` rows), recording its fitted kernels."""

import numpy as np
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel


class RecordedGPC(GaussianProcessClassifier):
    """GaussianProcessClassifier (ARD RBF x constant, one-vs-rest) exposing
    ``hyperparameters_`` (the fitted kernel of each binary problem) for the fold record."""

    @property
    def hyperparameters_(self) -> dict:
        estimator = self.base_estimator_
        kernels = ([e.kernel_ for e in estimator.estimators_]
                   if hasattr(estimator, "estimators_") else [estimator.kernel_])
        return {f"kernel_{k}": str(kernel) for k, kernel in enumerate(kernels)}


def make_sklearn_gpc(n_features: int, seed: int, n_jobs: int) -> RecordedGPC:
    return RecordedGPC(kernel=ConstantKernel(1.0) * RBF(length_scale=np.ones(n_features)),
                       multi_class="one_vs_rest", random_state=seed, n_jobs=n_jobs)
