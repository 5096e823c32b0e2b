"""What the builders share: label encoding and the two ways a builder makes a Dataset.

A *builder* turns the tables of a data set's raw sets (:class:`RawTables`, one argument per
raw set) into a :class:`~gpcbench.data.dataset.Dataset` whose provenance lists every
``"transformations"`` it applied; the catalog names each data set's builder.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from gpcbench.data.dataset import Dataset
from gpcbench.data.readers_common import MalformedFileError

Builder = Callable[..., Dataset]
PLUS_MINUS = ["-1", "+1"]


def encode_labels(labels, class_names: list[str], mapping: dict | None = None) -> np.ndarray:
    """Map raw labels (via ``mapping`` if given) to indices into ``class_names``."""
    raw = pd.Series(labels).reset_index(drop=True)
    named = raw.map(mapping) if mapping is not None else raw.astype(str)
    bad = ~named.isin(class_names)
    if bad.any():
        unknown = sorted(set(map(str, raw[bad].unique())))
        raise MalformedFileError(f"labels {unknown} do not map to the classes {class_names}")
    return named.map({c: i for i, c in enumerate(class_names)}).to_numpy(dtype=np.int64)


def dataset_from_frame(
    frame, features, discrete, labels, class_names, transformations, **extra
) -> Dataset:
    """A Dataset of the ``features`` columns of ``frame``; those in ``discrete`` are discrete."""
    types = ["discrete" if f in discrete else "continuous" for f in features]
    X = frame[features].to_numpy(dtype=float)
    return Dataset(
        X, labels, list(features), types, class_names, {"transformations": transformations, **extra}
    )


def plus_minus_dataset(X, labels, negative, transformations: list[str], prefix: str = "x") -> Dataset:
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
