"""Report tables: joins with the published numbers, the two-standard-error flag, formats."""

import json
import re
import warnings

import numpy as np
import pytest
import pandas as pd

from gpcbench.experiments.aggregate import SAMPLER_DIAGNOSTICS, summarise
from gpcbench.experiments.report.cells import published_cells, table_cells
from gpcbench.experiments.report.fidelity import CAUSES
from gpcbench.experiments.report.formats import wide_table
from gpcbench.seeds import derive_seed

TABLE = {"title": "T", "experiment": "exp", "datasets": {"d1": "Data One"}, "metric": "error",
         "spread": "se", "published": {"file": "pub.csv", "mean": "error_mean", "spread": "error_se"}}


def _folds(errors, method="m", label="M", status=None):
    n = len(errors)
    return pd.DataFrame({
        "experiment": "exp", "dataset": "d1", "method": method, "label": label, "fold": range(n),
        "status": status or ["ok"] * n, "message": "", "error": errors, "nlpd": np.nan,
        "brier": 0.1, "n_test": 20, "n_train": 80, "fit_s": 1.0, "predict_s": 0.1,
        "converged": True, "n_iter": 1, "log_evidence": np.nan, "hyperparameters": "{}",
        "options": "{}"})


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


def test_published_key_matches_another_column_to_the_printed_names(tmp_path):
    """A sweep printed one row per training size: published.key = n_train puts each row under
    the column printed as that value (compared as strings); an unknown key column is named."""
    from gpcbench.experiments.report.build import write_table_files

    folds = pd.concat([_folds([0.10, 0.12]).assign(dataset="n300"),
                       _folds([0.20, 0.22]).assign(dataset="n400")])
    table = {**TABLE, "datasets": {"n300": "300", "n400": "400"}, "spread": "sd",
             "published": {"file": "pub.csv", "mean": "err", "spread": "sd", "key": "n_train",
                           "n": 20}}
    (tmp_path / "pub.csv").write_text("n_train,method,err,sd\n400,M,0.21,0.01\n300,M,0.11,0.01\n"
                                      "500,M,0.31,0.01\n")
    cells = table_cells(table, folds, published_cells(table, tmp_path)).set_index("entry")
    assert cells["pub_mean"].to_dict() == {"n300": 0.11, "n400": 0.21}
    assert cells.loc["n400", "ours"] == pytest.approx(0.21)
    config = {"tables": {"sweep": {**table, "published": {**table["published"], "key": "k_max"}}},
              "experiments": {"exp": {"protocol": {"type": "kfold", "folds": 2},
                                      "datasets": {"n300": {}, "n400": {}}}}}
    with pytest.raises(ValueError, match="table 'sweep': published.key 'k_max' is not a column "
                                         "of pub.csv"):
        write_table_files("sweep", config, folds, tmp_path, {}, tmp_path / "out")


def test_published_rate_turns_a_time_per_run_into_units_per_second_for_listed_methods(tmp_path):
    """published.rate = 10,000 sweeps: a 2,000 s run shows 5 sweeps/s; filter keeps a list."""
    table = {**TABLE, "published": {"file": "pub.csv", "mean": "time_s", "rate": 10000,
                                    "filter": {"method": ["M", "K"]}}}
    (tmp_path / "pub.csv").write_text("dataset,method,time_s\nData One,M,2000\nData One,K,400\n"
                                      "Data One,SVM,10\n")
    cells = published_cells(table, tmp_path).set_index("method")
    assert cells["pub_mean"].to_dict() == {"M": 5.0, "K": 25.0}


def test_sweeps_per_second_count_every_chain_the_fold_recorded():
    """n_iter is the sweeps per chain, n_chains the fitted sampler's (recorded by the fold);
    k-NN has no chains and a fold recorded before n_chains has no count (NaN both)."""
    from gpcbench.experiments.report.cells import metric_values

    folds = pd.concat([_folds([0.1, 0.1, 0.1], "fbgkm", "FBGKM"), _folds([0.1], "knn", "k-NN")],
                      ignore_index=True)
    folds["n_chains"] = [2, 3, np.nan, np.nan]
    folds["n_iter"] = [1000, 1000, 1000, np.nan]
    folds["fit_s"] = [4.0, 5.0, 1.0, 1.0]
    values = metric_values(folds, "sweeps_per_s").tolist()
    assert values[:2] == [500.0, 600.0] and np.isnan(values[2]) and np.isnan(values[3])


def test_collected_folds_keep_cpu_seconds_and_options(tmp_path):
    """Every field fold_row reads reaches folds.csv (cpu_s was once dropped by the column list)."""
    from gpcbench.experiments.aggregate import FOLD_COLUMNS, collect_folds, fold_row

    record = {"experiment": "e", "dataset": "d", "method": "m", "label": "M", "fold": 0,
              "status": "ok", "message": "", "metrics": {"error": 0.1, "n_test": 10},
              "timings": {"fit_s": 2.0, "predict_s": 1.0, "cpu_s": 2.5},
              "options": {"k_max": 50}, "seed": 1, "provenance": {}}
    assert set(fold_row(record)) == set(FOLD_COLUMNS)
    (tmp_path / "fold0.json").write_text(json.dumps(record))
    frame = collect_folds([tmp_path / "fold0.json"], tmp_path / "folds.csv")
    read = pd.read_csv(tmp_path / "folds.csv")
    assert read.loc[0, "cpu_s"] == 2.5 and json.loads(read.loc[0, "options"]) == {"k_max": 50}
    assert list(frame.columns) == list(read.columns)


def test_shipped_tables_find_their_published_rows(repo):
    """Every shipped table's published file yields rows for it; the sweeps keyed by n_train or
    k_max put one row per printed method under each setting's column."""
    from gpcbench.config import load_config

    config = load_config(repo / "config" / "config.yaml")
    published_dir = repo / "config" / "published"
    for name, table in config["tables"].items():
        if table.get("published") and table["metric"] != "confusion":
            assert not published_cells(table, published_dir).empty, name
    rows = {name: published_cells(config["tables"][name], published_dir).groupby("entry").size()
            for name in ("zhang2011_table4", "zhang2011_table6_time", "zhang2011_table8")}
    assert rows["zhang2011_table4"].to_dict() == {f"n{n}": 5 for n in range(300, 900, 100)}
    assert rows["zhang2011_table6_time"].to_dict() == {f"n800_k{k}": 2 for k in range(300, 800, 100)}
    assert rows["zhang2011_table8"].to_dict() == dict.fromkeys(
        ["adult", "astroparticle", "mushrooms", "splice"], 4)


def test_a_substitute_shared_by_several_columns_is_noted_once_naming_them():
    from gpcbench.experiments.report.cells import entry_notes

    config = {"experiments": {"exp": {"datasets": {
        "n300": {"data": "text"}, "iris": {"note": "own note"}, "n400": {"data": "text"}}}}}
    table = {"experiment": "exp", "datasets": {"n300": "300", "iris": "Iris", "n400": "400"}}
    meta = {"text": {"substitute": "stand-in", "differences": "smaller"}}
    assert entry_notes(config, table, meta) == ["300, 400: stand-in — smaller", "Iris: own note"]


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


def test_completeness_lists_experiments_with_missing_folds(monkeypatch):
    """Each experiment short of folds, with its cells' reasons (``pending``) or, for cells not
    run yet, the first NAMED_NOT_RUN named and the rest counted."""
    from gpcbench.experiments.report import cells
    from gpcbench.experiments.report.cells import completeness

    config = {"experiments": {
        "exp": {"protocol": {"type": "kfold", "folds": 5}, "datasets": {"d1": {}},
                "methods": ["m", "k"]},
        "fixed": {"protocol": {"type": "fixed"}, "datasets": {"d1": {}}, "methods": ["m"]}}}
    folds = pd.concat([_folds([0.1] * 5), _folds([0.2] * 3, "k", "K"),
                       _folds([0.3]).assign(experiment="fixed")])
    assert completeness(config, folds) == [
        "- exp: 8 of 10 fold results; cells of missing folds show — or fewer folds",
        "  - d1 / k: 2 of 5 folds missing — not run yet"]
    monkeypatch.setattr(cells, "NAMED_NOT_RUN", 0)
    assert completeness(config, folds)[1:] == [
        "  - 1 other cells with missing folds: not run yet"]
    config["experiments"]["exp"]["datasets"]["d1"]["pending"] = {"k": "too slow here"}
    assert completeness(config, folds)[1:] == [
        "  - d1 / k: 2 of 5 folds missing — too slow here"]
    assert completeness(config, pd.concat([folds, _folds([0.2] * 2, "k", "K")])) == []


def test_a_shared_hyperparameter_stands_for_every_index():
    from gpcbench.experiments.report.cells import metric_values

    folds = _folds([0.1, 0.2])
    folds["hyperparameters"] = [json.dumps({"inverse_lengthscale": 0.7}),
                                json.dumps({"inverse_lengthscale": [0.5, 2.5]})]
    values = metric_values(folds, "hyperparameter:inverse_lengthscale[1]").tolist()
    assert values == [0.7, 2.5]


def test_time_metric_is_fit_plus_predict_seconds():
    from gpcbench.experiments.report.cells import metric_values

    folds = _folds([0.1, 0.2])
    folds["fit_s"], folds["predict_s"] = [3.0, 10.0], [0.5, 1.25]
    assert metric_values(folds, "time_s").tolist() == [3.5, 11.25]


def test_diagnostic_metric_reads_a_dotted_path_and_skips_methods_without_it():
    from gpcbench.experiments.report.cells import table_cells

    sampler = _folds([0.1, 0.2, 0.3], "s", "S")
    sampler["diagnostics"] = [json.dumps({"n_active": {"max": m}}) for m in (90, 95, 100)]
    sampler.loc[2, "status"] = "failed"
    other = _folds([0.1, 0.2], "k", "K")
    other["diagnostics"] = "null"
    table = {"experiment": "exp", "datasets": {"d1": "D"}, "metric": "diagnostic:n_active.max",
             "spread": "none"}
    published = pd.DataFrame(columns=["entry", "method", "pub_mean", "pub_spread"])
    cells = table_cells(table, pd.concat([sampler, other], ignore_index=True), published)
    assert cells["method"].tolist() == ["S"]
    assert cells["ours"].tolist() == [92.5] and cells["n_ok"].tolist() == [2]


def test_a_diagnostic_undefined_in_some_runs_is_counted_not_dropped():
    """A Brooks burn-in that never settled is NaN: the cell counts those runs, and a data set
    where every run is undefined still shows a cell; a method without the metric shows none."""
    sampler = pd.concat([_folds([0.1, 0.2, 0.3], "s", "S"),
                         _folds([0.1, 0.2], "s", "S").assign(dataset="d2")], ignore_index=True)
    sampler["diagnostics"] = [json.dumps({"brooks_burn_in": b})
                              for b in (800.0, None, 1000.0, None, None)]
    other = _folds([0.1, 0.2], "k", "K").assign(diagnostics="null")
    table = {"experiment": "exp", "datasets": {"d1": "D1", "d2": "D2"},
             "metric": "diagnostic:brooks_burn_in", "spread": "none"}
    published = pd.DataFrame(columns=["entry", "method", "pub_mean", "pub_spread"])
    wide = wide_table(table, table_cells(table, pd.concat([sampler, other], ignore_index=True),
                                         published, {"d1": 3, "d2": 3}))
    assert wide.loc["S"].tolist() == ["900.0 (1 undefined)", "— (2 undefined) (2/3)"]
    assert wide.index.tolist() == ["S"]
    sampler["diagnostics"] = json.dumps({"brooks_burn_in": None})  # undefined in every run
    wide = wide_table(table, table_cells(table, pd.concat([sampler, other], ignore_index=True),
                                         published, {"d1": 3, "d2": 3}))
    assert wide.loc["S"].tolist() == ["— (3 undefined)", "— (2 undefined) (2/3)"]


def test_method_metrics_give_a_method_its_own_metric():
    """``method_metrics``: one sampler's cells read another diagnostic than the table's."""
    from gpcbench.experiments.report.cells import table_cells

    rj = _folds([0.1, 0.2], "rj", "RJ")
    rj["diagnostics"] = [json.dumps({"brooks_burn_in": None, "n_gamma": {"brooks_burn_in": b}})
                         for b in (400.0, 600.0)]
    gibbs = _folds([0.1, 0.2], "gibbs", "Gibbs")
    gibbs["diagnostics"] = [json.dumps({"brooks_burn_in": b}) for b in (100.0, 300.0)]
    table = {"experiment": "exp", "datasets": {"d1": "D"}, "spread": "none",
             "metric": "diagnostic:n_gamma.brooks_burn_in",
             "method_metrics": {"gibbs": "diagnostic:brooks_burn_in"}}
    published = pd.DataFrame(columns=["entry", "method", "pub_mean", "pub_spread"])
    cells = table_cells(table, pd.concat([rj, gibbs], ignore_index=True), published)
    assert dict(zip(cells["method"], cells["ours"])) == {"RJ": 500.0, "Gibbs": 200.0}
    assert cells["n_undefined"].tolist() == [0, 0]
    assert table_cells(table, rj.iloc[:0], published).empty  # an experiment not run yet


def test_trace_burn_in_thins_an_autocorrelated_trace_and_counts_sweeps():
    """Traces recorded every 20 sweeps, 40 seeds each. A stationary AR(1) trace (lag-1
    correlation 0.6, as a chain's dependence): unthinned, Brooks' runs test rejects it at every
    candidate; thinned by two autocorrelation times it is defined. Independent draws after a
    150-entry transient: the burn-in covers it, in sweeps. A random walk, and a trace without
    the quantity, are undefined."""
    from gpcbench.experiments.aggregate import trace_burn_in
    from gpcbench.mcmc.cusum import brooks_burn_in

    def trace(values):
        return json.dumps([{"sweep": 20 * (i + 1), "q": v} for i, v in enumerate(values)])

    unthinned_rejected = defined = transient_found = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        ar = np.zeros(1000)
        for t in range(1, ar.size):
            ar[t] = 0.6 * ar[t - 1] + rng.normal()
        unthinned_rejected += np.isnan(brooks_burn_in(ar))
        defined += np.isfinite(trace_burn_in(trace(ar), "q"))
        burn = trace_burn_in(trace(np.r_[np.linspace(20, 0, 150), rng.normal(size=850)]), "q")
        transient_found += 75 * 20 <= burn < 500 * 20
    assert unthinned_rejected >= 38 and defined >= 36 and transient_found >= 34
    walk = np.cumsum(np.random.default_rng(0).normal(size=1000))
    assert np.isnan(trace_burn_in(trace(walk), "q"))
    assert np.isnan(trace_burn_in(trace(walk), "n_gamma")) and np.isnan(trace_burn_in(None, "q"))


def _experiment_folds(experiment, dataset, n=3):
    """Folds of methods m and k made as REPORT_CONFIG runs them (its seed, the data's SHA-256
    report_inputs records) by code hash h."""
    folds = pd.concat([_folds([0.1, 0.2, 0.3][:n]), _folds([0.2, 0.3, 0.4][:n], "k", "K")],
                      ignore_index=True)
    return folds.assign(
        experiment=experiment, dataset=dataset, log_evidence=-3.0,
        hyperparameters=json.dumps({"inverse_lengthscale": [0.5, 1.5]}),
        trace=json.dumps([{"log_evidence": -5.0}, {"log_evidence": -3.0}]),
        seed=[derive_seed(REPORT_CONFIG["seed"], experiment, dataset, method, fold)
              for method, fold in zip(folds["method"], folds["fold"])],
        data_sha256="f" * 64, code_hash="h", git_commit="abc", packages=json.dumps({"numpy": "2"}))


REPORT_CONFIG = {
    "seed": 7, "offline": True,
    "experiments": {
        "e1": {"description": "first", "protocol": {"type": "kfold", "folds": 3},
               "datasets": {"d1": {"note": "a note"}}, "methods": ["m", "k"]},
        "e2": {"description": "second", "protocol": {"type": "kfold", "folds": 3},
               "datasets": {"d2": {"data": "d2_data"}}, "methods": ["m", "k"]}},
    "tables": {
        "t1": {"title": "T1", "experiment": "e1", "datasets": {"d1": "D1"}, "metric": "error",
               "spread": "se", "published": {"file": "pub.csv", "mean": "error_mean",
                                              "spread": "error_se"}},
        "t2": {"title": "T2", "experiment": "e2", "datasets": {"d2": "D2"},
               "metric": "errors", "spread": "none"}},
    "figures": {
        "f1": {"type": "convergence", "title": "F1", "experiment": "e1", "methods": ["m"]},
        "f2": {"type": "relevance", "title": "F2", "experiment": "e2", "methods": ["k"]}},
}


@pytest.fixture
def report_inputs(tmp_path):
    """Two experiments' folds.csv, data-set metadata and a published CSV."""
    (tmp_path / "pub.csv").write_text("dataset,method,error_mean,error_se\nD1,M,0.2,0.01\n")
    for experiment, dataset, data in (("e1", "d1", "d1"), ("e2", "d2", "d2_data")):
        _experiment_folds(experiment, dataset).to_csv(tmp_path / f"{experiment}.csv", index=False)
        (tmp_path / f"{data}.json").write_text(json.dumps(
            {"kind": "generator", "seed": 3, "rows": 100, "columns": 2, "sha256": "f" * 64,
             "feature_names": ["x1", "x2"], "substitute": "a stand-in" if data == "d1" else None}))
    return tmp_path


def _files(directory):
    return {p.relative_to(directory): p.read_bytes() for p in sorted(directory.rglob("*"))
            if p.is_file()}


def test_each_report_part_alone_equals_the_whole_report(report_inputs):
    """What the Snakemake rules do (one job per table / summary / figure, each given only its
    experiment's folds and its own part of the config) writes the same files as one call."""
    from gpcbench.experiments.report.build import write_report
    from gpcbench.experiments.report.index import report_targets
    from gpcbench.workflow import report_config

    d = report_inputs
    folds = {e: d / f"{e}.csv" for e in ("e1", "e2")}
    meta = {"d1": d / "d1.json", "d2": d / "d2_data.json"}
    write_report(REPORT_CONFIG, list(folds.values()), d, d / "whole", list(meta.values()))
    parts = {  # target -> (folds, data meta) its rule gives it
        "table:t1": ([folds["e1"]], [meta["d1"]]), "table:t2": ([folds["e2"]], [meta["d2"]]),
        "summary:e1": ([folds["e1"]], []), "summary:e2": ([folds["e2"]], []),
        "figure:f1": ([folds["e1"]], []), "figure:f2": ([folds["e2"]], [meta["d2"]]),
        "overview": (list(folds.values()), list(meta.values())),
    }
    assert sorted(parts) == sorted(report_targets(REPORT_CONFIG))
    for target, (fold_tables, data_meta) in parts.items():
        kind, _, name = target.partition(":")
        before = _files(d / "parts") if (d / "parts").exists() else {}
        write_report(report_config(REPORT_CONFIG, kind, name), fold_tables, d, d / "parts",
                     data_meta, only=target)
        written = {str(p) for p in set(_files(d / "parts")) - set(before)}
        expected = {"table": {f"tables/{name}.{x}" for x in ("md", "csv", "tex")},
                    "summary": {f"tables/{name}_summary.{x}" for x in ("md", "csv")},
                    "figure": {f"figures/{name}.png"},
                    "overview": {"figures/published_vs_reproduced.png", "index.md"}}[kind]
        assert written == expected, target
    whole, split = _files(d / "whole"), _files(d / "parts")
    assert whole.keys() == split.keys()
    for path in whole:
        assert whole[path] == split[path], path
    table = (d / "parts" / "tables" / "t1.md").read_text()
    assert "- D1: a stand-in" in table and "- D1: a note" in table


def test_stale_folds_are_marked_in_cells_and_counted_in_the_index(report_inputs, monkeypatch):
    """Given the code hashes at HEAD, a cell built from folds of another hash says how many,
    and index.md counts each table's current, stale and missing folds; a fold run with other
    options, another seed or other data than the config's and the data sets' metadata say is
    stale whatever its hash, and a ``+dirty`` fold of HEAD's hash is current."""
    from gpcbench.experiments.report.build import write_report

    d = report_inputs
    monkeypatch.setattr("gpcbench.experiments.ledger.entry_fold_count", lambda spec, entry: 3)
    folds = pd.read_csv(d / "e1.csv")
    m = folds["method"] == "m"
    folds.loc[m & (folds["fold"] == 0), "git_commit"] = "abc+dirty"
    folds.loc[m & (folds["fold"] == 1), "options"] = '{"n_chains": 2}'
    folds.loc[m & (folds["fold"] == 2), "seed"] = 1
    folds.to_csv(d / "e1.csv", index=False)
    folds = pd.read_csv(d / "e2.csv")
    folds.loc[(folds["method"] == "m") & (folds["fold"] == 0), "data_sha256"] = "0" * 64
    folds.to_csv(d / "e2.csv", index=False)
    write_report(REPORT_CONFIG, [d / "e1.csv", d / "e2.csv"], d, d / "out",
                 [d / "d1.json", d / "d2_data.json"], head_hashes={"m": "h", "k": "other"})
    table = (d / "out" / "tables" / "t1.md").read_text()
    row = {line.split(" | ")[0]: line for line in table.splitlines() if line.startswith("| ")}
    assert "(2 stale) [" in row["| M"] and "(3 stale)" in row["| K †"]  # K: not in the paper
    index = (d / "out" / "index.md").read_text()
    assert "- [T1](tables/t1.md): 1 current, 5 stale, 0 missing" in index
    assert "- [T2](tables/t2.md): 2 current, 4 stale, 0 missing" in index
    write_report(REPORT_CONFIG, [d / "e1.csv", d / "e2.csv"], d, d / "plain",
                 [d / "d1.json", d / "d2_data.json"])
    assert " stale) [" not in (d / "plain" / "tables" / "t1.md").read_text()
    assert "## Current, stale, missing" not in (d / "plain" / "index.md").read_text()


def test_report_rejects_an_unknown_part_in_one_line(report_inputs, capsys):
    from gpcbench.cli import main

    base = ["report", "--config-json", json.dumps(REPORT_CONFIG), "--published",
            str(report_inputs), "--out", str(report_inputs / "out"), "--folds",
            str(report_inputs / "e1.csv")]
    for only, message in (("table:nope", "unknown table 'nope'"),
                          ("summary:t1", "unknown summary 't1'"),
                          ("chart:f1", "unknown report output 'chart:f1'")):
        assert main([*base, "--only", only]) == 1
        err = capsys.readouterr().err
        assert err.startswith("gpcbench report: error: ") and message in err
        assert len(err.splitlines()) == 1
    assert not (report_inputs / "out").exists()


def test_hmc_summary_uses_only_the_retained_states_and_mpl_its_fitted_value():
    from gpcbench.experiments.report.figure_data import log_hyperparameter_summary

    burn_in = [{"phase": "burn-in", "hyperparameters": {"w": [np.exp(50.0), 1.0]}}] * 3
    retained = [{"phase": "retained", "hyperparameters": {"w": [np.exp(a), np.exp(b)]}}
                for a, b in ((0.0, 1.0), (2.0, 1.0), (1.0, 4.0))]
    mean, sd = log_hyperparameter_summary(burn_in + retained, {"w": [9.0, 9.0]}, "w")
    # log values (0, 2, 1) and (1, 1, 4): means 1 and 2, population s.d. sqrt(2/3) and sqrt(2)
    np.testing.assert_allclose(mean, [1.0, 2.0])
    np.testing.assert_allclose(sd, [np.sqrt(2 / 3), np.sqrt(2.0)])
    point, none = log_hyperparameter_summary([{"iteration": 0}], {"w": [1.0, np.e]}, "w")
    np.testing.assert_allclose(point, [0.0, 1.0])
    assert none is None
    with pytest.raises(ValueError, match="no retained states"):
        log_hyperparameter_summary(burn_in, {}, "w")
    with pytest.raises(ValueError, match="per-class hyperparameters"):
        log_hyperparameter_summary([], [{"w": 1.0}, {"w": 2.0}], "w")


def _record(method, fold, confusion, status="ok"):
    """A fold result record as run_fold writes it (only what the report reads)."""
    counts = np.array(confusion)
    return {"experiment": "exp", "dataset": "d1", "method": method, "label": method.upper(),
            "fold": fold, "status": status, "message": "", "seed": 1, "provenance": {},
            "metrics": {} if status != "ok" else {
                "error": 1 - np.trace(counts) / counts.sum(), "n_test": int(counts.sum()),
                "confusion": confusion}}


CONFUSION_TABLE = {"title": "C", "experiment": "exp", "datasets": {"d1": "Data One"},
                   "metric": "confusion", "spread": "se", "methods": ["em", "mpl"],
                   "published": {"file": "conf.csv", "mean": "rate", "method": "em"}}


def test_confusion_table_pools_the_counts_of_successful_folds_beside_the_published_rates(tmp_path):
    from gpcbench.experiments.aggregate import fold_row
    from gpcbench.experiments.report.cells import (combined_se, confusion_cells,
                                                   published_confusion)
    from gpcbench.experiments.report.formats import runs_line

    em = [[[5, 0], [1, 4]], [[4, 1], [0, 5]], [[5, 0], [2, 3]]]
    records = [_record("mpl", 0, [[5, 0], [0, 5]]), _record("mpl", 1, None, "timeout"),
               *(_record("em", k, c) for k, c in enumerate(em)), _record("knn", 0, [[1, 0], [0, 1]])]
    folds = pd.DataFrame([fold_row(r) for r in records])
    (tmp_path / "conf.csv").write_text("true_class,predicted_class,rate\n"
                                       "a,a,0.93\na,b,0.3\nb,a,0.2\nb,b,0.8\n")
    published = published_confusion(CONFUSION_TABLE, tmp_path)
    cells = confusion_cells(CONFUSION_TABLE, folds, published, {"d1": ["a", "b"]})
    assert list(dict.fromkeys(cells["method"])) == ["em", "mpl"]   # the table's order, no knn
    em_cells = cells[cells["method"] == "em"].set_index(["true_class", "predicted_class"])
    # summed counts: a -> (14, 1), b -> (3, 12); per-fold rates of a -> a: 1, 0.8, 1
    assert em_cells.loc[("a", "a"), "ours"] == pytest.approx(14 / 15)
    assert em_cells.loc[("b", "a"), "ours"] == pytest.approx(3 / 15)
    assert em_cells.loc[("a", "a"), "ours_se"] == pytest.approx(np.std([1, 0.8, 1], ddof=1) / np.sqrt(3))
    assert em_cells.loc[("a", "b"), "pub_mean"] == 0.3
    # a -> b: |1/15 - 0.3| > 2 s.e. (s.e. of 0, 0.2, 0 = 0.067); the others within two s.e.
    assert em_cells["flag"].to_dict() == {("a", "a"): False, ("a", "b"): True,
                                          ("b", "a"): False, ("b", "b"): False}
    mpl = cells[cells["method"] == "mpl"].iloc[0]
    assert (mpl.n_ok, mpl.n_folds, mpl.failures) == (1, 2, "fold 1: timeout")
    assert cells[cells["method"] == "mpl"]["pub_mean"].isna().all()
    # the protocol gives 4 folds: em's 3 are a partial run, so no cell is tested or flagged
    partial = confusion_cells(CONFUSION_TABLE, folds, published, {"d1": ["a", "b"]}, {"d1": 4})
    assert not partial["flag"].any()
    assert all(np.isnan(combined_se(CONFUSION_TABLE, cell)) for cell in partial.itertuples())
    assert runs_line(partial[partial["method"] == "em"].iloc[0]) == (
        "3 of 3 folds (1 of the protocol's 4 not run)")
    assert runs_line(partial[partial["method"] == "mpl"].iloc[0]) == (
        "1 of 2 folds (2 of the protocol's 4 not run; fold 1: timeout)")


def test_confusion_table_files_and_a_fold_without_confusion_named(tmp_path):
    from gpcbench.data.dataset import Dataset, save_dataset
    from gpcbench.experiments.aggregate import fold_row
    from gpcbench.experiments.report.build import write_report

    save_dataset(Dataset(np.zeros((4, 1)), np.array([0, 1, 0, 1]), ["x"], ["continuous"],
                         ["a", "b"]), tmp_path / "d1.npz", tmp_path / "d1.json")
    (tmp_path / "conf.csv").write_text("true_class,predicted_class,rate\na,a,1\na,b,0\n")
    config = {"experiments": {"exp": {"description": "e", "protocol": {"type": "fixed"},
                                      "datasets": {"d1": {}}, "methods": ["em", "mpl"]}},
              "tables": {"conf": CONFUSION_TABLE | {"published": {
                  "file": "conf.csv", "mean": "rate", "method": "em"}}}}
    records = [_record("em", 0, [[3, 1], [0, 4]]), _record("mpl", 0, [[4, 0], [2, 2]])]
    pd.DataFrame([fold_row(r) for r in records]).to_csv(tmp_path / "f.csv", index=False)
    write_report(config, [tmp_path / "f.csv"], tmp_path, tmp_path / "out",
                 only="table:conf", data_paths=[tmp_path / "d1.npz"])
    md = (tmp_path / "out" / "tables" / "conf.md").read_text()
    assert "## EM, Data One: 1 of 1 folds" in md and "## MPL, Data One" in md
    assert "| a | 0.750 ! [1.000] | 0.250 ! [0.000] |" not in md   # one fold: no s.e., no flag
    assert "| a | 0.750 [1.000] | 0.250 [0.000] |" in md
    assert "| b | 0.500 | 0.500 |" in md
    assert "EM: a" in (tmp_path / "out" / "tables" / "conf.tex").read_text()
    records[1]["metrics"].pop("confusion")  # a record from before confusion was recorded
    pd.DataFrame([fold_row(r) for r in records]).to_csv(tmp_path / "f.csv", index=False)
    with pytest.raises(ValueError, match="table 'conf': fold results of mpl on d1 have no "
                                         "confusion matrix"):
        write_report(config, [tmp_path / "f.csv"], tmp_path, tmp_path / "out",
                     only="table:conf", data_paths=[tmp_path / "d1.npz"])
    with pytest.raises(ValueError, match="report needs 'd1': pass it with --data"):
        write_report(config, [tmp_path / "f.csv"], tmp_path, tmp_path / "out", only="table:conf")
    folds = pd.DataFrame([fold_row(r) for r in records]).drop(columns="confusion")
    folds.to_csv(tmp_path / "f.csv", index=False)  # a folds.csv collected before, too
    with pytest.raises(ValueError, match="fold results of em on d1 have no confusion matrix"):
        write_report(config, [tmp_path / "f.csv"], tmp_path, tmp_path / "out",
                     only="table:conf", data_paths=[tmp_path / "d1.npz"])


def test_softmax_refit_at_recorded_hyperparameters_predicts_as_the_fixed_estimator():
    from gpcbench.estimators.laplace_softmax import (
        SoftmaxLaplaceGaussianProcessClassifier,
        softmax_laplace_predict,
    )

    rng = np.random.default_rng(2)
    centres = np.array([[2, 2], [-2, 2], [0, -2]])
    y = np.repeat([0, 1, 2], 15)
    X = centres[y] + rng.normal(size=(45, 2))
    X_new = rng.uniform(-4, 4, size=(300, 2))
    shared = {"theta0": 3.0, "theta1": 0.1, "theta2": 1e-3, "inverse_lengthscale": 0.4}
    estimator = SoftmaxLaplaceGaussianProcessClassifier(
        **shared, hyperparameter_learning="fixed", random_state=5).fit(X, y)
    np.testing.assert_array_equal(softmax_laplace_predict([shared] * 3, X, y, X_new,
                                                          random_state=5),
                                  estimator.predict(X_new))
    # per-class values matter: a near-zero signal variance for class 2 removes its region
    flat = [shared, shared, {**shared, "theta0": 1e-6, "theta1": 1e-6}]
    assert np.mean(softmax_laplace_predict(flat, X, y, X_new, random_state=5) == 2) < \
        np.mean(estimator.predict(X_new) == 2)
    with pytest.raises(ValueError, match="2 sets of hyperparameters for 3 classes"):
        softmax_laplace_predict([shared] * 2, X, y, X_new)


def test_figures_of_a_sampler_and_of_refitted_decision_regions(tmp_path):
    from gpcbench.data.dataset import Dataset, save_dataset
    from gpcbench.experiments.decision_regions import decision_regions
    from gpcbench.experiments.report.build import write_report

    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 12)
    X = np.array([[2, 2], [-2, 2], [0, -2]])[y] + rng.normal(size=(36, 2))
    save_dataset(Dataset(X, y, ["x1", "x2"], ["continuous"] * 2, ["p", "q", "r"]),
                 tmp_path / "mix.npz", tmp_path / "mix.json")
    save_dataset(Dataset(np.column_stack([X, X[:, 0]]), y, ["x1", "x2", "x3"],
                         ["continuous"] * 3, ["p", "q", "r"]), tmp_path / "mix3.npz",
                 tmp_path / "mix3.json")
    split = {"folds": [{"train": list(range(0, 36, 2)), "test": list(range(1, 36, 2))}]}
    for entry in ("mix", "mix3"):
        (tmp_path / "exp").mkdir(exist_ok=True)
        (tmp_path / "exp" / f"{entry}.json").write_text(json.dumps(split))
    hyper = [{"theta0": 3.0, "theta1": 0.1, "theta2": 1e-3, "inverse_lengthscale": 0.4}] * 3
    trace = [{"phase": "retained", "hyperparameters": {"inverse_lengthscale": [0.5 + k, 1.0]}}
             for k in range(3)]
    folds = pd.concat([
        _folds([0.1], "em", "EM").assign(dataset=entry, hyperparameters=json.dumps(hyper),
                                         trace="[]", seed=3) for entry in ("mix", "mix3")]
        + [_folds([0.2], "hmc", "HMC").assign(
            dataset="mix", trace=json.dumps(trace), seed=3,
            hyperparameters=json.dumps({"inverse_lengthscale": [1.5, 1.0]}))])
    folds.assign(experiment="exp").to_csv(tmp_path / "f.csv", index=False)
    experiment = {"description": "e", "protocol": {"type": "fixed"}, "standardize": True,
                  "datasets": {"mix": {}, "mix3": {}}, "methods": ["em", "hmc"]}
    config = {"experiments": {"exp": experiment}, "figures": {
        "regions": {"type": "decision_regions", "title": "R", "experiment": "exp",
                    "methods": ["em"], "datasets": ["mix"]},
        "regions3": {"type": "decision_regions", "title": "R", "experiment": "exp",
                     "methods": ["em"], "datasets": ["mix3"]},
        "ard": {"type": "hmc_relevance", "title": "A", "experiment": "exp",
                "methods": ["hmc"], "datasets": ["mix"]}}}
    inputs = dict(data_meta_paths=[tmp_path / "mix.json"], data_paths=[
        tmp_path / "mix.npz", tmp_path / "mix3.npz"], split_paths=[
        tmp_path / "exp" / "mix.json", tmp_path / "exp" / "mix3.json"],
        refit_regions=decision_regions)
    for name in ("regions", "ard"):
        write_report(config, [tmp_path / "f.csv"], tmp_path, tmp_path / "out",
                     only=f"figure:{name}", **inputs)
        assert (tmp_path / "out" / "figures" / f"{name}.png").stat().st_size > 1000
    with pytest.raises(ValueError, match="figure 'regions3': decision regions need 2 input "
                                         "features; mix3 has 3"):
        write_report(config, [tmp_path / "f.csv"], tmp_path, tmp_path / "out",
                     only="figure:regions3", **inputs)


def test_a_cell_from_fewer_folds_than_the_protocol_says_how_many(tmp_path):
    (tmp_path / "pub.csv").write_text("dataset,method,error_mean,error_se\nData One,M,0.1,0.01\n")
    folds = pd.concat([_folds([0.1, 0.2, 0.3]), _folds([0.1, 0.2, 0.3, 0.2], "k", "K")])
    cells = table_cells(TABLE, folds, published_cells(TABLE, tmp_path), {"d1": 4})
    wide = wide_table(TABLE, cells)
    assert wide.loc["M", "Data One"] == "0.2000 ± 0.0577 (3/4) [0.1000 ± 0.0100]"
    assert wide.loc["K †", "Data One"] == "0.2000 ± 0.0408"  # K: not in the paper
    assert "(" not in wide_table(TABLE, table_cells(TABLE, folds, published_cells(TABLE, tmp_path))
                                 ).loc["M", "Data One"]


def test_summary_gives_samplers_median_rhat_bulk_and_tail_ess_and_brooks_burn_in_counts():
    def diagnostics(rhat_u, ess_g, burn):
        quantity = {"rhat": 1.0, "ess_bulk": 100.0, "ess_tail": 80.0, "brooks_burn_in": 0.0}
        return json.dumps({"u": {**quantity, "rhat": rhat_u},
                           "g": {**quantity, "ess_bulk": ess_g, "ess_tail": ess_g / 2},
                           "eta": quantity, "n_gamma": quantity, "brooks_burn_in": burn,
                           "probe_probability": {"max_rhat": 1.2, "min_ess_bulk": 40.0,
                                                 "min_ess_tail": 30.0}})

    sampler = _folds([0.1, 0.2, 0.3, 0.4], "s", "S", status=["ok", "ok", "ok", "failed"])
    sampler["diagnostics"] = [diagnostics(1.0, 10.0, 400.0), diagnostics(1.3, 30.0, None),
                              diagnostics(1.1, 20.0, 800.0), diagnostics(9.0, 1.0, 1.0)]
    other = _folds([0.1, 0.2], "k", "K").assign(diagnostics="null")
    summary = summarise(pd.concat([sampler, other], ignore_index=True)).set_index("method")
    s = summary.loc["s"]
    assert (s["rhat_u"], s["ess_bulk_g"], s["ess_tail_g"], s["ess_tail_eta"]) == (
        1.1, 20.0, 10.0, 80.0)
    assert (s["rhat_probe"], s["ess_bulk_probe"], s["ess_tail_probe"]) == (1.2, 40.0, 30.0)
    assert s["burn_in_mean"] == 600.0 and s["burn_in_undefined"] == 1
    assert summary.loc["k", ["rhat_u", "burn_in_mean", "burn_in_undefined"]].isna().all()


def test_summary_leaves_out_the_ess_of_runs_recorded_before_bulk_and_tail_ess(tmp_path):
    """A fold result with the older ``ess`` (raw unsplit draws) and no ``ess_bulk`` /
    ``ess_tail``: its R-hat is shown, its ESS is not (its draws are not in the ledger)."""
    legacy = _folds([0.1, 0.2], "s", "S").assign(diagnostics=json.dumps(
        {"u": {"rhat": 1.05, "ess": 50.0}, "probe_probability": {"max_rhat": 1.2,
                                                                  "min_ess": 40.0}}))
    s = summarise(legacy).set_index("method").loc["s"]
    assert (s["rhat_u"], s["rhat_probe"]) == (1.05, 1.2)
    assert s[[c for c in SAMPLER_DIAGNOSTICS if c.startswith("ess_")]].isna().all()
    assert "ess_bulk_u | ess_bulk_g" in _summary_markdown(legacy, tmp_path)


def _summary_markdown(folds, tmp_path):
    from gpcbench.experiments.report.formats import write_summary

    write_summary("exp", {"description": "d"}, summarise(folds), tmp_path)
    return (tmp_path / "tables" / "exp_summary.md").read_text()


def test_summary_shows_converged_fraction_optimiser_warnings_and_non_finite_nlpd(tmp_path):
    """A fold that warned (L-BFGS ABNORMAL) and one with NLPD inf are counted per cell."""
    folds = _folds([0.5, 0.1, 0.2]).assign(
        converged=[False, True, True], nlpd=[np.inf, 0.3, 0.4],
        nonfinite_nlpd=[True, False, False],
        convergence_warnings=['["ConvergenceWarning: lbfgs ABNORMAL"]', "[]", "[]"])
    table = _summary_markdown(folds, tmp_path).splitlines()
    header, row = ([c.strip() for c in next(line for line in table if start in line).split("|")]
                   for start in ("| dataset |", "| M |"))
    shown = dict(zip(header, row))
    assert shown["converged_fraction"] == str(round(2 / 3, 4))
    assert (shown["n_optimiser_warnings"], shown["n_nonfinite_nlpd"]) == ("1", "1")
    assert shown["nlpd_mean"] == "inf"


def test_tables_and_summaries_are_built_without_pandas_warnings(tmp_path):
    """No column of numbers is filled with text (pandas warns it will raise)."""
    sampler = _folds([0.1, 0.2], "s", "S").assign(diagnostics=json.dumps(
        {"u": {"rhat": 1.1, "ess": 50.0}, "brooks_burn_in": None}))
    folds = pd.concat([_folds([0.1]), sampler], ignore_index=True)  # n = 1: no s.e.
    (tmp_path / "pub.csv").write_text("dataset,method,error_mean,error_se\nData One,P,0.1,\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wide = wide_table(TABLE, table_cells(TABLE, folds, published_cells(TABLE, tmp_path)))
        text = _summary_markdown(folds, tmp_path)
    assert wide.loc["P", "Data One"] == "— [0.1000]"
    assert "| d1 | M | 1 | 1 | 0.1 | — |" in text and "| d1 | S | 1.1 | — |" in text


def test_fidelity_counts_values_testable_cells_and_agreement_apart_from_stand_ins(tmp_path):
    """Two data sets, one a stand-in; per data set M is within 2 combined s.e. (1.9), K beyond
    (2.1), and a published-only row has no value: counted by hand."""
    from gpcbench.experiments.report.fidelity import fidelity, judged_cells

    config, folds, meta = _two_data_sets(tmp_path)
    row = fidelity(judged_cells(config, folds, tmp_path, meta)).iloc[0]
    assert (row.paper, row.table, row.published, row.with_value) == ("p", "t", 6, 4)
    assert (row.testable, row.within_2se) == (4, 2)
    assert (row.original_testable, row.original_within_2se) == (2, 1)
    assert (row.accuracy, row.original_without_value) == (True, 1)


def _two_data_sets(tmp_path):
    """Config, folds and data set metadata of the fidelity tests: M within 2 combined s.e.
    (1.9) and K beyond (2.1) on an original data set (d1) and on a stand-in (d2)."""
    errors = np.array([0.10, 0.15, 0.05, 0.10, 0.10])
    se = errors.std(ddof=1) / np.sqrt(5)
    near, far = 0.10 + 1.9 * np.hypot(se, 0.01), 0.10 + 2.1 * np.hypot(se, 0.01)
    folds = pd.concat([_folds(errors).assign(dataset=d) for d in ("d1", "d2")]
                      + [_folds(errors, "k", "K").assign(dataset=d) for d in ("d1", "d2")])
    (tmp_path / "pub.csv").write_text("dataset,method,error_mean,error_se\n" + "".join(
        f"{name},M,{near},0.01\n{name},K,{far},0.01\n{name},Only published,0.2,0.02\n"
        for name in ("Data One", "Data Two")))
    table = {**TABLE, "datasets": {"d1": "Data One", "d2": "Data Two"}}
    config = {"tables": {"t": table}, "experiments": {"exp": {
        "paper": "p", "protocol": {"type": "kfold", "folds": 5}, "datasets": {"d1": {}, "d2": {}}}}}
    return config, folds, {"d2": {"substitute": "a stand-in"}}


def test_beyond_two_se_lists_flagged_original_cells_with_their_recorded_cause(tmp_path):
    """Of the four testable cells only K on the original data set is beyond two s.e.: listed
    at -2.1 s.e. with its entry's cause; an entry naming M (within) is reported as obsolete;
    without an entry K's cause is empty and the section counts it as unrecorded."""
    from gpcbench.experiments.report.fidelity import (beyond_two_se, beyond_two_se_lines,
                                                      judged_cells)

    config, folds, meta = _two_data_sets(tmp_path)
    cells = judged_cells(config, folds, tmp_path, meta)
    causes = {"t": [
        {"cause": "data", "cells": {"K": ["Data One"]}, "why": "a different pool"},
        {"cause": "published", "cells": {"M": ["Data One"]}, "why": "an old reason"}]}
    judged, obsolete = beyond_two_se(cells, causes)
    assert judged[["row", "column", "cause", "why"]].values.tolist() == [
        ["K", "Data One", "data", "a different pool"]]
    assert judged["distance"].iloc[0] == pytest.approx(-2.1)
    assert obsolete == ["t: M / Data One"]
    lines = beyond_two_se_lines(judged, obsolete)
    assert "| data | 1 | our data or partitions differ from the paper's, measured |" in lines
    assert any(line.startswith("| [t](tables/t.md) | K / Data One: 0.1 vs. ")
               and line.endswith("(-2.1) | data | a different pool |") for line in lines)
    assert any(line.startswith("Recorded causes") and "t: M / Data One" in line for line in lines)
    judged, obsolete = beyond_two_se(cells, {})
    assert judged["cause"].tolist() == [""] and obsolete == []
    assert "| no cause recorded | 1 | |" in beyond_two_se_lines(judged, obsolete)
    nothing = beyond_two_se_lines(judged.iloc[:0], [])
    assert nothing[1].startswith("No accuracy cell") and len(nothing) == 3


def test_fidelity_counts_confusion_rates_as_accuracy_cells_and_sums_them_per_paper(tmp_path):
    """The confusion table of the test above (a -> b flagged, three within) is counted with its
    class names from the data set's metadata; a timing table is not an accuracy table."""
    from gpcbench.experiments.aggregate import fold_row
    from gpcbench.experiments.report.fidelity import accuracy_lines, fidelity, judged_cells

    em = [[[5, 0], [1, 4]], [[4, 1], [0, 5]], [[5, 0], [2, 3]]]
    folds = pd.DataFrame([fold_row(_record("em", k, c)) for k, c in enumerate(em)])
    folds["time_s"] = 1.0
    (tmp_path / "conf.csv").write_text("true_class,predicted_class,rate\n"
                                       "a,a,0.93\na,b,0.3\nb,a,0.2\nb,b,0.8\n")
    (tmp_path / "time.csv").write_text("method,time_s\nEM,2.0\n")
    timing = {"title": "T", "experiment": "exp", "datasets": {"d1": "Data One"},
              "metric": "time_s", "spread": "none", "published": {"file": "time.csv",
                                                                  "mean": "time_s"}}
    config = {"tables": {"c": CONFUSION_TABLE, "t": timing}, "experiments": {"exp": {
        "paper": "p", "protocol": {"type": "kfold", "folds": 3}, "datasets": {"d1": {}}}}}
    summary = fidelity(judged_cells(config, folds, tmp_path,
                                    {"d1": {"class_counts": {"a": 15, "b": 15}}}))
    confusion = summary.set_index("table").loc["c"]
    assert (confusion.accuracy, confusion.published, confusion.testable) == (True, 4, 4)
    assert (confusion.within_2se, confusion.original_without_value) == (3, 0)
    assert not summary.set_index("table").loc["t", "accuracy"]
    assert "| p | 3 of 4 (75 %) | 0 |" in accuracy_lines(summary)
    assert "| **all papers** | 3 of 4 (75 %) | 0 |" in accuracy_lines(summary)
    nothing = fidelity(judged_cells({"tables": {}, "experiments": config["experiments"]}, folds,
                                    tmp_path, {}))
    assert "| **all papers** | none | 0 |" in accuracy_lines(nothing)  # no published table


def test_the_committed_index_gives_a_cause_for_every_accuracy_cell_beyond_two_se(repo):
    """The committed reports: the causes per kind add up to the cells beyond two s.e., none is
    unrecorded, and no recorded cause names a cell that is within two s.e."""
    index = (repo / "reports" / "index.md").read_text()
    section = index.split("## Accuracy cells beyond two standard errors")[1].split("\n## ")[0]
    total = int(re.search(r"^(\d+) accuracy cells on original data", section, re.M)[1])
    per_cause = re.findall(r"^\| ([a-z]+) \| (\d+) \| ", section, re.M)
    assert [cause for cause, _ in per_cause] == list(CAUSES)
    assert sum(int(n) for _, n in per_cause) == total > 0
    assert "no cause recorded" not in section and "Recorded causes of cells" not in section


@pytest.mark.parametrize("table, runs, expected", [
    ({"metric": "error", "spread": "se"}, "10 folds",
     "**Unit**: error rate, the fraction of test points misclassified. **Cell**: ours, mean ± "
     "s.e. over 10 folds [published mean ± s.e.]."),
    ({"metric": "error_percent", "spread": "sd", "published": {"file": "p.csv", "n": 20}},
     "20 random partitions",
     "**Unit**: test error in percent. **Cell**: ours, mean ± s.d. over 20 random partitions "
     "[published mean ± s.d. over the paper's 20 partitions, which the two-s.e. test reads as "
     "an s.e. of s.d. / √20]."),
    ({"metric": "errors", "spread": "none"}, "",
     "**Unit**: number of test errors. **Cell**: ours, on the fixed training / test split "
     "[published value]."),
    ({"metric": "diagnostic:n_active.most_frequency", "spread": "none"}, "20 random partitions",
     "**Unit**: sweeps. **Cell**: ours, mean over 20 random partitions [published value]."),
])
def test_a_table_header_states_its_unit_and_spread(table, runs, expected):
    from gpcbench.experiments.report.formats import table_header

    assert table_header(table, runs) == expected


def test_runs_are_named_by_the_protocol_of_the_tables_data_sets():
    from gpcbench.experiments.report.build import runs_phrase

    config = {"experiments": {"e": {"protocol": {"type": "kfold", "folds": 10}, "datasets": {
        "a": {}, "b": {"protocol": {"type": "random", "partitions": 20}}, "c": {}}}}}
    assert runs_phrase(config, {"experiment": "e", "datasets": {"a": "A", "c": "C"}}) == "10 folds"
    assert runs_phrase(config, {"experiment": "e", "datasets": {"a": "A", "b": "B"}}) == (
        "10 folds or 20 random partitions")
    fixed = {"experiments": {"e": {"protocol": {"type": "per_class", "train_per_class": 50},
                                   "datasets": {"a": {}, "b": {"protocol": {"type": "kfold"}}}}}}
    assert runs_phrase(fixed, {"experiment": "e", "datasets": {"a": "A"}}) == ""
    assert runs_phrase(fixed, {"experiment": "e", "datasets": {"a": "A", "b": "B"}}) == (
        "one fixed split or 10 folds")


def test_the_index_opens_with_a_line_per_paper_counting_accuracy_cells_only():
    """Timing and diagnostic tables stay out of a paper's count; a paper without an entry in
    papers.yaml is named by its key."""
    from gpcbench.experiments.report.fidelity import COLUMNS, paper_lines

    def row(paper, table, accuracy, testable, within, allowed):
        return dict.fromkeys(COLUMNS, 0) | {
            "paper": paper, "table": table, "accuracy": accuracy, "original_testable": testable,
            "original_within_2se": within, "original_within_2se_allowed": allowed}

    summary = pd.DataFrame([row("z", "z_err", True, 10, 4, 6), row("z", "z_time", False, 9, 0, 0),
                            row("k", "k_err", True, 5, 5, 5), row("p", "p_err", True, 0, 0, 0),
                            row("t", "t_time", False, 3, 1, 1)], columns=COLUMNS)
    papers = {"z": {"citation": "Z & Y (2011)", "title": "Kernels", "venue": "JMLR 12"},
              "r": {"citation": "R (2014)", "title": "Messages", "venue": "arXiv"}}
    lines = paper_lines(summary, papers)
    assert lines[1:] == ["- **Z & Y (2011)**, *Kernels*, JMLR 12: 4 of 10 (40 %); 6 under the "
                         "allowed reading",
                         "- **k**: 5 of 5 (100 %); 5 under the allowed reading",
                         "- **p**: no cell tested yet (none holds all of its protocol's runs)",
                         "- **R (2014)**, *Messages*, arXiv: no published accuracy cell to "
                         "compare", ""]
