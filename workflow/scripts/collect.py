"""Collect one experiment's fold results into a flat CSV (called by rule collect)."""
import sys

from gpcbench.experiments.aggregate import collect_folds

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821 - injected by Snakemake
collect_folds(snakemake.input, snakemake.output[0])  # noqa: F821
