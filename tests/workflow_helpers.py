"""Helpers shared by the workflow tests (local and SLURM): running Snakemake dry runs."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

SNAKEMAKE = [sys.executable, "-m", "snakemake"]
REPO = Path(__file__).resolve().parents[1]
# The cheap part of config/smoke.yaml (1-NN / k-NN / LDA only): its fold jobs per experiment,
# and the targets that run them (relative to the config's workdir). The tests that run a
# pipeline several times to check a mechanism (kill -9 and resume, SLURM) run these 12 jobs;
# the whole config's 42 would check nothing more.
SMOKE_SUBSET = {"kim2006_multiclass": 9, "cho2015_iris": 3}
SMOKE_SUBSET_TARGETS = [f"results/{experiment}/folds.csv" for experiment in SMOKE_SUBSET]


def copy_tracked_tree(dest: Path, exclude: tuple[str, ...] = ("reports/",)) -> Path:
    """The repository's tracked and untracked-not-ignored files (symlinks kept as links, e.g.
    profiles/) copied to ``dest``, but those under the ``exclude`` prefixes."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO,
                           capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        source, target = REPO / name, dest / name
        if name.startswith(exclude) or not (source.is_file() or source.is_symlink()):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)
    return dest


def share_archive_cache(work: Path) -> None:
    """``work/data/archives`` is the repository's download cache (no second download)."""
    (REPO / "data" / "archives").mkdir(parents=True, exist_ok=True)
    (work / "data").mkdir(exist_ok=True)
    (work / "data" / "archives").symlink_to(REPO / "data" / "archives")


def planned_jobs(workdir: Path, env, *args) -> dict[str, list[str]]:
    """rule name -> outputs of the jobs ``snakemake -n *args`` plans (group jobs included;
    without the flag Snakemake prints after a flagged one, e.g. ``(update)``)."""
    run = subprocess.run([*SNAKEMAKE, "-n", *args], cwd=workdir, env=env, capture_output=True,
                         text=True, check=True)
    planned, rule = {}, None
    for line in (run.stdout + run.stderr).splitlines():
        if m := re.match(r"^\s*(?:local)?rule (\w+):", line):
            rule = m.group(1)
        elif rule and (m := re.match(r"^\s+output: (.+)$", line)):
            planned.setdefault(rule, []).extend(re.sub(r" \(\w+\)$", "", s.strip())
                                                for s in m.group(1).split(","))
    return planned
