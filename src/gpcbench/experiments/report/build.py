"""``gpcbench report``: reads the fold results, data-set metadata, processed data sets and
splits it is given, and writes one output group of the report (or all of them) by computing
its cells or figure data and handing them to the writers."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from gpcbench.config import entry_data, entry_protocol, entry_standardizes, n_folds
from gpcbench.data.dataset import load_dataset
from gpcbench.experiments.aggregate import summarise
from gpcbench.experiments.ledger import data_checksums
from gpcbench.experiments.report import figure_data, figures
from gpcbench.experiments.report.cells import (
    confusion_cells,
    entry_notes,
    expected_fold_counts,
    named_published_cells,
    published_confusion,
    table_cells,
)
from gpcbench.experiments.report.formats import (
    write_confusion_table,
    write_summary,
    write_table,
)
from gpcbench.experiments.report.index import parse_target, report_targets, write_overview
from gpcbench.experiments.report.notes import fill_cells, read_readings, table_notes


#: What one run of a protocol type is called in a table's header.
RUN_KINDS = {"kfold": "folds", "blocks": "folds", "random": "random partitions",
             "per_class": "random partitions"}


def write_report(config: dict, fold_tables, published_dir, out_dir, data_meta_paths=(),
                 only: str | None = None, data_paths=(), split_paths=(),
                 head_hashes: dict | None = None, notes_dir=None, reading_paths=(),
                 refit_regions=None):
    """Write one output group of ``report_targets`` (``only``, e.g. ``table:kim2006_table4``)
    or, without ``only``, all of them under ``out_dir``. The Snakemake rules run one group per
    job, passing only the folds, data-set metadata and config that group needs, and the
    processed data sets (``data/processed/<name>.npz``) and split files
    (``data/splits/<experiment>/<entry>.json``) of confusion tables and decision-region
    figures. ``head_hashes`` (method -> code hash at HEAD) marks table cells built from stale
    folds and counts current, stale and missing folds per table in ``index.md``. A table's
    notes come from ``notes_dir`` (``docs/tables``), the readings they quote from
    ``reading_paths`` (``reports/readings/<name>.json``), and ``index.md``'s causes from
    ``published_dir``'s ``beyond_2se.yaml``. ``refit_regions``
    (:func:`gpcbench.experiments.decision_regions.decision_regions`, which the command passes;
    the report itself evaluates no model) draws decision-regions figures."""

    targets = [parse_target(config, only)] if only else [
        parse_target(config, target) for target in report_targets(config)]
    out = Path(out_dir)
    folds = pd.concat([pd.read_csv(p) for p in fold_tables], ignore_index=True)
    data_meta = {Path(p).stem: json.loads(Path(p).read_text()) for p in data_meta_paths}
    datasets = {Path(p).stem: load_dataset(Path(p)) for p in data_paths}
    splits = {(Path(p).parent.name, Path(p).stem): json.loads(Path(p).read_text())
              for p in split_paths}
    summary = summarise(folds) if any(kind == "summary" for kind, _ in targets) else None
    readings = read_readings(reading_paths)
    for kind, name in targets:
        if kind == "table":
            notes = table_notes(name, notes_dir, readings, reading_hashes(readings)) \
                if notes_dir else []
            write_table_files(name, config, folds, published_dir, data_meta, out, datasets,
                              head_hashes, notes)
        elif kind == "summary":
            write_summary(name, config["experiments"][name], summary, out)
        elif kind == "figure":
            write_config_figure(name, config, folds, data_meta, out, datasets, splits,
                                published_dir, refit_regions)
        else:
            write_overview(config, folds, published_dir, data_meta, out, head_hashes)


def write_table_files(name: str, config: dict, folds: pd.DataFrame, published_dir,
                      data_meta: dict, out: Path, datasets: dict | None = None,
                      head_hashes: dict | None = None, notes=()) -> pd.DataFrame:
    """``tables/<name>.md/.csv/.tex`` of one config table. ``config`` needs only the table and
    its experiment; ``notes`` are the table's own (:func:`table_notes`), ``data_meta`` only
    the table's data sets (for the substitute notes after them); ``datasets``
    (processed name -> Dataset) only for a confusion table (its class names); ``head_hashes``
    (method -> code hash at HEAD) marks cells built from stale folds (those of other code, or
    made otherwise than ``config`` and the data sets' recorded content now say)."""
    table = config["tables"][name]
    notes = [*notes, *entry_notes(config, table, data_meta)]  # cells quoted: filled below
    if table["metric"] == "confusion":
        experiment = config["experiments"][table["experiment"]]
        class_names = {entry: required(datasets, entry_data(experiment, entry),
                                       "--data").class_names
                       for entry in table["datasets"]}
        try:
            cells = confusion_cells(table, folds,
                                    published_confusion(table, Path(published_dir)), class_names,
                                    expected_fold_counts(config, table), head_hashes, config,
                                    data_checksums(data_meta))
        except ValueError as exc:
            raise ValueError(f"table '{name}': {exc}") from None
        write_confusion_table(name, table, cells, notes, Path(out))
        return cells
    cells = table_cells(table, folds, named_published_cells(name, table, published_dir),
                        expected_fold_counts(config, table), head_hashes, config,
                        data_checksums(data_meta))
    write_table(name, table, cells, fill_cells(notes, cells), Path(out),
                runs_phrase(config, table))
    return cells


def runs_phrase(config: dict, table: dict) -> str:
    """Over what a table's cells are taken, from its data sets' protocols: '10 folds',
    '20 random partitions' (joined by 'or' where they differ, 'one fixed split' among them),
    '' where every data set has one fixed split."""
    experiment = config["experiments"][table["experiment"]]
    phrases = []
    for entry in table["datasets"]:
        protocol = entry_protocol(experiment, entry)
        runs = n_folds(protocol)
        phrase = f"{runs} {RUN_KINDS[protocol['type']]}" if runs > 1 else "one fixed split"
        if phrase not in phrases:
            phrases.append(phrase)
    return "" if phrases == ["one fixed split"] else " or ".join(phrases)


def write_config_figure(name: str, config: dict, folds: pd.DataFrame, data_meta: dict,
                        out: Path, datasets: dict | None = None, splits: dict | None = None,
                        published_dir=None, refit_regions=None):
    """``figures/<name>.png`` of one config figure (convergence, relevance, hmc_relevance,
    decision_regions or timing; decision_regions needs its data set in ``datasets`` and its
    split in ``splits``, keyed by (experiment, entry), and ``refit_regions``, the function
    that refits it (see :func:`write_report`); timing needs its ``table`` in
    ``config`` and that table's published file in ``published_dir``)."""
    spec = config["figures"][name]
    path = Path(out) / "figures" / f"{name}.png"
    experiment = config["experiments"][spec["experiment"]]
    if spec["type"] == "timing":
        table = config["tables"][spec["table"]]
        if published_dir is None:
            raise ValueError(f"figure '{name}': report needs the published numbers (--published)")
        published = named_published_cells(spec["table"], table, published_dir)
        bars = figure_data.timing_bars(spec, table, folds, published,
                                       expected_fold_counts(config, table))
        figures.write_timing_figure(spec, bars, path)
        return
    entries = figure_data.figure_datasets(spec, experiment)
    names = {entry: figure_data.feature_names(data_meta, experiment, entry) for entry in entries}
    if spec["type"] == "convergence":
        figures.write_convergence_figure(spec, figure_data.convergence_traces(spec, folds), path)
    elif spec["type"] == "relevance":
        bars = {entry: figure_data.relevance_bars(spec, folds, entry) for entry in entries}
        figures.write_relevance_figure(spec, bars, names, path)
    else:
        try:
            if spec["type"] == "hmc_relevance":
                summaries = {entry: figure_data.hmc_relevance(spec, folds, entry)
                             for entry in entries}
                figures.write_hmc_relevance_figure(spec, summaries, names, path)
            else:
                entry = entries[0]
                data = required(datasets, entry_data(experiment, entry), "--data")
                split = required(splits, (spec["experiment"], entry), "--splits")
                if refit_regions is None:
                    raise ValueError("report needs the refit of decision regions "
                                     "(gpcbench.experiments.decision_regions)")
                regions = refit_regions(spec, entry, folds, data, split,
                                        entry_standardizes(experiment, entry))
                figures.write_decision_regions_figure(spec, regions, path)
        except ValueError as exc:
            raise ValueError(f"figure '{name}': {exc}") from None


def reading_hashes(readings: dict) -> dict:
    """The code hash now of each reading in ``readings`` (to mark notes quoting stale ones)."""
    from gpcbench.experiments.readings import reading_code_hash

    return {name: reading_code_hash(name) for name in readings}


def required(inputs: dict, key, option: str):
    """``inputs[key]``, or a one-line error naming the missing report input."""
    if key not in inputs:
        name = "/".join(key) if isinstance(key, tuple) else key
        raise ValueError(f"report needs '{name}': pass it with {option}")
    return inputs[key]
