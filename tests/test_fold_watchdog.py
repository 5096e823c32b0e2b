"""A fold job dies with the Snakemake process that started it (GPCBENCH_SNAKEMAKE_PID): it
stops its fit within a poll interval of that process's death and writes no result."""

import os
import subprocess
import threading
import time

import pytest

from gpcbench.experiments.run_fold import PARENT_VARIABLE, OrphanedError, run_isolated


def _slow_fit(*args):
    time.sleep(30)
    return {}


def test_the_fit_stops_when_snakemake_is_gone(monkeypatch):
    stand_in = subprocess.Popen(["sleep", "30"])  # plays the Snakemake process
    monkeypatch.setattr("gpcbench.experiments.run_fold.fit_and_predict", _slow_fit)
    monkeypatch.setenv(PARENT_VARIABLE, str(stand_in.pid))
    threading.Timer(1.0, stand_in.kill).start()  # left a zombie: its parent is this process
    start = time.monotonic()
    with pytest.raises(OrphanedError, match=f"pid {stand_in.pid}"):
        try:
            run_isolated(("m",), threads=1, time_limit=60)
        finally:
            stand_in.wait()
    assert time.monotonic() - start < 5


def test_without_a_watched_process_the_time_limit_decides(monkeypatch):
    monkeypatch.setattr("gpcbench.experiments.run_fold.fit_and_predict", _slow_fit)
    monkeypatch.delenv(PARENT_VARIABLE, raising=False)
    start = time.monotonic()
    assert run_isolated(("m",), threads=1, time_limit=1.5)[0] == "timeout"
    assert 1.4 < time.monotonic() - start < 5


def test_a_live_snakemake_lets_the_fit_finish(monkeypatch):
    monkeypatch.setattr("gpcbench.experiments.run_fold.fit_and_predict", lambda *a: {"done": 1})
    monkeypatch.setenv(PARENT_VARIABLE, str(os.getpid()))
    assert run_isolated(("m",), threads=1, time_limit=10) == ("ok", {"done": 1})
