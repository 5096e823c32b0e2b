"""The fidelity summary that opens ``reports/index.md``: per paper and table, how many
published cells have a reproduced value, how many can be tested (both values and a combined
standard error, :func:`~gpcbench.experiments.report.cells.combined_se`) and how many of those
agree within two combined standard errors, overall and on the data sets that are not
stand-ins (a substitute recorded in the data set's metadata)."""

from __future__ import annotations

import pandas as pd

from gpcbench.config import entry_data
from gpcbench.experiments.report.cells import (
    combined_se,
    expected_fold_counts,
    named_published_cells,
    table_cells,
)

COLUMNS = ["paper", "table", "published", "with_value", "testable", "within_2se",
           "original_testable", "original_within_2se"]


def fidelity(config: dict, folds: pd.DataFrame, published_dir, data_meta: dict) -> pd.DataFrame:
    """One row per table with published cells (confusion tables excepted: their cells need the
    data sets' class names), with the counts of :data:`COLUMNS`."""
    rows = []
    for name, table in config["tables"].items():
        if table["metric"] == "confusion" or not table.get("published"):
            continue
        experiment = config["experiments"][table["experiment"]]
        cells = table_cells(table, folds, named_published_cells(name, table, published_dir),
                            expected_fold_counts(config, table))
        cells = cells[cells["pub_mean"].notna()]
        se = pd.Series([combined_se(table, cell) for cell in cells.itertuples()],
                       index=cells.index, dtype=float)
        within = (cells["ours"] - cells["pub_mean"]).abs() <= 2 * se
        original = cells["entry"].map(
            lambda entry: not data_meta.get(entry_data(experiment, entry), {}).get("substitute"))
        rows.append({"paper": experiment.get("paper", ""), "table": name,
                     "published": len(cells), "with_value": int(cells["ours"].notna().sum()),
                     "testable": int(se.notna().sum()), "within_2se": int(within.sum()),
                     "original_testable": int((se.notna() & original).sum()),
                     "original_within_2se": int((within & original).sum())})
    return pd.DataFrame(rows, columns=COLUMNS)


def fidelity_lines(summary: pd.DataFrame) -> list[str]:
    """The markdown section: a total line per paper, then the per-table counts."""
    lines = ["## Fidelity to the published numbers\n",
             "Published cells (confusion tables aside) with a reproduced value, those that can "
             "be tested (a combined standard error exists) and those within two combined "
             "standard errors; 'original data' leaves out data sets that are stand-ins.\n",
             "| paper | table | published | with a value | testable | within 2 s.e. "
             "| testable, original data | within 2 s.e., original data |",
             "|---|---|---|---|---|---|---|---|"]
    for paper, group in summary.groupby("paper", sort=False):
        total = group[COLUMNS[2:]].sum()
        lines.append(f"| **{paper}** | **all** | " + " | ".join(
            f"**{int(total[c])}**" for c in COLUMNS[2:]) + " |")
        lines += [f"| {paper} | {r.table} | " + " | ".join(str(getattr(r, c)) for c in COLUMNS[2:])
                  + " |" for r in group.itertuples()]
    return lines + [""]
