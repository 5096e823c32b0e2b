"""Small helpers the Snakemake rules call (no Snakemake import here)."""

from __future__ import annotations

import hashlib
import importlib
import inspect
from pathlib import Path

DATA_MODULES = (
    "gpcbench.data.dataset",
    "gpcbench.data.preprocess",
    "gpcbench.data.readers",
    "gpcbench.data.generators",
)


def data_code_hash(dataset: str) -> str:
    """Hash of what one processed data set depends on: the preprocessing modules and its own
    registry entries (so adding a data set to the registry reruns nothing else)."""
    from gpcbench.data.registry import RAW_SETS, dataset_spec, raw_sets_for

    digest = hashlib.sha256()
    for module in DATA_MODULES:
        digest.update(inspect.getsource(importlib.import_module(module)).encode())
    digest.update(repr(dataset_spec(dataset)).encode())
    for raw in raw_sets_for(dataset):
        digest.update(repr(RAW_SETS[raw]).encode())
    return digest.hexdigest()[:16]


def published_hash(directory: str | Path) -> str:
    """Content hash of the published-number CSVs (a param, not an input: file times don't matter)."""
    digest = hashlib.sha256()
    for path in sorted(Path(directory).glob("*.csv")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def report_outputs(config: dict, kind: str = "all") -> list[str]:
    """Files the report rule writes (tables per config table and per experiment, figures)."""
    tables = []
    for name in sorted(config["tables"]):
        tables += [f"reports/tables/{name}.{ext}" for ext in ("md", "csv", "tex")]
    for name in sorted(config["experiments"]):
        tables += [f"reports/tables/{name}_summary.{ext}" for ext in ("md", "csv")]
    figures = ["reports/figures/published_vs_reproduced.png",
               *(f"reports/figures/{name}.png" for name in sorted(config.get("figures", {})))]
    if kind == "tables":
        return tables
    if kind == "figures":
        return figures
    return [*tables, *figures, "reports/index.md"]
