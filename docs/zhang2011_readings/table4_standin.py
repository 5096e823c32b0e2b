"""ZDJ Table 4's NewsGroups sweep on the offline stand-in (the SSL-book Text task, 1,500
documents from 20 Newsgroups, 893 terms): is its 20-30 % error a property of the task, whatever
the classifier, rather than of the samplers? ZDJ's pair (alt.atheism vs comp.graphics) gave
every method about 5 %.

svm   On partitions 0-4 of each n = 300-800 (the zhang2011_newsgroups splits; inputs as the
      pipeline gives them, standardised): SVM-CV(soft) (the pipeline's method: Kim &
      Ghahramani's two-level 5-fold grid over C and the width) and an L2 logistic regression
      with C chosen by 5-fold CV (the SVM's search seeded by the partition index), beside the fold records' BSVM / BGKM errors where the run has
      them.

Run from a work tree whose data/ and data/splits/zhang2011_newsgroups the pipeline made (and
results/zhang2011_newsgroups, if any); prints one JSON row per partition:

    python docs/zhang2011_readings/table4_standin.py svm > table4_standin.jsonl
"""
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegressionCV

from gpcbench.config import load_config, method_options
from gpcbench.experiments.registry import FitContext, method_spec
from gpcbench.experiments.run_fold import standardize

SIZES = (300, 400, 500, 600, 700, 800)


def error(model, X_test, y_test):
    return round(100 * float(np.mean(model.predict(X_test) != y_test)), 3)


def recorded_error(entry, method, fold):
    path = Path(f"results/zhang2011_newsgroups/{entry}/{method}/fold{fold}.json")
    if not path.is_file():
        return None
    return round(100 * json.loads(path.read_text())["metrics"]["error"], 3)


def sweep_svm():
    config = load_config(Path("config/config.yaml"))
    z = np.load("data/processed/newsgroups.npz")
    for n in SIZES:
        entry = f"n{n}"
        folds = json.load(open(f"data/splits/zhang2011_newsgroups/{entry}.json"))["folds"]
        for fold in range(5):
            train, test = np.asarray(folds[fold]["train"]), np.asarray(folds[fold]["test"])
            X, X_test = standardize(z["X"][train].astype(float), z["X"][test].astype(float))
            y, y_test = z["y"][train], z["y"][test]
            context = FitContext(options=method_options(config, "zhang2011_newsgroups", entry,
                                                        "svm-cv-soft"),
                                 seed=fold, n_jobs=1, feature_types=(), fold=fold)
            svm = method_spec("svm-cv-soft").factory(context).fit(X, y)
            logistic = LogisticRegressionCV(Cs=10, cv=5, l1_ratios=(0.0,), scoring="accuracy",
                                            use_legacy_attributes=False, max_iter=5000).fit(X, y)
            print(json.dumps({
                "n": n, "fold": fold, "n_test": len(test),
                "svm_cv_soft": error(svm, X_test, y_test),
                "logistic_cv": error(logistic, X_test, y_test),
                **{f"{m}_record": recorded_error(entry, m, fold) for m in ("bsvm", "bgkm")}}),
                flush=True)


PARTS = {"svm": sweep_svm}
for part in sys.argv[1:]:
    PARTS[part]()
