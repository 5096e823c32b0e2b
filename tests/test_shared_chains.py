"""FBGKM and SGPC fold jobs on one set of chains: the cache changes what the protocol spends,
never a result (gpcbench.experiments.shared_chains)."""

import json

import numpy as np
import pandas as pd
import pytest

from gpcbench.data.dataset import Dataset, save_dataset
from gpcbench.experiments.aggregate import fold_row, method_seconds, summarise
from gpcbench.experiments.report.cells import metric_values
from gpcbench.experiments.run_fold import run_fold
from gpcbench.experiments.shared_chains import CACHE_VARIABLE
from gpcbench.io import atomic_write_json
from gpcbench.models import SGPCClassifier

OPTIONS = {"n_sweeps": 40, "burn_in": 20, "thin": 2, "k_max": 12, "n_chains": 1}


@pytest.fixture
def fold(tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_VARIABLE, str(tmp_path / "chains"))
    rng = np.random.default_rng(3)
    X = rng.normal(size=(70, 2))
    y = (X[:, 0] ** 2 + X[:, 1] > 0.8).astype(int)
    save_dataset(Dataset(X, y, ["x1", "x2"], ["continuous"] * 2, ["neg", "pos"]),
                 tmp_path / "toy.npz", tmp_path / "toy.json")
    atomic_write_json(tmp_path / "splits.json", {"folds": [
        {"train": list(range(50)), "test": list(range(50, 70))}]})
    return tmp_path


def _run(directory, method, seed, options=OPTIONS, output=None):
    output = output or directory / f"{method}.json"
    upstream = {"fbgkm/fold0": directory / "fbgkm.json"} if method == "sgpc" else None
    return run_fold(experiment="e", dataset_id="toy", method=method, fold=0,
                    data_path=directory / "toy.npz", splits_path=directory / "splits.json",
                    output=output, options=options, seed=seed, standardize_inputs=False,
                    upstream=upstream)


def _sgpc_probabilities(directory, seed):
    """SGPC sampling its own chains at ``seed``, directly: the independent reference."""
    data = np.load(directory / "toy.npz")
    X, y = data["X"], data["y"]
    return SGPCClassifier(random_state=seed, **OPTIONS).fit(X[:50], y[:50]).predict_proba(X[50:])


def test_sgpc_predicts_from_the_chains_of_the_fbgkm_job_of_its_fold(fold):
    fbgkm = _run(fold, "fbgkm", seed=11)
    assert fbgkm["status"] == "ok" and len(list((fold / "chains").glob("*.joblib"))) == 1
    assert "chains" not in fbgkm["convergence"]["diagnostics"]  # it sampled them
    sgpc = _run(fold, "sgpc", seed=22)
    assert sgpc["status"] == "ok"
    chains = sgpc["convergence"]["diagnostics"]["chains"]
    assert chains["sampled_by"] == "fbgkm" and chains["random_state"] == 11
    # the chains' seconds are the FBGKM job's sampling, inside that job's fit and CPU intervals
    assert 0 < chains["fit_s"] <= fbgkm["timings"]["fit_s"]
    assert 0 < chains["cpu_s"] <= fbgkm["timings"]["cpu_s"]
    assert not list((fold / "chains").glob("*.joblib"))  # the entry is taken
    reference = _sgpc_probabilities(fold, seed=11)
    assert sgpc["metrics"]["error"] == np.mean((reference[:, 1] > 0.5) != np.load(
        fold / "toy.npz")["y"][50:])
    # without the cache (entry gone), the same job samples the same chains itself
    alone = _run(fold, "sgpc", seed=22, output=fold / "alone.json")
    assert "chains" not in alone["convergence"]["diagnostics"]
    assert alone["metrics"] == sgpc["metrics"]
    assert alone["convergence"]["diagnostics"] == {
        key: value for key, value in sgpc["convergence"]["diagnostics"].items()
        if key != "chains"}


def test_sgpc_with_other_options_than_fbgkm_samples_its_own_chains(fold):
    _run(fold, "fbgkm", seed=11)
    sgpc = _run(fold, "sgpc", seed=22, options={**OPTIONS, "k_max": 10})
    assert sgpc["status"] == "ok" and "chains" not in sgpc["convergence"]["diagnostics"]
    assert len(list((fold / "chains").glob("*.joblib"))) == 1  # FBGKM's, not taken


def test_an_unreadable_entry_means_sampling_again(fold):
    _run(fold, "fbgkm", seed=11)
    (entry,) = (fold / "chains").glob("*.joblib")
    entry.write_bytes(b"not a pickle")
    sgpc = _run(fold, "sgpc", seed=22)
    assert sgpc["status"] == "ok" and "chains" not in sgpc["convergence"]["diagnostics"]
    data = np.load(fold / "toy.npz")
    reference = _sgpc_probabilities(fold, seed=11)
    assert sgpc["metrics"]["error"] == np.mean((reference[:, 1] > 0.5) != data["y"][50:])
    assert json.loads((fold / "sgpc.json").read_text())["seed"] == 22  # the job's own seed


def test_reports_count_the_taken_chains_in_sgpcs_time_and_the_ledger_does_not(fold):
    """SGPC's time in the tables is its job's plus the chains' FBGKM job spent on them; its
    ledger row keeps the job's own seconds (the protocol's cost, what estimates sum)."""
    records = [_run(fold, "fbgkm", seed=11), _run(fold, "sgpc", seed=22)]
    folds = pd.DataFrame([fold_row(record) for record in records])
    chains = records[1]["convergence"]["diagnostics"]["chains"]
    sgpc = records[1]["timings"]
    assert folds["fit_s"].tolist() == [records[0]["timings"]["fit_s"], sgpc["fit_s"]]
    for timing in ("fit_s", "cpu_s"):
        assert method_seconds(folds, timing).tolist() == [
            records[0]["timings"][timing], sgpc[timing] + chains[timing]]
    assert metric_values(folds, "time_s")[1] == sgpc["fit_s"] + chains["fit_s"] + sgpc["predict_s"]
    summary = summarise(folds).set_index("method")
    assert summary.loc["sgpc", "fit_s_mean"] == sgpc["fit_s"] + chains["fit_s"]
