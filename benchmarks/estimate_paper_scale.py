"""Estimate the wall time of an experiment's full protocol on C cores from the fold times at hand.

For every (data set, method) of the experiment it takes the mean measured time of a fold job
(the CPU seconds of fit + predict, ``timings.cpu_s`` of results/<experiment>/<entry>/<method>/
fold*.json; wall seconds for records without it) over the folds run so far, or,
with ``--since COMMIT``, over the folds produced at that commit or a later one (git ancestry);
where none is that recent it falls back on the older folds (marked ``*``). With no fold result
at hand (a fresh clone) it takes the committed reports' mean fit seconds per cell
(``reports/tables/<experiment>_summary.csv``, marked ``r``). It multiplies by
the protocol's number of folds and packs the jobs on C cores, longest first (LPT: within 4/3
of the optimal makespan). Data sets with no measured fold are listed, not guessed. Wall times measured on a loaded machine make the estimate an upper bound.

Usage: python benchmarks/estimate_paper_scale.py zhang2011 --cores 16 [--max-n 4000]
       [--since a85bc16] [--methods fbgkm sgpc]
"""

import argparse
import heapq
import json
import subprocess
from pathlib import Path

import pandas as pd
import yaml

from gpcbench.config import entry_fold_count, entry_methods, entry_protocol
from gpcbench.experiments.registry import method_spec

ROOT = Path(__file__).resolve().parents[1]


def descends_from(commit: str, ancestor: str, cache: dict) -> bool:
    if commit not in cache:
        cache[commit] = subprocess.run(
            ["git", "merge-base", "--is-ancestor", ancestor, commit], cwd=ROOT,
            capture_output=True).returncode == 0
    return cache[commit]


def fold_times(folder: Path, since: str | None) -> list[float]:
    cache: dict = {}
    times = []
    for path in folder.glob("fold*.json"):
        record = json.loads(path.read_text())
        if record.get("status") != "ok":
            continue
        if since and not descends_from(record["provenance"]["git_commit"], since, cache):
            continue
        timings = record["timings"]
        times.append(timings.get("cpu_s", timings["fit_s"] + timings["predict_s"]))
    return times


def reported_times(experiment: str) -> dict[tuple[str, str], float]:
    """(entry, method label) -> mean fit seconds of the committed summary table."""
    path = ROOT / "reports" / "tables" / f"{experiment}_summary.csv"
    if not path.exists():
        return {}
    summary = pd.read_csv(path).dropna(subset=["fit_s_mean"])
    return {(row.dataset, row.method): row.fit_s_mean for row in summary.itertuples()}


def lpt_makespan(durations: list[float], cores: int) -> float:
    loads = [0.0] * cores
    for d in sorted(durations, reverse=True):
        heapq.heapreplace(loads, loads[0] + d)
    return max(loads)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("experiment")
    parser.add_argument("--cores", type=int, default=16)
    parser.add_argument("--max-n", type=int, default=None, help="largest n_train included")
    parser.add_argument("--since", default=None, help="only folds run at or after this commit")
    parser.add_argument("--methods", nargs="*", default=None)
    args = parser.parse_args()
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    spec = config["experiments"][args.experiment]
    jobs, missing, reported = [], [], reported_times(args.experiment)
    used_reports = False
    print(f"{'data set':<16} {'method':<8} {'n':>6} {'runs':>5} {'s/run':>8} {'folds':>6} "
          f"{'CPU-h':>7}")
    for entry in spec["datasets"]:
        protocol = entry_protocol(spec, entry)
        n = protocol.get("n_train")
        if args.max_n and n and n > args.max_n:
            continue
        for method in entry_methods(spec, entry):
            if args.methods and method not in args.methods:
                continue
            folder = ROOT / "results" / args.experiment / entry / method
            times, mark = fold_times(folder, args.since), ""
            if not times and args.since:
                times, mark = fold_times(folder, None), "*"
            if not times and (entry, method_spec(method).label) in reported:
                times, mark = [reported[(entry, method_spec(method).label)]], "r"
                used_reports = True
            if not times:
                missing.append(f"{entry}/{method}")
                continue
            mean, count = sum(times) / len(times), entry_fold_count(spec, entry)
            jobs += [mean] * count
            print(f"{entry:<16} {method:<8} {n or '':>6} {len(times):>4}{mark:1} {mean:>8.1f} "
                  f"{count:>6} {mean * count / 3600:>7.2f}")
    total = sum(jobs)
    print(f"\n{len(jobs)} fold jobs, {total / 3600:.1f} CPU-hours; on {args.cores} cores "
          f"(longest first): {lpt_makespan(jobs, args.cores) / 3600:.2f} h "
          f"(lower bound total / cores {total / args.cores / 3600:.2f} h)")
    if args.since:
        print(f"* no fold at or after {args.since}: older folds' times")
    if used_reports:
        print("r: no fold result here: the committed reports' mean fit seconds per fold")
    if missing:
        print("not measured (left out):", ", ".join(missing))


if __name__ == "__main__":
    main()
