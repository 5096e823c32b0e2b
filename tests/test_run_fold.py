"""One fold job: a record for every outcome (ok, failed, diverged, timeout), never a crash."""

import json
import logging
import subprocess
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import confusion_matrix

from gpcbench.cli import main
from gpcbench.data.dataset import Dataset, save_dataset
from gpcbench.experiments import registry
from gpcbench.experiments.aggregate import collect_folds, summarise
from gpcbench.experiments.registry import MethodSpec
from gpcbench.experiments.run_fold import MAX_WARNINGS, DivergenceError, run_fold
from gpcbench.io import atomic_write_json
from gpcbench.watchdog import VARIABLE as WATCHED
from gpcbench.watchdog import ProcessId


class Scripted(ClassifierMixin, BaseEstimator):
    """A classifier whose fit does what the test asks: work, raise, diverge or hang."""

    def __init__(self, behaviour="ok"):
        self.behaviour = behaviour

    def fit(self, X, y):
        if self.behaviour == "raise":
            raise RuntimeError("boom")
        if self.behaviour == "diverge":
            raise DivergenceError("log Z is NaN at sweep 3")
        if self.behaviour == "hang":
            time.sleep(60)
        if self.behaviour == "wait":  # 1 s of wall time, no CPU
            time.sleep(1.0)
        if self.behaviour == "work":  # 0.3 s of CPU time
            end = time.process_time() + 0.3
            while time.process_time() < end:
                pass
        if self.behaviour == "crash":
            import os
            os._exit(3)
        if self.behaviour == "warn":  # an optimiser's failure, twice, and other warnings
            for _ in range(2):
                warnings.warn("lbfgs failed to converge (status=2):\nABNORMAL: ",
                              ConvergenceWarning)
            for k in range(MAX_WARNINGS + 2):
                warnings.warn(f"step {k}" + "!" * 400, RuntimeWarning)
        if self.behaviour == "progress":
            logging.getLogger("gpcbench.progress").info("sweep 1 of 2")
        self.classes_ = np.unique(y)
        self.hyperparameters_ = {"threshold": 0.0}
        self.converged_ = self.behaviour == "warn"  # "warn" claims it and warns
        self.convergence_trace_ = [{"iteration": 1, "objective": -1.0}]
        if self.behaviour == "sampler":  # the types the MCMC estimators give them
            self.acceptance_rates_ = np.array([0.8, np.nan])
            self.diagnostics_ = {"step_sizes": (np.float64(0.05), 0.07), "n_kept": np.int64(40),
                                 "theta0": {"rhat": np.float64(np.nan), "ess": np.inf},
                                 "draws": np.arange(3.0), 2: True}
        return self

    def predict(self, X):
        return (X[:, 0] > 0).astype(int)

    def predict_proba(self, X):
        p = 1 / (1 + np.exp(-4 * X[:, 0]))
        if self.behaviour == "certain":  # probability 0 for the label errors' true class
            p = self.predict(X).astype(float)
        return np.column_stack([1 - p, p])


@pytest.fixture
def fold_inputs(tmp_path, monkeypatch):
    for behaviour in ("ok", "raise", "diverge", "hang", "crash", "sampler", "wait", "work",
                      "warn", "certain", "progress"):
        monkeypatch.setitem(registry.METHODS, f"scripted-{behaviour}", MethodSpec(
            name=f"scripted-{behaviour}", label=behaviour,
            factory=lambda ctx, b=behaviour: Scripted(b)))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    y[:3] = 1 - y[:3]  # three label errors
    _save_toy(tmp_path, X, y, train=range(20, 40), test=range(20))
    return tmp_path


def _save_toy(directory, X, y, train, test):
    """toy.npz / toy.json (two continuous inputs, two classes) and splits.json (one fold)."""
    save_dataset(Dataset(X, y, ["x1", "x2"], ["continuous"] * 2, ["neg", "pos"]),
                 directory / "toy.npz", directory / "toy.json")
    atomic_write_json(directory / "splits.json", {"folds": [
        {"train": list(train), "test": list(test)}]})


def _run(tmp_path, method, **kw):
    out = tmp_path / f"{method}.json"
    record = run_fold(experiment="e", dataset_id="toy", method=method, fold=0,
                      data_path=tmp_path / "toy.npz", splits_path=tmp_path / "splits.json",
                      output=out, options={}, seed=1, standardize_inputs=False, **kw)
    assert json.loads(out.read_text()) == json.loads(json.dumps(record))
    return record


def test_ok_fold_records_metrics_against_an_independent_count(fold_inputs):
    record = _run(fold_inputs, "scripted-ok")
    assert record["status"] == "ok"
    X = np.load(fold_inputs / "toy.npz")["X"][:20]
    y = np.load(fold_inputs / "toy.npz")["y"][:20]
    assert record["metrics"]["error"] == np.mean((X[:, 0] > 0).astype(int) != y)
    p_true = np.where(y == 1, 1 / (1 + np.exp(-4 * X[:, 0])), 1 - 1 / (1 + np.exp(-4 * X[:, 0])))
    assert record["metrics"]["nlpd"] == pytest.approx(-np.mean(np.log(p_true)))
    assert record["metrics"]["confusion"] == confusion_matrix(
        y, (X[:, 0] > 0).astype(int), labels=[0, 1]).tolist()
    assert record["convergence"]["converged"] is False
    assert record["hyperparameters"] == {"threshold": 0.0}
    for key in ("data_sha256", "splits_sha256", "packages", "git_commit"):
        assert record["provenance"][key]
    assert record["convergence"]["acceptance_rates"] is None
    assert record["convergence"]["diagnostics"] is None


def test_timings_record_wall_and_cpu_seconds(fold_inputs):
    worked = _run(fold_inputs, "scripted-work")["timings"]
    waited = _run(fold_inputs, "scripted-wait")["timings"]
    assert worked["cpu_s"] >= 0.3
    # a forked child's process CPU time includes ~0.1-0.2 s of BLAS thread start-up
    assert waited["fit_s"] >= 1.0 and waited["cpu_s"] < 0.5


def test_sampler_acceptance_rates_and_diagnostics_round_trip_as_json(fold_inputs):
    record = _run(fold_inputs, "scripted-sampler")  # _run compares the file with the record
    written = json.loads((fold_inputs / "scripted-sampler.json").read_text())
    assert written["convergence"]["acceptance_rates"] == [0.8, None]
    assert written["convergence"]["diagnostics"] == {
        "step_sizes": [0.05, 0.07], "n_kept": 40, "theta0": {"rhat": None, "ess": None},
        "draws": [0.0, 1.0, 2.0], "2": True}
    assert record["convergence"] == written["convergence"]


@pytest.mark.parametrize("options, chains", [({}, 2), ({"n_chains": 3}, 3)])
def test_a_sampler_records_the_chains_it_ran(fold_inputs, monkeypatch, options, chains):
    """FBGKM runs two chains by default and as many as its options say: the record keeps the
    fitted estimator's count (the report's sweeps per second multiply n_iter by it)."""
    from gpcbench.estimators.gkm import FBGKMClassifier

    monkeypatch.setitem(registry.METHODS, "small-fbgkm", MethodSpec(
        name="small-fbgkm", label="FBGKM", factory=lambda ctx: FBGKMClassifier(
            n_sweeps=20, burn_in=10, thin=2, k_max=5, random_state=0, **ctx.options)))
    record = run_fold(experiment="e", dataset_id="toy", method="small-fbgkm", fold=0,
                      data_path=fold_inputs / "toy.npz", splits_path=fold_inputs / "splits.json",
                      output=fold_inputs / "f.json", options=options, seed=1,
                      standardize_inputs=False)
    assert record["status"] == "ok", record["message"]
    assert record["convergence"]["n_chains"] == chains
    assert _run(fold_inputs, "scripted-ok")["convergence"]["n_chains"] is None


@pytest.mark.parametrize("method, status, text", [
    ("scripted-raise", "failed", "RuntimeError: boom"),
    ("scripted-diverge", "diverged", "log Z is NaN"),
    ("scripted-crash", "failed", "exit code 3"),
])
def test_failures_become_records(fold_inputs, method, status, text):
    record = _run(fold_inputs, method)
    assert record["status"] == status
    assert text in record["message"]
    assert "metrics" not in record


def test_timeout_becomes_a_record_quickly(fold_inputs):
    start = time.perf_counter()
    record = _run(fold_inputs, "scripted-hang", time_limit=1.0)
    assert record["status"] == "timeout"
    assert time.perf_counter() - start < 20


def test_a_convergence_warning_is_recorded_beside_the_estimators_own_flag(fold_inputs):
    """The estimator says converged_ = True and warned (as scikit-learn's GPC does for a
    length scale at its bound): the record keeps its flag and each distinct warning once, on
    one line, at most MAX_WARNINGS of each kind."""
    convergence = _run(fold_inputs, "scripted-warn")["convergence"]
    assert convergence["converged"] is True
    assert convergence["warnings"] == [
        "ConvergenceWarning: lbfgs failed to converge (status=2): ABNORMAL:"]
    other = convergence["other_warnings"]
    assert other[0].startswith("RuntimeWarning: step 0!!") and len(other[0]) == 300
    assert len(other) == MAX_WARNINGS + 1 and other[-1] == "... and 2 more warnings"
    assert _run(fold_inputs, "scripted-ok")["convergence"]["warnings"] == []


def test_sklearn_gpc_abnormal_line_search_is_recorded_not_converged(tmp_path):
    """scikit-learn's GPC whose L-BFGS ends ABNORMAL (as on crabs fold 0) is no longer a
    converged fold."""
    X = np.random.default_rng(7).normal(size=(40, 2))
    _save_toy(tmp_path, X, (X[:, 0] > 0).astype(int), train=range(40), test=range(40))
    convergence = _run(tmp_path, "sklearn-gpc")["convergence"]
    assert convergence["converged"] is False
    assert any("(status=2): ABNORMAL" in line for line in convergence["warnings"])


def test_an_infinite_nlpd_is_flagged_and_counted_in_the_summary(fold_inputs):
    record = _run(fold_inputs, "scripted-certain")
    assert record["status"] == "ok" and record["metrics"]["nlpd"] == np.inf
    assert record["metrics"]["nonfinite_nlpd"] is True
    assert "NLPD is infinite" in record["message"]
    _run(fold_inputs, "scripted-warn")
    collect_folds([fold_inputs / f"scripted-{b}.json" for b in ("certain", "warn")],
                  fold_inputs / "folds.csv")
    summary = summarise(pd.read_csv(fold_inputs / "folds.csv")).set_index("method")
    assert summary.loc["scripted-certain", ["n_nonfinite_nlpd", "n_optimiser_warnings",
                                            "nlpd_mean"]].tolist() == [1, 0, np.inf]
    assert summary.loc["scripted-warn", ["n_nonfinite_nlpd", "n_optimiser_warnings",
                                         "converged_fraction"]].tolist() == [0, 1, 1.0]


def _cli_run_fold(directory, method):
    return main(["run-fold", "--in-process", "--experiment", "e", "--entry", "toy",
                 "--method", method, "--data", str(directory / "toy.npz"), "--splits", str(directory / "splits.json"),
                 "--output", str(directory / "out.json"), "--fold", "0", "--seed", "1"])


def test_run_fold_logs_start_progress_and_end_to_stderr(fold_inputs, capfd, monkeypatch):
    """The forked fit's progress lines reach stderr (the fold's log) between the job's own."""
    monkeypatch.delenv(WATCHED, raising=False)
    assert _cli_run_fold(fold_inputs, "scripted-progress") == 0
    lines = capfd.readouterr().err.splitlines()
    wanted = ["gpcbench.experiments.run_fold start: experiment e, entry toy, "
              "method scripted-progress, fold 0, n_train 20",
              "gpcbench.progress sweep 1 of 2", "gpcbench.experiments.run_fold end: status ok, fit"]
    found = [next(i for i, line in enumerate(lines) if text in line) for text in wanted]
    assert found == sorted(found)


def test_cli_exits_3_writing_nothing_when_snakemake_is_gone(fold_inputs, monkeypatch, capsys):
    gone = subprocess.Popen(["sleep", "30"])  # plays the killed Snakemake process
    gone.kill()
    gone.wait()
    monkeypatch.setenv(WATCHED, str(ProcessId.of(gone.pid)))
    start = time.monotonic()
    with pytest.raises(SystemExit) as stopped:
        _cli_run_fold(fold_inputs, "scripted-hang")
    assert stopped.value.code == 3 and time.monotonic() - start < 10
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"gpcbench run-fold: error: Snakemake (pid {gone.pid} on {ProcessId.of().host}) is gone; "
        "fold job stopped")
    assert not (fold_inputs / "out.json").exists()


PEAK_OF_A_CHILD = """
import multiprocessing, numpy as np
from gpcbench.experiments.run_fold import peak_rss_mb
def use(mb): np.ones(int(mb * 2**20 / 8)).sum()
child = multiprocessing.get_context("fork").Process(target=use, args=({mb},))
child.start(); child.join()
print(peak_rss_mb())
"""


def test_peak_memory_counts_the_fit_process():
    """A fold job's recorded peak memory covers its fit child's: a fit touching 400 MB records
    at least 400 MB, and at most 400 MB (and allocator slack) more than a fit touching none."""
    import subprocess
    import sys

    peaks = [float(subprocess.run([sys.executable, "-c", PEAK_OF_A_CHILD.format(mb=mb)],
                                  capture_output=True, text=True, check=True).stdout)
             for mb in (0, 400)]
    assert 400 <= peaks[1] <= peaks[0] + 420, peaks
