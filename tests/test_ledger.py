"""The committed fold ledger: reproducible gzip of folds.csv, restored byte for byte; fold
states against the code hashes at HEAD; ``gpcbench status``."""

import gzip

import pandas as pd
import yaml

from gpcbench.cli import main
from gpcbench.experiments.ledger import (fold_states, ledger_path, restore_folds, state_counts,
                                         write_ledger)

CONFIG = {"experiments": {"toy": {"protocol": {"type": "kfold", "folds": 2},
                                  "datasets": {"crabs": {}}, "methods": ["lda", "1nn"]}}}


def folds_frame():
    return pd.DataFrame({
        "dataset": ["crabs"] * 3, "method": ["lda", "lda", "1nn"], "fold": [0, 1, 0],
        "code_hash": ["head-lda", "head-lda", "old"],
        "git_commit": ["abc", "abc+dirty", "abc"], "cpu_s": [2.0, 3.0, 5.0],
        "options": ["{}"] * 3})


def test_the_ledger_is_reproducible_and_restores_the_same_bytes(tmp_path):
    text = "experiment,fold\ntoy,0\ntoy,1\n"
    write_ledger(text, tmp_path / "a.csv.gz")
    write_ledger(text, tmp_path / "b.csv.gz")
    assert (tmp_path / "a.csv.gz").read_bytes() == (tmp_path / "b.csv.gz").read_bytes()
    assert gzip.decompress((tmp_path / "a.csv.gz").read_bytes()).decode() == text
    restore_folds(tmp_path / "a.csv.gz", tmp_path / "folds.csv")
    assert (tmp_path / "folds.csv").read_text() == text


def test_fold_states_count_dirty_and_other_hashes_as_stale():
    states = fold_states(CONFIG, "toy", folds_frame(), {"lda": "head-lda", "1nn": "head-1nn"})
    assert list(states["state"]) == ["current", "stale", "stale", "missing"]
    counts = state_counts(states, ["method"]).set_index("method")
    assert counts.loc["lda", ["current", "stale", "missing"]].tolist() == [1, 1, 0]
    assert counts.loc["lda", "stale_cpu_s"] == 3.0
    assert counts.loc["1nn", ["current", "stale", "missing"]].tolist() == [0, 1, 1]
    assert counts.loc["1nn", "missing_cpu_s_est"] == 5.0


def test_folds_run_with_other_options_than_the_configs_are_stale():
    """A config change of a method's options (top level or per entry) makes its folds stale,
    as it makes Snakemake rerun them; the hash alone would call them current."""
    config = {**CONFIG, "methods": {"lda": {"shrinkage": 0.5}}}
    folds = folds_frame().assign(git_commit="abc", code_hash=["head-lda", "head-lda", "head-1nn"])
    hashes = {"lda": "head-lda", "1nn": "head-1nn"}
    assert list(fold_states(CONFIG, "toy", folds, hashes)["state"]) == [
        "current", "current", "current", "missing"]
    assert list(fold_states(config, "toy", folds, hashes)["state"]) == [
        "stale", "stale", "current", "missing"]
    folds.loc[0, "options"] = '{"shrinkage": 0.5}'
    assert list(fold_states(config, "toy", folds, hashes)["state"])[:2] == ["current", "stale"]
    entry = {"experiments": {"toy": {**CONFIG["experiments"]["toy"],
                                     "datasets": {"crabs": {"options": {"1nn": {"p": 1}}}}}}}
    assert list(fold_states(entry, "toy", folds, hashes)["state"])[2] == "stale"


def test_folds_standardised_otherwise_than_the_config_says_are_stale():
    """``raw_input_methods`` and an entry's ``standardize`` change what a method's jobs see, as
    an option change does; a ledger from before the flag was recorded counts as following the
    experiment's."""
    raw = {"experiments": {"toy": {**CONFIG["experiments"]["toy"], "raw_input_methods": ["1nn"]}}}
    folds = folds_frame().assign(git_commit="abc", code_hash=["head-lda", "head-lda", "head-1nn"])
    hashes = {"lda": "head-lda", "1nn": "head-1nn"}
    assert list(fold_states(raw, "toy", folds, hashes)["state"])[:3] == ["current"] * 2 + ["stale"]
    folds["standardized"] = [True, False, False]
    assert list(fold_states(raw, "toy", folds, hashes)["state"])[:3] == [
        "current", "stale", "current"]
    assert list(fold_states(CONFIG, "toy", folds, hashes)["state"])[:3] == [
        "current", "stale", "stale"]
    entry_raw = {"experiments": {"toy": {**CONFIG["experiments"]["toy"],
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
