"""Reuse of the committed fold ledger: a fold job whose result the ledger holds, made by the
same code from the same inputs, writes that row back as its result instead of fitting, so a
fresh clone resumes the protocol instead of recomputing it (``gpcbench run-fold
--reuse-ledger``). Standard library only: a reused fold job starts in a fraction of a second,
importing neither the numerical stack nor the fold runner (whose code enters every method's
hash)."""

from __future__ import annotations

import csv
import gzip
import json
import sys
import zlib
from pathlib import Path
from typing import Callable

from gpcbench.io import atomic_write_json

#: Ledger columns holding JSON text (see ``aggregate.fold_row``).
JSON_COLUMNS = ("confusion", "options", "convergence_warnings", "other_warnings",
                "hyperparameters", "trace", "diagnostics", "packages")
#: Ledger columns holding text (a hash of digits and one 'e' must not become a number).
TEXT_COLUMNS = ("experiment", "dataset", "method", "label", "status", "message",
                "data_sha256", "code_hash", "git_commit", "host")
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


#: Errors of reading a gzip file that is cut short, overwritten or not gzip at all.
READ_ERRORS = (EOFError, OSError, zlib.error, UnicodeDecodeError, csv.Error)
#: The columns a ledger row is found and judged by.
KEY_COLUMNS = ("experiment", "dataset", "method", "fold", "code_hash")


class DamagedLedgerError(ValueError):
    """A fold ledger that cannot be read to its end (cut short, overwritten, not a ledger)."""

    def __init__(self, path: str | Path, problem: str):
        super().__init__(f"{path}: cannot read the fold ledger ({problem}); restore it with "
                         f"'git checkout -- {path}'")


def check_ledger(path: str | Path, name: str | Path | None = None) -> None:
    """Raise :class:`DamagedLedgerError` naming the ledger (``name``, else ``path``) unless it
    reads to its end (the gzip stream complete, its CRC and length as recorded) and its header
    names the :data:`KEY_COLUMNS`; the rows are not parsed (a ledger is written whole,
    atomically)."""
    try:
        with gzip.open(path, "rt", newline="") as handle:
            header = next(csv.reader(handle), [])
            while handle.read(1 << 20):
                pass
    except READ_ERRORS as exc:
        raise DamagedLedgerError(name or path, str(exc) or type(exc).__name__) from None
    missing = [column for column in KEY_COLUMNS if column not in header]
    if missing:
        raise DamagedLedgerError(name or path, f"no column '{missing[0]}'")


def raw_rows(path: str | Path):
    """The ledger's rows as dicts of the CSV text, in file order (:class:`DamagedLedgerError`
    where it cannot be read to its end)."""
    csv.field_size_limit(sys.maxsize)  # a sampler's trace column runs to megabytes
    try:
        with gzip.open(path, "rt", newline="") as handle:
            yield from csv.DictReader(handle)
    except READ_ERRORS as exc:
        raise DamagedLedgerError(path, str(exc) or type(exc).__name__) from None


def _decoded(row: dict) -> dict:
    return {column: _value(column, text) for column, text in row.items()}


def read_ledger_rows(path: str | Path) -> list[dict]:
    """The ledger's rows as dicts of values (JSON columns decoded), in file order."""
    return [_decoded(row) for row in raw_rows(path)]


def ledger_row(path: str | Path, experiment: str, entry: str, method: str,
               fold: int) -> dict | None:
    """The ledger's row of one fold job, decoded (None if it has none); the other rows are
    not decoded."""
    key = (experiment, entry, method, str(fold))
    for row in raw_rows(path):
        if (row["experiment"], row["dataset"], row["method"], row["fold"]) == key:
            return _decoded(row)
    return None


def current_folds(path: str | Path, head_hashes: dict,
                  options_of: Callable[[str, str], dict] | None = None,
                  standardizes: Callable[[str, str], bool] | None = None
                  ) -> set[tuple[str, str, int]]:
    """(entry, method, fold) of the ledger's rows that a fold job at HEAD may reuse: made by
    the method's code hash at HEAD (``head_hashes``: method -> hash; from a committed or a
    modified work tree alike: the hash is the code), with a reproducible status and, given
    ``options_of(entry, method)`` and ``standardizes(entry, method)``, the options and input
    standardisation the config now gives the job (the job still checks them, the seed and
    the data before reusing)."""
    if not Path(path).is_file():
        return set()
    return {(row["dataset"], row["method"], int(row["fold"])) for row in raw_rows(path)
            if row["code_hash"] == head_hashes.get(row["method"])
            and row["status"] in REPRODUCIBLE_STATUSES
            and (options_of is None
                 or json.loads(row["options"]) == options_of(row["dataset"], row["method"]))
            and (standardizes is None or row.get("standardized", "") in (
                "", str(standardizes(row["dataset"], row["method"]))))}


def record_from_row(row: dict) -> dict:
    """The fold result record a ledger row stands for: ``aggregate.fold_row`` of it gives the
    row back (the inverse of that flattening, up to the fields the row does not keep). The
    metrics, timings and convergence parts are left out where the row has none (a fold that
    failed), as a fold job leaves them out."""
    record = {
        "experiment": row["experiment"], "dataset": row["dataset"], "method": row["method"],
        "label": row["label"], "fold": row["fold"], "seed": row["seed"],
        "status": row["status"], "message": row["message"] or "", "n_train": row["n_train"],
        "options": row["options"], "standardized": row.get("standardized"),
        "log_evidence": row["log_evidence"],
        "hyperparameters": row["hyperparameters"],
        "provenance": {"data_sha256": row["data_sha256"], "code_hash": row["code_hash"],
                       "git_commit": row["git_commit"], "packages": row["packages"],
                       "host": row.get("host"), "peak_rss_mb": row.get("peak_rss_mb")},
    }
    parts = {
        "metrics": {key: row[key] for key in ("error", "nlpd", "nonfinite_nlpd", "brier",
                                              "n_test", "confusion")},
        "timings": {key: row[key] for key in ("fit_s", "predict_s", "cpu_s")},
        "convergence": {"converged": row["converged"], "n_iter": row["n_iter"],
                        "n_chains": row.get("n_chains"),
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
                    n_train: int, n_test: int, upstream: dict,
                    standardized: bool | None = None) -> dict | None:
    """The ledger's result of this fold job if rerunning it would reproduce it, else None.

    Reused only when the row was made by the same code hash (the method's modules and the
    numerical packages' versions; from a committed or a modified work tree alike: the same
    hash is the same code), with the same options, input standardisation (when the row
    records it), seed, data set content (SHA-256) and train / test sizes, with a reproducible
    status, and when every upstream result this job reads (``upstream``: key -> record) was
    itself reused from the ledger (an upstream fold run anew may differ from the one the row
    was made from). The returned record says so in ``provenance.reused_from_ledger``.
    """
    if not code_hash or not Path(ledger).is_file():
        return None
    if any(not record.get("provenance", {}).get("reused_from_ledger")
           for record in upstream.values()):
        return None
    row = ledger_row(ledger, experiment, entry, method, fold)
    if row is None:
        return None
    same = (row["code_hash"] == code_hash and row["status"] in REPRODUCIBLE_STATUSES
            and json.dumps(row["options"], sort_keys=True) == json.dumps(options, sort_keys=True)
            and (standardized is None or row.get("standardized") in (None, standardized))
            and row["seed"] == seed and row["data_sha256"] == data_sha256
            and row["n_train"] == n_train
            and (row["status"] != "ok" or row["n_test"] == n_test))
    if not same:
        return None
    record = record_from_row(row)
    record["provenance"]["reused_from_ledger"] = str(ledger)
    return record


def reuse_fold(ledger: str | Path, *, experiment: str, entry: str, method: str, fold: int,
               options: dict, seed: int, code_hash: str, data_path: Path, splits_path: Path,
               upstream: dict[str, Path], output: Path,
               standardized: bool | None = None) -> dict | None:
    """Write the ledger's result of this fold job to ``output`` and return it if
    :func:`reusable_record` allows (the inputs read as the fold job reads them: the data set's
    SHA-256 from its provenance file, the split's sizes, the upstream results); else None,
    writing nothing. Kept out of the fold runner, whose code enters every method's hash."""
    data_sha256 = json.loads(Path(data_path).with_suffix(".json").read_text()).get("sha256")
    split = json.loads(Path(splits_path).read_text())["folds"][fold]
    record = reusable_record(
        ledger, experiment=experiment, entry=entry, method=method, fold=fold, options=options,
        seed=seed, code_hash=code_hash, data_sha256=data_sha256, n_train=len(split["train"]),
        n_test=len(split["test"]), standardized=standardized,
        upstream={key: json.loads(Path(p).read_text()) for key, p in upstream.items()})
    if record is not None:
        atomic_write_json(Path(output), record)
    return record
