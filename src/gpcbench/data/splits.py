"""Train/test split protocols of the papers, seeded from the config.

Every protocol returns a list of folds ``{"train": [...], "test": [...]}`` (row indices into
the processed data set). The split rule writes them once per (experiment, data set) to
``data/splits/<experiment>/<data set>.json``; every method reads the same file.

Protocols (``type`` in the config):

``kfold``
    K-fold cross-validation, stratified by class (K&G sec. 3.5.2: 10 folds).
``fixed``
    One split: the first ``train_rows`` rows train, the rest test (Pima.tr/Pima.te, CKP's
    160/400 mixture, K&G's 300/10,000 relevance data). ``train_rows`` comes from the config or
    from the data set's provenance.
``per_class``
    ``per_cell`` training rows drawn at random from every cell of class x ``strata_feature``
    (crabs 80/120: 20 per sex and colour; iris 90/60: 30 per species), the rest test;
    ``partitions`` (default 1) independent such draws (CKP's repeated random iris
    splits).
``random``
    ``partitions`` random disjoint train/test draws of sizes ``n_train`` / ``n_test``
    (ZDJ sec. 5.1: 20 partitions).
``blocks``
    Fold k trains on rows ``k*block_size .. (k+1)*block_size - 1`` (independent synthetic
    repetitions, K&G Table 1); there is no test set.
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import StratifiedKFold

from gpcbench.data.dataset import Dataset


DEFAULT_FOLDS = 10       # kfold
DEFAULT_PARTITIONS = {"random": 20, "per_class": 1}


class SplitError(ValueError):
    """A split protocol cannot be applied to a data set."""


def fold_count(protocol: dict, rows: int, extra: dict) -> int:
    """Folds ``protocol`` yields on a data set of ``rows`` rows whose fixed provenance is
    ``extra`` (a :class:`~gpcbench.data.registry.DatasetSpec`'s), known before splitting."""
    kind = protocol["type"]
    if kind == "kfold":
        return int(protocol.get("folds", DEFAULT_FOLDS))
    if kind in DEFAULT_PARTITIONS:
        return int(protocol.get("partitions", DEFAULT_PARTITIONS[kind]))
    if kind == "blocks":
        return rows // _block_size(protocol, extra)
    return 1


def train_size(protocol: dict, rows: int, extra: dict, n_classes: int) -> int:
    """Training rows of one fold (an upper bound where strata are not known in advance)."""
    kind = protocol["type"]
    if kind == "kfold":
        return rows - rows // int(protocol.get("folds", DEFAULT_FOLDS))
    if kind == "fixed":
        return int(protocol.get("train_rows", extra.get("train_rows", rows)))
    if kind == "random":
        return int(protocol["n_train"])
    if kind == "blocks":
        return _block_size(protocol, extra)
    if protocol.get("strata_feature") is None:  # per_class: per_cell from every class
        return int(protocol["per_cell"]) * n_classes
    return rows


def _block_size(protocol: dict, extra: dict) -> int:
    return int(protocol.get("block_size", extra.get("block_size", 0)))


def make_splits(protocol: dict, dataset: Dataset, seed: int) -> list[dict]:
    """Folds of ``protocol`` on ``dataset``; ``seed`` fixes every random draw."""
    kind = protocol["type"]
    try:
        builder = _BUILDERS[kind]
    except KeyError:
        raise SplitError(f"unknown split protocol type '{kind}'") from None
    folds = builder(protocol, dataset, np.random.default_rng(seed))
    return [{"train": sorted(map(int, f["train"])), "test": sorted(map(int, f["test"]))}
            for f in folds]


def _kfold(protocol, dataset, rng):
    k = int(protocol.get("folds", DEFAULT_FOLDS))
    seed = int(rng.integers(2**31 - 1))
    splitter = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    return [{"train": tr, "test": te} for tr, te in splitter.split(dataset.X, dataset.y)]


def _fixed(protocol, dataset, rng):
    n_train = protocol.get("train_rows", dataset.provenance.get("train_rows"))
    if n_train is None:
        raise SplitError("protocol 'fixed' needs train_rows (config or data set provenance)")
    n = dataset.X.shape[0]
    if not 0 < n_train < n:
        raise SplitError(f"train_rows={n_train} is outside 1..{n - 1}")
    return [{"train": np.arange(n_train), "test": np.arange(n_train, n)}]


def _per_class(protocol, dataset, rng):
    per_cell = int(protocol["per_cell"])
    partitions = fold_count(protocol, dataset.X.shape[0], dataset.provenance)
    cells = dataset.y.astype(np.int64)
    feature = protocol.get("strata_feature")
    if feature is not None:
        if feature not in dataset.feature_names:
            raise SplitError(f"strata_feature '{feature}' is not a column of the data set")
        column = dataset.X[:, dataset.feature_names.index(feature)]
        _, codes = np.unique(column, return_inverse=True)
        cells = cells * (codes.max() + 1) + codes
    strata = [np.flatnonzero(cells == cell) for cell in np.unique(cells)]
    for members in strata:
        if members.size <= per_cell:
            raise SplitError(f"a stratum has {members.size} rows, not more than per_cell={per_cell}")
    folds = []
    for _ in range(partitions):
        train = np.concatenate([rng.choice(members, size=per_cell, replace=False)
                                for members in strata])
        folds.append({"train": train,
                      "test": np.setdiff1d(np.arange(dataset.X.shape[0]), train)})
    return folds


def _random(protocol, dataset, rng):
    n = dataset.X.shape[0]
    n_train, n_test = int(protocol["n_train"]), int(protocol["n_test"])
    if n_train + n_test > n:
        raise SplitError(f"n_train + n_test = {n_train + n_test} exceeds the {n} rows")
    folds = []
    for _ in range(fold_count(protocol, n, dataset.provenance)):
        perm = rng.permutation(n)
        folds.append({"train": perm[:n_train], "test": perm[n_train:n_train + n_test]})
    return folds


def _blocks(protocol, dataset, rng):
    size, n = _block_size(protocol, dataset.provenance), dataset.X.shape[0]
    if size <= 0 or n % size:
        raise SplitError(f"block_size={size} does not divide the {n} rows")
    return [{"train": np.arange(k * size, (k + 1) * size), "test": np.array([], dtype=int)}
            for k in range(n // size)]


_BUILDERS = {"kfold": _kfold, "fixed": _fixed, "per_class": _per_class,
             "random": _random, "blocks": _blocks}
