# One job per (experiment, data set, method, fold). The method's code hash is a param, so
# editing a method's module reruns exactly its jobs (see gpcbench.experiments.registry). A job
# whose result the experiment's committed ledger already holds, made by the same code hash
# from the same inputs, copies it from there (REUSE_LEDGER, common.smk).


rule run_fold:
    input:
        data=lambda w: f"data/processed/{entry_data(EXPERIMENTS[w.experiment], w.entry)}.npz",
        splits="data/splits/{experiment}/{entry}.json",
        upstream=lambda w: list(upstream_results(w).values()),
    output:
        "results/{experiment}/{entry}/{method}/fold{fold}.json",
    log:
        "logs/run_fold/{experiment}/{entry}/{method}/fold{fold}.log",
    params:
        code=lambda w: method_code_hash(w.method),
        options=lambda w: json.dumps(fold_options(w)),
        standardize=lambda w: ("--standardize" if standardizes(EXPERIMENTS[w.experiment], w.entry,
                                                               w.method) else ""),
        upstream=lambda w: " ".join(f"--upstream {k}={v}" for k, v in upstream_results(w).items()),
        seed=config["seed"],
        time_limit=JOBS["time_limit_s"],
        reuse=lambda w: f"--reuse-ledger reports/results/{w.experiment}.csv.gz" if REUSE_LEDGER else "",
    threads: JOBS["threads"]
    group: fold_group
    resources:
        mem_mb=fold_mem_mb,
        runtime=fold_runtime,
        cpus_per_task=lambda w, threads: threads,
    shell:
        "{GPCBENCH} run-fold --experiment {wildcards.experiment} --entry {wildcards.entry}"
        " --method {wildcards.method} --fold {wildcards.fold} --data {input.data}"
        " --splits {input.splits} --output {output} --options {params.options:q}"
        " --seed {params.seed} --threads {threads} --time-limit {params.time_limit}"
        " --code-hash {params.code} {params.standardize} {params.upstream} {params.reuse} 2> {log}"
