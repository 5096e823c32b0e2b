"""Test only: tests/test_slurm.py puts this directory on PYTHONPATH for its runs, so that
every Python process of a run (Snakemake, its jobs) registers two methods:

- "crash": its fit kills the run-fold process, so the fold job dies the way a job killed by
  the scheduler does (an out-of-memory kill, a node failure) instead of writing a "failed"
  result record;
- "slow-lda": LDA whose fit first waits WAIT_S, past the fold watchdog's first look at the
  Snakemake process it watches, so a fold on another node must find a process it can see.
"""

import os
import signal
import time

from sklearn.base import BaseEstimator, ClassifierMixin

from gpcbench.experiments.registry import MethodSpec, register

WAIT_S = 3.0  # three of the watchdog's polls (gpcbench.experiments.run_fold.POLL_SECONDS)


class Crash(ClassifierMixin, BaseEstimator):  # a method's estimator is scikit-learn's kind
    def fit(self, X, y):
        os.kill(os.getppid(), signal.SIGKILL)  # fit runs in a forked child of run-fold


class SlowLDA(ClassifierMixin, BaseEstimator):
    def fit(self, X, y):
        from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

        time.sleep(WAIT_S)
        self.lda_ = LinearDiscriminantAnalysis().fit(X, y)
        self.classes_ = self.lda_.classes_
        return self

    def predict(self, X):
        return self.lda_.predict(X)

    def predict_proba(self, X):
        return self.lda_.predict_proba(X)


register(MethodSpec(name="crash", label="Crash", factory=lambda ctx: Crash()))
register(MethodSpec(name="slow-lda", label="Slow LDA", factory=lambda ctx: SlowLDA()))
