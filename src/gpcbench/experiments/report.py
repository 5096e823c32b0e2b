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

from gpcbench.experiments.aggregate import summarise
from gpcbench.io import atomic_write_bytes, atomic_write_text

PUBLISHED_PARTITIONS = {"se": None, "sd": 20}  # Zhang et al.: s.d. over 20 partitions


def _scale(metric: str, n_test: float) -> float:
    return {"error": 1.0, "error_percent": 100.0, "errors": n_test}[metric]


def published_cells(table: dict, published_dir: Path) -> pd.DataFrame:
    """Published (dataset entry, method, mean, spread) rows of one table, in its own units."""
    spec = table.get("published")
    if not spec:
        return pd.DataFrame(columns=["entry", "method", "pub_mean", "pub_spread"])
    raw = pd.read_csv(Path(published_dir) / spec["file"], dtype={"method": str})
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


def table_cells(table: dict, summary: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """Long table: one row per (data set, method) with ours, published and the flag."""
    names = table.get("method_names", {})
    ours = summary[(summary["experiment"] == table["experiment"])
                   & summary["dataset"].isin(table["datasets"])].copy()
    ours["method_printed"] = ours["label"].map(lambda label: names.get(label, label))
    rows = []
    for r in ours.itertuples():
        scale = _scale(table["metric"], r.n_test_mean)
        spread_kind = table.get("spread", "se")
        spread = {"se": r.error_se, "sd": r.error_sd}.get(spread_kind, np.nan) * scale
        rows.append({"entry": r.dataset, "method": r.method_printed, "ours": r.error_mean * scale,
                     "ours_spread": spread, "ours_se": r.error_se * scale, "n_ok": r.n_ok,
                     "n_folds": r.n_folds, "n_test": r.n_test_mean, "failures": r.failures})
    cells = pd.DataFrame(rows, columns=["entry", "method", "ours", "ours_spread", "ours_se",
                                        "n_ok", "n_folds", "n_test", "failures"])
    cells = cells.merge(published, on=["entry", "method"], how="outer")
    cells["flag"] = [_differs(table, r) for r in cells.itertuples()]
    cells.insert(0, "dataset", cells["entry"].map(table["datasets"]))
    return cells


def _differs(table: dict, cell) -> bool:
    """|ours - published| > 2 combined standard errors (False when either is missing)."""
    if pd.isna(cell.ours) or pd.isna(cell.pub_mean):
        return False
    scale = _scale(table["metric"], cell.n_test)
    spread_kind = table.get("spread", "se")
    if spread_kind == "none" or pd.isna(cell.ours_se):
        p = np.clip(cell.ours / scale, 1e-3, 1 - 1e-3)
        se_one = np.sqrt(p * (1 - p) / cell.n_test) * scale
        combined = np.sqrt(2) * se_one
    else:
        pub_se = cell.pub_spread
        if spread_kind == "sd" and not pd.isna(pub_se):
            pub_se = pub_se / np.sqrt(PUBLISHED_PARTITIONS["sd"])
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
    digits = {"error": 4, "error_percent": 2, "errors": 1}[table["metric"]]
    text = cells.assign(text=[_cell_text(r, digits) for r in cells.itertuples()])
    wide = text.pivot_table(index="method", columns="dataset", values="text", aggfunc="first")
    order = [table["datasets"][e] for e in table["datasets"] if table["datasets"][e] in wide.columns]
    return wide.reindex(columns=order).fillna("—")


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


def write_figure(all_cells: pd.DataFrame, out: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
    atomic_write_bytes(out / "figures" / "published_vs_reproduced.png", buf.getvalue())


def _entry_notes(config: dict, table: dict, data_meta: dict) -> list[str]:
    notes = []
    experiment = config["experiments"][table["experiment"]]
    for entry, printed in table["datasets"].items():
        spec = experiment["datasets"][entry]
        meta = data_meta.get(spec.get("data", entry), {})
        if meta.get("substitute"):
            notes.append(f"{printed}: {meta['substitute']} — {meta.get('differences', '')}".rstrip(" —"))
        if spec.get("note"):
            notes.append(f"{printed}: {spec['note']}")
    return notes


def write_report(config: dict, fold_tables, published_dir, out_dir, data_meta_paths=()):
    """Write every table, summary, figure and ``index.md`` under ``out_dir``."""
    out = Path(out_dir)
    folds = pd.concat([pd.read_csv(p) for p in fold_tables], ignore_index=True)
    summary = summarise(folds)
    data_meta = {Path(p).stem: json.loads(Path(p).read_text()) for p in data_meta_paths}
    all_cells = []
    for name, table in config["tables"].items():
        cells = table_cells(table, summary, published_cells(table, Path(published_dir)))
        write_table(name, table, cells, _entry_notes(config, table, data_meta), out)
        if table["metric"] == "errors":  # counts: divide by the entry's test-set size
            denom = cells.groupby("entry")["n_test"].transform("max")
        else:
            denom = _scale(table["metric"], np.nan)
        all_cells.append(cells.assign(table=name, ours_fraction=cells["ours"] / denom,
                                      pub_fraction=cells["pub_mean"] / denom))
    for name, spec in config["experiments"].items():
        write_summary(name, spec, summary, out)
    write_figure(pd.concat(all_cells, ignore_index=True), out)
    write_index(config, folds, summary, data_meta, out)


def write_index(config, folds, summary, data_meta, out: Path):
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
    lines += ["\n## Figures\n", "![reproduced vs published](figures/published_vs_reproduced.png)\n",
              "## Failed fold jobs\n"]
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


def _sources(meta: dict) -> str:
    """'package version' (or URL) of every raw set a processed data set was built from."""
    if meta.get("kind") == "generator":
        return f"generator (seed {meta.get('seed')})"
    parts = []
    for raw in meta.get("raw_sets", {}).values():
        origin = f"{raw['package']} {raw.get('version', '')}" if raw.get("package") else raw.get("url", "")
        parts.append(f"{origin.strip()} ({raw.get('source', '')})")
    return "; ".join(parts)
