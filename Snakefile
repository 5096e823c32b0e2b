# gpcbench: from raw public data to the papers' tables.
#   snakemake --cores all all                                  (full protocol, config/config.yaml)
#   snakemake --configfile config/smoke.yaml --cores 2 all     (CI smoke run, under .test/smoke)
# The workflow profile (profiles -> workflow/profiles/default) makes a rerun after any
# interruption, even kill -9, resume with the same command.
import os

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

from gpcbench.config import ConfigError, read_config_file
from gpcbench.experiments.reuse import DamagedLedgerError, check_ledger
from gpcbench.provenance import RUN_COMMIT_VARIABLE, working_tree_commit
from gpcbench.watchdog import VARIABLE as WATCHED_PROCESS, ProcessId
from gpcbench.workflow import clear_stale_locks, remove_damaged_datasets

min_version("9.0")

REPO = workflow.basedir

# The papers' protocol, unless a --configfile replaces it (no merging: smoke.yaml stands alone).
if not workflow.overwrite_configfiles:
    try:
        config.update(read_config_file(os.path.join(REPO, "config", "config.yaml")))
    except ConfigError as exc:
        raise WorkflowError(f"gpcbench: {exc}") from None

# Outputs (data/, results/, logs/, reports/) go under the config's workdir: the repository for
# the papers' protocol, .test/<name> for smoke and test configs.
workdir: os.path.join(REPO, config.get("workdir", "."))

# Fold jobs die with the Snakemake process that runs them: this one, which may be a cluster
# job step's on a compute node (gpcbench.watchdog).
os.environ[WATCHED_PROCESS] = str(ProcessId.of())
if workflow.is_main_process:
    # Jobs record the commit the run started from (report jobs writing reports/ later must
    # not make them '+dirty'); cluster jobs inherit it through the job's environment.
    os.environ[RUN_COMMIT_VARIABLE] = working_tree_commit(REPO)
    clear_stale_locks(".snakemake")
    remove_damaged_datasets("data/processed", workflow.output_settings.dryrun)


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/splits.smk"
include: "workflow/rules/experiments.smk"
include: "workflow/rules/readings.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/rodrigues.smk"

if workflow.is_main_process:
    # Fold jobs and the collect job read their experiment's committed ledger: one that cannot
    # be read to its end (cut short, overwritten) stops the run here, before any job, named
    # as `git checkout` restores it.
    for experiment in sorted(EXPERIMENTS):
        ledger = os.path.abspath(f"reports/results/{experiment}.csv.gz")
        if os.path.exists(ledger):
            try:
                check_ledger(ledger, os.path.relpath(ledger, REPO))
            except DamagedLedgerError as exc:
                raise WorkflowError(f"gpcbench: {exc}") from None


rule all:
    input:
        final_outputs(),
    default_target: True
