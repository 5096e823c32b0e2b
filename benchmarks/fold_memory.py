"""Peak memory of a fold job per method family, at the family's largest training set, beside
what the fold requests' model (gpcbench.fold_requests) asks a scheduler for there.

For each method family (a module of gpcbench.experiments.methods) it takes the config's
(experiment, entry, method) with the most training rows, among methods that read no other
fold's result, and runs that entry's fold 0 through the pipeline in a scratch work directory
(``.test/fold-memory``; the config's own data and ledger are not touched) with the fold time
limit cut to ``--time-limit`` seconds: a fold stopped at that limit has allocated its n x n
and n x k matrices by then, so its peak is a lower bound close to the whole fit's (the table
says which folds were stopped). It prints family, method, entry, n, status, the fold's peak
resident memory (MB, as the fold record keeps it) and the model's ``mem_mb`` request.
With ``--times`` it measures nothing and prints instead, per family, the longest fold
(fit + predict wall seconds) and the largest peak resident memory the committed ledgers hold,
and the runtime and memory a fold of those cells asks for from them. With ``--update-docs FILE`` the table replaces the one between the markers
of its kind in FILE (docs/cluster.md).

Usage (from the repository root): python benchmarks/fold_memory.py [--config config/config.yaml]
       [--time-limit 120] [--cores 2] [--families gkm svm ...] [--times]
       [--update-docs docs/cluster.md]
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml
from generated_block import replace_block

from gpcbench.config import entry_methods, entry_train_size, read_config_file
from gpcbench.experiments.ledger import fold_costs, ledger_path
from gpcbench.experiments.registry import method_spec
from gpcbench.fold_requests import FoldRequests, Measured
from gpcbench.provenance import working_tree_commit

WORKDIR = ".test/fold-memory"


def family_of(method: str) -> str:
    return method_spec(method).factory.__module__.rsplit(".", 1)[-1]


def largest_per_family(config: dict) -> dict[str, tuple[str, str, str, int]]:
    """family -> (experiment, entry, method, n) with the most training rows."""
    largest = {}
    for experiment, spec in config["experiments"].items():
        for entry in spec["datasets"]:
            n = entry_train_size(spec, entry)
            for method in entry_methods(spec, entry):
                if method_spec(method).upstream(0, config.get("methods", {}).get(method, {})):
                    continue
                family = family_of(method)
                if family not in largest or n > largest[family][3]:
                    largest[family] = (experiment, entry, method, n)
    return largest


def measure(config_path: Path, picks: dict, time_limit: float, cores: int) -> dict:
    """family -> the fold record of its pick, run in the scratch work directory."""
    config = yaml.safe_load(config_path.read_text())
    config.update(workdir=WORKDIR, jobs={**config["jobs"], "time_limit_s": time_limit})
    targets = [f"results/{e}/{entry}/{m}/fold0.json" for e, entry, m, _ in picks.values()]
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as scratch:
        yaml.safe_dump(config, scratch)
    subprocess.run([sys.executable, "-m", "snakemake", "--cores", str(cores), *targets,
                    "--configfile", scratch.name, "--config", "reuse_ledger=false",
                    "--forcerun", "run_fold"], check=True)
    return {family: json.loads((Path(WORKDIR) / target).read_text())
            for family, target in zip(picks, targets)}


def table(picks: dict, records: dict, requests: FoldRequests, time_limit: float) -> str:
    lines = ["| family | method | entry | n | fold 0 | peak MB | model request MB |",
             "| --- | --- | --- | ---: | --- | ---: | ---: |"]
    for family, (experiment, entry, method, n) in sorted(picks.items()):
        record = records[family]
        status = record["status"] if record["status"] != "timeout" else f"stopped at {time_limit:g} s"
        lines.append(f"| {family} | {method} | {experiment}/{entry} | {n} | {status} | "
                     f"{record['provenance']['peak_rss_mb']:.0f} | "
                     f"{requests.mem_mb(experiment, entry, method, n)} |")
    return "\n".join(lines)


def time_table(config: dict) -> str:
    """Per family: the longest fold and the largest peak memory of the committed ledgers, and
    the runtime and memory they make a fold of that cell ask for."""
    paths = [ledger_path(name) for name in config["experiments"] if ledger_path(name).is_file()]
    costs = fold_costs(paths)
    costs = costs[costs["method"].map(lambda m: m in _registered())]
    costs["family"] = costs["method"].map(family_of)
    requests = FoldRequests(config["jobs"], {
        (row.experiment, row.entry, row.method): Measured(
            int(row.folds), row.wall_s_max,
            None if row.peak_rss_mb_max != row.peak_rss_mb_max else row.peak_rss_mb_max)
        for row in costs.itertuples()})
    lines = ["| family | longest fold: method | entry | n | wall s | runtime request min "
             "| largest peak: method | entry | n | peak MB | memory request MB |",
             "| --- | --- | --- | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |"]
    for family, group in costs.groupby("family"):
        slow = group.loc[group["wall_s_max"].idxmax()]
        cells = [family, slow.method, f"{slow.experiment}/{slow.entry}", int(slow.n_train),
                 f"{slow.wall_s_max:.0f}",
                 requests.runtime(slow.experiment, slow.entry, slow.method, int(slow.n_train))]
        if group["peak_rss_mb_max"].notna().any():
            big = group.loc[group["peak_rss_mb_max"].idxmax()]
            cells += [big.method, f"{big.experiment}/{big.entry}", int(big.n_train),
                      f"{big.peak_rss_mb_max:.0f}",
                      requests.mem_mb(big.experiment, big.entry, big.method, int(big.n_train))]
        else:
            cells += ["not recorded", "", "", "", ""]
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    return "\n".join(lines)


def _registered() -> set[str]:
    from gpcbench.experiments.registry import METHODS

    return set(METHODS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("config/config.yaml"))
    parser.add_argument("--time-limit", type=float, default=120.0)
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--families", nargs="*")
    parser.add_argument("--times", action="store_true")
    parser.add_argument("--update-docs", type=Path, metavar="FILE")
    args = parser.parse_args()
    config = read_config_file(args.config)
    if args.times:
        text = time_table(config)
        print(text)
        if args.update_docs:
            replace_block(args.update_docs, "fold_memory.py", "times",
                          "From the committed ledgers by `benchmarks/fold_memory.py --times` at "
                          f"{working_tree_commit()}:", text)
        return
    picks = largest_per_family(config)
    if args.families:
        picks = {family: pick for family, pick in picks.items() if family in args.families}
    records = measure(args.config, picks, args.time_limit, args.cores)
    requests = FoldRequests(config["jobs"], {})  # the model alone, as without measurements
    text = table(picks, records, requests, args.time_limit)
    print(text)
    if args.update_docs:
        replace_block(args.update_docs, "fold_memory.py", "memory",
                      f"Measured by `benchmarks/fold_memory.py --time-limit {args.time_limit:g}` "
                      f"at {working_tree_commit()}:", text)


if __name__ == "__main__":
    main()
