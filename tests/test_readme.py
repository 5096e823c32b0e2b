"""README.md and the docs/ pages say what is true: the README fits a first screen (150 lines)
and every link of theirs resolves, the paths it names exist, their ./run targets are the
script's, their Snakemake commands plan without error, the config keys and metrics they list
are the schema's, and the fold-job counts they quote are the configs'."""

from __future__ import annotations

import os
import re
import shlex
import subprocess

import pytest
from workflow_helpers import REPO, SNAKEMAKE

README = (REPO / "README.md").read_text()
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")),
         *sorted((REPO / "docs" / "tables").rglob("*.md"))]  # and the tables' notes
DOCS = "\n".join(page.read_text() for page in PAGES)  # the README and the pages it links
CODE_BLOCKS = re.findall(r"```(?:sh|bash)\n(.*?)```", DOCS, re.S)
TOP_LEVEL = ("workflow/", "src/", "config/", "data/", "reports/", "tests/", "benchmarks/",
             "docs/", ".ci/", "profiles/")
TOP_FILES = {"Snakefile", "run", "profiles", "environment.yml", "pyproject.toml"}


def _quoted_paths() -> set[str]:
    """Repository paths the README quotes in backticks or links (no placeholders)."""
    quoted = set(re.findall(r"`([^`\s]+)`", README)) | set(re.findall(r"\]\(([^)#\s]+)\)", README))
    return {q.rstrip("/.,") for q in quoted
            if (q.startswith(TOP_LEVEL) or q in TOP_FILES) and not re.search(r"[<>{}*]", q) and "://" not in q
            and not q.startswith(("results/", "logs/", "data/archives", "data/processed/",
                                  "data/raw/", "data/splits/"))}


@pytest.mark.parametrize("path", sorted(_quoted_paths()))
def test_quoted_paths_exist(path):
    assert (REPO / path).exists(), f"README names {path}, which does not exist"


def test_the_readme_is_a_first_screen_and_every_link_resolves():
    assert len(README.splitlines()) <= 150
    broken = [f"{page.relative_to(REPO)}: {target}" for page in PAGES
              for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text())
              if "://" not in target and not (page.parent / target).exists()]
    assert broken == []


def _commands(program: str) -> list[list[str]]:
    lines = [line.split("#")[0].strip() for block in CODE_BLOCKS for line in block.splitlines()]
    return [shlex.split(line) for line in lines if line.startswith(program)]


def test_run_targets_are_the_scripts():
    script = (REPO / "run").read_text()
    targets = set(re.search(r"all\|smoke\|test\|check-config\) ;;", script).group(0)[:-4]
                  .split("|"))
    used = {words[1] for words in _commands("./run") if len(words) > 1}
    assert used and used <= targets


SNAKEMAKE_LINES = [words for words in _commands("snakemake")
                   if "--report" not in words and "slurm" not in " ".join(words)]


@pytest.mark.slow
@pytest.mark.parametrize("words", SNAKEMAKE_LINES, ids=" ".join)
def test_snakemake_commands_plan(words):
    """Each documented command, as a dry run, plans without error (targets, --configfile)."""
    args = [w for w in words[1:] if w not in ("-n",)]
    run = subprocess.run([*SNAKEMAKE, "-n", *args], cwd=REPO, capture_output=True, text=True,
                         env=os.environ, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]


def test_documented_metrics_and_config_keys_are_the_schemas():
    from gpcbench.config import config_schema

    schema = config_schema()
    metric = schema["$defs"]["fold_metric"]["pattern"]
    plain = re.match(r"\^\((.*?)\|hyperparameter", metric).group(1).split("|")
    extending = (REPO / "docs" / "extending.md").read_text()
    listed = extending[extending.index("## Adding a table or figure"):]
    for name in plain:
        assert f"`{name}`" in listed, f"metric {name} is not in docs/extending.md's table section"
    for key in ("workdir", "methods", "options", "upstream", "published", "spread"):
        assert f"`{key}`" in DOCS, f"config key {key} is not in the README or docs/"


def test_fold_job_counts_are_the_configs():
    from gpcbench.config import entry_fold_count, entry_methods, load_config

    for name, quoted in (("smoke.yaml", r"config/smoke\.yaml, ([\d,]+) fold jobs"),
                         ("config.yaml", r"config/config\.yaml, ([\d,]+) fold jobs")):
        config = load_config(REPO / "config" / name)
        count = sum(entry_fold_count(spec, entry) * len(entry_methods(spec, entry))
                    for spec in config["experiments"].values() for entry in spec["datasets"])
        assert int(re.search(quoted, DOCS).group(1).replace(",", "")) == count
