# Everything that is not a rule: config validation, job enumeration, input functions.
import json
import os
import sys

from snakemake.exceptions import WorkflowError

from gpcbench.config import (CAUSES_FILE, ConfigError, entry_data, entry_fold_count,
                             entry_methods, entry_protocol, entry_train_size, method_options,
                             run_switch, standardizes, validate_config)
from gpcbench.data.registry import DATASETS, UnknownDatasetError, raw_sets_for
from gpcbench.experiments.registry import method_code_hash, method_spec
from gpcbench.experiments.reuse import current_folds
from gpcbench.workflow import check_data_targets, data_code_hash, published_hash, report_outputs

# Published numbers live in the repository, whatever the config's workdir.
PUBLISHED = os.path.join(REPO, "config", "published")
# The tables' notes (docs/tables/<table>.md) and the readings they quote that the config runs.
NOTES = os.path.join(REPO, "docs", "tables")
READINGS_RUN = config.get("readings", {})

try:
    # Rebuild reports/ from the committed fold ledger (see report.smk), not from fold results.
    FROM_LEDGER = run_switch(config, "from_ledger", False)
    # Report the fold results already on disk and run no missing fold (a run still going, or
    # experiments not rerun yet): their folds are counted missing in reports/index.md.
    PARTIAL = run_switch(config, "partial", False)
    # A fold job whose result the committed ledger holds, made by the same code from the same
    # inputs, writes that result instead of fitting (a fresh clone resumes the protocol);
    # --config reuse_ledger=false recomputes every fold.
    REUSE_LEDGER = run_switch(config, "reuse_ledger", True)
    validate_config(config, published_dir=PUBLISHED)
    if workflow.is_main_process:  # a target naming a data set the registry does not know
        check_data_targets(sys.argv[1:])
except (ConfigError, UnknownDatasetError) as exc:
    raise WorkflowError(f"gpcbench: {exc}") from None

EXPERIMENTS = config["experiments"]
# Jobs run the library with the interpreter running Snakemake (the project's venv), so an
# unactivated .venv/bin/snakemake works too.
GPCBENCH = f"{sys.executable} -m gpcbench"
JOBS = config["jobs"]


wildcard_constraints:
    experiment="[a-z0-9_]+",
    entry="[a-z0-9_]+",
    dataset="[a-z0-9_]+",
    raw="[a-z0-9_]+",
    method="[a-z0-9_-]+",
    fold="[0-9]+",


def split_data(experiment, entry):
    """The data set the entry's split is computed on (itself unless split_data says otherwise)."""
    spec = EXPERIMENTS[experiment]["datasets"][entry]
    return spec.get("split_data", entry_data(EXPERIMENTS[experiment], entry))


def fold_results(experiment):
    """Every fold result file of one experiment; with ``partial`` only those on disk and
    those the committed ledger holds made by the code at HEAD (their jobs reuse the ledger's
    rows; the collect job keeps the ledger's rows of the others)."""
    spec = EXPERIMENTS[experiment]
    keys = [(entry, method, fold) for entry in spec["datasets"]
            for method in entry_methods(spec, entry)
            for fold in range(entry_fold_count(spec, entry))]
    if PARTIAL:
        reusable = set()
        if REUSE_LEDGER:
            methods = {method for _, method, _ in keys}
            reusable = current_folds(f"reports/results/{experiment}.csv.gz",
                                     {method: method_code_hash(method) for method in methods},
                                     lambda entry, method: method_options(
                                         config, experiment, entry, method),
                                     lambda entry, method: standardizes(EXPERIMENTS[experiment],
                                                                         entry, method))
        keys = [key for key in keys if key in reusable or os.path.exists(fold_path(experiment, *key))]
    return [fold_path(experiment, *key) for key in keys]


def config_folds(experiment):
    """entry -> method -> number of folds the config asks of ``experiment``."""
    spec = EXPERIMENTS[experiment]
    return {entry: {method: entry_fold_count(spec, entry) for method in entry_methods(spec, entry)}
            for entry in spec["datasets"]}


def fold_path(experiment, entry, method, fold):
    return f"results/{experiment}/{entry}/{method}/fold{fold}.json"


def used_datasets():
    """Processed data sets some experiment runs on."""
    return sorted({entry_data(spec, entry) for spec in EXPERIMENTS.values()
                   for entry in spec["datasets"]})


def prepared_datasets():
    prepare = config["data"].get("prepare", [])
    extra = set(DATASETS) if prepare == "all" else set(prepare)
    return sorted(extra.union(used_datasets()))


def final_outputs():
    return [
        *(f"data/processed/{name}.npz" for name in prepared_datasets()),
        *report_outputs(config),
    ]


def fold_options(wildcards):
    return method_options(config, wildcards.experiment, wildcards.entry, wildcards.method)


def upstream_results(wildcards):
    """Results this fold job needs first (warm starts, kernels of another method)."""
    spec = method_spec(wildcards.method)
    return {
        f"{method}/fold{fold}": f"results/{wildcards.experiment}/{wildcards.entry}/{method}/fold{fold}.json"
        for method, fold in spec.upstream(
            int(wildcards.fold), fold_options(wildcards))
    }


include: "resources.smk"
