"""A fold job dies with the Snakemake process that runs it (gpcbench.watchdog): it stops its
fit within a poll interval of that process's death and writes no result. It watches only a
process it can see: one named from another host or pid namespace (the login node's, carried
to a compute node in the job's environment) is not watched, and a reused pid is not taken
for the process it once named."""

import os
import subprocess
import threading
import time
from dataclasses import replace

import pytest

from gpcbench.experiments.run_fold import OrphanedError, run_isolated
from gpcbench.watchdog import VARIABLE, ProcessId, watched_process


def _slow_fit(*args):
    time.sleep(30)
    return {}


def test_the_fit_stops_when_snakemake_is_gone(monkeypatch):
    stand_in = subprocess.Popen(["sleep", "30"])  # plays the Snakemake process
    monkeypatch.setattr("gpcbench.experiments.run_fold.fit_and_predict", _slow_fit)
    monkeypatch.setenv(VARIABLE, str(ProcessId.of(stand_in.pid)))
    threading.Timer(1.0, stand_in.kill).start()  # left a zombie: its parent is this process
    start = time.monotonic()
    with pytest.raises(OrphanedError, match=f"pid {stand_in.pid} on "):
        try:
            run_isolated(("m",), threads=1, time_limit=60)
        finally:
            stand_in.wait()
    assert time.monotonic() - start < 5


def test_without_a_watched_process_the_time_limit_decides(monkeypatch):
    monkeypatch.setattr("gpcbench.experiments.run_fold.fit_and_predict", _slow_fit)
    monkeypatch.delenv(VARIABLE, raising=False)
    start = time.monotonic()
    assert run_isolated(("m",), threads=1, time_limit=1.5)[0] == "timeout"
    assert 1.4 < time.monotonic() - start < 5


def test_a_live_snakemake_lets_the_fit_finish(monkeypatch):
    monkeypatch.setattr("gpcbench.experiments.run_fold.fit_and_predict", lambda *a: {"done": 1})
    monkeypatch.setenv(VARIABLE, str(ProcessId.of()))
    assert run_isolated(("m",), threads=1, time_limit=10) == ("ok", {"done": 1})


def _gone_pid() -> int:
    gone = subprocess.Popen(["true"])
    gone.wait()
    return gone.pid


@pytest.mark.parametrize("elsewhere", [{"host": "login-node"}, {"pid_namespace": "pid:[1]"}])
def test_a_process_of_another_host_or_pid_namespace_is_not_watched(monkeypatch, elsewhere):
    """The login node's Snakemake named on a compute node: its pid there is another process or
    none, so the fit runs on (to its time limit) instead of stopping as orphaned."""
    login = replace(ProcessId.of(), pid=_gone_pid(), **elsewhere)
    monkeypatch.setenv(VARIABLE, str(login))
    assert watched_process() is None
    monkeypatch.setattr("gpcbench.experiments.run_fold.fit_and_predict",
                        lambda *a: time.sleep(2.5) or {"done": 1})
    assert run_isolated(("m",), threads=1, time_limit=10) == ("ok", {"done": 1})


def test_a_reused_pid_is_not_the_process_it_named():
    this = ProcessId.of()
    assert this.alive() and this.visible()
    assert not replace(this, start_time=str(int(this.start_time) + 1)).alive()
    assert not replace(this, pid=_gone_pid()).alive()
    assert ProcessId.parse(str(this)) == this


def test_the_snakefile_names_the_process_reading_it():
    """Each Snakemake process names itself: the main one, and a cluster job step's, which
    replaces the login node's value it inherits."""
    snakefile = (os.path.dirname(__file__) + "/../Snakefile")
    text = open(snakefile).read()
    setting = "os.environ[WATCHED_PROCESS] = str(ProcessId.of())"
    assert setting in text and text.index(setting) < text.index("if workflow.is_main_process:")
