# Scheduler requests of fold jobs (threads, mem_mb, runtime in minutes, cpus_per_task), read
# by cluster profiles (workflow/profiles/slurm); a local run uses only `threads`. Each fold
# asks for what the ledger measured for its (experiment, entry, method), with a margin, or
# where nothing was measured for what a per-method model of its training rows gives
# (gpcbench.fold_requests; docs/cluster.md). The config key jobs.resources overrides model
# rows field by field, e.g. for a sampler:
#   jobs: {resources: {fbgkm: {minutes: 60, exponent: 2, group: false}}}
# A job that SLURM kills (TIMEOUT, OUT_OF_MEMORY) is resubmitted by the profile's `retries`
# with the fold's whole time limit and twice the memory per attempt. Short folds of methods
# with group: true join the group "folds", which the slurm profile packs several to a job.

from gpcbench.fold_requests import FoldRequests, read_fold_costs

FOLD_REQUESTS = FoldRequests(JOBS, read_fold_costs("reports/fold_costs.csv"))

# Rules the submitting Snakemake runs itself (profile: local-cores): fetching needs the
# internet, which compute nodes often lack; the others take seconds, less than the start-up
# of a SLURM job.
localrules: fetch_raw, preprocess, split, collect, fold_costs, report


def _fold(wildcards):
    n = entry_train_size(EXPERIMENTS[wildcards.experiment], wildcards.entry)
    return wildcards.experiment, wildcards.entry, wildcards.method, n


def fold_runtime(wildcards, attempt):
    return FOLD_REQUESTS.runtime(*_fold(wildcards), attempt=attempt)


def fold_mem_mb(wildcards, attempt):
    return FOLD_REQUESTS.mem_mb(*_fold(wildcards), attempt=attempt)


def fold_group(wildcards):
    return FOLD_REQUESTS.group(*_fold(wildcards))
