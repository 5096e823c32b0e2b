"""Test only: tests/test_slurm.py puts this directory on PYTHONPATH for one run, so that every
Python process of that run (Snakemake, its jobs) registers the method "crash". Its fit kills
the run-fold process, so the fold job dies the way a job killed by the scheduler does (an
out-of-memory kill, a node failure) instead of writing a "failed" result record."""

import os
import signal

from gpcbench.experiments.registry import MethodSpec, register


class Crash:
    def fit(self, X, y):
        os.kill(os.getppid(), signal.SIGKILL)  # fit runs in a forked child of run-fold


register(MethodSpec(name="crash", label="Crash", factory=lambda ctx: Crash()))
