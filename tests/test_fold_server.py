"""Fold jobs run in children of a warm fold server (gpcbench.fold_server): the same result
record, log lines and exit status as a fold job fitting in its own process; one server per
host and code state, reused by the next job; a job that is killed takes its fold with it;
an idle server exits."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pytest

from gpcbench.data.dataset import Dataset, save_dataset
from gpcbench.fold_server import ENABLE_VARIABLE, IDLE_VARIABLE
from gpcbench.io import atomic_write_json

REPO = Path(__file__).resolve().parents[1]
HOOK = REPO / "tests" / "slurm" / "pythonpath"  # registers "slow-lda" (a 3 s fit)


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> Path:
    """A copy of the package's sources: the code state the servers of this module serve."""
    copy = tmp_path_factory.mktemp("code") / "src"
    shutil.copytree(REPO / "src", copy, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    return copy


@pytest.fixture
def job(tmp_path, sources):
    """A toy data set, its split, and the environment of fold jobs with a server of their own
    (a private socket directory), stopped afterwards."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    save_dataset(Dataset(X, y, ["a", "b"], ["continuous"] * 2, ["no", "yes"]),
                 tmp_path / "toy.npz", tmp_path / "toy.json")
    atomic_write_json(tmp_path / "splits.json",
                      {"folds": [{"train": list(range(40)), "test": list(range(40, 60))}]})
    runtime = Path(tempfile.mkdtemp(prefix="gpcb-"))  # short: pytest's tmp_path may be too
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), IDLE_VARIABLE: "120",
           "PYTHONPATH": f"{HOOK}:{sources}"}
    env.pop("GPCBENCH_SNAKEMAKE_PROCESS", None)
    yield tmp_path, env
    for pid in _servers(env):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(runtime, ignore_errors=True)


def _command(directory: Path, method: str, output: str) -> list[str]:
    return [sys.executable, "-m", "gpcbench", "run-fold", "--experiment", "e", "--entry", "toy",
            "--method", method, "--fold", "0", "--data", "toy.npz", "--splits", "splits.json",
            "--output", output, "--seed", "3", "--code-hash", "h"]


def _servers(env: dict) -> dict[int, str]:
    """Pid -> socket of the fold servers in the socket directory of ``env`` (the test's own)."""
    directory = Path(env["XDG_RUNTIME_DIR"]) / f"gpcbench-{os.getuid()}"
    pids = {}
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if f"gpcbench.fold_server {directory}/" in cmdline and state != "Z":
            pids[int(proc.name)] = cmdline.split()[-1]
    return pids


def _comparable(record: dict) -> dict:
    record = dict(record, provenance=dict(record["provenance"]))
    record.pop("timings", None)
    for key in ("started", "peak_rss_mb"):
        record["provenance"].pop(key)
    return record


def test_a_fold_in_the_server_equals_a_fold_in_its_own_process(job):
    directory, env = job
    served = subprocess.run(_command(directory, "lda", "served.json"), cwd=directory, env=env,
                            capture_output=True, text=True)
    alone = subprocess.run(_command(directory, "lda", "alone.json"), cwd=directory,
                           env={**env, ENABLE_VARIABLE: "0"}, capture_output=True, text=True)
    assert served.returncode == alone.returncode == 0, served.stderr
    records = [json.loads((directory / name).read_text()) for name in ("served.json", "alone.json")]
    assert _comparable(records[0]) == _comparable(records[1])
    lines = [[re.sub(r"fit [0-9.]+ s", "fit - s", re.sub(r"^\d{4}-\d\d-\d\d [\d:,]+ ", "", line))
              for line in run.stderr.splitlines()] for run in (served, alone)]
    assert lines[0] == lines[1] and "lda fold 0: ok " in lines[0]  # the job's own log lines
    assert len(_servers(env)) == 1


def test_the_next_job_reuses_the_server_and_an_idle_server_exits(job):
    directory, env = job
    env[IDLE_VARIABLE] = "20"  # seconds; starting the second job takes less
    subprocess.run(_command(directory, "lda", "one.json"), cwd=directory, env=env, check=True,
                   capture_output=True)
    first = _servers(env)
    subprocess.run(_command(directory, "1nn", "two.json"), cwd=directory, env=env, check=True,
                   capture_output=True)
    assert _servers(env) == first and len(first) == 1
    deadline = time.monotonic() + 60
    while _servers(env) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _servers(env) == {}
    assert not list((Path(env["XDG_RUNTIME_DIR"]) / f"gpcbench-{os.getuid()}").glob("*.sock"))


def test_another_code_state_gets_a_server_of_its_own(job, tmp_path):
    directory, env = job
    other = {**env, "PYTHONPATH": f"{tmp_path}:{env['PYTHONPATH']}"}  # as a copy of the tree
    for environment in (env, other):
        subprocess.run(_command(directory, "lda", "x.json"), cwd=directory, env=environment,
                       check=True, capture_output=True)
    assert len(set(_servers(env).values())) == 2  # two sockets, a server each


def test_a_killed_job_takes_its_fold_with_it(job):
    directory, env = job
    run = subprocess.Popen(_command(directory, "slow-lda", "slow.json"), cwd=directory, env=env,
                           stderr=subprocess.PIPE, text=True)
    while "start: experiment e" not in run.stderr.readline():  # the fold is fitting
        pass
    run.send_signal(signal.SIGKILL)
    run.wait()
    time.sleep(4.5)  # past slow-lda's 3 s fit: a fold that ran on would have written its result
    assert not (directory / "slow.json").exists()
    (server,) = _servers(env)
    children = Path(f"/proc/{server}/task/{server}/children").read_text().split()
    assert children == []


def test_a_socket_path_too_long_for_linux_fits_in_the_job_and_says_why(job):
    directory, env = job
    runtime = directory / ("r" * 100)  # the socket path would pass unix(7)'s 108 bytes
    runtime.mkdir()
    start = time.monotonic()
    run = subprocess.run(_command(directory, "lda", "long.json"), cwd=directory,
                         env={**env, "XDG_RUNTIME_DIR": str(runtime)}, capture_output=True, text=True)
    assert run.returncode == 0 and (directory / "long.json").exists()
    assert "no fold server: its socket path" in run.stderr and "XDG_RUNTIME_DIR" in run.stderr
    assert time.monotonic() - start < 30  # at once, not after START_TIMEOUT_S of retries
