# gpcbench: from raw public data to the papers' tables.
#   snakemake --cores all all                                  (full protocol, config/config.yaml)
#   snakemake --configfile config/smoke.yaml --cores 2 all     (CI smoke run)
from snakemake.utils import min_version

min_version("9.0")


# The papers' protocol, unless a --configfile replaces it (no merging: smoke.yaml stands alone).
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"



report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/splits.smk"
include: "workflow/rules/experiments.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        final_outputs(),
    default_target: True
