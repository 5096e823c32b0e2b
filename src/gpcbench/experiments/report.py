"""reports/: the papers' tables beside the published numbers, summaries, figures, index.

Every output is a pure function of the fold results, the config and ``config/published``.
A reproduced cell is flagged (``!``) when it differs from the published value by more than two
combined standard errors: the published spread converted to a standard error (Kim: s.e. over
10 folds; Zhang: s.d. over 20 partitions) combined with ours, or, for tables printed without a
spread, the binomial standard error of an error rate on the test set.
"""

from __future__ import annotations

import functools
import io
import json
import textwrap
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from gpcbench.config import entry_methods, entry_protocol, n_folds
from gpcbench.data.dataset import load_dataset
from gpcbench.experiments.aggregate import SAMPLER_DIAGNOSTICS, diagnostic_value, summarise
from gpcbench.experiments.registry import FitContext, method_spec
from gpcbench.io import atomic_write_bytes, atomic_write_text

ERROR_METRICS = ("error", "error_percent", "errors")
# methods whose fold records a decision-regions figure can refit (softmax_laplace_predict)
DECISION_REGION_METHODS = ("gpc-laplace-em", "gpc-softmax-laplace-mpl")


def metric_values(folds: pd.DataFrame, metric: str) -> pd.Series:
    """Per-fold value of a table's metric (successful folds; NaN elsewhere).

    ``error`` (fraction), ``error_percent``, ``errors`` (count on the test set),
    ``time_s`` (wall seconds of fit + predict), ``cpu_s`` (the process's CPU seconds of fit +
    predict; NaN for records older than the field), ``sweeps_per_s`` (a sampler's sweeps, all
    chains, per wall second of fit), ``log_evidence`` (the method's
    approximate log marginal likelihood), or
    ``hyperparameter:<name>[<index>]`` (a fitted hyperparameter, e.g.
    ``hyperparameter:inverse_lengthscale[1]``), or ``diagnostic:<key>[.<key>...]`` (a value of
    a sampler's recorded diagnostics, e.g. ``diagnostic:brooks_burn_in``).
    """
    if metric == "error":
        return folds["error"].astype(float)
    if metric == "error_percent":
        return 100.0 * folds["error"].astype(float)
    if metric == "errors":
        return folds["error"].astype(float) * folds["n_test"].astype(float)
    if metric == "time_s":
        return folds["fit_s"].astype(float) + folds["predict_s"].astype(float)
    if metric == "cpu_s":
        return pd.to_numeric(folds["cpu_s"], errors="coerce")
    if metric == "sweeps_per_s":
        return _sweeps_per_second(folds)
    if metric == "log_evidence":
        return pd.to_numeric(folds["log_evidence"], errors="coerce")
    if metric.startswith("hyperparameter:"):
        return folds["hyperparameters"].map(lambda text: _hyperparameter(text, metric))
    if metric.startswith("diagnostic:"):
        return folds["diagnostics"].map(lambda text: diagnostic_value(text, metric.split(":", 1)[1]))
    raise ValueError(f"unknown table metric '{metric}'")


def _sweeps_per_second(folds: pd.DataFrame) -> pd.Series:
    """n_iter (sweeps per chain) x n_chains / fit seconds; NaN for methods without chains.

    The number of chains is the ``n_chains`` of the estimator the fold's method and options
    build (the records keep the options given, not the defaults filled in).
    """
    @functools.cache  # one estimator per (method, options), not one per fold
    def chains(method, options) -> float:
        context = FitContext(options=json.loads(options), seed=0, n_jobs=1, feature_types=(),
                             fold=0)
        return float(method_spec(method).factory(context).get_params().get("n_chains", np.nan))

    n_iter = pd.to_numeric(folds["n_iter"], errors="coerce")
    n_chains = [chains(method, options) if pd.notna(sweeps) else np.nan
                for method, options, sweeps in zip(folds["method"], folds["options"], n_iter)]
    return n_iter * np.array(n_chains) / folds["fit_s"].astype(float)


def _hyperparameter(text, metric: str) -> float:
    expr = metric.split(":", 1)[1]
    name, _, index = expr.partition("[")
    value = json.loads(text).get(name) if isinstance(text, str) else None
    if value is None:
        return np.nan
    if index:  # a shared (scalar) value stands for every feature
        values = np.atleast_1d(value)
        value = values[0] if values.size == 1 else values[int(index.rstrip("]"))]
    return float(value)


def published_cells(table: dict, published_dir: Path) -> pd.DataFrame:
    """Published (dataset entry, method, mean, spread) rows of one table, in its own units.

    A row belongs to the entry whose printed name (``table["datasets"]``) equals, as a string,
    the row's value in the ``published.key`` column (default ``dataset``; e.g. ``n_train``
    or ``k_max`` for a sweep printed one row per setting). A file without the default
    ``dataset`` column belongs to the table's first data set; an explicit ``key`` that is not
    a column of the file raises ValueError. With ``published.rate`` = N the file's ``mean``
    is the time of N units of work (e.g. 10,000 sweeps) and the cell shows N / time.
    """
    spec = table.get("published")
    if not spec:
        return pd.DataFrame(columns=["entry", "method", "pub_mean", "pub_spread"])
    key = spec.get("key", "dataset")
    raw = pd.read_csv(Path(published_dir) / spec["file"], dtype={"method": str, key: str})
    if "key" in spec and key not in raw.columns:
        raise ValueError(f"published.key '{key}' is not a column of {spec['file']}")
    for column, value in spec.get("filter", {}).items():
        kept = value if isinstance(value, list) else [value]
        raw = raw[raw[column].astype(str).isin([str(v) for v in kept])]
    printed_to_entry = {printed: entry for entry, printed in table["datasets"].items()}
    rows = []
    for record in raw.to_dict("records"):
        if "columns" in spec:
            for entry, column in spec["columns"].items():
                rows.append((entry, record["method"], record.get(column), None))
            continue
        if key in raw.columns:
            entry = printed_to_entry.get(record[key])
            if entry is None:
                continue
        else:
            entry = next(iter(table["datasets"]))
        spread = record.get(spec["spread"]) if spec.get("spread") else None
        rows.append((entry, record["method"], record.get(spec["mean"]), spread))
    frame = pd.DataFrame(rows, columns=["entry", "method", "pub_mean", "pub_spread"])
    frame["pub_mean"] = pd.to_numeric(frame["pub_mean"], errors="coerce")
    frame["pub_spread"] = pd.to_numeric(frame["pub_spread"], errors="coerce")
    if "rate" in spec:
        frame["pub_mean"] = spec["rate"] / frame["pub_mean"]
    return frame


def _table_folds(table: dict, folds: pd.DataFrame) -> pd.DataFrame:
    """The folds a table shows: its experiment, its data sets, its ``methods`` if given."""
    mine = folds[(folds["experiment"] == table["experiment"])
                 & folds["dataset"].isin(table["datasets"])]
    return mine[mine["method"].isin(table["methods"])] if "methods" in table else mine


def table_cells(table: dict, folds: pd.DataFrame, published: pd.DataFrame,
                expected_folds: dict | None = None) -> pd.DataFrame:
    """Long table: one row per (data set, method) with ours (mean, spread, s.e. over the
    successful folds), the published value and the flag. ``expected_folds`` (entry -> the
    protocol's fold count) fills ``n_expected``, so a cell built from a partial run says so."""
    names = table.get("method_names", {})
    mine = _table_folds(table, folds).copy()
    mine["value"] = metric_values(mine, table["metric"]).where(mine["status"] == "ok")
    # a method with no value anywhere in the table has no such metric (k-NN has no burn-in),
    # unless it records diagnostics; a successful fold of a method that has the metric but no
    # value for it is counted as undefined (a chain that never settled)
    recorded = mine["value"].notna()
    if table["metric"].startswith("diagnostic:"):
        recorded |= mine["diagnostics"].map(lambda text: isinstance(text, str) and text != "null")
    applies = recorded.groupby(mine["label"]).any()
    rows = []
    for (entry, label), group in mine.groupby(["dataset", "label"], sort=False):
        values = group["value"].dropna().to_numpy(dtype=float)
        n = values.size
        sd = float(np.std(values, ddof=1)) if n > 1 else np.nan
        failed = group[group["status"] != "ok"]
        if not applies[label] and failed.empty:
            continue
        rows.append({
            "entry": entry, "method": names.get(label, label),
            "ours": float(values.mean()) if n else np.nan,
            "ours_spread": {"se": sd / np.sqrt(n) if n > 1 else np.nan, "sd": sd}.get(
                table.get("spread", "se"), np.nan),
            "ours_se": sd / np.sqrt(n) if n > 1 else np.nan,
            "n_ok": len(group) - len(failed), "n_folds": len(group),
            "n_expected": (expected_folds or {}).get(entry, np.nan),
            "n_undefined": len(group) - len(failed) - n,
            "n_test": group["n_test"].astype(float).mean(),
            "failures": "; ".join(f"fold {r.fold}: {r.status}" for r in failed.itertuples()),
        })
    cells = pd.DataFrame(rows, columns=["entry", "method", "ours", "ours_spread", "ours_se",
                                        "n_ok", "n_folds", "n_expected", "n_undefined",
                                        "n_test", "failures"])
    # rows: the paper's methods in its order, then ours that it does not print, in config order
    order = list(dict.fromkeys([*published["method"], *cells["method"]]))
    cells = cells.merge(published, on=["entry", "method"], how="outer")
    cells["row"] = cells["method"].map({method: i for i, method in enumerate(order)})
    cells["flag"] = [_differs(table, r) for r in cells.itertuples()]
    cells.insert(0, "dataset", cells["entry"].map(table["datasets"]))
    return cells


def _differs(table: dict, cell) -> bool:
    """|ours - published| > 2 combined standard errors (False when either is missing).

    The published spread is turned into a standard error (``published.n`` values behind an
    s.d.: Zhang's 20 partitions, Kim's 10 repetitions); for error metrics printed without a
    spread, each side gets the binomial standard error of an error rate on the test set.
    """
    if pd.isna(cell.ours) or pd.isna(cell.pub_mean):
        return False
    metric, spread_kind = table["metric"], table.get("spread", "se")
    if spread_kind == "none" or pd.isna(cell.ours_se):
        if metric not in ERROR_METRICS or pd.isna(cell.n_test) or cell.n_test == 0:
            return False
        scale = {"error": 1.0, "error_percent": 100.0, "errors": cell.n_test}[metric]
        p = np.clip(cell.ours / scale, 1e-3, 1 - 1e-3)
        combined = np.sqrt(2 * p * (1 - p) / cell.n_test) * scale
    else:
        pub_se = cell.pub_spread
        if spread_kind == "sd" and not pd.isna(pub_se):
            pub_se = pub_se / np.sqrt(table.get("published", {}).get("n", 20))
        combined = np.sqrt(cell.ours_se ** 2 + (0.0 if pd.isna(pub_se) else pub_se ** 2))
    return bool(abs(cell.ours - cell.pub_mean) > 2 * combined)


def _fmt(value, spread, digits: int) -> str:
    if pd.isna(value):
        return "—"
    text = f"{value:.{digits}f}"
    return text if pd.isna(spread) else f"{text} ± {spread:.{digits}f}"


def _cell_text(r, digits: int) -> str:
    ours = _fmt(r.ours, r.ours_spread, digits)
    if isinstance(r.failures, str) and r.failures:
        ours += f" ({int(r.n_folds - r.n_ok)} failed)"
    if getattr(r, "n_undefined", 0) > 0:
        ours += f" ({int(r.n_undefined)} undefined)"
    expected = getattr(r, "n_expected", np.nan)  # confusion cells head their section instead
    if r.n_folds < expected:  # NaN (no run, or no expected count) compares False
        ours += f" ({int(r.n_folds)}/{int(expected)})"
    if pd.isna(r.pub_mean):
        return ours
    return f"{ours}{' !' if r.flag else ''} [{_fmt(r.pub_mean, r.pub_spread, digits)}]"


def wide_table(table: dict, cells: pd.DataFrame) -> pd.DataFrame:
    metric = table["metric"]
    digits = {"error": 4, "error_percent": 2, "errors": 1, "log_evidence": 2, "time_s": 1,
              "cpu_s": 1, "sweeps_per_s": 2}.get(metric, 1 if metric.startswith("diagnostic:") else 4)
    text = cells.assign(text=[_cell_text(r, digits) for r in cells.itertuples()])
    wide = text.pivot_table(index="method", columns="dataset", values="text", aggfunc="first")
    order = [table["datasets"][e] for e in table["datasets"] if table["datasets"][e] in wide.columns]
    rows = text.sort_values("row", kind="stable")["method"].drop_duplicates()
    return _text(wide.reindex(index=rows, columns=order))


def _text(frame: pd.DataFrame) -> pd.DataFrame:
    """Every cell as the text ``str`` gives it, missing values as —."""
    return frame.astype(object).map(lambda value: "—" if pd.isna(value) else str(value))


def _markdown(frame: pd.DataFrame, index_name: str) -> str:
    header = [index_name, *map(str, frame.columns)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for index, row in frame.iterrows():
        lines.append("| " + " | ".join([str(index), *map(str, row.tolist())]) + " |")
    return "\n".join(lines) + "\n"


def _latex(frame: pd.DataFrame, title: str, index_name: str = "Method") -> str:
    def esc(s):
        return (str(s).replace("\\", r"\textbackslash{}").replace("&", r"\&").replace("%", r"\%")
                .replace("_", r"\_").replace("#", r"\#").replace("±", r"$\pm$").replace("—", "--"))
    cols = "l" + "c" * len(frame.columns)
    lines = [r"\begin{table}", rf"\caption{{{esc(title)}}}", rf"\begin{{tabular}}{{{cols}}}",
             r"\hline", " & ".join([esc(index_name), *map(esc, frame.columns)]) + r" \\", r"\hline"]
    for index, row in frame.iterrows():
        lines.append(" & ".join([esc(index), *map(esc, row.tolist())]) + r" \\")
    lines += [r"\hline", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def _csv(frame: pd.DataFrame) -> str:
    buf = io.StringIO()
    frame.to_csv(buf, index=False)
    return buf.getvalue()


def write_table(name: str, table: dict, cells: pd.DataFrame, notes: list[str], out: Path):
    wide = wide_table(table, cells)
    legend = ("Cells: reproduced mean ± spread over folds [published value]; `!` = differs from "
              "the published value by more than two combined standard errors; (k/N) = only k of "
              "the protocol's N folds are in; (k undefined) = k runs have no value (the table's "
              "notes say why); — = not run / not published.")
    md = [f"# {table['title']}\n", legend + "\n", _markdown(wide, "Method")]
    md += [f"- {note}" for note in notes]
    atomic_write_text(out / "tables" / f"{name}.md", "\n".join(md) + "\n")
    atomic_write_text(out / "tables" / f"{name}.csv", _csv(cells))
    atomic_write_text(out / "tables" / f"{name}.tex", _latex(wide, table["title"]))


def published_confusion(table: dict, published_dir: Path) -> pd.DataFrame:
    """Published rates of a confusion table: (entry, method, true_class, predicted_class,
    pub_mean). The file has columns ``true_class``, ``predicted_class`` and the ``mean``
    column; its rates belong to ``published.method`` on the table's first data set."""
    columns = ["entry", "method", "true_class", "predicted_class", "pub_mean"]
    spec = table.get("published")
    if not spec:
        return pd.DataFrame(columns=columns)
    raw = pd.read_csv(Path(published_dir) / spec["file"])
    return pd.DataFrame({"entry": next(iter(table["datasets"])), "method": spec["method"],
                         "true_class": raw["true_class"].astype(str),
                         "predicted_class": raw["predicted_class"].astype(str),
                         "pub_mean": pd.to_numeric(raw[spec["mean"]], errors="coerce")},
                        columns=columns)


def confusion_rates(matrices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-normalised confusion of P folds' J x J count matrices, shape (P, J, J): the counts
    summed over folds, each true-class row divided by its total (NaN for a row without test
    points), and the standard error over folds of the per-fold row rates (NaN unless P > 1)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled = matrices.sum(axis=0)
        rates = pooled / pooled.sum(axis=1, keepdims=True)
        per_fold = matrices / matrices.sum(axis=2, keepdims=True)
    n = matrices.shape[0]
    se = (np.std(per_fold, axis=0, ddof=1) / np.sqrt(n) if n > 1
          else np.full(rates.shape, np.nan))
    return rates, se


def confusion_cells(table: dict, folds: pd.DataFrame, published: pd.DataFrame,
                    class_names: dict[str, list[str]]) -> pd.DataFrame:
    """Long confusion table: one row per (data set, method, true class, predicted class) with
    our rate and its s.e. over the successful folds (:func:`confusion_rates`), the published
    rate and the flag.

    ``class_names`` maps each of the table's entries to its data set's class names in class
    index order (the order of the recorded matrices' rows and columns).
    """
    names = table.get("method_names", {})
    mine = _table_folds(table, folds)
    order = {m: i for i, m in enumerate(table.get("methods", dict.fromkeys(mine["method"])))}
    mine = mine.sort_values("method", key=lambda m: m.map(order), kind="stable")
    rows = []
    for (entry, method), group in mine.groupby(["dataset", "method"], sort=False):
        ok = group[group["status"] == "ok"]
        recorded = ok.get("confusion", pd.Series(None, index=ok.index, dtype=object))
        if not recorded.map(lambda text: isinstance(text, str) and text != "null").all():
            raise ValueError(f"fold results of {method} on {entry} have no confusion matrix "
                             "(run before it was recorded): rerun them")
        classes = class_names[entry]
        matrices = np.array([json.loads(text) for text in recorded],
                            dtype=float).reshape(len(ok), len(classes), len(classes))
        rates, se = confusion_rates(matrices)
        failed = group[group["status"] != "ok"]
        for t, true_class in enumerate(classes):
            for p, predicted in enumerate(classes):
                rows.append({
                    "entry": entry, "method": method, "label": names.get(
                        group["label"].iloc[0], group["label"].iloc[0]),
                    "true_class": true_class, "predicted_class": predicted,
                    "ours": rates[t, p], "ours_spread": se[t, p], "ours_se": se[t, p],
                    "n_ok": len(ok), "n_folds": len(group),
                    "n_test": float(matrices[:, t].sum()),
                    "failures": "; ".join(f"fold {r.fold}: {r.status}" for r in failed.itertuples()),
                })
    cells = pd.DataFrame(rows, columns=["entry", "method", "label", "true_class",
                                        "predicted_class", "ours", "ours_spread", "ours_se",
                                        "n_ok", "n_folds", "n_test", "failures"])
    unknown = set(published["true_class"]) | set(published["predicted_class"])
    unknown -= {c for entry in published["entry"].unique() for c in class_names[entry]}
    if unknown:
        raise ValueError(f"published classes {sorted(unknown)} are not classes of the data set")
    cells = cells.merge(published.assign(pub_spread=np.nan),
                        on=["entry", "method", "true_class", "predicted_class"], how="left")
    cells["flag"] = [_differs(table, r) for r in cells.itertuples()]
    cells.insert(0, "dataset", cells["entry"].map(table["datasets"]))
    return cells


def write_confusion_table(name: str, table: dict, cells: pd.DataFrame, notes: list[str],
                          out: Path):
    """``tables/<name>.md`` (one true x predicted block per data set and method), ``.csv``
    (the long cells) and ``.tex`` (the blocks stacked, rows labelled method: true class)."""
    legend = ("Cells: fraction of the row's true class assigned to the column's predicted class, "
              "from the confusion counts summed over the successful folds (partitions) ± s.e. "
              "over folds [published rate]; `!` = differs from the published rate by more "
              "than two standard errors; a cell without [ ] has no published rate.")
    md, blocks = [f"# {table['title']}\n", legend + "\n"], []
    for (dataset, label), block in cells.groupby(["dataset", "label"], sort=False):
        text = block.assign(text=[_cell_text(r._replace(failures=""), 3)
                                  for r in block.itertuples()])
        wide = text.pivot(index="true_class", columns="predicted_class", values="text")
        order = list(dict.fromkeys(block["true_class"]))
        wide = wide.reindex(index=order, columns=order)
        first = block.iloc[0]
        md += [f"## {label}, {dataset}: {first.n_ok} of {first.n_folds} folds"
               + (f" ({first.failures})" if first.failures else "") + "\n",
               _markdown(wide, "true class / predicted")]
        blocks.append(wide.set_axis([f"{label}: {c}" for c in wide.index], axis=0))
    md += [f"- {note}" for note in notes]
    atomic_write_text(out / "tables" / f"{name}.md", "\n".join(md) + "\n")
    atomic_write_text(out / "tables" / f"{name}.csv", _csv(cells))
    stacked = pd.concat(blocks) if blocks else pd.DataFrame()
    atomic_write_text(out / "tables" / f"{name}.tex",
                      _latex(stacked, table["title"], "Method: true class"))


def write_summary(experiment: str, spec: dict, summary: pd.DataFrame, out: Path):
    """Error, NLPD, Brier, timing and convergence of every cell of one experiment."""
    rows = summary[summary["experiment"] == experiment]
    columns = ["dataset", "label", "n_ok", "n_folds", "error_mean", "error_se", "nlpd_mean",
               "brier_mean", "fit_s_mean", "fit_s_total", "converged_fraction",
               "n_optimiser_warnings", "n_nonfinite_nlpd", "failures"]
    frame = rows[columns].rename(columns={"label": "method"})
    sampler = [*SAMPLER_DIAGNOSTICS, "burn_in_mean", "burn_in_undefined"]
    atomic_write_text(out / "tables" / f"{experiment}_summary.csv",
                      _csv(rows[columns + sampler].rename(columns={"label": "method"})))
    shown = _text(frame.set_index("dataset").round(4))
    md = [f"# {experiment}: errors, NLPD, Brier, timing and convergence\n",
          f"{spec['description']}. Error and s.e. over successful folds; times in seconds "
          "(fit, per fold and in total); converged = fraction of folds whose method reported "
          "convergence and raised no ConvergenceWarning; optimiser warnings = folds that raised "
          "one (their texts are in the fold results); non-finite NLPD = folds where a test "
          "point's true class has probability 0 (their NLPD, and the mean, is inf).\n",
          _markdown(shown, "dataset")]
    chains = rows[rows["rhat_u"].notna()]
    if len(chains):
        diagnostics = chains[["dataset", "label", *sampler]].rename(columns={"label": "method"})
        md += ["\n## Sampler convergence\n",
               "Medians over the runs of split R-hat and effective sample size (all chains' kept "
               "draws) of u, g, eta, n_gamma and the predictive probabilities at probe points "
               "(largest R-hat, smallest ESS); Brooks burn-in: mean over the runs where it is "
               "defined, and the number of runs where it is not.\n",
               _markdown(_text(diagnostics.set_index("dataset").round(2)), "dataset")]
    atomic_write_text(out / "tables" / f"{experiment}_summary.md", "\n".join(md))


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path):
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, bbox_inches="tight", metadata={"Software": None})
    _pyplot().close(fig)
    atomic_write_bytes(path, buf.getvalue())


def write_convergence_figure(spec: dict, folds: pd.DataFrame, path: Path):
    """One panel per data set: the trace value (default log Z) per EM iteration of one fold,
    or per sampler sweep where the trace records its ``sweep`` numbers."""
    plt = _pyplot()
    mine = folds[(folds["experiment"] == spec["experiment"]) & folds["method"].isin(spec["methods"])
                 & (folds["fold"] == spec.get("fold", 0))]
    datasets = spec.get("datasets") or list(dict.fromkeys(mine["dataset"]))
    fig, axes = plt.subplots(1, max(1, len(datasets)), figsize=(3.2 * max(1, len(datasets)), 2.8),
                             squeeze=False, layout="constrained")
    key = spec.get("value", "log_evidence")
    for ax, dataset in zip(axes[0], datasets):
        sweeps = False
        for row in mine[mine["dataset"] == dataset].itertuples():
            trace = json.loads(row.trace) if isinstance(row.trace, str) else []
            steps = [step for step in trace if step.get(key) is not None]
            sweeps = all("sweep" in step for step in steps) and bool(steps)
            x = [step["sweep"] for step in steps] if sweeps else range(len(steps))
            ax.plot(x, [step[key] for step in steps], marker="" if sweeps else ".", lw=0.8,
                    label=row.label)
        ax.set_title(dataset, fontsize=9)
        ax.set_xlabel("sweep" if sweeps else "EM iteration")
    axes[0][0].set_ylabel(key)
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(spec["title"], fontsize=10)
    _save(fig, path)


def write_relevance_figure(spec: dict, folds: pd.DataFrame, data_meta: dict, config: dict,
                           path: Path):
    """Bars of a per-feature fitted hyperparameter (mean and s.d. over folds) per data set."""
    plt = _pyplot()
    experiment = config["experiments"][spec["experiment"]]
    datasets = spec.get("datasets") or list(experiment["datasets"])
    key = spec.get("value", "inverse_lengthscale")
    fig, axes = plt.subplots(1, len(datasets), figsize=(4 * len(datasets), 3), squeeze=False,
                             layout="constrained")
    for ax, dataset in zip(axes[0], datasets):
        rows = folds[(folds["experiment"] == spec["experiment"]) & (folds["dataset"] == dataset)
                     & folds["method"].isin(spec["methods"]) & (folds["status"] == "ok")]
        values = np.array([np.atleast_1d(json.loads(h).get(key, np.nan))
                           for h in rows["hyperparameters"]], dtype=float)
        data = experiment["datasets"][dataset].get("data", dataset)
        names = data_meta.get(data, {}).get("feature_names") or []
        if values.size:
            ax.bar(range(values.shape[1]), values.mean(0), yerr=values.std(0), color="tab:blue")
            ax.set_xticks(range(values.shape[1]), names[:values.shape[1]] or None,
                          rotation=60, fontsize=7)
        ax.set_title(dataset, fontsize=9)
        ax.set_ylabel(key)
    fig.suptitle(spec["title"], fontsize=10)
    _save(fig, path)


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


def write_hmc_relevance_figure(spec: dict, folds: pd.DataFrame, data_meta: dict, config: dict,
                               path: Path):
    """W&B Figure 2: per feature, the log of a per-feature hyperparameter (default the ARD
    weight w_l = inverse lengthscale) of one fold: posterior mean ± one s.d. of a sampler
    (circles) beside point estimates (squares), one panel per data set."""
    plt = _pyplot()
    experiment = config["experiments"][spec["experiment"]]
    datasets = spec.get("datasets") or list(experiment["datasets"])
    key, fold = spec.get("value", "inverse_lengthscale"), spec.get("fold", 0)
    fig, axes = plt.subplots(1, len(datasets), figsize=(6.5 * len(datasets), 4), squeeze=False,
                             layout="constrained")
    offsets = np.linspace(-0.15, 0.15, len(spec["methods"]))
    for ax, dataset in zip(axes[0], datasets):
        names = data_meta.get(experiment["datasets"][dataset].get("data", dataset),
                              {}).get("feature_names") or []
        for offset, method in zip(offsets, spec["methods"]):
            rows = folds[(folds["experiment"] == spec["experiment"])
                         & (folds["dataset"] == dataset) & (folds["method"] == method)
                         & (folds["fold"] == fold) & (folds["status"] == "ok")]
            if rows.empty:
                continue
            row = rows.iloc[0]
            mean, sd = log_hyperparameter_summary(json.loads(row["trace"]),
                                                  json.loads(row["hyperparameters"]), key)
            x = np.arange(1, mean.size + 1) + offset
            if sd is None:
                ax.plot(x, mean, "s", mfc="none", label=f"{row['label']} (fitted)")
            else:
                ax.errorbar(x, mean, yerr=sd, fmt="o", capsize=3,
                            label=f"{row['label']} (posterior mean ± 1 s.d.)")
            ticks = np.arange(1, mean.size + 1)
            ax.set_xticks(ticks, [f"{i}. {n}" for i, n in zip(ticks, names)] if names else ticks,
                          rotation=45, fontsize=7)
        ax.set_xlabel(f"input variable ({dataset}, fold {fold})", fontsize=8)
        ax.set_ylabel(f"log {key}")
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.35))
    fig.suptitle(textwrap.fill(spec["title"], 100), fontsize=10)
    _save(fig, path)


def softmax_laplace_predict(hyperparameters: list[dict], X_train, y_train, X,
                            discrete_features=None, random_state=None) -> np.ndarray:
    """Classes of ``X`` predicted by the softmax Laplace GP at fixed per-class hyperparameters.

    What :class:`~gpcbench.estimators.laplace_softmax.SoftmaxLaplaceGaussianProcessClassifier`
    does with ``hyperparameter_learning="fixed"`` (the Laplace mode at the given covariances,
    the Gaussian latent predictive, the class of largest Monte Carlo softmax probability with
    its default 1000 draws), composed from :mod:`gpcbench.inference.laplace_softmax` because
    the estimators take one set of hyperparameters for all classes, while Laplace-EM and MPL
    record one per class (``hyperparameters_``, one dict per class in class order).
    """
    from gpcbench.covariance import Covariance
    from gpcbench.inference.laplace_softmax import (
        SoftmaxCovariance,
        laplace_mode,
        latent_predictive,
        mc_class_probabilities,
    )

    classes, index = np.unique(y_train, return_inverse=True)
    if len(hyperparameters) != classes.size:
        raise ValueError(f"{len(hyperparameters)} sets of hyperparameters for "
                         f"{classes.size} classes")
    Y = np.eye(classes.size)[index].T
    covariance = SoftmaxCovariance(tuple(Covariance(**h, discrete_features=discrete_features)
                                         for h in hyperparameters), classes.size)
    state = laplace_mode(covariance(X_train), Y)
    mean, cov = latent_predictive(state, covariance.cross(X, X_train), covariance.diag(X), Y)
    return classes[np.argmax(mc_class_probabilities(mean, cov, random_state=random_state),
                             axis=1)]


def write_decision_regions_figure(spec: dict, folds: pd.DataFrame, datasets: dict,
                                  splits: dict, config: dict, path: Path, grid_size: int = 150):
    """Cho et al. Fig. 1(c): the class a softmax Laplace method predicts over a grid of a
    two-feature data set, refitted on one fold's training rows at the hyperparameters the
    fold recorded (no learning), with the training points and the misclassified test points.

    ``datasets`` maps processed data set names to :class:`~gpcbench.data.dataset.Dataset`,
    ``splits`` maps ``(experiment, entry)`` to the split file's content. The title gives the
    refit's test error beside the fold record's (they agree up to the Laplace mode's
    tolerance).
    """
    from gpcbench.experiments.run_fold import standardize

    plt = _pyplot()
    experiment = config["experiments"][spec["experiment"]]
    (method,), fold = spec["methods"], spec.get("fold", 0)
    entry = (spec.get("datasets") or list(experiment["datasets"]))[0]
    data = _given(datasets, experiment["datasets"][entry].get("data", entry), "--data")
    if data.X.shape[1] != 2:
        raise ValueError(f"decision regions need 2 input features; {entry} has {data.X.shape[1]}")
    rows = folds[(folds["experiment"] == spec["experiment"]) & (folds["dataset"] == entry)
                 & (folds["method"] == method) & (folds["fold"] == fold)
                 & (folds["status"] == "ok")]
    if rows.empty:
        raise ValueError(f"no successful result of {method} on {entry} fold {fold}")
    row = rows.iloc[0]
    split = _given(splits, (spec["experiment"], entry), "--splits")["folds"][fold]
    train, test = np.asarray(split["train"]), np.asarray(split["test"])
    lo, hi = data.X.min(axis=0), data.X.max(axis=0)
    lo, hi = lo - 0.05 * (hi - lo), hi + 0.05 * (hi - lo)
    g0, g1 = np.meshgrid(np.linspace(lo[0], hi[0], grid_size), np.linspace(lo[1], hi[1], grid_size))
    grid = np.column_stack([g0.ravel(), g1.ravel()])
    X_train, X_new = data.X[train], np.vstack([data.X[test], grid])
    if experiment.get("standardize", True):
        X_train, X_new = standardize(X_train, X_new)
    predicted = softmax_laplace_predict(
        json.loads(row["hyperparameters"]), X_train, data.y[train], X_new,
        [kind == "discrete" for kind in data.feature_types], int(row["seed"]))
    on_test, on_grid = predicted[:test.size], predicted[test.size:]
    wrong = test[on_test != data.y[test]]
    n_classes = len(data.class_names)
    colours = plt.get_cmap("tab10")(np.arange(n_classes))
    fig, ax = plt.subplots(figsize=(5.5, 5))
    ax.contourf(g0, g1, on_grid.reshape(g0.shape), levels=np.arange(n_classes + 1) - 0.5,
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
    ax.set_title(f"{spec['title']}\n{row['label']}, fold {fold}: test error "
                 f"{wrong.size / test.size:.3f} (fold record {float(row['error']):.3f})",
                 fontsize=9)
    _save(fig, path)


def write_figure(all_cells: pd.DataFrame, out: Path):
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 5))
    both = all_cells.dropna(subset=["ours", "pub_mean"])
    for name, group in both.groupby("table"):
        ax.scatter(group["pub_fraction"], group["ours_fraction"], label=name, s=18)
    ax.plot([0, 0.5], [0, 0.5], color="grey", lw=0.8)
    ax.set_xlabel("published error rate")
    ax.set_ylabel("reproduced error rate")
    ax.set_title("Reproduced vs published error rates")
    if len(both):
        ax.legend(fontsize=6)
    _save(fig, out / "figures" / "published_vs_reproduced.png")


def _error_fractions(name: str, table: dict, cells: pd.DataFrame) -> pd.DataFrame:
    """Cells of an error-metric table with ours and the published value as error rates."""
    denom = (cells.groupby("entry")["n_test"].transform("max") if table["metric"] == "errors"
             else {"error": 1.0, "error_percent": 100.0}[table["metric"]])
    return cells.assign(table=name, ours_fraction=cells["ours"] / denom,
                        pub_fraction=cells["pub_mean"] / denom)


def _entry_notes(config: dict, table: dict, data_meta: dict) -> list[str]:
    """The table's ``notes``, then per column its data set's substitute note (once per data
    set, at its first column, naming every column that uses it) and the entry's ``note``."""
    notes = list(table.get("notes", []))
    experiment = config["experiments"][table["experiment"]]
    data = {entry: experiment["datasets"][entry].get("data", entry) for entry in table["datasets"]}
    for entry, printed in table["datasets"].items():
        spec = experiment["datasets"][entry]
        meta = data_meta.get(data[entry], {})
        sharing = [e for e in data if data[e] == data[entry]]
        if meta.get("substitute") and sharing[0] == entry:
            columns = ", ".join(table["datasets"][e] for e in sharing)
            notes.append(f"{columns}: {meta['substitute']} — "
                         f"{meta.get('differences', '')}".rstrip(" —"))
        if spec.get("note"):
            notes.append(f"{printed}: {spec['note']}")
    return notes


REPORT_KINDS = ("table", "summary", "figure", "overview")


def report_targets(config: dict) -> list[str]:
    """Every output group of the report: ``table:NAME`` per config table, ``summary:NAME`` per
    experiment, ``figure:NAME`` per config figure, and ``overview`` (the published-vs-reproduced
    figure and ``index.md``)."""
    return [*(f"table:{name}" for name in config["tables"]),
            *(f"summary:{name}" for name in config["experiments"]),
            *(f"figure:{name}" for name in config.get("figures", {})), "overview"]


def _parse_target(config: dict, target: str) -> tuple[str, str]:
    kind, _, name = target.partition(":")
    if kind not in REPORT_KINDS:
        raise ValueError(f"unknown report output '{target}' (expected table:NAME, "
                         "summary:EXPERIMENT, figure:NAME or overview)")
    if kind == "overview":
        if name:
            raise ValueError(f"report output 'overview' takes no name (got '{target}')")
        return kind, name
    section = {"table": "tables", "summary": "experiments", "figure": "figures"}[kind]
    if name not in config.get(section, {}):
        raise ValueError(f"unknown {kind} '{name}' (not in the config's {section})")
    return kind, name


def write_table_files(name: str, config: dict, folds: pd.DataFrame, published_dir,
                      data_meta: dict, out: Path, datasets: dict | None = None) -> pd.DataFrame:
    """``tables/<name>.md/.csv/.tex`` of one config table. ``config`` needs only the table and
    its experiment; ``data_meta`` only the table's data sets (for the notes); ``datasets``
    (processed name -> Dataset) only for a confusion table (its class names)."""
    table = config["tables"][name]
    notes = _entry_notes(config, table, data_meta)
    if table["metric"] == "confusion":
        entries = config["experiments"][table["experiment"]]["datasets"]
        class_names = {entry: _given(datasets, entries[entry].get("data", entry),
                                     "--data").class_names
                       for entry in table["datasets"]}
        try:
            cells = confusion_cells(table, folds,
                                    published_confusion(table, Path(published_dir)), class_names)
        except ValueError as exc:
            raise ValueError(f"table '{name}': {exc}") from None
        write_confusion_table(name, table, cells, notes, Path(out))
        return cells
    spec = config["experiments"][table["experiment"]]
    expected = {entry: n_folds(entry_protocol(spec, entry)) for entry in table["datasets"]}
    cells = table_cells(table, folds, _published(name, table, published_dir), expected)
    write_table(name, table, cells, notes, Path(out))
    return cells


def _published(name: str, table: dict, published_dir) -> pd.DataFrame:
    """:func:`published_cells` of one config table, its errors naming the table."""
    try:
        return published_cells(table, Path(published_dir))
    except ValueError as exc:
        raise ValueError(f"table '{name}': {exc}") from None


def write_config_figure(name: str, config: dict, folds: pd.DataFrame, data_meta: dict,
                        out: Path, datasets: dict | None = None, splits: dict | None = None):
    """``figures/<name>.png`` of one config figure (convergence, relevance, hmc_relevance or
    decision_regions; the last needs its data set in ``datasets`` and its split in
    ``splits``, keyed by (experiment, entry))."""
    spec = config["figures"][name]
    path = Path(out) / "figures" / f"{name}.png"
    if spec["type"] == "convergence":
        write_convergence_figure(spec, folds, path)
    elif spec["type"] == "relevance":
        write_relevance_figure(spec, folds, data_meta, config, path)
    else:
        try:
            if spec["type"] == "hmc_relevance":
                write_hmc_relevance_figure(spec, folds, data_meta, config, path)
            else:
                write_decision_regions_figure(spec, folds, datasets, splits, config, path)
        except ValueError as exc:
            raise ValueError(f"figure '{name}': {exc}") from None


def write_overview(config: dict, folds: pd.DataFrame, published_dir, data_meta: dict, out: Path):
    """``figures/published_vs_reproduced.png`` (every error-metric table's cells) and
    ``index.md`` (links, completeness, failed folds, provenance): needs the whole config and
    every experiment's folds."""
    out = Path(out)
    all_cells = [
        _error_fractions(name, table,
                         table_cells(table, folds, _published(name, table, published_dir)))
        for name, table in config["tables"].items() if table["metric"] in ERROR_METRICS
    ]
    write_figure(pd.concat(all_cells, ignore_index=True) if all_cells else
                 pd.DataFrame(columns=["table", "ours", "pub_mean", "ours_fraction",
                                       "pub_fraction"]), out)
    write_index(config, folds, data_meta, out)


def write_report(config: dict, fold_tables, published_dir, out_dir, data_meta_paths=(),
                 only: str | None = None, data_paths=(), split_paths=()):
    """Write one output group of ``report_targets`` (``only``, e.g. ``table:kim2006_table4``)
    or, without ``only``, all of them under ``out_dir``. The Snakemake rules run one group per
    job, passing only the folds, data-set metadata and config that group needs, and the
    processed data sets (``data/processed/<name>.npz``) and split files
    (``data/splits/<experiment>/<entry>.json``) of confusion tables and decision-region
    figures."""

    targets = [_parse_target(config, only)] if only else [
        _parse_target(config, target) for target in report_targets(config)]
    out = Path(out_dir)
    folds = pd.concat([pd.read_csv(p) for p in fold_tables], ignore_index=True)
    data_meta = {Path(p).stem: json.loads(Path(p).read_text()) for p in data_meta_paths}
    datasets = {Path(p).stem: load_dataset(Path(p)) for p in data_paths}
    splits = {(Path(p).parent.name, Path(p).stem): json.loads(Path(p).read_text())
              for p in split_paths}
    summary = summarise(folds) if any(kind == "summary" for kind, _ in targets) else None
    for kind, name in targets:
        if kind == "table":
            write_table_files(name, config, folds, published_dir, data_meta, out, datasets)
        elif kind == "summary":
            write_summary(name, config["experiments"][name], summary, out)
        elif kind == "figure":
            write_config_figure(name, config, folds, data_meta, out, datasets, splits)
        else:
            write_overview(config, folds, published_dir, data_meta, out)


def write_index(config, folds, data_meta, out: Path):
    commits = sorted(set(folds["git_commit"].dropna()))
    packages = json.loads(folds["packages"].dropna().iloc[0]) if folds["packages"].notna().any() else {}
    lines = ["# gpcbench reports\n",
             f"Generated {datetime.now(timezone.utc).date().isoformat()} from "
             f"{len(folds)} fold results ({(folds['status'] == 'ok').sum()} ok).\n",
             "## Tables (reproduced beside published)\n"]
    lines += [f"- [{t['title']}](tables/{n}.md) ([csv](tables/{n}.csv), [tex](tables/{n}.tex))"
              for n, t in config["tables"].items()]
    lines += ["\n## Per-experiment summaries (errors, NLPD, Brier, timing, convergence)\n"]
    lines += [f"- [{n}](tables/{n}_summary.md): {e['description']}"
              for n, e in config["experiments"].items()]
    lines += ["\n## Figures\n", "![reproduced vs published](figures/published_vs_reproduced.png)\n"]
    lines += [f"![{f['title']}](figures/{n}.png)\n" for n, f in config.get("figures", {}).items()]
    lines += ["## Completeness\n"]
    lines += _completeness(config, folds) or ["- every fold result of the config is in"]
    lines += ["\n## Failed fold jobs\n"]
    failed = folds[folds["status"] != "ok"]
    lines += [f"- {r.experiment} / {r.dataset} / {r.label} fold {r.fold}: {r.status} — {r.message}"
              for r in failed.itertuples()] or ["- none"]
    lines += ["\n## Provenance\n", f"- git commit(s) of the results: {', '.join(commits)}",
              "- packages: " + ", ".join(f"{k} {v}" for k, v in sorted(packages.items())),
              f"- seed: {config['seed']}; offline: {config['offline']}",
              "\n| data set | kind | source (package version, or URL) | rows × cols | content SHA-256 | substitute |",
              "|---|---|---|---|---|---|"]
    for name, meta in sorted(data_meta.items()):
        lines.append(f"| {name} | {meta.get('kind', '')} | {_sources(meta)} "
                     f"| {meta.get('rows')} × {meta.get('columns')} | {str(meta.get('sha256', ''))[:12]} "
                     f"| {meta.get('substitute') or ''} |")
    atomic_write_text(out / "index.md", "\n".join(lines) + "\n")


def _completeness(config: dict, folds: pd.DataFrame) -> list[str]:
    """One line per experiment whose fold results are not all in (a partial run's report)."""
    found = folds.groupby("experiment").size()
    lines = []
    for name, spec in config["experiments"].items():
        expected = sum(len(entry_methods(spec, entry)) * n_folds(entry_protocol(spec, entry))
                       for entry in spec["datasets"])
        if found.get(name, 0) < expected:
            lines.append(f"- {name}: {found.get(name, 0)} of {expected} fold results; "
                         "cells of missing folds show — or fewer folds")
    return lines


def _given(inputs: dict, key, option: str):
    """``inputs[key]``, or a one-line error naming the missing report input."""
    if key not in inputs:
        name = "/".join(key) if isinstance(key, tuple) else key
        raise ValueError(f"report needs '{name}': pass it with {option}")
    return inputs[key]


def _sources(meta: dict) -> str:
    """'package version' (or URL) of every raw set a processed data set was built from."""
    if meta.get("kind") == "generator":
        return f"generator (seed {meta.get('seed')})"
    parts = []
    for raw in meta.get("raw_sets", {}).values():
        origin = f"{raw['package']} {raw.get('version', '')}" if raw.get("package") else raw.get("url", "")
        parts.append(f"{origin.strip()} ({raw.get('source', '')})")
    return "; ".join(parts)
