"""reports/: the papers' tables beside the published numbers, summaries, figures, index.

Every output is a pure function of the fold results, the config and ``config/published``.
A reproduced cell is flagged (``!``) when it differs from the published value by more than two
combined standard errors: the published spread converted to a standard error (Kim: s.e. over
10 folds; Zhang: s.d. over 20 partitions) combined with ours, or, for tables printed without a
spread, the binomial standard error of an error rate on the test set.
"""

from __future__ import annotations

import io
import json
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pandas as pd

from gpcbench.config import entry_methods, entry_protocol, n_folds
from gpcbench.experiments.aggregate import summarise
from gpcbench.io import atomic_write_bytes, atomic_write_text

ERROR_METRICS = ("error", "error_percent", "errors")


def metric_values(folds: pd.DataFrame, metric: str) -> pd.Series:
    """Per-fold value of a table's metric (successful folds; NaN elsewhere).

    ``error`` (fraction), ``error_percent``, ``errors`` (count on the test set),
    ``time_s`` (wall seconds of fit + predict), ``log_evidence`` (the method's approximate log marginal likelihood), or
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
    if metric == "log_evidence":
        return pd.to_numeric(folds["log_evidence"], errors="coerce")
    if metric.startswith("hyperparameter:"):
        return folds["hyperparameters"].map(lambda text: _hyperparameter(text, metric))
    if metric.startswith("diagnostic:"):
        return folds["diagnostics"].map(lambda text: _diagnostic(text, metric.split(":", 1)[1]))
    raise ValueError(f"unknown table metric '{metric}'")


def _diagnostic(text, path: str) -> float:
    """The value at a dotted ``path`` of a fold's sampler diagnostics (NaN where absent)."""
    value = json.loads(text) if isinstance(text, str) else None
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return np.nan if value is None else float(value)


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
    """Published (dataset entry, method, mean, spread) rows of one table, in its own units."""
    spec = table.get("published")
    if not spec:
        return pd.DataFrame(columns=["entry", "method", "pub_mean", "pub_spread"])
    raw = pd.read_csv(Path(published_dir) / spec["file"], dtype={"method": str})
    for column, value in spec.get("filter", {}).items():
        raw = raw[raw[column].astype(str) == str(value)]
    printed_to_entry = {printed: entry for entry, printed in table["datasets"].items()}
    rows = []
    for record in raw.to_dict("records"):
        if "columns" in spec:
            for entry, column in spec["columns"].items():
                rows.append((entry, record["method"], record.get(column), None))
            continue
        if "dataset" in raw.columns:
            entry = printed_to_entry.get(record["dataset"])
            if entry is None:
                continue
        else:
            entry = next(iter(table["datasets"]))
        spread = record.get(spec["spread"]) if spec.get("spread") else None
        rows.append((entry, record["method"], record.get(spec["mean"]), spread))
    frame = pd.DataFrame(rows, columns=["entry", "method", "pub_mean", "pub_spread"])
    frame["pub_mean"] = pd.to_numeric(frame["pub_mean"], errors="coerce")
    frame["pub_spread"] = pd.to_numeric(frame["pub_spread"], errors="coerce")
    return frame


def table_cells(table: dict, folds: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Long table: one row per (data set, method) with ours (mean, spread, s.e. over the
    successful folds), the published value and the flag."""
    names = table.get("method_names", {})
    mine = folds[(folds["experiment"] == table["experiment"])
                 & folds["dataset"].isin(table["datasets"])].copy()
    mine["value"] = metric_values(mine, table["metric"]).where(mine["status"] == "ok")
    rows = []
    for (entry, label), group in mine.groupby(["dataset", "label"], sort=False):
        values = group["value"].dropna().to_numpy(dtype=float)
        n = values.size
        sd = float(np.std(values, ddof=1)) if n > 1 else np.nan
        failed = group[group["status"] != "ok"]
        if n == 0 and failed.empty:  # the metric does not apply to this method
            continue
        rows.append({
            "entry": entry, "method": names.get(label, label),
            "ours": float(values.mean()) if n else np.nan,
            "ours_spread": {"se": sd / np.sqrt(n) if n > 1 else np.nan, "sd": sd}.get(
                table.get("spread", "se"), np.nan),
            "ours_se": sd / np.sqrt(n) if n > 1 else np.nan, "n_ok": n, "n_folds": len(group),
            "n_test": group["n_test"].astype(float).mean(),
            "failures": "; ".join(f"fold {r.fold}: {r.status}" for r in failed.itertuples()),
        })
    cells = pd.DataFrame(rows, columns=["entry", "method", "ours", "ours_spread", "ours_se",
                                        "n_ok", "n_folds", "n_test", "failures"])
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
    if pd.isna(r.pub_mean):
        return ours
    return f"{ours}{' !' if r.flag else ''} [{_fmt(r.pub_mean, r.pub_spread, digits)}]"


def wide_table(table: dict, cells: pd.DataFrame) -> pd.DataFrame:
    metric = table["metric"]
    digits = {"error": 4, "error_percent": 2, "errors": 1, "log_evidence": 2, "time_s": 1}.get(
        metric, 1 if metric.startswith("diagnostic:") else 4)
    text = cells.assign(text=[_cell_text(r, digits) for r in cells.itertuples()])
    wide = text.pivot_table(index="method", columns="dataset", values="text", aggfunc="first")
    order = [table["datasets"][e] for e in table["datasets"] if table["datasets"][e] in wide.columns]
    rows = text.sort_values("row", kind="stable")["method"].drop_duplicates()
    return wide.reindex(index=rows, columns=order).fillna("—")


def _markdown(frame: pd.DataFrame, index_name: str) -> str:
    header = [index_name, *map(str, frame.columns)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for index, row in frame.iterrows():
        lines.append("| " + " | ".join([str(index), *map(str, row.tolist())]) + " |")
    return "\n".join(lines) + "\n"


def _latex(frame: pd.DataFrame, title: str) -> str:
    def esc(s):
        return (str(s).replace("\\", r"\textbackslash{}").replace("&", r"\&").replace("%", r"\%")
                .replace("_", r"\_").replace("#", r"\#").replace("±", r"$\pm$").replace("—", "--"))
    cols = "l" + "c" * len(frame.columns)
    lines = [r"\begin{table}", rf"\caption{{{esc(title)}}}", rf"\begin{{tabular}}{{{cols}}}",
             r"\hline", " & ".join(["Method", *map(esc, frame.columns)]) + r" \\", r"\hline"]
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
              "the published value by more than two combined standard errors; — = not run / "
              "not published.")
    md = [f"# {table['title']}\n", legend + "\n", _markdown(wide, "Method")]
    md += [f"- {note}" for note in notes]
    atomic_write_text(out / "tables" / f"{name}.md", "\n".join(md) + "\n")
    atomic_write_text(out / "tables" / f"{name}.csv", _csv(cells))
    atomic_write_text(out / "tables" / f"{name}.tex", _latex(wide, table["title"]))


def write_summary(experiment: str, spec: dict, summary: pd.DataFrame, out: Path):
    """Error, NLPD, Brier, timing and convergence of every cell of one experiment."""
    rows = summary[summary["experiment"] == experiment]
    columns = ["dataset", "label", "n_ok", "n_folds", "error_mean", "error_se", "nlpd_mean",
               "brier_mean", "fit_s_mean", "fit_s_total", "converged_fraction", "failures"]
    frame = rows[columns].rename(columns={"label": "method"})
    atomic_write_text(out / "tables" / f"{experiment}_summary.csv", _csv(frame))
    shown = frame.set_index("dataset").round(4).fillna("—")
    md = [f"# {experiment}: errors, NLPD, Brier, timing and convergence\n",
          f"{spec['description']}. Error and s.e. over successful folds; times in seconds "
          "(fit, per fold and in total); converged = fraction of folds whose method reported "
          "convergence.\n", _markdown(shown, "dataset")]
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
                             squeeze=False)
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
    fig, axes = plt.subplots(1, len(datasets), figsize=(4 * len(datasets), 3), squeeze=False)
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
    notes = list(table.get("notes", []))
    experiment = config["experiments"][table["experiment"]]
    for entry, printed in table["datasets"].items():
        spec = experiment["datasets"][entry]
        meta = data_meta.get(spec.get("data", entry), {})
        if meta.get("substitute"):
            notes.append(f"{printed}: {meta['substitute']} — {meta.get('differences', '')}".rstrip(" —"))
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
                      data_meta: dict, out: Path) -> pd.DataFrame:
    """``tables/<name>.md/.csv/.tex`` of one config table. ``config`` needs only the table and
    its experiment; ``data_meta`` only the table's data sets (for the notes)."""
    table = config["tables"][name]
    cells = table_cells(table, folds, published_cells(table, Path(published_dir)))
    write_table(name, table, cells, _entry_notes(config, table, data_meta), Path(out))
    return cells


def write_config_figure(name: str, config: dict, folds: pd.DataFrame, data_meta: dict,
                        out: Path):
    """``figures/<name>.png`` of one config figure (convergence or relevance)."""
    spec = config["figures"][name]
    path = Path(out) / "figures" / f"{name}.png"
    if spec["type"] == "convergence":
        write_convergence_figure(spec, folds, path)
    else:
        write_relevance_figure(spec, folds, data_meta, config, path)


def write_overview(config: dict, folds: pd.DataFrame, published_dir, data_meta: dict, out: Path):
    """``figures/published_vs_reproduced.png`` (every error-metric table's cells) and
    ``index.md`` (links, completeness, failed folds, provenance): needs the whole config and
    every experiment's folds."""
    out = Path(out)
    all_cells = [
        _error_fractions(name, table,
                         table_cells(table, folds, published_cells(table, Path(published_dir))))
        for name, table in config["tables"].items() if table["metric"] in ERROR_METRICS
    ]
    write_figure(pd.concat(all_cells, ignore_index=True) if all_cells else
                 pd.DataFrame(columns=["table", "ours", "pub_mean", "ours_fraction",
                                       "pub_fraction"]), out)
    write_index(config, folds, data_meta, out)


def write_report(config: dict, fold_tables, published_dir, out_dir, data_meta_paths=(),
                 only: str | None = None):
    """Write one output group of ``report_targets`` (``only``, e.g. ``table:kim2006_table4``)
    or, without ``only``, all of them under ``out_dir``. The Snakemake rules run one group per
    job, passing only the folds, data-set metadata and config that group needs."""
    targets = [_parse_target(config, only)] if only else [
        _parse_target(config, target) for target in report_targets(config)]
    out = Path(out_dir)
    folds = pd.concat([pd.read_csv(p) for p in fold_tables], ignore_index=True)
    data_meta = {Path(p).stem: json.loads(Path(p).read_text()) for p in data_meta_paths}
    summary = summarise(folds) if any(kind == "summary" for kind, _ in targets) else None
    for kind, name in targets:
        if kind == "table":
            write_table_files(name, config, folds, published_dir, data_meta, out)
        elif kind == "summary":
            write_summary(name, config["experiments"][name], summary, out)
        elif kind == "figure":
            write_config_figure(name, config, folds, data_meta, out)
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


def _sources(meta: dict) -> str:
    """'package version' (or URL) of every raw set a processed data set was built from."""
    if meta.get("kind") == "generator":
        return f"generator (seed {meta.get('seed')})"
    parts = []
    for raw in meta.get("raw_sets", {}).values():
        origin = f"{raw['package']} {raw.get('version', '')}" if raw.get("package") else raw.get("url", "")
        parts.append(f"{origin.strip()} ({raw.get('source', '')})")
    return "; ".join(parts)
