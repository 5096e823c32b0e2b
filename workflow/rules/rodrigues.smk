# Rodrigues (2014), section 4 (eqs. 29-39): GP regression is the exact special case of EP.
# One table checks it on a real data set (config key exact_regression: the papers' config
# regresses Boston's LSTAT on the other inputs, 10 folds): EP with Gaussian sites against
# closed-form GP regression with the same covariance matrix
# (gpcbench.experiments.exact_regression). Needs GPCBENCH and config from common.smk.
import hashlib

from gpcbench.provenance import imported_modules, module_source


def exact_regression_code_hash():
    """Hash of the check and every gpcbench module it imports (editing any reruns the rule)."""
    digest = hashlib.sha256()
    for module in imported_modules("gpcbench.experiments.exact_regression"):
        digest.update(module.encode() + b"\0" + module_source(module))
    return digest.hexdigest()[:16]


# Takes seconds: run by the submitting Snakemake, not as a cluster job.
localrules: exact_regression


EXACT_REGRESSION = config.get("exact_regression", {})


rule exact_regression:
    input:
        lambda w: f"data/processed/{EXACT_REGRESSION['data']}.npz",
    output:
        md=report("reports/tables/rodrigues2014_exact_regression.md", category="Tables",
                  caption="../report/exact_regression.rst"),
        csv=report("reports/tables/rodrigues2014_exact_regression.csv", category="Tables",
                   caption="../report/exact_regression.rst"),
    log:
        "logs/report/rodrigues2014_exact_regression.log",
    params:
        seed=config["seed"],
        target=EXACT_REGRESSION.get("target"),
        code=exact_regression_code_hash(),
    shell:
        "{GPCBENCH} exact-regression {input} --target {params.target} --seed {params.seed}"
        " --out-md {output.md} --out-csv {output.csv} 2> {log}"
