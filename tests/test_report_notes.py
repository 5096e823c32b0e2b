"""Table notes from docs/tables (shared files included, readings filled in or marked stale),
the causes beside the published numbers, and the readings the notes quote."""

import json
from pathlib import Path

import numpy as np
import pytest

from gpcbench.experiments.report.notes import (file_notes, fill_readings, note_files,
                                               quoted_readings, table_notes)


@pytest.fixture
def notes_dir(tmp_path):
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "common.md").write_text("# common\n\nShared.\n\n- shared note\n")
    (tmp_path / "t.md").write_text(
        "# t\n\nIntro line, not a note.\n\n- first note, wrapped\n  onto a second line\n"
        "- [shared/common.md](shared/common.md)\n"
        "- k = {reading:nn.heart.k} and error {reading:nn.heart.error:.3f}\n")
    return tmp_path


def test_bullets_are_notes_and_a_link_bullet_includes_a_shared_file(notes_dir):
    assert file_notes(notes_dir / "t.md")[0] == "first note, wrapped onto a second line"
    assert note_files("t", notes_dir) == [notes_dir / "t.md", notes_dir / "shared" / "common.md"]
    assert note_files("absent", notes_dir) == [] and table_notes("absent", notes_dir) == []
    reading = {"code_hash": "h", "values": {"heart": {"k": 2, "error": 0.09712}}}
    assert table_notes("t", notes_dir, {"nn": reading}, {"nn": "h"}) == [
        "first note, wrapped onto a second line", "shared note", "k = 2 and error 0.097"]
    assert quoted_readings(file_notes(notes_dir / "t.md")) == ["nn"]


@pytest.mark.parametrize("readings", [{}, {"nn": {"code_hash": "old", "values": {}}}])
def test_a_note_quoting_a_missing_or_stale_reading_is_marked(readings):
    note = fill_readings("error {reading:nn.a.b:.2f} on {x}", readings, {"nn": "h"})
    assert note == "**stale** (reading nn missing or of other code): error ? on {x}"


def test_a_reading_records_its_values_code_hash_and_seed(tmp_path, monkeypatch):
    from gpcbench.experiments import readings
    from gpcbench.experiments.readings import kim2006_nearest_neighbours as nn

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int)
    (tmp_path / "data" / "processed").mkdir(parents=True)
    (tmp_path / "data" / "splits" / "exp").mkdir(parents=True)
    np.savez(tmp_path / "data" / "processed" / "toy.npz", X=X, y=y)
    folds = [{"train": list(range(0, 40)), "test": list(range(40, 60))},
             {"train": list(range(20, 60)), "test": list(range(0, 20))}]
    (tmp_path / "data" / "splits" / "exp" / "toy.json").write_text(json.dumps({"folds": folds}))
    monkeypatch.setattr(nn, "SETS", {"exp": ["toy"]})
    out = readings.run_reading("kim2006_nearest_neighbours", tmp_path / "r.json", seed=3,
                               root=tmp_path)
    assert json.loads((tmp_path / "r.json").read_text()) == out
    assert out["seed"] == 3 and out["code_hash"] == readings.reading_code_hash(out["reading"])
    toy = out["values"]["toy"]
    assert set(toy) == {"raw", "standardised"} and set(toy["raw"]) == {"nearest", "smallest"}
    assert 0 <= toy["raw"]["nearest"]["k-NN"] <= 0.2 and toy["raw"]["nearest"]["k"] >= 1
    with pytest.raises(ValueError, match="unknown reading"):
        readings.reading_code_hash("nope")


def test_the_relevance_draws_fit_the_configs_methods_and_score_bayes_rule(monkeypatch):
    """Two draws: Bayes's rule errs near Phi(-sqrt 3) = 0.042 on each draw's 10,000 test rows
    (3 s.e. of a binomial rate), the fitted methods no better than it by more than test
    sampling allows, and the draws differ; the reading's options are the config's."""
    from scipy.stats import norm

    from gpcbench.config import read_config_file
    from gpcbench.experiments.readings import kim2006_relevance_draws as draws

    config = read_config_file(Path(__file__).resolve().parents[1] / "config" / "config.yaml")
    assert draws.METHODS == {m: config["methods"].get(m, {}) for m in draws.METHODS}
    monkeypatch.setattr(draws, "DRAWS", 2)
    values = draws.measure(None, seed=5)
    bayes = norm.cdf(-np.sqrt(3))
    assert set(values) == {"bayes", *draws.METHODS}
    for errors in (values[name]["errors"] for name in values):
        assert len(errors) == 2 and errors[0] != errors[1]
    se = np.sqrt(bayes * (1 - bayes) / 10000)
    assert all(abs(e - bayes) < 3 * se for e in values["bayes"]["errors"])
    for method in draws.METHODS:
        assert min(values[method]["errors"]) > bayes - 3 * se
        assert values[method]["mean"] == pytest.approx(np.mean(values[method]["errors"]))


def test_the_splice_sizes_reading_fits_the_configs_methods_on_disjoint_partitions(
        tmp_path, monkeypatch):
    """Two partitions of a toy data set at the reading's sizes: each partition's error is that
    of an SVM fitted by scikit-learn itself (sec. 5.1's kernel at the mean distance between the
    standardised training rows, C = 1) on the same rows; the reading's options are the
    config's."""
    from scipy.spatial.distance import pdist
    from sklearn.svm import SVC

    from gpcbench.config import read_config_file
    from gpcbench.data.dataset import Dataset, save_dataset
    from gpcbench.data.splits import make_splits
    from gpcbench.experiments.readings import zhang2011_splice_sizes as sizes

    config = read_config_file(Path(__file__).resolve().parents[1] / "config" / "config.yaml")
    assert sizes.METHODS == {m: config["methods"].get(m, {}) for m in sizes.METHODS}
    rng = np.random.default_rng(1)
    y = np.arange(200) % 2
    X = rng.integers(1, 5, size=(200, 6)).astype(float) + y[:, None]
    dataset = Dataset(X=X, y=y, feature_names=list("abcdef"), feature_types=["discrete"] * 6,
                      class_names=["EI/IE", "N"])
    (tmp_path / "data" / "processed").mkdir(parents=True)
    save_dataset(dataset, tmp_path / sizes.INPUTS[0], tmp_path / "data/processed/splice.json")
    monkeypatch.setattr(sizes, "PARTITIONS", 2)
    monkeypatch.setattr(sizes, "N_TRAIN", 60)
    monkeypatch.setattr(sizes, "N_TEST", 100)
    monkeypatch.setattr(sizes, "METHODS", {"svm-mean-width": {}})
    values = sizes.measure(tmp_path, seed=4)
    splits = make_splits({"type": "random", "partitions": 2, "n_train": 60, "n_test": 100},
                         dataset, 4)
    direct = []
    for split in splits:
        train, test = np.array(split["train"]), np.array(split["test"])
        assert len(train) == 60 and len(test) == 100 and not set(train) & set(test)
        mean, scale = X[train].mean(axis=0), X[train].std(axis=0)
        X_train, X_test = (X[train] - mean) / scale, (X[test] - mean) / scale
        svm = SVC(C=1.0, gamma=1.0 / pdist(X_train).mean() ** 2).fit(X_train, y[train])
        direct.append(100 * np.mean(svm.predict(X_test) != y[test]))
    assert min(direct) > 5 and values["svm-mean-width"]["errors"] == pytest.approx(direct)
    assert values["partitions"] == 2 and values["n_train"] == 60


def test_a_note_quotes_its_tables_own_cells():
    import pandas as pd

    from gpcbench.experiments.report.notes import fill_cells

    cells = pd.DataFrame({"method": ["GPC-L(m,soft)"], "dataset": ["Ionosphere"],
                          "ours": [0.06563], "pub_mean": [0.0686]})
    note = ("ours {ours:GPC-L(m,soft)|Ionosphere:.3f}, "
            "published {published:GPC-L(m,soft)|Ionosphere}")
    assert fill_cells([note], cells) == ["ours 0.066, published 0.0686"]
    assert fill_cells(["{ours:GPC-L(m,soft)|Heart}"], cells) == ["—"]  # not in this run


def test_every_quoted_cell_is_a_row_and_column_of_its_table_in_the_protocol(repo):
    """The full config's tables: a quoted row is a method the table shows (its label as the
    table prints it) and a quoted column one of its data sets as printed."""
    from gpcbench.config import entry_methods, load_config
    from gpcbench.experiments.registry import method_spec
    from gpcbench.experiments.report.notes import CELL

    config = load_config(repo / "config" / "config.yaml")
    unknown = []
    for name, table in config["tables"].items():
        experiment = config["experiments"][table["experiment"]]
        renamed = table.get("method_names", {})
        rows = {renamed.get(label, label) for label in (
            method_spec(m).label for entry in table["datasets"]
            for m in entry_methods(experiment, entry))}
        notes = table_notes(name, repo / "docs" / "tables")
        for _, row, column, _ in (m.groups() for note in notes for m in CELL.finditer(note)):
            if row not in rows or column not in table["datasets"].values():
                unknown.append(f"{name}: {row} | {column}")
    assert unknown == []
