"""Split protocols: partitions, sizes, strata and seeding."""

import numpy as np
import pytest

from gpcbench.data.dataset import Dataset
from gpcbench.data.splits import SplitError, make_splits


def _dataset(n=120, classes=3, provenance=None):
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 2, size=n)])
    y = np.arange(n) % classes
    return Dataset(X, y, ["a", "colour"], ["continuous", "discrete"],
                   [f"c{k}" for k in range(classes)], provenance or {})


def test_kfold_tests_partition_the_rows_and_are_stratified():
    data = _dataset()
    folds = make_splits({"type": "kfold", "folds": 10}, data, seed=1)
    tests = np.concatenate([f["test"] for f in folds])
    assert sorted(tests) == list(range(120))
    for fold in folds:
        assert not set(fold["train"]) & set(fold["test"])
        assert len(fold["train"]) + len(fold["test"]) == 120
        assert np.all(np.bincount(data.y[fold["test"]]) == 4)


def test_same_seed_same_splits_other_seed_other_splits():
    data = _dataset()
    protocol = {"type": "random", "partitions": 3, "n_train": 50, "n_test": 40}
    assert make_splits(protocol, data, 5) == make_splits(protocol, data, 5)
    assert make_splits(protocol, data, 5) != make_splits(protocol, data, 6)


def test_random_partitions_have_the_requested_sizes():
    folds = make_splits({"type": "random", "partitions": 4, "n_train": 50, "n_test": 40},
                        _dataset(), seed=0)
    assert len(folds) == 4
    for fold in folds:
        assert len(fold["train"]) == 50 and len(fold["test"]) == 40
        assert not set(fold["train"]) & set(fold["test"])


def test_per_class_with_strata_feature_draws_per_cell():
    data = _dataset()
    (fold,) = make_splits({"type": "per_class", "per_cell": 5, "strata_feature": "colour"}, data, 3)
    train = np.array(fold["train"])
    cells = data.y[train] * 2 + data.X[train, 1].astype(int)
    assert np.all(np.bincount(cells, minlength=6) == 5)
    assert len(fold["test"]) == 120 - 30


def test_per_class_partitions_are_independent_draws_the_first_as_without_partitions():
    data = _dataset()
    single = make_splits({"type": "per_class", "per_cell": 10}, data, 4)
    folds = make_splits({"type": "per_class", "per_cell": 10, "partitions": 5}, data, 4)
    assert len(folds) == 5 and folds[0] == single[0]   # partitions: 1 keeps existing splits
    assert len({tuple(f["train"]) for f in folds}) == 5
    for fold in folds:
        assert np.all(np.bincount(data.y[fold["train"]], minlength=3) == 10)
        assert sorted(fold["train"] + fold["test"]) == list(range(120))


def test_fixed_uses_train_rows_from_provenance():
    (fold,) = make_splits({"type": "fixed"}, _dataset(provenance={"train_rows": 100}), 0)
    assert fold["train"] == list(range(100)) and fold["test"] == list(range(100, 120))


def test_blocks_train_on_consecutive_blocks():
    folds = make_splits({"type": "blocks", "block_size": 40, "folds": 3}, _dataset(), 0)
    assert [f["train"][0] for f in folds] == [0, 40, 80] and all(f["test"] == [] for f in folds)


@pytest.mark.parametrize("protocol", [
    {"type": "random", "partitions": 1, "n_train": 100, "n_test": 30},
    {"type": "per_class", "per_cell": 40},
    {"type": "fixed"},
    {"type": "per_class", "per_cell": 2, "strata_feature": "nope"},
    {"type": "shuffle"},
])
def test_impossible_protocols_raise(protocol):
    with pytest.raises(SplitError):
        make_splits(protocol, _dataset(), 0)
