"""Report tables: joins with the published numbers, the two-standard-error flag, formats."""

import json

import numpy as np
import pytest
import pandas as pd

from gpcbench.experiments.aggregate import summarise
from gpcbench.experiments.report import published_cells, table_cells, wide_table

TABLE = {"title": "T", "experiment": "exp", "datasets": {"d1": "Data One"}, "metric": "error",
         "spread": "se", "published": {"file": "pub.csv", "mean": "error_mean", "spread": "error_se"}}


def _folds(errors, method="m", label="M", status=None):
    n = len(errors)
    return pd.DataFrame({
        "experiment": "exp", "dataset": "d1", "method": method, "label": label, "fold": range(n),
        "status": status or ["ok"] * n, "message": "", "error": errors, "nlpd": np.nan,
        "brier": 0.1, "n_test": 20, "n_train": 80, "fit_s": 1.0, "predict_s": 0.1,
        "converged": True, "n_iter": 1, "log_evidence": np.nan, "hyperparameters": "{}"})


def test_flag_marks_differences_beyond_two_combined_standard_errors(tmp_path):
    errors = np.array([0.10, 0.15, 0.05, 0.10, 0.10])
    se = errors.std(ddof=1) / np.sqrt(5)
    folds = pd.concat([_folds(errors), _folds(errors, "k", "K")])
    near = 0.10 + 1.9 * np.hypot(se, 0.01)
    far = 0.10 + 2.1 * np.hypot(se, 0.01)
    (tmp_path / "pub.csv").write_text(
        f"dataset,method,error_mean,error_se\nData One,M,{near},0.01\nData One,K,{far},0.01\n"
        "Data One,Only published,0.2,0.02\n")
    cells = table_cells(TABLE, folds, published_cells(TABLE, tmp_path)).set_index("method")
    assert cells.loc["M", "ours"] == np.mean(errors)
    assert cells.loc["M", "ours_spread"] == se
    assert not cells.loc["M", "flag"] and cells.loc["K", "flag"]
    assert np.isnan(cells.loc["Only published", "ours"])
    wide = wide_table(TABLE, cells.reset_index())
    assert wide.loc["K", "Data One"].endswith(f"! [{far:.4f} ± 0.0100]")
    assert wide.loc["Only published", "Data One"].startswith("—")


def test_failed_folds_are_excluded_and_counted():
    folds = _folds([0.1, 0.2, np.nan], status=["ok", "ok", "timeout"])
    row = summarise(folds).iloc[0]
    assert row["n_ok"] == 2 and row["n_failed"] == 1
    assert row["error_mean"] == pytest.approx(0.15) and "fold 2: timeout" in row["failures"]


def test_hyperparameter_metric_reads_the_indexed_value(tmp_path):
    folds = _folds([0.1, 0.2, 0.3])
    folds["hyperparameters"] = [json.dumps({"inverse_lengthscale": [0.5 + k, 2.0 * k]}) for k in range(3)]
    table = {**TABLE, "metric": "hyperparameter:inverse_lengthscale[1]", "spread": "sd",
             "published": {"file": "pub.csv", "mean": "mean", "spread": "sd", "n": 10,
                           "filter": {"hyperparameter": "l2"}}}
    (tmp_path / "pub.csv").write_text("method,hyperparameter,mean,sd\nM,l1,9,1\nM,l2,2.0,0.5\n")
    cells = table_cells(table, folds, published_cells(table, tmp_path)).set_index("method")
    assert cells.loc["M", "ours"] == pytest.approx(2.0)          # mean of 0, 2, 4
    assert cells.loc["M", "ours_spread"] == pytest.approx(2.0)   # s.d. of 0, 2, 4
    assert cells.loc["M", "pub_mean"] == 2.0 and not cells.loc["M", "flag"]


def test_completeness_lists_experiments_with_missing_folds():
    from gpcbench.experiments.report import _completeness

    config = {"experiments": {
        "exp": {"protocol": {"type": "kfold", "folds": 5}, "datasets": {"d1": {}},
                "methods": ["m", "k"]},
        "fixed": {"protocol": {"type": "fixed"}, "datasets": {"d1": {}}, "methods": ["m"]}}}
    folds = pd.concat([_folds([0.1] * 5), _folds([0.2] * 3, "k", "K"),
                       _folds([0.3]).assign(experiment="fixed")])
    assert _completeness(config, folds) == [
        "- exp: 8 of 10 fold results; cells of missing folds show — or fewer folds"]
    assert _completeness(config, pd.concat([folds, _folds([0.2] * 2, "k", "K")])) == []


def test_a_shared_hyperparameter_stands_for_every_index():
    from gpcbench.experiments.report import metric_values

    folds = _folds([0.1, 0.2])
    folds["hyperparameters"] = [json.dumps({"inverse_lengthscale": 0.7}),
                                json.dumps({"inverse_lengthscale": [0.5, 2.5]})]
    values = metric_values(folds, "hyperparameter:inverse_lengthscale[1]").tolist()
    assert values == [0.7, 2.5]
