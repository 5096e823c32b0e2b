"""The fidelity summary that opens ``reports/index.md``: per paper and table, how many
published cells have a reproduced value, how many can be tested (both values and a combined
standard error, :func:`~gpcbench.experiments.report.cells.combined_se`) and how many of those
agree within two combined standard errors, overall and on the data sets that are not
stand-ins (a substitute recorded in the data set's metadata); then, per paper, the same counts
for the accuracy cells alone (error rates, learned lengthscales, confusion rates), the cells a
reproduction is judged by."""

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


def fidelity(config: dict, folds: pd.DataFrame, published_dir, data_meta: dict) -> pd.DataFrame:
    """One row per table with published cells, with the counts of :data:`COLUMNS`."""
    rows = []
    for name, table in config["tables"].items():
        if not table.get("published"):
            continue
        experiment = config["experiments"][table["experiment"]]
        cells = published_table_cells(name, table, config, folds, published_dir, data_meta)
        se = pd.Series([combined_se(table, cell) for cell in cells.itertuples()],
                       index=cells.index, dtype=float)
        within = (cells["ours"] - cells["pub_mean"]).abs() <= 2 * se
        original = cells["entry"].map(
            lambda entry: not data_meta.get(entry_data(experiment, entry), {}).get("substitute"))
        rows.append({"paper": experiment.get("paper", ""), "table": name,
                     "accuracy": is_accuracy(table["metric"]),
                     "published": len(cells), "with_value": int(cells["ours"].notna().sum()),
                     "testable": int(se.notna().sum()), "within_2se": int(within.sum()),
                     "original_testable": int((se.notna() & original).sum()),
                     "original_within_2se": int((within & original).sum()),
                     "original_without_value": int((cells["ours"].isna() & original).sum())})
    return pd.DataFrame(rows, columns=COLUMNS)


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
