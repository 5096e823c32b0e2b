"""Compare every accuracy cell of two states of the fold ledger, fold by fold.

For each (experiment, data set, method) cell it pairs the folds that succeeded in both states
(same partition: the same fold index of the same split) and reports the mean test error before
and after, their mean paired difference d, its standard error sd(d_i) / sqrt(k) over the k
paired folds, and z = d / s.e. Where the code changed only the Monte Carlo of a sampler (a new
chain from the same seed), z is about N(0, 1) and |z| > 2 in about 5 % of the cells; a
deterministic method whose results did not change has d = 0. Cells whose folds were made from
other data (the data sets' SHA-256 differ) or other options are listed apart: a move there is
the change itself, not Monte Carlo; so are the cells of ``--redefined`` methods (a method
whose name now stands for another algorithm, e.g. ZDJ Table 13's IVM).

``--before REV`` reads ``reports/results/<experiment>.csv.gz`` at git revision REV; the after
state is the ledger in ``--root`` (default: this tree) with the fold results of a run under way
in ``--root``/results/ taking precedence, fold by fold.

Usage (from the repository root): python benchmarks/compare_ledgers.py --before 402e445
       [--root /path/to/worktree] [--top 15] [--redefined ivm] [EXPERIMENT ...]
"""

import argparse
import io
import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd

from fold_ledger import fold_ledger

from gpcbench.config import read_config_file
from gpcbench.experiments.ledger import ledger_path

COLUMNS = ["dataset", "method", "fold", "status", "error", "data_sha256", "options"]


def ledger_at(revision: str, experiment: str) -> pd.DataFrame:
    """The ledger of ``experiment`` at git ``revision`` (empty where it had none)."""
    path = ledger_path(experiment, Path(".")).as_posix()
    shown = subprocess.run(["git", "show", f"{revision}:{path}"], capture_output=True)
    if shown.returncode:
        return pd.DataFrame(columns=COLUMNS)
    return pd.read_csv(io.BytesIO(shown.stdout), compression="gzip", usecols=COLUMNS)


def _ok(frame: pd.DataFrame) -> pd.DataFrame:
    ok = frame[(frame["status"] == "ok") & frame["error"].notna()].copy()
    ok["fold"] = ok["fold"].astype(int)
    ok["options"] = ok["options"].map(lambda text: json.dumps(json.loads(text), sort_keys=True)
                                      if isinstance(text, str) else text)
    return ok


def _z(d: float, se: float) -> float:
    """d / se; 0 where nothing moved, inf where every fold moved alike, NaN for one fold."""
    if np.isnan(se):
        return float("nan")
    return d / se if se > 0 else (0.0 if d == 0 else float(np.copysign(np.inf, d)))


def compare(before: pd.DataFrame, after: pd.DataFrame) -> pd.DataFrame:
    """One row per cell with paired folds: k, mean errors, d, s.e., z, and whether the data
    or the options differ between the states."""
    pairs = _ok(before).merge(_ok(after), on=["dataset", "method", "fold"],
                              suffixes=("_before", "_after"))
    rows = []
    for (dataset, method), cell in pairs.groupby(["dataset", "method"], sort=False):
        d = cell["error_after"] - cell["error_before"]
        se = float(d.std(ddof=1) / np.sqrt(len(d))) if len(d) > 1 else float("nan")
        mean = float(d.mean())
        rows.append({
            "dataset": dataset, "method": method, "k": len(d),
            "before": float(cell["error_before"].mean()), "after": float(cell["error_after"].mean()),
            "d": mean, "se": se, "z": _z(mean, se),
            "data_changed": bool((cell["data_sha256_before"] != cell["data_sha256_after"]).any()),
            "options_changed": bool((cell["options_before"] != cell["options_after"]).any()),
        })
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiments", nargs="*", help="default: every experiment")
    parser.add_argument("--before", required=True, help="git revision of the earlier ledger")
    parser.add_argument("--root", type=Path, default=Path("."))
    parser.add_argument("--config", type=Path, default=Path("config/config.yaml"))
    parser.add_argument("--top", type=int, default=15, help="largest |z| listed")
    parser.add_argument("--redefined", nargs="*", default=[],
                        help="methods whose name now stands for another algorithm")
    args = parser.parse_args()
    experiments = args.experiments or list(read_config_file(args.config)["experiments"])
    frames = []
    for experiment in experiments:
        cells = compare(ledger_at(args.before, experiment), fold_ledger(args.root, experiment, COLUMNS))
        frames.append(cells.assign(experiment=experiment))
    cells = pd.concat(frames, ignore_index=True)
    cells["redefined"] = cells["method"].isin(args.redefined)
    changed_mask = cells["data_changed"] | cells["options_changed"] | cells["redefined"]
    same = cells[~changed_mask]
    moved = same[same["z"].abs() > 2]
    identical = int((same["d"] == 0).sum())
    print(f"{len(cells)} cells with paired folds; {len(same)} on the same data, options and "
          f"method: "
          f"{identical} unchanged (d = 0), {len(moved)} with |z| > 2 "
          f"({0.05 * (len(same) - identical):.1f} expected by chance among the others), "
          f"{int((same['z'].abs() > 3).sum())} with |z| > 3; "
          f"{int(same['z'].isna().sum())} of one fold only (no s.e.)")
    pd.set_option("display.width", 160)
    columns = ["experiment", "dataset", "method", "k", "before", "after", "d", "se", "z"]
    top = same.reindex(same["z"].abs().sort_values(ascending=False).index).head(args.top)
    print(f"\nLargest |z| (same data, options and method):\n"
          f"{top[columns].to_string(index=False, float_format=lambda x: f'{x:.4f}')}")
    changed = cells[changed_mask]
    if len(changed):
        flags = ["data_changed", "options_changed", "redefined"]
        print(f"\nOther data, options or method ({len(changed)} cells; the move is the change):\n"
              + changed[columns + flags].to_string(index=False,
                                                   float_format=lambda x: f"{x:.4f}"))


if __name__ == "__main__":
    main()
