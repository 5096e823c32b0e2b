"""The numbers of a report table: per-fold metric values, reproduced beside published cells, the
two-standard-error flag, pooled confusion rates, and the notes and completeness lines beside
them.

A reproduced cell is flagged when it differs from the published value by more than two
combined standard errors: the published spread converted to a standard error (K&G: s.e. over
10 folds; ZDJ: s.d. over 20 partitions) combined with ours, or, for tables printed without a
spread, the binomial standard error of an error rate on the test set.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from gpcbench.config import entry_data, entry_methods, entry_protocol, n_folds
from gpcbench.experiments.aggregate import (diagnostic_value, mean_sd_se, method_seconds,
                                            trace_burn_in)
from gpcbench.experiments.ledger import is_current

ERROR_METRICS = ("error", "error_percent", "errors")


def metric_values(folds: pd.DataFrame, metric: str) -> pd.Series:
    """Per-fold value of a table's metric (successful folds; NaN elsewhere).

    ``error`` (fraction), ``error_percent``, ``errors`` (count on the test set),
    ``time_s`` (wall seconds of fit + predict), ``cpu_s`` (the process's CPU seconds of fit +
    predict; NaN for records older than the field), ``sweeps_per_s`` (a sampler's sweeps, all
    chains, per wall second of fit); each of the three the method's on its own, counting the
    chains SGPC took from FBGKM (:func:`~gpcbench.experiments.aggregate.method_seconds`), ``log_evidence`` (the method's
    approximate log marginal likelihood), or
    ``hyperparameter:<name>[<index>]`` (a fitted hyperparameter, e.g.
    ``hyperparameter:inverse_lengthscale[1]``), ``diagnostic:<key>[.<key>...]`` (a value of
    a sampler's recorded diagnostics, e.g. ``diagnostic:brooks_burn_in``), or
    ``trace_burn_in:<quantity>`` (Brooks' burn-in of a quantity of the fold's convergence
    trace, :func:`~gpcbench.experiments.aggregate.trace_burn_in`).
    """
    if metric == "error":
        return folds["error"].astype(float)
    if metric == "error_percent":
        return 100.0 * folds["error"].astype(float)
    if metric == "errors":
        return folds["error"].astype(float) * folds["n_test"].astype(float)
    if metric == "time_s":
        return method_seconds(folds) + folds["predict_s"].astype(float)
    if metric == "cpu_s":
        return method_seconds(folds, "cpu_s")
    if metric == "sweeps_per_s":
        return _sweeps_per_second(folds)
    if metric == "log_evidence":
        return pd.to_numeric(folds["log_evidence"], errors="coerce")
    if metric.startswith("hyperparameter:"):
        return folds["hyperparameters"].map(lambda text: _hyperparameter(text, metric))
    if metric.startswith("diagnostic:"):
        return folds["diagnostics"].map(lambda text: diagnostic_value(text, metric.split(":", 1)[1]))
    if metric.startswith("trace_burn_in:"):
        return folds["trace"].map(lambda text: trace_burn_in(text, metric.split(":", 1)[1]))
    raise ValueError(f"unknown table metric '{metric}'")


def _sweeps_per_second(folds: pd.DataFrame) -> pd.Series:
    """n_iter (sweeps per chain) x n_chains (the fitted estimator's, as the fold recorded it)
    / fit seconds (:func:`~gpcbench.experiments.aggregate.method_seconds`); NaN for methods
    without chains and folds recorded before ``n_chains``."""
    n_iter = pd.to_numeric(folds["n_iter"], errors="coerce")
    n_chains = pd.to_numeric(folds.get("n_chains", pd.Series(np.nan, index=folds.index)),
                             errors="coerce")
    return n_iter * n_chains / method_seconds(folds)


def _hyperparameter(text, metric: str) -> float:
    expr = metric.split(":", 1)[1]
    name, _, index = expr.partition("[")
    value = json.loads(text).get(name) if isinstance(text, str) else None
    if value is None:
        return np.nan
    if index:  # a shared (scalar) value stands for every feature
        values = np.atleast_1d(value)
        value = values[0] if values.size == 1 else values[int(index.rstrip("]"))]
    return float(value)


def published_cells(table: dict, published_dir: Path) -> pd.DataFrame:
    """Published (dataset entry, method, mean, spread) rows of one table, in its own units.

    A row belongs to the entry whose printed name (``table["datasets"]``) equals, as a string,
    the row's value in the ``published.key`` column (default ``dataset``; e.g. ``n_train``
    or ``k_max`` for a sweep printed one row per setting). A file without the default
    ``dataset`` column belongs to the table's first data set; an explicit ``key`` that is not
    a column of the file raises ValueError. With ``published.rate`` = N the file's ``mean``
    is the time of N units of work (e.g. 10,000 sweeps) and the cell shows N / time.
    """
    spec = table.get("published")
    if not spec:
        return pd.DataFrame(columns=["entry", "method", "pub_mean", "pub_spread"])
    key = spec.get("key", "dataset")
    raw = pd.read_csv(Path(published_dir) / spec["file"], dtype={"method": str, key: str})
    if "key" in spec and key not in raw.columns:
        raise ValueError(f"published.key '{key}' is not a column of {spec['file']}")
    for column, value in spec.get("filter", {}).items():
        kept = value if isinstance(value, list) else [value]
        raw = raw[raw[column].astype(str).isin([str(v) for v in kept])]
    printed_to_entry = {printed: entry for entry, printed in table["datasets"].items()}
    rows = []
    for record in raw.to_dict("records"):
        if "columns" in spec:
            for entry, column in spec["columns"].items():
                rows.append((entry, record["method"], record.get(column), None))
            continue
        if key in raw.columns:
            entry = printed_to_entry.get(record[key])
            if entry is None:
                continue
        else:
            entry = next(iter(table["datasets"]))
        spread = record.get(spec["spread"]) if spec.get("spread") else None
        rows.append((entry, record["method"], record.get(spec["mean"]), spread))
    frame = pd.DataFrame(rows, columns=["entry", "method", "pub_mean", "pub_spread"])
    frame["pub_mean"] = pd.to_numeric(frame["pub_mean"], errors="coerce")
    frame["pub_spread"] = pd.to_numeric(frame["pub_spread"], errors="coerce")
    if "rate" in spec:
        frame["pub_mean"] = spec["rate"] / frame["pub_mean"]
    return frame


def named_published_cells(name: str, table: dict, published_dir) -> pd.DataFrame:
    """:func:`published_cells` of the config table ``name``, its errors naming the table."""
    try:
        return published_cells(table, Path(published_dir))
    except ValueError as exc:
        raise ValueError(f"table '{name}': {exc}") from None


def _values(table: dict, folds: pd.DataFrame) -> pd.Series:
    """Per-fold value of the table's metric, or of a method's own (``method_metrics``)."""
    own = table.get("method_metrics", {})
    chosen = folds["method"].map(lambda method: own.get(method, table["metric"]))
    values = pd.Series(np.nan, index=folds.index, dtype=float)
    for metric in chosen.unique():
        values[chosen == metric] = metric_values(folds[chosen == metric], metric).astype(float)
    return values


def _table_folds(table: dict, folds: pd.DataFrame) -> pd.DataFrame:
    """The folds a table shows: its experiment, its data sets, its ``methods`` if given."""
    mine = folds[(folds["experiment"] == table["experiment"])
                 & folds["dataset"].isin(table["datasets"])]
    return mine[mine["method"].isin(table["methods"])] if "methods" in table else mine


def _marked_folds(table: dict, folds: pd.DataFrame, head_hashes: dict | None,
                  config: dict | None, data_sha256: dict | None) -> pd.DataFrame:
    """:func:`_table_folds` with ``stale``: made by other code than ``head_hashes`` (method
    -> code hash at HEAD) or otherwise than ``config`` now asks (never without
    ``head_hashes``; :func:`~gpcbench.experiments.ledger.is_current`)."""
    mine = _table_folds(table, folds).copy()
    mine["stale"] = (~is_current(mine, head_hashes, config, data_sha256=data_sha256)
                     if head_hashes is not None else False)
    return mine


def table_cells(table: dict, folds: pd.DataFrame, published: pd.DataFrame,
                expected_folds: dict | None = None, head_hashes: dict | None = None,
                config: dict | None = None, data_sha256: dict | None = None) -> pd.DataFrame:
    """Long table: one row per (data set, method) with ours (mean, spread, s.e. over the
    successful folds), the published value and the flag. ``expected_folds`` (entry -> the
    protocol's fold count) fills ``n_expected``, so a cell built from a partial run says so;
    ``head_hashes`` (method -> code hash at HEAD) fills ``n_stale``, the folds made by other
    code (0 without it) or, given ``config`` (and ``data_sha256``, processed data set name ->
    content SHA-256), with other options, standardisation, seed or data than the config's
    jobs now have (:func:`~gpcbench.experiments.ledger.is_current`)."""
    names = table.get("method_names", {})
    mine = _marked_folds(table, folds, head_hashes, config, data_sha256)
    mine["value"] = _values(table, mine).where(mine["status"] == "ok")
    # a method with no value anywhere in the table has no such metric (k-NN has no burn-in),
    # unless it records diagnostics; a successful fold of a method that has the metric but no
    # value for it is counted as undefined (a chain that never settled)
    recorded = mine["value"].notna()
    if table["metric"].startswith(("diagnostic:", "trace_burn_in:")):
        recorded |= mine["diagnostics"].map(
            lambda text: isinstance(text, str) and text != "null").astype(bool)
    applies = recorded.groupby(mine["label"]).any()
    rows = []
    for (entry, label), group in mine.groupby(["dataset", "label"], sort=False):
        values = group["value"].dropna().to_numpy(dtype=float)
        mean, sd, se = mean_sd_se(values)
        failed = group[group["status"] != "ok"]
        if not applies[label] and failed.empty:
            continue
        rows.append({
            "entry": entry, "method": names.get(label, label), "ours": mean,
            "ours_spread": {"se": se, "sd": sd}.get(table.get("spread", "se"), np.nan),
            "ours_se": se,
            "n_ok": len(group) - len(failed), "n_folds": len(group),
            "n_expected": (expected_folds or {}).get(entry, np.nan),
            "n_undefined": len(group) - len(failed) - values.size,
            "n_stale": int(group["stale"].sum()),
            "n_test": group["n_test"].astype(float).mean(),
            "failures": _failures(failed),
        })
    cells = pd.DataFrame(rows, columns=["entry", "method", "ours", "ours_spread", "ours_se",
                                        "n_ok", "n_folds", "n_expected", "n_undefined",
                                        "n_stale", "n_test", "failures"])
    # rows: the published table's methods in its order, then ours it does not print, in config order
    order = list(dict.fromkeys([*published["method"], *cells["method"]]))
    cells = cells.merge(published, on=["entry", "method"], how="outer")
    cells["row"] = cells["method"].map({method: i for i, method in enumerate(order)})
    return _flagged(table, cells)


def expected_fold_counts(config: dict, table: dict) -> dict:
    """Entry -> the fold count its protocol gives, for every data set of a config table."""
    spec = config["experiments"][table["experiment"]]
    return {entry: n_folds(entry_protocol(spec, entry)) for entry in table["datasets"]}


def _failures(failed: pd.DataFrame) -> str:
    return "; ".join(f"fold {r.fold}: {r.status}" for r in failed.itertuples())


def _flagged(table: dict, cells: pd.DataFrame) -> pd.DataFrame:
    """``cells`` with the flag of :func:`_differs` and the printed data set name in front."""
    cells["flag"] = [_differs(table, r) for r in cells.itertuples()]
    cells.insert(0, "dataset", cells["entry"].map(table["datasets"]))
    return cells


def _differs(table: dict, cell) -> bool:
    """|ours - published| > 2 combined standard errors (False when either is missing)."""
    combined = combined_se(table, cell)
    return bool(not np.isnan(combined) and abs(cell.ours - cell.pub_mean) > 2 * combined)


def error_scale(metric: str, n_test: float) -> float:
    """What an error metric's value is out of: 1 (a rate), 100 (percent) or the test rows
    (a count of errors)."""
    return {"error": 1.0, "error_percent": 100.0, "errors": n_test}[metric]


def is_partial(cell) -> bool:
    """The cell holds fewer runs than its protocol gives (``n_folds`` < ``n_expected``)."""
    return bool(getattr(cell, "n_folds", 1) < getattr(cell, "n_expected", np.nan))


def combined_se(table: dict, cell) -> float:
    """The standard error of ours - published for one cell (NaN when either is missing or
    the test is undefined).

    A cell from fewer runs than its protocol's (a partial run: ``n_folds`` < ``n_expected``)
    is not tested. The published spread is turned into a standard error (``published.n`` values behind an
    s.d., which the config schema requires of a table with ``spread: sd``: ZDJ's 20
    partitions, K&G's 10 repetitions); for error metrics printed without a
    spread, each side gets the binomial standard error of an error rate on the test set.
    """
    if pd.isna(cell.ours) or pd.isna(cell.pub_mean) or is_partial(cell):
        return np.nan
    metric, spread_kind = table["metric"], table.get("spread", "se")
    if spread_kind == "none" or pd.isna(cell.ours_se):
        if metric not in ERROR_METRICS or pd.isna(cell.n_test) or cell.n_test == 0:
            return np.nan
        scale = error_scale(metric, cell.n_test)
        p = np.clip(cell.ours / scale, 1e-3, 1 - 1e-3)
        return float(np.sqrt(2 * p * (1 - p) / cell.n_test) * scale)
    pub_se = cell.pub_spread
    if spread_kind == "sd" and not pd.isna(pub_se):
        pub_se = pub_se / np.sqrt(table["published"]["n"])
    return float(np.sqrt(cell.ours_se ** 2 + (0.0 if pd.isna(pub_se) else pub_se ** 2)))


def published_confusion(table: dict, published_dir: Path) -> pd.DataFrame:
    """Published rates of a confusion table: (entry, method, true_class, predicted_class,
    pub_mean). The file has columns ``true_class``, ``predicted_class`` and the ``mean``
    column; its rates belong to ``published.method`` on the table's first data set."""
    columns = ["entry", "method", "true_class", "predicted_class", "pub_mean"]
    spec = table.get("published")
    if not spec:
        return pd.DataFrame(columns=columns)
    raw = pd.read_csv(Path(published_dir) / spec["file"])
    return pd.DataFrame({"entry": next(iter(table["datasets"])), "method": spec["method"],
                         "true_class": raw["true_class"].astype(str),
                         "predicted_class": raw["predicted_class"].astype(str),
                         "pub_mean": pd.to_numeric(raw[spec["mean"]], errors="coerce")},
                        columns=columns)


def confusion_rates(matrices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-normalised confusion of P folds' J x J count matrices, shape (P, J, J): the counts
    summed over folds, each true-class row divided by its total (NaN for a row without test
    points), and the standard error over folds of the per-fold row rates (NaN unless P > 1)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        pooled = matrices.sum(axis=0)
        rates = pooled / pooled.sum(axis=1, keepdims=True)
        per_fold = matrices / matrices.sum(axis=2, keepdims=True)
    n = matrices.shape[0]
    se = (np.std(per_fold, axis=0, ddof=1) / np.sqrt(n) if n > 1
          else np.full(rates.shape, np.nan))
    return rates, se


def confusion_cells(table: dict, folds: pd.DataFrame, published: pd.DataFrame,
                    class_names: dict[str, list[str]], expected_folds: dict | None = None,
                    head_hashes: dict | None = None, config: dict | None = None,
                    data_sha256: dict | None = None) -> pd.DataFrame:
    """Long confusion table: one row per (data set, method, true class, predicted class) with
    our rate and its s.e. over the successful folds (:func:`confusion_rates`), the published
    rate and the flag.

    ``class_names`` maps each of the table's entries to its data set's class names in class
    index order (the order of the recorded matrices' rows and columns); ``expected_folds``,
    ``head_hashes``, ``config`` and ``data_sha256`` fill ``n_expected`` and ``n_stale`` as in
    :func:`table_cells`.
    """
    names = table.get("method_names", {})
    mine = _marked_folds(table, folds, head_hashes, config, data_sha256)
    order = {m: i for i, m in enumerate(table.get("methods", dict.fromkeys(mine["method"])))}
    mine = mine.sort_values("method", key=lambda m: m.map(order), kind="stable")
    rows = []
    for (entry, method), group in mine.groupby(["dataset", "method"], sort=False):
        ok = group[group["status"] == "ok"]
        recorded = ok.get("confusion", pd.Series(None, index=ok.index, dtype=object))
        if not recorded.map(lambda text: isinstance(text, str) and text != "null").all():
            raise ValueError(f"fold results of {method} on {entry} have no confusion matrix "
                             "(run before it was recorded): rerun them")
        classes = class_names[entry]
        matrices = np.array([json.loads(text) for text in recorded],
                            dtype=float).reshape(len(ok), len(classes), len(classes))
        rates, se = confusion_rates(matrices)
        failed = group[group["status"] != "ok"]
        for t, true_class in enumerate(classes):
            for p, predicted in enumerate(classes):
                rows.append({
                    "entry": entry, "method": method, "label": names.get(
                        group["label"].iloc[0], group["label"].iloc[0]),
                    "true_class": true_class, "predicted_class": predicted,
                    "ours": rates[t, p], "ours_spread": se[t, p], "ours_se": se[t, p],
                    "n_ok": len(ok), "n_folds": len(group),
                    "n_expected": (expected_folds or {}).get(entry, np.nan),
                    "n_stale": int(group["stale"].sum()),
                    "n_test": float(matrices[:, t].sum()),
                    "failures": _failures(failed),
                })
    cells = pd.DataFrame(rows, columns=["entry", "method", "label", "true_class",
                                        "predicted_class", "ours", "ours_spread", "ours_se",
                                        "n_ok", "n_folds", "n_expected", "n_stale", "n_test",
                                        "failures"])
    unknown = set(published["true_class"]) | set(published["predicted_class"])
    unknown -= {c for entry in published["entry"].unique() for c in class_names[entry]}
    if unknown:
        raise ValueError(f"published classes {sorted(unknown)} are not classes of the data set")
    cells = cells.merge(published.assign(pub_spread=np.nan),
                        on=["entry", "method", "true_class", "predicted_class"], how="left")
    return _flagged(table, cells)


def error_fractions(name: str, table: dict, cells: pd.DataFrame) -> pd.DataFrame:
    """Cells of an error-metric table with ours, the published value and two combined standard
    errors (:func:`combined_se`) as error rates (``ours_fraction``, ``pub_fraction``,
    ``two_se_fraction``)."""
    denom = cells["n_test"].astype(float).map(lambda n: error_scale(table["metric"], n))
    two_se = pd.Series([2 * combined_se(table, cell) for cell in cells.itertuples()],
                       index=cells.index, dtype=float)
    return cells.assign(table=name, ours_fraction=cells["ours"] / denom,
                        pub_fraction=cells["pub_mean"] / denom,
                        two_se_fraction=two_se / denom)


def entry_notes(config: dict, table: dict, data_meta: dict) -> list[str]:
    """Per column its data set's substitute note (once per data set, at its first column,
    naming every column that uses it) and the entry's ``note`` (the table's own notes:
    :mod:`gpcbench.experiments.report.notes`)."""
    notes = []
    experiment = config["experiments"][table["experiment"]]
    data = {entry: entry_data(experiment, entry) for entry in table["datasets"]}
    for entry, printed in table["datasets"].items():
        spec = experiment["datasets"][entry]
        meta = data_meta.get(data[entry], {})
        sharing = [e for e in data if data[e] == data[entry]]
        if meta.get("substitute") and sharing[0] == entry:
            columns = ", ".join(table["datasets"][e] for e in sharing)
            notes.append(f"{columns}: {meta['substitute']} — "
                         f"{meta.get('differences', '')}".rstrip(" —"))
        if spec.get("note"):
            notes.append(f"{printed}: {spec['note']}")
    return notes


#: Cells with missing folds and no ``pending`` reason that the completeness list names.
NAMED_NOT_RUN = 10


def completeness(config: dict, folds: pd.DataFrame) -> list[str]:
    """One line per experiment whose fold results are not all in (a partial run's report), then
    one per cell (data set, method) with missing folds and the reason its entry's ``pending``
    gives; cells without a reason are not run yet, the first :data:`NAMED_NOT_RUN` of them
    named and the rest counted."""
    found = folds.groupby(["experiment", "dataset", "method"]).size()
    lines = []
    for name, spec in config["experiments"].items():
        have, total, cells, unexplained = 0, 0, [], []
        for entry in spec["datasets"]:
            expected = n_folds(entry_protocol(spec, entry))
            pending = spec["datasets"][entry].get("pending", {})
            for method in entry_methods(spec, entry):
                count = min(int(found.get((name, entry, method), 0)), expected)
                have, total = have + count, total + expected
                if count == expected:
                    continue
                missing = f"  - {entry} / {method}: {expected - count} of {expected} folds missing"
                if method in pending:
                    cells.append(f"{missing} — {pending[method]}")
                else:
                    unexplained.append(f"{missing} — not run yet")
        if have < total:
            lines.append(f"- {name}: {have} of {total} fold results; cells of missing folds "
                         "show — or fewer folds")
            lines += cells + unexplained[:NAMED_NOT_RUN]
            if len(unexplained) > NAMED_NOT_RUN:
                lines.append(f"  - {len(unexplained) - NAMED_NOT_RUN} other cells with missing "
                             "folds: not run yet")
    return lines


def data_sources(meta: dict) -> str:
    """'package version' (or URL) of every raw set a processed data set was built from."""
    if meta.get("kind") == "generator":
        return f"generator (seed {meta.get('seed')})"
    parts = []
    for raw in meta.get("raw_sets", {}).values():
        origin = f"{raw['package']} {raw.get('version', '')}" if raw.get("package") else raw.get("url", "")
        parts.append(f"{origin.strip()} ({raw.get('source', '')})")
    return "; ".join(parts)
