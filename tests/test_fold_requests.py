"""Scheduler requests of fold jobs: from the largest wall time and peak memory measured for
their (experiment, entry, method), with a margin, else from the per-method model of n."""

import math

import pandas as pd

from gpcbench.experiments.ledger import write_fold_costs
from gpcbench.fold_requests import (MARGIN, MEM_SLACK_MB, START_UP_S, FoldRequests,
                                    read_fold_costs)

JOBS = {"threads": 1, "time_limit_s": 3600, "mem_mb": 1500,
        "resources": {"fbgkm": {"minutes": 20}}}


def _folds(tmp_path):
    rows = [("e", "big", "fbgkm", 0, 4000, 100.0, 20.0, 900.0),
            ("e", "big", "fbgkm", 1, 4000, 250.0, 10.0, 1100.0),
            ("e", "big", "lda", 0, 4000, 1.0, 0.5, None),  # made before memory was recorded
            ("e", "small", "lda", 0, 100, 0.2, None, 120.0)]
    frame = pd.DataFrame(rows, columns=["experiment", "dataset", "method", "fold", "n_train",
                                        "fit_s", "predict_s", "peak_rss_mb"])
    path = tmp_path / "folds.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "fold_costs.csv"
    write_fold_costs([path], out)
    return out


def test_costs_are_the_largest_measured_per_experiment_entry_and_method(tmp_path):
    costs = pd.read_csv(_folds(tmp_path), keep_default_na=False)
    assert costs.to_dict("records") == [
        {"experiment": "e", "entry": "big", "method": "fbgkm", "folds": 2, "n_train": 4000,
         "wall_s_max": 260.0, "peak_rss_mb_max": "1100"},
        {"experiment": "e", "entry": "big", "method": "lda", "folds": 1, "n_train": 4000,
         "wall_s_max": 1.5, "peak_rss_mb_max": ""},
        {"experiment": "e", "entry": "small", "method": "lda", "folds": 1, "n_train": 100,
         "wall_s_max": 0.2, "peak_rss_mb_max": "120"}]


def test_measured_folds_ask_for_what_they_took_with_a_margin_and_others_for_the_model(tmp_path):
    requests = FoldRequests(JOBS, read_fold_costs(_folds(tmp_path)))
    assert requests.runtime("e", "big", "fbgkm", 4000) == math.ceil(
        (MARGIN * 260 + START_UP_S) / 60)
    assert requests.mem_mb("e", "big", "fbgkm", 4000) == round(MARGIN * 1100 + MEM_SLACK_MB)
    # lda on "big": time measured, memory not: the default model row (config mem_mb, 2 n x n)
    assert requests.mem_mb("e", "big", "lda", 4000) == round(1500 + 2 * 8 * 4000**2 / 1e6)
    # nothing measured: the config's fbgkm row over the built-in one (20 min, exponent 1)
    assert requests.runtime("e", "new", "fbgkm", 3000) == 60
    assert requests.group("e", "new", "fbgkm", 3000) is None  # samplers: a job of their own
    assert requests.group("e", "small", "lda", 100) == "folds"


def test_a_retried_fold_asks_for_its_whole_time_limit_and_twice_the_memory(tmp_path):
    requests = FoldRequests(JOBS, read_fold_costs(_folds(tmp_path)))
    limit = math.ceil((3600 + START_UP_S) / 60)
    assert requests.runtime("e", "big", "fbgkm", 4000, attempt=2) == limit
    assert requests.runtime("e", "new", "bgkm", 10**5) == limit  # the model, capped
    once = requests.mem_mb("e", "big", "fbgkm", 4000)
    assert requests.mem_mb("e", "big", "fbgkm", 4000, attempt=3) == 4 * once


def test_no_measurements_file_means_the_model(tmp_path):
    assert read_fold_costs(tmp_path / "absent.csv") == {}
