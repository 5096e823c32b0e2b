"""Small helpers the Snakemake rules call (no Snakemake import here)."""

from __future__ import annotations

import fcntl
import hashlib
import json
import re
import sys
from pathlib import Path

from gpcbench.io import sha256_file
from gpcbench.provenance import imported_modules, source_digest

#: What ``gpcbench preprocess`` runs; the registry is hashed by the entries a data set uses
#: (adding a data set to it rebuilds no other).
PREPROCESS_MODULE = "gpcbench.data.preprocess"
REGISTRY_MODULE = "gpcbench.data.registry"


#: Held (flock) by the Snakemake process running this workflow in a directory, until it exits,
#: however it exits: the kernel drops the lock of a killed process.
_RUN_LOCKS: dict[str, object] = {}


def clear_stale_locks(state_dir: str | Path = ".snakemake") -> bool:
    """Take this directory's run lock; if it was free, no Snakemake of this workflow is running
    here, so locks left in ``state_dir/locks`` belong to a killed run and are removed (what
    ``snakemake --unlock`` does by hand). Returns whether the run lock was taken."""
    state = Path(state_dir)
    state.mkdir(parents=True, exist_ok=True)
    handle = open(state / "gpcbench-run.lock", "a")  # non-inheritable: jobs do not hold it
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:  # another run (or dry run) of this workflow is going on here
        handle.close()
        return False
    _RUN_LOCKS[str(state.resolve())] = handle
    for lock in (state / "locks").glob("*.lock"):
        lock.unlink(missing_ok=True)
    return True


def data_modules() -> list[str]:
    """The gpcbench modules a processed data set depends on, from the import graph of the
    preprocessing entry point (readers, builders, generators and what they import, e.g. the
    covariance functions a generator samples from), but the registry module itself."""
    return [module for module in imported_modules(PREPROCESS_MODULE) if module != REGISTRY_MODULE]


def data_code_hash(dataset: str) -> str:
    """Hash of what one processed data set depends on: :func:`data_modules` and its own
    registry entries (so adding a data set to the registry reruns nothing else)."""
    from gpcbench.data.registry import RAW_SETS, dataset_spec, raw_sets_for

    return source_digest(data_modules(), repr(dataset_spec(dataset)),
                         *(repr(RAW_SETS[raw]) for raw in raw_sets_for(dataset)))


_DRY_RUN = "left in place by this dry run (a run removes and remakes it)"


def remove_damaged_datasets(directory: str | Path, dry_run: bool = False) -> list[Path]:
    """Remove every processed data set in ``directory`` whose ``.npz`` does not match the
    SHA-256 its ``.json`` records (cut short, overwritten) or whose ``.json`` is unreadable,
    saying so in one line each on stderr, so that this run rebuilds it. Returns the ``.npz``
    paths removed; a ``dry_run`` (``snakemake -n``) names them and removes nothing."""
    removed = []
    for meta in sorted(Path(directory).glob("*.json")):
        npz = meta.with_suffix(".npz")
        try:
            recorded = json.loads(meta.read_text()).get("npz_sha256")
        except (ValueError, AttributeError):
            recorded = "unreadable"
        if recorded is None or not npz.is_file() or sha256_file(npz) == recorded:
            continue  # made before files were hashed, or missing: Snakemake rebuilds it anyway
        print(f"gpcbench: {npz} does not match the SHA-256 recorded in {meta}; "
              f"{_DRY_RUN if dry_run else 'rebuilding it'}", file=sys.stderr)
        if not dry_run:
            npz.unlink()
            meta.unlink()
        removed.append(npz)
    return removed


def remove_stale_readings(directory: str | Path, readings: dict, quoting: dict,
                          dry_run: bool = False) -> list[Path]:
    """Remove every reading output ``directory/<name>.json`` of the config's ``readings``
    (name -> {seed}) made by other code than the reading's now or with another seed, or
    unreadable, with the outputs built from it (``quoting``: name -> paths, the tables whose
    notes quote it), saying so in one line each on stderr, so that this run measures it again
    and rebuilds them. A fresh clone has no Snakemake record of the params a reading was made
    with, and Snakemake does not remake a removed input whose dependents are up to date
    (snakemake/snakemake#2966), hence both. Returns the paths removed; a ``dry_run``
    (``snakemake -n``) names them and removes nothing."""
    from gpcbench.experiments.readings import reading_code_hash

    removed = []
    for name, options in sorted(readings.items()):
        path = Path(directory) / f"{name}.json"
        if not path.is_file():
            continue
        try:
            made = json.loads(path.read_text())
            current = (made["code_hash"] == reading_code_hash(name)
                       and made["seed"] == options["seed"])
        except (ValueError, KeyError, TypeError):
            current = False
        if not current:
            print(f"gpcbench: {path} was made by other code or another seed; "
                  f"{_DRY_RUN if dry_run else 'measuring it again'}", file=sys.stderr)
            built = [Path(p) for p in quoting.get(name, ()) if Path(p).is_file()]
            for stale in [path, *built] if not dry_run else []:
                stale.unlink()
            removed += [path, *built]
    return removed


#: Command-line targets naming a processed data set or a raw set: the name is the group.
DATA_TARGETS = {"data set": re.compile(r"(?:^|/)data/processed/([^/]+)\.(?:npz|json)$"),
                "raw set": re.compile(r"(?:^|/)data/raw/([^/]+)/")}


def check_data_targets(args) -> None:
    """Raise :class:`~gpcbench.data.registry.UnknownDatasetError` (one line, with the closest
    known names) for the first of ``args`` (Snakemake's command line) that names a processed
    data set (``data/processed/<name>.npz`` or ``.json``) or a raw set
    (``data/raw/<name>/...``) the registry does not know: the rules' input functions would
    otherwise fail with a traceback while Snakemake builds the DAG."""
    from gpcbench.data.registry import DATASETS, RAW_SETS, UnknownDatasetError

    known = {"data set": DATASETS, "raw set": RAW_SETS}
    for arg in args:
        for what, pattern in DATA_TARGETS.items():
            match = pattern.search(arg)
            if match and match.group(1) not in known[what]:
                raise UnknownDatasetError(match.group(1), known[what], what=what)


def published_hash(directory: str | Path, files=None) -> str:
    """Content hash of files a report job reads (a param, not an input: file times don't
    matter): every published-number CSV of ``directory``, or only the named ``files`` in it
    (notes, the causes, papers.yaml)."""
    digest = hashlib.sha256()
    paths = (sorted(Path(directory).glob("*.csv")) if files is None
             else [Path(directory) / name for name in sorted(set(files))])
    for path in paths:
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def one_of(names) -> str:
    """Wildcard constraint matching exactly one of ``names`` (nothing when there are none)."""
    return "|".join(re.escape(name) for name in sorted(names)) or "(?!)"


def _experiment_method_options(config: dict, experiment: dict) -> dict:
    """The top-level ``methods.<method>`` options of the experiment's methods (a table marks
    folds run with other options than its config's as stale)."""
    from gpcbench.config import entry_methods

    used = {method for entry in experiment["datasets"] for method in entry_methods(experiment, entry)}
    return {method: options for method, options in config.get("methods", {}).items()
            if method in used}


def report_config(config: dict, kind: str, name: str = "") -> dict:
    """The part of the config one report job reads (``kind`` as in ``gpcbench report --only``),
    so that editing another table, figure or experiment does not rerun it; a table's part has
    the seed, which its stale marks check. Key order is kept:
    a table's ``datasets`` order is its column order."""
    if kind == "table":
        table = config["tables"][name]
        experiment = config["experiments"][table["experiment"]]
        return {"seed": config["seed"], "tables": {name: table},
                "experiments": {table["experiment"]: experiment},
                "methods": _experiment_method_options(config, experiment)}
    if kind == "summary":
        return {"experiments": {name: config["experiments"][name]}}
    if kind == "figure":
        figure = config["figures"][name]
        part = {"figures": {name: figure},
                "experiments": {figure["experiment"]: config["experiments"][figure["experiment"]]}}
        if "table" in figure:  # a timing figure: the table whose cells it draws
            part["tables"] = {figure["table"]: config["tables"][figure["table"]]}
        return part
    if kind == "overview":
        return config
    raise ValueError(f"unknown report kind '{kind}'")


def report_outputs(config: dict, kind: str = "all") -> list[str]:
    """Files the report rules write (`all` needs every one): per config table (rule table),
    per experiment (summary), per config figure (figure), the overview (report) and the
    measured fold costs (fold_costs)."""
    tables = []
    for name in sorted(config["tables"]):
        tables += [f"reports/tables/{name}.{ext}" for ext in ("md", "csv", "tex")]
    for name in sorted(config["experiments"]):
        tables += [f"reports/tables/{name}_summary.{ext}" for ext in ("md", "csv")]
    if "exact_regression" in config:
        tables += [f"reports/tables/rodrigues2014_exact_regression.{ext}" for ext in ("md", "csv")]
    figures = ["reports/figures/published_vs_reproduced.png",
               *(f"reports/figures/{name}.png" for name in sorted(config.get("figures", {})))]
    if kind == "tables":
        return tables
    if kind == "figures":
        return figures
    return [*tables, *figures, "reports/fold_costs.csv", "reports/index.md"]
