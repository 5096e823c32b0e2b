"""The SVM-CV grid search as it was before each width's Gram matrix was reused, copied
unchanged but for the record of its searches: scikit-learn's GridSearchCV refitting
SVC(kernel="rbf") from the raw inputs at every (C, l) and fold, with scikit-learn's default
200 MB kernel cache. tests/test_svm_search.py checks
:class:`gpcbench.baselines.svm.TwoLevelGridSVM` against it; benchmarks/bench_svm_search.py
times the two."""

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC

from gpcbench.baselines.svm import DAGSVC, HARD_MARGIN_C, TwoLevelGridSVM


class ReferenceDAGSVC(DAGSVC):
    """DAGSVC as it was: scikit-learn's default 200 MB kernel cache."""

    def _svc(self, n):
        if self.log10_l is None:
            return SVC(C=self.C, kernel="precomputed", decision_function_shape="ovo")
        gamma = 10.0 ** self.log10_l / 2.0  # exp(-l/2 d^2) = exp(-gamma d^2)
        return SVC(C=self.C, kernel="rbf", gamma=gamma, decision_function_shape="ovo")


class ReferenceGridSVM(TwoLevelGridSVM):
    """TwoLevelGridSVM as it was: GridSearchCV refits every (C, l) from the raw inputs;
    ``searches_`` keeps both levels' GridSearchCV."""

    def _search(self, X, y, log10_grid):
        base = ReferenceDAGSVC(C=HARD_MARGIN_C, log10_l=None if self.search == "C" else 0.0)
        params = {}
        if "C" in log10_grid:
            params["C"] = list(10.0 ** log10_grid["C"])
        if "l" in log10_grid:
            params["log10_l"] = list(log10_grid["l"])
        cv = StratifiedKFold(self.cv_folds, shuffle=True, random_state=self.random_state)
        search = GridSearchCV(base, params, cv=cv, n_jobs=self.n_jobs, error_score="raise")
        search.fit(X, y)
        best = search.best_params_
        self.cv_fits_ += self.cv_folds * len(search.cv_results_["params"])
        self.searches_.append(search)
        return {"C": np.log10(best["C"]) if "C" in best else None,
                "l": best.get("log10_l")}, search.best_estimator_

    def fit(self, X, y):
        self.cv_fits_ = 0
        self.searches_ = []
        coarse, _ = self._search(X, y, self._grids())
        fine, _ = self._search(X, y, self._grids(coarse))
        C = HARD_MARGIN_C if fine["C"] is None else 10.0 ** fine["C"]
        log10_l = None if self.search == "C" else fine["l"]
        self.model_ = clone(ReferenceDAGSVC(C=C, log10_l=log10_l)).fit(X, y)
        self.classes_ = self.model_.classes_
        self.best_params_ = {"C": C, "log10_l": log10_l}
        self.hyperparameters_ = {"log10_C": float(np.log10(C)),
                                 **({} if log10_l is None else {"log10_l": float(log10_l)})}
        return self
