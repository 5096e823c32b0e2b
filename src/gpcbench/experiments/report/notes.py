"""The prose beside the tables, kept out of the config: each table's notes in
``docs/tables/<table>.md`` and the causes of its cells beyond two standard errors in
``config/published/beyond_2se.yaml``.

A notes file is markdown: each bullet (``- `` at the start of a line, continued by lines
indented two spaces, joined with one space) is one note; other lines (the heading) are not
notes. A bullet that is only a link to ``shared/<topic>.md`` stands for that file's notes (text
several tables share, written once). A note quotes a measurement of a reading
(:mod:`gpcbench.experiments.readings`) as ``{reading:<name>.<key>.<key>[:<format>]}``, filled
from the reading's output ``<name>.json``; a note whose reading is missing or was made by other
code than the reading's now is marked stale and its numbers show as '?'. A note quotes a cell of
its own table as ``{ours:<row>|<column>[:<format>]}`` (our value) or ``{published:...}`` (the
published one), row and column as printed, filled from the cells the table job computes."""

from __future__ import annotations

import json
import re
from pathlib import Path

BULLET = "- "
CONTINUATION = "  "
#: A bullet that is only a link to a shared notes file.
INCLUDE = re.compile(r"\[[^\]]*\]\((shared/[\w.-]+\.md)\)")
#: A quoted cell of the note's table: ours or published, row, column, optional format spec.
CELL = re.compile(r"\{(ours|published):([^|{}]+)\|([^:{}]+)(?::([^{}]*))?\}")
#: A quoted reading: name, key path, optional format spec.
PLACEHOLDER = re.compile(r"\{reading:([a-z0-9_]+)((?:\.[\w-]+)+)(?::([^{}]*))?\}")


def file_notes(path: Path) -> list[str]:
    """The bullets of one notes file, each joined into one line."""
    notes = []
    for line in Path(path).read_text().splitlines():
        if line.startswith(BULLET):
            notes.append(line[len(BULLET):].strip())
        elif line.startswith(CONTINUATION) and line.strip() and notes:
            notes[-1] += " " + line.strip()
    return notes


def note_files(name: str, notes_dir: Path) -> list[Path]:
    """``<notes_dir>/<name>.md`` and the shared files it includes (none if it has no file)."""
    path = Path(notes_dir) / f"{name}.md"
    if not path.is_file():
        return []
    included = [INCLUDE.fullmatch(note) for note in file_notes(path)]
    return [path, *(path.parent / match.group(1) for match in included if match)]


def table_notes(name: str, notes_dir: Path, readings: dict | None = None,
                current_hashes: dict | None = None) -> list[str]:
    """The notes of table ``name`` in order, shared files expanded and readings filled in
    (``readings``: name -> the reading's output; ``current_hashes``: name -> the reading's code
    hash now, :func:`gpcbench.experiments.readings.reading_code_hash`)."""
    path = Path(notes_dir) / f"{name}.md"
    if not path.is_file():
        return []
    notes = []
    for note in file_notes(path):
        match = INCLUDE.fullmatch(note)
        notes += file_notes(path.parent / match.group(1)) if match else [note]
    return [fill_readings(note, readings or {}, current_hashes or {}) for note in notes]


def quoted_readings(notes: list[str]) -> list[str]:
    """The names of the readings ``notes`` quote, sorted."""
    return sorted({match.group(1) for note in notes for match in PLACEHOLDER.finditer(note)})


def fill_readings(note: str, readings: dict, current_hashes: dict) -> str:
    """``note`` with each placeholder replaced by the reading's value, prefixed by a stale mark
    naming the readings that are missing or were made by other code."""
    stale = set()

    def value(match: re.Match) -> str:
        name, keys, spec = match.group(1), match.group(2)[1:].split("."), match.group(3)
        output = readings.get(name)
        if output is None or output.get("code_hash") != current_hashes.get(name):
            stale.add(name)
            return "?"
        found = output["values"]
        for key in keys:
            found = found[key]
        return format(found, spec or "")

    filled = PLACEHOLDER.sub(value, note)
    if not stale:
        return filled
    return f"**stale** (reading {', '.join(sorted(stale))} missing or of other code): {filled}"


def fill_cells(notes: list[str], cells) -> list[str]:
    """``notes`` with each quoted cell replaced by its value in ``cells`` (the table's cells:
    ``method`` and ``dataset`` as printed, ``ours`` and ``pub_mean``); — for a cell this run
    of the table does not have or has no value for (a partial or smoke run; that every quoted
    cell names a row and column of the full protocol's table is a test)."""
    column = {"ours": "ours", "published": "pub_mean"}

    def value(match: re.Match) -> str:
        which, row, printed, spec = match.groups()
        found = cells.loc[(cells["method"] == row) & (cells["dataset"] == printed), column[which]]
        if found.empty or found.isna().iloc[0]:
            return "—"
        return format(float(found.iloc[0]), spec or "")

    return [CELL.sub(value, note) for note in notes]


def read_readings(paths) -> dict:
    """Reading outputs by name (the file stem)."""
    return {Path(p).stem: json.loads(Path(p).read_text()) for p in paths}
