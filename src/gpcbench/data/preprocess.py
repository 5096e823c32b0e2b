"""The preprocess step: raw set tables (or a generator) -> one processed data set + provenance.

:func:`preprocess` reads ``raw_dir/<raw set>/manifest.json``, checks the files' SHA-256 against
it, parses them with the reader the manifest names, and runs the data set's *builder*: a short
function that selects rows and columns, recodes labels and records every transformation. The
result is written with :func:`gpcbench.data.dataset.save_dataset`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from gpcbench.data import readers as rd
from gpcbench.data.dataset import Dataset, save_dataset
from gpcbench.data.generators import GENERATORS
from gpcbench.data.readers import MalformedFileError, RawTables, read_raw_tables
from gpcbench.data.registry import DatasetSpec, dataset_spec
from gpcbench.data.sources import MANIFEST, DataSourceError
from gpcbench.io import sha256_file

PLUS_MINUS = ["-1", "+1"]
DEFAULT_SEED = 20061201  # config/config.yaml's seed: the one checksums.tsv records for generated sets


def preprocess(name: str, raw_dir: Path, out_dir: Path, *, seed: int) -> dict:
    """Build data set ``name`` and write ``out_dir/<name>.npz`` and ``out_dir/<name>.json``.

    Parameters
    ----------
    name : str
        A key of :data:`gpcbench.data.registry.DATASETS`.
    raw_dir : Path
        Folder holding the fetched raw sets (``data/raw``).
    out_dir : Path
        Folder for the processed files (``data/processed``).
    seed : int
        Seed of the generator (synthetic sets); recorded, and unused, for archive sets.

    Returns
    -------
    dict
        The provenance written to ``<name>.json``.

    Raises
    ------
    UnknownDatasetError
        If ``name`` is not in the registry.
    DataSourceError
        If a raw set is missing, does not match its manifest, or cannot be parsed.
    """
    dataset = build_dataset(name, Path(raw_dir), seed=seed)
    out_dir = Path(out_dir)
    return save_dataset(dataset, out_dir / f"{name}.npz", out_dir / f"{name}.json")


def build_dataset(name: str, raw_dir: Path, *, seed: int) -> Dataset:
    """Build data set ``name`` in memory with its full provenance (no files written)."""
    spec = dataset_spec(name)
    if spec.kind == "generator":
        dataset = GENERATORS[spec.generator](seed)
        raw_records: dict = {}
    else:
        loaded = {raw: load_raw_set(raw, Path(raw_dir), dataset=name) for raw in spec.raw_sets}
        try:
            dataset = BUILDERS[spec.builder](*(tables for tables, _ in loaded.values()))
        except (ValueError, KeyError) as exc:  # MalformedFileError is a ValueError
            raw_names = ", ".join(spec.raw_sets)
            raise DataSourceError(
                f"data set {name!r}: raw set {raw_names} does not hold what the builder needs: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        raw_records = {raw: _raw_record(manifest, tables) for raw, (tables, manifest) in loaded.items()}
    dataset.provenance = _provenance(spec, dataset.provenance, raw_records, seed)
    return dataset


def load_raw_set(raw: str, raw_dir: Path, *, dataset: str) -> tuple[RawTables, dict]:
    """Read raw set ``raw`` as fetched: verify its files against the manifest, then parse them."""
    folder = raw_dir / raw
    manifest_path = folder / MANIFEST
    if not manifest_path.exists():
        raise DataSourceError(
            f"data set {dataset!r}: raw set {raw!r} is not fetched (no {manifest_path})"
        )
    manifest = json.loads(manifest_path.read_text())
    files = {fname: folder / fname for fname in manifest["files"]}
    for fname, path in files.items():
        expected = manifest["files"][fname]["sha256"]
        if not path.exists() or sha256_file(path) != expected:
            raise DataSourceError(
                f"data set {dataset!r}: raw file {path} is missing or does not match "
                "its manifest SHA-256"
            )
    try:
        return read_raw_tables(manifest["format"], files), manifest
    except MalformedFileError as exc:
        raise DataSourceError(f"data set {dataset!r}: raw set {raw!r} is malformed: {exc}") from exc


def _raw_record(manifest: dict, tables: RawTables) -> dict:
    keys = (
        "source",
        "source_type",
        "package",
        "version",
        "url",
        "archive",
        "archive_sha256",
        "format",
        "note",
    )
    record = {key: manifest.get(key) for key in keys}
    record["files"] = {fname: info["sha256"] for fname, info in manifest["files"].items()}
    record["reader_notes"] = list(tables.notes)
    return record


def _provenance(spec: DatasetSpec, built: dict, raw_records: dict, seed: int) -> dict:
    used = sorted({record["source"] for record in raw_records.values()}) or ["generator"]
    substitute, differences = _substitution(spec, raw_records)
    notes = [note for record in raw_records.values() for note in record.pop("reader_notes", [])]
    provenance = {
        "dataset": spec.name,
        "description": spec.description,
        "papers": spec.papers,
        "catalog_row": spec.catalog_row,
        "kind": spec.kind,
        "source": "+".join(used),
        "raw_sets": raw_records,
        "seed": seed,
        "seed_used": spec.kind == "generator",
        "substitute": substitute,
        "differences": differences,
        **spec.extra,
        **{k: v for k, v in built.items() if k != "transformations"},
    }
    provenance["transformations"] = notes + list(built.get("transformations", []))
    return provenance


def _substitution(spec: DatasetSpec, raw_records: dict) -> tuple[str | None, str | None]:
    """The catalog's substitute label holds for the offline source; a canonical one has its own note."""
    canonical_notes = [
        r["note"] for r in raw_records.values() if r["source"] == "canonical" and r["note"]
    ]
    if any(r["source"] == "canonical" for r in raw_records.values()):
        return None, ("; ".join(canonical_notes) or None)
    return spec.substitute, spec.differences


# ---------------------------------------------------------------------------------------------
# Builders: one per data set, each (RawTables, ...) -> Dataset with "transformations"
# ---------------------------------------------------------------------------------------------

Builder = Callable[..., Dataset]
BUILDERS: dict[str, Builder] = {}


def builder(*names: str):
    """Register a builder for the data sets ``names``."""

    def register(func: Builder) -> Builder:
        for name in names:
            BUILDERS[name] = func
        return func

    return register


def _encode_labels(labels, class_names: list[str], mapping: dict | None = None) -> np.ndarray:
    """Map raw labels (via ``mapping`` if given) to indices into ``class_names``."""
    raw = pd.Series(labels).reset_index(drop=True)
    named = raw.map(mapping) if mapping is not None else raw.astype(str)
    bad = ~named.isin(class_names)
    if bad.any():
        unknown = sorted(set(map(str, raw[bad].unique())))
        raise MalformedFileError(f"labels {unknown} do not map to the classes {class_names}")
    return named.map({c: i for i, c in enumerate(class_names)}).to_numpy(dtype=np.int64)


def _from_frame(frame, features, discrete, labels, class_names, transformations, **extra) -> Dataset:
    types = ["discrete" if f in discrete else "continuous" for f in features]
    X = frame[features].to_numpy(dtype=float)
    return Dataset(
        X, labels, list(features), types, class_names, {"transformations": transformations, **extra}
    )


@builder("thyroid")
def build_thyroid(raw: RawTables) -> Dataset:
    frame = raw.tables["thyroid"]
    mapping = {"Normal": "normal", "Hyper": "abnormal", "Hypo": "abnormal"}
    y = _encode_labels(frame["Diagnosis"], ["normal", "abnormal"], mapping)
    return _from_frame(
        frame,
        rd.THYROID_COLUMNS[1:],
        (),
        y,
        ["normal", "abnormal"],
        ["label: Normal -> normal; Hyper and Hypo -> abnormal"],
    )


@builder("thyroid3")
def build_thyroid3(raw: RawTables) -> Dataset:
    frame = raw.tables["thyroid"]
    classes = ["normal", "hyper", "hypo"]
    y = _encode_labels(
        frame["Diagnosis"], classes, {"Normal": "normal", "Hyper": "hyper", "Hypo": "hypo"}
    )
    return _from_frame(
        frame, rd.THYROID_COLUMNS[1:], (), y, classes, ["label: Diagnosis as is (3 classes)"]
    )


HEART_DISCRETE = ("sex", "cp", "fbs", "restecg", "exang", "slope", "thal")
HEART_MISSING_CODE = -1.0


@builder("heart")
def build_heart(raw: RawTables) -> Dataset:
    """All 13 UCI attributes (K&G: 7 discrete + 6 continuous); missing values filled, recorded."""
    frame = raw.tables["heart"].copy()
    features = rd.HEART_COLUMNS[:-1]
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
    return _from_frame(frame, features, HEART_DISCRETE, y, ["absent", "present"], transformations)


@builder("ionosphere")
def build_ionosphere(raw: RawTables) -> Dataset:
    frame = raw.tables["ionosphere"]
    features = [f"V{i}" for i in range(1, 35)]
    y = _encode_labels(frame["Class"], ["bad", "good"])
    transformations = [
        "kept all 34 columns, including V2, which is constant 0",
        "V1 and V2 (0/1 factors) marked discrete; for 0/1 values eq. 14's 1 - delta equals the "
        "squared difference, so this matches K&G's 34 continuous",
    ]
    return _from_frame(frame, features, ("V1", "V2"), y, ["bad", "good"], transformations)


CRAB_MEASUREMENTS = ["FL", "RW", "CL", "CW", "BD"]


def _crabs(raw: RawTables, features: list[str], note: str) -> Dataset:
    frame = raw.tables["crabs"].copy()
    frame["sp"] = frame["sp"].map({"B": 0.0, "O": 1.0})
    y = _encode_labels(frame["sex"], ["female", "male"], {"F": "female", "M": "male"})
    transformations = ["label: sex (F -> female, M -> male)", "sp coded B = 0, O = 1", note]
    return _from_frame(frame, features, ("sp", "index"), y, ["female", "male"], transformations)


@builder("crabs")
def build_crabs(raw: RawTables) -> Dataset:
    return _crabs(
        raw, ["sp", "index", *CRAB_MEASUREMENTS], "inputs: sp and index (discrete) + 5 measurements"
    )


@builder("crabs_colour")
def build_crabs_colour(raw: RawTables) -> Dataset:
    return _crabs(raw, ["sp", *CRAB_MEASUREMENTS], "inputs: colour sp (discrete) + 5 measurements")


@builder("crabs_nocolour")
def build_crabs_nocolour(raw: RawTables) -> Dataset:
    return _crabs(raw, CRAB_MEASUREMENTS, "inputs: the 5 measurements")


PIMA_FEATURES = ["npreg", "glu", "bp", "skin", "bmi", "ped", "age"]


def _pima(frame: pd.DataFrame, transformations: list[str], **extra) -> Dataset:
    y = _encode_labels(frame["type"], ["No", "Yes"])
    return _from_frame(
        frame, PIMA_FEATURES, (), y, ["No", "Yes"], ["label: type", *transformations], **extra
    )


@builder("pima_tr")
def build_pima_tr(raw: RawTables) -> Dataset:
    return _pima(raw.tables["Pima.tr"], ["rows: Pima.tr only (K&G)"])


@builder("pima")
def build_pima(raw: RawTables) -> Dataset:
    frame = pd.concat([raw.tables["Pima.tr"], raw.tables["Pima.te"]], ignore_index=True)
    return _pima(frame, ["rows: the 200 of Pima.tr, then the 332 of Pima.te"])


# fmt: off
BOSTON_UCI = [
    "CRIM", "ZN", "INDUS", "CHAS", "NOX", "RM", "AGE", "DIS", "RAD", "TAX", "PTRATIO", "B", "LSTAT",
]
# fmt: on
BOSTON_FEATURES = ["TOWN#", "TRACT", "LON", "LAT", *BOSTON_UCI]


@builder("boston")
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
    return _from_frame(frame, BOSTON_FEATURES, ("TOWN#", "CHAS", "RAD"), y, names, transformations)


BOSTON3_CUTS = (15.4, 23.7)


@builder("boston3")
def build_boston3(raw: RawTables) -> Dataset:
    """K&G Table 6: the 13 UCI inputs (CHAS discrete), 3 classes by value cuts 15.4 and 23.7."""
    frame = raw.tables["boston"]
    names = ["<=15.4", "(15.4,23.7]", ">23.7"]
    y = np.searchsorted(np.array(BOSTON3_CUTS), frame["CMEDV"].to_numpy(), side="left").astype(np.int64)
    transformations = [
        "label: CMEDV <= 15.4, 15.4 < CMEDV <= 23.7, CMEDV > 23.7 (MEDV gives the same counts)",
        "inputs: the 13 UCI attributes (K&G Table 6: 1 discrete + 12 continuous); CHAS discrete",
    ]
    return _from_frame(frame, BOSTON_UCI, ("CHAS",), y, names, transformations)


@builder("autompg")
def build_autompg(raw: RawTables) -> Dataset:
    frame = raw.tables["cars"]
    no_mpg = int(frame["mpg"].isna().sum())
    frame = frame[frame["mpg"].notna()].reset_index(drop=True)
    missing_hp = int(frame["horsepower"].isna().sum())
    median_hp = float(frame["horsepower"].median())
    frame = frame.assign(horsepower=frame["horsepower"].fillna(median_hp))
    classes = list(rd.ORIGINS.values())
    y = _encode_labels(frame["origin"], classes)
    transformations = [
        f"dropped {no_mpg} rows with no MPG",
        f"horsepower: {missing_hp} missing -> median {median_hp:g}",
        "label: origin (USA, Europe, Japan); inputs: the other 7 numeric attributes, "
        "cylinders and year discrete (K&G Table 6: 2 discrete + 5 continuous); car name dropped",
    ]
    return _from_frame(frame, rd.CARS_COLUMNS, ("cylinders", "year"), y, classes, transformations)


GLASS_CLASSES = ["WinF", "WinNF", "Veh", "Con", "Tabl", "Head"]


@builder("glass")
def build_glass(raw: RawTables) -> Dataset:
    frame = raw.tables["fgl"]
    y = _encode_labels(frame["type"], GLASS_CLASSES)
    return _from_frame(
        frame, rd.FGL_COLUMNS[:-1], (), y, GLASS_CLASSES, ["label: type (MASS fgl levels)"]
    )


@builder("iris")
def build_iris(raw: RawTables) -> Dataset:
    frame = raw.tables["iris"]
    y = _encode_labels(frame["species"], rd.IRIS_SPECIES)
    return _from_frame(frame, rd.IRIS_COLUMNS, (), y, rd.IRIS_SPECIES, ["label: species"])


def _pm_dataset(X, labels, negative, transformations: list[str], prefix: str = "x") -> Dataset:
    """A binary set with classes '-1', '+1'; ``negative`` is the raw label that becomes -1."""
    labels = np.asarray(labels).ravel()
    values = set(np.unique(labels).tolist())
    if len(values) != 2 or negative not in values:
        raise MalformedFileError(f"expected two labels including {negative!r}, got {sorted(values)}")
    y = (labels != negative).astype(np.int64)
    names = [f"{prefix}{j}" for j in range(1, X.shape[1] + 1)]
    return Dataset(
        X, y, names, ["continuous"] * X.shape[1], PLUS_MINUS, {"transformations": transformations}
    )


@builder("sslbook")
def build_sslbook(raw: RawTables) -> Dataset:
    return _pm_dataset(np.asarray(raw.tables["X"]), raw.tables["y"], -1, ["X, y as in the .mat file"])


@builder("coil2")
def build_coil2(raw: RawTables) -> Dataset:
    return _pm_dataset(np.asarray(raw.tables["X"]), raw.tables["y"], 0, ["label 0 -> -1, 1 -> +1"])


NEWSGROUPS_TERMS = 893


@builder("newsgroups")
def build_newsgroups(raw: RawTables) -> Dataset:
    """Keep the 893 terms (Zhang's p) with the highest document frequency, in column order."""
    import scipy.sparse

    X = scipy.sparse.csc_matrix(raw.tables["X"])
    document_frequency = np.diff((X != 0).tocsc().indptr)
    ranked = np.lexsort((np.arange(X.shape[1]), -document_frequency))
    kept = np.sort(ranked[:NEWSGROUPS_TERMS])
    lowest = document_frequency[ranked[NEWSGROUPS_TERMS - 1]]
    transformations = [
        f"kept the {NEWSGROUPS_TERMS} of {X.shape[1]} terms with the highest document frequency "
        f"(ties by column order; lowest kept frequency {lowest}), "
        "in their original column order; values as in the .mat file",
    ]
    dataset = _pm_dataset(X[:, kept].toarray(), raw.tables["y"], -1, transformations, prefix="term")
    dataset.feature_names = [f"term{j + 1}" for j in kept]
    return dataset


def _digit_pair(raw: RawTables, pair: tuple[int, int]) -> Dataset:
    digits = raw.tables["digit"]
    rows = np.isin(digits, pair)
    y = (digits[rows] == pair[1]).astype(np.int64)
    names = [f"px{r}_{c}" for r in range(1, 17) for c in range(1, 17)]
    transformations = [
        f"rows: digits {pair[0]} and {pair[1]} in file order; label {pair[0]} vs {pair[1]}"
    ]
    return Dataset(
        raw.tables["X"][rows],
        y,
        names,
        ["continuous"] * 256,
        [str(d) for d in pair],
        {"transformations": transformations},
    )


@builder("usps01")
def build_usps01(raw: RawTables) -> Dataset:
    return _digit_pair(raw, (0, 1))


@builder("usps09")
def build_usps09(raw: RawTables) -> Dataset:
    return _digit_pair(raw, (0, 9))


def _letter_pair(raw: RawTables, pair: tuple[str, str]) -> Dataset:
    frame = raw.tables["letter"]
    frame = frame[frame["lettr"].isin(pair)].reset_index(drop=True)
    y = _encode_labels(frame["lettr"], list(pair))
    return _from_frame(
        frame,
        rd.LETTER_COLUMNS,
        (),
        y,
        list(pair),
        [f"rows: letters {' and '.join(pair)} in file order"],
    )


@builder("letters_ab")
def build_letters_ab(raw: RawTables) -> Dataset:
    return _letter_pair(raw, ("A", "B"))


@builder("letters_ac")
def build_letters_ac(raw: RawTables) -> Dataset:
    return _letter_pair(raw, ("A", "C"))


SPLICE_CODES = {"A": 1.0, "G": 2.0, "C": 3.0, "T": 4.0}


@builder("splice")
def build_splice(raw: RawTables) -> Dataset:
    """Catalog note N2: drop ambiguous sequences, code A, G, C, T as 1..4, N = +1 vs EI/IE = -1."""
    frame = raw.tables["splice"]
    bases = frame[rd.SPLICE_POSITIONS].apply(lambda column: column.str.strip().str.upper())
    clean = bases.isin(list(SPLICE_CODES)).all(axis=1)
    ambiguous = sorted(set(np.unique(bases[~clean].to_numpy())) - set(SPLICE_CODES))
    coded = bases[clean].replace(SPLICE_CODES).astype(float).reset_index(drop=True)
    label = frame.loc[clean, "class"].str.strip().reset_index(drop=True)
    y = _encode_labels(label, PLUS_MINUS, {"N": "+1", "EI": "-1", "IE": "-1"})
    transformations = [
        f"dropped {int((~clean).sum())} sequences holding ambiguous letters {', '.join(ambiguous)}",
        "bases coded A=1, G=2, C=3, T=4 (LIBSVM's scaled file has -1, -1/3, 1/3, 1)",
        "label: N -> +1, EI and IE -> -1",
    ]
    coded.columns = rd.SPLICE_POSITIONS
    return _from_frame(coded, rd.SPLICE_POSITIONS, rd.SPLICE_POSITIONS, y, PLUS_MINUS, transformations)


def _train_test(raw: RawTables, negative: float, note: str, prefix: str = "x") -> Dataset:
    (X_train, y_train), (X_test, y_test) = raw.tables["train"], raw.tables["test"]
    X, y = np.vstack([X_train, X_test]), np.concatenate([y_train, y_test])
    transformations = [f"rows: the {len(y_train)} training rows, then the {len(y_test)} test rows", note]
    return _pm_dataset(X, y, negative, transformations, prefix=prefix)


@builder("astroparticle")
def build_astroparticle(raw: RawTables) -> Dataset:
    dataset = _train_test(raw, 0.0, "label 0 and 1 as in svmguide1; features unscaled")
    dataset.class_names = ["0", "1"]
    return dataset


@builder("adult")
def build_adult(raw: RawTables) -> Dataset:
    dataset = _train_test(
        raw, -1.0, "label -1/+1 as in a1a; 123 binary indicators (Platt's encoding)", "f"
    )
    dataset.feature_types = ["discrete"] * dataset.X.shape[1]
    return dataset


MUSHROOM_DROPPED = "stalk-root"


@builder("mushrooms")
def build_mushrooms(raw: RawTables) -> Dataset:
    """LIBSVM's encoding: one-hot of the 21 attributes other than stalk-root (values present)."""
    frame = raw.tables["mushroom"]
    attributes = [a for a in rd.MUSHROOM_ATTRIBUTES if a != MUSHROOM_DROPPED]
    columns, names = [], []
    for attribute in attributes:
        for value in sorted(frame[attribute].str.strip().unique()):
            columns.append((frame[attribute].str.strip() == value).to_numpy(dtype=float))
            names.append(f"{attribute}={value}")
    y = _encode_labels(
        frame["class"].str.strip(), ["edible", "poisonous"], {"e": "edible", "p": "poisonous"}
    )
    transformations = [
        f"dropped {MUSHROOM_DROPPED}; one-hot encoded the other 21 attributes over the values "
        f"present (sorted) -> {len(names)} indicator columns",
        "label: e -> edible, p -> poisonous",
    ]
    return Dataset(
        np.column_stack(columns),
        y,
        names,
        ["discrete"] * len(names),
        ["edible", "poisonous"],
        {"transformations": transformations},
    )


RINGNORM_SCALE = 1000.0


@builder("ringnorm")
def build_ringnorm(raw: RawTables) -> Dataset:
    frame = raw.tables["pool"]
    features = [c for c in frame.columns if c != "class"]
    X = frame[features].to_numpy(dtype=float) / RINGNORM_SCALE
    y = _encode_labels(frame["class"].astype(int).astype(str), ["0", "1"])
    transformations = [
        f"values divided by {RINGNORM_SCALE:g} (KEEL stores them x1000)",
        "label: class 0/1 as in KEEL",
    ]
    return Dataset(
        X, y, features, ["continuous"] * len(features), ["0", "1"], {"transformations": transformations}
    )


@builder("twonorm")
def build_twonorm(raw: RawTables) -> Dataset:
    frame = raw.tables["pool"]
    features = [c for c in frame.columns if c != "class"]
    y = _encode_labels(frame["class"].astype(int).astype(str), ["0", "1"])
    return _from_frame(frame, features, (), y, ["0", "1"], ["label: class 0/1 as in KEEL"])


# ---------------------------------------------------------------------------------------------
# data/checksums.tsv: pinned archives and the content SHA-256 of every processed data set
# ---------------------------------------------------------------------------------------------

CHECKSUM_COLUMNS = ("kind", "name", "seed", "sha256", "detail")
CHECKSUMS_HEADER = (
    "# SHA-256 manifest of gpcbench's data. 'archive' rows: the pinned offline files (file SHA-256).\n"
    "# 'processed' rows: content_sha256 of each processed data set (arrays and names, not the .npz\n"
    "# bytes), built with the given seed ('-' where no seed is used).\n"
    "# Regenerate: python -m gpcbench.data.preprocess --write-checksums data/checksums.tsv\n"
)


def read_checksums(path: Path) -> dict[tuple[str, str], dict]:
    """Parse ``checksums.tsv`` into ``{(kind, name): {"seed": ..., "sha256": ..., "detail": ...}}``."""
    rows = {}
    for line in Path(path).read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if fields[0] == "kind":
            continue
        record = dict(zip(CHECKSUM_COLUMNS, fields))
        rows[(record["kind"], record["name"])] = record
    return rows


def checksum_lines(raw_dir: Path, *, seed: int) -> list[str]:
    """The rows of ``checksums.tsv``: every pinned archive, then every processed data set."""
    from gpcbench.data.dataset import content_sha256
    from gpcbench.data.registry import DATASETS, pinned_archives

    lines = ["\t".join(CHECKSUM_COLUMNS)]
    for filename, (digest, detail) in pinned_archives().items():
        lines.append("\t".join(("archive", filename, "-", digest, detail)))
    for name, spec in DATASETS.items():
        dataset = build_dataset(name, raw_dir, seed=seed)
        seed_text = str(seed) if spec.kind == "generator" else "-"
        shape = f"{dataset.X.shape[0]}x{dataset.X.shape[1]}"
        lines.append("\t".join(("processed", name, seed_text, content_sha256(dataset), shape)))
    return lines


def write_checksums(path: Path, raw_dir: Path, cache_dir: Path, *, seed: int) -> None:
    """Fetch every raw set from its archive (offline) and write ``checksums.tsv`` atomically."""
    from gpcbench.data.registry import RAW_SETS
    from gpcbench.data.sources import fetch_raw_set
    from gpcbench.io import atomic_write_text

    for raw in RAW_SETS:
        fetch_raw_set(raw, raw_dir, cache_dir, offline=True)
    atomic_write_text(path, CHECKSUMS_HEADER + "\n".join(checksum_lines(raw_dir, seed=seed)) + "\n")


def main(argv: list[str] | None = None) -> int:
    """``python -m gpcbench.data.preprocess --write-checksums data/checksums.tsv``."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m gpcbench.data.preprocess", description=main.__doc__)
    parser.add_argument("--write-checksums", type=Path, required=True, metavar="TSV")
    parser.add_argument("--raw-dir", type=Path, default=Path("data/raw"))
    parser.add_argument("--cache-dir", type=Path, default=Path("data/archives"))
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    write_checksums(args.write_checksums, args.raw_dir, args.cache_dir, seed=args.seed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
