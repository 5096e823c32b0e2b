"""Fold results -> flat tables and per-cell summaries (mean and spread over folds)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from gpcbench.experiments.ledger import unreplaced_rows, write_ledger
from gpcbench.io import atomic_write_text

FOLD_COLUMNS = [
    "experiment", "dataset", "method", "label", "fold", "status", "message", "error", "nlpd",
    "nonfinite_nlpd", "brier", "n_test", "confusion", "n_train", "options", "standardized", "fit_s",
    "predict_s", "cpu_s", "converged", "n_iter", "n_chains", "convergence_warnings", "other_warnings",
    "log_evidence", "hyperparameters", "trace", "diagnostics", "seed", "data_sha256", "code_hash",
    "git_commit", "dirty", "packages", "host", "peak_rss_mb",
]


def fold_row(record: dict) -> dict:
    """One flat row of a fold result record."""
    metrics = record.get("metrics", {})
    timings = record.get("timings", {})
    convergence = record.get("convergence", {})
    provenance = record["provenance"]
    return {
        "experiment": record["experiment"], "dataset": record["dataset"],
        "method": record["method"], "label": record["label"], "fold": record["fold"],
        "status": record["status"], "message": record["message"].splitlines()[0] if record["message"] else "",
        "error": metrics.get("error"), "nlpd": metrics.get("nlpd"),
        "nonfinite_nlpd": metrics.get("nonfinite_nlpd"), "brier": metrics.get("brier"),
        "n_test": metrics.get("n_test"), "confusion": json.dumps(metrics.get("confusion")),
        "n_train": record.get("n_train"),
        "options": json.dumps(record.get("options", {}), sort_keys=True),
        "standardized": record.get("standardized"),
        "fit_s": timings.get("fit_s"), "predict_s": timings.get("predict_s"),
        "cpu_s": timings.get("cpu_s"),
        "converged": convergence.get("converged"), "n_iter": convergence.get("n_iter"),
        "n_chains": convergence.get("n_chains"),
        "convergence_warnings": json.dumps(convergence.get("warnings", [])),
        "other_warnings": json.dumps(convergence.get("other_warnings", [])),
        "log_evidence": record.get("log_evidence"),
        "hyperparameters": json.dumps(record.get("hyperparameters", {}), sort_keys=True),
        "trace": json.dumps(convergence.get("trace", [])),
        "diagnostics": json.dumps(convergence.get("diagnostics"), sort_keys=True),
        "seed": record["seed"], "data_sha256": provenance.get("data_sha256"),
        "code_hash": provenance.get("code_hash"), "git_commit": provenance.get("git_commit"),
        "dirty": str(provenance.get("git_commit") or "").endswith("+dirty"),
        "packages": json.dumps(provenance.get("packages", {}), sort_keys=True),
        "host": provenance.get("host"), "peak_rss_mb": provenance.get("peak_rss_mb"),
    }


#: ZDJ's samplers' convergence per cell (medians over runs of each run's ``diagnostics_``):
#: column -> dotted path in the fold's diagnostics. Split R-hat, bulk and tail ESS as
#: :mod:`gpcbench.mcmc.diagnostics` defines them; fold results recorded before the bulk / tail
#: ESS (an ``ess`` of the unsplit raw draws) have none, and their ESS columns are NaN.
SAMPLER_DIAGNOSTICS = {
    **{f"rhat_{q}": f"{q}.rhat" for q in ("u", "g", "eta", "n_gamma")},
    "rhat_probe": "probe_probability.max_rhat",
    **{f"ess_{kind}_{q}": f"{q}.ess_{kind}" for kind in ("bulk", "tail")
       for q in ("u", "g", "eta", "n_gamma")},
    "ess_bulk_probe": "probe_probability.min_ess_bulk",
    "ess_tail_probe": "probe_probability.min_ess_tail",
}


#: The columns of :func:`summarise` after experiment, dataset, method, in order.
SUMMARY_COLUMNS = [
    "label", "n_folds", "n_ok", "n_failed", "failures", "error_mean", "error_sd", "error_se",
    "errors_mean", "n_test_mean", "nlpd_mean", "brier_mean", "fit_s_mean", "fit_s_total",
    "converged_fraction", "n_optimiser_warnings", "n_nonfinite_nlpd", *SAMPLER_DIAGNOSTICS,
    "burn_in_mean", "burn_in_undefined",
]


def trace_burn_in(text, quantity: str) -> float:
    """Brooks' burn-in (in sweeps) of ``quantity`` in a fold's convergence trace (chain 1,
    recorded every few sweeps), thinned further to about two autocorrelation times of the
    trace's second half, as the hairiness criterion wants nearly independent draws
    (:func:`gpcbench.mcmc.cusum.brooks_burn_in`). NaN where the trace lacks the quantity, is
    too short, or never settles.

    The samplers' own ``brooks_burn_in`` diagnostics thin by one autocorrelation time measured
    on the kept draws; on a chain pinned at k_max (Mushrooms, excursions below it lasting 3-4
    sweeps) that leaves enough dependence for the runs test to fail at N ~ 1,400 draws and the
    estimate jumps between NaN and 4,700 sweeps with the thinning, while thinning by two
    autocorrelation times or more gives 400 (docs/zhang2011_sampler.md)."""
    from gpcbench.mcmc.cusum import brooks_burn_in
    from gpcbench.mcmc.diagnostics import autocorrelation_time

    trace = json.loads(text) if isinstance(text, str) else None
    rows = [row for row in trace or [] if row.get(quantity) is not None]
    if len(rows) < 20:
        return np.nan
    values = np.array([row[quantity] for row in rows], dtype=float)
    spacing = rows[1]["sweep"] - rows[0]["sweep"]
    half = values[values.size // 2:]
    thin = max(1, int(np.ceil(2.0 * autocorrelation_time(half))))
    return brooks_burn_in(values, thin=thin) * spacing


def diagnostic_value(text, path: str) -> float:
    """The value at a dotted ``path`` of a fold's sampler diagnostics (NaN where absent)."""
    value = json.loads(text) if isinstance(text, str) else None
    for key in path.split("."):
        value = value.get(key) if isinstance(value, dict) else None
    return np.nan if value is None else float(value)


def method_seconds(folds: pd.DataFrame, timing: str = "fit_s") -> pd.Series:
    """Per fold, a timing (``fit_s`` or ``cpu_s``) of the method on its own: the job's, plus
    that of the chains it took from the fold's FBGKM job (SGPC,
    :mod:`gpcbench.experiments.shared_chains`; the diagnostics' ``chains``), which the job's
    own timing, the protocol's cost, leaves out."""
    own = pd.to_numeric(folds[timing], errors="coerce").astype(float)
    if "diagnostics" not in folds:
        return own
    shared = folds["diagnostics"].map(lambda text: diagnostic_value(text, f"chains.{timing}"))
    return own + shared.astype(float).fillna(0.0)


def _sampler_convergence(ok: pd.DataFrame) -> dict:
    """Median R-hat and ESS of each traced quantity, and the Brooks burn-in: its mean over the
    runs where it is defined and the count of runs where it is not (NaN for non-samplers)."""
    texts = ok["diagnostics"] if "diagnostics" in ok else pd.Series(None, index=ok.index)

    def values(path: str) -> pd.Series:  # float also where no fold succeeded (empty column)
        return texts.map(lambda t: diagnostic_value(t, path)).astype(float)

    burn = values("brooks_burn_in")
    sampled = values("u.rhat").notna()
    return {
        **{column: values(path).median() for column, path in SAMPLER_DIAGNOSTICS.items()},
        "burn_in_mean": burn.mean(),
        "burn_in_undefined": float((sampled & burn.isna()).sum()) if sampled.any() else np.nan,
    }


def _flagged_folds(ok: pd.DataFrame) -> dict:
    """How many successful folds recorded optimiser (convergence) warnings and how many a
    non-finite NLPD; NaN for fold tables that predate the columns."""
    warned = (ok["convergence_warnings"].map(lambda text: isinstance(text, str) and text != "[]")
              .astype(bool)  # bool also where no fold succeeded (empty column)
              if "convergence_warnings" in ok else None)
    nonfinite = ok["nonfinite_nlpd"].isin([True, "True"]) if "nonfinite_nlpd" in ok else None
    return {"n_optimiser_warnings": np.nan if warned is None else int(warned.sum()),
            "n_nonfinite_nlpd": np.nan if nonfinite is None else int(nonfinite.sum())}


def mean_sd_se(values: np.ndarray) -> tuple[float, float, float]:
    """Mean, sample s.d. and standard error of the mean of one cell's fold values (NaN where
    there are too few: no values for the mean, fewer than two for the others)."""
    n = values.size
    sd = float(np.std(values, ddof=1)) if n > 1 else np.nan
    return (float(values.mean()) if n else np.nan), sd, (sd / np.sqrt(n) if n > 1 else np.nan)


def collect_folds(result_paths, output: str | Path, ledger: str | Path | None = None,
                  config_folds: dict | None = None) -> pd.DataFrame:
    """Read fold result JSONs and write them as one CSV (atomically), in the order given (the
    config's: data set, method, fold); also gzipped as the committed ``ledger`` if given,
    followed by the rows the ledger already holds of folds these results do not replace (a
    partial run's folds neither on disk nor current), so that no run drops a fold result from
    the ledger. With ``config_folds`` (entry -> method -> number of folds, the experiment's
    protocol) only rows of folds the config still asks for are kept: a method or data set
    taken out of the config leaves the ledger with the next collect."""
    rows = [fold_row(json.loads(Path(p).read_text())) for p in result_paths]
    frame = pd.DataFrame(rows, columns=FOLD_COLUMNS)
    text = frame.to_csv(index=False)
    if ledger is not None:
        replaced = {(row["dataset"], row["method"], str(row["fold"])) for row in rows}
        wanted = None if config_folds is None else {
            (entry, method, str(fold)) for entry, methods in config_folds.items()
            for method, count in methods.items() for fold in range(count)}
        ledger_text = text + unreplaced_rows(ledger, FOLD_COLUMNS, replaced, wanted)
    atomic_write_text(Path(output), text)
    if ledger is not None:
        write_ledger(ledger_text, ledger)
    return frame


def summarise(folds: pd.DataFrame) -> pd.DataFrame:
    """One row per (experiment, data set, method): mean, s.d. and s.e. of the error over the
    successful folds, NLPD, Brier, timings, convergence (the fraction of converged folds, the
    folds with optimiser warnings) and counts of failed folds and of non-finite NLPDs."""
    def cell(group: pd.DataFrame) -> pd.Series:
        ok = group[group["status"] == "ok"]
        errors = ok["error"].dropna().to_numpy(dtype=float)
        mean, sd, se = mean_sd_se(errors)
        failed = group[group["status"] != "ok"]
        return pd.Series({
            "label": group["label"].iloc[0],
            "n_folds": len(group), "n_ok": len(ok), "n_failed": len(failed),
            "failures": "; ".join(f"fold {r.fold}: {r.status} ({r.message})"
                                  for r in failed.itertuples()),
            "error_mean": mean, "error_sd": sd, "error_se": se,
            "errors_mean": float((ok["error"] * ok["n_test"]).mean()) if errors.size else np.nan,
            "n_test_mean": float(ok["n_test"].mean()) if errors.size else np.nan,
            "nlpd_mean": pd.to_numeric(ok["nlpd"], errors="coerce").mean(),
            "brier_mean": pd.to_numeric(ok["brier"], errors="coerce").mean(),
            "fit_s_mean": method_seconds(ok).mean(), "fit_s_total": method_seconds(ok).sum(),
            "converged_fraction": ok["converged"].astype(float).mean() if len(ok) else np.nan,
            **_flagged_folds(ok), **_sampler_convergence(ok),
        })

    keys = ["experiment", "dataset", "method"]
    summary = folds.groupby(keys, sort=False).apply(cell, include_groups=False).reset_index()
    return summary.reindex(columns=keys + SUMMARY_COLUMNS)  # the columns also with no folds
