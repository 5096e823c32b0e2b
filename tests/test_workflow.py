"""The Snakemake workflow: dry runs plan the right jobs; editing a method's module reruns
exactly that method's fold jobs plus the reports; new file times rerun nothing; one table,
summary or figure needs only its own experiment."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from workflow_helpers import SNAKEMAKE, copy_tracked_tree, planned_jobs

from gpcbench.data.registry import DATASETS

TINY_CONFIG = {
    "seed": 7, "offline": True,
    "data": {"source_order": ["archive"], "connect_timeout": 5, "prepare": []},
    "jobs": {"threads": 1, "time_limit_s": 120},
    "methods": {"knn": {"k_grid": [1, 3, 5], "cv_folds": 3}},
    "experiments": {"toy": {
        "description": "toy", "protocol": {"type": "kfold", "folds": 2}, "standardize": True,
        "datasets": {"cho_mixture": {}}, "methods": ["lda", "1nn", "knn"]}},
    "tables": {"toy_table": {"title": "toy", "experiment": "toy",
                             "datasets": {"cho_mixture": "Mixture"}, "metric": "error",
                             "spread": "se"}},
}


@pytest.fixture(scope="module")
def copy_of_repo(tmp_path_factory):
    """The tracked tree copied to a temporary directory, run on a tiny generated data set."""
    work = copy_tracked_tree(tmp_path_factory.mktemp("repo"), exclude=("reports/", "data/"))
    (work / "config" / "config.yaml").write_text(yaml.safe_dump(TINY_CONFIG))
    env = {**os.environ, "PYTHONPATH": str(work / "src")}
    subprocess.run([*SNAKEMAKE, "--cores", "2", "all"], cwd=work, env=env, check=True,
                   capture_output=True)
    return work, env


@pytest.mark.slow
def test_the_copy_imports_its_own_sources(copy_of_repo):
    work, env = copy_of_repo
    where = subprocess.run([sys.executable, "-c", "import gpcbench; print(gpcbench.__file__)"],
                           env=env, capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(work))


@pytest.mark.slow
def test_complete_run_plans_nothing(copy_of_repo):
    work, env = copy_of_repo
    assert planned_jobs(work, env) == {}


@pytest.mark.slow
def test_new_file_times_plan_nothing(copy_of_repo):
    work, env = copy_of_repo
    for path in work.rglob("*"):
        if path.is_file() and ".snakemake" not in path.parts and "results" not in path.parts \
                and "data" not in path.parts and "reports" not in path.parts:
            os.utime(path)
    assert planned_jobs(work, env) == {}


@pytest.mark.slow
def test_editing_one_method_reruns_only_its_folds_and_the_reports(copy_of_repo):
    work, env = copy_of_repo
    module = work / "src" / "gpcbench" / "baselines" / "lda.py"
    original = module.read_text()
    module.write_text(original + "\n# edited\n")
    try:
        planned = planned_jobs(work, env)
    finally:
        module.write_text(original)
    assert sorted(planned["run_fold"]) == [f"results/toy/cho_mixture/lda/fold{k}.json" for k in (0, 1)]
    assert set(planned) == {"run_fold", "collect", "fold_costs", "table", "summary", "report"}


@pytest.mark.slow
def test_editing_one_table_reruns_only_it_and_the_overview(copy_of_repo, tmp_path):
    """A table's job has only its own part of the config as a param: adding another table
    (of the same experiment) plans that table and the overview, nothing else."""
    work, env = copy_of_repo
    table = TINY_CONFIG["tables"]["toy_table"]
    path = tmp_path / "two_tables.yaml"
    path.write_text(yaml.safe_dump({**TINY_CONFIG, "tables": {
        "toy_table": table, "toy_table2": {**table, "title": "another"}}}))  # sorted as the copy's
    planned = planned_jobs(work, env, "--configfile", str(path))
    assert sorted(planned["table"]) == [f"reports/tables/toy_table2.{x}" for x in ("csv", "md", "tex")]
    assert set(planned) == {"table", "report"}


@pytest.mark.slow
def test_dry_run_of_the_full_config_covers_every_data_set(repo):
    planned = planned_jobs(repo, os.environ, "--configfile", "config/config.yaml", "--forceall")
    prepared = {Path(p).stem for p in planned["preprocess"] if p.endswith(".npz")}
    assert prepared == set(DATASETS)
    assert {"fetch_raw", "split", "run_fold", "collect", "table", "summary", "figure",
            "report"} <= set(planned)
    figures = yaml.safe_load((repo / "config" / "config.yaml").read_text())["figures"]
    assert set(planned["figure"]) == {f"reports/figures/{name}.png" for name in figures}


TWO_EXPERIMENTS = {
    **TINY_CONFIG,
    "experiments": {
        "first": {"description": "a", "protocol": {"type": "kfold", "folds": 2},
                  "datasets": {"cho_mixture": {}}, "methods": ["lda", "1nn"]},
        "second": {"description": "b", "protocol": {"type": "kfold", "folds": 2},
                   "datasets": {"iris": {}}, "methods": ["lda"]}},
    "tables": {
        "first_table": {"title": "1", "experiment": "first", "datasets": {"cho_mixture": "M"},
                        "metric": "error", "spread": "se"},
        "second_table": {"title": "2", "experiment": "second", "datasets": {"iris": "I"},
                         "metric": "error", "spread": "se"}},
    "figures": {"second_relevance": {"type": "relevance", "title": "r", "experiment": "second",
                                     "methods": ["lda"]}},
}


@pytest.mark.slow
@pytest.mark.parametrize("target, experiment, rule", [
    ("reports/tables/first_table.md", "first", "table"),
    ("reports/tables/second_table.md", "second", "table"),
    ("reports/tables/first_summary.md", "first", "summary"),
    ("reports/figures/second_relevance.png", "second", "figure"),
])
def test_one_report_file_plans_only_its_experiment(repo, tmp_path, target, experiment, rule):
    """Asking for one table, summary or figure plans the fold jobs of its experiment only."""
    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump(TWO_EXPERIMENTS, sort_keys=False))
    planned = planned_jobs(repo, os.environ, "--configfile", str(path), "--forceall", target)
    assert set(planned) <= {"fetch_raw", "preprocess", "split", "run_fold", "collect", rule}
    assert target in planned[rule] and len(planned[rule]) == (1 if rule == "figure" else
                                                              3 if rule == "table" else 2)
    assert sorted(planned["collect"]) == [f"reports/results/{experiment}.csv.gz",
                                          f"results/{experiment}/folds.csv"]
    assert planned["run_fold"] and all(p.startswith(f"results/{experiment}/")
                                       for p in planned["run_fold"])
    data = {"first": "cho_mixture", "second": "iris"}[experiment]
    assert {Path(p).stem for p in planned["preprocess"]} == {data}


def test_report_config_keeps_only_a_parts_own_config_in_order():
    from gpcbench.workflow import one_of, report_config

    config = {**TWO_EXPERIMENTS, "tables": {**TWO_EXPERIMENTS["tables"], "wide": {
        **TWO_EXPERIMENTS["tables"]["first_table"], "datasets": {"z": "Z", "a": "A"}}},
        "methods": {"1nn": {"p": 1}, "knn": {"cv_folds": 5}}}
    part = report_config(config, "table", "wide")
    assert part == {"seed": 7, "tables": {"wide": config["tables"]["wide"]},
                    "experiments": {"first": config["experiments"]["first"]},
                    "methods": {"1nn": {"p": 1}}}  # its experiment's methods' options
    assert list(part["tables"]["wide"]["datasets"]) == ["z", "a"]  # the table's column order
    assert report_config(config, "summary", "second") == {
        "experiments": {"second": config["experiments"]["second"]}}
    assert set(report_config(config, "figure", "second_relevance")["experiments"]) == {"second"}
    assert re.fullmatch(one_of(config["tables"]), "first_table")
    assert not re.fullmatch(one_of(config["tables"]), "first_summary")
    assert not re.fullmatch(one_of({}), "")


@pytest.mark.slow
def test_warm_starts_and_svm_ep_are_pipeline_dependencies(repo, tmp_path):
    """Footnote 11 and SVM-EP as DAG edges: GPC-EP(s,*) fold k needs its fold k-1 result,
    GPC-EP(m,soft) and SVM-EP(s,soft) need GPC-EP(s,soft) of the same fold; fold 0 of the
    (s,*) variants needs nothing."""
    config = {**TINY_CONFIG, "experiments": {"ep": {
        "description": "ep", "protocol": {"type": "kfold", "folds": 3}, "standardize": True,
        "datasets": {"thyroid": {}},
        "methods": ["gpc-ep-s-hard", "gpc-ep-s-soft", "gpc-ep-m-soft", "svm-ep-s-soft"]}},
        "tables": {}}
    path = tmp_path / "ep.yaml"
    path.write_text(yaml.safe_dump(config))
    out = subprocess.run([*SNAKEMAKE, "-n", "--forceall", "--configfile", str(path)], cwd=repo,
                         capture_output=True, text=True, check=True).stdout
    needs = {}
    for block in re.split(r"\n(?=\s*(?:local)?rule )", out):
        output = re.search(r"output: results/ep/thyroid/(\S+)/fold(\d)\.json", block)
        if output:
            inputs = re.search(r"input: (.+)", block).group(1)
            needs[output.groups()] = sorted(re.findall(r"results/ep/thyroid/(\S+?)/fold(\d)\.json",
                                                       inputs))
    result = "results/ep/thyroid/{}/fold{}.json"
    assert len(needs) == 12, out[-2000:]
    for k in "012":
        for variant in ("gpc-ep-s-hard", "gpc-ep-s-soft"):
            assert needs[(variant, k)] == ([] if k == "0" else [(variant, str(int(k) - 1))])
        for method in ("gpc-ep-m-soft", "svm-ep-s-soft"):
            assert needs[(method, k)] == [("gpc-ep-s-soft", k)], result.format(method, k)


@pytest.mark.slow
def test_entry_methods_and_options_reach_the_fold_jobs(repo, tmp_path):
    """An entry's own method list replaces the experiment's; its options override the
    top-level ones in the job's command line."""
    config = {**TINY_CONFIG, "experiments": {"toy": {
        **TINY_CONFIG["experiments"]["toy"],
        "datasets": {"cho_mixture": {}, "iris": {"methods": ["lda", "knn"],
                                                 "options": {"knn": {"cv_folds": 2}}}}}}}
    path = tmp_path / "entries.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    planned = planned_jobs(repo, os.environ, "--configfile", str(path), "--forceall",
                           "results/toy/folds.csv")
    methods = {(Path(p).parts[2], Path(p).parts[3]) for p in planned["run_fold"]}
    assert methods == {("cho_mixture", m) for m in ("lda", "1nn", "knn")} | {
        ("iris", "lda"), ("iris", "knn")}
    run = subprocess.run([*SNAKEMAKE, "-n", "-p", "--configfile", str(path), "--forceall",
                          "results/toy/iris/knn/fold0.json", "results/toy/cho_mixture/knn/fold0.json"],
                         cwd=repo, capture_output=True, text=True, check=True)
    options = dict(re.findall(r"--entry (\w+) --method knn .*?--options '([^']*)'", run.stdout))
    assert options == {"iris": '{"k_grid": [1, 3, 5], "cv_folds": 2}',
                       "cho_mixture": '{"k_grid": [1, 3, 5], "cv_folds": 3}'}


@pytest.mark.slow
def test_the_workflow_profile_is_used_from_the_repository_root(repo):
    """Snakemake finds workflow/profiles/default (through the symlink profiles/) when run from
    the root: keep-going and rerun-incomplete hold for a plain `snakemake ... all`."""
    run = subprocess.run([*SNAKEMAKE, "-n", "all", "--configfile", "config/smoke.yaml"],
                         cwd=repo, capture_output=True, text=True, check=True)
    assert "workflow specific profile profiles/default" in run.stderr + run.stdout
    profile = yaml.safe_load((repo / "profiles" / "default" / "config.yaml").read_text())
    assert profile["rerun-incomplete"] is True and profile["keep-going"] is True


def test_the_workflow_profile_overrides_no_key_of_the_slurm_profile(repo):
    """Snakemake lets the workflow profile override a --profile's keys: it may only add."""
    default = yaml.safe_load((repo / "workflow/profiles/default/config.yaml").read_text())
    slurm = yaml.safe_load((repo / "workflow/profiles/slurm/config.yaml").read_text())
    assert {key for key in default.keys() & slurm.keys() if default[key] != slurm[key]} == set()


@pytest.mark.slow
def test_local_runs_call_no_slurm_command(repo, tmp_path):
    """With SLURM's commands on PATH (as after the SLURM test), a local dry run runs none."""
    calls = tmp_path / "calls.log"
    for tool in ("scontrol", "sinfo", "sacct", "squeue", "sbatch", "sacctmgr"):
        script = tmp_path / tool
        script.write_text(f"#!/bin/sh\necho {tool} \"$@\" >> {calls}\nexit 1\n")
        script.chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path}:{os.environ['PATH']}"}
    subprocess.run([*SNAKEMAKE, "-n", "all", "--configfile", "config/smoke.yaml"], cwd=repo,
                   env=env, capture_output=True, text=True, check=True)
    assert not calls.exists(), calls.read_text()


def test_run_without_a_target_prints_its_usage_and_starts_nothing(repo):
    run = subprocess.run([str(repo / "run")], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0 and run.stdout.startswith("usage: ./run TARGET")
    bad = subprocess.run([str(repo / "run"), "everything"], capture_output=True, text=True,
                         timeout=30)
    assert bad.returncode == 2 and "unknown target 'everything'" in bad.stderr


def _run_script(repo, directory):
    """The run script copied into ``directory`` beside a set-up venv whose python is this
    interpreter (nothing to install): a run of it starts no pip and no Snakemake here."""
    shutil.copy2(repo / "run", directory / "run")
    python = directory / ".venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    (directory / ".venv" / ".installed").touch()
    return directory / "run"


@pytest.mark.parametrize("cores", [["--cores", "0"], ["-c0"], ["--cores=1.5"], ["-c", "two"],
                                   ["--cores", "-1"]])
def test_run_rejects_cores_below_one_in_one_line(repo, tmp_path, cores):
    """Snakemake given --cores 0 waits for ever at "Select jobs to execute..."."""
    run = subprocess.run([str(_run_script(repo, tmp_path)), "smoke", *cores],
                         capture_output=True, text=True, timeout=30)
    value = cores[-1].removeprefix("--cores=").removeprefix("-c") or cores[-1]
    assert (run.returncode, run.stdout, run.stderr) == (
        2, "", f"run: --cores '{value}': give a whole number of cores from 1, or 'all'\n")


def test_run_smoke_checks_the_config_file_it_is_given(repo, tmp_path):
    """``./run smoke --configfile X`` runs on X: X is checked, not smoke.yaml."""
    config = yaml.safe_load((repo / "config" / "smoke.yaml").read_text())
    config["experiments"][next(iter(config["experiments"]))]["methods"][0] = "lad"
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(config))
    run = subprocess.run([str(_run_script(repo, tmp_path)), "smoke", "--cores", "2",
                          "--configfile", str(bad)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert run.stderr.startswith("gpcbench check-config: error: config key 'experiments.")
    assert "unknown method 'lad' (did you mean 'lda'?)" in run.stderr


@pytest.mark.slow
def test_a_configs_workdir_holds_all_its_outputs(copy_of_repo, tmp_path):
    """A smoke or test config (workdir: .test/<name>) writes data, results, logs and reports
    there: the repository's reports/ stay as they were, and the archive cache is shared."""
    work, env = copy_of_repo
    before = {p: p.read_bytes() for p in (work / "reports").rglob("*") if p.is_file()}
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump({**TINY_CONFIG, "workdir": ".test/tiny"}))
    subprocess.run([*SNAKEMAKE, "--cores", "2", "all", "--configfile", str(path)], cwd=work,
                   env=env, check=True, capture_output=True)
    assert {p: p.read_bytes() for p in (work / "reports").rglob("*") if p.is_file()} == before
    tiny = work / ".test" / "tiny"
    assert (tiny / "reports" / "tables" / "toy_table.md").is_file()
    assert len(list((tiny / "results" / "toy").glob("*/*/fold*.json"))) == 6
    assert not (tiny / "data" / "archives").exists()


@pytest.mark.slow
def test_fold_records_carry_the_commit_the_run_started_from(copy_of_repo, tmp_path,
                                                            monkeypatch):
    """The Snakefile records the commit once: report jobs that rewrite the tracked reports/
    while folds still run do not make those folds '+dirty'."""
    from gpcbench.provenance import RUN_COMMIT_VARIABLE, git_commit

    monkeypatch.setenv(RUN_COMMIT_VARIABLE, "abc123")
    assert git_commit() == "abc123"
    work = tmp_path / "git"
    shutil.copytree(copy_of_repo[0], work, symlinks=True,
                    ignore=shutil.ignore_patterns(".snakemake", "results", "logs"))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(work)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    env = {key: value for key, value in copy_of_repo[1].items() if key != RUN_COMMIT_VARIABLE}
    env["PYTHONPATH"] = str(work / "src")
    two = tmp_path / "two.yaml"
    two.write_text(yaml.safe_dump(TWO_EXPERIMENTS))
    subprocess.run([*SNAKEMAKE, "--cores", "2", "all", "--configfile", str(two)], cwd=work,
                   env=env, check=True, capture_output=True)
    commits = {json.loads(p.read_text())["provenance"]["git_commit"]
               for p in (work / "results").glob("*/*/*/fold*.json")}
    assert commits == {head}
    dirty = subprocess.run([*git, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True, check=True).stdout
    assert "reports/" in dirty  # the run did rewrite tracked report files


def _git_copy(work: Path, tmp_path: Path):
    """``work`` copied to ``tmp_path/git`` (its run lock left behind) as a git repository with
    one commit of everything; the copy and the git command line."""
    copy = tmp_path / "git"
    shutil.copytree(work, copy, symlinks=True, ignore=shutil.ignore_patterns("locks"))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(copy)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    return copy, git


def _status_total(work: Path, env) -> list[str]:
    """``gpcbench status``'s total row: total, current, stale, missing, ..."""
    run = subprocess.run([sys.executable, "-m", "gpcbench", "status"], cwd=work, env=env,
                         capture_output=True, text=True, check=True)
    return run.stdout.splitlines()[-1].split()


@pytest.mark.slow
def test_an_edited_method_run_then_committed_is_current(copy_of_repo, tmp_path):
    """The user's loop: edit a method's module, run, commit. The folds made from the modified
    work tree (recorded '+dirty') are current by content (their code hash is HEAD's once the
    edit is committed): no cell is marked stale, status counts none, and a second dry run
    plans no fold."""
    from gpcbench.provenance import RUN_COMMIT_VARIABLE

    work, git = _git_copy(copy_of_repo[0], tmp_path)
    env = {key: value for key, value in copy_of_repo[1].items() if key != RUN_COMMIT_VARIABLE}
    env["PYTHONPATH"] = str(work / "src")
    module = work / "src" / "gpcbench" / "baselines" / "lda.py"
    module.write_text(module.read_text() + "\n# edited\n")
    subprocess.run([*SNAKEMAKE, "--cores", "2", "all"], cwd=work, env=env, check=True,
                   capture_output=True)
    lda = [json.loads(p.read_text())["provenance"]
           for p in (work / "results" / "toy" / "cho_mixture" / "lda").glob("fold*.json")]
    assert len(lda) == 2 and all(p["git_commit"].endswith("+dirty") for p in lda)
    assert not re.search(r"\(\d+ stale\)", (work / "reports/tables/toy_table.md").read_text())
    subprocess.run([*git, "commit", "-qm", "edit", "--", "src/gpcbench/baselines/lda.py"],
                   check=True)
    assert _status_total(work, env)[:4] == ["total", "6", "0", "0"]
    assert planned_jobs(work, env) == {}


@pytest.mark.slow
def test_a_damaged_ledger_stops_the_run_before_any_job(copy_of_repo, tmp_path):
    """A ledger cut to its first bytes: the run stops before any job with one line naming it
    and how to restore it, as ``gpcbench status`` does; a fold result to be remade is not."""
    work = tmp_path / "work"
    shutil.copytree(copy_of_repo[0], work, symlinks=True, ignore=shutil.ignore_patterns("locks"))
    env = {**copy_of_repo[1], "PYTHONPATH": str(work / "src")}
    ledger = work / "reports" / "results" / "toy.csv.gz"
    ledger.write_bytes(ledger.read_bytes()[:len(ledger.read_bytes()) // 2])
    fold = work / "results" / "toy" / "cho_mixture" / "knn" / "fold1.json"
    fold.unlink()
    line = ("reports/results/toy.csv.gz: cannot read the fold ledger (Compressed file ended "
            "before the end-of-stream marker was reached); restore it with "
            "'git checkout -- reports/results/toy.csv.gz'")
    run = subprocess.run([*SNAKEMAKE, "--cores", "2", "all"], cwd=work, env=env,
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert f"gpcbench: {line}" in run.stderr.splitlines(), run.stderr[-2000:]
    assert "Traceback" not in run.stderr and "rule run_fold" not in run.stderr
    assert not fold.exists()
    status = subprocess.run([sys.executable, "-m", "gpcbench", "status"], cwd=work, env=env,
                            capture_output=True, text=True)
    assert (status.returncode, status.stdout, status.stderr) == (
        1, "", f"gpcbench status: error: {line}\n")


@pytest.mark.slow
def test_an_unknown_data_set_target_is_one_line(repo):
    run = subprocess.run([*SNAKEMAKE, "-n", "data/processed/crabz.npz", "--configfile",
                          "config/smoke.yaml"], cwd=repo, capture_output=True, text=True)
    out = run.stdout + run.stderr  # a dry run logs to stdout
    assert run.returncode != 0
    named = [line for line in out.splitlines() if "crabz" in line]
    assert len(named) == 1 and named[0].startswith(
        "gpcbench: unknown data set 'crabz' (did you mean 'crabs'?); known: "), out
    assert "Traceback" not in out and "InputFunctionException" not in out


@pytest.mark.slow
@pytest.mark.parametrize("switch, reuses", [((), True), (("reuse_ledger=true",), True),
                                            (("reuse_ledger=false",), False),
                                            (("reuse_ledger=False",), False)])
def test_reuse_ledger_false_on_the_command_line_refits(repo, switch, reuses):
    """Snakemake hands ``--config reuse_ledger=false`` over as the string 'false'; the fold job
    must then fit, not copy the ledger's row."""
    run = subprocess.run([*SNAKEMAKE, "-n", "-p", "--forceall",
                          "results/cho2015_iris/iris/lda/fold0.json",
                          "--configfile", "config/smoke.yaml",
                          *(("--config", *switch) if switch else ())],
                         cwd=repo, capture_output=True, text=True, check=True)
    commands = [line for line in run.stdout.splitlines() if " run-fold " in line]
    assert len(commands) == 1, run.stdout[-2000:]
    assert ("--reuse-ledger reports/results/cho2015_iris.csv.gz" in commands[0]) is reuses


@pytest.mark.slow
def test_a_run_switch_of_another_value_is_one_line(repo):
    run = subprocess.run([*SNAKEMAKE, "-n", "all", "--configfile", "config/smoke.yaml",
                          "--config", "partial=maybe"], cwd=repo, capture_output=True, text=True)
    out = run.stdout + run.stderr
    assert run.returncode != 0
    named = [line for line in out.splitlines() if "partial" in line]
    assert named == ["gpcbench: config key 'partial': expected true or false, got 'maybe'"], out
    assert "Traceback" not in out


@pytest.mark.slow
def test_reports_rebuild_from_the_ledger_alone(copy_of_repo, tmp_path):
    """A fresh copy with no results/, data/ or logs/: ``--config from_ledger=true`` runs no
    fold and rewrites every report file byte for byte from reports/results/."""
    work, env = copy_of_repo
    ledger = work / "reports" / "results" / "toy.csv.gz"
    assert ledger.is_file()
    fresh = tmp_path / "fresh"
    top_level_outputs = {".snakemake", "results", "logs", "data", ".test"}
    shutil.copytree(work, fresh, symlinks=True,
                    ignore=lambda d, names: top_level_outputs & set(names) if Path(d) == work else [])
    reports = {p.relative_to(work): p.read_bytes() for p in (work / "reports").rglob("*")
               if p.is_file()}
    for path in (fresh / "reports").rglob("*"):  # made before the checkout: must be rewritten
        if path.is_file() and path.suffix != ".gz":
            os.utime(path, (0, 0))
    env = {**env, "PYTHONPATH": str(fresh / "src")}
    planned = planned_jobs(fresh, env, "--config", "from_ledger=true")
    assert "run_fold" not in planned and "collect" in planned
    subprocess.run([*SNAKEMAKE, "--cores", "2", "all", "--config", "from_ledger=true"], cwd=fresh,
                   env=env, check=True, capture_output=True)
    rebuilt = {p.relative_to(fresh): p.read_bytes() for p in (fresh / "reports").rglob("*")
               if p.is_file()}
    assert sorted(rebuilt) == sorted(reports)
    assert [name for name in reports if rebuilt[name] != reports[name]] == []
    assert [name for name in reports if os.stat(fresh / name).st_mtime == 0] == []


@pytest.mark.slow
def test_a_fresh_copy_reuses_the_ledger_and_refits_only_an_edited_method(copy_of_repo, tmp_path):
    """A fresh copy with no results/, data/ or logs/: a plain run writes every fold from the
    committed ledger (no fit) and every report file comes out byte for byte the same; after an
    edit of LDA's module only LDA's folds are fitted again."""
    work, env = copy_of_repo
    fresh = tmp_path / "fresh"
    top_level_outputs = {".snakemake", "results", "logs", "data", ".test"}
    shutil.copytree(work, fresh, symlinks=True,
                    ignore=lambda d, names: top_level_outputs & set(names) if Path(d) == work else [])
    env = {**env, "PYTHONPATH": str(fresh / "src")}

    def run_and_read():
        subprocess.run([*SNAKEMAKE, "--cores", "2", "all"], cwd=fresh, env=env, check=True,
                       capture_output=True)
        return {p.parent.name + "/" + p.name: json.loads(p.read_text())
                for p in (fresh / "results" / "toy").glob("*/*/fold*.json")}

    records = run_and_read()
    assert len(records) == 6
    assert all(r["provenance"].get("reused_from_ledger") for r in records.values())
    changed = [p.relative_to(work) for p in (work / "reports").rglob("*") if p.is_file()
               and p.read_bytes() != (fresh / p.relative_to(work)).read_bytes()]
    assert changed == []

    module = fresh / "src" / "gpcbench" / "baselines" / "lda.py"
    module.write_text(module.read_text() + "\n# edited\n")
    records_after = run_and_read()
    refitted = sorted(k for k, r in records_after.items()
                      if not r["provenance"].get("reused_from_ledger"))
    assert refitted == ["lda/fold0.json", "lda/fold1.json"]
    for key in refitted:  # LDA is deterministic: a refit agrees with the ledger's result
        assert records_after[key]["metrics"] == records[key]["metrics"]
        assert records_after[key]["provenance"]["code_hash"] != records[key]["provenance"]["code_hash"]


@pytest.mark.slow
def test_a_partial_report_runs_no_missing_fold_and_counts_it(copy_of_repo, tmp_path):
    """``--config partial=true`` reports the folds on disk and those the ledger holds current
    (a fold missing from disk, as in a clone given another run's results, comes back from the
    ledger, not fitted); a new experiment with none is not run, and index.md counts its folds
    missing."""
    work, env = copy_of_repo
    partial = tmp_path / "partial"
    shutil.copytree(work, partial, symlinks=True, ignore=shutil.ignore_patterns("locks"))
    (partial / "results" / "toy" / "folds.csv").unlink()
    deleted = partial / "results" / "toy" / "cho_mixture" / "knn" / "fold1.json"
    deleted.unlink()
    config = yaml.safe_load((partial / "config" / "config.yaml").read_text())
    config["experiments"]["toy_new"] = {**config["experiments"]["toy"], "methods": ["lda"]}
    config["tables"]["toy_new_table"] = {**config["tables"]["toy_table"], "experiment": "toy_new"}
    (partial / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    env = {**env, "PYTHONPATH": str(partial / "src")}
    planned = planned_jobs(partial, env, "--config", "partial=true")
    assert planned["run_fold"] == ["results/toy/cho_mixture/knn/fold1.json"]
    subprocess.run([*SNAKEMAKE, "--cores", "2", "all", "--config", "partial=true"],
                   cwd=partial, env=env, check=True, capture_output=True)
    assert json.loads(deleted.read_text())["provenance"]["reused_from_ledger"]
    index = (partial / "reports" / "index.md").read_text()
    assert "toy: 6 of 6 fold results" not in index  # complete experiments are not listed
    assert "toy_new: 0 of 2 fold results" in index
    assert (partial / "reports" / "tables" / "toy_new_table.md").is_file()

@pytest.mark.slow
def test_a_damaged_processed_data_set_is_named_and_rebuilt_by_the_same_command(copy_of_repo,
                                                                               tmp_path):
    """A processed .npz cut to 300 bytes: the rerun names it in one line, rebuilds it with the
    content its provenance records, and completes."""
    work = tmp_path / "work"
    shutil.copytree(copy_of_repo[0], work, symlinks=True,
                    ignore=shutil.ignore_patterns(".snakemake"))
    env = {**copy_of_repo[1], "PYTHONPATH": str(work / "src")}
    npz = work / "data" / "processed" / "cho_mixture.npz"
    recorded = json.loads(npz.with_suffix(".json").read_text())["sha256"]
    npz.write_bytes(npz.read_bytes()[:300])
    run = subprocess.run([*SNAKEMAKE, "--cores", "2", "all"], cwd=work, env=env,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-3000:]
    named = [line for line in run.stderr.splitlines() if "cho_mixture.npz" in line
             and "SHA-256" in line]
    assert named == ["gpcbench: data/processed/cho_mixture.npz does not match the SHA-256 "
                     "recorded in data/processed/cho_mixture.json; rebuilding it"]
    assert json.loads(npz.with_suffix(".json").read_text())["sha256"] == recorded
    from gpcbench.data.dataset import load_dataset
    assert load_dataset(npz).provenance["sha256"] == recorded  # content checked on reading
