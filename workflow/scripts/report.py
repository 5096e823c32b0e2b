"""Write the tables, figures and index of reports/ (called by rule report)."""
import sys

from gpcbench.experiments.report import write_report

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 - injected by Snakemake
write_report(  # noqa: F821
    config=snakemake.config,
    fold_tables=snakemake.input.folds,  # noqa: F821
    data_meta_paths=snakemake.input.meta,  # noqa: F821
    published_dir=snakemake.params.published_dir,
    out_dir="reports",
)
