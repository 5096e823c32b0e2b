# Split indices, written once per (experiment, data set); every method reads the same file.


rule split:
    input:
        lambda w: f"data/processed/{split_data(w.experiment, w.entry)}.npz",
    output:
        "data/splits/{experiment}/{entry}.json",
    log:
        "logs/split/{experiment}/{entry}.log",
    params:
        protocol=lambda w: json.dumps(entry_protocol(EXPERIMENTS[w.experiment], w.entry)),
        group=lambda w: EXPERIMENTS[w.experiment]["datasets"][w.entry].get("split_group", w.entry),
        seed=config["seed"],
    resources:
        runtime=5,
        mem_mb=1000,
    shell:
        "{GPCBENCH} split {input} {output} --protocol {params.protocol:q}"
        " --seed {params.seed} --seed-key {wildcards.experiment}/{params.group} 2> {log}"
