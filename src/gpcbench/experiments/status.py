"""``gpcbench status``: per experiment and method, how many folds the committed ledger holds
made by the code at HEAD as the config now runs it (current, whatever commit they record), by
other code, options, seed or data (stale; the data's content where it is built under the
workdir's ``data/processed``), or not at all (missing), and what rerunning the out-of-date
ones costs (the ledger's measured CPU seconds)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from gpcbench.config import entry_data, entry_methods, read_config_file
from gpcbench.experiments.ledger import (fold_states, ledger_path, recorded_data_checksums,
                                         state_counts)
from gpcbench.experiments.registry import method_code_hash
from gpcbench.experiments.reuse import TEXT_COLUMNS, check_ledger

EMPTY_LEDGER = pd.DataFrame(columns=["dataset", "method", "fold", "code_hash", "git_commit",
                                     "cpu_s"])


def experiment_states(config: dict, root: Path) -> pd.DataFrame:
    """Every fold the config asks for, with its experiment and state (see ``fold_states``);
    a ledger that cannot be read is a :class:`~gpcbench.experiments.reuse.DamagedLedgerError`
    naming it."""
    experiments = config["experiments"]
    methods = {method for spec in experiments.values()
               for entry in spec["datasets"] for method in entry_methods(spec, entry)}
    head_hashes = {method: method_code_hash(method) for method in sorted(methods)}
    data_sha256 = recorded_data_checksums(
        Path(root) / "data" / "processed",
        {entry_data(spec, entry) for spec in experiments.values() for entry in spec["datasets"]})
    frames = []
    for experiment in experiments:
        path = ledger_path(experiment, root)
        folds = EMPTY_LEDGER
        if path.is_file():
            check_ledger(path)
            folds = pd.read_csv(path, dtype={column: str for column in TEXT_COLUMNS})
        states = fold_states(config, experiment, folds, head_hashes, data_sha256)
        frames.append(states.assign(experiment=experiment))
    return pd.concat(frames, ignore_index=True)


def status_table(config: dict, root: Path) -> pd.DataFrame:
    """Counts per experiment and method, and one ``total`` row."""
    states = experiment_states(config, root)
    table = state_counts(states, ["experiment", "method"])
    total = state_counts(states.assign(experiment="total", method=""), ["experiment", "method"])
    return pd.concat([table, total], ignore_index=True)


def print_status(config_path: str | Path, root: Path = Path(".")) -> None:
    """Print the status table of the config at ``config_path`` (its ledger under ``root`` and
    the config's workdir)."""
    config = read_config_file(Path(config_path))
    table = status_table(config, root / config.get("workdir", "."))
    print(table.to_string(index=False, float_format=lambda x: f"{x:.0f}"))
