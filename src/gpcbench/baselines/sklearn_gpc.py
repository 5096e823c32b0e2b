"""scikit-learn's Laplace GPC (the ``sklearn-GPC`` rows), recording its fitted kernels and
whether its hyperparameter optimiser converged."""

import warnings

import numpy as np
import scipy.optimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.gaussian_process import GaussianProcessClassifier
from sklearn.gaussian_process.kernels import RBF, ConstantKernel


class RecordingLBFGS:
    """scikit-learn's default hyperparameter optimiser (the same L-BFGS-B call), keeping the
    termination of every run, which scikit-learn discards after a warning.

    Attributes
    ----------
    runs : list of (int, str)
        SciPy's ``status`` (0 = converged) and ``message`` of each run since the last
        :meth:`RecordedGPC.fit`, in call order.
    """

    def __init__(self):
        self.runs = []

    def __call__(self, obj_func, initial_theta, bounds):
        """Minimise ``obj_func`` (value and gradient) from ``initial_theta`` within ``bounds``.

        Returns
        -------
        theta_opt : ndarray
            The final log hyperparameters.
        func_min : float
            ``obj_func`` at ``theta_opt``.
        """
        result = scipy.optimize.minimize(obj_func, initial_theta, method="L-BFGS-B", jac=True,
                                         bounds=bounds)
        self.runs.append((int(result.status), str(result.message)))
        if result.status != 0:
            warnings.warn(f"lbfgs failed to converge after {result.nit} iteration(s) "
                          f"(status={result.status}): {result.message}", ConvergenceWarning,
                          stacklevel=2)
        return result.x, result.fun


class RecordedGPC(GaussianProcessClassifier):
    """GaussianProcessClassifier (ARD RBF x constant, one-vs-rest) exposing
    ``hyperparameters_`` (the fitted kernel of each binary problem) and ``converged_`` for the
    fold record."""

    def fit(self, X, y):
        """Fit as scikit-learn does, after forgetting a :class:`RecordingLBFGS` optimiser's runs
        of an earlier fit (the binary problems' optimisers are this one or copies of it)."""
        if isinstance(self.optimizer, RecordingLBFGS):
            self.optimizer.runs.clear()
        return super().fit(X, y)

    def _binary_estimators(self) -> list:
        estimator = self.base_estimator_
        return list(getattr(estimator, "estimators_", [estimator]))

    @property
    def hyperparameters_(self) -> dict:
        return {f"kernel_{k}": str(e.kernel_) for k, e in enumerate(self._binary_estimators())}

    @property
    def converged_(self) -> bool:
        """False when an optimiser run of any binary problem (any restart) did not report
        convergence; True with an optimiser that records nothing (a fixed kernel)."""
        return all(status == 0 for e in self._binary_estimators()
                   for status, _ in getattr(e.optimizer, "runs", []))


def make_sklearn_gpc(n_features: int, seed: int, n_jobs: int) -> RecordedGPC:
    """The ``sklearn-gpc`` method: ARD RBF x constant kernel, optimiser runs recorded."""
    return RecordedGPC(kernel=ConstantKernel(1.0) * RBF(length_scale=np.ones(n_features)),
                       optimizer=RecordingLBFGS(), multi_class="one_vs_rest",
                       random_state=seed, n_jobs=n_jobs)
