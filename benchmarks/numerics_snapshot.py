"""Every public estimator's numbers on fixed small problems, to check that a refactoring moves
none of them: predictions, probabilities, log evidence and fitted hyperparameters.

    python benchmarks/numerics_snapshot.py save before.json     # at the old commit
    python benchmarks/numerics_snapshot.py compare before.json  # at the new one: max differences

``compare`` exits 1 when any number differs by more than 1e-10 (absolute, or relative for
numbers above 1), printing each estimator's largest difference.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings

import numpy as np
from sklearn.datasets import make_classification

from gpcbench import models

TOLERANCE = 1e-10
SAMPLER = {"n_sweeps": 300, "burn_in": 100, "thin": 5, "k_max": 20, "n_chains": 2}


def problems() -> dict[str, tuple]:
    """(X_train, y_train, X_test) of a binary and a 3-class problem, and a regression one."""
    X, y = make_classification(n_samples=70, n_features=3, n_informative=3, n_redundant=0,
                               random_state=0)
    X3, y3 = make_classification(n_samples=75, n_features=3, n_informative=3, n_redundant=0,
                                 n_classes=3, n_clusters_per_class=1, random_state=1)
    reg = X[:, 0] - 0.5 * X[:, 1] + 0.1 * np.random.default_rng(2).standard_normal(70)
    return {"binary": (X[:50], y[:50], X[50:]), "multiclass": (X3[:55], y3[:55], X3[55:]),
            "regression": (X[:50], reg[:50], X[50:])}


def estimators() -> dict[str, tuple[str, object]]:
    """name -> (problem, unfitted estimator), every public estimator at small settings."""
    return {
        "ep": ("binary", models.EPGaussianProcessClassifier(max_iter=20)),
        "ep_ard_parallel": ("binary", models.EPGaussianProcessClassifier(
            ard=True, ep_schedule="parallel", max_iter=10)),
        "ep_regressor": ("regression", models.EPGaussianProcessRegressor(max_iter=20)),
        "ep_multiclass": ("multiclass", models.MulticlassEPGaussianProcessClassifier(
            max_iter=5, random_state=0)),
        "laplace_mpl": ("binary", models.LaplaceGaussianProcessClassifier(ard=True)),
        "laplace_hmc": ("binary", models.LaplaceGaussianProcessClassifier(
            hyperparameter_learning="hmc", n_samples=20, n_leapfrog=5, random_state=0)),
        "softmax_laplace": ("multiclass", models.SoftmaxLaplaceGaussianProcessClassifier(
            max_iter=10, n_draws=200, random_state=0)),
        "laplace_em": ("multiclass", models.LaplaceEMGaussianProcessClassifier(
            max_iter=5, n_draws=200, random_state=0)),
        "variational_lower": ("binary", models.VariationalGaussianProcessClassifier(max_iter=20)),
        "variational_upper": ("binary", models.VariationalGaussianProcessClassifier(
            bound="upper", max_iter=20)),
        "mcmc_gpc": ("binary", models.MCMCGaussianProcessClassifier(
            n_samples=20, n_latent_updates=5, n_chains=1, random_state=0)),
        "fbgkm": ("binary", models.FBGKMClassifier(random_state=0, **SAMPLER)),
        "bgkm": ("binary", models.BGKMClassifier(random_state=0, **SAMPLER)),
        "sgpc": ("binary", models.SGPCClassifier(random_state=0, **SAMPLER)),
        "fbgkm_multiclass": ("multiclass", models.FBGKMClassifier(random_state=0, **SAMPLER)),
    }


def _numbers(value) -> list[float]:
    if isinstance(value, dict):
        return [x for key in sorted(value) for x in _numbers(value[key])]
    if isinstance(value, (list, tuple)) and any(isinstance(v, (dict, list)) for v in value):
        return [x for item in value for x in _numbers(item)]
    array = np.asarray(value, dtype=float) if value is not None else np.array([])
    return array.ravel().tolist()


def snapshot() -> dict[str, list[float]]:
    data, out = problems(), {}
    for name, (problem, estimator) in estimators().items():
        X, y, X_test = data[problem]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator.fit(X, y)
        values = [*_numbers(estimator.predict(X_test)),
                  *_numbers(getattr(estimator, "log_evidence_", None)),
                  *_numbers(getattr(estimator, "hyperparameters_", None))]
        if hasattr(estimator, "predict_proba"):
            values += _numbers(estimator.predict_proba(X_test))
        out[name] = values
        print(f"{name}: {len(values)} numbers", file=sys.stderr)
    return out


def largest_difference(old: list[float], new: list[float]) -> float:
    if len(old) != len(new):
        return float("inf")
    a, b = np.asarray(old), np.asarray(new)
    return float(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(a)), initial=0.0))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["save", "compare"])
    parser.add_argument("path")
    args = parser.parse_args()
    current = snapshot()
    if args.mode == "save":
        with open(args.path, "w") as handle:
            json.dump(current, handle)
        return 0
    with open(args.path) as handle:
        before = json.load(handle)
    worst = 0.0
    for name in sorted(set(before) | set(current)):
        diff = largest_difference(before.get(name, []), current.get(name, []))
        worst = max(worst, diff)
        print(f"{name:<20} {diff:.3g}")
    print(f"largest difference {worst:.3g} (tolerance {TOLERANCE:g})")
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
