"""Estimate the CPU time and the C-core wall time of the protocol from the measured fold times.

For every (experiment, data set, method) cell of the config it takes the mean CPU seconds of a
fold job's fit + predict (``cpu_s``) over the cell's folds in the committed fold ledger
(``reports/results/<experiment>.csv.gz``, so it works on a fresh clone) and, where a run is
under way, in ``results/<experiment>/<entry>/<method>/fold*.json`` (these take precedence, fold
by fold). With ``--current`` only folds made by the method's code hash at HEAD with the
options the config gives their jobs count. It
multiplies by the protocol's number of folds, adds each fold job's start-up (a Python process
handing its fold to the host's fold server, measured here: ``job_startup_seconds``), and packs the jobs on C cores, longest first (LPT:
within 4/3 of the optimal makespan). It prints the most expensive cells and lists the cells
with no measured fold (left out, not guessed). Times measured on a loaded machine make the
estimate an upper bound. With ``--update-docs FILE`` the per-experiment totals replace the
block between the markers of these options in FILE (docs/performance.md).

Usage (from the repository root): python benchmarks/estimate_paper_scale.py [EXPERIMENT ...]
       [--cores 16] [--root .]
       [--exclude adult2] [--max-n 4000] [--methods fbgkm sgpc] [--current] [--top 10]
       [--update-docs docs/performance.md]
"""

import argparse
import heapq
import json
import resource
import subprocess
import sys
from pathlib import Path

import pandas as pd
from fold_ledger import fold_ledger
from generated_block import replace_block

from gpcbench.config import (entry_fold_count, entry_methods, entry_train_size, method_options,
                             read_config_file)
from gpcbench.experiments.registry import method_code_hash
from gpcbench.provenance import working_tree_commit

def measured_times(root: Path, experiment: str) -> dict:
    """(entry, method, fold) -> (cpu_s, code_hash, options) of the ok folds of the ledger under
    ``root`` and of a run under way there (its result files take precedence)."""
    folds = fold_ledger(root, experiment, ["dataset", "method", "fold", "status", "cpu_s",
                                           "code_hash", "options"])
    folds = folds[(folds["status"] == "ok") & folds["cpu_s"].notna()]
    return {(r.dataset, r.method, r.fold): (float(r.cpu_s), r.code_hash, json.loads(r.options))
            for r in folds.itertuples()}


def job_startup_seconds() -> float:
    """CPU seconds (user + system) of what a fold job pays before its fit, best of 3: a fresh
    Python importing the CLI and naming its fold server (the server, which has imported the
    fold runner once, forks the fit's process; gpcbench.fold_server), or with
    GPCBENCH_FOLD_SERVER=0 importing the fold runner itself. CPU, not wall time, so that other
    jobs on the machine do not inflate it."""
    from gpcbench.fold_server import enabled

    code = ("import gpcbench.cli, gpcbench.experiments.reuse, gpcbench.seeds, gpcbench.fold_server"
            " as server; server.socket_path()" if enabled() else
            "import gpcbench.cli, gpcbench.experiments.run_fold, gpcbench.experiments.registry")
    best = float("inf")
    for _ in range(3):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", code], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return best


def lpt_makespan(durations: list[float], cores: int) -> float:
    loads = [0.0] * cores
    for d in sorted(durations, reverse=True):
        heapq.heapreplace(loads, loads[0] + d)
    return max(loads)


def cells(config: dict, args) -> tuple[pd.DataFrame, list[str]]:
    """One row per measured cell: experiment, entry, method, n, measured folds, mean CPU
    seconds, protocol folds; and the cells with no measured fold."""
    rows, missing, hashes = [], [], {}
    for experiment in args.experiments or list(config["experiments"]):
        spec = config["experiments"][experiment]
        measured = measured_times(args.root, experiment)
        for entry in spec["datasets"]:
            n = entry_train_size(spec, entry)
            if entry in args.exclude or (args.max_n and n > args.max_n):
                continue
            for method in entry_methods(spec, entry):
                if args.methods and method not in args.methods:
                    continue
                if args.current and method not in hashes:
                    hashes[method] = method_code_hash(method)
                wanted = method_options(config, experiment, entry, method)
                times = [cpu for (e, m, _), (cpu, code, options) in measured.items()
                         if e == entry and m == method and (not args.current or (
                             code == hashes[method] and options == wanted))]
                if not times:
                    missing.append(f"{experiment}/{entry}/{method}")
                    continue
                rows.append({"experiment": experiment, "entry": entry, "method": method,
                             "n": n, "measured": len(times), "cpu_s": sum(times) / len(times),
                             "folds": entry_fold_count(spec, entry)})
    frame = pd.DataFrame(rows)
    if len(frame):
        frame["cpu_h"] = frame["cpu_s"] * frame["folds"] / 3600
    return frame, missing


def block_options(args) -> tuple[str, str]:
    """The options that decide the totals, as a command line and as the name of their block
    (e.g. 'current without adult2'; no '--', which an HTML comment cannot hold)."""
    words = [*args.experiments, *(["--current"] if args.current else []),
             *(["--exclude", *args.exclude] if args.exclude else []),
             *(["--max-n", str(args.max_n)] if args.max_n else []),
             *(["--methods", *args.methods] if args.methods else []), "--cores", str(args.cores)]
    kind = " ".join([*args.experiments, "current" if args.current else "all folds",
                     *(f"without {entry}" for entry in args.exclude),
                     *([f"n <= {args.max_n}"] if args.max_n else []), *(args.methods or [])])
    return " ".join(words), kind


def per_method_times(frame: pd.DataFrame) -> list[tuple[str, float, str]]:
    """(method, its CPU-h, 'n: CPU-s; ...') for every method, the costliest first; where cells
    of one n differ (other data sets or experiments), their range."""
    def seconds(values: pd.Series) -> str:
        low, high = (f"{value:.3g}" for value in (values.min(), values.max()))
        return low if low == high else f"{low}-{high}"

    rows = []
    for method, cells_of in frame.groupby("method"):
        sizes = "; ".join(f"{n:,}: {seconds(group['cpu_s'])}"
                          for n, group in cells_of.groupby("n"))
        rows.append((method, float(cells_of["cpu_h"].sum()), sizes))
    return sorted(rows, key=lambda row: -row[1])


def totals_markdown(frame: pd.DataFrame, jobs: list[float], startup: float, cores: int,
                    missing: list[str], top: int) -> str:
    """Per experiment fold jobs and CPU-h, the whole (fits, start-up, on ``cores``) and the
    ``top`` most expensive cells."""
    per = frame.groupby("experiment", sort=False)[["folds", "cpu_h"]].sum()
    lines = ["| experiment | fold jobs | CPU-h of fits |", "|---|---|---|"]
    lines += [f"| {name} | {int(row.folds):,} | {row.cpu_h:.2f} |" for name, row in per.iterrows()]
    lines += ["", f"The {top} most expensive cells:", "",
              "| experiment | data set | method | n | CPU-s a fold (mean) | CPU-h |",
              "|---|---|---|---|---|---|"]
    lines += [f"| {r.experiment} | {r.entry} | {r.method} | {r.n} | {r.cpu_s:.1f} | "
              f"{r.cpu_h:.2f} |"
              for r in frame.sort_values("cpu_h", ascending=False).head(top).itertuples()]
    lines += ["", f"The {top} most expensive methods, CPU seconds a fold at each training size n "
              "(a cell's mean; a range where cells of one n differ):", "",
              "| method | CPU-h | n: CPU-s a fold |", "|---|---|---|"]
    lines += [f"| {method} | {cpu_h:.2f} | {sizes} |"
              for method, cpu_h, sizes in per_method_times(frame)[:top]]
    fits = float(frame["cpu_h"].sum())
    lines += ["", f"{len(jobs):,} fold jobs: {fits:.2f} CPU-h of fits + {len(jobs):,} x "
              f"{startup:.2f} CPU-s of start-up = **{sum(jobs) / 3600:.2f} CPU-h**; on {cores} "
              f"cores, longest first, **{lpt_makespan(jobs, cores) / 3600:.2f} h**."]
    if missing:
        lines.append(f"Not measured, left out: {len(missing)} cells ({', '.join(missing)}).")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiments", nargs="*", help="default: every experiment")
    parser.add_argument("--root", type=Path, default=Path("."),
                        help="work directory holding reports/results/ and results/ (default .)")
    parser.add_argument("--config", default="config/config.yaml")
    parser.add_argument("--cores", type=int, default=16)
    parser.add_argument("--exclude", nargs="*", default=[], help="entries left out, e.g. adult2")
    parser.add_argument("--max-n", type=int, default=None, help="largest n_train included")
    parser.add_argument("--methods", nargs="*", default=None)
    parser.add_argument("--current", action="store_true",
                        help="only folds made by the method's code hash at HEAD with the "
                             "config's options")
    parser.add_argument("--top", type=int, default=10, help="most expensive cells printed")
    parser.add_argument("--update-docs", type=Path, metavar="FILE",
                        help="rewrite the block of these options in FILE")
    args = parser.parse_args()
    frame, missing = cells(read_config_file(Path(args.config)), args)
    if frame.empty:
        sys.exit("no measured fold for these cells (the ledger and results/ are empty)")
    startup = job_startup_seconds()
    jobs = [cpu + startup for cpu, folds in zip(frame["cpu_s"], frame["folds"])
            for _ in range(folds)]
    pd.set_option("display.width", 120)
    print(f"The {args.top} most expensive cells (mean CPU seconds of a fold's fit + predict):")
    top = frame.sort_values("cpu_h", ascending=False).head(args.top)
    print(top.to_string(index=False, float_format=lambda x: f"{x:.2f}"))
    print("\nPer experiment (measured cells only):")
    print(frame.groupby("experiment")[["folds", "cpu_h"]].sum()
          .to_string(float_format=lambda x: f"{x:.2f}"))
    fits = float(frame["cpu_h"].sum())
    print(f"\n{len(jobs)} fold jobs: {fits:.2f} CPU-h of fits + {len(jobs)} x {startup:.2f} s "
          f"start-up = {sum(jobs) / 3600:.2f} CPU-h; on {args.cores} cores (longest first): "
          f"{lpt_makespan(jobs, args.cores) / 3600:.2f} h "
          f"(lower bound total / cores {sum(jobs) / args.cores / 3600:.2f} h)")
    if missing:
        print(f"\nnot measured (left out, {len(missing)} cells):")
        for experiment in dict.fromkeys(cell.split("/")[0] for cell in missing):
            names = [cell.split("/", 1)[1] for cell in missing if cell.startswith(experiment + "/")]
            print(f"  {experiment}: {', '.join(names)}")
    if args.update_docs:
        command, kind = block_options(args)
        replace_block(args.update_docs, "estimate_paper_scale.py", kind,
                      f"From the ledgers by `python benchmarks/estimate_paper_scale.py {command}` "
                      f"at {working_tree_commit()}:",
                      totals_markdown(frame, jobs, startup, args.cores, missing, args.top))


if __name__ == "__main__":
    main()
