"""Builders of the small UCI-derived sets of K&G, W&B and CKP: thyroid, heart, ionosphere,
crabs, Pima, Boston, Auto-Mpg, glass and iris."""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpcbench.data.builders_common import dataset_from_frame, encode_labels
from gpcbench.data.dataset import Dataset
from gpcbench.data.readers_common import RawTables
from gpcbench.data.readers_r import THYROID_COLUMNS
from gpcbench.data.readers_text import (
    CARS_COLUMNS,
    FGL_COLUMNS,
    HEART_COLUMNS,
    IRIS_COLUMNS,
    IRIS_SPECIES,
    ORIGINS,
)


def build_thyroid(raw: RawTables) -> Dataset:
    frame = raw.tables["thyroid"]
    mapping = {"Normal": "normal", "Hyper": "abnormal", "Hypo": "abnormal"}
    y = encode_labels(frame["Diagnosis"], ["normal", "abnormal"], mapping)
    return dataset_from_frame(
        frame,
        THYROID_COLUMNS[1:],
        (),
        y,
        ["normal", "abnormal"],
        ["label: Normal -> normal; Hyper and Hypo -> abnormal"],
    )


def build_thyroid3(raw: RawTables) -> Dataset:
    frame = raw.tables["thyroid"]
    classes = ["normal", "hyper", "hypo"]
    y = encode_labels(
        frame["Diagnosis"], classes, {"Normal": "normal", "Hyper": "hyper", "Hypo": "hypo"}
    )
    return dataset_from_frame(
        frame, THYROID_COLUMNS[1:], (), y, classes, ["label: Diagnosis as is (3 classes)"]
    )


HEART_DISCRETE = ("sex", "cp", "fbs", "restecg", "exang", "slope", "thal")
HEART_MISSING_CODE = -1.0


def build_heart(raw: RawTables) -> Dataset:
    """All 13 UCI attributes (K&G: 7 discrete + 6 continuous); missing values filled, recorded."""
    frame = raw.tables["heart"].copy()
    features = HEART_COLUMNS[:-1]
    filled = []
    for column in features:
        missing = int(frame[column].isna().sum())
        if not missing:
            continue
        if column in HEART_DISCRETE:
            frame[column] = frame[column].fillna(HEART_MISSING_CODE)
            filled.append(f"{column}: {missing} missing -> own level {HEART_MISSING_CODE:g}")
        else:
            median = float(frame[column].median())
            frame[column] = frame[column].fillna(median)
            filled.append(f"{column}: {missing} missing -> median {median:g}")
    y = (frame["num"] > 0).astype(np.int64).to_numpy()
    transformations = [
        "label: num > 0 -> present, num = 0 -> absent",
        "kept all 13 attributes; discrete: " + ", ".join(HEART_DISCRETE),
        "missing values (discrete: a 'missing' level; continuous: median of the known values): "
        + "; ".join(filled),
    ]
    classes = ["absent", "present"]
    return dataset_from_frame(frame, features, HEART_DISCRETE, y, classes, transformations)


def build_ionosphere(raw: RawTables) -> Dataset:
    frame = raw.tables["ionosphere"]
    features = [f"V{i}" for i in range(1, 35)]
    y = encode_labels(frame["Class"], ["bad", "good"])
    transformations = [
        "kept all 34 columns, including V2, which is constant 0",
        "V1 and V2 (0/1 factors) marked discrete; for 0/1 values eq. 14's 1 - delta equals the "
        "squared difference, so this matches K&G's 34 continuous",
    ]
    return dataset_from_frame(frame, features, ("V1", "V2"), y, ["bad", "good"], transformations)


CRAB_MEASUREMENTS = ["FL", "RW", "CL", "CW", "BD"]


def _crabs(raw: RawTables, features: list[str], note: str) -> Dataset:
    frame = raw.tables["crabs"].copy()
    frame["sp"] = frame["sp"].map({"B": 0.0, "O": 1.0})
    y = encode_labels(frame["sex"], ["female", "male"], {"F": "female", "M": "male"})
    transformations = ["label: sex (F -> female, M -> male)", "sp coded B = 0, O = 1", note]
    return dataset_from_frame(frame, features, ("sp", "index"), y, ["female", "male"], transformations)


def build_crabs(raw: RawTables) -> Dataset:
    return _crabs(
        raw, ["sp", "index", *CRAB_MEASUREMENTS], "inputs: sp and index (discrete) + 5 measurements"
    )


def build_crabs_colour(raw: RawTables) -> Dataset:
    return _crabs(raw, ["sp", *CRAB_MEASUREMENTS], "inputs: colour sp (discrete) + 5 measurements")


def build_crabs_nocolour(raw: RawTables) -> Dataset:
    return _crabs(raw, CRAB_MEASUREMENTS, "inputs: the 5 measurements")


PIMA_FEATURES = ["npreg", "glu", "bp", "skin", "bmi", "ped", "age"]


def _pima(frame: pd.DataFrame, transformations: list[str], **extra) -> Dataset:
    y = encode_labels(frame["type"], ["No", "Yes"])
    return dataset_from_frame(
        frame, PIMA_FEATURES, (), y, ["No", "Yes"], ["label: type", *transformations], **extra
    )


def build_pima_tr(raw: RawTables) -> Dataset:
    return _pima(raw.tables["Pima.tr"], ["rows: Pima.tr only (K&G)"])


def build_pima(raw: RawTables) -> Dataset:
    frame = pd.concat([raw.tables["Pima.tr"], raw.tables["Pima.te"]], ignore_index=True)
    return _pima(frame, ["rows: the 200 of Pima.tr, then the 332 of Pima.te"])


# fmt: off
BOSTON_UCI = [
    "CRIM", "ZN", "INDUS", "CHAS", "NOX", "RM", "AGE", "DIS", "RAD", "TAX", "PTRATIO", "B", "LSTAT",
]
# fmt: on
BOSTON_FEATURES = ["TOWN#", "TRACT", "LON", "LAT", *BOSTON_UCI]


def build_boston(raw: RawTables) -> Dataset:
    """K&G's 17 variables: the 20 less TOWN (= TOWN#), MEDV and CMEDV; TOWN#, CHAS, RAD discrete."""
    frame = raw.tables["boston"]
    names = ["cmedv<=25", "cmedv>25"]
    y = (frame["CMEDV"] > 25).astype(np.int64).to_numpy()
    transformations = [
        "label: CMEDV (corrected median value, $1000s) > 25",
        "dropped OBS. (row number), TOWN (text duplicate of TOWN#), MEDV and CMEDV -> 17 inputs",
        "discrete: TOWN#, CHAS, RAD (K&G: 3 discrete + 14 continuous)",
    ]
    discrete = ("TOWN#", "CHAS", "RAD")
    return dataset_from_frame(frame, BOSTON_FEATURES, discrete, y, names, transformations)


BOSTON3_CUTS = (15.4, 23.7)


def build_boston3(raw: RawTables) -> Dataset:
    """K&G Table 6: the 13 UCI inputs (CHAS discrete), 3 classes by value cuts 15.4 and 23.7."""
    frame = raw.tables["boston"]
    names = ["<=15.4", "(15.4,23.7]", ">23.7"]
    y = np.searchsorted(np.array(BOSTON3_CUTS), frame["CMEDV"].to_numpy(), side="left").astype(np.int64)
    transformations = [
        "label: CMEDV <= 15.4, 15.4 < CMEDV <= 23.7, CMEDV > 23.7 (MEDV gives the same counts)",
        "inputs: the 13 UCI attributes (K&G Table 6: 1 discrete + 12 continuous); CHAS discrete",
    ]
    return dataset_from_frame(frame, BOSTON_UCI, ("CHAS",), y, names, transformations)


def build_autompg(raw: RawTables) -> Dataset:
    frame = raw.tables["cars"]
    no_mpg = int(frame["mpg"].isna().sum())
    frame = frame[frame["mpg"].notna()].reset_index(drop=True)
    missing_hp = int(frame["horsepower"].isna().sum())
    median_hp = float(frame["horsepower"].median())
    frame = frame.assign(horsepower=frame["horsepower"].fillna(median_hp))
    classes = list(ORIGINS.values())
    y = encode_labels(frame["origin"], classes)
    transformations = [
        f"dropped {no_mpg} rows with no MPG",
        f"horsepower: {missing_hp} missing -> median {median_hp:g}",
        "label: origin (USA, Europe, Japan); inputs: the other 7 numeric attributes, "
        "cylinders and year discrete (K&G Table 6: 2 discrete + 5 continuous); car name dropped",
    ]
    return dataset_from_frame(frame, CARS_COLUMNS, ("cylinders", "year"), y, classes, transformations)


GLASS_CLASSES = ["WinF", "WinNF", "Veh", "Con", "Tabl", "Head"]


def build_glass(raw: RawTables) -> Dataset:
    frame = raw.tables["fgl"]
    y = encode_labels(frame["type"], GLASS_CLASSES)
    return dataset_from_frame(
        frame, FGL_COLUMNS[:-1], (), y, GLASS_CLASSES, ["label: type (MASS fgl levels)"]
    )


def build_iris(raw: RawTables) -> Dataset:
    frame = raw.tables["iris"]
    y = encode_labels(frame["species"], IRIS_SPECIES)
    return dataset_from_frame(frame, IRIS_COLUMNS, (), y, IRIS_SPECIES, ["label: species"])
