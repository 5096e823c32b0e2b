"""Summarise bsvm_cells.sh: each reading's error on partitions 0-4 against the pipeline's
default run of the same partitions (its fold files, options {}), as a paired difference +- its
s.e., with the convergence figures each fold file records; and whether the reruns of the default
reading in OUT_DIR equal the pipeline's fold files.

    python docs/zhang2011_readings/bsvm_cells.py OUT_DIR PIPELINE_RESULTS_DIR

PIPELINE_RESULTS_DIR is a work tree's results/zhang2011 (holding coil2/bsvm/fold0.json, ...).
"""
import json
import os
import sys

import numpy as np

out, pipeline = sys.argv[1], sys.argv[2]
CELLS = [("coil2", "bsvm"), ("coil2", "csvm"), ("g241d", "bsvm")]
READINGS = ["single", "blam", "sig", "scale"]
FOLDS = range(5)


def pipeline_fold(dataset, method, fold):
    record = json.load(open(f"{pipeline}/{dataset}/{method}/fold{fold}.json"))
    assert record["status"] == "ok" and record["options"] == {} and record["standardized"], \
        f"{dataset} {method} fold {fold}: not the default reading"
    return record


def convergence(records):
    diag = [r["convergence"]["diagnostics"] for r in records]
    rhat = [d["sigma2"]["rhat"] for d in diag]
    ess = [d["sigma2"]["ess"] for d in diag]
    scale = [r["convergence"]["acceptance_rates"]["scale"] for r in records]
    text = (f"sigma^2 R-hat {np.median(rhat):.2f} [{min(rhat):.2f}-{max(rhat):.2f}], "
            f"ESS {np.median(ess):.0f} [{min(ess):.0f}-{max(ess):.0f}]; "
            f"probes max R-hat {max(d['probe_probability']['max_rhat'] for d in diag):.3f}, "
            f"min ESS {min(d['probe_probability']['min_ess'] for d in diag):.0f}; "
            f"z acc {np.mean([d['z_acceptance'] for d in diag]):.2f}; ")
    if all(s is not None for s in scale):
        text += f"scale acc {np.mean(scale):.2f}; "
    return text + (f"converged {sum(r['convergence']['converged'] for r in records)}/"
                   f"{len(records)}; cpu {np.mean([r['timings']['cpu_s'] for r in records]):.0f} s")


for dataset, method in CELLS:
    defaults = [pipeline_fold(dataset, method, fold) for fold in FOLDS]
    default = np.array([100 * r["metrics"]["error"] for r in defaults])
    print(f"{dataset} {method}: default {default.mean():.2f} +- "
          f"{default.std(ddof=1) / np.sqrt(5):.2f} (partitions 0-4, pipeline's fold files)")
    print(f"  {'':8s} {convergence(defaults)}")
    for fold in FOLDS:
        path = f"{out}/{dataset}_{method}_default_{fold}.json"
        if os.path.exists(path):
            rerun = json.load(open(path))
            same = rerun["metrics"] == defaults[fold]["metrics"]
            print(f"  default rerun, partition {fold}: error {100 * rerun['metrics']['error']:.2f}"
                  f", metrics {'identical to' if same else 'DIFFER from'} the pipeline's")
    for reading in READINGS:
        paths = [f"{out}/{dataset}_{method}_{reading}_{fold}.json" for fold in FOLDS]
        if not all(os.path.exists(p) for p in paths):
            print(f"  {reading}: {sum(map(os.path.exists, paths))} of 5 partitions run")
            continue
        records = [json.load(open(p)) for p in paths]
        errors = np.array([100 * r["metrics"]["error"] for r in records])
        diff = errors - default
        print(f"  {reading:8s} {errors.mean():.2f}, paired difference {diff.mean():+.2f} "
              f"+- {diff.std(ddof=1) / np.sqrt(5):.2f}  ({records[0]['options']})")
        print(f"  {'':8s} {convergence(records)}")
