"""The preprocess step: raw set tables (or a generator) -> one processed data set + provenance.

:func:`preprocess` reads ``raw_dir/<raw set>/manifest.json``, checks the files' SHA-256 against
it, parses them with the reader the manifest names, and runs the data set's *builder*: a short
function that selects rows and columns, recodes labels and records every transformation. The
result is written with :func:`gpcbench.data.dataset.save_dataset`.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

from gpcbench.data import builders_binary as binary
from gpcbench.data import builders_uci as uci
from gpcbench.data.builders_common import Builder
from gpcbench.data.dataset import Dataset, save_dataset
from gpcbench.data.generators import GENERATORS
from gpcbench.data.readers import read_raw_tables
from gpcbench.data.readers_common import MalformedFileError, RawTables
from gpcbench.data.registry import DatasetSpec, dataset_spec
from gpcbench.data.sources import MANIFEST, DataSourceError
from gpcbench.io import sha256_file


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




BUILDERS: dict[str, Builder] = {
    # small UCI-derived sets (K&G, W&B, CKP)
    "thyroid": uci.build_thyroid,
    "thyroid3": uci.build_thyroid3,
    "heart": uci.build_heart,
    "ionosphere": uci.build_ionosphere,
    "crabs": uci.build_crabs,
    "crabs_colour": uci.build_crabs_colour,
    "crabs_nocolour": uci.build_crabs_nocolour,
    "pima_tr": uci.build_pima_tr,
    "pima": uci.build_pima,
    "boston": uci.build_boston,
    "boston3": uci.build_boston3,
    "autompg": uci.build_autompg,
    "glass": uci.build_glass,
    "iris": uci.build_iris,
    # ZDJ's binary benchmarks
    "sslbook": binary.build_sslbook,
    "coil2": binary.build_coil2,
    "newsgroups": binary.build_newsgroups,
    "usps01": partial(binary.build_digit_pair, pair=(0, 1)),
    "usps09": partial(binary.build_digit_pair, pair=(0, 9)),
    "letters_ab": partial(binary.build_letter_pair, pair=("A", "B")),
    "letters_ac": partial(binary.build_letter_pair, pair=("A", "C")),
    "splice": binary.build_splice,
    "astroparticle": binary.build_astroparticle,
    "adult": binary.build_adult,
    "mushrooms": binary.build_mushrooms,
    "ringnorm": binary.build_ringnorm,
    "twonorm": binary.build_twonorm,
}
