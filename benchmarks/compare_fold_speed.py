"""CPU time of one fold job under the code of two commits, run one after the other on this
machine: the speed-up a change made, free of the machine factor that separates ledger rows
measured on different hosts (docs/performance.md).

It checks the ``--before`` commit out into a scratch worktree and runs the fold job
(``gpcbench run-fold``, fitting in the job's own process) with the options, seed and
standardisation of its row in this tree's committed ledger, on this tree's data and splits
(``data/``, made by the pipeline's fetch and split rules), alternating before / after for
``--repeats`` rounds after one warm-up round (numba compiles into each tree's cache). It prints
each round's CPU seconds (the fold record's fit + predict), test errors, and the ratio of the
medians, before / after. One BLAS thread.

Usage (from the repository root): python benchmarks/compare_fold_speed.py --before 402e445
       zhang2011_newsgroups n800 fbgkm [--fold 3] [--repeats 2]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from fold_ledger import fold_ledger

from gpcbench.config import entry_data, read_config_file


def ledger_row(experiment: str, entry: str, method: str, fold: int) -> dict:
    """The committed ledger's row of the fold: its options, seed and standardisation."""
    rows = fold_ledger(Path("."), experiment, ["dataset", "method", "fold", "options", "seed",
                                               "standardized"])
    row = rows[(rows["dataset"] == entry) & (rows["method"] == method) & (rows["fold"] == fold)]
    if row.empty:
        sys.exit(f"no ledger row for {experiment}/{entry}/{method} fold {fold}")
    return row.iloc[0].to_dict()


def run_fold(tree: Path, args, row: dict, data: Path, splits: Path, output: Path) -> dict:
    """Run the fold job with the code of ``tree``; its cpu_s and test error."""
    command = [sys.executable, "-m", "gpcbench.cli", "run-fold", "--experiment",
               args.experiment, "--entry", args.entry, "--method", args.method, "--fold",
               str(args.fold), "--data", str(data), "--splits", str(splits), "--output",
               str(output), "--options", row["options"], "--seed", str(int(row["seed"])),
               "--threads", "1", *(["--standardize"] if row["standardized"] else [])]
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "GPCBENCH_FOLD_SERVER": "0",
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    subprocess.run(command, cwd=tree, env=env, check=True, stderr=subprocess.DEVNULL)
    record = json.loads(output.read_text())
    if record["status"] != "ok":
        sys.exit(f"{tree}: fold failed: {record['message']}")
    return {"cpu_s": record["timings"]["cpu_s"], "error": record["metrics"].get("error")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment")
    parser.add_argument("entry")
    parser.add_argument("method")
    parser.add_argument("--before", required=True, help="the commit to compare with (git rev)")
    parser.add_argument("--fold", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=2, help="timed rounds after the warm-up")
    parser.add_argument("--config", default="config/config.yaml")
    args = parser.parse_args()
    spec = read_config_file(Path(args.config))["experiments"][args.experiment]
    data = Path("data/processed", f"{entry_data(spec, args.entry)}.npz")
    splits = Path("data/splits", args.experiment, f"{args.entry}.json")
    if not (data.is_file() and splits.is_file()):
        sys.exit(f"{data} or {splits} is missing: make them with "
                 f"`snakemake --cores 2 -- {data} {splits}`")
    data, splits = data.resolve(), splits.resolve()
    row = ledger_row(args.experiment, args.entry, args.method, args.fold)
    with tempfile.TemporaryDirectory() as scratch:
        before = Path(scratch, "before")
        subprocess.run(["git", "worktree", "add", "--detach", "--quiet", str(before),
                        args.before], check=True)
        try:
            trees = {"before": before, "after": Path(".").resolve()}
            times = {name: [] for name in trees}
            for round_ in range(args.repeats + 1):
                for name, tree in trees.items():
                    result = run_fold(tree, args, row, data, splits,
                                      Path(scratch, f"{name}.json"))
                    label = "warm-up" if round_ == 0 else f"round {round_}"
                    print(f"{label}: {name} ({args.before if name == 'before' else 'this tree'}) "
                          f"{result['cpu_s']:.2f} CPU-s, test error {result['error']:.4f}")
                    if round_:
                        times[name].append(result["cpu_s"])
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(before)], check=True)
    ratio = statistics.median(times["before"]) / statistics.median(times["after"])
    print(f"{args.experiment}/{args.entry}/{args.method} fold {args.fold}: median CPU-s before "
          f"{statistics.median(times['before']):.2f}, after {statistics.median(times['after']):.2f}"
          f"; before / after {ratio:.2f}")


if __name__ == "__main__":
    main()
