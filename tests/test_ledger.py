"""The committed fold ledger: reproducible gzip of folds.csv, restored byte for byte; fold
states against the code hashes at HEAD, the config and the data; ``gpcbench status``; a
damaged ledger named in one line; a collect job keeps the rows it does not replace."""

import gzip
import json

import pandas as pd
import pytest
import yaml

from gpcbench.cli import main
from gpcbench.experiments.aggregate import collect_folds
from gpcbench.experiments.ledger import (fold_states, ledger_path, restore_folds, state_counts,
                                         write_ledger)
from gpcbench.experiments.reuse import DamagedLedgerError, check_ledger
from gpcbench.seeds import derive_seed

CONFIG = {"seed": 5, "experiments": {"toy": {"protocol": {"type": "kfold", "folds": 2},
                                             "datasets": {"crabs": {}}, "methods": ["lda", "1nn"]}}}


def folds_frame():
    methods, folds = ["lda", "lda", "1nn"], [0, 1, 0]
    return pd.DataFrame({
        "experiment": "toy", "dataset": ["crabs"] * 3, "method": methods, "fold": folds,
        "code_hash": ["head-lda", "head-lda", "old"],
        "git_commit": ["abc", "abc+dirty", "abc"], "cpu_s": [2.0, 3.0, 5.0],
        "options": ["{}"] * 3, "data_sha256": ["d" * 64] * 3,
        "seed": [derive_seed(5, "toy", "crabs", m, k) for m, k in zip(methods, folds)]})


def test_the_ledger_is_reproducible_and_restores_the_same_bytes(tmp_path):
    text = "experiment,fold\ntoy,0\ntoy,1\n"
    write_ledger(text, tmp_path / "a.csv.gz")
    write_ledger(text, tmp_path / "b.csv.gz")
    assert (tmp_path / "a.csv.gz").read_bytes() == (tmp_path / "b.csv.gz").read_bytes()
    assert gzip.decompress((tmp_path / "a.csv.gz").read_bytes()).decode() == text
    restore_folds(tmp_path / "a.csv.gz", tmp_path / "folds.csv")
    assert (tmp_path / "folds.csv").read_text() == text


def test_fold_states_judge_the_code_hash_not_the_commit():
    """A fold made from a modified (``+dirty``) work tree by the code hash at HEAD is current
    (that code was committed unchanged); one of another hash is stale."""
    states = fold_states(CONFIG, "toy", folds_frame(), {"lda": "head-lda", "1nn": "head-1nn"})
    assert list(states["state"]) == ["current", "current", "stale", "missing"]
    counts = state_counts(states, ["method"]).set_index("method")
    assert counts.loc["lda", ["current", "stale", "missing"]].tolist() == [2, 0, 0]
    assert counts.loc["1nn", ["current", "stale", "missing"]].tolist() == [0, 1, 1]
    assert counts.loc["1nn", "stale_cpu_s"] == 5.0
    assert counts.loc["1nn", "missing_cpu_s_est"] == 5.0


def test_folds_of_another_seed_or_other_data_are_stale():
    """The job's seed derives from the config's; the data checksum is judged where known."""
    hashes = {"lda": "head-lda", "1nn": "old"}
    assert list(fold_states({**CONFIG, "seed": 6}, "toy", folds_frame(), hashes)["state"])[:3] == [
        "stale"] * 3
    assert list(fold_states(CONFIG, "toy", folds_frame(), hashes,
                            {"crabs": "e" * 64})["state"])[:3] == ["stale"] * 3
    assert list(fold_states(CONFIG, "toy", folds_frame(), hashes,
                            {"crabs": "d" * 64, "iris": "e" * 64})["state"])[:3] == ["current"] * 3


def test_folds_run_with_other_options_than_the_configs_are_stale():
    """A config change of a method's options (top level or per entry) makes its folds stale,
    as it makes Snakemake rerun them; the hash alone would call them current."""
    config = {**CONFIG, "methods": {"lda": {"shrinkage": 0.5}}}
    folds = folds_frame().assign(code_hash=["head-lda", "head-lda", "head-1nn"])
    hashes = {"lda": "head-lda", "1nn": "head-1nn"}
    assert list(fold_states(CONFIG, "toy", folds, hashes)["state"]) == [
        "current", "current", "current", "missing"]
    assert list(fold_states(config, "toy", folds, hashes)["state"]) == [
        "stale", "stale", "current", "missing"]
    folds.loc[0, "options"] = '{"shrinkage": 0.5}'
    assert list(fold_states(config, "toy", folds, hashes)["state"])[:2] == ["current", "stale"]
    entry = {**CONFIG, "experiments": {"toy": {
        **CONFIG["experiments"]["toy"], "datasets": {"crabs": {"options": {"1nn": {"p": 1}}}}}}}
    assert list(fold_states(entry, "toy", folds, hashes)["state"])[2] == "stale"


def test_folds_standardised_otherwise_than_the_config_says_are_stale():
    """``raw_input_methods`` and an entry's ``standardize`` change what a method's jobs see, as
    an option change does; a ledger from before the flag was recorded counts as following the
    experiment's."""
    raw = {**CONFIG, "experiments": {"toy": {**CONFIG["experiments"]["toy"],
                                             "raw_input_methods": ["1nn"]}}}
    folds = folds_frame().assign(code_hash=["head-lda", "head-lda", "head-1nn"])
    hashes = {"lda": "head-lda", "1nn": "head-1nn"}
    assert list(fold_states(raw, "toy", folds, hashes)["state"])[:3] == ["current"] * 2 + ["stale"]
    folds["standardized"] = [True, False, False]
    assert list(fold_states(raw, "toy", folds, hashes)["state"])[:3] == [
        "current", "stale", "current"]
    assert list(fold_states(CONFIG, "toy", folds, hashes)["state"])[:3] == [
        "current", "stale", "stale"]
    entry_raw = {**CONFIG, "experiments": {"toy": {**CONFIG["experiments"]["toy"],
                                                   "datasets": {"crabs": {"standardize": False}}}}}
    assert list(fold_states(entry_raw, "toy", folds, hashes)["state"])[:3] == [
        "stale", "current", "current"]


def test_status_prints_counts_per_experiment_and_method(tmp_path, capsys):
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    write_ledger(folds_frame().to_csv(index=False), ledger_path("toy", tmp_path))
    assert main(["status", "--config", str(config), "--root", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:5] == ["experiment", "method", "current", "stale", "missing"]
    assert lines[1].split()[:5] == ["toy", "lda", "0", "2", "0"]  # hash differs from HEAD
    assert lines[-1].split()[:4] == ["total", "0", "3", "1"]


def test_status_names_a_damaged_ledger_in_one_line(tmp_path, capsys):
    """A ledger cut short (its first bytes only) or not a ledger: one line naming it and how
    to restore it, exit 1; check_ledger says the same of the whole file only."""
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    path = ledger_path("toy", tmp_path)
    write_ledger(folds_frame().to_csv(index=False) * 40, path)
    check_ledger(path)
    path.write_bytes(path.read_bytes()[:-20])
    assert main(["status", "--config", str(config), "--root", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (
        f"gpcbench status: error: {path}: cannot read the fold ledger (Compressed file ended "
        f"before the end-of-stream marker was reached); restore it with "
        f"'git checkout -- {path}'\n")
    write_ledger("a,b\n1,2\n", path)
    with pytest.raises(DamagedLedgerError, match=r"x\.csv\.gz: cannot read the fold ledger "
                                                 r"\(no column 'experiment'\); restore"):
        check_ledger(path, "x.csv.gz")


def test_status_judges_the_data_built_under_the_workdir(tmp_path, capsys):
    from gpcbench.experiments.registry import method_code_hash

    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(CONFIG))
    folds = folds_frame()
    folds["code_hash"] = folds["method"].map(method_code_hash)
    write_ledger(folds.to_csv(index=False), ledger_path("toy", tmp_path))
    (tmp_path / "data" / "processed").mkdir(parents=True)
    meta = tmp_path / "data" / "processed" / "crabs.json"
    for sha, current in (("d" * 64, "3"), ("e" * 64, "0")):
        meta.write_text(json.dumps({"sha256": sha}))
        assert main(["status", "--config", str(config), "--root", str(tmp_path)]) == 0
        assert capsys.readouterr().out.splitlines()[-1].split()[1] == current


def _record(method, fold, error):
    return {"experiment": "toy", "dataset": "crabs", "method": method, "label": method,
            "fold": fold, "status": "ok", "message": "", "seed": 1, "metrics": {"error": error},
            "provenance": {"code_hash": "h", "git_commit": "abc"}}


def test_collect_keeps_the_ledger_rows_it_does_not_replace(tmp_path):
    """A partial run's collect job (some folds only): folds.csv holds its folds; the ledger
    those, then the rows it held of the other folds, as they were."""
    paths = {}
    for method, fold, error in (("lda", 0, 0.1), ("lda", 1, 0.2), ("1nn", 0, 0.3)):
        paths[method, fold] = tmp_path / f"{method}{fold}.json"
        paths[method, fold].write_text(json.dumps(_record(method, fold, error)))
    ledger = tmp_path / "toy.csv.gz"
    full = collect_folds(list(paths.values()), tmp_path / "folds.csv", ledger)
    before = gzip.decompress(ledger.read_bytes()).decode().splitlines()
    paths["lda", 1].write_text(json.dumps(_record("lda", 1, 0.25)))
    part = collect_folds([paths["lda", 1]], tmp_path / "folds.csv", ledger)
    after = gzip.decompress(ledger.read_bytes()).decode().splitlines()
    assert len(full) == 3 and part["error"].tolist() == [0.25]
    assert (tmp_path / "folds.csv").read_text().splitlines()[1:] == after[1:2]
    assert after[0] == before[0] and after[2:] == [before[1], before[3]]
    assert len(after) == len(before)
    # 1-NN taken out of the config: the next collect leaves its row out of the ledger
    collect_folds([paths["lda", 1]], tmp_path / "folds.csv", ledger,
                  config_folds={"crabs": {"lda": 2}})
    kept = gzip.decompress(ledger.read_bytes()).decode().splitlines()
    assert kept == after[:2] + [before[1]]
