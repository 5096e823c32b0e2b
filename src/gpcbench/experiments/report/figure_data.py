"""What the config figures show, read from the fold results: convergence traces, per-feature
hyperparameters (point estimates and sampler posteriors) and mean times beside the published
ones. :mod:`gpcbench.experiments.report.figures` draws them (and the decision regions that
:mod:`gpcbench.experiments.decision_regions` refits)."""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpcbench.config import entry_data
from gpcbench.experiments.aggregate import FOLD_COLUMNS
from gpcbench.experiments.registry import method_spec
from gpcbench.experiments.report.cells import table_cells


@dataclass(frozen=True)
class Trace:
    """One fold's trace of a value: its label, x (sweeps, or EM iterations) and values."""

    label: str
    x: object
    values: list
    sweeps: bool


def figure_datasets(spec: dict, experiment: dict) -> list[str]:
    """The entries a figure shows: its ``datasets``, else every entry of its experiment."""
    return spec.get("datasets") or list(experiment["datasets"])


def feature_names(data_meta: dict, experiment: dict, entry: str) -> list[str]:
    """The feature names of the entry's data set (empty when its metadata has none)."""
    return data_meta.get(entry_data(experiment, entry), {}).get("feature_names") or []


def convergence_traces(spec: dict, folds: pd.DataFrame) -> dict[str, list[Trace]]:
    """Data set -> the trace value (default log Z) of one fold of each of the figure's
    methods, per EM iteration, or per sampler sweep where the trace records its ``sweep``
    numbers; the data sets are the figure's, else those of its folds."""
    mine = folds[(folds["experiment"] == spec["experiment"]) & folds["method"].isin(spec["methods"])
                 & (folds["fold"] == spec.get("fold", 0))]
    datasets = spec.get("datasets") or list(dict.fromkeys(mine["dataset"]))
    key = spec.get("value", "log_evidence")
    traces = {}
    for dataset in datasets:
        traces[dataset] = []
        for row in mine[mine["dataset"] == dataset].itertuples():
            trace = json.loads(row.trace) if isinstance(row.trace, str) else []
            steps = [step for step in trace if step.get(key) is not None]
            sweeps = all("sweep" in step for step in steps) and bool(steps)
            x = [step["sweep"] for step in steps] if sweeps else range(len(steps))
            traces[dataset].append(Trace(row.label, x, [step[key] for step in steps], sweeps))
    return traces


def relevance_bars(spec: dict, folds: pd.DataFrame, dataset: str):
    """Mean and s.d. over the successful folds of a per-feature fitted hyperparameter
    (default the inverse lengthscale) of the figure's methods on one data set, or None
    without such folds."""
    key = spec.get("value", "inverse_lengthscale")
    rows = folds[(folds["experiment"] == spec["experiment"]) & (folds["dataset"] == dataset)
                 & folds["method"].isin(spec["methods"]) & (folds["status"] == "ok")]
    values = np.array([np.atleast_1d(json.loads(h).get(key, np.nan))
                       for h in rows["hyperparameters"]], dtype=float)
    return (values.mean(0), values.std(0)) if values.size else None


def log_hyperparameter_summary(trace: list[dict], hyperparameters: dict, key: str):
    """Log of a fitted per-feature hyperparameter of one fold: (mean, s.d.) over the retained
    sampler states, or (fitted value, None) for a point estimate.

    A sampler marks each trace entry with its ``phase``; the entries of phase ``retained``
    (W&B's HMC: after the discarded first third) are the posterior sample, and the mean and
    s.d. of their log values are the posterior marginal mean and standard deviation. A
    trace without phases belongs to a point estimate (MPL), whose fitted value is returned.
    """
    if any("phase" in step for step in trace):
        retained = [step["hyperparameters"][key] for step in trace
                    if step.get("phase") == "retained"]
        if not retained:
            raise ValueError(f"the sampler's trace has no retained states of '{key}'")
        samples = np.log(np.array([np.atleast_1d(v) for v in retained], dtype=float))
        return samples.mean(axis=0), samples.std(axis=0)
    if not isinstance(hyperparameters, dict):
        raise ValueError("per-class hyperparameters have no single per-feature value")
    return np.log(np.atleast_1d(np.asarray(hyperparameters[key], dtype=float))), None


def hmc_relevance(spec: dict, folds: pd.DataFrame, dataset: str) -> list:
    """Per method of the figure, (label, log mean, log s.d. or None) of a per-feature
    hyperparameter on one fold of one data set (:func:`log_hyperparameter_summary`), or None
    where the method has no successful result of that fold."""
    key, fold = spec.get("value", "inverse_lengthscale"), spec.get("fold", 0)
    summaries = []
    for method in spec["methods"]:
        rows = folds[(folds["experiment"] == spec["experiment"])
                     & (folds["dataset"] == dataset) & (folds["method"] == method)
                     & (folds["fold"] == fold) & (folds["status"] == "ok")]
        if rows.empty:
            summaries.append(None)
            continue
        row = rows.iloc[0]
        mean, sd = log_hyperparameter_summary(json.loads(row["trace"]),
                                              json.loads(row["hyperparameters"]), key)
        summaries.append((row["label"], mean, sd))
    return summaries


def timing_bars(spec: dict, table: dict, folds: pd.DataFrame, published: pd.DataFrame,
                expected_folds: dict | None = None) -> pd.DataFrame:
    """ZDJ Figs. 3-4: per (data set, method) of a timing figure, our mean time over the
    successful folds beside the published time, as its ``table`` shows them.

    The cells are the table's (:func:`~gpcbench.experiments.report.cells.table_cells`: the
    table's metric, e.g. ``time_s`` = wall seconds of fit + predict, and its method names),
    restricted to the figure's methods and data sets (its ``datasets``, else the table's).
    ``published`` is the table's
    :func:`~gpcbench.experiments.report.cells.published_cells`. One row per data set and
    method, data sets in the table's column order, methods in the figure's order; ``ours`` is
    NaN where the method has no successful fold (a partial run), ``pub_mean`` where the paper
    prints none.
    """
    entries = spec.get("datasets") or list(table["datasets"])
    shown = {**table, "datasets": {entry: table["datasets"][entry] for entry in entries},
             "methods": spec["methods"]}
    names = table.get("method_names", {})
    labels = [names.get(label, label) for label in
              (method_spec(method).label for method in spec["methods"])]
    if folds.empty:  # an experiment without fold results yet
        folds = pd.DataFrame(columns=FOLD_COLUMNS)
    cells = table_cells(shown, folds, published[published["entry"].isin(entries)],
                        expected_folds).set_index(["entry", "method"])
    grid = pd.MultiIndex.from_product([entries, labels], names=["entry", "method"])
    bars = cells.reindex(grid)[["ours", "n_ok", "n_expected", "pub_mean"]].reset_index()
    bars.insert(1, "dataset", bars["entry"].map(table["datasets"]))
    return bars

