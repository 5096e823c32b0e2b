"""Builders of ZDJ's binary benchmarks: the SSL-book sets, digits, letters, newsgroups,
splice, astroparticle, adult, mushrooms, ringnorm and twonorm."""

from __future__ import annotations

import numpy as np

from gpcbench.data.builders_common import (
    PLUS_MINUS,
    dataset_from_frame,
    encode_labels,
    plus_minus_dataset,
)
from gpcbench.data.dataset import Dataset
from gpcbench.data.readers_common import RawTables
from gpcbench.data.readers_keel import LETTER_COLUMNS, MUSHROOM_ATTRIBUTES, SPLICE_POSITIONS


def build_sslbook(raw: RawTables) -> Dataset:
    X, y = np.asarray(raw.tables["X"]), raw.tables["y"]
    return plus_minus_dataset(X, y, -1, ["X, y as in the .mat file"])


def build_coil2(raw: RawTables) -> Dataset:
    X, y = np.asarray(raw.tables["X"]), raw.tables["y"]
    return plus_minus_dataset(X, y, 0, ["label 0 -> -1, 1 -> +1"])


NEWSGROUPS_TERMS = 893


def build_newsgroups(raw: RawTables) -> Dataset:
    """Keep the 893 terms (ZDJ's p) with the highest document frequency, in column order."""
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
    dataset = plus_minus_dataset(
        X[:, kept].toarray(), raw.tables["y"], -1, transformations, prefix="term"
    )
    dataset.feature_names = [f"term{j + 1}" for j in kept]
    return dataset


def build_digit_pair(raw: RawTables, pair: tuple[int, int]) -> Dataset:
    """The rows of digits ``pair[0]`` (first class) and ``pair[1]``, in file order."""
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


def build_letter_pair(raw: RawTables, pair: tuple[str, str]) -> Dataset:
    """The rows of letters ``pair[0]`` (first class) and ``pair[1]``, in file order."""
    frame = raw.tables["letter"]
    frame = frame[frame["lettr"].isin(pair)].reset_index(drop=True)
    y = encode_labels(frame["lettr"], list(pair))
    return dataset_from_frame(
        frame,
        LETTER_COLUMNS,
        (),
        y,
        list(pair),
        [f"rows: letters {' and '.join(pair)} in file order"],
    )


SPLICE_CODES = {"A": 1.0, "G": 2.0, "C": 3.0, "T": 4.0}


def build_splice(raw: RawTables) -> Dataset:
    """Catalog note N2: drop ambiguous sequences, code A, G, C, T as 1..4, N = +1 vs EI/IE = -1."""
    frame = raw.tables["splice"]
    bases = frame[SPLICE_POSITIONS].apply(lambda column: column.str.strip().str.upper())
    clean = bases.isin(list(SPLICE_CODES)).all(axis=1)
    ambiguous = sorted(set(np.unique(bases[~clean].to_numpy())) - set(SPLICE_CODES))
    coded = bases[clean].replace(SPLICE_CODES).astype(float).reset_index(drop=True)
    label = frame.loc[clean, "class"].str.strip().reset_index(drop=True)
    y = encode_labels(label, PLUS_MINUS, {"N": "+1", "EI": "-1", "IE": "-1"})
    transformations = [
        f"dropped {int((~clean).sum())} sequences holding ambiguous letters {', '.join(ambiguous)}",
        "bases coded A=1, G=2, C=3, T=4 (LIBSVM's scaled file has -1, -1/3, 1/3, 1)",
        "label: N -> +1, EI and IE -> -1",
    ]
    coded.columns = SPLICE_POSITIONS
    return dataset_from_frame(coded, SPLICE_POSITIONS, SPLICE_POSITIONS, y, PLUS_MINUS, transformations)


def _train_test(raw: RawTables, negative: float, note: str, prefix: str = "x") -> Dataset:
    (X_train, y_train), (X_test, y_test) = raw.tables["train"], raw.tables["test"]
    X, y = np.vstack([X_train, X_test]), np.concatenate([y_train, y_test])
    transformations = [f"rows: the {len(y_train)} training rows, then the {len(y_test)} test rows", note]
    return plus_minus_dataset(X, y, negative, transformations, prefix=prefix)


def build_astroparticle(raw: RawTables) -> Dataset:
    dataset = _train_test(raw, 0.0, "label 0 and 1 as in svmguide1; features unscaled")
    dataset.class_names = ["0", "1"]
    return dataset


def build_adult(raw: RawTables) -> Dataset:
    dataset = _train_test(
        raw, -1.0, "label -1/+1 as in a1a; 123 binary indicators (Platt's encoding)", "f"
    )
    dataset.feature_types = ["discrete"] * dataset.X.shape[1]
    return dataset


MUSHROOM_DROPPED = "stalk-root"


def build_mushrooms(raw: RawTables) -> Dataset:
    """LIBSVM's encoding: one-hot of the 21 attributes other than stalk-root (values present)."""
    frame = raw.tables["mushroom"]
    attributes = [a for a in MUSHROOM_ATTRIBUTES if a != MUSHROOM_DROPPED]
    columns, names = [], []
    for attribute in attributes:
        for value in sorted(frame[attribute].str.strip().unique()):
            columns.append((frame[attribute].str.strip() == value).to_numpy(dtype=float))
            names.append(f"{attribute}={value}")
    y = encode_labels(
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


def build_ringnorm(raw: RawTables) -> Dataset:
    frame = raw.tables["pool"]
    features = [c for c in frame.columns if c != "class"]
    X = frame[features].to_numpy(dtype=float) / RINGNORM_SCALE
    y = encode_labels(frame["class"].astype(int).astype(str), ["0", "1"])
    transformations = [
        f"values divided by {RINGNORM_SCALE:g} (KEEL stores them x1000)",
        "label: class 0/1 as in KEEL",
    ]
    return Dataset(
        X, y, features, ["continuous"] * len(features), ["0", "1"], {"transformations": transformations}
    )


def build_twonorm(raw: RawTables) -> Dataset:
    frame = raw.tables["pool"]
    features = [c for c in frame.columns if c != "class"]
    y = encode_labels(frame["class"].astype(int).astype(str), ["0", "1"])
    return dataset_from_frame(frame, features, (), y, ["0", "1"], ["label: class 0/1 as in KEEL"])
