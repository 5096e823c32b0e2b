"""ZDJ Tables 10 / 13's SVM row under Raetsch's benchmark protocol: the Gaussian-kernel SVM's
(C, width) chosen once, as the median of the per-partition choices on partitions 0-4, then
held fixed on every partition, against the pipeline's SVM-CV(soft), which searches (C, width)
on each partition's training rows (K&G's two-level grid). Reads the pipeline's fold results
(their chosen hyperparameters) and its splits; standardises as the pipeline does.

    python docs/zhang2011_readings/svm_fixed.py [DATA_SET ...]   # from a work tree the pipeline made
"""
import json
import sys
from pathlib import Path

import numpy as np

from gpcbench.baselines.svm import DAGSVC
from gpcbench.experiments.run_fold import standardize

for name in sys.argv[1:] or ["ringnorm", "thyroid", "twonorm", "waveform"]:
    data = np.load(f"data/processed/{name}.npz")
    X, y = data["X"], data["y"]
    folds = json.loads(Path(f"data/splits/zhang2011/{name}.json").read_text())["folds"]
    runs = {k: json.loads(path.read_text()) for k in range(len(folds))
            if (path := Path(f"results/zhang2011/{name}/svm-cv-soft/fold{k}.json")).is_file()}
    chosen = np.array([[runs[k]["hyperparameters"]["log10_C"], runs[k]["hyperparameters"]["log10_l"]]
                       for k in range(5)])
    log10_C, log10_l = np.median(chosen, axis=0)
    fixed, searched = [], []
    for k, fold in enumerate(folds):
        if k not in runs:
            continue
        train, test = np.array(fold["train"]), np.array(fold["test"])
        X_train, X_test = standardize(X[train], X[test])
        model = DAGSVC(C=10.0 ** log10_C, log10_l=log10_l).fit(X_train, y[train])
        fixed.append(np.mean(model.predict(X_test) != y[test]))
        searched.append(runs[k]["metrics"]["error"])
    fixed, searched = 100 * np.array(fixed), 100 * np.array(searched)
    diff = fixed - searched
    print(f"{name}: median (log10 C, log10 l) of partitions 0-4 = ({log10_C:.2f}, {log10_l:.2f}); "
          f"{len(fixed)} partitions: fixed {fixed.mean():.2f} +- {fixed.std(ddof=1):.2f} % (sd), "
          f"searched per partition {searched.mean():.2f} +- {searched.std(ddof=1):.2f}, "
          f"paired difference {diff.mean():+.2f} +- {diff.std(ddof=1) / np.sqrt(diff.size):.2f}")
