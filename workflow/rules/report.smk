# Aggregate fold results into tables and figures beside the published numbers.


rule collect:
    input:
        lambda w: fold_results(w.experiment),
    output:
        "results/{experiment}/folds.csv",
    log:
        "logs/collect/{experiment}.log",
    shell:
        "{GPCBENCH} collect {output} {input} 2> {log}"


rule report:
    input:
        folds=expand("results/{experiment}/folds.csv", experiment=sorted(EXPERIMENTS)),
        meta=lambda w: [f"data/processed/{name}.json" for name in used_datasets()],
    output:
        tables=[
            report(path, category="Tables", caption="../report/table.rst")
            for path in report_outputs(config, kind="tables")
        ],
        figures=[
            report(path, category="Figures", caption="../report/figure.rst")
            for path in report_outputs(config, kind="figures")
        ],
        index="reports/index.md",
    log:
        "logs/report.log",
    params:
        published=published_hash("config/published"),
        config=lambda w: json.dumps(config),  # key order = the tables' column order
    shell:
        "{GPCBENCH} report --config-json {params.config:q} --published config/published"
        " --out reports --folds {input.folds} --data-meta {input.meta} 2> {log}"
