"""What every reader shares: the tables it returns, the error it raises, and its checks.

A reader takes ``files`` (local file name -> path, as written by the fetch step) and returns
:class:`RawTables`: named tables (pandas DataFrames, or ``(X, y)`` arrays for LIBSVM-style
sets) plus notes on what the reader itself did (row selection, recoding). Readers raise
:class:`MalformedFileError` (one line, naming the file) when a file does not have the expected
layout; the fetch step uses that to reject a bad download and try the next source.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd


class MalformedFileError(ValueError):
    """A raw file that does not have the layout its reader expects."""


@dataclass
class RawTables:
    """The tables of one raw set and the notes of what reading them involved."""

    tables: dict
    notes: list[str] = field(default_factory=list)


Reader = Callable[[dict[str, Path]], RawTables]


def only_file(files: dict[str, Path], suffix: str = "") -> Path:
    """The one file of ``files`` whose name ends in ``suffix``."""
    matches = [p for name, p in files.items() if name.endswith(suffix)]
    if len(matches) != 1:
        raise MalformedFileError(f"expected one file ending in {suffix!r}, got {sorted(files)}")
    return matches[0]


def require(condition: bool, message: str) -> None:
    """Raise MalformedFileError with ``message`` unless ``condition`` holds."""
    if not condition:
        raise MalformedFileError(message)


def check_columns(frame: pd.DataFrame, expected: int, what: str) -> None:
    """Require ``frame`` to have ``expected`` columns."""
    require(frame.shape[1] == expected, f"{what}: {frame.shape[1]} columns, expected {expected}")
