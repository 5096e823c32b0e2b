"""Report tables as text: cells as printed, Markdown, LaTeX and CSV, and the files of one
table (``tables/<name>.md/.csv/.tex``) or one experiment's summary."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from gpcbench.experiments.aggregate import SAMPLER_DIAGNOSTICS
from gpcbench.io import atomic_write_text

#: Decimals a table's metric is printed with (diagnostics 1, other metrics 4).
DIGITS = {"error": 4, "error_percent": 2, "errors": 1, "log_evidence": 2, "time_s": 1,
          "cpu_s": 1, "sweeps_per_s": 2}

#: Where the report explains the two-standard-error test (relative to reports/tables/).
FIDELITY_DOC = "../../docs/fidelity.md"
#: Each metric's unit, as a table's header states it.
UNITS = {"error": "error rate, the fraction of test points misclassified",
         "error_percent": "test error in percent", "errors": "number of test errors",
         "time_s": "wall seconds of fit and predict per run",
         "cpu_s": "CPU seconds of fit and predict per run",
         "sweeps_per_s": "sampler sweeps (all chains) per wall second of fit",
         "log_evidence": "approximate log evidence log Z"}
SPREADS = {"se": "s.e.", "sd": "s.d."}
NOT_IN_PAPER = "†"

TABLE_LEGEND = (
    f"`!` = differs from the published value by more than two combined standard errors "
    f"([how an s.e. is derived]({FIDELITY_DOC})); {NOT_IN_PAPER} = a row not in the paper; "
    "(k/N) = only k of the protocol's N runs are in; (k stale) = k runs were made by other "
    "code than HEAD's or with other options, seed or data than the config's now; "
    "(k undefined) = k runs have no value (the table's notes say why); — = not run / not "
    "published.")

CONFUSION_LEGEND = (
    "Cells: fraction of the row's true class assigned to the column's predicted class, "
    "from the confusion counts summed over the successful folds (partitions) ± s.e. "
    "over folds [published rate]; `!` = differs from the published rate by more "
    "than two standard errors; a cell without [ ] has no published rate.")


def format_value(value, spread, digits: int) -> str:
    """``value ± spread`` to ``digits`` decimals (— when missing, no spread when it is)."""
    if pd.isna(value):
        return "—"
    text = f"{value:.{digits}f}"
    return text if pd.isna(spread) else f"{text} ± {spread:.{digits}f}"


def cell_text(r, digits: int) -> str:
    """One printed cell: ours with its failed, undefined and missing folds counted, the flag
    and the published value in brackets."""
    ours = format_value(r.ours, r.ours_spread, digits)
    if isinstance(r.failures, str) and r.failures:
        ours += f" ({int(r.n_folds - r.n_ok)} failed)"
    if getattr(r, "n_undefined", 0) > 0:
        ours += f" ({int(r.n_undefined)} undefined)"
    expected = getattr(r, "n_expected", np.nan)  # confusion cells head their section instead
    if r.n_folds < expected:  # NaN (no run, or no expected count) compares False
        ours += f" ({int(r.n_folds)}/{int(expected)})"
    if getattr(r, "n_stale", 0) > 0:
        ours += f" ({int(r.n_stale)} stale)"
    if pd.isna(r.pub_mean):
        return ours
    return f"{ours}{' !' if r.flag else ''} [{format_value(r.pub_mean, r.pub_spread, digits)}]"


def unit(metric: str) -> str:
    """The unit a table's header states for its metric."""
    if metric.startswith("hyperparameter:"):
        return f"the learned {metric.split(':', 1)[1]}"
    if metric.startswith("trace_burn_in:") or metric.endswith("burn_in"):
        return "sweeps"
    if metric.startswith("diagnostic:"):
        return "sweeps" if metric.endswith("most_frequency") else "number of active vectors"
    return UNITS[metric]


def table_header(table: dict, runs: str) -> str:
    """The line under a table's title: its unit and what a cell holds, ours and published;
    ``runs`` says over what ours is taken (e.g. '10 folds', '20 random partitions'; '' for
    one fixed training / test split)."""
    spread = SPREADS.get(table.get("spread", "se"))
    if not runs:
        ours = "on the fixed training / test split"
    else:
        ours = f"mean ± {spread} over {runs}" if spread else f"mean over {runs}"
    published = f"published mean ± {spread}" if spread else "published value"
    if spread == "s.d." and table.get("published"):
        published += (f" over the paper's {table['published']['n']} partitions, which the "
                      f"two-s.e. test reads as an s.e. of s.d. / √{table['published']['n']}")
    return f"**Unit**: {unit(table['metric'])}. **Cell**: ours, {ours} [{published}]."


def wide_table(table: dict, cells: pd.DataFrame) -> pd.DataFrame:
    """The printed table: one row per method (the cells' row order), one column per data set
    (the table's order), each cell as :func:`cell_text` gives it; when the table has published
    values, a method without any is marked not in the paper."""
    metric = table["metric"]
    digits = DIGITS.get(metric, 1 if metric.startswith(("diagnostic:", "trace_burn_in:")) else 4)
    text = cells.assign(text=[cell_text(r, digits) for r in cells.itertuples()])
    wide = text.pivot_table(index="method", columns="dataset", values="text", aggfunc="first")
    order = [table["datasets"][e] for e in table["datasets"] if table["datasets"][e] in wide.columns]
    rows = text.sort_values("row", kind="stable")["method"].drop_duplicates()
    wide = text_frame(wide.reindex(index=rows, columns=order))
    printed = set(cells.loc[cells["pub_mean"].notna(), "method"])
    if printed:
        wide.index = [m if m in printed else f"{m} {NOT_IN_PAPER}" for m in wide.index]
    return wide


def text_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Every cell as the text ``str`` gives it, missing values as —."""
    return frame.astype(object).map(lambda value: "—" if pd.isna(value) else str(value))


def markdown(frame: pd.DataFrame, index_name: str) -> str:
    header = [index_name, *map(str, frame.columns)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for index, row in frame.iterrows():
        lines.append("| " + " | ".join([str(index), *map(str, row.tolist())]) + " |")
    return "\n".join(lines) + "\n"


def latex(frame: pd.DataFrame, title: str, index_name: str = "Method") -> str:
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


def write_table(name: str, table: dict, cells: pd.DataFrame, notes: list[str], out: Path,
                runs: str):
    """``tables/<name>.md`` (the wide table under its unit, cell and legend lines, then the
    notes), ``.csv`` (the long cells) and ``.tex`` (the wide table); ``runs`` as
    :func:`table_header` takes it."""
    wide = wide_table(table, cells)
    md = [f"# {table['title']}\n", table_header(table, runs) + "\n", TABLE_LEGEND + "\n",
          markdown(wide, "Method")]
    md += [f"- {note}" for note in notes]
    atomic_write_text(out / "tables" / f"{name}.md", "\n".join(md) + "\n")
    atomic_write_text(out / "tables" / f"{name}.csv", cells.to_csv(index=False))
    atomic_write_text(out / "tables" / f"{name}.tex", latex(wide, table["title"]))


def runs_line(cell) -> str:
    """What a confusion block is built from: 'k of n folds', then the protocol's folds not run
    (a partial run), stale folds and failures where there are any."""
    notes = [f"{int(cell.n_expected - cell.n_folds)} of the protocol's {int(cell.n_expected)} "
             "not run"] if cell.n_folds < cell.n_expected else []
    notes += [f"{cell.n_stale} stale"] if cell.n_stale else []
    notes += [cell.failures] if cell.failures else []
    return f"{cell.n_ok} of {cell.n_folds} folds" + (f" ({'; '.join(notes)})" if notes else "")


def write_confusion_table(name: str, table: dict, cells: pd.DataFrame, notes: list[str],
                          out: Path):
    """``tables/<name>.md`` (one true x predicted block per data set and method), ``.csv``
    (the long cells) and ``.tex`` (the blocks stacked, rows labelled method: true class)."""
    md, blocks = [f"# {table['title']}\n", CONFUSION_LEGEND + "\n"], []
    for (dataset, label), block in cells.groupby(["dataset", "label"], sort=False):
        text = block.assign(text=[cell_text(r._replace(failures=""), 3)
                                  for r in block.itertuples()])
        wide = text.pivot(index="true_class", columns="predicted_class", values="text")
        order = list(dict.fromkeys(block["true_class"]))
        wide = wide.reindex(index=order, columns=order)
        first = block.iloc[0]
        md += [f"## {label}, {dataset}: {runs_line(first)}\n",
               markdown(wide, "true class / predicted")]
        blocks.append(wide.set_axis([f"{label}: {c}" for c in wide.index], axis=0))
    md += [f"- {note}" for note in notes]
    atomic_write_text(out / "tables" / f"{name}.md", "\n".join(md) + "\n")
    atomic_write_text(out / "tables" / f"{name}.csv", cells.to_csv(index=False))
    stacked = pd.concat(blocks) if blocks else pd.DataFrame()
    atomic_write_text(out / "tables" / f"{name}.tex",
                      latex(stacked, table["title"], "Method: true class"))


def write_summary(experiment: str, spec: dict, summary: pd.DataFrame, out: Path):
    """Error, NLPD, Brier, timing and convergence of every cell of one experiment."""
    rows = summary[summary["experiment"] == experiment]
    columns = ["dataset", "label", "n_ok", "n_folds", "error_mean", "error_se", "nlpd_mean",
               "brier_mean", "fit_s_mean", "fit_s_total", "converged_fraction",
               "n_optimiser_warnings", "n_nonfinite_nlpd", "failures"]
    frame = rows[columns].rename(columns={"label": "method"})
    sampler = [*SAMPLER_DIAGNOSTICS, "burn_in_mean", "burn_in_undefined"]
    atomic_write_text(out / "tables" / f"{experiment}_summary.csv",
                      rows[columns + sampler].rename(columns={"label": "method"}).to_csv(index=False))
    shown = text_frame(frame.set_index("dataset").round(4))
    md = [f"# {experiment}: errors, NLPD, Brier, timing and convergence\n",
          f"{spec['description']}. Error and s.e. over successful folds; times in seconds "
          "(fit, per fold and in total); converged = fraction of folds whose method reported "
          "convergence and raised no ConvergenceWarning; optimiser warnings = folds that raised "
          "one (their texts are in the fold results); non-finite NLPD = folds where a test "
          "point's true class has probability 0 (their NLPD, and the mean, is inf).\n",
          markdown(shown, "dataset")]
    chains = rows[rows["rhat_u"].notna()]
    if len(chains):
        diagnostics = chains[["dataset", "label", *sampler]].rename(columns={"label": "method"})
        md += ["\n## Sampler convergence\n",
               "Medians over the runs of the rank-normalised split R-hat and the bulk and tail "
               "effective sample sizes (Vehtari et al. 2021; all chains' kept draws) of u, g, "
               "eta, n_gamma and the predictive probabilities at probe points (largest R-hat, "
               "smallest ESS); — where no run recorded them (runs before the bulk / tail ESS, "
               "whose fold results keep too few draws to recompute it). Brooks burn-in: mean "
               "over the runs where it is defined, and the number of runs where it is not.\n",
               markdown(text_frame(diagnostics.set_index("dataset").round(2)), "dataset")]
    atomic_write_text(out / "tables" / f"{experiment}_summary.md", "\n".join(md))
