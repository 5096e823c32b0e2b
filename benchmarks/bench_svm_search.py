"""SVM-CV(soft)'s two-level 5-fold grid search (K&G footnotes 14-15: 49 coarse and 81 fine
(C, l) points, 650 SVC fits) with each width's Gram matrix computed once and indexed by every C
and fold (:class:`gpcbench.baselines.svm.TwoLevelGridSVM`), against the search as it was:
GridSearchCV refitting SVC(kernel="rbf") from the raw inputs at every grid point and fold, with
scikit-learn's default 200 MB kernel cache (the reference copy that tests/test_svm_search.py
checks the new search against, tests/svm_search_reference.py).

Both run in this process on one BLAS thread, on the same rows, at n = 300, 1,000 and 3,000
training rows (the config's SVM-CV shapes run from n = 90 to 6,000: K&G's sets, ZDJ's 400-row
Raetsch sets, Splice 2,000, Astroparticle and Mushrooms 4,000, Adult1 and Adult2's search
6,000). Prints CPU seconds of each search (fit of the final SVC included), old / new, and
whether both chose the same (C, l) and predict the same labels on 2,000 test rows.

Data: Breiman's twonorm (20 inputs, classes N(+-a 1, I), a = 2 / sqrt(20); the generator of
ZDJ's Twonorm), or rows drawn from a processed data set with ``--npz`` (e.g.
``data/processed/adult.npz``: Adult's 123 binary indicators, used raw as in the config).

Usage: ``PYTHONPATH=src python benchmarks/bench_svm_search.py [--sizes 300 1000 3000]
[--npz PATH]``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from svm_search_reference import ReferenceGridSVM  # noqa: E402

from gpcbench.baselines.svm import TwoLevelGridSVM  # noqa: E402

N_TEST, SEED = 2000, 20061201


# --- data and timing -------------------------------------------------------------------------

def twonorm(n, rng):
    """Breiman's twonorm: 20 inputs, N(+a, I) or N(-a, I) by class, a = 2 / sqrt(20)."""
    y = rng.integers(0, 2, size=n)
    return rng.normal(size=(n, 20)) + np.where(y == 1, 1.0, -1.0)[:, None] * 2 / np.sqrt(20), y


def rows_of(path, n, rng):
    """``n`` rows drawn without replacement from a processed data set (X, y of its .npz)."""
    data = np.load(path, allow_pickle=False)
    rows = rng.choice(len(data["y"]), n, replace=False)
    return np.asarray(data["X"][rows], dtype=float), data["y"][rows]


def timed_search(cls, X, y, X_test):
    start = time.process_time()
    model = cls(search="C,l", random_state=SEED).fit(X, y)
    seconds = time.process_time() - start
    return seconds, model.hyperparameters_, model.predict(X_test)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[300, 1000, 3000])
    parser.add_argument("--npz", help="draw the rows from this processed data set")
    args = parser.parse_args()
    print(f"data: {args.npz or 'twonorm (synthetic)'}; CPU seconds of one search "
          f"(650 CV fits + the final SVC), 1 thread")
    for n in args.sizes:
        rng = np.random.default_rng(n)
        X, y = rows_of(args.npz, n + N_TEST, rng) if args.npz else twonorm(n + N_TEST, rng)
        with threadpool_limits(1):
            old_s, old_h, old_pred = timed_search(ReferenceGridSVM, X[:n], y[:n], X[n:])
            new_s, new_h, new_pred = timed_search(TwoLevelGridSVM, X[:n], y[:n], X[n:])
        print(f"n = {n:5d}: old {old_s:8.1f} s, new {new_s:8.1f} s, "
              f"old / new {old_s / new_s:5.2f}; same (C, l) {old_h == new_h} "
              f"(log10 C {new_h['log10_C']:.1f}, log10 l {new_h['log10_l']:.1f}), "
              f"same test labels {np.array_equal(old_pred, new_pred)}", flush=True)


if __name__ == "__main__":
    main()
