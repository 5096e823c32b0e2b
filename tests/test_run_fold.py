"""One fold job: a record for every outcome (ok, failed, diverged, timeout), never a crash."""

import json
import time

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics import confusion_matrix

from gpcbench.data.dataset import Dataset, save_dataset
from gpcbench.experiments import registry
from gpcbench.experiments.registry import MethodSpec
from gpcbench.experiments.run_fold import DivergenceError, run_fold
from gpcbench.io import atomic_write_json


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
        self.classes_ = np.unique(y)
        self.hyperparameters_ = {"threshold": 0.0}
        self.converged_ = False
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
        return np.column_stack([1 - p, p])


@pytest.fixture
def fold_inputs(tmp_path, monkeypatch):
    for behaviour in ("ok", "raise", "diverge", "hang", "crash", "sampler", "wait", "work"):
        monkeypatch.setitem(registry.METHODS, f"scripted-{behaviour}", MethodSpec(
            name=f"scripted-{behaviour}", label=behaviour,
            factory=lambda ctx, b=behaviour: Scripted(b), modules=()))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    y[:3] = 1 - y[:3]  # three label errors
    save_dataset(Dataset(X, y, ["x1", "x2"], ["continuous"] * 2, ["neg", "pos"]),
                 tmp_path / "toy.npz", tmp_path / "toy.json")
    atomic_write_json(tmp_path / "splits.json", {"folds": [
        {"train": list(range(20, 40)), "test": list(range(20))}]})
    return tmp_path


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
