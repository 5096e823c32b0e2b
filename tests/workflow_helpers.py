"""Helpers shared by the workflow tests (local and SLURM): running Snakemake dry runs."""

import re
import subprocess
import sys
from pathlib import Path

SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def planned_jobs(workdir: Path, env, *args) -> dict[str, list[str]]:
    """rule name -> outputs of the jobs ``snakemake -n *args`` plans (group jobs included)."""
    run = subprocess.run([*SNAKEMAKE, "-n", *args], cwd=workdir, env=env, capture_output=True,
                         text=True, check=True)
    planned, rule = {}, None
    for line in (run.stdout + run.stderr).splitlines():
        if m := re.match(r"^\s*(?:local)?rule (\w+):", line):
            rule = m.group(1)
        elif rule and (m := re.match(r"^\s+output: (.+)$", line)):
            planned.setdefault(rule, []).extend(s.strip() for s in m.group(1).split(","))
    return planned
