"""Fit CPU seconds of the peer GP libraries against gpcbench, on one thread, in one run.

On the first split of W&B's Pima (Ripley's 200 training rows, 7 inputs) and crabs with colour
(80 training rows, 6 inputs) experiments, as config/config.yaml builds them (same protocol and
seed), inputs standardised on the training rows as the fold jobs do. Each method is fitted
``--repeat`` times; the best CPU time (``time.process_time``) is reported, with its ratio to
gpcbench's ``EPGaussianProcessClassifier`` (ARD, EM-EP as in Kim & Ghahramani's rows) and the
test error:

- GPy EP / GPy Laplace: ``GPy.models.GPClassification``, ARD RBF, GPy's L-BFGS-B
  (:class:`gpcbench.baselines.gpy.GPyClassifier`);
- gpcbench EP (L-BFGS-B): the same estimator with ``optimizer="lbfgs"`` (its default);
- scikit-learn GPC: ``GaussianProcessClassifier`` (Laplace, ARD RBF x constant).

Usage: ``python benchmarks/bench_peers.py --processed DIR [--repeat R]``, where DIR holds
``pima.npz`` and ``crabs_colour.npz`` (``gpcbench preprocess``; default data/processed).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import yaml
from threadpoolctl import threadpool_limits

from gpcbench.baselines.gpy import GPyClassifier
from gpcbench.baselines.sklearn_gpc import make_sklearn_gpc
from gpcbench.config import entry_protocol
from gpcbench.data.dataset import load_dataset
from gpcbench.data.splits import make_splits
from gpcbench.experiments.run_fold import standardize
from gpcbench.models import EPGaussianProcessClassifier
from gpcbench.seeds import derive_seed

REPO = Path(__file__).resolve().parents[1]
#: (experiment, entry, data file): the first split of each.
PROBLEMS = (("williams1998_pima", "pima", "pima"),
            ("williams1998_crabs", "crabs_colour", "crabs_colour"))


def first_split(processed: Path, experiment: str, entry: str, data: str):
    """Training and test rows of fold 0, as the pipeline's split and run-fold jobs make them."""
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    spec = config["experiments"][experiment]
    group = spec["datasets"][entry].get("split_group", entry)
    dataset = load_dataset(processed / f"{data}.npz")
    seed = derive_seed(config["seed"], "split", f"{experiment}/{group}")
    fold = make_splits(entry_protocol(spec, entry), dataset, seed)[0]
    train, test = np.asarray(fold["train"]), np.asarray(fold["test"])
    X_train, X_test = standardize(dataset.X[train], dataset.X[test])
    return X_train, dataset.y[train], X_test, dataset.y[test]


def methods(n_features: int) -> dict:
    return {
        "gpcbench EP (EM-EP)": lambda: EPGaussianProcessClassifier(ard=True, optimizer="em"),
        "gpcbench EP (L-BFGS-B)": lambda: EPGaussianProcessClassifier(ard=True),
        "GPy EP": lambda: GPyClassifier(inference="ep", random_state=0),
        "GPy Laplace": lambda: GPyClassifier(inference="laplace", random_state=0),
        "scikit-learn GPC": lambda: make_sklearn_gpc(n_features, seed=0, n_jobs=1),
    }


def best_cpu(build, X, y, repeat):
    """Best fit CPU seconds over ``repeat`` fits, and the last fitted model (or the error)."""
    times, model = [], None
    for _ in range(repeat):
        start = time.process_time()
        try:
            model = build().fit(X, y)
        except Exception as exc:  # noqa: BLE001 - a peer's failure is printed, not hidden
            return time.process_time() - start, exc
        times.append(time.process_time() - start)
    return min(times), model


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processed", type=Path, default=REPO / "data" / "processed")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with threadpool_limits(1):
        for experiment, entry, data in PROBLEMS:
            X, y, X_test, y_test = first_split(args.processed, experiment, entry, data)
            print(f"\n== {experiment} / {entry}: {X.shape[0]} training x {X.shape[1]} inputs, "
                  f"{X_test.shape[0]} test, fold 0, 1 thread, best of {args.repeat} ==")
            print(f"{'method':24s} {'fit CPU s':>10s} {'/ gpcbench EM-EP':>17s} "
                  f"{'test errors':>12s}")
            reference = None
            for name, build in methods(X.shape[1]).items():
                seconds, model = best_cpu(build, X, y, args.repeat)
                reference = reference or seconds
                errors = (f"  failed: {type(model).__name__}" if isinstance(model, Exception)
                          else f"{int(np.sum(model.predict(X_test) != y_test)):12d}")
                print(f"{name:24s} {seconds:10.3f} {seconds / reference:17.2f} {errors}",
                      flush=True)


if __name__ == "__main__":
    main()
