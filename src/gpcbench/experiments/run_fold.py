"""Run one (experiment, data set, method, fold) job and write its result record.

The fit runs in a forked child process so that a crash, a hang past the time limit or an
exception in the method becomes a result with ``status`` failed / timeout / diverged instead
of stopping the pipeline; the record is written atomically, so an interrupted job leaves
nothing behind and reruns.
"""

from __future__ import annotations

import ctypes
import json
import logging
import multiprocessing
import resource
import signal
import time
import traceback
import warnings
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from gpcbench.data.dataset import load_dataset
from gpcbench.experiments.metrics import fold_metrics
from gpcbench.experiments.registry import FitContext, method_spec
from gpcbench.io import atomic_write_json, json_safe, sha256_file
from gpcbench.provenance import git_commit, host, package_versions
from gpcbench.watchdog import watched_process

log = logging.getLogger(__name__)

STATUSES = ("ok", "failed", "diverged", "timeout")
POLL_SECONDS = 1.0
PR_SET_PDEATHSIG = 1
#: At most this many distinct warnings of each kind (convergence, other) per fold record,
#: each cut to WARNING_CHARS characters.
MAX_WARNINGS = 10
WARNING_CHARS = 300


class OrphanedError(RuntimeError):
    """The Snakemake process that runs this fold job is gone (killed): stop, write nothing."""


class DivergenceError(ArithmeticError):
    """Raised by a method whose iterations diverged (non-finite objective or parameters)."""


def standardize(X_train, X_test):
    """Zero mean, unit variance per column, with the training rows' statistics.

    Discrete columns are rescaled too: distance-based baselines need comparable scales, and the
    1 - delta distance of discrete features (K&G eq. 14) is invariant to affine recoding.
    """
    mean = X_train.mean(axis=0)
    scale = X_train.std(axis=0)
    scale[scale == 0] = 1.0
    return (X_train - mean) / scale, (X_test - mean) / scale


def _predict(estimator, probabilistic: bool, X_test, n_classes: int) -> tuple:
    """Predicted labels and, for a probabilistic method, probabilities indexed by class
    0..n_classes-1 (None otherwise or without test rows)."""
    y_pred = np.asarray(estimator.predict(X_test)) if len(X_test) else np.array([], dtype=int)
    proba = None
    if probabilistic and len(X_test):
        proba = np.zeros((len(X_test), n_classes))
        proba[:, np.asarray(estimator.classes_, dtype=int)] = estimator.predict_proba(X_test)
    return y_pred, proba


class WarningLog:
    """Stands in for ``warnings.showwarning``: keeps the first MAX_WARNINGS distinct one-line
    texts of the ConvergenceWarnings and of the other warnings, and counts the rest (memory
    stays bounded however often a long fit warns).
    """

    def __init__(self):
        self.kept = {"convergence": [], "other": []}
        self.dropped = {"convergence": 0, "other": 0}

    def __call__(self, message, category, filename, lineno, file=None, line=None):
        kind = "convergence" if issubclass(category, ConvergenceWarning) else "other"
        text = " ".join(f"{category.__name__}: {message}".split())[:WARNING_CHARS]
        if text in self.kept[kind]:
            return
        if len(self.kept[kind]) < MAX_WARNINGS:
            self.kept[kind].append(text)
        else:
            self.dropped[kind] += 1

    def lines(self, kind: str) -> list[str]:
        """The kept texts of ``kind`` (convergence or other), then how many more there were."""
        more = self.dropped[kind]
        return self.kept[kind] + ([f"... and {more} more warnings"] if more else [])


def fit_and_predict(method: str, ctx: FitContext, X_train, y_train, X_test, n_classes: int) -> dict:
    """Fit the method and predict the test rows, recording every warning raised meanwhile.

    Returns
    -------
    dict
        Predictions (``proba`` indexed by class 0..n_classes-1), timings, the estimator's
        fitted attributes and ``warnings`` / ``other_warnings``: one-line texts of the
        scikit-learn ConvergenceWarnings and of the other warnings (see :class:`WarningLog`).
        ``converged`` is the estimator's ``converged_`` where it has one (a warning such as
        scikit-learn's "length scale close to its bound" is recorded, not a failure); for an
        estimator without it, False when any ConvergenceWarning was raised.
    """
    estimator = method_spec(method).factory(ctx)
    caught = WarningLog()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = caught
        cpu_start = time.process_time()
        start = time.perf_counter()
        estimator.fit(X_train, y_train)
        fit_s = time.perf_counter() - start
        start = time.perf_counter()
        y_pred, proba = _predict(estimator, method_spec(method).probabilistic, X_test, n_classes)
        predict_s = time.perf_counter() - start
        cpu_s = time.process_time() - cpu_start
    convergence_warnings = caught.lines("convergence")
    return {
        "y_pred": y_pred, "proba": proba, "fit_s": fit_s, "predict_s": predict_s, "cpu_s": cpu_s,
        "hyperparameters": getattr(estimator, "hyperparameters_", {}),
        "converged": bool(getattr(estimator, "converged_", not convergence_warnings)),
        "warnings": convergence_warnings, "other_warnings": caught.lines("other"),
        "n_iter": getattr(estimator, "n_iter_", None),
        # samplers: the chains n_iter counts the sweeps of each (sweeps per second in reports)
        "n_chains": estimator.get_params().get("n_chains"),
        "trace": getattr(estimator, "convergence_trace_", getattr(estimator, "trace_", [])),
        "log_evidence": getattr(estimator, "log_evidence_", None),
        # MCMC samplers: per chain (MCMC GPC), per move (GKM) or, for HMC Laplace, one rate
        "acceptance_rates": json_safe(getattr(estimator, "acceptance_rates_",
                                              getattr(estimator, "acceptance_rate_", None))),
        "diagnostics": json_safe(getattr(estimator, "diagnostics_", None)),
    }


def _die_with_parent() -> None:
    """Linux: the kernel kills this (fit) process when the fold job process dies."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # not Linux: the fold job's poll still stops the fit
        pass


def _wait(parent, time_limit: float) -> bool:
    """Whether the fit's answer arrived within ``time_limit``; raises OrphanedError as soon as
    the Snakemake process this job watches (:func:`~gpcbench.watchdog.watched_process`) is
    gone."""
    watched = watched_process()
    if watched is None:
        return parent.poll(time_limit)
    deadline = time.monotonic() + time_limit
    while not parent.poll(min(POLL_SECONDS, max(0.0, deadline - time.monotonic()))):
        if not watched.alive():
            raise OrphanedError(f"Snakemake (pid {watched.pid} on {watched.host}) is gone; "
                                "fold job stopped")
        if time.monotonic() >= deadline:
            return False
    return True


def peak_rss_mb() -> float:
    """Peak resident memory (MB) of this process and of its largest finished child (the fit):
    what a scheduler must grant the fold job (Linux reports KiB)."""
    peak_kib = max(resource.getrusage(who).ru_maxrss
                   for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return round(peak_kib / 1024, 1)


def _child(conn, threads, args):
    _die_with_parent()
    try:
        with threadpool_limits(threads):
            conn.send(("ok", fit_and_predict(*args)))
    except (DivergenceError, FloatingPointError) as exc:
        conn.send(("diverged", f"{type(exc).__name__}: {exc}"))
    except BaseException as exc:  # noqa: BLE001 - every failure becomes a result record
        tb = traceback.format_exc(limit=-3)
        conn.send(("failed", f"{type(exc).__name__}: {exc}\n{tb}"))
    finally:
        conn.close()


def run_isolated(args: tuple, threads: int, time_limit: float) -> tuple[str, object]:
    """``fit_and_predict(*args)`` in a forked child; (status, outcome or message)."""
    context = multiprocessing.get_context("fork")
    parent, child = context.Pipe(duplex=False)
    process = context.Process(target=_child, args=(child, threads, args), daemon=True)
    process.start()
    child.close()
    try:
        if not _wait(parent, time_limit):
            return "timeout", f"fit and predict did not finish within {time_limit:g} s"
        try:
            return parent.recv()
        except EOFError:
            process.join(5)
            return "failed", f"the fitting process died (exit code {process.exitcode})"
    finally:
        if process.is_alive():
            process.kill()
        process.join()
        parent.close()


def _add_outcome(record: dict, outcome: dict, y_test, method: str, n_classes: int) -> None:
    """Metrics, timings, fitted values and convergence of a fit that returned (status ok):
    status diverged when the probabilities are not finite, a message when the NLPD is."""
    try:
        record["metrics"] = fold_metrics(y_test, outcome["y_pred"], outcome["proba"],
                                         method_spec(method).probabilistic, n_classes=n_classes)
    except FloatingPointError as exc:
        record.update(status="diverged", message=str(exc))
    if record.get("metrics", {}).get("nonfinite_nlpd"):
        record["message"] = "NLPD is infinite: a test point's true class has probability 0"
    record["timings"] = {key: outcome[key] for key in ("fit_s", "predict_s", "cpu_s")}
    record["hyperparameters"] = outcome["hyperparameters"]
    record["log_evidence"] = outcome["log_evidence"]
    record["convergence"] = {key: outcome[key] for key in (
        "converged", "n_iter", "n_chains", "trace", "acceptance_rates", "diagnostics", "warnings",
        "other_warnings")}


def run_fold(*, experiment: str, dataset_id: str, method: str, fold: int, data_path: Path,
             splits_path: Path, output: Path, options: dict, seed: int, threads: int = 1,
             time_limit: float = 3600.0, standardize_inputs: bool = True,
             upstream: dict[str, Path] | None = None, code_hash: str = "") -> dict:
    """Run one fold job and write ``output`` (JSON); returns the record.

    Logs a start line and an end line (status, fit seconds) to the ``gpcbench`` logger, and
    each recorded warning of the fit at WARNING level. Raises OrphanedError, writing nothing,
    when the Snakemake process this job watches is gone (see :mod:`gpcbench.watchdog`).
    """
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    data = load_dataset(data_path)
    split = json.loads(Path(splits_path).read_text())["folds"][fold]
    train, test = np.asarray(split["train"], dtype=int), np.asarray(split["test"], dtype=int)
    X_train, X_test = data.X[train], data.X[test]
    if standardize_inputs:
        X_train, X_test = standardize(X_train, X_test)
    ctx = FitContext(
        options=options, seed=seed, n_jobs=threads, feature_types=tuple(data.feature_types),
        fold=fold, upstream={key: json.loads(Path(p).read_text())
                             for key, p in (upstream or {}).items()},
    )
    log.info("start: experiment %s, entry %s, method %s, fold %d, n_train %d", experiment,
             dataset_id, method, fold, train.size)
    args = (method, ctx, X_train, data.y[train], X_test, len(data.class_names))
    status, outcome = run_isolated(args, threads, time_limit)
    peak_mb = peak_rss_mb()
    record = {
        "experiment": experiment, "dataset": dataset_id, "method": method,
        "label": method_spec(method).label, "fold": fold, "seed": seed, "status": status,
        "message": "" if status == "ok" else str(outcome),
        "n_train": int(train.size), "options": options, "standardized": standardize_inputs,
        "provenance": {
            "data": str(data_path), "data_sha256": data.provenance.get("sha256"),
            "splits_sha256": sha256_file(splits_path), "code_hash": code_hash,
            "packages": package_versions(), "git_commit": git_commit(), "host": host(),
            "started": started, "threads": threads, "peak_rss_mb": peak_mb,
        },
    }
    if status == "ok":
        _add_outcome(record, outcome, data.y[test], method, len(data.class_names))
        for line in outcome["warnings"] + outcome["other_warnings"]:
            log.warning("fit warning: %s", line)
    atomic_write_json(Path(output), record)
    fit_s = record.get("timings", {}).get("fit_s")
    log.info("end: status %s, fit %s s", record["status"], "-" if fit_s is None else f"{fit_s:.2f}")
    return record
