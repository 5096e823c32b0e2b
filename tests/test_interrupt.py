"""kill -9 of Snakemake in the middle of a run of the smoke config's fold jobs, then the same
command again: it resumes (no --unlock, no --rerun-incomplete by hand), exits 0, leaves no fold
job behind, and every fold result equals an uninterrupted run's but for timings, host and start
time. The run targets the smoke config's 12 cheap fold jobs (``SMOKE_SUBSET``; fetch,
preprocess, split and collect included): the mechanism is the same for the whole config's 42,
and the test takes about half as long (55 s alone).

Two copies of the repository run side by side in temporary directories (sharing the
repository's archive cache); neither touches the repository's reports/.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from workflow_helpers import (
    SMOKE_SUBSET,
    SMOKE_SUBSET_TARGETS,
    SNAKEMAKE,
    copy_tracked_tree,
    share_archive_cache,
)

pytestmark = pytest.mark.slow  # two small pipelines, one killed and resumed

RESULTS = ".test/smoke/results"
COMMAND = [*SNAKEMAKE, "--configfile", "config/smoke.yaml", "--cores", "1",
           *SMOKE_SUBSET_TARGETS]
VARYING = {"timings": None, "provenance": {"host", "started", "peak_rss_mb"}}  # differ between any two runs


def _copy(dest: Path) -> dict:
    """A copy of the repository (but reports/ and data/) sharing its archive cache; the
    environment that makes Snakemake import the copy's own sources."""
    copy_tracked_tree(dest, exclude=("reports/", "data/"))
    share_archive_cache(dest)
    return {**os.environ, "PYTHONPATH": str(dest / "src")}


def _start(work: Path, env: dict, log: str) -> subprocess.Popen:
    with open(work / log, "w") as out:
        return subprocess.Popen(COMMAND, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def _fold_jobs(work: Path) -> list[int]:
    """Pids of the fold jobs (and their fit processes) of the copy in ``work``."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
            cwd = os.readlink(proc / "cwd")
        except (OSError, IndexError):
            continue
        if "run-fold" in cmdline and cwd.startswith(str(work)) and state != "Z":
            pids.append(int(proc.name))
    return pids


def _results(work: Path) -> dict[str, dict]:
    records = {}
    for path in sorted((work / RESULTS).glob("*/*/*/fold*.json")):
        record = json.loads(path.read_text())  # every result is whole, valid JSON
        for key, fields in VARYING.items():
            if fields is None:
                record.pop(key, None)
            else:
                for field in fields:
                    record.get(key, {}).pop(field, None)
        records[str(path.relative_to(work))] = record
    return records


def _wait_for(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what}", pytrace=False)
        time.sleep(0.2)


def test_kill_9_then_the_same_command_resumes(tmp_path):
    killed, reference = tmp_path / "killed", tmp_path / "reference"
    killed.mkdir()
    reference.mkdir()
    env_killed, env_reference = _copy(killed), _copy(reference)
    uninterrupted = _start(reference, env_reference, "run.log")
    try:
        first = _start(killed, env_killed, "first.log")
        _wait_for(lambda: len(list((killed / RESULTS).glob("*/*/*/fold*.json"))) >= 6
                  and _fold_jobs(killed), 600, "some fold results and a running fold job")
        first.send_signal(signal.SIGKILL)  # Snakemake alone, not its process group
        first.wait()
        _wait_for(lambda: not _fold_jobs(killed), 15, "the orphaned fold jobs to end")
        assert (killed / ".test/smoke/.snakemake/locks").exists()  # left by the killed run

        second = _start(killed, env_killed, "second.log")
        assert second.wait(900) == 0, (killed / "second.log").read_text()[-3000:]
        assert uninterrupted.wait(900) == 0, (reference / "run.log").read_text()[-3000:]
    finally:
        for proc in (uninterrupted,):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    assert "workflow specific profile" in (killed / "second.log").read_text()
    resumed, expected = _results(killed), _results(reference)
    assert len(expected) == sum(SMOKE_SUBSET.values())
    assert resumed == expected
    assert not (killed / "reports").exists() and not (reference / "reports").exists()
