"""The fidelity summary that opens ``reports/index.md``: per paper and table, how many
published cells have a reproduced value, how many can be tested (both values and a combined
standard error, :func:`~gpcbench.experiments.report.cells.combined_se`) and how many of those
agree within two combined standard errors, overall and on the data sets that are not
stand-ins (a substitute recorded in the data set's metadata); then, per paper, the same counts
for the accuracy cells alone (error rates, learned lengthscales, confusion rates), the cells a
reproduction is judged by; and every accuracy cell beyond two combined standard errors on
original data, with the cause its table's ``beyond_2se`` entries record.

Two readings of a published s.d. are counted. As printed, it is the s.d. over the paper's R
partitions, so the published mean's s.e. is s.d. / sqrt(R). But a printed s.d. below the
test-sampling floor, the s.d. that drawing the m test rows at random from a pool of N gives a
fixed classifier of error p, scale sqrt(p (1 - p) / m (N - m) / (N - 1)) (hypergeometric; the
notes of ZDJ Tables 2, 8 and 10), cannot be that; the reading it allows
(:func:`allowed_se`) takes the published mean to be as uncertain as one partition's estimate,
its s.e. the printed s.d. itself. Causes (``beyond_2se``) are owed for the cells beyond two s.e.
under the allowed reading; the cells beyond only as printed are listed apart."""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpcbench.config import entry_data, entry_protocol
from gpcbench.experiments.report.cells import (
    ERROR_METRICS,
    combined_se,
    confusion_cells,
    error_scale,
    expected_fold_counts,
    named_published_cells,
    published_confusion,
    table_cells,
)

COLUMNS = ["paper", "table", "accuracy", "published", "with_value", "testable", "within_2se",
           "original_testable", "original_within_2se", "original_without_value",
           "original_within_2se_allowed"]
COUNTS = COLUMNS[3:]
#: The per-table counts the index shows.
SHOWN = ["published", "with_value", "testable", "within_2se", "original_testable",
         "original_within_2se"]
CELL_COLUMNS = ["table", "paper", "accuracy", "row", "column", "ours", "pub_mean", "pub_spread",
                "se", "within", "floor", "se_allowed", "within_allowed", "original"]
#: The allowed reading in one sentence (the index states it).
ALLOWED_READING = (
    "where a published s.d. is below the test-sampling floor, the s.d. that drawing the m test "
    "rows at random from the pool of N gives a fixed classifier of the published error p, "
    "sqrt(p (1 - p) / m (N - m) / (N - 1)), the published mean is taken to be as uncertain as "
    "one partition's estimate: its s.e. is the printed s.d. itself, not s.d. / sqrt(R)")
#: What a ``beyond_2se`` entry of a table may give as the cause of its cells' difference.
CAUSES = {
    "data": "our data or partitions differ from the paper's, measured",
    "published": "the printed value is contradicted by the paper's own rows or by its protocol",
    "reconstruction": "the paper's method is not fully described (or its source is not "
                      "offline); ours is a stated reading",
    "convention": "a reading other than the paper's printed one closes the gap, measured; we "
                  "keep the printed one",
    "unexplained": "readings measured; none closes the gap",
}


def sampling_floor(p: float, m: float, N: float) -> float:
    """The s.d. over random partitions of a fixed classifier's error rate p on m test rows
    drawn without replacement from a pool of N: sqrt(p (1 - p) / m (N - m) / (N - 1)) (the
    hypergeometric variance of the error count over m^2)."""
    return float(np.sqrt(p * (1 - p) / m * (N - m) / (N - 1)))


def allowed_se(table: dict, cell, pool_rows, protocol: dict) -> tuple[float, float]:
    """The test-sampling floor of a published error printed with an s.d. over random
    partitions (NaN where that does not apply) and the combined s.e. under the allowed reading:
    where the printed s.d. is below the floor, hypot(our s.e., printed s.d.), else the printed
    reading's :func:`combined_se`."""
    se = combined_se(table, cell)
    metric = table["metric"]
    if (table.get("spread") != "sd" or metric not in ERROR_METRICS
            or protocol.get("type") != "random" or not pool_rows or np.isnan(se)
            or any(pd.isna(v) for v in (cell.ours_se, cell.pub_spread, cell.n_test))):
        return np.nan, se
    scale = error_scale(metric, cell.n_test)
    p = min(max(cell.pub_mean / scale, 0.0), 1.0)
    floor = scale * sampling_floor(p, cell.n_test, float(pool_rows))
    if not cell.pub_spread < floor:
        return floor, se
    return floor, float(np.hypot(cell.ours_se, cell.pub_spread))


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
        cells = confusion_cells(table, folds, published_confusion(table, published_dir), names,
                                expected_fold_counts(config, table))
    else:
        cells = table_cells(table, folds, named_published_cells(name, table, published_dir),
                            expected_fold_counts(config, table))
    return cells[cells["pub_mean"].notna()]


def judged_cells(config: dict, folds: pd.DataFrame, published_dir,
                 data_meta: dict) -> pd.DataFrame:
    """Every published cell of every table, one row each: ``table``, ``paper``, ``accuracy``,
    ``row`` and ``column`` as printed (method and data set; a confusion table's true and
    predicted class), ``ours``, ``pub_mean``, ``pub_spread``, the combined standard error
    ``se`` (NaN: not testable), ``within`` (two s.e.), the test-sampling ``floor`` of a printed
    s.d., ``se_allowed`` and ``within_allowed`` under the allowed reading (:func:`allowed_se`)
    and ``original`` (the data set is not a stand-in)."""
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
        allowed = pd.DataFrame(
            [allowed_se(table, cell, data_meta.get(entry_data(experiment, cell.entry), {}).get(
                "rows"), entry_protocol(experiment, cell.entry)) for cell in cells.itertuples()]
            if table["metric"] != "confusion" else [(np.nan, value) for value in se],
            index=cells.index, columns=["floor", "se_allowed"], dtype=float)
        gap = (cells["ours"] - cells["pub_mean"]).abs()
        parts.append(pd.DataFrame({
            "table": name, "paper": experiment.get("paper", ""),
            "accuracy": is_accuracy(table["metric"]),
            "row": cells[labels[0]].astype(str), "column": cells[labels[1]].astype(str),
            "ours": cells["ours"].astype(float), "pub_mean": cells["pub_mean"].astype(float),
            "pub_spread": (cells["pub_spread"].astype(float) if "pub_spread" in cells
                           else np.nan),
            "se": se, "within": gap <= 2 * se, "floor": allowed["floor"],
            "se_allowed": allowed["se_allowed"],
            "within_allowed": gap <= 2 * allowed["se_allowed"],
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
                     "original_without_value": int((group["ours"].isna() & original).sum()),
                     "original_within_2se_allowed": int(
                         (group["within_allowed"].astype(bool) & original).sum())})
    return pd.DataFrame(rows, columns=COLUMNS)


def beyond_two_se(cells: pd.DataFrame, causes: dict) -> tuple[pd.DataFrame, list[str]]:
    """The accuracy cells on original data beyond two combined s.e. as printed, with their
    distance in s.e. as printed and under the allowed reading (``distance``,
    ``distance_allowed``), ``needs_cause`` (beyond under the allowed reading too), the ``cause``
    and ``why`` of the entry of ``causes`` naming them (table -> its entries, as
    config/published/beyond_2se.yaml gives them; empty when none does) and
    ``entry``, that entry's key (the cell's own when none); and the entries' cells that are
    not beyond two s.e. under the allowed reading (within, beyond as printed only, or no such
    cell), as 'table: row / column'."""
    judged = cells[cells["accuracy"].astype(bool) & cells["original"] & cells["se"].notna()
                   & ~cells["within"].astype(bool)].copy()
    recorded = {}  # (table, row, column) -> (entry's key, entry)
    for name, entries in causes.items():
        for i, entry in enumerate(entries):
            for row, columns in entry["cells"].items():
                recorded.update({(name, row, column): (f"{name}[{i}]", entry)
                                 for column in columns})
    named = list(zip(judged["table"], judged["row"], judged["column"]))
    found = [recorded.get(cell, ("/".join(cell), {})) for cell in named]
    judged["distance"] = (judged["ours"] - judged["pub_mean"]) / judged["se"]
    judged["distance_allowed"] = (judged["ours"] - judged["pub_mean"]) / judged["se_allowed"]
    judged["needs_cause"] = ~judged["within_allowed"].astype(bool)
    judged["entry"] = [key for key, _ in found]
    judged["cause"] = [entry.get("cause", "") for _, entry in found]
    judged["why"] = [entry.get("why", "") for _, entry in found]
    owed = {cell for cell, needs in zip(named, judged["needs_cause"]) if needs}
    tested = set(zip(*(cells.loc[cells["se"].notna(), key] for key in ("table", "row", "column"))))
    obsolete = [f"{t}: {row} / {column}" for t, row, column in recorded
                if (t, row, column) in tested and (t, row, column) not in owed]
    return judged.reset_index(drop=True), obsolete


def _distances(cell) -> str:
    """'(+3.1)' where both readings agree, '(+3.1 / +1.2)' (as printed / allowed) else."""
    if np.isclose(cell.distance, cell.distance_allowed):
        return f"({cell.distance:+.1f})"
    return f"({cell.distance:+.1f} / {cell.distance_allowed:+.1f})"


def _share(within: int, testable: int) -> str:
    return f"{within} of {testable} ({100 * within / testable:.0f} %)" if testable else "none"


def paper_lines(summary: pd.DataFrame, papers: dict) -> list[str]:
    """The index's first screen: one line per paper (``papers``: key -> citation, title,
    venue, as config/published/papers.yaml gives them, each listed), its accuracy cells on
    original data within two combined s.e. of those testable, as printed and under the allowed
    reading."""
    accuracy = summary[summary["accuracy"].astype(bool)]
    lines = ["Accuracy cells (error rates, learned lengthscales, confusion rates; not times or "
             "sampler diagnostics) on original data within two combined standard errors of the "
             "published value ([how an s.e. is derived](../docs/fidelity.md)):\n"]
    groups = dict(list(accuracy.groupby("paper", sort=False)))
    for key in dict.fromkeys([*groups, *papers]):
        paper = papers.get(key)
        name = (f"**{paper['citation']}**, *{paper['title']}*, {paper['venue']}" if paper
                else f"**{key}**")
        if key not in groups:
            lines.append(f"- {name}: no published accuracy cell to compare")
            continue
        total = groups[key][COUNTS].sum()
        testable = int(total["original_testable"])
        lines.append(f"- {name}: " + (
            f"{_share(int(total['original_within_2se']), testable)}; "
            f"{int(total['original_within_2se_allowed'])} under the allowed reading" if testable
            else "no cell tested yet (none holds all of its protocol's runs)"))
    return lines + [""]


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


def allowed_reading_lines(summary: pd.DataFrame) -> list[str]:
    """Per paper and overall: accuracy cells on original data within two s.e. under the
    allowed reading (module docstring), of the same testable cells."""
    accuracy = summary[summary["accuracy"].astype(bool)]
    groups = [*accuracy.groupby("paper", sort=False), ("**all papers**", accuracy)]
    lines = ["The same cells under the reading a published s.d. below its test-sampling floor "
             f"allows ({ALLOWED_READING}; R the paper's partitions):\n",
             "| paper | within 2 s.e. / testable, allowed reading |", "|---|---|"]
    for paper, group in groups:
        total = group[COUNTS].sum()
        lines.append(f"| {paper} | {_share(int(total['original_within_2se_allowed']), int(total['original_testable']))} |")
    return lines + [""]


def fidelity_lines(summary: pd.DataFrame) -> list[str]:
    """The markdown section: the accuracy summary as printed and under the allowed reading,
    then a total line per paper and the per-table counts of the accuracy tables (times and
    sampler diagnostics have no standard error to test)."""
    summary = summary[summary["accuracy"].astype(bool)]
    lines = ["## Fidelity to the published numbers\n", *accuracy_lines(summary),
             *allowed_reading_lines(summary),
             "Per accuracy table: its published cells, those with a reproduced value, those that "
             "can be tested (a combined standard error exists) and those within two combined "
             "standard errors; 'original data' leaves out data sets that are stand-ins.\n",
             "| paper | table | published | with a value | testable | within 2 s.e. "
             "| testable, original data | within 2 s.e., original data |",
             "|---|---|---|---|---|---|---|---|"]
    for paper, group in summary.groupby("paper", sort=False):
        total = group[SHOWN].sum()
        lines.append(f"| **{paper}** | **all** | " + " | ".join(
            f"**{int(total[c])}**" for c in SHOWN) + " |")
        lines += [f"| {paper} | {r.table} | " + " | ".join(str(getattr(r, c)) for c in SHOWN)
                  + " |" for r in group.itertuples()]
    return lines + [""]


def beyond_two_se_lines(judged: pd.DataFrame, obsolete: list[str]) -> list[str]:
    """The markdown section of :func:`beyond_two_se`: counts per cause of the cells beyond two
    s.e. under the allowed reading, a line per ``beyond_2se`` entry with its cells (a cell
    without an entry has a line of its own), then the cells beyond as printed only."""
    lines = ["## Accuracy cells beyond two standard errors\n"]
    if judged.empty and not obsolete:
        return lines + ["No accuracy cell on original data differs from the published value by "
                        "more than two combined standard errors.", ""]
    owed = judged[judged["needs_cause"].astype(bool)]
    printed_only = judged[~judged["needs_cause"].astype(bool)]
    counts = owed["cause"].replace("", "no cause recorded").value_counts()
    lines += [f"{len(owed)} accuracy cells on original data differ from the published value "
              "by more than two combined standard errors, as printed and under the reading a "
              f"published s.d. below its test-sampling floor allows; {len(printed_only)} more "
              "do as printed only" + (" (listed last, no cause owed)" if len(printed_only) else "")
              + ". Their causes, as the tables' `beyond_2se` entries record them (each table's "
              "notes give the measurements):\n",
              "| cause | cells | meaning |", "|---|---|---|"]
    lines += [f"| {cause} | {int(counts.get(cause, 0))} | {meaning} |"
              for cause, meaning in CAUSES.items()]
    if counts.get("no cause recorded"):
        lines.append(f"| no cause recorded | {int(counts['no cause recorded'])} | |")
    lines += ["", "Each cell: row / column: ours vs. published (distance = (ours - published) / "
              "combined s.e., as printed / under the allowed reading; one number where both "
              "readings agree).\n", "| table | cells | cause | why |", "|---|---|---|---|"]
    for _, group in owed.groupby("entry", sort=False):
        first = group.iloc[0]
        cells = "; ".join(f"{r.row} / {r.column}: {r.ours:.4g} vs. {r.pub_mean:.4g} "
                          f"{_distances(r)}" for r in group.itertuples())
        lines.append(f"| [{first.table}](tables/{first.table}.md) | {cells} "
                     f"| {first.cause or 'no cause recorded'} | {first.why} |")
    if not printed_only.empty:
        lines += ["", "Beyond two s.e. as printed only: each published s.d. (printed) is below "
                  "its test-sampling floor, and taken as the published mean's s.e. the cell is "
                  "within two s.e. (no cause owed).\n",
                  "| table | cells (ours vs. published, distances, printed s.d. < floor) |",
                  "|---|---|"]
        for table, group in printed_only.groupby("table", sort=False):
            cells = "; ".join(f"{r.row} / {r.column}: {r.ours:.4g} vs. {r.pub_mean:.4g} "
                              f"{_distances(r)}, {r.pub_spread:.3g} < {r.floor:.3g}"
                              for r in group.itertuples())
            lines.append(f"| [{table}](tables/{table}.md) | {cells} |")
    if obsolete:
        lines += ["", "Recorded causes of cells that are not beyond two s.e. under the allowed "
                  "reading (remove them from the config): " + "; ".join(obsolete) + "."]
    return lines + [""]
