"""The committed fold ledger: ``reports/results/<experiment>.csv.gz``, one row per fold result
behind the reports (the collect job's ``folds.csv``, gzipped reproducibly, then the rows of
folds a partial run did not replace), and the state of each fold against the code at HEAD,
the config and the data (current, stale or missing). Reusing a row as a fold job's result:
:mod:`gpcbench.experiments.reuse`."""

from __future__ import annotations

import csv
import gzip
import io
import json
from pathlib import Path

import pandas as pd

from gpcbench.config import (entry_data, entry_fold_count, entry_methods, method_options,
                             standardizes)
from gpcbench.experiments.reuse import raw_rows
from gpcbench.fold_requests import COLUMNS as FOLD_COST_COLUMNS
from gpcbench.io import atomic_write_bytes, atomic_write_text
from gpcbench.seeds import derive_seed

LEDGER_DIR = Path("reports") / "results"


def ledger_path(experiment: str, root: str | Path = ".") -> Path:
    """Where the ledger of ``experiment`` lives under ``root`` (a work directory)."""
    return Path(root) / LEDGER_DIR / f"{experiment}.csv.gz"


def write_ledger(folds_csv: str, path: str | Path) -> None:
    """Gzip a ``folds.csv`` text into the ledger, byte-reproducibly (no name, no time stamp)."""
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as out:
        out.write(folds_csv.encode())
    atomic_write_bytes(Path(path), buffer.getvalue())


def unreplaced_rows(ledger: str | Path, columns, replaced, wanted=None) -> str:
    """The CSV rows (no header; ``columns``, in that order, '' where a row has none) of the
    ledger at ``ledger`` (none if there is none) whose fold, (dataset, method, fold) as text,
    is not in ``replaced`` (and is in ``wanted``, if given), in ledger order and as written
    there."""
    if not Path(ledger).is_file():
        return ""
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    for row in raw_rows(ledger):
        key = (row["dataset"], row["method"], row["fold"])
        if key not in replaced and (wanted is None or key in wanted):
            writer.writerow([row.get(column, "") for column in columns])
    return text.getvalue()


def restore_folds(ledger: str | Path, output: str | Path) -> None:
    """Write the ``folds.csv`` a ledger was made from (the same bytes)."""
    atomic_write_bytes(Path(output), gzip.decompress(Path(ledger).read_bytes()))


def fold_costs(fold_tables) -> pd.DataFrame:
    """Per (experiment, entry, method) of the fold tables (``folds.csv`` or ledgers): folds,
    training rows, and the largest wall time of a fit + predict and peak resident memory
    measured (blank where no row recorded it); what fold jobs ask a scheduler for
    (:mod:`gpcbench.fold_requests`)."""
    frames = [pd.read_csv(path, usecols=lambda c: c in {
        "experiment", "dataset", "method", "n_train", "fit_s", "predict_s", "peak_rss_mb"})
        for path in fold_tables]
    folds = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["experiment", "dataset", "method"])
    folds = folds.reindex(columns=["experiment", "dataset", "method", "n_train", "fit_s",
                                   "predict_s", "peak_rss_mb"])
    folds["wall_s"] = folds["fit_s"] + folds["predict_s"].fillna(0)
    costs = folds.groupby(["experiment", "dataset", "method"], sort=True).agg(
        folds=("method", "size"), n_train=("n_train", "max"), wall_s_max=("wall_s", "max"),
        peak_rss_mb_max=("peak_rss_mb", "max")).reset_index()
    costs["wall_s_max"] = costs["wall_s_max"].round(1)
    costs["peak_rss_mb_max"] = costs["peak_rss_mb_max"].round(0)
    return costs.rename(columns={"dataset": "entry"})[list(FOLD_COST_COLUMNS)]


def write_fold_costs(fold_tables, output: str | Path) -> None:
    """:func:`fold_costs` as CSV (atomically, the same bytes for the same rows)."""
    costs = fold_costs(fold_tables).astype({"n_train": "Int64", "peak_rss_mb_max": "Int64"})
    atomic_write_text(Path(output), costs.to_csv(index=False))


def data_checksums(data_meta: dict) -> dict:
    """Processed data set name -> content SHA-256, from the data sets' metadata (name -> the
    ``.json`` beside each ``.npz``)."""
    return {name: meta["sha256"] for name, meta in data_meta.items() if meta.get("sha256")}


def recorded_data_checksums(directory: str | Path, names) -> dict:
    """:func:`data_checksums` of those of ``names`` built in ``directory`` (a fresh clone has
    none yet)."""
    metas = {name: Path(directory) / f"{name}.json" for name in sorted(set(names))}
    return data_checksums({name: json.loads(path.read_text()) for name, path in metas.items()
                           if path.is_file()})


def is_current(folds: pd.DataFrame, head_hashes: dict, config: dict | None = None,
               experiment: str | None = None, data_sha256: dict | None = None) -> pd.Series:
    """Whether each fold result is current, judged by content: made by its method's code hash
    at HEAD (``head_hashes``: method -> hash) and, given ``config``, as the config now runs
    its job (:func:`made_as_configured`). The commit and ``+dirty`` flag a fold records are
    its provenance only: a fold made from uncommitted code is current once that code is
    committed unchanged (its hash is then HEAD's), as Snakemake then plans no rerun."""
    made = folds["code_hash"] == folds["method"].map(head_hashes)
    return made if config is None else made & made_as_configured(folds, config, experiment,
                                                                 data_sha256)


def made_as_configured(folds: pd.DataFrame, config: dict, experiment: str | None = None,
                       data_sha256: dict | None = None) -> pd.Series:
    """Whether each fold's recorded ``options``, input standardisation and seed are those
    ``config`` now gives its job (``methods.<method>`` with the entry's ``options.<method>``
    merged over it; :func:`~gpcbench.config.standardizes`; the job's seed derived from the
    config's ``seed``) and, given ``data_sha256`` (processed data set name -> content SHA-256,
    for the data sets whose content is known), whether it was made from the content its
    entry's data set now has: what makes Snakemake or the ledger reuse run the job again. A
    fold recording no standardisation (a ledger from before it was recorded) is taken to have
    followed the experiment's ``standardize``. ``experiment`` stands in for a missing
    ``experiment`` column; a fold of an entry the config no longer has does not match."""
    checksums = data_sha256 or {}

    def matches(row) -> bool:
        name = experiment or row.experiment
        try:
            spec = config["experiments"][name]
            wanted = method_options(config, name, row.dataset, row.method)
        except KeyError:
            return False
        recorded = getattr(row, "standardized", None)
        if recorded is None or pd.isna(recorded):
            recorded = spec.get("standardize", True)
        data = checksums.get(entry_data(spec, row.dataset))
        return ((json.loads(row.options) if isinstance(row.options, str) else None) == wanted
                and bool(recorded) == standardizes(spec, row.dataset, row.method)
                and int(row.seed) == derive_seed(config["seed"], name, row.dataset, row.method,
                                                 int(row.fold))
                and (data is None or row.data_sha256 == data))

    return pd.Series([matches(row) for row in folds.itertuples()], index=folds.index,
                     dtype=bool)


def fold_states(config: dict, experiment: str, folds: pd.DataFrame, head_hashes: dict,
                data_sha256: dict | None = None) -> pd.DataFrame:
    """One row per fold the config asks for: entry, method, fold, ``state`` (``current``: made
    by the method's code hash at HEAD as the config now runs it, :func:`is_current`, whatever
    the commit it records; ``stale``: by another hash, or with other options, standardisation,
    seed or data content (``data_sha256``: processed data set name -> content SHA-256, where
    known); ``missing``: not in ``folds``) and the fold's CPU seconds (NaN if missing).
    ``head_hashes`` maps method -> code hash at HEAD."""
    spec = config["experiments"][experiment]
    folds = folds.assign(current=is_current(folds, head_hashes, config, experiment, data_sha256))
    known = {(r.dataset, r.method, int(r.fold)): r for r in folds.itertuples()}
    rows = []
    for entry in spec["datasets"]:
        for method in entry_methods(spec, entry):
            for fold in range(entry_fold_count(spec, entry)):
                record = known.get((entry, method, fold))
                if record is None:
                    state, cpu = "missing", float("nan")
                else:
                    state = "current" if record.current else "stale"
                    cpu = float(getattr(record, "cpu_s", float("nan")))  # NaN if unmeasured
                rows.append({"dataset": entry, "method": method, "fold": fold, "state": state,
                             "cpu_s": cpu})
    return pd.DataFrame(rows, columns=["dataset", "method", "fold", "state", "cpu_s"])


def state_counts(states: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Counts of current, stale and missing folds per ``by`` group, with the measured CPU
    seconds of the stale folds and an estimate for the missing ones (the mean CPU seconds of
    the group's measured folds times their number)."""
    def group_counts(group: pd.DataFrame) -> pd.Series:
        counts = group["state"].value_counts()
        stale = group[group["state"] == "stale"]
        measured = group["cpu_s"].dropna()
        n_missing = int(counts.get("missing", 0))
        return pd.Series({
            "current": int(counts.get("current", 0)), "stale": int(counts.get("stale", 0)),
            "missing": n_missing, "stale_cpu_s": float(stale["cpu_s"].sum()),
            "missing_cpu_s_est": float(measured.mean() * n_missing) if len(measured) and n_missing
            else (0.0 if not n_missing else float("nan")),
        })

    return states.groupby(by, sort=False).apply(group_counts, include_groups=False).reset_index()
