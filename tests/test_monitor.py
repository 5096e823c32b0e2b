"""Progress lines are rate-limited; a fit stopped at its cap raises ConvergenceWarning."""

import logging

import pytest
from sklearn.exceptions import ConvergenceWarning

from gpcbench import monitor


def test_progress_writes_at_most_one_line_per_interval(monkeypatch, caplog):
    clock = iter([0.0, 1.0, 4.9, 5.0, 5.1, 12.0, 12.5])
    monkeypatch.setattr(monitor.time, "monotonic", lambda: next(clock))
    progress = monitor.Progress("EM-EP", interval=5.0)
    with caplog.at_level(logging.INFO, logger="gpcbench.progress"):
        for step in range(6):
            progress("iteration %d", step)
        progress("done", force=True)
    assert [r.getMessage() for r in caplog.records] == [
        "EM-EP: iteration 0", "EM-EP: iteration 3", "EM-EP: iteration 5", "EM-EP: done"]


def test_warn_at_cap_is_a_convergence_warning_naming_the_fit():
    with pytest.warns(ConvergenceWarning, match=r"^EP: EM stopped at its cap of 7 iterations "
                                                r"without converging; raise max_iter$"):
        monitor.warn_at_cap("EP", "EM", 7, "raise max_iter")
