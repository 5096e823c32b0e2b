"""ZDJ Table 10's flagged cells, measured on the pipeline's partitions:

svm    Is the published SVM row what an untuned Gaussian-kernel SVM gives? C = 1 with the ZDJ
       kernel exp(-|x - x'|^2 / theta^2), theta = the mean distance (sec. 5.1), on standardised
       inputs; and LIBSVM's defaults (C = 1, gamma = 1 / p) on inputs scaled to [-1, 1] by the
       training rows' range (svm-scale). All 20 partitions of Splice and Astroparticle.
svmadult  The same two untuned SVMs on Adult1's 20 partitions, on the raw indicators (ZDJ
       kernel) and scaled to [-1, 1] (LIBSVM's defaults).
ficraw Does SGP+FIC+EP on Astroparticle's raw (unstandardised) inputs give the published 5.20 %?
       Raw against standardised, same seed (the same 200 inducing inputs), all 20 partitions.
ficdraws  SGP+FIC+EP's spread over five random draws of the 200 inducing inputs, partition 0 of
       Astroparticle (standardised and raw) and Adult1 (raw).
ficwidth  SGP+FIC+EP with GPstuff's squared-exponential convention exp(-d^2 / (2 l^2)), l = the
       mean distance (width sqrt(2) times ours), paired with ours at the same seed: all 20
       partitions of Astroparticle (standardised) and partitions 0-4 of Adult1 (raw indicators).
astrofixed  Table 1's Astroparticle sizes (n = 4,000, m = 3,089) are LIBSVM's svmguide1 files
       swapped: train on svmguide1.t (4,000 rows, 2,000 / 2,000), test on svmguide1 (3,089 rows,
       2,000 / 1,089), one fixed split instead of random partitions of the pooled 7,089 rows.
       Every Table 10 method on that split, built as the pipeline builds it (config.yaml's
       options), standardised by the training rows, three seeds.
floors The spread over random partitions that test-set sampling alone gives a fixed classifier
       erring p on m of the pool's N rows, 100 sqrt(p (1 - p) / m (N - m) / (N - 1)), beside
       each published Table 10 cell's s.d. (p = the published mean).
width  Splice FBGKM / SGPC with the common RBF convention exp(-d^2 / (2 theta^2)) (width sqrt(2)
       times ours) and with a width 1 / sqrt(2) times ours, paired with ours at the same seed,
       partitions 0-2, the protocol's chain.

Run from a work tree whose data/ and data/splits/zhang2011 the pipeline made; prints one JSON
row per run:

    python docs/zhang2011_readings/table10_cells.py svm ficraw ficdraws ficwidth astrofixed floors \
        width svmadult > table10_cells.jsonl
"""
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.svm import SVC

from gpcbench.config import load_config, method_options
from gpcbench.estimators.gkm import FBGKMClassifier, SGPCClassifier
from gpcbench.estimators.sparse_gp import FICGaussianProcessClassifier
from gpcbench.experiments.registry import FitContext, method_spec
from gpcbench.experiments.run_fold import standardize
from gpcbench.kernels.rbf import mean_distance


DATA_FILE = {"adult1": "adult"}  # entries whose data set has another name (config.yaml)


def partition(entry, fold, scaling):
    """Training and test rows of one partition, 'standardised', 'raw' or 'libsvm' ([-1, 1])."""
    z = np.load(f"data/processed/{DATA_FILE.get(entry, entry)}.npz")
    split = json.load(open(f"data/splits/zhang2011/{entry}.json"))["folds"][fold]
    train, test = np.asarray(split["train"]), np.asarray(split["test"])
    X_train, X_test = z["X"][train].astype(float), z["X"][test].astype(float)
    if scaling == "standardised":
        X_train, X_test = standardize(X_train, X_test)
    elif scaling == "libsvm":
        low, span = X_train.min(axis=0), np.ptp(X_train, axis=0)
        span[span == 0] = 1.0
        X_train, X_test = 2 * (X_train - low) / span - 1, 2 * (X_test - low) / span - 1
    return X_train, z["y"][train], X_test, z["y"][test]


def emit(**row):
    print(json.dumps(row), flush=True)


def error(model, X_test, y_test):
    return round(100 * float(np.mean(model.predict(X_test) != y_test)), 3)


def untuned_svm(sets=(("splice", "standardised"), ("astroparticle", "standardised"))):
    for data, scaling in sets:
        for fold in range(20):
            X, y, X_test, y_test = partition(data, fold, scaling)
            zdj = SVC(C=1.0, gamma=1.0 / mean_distance(X) ** 2).fit(X, y)
            X, y, X_test_l, y_test = partition(data, fold, "libsvm")
            libsvm = SVC(C=1.0, gamma=1.0 / X.shape[1]).fit(X, y)
            emit(data=data, fold=fold, zdj_width_C1=error(zdj, X_test, y_test),
                 libsvm_defaults=error(libsvm, X_test_l, y_test))


def fic_ep_raw():
    for fold in range(20):
        row = {}
        for scaling in ("standardised", "raw"):
            X, y, X_test, y_test = partition("astroparticle", fold, scaling)
            row[scaling] = error(FICGaussianProcessClassifier(random_state=fold).fit(X, y),
                                 X_test, y_test)
        emit(data="astroparticle", method="sgp-fic-ep", fold=fold, **row)


def fic_ep_draws():
    for data, scaling in (("astroparticle", "standardised"), ("astroparticle", "raw"),
                          ("adult1", "raw")):
        X, y, X_test, y_test = partition(data, 0, scaling)
        draws = [error(FICGaussianProcessClassifier(random_state=seed).fit(X, y), X_test, y_test)
                 for seed in range(100, 105)]
        emit(data=data, method="sgp-fic-ep", fold=0, scaling=scaling, inducing_draws=draws)


def fic_ep_width():
    for data, scaling, folds in (("astroparticle", "standardised", 20), ("adult1", "raw", 5)):
        for fold in range(folds):
            X, y, X_test, y_test = partition(data, fold, scaling)
            width = mean_distance(X)
            row = {f"width_x{factor:.4g}": error(FICGaussianProcessClassifier(
                kernel_width=factor * width, random_state=fold).fit(X, y), X_test, y_test)
                for factor in (1.0, math.sqrt(2.0))}
            emit(data=data, method="sgp-fic-ep", fold=fold, **row)


def astro_fixed_split():
    z = np.load("data/processed/astroparticle.npz")
    train_file_rows = 3089  # svmguide1's rows come first (the data catalog's train_rows)
    test, train = np.arange(train_file_rows), np.arange(train_file_rows, len(z["y"]))
    X, X_test = standardize(z["X"][train].astype(float), z["X"][test].astype(float))
    y, y_test = z["y"][train], z["y"][test]
    config = load_config(Path("config/config.yaml"))
    for method in ("sgp-fic-ep", "sgp-fic-mcmc", "fbgkm", "sgpc", "svm-cv-soft"):
        for seed in range(3):
            context = FitContext(options=method_options(config, "zhang2011", "astroparticle",
                                                        method),
                                 seed=seed, n_jobs=1, feature_types=(), fold=seed)
            model = method_spec(method).factory(context).fit(X, y)
            emit(data="astroparticle", split="svmguide1.t / svmguide1", method=method,
                 seed=seed, error=error(model, X_test, y_test))


POOLS = {"Splice": (3175, 1175), "Astrop": (7089, 3089), "Adult1": (32561, 10000),
         "Adult2": (32561, 12500)}  # (N, m): the pooled rows and Table 1's test size


def spread_floors():
    published = pd.read_csv("config/published/zhang2011_table10.csv")
    for cell in published.itertuples():
        if cell.dataset not in POOLS or np.isnan(cell.error_mean_percent):
            continue
        N, m = POOLS[cell.dataset]
        p = cell.error_mean_percent / 100
        floor = 100 * math.sqrt(p * (1 - p) / m * (N - m) / (N - 1))
        emit(data=cell.dataset, method=cell.method, published_sd=cell.error_std,
             sampling_floor=round(floor, 3))


def splice_width():
    for fold in range(3):
        X, y, X_test, y_test = partition("splice", fold, "standardised")
        width = mean_distance(X)
        for name, cls in (("fbgkm", FBGKMClassifier), ("sgpc", SGPCClassifier)):
            for factor in (1.0, math.sqrt(2.0), math.sqrt(0.5)):
                model = cls(n_sweeps=10000, burn_in=5000, thin=5, n_chains=1, k_max=200,
                            random_state=fold, kernel_width=factor * width).fit(X, y)
                emit(data="splice", method=name, fold=fold, width_factor=round(factor, 4),
                     error=error(model, X_test, y_test))


PARTS = {"svm": untuned_svm, "svmadult": lambda: untuned_svm((("adult1", "raw"),)),
         "ficraw": fic_ep_raw, "ficdraws": fic_ep_draws, "ficwidth": fic_ep_width,
         "astrofixed": astro_fixed_split, "floors": spread_floors, "width": splice_width}
for part in sys.argv[1:]:
    PARTS[part]()
