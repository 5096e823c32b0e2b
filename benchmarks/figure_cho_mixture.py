"""Decision regions of Laplace-EM on Cho, Kim & Park's 4-class mixture (their Fig. 1(c)).

Standalone (no report code): draws the sec. 5.1 data with
:func:`gpcbench.data.generators.cho_mixture` (160 training, 400 test points), fits
:class:`gpcbench.models.LaplaceEMGaussianProcessClassifier`, and plots the regions of the
largest Monte Carlo class probability (Cho eq. 29) with the test points, misclassified ones
circled; the title gives the test error (the paper reports "about 7-8%").

Usage: ``python benchmarks/figure_cho_mixture.py [--seed S] [--out FILE] [--grid G]``.
"""

from __future__ import annotations

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from gpcbench.data.generators import cho_mixture  # noqa: E402
from gpcbench.models import LaplaceEMGaussianProcessClassifier  # noqa: E402


def decision_regions(model, X_test, y_test, grid=150, ax=None):
    """Plot argmax-probability regions of a fitted 2-D classifier and its test points."""
    ax = ax or plt.gca()
    lo, hi = X_test.min(axis=0) - 1.0, X_test.max(axis=0) + 1.0
    u, v = np.meshgrid(np.linspace(lo[0], hi[0], grid), np.linspace(lo[1], hi[1], grid))
    index = {label: k for k, label in enumerate(model.classes_)}
    regions = np.searchsorted(model.classes_, model.predict(np.column_stack([u.ravel(),
                                                                            v.ravel()])))
    C = len(model.classes_)
    ax.contourf(u, v, regions.reshape(u.shape), levels=np.arange(C + 1) - 0.5,
                colors=plt.cm.Pastel1(np.arange(C)))
    predicted = model.predict(X_test)
    ax.scatter(*X_test.T, c=plt.cm.Set1([index[label] for label in y_test]), s=10)
    wrong = predicted != y_test
    ax.scatter(*X_test[wrong].T, s=60, facecolors="none", edgecolors="k", linewidths=0.8)
    return float(np.mean(wrong))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--grid", type=int, default=150)
    parser.add_argument("--out", default="cho2015_mixture_regions.png")
    args = parser.parse_args()
    data = cho_mixture(args.seed)
    train = data.provenance["train_rows"]
    with threadpool_limits(1):
        model = LaplaceEMGaussianProcessClassifier(random_state=args.seed)
        model.fit(data.X[:train], data.y[:train])
        fig, ax = plt.subplots(figsize=(5, 5))
        error = decision_regions(model, data.X[train:], data.y[train:], args.grid, ax)
    ax.set_title(f"Laplace-EM, 4-class mixture: test error {100 * error:.1f}%")
    fig.savefig(args.out, dpi=120, bbox_inches="tight")
    print(f"{args.out}: test error {error:.4f}, converged {model.converged_}, "
          f"{model.n_iter_} EM iterations")


if __name__ == "__main__":
    main()
