# Scheduler requests of fold jobs (threads, mem_mb, runtime in minutes, cpus_per_task), read
# by cluster profiles (workflow/profiles/slurm); a local run uses only `threads`.
#
# A fold job's request comes from a per-method cost table and the entry's training rows n:
#   runtime = minutes * max(1, n / 1000) ** exponent      (capped by the fold's time limit)
#   mem_mb  = mem_mb + matrices * 8 * n**2 / 1e6           (n x n float64 matrices)
# The row "default" covers every method without its own row; the config key jobs.resources
# overrides rows field by field, e.g. for a sampler:
#   jobs: {resources: {fbgkm: {minutes: 60, exponent: 2, group: false}}}
# A job that SLURM kills (TIMEOUT, OUT_OF_MEMORY) is resubmitted by the profile's `retries`
# with the fold's whole time limit and twice the memory per attempt. Short folds (of methods
# with group: true, asking at most GROUP_MAX_MINUTES) join the group "folds", which the slurm
# profile packs several to a SLURM job; longer ones get a SLURM job each.

FOLD_COST = {
    "default": {"minutes": 5, "exponent": 2, "mem_mb": JOBS.get("mem_mb", 1000), "matrices": 2,
                "group": True},
    # Zhang et al.'s samplers, 2 chains x 10,000 sweeps: O(n k_max^2) a sweep (measured 0.5-5
    # CPU min a fold at n = 300-4,000); BGKM keeps all n points active (O(n^2) a sweep).
    "fbgkm": {"minutes": 10, "exponent": 1, "group": False},
    "sgpc": {"minutes": 10, "exponent": 1, "group": False},
    "bgkm": {"minutes": 10, "exponent": 2, "group": False},
}
# Beyond its own time limit a fold writes a "timeout" record; allow start-up and I/O on top.
FOLD_MAX_MINUTES = int(JOBS["time_limit_s"] / 60) + 5
GROUP_MAX_MINUTES = 15

# Rules the submitting Snakemake runs itself (profile: local-cores): fetching needs the
# internet, which compute nodes often lack; the others take seconds, less than the start-up
# of a SLURM job.
localrules: fetch_raw, preprocess, split, collect, report


def fold_cost(method):
    """The method's row: built-in default < config default < built-in row < config row."""
    rows = JOBS.get("resources", {})
    return {**FOLD_COST["default"], **rows.get("default", {}), **FOLD_COST.get(method, {}),
            **rows.get(method, {})}


def fold_runtime(wildcards, attempt):
    if attempt > 1:
        return FOLD_MAX_MINUTES
    cost = fold_cost(wildcards.method)
    scale = max(1.0, entry_train_size(EXPERIMENTS[wildcards.experiment], wildcards.entry) / 1000)
    return min(FOLD_MAX_MINUTES, max(1, round(cost["minutes"] * scale ** cost["exponent"])))


def fold_mem_mb(wildcards, attempt):
    cost = fold_cost(wildcards.method)
    n = entry_train_size(EXPERIMENTS[wildcards.experiment], wildcards.entry)
    return int(cost["mem_mb"] + cost["matrices"] * 8 * n**2 / 1e6) * 2 ** (attempt - 1)


def fold_group(wildcards):
    short = fold_runtime(wildcards, attempt=1) <= GROUP_MAX_MINUTES
    return "folds" if short and fold_cost(wildcards.method)["group"] else None
