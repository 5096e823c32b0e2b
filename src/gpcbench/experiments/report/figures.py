"""Every report figure (PNG, written atomically, without a time stamp): the config figures
(convergence, relevance, hmc_relevance, decision_regions, timing) from what
:mod:`gpcbench.experiments.report.figure_data` reads, and reproduced vs published error
rates."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd

from gpcbench.experiments.report.figure_data import Trace
from gpcbench.io import atomic_write_bytes


def pyplot():
    """matplotlib.pyplot on the non-interactive Agg backend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path: Path):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, bbox_inches="tight", metadata={"Software": None})
    pyplot().close(fig)
    atomic_write_bytes(path, buf.getvalue())


def write_convergence_figure(spec: dict, traces: dict[str, list[Trace]], path: Path):
    """One panel per data set: each method's trace value per EM iteration or sampler sweep
    (:func:`~gpcbench.experiments.report.figure_data.convergence_traces`)."""
    plt = pyplot()
    n_panels = max(1, len(traces))
    fig, axes = plt.subplots(1, n_panels, figsize=(3.2 * n_panels, 2.8), squeeze=False,
                             layout="constrained")
    for ax, (dataset, lines) in zip(axes[0], traces.items()):
        sweeps = False
        for trace in lines:
            sweeps = trace.sweeps
            ax.plot(trace.x, trace.values, marker="" if sweeps else ".", lw=0.8,
                    label=trace.label)
        ax.set_title(dataset, fontsize=9)
        ax.set_xlabel("sweep" if sweeps else "EM iteration")
    axes[0][0].set_ylabel(spec.get("value", "log_evidence"))
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(spec["title"], fontsize=10)
    save(fig, path)


def write_relevance_figure(spec: dict, bars: dict, names: dict, path: Path):
    """Bars of a per-feature fitted hyperparameter (mean and s.d. over folds, or None) per data
    set, the features named by ``names`` (data set -> feature names)."""
    plt = pyplot()
    key = spec.get("value", "inverse_lengthscale")
    fig, axes = plt.subplots(1, len(bars), figsize=(4 * len(bars), 3), squeeze=False,
                             layout="constrained")
    for ax, (dataset, bar) in zip(axes[0], bars.items()):
        if bar is not None:
            mean, sd = bar
            ax.bar(range(mean.size), mean, yerr=sd, color="tab:blue")
            ax.set_xticks(range(mean.size), names[dataset][:mean.size] or None,
                          rotation=60, fontsize=7)
        ax.set_title(dataset, fontsize=9)
        ax.set_ylabel(key)
    fig.suptitle(spec["title"], fontsize=10)
    save(fig, path)


def write_hmc_relevance_figure(spec: dict, summaries: dict, names: dict, path: Path):
    """W&B Fig. 2: per feature, the log of a per-feature hyperparameter (default the ARD
    weight w_l = inverse lengthscale) of one fold: posterior mean ± one s.d. of a sampler
    (circles) beside point estimates (squares), one panel per data set (``summaries``: data
    set -> :func:`~gpcbench.experiments.report.figure_data.hmc_relevance`)."""
    plt = pyplot()
    key, fold = spec.get("value", "inverse_lengthscale"), spec.get("fold", 0)
    fig, axes = plt.subplots(1, len(summaries), figsize=(6.5 * len(summaries), 4),
                             squeeze=False, layout="constrained")
    offsets = np.linspace(-0.15, 0.15, len(spec["methods"]))
    for ax, (dataset, methods) in zip(axes[0], summaries.items()):
        for offset, summary in zip(offsets, methods):
            if summary is None:
                continue
            label, mean, sd = summary
            x = np.arange(1, mean.size + 1) + offset
            if sd is None:
                ax.plot(x, mean, "s", mfc="none", label=f"{label} (fitted)")
            else:
                ax.errorbar(x, mean, yerr=sd, fmt="o", capsize=3,
                            label=f"{label} (posterior mean ± 1 s.d.)")
            ticks = np.arange(1, mean.size + 1)
            ax.set_xticks(ticks, [f"{i}. {n}" for i, n in zip(ticks, names[dataset])]
                          if names[dataset] else ticks, rotation=45, fontsize=7)
        ax.set_xlabel(f"input variable ({dataset}, fold {fold})", fontsize=8)
        ax.set_ylabel(f"log {key}")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.35))
    fig.suptitle(textwrap.fill(spec["title"], 100), fontsize=10)
    save(fig, path)


def write_decision_regions_figure(spec: dict, regions, path: Path):
    """CKP Fig. 1(c): the refitted classes over the grid, the training points and the
    misclassified test points; the title gives the refit's test error beside the fold
    record's (they agree up to the Laplace mode's tolerance)."""
    plt = pyplot()
    data, train, test, wrong = regions.data, regions.train, regions.test, regions.wrong
    n_classes = len(data.class_names)
    colours = plt.get_cmap("tab10")(np.arange(n_classes))
    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.contourf(regions.g0, regions.g1, regions.on_grid, levels=np.arange(n_classes + 1) - 0.5,
                colors=colours, alpha=0.25)
    for k, name in enumerate(data.class_names):
        members = train[data.y[train] == k]
        ax.scatter(*data.X[members].T, s=14, color=colours[k], edgecolor="k", linewidth=0.4,
                   label=f"{name} (training)")
    ax.scatter(*data.X[wrong].T, marker="x", s=22, color="k",
               label=f"misclassified test points ({wrong.size} of {test.size})")
    ax.set_xlabel(data.feature_names[0])
    ax.set_ylabel(data.feature_names[1])
    ax.legend(fontsize=7, loc="best")
    ax.set_title(f"{spec['title']}\n{regions.row['label']}, fold {spec.get('fold', 0)}: "
                 f"test error {wrong.size / test.size:.3f} "
                 f"(fold record {float(regions.row['error']):.3f})", fontsize=9)
    save(fig, path)


def write_timing_figure(spec: dict, bars: pd.DataFrame, path: Path):
    """ZDJ Figs. 3-4: mean time per data set (one group each) and method (one colour each) on
    a log axis, ours filled beside the published time hatched
    (:func:`~gpcbench.experiments.report.figure_data.timing_bars`); a missing value leaves a
    gap, and a bar from fewer successful folds than the protocol gives is marked ``k/N``."""
    plt = pyplot()
    from matplotlib.patches import Patch

    datasets = list(dict.fromkeys(bars["dataset"]))
    methods = list(dict.fromkeys(bars["method"]))
    colours = plt.get_cmap("tab10")(np.arange(len(methods)) % 10)
    width = 0.8 / max(1, 2 * len(methods))
    fig, ax = plt.subplots(figsize=(max(6.0, 1.6 * len(datasets) + 2), 4), layout="constrained")
    for m, (method, colour) in enumerate(zip(methods, colours)):
        rows = bars[bars["method"] == method].set_index("dataset").reindex(datasets)
        x = np.arange(len(datasets)) - 0.4 + (2 * m + 0.5) * width
        ours, published = rows["ours"].to_numpy(float), rows["pub_mean"].to_numpy(float)
        ax.bar(x[~np.isnan(ours)], ours[~np.isnan(ours)], width, color=colour, edgecolor=colour)
        ax.bar(x[~np.isnan(published)] + width, published[~np.isnan(published)], width,
               color="white", edgecolor=colour, hatch="///")
        for xi, value, n_ok, n_expected in zip(x, ours, rows["n_ok"], rows["n_expected"]):
            if not np.isnan(value) and n_ok < n_expected:
                ax.annotate(f"{n_ok:.0f}/{n_expected:.0f}", (xi, value), ha="center",
                            va="bottom", fontsize=6)
    ax.set_yscale("log")
    ax.set_xticks(np.arange(len(datasets)), datasets)
    ax.set_ylabel("computational time (s), log scale")
    handles = [Patch(color=colour, label=method) for method, colour in zip(methods, colours)]
    handles += [Patch(facecolor="grey", edgecolor="grey", label="ours"),
                Patch(facecolor="white", edgecolor="grey", hatch="///", label="published")]
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(textwrap.fill(spec["title"], 90), fontsize=9)
    save(fig, path)


MARKERS = "osD^v<>ph"


def write_published_vs_reproduced(all_cells: pd.DataFrame, papers: dict, out: Path):
    """``figures/published_vs_reproduced.png``: every error-metric cell with both values, as
    error rates (:func:`~gpcbench.experiments.report.cells.error_fractions`), one colour and
    marker per paper (``papers``: key -> citation), bars of two combined standard errors,
    cells on stand-in data sets hollow and labelled with the data set's name."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 6))
    both = all_cells.dropna(subset=["ours_fraction", "pub_fraction"])
    colours = plt.get_cmap("tab10")
    for k, (paper, group) in enumerate(both.groupby("paper", sort=False)):
        colour, marker = colours(k % 10), MARKERS[k % len(MARKERS)]
        ax.errorbar(group["pub_fraction"], group["ours_fraction"],
                    yerr=group["two_se_fraction"].fillna(0.0), fmt="none", ecolor=colour,
                    alpha=0.35, lw=0.8)
        standin = group["substitute"].astype(bool)
        ax.scatter([], [], color=colour, marker=marker, s=20,
                   label=papers.get(paper, {}).get("citation", paper or "(no paper)"))
        ax.scatter(group.loc[~standin, "pub_fraction"], group.loc[~standin, "ours_fraction"],
                   color=colour, marker=marker, s=20)
        if standin.any():
            ax.scatter(group.loc[standin, "pub_fraction"], group.loc[standin, "ours_fraction"],
                       facecolors="none", edgecolors=colour, marker=marker, s=20)
            for name, cells in group[standin].groupby("substitute", sort=False):
                top = cells.loc[cells["ours_fraction"].idxmax()]
                ax.annotate(f"{name} (stand-in)", (top["pub_fraction"], top["ours_fraction"]),
                            textcoords="offset points", xytext=(4, 4), fontsize=6, color=colour)
    top = max([0.05, *both[["ours_fraction", "pub_fraction"]].to_numpy().ravel()])
    ax.plot([0, top], [0, top], color="grey", lw=0.8)
    ax.set_xlabel("published error rate")
    ax.set_ylabel("reproduced error rate (bars: ± 2 combined s.e.)")
    ax.set_title("Reproduced vs published error rates (hollow: stand-in data sets)")
    if len(both):
        ax.legend(fontsize=7)
    save(fig, out / "figures" / "published_vs_reproduced.png")
