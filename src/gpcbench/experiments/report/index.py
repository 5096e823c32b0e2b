"""The report's output groups (one Snakemake job each) and its overview: the published vs
reproduced figure and ``reports/index.md`` (links, completeness, failed folds, provenance)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import yaml

from gpcbench.experiments.report.cells import (
    ERROR_METRICS,
    completeness,
    data_sources,
    error_fractions,
    expected_fold_counts,
    named_published_cells,
    table_cells,
)
from gpcbench.config import entry_data, read_causes
from gpcbench.experiments.ledger import data_checksums, fold_states
from gpcbench.experiments.report.fidelity import (beyond_two_se, beyond_two_se_lines, fidelity,
                                                  fidelity_lines, judged_cells, paper_lines)
from gpcbench.experiments.report.figures import write_published_vs_reproduced
from gpcbench.io import atomic_write_text

REPORT_KINDS = ("table", "summary", "figure", "overview")


def report_targets(config: dict) -> list[str]:
    """Every output group of the report: ``table:NAME`` per config table, ``summary:NAME`` per
    experiment, ``figure:NAME`` per config figure, and ``overview`` (the published-vs-reproduced
    figure and ``index.md``)."""
    return [*(f"table:{name}" for name in config["tables"]),
            *(f"summary:{name}" for name in config["experiments"]),
            *(f"figure:{name}" for name in config.get("figures", {})), "overview"]


def parse_target(config: dict, target: str) -> tuple[str, str]:
    """(kind, name) of one output group of :func:`report_targets`; ValueError naming it when
    the config has no such table, experiment or figure."""
    kind, _, name = target.partition(":")
    if kind not in REPORT_KINDS:
        raise ValueError(f"unknown report output '{target}' (expected table:NAME, "
                         "summary:EXPERIMENT, figure:NAME or overview)")
    if kind == "overview":
        if name:
            raise ValueError(f"report output 'overview' takes no name (got '{target}')")
        return kind, name
    section = {"table": "tables", "summary": "experiments", "figure": "figures"}[kind]
    if name not in config.get(section, {}):
        raise ValueError(f"unknown {kind} '{name}' (not in the config's {section})")
    return kind, name


def write_overview(config: dict, folds: pd.DataFrame, published_dir, data_meta: dict, out: Path,
                   head_hashes: dict | None = None):
    """``figures/published_vs_reproduced.png`` (every error-metric table's cells) and
    ``index.md`` (links, completeness, failed folds, provenance): needs the whole config and
    every experiment's folds."""
    out = Path(out)
    papers = load_papers(published_dir)
    all_cells = [
        error_fractions(name, table,
                        table_cells(table, folds, named_published_cells(name, table,
                                                                        published_dir),
                                    expected_fold_counts(config, table)))
        .assign(paper=config["experiments"][table["experiment"]].get("paper", ""),
                substitute=lambda cells, t=table: cells["entry"].map(
                    lambda entry: substitute_name(config, t, entry, data_meta)))
        for name, table in config["tables"].items() if table["metric"] in ERROR_METRICS
    ]
    write_published_vs_reproduced(
        pd.concat(all_cells, ignore_index=True) if all_cells else pd.DataFrame(
            columns=["table", "paper", "dataset", "substitute", "ours_fraction",
                     "pub_fraction", "two_se_fraction"]), papers, out)
    cells = judged_cells(config, folds, published_dir, data_meta)
    summary = fidelity(cells)
    causes = beyond_two_se(cells, read_causes(published_dir))
    write_index(config, folds, data_meta, out, head_hashes,
                fidelity_lines(summary) + beyond_two_se_lines(*causes),
                paper_lines(summary, papers))


def substitute_name(config: dict, table: dict, entry: str, data_meta: dict) -> str:
    """The printed name of a table column's data set when it is a stand-in ('' otherwise)."""
    experiment = config["experiments"][table["experiment"]]
    meta = data_meta.get(entry_data(experiment, entry), {})
    return table["datasets"][entry] if meta.get("substitute") else ""


def load_papers(published_dir) -> dict:
    """``papers.yaml`` of the published numbers: paper key -> citation, title, venue (none
    when the directory has no such file)."""
    path = Path(published_dir) / "papers.yaml"
    return yaml.safe_load(path.read_text()) if path.is_file() else {}


def write_index(config: dict, folds: pd.DataFrame, data_meta: dict, out: Path,
                head_hashes: dict | None = None, fidelity_section: list[str] = (),
                first_screen: list[str] = ()):
    """``index.md``: the ``first_screen`` (a line per paper), the fidelity summary
    (:mod:`~gpcbench.experiments.report.fidelity`), links to every table, summary and figure, the experiments whose folds are not all in, per
    table its current, stale and missing folds (given ``head_hashes``, method -> code hash at
    HEAD; the data sets' content from ``data_meta``), the failed fold jobs, and the provenance of results and data sets."""
    commits = sorted(set(folds["git_commit"].dropna()))
    packages = json.loads(folds["packages"].dropna().iloc[0]) if folds["packages"].notna().any() else {}
    lines = ["# gpcbench: Gaussian process classification papers, reproduced\n",
             *first_screen,
             f"From {len(folds)} fold results ({(folds['status'] == 'ok').sum()} ok); tables, "
             "figures and every count below follow.\n",
             *fidelity_section,
             "## Tables (reproduced beside published)\n"]
    lines += [f"- [{t['title']}](tables/{n}.md) ([csv](tables/{n}.csv), [tex](tables/{n}.tex))"
              for n, t in config["tables"].items()]
    lines += ["\n## Per-experiment summaries (errors, NLPD, Brier, timing, convergence)\n"]
    lines += [f"- [{n}](tables/{n}_summary.md): {e['description']}"
              for n, e in config["experiments"].items()]
    lines += ["\n## Figures\n", "![reproduced vs published](figures/published_vs_reproduced.png)\n"]
    lines += [f"![{f['title']}](figures/{n}.png)\n" for n, f in config.get("figures", {}).items()]
    lines += ["## Completeness\n"]
    lines += completeness(config, folds) or ["- every fold result of the config is in"]
    if head_hashes is not None:
        lines += ["\n## Current, stale, missing\n",
                  "Folds of each table made by the method's code at HEAD as the config now runs "
                  "it, whatever commit they record (current), by other code, options, seed or "
                  "data (stale), or not run (missing).\n"]
        lines += [f"- [{t['title']}](tables/{n}.md): "
                  + table_state_counts(config, t, folds, head_hashes, data_checksums(data_meta))
                  for n, t in config["tables"].items()]
    lines += ["\n## Failed fold jobs\n"]
    failed = folds[folds["status"] != "ok"]
    lines += [f"- {r.experiment} / {r.dataset} / {r.label} fold {r.fold}: {r.status} — {r.message}"
              for r in failed.itertuples()] or ["- none"]
    lines += ["\n## Provenance\n", f"- git commit(s) of the results: {', '.join(commits)}",
              "- packages: " + ", ".join(f"{k} {v}" for k, v in sorted(packages.items())),
              f"- seed: {config['seed']}; offline: {config['offline']}",
              "\n| data set | kind | source (package version, or URL) | rows × cols | content SHA-256 | substitute |",
              "|---|---|---|---|---|---|"]
    for name, meta in sorted(data_meta.items()):
        lines.append(f"| {name} | {meta.get('kind', '')} | {data_sources(meta)} "
                     f"| {meta.get('rows')} × {meta.get('columns')} | {str(meta.get('sha256', ''))[:12]} "
                     f"| {meta.get('substitute') or ''} |")
    atomic_write_text(out / "index.md", "\n".join(lines) + "\n")


def table_state_counts(config: dict, table: dict, folds: pd.DataFrame, head_hashes: dict,
                       data_sha256: dict | None = None) -> str:
    """'C current, S stale, M missing' over the folds a table shows (its data sets, its
    ``methods`` if given; states as :func:`~gpcbench.experiments.ledger.fold_states` gives
    them)."""
    experiment = table["experiment"]
    states = fold_states(config, experiment, folds[folds["experiment"] == experiment],
                         head_hashes, data_sha256)
    mine = states[states["dataset"].isin(table["datasets"])]
    if "methods" in table:
        mine = mine[mine["method"].isin(table["methods"])]
    counts = mine["state"].value_counts()
    return ", ".join(f"{int(counts.get(state, 0))} {state}"
                     for state in ("current", "stale", "missing"))
