"""Timing figures (ZDJ Figs. 3-4): our mean time per data set and method from the fold
records, the published times of the figure's table beside them, and the PNG, also from an
experiment without folds."""

import csv

import numpy as np
import pandas as pd
import pytest

from gpcbench.config import load_config
from gpcbench.experiments.aggregate import FOLD_COLUMNS
from gpcbench.experiments.report.build import write_report
from gpcbench.experiments.report.cells import published_cells
from gpcbench.experiments.report.figure_data import timing_bars
from gpcbench.workflow import report_config

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def config():
    from pathlib import Path

    return load_config(Path(__file__).resolve().parents[1] / "config" / "config.yaml")


def _record(dataset, method, label, fold, fit_s, predict_s, status="ok"):
    row = dict.fromkeys(FOLD_COLUMNS)
    row.update(experiment="zhang2011", dataset=dataset, method=method, label=label, fold=fold,
               status=status, error=0.1, n_test=100, fit_s=fit_s, predict_s=predict_s)
    return row


def _folds():
    """Splice: FBGKM 3 folds (one failed), SGPC 2; Adult1: FBGKM 1; and a k-NN fold, a method
    the figure does not show."""
    return pd.DataFrame([
        _record("splice", "fbgkm", "FBGKM", 0, 100.0, 2.0),
        _record("splice", "fbgkm", "FBGKM", 1, 300.0, 4.0),
        _record("splice", "fbgkm", "FBGKM", 2, 9e9, 0.0, status="failed: LinAlgError"),
        _record("splice", "sgpc", "SGPC", 0, 50.0, 1.0),
        _record("splice", "sgpc", "SGPC", 1, 70.0, 3.0),
        _record("adult1", "fbgkm", "FBGKM", 0, 1000.0, 10.0),
        _record("splice", "knn", "k-NN", 0, 1.0, 1.0),
    ])


def test_bars_are_the_mean_fit_plus_predict_seconds_of_successful_folds(config):
    spec = config["figures"]["zhang2011_figure4"]
    bars = timing_bars(spec, config["tables"]["zhang2011_table11"], _folds(),
                       pd.DataFrame(columns=["entry", "method", "pub_mean", "pub_spread"]),
                       {entry: 20 for entry in config["tables"]["zhang2011_table11"]["datasets"]})
    ours = bars.set_index(["entry", "method"])["ours"]
    assert ours[("splice", "FBGKM")] == pytest.approx((102.0 + 304.0) / 2)
    assert ours[("splice", "SGPC")] == pytest.approx((51.0 + 73.0) / 2)
    assert ours[("adult1", "FBGKM")] == pytest.approx(1010.0)
    assert ours.dropna().size == 3  # the figure's methods only, nothing where no fold ran
    # one row per (table data set, figure method), in column and figure order
    assert list(dict.fromkeys(bars["dataset"])) == ["Splice", "Astrop", "Mushrooms", "Adult1",
                                                    "Adult2"]
    assert list(dict.fromkeys(bars["method"])) == ["SGP+FIC+EP", "SGP+FIC+MCMC", "FBGKM", "SGPC"]
    assert len(bars) == 5 * 4
    counts = bars.set_index(["entry", "method"])
    assert counts.loc[("splice", "FBGKM"), ["n_ok", "n_expected"]].tolist() == [2, 20]


@pytest.mark.parametrize("figure, table", [("zhang2011_figure3", "zhang2011_table9"),
                                           ("zhang2011_figure4", "zhang2011_table11")])
def test_published_times_sit_in_their_data_set_and_method_cells(config, repo, figure, table):
    """Every (printed data set, method) time of the shipped CSV, read here with the csv module,
    lands in the bar of that data set and (renamed) method; cells the paper leaves blank
    (Table 11's SGP+FIC+MCMC on Adult2) are NaN."""
    spec, shown = config["figures"][figure], config["tables"][table]
    bars = timing_bars(spec, shown, pd.DataFrame(),
                       published_cells(shown, repo / "config" / "published"))
    got = {(r.dataset, r.method): r.pub_mean for r in bars.itertuples()}
    with open(repo / "config" / "published" / f"{table}.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(got)
    for row in rows:
        expected = float(row["time_s"]) if row["time_s"] else np.nan
        np.testing.assert_equal(got[(row["dataset"], row["method"])], expected)
    assert bars["ours"].isna().all()


@pytest.mark.parametrize("empty", [True, False])
def test_the_report_part_writes_a_png_also_without_folds(config, repo, tmp_path, empty):
    """``gpcbench report --only figure:NAME`` with the config part its Snakemake job passes
    (the figure, its experiment and its table) writes the PNG, from an experiment whose
    folds.csv has only its header as from a partial one."""
    folds = pd.DataFrame(columns=FOLD_COLUMNS) if empty else pd.DataFrame(_folds())
    folds_csv = tmp_path / "folds.csv"
    folds.to_csv(folds_csv, index=False)
    part = report_config(config, "figure", "zhang2011_figure4")
    assert set(part["tables"]) == {"zhang2011_table11"}
    write_report(part, [folds_csv], repo / "config" / "published", tmp_path / "reports",
                 only="figure:zhang2011_figure4")
    png = tmp_path / "reports" / "figures" / "zhang2011_figure4.png"
    assert png.read_bytes().startswith(PNG_SIGNATURE)
    from matplotlib.image import imread

    assert imread(png).shape[0] > 100
