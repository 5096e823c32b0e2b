"""Command-line entry points called by the Snakemake rules (``python -m gpcbench ...``).

Each command parses its arguments and calls one library function. Expected failures (unknown
data set, unreachable source, checksum mismatch, malformed file, bad protocol) print one line
naming the culprit and exit with status 1; nothing partial is left behind because every writer
is atomic.
"""

from __future__ import annotations

import argparse
import fcntl
import json
import logging
import sys
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def _exclusive(lock_path: Path):
    """Serialise concurrent fetch jobs that share the archive cache."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def cmd_fetch(args) -> None:
    from gpcbench.data.sources import fetch_raw_set

    with _exclusive(Path(args.cache_dir) / ".lock"):
        manifest = fetch_raw_set(
            args.raw_set, Path(args.raw_dir), Path(args.cache_dir), offline=args.offline,
            order=tuple(args.order.split(",")), connect_timeout=args.connect_timeout,
        )
    print(f"fetched {args.raw_set} from {manifest.get('source', '?')}", file=sys.stderr)


def cmd_preprocess(args) -> None:
    from gpcbench.data.preprocess import preprocess

    provenance = preprocess(args.dataset, Path(args.raw_dir), Path(args.out_dir), seed=args.seed)
    print(f"{args.dataset}: {provenance['rows']} x {provenance['columns']}", file=sys.stderr)


def cmd_split(args) -> None:
    from gpcbench.data.dataset import load_dataset
    from gpcbench.data.splits import make_splits
    from gpcbench.io import atomic_write_json
    from gpcbench.seeds import derive_seed

    protocol = json.loads(args.protocol)
    dataset = load_dataset(Path(args.data))
    seed = derive_seed(args.seed, "split", args.seed_key)
    folds = make_splits(protocol, dataset, seed)
    atomic_write_json(Path(args.output), {
        "protocol": protocol, "seed": seed, "data_sha256": dataset.provenance.get("sha256"),
        "n_rows": int(dataset.X.shape[0]), "folds": folds,
    })


#: Exit status of a fold job stopped because the Snakemake process that started it is gone.
ORPHANED_EXIT = 3


@contextmanager
def _log_to_stderr():
    """INFO lines of the ``gpcbench`` loggers (progress, start and end of the fold) to stderr,
    which Snakemake sends to the fold's log; the forked fit process inherits the handler."""
    logger = logging.getLogger("gpcbench")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def _without_option(argv: list[str], option: str) -> list[str]:
    """``argv`` without ``option`` and its value (``--opt VALUE`` or ``--opt=VALUE``)."""
    kept, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == option:
            skip = True
        elif not arg.startswith(f"{option}="):
            kept.append(arg)
    return kept


def cmd_run_fold(args) -> None:
    """Run one fold job (or reuse its ledger result), in a child of the host's fold server
    unless ``--in-process`` (:mod:`gpcbench.fold_server`); exit with ORPHANED_EXIT, writing
    nothing, when Snakemake is gone."""
    from gpcbench.experiments.reuse import reuse_fold
    from gpcbench.fold_server import ServerUnavailable, enabled, run_in_server
    from gpcbench.seeds import derive_seed

    upstream = dict(item.split("=", 1) for item in args.upstream)
    job = dict(experiment=args.experiment, method=args.method, fold=args.fold,
               options=json.loads(args.options), code_hash=args.code_hash,
               seed=derive_seed(args.seed, args.experiment, args.entry, args.method, args.fold))
    if args.reuse_ledger:
        record = reuse_fold(args.reuse_ledger, entry=args.entry, data_path=Path(args.data),
                            splits_path=Path(args.splits), upstream=upstream,
                            output=Path(args.output), standardized=args.standardize, **job)
        if record is not None:
            print(f"{args.method} fold {args.fold}: {record['status']}, reused from "
                  f"{args.reuse_ledger} (made at commit {record['provenance']['git_commit']})",
                  file=sys.stderr)
            return
    if not args.in_process and enabled():
        try:
            raise SystemExit(run_in_server([*_without_option(args.argv, "--reuse-ledger"),
                                            "--in-process"]))
        except ServerUnavailable as reason:
            print(f"gpcbench run-fold: no fold server: {reason}; fitting in this process",
                  file=sys.stderr)
    from gpcbench.experiments.run_fold import OrphanedError, run_fold  # the numerical stack

    try:
        with _log_to_stderr():
            record = run_fold(
                dataset_id=args.entry, data_path=Path(args.data),
                splits_path=Path(args.splits), output=Path(args.output),
                threads=args.threads, time_limit=args.time_limit,
                standardize_inputs=args.standardize, upstream=upstream, **job,
            )
    except OrphanedError as exc:
        print(f"gpcbench run-fold: error: {exc}", file=sys.stderr)
        raise SystemExit(ORPHANED_EXIT) from None
    print(f"{args.method} fold {args.fold}: {record['status']} {record['message']}", file=sys.stderr)


def cmd_collect(args) -> None:
    from gpcbench.experiments.aggregate import collect_folds

    collect_folds(args.results, Path(args.output), ledger=args.ledger,
                  config_folds=json.loads(args.config_folds) if args.config_folds else None)


def cmd_restore_folds(args) -> None:
    from gpcbench.experiments.ledger import restore_folds

    restore_folds(args.ledger, args.output)


def cmd_fold_costs(args) -> None:
    from gpcbench.experiments.ledger import write_fold_costs

    write_fold_costs(args.folds, Path(args.output))


def cmd_status(args) -> None:
    from gpcbench.experiments.status import print_status

    print_status(args.config, root=Path(args.root))


def cmd_report(args) -> None:
    from gpcbench.experiments.decision_regions import decision_regions
    from gpcbench.experiments.report.build import write_report

    write_report(config=json.loads(args.config_json), fold_tables=args.folds,
                 published_dir=Path(args.published), out_dir=Path(args.out),
                 data_meta_paths=args.data_meta, only=args.only, data_paths=args.data,
                 split_paths=args.splits,
                 head_hashes=json.loads(args.code_hashes) if args.code_hashes else None,
                 notes_dir=args.notes, reading_paths=args.readings,
                 refit_regions=decision_regions)


def cmd_reading(args) -> None:
    from gpcbench.experiments.readings import run_reading

    run_reading(args.name, Path(args.output), seed=args.seed)


def cmd_check_config(args) -> None:
    from gpcbench.config import load_config

    for path in args.configs:
        load_config(Path(path), published_dir=Path(args.published))
        print(f"{path}: valid", file=sys.stderr)


def cmd_exact_regression(args) -> None:
    from gpcbench.experiments.exact_regression import verdict, write_exact_regression

    table = write_exact_regression(Path(args.data), args.target, args.seed, Path(args.out_md),
                                   Path(args.out_csv), n_folds=args.folds)
    print(verdict(table), file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gpcbench", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("fetch", help="fetch one raw set into RAW_DIR/<name>/")
    p.add_argument("raw_set")
    p.add_argument("--raw-dir", default="data/raw")
    p.add_argument("--cache-dir", default="data/archives")
    p.add_argument("--offline", action="store_true")
    p.add_argument("--order", default="archive,canonical")
    p.add_argument("--connect-timeout", type=float, default=5.0)
    p.set_defaults(func=cmd_fetch)

    p = sub.add_parser("preprocess", help="write OUT_DIR/<dataset>.npz and .json")
    p.add_argument("dataset")
    p.add_argument("--raw-dir", default="data/raw")
    p.add_argument("--out-dir", default="data/processed")
    p.add_argument("--seed", type=int, required=True)
    p.set_defaults(func=cmd_preprocess)

    p = sub.add_parser("split", help="write the train/test folds of one data set")
    p.add_argument("data")
    p.add_argument("output")
    p.add_argument("--protocol", required=True, help="protocol as JSON")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--seed-key", required=True, help="entries sharing it share their splits")
    p.set_defaults(func=cmd_split)

    p = sub.add_parser("run-fold", help="fit and evaluate one method on one fold")
    for name in ("experiment", "entry", "method", "data", "splits", "output"):
        p.add_argument(f"--{name}", required=True)
    p.add_argument("--fold", type=int, required=True)
    p.add_argument("--options", default="{}")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--time-limit", type=float, default=3600.0)
    p.add_argument("--standardize", action="store_true")
    p.add_argument("--upstream", action="append", default=[], metavar="METHOD/foldK=PATH")
    p.add_argument("--code-hash", default="")
    p.add_argument("--in-process", action="store_true",
                   help="fit in this process, not in a child of the host's fold server")
    p.add_argument("--reuse-ledger", metavar="LEDGER",
                   help="write this fold's result from the fold ledger (.csv.gz) instead of "
                        "fitting when the same code made it from the same inputs")
    p.set_defaults(func=cmd_run_fold)

    p = sub.add_parser("collect", help="fold result JSONs -> one CSV")
    p.add_argument("output")
    p.add_argument("results", nargs="*", help="none: an experiment with no fold on disk yet")
    p.add_argument("--ledger", help="also write the committed fold ledger (.csv.gz) here")
    p.add_argument("--config-folds", metavar="JSON",
                   help="entry -> method -> folds the config asks for: the ledger keeps no "
                        "other row")
    p.set_defaults(func=cmd_collect)

    p = sub.add_parser("restore-folds", help="fold ledger (.csv.gz) -> the folds.csv it came from")
    p.add_argument("ledger")
    p.add_argument("output")
    p.set_defaults(func=cmd_restore_folds)

    p = sub.add_parser("fold-costs", help="folds.csv files or ledgers -> the largest wall time "
                                          "and peak memory per (experiment, entry, method)")
    p.add_argument("output")
    p.add_argument("folds", nargs="*", help="folds.csv or reports/results/*.csv.gz")
    p.set_defaults(func=cmd_fold_costs)

    p = sub.add_parser("status", help="per experiment and method: folds in the ledger made by "
                                      "the code at HEAD (current), by other code (stale), missing")
    p.add_argument("--config", default="config/config.yaml")
    p.add_argument("--root", default=".", help="work directory holding reports/results/ "
                                                "(default: the current directory)")
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("report", help="write reports/ (tables, figures, index.md), or one part")
    p.add_argument("--only", metavar="table:NAME|summary:EXPERIMENT|figure:NAME|overview",
                   help="write only this part (default: all); the config and folds need only "
                        "cover it")
    p.add_argument("--config-json", required=True)
    p.add_argument("--published", default="config/published")
    p.add_argument("--out", default="reports")
    p.add_argument("--folds", nargs="+", required=True)
    p.add_argument("--data-meta", nargs="*", default=[])
    p.add_argument("--data", nargs="*", default=[],
                   help="processed data sets (.npz) of confusion tables and decision regions")
    p.add_argument("--splits", nargs="*", default=[],
                   help="split files data/splits/<experiment>/<entry>.json of decision regions")
    p.add_argument("--code-hashes", metavar="JSON",
                   help="method -> code hash at HEAD: marks stale folds in tables and index.md")
    p.add_argument("--notes", help="directory of the tables' notes (docs/tables; default: none)")
    p.add_argument("--readings", nargs="*", default=[],
                   help="reading outputs reports/readings/<name>.json the notes quote")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("reading", help="measure one reading the table notes quote "
                                       "(gpcbench.experiments.readings) into a JSON file")
    p.add_argument("name")
    p.add_argument("output")
    p.add_argument("--seed", type=int, required=True)
    p.set_defaults(func=cmd_reading)

    p = sub.add_parser("check-config", help="validate config files (schema, names, options)")
    p.add_argument("configs", nargs="+", metavar="CONFIG")
    p.add_argument("--published", default="config/published")
    p.set_defaults(func=cmd_check_config)

    p = sub.add_parser("exact-regression",
                       help="check EP with Gaussian sites against exact GP regression "
                            "(Rodrigues 2014, sec. 4)")
    p.add_argument("data", help="processed data set (.npz)")
    p.add_argument("--target", required=True, help="continuous input column to regress")
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--folds", type=int, default=10)
    p.add_argument("--out-md", required=True)
    p.add_argument("--out-csv", required=True)
    p.set_defaults(func=cmd_exact_regression)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv
    try:
        args.func(args)
    except (KeyError, ValueError, RuntimeError, OSError) as exc:
        message = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"gpcbench {args.command}: error: {message.splitlines()[0] if message else type(exc).__name__}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
