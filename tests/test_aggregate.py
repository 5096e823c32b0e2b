"""Fold tables summarised per cell: a cell whose every fold failed still gets its row."""

import numpy as np
import pandas as pd

from gpcbench.experiments.aggregate import mean_sd_se, summarise


def test_a_cell_without_successful_folds_is_summarised_with_its_failures():
    folds = pd.DataFrame({
        "experiment": "e", "dataset": "d", "method": ["m", "m", "k"], "label": ["M", "M", "K"],
        "fold": [0, 1, 0], "status": ["timeout", "timeout", "ok"], "message": "slow",
        "error": [np.nan, np.nan, 0.2], "nlpd": np.nan, "nonfinite_nlpd": [None, None, False],
        "brier": 0.1, "n_test": 10, "fit_s": 1.0, "converged": True,
        "convergence_warnings": ["[]", "[]", "[]"], "diagnostics": "null"})
    summary = summarise(folds).set_index("method")
    assert summary.loc["m", "n_ok"] == 0 and summary.loc["m", "n_optimiser_warnings"] == 0
    assert summary.loc["m", "failures"] == "fold 0: timeout (slow); fold 1: timeout (slow)"
    assert np.isnan(summary.loc["m", "error_mean"]) and summary.loc["k", "error_mean"] == 0.2


def test_mean_sd_se_need_one_and_two_values():
    assert np.isnan(mean_sd_se(np.array([])) ).all()
    mean, sd, se = mean_sd_se(np.array([0.5]))
    assert mean == 0.5 and np.isnan(sd) and np.isnan(se)
    mean, sd, se = mean_sd_se(np.array([1.0, 3.0]))
    assert (mean, sd, se) == (2.0, np.sqrt(2.0), 1.0)
