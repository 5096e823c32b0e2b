"""The canonical in-memory and on-disk form of a processed data set.

On disk a processed data set is two files written side by side by the preprocess rule:

``<name>.npz``
    ``X`` (float64, n x p), ``y`` (int64 class indices 0..J-1), ``feature_names``,
    ``feature_types`` (``"continuous"`` or ``"discrete"`` per column, K&G eq. 14
    treats discrete features by 1 - delta), ``class_names``.
``<name>.json``
    provenance: source used, package/URL and version, SHA-256 of the raw files, of the data
    set's content (``sha256``) and of the ``.npz`` file (``npz_sha256``), rows, columns, class
    counts and every transformation applied.

Reading one checks its content against the recorded ``sha256``: a damaged file is an error
naming it, never data.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gpcbench.io import atomic_write_bytes, atomic_write_json

FEATURE_TYPES = ("continuous", "discrete")


class DamagedDataError(ValueError):
    """A processed data set's file is unreadable or differs from what its provenance records."""


@dataclass
class Dataset:
    """Features, labels and the metadata every method may need."""

    X: np.ndarray
    y: np.ndarray
    feature_names: list[str]
    feature_types: list[str]
    class_names: list[str]
    provenance: dict = field(default_factory=dict)

    def __post_init__(self):
        self.X = np.asarray(self.X, dtype=float)
        self.y = np.asarray(self.y, dtype=np.int64)
        n, p = self.X.shape
        if self.y.shape != (n,):
            raise ValueError(f"y has shape {self.y.shape}, expected ({n},)")
        if len(self.feature_names) != p or len(self.feature_types) != p:
            raise ValueError("feature_names and feature_types need one entry per column of X")
        bad = set(self.feature_types) - set(FEATURE_TYPES)
        if bad:
            raise ValueError(f"unknown feature types {sorted(bad)}")
        if not np.all(np.isfinite(self.X)):
            raise ValueError("X holds NaN or infinite values; impute or drop them in preprocessing")
        if self.y.min(initial=0) < 0 or self.y.max(initial=0) >= len(self.class_names):
            raise ValueError("y must hold class indices 0..len(class_names)-1")

    @property
    def discrete_mask(self) -> np.ndarray:
        return np.array([t == "discrete" for t in self.feature_types])

    @property
    def class_counts(self) -> dict[str, int]:
        counts = np.bincount(self.y, minlength=len(self.class_names))
        return {c: int(k) for c, k in zip(self.class_names, counts)}


def save_dataset(dataset: Dataset, npz_path: Path, json_path: Path) -> dict:
    """Write ``dataset`` atomically; return the provenance record written to ``json_path``."""
    buf = io.BytesIO()
    np.savez_compressed(
        buf,
        X=dataset.X,
        y=dataset.y,
        feature_names=np.array(dataset.feature_names, dtype=str),
        feature_types=np.array(dataset.feature_types, dtype=str),
        class_names=np.array(dataset.class_names, dtype=str),
    )
    payload = buf.getvalue()
    provenance = dict(dataset.provenance)
    provenance.update(
        rows=int(dataset.X.shape[0]),
        columns=int(dataset.X.shape[1]),
        class_counts=dataset.class_counts,
        feature_names=list(dataset.feature_names),
        feature_types=list(dataset.feature_types),
        sha256=content_sha256(dataset),
        npz_sha256=hashlib.sha256(payload).hexdigest(),
    )
    atomic_write_bytes(Path(npz_path), payload)
    atomic_write_json(Path(json_path), provenance)
    return provenance


def content_sha256(dataset: Dataset) -> str:
    """SHA-256 of the data set's content (arrays and names), independent of file timestamps.

    ``np.savez`` stamps the zip members with the current time, so the file hash would change on
    every rewrite; this hash identifies the data and is what results and checksums.tsv record.
    """
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(dataset.X, dtype="<f8").tobytes())
    h.update(np.ascontiguousarray(dataset.y, dtype="<i8").tobytes())
    for names in (dataset.feature_names, dataset.feature_types, dataset.class_names):
        h.update(json.dumps(list(names)).encode())
    return h.hexdigest()


def load_dataset(npz_path: Path) -> Dataset:
    """Read a processed data set (and its provenance from the ``.json`` beside it).

    Raises
    ------
    DamagedDataError
        The ``.npz`` cannot be read, or its content's SHA-256 differs from the one its
        ``.json`` records; the message names the file and how to rebuild it.
    """
    npz_path = Path(npz_path)
    rebuild = "rerun the pipeline to rebuild it"
    try:
        with np.load(npz_path, allow_pickle=False) as f:
            arrays = {k: f[k] for k in f.files}
        dataset = Dataset(
            X=arrays["X"],
            y=arrays["y"],
            feature_names=[str(s) for s in arrays["feature_names"]],
            feature_types=[str(s) for s in arrays["feature_types"]],
            class_names=[str(s) for s in arrays["class_names"]],
        )
    except (zipfile.BadZipFile, EOFError, KeyError, ValueError) as exc:
        raise DamagedDataError(f"{npz_path} is damaged ({type(exc).__name__}: "
                               f"{str(exc).splitlines()[0] if str(exc) else ''}); {rebuild}") from None
    json_path = npz_path.with_suffix(".json")
    dataset.provenance = json.loads(json_path.read_text()) if json_path.exists() else {}
    recorded = dataset.provenance.get("sha256")
    if recorded and content_sha256(dataset) != recorded:
        raise DamagedDataError(f"{npz_path} does not match the SHA-256 recorded in {json_path}; "
                               f"{rebuild}")
    return dataset
