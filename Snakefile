# gpcbench: from raw public data to the papers' tables.
#   snakemake --cores all all                                  (full protocol, config/config.yaml)
#   snakemake --configfile config/smoke.yaml --cores 2 all     (CI smoke run, under .test/smoke)
# The workflow profile (profiles -> workflow/profiles/default) makes a rerun after any
# interruption, even kill -9, resume with the same command.
import os

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

from gpcbench.config import ConfigError, read_config_file
from gpcbench.provenance import RUN_COMMIT_VARIABLE, working_tree_commit
from gpcbench.workflow import clear_stale_locks

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

if workflow.is_main_process:
    # Fold jobs die with this process (they watch its pid), and record the commit the run
    # started from (report jobs writing reports/ later must not make them '+dirty').
    os.environ["GPCBENCH_SNAKEMAKE_PID"] = str(os.getpid())
    os.environ[RUN_COMMIT_VARIABLE] = working_tree_commit(REPO)
    clear_stale_locks(".snakemake")


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/splits.smk"
include: "workflow/rules/experiments.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/rodrigues.smk"


rule all:
    input:
        final_outputs(),
    default_target: True
