"""A work tree's fold ledger as a run under way sees it: the committed ledger
(``reports/results/<experiment>.csv.gz``) with the fold result files of ``results/`` over it,
fold by fold, each file flattened by the pipeline's own :func:`gpcbench.experiments.aggregate.
fold_row`. Shared by the benchmarks that read measured folds (estimate_paper_scale.py,
compare_ledgers.py)."""

import json
from pathlib import Path

import pandas as pd

from gpcbench.experiments.aggregate import fold_row
from gpcbench.experiments.ledger import ledger_path

FOLD_KEY = ["dataset", "method", "fold"]


def fold_ledger(root: Path, experiment: str, columns: list[str]) -> pd.DataFrame:
    """``columns`` (the fold key among them) of every fold of ``experiment`` under ``root``:
    a fold's result file, where there is one, replaces its ledger row."""
    path = ledger_path(experiment, root)
    frame = (pd.read_csv(path, usecols=columns) if path.is_file()
             else pd.DataFrame(columns=columns))
    fresh = [fold_row(json.loads(record.read_text()))
             for record in sorted((Path(root) / "results" / experiment).glob("*/*/fold*.json"))]
    if fresh:
        frame = pd.concat([pd.DataFrame(fresh, columns=columns), frame], ignore_index=True)
        frame = frame.drop_duplicates(FOLD_KEY, keep="first")
    return frame.astype({"fold": int}).reset_index(drop=True)
