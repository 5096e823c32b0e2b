"""Reusing the fold ledger: each row gives back the record it was flattened from, and a fold
job writes the ledger's result instead of fitting only when the same code made it from the
same inputs (a fresh clone resumes the protocol; anything changed runs again)."""

import gzip
import json

import pandas as pd
import pytest
from test_run_fold import fold_inputs  # noqa: F401 - the scripted methods and toy data

from gpcbench.cli import main
from gpcbench.experiments.aggregate import FOLD_COLUMNS, collect_folds, fold_row
from gpcbench.experiments.reuse import read_ledger_rows, record_from_row, reusable_record
from gpcbench.provenance import RUN_COMMIT_VARIABLE
from gpcbench.seeds import derive_seed

METHODS = ("scripted-ok", "scripted-sampler", "scripted-raise", "scripted-hang")


def _run(directory, method, *, code_hash="h1", options=None, seed=1, ledger=None, name=None,
         standardize=False):
    """``gpcbench run-fold`` as the pipeline calls it; the record it wrote."""
    output = directory / f"{name or method}.json"
    args = ["run-fold", "--in-process", "--experiment", "e", "--entry", "toy", "--method", method,
            "--fold", "0",
            "--data", str(directory / "toy.npz"), "--splits", str(directory / "splits.json"),
            "--output", str(output), "--options", json.dumps(options or {}),
            "--seed", str(seed), "--time-limit", "1", "--code-hash", code_hash]
    args += ["--standardize"] if standardize else []
    assert main(args + (["--reuse-ledger", str(ledger)] if ledger else [])) == 0
    return json.loads(output.read_text())


@pytest.fixture
def ledger(fold_inputs, monkeypatch):  # noqa: F811
    """A ledger of one run of each scripted method at code hash h1, from clean commit abc."""
    monkeypatch.setenv(RUN_COMMIT_VARIABLE, "abc")
    paths = []
    for method in METHODS:
        _run(fold_inputs, method)
        paths.append(fold_inputs / f"{method}.json")
    path = fold_inputs / "e.csv.gz"
    collect_folds(paths, fold_inputs / "folds.csv", ledger=path)
    return fold_inputs, path


def test_every_ledger_row_gives_back_the_row_it_was_made_from(ledger):
    directory, path = ledger
    rows = read_ledger_rows(path)
    assert [row["method"] for row in rows] == list(METHODS)
    text = pd.DataFrame([fold_row(record_from_row(row)) for row in rows],
                        columns=FOLD_COLUMNS).to_csv(index=False)
    assert text == gzip.decompress(path.read_bytes()).decode()
    sampler = record_from_row(rows[1])
    written = json.loads((directory / "scripted-sampler.json").read_text())
    for part in ("metrics", "timings", "hyperparameters", "options"):
        assert sampler[part] == written[part]
    assert sampler["convergence"]["diagnostics"] == written["convergence"]["diagnostics"]


def test_hash_like_text_stays_text(tmp_path):
    record = json.loads(json.dumps(_record_like(code_hash="12345e67", commit="1e5")))
    path = tmp_path / "ledger.csv.gz"
    (tmp_path / "r.json").write_text(json.dumps(record))
    collect_folds([tmp_path / "r.json"], tmp_path / "folds.csv", ledger=path)
    (row,) = read_ledger_rows(path)
    assert row["code_hash"] == "12345e67" and row["git_commit"] == "1e5"
    assert row["n_iter"] == [27, 31]


def _record_like(code_hash, commit):
    return {"experiment": "e", "dataset": "toy", "method": "m", "label": "M", "fold": 0,
            "seed": 3, "status": "ok", "message": "", "n_train": 20,
            "metrics": {"error": 0.1, "n_test": 20, "confusion": [[1, 0], [0, 1]]},
            "convergence": {"converged": True, "n_iter": [27, 31]},
            "provenance": {"data_sha256": "0", "code_hash": code_hash, "git_commit": commit}}


def test_a_fold_made_by_the_same_code_from_the_same_inputs_is_reused(ledger):
    directory, path = ledger
    before = {m: json.loads((directory / f"{m}.json").read_text()) for m in METHODS}
    for method in ("scripted-ok", "scripted-sampler", "scripted-raise"):
        again = _run(directory, method, ledger=path, name=f"{method}-again")
        assert again["provenance"]["reused_from_ledger"] == str(path)
        assert again["provenance"]["git_commit"] == "abc"
        assert again["status"] == before[method]["status"]
        # a refit would measure other times; the ledger's are copied to the last digit
        assert again.get("timings") == before[method].get("timings")
        assert fold_row(again) == fold_row(before[method])


@pytest.mark.parametrize("change", [
    {"code_hash": "h2"}, {"options": {"k": 3}}, {"seed": 2}, {"method": "scripted-hang"},
    {"standardize": True},
])
def test_a_fold_whose_code_options_seed_or_status_differ_runs_again(ledger, change):
    directory, path = ledger
    method = change.pop("method", "scripted-ok")
    record = _run(directory, method, ledger=path, name="again", **change)
    assert "reused_from_ledger" not in record["provenance"]


def test_a_fold_on_other_data_runs_again_and_one_from_a_dirty_tree_is_reused(ledger):
    """Reuse is judged by content: a row made from a modified work tree by the same code hash
    is the same code's result (the commit it records stays for the record)."""
    from gpcbench.experiments.reuse import current_folds

    directory, path = ledger
    kwargs = dict(experiment="e", entry="toy", method="scripted-ok", fold=0, options={},
                  seed=derive_seed(1, "e", "toy", "scripted-ok", 0), code_hash="h1",
                  n_train=20, n_test=20, upstream={})
    sha = read_ledger_rows(path)[0]["data_sha256"]
    assert reusable_record(path, data_sha256=sha, **kwargs) is not None
    assert reusable_record(path, data_sha256="other", **kwargs) is None
    assert reusable_record(path, data_sha256=sha, **{**kwargs, "n_train": 19}) is None
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame["git_commit"] = "abc+dirty"
    frame["dirty"] = "True"
    dirty = directory / "dirty.csv.gz"
    dirty.write_bytes(gzip.compress(frame.to_csv(index=False).encode()))
    reused = reusable_record(dirty, data_sha256=sha, **kwargs)
    assert reused is not None and reused["provenance"]["git_commit"] == "abc+dirty"
    assert reusable_record(dirty, data_sha256=sha, **{**kwargs, "code_hash": "h2"}) is None
    assert ("toy", "scripted-ok", 0) in current_folds(dirty, {"scripted-ok": "h1"})


def test_a_fold_reads_no_upstream_result_that_was_run_anew(ledger):
    directory, path = ledger
    sha = read_ledger_rows(path)[0]["data_sha256"]
    kwargs = dict(experiment="e", entry="toy", method="scripted-ok", fold=0, options={},
                  seed=derive_seed(1, "e", "toy", "scripted-ok", 0), code_hash="h1",
                  data_sha256=sha, n_train=20, n_test=20)
    fresh = {"status": "ok", "provenance": {"git_commit": "abc"}}
    reused = {"status": "ok", "provenance": {"git_commit": "abc", "reused_from_ledger": "x"}}
    assert reusable_record(path, upstream={"m/fold0": reused}, **kwargs) is not None
    assert reusable_record(path, upstream={"m/fold0": fresh}, **kwargs) is None


def test_a_partial_report_counts_only_rows_with_the_configs_options_as_current(ledger):
    """``current_folds`` (the partial report's reusable folds): the code hash and, given the
    config's options per (entry, method), those options too."""
    from gpcbench.experiments.reuse import current_folds

    _, path = ledger
    hashes = {method: "h1" for method in METHODS}
    every = {("toy", method, 0) for method in METHODS}
    reproducible = current_folds(path, hashes)
    assert ("toy", "scripted-sampler", 0) in reproducible and reproducible <= every
    assert current_folds(path, hashes, lambda entry, method: {}) == reproducible
    assert current_folds(path, hashes, None, lambda entry, method: False) == reproducible  # as run
    assert current_folds(path, hashes, None, lambda entry, method: method != "scripted-ok") == {
        ("toy", "scripted-ok", 0)}
    changed = current_folds(path, hashes, lambda entry, method: (
        {"n_chains": 1} if method == "scripted-sampler" else {}))
    assert changed == reproducible - {("toy", "scripted-sampler", 0)}
