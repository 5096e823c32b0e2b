"""Cluster execution through workflow/profiles/slurm on a real two-node SLURM
(tests/slurm/cluster.sh: Debian's slurm-wlm + munge on 127.0.0.1; the default partition's node
runs in pid and UTS namespaces of its own, so its jobs cannot see the login node's processes).

The smoke config's 12 cheap fold jobs (``SMOKE_SUBSET``), and the iris fold of a method whose
fit outlasts the fold watchdog's first poll, run through SLURM -- interrupted by a cancelled job,
then rerun -- on the other "node": every fold is ok, and the fold results and the tables
equal a local run's (all fields but timings, host, start time and memory); the rerun redoes
only the unfinished jobs. A job that dies makes the run exit nonzero, is resubmitted with more
time and memory, and is recorded. No job and no daemon is left afterwards.

Needs root and SLURM: installed from Debian by tests/slurm/cluster.sh only when the user
opts in with GPCBENCH_INSTALL_SLURM=1 (CI does); skipped, saying how to run it, elsewhere.
The SLURM executor plugin is an extra (`pip install -e ".[slurm]"`) that the project's venv
does not hold, because it runs SLURM commands at every Snakemake start: this module installs
it into a temporary directory on the runs' PYTHONPATH. Copies of the repository run in
temporary directories and share the repository's data/archives cache.
"""

from __future__ import annotations

import fcntl
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

import pandas as pd
import pytest
import yaml
from workflow_helpers import (
    SMOKE_SUBSET_TARGETS,
    SNAKEMAKE,
    copy_tracked_tree,
    planned_jobs,
    share_archive_cache,
)

pytestmark = pytest.mark.slow  # a real single-node SLURM cluster running Snakemake jobs

REPO = Path(__file__).resolve().parents[1]
CLUSTER_SH = REPO / "tests" / "slurm" / "cluster.sh"
LOCK = Path("/tmp/gpcbench-slurm-test.lock")  # one test cluster per machine at a time
HOOK = REPO / "tests" / "slurm" / "pythonpath"  # registers the methods "crash" and "slow-lda"
REMOTE = "remote"  # the host name jobs of the default partition see (cluster.sh)
# smoke.yaml with the method "slow-lda" added to cho2015_iris (written by the snapshot fixture)
CONFIG = "config/cluster.yaml"
SLURM = ["--profile", "workflow/profiles/slurm", "--configfile", CONFIG]
SLOW_EXPERIMENT = "cho2015_iris"
TABLES = [f"reports/tables/{name}.{ext}" for name in ("cho2015_iris", "kim2006_table7",
                                                      "cho2015_iris_summary",
                                                      "kim2006_multiclass_summary")
          for ext in ("md", "csv")]
TARGETS = [*SMOKE_SUBSET_TARGETS, *TABLES]
# The test cluster is idle: poll it every few seconds, not at the profile's shared-cluster pace.
FAST_POLL = ["--slurm-init-seconds-before-status-checks", "3"]
RUN_TIMEOUT = 900  # seconds for one Snakemake run
SMOKE_JOBS = ["--slurm-jobname-prefix", "smoke"]  # SLURM job names smoke_<run id>
RESULTS = ".test/smoke/results"  # config/smoke.yaml's workdir
PLUGINS = ("snakemake-executor-plugin-slurm", "snakemake-executor-plugin-slurm-jobstep",
           "throttler")


def _why_slurm_cannot_run() -> str | None:
    if os.geteuid() != 0:
        return "needs root to run SLURM's daemons"
    installed = all(shutil.which(tool) for tool in ("munged", "slurmctld", "slurmd", "sbatch"))
    if installed:
        return None
    if os.environ.get("GPCBENCH_INSTALL_SLURM") != "1":
        return ("SLURM is not installed: run with GPCBENCH_INSTALL_SLURM=1 to let "
                "tests/slurm/cluster.sh apt-get install Debian's slurm-wlm and munge (as CI does)")
    if not shutil.which("apt-get"):
        return "SLURM is not installed and there is no apt-get to install it"
    return None


@pytest.fixture(scope="module")
def plugin(tmp_path_factory) -> Path:
    """The SLURM executor plugin at its pinned version, in a directory of its own."""
    target = tmp_path_factory.mktemp("slurm-plugin")
    _sh(sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--no-deps", "--target", target, "-c", REPO / "config" / "constraints.txt", *PLUGINS)
    return target


def _sh(*args) -> str:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if done.returncode:
        pytest.fail(f"{' '.join(map(str, args))} exited {done.returncode}: "
                    f"{(done.stderr or done.stdout).strip()}", pytrace=False)
    return done.stdout


def _queue(run: str) -> list[str]:
    """'jobid state comment' of the queued or running SLURM jobs of one run (job-name prefix)."""
    lines = _sh("squeue", "-h", "-o", "%i %T %k %j").splitlines()
    return [line.rsplit(" ", 1)[0] for line in lines if line.rsplit(" ", 1)[-1].startswith(run)]


@pytest.fixture(scope="module")
def cluster():
    """A running single-node cluster; stopped (no job, no daemon) even when a test fails."""
    if reason := _why_slurm_cannot_run():
        pytest.skip(reason)
    with open(LOCK, "w") as lock:
        deadline = time.monotonic() + 1200
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    pytest.fail(f"another test cluster held {LOCK} for 20 minutes", pytrace=False)
                time.sleep(1)
        _sh(CLUSTER_SH, "install")
        state = Path(tempfile.mkdtemp(prefix="gpcbench-slurm-", dir="/tmp"))
        state.chmod(0o755)  # munged runs as the munge user
        try:
            _sh(CLUSTER_SH, "start", state)
            yield state
        finally:
            daemons = {p.stem: int(p.read_text()) for p in state.rglob("*.pid")}
            stopped = subprocess.run([CLUSTER_SH, "stop", state], capture_output=True, text=True)
            alive = [name for name, pid in daemons.items() if _alive(pid)]
            shutil.rmtree(state, ignore_errors=True)
            assert stopped.returncode == 0 and not alive, \
                f"teardown left {alive or 'jobs'} running: {stopped.stderr.strip()}"


def _alive(pid: int) -> bool:
    """The process exists and is not a zombie (PID 1 need not reap orphaned daemons)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory) -> Path:
    """The tracked and untracked-not-ignored files, copied once, so that every run of this
    module (local and SLURM) sees the same sources even while the repository is being edited;
    with CONFIG beside smoke.yaml."""
    snap = copy_tracked_tree(tmp_path_factory.mktemp("snapshot"))
    config = yaml.safe_load((snap / "config" / "smoke.yaml").read_text())
    config["experiments"][SLOW_EXPERIMENT]["methods"].append("slow-lda")
    (snap / CONFIG).write_text(yaml.safe_dump(config, sort_keys=False))
    return snap


def _copy(snap: Path, dest: Path, plugin: Path) -> dict:
    """A working copy of the snapshot sharing the repository's archive cache (no network);
    returns the environment that makes it import its own sources, the SLURM plugin and the
    test methods (HOOK)."""
    shutil.copytree(snap, dest, dirs_exist_ok=True, symlinks=True)
    share_archive_cache(dest)
    return {**os.environ, "PYTHONPATH": f"{HOOK}:{dest / 'src'}:{plugin}"}


def _snakemake(work: Path, env: dict, *args, log: str, wait=True):
    """Run Snakemake in ``work`` (output to ``work/log``), in a process group of its own, under
    a time limit that interrupts it like Ctrl-C, so that it cancels its own SLURM jobs first."""
    command = ["timeout", "--foreground", "-s", "INT", "-k", "60", str(RUN_TIMEOUT),
               *SNAKEMAKE, *args]
    with open(work / log, "w") as out:
        proc = subprocess.Popen(command, cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    if wait:
        proc.wait()
    return proc


def _stop(proc: subprocess.Popen) -> None:
    """Interrupt a run still going (Snakemake cancels its SLURM jobs); kill it after 2 min."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _results(work: Path) -> dict[str, int]:
    """Fold result path -> modification time (ns)."""
    return {str(p.relative_to(work)): p.stat().st_mtime_ns
            for p in (work / RESULTS).glob("*/*/*/fold*.json")}


@pytest.fixture(scope="module")
def local_run(snapshot, plugin, tmp_path_factory):
    """The same targets run locally, in the background while the SLURM runs go on."""
    work = tmp_path_factory.mktemp("local")
    env = _copy(snapshot, work, plugin)
    proc = _snakemake(work, env, *TARGETS, "--configfile", CONFIG, "--cores", "2",
                      log="local.log", wait=False)
    yield work, proc
    _stop(proc)


def test_fold_requests_grow_on_retry(snapshot, plugin, tmp_path):
    """What a fold job asks the scheduler for: 5 min and 1000 MB for the smoke sets; the
    fold's whole time limit (600 s + 5 min) and twice the memory on a second attempt."""
    env = _copy(snapshot, tmp_path, plugin)
    for attempt, runtime, mem in ((1, 5, 1000), (2, 15, 2000)):
        out = subprocess.run([*SNAKEMAKE, "-n", *SLURM, "--attempt", str(attempt)],
                             cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
        requests = set(re.findall(r"output: results/\S+/fold\d+\.json\n(?:\s+\w+: .*\n)*?"
                                  r"\s+resources: .*?mem_mb=(\d+),.*?runtime=(\d+)", out.stdout))
        assert requests == {(str(mem), str(runtime))}


@pytest.fixture(scope="module")
def crash_run(cluster, snapshot, plugin, tmp_path_factory):
    """A run whose only fold job dies, started in the background (it overlaps the smoke run,
    as jobs of two users share a cluster); its SLURM jobs are named crash_*."""
    work = tmp_path_factory.mktemp("crash")
    env = _copy(snapshot, work, plugin)
    config = yaml.safe_load((work / "config" / "smoke.yaml").read_text())
    config["experiments"] = {"cho2015_iris": {**config["experiments"]["cho2015_iris"],
                                              "methods": ["crash"]}}
    config["tables"] = {}
    (work / "config" / "crash.yaml").write_text(yaml.safe_dump(config))

    proc = _snakemake(work, env, "--profile", "workflow/profiles/slurm", "--configfile",
                      "config/crash.yaml", *FAST_POLL, "--slurm-jobname-prefix", "crash",
                      "--set-resources", "run_fold:slurm_partition=urgent",
                      log="crash.log", wait=False)
    yield work, proc
    _stop(proc)


def test_failing_job_fails_the_run_after_retries_with_more_time_and_memory(crash_run,
                                                                            slurm_run):
    work, run = crash_run
    run.wait()
    log = (work / "crash.log").read_text()
    assert run.returncode == 1, log[-3000:]
    assert "Error in rule run_fold" in log and "results/cho2015_iris/iris/crash/fold0.json" in log
    assert not (work / RESULTS / "cho2015_iris" / "iris" / "crash").exists()
    jobs = re.findall(r"submitted with SLURM jobid (\d+) \(log: (\S+)\)", log)
    fold_jobs = [(job, Path(path)) for job, path in jobs if "folds" in path]
    assert len(fold_jobs) == 3, jobs  # the first attempt and the profile's 2 retries
    assert all("Error in rule run_fold" in path.read_text() for _, path in fold_jobs)
    shown = [_sh("scontrol", "-o", "show", "job", job) for job, _ in fold_jobs]
    assert [re.search(r"JobState=(\w+)", s).group(1) for s in shown] == ["FAILED"] * 3
    assert [re.search(r"TimeLimit=(\S+)", s).group(1) for s in shown] == \
        ["00:05:00", "00:15:00", "00:15:00"]
    assert [re.search(r"MinMemoryNode=(\S+)", s).group(1) for s in shown] == \
        ["1000M", "2000M", "4000M"]
    assert _queue("crash") == []


@pytest.fixture(scope="module")
def slurm_run(cluster, snapshot, plugin, local_run, crash_run, tmp_path_factory):
    """The targets through the slurm profile: one fold job is cancelled while it runs
    (the run has no retries left for it), then the run is repeated to completion."""
    work = tmp_path_factory.mktemp("slurm")
    env = _copy(snapshot, work, plugin)
    # Targets before SLURM's --configfile, which takes every value that follows it.
    first = _snakemake(work, env, *TARGETS, *SLURM, *FAST_POLL, *SMOKE_JOBS, "--retries", "0",
                       log="first.log", wait=False)
    try:
        victim, deadline = None, time.monotonic() + RUN_TIMEOUT
        while victim is None:
            assert first.poll() is None, "the run ended before a fold job could be cancelled"
            assert time.monotonic() < deadline, "no fold job ran"
            if _results(work):  # some fold job has finished; cancel one that is running
                running = [line.split()[0] for line in _queue("smoke")
                           if " RUNNING " in line and "folds" in line]
                victim = running[0] if running else None
            time.sleep(0.5)
        _sh("scancel", victim)
        first.wait()
    finally:
        _stop(first)
    queue_after_first = _queue("smoke")
    finished = _results(work)
    planned = planned_jobs(work, env, *TARGETS, *SLURM)
    second = _snakemake(work, env, *TARGETS, *SLURM, *FAST_POLL, *SMOKE_JOBS, log="second.log")
    return {"work": work, "victim": victim, "first": first.returncode,
            "queue_after_first": queue_after_first, "finished": finished, "planned": planned,
            "second": second.returncode, "queue_after_second": _queue("smoke")}


def test_cancelled_job_fails_the_run_and_leaves_no_job(slurm_run):
    log = (slurm_run["work"] / "first.log").read_text()
    assert slurm_run["first"] == 1, log[-3000:]
    assert re.search(rf"JOB {slurm_run['victim']} ON \S+ CANCELLED", log)
    assert "Error in group folds" in log
    assert slurm_run["queue_after_first"] == []


def test_rerun_redoes_only_unfinished_jobs(slurm_run):
    work = slurm_run["work"]
    assert slurm_run["second"] == 0, (work / "second.log").read_text()[-3000:]
    done_before, done_after = slurm_run["finished"], _results(work)
    missing = sorted(set(done_after) - set(done_before))
    assert done_before and missing
    workdir = Path(RESULTS).parent  # Snakemake plans paths relative to the config's workdir
    assert sorted(slurm_run["planned"].get("run_fold", [])) == [
        str(Path(path).relative_to(workdir)) for path in missing]
    assert {path: done_after[path] for path in done_before} == done_before  # untouched
    assert slurm_run["queue_after_second"] == []


def _comparable(record: dict) -> dict:
    """A fold record without what legitimately differs between runs."""
    record = dict(record, provenance=dict(record["provenance"]))
    record.pop("timings", None)
    for key in ("host", "started", "peak_rss_mb"):
        record["provenance"].pop(key)
    return record


def test_every_fold_ran_ok_on_the_node_that_cannot_see_the_login_node(slurm_run):
    """The fold watchdog watches the job step's Snakemake there, not the login node's pid that
    sbatch carries over in the environment: the slow folds outlast its first poll."""
    records = [json.loads((slurm_run["work"] / path).read_text())
               for path in _results(slurm_run["work"])]
    assert {(r["status"], r["provenance"]["host"]) for r in records} == {("ok", REMOTE)}
    assert [r["status"] for r in records if r["method"] == "slow-lda"] == ["ok"]


def _without_timings(path: Path) -> str:
    """A table file without timings: a summary's fit_s_* columns dropped from its .csv, and its
    .md (the same cells as the .csv, timings among them) left to the .csv's comparison."""
    if path.suffix == ".csv":
        frame = pd.read_csv(path)
        return frame.drop(columns=[c for c in frame if c.startswith("fit_s")]).to_csv()
    return path.read_text() if "summary" not in path.name else ""


def test_slurm_results_match_a_local_run(slurm_run, local_run):
    local, proc = local_run
    assert proc.wait() == 0, (local / "local.log").read_text()[-3000:]
    slurm = slurm_run["work"]
    assert sorted(_results(slurm)) == sorted(_results(local))
    for path in _results(local):
        ours = _comparable(json.loads((slurm / path).read_text()))
        assert ours == _comparable(json.loads((local / path).read_text())), path
    workdir = Path(RESULTS).parent
    for table in TABLES:
        assert _without_timings(slurm / workdir / table) == _without_timings(
            local / workdir / table), table
