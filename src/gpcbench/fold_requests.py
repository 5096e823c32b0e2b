"""What a fold job asks a scheduler for (SLURM's ``runtime`` and ``mem_mb``), from what the
ledger measured.

A fold job asks for what the committed ledger measured for its (experiment, entry, method),
with a margin (``reports/fold_costs.csv``, written from the ledgers by ``gpcbench
fold-costs``)::

    runtime (min) = (MARGIN * longest fit + predict + START_UP_S) / 60
    mem_mb        = MARGIN * largest peak resident memory + MEM_SLACK_MB

Where the ledger has no measurement (a new method or data set; folds made before peak memory
was recorded) a per-method model of the training rows n stands in::

    runtime (min) = minutes * max(1, n / 1000) ** exponent
    mem_mb        = mem_mb + matrices * 8 * n**2 / 1e6          (n x n float64 matrices)

Both are capped by the fold's own time limit plus START_UP_S; a second attempt (the job was
killed by the scheduler) asks for that whole limit and each attempt for twice the memory of
the one before. Short folds of methods with ``group: true`` join the group "folds", which a
cluster profile packs several to a job. Standard library only: Snakemake reads this at every
start.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

MARGIN = 2.0
#: Start-up, reading data, writing the record, on a busy shared file system.
START_UP_S = 300
MEM_SLACK_MB = 200
#: Folds asking for at most this many minutes travel several to a cluster job.
GROUP_MAX_MINUTES = 15
#: Per-method model rows; "default" covers every method without its own row, and the config's
#: ``jobs.resources`` overrides rows field by field.
MODEL = {
    "default": {"minutes": 5, "exponent": 2, "mem_mb": 1000, "matrices": 2, "group": True},
    # Zhang et al.'s samplers, 2 chains x 10,000 sweeps: O(n k_max^2) a sweep; BGKM keeps all
    # n points active (O(n^2) a sweep).
    "fbgkm": {"minutes": 10, "exponent": 1, "group": False},
    "sgpc": {"minutes": 10, "exponent": 1, "group": False},
    "bgkm": {"minutes": 10, "exponent": 2, "group": False},
}
COLUMNS = ("experiment", "entry", "method", "folds", "n_train", "wall_s_max", "peak_rss_mb_max")


@dataclass(frozen=True)
class Measured:
    """The ledger's largest figures over the folds of one (experiment, entry, method)."""

    folds: int
    wall_s: float | None
    peak_rss_mb: float | None


def read_fold_costs(path: str | Path) -> dict[tuple[str, str, str], Measured]:
    """``reports/fold_costs.csv`` as (experiment, entry, method) -> Measured; empty if absent."""
    if not Path(path).is_file():
        return {}
    with open(path, newline="") as handle:
        return {(row["experiment"], row["entry"], row["method"]): Measured(
            int(row["folds"]), float(row["wall_s_max"]) if row["wall_s_max"] else None,
            float(row["peak_rss_mb_max"]) if row["peak_rss_mb_max"] else None)
            for row in csv.DictReader(handle)}


@dataclass(frozen=True)
class FoldRequests:
    """Requests of the fold jobs of one config: its ``jobs`` section and the measurements."""

    jobs: dict
    measured: dict

    def model(self, method: str) -> dict:
        """The method's model row: built-in default < config default < built-in row < config row."""
        rows = self.jobs.get("resources", {})
        default = {**MODEL["default"], "mem_mb": self.jobs.get("mem_mb", 1000)}
        return {**default, **rows.get("default", {}), **MODEL.get(method, {}),
                **rows.get(method, {})}

    def max_minutes(self) -> int:
        return math.ceil((self.jobs["time_limit_s"] + START_UP_S) / 60)

    def runtime(self, experiment: str, entry: str, method: str, n: int, attempt: int = 1) -> int:
        """Minutes; the whole time limit from the second attempt on."""
        if attempt > 1:
            return self.max_minutes()
        seen = self.measured.get((experiment, entry, method))
        if seen is not None and seen.wall_s is not None:
            minutes = (MARGIN * seen.wall_s + START_UP_S) / 60
        else:
            model = self.model(method)
            minutes = model["minutes"] * max(1.0, n / 1000) ** model["exponent"]
        return min(self.max_minutes(), max(1, math.ceil(minutes)))

    def mem_mb(self, experiment: str, entry: str, method: str, n: int, attempt: int = 1) -> int:
        """Megabytes, doubled at each further attempt."""
        seen = self.measured.get((experiment, entry, method))
        if seen is not None and seen.peak_rss_mb is not None:
            mem = MARGIN * seen.peak_rss_mb + MEM_SLACK_MB
        else:
            model = self.model(method)
            mem = model["mem_mb"] + model["matrices"] * 8 * n**2 / 1e6
        return round(mem) * 2 ** (attempt - 1)

    def group(self, experiment: str, entry: str, method: str, n: int) -> str | None:
        """"folds" for a short fold of a groupable method, else None (a job of its own)."""
        short = self.runtime(experiment, entry, method, n) <= GROUP_MAX_MINUTES
        return "folds" if short and self.model(method)["group"] else None
