# Aggregate fold results into tables and figures beside the published numbers. Each table,
# experiment summary and config figure is its own job, reading only its experiment's
# folds.csv, the metadata of its own data sets and its own part of the config (a JSON param:
# editing another table reruns nothing here); the overview (published-vs-reproduced figure and
# reports/index.md, with the causes in config/published/beyond_2se.yaml) reads every
# experiment. A table's notes are docs/tables/<table>.md (gpcbench.experiments.report.notes).

from types import SimpleNamespace

from gpcbench.experiments.report.notes import file_notes, note_files, quoted_readings
from gpcbench.workflow import one_of, remove_stale_readings, report_config

TABLES = config["tables"]
FIGURES = config.get("figures", {})


# Rules the submitting Snakemake runs itself (see resources.smk): each takes seconds.
localrules: table, summary, figure


# The collect job also writes the committed fold ledger, reports/results/<experiment>.csv.gz
# (folds.csv gzipped reproducibly, then the rows the ledger held of folds a partial run did not
# replace: update(), Snakemake leaves it in place for the job to read and restores it should
# the job fail). With --config from_ledger=true (a fresh clone, no
# results/), folds.csv comes back from the ledger instead and no fold runs: every table,
# summary and figure is rebuilt from reports/results/ alone.
if FROM_LEDGER:
    rule collect:
        input:
            "reports/results/{experiment}.csv.gz",
        output:
            "results/{experiment}/folds.csv",
        log:
            "logs/collect/{experiment}.log",
        shell:
            "{GPCBENCH} restore-folds {input} {output} 2> {log}"
else:
    rule collect:
        input:
            lambda w: fold_results(w.experiment),
        output:
            folds="results/{experiment}/folds.csv",
            ledger=update("reports/results/{experiment}.csv.gz"),
        log:
            "logs/collect/{experiment}.log",
        params:
            config_folds=lambda w: json.dumps(config_folds(w.experiment)),
        shell:
            "{GPCBENCH} collect {output.folds} {input} --ledger {output.ledger}"
            " --config-folds {params.config_folds:q} 2> {log}"


def head_hashes(experiments, methods=None):
    """JSON of method -> code hash at HEAD for the methods of ``experiments`` (only ``methods``
    if given): a param, so editing a method re-marks its stale cells even with no fold rerun."""
    used = {method for name in experiments for spec in [EXPERIMENTS[name]]
            for entry in spec["datasets"] for method in entry_methods(spec, entry)}
    used = used if methods is None else used & set(methods)
    return json.dumps({method: method_code_hash(method) for method in sorted(used)})


def table_meta(wildcards):
    """Metadata of the table's own data sets (substitutes, for its notes)."""
    table = TABLES[wildcards.table]
    return sorted({f"data/processed/{entry_data(EXPERIMENTS[table['experiment']], entry)}.json"
                   for entry in table["datasets"]})


def table_notes_hash(table):
    """Content hash of the table's notes files (a param: editing them rewrites the table)."""
    return published_hash(NOTES, [str(p.relative_to(NOTES)) for p in note_files(table, NOTES)])


def table_readings(wildcards):
    """Outputs of the readings the table's notes quote that the config runs (a reading it does
    not run shows in the notes as missing)."""
    quoted = quoted_readings([note for path in note_files(wildcards.table, NOTES)
                              for note in file_notes(path)])
    return [f"reports/readings/{name}.json" for name in quoted if name in READINGS_RUN]


def table_data(wildcards):
    """Processed data sets of a confusion table (their class names, in class index order)."""
    table = TABLES[wildcards.table]
    if table["metric"] != "confusion":
        return []
    return sorted({f"data/processed/{entry_data(EXPERIMENTS[table['experiment']], entry)}.npz"
                   for entry in table["datasets"]})


def figure_entries(figure):
    """The experiment entries a figure shows (a decision-regions figure: the first only)."""
    entries = list(figure.get("datasets") or EXPERIMENTS[figure["experiment"]]["datasets"])
    return entries[:1] if figure["type"] == "decision_regions" else entries


def figure_meta(wildcards):
    """Metadata of the data sets a relevance figure shows (their feature names)."""
    figure = FIGURES[wildcards.figure]
    if figure["type"] not in ("relevance", "hmc_relevance"):
        return []
    return sorted({f"data/processed/{entry_data(EXPERIMENTS[figure['experiment']], entry)}.json"
                   for entry in figure_entries(figure)})


def figure_data(wildcards):
    """Processed data set and split file a decision-regions figure refits on."""
    figure = FIGURES[wildcards.figure]
    if figure["type"] != "decision_regions":
        return {"data": [], "splits": []}
    (entry,) = figure_entries(figure)
    return {"data": [f"data/processed/{entry_data(EXPERIMENTS[figure['experiment']], entry)}.npz"],
            "splits": [f"data/splits/{figure['experiment']}/{entry}.json"]}


def figure_published(figure):
    """The published file of a timing figure's table (none for other figures)."""
    published = TABLES[figure["table"]].get("published") if "table" in figure else None
    return [published["file"]] if published else []


if workflow.is_main_process:
    # a reading made by other code goes, with the tables quoting it, so this run remakes both
    remove_stale_readings("reports/readings", READINGS_RUN, {
        name: [f"reports/tables/{table}.{ext}" for table in TABLES for ext in ("md", "csv", "tex")
               if f"reports/readings/{name}.json" in table_readings(SimpleNamespace(table=table))]
        for name in READINGS_RUN}, workflow.output_settings.dryrun)


rule table:
    input:
        folds=lambda w: f"results/{TABLES[w.table]['experiment']}/folds.csv",
        meta=table_meta,
        data=table_data,
        readings=table_readings,
    output:
        md=report("reports/tables/{table}.md", category="Tables", caption="../report/table.rst"),
        csv=report("reports/tables/{table}.csv", category="Tables", caption="../report/table.rst"),
        tex=report("reports/tables/{table}.tex", category="Tables", caption="../report/table.rst"),
    wildcard_constraints:
        table=one_of(TABLES),
    log:
        "logs/report/table/{table}.log",
    params:
        published=lambda w: published_hash(
            PUBLISHED, [TABLES[w.table]["published"]["file"]]
            if TABLES[w.table].get("published") else []),
        # key order = the tables' column order
        config=lambda w: json.dumps(report_config(config, "table", w.table)),
        code=lambda w: head_hashes([TABLES[w.table]["experiment"]], TABLES[w.table].get("methods")),
        notes=lambda w: table_notes_hash(w.table),
    shell:
        "{GPCBENCH} report --only table:{wildcards.table} --config-json {params.config:q}"
        " --code-hashes {params.code:q} --notes {NOTES:q} --readings {input.readings}"
        " --published {PUBLISHED:q} --out reports --folds {input.folds}"
        " --data-meta {input.meta} --data {input.data} 2> {log}"


rule summary:
    input:
        folds="results/{experiment}/folds.csv",
    output:
        md=report("reports/tables/{experiment}_summary.md", category="Tables",
                  caption="../report/summary.rst"),
        csv=report("reports/tables/{experiment}_summary.csv", category="Tables",
                   caption="../report/summary.rst"),
    wildcard_constraints:
        experiment=one_of(EXPERIMENTS),
    log:
        "logs/report/summary/{experiment}.log",
    params:
        config=lambda w: json.dumps(report_config(config, "summary", w.experiment)),
    shell:
        "{GPCBENCH} report --only summary:{wildcards.experiment} --config-json {params.config:q}"
        " --out reports --folds {input.folds} 2> {log}"


rule figure:
    input:
        folds=lambda w: f"results/{FIGURES[w.figure]['experiment']}/folds.csv",
        meta=figure_meta,
        data=lambda w: figure_data(w)["data"],
        splits=lambda w: figure_data(w)["splits"],
    output:
        report("reports/figures/{figure}.png", category="Figures",
               caption="../report/config_figure.rst"),
    wildcard_constraints:
        figure=one_of(FIGURES),
    log:
        "logs/report/figure/{figure}.log",
    params:
        # a timing figure draws its table's published times beside ours
        published=lambda w: published_hash(PUBLISHED, figure_published(FIGURES[w.figure])),
        config=lambda w: json.dumps(report_config(config, "figure", w.figure)),
    shell:
        "{GPCBENCH} report --only figure:{wildcards.figure} --config-json {params.config:q}"
        " --published {PUBLISHED:q}"
        " --out reports --folds {input.folds} --data-meta {input.meta} --data {input.data}"
        " --splits {input.splits} 2> {log}"


# The overview: every experiment's folds (completeness, failed folds, provenance in index.md;
# the published-vs-reproduced figure has a point per error-metric cell of every table).
rule report:
    input:
        folds=expand("results/{experiment}/folds.csv", experiment=sorted(EXPERIMENTS)),
        meta=lambda w: [f"data/processed/{name}.json" for name in used_datasets()],
    output:
        figure=report("reports/figures/published_vs_reproduced.png", category="Figures",
                      caption="../report/figure.rst"),
        index="reports/index.md",
    log:
        "logs/report.log",
    params:
        published=published_hash(PUBLISHED),
        causes=published_hash(PUBLISHED, [CAUSES_FILE, "papers.yaml"]),
        # key order = the tables' column order
        config=lambda w: json.dumps(report_config(config, "overview")),
        code=lambda w: head_hashes(EXPERIMENTS),
    shell:
        "{GPCBENCH} report --only overview --config-json {params.config:q}"
        " --code-hashes {params.code:q}"
        " --published {PUBLISHED:q} --out reports --folds {input.folds} --data-meta {input.meta} 2> {log}"


# What each fold took (the largest wall time and peak memory of the fold results per
# experiment, entry and method): the next run's scheduler requests (resources.smk).
rule fold_costs:
    input:
        expand("results/{experiment}/folds.csv", experiment=sorted(EXPERIMENTS)),
    output:
        "reports/fold_costs.csv",
    log:
        "logs/report/fold_costs.log",
    shell:
        "{GPCBENCH} fold-costs {output} {input} 2> {log}"
