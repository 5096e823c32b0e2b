"""Small helpers the Snakemake rules call (no Snakemake import here)."""

from __future__ import annotations

import hashlib
import importlib
import inspect
from pathlib import Path

DATA_MODULES = (
    "gpcbench.data.dataset",
    "gpcbench.data.registry",
    "gpcbench.data.preprocess",
    "gpcbench.data.readers",
    "gpcbench.data.generators",
    "gpcbench.covariance",
)


def data_code_hash() -> str:
    """Hash of the preprocessing code: editing it reruns the preprocess jobs (and what follows)."""
    digest = hashlib.sha256()
    for module in DATA_MODULES:
        digest.update(inspect.getsource(importlib.import_module(module)).encode())
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
    figures = ["reports/figures/published_vs_reproduced.png"]
    if kind == "tables":
        return tables
    if kind == "figures":
        return figures
    return [*tables, *figures, "reports/index.md"]
