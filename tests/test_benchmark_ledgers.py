"""benchmarks/fold_ledger.py: the ledger a run under way sees, as the pipeline's collect job
would write it from the same files (one fold's result file over its ledger row, fold by fold)."""

import json
import sys
from pathlib import Path

from gpcbench.experiments.aggregate import collect_folds
from gpcbench.experiments.ledger import ledger_path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from fold_ledger import fold_ledger  # noqa: E402


def _record(method, fold, error, cpu_s):
    return {"experiment": "toy", "dataset": "crabs", "method": method, "label": method,
            "fold": fold, "status": "ok", "message": "", "seed": 1,
            "metrics": {"error": error}, "timings": {"cpu_s": cpu_s},
            "options": {"k": fold}, "provenance": {"code_hash": "h", "git_commit": "abc"}}


def test_result_files_replace_their_folds_rows_and_the_rest_is_the_ledger(tmp_path):
    old = tmp_path / "old"
    old.mkdir()
    records = {("lda", 0): (0.1, 2.0), ("lda", 1): (0.2, 3.0), ("1nn", 0): (0.3, 4.0)}
    paths = []
    for (method, fold), (error, cpu) in records.items():
        paths.append(old / f"{method}{fold}.json")
        paths[-1].write_text(json.dumps(_record(method, fold, error, cpu)))
    ledger = ledger_path("toy", tmp_path)
    ledger.parent.mkdir(parents=True)
    collect_folds(paths, tmp_path / "folds.csv", ledger)
    running = tmp_path / "results" / "toy" / "crabs" / "lda"
    running.mkdir(parents=True)
    (running / "fold1.json").write_text(json.dumps(_record("lda", 1, 0.25, 5.0)))

    columns = ["dataset", "method", "fold", "error", "cpu_s", "options"]
    frame = fold_ledger(tmp_path, "toy", columns).sort_values(["method", "fold"])
    assert list(frame.columns) == columns
    assert frame[["method", "fold", "error", "cpu_s"]].values.tolist() == [
        ["1nn", 0, 0.3, 4.0], ["lda", 0, 0.1, 2.0], ["lda", 1, 0.25, 5.0]]
    # the options read alike from the ledger and from a result file
    assert [json.loads(text) for text in frame["options"]] == [{"k": 0}, {"k": 0}, {"k": 1}]


def test_a_tree_without_ledger_or_results_has_no_folds(tmp_path):
    assert fold_ledger(tmp_path, "toy", ["dataset", "method", "fold"]).empty
