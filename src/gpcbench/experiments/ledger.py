"""The committed fold ledger: ``reports/results/<experiment>.csv.gz``, one row per fold result
behind the reports (the collect job's ``folds.csv``, gzipped reproducibly), and the state of
each fold against the code at HEAD (current, stale or missing), and the reuse of a ledger row
as a fold job's result when nothing that made it has changed (a fresh clone resumes the
protocol instead of recomputing it)."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pandas as pd

from gpcbench.config import entry_fold_count, entry_methods
from gpcbench.io import atomic_write_bytes, atomic_write_json

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


def restore_folds(ledger: str | Path, output: str | Path) -> None:
    """Write the ``folds.csv`` a ledger was made from (the same bytes)."""
    atomic_write_bytes(Path(output), gzip.decompress(Path(ledger).read_bytes()))


#: Ledger columns holding JSON text (see ``aggregate.fold_row``).
JSON_COLUMNS = ("confusion", "options", "convergence_warnings", "other_warnings",
                "hyperparameters", "trace", "diagnostics", "packages")
#: Ledger columns holding text (a hash of digits and one 'e' must not become a number).
TEXT_COLUMNS = ("experiment", "dataset", "method", "label", "status", "message",
                "data_sha256", "code_hash", "git_commit")
#: Statuses a rerun of the same code on the same inputs reproduces (a timeout depends on the
#: machine, so a timed-out fold always runs again).
REPRODUCIBLE_STATUSES = ("ok", "failed", "diverged")


def _value(column: str, text: str):
    """One ledger field as the value ``fold_row`` wrote: JSON decoded, text kept, '' -> None,
    then bool, int, float or a list."""
    if column in JSON_COLUMNS:
        return json.loads(text)
    if column in TEXT_COLUMNS:
        return text
    if text == "":
        return None
    if text in ("True", "False"):
        return text == "True"
    for parse in (int, float, json.loads):  # json: a list such as n_iter per chain
        try:
            return parse(text)
        except ValueError:
            pass
    raise ValueError(f"ledger column {column}: cannot read {text[:40]!r}")


def read_ledger_rows(path: str | Path) -> list[dict]:
    """The ledger's rows as dicts of values (JSON columns decoded), in file order."""
    rows = pd.read_csv(path, dtype=str, keep_default_na=False).to_dict("records")
    return [{column: _value(column, text) for column, text in row.items()} for row in rows]


def record_from_row(row: dict) -> dict:
    """The fold result record a ledger row stands for: ``aggregate.fold_row`` of it gives the
    row back (the inverse of that flattening, up to the fields the row does not keep). The
    metrics, timings and convergence parts are left out where the row has none (a fold that
    failed), as a fold job leaves them out."""
    record = {
        "experiment": row["experiment"], "dataset": row["dataset"], "method": row["method"],
        "label": row["label"], "fold": row["fold"], "seed": row["seed"],
        "status": row["status"], "message": row["message"] or "", "n_train": row["n_train"],
        "options": row["options"], "log_evidence": row["log_evidence"],
        "hyperparameters": row["hyperparameters"],
        "provenance": {"data_sha256": row["data_sha256"], "code_hash": row["code_hash"],
                       "git_commit": row["git_commit"], "packages": row["packages"]},
    }
    parts = {
        "metrics": {key: row[key] for key in ("error", "nlpd", "nonfinite_nlpd", "brier",
                                              "n_test", "confusion")},
        "timings": {key: row[key] for key in ("fit_s", "predict_s", "cpu_s")},
        "convergence": {"converged": row["converged"], "n_iter": row["n_iter"],
                        "trace": row["trace"], "diagnostics": row["diagnostics"],
                        "warnings": row["convergence_warnings"],
                        "other_warnings": row["other_warnings"]},
    }
    for name, part in parts.items():
        if any(value is not None and value != [] for value in part.values()):
            record[name] = part
    return record


def reusable_record(ledger: str | Path, *, experiment: str, entry: str, method: str,
                    fold: int, options: dict, seed: int, code_hash: str, data_sha256: str,
                    n_train: int, n_test: int, upstream: dict) -> dict | None:
    """The ledger's result of this fold job if rerunning it would reproduce it, else None.

    Reused only when the row was made from a clean work tree by the same code hash (the
    method's modules and the numerical packages' versions), with the same options, seed, data
    set content (SHA-256) and train / test sizes, with a reproducible status, and when every
    upstream result this job reads (``upstream``: key -> record) was itself reused from the
    ledger (an upstream fold run anew may differ from the one the row was made from). The
    returned record says so in ``provenance.reused_from_ledger``.
    """
    if not code_hash or not Path(ledger).is_file():
        return None
    if any(not record.get("provenance", {}).get("reused_from_ledger")
           for record in upstream.values()):
        return None
    wanted = {"experiment": experiment, "dataset": entry, "method": method, "fold": fold}
    for row in read_ledger_rows(ledger):
        if any(row[key] != value for key, value in wanted.items()):
            continue
        same = (row["code_hash"] == code_hash and not row["dirty"]
                and not str(row["git_commit"]).endswith("+dirty")
                and row["status"] in REPRODUCIBLE_STATUSES
                and json.dumps(row["options"], sort_keys=True) == json.dumps(options, sort_keys=True)
                and row["seed"] == seed and row["data_sha256"] == data_sha256
                and row["n_train"] == n_train
                and (row["status"] != "ok" or row["n_test"] == n_test))
        if not same:
            return None
        record = record_from_row(row)
        record["provenance"]["reused_from_ledger"] = str(ledger)
        return record
    return None


def reuse_fold(ledger: str | Path, *, experiment: str, entry: str, method: str, fold: int,
               options: dict, seed: int, code_hash: str, data_path: Path, splits_path: Path,
               upstream: dict[str, Path], output: Path) -> dict | None:
    """Write the ledger's result of this fold job to ``output`` and return it if
    :func:`reusable_record` allows (the inputs read as the fold job reads them: the data set's
    SHA-256 from its provenance file, the split's sizes, the upstream results); else None,
    writing nothing. Kept out of the fold runner, whose code enters every method's hash."""
    data_sha256 = json.loads(Path(data_path).with_suffix(".json").read_text()).get("sha256")
    split = json.loads(Path(splits_path).read_text())["folds"][fold]
    record = reusable_record(
        ledger, experiment=experiment, entry=entry, method=method, fold=fold, options=options,
        seed=seed, code_hash=code_hash, data_sha256=data_sha256, n_train=len(split["train"]),
        n_test=len(split["test"]),
        upstream={key: json.loads(Path(p).read_text()) for key, p in upstream.items()})
    if record is not None:
        atomic_write_json(Path(output), record)
    return record


def made_by_head(folds: pd.DataFrame, head_hashes: dict) -> pd.Series:
    """Whether each fold was made by its method's code hash at HEAD (``head_hashes``: method
    -> hash) from a clean work tree; a ``+dirty`` fold never is."""
    clean = ~folds["git_commit"].astype(str).str.endswith("+dirty")
    return clean & (folds["code_hash"] == folds["method"].map(head_hashes))


def fold_states(config: dict, experiment: str, folds: pd.DataFrame, head_hashes: dict) -> pd.DataFrame:
    """One row per fold the config asks for: entry, method, fold, ``state`` (``current``: made
    by the method's code hash at HEAD from a clean work tree; ``stale``: by another hash or a
    ``+dirty`` tree; ``missing``: not in ``folds``) and the fold's CPU seconds (NaN if missing).
    ``head_hashes`` maps method -> code hash at HEAD."""
    spec = config["experiments"][experiment]
    folds = folds.assign(current=made_by_head(folds, head_hashes))
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
