"""The fidelity count under the reading a published s.d. below its test-sampling floor allows
(gpcbench.experiments.report.fidelity): the floor against scipy's hypergeometric distribution,
and the rule on hand-built cells whose combined standard errors are worked out here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import hypergeom

from gpcbench.experiments.report.fidelity import (allowed_reading_lines, beyond_two_se,
                                                  beyond_two_se_lines, fidelity, judged_cells,
                                                  sampling_floor)

POOL, TEST_ROWS, R = 1000, 500, 20   # 1,000 pooled rows, 500 test rows a partition, 20 partitions


def test_sampling_floor_is_the_hypergeometric_spread_of_the_error_rate():
    """A fixed classifier wrong on K of the N pooled rows errs on a hypergeometric number of
    the m drawn test rows: its rate's s.d. is hypergeom(N, K, m).std() / m."""
    for errors in (10, 100, 450):
        expected = hypergeom(POOL, errors, TEST_ROWS).std() / TEST_ROWS
        assert sampling_floor(errors / POOL, TEST_ROWS, POOL) == pytest.approx(expected, rel=1e-12)


def _folds(errors_percent, method, label):
    n = len(errors_percent)
    return pd.DataFrame({
        "experiment": "exp", "dataset": "d1", "method": method, "label": label, "fold": range(n),
        "status": "ok", "message": "", "error": np.asarray(errors_percent) / 100, "nlpd": np.nan,
        "brier": 0.1, "n_test": TEST_ROWS, "n_train": POOL - TEST_ROWS, "fit_s": 1.0,
        "predict_s": 0.1, "converged": True, "n_iter": 1, "log_evidence": np.nan,
        "hyperparameters": "{}", "options": "{}"})


OURS = {"A": 10.9, "B": 11.5, "C": 11.5}
SPREAD = np.array([-1.0, 1.0] * 10)   # s.d. 1.026, s.e. 0.2294 over the 20 values
_FOLDS = pd.concat([_folds(mean + SPREAD, name.lower(), name) for name, mean in OURS.items()])


def _case(tmp_path, protocol="random"):
    """Three methods on one original data set of 1,000 rows, ZDJ-style (error %, mean ± s.d.
    over 20 partitions). Published 10 % for each; the floor is 100 sqrt(0.1 * 0.9 / 500 * 500 /
    999) = 0.949 points. A prints s.d. 0.5 (below the floor), B 0.5 as well, C 1.5 (above)."""
    (tmp_path / "pub.csv").write_text("dataset,method,error_mean_percent,error_std\n"
                                      "Data One,A,10,0.5\nData One,B,10,0.5\nData One,C,10,1.5\n")
    table = {"title": "T", "experiment": "exp", "datasets": {"d1": "Data One"},
             "metric": "error_percent", "spread": "sd",
             "published": {"file": "pub.csv", "mean": "error_mean_percent",
                           "spread": "error_std", "n": R}}
    config = {"tables": {"t": table}, "experiments": {"exp": {
        "paper": "p", "protocol": {"type": protocol, "partitions": R, "n_train": POOL - TEST_ROWS,
                                   "n_test": TEST_ROWS},
        "datasets": {"d1": {}}}}}
    meta = {"d1": {"rows": POOL}}
    ours_se = SPREAD.std(ddof=1) / np.sqrt(R)
    return config, judged_cells(config, _FOLDS, tmp_path, meta).set_index("row"), OURS, ours_se


def test_a_published_sd_below_the_floor_becomes_the_published_means_se(tmp_path):
    config, cells, ours, ours_se = _case(tmp_path)
    floor = 100 * np.sqrt(0.1 * 0.9 / TEST_ROWS * (POOL - TEST_ROWS) / (POOL - 1))
    assert cells["floor"].tolist() == pytest.approx([floor] * 3)
    for row, printed in (("A", 0.5), ("B", 0.5), ("C", 1.5)):
        assert cells.loc[row, "se"] == pytest.approx(np.hypot(ours_se, printed / np.sqrt(R)))
        allowed = np.hypot(ours_se, printed) if printed < floor else cells.loc[row, "se"]
        assert cells.loc[row, "se_allowed"] == pytest.approx(allowed)
    # A: 0.9 / 0.2552 = 3.5 s.e. as printed, 0.9 / 0.5502 = 1.6 allowed; B: 5.9 and 2.7;
    # C: 1.5 / 0.4098 = 3.7 under both (its s.d. is above the floor)
    assert not cells["within"].any()
    assert cells["within_allowed"].tolist() == [True, False, False]
    summary = fidelity(cells.reset_index()).iloc[0]
    assert (summary.original_testable, summary.original_within_2se,
            summary.original_within_2se_allowed) == (3, 0, 1)
    assert "| p | 1 of 3 (33 %) |" in allowed_reading_lines(fidelity(cells.reset_index()))


def test_causes_are_owed_for_the_cells_beyond_two_se_under_the_allowed_reading(tmp_path):
    _, cells, _, _ = _case(tmp_path)
    causes = {"t": [
        {"cause": "data", "cells": {"B": ["Data One"], "C": ["Data One"]}, "why": "measured"},
        {"cause": "published", "cells": {"A": ["Data One"]}, "why": "below the floor"}]}
    judged, obsolete = beyond_two_se(cells.reset_index(), causes)
    judged = judged.set_index("row")
    assert judged["needs_cause"].to_dict() == {"A": False, "B": True, "C": True}
    assert judged.loc["A", "distance"] == pytest.approx(0.9 / np.hypot(0.2294, 0.5 / np.sqrt(R)),
                                                        rel=1e-3)
    assert judged.loc["A", "distance_allowed"] == pytest.approx(0.9 / np.hypot(0.2294, 0.5),
                                                                rel=1e-3)
    assert obsolete == ["t: A / Data One"]   # A needs no cause under the allowed reading
    lines = beyond_two_se_lines(judged.reset_index(), obsolete)
    text = "\n".join(lines)
    assert text.count("2 accuracy cells on original data") == 1
    assert "1 more do as printed only (listed last, no cause owed)." in text
    assert "| data | 2 | " in text and "| published | 0 | " in text
    assert "B / Data One: 11.5 vs. 10 (+5.9 / +2.7); C / Data One: 11.5 vs. 10 (+3.7)" in text
    assert "A / Data One: 10.9 vs. 10 (+3.5 / +1.6), 0.5 < 0.949" in text


def test_the_allowed_reading_needs_random_partitions_of_a_known_pool(tmp_path):
    """Ten-fold cross-validation, or a pool of unknown size: no floor, one reading."""
    for protocol, meta in (("kfold", {"d1": {"rows": POOL}}), ("random", {})):
        config, _, _, _ = _case(tmp_path, protocol)
        cells = judged_cells(config, _FOLDS, tmp_path, meta)
        assert cells["floor"].isna().all()
        assert cells["se_allowed"].tolist() == pytest.approx(cells["se"].tolist())
