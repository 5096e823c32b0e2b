"""The fidelity summary that opens ``reports/index.md``: per paper and table, how many
published cells have a reproduced value, how many can be tested (both values and a combined
standard error, :func:`~gpcbench.experiments.report.cells.combined_se`) and how many of those
agree within two combined standard errors, overall and on the data sets that are not
stand-ins (a substitute recorded in the data set's metadata); then, per paper, the same counts
for the accuracy cells alone (error rates, learned lengthscales, confusion rates), the cells a
reproduction is judged by; and every accuracy cell beyond two combined standard errors on
original data, with the cause its table's ``beyond_2se`` entries record."""

from __future__ import annotations

import pandas as pd

from gpcbench.config import entry_data
from gpcbench.experiments.report.cells import (
    ERROR_METRICS,
    combined_se,
    confusion_cells,
    expected_fold_counts,
    named_published_cells,
    published_confusion,
    table_cells,
)

COLUMNS = ["paper", "table", "accuracy", "published", "with_value", "testable", "within_2se",
           "original_testable", "original_within_2se", "original_without_value"]
COUNTS = COLUMNS[3:]
CELL_COLUMNS = ["table", "paper", "accuracy", "row", "column", "ours", "pub_mean", "se", "within",
                "original"]
#: What a ``beyond_2se`` entry of a table may give as the cause of its cells' difference.
CAUSES = {
    "data": "our data or partitions differ from the paper's, measured",
    "published": "the printed value is contradicted by the paper's own rows or by the sampling "
                 "floor of its protocol",
    "reconstruction": "the paper's method is not fully described (or its source is not "
                      "offline); ours is a stated reading",
    "convention": "a reading other than the paper's printed one closes the gap, measured; we "
                  "keep the printed one",
    "unexplained": "readings measured; none closes the gap",
}


def is_accuracy(metric: str) -> bool:
    """Error rates (any scale), learned hyperparameters and confusion rates."""
    return metric in ERROR_METRICS or metric == "confusion" or metric.startswith("hyperparameter:")


def class_names(meta: dict) -> list[str]:
    """A processed data set's class names in class index order (its ``class_counts`` keys)."""
    return list(meta.get("class_counts", {}))


def published_table_cells(name: str, table: dict, config: dict, folds: pd.DataFrame,
                          published_dir, data_meta: dict) -> pd.DataFrame:
    """The cells of one table that have a published value (``entry``, ``ours``, ``pub_mean``
    and what :func:`combined_se` reads)."""
    experiment = config["experiments"][table["experiment"]]
    if table["metric"] == "confusion":
        names = {entry: class_names(data_meta.get(entry_data(experiment, entry), {}))
                 for entry in table["datasets"]}
        cells = confusion_cells(table, folds, published_confusion(table, published_dir), names)
    else:
        cells = table_cells(table, folds, named_published_cells(name, table, published_dir),
                            expected_fold_counts(config, table))
    return cells[cells["pub_mean"].notna()]


def judged_cells(config: dict, folds: pd.DataFrame, published_dir,
                 data_meta: dict) -> pd.DataFrame:
    """Every published cell of every table, one row each: ``table``, ``paper``, ``accuracy``,
    ``row`` and ``column`` as printed (method and data set; a confusion table's true and
    predicted class), ``ours``, ``pub_mean``, the combined standard error ``se`` (NaN: not
    testable), ``within`` (two s.e.) and ``original`` (the data set is not a stand-in)."""
    parts = []
    for name, table in config["tables"].items():
        if not table.get("published"):
            continue
        experiment = config["experiments"][table["experiment"]]
        cells = published_table_cells(name, table, config, folds, published_dir, data_meta)
        labels = (["true_class", "predicted_class"] if table["metric"] == "confusion"
                  else ["method", "dataset"])
        se = pd.Series([combined_se(table, cell) for cell in cells.itertuples()],
                       index=cells.index, dtype=float)
        parts.append(pd.DataFrame({
            "table": name, "paper": experiment.get("paper", ""),
            "accuracy": is_accuracy(table["metric"]),
            "row": cells[labels[0]].astype(str), "column": cells[labels[1]].astype(str),
            "ours": cells["ours"].astype(float), "pub_mean": cells["pub_mean"].astype(float),
            "se": se, "within": (cells["ours"] - cells["pub_mean"]).abs() <= 2 * se,
            "original": cells["entry"].map(lambda entry: not data_meta.get(
                entry_data(experiment, entry), {}).get("substitute")).astype(bool)}))
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=CELL_COLUMNS)


def fidelity(cells: pd.DataFrame) -> pd.DataFrame:
    """One row per table of :func:`judged_cells`, with the counts of :data:`COLUMNS`."""
    rows = []
    for name, group in cells.groupby("table", sort=False):
        testable, within, original = group["se"].notna(), group["within"], group["original"]
        rows.append({"paper": group["paper"].iloc[0], "table": name,
                     "accuracy": bool(group["accuracy"].iloc[0]), "published": len(group),
                     "with_value": int(group["ours"].notna().sum()),
                     "testable": int(testable.sum()), "within_2se": int(within.sum()),
                     "original_testable": int((testable & original).sum()),
                     "original_within_2se": int((within & original).sum()),
                     "original_without_value": int((group["ours"].isna() & original).sum())})
    return pd.DataFrame(rows, columns=COLUMNS)


def beyond_two_se(cells: pd.DataFrame, config: dict) -> tuple[pd.DataFrame, list[str]]:
    """The accuracy cells on original data beyond two combined s.e., with their distance in
    s.e., the ``cause`` and ``why`` of the table's ``beyond_2se`` entry naming them (empty
    when none does) and ``entry``, that entry's key (the cell's own when none); and the
    entries' cells that are not among them (no longer beyond two s.e., or no such cell), as
    'table: row / column'."""
    judged = cells[cells["accuracy"].astype(bool) & cells["original"] & cells["se"].notna()
                   & ~cells["within"].astype(bool)].copy()
    recorded = {}  # (table, row, column) -> (entry's key, entry)
    for name, table in config["tables"].items():
        for i, entry in enumerate(table.get("beyond_2se", [])):
            for row, columns in entry["cells"].items():
                recorded.update({(name, row, column): (f"{name}[{i}]", entry)
                                 for column in columns})
    named = list(zip(judged["table"], judged["row"], judged["column"]))
    found = [recorded.get(cell, ("/".join(cell), {})) for cell in named]
    judged["distance"] = (judged["ours"] - judged["pub_mean"]) / judged["se"]
    judged["entry"] = [key for key, _ in found]
    judged["cause"] = [entry.get("cause", "") for _, entry in found]
    judged["why"] = [entry.get("why", "") for _, entry in found]
    flagged = set(named)
    obsolete = [f"{t}: {row} / {column}" for t, row, column in recorded
                if (t, row, column) not in flagged]
    return judged.reset_index(drop=True), obsolete


def _share(within: int, testable: int) -> str:
    return f"{within} of {testable} ({100 * within / testable:.0f} %)" if testable else "none"


def accuracy_lines(summary: pd.DataFrame) -> list[str]:
    """Per paper and overall: accuracy cells on original data within two s.e. of the testable
    ones, and those without a value."""
    accuracy = summary[summary["accuracy"].astype(bool)]
    groups = [*accuracy.groupby("paper", sort=False), ("**all papers**", accuracy)]
    lines = ["Accuracy cells (error rates, learned lengthscales, confusion rates) on original "
             "data: within two combined s.e. of those testable, and cells without a value.\n",
             "| paper | within 2 s.e. / testable | without a value |", "|---|---|---|"]
    for paper, group in groups:
        total = group[COUNTS].sum()
        lines.append(f"| {paper} | {_share(int(total['original_within_2se']), int(total['original_testable']))} "
                     f"| {int(total['original_without_value'])} |")
    return lines + [""]


def fidelity_lines(summary: pd.DataFrame) -> list[str]:
    """The markdown section: the accuracy summary, then a total line per paper and the
    per-table counts."""
    lines = ["## Fidelity to the published numbers\n", *accuracy_lines(summary),
             "Every published cell with a reproduced value, those that can be tested (a combined "
             "standard error exists) and those within two combined standard errors; 'original "
             "data' leaves out data sets that are stand-ins.\n",
             "| paper | table | published | with a value | testable | within 2 s.e. "
             "| testable, original data | within 2 s.e., original data |",
             "|---|---|---|---|---|---|---|---|"]
    shown = COUNTS[:-1]
    for paper, group in summary.groupby("paper", sort=False):
        total = group[shown].sum()
        lines.append(f"| **{paper}** | **all** | " + " | ".join(
            f"**{int(total[c])}**" for c in shown) + " |")
        lines += [f"| {paper} | {r.table} | " + " | ".join(str(getattr(r, c)) for c in shown)
                  + " |" for r in group.itertuples()]
    return lines + [""]


def beyond_two_se_lines(judged: pd.DataFrame, obsolete: list[str]) -> list[str]:
    """The markdown section of :func:`beyond_two_se`: counts per cause, then a line per
    ``beyond_2se`` entry with its cells (a cell without an entry has a line of its own)."""
    lines = ["## Accuracy cells beyond two standard errors\n"]
    if judged.empty and not obsolete:
        return lines + ["No accuracy cell on original data differs from the published value by "
                        "more than two combined standard errors.", ""]
    counts = judged["cause"].replace("", "no cause recorded").value_counts()
    lines += [f"{len(judged)} accuracy cells on original data differ from the published value "
              "by more than two combined standard errors. Their causes, as the tables' "
              "`beyond_2se` entries record them (each table's notes give the measurements):\n",
              "| cause | cells | meaning |", "|---|---|---|"]
    lines += [f"| {cause} | {int(counts.get(cause, 0))} | {meaning} |"
              for cause, meaning in CAUSES.items()]
    if counts.get("no cause recorded"):
        lines.append(f"| no cause recorded | {int(counts['no cause recorded'])} | |")
    lines += ["", "Each cell: row / column: ours vs. published (distance = (ours - published) / "
              "combined s.e.).\n", "| table | cells | cause | why |", "|---|---|---|---|"]
    for _, group in judged.groupby("entry", sort=False):
        first = group.iloc[0]
        cells = "; ".join(f"{r.row} / {r.column}: {r.ours:.4g} vs. {r.pub_mean:.4g} "
                          f"({r.distance:+.1f})" for r in group.itertuples())
        lines.append(f"| [{first.table}](tables/{first.table}.md) | {cells} "
                     f"| {first.cause or 'no cause recorded'} | {first.why} |")
    if obsolete:
        lines += ["", "Recorded causes of cells that are not beyond two s.e. (remove them from "
                  "the config): " + "; ".join(obsolete) + "."]
    return lines + [""]
